/* Requests: finding, completing and failing them, locus_shm_test/wait, and
 * the endpoint's failure state (a peer died, a message failed a check). The
 * small request and list operations are inline in shm_internal.h. */
#include "shm/shm_internal.h"

#include "core/error.h"

#include <stdio.h>

locus_shm_req_t *shm_find_by_msgid(shm_list_t *l, int peer, uint64_t msgid, bool recv)
{
    for (locus_shm_req_t *r = l->head; r; r = r->next)
        if ((recv ? r->src : r->peer) == peer && r->msgid == msgid)
            return r;
    return NULL;
}

/* ---------- failure ---------- */

locus_status_t shm_fatal_err(locus_shm_ep_t *ep)
{
    return lc_err(ep->fatal, "%s", ep->fatal_msg);
}

static void fail_list(locus_shm_ep_t *ep, shm_list_t *l, locus_status_t st)
{
    while (l->head) {
        locus_shm_req_t *r = l->head;
        shm_list_remove(l, r);
        shm_req_complete(ep, r, st);
    }
}

void shm_fail_all(locus_shm_ep_t *ep)
{
    for (int d = 0; d < ep->size; d++)
        fail_list(ep, &ep->send.queue[d], ep->fatal);
    ep->send.nactive = 0;
    fail_list(ep, &ep->send.rndv, ep->fatal);
    fail_list(ep, &ep->match.posted, ep->fatal);
    fail_list(ep, &ep->frag.pulls, ep->fatal);
    fail_list(ep, &ep->ref.pending, ep->fatal);
}

locus_status_t shm_set_corrupt(locus_shm_ep_t *ep, int src, const char *what)
{
    if (!ep->fatal) {
        ep->fatal = LOCUS_ERR_CORRUPT;
        snprintf(ep->fatal_msg, sizeof ep->fatal_msg, "message from rank %d failed a bounds check: %s",
                 src, what);
        shm_fail_all(ep);
    }
    return shm_fatal_err(ep);
}

/* Fail the requests of l that wait for peer (by source for pulls). */
static void fail_peer_in(locus_shm_ep_t *ep, shm_list_t *l, int peer, bool by_src)
{
    for (locus_shm_req_t *r = l->head, *nx; r; r = nx) {
        nx = r->next;
        if ((by_src ? r->src : r->peer) == peer) {
            shm_list_remove(l, r);
            shm_req_complete(ep, r, LOCUS_ERR_PEER_FAILED);
        }
    }
}

/* `peer` finalized and exited: everything it sent is in our ring and its box
 * by now, so hand that out first; what is still waiting for it after that
 * can never complete. */
void shm_fail_peer_ops(locus_shm_ep_t *ep, int peer)
{
    while (!ep->fatal && shm_progress_rx(ep) > 0)
        ;
    fail_peer_in(ep, &ep->match.posted, peer, false);
    shm_list_t *q = &ep->send.queue[peer];
    if (q->head)
        ep->send.nactive--;
    fail_list(ep, q, LOCUS_ERR_PEER_FAILED);
    fail_peer_in(ep, &ep->send.rndv, peer, false);
    shm_ref_check(ep, peer); /* what it consumed before leaving is delivered */
    fail_peer_in(ep, &ep->ref.pending, peer, false);
    fail_peer_in(ep, &ep->frag.pulls, peer, true);
}

/* ---------- test / wait ---------- */

locus_status_t locus_shm_test(locus_shm_ep_t *ep, locus_shm_req_t *req, bool *done,
                              locus_shm_info_t *info)
{
    if (!ep || !req || !done)
        return lc_err(LOCUS_ERR_INVALID, "test: %s is NULL",
                      !ep ? "endpoint" : !req ? "request" : "done flag");
    if (req->state != RS_DONE)
        locus_shm_progress(ep);
    /* Once the endpoint is broken every list has been failed; a request that
     * was between lists (e.g. matched by a corrupt message) ends here too. */
    if (req->state != RS_DONE && ep->fatal) {
        req->state = RS_DONE;
        req->status = ep->fatal;
    }
    if (req->state != RS_DONE) {
        *done = false;
        return LOCUS_OK;
    }
    *done = true;
    locus_status_t st = req->status;
    if (info) {
        info->source = req->kind == RQ_RECV ? req->src : ep->rank;
        info->tag = req->tag;
        info->len = req->kind == RQ_RECV ? (req->msg_len < req->len ? req->msg_len : req->len) : req->len;
        info->status = st;
    }
    int peer = req->peer, src = req->src;
    size_t msg_len = req->msg_len, cap = req->len;
    shm_req_free(ep, req);
    if (st == LOCUS_ERR_PEER_FAILED || st == LOCUS_ERR_CORRUPT)
        return ep->fatal ? shm_fatal_err(ep)
                         : lc_err(st, "rank %d finalized and left before the operation completed", peer);
    if (st == LOCUS_ERR_TRUNCATED)
        return lc_err(st, "message of %zu B from rank %d truncated to the %zu B buffer", msg_len, src, cap);
    return st;
}

locus_status_t locus_shm_wait(locus_shm_ep_t *ep, locus_shm_req_t *req, locus_shm_info_t *info)
{
    bool done = false;
    for (;;) {
        locus_status_t st = locus_shm_test(ep, req, &done, info);
        if (done || st != LOCUS_OK)
            return st;
        __builtin_ia32_pause();
    }
}
