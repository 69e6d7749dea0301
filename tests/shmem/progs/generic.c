/* C11 type-generic interfaces: put/get/p/g/iput/iget/put_nbi/get_nbi and
 * the atomics, with and without a context as first argument, for several
 * types, const sources, int literals as values. */
#include "tcommon.h"

#if !defined(__STDC_VERSION__) || __STDC_VERSION__ < 201112L
#error "generic.c needs C11"
#endif

#define N 64

#define RMA(TYPE, TAG)                                                                      \
    static int rma_##TAG(shmem_ctx_t ctx, int use_ctx)                                      \
    {                                                                                       \
        int me = t_me, npes = t_npes, right = (me + 1) % npes, left = (me + npes - 1) % npes, bad = 0; \
        TYPE *d = shmem_malloc(N * sizeof(TYPE));                                           \
        TYPE s[N], g[N];                                                                    \
        for (int i = 0; i < N; i++)                                                         \
            s[i] = (TYPE)(me * 3 + i), d[i] = (TYPE)0;                                      \
        const TYPE *cs = s;                                                                 \
        shmem_barrier_all();                                                                \
        if (use_ctx) {                                                                      \
            shmem_put(ctx, d, cs, N / 2, right);                                            \
            shmem_put_nbi(ctx, d + N / 2, cs + N / 2, N / 2 - 1, right);                    \
            shmem_p(ctx, d + N - 1, s[N - 1], right);                                       \
            shmem_ctx_quiet(ctx);                                                           \
        } else {                                                                            \
            shmem_put(d, cs, N / 2, right);                                                 \
            shmem_put_nbi(d + N / 2, cs + N / 2, N / 2 - 1, right);                         \
            shmem_p(d + N - 1, s[N - 1], right);                                            \
        }                                                                                   \
        shmem_barrier_all();                                                                \
        for (int i = 0; i < N; i++)                                                         \
            bad += d[i] != (TYPE)(left * 3 + i);                                            \
        memset(g, 0, sizeof g);                                                             \
        if (use_ctx) {                                                                      \
            shmem_get(ctx, g, d, N / 2, right);                                             \
            shmem_get_nbi(ctx, g + N / 2, d + N / 2, N / 2, right);                         \
            shmem_ctx_quiet(ctx);                                                           \
            bad += shmem_g(ctx, d + 1, right) != (TYPE)(me * 3 + 1);                        \
        } else {                                                                            \
            shmem_get(g, d, N / 2, right);                                                  \
            shmem_get_nbi(g + N / 2, d + N / 2, N / 2, right);                              \
            shmem_quiet();                                                                  \
            bad += shmem_g(d + 1, right) != (TYPE)(me * 3 + 1);                             \
        }                                                                                   \
        for (int i = 0; i < N; i++)                                                         \
            bad += g[i] != (TYPE)(me * 3 + i);                                              \
        TYPE st[4] = {0};                                                                   \
        shmem_iget(st, d, 1, 2, 4, me);                                                     \
        for (int i = 0; i < 4; i++)                                                         \
            bad += st[i] != (TYPE)(left * 3 + 2 * i);                                       \
        shmem_barrier_all();                                                                \
        shmem_iput(d, s, 2, 1, 4, right);                                                   \
        shmem_barrier_all();                                                                \
        for (int i = 0; i < 4; i++)                                                         \
            bad += d[2 * i] != (TYPE)(left * 3 + i);                                        \
        shmem_free(d);                                                                      \
        return bad;                                                                         \
    }
RMA(int, int)
RMA(long, long)
RMA(double, double)
RMA(unsigned char, uchar)
RMA(short, short)

#define AMO(TYPE, TAG)                                                                      \
    static int amo_##TAG(shmem_ctx_t ctx, int use_ctx)                                      \
    {                                                                                       \
        int me = t_me, npes = t_npes, bad = 0;                                              \
        TYPE *w = shmem_malloc(4 * sizeof(TYPE));                                           \
        for (int i = 0; i < 4; i++)                                                         \
            w[i] = 0;                                                                       \
        shmem_barrier_all();                                                                \
        if (use_ctx) {                                                                      \
            shmem_atomic_add(ctx, &w[0], 2, 0);                                             \
            shmem_atomic_inc(ctx, &w[0], 0);                                                \
            (void)shmem_atomic_fetch_add(ctx, &w[1], 1, 0);                                 \
            (void)shmem_atomic_fetch_inc(ctx, &w[1], 0);                                    \
            shmem_ctx_quiet(ctx);                                                           \
        } else {                                                                            \
            shmem_atomic_add(&w[0], 2, 0);                                                  \
            shmem_atomic_inc(&w[0], 0);                                                     \
            (void)shmem_atomic_fetch_add(&w[1], 1, 0);                                      \
            (void)shmem_atomic_fetch_inc(&w[1], 0);                                         \
        }                                                                                   \
        /* bitwise: every PE sets its bit on PE 0 (int, long, long long through \
         * the extension Open MPI's generics have too) */                                \
        if (use_ctx) {                                                                      \
            shmem_atomic_or(ctx, &w[3], (TYPE)1 << (me % 30), 0);                           \
            shmem_atomic_xor(ctx, &w[3], (TYPE)1 << 30, 0);                                 \
            shmem_ctx_quiet(ctx);                                                           \
        } else {                                                                            \
            shmem_atomic_or(&w[3], (TYPE)1 << (me % 30), 0);                                \
            shmem_atomic_xor(&w[3], (TYPE)1 << 30, 0);                                      \
        }                                                                                   \
        shmem_barrier_all();                                                                \
        TYPE bits = (TYPE)((npes % 2) ? (TYPE)1 << 30 : 0);                                 \
        for (int pe = 0; pe < npes; pe++)                                                   \
            bits |= (TYPE)1 << (pe % 30);                                                   \
        if (me == 0)                                                                        \
            bad += w[0] != (TYPE)(3 * npes) || w[1] != (TYPE)(2 * npes) || w[3] != bits;    \
        shmem_atomic_set(&w[2], (TYPE)(me + 1), me);                                        \
        bad += shmem_atomic_fetch(&w[2], me) != (TYPE)(me + 1);                             \
        bad += shmem_atomic_swap(&w[2], 5, me) != (TYPE)(me + 1);                           \
        if (sizeof(TYPE) == 8)                                                              \
            bad += shmem_atomic_compare_swap(&w[2], 5, 6, me) != (TYPE)5 || w[2] != (TYPE)6; \
        shmem_barrier_all();                                                                \
        shmem_free(w);                                                                      \
        return bad;                                                                         \
    }
AMO(int, int)
AMO(long, long)
AMO(long long, longlong)
AMO(unsigned long, ulong)

int main(void)
{
    t_init();
    shmem_ctx_t ctx;
    if (shmem_ctx_create(0, &ctx) != 0)
        ctx = SHMEM_CTX_DEFAULT;
    for (int c = 0; c < 2; c++) {
        int bad = rma_int(ctx, c) + rma_long(ctx, c) + rma_double(ctx, c) + rma_uchar(ctx, c) + rma_short(ctx, c);
        CHECK(!bad, "generic RMA (ctx %d): %d wrong", c, bad);
        t_section("generic put/get/p/g/iput/iget/nbi%s", c ? " with a context" : "");
        bad = amo_int(ctx, c) + amo_long(ctx, c) + amo_longlong(ctx, c) + amo_ulong(ctx, c);
        CHECK(!bad, "generic AMO (ctx %d): %d wrong", c, bad);
        t_section("generic atomics%s", c ? " with a context" : "");
    }
    long *f = shmem_malloc(sizeof(long));
    *f = 0;
    shmem_barrier_all();
    shmem_atomic_set(f, 9L, (t_me + 1) % t_npes);
    shmem_wait_until(f, SHMEM_CMP_EQ, 9L);
    CHECK(shmem_test(f, SHMEM_CMP_EQ, 9L) == 1, "generic test");
    shmem_barrier_all();
    shmem_free(f);
    t_section("generic wait_until/test");
    if (ctx != SHMEM_CTX_DEFAULT)
        shmem_ctx_destroy(ctx);
    return t_finish();
}
