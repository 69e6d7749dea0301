/* ep: one RC QP per peer — creation (RESET -> INIT), the address blob,
 * connection (INIT -> RTR -> RTS), failure and teardown. */
#include "rdma/rdma_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include "core/clock.h"
#include "core/error.h"

static uint32_t random_psn(void)
{
    uint32_t v;
    if (getrandom(&v, sizeof v, GRND_NONBLOCK) != (ssize_t)sizeof v)
        v = (uint32_t)lc_now_ns() * 2654435761u;
    return v & 0xffffff;
}

static int qp_access(const rdma_md_t *md)
{
    int f = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
    return md->info.atomic_cap != IBV_ATOMIC_NONE ? f | IBV_ACCESS_REMOTE_ATOMIC : f;
}

static locus_status_t to_init(rdma_ep_t *ep)
{
    rdma_md_t *md = ep->ifc->md;
    struct ibv_qp_attr a;
    memset(&a, 0, sizeof a);
    a.qp_state = IBV_QPS_INIT;
    a.pkey_index = 0;
    a.port_num = (uint8_t)md->info.port;
    a.qp_access_flags = (unsigned)qp_access(md);
    if (ibv_modify_qp(ep->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
        return lc_err_errno(LOCUS_ERR_SYSTEM, errno, "QP 0x%x: RESET -> INIT", ep->qp->qp_num);
    return LOCUS_OK;
}

/* Our responder depth: what a peer may have in flight towards us. */
static int dest_rd_atomic(const rdma_md_t *md)
{
    int n = md->attr.rd_atomic < md->info.max_qp_rd_atom ? md->attr.rd_atomic : md->info.max_qp_rd_atom;
    return n < 1 ? 1 : n > 255 ? 255 : n;
}

locus_status_t rdma_ep_create_qp(rdma_iface_t *ifc, uint32_t max_inline, rdma_ep_t **out)
{
    rdma_md_t *md = ifc->md;
    rdma_ep_t *ep = calloc(1, sizeof *ep);
    if (!ep)
        return lc_err(LOCUS_ERR_NO_MEMORY, "rdma endpoint: out of memory");
    ep->ifc = ifc;
    ep->depth = ifc->caps.sq_depth;
    uint32_t ring = 1;
    while (ring < ep->depth)
        ring <<= 1;
    ep->mask = ring - 1;
    ep->slots = calloc(ring, sizeof *ep->slots);
    struct ibv_qp_init_attr ia;
    memset(&ia, 0, sizeof ia);
    ia.qp_context = ep;
    ia.send_cq = ifc->cq;
    ia.recv_cq = ifc->cq; /* no receives are posted: RDMA WRITE/READ/atomics only */
    ia.qp_type = IBV_QPT_RC;
    ia.sq_sig_all = 0;
    ia.cap.max_send_wr = ep->depth;
    ia.cap.max_recv_wr = 1;
    ia.cap.max_send_sge = 1;
    ia.cap.max_recv_sge = 1;
    ia.cap.max_inline_data = max_inline;
    locus_status_t st;
    if (!ep->slots) {
        st = lc_err(LOCUS_ERR_NO_MEMORY, "rdma endpoint: %u slots", ring);
        goto fail;
    }
    ep->qp = ibv_create_qp(md->pd, &ia);
    if (!ep->qp) {
        st = lc_err_errno(errno == ENOMEM ? LOCUS_ERR_NO_SPACE : LOCUS_ERR_SYSTEM, errno,
                          "ibv_create_qp(RC, %u send WRs, %u inline bytes) on %s", ep->depth, max_inline,
                          md->devname);
        goto fail;
    }
    ep->max_inline = ia.cap.max_inline_data; /* what the provider really gave */
    ep->psn = random_psn();
    if ((st = rdma_iface_add_ep(ifc, ep)))
        goto fail_qp;
    if ((st = to_init(ep))) {
        rdma_iface_remove_ep(ifc, ep, true);
        goto fail_qp;
    }
    *out = ep;
    return LOCUS_OK;
fail_qp:
    ibv_destroy_qp(ep->qp);
fail:
    free(ep->slots);
    free(ep);
    return st;
}

locus_status_t rdma_ep_create(rdma_iface_t *ifc, rdma_ep_t **out)
{
    if (!ifc || !out)
        return lc_err(LOCUS_ERR_INVALID, "rdma_ep_create(%p, %p): expected an iface and an output",
                      (void *)ifc, (void *)out);
    *out = NULL;
    return rdma_ep_create_qp(ifc, ifc->caps.max_inline, out);
}

void rdma_ep_fill_peer(const rdma_ep_t *ep, rdma_peer_t *p)
{
    const rdma_md_t *md = ep->ifc->md;
    memset(p, 0, sizeof *p);
    p->qpn = ep->qp->qp_num;
    p->psn = ep->psn;
    p->lid = md->info.lid;
    p->link_layer = (uint8_t)md->info.link_layer;
    p->mtu = (uint8_t)md->info.active_mtu;
    p->rd_atomic = (uint8_t)dest_rd_atomic(md);
    p->atomics = md->info.atomic_cap != IBV_ATOMIC_NONE;
    memcpy(p->gid, md->info.gid, 16);
    p->heap_base = (uintptr_t)md->heap.base;
    p->heap_len = md->heap.len;
    p->heap_rkey = md->heap.rkey;
}

void rdma_ep_addr(const rdma_ep_t *ep, uint8_t out[RDMA_ADDR_BYTES])
{
    rdma_peer_t p;
    rdma_ep_fill_peer(ep, &p);
    rdma_addr_pack(&p, out);
}

static locus_status_t to_rtr(rdma_ep_t *ep, const rdma_peer_t *peer)
{
    rdma_md_t *md = ep->ifc->md;
    struct ibv_qp_attr a;
    memset(&a, 0, sizeof a);
    a.qp_state = IBV_QPS_RTR;
    /* path MTU: the smaller port's active MTU (on RoCE it follows the netdev:
     * Soft-RoCE on a 1500-byte eth0 says IBV_MTU_1024), capped by LOCUS_RDMA_MTU */
    int mtu = md->info.active_mtu < peer->mtu ? md->info.active_mtu : peer->mtu;
    if (md->attr.mtu && md->attr.mtu < mtu)
        mtu = md->attr.mtu;
    a.path_mtu = (enum ibv_mtu)mtu;
    a.dest_qp_num = peer->qpn;
    a.rq_psn = peer->psn;
    a.max_dest_rd_atomic = (uint8_t)dest_rd_atomic(md);
    /* RNR NAKs answer only SENDs and WRITE_WITH_IMM that find no receive
     * posted; this transport posts neither, so the RNR timer (12 = 0.64 ms)
     * and retry count (0, RTS) never come into play. */
    a.min_rnr_timer = 12;
    a.ah_attr.port_num = (uint8_t)md->info.port;
    a.ah_attr.dlid = peer->lid;
    a.ah_attr.sl = 0;
    if (md->info.link_layer == RDMA_LL_ETH) { /* RoCE: always routed by GID */
        a.ah_attr.is_global = 1;
        memcpy(a.ah_attr.grh.dgid.raw, peer->gid, 16);
        a.ah_attr.grh.sgid_index = (uint8_t)md->info.gid_index;
        a.ah_attr.grh.hop_limit = 64;
    }
    if (ibv_modify_qp(ep->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                                      IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
        return lc_err_errno(LOCUS_ERR_SYSTEM, errno, "QP 0x%x: INIT -> RTR towards QP 0x%x (MTU code %d)",
                            ep->qp->qp_num, peer->qpn, mtu);
    return LOCUS_OK;
}

/* timeouts: the requester waits 4.096 us * 2^timeout for an ACK and then
 * resends from the last acknowledged packet; `retry` consecutive expiries
 * without any ACK fail the request with IBV_WC_RETRY_EXC_ERR, which flushes
 * the QP. A dead or vanished peer is therefore detected after
 * (retry + 1) * 4.096 us * 2^timeout: defaults timeout 14, retry 6 give
 * 7 * 67.1 ms = 0.47 s. Soft-RoCE arms exactly that (rounded up to a jiffy);
 * the IBA spec lets hardware wait up to 4x per try, 1.88 s, still within 2 s.
 * retry 7 is excluded: Soft-RoCE treats it as "retry forever" (rxe_comp.c).
 * Any ACK resets the count, so a slow but living peer (TCG, big READs) is
 * not mistaken for a dead one unless it stays silent that long. */
static locus_status_t to_rts(rdma_ep_t *ep, const rdma_peer_t *peer)
{
    rdma_md_t *md = ep->ifc->md;
    struct ibv_qp_attr a;
    memset(&a, 0, sizeof a);
    a.qp_state = IBV_QPS_RTS;
    a.timeout = (uint8_t)md->attr.timeout;
    a.retry_cnt = (uint8_t)md->attr.retry;
    a.rnr_retry = 0;
    a.sq_psn = ep->psn;
    int n = md->attr.rd_atomic;
    if (md->info.max_qp_init_rd_atom < n)
        n = md->info.max_qp_init_rd_atom;
    if (peer->rd_atomic < n)
        n = peer->rd_atomic; /* more would exceed the peer's responder resources: NAK */
    ep->rd_atomic = n < 1 ? 1 : n;
    a.max_rd_atomic = (uint8_t)ep->rd_atomic;
    if (ibv_modify_qp(ep->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                                      IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
        return lc_err_errno(LOCUS_ERR_SYSTEM, errno, "QP 0x%x: RTR -> RTS", ep->qp->qp_num);
    return LOCUS_OK;
}

locus_status_t rdma_ep_connect_peer(rdma_ep_t *ep, const rdma_peer_t *peer)
{
    rdma_md_t *md = ep->ifc->md;
    if (ep->state != EP_INIT)
        return lc_err(LOCUS_ERR_INVALID, "QP 0x%x: already %s", ep->qp->qp_num,
                      ep->state == EP_CONNECTED ? "connected" : "failed");
    if (peer->link_layer != md->info.link_layer)
        return lc_err(LOCUS_ERR_INVALID, "peer QP 0x%x is on %s, this device (%s) on %s", peer->qpn,
                      peer->link_layer == RDMA_LL_ETH ? "Ethernet" : "InfiniBand", md->devname,
                      md->info.link_layer == RDMA_LL_ETH ? "Ethernet" : "InfiniBand");
    static const uint8_t zero[16];
    if (md->info.link_layer == RDMA_LL_ETH && !memcmp(peer->gid, zero, 16))
        return lc_err(LOCUS_ERR_INVALID, "peer QP 0x%x: empty GID on RoCE", peer->qpn);
    locus_status_t st = to_rtr(ep, peer);
    if (!st)
        st = to_rts(ep, peer);
    if (st)
        return st;
    ep->peer = *peer;
    ep->state = EP_CONNECTED;
    return LOCUS_OK;
}

locus_status_t rdma_ep_connect(rdma_ep_t *ep, const uint8_t blob[RDMA_ADDR_BYTES])
{
    if (!ep)
        return lc_err(LOCUS_ERR_INVALID, "rdma_ep_connect: endpoint NULL");
    rdma_peer_t p;
    locus_status_t st = rdma_addr_unpack(blob, &p);
    return st ? st : rdma_ep_connect_peer(ep, &p);
}

void rdma_ep_remote(const rdma_ep_t *ep, uint64_t *base, uint64_t *len)
{
    *base = ep->peer.heap_base;
    *len = ep->peer.heap_len;
}

locus_status_t rdma_ep_status(const rdma_ep_t *ep)
{
    if (!ep)
        return lc_err(LOCUS_ERR_INVALID, "rdma endpoint NULL");
    return ep->state == EP_FAILED ? lc_err(ep->err, "%s", ep->errmsg) : LOCUS_OK;
}

uint32_t rdma_ep_outstanding(const rdma_ep_t *ep) { return ep ? rdma_ep_busy(ep) : 0; }

locus_status_t rdma_ep_fence(rdma_ep_t *ep)
{
    if (!ep)
        return lc_err(LOCUS_ERR_INVALID, "rdma_ep_fence: endpoint NULL");
    return ep->tail < ep->rdat_end ? rdma_ep_flush(ep) : rdma_ep_status(ep);
}

void rdma_ep_fail(rdma_ep_t *ep, locus_status_t code, const char *fmt, ...)
{
    if (ep->state == EP_FAILED)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ep->errmsg, sizeof ep->errmsg, fmt, ap);
    va_end(ap);
    ep->state = EP_FAILED;
    ep->err = code;
    ep->ifc->stats.failed_eps++;
    snprintf(ep->ifc->lastmsg, sizeof ep->ifc->lastmsg, "%s", ep->errmsg);
    /* stop the QP (a failed completion already did); the rest is flushed */
    struct ibv_qp_attr a = {.qp_state = IBV_QPS_ERR};
    ibv_modify_qp(ep->qp, &a, IBV_QP_STATE);
    rdma_ops_retire(ep, ep->head, code);
    lc_err(code, "%s", ep->errmsg);
}

static bool ep_idle(void *arg) { return rdma_ep_busy(arg) == 0; }

locus_status_t rdma_ep_flush(rdma_ep_t *ep)
{
    if (!ep)
        return lc_err(LOCUS_ERR_INVALID, "rdma_ep_flush: endpoint NULL");
    if (ep->state == EP_CONNECTED && rdma_ep_busy(ep) && ep->unsignalled)
        rdma_ops_post_marker(ep, false);
    rdma_iface_wait_until(ep->ifc, ep_idle, ep);
    return rdma_ep_status(ep);
}

/* Destroy: a healthy idle endpoint owes nothing (its last completion
 * retired every request). A failed one may still flush requests it already
 * retired: after ERR, a marker posted behind everything completes (with a
 * flush error) only once every earlier request of the QP has left the CQ,
 * so no stale completion of this QP can arrive later. */
static bool drain(rdma_ep_t *ep)
{
    if (ep->state != EP_FAILED)
        return true;
    struct ibv_qp_attr a = {.qp_state = IBV_QPS_ERR};
    ibv_modify_qp(ep->qp, &a, IBV_QP_STATE);
    if (rdma_ops_post_marker(ep, true))
        return false;
    uint64_t until = lc_now_ns() + 2000000000ull;
    while (!ep->drained && lc_now_ns() < until)
        if (!rdma_iface_progress(ep->ifc))
            rdma_iface_check(ep->ifc, false);
    return ep->drained;
}

void rdma_ep_destroy(rdma_ep_t *ep)
{
    if (!ep)
        return;
    rdma_iface_t *ifc = ep->ifc;
    uint32_t busy = rdma_ep_busy(ep);
    if (busy)
        rdma_ep_fail(ep, LOCUS_ERR_BUSY, "QP 0x%x: endpoint destroyed with %u operations pending",
                     ep->qp->qp_num, busy);
    bool drained = drain(ep);
    if (ibv_destroy_qp(ep->qp))
        lc_note_once(&ifc->md->notes, "ibv_destroy_qp failed (errno %d): QP left to the device", errno);
    rdma_iface_remove_ep(ifc, ep, drained);
    free(ep->slots);
    free(ep);
}
