/* Internals of liblocus_hooks: the next definitions of the hooked functions,
 * and the report to subscribers. Nothing here is exported (hooks.map). */
#ifndef LOCUS_HOOKS_INTERNAL_H
#define LOCUS_HOOKS_INTERNAL_H

#include "hooks/hooks.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* An interposed libc name: the only symbols besides locus_hooks_* that the
 * library exports. */
#define HOOK __attribute__((visibility("default")))

/* hooks_next.c: the definitions after ours (dlsym RTLD_NEXT), resolved once. */
extern void *(*hooks_next_mmap)(void *, size_t, int, int, int, off_t);
extern int (*hooks_next_munmap)(void *, size_t);
extern void *(*hooks_next_mremap)(void *, size_t, size_t, int, ...);
extern int (*hooks_next_madvise)(void *, size_t, int);
extern int (*hooks_next_brk)(void *);
extern void *(*hooks_next_sbrk)(intptr_t);
extern int (*hooks_next_shmdt)(const void *);
extern void *(*hooks_next_shmat)(int, const void *, int);
extern void (*hooks_next_free)(void *);
extern void *(*hooks_next_realloc)(void *, size_t);
extern int (*hooks_next_malloc_trim)(size_t);
extern bool hooks_glibc_malloc;       /* the next free is glibc's own (__libc_free) */
extern _Atomic int hooks_resolved;    /* 0 no, 1 in progress, 2 done */
void hooks_resolve(void);

/* The next definitions are known (resolving them now if nobody is at it). */
static inline bool hooks_ready(void)
{
    if (__builtin_expect(atomic_load_explicit(&hooks_resolved, memory_order_acquire) == 2, 1))
        return true;
    hooks_resolve();
    return atomic_load_explicit(&hooks_resolved, memory_order_acquire) == 2;
}

/* hooks_mmap.c: our munmap's own address (not the process's first munmap). */
int hooks_munmap(void *addr, size_t len);

/* hooks_subscribe.c */
extern _Atomic int hooks_nsubs;       /* subscribers now: 0 = report nothing, fast */
void hooks_call(uint64_t s, uint64_t e);

/* Tell the subscribers that [addr, addr+len) went (rounded out to pages). */
static inline void hooks_report(const void *addr, size_t len)
{
    if (!atomic_load_explicit(&hooks_nsubs, memory_order_relaxed) || !len)
        return;
    uint64_t s = (uintptr_t)addr & ~4095ull, e = (uintptr_t)addr + len;
    e = e < (uintptr_t)addr ? UINT64_MAX - 4095 : (e + 4095) & ~4095ull;
    hooks_call(s, e);
}

#endif
