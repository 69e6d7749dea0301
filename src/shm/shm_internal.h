/* shm internals: requests, the endpoint (its fields grouped by the feature
 * that owns them) and the functions the role files offer each other. The
 * file of each role (docs/ARCHITECTURE.md, shm):
 *
 *   job.c                who am I: job name, local rank and size (boot)
 *   seg.h/seg.c, plan.c  the segment: layout, bootstrap, peer liveness
 *   queue.h/queue.c      the multi-producer ring of 64-byte cells
 *   msg.h, copy.c        message types, the received message, the copy shim
 *   init.c               endpoint lifetime, accessors, locus_shm_stats
 *   pool.c               the shared heap allocator (locus_shm_alloc)
 *   req.c                requests (complete, fail), test/wait, failure
 *   send.c               posting sends: isend, the per-destination queue
 *   recv.c               receive path: drain, dispatch, matching, irecv
 *   progress.c           locus_shm_progress, idle/liveness, barrier
 *   rndv.c               rendezvous: heap copy, CMA, auto CMA-or-pipeline
 *   frag.c               the pipelined copy (fragments through the ring)
 *   split.c              split copy of heap-to-heap rendezvous
 *   ref.h/ref.c          sends by reference
 *   fbox.h/fbox.c        fast boxes and mailboxes
 *   fast.c               blocking send/recv fast paths
 */
#ifndef LOCUS_SHM_INTERNAL_H
#define LOCUS_SHM_INTERNAL_H

#include <locus/boot.h>
#include <locus/shm.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "core/clock.h"
#include "core/error.h"
#include "core/notes.h"
#include "shm/fbox.h"
#include "shm/msg.h"
#include "shm/queue.h"
#include "shm/seg.h"

/* ---------- requests ---------- */

enum { RQ_SEND = 1, RQ_RECV = 2, RQ_CTRL = 3 };
enum { RS_QUEUED = 0, RS_WAIT_FIN, RS_FRAGS, RS_PULL, RS_POSTED, RS_WAIT_REF, RS_DONE };

struct locus_shm_req {
    uint8_t kind, state, proto, ctrl_type; /* RQ_*, RS_*, MT_EAGER/MT_RTS (control: flags), MT_* */
    locus_status_t status;
    int peer;             /* destination / wanted source (may be ANY) */
    uint64_t tag;
    void *buf;
    size_t len;           /* send length / receive capacity / control payload bytes */
    size_t msg_len;       /* receive: the message's length */
    size_t done_bytes;    /* fragments sent / received */
    int src;              /* receive: actual source */
    uint64_t msgid;       /* rendezvous id (sender's); by reference: box position after it */
    uint64_t ctrl_aux;
    uint64_t ctrl_data[2]; /* control payload (MT_HELP; len = its bytes) */
    struct locus_shm_req *next, *prev;
};

typedef struct shm_list { locus_shm_req_t *head, *tail; } shm_list_t;

/* A message that arrived before its receive (eager: with its payload). */
typedef struct shm_unexp {
    struct shm_unexp *next;
    int src;
    uint8_t type;
    uint64_t tag, msgid;
    size_t len;
    shm_rts_t rts;
    unsigned char data[]; /* eager payload */
} shm_unexp_t;

typedef struct shm_heap_blk { uint64_t off, size; bool used; } shm_heap_blk_t;

enum { CMA_AUTO = 0, CMA_OFF = 1, CMA_EPERM = 2, CMA_ON = 3 }; /* LOCUS_SHM_CMA */
#define SHM_CMA_EXPLORE 256u /* auto tries the slower way again every this many (rndv.c) */

/* ---------- the endpoint ---------- */

struct locus_shm_ep {
    /* The segment and this process's place in it (init.c, seg.c). */
    int rank, size;
    char name[96];          /* /dev/shm name (unlinked once everybody attached) */
    unsigned char *base;    /* the mapping */
    uint64_t map_bytes;
    locus_shm_plan_t plan;
    shm_layout_t lay;
    shm_seg_hdr_t *hdr;
    shm_proc_t *procs;      /* one line per process */
    unsigned char *my_heap; /* my shared heap (pool.c) */
    locus_boot_t *boot_owned; /* joined by init (opts.boot NULL, job.c): left at finalize */

    /* Rings (queue.h): every process's ring; mine is read through rx; per
     * destination, my cached copy of its published head. */
    shmq_t *q;
    shmq_rx_t rx;
    uint64_t *cached_head;

    /* Failure (req.c): once set, every pending and later operation fails. */
    locus_status_t fatal;   /* PEER_FAILED / CORRUPT once broken */
    char fatal_msg[256];
    lc_notes_t notes;       /* fallbacks taken (locus_shm_notes) */

    /* Peers, per rank (seg.c): liveness and placement. */
    struct {
        pid_t *pid;
        struct pollfd *pfd; /* pidfds, readable once the peer exited (-1 when unavailable) */
        bool *gone;         /* exited after finalize: what is aimed at it fails */
        bool *far;          /* on another L3: copies with it get non-temporal hints */
    } peer;

    /* Progress bookkeeping (progress.c): yield when oversubscribed, check liveness. */
    struct {
        uint32_t spins;         /* progress calls (the clock is read every 1024) */
        uint32_t run;           /* consecutive idle progress calls */
        uint32_t yield_after;   /* ... before a sched_yield (UINT32_MAX: never) */
        uint64_t next_check_ns; /* next poll of the peers' pidfds */
    } idle;

    /* Requests (req.c): released ones, reused. */
    locus_shm_req_t *free_reqs;
    /* Requests come in chunks, all freed at finalize: a request the caller
     * never tested (a receive still posted, a send never waited for) is not
     * leaked. */
    struct { void **chunk; size_t n, cap; } reqmem;

    /* Sending (send.c). */
    struct {
        shm_list_t *queue;   /* per destination: sends not posted yet (its ring or box was full), FIFO */
        int nactive;         /* destinations with a non-empty queue */
        shm_list_t rndv;     /* posted rendezvous waiting for FIN or CTS_COPY (rndv.c) */
        uint64_t next_msgid; /* rendezvous ids */
    } send;

    /* Matching (recv.c). */
    struct {
        shm_list_t posted;   /* receives waiting for a message, in post order */
        shm_unexp_t *unexp_head, *unexp_tail; /* messages that came first, in arrival order */
        uint64_t *rxseq;     /* per source: matchable messages handled (pair order, fbox.h) */
    } match;

    /* Fast boxes and mailboxes (fbox.h: fbox.c, fast.c). */
    struct {
        shm_fbtx_t *tx;      /* per destination: my box in its pool */
        shm_fbrx_t *rx;      /* boxes of my pool that I poll (n of plan.fboxes) */
        int n;
        int16_t *rx_of;      /* per source: its index in rx, or -1 */
        uint32_t recv_epoch; /* blocking receives completed (ends a mailbox backoff) */
    } fbox;

    /* Private-buffer rendezvous: CMA and the auto choice (rndv.c). */
    struct {
        int mode;            /* CMA_* (LOCUS_SHM_CMA) */
        bool *refused;       /* per source: the kernel refused (the pipeline from then on) */
        double rate_cma, rate_pipe; /* auto: bytes/ns lately of each way (0 = not measured yet) */
        uint32_t decided;    /* rendezvous auto decided (every SHM_CMA_EXPLORE-th explores) */
    } cma;

    /* The pipelined copy (frag.c). */
    struct {
        shm_list_t pulls;    /* receives being filled by fragments */
        uint64_t last_ns;    /* when the last fragment came (or the pipeline started): its rate */
    } frag;

    /* Split copy (split.c). */
    struct {
        uint64_t min;        /* LOCUS_SHM_SPLIT: smallest heap-to-heap message both copy; 0 = never */
        uint64_t piece;      /* LOCUS_SHM_SPLIT_PIECE: target piece (receiver's side decides) */
        uint32_t job;        /* the last job number offered (0 = none yet) */
    } split;

    /* Sends by reference (ref.c). */
    struct {
        uint64_t min;        /* LOCUS_SHM_REF: smallest heap isend posted by reference; 0 = never */
        shm_list_t pending;  /* posted, waiting for their box head to pass them (send order) */
        bool taken;          /* the drain consumed a reference: publish the head after it */
    } ref;

    /* The shared heap's blocks (pool.c): first fit over a private table. */
    struct {
        shm_heap_blk_t *blks;
        int n, cap;
    } pool;

    /* Counters (locus_shm_stats): plain increments by the owning thread. */
    locus_shm_stats_t stats;
};

/* ---------- small helpers every role uses ---------- */

static inline void shm_list_push(shm_list_t *l, locus_shm_req_t *r)
{
    r->next = NULL;
    r->prev = l->tail;
    if (l->tail)
        l->tail->next = r;
    else
        l->head = r;
    l->tail = r;
}

static inline void shm_list_remove(shm_list_t *l, locus_shm_req_t *r)
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

/* Refill the free list with a new chunk of requests (init.c); false: no memory. */
bool shm_req_grow(locus_shm_ep_t *ep);

static inline locus_shm_req_t *shm_req_new(locus_shm_ep_t *ep, int kind)
{
    if (!ep->free_reqs && !shm_req_grow(ep))
        return NULL;
    locus_shm_req_t *r = ep->free_reqs;
    ep->free_reqs = r->next;
    memset(r, 0, sizeof *r);
    r->kind = (uint8_t)kind;
    return r;
}

static inline void shm_req_free(locus_shm_ep_t *ep, locus_shm_req_t *r)
{
    r->next = ep->free_reqs;
    ep->free_reqs = r;
}

/* A request is done with status st (unless it already failed); control
 * requests nobody waits for are released. */
static inline void shm_req_complete(locus_shm_ep_t *ep, locus_shm_req_t *r, locus_status_t st)
{
    if (r->kind == RQ_CTRL) {
        shm_req_free(ep, r);
        return;
    }
    r->state = RS_DONE;
    if (r->status == LOCUS_OK)
        r->status = st;
}

/* The queue copy for traffic with `peer`, by whether it shares our L3. */
static inline shmq_copy_fn shm_copy_for(const locus_shm_ep_t *ep, int peer)
{
    return ep->peer.far[peer] ? shm_copy_far : shm_copy_near;
}

/* Is [buf, buf + len) in my shared heap? *off = its offset there. */
static inline bool shm_in_my_heap(const locus_shm_ep_t *ep, const void *buf, size_t len, uint64_t *off)
{
    uint64_t hb = ep->plan.heap_bytes;
    const unsigned char *p = (const unsigned char *)buf;
    if (!hb || p < ep->my_heap || p >= ep->my_heap + hb)
        return false;
    *off = (uint64_t)(p - ep->my_heap);
    return len <= hb - *off;
}

/* Byte `off` of process r's shared heap (the caller checked the bounds). */
static inline unsigned char *shm_heap_of(const locus_shm_ep_t *ep, int r, uint64_t off)
{
    return ep->base + ep->lay.heaps + (uint64_t)r * ep->plan.heap_bytes + off;
}

/* A peer argument of the API: 0..size-1 (or ANY_SOURCE when any_ok). */
static inline locus_status_t shm_check_peer_arg(const locus_shm_ep_t *ep, int peer, bool any_ok, const char *what)
{
    if (!ep)
        return lc_err(LOCUS_ERR_INVALID, "endpoint NULL: expected one from locus_shm_init");
    if ((peer < 0 || peer >= ep->size) && !(any_ok && peer == LOCUS_SHM_ANY_SOURCE))
        return lc_err(LOCUS_ERR_INVALID, "%s %d: expected 0..%d%s", what, peer, ep->size - 1,
                      any_ok ? " or LOCUS_SHM_ANY_SOURCE" : "");
    return LOCUS_OK;
}

/* ---------- what the role files offer each other ---------- */

/* pool.c: the block table (init / free with the endpoint). */
locus_status_t shm_pool_init(locus_shm_ep_t *ep);
void shm_pool_free(locus_shm_ep_t *ep);

/* req.c: failure and argument checks. */
locus_status_t shm_fatal_err(locus_shm_ep_t *ep);
/* Break the endpoint: a message from src failed a bounds check (`what`). */
locus_status_t shm_set_corrupt(locus_shm_ep_t *ep, int src, const char *what);
/* Every pending operation ends with ep->fatal (set by the caller). */
void shm_fail_all(locus_shm_ep_t *ep);
/* `peer` finalized and left: what it sent is handed out, what waits for it fails. */
void shm_fail_peer_ops(locus_shm_ep_t *ep, int peer);
/* The request of l from/to `peer` (by source when recv) with this rendezvous id. */
locus_shm_req_t *shm_find_by_msgid(shm_list_t *l, int peer, uint64_t msgid, bool recv);

/* send.c */
/* Post now if the destination has nothing queued, else queue behind. */
void shm_submit(locus_shm_ep_t *ep, locus_shm_req_t *r);
/* A control message; with_data: {d0, d1} travels as its payload. */
locus_status_t shm_send_ctrl(locus_shm_ep_t *ep, int dst, int type, uint64_t aux, int flags,
                             bool with_data, uint64_t d0, uint64_t d1);
/* locus_shm_isend, never by reference (a blocking send completes on its own). */
locus_status_t shm_isend_copy(locus_shm_ep_t *ep, int dst, uint64_t tag, const void *buf, size_t len,
                              locus_shm_req_t **req);
int shm_progress_tx(locus_shm_ep_t *ep);

/* recv.c */
int shm_progress_rx(locus_shm_ep_t *ep);
/* Handle up to 64 messages of my ring (owner -1) or of owner's box. */
int shm_drain(locus_shm_ep_t *ep, shmq_t *q, shmq_rx_t *rx, int owner);
/* One received message to its handler. */
locus_status_t shm_on_message(locus_shm_ep_t *ep, const shm_msg_t *m);
/* An eager message (payload wherever m says) into a posted receive or the unexpected list. */
locus_status_t shm_on_eager(locus_shm_ep_t *ep, const shm_msg_t *m);
/* n bytes of m's payload (from its start) into dst. */
void shm_msg_read(const locus_shm_ep_t *ep, const shm_msg_t *m, void *dst, size_t n);

/* progress.c */
void shm_idle_tick(locus_shm_ep_t *ep, int did);
/* Publish the heads of my ring and boxes (finalize). */
void shm_publish_heads(locus_shm_ep_t *ep);

/* rndv.c */
/* Sender: post r's rendezvous descriptor; false = full, retry. */
bool shm_rndv_post(locus_shm_ep_t *ep, locus_shm_req_t *r);
/* A matched rendezvous: copy it (heap, split, CMA) or ask for fragments. */
locus_status_t shm_rndv_start(locus_shm_ep_t *ep, locus_shm_req_t *r, int src, uint64_t tag,
                              const shm_rts_t *rts);
/* Sender: FIN or CTS_COPY for one of its rendezvous. */
locus_status_t shm_on_reply(locus_shm_ep_t *ep, const shm_msg_t *m);
/* Bytes per ns of one transfer, folded into a recent average. */
void shm_rate_note(double *rate, size_t n, uint64_t ns);

/* frag.c */
/* Sender: stream r's fragments; true once all are posted. */
bool shm_frag_send(locus_shm_ep_t *ep, locus_shm_req_t *r);
/* Receiver: ask src to send r in fragments. */
locus_status_t shm_frag_pull(locus_shm_ep_t *ep, locus_shm_req_t *r, int src);
locus_status_t shm_on_frag(locus_shm_ep_t *ep, const shm_msg_t *m);

/* split.c */
/* Receiver: copy n bytes from the sender's heap into mine (dst at dst_off) with the sender's help. */
locus_status_t shm_split_recv(locus_shm_ep_t *ep, int src, uint64_t msgid, unsigned char *dst,
                              uint64_t dst_off, const unsigned char *from, uint64_t n);
locus_status_t shm_on_help(locus_shm_ep_t *ep, const shm_msg_t *m);

/* ref.c (the per-message operations are inline in ref.h) */
/* Complete the sends by reference a box head has passed (peer -1: all). */
int shm_ref_check(locus_shm_ep_t *ep, int peer);

/* fbox.c */
/* A matchable message to d: its box when it fits, else its ring. false = full: retry. */
bool shm_send_matchable(locus_shm_ep_t *ep, int d, shmq_hdr_t *h, const void *payload, shmq_copy_fn copy);
locus_status_t shm_on_fbox(locus_shm_ep_t *ep, const shm_msg_t *m);
/* Box b's mailbox message (b is full) if it is its sender's next: 1 = handled. */
int shm_mailbox_drain(locus_shm_ep_t *ep, shm_fbrx_t *b);
/* Give back every mailbox read since the last call. */
void shm_mailbox_free_all(locus_shm_ep_t *ep);

static inline void shm_mailbox_taken(locus_shm_ep_t *ep, shm_fbrx_t *b)
{
    b->mb_read++;
    b->mb_unfreed = true;
    ep->stats.mailbox_msgs++;
}

#endif
