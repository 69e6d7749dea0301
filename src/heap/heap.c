/* The fixed heap: size and kind resolution, reservation, policy, fault-in. */
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


static uint64_t phys_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    return pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz : 0;
}

static const char *fmt_size(uint64_t b, char *buf)
{
    return locus_format_size(b, buf, 32);
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

static uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

typedef struct {
    locus_heap_pages_t kind;
    uint64_t page;
} kind_t;

static locus_status_t huge_error(locus_heap_pages_t kind, uint64_t page, uint64_t size, long long avail)
{
    unsigned long long need = (unsigned long long)((size + page - 1) / page);
    char b[32];
    if (avail < 0)
        return lc_err(LOCUS_ERR_UNSUPPORTED,
                         "pages %s: this kernel has no %s hugetlb pool "
                         "(/sys/kernel/mm/hugepages/hugepages-%llukB); use thp, 4k or auto",
                         locus_heap_pages_name(kind), fmt_size(page, b),
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
                     locus_heap_pages_name(kind), need, fmt_size(page, b), avail,
                     (unsigned long long)nr + need - (unsigned long long)avail, path);
}

/* Resolve auto and check that the kind can be had; size is the request. */
static locus_status_t resolve_kind(struct locus_heap *h, locus_heap_pages_t want,
                                   const locus_topo_t *topo, uint64_t size, kind_t *out)
{
    locus_thp_mode_t thp = locus_topo_thp_mode(topo);
    uint64_t thp_size = locus_topo_thp_size(topo) ? locus_topo_thp_size(topo) : (2ull << 20);
    const uint64_t pg[2] = {1ull << 30, 2ull << 20};
    const locus_heap_pages_t pk[2] = {LOCUS_PAGES_HUGE1G, LOCUS_PAGES_HUGE2M};
    switch (want) {
    case LOCUS_PAGES_4K:
        *out = (kind_t){LOCUS_PAGES_4K, 4096};
        return LOCUS_OK;
    case LOCUS_PAGES_THP:
        if (thp == LOCUS_THP_NEVER || thp == LOCUS_THP_UNAVAILABLE)
            return lc_err(LOCUS_ERR_UNSUPPORTED,
                             "pages thp: transparent huge pages are %s on this machine "
                             "(/sys/kernel/mm/transparent_hugepage/enabled); use 4k, huge2m or auto",
                             locus_thp_mode_name(thp));
        *out = (kind_t){LOCUS_PAGES_THP, thp_size};
        return LOCUS_OK;
    case LOCUS_PAGES_HUGE2M:
    case LOCUS_PAGES_HUGE1G: {
        uint64_t page = want == LOCUS_PAGES_HUGE1G ? pg[0] : pg[1];
        long long avail = hugetlb_available(page);
        if (avail < 0 || (uint64_t)avail < (size + page - 1) / page)
            return huge_error(want, page, size, avail);
        *out = (kind_t){want, page};
        return LOCUS_OK;
    }
    case LOCUS_PAGES_AUTO:
        for (int i = 0; i < 2; i++) {
            long long avail = hugetlb_available(pg[i]);
            /* 1 GiB pages only when the heap is at least one page: no 1 GiB for a 64 MiB heap */
            if (avail > 0 && (uint64_t)avail >= (size + pg[i] - 1) / pg[i] && size >= pg[i]) {
                *out = (kind_t){pk[i], pg[i]};
                lc_note(&h->notes, "auto: chose %s (%lld free pages in the pool)",
                          locus_heap_pages_name(pk[i]), avail);
                return LOCUS_OK;
            }
        }
        if (thp != LOCUS_THP_NEVER && thp != LOCUS_THP_UNAVAILABLE) {
            *out = (kind_t){LOCUS_PAGES_THP, thp_size};
            lc_note(&h->notes, "auto: chose thp (no hugetlb pool with enough free pages; THP mode %s)",
                      locus_thp_mode_name(thp));
        } else {
            *out = (kind_t){LOCUS_PAGES_4K, 4096};
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
static locus_status_t resolve_kind_shared(struct locus_heap *h, const locus_heap_attr_t *a, uint64_t size,
                                          kind_t *out, char *dir, size_t dirlen)
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
        *out = (kind_t){LOCUS_PAGES_4K, 4096};
        return LOCUS_OK;
    case LOCUS_PAGES_THP:
        if (!thp_ok && !private_ok)
            return lc_err(LOCUS_ERR_UNSUPPORTED,
                          "pages thp on a shared heap: shared-memory THP is '%s' here "
                          "(/sys/kernel/mm/transparent_hugepage/shmem_enabled) and no private huge tmpfs (%s); "
                          "use 4k, huge2m or auto", mode, why);
        if (private_ok)
            dir[0] = '\0';
        *out = (kind_t){LOCUS_PAGES_THP, 2ull << 20};
        return LOCUS_OK;
    case LOCUS_PAGES_HUGE2M:
    case LOCUS_PAGES_HUGE1G: {
        uint64_t page = want == LOCUS_PAGES_HUGE1G ? pg[0] : pg[1];
        long long avail = hugetlb_available(page);
        if (avail < 0 || (uint64_t)avail < (size + page - 1) / page)
            return huge_error(want, page, size, avail);
        char b[32];
        if (!heap_share_hugetlbfs(page, dir, dirlen))
            return lc_err(LOCUS_ERR_UNSUPPORTED,
                          "pages %s on a shared heap: no writable hugetlbfs mount of %s pages "
                          "(mount -t hugetlbfs -o pagesize=%s none /dev/hugepages); use 4k, thp or auto",
                          locus_heap_pages_name(want), fmt_size(page, b), page == pg[0] ? "1G" : "2M");
        *out = (kind_t){want, page};
        return LOCUS_OK;
    }
    case LOCUS_PAGES_AUTO:
        for (int i = 0; i < 2; i++) {
            long long avail = hugetlb_available(pg[i]);
            if (avail > 0 && (uint64_t)avail >= (size + pg[i] - 1) / pg[i] && size >= pg[i] &&
                heap_share_hugetlbfs(pg[i], dir, dirlen)) {
                *out = (kind_t){pk[i], pg[i]};
                lc_note(&h->notes, "auto (shared): chose %s in %s (%lld free pages in the pool)",
                        locus_heap_pages_name(pk[i]), dir, avail);
                return LOCUS_OK;
            }
        }
        snprintf(dir, dirlen, "/dev/shm");
        if (thp_ok) {
            *out = (kind_t){LOCUS_PAGES_THP, 2ull << 20};
            lc_note(&h->notes, "auto (shared): chose thp on /dev/shm (no hugetlbfs mount with enough free "
                    "pages; shmem_enabled %s)", mode);
        } else if (private_ok && size >= (2ull << 20)) {
            dir[0] = '\0';
            *out = (kind_t){LOCUS_PAGES_THP, 2ull << 20};
            lc_note(&h->notes, "auto (shared): chose thp on a private huge tmpfs (no hugetlbfs mount with enough "
                    "free pages; shared-memory THP is '%s' in shmem_enabled)", mode);
        } else {
            *out = (kind_t){LOCUS_PAGES_4K, 4096};
            lc_note(&h->notes, "auto (shared): chose 4k on /dev/shm (no hugetlbfs mount with enough free pages; "
                    "shared-memory THP is '%s' in /sys/kernel/mm/transparent_hugepage/shmem_enabled)", mode);
        }
        return LOCUS_OK;
    }
    return lc_err(LOCUS_ERR_INVALID, "pages %d: expected 4k, thp, huge2m, huge1g or auto", (int)want);
}

/* Why auto does not reserve a shared heap of 4 KiB pages. */
#define AUTO_4K_EAGER "4 KiB pages: fallocate allocates them one by one on one thread and every first touch " \
                      "is a fault of its own; the parallel fault-in makes the heap usable sooner"

/* The object behind a shared heap: in dir, or (dir "") on a private huge
 * tmpfs; when that cannot be had and the kind was auto's choice, 4 KiB
 * pages in /dev/shm, saying why. */
static locus_status_t create_shared(struct locus_heap *h, const locus_heap_attr_t *a, kind_t *k, const char *dir)
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
    *k = (kind_t){LOCUS_PAGES_4K, 4096};
    if (a->populate == LOCUS_POPULATE_AUTO && h->populate == LOCUS_POPULATE_RESERVE) {
        lc_note(&h->notes, "auto: populate eager after all (%s)", AUTO_4K_EAGER);
        h->populate = LOCUS_POPULATE_EAGER;
    }
    return heap_share_create(h, "/dev/shm", a->share_name);
}

/* LOCUS_HEAP_POPULATE. Eager faults every page in (parallel, pinned):
 * allocated, zeroed and mapped. Reserve fallocates a shared heap's tmpfs
 * file instead: every page allocated and charged now (a shortage fails
 * create, not a later touch), zeroed by the first touch right before the
 * program's own write, so init does not pay for zeroes a program overwrites
 * anyway, nor for memory it never uses (docs/ARCHITECTURE.md, heap). It needs a tmpfs
 * file: a private heap has none, and hugetlbfs clears every page inside
 * fallocate, on one thread. auto takes reserve where the kernel puts a
 * fallocated page where the fault-in would have: not local/bind over
 * several nodes (there each block goes to its faulting thread's node, one
 * fallocating thread would put it all on its own); and only on our private
 * huge tmpfs (dir ""; huge=always: fallocate gets 2 MiB folios): thp on
 * /dev/shm may follow MADV_HUGEPAGE, which fallocate does not see, and 4
 * KiB pages are slower reserved than faulted in (research/LOG.md, heap
 * reserve). A firsttouch heap is not faulted in: a shared one is fallocated. */
static locus_heap_populate_t resolve_populate(struct locus_heap *h, const locus_heap_attr_t *a, kind_t k,
                                              const char *dir, int n)
{
    if (a->policy == LOCUS_HEAP_FIRSTTOUCH)
        return h->shared ? LOCUS_POPULATE_RESERVE : LOCUS_POPULATE_AUTO;
    const char *why = !h->shared ? "a private heap has no file to fallocate"
                      : h->hugetlb ? "hugetlbfs clears every page inside fallocate, on one thread"
                                   : NULL;
    if (why) {
        if (a->populate == LOCUS_POPULATE_RESERVE)
            lc_note(&h->notes, "populate reserve: eager fault-in instead (%s)", why);
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

/* Per-process size in bytes, before rounding to the page. */
static locus_status_t resolve_size(const locus_heap_attr_t *a, uint64_t *out)
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
                         (unsigned long long)total, fmt_size(total, b1), fmt_size(phys, b2),
                         (unsigned long long)phys);
    *out = total / (uint64_t)a->procs;
    if (*out == 0)
        return lc_err(LOCUS_ERR_INVALID, "size %llu bytes split among %d processes is 0 bytes each",
                         (unsigned long long)total, a->procs);
    return LOCUS_OK;
}

static locus_status_t check_attr(const locus_heap_attr_t *a)
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
static locus_status_t resolve_nodes(const locus_heap_attr_t *a, const locus_topo_t *topo, int *idx,
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

/* mmap a PROT_NONE span, then the heap inside it at `align` with one guard
 * page either side. */
static locus_status_t reserve(struct locus_heap *h, kind_t k)
{
    uint64_t align = k.page, len = h->size + align + 2 * HEAP_GUARD;
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
    else
        flags |= MAP_NORESERVE;
    h->base = base;
    if (mmap(base, h->size, PROT_READ | PROT_WRITE, flags, -1, 0) == MAP_FAILED) {
        int e = errno;
        munmap(base - HEAP_GUARD, h->size + 2 * HEAP_GUARD);
        h->base = NULL;
        char b[32];
        return lc_err_errno(LOCUS_ERR_NO_MEMORY, e, "heap: mmap of %s with %s pages",
                               fmt_size(h->size, b), locus_heap_pages_name(k.kind));
    }
    return LOCUS_OK;
}

static locus_status_t place(struct locus_heap *h, const locus_heap_attr_t *a, const locus_topo_t *topo,
                            const int *idx, int n, kind_t k)
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
static uint64_t tail_unit(kind_t k, locus_heap_fault_order_t order)
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
                                       kind_t k, uint64_t *phase)
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
                            const int *idx, int n, kind_t k)
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
                      fmt_size(size, b1), fmt_size(mem, b2));
    return LOCUS_OK;
}

static void init_stats(struct locus_heap *h, const locus_heap_attr_t *a, const locus_topo_t *topo, kind_t k)
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
                               const int *idx, int n, kind_t k)
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
    kind_t k = {LOCUS_PAGES_4K, 4096};
    int idx[HEAP_PLAN_MAX_SLOTS], n = 0;
    if ((st = check_attr(a)) || (st = resolve_size(a, &size)))
        return st;
    if (a->policy != LOCUS_HEAP_FIRSTTOUCH && (st = resolve_nodes(a, topo, idx, &n)))
        return st;
    if (a->policy == LOCUS_HEAP_BIND && (st = check_bind_size(topo, idx, n, size)))
        return st;
    char dir[256] = "";
    if (a->share_name && (st = heap_share_check_name(a->share_name)))
        return st;
    if (a->share_name ? (st = resolve_kind_shared(h, a, size, &k, dir, sizeof dir))
                      : (st = resolve_kind(h, a->pages, topo, size, &k)))
        return st;
    h->size = round_up(size, k.page);
    h->hugetlb = k.kind == LOCUS_PAGES_HUGE2M || k.kind == LOCUS_PAGES_HUGE1G;
    h->shared = a->share_name != NULL;
    h->populate = resolve_populate(h, a, k, dir, n);
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
