/* Invalidation: the regions overlapping a range leave the index (never
 * returned again) and die; holders keep them until their put. Ranges come
 * from locus_reg_invalidate and from liblocus_hooks (reg_hooks.c). A hook
 * may run while this thread or another holds the cache's lock (inside the
 * backend, inside malloc), so it never waits for it: if the lock is busy it
 * queues the range, and the hit path goes to the slow path (pending_n) until
 * the holder applies the queue at its unlock. */
#include "reg/reg_index.h"
#include "core/error.h"

#include <string.h>

/* Statics overlapping [s, e) die; the others stay, in order. */
static void invalidate_statics(locus_reg_cache_t *c, uint64_t s, uint64_t e)
{
    int ns = atomic_load_explicit(&c->nstatic, memory_order_relaxed), k = 0;
    for (int i = 0; i < ns; i++) {
        reg_region_t *r = c->statics[i];
        if (r->start < e && r->end > s) {
            c->invalidations++;
            reg_mark_dead(c, r);
        } else {
            c->statics[k++] = r;
        }
    }
    atomic_store_explicit(&c->nstatic, k, memory_order_release);
}

/* Remove every region overlapping [s, e) from the index (and statics if asked). */
void reg_invalidate_locked(locus_reg_cache_t *c, uint64_t s, uint64_t e, bool statics)
{
    c->invalidate_calls++;
    if (statics)
        invalidate_statics(c, s, e);
    long lo, hi;
    reg_idx_run(c, s, e, false, &lo, &hi);
    if (hi < lo)
        return;
    reg_index_t *x = atomic_load_explicit(&c->idx, memory_order_relaxed);
    reg_seq_begin(c);
    /* DEAD inside the write section: no reader can validate against it */
    for (long i = lo; i <= hi; i++)
        reg_mark_dead(c, x->reg[i]);
    reg_idx_replace(c, (size_t)lo, (size_t)hi + 1, NULL);
    reg_seq_end(c);
    c->invalidations += (uint64_t)(hi - lo + 1);
}

/* ---------- the queue of ranges that found the lock busy ---------- */

static void pend_lock(locus_reg_cache_t *c)
{
    while (atomic_flag_test_and_set_explicit(&c->pend_lock, memory_order_acquire))
        __builtin_ia32_pause();
}

static void pend_unlock(locus_reg_cache_t *c)
{
    atomic_flag_clear_explicit(&c->pend_lock, memory_order_release);
}

static void pend_push(locus_reg_cache_t *c, uint64_t s, uint64_t e)
{
    pend_lock(c);
    if (c->pend_count < REG_PENDING) {
        c->pend_s[c->pend_count] = s;
        c->pend_e[c->pend_count] = e;
        c->pend_count++;
    } else {
        c->pend_overflow = true; /* too many: every dynamic region goes */
    }
    atomic_store_explicit(&c->pending_n, 1, memory_order_seq_cst);
    pend_unlock(c);
}

/* Apply queued invalidations (under the lock); pending_n drops to 0 only
 * once they are applied. */
void reg_process_pending(locus_reg_cache_t *c)
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
            reg_invalidate_locked(c, 0, UINT64_MAX, false);
        for (unsigned i = 0; i < cnt; i++)
            reg_invalidate_locked(c, s[i], e[i], e[i] != UINT64_MAX);
        pend_lock(c);
        if (!c->pend_count && !c->pend_overflow)
            atomic_store_explicit(&c->pending_n, 0, memory_order_release);
        pend_unlock(c);
    }
}

/* e == UINT64_MAX: every dynamic region (statics kept). Never blocks. */
void reg_invalidate_from_hook(locus_reg_cache_t *c, uint64_t s, uint64_t e)
{
    if (pthread_mutex_trylock(&c->lock) == 0) {
        reg_process_pending(c);
        reg_invalidate_locked(c, s, e, e != UINT64_MAX);
        reg_process_pending(c);
        /* no reap: the hooks never call the backend (it may allocate or unmap) */
        pthread_mutex_unlock(&c->lock);
        return;
    }
    pend_push(c, s, e);
}

locus_status_t locus_reg_invalidate(locus_reg_cache_t *c, const void *addr, size_t len)
{
    uint64_t a = (uintptr_t)addr;
    if (!len)
        return lc_err(LOCUS_ERR_INVALID, "length 0 at %p: expected > 0 bytes", addr);
    if (a + len < a)
        return lc_err(LOCUS_ERR_RANGE, "address %p + length %zu overflows the address space", addr, len);
    if (!c) {
        reg_invalidate_all_caches(reg_page_down(a), reg_page_up(a + len));
        return LOCUS_OK;
    }
    reg_lock(c);
    reg_invalidate_locked(c, reg_page_down(a), reg_page_up(a + len), true);
    reg_unlock(c);
    return LOCUS_OK;
}
