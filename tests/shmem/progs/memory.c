/* Symmetric heap: malloc, calloc, align, realloc, free; blocks are
 * remotely accessible at once; the same sequence of calls on every PE gives
 * corresponding blocks; a request beyond the heap gives NULL everywhere. */
#include "tcommon.h"

#define NBLK 64

static int overlaps(char *a, size_t la, char *b, size_t lb) { return a < b + lb && b < a + la; }

int main(void)
{
    t_init();
    int me = t_me, npes = t_npes, right = (me + 1) % npes, left = (me + npes - 1) % npes;

    /* Blocks of varied sizes: distinct, non-overlapping, usable remotely. */
    char *blk[NBLK];
    size_t len[NBLK];
    srand(12345);
    for (int i = 0; i < NBLK; i++) {
        len[i] = 1 + (size_t)(rand() % 5000);
        blk[i] = shmem_malloc(len[i]);
        CHECK(blk[i] != NULL, "malloc(%zu) NULL", len[i]);
        CHECK(((uintptr_t)blk[i] % 8) == 0, "malloc(%zu) = %p not aligned for any use", len[i], (void *)blk[i]);
    }
    for (int i = 0; i < NBLK; i++)
        for (int j = i + 1; j < NBLK; j++)
            CHECK(!overlaps(blk[i], len[i], blk[j], len[j]), "blocks %d and %d overlap", i, j);
    for (int i = 0; i < NBLK; i++) {
        char pat[5000];
        for (size_t k = 0; k < len[i]; k++)
            pat[k] = (char)t_pat(me, k + (uint64_t)i * 7919);
        shmem_putmem(blk[i], pat, len[i], right);
    }
    shmem_barrier_all();
    for (int i = 0; i < NBLK; i++) {
        int bad = 0;
        for (size_t k = 0; k < len[i]; k++)
            bad += blk[i][k] != (char)t_pat(left, k + (uint64_t)i * 7919);
        CHECK(!bad, "block %d: %d bytes differ", i, bad);
    }
    t_section("malloc: %d blocks, remote access", NBLK);

    /* Free every other block, allocate again: still symmetric and usable. */
    for (int i = 0; i < NBLK; i += 2)
        shmem_free(blk[i]);
    for (int i = 0; i < NBLK; i += 2) {
        len[i] = 1 + (size_t)(rand() % 3000);
        blk[i] = shmem_malloc(len[i]);
        CHECK(blk[i] != NULL, "re-malloc(%zu) NULL", len[i]);
    }
    for (int i = 0; i < NBLK; i++)
        for (int j = i + 1; j < NBLK; j++)
            CHECK(!overlaps(blk[i], len[i], blk[j], len[j]), "after reuse: blocks %d and %d overlap", i, j);
    for (int i = 0; i < NBLK; i++)
        shmem_char_p(&blk[i][len[i] - 1], (char)(i + me), right);
    shmem_barrier_all();
    for (int i = 0; i < NBLK; i++)
        CHECK(blk[i][len[i] - 1] == (char)(i + left), "block %d last byte", i);
    for (int i = 0; i < NBLK; i++)
        shmem_free(blk[i]);
    t_section("free and reuse");

    /* calloc: zeroed, even where an earlier block left data. */
    long *c = shmem_calloc(1000, sizeof(long));
    CHECK(c != NULL, "calloc NULL");
    int nz = 0;
    for (int i = 0; i < 1000; i++)
        nz += c[i] != 0;
    CHECK(nz == 0, "calloc: %d nonzero", nz);
    shmem_barrier_all(); /* everyone checked before anyone writes */
    shmem_long_p(&c[999], me, right);
    shmem_barrier_all();
    CHECK(c[999] == left, "calloc block remote");
    shmem_free(c);
    t_section("calloc");

    /* align: powers of two up to 16 MiB (the heaps here are 32 MiB or more),
     * the address aligned and not only its offset in the heap (SOS
     * shmemalign found 4 MiB blocks 2 MiB-aligned). */
    for (size_t a = 8; a <= ((size_t)16 << 20); a *= 2) {
        char *p = shmem_align(a, 100);
        CHECK(p != NULL && (uintptr_t)p % a == 0, "align(%zu) = %p", a, (void *)p);
        if (p) {
            shmem_char_p(p + 99, (char)me, right);
            shmem_barrier_all();
            CHECK(p[99] == (char)left, "aligned block remote");
        }
        shmem_free(p);
    }
    t_section("align");

    /* realloc: contents kept up to the smaller size, block usable remotely. */
    int *r = shmem_malloc(100 * sizeof(int));
    for (int i = 0; i < 100; i++)
        r[i] = me * 1000 + i;
    shmem_barrier_all();
    r = shmem_realloc(r, 100000 * sizeof(int));
    CHECK(r != NULL, "realloc grow NULL");
    int bad = 0;
    for (int i = 0; i < 100; i++)
        bad += r[i] != me * 1000 + i;
    CHECK(!bad, "realloc grow lost %d values", bad);
    shmem_int_p(&r[99999], me, right);
    shmem_barrier_all();
    CHECK(r[99999] == left, "grown block remote");
    r = shmem_realloc(r, 50 * sizeof(int));
    CHECK(r != NULL, "realloc shrink NULL");
    bad = 0;
    for (int i = 0; i < 50; i++)
        bad += r[i] != me * 1000 + i;
    CHECK(!bad, "realloc shrink lost %d values", bad);
    shmem_free(r);
    int *n = shmem_realloc(NULL, 10 * sizeof(int));
    CHECK(n != NULL, "realloc(NULL) NULL");
    shmem_int_p(&n[9], me, right);
    shmem_barrier_all();
    CHECK(n[9] == left, "realloc(NULL) block remote");
    shmem_free(n);
    t_section("realloc");

    shmem_free(NULL);
    t_section("free(NULL)");

    /* Bigger than any heap: NULL on every PE (and the heap still works). */
    void *huge = shmem_malloc((size_t)1 << 50);
    CHECK(huge == NULL, "malloc(1 PiB) = %p", huge);
    long *after = shmem_malloc(64);
    CHECK(after != NULL, "malloc after a failed one");
    shmem_free(after);
    t_section("malloc beyond the heap");

    /* 16 MiB block, written remotely end to end. */
    size_t big = (size_t)16 << 20;
    char *b = shmem_malloc(big);
    CHECK(b != NULL, "malloc 16 MiB");
    if (b) {
        char *src = malloc(big);
        for (size_t k = 0; k < big; k += 4096)
            src[k] = (char)(k / 4096 + me);
        memset(src, me + 1, 1);
        shmem_putmem(b, src, big, right);
        shmem_barrier_all();
        bad = b[0] != (char)(left + 1);
        for (size_t k = 4096; k < big; k += 4096)
            bad += b[k] != (char)(k / 4096 + left);
        CHECK(!bad, "16 MiB block: %d pages differ", bad);
        free(src);
    }
    shmem_free(b);
    t_section("16 MiB block");
    return t_finish();
}
