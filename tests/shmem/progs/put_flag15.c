/* A put's target word is written once (checked against the spec only:
 * shmem_wait_until "must not return before the update of the memory
 * indicated by ivar is fully complete", 1.5 section 9.10.2). Pairs of PEs
 * (0,1), (2,3), ... play ping-pong the way old SHMEM codes do (the Quadrics
 * sping example): put a message whose last element is the flag, wait until
 * the own flag holds the next sequence number, reset it to 0, answer. A put
 * that stored the flag word twice (memcpy of 2..31 bytes moves head and tail
 * with overlapping stores) could land its second store after the reset: the
 * waiter then sees a stale number where only 0 or the next one may be. The
 * waits here poll (shmem_test) and count such values instead of waiting on
 * them, so a regression shows as FAIL, not as a hang; it needs the second
 * store to land in that window, so one run catches it only sometimes (the
 * sping ping-pong hung in 1 run of 12-50 before the fix). One-element puts
 * of short, int and long, and long puts of 3, 300 and 40000 elements (past
 * the small-put path; the last one a shared copy between idle PEs). An odd last PE sits out. */
#include "tcommon.h"

#include <sched.h>
#include <stdbool.h>
#include <unistd.h>

static long stale; /* stale values seen by this PE in the current section */

#define PINGPONG(TYPE, NAME, NELEMS)                                                               \
    static void pingpong_##NAME##_##NELEMS(long iters)                                            \
    {                                                                                             \
        TYPE *buf = shmem_calloc(NELEMS, sizeof(TYPE));                                           \
        TYPE *src = shmem_malloc(NELEMS * sizeof(TYPE)); /* from the heap: large puts are shared */ \
        int me = t_me, peer = me ^ 1;                                                             \
        shmem_barrier_all();                                                                      \
        if (peer < t_npes) {                                                                      \
            volatile TYPE *flag = &buf[NELEMS - 1];                                               \
            for (long i = 0; i < iters; i++) {                                                    \
                TYPE want = (TYPE)(i % 30000 + 1);                                                \
                bool send_first = (me & 1) == 0;                                                  \
                for (int turn = 0; turn < 2; turn++) {                                            \
                    if ((turn == 0) == send_first) {                                              \
                        for (int k = 0; k < NELEMS; k++)                                          \
                            src[k] = want;                                                        \
                        shmem_##NAME##_put(buf, src, NELEMS, peer);                               \
                    } else {                                                                      \
                        bool seen_stale = false;                                                  \
                        while (!shmem_##NAME##_test((TYPE *)flag, SHMEM_CMP_EQ, want)) {          \
                            TYPE v = *flag;                                                       \
                            if (v != 0 && v != want)                                              \
                                seen_stale = true;                                                \
                        }                                                                         \
                        for (int k = 0; k < NELEMS - 1; k++)                                      \
                            CHECK(buf[k] == want, #NAME " x%d round %ld: element %d is %lld",     \
                                  NELEMS, i, k, (long long)buf[k]);                               \
                        if (seen_stale) {                                                         \
                            stale++;                                                              \
                            fprintf(stderr, "PE %d: " #NAME " x%d round %ld: flag held a stale "  \
                                    "value after the reset\n", me, NELEMS, i);                    \
                        }                                                                         \
                        *flag = 0;                                                                \
                    }                                                                             \
                }                                                                                 \
            }                                                                                     \
        }                                                                                         \
        shmem_barrier_all();                                                                      \
        CHECK(stale == 0, "%ld stale flag values", stale);                                        \
        stale = 0;                                                                                \
        shmem_free(src);                                                                          \
        shmem_free(buf);                                                                          \
    }

PINGPONG(short, short, 1)
PINGPONG(int, int, 1)
PINGPONG(long, long, 1)
PINGPONG(long, long, 3)
PINGPONG(long, long, 300)
PINGPONG(long, long, 40000)

int main(void)
{
    t_init();
    /* 2 PEs on their own CPUs turn a round in well under a microsecond;
     * oversubscribed ones yield at every poll */
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    long iters = t_npes <= cpus ? 100000 : 5000;
    pingpong_short_1(iters);
    t_section("put_flag short x1");
    pingpong_int_1(iters);
    t_section("put_flag int x1");
    pingpong_long_1(iters);
    t_section("put_flag long x1");
    pingpong_long_3(iters);
    t_section("put_flag long x3");
    pingpong_long_300(iters / 10);
    t_section("put_flag long x300");
    pingpong_long_40000(iters / 200); /* 320 KB: shared copies (LOCUS_RMA_HELP, 256 KiB) */
    t_section("put_flag long x40000");
    return t_finish();
}
