/* Reference counts: the per-CPU counter entries of a region. Inline: the
 * hit path (reg_get.c) is made of these.
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
#ifndef LOCUS_REG_REFS_H
#define LOCUS_REG_REFS_H

#include "reg/reg_internal.h"

/* Without rseq: this thread's round-robin shard + 1 (0 = not yet chosen).
 * Default TLS model (liblocus must stay dlopen-able; see reg_get.c). */
extern __thread unsigned reg_tls_cnt_shard;
unsigned reg_cnt_shard_pick(void);

static inline unsigned reg_cnt_shard(const locus_reg_cache_t *c)
{
    if (LIKELY(c->rseq_cpu_off >= 0)) {
#if defined(__x86_64__) && defined(__SEG_FS)
        /* one fs-relative load of rseq.cpu_id */
        return *(const volatile __seg_fs uint32_t *)(uintptr_t)c->rseq_cpu_off & c->cnt_mask;
#else
        return *(const volatile uint32_t *)((char *)__builtin_thread_pointer() + c->rseq_cpu_off) & c->cnt_mask;
#endif
    }
    unsigned s = reg_tls_cnt_shard;
    if (UNLIKELY(!s))
        s = reg_cnt_shard_pick();
    return (s - 1) & c->cnt_mask;
}

/* Entry s of the region at slot i of its slab (the entries precede the regions). */
static inline reg_cnt_t *reg_cnt_at_slot(const locus_reg_cache_t *c, const reg_region_t *r, uint32_t i,
                                         unsigned s)
{
    reg_cnt_t *cnt = (reg_cnt_t *)(r - i) - (size_t)(c->cnt_mask + 1) * REG_SLAB;
    return &cnt[(size_t)s * REG_SLAB + i];
}

static inline reg_cnt_t *reg_cnt_at(const locus_reg_cache_t *c, const reg_region_t *r, unsigned s)
{
    return reg_cnt_at_slot(c, r, r->slot, s);
}

/* The summed count (mod 2^32, as a signed value). */
static inline int32_t reg_cnt_sum(const locus_reg_cache_t *c, const reg_region_t *r, memory_order mo)
{
    uint32_t sum = 0;
    for (unsigned s = 0; s <= c->cnt_mask; s++)
        sum += atomic_load_explicit(&reg_cnt_at(c, r, s)->n, mo);
    return (int32_t)sum;
}

/* Record a use at miss tick `tick` (LRU), writing the line only if it changes. */
static inline void reg_cnt_touch(reg_cnt_t *k, uint64_t tick)
{
    if (atomic_load_explicit(&k->tick, memory_order_relaxed) != (uint32_t)tick)
        atomic_store_explicit(&k->tick, (uint32_t)tick, memory_order_relaxed);
}

/* Take a reference through the calling CPU's entry, used at `tick`; under
 * the lock, on a region that is INDEXED and stays so. */
static inline void reg_cnt_get_locked(locus_reg_cache_t *c, reg_region_t *r, uint64_t tick)
{
    reg_cnt_t *k = reg_cnt_at(c, r, reg_cnt_shard(c));
    atomic_fetch_add_explicit(&k->n, 1, memory_order_seq_cst);
    reg_cnt_touch(k, tick);
}

#endif
