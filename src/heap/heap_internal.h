/* Internal: the heap object and the helpers shared by its source files. */
#ifndef LOCUS_HEAP_INTERNAL_H
#define LOCUS_HEAP_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <locus/heap.h>

#include "heap/heap_plan.h"
#include "core/clock.h"
#include "core/notes.h"

#define HEAP_GUARD 4096u /* PROT_NONE page either side: no VMA merge, overruns fault */

struct locus_heap {
    char *base;
    uint64_t size;
    bool hugetlb;
    uint64_t samples;
    locus_heap_fault_order_t fault_order;
    locus_heap_stats_t stats;
    lc_notes_t notes;
    size_t notes_base; /* notes of create; verify re-adds its own after these */
    char share_path[288]; /* shared heap: its object's path ("" = private) */
    bool shared, linked;  /* linked: the name still exists (unlink pending) */
    bool private_fs;      /* on a private huge tmpfs: share_path is /proc/<pid>/fd/<share_fd> */
    int share_fd;         /* open between create and mapping (private_fs: until unlink), else -1 */
    locus_heap_populate_t populate; /* eager, reserve (fallocate), auto = neither (private firsttouch) */
};

/* ---- heap_resolve.c: the request, resolved before anything is mapped ---- */
typedef struct {
    locus_heap_pages_t kind;
    uint64_t page;
} heap_kind_t;

/* Why auto does not reserve a shared heap of 4 KiB pages. */
#define AUTO_4K_EAGER "4 KiB pages: fallocate allocates them one by one on one thread and every first touch " \
                      "is a fault of its own; the parallel fault-in makes the heap usable sooner"

/* The attributes' ranges and combinations. */
locus_status_t heap_check_attr(const locus_heap_attr_t *a);
/* Per-process size in bytes (size or percent of RAM over procs), before
 * rounding to the page. */
locus_status_t heap_resolve_size(const locus_heap_attr_t *a, uint64_t *out);
/* The node set as topo indices: given, else every node with memory
 * (interleave) or with cpus (local). */
locus_status_t heap_resolve_nodes(const locus_heap_attr_t *a, const locus_topo_t *topo, int *idx, int *count);
/* A private heap's page kind: auto resolved, the pool checked (notes say
 * why auto chose what it did). */
locus_status_t heap_resolve_kind(struct locus_heap *h, locus_heap_pages_t want, const locus_topo_t *topo,
                                 uint64_t size, heap_kind_t *out);
/* A shared heap's page kind and the directory of its object ("" = a
 * private huge tmpfs). */
locus_status_t heap_resolve_kind_shared(struct locus_heap *h, const locus_heap_attr_t *a, uint64_t size,
                                        heap_kind_t *out, char *dir, size_t dirlen);
/* LOCUS_HEAP_POPULATE resolved for this heap (eager or reserve). */
locus_heap_populate_t heap_resolve_populate(struct locus_heap *h, const locus_heap_attr_t *a, heap_kind_t k,
                                            const char *dir, int n);

/* ---- heap_share.c: the named object behind a shared heap ---- */
/* Whether shmem THP can be had (shmem_enabled: always, within_size, advise,
 * force); *mode gets the bracketed word ("never" if unreadable). */
bool heap_share_thp_ok(char *mode, size_t len);
/* The hugetlbfs mount for pages of page_size bytes, writable by us; false
 * if none (dir untouched). */
bool heap_share_hugetlbfs(uint64_t page_size, char *dir, size_t len);
/* Create the object (O_EXCL, 0600) in dir, size it, check the file system
 * has the room (eager only: fallocate is the exact check); h->share_path,
 * h->share_fd, h->linked set. */
locus_status_t heap_share_create(struct locus_heap *h, const char *dir, const char *name);
/* Create the object on a tmpfs of our own mounted huge=always (shared THP
 * without a pool or a sysfs change; see heap_share.c); h->share_path is
 * /proc/<pid>/fd/<n> until locus_heap_unlink. */
locus_status_t heap_share_create_private(struct locus_heap *h);
/* Whether it may work here (not with shmem_enabled 'deny'); else *why. */
bool heap_share_private_ok(char *why, size_t len);
/* mmap the object MAP_SHARED|MAP_FIXED at h->base (reserved); closes the fd. */
locus_status_t heap_share_map(struct locus_heap *h);
/* fallocate the whole object (reserve and firsttouch: nothing faults it in
 * at create): every page allocated by the mapping's policy, none zeroed or
 * mapped yet; a shortage fails here (LOCUS_ERR_NO_MEMORY), not as a SIGBUS. */
locus_status_t heap_share_fallocate(struct locus_heap *h);
/* Close the fd and unlink the name if still there (destroy, failed create). */
void heap_share_release(struct locus_heap *h);
/* A name of 1-200 characters from [A-Za-z0-9_.-]. */
locus_status_t heap_share_check_name(const char *name);


/* Residency and page kind from /proc/self/smaps over [base, base + size). */
locus_status_t heap_smaps(const void *base, uint64_t size, uint64_t *rss, uint64_t *anon_huge,
                          uint64_t *hugetlb);
/* Fill h->stats' residency, unit, histogram (per mode) and verify_s. */
locus_status_t heap_verify_now(struct locus_heap *h, locus_heap_verify_t mode);

/* Parallel fault-in of `base` following `plan`: threads[t] is pinned to
 * cpus[t] with home slot home[t]. *fallback is set if MADV_POPULATE_WRITE is
 * unsupported and pages were written instead (at touch_stride). */
typedef struct heap_fault_args {
    char *base;
    const heap_plan_t *plan;
    int nthreads;
    const int *cpus;
    const int *home;
    uint64_t touch_stride;
    uint64_t tail_unit;  /* > 0: fault each unit of this size through its last 4 KiB first (heap_populate) */
    bool tail_refill;    /* after the tail pass, populate the whole range (THP may fall back to 4 KiB) */
    bool home_only;      /* local: a page's node is its faulting thread's, so no helping */
    locus_heap_progress_fn progress;
    void *progress_arg;
} heap_fault_args_t;
locus_status_t heap_fault_in(const heap_fault_args_t *args, bool *fallback);

/* One range: MADV_POPULATE_WRITE, or a write every `stride` bytes when the
 * kernel lacks it (*use_touch set then). 0 or an errno.
 * tail_unit > 0 (a huge page size; p and len are multiples of it): every unit
 * is first faulted through its last 4 KiB, so that the kernel, which zeroes a
 * huge page subpage by subpage ending with the faulting one
 * (folio_zero_user/process_huge_page), clears it first to last: twice the
 * bandwidth of the last-to-first order a fault at the unit's first byte gets
 * on this machine (docs/PERFORMANCE.md, heap). refill: then the whole range,
 * which fills whatever did not get a huge page (THP fallback) and costs a
 * page-table walk otherwise. */
int heap_populate(char *p, uint64_t len, uint64_t tail_unit, bool refill, uint64_t stride, int *use_touch);


/* LOCUS_HEAP_POLICY (registered with core). */
locus_status_t heap_validate_policy(const char *value);

#endif
