/* The job report's model (prof_merge.c reads and analyses the ranks'
 * profiles, prof_merge_out.c prints it and writes it as JSON). */
#ifndef LOCUS_PROF_MERGE_H
#define LOCUS_PROF_MERGE_H

#include "prof/prof_internal.h"

#define MN PROF_MAX_NODES

typedef struct {
    int rank;
    char host[256], file[512], cmd[256], policy[96];
    int exit_status, exit_signal;
    int nnodes, node_id[MN];
    uint64_t run_nodes;    /* bit per node index: where its threads ran */
    uint64_t pages, local; /* pages of its variables, those on run_nodes */
    uint64_t matrix[MN][MN];
    bool has_matrix;
} mrank_t;

typedef struct {
    int rank;
    uint64_t bytes, pages, local, acc, remote;
    uint64_t by_node[MN];
    char pattern[24], finding[1024];
} mper_t;

typedef struct {
    char key[700], name[128], kind[16], site[320];
    VEC(mper_t) per;
    uint64_t bytes, pages, local;
    bool imbalance, remote_rank, pattern_differs;
} mvar_t;

/* A rank's own finding about one variable, before they are grouped. */
typedef struct {
    int rank;
    uint64_t bytes;
    char pattern[24];
    char name[128];
    char text[1200];
} mfind_t;

typedef struct {
    VEC(mrank_t) ranks;
    VEC(mvar_t) vars;
    VEC(char *) findings;
    VEC(mfind_t) own; /* per-rank findings, grouped by rank and pattern at the end */
} merge_t;

int merge_pct(uint64_t a, uint64_t b); /* rounded percentage, 0 if b is 0 */
const mrank_t *merge_rank_of(const merge_t *m, int rank);
void merge_human(uint64_t b, char *buf, size_t cap);
void merge_print(const merge_t *m, FILE *f);
locus_status_t merge_write_json(const merge_t *m, const char *path);

#endif
