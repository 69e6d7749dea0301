/* shm segment: what lives in the shared mapping (header, one line per
 * process, layout) and the functions of job.c, seg.c and plan.c. */
#ifndef LOCUS_SHM_SEG_H
#define LOCUS_SHM_SEG_H

#include <locus/shm.h>
#include <stdbool.h>
#include <stdint.h>

#define SHM_MAGIC 0x316d68737375636cULL /* "locusshm1" */
#define SHM_VERSION 1u
#define SHM_HDR_BYTES 256u
#define SHM_PROC_BYTES 64u
#define SHM_PAGE 4096u

/* Segment header (shared). Line 0 is written by the creator before `ready`;
 * `ready` and `attached` live on their own lines. */
typedef struct shm_seg_hdr {
    uint64_t magic;
    uint32_t version, nprocs;
    uint64_t segment_bytes, queue_bytes, heap_bytes, eager_bytes;
    uint32_t max_len, creator_pid;
    uint64_t salt; /* ring header salt (random, top bit set) */
    uint32_t ready; uint32_t _pad1[15];
    uint32_t attached; uint32_t _pad2[15];
    uint32_t unlinked; uint32_t _pad3[15];
} shm_seg_hdr_t;

enum { PROC_EMPTY = 0, PROC_ALIVE = 1, PROC_FINALIZED = 2 };

/* One line per process, written by its owner (except the CAS words below). */
typedef struct shm_proc {
    int32_t pid;
    uint32_t state;
    int32_t cpu, l3;
    uint64_t barrier;
    uint32_t fbox_used; /* fast boxes of my pool claimed by senders (CAS, never freed; fbox.c) */
    uint32_t _pad32;
    uint64_t split_claim; /* split copy into my heap: job(32) | front(16) | back(16) (split.c) */
    uint64_t split_done;  /* pieces its sender finished (the sender adds, release; split.c) */
    uint64_t _pad[2];
} shm_proc_t;

/* Byte offsets inside the segment (derived from the plan). */
typedef struct shm_layout {
    uint64_t procs, queues, heaps, queue_stride;
    uint64_t fboxes, fbox_stride; /* fast box pools: box i of process r at fboxes + (r * F + i) * stride */
    uint32_t ncells, max_len;
    uint64_t frag_bytes;
} shm_layout_t;

/* The footprint model (plan.c). */
locus_status_t shm_plan_layout(int nprocs, const locus_shm_opts_t *opts, locus_shm_plan_t *plan,
                               shm_layout_t *lay);
/* A job name (opts.job, segment names): 1-48 characters from [A-Za-z0-9_.-] (plan.c). */
locus_status_t shm_validate_job(const char *value);

/* The job's name and this process's local rank and size into ep->rank/size
 * (job.c: opts.boot, explicit options, LOCUS_RANK/SIZE/JOB, or boot joined
 * here: ep->boot_owned). */
locus_status_t shm_job_ids(locus_shm_ep_t *ep, const locus_shm_opts_t *opts, char *job, size_t joblen);

/* Segment bootstrap and peer liveness (seg.c). */
locus_status_t shm_segment_attach(locus_shm_ep_t *ep, const locus_shm_opts_t *opts);
void shm_segment_detach(locus_shm_ep_t *ep);
/* Check peers' liveness; sets ep->fatal and returns PEER_FAILED if one died. */
locus_status_t shm_check_peers(locus_shm_ep_t *ep);
/* Has peer r's process exited (its pidfd, else kill(0))? No side effects. */
bool shm_peer_exited(const locus_shm_ep_t *ep, int r);
/* A fallback taken, said once (locus_shm_notes). */
void shm_note(locus_shm_ep_t *ep, const char *msg);

#endif
