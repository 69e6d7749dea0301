/* The receive path: drain my ring and my fast boxes, check each header, keep
 * every pair's messages in send order, and hand each message to its handler
 * (shm_on_message); matching of eager and rendezvous messages against posted
 * receives (else the unexpected list), and locus_shm_irecv. */
#include "shm/shm_internal.h"
#include "shm/ref.h"

#include "core/error.h"

#include <locus/copy.h>

void shm_msg_read(const locus_shm_ep_t *ep, const shm_msg_t *m, void *dst, size_t n)
{
    switch (m->via) {
    case SHM_VIA_REF: shm_copy(dst, m->data, n, SHM_COPY_SINGLE, ep->peer.far[m->h.src]); break;
    case SHM_VIA_MAILBOX: locus_copy_tiny(dst, m->data, n); break;
    default: shmq_read(m->q, m->rx, 0, dst, n, shm_copy_for(ep, m->h.src)); break;
    }
}

/* ---------- matching ---------- */

static inline bool tag_match(const locus_shm_req_t *r, int src, uint64_t tag)
{
    return (r->peer == LOCUS_SHM_ANY_SOURCE || r->peer == src) &&
           (r->tag == LOCUS_SHM_ANY_TAG || r->tag == tag);
}

static inline locus_shm_req_t *match_posted(locus_shm_ep_t *ep, int src, uint64_t tag)
{
    for (locus_shm_req_t *r = ep->match.posted.head; r; r = r->next)
        if (tag_match(r, src, tag)) {
            shm_list_remove(&ep->match.posted, r);
            return r;
        }
    return NULL;
}

static void unexp_push(locus_shm_ep_t *ep, shm_unexp_t *u)
{
    u->next = NULL;
    if (ep->match.unexp_tail)
        ep->match.unexp_tail->next = u;
    else
        ep->match.unexp_head = u;
    ep->match.unexp_tail = u;
}

locus_status_t shm_on_eager(locus_shm_ep_t *ep, const shm_msg_t *m)
{
    const shmq_hdr_t *h = &m->h;
    if (h->len > ep->plan.eager_bytes)
        return shm_set_corrupt(ep, h->src, "eager length above LOCUS_SHM_EAGER");
    if (m->via != SHM_VIA_REF) {
        ep->stats.eager_msgs++;
        ep->stats.eager_bytes += h->len;
    }
    locus_shm_req_t *r = match_posted(ep, h->src, h->tag);
    if (r) {
        size_t n = h->len < r->len ? h->len : r->len;
        shm_msg_read(ep, m, r->buf, n);
        r->src = h->src;
        r->tag = h->tag;
        r->msg_len = h->len;
        shm_req_complete(ep, r, h->len > r->len ? LOCUS_ERR_TRUNCATED : LOCUS_OK);
        return LOCUS_OK;
    }
    shm_unexp_t *u = malloc(sizeof *u + h->len);
    if (!u)
        return lc_err(LOCUS_ERR_NO_MEMORY, "unexpected message of %u B: out of memory", h->len);
    u->src = h->src;
    u->type = MT_EAGER;
    u->tag = h->tag;
    u->len = h->len;
    shm_msg_read(ep, m, u->data, h->len);
    unexp_push(ep, u);
    return LOCUS_OK;
}

static locus_status_t on_rts(locus_shm_ep_t *ep, const shm_msg_t *m)
{
    const shmq_hdr_t *h = &m->h;
    shm_rts_t rts;
    if (h->len != sizeof rts)
        return shm_set_corrupt(ep, h->src, "rendezvous descriptor of the wrong size");
    shm_msg_read(ep, m, &rts, sizeof rts);
    if (rts.kind < RTS_CMA || rts.kind > RTS_COPY || rts.len == 0)
        return shm_set_corrupt(ep, h->src, "rendezvous descriptor with a bad kind or length 0");
    locus_shm_req_t *r = match_posted(ep, h->src, h->tag);
    if (r)
        return shm_rndv_start(ep, r, h->src, h->tag, &rts);
    shm_unexp_t *u = malloc(sizeof *u);
    if (!u)
        return lc_err(LOCUS_ERR_NO_MEMORY, "unexpected rendezvous: out of memory");
    u->src = h->src;
    u->type = MT_RTS;
    u->tag = h->tag;
    u->msgid = rts.msgid;
    u->len = rts.len;
    u->rts = rts;
    unexp_push(ep, u);
    return LOCUS_OK;
}

locus_status_t shm_on_message(locus_shm_ep_t *ep, const shm_msg_t *m)
{
    switch (m->h.type) {
    case MT_EAGER: return shm_on_eager(ep, m);
    case MT_RTS: return on_rts(ep, m);
    case MT_FRAG: return shm_on_frag(ep, m);
    case MT_HELP: return shm_on_help(ep, m);
    case MT_REF: return shm_on_ref(ep, m);
    case MT_FIN:
    case MT_CTS_COPY: return shm_on_reply(ep, m);
    case MT_FBOX: return shm_on_fbox(ep, m);
    default: return shm_set_corrupt(ep, m->h.src, "unknown message type");
    }
}

/* ---------- draining a ring or box ---------- */

/* A matchable message numbered k from src reached us through the ring while
 * we expect an earlier one: the ones in between are in src's box (posted
 * before it, so visible now). */
static bool catch_up(locus_shm_ep_t *ep, int src, uint64_t k)
{
    int b = ep->fbox.rx_of[src];
    if (b < 0 || k < ep->match.rxseq[src])
        return false;
    while (ep->match.rxseq[src] < k) {
        if (!shm_drain(ep, &ep->fbox.rx[b].q, &ep->fbox.rx[b].rx, src) || ep->fatal)
            return false;
    }
    return true;
}

/* The payload of the message at head is complete (its header is published):
 * start fetching its lines from the sender's cache now, so the transfer
 * overlaps the matching and bookkeeping before the copy (1 KiB message rate
 * +5-28 % here, nothing lost at 8 B). Never past the message: the lines after
 * it may be the sender's current writes. */
static inline void prefetch_payload(const shmq_t *q, const shmq_rx_t *rx, uint32_t len)
{
    uint64_t k = shmq_cells_for(len);
    for (uint64_t i = 1; i < k && i < 64; i++)
        __builtin_prefetch(q->cells + ((rx->head + i) & q->mask) * SHMQ_CELL, 0);
}

/* And the message after it, when that one is published too: its lines then
 * travel while this one is matched and copied (1 KiB rate +4.6 % in an
 * interleaved A/B, near placement, 6 runs each; 8 B unchanged). Only its
 * header line is read before it is published: the payload lines the sender
 * may be writing are left alone. */
static inline void prefetch_next(const shmq_t *q, const shmq_rx_t *rx, uint32_t len)
{
    shmq_rx_t nx = {.head = rx->head + shmq_cells_for(len)};
    if (!shmq_ready(q, &nx))
        return;
    uint32_t l2 = shmq_head_cell(q, &nx)->len;
    if (l2 > SHMQ_CELL - SHMQ_HDR && l2 <= q->max_len)
        prefetch_payload(q, &nx, l2);
}

/* A reference's payload (ref.c) is one dependent load away from its cell:
 * start fetching it from the sender's heap as soon as the cell is read, and
 * the next message's too when that is a published reference, so the
 * transfers overlap matching and copies as an eager payload's do. Only lines
 * inside the sender's heap; at most 2 KiB (the hardware prefetcher follows). */
static inline void prefetch_ref(const locus_shm_ep_t *ep, const shmq_hdr_t *c, int src)
{
    const uint64_t *d = (const uint64_t *)(c + 1);
    uint64_t off = d[0], len = d[1], hb = ep->plan.heap_bytes;
    if ((unsigned)src >= (unsigned)ep->size || off > hb || len > hb - off)
        return;
    const unsigned char *p = shm_heap_of(ep, src, off);
    const unsigned char *end = p + (len < 2048 ? len : 2048);
    for (p = (const unsigned char *)((uintptr_t)p & ~(uintptr_t)63); p < end; p += 64)
        __builtin_prefetch(p, 0);
}

static inline void prefetch_refs(const locus_shm_ep_t *ep, const shmq_t *q, const shmq_rx_t *rx,
                                 const shmq_hdr_t *c, int src)
{
    prefetch_ref(ep, c, src);
    shmq_rx_t nx = {.head = rx->head + 1};
    if (shmq_ready(q, &nx) && shmq_head_cell(q, &nx)->type == MT_REF)
        prefetch_ref(ep, shmq_head_cell(q, &nx), src);
}

/* Is the header in m->h acceptable from this ring (owner -1) or owner's box?
 * A box is written by its owner only: blame it, not the forged src. */
static bool header_ok(locus_shm_ep_t *ep, const shmq_t *q, const shmq_hdr_t *h, bool corrupt, int owner)
{
    if (!corrupt && h->len <= q->max_len && h->src < ep->size && h->src != ep->rank &&
        (owner < 0 || (h->src == owner && (h->type == MT_EAGER || h->type == MT_RTS || h->type == MT_REF))))
        return true;
    shm_set_corrupt(ep, owner >= 0 ? owner : h->src,
                    owner >= 0 ? "fast box header out of range or not from its sender"
                               : "header length or source out of range");
    return false;
}

int shm_drain(locus_shm_ep_t *ep, shmq_t *q, shmq_rx_t *rx, int owner)
{
    int n = 0;
    shm_fbrx_t *box = owner >= 0 ? &ep->fbox.rx[ep->fbox.rx_of[owner]] : NULL;
    shm_msg_t m = {.via = box ? SHM_VIA_BOX : SHM_VIA_RING, .q = q, .rx = rx};
    const shmq_hdr_t *h = &m.h;
    for (; n < 64; n++) {
        if (box && shm_mailbox_full(box) && shm_mailbox_drain(ep, box))
            continue;
        if (ep->fatal)
            return n;
        bool corrupt;
        const shmq_hdr_t *c = shmq_peek(q, rx, &corrupt);
        if (!c)
            break;
        m.h = *c; /* one read: the peer cannot change it under our checks */
        if (h->len > SHMQ_CELL - SHMQ_HDR && h->len <= q->max_len) {
            prefetch_payload(q, rx, h->len);
            prefetch_next(q, rx, h->len);
        } else if (h->type == MT_REF && box) {
            prefetch_refs(ep, q, rx, c, owner);
        }
        if (__builtin_expect(!header_ok(ep, q, h, corrupt, owner), 0))
            return n;
        if (h->type == MT_EAGER || h->type == MT_RTS || h->type == MT_REF) {
            /* Pair order across ring and box. */
            if (__builtin_expect(h->aux != ep->match.rxseq[h->src], 0)) {
                if (box && h->aux > ep->match.rxseq[h->src])
                    break; /* earlier ones are still in the ring */
                if (box || !catch_up(ep, h->src, h->aux)) {
                    if (!ep->fatal)
                        shm_set_corrupt(ep, h->src, "message out of its sender's order");
                    return n;
                }
            }
            ep->match.rxseq[h->src]++;
        }
        (void)shm_on_message(ep, &m); /* an error other than fatal shows on the request */
        if (ep->fatal)
            return n;
        shmq_consume(q, rx, h->len);
    }
    if (!n) {
        shmq_publish_head(q, rx);
        if (box && box->mb_unfreed)
            shm_mailbox_free_all(ep);
    } else if (ep->ref.taken) {
        ep->ref.taken = false;
        shmq_publish_head(q, rx); /* completes the sends by reference */
    }
    return n;
}

int shm_progress_rx(locus_shm_ep_t *ep)
{
    int n = 0;
    /* Fast boxes first: they carry the small messages of frequent peers. */
    for (int k = 0; k < ep->fbox.n; k++) {
        n += shm_drain(ep, &ep->fbox.rx[k].q, &ep->fbox.rx[k].rx, ep->fbox.rx[k].src);
        if (ep->fatal)
            return n;
    }
    return n + shm_drain(ep, &ep->q[ep->rank], &ep->rx, -1);
}

/* ---------- posting a receive ---------- */

/* Take the first unexpected message r matches, if any: true with *st its outcome. */
static bool take_unexpected(locus_shm_ep_t *ep, locus_shm_req_t *r, locus_status_t *st)
{
    shm_unexp_t *prev = NULL;
    for (shm_unexp_t *u = ep->match.unexp_head; u; prev = u, u = u->next) {
        if (!tag_match(r, u->src, u->tag))
            continue;
        if (prev)
            prev->next = u->next;
        else
            ep->match.unexp_head = u->next;
        if (ep->match.unexp_tail == u)
            ep->match.unexp_tail = prev;
        if (u->type == MT_EAGER) {
            size_t n = u->len < r->len ? u->len : r->len;
            if (n)
                memcpy(r->buf, u->data, n);
            r->src = u->src;
            r->tag = u->tag;
            r->msg_len = u->len;
            shm_req_complete(ep, r, u->len > r->len ? LOCUS_ERR_TRUNCATED : LOCUS_OK);
            *st = LOCUS_OK;
        } else {
            *st = shm_rndv_start(ep, r, u->src, u->tag, &u->rts);
        }
        free(u);
        return true;
    }
    return false;
}

locus_status_t locus_shm_irecv(locus_shm_ep_t *ep, int src, uint64_t tag, void *buf, size_t capacity,
                               locus_shm_req_t **req)
{
    locus_status_t st = shm_check_peer_arg(ep, src, true, "source rank");
    if (st)
        return st;
    if (!req || (!buf && capacity))
        return lc_err(LOCUS_ERR_INVALID, "irecv: %s is NULL", req ? "buffer" : "request pointer");
    if (ep->fatal)
        return shm_fatal_err(ep);
    locus_shm_req_t *r = shm_req_new(ep, RQ_RECV);
    if (!r)
        return lc_err(LOCUS_ERR_NO_MEMORY, "irecv: out of memory for a request");
    r->peer = src;
    r->tag = tag;
    r->buf = buf;
    r->len = capacity;
    *req = r;
    if (take_unexpected(ep, r, &st))
        return ep->fatal ? LOCUS_OK : st; /* a fatal error shows on the request */
    if (src != LOCUS_SHM_ANY_SOURCE && ep->peer.gone[src]) {
        shm_req_complete(ep, r, LOCUS_ERR_PEER_FAILED); /* it left; nothing more will come */
        return LOCUS_OK;
    }
    r->state = RS_POSTED;
    shm_list_push(&ep->match.posted, r);
    return LOCUS_OK;
}
