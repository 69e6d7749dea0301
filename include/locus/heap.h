/* locus heap: a fixed heap reserved at startup, faulted in by pinned threads
 * (one per core of the nodes the pages go to), placed by a NUMA policy and
 * verified with move_pages and /proc/self/smaps.
 *
 *   locus_heap_attr_t a;
 *   locus_heap_attr_init(&a);
 *   if (locus_heap_attr_from_env(&a) != LOCUS_OK) ... locus_last_error() ...
 *   locus_heap_t *h;
 *   if (locus_heap_create(&a, topo, &h) != LOCUS_OK) ...
 *   void *p = locus_heap_base(h);
 *   locus_heap_destroy(h);
 */
#ifndef LOCUS_HEAP_H
#define LOCUS_HEAP_H

#include <stdbool.h>
#include <stdint.h>
#include <locus/status.h>
#include <locus/topo.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LOCUS_HEAP_MAX_NODES 64

typedef struct locus_heap locus_heap_t;

/* Order matches the LOCUS_HEAP_POLICY / PAGES / VERIFY spellings. */
typedef enum locus_heap_policy {
    LOCUS_HEAP_INTERLEAVE = 0, /* page k of the heap on node k mod n of the node set */
    LOCUS_HEAP_FIRSTTOUCH = 1, /* default kernel policy, no pre-fault */
    LOCUS_HEAP_BIND       = 2, /* MPOL_BIND to the node set (required) */
    LOCUS_HEAP_LOCAL      = 3, /* pre-faulted: one contiguous block per node, on that node */
} locus_heap_policy_t;

typedef enum locus_heap_pages {
    LOCUS_PAGES_4K     = 0, /* base pages (MADV_NOHUGEPAGE so THP=always cannot change it) */
    LOCUS_PAGES_THP    = 1, /* transparent huge pages (MADV_HUGEPAGE), checked afterwards */
    LOCUS_PAGES_HUGE2M = 2, /* hugetlb 2 MiB pool */
    LOCUS_PAGES_HUGE1G = 3, /* hugetlb 1 GiB pool */
    LOCUS_PAGES_AUTO   = 4, /* huge1g, huge2m if the pool has the pages, else thp, else 4k */
} locus_heap_pages_t;

typedef enum locus_heap_verify {
    LOCUS_VERIFY_ALL    = 0, /* move_pages on every page of the obtained kind */
    LOCUS_VERIFY_SAMPLE = 1, /* move_pages on `samples` pages, one per equal stratum */
    LOCUS_VERIFY_NONE   = 2, /* residency and page kind (smaps) only */
} locus_heap_verify_t;

typedef enum locus_heap_fault_order {
    LOCUS_FAULT_AUTO  = 0, /* huge pages through their last 4 KiB first (see LOCUS_FAULT_LAST) */
    LOCUS_FAULT_LAST  = 1, /* each THP / 2 MiB page faulted at its last 4 KiB first, so the
                              kernel clears it first-to-last (twice as fast on some CPUs) */
    LOCUS_FAULT_FIRST = 2, /* plain MADV_POPULATE_WRITE from the first byte */
} locus_heap_fault_order_t;

/* How a heap's memory is made ready at create (LOCUS_HEAP_POPULATE). */
typedef enum locus_heap_populate {
    LOCUS_POPULATE_AUTO    = 0, /* reserve for a shared heap on the private huge tmpfs whose placement
                                   the policy alone decides (not local/bind over several nodes), else
                                   eager (4 KiB pages, thp on /dev/shm, private, hugetlbfs) */
    LOCUS_POPULATE_EAGER   = 1, /* parallel pinned fault-in: every page allocated, zeroed and mapped */
    LOCUS_POPULATE_RESERVE = 2, /* shared heap on tmpfs: fallocate allocates (and charges) every page
                                   by the mapping's policy, the first touch zeroes and maps it; the
                                   placement check is deferred to locus_heap_verify. Private and
                                   hugetlbfs heaps are faulted in eagerly (said in the notes) */
} locus_heap_populate_t;

/* Called from the creating thread about every 100 ms during fault-in. */
typedef void (*locus_heap_progress_fn)(void *arg, uint64_t done_bytes, uint64_t total_bytes);

typedef struct locus_heap_attr {
    uint64_t size;          /* bytes, before the split among procs (used if percent == 0) */
    double percent;         /* of physical memory, in (0, 100]; 0 = use size */
    int procs;              /* co-located processes sharing the size (>= 1) */
    locus_heap_policy_t policy;
    int num_nodes;          /* node set (OS numbers); 0 = every node (interleave/local) */
    int nodes[LOCUS_HEAP_MAX_NODES];
    locus_heap_pages_t pages;
    int threads;            /* 0 = one per core of the nodes the pages go to */
    locus_heap_verify_t verify;
    uint64_t chunk;         /* fault-in chunk, rounded up to a page multiple; 0 = 8 MiB */
    uint32_t samples;       /* pages checked by LOCUS_VERIFY_SAMPLE; 0 = 16384 */
    locus_heap_fault_order_t fault_order;
    locus_heap_progress_fn progress;
    void *progress_arg;
    /* Sharing (see "Sharing" below). NULL: private anonymous memory. Else the
     * name of a shared object backing the heap, 1-200 characters from
     * [A-Za-z0-9_.-] (e.g. "locus-1000-job7-h3"), created with O_EXCL and
     * mode 0600 in /dev/shm (4k, thp) or in a hugetlbfs mount (huge2m,
     * huge1g). Placement, parallel fault-in and verification are as for a
     * private heap (mbind on the shared mapping sets the object's policy). */
    const char *share_name;
    /* A shared heap whose system refuses shared-memory THP (shmem_enabled
     * never/advise-less) gets huge pages from a tmpfs of its own mounted
     * huge=always by a helper process in private namespaces; its path is then
     * /proc/<pid>/fd/<n> until locus_heap_unlink (LOCUS_HEAP_PRIVATE_TMPFS, default true). */
    bool private_tmpfs;
    locus_heap_populate_t populate; /* LOCUS_HEAP_POPULATE, default auto */
} locus_heap_attr_t;

typedef struct locus_heap_stats {
    uint64_t size;                     /* bytes mapped (rounded up to the page size) */
    locus_heap_policy_t policy;
    locus_heap_pages_t pages_requested;
    locus_heap_pages_t pages;          /* kind in effect (auto resolved; thp demoted to 4k
                                          if no huge page at all was obtained) */
    uint64_t page_size;                /* of `pages` */
    int threads;                       /* fault-in threads used (0 for firsttouch) */
    bool populate_fallback;            /* MADV_POPULATE_WRITE unsupported: write-touch used */

    /* Placement (move_pages), counted in units of `unit_size` bytes: the page
     * size obtained, or 4 KiB when THP was only partly obtained. */
    uint64_t unit_size;
    uint64_t units_total;              /* units in the heap */
    uint64_t units_checked;            /* units queried (all, or the sample) */
    int num_nodes;                     /* entries below = topo nodes */
    int node_os[LOCUS_HEAP_MAX_NODES];
    uint64_t node_units[LOCUS_HEAP_MAX_NODES];
    uint64_t not_faulted;              /* no page of its own: -ENOENT (never touched) or
                                          -EFAULT (see zero_page) */
    uint64_t zero_page;                /* the -EFAULT part of not_faulted: only read (shared
                                          zero page); kernels before ~6.5 also report
                                          untouched anonymous pages this way */
    uint64_t other_status;             /* any other negative status */

    /* Residency from /proc/self/smaps over the heap's range. */
    uint64_t resident_bytes;           /* Rss + hugetlb */
    uint64_t huge_bytes;               /* AnonHugePages (thp) or hugetlb bytes */

    double reserve_s, fault_s, verify_s; /* fault_s: the fault-in, or fallocate (reserve) */
    double gbps;                       /* size / (reserve_s + fault_s), 1e9 B/s; 0 unless eager */
    const char *notes;                 /* fallbacks and findings, one per line; "" if none */
    locus_heap_populate_t populate;    /* eager or reserve: what create did (auto resolved). Reserve:
                                          nothing is mapped yet, so residency is ~0 and the placement
                                          check was deferred (units_checked 0) until locus_heap_verify */
} locus_heap_stats_t;

/* Defaults: 1 GiB, 1 proc, interleave over all nodes, auto pages, one thread
 * per core, sample verification. */
LOCUS_API void locus_heap_attr_init(locus_heap_attr_t *attr);
/* Override attr from the LOCUS_HEAP_* variables that are set. A bad value
 * leaves attr unchanged and returns LOCUS_ERR_INVALID/RANGE naming it. */
LOCUS_API locus_status_t locus_heap_attr_from_env(locus_heap_attr_t *attr);
/* "interleave[:N,M-K]", "firsttouch", "bind:N[,M...]", "local[:N,...]". */
LOCUS_API locus_status_t locus_heap_parse_policy(const char *text, locus_heap_attr_t *attr);
LOCUS_API locus_status_t locus_heap_parse_pages(const char *text, locus_heap_pages_t *out);
LOCUS_API locus_status_t locus_heap_parse_verify(const char *text, locus_heap_verify_t *out);

/* Reserve, place, fault in and verify. topo may be NULL (loaded here). On
 * error nothing stays mapped and *out is untouched. */
LOCUS_API locus_status_t locus_heap_create(const locus_heap_attr_t *attr, const locus_topo_t *topo,
                                           locus_heap_t **out);
LOCUS_API void locus_heap_destroy(locus_heap_t *heap);
LOCUS_API void *locus_heap_base(const locus_heap_t *heap);
LOCUS_API uint64_t locus_heap_size(const locus_heap_t *heap);
/* The stats of the last create/verify; strings stay valid until the next
 * verify or destroy. */
LOCUS_API locus_status_t locus_heap_stats(const locus_heap_t *heap, locus_heap_stats_t *out);
/* Re-run placement and residency checks (e.g. after a firsttouch or reserved heap was touched). */
LOCUS_API locus_status_t locus_heap_verify(locus_heap_t *heap, locus_heap_verify_t mode);

/* ---- Sharing: the heap other processes of the node map ----
 * A heap created with attr.share_name is backed by a named object: on tmpfs
 * (/dev/shm) for 4k and thp pages (thp only when
 * /sys/kernel/mm/transparent_hugepage/shmem_enabled allows it: always,
 * within_size, advise or force; auto falls back to 4k and says so), on a
 * hugetlbfs mount of the page size for huge2m/huge1g (auto takes one when
 * such a mount is writable and its pool has the pages). The free space of
 * the file system is checked at create, so a small /dev/shm (containers)
 * fails there with a message instead of a SIGBUS later (eager: statvfs
 * first, then the parallel fault-in; reserve and firsttouch: fallocate,
 * which allocates every page or nothing). The name exists from create until
 * locus_heap_unlink (or destroy): a launcher should unlink it as soon as
 * every peer mapped it, so that nothing can outlive the job. */

/* Absolute path of a shared heap's object ("/dev/shm/NAME" or
 * "<hugetlbfs mount>/NAME"), kept after unlink; "" for a private heap. */
LOCUS_API const char *locus_heap_share_path(const locus_heap_t *heap);
/* Remove the object's name (mappings stay valid). Idempotent; OK for a
 * private heap. */
LOCUS_API locus_status_t locus_heap_unlink(locus_heap_t *heap);
/* Map another process's shared heap read-write: path as its
 * locus_heap_share_path (a bare name means /dev/shm/NAME), size its
 * locus_heap_size (checked against the object). *base: where it is mapped
 * here (a different address than in its owner). */
LOCUS_API locus_status_t locus_heap_attach(const char *path, uint64_t size, void **base);
/* Unmap what locus_heap_attach mapped. */
LOCUS_API void locus_heap_detach(void *base, uint64_t size);

LOCUS_API const char *locus_heap_policy_name(locus_heap_policy_t p);
LOCUS_API const char *locus_heap_pages_name(locus_heap_pages_t p);
LOCUS_API const char *locus_heap_verify_name(locus_heap_verify_t v);
LOCUS_API const char *locus_heap_populate_name(locus_heap_populate_t p);

#ifdef __cplusplus
}
#endif
#endif
