/* Large RMA between symmetric heaps: _nbi puts of 256 KiB-3 MiB from the
 * heap (completed by quiet), blocking puts in a ping-pong where the target
 * waits in shmem_wait_until, every PE putting to every other at once, and
 * large gets; the sizes and offsets are not multiples of a page. These are
 * the puts an implementation may split or share between cores (locus:
 * LOCUS_RMA_HELP), so every byte is checked. */
#include "tcommon.h"

#define NCHUNK 6
static const size_t chunk[NCHUNK] = {(256u << 10) + 13, 1u << 20, (3u << 20) + 77, 512u << 10,
                                     (2u << 20) + 4095, 300u << 10};

static size_t total(void)
{
    size_t t = 0;
    for (int i = 0; i < NCHUNK; i++)
        t += chunk[i] + 64;
    return t;
}

static long verify(const unsigned char *p, size_t n, int pe, uint64_t base)
{
    long bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += p[i] != (unsigned char)t_pat(pe, base + i);
    return bad;
}

static void fill(unsigned char *p, size_t n, int pe, uint64_t base)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)t_pat(pe, base + i);
}

static void test_nbi_puts(void)
{
    int me = t_me, npes = t_npes, right = (me + 1) % npes, left = (me + npes - 1) % npes;
    size_t t = total();
    unsigned char *src = shmem_malloc(t), *dst = shmem_calloc(t, 1);
    fill(src, t, me, 0);
    shmem_barrier_all();
    size_t o = 0;
    for (int i = 0; i < NCHUNK; i++, o += chunk[i - 1] + 64)
        shmem_putmem_nbi(dst + o + 7, src + o + 7, chunk[i], right);
    shmem_quiet();
    shmem_barrier_all();
    o = 0;
    long bad = 0;
    for (int i = 0; i < NCHUNK; i++, o += chunk[i - 1] + 64)
        bad += verify(dst + o + 7, chunk[i], left, o + 7);
    CHECK(!bad, "%ld bytes differ", bad);
    shmem_barrier_all();
    shmem_free(src);
    shmem_free(dst);
    t_section("large putmem_nbi from the heap, quiet");
}

static void test_pingpong(void)
{
    const size_t n = (2u << 20) + 555;
    unsigned char *buf = shmem_malloc(n), *mine = shmem_malloc(n);
    long *flag = shmem_calloc(1, sizeof(long));
    fill(mine, n, t_me, 11);
    shmem_barrier_all();
    if (t_npes >= 2 && t_me < 2) {
        int peer = 1 - t_me;
        for (long round = 1; round <= 4; round++) {
            if ((t_me == 0) == (round % 2 == 1)) {
                shmem_putmem(buf, mine, n, peer);
                shmem_fence();
                shmem_long_p(flag, round, peer);
            } else {
                shmem_long_wait_until(flag, SHMEM_CMP_EQ, round);
                long bad = verify(buf, n, peer, 11);
                CHECK(!bad, "round %ld: %ld bytes differ", round, bad);
            }
        }
    }
    shmem_barrier_all();
    shmem_free(buf);
    shmem_free(mine);
    shmem_free(flag);
    t_section("large putmem while the target waits");
}

static void test_all_to_all(void)
{
    const size_t n = (512u << 10) + 3;
    unsigned char *src = shmem_malloc(n), *dst = shmem_calloc((size_t)t_npes * n, 1);
    fill(src, n, t_me, 5);
    shmem_barrier_all();
    for (int k = 1; k <= t_npes; k++) {
        int pe = (t_me + k) % t_npes;
        shmem_putmem_nbi(dst + (size_t)t_me * n, src, n, pe);
    }
    shmem_barrier_all(); /* completes the puts */
    long bad = 0;
    for (int pe = 0; pe < t_npes; pe++)
        bad += verify(dst + (size_t)pe * n, n, pe, 5);
    CHECK(!bad, "%ld bytes differ", bad);
    shmem_barrier_all();
    shmem_free(src);
    shmem_free(dst);
    t_section("every PE putmem_nbi to every PE");
}

static void test_gets(void)
{
    const size_t n = (1u << 20) + 9;
    int right = (t_me + 1) % t_npes;
    unsigned char *h = shmem_malloc(n), *got = malloc(n);
    fill(h, n, t_me, 3);
    shmem_barrier_all();
    shmem_getmem(got, h, n, right);
    CHECK(!verify(got, n, right, 3), "getmem differs");
    memset(got, 0, n);
    shmem_getmem_nbi(got, h, n, right);
    shmem_quiet();
    CHECK(!verify(got, n, right, 3), "getmem_nbi differs");
    shmem_barrier_all();
    shmem_free(h);
    free(got);
    t_section("large getmem");
}

int main(void)
{
    t_init();
    test_nbi_puts();
    test_pingpong();
    test_all_to_all();
    test_gets();
    return t_finish();
}
