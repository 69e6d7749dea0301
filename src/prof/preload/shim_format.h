/* Record format of the per-process log the preload shim writes
 * (<session dir>/shim.<pid>.bin) and the profiler reads. Every record starts
 * with lprof_hdr_t; size is the whole record in bytes (8-byte multiple).
 * Times are CLOCK_MONOTONIC ns, the clock the perf events use too. */
#ifndef LOCUS_PROF_SHIM_FORMAT_H
#define LOCUS_PROF_SHIM_FORMAT_H

#include <stdint.h>

#define LPROF_MAX_FRAMES 16
#define LPROF_MAGIC 0x4c50524f46303032ull /* "LPROF002" */

enum {
    LPROF_REC_START  = 1, /* a process image started (constructor) */
    LPROF_REC_ALLOC  = 2,
    LPROF_REC_FREE   = 3,
    LPROF_REC_PAGES  = 4, /* page -> node of (a stride sample of) a range */
    LPROF_REC_ACCESS = 5, /* one protection-fault access sample */
    LPROF_REC_STATS  = 6, /* counters at exit/exec */
    LPROF_REC_CRASH  = 7, /* the program faulted with no handler of its own */
};

enum { LPROF_KIND_MALLOC = 0, LPROF_KIND_MMAP = 1, LPROF_KIND_GLOBAL = 2 };

typedef struct { uint32_t type, size; } lprof_hdr_t;

typedef struct {
    lprof_hdr_t h;
    uint64_t magic, time;
    int32_t pid, ppid;
    uint64_t min_alloc, access_rate;
    char exe[256];
    /* the memory policy the process started with (get_mempolicy: MPOL_*,
     * -1 unknown) and its cpu affinity: a binding set from outside
     * (numactl, the launcher) shows here */
    int32_t policy_mode, pad;
    uint64_t policy_nodes[4]; /* bit per node */
    uint64_t cpus[16];        /* bit per cpu */
} lprof_start_t;

typedef struct {
    lprof_hdr_t h;
    uint64_t time, addr, size;
    int32_t tid;
    uint16_t kind, nframes;
    uint64_t frames[LPROF_MAX_FRAMES];
} lprof_alloc_t;

typedef struct {
    lprof_hdr_t h;
    uint64_t time, addr;
    int32_t tid, pad;
} lprof_free_t;

/* node[i] is the node of page base + i*stride*page, or -1 absent (never
 * touched, zero page or gone); followed by n int8 values, padded to 8. */
typedef struct {
    lprof_hdr_t h;
    uint64_t time, base, alloc; /* alloc: the allocation it belongs to (0 = global) */
    uint32_t stride, n, page, pad;
} lprof_pages_t;

typedef struct {
    lprof_hdr_t h;
    uint64_t time, addr, ip;
    int32_t tid, cpu, node, write; /* node of the page (-1 unknown); write: bit 0 a write (-1 unknown),
                                    * bit 1 the page was not there yet: the access was its first touch,
                                    * bit 2 the page was there (move_pages gave its node) */
    uint64_t ret;                  /* the word at the stack pointer: the return address in a leaf function */
} lprof_access_t;

typedef struct {
    lprof_hdr_t h;
    uint64_t armed, samples, dropped, io_unprotects, untracked, chained;
    uint64_t early;      /* large allocations made before the shim started (not recorded) */
    uint64_t log_errors; /* log writes that failed */
} lprof_stats_t;

typedef struct {
    lprof_hdr_t h;
    uint64_t time, addr, ip, ret; /* ret: the word at the stack pointer */
    int32_t tid, sig, code, pad;
} lprof_crash_t;

#endif
