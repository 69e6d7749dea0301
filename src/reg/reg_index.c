/* The index: cached regions sorted by start, never overlapping, in three
 * parallel arrays (start, end, region) padded with UINT64_MAX starts, plus a
 * summary level l1[j] = start[16 j]. Hits read it without a lock, validated
 * by the cache's sequence counter (odd while a writer changes it); every
 * writer holds the lock. A grown copy replaces the arrays and the old ones
 * are kept until the cache is destroyed, so a reader never touches freed
 * memory. */
#include "reg/reg_index.h"
#include "core/error.h"

#include <stdlib.h>
#include <string.h>

static void idx_free(reg_index_t *x)
{
    free(x->start);
    free(x->end);
    free(x->reg);
    free(x->l1);
    free(x);
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
        idx_free(x);
        return NULL;
    }
    for (size_t i = 0; i < cap; i++)
        x->start[i] = UINT64_MAX;
    for (size_t i = 0; i < cap / 16; i++)
        x->l1[i] = UINT64_MAX;
    return x;
}

/* The arrays in use and every retired copy. */
void reg_idx_free_all(reg_index_t *x)
{
    while (x) {
        reg_index_t *o = x->older;
        idx_free(x);
        x = o;
    }
}

void reg_seq_begin(locus_reg_cache_t *c)
{
    atomic_store_explicit(&c->seq, atomic_load_explicit(&c->seq, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
}

void reg_seq_end(locus_reg_cache_t *c)
{
    atomic_store_explicit(&c->seq, atomic_load_explicit(&c->seq, memory_order_relaxed) + 1,
                          memory_order_release);
}

/* Room for n entries; a grown copy is published before n can exceed the old cap. */
locus_status_t reg_idx_reserve(locus_reg_cache_t *c, size_t n)
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

/* Entries [n2, n) become padding. */
static void idx_pad(reg_index_t *x, size_t n2, size_t n)
{
    for (size_t k = n2; k < n; k++) {
        x->start[k] = UINT64_MAX;
        x->end[k] = 0;
        x->reg[k] = NULL;
    }
}

/* Drop entries [i, j) and insert r at the resulting position if r != NULL.
 * Caller holds the lock, inside seq_begin/seq_end, with room reserved. */
void reg_idx_replace(locus_reg_cache_t *c, size_t i, size_t j, reg_region_t *r)
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
    idx_pad(x, n2, n);
    idx_fix_l1(x, i, n2);
    atomic_store_explicit(&c->n, n2, memory_order_release);
}

/* The run of entries overlapping [s, e) (or also adjacent to it, touching s
 * or e, if `adjacent`): [*lo, *hi], empty if *hi < *lo. Under the lock. */
void reg_idx_run(const locus_reg_cache_t *c, uint64_t s, uint64_t e, bool adjacent, long *lo, long *hi)
{
    const reg_index_t *x = atomic_load_explicit(&c->idx, memory_order_relaxed);
    size_t n = atomic_load_explicit(&c->n, memory_order_relaxed);
    long h = reg_idx_find(x, n, adjacent ? e : e - 1), l = h;
    while (l >= 0 && (adjacent ? x->end[l] >= s : x->end[l] > s))
        l--;
    *lo = l + 1;
    *hi = h;
}

/* Remove every entry whose region is marked REG_EVICT_MARK (next), in one
 * pass. Caller holds the lock, inside seq_begin/seq_end. */
void reg_idx_drop_marked(locus_reg_cache_t *c)
{
    reg_index_t *x = atomic_load_explicit(&c->idx, memory_order_relaxed);
    size_t n = atomic_load_explicit(&c->n, memory_order_relaxed), w = 0;
    for (size_t i = 0; i < n; i++)
        if (x->reg[i]->next != REG_EVICT_MARK) {
            x->start[w] = x->start[i];
            x->end[w] = x->end[i];
            x->reg[w++] = x->reg[i];
        }
    idx_pad(x, w, n);
    idx_fix_l1(x, 0, w);
    atomic_store_explicit(&c->n, w, memory_order_release);
}
