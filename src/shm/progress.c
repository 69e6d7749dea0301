/* Progress: one pass over everything pending (receive, queued sends, sends by
 * reference), the idle bookkeeping after it (yielding when oversubscribed,
 * peer liveness), and the barrier, which is progress until everybody is in. */
#include "shm/shm_internal.h"

#include "core/error.h"

#include <sched.h>

/* Bookkeeping after a progress attempt that did `did` things: yield when
 * oversubscribed and idle, and check the peers' liveness. Liveness: a clock
 * read every 1024 calls (and after each yield, since yields can be slow), a
 * poll() of the pidfds every millisecond. */
void shm_idle_tick(locus_shm_ep_t *ep, int did)
{
    bool check = (++ep->idle.spins & 1023) == 0;
    /* Spinning only pays when every process has a CPU: when oversubscribed,
     * give the CPU to the peer we are waiting for. */
    if (did)
        ep->idle.run = 0;
    else if (++ep->idle.run >= ep->idle.yield_after) {
        ep->idle.run = 0;
        sched_yield();
        check = true;
    }
    if (check && !ep->fatal) {
        uint64_t now = lc_now_ns();
        if (now >= ep->idle.next_check_ns) {
            ep->idle.next_check_ns = now + 1000000;
            if (shm_check_peers(ep) != LOCUS_OK)
                shm_fail_all(ep);
        }
    }
}

locus_status_t locus_shm_progress(locus_shm_ep_t *ep)
{
    if (!ep)
        return lc_err(LOCUS_ERR_INVALID, "endpoint NULL: expected one from locus_shm_init");
    if (ep->fatal)
        return shm_fatal_err(ep);
    int did = shm_progress_rx(ep);
    if (!ep->fatal && ep->send.nactive)
        did += shm_progress_tx(ep);
    if (!ep->fatal && ep->ref.pending.head)
        did += shm_ref_check(ep, -1);
    shm_idle_tick(ep, did);
    return ep->fatal ? shm_fatal_err(ep) : LOCUS_OK;
}

locus_status_t locus_shm_barrier(locus_shm_ep_t *ep)
{
    if (!ep)
        return lc_err(LOCUS_ERR_INVALID, "endpoint NULL: expected one from locus_shm_init");
    uint64_t g = ep->procs[ep->rank].barrier + 1;
    __atomic_store_n(&ep->procs[ep->rank].barrier, g, __ATOMIC_RELEASE);
    for (int r = 0; r < ep->size; r++) {
        while (__atomic_load_n(&ep->procs[r].barrier, __ATOMIC_ACQUIRE) < g) {
            locus_status_t st = locus_shm_progress(ep);
            if (st)
                return st;
            /* It may have passed this barrier and left since we last looked. */
            if (ep->peer.gone[r] && __atomic_load_n(&ep->procs[r].barrier, __ATOMIC_ACQUIRE) < g)
                return lc_err(LOCUS_ERR_PEER_FAILED, "barrier: rank %d finalized and left", r);
            __builtin_ia32_pause();
        }
    }
    return LOCUS_OK;
}

/* Publish every head I read past (finalize: senders by reference complete
 * from them after I left). */
void shm_publish_heads(locus_shm_ep_t *ep)
{
    for (int k = 0; k < ep->fbox.n; k++)
        shmq_publish_head(&ep->fbox.rx[k].q, &ep->fbox.rx[k].rx);
    shmq_publish_head(&ep->q[ep->rank], &ep->rx);
}
