/* ops: RDMA WRITE (put), READ (get), fetch-add and compare-swap, posted
 * without waiting for the network; selective signalling; completion and
 * retirement of what each request held (bounce buffers, atomic cells,
 * registrations, comps). */
#include "rdma/rdma_internal.h"

#include <stdio.h>
#include <string.h>
#include "core/clock.h"
#include "core/error.h"

enum { OP_MARK = 0, OP_PUT, OP_GET, OP_FADD, OP_CSWAP };
static const char *op_name[] = {"flush marker (0-byte WRITE)", "RDMA WRITE", "RDMA READ", "ATOMIC_FETCH_AND_ADD",
                                "ATOMIC_CMP_AND_SWP"};

/* ---------- checks made before anything is posted ---------- */

static locus_status_t usable(rdma_ep_t *ep, const char *op)
{
    if (!ep)
        return lc_err(LOCUS_ERR_INVALID, "rdma %s: endpoint NULL", op);
    if (ep->state == EP_FAILED)
        return lc_err(ep->err, "%s", ep->errmsg);
    if (ep->state != EP_CONNECTED)
        return lc_err(LOCUS_ERR_INVALID, "rdma %s on QP 0x%x: endpoint not connected (rdma_ep_connect first)", op,
                      ep->qp->qp_num);
    return LOCUS_OK;
}

typedef struct rdma_win win_t;

/* Window w of the peer (0: its heap); NULL with an error if unset. */
static const win_t *window(rdma_ep_t *ep, int w, const char *op)
{
    if (w < 0 || w >= RDMA_MAX_WINDOWS || (w && !ep->win[w].len)) {
        lc_err(LOCUS_ERR_INVALID, "rdma %s: remote window %d is not set (0..%d, see rdma_ep_set_window)", op, w,
               RDMA_MAX_WINDOWS - 1);
        return NULL;
    }
    if (!w) /* the heap, as the peer's blob gave it */
        ep->win[0] = (win_t){ep->peer.heap_base, ep->peer.heap_len, ep->peer.heap_rkey};
    return &ep->win[w];
}

locus_status_t rdma_ep_set_window(rdma_ep_t *ep, int w, uint64_t base, uint64_t len, uint32_t rkey)
{
    if (!ep || w < 1 || w >= RDMA_MAX_WINDOWS || !len || base + len < base)
        return lc_err(LOCUS_ERR_INVALID, "rdma_ep_set_window(%d, 0x%llx, %llu): expected a window 1..%d and a "
                      "non-empty range", w, (unsigned long long)base, (unsigned long long)len, RDMA_MAX_WINDOWS - 1);
    ep->win[w] = (win_t){base, len, rkey};
    return LOCUS_OK;
}

static locus_status_t in_range(const rdma_ep_t *ep, const win_t *win, const char *op, uint64_t roff, uint64_t len)
{
    uint64_t hl = win->len;
    if (roff > hl || len > hl - roff)
        return lc_err(LOCUS_ERR_RANGE, "rdma %s of %llu bytes at remote offset %llu: outside the peer's %s of "
                      "%llu bytes", op, (unsigned long long)len, (unsigned long long)roff,
                      win == &ep->win[0] ? "heap" : "window", (unsigned long long)hl);
    if (len > ep->ifc->md->info.max_msg)
        return lc_err(LOCUS_ERR_RANGE, "rdma %s of %llu bytes: longer than the port's largest message (%llu)", op,
                      (unsigned long long)len, (unsigned long long)ep->ifc->md->info.max_msg);
    return LOCUS_OK;
}

/* ---------- waiting for a send slot or pool entry ---------- */

static bool slot_free(void *arg)
{
    rdma_ep_t *ep = arg;
    return ep->state == EP_FAILED || rdma_ep_busy(ep) < ep->depth;
}

static bool bounce_free(void *arg)
{
    rdma_ep_t *ep = arg;
    return ep->state == EP_FAILED || ep->ifc->md->pool.nbfree > 0;
}

static bool cell_free(void *arg)
{
    rdma_ep_t *ep = arg;
    return ep->state == EP_FAILED || ep->ifc->md->pool.ncfree > 0;
}

/* Wait for cond; the endpoint may fail meanwhile (then its error). */
static locus_status_t await(rdma_ep_t *ep, bool (*cond)(void *))
{
    if (!cond(ep) || ep->state == EP_FAILED)
        rdma_iface_wait_until(ep->ifc, cond, ep);
    return ep->state == EP_FAILED ? lc_err(ep->err, "%s", ep->errmsg) : LOCUS_OK;
}

/* ---------- the local side of a request ---------- */

typedef struct lbuf {
    uint64_t addr;
    uint32_t lkey;
    bool inl;
    const locus_reg_t *reg;
    int bounce;
} lbuf_t;

static void lbuf_release(rdma_md_t *md, lbuf_t *lb)
{
    if (lb->bounce >= 0)
        rdma_pool_give_bounce(md, lb->bounce);
    if (lb->reg)
        locus_reg_put(md->cache, lb->reg);
}

static bool in_heap(const rdma_md_t *md, const void *p, size_t len)
{
    uint64_t a = (uintptr_t)p, hb = (uintptr_t)md->heap.base;
    return md->heap.base && a >= hb && len <= md->heap.len && a - hb <= md->heap.len - len;
}

/* Inline (puts up to the QP's inline size: copied at post), the registered
 * heap, a bounce buffer (up to LOCUS_RDMA_BOUNCE_SIZE: one copy is cheaper
 * than a registration), else the registration cache. */
static locus_status_t local_buf(rdma_ep_t *ep, void *p, size_t len, bool dest, lbuf_t *lb)
{
    rdma_md_t *md = ep->ifc->md;
    rdma_iface_stats_t *s = &ep->ifc->stats;
    memset(lb, 0, sizeof *lb);
    lb->bounce = -1;
    lb->addr = (uintptr_t)p;
    if (!dest && len <= ep->max_inline) {
        lb->inl = true;
        s->inline_puts++;
        return LOCUS_OK;
    }
    if (in_heap(md, p, len)) {
        lb->lkey = md->heap.lkey;
        s->heap++;
        return LOCUS_OK;
    }
    if (len <= md->pool.bsize) {
        locus_status_t st = await(ep, bounce_free);
        if (st)
            return st;
        lb->bounce = rdma_pool_take_bounce(md);
        lb->addr = (uintptr_t)pool_bounce(md, lb->bounce);
        lb->lkey = md->pool.mr->lkey;
        if (!dest)
            memcpy(pool_bounce(md, lb->bounce), p, len);
        s->bounce++;
        return LOCUS_OK;
    }
    unsigned acc = dest ? LOCUS_REG_LOCAL_WRITE : 0;
    if (!md->cache_trusted) /* no hooks: an old registration may hold old pages */
        locus_reg_invalidate(md->cache, p, len);
    locus_status_t st = locus_reg_get(md->cache, p, len, acc, &lb->reg);
    if (st == LOCUS_ERR_NO_SPACE) {
        /* capacity held by requests in flight: complete them, try once more */
        rdma_iface_flush(ep->ifc);
        if (ep->state == EP_FAILED)
            return lc_err(ep->err, "%s", ep->errmsg);
        st = locus_reg_get(md->cache, p, len, acc, &lb->reg);
    }
    if (st) {
        char why[256];
        snprintf(why, sizeof why, "%s", locus_last_error());
        lb->reg = NULL;
        return lc_err(st, "rdma: local buffer [%p, +%zu) not registrable: %s", p, len, why);
    }
    lb->lkey = lb->reg->lkey;
    s->cached++;
    return LOCUS_OK;
}

bool rdma_put_copies_source(const rdma_ep_t *ep, const void *src, size_t len)
{
    const rdma_md_t *md = ep->ifc->md;
    return len <= ep->max_inline || (!in_heap(md, src, len) && len <= md->pool.bsize);
}

/* ---------- posting ---------- */

/* Signalled when asked (a comp, a pool nearly empty), every k-th request,
 * and whenever fewer than k send slots remain after this one: then the last
 * request before a full queue is always signalled, and a post waiting for a
 * slot or pool entry always has a completion to wait for. */
static locus_status_t post(rdma_ep_t *ep, struct ibv_send_wr *wr, const rdma_slot_t *tmpl, bool must_signal,
                           int op)
{
    rdma_iface_t *ifc = ep->ifc;
    uint32_t k = ifc->caps.signal_every, busy = rdma_ep_busy(ep);
    bool sig = must_signal || tmpl->comp || ep->unsignalled + 1 >= k || ep->depth - busy - 1 < k;
    wr->wr_id = (uint64_t)ep->id << 32 | (uint32_t)ep->head;
    wr->next = NULL;
    if (sig)
        wr->send_flags |= IBV_SEND_SIGNALED;
    struct ibv_send_wr *bad;
    int rc = ibv_post_send(ep->qp, wr, &bad);
    if (rc)
        return lc_err_errno(LOCUS_ERR_SYSTEM, rc, "ibv_post_send(%s) on QP 0x%x (%u in flight of %u)", op_name[op],
                            ep->qp->qp_num, busy, ep->depth);
    rdma_slot_t *s = &ep->slots[ep->head & ep->mask];
    *s = *tmpl;
    s->op = (uint8_t)op;
    if (tmpl->comp)
        tmpl->comp->pending++;
    /* the stall clock (iface.c, rdma_iface_check) runs from the moment a
     * completion is owed: the first signalled request since the last
     * completion. An unsignalled tail owes none however long it waits, so a
     * READ posted behind it minutes later starts the clock afresh. */
    if (sig && ep->unsignalled == busy)
        ep->progress_ns = lc_now_ns();
    if (op == OP_GET || op == OP_FADD || op == OP_CSWAP)
        ep->rdat_end = ep->head + 1;
    ep->head++;
    ep->unsignalled = sig ? 0 : ep->unsignalled + 1;
    ifc->stats.signalled += sig;
    return LOCUS_OK;
}

static locus_status_t rw(rdma_ep_t *ep, int w, void *buf, uint64_t roff, size_t len, rdma_comp_t *comp, int op)
{
    const char *name = op == OP_PUT ? "put" : "get";
    locus_status_t st = usable(ep, name);
    if (st || !len)
        return st;
    if (!buf)
        return lc_err(LOCUS_ERR_INVALID, "rdma %s of %zu bytes: local buffer NULL", name, len);
    const win_t *win = window(ep, w, name);
    if (!win)
        return LOCUS_ERR_INVALID;
    if ((st = in_range(ep, win, name, roff, len)) || (st = await(ep, slot_free)))
        return st;
    rdma_md_t *md = ep->ifc->md;
    lbuf_t lb;
    if ((st = local_buf(ep, buf, len, op == OP_GET, &lb)))
        return st;
    struct ibv_sge sge = {.addr = lb.addr, .length = (uint32_t)len, .lkey = lb.lkey};
    struct ibv_send_wr wr;
    memset(&wr, 0, sizeof wr);
    wr.opcode = op == OP_PUT ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.send_flags = lb.inl ? IBV_SEND_INLINE : 0;
    wr.wr.rdma.remote_addr = win->base + roff;
    wr.wr.rdma.rkey = win->rkey;
    rdma_slot_t t = {.comp = comp, .reg = lb.reg, .len = (uint32_t)len, .bounce = lb.bounce, .cell = -1};
    if (op == OP_GET && lb.bounce >= 0)
        t.copy_dst = buf;
    bool low = lb.bounce >= 0 && md->pool.nbfree < ep->ifc->caps.signal_every;
    if ((st = post(ep, &wr, &t, low, op))) {
        lbuf_release(md, &lb);
        return st;
    }
    if (op == OP_PUT)
        ep->ifc->stats.puts++;
    else
        ep->ifc->stats.gets++;
    return LOCUS_OK;
}

locus_status_t rdma_put(rdma_ep_t *ep, const void *src, uint64_t roff, size_t len, rdma_comp_t *comp)
{
    return rw(ep, 0, (void *)src, roff, len, comp, OP_PUT);
}

locus_status_t rdma_get(rdma_ep_t *ep, void *dst, uint64_t roff, size_t len, rdma_comp_t *comp)
{
    return rw(ep, 0, dst, roff, len, comp, OP_GET);
}

locus_status_t rdma_put_w(rdma_ep_t *ep, int w, const void *src, uint64_t roff, size_t len, rdma_comp_t *comp)
{
    return rw(ep, w, (void *)src, roff, len, comp, OP_PUT);
}

locus_status_t rdma_get_w(rdma_ep_t *ep, int w, void *dst, uint64_t roff, size_t len, rdma_comp_t *comp)
{
    return rw(ep, w, dst, roff, len, comp, OP_GET);
}

static locus_status_t atomic(rdma_ep_t *ep, int w, int op, uint64_t roff, uint64_t a, uint64_t b,
                             uint64_t *result, rdma_comp_t *comp)
{
    const char *name = op == OP_FADD ? "fetch-add" : "compare-swap";
    locus_status_t st = usable(ep, name);
    if (st)
        return st;
    const rdma_iface_t *ifc = ep->ifc;
    if (!ifc->caps.atomics)
        return lc_err(LOCUS_ERR_UNSUPPORTED, "rdma %s: %s has no usable 64-bit atomics (atomic_cap %d; see "
                      "rdma_md_notes)", name, ifc->md->devname, ifc->md->info.atomic_cap);
    if (!ep->peer.atomics)
        return lc_err(LOCUS_ERR_UNSUPPORTED, "rdma %s: the peer's device has no atomics", name);
    const win_t *win = window(ep, w, name);
    if (!win)
        return LOCUS_ERR_INVALID;
    if ((win->base + roff) % 8)
        return lc_err(LOCUS_ERR_INVALID, "rdma %s at remote offset %llu (address 0x%llx): not 8-byte aligned",
                      name, (unsigned long long)roff, (unsigned long long)(win->base + roff));
    if ((st = in_range(ep, win, name, roff, 8)) || (st = await(ep, slot_free)) || (st = await(ep, cell_free)))
        return st;
    rdma_md_t *md = ep->ifc->md;
    int cell = rdma_pool_take_cell(md);
    struct ibv_sge sge = {.addr = (uintptr_t)pool_cell(md, cell), .length = 8, .lkey = md->pool.mr->lkey};
    struct ibv_send_wr wr;
    memset(&wr, 0, sizeof wr);
    wr.opcode = op == OP_FADD ? IBV_WR_ATOMIC_FETCH_AND_ADD : IBV_WR_ATOMIC_CMP_AND_SWP;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.wr.atomic.remote_addr = win->base + roff;
    wr.wr.atomic.rkey = win->rkey;
    wr.wr.atomic.compare_add = a;
    wr.wr.atomic.swap = b;
    rdma_slot_t t = {.comp = comp, .result = result, .len = 8, .bounce = -1, .cell = cell};
    if ((st = post(ep, &wr, &t, md->pool.ncfree < ep->ifc->caps.signal_every, op))) {
        rdma_pool_give_cell(md, cell);
        return st;
    }
    ep->ifc->stats.atomics++;
    return LOCUS_OK;
}

locus_status_t rdma_fetch_add(rdma_ep_t *ep, uint64_t roff, uint64_t add, uint64_t *result, rdma_comp_t *comp)
{
    return atomic(ep, 0, OP_FADD, roff, add, 0, result, comp);
}

locus_status_t rdma_fetch_add_w(rdma_ep_t *ep, int w, uint64_t roff, uint64_t add, uint64_t *result,
                                rdma_comp_t *comp)
{
    return atomic(ep, w, OP_FADD, roff, add, 0, result, comp);
}

locus_status_t rdma_cswap_w(rdma_ep_t *ep, int w, uint64_t roff, uint64_t compare, uint64_t swap,
                            uint64_t *result, rdma_comp_t *comp)
{
    return atomic(ep, w, OP_CSWAP, roff, compare, swap, result, comp);
}

locus_status_t rdma_cswap(rdma_ep_t *ep, uint64_t roff, uint64_t compare, uint64_t swap, uint64_t *result,
                          rdma_comp_t *comp)
{
    return atomic(ep, 0, OP_CSWAP, roff, compare, swap, result, comp);
}

/* A zero-byte WRITE (no rkey check: IBA C9-88) signalled behind an
 * unsignalled tail, so flush has a completion to wait for (if it cannot be
 * posted the endpoint fails); or, for destroy, the drain marker outside the
 * slot ring. 0, or nonzero (drain: the errno value). */
int rdma_ops_post_marker(rdma_ep_t *ep, bool drain)
{
    struct ibv_send_wr wr;
    memset(&wr, 0, sizeof wr);
    wr.opcode = IBV_WR_RDMA_WRITE;
    wr.num_sge = 0;
    wr.wr.rdma.remote_addr = ep->peer.heap_base;
    wr.wr.rdma.rkey = ep->peer.heap_rkey;
    if (drain) {
        struct ibv_send_wr *bad;
        wr.wr_id = (uint64_t)ep->id << 32 | (uint32_t)ep->head;
        wr.send_flags = IBV_SEND_SIGNALED;
        ep->drain_seq = ep->head;
        ep->draining = true;
        return ibv_post_send(ep->qp, &wr, &bad);
    }
    rdma_slot_t t = {.bounce = -1, .cell = -1};
    if (await(ep, slot_free))
        return -1; /* failed meanwhile: everything retired */
    if (post(ep, &wr, &t, true, OP_MARK)) {
        /* the unsignalled tail would never complete: nobody may wait on it */
        rdma_ep_fail(ep, LOCUS_ERR_SYSTEM, "%s", locus_last_error());
        return -1;
    }
    ep->ifc->stats.markers++;
    return 0;
}

const char *rdma_ops_name(const rdma_ep_t *ep, uint64_t seq)
{
    return op_name[ep->slots[seq & ep->mask].op];
}

/* ---------- completion ---------- */

void rdma_ops_retire(rdma_ep_t *ep, uint64_t upto, locus_status_t status)
{
    rdma_md_t *md = ep->ifc->md;
    bool swap = ep->ifc->caps.atomic_bswap;
    for (; ep->tail < upto; ep->tail++) {
        rdma_slot_t *s = &ep->slots[ep->tail & ep->mask];
        if (status == LOCUS_OK) {
            if (s->copy_dst)
                memcpy(s->copy_dst, pool_bounce(md, s->bounce), s->len);
            if (s->result) {
                uint64_t v = *pool_cell(md, s->cell);
                *s->result = swap ? __builtin_bswap64(v) : v;
            }
        }
        if (s->bounce >= 0)
            rdma_pool_give_bounce(md, s->bounce);
        if (s->cell >= 0)
            rdma_pool_give_cell(md, s->cell);
        if (s->reg)
            locus_reg_put(md->cache, s->reg);
        if (s->comp) {
            if (status && !s->comp->status)
                s->comp->status = status;
            s->comp->pending--;
        }
    }
}

static const char *hint(const rdma_ep_t *ep, enum ibv_wc_status st)
{
    static _Thread_local char buf[160];
    const rdma_md_t *md = ep->ifc->md;
    switch (st) {
    case IBV_WC_RETRY_EXC_ERR:
        snprintf(buf, sizeof buf, ": no ACK within %.2f s (LOCUS_RDMA_TIMEOUT=%d, LOCUS_RDMA_RETRY=%d): the peer "
                 "is dead or unreachable", (double)ep->ifc->caps.detect_ns * 1e-9, md->attr.timeout, md->attr.retry);
        return buf;
    case IBV_WC_REM_ACCESS_ERR: return ": the peer refused the access (its heap deregistered or the rkey stale)";
    case IBV_WC_REM_INV_REQ_ERR: return ": the peer found the request invalid";
    case IBV_WC_WR_FLUSH_ERR: return ": flushed, the QP was already in error";
    default: return "";
    }
}

void rdma_ops_complete(rdma_ep_t *ep, const struct ibv_wc *wc)
{
    uint64_t seq = ep->tail + (uint32_t)((uint32_t)wc->wr_id - (uint32_t)ep->tail);
    if (ep->draining && seq == ep->drain_seq) {
        ep->drained = true;
        return;
    }
    if (seq >= ep->head) { /* flushed after the endpoint failed: already retired */
        ep->ifc->stats.stale_cqes++;
        return;
    }
    ep->progress_ns = lc_now_ns();
    if (wc->status == IBV_WC_SUCCESS) {
        rdma_ops_retire(ep, seq + 1, LOCUS_OK);
        return;
    }
    /* a send queue completes in order and errors are always reported:
     * everything before this request succeeded */
    rdma_ops_retire(ep, seq, LOCUS_OK);
    const rdma_slot_t *s = &ep->slots[seq & ep->mask];
    bool local = wc->status == IBV_WC_LOC_LEN_ERR || wc->status == IBV_WC_LOC_QP_OP_ERR ||
                 wc->status == IBV_WC_LOC_PROT_ERR || wc->status == IBV_WC_MW_BIND_ERR;
    rdma_ep_fail(ep, local ? LOCUS_ERR_SYSTEM : LOCUS_ERR_PEER_FAILED,
                 "QP 0x%x -> peer QP 0x%x: %s failed: %s (status %d, vendor_err 0x%x)%s", ep->qp->qp_num,
                 ep->peer.qpn, op_name[s->op], ibv_wc_status_str(wc->status), (int)wc->status, wc->vendor_err,
                 hint(ep, wc->status));
}
