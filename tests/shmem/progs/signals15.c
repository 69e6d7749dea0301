/* put_signal (1.5, checked against the spec only): the data is there when
 * the signal is seen; SET and ADD; blocking and _nbi; typed, sized and mem
 * forms; a context form; signal_fetch; signal_wait_until's return value. */
#include "tcommon.h"

#define N 4096

int main(void)
{
    t_init();
    int me = t_me, npes = t_npes, right = (me + 1) % npes, left = (me + npes - 1) % npes;
    long *data = shmem_malloc(N * sizeof(long));
    uint64_t *sig = shmem_calloc(4, sizeof(uint64_t));
    long *ack = shmem_calloc(1, sizeof(long));
    long src[N];
    int bad = 0;
    shmem_barrier_all();

    /* SET: rounds to the right neighbour, acknowledged */
    for (uint64_t r = 1; r <= 20; r++) {
        for (int i = 0; i < N; i++)
            src[i] = (long)r * 100000 + me * 1000 + i;
        if (r % 2)
            shmem_long_put_signal(data, src, N, &sig[0], r, SHMEM_SIGNAL_SET, right);
        else {
            shmem_long_put_signal_nbi(data, src, N, &sig[0], r, SHMEM_SIGNAL_SET, right);
            shmem_quiet();
        }
        uint64_t v = shmem_signal_wait_until(&sig[0], SHMEM_CMP_EQ, r);
        bad += v != r;
        for (int i = 0; i < N; i++)
            bad += data[i] != (long)r * 100000 + left * 1000 + i;
        CHECK(shmem_signal_fetch(&sig[0]) == r, "signal_fetch round %llu", (unsigned long long)r);
        shmem_long_atomic_set(ack, (long)r, left);
        shmem_long_wait_until(ack, SHMEM_CMP_EQ, (long)r);
    }
    CHECK(!bad, "put_signal SET: %d wrong", bad);
    t_section("put_signal SET, blocking and nbi");

    /* ADD: every PE puts its block into PE 0's data and adds 1 */
    shmem_barrier_all();
    int per = N / npes;
    for (int i = 0; i < per; i++)
        src[i] = me * 7 + i;
    shmem_putmem_signal(data + me * per, src, per * sizeof(long), &sig[1], 1, SHMEM_SIGNAL_ADD, 0);
    if (me == 0) {
        shmem_signal_wait_until(&sig[1], SHMEM_CMP_EQ, (uint64_t)npes);
        bad = 0;
        for (int pe = 0; pe < npes; pe++)
            for (int i = 0; i < per; i++)
                bad += data[pe * per + i] != pe * 7 + i;
        CHECK(!bad, "put_signal ADD: %d wrong", bad);
    }
    shmem_barrier_all();
    t_section("putmem_signal ADD from every PE");

    /* sized and context forms */
    shmem_ctx_t ctx;
    if (shmem_ctx_create(0, &ctx))
        ctx = SHMEM_CTX_DEFAULT;
    for (int i = 0; i < 64; i++)
        src[i] = -i - me;
    shmem_put64_signal(data, src, 32, &sig[2], 5, SHMEM_SIGNAL_SET, right);
    shmem_ctx_put32_signal_nbi(ctx, data + 32, src + 32, 64, &sig[3], 2, SHMEM_SIGNAL_ADD, right);
    shmem_ctx_quiet(ctx);
    shmem_signal_wait_until(&sig[2], SHMEM_CMP_EQ, 5);
    shmem_signal_wait_until(&sig[3], SHMEM_CMP_GE, 2);
    bad = 0;
    for (int i = 0; i < 64; i++)
        bad += data[i] != -i - left;
    CHECK(!bad, "sized/ctx put_signal: %d wrong", bad);
    if (ctx != SHMEM_CTX_DEFAULT)
        shmem_ctx_destroy(ctx);
    t_section("put64_signal, ctx put32_signal_nbi");

    shmem_free(ack);
    shmem_free(sig);
    shmem_free(data);
    return t_finish();
}
