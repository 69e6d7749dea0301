/* shm messages: the types that travel in ring and box cells, the rendezvous
 * descriptor, the received message a handler is given, and the copy shim
 * every payload copy goes through (copy.c). */
#ifndef LOCUS_SHM_MSG_H
#define LOCUS_SHM_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shm/queue.h"

/* Message types (shmq_hdr_t.type). Matchable ones (EAGER, RTS, REF) carry
 * the per-pair sequence number in `aux` (fbox.h); control ones (FIN,
 * CTS_COPY, FRAG, HELP, FBOX) always use the ring. */
enum {
    MT_EAGER = 1,    /* payload in the cells (recv.c) */
    MT_RTS = 2,      /* rendezvous descriptor shm_rts_t (rndv.c) */
    MT_FIN = 3,      /* receiver -> sender: rendezvous copied (flags 1: failed) */
    MT_CTS_COPY = 4, /* receiver -> sender: send it in fragments (frag.c) */
    MT_FRAG = 5,     /* one fragment: tag = offset, aux = msgid (frag.c) */
    MT_FBOX = 6,     /* a sender announces its fast box: aux = box index (fbox.c) */
    MT_HELP = 7,     /* receiver -> sender: share the copy (split.c) */
    MT_REF = 8,      /* eager payload left in the sender's heap (ref.c) */
};

/* How the sender offers a rendezvous: its buffer is in its shared heap, or
 * private (CMA or the pipeline; RTS_COPY: CMA turned off). */
enum { RTS_CMA = 1, RTS_HEAP = 2, RTS_COPY = 3 };
typedef struct shm_rts {
    uint64_t len, addr, heap_off;
    uint64_t msgid; /* the sender's rendezvous id (FIN / CTS_COPY / FRAG quote it) */
    uint32_t kind, _pad;
} shm_rts_t;

/* Where a received message's payload is. */
typedef enum shm_via {
    SHM_VIA_RING,    /* my ring's cells, at rx->head */
    SHM_VIA_BOX,     /* a fast box's cells, at rx->head */
    SHM_VIA_MAILBOX, /* a private copy taken out of a box's mailbox */
    SHM_VIA_REF,     /* the sender's shared heap (a send by reference) */
} shm_via_t;

/* A received message, as handed to its handler: the header, read once (the
 * peer cannot change it under the handler's checks), and where the payload
 * is. Handlers read the payload through shm_msg_read() (recv.c). */
typedef struct shm_msg {
    shmq_hdr_t h;
    shm_via_t via;
    shmq_t *q;                 /* RING / BOX: the queue holding it */
    shmq_rx_t *rx;             /* ... and its reader state (payload at rx->head) */
    const unsigned char *data; /* MAILBOX / REF: the payload */
} shm_msg_t;

/* Which way a payload copy goes; the shim picks a cache hint by it when the
 * peer is far (on another L3). IN and OUT are the queue's own directions. */
typedef enum shm_copy_dir {
    SHM_COPY_IN = SHMQ_IN,   /* private buffer -> shared cells (sender) */
    SHM_COPY_OUT = SHMQ_OUT, /* shared cells -> private buffer (receiver) */
    SHM_COPY_SINGLE,         /* the peer's buffer -> ours, the only copy (heap rendezvous, split, reference) */
} shm_copy_dir_t;

void shm_copy(void *dst, const void *src, size_t n, shm_copy_dir_t dir, bool far);
/* The same as queue copy functions (shmq_copy_fn), for a near or far peer. */
void shm_copy_near(void *dst, const void *src, size_t n, shmq_dir_t dir);
void shm_copy_far(void *dst, const void *src, size_t n, shmq_dir_t dir);

#endif
