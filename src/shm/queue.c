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

bool shmq_send(shmq_t *q, uint64_t *cached_head, const shmq_hdr_t *h, const void *payload,
               shmq_copy_fn copy)
{
    uint64_t pos;
    if (!shmq_claim(q, cached_head, h->len, &pos))
        return false;
    shmq_post(q, pos, h, payload, copy);
    return true;
}

