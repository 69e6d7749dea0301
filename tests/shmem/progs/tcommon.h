/* Shared by the differential OpenSHMEM test programs (tests/shmem/progs/).
 *
 * Each program is built twice, against locus's shmem.h and against another
 * implementation's (Open MPI's oshcc), runs at 1-4 PEs and prints the same
 * lines with both: PE 0 prints one line per section, "name: ok" or
 * "name: FAIL", after every PE has reported its own failure count through
 * PE 0's copy of a symmetric array. Details of a failure go to stderr (not
 * compared), so stdout depends only on what passed, never on timing. */
#ifndef TCOMMON_H
#define TCOMMON_H

#include <shmem.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define T_MAXPE 256

static int t_me, t_npes;
static long t_fail;                 /* this PE's failures in the current section */
static long t_total;                /* and in the whole program */
static long *t_counts;              /* PE 0's copy gathers every PE's count (heap: the
                                       harness itself must not depend on globals) */

#define CHECK(cond, ...)                                                                 \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            t_fail++;                                                                    \
            fprintf(stderr, "PE %d: %s:%d: check failed: %s: ", t_me, __FILE__, __LINE__, \
                    #cond);                                                              \
            fprintf(stderr, __VA_ARGS__);                                                \
            fputc('\n', stderr);                                                         \
            fflush(stderr);                                                              \
        }                                                                                \
    } while (0)

/* After shmem_init or shmem_init_thread. */
static inline void t_setup(void)
{
    t_me = shmem_my_pe();
    t_npes = shmem_n_pes();
    if (t_npes > T_MAXPE) {
        if (t_me == 0)
            fprintf(stderr, "tests support at most %d PEs\n", T_MAXPE);
        shmem_global_exit(2);
    }
    t_counts = (long *)shmem_calloc(T_MAXPE, sizeof(long)); /* cast: C++ too */
}

static inline void t_init(void)
{
    shmem_init();
    t_setup();
}

/* Collective: every PE reports its failures of this section; PE 0 prints. */
static inline void t_section(const char *fmt, ...)
{
    char name[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    shmem_barrier_all();
    shmem_long_p(&t_counts[t_me], t_fail, 0);
    shmem_barrier_all();
    if (t_me == 0) {
        long sum = 0;
        for (int i = 0; i < t_npes; i++)
            sum += t_counts[i];
        printf("%s: %s\n", name, sum ? "FAIL" : "ok");
        fflush(stdout);
    }
    t_total += t_fail;
    t_fail = 0;
    shmem_barrier_all();
}

/* Finalize; the exit status says whether this PE saw a failure. */
static inline int t_finish(void)
{
    shmem_barrier_all();
    if (t_me == 0) {
        printf("done\n");
        fflush(stdout);
    }
    shmem_finalize();
    return t_total ? 1 : 0;
}

/* A value that depends on (pe, i) only, for data patterns. */
static inline uint64_t t_pat(int pe, uint64_t i)
{
    uint64_t x = (uint64_t)(pe + 1) * 0x9E3779B97F4A7C15ull + i * 0xBF58476D1CE4E5B9ull;
    x ^= x >> 29;
    return x * 0x94D049BB133111EBull;
}

#endif
