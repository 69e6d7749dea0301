/* barrier_all, sync_all, and the active-set barrier and sync (pSync) on
 * the whole job, the even PEs and the odd PEs: after the barrier every
 * member's updates before it are visible, none after it. */
#include "tcommon.h"

static long pSync[SHMEM_BARRIER_SYNC_SIZE];
static long pSync2[SHMEM_BARRIER_SYNC_SIZE];
static long *counter; /* heap; globals are tested in globals.c */

int main(void)
{
    t_init();
    counter = shmem_calloc(1, sizeof(long));
    int me = t_me, npes = t_npes;
    for (int i = 0; i < SHMEM_BARRIER_SYNC_SIZE; i++)
        pSync[i] = pSync2[i] = SHMEM_SYNC_VALUE;
    shmem_barrier_all();

    int bad = 0;
    for (long r = 1; r <= 50; r++) {
        for (int pe = 0; pe < npes; pe++)
            shmem_long_atomic_inc(counter, pe);
        shmem_barrier_all();
        bad += *counter != r * npes;
        shmem_barrier_all();
    }
    CHECK(!bad, "barrier_all: %d rounds saw a wrong count", bad);
    t_section("barrier_all");

    /* sync_all does not quiet: quiet first */
    *counter = 0;
    shmem_barrier_all();
    bad = 0;
    for (long r = 1; r <= 50; r++) {
        for (int pe = 0; pe < npes; pe++)
            shmem_long_atomic_inc(counter, pe);
        shmem_quiet();
        shmem_sync_all();
        bad += *counter != r * npes;
        shmem_sync_all();
    }
    CHECK(!bad, "sync_all: %d rounds saw a wrong count", bad);
    t_section("sync_all");

    /* active sets: (0, 0, npes), evens (0, 1, ceil(n/2)), odds (1, 1, n/2) */
    struct { int start, log, size; const char *name; } sets[3] = {
        {0, 0, npes, "all"}, {0, 1, (npes + 1) / 2, "even"}, {1, 1, npes / 2, "odd"}};
    for (int s = 0; s < 3; s++) {
        int start = sets[s].start, stride = 1 << sets[s].log, size = sets[s].size;
        int member = size > 0 && me >= start && (me - start) % stride == 0 && (me - start) / stride < size;
        *counter = 0;
        shmem_barrier_all();
        bad = 0;
        if (member) {
            for (long r = 1; r <= 30; r++) {
                for (int k = 0; k < size; k++)
                    shmem_long_atomic_inc(counter, start + k * stride);
                /* alternate two pSync arrays and the barrier/sync forms */
                shmem_barrier(start, sets[s].log, size, r % 2 ? pSync : pSync2);
                bad += *counter != r * size;
                shmem_quiet();
                shmem_sync(start, sets[s].log, size, r % 2 ? pSync2 : pSync);
            }
        }
        CHECK(!bad, "active set %s: %d rounds saw a wrong count", sets[s].name, bad);
        shmem_barrier_all();
        t_section("barrier/sync active set %s", sets[s].name);
    }
    return t_finish();
}
