/* Extended AMOs on float and double: fetch, set, swap (values in = values
 * out + final, exactly representable). */
#include "tcommon.h"

static double *outsum; /* heap */

#define TEST_TYPE(TYPE, NAME)                                                               \
    static void test_##NAME(void)                                                           \
    {                                                                                       \
        int me = t_me, npes = t_npes, right = (me + 1) % npes, left = (me + npes - 1) % npes; \
        TYPE *w = shmem_malloc(2 * sizeof(TYPE));                                           \
        w[0] = (TYPE)0;                                                                     \
        w[1] = (TYPE)0.5;                                                                   \
        shmem_barrier_all();                                                                \
        shmem_##NAME##_atomic_set(&w[0], (TYPE)(me + 0.25), right);                         \
        shmem_barrier_all();                                                                \
        CHECK(w[0] == (TYPE)(left + 0.25), #NAME " set: %g", (double)w[0]);                 \
        CHECK(shmem_##NAME##_atomic_fetch(&w[0], right) == (TYPE)(me + 0.25), #NAME " fetch"); \
        double got = 0;                                                                     \
        for (int k = 0; k < 50; k++)                                                        \
            got += (double)shmem_##NAME##_atomic_swap(&w[1], (TYPE)(me * 64 + k + 1), 0);    \
        shmem_double_p(&outsum[me], got, 0);                                                \
        shmem_barrier_all();                                                                \
        if (me == 0) {                                                                      \
            double in = 0.5, out = (double)w[1];                                            \
            for (int pe = 0; pe < npes; pe++) {                                             \
                out += outsum[pe];                                                          \
                for (int k = 0; k < 50; k++)                                                \
                    in += pe * 64 + k + 1;                                                  \
            }                                                                               \
            CHECK(in == out, #NAME " swap: in %g out %g", in, out);                         \
        }                                                                                   \
        shmem_barrier_all();                                                                \
        shmem_free(w);                                                                      \
        t_section("extended atomics " #NAME);                                               \
    }
TEST_TYPE(float, float)
TEST_TYPE(double, double)

int main(void)
{
    t_init();
    outsum = shmem_calloc(T_MAXPE, sizeof(double));
    test_float();
    test_double();
    return t_finish();
}
