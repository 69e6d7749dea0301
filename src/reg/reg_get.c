/* The public get/put path. A get tries, without a lock: the static regions,
 * the region this request's page hit last time (a direct-mapped hint
 * table), then the index under its seqlock; a candidate is kept iff, after
 * the reference is taken, its flags say it is cached (reg_refs.h). Anything
 * else - a miss, queued invalidations, a writer that keeps the index busy -
 * goes to reg_get_slow (reg_register.c). A put drops the reference and, if
 * the region died meanwhile and nobody holds it any more, releases it. */
#include "reg/reg_index.h"
#include "reg/reg_refs.h"
#include "core/error.h"

/* ---------- per-thread statistics shard ---------- */

/* The default TLS model, not initial-exec: one initial-exec variable marks
 * all of liblocus's TLS (about 40 KB) as static, and a process that loads
 * liblocus after start-up (dlopen: Python, Julia, R extensions) then fails
 * with "cannot allocate memory in static TLS block". */
static __thread unsigned tls_shard;
static _Atomic unsigned shard_next;

static inline reg_shard_t *my_shard(locus_reg_cache_t *c)
{
    unsigned s = tls_shard;
    if (UNLIKELY(!s)) {
        s = atomic_fetch_add_explicit(&shard_next, 1, memory_order_relaxed) % REG_SHARDS + 1;
        tls_shard = s;
    }
    return &c->shards[s - 1];
}

/* ---------- put ---------- */

/* A put's slow part: r was seen DEAD (flags f); release it if nobody holds it any more. */
static void __attribute__((noinline)) put_dead(locus_reg_cache_t *c, reg_region_t *r, uint64_t f)
{
    if (!(f & REG_FREED) && reg_cnt_sum(c, r, memory_order_seq_cst) == 0 && reg_claim(r, f)) {
        pthread_mutex_lock(&c->lock);
        reg_region_release(c, r);
        reg_unlock(c);
    }
}

/* -1 on entry s, then the release check (see reg_refs.h). */
static inline void cnt_put(locus_reg_cache_t *c, reg_region_t *r, unsigned s)
{
    atomic_fetch_sub_explicit(&reg_cnt_at(c, r, s)->n, 1, memory_order_seq_cst);
    uint64_t f = atomic_load_explicit(&r->flags, memory_order_seq_cst);
    if (UNLIKELY(f & REG_DEAD))
        put_dead(c, r, f);
}

void locus_reg_put(locus_reg_cache_t *c, const locus_reg_t *reg)
{
    reg_region_t *r = reg_of(reg);
    if (!c || !r || r->is_static)
        return;
    cnt_put(c, r, reg_cnt_shard(c));
}

/* ---------- get ---------- */

static inline size_t hint_hash(uint64_t a)
{
    return (size_t)(((a >> 12) * 0x9E3779B97F4A7C15ull) >> 40);
}

/* Take a reference on r through shard s and keep it if r is cached, covers
 * [a, e) and has the access; else drop it again on the same entry. r may be
 * stale (type-stable memory). Writes only shard s's entry line. */
static inline bool try_hit(locus_reg_cache_t *c, reg_region_t *r, uint32_t slot, uint64_t a, uint64_t e,
                           unsigned access, reg_shard_t *sh, unsigned s)
{
    reg_cnt_t *k = reg_cnt_at_slot(c, r, slot, s);
    /* the locked add orders every later load after it: start fetching r's
     * line now, so its miss overlaps the add's instead of following it */
    __builtin_prefetch(r, 0, 3);
    atomic_fetch_add_explicit(&k->n, 1, memory_order_seq_cst);                          /* A */
    if (LIKELY((atomic_load_explicit(&r->flags, memory_order_seq_cst) & REG_FLAGS) == REG_INDEXED && /* B */
               a >= r->start && e <= r->end && !(access & ~r->acc))) {
        reg_cnt_touch(k, atomic_load_explicit(&c->tick, memory_order_relaxed));
        sh->hits++;
        return true;
    }
    cnt_put(c, r, s);
    return false;
}

/* A static region covering [a, e) with the access (no reference taken), or NULL. */
static inline __attribute__((always_inline)) reg_region_t *hit_static(locus_reg_cache_t *c, uint64_t a,
                                                                      uint64_t e, unsigned access)
{
    int ns = atomic_load_explicit(&c->nstatic, memory_order_acquire);
    for (int i = 0; i < ns; i++) {
        reg_region_t *r = c->statics[i];
        if (a >= r->start && e <= r->end && !(access & ~r->acc) &&
            !(atomic_load_explicit(&r->flags, memory_order_relaxed) & REG_DEAD))
            return r;
    }
    return NULL;
}

/* The index under its seqlock: a referenced region (remembered in *slot),
 * or NULL when it gave a consistent "not cached" or stayed busy. */
static inline __attribute__((always_inline)) reg_region_t *hit_index(locus_reg_cache_t *c, uint64_t a,
    uint64_t e, unsigned access, reg_shard_t *sh, unsigned cs, _Atomic uintptr_t *slot)
{
    for (int tries = 0; tries < 8; tries++) {
        uint64_t s1 = atomic_load_explicit(&c->seq, memory_order_acquire);
        if (UNLIKELY(s1 & 1)) {
            __builtin_ia32_pause();
            continue;
        }
        size_t n = atomic_load_explicit(&c->n, memory_order_acquire);
        reg_index_t *x = atomic_load_explicit(&c->idx, memory_order_acquire);
        reg_region_t *r = reg_idx_reg_seq(x, reg_idx_find(x, n, a));
        if (r && try_hit(c, r, r->slot, a, e, access, sh, cs)) {
            atomic_store_explicit(slot, (uintptr_t)r | r->slot, memory_order_release);
            return r;
        }
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&c->seq, memory_order_relaxed) == s1)
            break; /* a consistent answer: not cached (or not enough access) */
    }
    return NULL;
}

/* The lock-free hit: the hint, then the index; a referenced region or NULL. */
static inline __attribute__((always_inline)) reg_region_t *hit_dynamic(locus_reg_cache_t *c, uint64_t a,
    uint64_t e, unsigned access, reg_shard_t *sh)
{
    unsigned cs = reg_cnt_shard(c);
    /* 1. the region this request page hit last time */
    _Atomic uintptr_t *slot = &c->hint[hint_hash(a) & c->hint_mask];
    uintptr_t h = atomic_load_explicit(slot, memory_order_acquire);
    if (LIKELY(h != 0)) {
        reg_region_t *r = (reg_region_t *)(h & ~(uintptr_t)(REG_SLAB - 1));
        if (LIKELY(try_hit(c, r, (uint32_t)(h & (REG_SLAB - 1)), a, e, access, sh, cs)))
            return r;
    }
    /* 2. the index */
    return hit_index(c, a, e, access, sh, cs, slot);
}

static locus_status_t __attribute__((noinline)) get_bad(locus_reg_cache_t *c, const void *addr, size_t len,
                                                        unsigned access)
{
    pthread_mutex_lock(&c->lock);
    c->failed++;
    pthread_mutex_unlock(&c->lock);
    return reg_bad_get(addr, len, access);
}

locus_status_t locus_reg_get(locus_reg_cache_t *c, const void *addr, size_t len, unsigned access,
                             const locus_reg_t **out)
{
    uint64_t a = (uintptr_t)addr, e = a + len;
    if (UNLIKELY(!c || !out))
        return lc_err(LOCUS_ERR_INVALID, "cache %p, out %p: expected non-NULL", (void *)c, (void *)out);
    if (UNLIKELY(reg_bad_args(a, len, access)))
        return get_bad(c, addr, len, access);
    reg_shard_t *sh = my_shard(c);
    reg_region_t *r = hit_static(c, a, e, access);
    if (r) {
        sh->hits++;
        *out = &r->pub;
        return LOCUS_OK;
    }
    if (LIKELY(!atomic_load_explicit(&c->pending_n, memory_order_acquire)) &&
        LIKELY((r = hit_dynamic(c, a, e, access, sh)) != NULL)) {
        *out = &r->pub;
        return LOCUS_OK;
    }
    return reg_get_slow(c, a, e, access, out);
}
