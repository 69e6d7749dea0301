/* Endpoint lifetime, accessors and the shared heap allocator. */
#include "shm/shm_internal.h"

#include "core/config.h"
#include "core/error.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static void ep_free(locus_shm_ep_t *ep)
{
    if (ep->pfds)
        for (int r = 0; r < ep->size; r++)
            if (ep->pfds[r].fd >= 0)
                close(ep->pfds[r].fd);
    while (ep->unexp_head) {
        shm_unexp_t *u = ep->unexp_head;
        ep->unexp_head = u->next;
        free(u);
    }
    while (ep->free_reqs) {
        locus_shm_req_t *r = ep->free_reqs;
        ep->free_reqs = r->next;
        free(r);
    }
    free(ep->q);
    free(ep->fbtx);
    free(ep->fbrx);
    free(ep->fbrx_of);
    free(ep->rxseq);
    free(ep->cached_head);
    free(ep->sendq);
    free(ep->cma_bad);
    free(ep->gone);
    free(ep->far);
    free(ep->pids);
    free(ep->pfds);
    free(ep->blks);
    lc_notes_free(&ep->notes);
    free(ep);
}

static locus_status_t alloc_private(locus_shm_ep_t *ep)
{
    size_t n = (size_t)ep->size;
    ep->q = calloc(n, sizeof *ep->q);
    ep->cached_head = calloc(n, sizeof *ep->cached_head);
    ep->sendq = calloc(n, sizeof *ep->sendq);
    ep->cma_bad = calloc(n, sizeof *ep->cma_bad);
    ep->gone = calloc(n, sizeof *ep->gone);
    ep->far = calloc(n, sizeof *ep->far);
    ep->pids = calloc(n, sizeof *ep->pids);
    ep->pfds = calloc(n, sizeof *ep->pfds);
    ep->fbtx = calloc(n, sizeof *ep->fbtx);
    ep->fbrx = calloc(ep->plan.fboxes ? ep->plan.fboxes : 1, sizeof *ep->fbrx);
    ep->fbrx_of = malloc(n * sizeof *ep->fbrx_of);
    ep->rxseq = calloc(n, sizeof *ep->rxseq);
    ep->cap_blks = 16;
    ep->blks = calloc((size_t)ep->cap_blks, sizeof *ep->blks);
    if (!ep->q || !ep->cached_head || !ep->sendq || !ep->cma_bad || !ep->gone || !ep->far || !ep->pids ||
        !ep->pfds || !ep->blks || !ep->fbtx || !ep->fbrx || !ep->fbrx_of || !ep->rxseq)
        return lc_err(LOCUS_ERR_NO_MEMORY, "shm endpoint bookkeeping for %d processes", ep->size);
    for (size_t r = 0; r < n; r++) {
        ep->pfds[r].fd = -1;
        ep->fbrx_of[r] = -1;
        ep->fbtx[r].state = ep->plan.fboxes ? FB_NONE : FB_NEVER;
    }
    return LOCUS_OK;
}

locus_status_t locus_shm_init(const locus_shm_opts_t *opts, locus_shm_ep_t **out)
{
    if (!out)
        return lc_err(LOCUS_ERR_INVALID, "locus_shm_init: output pointer is NULL");
    *out = NULL;
    locus_shm_ep_t *ep = calloc(1, sizeof *ep);
    if (!ep)
        return lc_err(LOCUS_ERR_NO_MEMORY, "shm endpoint");
    char job[64];
    int mode;
    uint64_t split = 0, ref = 0;
    locus_status_t st = shm_bootstrap_ids(opts, &ep->rank, &ep->size, job, sizeof job);
    if (!st)
        st = shm_plan_layout(ep->size, opts, &ep->plan, &ep->lay);
    if (!st)
        st = locus_shm_segment_name(job, ep->name, sizeof ep->name);
    if (!st)
        st = lc_tun_enum(LC_TUN_SHM_CMA, &mode);
    if (!st)
        st = lc_tun_size(LC_TUN_SHM_SPLIT, &split);
    if (!st)
        st = lc_tun_size(LC_TUN_SHM_REF, &ref);
    if (!st)
        st = alloc_private(ep);
    if (!st)
        st = shm_segment_attach(ep, opts);
    if (st) {
        ep_free(ep);
        return st;
    }
    ep->cma_mode = mode;
    ep->split_min = split;
    ep->ref_min = ref;
    shm_proc_t *me = &ep->procs[ep->rank];
    for (int r = 0; r < ep->size; r++) {
        shmq_view(&ep->q[r], ep->base + ep->lay.queues + (uint64_t)r * ep->lay.queue_stride,
                  ep->lay.ncells, ep->lay.max_len, ep->hdr->salt);
        ep->pids[r] = __atomic_load_n(&ep->procs[r].pid, __ATOMIC_ACQUIRE);
        if (r == ep->rank)
            continue;
        /* A pidfd turns readable when the peer exits: one poll() checks them all. */
        ep->pfds[r].fd = (int)syscall(SYS_pidfd_open, ep->pids[r], 0);
        ep->pfds[r].events = POLLIN;
        /* Unknown L3 (-1) counts as shared, as the copy module does. */
        ep->far[r] = me->l3 >= 0 && ep->procs[r].l3 >= 0 && ep->procs[r].l3 != me->l3;
    }
    ep->my_heap = ep->base + ep->lay.heaps + (uint64_t)ep->rank * ep->plan.heap_bytes;
    ep->blks[0] = (shm_heap_blk_t){0, ep->plan.heap_bytes, false};
    ep->nblks = ep->plan.heap_bytes ? 1 : 0;
    ep->next_live_ns = lc_now_ns() + 1000000;
    /* Oversubscribed (more local processes than CPUs): yield when idle. A
     * process pinned to one CPU of its own is not oversubscribed. */
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    ep->yield_after = online > 0 && ep->size > online ? 32 : UINT32_MAX;
    *out = ep;
    return LOCUS_OK;
}

locus_status_t locus_shm_finalize(locus_shm_ep_t *ep)
{
    if (!ep)
        return LOCUS_OK;
    /* Flush what we still owe peers (replies to their rendezvous, queued sends). */
    locus_status_t st = LOCUS_OK;
    while (!ep->fatal && ep->nactive)
        if ((st = locus_shm_progress(ep)))
            break;
    if (ep->base) {
        shm_publish_heads(ep);
        __atomic_store_n(&ep->procs[ep->rank].state, PROC_FINALIZED, __ATOMIC_RELEASE);
    }
    shm_segment_detach(ep);
    ep_free(ep);
    return st;
}

int locus_shm_rank(const locus_shm_ep_t *ep) { return ep ? ep->rank : -1; }
int locus_shm_size(const locus_shm_ep_t *ep) { return ep ? ep->size : 0; }
const locus_shm_plan_t *locus_shm_get_plan(const locus_shm_ep_t *ep) { return ep ? &ep->plan : NULL; }
const char *locus_shm_notes(const locus_shm_ep_t *ep) { return ep ? lc_notes_text(&ep->notes) : ""; }

/* ---------- shared heap: first fit over a small private block table ---------- */

void *locus_shm_alloc(locus_shm_ep_t *ep, size_t bytes)
{
    if (!ep || !bytes) {
        lc_err(LOCUS_ERR_INVALID, "locus_shm_alloc: %s", ep ? "size 0: expected > 0 bytes" : "endpoint NULL");
        return NULL;
    }
    uint64_t need = (bytes + 63) & ~(uint64_t)63;
    for (int i = 0; i < ep->nblks; i++) {
        shm_heap_blk_t *b = &ep->blks[i];
        if (b->used || b->size < need)
            continue;
        if (b->size > need) {
            if (ep->nblks == ep->cap_blks) {
                shm_heap_blk_t *nb = realloc(ep->blks, sizeof *nb * (size_t)ep->cap_blks * 2);
                if (!nb) {
                    lc_err(LOCUS_ERR_NO_MEMORY, "locus_shm_alloc: block table");
                    return NULL;
                }
                ep->blks = nb;
                ep->cap_blks *= 2;
                b = &ep->blks[i];
            }
            memmove(&ep->blks[i + 2], &ep->blks[i + 1], sizeof *b * (size_t)(ep->nblks - i - 1));
            ep->blks[i + 1] = (shm_heap_blk_t){b->off + need, b->size - need, false};
            ep->nblks++;
            b->size = need;
        }
        b->used = true;
        return ep->my_heap + b->off;
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
    for (int i = 0; i < ep->nblks; i++) {
        if (ep->blks[i].off != off || !ep->blks[i].used)
            continue;
        ep->blks[i].used = false;
        /* Merge with free neighbours. */
        if (i + 1 < ep->nblks && !ep->blks[i + 1].used) {
            ep->blks[i].size += ep->blks[i + 1].size;
            memmove(&ep->blks[i + 1], &ep->blks[i + 2], sizeof(shm_heap_blk_t) * (size_t)(ep->nblks - i - 2));
            ep->nblks--;
        }
        if (i > 0 && !ep->blks[i - 1].used) {
            ep->blks[i - 1].size += ep->blks[i].size;
            memmove(&ep->blks[i], &ep->blks[i + 1], sizeof(shm_heap_blk_t) * (size_t)(ep->nblks - i - 1));
            ep->nblks--;
        }
        return;
    }
}
