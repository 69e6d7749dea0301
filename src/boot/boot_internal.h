/* Internal: the one contract between boot.c (public API, source selection,
 * node map, job ids) and the sources, each in its own file:
 *   boot_pmix.c   PMIx client library (dlopen'ed)
 *   boot_pmi1.c   PMI-1 text protocol (MPICH's hydra)
 *   boot_slurm.c  srun's variables (rank information only)
 *   boot_tcp.c    rendezvous client (hub served by rank 0 or a launcher)
 * boot_hub.c serves the rendezvous; boot_wire.[ch] is its framing. */
#ifndef LOCUS_BOOT_INTERNAL_H
#define LOCUS_BOOT_INTERNAL_H

#include <locus/boot.h>

#include <pthread.h>
#include <stdint.h>

#include "core/notes.h"

#define BOOT_JOB_MAX 48 /* what LOCUS_JOB and shm segment names accept */

typedef struct boot_ops {
    /* all[r*len..] = rank r's mine; len 0 = barrier (all may be NULL). Called
     * with b->mu held; b->seq numbers the job's collectives from 0. */
    locus_status_t (*allgather)(locus_boot_t *b, const void *mine, size_t len, void *all);
    /* Ask the launcher to end the job; returns if it did not (the caller
     * then _exit()s). */
    void (*abort)(locus_boot_t *b, int status, const char *msg);
    /* Leave the job and free b->impl (also after a failed open). */
    locus_status_t (*fini)(locus_boot_t *b);
} boot_ops_t;

struct locus_boot {
    const boot_ops_t *ops;
    void *impl;
    char source[16];
    int rank, size;
    /* -1 after open when the launcher does not say: boot.c derives them by
     * exchanging host ids. */
    int local_rank, local_size, node, num_nodes;
    char job[BOOT_JOB_MAX + 1];
    uint64_t seq;
    pthread_mutex_t mu;
    lc_notes_t notes;
};

/* A source's open fills rank, size, job, source, ops and impl (and the node
 * fields when the launcher gives them). LOCUS_ERR_NOT_FOUND (with a message
 * saying what is missing): not this launcher's environment, so LOCUS_BOOT=auto
 * tries the next source. Any other error is final. */
locus_status_t boot_pmix_open(locus_boot_t *b, const locus_boot_attr_t *attr);
locus_status_t boot_pmi1_open(locus_boot_t *b, const locus_boot_attr_t *attr);
locus_status_t boot_slurm_open(locus_boot_t *b, const locus_boot_attr_t *attr);
locus_status_t boot_tcp_open(locus_boot_t *b, const locus_boot_attr_t *attr);

/* Node fields from an exchange of host ids (boot_node.c): one collective,
 * run by locus_boot_init with b->mu held when the source left them -1. */
locus_status_t boot_node_map(locus_boot_t *b);

/* From every rank's host id (BOOT_HOSTID_LEN bytes each, b->size of them):
 * b's node, local rank, local size and the node count. */
#define BOOT_HOSTID_LEN 128
locus_status_t boot_node_assign(locus_boot_t *b, const char *ids);

/* Slurm's rank and size (srun without PMI), for the tcp source when
 * LOCUS_RANK/LOCUS_SIZE are unset. false if not under srun. */
bool boot_slurm_rank_size(int *rank, int *size);

/* Rank 0's own hub (boot_tcp.c): like locus_boot_hub_create, but a rank
 * that disconnects fails the job at once (no launcher reports exits). */
locus_status_t boot_hub_serve(const char *address, int size, const char *job, double timeout,
                              locus_boot_hub_t **out);
/* wait: until every rank left (once the job failed, at most its timeout
 * more); then destroy the hub. */
void boot_hub_finish(locus_boot_hub_t *h, bool wait);

/* job id "<prefix><raw>" reduced to BOOT_JOB_MAX characters from
 * [A-Za-z0-9_.-] (a long one keeps its head and a hash of the whole). */
void boot_make_job(char out[BOOT_JOB_MAX + 1], const char *prefix, const char *raw);
/* A fresh random id "<prefix><pid>-<8 hex>". */
void boot_fresh_job(char out[BOOT_JOB_MAX + 1], const char *prefix);
/* An integer environment variable in [lo, hi]; error names the variable. */
locus_status_t boot_env_int(const char *name, long lo, long hi, int *out);
/* "exited with status 3" / "was killed by signal 9 (Killed)". */
void boot_describe_exit(int wait_status, char *buf, size_t len);

#endif
