/* The allocation interposers: malloc calloc realloc reallocarray free
 * posix_memalign aligned_alloc memalign valloc pvalloc malloc_usable_size
 * mmap mmap64 munmap mremap mprotect.
 *
 * Every one of them works at any time: before the shim's constructor ran
 * (forwarded, the large ones counted as "early"), inside it, from a nested
 * call (the real allocator's own mmap, backtrace's allocations: forwarded),
 * in a vfork child or after exit started (forwarded). Allocations of at
 * least min_alloc bytes are recorded with their call path; a record the
 * shim cannot make (table full, no log) is dropped and counted, never a
 * fault. */
#include "shim.h"

#include <execinfo.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ---------- the table of tracked allocations ---------- */

/* Counting filter over the addresses of tracked blocks, read without the
 * lock: free() of an untracked block (nearly every free) costs one load. */
static _Atomic uint16_t filter[SHIM_FILTER];

static size_t filter_slot(uintptr_t a) { return (size_t)((a >> 4) * 0x9E3779B97F4A7C15ull >> 48) & (SHIM_FILTER - 1); }
static int filter_maybe(const void *p)
{
    return atomic_load_explicit(&filter[filter_slot((uintptr_t)p)], memory_order_relaxed) != 0;
}

static size_t hash_slot(uintptr_t a) { return (size_t)((a >> 4) * 0x9E3779B97F4A7C15ull >> 48) & (SHIM_HASH - 1); }

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

/* Tombstones build up: rebuild the hash when the live count allows. */
static void hash_rebuild_locked(void)
{
    memset(S.hkey, 0, SHIM_HASH * sizeof *S.hkey);
    for (int i = 0; i < S.nlive; i++)
        hash_put(S.live[i].addr, i);
}

static unsigned tombs;
static int track_remove_locked(uintptr_t addr, shim_region_t *out);

static void track_add_locked(uintptr_t addr, size_t size, int kind, int prot)
{
    shim_region_t stale;
    track_remove_locked(addr, &stale); /* a block whose end we missed */
    if (S.nlive >= SHIM_MAX_LIVE || S.nlive * 2 >= SHIM_HASH) {
        S.stats.untracked++;
        return;
    }
    if (tombs > SHIM_HASH / 4) {
        hash_rebuild_locked();
        tombs = 0;
    }
    int i = S.nlive++;
    S.live[i] = (shim_region_t){addr, size, (uint16_t)kind, (uint16_t)prot, 0};
    hash_put(addr, i);
    atomic_fetch_add_explicit(&filter[filter_slot(addr)], 1, memory_order_relaxed);
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
    tombs++;
    atomic_fetch_sub_explicit(&filter[filter_slot(addr)], 1, memory_order_relaxed);
    int last = --S.nlive;
    if (i != last) {
        S.live[i] = S.live[last];
        size_t hl = hash_find(S.live[i].addr);
        if (hl != (size_t)-1)
            S.hval[hl] = i;
    }
    return 1;
}

void shim_track_reset_locked(void)
{
    S.nlive = 0;
    tombs = 0;
    if (S.hkey)
        memset(S.hkey, 0, SHIM_HASH * sizeof *S.hkey);
    memset(filter, 0, sizeof filter);
}

void shim_place_live_locked(void)
{
    for (int i = 0; i < S.nlive; i++)
        shim_place_locked(S.live[i].addr, S.live[i].size, S.live[i].addr);
    for (int i = 0; i < S.nglob; i++)
        shim_place_locked(S.glob[i].addr, S.glob[i].size, 0);
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

/* Regions overlapping [lo, hi) are never protected again. */
void shim_mark_noprotect_locked(uintptr_t lo, uintptr_t hi)
{
    for (int i = 0; i < S.nlive; i++)
        if (S.live[i].addr < hi && S.live[i].addr + S.live[i].size > lo)
            S.live[i].noprotect = 1;
}

/* ---------- records ---------- */

/* Ready, not finished, and this is the process the state belongs to (a
 * vfork child, or a child forked without the atfork handlers, shares or
 * copies the state but must not use it). */
int shim_recording(void)
{
    if (!atomic_load_explicit(&S.ready, memory_order_acquire) || atomic_load_explicit(&S.finished, memory_order_relaxed))
        return 0;
    return S.fd >= 0 && shim_getpid() == S.pid;
}

/* Called with shim_guard set. Nothing here allocates with the program's
 * allocator (backtrace's unwinder was loaded by the constructor; what it
 * might still allocate goes straight to the real malloc: guard). */
void shim_record_alloc(void *p, size_t size, int kind, int prot)
{
    if (!p || size < S.min_alloc || !shim_recording())
        return;
    lprof_alloc_t r;
    r.h.type = LPROF_REC_ALLOC;
    r.time = lc_now_ns();
    r.addr = (uintptr_t)p;
    r.size = size;
    r.tid = (int32_t)syscall(SYS_gettid);
    r.kind = (uint16_t)kind;
    void *fr[LPROF_MAX_FRAMES + 6];
    int n = S.depth ? backtrace(fr, (int)S.depth + 6) : 0;
    /* the first frames are the shim's own (however the compiler inlined
     * them): keep the program's */
    int i = 0, k = 0;
    while (i < n && (uintptr_t)fr[i] >= S.text_lo && (uintptr_t)fr[i] < S.text_hi)
        i++;
    for (; i < n && k < (int)S.depth && k < LPROF_MAX_FRAMES; i++)
        r.frames[k++] = (uintptr_t)fr[i];
    r.nframes = (uint16_t)k;
    r.h.size = (uint32_t)(sizeof r - (LPROF_MAX_FRAMES - k) * sizeof(uint64_t));
    shim_lock();
    if (!atomic_load_explicit(&S.finished, memory_order_relaxed)) {
        track_add_locked((uintptr_t)p, size, kind, prot);
        shim_log_locked(&r, r.h.size);
    }
    shim_unlock();
}

/* Before the memory goes away: disarm its pages, record where they were. */
void shim_record_free(void *p)
{
    if (!shim_recording())
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

/* ---------- the malloc family ---------- */

#define RW (PROT_READ | PROT_WRITE)

/* Resolve on first use; while resolving, this thread's allocations come
 * from the bootstrap arena. */
#define NEED(fn)                      \
    do {                              \
        if (__builtin_expect(!shim_R.fn, 0)) \
            shim_resolve();           \
    } while (0)

/* After a malloc-family call the program made (not one from inside an
 * allocator: those come here guarded). The sampler thread starts with the
 * first tracked allocation, from here only: pthread_create allocates, and
 * an mmap may come from inside an allocator holding its own lock (jemalloc's
 * operator new calls its malloc directly, which maps through us). */
static void alloc_done(void *p, size_t n)
{
    if (!p)
        return;
    if (n >= S.min_alloc) {
        shim_record_alloc(p, n, LPROF_KIND_MALLOC, RW);
        if (shim_recording())
            shim_access_start(); /* no-op once started */
    }
    else if (n >= SHIM_DEFAULT_MIN_ALLOC && !atomic_load_explicit(&S.ready, memory_order_relaxed))
        atomic_fetch_add_explicit(&S.stats.early, 1, memory_order_relaxed);
}

/* The real call runs guarded: the allocator's own mmap/munmap and whatever
 * it calls are not the program's. */
#define FORWARD(expr, n)                 \
    do {                                 \
        if (shim_guard)                  \
            return expr;                 \
        shim_guard = 1;                  \
        void *r_ = (expr);               \
        alloc_done(r_, (n));             \
        shim_guard = 0;                  \
        return r_;                       \
    } while (0)

SHIM_EXPORT void *malloc(size_t n)
{
    NEED(malloc);
    if (!shim_R.malloc)
        return shim_boot_alloc(n, 16);
    FORWARD(shim_R.malloc(n), n);
}

SHIM_EXPORT void *calloc(size_t a, size_t b)
{
    size_t n;
    if (__builtin_mul_overflow(a, b, &n))
        n = SIZE_MAX;
    NEED(malloc);
    if (!shim_R.calloc || !shim_R.malloc)
        return n == SIZE_MAX ? NULL : shim_boot_alloc(n, 16); /* static arena: already zero */
    FORWARD(shim_R.calloc(a, b), n);
}

static void forget(void *p)
{
    if (!shim_guard && filter_maybe(p)) {
        shim_guard = 1;
        shim_record_free(p);
        shim_guard = 0;
    }
}

SHIM_EXPORT void free(void *p)
{
    if (!p || shim_is_boot(p))
        return;
    NEED(malloc);
    if (!shim_R.free)
        return; /* only while resolving: a block dlsym got from the real malloc; kept */
    forget(p);
    shim_R.free(p);
}

/* A block from the bootstrap arena moves to the real allocator. */
static void *boot_move(void *p, size_t n)
{
    void *q = malloc(n);
    if (q && p) {
        size_t old = shim_boot_size(p);
        memcpy(q, p, old < n ? old : n);
    }
    return q;
}

SHIM_EXPORT void *realloc(void *p, size_t n)
{
    if (shim_is_boot(p))
        return boot_move(p, n);
    NEED(malloc);
    if (!shim_R.realloc)
        return p ? NULL : shim_boot_alloc(n, 16);
    if (shim_guard)
        return shim_R.realloc(p, n);
    if (p)
        forget(p);
    shim_guard = 1;
    void *r = shim_R.realloc(p, n);
    alloc_done(r, n);
    shim_guard = 0;
    return r;
}

SHIM_EXPORT void *reallocarray(void *p, size_t a, size_t b)
{
    size_t n;
    if (__builtin_mul_overflow(a, b, &n))
        n = SIZE_MAX;
    if (shim_is_boot(p))
        return n == SIZE_MAX ? NULL : boot_move(p, n);
    NEED(malloc);
    if (!shim_R.reallocarray)
        return n == SIZE_MAX ? NULL : realloc(p, n);
    if (shim_guard)
        return shim_R.reallocarray(p, a, b);
    if (p)
        forget(p);
    shim_guard = 1;
    void *r = shim_R.reallocarray(p, a, b);
    alloc_done(r, n);
    shim_guard = 0;
    return r;
}

SHIM_EXPORT int posix_memalign(void **out, size_t al, size_t n)
{
    NEED(malloc);
    if (!shim_R.posix_memalign) {
        void *p = shim_boot_alloc(n, al);
        if (!p)
            return 12; /* ENOMEM */
        *out = p;
        return 0;
    }
    if (shim_guard)
        return shim_R.posix_memalign(out, al, n);
    shim_guard = 1;
    int rc = shim_R.posix_memalign(out, al, n);
    if (!rc)
        alloc_done(*out, n);
    shim_guard = 0;
    return rc;
}

SHIM_EXPORT void *aligned_alloc(size_t al, size_t n)
{
    NEED(malloc);
    if (!shim_R.aligned_alloc)
        return shim_boot_alloc(n, al);
    FORWARD(shim_R.aligned_alloc(al, n), n);
}

SHIM_EXPORT void *memalign(size_t al, size_t n)
{
    NEED(malloc);
    if (!shim_R.memalign)
        return shim_boot_alloc(n, al);
    FORWARD(shim_R.memalign(al, n), n);
}

SHIM_EXPORT void *valloc(size_t n)
{
    NEED(malloc);
    if (!shim_R.valloc)
        return memalign((size_t)sysconf(_SC_PAGESIZE), n);
    FORWARD(shim_R.valloc(n), n);
}

SHIM_EXPORT void *pvalloc(size_t n)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    NEED(malloc);
    if (!shim_R.pvalloc)
        return memalign(pg, (n + pg - 1) & ~(pg - 1));
    FORWARD(shim_R.pvalloc(n), n);
}

SHIM_EXPORT size_t malloc_usable_size(void *p)
{
    if (!p)
        return 0;
    if (shim_is_boot(p))
        return shim_boot_size(p);
    NEED(malloc);
    return shim_R.malloc_usable_size ? shim_R.malloc_usable_size(p) : 0;
}

/* ---------- mappings ---------- */

static void *raw_mmap(void *a, size_t n, int prot, int flags, int fd, off_t off)
{
    return (void *)syscall(SYS_mmap, a, n, prot, flags, fd, off);
}

/* Anonymous memory the program maps itself (not a stack) is a variable. */
static void *mmap_done(void *r, void *a, size_t n, int prot, int flags)
{
    if (r == MAP_FAILED || shim_guard || !shim_recording())
        return r;
    shim_guard = 1;
    int anon = (flags & MAP_ANONYMOUS) && !(flags & (MAP_STACK | MAP_GROWSDOWN));
    if (anon && (prot & PROT_READ) && n >= S.min_alloc)
        shim_record_alloc(r, n, LPROF_KIND_MMAP, prot);
    shim_guard = 0;
    return r;
}

static void range_changes(void *a, size_t n, int removes);

SHIM_EXPORT void *mmap(void *a, size_t n, int prot, int flags, int fd, off_t off)
{
    NEED(mmap);
    if (flags & MAP_FIXED) /* replaces whatever was there */
        range_changes(a, n, 1);
    void *r = shim_R.mmap ? shim_R.mmap(a, n, prot, flags, fd, off) : raw_mmap(a, n, prot, flags, fd, off);
    return mmap_done(r, a, n, prot, flags);
}

SHIM_EXPORT void *mmap64(void *a, size_t n, int prot, int flags, int fd, off_t off)
{
    NEED(mmap64);
    if (flags & MAP_FIXED)
        range_changes(a, n, 1);
    void *r = shim_R.mmap64 ? shim_R.mmap64(a, n, prot, flags, fd, off) : raw_mmap(a, n, prot, flags, fd, off);
    return mmap_done(r, a, n, prot, flags);
}

/* A range going away or changing: armed pages there are released first;
 * regions inside it end (placement and a FREE record, if it goes away);
 * a region it only partly covers is never sampled again. */
static void range_changes(void *a, size_t n, int removes)
{
    if (shim_guard || !shim_recording())
        return;
    shim_guard = 1;
    uintptr_t lo = (uintptr_t)a, hi = lo + n < lo ? ~(uintptr_t)0 : lo + n;
    shim_lock();
    shim_disarm_range_locked(lo, n);
    for (int i = 0; i < S.nlive;) {
        shim_region_t *r = &S.live[i];
        if (r->addr >= hi || r->addr + r->size <= lo) {
            i++;
            continue;
        }
        if (removes && r->addr >= lo && r->addr + r->size <= hi) {
            shim_region_t reg;
            uintptr_t addr = r->addr;
            track_remove_locked(addr, &reg); /* the last region moves to i */
            shim_place_locked(reg.addr, reg.size, reg.addr);
            lprof_free_t f = {{LPROF_REC_FREE, sizeof f}, lc_now_ns(), addr, (int32_t)syscall(SYS_gettid), 0};
            shim_log_locked(&f, sizeof f);
            continue;
        }
        r->noprotect = 1;
        i++;
    }
    shim_unlock();
    shim_guard = 0;
}

SHIM_EXPORT int munmap(void *a, size_t n)
{
    NEED(munmap);
    range_changes(a, n, 1);
    return shim_R.munmap ? shim_R.munmap(a, n) : (int)syscall(SYS_munmap, a, n);
}

SHIM_EXPORT void *mremap(void *old, size_t oldn, size_t newn, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    void *na = (flags & MREMAP_FIXED) ? va_arg(ap, void *) : NULL;
    va_end(ap);
    NEED(mremap);
    range_changes(old, oldn, 1);
    void *r = shim_R.mremap ? shim_R.mremap(old, oldn, newn, flags, na)
                            : (void *)syscall(SYS_mremap, old, oldn, newn, flags, na);
    if (r != MAP_FAILED && !shim_guard && shim_recording() && newn >= S.min_alloc) {
        shim_guard = 1;
        shim_record_alloc(r, newn, LPROF_KIND_MMAP, RW);
        shim_guard = 0;
    }
    return r;
}

/* The program changing protections itself: our armed pages there are
 * released first. A region it changes as a whole remembers the new
 * protection; one it changes in part is not sampled any more (restoring a
 * sampled page must never undo the program's own protection). */
SHIM_EXPORT int mprotect(void *a, size_t n, int prot)
{
    NEED(mprotect);
    if (!shim_guard && shim_recording()) {
        shim_guard = 1;
        uintptr_t lo = (uintptr_t)a, hi = lo + n;
        shim_lock();
        shim_disarm_range_locked(lo, n);
        for (int i = 0; i < S.nlive; i++) {
            shim_region_t *r = &S.live[i];
            if (r->addr >= hi || r->addr + r->size <= lo)
                continue;
            uintptr_t pg_lo = r->addr & ~(uintptr_t)(S.page - 1);
            if (lo <= pg_lo && hi >= r->addr + r->size && (prot & PROT_READ))
                r->prot = (uint16_t)prot;
            else
                r->noprotect = 1;
        }
        shim_unlock();
        shim_guard = 0;
    }
    return shim_R.mprotect ? shim_R.mprotect(a, n, prot) : (int)syscall(SYS_mprotect, a, n, prot);
}

int shim_real_mprotect(void *a, size_t n, int prot) { return (int)syscall(SYS_mprotect, a, n, prot); }
