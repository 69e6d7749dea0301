/* Internal: the copy self-test ("proof"). Where NT stores beat glibc memcpy,
 * and with which kernel, is a property of the CPU, its caches and the
 * memory under it — the topology's L3 size only guesses it (a VM may report
 * a 480 MiB "L3"), and the fastest NT family differs between vendors (NT +
 * prefetchnta runs at a third of plain NT stores on one Xeon). So the
 * selector measures it: once per machine, at the first copy that could use
 * NT stores, and caches the answer (~/.cache/locus/copy-selftest.conf, keyed
 * by the CPU, the L3, the glibc version and the allowed ISA). */
#ifndef LOCUS_COPY_PROOF_H
#define LOCUS_COPY_PROOF_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

/* Copies smaller than this never need the proof (the answer only concerns
 * copies from here on). */
#define COPY_PROOF_MIN (1ull << 20)
#define COPY_PROOF_SIZES 7 /* 1 MiB .. 64 MiB */

typedef struct copy_proof {
    bool valid;        /* measured or loaded; false: skipped (see why) */
    int kernel;        /* kernel for copies >= nt_min, -1: glibc always */
    uint64_t nt_min;   /* UINT64_MAX: NT never proved faster */
    char origin[160];  /* "self-test 2026-11-25T10:40" or "self-test cache <path>" */
    char why[200];     /* when not valid */
    double glibc_gbps[COPY_PROOF_SIZES], nt_gbps[COPY_PROOF_SIZES]; /* 0: not measured */
    double family_gbps[8];  /* the candidates at the largest size, by candidate */
    /* glibc memcpy turns to NT stores of its own above a threshold (3/4 of
     * the per-cpu L3 share in glibc 2.26-2.37); where that is above the
     * table, the NT kernel races it once more just past it: from libc_from
     * on glibc is used when it won or tied there (UINT64_MAX: never). */
    uint64_t libc_from;
    double libc_big_gbps, nt_big_gbps; /* that race (0: not run) */
    int candidates[8], ncandidates;
    /* Most other runnable tasks seen while measuring (0: a quiet machine);
     * a busy answer is provisional: measured again (provisional = how many
     * busy measurements so far) by a process that starts on a quiet one. */
    int busy, provisional;
} copy_proof_t;

/* The process's proof: loaded from the cache or measured on first call
 * (LOCUS_COPY_SELFTEST=rerun: measured; a provisional cache on a quiet
 * machine: measured again), then fixed. Thread-safe. */
const copy_proof_t *copy_proof_get(void);
/* The proof if it is already known in this process, else NULL (never runs it). */
const copy_proof_t *copy_proof_peek(void);
/* Measure now (median of reps rounds per size, 1..16) without touching the cache. */
void copy_proof_measure(copy_proof_t *out, int reps);
/* Write pr as the cache file; 0 or -1. */
int copy_proof_save(const copy_proof_t *pr);
/* Where the self-test reads procs_running to tell a busy machine ("/proc/stat";
 * tests point it at a file of their own). */
extern const char *copy_proc_stat;
/* Size of entry i of the measured table. */
static inline uint64_t copy_proof_size(int i) { return (1ull << 20) << i; }

#endif
