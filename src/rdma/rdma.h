/* rdma: the off-node transport, verbs RC (rdma-core libibverbs). Internal to
 * liblocus: the one-sided RMA layer above (put/get/atomics on a symmetric
 * heap) uses it for peers on other nodes. Split by role like UCX's uct/ib:
 *
 *   md    memory domain   device, port, GID, PD, the heap registered once,
 *                         the registration cache for other buffers, a small
 *                         pre-registered bounce pool                (md.c, gid.c)
 *   iface interface       completion queue, device caps (inline size measured,
 *                         atomic byte order self-tested), progress, errors (iface.c)
 *   ep    endpoint        one RC QP per peer, its address blob, INIT->RTR->RTS,
 *                         failure and teardown                      (ep.c, addr.c)
 *   ops                   put (RDMA WRITE), get (READ), fetch-add, compare-swap,
 *                         selective signalling, flush               (ops.c)
 *
 *   rdma_attr_t a; rdma_attr_init(&a); rdma_attr_from_env(&a);   // LOCUS_RDMA_*
 *   rdma_md_open(&a, &md);              // LOCUS_ERR_NO_DEVICE without a device
 *   rdma_md_reg_heap(md, base, len);    // the symmetric heap, registered once
 *   rdma_iface_create(md, &ifc);
 *   rdma_ep_create(ifc, &ep);           // one per peer
 *   rdma_ep_addr(ep, blob);             // RDMA_ADDR_BYTES, exchanged out of band
 *   rdma_ep_connect(ep, peer_blob);
 *   rdma_put(ep, src, remote_offset, len, NULL);     // non-blocking
 *   rdma_comp_t c = {0};
 *   rdma_get(ep, dst, remote_offset, len, &c);
 *   rdma_wait(ifc, &c);                 // or rdma_ep_flush(ep) / rdma_iface_flush(ifc)
 *   rdma_ep_destroy(ep); rdma_iface_destroy(ifc); rdma_md_close(md);
 *
 * Remote addresses are offsets into the peer's exported heap (its blob
 * carries base, length and rkey), so every range is checked before a post.
 *
 * Completion. Posts never block on the network; they wait only for a free
 * send slot or bounce buffer (progressing completions meanwhile). An
 * operation given an rdma_comp_t is counted in it (pending++) and signalled;
 * the others are signalled every LOCUS_RDMA_SIGNAL-th request and whenever a
 * queue or pool nears exhaustion, and complete when a later signalled one
 * does (a send queue completes in order). rdma_ep_flush / rdma_iface_flush
 * wait for everything posted before them (posting a zero-byte marker WRITE if
 * the last request was unsignalled).
 * Local buffers: a put's source is reusable at return when it was sent inline
 * (len <= caps.max_inline) or copied to a bounce buffer (len <=
 * LOCUS_RDMA_BOUNCE_SIZE and outside the registered heap); otherwise, and for
 * every get destination and atomic result, only after completion.
 *
 * Errors. A failed completion puts its endpoint in error: operations before
 * the failed one completed, it and every later one complete with the error
 * (comps get the status; results are not written), later posts return it at
 * once, and the message names the first bad completion's status and
 * vendor_err. A dead peer is detected by the QP's own retries within
 * (LOCUS_RDMA_RETRY + 1) * 4.096 us * 2^LOCUS_RDMA_TIMEOUT (defaults: 0.47 s;
 * ep.c, "timeouts"). Nothing waits forever: a waiting call that sees no
 * completion for LOCUS_RDMA_STALL seconds fails the endpoints it waits on.
 *
 * Threads: not thread-safe. One thread drives an md and everything made from
 * it (callers serialise).
 */
#ifndef LOCUS_RDMA_H
#define LOCUS_RDMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <locus/reg.h>
#include <locus/status.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------- attributes (LOCUS_RDMA_*, defaults in src/core/tunables.def) ---------- */

typedef struct rdma_attr {
    const char *device;   /* NULL = the first device */
    int port;             /* 0 = the first active port */
    int gid_index;        /* -1 = chosen by type (gid.c) */
    int mtu;              /* largest path MTU as enum ibv_mtu (1 = 256 .. 5 = 4096); 0 = auto */
    int sq_depth;         /* send work requests per endpoint */
    int cq_depth;         /* initial completion queue entries */
    int signal_every;     /* request a completion every k-th work request */
    uint64_t inline_max;  /* inline bytes requested per QP */
    uint64_t bounce_size; /* bytes of one bounce buffer */
    int bounce_count;     /* bounce buffers per md */
    int timeout;          /* local ACK timeout exponent: 4.096 us * 2^timeout */
    int retry;            /* transport retries (0..6) */
    int rd_atomic;        /* READ/atomic operations in flight per QP */
    double stall_s;       /* backstop: seconds without completions before a wait fails */
} rdma_attr_t;

void rdma_attr_init(rdma_attr_t *a);
/* Override from the LOCUS_RDMA_* variables that are set; all or nothing. */
locus_status_t rdma_attr_from_env(rdma_attr_t *a);
/* Check hand-set fields; names the first bad one. */
locus_status_t rdma_attr_check(const rdma_attr_t *a);
/* Nominal time for a QP to give up on a silent peer: (retry + 1) * 4.096 us * 2^timeout. */
uint64_t rdma_detect_ns(int timeout, int retry);

/* ---------- address blob ---------- */

#define RDMA_ADDR_BYTES 64

enum { RDMA_LL_IB = 1, RDMA_LL_ETH = 2 }; /* link layers */

/* A decoded address blob: everything a peer needs to reach one endpoint. */
typedef struct rdma_peer {
    uint32_t qpn, psn;     /* 24-bit QP number and first packet sequence number */
    uint16_t lid;          /* InfiniBand local id (0 on RoCE) */
    uint8_t link_layer;    /* RDMA_LL_* */
    uint8_t mtu;           /* enum ibv_mtu of its port (active MTU) */
    uint8_t rd_atomic;     /* READ/atomics it accepts in flight (its max_dest_rd_atomic) */
    uint8_t atomics;       /* 1: its heap accepts remote atomics */
    uint8_t gid[16];
    uint64_t heap_base, heap_len; /* its exported heap (len 0: none) */
    uint32_t heap_rkey;
} rdma_peer_t;

/* Fixed little-endian layout (addr.c), independent of the host. */
void rdma_addr_pack(const rdma_peer_t *p, uint8_t out[RDMA_ADDR_BYTES]);
/* Validates magic, version and every field's range. */
locus_status_t rdma_addr_unpack(const uint8_t in[RDMA_ADDR_BYTES], rdma_peer_t *p);

/* ---------- md ---------- */

typedef struct rdma_md rdma_md_t;

typedef struct rdma_md_info {
    char device[64];
    int port;
    int link_layer;        /* RDMA_LL_* */
    int gid_index;
    int gid_type;          /* RDMA_GID_* (gid.c) */
    uint8_t gid[16];
    uint16_t lid;
    int active_mtu;        /* enum ibv_mtu of the port */
    int atomic_cap;        /* IBV_ATOMIC_NONE / HCA / GLOB */
    int max_qp_wr, max_qp_rd_atom, max_qp_init_rd_atom;
    uint64_t max_msg;      /* largest message of the port */
} rdma_md_info_t;

locus_status_t rdma_md_open(const rdma_attr_t *attr, rdma_md_t **out);
/* Close after every iface made from it is destroyed. Safe with NULL. */
void rdma_md_close(rdma_md_t *md);
const rdma_md_info_t *rdma_md_info(const rdma_md_t *md);
/* Register the heap peers address (once, static: for the md's lifetime) and
 * export it in every endpoint's blob. Local buffers inside it need no other
 * registration. */
locus_status_t rdma_md_reg_heap(rdma_md_t *md, void *base, size_t len);
/* Register [base, +len) for remote access (a window others address through
 * rdma_ep_set_window): *rkey for them; held until the md closes. */
locus_status_t rdma_md_reg_window(rdma_md_t *md, void *base, size_t len, uint32_t *rkey);
/* The registration cache used for other local buffers (on the md's PD). */
locus_reg_cache_t *rdma_md_cache(const rdma_md_t *md);
/* Choices and fallbacks ("GID 1: RoCE v2 ::ffff:10.0.2.15"), one per line. */
const char *rdma_md_notes(const rdma_md_t *md);

/* ---------- iface ---------- */

typedef struct rdma_iface rdma_iface_t;

typedef struct rdma_caps {
    uint32_t max_inline;   /* inline bytes a QP got (measured by creating one) */
    uint32_t sq_depth;     /* send work requests per endpoint (attr, capped by the device) */
    uint32_t signal_every;
    int rd_atomic;         /* our READ/atomics in flight per QP (before the peer's cap) */
    int atomic_cap;        /* IBV_ATOMIC_* as the device reports it */
    bool atomics;          /* the loopback self-test passed: fetch-add / cswap usable */
    bool atomic_bswap;     /* fetched values arrive byte-swapped (big-endian replies) */
    uint64_t detect_ns;    /* dead-peer detection time, rdma_detect_ns(timeout, retry) */
} rdma_caps_t;

typedef struct rdma_iface_stats {
    uint64_t puts, gets, atomics;
    uint64_t inline_puts, bounce, cached, heap; /* how local buffers went */
    uint64_t signalled, markers, cqes, stale_cqes, failed_eps, async_events;
} rdma_iface_stats_t;

locus_status_t rdma_iface_create(rdma_md_t *md, rdma_iface_t **out);
/* Destroys the endpoints still open. Safe with NULL. */
void rdma_iface_destroy(rdma_iface_t *ifc);
const rdma_caps_t *rdma_iface_caps(const rdma_iface_t *ifc);
void rdma_iface_stats(const rdma_iface_t *ifc, rdma_iface_stats_t *out);
/* Poll the completion queue once; returns completions handled. */
int rdma_iface_progress(rdma_iface_t *ifc);
/* flush_all: wait until everything posted on every endpoint completed. OK,
 * or the first failed endpoint's error. */
locus_status_t rdma_iface_flush(rdma_iface_t *ifc);

/* ---------- ep ---------- */

typedef struct rdma_ep rdma_ep_t;

/* Counts operations; zero it before use. pending is incremented by each
 * post that names it and decremented at that operation's completion;
 * status keeps the first error. */
typedef struct rdma_comp {
    uint32_t pending;
    locus_status_t status;
} rdma_comp_t;

/* Creates the QP (in INIT): its blob is ready for the exchange. */
locus_status_t rdma_ep_create(rdma_iface_t *ifc, rdma_ep_t **out);
void rdma_ep_addr(const rdma_ep_t *ep, uint8_t out[RDMA_ADDR_BYTES]);
/* INIT -> RTR -> RTS towards the peer whose blob this is. */
locus_status_t rdma_ep_connect(rdma_ep_t *ep, const uint8_t peer[RDMA_ADDR_BYTES]);
/* The peer's heap as its blob said. */
void rdma_ep_remote(const rdma_ep_t *ep, uint64_t *base, uint64_t *len);
/* OK, or the error that failed the endpoint (the thread's detail set again). */
locus_status_t rdma_ep_status(const rdma_ep_t *ep);
/* Operations posted and not yet completed. */
uint32_t rdma_ep_outstanding(const rdma_ep_t *ep);
/* Wait until everything posted on ep completed; OK or the ep's error. */
locus_status_t rdma_ep_flush(rdma_ep_t *ep);
/* Order what is posted on ep before what is posted next: RC executes a QP's
 * WRITEs in order, so after WRITEs alone nothing is waited for; a request
 * may pass an RDMA READ or atomic still in flight, so then ep is flushed.
 * (IBV_SEND_FENCE on the next request would order it in the NIC without
 * waiting, but Soft-RoCE in Debian 12's kernel stalled QPs with it: 30 s
 * without a completion in vm_shmem_pair_4pes. Its 6.1 source can lose the
 * wake-up: rxe_req parks a fenced request (wait_fence) after reading
 * rd_atomic, and only a later completion in rxe_comp, or another post,
 * runs it again; a READ that completes between the two leaves it parked
 * while the program waits in quiet.) OK or the ep's error. */
locus_status_t rdma_ep_fence(rdma_ep_t *ep);
/* Pending operations complete with LOCUS_ERR_BUSY; the QP is drained and
 * destroyed. Safe with NULL. */
void rdma_ep_destroy(rdma_ep_t *ep);

/* ---------- operations (non-blocking) ---------- */

/* RDMA WRITE of len bytes from src to the peer's heap at roff. len 0: no-op. */
/* Remote windows: window 0 is the peer's heap (from its address blob); a
 * caller that exchanged more registered ranges (rdma_md_reg_window on the
 * peer) sets them as windows 1..RDMA_MAX_WINDOWS-1, and the _w operations
 * address one by index. Offsets, ranges and alignment are checked against
 * that window. */
#define RDMA_MAX_WINDOWS 8
locus_status_t rdma_ep_set_window(rdma_ep_t *ep, int w, uint64_t base, uint64_t len, uint32_t rkey);
locus_status_t rdma_put_w(rdma_ep_t *ep, int w, const void *src, uint64_t roff, size_t len, rdma_comp_t *comp);
locus_status_t rdma_get_w(rdma_ep_t *ep, int w, void *dst, uint64_t roff, size_t len, rdma_comp_t *comp);
locus_status_t rdma_fetch_add_w(rdma_ep_t *ep, int w, uint64_t roff, uint64_t add, uint64_t *result,
                                rdma_comp_t *comp);
locus_status_t rdma_cswap_w(rdma_ep_t *ep, int w, uint64_t roff, uint64_t compare, uint64_t swap,
                            uint64_t *result, rdma_comp_t *comp);
locus_status_t rdma_put(rdma_ep_t *ep, const void *src, uint64_t roff, size_t len, rdma_comp_t *comp);
/* Whether rdma_put(ep, src, ..., len) copies the source at post (inline or
 * through a bounce buffer): then src is reusable when the put returns, else
 * only after its completion. */
bool rdma_put_copies_source(const rdma_ep_t *ep, const void *src, size_t len);
/* RDMA READ of len bytes from the peer's heap at roff into dst. */
locus_status_t rdma_get(rdma_ep_t *ep, void *dst, uint64_t roff, size_t len, rdma_comp_t *comp);
/* 64-bit atomics on the peer's heap at roff (8-byte aligned). The old value
 * goes to *result (may be NULL for fetch-add) at completion, in host order. */
locus_status_t rdma_fetch_add(rdma_ep_t *ep, uint64_t roff, uint64_t add, uint64_t *result,
                              rdma_comp_t *comp);
locus_status_t rdma_cswap(rdma_ep_t *ep, uint64_t roff, uint64_t compare, uint64_t swap, uint64_t *result,
                          rdma_comp_t *comp);
/* Progress until comp->pending is 0; returns comp->status. */
locus_status_t rdma_wait(rdma_iface_t *ifc, rdma_comp_t *comp);

#ifdef __cplusplus
}
#endif
#endif
