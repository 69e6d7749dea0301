/* Fast boxes and their mailboxes (fbox.c; the blocking fast paths in fast.c).
 *
 * Fast box: a per-pair single-producer ring (same cell format as the process
 * ring, no CAS) in the receiver's pool, given to a sender after
 * SHM_FBOX_AFTER matchable messages to it. The sender announces the box with
 * MT_FBOX through the ring; from then on EAGER, RTS and REF messages that fit
 * go through the box, the rest through the ring. Pair order across the two
 * channels: every matchable message carries a per-pair sequence number in
 * `aux`; the receiver handles them in that order (a ring message ahead of it
 * first drains the sender's box, which must hold the ones in between; a box
 * message ahead waits for the ring). The sender never waits for the receiver.
 *
 * The mailbox: a box has one producer, so its ring's tail line is free and
 * holds one more cell, reused for every message that goes through it. A cell
 * reused this way stays hot in both cores' caches, which a ring cannot do
 * (every message on a fresh line costs ~30 ns more one-way here, see
 * research/probes/shm_floor.c), so it carries the one-cell messages of a latency-bound
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
#ifndef LOCUS_SHM_FBOX_H
#define LOCUS_SHM_FBOX_H

#include <stdbool.h>
#include <stdint.h>

#include "shm/msg.h"
#include "shm/queue.h"

#define SHM_FBOX_AFTER 16
enum { FB_NONE = 0, FB_CLAIMED, FB_OPEN, FB_NEVER };

#define SHM_MBOX_BUSY 1u
#define SHM_MBOX_BACKOFF 64u

/* Sender side: my box in one destination's pool. */
typedef struct shm_fbtx {
    shmq_t q;             /* view of my box in the destination's pool */
    uint64_t tail, cached_head;
    uint64_t seq;         /* matchable messages sent to this destination */
    uint64_t mb_sent;     /* mailbox messages sent */
    uint32_t mb_skip;     /* messages left before the mailbox is tried again */
    uint32_t mb_epoch;    /* ep->fbox.recv_epoch when it was last found busy */
    uint8_t state;        /* FB_* */
    uint16_t index;       /* box index in the destination's pool */
} shm_fbtx_t;

/* Receiver side: a box of my pool that a sender announced. */
typedef struct shm_fbrx {
    shmq_t q;
    shmq_rx_t rx;
    int src;
    uint64_t mb_read;     /* mailbox messages read */
    bool mb_unfreed;      /* the last one read is not given back yet */
} shm_fbrx_t;

static inline shmq_hdr_t *shm_mailbox(const shmq_t *box) { return (shmq_hdr_t *)box->tail; }

/* Does box b's mailbox hold its sender's next mailbox message? */
static inline bool shm_mailbox_full(const shm_fbrx_t *b)
{
    return __atomic_load_n(&shm_mailbox(&b->q)->seq, __ATOMIC_ACQUIRE) == (((b->mb_read + 1) << 1) | 1);
}

/* Read a full mailbox's header, one read of each field (the peer cannot
 * change them under our checks); false if it is not a one-cell eager
 * message from the box's sender. */
static inline bool shm_mailbox_header(const shm_fbrx_t *b, shmq_hdr_t *h)
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

#endif
