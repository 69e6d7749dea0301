/* An OpenMP program (libgomp): an array initialised by the master thread
 * alone, then used by `#pragma omp parallel for` on every node (run with
 * OMP_PROC_BIND and OMP_PLACES). The profiler names the array, the serial
 * first-touch line and the parallel loop (tests/vm/prof_omp_check.sh). */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define BYTES (32u << 20)

int main(void)
{
    size_t n = BYTES / sizeof(double);
    double *field = malloc(n * sizeof *field);
    double *next = malloc(n * sizeof *next);
    if (!field || !next)
        return 1;
    for (size_t i = 0; i < n; i++)
        field[i] = (double)(i % 977); /* FIRST_TOUCH */
    #pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++)
        next[i] = 1e-9 * (double)i; /* each thread its own part of next: placed locally */
    double t0 = omp_get_wtime(), sum = 0;
    int steps = 0;
    do { /* long enough for the access sampler, also in a slow guest */
        #pragma omp parallel for schedule(static) reduction(+ : sum)
        for (size_t i = 1; i < n - 1; i++) {
            next[i] = 0.25 * (field[i - 1] + 2 * field[i] + field[i + 1]); /* REMOTE_LOOP */
            sum += next[i];
        }
        steps++;
    } while (omp_get_wtime() - t0 < 1.5 || steps < 3);
    printf("serial_init: %d threads, %s\n", omp_get_max_threads(), sum > 0 ? "ok" : "bad");
    free(next);
    free(field);
    return 0;
}
