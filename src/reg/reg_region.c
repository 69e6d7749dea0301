/* Region lifecycle: slabs of type-stable region structs (with their counter
 * entries, see reg_refs.h), allocation and recycling, death (out of the
 * index: DEAD), the release claim and the deregistration that follows, and
 * the lock that every change of the cache is made under. */
#include "reg/reg_refs.h"

#include <stdlib.h>
#include <string.h>

__thread unsigned reg_tls_cnt_shard;
static _Atomic unsigned cnt_shard_next;

unsigned reg_cnt_shard_pick(void)
{
    unsigned s = atomic_fetch_add_explicit(&cnt_shard_next, 1, memory_order_relaxed) % REG_MAX_CNT_SHARDS + 1;
    reg_tls_cnt_shard = s;
    return s;
}

/* ---------- slabs ---------- */

/* One more slab: (cnt_mask + 1) shards of REG_SLAB counter entries, then
 * REG_SLAB regions, all on the free list. */
static bool slab_add(locus_reg_cache_t *c)
{
    if (c->nslabs == c->slabs_cap) {
        size_t cap = c->slabs_cap ? c->slabs_cap * 2 : 16;
        void **s = realloc(c->slabs, cap * sizeof *s);
        if (!s)
            return false;
        c->slabs = s;
        c->slabs_cap = cap;
    }
    size_t cbytes = (size_t)(c->cnt_mask + 1) * REG_SLAB * sizeof(reg_cnt_t);
    size_t size = cbytes + REG_SLAB * sizeof(reg_region_t);
    void *block = aligned_alloc(64, size);
    if (!block)
        return false;
    memset(block, 0, size);
    reg_region_t *slab = (reg_region_t *)((char *)block + cbytes);
    c->slabs[c->nslabs++] = block;
    for (int i = REG_SLAB - 1; i >= 0; i--) {
        atomic_init(&slab[i].flags, REG_DEAD | REG_FREED);
        slab[i].slot = (uint32_t)i;
        slab[i].next = c->free_list;
        c->free_list = &slab[i];
    }
    return true;
}

/* A fresh region (next generation, no flags, new id), or NULL. */
reg_region_t *reg_region_alloc(locus_reg_cache_t *c)
{
    if (!c->free_list && !slab_add(c))
        return NULL;
    reg_region_t *r = c->free_list;
    c->free_list = r->next;
    r->next = NULL;
    /* keep any stale reader's transient +1 (it is undone on the same entry):
     * never clear the counters; only restart the LRU clock of the entries */
    uint64_t now = atomic_load_explicit(&c->tick, memory_order_relaxed);
    for (unsigned s = 0; s <= c->cnt_mask; s++)
        atomic_store_explicit(&reg_cnt_at(c, r, s)->tick, (uint32_t)now, memory_order_relaxed);
    uint64_t gen = (atomic_load_explicit(&r->flags, memory_order_relaxed) & ~REG_FLAGS) + REG_GEN;
    atomic_store_explicit(&r->flags, gen, memory_order_seq_cst);
    r->bh = NULL;
    r->is_static = false;
    memset(&r->pub, 0, sizeof r->pub);
    r->pub.id = ++c->next_id;
    return r;
}

void reg_region_recycle(locus_reg_cache_t *c, reg_region_t *r)
{
    /* statics are never reused: holders may put them at any time */
    if (r->is_static)
        return;
    r->next = c->free_list;
    c->free_list = r;
}

/* ---------- death and release ---------- */

/* Claim the release of a region: f = its flags loaded (DEAD, not FREED)
 * before the sum that was 0. */
bool reg_claim(reg_region_t *r, uint64_t f)
{
    return atomic_compare_exchange_strong_explicit(&r->flags, &f, f | REG_FREED,
                                                   memory_order_seq_cst, memory_order_relaxed);
}

/* Out of the index (or statics) already, under the lock: flags = DEAD (C),
 * then the sum (D); a holder that remains releases it at its last put. */
void reg_mark_dead(locus_reg_cache_t *c, reg_region_t *r)
{
    uint64_t f = (atomic_load_explicit(&r->flags, memory_order_relaxed) & ~REG_FLAGS) | REG_DEAD;
    atomic_store_explicit(&r->flags, f, memory_order_seq_cst);
    if (reg_cnt_sum(c, r, memory_order_seq_cst) == 0 && reg_claim(r, f)) {
        r->next = c->release_list;
        c->release_list = r;
    }
}

/* Onto the list of registered regions (destroy walks it; pin re-locks from it). */
void reg_live_add(locus_reg_cache_t *c, reg_region_t *r)
{
    r->lprev = NULL;
    r->lnext = c->live;
    if (c->live)
        c->live->lprev = r;
    c->live = r;
}

static void live_remove(locus_reg_cache_t *c, reg_region_t *r)
{
    if (r->lprev) r->lprev->lnext = r->lnext;
    else c->live = r->lnext;
    if (r->lnext) r->lnext->lprev = r->lprev;
    r->lnext = r->lprev = NULL;
}

/* pin: munlock of r unlocked pages that other regions still cover: re-pin them. */
static void relock_overlaps(locus_reg_cache_t *c, const reg_region_t *r)
{
    for (reg_region_t *o = c->live; o; o = o->lnext) {
        uint64_t s = o->start > r->start ? o->start : r->start;
        uint64_t e = o->end < r->end ? o->end : r->end;
        if (s < e)
            c->ops->relock(c->bctx, s, e);
    }
}

/* Deregister; the caller owns r (claimed). */
void reg_region_release(locus_reg_cache_t *c, reg_region_t *r)
{
    c->ops->dereg(c->bctx, r);
    c->regions--;
    c->bytes -= r->end - r->start;
    c->deregistrations++;
    live_remove(c, r);
    if (c->ops->pages_shared && !c->destroying)
        relock_overlaps(c, r);
    reg_region_recycle(c, r);
}

/* Release the regions whose claim was won under the lock. */
void reg_reap(locus_reg_cache_t *c)
{
    while (c->release_list) {
        reg_region_t *r = c->release_list;
        c->release_list = r->next;
        reg_region_release(c, r);
    }
}

/* The miss tick of the region's last use: the most recent of the shards'
 * 32-bit ticks (ages beyond 2^32 misses alias; LRU precision only). */
uint64_t reg_last_use(const locus_reg_cache_t *c, const reg_region_t *r, uint64_t now)
{
    uint32_t best = UINT32_MAX;
    for (unsigned s = 0; s <= c->cnt_mask; s++) {
        uint32_t age = (uint32_t)now - atomic_load_explicit(&reg_cnt_at(c, r, s)->tick, memory_order_relaxed);
        if (age < best)
            best = age;
    }
    return now >= best ? now - best : 0;
}

/* ---------- the lock ---------- */

void reg_lock(locus_reg_cache_t *c)
{
    pthread_mutex_lock(&c->lock);
    reg_process_pending(c);
    reg_reap(c);
}

void reg_unlock(locus_reg_cache_t *c)
{
    reg_reap(c);
    reg_process_pending(c);
    reg_reap(c);
    pthread_mutex_unlock(&c->lock);
}
