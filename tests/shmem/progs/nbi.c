/* Non-blocking RMA: put_nbi/get_nbi for every standard RMA type, sized and
 * mem forms; many outstanding at once; quiet completes them (gets land,
 * puts are visible after quiet + barrier). */
#include "tcommon.h"
#include "ttypes.h"

#define N 129
#define K 16 /* outstanding operations per type */

#define TEST_TYPE(TYPE, NAME)                                                               \
    static void test_##NAME(void)                                                           \
    {                                                                                       \
        int me = t_me, npes = t_npes, right = (me + 1) % npes, left = (me + npes - 1) % npes; \
        TYPE *h = shmem_malloc(K * N * sizeof(TYPE));                                       \
        TYPE *src = malloc(K * N * sizeof(TYPE)), *dst = malloc(K * N * sizeof(TYPE));      \
        for (int i = 0; i < K * N; i++) {                                                   \
            src[i] = T_VAL(TYPE, me, i);                                                    \
            h[i] = (TYPE)0;                                                                 \
        }                                                                                   \
        shmem_barrier_all();                                                                \
        for (int k = 0; k < K; k++)                                                         \
            shmem_##NAME##_put_nbi(h + k * N, src + k * N, N, right);                       \
        shmem_quiet();                                                                      \
        shmem_barrier_all();                                                                \
        int bad = 0;                                                                        \
        for (int i = 0; i < K * N; i++)                                                     \
            bad += h[i] != T_VAL(TYPE, left, i);                                            \
        CHECK(!bad, #NAME " put_nbi: %d differ", bad);                                      \
        for (int i = 0; i < K * N; i++)                                                     \
            dst[i] = (TYPE)0;                                                               \
        for (int k = 0; k < K; k++)                                                         \
            shmem_##NAME##_get_nbi(dst + k * N, h + k * N, N, right);                       \
        shmem_quiet();                                                                      \
        bad = 0;                                                                            \
        for (int i = 0; i < K * N; i++)                                                     \
            bad += dst[i] != T_VAL(TYPE, me, i);                                            \
        CHECK(!bad, #NAME " get_nbi: %d differ", bad);                                      \
        shmem_barrier_all();                                                                \
        shmem_free(h);                                                                      \
        free(src);                                                                          \
        free(dst);                                                                          \
        t_section("nbi " #NAME);                                                            \
    }
T_RMA_TYPES(TEST_TYPE)

static void test_sized(void)
{
    int me = t_me, npes = t_npes, right = (me + 1) % npes, left = (me + npes - 1) % npes;
    size_t n = 1 << 16;
    unsigned char *h = shmem_calloc(5 * n * 16 + (4 << 20), 1);
    unsigned char *src = malloc(5 * n * 16 + (4 << 20)), *dst = malloc(5 * n * 16 + (4 << 20));
    size_t total = 5 * n * 16 + (4 << 20);
    for (size_t i = 0; i < total; i++)
        src[i] = (unsigned char)t_pat(me, i);
    shmem_barrier_all();
    size_t o = 0;
    shmem_put8_nbi(h + o, src + o, n, right), o += n * 16; /* regions 16 bytes * n apart */
    shmem_put16_nbi(h + o, src + o, n, right), o += n * 16;
    shmem_put32_nbi(h + o, src + o, n, right), o += n * 16;
    shmem_put64_nbi(h + o, src + o, n, right), o += n * 16;
    shmem_put128_nbi(h + o, src + o, n, right), o += n * 16;
    shmem_putmem_nbi(h + o, src + o, 4 << 20, right);
    shmem_quiet();
    shmem_barrier_all();
    size_t lens[6] = {n, 2 * n, 4 * n, 8 * n, 16 * n, 4 << 20}, bad = 0;
    o = 0;
    for (int r = 0; r < 6; r++) {
        for (size_t i = 0; i < lens[r]; i++)
            bad += h[o + i] != (unsigned char)t_pat(left, o + i);
        o += r < 5 ? n * 16 : 0;
    }
    CHECK(!bad, "sized put_nbi: %zu bytes differ", bad);
    memset(dst, 0, total);
    o = 0;
    shmem_get8_nbi(dst + o, h + o, n, right), o += n * 16;
    shmem_get16_nbi(dst + o, h + o, n, right), o += n * 16;
    shmem_get32_nbi(dst + o, h + o, n, right), o += n * 16;
    shmem_get64_nbi(dst + o, h + o, n, right), o += n * 16;
    shmem_get128_nbi(dst + o, h + o, n, right), o += n * 16;
    shmem_getmem_nbi(dst + o, h + o, 4 << 20, right);
    shmem_quiet();
    bad = 0;
    o = 0;
    for (int r = 0; r < 6; r++) {
        for (size_t i = 0; i < lens[r]; i++)
            bad += dst[o + i] != (unsigned char)t_pat(me, o + i);
        o += r < 5 ? n * 16 : 0;
    }
    CHECK(!bad, "sized get_nbi: %zu bytes differ", bad);
    shmem_barrier_all();
    shmem_free(h);
    free(src);
    free(dst);
    t_section("nbi sized and mem");
}

int main(void)
{
    t_init();
#define CALL(TYPE, NAME) test_##NAME();
    T_RMA_TYPES(CALL)
    test_sized();
    return t_finish();
}
