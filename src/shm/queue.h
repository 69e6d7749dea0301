/* The per-receiver multi-producer ring of 64-byte cells.
 *
 * Memory: two control lines (tail: claimed by senders with CAS; head: published
 * by the receiver) followed by a power-of-two number of cells. A message
 * occupies ceil((32 + len) / 64) consecutive cells (wrapping): a 32-byte header
 * in the first cell, then the payload. The header's first word `seq` is
 * published last (release) as (claim position + 1) XOR salt, where the salt is
 * a random 64-bit value with the top bit set chosen when the segment is made:
 * the receiver waits for that value at its head. Stale payload in a cell can
 * only pose as a header if it holds exactly this salted value (never zero, so
 * fresh cells cannot; ordinary data such as counters or positions cannot; only
 * a writer that can already write the ring could forge it), so consumed cells
 * need no clearing and the receiver never writes the cells, only its head.
 * The receiver publishes head in batches; senders cache it per destination and
 * re-read it only when the ring looks full.
 *
 * Pure memory operations, no system calls: unit- and TSan-tested in-process. */
#ifndef LOCUS_SHM_QUEUE_H
#define LOCUS_SHM_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SHMQ_CELL 64u
#define SHMQ_HDR 32u
#define SHMQ_CTL_BYTES 128u

typedef struct shmq_hdr {
    uint64_t seq;  /* (claim position + 1) ^ salt, stored last with release */
    uint32_t len;  /* payload bytes after the header */
    uint16_t src;
    uint8_t type;
    uint8_t flags;
    uint64_t tag;
    uint64_t aux;
} shmq_hdr_t;

typedef struct shmq {
    uint64_t *tail;        /* shared, senders */
    uint64_t *head;        /* shared, receiver publishes */
    unsigned char *cells;  /* shared */
    uint64_t ncells, mask;
    uint32_t max_len;      /* longest payload a sender may post (bounds check) */
    uint64_t salt;         /* XORed into seq; top bit set */
} shmq_t;

/* Receiver-side private state. */
typedef struct shmq_rx {
    uint64_t head;      /* next position to read */
    uint64_t published; /* last head stored to shared memory */
} shmq_rx_t;

/* Payload copy used for copy-in/copy-out (set to the shm copy shim). */
typedef void (*shmq_copy_fn)(void *dst, const void *src, size_t n, int dir);

/* Set up a view over `mem` (SHMQ_CTL_BYTES + ncells * SHMQ_CELL bytes). */
void shmq_view(shmq_t *q, void *mem, uint64_t ncells, uint32_t max_len, uint64_t salt);
/* Zero the control lines and cells (creator only, before publication). */
void shmq_format(shmq_t *q);

static inline uint64_t shmq_cells_for(uint64_t len) { return (SHMQ_HDR + len + SHMQ_CELL - 1) / SHMQ_CELL; }

/* Sender: claim cells for a `len`-byte payload. false when the ring is full
 * (retry later). *cached_head is the sender's private copy of head. */
bool shmq_claim(shmq_t *q, uint64_t *cached_head, uint32_t len, uint64_t *pos);
/* Single-producer claim (a fast box has one sender): no CAS, the tail is the
 * sender's private *tail; the shared tail line is never touched. */
static inline bool shmq_claim_sp(const shmq_t *q, uint64_t *tail, uint64_t *cached_head, uint32_t len,
                                 uint64_t *pos)
{
    uint64_t k = shmq_cells_for(len), t = *tail;
    if (t + k - *cached_head > q->ncells) {
        *cached_head = __atomic_load_n(q->head, __ATOMIC_ACQUIRE);
        if (t + k - *cached_head > q->ncells)
            return false;
    }
    *pos = t;
    *tail = t + k;
    return true;
}
/* Sender: write header fields and payload at a claimed position, then publish. */
void shmq_post(shmq_t *q, uint64_t pos, const shmq_hdr_t *h, const void *payload,
               shmq_copy_fn copy);
/* Convenience: claim + post; false if full. */
bool shmq_send(shmq_t *q, uint64_t *cached_head, const shmq_hdr_t *h, const void *payload,
               shmq_copy_fn copy);

/* Receiver: the header at head if published, else NULL. Sets *corrupt when the
 * header's length exceeds max_len (then do not consume; the ring is broken). */
const shmq_hdr_t *shmq_peek(shmq_t *q, shmq_rx_t *rx, bool *corrupt);
/* Receiver: copy n payload bytes starting at payload offset `off` of the
 * message at head (handles wrap). */
void shmq_read(shmq_t *q, const shmq_rx_t *rx, uint64_t off, void *dst, size_t n,
               shmq_copy_fn copy);
/* Receiver: release the message at head (len = its payload length). */
void shmq_consume(shmq_t *q, shmq_rx_t *rx, uint32_t len);
/* Receiver: store head to shared memory if it moved (done when idle). */
void shmq_publish_head(shmq_t *q, shmq_rx_t *rx);

#endif
