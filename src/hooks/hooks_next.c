/* The next definitions of the hooked functions (dlsym RTLD_NEXT, so other
 * hook libraries still see the calls), resolved by the constructor or by
 * the first hooked call, whichever comes first. dlsym itself may allocate
 * and free: a hooked call that re-enters while resolution is in progress
 * falls back to the raw system call (hooks_mmap.c) or leaks (hooks_malloc.c). */
#include "hooks/hooks_internal.h"

#include <dlfcn.h>

void *(*hooks_next_mmap)(void *, size_t, int, int, int, off_t);
int (*hooks_next_munmap)(void *, size_t);
void *(*hooks_next_mremap)(void *, size_t, size_t, int, ...);
int (*hooks_next_madvise)(void *, size_t, int);
int (*hooks_next_brk)(void *);
void *(*hooks_next_sbrk)(intptr_t);
int (*hooks_next_shmdt)(const void *);
void *(*hooks_next_shmat)(int, const void *, int);
void (*hooks_next_free)(void *);
void *(*hooks_next_realloc)(void *, size_t);
int (*hooks_next_malloc_trim)(size_t);
bool hooks_glibc_malloc;
_Atomic int hooks_resolved;

extern void __libc_free(void *);

void hooks_resolve(void)
{
    int want = 0;
    if (!atomic_compare_exchange_strong(&hooks_resolved, &want, 1))
        return; /* done, or another call (maybe ours, re-entered from dlsym) is at it */
    /* free first: dlsym frees its error strings, and they may come from another malloc */
    void (*f)(void *) = dlsym(RTLD_NEXT, "free");
    hooks_next_free = f;
    hooks_glibc_malloc = f == __libc_free;
    hooks_next_realloc = dlsym(RTLD_NEXT, "realloc");
    hooks_next_mmap = dlsym(RTLD_NEXT, "mmap");
    hooks_next_munmap = dlsym(RTLD_NEXT, "munmap");
    hooks_next_mremap = dlsym(RTLD_NEXT, "mremap");
    hooks_next_madvise = dlsym(RTLD_NEXT, "madvise");
    hooks_next_brk = dlsym(RTLD_NEXT, "brk");
    hooks_next_sbrk = dlsym(RTLD_NEXT, "sbrk");
    hooks_next_shmdt = dlsym(RTLD_NEXT, "shmdt");
    hooks_next_shmat = dlsym(RTLD_NEXT, "shmat");
    hooks_next_malloc_trim = dlsym(RTLD_NEXT, "malloc_trim");
    atomic_store(&hooks_resolved, 2);
}

__attribute__((constructor)) static void hooks_ctor(void) { hooks_resolve(); }
