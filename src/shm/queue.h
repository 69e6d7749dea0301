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
#include <string.h>

#include <locus/copy.h>

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
typedef enum shmq_dir {
    SHMQ_IN = 0,  /* a sender's payload into the cells */
    SHMQ_OUT = 1, /* the receiver's copy out of the cells */
} shmq_dir_t;
typedef void (*shmq_copy_fn)(void *dst, const void *src, size_t n, shmq_dir_t dir);

/* Set up a view over `mem` (SHMQ_CTL_BYTES + ncells * SHMQ_CELL bytes). */
void shmq_view(shmq_t *q, void *mem, uint64_t ncells, uint32_t max_len, uint64_t salt);
/* Zero the control lines and cells (creator only, before publication). */
void shmq_format(shmq_t *q);

static inline uint64_t shmq_cells_for(uint64_t len) { return (SHMQ_HDR + len + SHMQ_CELL - 1) / SHMQ_CELL; }

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
/* Sender: claim + post; false if full. */
bool shmq_send(shmq_t *q, uint64_t *cached_head, const shmq_hdr_t *h, const void *payload,
               shmq_copy_fn copy);

/* ---- hot operations (inline: they are the per-message path) ---- */

/* Sender: claim cells for a `len`-byte payload. false when the ring is full
 * (retry later). *cached_head is the sender's private copy of head. */
static inline bool shmq_claim(shmq_t *q, uint64_t *cached_head, uint32_t len, uint64_t *pos)
{
    uint64_t k = shmq_cells_for(len);
    uint64_t t = __atomic_load_n(q->tail, __ATOMIC_RELAXED);
    for (;;) {
        if (t + k - *cached_head > q->ncells) {
            /* Acquire: our later writes into freed cells follow the receiver's reads. */
            *cached_head = __atomic_load_n(q->head, __ATOMIC_ACQUIRE);
            if (t + k - *cached_head > q->ncells)
                return false;
        }
        if (__atomic_compare_exchange_n(q->tail, &t, t + k, false, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED)) {
            *pos = t;
            return true;
        }
    }
}

/* Ring byte offset of payload byte `off` of the message at position pos. */
static inline uint64_t payload_at(const shmq_t *q, uint64_t pos, uint64_t off)
{
    return ((pos & q->mask) * SHMQ_CELL + SHMQ_HDR + off) & (q->ncells * SHMQ_CELL - 1);
}

/* The header fields (all but seq, which the caller stores last) and the
 * first `n` <= 32 payload bytes of a cell. */
static inline void shmq_fill_cell(shmq_hdr_t *c, const shmq_hdr_t *h, const void *payload, uint32_t n)
{
    c->len = h->len;
    c->src = h->src;
    c->type = h->type;
    c->flags = h->flags;
    c->tag = h->tag;
    c->aux = h->aux;
    if (n && payload)
        locus_copy_tiny((unsigned char *)c + SHMQ_HDR, payload, n);
}

/* Sender: write header fields and payload at a claimed position, then publish. */
static inline void shmq_post(shmq_t *q, uint64_t pos, const shmq_hdr_t *h, const void *payload,
               shmq_copy_fn copy)
{
    shmq_hdr_t *c = (shmq_hdr_t *)(q->cells + (pos & q->mask) * SHMQ_CELL);
    const unsigned char *p = (const unsigned char *)payload;
    uint32_t first = h->len < SHMQ_CELL - SHMQ_HDR ? h->len : SHMQ_CELL - SHMQ_HDR;
    uint64_t rest = h->len - first;
    /* Payload past the header's cell first (it may wrap), then the header's
     * line in one burst: the receiver polls that line, so the sender holds it
     * only briefly. */
    if (rest) {
        uint64_t ring = q->ncells * SHMQ_CELL;
        uint64_t start = ((pos + 1) & q->mask) * SHMQ_CELL;
        uint64_t n1 = rest < ring - start ? rest : ring - start;
        copy(q->cells + start, p + first, n1, SHMQ_IN);
        if (n1 < rest)
            copy(q->cells, p + first + n1, rest - n1, SHMQ_IN);
    }
    shmq_fill_cell(c, h, p, first);
    __atomic_store_n(&c->seq, (pos + 1) ^ q->salt, __ATOMIC_RELEASE);
    /* The next claim will likely start right after: own that line early. */
    __builtin_prefetch(q->cells + ((pos + shmq_cells_for(h->len)) & q->mask) * SHMQ_CELL, 1);
}

/* The cell at the receiver's head, and whether a message is published in it
 * (acquire: its fields and payload may be read after a true). */
static inline shmq_hdr_t *shmq_head_cell(const shmq_t *q, const shmq_rx_t *rx)
{
    return (shmq_hdr_t *)(q->cells + (rx->head & q->mask) * SHMQ_CELL);
}

static inline bool shmq_ready(const shmq_t *q, const shmq_rx_t *rx)
{
    return __atomic_load_n(&shmq_head_cell(q, rx)->seq, __ATOMIC_ACQUIRE) == ((rx->head + 1) ^ q->salt);
}

/* Receiver: the header at head if published, else NULL. Sets *corrupt when the
 * header's length exceeds max_len (then do not consume; the ring is broken). */
static inline const shmq_hdr_t *shmq_peek(shmq_t *q, shmq_rx_t *rx, bool *corrupt)
{
    shmq_hdr_t *c = shmq_head_cell(q, rx);
    if (!shmq_ready(q, rx))
        return NULL;
    *corrupt = c->len > q->max_len;
    return c;
}

/* Receiver: copy n payload bytes starting at payload offset `off` of the
 * message at head (handles wrap). */
static inline void shmq_read(shmq_t *q, const shmq_rx_t *rx, uint64_t off, void *dst, size_t n,
               shmq_copy_fn copy)
{
    if (!n)
        return;
    uint64_t ring = q->ncells * SHMQ_CELL;
    uint64_t start = payload_at(q, rx->head, off);
    uint64_t n1 = n < ring - start ? n : ring - start;
    if (n <= 32 && n1 == n) {
        locus_copy_tiny(dst, q->cells + start, n);
        return;
    }
    copy(dst, q->cells + start, n1, SHMQ_OUT);
    if (n1 < n)
        copy((unsigned char *)dst + n1, q->cells, n - n1, SHMQ_OUT);
}

/* Receiver: store head to shared memory if it moved (done when idle). */
static inline void shmq_publish_head(shmq_t *q, shmq_rx_t *rx)
{
    if (rx->published != rx->head) {
        rx->published = rx->head;
        __atomic_store_n(q->head, rx->head, __ATOMIC_RELEASE);
    }
}

/* Receiver: release the message at head (len = its payload length). */
static inline void shmq_consume(shmq_t *q, shmq_rx_t *rx, uint32_t len)
{
    rx->head += shmq_cells_for(len);
    if (rx->head - rx->published >= q->ncells / 4)
        shmq_publish_head(q, rx);
}

#endif
