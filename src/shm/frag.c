/* The pipelined copy: a private-buffer rendezvous the receiver does not take
 * by CMA (rndv.c) is sent in LOCUS_SHM_FRAG fragments through the receiver's
 * ring. The receiver answers CTS_COPY; the sender streams MT_FRAG messages
 * (tag = offset, aux = msgid) that the receiver copies out in order. Each
 * fragment's arrival also measures the pipeline's throughput for
 * LOCUS_SHM_CMA=auto. */
#include "shm/shm_internal.h"

bool shm_frag_send(locus_shm_ep_t *ep, locus_shm_req_t *r)
{
    int d = r->peer;
    shmq_hdr_t h = {.src = (uint16_t)ep->rank, .type = MT_FRAG, .aux = r->msgid};
    while (r->done_bytes < r->len) {
        size_t chunk = r->len - r->done_bytes;
        if (chunk > ep->lay.frag_bytes)
            chunk = ep->lay.frag_bytes;
        h.len = (uint32_t)chunk;
        h.tag = r->done_bytes;
        if (!shmq_send(&ep->q[d], &ep->cached_head[d], &h, (const unsigned char *)r->buf + r->done_bytes,
                       shm_copy_for(ep, d)))
            return false;
        r->done_bytes += chunk;
    }
    shm_req_complete(ep, r, LOCUS_OK);
    return true;
}

locus_status_t shm_frag_pull(locus_shm_ep_t *ep, locus_shm_req_t *r, int src)
{
    r->state = RS_PULL;
    r->done_bytes = 0;
    if (!ep->frag.pulls.head)
        ep->frag.last_ns = lc_now_ns(); /* the pipeline starts moving bytes now */
    shm_list_push(&ep->frag.pulls, r);
    ep->stats.pipe_msgs++;
    ep->stats.pipe_bytes += r->msg_len;
    return shm_send_ctrl(ep, src, MT_CTS_COPY, r->msgid, 0, false, 0, 0);
}

locus_status_t shm_on_frag(locus_shm_ep_t *ep, const shm_msg_t *m)
{
    const shmq_hdr_t *h = &m->h;
    locus_shm_req_t *r = shm_find_by_msgid(&ep->frag.pulls, h->src, h->aux, true);
    uint64_t off = h->tag;
    if (!r || off != r->done_bytes || h->len == 0 || h->len > r->msg_len - off)
        return shm_set_corrupt(ep, h->src, "fragment outside the message it claims to belong to");
    if (off < r->len) {
        size_t n = r->len - off < h->len ? r->len - off : h->len;
        shm_msg_read(ep, m, (unsigned char *)r->buf + off, n);
    }
    r->done_bytes += h->len;
    /* Throughput, not one message's latency: several pulls may be in flight. */
    uint64_t now = lc_now_ns();
    shm_rate_note(&ep->cma.rate_pipe, h->len, now - ep->frag.last_ns);
    ep->frag.last_ns = now;
    if (r->done_bytes == r->msg_len) {
        shm_list_remove(&ep->frag.pulls, r);
        shm_req_complete(ep, r, r->msg_len > r->len ? LOCUS_ERR_TRUNCATED : LOCUS_OK);
    }
    return LOCUS_OK;
}
