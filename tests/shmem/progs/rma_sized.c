/* Sized and byte RMA: put/get 8, 16, 32, 64, 128 and putmem/getmem, with
 * odd lengths and offsets, sources and destinations on the heap, in globals,
 * on the stack and in private malloc memory, sizes from 1 byte to 4 MiB. */
#include "tcommon.h"

#define G 4096
static uint64_t g_buf[G];

static void fill(unsigned char *p, size_t n, int pe, size_t salt)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)t_pat(pe, i + salt);
}
static size_t diff(const unsigned char *p, size_t n, int pe, size_t salt)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += p[i] != (unsigned char)t_pat(pe, i + salt);
    return bad;
}

#define SIZED(BITS)                                                                         \
    static void test_##BITS(void)                                                           \
    {                                                                                       \
        int me = t_me, npes = t_npes, right = (me + 1) % npes, left = (me + npes - 1) % npes; \
        const size_t esz = BITS / 8, n = 999;                                               \
        unsigned char *h = shmem_malloc(n * esz), *src = malloc(n * esz), *dst = malloc(n * esz); \
        fill(src, n * esz, me, BITS);                                                       \
        shmem_barrier_all();                                                                \
        shmem_put##BITS(h, src, n, right);                                                  \
        shmem_barrier_all();                                                                \
        CHECK(diff(h, n * esz, left, BITS) == 0, "put%d", BITS);                            \
        memset(dst, 0, n * esz);                                                            \
        shmem_get##BITS(dst, h, n, right);                                                  \
        CHECK(diff(dst, n * esz, me, BITS) == 0, "get%d", BITS);                            \
        shmem_barrier_all();                                                                \
        /* symmetric (global) destination, heap source */                                  \
        if (n * esz <= sizeof g_buf) {                                                      \
            shmem_put##BITS(g_buf, h, n, left);                                             \
            shmem_barrier_all();                                                            \
            CHECK(diff((unsigned char *)g_buf, n * esz, me, BITS) == 0, "put%d global", BITS); \
        }                                                                                   \
        shmem_free(h);                                                                      \
        free(src);                                                                          \
        free(dst);                                                                          \
        t_section("put/get%d", BITS);                                                       \
    }
SIZED(8)
SIZED(16)
SIZED(32)
SIZED(64)
SIZED(128)

static void test_mem(void)
{
    int me = t_me, npes = t_npes, right = (me + 1) % npes, left = (me + npes - 1) % npes;
    size_t max = (size_t)4 << 20;
    unsigned char *h = shmem_malloc(max + 64);
    unsigned char *src = malloc(max + 64), *dst = malloc(max + 64);
    static const size_t sizes[] = {1, 2, 3, 7, 8, 9, 63, 64, 65, 255, 4095, 4096, 4097, 65536 + 13,
                                   (1 << 20) + 1, 4 << 20};
    int nsz = (int)(sizeof sizes / sizeof sizes[0]);
    for (int s = 0; s < nsz; s++) {
        size_t len = sizes[s], off = (size_t)s % 13; /* odd offsets: byte interfaces need no alignment */
        fill(src + off, len, me, len);
        memset(h, 0, max + 64);
        shmem_barrier_all();
        shmem_putmem(h + off, src + off, len, right);
        shmem_barrier_all();
        CHECK(diff(h + off, len, left, len) == 0, "putmem %zu at +%zu", len, off);
        CHECK(h[off + len] == 0 && (off == 0 || h[off - 1] == 0), "putmem %zu wrote outside", len);
        memset(dst, 0, max + 64);
        shmem_getmem(dst + off, h + off, len, right);
        CHECK(diff(dst + off, len, me, len) == 0, "getmem %zu at +%zu", len, off);
        CHECK(dst[off + len] == 0, "getmem %zu wrote outside", len);
        shmem_barrier_all();
    }
    /* stack buffer source and destination */
    unsigned char st[1000];
    fill(st, sizeof st, me, 77);
    shmem_putmem(h, st, sizeof st, right);
    shmem_barrier_all();
    memset(st, 0, sizeof st);
    shmem_getmem(st, h, sizeof st, me);
    CHECK(diff(st, sizeof st, left, 77) == 0, "stack buffers");
    /* to self */
    fill(src, 5000, me, 5);
    shmem_putmem(h + 100, src, 5000, me);
    shmem_quiet();
    CHECK(diff(h + 100, 5000, me, 5) == 0, "putmem to self");
    /* zero length: no-op (with NULL pointers: rma15.c) */
    h[0] = 42;
    shmem_barrier_all();
    shmem_putmem(h, src, 0, right);
    shmem_getmem(dst, h, 0, right);
    shmem_barrier_all();
    CHECK(h[0] == 42, "zero-length putmem wrote");
    shmem_free(h);
    free(src);
    free(dst);
    t_section("putmem/getmem 1 B - 4 MiB");
}

int main(void)
{
    t_init();
    test_8();
    test_16();
    test_32();
    test_64();
    test_128();
    test_mem();
    return t_finish();
}
