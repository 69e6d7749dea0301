/* Fast boxes and mailboxes (the protocol is in fbox.h): a sender claims and
 * announces its box, posts matchable messages through it, the receiver
 * accepts the announcement and drains mailboxes. The blocking fast paths that
 * use them directly are in fast.c. */
#include "shm/shm_internal.h"

#include <locus/copy.h>

static unsigned char *fbox_mem(const locus_shm_ep_t *ep, int owner, uint32_t i)
{
    return ep->base + ep->lay.fboxes + ((uint64_t)owner * ep->plan.fboxes + i) * ep->lay.fbox_stride;
}

static void fbox_view(const locus_shm_ep_t *ep, shmq_t *q, int owner, uint32_t i)
{
    shmq_view(q, fbox_mem(ep, owner, i), ep->plan.fbox_bytes / SHMQ_CELL,
              (uint32_t)ep->plan.fbox_eager_bytes, ep->hdr->salt);
}

/* ---------- sender ---------- */

/* Claim a box in d's pool and announce it through d's ring. false = the ring
 * is full, try again later. */
static bool fbox_open(locus_shm_ep_t *ep, int d)
{
    shm_fbtx_t *f = &ep->fbox.tx[d];
    if (f->state == FB_NONE) {
        uint32_t *used = &ep->procs[d].fbox_used;
        uint32_t u = __atomic_load_n(used, __ATOMIC_RELAXED);
        do {
            if (u >= ep->plan.fboxes) {
                f->state = FB_NEVER; /* its pool is given away: keep to the ring */
                return true;
            }
        } while (!__atomic_compare_exchange_n(used, &u, u + 1, false, __ATOMIC_RELAXED,
                                              __ATOMIC_RELAXED));
        f->index = (uint16_t)u;
        f->state = FB_CLAIMED;
    }
    shmq_hdr_t h = {.src = (uint16_t)ep->rank, .type = MT_FBOX, .aux = f->index};
    uint64_t pos;
    if (!shmq_claim(&ep->q[d], &ep->cached_head[d], 0, &pos))
        return false;
    fbox_view(ep, &f->q, d, f->index);
    f->tail = f->cached_head = 0;
    shmq_post(&ep->q[d], pos, &h, NULL, shm_copy_near);
    f->state = FB_OPEN;
    return true;
}

bool shm_send_matchable(locus_shm_ep_t *ep, int d, shmq_hdr_t *h, const void *payload, shmq_copy_fn copy)
{
    shm_fbtx_t *f = &ep->fbox.tx[d];
    uint64_t pos;
    if (__builtin_expect(f->state != FB_OPEN, 0) && f->state != FB_NEVER &&
        (f->state == FB_CLAIMED || f->seq >= SHM_FBOX_AFTER) && !fbox_open(ep, d))
        return false;
    h->aux = f->seq;
    if (f->state == FB_OPEN && h->len <= ep->plan.fbox_eager_bytes) {
        if (!shmq_claim_sp(&f->q, &f->tail, &f->cached_head, h->len, &pos))
            return false;
        shmq_post(&f->q, pos, h, payload, copy);
    } else {
        if (!shmq_claim(&ep->q[d], &ep->cached_head[d], h->len, &pos))
            return false;
        shmq_post(&ep->q[d], pos, h, payload, copy);
    }
    f->seq++;
    return true;
}

/* ---------- receiver ---------- */

locus_status_t shm_on_fbox(locus_shm_ep_t *ep, const shm_msg_t *m)
{
    const shmq_hdr_t *h = &m->h;
    uint32_t i = (uint32_t)h->aux;
    if (h->aux >= ep->plan.fboxes || ep->fbox.rx_of[h->src] >= 0 || ep->fbox.n >= (int)ep->plan.fboxes ||
        h->aux >= __atomic_load_n(&ep->procs[ep->rank].fbox_used, __ATOMIC_ACQUIRE))
        return shm_set_corrupt(ep, h->src, "fast box announcement out of range or repeated");
    for (int k = 0; k < ep->fbox.n; k++)
        if (ep->fbox.rx[k].q.cells == fbox_mem(ep, ep->rank, i) + SHMQ_CTL_BYTES)
            return shm_set_corrupt(ep, h->src, "fast box announced by two senders");
    shm_fbrx_t *b = &ep->fbox.rx[ep->fbox.n];
    fbox_view(ep, &b->q, ep->rank, i);
    b->rx = (shmq_rx_t){0, 0};
    b->src = h->src;
    ep->fbox.rx_of[h->src] = (int16_t)ep->fbox.n++;
    return LOCUS_OK;
}

/* We are idle: nothing of ours is waiting behind these stores. */
void shm_mailbox_free_all(locus_shm_ep_t *ep)
{
    for (int k = 0; k < ep->fbox.n; k++) {
        shm_fbrx_t *b = &ep->fbox.rx[k];
        if (b->mb_unfreed) {
            b->mb_unfreed = false;
            __atomic_store_n(&shm_mailbox(&b->q)->seq, b->mb_read << 1, __ATOMIC_RELEASE);
        }
    }
}

/* The general path (the drain): 0 = not its turn yet, or corrupt. */
int shm_mailbox_drain(locus_shm_ep_t *ep, shm_fbrx_t *b)
{
    shm_msg_t m = {.via = SHM_VIA_MAILBOX};
    if (!shm_mailbox_header(b, &m.h)) {
        shm_set_corrupt(ep, b->src, "mailbox message not a one-cell eager message from its sender");
        return 0;
    }
    uint64_t *seq = &ep->match.rxseq[m.h.src];
    if (m.h.aux != *seq) {
        if (m.h.aux < *seq)
            shm_set_corrupt(ep, m.h.src, "mailbox message out of its sender's order");
        return 0;
    }
    unsigned char data[SHMQ_CELL - SHMQ_HDR];
    locus_copy_tiny(data, shm_mailbox(&b->q) + 1, m.h.len);
    shm_mailbox_taken(ep, b);
    (*seq)++;
    m.data = data;
    shm_on_message(ep, &m);
    return 1;
}
