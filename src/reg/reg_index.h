/* The index's lock-free reads (inline: the hit path). The arrays, their
 * writers and the layout are in reg_index.c and reg_internal.h. */
#ifndef LOCUS_REG_INDEX_H
#define LOCUS_REG_INDEX_H

#include "reg/reg_internal.h"

/* Seqlock readers read the index arrays while the lock holder may be
 * rewriting them and discard what they read if seq moved: a deliberate race
 * that ThreadSanitizer cannot see through, so under TSan these reads are
 * not instrumented (the writes still are). */
#if defined(__SANITIZE_THREAD__)
#define SEQLOCK_READ __attribute__((no_sanitize_thread)) /* never inlined into instrumented code */
#else
#define SEQLOCK_READ
#endif

/* Last i with start[i] <= addr, or -1: a binary search over the summary
 * level l1 (one key per 16 entries), then a branch-free count over 16
 * starts. Pure reads: callers validate with seq. */
static inline SEQLOCK_READ long reg_idx_find(const reg_index_t *x, size_t n, uint64_t addr)
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

/* x->reg[i] (or NULL for i < 0) for a seqlock reader. */
static inline SEQLOCK_READ reg_region_t *reg_idx_reg_seq(const reg_index_t *x, long i)
{
    return i >= 0 ? x->reg[i] : NULL;
}

#endif
