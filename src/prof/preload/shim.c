/* liblocus_prof_preload.so: preloaded into the profiled program by
 * `locus profile`. It records large allocations with their call paths, the
 * node of their pages (move_pages on itself, at free and at exit/exec) and,
 * when LOCUS_PROF_ACCESS_RATE > 0, samples accesses by briefly protecting
 * pages (see shim_access.c). Everything goes to <_LOCUS_PROF_OUT>/shim.<pid>
 * through write(2) from a buffer that is never malloc'd.
 *
 * This file: the log, the process life cycle (constructor, fork, exec,
 * spawn, exit). The interposers of the allocation calls are in
 * shim_alloc.c, the real functions and the bootstrap arena in shim_real.c.
 *
 * Rules that keep the program correct: the shim never changes what a call
 * does; nothing is recorded before the constructor finished (S.ready) or in
 * a process the state does not belong to (a vfork child); no malloc inside
 * the shim; a thread-local recursion guard; one lock for the tables (never
 * taken in the signal handler); every range that is freed, unmapped or
 * handed to a covered I/O call is unprotected first. */
#include "shim.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <fcntl.h>
#include <link.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

shim_state_t S = {.lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1, .min_alloc = UINT64_MAX};
__thread int shim_guard SHIM_TLS;

pid_t shim_getpid(void) { return (pid_t)syscall(SYS_getpid); }

/* ---------- small async-signal-safe helpers ---------- */

static char *put_str(char *d, const char *s)
{
    while (*s)
        *d++ = *s++;
    *d = 0;
    return d;
}

static char *put_int(char *d, long v)
{
    char tmp[24];
    int n = 0;
    if (v < 0) {
        *d++ = '-';
        v = -v;
    }
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        *d++ = tmp[--n];
    *d = 0;
    return d;
}

static uint64_t env_u64(const char *name, uint64_t def)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return def;
    uint64_t x = 0;
    for (; *v >= '0' && *v <= '9'; v++)
        x = x * 10 + (uint64_t)(*v - '0');
    return x;
}

/* ---------- the log ---------- */

static void open_log(void)
{
    char path[4200];
    const char *dir = getenv("_LOCUS_PROF_OUT");
    S.fd = -1;
    if (!dir || strlen(dir) > 4000)
        return;
    char *p = put_str(path, dir);
    p = put_str(p, "/shim.");
    put_int(p, (long)shim_getpid());
    int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0)
        return;
    /* keep the log fd away from the low numbers a program may dup2 over */
    int hi = (int)syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, 900);
    if (hi >= 0) {
        syscall(SYS_close, fd);
        fd = hi;
    }
    struct stat st;
    if (syscall(SYS_fstat, fd, &st) == 0) {
        S.log_dev = st.st_dev;
        S.log_ino = st.st_ino;
    }
    S.fd = fd;
}

/* The program may have closed our descriptor and got the number back for a
 * file of its own: never write there. */
static int log_fd_ok(void)
{
    struct stat st;
    if (S.fd < 0)
        return 0;
    if (syscall(SYS_fstat, S.fd, &st) == 0 && st.st_dev == S.log_dev && st.st_ino == S.log_ino)
        return 1;
    S.stats.log_errors++;
    open_log(); /* O_APPEND: the records go on after what is there */
    return S.fd >= 0;
}

static void log_flush_locked(void)
{
    if (!S.buf_used)
        return;
    size_t off = 0;
    if (log_fd_ok()) {
        while (off < S.buf_used) {
            ssize_t w = syscall(SYS_write, S.fd, S.buf + off, S.buf_used - off);
            if (w <= 0)
                break;
            off += (size_t)w;
        }
    }
    if (off < S.buf_used)
        S.stats.log_errors++;
    S.buf_used = 0;
}

void shim_log_locked(const void *rec, size_t size)
{
    if (S.fd < 0 || !S.buf)
        return;
    if (S.buf_used + size > SHIM_BUF)
        log_flush_locked();
    if (size > SHIM_BUF)
        return;
    memcpy(S.buf + S.buf_used, rec, size);
    S.buf_used += size;
}

void shim_flush_locked(void) { log_flush_locked(); }

void shim_log_direct(const void *rec, size_t size)
{
    if (S.fd >= 0)
        syscall(SYS_write, S.fd, rec, size);
}

static void log_start(void)
{
    lprof_start_t r;
    memset(&r, 0, sizeof r);
    r.h.type = LPROF_REC_START;
    r.h.size = sizeof r;
    r.magic = LPROF_MAGIC;
    r.time = lc_now_ns();
    r.pid = S.pid;
    r.ppid = (int32_t)syscall(SYS_getppid);
    r.min_alloc = S.min_alloc;
    r.access_rate = S.access_rate;
    ssize_t n = syscall(SYS_readlink, "/proc/self/exe", r.exe, sizeof r.exe - 1);
    if (n > 0)
        r.exe[n] = 0;
    int mode = -1;
    if (syscall(SYS_get_mempolicy, &mode, r.policy_nodes, (unsigned long)(sizeof r.policy_nodes * 8), NULL, 0UL) != 0)
        mode = -1;
    r.policy_mode = mode;
    if (syscall(SYS_sched_getaffinity, 0, sizeof r.cpus, r.cpus) < 0)
        memset(r.cpus, 0, sizeof r.cpus);
    shim_log_locked(&r, sizeof r);
}

int shim_lock(void)
{
    pthread_mutex_lock(&S.lock);
    return 1;
}
void shim_unlock(void) { pthread_mutex_unlock(&S.lock); }

/* Node of each of up to SHIM_PLACE_PAGES pages of [base, base+len), by
 * move_pages on ourselves; one PAGES record. */
void shim_place_locked(uintptr_t base, size_t len, uintptr_t alloc)
{
    uintptr_t pg = S.page;
    uintptr_t first = (base + pg - 1) & ~(pg - 1);
    if (len < pg || first >= base + len || !S.place_addr)
        return;
    size_t npages = (base + len - first) / pg;
    uint32_t stride = (uint32_t)((npages + SHIM_PLACE_PAGES - 1) / SHIM_PLACE_PAGES);
    if (!stride)
        stride = 1;
    uint32_t n = (uint32_t)((npages + stride - 1) / stride);
    for (uint32_t i = 0; i < n; i++)
        S.place_addr[i] = (void *)(first + (uintptr_t)i * stride * pg);
    long rc = syscall(SYS_move_pages, 0, (unsigned long)n, S.place_addr, NULL, S.place_status, 0);
    struct {
        lprof_pages_t r;
        int8_t nodes[SHIM_PLACE_PAGES + 8];
    } rec;
    rec.r = (lprof_pages_t){{LPROF_REC_PAGES, 0}, lc_now_ns(), first, alloc, stride, n, (uint32_t)pg, 0};
    for (uint32_t i = 0; i < n; i++)
        rec.nodes[i] = (int8_t)(rc < 0 || S.place_status[i] < 0 ? -1 : S.place_status[i]);
    rec.r.h.size = (uint32_t)((sizeof rec.r + n + 7) & ~(size_t)7);
    shim_log_locked(&rec, rec.r.h.size);
}

/* ---------- process life: start, fork, exec, exit ---------- */

/* The shim's own executable segment. */
static int self_cb(struct dl_phdr_info *info, size_t sz, void *data)
{
    (void)sz;
    uintptr_t me = (uintptr_t)data;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && me >= lo && me < lo + ph->p_memsz) {
            S.text_lo = lo;
            S.text_hi = lo + ph->p_memsz;
            return 1;
        }
    }
    return 0;
}

/* Writable segments of the main program (its globals): placement at exit. */
static int phdr_cb(struct dl_phdr_info *info, size_t sz, void *data)
{
    (void)sz;
    (void)data;
    if (info->dlpi_name && info->dlpi_name[0])
        return 1; /* the main program comes first */
    for (int i = 0; i < info->dlpi_phnum && S.nglob < SHIM_MAX_GLOBALS; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_W)) {
            S.glob[S.nglob].addr = info->dlpi_addr + ph->p_vaddr;
            S.glob[S.nglob].size = ph->p_memsz;
            S.nglob++;
        }
    }
    return 1;
}

static void log_stats_locked(void)
{
    lprof_stats_t st = {{LPROF_REC_STATS, sizeof st}, S.stats.armed, S.stats.samples, S.stats.dropped,
                        S.stats.io_unprotects, S.stats.untracked, S.stats.chained,
                        atomic_load(&S.stats.early), S.stats.log_errors};
    shim_log_locked(&st, sizeof st);
}

/* The image is about to go away (exit or exec): stop sampling, unprotect,
 * record placement of everything still live, flush. */
static void finish(void)
{
    if (!atomic_load(&S.ready) || atomic_load(&S.finished) || shim_getpid() != S.pid)
        return;
    int g = shim_guard;
    shim_guard = 1;
    shim_access_stop();
    shim_lock();
    atomic_store(&S.finished, 1);
    shim_disarm_range_locked(0, ~(uintptr_t)0);
    shim_access_flush_locked();
    shim_place_live_locked();
    log_stats_locked();
    log_flush_locked();
    shim_unlock();
    shim_guard = g;
}

static __thread int t_fork_locked SHIM_TLS;

static void atfork_prepare(void)
{
    t_fork_locked = 0;
    /* fork from a signal handler that interrupted the shim: the lock may be
     * ours already; the child will not record */
    if (shim_guard || !atomic_load(&S.ready) || shim_getpid() != S.pid)
        return;
    shim_guard = 1;
    shim_lock();
    t_fork_locked = 1;
    shim_disarm_range_locked(0, ~(uintptr_t)0); /* the child starts with nothing armed */
    log_flush_locked();
}

static void atfork_parent(void)
{
    if (t_fork_locked) {
        shim_unlock();
        shim_guard = 0;
    }
    t_fork_locked = 0;
}

static void atfork_child(void)
{
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    S.lock = fresh;
    if (!t_fork_locked) {
        S.pid = -1; /* inconsistent state: this process records nothing */
        return;
    }
    t_fork_locked = 0;
    shim_guard = 0;
    S.pid = shim_getpid();
    S.buf_used = 0;
    if (S.fd >= 0)
        syscall(SYS_close, S.fd);
    open_log();
    int g = shim_guard;
    shim_guard = 1;
    log_start();
    log_flush_locked(); /* a child that ends in _exit still has its start */
    shim_guard = g;
    shim_io_after_fork();
    shim_access_after_fork();
}

/* Before an exec: this image's records are complete. A vfork child (it
 * shares the parent's memory and state) only makes sure the kernel can read
 * argv/envp: nothing armed, no arming for a while. Returns 1 if the
 * sampler must resume when the exec fails. */
static int exec_begin(void)
{
    if (!atomic_load(&S.ready))
        return 0;
    if (shim_getpid() != S.pid) {
        shim_pause_arming(500000000ull);
        shim_disarm_range_locked(0, ~(uintptr_t)0);
        return 0;
    }
    finish();
    return 1;
}

static void exec_failed(int began)
{
    if (!began)
        return;
    atomic_store(&S.finished, 0);
    if (S.nlive) /* it had a sampler thread */
        shim_access_start();
}

SHIM_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    shim_resolve();
    int b = exec_begin();
    int rc = shim_R.execve(path, argv, envp);
    exec_failed(b);
    return rc;
}

SHIM_EXPORT int execv(const char *path, char *const argv[])
{
    extern char **environ;
    return execve(path, argv, environ);
}

SHIM_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    shim_resolve();
    int b = exec_begin();
    int rc = shim_R.execvpe(file, argv, envp);
    exec_failed(b);
    return rc;
}

SHIM_EXPORT int execvp(const char *file, char *const argv[])
{
    extern char **environ;
    return execvpe(file, argv, environ);
}

SHIM_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
    shim_resolve();
    int b = exec_begin();
    int rc = shim_R.fexecve(fd, argv, envp);
    exec_failed(b);
    return rc;
}

/* execl*: the argument list on the stack, then the v-variant. */
#define ARGV_FROM_VA(first, ap, argv, extra)                       \
    size_t n_ = 1;                                                 \
    va_start(ap, first);                                           \
    while (va_arg(ap, char *))                                     \
        n_++;                                                      \
    va_end(ap);                                                    \
    char *argv[n_ + 1];                                            \
    argv[0] = (char *)(first);                                     \
    va_start(ap, first);                                           \
    for (size_t i_ = 1; i_ <= n_; i_++)                            \
        argv[i_] = va_arg(ap, char *);                             \
    extra;                                                         \
    va_end(ap)

SHIM_EXPORT int execl(const char *path, const char *arg, ...)
{
    va_list ap;
    ARGV_FROM_VA(arg, ap, argv, (void)0);
    return execv(path, argv);
}

SHIM_EXPORT int execlp(const char *file, const char *arg, ...)
{
    va_list ap;
    ARGV_FROM_VA(arg, ap, argv, (void)0);
    return execvp(file, argv);
}

SHIM_EXPORT int execle(const char *path, const char *arg, ...)
{
    va_list ap;
    char **envp;
    ARGV_FROM_VA(arg, ap, argv, envp = va_arg(ap, char **));
    return execve(path, argv, envp);
}

/* A spawned child reads argv/envp (and `system`'s command) from our memory
 * before its exec: nothing armed meanwhile. */
static void spawn_begin(void)
{
    shim_block_arming(1);
    shim_disarm_range_locked(0, ~(uintptr_t)0);
}

static void spawn_end(void) { shim_block_arming(-1); }

SHIM_EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
                            const posix_spawnattr_t *at, char *const argv[], char *const envp[])
{
    shim_resolve();
    spawn_begin();
    int rc = shim_R.posix_spawn(pid, path, fa, at, argv, envp);
    spawn_end();
    return rc;
}

SHIM_EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
                             const posix_spawnattr_t *at, char *const argv[], char *const envp[])
{
    shim_resolve();
    spawn_begin();
    int rc = shim_R.posix_spawnp(pid, file, fa, at, argv, envp);
    spawn_end();
    return rc;
}

SHIM_EXPORT int system(const char *cmd)
{
    shim_resolve();
    spawn_begin();
    int rc = shim_R.system(cmd);
    spawn_end();
    return rc;
}

static void *raw_map(size_t n)
{
    void *p = (void *)syscall(SYS_mmap, NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* A rank of a job started below `locus profile` (samplers auto): other
 * ranks may read its memory directly (process_vm_readv, RDMA), and an armed
 * page would fail their call. The same variables as prof_job.c. */
static int in_job_without_access(void)
{
    static const char *const vars[] = {"PMIX_RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "LOCUS_RANK"};
    const char *mode = getenv("_LOCUS_PROF_ACCESS_IN_JOB");
    if (!mode || strcmp(mode, "off"))
        return 0;
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v)
            return 1;
    }
    return 0;
}

static void shim_init(void);
__attribute__((constructor)) static void shim_init(void)
{
    shim_resolve();
    int g = shim_guard;
    shim_guard = 1;
    S.pid = shim_getpid();
    S.page = (size_t)sysconf(_SC_PAGESIZE);
    uint64_t min_alloc = env_u64("LOCUS_PROF_MIN_ALLOC", SHIM_DEFAULT_MIN_ALLOC);
    S.access_rate = env_u64("LOCUS_PROF_ACCESS_RATE", 1000);
    if (in_job_without_access())
        S.access_rate = 0;
    S.depth = env_u64("LOCUS_PROF_DEPTH", 8);
    if (S.depth > LPROF_MAX_FRAMES)
        S.depth = LPROF_MAX_FRAMES;
    S.buf = raw_map(SHIM_BUF);
    S.live = raw_map(SHIM_MAX_LIVE * sizeof(shim_region_t));
    S.hkey = raw_map(SHIM_HASH * sizeof(uintptr_t));
    S.hval = raw_map(SHIM_HASH * sizeof(int));
    S.place_addr = raw_map(SHIM_PLACE_PAGES * sizeof(void *));
    S.place_status = raw_map(SHIM_PLACE_PAGES * sizeof(int));
    if (S.buf && S.live && S.hkey && S.hval && S.place_addr && S.place_status)
        open_log();
    if (S.fd < 0) { /* nothing to record into: stay a pass-through */
        shim_guard = g;
        return;
    }
    void *warm[4];
    backtrace(warm, 4); /* loads the unwinder now, not inside a malloc */
    dl_iterate_phdr(phdr_cb, NULL);
    dl_iterate_phdr(self_cb, (void *)(uintptr_t)&shim_init);
    S.min_alloc = min_alloc;
    shim_lock();
    log_start();
    log_flush_locked();
    shim_unlock();
    pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
    atomic_store_explicit(&S.ready, 1, memory_order_release);
    shim_access_init();
    shim_guard = g;
}

__attribute__((destructor)) static void shim_fini(void) { finish(); }
