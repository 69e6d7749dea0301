/* rdma internals: the md, iface and ep structs shared by the module's files. */
#ifndef LOCUS_RDMA_INTERNAL_H
#define LOCUS_RDMA_INTERNAL_H

#include "rdma/rdma.h"

#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stdint.h>
#include "core/notes.h"

/* ---------- gid.c ---------- */

enum { RDMA_GID_UNKNOWN = -1, RDMA_GID_IB = 0, RDMA_GID_ROCE_V1 = 1, RDMA_GID_ROCE_V2 = 2 };

typedef struct rdma_gid_entry {
    uint8_t raw[16];
    int type; /* RDMA_GID_* */
} rdma_gid_entry_t;

/* The entry to use (pure, gid.c "choice"); -1 if none fits. */
int rdma_gid_pick(const rdma_gid_entry_t *e, int n, int link_layer);
/* Type of GID `index` from <root>/class/infiniband/<dev>/ports/<port>/gid_attrs/types/<index>. */
int rdma_gid_sysfs_type(const char *root, const char *dev, int port, int index, int link_layer);
/* Fill md->info.gid_index/gid/gid_type for the chosen port (notes say how). */
locus_status_t rdma_gid_select(rdma_md_t *md, int want, int gid_tbl_len);
const char *rdma_gid_type_name(int type);
/* "::ffff:10.0.2.15" or "fe80::..."-style text of a GID. */
void rdma_gid_text(const uint8_t gid[16], char *buf, size_t len);

/* ---------- md.c ---------- */

/* Bounce buffers and 8-byte atomic result cells: one registered block. */
typedef struct rdma_pool {
    char *mem;
    size_t bytes;
    struct ibv_mr *mr;
    uint32_t bsize, nbounce, ncells;
    uint32_t *bfree, nbfree;   /* stacks of free indexes */
    uint32_t *cfree, ncfree;
} rdma_pool_t;

struct rdma_md {
    rdma_attr_t attr;
    char devname[64];
    struct ibv_device **list;
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    rdma_md_info_t info;
    locus_reg_cache_t *cache;
    bool cache_trusted;   /* the memory hooks keep the cache from going stale */
    rdma_pool_t pool;
    struct { char *base; uint64_t len; uint32_t lkey, rkey; } heap;
    int nifaces;
    lc_notes_t notes;
};

static inline char *pool_bounce(rdma_md_t *md, int i) { return md->pool.mem + (size_t)i * md->pool.bsize; }
static inline uint64_t *pool_cell(rdma_md_t *md, int i)
{
    return (uint64_t *)(md->pool.mem + (size_t)md->pool.nbounce * md->pool.bsize) + i;
}
/* -1 when empty. */
int rdma_pool_take_bounce(rdma_md_t *md);
int rdma_pool_take_cell(rdma_md_t *md);
void rdma_pool_give_bounce(rdma_md_t *md, int i);
void rdma_pool_give_cell(rdma_md_t *md, int i);

/* ---------- ep ---------- */

enum { EP_INIT = 0, EP_CONNECTED = 1, EP_FAILED = 2 };

/* What one posted work request holds until it completes. */
typedef struct rdma_slot {
    rdma_comp_t *comp;
    const locus_reg_t *reg;   /* cache registration to put back */
    void *copy_dst;           /* get through a bounce buffer: copy len bytes here */
    uint64_t *result;         /* atomic: the fetched value goes here */
    uint32_t len;
    int32_t bounce, cell;     /* pool indexes or -1 */
    uint8_t op;               /* what was posted (error messages) */
} rdma_slot_t;

struct rdma_ep {
    rdma_iface_t *ifc;
    struct ibv_qp *qp;
    uint32_t id;              /* table slot | generation << 20: high half of every wr_id */
    uint32_t psn;
    int state;
    rdma_slot_t *slots;       /* ring, indexed by sequence & mask */
    uint32_t mask, depth;
    uint32_t max_inline;      /* inline bytes the provider gave this QP */
    uint64_t head, tail;      /* next sequence to post; oldest not completed */
    uint32_t unsignalled;     /* requests posted since the last signalled one */
    uint64_t rdat_end;        /* 1 + the sequence of the last READ or atomic posted (0: none) */
    uint64_t progress_ns;     /* last completion, or the first signalled post after it */
    bool draining, drained;   /* destroy: marker posted / its completion seen */
    uint64_t drain_seq;
    rdma_peer_t peer;
    struct rdma_win { uint64_t base, len; uint32_t rkey; } win[RDMA_MAX_WINDOWS]; /* [0]: peer.heap_* */
    int rd_atomic;            /* max_rd_atomic in use */
    locus_status_t err;
    char errmsg[320];
    struct rdma_ep *next, *prev;
};

#define RDMA_EP_SLOT_BITS 20
#define RDMA_EP_MAX (1u << RDMA_EP_SLOT_BITS)

/* ---------- iface ---------- */

struct rdma_iface {
    rdma_md_t *md;
    struct ibv_cq *cq;
    int cq_cap, cq_need;      /* entries; worst case the live QPs can produce */
    rdma_caps_t caps;
    rdma_ep_t **table;        /* ep by slot (id & (RDMA_EP_MAX - 1)) */
    uint16_t *gen;
    uint32_t table_cap, nfree;
    uint32_t *free_slots;
    rdma_ep_t *eps;           /* every endpoint */
    uint64_t last_check_ns;
    rdma_iface_stats_t stats;
    char lastmsg[320];        /* the latest endpoint failure (rdma_wait reports it) */
};

/* ep.c */
locus_status_t rdma_ep_create_qp(rdma_iface_t *ifc, uint32_t max_inline, rdma_ep_t **out);
locus_status_t rdma_ep_connect_peer(rdma_ep_t *ep, const rdma_peer_t *peer);
/* Fail ep (once): every outstanding operation completes with code. */
void rdma_ep_fail(rdma_ep_t *ep, locus_status_t code, const char *fmt, ...) LOCUS_PRINTF(3, 4);
void rdma_ep_fill_peer(const rdma_ep_t *ep, rdma_peer_t *p);

/* ops.c */
/* Retire [ep->tail, upto) with status (OK: copy results out). */
void rdma_ops_retire(rdma_ep_t *ep, uint64_t upto, locus_status_t status);
/* A completion for ep (sequence reconstructed from its low 32 bits). */
void rdma_ops_complete(rdma_ep_t *ep, const struct ibv_wc *wc);
/* The operation of request seq (posted, not retired), for messages. */
const char *rdma_ops_name(const rdma_ep_t *ep, uint64_t seq);
/* Post a signalled zero-byte WRITE after an unsignalled tail (flush); marker
 * = a drain marker outside the slot ring (destroy). */
int rdma_ops_post_marker(rdma_ep_t *ep, bool drain);

/* iface.c */
/* Wait-loop housekeeping at most every millisecond: async events, stalls. */
void rdma_iface_check(rdma_iface_t *ifc, bool force);
locus_status_t rdma_iface_add_ep(rdma_iface_t *ifc, rdma_ep_t *ep);
void rdma_iface_remove_ep(rdma_iface_t *ifc, rdma_ep_t *ep, bool drained);
/* Progress until cond(arg) holds (the stall backstop fails stuck endpoints,
 * so a condition that their completion satisfies always comes true). */
void rdma_iface_wait_until(rdma_iface_t *ifc, bool (*cond)(void *), void *arg);

static inline uint32_t rdma_ep_busy(const rdma_ep_t *ep) { return (uint32_t)(ep->head - ep->tail); }

#endif
