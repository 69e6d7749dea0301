/* The mapping calls: munmap, mremap, madvise (DONTNEED/FREE/REMOVE/
 * DONTNEED_LOCKED), mmap/mmap64 (MAP_FIXED), brk/sbrk (shrink), shmdt and
 * shmat (SHM_REMAP). Each calls the next definition (a raw system call
 * while that is being resolved) and then reports the pages it unmapped,
 * replaced or emptied. */
#include "hooks/hooks_internal.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <unistd.h>

extern void *__curbrk;

HOOK void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    void *p = hooks_ready() && hooks_next_mmap ? hooks_next_mmap(addr, len, prot, flags, fd, off)
                                               : (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
    if (p != MAP_FAILED && (flags & MAP_FIXED))
        hooks_report(p, len);
    return p;
}

HOOK void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    return mmap(addr, len, prot, flags, fd, off);
}

/* Our munmap; `munmap` is its exported name (the address of `munmap` seen
 * from here may be another library's: hooks_subscribe.c compares). */
int hooks_munmap(void *addr, size_t len)
{
    int rc = hooks_ready() && hooks_next_munmap ? hooks_next_munmap(addr, len) : (int)syscall(SYS_munmap, addr, len);
    if (rc == 0)
        hooks_report(addr, len);
    return rc;
}
HOOK int munmap(void *addr, size_t len) __attribute__((alias("hooks_munmap")));

HOOK void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
    void *want = NULL;
    if (flags & MREMAP_FIXED) {
        va_list ap;
        va_start(ap, flags);
        want = va_arg(ap, void *);
        va_end(ap);
    }
    void *p = hooks_ready() && hooks_next_mremap ? hooks_next_mremap(old, old_len, new_len, flags, want)
                                                 : (void *)syscall(SYS_mremap, old, old_len, new_len, flags, want);
    if (p != MAP_FAILED) {
        /* moved, shrunk or left empty behind (DONTUNMAP): the old pages are gone */
        if (p != old || new_len < old_len || (flags & MREMAP_DONTUNMAP))
            hooks_report(old, old_len);
        if (p != old)
            hooks_report(p, new_len);
    }
    return p;
}

#ifndef MADV_DONTNEED_LOCKED
#define MADV_DONTNEED_LOCKED 24
#endif

HOOK int madvise(void *addr, size_t len, int advice)
{
    int rc = hooks_ready() && hooks_next_madvise ? hooks_next_madvise(addr, len, advice)
                                                 : (int)syscall(SYS_madvise, addr, len, advice);
    if (rc == 0 && (advice == MADV_DONTNEED || advice == MADV_FREE || advice == MADV_REMOVE ||
                    advice == MADV_DONTNEED_LOCKED))
        hooks_report(addr, len);
    return rc;
}

HOOK int brk(void *addr)
{
    void *old = __curbrk;
    int rc = hooks_ready() && hooks_next_brk ? hooks_next_brk(addr) : -1;
    if (rc == 0 && old && (uintptr_t)addr < (uintptr_t)old)
        hooks_report(addr, (uintptr_t)old - (uintptr_t)addr);
    return rc;
}

HOOK void *sbrk(intptr_t inc)
{
    void *old = hooks_ready() && hooks_next_sbrk ? hooks_next_sbrk(inc) : (void *)-1;
    if (old != (void *)-1 && inc < 0)
        hooks_report((char *)old + inc, (size_t)-inc);
    return old;
}

/* One /proc/self/maps line: "start-end perms offset dev inode path". */
static void maps_line(const char *line, uint64_t *s, uint64_t *e, uint64_t *ino)
{
    char *p;
    *s = strtoull(line, &p, 16);
    *e = strtoull(p + 1, &p, 16);
    for (int f = 0; f < 3 && p; f++)
        p = strchr(p + 1, ' ');
    *ino = p ? strtoull(p + 1, NULL, 10) : 0;
}

/* The extent of the mapping at addr (and the VMAs right after it with the
 * same inode), from /proc/self/maps; no allocation (we may be inside malloc). */
static size_t mapping_len(const void *addr)
{
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    char buf[4096], line[512];
    size_t ll = 0;
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
            uint64_t s, e, ino;
            maps_line(line, &s, &e, &ino);
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
    return found ? (size_t)(end - want) : 0;
}

HOOK int shmdt(const void *addr)
{
    size_t len = atomic_load_explicit(&hooks_nsubs, memory_order_relaxed) ? mapping_len(addr) : 0;
    int rc = hooks_ready() && hooks_next_shmdt ? hooks_next_shmdt(addr) : (int)syscall(SYS_shmdt, addr);
    if (rc == 0)
        hooks_report(addr, len);
    return rc;
}

HOOK void *shmat(int id, const void *addr, int flags)
{
    void *p = hooks_ready() && hooks_next_shmat ? hooks_next_shmat(id, addr, flags)
                                                : (void *)syscall(SYS_shmat, id, addr, flags);
    if (p != (void *)-1 && (flags & SHM_REMAP)) {
        struct shmid_ds ds;
        if (!shmctl(id, IPC_STAT, &ds))
            hooks_report(p, ds.shm_segsz);
    }
    return p;
}
