/* The deprecated generic AMO names (shmem_fadd, _finc, _add, _inc, _cswap,
 * _swap, _fetch, _set) on every type of the shmem_atomic_ name each maps to,
 * not only 1.3's int/long/long long: the spec gives them "identical behavior
 * and call signature", and Sandia OpenSHMEM's tests call them so (locus only:
 * Open MPI 4.1's take int, long, long long). */
#include "tcommon.h"

#define TEST_TYPE(T, NAME)                                                                         \
    static void test_##NAME(void)                                                                  \
    {                                                                                              \
        T *w = shmem_calloc(3, sizeof(T));                                                          \
        shmem_barrier_all();                                                                       \
        shmem_add(&w[0], (T)2, 0);                                                                 \
        shmem_inc(&w[0], 0);                                                                       \
        (void)shmem_fadd(&w[1], (T)1, 0);                                                          \
        (void)shmem_finc(&w[1], 0);                                                                \
        shmem_barrier_all();                                                                       \
        if (t_me == 0)                                                                             \
            CHECK(w[0] == (T)(3 * t_npes) && w[1] == (T)(2 * t_npes), #NAME " add/inc/fadd/finc");  \
        shmem_barrier_all();                                                                       \
        shmem_set(&w[2], (T)5, t_me);                                                              \
        CHECK(shmem_fetch(&w[2], t_me) == (T)5, #NAME " set/fetch");                               \
        CHECK(shmem_swap(&w[2], (T)6, t_me) == (T)5, #NAME " swap");                               \
        CHECK(shmem_cswap(&w[2], (T)6, (T)8, t_me) == (T)6 && w[2] == (T)8, #NAME " cswap");       \
        shmem_barrier_all();                                                                       \
        shmem_free(w);                                                                             \
        t_section("deprecated generics on " #NAME);                                                \
    }
TEST_TYPE(int, int)
TEST_TYPE(long long, longlong)
TEST_TYPE(unsigned int, uint)
TEST_TYPE(unsigned long, ulong)
TEST_TYPE(uint64_t, uint64)
TEST_TYPE(size_t, size)

int main(void)
{
    t_init();
    test_int();
    test_longlong();
    test_uint();
    test_ulong();
    test_uint64();
    test_size();
    return t_finish();
}
