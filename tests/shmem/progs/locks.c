/* Distributed locks: set_lock/clear_lock give mutual exclusion (a
 * non-atomic read-modify-write of a counter on PE 0 under the lock loses no
 * update); test_lock returns 0 when it takes the lock, nonzero when held. */
#include "tcommon.h"

static long lock1;
#define ITERS 100

int main(void)
{
    t_init();
    int me = t_me, npes = t_npes;
    long *lock2 = shmem_calloc(1, sizeof(long));
    long *counter = shmem_calloc(2, sizeof(long));
    shmem_barrier_all();

    for (int i = 0; i < ITERS; i++) {
        shmem_set_lock(&lock1);
        long v = shmem_long_g(&counter[0], 0); /* get, then put: racy without the lock */
        shmem_long_p(&counter[0], v + 1, 0);
        shmem_quiet();
        shmem_clear_lock(&lock1);
    }
    shmem_barrier_all();
    if (me == 0)
        CHECK(counter[0] == (long)ITERS * npes, "set_lock: counter %ld, want %ld", counter[0], (long)ITERS * npes);
    t_section("set_lock/clear_lock");

    int taken = 0;
    for (int i = 0; i < ITERS; i++) {
        while (shmem_test_lock(lock2) != 0)
            ;
        taken++;
        long v = shmem_long_g(&counter[1], 0);
        shmem_long_p(&counter[1], v + 1, 0);
        shmem_quiet();
        shmem_clear_lock(lock2);
    }
    shmem_barrier_all();
    if (me == 0)
        CHECK(counter[1] == (long)ITERS * npes, "test_lock: counter %ld", counter[1]);
    CHECK(taken == ITERS, "test_lock taken %d", taken);
    t_section("test_lock/clear_lock");

    /* held by PE 0: everyone else's test_lock fails until PE 0 clears it */
    if (me == 0)
        shmem_set_lock(&lock1);
    shmem_barrier_all();
    if (me != 0)
        CHECK(shmem_test_lock(&lock1) != 0, "test_lock took a held lock");
    shmem_barrier_all();
    if (me == 0)
        shmem_clear_lock(&lock1);
    shmem_barrier_all();
    t_section("test_lock on a held lock");

    shmem_free(counter);
    shmem_free(lock2);
    return t_finish();
}
