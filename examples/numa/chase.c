/* Pointer chasing over a random cycle in 64 MiB: the latency-bound kernel
 * of the profiler overhead figures (docs/PERFORMANCE.md).
 *   numa_chase [MSTEPS]   (default 4: 4 Mi dependent loads) */
#include "numa_common.h"

#include <stdint.h>
#include <time.h>

#define N (8u << 20) /* slots of 8 bytes */
#define STEPS (4u << 20)

int main(int argc, char **argv)
{
    unsigned steps = STEPS;
    if (argc > 1) {
        int m = atoi(argv[1]);
        if (m < 1 || m > 4000) {
            fprintf(stderr, "numa_chase: MSTEPS '%s': expected a whole number 1..4000\n", argv[1]);
            return 2;
        }
        steps = (unsigned)m << 20;
    }
    setup_threads();
    uint64_t *next = malloc(N * sizeof *next);
    if (!next)
        return 1;
    for (uint64_t i = 0; i < N; i++)
        next[i] = i;
    uint64_t x = 88172645463325252ull;
    for (uint64_t i = N - 1; i > 0; i--) { /* Sattolo: one cycle */
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        uint64_t j = x % i, t = next[i];
        next[i] = next[j];
        next[j] = t;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    uint64_t p = 0;
    for (unsigned s = 0; s < steps; s++)
        p = next[p];
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double sec = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    printf("chase: %.1f ns per step (end %llu)\n", sec * 1e9 / steps, (unsigned long long)p);
    return 0;
}
