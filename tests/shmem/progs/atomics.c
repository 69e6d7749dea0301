/* Standard AMOs for every standard AMO type: fetch, set, swap,
 * compare_swap, inc, add, fetch_inc, fetch_add, all PEs (self included)
 * contending on the same words; results are exact whatever the timing. */
#include "tcommon.h"
#include "ttypes.h"

#ifndef T_AMO_LIST /* atomics_fixed.c: the fixed-width and size types */
#define T_AMO_LIST T_AMO_STD_BASIC_TYPES
#endif
/* Open MPI 4.1.4's 32-bit compare_swap smashes its caller's stack (fixed in
 * 4.1.5): the differential program leaves it out, atomics_fixed.c has it. */
#ifndef T_CSWAP32
#define T_CSWAP32 0
#endif

#define K 200
static char *seen; /* heap: the atomics test must not depend on globals (across nodes) */
static long long *sums;

#define TEST_TYPE(TYPE, NAME)                                                               \
    static void test_##NAME(void)                                                           \
    {                                                                                       \
        int me = t_me, npes = t_npes;                                                       \
        TYPE *w = shmem_malloc(8 * sizeof(TYPE));                                           \
        for (int i = 0; i < 8; i++)                                                         \
            w[i] = (TYPE)0;                                                                 \
        memset(seen, 0, K * T_MAXPE);                                                       \
        shmem_barrier_all();                                                                \
        /* fetch_inc on PE 0's w[0] from everyone: unique, increasing per PE */             \
        TYPE prev = (TYPE)0;                                                                \
        int mono = 1;                                                                       \
        for (int k = 0; k < K; k++) {                                                       \
            TYPE v = shmem_##NAME##_atomic_fetch_inc(&w[0], 0);                             \
            if (k && !(v > prev))                                                           \
                mono = 0;                                                                   \
            prev = v;                                                                       \
            if ((unsigned long long)(long long)v < (unsigned long long)(K * npes))           \
                shmem_char_p(&seen[(long long)v], 1, 0);                                    \
        }                                                                                   \
        CHECK(mono, #NAME " fetch_inc values not increasing");                              \
        /* inc, add, fetch_add on every PE's words from everyone */                         \
        for (int pe = 0; pe < npes; pe++)                                                   \
            for (int k = 0; k < K / 4; k++) {                                               \
                shmem_##NAME##_atomic_inc(&w[1], pe);                                       \
                shmem_##NAME##_atomic_add(&w[2], (TYPE)(me + 1), pe);                       \
                TYPE old = shmem_##NAME##_atomic_fetch_add(&w[3], (TYPE)2, pe);             \
                if (!((long long)old % 2 == 0))                                             \
                    mono = 0;                                                               \
            }                                                                               \
        CHECK(mono, #NAME " fetch_add returned an odd value");                              \
        shmem_barrier_all();                                                                \
        if (me == 0) {                                                                      \
            CHECK(w[0] == (TYPE)(K * npes), #NAME " fetch_inc total %lld", (long long)w[0]); \
            int missing = 0;                                                                \
            for (int i = 0; i < K * npes; i++)                                              \
                missing += seen[i] != 1;                                                    \
            CHECK(!missing, #NAME " fetch_inc: %d values not returned exactly once", missing); \
        }                                                                                   \
        CHECK(w[1] == (TYPE)(npes * (K / 4)), #NAME " inc total %lld", (long long)w[1]);    \
        CHECK(w[2] == (TYPE)((K / 4) * npes * (npes + 1) / 2), #NAME " add total %lld", (long long)w[2]); \
        CHECK(w[3] == (TYPE)(2 * (K / 4) * npes), #NAME " fetch_add total %lld", (long long)w[3]); \
        shmem_barrier_all();                                                                \
        /* set + fetch: each PE sets its own slot on its right, reads back */               \
        int right = (me + 1) % npes, left = (me + npes - 1) % npes;                         \
        shmem_##NAME##_atomic_set(&w[4], (TYPE)(me + 7), right);                            \
        shmem_barrier_all();                                                                \
        CHECK(shmem_##NAME##_atomic_fetch(&w[4], me) == (TYPE)(left + 7), #NAME " set/fetch self"); \
        CHECK(shmem_##NAME##_atomic_fetch(&w[4], right) == (TYPE)(me + 7), #NAME " set/fetch right"); \
        shmem_barrier_all();                                                                \
        /* compare_swap: one winner per target word */                                     \
        for (int pe = 0; pe < npes && (sizeof(TYPE) == 8 || T_CSWAP32); pe++) {            \
            TYPE old = shmem_##NAME##_atomic_compare_swap(&w[5], (TYPE)0, (TYPE)(me + 1), pe); \
            CHECK(old == (TYPE)0 || ((long long)old >= 1 && (long long)old <= npes),        \
                  #NAME " cswap returned %lld", (long long)old);                            \
            if (old == (TYPE)0)                                                             \
                shmem_longlong_atomic_inc(&sums[0], pe); /* count winners */                    \
            TYPE miss = shmem_##NAME##_atomic_compare_swap(&w[5], (TYPE)(npes + 5), (TYPE)99, pe); \
            CHECK(miss != (TYPE)(npes + 5), #NAME " cswap matched a value never stored");   \
        }                                                                                   \
        shmem_barrier_all();                                                                \
        if (sizeof(TYPE) == 8 || T_CSWAP32) {                                               \
            CHECK(sums[0] == 1, #NAME " cswap: %lld winners on PE %d", sums[0], me);        \
            CHECK((long long)w[5] >= 1 && (long long)w[5] <= npes, #NAME " cswap final %lld", (long long)w[5]); \
        }                                                                                   \
        sums[0] = 0;                                                                        \
        shmem_barrier_all();                                                                \
        /* swap: values in = values out + final */                                          \
        long long got = 0;                                                                  \
        for (int k = 0; k < K / 4; k++)                                                     \
            got += (long long)shmem_##NAME##_atomic_swap(&w[6], (TYPE)(me * 1000 + k + 1), 0); \
        shmem_longlong_p(&sums[me], got, 0);                                                \
        shmem_barrier_all();                                                                \
        if (me == 0) {                                                                      \
            long long in = 0, out = (long long)w[6];                                        \
            for (int pe = 0; pe < npes; pe++) {                                             \
                out += sums[pe];                                                            \
                for (int k = 0; k < K / 4; k++)                                             \
                    in += pe * 1000 + k + 1;                                                \
            }                                                                               \
            CHECK(in == out, #NAME " swap: %lld swapped in, %lld out", in, out);            \
        }                                                                                   \
        shmem_barrier_all();                                                                \
        memset(sums, 0, T_MAXPE * sizeof(long long));                                                       \
        shmem_free(w);                                                                      \
        t_section("atomics " #NAME);                                                        \
    }
T_AMO_LIST(TEST_TYPE)

int main(void)
{
    t_init();
    seen = shmem_calloc(K * T_MAXPE, 1);
    sums = shmem_calloc(T_MAXPE, sizeof(long long));
#define CALL(TYPE, NAME) test_##NAME();
    T_AMO_LIST(CALL)
    return t_finish();
}
