/* Endpoint: requests, matching, the eager / rendezvous / pipelined protocols
 * and progress. */
#include "shm/shm_internal.h"

#include "core/config.h"
#include "core/error.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

/* ---------- lists and requests ---------- */

static void list_push(shm_list_t *l, locus_shm_req_t *r)
{
    r->next = NULL;
    r->prev = l->tail;
    if (l->tail)
        l->tail->next = r;
    else
        l->head = r;
    l->tail = r;
}

static void list_remove(shm_list_t *l, locus_shm_req_t *r)
{
    if (r->prev)
        r->prev->next = r->next;
    else
        l->head = r->next;
    if (r->next)
        r->next->prev = r->prev;
    else
        l->tail = r->prev;
    r->next = r->prev = NULL;
}

static locus_shm_req_t *find_by_msgid(shm_list_t *l, int peer, uint64_t msgid, bool recv)
{
    for (locus_shm_req_t *r = l->head; r; r = r->next)
        if ((recv ? r->src : r->peer) == peer && r->msgid == msgid)
            return r;
    return NULL;
}

static locus_shm_req_t *req_new(locus_shm_ep_t *ep, int kind)
{
    locus_shm_req_t *r = ep->free_reqs;
    if (r)
        ep->free_reqs = r->next;
    else if (!(r = malloc(sizeof *r)))
        return NULL;
    memset(r, 0, sizeof *r);
    r->kind = (uint8_t)kind;
    return r;
}

static void req_free(locus_shm_ep_t *ep, locus_shm_req_t *r)
{
    r->next = ep->free_reqs;
    ep->free_reqs = r;
}

static void complete(locus_shm_ep_t *ep, locus_shm_req_t *r, locus_status_t st)
{
    if (r->kind == RQ_CTRL) {
        req_free(ep, r);
        return;
    }
    r->state = RS_DONE;
    if (r->status == LOCUS_OK)
        r->status = st;
}

static void copy_near(void *dst, const void *src, size_t n, int dir) { shm_copy(dst, src, n, dir); }
static void copy_far(void *dst, const void *src, size_t n, int dir)
{
    shm_copy(dst, src, n, dir | SHM_COPY_FAR);
}
/* The copy for traffic with `peer`, by whether it shares our L3. */
static shmq_copy_fn copy_for(const locus_shm_ep_t *ep, int peer)
{
    return ep->far[peer] ? copy_far : copy_near;
}

/* ---------- failure ---------- */

static locus_status_t fatal_err(locus_shm_ep_t *ep)
{
    return lc_err(ep->fatal, "%s", ep->fatal_msg);
}

static void fail_list(locus_shm_ep_t *ep, shm_list_t *l, locus_status_t st)
{
    while (l->head) {
        locus_shm_req_t *r = l->head;
        list_remove(l, r);
        complete(ep, r, st);
    }
}

/* Every pending operation ends with the endpoint's fatal status. */
static void fail_all(locus_shm_ep_t *ep)
{
    for (int d = 0; d < ep->size; d++)
        fail_list(ep, &ep->sendq[d], ep->fatal);
    ep->nactive = 0;
    fail_list(ep, &ep->rndv, ep->fatal);
    fail_list(ep, &ep->posted, ep->fatal);
    fail_list(ep, &ep->pulls, ep->fatal);
    fail_list(ep, &ep->refs, ep->fatal);
}

static locus_status_t set_corrupt(locus_shm_ep_t *ep, int src, const char *what)
{
    if (!ep->fatal) {
        ep->fatal = LOCUS_ERR_CORRUPT;
        snprintf(ep->fatal_msg, sizeof ep->fatal_msg, "message from rank %d failed a bounds check: %s",
                 src, what);
        fail_all(ep);
    }
    return fatal_err(ep);
}

static int progress_rx(locus_shm_ep_t *ep);

/* Sends by reference (shm_internal.h) whose box head has passed them are
 * done; peer -1 = every peer. */
static int refs_check(locus_shm_ep_t *ep, int peer)
{
    int did = 0, fresh = -1; /* fresh: the peer whose head this call has read */
    for (locus_shm_req_t *r = ep->refs.head, *nx; r; r = nx) {
        nx = r->next;
        if (peer >= 0 && r->peer != peer)
            continue;
        shm_fbtx_t *f = &ep->fbtx[r->peer];
        /* r->msgid: the box position after the message; head only grows. */
        if (f->cached_head < r->msgid && fresh != r->peer) {
            f->cached_head = __atomic_load_n(f->q.head, __ATOMIC_ACQUIRE);
            fresh = r->peer;
        }
        if (f->cached_head < r->msgid)
            continue;
        list_remove(&ep->refs, r);
        complete(ep, r, LOCUS_OK);
        did++;
    }
    return did;
}

/* Fail the requests of l that wait for peer (by source for pulls). */
static void fail_peer_in(locus_shm_ep_t *ep, shm_list_t *l, int peer, bool by_src)
{
    for (locus_shm_req_t *r = l->head, *nx; r; r = nx) {
        nx = r->next;
        if ((by_src ? r->src : r->peer) == peer) {
            list_remove(l, r);
            complete(ep, r, LOCUS_ERR_PEER_FAILED);
        }
    }
}

/* `peer` finalized and exited: everything it sent is in our ring and its box
 * by now, so hand that out first; what is still waiting for it after that
 * can never complete. */
void shm_fail_peer_ops(locus_shm_ep_t *ep, int peer)
{
    while (!ep->fatal && progress_rx(ep) > 0)
        ;
    fail_peer_in(ep, &ep->posted, peer, false);
    shm_list_t *q = &ep->sendq[peer];
    if (q->head)
        ep->nactive--;
    fail_list(ep, q, LOCUS_ERR_PEER_FAILED);
    fail_peer_in(ep, &ep->rndv, peer, false);
    refs_check(ep, peer); /* what it consumed before leaving is delivered */
    fail_peer_in(ep, &ep->refs, peer, false);
    fail_peer_in(ep, &ep->pulls, peer, true);
}

/* ---------- sending ---------- */

static bool in_my_heap(const locus_shm_ep_t *ep, const void *buf, size_t len, uint64_t *off)
{
    uint64_t hb = ep->plan.heap_bytes;
    const unsigned char *p = buf;
    if (!hb || p < ep->my_heap || p >= ep->my_heap + hb)
        return false;
    *off = (uint64_t)(p - ep->my_heap);
    return len <= hb - *off;
}

/* ---------- fast boxes ---------- */

static unsigned char *fbox_mem(const locus_shm_ep_t *ep, int owner, uint32_t i)
{
    return ep->base + ep->lay.fboxes + ((uint64_t)owner * ep->plan.fboxes + i) * ep->lay.fbox_stride;
}

static void fbox_view(const locus_shm_ep_t *ep, shmq_t *q, int owner, uint32_t i)
{
    shmq_view(q, fbox_mem(ep, owner, i), ep->plan.fbox_bytes / SHMQ_CELL,
              (uint32_t)ep->plan.fbox_eager_bytes, ep->hdr->salt);
}

/* Claim a box in d's pool and announce it through d's ring. false = the ring
 * is full, try again later. */
static bool fbox_open(locus_shm_ep_t *ep, int d)
{
    shm_fbtx_t *f = &ep->fbtx[d];
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
    shmq_post(&ep->q[d], pos, &h, NULL, copy_near);
    f->state = FB_OPEN;
    return true;
}

/* Send a matchable (EAGER/RTS) message to d: through d's box when it fits,
 * else d's ring. false = full (or the box announcement did not fit): retry. */
static bool send_matchable(locus_shm_ep_t *ep, int d, shmq_hdr_t *h, const void *payload,
                           shmq_copy_fn copy)
{
    shm_fbtx_t *f = &ep->fbtx[d];
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

/* Try to move the request at the head of its destination's queue into the
 * ring; true once nothing of it is left to post. */
static bool try_send(locus_shm_ep_t *ep, locus_shm_req_t *r)
{
    int d = r->peer;
    shmq_t *q = &ep->q[d];
    shmq_hdr_t h = {.src = (uint16_t)ep->rank};
    if (r->kind == RQ_CTRL) {
        h.type = r->ctrl_type;
        h.aux = r->ctrl_aux;
        h.flags = r->proto;
        h.len = (uint32_t)r->len; /* control payload bytes (ctrl_data) */
        return shmq_send(q, &ep->cached_head[d], &h, h.len ? r->ctrl_data : NULL, copy_near);
    }
    if (r->proto == MT_EAGER) {
        h.type = MT_EAGER;
        h.len = (uint32_t)r->len;
        h.tag = r->tag;
        if (!send_matchable(ep, d, &h, r->buf, copy_for(ep, d)))
            return false;
        complete(ep, r, LOCUS_OK);
        return true;
    }
    if (r->state == RS_QUEUED) {
        shm_rts_t rts = {.len = r->len, .addr = (uint64_t)(uintptr_t)r->buf, .msgid = r->msgid};
        if (in_my_heap(ep, r->buf, r->len, &rts.heap_off))
            rts.kind = RTS_HEAP;
        else
            rts.kind = ep->cma_mode == CMA_OFF ? RTS_COPY : RTS_CMA;
        h.type = MT_RTS;
        h.len = sizeof rts;
        h.tag = r->tag;
        if (!send_matchable(ep, d, &h, &rts, copy_near))
            return false;
        r->state = RS_WAIT_FIN;
        return true;
    }
    /* RS_FRAGS: the receiver asked for a pipelined copy through its ring. */
    while (r->done_bytes < r->len) {
        size_t chunk = r->len - r->done_bytes;
        if (chunk > ep->lay.frag_bytes)
            chunk = ep->lay.frag_bytes;
        h.type = MT_FRAG;
        h.len = (uint32_t)chunk;
        h.tag = r->done_bytes;
        h.aux = r->msgid;
        if (!shmq_send(q, &ep->cached_head[d], &h, (const unsigned char *)r->buf + r->done_bytes,
                       copy_for(ep, d)))
            return false;
        r->done_bytes += chunk;
    }
    complete(ep, r, LOCUS_OK);
    return true;
}

/* Called once the request is off every list (control requests die here). */
static void after_send(locus_shm_ep_t *ep, locus_shm_req_t *r)
{
    if (r->kind == RQ_CTRL)
        req_free(ep, r);
    else if (r->kind == RQ_SEND && r->state == RS_WAIT_FIN)
        list_push(&ep->rndv, r);
}

/* Post now if the destination has nothing queued, else queue behind. */
static void submit(locus_shm_ep_t *ep, locus_shm_req_t *r)
{
    shm_list_t *l = &ep->sendq[r->peer];
    if (!l->head && try_send(ep, r)) {
        after_send(ep, r);
        return;
    }
    if (!l->head)
        ep->nactive++;
    list_push(l, r);
}

/* A control message; with_data: ctrl_data = {d0, d1} travels as its payload. */
static locus_status_t send_ctrl_data(locus_shm_ep_t *ep, int dst, int type, uint64_t aux, int flags,
                                     bool with_data, uint64_t d0, uint64_t d1)
{
    if (ep->gone[dst])
        return LOCUS_OK; /* it left; nobody waits for this */
    locus_shm_req_t *c = req_new(ep, RQ_CTRL);
    if (!c)
        return lc_err(LOCUS_ERR_NO_MEMORY, "control message to rank %d: out of memory", dst);
    c->peer = dst;
    c->ctrl_type = (uint8_t)type;
    c->ctrl_aux = aux;
    c->proto = (uint8_t)flags;
    c->ctrl_data[0] = d0;
    c->ctrl_data[1] = d1;
    c->len = with_data ? sizeof c->ctrl_data : 0;
    submit(ep, c);
    return LOCUS_OK;
}

static locus_status_t send_ctrl(locus_shm_ep_t *ep, int dst, int type, uint64_t aux, int flags)
{
    return send_ctrl_data(ep, dst, type, aux, flags, false, 0, 0);
}

static int progress_tx(locus_shm_ep_t *ep)
{
    int did = 0;
    for (int d = 0; d < ep->size && ep->nactive; d++) {
        shm_list_t *l = &ep->sendq[d];
        while (l->head) {
            locus_shm_req_t *r = l->head;
            if (!try_send(ep, r))
                break;
            list_remove(l, r);
            after_send(ep, r);
            did++;
            if (!l->head)
                ep->nactive--;
        }
    }
    return did;
}

/* ---------- receiving ---------- */

static bool tag_match(const locus_shm_req_t *r, int src, uint64_t tag)
{
    return (r->peer == LOCUS_SHM_ANY_SOURCE || r->peer == src) &&
           (r->tag == LOCUS_SHM_ANY_TAG || r->tag == tag);
}

static locus_shm_req_t *match_posted(locus_shm_ep_t *ep, int src, uint64_t tag)
{
    for (locus_shm_req_t *r = ep->posted.head; r; r = r->next)
        if (tag_match(r, src, tag)) {
            list_remove(&ep->posted, r);
            return r;
        }
    return NULL;
}

static locus_status_t cma_read(pid_t pid, void *dst, uint64_t addr, size_t n, int *err)
{
    size_t done = 0;
    while (done < n) {
        struct iovec l = {(char *)dst + done, n - done};
        struct iovec rm = {(void *)(uintptr_t)(addr + done), n - done};
        ssize_t k = process_vm_readv(pid, &l, 1, &rm, 1, 0);
        if (k <= 0) {
            *err = k < 0 ? errno : EFAULT;
            return LOCUS_ERR_SYSTEM;
        }
        done += (size_t)k;
    }
    return LOCUS_OK;
}

/* Bytes per ns of one transfer, folded into a recent average. */
static void rate_note(double *rate, size_t n, uint64_t ns)
{
    double x = (double)n / (double)(ns ? ns : 1);
    *rate = *rate ? 0.75 * *rate + 0.25 * x : x;
}

/* Auto (shm_internal.h): CMA for this private-buffer rendezvous? */
static bool auto_picks_cma(locus_shm_ep_t *ep)
{
    uint32_t k = ep->pulls_started++;
    if (!ep->rate_cma)
        return true;
    if (!ep->rate_pipe)
        return false;
    bool cma = ep->rate_cma >= ep->rate_pipe;
    return k % SHM_CMA_EXPLORE == 0 ? !cma : cma;
}

/* ---------- split copy (shm_internal.h) ---------- */

/* Pieces of an n-byte split message and their size: both sides compute it. */
static uint32_t split_pieces(uint64_t n, uint64_t *piece)
{
    uint64_t k = n / SHM_SPLIT_PIECE;
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
                          uint64_t n, uint64_t piece, bool sender, int dir)
{
    uint32_t k, did = 0;
    while ((k = split_claim(&p->split_claim, job, sender)) != UINT32_MAX) {
        uint64_t off = (uint64_t)k * piece;
        shm_copy(dst + off, src + off, n - off < piece ? n - off : piece, dir);
        if (sender)
            __atomic_fetch_add(&p->split_done, 1, __ATOMIC_RELEASE);
        did++;
    }
    return did;
}

/* Receiver: offer the sender a share of the copy, copy what it does not
 * take, wait for the pieces it took. */
static locus_status_t split_recv(locus_shm_ep_t *ep, int src, uint64_t msgid, unsigned char *dst,
                                 uint64_t dst_off, const unsigned char *from, uint64_t n)
{
    shm_proc_t *me = &ep->procs[ep->rank];
    uint64_t piece;
    uint32_t pieces = split_pieces(n, &piece);
    uint32_t job = ++ep->split_job ? ep->split_job : ++ep->split_job; /* 0 = never offered */
    uint64_t base = __atomic_load_n(&me->split_done, __ATOMIC_RELAXED);
    __atomic_store_n(&me->split_claim, (uint64_t)job << 32 | pieces, __ATOMIC_RELEASE);
    /* If the offer cannot be posted now the sender never claims: we copy it all. */
    (void)send_ctrl_data(ep, src, MT_HELP, msgid, 0, true, dst_off, job);
    uint32_t mine = split_run(me, job, dst, from, n, piece, false, 2 | (ep->far[src] ? SHM_COPY_FAR : 0));
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
                     "rank %d (pid %d) died in the middle of a split copy", src, (int)ep->pids[src]);
            fail_all(ep);
            return lc_err(ep->fatal, "%s", ep->fatal_msg);
        }
    }
    return LOCUS_OK;
}

/* Sender: the receiver of rendezvous r offers to share its copy. */
static locus_status_t on_help(locus_shm_ep_t *ep, const shmq_hdr_t *h)
{
    uint64_t d[2], off_src, hb = ep->plan.heap_bytes;
    locus_shm_req_t *r = find_by_msgid(&ep->rndv, h->src, h->aux, false);
    if (h->len != sizeof d || !r || !in_my_heap(ep, r->buf, r->len, &off_src))
        return set_corrupt(ep, h->src, "copy offer for a heap rendezvous this process did not start");
    shmq_read(ep->cur_q, ep->cur_rx, 0, d, sizeof d, copy_near);
    if (d[0] > hb || r->len > hb - d[0] || d[1] > UINT32_MAX)
        return set_corrupt(ep, h->src, "copy offer outside the receiver's shared heap");
    unsigned char *dst = ep->base + ep->lay.heaps + (uint64_t)h->src * hb + d[0];
    uint64_t piece;
    split_pieces(r->len, &piece);
    ep->split_helped += split_run(&ep->procs[h->src], (uint32_t)d[1], dst, r->buf, r->len, piece, true,
                                  2 | (ep->far[h->src] ? SHM_COPY_FAR : 0));
    return LOCUS_OK;
}

/* A matched rendezvous: single copy if we can, else ask for fragments. */
static locus_status_t start_pull(locus_shm_ep_t *ep, locus_shm_req_t *r, int src, uint64_t tag,
                                 uint64_t msgid, const shm_rts_t *rts)
{
    r->src = src;
    r->tag = tag;
    r->msg_len = rts->len;
    r->msgid = msgid;
    size_t n = rts->len < r->len ? rts->len : r->len;
    locus_status_t fin = rts->len > r->len ? LOCUS_ERR_TRUNCATED : LOCUS_OK;
    if (rts->kind == RTS_HEAP) {
        uint64_t hb = ep->plan.heap_bytes;
        if (!hb || rts->heap_off > hb || rts->len > hb - rts->heap_off)
            return set_corrupt(ep, src, "heap offset outside the sender's shared heap");
        const unsigned char *p = ep->base + ep->lay.heaps + (uint64_t)src * hb + rts->heap_off;
        uint64_t dst_off;
        if (ep->split_min && n >= ep->split_min && n == rts->len && !ep->gone[src] &&
            in_my_heap(ep, r->buf, n, &dst_off)) {
            locus_status_t st = split_recv(ep, src, msgid, r->buf, dst_off, p, n);
            if (st)
                return st;
        } else if (n) {
            shm_copy(r->buf, p, n, 2 | (ep->far[src] ? SHM_COPY_FAR : 0));
        }
        complete(ep, r, fin);
        return send_ctrl(ep, src, MT_FIN, msgid, 0);
    }
    if (rts->kind == RTS_CMA && !ep->cma_bad[src] &&
        (ep->cma_mode == CMA_AUTO ? auto_picks_cma(ep) : ep->cma_mode != CMA_OFF)) {
        int err = EPERM;
        uint64_t t0 = lc_now_ns();
        if (ep->cma_mode != CMA_EPERM && (!n || cma_read(ep->pids[src], r->buf, rts->addr, n, &err) == LOCUS_OK)) {
            if (n)
                rate_note(&ep->rate_cma, n, lc_now_ns() - t0);
            complete(ep, r, fin);
            return send_ctrl(ep, src, MT_FIN, msgid, 0);
        }
        if (err == ESRCH)
            return shm_check_peers(ep);
        if (err != EPERM && err != EACCES) {
            complete(ep, r, LOCUS_ERR_CORRUPT);
            return send_ctrl(ep, src, MT_FIN, msgid, 1);
        }
        ep->cma_bad[src] = true;
        shm_note(ep, ep->cma_mode == CMA_EPERM
                         ? "CMA refusal simulated (LOCUS_SHM_CMA=eperm): pipelined copy through the ring used"
                         : "CMA (process_vm_readv) refused by the kernel (EPERM: ptrace restrictions): "
                           "pipelined copy through the ring used");
    }
    r->state = RS_PULL;
    r->done_bytes = 0;
    if (!ep->pulls.head)
        ep->pipe_last = lc_now_ns(); /* the pipeline starts moving bytes now */
    list_push(&ep->pulls, r);
    return send_ctrl(ep, src, MT_CTS_COPY, msgid, 0);
}

/* The payload of the eager message being handled: from its ring or box
 * cells, or from the copy taken out of a mailbox. */
static void eager_payload(locus_shm_ep_t *ep, int src, void *dst, size_t n)
{
    if (ep->cur_ref)
        shm_copy(dst, ep->cur_ref, n, 2 | (ep->far[src] ? SHM_COPY_FAR : 0));
    else if (ep->cur_mb)
        locus_copy_tiny(dst, ep->cur_mb, n);
    else
        shmq_read(ep->cur_q, ep->cur_rx, 0, dst, n, copy_for(ep, src));
}

static locus_status_t on_eager(locus_shm_ep_t *ep, const shmq_hdr_t *h)
{
    if (h->len > ep->plan.eager_bytes)
        return set_corrupt(ep, h->src, "eager length above LOCUS_SHM_EAGER");
    locus_shm_req_t *r = match_posted(ep, h->src, h->tag);
    if (r) {
        size_t n = h->len < r->len ? h->len : r->len;
        eager_payload(ep, h->src, r->buf, n);
        r->src = h->src;
        r->tag = h->tag;
        r->msg_len = h->len;
        complete(ep, r, h->len > r->len ? LOCUS_ERR_TRUNCATED : LOCUS_OK);
        return LOCUS_OK;
    }
    shm_unexp_t *u = malloc(sizeof *u + h->len);
    if (!u)
        return lc_err(LOCUS_ERR_NO_MEMORY, "unexpected message of %u B: out of memory", h->len);
    u->next = NULL;
    u->src = h->src;
    u->type = MT_EAGER;
    u->tag = h->tag;
    u->len = h->len;
    eager_payload(ep, h->src, u->data, h->len);
    if (ep->unexp_tail)
        ep->unexp_tail->next = u;
    else
        ep->unexp_head = u;
    ep->unexp_tail = u;
    return LOCUS_OK;
}

/* An eager message whose payload stays in the sender's heap (shm_internal.h). */
static locus_status_t on_ref(locus_shm_ep_t *ep, const shmq_hdr_t *h)
{
    uint64_t d[2], hb = ep->plan.heap_bytes;
    if (h->len != sizeof d || ep->cur_q == &ep->q[ep->rank])
        return set_corrupt(ep, h->src, "reference message of the wrong size or not through a fast box");
    shmq_read(ep->cur_q, ep->cur_rx, 0, d, sizeof d, copy_near);
    if (d[0] > hb || d[1] > hb - d[0] || d[1] > ep->plan.eager_bytes)
        return set_corrupt(ep, h->src, "reference outside the sender's shared heap or above LOCUS_SHM_EAGER");
    shmq_hdr_t e = *h;
    e.len = (uint32_t)d[1];
    ep->cur_ref = ep->base + ep->lay.heaps + (uint64_t)h->src * hb + d[0];
    locus_status_t st = on_eager(ep, &e);
    ep->cur_ref = NULL;
    ep->ref_taken = true;
    return st;
}

static locus_status_t on_rts(locus_shm_ep_t *ep, const shmq_hdr_t *h)
{
    shm_rts_t rts;
    if (h->len != sizeof rts)
        return set_corrupt(ep, h->src, "rendezvous descriptor of the wrong size");
    shmq_read(ep->cur_q, ep->cur_rx, 0, &rts, sizeof rts, copy_near);
    if (rts.kind < RTS_CMA || rts.kind > RTS_COPY || rts.len == 0)
        return set_corrupt(ep, h->src, "rendezvous descriptor with a bad kind or length 0");
    locus_shm_req_t *r = match_posted(ep, h->src, h->tag);
    if (r)
        return start_pull(ep, r, h->src, h->tag, rts.msgid, &rts);
    shm_unexp_t *u = malloc(sizeof *u);
    if (!u)
        return lc_err(LOCUS_ERR_NO_MEMORY, "unexpected rendezvous: out of memory");
    u->next = NULL;
    u->src = h->src;
    u->type = MT_RTS;
    u->tag = h->tag;
    u->msgid = rts.msgid;
    u->len = rts.len;
    u->rts = rts;
    if (ep->unexp_tail)
        ep->unexp_tail->next = u;
    else
        ep->unexp_head = u;
    ep->unexp_tail = u;
    return LOCUS_OK;
}

static locus_status_t on_frag(locus_shm_ep_t *ep, const shmq_hdr_t *h)
{
    locus_shm_req_t *r = find_by_msgid(&ep->pulls, h->src, h->aux, true);
    uint64_t off = h->tag;
    if (!r || off != r->done_bytes || h->len == 0 || h->len > r->msg_len - off)
        return set_corrupt(ep, h->src, "fragment outside the message it claims to belong to");
    if (off < r->len) {
        size_t n = r->len - off < h->len ? r->len - off : h->len;
        shmq_read(&ep->q[ep->rank], &ep->rx, 0, (unsigned char *)r->buf + off, n, copy_for(ep, h->src));
    }
    r->done_bytes += h->len;
    /* Throughput, not one message's latency: several pulls may be in flight. */
    uint64_t now = lc_now_ns();
    rate_note(&ep->rate_pipe, h->len, now - ep->pipe_last);
    ep->pipe_last = now;
    if (r->done_bytes == r->msg_len) {
        list_remove(&ep->pulls, r);
        complete(ep, r, r->msg_len > r->len ? LOCUS_ERR_TRUNCATED : LOCUS_OK);
    }
    return LOCUS_OK;
}

static locus_status_t on_message(locus_shm_ep_t *ep, const shmq_hdr_t *h)
{
    locus_shm_req_t *r;
    switch (h->type) {
    case MT_EAGER: return on_eager(ep, h);
    case MT_RTS: return on_rts(ep, h);
    case MT_FRAG: return on_frag(ep, h);
    case MT_HELP: return on_help(ep, h);
    case MT_REF: return on_ref(ep, h);
    case MT_FIN:
    case MT_CTS_COPY:
        if (!(r = find_by_msgid(&ep->rndv, h->src, h->aux, false)))
            return set_corrupt(ep, h->src, "reply to a rendezvous this process did not start");
        list_remove(&ep->rndv, r);
        if (h->type == MT_FIN) {
            complete(ep, r, h->flags ? LOCUS_ERR_CORRUPT : LOCUS_OK);
        } else {
            r->state = RS_FRAGS;
            r->done_bytes = 0;
            submit(ep, r);
        }
        return LOCUS_OK;
    case MT_FBOX: {
        uint32_t i = (uint32_t)h->aux;
        if (h->aux >= ep->plan.fboxes || ep->fbrx_of[h->src] >= 0 || ep->nfbrx >= (int)ep->plan.fboxes ||
            h->aux >= __atomic_load_n(&ep->procs[ep->rank].fbox_used, __ATOMIC_ACQUIRE))
            return set_corrupt(ep, h->src, "fast box announcement out of range or repeated");
        for (int k = 0; k < ep->nfbrx; k++)
            if (ep->fbrx[k].q.cells == fbox_mem(ep, ep->rank, i) + SHMQ_CTL_BYTES)
                return set_corrupt(ep, h->src, "fast box announced by two senders");
        shm_fbrx_t *b = &ep->fbrx[ep->nfbrx];
        fbox_view(ep, &b->q, ep->rank, i);
        b->rx = (shmq_rx_t){0, 0};
        b->src = h->src;
        ep->fbrx_of[h->src] = (int16_t)ep->nfbrx++;
        return LOCUS_OK;
    }
    default: return set_corrupt(ep, h->src, "unknown message type");
    }
}

/* ---------- mailboxes (see shm_internal.h) ---------- */

static inline bool mailbox_full(const shm_fbrx_t *b)
{
    return __atomic_load_n(&shm_mailbox(&b->q)->seq, __ATOMIC_ACQUIRE) == (((b->mb_read + 1) << 1) | 1);
}

/* Read a full mailbox's header, one read of each field (the peer cannot
 * change them under our checks); false if it is not a one-cell eager
 * message from the box's sender. */
static inline bool mailbox_header(const shm_fbrx_t *b, shmq_hdr_t *h)
{
    const shmq_hdr_t *c = shm_mailbox(&b->q);
    h->len = __atomic_load_n(&c->len, __ATOMIC_RELAXED);
    h->src = __atomic_load_n(&c->src, __ATOMIC_RELAXED);
    h->type = __atomic_load_n(&c->type, __ATOMIC_RELAXED);
    h->tag = __atomic_load_n(&c->tag, __ATOMIC_RELAXED);
    h->aux = __atomic_load_n(&c->aux, __ATOMIC_RELAXED);
    h->flags = 0;
    return h->src == b->src && h->type == MT_EAGER && h->len <= SHMQ_CELL - SHMQ_HDR;
}

static inline void mailbox_taken(locus_shm_ep_t *ep, shm_fbrx_t *b)
{
    b->mb_read++;
    b->mb_unfreed = true;
    ep->mb_msgs++;
}

/* Give back every mailbox read since the last call (we are idle: nothing of
 * ours is waiting behind this store). */
static void mailbox_free_all(locus_shm_ep_t *ep)
{
    for (int k = 0; k < ep->nfbrx; k++) {
        shm_fbrx_t *b = &ep->fbrx[k];
        if (b->mb_unfreed) {
            b->mb_unfreed = false;
            __atomic_store_n(&shm_mailbox(&b->q)->seq, b->mb_read << 1, __ATOMIC_RELEASE);
        }
    }
}

/* General path: the mailbox message of box b if it is its sender's next
 * one. 1 = handled, 0 = none or not its turn yet. */
static int mailbox_drain(locus_shm_ep_t *ep, shm_fbrx_t *b)
{
    shmq_hdr_t h;
    if (!mailbox_full(b))
        return 0;
    if (!mailbox_header(b, &h)) {
        set_corrupt(ep, b->src, "mailbox message not a one-cell eager message from its sender");
        return 0;
    }
    if (h.aux != ep->rxseq[h.src]) {
        if (h.aux < ep->rxseq[h.src])
            set_corrupt(ep, h.src, "mailbox message out of its sender's order");
        return 0;
    }
    unsigned char data[SHMQ_CELL - SHMQ_HDR];
    locus_copy_tiny(data, shm_mailbox(&b->q) + 1, h.len);
    mailbox_taken(ep, b);
    ep->rxseq[h.src]++;
    ep->cur_mb = data;
    on_message(ep, &h);
    ep->cur_mb = NULL;
    return 1;
}

/* Handle up to 64 messages of one ring or box (owner: the box's sender, -1
 * for my ring). */
static int drain(locus_shm_ep_t *ep, shmq_t *q, shmq_rx_t *rx, int owner);

/* A matchable message numbered k from src reached us through the ring while
 * we expect an earlier one: the ones in between are in src's box (posted
 * before it, so visible now). */
static bool catch_up(locus_shm_ep_t *ep, int src, uint64_t k)
{
    int b = ep->fbrx_of[src];
    if (b < 0 || k < ep->rxseq[src])
        return false;
    while (ep->rxseq[src] < k) {
        if (!drain(ep, &ep->fbrx[b].q, &ep->fbrx[b].rx, src) || ep->fatal)
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

/* A reference's payload (shm_internal.h) is one dependent load away from its
 * cell: start fetching it from the sender's heap as soon as the cell is read,
 * and the next message's too when that is a published reference, so the
 * transfers overlap matching and copies as an eager payload's do. Only lines
 * inside the sender's heap; at most 2 KiB (the hardware prefetcher follows). */
static inline void prefetch_ref(const locus_shm_ep_t *ep, const shmq_hdr_t *c, int src)
{
    const uint64_t *d = (const uint64_t *)(c + 1);
    uint64_t off = d[0], len = d[1], hb = ep->plan.heap_bytes;
    if ((unsigned)src >= (unsigned)ep->size || off > hb || len > hb - off)
        return;
    const unsigned char *p = ep->base + ep->lay.heaps + (uint64_t)src * hb + off;
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

static int drain(locus_shm_ep_t *ep, shmq_t *q, shmq_rx_t *rx, int owner)
{
    int n = 0;
    shm_fbrx_t *box = owner >= 0 ? &ep->fbrx[ep->fbrx_of[owner]] : NULL;
    for (; n < 64; n++) {
        if (box && mailbox_drain(ep, box))
            continue;
        if (ep->fatal)
            return n;
        bool corrupt;
        const shmq_hdr_t *c = shmq_peek(q, rx, &corrupt);
        if (!c)
            break;
        shmq_hdr_t h = *c; /* one read: the peer cannot change it under our checks */
        if (h.len > SHMQ_CELL - SHMQ_HDR && h.len <= q->max_len) {
            prefetch_payload(q, rx, h.len);
            prefetch_next(q, rx, h.len);
        } else if (h.type == MT_REF && owner >= 0) {
            prefetch_refs(ep, q, rx, c, owner);
        }
        if (corrupt || h.len > q->max_len || h.src >= ep->size || h.src == ep->rank ||
            (owner >= 0 && (h.src != owner || (h.type != MT_EAGER && h.type != MT_RTS && h.type != MT_REF)))) {
            /* A box is written by its owner only: blame it, not the forged src. */
            set_corrupt(ep, owner >= 0 ? owner : h.src,
                        owner >= 0 ? "fast box header out of range or not from its sender"
                                   : "header length or source out of range");
            return n;
        }
        if (h.type == MT_EAGER || h.type == MT_RTS || h.type == MT_REF) {
            /* Pair order across ring and box. */
            if (__builtin_expect(h.aux != ep->rxseq[h.src], 0)) {
                if (owner >= 0 && h.aux > ep->rxseq[h.src])
                    break; /* earlier ones are still in the ring */
                if (owner >= 0 || !catch_up(ep, h.src, h.aux)) {
                    if (!ep->fatal)
                        set_corrupt(ep, h.src, "message out of its sender's order");
                    return n;
                }
            }
            ep->rxseq[h.src]++;
        }
        ep->cur_q = q;
        ep->cur_rx = rx;
        locus_status_t st = on_message(ep, &h);
        if (ep->fatal)
            return n;
        (void)st;
        shmq_consume(q, rx, h.len);
    }
    if (!n) {
        shmq_publish_head(q, rx);
        if (box && box->mb_unfreed)
            mailbox_free_all(ep);
    } else if (ep->ref_taken) {
        ep->ref_taken = false;
        shmq_publish_head(q, rx); /* completes the sends by reference */
    }
    return n;
}

static int progress_rx(locus_shm_ep_t *ep)
{
    int n = 0;
    /* Fast boxes first: they carry the small messages of frequent peers. */
    for (int k = 0; k < ep->nfbrx; k++) {
        n += drain(ep, &ep->fbrx[k].q, &ep->fbrx[k].rx, ep->fbrx[k].src);
        if (ep->fatal)
            return n;
    }
    return n + drain(ep, &ep->q[ep->rank], &ep->rx, -1);
}

/* ---------- public API ---------- */

/* Bookkeeping after a progress attempt that did `did` things: yield when
 * oversubscribed and idle, and check the peers' liveness. Liveness: a clock
 * read every 1024 calls (and after each yield, since yields can be slow), a
 * poll() of the pidfds every millisecond. */
static void idle_tick(locus_shm_ep_t *ep, int did)
{
    bool check = (++ep->idle_spins & 1023) == 0;
    /* Spinning only pays when every process has a CPU: when oversubscribed,
     * give the CPU to the peer we are waiting for. */
    if (did)
        ep->idle_run = 0;
    else if (++ep->idle_run >= ep->yield_after) {
        ep->idle_run = 0;
        sched_yield();
        check = true;
    }
    if (check && !ep->fatal) {
        uint64_t now = lc_now_ns();
        if (now >= ep->next_live_ns) {
            ep->next_live_ns = now + 1000000;
            if (shm_check_peers(ep) != LOCUS_OK)
                fail_all(ep);
        }
    }
}

locus_status_t locus_shm_progress(locus_shm_ep_t *ep)
{
    if (!ep)
        return lc_err(LOCUS_ERR_INVALID, "endpoint NULL: expected one from locus_shm_init");
    if (ep->fatal)
        return fatal_err(ep);
    int did = progress_rx(ep);
    if (!ep->fatal && ep->nactive)
        did += progress_tx(ep);
    if (!ep->fatal && ep->refs.head)
        did += refs_check(ep, -1);
    idle_tick(ep, did);
    return ep->fatal ? fatal_err(ep) : LOCUS_OK;
}

static locus_status_t check_peer_arg(const locus_shm_ep_t *ep, int peer, bool any_ok, const char *what)
{
    if (!ep)
        return lc_err(LOCUS_ERR_INVALID, "endpoint NULL: expected one from locus_shm_init");
    if ((peer < 0 || peer >= ep->size) && !(any_ok && peer == LOCUS_SHM_ANY_SOURCE))
        return lc_err(LOCUS_ERR_INVALID, "%s %d: expected 0..%d%s", what, peer, ep->size - 1,
                         any_ok ? " or LOCUS_SHM_ANY_SOURCE" : "");
    return LOCUS_OK;
}

/* Post r by reference (shm_internal.h) if its buffer is in my heap and its
 * destination's box is open with room; false = send it the usual way. */
static bool send_ref(locus_shm_ep_t *ep, locus_shm_req_t *r)
{
    shm_fbtx_t *f = &ep->fbtx[r->peer];
    uint64_t d[2] = {0, r->len}, pos;
    if (f->state != FB_OPEN || !in_my_heap(ep, r->buf, r->len, &d[0]) ||
        !shmq_claim_sp(&f->q, &f->tail, &f->cached_head, sizeof d, &pos))
        return false;
    shmq_hdr_t h = {.src = (uint16_t)ep->rank, .type = MT_REF, .len = sizeof d, .tag = r->tag, .aux = f->seq++};
    shmq_post(&f->q, pos, &h, d, copy_near);
    r->state = RS_WAIT_REF;
    r->msgid = f->tail;
    list_push(&ep->refs, r);
    ep->ref_sent++;
    return true;
}

static locus_status_t isend(locus_shm_ep_t *ep, int dst, uint64_t tag, const void *buf, size_t len,
                            locus_shm_req_t **req, bool by_ref)
{
    locus_status_t st = check_peer_arg(ep, dst, false, "destination rank");
    if (st)
        return st;
    if (!req || (!buf && len))
        return lc_err(LOCUS_ERR_INVALID, "isend: %s is NULL", req ? "buffer" : "request pointer");
    if (tag == LOCUS_SHM_ANY_TAG)
        return lc_err(LOCUS_ERR_INVALID, "tag UINT64_MAX is LOCUS_SHM_ANY_TAG: expected a tag below it");
    if (ep->fatal)
        return fatal_err(ep);
    if (ep->gone[dst] || dst == ep->rank)
        return lc_err(dst == ep->rank ? LOCUS_ERR_INVALID : LOCUS_ERR_PEER_FAILED,
                         "destination rank %d: %s", dst,
                         dst == ep->rank ? "is this process (self sends are not supported)"
                                         : "it finalized and left");
    locus_shm_req_t *r = req_new(ep, RQ_SEND);
    if (!r)
        return lc_err(LOCUS_ERR_NO_MEMORY, "isend: out of memory for a request");
    r->peer = dst;
    r->tag = tag;
    r->buf = (void *)buf;
    r->len = len;
    r->proto = len <= ep->plan.eager_bytes ? MT_EAGER : MT_RTS;
    *req = r;
    if (by_ref && len >= ep->ref_min && ep->ref_min && r->proto == MT_EAGER && !ep->sendq[dst].head &&
        send_ref(ep, r))
        return LOCUS_OK;
    if (r->proto == MT_EAGER && !ep->sendq[dst].head) {
        /* Eager with nothing queued ahead: straight into the box or ring. */
        shmq_hdr_t h = {.src = (uint16_t)ep->rank, .type = MT_EAGER, .len = (uint32_t)len, .tag = tag};
        if (send_matchable(ep, dst, &h, buf, copy_for(ep, dst))) {
            r->state = RS_DONE;
            return LOCUS_OK;
        }
    }
    if (r->proto == MT_RTS)
        r->msgid = ++ep->next_msgid;
    submit(ep, r);
    *req = r;
    return LOCUS_OK;
}

locus_status_t locus_shm_isend(locus_shm_ep_t *ep, int dst, uint64_t tag, const void *buf,
                               size_t len, locus_shm_req_t **req)
{
    return isend(ep, dst, tag, buf, len, req, true);
}

locus_status_t locus_shm_irecv(locus_shm_ep_t *ep, int src, uint64_t tag, void *buf,
                               size_t capacity, locus_shm_req_t **req)
{
    locus_status_t st = check_peer_arg(ep, src, true, "source rank");
    if (st)
        return st;
    if (!req || (!buf && capacity))
        return lc_err(LOCUS_ERR_INVALID, "irecv: %s is NULL", req ? "buffer" : "request pointer");
    if (ep->fatal)
        return fatal_err(ep);
    locus_shm_req_t *r = req_new(ep, RQ_RECV);
    if (!r)
        return lc_err(LOCUS_ERR_NO_MEMORY, "irecv: out of memory for a request");
    r->peer = src;
    r->tag = tag;
    r->buf = buf;
    r->len = capacity;
    *req = r;
    shm_unexp_t *prev = NULL;
    for (shm_unexp_t *u = ep->unexp_head; u; prev = u, u = u->next) {
        if (!tag_match(r, u->src, u->tag))
            continue;
        if (prev)
            prev->next = u->next;
        else
            ep->unexp_head = u->next;
        if (ep->unexp_tail == u)
            ep->unexp_tail = prev;
        if (u->type == MT_EAGER) {
            size_t n = u->len < capacity ? u->len : capacity;
            if (n)
                memcpy(buf, u->data, n);
            r->src = u->src;
            r->tag = u->tag;
            r->msg_len = u->len;
            complete(ep, r, u->len > capacity ? LOCUS_ERR_TRUNCATED : LOCUS_OK);
            st = LOCUS_OK;
        } else {
            st = start_pull(ep, r, u->src, u->tag, u->msgid, &u->rts);
        }
        free(u);
        return ep->fatal ? LOCUS_OK : st; /* a fatal error shows on the request */
    }
    if (src != LOCUS_SHM_ANY_SOURCE && ep->gone[src]) {
        complete(ep, r, LOCUS_ERR_PEER_FAILED); /* it left; nothing more will come */
        return LOCUS_OK;
    }
    r->state = RS_POSTED;
    list_push(&ep->posted, r);
    return LOCUS_OK;
}

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
    req_free(ep, req);
    if (st == LOCUS_ERR_PEER_FAILED || st == LOCUS_ERR_CORRUPT)
        return ep->fatal ? fatal_err(ep)
                         : lc_err(st, "rank %d finalized and left before the operation completed",
                                     peer);
    if (st == LOCUS_ERR_TRUNCATED)
        return lc_err(st, "message of %zu B from rank %d truncated to the %zu B buffer",
                         msg_len, src, cap);
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

/* ---------- blocking fast paths ----------
 * A blocking send or receive of an eager message while nothing else is pending
 * skips requests, lists and matching: the send posts straight into the box or
 * ring, the receive copies straight out of the cell at the head. Anything
 * unusual (a queue behind, a posted or unexpected receive, another message at
 * the head, truncation, an error) goes the general way, which stays the
 * reference: the fast path only takes what the general path would do the same. */

static inline bool send_fast_ok(const locus_shm_ep_t *ep, int dst, uint64_t tag, const void *buf,
                                size_t len)
{
    return ep && (unsigned)dst < (unsigned)ep->size && dst != ep->rank && !ep->fatal && !ep->gone[dst] &&
           tag != LOCUS_SHM_ANY_TAG && (buf || !len) && len <= ep->plan.eager_bytes &&
           !ep->sendq[dst].head;
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
        h.aux != ep->rxseq[h.src])
        return -1;
    shmq_read(q, rx, 0, buf, h.len, copy_for(ep, h.src));
    ep->rxseq[h.src]++;
    shmq_consume(q, rx, h.len);
    if (info)
        *info = (locus_shm_info_t){.source = h.src, .tag = h.tag, .len = h.len, .status = LOCUS_OK};
    return 1;
}

/* The mailbox of box b, as take_head() does for a ring. */
static inline __attribute__((always_inline)) int take_mailbox(locus_shm_ep_t *ep, shm_fbrx_t *b, uint64_t tag,
                                                              void *buf, size_t cap, locus_shm_info_t *info)
{
    shmq_hdr_t h;
    if (!mailbox_full(b))
        return 0;
    if (!mailbox_header(b, &h) || h.len > cap || (tag != LOCUS_SHM_ANY_TAG && h.tag != tag) ||
        h.aux != ep->rxseq[h.src])
        return -1;
    locus_copy_tiny(buf, shm_mailbox(&b->q) + 1, h.len);
    mailbox_taken(ep, b);
    ep->rxseq[h.src]++;
    if (info)
        *info = (locus_shm_info_t){.source = h.src, .tag = h.tag, .len = h.len, .status = LOCUS_OK};
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
        int b = ep->fbrx_of[src];
        int k = b < 0 ? 0 : take_box(ep, &ep->fbrx[b], tag, buf, cap, info);
        if (k)
            return k;
    } else {
        for (int b = 0; b < ep->nfbrx; b++) {
            int k = take_box(ep, &ep->fbrx[b], tag, buf, cap, info);
            if (k)
                return k;
        }
    }
    return take_head(ep, &ep->q[ep->rank], &ep->rx, -1, src, tag, buf, cap, info);
}

/* Nothing to read: give the senders back every consumed cell (a sender that
 * sees a full box or ring waits for exactly this, as with drain()). */
static void publish_idle(locus_shm_ep_t *ep, int src)
{
    for (int b = 0; b < ep->nfbrx; b++)
        if (src == LOCUS_SHM_ANY_SOURCE || ep->fbrx[b].src == src)
            shmq_publish_head(&ep->fbrx[b].q, &ep->fbrx[b].rx);
    shmq_publish_head(&ep->q[ep->rank], &ep->rx);
    mailbox_free_all(ep);
}

/* 1 = received, -1 = take the general path. The wait polls only the lines
 * a message from src can appear on (its mailbox, its box's head cell, my
 * ring's head cell),
 * so the message is seen within a few cycles of its arrival; the bookkeeping
 * (head publication, liveness, yielding) runs every 64 polls. */
static int recv_fast(locus_shm_ep_t *ep, int src, uint64_t tag, void *buf, size_t cap,
                     locus_shm_info_t *info)
{
    if (!ep || ((src < 0 || src >= ep->size || src == ep->rank) && src != LOCUS_SHM_ANY_SOURCE) ||
        (!buf && cap))
        return -1;
    for (;;) {
        if (ep->fatal || ep->unexp_head || ep->posted.head || ep->nactive || ep->pulls.head ||
            (src != LOCUS_SHM_ANY_SOURCE && ep->gone[src]))
            return -1;
        int k = recv_direct(ep, src, tag, buf, cap, info);
        if (k)
            return k;
        publish_idle(ep, src);
        idle_tick(ep, 0);
        int b = src == LOCUS_SHM_ANY_SOURCE ? -1 : ep->fbrx_of[src];
        if (b < 0 && src == LOCUS_SHM_ANY_SOURCE && ep->nfbrx)
            continue; /* several boxes to watch: the full look each time */
        const shm_fbrx_t *fb = b >= 0 ? &ep->fbrx[b] : NULL;
        for (int i = 0; i < 64; i++)
            if ((fb && (mailbox_full(fb) || shmq_ready(&fb->q, &fb->rx))) ||
                shmq_ready(&ep->q[ep->rank], &ep->rx))
                break;
            else
                __builtin_ia32_pause();
    }
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
    shm_fbtx_t *f = &ep->fbtx[d];
    if (f->state != FB_OPEN || len > SHMQ_CELL - SHMQ_HDR)
        return false;
    if (f->mb_skip && f->mb_epoch == ep->recv_epoch) {
        f->mb_skip--;
        return false;
    }
    if (mailbox_send(f, ep->rank, tag, buf, len))
        return true;
    f->mb_skip = SHM_MBOX_BACKOFF;
    f->mb_epoch = ep->recv_epoch;
    return false;
}

/* The general blocking paths (a request), out of line so that the fast
 * paths keep a small frame. */
static __attribute__((noinline)) locus_status_t send_slow(locus_shm_ep_t *ep, int dst, uint64_t tag,
                                                          const void *buf, size_t len)
{
    locus_shm_req_t *r;
    /* A blocking send completes on its own (eager): never by reference. */
    locus_status_t st = isend(ep, dst, tag, buf, len, &r, false);
    return st ? st : locus_shm_wait(ep, r, NULL);
}

static __attribute__((noinline)) locus_status_t recv_slow(locus_shm_ep_t *ep, int src, uint64_t tag,
                                                          void *buf, size_t capacity,
                                                          locus_shm_info_t *info)
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
        if (send_matchable(ep, dst, &h, buf, copy_for(ep, dst)))
            return LOCUS_OK;
    }
    return send_slow(ep, dst, tag, buf, len);
}

locus_status_t locus_shm_recv(locus_shm_ep_t *ep, int src, uint64_t tag, void *buf,
                              size_t capacity, locus_shm_info_t *info)
{
    if (recv_fast(ep, src, tag, buf, capacity, info) > 0) {
        ep->recv_epoch++;
        return LOCUS_OK;
    }
    locus_status_t st = recv_slow(ep, src, tag, buf, capacity, info);
    if (ep)
        ep->recv_epoch++;
    return st;
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
            if (ep->gone[r] && __atomic_load_n(&ep->procs[r].barrier, __ATOMIC_ACQUIRE) < g)
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
    for (int k = 0; k < ep->nfbrx; k++)
        shmq_publish_head(&ep->fbrx[k].q, &ep->fbrx[k].rx);
    shmq_publish_head(&ep->q[ep->rank], &ep->rx);
}
