/* Atomic memory operations. One atomicity agent per job, chosen at init and
 * the same on every PE: when all PEs share one node, the CPU (atomic
 * instructions on the peer's heap or data segment mapped here); when the
 * job spans nodes, the NIC for every AMO, self and on-node peers included
 * (through locus rma, which runs them as NIC atomics: a NIC atomic is not
 * atomic against a CPU atomic on the same word, so mixing agents would lose
 * updates). Either way AMOs of one width on one word from self, on-node
 * and off-node PEs are atomic with each other. Fetching _nbi forms complete
 * at once (allowed: they are complete by the next quiet). */
#include "shmem/shmem_internal.h"

static uint64_t cpu_amo(locus_rma_amo_op_t op, void *p, size_t width, uint64_t v, uint64_t cmp)
{
    if (width == 8) {
        uint64_t *w = p;
        switch (op) {
        case LOCUS_RMA_AMO_FETCH: return __atomic_load_n(w, __ATOMIC_SEQ_CST);
        case LOCUS_RMA_AMO_SET: __atomic_store_n(w, v, __ATOMIC_SEQ_CST); return 0;
        case LOCUS_RMA_AMO_SWAP: return __atomic_exchange_n(w, v, __ATOMIC_SEQ_CST);
        case LOCUS_RMA_AMO_CSWAP:
            __atomic_compare_exchange_n(w, &cmp, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
            return cmp;
        case LOCUS_RMA_AMO_ADD: return __atomic_fetch_add(w, v, __ATOMIC_SEQ_CST);
        case LOCUS_RMA_AMO_AND: return __atomic_fetch_and(w, v, __ATOMIC_SEQ_CST);
        case LOCUS_RMA_AMO_OR: return __atomic_fetch_or(w, v, __ATOMIC_SEQ_CST);
        case LOCUS_RMA_AMO_XOR: return __atomic_fetch_xor(w, v, __ATOMIC_SEQ_CST);
        }
        return 0;
    }
    uint32_t *w = p, v32 = (uint32_t)v, c32 = (uint32_t)cmp;
    switch (op) {
    case LOCUS_RMA_AMO_FETCH: return __atomic_load_n(w, __ATOMIC_SEQ_CST);
    case LOCUS_RMA_AMO_SET: __atomic_store_n(w, v32, __ATOMIC_SEQ_CST); return 0;
    case LOCUS_RMA_AMO_SWAP: return __atomic_exchange_n(w, v32, __ATOMIC_SEQ_CST);
    case LOCUS_RMA_AMO_CSWAP:
        __atomic_compare_exchange_n(w, &c32, v32, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
        return c32;
    case LOCUS_RMA_AMO_ADD: return __atomic_fetch_add(w, v32, __ATOMIC_SEQ_CST);
    case LOCUS_RMA_AMO_AND: return __atomic_fetch_and(w, v32, __ATOMIC_SEQ_CST);
    case LOCUS_RMA_AMO_OR: return __atomic_fetch_or(w, v32, __ATOMIC_SEQ_CST);
    case LOCUS_RMA_AMO_XOR: return __atomic_fetch_xor(w, v32, __ATOMIC_SEQ_CST);
    }
    return 0;
}

uint64_t lshm_amo(const char *call, locus_rma_amo_op_t op, void *dest, size_t width, uint64_t operand,
                  uint64_t compare, int pe, bool fetch)
{
    if ((uintptr_t)dest % width) {
        lshm_check_pe(call, pe);
        lshm_fatal(call, "misaligned atomic: address %p (PE %d) is not %zu-byte aligned", dest, pe, width);
    }
    lshm_settle();
    if (lshm.cpu_amo) {
        char *p = lshm_mapped(call, dest, width, pe);
        if (p)
            return cpu_amo(op, p, width, operand, compare);
        lshm_fatal(call, "atomic on %p of PE %d: its memory is not mapped here, although the CPU is the job's "
                   "atomicity agent", dest, pe);
    }
    uint64_t old = 0, off;
    int r = lshm_locate(call, dest, width, pe, &off);
    lshm_lock();
    locus_status_t st =
        locus_rma_amo(lshm.rma, pe, op, (void *)dest, width, operand, compare, fetch ? &old : NULL);
    lshm_unlock();
    if (st) {
        if (st == LOCUS_ERR_UNSUPPORTED && r == LSHM_DATA)
            lshm_fatal(call, "atomic on the global or static variable at %p of PE %d: with the job on several "
                       "nodes atomics go through the NIC, and locus rma reaches only the symmetric heap there "
                       "for now: put the variable in shmem_malloc'd memory", dest, pe);
        lshm_fatal_status(call, st, "atomic through the NIC");
    }
    if (!fetch)
        __atomic_store_n(&lshm.nic_pending, true, __ATOMIC_RELAXED);
    return old;
}
