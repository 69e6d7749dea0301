/* shm internals: segment layout, endpoint and request state. */
#ifndef LOCUS_SHM_INTERNAL_H
#define LOCUS_SHM_INTERNAL_H

#include <locus/shm.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "shm/queue.h"
#include "core/clock.h"
#include "core/notes.h"

#define SHM_MAGIC 0x316d68737375636cULL /* "locusshm1" */
#define SHM_VERSION 1u
#define SHM_HDR_BYTES 256u
#define SHM_PROC_BYTES 64u
#define SHM_PAGE 4096u

/* Segment header (shared). Line 0 is written by the creator before `ready`;
 * `ready` and `attached` live on their own lines. */
typedef struct shm_seg_hdr {
    uint64_t magic;
    uint32_t version, nprocs;
    uint64_t segment_bytes, queue_bytes, heap_bytes, eager_bytes;
    uint32_t max_len, creator_pid;
    uint64_t salt; /* ring header salt (random, top bit set) */
    uint32_t ready; uint32_t _pad1[15];
    uint32_t attached; uint32_t _pad2[15];
    uint32_t unlinked; uint32_t _pad3[15];
} shm_seg_hdr_t;

enum { PROC_EMPTY = 0, PROC_ALIVE = 1, PROC_FINALIZED = 2 };

/* One line per process, written by its owner. */
typedef struct shm_proc {
    int32_t pid;
    uint32_t state;
    int32_t cpu, l3;
    uint64_t barrier;
    uint32_t fbox_used; /* fast boxes of my pool claimed by senders (CAS, never freed) */
    uint32_t _pad32;
    uint64_t split_claim; /* split copy into my heap: job(32) | front(16) | back(16), see below */
    uint64_t split_done;  /* pieces its sender finished (the sender adds, release) */
    uint64_t _pad[2];
} shm_proc_t;

/* Split copy (heap to heap, >= LOCUS_SHM_SPLIT): one core's copy runs at its
 * cache's copy limit here, and two cores copying disjoint halves reach ~1.9x
 * (bench/split_probe.c), so the receiver of a large heap rendezvous whose
 * buffer is in its own heap shares the copy with the sender, which is waiting
 * for FIN anyway. The receiver cuts the message into pieces, publishes
 * split_claim = {job, 0, pieces} and tells the sender (MT_HELP: destination
 * offset and job); it takes pieces from the front, the sender from the back,
 * each by CAS on split_claim, so a sender that is busy elsewhere never delays
 * the receiver: it just copies everything itself. Once the pieces run out the
 * receiver waits only for pieces the sender already claimed (a claimant never
 * waits between claim and split_done), then completes and sends FIN. Jobs are
 * numbered per receiver, so a late MT_HELP finds its job over. */
#define SHM_SPLIT_PIECE (128u << 10) /* pieces: n / this, at least 2, at most the next */
#define SHM_SPLIT_MAXPIECES 32u

/* Byte offsets inside the segment (derived from the plan). */
typedef struct shm_layout {
    uint64_t procs, queues, heaps, queue_stride;
    uint64_t fboxes, fbox_stride; /* fast box pools: box i of process r at fboxes + (r * F + i) * stride */
    uint32_t ncells, max_len;
    uint64_t frag_bytes;
} shm_layout_t;

locus_status_t shm_plan_layout(int nprocs, const locus_shm_opts_t *opts, locus_shm_plan_t *plan,
                               shm_layout_t *lay);

/* Copy shim: every payload copy of the module goes through here. dir 0 =
 * copy-in to shared memory, 1 = copy-out of it, 2 = single copy; OR
 * SHM_COPY_FAR when the peer does not share our L3. */
#define SHM_COPY_FAR 4
void shm_copy(void *dst, const void *src, size_t n, int dir);

/* Messages. */
enum { MT_EAGER = 1, MT_RTS = 2, MT_FIN = 3, MT_CTS_COPY = 4, MT_FRAG = 5, MT_FBOX = 6, MT_HELP = 7, MT_REF = 8 };
enum { RTS_CMA = 1, RTS_HEAP = 2, RTS_COPY = 3 };
enum { CMA_AUTO = 0, CMA_OFF = 1, CMA_EPERM = 2, CMA_ON = 3 }; /* LOCUS_SHM_CMA */
/* Auto: a private-buffer rendezvous goes the way (CMA or the pipelined copy)
 * that moved bytes faster lately, each measured first once, and the other way
 * is tried again every SHM_CMA_EXPLORE-th one, so a change (load, placement)
 * is noticed. The pipeline is measured per fragment (its throughput while
 * pulls queue behind each other), so a sender slow to make progress shows only
 * in a message's first fragment. */
#define SHM_CMA_EXPLORE 256u
typedef struct shm_rts {
    uint64_t len, addr, heap_off;
    uint64_t msgid; /* the sender's rendezvous id (FIN / CTS_COPY / FRAG quote it) */
    uint32_t kind, _pad;
} shm_rts_t;

enum { RQ_SEND = 1, RQ_RECV = 2, RQ_CTRL = 3 };
enum { RS_QUEUED = 0, RS_WAIT_FIN, RS_FRAGS, RS_PULL, RS_POSTED, RS_WAIT_REF, RS_DONE };

/* By reference (LOCUS_SHM_REF): a non-blocking send of an eager-sized message
 * from the sender's shared heap, to a peer whose fast box it holds, posts only
 * {heap offset, length} (MT_REF, one cell) instead of copying the payload into
 * the box. The receiver treats it as an eager message whose payload it reads
 * from the sender's heap: one copy instead of two, and no payload lines pass
 * through the box. The send completes once the receiver has consumed it (into
 * the posted receive, or into an unexpected buffer: matching is not waited
 * for), which the sender reads off the box's published head: no extra shared
 * word. The receiver publishes its head after every drain that consumed one. A
 * blocking locus_shm_send keeps the eager copy (it completes on its own). */

struct locus_shm_req {
    uint8_t kind, state, proto, ctrl_type;
    locus_status_t status;
    int peer;             /* destination / wanted source (may be ANY) */
    uint64_t tag;
    void *buf;
    size_t len;           /* send length / receive capacity / control payload bytes */
    size_t msg_len;       /* receive: the message's length */
    size_t done_bytes;    /* fragments sent / received */
    int src;              /* receive: actual source */
    uint64_t msgid;       /* rendezvous id (sender's) */
    uint64_t ctrl_aux;
    uint64_t ctrl_data[2]; /* control payload (MT_HELP; len = its bytes) */
    struct locus_shm_req *next, *prev;
};

typedef struct shm_list { locus_shm_req_t *head, *tail; } shm_list_t;

typedef struct shm_unexp {
    struct shm_unexp *next;
    int src;
    uint8_t type;
    uint64_t tag, msgid;
    size_t len;
    shm_rts_t rts;
    unsigned char data[]; /* eager payload */
} shm_unexp_t;

/* Fast boxes: a per-pair single-producer ring (same cell format as the
 * process ring, no CAS) in the receiver's pool, given to a sender after
 * SHM_FBOX_AFTER matchable messages to it. The sender announces the box with
 * MT_FBOX through the ring; from then on EAGER and RTS messages that fit go
 * through the box, the rest through the ring. Pair order across the two
 * channels: every matchable message carries a per-pair sequence number in
 * `aux`; the receiver handles them in that order (a ring message ahead of it
 * first drains the sender's box, which must hold the ones in between; a box
 * message ahead waits for the ring). The sender never waits for the receiver. */
#define SHM_FBOX_AFTER 16
enum { FB_NONE = 0, FB_CLAIMED, FB_OPEN, FB_NEVER };

/* The mailbox: a box has one producer, so its ring's tail line is free and
 * holds one more cell, reused for every message that goes through it. A cell
 * reused this way stays hot in both cores' caches, which a ring cannot do
 * (every message on a fresh line costs ~30 ns more one-way here, see
 * bench/shm_floor.c), so it carries the one-cell messages of a latency-bound
 * exchange. Its first word is the state: FREE(n) = 2n once the receiver has
 * read n mailbox messages (0 in a fresh segment), BUSY = 1 while the sender
 * fills it, FULL(n) = 2n + 1 when message n (from 1) is in it. The sender
 * claims it with a CAS from FREE(sent) and, when that fails (the receiver has
 * not freed it yet), uses the box ring and skips the mailbox for the next
 * SHM_MBOX_BACKOFF messages or until it next completes a blocking receive
 * (request-response resumes), so streaming senders do not pay a failed look
 * per message. The receiver frees it when it next finds nothing to read, so the
 * store is off the path of whatever it sends in between. Mailbox messages
 * carry the per-pair sequence number like the others. */
#define SHM_MBOX_BUSY 1u
#define SHM_MBOX_BACKOFF 64u
static inline shmq_hdr_t *shm_mailbox(const shmq_t *box) { return (shmq_hdr_t *)box->tail; }

typedef struct shm_fbtx {
    shmq_t q;             /* view of my box in the destination's pool */
    uint64_t tail, cached_head;
    uint64_t seq;         /* matchable messages sent to this destination */
    uint64_t mb_sent;     /* mailbox messages sent */
    uint32_t mb_skip;     /* messages left before the mailbox is tried again */
    uint32_t mb_epoch;    /* ep->recv_epoch when it was last found busy */
    uint8_t state;        /* FB_* */
    uint16_t index;       /* box index in the destination's pool */
} shm_fbtx_t;
typedef struct shm_fbrx {
    shmq_t q;
    shmq_rx_t rx;
    int src;
    uint64_t mb_read;     /* mailbox messages read */
    bool mb_unfreed;      /* the last one read is not given back yet */
} shm_fbrx_t;

typedef struct shm_heap_blk { uint64_t off, size; bool used; } shm_heap_blk_t;

struct locus_shm_ep {
    int rank, size;
    char name[96];
    unsigned char *base;
    uint64_t map_bytes;
    locus_shm_plan_t plan;
    shm_layout_t lay;
    shm_seg_hdr_t *hdr;
    shm_proc_t *procs;
    shmq_t *q;              /* every process's ring */
    shmq_rx_t rx;           /* my ring's reader state */
    shm_fbtx_t *fbtx;       /* per destination: my fast box there */
    shm_fbrx_t *fbrx;       /* fast boxes I poll (nfbrx of plan.fboxes) */
    uint64_t *rxseq;        /* per source: matchable messages handled */
    int nfbrx;
    int16_t *fbrx_of;       /* per source: index in fbrx or -1 */
    shmq_t *cur_q;          /* the ring or box of the message being handled */
    shmq_rx_t *cur_rx;
    const unsigned char *cur_mb; /* or its mailbox payload (copied out), NULL */
    uint64_t mb_msgs;       /* messages received through mailboxes (tests, stats) */
    uint32_t recv_epoch;    /* blocking receives completed */
    uint64_t *cached_head;  /* per destination */
    shm_list_t *sendq;      /* per destination, FIFO */
    int nactive;            /* destinations with a non-empty sendq */
    shm_list_t posted, rndv, pulls;
    shm_unexp_t *unexp_head, *unexp_tail;
    locus_shm_req_t *free_reqs;
    uint64_t next_msgid;
    int cma_mode;           /* CMA_* (LOCUS_SHM_CMA) */
    double rate_cma, rate_pipe; /* auto: bytes/ns lately of each way (0 = not measured yet) */
    uint64_t pipe_last;     /* auto: when the last fragment arrived (or the pipeline started) */
    uint32_t pulls_started; /* private-buffer rendezvous received (auto's exploration) */
    uint64_t split_min;     /* LOCUS_SHM_SPLIT: smallest heap-to-heap message copied by both sides; 0 = never */
    uint32_t split_job;     /* split copies this process has offered (job numbers) */
    uint64_t split_helped;  /* pieces this process copied as the sender (tests, stats) */
    uint64_t ref_min;       /* LOCUS_SHM_REF: smallest heap isend posted by reference; 0 = never */
    shm_list_t refs;        /* sends by reference waiting for their box head to pass (send order) */
    const unsigned char *cur_ref; /* payload of the MT_REF being handled (in the sender's heap) */
    uint64_t ref_sent;      /* sends posted by reference (tests, stats) */
    bool ref_taken;         /* drain consumed an MT_REF: publish head after it */
    bool *cma_bad;          /* per source: the kernel refused */
    bool *gone;             /* per peer: exited after finalize */
    bool *far;              /* per peer: on another L3 (copy hints) */
    pid_t *pids;
    struct pollfd *pfds;    /* pidfds of the peers (-1 when unavailable) */
    uint32_t idle_spins;
    uint32_t idle_run, yield_after; /* consecutive idle progress calls; yield threshold */
    uint64_t next_live_ns;
    locus_status_t fatal;   /* PEER_FAILED / CORRUPT once broken */
    char fatal_msg[256];
    lc_notes_t notes;
    shm_heap_blk_t *blks;
    int nblks, cap_blks;
    unsigned char *my_heap;
};

/* Segment bootstrap (seg.c). */
locus_status_t shm_bootstrap_ids(const locus_shm_opts_t *opts, int *rank, int *size, char *job,
                                 size_t joblen);
locus_status_t shm_segment_attach(locus_shm_ep_t *ep, const locus_shm_opts_t *opts);
void shm_segment_detach(locus_shm_ep_t *ep);
/* Check peers' liveness; sets ep->fatal and returns PEER_FAILED if one died. */
locus_status_t shm_check_peers(locus_shm_ep_t *ep);
/* Has peer r's process exited (its pidfd, else kill(0))? No side effects. */
bool shm_peer_exited(const locus_shm_ep_t *ep, int r);
/* Fail the sends aimed at a peer that left (ep.c). */
void shm_fail_peer_ops(locus_shm_ep_t *ep, int peer);
void shm_note(locus_shm_ep_t *ep, const char *msg);
/* Publish the heads of my ring and boxes (ep.c; finalize). */
void shm_publish_heads(locus_shm_ep_t *ep);

/* LOCUS_JOB: 1-48 characters from [A-Za-z0-9_.-]. */
locus_status_t shm_validate_job(const char *value);

#endif
