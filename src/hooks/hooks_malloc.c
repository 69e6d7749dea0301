/* glibc malloc: free, realloc, reallocarray, malloc_trim.
 *
 * glibc unmaps mmapped chunks and trims the main heap with internal calls
 * that no symbol interposition sees. The chunk header says whether a chunk
 * is mmapped (bit 1 of its size word) and where its mapping starts; a drop
 * of __curbrk across the call shows a brk trim. Both are glibc's layout, so
 * they are used only when the next `free` is glibc's own (__libc_free).
 * malloc_trim also empties free pages inside arenas with an internal
 * madvise: it reports everything (end = UINT64_MAX). */
#include "hooks/hooks_internal.h"

#include <errno.h>
#include <stdlib.h>

extern void *__libc_realloc(void *, size_t);
extern void *__curbrk;

/* glibc chunk: [prev_size][size|flags][user data...]; IS_MMAPPED = 2, and
 * an mmapped chunk's mapping starts prev_size bytes before the chunk. */
static inline bool mmapped_chunk(void *p, uint64_t *s, uint64_t *e)
{
    size_t *h = (size_t *)p;
    if (!(h[-1] & 2))
        return false;
    uint64_t chunk = (uintptr_t)p - 2 * sizeof(size_t);
    *s = chunk - h[-2];
    *e = chunk + (h[-1] & ~(size_t)7);
    return true;
}

/* Nothing to learn from this block: no subscriber, not glibc's, or NULL. */
static inline bool uninteresting(void *p)
{
    return !p || !hooks_glibc_malloc || !atomic_load_explicit(&hooks_nsubs, memory_order_relaxed);
}

HOOK void free(void *p)
{
    if (!hooks_ready() || !hooks_next_free) {
        /* Re-entered from dlsym while resolving: with no next free known yet,
         * leak the block (a dlerror string at startup) rather than hand a
         * foreign allocator's pointer to glibc. */
        void (*f)(void *) = hooks_next_free;
        if (f)
            f(p);
        return;
    }
    if (uninteresting(p)) {
        hooks_next_free(p);
        return;
    }
    uint64_t s, e;
    if (mmapped_chunk(p, &s, &e)) {
        hooks_next_free(p);
        hooks_report((void *)s, e - s);
        return;
    }
    uintptr_t b0 = (uintptr_t)__curbrk;
    hooks_next_free(p);
    uintptr_t b1 = (uintptr_t)__curbrk;
    if (b1 < b0)
        hooks_report((void *)b1, b0 - b1);
}

HOOK void *realloc(void *p, size_t n)
{
    if (!hooks_ready() || !hooks_next_realloc) {
        void *(*f)(void *, size_t) = hooks_next_realloc;
        return (f ? f : __libc_realloc)(p, n);
    }
    if (uninteresting(p))
        return hooks_next_realloc(p, n);
    uint64_t s = 0, e = 0;
    bool mm = mmapped_chunk(p, &s, &e);
    uintptr_t b0 = (uintptr_t)__curbrk;
    void *q = hooks_next_realloc(p, n);
    uintptr_t b1 = (uintptr_t)__curbrk;
    if (mm && (q || !n))
        hooks_report((void *)s, e - s); /* mremap may have moved or shrunk it */
    if (b1 < b0)
        hooks_report((void *)b1, b0 - b1);
    return q;
}

HOOK void *reallocarray(void *p, size_t nmemb, size_t size)
{
    size_t n;
    if (__builtin_mul_overflow(nmemb, size, &n)) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(p, n);
}

HOOK int malloc_trim(size_t pad)
{
    int rc = hooks_ready() && hooks_next_malloc_trim ? hooks_next_malloc_trim(pad) : 0;
    if (hooks_glibc_malloc && atomic_load_explicit(&hooks_nsubs, memory_order_relaxed))
        hooks_call(0, UINT64_MAX); /* it emptied free pages anywhere in the arenas */
    return rc;
}
