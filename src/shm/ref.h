/* Sends by reference (LOCUS_SHM_REF): a non-blocking send of an eager-sized
 * message from the sender's shared heap, to a peer whose fast box it holds,
 * posts only {heap offset, length} (MT_REF, one cell) instead of copying the
 * payload into the box. The receiver treats it as an eager message whose
 * payload it reads from the sender's heap: one copy instead of two, and no
 * payload lines pass through the box (recv.c prefetches them as soon as it
 * reads the cell). The send completes once the receiver has consumed it (into
 * the posted receive, or into an unexpected buffer: matching is not waited
 * for), which the sender reads off the box's published head: no extra shared
 * word. The receiver publishes its head after every drain that consumed one.
 * A blocking locus_shm_send keeps the eager copy (it completes on its own).
 *
 * The two per-message operations are inline here, as they were when one file
 * held the whole endpoint, so the split adds no call to either side of a
 * 1-16 KiB heap message: the send is on locus_shm_isend's path (send.c), the
 * receive on the dispatch's (recv.c). Completion is in ref.c. */
#ifndef LOCUS_SHM_REF_H
#define LOCUS_SHM_REF_H

#include "shm/shm_internal.h"

static inline bool shm_ref_send(locus_shm_ep_t *ep, locus_shm_req_t *r)
{
    shm_fbtx_t *f = &ep->fbox.tx[r->peer];
    uint64_t d[2] = {0, r->len}, pos;
    if (f->state != FB_OPEN || !shm_in_my_heap(ep, r->buf, r->len, &d[0]) ||
        !shmq_claim_sp(&f->q, &f->tail, &f->cached_head, sizeof d, &pos))
        return false;
    shmq_hdr_t h = {.src = (uint16_t)ep->rank, .type = MT_REF, .len = sizeof d, .tag = r->tag, .aux = f->seq++};
    shmq_post(&f->q, pos, &h, d, shm_copy_near);
    r->state = RS_WAIT_REF;
    r->msgid = f->tail; /* the box position after it: done once the head reaches it */
    shm_list_push(&ep->ref.pending, r);
    ep->stats.ref_sent++;
    return true;
}

static inline locus_status_t shm_on_ref(locus_shm_ep_t *ep, const shm_msg_t *m)
{
    const shmq_hdr_t *h = &m->h;
    uint64_t d[2], hb = ep->plan.heap_bytes;
    if (h->len != sizeof d || m->via != SHM_VIA_BOX)
        return shm_set_corrupt(ep, h->src, "reference message of the wrong size or not through a fast box");
    shm_msg_read(ep, m, d, sizeof d);
    if (d[0] > hb || d[1] > hb - d[0] || d[1] > ep->plan.eager_bytes)
        return shm_set_corrupt(ep, h->src, "reference outside the sender's shared heap or above LOCUS_SHM_EAGER");
    shm_msg_t e = {.h = *h, .via = SHM_VIA_REF, .data = shm_heap_of(ep, h->src, d[0])};
    e.h.len = (uint32_t)d[1];
    ep->stats.ref_msgs++;
    ep->stats.ref_bytes += d[1];
    locus_status_t st = shm_on_eager(ep, &e);
    ep->ref.taken = true;
    return st;
}

#endif
