/* shmem_init_thread / shmem_query_thread; with SHMEM_THREAD_MULTIPLE, two
 * threads per PE issue atomics and puts at once. */
#include "tcommon.h"
#include <pthread.h>

#define ITERS 500
static long counter;
static long slots[2 * T_MAXPE];

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (int i = 0; i < ITERS; i++)
        shmem_long_atomic_add(&counter, 1, 0);
    shmem_long_p(&slots[2 * t_me + t], 100 + t, (t_me + 1) % t_npes);
    shmem_quiet();
    return NULL;
}

int main(void)
{
    int provided = -1;
    int rc = shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
    if (rc != 0) {
        fprintf(stderr, "shmem_init_thread failed: %d\n", rc);
        return 1;
    }
    t_setup();
    CHECK(provided >= SHMEM_THREAD_SINGLE && provided <= SHMEM_THREAD_MULTIPLE, "provided %d", provided);
    int q = -1;
    shmem_query_thread(&q);
    CHECK(q == provided, "query_thread %d, init_thread provided %d", q, provided);
    t_section("init_thread");

    /* At any level, the main thread may call everything. */
    if (provided == SHMEM_THREAD_MULTIPLE) {
        pthread_t th[2];
        for (int t = 0; t < 2; t++)
            pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);
        for (int t = 0; t < 2; t++)
            pthread_join(th[t], NULL);
    } else {
        for (int t = 0; t < 2; t++)
            worker((void *)(intptr_t)t);
    }
    shmem_barrier_all();
    if (t_me == 0)
        CHECK(counter == 2L * ITERS * t_npes, "counter %ld, want %ld", counter, 2L * ITERS * t_npes);
    int left = (t_me + t_npes - 1) % t_npes;
    CHECK(slots[2 * left] == 100 && slots[2 * left + 1] == 101, "slots %ld %ld", slots[2 * left],
          slots[2 * left + 1]);
    t_section("threads");
    return t_finish();
}
