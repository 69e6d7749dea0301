/* Sends by reference (ref.h): completion. A send is done once the box head
 * its receiver publishes has passed it. */
#include "shm/ref.h"

/* Peer -1 = every peer. */
int shm_ref_check(locus_shm_ep_t *ep, int peer)
{
    int did = 0, fresh = -1; /* fresh: the peer whose head this call has read */
    for (locus_shm_req_t *r = ep->ref.pending.head, *nx; r; r = nx) {
        nx = r->next;
        if (peer >= 0 && r->peer != peer)
            continue;
        shm_fbtx_t *f = &ep->fbox.tx[r->peer];
        /* r->msgid: the box position after the message; head only grows. */
        if (f->cached_head < r->msgid && fresh != r->peer) {
            f->cached_head = __atomic_load_n(f->q.head, __ATOMIC_ACQUIRE);
            fresh = r->peer;
        }
        if (f->cached_head < r->msgid)
            continue;
        shm_list_remove(&ep->ref.pending, r);
        shm_req_complete(ep, r, LOCUS_OK);
        did++;
    }
    return did;
}
