/* Registering, under the lock: a get that missed the lock-free path, and
 * static mode.
 *
 * A miss: look again under the lock (a hit that the hit path could not
 * take: queued invalidations, a busy index); else make room (reg_evict.c),
 * plan the region - the union with the cached regions it overlaps or
 * touches if that is at most merge_max bytes, else the request alone, the
 * overlapping ones leaving the index - register it with the backend and
 * publish it in place of the ones it replaces. If the backend fails: full
 * device -> flush every unused region and retry once; a failed union (a
 * neighbour's pages are gone) -> the request alone. */
#include "reg/reg_index.h"
#include "reg/reg_refs.h"
#include "core/error.h"

#include <locus/heap.h>

locus_status_t reg_bad_get(const void *addr, size_t len, unsigned access)
{
    if (!addr)
        return lc_err(LOCUS_ERR_INVALID, "address NULL: expected the start of mapped memory");
    if (!len)
        return lc_err(LOCUS_ERR_INVALID, "length 0 at %p: expected > 0 bytes", addr);
    if (access & ~(unsigned)LOCUS_REG_ACCESS_ALL)
        return lc_err(LOCUS_ERR_INVALID,
                         "access flags 0x%x: accepted LOCUS_REG_LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ|"
                         "REMOTE_ATOMIC (0x0-0xf)", access);
    return lc_err(LOCUS_ERR_RANGE, "address %p + length %zu overflows the address space", addr, len);
}

/* ---------- registering a region ---------- */

/* A fresh region for [s, e) with `acc`, not yet registered; NULL if out of memory. */
static reg_region_t *region_new(locus_reg_cache_t *c, uint64_t s, uint64_t e, unsigned acc, bool is_static)
{
    reg_region_t *r = reg_region_alloc(c);
    if (!r)
        return NULL;
    r->is_static = is_static;
    r->start = s;
    r->end = e;
    r->pub.addr = (void *)s;
    r->pub.length = e - s;
    r->pub.access = r->acc = acc;
    return r;
}

/* Register r with the backend and count it; on failure r goes back to the free list. */
static locus_status_t region_register(locus_reg_cache_t *c, reg_region_t *r)
{
    locus_status_t st = c->ops->reg(c->bctx, r);
    if (st != LOCUS_OK) {
        atomic_fetch_or_explicit(&r->flags, REG_DEAD | REG_FREED, memory_order_relaxed);
        r->is_static = false;
        reg_region_recycle(c, r);
        return st;
    }
    reg_live_add(c, r);
    c->regions++;
    c->bytes += r->end - r->start;
    c->registrations++;
    c->bytes_registered += r->end - r->start;
    return LOCUS_OK;
}

static locus_status_t no_memory(void)
{
    return lc_err(LOCUS_ERR_NO_MEMORY, "registration cache: out of memory");
}

/* ---------- a miss ---------- */

/* A get that the lock-free path did not take but the index can serve. */
static bool hit_locked(locus_reg_cache_t *c, uint64_t a, uint64_t e, unsigned access, const locus_reg_t **out)
{
    reg_index_t *x = atomic_load_explicit(&c->idx, memory_order_relaxed);
    long i = reg_idx_find(x, atomic_load_explicit(&c->n, memory_order_relaxed), a);
    if (i < 0 || x->end[i] < e || (access & ~x->reg[i]->acc))
        return false;
    /* INDEXED, and the lock keeps it so (hooks only queue while we hold it) */
    reg_cnt_get_locked(c, x->reg[i], atomic_load_explicit(&c->tick, memory_order_relaxed));
    c->slow_hits++;
    *out = &x->reg[i]->pub;
    return true;
}

/* What a miss registers and which index entries it replaces. */
typedef struct {
    uint64_t s, e;         /* the region */
    unsigned acc;
    long lo, hi;           /* entries it replaces: [lo, hi], none if hi < lo */
    bool merge;            /* the union of the request and entries [lo, hi] */
} plan_t;

static plan_t plan(const locus_reg_cache_t *c, uint64_t s, uint64_t e, unsigned access, bool nomerge)
{
    const reg_index_t *x = atomic_load_explicit(&c->idx, memory_order_relaxed);
    plan_t p = {s, e, access, 0, -1, false};
    reg_idx_run(c, s, e, true, &p.lo, &p.hi); /* overlapping or adjacent */
    for (long k = p.lo; k <= p.hi; k++) {
        if (x->start[k] < p.s) p.s = x->start[k];
        if (x->end[k] > p.e) p.e = x->end[k];
        p.acc |= x->reg[k]->acc;
    }
    p.merge = !nomerge && p.hi >= p.lo && c->merge_max && p.e - p.s <= c->merge_max &&
              p.e - p.s <= c->max_region_bytes;
    if (!p.merge) {
        p.s = s; p.e = e; p.acc = access;
        /* keep merely adjacent neighbours; overlapping ones must leave the index */
        while (p.lo <= p.hi && x->end[p.lo] <= s) p.lo++;
        while (p.hi >= p.lo && x->start[p.hi] >= e) p.hi--;
    }
    return p;
}

static locus_status_t check_room(const locus_reg_cache_t *c, const plan_t *p)
{
    if (c->regions + 1 <= c->max_regions && c->bytes + (p->e - p->s) <= c->max_bytes)
        return LOCUS_OK;
    return lc_err(LOCUS_ERR_NO_SPACE,
                  "registration cache full: %llu regions / %llu bytes registered and in use "
                  "(capacity %llu regions / %llu bytes, LOCUS_REG_MAX_REGIONS/MAX_BYTES)",
                  (unsigned long long)c->regions, (unsigned long long)c->bytes,
                  (unsigned long long)c->max_regions, (unsigned long long)c->max_bytes);
}

/* r, registered and referenced, replaces entries [lo, hi] in the index. */
static void publish(locus_reg_cache_t *c, const plan_t *p, reg_region_t *r)
{
    reg_cnt_get_locked(c, r, atomic_fetch_add_explicit(&c->tick, 1, memory_order_relaxed) + 1);
    c->misses++;
    reg_index_t *x = atomic_load_explicit(&c->idx, memory_order_relaxed);
    size_t drop = p->hi >= p->lo ? (size_t)(p->hi - p->lo + 1) : 0;
    size_t pos = p->hi >= p->lo ? (size_t)p->lo : (size_t)(p->hi + 1);
    reg_seq_begin(c);
    /* DEAD inside the write section: no reader can validate against it */
    for (size_t k = 0; k < drop; k++)
        reg_mark_dead(c, x->reg[pos + k]);
    reg_idx_replace(c, pos, pos + drop, r);
    atomic_fetch_or_explicit(&r->flags, REG_INDEXED, memory_order_seq_cst);
    reg_seq_end(c);
    if (p->merge) c->merges += drop;
    else c->replaced += drop;
}

/* Register and publish [s, e) (page aligned), retrying as the header says. */
static locus_status_t miss(locus_reg_cache_t *c, uint64_t s, uint64_t e, unsigned access, const locus_reg_t **out)
{
    bool nomerge = false;
    for (int attempt = 0;; attempt++) {
        plan_t p = plan(c, s, e, access, nomerge);
        size_t n = atomic_load_explicit(&c->n, memory_order_relaxed);
        locus_status_t st = check_room(c, &p);
        if (st == LOCUS_OK)
            st = reg_idx_reserve(c, n + 1);
        if (st != LOCUS_OK)
            return st;
        reg_region_t *r = region_new(c, p.s, p.e, p.acc, false);
        if (!r)
            return no_memory();
        if ((st = region_register(c, r)) == LOCUS_OK) {
            publish(c, &p, r);
            *out = &r->pub;
            return LOCUS_OK;
        }
        if (st == LOCUS_ERR_NO_SPACE && attempt == 0 && n) {
            reg_evict(c, 0, 0, true); /* the device is full: drop every unused region, retry */
            continue;
        }
        if (!p.merge || attempt >= 2)
            return st;
        nomerge = true; /* the union failed (e.g. a neighbour's pages are gone): the request alone */
    }
}

locus_status_t reg_get_slow(locus_reg_cache_t *c, uint64_t a, uint64_t e, unsigned access,
                            const locus_reg_t **out)
{
    reg_lock(c);
    if (hit_locked(c, a, e, access, out)) {
        reg_unlock(c);
        return LOCUS_OK;
    }
    uint64_t s = reg_page_down(a), en = reg_page_up(e);
    locus_status_t st;
    if (en - s > c->max_region_bytes) {
        st = lc_err(LOCUS_ERR_RANGE, "length %llu: larger than the device's largest region (%llu bytes)",
                    (unsigned long long)(e - a), (unsigned long long)c->max_region_bytes);
    } else {
        reg_evict(c, 1, en - s, false);
        st = miss(c, s, en, access, out);
    }
    if (st != LOCUS_OK)
        c->failed++;
    reg_unlock(c);
    return st;
}

/* ---------- static mode ---------- */

locus_status_t locus_reg_static(locus_reg_cache_t *c, void *base, size_t len, unsigned access)
{
    uint64_t a = (uintptr_t)base;
    if (!c)
        return lc_err(LOCUS_ERR_INVALID, "cache NULL: expected a registration cache");
    if (reg_bad_args(a, len, access))
        return reg_bad_get(base, len, access);
    reg_lock(c);
    locus_status_t st = LOCUS_OK;
    int ns = atomic_load_explicit(&c->nstatic, memory_order_relaxed);
    uint64_t s = reg_page_down(a), e = reg_page_up(a + len);
    if (ns == REG_MAX_STATIC) {
        st = lc_err(LOCUS_ERR_NO_SPACE, "static regions: %d already registered (the most accepted)", ns);
    } else if (e - s > c->max_region_bytes) {
        st = lc_err(LOCUS_ERR_RANGE, "static region of %llu bytes: larger than the device's largest "
                    "region (%llu bytes)", (unsigned long long)(e - s), (unsigned long long)c->max_region_bytes);
    } else {
        reg_region_t *r = region_new(c, s, e, access, true);
        if (!r) {
            st = no_memory();
        } else if ((st = region_register(c, r)) == LOCUS_OK) {
            c->statics[ns] = r;
            atomic_store_explicit(&c->nstatic, ns + 1, memory_order_release);
        }
    }
    reg_unlock(c);
    return st;
}

locus_status_t locus_reg_static_heap(locus_reg_cache_t *c, const locus_heap_t *heap, unsigned access)
{
    if (!heap)
        return lc_err(LOCUS_ERR_INVALID, "heap NULL: expected a heap from locus_heap_create");
    return locus_reg_static(c, locus_heap_base(heap), (size_t)locus_heap_size(heap), access);
}
