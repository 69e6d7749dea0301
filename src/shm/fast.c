/* Blocking send and receive (locus_shm_send / locus_shm_recv) and their fast
 * paths. A blocking send or receive of an eager message while nothing else
 * is pending skips requests, lists and matching: the send posts straight into
 * the mailbox, box or ring, the receive copies straight out of the cell at
 * the head. Anything unusual (a queue behind, a posted or unexpected receive,
 * another message at the head, truncation, an error) goes the general way,
 * which stays the reference: the fast path only takes what the general path
 * would do the same. */
#include "shm/shm_internal.h"

#include <locus/copy.h>

/* ---------- receive ---------- */

static inline void took_eager(locus_shm_ep_t *ep, const shmq_hdr_t *h, locus_shm_info_t *info)
{
    ep->match.rxseq[h->src]++;
    ep->stats.eager_msgs++;
    ep->stats.eager_bytes += h->len;
    if (info)
        *info = (locus_shm_info_t){.source = h->src, .tag = h->tag, .len = h->len, .status = LOCUS_OK};
}

/* The message at the head of q (a box of `owner`'s, or my ring: -1) if it is
 * an in-order eager message this receive takes whole: 1 = received, 0 =
 * nothing there yet, -1 = something else (leave it to the general path). */
static inline __attribute__((always_inline)) int take_head(locus_shm_ep_t *ep, shmq_t *q, shmq_rx_t *rx,
                                                           int owner, int src, uint64_t tag, void *buf,
                                                           size_t cap, locus_shm_info_t *info)
{
    if (!shmq_ready(q, rx))
        return 0;
    const shmq_hdr_t *c = shmq_head_cell(q, rx);
    shmq_hdr_t h;
    /* One read of each field: the peer cannot change them under our checks. */
    h.len = __atomic_load_n(&c->len, __ATOMIC_RELAXED);
    h.src = __atomic_load_n(&c->src, __ATOMIC_RELAXED);
    h.type = __atomic_load_n(&c->type, __ATOMIC_RELAXED);
    h.tag = __atomic_load_n(&c->tag, __ATOMIC_RELAXED);
    h.aux = __atomic_load_n(&c->aux, __ATOMIC_RELAXED);
    if (h.len > q->max_len || h.type != MT_EAGER || h.len > cap || h.len > ep->plan.eager_bytes ||
        h.src >= ep->size || h.src == ep->rank || (owner >= 0 && h.src != owner) ||
        (src != LOCUS_SHM_ANY_SOURCE && h.src != src) || (tag != LOCUS_SHM_ANY_TAG && h.tag != tag) ||
        h.aux != ep->match.rxseq[h.src])
        return -1;
    shmq_read(q, rx, 0, buf, h.len, shm_copy_for(ep, h.src));
    shmq_consume(q, rx, h.len);
    took_eager(ep, &h, info);
    return 1;
}

/* The mailbox of box b, as take_head() does for a ring. */
static inline __attribute__((always_inline)) int take_mailbox(locus_shm_ep_t *ep, shm_fbrx_t *b, uint64_t tag,
                                                              void *buf, size_t cap, locus_shm_info_t *info)
{
    shmq_hdr_t h;
    if (!shm_mailbox_full(b))
        return 0;
    if (!shm_mailbox_header(b, &h) || h.len > cap || (tag != LOCUS_SHM_ANY_TAG && h.tag != tag) ||
        h.aux != ep->match.rxseq[h.src])
        return -1;
    locus_copy_tiny(buf, shm_mailbox(&b->q) + 1, h.len);
    shm_mailbox_taken(ep, b);
    took_eager(ep, &h, info);
    return 1;
}

/* Box b of its sender: the mailbox, then the ring. */
static inline __attribute__((always_inline)) int take_box(locus_shm_ep_t *ep, shm_fbrx_t *b, uint64_t tag,
                                                          void *buf, size_t cap, locus_shm_info_t *info)
{
    int k = take_mailbox(ep, b, tag, buf, cap, info);
    return k ? k : take_head(ep, &b->q, &b->rx, b->src, b->src, tag, buf, cap, info);
}

static int recv_direct(locus_shm_ep_t *ep, int src, uint64_t tag, void *buf, size_t cap,
                       locus_shm_info_t *info)
{
    if (src != LOCUS_SHM_ANY_SOURCE) {
        int b = ep->fbox.rx_of[src];
        int k = b < 0 ? 0 : take_box(ep, &ep->fbox.rx[b], tag, buf, cap, info);
        if (k)
            return k;
    } else {
        for (int b = 0; b < ep->fbox.n; b++) {
            int k = take_box(ep, &ep->fbox.rx[b], tag, buf, cap, info);
            if (k)
                return k;
        }
    }
    return take_head(ep, &ep->q[ep->rank], &ep->rx, -1, src, tag, buf, cap, info);
}

/* Nothing to read: give the senders back every consumed cell (a sender that
 * sees a full box or ring waits for exactly this, as with the drain). */
static void publish_idle(locus_shm_ep_t *ep, int src)
{
    for (int b = 0; b < ep->fbox.n; b++)
        if (src == LOCUS_SHM_ANY_SOURCE || ep->fbox.rx[b].src == src)
            shmq_publish_head(&ep->fbox.rx[b].q, &ep->fbox.rx[b].rx);
    shmq_publish_head(&ep->q[ep->rank], &ep->rx);
    shm_mailbox_free_all(ep);
}

/* 1 = received, -1 = take the general path. The wait polls only the lines
 * a message from src can appear on (its mailbox, its box's head cell, my
 * ring's head cell), so the message is seen within a few cycles of its
 * arrival; the bookkeeping (head publication, liveness, yielding) runs every
 * 64 polls. */
static int recv_fast(locus_shm_ep_t *ep, int src, uint64_t tag, void *buf, size_t cap,
                     locus_shm_info_t *info)
{
    if (!ep || ((src < 0 || src >= ep->size || src == ep->rank) && src != LOCUS_SHM_ANY_SOURCE) ||
        (!buf && cap))
        return -1;
    for (;;) {
        if (ep->fatal || ep->match.unexp_head || ep->match.posted.head || ep->send.nactive ||
            ep->frag.pulls.head || (src != LOCUS_SHM_ANY_SOURCE && ep->peer.gone[src]))
            return -1;
        int k = recv_direct(ep, src, tag, buf, cap, info);
        if (k)
            return k;
        publish_idle(ep, src);
        shm_idle_tick(ep, 0);
        int b = src == LOCUS_SHM_ANY_SOURCE ? -1 : ep->fbox.rx_of[src];
        if (b < 0 && src == LOCUS_SHM_ANY_SOURCE && ep->fbox.n)
            continue; /* several boxes to watch: the full look each time */
        const shm_fbrx_t *fb = b >= 0 ? &ep->fbox.rx[b] : NULL;
        for (int i = 0; i < 64; i++)
            if ((fb && (shm_mailbox_full(fb) || shmq_ready(&fb->q, &fb->rx))) ||
                shmq_ready(&ep->q[ep->rank], &ep->rx))
                break;
            else
                __builtin_ia32_pause();
    }
}

/* ---------- send ---------- */

static inline bool send_fast_ok(const locus_shm_ep_t *ep, int dst, uint64_t tag, const void *buf, size_t len)
{
    return ep && (unsigned)dst < (unsigned)ep->size && dst != ep->rank && !ep->fatal && !ep->peer.gone[dst] &&
           tag != LOCUS_SHM_ANY_TAG && (buf || !len) && len <= ep->plan.eager_bytes &&
           !ep->send.queue[dst].head;
}

/* Into the mailbox of my box at the destination if the receiver has freed
 * it. Its free store may still be on the way when we look (it follows the
 * receiver's reply, which we have already seen), so a mailbox that still holds
 * our last message is watched for a short while before we give up. */
static inline __attribute__((always_inline)) bool mailbox_send(shm_fbtx_t *f, int rank, uint64_t tag,
                                                               const void *buf, size_t len)
{
    shmq_hdr_t *c = shm_mailbox(&f->q);
    uint64_t free_state = f->mb_sent << 1;
    for (int i = 0; __atomic_load_n(&c->seq, __ATOMIC_RELAXED) != free_state; i++) {
        if (i == 32)
            return false;
        __builtin_ia32_pause();
    }
    if (!__atomic_compare_exchange_n(&c->seq, &free_state, SHM_MBOX_BUSY, false, __ATOMIC_ACQUIRE,
                                     __ATOMIC_RELAXED))
        return false;
    shmq_hdr_t h = {.len = (uint32_t)len, .src = (uint16_t)rank, .type = MT_EAGER, .tag = tag, .aux = f->seq};
    shmq_fill_cell(c, &h, buf, (uint32_t)len);
    __atomic_store_n(&c->seq, ((f->mb_sent + 1) << 1) | 1, __ATOMIC_RELEASE);
    f->mb_sent++;
    f->seq++;
    return true;
}

/* The mailbox for a one-cell message to d when its box is open, unless it
 * was found busy lately (SHM_MBOX_BACKOFF messages, or until our next
 * blocking receive). */
static inline __attribute__((always_inline)) bool try_mailbox(locus_shm_ep_t *ep, int d, uint64_t tag,
                                                              const void *buf, size_t len)
{
    shm_fbtx_t *f = &ep->fbox.tx[d];
    if (f->state != FB_OPEN || len > SHMQ_CELL - SHMQ_HDR)
        return false;
    if (f->mb_skip && f->mb_epoch == ep->fbox.recv_epoch) {
        f->mb_skip--;
        return false;
    }
    if (mailbox_send(f, ep->rank, tag, buf, len))
        return true;
    f->mb_skip = SHM_MBOX_BACKOFF;
    f->mb_epoch = ep->fbox.recv_epoch;
    return false;
}

/* ---------- the general blocking paths (a request), out of line so that
 * the fast paths keep a small frame ---------- */

static __attribute__((noinline)) locus_status_t send_slow(locus_shm_ep_t *ep, int dst, uint64_t tag,
                                                          const void *buf, size_t len)
{
    locus_shm_req_t *r;
    /* A blocking send completes on its own (eager): never by reference. */
    locus_status_t st = shm_isend_copy(ep, dst, tag, buf, len, &r);
    return st ? st : locus_shm_wait(ep, r, NULL);
}

static __attribute__((noinline)) locus_status_t recv_slow(locus_shm_ep_t *ep, int src, uint64_t tag,
                                                          void *buf, size_t capacity, locus_shm_info_t *info)
{
    locus_shm_req_t *r;
    locus_status_t st = locus_shm_irecv(ep, src, tag, buf, capacity, &r);
    return st ? st : locus_shm_wait(ep, r, info);
}

locus_status_t locus_shm_send(locus_shm_ep_t *ep, int dst, uint64_t tag, const void *buf, size_t len)
{
    if (__builtin_expect(send_fast_ok(ep, dst, tag, buf, len), 1)) {
        if (try_mailbox(ep, dst, tag, buf, len))
            return LOCUS_OK;
        shmq_hdr_t h = {.src = (uint16_t)ep->rank, .type = MT_EAGER, .len = (uint32_t)len, .tag = tag};
        if (shm_send_matchable(ep, dst, &h, buf, shm_copy_for(ep, dst)))
            return LOCUS_OK;
    }
    return send_slow(ep, dst, tag, buf, len);
}

locus_status_t locus_shm_recv(locus_shm_ep_t *ep, int src, uint64_t tag, void *buf, size_t capacity,
                              locus_shm_info_t *info)
{
    if (recv_fast(ep, src, tag, buf, capacity, info) > 0) {
        ep->fbox.recv_epoch++;
        return LOCUS_OK;
    }
    locus_status_t st = recv_slow(ep, src, tag, buf, capacity, info);
    if (ep)
        ep->fbox.recv_epoch++;
    return st;
}
