/* Multi-producer ring of 64-byte cells (see queue.h for the protocol). */
#include "shm/queue.h"

#include <string.h>

void shmq_view(shmq_t *q, void *mem, uint64_t ncells, uint32_t max_len, uint64_t salt)
{
    q->salt = salt | (1ull << 63);
    unsigned char *m = mem;
    q->tail = (uint64_t *)m;
    q->head = (uint64_t *)(m + SHMQ_CELL);
    q->cells = m + SHMQ_CTL_BYTES;
    q->ncells = ncells;
    q->mask = ncells - 1;
    q->max_len = max_len;
}

void shmq_format(shmq_t *q)
{
    memset(q->tail, 0, SHMQ_CTL_BYTES);
    memset(q->cells, 0, q->ncells * SHMQ_CELL);
}

bool shmq_claim(shmq_t *q, uint64_t *cached_head, uint32_t len, uint64_t *pos)
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

void shmq_post(shmq_t *q, uint64_t pos, const shmq_hdr_t *h, const void *payload,
               shmq_copy_fn copy)
{
    shmq_hdr_t *c = (shmq_hdr_t *)(q->cells + (pos & q->mask) * SHMQ_CELL);
    const unsigned char *p = payload;
    uint32_t first = h->len < SHMQ_CELL - SHMQ_HDR ? h->len : SHMQ_CELL - SHMQ_HDR;
    uint64_t rest = h->len - first;
    /* Payload past the header's cell first (it may wrap), then the header's
     * line in one burst: the receiver polls that line, so the sender holds it
     * only briefly. */
    if (rest) {
        uint64_t ring = q->ncells * SHMQ_CELL;
        uint64_t start = ((pos + 1) & q->mask) * SHMQ_CELL;
        uint64_t n1 = rest < ring - start ? rest : ring - start;
        copy(q->cells + start, p + first, n1, 0);
        if (n1 < rest)
            copy(q->cells, p + first + n1, rest - n1, 0);
    }
    c->len = h->len;
    c->src = h->src;
    c->type = h->type;
    c->flags = h->flags;
    c->tag = h->tag;
    c->aux = h->aux;
    if (first)
        memcpy((unsigned char *)c + SHMQ_HDR, p, first);
    __atomic_store_n(&c->seq, (pos + 1) ^ q->salt, __ATOMIC_RELEASE);
    /* The next claim will likely start right after: own that line early. */
    __builtin_prefetch(q->cells + ((pos + shmq_cells_for(h->len)) & q->mask) * SHMQ_CELL, 1);
}

bool shmq_send(shmq_t *q, uint64_t *cached_head, const shmq_hdr_t *h, const void *payload,
               shmq_copy_fn copy)
{
    uint64_t pos;
    if (!shmq_claim(q, cached_head, h->len, &pos))
        return false;
    shmq_post(q, pos, h, payload, copy);
    return true;
}

const shmq_hdr_t *shmq_peek(shmq_t *q, shmq_rx_t *rx, bool *corrupt)
{
    shmq_hdr_t *c = (shmq_hdr_t *)(q->cells + (rx->head & q->mask) * SHMQ_CELL);
    if (__atomic_load_n(&c->seq, __ATOMIC_ACQUIRE) != ((rx->head + 1) ^ q->salt))
        return NULL;
    *corrupt = c->len > q->max_len;
    return c;
}

void shmq_read(shmq_t *q, const shmq_rx_t *rx, uint64_t off, void *dst, size_t n,
               shmq_copy_fn copy)
{
    if (!n)
        return;
    uint64_t ring = q->ncells * SHMQ_CELL;
    uint64_t start = payload_at(q, rx->head, off);
    uint64_t n1 = n < ring - start ? n : ring - start;
    if (n <= 32 && n1 == n) {
        memcpy(dst, q->cells + start, n);
        return;
    }
    copy(dst, q->cells + start, n1, 1);
    if (n1 < n)
        copy((unsigned char *)dst + n1, q->cells, n - n1, 1);
}

void shmq_consume(shmq_t *q, shmq_rx_t *rx, uint32_t len)
{
    rx->head += shmq_cells_for(len);
    if (rx->head - rx->published >= q->ncells / 4)
        shmq_publish_head(q, rx);
}

void shmq_publish_head(shmq_t *q, shmq_rx_t *rx)
{
    if (rx->published != rx->head) {
        rx->published = rx->head;
        __atomic_store_n(q->head, rx->head, __ATOMIC_RELEASE);
    }
}
