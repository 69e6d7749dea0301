/* The OpenSHMEM symmetric heap: shmem_malloc/calloc/align/realloc/free (and
 * the older shmalloc/shmemalign/shrealloc/shfree) blocks are named by their
 * call site like malloc'd ones. An OpenSHMEM library that follows the
 * profiling interface (liblocus_shmem: pshmem_X with shmem_X a weak alias)
 * lets these definitions win; the real routine is the next one. A program
 * without OpenSHMEM never calls them, and one whose library is not found
 * gets a message rather than a jump through NULL. */
#include "shim.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define RW (PROT_READ | PROT_WRITE)

typedef void *(*alloc1_fn)(size_t);
typedef void *(*alloc2_fn)(size_t, size_t);
typedef void *(*hints_fn)(size_t, long);
typedef void *(*realloc_fn)(void *, size_t);
typedef void (*free_fn)(void *);

static void *next_or_die(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) { /* called, so the program links an OpenSHMEM; it did not resolve */
        static const char m[] = "locus profile: an OpenSHMEM routine the program called is not in any library\n";
        long w = syscall(SYS_write, 2, m, sizeof m - 1); /* not our own write() */
        (void)w;
        abort();
    }
    return f;
}

#define REAL(type, name)                                      \
    static type real_;                                        \
    if (!real_)                                               \
        real_ = (type)next_or_die(#name)

static void *done(void *r, size_t n)
{
    if (r && n >= S.min_alloc) {
        shim_record_alloc(r, n, LPROF_KIND_MALLOC, RW);
        if (shim_recording())
            shim_access_start();
    }
    return r;
}

#define FORWARD(expr, n)               \
    do {                               \
        if (shim_guard)                \
            return expr;               \
        shim_guard = 1;                \
        void *r_ = done((expr), (n));  \
        shim_guard = 0;                \
        return r_;                     \
    } while (0)

static void forget(void *p)
{
    if (p && !shim_guard) {
        shim_guard = 1;
        shim_record_free(p);
        shim_guard = 0;
    }
}

static void *realloc_as(realloc_fn real, void *p, size_t n)
{
    if (shim_guard)
        return real(p, n);
    forget(p);
    FORWARD(real(p, n), n);
}

SHIM_EXPORT void *shmem_malloc(size_t n)
{
    REAL(alloc1_fn, shmem_malloc);
    FORWARD(real_(n), n);
}

SHIM_EXPORT void *shmem_malloc_with_hints(size_t n, long hints)
{
    REAL(hints_fn, shmem_malloc_with_hints);
    FORWARD(real_(n, hints), n);
}

SHIM_EXPORT void *shmem_calloc(size_t a, size_t b)
{
    REAL(alloc2_fn, shmem_calloc);
    size_t n;
    FORWARD(real_(a, b), __builtin_mul_overflow(a, b, &n) ? 0 : n);
}

SHIM_EXPORT void *shmem_align(size_t al, size_t n)
{
    REAL(alloc2_fn, shmem_align);
    FORWARD(real_(al, n), n);
}

SHIM_EXPORT void *shmem_realloc(void *p, size_t n)
{
    REAL(realloc_fn, shmem_realloc);
    return realloc_as(real_, p, n);
}

SHIM_EXPORT void shmem_free(void *p)
{
    REAL(free_fn, shmem_free);
    forget(p);
    real_(p);
}

SHIM_EXPORT void *shmalloc(size_t n)
{
    REAL(alloc1_fn, shmalloc);
    FORWARD(real_(n), n);
}

SHIM_EXPORT void *shmemalign(size_t al, size_t n)
{
    REAL(alloc2_fn, shmemalign);
    FORWARD(real_(al, n), n);
}

SHIM_EXPORT void *shrealloc(void *p, size_t n)
{
    REAL(realloc_fn, shrealloc);
    return realloc_as(real_, p, n);
}

SHIM_EXPORT void shfree(void *p)
{
    REAL(free_fn, shfree);
    forget(p);
    real_(p);
}
