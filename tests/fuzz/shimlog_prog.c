/* The program behind fuzz_shimlog's seeds: built without sanitizers and not
 * position independent, so its code and globals sit at the addresses its
 * ELF file says and the harness can give every session its mappings (as the
 * perf side-band would): the log's call paths, sample IPs and global pages
 * then resolve to this file's functions, lines and variables. Its shapes:
 * a grid first touched by one thread and used by all, a buffer allocated
 * afresh every step, a global table updated by every thread.
 *   _LOCUS_PROF_OUT=DIR LOCUS_PROF_MIN_ALLOC=4096 LOCUS_PROF_ACCESS_RATE=2000 \
 *   LOCUS_PROF_DEPTH=8 LD_PRELOAD=build/lib/liblocus_prof_preload.so \
 *   build/fuzz-build/fuzz/fuzz_shimlog_prog      -> DIR/shim.<pid> */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N (1u << 20) /* doubles in the grid: 8 MiB */
#define THREADS 2
#define STEPS 6

static double *grid;
static uint64_t table[1u << 16]; /* 512 KiB, .bss */

static double *make_grid(size_t n)
{
    double *g = malloc(n * sizeof *g);
    if (!g)
        exit(1);
    for (size_t i = 0; i < n; i++)
        g[i] = (double)i; /* one thread first-touches it all */
    return g;
}

static void *work(void *arg)
{
    long id = (long)arg;
    uint64_t x = 88172645463325252ull + (uint64_t)id;
    for (int step = 0; step < STEPS; step++) {
        double *tmp = calloc(N / 8, sizeof *tmp); /* afresh every step */
        if (!tmp)
            exit(1);
        for (size_t i = (size_t)id; i < N; i += THREADS)
            grid[i] = grid[i] * 0.5 + 1.0;
        for (size_t i = 0; i < N / 8; i++)
            tmp[i] = grid[i * 8];
        for (unsigned k = 0; k < (1u << 16); k++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            __atomic_fetch_add(&table[x % (1u << 16)], 1, __ATOMIC_RELAXED);
        }
        free(tmp);
    }
    return NULL;
}

int main(void)
{
    grid = make_grid(N);
    pthread_t t[THREADS];
    for (long i = 1; i < THREADS; i++)
        pthread_create(&t[i], NULL, work, (void *)i);
    work((void *)0);
    for (long i = 1; i < THREADS; i++)
        pthread_join(t[i], NULL);
    uint64_t sum = 0;
    for (unsigned k = 0; k < (1u << 16); k++)
        sum += table[k];
    printf("shimlog_prog: %llu updates, grid[1] %.1f\n", (unsigned long long)sum, grid[1]);
    free(grid);
    return 0;
}
