/* The _vector point-to-point routines of OpenSHMEM 1.5 (sec. 9.10.5-9.10.10)
 * under the spec's own prototypes, e.g.
 *   void shmem_TYPENAME_wait_until_all_vector(TYPE *ivars, size_t nelems,
 *        const int *status, int cmp, TYPE *cmp_values);
 * cmp_values is TYPE *, not const TYPE *. This program redeclares each routine
 * as the spec writes it (a header that differs fails to compile here: a tool
 * or binding written from the synopsis, a profiling wrapper, a C++ extern "C"
 * declaration), stores their addresses in pointers of the spec's types, and
 * calls them through those pointers. Round 9 (openshmem-rs): locus declared
 * cmp_values const. The left neighbour sets ivars[i] = i + 10 with atomic_set;
 * checks are made after a barrier, so results do not depend on timing. */
#include "tcommon.h"

#define N 8

#define PROTOS(TYPE, NAME)                                                                        \
    void shmem_##NAME##_wait_until_all_vector(TYPE *ivars, size_t nelems, const int *status,      \
                                              int cmp, TYPE *cmp_values);                         \
    size_t shmem_##NAME##_wait_until_any_vector(TYPE *ivars, size_t nelems, const int *status,    \
                                                int cmp, TYPE *cmp_values);                       \
    size_t shmem_##NAME##_wait_until_some_vector(TYPE *ivars, size_t nelems, size_t *indices,     \
                                                 const int *status, int cmp, TYPE *cmp_values);   \
    int shmem_##NAME##_test_all_vector(TYPE *ivars, size_t nelems, const int *status, int cmp,    \
                                       TYPE *cmp_values);                                         \
    size_t shmem_##NAME##_test_any_vector(TYPE *ivars, size_t nelems, const int *status, int cmp, \
                                          TYPE *cmp_values);                                      \
    size_t shmem_##NAME##_test_some_vector(TYPE *ivars, size_t nelems, size_t *indices,           \
                                           const int *status, int cmp, TYPE *cmp_values);

#define TEST_TYPE(TYPE, NAME)                                                                     \
    PROTOS(TYPE, NAME)                                                                            \
    static void test_##NAME(void)                                                                 \
    {                                                                                             \
        void (*wait_all)(TYPE *, size_t, const int *, int, TYPE *) =                              \
            shmem_##NAME##_wait_until_all_vector;                                                 \
        size_t (*wait_any)(TYPE *, size_t, const int *, int, TYPE *) =                            \
            shmem_##NAME##_wait_until_any_vector;                                                 \
        size_t (*wait_some)(TYPE *, size_t, size_t *, const int *, int, TYPE *) =                 \
            shmem_##NAME##_wait_until_some_vector;                                                \
        int (*test_all)(TYPE *, size_t, const int *, int, TYPE *) = shmem_##NAME##_test_all_vector; \
        size_t (*test_any)(TYPE *, size_t, const int *, int, TYPE *) =                            \
            shmem_##NAME##_test_any_vector;                                                       \
        size_t (*test_some)(TYPE *, size_t, size_t *, const int *, int, TYPE *) =                 \
            shmem_##NAME##_test_some_vector;                                                      \
        int right = (t_me + 1) % t_npes;                                                          \
        TYPE *iv = shmem_calloc(N, sizeof(TYPE));                                                 \
        TYPE vals[N];                                                                             \
        int odd[N];                                                                               \
        size_t idx[N];                                                                            \
        for (int i = 0; i < N; i++) {                                                             \
            vals[i] = (TYPE)(i + 10);                                                             \
            odd[i] = i % 2; /* 1 = excluded: only the even elements are waited on */              \
        }                                                                                         \
        shmem_barrier_all();                                                                      \
        CHECK(test_all(iv, N, NULL, SHMEM_CMP_EQ, vals) == 0, "test_all_vector before the sets"); \
        CHECK(test_some(iv, N, idx, NULL, SHMEM_CMP_EQ, vals) == 0, "test_some_vector before");   \
        CHECK(test_any(iv, N, NULL, SHMEM_CMP_EQ, vals) == SIZE_MAX, "test_any_vector before");   \
        shmem_barrier_all();                                                                      \
        for (int i = 0; i < N; i++)                                                               \
            shmem_##NAME##_atomic_set(&iv[i], (TYPE)(i + 10), right);                             \
        wait_all(iv, N, NULL, SHMEM_CMP_EQ, vals);                                                \
        shmem_barrier_all();                                                                      \
        CHECK(test_all(iv, N, NULL, SHMEM_CMP_EQ, vals) == 1, "test_all_vector");                 \
        size_t k = wait_any(iv, N, odd, SHMEM_CMP_EQ, vals);                                      \
        CHECK(k < N && k % 2 == 0, "wait_until_any_vector returned %zu", k);                      \
        k = test_any(iv, N, NULL, SHMEM_CMP_GE, vals);                                            \
        CHECK(k < N, "test_any_vector returned %zu", k);                                          \
        k = wait_some(iv, N, idx, odd, SHMEM_CMP_EQ, vals);                                       \
        CHECK(k == N / 2, "wait_until_some_vector returned %zu", k);                              \
        for (size_t j = 0; j < k && j < N; j++)                                                   \
            CHECK(idx[j] < N && idx[j] % 2 == 0, "wait_until_some_vector index %zu", idx[j]);     \
        CHECK(test_some(iv, N, idx, NULL, SHMEM_CMP_NE, vals) == 0, "test_some_vector NE");       \
        CHECK(test_some(iv, N, idx, NULL, SHMEM_CMP_LE, vals) == N, "test_some_vector LE");       \
        /* the C11 generic takes the same non-const array */                                      \
        CHECK(shmem_test_all_vector(iv, N, NULL, SHMEM_CMP_EQ, vals) == 1, "generic test_all_vector"); \
        shmem_barrier_all();                                                                      \
        shmem_free(iv);                                                                           \
        t_section("spec prototypes of the _vector waits and tests " #NAME);                        \
    }

TEST_TYPE(int, int)
TEST_TYPE(long, long)
TEST_TYPE(uint64_t, uint64)
TEST_TYPE(size_t, size)

int main(void)
{
    t_init();
    test_int();
    test_long();
    test_uint64();
    test_size();
    return t_finish();
}
