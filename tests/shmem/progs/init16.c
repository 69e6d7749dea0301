/* OpenSHMEM 1.6's initialization state (locus only): shmem_query_initialized
 * (and Sandia OpenSHMEM's shmemx_ name) before shmem_init, through nested
 * init/finalize pairs and after the last finalize; the library initialized
 * again after it (three cycles: a new heap, globals symmetric again, the
 * collectives numbered afresh); shmem_team_get_config with a zero mask and
 * no config (1.6: no action, returns 0). PE 0 prints a line per cycle;
 * every check is made by every PE. */
#include <shmem.h>
#include <shmemx.h>
#include <stdio.h>

static long counter; /* a global: symmetric in every cycle */
static int fails;

#define CHECK(cond, what)                                                                         \
    do {                                                                                          \
        if (!(cond)) {                                                                            \
            fprintf(stderr, "check failed: %s (%s)\n", what, #cond);                              \
            fails++;                                                                              \
        }                                                                                         \
    } while (0)

static int initialized(void)
{
    int q = -1, qx = -1;
    shmem_query_initialized(&q);
    shmemx_query_initialized(&qx);
    CHECK(q == qx, "shmem_ and shmemx_query_initialized agree");
    return q;
}

static void cycle(int k)
{
    CHECK(initialized() == 0, "not initialized before shmem_init");
    shmem_init();
    CHECK(initialized() == 1, "initialized after shmem_init");
    int provided = -1;
    CHECK(shmem_init_thread(SHMEM_THREAD_SINGLE, &provided) == 0 && provided >= SHMEM_THREAD_SINGLE,
          "a nested shmem_init_thread");
    int me = shmem_my_pe(), n = shmem_n_pes();
    long *h = shmem_malloc(n * sizeof(long));
    counter = 0;
    for (int i = 0; i < n; i++)
        h[i] = -1;
    shmem_barrier_all();
    shmem_long_atomic_add(&counter, me + 1, 0);
    shmem_long_p(&h[me], me + 100 * k, (me + 1) % n);
    shmem_barrier_all();
    int left = (me + n - 1) % n;
    CHECK(h[left] == left + 100 * k, "a put into the new heap");
    if (me == 0)
        CHECK(counter == (long)n * (n + 1) / 2, "AMOs on a global");
    CHECK(shmem_team_get_config(SHMEM_TEAM_WORLD, 0, NULL) == 0, "get_config with mask 0 and no config");
    shmem_barrier_all();
    shmem_free(h);
    shmem_finalize(); /* the inner of two */
    CHECK(initialized() == 1, "still initialized after the inner shmem_finalize");
    shmem_barrier_all(); /* still usable */
    if (me == 0)
        printf("cycle %d: %d PEs\n", k, n);
    fflush(stdout);
    shmem_finalize();
    CHECK(initialized() == 0, "not initialized after the last shmem_finalize");
}

int main(int argc, char **argv)
{
    if (argc > 1) { /* "leave": the last PE ends after one cycle, the others
                       start over without it, which must fail, not hang */
        shmem_init();
        int me = shmem_my_pe(), n = shmem_n_pes();
        shmem_finalize();
        if (me == n - 1)
            return 0;
        shmem_init();
        printf("PE %d joined a job PE %d had left\n", me, n - 1);
        return 1;
    }
    for (int k = 0; k < 3; k++)
        cycle(k);
    /* after the last finalize there is no PE 0 to print for the job: every
     * PE says done only if it saw no failure (run_diff reads the last line) */
    if (!fails)
        printf("done\n");
    return fails ? 1 : 0;
}
