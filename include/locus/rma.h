/* locus rma: one-sided communication (put, get, atomics) on a symmetric heap,
 * the layer a runtime (OpenSHMEM, Chapel, GASNet, MPI one-sided) puts under
 * its own calls.
 *
 * Every process of the job owns a heap of the same size (the heap module's
 * fixed heap: placed, faulted in in parallel, backed by shared memory so that
 * the processes of its node map it). A symmetric address is an address in
 * the caller's own heap (or in an exposed region, locus_rma_region_add): it
 * names the object at the same offset in every process's copy. Processes are
 * numbered by their boot rank (locus/boot.h).
 *
 * Paths: to a process on the same node, a put/get is one copy straight into or
 * out of its mapped heap with the copy module's kernels (no message, no
 * rendezvous); to another node, verbs RC RDMA WRITE/READ/ATOMIC (one queue
 * pair per peer). The whole heap is registered with the NIC once, at init
 * (static registration); local buffers outside the heap up to
 * LOCUS_RDMA_BOUNCE_SIZE are copied through pre-registered bounce buffers,
 * larger ones reach the NIC as LOCUS_RMA_REG says: "cache" (the registration
 * cache, never stale after a free or remap: it needs liblocus_hooks linked
 * or preloaded, or a device with ODP; without either init falls back to
 * "static" and says so in the notes), "static" (cut into bounce-buffer
 * pieces: nothing but the heap and the bounce pool is ever registered),
 * "none" (registered and deregistered around every transfer: the baseline
 * a cache is for). Small puts travel inline in the work request.
 *
 * Atomics: one agent per job, so that atomics from the process itself, from
 * processes on its node and from other nodes on the same word are atomic
 * with each other. When every process is on one node that agent is the CPU
 * (atomic instructions on the mapped heap); when the job spans nodes it is
 * the NIC, for every process including on-node peers and self (NIC atomics
 * are not atomic against CPU atomics on the same word). 64-bit fetch-add and
 * compare-swap are native; other operations and 32-bit words are
 * compare-swap loops on the containing aligned 8-byte word.
 *
 * Completion: put returns when the source buffer may be reused; get and
 * fetching atomics return with the data. The _nbi forms return at once and
 * complete by flush. flush(rank) / flush_all complete every operation issued
 * to that rank / to all (remotely visible to every process). fence orders
 * puts and atomics to each process before those issued after it.
 *
 * Errors, before anything is posted: a rank out of range LOCUS_ERR_RANGE, an
 * address outside the symmetric heap and the added regions LOCUS_ERR_INVALID,
 * a range that runs past their end LOCUS_ERR_RANGE, a misaligned atomic or
 * a width other than 4 or 8 LOCUS_ERR_INVALID. Length 0 is a no-op (NULL
 * pointers allowed). A peer that dies or a link that fails completes every
 * pending operation to it with LOCUS_ERR_PEER_FAILED (or LOCUS_ERR_TIMEOUT)
 * within 2 s; later operations to it, flush_all and barrier fail at once.
 * Copies into a mapped heap cannot fail, so a dead process of this node is
 * found by flush, flush_all, barrier and progress (each checks at most every
 * 250 ms). Nothing hangs: a call that waits only on memory (barrier) probes
 * the peers meanwhile. Nothing is leaked: the shared-memory names are
 * removed before init returns; fini (also after a failure) deregisters,
 * unmaps and destroys every queue pair.
 *
 * Threads: a locus_rma_t is used by one thread at a time.
 */
#ifndef LOCUS_RMA_H
#define LOCUS_RMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <locus/boot.h>
#include <locus/heap.h>
#include <locus/status.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct locus_rma locus_rma_t;

typedef enum locus_rma_reg {
    LOCUS_RMA_REG_CACHE = 0,  /* the registration cache (default) */
    LOCUS_RMA_REG_STATIC = 1, /* only the heap is registered: others through bounce buffers */
    LOCUS_RMA_REG_NONE = 2,   /* register/deregister per transfer (the thrash baseline) */
} locus_rma_reg_t;

typedef struct locus_rma_attr {
    uint64_t heap_size;     /* symmetric heap per process (LOCUS_RMA_HEAP_SIZE) */
    locus_heap_attr_t heap; /* placement, pages, fault-in (LOCUS_HEAP_*); size, percent, procs
                               and share_name are set by init (heap_size + a 4 KiB control
                               block, shared when the node has other processes of the job) */
    locus_rma_reg_t reg;    /* LOCUS_RMA_REG */
    bool nic_only;          /* LOCUS_RMA_ONNODE=nic: on-node peers through NIC loopback too
                               (tests, and jobs whose nodes share nothing) */
    uint64_t help_min;      /* LOCUS_RMA_HELP: on-node puts from the heap of at least this many
                               bytes are cut into pieces that a peer of the node waiting in the
                               library (barrier, flush, progress) copies too; 0 = never */
    locus_boot_t *boot;     /* NULL: locus_rma_init joins the job itself (and leaves it) */
} locus_rma_attr_t;

LOCUS_API void locus_rma_attr_init(locus_rma_attr_t *attr);
/* LOCUS_RMA_* and LOCUS_HEAP_*; all or nothing, a bad value named. */
LOCUS_API locus_status_t locus_rma_attr_from_env(locus_rma_attr_t *attr);

/* Collective over the job: create and place the heap, map the heaps of this
 * node's processes, register the heap, connect to the other nodes. */
LOCUS_API locus_status_t locus_rma_init(const locus_rma_attr_t *attr, locus_rma_t **out);
/* Collective: complete everything, unmap, deregister, disconnect. After a
 * peer failed it only tears down locally (no collective). NULL-safe. */
LOCUS_API locus_status_t locus_rma_fini(locus_rma_t *r);

LOCUS_API int locus_rma_rank(const locus_rma_t *r);
LOCUS_API int locus_rma_size(const locus_rma_t *r);
LOCUS_API locus_boot_t *locus_rma_boot(const locus_rma_t *r);
/* True if `rank` runs on this node (its heap is mapped here). */
LOCUS_API bool locus_rma_is_local(const locus_rma_t *r, int rank);
LOCUS_API void *locus_rma_heap_base(const locus_rma_t *r);
LOCUS_API uint64_t locus_rma_heap_size(const locus_rma_t *r);
/* Fallbacks and choices made at init ("job spans 2 nodes: atomics by the
 * NIC"), one per line. */
LOCUS_API const char *locus_rma_notes(const locus_rma_t *r);

/* Expose [base, base+len) of every process as one more symmetric region
 * (collective; same len everywhere, the addresses may differ, e.g. a PIE
 * program's data and bss; at most 7). Processes of this node reach it by CMA
 * (process_vm_writev/readv), so locus_rma_ptr() gives NULL for it (except
 * for self); processes reached through the NIC get it registered and
 * exchanged as one more RDMA window (put, get and atomics, like the heap).
 * Atomics on another process's region need the NIC as the job's agent: on
 * one node they give LOCUS_ERR_UNSUPPORTED (self excepted). *id: the
 * region's number. */
LOCUS_API locus_status_t locus_rma_region_add(locus_rma_t *r, void *base, size_t len, int *id);

/* The address at which this process can load and store `rank`'s copy of
 * symmetric `sym`, or NULL (another node, or a region that is not mapped). */
LOCUS_API void *locus_rma_ptr(const locus_rma_t *r, int rank, const void *sym);

LOCUS_API locus_status_t locus_rma_put(locus_rma_t *r, int rank, void *sym_dst, const void *src,
                                       size_t len);
LOCUS_API locus_status_t locus_rma_get(locus_rma_t *r, int rank, void *dst, const void *sym_src,
                                       size_t len);
LOCUS_API locus_status_t locus_rma_put_nbi(locus_rma_t *r, int rank, void *sym_dst, const void *src,
                                           size_t len);
LOCUS_API locus_status_t locus_rma_get_nbi(locus_rma_t *r, int rank, void *dst, const void *sym_src,
                                           size_t len);
LOCUS_API locus_status_t locus_rma_flush(locus_rma_t *r, int rank);
LOCUS_API locus_status_t locus_rma_flush_all(locus_rma_t *r);
/* Puts and atomics to each process issued before the fence are applied
 * before those issued after it. Waits only where it must: shared on-node
 * puts are completed, NIC requests to a process of this node (atomics in a
 * job across nodes) are completed; to another node, WRITEs are ordered by
 * the NIC (RC order) and not waited for, a READ or atomic in flight is. */
LOCUS_API locus_status_t locus_rma_fence(locus_rma_t *r);

typedef enum locus_rma_amo_op {
    LOCUS_RMA_AMO_FETCH = 0, /* *fetched = word */
    LOCUS_RMA_AMO_SET,       /* word = operand */
    LOCUS_RMA_AMO_SWAP,      /* *fetched = word, word = operand */
    LOCUS_RMA_AMO_CSWAP,     /* *fetched = word; if word == compare: word = operand */
    LOCUS_RMA_AMO_ADD,       /* word += operand (fetched: the old value, if asked) */
    LOCUS_RMA_AMO_AND,
    LOCUS_RMA_AMO_OR,
    LOCUS_RMA_AMO_XOR,
} locus_rma_amo_op_t;

/* One atomic on `rank`'s copy of the 4- or 8-byte word `sym` (naturally
 * aligned). `fetched` may be NULL for SET/ADD/AND/OR/XOR (non-fetching, may
 * complete later: flush). Same-width atomics on one word are atomic with
 * each other from every process; mixing widths on a word is undefined. */
LOCUS_API locus_status_t locus_rma_amo(locus_rma_t *r, int rank, locus_rma_amo_op_t op, void *sym,
                                       size_t width, uint64_t operand, uint64_t compare,
                                       uint64_t *fetched);
LOCUS_API locus_status_t locus_rma_fetch_add(locus_rma_t *r, int rank, uint64_t *sym, uint64_t add,
                                             uint64_t *old);
LOCUS_API locus_status_t locus_rma_cswap(locus_rma_t *r, int rank, uint64_t *sym, uint64_t compare,
                                         uint64_t value, uint64_t *old);
LOCUS_API locus_status_t locus_rma_swap(locus_rma_t *r, int rank, uint64_t *sym, uint64_t value,
                                        uint64_t *old);

/* flush_all, then every process of the job waits for the others. */
LOCUS_API locus_status_t locus_rma_barrier(locus_rma_t *r);
/* True if this node has more processes of the job than cpus they may run
 * on (the union of their affinity masks): waits should yield. */
LOCUS_API bool locus_rma_oversubscribed(const locus_rma_t *r);
/* True if every process of the job on this node is bound to cpus that no
 * other one of them may use (locus run --bind core; mpirun's binding of a
 * few processes): a wait may then spin through a time slice without keeping
 * a peer it waits for off the cpu. Other jobs may still share them. */
LOCUS_API bool locus_rma_own_cpus(const locus_rma_t *r);
/* Drive the NIC's completions, copy pieces of the node's large puts that
 * other processes shared (LOCUS_RMA_HELP) and, at most every 250 ms, check that every
 * peer is alive (an RDMA READ to NIC peers, the pid on this node): call it in
 * loops that wait for memory another process writes (wait_until), so that a
 * dead peer ends the wait with LOCUS_ERR_PEER_FAILED. */
LOCUS_API locus_status_t locus_rma_progress(locus_rma_t *r);

typedef struct locus_rma_stats {
    uint64_t puts_local, gets_local, amos_cpu;   /* on-node: copies and CPU atomics */
    uint64_t puts_nic, gets_nic, amos_nic;       /* through the NIC */
    uint64_t bytes_local, bytes_nic;
    uint64_t puts_inline, bounce;                /* small puts inline; buffers through bounce */
    uint64_t reg_cache_gets, registrations;      /* pieces through the registration cache (cache, none);
                                                    registrations its device made (heap included) */
    uint64_t puts_helped;  /* our shared puts of which a peer copied a piece */
    uint64_t help_pieces;  /* pieces of other processes' puts this process copied */
    uint64_t reg_full;     /* transfers whose buffer the full registration cache could not take:
                              sent through the bounce buffers instead */
} locus_rma_stats_t;
LOCUS_API locus_status_t locus_rma_stats(const locus_rma_t *r, locus_rma_stats_t *out);

#ifdef __cplusplus
}
#endif
#endif
