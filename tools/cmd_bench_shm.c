/* locus bench pingpong|bw|msgrate: OSU-style shm benchmarks between ranks 0
 * and 1 of `locus run -n 2 --bind core -- locus bench <what>` (or mpirun /
 * mpiexec). Every figure is the median of --reps repetitions. pingpong gives
 * one-way latency, bw and msgrate stream windows of --window non-blocking
 * sends. --json: rank 0 writes the benchmark record (tools/bench_json.h,
 * docs/bench-schema.json): one row per size, series "locus", metric
 * "latency" (us), "bandwidth" (GB/s) or "message rate" (M/s), the other two
 * figures in its extra. --stats: each rank's locus_shm_stats at the end
 * (which path carried what), on stderr. */
#include "cli.h"

#include <locus/locus.h>

#include "bench_json.h"
#include "progress.h"

#include "core/config.h"
#include "core/clock.h"

#include <math.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { PINGPONG, BW, MSGRATE };

typedef struct {
    int what;
    size_t sizes[64];
    int nsizes;
    int reps, window;
    bool json, heap, touch, stats;
    const char *name;
    char sizes_text[512];
} bench_opts_t;


static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void usage(const char *name, FILE *out)
{
    fprintf(out,
            "usage: locus run -n 2 --bind core -- locus bench %s [--sizes LIST | --min S --max S]\n"
            "         [--reps R] [--window W] [--mem heap|private] [--touch] [--stats] [--json] [-q]\n"
            "  --sizes  comma-separated sizes (K/M suffixes); default powers of two from\n"
            "           %s to %s\n"
            "  --mem    heap: buffers from locus_shm_alloc (large messages: one plain copy from\n"
            "           the peer's mapping); private: malloc buffers (CMA or pipelined copy)\n"
            "  --reps   repetitions, the median is reported (default 7)\n"
            "  --window sends in flight for bw/msgrate (default 64)\n"
            "  --touch  bw/msgrate: the sender writes every message before sending it (each\n"
            "           window slot its own buffer) and the receiver reads it after, as an\n"
            "           application would; without it the same untouched buffer is re-sent\n"
            "           (OSU style)\n"
            "  --stats  at the end, each rank's counters on stderr: messages and bytes it\n"
            "           received by path (eager, by reference, heap / CMA / pipelined\n"
            "           rendezvous, split copies), sends by reference, fast boxes\n"
            "  --json   rank 0 writes the benchmark record (docs/bench-schema.json) instead\n"
            "           of the table: one row per size, the median of the reps\n"
            "  -q       no progress on stderr (shown on a terminal only, by rank 0)\n",
            name, strcmp(name, "pingpong") ? "8" : "0", strcmp(name, "msgrate") ? "4M" : "64K");
}

static int parse_args(int argc, char **argv, bench_opts_t *o)
{
    uint64_t lo = o->what == PINGPONG ? 0 : 8, hi = o->what == MSGRATE ? 64u << 10 : 4u << 20;
    bool list = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int64_t x;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(o->name, stdout);
            return 0;
        } else if (!strcmp(a, "--json")) {
            o->json = true;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            progress_quiet(true);
        } else if (!strcmp(a, "--stats")) {
            o->stats = true;
        } else if (!strcmp(a, "--touch")) {
            if (o->what == PINGPONG)
                return cli_usage_error("bench", "--touch: for bw and msgrate only");
            o->touch = true;
        } else if (!strcmp(a, "--sizes") && v) {
            char buf[512];
            snprintf(buf, sizeof buf, "%s", v);
            o->nsizes = 0;
            for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
                uint64_t s;
                if (locus_parse_size(t, &s) || s > (1u << 30) || o->nsizes == 64)
                    return cli_usage_error("bench", "--sizes '%s': expected up to 64 sizes <= 1G, "
                                           "e.g. 8,1K,64K", v);
                o->sizes[o->nsizes++] = s;
            }
            list = true;
            snprintf(o->sizes_text, sizeof o->sizes_text, "%s", v);
            i++;
        } else if ((!strcmp(a, "--min") || !strcmp(a, "--max")) && v) {
            uint64_t s;
            if (locus_parse_size(v, &s) || s > (1u << 30))
                return cli_usage_error("bench", "%s '%s': expected a size <= 1G", a, v);
            *(a[2] == 'm' && a[3] == 'i' ? &lo : &hi) = s;
            i++;
        } else if (!strcmp(a, "--reps") && v) {
            if (lc_parse_int(v, 1, 1000, &x))
                return cli_usage_error("bench", "--reps %s", locus_last_error());
            o->reps = (int)x;
            i++;
        } else if (!strcmp(a, "--window") && v) {
            if (lc_parse_int(v, 1, 4096, &x))
                return cli_usage_error("bench", "--window %s", locus_last_error());
            o->window = (int)x;
            i++;
        } else if (!strcmp(a, "--mem") && v) {
            int c;
            if (lc_parse_choice(v, "heap|private", &c))
                return cli_usage_error("bench", "--mem %s", locus_last_error());
            o->heap = c == 0;
            i++;
        } else {
            return cli_usage_error("bench", "%s: unknown option '%s' (locus bench %s --help)",
                                   o->name, a, o->name);
        }
    }
    if (!list) {
        o->nsizes = 0;
        if (lo == 0)
            o->sizes[o->nsizes++] = 0;
        for (uint64_t s = lo ? lo : 1; s <= hi && o->nsizes < 64; s *= 2)
            o->sizes[o->nsizes++] = s;
        size_t n = 0;
        for (int i = 0; i < o->nsizes && n < sizeof o->sizes_text; i++)
            n += (size_t)snprintf(o->sizes_text + n, sizeof o->sizes_text - n, "%s%zu", i ? "," : "",
                                  o->sizes[i]);
    }
    return -1;
}

/* Iterations per repetition: ~4 ms of traffic at the machine's speed. */
static int iters_for(const bench_opts_t *o, size_t size)
{
    double per = o->what == PINGPONG ? 0.3e-6 + size / 10e9 : o->window * (0.05e-6 + size / 20e9);
    int it = (int)(4e-3 / per);
    return it < 10 ? 10 : it > 20000 ? 20000 : it;
}

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        locus_status_t st_ = (x);                                                                  \
        if (st_) {                                                                                 \
            cli_fail("bench", st_);                                                                \
            return -1;                                                                             \
        }                                                                                          \
    } while (0)

static double run_pingpong(locus_shm_ep_t *ep, void *sb, void *rb, size_t size, int iters)
{
    int me = locus_shm_rank(ep), peer = 1 - me;
    double t0 = lc_now_s();
    for (int i = 0; i < iters; i++) {
        if (me == 0) {
            CHECK(locus_shm_send(ep, peer, 1, sb, size));
            CHECK(locus_shm_recv(ep, peer, 1, rb, size, NULL));
        } else {
            CHECK(locus_shm_recv(ep, peer, 1, rb, size, NULL));
            CHECK(locus_shm_send(ep, peer, 1, sb, size));
        }
    }
    return lc_now_s() - t0;
}

/* --touch: slot k of the window has its own buffer at k * slot bytes. */
static double run_window(locus_shm_ep_t *ep, unsigned char *sb, unsigned char *rb, size_t size, int iters,
                         int w, locus_shm_req_t **reqs, size_t slot)
{
    int me = locus_shm_rank(ep), peer = 1 - me;
    char ack[4] = {0};
    volatile unsigned char sink = 0;
    double t0 = lc_now_s();
    for (int i = 0; i < iters; i++) {
        for (int k = 0; k < w; k++) {
            if (me == 0) {
                if (slot)
                    memset(sb + k * slot, i + k, size);
                CHECK(locus_shm_isend(ep, peer, 2, sb + k * slot, size, &reqs[k]));
            } else {
                CHECK(locus_shm_irecv(ep, peer, 2, rb + k * slot, size, &reqs[k]));
            }
        }
        for (int k = 0; k < w; k++)
            CHECK(locus_shm_wait(ep, reqs[k], NULL));
        if (slot && me == 1) /* read what arrived, a line at a time */
            for (int k = 0; k < w; k++)
                for (size_t b = 0; b < size; b += 64)
                    sink += rb[k * slot + b];
        if (me == 0)
            CHECK(locus_shm_recv(ep, peer, 3, ack, sizeof ack, NULL));
        else
            CHECK(locus_shm_send(ep, peer, 3, ack, sizeof ack));
    }
    (void)sink;
    return lc_now_s() - t0;
}

/* --stats: rank 0's line, then rank 1's (barriers keep them in order). */
static int print_stats(locus_shm_ep_t *ep, const char *name)
{
    locus_shm_stats_t s;
    for (int r = 0; r < locus_shm_size(ep); r++) {
        CHECK(locus_shm_barrier(ep));
        if (r != locus_shm_rank(ep))
            continue;
        CHECK(locus_shm_stats(ep, &s));
        fprintf(stderr,
                "locus bench %s: rank %d received: eager %llu (%.1f MB, mailbox %llu), by reference %llu "
                "(%.1f MB), rendezvous heap %llu (%.1f MB, split %llu) CMA %llu (%.1f MB) pipeline %llu "
                "(%.1f MB); split pieces taken %llu as receiver, %llu as sender; sent by reference %llu; "
                "fast boxes held %u, polled %u; auto rates CMA %.2f, pipeline %.2f GB/s\n",
                name, r, (unsigned long long)s.eager_msgs, s.eager_bytes / 1e6,
                (unsigned long long)s.mailbox_msgs, (unsigned long long)s.ref_msgs, s.ref_bytes / 1e6,
                (unsigned long long)s.heap_msgs, s.heap_bytes / 1e6, (unsigned long long)s.split_msgs,
                (unsigned long long)s.cma_msgs, s.cma_bytes / 1e6, (unsigned long long)s.pipe_msgs,
                s.pipe_bytes / 1e6, (unsigned long long)s.split_pieces_recv,
                (unsigned long long)s.split_pieces_sent, (unsigned long long)s.ref_sent, s.fboxes_claimed,
                s.fboxes_polled, s.cma_gbps, s.pipe_gbps);
        fflush(stderr);
    }
    return 0;
}

static const char *const METRIC[] = {"latency", "bandwidth", "message rate"};

/* --json: the record's parameters and the placement (rank 1 sends its cpu). */
static bench_json_t *json_begin(const bench_opts_t *o, int peer_cpu)
{
    bench_json_t *j = bench_json_begin(o->name);
    bench_json_param_str(j, "sizes", o->sizes_text);
    bench_json_param_num(j, "reps", o->reps);
    if (o->what != PINGPONG)
        bench_json_param_num(j, "window", o->window);
    bench_json_param_str(j, "mem", o->heap ? "heap" : "private");
    bench_json_param_bool(j, "touch", o->touch);
    bench_json_param_num(j, "processes", 2);
    bench_json_summary_num(j, "cpu_rank0", sched_getcpu());
    bench_json_summary_num(j, "cpu_rank1", peer_cpu);
    return j;
}

/* One size's figures: a row of the benchmark's metric, the others as extras. */
static void json_row(bench_json_t *j, const bench_opts_t *o, size_t size, double lat_us, double gbps,
                     double mps, int iters)
{
    double y[] = {lat_us, gbps, mps};
    const char *unit[] = {"us", "GB/s", "M/s"};
    bench_row_t r = {.series = "locus", .metric = METRIC[o->what], .x = (double)size, .x_unit = "bytes",
                     .y = y[o->what], .y_unit = unit[o->what], .stat = "median", .n = o->reps};
    bench_json_row(j, &r);
    if (o->what != PINGPONG)
        bench_json_extra_num(j, "lat_us", lat_us);
    if (o->what != BW)
        bench_json_extra_num(j, "gbps", gbps);
    if (o->what != MSGRATE)
        bench_json_extra_num(j, "mmsgps", mps);
    bench_json_extra_num(j, "iters", iters);
}

static int bench_main(int argc, char **argv, int what)
{
    bench_opts_t o = {.what = what, .reps = 7, .window = 64, .heap = true, .name = argv[0]};
    int rc = parse_args(argc, argv, &o);
    if (rc >= 0)
        return rc;
    size_t maxs = 0;
    for (int i = 0; i < o.nsizes; i++)
        maxs = o.sizes[i] > maxs ? o.sizes[i] : maxs;
    size_t slot = o.touch ? (maxs + 63) & ~(size_t)63 : 0;
    size_t alloc = o.touch ? slot * (size_t)o.window : maxs ? maxs : 1;
    if (alloc > (1u << 30))
        return cli_usage_error("bench", "--touch with --window %d and %zu B messages needs %zu B per "
                               "buffer: expected at most 1 GiB", o.window, maxs, alloc);
    locus_shm_opts_t so;
    locus_shm_opts_init(&so);
    if (o.heap)
        so.heap_bytes = 2 * ((alloc + 4095) & ~(size_t)4095) + 8192;
    locus_shm_ep_t *ep;
    locus_status_t st = locus_shm_init(&so, &ep);
    if (st)
        return cli_fail("bench", st);
    int nprocs = locus_shm_size(ep);
    if (nprocs != 2) {
        locus_shm_finalize(ep);
        return cli_usage_error("bench", "%s needs exactly 2 processes, got %d: run it as `locus run "
                               "-n 2 --bind core -- locus bench %s`", o.name, nprocs, o.name);
    }
    int me = locus_shm_rank(ep);
    unsigned char *sb = o.heap ? locus_shm_alloc(ep, alloc) : malloc(alloc);
    unsigned char *rb = o.heap ? locus_shm_alloc(ep, alloc) : malloc(alloc);
    locus_shm_req_t **reqs = calloc((size_t)o.window, sizeof *reqs);
    double *t = calloc((size_t)o.reps, sizeof *t);
    if (!sb || !rb || !reqs || !t) {
        locus_shm_finalize(ep);
        return cli_fail("bench", LOCUS_ERR_NO_MEMORY);
    }
    memset(sb, 0xa5, alloc);
    memset(rb, 0, alloc);
    int cpu = sched_getcpu(), peer_cpu = -1;
    if ((st = me ? locus_shm_send(ep, 0, 4, &cpu, sizeof cpu) : locus_shm_recv(ep, 1, 4, &peer_cpu, sizeof peer_cpu, NULL))) {
        locus_shm_finalize(ep);
        return cli_fail("bench", st);
    }
    bench_json_t *json = me == 0 && o.json ? json_begin(&o, peer_cpu) : NULL;
    if (me == 0 && !o.json)
        printf("# locus shm %s: 2 processes, %s buffers%s, median of %d reps%s\n"
               "# %10s %12s %12s %14s\n",
               o.name, o.heap ? "shared-heap" : "private", o.touch ? " written and read (--touch)" : "",
               o.reps, what == PINGPONG ? ", one-way latency" : "", "size", "lat_us", "MB/s", "msg/s");
    progress_t pr;
    char what_text[64];
    snprintf(what_text, sizeof what_text, "%s, sizes", o.name);
    if (me == 0)
        progress_begin(&pr, what_text, (uint64_t)o.nsizes, false);
    rc = 0;
    for (int si = 0; si < o.nsizes && !rc; si++) {
        size_t size = o.sizes[si];
        int iters = iters_for(&o, size);
        for (int rep = -1; rep < o.reps && !rc; rep++) { /* rep -1: warm-up */
            if (locus_shm_barrier(ep)) {
                rc = cli_fail("bench", LOCUS_ERR_PEER_FAILED);
                break;
            }
            double dt = what == PINGPONG
                            ? run_pingpong(ep, sb, rb, size, rep < 0 ? iters / 4 + 1 : iters)
                            : run_window(ep, sb, rb, size, rep < 0 ? iters / 4 + 1 : iters,
                                         o.window, reqs, slot);
            if (dt < 0)
                rc = 1;
            else if (rep >= 0)
                t[rep] = dt;
        }
        if (rc)
            break;
        qsort(t, (size_t)o.reps, sizeof *t, cmp_double);
        double med = o.reps % 2 ? t[o.reps / 2] : (t[o.reps / 2 - 1] + t[o.reps / 2]) / 2;
        double msgs = what == PINGPONG ? 2.0 * iters : (double)iters * o.window;
        double lat_us = med / msgs * 1e6, msgps = msgs / med, mbps = size * msgps / 1e6;
        if (me != 0)
            continue;
        progress_update(&pr, (uint64_t)si + 1);
        if (json)
            json_row(json, &o, size, lat_us, mbps / 1e3, msgps / 1e6, iters);
        else
            printf("  %10zu %12.3f %12.1f %14.0f\n", size, lat_us, mbps, msgps);
        fflush(stdout);
    }
    if (me == 0)
        progress_end(&pr);
    const char *notes = locus_shm_notes(ep);
    if (me == 0 && *notes) {
        if (json)
            bench_json_note(json, "%s", notes);
        else
            fprintf(stderr, "locus bench %s: %s", o.name, notes);
    }
    if (!rc && o.stats)
        rc = print_stats(ep, o.name);
    if (!rc)
        locus_shm_barrier(ep);
    if (json && (rc ? bench_json_end(json, stderr) : bench_json_end(json, stdout)))
        rc = rc ? rc : 1;
    if (!o.heap) {
        free(sb);
        free(rb);
    }
    free(reqs);
    free(t);
    locus_shm_finalize(ep);
    return rc;
}

int locus_bench_pingpong(int argc, char **argv) { return bench_main(argc, argv, PINGPONG); }
int locus_bench_bw(int argc, char **argv) { return bench_main(argc, argv, BW); }
int locus_bench_msgrate(int argc, char **argv) { return bench_main(argc, argv, MSGRATE); }
