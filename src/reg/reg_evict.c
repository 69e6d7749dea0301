/* Capacity: when a miss would exceed the cache's regions or bytes, the least
 * recently used unused regions are deregistered until 1/32 of the capacity
 * is free ("recently" at the resolution of misses: the tick is the miss
 * count, hits between two misses tie). Also locus_reg_flush: every unused
 * region. Under the lock. */
#include "reg/reg_refs.h"
#include "core/error.h"

#include <stdlib.h>

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

/* The cached regions nobody holds (summed count 0), with their last use;
 * a get racing with this is caught by reg_mark_dead's own sum. */
static size_t unused_regions(const locus_reg_cache_t *c, cand_t *cand)
{
    reg_index_t *x = atomic_load_explicit(&c->idx, memory_order_relaxed);
    size_t n = atomic_load_explicit(&c->n, memory_order_relaxed), nc = 0;
    uint64_t now = atomic_load_explicit(&c->tick, memory_order_relaxed);
    for (size_t i = 0; i < n; i++)
        if (reg_cnt_sum(c, x->reg[i], memory_order_relaxed) == 0)
            cand[nc++] = (cand_t){reg_last_use(c, x->reg[i], now), x->reg[i]};
    return nc;
}

/* Mark the oldest candidates until at most tr regions and tb bytes stay
 * (all of them if flush); returns how many: cand[0..k). */
static size_t choose_victims(const locus_reg_cache_t *c, cand_t *cand, size_t nc, uint64_t tr, uint64_t tb,
                             bool flush)
{
    uint64_t regions = c->regions, bytes = c->bytes;
    /* the oldest `want` first (quickselect, O(n)); full order only if bytes need more */
    size_t want = flush ? nc : (size_t)(regions > tr ? regions - tr : 0);
    if (want > nc) want = nc;
    if (want < nc) select_oldest(cand, nc, want);
    size_t k = 0;
    for (; k < want; k++) {
        regions--;
        bytes -= cand[k].r->end - cand[k].r->start;
        cand[k].r->next = REG_EVICT_MARK;
    }
    if (bytes > tb && k < nc)
        qsort(cand + k, nc - k, sizeof *cand, cand_cmp);
    for (; k < nc && bytes > tb; k++) {
        regions--;
        bytes -= cand[k].r->end - cand[k].r->start;
        cand[k].r->next = REG_EVICT_MARK;
    }
    return k;
}

/* Evict unused cached regions, oldest first, until `need` more regions/bytes
 * fit with 1/32 of the capacity to spare (all of them if flush). */
void reg_evict(locus_reg_cache_t *c, uint64_t need_r, uint64_t need_b, bool flush)
{
    if (!flush && c->regions + need_r <= c->max_regions && c->bytes + need_b <= c->max_bytes)
        return;
    uint64_t slack_r = c->max_regions / 32 ? c->max_regions / 32 : 1;
    uint64_t slack_b = c->max_bytes / 32;
    uint64_t tr = c->max_regions > slack_r + need_r ? c->max_regions - slack_r - need_r : 0;
    uint64_t tb = c->max_bytes > slack_b + need_b ? c->max_bytes - slack_b - need_b : 0;
    size_t n = atomic_load_explicit(&c->n, memory_order_relaxed);
    cand_t *cand = malloc((n ? n : 1) * sizeof *cand);
    if (!cand)
        return;
    size_t nc = unused_regions(c, cand);
    size_t k = choose_victims(c, cand, nc, tr, tb, flush);
    if (k) {
        reg_seq_begin(c);
        reg_idx_drop_marked(c);
        reg_seq_end(c);
        for (size_t i = 0; i < k; i++) {
            cand[i].r->next = NULL;
            reg_mark_dead(c, cand[i].r);
        }
        c->evictions += k;
        reg_reap(c);
    }
    free(cand);
}

locus_status_t locus_reg_flush(locus_reg_cache_t *c)
{
    if (!c)
        return lc_err(LOCUS_ERR_INVALID, "cache NULL: expected a registration cache");
    reg_lock(c);
    uint64_t ev = c->evictions;
    reg_evict(c, 0, 0, true);
    c->evictions = ev; /* a flush is not a capacity eviction */
    reg_unlock(c);
    return LOCUS_OK;
}
