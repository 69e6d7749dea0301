/* The footprint model: the segment layout computed byte by byte. The segment
 * is sized from this and nothing else, so `locus plan shm` is what gets mapped. */
#include "shm/shm_internal.h"

#include "core/config.h"
#include "core/error.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

_Static_assert(sizeof(shm_seg_hdr_t) == SHM_HDR_BYTES, "segment header is 4 lines");
_Static_assert(sizeof(shm_proc_t) == SHM_PROC_BYTES, "one line per process");
_Static_assert(sizeof(shmq_hdr_t) == SHMQ_HDR, "queue header is half a cell");

void locus_shm_opts_init(locus_shm_opts_t *opts)
{
    memset(opts, 0, sizeof *opts);
    opts->rank = -1;
}

static uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

/* Default ring: 1 MiB per process, shrinking so the rings stay near 64 MiB
 * per node, never below 64 KiB (N = 1024 -> 64 KiB, 67 MB per node). */
static uint64_t auto_queue(int n)
{
    uint64_t q = 1u << 20;
    while (q > (64u << 10) && q * (uint64_t)n > (64u << 20))
        q >>= 1;
    return q;
}

static locus_status_t read_size(lc_tun_id_t id, uint64_t *out)
{
    return lc_tun_size(id, out);
}

typedef struct plan_sizes {
    uint64_t queue, heap, eager, frag, fbox;
    int64_t nfb;
} plan_sizes_t;

/* The sizes asked for (opts, else the tunables), validated. */
static locus_status_t read_sizes(int nprocs, const locus_shm_opts_t *opts, plan_sizes_t *z)
{
    locus_status_t st;
    z->queue = opts ? opts->queue_bytes : 0;
    z->heap = opts ? opts->heap_bytes : 0;
    if (!z->queue && (st = read_size(LC_TUN_SHM_QUEUE, &z->queue)))
        return st;
    if (!z->heap && (st = read_size(LC_TUN_SHM_HEAP, &z->heap)))
        return st;
    /* found by fuzz_plan: a heap near 2^64 wrapped the segment size */
    if (z->heap > (1ull << 40))
        return lc_err(LOCUS_ERR_RANGE, "shared heap %" PRIu64 " bytes per process: expected at most 1 TiB",
                      z->heap);
    if ((st = read_size(LC_TUN_SHM_EAGER, &z->eager)) || (st = read_size(LC_TUN_SHM_FRAG, &z->frag)))
        return st;
    if (!z->queue)
        z->queue = auto_queue(nprocs);
    if (z->queue < 4096 || (z->queue & (z->queue - 1)) || z->queue > (1ull << 34))
        return lc_err(LOCUS_ERR_INVALID, "queue %" PRIu64 " bytes: expected a power of two in [4K, 16G]",
                      z->queue);
    if ((st = lc_tun_int(LC_TUN_SHM_FBOXES, &z->nfb)) || (st = read_size(LC_TUN_SHM_FBOX, &z->fbox)))
        return st;
    if (z->fbox && (z->fbox < 512 || (z->fbox & (z->fbox - 1)) || z->fbox > (1u << 20)))
        return lc_err(LOCUS_ERR_INVALID,
                      "fast box %" PRIu64 " bytes: expected a power of two in [512, 1M] (0 = auto)", z->fbox);
    return LOCUS_OK;
}

/* The sizes that follow from those asked for: eager messages and fragments
 * at most a quarter of a queue, the heap in whole pages, and how many fast
 * boxes per process and how big. LOCUS_SHM_FBOX (default 64
 * KiB, `locus tune` may measure another), halved while all boxes of the node
 * exceed 16 MiB, never below 512 B (then fewer boxes): 1024 processes -> 32 x
 * 512 B. So a value measured with 2 processes cannot blow up the segment of
 * 1024. 64 KiB rather than 16: a streaming sender stays further ahead of its
 * receiver (2 processes: 1 KiB rate +6 %, 4 KiB +4 %; 128 KiB gave 1 KiB +11 %
 * but 4 KiB -4 %). */
static void derive_sizes(int nprocs, plan_sizes_t *z)
{
    if (z->nfb > nprocs - 1)
        z->nfb = nprocs - 1;
    if (z->nfb > 0) {
        if (!z->fbox)
            z->fbox = 64u << 10;
        while (z->fbox > 512 && (uint64_t)nprocs * (uint64_t)z->nfb * z->fbox > (16u << 20))
            z->fbox >>= 1;
        while (z->nfb > 0 && (uint64_t)nprocs * (uint64_t)z->nfb * z->fbox > (16u << 20))
            z->nfb--;
    }
    if (z->nfb <= 0)
        z->fbox = 0, z->nfb = 0;
    uint64_t quarter = z->queue / 4 - SHMQ_HDR;
    if (z->eager > quarter)
        z->eager = quarter;
    if (z->frag > quarter)
        z->frag = quarter;
    z->heap = round_up(z->heap, SHM_PAGE);
}

/* The segment's layout: [hdr][heaps (page aligned)][procs][queues][fast boxes]. */
static void fill_layout(int nprocs, const plan_sizes_t *z, locus_shm_plan_t *plan, shm_layout_t *lay)
{
    uint64_t fb_per_proc = (uint64_t)z->nfb * (SHMQ_CTL_BYTES + z->fbox);
    uint64_t off = z->heap ? SHM_PAGE : SHM_HDR_BYTES;
    lay->heaps = off;
    off += (uint64_t)nprocs * z->heap;
    lay->procs = off;
    off += (uint64_t)nprocs * SHM_PROC_BYTES;
    lay->queues = off;
    lay->queue_stride = SHMQ_CTL_BYTES + z->queue;
    off += (uint64_t)nprocs * lay->queue_stride;
    lay->fboxes = off;
    lay->fbox_stride = SHMQ_CTL_BYTES + z->fbox;
    off += (uint64_t)nprocs * fb_per_proc;
    plan->segment_bytes = round_up(off, SHM_PAGE);
    plan->per_process = SHM_PROC_BYTES + SHMQ_CTL_BYTES + z->queue + z->heap + fb_per_proc;
    lay->ncells = (uint32_t)(z->queue / SHMQ_CELL);
    lay->frag_bytes = z->frag;
    uint64_t maxlen = z->eager > z->frag ? z->eager : z->frag;
    if (maxlen < sizeof(shm_rts_t))
        maxlen = sizeof(shm_rts_t);
    lay->max_len = (uint32_t)maxlen;
}

/* The footprint model: what the segment holds per process and in all, and
 * what each process keeps privately (queue views, cached heads, send lists,
 * flags). */
static void fill_plan(int nprocs, const plan_sizes_t *z, locus_shm_plan_t *plan)
{
    memset(plan, 0, sizeof *plan);
    plan->nprocs = nprocs;
    plan->queue_bytes = z->queue;
    plan->eager_bytes = z->eager;
    plan->heap_bytes = z->heap;
    plan->control_bytes = SHM_HDR_BYTES + (uint64_t)nprocs * SHM_PROC_BYTES;
    if (z->heap)
        plan->control_bytes += SHM_PAGE - SHM_HDR_BYTES; /* alignment gap before the heaps */
    plan->queue_ctl_bytes = SHMQ_CTL_BYTES;
    plan->fboxes = (uint32_t)z->nfb;
    plan->fbox_bytes = z->fbox;
    if (z->nfb) {
        uint64_t fmax = z->fbox / 2 - SHMQ_HDR;
        plan->fbox_eager_bytes = fmax < z->eager ? fmax : z->eager;
        if (plan->fbox_eager_bytes < sizeof(shm_rts_t))
            plan->fbox_eager_bytes = sizeof(shm_rts_t);
    }
    plan->private_per_process = sizeof(locus_shm_ep_t) +
                                (uint64_t)nprocs * (sizeof(shmq_t) + sizeof(uint64_t) + sizeof(shm_list_t) +
                                                    3 * sizeof(bool) + sizeof(pid_t) + sizeof(struct pollfd) +
                                                    sizeof(shm_fbtx_t) + sizeof(uint64_t)) +
                                (uint64_t)z->nfb * sizeof(shm_fbrx_t);
}

locus_status_t shm_plan_layout(int nprocs, const locus_shm_opts_t *opts, locus_shm_plan_t *plan,
                               shm_layout_t *lay)
{
    if (nprocs < 1 || nprocs > 65536)
        return lc_err(LOCUS_ERR_INVALID, "procs %d: expected 1..65536 local processes", nprocs);
    plan_sizes_t z;
    locus_status_t st = read_sizes(nprocs, opts, &z);
    if (st != LOCUS_OK)
        return st;
    derive_sizes(nprocs, &z);
    fill_plan(nprocs, &z, plan);
    fill_layout(nprocs, &z, plan, lay);
    return LOCUS_OK;
}

locus_status_t locus_shm_plan(int nprocs, const locus_shm_opts_t *opts, locus_shm_plan_t *out)
{
    shm_layout_t lay;
    return shm_plan_layout(nprocs, opts, out, &lay);
}

locus_status_t locus_shm_plan_print(const locus_shm_plan_t *p, FILE *out, bool json)
{
    uint64_t n = (uint64_t)p->nprocs;
    uint64_t fb = n * p->fboxes * (p->fboxes ? SHMQ_CTL_BYTES + p->fbox_bytes : 0);
    uint64_t pad = p->segment_bytes - p->control_bytes - fb -
                   n * (SHMQ_CTL_BYTES + p->queue_bytes + p->heap_bytes);
    if (json) {
        fprintf(out,
                "{\"procs\": %d, \"queue_bytes\": %" PRIu64 ", \"eager_bytes\": %" PRIu64
                ", \"heap_bytes\": %" PRIu64 ", \"control_bytes\": %" PRIu64
                ", \"queues_bytes\": %" PRIu64 ", \"heaps_bytes\": %" PRIu64
                ", \"fboxes\": %u, \"fbox_bytes\": %" PRIu64 ", \"fbox_eager_bytes\": %" PRIu64
                ", \"fboxes_bytes\": %" PRIu64
                ", \"padding_bytes\": %" PRIu64 ", \"per_process_bytes\": %" PRIu64
                ", \"per_node_bytes\": %" PRIu64 ", \"private_per_process_bytes\": %" PRIu64 "}\n",
                p->nprocs, p->queue_bytes, p->eager_bytes, p->heap_bytes, p->control_bytes,
                n * (SHMQ_CTL_BYTES + p->queue_bytes), n * p->heap_bytes, p->fboxes, p->fbox_bytes,
                p->fbox_eager_bytes, fb, pad, p->per_process, p->segment_bytes, p->private_per_process);
        return LOCUS_OK;
    }
    char a[32];
    fprintf(out, "shm footprint for %d local processes (one segment per node)\n", p->nprocs);
    fprintf(out, "  %-34s %14" PRIu64 " B  %s\n", "control (header + 64 B/process)",
            p->control_bytes, locus_format_size(p->control_bytes, a, sizeof a));
    fprintf(out, "  %-34s %14" PRIu64 " B  %s\n", "queues (128 B ctl + ring each)",
            n * (SHMQ_CTL_BYTES + p->queue_bytes),
            locus_format_size(n * (SHMQ_CTL_BYTES + p->queue_bytes), a, sizeof a));
    fprintf(out, "  %-34s %14" PRIu64 " B  (ring is the eager buffer: messages <= %" PRIu64
                 " B)\n", "  of which eager/inline cells", n * p->queue_bytes, p->eager_bytes);
    fprintf(out, "  %-34s %14" PRIu64 " B  %s (%u x (128 B ctl + %" PRIu64
                 " B) per process: messages <= %" PRIu64 " B)\n",
            "fast boxes (per-pair SPSC rings)", fb, locus_format_size(fb, a, sizeof a), p->fboxes,
            p->fbox_bytes, p->fbox_eager_bytes);
    fprintf(out, "  %-34s %14" PRIu64 " B  %s\n", "shared heaps", n * p->heap_bytes,
            locus_format_size(n * p->heap_bytes, a, sizeof a));
    fprintf(out, "  %-34s %14" PRIu64 " B\n", "page rounding", pad);
    fprintf(out, "  %-34s %14" PRIu64 " B  %s\n", "per process", p->per_process,
            locus_format_size(p->per_process, a, sizeof a));
    fprintf(out, "  %-34s %14" PRIu64 " B  %s (%.1f MB)\n", "per node (segment, mapped)",
            p->segment_bytes, locus_format_size(p->segment_bytes, a, sizeof a),
            p->segment_bytes / 1e6);
    fprintf(out, "  %-34s %14" PRIu64 " B  (not shared)\n", "private bookkeeping per process",
            p->private_per_process);
    return LOCUS_OK;
}

locus_status_t shm_validate_job(const char *v)
{
    size_t n = v ? strlen(v) : 0;
    if (n == 0)
        return LOCUS_OK; /* unset: derived from the launcher */
    if (n > 48)
        return lc_err(LOCUS_ERR_INVALID, "'%s': expected 1-48 characters from [A-Za-z0-9_.-]", v);
    for (size_t i = 0; i < n; i++) {
        char c = v[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-'))
            return lc_err(LOCUS_ERR_INVALID,
                             "'%s': character '%c' not allowed; expected 1-48 characters from "
                             "[A-Za-z0-9_.-]", v, c);
    }
    return LOCUS_OK;
}

locus_status_t locus_shm_segment_name(const char *job, char *buf, size_t len)
{
    locus_status_t st = shm_validate_job(job);
    if (st)
        return st;
    if (!job || !*job)
        return lc_err(LOCUS_ERR_INVALID, "job '': expected 1-48 characters from [A-Za-z0-9_.-]");
    int n = snprintf(buf, len, "/locus-%u-%s", (unsigned)getuid(), job);
    if (n < 0 || (size_t)n >= len)
        return lc_err(LOCUS_ERR_RANGE, "segment name buffer of %zu bytes too small", len);
    return LOCUS_OK;
}

