/* Barrier, progress and liveness. The barrier is a dissemination barrier
 * over the transports themselves (a flag word per round in each control
 * block: a CPU store into a mapped heap, an 8-byte RDMA WRITE otherwise), so
 * that it needs no launcher connection and every wait in it watches the
 * peers: a process that only waits on memory learns nothing of a dead peer
 * (no request of its own is outstanding), so after RMA_PROBE_NS of waiting
 * it probes them (an RDMA READ, which a dead peer fails within the QP's
 * detection time; kill(pid, 0) on this node). */
#include "rma/rma_internal.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>

#include "core/clock.h"
#include "core/error.h"

static uint64_t ctrl_off(const rma_peer_t *p) { return p->obj_size - RMA_CTRL; }

static locus_status_t check_local(locus_rma_t *r, int q)
{
    rma_peer_t *p = &r->peers[q];
    if (kill(p->pid, 0) == 0 || errno != ESRCH)
        return LOCUS_OK;
    lc_err(LOCUS_ERR_PEER_FAILED, "process %d on this node is gone", (int)p->pid);
    return rma_fail_rank(r, q, LOCUS_ERR_PEER_FAILED);
}

/* A NIC peer: its last probe's outcome, then a new READ of its control
 * block's junk word into ours. */
static locus_status_t check_nic(locus_rma_t *r, int q)
{
    rma_peer_t *p = &r->peers[q];
    if (rdma_ep_status(p->ep) != LOCUS_OK)
        return rma_fail_rank(r, q, LOCUS_ERR_PEER_FAILED);
    if (p->probe.pending)
        return LOCUS_OK;
    char *sink = r->base + r->obj_size - RMA_CTRL + RMA_CTRL_PROBE;
    locus_status_t st = rdma_get(p->ep, sink, ctrl_off(p) + RMA_CTRL_PROBE, 8, &p->probe);
    if (st && rdma_ep_status(p->ep) != LOCUS_OK)
        return rma_fail_rank(r, q, st);
    return LOCUS_OK;
}

locus_status_t rma_liveness(locus_rma_t *r, bool force)
{
    if (r->broken)
        return rma_peer_error(r, r->failed_rank);
    uint64_t now = lc_now_ns();
    if (!force && now - r->last_probe_ns < RMA_PROBE_NS)
        return LOCUS_OK;
    r->last_probe_ns = now;
    if (r->ifc)
        rdma_iface_progress(r->ifc);
    for (int q = 0; q < r->size; q++) {
        if (q == r->rank)
            continue;
        rma_peer_t *p = &r->peers[q];
        if (p->failed)
            return rma_peer_error(r, q);
        locus_status_t st = p->node == r->node ? check_local(r, q) : LOCUS_OK;
        if (!st && p->ep)
            st = check_nic(r, q);
        if (st)
            return st;
    }
    return LOCUS_OK;
}

/* Wait until our slot of round k holds `epoch`, progressing the NIC and,
 * after RMA_PROBE_NS, watching the peers. A long wait gives the CPU away
 * (yield after RMA_YIELD_NS, short sleeps after RMA_SLEEP_NS): a process that
 * only waits must not starve the ones it waits for when cores are shared
 * (oversubscribed nodes; a software RDMA device whose work runs on the
 * receiver's CPU). */
static locus_status_t wait_slot(locus_rma_t *r, int k, uint64_t epoch)
{
    volatile uint64_t *slot = (uint64_t *)(r->base + r->obj_size - RMA_CTRL + RMA_CTRL_BARRIER) + k;
    uint64_t start = 0;
    unsigned spins = 0;
    while (__atomic_load_n(slot, __ATOMIC_ACQUIRE) < epoch) {
        if (r->ifc)
            rdma_iface_progress(r->ifc);
        if ((spins & 63) == 0)
            rma_help_others(r);
        if (++spins < 256) {
            __builtin_ia32_pause();
            continue;
        }
        spins = 0;
        uint64_t now = lc_now_ns();
        if (!start)
            start = now;
        uint64_t waited = now - start;
        if (waited >= RMA_PROBE_NS) {
            locus_status_t st = rma_liveness(r, false);
            if (st)
                return st;
        }
        if (waited >= RMA_SLEEP_NS)
            lc_sleep_ns(lc_backoff_ns(waited, RMA_NAP_NS));
        else if (waited >= RMA_YIELD_NS)
            sched_yield();
    }
    return LOCUS_OK;
}

static locus_status_t signal_slot(locus_rma_t *r, int to, int k, uint64_t epoch)
{
    rma_peer_t *p = &r->peers[to];
    uint64_t off = ctrl_off(p) + RMA_CTRL_BARRIER + 8u * (unsigned)k;
    if (p->path == RMA_PATH_LOCAL) {
        __atomic_store_n((uint64_t *)(p->base + off), epoch, __ATOMIC_RELEASE);
        return LOCUS_OK;
    }
    /* 8 bytes: inline or bounce, so the local variable may go at return;
     * behind every earlier WRITE on this QP (RC executes them in order) */
    locus_status_t st = rdma_put(p->ep, &epoch, off, 8, NULL);
    return st && rdma_ep_status(p->ep) != LOCUS_OK ? rma_fail_rank(r, to, st) : st;
}

locus_status_t rma_sync(locus_rma_t *r)
{
    if (r->broken)
        return rma_peer_error(r, r->failed_rank);
    uint64_t epoch = ++r->epoch;
    for (int k = 0, d = 1; d < r->size; k++, d <<= 1) {
        int to = (r->rank + d) % r->size;
        locus_status_t st = signal_slot(r, to, k, epoch);
        if (st || (st = wait_slot(r, k, epoch)))
            return st;
    }
    return LOCUS_OK;
}

locus_status_t locus_rma_barrier(locus_rma_t *r)
{
    if (!r)
        return lc_err(LOCUS_ERR_INVALID, "rma barrier: handle NULL");
    locus_status_t st = locus_rma_flush_all(r);
    return st ? st : rma_sync(r);
}

locus_status_t locus_rma_progress(locus_rma_t *r)
{
    if (!r)
        return lc_err(LOCUS_ERR_INVALID, "rma progress: handle NULL");
    if (r->broken)
        return rma_peer_error(r, r->failed_rank);
    rma_help_others(r);
    return rma_liveness(r, false);
}
