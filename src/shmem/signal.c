/* put_signal, signal_fetch, signal_wait_until (1.5), signal_add/set (1.6).
 * The data goes like any put; the signal is an AMO (set or add) by the
 * job's atomicity agent, after the data is delivered: on this node the copy
 * is complete and the atomic orders after it; to another node a fence drains
 * the data first. Signal words are thus atomic with respect to other signal
 * operations, AMOs and waits on them, as the spec asks. */
#include "shmem/shmem_internal.h"

#define CALL lshm_name(__func__)
#define CTXPE(ctx, pe) lshm_ctx_pe(CALL, ctx, pe)

/* The one way a signal word changes (put_signal, signal_add/set). */
static void signal_update(const char *call, uint64_t *sig, uint64_t signal, locus_rma_amo_op_t op, int pe)
{
    lshm_amo(call, op, sig, 8, signal, 0, pe, false);
}

static void put_signal(const char *call, void *dest, const void *src, size_t bytes, uint64_t *sig, uint64_t signal,
                       int sig_op, int pe, bool nbi)
{
    if (sig_op != SHMEM_SIGNAL_SET && sig_op != SHMEM_SIGNAL_ADD)
        lshm_fatal(call, "sig_op %d: expected SHMEM_SIGNAL_SET or SHMEM_SIGNAL_ADD", sig_op);
    lshm_put(call, dest, src, bytes, pe, nbi);
    lshm_fence();
    signal_update(call, sig, signal, sig_op == SHMEM_SIGNAL_SET ? LOCUS_RMA_AMO_SET : LOCUS_RMA_AMO_ADD, pe);
}

#define DEF_SIG(T, N)                                                                              \
    LSHM_DEF(void, shmem_##N##_put_signal, (T * dest, const T *source, size_t nelems, uint64_t *sig_addr, \
                                             uint64_t signal, int sig_op, int pe))                 \
    { put_signal(CALL, dest, source, nelems * sizeof(T), sig_addr, signal, sig_op, CTXPE(SHMEM_CTX_DEFAULT, pe), false); } \
    LSHM_DEF(void, shmem_ctx_##N##_put_signal, (shmem_ctx_t ctx, T * dest, const T *source, size_t nelems, \
                                                 uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)) \
    { put_signal(CALL, dest, source, nelems * sizeof(T), sig_addr, signal, sig_op, CTXPE(ctx, pe), false); } \
    LSHM_DEF(void, shmem_##N##_put_signal_nbi, (T * dest, const T *source, size_t nelems, uint64_t *sig_addr, \
                                                 uint64_t signal, int sig_op, int pe))             \
    { put_signal(CALL, dest, source, nelems * sizeof(T), sig_addr, signal, sig_op, CTXPE(SHMEM_CTX_DEFAULT, pe), true); } \
    LSHM_DEF(void, shmem_ctx_##N##_put_signal_nbi, (shmem_ctx_t ctx, T * dest, const T *source, size_t nelems, \
                                                     uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)) \
    { put_signal(CALL, dest, source, nelems * sizeof(T), sig_addr, signal, sig_op, CTXPE(ctx, pe), true); }
_LSHM_RMA_TYPES(DEF_SIG)

#define DEF_SIG_SIZED(B, U)                                                                        \
    LSHM_DEF(void, shmem_put##B##_signal, (void *dest, const void *source, size_t nelems, uint64_t *sig_addr, \
                                            uint64_t signal, int sig_op, int pe))                  \
    { put_signal(CALL, dest, source, nelems * U, sig_addr, signal, sig_op, CTXPE(SHMEM_CTX_DEFAULT, pe), false); } \
    LSHM_DEF(void, shmem_ctx_put##B##_signal, (shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, \
                                                uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)) \
    { put_signal(CALL, dest, source, nelems * U, sig_addr, signal, sig_op, CTXPE(ctx, pe), false); } \
    LSHM_DEF(void, shmem_put##B##_signal_nbi, (void *dest, const void *source, size_t nelems, uint64_t *sig_addr, \
                                                uint64_t signal, int sig_op, int pe))              \
    { put_signal(CALL, dest, source, nelems * U, sig_addr, signal, sig_op, CTXPE(SHMEM_CTX_DEFAULT, pe), true); } \
    LSHM_DEF(void, shmem_ctx_put##B##_signal_nbi, (shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, \
                                                    uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)) \
    { put_signal(CALL, dest, source, nelems * U, sig_addr, signal, sig_op, CTXPE(ctx, pe), true); }
_LSHM_SIZES(DEF_SIG_SIZED)
DEF_SIG_SIZED(mem, 1)

LSHM_DEF(uint64_t, shmem_signal_fetch, (const uint64_t *sig_addr))
{
    lshm_require_init(CALL);
    if ((uintptr_t)sig_addr % 8)
        lshm_fatal(CALL, "signal address %p is not 8-byte aligned", (const void *)sig_addr);
    return __atomic_load_n(sig_addr, __ATOMIC_ACQUIRE);
}

LSHM_DEF(uint64_t, shmem_signal_wait_until, (uint64_t *sig_addr, int cmp, uint64_t cmp_value))
{
    const char *call = CALL;
    if (cmp < SHMEM_CMP_EQ || cmp > SHMEM_CMP_LE)
        lshm_fatal(call, "comparison %d: expected SHMEM_CMP_EQ, _NE, _GT, _GE, _LT or _LE", cmp);
    unsigned spins = 0;
    for (;;) {
        uint64_t v = __atomic_load_n(sig_addr, __ATOMIC_ACQUIRE);
        if (lshm_cmp_u64(cmp, v, cmp_value, 8, false))
            return v;
        lshm_relax(call, &spins);
    }
}

/* 1.6: a signal update alone. */
LSHM_DEF(void, shmem_signal_add, (uint64_t * sig_addr, uint64_t signal, int pe))
{ signal_update(CALL, sig_addr, signal, LOCUS_RMA_AMO_ADD, CTXPE(SHMEM_CTX_DEFAULT, pe)); }
LSHM_DEF(void, shmem_ctx_signal_add, (shmem_ctx_t ctx, uint64_t * sig_addr, uint64_t signal, int pe))
{ signal_update(CALL, sig_addr, signal, LOCUS_RMA_AMO_ADD, CTXPE(ctx, pe)); }
LSHM_DEF(void, shmem_signal_set, (uint64_t * sig_addr, uint64_t signal, int pe))
{ signal_update(CALL, sig_addr, signal, LOCUS_RMA_AMO_SET, CTXPE(SHMEM_CTX_DEFAULT, pe)); }
LSHM_DEF(void, shmem_ctx_signal_set, (shmem_ctx_t ctx, uint64_t * sig_addr, uint64_t signal, int pe))
{ signal_update(CALL, sig_addr, signal, LOCUS_RMA_AMO_SET, CTXPE(ctx, pe)); }
