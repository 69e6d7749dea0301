/* The baselines the fixed heap is measured against, shared by
 * `locus heap --compare` (tools/cmd_heap.c) and bench/heap_bench.c. Not part
 * of the library: plain mmap/madvise/memset over public types only. Each maps
 * a fresh region of the given kind, times the work, and unmaps it (unmapping
 * is not timed). */
#ifndef LOCUS_TOOLS_HEAP_BASELINE_H
#define LOCUS_TOOLS_HEAP_BASELINE_H

#include <stdint.h>
#include <locus/heap.h>
#include <locus/status.h>

typedef void (*baseline_progress_fn)(void *arg, uint64_t done, uint64_t total);

/* One thread writes one byte per page: at the huge page stride for huge
 * kinds and thp (then a 4 KiB pass over whatever THP did not cover, so the
 * whole region is resident), at 4 KiB for 4k. GB/s into *gbps.
 * The best-effort serial touch: each huge page is written at its last byte,
 * which makes the kernel zero it first to last (2x faster here than the
 * first-byte touch; see heap_populate in src/heap/heap_fault.c). */
locus_status_t baseline_serial_touch(locus_heap_pages_t kind, uint64_t size,
                                   baseline_progress_fn progress, void *arg, double *gbps);
/* The same with the conventional order: each page written at its first byte
 * (what a plain `for (p = base; p < end; p += page) *p = 0` does). */
locus_status_t baseline_serial_touch_first(locus_heap_pages_t kind, uint64_t size, double *gbps);
/* One thread, one MADV_POPULATE_WRITE over the whole region. */
locus_status_t baseline_populate1(locus_heap_pages_t kind, uint64_t size, double *gbps);
/* mmap(MAP_POPULATE): serial inside mmap; for thp the madvise can only come
 * after, so THP in `madvise` mode is not obtained (that is the mechanism). */
locus_status_t baseline_map_populate(locus_heap_pages_t kind, uint64_t size, double *gbps);
/* memset over already-resident memory by nthreads threads pinned to cpus[]
 * (NULL: unpinned), each a contiguous share: the page-zeroing limit. */
double baseline_memset(void *p, uint64_t size, int nthreads, const int *cpus);

#endif
