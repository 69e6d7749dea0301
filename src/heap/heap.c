/* The fixed heap's life: the shared object, reservation, policy, fault-in,
 * verification; the request is resolved in heap_resolve.c first. */
#include "heap/heap_internal.h"

#include "core/config.h"
#include "core/error.h"

#include <locus/config.h>

#include <errno.h>
#include <numaif.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MAP_HUGE_SHIFT
#define MAP_HUGE_SHIFT 26
#endif
#ifndef MPOL_LOCAL
#define MPOL_LOCAL 4
#endif


static uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

/* The object behind a shared heap: in dir, or (dir "") on a private huge
 * tmpfs; when that cannot be had and the kind was auto's choice, 4 KiB
 * pages in /dev/shm, saying why. */
static locus_status_t create_shared(struct locus_heap *h, const locus_heap_attr_t *a, heap_kind_t *k, const char *dir)
{
    if (*dir)
        return heap_share_create(h, dir, a->share_name);
    locus_status_t st = heap_share_create_private(h);
    if (!st) {
        lc_note(&h->notes, "shared heap on a private huge tmpfs (huge=always), reached by the node's processes "
                "through %s", h->share_path);
        return LOCUS_OK;
    }
    if (a->pages != LOCUS_PAGES_AUTO)
        return st;
    lc_note(&h->notes, "auto (shared): 4k on /dev/shm after all: %s", locus_last_error());
    *k = (heap_kind_t){LOCUS_PAGES_4K, 4096};
    if (a->populate == LOCUS_POPULATE_AUTO && h->populate == LOCUS_POPULATE_RESERVE) {
        lc_note(&h->notes, "auto: populate eager after all (%s)", AUTO_4K_EAGER);
        h->populate = LOCUS_POPULATE_EAGER;
    }
    return heap_share_create(h, "/dev/shm", a->share_name);
}

/* Reserve and firsttouch: the pages are allocated, nothing is faulted. */
static locus_status_t allocate(struct locus_heap *h, const locus_heap_attr_t *a)
{
    locus_status_t st = heap_share_fallocate(h);
    if (st)
        return st;
    if (a->policy == LOCUS_HEAP_FIRSTTOUCH)
        lc_note(&h->notes, "firsttouch on a shared heap: pages allocated at create by fallocate "
                "(placed by the creating thread's policy)");
    else
        lc_note(&h->notes, "populate reserve: pages allocated at create by fallocate under the %s policy, "
                "zeroed and mapped at their first touch", locus_heap_policy_name(a->policy));
    return LOCUS_OK;
}

/* The base is aligned to the largest power of two not above the size (at
 * least a page, at most 1 TiB): it costs address space only, and then an
 * allocator that aligns offsets aligns addresses too, for any alignment a
 * block of this heap can have (shmem_align of 64 MiB in a 256 MiB heap). */
static uint64_t base_align(uint64_t size, uint64_t page)
{
    uint64_t a = page;
    while (a < (1ull << 40) && a * 2 <= size)
        a *= 2;
    return a;
}

/* mmap a PROT_NONE span, then the heap inside it at base_align with one
 * guard page either side. */
static locus_status_t reserve(struct locus_heap *h, heap_kind_t k)
{
    uint64_t align = base_align(h->size, k.page), len = h->size + align + 2 * HEAP_GUARD;
    char *r = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (r == MAP_FAILED)
        return lc_err_errno(LOCUS_ERR_NO_MEMORY, errno, "heap: reserving %llu bytes of address space",
                               (unsigned long long)len);
    char *base = (char *)round_up((uintptr_t)r + HEAP_GUARD, align);
    char *end = base + h->size + HEAP_GUARD;
    if (base - HEAP_GUARD > r)
        munmap(r, (size_t)(base - HEAP_GUARD - r));
    if (r + len > end)
        munmap(end, (size_t)(r + len - end));
    h->base = base;
    if (h->shared) { /* the object replaces the reservation at base */
        locus_status_t st = heap_share_map(h);
        if (st) {
            munmap(base - HEAP_GUARD, h->size + 2 * HEAP_GUARD);
            h->base = NULL;
        }
        return st;
    }
    int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED;
    if (h->hugetlb)
        flags |= MAP_HUGETLB | (k.page == (1ull << 30) ? 30 : 21) << MAP_HUGE_SHIFT;
    else if (h->populate != LOCUS_POPULATE_RESERVE) /* reserve: commit-accounted now, faulted later */
        flags |= MAP_NORESERVE;
    h->base = base;
    if (mmap(base, h->size, PROT_READ | PROT_WRITE, flags, -1, 0) == MAP_FAILED) {
        int e = errno;
        munmap(base - HEAP_GUARD, h->size + 2 * HEAP_GUARD);
        h->base = NULL;
        char b[32];
        return lc_err_errno(LOCUS_ERR_NO_MEMORY, e, "heap: mmap of %s with %s pages",
                               locus_format_size(h->size, b, sizeof b), locus_heap_pages_name(k.kind));
    }
    return LOCUS_OK;
}

static locus_status_t place(struct locus_heap *h, const locus_heap_attr_t *a, const locus_topo_t *topo,
                            const int *idx, int n, heap_kind_t k)
{
    if (k.kind == LOCUS_PAGES_THP && madvise(h->base, h->size, MADV_HUGEPAGE))
        return lc_err_errno(LOCUS_ERR_SYSTEM, errno, "heap: madvise(MADV_HUGEPAGE)");
    if (k.kind == LOCUS_PAGES_4K && madvise(h->base, h->size, MADV_NOHUGEPAGE) && errno != EINVAL)
        return lc_err_errno(LOCUS_ERR_SYSTEM, errno, "heap: madvise(MADV_NOHUGEPAGE)");
    if (a->policy == LOCUS_HEAP_FIRSTTOUCH)
        return LOCUS_OK;
    if (a->policy == LOCUS_HEAP_LOCAL) {
        if (mbind(h->base, h->size, MPOL_LOCAL, NULL, 0, 0))
            return lc_err_errno(LOCUS_ERR_SYSTEM, errno, "heap: mbind(MPOL_LOCAL)");
        return LOCUS_OK;
    }
    unsigned long mask[1024 / (8 * sizeof(unsigned long))] = {0};
    int maxos = 0;
    for (int i = 0; i < n; i++) {
        locus_topo_node_t nd;
        locus_topo_node(topo, idx[i], &nd);
        mask[nd.os_index / (8 * sizeof(unsigned long))] |= 1ul << (nd.os_index % (8 * sizeof(unsigned long)));
        if (nd.os_index > maxos)
            maxos = nd.os_index;
    }
    int mode = a->policy == LOCUS_HEAP_BIND ? MPOL_BIND : MPOL_INTERLEAVE;
    if (mbind(h->base, h->size, mode, mask, (unsigned long)maxos + 2, 0))
        return lc_err_errno(LOCUS_ERR_SYSTEM, errno, "heap: mbind(%s)",
                               mode == MPOL_BIND ? "MPOL_BIND" : "MPOL_INTERLEAVE");
    return LOCUS_OK;
}

/* Huge pages the kernel zeroes subpage by subpage ending with the faulting
 * one (THP, 2 MiB hugetlb: folio_zero_user -> process_huge_page) are faulted
 * through their last 4 KiB so that the clearing runs first to last; gigantic
 * pages (1 GiB) are always cleared first to last and 4k has no subpages. */
static uint64_t tail_unit(heap_kind_t k, locus_heap_fault_order_t order)
{
    return order != LOCUS_FAULT_FIRST && k.page > 4096 && k.page < (1ull << 30) ? k.page : 0;
}

/* Which node of the set page 0 of an interleaved heap is on. The kernel
 * interleaves on the page's offset (address / page for anonymous memory, the
 * offset in the mapping for hugetlb), and kernels before 6.7 truncate that
 * index to 32 bits before the modulo; rather than depend on the version,
 * fault page 0 and ask where it went. Pages then follow round-robin (except
 * across a 2^32-page wrap on old kernels, which only costs locality). */
static locus_status_t interleave_phase(struct locus_heap *h, const locus_topo_t *topo, const int *idx, int n,
                                       heap_kind_t k, uint64_t *phase)
{
    int use_touch = 0, status = -1;
    int e = heap_populate(h->base, k.page, tail_unit(k, h->fault_order), k.kind == LOCUS_PAGES_THP, k.page, &use_touch);
    if (e)
        return lc_err_errno(LOCUS_ERR_NO_MEMORY, e, "heap fault-in of the first page");
    void *p = h->base;
    if (move_pages(0, 1, &p, NULL, &status, 0) == 0)
        for (int i = 0; i < n; i++) {
            locus_topo_node_t nd;
            locus_topo_node(topo, idx[i], &nd);
            if (nd.os_index == status)
                *phase = (uint64_t)i;
        }
    return LOCUS_OK;
}

/* Slots, cores and threads for the policy; then the parallel fault-in. */
/* The fault-in's slots: one per node of the placement, each with its cpus;
 * a bound heap has one slot, the cpus of all its nodes. */
typedef struct fault_slots {
    int n;
    int cpus[HEAP_PLAN_MAX_SLOTS];
    const int *list[HEAP_PLAN_MAX_SLOTS];
    int bind_cpus[1024];
} fault_slots_t;

static void fault_slots(const locus_heap_attr_t *a, const locus_topo_t *topo, const int *idx, int n,
                        fault_slots_t *sl)
{
    int nb = 0;
    memset(sl->cpus, 0, sizeof sl->cpus);
    memset(sl->list, 0, sizeof sl->list);
    sl->n = a->policy == LOCUS_HEAP_BIND ? 1 : n;
    for (int i = 0; i < n; i++) {
        locus_topo_node_t nd;
        locus_topo_node(topo, idx[i], &nd);
        if (a->policy == LOCUS_HEAP_BIND) {
            /* one slot: the cores of the bound nodes, interleaved node by node */
            for (int c = 0; c < nd.num_cpus && nb < 1024; c++)
                sl->bind_cpus[nb++] = nd.cpus[c];
        } else {
            sl->cpus[i] = nd.num_cpus;
            sl->list[i] = nd.cpus;
        }
    }
    if (a->policy == LOCUS_HEAP_BIND) {
        sl->cpus[0] = nb;
        sl->list[0] = sl->bind_cpus;
    }
}

static locus_status_t fault(struct locus_heap *h, const locus_heap_attr_t *a, const locus_topo_t *topo,
                            const int *idx, int n, heap_kind_t k)
{
    locus_status_t st0 = LOCUS_OK;
    fault_slots_t sl;
    fault_slots(a, topo, idx, n, &sl);
    int nslots = sl.n;
    const int *slot_cpus = sl.cpus;
    int want = a->threads, cores = 0;
    for (int i = 0; i < nslots; i++)
        cores += slot_cpus[i];
    if (!want && !cores) /* only memory-only nodes: every usable cpu helps */
        want = locus_topo_num_cpus(topo);
    int max_threads = want ? want : 4096;
    int *home = calloc((size_t)max_threads, sizeof(int)), *core = calloc((size_t)max_threads, sizeof(int));
    int *cpus = calloc((size_t)max_threads, sizeof(int));
    if (!home || !core || !cpus) {
        free(home); free(core); free(cpus);
        return lc_err(LOCUS_ERR_NO_MEMORY, "heap: cannot allocate thread tables");
    }
    int nt = heap_plan_threads(nslots, slot_cpus, want, max_threads, home, core);
    for (int t = 0; t < nt; t++)
        cpus[t] = home[t] >= 0 ? sl.list[home[t]][core[t]]
                               : locus_topo_cpu(topo, core[t] % locus_topo_num_cpus(topo));
    /* local: node j's block is proportional to its threads, so a static
     * schedule over the same threads finds its block on its node */
    int weights[HEAP_PLAN_MAX_SLOTS] = {0};
    for (int t = 0; t < nt; t++)
        if (home[t] >= 0)
            weights[home[t]]++;
    uint64_t chunk = a->chunk ? a->chunk : lc_tun_default_u64(LC_TUN_HEAP_CHUNK);
    uint64_t units = h->size / k.page;
    heap_plan_t *plan = malloc(sizeof *plan);
    if (!plan) {
        free(home); free(core); free(cpus);
        return lc_err(LOCUS_ERR_NO_MEMORY, "heap: cannot allocate the plan");
    }
    uint64_t phase = 0;
    if (a->policy == LOCUS_HEAP_INTERLEAVE && n > 1 && (st0 = interleave_phase(h, topo, idx, n, k, &phase)))
        goto out;
    heap_plan_init(plan, units, k.page, round_up(chunk, k.page) / k.page, nslots,
                   a->policy == LOCUS_HEAP_INTERLEAVE, phase,
                   a->policy == LOCUS_HEAP_LOCAL ? weights : NULL);
    heap_fault_args_t fa = {h->base, plan, nt, cpus, home, h->hugetlb ? k.page : 4096, tail_unit(k, h->fault_order),
                            k.kind == LOCUS_PAGES_THP, a->policy == LOCUS_HEAP_LOCAL, a->progress,
                            a->progress_arg};
    bool fallback = false;
    st0 = heap_fault_in(&fa, &fallback);
    h->stats.threads = nt;
    h->stats.populate_fallback = fallback;
    if (fallback)
        lc_note(&h->notes, "MADV_POPULATE_WRITE unsupported (kernel < 5.14): pages written every %llu bytes",
                  (unsigned long long)fa.touch_stride);
out:
    free(plan);
    free(home);
    free(core);
    free(cpus);
    return st0;
}

/* A bound heap must fit the memory of the nodes it is bound to. */
static locus_status_t check_bind_size(const locus_topo_t *topo, const int *idx, int n, uint64_t size)
{
    uint64_t mem = 0;
    for (int i = 0; i < n; i++) {
        locus_topo_node_t nd;
        locus_topo_node(topo, idx[i], &nd);
        mem += nd.memory_bytes;
    }
    char b1[32], b2[32];
    if (mem && size > mem)
        return lc_err(LOCUS_ERR_RANGE, "size %s: larger than the %s of memory of the bound nodes",
                      locus_format_size(size, b1, sizeof b1), locus_format_size(mem, b2, sizeof b2));
    return LOCUS_OK;
}

static void init_stats(struct locus_heap *h, const locus_heap_attr_t *a, const locus_topo_t *topo, heap_kind_t k)
{
    locus_heap_stats_t *s = &h->stats;
    s->size = h->size;
    s->policy = a->policy;
    s->pages_requested = a->pages;
    s->pages = k.kind;
    s->page_size = k.page;
    s->num_nodes = locus_topo_num_nodes(topo);
    if (s->num_nodes > LOCUS_HEAP_MAX_NODES)
        s->num_nodes = LOCUS_HEAP_MAX_NODES;
    for (int i = 0; i < s->num_nodes; i++) {
        locus_topo_node_t nd;
        locus_topo_node(topo, i, &nd);
        s->node_os[i] = nd.os_index;
    }
}

/* After the reservation and placement: eager fault-in, or for a shared heap
 * at least the allocation (tmpfs allocates at first touch and SIGBUSes when
 * full: allocate now, fail now). */
static locus_status_t populate(struct locus_heap *h, const locus_heap_attr_t *a, const locus_topo_t *topo,
                               const int *idx, int n, heap_kind_t k)
{
    locus_heap_stats_t *s = &h->stats;
    double t1 = lc_now_s();
    locus_status_t st;
    if (h->populate == LOCUS_POPULATE_EAGER) {
        if ((st = fault(h, a, topo, idx, n, k))) {
            if (!h->shared || st != LOCUS_ERR_NO_MEMORY)
                return st;
            char why[512];
            snprintf(why, sizeof why, "%s", locus_last_error());
            return lc_err(st, "%s (shared heap %s: is its file system full?)", why, h->share_path);
        }
        s->fault_s = lc_now_s() - t1;
        s->gbps = (double)h->size / (s->reserve_s + s->fault_s) / 1e9;
    } else if (h->shared) {
        if ((st = allocate(h, a)))
            return st;
        s->fault_s = lc_now_s() - t1;
    }
    return LOCUS_OK;
}

static locus_status_t verify(struct locus_heap *h, const locus_heap_attr_t *a)
{
    if (h->populate != LOCUS_POPULATE_RESERVE || a->policy == LOCUS_HEAP_FIRSTTOUCH ||
        a->verify == LOCUS_VERIFY_NONE)
        return heap_verify_now(h, a->verify);
    /* move_pages sees mapped pages only: residency now, placement later */
    locus_status_t st = heap_verify_now(h, LOCUS_VERIFY_NONE);
    if (st)
        return st;
    lc_note(&h->notes, "verify %s deferred: no page is mapped before its first touch (locus_heap_verify "
            "after the heap was written checks the placement)", locus_heap_verify_name(a->verify));
    return LOCUS_OK;
}

static locus_status_t create(struct locus_heap *h, const locus_heap_attr_t *a, const locus_topo_t *topo)
{
    locus_status_t st;
    uint64_t size = 0;
    heap_kind_t k = {LOCUS_PAGES_4K, 4096};
    int idx[HEAP_PLAN_MAX_SLOTS], n = 0;
    if ((st = heap_check_attr(a)) || (st = heap_resolve_size(a, &size)))
        return st;
    if (a->policy != LOCUS_HEAP_FIRSTTOUCH && (st = heap_resolve_nodes(a, topo, idx, &n)))
        return st;
    if (a->policy == LOCUS_HEAP_BIND && (st = check_bind_size(topo, idx, n, size)))
        return st;
    char dir[256] = "";
    if (a->share_name && (st = heap_share_check_name(a->share_name)))
        return st;
    if (a->share_name ? (st = heap_resolve_kind_shared(h, a, size, &k, dir, sizeof dir))
                      : (st = heap_resolve_kind(h, a->pages, topo, size, &k)))
        return st;
    h->size = round_up(size, k.page);
    h->hugetlb = k.kind == LOCUS_PAGES_HUGE2M || k.kind == LOCUS_PAGES_HUGE1G;
    h->shared = a->share_name != NULL;
    h->populate = heap_resolve_populate(h, a, k, dir, n);
    if (h->shared && (st = create_shared(h, a, &k, dir)))
        return st;
    init_stats(h, a, topo, k);
    double t0 = lc_now_s();
    if ((st = reserve(h, k)) || (st = place(h, a, topo, idx, n, k)))
        return st;
    h->stats.reserve_s = lc_now_s() - t0;
    h->stats.populate = h->populate;
    if ((st = populate(h, a, topo, idx, n, k)))
        return st;
    h->notes_base = h->notes.len;
    return verify(h, a);
}

locus_status_t locus_heap_create(const locus_heap_attr_t *attr, const locus_topo_t *topo,
                                 locus_heap_t **out)
{
    if (!attr || !out)
        return lc_err(LOCUS_ERR_INVALID, "heap create: attr and out must not be NULL");
    locus_topo_t *own = NULL;
    locus_status_t st;
    if (!topo) {
        if ((st = locus_topo_load(&own)))
            return st;
        topo = own;
    }
    struct locus_heap *h = calloc(1, sizeof *h);
    if (!h) {
        locus_topo_destroy(own);
        return lc_err(LOCUS_ERR_NO_MEMORY, "heap: cannot allocate the heap object");
    }
    h->share_fd = -1;
    h->samples = attr->samples ? attr->samples : lc_tun_default_u64(LC_TUN_HEAP_SAMPLES);
    h->fault_order = attr->fault_order;
    if ((unsigned)h->fault_order > LOCUS_FAULT_FIRST) {
        free(h);
        locus_topo_destroy(own);
        return lc_err(LOCUS_ERR_INVALID, "heap fault_order %d: expected 0 (auto), 1 (last) or 2 (first)",
                      (int)attr->fault_order);
    }
    st = create(h, attr, topo);
    locus_topo_destroy(own);
    if (st) {
        locus_heap_destroy(h);
        return st;
    }
    *out = h;
    return LOCUS_OK;
}

void locus_heap_destroy(locus_heap_t *h)
{
    if (!h)
        return;
    if (h->base)
        munmap(h->base - HEAP_GUARD, h->size + 2 * HEAP_GUARD);
    heap_share_release(h);
    lc_notes_free(&h->notes);
    free(h);
}

void *locus_heap_base(const locus_heap_t *h) { return h ? h->base : NULL; }
uint64_t locus_heap_size(const locus_heap_t *h) { return h ? h->size : 0; }

locus_status_t locus_heap_stats(const locus_heap_t *h, locus_heap_stats_t *out)
{
    if (!h || !out)
        return lc_err(LOCUS_ERR_INVALID, "heap stats: heap and out must not be NULL");
    *out = h->stats;
    out->notes = lc_notes_text(&h->notes);
    return LOCUS_OK;
}

locus_status_t locus_heap_verify(locus_heap_t *h, locus_heap_verify_t mode)
{
    if (!h)
        return lc_err(LOCUS_ERR_INVALID, "heap verify: heap must not be NULL");
    if ((unsigned)mode > LOCUS_VERIFY_NONE)
        return lc_err(LOCUS_ERR_INVALID, "verify %d: expected all, sample or none", (int)mode);
    return heap_verify_now(h, mode);
}
