/* Point-to-point synchronization of 1.5 (checked against the spec only):
 * wait_until_all/any/some and their _vector forms, test_all/any/some and
 * theirs, with status masks, for long, the fixed-width types and short /
 * unsigned short (every form, as OpenSHMEM 1.6 has them; set by shmem_p, as
 * they have no atomics); one check per type through the C11 generic. The left
 * neighbour sets the variables, then raises a flag; each check is made
 * after the flag, or on variables whose state is fixed, so results do not
 * depend on timing. */
#include "tcommon.h"

#define N 8

#define TEST_TYPE(TYPE, NAME, SET)                                                                \
    static void test_##NAME(void)                                                                 \
    {                                                                                             \
        int me = t_me, npes = t_npes, right = (me + 1) % npes;                                    \
        TYPE *iv = shmem_calloc(N, sizeof(TYPE));                                                 \
        long *flag = shmem_calloc(1, sizeof(long));                                               \
        int status[N] = {0};                                                                      \
        size_t idx[N];                                                                            \
        TYPE vals[N];                                                                             \
        shmem_barrier_all();                                                                      \
        /* nothing set yet: tests are false */                                                    \
        CHECK(shmem_##NAME##_test_all(iv, N, NULL, SHMEM_CMP_EQ, 1) == 0, "test_all early");      \
        CHECK(shmem_##NAME##_test_any(iv, N, NULL, SHMEM_CMP_EQ, 1) == SIZE_MAX, "test_any early"); \
        CHECK(shmem_##NAME##_test_some(iv, N, idx, NULL, SHMEM_CMP_EQ, 1) == 0, "test_some early"); \
        /* all excluded / empty */                                                                \
        int allx[N];                                                                              \
        for (int i = 0; i < N; i++)                                                               \
            allx[i] = 1;                                                                          \
        CHECK(shmem_##NAME##_test_any(iv, N, allx, SHMEM_CMP_EQ, 0) == SIZE_MAX, "test_any excluded"); \
        CHECK(shmem_##NAME##_test_some(iv, N, idx, allx, SHMEM_CMP_EQ, 0) == 0, "test_some excluded"); \
        CHECK(shmem_##NAME##_wait_until_any(iv, N, allx, SHMEM_CMP_EQ, 0) == SIZE_MAX, "wait_until_any excluded"); \
        CHECK(shmem_##NAME##_wait_until_some(iv, N, idx, allx, SHMEM_CMP_EQ, 0) == 0, "wait_until_some excluded"); \
        shmem_barrier_all();                                                                      \
        /* any: only element 5 is set */                                                          \
        shmem_##NAME##_##SET(&iv[5], 1, right);                                                   \
        CHECK(shmem_##NAME##_wait_until_any(iv, N, NULL, SHMEM_CMP_EQ, 1) == 5, "wait_until_any"); \
        CHECK(shmem_##NAME##_test_any(iv, N, NULL, SHMEM_CMP_EQ, 1) == 5, "test_any");            \
        shmem_barrier_all();                                                                      \
        /* some: 1 and 4 set, then the flag */                                                    \
        shmem_##NAME##_##SET(&iv[1], 1, right);                                                   \
        shmem_##NAME##_##SET(&iv[4], 1, right);                                                   \
        shmem_fence();                                                                            \
        shmem_long_atomic_set(flag, 1, right);                                                    \
        shmem_long_wait_until(flag, SHMEM_CMP_EQ, 1);                                             \
        status[5] = 1; /* 5 is set too: masked */                                                 \
        size_t k = shmem_##NAME##_wait_until_some(iv, N, idx, status, SHMEM_CMP_EQ, 1);           \
        CHECK(k == 2 && idx[0] == 1 && idx[1] == 4, "wait_until_some: %zu", k);                   \
        k = shmem_##NAME##_test_some(iv, N, idx, status, SHMEM_CMP_EQ, 1);                        \
        CHECK(k == 2 && idx[0] == 1 && idx[1] == 4, "test_some: %zu", k);                         \
        status[5] = 0;                                                                            \
        shmem_barrier_all();                                                                      \
        /* all: set the rest except 7; with 7 masked, all holds */                                \
        for (int i = 0; i < N - 1; i++)                                                           \
            shmem_##NAME##_##SET(&iv[i], 1, right);                                               \
        status[7] = 1;                                                                            \
        shmem_##NAME##_wait_until_all(iv, N, status, SHMEM_CMP_EQ, 1);                            \
        CHECK(shmem_test_all(iv, N, status, SHMEM_CMP_EQ, 1) == 1, "test_all masked (generic)");  \
        CHECK(shmem_##NAME##_test_all(iv, N, NULL, SHMEM_CMP_EQ, 1) == 0, "test_all with 7 unset"); \
        status[7] = 0;                                                                            \
        shmem_barrier_all();                                                                      \
        /* vectors: element i must reach i + 10 */                                                \
        for (int i = 0; i < N; i++)                                                               \
            vals[i] = (TYPE)(i + 10);                                                             \
        CHECK(shmem_##NAME##_test_any_vector(iv, N, NULL, SHMEM_CMP_GE, vals) == SIZE_MAX, "test_any_vector early"); \
        shmem_barrier_all();                                                                      \
        shmem_##NAME##_##SET(&iv[2], 12, right);                                                  \
        CHECK(shmem_##NAME##_wait_until_any_vector(iv, N, NULL, SHMEM_CMP_GE, vals) == 2, "wait_until_any_vector"); \
        shmem_barrier_all();                                                                      \
        shmem_##NAME##_##SET(&iv[6], 16, right);                                                  \
        shmem_fence();                                                                            \
        shmem_long_atomic_set(flag, 2, right);                                                    \
        shmem_long_wait_until(flag, SHMEM_CMP_EQ, 2);                                             \
        k = shmem_##NAME##_wait_until_some_vector(iv, N, idx, NULL, SHMEM_CMP_GE, vals);          \
        CHECK(k == 2 && idx[0] == 2 && idx[1] == 6, "wait_until_some_vector %zu", k);             \
        CHECK(shmem_##NAME##_test_some_vector(iv, N, idx, NULL, SHMEM_CMP_GE, vals) == 2, "test_some_vector"); \
        shmem_barrier_all();                                                                      \
        for (int i = 0; i < N; i++)                                                               \
            shmem_##NAME##_##SET(&iv[i], (TYPE)(i + 10), right);                                  \
        shmem_##NAME##_wait_until_all_vector(iv, N, NULL, SHMEM_CMP_EQ, vals);                    \
        CHECK(shmem_##NAME##_test_all_vector(iv, N, NULL, SHMEM_CMP_EQ, vals) == 1, "test_all_vector"); \
        shmem_barrier_all();                                                                      \
        shmem_free(flag);                                                                         \
        shmem_free(iv);                                                                           \
        t_section("wait_until/test all/any/some/vector " #NAME);                                  \
    }
TEST_TYPE(long, long, atomic_set)
TEST_TYPE(int32_t, int32, atomic_set)
TEST_TYPE(uint64_t, uint64, atomic_set)
TEST_TYPE(size_t, size, atomic_set)
TEST_TYPE(short, short, p)
TEST_TYPE(unsigned short, ushort, p)

/* The deprecated generic shmem_wait on the types with a typed wait (OSSS's
 * generic; the untyped C routine takes long only): wait while *ivar == v. */
#define WAIT_GEN(T)                                                                                \
    do {                                                                                           \
        T *w = shmem_calloc(1, sizeof(T));                                                          \
        shmem_barrier_all();                                                                       \
        T one = 1;                                                                                 \
        shmem_putmem(w, &one, sizeof one, (t_me + 1) % t_npes);                                     \
        shmem_wait(w, (T)0);                                                                       \
        CHECK(*w == 1, "shmem_wait on " #T);                                                        \
        shmem_barrier_all();                                                                       \
        shmem_free(w);                                                                             \
    } while (0)

int main(void)
{
    t_init();
    WAIT_GEN(short);
    WAIT_GEN(int);
    WAIT_GEN(long);
    WAIT_GEN(long long);
    t_section("generic shmem_wait on short, int, long, long long");
    test_long();
    test_int32();
    test_uint64();
    test_size();
    test_short();
    test_ushort();
    return t_finish();
}
