/* Typed RMA for every standard RMA type: put, get, p, g, to heap objects
 * and to global arrays; neighbour and self; lengths 1..N. */
#include "tcommon.h"
#include "ttypes.h"

#define N 257

#define DECL_GLOBAL(TYPE, NAME) static TYPE g_##NAME[N];
T_RMA_TYPES(DECL_GLOBAL)

#define TEST_TYPE(TYPE, NAME)                                                                 \
    static void test_##NAME(void)                                                             \
    {                                                                                         \
        int me = t_me, npes = t_npes, right = (me + 1) % npes, left = (me + npes - 1) % npes; \
        TYPE *h = shmem_malloc(N * sizeof(TYPE));                                             \
        TYPE src[N], dst[N];                                                                  \
        for (int i = 0; i < N; i++) {                                                         \
            src[i] = T_VAL(TYPE, me, i);                                                      \
            h[i] = 0;                                                                         \
            g_##NAME[i] = 0;                                                                  \
        }                                                                                     \
        shmem_barrier_all();                                                                  \
        /* put: heap and global, full length and a short prefix */                            \
        shmem_##NAME##_put(h, src, N, right);                                                 \
        shmem_##NAME##_put(g_##NAME, src, 1, right);                                          \
        shmem_##NAME##_put(g_##NAME + 1, src + 1, N - 1, right);                              \
        shmem_barrier_all();                                                                  \
        int bad = 0;                                                                          \
        for (int i = 0; i < N; i++)                                                           \
            bad += h[i] != T_VAL(TYPE, left, i) || g_##NAME[i] != T_VAL(TYPE, left, i);        \
        CHECK(!bad, #NAME " put: %d elements differ", bad);                                   \
        /* get from the left neighbour's copies (they hold left-of-left's pattern) */          \
        int ll = (left + npes - 1) % npes;                                                    \
        memset(dst, 0, sizeof dst);                                                           \
        shmem_##NAME##_get(dst, h, N, left);                                                  \
        bad = 0;                                                                              \
        for (int i = 0; i < N; i++)                                                           \
            bad += dst[i] != T_VAL(TYPE, ll, i);                                              \
        memset(dst, 0, sizeof dst);                                                           \
        shmem_##NAME##_get(dst, g_##NAME, N, left);                                           \
        for (int i = 0; i < N; i++)                                                           \
            bad += dst[i] != T_VAL(TYPE, ll, i);                                              \
        CHECK(!bad, #NAME " get: %d elements differ", bad);                                   \
        /* g and p: single elements, every PE including self */                              \
        for (int pe = 0; pe < npes; pe++) {                                                   \
            int pl = (pe + npes - 1) % npes;                                                  \
            TYPE v = shmem_##NAME##_g(&h[pe % N], pe);                                        \
            CHECK(v == T_VAL(TYPE, pl, pe % N), #NAME " g from %d", pe);                      \
            v = shmem_##NAME##_g(&g_##NAME[N - 1], pe);                                       \
            CHECK(v == T_VAL(TYPE, pl, N - 1), #NAME " g global from %d", pe);                \
        }                                                                                     \
        shmem_barrier_all();                                                                  \
        for (int pe = 0; pe < npes; pe++) {                                                   \
            shmem_##NAME##_p(&h[me], (TYPE)(me + 1), pe);                                     \
            shmem_##NAME##_p(&g_##NAME[me], (TYPE)(me + 2), pe);                              \
        }                                                                                     \
        shmem_barrier_all();                                                                  \
        bad = 0;                                                                              \
        for (int pe = 0; pe < npes; pe++)                                                     \
            bad += h[pe] != (TYPE)(pe + 1) || g_##NAME[pe] != (TYPE)(pe + 2);                 \
        CHECK(!bad, #NAME " p: %d elements differ", bad);                                     \
        /* zero-length transfers are no-ops */                                                \
        shmem_##NAME##_put(h, src, 0, right);                                                 \
        shmem_##NAME##_get(dst, h, 0, right);                                                 \
        shmem_barrier_all();                                                                  \
        CHECK(h[0] == (TYPE)1, #NAME " zero-length put wrote");                               \
        shmem_free(h);                                                                        \
        t_section("rma " #NAME);                                                              \
    }
T_RMA_TYPES(TEST_TYPE)

int main(void)
{
    t_init();
#define CALL(TYPE, NAME) test_##NAME();
    T_RMA_TYPES(CALL)
    return t_finish();
}
