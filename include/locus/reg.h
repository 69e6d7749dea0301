/* locus reg: a registration cache for dynamic RDMA registration.
 *
 *   locus_reg_attr_t a;
 *   locus_reg_attr_init(&a);
 *   locus_reg_attr_from_env(&a);           // LOCUS_REG_* overrides
 *   locus_reg_cache_t *c;
 *   locus_reg_cache_create(&a, &c);
 *   const locus_reg_t *r;
 *   locus_reg_get(c, buf, len, LOCUS_REG_REMOTE_WRITE | LOCUS_REG_LOCAL_WRITE, &r);
 *   ... r->lkey, r->rkey, r->mr (struct ibv_mr * for the verbs backend) ...
 *   locus_reg_put(c, r);
 *   locus_reg_cache_destroy(c);            // deregisters everything
 *
 * Regions. A get returns a refcounted registration covering [addr, addr+len)
 * with at least the requested access. Regions are page aligned and never
 * overlap inside the index: a request overlapping or adjacent to cached
 * regions registers their union (with the union of their access) if it is at
 * most merge_max bytes, and the old regions leave the index (holders keep
 * using them; they are deregistered at their last put).
 *
 * Hits take no lock and write no line shared with other CPUs: a
 * direct-mapped hint table (request page -> region last hit), else a sorted
 * array with a 16-key summary level (O(log n)); the reference is one atomic
 * add on the calling CPU's counter entry (reference counts are sharded by
 * CPU, a region's count is their sum), and a candidate is kept iff the
 * region's flags, loaded after that add, say it is cached. Regions are
 * type-stable, so stale candidates are harmless. A registration may be put
 * from another thread than the one that got it.
 * Statistics are per-thread shards (exact for up to 64 threads; beyond, two
 * threads may share a shard and lose a count). Misses, eviction and
 * invalidation serialise on one mutex (registration dominates them anyway).
 * Thread safety: every call may be made from any thread.
 *
 * Capacity (regions and bytes) comes from the device (verbs: max_mr) or the
 * backend's limits, minus LOCUS_REG_RESERVE percent, unless LOCUS_REG_MAX_*
 * or the attributes say otherwise. When a miss would exceed it, the least
 * recently used unused regions are deregistered until 1/32 of the capacity
 * is free ("recently" at the resolution of misses: hits between two misses
 * tie). If every region is in use the get fails with LOCUS_ERR_NO_SPACE.
 *
 * Invalidation (see docs/ARCHITECTURE.md, "reg"). A cached registration
 * must not outlive the memory it covers. Two ways to say that memory went:
 *  - the memory hooks, liblocus_hooks: an opt-in library of its own (liblocus
 *    itself interposes nothing). Link it (-llocus_hooks, pkg-config
 *    locus-hooks, CMake find_package(locus COMPONENTS hooks) + locus::hooks)
 *    or preload it (LD_PRELOAD=liblocus_hooks.so). It interposes munmap,
 *    mremap, madvise(DONTNEED/FREE/REMOVE/DONTNEED_LOCKED), mmap(MAP_FIXED),
 *    brk/sbrk (shrink), shmdt and shmat(SHM_REMAP), chaining to the next
 *    definition (dlsym RTLD_NEXT) so other hook libraries still see the
 *    calls; with glibc malloc also free, realloc and malloc_trim, to catch
 *    chunks glibc unmaps or trims internally (mmapped chunks, main-arena brk
 *    trim). Every cache created while it is present subscribes to it. Not
 *    covered: raw syscalls, glibc's non-main arena heap shrink, allocators
 *    that unmap through raw syscalls (sanitizer runtimes).
 *  - locus_reg_invalidate(), which always works. Without the hooks it is
 *    the only way: the program must call it whenever it unmaps, frees or
 *    remaps registered memory (before its next get there), or that get may
 *    return the registration of the old pages.
 * A cache knows which case it is in: at create it looks for the hooks and,
 * if they are absent (or loaded too late to see the program's calls:
 * dlopen), says so in locus_reg_notes() and sets stats.hooks = false. A
 * runtime that cannot invalidate explicitly should check stats.hooks after
 * create and refuse to run without them.
 * An invalidated region is never returned again; it is deregistered once
 * unused (at the next cache operation: the hooks never call the backend).
 */
#ifndef LOCUS_REG_H
#define LOCUS_REG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <locus/status.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct locus_heap locus_heap_t;
typedef struct locus_reg_cache locus_reg_cache_t;

/* Access rights; the verbs backend maps them to IBV_ACCESS_* (REMOTE_WRITE
 * and REMOTE_ATOMIC imply LOCAL_WRITE, as verbs requires). 0 = local read. */
enum {
    LOCUS_REG_LOCAL_WRITE   = 1,
    LOCUS_REG_REMOTE_WRITE  = 2,
    LOCUS_REG_REMOTE_READ   = 4,
    LOCUS_REG_REMOTE_ATOMIC = 8,
    LOCUS_REG_ACCESS_ALL    = 15,
};

/* Order matches LOCUS_REG_BACKEND. */
typedef enum locus_reg_backend {
    LOCUS_REG_BACKEND_AUTO  = 0, /* verbs if a device exists, else pin */
    LOCUS_REG_BACKEND_VERBS = 1, /* ibv_reg_mr / ibv_dereg_mr */
    LOCUS_REG_BACKEND_PIN   = 2, /* mlock / munlock */
    LOCUS_REG_BACKEND_NULL  = 3, /* configurable cost, nothing pinned */
} locus_reg_backend_t;

/* A registration. Read-only for the caller; valid until its put. */
typedef struct locus_reg {
    void *addr;      /* page-aligned start of the registered region */
    size_t length;   /* bytes */
    uint32_t lkey, rkey; /* verbs keys (pin/null: an id) */
    void *mr;        /* struct ibv_mr * (verbs), else NULL */
    unsigned access; /* LOCUS_REG_* rights it was registered with */
    uint64_t id;     /* unique per registration within the cache */
} locus_reg_t;

/* Null backend events, for tests: called under the cache's lock. */
typedef enum { LOCUS_REG_EV_REGISTER = 0, LOCUS_REG_EV_DEREGISTER = 1 } locus_reg_event_t;
typedef void (*locus_reg_event_fn)(void *arg, locus_reg_event_t ev, const locus_reg_t *reg);

typedef struct locus_reg_attr {
    locus_reg_backend_t backend;
    const char *device;    /* verbs device name; NULL = LOCUS_REG_DEVICE or the first */
    void *pd;              /* verbs: register on this struct ibv_pd * (NULL = own PD) */
    uint64_t max_regions;  /* 0 = device/backend limit minus the reserve */
    uint64_t max_bytes;    /* 0 = memlock limit (or 3/4 of RAM) minus the reserve */
    uint64_t merge_max;    /* largest region built by merging; 0 = never merge */
    int reserve_pct;       /* capacity kept free for others, percent */
    bool odp;              /* verbs: IBV_ACCESS_ON_DEMAND when the device reports ODP */
    uint64_t null_ns;      /* null backend: busy time per registration ... */
    uint64_t null_ns_per_mib; /* ... plus this per MiB */
    locus_reg_event_fn null_event; /* null backend: optional observer */
    void *null_event_arg;
} locus_reg_attr_t;

typedef struct locus_reg_stats {
    uint64_t gets;            /* = hits + misses + failed */
    uint64_t hits, misses, failed;
    uint64_t merges;          /* cached regions absorbed into a larger one */
    uint64_t replaced;        /* overlapping regions dropped because the union exceeded merge_max */
    uint64_t evictions;       /* unused regions deregistered for capacity */
    uint64_t invalidations;   /* regions invalidated (hooks or locus_reg_invalidate) */
    uint64_t invalidate_calls;/* ranges reported (hooks + explicit) */
    uint64_t registrations, deregistrations; /* backend calls */
    uint64_t bytes_registered;   /* cumulative bytes passed to the backend */
    uint64_t regions, bytes;     /* registered now (cached, detached, static) */
    uint64_t cached;             /* regions in the index now */
    uint64_t static_regions, static_bytes;
    uint64_t max_regions, max_bytes; /* capacity in effect */
    uint64_t merge_max, max_region_bytes;
    const char *backend;      /* "verbs", "pin", "null" */
    const char *device;       /* verbs device name, else "" */
    bool odp;                 /* registrations use on-demand paging */
    bool hooks;               /* liblocus_hooks reports unmaps to this cache; false: only
                                 locus_reg_invalidate does (the notes say why) */
} locus_reg_stats_t;

/* Defaults: auto backend, capacity from the device, merge_max 64 MiB,
 * reserve 10 %, ODP when offered, a free null backend. */
LOCUS_API void locus_reg_attr_init(locus_reg_attr_t *attr);
/* Override attr from the LOCUS_REG_* variables that are set. A bad value
 * leaves attr unchanged and returns LOCUS_ERR_INVALID/RANGE naming it. */
LOCUS_API locus_status_t locus_reg_attr_from_env(locus_reg_attr_t *attr);

/* Open the backend, size the cache, subscribe to the memory hooks if the
 * program has them (else a note). LOCUS_ERR_NO_DEVICE if the verbs backend
 * finds no device (or not the named one). */
LOCUS_API locus_status_t locus_reg_cache_create(const locus_reg_attr_t *attr, locus_reg_cache_t **out);
/* Deregister everything (even regions still held) and free. Safe with NULL. */
LOCUS_API void locus_reg_cache_destroy(locus_reg_cache_t *cache);

/* Get a registration covering [addr, addr+len) with at least `access`.
 * Errors: LOCUS_ERR_INVALID (NULL, length 0, unknown access bits, memory not
 * mapped), LOCUS_ERR_RANGE (addr + len overflows, longer than the device's
 * largest region), LOCUS_ERR_NO_SPACE (capacity full of regions in use). */
LOCUS_API locus_status_t locus_reg_get(locus_reg_cache_t *cache, const void *addr, size_t len,
                                       unsigned access, const locus_reg_t **out);
/* Release a registration obtained by get (static registrations: no-op). */
LOCUS_API void locus_reg_put(locus_reg_cache_t *cache, const locus_reg_t *reg);

/* Static mode: register [base, base+len) once, for the cache's lifetime (or
 * until it is unmapped); gets inside it hit without touching a refcount. */
LOCUS_API locus_status_t locus_reg_static(locus_reg_cache_t *cache, void *base, size_t len,
                                          unsigned access);
/* Register a locus heap (after its fault-in) as a static region. */
LOCUS_API locus_status_t locus_reg_static_heap(locus_reg_cache_t *cache, const locus_heap_t *heap,
                                               unsigned access);

/* Forget every registration overlapping [addr, addr+len): they are never
 * returned again and are deregistered once unused. cache NULL = all caches. */
LOCUS_API locus_status_t locus_reg_invalidate(locus_reg_cache_t *cache, const void *addr, size_t len);
/* Deregister every unused cached region (keeps static and held ones). */
LOCUS_API locus_status_t locus_reg_flush(locus_reg_cache_t *cache);

LOCUS_API locus_status_t locus_reg_stats(const locus_reg_cache_t *cache, locus_reg_stats_t *out);
/* Fallbacks taken at create ("no RDMA device: pin backend", "memory hooks
 * absent ..."), one per line; "" if none. */
LOCUS_API const char *locus_reg_notes(const locus_reg_cache_t *cache);
/* The verbs protection domain (struct ibv_pd *), NULL for other backends. */
LOCUS_API void *locus_reg_pd(const locus_reg_cache_t *cache);

LOCUS_API const char *locus_reg_backend_name(locus_reg_backend_t b);

#ifdef __cplusplus
}
#endif
#endif
