/* Endpoint lifetime (init, finalize), accessors and locus_shm_stats. */
#include "shm/shm_internal.h"

#include "core/config.h"
#include "core/error.h"

#include <locus/copy.h>

#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

static void ep_free(locus_shm_ep_t *ep)
{
    if (ep->peer.pfd)
        for (int r = 0; r < ep->size; r++)
            if (ep->peer.pfd[r].fd >= 0)
                close(ep->peer.pfd[r].fd);
    while (ep->match.unexp_head) {
        shm_unexp_t *u = ep->match.unexp_head;
        ep->match.unexp_head = u->next;
        free(u);
    }
    for (size_t i = 0; i < ep->reqmem.n; i++)
        free(ep->reqmem.chunk[i]);
    free(ep->reqmem.chunk);
    free(ep->q);
    free(ep->cached_head);
    free(ep->peer.pid);
    free(ep->peer.pfd);
    free(ep->peer.gone);
    free(ep->peer.far);
    free(ep->send.queue);
    free(ep->match.rxseq);
    free(ep->fbox.tx);
    free(ep->fbox.rx);
    free(ep->fbox.rx_of);
    free(ep->cma.refused);
    shm_pool_free(ep);
    lc_notes_free(&ep->notes);
    free(ep);
}

#define REQ_CHUNK 64

bool shm_req_grow(locus_shm_ep_t *ep)
{
    if (ep->reqmem.n == ep->reqmem.cap) {
        size_t cap = ep->reqmem.cap ? 2 * ep->reqmem.cap : 8;
        void **c = realloc(ep->reqmem.chunk, cap * sizeof *c);
        if (!c)
            return false;
        ep->reqmem.chunk = c;
        ep->reqmem.cap = cap;
    }
    locus_shm_req_t *r = malloc(REQ_CHUNK * sizeof *r);
    if (!r)
        return false;
    ep->reqmem.chunk[ep->reqmem.n++] = r;
    for (int i = 0; i < REQ_CHUNK; i++) {
        r[i].next = ep->free_reqs;
        ep->free_reqs = &r[i];
    }
    return true;
}

/* Leave the job if init joined it (boot's fini is collective: every process
 * of the job leaves, which they do in finalize or a failed init alike). */
static locus_status_t leave_job(locus_shm_ep_t *ep)
{
    locus_status_t st = locus_boot_fini(ep->boot_owned);
    ep->boot_owned = NULL;
    return st;
}

/* The per-peer arrays and the heap's block table. */
static locus_status_t alloc_private(locus_shm_ep_t *ep)
{
    size_t n = (size_t)ep->size;
    ep->q = calloc(n, sizeof *ep->q);
    ep->cached_head = calloc(n, sizeof *ep->cached_head);
    ep->peer.pid = calloc(n, sizeof *ep->peer.pid);
    ep->peer.pfd = calloc(n, sizeof *ep->peer.pfd);
    ep->peer.gone = calloc(n, sizeof *ep->peer.gone);
    ep->peer.far = calloc(n, sizeof *ep->peer.far);
    ep->send.queue = calloc(n, sizeof *ep->send.queue);
    ep->match.rxseq = calloc(n, sizeof *ep->match.rxseq);
    ep->fbox.tx = calloc(n, sizeof *ep->fbox.tx);
    ep->fbox.rx = calloc(ep->plan.fboxes ? ep->plan.fboxes : 1, sizeof *ep->fbox.rx);
    ep->fbox.rx_of = malloc(n * sizeof *ep->fbox.rx_of);
    ep->cma.refused = calloc(n, sizeof *ep->cma.refused);
    if (!ep->q || !ep->cached_head || !ep->peer.pid || !ep->peer.pfd || !ep->peer.gone || !ep->peer.far ||
        !ep->send.queue || !ep->match.rxseq || !ep->fbox.tx || !ep->fbox.rx || !ep->fbox.rx_of ||
        !ep->cma.refused)
        return lc_err(LOCUS_ERR_NO_MEMORY, "shm endpoint bookkeeping for %d processes", ep->size);
    for (size_t r = 0; r < n; r++) {
        ep->peer.pfd[r].fd = -1;
        ep->fbox.rx_of[r] = -1;
        ep->fbox.tx[r].state = ep->plan.fboxes ? FB_NONE : FB_NEVER;
    }
    return shm_pool_init(ep);
}

/* Once attached: views of every ring, the peers' pids, pidfds and placement. */
static void connect_peers(locus_shm_ep_t *ep)
{
    shm_proc_t *me = &ep->procs[ep->rank];
    for (int r = 0; r < ep->size; r++) {
        shmq_view(&ep->q[r], ep->base + ep->lay.queues + (uint64_t)r * ep->lay.queue_stride,
                  ep->lay.ncells, ep->lay.max_len, ep->hdr->salt);
        ep->peer.pid[r] = __atomic_load_n(&ep->procs[r].pid, __ATOMIC_ACQUIRE);
        if (r == ep->rank)
            continue;
        /* A pidfd turns readable when the peer exits: one poll() checks them all. */
        ep->peer.pfd[r].fd = (int)syscall(SYS_pidfd_open, ep->peer.pid[r], 0);
        ep->peer.pfd[r].events = POLLIN;
        /* Unknown L3 (-1) counts as shared, as the copy module does. */
        ep->peer.far[r] = me->l3 >= 0 && ep->procs[r].l3 >= 0 && ep->procs[r].l3 != me->l3;
    }
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
    uint64_t split = 0, piece = 0, ref = 0;
    locus_status_t st = shm_job_ids(ep, opts, job, sizeof job);
    if (!st)
        st = shm_plan_layout(ep->size, opts, &ep->plan, &ep->lay);
    if (!st)
        st = locus_shm_segment_name(job, ep->name, sizeof ep->name);
    if (!st)
        st = lc_tun_enum(LC_TUN_SHM_CMA, &mode);
    if (!st)
        st = lc_tun_size(LC_TUN_SHM_SPLIT, &split);
    if (!st)
        st = lc_tun_size(LC_TUN_SHM_SPLIT_PIECE, &piece);
    if (!st)
        st = lc_tun_size(LC_TUN_SHM_REF, &ref);
    if (!st)
        st = alloc_private(ep);
    /* The copy selector now, not at the first copy of a message: building it
     * loads the topology (milliseconds), which must not happen while a peer
     * waits for this process. Its failure is locus_copy's to report. */
    locus_copy_ctx_t *cc;
    if (!st)
        (void)locus_copy_default_ctx(&cc);
    if (!st)
        st = shm_segment_attach(ep, opts);
    if (st) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s", locus_last_error());
        leave_job(ep);
        ep_free(ep);
        return lc_err(st, "%s", msg);
    }
    ep->cma.mode = mode;
    ep->split.min = split;
    ep->split.piece = piece;
    ep->ref.min = ref;
    connect_peers(ep);
    ep->my_heap = shm_heap_of(ep, ep->rank, 0);
    ep->idle.next_check_ns = lc_now_ns() + 1000000;
    /* Oversubscribed (more local processes than CPUs): yield when idle. A
     * process pinned to one CPU of its own is not oversubscribed. */
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    ep->idle.yield_after = online > 0 && ep->size > online ? 32 : UINT32_MAX;
    *out = ep;
    return LOCUS_OK;
}

locus_status_t locus_shm_finalize(locus_shm_ep_t *ep)
{
    if (!ep)
        return LOCUS_OK;
    /* Flush what we still owe peers (replies to their rendezvous, queued sends). */
    locus_status_t st = LOCUS_OK;
    while (!ep->fatal && ep->send.nactive)
        if ((st = locus_shm_progress(ep)))
            break;
    if (ep->base) {
        shm_publish_heads(ep);
        __atomic_store_n(&ep->procs[ep->rank].state, PROC_FINALIZED, __ATOMIC_RELEASE);
    }
    shm_segment_detach(ep);
    locus_status_t bst = leave_job(ep);
    ep_free(ep);
    return st ? st : bst;
}

int locus_shm_rank(const locus_shm_ep_t *ep) { return ep ? ep->rank : -1; }
int locus_shm_size(const locus_shm_ep_t *ep) { return ep ? ep->size : 0; }
const locus_shm_plan_t *locus_shm_get_plan(const locus_shm_ep_t *ep) { return ep ? &ep->plan : NULL; }
const char *locus_shm_notes(const locus_shm_ep_t *ep) { return ep ? lc_notes_text(&ep->notes) : ""; }

locus_status_t locus_shm_stats(const locus_shm_ep_t *ep, locus_shm_stats_t *out)
{
    if (!ep || !out)
        return lc_err(LOCUS_ERR_INVALID, "locus_shm_stats: %s is NULL", ep ? "output" : "endpoint");
    *out = ep->stats;
    /* What is state anyway is read here rather than counted on the way. */
    out->fboxes_claimed = 0;
    for (int d = 0; d < ep->size; d++)
        out->fboxes_claimed += ep->fbox.tx[d].state == FB_OPEN;
    out->fboxes_polled = (uint32_t)ep->fbox.n;
    out->cma_gbps = ep->cma.rate_cma; /* bytes per ns */
    out->pipe_gbps = ep->cma.rate_pipe;
    return LOCUS_OK;
}
