/* STREAM-like triad a = b + s*c over three 64 MiB arrays, all threads:
 * the memory-bound kernel of the profiler overhead figures
 * (docs/PERFORMANCE.md). Prints the triad bandwidth.
 *   numa_stream [REPS]   (default 20 triads) */
#include "numa_common.h"

#include <time.h>

#define N (8u << 20) /* doubles per array */
#define REPS 20

static int reps = REPS;

static double *a, *b, *c;

static void *triad(void *arg)
{
    long id = (long)arg;
    pin_to_cpu((int)id);
    size_t lo = (size_t)N * (size_t)id / (size_t)nthreads, hi = (size_t)N * (size_t)(id + 1) / (size_t)nthreads;
    for (size_t i = lo; i < hi; i++) {
        a[i] = 0;
        b[i] = 1;
        c[i] = 2;
    }
    pthread_barrier_wait(&barrier);
    for (int r = 0; r < reps; r++)
        for (size_t i = lo; i < hi; i++)
            a[i] = b[i] + 3.0 * c[i];
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1 && (reps = atoi(argv[1])) < 1) {
        fprintf(stderr, "numa_stream: REPS '%s': expected a whole number >= 1\n", argv[1]);
        return 2;
    }
    setup_threads();
    a = malloc(N * sizeof(double));
    b = malloc(N * sizeof(double));
    c = malloc(N * sizeof(double));
    if (!a || !b || !c)
        return 1;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    run_threads(triad);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    printf("stream: %d threads, %.2f s, a[7] = %.1f\n", nthreads, s, a[7]);
    return 0;
}
