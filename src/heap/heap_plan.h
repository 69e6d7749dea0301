/* Internal: who faults which pages. Pure arithmetic, no system calls, so the
 * assignment can be tested on synthetic node counts.
 *
 * The heap is `units` pages of `unit` bytes. Pages are grouped in slots, one
 * per node of the policy's node set:
 *   strided (interleave): page k belongs to slot (phase + k) mod nslots, which
 *     is exactly where MPOL_INTERLEAVE puts it (the kernel interleaves on the
 *     page's offset in the mapping; `phase` is that offset's residue for page 0);
 *   blocked (local, bind): slot j owns pages [start[j], start[j+1]).
 * A slot's pages, in address order, are cut in chunks of chunk_units pages.
 * Each fault-in thread has a home slot (the node of its core) and claims the
 * chunks of that slot first, then helps the other slots (memory-only nodes
 * have no cores, so their chunks are always taken this way). Under `local`
 * a page lands on its faulting thread's node, so there threads stay home. */
#ifndef LOCUS_HEAP_PLAN_H
#define LOCUS_HEAP_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#define HEAP_PLAN_MAX_SLOTS 64

typedef struct heap_plan {
    uint64_t units;        /* pages in the heap */
    uint64_t unit;         /* bytes per page */
    uint64_t chunk_units;  /* pages per chunk (>= 1) */
    int nslots;
    bool strided;
    uint64_t phase;                                /* strided only, < nslots */
    uint64_t start[HEAP_PLAN_MAX_SLOTS + 1];       /* blocked only */
} heap_plan_t;

/* One chunk: pages first, first+step, ..., count of them. */
typedef struct heap_chunk {
    uint64_t first, count, step;
} heap_chunk_t;

/* weights: blocked slot sizes are proportional to them (NULL or all zero =
 * equal shares); remainders go to the first slots. */
void heap_plan_init(heap_plan_t *p, uint64_t units, uint64_t unit, uint64_t chunk_units,
                    int nslots, bool strided, uint64_t phase, const int *weights);
/* Slot of page k. */
int heap_plan_slot_of(const heap_plan_t *p, uint64_t k);
/* Pages and chunks of slot s. */
uint64_t heap_plan_slot_units(const heap_plan_t *p, int s);
uint64_t heap_plan_slot_chunks(const heap_plan_t *p, int s);
/* Chunk c of slot s (c < heap_plan_slot_chunks). */
heap_chunk_t heap_plan_chunk(const heap_plan_t *p, int s, uint64_t c);

/* Threads: slot_cpus[s] cores at home in slot s (0 for a memory-only node).
 * nthreads = 0 means one per core of all slots. Threads are dealt round-robin
 * over the slots that have cores, taking each slot's cores in order (wrapping
 * when nthreads exceeds the cores). Writes thread t's home slot and the index
 * of its core within that slot; when no slot has cores, home is -1 and core
 * is t (the caller uses the process's CPUs). Returns the thread count. */
int heap_plan_threads(int nslots, const int *slot_cpus, int nthreads, int max_threads,
                      int *home, int *core);

#endif
