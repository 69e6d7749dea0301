/* rma internals: the handle, the per-rank table and the helpers its files
 * share (init.c, nic.c, xfer.c, amo.c, sync.c, region.c). */
#ifndef LOCUS_RMA_INTERNAL_H
#define LOCUS_RMA_INTERNAL_H

#include <locus/rma.h>

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/notes.h"
#include "rdma/rdma.h"

/* The control block: RMA_CTRL bytes at the end of every heap object, after
 * the user's part, reachable by peers like the rest of the heap. The
 * library's own symmetric words live here (never the user's). */
#define RMA_CTRL 4096u
#define RMA_CTRL_PROBE 0u   /* liveness READs land here (junk word) */
#define RMA_CTRL_BARRIER 64u /* dissemination slots: round k at +8k */
#define RMA_MAX_ROUNDS 32
#define RMA_CTRL_HELP 1024u  /* shared copies: this process's descriptors (help.c) */
#define RMA_HELP_SLOTS 16
/* The owner of a shared copy checks its takers' liveness after waiting this
 * long for their pieces. */
#define RMA_HELP_STUCK_NS 2000000ull

/* Liveness: while a call waits on memory only (barrier) or the caller polls
 * (locus_rma_progress), each peer is checked at most this often: a READ to
 * a NIC peer (a dead one fails it within the QP's detection time), kill(pid,
 * 0) to a local one. */
#define RMA_PROBE_NS 250000000ull
/* A barrier waiting this long yields the CPU at each poll, and after
 * RMA_SLEEP_NS sleeps between polls: RMA_NAP_NS, growing with the wait
 * (core/clock.h, lc_backoff_ns; sync.c, wait_slot). */
#define RMA_YIELD_NS 1000000ull
#define RMA_SLEEP_NS 20000000ull
#define RMA_NAP_NS 50000ull

typedef enum { RMA_PATH_LOCAL = 0, RMA_PATH_NIC = 1 } rma_path_t;

typedef struct rma_peer {
    rma_path_t path;    /* how puts/gets reach it */
    int put_hint;       /* locus_copy hint of puts into its mapped heap: NONE when it shares our L3 */
    int node;
    pid_t pid;          /* for the on-node liveness check */
    char *base;         /* LOCAL: its heap mapped here (self: ours) */
    uint64_t obj_size;  /* its heap object (its control block at obj_size - RMA_CTRL) */
    bool mapped;        /* base is our mapping of its object (detach at fini) */
    rdma_ep_t *ep;      /* NIC path or NIC atomics; NULL otherwise */
    rdma_comp_t probe;  /* outstanding liveness READ */
    bool failed;        /* found dead: every later operation fails at once */
    locus_status_t err; /* and why */
    char errmsg[400];
} rma_peer_t;

/* A region added by locus_rma_region_add: each rank's base. */
typedef struct rma_region {
    char *mine;
    uint64_t len;
    uint64_t *bases;    /* per rank: base, length, rkey (3 words each) */
} rma_region_t;

struct locus_rma {
    locus_rma_attr_t attr;
    locus_boot_t *boot;
    bool own_boot;
    int rank, size, node, num_nodes;
    locus_heap_t *heap;
    char *base;          /* our heap (= the user's symmetric heap) */
    uint64_t user_size;  /* symmetric bytes users may address */
    uint64_t obj_size;   /* heap object: user part + control block */
    rma_peer_t *peers;
    bool cpu_atomics;    /* the job's atomic agent: CPU (one node) or NIC */
    locus_rma_reg_t reg; /* in effect (cache may fall back to static) */
    /* NIC */
    rdma_md_t *md;
    rdma_iface_t *ifc;
    locus_reg_cache_t *cache;
    uint64_t bounce;     /* bounce buffer bytes: the threshold of copy vs registration */
    uint64_t max_chunk;  /* largest single work request */
    /* sync */
    uint64_t epoch;      /* barriers completed */
    uint64_t last_probe_ns;
    bool broken;         /* a peer failed: collectives are skipped at fini */
    int failed_rank;
    rma_region_t *regions;
    int nregions;
    /* shared copies (help.c) */
    bool oversubscribed;  /* more processes on this node than the cpus they may use */
    bool own_cpus;        /* each process of this node bound to cpus no other one may use */
    bool help_on;         /* large puts are shared with waiting peers */
    int *help_peers, nhelp_peers; /* the node's other processes (whose puts we may copy) */
    uint32_t help_gen[RMA_HELP_SLOTS];
    uint32_t help_edge[RMA_HELP_SLOTS]; /* bytes at each end the owner stores itself */
    int help_head, help_count; /* our posted descriptors, oldest first */
    locus_rma_stats_t stats;
    lc_notes_t notes;
};

/* ---- init.c ---- */
/* Collective: every process's status for one step; OK only if all are OK,
 * else the first failing rank's code and "what: rank R: its message". */
locus_status_t rma_agree(locus_rma_t *r, locus_status_t mine, const char *what);

/* ---- nic.c ---- */
/* Open the device, register the heap, create an endpoint for every rank
 * that needs one (need[r]), exchange the blobs and connect. Collective. */
locus_status_t rma_nic_setup(locus_rma_t *r, const bool *need);
void rma_nic_teardown(locus_rma_t *r);

/* ---- xfer.c ---- */
/* The offset of [sym, sym+len) in the symmetric heap, checked; or a region
 * (*region >= 0). op names the call in errors. */
locus_status_t rma_locate(const locus_rma_t *r, const char *op, int rank, const void *sym, size_t len,
                          int *region, uint64_t *off);
/* One transfer through the NIC to window `win` of `rank` (0: its heap, 1 + i:
 * added region i), cut into work requests; blocking as put/get. */
locus_status_t rma_nic_xfer(locus_rma_t *r, int rank, int win, uint64_t off, char *local, size_t len, bool put,
                            bool blocking);
/* A peer that failed: its error (the first one seen) again. */
locus_status_t rma_peer_error(locus_rma_t *r, int rank);
/* Note an endpoint failure (peer dead or link down): mark the rank. */
locus_status_t rma_fail_rank(locus_rma_t *r, int rank, locus_status_t st);

/* ---- sync.c ---- */
/* Probe every peer if RMA_PROBE_NS passed (force: now); OK or the first
 * failure found. */
locus_status_t rma_liveness(locus_rma_t *r, bool force);
/* The barrier over the transports (flags in the control blocks). */
locus_status_t rma_sync(locus_rma_t *r);

/* ---- help.c: large on-node puts shared with waiting peers ---- */
/* After the peers are mapped: whether this process shares its copies. */
void rma_help_init(locus_rma_t *r);
/* A put of [src, src+len) to `rank` that is shared: large, from our heap,
 * to a heap of this node. */
bool rma_help_wanted(const locus_rma_t *r, int rank, const void *src, size_t len);
/* Post it (a blocking one is complete at return, with every older one). */
void rma_help_put(locus_rma_t *r, int rank, uint64_t dst_off, const void *src, size_t len, bool blocking);
/* Complete every posted one (flush, fence, barrier, and before any other
 * operation, which keeps puts to a process in the order they were made). */
void rma_help_flush(locus_rma_t *r);
static inline void rma_help_settle(locus_rma_t *r)
{
    if (r->help_count)
        rma_help_flush(r);
}
/* Copy pieces of the node's other processes' posted puts (waits call it). */
void rma_help_others(locus_rma_t *r);
/* Take one piece of `owner`'s posted puts (its descriptor k, piece *piece),
 * which the taker must then copy and count; false if none is left. */
bool rma_help_take(locus_rma_t *r, int owner, int *k, uint64_t *piece);

/* ---- region.c ---- */
locus_status_t rma_region_xfer(locus_rma_t *r, int rank, int region, uint64_t off, void *local, size_t len,
                               bool put);
void rma_regions_free(locus_rma_t *r);

#endif
