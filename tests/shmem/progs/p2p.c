/* Point-to-point synchronization: wait_until and test with every
 * comparison, for each type of the 1.4 interface; the update comes from the
 * left neighbour by shmem_p (even forms) or an atomic set (odd forms). The
 * _all/_any/_some and vector forms are in p2p15.c. */
#include "tcommon.h"

#include <time.h>

#ifndef T_P2P_LIST /* Open MPI 4.1 has these; p2p15.c adds the rest */
#define T_P2P_LIST(X) X(int, int) X(long, long) X(long long, longlong)
#endif

static const int cmps[6] = {SHMEM_CMP_EQ, SHMEM_CMP_NE, SHMEM_CMP_GT, SHMEM_CMP_GE, SHMEM_CMP_LT, SHMEM_CMP_LE};
static const char *cmp_names[6] = {"eq", "ne", "gt", "ge", "lt", "le"};
/* initial value, value written, value compared with: true only after the write */
static const long vals[6][3] = {{0, 5, 5}, {0, 5, 0}, {0, 5, 4}, {0, 5, 5}, {10, 3, 5}, {10, 3, 3}};

#define TEST_TYPE(TYPE, NAME)                                                               \
    static void test_##NAME(void)                                                           \
    {                                                                                       \
        int me = t_me, npes = t_npes, right = (me + 1) % npes;                              \
        TYPE *iv = shmem_malloc(2 * sizeof(TYPE));                                          \
        for (int c = 0; c < 6; c++) {                                                       \
            iv[0] = (TYPE)vals[c][0];                                                       \
            iv[1] = (TYPE)vals[c][0];                                                       \
            shmem_barrier_all();                                                            \
            CHECK(shmem_##NAME##_test(&iv[1], cmps[c], (TYPE)vals[c][2]) == 0,              \
                  #NAME " test %s true before the update", cmp_names[c]);                   \
            shmem_barrier_all();                                                            \
            if (c % 2 == 0) {                                                               \
                shmem_##NAME##_p(&iv[0], (TYPE)vals[c][1], right);                          \
                shmem_##NAME##_p(&iv[1], (TYPE)vals[c][1], right);                          \
            } else {                                                                        \
                shmem_##NAME##_atomic_set(&iv[0], (TYPE)vals[c][1], right);                 \
                shmem_##NAME##_atomic_set(&iv[1], (TYPE)vals[c][1], right);                 \
            }                                                                               \
            shmem_##NAME##_wait_until(&iv[0], cmps[c], (TYPE)vals[c][2]);                   \
            CHECK(iv[0] == (TYPE)vals[c][1], #NAME " wait_until %s returned early", cmp_names[c]); \
            long spins = 0;                                                                 \
            while (!shmem_##NAME##_test(&iv[1], cmps[c], (TYPE)vals[c][2]))                 \
                spins++;                                                                    \
            CHECK(iv[1] == (TYPE)vals[c][1], #NAME " test %s", cmp_names[c]);               \
            shmem_barrier_all();                                                            \
        }                                                                                   \
        shmem_free(iv);                                                                     \
        t_section("wait_until/test " #NAME);                                                \
    }
T_P2P_LIST(TEST_TYPE)

/* A token ring, 20 rounds: PE 0 starts each round, each PE waits for its
 * left neighbour's token and passes it on incremented. */
static void chain(void)
{
    int me = t_me, npes = t_npes, right = (me + 1) % npes;
    /* malloc + store + barrier, not calloc: Open MPI 4.1.4's calloc zeroes after
     * its barrier, so an early set from the left would be wiped (memory_spec.c) */
    long *tok = shmem_malloc(sizeof(long));
    *tok = 0;
    shmem_barrier_all();
    for (long r = 0; r < 20; r++) {
        if (me == 0) {
            shmem_long_atomic_set(tok, r * npes + 1, right);
            shmem_long_wait_until(tok, SHMEM_CMP_GE, (r + 1) * npes);
            CHECK(*tok == (r + 1) * npes, "ring round %ld: token %ld", r, *tok);
        } else {
            shmem_long_wait_until(tok, SHMEM_CMP_GE, r * npes + me);
            long v = *tok;
            CHECK(v == r * npes + me, "ring round %ld: token %ld", r, v);
            shmem_long_atomic_set(tok, v + 1, right);
        }
    }
    shmem_barrier_all();
    shmem_free(tok);
    t_section("token ring, 20 rounds");
}

/* Updates that come late (30 and 60 ms): a wait that has gone on that long
 * no longer spins (it yields, then naps) and must still return with the
 * value; the token is passed around the ring, so each PE waits once while
 * its left neighbour sleeps and once while the one before it does. */
static void late(void)
{
    int me = t_me, npes = t_npes, right = (me + 1) % npes;
    long *tok = shmem_malloc(sizeof(long));
    *tok = 0;
    shmem_barrier_all();
    for (long r = 1; r <= 2; r++) {
        if (me == 0) {
            struct timespec ts = {0, 30000000L * r};
            nanosleep(&ts, NULL);
            shmem_long_p(tok, r, right);
        } else {
            shmem_long_wait_until(tok, SHMEM_CMP_EQ, r);
            shmem_long_p(tok, r, right);
        }
        if (me == 0)
            shmem_long_wait_until(tok, SHMEM_CMP_EQ, r);
        CHECK(*tok == r, "late round %ld: token %ld", r, *tok);
        shmem_barrier_all();
    }
    shmem_free(tok);
    t_section("late updates (30, 60 ms)");
}

int main(void)
{
    t_init();
#define CALL(TYPE, NAME) test_##NAME();
    T_P2P_LIST(CALL)
    chain();
    late();
    return t_finish();
}
