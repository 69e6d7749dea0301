/* init/fini: join the job, create the heap (shared when the node has other
 * processes), map the node's heaps and unlink their names, decide paths and
 * the atomic agent, bring up the NIC when needed; queries. Every step that
 * can fail on one process ends in an exchange of statuses, so that the job
 * fails together, with the failing rank named, instead of hanging. */
#include "rma/rma_internal.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "core/sysfs.h"
#include "copy/prepare.h"

#include <locus/copy.h>

#include <locus/config.h>

#define MSG_BYTES 224

typedef struct {
    int32_t status;
    char msg[MSG_BYTES];
} agree_t;

locus_status_t rma_agree(locus_rma_t *r, locus_status_t mine, const char *what)
{
    agree_t me = {.status = mine};
    if (mine)
        snprintf(me.msg, sizeof me.msg, "%s", locus_last_error());
    agree_t *all = calloc((size_t)r->size, sizeof *all);
    if (!all)
        return lc_err(LOCUS_ERR_NO_MEMORY, "%s: status table of %d processes", what, r->size);
    locus_status_t st = locus_boot_allgather(r->boot, &me, sizeof me, all);
    if (st) {
        char why[512];
        snprintf(why, sizeof why, "%s", locus_last_error());
        free(all);
        return lc_err(st, "%s: exchanging statuses: %s", what, why);
    }
    for (int q = 0; q < r->size; q++)
        if (all[q].status) {
            agree_t bad = all[q];
            free(all);
            return lc_err((locus_status_t)bad.status, "%s: rank %d: %.*s", what, q, MSG_BYTES, bad.msg);
        }
    free(all);
    return LOCUS_OK;
}

/* What each process tells the others once its heap exists. */
typedef struct {
    int32_t node, pid;
    uint32_t nic_only, pages;
    uint64_t obj_size, user_size;
    char path[288];
    cpu_set_t cpus;  /* where it may run: the node's union tells oversubscription */
} info_t;

static locus_status_t create_heap(locus_rma_t *r, bool shared)
{
    locus_heap_attr_t ha = r->attr.heap;
    ha.size = r->attr.heap_size + RMA_CTRL;
    ha.percent = 0;
    ha.procs = 1;
    char name[128];
    snprintf(name, sizeof name, "locus-%u-%s-h%d", (unsigned)getuid(), locus_boot_job(r->boot), r->rank);
    ha.share_name = shared ? name : NULL;
    /* a heap the NIC registers is pinned page by page by ibv_reg_mr, which
     * would fault a reserved heap in on one thread: fault it in in parallel
     * now (LOCUS_HEAP_POPULATE=reserve gives nothing there) */
    if (!r->cpu_atomics)
        ha.populate = LOCUS_POPULATE_EAGER;
    /* the job's only process: nobody maps or registers its private heap, so
     * its pages come at their first touch, as a shared heap's do (reserve);
     * an eager fault-in made a 1-PE OpenSHMEM no-op with a 4 GiB heap take
     * 0.12 s to start and exit (4.6 s on memory the VM's host had to back
     * again), against 0.01 s reserved (research/LOG.md 2026-11-29 13:10) */
    else if (!shared && ha.populate == LOCUS_POPULATE_AUTO)
        ha.populate = LOCUS_POPULATE_RESERVE;
    /* One topology load for both the heap and the copy selector, built now
     * rather than at the first on-node copy (a stall of milliseconds: OSU's
     * 100 x 256 KiB puts averaged 27 us, not 2.6, paid by the first put or
     * by a peer's first shared piece while the put's owner waited). */
    locus_topo_t *topo = NULL;
    locus_status_t st = locus_topo_load(&topo);
    if (st)
        return st;
    st = locus_heap_create(&ha, topo, &r->heap);
    if (!st)
        copy_prepare(topo);
    locus_topo_destroy(topo);
    if (st)
        return st;
    r->base = locus_heap_base(r->heap);
    r->obj_size = locus_heap_size(r->heap);
    r->user_size = r->obj_size - RMA_CTRL;
    return LOCUS_OK;
}

/* More processes on this node than cpus they may run on together (a
 * process bound to one core sees one cpu of its own); and whether each one
 * is bound to cpus of its own (the masks are disjoint exactly when their
 * sizes add up to their union's): then a wait can spin without holding up
 * a peer that needs its cpu. */
static void node_load(locus_rma_t *r, const info_t *all)
{
    cpu_set_t node;
    CPU_ZERO(&node);
    int procs = 0, cpus = 0;
    for (int q = 0; q < r->size; q++)
        if (all[q].node == r->node) {
            CPU_OR(&node, &node, (cpu_set_t *)&all[q].cpus);
            cpus += CPU_COUNT((cpu_set_t *)&all[q].cpus);
            procs++;
        }
    r->oversubscribed = procs > CPU_COUNT(&node);
    r->own_cpus = cpus == CPU_COUNT(&node);
}

/* True if every cpu of both masks is in one L3 (sysfs): data a put leaves
 * in that L3 is where the peer will read it. */
static bool share_l3(const cpu_set_t *a, const cpu_set_t *b)
{
    int first = -1;
    for (int c = 0; c < CPU_SETSIZE && first < 0; c++)
        if (CPU_ISSET(c, a))
            first = c;
    lc_cache_t l3;
    if (first < 0 || !lc_sysfs_cache("/sys", first, 3, &l3) || !l3.shared.count)
        return false;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if ((CPU_ISSET(c, a) || CPU_ISSET(c, b)) && !lc_cpuset_has(&l3.shared, c))
            return false;
    return true;
}

/* The smallest user part of all heaps is what every process may address. */
static locus_status_t use_infos(locus_rma_t *r, const info_t *all)
{
    node_load(r, all);
    for (int q = 0; q < r->size; q++) {
        if (all[q].nic_only != all[r->rank].nic_only)
            return lc_err(LOCUS_ERR_INVALID, "rma init: LOCUS_RMA_ONNODE differs: rank %d says %s, rank %d %s", q,
                          all[q].nic_only ? "nic" : "auto", r->rank, all[r->rank].nic_only ? "nic" : "auto");
        if (all[q].user_size < r->attr.heap_size)
            return lc_err(LOCUS_ERR_INVALID, "rma init: rank %d has a heap of %llu bytes, this process asked for "
                          "%llu: LOCUS_RMA_HEAP_SIZE must be the same everywhere", q,
                          (unsigned long long)all[q].user_size, (unsigned long long)r->attr.heap_size);
        if (all[q].user_size < r->user_size)
            r->user_size = all[q].user_size;
        rma_peer_t *p = &r->peers[q];
        p->node = all[q].node;
        p->pid = all[q].pid;
        p->obj_size = all[q].obj_size;
        p->path = p->node == r->node && !r->attr.nic_only ? RMA_PATH_LOCAL : RMA_PATH_NIC;
        /* non-temporal stores for big puts only to a peer that may read from
         * another L3: one that shares ours finds the data there */
        p->put_hint = p->path == RMA_PATH_LOCAL && share_l3(&all[r->rank].cpus, &all[q].cpus)
                          ? LOCUS_COPY_HINT_NONE : LOCUS_COPY_HINT_NT_DEST;
    }
    return LOCUS_OK;
}

static locus_status_t map_peers(locus_rma_t *r, const info_t *all)
{
    for (int q = 0; q < r->size; q++) {
        rma_peer_t *p = &r->peers[q];
        if (q == r->rank) {
            p->base = r->base;
            p->path = RMA_PATH_LOCAL;
            continue;
        }
        if (p->path != RMA_PATH_LOCAL)
            continue;
        void *b;
        locus_status_t st = locus_heap_attach(all[q].path, all[q].obj_size, &b);
        if (st)
            return st;
        p->base = b;
        p->mapped = true;
    }
    return LOCUS_OK;
}

/* Heaps: create, tell, map, agree, unlink. After this no name is left. */
static locus_status_t setup_heaps(locus_rma_t *r)
{
    bool shared = locus_boot_local_size(r->boot) > 1 && !r->attr.nic_only;
    locus_status_t st = create_heap(r, shared);
    info_t me = {.node = r->node, .pid = (int32_t)getpid(), .nic_only = r->attr.nic_only,
                 .obj_size = r->obj_size, .user_size = r->user_size};
    if (sched_getaffinity(0, sizeof me.cpus, &me.cpus) != 0)
        for (long c = 0; c < sysconf(_SC_NPROCESSORS_ONLN) && c < CPU_SETSIZE; c++)
            CPU_SET((int)c, &me.cpus);
    if (!st)
        snprintf(me.path, sizeof me.path, "%s", locus_heap_share_path(r->heap));
    if ((st = rma_agree(r, st, "rma init (heap)")))
        return st;
    info_t *all = calloc((size_t)r->size, sizeof *all);
    if (!all)
        return lc_err(LOCUS_ERR_NO_MEMORY, "rma init: info table of %d processes", r->size);
    st = locus_boot_allgather(r->boot, &me, sizeof me, all);
    if (!st)
        st = use_infos(r, all);
    if (!st)
        st = map_peers(r, all);
    free(all);
    st = rma_agree(r, st, "rma init (mapping the node's heaps)");
    /* every local peer mapped ours (or failed): the name can go; once all
     * agree it went, no process returns from init with a name left */
    locus_status_t un = locus_heap_unlink(r->heap);
    if (st)
        return st;
    return rma_agree(r, un, "rma init (unlinking the heap names)");
}

static void describe(locus_rma_t *r, int local_peers)
{
    char b[32];
    locus_heap_stats_t hs;
    locus_heap_stats(r->heap, &hs);
    lc_note(&r->notes, "heap: %s symmetric (+%u B control) per process, %s pages, %s%s", locus_format_size(r->user_size, b, sizeof b),
            RMA_CTRL, locus_heap_pages_name(hs.pages), *locus_heap_share_path(r->heap) ? "shared with the node's processes at " : "private",
            locus_heap_share_path(r->heap));
    lc_note(&r->notes, "heap populate: %s", hs.populate == LOCUS_POPULATE_RESERVE
            ? (*locus_heap_share_path(r->heap) ? "reserve (allocated at init by fallocate, each page zeroed at its first touch)"
                                               : "reserve (private: each page allocated and zeroed at its first touch)")
            : !r->cpu_atomics ? "eager (faulted in in parallel before the NIC registers it)"
                              : "eager (faulted in in parallel at init)");
    if (local_peers)
        lc_note(&r->notes, "on-node: %d other process%s reached by copies into their mapped heaps%s", local_peers,
                local_peers == 1 ? "" : "es",
                r->help_on ? "; large puts shared with waiting peers (LOCUS_RMA_HELP)"
                : r->oversubscribed && r->attr.help_min ? "; puts not shared: more processes than cpus on the node" : "");
    if (!r->cpu_atomics)
        lc_note(&r->notes, "job spans %d node%s%s: atomics by the NIC for every process (self and on-node peers "
                "through loopback)", r->num_nodes, r->num_nodes == 1 ? "" : "s",
                r->attr.nic_only ? " (LOCUS_RMA_ONNODE=nic)" : "");
    else
        lc_note(&r->notes, "job on one node: atomics by the CPU on the mapped heaps");
}

static locus_status_t setup(locus_rma_t *r)
{
    locus_status_t st;
    if (!r->boot) {
        if ((st = locus_boot_init(NULL, &r->boot)))
            return st;
        r->own_boot = true;
    }
    r->rank = locus_boot_rank(r->boot);
    r->size = locus_boot_size(r->boot);
    r->node = locus_boot_node(r->boot);
    r->num_nodes = locus_boot_num_nodes(r->boot);
    /* the job's atomic agent; when it is the NIC, the NIC also registers the heap */
    r->cpu_atomics = r->num_nodes == 1 && !r->attr.nic_only;
    r->reg = r->attr.reg;
    r->failed_rank = -1;
    r->peers = calloc((size_t)r->size, sizeof *r->peers);
    if (!r->peers)
        return lc_err(LOCUS_ERR_NO_MEMORY, "rma init: peer table of %d processes", r->size);
    if ((st = setup_heaps(r)))
        return st;
    bool *need = calloc((size_t)r->size, sizeof *need);
    if (!need)
        return lc_err(LOCUS_ERR_NO_MEMORY, "rma init: %d flags", r->size);
    bool any = false;
    int local_peers = 0;
    for (int q = 0; q < r->size; q++) {
        need[q] = r->peers[q].path == RMA_PATH_NIC || !r->cpu_atomics;
        any |= need[q];
        local_peers += q != r->rank && r->peers[q].path == RMA_PATH_LOCAL;
    }
    rma_help_init(r);
    describe(r, local_peers);
    st = any ? rma_nic_setup(r, need) : LOCUS_OK;
    free(need);
    return st;
}

static locus_status_t check_attr(const locus_rma_attr_t *a)
{
    if (a->heap_size < 8192 || a->heap_size > (1ull << 46))
        return lc_err(LOCUS_ERR_RANGE, "rma heap_size %llu bytes: expected 8 KiB to 64 TiB",
                      (unsigned long long)a->heap_size);
    if ((unsigned)a->reg > LOCUS_RMA_REG_NONE)
        return lc_err(LOCUS_ERR_INVALID, "rma reg %d: expected LOCUS_RMA_REG_CACHE, _STATIC or _NONE", (int)a->reg);
    return LOCUS_OK;
}

locus_status_t locus_rma_init(const locus_rma_attr_t *attr, locus_rma_t **out)
{
    if (!out)
        return lc_err(LOCUS_ERR_INVALID, "rma init: out NULL");
    locus_rma_attr_t def;
    if (!attr) {
        locus_rma_attr_init(&def);
        locus_status_t st = locus_rma_attr_from_env(&def);
        if (st)
            return st;
        attr = &def;
    }
    locus_status_t st = check_attr(attr);
    if (st)
        return st;
    locus_rma_t *r = calloc(1, sizeof *r);
    if (!r)
        return lc_err(LOCUS_ERR_NO_MEMORY, "rma init: handle");
    r->attr = *attr;
    r->boot = attr->boot;
    if ((st = setup(r))) {
        char why[512];
        snprintf(why, sizeof why, "%s", locus_last_error());
        r->broken = true; /* no collective at teardown: the others fail too */
        locus_rma_fini(r);
        return lc_err(st, "%s", why);
    }
    *out = r;
    return LOCUS_OK;
}

/* Local teardown: endpoints, registrations, mappings, heap, boot. */
static void teardown(locus_rma_t *r)
{
    rma_nic_teardown(r);
    for (int q = 0; r->peers && q < r->size; q++)
        if (r->peers[q].mapped)
            locus_heap_detach(r->peers[q].base, r->peers[q].obj_size);
    rma_regions_free(r);
    locus_heap_destroy(r->heap);
    free(r->peers);
    free(r->help_peers);
    if (r->own_boot)
        locus_boot_fini(r->boot);
    lc_notes_free(&r->notes);
    free(r);
}

locus_status_t locus_rma_fini(locus_rma_t *r)
{
    if (!r)
        return LOCUS_OK;
    locus_status_t st = LOCUS_OK;
    if (!r->broken) {
        /* nobody may unmap or deregister its heap while others still reach
         * it: everything completes, then two synchronisations (the second
         * after our own flag writes were acknowledged, so no QP goes away
         * under a write still in flight) */
        st = locus_rma_barrier(r);
        if (!st && r->ifc && !(st = rdma_iface_flush(r->ifc)))
            st = locus_boot_barrier(r->boot);
    }
    char why[512] = "";
    if (st)
        snprintf(why, sizeof why, "%s", locus_last_error());
    teardown(r);
    return st ? lc_err(st, "rma fini: %s", why) : LOCUS_OK;
}

int locus_rma_rank(const locus_rma_t *r) { return r ? r->rank : -1; }
int locus_rma_size(const locus_rma_t *r) { return r ? r->size : 0; }
locus_boot_t *locus_rma_boot(const locus_rma_t *r) { return r ? r->boot : NULL; }
void *locus_rma_heap_base(const locus_rma_t *r) { return r ? r->base : NULL; }
uint64_t locus_rma_heap_size(const locus_rma_t *r) { return r ? r->user_size : 0; }
const char *locus_rma_notes(const locus_rma_t *r) { return r ? lc_notes_text(&r->notes) : ""; }

bool locus_rma_oversubscribed(const locus_rma_t *r) { return r && r->oversubscribed; }
bool locus_rma_own_cpus(const locus_rma_t *r) { return r && r->own_cpus; }

bool locus_rma_is_local(const locus_rma_t *r, int rank)
{
    return r && rank >= 0 && rank < r->size && r->peers[rank].path == RMA_PATH_LOCAL;
}

locus_status_t locus_rma_stats(const locus_rma_t *r, locus_rma_stats_t *out)
{
    if (!r || !out)
        return lc_err(LOCUS_ERR_INVALID, "rma stats: handle and out must not be NULL");
    *out = r->stats;
    if (r->cache) {
        locus_reg_stats_t rs;
        if (locus_reg_stats(r->cache, &rs) == LOCUS_OK)
            out->registrations = rs.registrations;
    }
    return LOCUS_OK;
}
