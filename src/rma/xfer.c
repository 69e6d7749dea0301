/* put, get (blocking and _nbi), flush, fence, ptr: address translation and
 * checks, then one copy into / out of a mapped peer heap, or RDMA WRITE /
 * READ with the local buffer handled as LOCUS_RMA_REG says. */
#include "rma/rma_internal.h"

#include <locus/copy.h>

#include <stdio.h>
#include <string.h>

#include "core/error.h"

locus_status_t rma_locate(const locus_rma_t *r, const char *op, int rank, const void *sym, size_t len, int *region,
                          uint64_t *off)
{
    if (rank < 0 || rank >= r->size)
        return lc_err(LOCUS_ERR_RANGE, "rma %s: rank %d out of range: expected 0..%d", op, rank, r->size - 1);
    uintptr_t a = (uintptr_t)sym, b = (uintptr_t)r->base;
    if (a >= b && a - b < r->user_size) {
        *off = a - b;
        *region = -1;
        if (len > r->user_size - *off)
            return lc_err(LOCUS_ERR_RANGE, "rma %s of %zu bytes to rank %d at heap offset %llu: runs past the end "
                          "of the %llu-byte symmetric heap", op, len, rank, (unsigned long long)*off,
                          (unsigned long long)r->user_size);
        return LOCUS_OK;
    }
    for (int i = 0; i < r->nregions; i++) {
        uintptr_t rb = (uintptr_t)r->regions[i].mine;
        if (a >= rb && a - rb < r->regions[i].len) {
            *off = a - rb;
            *region = i;
            if (len > r->regions[i].len - *off)
                return lc_err(LOCUS_ERR_RANGE, "rma %s of %zu bytes to rank %d at offset %llu of region %d: runs "
                              "past its end (%llu bytes)", op, len, rank, (unsigned long long)*off, i,
                              (unsigned long long)r->regions[i].len);
            return LOCUS_OK;
        }
    }
    return lc_err(LOCUS_ERR_INVALID, "rma %s: address %p is not symmetric: outside this process's heap [%p, +%llu) "
                  "and its %d added region%s", op, sym, (void *)r->base, (unsigned long long)r->user_size,
                  r->nregions, r->nregions == 1 ? "" : "s");
}

locus_status_t rma_fail_rank(locus_rma_t *r, int rank, locus_status_t st)
{
    char why[400];
    snprintf(why, sizeof why, "%s", locus_last_error());
    rma_peer_t *p = &r->peers[rank];
    if (!p->failed) {
        p->failed = true;
        p->err = st;
        snprintf(p->errmsg, sizeof p->errmsg, "%s", why);
    }
    r->broken = true;
    if (r->failed_rank < 0)
        r->failed_rank = rank;
    return lc_err(st, "rma: rank %d (node %d): %s", rank, p->node, why);
}

locus_status_t rma_peer_error(locus_rma_t *r, int rank)
{
    const rma_peer_t *p = &r->peers[rank];
    return lc_err(p->err, "rma: rank %d (node %d) failed earlier: %s", rank, p->node, p->errmsg);
}

/* An error from the rdma layer: the endpoint failed (the peer or the link),
 * or the request itself was refused (then the rank is fine). */
static locus_status_t nic_error(locus_rma_t *r, int rank, locus_status_t st)
{
    rdma_ep_t *ep = r->peers[rank].ep;
    if (ep && rdma_ep_status(ep) != LOCUS_OK)
        return rma_fail_rank(r, rank, st);
    return st;
}

static bool in_own_heap(const locus_rma_t *r, const void *p, size_t len)
{
    uintptr_t a = (uintptr_t)p, b = (uintptr_t)r->base;
    return a >= b && len <= r->obj_size && a - b <= r->obj_size - len;
}

/* The registration cache had no room for a buffer outside the heap (the
 * heap and static regions pinned nearly all the capacity, or buffers in
 * flight hold the rest): that piece and the rest of the transfer go through
 * the bounce buffers, as LOCUS_RMA_REG=static sends them. Slower, not an
 * error: the spec lets any local buffer be a source or destination. */
static void reg_full(locus_rma_t *r)
{
    if (!r->stats.reg_full)
        lc_note(&r->notes, "the registration cache was full (LOCUS_REG_MAX_BYTES/MAX_REGIONS, RLIMIT_MEMLOCK): buffers "
                "outside the heap that did not fit went through the bounce buffers");
    r->stats.reg_full++;
}

/* One RDMA transfer, cut into work requests: at most max_chunk bytes, or
 * the bounce size when a buffer outside the heap must go through bounce
 * buffers (static, or the cache is full). Blocking: a get waits for its
 * data, a put until its source may be reused (inline and bounce puts copied
 * it at post). */
locus_status_t rma_nic_xfer(locus_rma_t *r, int rank, int win, uint64_t off, char *local, size_t len, bool put,
                            bool blocking)
{
    rma_peer_t *p = &r->peers[rank];
    bool heap = in_own_heap(r, local, len);
    size_t chunk = !heap && r->reg == LOCUS_RMA_REG_STATIC ? r->bounce : r->max_chunk;
    rdma_comp_t comp = {0};
    locus_status_t st = LOCUS_OK;
    uint32_t max_inline = rdma_iface_caps(r->ifc)->max_inline;
    for (size_t done = 0; done < len;) {
        size_t n = len - done < chunk ? len - done : chunk;
        char *buf = local + done;
        bool wait = blocking && (!put || !rdma_put_copies_source(p->ep, buf, n));
        st = put ? rdma_put_w(p->ep, win, buf, off + done, n, wait ? &comp : NULL)
                 : rdma_get_w(p->ep, win, buf, off + done, n, wait ? &comp : NULL);
        if (st == LOCUS_ERR_NO_SPACE && !heap && n > r->bounce) { /* nothing was posted: again, smaller */
            reg_full(r);
            chunk = r->bounce;
            continue;
        }
        if (st)
            break;
        if (put && n <= max_inline)
            r->stats.puts_inline++;
        else if (!heap && n <= r->bounce)
            r->stats.bounce++;
        else if (!heap) {
            r->stats.reg_cache_gets++;
            if (r->reg == LOCUS_RMA_REG_NONE) /* deregistered once this request completes */
                locus_reg_invalidate(r->cache, buf, n);
        }
        done += n;
    }
    if (comp.pending) {
        locus_status_t w = rdma_wait(r->ifc, &comp);
        st = st ? st : w;
    }
    if (st)
        return nic_error(r, rank, st);
    if (put)
        r->stats.puts_nic++;
    else
        r->stats.gets_nic++;
    r->stats.bytes_nic += len;
    return LOCUS_OK;
}

/* A put's target may be polling a word of it: its edges are stored once
 * (locus_copy_polled); a get's copy needs no care. */
static void local_copy(void *dst, const void *src, size_t len, locus_copy_hint_t hint, bool put)
{
    uintptr_t d = (uintptr_t)dst, s = (uintptr_t)src;
    if (d < s + len && s < d + len) /* a put to self over its own source */
        memmove(dst, src, len);
    else if (put)
        locus_copy_polled(dst, src, len, hint);
    else
        locus_copy(dst, src, len, hint);
}

static locus_status_t xfer(locus_rma_t *r, int rank, void *sym, void *local, size_t len, bool put, bool blocking)
{
    const char *op = put ? (blocking ? "put" : "put_nbi") : (blocking ? "get" : "get_nbi");
    if (!r)
        return lc_err(LOCUS_ERR_INVALID, "rma %s: handle NULL", op);
    if (!len)
        return LOCUS_OK;
    if (!local)
        return lc_err(LOCUS_ERR_INVALID, "rma %s of %zu bytes: local buffer NULL", op, len);
    int region;
    uint64_t off;
    locus_status_t st = rma_locate(r, op, rank, sym, len, &region, &off);
    if (st)
        return st;
    rma_peer_t *p = &r->peers[rank];
    if (p->failed)
        return rma_peer_error(r, rank);
    if (region < 0 && put && rma_help_wanted(r, rank, local, len)) {
        rma_help_put(r, rank, off, local, len, blocking);
        return LOCUS_OK;
    }
    rma_help_settle(r); /* shared puts still posted go first: puts stay in order */
    if (region >= 0)
        return rma_region_xfer(r, rank, region, off, local, len, put);
    if (p->path == RMA_PATH_NIC)
        return rma_nic_xfer(r, rank, 0, off, local, len, put, blocking);
    /* one copy through the mapping; NT stores for large puts, the target
     * reads the data later from its own cache or memory */
    if (put) {
        local_copy(p->base + off, local, len, (locus_copy_hint_t)p->put_hint, true);
        __atomic_thread_fence(__ATOMIC_RELEASE);
        r->stats.puts_local++;
    } else {
        local_copy(local, p->base + off, len, LOCUS_COPY_HINT_NONE, false);
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        r->stats.gets_local++;
    }
    r->stats.bytes_local += len;
    return LOCUS_OK;
}

locus_status_t locus_rma_put(locus_rma_t *r, int rank, void *sym_dst, const void *src, size_t len)
{
    return xfer(r, rank, sym_dst, (void *)src, len, true, true);
}

locus_status_t locus_rma_get(locus_rma_t *r, int rank, void *dst, const void *sym_src, size_t len)
{
    return xfer(r, rank, (void *)sym_src, dst, len, false, true);
}

locus_status_t locus_rma_put_nbi(locus_rma_t *r, int rank, void *sym_dst, const void *src, size_t len)
{
    return xfer(r, rank, sym_dst, (void *)src, len, true, false);
}

locus_status_t locus_rma_get_nbi(locus_rma_t *r, int rank, void *dst, const void *sym_src, size_t len)
{
    return xfer(r, rank, (void *)sym_src, dst, len, false, false);
}

locus_status_t locus_rma_flush(locus_rma_t *r, int rank)
{
    if (!r)
        return lc_err(LOCUS_ERR_INVALID, "rma flush: handle NULL");
    if (rank < 0 || rank >= r->size)
        return lc_err(LOCUS_ERR_RANGE, "rma flush: rank %d out of range: expected 0..%d", rank, r->size - 1);
    rma_peer_t *p = &r->peers[rank];
    if (p->failed)
        return rma_peer_error(r, rank);
    rma_help_flush(r);
    __atomic_thread_fence(__ATOMIC_SEQ_CST); /* our stores into mapped heaps */
    locus_status_t live = rma_liveness(r, false);
    if (live)
        return live;
    if (p->ep && rdma_ep_outstanding(p->ep)) {
        locus_status_t st = rdma_ep_flush(p->ep);
        if (st)
            return nic_error(r, rank, st);
    }
    return LOCUS_OK;
}

locus_status_t locus_rma_flush_all(locus_rma_t *r)
{
    if (!r)
        return lc_err(LOCUS_ERR_INVALID, "rma flush_all: handle NULL");
    rma_help_flush(r);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    /* on-node copies never fail, so a dead local peer is found here (at most
     * every RMA_PROBE_NS: one clock read otherwise) */
    locus_status_t live = rma_liveness(r, false);
    if (live)
        return live;
    if (!r->ifc)
        return LOCUS_OK;
    locus_status_t st = rdma_iface_flush(r->ifc), first = LOCUS_OK;
    /* every endpoint that failed names its rank; report the first */
    for (int q = 0; q < r->size; q++) {
        rma_peer_t *p = &r->peers[q];
        if (p->ep && !p->failed && rdma_ep_status(p->ep) != LOCUS_OK) {
            locus_status_t e = rma_fail_rank(r, q, LOCUS_ERR_PEER_FAILED);
            first = first ? first : e;
        }
    }
    if (first)
        return rma_peer_error(r, r->failed_rank);
    if (st)
        return st;
    return r->broken ? rma_peer_error(r, r->failed_rank) : LOCUS_OK;
}

/* Ordering puts and atomics to each process before later ones, waiting only
 * where order cannot be had otherwise. Shared puts are completed (a program
 * may store through the mapping next). A process reached by the NIC alone
 * gets every request on its one RC queue pair, which keeps WRITEs in order:
 * rdma_ep_fence waits only for a READ or atomic in flight (a put, fence,
 * flag to another node cost two round trips when this was a flush). A process of this node
 * is reached by CPU copies, and in a job across nodes by NIC atomics too: a
 * copy cannot be ordered behind a request still in the NIC, so those
 * requests are completed. */
locus_status_t locus_rma_fence(locus_rma_t *r)
{
    if (!r)
        return lc_err(LOCUS_ERR_INVALID, "rma fence: handle NULL");
    if (r->broken)
        return rma_peer_error(r, r->failed_rank);
    rma_help_flush(r);
    __atomic_thread_fence(__ATOMIC_SEQ_CST); /* our stores into mapped heaps */
    locus_status_t live = rma_liveness(r, false);
    if (live || !r->ifc)
        return live;
    for (int q = 0; q < r->size; q++) {
        rma_peer_t *p = &r->peers[q];
        if (!p->ep || !rdma_ep_outstanding(p->ep))
            continue;
        if (p->failed)
            return rma_peer_error(r, q);
        locus_status_t st = p->path == RMA_PATH_NIC ? rdma_ep_fence(p->ep) : rdma_ep_flush(p->ep);
        if (st)
            return nic_error(r, q, st);
    }
    return LOCUS_OK;
}

void *locus_rma_ptr(const locus_rma_t *r, int rank, const void *sym)
{
    if (!r || rank < 0 || rank >= r->size)
        return NULL;
    int region = -1;
    uint64_t off = 0;
    if (rma_locate(r, "ptr", rank, sym, 1, &region, &off) != LOCUS_OK)
        return NULL;
    if (rank == r->rank)
        return (void *)sym;
    const rma_peer_t *p = &r->peers[rank];
    return region < 0 && p->path == RMA_PATH_LOCAL ? p->base + off : NULL;
}
