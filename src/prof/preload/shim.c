/* liblocus_prof_preload.so: preloaded into the profiled program by
 * `locus profile`. It records large allocations with their call paths, the
 * node of their pages (move_pages on itself, at free and at exit/exec) and,
 * when LOCUS_PROF_ACCESS_RATE > 0, samples accesses by briefly protecting
 * pages (see shim_access.c). Everything goes to <LOCUS_PROF_OUT>/shim.<pid>.bin
 * through write(2) from a buffer that is never malloc'd.
 *
 * Rules that keep the program correct: no malloc inside the shim (dlsym's own
 * calloc is served from a static arena), a thread-local recursion guard, one
 * lock for the tables (never taken in the signal handler), and every range
 * that is freed, unmapped or handed to a covered I/O call is unprotected
 * first. */
#include "shim.h"
#include "core/clock.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <fcntl.h>
#include <link.h>
#include <malloc.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

shim_state_t S;
__thread int shim_guard __attribute__((tls_model("initial-exec")));

/* ---------- real functions ---------- */

static void *(*real_malloc)(size_t);
static void (*real_free)(void *);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static int (*real_posix_memalign)(void **, size_t, size_t);
static void *(*real_aligned_alloc)(size_t, size_t);
static void *(*real_memalign)(size_t, size_t);
static void *(*real_mmap)(void *, size_t, int, int, int, off_t);
static int (*real_munmap)(void *, size_t);
static void *(*real_mremap)(void *, size_t, size_t, int, ...);
static int (*real_mprotect)(void *, size_t, int);
static int (*real_execve)(const char *, char *const[], char *const[]);

/* dlsym may calloc; serve that from here until the real functions exist. */
static char boot_arena[65536] __attribute__((aligned(64)));
static size_t boot_used;
static int resolving;

static void *boot_alloc(size_t n)
{
    n = (n + 63) & ~(size_t)63;
    if (boot_used + n > sizeof boot_arena)
        return NULL;
    void *p = boot_arena + boot_used;
    boot_used += n;
    return p;
}

static int is_boot(const void *p)
{
    return (const char *)p >= boot_arena && (const char *)p < boot_arena + sizeof boot_arena;
}

static void resolve(void)
{
    if (real_malloc || resolving)
        return;
    resolving = 1;
    real_calloc = dlsym(RTLD_NEXT, "calloc");
    real_free = dlsym(RTLD_NEXT, "free");
    real_realloc = dlsym(RTLD_NEXT, "realloc");
    real_posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
    real_aligned_alloc = dlsym(RTLD_NEXT, "aligned_alloc");
    real_memalign = dlsym(RTLD_NEXT, "memalign");
    real_mmap = dlsym(RTLD_NEXT, "mmap");
    real_munmap = dlsym(RTLD_NEXT, "munmap");
    real_mremap = dlsym(RTLD_NEXT, "mremap");
    real_mprotect = dlsym(RTLD_NEXT, "mprotect");
    real_execve = dlsym(RTLD_NEXT, "execve");
    shim_io_resolve();
    real_malloc = dlsym(RTLD_NEXT, "malloc");
    resolving = 0;
}

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

static void log_flush_locked(void)
{
    size_t off = 0;
    while (off < S.buf_used && S.fd >= 0) {
        ssize_t w = syscall(SYS_write, S.fd, S.buf + off, S.buf_used - off);
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    S.buf_used = 0;
}

void shim_log_locked(const void *rec, size_t size)
{
    if (S.fd < 0)
        return;
    if (S.buf_used + size > SHIM_BUF)
        log_flush_locked();
    if (size > SHIM_BUF)
        return;
    memcpy(S.buf + S.buf_used, rec, size);
    S.buf_used += size;
}

void shim_flush_locked(void) { log_flush_locked(); }

static void open_log(void)
{
    char path[4200];
    const char *dir = getenv("LOCUS_PROF_OUT");
    S.fd = -1;
    if (!dir || strlen(dir) > 4000)
        return;
    char *p = put_str(path, dir);
    p = put_str(p, "/shim.");
    put_int(p, (long)getpid());
    S.fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (S.fd >= 0) {
        /* keep the log fd away from the low numbers a program may dup2 over */
        int hi = fcntl(S.fd, F_DUPFD_CLOEXEC, 900);
        if (hi >= 0) {
            close(S.fd);
            S.fd = hi;
        }
    }
}

static void log_start(void)
{
    lprof_start_t r;
    memset(&r, 0, sizeof r);
    r.h.type = LPROF_REC_START;
    r.h.size = sizeof r;
    r.magic = LPROF_MAGIC;
    r.time = lc_now_ns();
    r.pid = getpid();
    r.ppid = getppid();
    r.min_alloc = S.min_alloc;
    r.access_rate = S.access_rate;
    ssize_t n = readlink("/proc/self/exe", r.exe, sizeof r.exe - 1);
    if (n > 0)
        r.exe[n] = 0;
    shim_log_locked(&r, sizeof r);
}

/* ---------- tracked allocations ---------- */

static size_t hash_slot(uintptr_t a) { return (size_t)((a >> 12) * 0x9E3779B97F4A7C15ull >> 48) & (SHIM_HASH - 1); }

static void hash_put(uintptr_t addr, int idx)
{
    size_t h = hash_slot(addr);
    while (S.hkey[h] && S.hkey[h] != SHIM_TOMB)
        h = (h + 1) & (SHIM_HASH - 1);
    S.hkey[h] = addr;
    S.hval[h] = idx;
}

static size_t hash_find(uintptr_t addr)
{
    size_t h = hash_slot(addr);
    for (size_t n = 0; n < SHIM_HASH && S.hkey[h]; n++, h = (h + 1) & (SHIM_HASH - 1))
        if (S.hkey[h] == addr)
            return h;
    return (size_t)-1;
}

static void track_add_locked(uintptr_t addr, size_t size, int kind, int prot)
{
    if (S.nlive >= SHIM_MAX_LIVE || S.nlive * 2 >= SHIM_HASH) {
        S.stats.untracked++;
        return;
    }
    int i = S.nlive++;
    S.live[i] = (shim_region_t){addr, size, (uint16_t)kind, (uint16_t)prot, 0};
    hash_put(addr, i);
}

/* Remove the region starting at addr; returns 1 if it was tracked. */
static int track_remove_locked(uintptr_t addr, shim_region_t *out)
{
    size_t h = hash_find(addr);
    if (h == (size_t)-1)
        return 0;
    int i = S.hval[h];
    *out = S.live[i];
    S.hkey[h] = SHIM_TOMB;
    int last = --S.nlive;
    if (i != last) {
        S.live[i] = S.live[last];
        size_t hl = hash_find(S.live[i].addr);
        if (hl != (size_t)-1)
            S.hval[hl] = i;
    }
    return 1;
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
    if (len < pg || first >= base + len)
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

static void record_alloc(void *p, size_t size, int kind, int prot)
{
    /* !S.ready: a library constructor that runs before ours (libnl, loaded
     * with libibverbs) allocates while the tables do not exist yet */
    if (!p || !S.ready || size < S.min_alloc || S.fd < 0 || S.disabled)
        return;
    lprof_alloc_t r;
    r.h.type = LPROF_REC_ALLOC;
    r.h.size = sizeof r;
    r.time = lc_now_ns();
    r.addr = (uintptr_t)p;
    r.size = size;
    r.tid = (int32_t)syscall(SYS_gettid);
    r.kind = (uint16_t)kind;
    void *fr[LPROF_MAX_FRAMES + 2];
    int n = S.depth ? backtrace(fr, (int)S.depth + 2) : 0;
    /* frame 0 is record_alloc, frame 1 our wrapper; keep the program's */
    int k = 0;
    for (int i = 2; i < n && k < LPROF_MAX_FRAMES; i++)
        r.frames[k++] = (uintptr_t)fr[i];
    r.nframes = (uint16_t)k;
    r.h.size = (uint32_t)(sizeof r - (LPROF_MAX_FRAMES - k) * sizeof(uint64_t));
    shim_lock();
    track_add_locked((uintptr_t)p, size, kind, prot);
    shim_log_locked(&r, r.h.size);
    shim_unlock();
}

/* Before the memory goes away: disarm its pages, record where they were. */
static void record_free(void *p)
{
    if (!p || S.fd < 0)
        return;
    shim_region_t reg;
    shim_lock();
    if (track_remove_locked((uintptr_t)p, &reg)) {
        shim_disarm_range_locked(reg.addr, reg.size);
        shim_place_locked(reg.addr, reg.size, reg.addr);
        lprof_free_t f = {{LPROF_REC_FREE, sizeof f}, lc_now_ns(), (uintptr_t)p, (int32_t)syscall(SYS_gettid), 0};
        shim_log_locked(&f, sizeof f);
    }
    shim_unlock();
}

/* Pick a random tracked page for the access sampler: weighted by size. */
int shim_pick_page_locked(uint64_t rnd, uintptr_t *page, int *prot)
{
    uint64_t total = 0;
    for (int i = 0; i < S.nlive; i++)
        if (!S.live[i].noprotect)
            total += S.live[i].size / S.page;
    if (!total)
        return 0;
    uint64_t t = rnd % total;
    for (int i = 0; i < S.nlive; i++) {
        shim_region_t *r = &S.live[i];
        if (r->noprotect)
            continue;
        uint64_t np = r->size / S.page;
        if (t >= np) {
            t -= np;
            continue;
        }
        uintptr_t first = (r->addr + S.page - 1) & ~(uintptr_t)(S.page - 1);
        uintptr_t last = (r->addr + r->size) & ~(uintptr_t)(S.page - 1); /* exclusive */
        if (last <= first)
            return 0;
        *page = first + ((t % ((last - first) / S.page)) * S.page);
        *prot = r->prot;
        return 1;
    }
    return 0;
}

void shim_mark_noprotect_locked(uintptr_t lo, uintptr_t hi)
{
    for (int i = 0; i < S.nlive; i++)
        if (S.live[i].addr < hi && S.live[i].addr + S.live[i].size > lo)
            S.live[i].noprotect = 1;
}

/* ---------- the malloc family ---------- */

#define GUARDED(call_real, record)          \
    do {                                    \
        if (shim_guard)                     \
            return call_real;               \
        shim_guard = 1;                     \
        __typeof__(call_real) _r = call_real; \
        record;                             \
        shim_guard = 0;                     \
        return _r;                          \
    } while (0)

void *malloc(size_t n)
{
    if (!real_malloc) {
        resolve();
        if (!real_malloc)
            return boot_alloc(n);
    }
    GUARDED(real_malloc(n), record_alloc(_r, n, LPROF_KIND_MALLOC, PROT_READ | PROT_WRITE));
}

void *calloc(size_t a, size_t b)
{
    if (!real_calloc) {
        resolve();
        if (!real_calloc)
            return boot_alloc(a * b); /* static arena: already zero */
    }
    GUARDED(real_calloc(a, b), record_alloc(_r, a * b, LPROF_KIND_MALLOC, PROT_READ | PROT_WRITE));
}

void free(void *p)
{
    if (!p || is_boot(p))
        return;
    if (!real_free)
        resolve();
    /* only large blocks are tracked: small frees skip the lock */
    if (!shim_guard && S.ready && S.nlive && malloc_usable_size(p) >= S.min_alloc) {
        shim_guard = 1;
        record_free(p);
        shim_guard = 0;
    }
    real_free(p);
}

void *realloc(void *p, size_t n)
{
    if (!real_realloc)
        resolve();
    if (is_boot(p)) {
        void *q = malloc(n);
        if (q)
            memcpy(q, p, n < 4096 ? n : 4096);
        return q;
    }
    if (shim_guard)
        return real_realloc(p, n);
    shim_guard = 1;
    if (p && S.ready)
        record_free(p);
    void *r = real_realloc(p, n);
    shim_guard = 0;
    if (r && S.ready) {
        shim_guard = 1;
        record_alloc(r, n, LPROF_KIND_MALLOC, PROT_READ | PROT_WRITE);
        shim_guard = 0;
    }
    return r;
}

int posix_memalign(void **out, size_t al, size_t n)
{
    if (!real_posix_memalign)
        resolve();
    if (shim_guard)
        return real_posix_memalign(out, al, n);
    shim_guard = 1;
    int rc = real_posix_memalign(out, al, n);
    if (!rc)
        record_alloc(*out, n, LPROF_KIND_MALLOC, PROT_READ | PROT_WRITE);
    shim_guard = 0;
    return rc;
}

void *aligned_alloc(size_t al, size_t n)
{
    if (!real_aligned_alloc)
        resolve();
    GUARDED(real_aligned_alloc(al, n), record_alloc(_r, n, LPROF_KIND_MALLOC, PROT_READ | PROT_WRITE));
}

void *memalign(size_t al, size_t n)
{
    if (!real_memalign)
        resolve();
    GUARDED(real_memalign(al, n), record_alloc(_r, n, LPROF_KIND_MALLOC, PROT_READ | PROT_WRITE));
}

/* ---------- the OpenSHMEM symmetric heap ----------
 * An OpenSHMEM program's shmem_malloc/calloc/align/realloc (and the older
 * shmalloc/shmemalign/shrealloc) blocks are named by their call site like
 * malloc'd ones. liblocus_shmem defines shmem_* as weak aliases of pshmem_*
 * (the profiling interface), so these definitions win and the real routine
 * is the next one. A program without OpenSHMEM never calls them. */

typedef void *(*shmem_alloc_fn)(size_t);
typedef void *(*shmem_alloc2_fn)(size_t, size_t);
typedef void *(*shmem_hints_fn)(size_t, long);
typedef void *(*shmem_realloc_fn)(void *, size_t);
typedef void (*shmem_free_fn)(void *);

#define SHMEM_REAL(type, name)                                                \
    static type real_##name;                                                  \
    if (!real_##name)                                                         \
        real_##name = (type)dlsym(RTLD_NEXT, #name);                          \
    if (!real_##name)                                                         \
        abort(); /* called, so an OpenSHMEM library must be loaded */

void *shmem_malloc(size_t n)
{
    SHMEM_REAL(shmem_alloc_fn, shmem_malloc);
    GUARDED(real_shmem_malloc(n), record_alloc(_r, n, LPROF_KIND_MALLOC, PROT_READ | PROT_WRITE));
}

void *shmem_malloc_with_hints(size_t n, long hints)
{
    SHMEM_REAL(shmem_hints_fn, shmem_malloc_with_hints);
    GUARDED(real_shmem_malloc_with_hints(n, hints), record_alloc(_r, n, LPROF_KIND_MALLOC, PROT_READ | PROT_WRITE));
}

void *shmem_calloc(size_t a, size_t b)
{
    SHMEM_REAL(shmem_alloc2_fn, shmem_calloc);
    GUARDED(real_shmem_calloc(a, b), record_alloc(_r, a * b, LPROF_KIND_MALLOC, PROT_READ | PROT_WRITE));
}

void *shmem_align(size_t al, size_t n)
{
    SHMEM_REAL(shmem_alloc2_fn, shmem_align);
    GUARDED(real_shmem_align(al, n), record_alloc(_r, n, LPROF_KIND_MALLOC, PROT_READ | PROT_WRITE));
}

static void *shmem_realloc_as(shmem_realloc_fn real, void *p, size_t n)
{
    if (shim_guard)
        return real(p, n);
    shim_guard = 1;
    if (p && S.ready)
        record_free(p);
    void *r = real(p, n);
    if (r && S.ready)
        record_alloc(r, n, LPROF_KIND_MALLOC, PROT_READ | PROT_WRITE);
    shim_guard = 0;
    return r;
}

void *shmem_realloc(void *p, size_t n)
{
    SHMEM_REAL(shmem_realloc_fn, shmem_realloc);
    return shmem_realloc_as(real_shmem_realloc, p, n);
}

void shmem_free(void *p)
{
    SHMEM_REAL(shmem_free_fn, shmem_free);
    if (p && !shim_guard && S.ready && S.nlive) {
        shim_guard = 1;
        record_free(p);
        shim_guard = 0;
    }
    real_shmem_free(p);
}

void *shmalloc(size_t n)
{
    SHMEM_REAL(shmem_alloc_fn, shmalloc);
    GUARDED(real_shmalloc(n), record_alloc(_r, n, LPROF_KIND_MALLOC, PROT_READ | PROT_WRITE));
}

void *shmemalign(size_t al, size_t n)
{
    SHMEM_REAL(shmem_alloc2_fn, shmemalign);
    GUARDED(real_shmemalign(al, n), record_alloc(_r, n, LPROF_KIND_MALLOC, PROT_READ | PROT_WRITE));
}

void *shrealloc(void *p, size_t n)
{
    SHMEM_REAL(shmem_realloc_fn, shrealloc);
    return shmem_realloc_as(real_shrealloc, p, n);
}

void shfree(void *p)
{
    SHMEM_REAL(shmem_free_fn, shfree);
    if (p && !shim_guard && S.ready && S.nlive) {
        shim_guard = 1;
        record_free(p);
        shim_guard = 0;
    }
    real_shfree(p);
}

void *valloc(size_t n) { return memalign((size_t)sysconf(_SC_PAGESIZE), n); }

void *mmap(void *a, size_t n, int prot, int flags, int fd, off_t off)
{
    if (!real_mmap)
        resolve();
    void *r = real_mmap(a, n, prot, flags, fd, off);
    int anon = (flags & MAP_ANONYMOUS) && !(flags & (MAP_STACK | MAP_GROWSDOWN));
    if (r != MAP_FAILED && anon && !shim_guard && S.ready && (prot & PROT_READ)) {
        shim_guard = 1;
        record_alloc(r, n, LPROF_KIND_MMAP, prot);
        shim_guard = 0;
    }
    return r;
}

int munmap(void *a, size_t n)
{
    if (!real_munmap)
        resolve();
    if (!shim_guard && S.ready) {
        shim_guard = 1;
        shim_lock();
        shim_disarm_range_locked((uintptr_t)a, n);
        shim_unlock();
        record_free(a);
        shim_guard = 0;
    }
    return real_munmap(a, n);
}

void *mremap(void *old, size_t oldn, size_t newn, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    void *na = (flags & MREMAP_FIXED) ? va_arg(ap, void *) : NULL;
    va_end(ap);
    if (!real_mremap)
        resolve();
    if (!shim_guard && S.ready) {
        shim_guard = 1;
        record_free(old);
        shim_guard = 0;
    }
    void *r = real_mremap(old, oldn, newn, flags, na);
    if (r != MAP_FAILED && !shim_guard && S.ready) {
        shim_guard = 1;
        record_alloc(r, newn, LPROF_KIND_MMAP, PROT_READ | PROT_WRITE);
        shim_guard = 0;
    }
    return r;
}

/* The program changing protections itself: our armed pages there are
 * released first, and the region remembers the new protection. */
int mprotect(void *a, size_t n, int prot)
{
    if (!real_mprotect)
        resolve();
    if (S.ready && !shim_guard) {
        shim_lock();
        shim_disarm_range_locked((uintptr_t)a, n);
        for (int i = 0; i < S.nlive; i++)
            if (S.live[i].addr < (uintptr_t)a + n && S.live[i].addr + S.live[i].size > (uintptr_t)a) {
                S.live[i].prot = (uint16_t)prot;
                if (!(prot & PROT_READ))
                    S.live[i].noprotect = 1;
            }
        shim_unlock();
    }
    return real_mprotect(a, n, prot);
}

int shim_real_mprotect(void *a, size_t n, int prot) { return (int)syscall(SYS_mprotect, a, n, prot); }

/* ---------- process life: start, fork, exec, exit ---------- */

/* Writable segments of the main program (its globals): placement at exit,
 * and candidates for access sampling. */
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

static void place_live_locked(void)
{
    for (int i = 0; i < S.nlive; i++)
        shim_place_locked(S.live[i].addr, S.live[i].size, S.live[i].addr);
    for (int i = 0; i < S.nglob; i++)
        shim_place_locked(S.glob[i].addr, S.glob[i].size, 0);
}

static void log_stats_locked(void)
{
    lprof_stats_t st = {{LPROF_REC_STATS, sizeof st}, S.stats.armed, S.stats.samples, S.stats.dropped,
                        S.stats.io_unprotects, S.stats.untracked, S.stats.chained};
    shim_log_locked(&st, sizeof st);
}

/* The image is about to go away (exit or exec): stop sampling, unprotect,
 * record placement of everything still live, flush. */
static void finish(void)
{
    if (!S.ready || S.finished)
        return;
    shim_guard = 1;
    shim_access_stop();
    shim_lock();
    S.finished = 1;
    shim_disarm_range_locked(0, ~(uintptr_t)0);
    shim_access_flush_locked();
    place_live_locked();
    log_stats_locked();
    log_flush_locked();
    shim_unlock();
    shim_guard = 0;
}

static void atfork_prepare(void)
{
    shim_lock();
    log_flush_locked();
}
static void atfork_parent(void) { shim_unlock(); }
static void atfork_child(void)
{
    pthread_mutex_init(&S.lock, NULL);
    S.buf_used = 0;
    if (S.fd >= 0)
        close(S.fd);
    open_log();
    int g = shim_guard;
    shim_guard = 1;
    log_start();
    shim_guard = g;
    shim_access_after_fork();
}

int execve(const char *path, char *const argv[], char *const envp[])
{
    if (!real_execve)
        resolve();
    finish();
    int rc = real_execve(path, argv, envp);
    /* exec failed: this image goes on */
    S.finished = 0;
    shim_access_start();
    return rc;
}

int execv(const char *path, char *const argv[])
{
    extern char **environ;
    return execve(path, argv, environ);
}

int execvpe(const char *file, char *const argv[], char *const envp[])
{
    static int (*real)(const char *, char *const[], char *const[]);
    if (!real)
        real = dlsym(RTLD_NEXT, "execvpe");
    finish();
    int rc = real(file, argv, envp);
    S.finished = 0;
    shim_access_start();
    return rc;
}

int execvp(const char *file, char *const argv[])
{
    extern char **environ;
    return execvpe(file, argv, environ);
}

static void *raw_map(size_t n)
{
    void *p = (void *)syscall(SYS_mmap, NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

__attribute__((constructor)) static void shim_init(void)
{
    resolve();
    shim_guard = 1;
    pthread_mutex_init(&S.lock, NULL);
    S.page = (size_t)sysconf(_SC_PAGESIZE);
    S.min_alloc = env_u64("LOCUS_PROF_MIN_ALLOC", 65536);
    S.access_rate = env_u64("LOCUS_PROF_ACCESS_RATE", 1000);
    S.depth = env_u64("LOCUS_PROF_DEPTH", 8);
    if (S.depth > LPROF_MAX_FRAMES)
        S.depth = LPROF_MAX_FRAMES;
    S.buf = raw_map(SHIM_BUF);
    S.live = raw_map(SHIM_MAX_LIVE * sizeof(shim_region_t));
    S.hkey = raw_map(SHIM_HASH * sizeof(uintptr_t));
    S.hval = raw_map(SHIM_HASH * sizeof(int));
    S.place_addr = raw_map(SHIM_PLACE_PAGES * sizeof(void *));
    S.place_status = raw_map(SHIM_PLACE_PAGES * sizeof(int));
    if (!S.buf || !S.live || !S.hkey || !S.hval || !S.place_addr || !S.place_status) {
        S.fd = -1;
        shim_guard = 0;
        return;
    }
    open_log();
    void *warm[4];
    backtrace(warm, 4); /* loads the unwinder now, not inside a malloc */
    dl_iterate_phdr(phdr_cb, NULL);
    log_start();
    log_flush_locked();
    pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
    S.ready = 1;
    shim_access_init();
    shim_guard = 0;
}

__attribute__((destructor)) static void shim_fini(void) { finish(); }
