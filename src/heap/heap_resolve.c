/* The fixed heap's request, resolved before anything is mapped: the page
 * kind (auto's choice, a pool or mount that can serve it), the populate
 * mode, the per-process size, the node set; and the attribute checks. */
#include "heap/heap_internal.h"

#include "core/error.h"

#include <locus/config.h>

#include <stdio.h>
#include <unistd.h>

static uint64_t phys_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    return pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz : 0;
}

/* Free hugetlb pages of this size now (free minus reserved), -1 if no pool. */
static long long hugetlb_available(uint64_t page_size)
{
    char path[128];
    long long v[2];
    const char *f[2] = {"free_hugepages", "resv_hugepages"};
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "/sys/kernel/mm/hugepages/hugepages-%llukB/%s",
                 (unsigned long long)(page_size >> 10), f[i]);
        FILE *fp = fopen(path, "r");
        if (!fp)
            return -1;
        int ok = fscanf(fp, "%lld", &v[i]) == 1;
        fclose(fp);
        if (!ok)
            return -1;
    }
    return v[0] > v[1] ? v[0] - v[1] : 0;
}

static locus_status_t huge_error(locus_heap_pages_t kind, uint64_t page, uint64_t size, long long avail)
{
    unsigned long long need = (unsigned long long)((size + page - 1) / page);
    char b[32];
    if (avail < 0)
        return lc_err(LOCUS_ERR_UNSUPPORTED,
                         "pages %s: this kernel has no %s hugetlb pool "
                         "(/sys/kernel/mm/hugepages/hugepages-%llukB); use thp, 4k or auto",
                         locus_heap_pages_name(kind), locus_format_size(page, b, sizeof b),
                         (unsigned long long)(page >> 10));
    /* the pool may already hold pages others use: ask for the missing ones on top */
    long long nr = 0;
    char path[128];
    snprintf(path, sizeof path, "/sys/kernel/mm/hugepages/hugepages-%llukB/nr_hugepages",
             (unsigned long long)(page >> 10));
    FILE *f = fopen(path, "r");
    if (f) {
        if (fscanf(f, "%lld", &nr) != 1)
            nr = 0;
        fclose(f);
    }
    return lc_err(LOCUS_ERR_NO_MEMORY,
                     "pages %s: %llu pages of %s needed, %lld free in the hugetlb pool; reserve them "
                     "with: echo %llu > %s (as root), or use thp, 4k or auto",
                     locus_heap_pages_name(kind), need, locus_format_size(page, b, sizeof b), avail,
                     (unsigned long long)nr + need - (unsigned long long)avail, path);
}

/* A hugetlb kind (huge2m, huge1g) if its pool has the free pages for size. */
static locus_status_t pool_kind(locus_heap_pages_t want, uint64_t size, heap_kind_t *out)
{
    uint64_t page = want == LOCUS_PAGES_HUGE1G ? 1ull << 30 : 2ull << 20;
    long long avail = hugetlb_available(page);
    if (avail < 0 || (uint64_t)avail < (size + page - 1) / page)
        return huge_error(want, page, size, avail);
    *out = (heap_kind_t){want, page};
    return LOCUS_OK;
}

/* Resolve auto and check that the kind can be had; size is the request. */
locus_status_t heap_resolve_kind(struct locus_heap *h, locus_heap_pages_t want,
                                   const locus_topo_t *topo, uint64_t size, heap_kind_t *out)
{
    locus_thp_mode_t thp = locus_topo_thp_mode(topo);
    uint64_t thp_size = locus_topo_thp_size(topo) ? locus_topo_thp_size(topo) : (2ull << 20);
    const uint64_t pg[2] = {1ull << 30, 2ull << 20};
    const locus_heap_pages_t pk[2] = {LOCUS_PAGES_HUGE1G, LOCUS_PAGES_HUGE2M};
    switch (want) {
    case LOCUS_PAGES_4K:
        *out = (heap_kind_t){LOCUS_PAGES_4K, 4096};
        return LOCUS_OK;
    case LOCUS_PAGES_THP:
        if (thp == LOCUS_THP_NEVER || thp == LOCUS_THP_UNAVAILABLE)
            return lc_err(LOCUS_ERR_UNSUPPORTED,
                             "pages thp: transparent huge pages are %s on this machine "
                             "(/sys/kernel/mm/transparent_hugepage/enabled); use 4k, huge2m or auto",
                             locus_thp_mode_name(thp));
        *out = (heap_kind_t){LOCUS_PAGES_THP, thp_size};
        return LOCUS_OK;
    case LOCUS_PAGES_HUGE2M:
    case LOCUS_PAGES_HUGE1G:
        return pool_kind(want, size, out);
    case LOCUS_PAGES_AUTO:
        for (int i = 0; i < 2; i++) {
            long long avail = hugetlb_available(pg[i]);
            /* 1 GiB pages only when the heap is at least one page: no 1 GiB for a 64 MiB heap */
            if (avail > 0 && (uint64_t)avail >= (size + pg[i] - 1) / pg[i] && size >= pg[i]) {
                *out = (heap_kind_t){pk[i], pg[i]};
                lc_note(&h->notes, "auto: chose %s (%lld free pages in the pool)",
                          locus_heap_pages_name(pk[i]), avail);
                return LOCUS_OK;
            }
        }
        if (thp != LOCUS_THP_NEVER && thp != LOCUS_THP_UNAVAILABLE) {
            *out = (heap_kind_t){LOCUS_PAGES_THP, thp_size};
            lc_note(&h->notes, "auto: chose thp (no hugetlb pool with enough free pages; THP mode %s)",
                      locus_thp_mode_name(thp));
        } else {
            *out = (heap_kind_t){LOCUS_PAGES_4K, 4096};
            lc_note(&h->notes, "auto: chose 4k (no hugetlb pool with enough free pages, THP %s)",
                      locus_thp_mode_name(thp));
        }
        return LOCUS_OK;
    }
    return lc_err(LOCUS_ERR_INVALID, "pages %d: expected 4k, thp, huge2m, huge1g or auto", (int)want);
}

/* A shared heap: tmpfs for 4k/thp (thp only as shmem_enabled allows),
 * hugetlbfs for huge2m/huge1g (a writable mount of that page size and the
 * pool's pages). *dir: where its object goes. */
locus_status_t heap_resolve_kind_shared(struct locus_heap *h, const locus_heap_attr_t *a, uint64_t size,
                                          heap_kind_t *out, char *dir, size_t dirlen)
{
    locus_heap_pages_t want = a->pages;
    char mode[32], why[128] = "LOCUS_HEAP_PRIVATE_TMPFS=0";
    bool thp_ok = heap_share_thp_ok(mode, sizeof mode);
    /* where the system refuses shared THP, a tmpfs of our own (dir "") */
    bool private_ok = !thp_ok && a->private_tmpfs && heap_share_private_ok(why, sizeof why);
    const uint64_t pg[2] = {1ull << 30, 2ull << 20};
    const locus_heap_pages_t pk[2] = {LOCUS_PAGES_HUGE1G, LOCUS_PAGES_HUGE2M};
    snprintf(dir, dirlen, "/dev/shm");
    switch (want) {
    case LOCUS_PAGES_4K:
        *out = (heap_kind_t){LOCUS_PAGES_4K, 4096};
        return LOCUS_OK;
    case LOCUS_PAGES_THP:
        if (!thp_ok && !private_ok)
            return lc_err(LOCUS_ERR_UNSUPPORTED,
                          "pages thp on a shared heap: shared-memory THP is '%s' here "
                          "(/sys/kernel/mm/transparent_hugepage/shmem_enabled) and no private huge tmpfs (%s); "
                          "use 4k, huge2m or auto", mode, why);
        if (private_ok)
            dir[0] = '\0';
        *out = (heap_kind_t){LOCUS_PAGES_THP, 2ull << 20};
        return LOCUS_OK;
    case LOCUS_PAGES_HUGE2M:
    case LOCUS_PAGES_HUGE1G: {
        locus_status_t st = pool_kind(want, size, out);
        if (st)
            return st;
        uint64_t page = out->page;
        char b[32];
        if (!heap_share_hugetlbfs(page, dir, dirlen))
            return lc_err(LOCUS_ERR_UNSUPPORTED,
                          "pages %s on a shared heap: no writable hugetlbfs mount of %s pages "
                          "(mount -t hugetlbfs -o pagesize=%s none /dev/hugepages); use 4k, thp or auto",
                          locus_heap_pages_name(want), locus_format_size(page, b, sizeof b),
                          page == pg[0] ? "1G" : "2M");
        return LOCUS_OK;
    }
    case LOCUS_PAGES_AUTO:
        for (int i = 0; i < 2; i++) {
            long long avail = hugetlb_available(pg[i]);
            if (avail > 0 && (uint64_t)avail >= (size + pg[i] - 1) / pg[i] && size >= pg[i] &&
                heap_share_hugetlbfs(pg[i], dir, dirlen)) {
                *out = (heap_kind_t){pk[i], pg[i]};
                lc_note(&h->notes, "auto (shared): chose %s in %s (%lld free pages in the pool)",
                        locus_heap_pages_name(pk[i]), dir, avail);
                return LOCUS_OK;
            }
        }
        snprintf(dir, dirlen, "/dev/shm");
        if (thp_ok) {
            *out = (heap_kind_t){LOCUS_PAGES_THP, 2ull << 20};
            lc_note(&h->notes, "auto (shared): chose thp on /dev/shm (no hugetlbfs mount with enough free "
                    "pages; shmem_enabled %s)", mode);
        } else if (private_ok && size >= (2ull << 20)) {
            dir[0] = '\0';
            *out = (heap_kind_t){LOCUS_PAGES_THP, 2ull << 20};
            lc_note(&h->notes, "auto (shared): chose thp on a private huge tmpfs (no hugetlbfs mount with enough "
                    "free pages; shared-memory THP is '%s' in shmem_enabled)", mode);
        } else {
            *out = (heap_kind_t){LOCUS_PAGES_4K, 4096};
            lc_note(&h->notes, "auto (shared): chose 4k on /dev/shm (no hugetlbfs mount with enough free pages; "
                    "shared-memory THP is '%s' in /sys/kernel/mm/transparent_hugepage/shmem_enabled)", mode);
        }
        return LOCUS_OK;
    }
    return lc_err(LOCUS_ERR_INVALID, "pages %d: expected 4k, thp, huge2m, huge1g or auto", (int)want);
}

/* LOCUS_HEAP_POPULATE. Eager faults every page in (parallel, pinned):
 * allocated, zeroed and mapped. Reserve fallocates a shared heap's tmpfs
 * file instead: every page allocated and charged now (a shortage fails
 * create, not a later touch), zeroed by the first touch right before the
 * program's own write, so init does not pay for zeroes a program overwrites
 * anyway, nor for memory it never uses (docs/ARCHITECTURE.md, heap). A
 * private heap has no file: reserve, asked for (rma does for a job's only
 * process), maps it under its policy and faults nothing, the kernel's
 * commit accounting (no MAP_NORESERVE) or hugetlb's reservation at mmap
 * standing in for fallocate; auto faults it in. hugetlbfs clears every page
 * inside fallocate, on one thread: eager. auto takes reserve where the kernel puts a
 * fallocated page where the fault-in would have: not local/bind over
 * several nodes (there each block goes to its faulting thread's node, one
 * fallocating thread would put it all on its own); and only on our private
 * huge tmpfs (dir ""; huge=always: fallocate gets 2 MiB folios): thp on
 * /dev/shm may follow MADV_HUGEPAGE, which fallocate does not see, and 4
 * KiB pages are slower reserved than faulted in (research/LOG.md, heap
 * reserve). A firsttouch heap is not faulted in: a shared one is fallocated. */
locus_heap_populate_t heap_resolve_populate(struct locus_heap *h, const locus_heap_attr_t *a, heap_kind_t k,
                                              const char *dir, int n)
{
    if (a->policy == LOCUS_HEAP_FIRSTTOUCH)
        return h->shared ? LOCUS_POPULATE_RESERVE : LOCUS_POPULATE_AUTO;
    if (!h->shared) {
        if (a->populate != LOCUS_POPULATE_RESERVE)
            return LOCUS_POPULATE_EAGER;
        lc_note(&h->notes, "populate reserve on a private heap: mapped under the %s policy, each page allocated "
                "and zeroed at its first touch", locus_heap_policy_name(a->policy));
        return LOCUS_POPULATE_RESERVE;
    }
    if (h->hugetlb) {
        if (a->populate == LOCUS_POPULATE_RESERVE)
            lc_note(&h->notes, "populate reserve: eager fault-in instead (hugetlbfs clears every page inside "
                    "fallocate, on one thread)");
        return LOCUS_POPULATE_EAGER;
    }
    if (a->populate != LOCUS_POPULATE_AUTO)
        return a->populate;
    if ((a->policy == LOCUS_HEAP_LOCAL || a->policy == LOCUS_HEAP_BIND) && n > 1) {
        lc_note(&h->notes, "auto: populate eager (policy %s over %d nodes: each block goes to the node of the "
                "thread that faults it)", locus_heap_policy_name(a->policy), n);
        return LOCUS_POPULATE_EAGER;
    }
    if (*dir) {
        lc_note(&h->notes, "auto: populate eager (%s on %s: %s)", locus_heap_pages_name(k.kind), dir,
                k.kind == LOCUS_PAGES_THP ? "huge pages there may follow MADV_HUGEPAGE, which fallocate does not see"
                                          : AUTO_4K_EAGER);
        return LOCUS_POPULATE_EAGER;
    }
    lc_note(&h->notes, "auto: populate reserve (shared heap on a huge tmpfs, placed by its %s policy)",
            locus_heap_policy_name(a->policy));
    return LOCUS_POPULATE_RESERVE;
}

/* Per-process size in bytes, before rounding to the page. */
locus_status_t heap_resolve_size(const locus_heap_attr_t *a, uint64_t *out)
{
    uint64_t phys = phys_bytes();
    char b1[32], b2[32];
    uint64_t total = a->percent > 0 ? (uint64_t)((double)phys * a->percent / 100.0) : a->size;
    if (a->percent < 0 || a->percent > 100)
        return lc_err(LOCUS_ERR_INVALID, "size %g%%: expected a percentage in (0, 100]", a->percent);
    if (total == 0)
        return lc_err(LOCUS_ERR_INVALID,
                         "size 0: expected > 0 bytes (e.g. 8G) or a percentage of physical memory (e.g. 50%%)");
    if (phys && total > phys)
        return lc_err(LOCUS_ERR_RANGE, "size %llu bytes (%s): larger than physical memory %s; "
                         "expected at most %llu bytes or a percentage such as 50%%",
                         (unsigned long long)total, locus_format_size(total, b1, sizeof b1),
                         locus_format_size(phys, b2, sizeof b2), (unsigned long long)phys);
    *out = total / (uint64_t)a->procs;
    if (*out == 0)
        return lc_err(LOCUS_ERR_INVALID, "size %llu bytes split among %d processes is 0 bytes each",
                         (unsigned long long)total, a->procs);
    return LOCUS_OK;
}

locus_status_t heap_check_attr(const locus_heap_attr_t *a)
{
    if ((unsigned)a->policy > LOCUS_HEAP_LOCAL)
        return lc_err(LOCUS_ERR_INVALID, "policy %d: expected interleave, firsttouch, bind or local",
                         (int)a->policy);
    if ((unsigned)a->pages > LOCUS_PAGES_AUTO)
        return lc_err(LOCUS_ERR_INVALID, "pages %d: expected 4k, thp, huge2m, huge1g or auto",
                         (int)a->pages);
    if ((unsigned)a->verify > LOCUS_VERIFY_NONE)
        return lc_err(LOCUS_ERR_INVALID, "verify %d: expected all, sample or none", (int)a->verify);
    if ((unsigned)a->populate > LOCUS_POPULATE_RESERVE)
        return lc_err(LOCUS_ERR_INVALID, "populate %d: expected auto, eager or reserve", (int)a->populate);
    if (a->procs < 1)
        return lc_err(LOCUS_ERR_INVALID, "procs %d: expected >= 1 co-located processes", a->procs);
    if (a->threads < 0 || a->threads > 4096)
        return lc_err(LOCUS_ERR_INVALID, "threads %d: expected 0 (one per core) to 4096", a->threads);
    if (a->num_nodes < 0 || a->num_nodes > LOCUS_HEAP_MAX_NODES)
        return lc_err(LOCUS_ERR_INVALID, "node count %d: expected 0 to %d", a->num_nodes,
                         LOCUS_HEAP_MAX_NODES);
    if (a->policy == LOCUS_HEAP_BIND && a->num_nodes == 0)
        return lc_err(LOCUS_ERR_INVALID, "policy bind: expected a node set, e.g. bind:1 or bind:0,2");
    if (a->policy == LOCUS_HEAP_FIRSTTOUCH && a->num_nodes)
        return lc_err(LOCUS_ERR_INVALID, "policy firsttouch takes no node set");
    if (a->chunk > (1ull << 30))
        return lc_err(LOCUS_ERR_RANGE, "chunk %llu bytes: expected at most 1 GiB",
                         (unsigned long long)a->chunk);
    return LOCUS_OK;
}

/* The node set (topo indices, ascending OS order): given, else every node
 * with memory (interleave) or with cpus (local). */
locus_status_t heap_resolve_nodes(const locus_heap_attr_t *a, const locus_topo_t *topo, int *idx,
                                    int *count)
{
    int nn = locus_topo_num_nodes(topo), n = 0;
    if (a->num_nodes) {
        for (int i = 0; i < a->num_nodes; i++) {
            int k = locus_topo_node_index(topo, a->nodes[i]);
            if (k < 0) {
                char list[256] = "";
                size_t len = 0;
                for (int j = 0; j < nn && len + 12 < sizeof list; j++) {
                    locus_topo_node_t nd;
                    locus_topo_node(topo, j, &nd);
                    len += (size_t)snprintf(list + len, sizeof list - len, "%s%d", j ? "," : "", nd.os_index);
                }
                return lc_err(LOCUS_ERR_RANGE,
                                 "node %d out of range: expected one of this machine's NUMA nodes %s "
                                 "(see locus topo)", a->nodes[i], list);
            }
        }
    }
    for (int k = 0; k < nn; k++) {
        locus_topo_node_t nd;
        locus_topo_node(topo, k, &nd);
        bool want = false;
        if (a->num_nodes) {
            for (int i = 0; i < a->num_nodes; i++)
                want |= a->nodes[i] == nd.os_index;
        } else {
            want = a->policy == LOCUS_HEAP_LOCAL ? nd.num_cpus > 0 : nd.memory_bytes > 0 || nn == 1;
        }
        if (want && n < HEAP_PLAN_MAX_SLOTS)
            idx[n++] = k;
    }
    if (!n)
        return lc_err(LOCUS_ERR_INVALID, "policy %s: no NUMA node with %s",
                         locus_heap_policy_name(a->policy),
                         a->policy == LOCUS_HEAP_LOCAL ? "cpus" : "memory");
    *count = n;
    return LOCUS_OK;
}

