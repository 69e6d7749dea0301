/* Communication contexts: create with each option, ctx RMA (typed, sized,
 * mem, nbi, strided, p/g), ctx AMOs, ctx_fence and ctx_quiet, the default
 * context, destroy. */
#include "tcommon.h"

#define N 1024

static void use_ctx(shmem_ctx_t ctx, const char *what)
{
    int me = t_me, npes = t_npes, right = (me + 1) % npes, left = (me + npes - 1) % npes;
    long *d = shmem_malloc(N * sizeof(long));
    long *flag = shmem_malloc(2 * sizeof(long));
    long *ctr = shmem_malloc(sizeof(long));
    long src[N], got[N];
    for (int i = 0; i < N; i++)
        src[i] = me * 100000 + i, d[i] = -1;
    flag[0] = flag[1] = 0;
    *ctr = 0;
    shmem_barrier_all();

    shmem_ctx_long_put(ctx, d, src, N / 2, right);
    shmem_ctx_putmem_nbi(ctx, d + N / 2, src + N / 2, (N / 2 - 8) * sizeof(long), right);
    shmem_ctx_put64(ctx, d + N - 8, src + N - 8, 4, right);
    shmem_ctx_long_iput(ctx, d + N - 4, src + N - 4, 1, 1, 3, right);
    shmem_ctx_long_p(ctx, d + N - 1, src[N - 1], right);
    shmem_ctx_long_atomic_add(ctx, ctr, me + 1, 0);
    shmem_ctx_fence(ctx);
    shmem_ctx_long_atomic_set(ctx, &flag[0], 1, right);
    shmem_ctx_quiet(ctx);
    shmem_long_wait_until(&flag[0], SHMEM_CMP_EQ, 1);
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += d[i] != left * 100000 + i;
    CHECK(!bad, "%s: %d values wrong after fence + flag", what, bad);
    shmem_barrier_all();

    /* gets on the context */
    memset(got, 0, sizeof got);
    shmem_ctx_long_get(ctx, got, d, N / 2, right);
    shmem_ctx_getmem_nbi(ctx, got + N / 2, d + N / 2, (N / 2) * sizeof(long), right);
    shmem_ctx_quiet(ctx);
    bad = 0;
    for (int i = 0; i < N; i++)
        bad += got[i] != me * 100000 + i;
    long g = shmem_ctx_long_g(ctx, d + 5, right);
    bad += g != me * 100000 + 5;
    long iv[3] = {0, 0, 0};
    shmem_ctx_long_iget(ctx, iv, d, 1, 2, 3, right);
    bad += iv[0] != me * 100000 || iv[1] != me * 100000 + 2 || iv[2] != me * 100000 + 4;
    CHECK(!bad, "%s: gets wrong", what);
    shmem_barrier_all();
    if (me == 0)
        CHECK(*ctr == (long)npes * (npes + 1) / 2, "%s: ctx atomic add %ld", what, *ctr);
    long f = shmem_ctx_long_atomic_fetch_add(ctx, ctr, 0, 0);
    CHECK(f == (long)npes * (npes + 1) / 2, "%s: ctx fetch_add %ld", what, f);
    long sw = shmem_ctx_long_atomic_compare_swap(ctx, &flag[1], 0, me + 1, right);
    CHECK(sw == 0, "%s: ctx cswap %ld", what, sw);
    shmem_barrier_all();
    CHECK(flag[1] == left + 1, "%s: ctx cswap result %ld", what, flag[1]);
    shmem_barrier_all();
    shmem_free(ctr);
    shmem_free(flag);
    shmem_free(d);
}

int main(void)
{
    t_init();
    use_ctx(SHMEM_CTX_DEFAULT, "default");
    t_section("SHMEM_CTX_DEFAULT");

    static const long opts[4] = {0, SHMEM_CTX_PRIVATE, SHMEM_CTX_SERIALIZED, SHMEM_CTX_NOSTORE};
    static const char *names[4] = {"0", "PRIVATE", "SERIALIZED", "NOSTORE"};
    for (int o = 0; o < 4; o++) {
        shmem_ctx_t ctx;
        int rc = shmem_ctx_create(opts[o], &ctx);
        /* creation may fail (resources); then the default context stands in */
        if (rc != 0)
            ctx = SHMEM_CTX_DEFAULT;
        use_ctx(ctx, names[o]);
        if (rc == 0)
            shmem_ctx_destroy(ctx);
        t_section("ctx_create(%s)", names[o]);
    }

    /* several contexts at once; quiet on one completes its own puts */
    shmem_ctx_t c1, c2;
    int r1 = shmem_ctx_create(0, &c1), r2 = shmem_ctx_create(0, &c2);
    if (r1)
        c1 = SHMEM_CTX_DEFAULT;
    if (r2)
        c2 = SHMEM_CTX_DEFAULT;
    int me = t_me, npes = t_npes, right = (me + 1) % npes, left = (me + npes - 1) % npes;
    long *a = shmem_calloc(N, sizeof(long)), *b = shmem_calloc(N, sizeof(long));
    shmem_barrier_all();
    long src[N];
    for (int i = 0; i < N; i++)
        src[i] = i + me;
    shmem_ctx_long_put_nbi(c1, a, src, N, right);
    shmem_ctx_long_put_nbi(c2, b, src, N, right);
    shmem_ctx_quiet(c1);
    shmem_ctx_quiet(c2);
    shmem_barrier_all();
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += a[i] != i + left || b[i] != i + left;
    CHECK(!bad, "two contexts: %d wrong", bad);
    if (!r1)
        shmem_ctx_destroy(c1);
    if (!r2)
        shmem_ctx_destroy(c2);
    shmem_free(a);
    shmem_free(b);
    t_section("two contexts");
    return t_finish();
}
