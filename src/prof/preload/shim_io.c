/* System calls that read or write user buffers would return EFAULT on a
 * page we protected, instead of faulting. The libc wrappers below (the
 * common I/O calls a program makes through the PLT) unprotect the buffer's
 * armed pages first and keep the sampler from arming them until the call
 * returns. Covered: read write pread pwrite (and the *64 names) readv writev
 * preadv pwritev recv recvfrom send sendto recvmsg sendmsg fread fwrite,
 * process_vm_readv/writev (the local side: MPI's CMA single copy) and
 * libnuma's move_pages (its page and status arrays: a placement check).
 * Not covered (documented in docs/PROFILER.md): calls libc makes internally
 * (e.g. stdio refilling its own buffer — those buffers are small and not
 * tracked unless setvbuf gave a large one), raw syscall(2), io_uring, other
 * system calls taking user buffers (e.g. getdents), and the remote side of
 * another process's process_vm_readv/writev into this one. */
#include "shim.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#define IO_RANGES 64
#define IO_PER_CALL 4
static struct { uintptr_t lo, hi; } io_range[IO_RANGES];
static int io_block; /* in-flight calls that could not list their ranges */
static __thread int my_slot[IO_PER_CALL] __attribute__((tls_model("initial-exec")));
static __thread int my_n __attribute__((tls_model("initial-exec")));
static __thread int my_block __attribute__((tls_model("initial-exec")));

int shim_io_overlaps_locked(uintptr_t lo, uintptr_t hi)
{
    if (io_block)
        return 1;
    for (int i = 0; i < IO_RANGES; i++)
        if (io_range[i].hi && io_range[i].lo < hi && io_range[i].hi > lo)
            return 1;
    return 0;
}

static void add_range_locked(uintptr_t lo, size_t len)
{
    if (!len)
        return;
    shim_disarm_range_locked(lo, len);
    if (my_n < IO_PER_CALL) {
        for (int i = 0; i < IO_RANGES; i++)
            if (!io_range[i].hi) {
                io_range[i].lo = lo;
                io_range[i].hi = lo + len;
                my_slot[my_n++] = i;
                return;
            }
    }
    if (!my_block) {
        my_block = 1;
        io_block++;
    }
}

static int io_active(void) { return S.access_rate && shim_recording(); }

/* The child of a fork has none of the other threads' calls in flight. */
void shim_io_after_fork(void)
{
    for (int i = 0; i < IO_RANGES; i++)
        io_range[i].hi = 0;
    io_block = 0;
    my_n = 0;
    my_block = 0;
}

void shim_io_begin(const void *buf, size_t len)
{
    if (!buf || !len || shim_guard || !io_active())
        return;
    shim_guard = 1; /* a signal handler's write() must not wait for this lock */
    shim_lock();
    S.stats.io_unprotects++;
    add_range_locked((uintptr_t)buf, len);
    shim_unlock();
    shim_guard = 0;
}

void shim_io_begin_iov(const void *iovp, int n)
{
    const struct iovec *iov = iovp;
    if (!iov || n <= 0 || shim_guard || !io_active())
        return;
    shim_guard = 1;
    shim_lock();
    S.stats.io_unprotects++;
    for (int i = 0; i < n; i++)
        add_range_locked((uintptr_t)iov[i].iov_base, iov[i].iov_len);
    shim_unlock();
    shim_guard = 0;
}

void shim_io_end(void)
{
    if (!my_n && !my_block)
        return;
    int g = shim_guard;
    shim_guard = 1;
    shim_lock();
    for (int i = 0; i < my_n; i++)
        io_range[my_slot[i]].hi = 0;
    if (my_block)
        io_block--;
    my_n = 0;
    my_block = 0;
    shim_unlock();
    shim_guard = g;
}

#define REAL(name) static __typeof__(name) *real_##name
REAL(read); REAL(write); REAL(pread); REAL(pwrite); REAL(pread64); REAL(pwrite64);
REAL(readv); REAL(writev); REAL(preadv); REAL(pwritev);
REAL(recv); REAL(recvfrom); REAL(send); REAL(sendto); REAL(recvmsg); REAL(sendmsg);
REAL(fread); REAL(fwrite);
REAL(process_vm_readv); REAL(process_vm_writev);
/* libnuma's, when the program has it (no header here: same prototype) */
long move_pages(int pid, unsigned long count, void **pages, const int *nodes, int *status, int flags);
REAL(move_pages);

void shim_io_resolve(void)
{
#define R(name) real_##name = dlsym(RTLD_NEXT, #name)
    R(read); R(write); R(pread); R(pwrite); R(pread64); R(pwrite64);
    R(readv); R(writev); R(preadv); R(pwritev);
    R(recv); R(recvfrom); R(send); R(sendto); R(recvmsg); R(sendmsg);
    R(fread); R(fwrite);
    R(process_vm_readv); R(process_vm_writev); R(move_pages);
#undef R
}

#define WRAP_BUF(ret, name, params, buf, len, args) \
    SHIM_EXPORT ret name params                      \
    {                                                \
        if (!real_##name)                            \
            shim_resolve();                          \
        shim_io_begin(buf, len);                     \
        ret r = real_##name args;                    \
        shim_io_end();                               \
        return r;                                    \
    }

WRAP_BUF(ssize_t, read, (int fd, void *b, size_t n), b, n, (fd, b, n))
WRAP_BUF(ssize_t, write, (int fd, const void *b, size_t n), b, n, (fd, b, n))
WRAP_BUF(ssize_t, pread, (int fd, void *b, size_t n, off_t o), b, n, (fd, b, n, o))
WRAP_BUF(ssize_t, pwrite, (int fd, const void *b, size_t n, off_t o), b, n, (fd, b, n, o))
WRAP_BUF(ssize_t, pread64, (int fd, void *b, size_t n, off64_t o), b, n, (fd, b, n, o))
WRAP_BUF(ssize_t, pwrite64, (int fd, const void *b, size_t n, off64_t o), b, n, (fd, b, n, o))
WRAP_BUF(ssize_t, recv, (int fd, void *b, size_t n, int f), b, n, (fd, b, n, f))
WRAP_BUF(ssize_t, send, (int fd, const void *b, size_t n, int f), b, n, (fd, b, n, f))
WRAP_BUF(ssize_t, recvfrom, (int fd, void *b, size_t n, int f, struct sockaddr *a, socklen_t *l), b, n,
         (fd, b, n, f, a, l))
WRAP_BUF(ssize_t, sendto, (int fd, const void *b, size_t n, int f, const struct sockaddr *a, socklen_t l), b, n,
         (fd, b, n, f, a, l))
WRAP_BUF(size_t, fread, (void *b, size_t sz, size_t n, FILE *f), b, sz * n, (b, sz, n, f))
WRAP_BUF(size_t, fwrite, (const void *b, size_t sz, size_t n, FILE *f), b, sz * n, (b, sz, n, f))

#define WRAP_IOV(ret, name, params, iov, cnt, args) \
    SHIM_EXPORT ret name params                      \
    {                                                \
        if (!real_##name)                            \
            shim_resolve();                          \
        shim_io_begin_iov(iov, cnt);                 \
        ret r = real_##name args;                    \
        shim_io_end();                               \
        return r;                                    \
    }

WRAP_IOV(ssize_t, readv, (int fd, const struct iovec *v, int n), v, n, (fd, v, n))
WRAP_IOV(ssize_t, writev, (int fd, const struct iovec *v, int n), v, n, (fd, v, n))
WRAP_IOV(ssize_t, preadv, (int fd, const struct iovec *v, int n, off_t o), v, n, (fd, v, n, o))
WRAP_IOV(ssize_t, pwritev, (int fd, const struct iovec *v, int n, off_t o), v, n, (fd, v, n, o))
WRAP_IOV(ssize_t, recvmsg, (int fd, struct msghdr *m, int f), m ? m->msg_iov : NULL, m ? (int)m->msg_iovlen : 0,
         (fd, m, f))
WRAP_IOV(ssize_t, sendmsg, (int fd, const struct msghdr *m, int f), m ? m->msg_iov : NULL,
         m ? (int)m->msg_iovlen : 0, (fd, m, f))

#define WRAP_VM(name)                                                                              \
    SHIM_EXPORT ssize_t name(pid_t pid, const struct iovec *l, unsigned long ln, const struct iovec *r, \
                             unsigned long rn, unsigned long f)                                    \
    {                                                                                              \
        if (!real_##name)                                                                          \
            shim_resolve();                                                                        \
        shim_io_begin_iov(l, ln > 1024 ? 1024 : (int)ln);                                          \
        ssize_t n = real_##name(pid, l, ln, r, rn, f);                                             \
        shim_io_end();                                                                             \
        return n;                                                                                  \
    }
WRAP_VM(process_vm_readv)
WRAP_VM(process_vm_writev)

/* The kernel reads pages[] and nodes[] and writes status[]: an armed page in
 * any of them would fail the call with EFAULT. */
SHIM_EXPORT long move_pages(int pid, unsigned long count, void **pages, const int *nodes, int *status, int flags)
{
    if (!real_move_pages)
        shim_resolve();
    if (!real_move_pages) { /* the program defines no move_pages and links no libnuma: cannot be here */
        errno = ENOSYS;
        return -1;
    }
    shim_io_begin(pages, count * sizeof *pages);
    shim_io_begin(nodes, nodes ? count * sizeof *nodes : 0);
    shim_io_begin(status, status ? count * sizeof *status : 0);
    long r = real_move_pages(pid, count, pages, nodes, status, flags);
    shim_io_end();
    return r;
}
