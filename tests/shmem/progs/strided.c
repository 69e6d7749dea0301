/* Strided RMA: iput/iget for every standard RMA type and the sized forms
 * (8..128), strides 1..5 on each side, heap and global targets. */
#include "tcommon.h"
#include "ttypes.h"

#define N 40
#define SPAN (N * 5 + 1)

#define DECL_GLOBAL(TYPE, NAME) static TYPE g_##NAME[SPAN];
T_RMA_TYPES(DECL_GLOBAL)

#define TEST_TYPE(TYPE, NAME)                                                               \
    static void test_##NAME(void)                                                           \
    {                                                                                       \
        int me = t_me, npes = t_npes, right = (me + 1) % npes, left = (me + npes - 1) % npes; \
        TYPE *h = shmem_malloc(SPAN * sizeof(TYPE)), src[SPAN], dst[SPAN];                  \
        int bad = 0;                                                                        \
        for (ptrdiff_t ds = 1; ds <= 5; ds += 2)                                            \
            for (ptrdiff_t ss = 1; ss <= 5; ss += 2) {                                      \
                for (int i = 0; i < SPAN; i++) {                                            \
                    src[i] = T_VAL(TYPE, me, i);                                            \
                    h[i] = (TYPE)0;                                                         \
                    g_##NAME[i] = (TYPE)0;                                                  \
                }                                                                           \
                shmem_barrier_all();                                                        \
                shmem_##NAME##_iput(h, src, ds, ss, N, right);                              \
                shmem_##NAME##_iput(g_##NAME, src, ds, ss, N, right);                       \
                shmem_barrier_all();                                                        \
                for (int i = 0; i < SPAN; i++) {                                            \
                    TYPE want = (i % ds == 0 && i / ds < N) ? T_VAL(TYPE, left, (i / ds) * ss) : (TYPE)0; \
                    bad += h[i] != want || g_##NAME[i] != want;                             \
                }                                                                           \
                /* iget back from the right: dst[i*ds] = right's h[i*ss] */                 \
                for (int i = 0; i < SPAN; i++)                                              \
                    dst[i] = (TYPE)0;                                                       \
                shmem_##NAME##_iget(dst, h, ds, ss, N, right);                              \
                for (int i = 0; i < N; i++) {                                               \
                    ptrdiff_t k = i * ss; /* right's h[k] holds my src if k % ds == 0 */    \
                    TYPE want = (k % ds == 0 && k / ds < N) ? T_VAL(TYPE, me, (k / ds) * ss) : (TYPE)0; \
                    bad += dst[i * ds] != want;                                             \
                }                                                                           \
                shmem_barrier_all();                                                        \
            }                                                                               \
        CHECK(!bad, #NAME " iput/iget: %d elements differ", bad);                           \
        shmem_free(h);                                                                      \
        t_section("iput/iget " #NAME);                                                      \
    }
T_RMA_TYPES(TEST_TYPE)

#define SIZED(BITS, UT)                                                                     \
    static void test_sized_##BITS(void)                                                     \
    {                                                                                       \
        int me = t_me, npes = t_npes, right = (me + 1) % npes, left = (me + npes - 1) % npes; \
        UT *h = shmem_malloc(SPAN * sizeof(UT)), src[SPAN], dst[SPAN];                      \
        int bad = 0;                                                                        \
        for (int i = 0; i < SPAN; i++) {                                                    \
            memset(&src[i], (int)(me * 16 + i % 16), sizeof(UT));                           \
            memset(&h[i], 0, sizeof(UT));                                                   \
        }                                                                                   \
        shmem_barrier_all();                                                                \
        shmem_iput##BITS(h, src, 3, 2, N, right);                                           \
        shmem_barrier_all();                                                                \
        for (int i = 0; i < SPAN; i++) {                                                    \
            UT want;                                                                        \
            memset(&want, i % 3 == 0 && i / 3 < N ? (int)(left * 16 + ((i / 3) * 2) % 16) : 0, sizeof(UT)); \
            bad += memcmp(&h[i], &want, sizeof(UT)) != 0;                                   \
        }                                                                                   \
        memset(dst, 0, sizeof dst);                                                         \
        shmem_iget##BITS(dst, h, 2, 3, N, right);                                           \
        for (int i = 0; i < N; i++) {                                                       \
            UT want;                                                                        \
            memset(&want, (int)(me * 16 + (i * 2) % 16), sizeof(UT));                       \
            bad += memcmp(&dst[2 * i], &want, sizeof(UT)) != 0;                             \
        }                                                                                   \
        CHECK(!bad, "iput/iget%d: %d elements differ", BITS, bad);                          \
        shmem_barrier_all();                                                                \
        shmem_free(h);                                                                      \
        t_section("iput/iget%d", BITS);                                                     \
    }
typedef struct { uint64_t a, b; } u128_t;
SIZED(8, uint8_t)
SIZED(16, uint16_t)
SIZED(32, uint32_t)
SIZED(64, uint64_t)
SIZED(128, u128_t)

int main(void)
{
    t_init();
#define CALL(TYPE, NAME) test_##NAME();
    T_RMA_TYPES(CALL)
    test_sized_8();
    test_sized_16();
    test_sized_32();
    test_sized_64();
    test_sized_128();
    return t_finish();
}
