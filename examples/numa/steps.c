/* Memphis case 3: arrays allocated afresh in every time step. Each step
 * mallocs a new temporary, the main thread fills it (first touch: every new
 * page lands on its node), all threads then use their part of it, and it is
 * freed. Fix: allocate the temporary once and reuse it, initialised in
 * parallel with the loop that uses it. */
#include "numa_common.h"

#include <malloc.h>
#include <string.h>

#define SIZE (8u << 20) /* bytes per temporary */
#define STEPS 24

static double *state, *tmp;
static size_t n;

static void *compute(void *arg)
{
    long id = (long)arg;
    pin_to_cpu((int)id);
    size_t lo = n * (size_t)id / (size_t)nthreads, hi = n * (size_t)(id + 1) / (size_t)nthreads;
    for (size_t i = lo; i < hi; i++)
        state[i] += 0.5 * tmp[i]; /* REMOTE_LOOP */
    return NULL;
}

static void *init_state(void *arg)
{
    long id = (long)arg;
    pin_to_cpu((int)id);
    size_t lo = n * (size_t)id / (size_t)nthreads, hi = n * (size_t)(id + 1) / (size_t)nthreads;
    memset(state + lo, 0, (hi - lo) * sizeof *state); /* parallel first touch: fine */
    return NULL;
}

int main(void)
{
    mallopt(M_MMAP_THRESHOLD, 1 << 20); /* every temporary is a fresh mapping */
    setup_threads();
    n = SIZE / sizeof(double);
    state = malloc(SIZE);
    if (!state)
        return 1;
    run_threads(init_state);
    for (int s = 0; s < STEPS; s++) {
        tmp = malloc(SIZE);
        if (!tmp)
            return 1;
        for (size_t i = 0; i < n; i++)
            tmp[i] = (double)(s + (int)(i & 7)); /* FIRST_TOUCH */
        run_threads(compute);
        free(tmp);
    }
    printf("steps: %d threads, state[1] = %.1f\n", nthreads, state[1]);
    free(state);
    return 0;
}
