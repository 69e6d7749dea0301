/* Memory hooks: liblocus defines munmap, mremap, madvise, mmap/mmap64,
 * brk, sbrk, shmdt, shmat and (with glibc malloc) free, realloc,
 * reallocarray and malloc_trim. Each calls the next definition
 * (dlsym RTLD_NEXT, so other hook libraries still see the call; a raw system
 * call before that is resolved) and then reports the pages it unmapped,
 * replaced or emptied to every live cache.
 *
 * Why free/realloc: glibc unmaps mmapped chunks and trims the main heap with
 * internal calls that no symbol interposition sees. The chunk header says
 * whether a chunk is mmapped (bit 1 of its size word) and where its mapping
 * starts; a drop of __curbrk across the call shows a brk trim. Both are
 * glibc's layout, so they are used only when the next `free` is glibc's own
 * (__libc_free). malloc_trim also empties free pages inside arenas with an
 * internal madvise: it invalidates every dynamic region. */
#include "reg/reg_internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <unistd.h>

#define HOOK __attribute__((visibility("default")))
#define MAX_CACHES 16

static _Atomic(locus_reg_cache_t *) caches[MAX_CACHES];
static _Atomic int ncaches;
static _Atomic int inflight;

int reg_hooks_add(locus_reg_cache_t *c)
{
    for (int i = 0; i < MAX_CACHES; i++) {
        locus_reg_cache_t *none = NULL;
        if (atomic_compare_exchange_strong(&caches[i], &none, c)) {
            atomic_fetch_add(&ncaches, 1);
            return i;
        }
    }
    /* more caches than slots: this one relies on explicit invalidation */
    lc_note(&c->notes, "more than %d caches: memory hooks do not invalidate this one", MAX_CACHES);
    return -1;
}

void reg_hooks_remove(locus_reg_cache_t *c)
{
    if (c->slot < 0)
        return;
    atomic_store(&caches[c->slot], NULL);
    atomic_fetch_sub(&ncaches, 1);
    while (atomic_load(&inflight))
        sched_yield();
}

static void for_each_cache(uint64_t s, uint64_t e)
{
    atomic_fetch_add(&inflight, 1);
    for (int i = 0; i < MAX_CACHES; i++) {
        locus_reg_cache_t *c = atomic_load(&caches[i]);
        if (c)
            reg_invalidate_from_hook(c, s, e);
    }
    atomic_fetch_sub(&inflight, 1);
}

void reg_hooks_invalidate_all_caches(uint64_t s, uint64_t e) { for_each_cache(s, e); }

static inline void report(const void *addr, size_t len)
{
    if (!atomic_load_explicit(&ncaches, memory_order_relaxed) || !len)
        return;
    uint64_t s = reg_page_down((uintptr_t)addr), e = (uintptr_t)addr + len;
    e = e < (uintptr_t)addr ? UINT64_MAX - 4095 : reg_page_up(e);
    for_each_cache(s, e);
}

/* ---------- the next definitions ---------- */

static void *(*next_mmap)(void *, size_t, int, int, int, off_t);
static int (*next_munmap)(void *, size_t);
static void *(*next_mremap)(void *, size_t, size_t, int, ...);
static int (*next_madvise)(void *, size_t, int);
static int (*next_brk)(void *);
static void *(*next_sbrk)(intptr_t);
static int (*next_shmdt)(const void *);
static void *(*next_shmat)(int, const void *, int);
static void (*next_free)(void *);
static void *(*next_realloc)(void *, size_t);
static int (*next_malloc_trim)(size_t);
static _Atomic int resolved;   /* 0 no, 1 in progress, 2 done */
static bool glibc_malloc;

extern void __libc_free(void *);
extern void *__libc_realloc(void *, size_t);
extern void *__curbrk;

static void resolve(void)
{
    int want = 0;
    if (!atomic_compare_exchange_strong(&resolved, &want, 1))
        return; /* done, or another call (maybe ours, re-entered from dlsym) is at it */
    /* free first: dlsym frees its error strings, and they may come from another malloc */
    void (*f)(void *) = dlsym(RTLD_NEXT, "free");
    next_free = f;
    glibc_malloc = f == __libc_free;
    next_realloc = dlsym(RTLD_NEXT, "realloc");
    next_mmap = dlsym(RTLD_NEXT, "mmap");
    next_munmap = dlsym(RTLD_NEXT, "munmap");
    next_mremap = dlsym(RTLD_NEXT, "mremap");
    next_madvise = dlsym(RTLD_NEXT, "madvise");
    next_brk = dlsym(RTLD_NEXT, "brk");
    next_sbrk = dlsym(RTLD_NEXT, "sbrk");
    next_shmdt = dlsym(RTLD_NEXT, "shmdt");
    next_shmat = dlsym(RTLD_NEXT, "shmat");
    next_malloc_trim = dlsym(RTLD_NEXT, "malloc_trim");
    atomic_store(&resolved, 2);
}

static inline bool ready(void)
{
    if (__builtin_expect(atomic_load_explicit(&resolved, memory_order_acquire) == 2, 1))
        return true;
    resolve();
    return atomic_load_explicit(&resolved, memory_order_acquire) == 2;
}

__attribute__((constructor)) static void reg_hooks_ctor(void) { resolve(); }

/* ---------- mapping calls ---------- */

HOOK void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    void *p = ready() && next_mmap ? next_mmap(addr, len, prot, flags, fd, off)
                                   : (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
    if (p != MAP_FAILED && (flags & MAP_FIXED))
        report(p, len);
    return p;
}

HOOK void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    return mmap(addr, len, prot, flags, fd, off);
}

HOOK int munmap(void *addr, size_t len)
{
    int rc = ready() && next_munmap ? next_munmap(addr, len) : (int)syscall(SYS_munmap, addr, len);
    if (rc == 0)
        report(addr, len);
    return rc;
}

HOOK void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
    void *want = NULL;
    if (flags & MREMAP_FIXED) {
        va_list ap;
        va_start(ap, flags);
        want = va_arg(ap, void *);
        va_end(ap);
    }
    void *p = ready() && next_mremap ? next_mremap(old, old_len, new_len, flags, want)
                                     : (void *)syscall(SYS_mremap, old, old_len, new_len, flags, want);
    if (p != MAP_FAILED) {
        /* moved, shrunk or left empty behind (DONTUNMAP): the old pages are gone */
        if (p != old || new_len < old_len || (flags & MREMAP_DONTUNMAP))
            report(old, old_len);
        if (p != old)
            report(p, new_len);
    }
    return p;
}

#ifndef MADV_DONTNEED_LOCKED
#define MADV_DONTNEED_LOCKED 24
#endif

HOOK int madvise(void *addr, size_t len, int advice)
{
    int rc = ready() && next_madvise ? next_madvise(addr, len, advice)
                                     : (int)syscall(SYS_madvise, addr, len, advice);
    if (rc == 0 && (advice == MADV_DONTNEED || advice == MADV_FREE || advice == MADV_REMOVE ||
                    advice == MADV_DONTNEED_LOCKED))
        report(addr, len);
    return rc;
}

HOOK int brk(void *addr)
{
    void *old = __curbrk;
    int rc = ready() && next_brk ? next_brk(addr) : -1;
    if (rc == 0 && old && (uintptr_t)addr < (uintptr_t)old)
        report(addr, (uintptr_t)old - (uintptr_t)addr);
    return rc;
}

HOOK void *sbrk(intptr_t inc)
{
    void *old = ready() && next_sbrk ? next_sbrk(inc) : (void *)-1;
    if (old != (void *)-1 && inc < 0)
        report((char *)old + inc, (size_t)-inc);
    return old;
}

/* The extent of the mapping at addr (and the VMAs right after it with the
 * same inode), from /proc/self/maps; no allocation. */
static size_t mapping_len(const void *addr)
{
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    char buf[4096], line[512];
    size_t ll = 0, total = 0;
    uint64_t want = (uintptr_t)addr, end = 0, inode = 0;
    bool found = false, stop = false;
    ssize_t n;
    while (!stop && (n = read(fd, buf, sizeof buf)) > 0) {
        for (ssize_t i = 0; i < n && !stop; i++) {
            if (buf[i] != '\n') {
                if (ll < sizeof line - 1) line[ll++] = buf[i];
                continue;
            }
            line[ll] = 0;
            ll = 0;
            char *p;
            uint64_t s = strtoull(line, &p, 16), e = strtoull(p + 1, &p, 16);
            /* perms offset dev inode */
            for (int f = 0; f < 3 && p; f++) p = strchr(p + 1, ' ');
            uint64_t ino = p ? strtoull(p + 1, NULL, 10) : 0;
            if (!found && s == want) {
                found = true; end = e; inode = ino;
            } else if (found && s == end && ino == inode) {
                end = e;
            } else if (found) {
                stop = true;
            }
        }
    }
    close(fd);
    if (found)
        total = (size_t)(end - want);
    return total;
}

HOOK int shmdt(const void *addr)
{
    size_t len = atomic_load_explicit(&ncaches, memory_order_relaxed) ? mapping_len(addr) : 0;
    int rc = ready() && next_shmdt ? next_shmdt(addr) : (int)syscall(SYS_shmdt, addr);
    if (rc == 0)
        report(addr, len);
    return rc;
}

HOOK void *shmat(int id, const void *addr, int flags)
{
    void *p = ready() && next_shmat ? next_shmat(id, addr, flags) : (void *)syscall(SYS_shmat, id, addr, flags);
    if (p != (void *)-1 && (flags & SHM_REMAP)) {
        struct shmid_ds ds;
        if (!shmctl(id, IPC_STAT, &ds))
            report(p, ds.shm_segsz);
    }
    return p;
}

/* ---------- glibc malloc ---------- */

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

HOOK void free(void *p)
{
    if (!ready() || !next_free) {
        /* Re-entered from dlsym while resolving: with no next free known yet,
         * leak the block (a dlerror string at startup) rather than hand a
         * foreign allocator's pointer to glibc. */
        void (*f)(void *) = next_free;
        if (f)
            f(p);
        return;
    }
    if (!p || !glibc_malloc || !atomic_load_explicit(&ncaches, memory_order_relaxed)) {
        next_free(p);
        return;
    }
    uint64_t s, e;
    if (mmapped_chunk(p, &s, &e)) {
        next_free(p);
        report((void *)s, e - s);
        return;
    }
    uintptr_t b0 = (uintptr_t)__curbrk;
    next_free(p);
    uintptr_t b1 = (uintptr_t)__curbrk;
    if (b1 < b0)
        report((void *)b1, b0 - b1);
}

HOOK void *realloc(void *p, size_t n)
{
    if (!ready() || !next_realloc) {
        void *(*f)(void *, size_t) = next_realloc;
        return (f ? f : __libc_realloc)(p, n);
    }
    if (!p || !glibc_malloc || !atomic_load_explicit(&ncaches, memory_order_relaxed))
        return next_realloc(p, n);
    uint64_t s = 0, e = 0;
    bool mm = mmapped_chunk(p, &s, &e);
    uintptr_t b0 = (uintptr_t)__curbrk;
    void *q = next_realloc(p, n);
    uintptr_t b1 = (uintptr_t)__curbrk;
    if (mm && (q || !n))
        report((void *)s, e - s); /* mremap may have moved or shrunk it */
    if (b1 < b0)
        report((void *)b1, b0 - b1);
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
    int rc = ready() && next_malloc_trim ? next_malloc_trim(pad) : 0;
    if (glibc_malloc && atomic_load_explicit(&ncaches, memory_order_relaxed))
        for_each_cache(0, UINT64_MAX); /* it emptied free pages anywhere in the arenas */
    return rc;
}
