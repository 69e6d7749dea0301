/* Memphis case 1 (CICE): a block halo/local-copy loop. The grid is cut in
 * one block per thread, but the main thread initialised every block, so all
 * of the grid sits on its node and every other thread's copy loop reads
 * remote memory. Fix: initialise each block in the thread that owns it. */
#include "numa_common.h"

#include <string.h>

#define BLOCK (4u << 20) /* bytes per block */
#define STEPS 40

static double *grid, *work;
static size_t per; /* doubles per block */

static void *copy_loop(void *arg)
{
    long id = (long)arg;
    pin_to_cpu((int)id);
    double *mine = work + (size_t)id * per;
    memset(mine, 0, per * sizeof *mine); /* private buffer: placed locally */
    pthread_barrier_wait(&barrier);
    for (int s = 0; s < STEPS; s++) {
        const double *src = grid + (size_t)id * per;
        for (size_t i = 1; i + 1 < per; i++)
            mine[i] = 0.25 * (src[i - 1] + 2 * src[i] + src[i + 1]); /* REMOTE_LOOP */
        pthread_barrier_wait(&barrier);
    }
    return NULL;
}

int main(void)
{
    setup_threads();
    per = BLOCK / sizeof(double);
    grid = malloc((size_t)nthreads * BLOCK);
    work = malloc((size_t)nthreads * BLOCK);
    if (!grid || !work)
        return 1;
    for (size_t i = 0; i < (size_t)nthreads * per; i++)
        grid[i] = (double)(i % 97); /* FIRST_TOUCH */
    run_threads(copy_loop);
    double sum = 0;
    for (size_t i = 0; i < (size_t)nthreads * per; i += 4096)
        sum += work[i];
    printf("halo: %d threads, checksum %.1f\n", nthreads, sum);
    free(work);
    free(grid);
    return 0;
}
