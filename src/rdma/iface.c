/* iface: the completion queue shared by an interface's endpoints, progress,
 * asynchronous device events, the stall backstop and flush_all. */
#include "rdma/rdma_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "core/clock.h"
#include "core/error.h"

locus_status_t rdma_iface_probe(rdma_iface_t *ifc); /* probe.c */

locus_status_t rdma_iface_create(rdma_md_t *md, rdma_iface_t **out)
{
    if (!md || !out)
        return lc_err(LOCUS_ERR_INVALID, "rdma_iface_create(%p, %p): expected an md and an output", (void *)md,
                      (void *)out);
    *out = NULL;
    rdma_iface_t *ifc = calloc(1, sizeof *ifc);
    if (!ifc)
        return lc_err(LOCUS_ERR_NO_MEMORY, "rdma iface: out of memory");
    ifc->md = md;
    const rdma_attr_t *a = &md->attr;
    rdma_caps_t *c = &ifc->caps;
    c->sq_depth = (uint32_t)a->sq_depth;
    if (md->info.max_qp_wr > 0 && c->sq_depth > (uint32_t)md->info.max_qp_wr) {
        c->sq_depth = (uint32_t)md->info.max_qp_wr;
        lc_note(&md->notes, "LOCUS_RDMA_SQ_DEPTH=%d: device max_qp_wr %d used", a->sq_depth, md->info.max_qp_wr);
    }
    /* at most half the queue between signals: a full queue always holds one */
    c->signal_every = (uint32_t)a->signal_every < c->sq_depth / 2 ? (uint32_t)a->signal_every : c->sq_depth / 2;
    c->rd_atomic = a->rd_atomic < md->info.max_qp_init_rd_atom ? a->rd_atomic : md->info.max_qp_init_rd_atom;
    c->atomic_cap = md->info.atomic_cap;
    c->detect_ns = rdma_detect_ns(a->timeout, a->retry);
    locus_status_t st;
    ifc->cq = ibv_create_cq(md->ctx, a->cq_depth, ifc, NULL, 0);
    if (!ifc->cq) {
        st = lc_err_errno(LOCUS_ERR_SYSTEM, errno, "ibv_create_cq(%s, %d entries)", md->devname, a->cq_depth);
        free(ifc);
        return st;
    }
    ifc->cq_cap = ifc->cq->cqe;
    md->nifaces++;
    if ((st = rdma_iface_probe(ifc))) {
        rdma_iface_destroy(ifc);
        return st;
    }
    *out = ifc;
    return LOCUS_OK;
}

void rdma_iface_destroy(rdma_iface_t *ifc)
{
    if (!ifc)
        return;
    while (ifc->eps)
        rdma_ep_destroy(ifc->eps);
    if (ifc->cq)
        ibv_destroy_cq(ifc->cq);
    ifc->md->nifaces--;
    free(ifc->table);
    free(ifc->gen);
    free(ifc->free_slots);
    free(ifc);
}

const rdma_caps_t *rdma_iface_caps(const rdma_iface_t *ifc) { return ifc ? &ifc->caps : NULL; }

void rdma_iface_stats(const rdma_iface_t *ifc, rdma_iface_stats_t *out)
{
    if (ifc && out)
        *out = ifc->stats;
}

/* ---------- endpoints: ids and completion queue room ---------- */

static locus_status_t grow_table(rdma_iface_t *ifc)
{
    uint32_t cap = ifc->table_cap ? ifc->table_cap * 2 : 64;
    if (cap > RDMA_EP_MAX)
        return lc_err(LOCUS_ERR_NO_SPACE, "rdma iface: %u endpoints, the most one interface holds",
                      ifc->table_cap);
    rdma_ep_t **t = realloc(ifc->table, sizeof *t * cap);
    if (t)
        ifc->table = t;
    uint16_t *g = realloc(ifc->gen, sizeof *g * cap);
    if (g)
        ifc->gen = g;
    uint32_t *f = realloc(ifc->free_slots, sizeof *f * cap);
    if (f)
        ifc->free_slots = f;
    if (!t || !g || !f)
        return lc_err(LOCUS_ERR_NO_MEMORY, "rdma iface: endpoint table of %u", cap);
    for (uint32_t i = cap; i-- > ifc->table_cap;) {
        ifc->table[i] = NULL;
        ifc->gen[i] = 0;
        ifc->free_slots[ifc->nfree++] = i;
    }
    ifc->table_cap = cap;
    return LOCUS_OK;
}

/* The CQ must hold every completion the live QPs can produce at once: in
 * error a QP flushes each outstanding request with its own completion,
 * signalled or not, plus the drain marker. So it grows with the endpoints
 * (depth + 1 each) and never needs credits. */
static locus_status_t cq_room(rdma_iface_t *ifc, int need)
{
    if (need <= ifc->cq_cap)
        return LOCUS_OK;
    int want = need > 2 * ifc->cq_cap ? need : 2 * ifc->cq_cap;
    if (ibv_resize_cq(ifc->cq, want) && (want == need || ibv_resize_cq(ifc->cq, need)))
        return lc_err(LOCUS_ERR_NO_SPACE, "rdma iface: completion queue of %d entries cannot grow to %d (%s): "
                      "fewer endpoints or a smaller LOCUS_RDMA_SQ_DEPTH", ifc->cq_cap, need, strerror(errno));
    ifc->cq_cap = ifc->cq->cqe;
    return LOCUS_OK;
}

locus_status_t rdma_iface_add_ep(rdma_iface_t *ifc, rdma_ep_t *ep)
{
    locus_status_t st = cq_room(ifc, ifc->cq_need + (int)ep->depth + 1);
    if (st || (!ifc->nfree && (st = grow_table(ifc))))
        return st;
    uint32_t slot = ifc->free_slots[--ifc->nfree];
    ifc->gen[slot] = (uint16_t)((ifc->gen[slot] + 1) & 0xfff);
    ep->id = slot | (uint32_t)ifc->gen[slot] << RDMA_EP_SLOT_BITS;
    ifc->table[slot] = ep;
    ifc->cq_need += (int)ep->depth + 1;
    ep->next = ifc->eps;
    ep->prev = NULL;
    if (ifc->eps)
        ifc->eps->prev = ep;
    ifc->eps = ep;
    return LOCUS_OK;
}

/* An endpoint whose drain did not finish keeps its CQ room: its late
 * completions still fit, and the generation in the id makes them stale. */
void rdma_iface_remove_ep(rdma_iface_t *ifc, rdma_ep_t *ep, bool drained)
{
    uint32_t slot = ep->id & (RDMA_EP_MAX - 1);
    ifc->table[slot] = NULL;
    ifc->free_slots[ifc->nfree++] = slot;
    if (drained)
        ifc->cq_need -= (int)ep->depth + 1;
    else
        lc_note_once(&ifc->md->notes, "an endpoint's drain timed out: its completion queue room is kept");
    if (ep->prev)
        ep->prev->next = ep->next;
    else
        ifc->eps = ep->next;
    if (ep->next)
        ep->next->prev = ep->prev;
}

/* ---------- progress ---------- */

int rdma_iface_progress(rdma_iface_t *ifc)
{
    struct ibv_wc wc[16];
    int n = ibv_poll_cq(ifc->cq, 16, wc);
    if (n <= 0)
        return 0; /* < 0 only for a CQ in error: the async CQ_ERR event fails the endpoints */
    for (int i = 0; i < n; i++) {
        uint32_t id = (uint32_t)(wc[i].wr_id >> 32);
        rdma_ep_t *ep = ifc->table[id & (RDMA_EP_MAX - 1)];
        if (ep && ep->id == id)
            rdma_ops_complete(ep, &wc[i]);
        else
            ifc->stats.stale_cqes++;
    }
    ifc->stats.cqes += (uint64_t)n;
    return n;
}

static void fail_all(rdma_iface_t *ifc, locus_status_t code, const char *why)
{
    for (rdma_ep_t *ep = ifc->eps; ep; ep = ep->next)
        rdma_ep_fail(ep, code, "%s: %s", ifc->md->devname, why);
}

/* Asynchronous events of the device (QP and CQ errors, a dead device). The
 * fd is shared by the md's interfaces: whoever reads an event handles it. */
static void async_events(rdma_iface_t *ifc)
{
    struct ibv_async_event ev;
    while (ibv_get_async_event(ifc->md->ctx, &ev) == 0) {
        ifc->stats.async_events++;
        const char *what = ibv_event_type_str(ev.event_type);
        switch (ev.event_type) {
        case IBV_EVENT_QP_FATAL:
        case IBV_EVENT_QP_REQ_ERR:
        case IBV_EVENT_QP_ACCESS_ERR: {
            rdma_ep_t *ep = ev.element.qp->qp_context;
            if (ep)
                rdma_ep_fail(ep, LOCUS_ERR_SYSTEM, "QP 0x%x: asynchronous event: %s", ep->qp->qp_num, what);
            break;
        }
        case IBV_EVENT_CQ_ERR:
            if (ev.element.cq->cq_context)
                fail_all(ev.element.cq->cq_context, LOCUS_ERR_SYSTEM, "completion queue error (overrun)");
            break;
        case IBV_EVENT_DEVICE_FATAL:
            fail_all(ifc, LOCUS_ERR_NO_DEVICE, "device fatal error");
            break;
        case IBV_EVENT_PORT_ERR:
            lc_note_once(&ifc->md->notes, "asynchronous event: %s", what);
            break;
        default:
            break;
        }
        ibv_ack_async_event(&ev);
    }
}

void rdma_iface_check(rdma_iface_t *ifc, bool force)
{
    uint64_t now = lc_now_ns();
    if (!force && now - ifc->last_check_ns < 1000000)
        return;
    ifc->last_check_ns = now;
    async_events(ifc);
    /* only a signalled request owes a completion (an unsignalled tail waits
     * for the next request or a flush's marker, however long the caller
     * takes); progress_ns is when the oldest owed one was posted or the last
     * completion, whichever is later (ops.c, post) */
    uint64_t stall = (uint64_t)(ifc->md->attr.stall_s * 1e9);
    for (rdma_ep_t *ep = ifc->eps; ep; ep = ep->next)
        if (ep->state == EP_CONNECTED && rdma_ep_busy(ep) > ep->unsignalled && now - ep->progress_ns > stall)
            rdma_ep_fail(ep, LOCUS_ERR_TIMEOUT, "QP 0x%x: no completion for %.1f s with %u operations pending "
                         "(oldest %s, newest %s; LOCUS_RDMA_STALL)", ep->qp->qp_num,
                         (double)(now - ep->progress_ns) * 1e-9, rdma_ep_busy(ep), rdma_ops_name(ep, ep->tail),
                         rdma_ops_name(ep, ep->head - 1));
}

void rdma_iface_wait_until(rdma_iface_t *ifc, bool (*cond)(void *), void *arg)
{
    while (!cond(arg))
        if (!rdma_iface_progress(ifc))
            rdma_iface_check(ifc, false);
}

static bool all_idle(void *arg)
{
    for (rdma_ep_t *ep = ((rdma_iface_t *)arg)->eps; ep; ep = ep->next)
        if (rdma_ep_busy(ep))
            return false;
    return true;
}

locus_status_t rdma_iface_flush(rdma_iface_t *ifc)
{
    if (!ifc)
        return lc_err(LOCUS_ERR_INVALID, "rdma_iface_flush: iface NULL");
    for (rdma_ep_t *ep = ifc->eps; ep; ep = ep->next)
        if (ep->state == EP_CONNECTED && rdma_ep_busy(ep) && ep->unsignalled)
            rdma_ops_post_marker(ep, false);
    rdma_iface_wait_until(ifc, all_idle, ifc);
    for (rdma_ep_t *ep = ifc->eps; ep; ep = ep->next)
        if (ep->state == EP_FAILED)
            return lc_err(ep->err, "%s", ep->errmsg);
    return LOCUS_OK;
}

static bool comp_done(void *arg) { return ((rdma_comp_t *)arg)->pending == 0; }

locus_status_t rdma_wait(rdma_iface_t *ifc, rdma_comp_t *comp)
{
    if (!ifc || !comp)
        return lc_err(LOCUS_ERR_INVALID, "rdma_wait(%p, %p): expected an iface and a comp", (void *)ifc,
                      (void *)comp);
    while (!comp_done(comp)) {
        if (rdma_iface_progress(ifc))
            continue;
        rdma_iface_check(ifc, false);
        if (!comp_done(comp) && all_idle(ifc)) /* nothing of this iface can complete it */
            return lc_err(LOCUS_ERR_INVALID, "rdma_wait: comp has %u pending but no operation of this iface is "
                          "in flight (a comp of another iface, or not zeroed before use)", comp->pending);
    }
    return comp->status ? lc_err(comp->status, "%s", ifc->lastmsg) : LOCUS_OK;
}
