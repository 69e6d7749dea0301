/* Internals of the registration cache. */
#ifndef LOCUS_REG_INTERNAL_H
#define LOCUS_REG_INTERNAL_H

#include <locus/reg.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* ref word of a region: low bits count holders, plus flags. A hit is valid
 * iff the add that took its reference saw INDEXED without DEAD/FREED: the
 * region was then registered and cached, and the reference keeps it from
 * being released or reused. A region leaves the index with INDEXED cleared
 * and DEAD set; whoever moves DEAD|1 -> DEAD|0 (or
 * sets DEAD on a count of 0) claims the release with a CAS to DEAD|FREED. */
#define REG_DEAD  (1ull << 62)
#define REG_FREED (1ull << 61)
#define REG_INDEXED (1ull << 60) /* in the index and registered: a hit may use it */
#define REG_FLAGS (REG_DEAD | REG_FREED | REG_INDEXED)
#define REG_COUNT ((1ull << 48) - 1)

typedef struct reg_region {
    /* first cache line: everything a hit and a put touch */
    _Alignas(64) _Atomic uint64_t ref;
    uint64_t last_use;         /* miss tick of the last get */
    uint64_t start, end;       /* page-aligned [start, end) */
    unsigned acc;              /* = pub.access */
    bool is_static;
    /* second line: the handle callers read, then cold fields */
    _Alignas(64) locus_reg_t pub;
    void *bh;                  /* backend handle */
    struct reg_region *next;   /* free list / release list */
    struct reg_region *lnext, *lprev; /* every registered region (destroy, pin relock) */
} reg_region_t;

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
    _Atomic(reg_region_t *) *hint;       /* direct-mapped: hash(request page) -> region last hit */
    size_t hint_mask;
    _Atomic size_t n;                    /* entries in the index */
    _Atomic uint32_t pending_n;          /* queued invalidations (hit path goes slow) */
    _Atomic int nstatic;
    reg_region_t *statics[REG_MAX_STATIC];
    _Atomic uint64_t tick;

    /* --- slow path, under lock --- */
    _Alignas(64) pthread_mutex_t lock;
    reg_region_t *free_list, *release_list;
    reg_region_t *live;                  /* every registered region */
    bool destroying;
    uint64_t slow_hits;
    void **slabs; size_t nslabs, slabs_cap;
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
    char notes[512];
    int slot;                            /* in the hooks' cache table */

    reg_shard_t shards[REG_SHARDS];
};

/* reg_backend.c */
locus_status_t reg_backend_open(locus_reg_cache_t *c, const locus_reg_attr_t *a,
                                uint64_t *dev_max_regions, uint64_t *dev_max_region_bytes);

void *reg_backend_pd(const locus_reg_cache_t *c);

/* reg_hooks.c: the table of live caches the memory hooks invalidate. */
int reg_hooks_add(locus_reg_cache_t *c);
void reg_hooks_remove(locus_reg_cache_t *c);
void reg_hooks_invalidate_all_caches(uint64_t s, uint64_t e);

/* reg.c: invalidation entry used by the hooks; never blocks, never calls the backend. */
void reg_invalidate_from_hook(locus_reg_cache_t *c, uint64_t s, uint64_t e);

static inline reg_region_t *reg_of(const locus_reg_t *pub)
{
    return (reg_region_t *)((char *)pub - offsetof(reg_region_t, pub));
}

static inline uint64_t reg_page_down(uint64_t a) { return a & ~4095ull; }
static inline uint64_t reg_page_up(uint64_t a) { return (a + 4095) & ~4095ull; }

#endif
