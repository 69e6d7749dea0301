/* Internals of the registration cache: its data structures and the calls
 * between its files (the list below). */
#ifndef LOCUS_REG_INTERNAL_H
#define LOCUS_REG_INTERNAL_H

#include <locus/reg.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include "core/clock.h"
#include "core/notes.h"
#include "hooks/hooks.h"

#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Reference counts are sharded by CPU (reg_refs.h): a hit writes only its
 * CPU's counter entry, never the region's own lines, so two threads hitting
 * the same regions do not bounce a line between cores. A slab is one block:
 * the counter entries of its REG_SLAB regions (entry s of region i at
 * [s * REG_SLAB + i]), then the REG_SLAB region structs. The entries of 8
 * regions share a line that only CPUs of shard s write. A region's entries
 * are found from its address and its slot i in the slab (REG_SLAB = 64, so
 * the hint table stores i in the low bits of the 64-byte aligned region
 * pointer and a hint hit has no load to wait for before its atomic add). A
 * region's count is the sum over shards, mod 2^32 (a get on one CPU and its
 * put on another is fine: only the sum matters). */
#define REG_SLAB 64
#define REG_MAX_CNT_SHARDS 16

typedef struct reg_cnt {
    _Atomic uint32_t n;        /* gets minus puts made through this shard, mod 2^32 */
    _Atomic uint32_t tick;     /* low 32 bits of the miss tick at this shard's last hit */
} reg_cnt_t;

/* flags word of a region: low bits below, a generation above (+1 per reuse
 * of the struct, so a release claim cannot succeed on a later life). A hit
 * is valid iff, after its counter add, it loads the flags with INDEXED alone
 * (Dekker with the releaser, see reg_refs.h). A region leaves the index with
 * DEAD set; whoever then sees a summed count of 0 claims the release with a
 * CAS from the flags value it loaded before summing to that value | FREED. */
#define REG_DEAD  (1ull << 2)
#define REG_FREED (1ull << 1)
#define REG_INDEXED (1ull << 0) /* in the index and registered: a hit may use it */
#define REG_FLAGS (REG_DEAD | REG_FREED | REG_INDEXED)
#define REG_GEN   (1ull << 8)   /* generation unit */

typedef struct reg_region {
    /* first cache line: what a hit and a put read; written only under the
     * lock (and by the release claim), so every core keeps a shared copy */
    _Alignas(64) _Atomic uint64_t flags;
    unsigned acc;              /* = pub.access */
    uint64_t start, end;       /* page-aligned [start, end) */
    uint32_t slot;             /* index in its slab, < REG_SLAB; fixed */
    bool is_static;
    /* second line: the handle callers read, then cold fields */
    _Alignas(64) locus_reg_t pub;
    void *bh;                  /* backend handle */
    struct reg_region *next;   /* free list / release list */
    struct reg_region *lnext, *lprev; /* every registered region (destroy, pin relock) */
} reg_region_t;
/* next of a region chosen for eviction, until it leaves the index (reg_evict.c) */
#define REG_EVICT_MARK ((reg_region_t *)1)
_Static_assert(REG_SLAB <= 64 && sizeof(reg_region_t) % 64 == 0,
               "the hint table keeps a region's slot in the low 6 bits of its 64-byte aligned address");

/* Sorted, non-overlapping index. Arrays are padded with UINT64_MAX starts to
 * a multiple of 16; l1[j] = start[16 j]. Readers use them without a lock,
 * validated by the cache's sequence counter; arrays are never freed before
 * the cache (a grown copy replaces them). */
typedef struct reg_index {
    uint64_t *start, *end;
    reg_region_t **reg;
    uint64_t *l1;
    size_t cap;                /* multiple of 16 */
    struct reg_index *older;   /* retired arrays, freed at destroy */
} reg_index_t;

typedef struct reg_backend_ops {
    const char *name;
    /* Register [addr, addr+len); fills pub.lkey/rkey/mr and *bh. */
    locus_status_t (*reg)(void *ctx, reg_region_t *r);
    void (*dereg)(void *ctx, reg_region_t *r);
    void (*close)(void *ctx);
    bool pages_shared;         /* pin: munlock is not refcounted per range ... */
    void (*relock)(void *ctx, uint64_t s, uint64_t e); /* ... so re-pin what others still cover */
} reg_backend_ops_t;

#define REG_SHARDS 64
typedef struct {
    _Alignas(64) uint64_t hits;
    uint64_t fast_fail;        /* hit path gave up (counted as a miss later) */
} reg_shard_t;

#define REG_MAX_STATIC 8
#define REG_PENDING 64

struct locus_reg_cache {
    /* --- read-mostly: the hit path --- */
    _Alignas(64) _Atomic uint64_t seq;   /* odd while the index changes */
    _Atomic(reg_index_t *) idx;
    _Atomic uintptr_t *hint;             /* direct-mapped: hash(request page) -> region last hit | slot */
    size_t hint_mask;
    unsigned cnt_mask;                   /* counter shards - 1 (a power of two) */
    long rseq_cpu_off;                   /* thread pointer -> rseq.cpu_id, or -1: no rseq */
    _Atomic size_t n;                    /* entries in the index */
    _Atomic uint32_t pending_n;          /* queued invalidations (hit path goes slow) */
    _Atomic int nstatic;
    reg_region_t *statics[REG_MAX_STATIC];
    _Atomic uint64_t tick;               /* misses so far: the LRU clock */

    /* --- slow path, under lock --- */
    _Alignas(64) pthread_mutex_t lock;
    reg_region_t *free_list, *release_list;
    reg_region_t *live;                  /* every registered region */
    bool destroying;
    uint64_t slow_hits;
    void **slabs; size_t nslabs, slabs_cap; /* REG_SLAB regions, then their counter entries */
    uint64_t next_id;
    uint64_t regions, bytes;             /* registered now */
    uint64_t max_regions, max_bytes, merge_max, max_region_bytes;
    uint64_t misses, failed, merges, replaced, evictions, invalidations, invalidate_calls;
    uint64_t registrations, deregistrations, bytes_registered;

    /* pending invalidations from hooks that found the lock busy */
    _Alignas(64) atomic_flag pend_lock;
    uint64_t pend_s[REG_PENDING], pend_e[REG_PENDING];
    unsigned pend_count;
    bool pend_overflow;

    const reg_backend_ops_t *ops;
    void *bctx;
    locus_reg_backend_t backend;
    char device[64];
    bool odp;
    lc_notes_t notes;
    locus_hooks_sub_t hsub;              /* our subscription to liblocus_hooks */
    void (*hooks_unsubscribe)(locus_hooks_sub_t *); /* NULL: not subscribed */
    struct locus_reg_cache *cnext;       /* the list of live caches (reg_hooks.c) */

    reg_shard_t shards[REG_SHARDS];
};

/* ---------- who does what (each file says why in its own header) ----------
 *   reg_refs.h       reference counts: the per-CPU counter entries (inline)
 *   reg_region.c     region lifecycle: slabs, allocation, death, release
 *   reg_index.h/.c   the sorted index, its seqlock, its summary level
 *   reg_evict.c      capacity: LRU eviction, flush
 *   reg_invalidate.c invalidation: explicit, from the hooks, the pending queue
 *   reg_get.c        the public get/put path (lock-free hits)
 *   reg_register.c   a miss under the lock, static mode
 *   reg_cache.c      attributes, create, destroy, stats
 *   reg_hooks.c      the subscription to liblocus_hooks; the list of caches
 *   reg_backend.c    verbs / pin / null backends */

/* reg_backend.c */
locus_status_t reg_backend_open(locus_reg_cache_t *c, const locus_reg_attr_t *a,
                                uint64_t *dev_max_regions, uint64_t *dev_max_region_bytes);
void *reg_backend_pd(const locus_reg_cache_t *c);

/* reg_region.c (all under the cache's lock unless said otherwise) */
reg_region_t *reg_region_alloc(locus_reg_cache_t *c);
void reg_region_recycle(locus_reg_cache_t *c, reg_region_t *r);
bool reg_claim(reg_region_t *r, uint64_t f);           /* any thread */
void reg_mark_dead(locus_reg_cache_t *c, reg_region_t *r);
void reg_live_add(locus_reg_cache_t *c, reg_region_t *r);
void reg_region_release(locus_reg_cache_t *c, reg_region_t *r);
void reg_reap(locus_reg_cache_t *c);
uint64_t reg_last_use(const locus_reg_cache_t *c, const reg_region_t *r, uint64_t now);
void reg_lock(locus_reg_cache_t *c);     /* lock, apply queued invalidations, release the dead */
void reg_unlock(locus_reg_cache_t *c);   /* the same, then unlock */

/* reg_index.c (under the lock) */
void reg_seq_begin(locus_reg_cache_t *c);
void reg_seq_end(locus_reg_cache_t *c);
locus_status_t reg_idx_reserve(locus_reg_cache_t *c, size_t n);
void reg_idx_replace(locus_reg_cache_t *c, size_t i, size_t j, reg_region_t *r);
void reg_idx_run(const locus_reg_cache_t *c, uint64_t s, uint64_t e, bool adjacent, long *lo, long *hi);
void reg_idx_drop_marked(locus_reg_cache_t *c);
void reg_idx_free_all(reg_index_t *x);

/* reg_evict.c */
void reg_evict(locus_reg_cache_t *c, uint64_t need_r, uint64_t need_b, bool flush);

/* reg_invalidate.c. reg_invalidate_from_hook never blocks and never calls the backend. */
void reg_invalidate_locked(locus_reg_cache_t *c, uint64_t s, uint64_t e, bool statics);
void reg_process_pending(locus_reg_cache_t *c);
void reg_invalidate_from_hook(locus_reg_cache_t *c, uint64_t s, uint64_t e);

/* reg_register.c: a get that missed the lock-free path */
locus_status_t reg_get_slow(locus_reg_cache_t *c, uint64_t a, uint64_t e, unsigned access,
                            const locus_reg_t **out);
locus_status_t reg_bad_get(const void *addr, size_t len, unsigned access);

/* reg_hooks.c: subscribe to liblocus_hooks (if the program has it), and the
 * list of live caches that locus_reg_invalidate(NULL, ...) reaches. */
void reg_hooks_attach(locus_reg_cache_t *c);
void reg_hooks_detach(locus_reg_cache_t *c);
void reg_invalidate_all_caches(uint64_t s, uint64_t e);

static inline bool reg_bad_args(uint64_t a, size_t len, unsigned access)
{
    return !a || !len || (access & ~(unsigned)LOCUS_REG_ACCESS_ALL) || a + len < a ||
           a + len > UINT64_MAX - 4096;
}

static inline reg_region_t *reg_of(const locus_reg_t *pub)
{
    return (reg_region_t *)((char *)pub - offsetof(reg_region_t, pub));
}

static inline uint64_t reg_page_down(uint64_t a) { return a & ~4095ull; }
static inline uint64_t reg_page_up(uint64_t a) { return (a + 4095) & ~4095ull; }

#endif
