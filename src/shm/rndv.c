/* Rendezvous (messages above LOCUS_SHM_EAGER): the sender posts a descriptor
 * (MT_RTS) and waits; the receiver, once matched, makes the single copy and
 * answers FIN. Its copy: a plain copy from the peer's mapping when the send
 * buffer lives in the sender's shared heap (split with the sender from
 * LOCUS_SHM_SPLIT on, split.c), else process_vm_readv (CMA) or the pipelined
 * copy through the ring (CTS_COPY, frag.c).
 *
 * CMA or the pipeline, LOCUS_SHM_CMA=auto: a private-buffer rendezvous goes
 * the way that moved bytes faster lately, each measured first once, and the
 * other way is tried again every SHM_CMA_EXPLORE-th one, so a change (load,
 * placement) is noticed. The pipeline is measured per fragment (its
 * throughput while pulls queue behind each other, frag.c), so a sender slow
 * to make progress shows only in a message's first fragment. A kernel that
 * refuses CMA (EPERM) turns it off for that peer, with a note. */
#include "shm/shm_internal.h"

#include "core/error.h"

#include <errno.h>
#include <sys/uio.h>

/* ---------- sender ---------- */

bool shm_rndv_post(locus_shm_ep_t *ep, locus_shm_req_t *r)
{
    shm_rts_t rts = {.len = r->len, .addr = (uint64_t)(uintptr_t)r->buf, .msgid = r->msgid};
    if (shm_in_my_heap(ep, r->buf, r->len, &rts.heap_off))
        rts.kind = RTS_HEAP;
    else
        rts.kind = ep->cma.mode == CMA_OFF ? RTS_COPY : RTS_CMA;
    shmq_hdr_t h = {.src = (uint16_t)ep->rank, .type = MT_RTS, .len = sizeof rts, .tag = r->tag};
    if (!shm_send_matchable(ep, r->peer, &h, &rts, shm_copy_near))
        return false;
    r->state = RS_WAIT_FIN;
    return true;
}

locus_status_t shm_on_reply(locus_shm_ep_t *ep, const shm_msg_t *m)
{
    const shmq_hdr_t *h = &m->h;
    locus_shm_req_t *r = shm_find_by_msgid(&ep->send.rndv, h->src, h->aux, false);
    if (!r)
        return shm_set_corrupt(ep, h->src, "reply to a rendezvous this process did not start");
    shm_list_remove(&ep->send.rndv, r);
    if (h->type == MT_FIN) {
        shm_req_complete(ep, r, h->flags ? LOCUS_ERR_CORRUPT : LOCUS_OK);
    } else { /* CTS_COPY: send it in fragments */
        r->state = RS_FRAGS;
        r->done_bytes = 0;
        shm_submit(ep, r);
    }
    return LOCUS_OK;
}

/* ---------- receiver ---------- */

void shm_rate_note(double *rate, size_t n, uint64_t ns)
{
    double x = (double)n / (double)(ns ? ns : 1);
    *rate = *rate ? 0.75 * *rate + 0.25 * x : x;
}

static locus_status_t cma_read(pid_t pid, void *dst, uint64_t addr, size_t n, int *err)
{
    size_t done = 0;
    while (done < n) {
        struct iovec l = {(char *)dst + done, n - done};
        struct iovec rm = {(void *)(uintptr_t)(addr + done), n - done};
        ssize_t k = process_vm_readv(pid, &l, 1, &rm, 1, 0);
        if (k <= 0) {
            *err = k < 0 ? errno : EFAULT;
            return LOCUS_ERR_SYSTEM;
        }
        done += (size_t)k;
    }
    return LOCUS_OK;
}

/* Auto (above): CMA for this private-buffer rendezvous? */
static bool auto_picks_cma(locus_shm_ep_t *ep)
{
    uint32_t k = ep->cma.decided++;
    if (!ep->cma.rate_cma)
        return true;
    if (!ep->cma.rate_pipe)
        return false;
    bool cma = ep->cma.rate_cma >= ep->cma.rate_pipe;
    return k % SHM_CMA_EXPLORE == 0 ? !cma : cma;
}

/* The copy done (n of the message's bytes): complete r, tell the sender. */
static locus_status_t finish(locus_shm_ep_t *ep, locus_shm_req_t *r, int src, locus_status_t st)
{
    shm_req_complete(ep, r, st);
    return shm_send_ctrl(ep, src, MT_FIN, r->msgid, 0, false, 0, 0);
}

/* From the sender's shared heap: one plain copy, or a split copy into mine. */
static locus_status_t from_heap(locus_shm_ep_t *ep, locus_shm_req_t *r, int src, const shm_rts_t *rts,
                                size_t n, locus_status_t fin)
{
    uint64_t hb = ep->plan.heap_bytes, dst_off;
    if (!hb || rts->heap_off > hb || rts->len > hb - rts->heap_off)
        return shm_set_corrupt(ep, src, "heap offset outside the sender's shared heap");
    const unsigned char *p = shm_heap_of(ep, src, rts->heap_off);
    ep->stats.heap_msgs++;
    ep->stats.heap_bytes += rts->len;
    if (ep->split.min && n >= ep->split.min && n == rts->len && !ep->peer.gone[src] &&
        shm_in_my_heap(ep, r->buf, n, &dst_off)) {
        locus_status_t st = shm_split_recv(ep, src, r->msgid, r->buf, dst_off, p, n);
        if (st)
            return st;
    } else if (n) {
        shm_copy(r->buf, p, n, SHM_COPY_SINGLE, ep->peer.far[src]);
    }
    return finish(ep, r, src, fin);
}

/* By CMA; *handled = false when the kernel refused (the pipeline takes it). */
static locus_status_t by_cma(locus_shm_ep_t *ep, locus_shm_req_t *r, int src, const shm_rts_t *rts,
                             size_t n, locus_status_t fin, bool *handled)
{
    int err = EPERM;
    uint64_t t0 = lc_now_ns();
    *handled = true;
    if (ep->cma.mode != CMA_EPERM && (!n || cma_read(ep->peer.pid[src], r->buf, rts->addr, n, &err) == LOCUS_OK)) {
        if (n)
            shm_rate_note(&ep->cma.rate_cma, n, lc_now_ns() - t0);
        ep->stats.cma_msgs++;
        ep->stats.cma_bytes += rts->len;
        return finish(ep, r, src, fin);
    }
    if (err == ESRCH)
        return shm_check_peers(ep);
    if (err != EPERM && err != EACCES) {
        shm_req_complete(ep, r, LOCUS_ERR_CORRUPT);
        return shm_send_ctrl(ep, src, MT_FIN, r->msgid, 1, false, 0, 0);
    }
    ep->cma.refused[src] = true;
    shm_note(ep, ep->cma.mode == CMA_EPERM
                     ? "CMA refusal simulated (LOCUS_SHM_CMA=eperm): pipelined copy through the ring used"
                     : "CMA (process_vm_readv) refused by the kernel (EPERM: ptrace restrictions): "
                       "pipelined copy through the ring used");
    *handled = false;
    return LOCUS_OK;
}

locus_status_t shm_rndv_start(locus_shm_ep_t *ep, locus_shm_req_t *r, int src, uint64_t tag,
                              const shm_rts_t *rts)
{
    r->src = src;
    r->tag = tag;
    r->msg_len = rts->len;
    r->msgid = rts->msgid;
    size_t n = rts->len < r->len ? rts->len : r->len;
    locus_status_t fin = rts->len > r->len ? LOCUS_ERR_TRUNCATED : LOCUS_OK;
    if (rts->kind == RTS_HEAP)
        return from_heap(ep, r, src, rts, n, fin);
    if (rts->kind == RTS_CMA && !ep->cma.refused[src] &&
        (ep->cma.mode == CMA_AUTO ? auto_picks_cma(ep) : ep->cma.mode != CMA_OFF)) {
        bool handled;
        locus_status_t st = by_cma(ep, r, src, rts, n, fin, &handled);
        if (handled)
            return st;
    }
    return shm_frag_pull(ep, r, src);
}
