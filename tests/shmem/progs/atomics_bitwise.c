/* Bitwise AMOs (and, or, xor) for every bitwise AMO type, every PE flipping
 * its own bits on every PE's word. The fetch forms are in
 * atomics_bitwise_fetch.c (Open MPI 4.1.4's fetch_and/or/xor neither fetch
 * nor store: checked against the spec only). */
#include "tcommon.h"
#include "ttypes.h"

#ifndef T_BIT_FETCH
#define T_BIT_FETCH 0
#endif

#define TEST_TYPE(TYPE, NAME)                                                               \
    static void test_##NAME(void)                                                           \
    {                                                                                       \
        int me = t_me, npes = t_npes;                                                       \
        TYPE *w = shmem_malloc(4 * sizeof(TYPE));                                           \
        TYPE bit = (TYPE)((TYPE)1 << (me % 30)), all = (TYPE)0;                             \
        for (int pe = 0; pe < npes; pe++)                                                   \
            all |= (TYPE)((TYPE)1 << (pe % 30));                                            \
        w[0] = (TYPE)0;                                                                     \
        w[1] = (TYPE)~(TYPE)0;                                                              \
        w[2] = (TYPE)0;                                                                     \
        w[3] = (TYPE)0;                                                                     \
        shmem_barrier_all();                                                                \
        int bad = 0;                                                                        \
        for (int pe = 0; pe < npes; pe++) {                                                 \
            shmem_##NAME##_atomic_or(&w[0], bit, pe);                                       \
            shmem_##NAME##_atomic_and(&w[1], (TYPE)~bit, pe);                               \
            shmem_##NAME##_atomic_xor(&w[2], bit, pe);                                      \
            shmem_##NAME##_atomic_xor(&w[2], (TYPE)(bit << 1), pe);                         \
            shmem_##NAME##_atomic_xor(&w[2], (TYPE)(bit << 1), pe);                         \
        }                                                                                   \
        shmem_barrier_all();                                                                \
        CHECK(w[0] == all, #NAME " or: %llx want %llx", (unsigned long long)w[0], (unsigned long long)all); \
        CHECK(w[1] == (TYPE)~all, #NAME " and: %llx", (unsigned long long)w[1]);            \
        CHECK(w[2] == all, #NAME " xor: %llx", (unsigned long long)w[2]);                   \
        shmem_barrier_all();                                                                \
        /* fetch forms: the fetched value never has my bit yet (or), still has it (and) */ \
        for (int pe = 0; pe < npes && T_BIT_FETCH; pe++) {                                  \
            TYPE o = shmem_##NAME##_atomic_fetch_or(&w[3], bit, pe);                        \
            bad += npes <= 30 && (o & bit) != 0;                                            \
            TYPE a = shmem_##NAME##_atomic_fetch_and(&w[1], (TYPE)~(TYPE)0, pe);            \
            bad += a != (TYPE)~all;                                                         \
            TYPE x = shmem_##NAME##_atomic_fetch_xor(&w[0], bit, pe);                       \
            bad += npes <= 30 && (x & bit) == 0;                                            \
        }                                                                                   \
        CHECK(!bad, #NAME " fetch_and/or/xor returned %d wrong values", bad);               \
        shmem_barrier_all();                                                                \
        CHECK(!T_BIT_FETCH || w[3] == all, #NAME " fetch_or result %llx", (unsigned long long)w[3]); \
        CHECK(!T_BIT_FETCH || w[0] == (TYPE)0, #NAME " fetch_xor result %llx", (unsigned long long)w[0]); \
        shmem_barrier_all();                                                                \
        shmem_free(w);                                                                      \
        t_section("bitwise atomics " #NAME);                                                \
    }
T_AMO_BIT_TYPES(TEST_TYPE)

int main(void)
{
    t_init();
#define CALL(TYPE, NAME) test_##NAME();
    T_AMO_BIT_TYPES(CALL)
    return t_finish();
}
