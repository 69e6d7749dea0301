/* The shared heap allocator (locus_shm_alloc): each process's heap in the
 * segment is cut first fit over a small private table of blocks, 64-byte
 * aligned, merged with free neighbours when freed. Only the owner allocates
 * in its heap; peers read it (heap rendezvous, split copy, references). */
#include "shm/shm_internal.h"

#include "core/config.h"
#include "core/error.h"

locus_status_t shm_pool_init(locus_shm_ep_t *ep)
{
    ep->pool.cap = 16;
    ep->pool.blks = calloc((size_t)ep->pool.cap, sizeof *ep->pool.blks);
    if (!ep->pool.blks)
        return lc_err(LOCUS_ERR_NO_MEMORY, "shm heap block table");
    ep->pool.blks[0] = (shm_heap_blk_t){0, ep->plan.heap_bytes, false};
    ep->pool.n = ep->plan.heap_bytes ? 1 : 0;
    return LOCUS_OK;
}

void shm_pool_free(locus_shm_ep_t *ep)
{
    free(ep->pool.blks);
    ep->pool.blks = NULL;
}

/* Cut block i to `need` bytes, the rest a free block after it. */
static bool split_block(locus_shm_ep_t *ep, int i, uint64_t need)
{
    if (ep->pool.n == ep->pool.cap) {
        shm_heap_blk_t *nb = realloc(ep->pool.blks, sizeof *nb * (size_t)ep->pool.cap * 2);
        if (!nb)
            return false;
        ep->pool.blks = nb;
        ep->pool.cap *= 2;
    }
    shm_heap_blk_t *b = &ep->pool.blks[i];
    memmove(b + 2, b + 1, sizeof *b * (size_t)(ep->pool.n - i - 1));
    b[1] = (shm_heap_blk_t){b->off + need, b->size - need, false};
    ep->pool.n++;
    b->size = need;
    return true;
}

void *locus_shm_alloc(locus_shm_ep_t *ep, size_t bytes)
{
    if (!ep || !bytes) {
        lc_err(LOCUS_ERR_INVALID, "locus_shm_alloc: %s", ep ? "size 0: expected > 0 bytes" : "endpoint NULL");
        return NULL;
    }
    uint64_t need = (bytes + 63) & ~(uint64_t)63;
    for (int i = 0; i < ep->pool.n; i++) {
        shm_heap_blk_t *b = &ep->pool.blks[i];
        if (b->used || b->size < need)
            continue;
        if (b->size > need && !split_block(ep, i, need)) {
            lc_err(LOCUS_ERR_NO_MEMORY, "locus_shm_alloc: block table");
            return NULL;
        }
        ep->pool.blks[i].used = true;
        return ep->my_heap + ep->pool.blks[i].off;
    }
    char a[32];
    lc_err(LOCUS_ERR_NO_SPACE, "locus_shm_alloc(%zu): the %s shared heap has no free block that "
           "large (set LOCUS_SHM_HEAP)", bytes, locus_format_size(ep->plan.heap_bytes, a, sizeof a));
    return NULL;
}

void locus_shm_free(locus_shm_ep_t *ep, void *p)
{
    if (!ep || !p)
        return;
    uint64_t off = (uint64_t)((unsigned char *)p - ep->my_heap);
    shm_heap_blk_t *blk = ep->pool.blks;
    for (int i = 0; i < ep->pool.n; i++) {
        if (blk[i].off != off || !blk[i].used)
            continue;
        blk[i].used = false;
        /* Merge with free neighbours. */
        if (i + 1 < ep->pool.n && !blk[i + 1].used) {
            blk[i].size += blk[i + 1].size;
            memmove(&blk[i + 1], &blk[i + 2], sizeof *blk * (size_t)(ep->pool.n - i - 2));
            ep->pool.n--;
        }
        if (i > 0 && !blk[i - 1].used) {
            blk[i - 1].size += blk[i].size;
            memmove(&blk[i], &blk[i + 1], sizeof *blk * (size_t)(ep->pool.n - i - 1));
            ep->pool.n--;
        }
        return;
    }
}
