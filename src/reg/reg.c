/* Registration cache: lock-free hits over a seqlock-read sorted index,
 * misses/merges/eviction/invalidation under one mutex. */
#include "reg/reg_internal.h"
#include "core/config.h"
#include "core/error.h"

#include <locus/heap.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/rseq.h>
#include <unistd.h>

#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)

/* ---------- per-thread statistics shard ---------- */

static __thread unsigned tls_shard __attribute__((tls_model("initial-exec")));
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

/* ---------- reference counts ----------
 *
 * A region's reference count is sharded: shard s holds, for every region of
 * a slab, one reg_cnt_t that only CPUs with (cpu & cnt_mask) == s write. A
 * get adds 1 to its CPU's entry, a put subtracts 1 from its CPU's entry (not
 * necessarily the same one: a thread may migrate, a registration may be put
 * by another thread); the count is the sum over shards, mod 2^32. The shard
 * is the CPU the thread runs on (glibc's rseq area, one load), so threads
 * running at the same time on different CPUs never write the same line, in
 * whatever way they were created; without rseq, a per-thread round-robin
 * index. Either way the entries are atomics: sharing a shard costs speed,
 * never correctness.
 *
 * Validity (Dekker). All accesses below are seq_cst, so they have one total
 * order S.
 *   hit:      A: add +1 to entry[s]      B: load flags, keep iff == INDEXED
 *   release:  C: store flags = DEAD      D: load every entry, sum
 *             (D also in a put that saw DEAD after its -1)
 * If B saw no DEAD then B precedes C in S, so A < B < C < D: every load of D
 * returns A's increment or a later value of that entry. Hence the sum D
 * computes counts every get that was accepted. It also counts every failed
 * attempt whose -1 it sees, with its +1 (the undo of a failed attempt uses
 * the entry its +1 went to, and later values of an entry include earlier
 * ones), and each put of an accepted get is at most one -1. So
 *   sum(D) >= accepted gets whose put D has not seen >= 0,
 * and a sum of 0 means that every accepted get has been put: nobody holds
 * the region and no new get can accept it (DEAD). Releases are claimed with
 * a CAS from the flags value loaded before the sum (DEAD and the region's
 * generation) to that | FREED, so one thread releases, and a thread that
 * stalled across a release, reuse and second DEAD of the same struct cannot
 * claim the later life on the strength of a sum of the earlier one.
 * Liveness: the last counter write (in S) of a dead region is a -1 followed
 * by its own flags load; either that load sees DEAD and its sum is exact
 * (0), or it precedes C and then the releaser's D sees every write and sums
 * to 0. (test_reg_threads fails within a second if the sum check before a
 * claim is removed.)
 * Region memory is type-stable (slabs live as long as the cache), so a
 * stale candidate costs a +1 and a -1 on an entry nobody else writes;
 * recycling never clears the counters (an in-flight +1 of a stale reader
 * would otherwise turn into a lasting -1). */

static __thread unsigned tls_cnt_shard __attribute__((tls_model("initial-exec")));
static _Atomic unsigned cnt_shard_next;

static inline unsigned cnt_shard(const locus_reg_cache_t *c)
{
    if (LIKELY(c->rseq_cpu_off >= 0)) {
#if defined(__x86_64__) && defined(__SEG_FS)
        /* one fs-relative load of rseq.cpu_id */
        return *(const volatile __seg_fs uint32_t *)(uintptr_t)c->rseq_cpu_off & c->cnt_mask;
#else
        return *(const volatile uint32_t *)((char *)__builtin_thread_pointer() + c->rseq_cpu_off) & c->cnt_mask;
#endif
    }
    unsigned s = tls_cnt_shard;
    if (UNLIKELY(!s)) {
        s = atomic_fetch_add_explicit(&cnt_shard_next, 1, memory_order_relaxed) % REG_MAX_CNT_SHARDS + 1;
        tls_cnt_shard = s;
    }
    return (s - 1) & c->cnt_mask;
}

/* Entry s of the region at slot i of its slab (the entries precede the regions). */
static inline reg_cnt_t *cnt_at_slot(const locus_reg_cache_t *c, const reg_region_t *r, uint32_t i, unsigned s)
{
    reg_cnt_t *cnt = (reg_cnt_t *)(r - i) - (size_t)(c->cnt_mask + 1) * REG_SLAB;
    return &cnt[(size_t)s * REG_SLAB + i];
}

static inline reg_cnt_t *cnt_at(const locus_reg_cache_t *c, const reg_region_t *r, unsigned s)
{
    return cnt_at_slot(c, r, r->slot, s);
}

/* The summed count (mod 2^32, as a signed value). */
static inline int32_t cnt_sum(const locus_reg_cache_t *c, const reg_region_t *r, memory_order mo)
{
    uint32_t sum = 0;
    for (unsigned s = 0; s <= c->cnt_mask; s++)
        sum += atomic_load_explicit(&cnt_at(c, r, s)->n, mo);
    return (int32_t)sum;
}

/* The miss tick of the region's last use: the most recent of the shards'
 * 32-bit ticks (ages beyond 2^32 misses alias; LRU precision only). */
static uint64_t cnt_last_use(const locus_reg_cache_t *c, const reg_region_t *r, uint64_t now)
{
    uint32_t best = UINT32_MAX;
    for (unsigned s = 0; s <= c->cnt_mask; s++) {
        uint32_t age = (uint32_t)now - atomic_load_explicit(&cnt_at(c, r, s)->tick, memory_order_relaxed);
        if (age < best)
            best = age;
    }
    return now >= best ? now - best : 0;
}

static inline void cnt_touch(reg_cnt_t *k, uint64_t tick)
{
    if (atomic_load_explicit(&k->tick, memory_order_relaxed) != (uint32_t)tick)
        atomic_store_explicit(&k->tick, (uint32_t)tick, memory_order_relaxed);
}

/* ---------- index ---------- */

/* Seqlock readers read the index arrays while the lock holder may be
 * rewriting them and discard what they read if seq moved: a deliberate race
 * that ThreadSanitizer cannot see through, so under TSan these reads are
 * not instrumented (the writes still are). */
#if defined(__SANITIZE_THREAD__)
#define SEQLOCK_READ __attribute__((no_sanitize_thread)) /* never inlined into instrumented code */
#else
#define SEQLOCK_READ
#endif

/* Last i with start[i] <= addr, or -1. Pure reads: callers validate with seq. */
static inline SEQLOCK_READ long idx_find(const reg_index_t *x, size_t n, uint64_t addr)
{
    if (!n || x->l1[0] > addr)
        return -1;
    size_t lo = 0, len = (n + 15) >> 4;
    const uint64_t *l1 = x->l1;
    while (len > 1) {
        size_t h = len >> 1;
        lo = l1[lo + h] <= addr ? lo + h : lo;
        len -= h;
    }
    const uint64_t *b = x->start + (lo << 4);
    unsigned cnt = 0;
    for (int k = 0; k < 16; k++)
        cnt += b[k] <= addr;
    return (long)((lo << 4) + cnt) - 1;
}

static reg_index_t *idx_alloc(size_t cap)
{
    reg_index_t *x = calloc(1, sizeof *x);
    if (!x)
        return NULL;
    x->cap = cap;
    x->start = malloc(cap * sizeof *x->start);
    x->end = calloc(cap, sizeof *x->end);
    x->reg = calloc(cap, sizeof *x->reg);
    x->l1 = malloc(cap / 16 * sizeof *x->l1);
    if (!x->start || !x->end || !x->reg || !x->l1) {
        free(x->start); free(x->end); free(x->reg); free(x->l1); free(x);
        return NULL;
    }
    for (size_t i = 0; i < cap; i++)
        x->start[i] = UINT64_MAX;
    for (size_t i = 0; i < cap / 16; i++)
        x->l1[i] = UINT64_MAX;
    return x;
}

static void idx_free_all(reg_index_t *x)
{
    while (x) {
        reg_index_t *o = x->older;
        free(x->start); free(x->end); free(x->reg); free(x->l1); free(x);
        x = o;
    }
}

static void seq_begin(locus_reg_cache_t *c)
{
    atomic_store_explicit(&c->seq, atomic_load_explicit(&c->seq, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
}

static void seq_end(locus_reg_cache_t *c)
{
    atomic_store_explicit(&c->seq, atomic_load_explicit(&c->seq, memory_order_relaxed) + 1,
                          memory_order_release);
}

/* Room for n entries; a grown copy is published before n can exceed the old cap. */
static locus_status_t idx_reserve(locus_reg_cache_t *c, size_t n)
{
    reg_index_t *x = atomic_load_explicit(&c->idx, memory_order_relaxed);
    if (x && n + 16 <= x->cap)
        return LOCUS_OK;
    size_t cap = x ? x->cap * 2 : 64;
    while (cap < n + 16)
        cap *= 2;
    reg_index_t *y = idx_alloc(cap);
    if (!y)
        return lc_err(LOCUS_ERR_NO_MEMORY, "registration cache: out of memory for %zu entries", n);
    if (x) {
        size_t m = atomic_load_explicit(&c->n, memory_order_relaxed);
        memcpy(y->start, x->start, m * sizeof *y->start);
        memcpy(y->end, x->end, m * sizeof *y->end);
        memcpy(y->reg, x->reg, m * sizeof *y->reg);
        memcpy(y->l1, x->l1, x->cap / 16 * sizeof *y->l1);
        y->older = x;
    }
    atomic_store_explicit(&c->idx, y, memory_order_release);
    return LOCUS_OK;
}

static void idx_fix_l1(reg_index_t *x, size_t from, size_t n)
{
    size_t nb = (n + 15) >> 4, cap_b = x->cap >> 4;
    for (size_t j = from >> 4; j < cap_b; j++)
        x->l1[j] = j < nb ? x->start[j << 4] : UINT64_MAX;
}

/* x->reg[i] (or NULL for i < 0) for a seqlock reader. */
static inline SEQLOCK_READ reg_region_t *idx_reg_seq(const reg_index_t *x, long i)
{
    return i >= 0 ? x->reg[i] : NULL;
}

/* Drop entries [i, j) and insert r at the resulting position if r != NULL.
 * Caller holds the lock, inside seq_begin/seq_end, with room reserved. */
static void idx_replace(locus_reg_cache_t *c, size_t i, size_t j, reg_region_t *r)
{
    reg_index_t *x = atomic_load_explicit(&c->idx, memory_order_relaxed);
    size_t n = atomic_load_explicit(&c->n, memory_order_relaxed);
    size_t ins = r ? 1 : 0, drop = j - i;
    size_t n2 = n - drop + ins;
    if (drop != ins) {
        memmove(&x->start[i + ins], &x->start[j], (n - j) * sizeof *x->start);
        memmove(&x->end[i + ins], &x->end[j], (n - j) * sizeof *x->end);
        memmove(&x->reg[i + ins], &x->reg[j], (n - j) * sizeof *x->reg);
    }
    if (r) {
        x->start[i] = r->start;
        x->end[i] = r->end;
        x->reg[i] = r;
    }
    for (size_t k = n2; k < n; k++) {
        x->start[k] = UINT64_MAX;
        x->end[k] = 0;
        x->reg[k] = NULL;
    }
    idx_fix_l1(x, i, n2);
    atomic_store_explicit(&c->n, n2, memory_order_release);
}

/* ---------- regions ---------- */

static reg_region_t *region_alloc(locus_reg_cache_t *c)
{
    if (!c->free_list) {
        if (c->nslabs == c->slabs_cap) {
            size_t cap = c->slabs_cap ? c->slabs_cap * 2 : 16;
            void **s = realloc(c->slabs, cap * sizeof *s);
            if (!s)
                return NULL;
            c->slabs = s;
            c->slabs_cap = cap;
        }
        /* (cnt_mask + 1) shards of REG_SLAB counter entries, then REG_SLAB regions */
        size_t cbytes = (size_t)(c->cnt_mask + 1) * REG_SLAB * sizeof(reg_cnt_t);
        size_t size = cbytes + REG_SLAB * sizeof(reg_region_t);
        void *block = aligned_alloc(64, size);
        if (!block)
            return NULL;
        memset(block, 0, size);
        reg_region_t *slab = (reg_region_t *)((char *)block + cbytes);
        c->slabs[c->nslabs++] = block;
        for (int i = REG_SLAB - 1; i >= 0; i--) {
            atomic_init(&slab[i].flags, REG_DEAD | REG_FREED);
            slab[i].slot = (uint32_t)i;
            slab[i].next = c->free_list;
            c->free_list = &slab[i];
        }
    }
    reg_region_t *r = c->free_list;
    c->free_list = r->next;
    r->next = NULL;
    /* keep any stale reader's transient +1 (it is undone on the same entry):
     * never clear the counters; only restart the LRU clock of the entries */
    uint64_t now = atomic_load_explicit(&c->tick, memory_order_relaxed);
    for (unsigned s = 0; s <= c->cnt_mask; s++)
        atomic_store_explicit(&cnt_at(c, r, s)->tick, (uint32_t)now, memory_order_relaxed);
    uint64_t gen = (atomic_load_explicit(&r->flags, memory_order_relaxed) & ~REG_FLAGS) + REG_GEN;
    atomic_store_explicit(&r->flags, gen, memory_order_seq_cst);
    r->bh = NULL;
    r->is_static = false;
    memset(&r->pub, 0, sizeof r->pub);
    r->pub.id = ++c->next_id;
    return r;
}

static void region_recycle(locus_reg_cache_t *c, reg_region_t *r)
{
    /* statics are never reused: holders may put them at any time */
    if (r->is_static)
        return;
    r->next = c->free_list;
    c->free_list = r;
}

/* Claim the release of a region: f = its flags loaded (DEAD, not FREED)
 * before the sum that was 0. */
static bool claim(reg_region_t *r, uint64_t f)
{
    return atomic_compare_exchange_strong_explicit(&r->flags, &f, f | REG_FREED,
                                                   memory_order_seq_cst, memory_order_relaxed);
}

/* Out of the index (or statics) already, under the lock: flags = DEAD (C),
 * then the sum (D); a holder that remains releases it at its last put. */
static void mark_dead(locus_reg_cache_t *c, reg_region_t *r)
{
    uint64_t f = (atomic_load_explicit(&r->flags, memory_order_relaxed) & ~REG_FLAGS) | REG_DEAD;
    atomic_store_explicit(&r->flags, f, memory_order_seq_cst);
    if (cnt_sum(c, r, memory_order_seq_cst) == 0 && claim(r, f)) {
        r->next = c->release_list;
        c->release_list = r;
    }
}

static void live_add(locus_reg_cache_t *c, reg_region_t *r, reg_region_t **head)
{
    r->lprev = NULL;
    r->lnext = *head;
    if (*head)
        (*head)->lprev = r;
    *head = r;
}

/* Deregister; the caller owns r (claimed). */
static void region_release(locus_reg_cache_t *c, reg_region_t *r)
{
    c->ops->dereg(c->bctx, r);
    c->regions--;
    c->bytes -= r->end - r->start;
    c->deregistrations++;
    if (r->lprev) r->lprev->lnext = r->lnext;
    else c->live = r->lnext;
    if (r->lnext) r->lnext->lprev = r->lprev;
    r->lnext = r->lprev = NULL;
    if (c->ops->pages_shared && !c->destroying)
        for (reg_region_t *o = c->live; o; o = o->lnext) {
            uint64_t s = o->start > r->start ? o->start : r->start;
            uint64_t e = o->end < r->end ? o->end : r->end;
            if (s < e)
                c->ops->relock(c->bctx, s, e);
        }
    region_recycle(c, r);
}

static void reap(locus_reg_cache_t *c)
{
    while (c->release_list) {
        reg_region_t *r = c->release_list;
        c->release_list = r->next;
        region_release(c, r);
    }
}

/* ---------- invalidation ---------- */

/* Remove every region overlapping [s, e) from the index (and statics if asked). */
static void invalidate_locked(locus_reg_cache_t *c, uint64_t s, uint64_t e, bool statics)
{
    c->invalidate_calls++;
    if (statics) {
        int ns = atomic_load_explicit(&c->nstatic, memory_order_relaxed), k = 0;
        for (int i = 0; i < ns; i++) {
            reg_region_t *r = c->statics[i];
            if (r->start < e && r->end > s) {
                c->invalidations++;
                mark_dead(c, r);
            } else {
                c->statics[k++] = r;
            }
        }
        atomic_store_explicit(&c->nstatic, k, memory_order_release);
    }
    reg_index_t *x = atomic_load_explicit(&c->idx, memory_order_relaxed);
    size_t n = atomic_load_explicit(&c->n, memory_order_relaxed);
    long hi = idx_find(x, n, e - 1);
    long lo = hi;
    while (lo >= 0 && x->end[lo] > s)
        lo--;
    lo++;
    if (hi < lo)
        return;
    seq_begin(c);
    /* DEAD inside the write section: no reader can validate against it */
    for (long i = lo; i <= hi; i++)
        mark_dead(c, x->reg[i]);
    idx_replace(c, (size_t)lo, (size_t)hi + 1, NULL);
    seq_end(c);
    c->invalidations += (uint64_t)(hi - lo + 1);
}

static void pend_lock(locus_reg_cache_t *c)
{
    while (atomic_flag_test_and_set_explicit(&c->pend_lock, memory_order_acquire))
        __builtin_ia32_pause();
}

static void pend_unlock(locus_reg_cache_t *c)
{
    atomic_flag_clear_explicit(&c->pend_lock, memory_order_release);
}

/* Apply queued invalidations; pending_n drops to 0 only once they are applied. */
static void process_pending(locus_reg_cache_t *c)
{
    while (atomic_load_explicit(&c->pending_n, memory_order_acquire)) {
        uint64_t s[REG_PENDING], e[REG_PENDING];
        pend_lock(c);
        unsigned cnt = c->pend_count;
        bool all = c->pend_overflow;
        memcpy(s, c->pend_s, cnt * sizeof *s);
        memcpy(e, c->pend_e, cnt * sizeof *e);
        c->pend_count = 0;
        c->pend_overflow = false;
        pend_unlock(c);
        if (all)
            invalidate_locked(c, 0, UINT64_MAX, false);
        for (unsigned i = 0; i < cnt; i++)
            invalidate_locked(c, s[i], e[i], e[i] != UINT64_MAX);
        pend_lock(c);
        if (!c->pend_count && !c->pend_overflow)
            atomic_store_explicit(&c->pending_n, 0, memory_order_release);
        pend_unlock(c);
    }
}

static void unlock(locus_reg_cache_t *c)
{
    reap(c);
    process_pending(c);
    reap(c);
    pthread_mutex_unlock(&c->lock);
}

/* e == UINT64_MAX: every dynamic region (statics kept). Never blocks. */
void reg_invalidate_from_hook(locus_reg_cache_t *c, uint64_t s, uint64_t e)
{
    if (pthread_mutex_trylock(&c->lock) == 0) {
        process_pending(c);
        invalidate_locked(c, s, e, e != UINT64_MAX);
        process_pending(c);
        /* no reap: the hooks never call the backend (it may allocate or unmap) */
        pthread_mutex_unlock(&c->lock);
        return;
    }
    pend_lock(c);
    if (c->pend_count < REG_PENDING) {
        c->pend_s[c->pend_count] = s;
        c->pend_e[c->pend_count] = e;
        c->pend_count++;
    } else {
        c->pend_overflow = true;
    }
    atomic_store_explicit(&c->pending_n, 1, memory_order_seq_cst);
    pend_unlock(c);
}

/* ---------- eviction ---------- */

typedef struct { uint64_t t; reg_region_t *r; } cand_t;

static int cand_cmp(const void *a, const void *b)
{
    const cand_t *x = a, *y = b;
    return x->t < y->t ? -1 : x->t > y->t;
}

/* Partition so that cand[0..k) are the k oldest (Hoare quickselect). */
static void select_oldest(cand_t *a, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        uint64_t pivot = a[lo + (hi - lo) / 2].t;
        size_t i = lo, j = hi;
        while (i <= j) {
            while (a[i].t < pivot) i++;
            while (a[j].t > pivot) j--;
            if (i <= j) {
                cand_t t = a[i]; a[i] = a[j]; a[j] = t;
                i++;
                if (j == 0) break;
                j--;
            }
        }
        if (k <= j) hi = j;
        else if (k >= i) lo = i;
        else return;
    }
}

/* Evict unused cached regions, oldest first, until `need` more regions/bytes
 * fit with 1/32 of the capacity to spare (all of them if flush). */
static void evict(locus_reg_cache_t *c, uint64_t need_r, uint64_t need_b, bool flush)
{
    if (!flush && c->regions + need_r <= c->max_regions && c->bytes + need_b <= c->max_bytes)
        return;
    uint64_t slack_r = c->max_regions / 32 ? c->max_regions / 32 : 1;
    uint64_t slack_b = c->max_bytes / 32;
    uint64_t tr = c->max_regions > slack_r + need_r ? c->max_regions - slack_r - need_r : 0;
    uint64_t tb = c->max_bytes > slack_b + need_b ? c->max_bytes - slack_b - need_b : 0;
    reg_index_t *x = atomic_load_explicit(&c->idx, memory_order_relaxed);
    size_t n = atomic_load_explicit(&c->n, memory_order_relaxed);
    cand_t *cand = malloc((n ? n : 1) * sizeof *cand);
    if (!cand)
        return;
    size_t nc = 0;
    uint64_t now = atomic_load_explicit(&c->tick, memory_order_relaxed);
    /* unused = summed count 0 (a get racing with this is caught by mark_dead's own sum) */
    for (size_t i = 0; i < n; i++)
        if (cnt_sum(c, x->reg[i], memory_order_relaxed) == 0)
            cand[nc++] = (cand_t){cnt_last_use(c, x->reg[i], now), x->reg[i]};
    uint64_t regions = c->regions, bytes = c->bytes;
    /* the oldest `want` first (quickselect, O(n)); full order only if bytes need more */
    size_t want = flush ? nc : (size_t)(regions > tr ? regions - tr : 0);
    if (want > nc) want = nc;
    if (want < nc) select_oldest(cand, nc, want);
    size_t k = 0;
    for (; k < want; k++) {
        reg_region_t *r = cand[k].r;
        regions--;
        bytes -= r->end - r->start;
        r->next = (reg_region_t *)1; /* mark: leaves the index */
    }
    if (bytes > tb && k < nc)
        qsort(cand + k, nc - k, sizeof *cand, cand_cmp);
    for (; k < nc && bytes > tb; k++) {
        reg_region_t *r = cand[k].r;
        regions--;
        bytes -= r->end - r->start;
        r->next = (reg_region_t *)1; /* mark: leaves the index */
    }
    if (k) {
        seq_begin(c);
        size_t w = 0;
        for (size_t i = 0; i < n; i++)
            if (x->reg[i]->next != (reg_region_t *)1) {
                x->start[w] = x->start[i];
                x->end[w] = x->end[i];
                x->reg[w++] = x->reg[i];
            }
        for (size_t i = w; i < n; i++) {
            x->start[i] = UINT64_MAX;
            x->end[i] = 0;
            x->reg[i] = NULL;
        }
        idx_fix_l1(x, 0, w);
        atomic_store_explicit(&c->n, w, memory_order_release);
        seq_end(c);
        for (size_t i = 0; i < k; i++) {
            cand[i].r->next = NULL;
            mark_dead(c, cand[i].r);
        }
        c->evictions += k;
        reap(c);
    }
    free(cand);
}

/* ---------- get / put ---------- */

static locus_status_t bad_get(const void *addr, size_t len, unsigned access)
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

static inline bool bad_args(uint64_t a, size_t len, unsigned access)
{
    return !a || !len || (access & ~(unsigned)LOCUS_REG_ACCESS_ALL) || a + len < a ||
           a + len > UINT64_MAX - 4096;
}

static locus_status_t get_slow(locus_reg_cache_t *c, uint64_t a, uint64_t e, unsigned access,
                               const locus_reg_t **out)
{
    pthread_mutex_lock(&c->lock);
    process_pending(c);
    reap(c);
    reg_index_t *x = atomic_load_explicit(&c->idx, memory_order_relaxed);
    size_t n = atomic_load_explicit(&c->n, memory_order_relaxed);
    long i = idx_find(x, n, a);
    if (i >= 0 && x->end[i] >= e && !(access & ~x->reg[i]->acc)) {
        reg_region_t *r = x->reg[i];
        /* INDEXED, and the lock keeps it so (hooks only queue while we hold it) */
        reg_cnt_t *k = cnt_at(c, r, cnt_shard(c));
        atomic_fetch_add_explicit(&k->n, 1, memory_order_seq_cst);
        cnt_touch(k, atomic_load_explicit(&c->tick, memory_order_relaxed));
        c->slow_hits++;
        *out = &r->pub;
        unlock(c);
        return LOCUS_OK;
    }
    uint64_t s = reg_page_down(a), en = reg_page_up(e);
    if (en - s > c->max_region_bytes) {
        c->failed++;
        unlock(c);
        return lc_err(LOCUS_ERR_RANGE, "length %llu: larger than the device's largest region (%llu bytes)",
                         (unsigned long long)(e - a), (unsigned long long)c->max_region_bytes);
    }
    evict(c, 1, en - s, false);
    locus_status_t st = LOCUS_OK;
    bool nomerge = false;
    for (int attempt = 0;; attempt++) {
        x = atomic_load_explicit(&c->idx, memory_order_relaxed);
        n = atomic_load_explicit(&c->n, memory_order_relaxed);
        /* run of cached regions overlapping or adjacent to [s, en) */
        long hi = idx_find(x, n, en), lo = hi;
        while (lo >= 0 && x->end[lo] >= s)
            lo--;
        lo++;
        uint64_t us = s, ue = en;
        unsigned uacc = access;
        for (long k = lo; k <= hi; k++) {
            if (x->start[k] < us) us = x->start[k];
            if (x->end[k] > ue) ue = x->end[k];
            uacc |= x->reg[k]->acc;
        }
        bool merge = !nomerge && hi >= lo && c->merge_max && ue - us <= c->merge_max && ue - us <= c->max_region_bytes;
        if (!merge) {
            us = s; ue = en; uacc = access;
            /* keep merely adjacent neighbours; overlapping ones must leave the index */
            while (lo <= hi && x->end[lo] <= s) lo++;
            while (hi >= lo && x->start[hi] >= en) hi--;
        }
        if (c->regions + 1 > c->max_regions || c->bytes + (ue - us) > c->max_bytes) {
            c->failed++;
            unlock(c);
            return lc_err(LOCUS_ERR_NO_SPACE,
                             "registration cache full: %llu regions / %llu bytes registered and in use "
                             "(capacity %llu regions / %llu bytes, LOCUS_REG_MAX_REGIONS/MAX_BYTES)",
                             (unsigned long long)c->regions, (unsigned long long)c->bytes,
                             (unsigned long long)c->max_regions, (unsigned long long)c->max_bytes);
        }
        if ((st = idx_reserve(c, n + 1)) != LOCUS_OK)
            break;
        reg_region_t *r = region_alloc(c);
        if (!r) {
            st = lc_err(LOCUS_ERR_NO_MEMORY, "registration cache: out of memory");
            break;
        }
        r->start = us;
        r->end = ue;
        r->pub.addr = (void *)us;
        r->pub.length = ue - us;
        r->pub.access = r->acc = uacc;
        st = c->ops->reg(c->bctx, r);
        if (st != LOCUS_OK) {
            atomic_fetch_or_explicit(&r->flags, REG_DEAD | REG_FREED, memory_order_relaxed);
            region_recycle(c, r);
            if (st == LOCUS_ERR_NO_SPACE && attempt == 0 && n) {
                evict(c, 0, 0, true); /* the device is full: drop every unused region, retry */
                continue;
            }
            if (merge && attempt < 2) {
                nomerge = true; /* the union failed (e.g. a neighbour's pages are gone): the request alone */
                continue;
            }
            break;
        }
        reg_cnt_t *k = cnt_at(c, r, cnt_shard(c));
        atomic_fetch_add_explicit(&k->n, 1, memory_order_seq_cst);
        cnt_touch(k, atomic_fetch_add_explicit(&c->tick, 1, memory_order_relaxed) + 1);
        live_add(c, r, &c->live);
        c->regions++;
        c->bytes += ue - us;
        c->registrations++;
        c->bytes_registered += ue - us;
        c->misses++;
        size_t drop = hi >= lo ? (size_t)(hi - lo + 1) : 0;
        size_t pos = hi >= lo ? (size_t)lo : (size_t)(hi + 1);
        seq_begin(c);
        /* DEAD inside the write section: no reader can validate against it */
        for (size_t k = 0; k < drop; k++)
            mark_dead(c, x->reg[pos + k]);
        idx_replace(c, pos, pos + drop, r);
        atomic_fetch_or_explicit(&r->flags, REG_INDEXED, memory_order_seq_cst);
        seq_end(c);
        if (merge) c->merges += drop;
        else c->replaced += drop;
        *out = &r->pub;
        unlock(c);
        return LOCUS_OK;
    }
    c->failed++;
    unlock(c);
    return st;
}

static inline size_t hint_hash(uint64_t a)
{
    return (size_t)(((a >> 12) * 0x9E3779B97F4A7C15ull) >> 40);
}

/* A put's slow part: r was seen DEAD (flags f); release it if nobody holds it any more. */
static void __attribute__((noinline)) put_dead(locus_reg_cache_t *c, reg_region_t *r, uint64_t f)
{
    if (!(f & REG_FREED) && cnt_sum(c, r, memory_order_seq_cst) == 0 && claim(r, f)) {
        pthread_mutex_lock(&c->lock);
        region_release(c, r);
        unlock(c);
    }
}

/* -1 on entry s, then the release check (see "reference counts"). */
static inline void cnt_put(locus_reg_cache_t *c, reg_region_t *r, unsigned s)
{
    atomic_fetch_sub_explicit(&cnt_at(c, r, s)->n, 1, memory_order_seq_cst);
    uint64_t f = atomic_load_explicit(&r->flags, memory_order_seq_cst);
    if (UNLIKELY(f & REG_DEAD))
        put_dead(c, r, f);
}

/* Take a reference on r through shard s and keep it if r is cached, covers
 * [a, e) and has the access; else drop it again on the same entry. r may be
 * stale (type-stable memory). Writes only shard s's entry line. */
static inline bool try_hit(locus_reg_cache_t *c, reg_region_t *r, uint32_t slot, uint64_t a, uint64_t e,
                           unsigned access, reg_shard_t *sh, unsigned s)
{
    reg_cnt_t *k = cnt_at_slot(c, r, slot, s);
    /* the locked add orders every later load after it: start fetching r's
     * line now, so its miss overlaps the add's instead of following it */
    __builtin_prefetch(r, 0, 3);
    atomic_fetch_add_explicit(&k->n, 1, memory_order_seq_cst);                          /* A */
    if (LIKELY((atomic_load_explicit(&r->flags, memory_order_seq_cst) & REG_FLAGS) == REG_INDEXED && /* B */
               a >= r->start && e <= r->end && !(access & ~r->acc))) {
        cnt_touch(k, atomic_load_explicit(&c->tick, memory_order_relaxed));
        sh->hits++;
        return true;
    }
    cnt_put(c, r, s);
    return false;
}

locus_status_t locus_reg_get(locus_reg_cache_t *c, const void *addr, size_t len, unsigned access,
                             const locus_reg_t **out)
{
    uint64_t a = (uintptr_t)addr, e = a + len;
    if (UNLIKELY(!c || !out))
        return lc_err(LOCUS_ERR_INVALID, "cache %p, out %p: expected non-NULL", (void *)c, (void *)out);
    if (UNLIKELY(bad_args(a, len, access))) {
        pthread_mutex_lock(&c->lock);
        c->failed++;
        pthread_mutex_unlock(&c->lock);
        return bad_get(addr, len, access);
    }
    reg_shard_t *sh = my_shard(c);
    reg_region_t *r;
    int ns = atomic_load_explicit(&c->nstatic, memory_order_acquire);
    for (int i = 0; i < ns; i++) {
        r = c->statics[i];
        if (a >= r->start && e <= r->end && !(access & ~r->acc) &&
            !(atomic_load_explicit(&r->flags, memory_order_relaxed) & REG_DEAD)) {
            sh->hits++;
            *out = &r->pub;
            return LOCUS_OK;
        }
    }
    if (LIKELY(!atomic_load_explicit(&c->pending_n, memory_order_acquire))) {
        unsigned cs = cnt_shard(c);
        /* 1. the region this request page hit last time */
        _Atomic uintptr_t *slot = &c->hint[hint_hash(a) & c->hint_mask];
        uintptr_t h = atomic_load_explicit(slot, memory_order_acquire);
        if (LIKELY(h != 0)) {
            r = (reg_region_t *)(h & ~(uintptr_t)(REG_SLAB - 1));
            if (LIKELY(try_hit(c, r, (uint32_t)(h & (REG_SLAB - 1)), a, e, access, sh, cs)))
                goto hit;
        }
        /* 2. the index */
        for (int tries = 0; tries < 8; tries++) {
            uint64_t s1 = atomic_load_explicit(&c->seq, memory_order_acquire);
            if (UNLIKELY(s1 & 1)) {
                __builtin_ia32_pause();
                continue;
            }
            size_t n = atomic_load_explicit(&c->n, memory_order_acquire);
            reg_index_t *x = atomic_load_explicit(&c->idx, memory_order_acquire);
            r = idx_reg_seq(x, idx_find(x, n, a));
            if (r && try_hit(c, r, r->slot, a, e, access, sh, cs)) {
                atomic_store_explicit(slot, (uintptr_t)r | r->slot, memory_order_release);
                goto hit;
            }
            atomic_thread_fence(memory_order_acquire);
            if (atomic_load_explicit(&c->seq, memory_order_relaxed) == s1)
                break; /* a consistent answer: not cached (or not enough access) */
        }
    }
    return get_slow(c, a, e, access, out);
hit:
    *out = &r->pub;
    return LOCUS_OK;
}

void locus_reg_put(locus_reg_cache_t *c, const locus_reg_t *reg)
{
    reg_region_t *r = reg_of(reg);
    if (!c || !r || r->is_static)
        return;
    cnt_put(c, r, cnt_shard(c));
}

/* ---------- static mode ---------- */

locus_status_t locus_reg_static(locus_reg_cache_t *c, void *base, size_t len, unsigned access)
{
    uint64_t a = (uintptr_t)base;
    if (!c)
        return lc_err(LOCUS_ERR_INVALID, "cache NULL: expected a registration cache");
    if (bad_args(a, len, access))
        return bad_get(base, len, access);
    pthread_mutex_lock(&c->lock);
    locus_status_t st = LOCUS_OK;
    int ns = atomic_load_explicit(&c->nstatic, memory_order_relaxed);
    uint64_t s = reg_page_down(a), e = reg_page_up(a + len);
    if (ns == REG_MAX_STATIC) {
        st = lc_err(LOCUS_ERR_NO_SPACE, "static regions: %d already registered (the most accepted)", ns);
    } else if (e - s > c->max_region_bytes) {
        st = lc_err(LOCUS_ERR_RANGE, "static region of %llu bytes: larger than the device's largest "
                       "region (%llu bytes)", (unsigned long long)(e - s),
                       (unsigned long long)c->max_region_bytes);
    } else {
        reg_region_t *r = region_alloc(c);
        if (!r) {
            st = lc_err(LOCUS_ERR_NO_MEMORY, "registration cache: out of memory");
        } else {
            r->is_static = true;
            r->start = s;
            r->end = e;
            r->pub.addr = (void *)s;
            r->pub.length = e - s;
            r->pub.access = r->acc = access;
            st = c->ops->reg(c->bctx, r);
            if (st == LOCUS_OK) {
                live_add(c, r, &c->live);
                c->regions++;
                c->bytes += e - s;
                c->registrations++;
                c->bytes_registered += e - s;
                c->statics[ns] = r;
                atomic_store_explicit(&c->nstatic, ns + 1, memory_order_release);
            } else {
                atomic_fetch_or_explicit(&r->flags, REG_DEAD | REG_FREED, memory_order_relaxed);
                r->is_static = false;
                region_recycle(c, r);
            }
        }
    }
    unlock(c);
    return st;
}

locus_status_t locus_reg_static_heap(locus_reg_cache_t *c, const locus_heap_t *heap, unsigned access)
{
    if (!heap)
        return lc_err(LOCUS_ERR_INVALID, "heap NULL: expected a heap from locus_heap_create");
    return locus_reg_static(c, locus_heap_base(heap), (size_t)locus_heap_size(heap), access);
}

/* ---------- invalidate, flush, stats ---------- */

locus_status_t locus_reg_invalidate(locus_reg_cache_t *c, const void *addr, size_t len)
{
    uint64_t a = (uintptr_t)addr;
    if (!len)
        return lc_err(LOCUS_ERR_INVALID, "length 0 at %p: expected > 0 bytes", addr);
    if (a + len < a)
        return lc_err(LOCUS_ERR_RANGE, "address %p + length %zu overflows the address space", addr, len);
    if (!c) {
        reg_hooks_invalidate_all_caches(reg_page_down(a), reg_page_up(a + len));
        return LOCUS_OK;
    }
    pthread_mutex_lock(&c->lock);
    process_pending(c);
    invalidate_locked(c, reg_page_down(a), reg_page_up(a + len), true);
    unlock(c);
    return LOCUS_OK;
}

locus_status_t locus_reg_flush(locus_reg_cache_t *c)
{
    if (!c)
        return lc_err(LOCUS_ERR_INVALID, "cache NULL: expected a registration cache");
    pthread_mutex_lock(&c->lock);
    process_pending(c);
    uint64_t ev = c->evictions;
    evict(c, 0, 0, true);
    c->evictions = ev; /* a flush is not a capacity eviction */
    unlock(c);
    return LOCUS_OK;
}

locus_status_t locus_reg_stats(const locus_reg_cache_t *cc, locus_reg_stats_t *o)
{
    locus_reg_cache_t *c = (locus_reg_cache_t *)cc;
    if (!c || !o)
        return lc_err(LOCUS_ERR_INVALID, "cache %p, out %p: expected non-NULL", (void *)c, (void *)o);
    memset(o, 0, sizeof *o);
    pthread_mutex_lock(&c->lock);
    process_pending(c);
    reap(c);
    for (int i = 0; i < REG_SHARDS; i++)
        o->hits += c->shards[i].hits;
    o->hits += c->slow_hits;
    o->misses = c->misses;
    o->failed = c->failed;
    o->gets = o->hits + o->misses + o->failed;
    o->merges = c->merges;
    o->replaced = c->replaced;
    o->evictions = c->evictions;
    o->invalidations = c->invalidations;
    o->invalidate_calls = c->invalidate_calls;
    o->registrations = c->registrations;
    o->deregistrations = c->deregistrations;
    o->bytes_registered = c->bytes_registered;
    o->regions = c->regions;
    o->bytes = c->bytes;
    o->cached = atomic_load_explicit(&c->n, memory_order_relaxed);
    int ns = atomic_load_explicit(&c->nstatic, memory_order_relaxed);
    o->static_regions = (uint64_t)ns;
    for (int i = 0; i < ns; i++)
        o->static_bytes += c->statics[i]->end - c->statics[i]->start;
    o->max_regions = c->max_regions;
    o->max_bytes = c->max_bytes;
    o->merge_max = c->merge_max;
    o->max_region_bytes = c->max_region_bytes;
    o->backend = c->ops->name;
    o->device = c->device;
    o->odp = c->odp;
    pthread_mutex_unlock(&c->lock);
    return LOCUS_OK;
}

const char *locus_reg_notes(const locus_reg_cache_t *c) { return c ? lc_notes_text(&c->notes) : ""; }
void *locus_reg_pd(const locus_reg_cache_t *c) { return c ? reg_backend_pd(c) : NULL; }

const char *locus_reg_backend_name(locus_reg_backend_t b)
{
    static const char *names[] = {"auto", "verbs", "pin", "null"};
    return (unsigned)b < 4 ? names[b] : "?";
}

/* ---------- attributes, create, destroy ---------- */

/* The cache's tunables and the attribute fields they fill (defaults: tunables.def). */
static const lc_tun_bind_t reg_binds[] = {
    LC_BIND(REG_BACKEND, locus_reg_attr_t, backend),
    LC_BIND(REG_DEVICE, locus_reg_attr_t, device),
    LC_BIND(REG_MAX_REGIONS, locus_reg_attr_t, max_regions),
    LC_BIND(REG_MAX_BYTES, locus_reg_attr_t, max_bytes),
    LC_BIND(REG_RESERVE, locus_reg_attr_t, reserve_pct),
    LC_BIND(REG_MERGE_MAX, locus_reg_attr_t, merge_max),
    LC_BIND(REG_ODP, locus_reg_attr_t, odp),
    LC_BIND(REG_NULL_NS, locus_reg_attr_t, null_ns),
    LC_BIND(REG_NULL_NS_PER_MIB, locus_reg_attr_t, null_ns_per_mib),
};

void locus_reg_attr_init(locus_reg_attr_t *a)
{
    memset(a, 0, sizeof *a);
    (void)lc_tun_load(reg_binds, sizeof reg_binds / sizeof *reg_binds, a, sizeof *a,
                      LC_TUN_DEFAULTS);
}

/* All or nothing: a bad variable leaves attr as it was. */
locus_status_t locus_reg_attr_from_env(locus_reg_attr_t *attr)
{
    return lc_tun_load(reg_binds, sizeof reg_binds / sizeof *reg_binds, attr, sizeof *attr,
                       LC_TUN_ENV);
}

static uint64_t default_max_bytes(void)
{
    struct rlimit rl;
    if (geteuid() != 0 && !getrlimit(RLIMIT_MEMLOCK, &rl) && rl.rlim_cur != RLIM_INFINITY)
        return (uint64_t)rl.rlim_cur;
    long pages = sysconf(_SC_PHYS_PAGES), ps = sysconf(_SC_PAGESIZE);
    return pages > 0 && ps > 0 ? (uint64_t)pages * (uint64_t)ps / 4 * 3 : (1ull << 30);
}

locus_status_t locus_reg_cache_create(const locus_reg_attr_t *attr, locus_reg_cache_t **out)
{
    if (!out)
        return lc_err(LOCUS_ERR_INVALID, "out NULL: expected a place for the cache");
    locus_reg_attr_t a;
    if (attr) a = *attr;
    else locus_reg_attr_init(&a);
    if ((unsigned)a.backend > LOCUS_REG_BACKEND_NULL)
        return lc_err(LOCUS_ERR_INVALID, "backend %d: expected auto, verbs, pin or null (0-3)", (int)a.backend);
    if (a.reserve_pct < 0 || a.reserve_pct > 90)
        return lc_err(LOCUS_ERR_RANGE, "reserve %d%%: expected 0-90", a.reserve_pct);
    locus_reg_cache_t *c = aligned_alloc(64, (sizeof *c + 63) & ~(size_t)63);
    if (!c)
        return lc_err(LOCUS_ERR_NO_MEMORY, "registration cache: out of memory");
    memset(c, 0, sizeof *c);
    pthread_mutex_init(&c->lock, NULL);
    atomic_flag_clear(&c->pend_lock);
    uint64_t dev_regions = 0, dev_region_bytes = UINT64_MAX;
    locus_status_t st = reg_backend_open(c, &a, &dev_regions, &dev_region_bytes);
    if (st == LOCUS_OK)
        st = idx_reserve(c, 0);
    c->hint_mask = (1u << 15) - 1;
    /* counter shards: a power of two >= the cpus, at most REG_MAX_CNT_SHARDS */
    long ncpu = sysconf(_SC_NPROCESSORS_CONF);
    unsigned nsh = 1;
    while (nsh < REG_MAX_CNT_SHARDS && (long)nsh < ncpu)
        nsh *= 2;
    c->cnt_mask = nsh - 1;
    /* glibc >= 2.35 registers rseq for every thread unless told not to */
    c->rseq_cpu_off = __rseq_size >= offsetof(struct rseq, cpu_id) + sizeof(uint32_t)
                          ? (long)__rseq_offset + (long)offsetof(struct rseq, cpu_id) : -1;

    if (st == LOCUS_OK && !(c->hint = calloc(c->hint_mask + 1, sizeof *c->hint)))
        st = lc_err(LOCUS_ERR_NO_MEMORY, "registration cache: out of memory");
    if (st != LOCUS_OK) {
        if (c->ops) c->ops->close(c->bctx);
        free(c->hint);
        idx_free_all(atomic_load(&c->idx));
        pthread_mutex_destroy(&c->lock);
        lc_notes_free(&c->notes);
        free(c);
        return st;
    }
    uint64_t keep = (uint64_t)(100 - a.reserve_pct);
    c->max_regions = a.max_regions ? a.max_regions : dev_regions * keep / 100;
    if (!c->max_regions) c->max_regions = 1;
    c->max_bytes = a.max_bytes ? a.max_bytes : default_max_bytes() / 100 * keep;
    c->merge_max = a.merge_max;
    c->max_region_bytes = dev_region_bytes;
    c->slot = reg_hooks_add(c);
    *out = c;
    return LOCUS_OK;
}

void locus_reg_cache_destroy(locus_reg_cache_t *c)
{
    if (!c)
        return;
    reg_hooks_remove(c);
    pthread_mutex_lock(&c->lock);
    c->destroying = true;
    while (c->live) {
        reg_region_t *r = c->live;
        atomic_fetch_or_explicit(&r->flags, REG_DEAD | REG_FREED, memory_order_relaxed);
        region_release(c, r);
    }
    pthread_mutex_unlock(&c->lock);
    c->ops->close(c->bctx);
    idx_free_all(atomic_load(&c->idx));
    free(c->hint);
    for (size_t i = 0; i < c->nslabs; i++)
        free(c->slabs[i]);
    free(c->slabs);
    pthread_mutex_destroy(&c->lock);
    lc_notes_free(&c->notes);
    free(c);
}
