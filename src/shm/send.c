/* Posting sends: locus_shm_isend, the per-destination queue of sends that did
 * not fit yet (ring or box full), and control messages. What a send posts
 * is decided by its protocol: eager (here), rendezvous descriptor (rndv.c),
 * fragments (frag.c), reference (ref.c). */
#include "shm/shm_internal.h"
#include "shm/ref.h"

#include "core/error.h"

/* Try to post the request at the head of its destination's queue; true once
 * nothing of it is left to post. */
static bool try_send(locus_shm_ep_t *ep, locus_shm_req_t *r)
{
    int d = r->peer;
    if (r->kind == RQ_CTRL) {
        shmq_hdr_t h = {.src = (uint16_t)ep->rank, .type = r->ctrl_type, .flags = r->proto,
                        .len = (uint32_t)r->len, /* control payload bytes (ctrl_data) */
                        .aux = r->ctrl_aux};
        return shmq_send(&ep->q[d], &ep->cached_head[d], &h, h.len ? r->ctrl_data : NULL, shm_copy_near);
    }
    if (r->proto == MT_EAGER) {
        shmq_hdr_t h = {.src = (uint16_t)ep->rank, .type = MT_EAGER, .len = (uint32_t)r->len, .tag = r->tag};
        if (!shm_send_matchable(ep, d, &h, r->buf, shm_copy_for(ep, d)))
            return false;
        shm_req_complete(ep, r, LOCUS_OK);
        return true;
    }
    if (r->state == RS_QUEUED)
        return shm_rndv_post(ep, r);
    return shm_frag_send(ep, r); /* RS_FRAGS: the receiver asked for the pipeline */
}

/* Called once the request is off every list (control requests die here). */
static void after_send(locus_shm_ep_t *ep, locus_shm_req_t *r)
{
    if (r->kind == RQ_CTRL)
        shm_req_free(ep, r);
    else if (r->kind == RQ_SEND && r->state == RS_WAIT_FIN)
        shm_list_push(&ep->send.rndv, r);
}

void shm_submit(locus_shm_ep_t *ep, locus_shm_req_t *r)
{
    shm_list_t *l = &ep->send.queue[r->peer];
    if (!l->head && try_send(ep, r)) {
        after_send(ep, r);
        return;
    }
    if (!l->head)
        ep->send.nactive++;
    shm_list_push(l, r);
}

locus_status_t shm_send_ctrl(locus_shm_ep_t *ep, int dst, int type, uint64_t aux, int flags,
                             bool with_data, uint64_t d0, uint64_t d1)
{
    if (ep->peer.gone[dst])
        return LOCUS_OK; /* it left; nobody waits for this */
    locus_shm_req_t *c = shm_req_new(ep, RQ_CTRL);
    if (!c)
        return lc_err(LOCUS_ERR_NO_MEMORY, "control message to rank %d: out of memory", dst);
    c->peer = dst;
    c->ctrl_type = (uint8_t)type;
    c->ctrl_aux = aux;
    c->proto = (uint8_t)flags;
    c->ctrl_data[0] = d0;
    c->ctrl_data[1] = d1;
    c->len = with_data ? sizeof c->ctrl_data : 0;
    shm_submit(ep, c);
    return LOCUS_OK;
}

int shm_progress_tx(locus_shm_ep_t *ep)
{
    int did = 0;
    for (int d = 0; d < ep->size && ep->send.nactive; d++) {
        shm_list_t *l = &ep->send.queue[d];
        while (l->head) {
            locus_shm_req_t *r = l->head;
            if (!try_send(ep, r))
                break;
            shm_list_remove(l, r);
            after_send(ep, r);
            did++;
            if (!l->head)
                ep->send.nactive--;
        }
    }
    return did;
}

static locus_status_t isend(locus_shm_ep_t *ep, int dst, uint64_t tag, const void *buf, size_t len,
                            locus_shm_req_t **req, bool by_ref)
{
    locus_status_t st = shm_check_peer_arg(ep, dst, false, "destination rank");
    if (st)
        return st;
    if (!req || (!buf && len))
        return lc_err(LOCUS_ERR_INVALID, "isend: %s is NULL", req ? "buffer" : "request pointer");
    if (tag == LOCUS_SHM_ANY_TAG)
        return lc_err(LOCUS_ERR_INVALID, "tag UINT64_MAX is LOCUS_SHM_ANY_TAG: expected a tag below it");
    if (ep->fatal)
        return shm_fatal_err(ep);
    if (ep->peer.gone[dst] || dst == ep->rank)
        return lc_err(dst == ep->rank ? LOCUS_ERR_INVALID : LOCUS_ERR_PEER_FAILED,
                      "destination rank %d: %s", dst,
                      dst == ep->rank ? "is this process (self sends are not supported)"
                                      : "it finalized and left");
    locus_shm_req_t *r = shm_req_new(ep, RQ_SEND);
    if (!r)
        return lc_err(LOCUS_ERR_NO_MEMORY, "isend: out of memory for a request");
    r->peer = dst;
    r->tag = tag;
    r->buf = (void *)buf;
    r->len = len;
    r->proto = len <= ep->plan.eager_bytes ? MT_EAGER : MT_RTS;
    *req = r;
    bool first = !ep->send.queue[dst].head; /* nothing queued ahead: it may go now */
    if (by_ref && len >= ep->ref.min && ep->ref.min && r->proto == MT_EAGER && first && shm_ref_send(ep, r))
        return LOCUS_OK;
    if (r->proto == MT_EAGER && first) {
        /* Eager with nothing queued ahead: straight into the box or ring. */
        shmq_hdr_t h = {.src = (uint16_t)ep->rank, .type = MT_EAGER, .len = (uint32_t)len, .tag = tag};
        if (shm_send_matchable(ep, dst, &h, buf, shm_copy_for(ep, dst))) {
            r->state = RS_DONE;
            return LOCUS_OK;
        }
    }
    if (r->proto == MT_RTS)
        r->msgid = ++ep->send.next_msgid;
    shm_submit(ep, r);
    return LOCUS_OK;
}

locus_status_t locus_shm_isend(locus_shm_ep_t *ep, int dst, uint64_t tag, const void *buf, size_t len,
                               locus_shm_req_t **req)
{
    return isend(ep, dst, tag, buf, len, req, true);
}

locus_status_t shm_isend_copy(locus_shm_ep_t *ep, int dst, uint64_t tag, const void *buf, size_t len,
                              locus_shm_req_t **req)
{
    return isend(ep, dst, tag, buf, len, req, false);
}
