/* Sharing: the named object behind a shared heap (tmpfs or hugetlbfs), and
 * mapping another process's heap by its path. */
#include "heap/heap_internal.h"

#include "core/error.h"

#include <locus/config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define SHM_DIR "/dev/shm"

/* ---------- a private huge tmpfs: shared THP where the system refuses it ----------
 *
 * Debian's default shmem_enabled is "never": /dev/shm and memfds never get
 * huge pages, so a shared heap faults 4 KiB at a time (~3 GB/s for two
 * processes here, against ~20 GB/s with 2 MiB pages) unless an admin sets
 * up a hugetlb pool. The setting governs the kernel's internal shmem mount;
 * a tmpfs mounted with huge=always gets huge pages whatever it says (only
 * "deny" overrides mounts). So a helper process enters a mount namespace of
 * its own (and a user namespace of its own when it is not root, which lets
 * an unprivileged process mount a tmpfs there), mounts a tmpfs with
 * huge=always, creates and unlinks a file in it and hands the descriptor
 * back over a socket; then it exits. The mount lives on, detached, as long
 * as the file is open or mapped: nothing to unlink, nothing to leak. The
 * node's other processes open it through /proc/<pid>/fd/<n> of the owner
 * (same user) until the owner closes that descriptor (locus_heap_unlink).
 * The helper is started with clone() and no exit signal, so a program's
 * SIGCHLD handler never sees it. Any failure (no user namespaces, a seccomp
 * filter, no mount point) means the caller falls back to /dev/shm. */

#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>

typedef struct {
    int sock;               /* where the descriptor goes */
    bool root;
    char uid_map[64], gid_map[64], opts[96];
} helper_arg_t;

static int write_file(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = write(fd, text, strlen(text));
    close(fd);
    return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* The helper: raw system calls and the strings prepared by the parent only. */
static int helper_main(void *p)
{
    helper_arg_t *a = p;
    if (a->root) {
        if (unshare(CLONE_NEWNS) != 0)
            return 1;
    } else if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0 || write_file("/proc/self/setgroups", "deny") != 0 ||
               write_file("/proc/self/uid_map", a->uid_map) != 0 || write_file("/proc/self/gid_map", a->gid_map) != 0) {
        return 2;
    }
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
        return 3;
    static const char *const points[] = {"/dev/shm", "/tmp", "/mnt", "/"};
    const char *at = NULL;
    for (size_t i = 0; !at && i < sizeof points / sizeof *points; i++)
        if (mount("locus-heap", points[i], "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, a->opts) == 0)
            at = points[i];
    if (!at)
        return 4;
    char path[64];
    size_t n = strlen(at);
    memcpy(path, at, n);
    memcpy(path + n, "/heap", 6);
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return 5;
    unlink(path);
    char ctl[CMSG_SPACE(sizeof(int))];
    memset(ctl, 0, sizeof ctl);
    char byte = 'h';
    struct iovec iov = {&byte, 1};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof ctl};
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &fd, sizeof fd);
    return sendmsg(a->sock, &m, 0) == 1 ? 0 : 6;
}

static int receive_fd(int sock)
{
    char ctl[CMSG_SPACE(sizeof(int))], byte;
    struct iovec iov = {&byte, 1};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof ctl};
    if (recvmsg(sock, &m, MSG_CMSG_CLOEXEC) != 1)
        return -1;
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS || c->cmsg_len != CMSG_LEN(sizeof(int)))
        return -1;
    int fd;
    memcpy(&fd, CMSG_DATA(c), sizeof fd);
    return fd;
}

/* Run fn(arg) in a child: a copy of this process (no CLONE_VM, so unshare
 * can make it a namespace's only process) with no exit signal (a program's
 * SIGCHLD handler never sees it); `during(darg)` runs here meanwhile (may be
 * NULL). The child's wait status, or -1 if it could not start. */
static int in_quiet_child(int (*fn)(void *), void *arg, void (*during)(void *), void *darg)
{
    size_t stack_len = 64 * 1024;
    /* MAP_STACK: what it is (a profiler of the program, which skips stacks,
     * would otherwise list this runtime scratch as one of its variables) */
    char *stack = mmap(NULL, stack_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (stack == MAP_FAILED)
        return -1;
    pid_t pid = clone(fn, stack + stack_len, 0, arg);
    int ws = -1;
    if (pid > 0) {
        if (during)
            during(darg);
        if (waitpid(pid, &ws, __WALL) != pid)
            ws = -1;
    }
    munmap(stack, stack_len);
    return ws;
}

/* Another process opens /proc/<pid>/fd/<n>, as the node's peers will: a
 * security module or a ptrace policy may refuse what our own open allows. */
static int open_other(void *path)
{
    int fd = open(path, O_RDWR | O_CLOEXEC);
    return fd < 0 ? 1 : 0;
}

static bool reachable_by_another_process(const char *path)
{
    int ws = in_quiet_child(open_other, (void *)path, NULL, NULL);
    return ws >= 0 && WIFEXITED(ws) && WEXITSTATUS(ws) == 0;
}

typedef struct {
    int sock, child_end, fd;
} receive_t;

/* Our copy of the child's end goes first: a helper that fails then ends
 * the receive with EOF instead of leaving it blocked. */
static void receive_into(void *p)
{
    receive_t *r = p;
    close(r->child_end);
    r->child_end = -1;
    r->fd = receive_fd(r->sock);
}

locus_status_t heap_share_create_private(struct locus_heap *h)
{
    /* the node's processes open /proc/<our pid>/fd/<n>: only possible while
     * we are dumpable (a process that changed its ids without exec is not) */
    if (prctl(PR_GET_DUMPABLE) != 1)
        return lc_err(LOCUS_ERR_UNSUPPORTED, "private huge tmpfs: this process is not dumpable, so the node's "
                      "other processes could not open /proc/%d/fd", (int)getpid());
    helper_arg_t a = {.root = geteuid() == 0};
    snprintf(a.uid_map, sizeof a.uid_map, "0 %u 1", (unsigned)geteuid());
    snprintf(a.gid_map, sizeof a.gid_map, "0 %u 1", (unsigned)getegid());
    /* room for the file and a page of slack; mode 0700: the mount is ours */
    snprintf(a.opts, sizeof a.opts, "huge=always,size=%llu,mode=0700", (unsigned long long)(h->size + (4ull << 20)));
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
        return lc_err_errno(LOCUS_ERR_SYSTEM, errno, "private huge tmpfs: socketpair");
    a.sock = sv[1];
    receive_t got = {sv[0], sv[1], -1};
    int ws = in_quiet_child(helper_main, &a, receive_into, &got);
    close(sv[0]);
    if (got.child_end >= 0)
        close(got.child_end);
    int fd = got.fd;
    if (ws == -1 && fd < 0)
        return lc_err(LOCUS_ERR_SYSTEM, "private huge tmpfs: the helper could not be started");
    /* helper_main's exit statuses */
    static const char *const step[] = {"hand the file back", "enter a mount namespace of its own",
                                       "enter a user namespace of its own", "make its mounts private",
                                       "mount a tmpfs", "create the file", "hand the file back"};
    int code = WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
    if (fd < 0)
        return lc_err(LOCUS_ERR_UNSUPPORTED, "private huge tmpfs: the helper could not %s (status %d)",
                      code >= 0 && code <= 6 ? step[code] : "finish (killed)", code);
    if (ftruncate(fd, (off_t)h->size) != 0) {
        int e = errno;
        close(fd);
        return lc_err_errno(LOCUS_ERR_NO_MEMORY, e, "private huge tmpfs: sizing the heap to %llu bytes",
                            (unsigned long long)h->size);
    }
    h->share_fd = fd;
    h->private_fs = true;
    h->linked = true; /* reachable through /proc until locus_heap_unlink */
    snprintf(h->share_path, sizeof h->share_path, "/proc/%d/fd/%d", (int)getpid(), fd);
    if (!reachable_by_another_process(h->share_path)) {
        close(fd);
        h->share_fd = -1;
        h->private_fs = h->linked = false;
        return lc_err(LOCUS_ERR_UNSUPPORTED, "private huge tmpfs: another process cannot open %s here (a "
                      "security module or ptrace policy)", h->share_path);
    }
    return LOCUS_OK;
}

bool heap_share_private_ok(char *why, size_t len)
{
    char mode[32];
    heap_share_thp_ok(mode, sizeof mode);
    if (!strcmp(mode, "deny")) {
        snprintf(why, len, "shmem_enabled is 'deny' (huge pages refused on every mount)");
        return false;
    }
    return true;
}

bool heap_share_thp_ok(char *mode, size_t len)
{
    snprintf(mode, len, "never");
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/shmem_enabled", "r");
    if (!f)
        return false;
    char line[256] = "";
    bool got = fgets(line, sizeof line, f) != NULL;
    fclose(f);
    char *l = got ? strchr(line, '[') : NULL, *r = l ? strchr(l, ']') : NULL;
    if (!l || !r)
        return false;
    snprintf(mode, len, "%.*s", (int)(r - l - 1), l + 1);
    /* advise: MADV_HUGEPAGE (place() gives it); never/deny: no huge pages */
    return !strcmp(mode, "always") || !strcmp(mode, "within_size") || !strcmp(mode, "advise") ||
           !strcmp(mode, "force");
}

/* Hugepagesize of /proc/meminfo: the page of a hugetlbfs mount without a
 * pagesize option. */
static uint64_t default_huge_page(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    unsigned long long kb = 0;
    char line[256];
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "Hugepagesize: %llu kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return (uint64_t)kb << 10;
}

bool heap_share_hugetlbfs(uint64_t page_size, char *dir, size_t len)
{
    FILE *f = fopen("/proc/mounts", "r");
    if (!f)
        return false;
    char line[1024], dev[256], mnt[512], type[64], opts[512];
    bool found = false;
    while (!found && fgets(line, sizeof line, f)) {
        if (sscanf(line, "%255s %511s %63s %511s", dev, mnt, type, opts) != 4 || strcmp(type, "hugetlbfs"))
            continue;
        uint64_t page = default_huge_page();
        const char *ps = strstr(opts, "pagesize=");
        if (ps && locus_parse_size(ps + 9, &page) != LOCUS_OK)
            continue;
        if (page == page_size && access(mnt, W_OK) == 0) {
            snprintf(dir, len, "%s", mnt);
            found = true;
        }
    }
    fclose(f);
    return found;
}

locus_status_t heap_share_check_name(const char *name)
{
    size_t n = name ? strlen(name) : 0;
    if (n == 0 || n > 200 || strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") != n ||
        !strcmp(name, ".") || !strcmp(name, ".."))
        return lc_err(LOCUS_ERR_INVALID, "share name '%s': expected 1-200 characters from [A-Za-z0-9_.-]",
                      name ? name : "");
    return LOCUS_OK;
}

/* how: "" (statvfs before the fault-in) or what failed. */
static locus_status_t room_error(const struct locus_heap *h, const char *how, const char *dir, uint64_t avail)
{
    char b1[32], b2[32];
    locus_format_size(h->size, b1, sizeof b1);
    locus_format_size(avail, b2, sizeof b2);
    return lc_err(LOCUS_ERR_NO_MEMORY,
                  "shared heap of %s: %s%s has only %s free; enlarge it (mount -o remount,size=... %s, "
                  "docker --shm-size) or ask for a smaller heap", b1, how, dir, b2, dir);
}

/* Free bytes of dir's file system; false if it has no limit (0 blocks). */
static bool room(const char *dir, uint64_t *avail)
{
    struct statvfs v;
    if (statvfs(dir, &v) != 0 || v.f_blocks == 0)
        return false;
    *avail = (uint64_t)v.f_bavail * v.f_frsize;
    return true;
}

/* tmpfs limits its size (size= option; 64 MiB in a default Docker
 * container): say so now rather than SIGBUS or EFAULT in the fault-in.
 * A heap that fallocates (reserve) skips this: fallocate is the exact,
 * atomic check, where statvfs now and a fault-in later race with whoever
 * else uses the file system. */
static locus_status_t check_room(const struct locus_heap *h, const char *dir)
{
    uint64_t avail;
    if (h->populate == LOCUS_POPULATE_RESERVE || !room(dir, &avail) || avail >= h->size)
        return LOCUS_OK;
    return room_error(h, "", dir, avail);
}

locus_status_t heap_share_create(struct locus_heap *h, const char *dir, const char *name)
{
    int n = snprintf(h->share_path, sizeof h->share_path, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= sizeof h->share_path)
        return lc_err(LOCUS_ERR_INVALID, "share path %s/%s: longer than %zu characters", dir, name,
                      sizeof h->share_path - 1);
    locus_status_t st = check_room(h, dir);
    if (st)
        return st;
    h->share_fd = open(h->share_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (h->share_fd < 0) {
        int e = errno;
        if (e == EEXIST)
            return lc_err(LOCUS_ERR_BUSY,
                          "shared heap %s exists: another job with this id, or left by a process that died "
                          "before unlinking it (remove it if no job of yours uses it)", h->share_path);
        return lc_err_errno(e == EACCES || e == EPERM ? LOCUS_ERR_PERMISSION : LOCUS_ERR_SYSTEM, e,
                            "shared heap: creating %s", h->share_path);
    }
    h->linked = true;
    if (ftruncate(h->share_fd, (off_t)h->size) != 0)
        return lc_err_errno(LOCUS_ERR_NO_MEMORY, errno, "shared heap: sizing %s to %llu bytes", h->share_path,
                            (unsigned long long)h->size);
    return LOCUS_OK;
}

locus_status_t heap_share_map(struct locus_heap *h)
{
    void *p = mmap(h->base, h->size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, h->share_fd, 0);
    int e = errno;
    if (!h->private_fs) { /* a private tmpfs's file is reached through this descriptor */
        close(h->share_fd);
        h->share_fd = -1;
    }
    if (p == MAP_FAILED)
        return lc_err_errno(LOCUS_ERR_NO_MEMORY, e, "shared heap: mmap of %s (%llu bytes)", h->share_path,
                            (unsigned long long)h->size);
    return LOCUS_OK;
}

/* What a failed fallocate means: a full file system (ENOSPC on /dev/shm:
 * the kernel undid the partial allocation, so statvfs tells the room), else
 * not enough memory (the node's, or a memory cgroup's: ENOMEM; our private
 * tmpfs is sized to the heap, so ENOSPC there is memory too). */
static locus_status_t fallocate_error(const struct locus_heap *h, int e)
{
    char dir[sizeof h->share_path], b[32];
    snprintf(dir, sizeof dir, "%s", h->share_path);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir)
        *slash = '\0';
    uint64_t avail;
    if (e == ENOSPC && !h->private_fs && room(dir, &avail) && avail < h->size)
        return room_error(h, "allocating it (fallocate): ", dir, avail);
    locus_format_size(h->size, b, sizeof b);
    return lc_err_errno(LOCUS_ERR_NO_MEMORY, e,
                        "shared heap of %s: allocating it at create (fallocate of %s) failed: not that much "
                        "memory free on this node or under the job's memory limit; ask for a smaller heap", b,
                        h->share_path);
}

locus_status_t heap_share_fallocate(struct locus_heap *h)
{
    int fd = h->private_fs ? dup(h->share_fd) : open(h->share_path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return lc_err_errno(LOCUS_ERR_SYSTEM, errno, "shared heap: reopening %s", h->share_path);
    /* mode 0 on tmpfs (shmem_fallocate): folios allocated under the file's
     * shared policy (mbind on our mapping set it) and charged, but not
     * cleared: the first fault clears each one, just before the program's
     * first write to it. Interrupted: the kernel undid it, so again. */
    int r, e = 0;
    while ((r = fallocate(fd, 0, 0, (off_t)h->size)) != 0 && (e = errno) == EINTR)
        ;
    close(fd);
    return r ? fallocate_error(h, e) : LOCUS_OK;
}

void heap_share_release(struct locus_heap *h)
{
    if (h->share_fd >= 0)
        close(h->share_fd);
    h->share_fd = -1;
    if (h->linked && !h->private_fs)
        unlink(h->share_path);
    h->linked = false;
}

const char *locus_heap_share_path(const locus_heap_t *h) { return h && h->shared ? h->share_path : ""; }

locus_status_t locus_heap_unlink(locus_heap_t *h)
{
    if (!h)
        return lc_err(LOCUS_ERR_INVALID, "heap unlink: heap must not be NULL");
    if (h->private_fs) { /* the /proc path goes with the descriptor */
        if (h->share_fd >= 0)
            close(h->share_fd);
        h->share_fd = -1;
    } else if (h->linked && unlink(h->share_path) != 0 && errno != ENOENT) {
        return lc_err_errno(LOCUS_ERR_SYSTEM, errno, "heap unlink: %s", h->share_path);
    }
    h->linked = false;
    return LOCUS_OK;
}

locus_status_t locus_heap_attach(const char *path, uint64_t size, void **base)
{
    if (!path || !*path || !size || !base)
        return lc_err(LOCUS_ERR_INVALID, "heap attach(%s, %llu): expected a path, a size > 0 and an output",
                      path ? path : "NULL", (unsigned long long)size);
    char full[320];
    if (!strchr(path, '/')) {
        locus_status_t st = heap_share_check_name(path);
        if (st)
            return st;
        snprintf(full, sizeof full, SHM_DIR "/%s", path);
        path = full;
    }
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        return lc_err_errno(e == ENOENT ? LOCUS_ERR_NOT_FOUND : e == EACCES ? LOCUS_ERR_PERMISSION : LOCUS_ERR_SYSTEM,
                            e, "heap attach: opening %s", path);
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0 || (uint64_t)sb.st_size != size) {
        long long have = fstat(fd, &sb) == 0 ? (long long)sb.st_size : -1;
        close(fd);
        return lc_err(LOCUS_ERR_INVALID, "heap attach: %s holds %lld bytes, expected %llu", path, have,
                      (unsigned long long)size);
    }
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int e = errno;
    close(fd);
    if (p == MAP_FAILED)
        return lc_err_errno(LOCUS_ERR_NO_MEMORY, e, "heap attach: mmap of %s (%llu bytes)", path,
                            (unsigned long long)size);
    *base = p;
    return LOCUS_OK;
}

void locus_heap_detach(void *base, uint64_t size)
{
    if (base && size)
        munmap(base, size);
}
