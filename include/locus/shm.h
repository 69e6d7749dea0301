/* locus shm: the on-node shared-memory transport.
 *
 * Processes of one job on one node share ONE segment (created by local rank 0,
 * sized by the footprint model of locus_shm_plan(), unlinked from /dev/shm as
 * soon as every process attached). Each process owns a multi-producer ring of
 * 64-byte cells in it: tiny messages travel inline in one cell, small ones
 * (<= LOCUS_SHM_EAGER) as consecutive cells (copy-in, copy-out, no second
 * buffer), large ones by a rendezvous and a single copy: a plain copy from the
 * peer's mapping when the send buffer lives in the sender's shared heap
 * (locus_shm_alloc; from LOCUS_SHM_SPLIT on, when the receive buffer is in
 * the receiver's heap too, both processes copy a share of it), else
 * process_vm_readv (CMA) or a pipelined copy through
 * the ring, whichever moved bytes faster lately (LOCUS_SHM_CMA=auto; the
 * pipeline also when the kernel refuses CMA). A sender that has sent 16
 * messages to a peer gets a per-pair "fast box" in the peer's capped pool (a
 * small single-producer ring that stays hot in cache); small messages then go
 * through it, still matched in send order, and each box has a one-cell
 * "mailbox" that blocking sends of messages up to 32 B use when the receiver
 * has freed it (a reused line: the lowest latency of a request-response).
 *
 * Semantics: tagged, non-blocking, explicit progress. Messages between one
 * pair of processes are matched in the order they were sent. A send request
 * completes when its buffer may be reused; a receive when the data is in the
 * buffer. A non-blocking send from the shared heap of LOCUS_SHM_REF bytes or
 * more (up to LOCUS_SHM_EAGER) to a peer with a fast box goes "by reference":
 * the receiver copies straight from the sender's heap, so the send completes
 * only once the receiver's progress has taken the data (a matching receive is
 * not waited for); the blocking locus_shm_send below LOCUS_SHM_EAGER never
 * waits for the receiver. If any peer dies without locus_shm_finalize(), every pending and
 * later operation fails with LOCUS_ERR_PEER_FAILED: progress polls the peers'
 * pidfds every millisecond (tens of ms when CPUs are oversubscribed). A peer
 * that finalized and exited is not a failure, but sends aimed at it, and
 * receives from it once what it sent has been received, fail with
 * LOCUS_ERR_PEER_FAILED. A message that
 * fails a bounds check (length, type, source, offset) breaks the endpoint with
 * LOCUS_ERR_CORRUPT; nothing is read or written outside the segment.
 * locus_shm_finalize() first posts what it still owes peers (rendezvous
 * replies), so peers must keep progressing until they finalize too.
 *
 * Thread safety: an endpoint is NOT thread-safe; use it from one thread at a
 * time (serialise calls yourself). Different endpoints are independent.
 */
#ifndef LOCUS_SHM_H
#define LOCUS_SHM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <locus/boot.h>
#include <locus/status.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct locus_shm_ep locus_shm_ep_t;
typedef struct locus_shm_req locus_shm_req_t;

#define LOCUS_SHM_ANY_SOURCE (-1)
#define LOCUS_SHM_ANY_TAG UINT64_MAX /* not usable as a send tag */

/* Options; a zero field means "from the job / default". Which job and which
 * local rank, in this order:
 *   boot  the caller's handle (locus_boot_init): rank = locus_boot_local_rank,
 *         size = locus_boot_local_size, job = locus_boot_job. Read during
 *         locus_shm_init only; it stays the caller's.
 *   rank, size and job all given: those (boot is not asked).
 *   LOCUS_RANK or LOCUS_SIZE set without LOCUS_BOOT (a launcher that sets
 *         LOCUS_RANK/SIZE/JOB itself, as `locus run` did before boot, or a
 *         harness forking the processes): those, as they are.
 *   else  locus_shm_init joins the job itself (locus_boot_init(NULL): PMIx,
 *         PMI-1 under MPICH's mpiexec, Slurm, `locus run`, or a singleton)
 *         and locus_shm_finalize leaves it. Under PMI-1 and `locus run` a
 *         process joins its job once: one that holds a boot handle must pass
 *         it here. (PMIx launcher without a usable libpmix: Open MPI's
 *         OMPI_COMM_WORLD_LOCAL_RANK/LOCAL_SIZE + PMIX_NAMESPACE.)
 * rank, size and job, where given, override what the source said. */
typedef struct locus_shm_opts {
    int rank;            /* -1 = from the job */
    int size;            /* 0 = from the job */
    const char *job;     /* NULL = from the job */
    uint64_t queue_bytes; /* ring bytes per process; 0 = LOCUS_SHM_QUEUE or auto */
    uint64_t heap_bytes;  /* shared heap per process; 0 = LOCUS_SHM_HEAP */
    locus_boot_t *boot;  /* NULL = join the job in locus_shm_init (above) */
} locus_shm_opts_t;

/* opts->rank = -1, everything else 0. */
LOCUS_API void locus_shm_opts_init(locus_shm_opts_t *opts);

/* Footprint model: every byte of the node segment. */
typedef struct locus_shm_plan {
    int nprocs;
    uint64_t queue_bytes;     /* ring bytes per process (cells) */
    uint64_t eager_bytes;     /* largest message carried in the ring */
    uint64_t heap_bytes;      /* shared heap per process */
    uint64_t control_bytes;   /* segment header + one line per process */
    uint64_t queue_ctl_bytes; /* head and tail lines of one queue */
    uint64_t per_process;     /* queue_ctl + queue + heap + its control line */
    uint64_t segment_bytes;   /* whole segment, page-rounded: what is mapped */
    uint64_t private_per_process; /* process-private bookkeeping estimate (not shared) */
    uint32_t fboxes;          /* fast boxes per process (per-pair SPSC rings, given to its first senders) */
    uint64_t fbox_bytes;      /* cells of one fast box (plus queue_ctl_bytes of control) */
    uint64_t fbox_eager_bytes; /* largest payload a fast box carries */
} locus_shm_plan_t;

/* The plan for nprocs processes with these options (NULL = defaults/environment). */
LOCUS_API locus_status_t locus_shm_plan(int nprocs, const locus_shm_opts_t *opts,
                                        locus_shm_plan_t *out);
LOCUS_API locus_status_t locus_shm_plan_print(const locus_shm_plan_t *plan, FILE *out, bool json);

/* The /dev/shm object name for a job ("/locus-<uid>-<job>"). */
LOCUS_API locus_status_t locus_shm_segment_name(const char *job, char *buf, size_t len);

/* Join the job's segment (collective over the local processes). */
LOCUS_API locus_status_t locus_shm_init(const locus_shm_opts_t *opts, locus_shm_ep_t **out);
/* Wait for outstanding sends, leave, unmap. Safe with NULL. */
LOCUS_API locus_status_t locus_shm_finalize(locus_shm_ep_t *ep);

LOCUS_API int locus_shm_rank(const locus_shm_ep_t *ep);
LOCUS_API int locus_shm_size(const locus_shm_ep_t *ep);
/* The plan the segment was sized from. */
LOCUS_API const locus_shm_plan_t *locus_shm_get_plan(const locus_shm_ep_t *ep);
/* Fallbacks taken ("CMA refused by the kernel (EPERM): pipelined copy used"), one
 * per line, each said once; "" if none. */
LOCUS_API const char *locus_shm_notes(const locus_shm_ep_t *ep);

/* Shared heap (LOCUS_SHM_HEAP / opts.heap_bytes per process): buffers every
 * local peer can read directly, so large sends from them need one plain copy.
 * 64-byte aligned; NULL (with locus_last_error) when full. */
LOCUS_API void *locus_shm_alloc(locus_shm_ep_t *ep, size_t bytes);
LOCUS_API void locus_shm_free(locus_shm_ep_t *ep, void *p);

/* Non-blocking tagged send/receive. *req is owned by the library until
 * locus_shm_test() reports it done or locus_shm_wait() returns. */
LOCUS_API locus_status_t locus_shm_isend(locus_shm_ep_t *ep, int dst, uint64_t tag,
                                         const void *buf, size_t len, locus_shm_req_t **req);
LOCUS_API locus_status_t locus_shm_irecv(locus_shm_ep_t *ep, int src, uint64_t tag, void *buf,
                                         size_t capacity, locus_shm_req_t **req);

typedef struct locus_shm_info {
    int source;
    uint64_t tag;
    size_t len;            /* bytes delivered (receives) or sent */
    locus_status_t status; /* LOCUS_ERR_TRUNCATED if the message was longer */
} locus_shm_info_t;

/* Advance every pending operation; LOCUS_ERR_PEER_FAILED once a peer died. */
LOCUS_API locus_status_t locus_shm_progress(locus_shm_ep_t *ep);
/* *done = true and the request released when complete; info may be NULL.
 * Returns the request's status once done (LOCUS_OK while pending). */
LOCUS_API locus_status_t locus_shm_test(locus_shm_ep_t *ep, locus_shm_req_t *req, bool *done,
                                        locus_shm_info_t *info);
/* Progress until req completes; releases it. */
LOCUS_API locus_status_t locus_shm_wait(locus_shm_ep_t *ep, locus_shm_req_t *req,
                                        locus_shm_info_t *info);
/* Blocking helpers. */
LOCUS_API locus_status_t locus_shm_send(locus_shm_ep_t *ep, int dst, uint64_t tag, const void *buf,
                                        size_t len);
LOCUS_API locus_status_t locus_shm_recv(locus_shm_ep_t *ep, int src, uint64_t tag, void *buf,
                                        size_t capacity, locus_shm_info_t *info);
/* All local processes; progresses while waiting. */
LOCUS_API locus_status_t locus_shm_barrier(locus_shm_ep_t *ep);

/* What an endpoint did since init, by path. A received message is counted
 * by the receiver on the path that carried it (bytes: the messages' lengths):
 * eager and by reference once its payload is taken (into the receive or the
 * unexpected list), a rendezvous once its copy has a path (a CMA read the
 * kernel refuses counts as pipeline). The sender counts its sends by
 * reference and the pieces of split copies it took. */
typedef struct locus_shm_stats {
    uint64_t eager_msgs, eager_bytes; /* in ring or fast-box cells (mailbox included) */
    uint64_t mailbox_msgs;            /* of those, through a fast box's one-cell mailbox */
    uint64_t ref_msgs, ref_bytes;     /* by reference: copied from the sender's shared heap */
    uint64_t heap_msgs, heap_bytes;   /* rendezvous, one copy from the sender's shared heap */
    uint64_t split_msgs;              /* of those, copied by both sides (split copy, LOCUS_SHM_SPLIT) */
    uint64_t cma_msgs, cma_bytes;     /* rendezvous by process_vm_readv */
    uint64_t pipe_msgs, pipe_bytes;   /* rendezvous by the pipelined copy through the ring */
    uint64_t split_pieces_recv;       /* split copy pieces this process took as the receiver */
    uint64_t split_pieces_sent;       /* ... and as the sender, for its receivers */
    uint64_t ref_sent;                /* sends this process posted by reference (LOCUS_SHM_REF) */
    uint32_t fboxes_claimed;          /* fast boxes this process holds (claimed, announced) in peers' pools */
    uint32_t fboxes_polled;           /* boxes of its own pool that peers announced */
    double cma_gbps, pipe_gbps;       /* LOCUS_SHM_CMA=auto's recent rate of each way; 0 = not measured */
} locus_shm_stats_t;

LOCUS_API locus_status_t locus_shm_stats(const locus_shm_ep_t *ep, locus_shm_stats_t *out);

#ifdef __cplusplus
}
#endif
#endif
