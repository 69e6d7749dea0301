/* Symmetric memory, spec semantics other implementations get wrong or lack
 * (checked against the spec only): calloc'd blocks are zero and usable by
 * other PEs as soon as this PE's call returned (Open MPI 4.1.4 zeroes after
 * its barrier and wipes such writes); size 0 gives NULL (1.5) for malloc,
 * calloc, align and malloc_with_hints; realloc(p, 0) frees; the hints. */
#include "tcommon.h"

int main(void)
{
    t_init();
    int me = t_me, npes = t_npes, right = (me + 1) % npes, left = (me + npes - 1) % npes;

    for (int round = 0; round < 20; round++) {
        long *c = shmem_calloc(4096, sizeof(long));
        shmem_long_p(&c[round], 1000 + me, right); /* right after my calloc returned */
        shmem_barrier_all();
        int bad = 0;
        for (int i = 0; i < 4096; i++)
            bad += c[i] != (i == round ? 1000 + left : 0);
        CHECK(!bad, "calloc round %d: %d values wrong", round, bad);
        shmem_free(c);
    }
    t_section("calloc: zero and remotely usable at return");

    CHECK(shmem_malloc(0) == NULL, "malloc(0)");
    CHECK(shmem_calloc(0, 8) == NULL, "calloc(0, 8)");
    CHECK(shmem_calloc(8, 0) == NULL, "calloc(8, 0)");
    CHECK(shmem_align(64, 0) == NULL, "align(64, 0)");
    CHECK(shmem_malloc_with_hints(0, 0) == NULL, "malloc_with_hints(0)");
    t_section("size 0 gives NULL");

    long *p = shmem_malloc(100 * sizeof(long));
    p = shmem_realloc(p, 0);
    CHECK(p == NULL, "realloc(p, 0)");
    t_section("realloc(p, 0) frees");

    static const long hints[4] = {0, SHMEM_MALLOC_ATOMICS_REMOTE, SHMEM_MALLOC_SIGNAL_REMOTE,
                                  SHMEM_MALLOC_ATOMICS_REMOTE | SHMEM_MALLOC_SIGNAL_REMOTE};
    for (int h = 0; h < 4; h++) {
        uint64_t *w = shmem_malloc_with_hints(64 * sizeof(uint64_t), hints[h]);
        CHECK(w != NULL, "malloc_with_hints(%ld)", hints[h]);
        w[0] = 0;
        shmem_barrier_all();
        for (int pe = 0; pe < npes; pe++)
            shmem_uint64_atomic_add(&w[0], 1, pe);
        shmem_barrier_all();
        CHECK(w[0] == (uint64_t)npes, "atomics on a hinted block: %llu", (unsigned long long)w[0]);
        shmem_free(w);
    }
    t_section("malloc_with_hints");

    /* a big calloc, then a block bigger than what is left: NULL everywhere */
    char *big = shmem_calloc(1, 32 << 20);
    CHECK(big != NULL, "calloc 32 MiB");
    void *none = shmem_malloc((size_t)1 << 48);
    CHECK(none == NULL, "malloc(256 TiB)");
    shmem_free(big);
    t_section("heap exhausted: NULL");
    return t_finish();
}
