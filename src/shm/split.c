/* Split copy (heap to heap, >= LOCUS_SHM_SPLIT): one core's copy runs at its
 * cache's copy limit here, and two cores copying disjoint halves reach ~1.9x
 * (research/probes/split_probe.c), so the receiver of a large heap rendezvous whose
 * buffer is in its own heap shares the copy with the sender, which is waiting
 * for FIN anyway. The receiver cuts the message into pieces, publishes
 * split_claim = {job, 0, pieces} in its process line and tells the sender
 * (MT_HELP: destination offset, job and piece size); it takes pieces from the front, the
 * sender from the back, each by CAS on split_claim, so a sender that is busy
 * elsewhere never delays the receiver: it just copies everything itself. Once
 * the pieces run out the receiver waits only for pieces the sender already
 * claimed (a claimant never waits between claim and split_done), then
 * completes and sends FIN. Jobs are numbered per receiver, so a late MT_HELP
 * finds its job over. */
#include "shm/shm_internal.h"

#include <stdio.h>

#define SHM_SPLIT_MAXPIECES 32u /* pieces: n / LOCUS_SHM_SPLIT_PIECE, at least 2, at most this */

/* Pieces of an n-byte split message and their size (a multiple of 64 B),
 * from the receiver's LOCUS_SHM_SPLIT_PIECE; MT_HELP tells the sender. */
static uint32_t split_pieces(uint64_t n, uint64_t target, uint64_t *piece)
{
    uint64_t k = n / target;
    k = k < 2 ? 2 : k > SHM_SPLIT_MAXPIECES ? SHM_SPLIT_MAXPIECES : k;
    *piece = ((n + k - 1) / k + 63) & ~(uint64_t)63;
    return (uint32_t)((n + *piece - 1) / *piece);
}

/* One piece of `job`, from the front (receiver) or the back (sender);
 * UINT32_MAX once none is left or another job has begun. */
static uint32_t split_claim(uint64_t *w, uint32_t job, bool back)
{
    uint64_t c = __atomic_load_n(w, __ATOMIC_ACQUIRE);
    for (;;) {
        uint32_t f = (uint32_t)(c >> 16) & 0xffffu, b = (uint32_t)c & 0xffffu;
        if ((uint32_t)(c >> 32) != job || f >= b)
            return UINT32_MAX;
        uint64_t nc = back ? c - 1 : c + (1u << 16);
        if (__atomic_compare_exchange_n(w, &c, nc, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            return back ? b - 1 : f;
    }
}

/* Copy every piece of `job` this side can claim (p: the receiver's line). */
static uint32_t split_run(shm_proc_t *p, uint32_t job, unsigned char *dst, const unsigned char *src,
                          uint64_t n, uint64_t piece, bool sender, bool far)
{
    uint32_t k, did = 0;
    while ((k = split_claim(&p->split_claim, job, sender)) != UINT32_MAX) {
        uint64_t off = (uint64_t)k * piece;
        if (off >= n)
            break; /* a claim word no receiver of this message wrote */
        shm_copy(dst + off, src + off, n - off < piece ? n - off : piece, SHM_COPY_SINGLE, far);
        if (sender)
            __atomic_fetch_add(&p->split_done, 1, __ATOMIC_RELEASE);
        did++;
    }
    return did;
}

/* Receiver: offer the sender a share of the copy, copy what it does not
 * take, wait for the pieces it took. */
locus_status_t shm_split_recv(locus_shm_ep_t *ep, int src, uint64_t msgid, unsigned char *dst,
                              uint64_t dst_off, const unsigned char *from, uint64_t n)
{
    shm_proc_t *me = &ep->procs[ep->rank];
    uint64_t piece;
    uint32_t pieces = split_pieces(n, ep->split.piece, &piece);
    uint32_t job = ++ep->split.job ? ep->split.job : ++ep->split.job; /* 0 = never offered */
    uint64_t base = __atomic_load_n(&me->split_done, __ATOMIC_RELAXED);
    __atomic_store_n(&me->split_claim, (uint64_t)job << 32 | pieces, __ATOMIC_RELEASE);
    ep->stats.split_msgs++;
    /* If the offer cannot be posted now the sender never claims: we copy it all
     * (so too for pieces of 256 GiB and more, which the offer cannot say). */
    if (piece / 64 <= UINT32_MAX)
        (void)shm_send_ctrl(ep, src, MT_HELP, msgid, 0, true, dst_off, (piece / 64) << 32 | job);
    uint32_t mine = split_run(me, job, dst, from, n, piece, false, ep->peer.far[src]);
    ep->stats.split_pieces_recv += mine;
    uint64_t want = base + (pieces - mine), next = lc_now_ns() + 1000000;
    while (__atomic_load_n(&me->split_done, __ATOMIC_ACQUIRE) != want) {
        __builtin_ia32_pause();
        if (lc_now_ns() < next)
            continue;
        next += 1000000;
        /* A sender finishes every piece it claimed before it can leave, so
         * one that exited with pieces missing died in the middle. (Not
         * shm_check_peers(): it may hand out a finalized peer's messages,
         * re-entering the drain this runs in.) */
        if (shm_peer_exited(ep, src) && __atomic_load_n(&me->split_done, __ATOMIC_ACQUIRE) != want) {
            ep->fatal = LOCUS_ERR_PEER_FAILED;
            snprintf(ep->fatal_msg, sizeof ep->fatal_msg,
                     "rank %d (pid %d) died in the middle of a split copy", src, (int)ep->peer.pid[src]);
            shm_fail_all(ep);
            return shm_fatal_err(ep);
        }
    }
    return LOCUS_OK;
}

/* Sender: the receiver of one of my heap rendezvous offers to share its copy. */
locus_status_t shm_on_help(locus_shm_ep_t *ep, const shm_msg_t *m)
{
    const shmq_hdr_t *h = &m->h;
    uint64_t d[2], off_src, hb = ep->plan.heap_bytes;
    locus_shm_req_t *r = shm_find_by_msgid(&ep->send.rndv, h->src, h->aux, false);
    if (h->len != sizeof d || !r || !shm_in_my_heap(ep, r->buf, r->len, &off_src))
        return shm_set_corrupt(ep, h->src, "copy offer for a heap rendezvous this process did not start");
    shm_msg_read(ep, m, d, sizeof d);
    if (d[0] > hb || r->len > hb - d[0])
        return shm_set_corrupt(ep, h->src, "copy offer outside the receiver's shared heap");
    uint64_t piece = (d[1] >> 32) * 64; /* the receiver's cut: both sides must agree */
    if (!piece || (r->len + piece - 1) / piece > SHM_SPLIT_MAXPIECES)
        return shm_set_corrupt(ep, h->src, "copy offer with a piece size that does not cut the message in 1-32 pieces");
    ep->stats.split_pieces_sent += split_run(&ep->procs[h->src], (uint32_t)d[1], shm_heap_of(ep, h->src, d[0]),
                                             r->buf, r->len, piece, true, ep->peer.far[h->src]);
    return LOCUS_OK;
}
