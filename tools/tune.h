/* locus tune's parts share the collected tune-file entries, the text output
 * (silent under --json) and the record: cmd_tune.c runs the copy and heap
 * parts and writes the file, tune_shm.c is the shm part. */
#ifndef LOCUS_TOOLS_TUNE_H
#define LOCUS_TOOLS_TUNE_H

#include <locus/config.h>

#include "bench_json.h"

#define TUNE_MAX_ENTRIES 16

typedef struct {
    locus_tune_entry_t e[TUNE_MAX_ENTRIES];
    char values[TUNE_MAX_ENTRIES][64], comments[TUNE_MAX_ENTRIES][200];
    int n;
    bool quiet;
} tune_t;

/* One value for the tune file. */
void tune_add(tune_t *t, const char *name, const char *value, const char *comment);
/* The text output on stdout (nothing under --json). */
void tune_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The record under --json, else NULL (bench_json_* accept NULL). */
bench_json_t *tune_json(void);

/* The shm part: split threshold and piece, by-reference threshold, box size,
 * measured between two forked processes. 0, or the exit status. */
int tune_shm(tune_t *t, int reps);

#endif
