/* Symmetric heap routines. malloc, calloc, align and malloc_with_hints end
 * with a barrier, free starts with one, realloc has both (each quiets the
 * default context); size 0 gives NULL with no barrier (1.5). The allocator
 * is deterministic (alloc.c), so the same calls give the same offsets on
 * every PE; calloc zeroes the block before its barrier, so a PE may write
 * into another's block as soon as its own call returned. A request larger
 * than the free heap gives NULL on every PE (and the heap stays usable).
 * With SHMEM_DEBUG the arguments are compared across PEs first. */
#include "shmem/shmem_internal.h"

#include <stdio.h>
#include <stdlib.h>

#define CALL lshm_name(__func__)

lshm_alloc_t *lshm_heap_alloc;

static void barrier(const char *call)
{
    lshm_quiet();
    lshm_set_t s = lshm_team_set(&lshm.world);
    lshm_set_sync(call, &s);
}

/* SHMEM_DEBUG: every PE must pass the same value. */
static void agree(const char *call, const char *what, uint64_t v)
{
    if (!lshm.debug)
        return;
    lshm_set_t s = lshm_team_set(&lshm.world);
    uint64_t *all = malloc((size_t)lshm.npes * sizeof *all);
    if (!all)
        lshm_fatal(call, "out of memory");
    lshm_set_allgather64(call, &s, v, all);
    for (int pe = 0; pe < lshm.npes; pe++)
        if (all[pe] != v)
            lshm_fatal(call, "collective call with different arguments: %s is %llu here and %llu on PE %d "
                       "(every PE must pass the same)", what, (unsigned long long)v, (unsigned long long)all[pe], pe);
    free(all);
}

static char *heap_base(void) { return lshm.reg[LSHM_HEAP].base; }

static void *alloc_block(const char *call, size_t size, size_t align, bool zero)
{
    lshm_require_init(call);
    agree(call, "size", size);
    agree(call, "alignment", align);
    if (!size)
        return NULL;
    void *p = NULL;
    if (!align || (align & (align - 1)) || align > lshm.heap_align) {
        /* the same answer on every PE: NULL */
        if (lshm.debug && lshm.me == 0)
            fprintf(stderr, "locus shmem: %s: alignment %zu is not a power of two of at most %llu "
                    "(the symmetric heap's base alignment): returning NULL\n", call, align,
                    (unsigned long long)lshm.heap_align);
    } else {
        uint64_t off = lshm_alloc(lshm_heap_alloc, size, align);
        if (off != UINT64_MAX) {
            p = heap_base() + off;
            if (zero)
                memset(p, 0, size);
        } else if (lshm.debug && lshm.me == 0) {
            char a[32], b[32];
            fprintf(stderr, "locus shmem: %s(%zu): the symmetric heap has %s of %s free (SHMEM_SYMMETRIC_SIZE "
                    "sets its size): returning NULL\n", call, size,
                    locus_format_size(lshm.reg[LSHM_HEAP].len - lshm.reserve - lshm_alloc_in_use(lshm_heap_alloc), a, sizeof a),
                    locus_format_size(lshm.reg[LSHM_HEAP].len - lshm.reserve, b, sizeof b));
        }
    }
    barrier(call);
    return p;
}

LSHM_DEF(void *, shmem_malloc, (size_t size)) { return alloc_block(CALL, size, 64, false); }
LSHM_DEF(void *, shmem_malloc_with_hints, (size_t size, long hints))
{
    (void)hints; /* hints may be ignored: every block suits atomics and signals */
    return alloc_block(CALL, size, 64, false);
}
LSHM_DEF(void *, shmem_calloc, (size_t count, size_t size))
{
    if (count && size > SIZE_MAX / count) {
        lshm_require_init(CALL);
        barrier(CALL);
        return NULL;
    }
    return alloc_block(CALL, count * size, 64, true);
}
LSHM_DEF(void *, shmem_align, (size_t alignment, size_t size)) { return alloc_block(CALL, size, alignment, false); }

static uint64_t offset_of(const char *call, const void *ptr)
{
    uintptr_t a = (uintptr_t)ptr, b = (uintptr_t)heap_base();
    uint64_t off = a - b;
    if (a < b || off >= lshm.reg[LSHM_HEAP].len || !lshm_alloc_size(lshm_heap_alloc, off))
        lshm_fatal(call, "%p is not a block of the symmetric heap (not returned by shmem_malloc/calloc/align/realloc, "
                   "or already freed)", ptr);
    return off;
}

LSHM_DEF(void, shmem_free, (void *ptr))
{
    const char *call = CALL;
    lshm_require_init(call);
    if (!ptr)
        return;
    uint64_t off = offset_of(call, ptr);
    agree(call, "the block's offset", off);
    barrier(call);
    lshm_alloc_free(lshm_heap_alloc, off);
}

LSHM_DEF(void *, shmem_realloc, (void *ptr, size_t size))
{
    const char *call = CALL;
    lshm_require_init(call);
    if (!ptr)
        return alloc_block(call, size, 64, false);
    uint64_t off = offset_of(call, ptr);
    agree(call, "the block's offset", off);
    agree(call, "size", size);
    barrier(call); /* nobody uses the old block any more */
    if (!size) {
        lshm_alloc_free(lshm_heap_alloc, off);
        return NULL;
    }
    void *out = ptr;
    uint64_t old = lshm_alloc_size(lshm_heap_alloc, off);
    if (!lshm_alloc_resize(lshm_heap_alloc, off, size)) {
        uint64_t noff = lshm_alloc(lshm_heap_alloc, size, 64);
        if (noff == UINT64_MAX) {
            out = NULL; /* the old block stays as it was */
        } else {
            out = heap_base() + noff;
            memcpy(out, ptr, old < size ? old : size);
            lshm_alloc_free(lshm_heap_alloc, off);
        }
    }
    barrier(call);
    return out;
}

/* Deprecated names. */
LSHM_DEF(void *, shmalloc, (size_t size)) { return alloc_block(CALL, size, 64, false); }
LSHM_DEF(void *, shmemalign, (size_t alignment, size_t size)) { return alloc_block(CALL, size, alignment, false); }
LSHM_DEF(void, shfree, (void *ptr)) { pshmem_free(ptr); }
LSHM_DEF(void *, shrealloc, (void *ptr, size_t size)) { return pshmem_realloc(ptr, size); }
