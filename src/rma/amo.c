/* Atomics: one agent per job. CPU (__atomic on the mapped heaps) when every
 * process is on one node; otherwise the NIC for every process, self and
 * on-node peers included (verbs atomics are atomic only against the same
 * HCA's atomics, not against CPU ones). The NIC has 64-bit fetch-add and
 * compare-swap; everything else is a compare-swap loop on the aligned
 * 8-byte word (32-bit operations on its half). */
#include "rma/rma_internal.h"

#include <stdio.h>
#include <string.h>

#include "core/error.h"

static const char *op_name(locus_rma_amo_op_t op)
{
    static const char *n[] = {"fetch", "set", "swap", "compare-swap", "add", "and", "or", "xor"};
    return (unsigned)op <= LOCUS_RMA_AMO_XOR ? n[op] : "?";
}

static uint64_t apply(locus_rma_amo_op_t op, uint64_t old, uint64_t operand, uint64_t compare)
{
    switch (op) {
    case LOCUS_RMA_AMO_FETCH: return old;
    case LOCUS_RMA_AMO_SET:
    case LOCUS_RMA_AMO_SWAP: return operand;
    case LOCUS_RMA_AMO_CSWAP: return old == compare ? operand : old;
    case LOCUS_RMA_AMO_ADD: return old + operand;
    case LOCUS_RMA_AMO_AND: return old & operand;
    case LOCUS_RMA_AMO_OR: return old | operand;
    case LOCUS_RMA_AMO_XOR: return old ^ operand;
    }
    return old;
}

/* ---------- CPU ---------- */

#define CPU_AMO(T, p, op, v, c)                                                                        \
    do {                                                                                               \
        T *w = (T *)(p), cv = (T)(c);                                                                  \
        switch (op) {                                                                                  \
        case LOCUS_RMA_AMO_FETCH: return __atomic_load_n(w, __ATOMIC_SEQ_CST);                         \
        case LOCUS_RMA_AMO_SET:                                                                        \
        case LOCUS_RMA_AMO_SWAP: return __atomic_exchange_n(w, (T)(v), __ATOMIC_SEQ_CST);              \
        case LOCUS_RMA_AMO_CSWAP:                                                                      \
            __atomic_compare_exchange_n(w, &cv, (T)(v), false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);    \
            return cv;                                                                                 \
        case LOCUS_RMA_AMO_ADD: return __atomic_fetch_add(w, (T)(v), __ATOMIC_SEQ_CST);                \
        case LOCUS_RMA_AMO_AND: return __atomic_fetch_and(w, (T)(v), __ATOMIC_SEQ_CST);                \
        case LOCUS_RMA_AMO_OR: return __atomic_fetch_or(w, (T)(v), __ATOMIC_SEQ_CST);                  \
        case LOCUS_RMA_AMO_XOR: return __atomic_fetch_xor(w, (T)(v), __ATOMIC_SEQ_CST);                \
        }                                                                                              \
    } while (0)

static uint64_t cpu_amo(void *p, size_t width, locus_rma_amo_op_t op, uint64_t v, uint64_t c)
{
    if (width == 8)
        CPU_AMO(uint64_t, p, op, v, c);
    else
        CPU_AMO(uint32_t, p, op, v, c);
    return 0;
}

/* ---------- NIC ---------- */

static locus_status_t nic_wait(locus_rma_t *r, int rank, rdma_comp_t *comp, locus_status_t st)
{
    if (!st && comp->pending)
        st = rdma_wait(r->ifc, comp);
    if (st && r->peers[rank].ep && rdma_ep_status(r->peers[rank].ep) != LOCUS_OK)
        return rma_fail_rank(r, rank, st);
    return st;
}

/* win: the peer's window (0 its heap, 1 + i added region i). */
static locus_status_t nic_cswap(locus_rma_t *r, int rank, int win, uint64_t woff, uint64_t expect, uint64_t want,
                                uint64_t *actual)
{
    rdma_comp_t c = {0};
    r->stats.amos_nic++;
    return nic_wait(r, rank, &c, rdma_cswap_w(r->peers[rank].ep, win, woff, expect, want, actual, &c));
}

/* The operation on the word (width 8) or on its half at byte `shift` / 8
 * (width 4, little-endian), as compare-swap rounds starting from a guess of
 * 0: one round trip when the word is 0, two when nothing races. */
static locus_status_t nic_cas_loop(locus_rma_t *r, int rank, int win, uint64_t woff, unsigned shift, size_t width,
                                   locus_rma_amo_op_t op, uint64_t operand, uint64_t compare, uint64_t *old_out)
{
    uint64_t mask = width == 8 ? ~0ull : 0xffffffffull << shift, word = 0;
    for (;;) {
        uint64_t cur = (word & mask) >> shift;
        uint64_t next = apply(op, cur, operand, compare) & (mask >> shift);
        uint64_t want = (word & ~mask) | (next << shift), actual;
        locus_status_t st = nic_cswap(r, rank, win, woff, word, want, &actual);
        if (st)
            return st;
        if (actual == word) {
            *old_out = cur;
            return LOCUS_OK;
        }
        word = actual;
    }
}

static locus_status_t nic_amo(locus_rma_t *r, int rank, int win, locus_rma_amo_op_t op, uint64_t off,
                              size_t width, uint64_t operand, uint64_t compare, uint64_t *fetched)
{
    rma_peer_t *p = &r->peers[rank];
    if (!rdma_iface_caps(r->ifc)->atomics)
        return lc_err(LOCUS_ERR_UNSUPPORTED, "rma %s: the NIC's atomics are unusable here (see locus_rma_notes)",
                      op_name(op));
    uint64_t old = 0;
    rdma_comp_t c = {0};
    locus_status_t st;
    if (width == 8 && op == LOCUS_RMA_AMO_ADD && !fetched) { /* completes by flush */
        r->stats.amos_nic++;
        return nic_wait(r, rank, &c, rdma_fetch_add_w(p->ep, win, off, operand, NULL, NULL));
    }
    if (width == 8 && (op == LOCUS_RMA_AMO_ADD || op == LOCUS_RMA_AMO_FETCH)) {
        r->stats.amos_nic++;
        st = nic_wait(r, rank, &c,
                      rdma_fetch_add_w(p->ep, win, off, op == LOCUS_RMA_AMO_ADD ? operand : 0, &old, &c));
    } else if (width == 8 && op == LOCUS_RMA_AMO_CSWAP) {
        st = nic_cswap(r, rank, win, off, compare, operand, &old);
    } else {
        st = nic_cas_loop(r, rank, win, off & ~7ull, (unsigned)(off & 4) * 8, width, op, operand, compare, &old);
    }
    if (!st && fetched)
        *fetched = old;
    return st;
}

/* ---------- entry points ---------- */

static locus_status_t check(const locus_rma_t *r, locus_rma_amo_op_t op, size_t width, const uint64_t *fetched)
{
    if (!r)
        return lc_err(LOCUS_ERR_INVALID, "rma atomic: handle NULL");
    if ((unsigned)op > LOCUS_RMA_AMO_XOR)
        return lc_err(LOCUS_ERR_INVALID, "rma atomic op %d: expected LOCUS_RMA_AMO_FETCH..XOR", (int)op);
    if (width != 4 && width != 8)
        return lc_err(LOCUS_ERR_INVALID, "rma %s of width %zu: expected 4 or 8 bytes", op_name(op), width);
    if (!fetched && (op == LOCUS_RMA_AMO_FETCH || op == LOCUS_RMA_AMO_SWAP || op == LOCUS_RMA_AMO_CSWAP))
        return lc_err(LOCUS_ERR_INVALID, "rma %s: fetched NULL: this operation returns the old value", op_name(op));
    return LOCUS_OK;
}

locus_status_t locus_rma_amo(locus_rma_t *r, int rank, locus_rma_amo_op_t op, void *sym, size_t width,
                             uint64_t operand, uint64_t compare, uint64_t *fetched)
{
    locus_status_t st = check(r, op, width, fetched);
    if (st)
        return st;
    int region;
    uint64_t off;
    if ((st = rma_locate(r, op_name(op), rank, sym, width, &region, &off)))
        return st;
    /* added regions: the NIC (a window) when it is the agent; the CPU on our
     * own copy; another local process's copy has no mapping here */
    if (region >= 0 && r->cpu_atomics && rank != r->rank)
        return lc_err(LOCUS_ERR_UNSUPPORTED, "rma %s on added region %d of rank %d: on one node atomics reach the "
                      "symmetric heap and this process's own regions only", op_name(op), region, rank);
    if (off % width)
        return lc_err(LOCUS_ERR_INVALID, "rma %s of %zu bytes at heap offset %llu: not %zu-byte aligned", op_name(op),
                      width, (unsigned long long)off, width);
    if (r->peers[rank].failed)
        return rma_peer_error(r, rank);
    rma_help_settle(r); /* after the puts made before it */
    if (width == 4) {
        operand &= 0xffffffffull;
        compare &= 0xffffffffull;
    }
    if (!r->cpu_atomics)
        return nic_amo(r, rank, region + 1, op, off, width, operand, compare, fetched);
    char *at = region >= 0 ? r->regions[region].mine + off : r->peers[rank].base + off;
    uint64_t old = cpu_amo(at, width, op, operand, compare);
    r->stats.amos_cpu++;
    if (fetched)
        *fetched = old;
    return LOCUS_OK;
}

locus_status_t locus_rma_fetch_add(locus_rma_t *r, int rank, uint64_t *sym, uint64_t add, uint64_t *old)
{
    return locus_rma_amo(r, rank, LOCUS_RMA_AMO_ADD, sym, 8, add, 0, old);
}

locus_status_t locus_rma_cswap(locus_rma_t *r, int rank, uint64_t *sym, uint64_t compare, uint64_t value,
                               uint64_t *old)
{
    return locus_rma_amo(r, rank, LOCUS_RMA_AMO_CSWAP, sym, 8, value, compare, old);
}

locus_status_t locus_rma_swap(locus_rma_t *r, int rank, uint64_t *sym, uint64_t value, uint64_t *old)
{
    return locus_rma_amo(r, rank, LOCUS_RMA_AMO_SWAP, sym, 8, value, 0, old);
}
