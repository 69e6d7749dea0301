/* locus bench rma: the one-sided layer between ranks of a job
 * (`locus run -n 2 -- locus bench rma`, mpirun, or one rank per guest).
 *
 * rma (rank 0 drives, rank 1 is the target; others wait): for each size,
 *   put_lat  ping-pong, one-way latency: put_nbi of the data (size - 8 bytes)
 *            and an 8-byte flag (the whole message at 8 B) into the peer's
 *            heap, the peer polls its own memory and answers the same way
 *   get_lat  blocking get, time per get (the NIC: one READ round trip)
 *   put_bw   windows of --window put_nbi, then flush(peer)
 *   amo_lat  blocking 64-bit fetch-add
 * Every figure is the median of --reps repetitions of about --time seconds
 * (mean per operation); through the NIC one more pass timed per operation
 * adds lat_typ_us, the median, as perftest's "typical".
 * Lines: "RESULT tool=locus_rma test=... bytes=... lat_us=... | bw_MBps=..."
 * with path (local: copies into the mapped heap, nic), mem and reg.
 * --json: rank 0 (the one measuring) writes the benchmark record instead
 * (tools/bench_json.h, docs/bench-schema.json): metric "latency" (us) with
 * series "put" (one-way), "get" and "fetch-add" (at 8 B), metric "bandwidth"
 * (GB/s) with series "put_nbi", one row per size; iters (and lat_typ_us
 * through the NIC) in each row's extra; mem, reg, window... in params, the
 * path in the summary, the layer's notes as notes.
 * (exchange: tools/cmd_bench_exchange.c) */
#include "bench_json.h"
#include "bench_rma.h"
#include "cli.h"

#include <locus/locus.h>

#include "core/clock.h"
#include "core/config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

enum { T_PUT = 1, T_GET = 2, T_BW = 4, T_AMO = 8 };

typedef struct {
    size_t sizes[64];
    int nsizes, reps, window, tests;
    double time;
    bool heap_mem, json;
    locus_rma_reg_t reg;
    char sizes_text[512];
} rma_opts_t;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void rma_bench_print_machine(void)
{
    char model[256] = "?", line[512];
    FILE *f = fopen("/proc/cpuinfo", "r");
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
            snprintf(model, sizeof model, "%s", strchr(line, ':') + 2);
            model[strcspn(model, "\n")] = 0;
            break;
        }
    if (f)
        fclose(f);
    struct utsname u;
    uname(&u);
    printf("# cpu: %s; kernel %s\n", model, u.release);
}

void rma_bench_json_notes(bench_json_t *j, const char *notes, char *seen, size_t seen_size)
{
    while (j && notes && *notes) {
        size_t n = strcspn(notes, "\n"), len = seen ? strlen(seen) : 0;
        bool dup = false;
        for (const char *p = seen; p && *p && !dup; p += strcspn(p, "\n") + 1)
            dup = strcspn(p, "\n") == n && !strncmp(p, notes, n);
        if (n && !dup) {
            bench_json_note(j, "%.*s", (int)n, notes);
            if (seen && len + n + 2 <= seen_size)
                snprintf(seen + len, seen_size - len, "%.*s\n", (int)n, notes);
        }
        notes += n + (notes[n] == '\n');
    }
}

const char *rma_bench_reg_name(locus_rma_reg_t reg)
{
    return reg == LOCUS_RMA_REG_CACHE ? "cache" : reg == LOCUS_RMA_REG_STATIC ? "static" : "none";
}

static int parse_reg(const char *v, locus_rma_reg_t *out)
{
    int c;
    if (lc_parse_choice(v, "cache|static|none", &c))
        return cli_usage_error("bench", "--reg %s", locus_last_error());
    *out = (locus_rma_reg_t)c;
    return -1;
}

static void usage_rma(FILE *out)
{
    fprintf(out,
            "usage: locus run -n 2 -- locus bench rma [--sizes LIST | --min S --max S] [--reps R]\n"
            "         [--time S] [--window W] [--mem heap|private] [--reg cache|static|none]\n"
            "         [--tests put,get,bw,amo] [--json]\n"
            "  rank 0 measures against rank 1: put ping-pong (one-way latency), blocking get,\n"
            "  put bandwidth (windows of put_nbi + flush), 64-bit fetch-add latency\n"
            "  --mem    local buffers in the symmetric heap (default) or from malloc\n"
            "  --reg    LOCUS_RMA_REG for buffers outside the heap (NIC peers only)\n"
            "  --time   seconds per repetition (default 0.1); --reps (default 5); --window (64)\n"
            "  --json   rank 0 writes the benchmark record (docs/bench-schema.json) instead of the\n"
            "           RESULT lines: latency (us) of put/get/fetch-add and put bandwidth (GB/s) by size\n");
}

static int parse_rma(int argc, char **argv, rma_opts_t *o)
{
    uint64_t lo = 8, hi = 4u << 20;
    bool list = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int64_t x;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage_rma(stdout);
            return 0;
        } else if (!strcmp(a, "--json")) {
            o->json = true;
        } else if (!strcmp(a, "--sizes") && v) {
            char buf[512];
            snprintf(buf, sizeof buf, "%s", v);
            o->nsizes = 0;
            for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
                uint64_t s;
                if (locus_parse_size(t, &s) || s < 8 || s > (64u << 20) || o->nsizes == 64)
                    return cli_usage_error("bench", "--sizes '%s': expected up to 64 sizes in 8..64M", v);
                o->sizes[o->nsizes++] = s;
            }
            list = true;
            snprintf(o->sizes_text, sizeof o->sizes_text, "%s", v);
            i++;
        } else if ((!strcmp(a, "--min") || !strcmp(a, "--max")) && v) {
            uint64_t s;
            if (locus_parse_size(v, &s) || s < 8 || s > (64u << 20))
                return cli_usage_error("bench", "%s '%s': expected a size in 8..64M", a, v);
            *(a[3] == 'i' ? &lo : &hi) = s;
            i++;
        } else if (!strcmp(a, "--reps") && v) {
            if (lc_parse_int(argv[++i], 1, 1000, &x))
                return cli_usage_error("bench", "--reps %s", locus_last_error());
            o->reps = (int)x;
        } else if (!strcmp(a, "--window") && v) {
            if (lc_parse_int(argv[++i], 1, 4096, &x))
                return cli_usage_error("bench", "--window %s", locus_last_error());
            o->window = (int)x;
        } else if (!strcmp(a, "--time") && v) {
            o->time = atof(argv[++i]);
            if (!(o->time > 0 && o->time <= 60))
                return cli_usage_error("bench", "--time %s: expected seconds in (0, 60]", v);
        } else if (!strcmp(a, "--mem") && v) {
            int c;
            if (lc_parse_choice(argv[++i], "heap|private", &c))
                return cli_usage_error("bench", "--mem %s", locus_last_error());
            o->heap_mem = c == 0;
        } else if (!strcmp(a, "--reg") && v) {
            int rc = parse_reg(argv[++i], &o->reg);
            if (rc >= 0)
                return rc;
        } else if (!strcmp(a, "--tests") && v) {
            char buf[128];
            snprintf(buf, sizeof buf, "%s", argv[++i]);
            o->tests = 0;
            for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
                int c;
                if (lc_parse_choice(t, "put|get|bw|amo", &c))
                    return cli_usage_error("bench", "--tests '%s': expected a list of put, get, bw, amo", v);
                o->tests |= 1 << c;
            }
        } else {
            return cli_usage_error("bench", "rma: unknown option '%s' (locus bench rma --help)", a);
        }
    }
    if (!list) {
        o->nsizes = 0;
        for (uint64_t s = lo; s <= hi && o->nsizes < 64; s *= 2)
            o->sizes[o->nsizes++] = s;
        size_t n = 0;
        for (int i = 0; i < o->nsizes && n < sizeof o->sizes_text; i++)
            n += (size_t)snprintf(o->sizes_text + n, sizeof o->sizes_text - n, "%s%zu", i ? "," : "",
                                  o->sizes[i]);
    }
    return -1;
}

/* ---------- rma ---------- */

typedef struct {
    locus_rma_t *r;
    char *heap, *dst, *src, *local; /* dst: where the peer's puts land; local: our buffer */
    volatile uint64_t *ping, *pong; /* flags: rank 1 polls ping, rank 0 pong */
    int me;
    uint64_t seq;
    double *each; /* NIC peers: each iteration's time (rank 0), for the typical value */
    bool nic;
    bench_json_t *json; /* --json, rank 0: the record */
} ctx_t;

static bool wait_flag(ctx_t *c, volatile uint64_t *f, uint64_t v)
{
    unsigned n = 0;
    while (__atomic_load_n(f, __ATOMIC_ACQUIRE) != v)
        if (++n % 4096 == 0 && locus_rma_progress(c->r))
            return false;
    return true;
}

/* put ping-pong: iters round trips; 8 B is the flag alone. */
static int pingpong(ctx_t *c, size_t size, long iters)
{
    int peer = 1 - c->me;
    volatile uint64_t *mine = c->me ? c->ping : c->pong, *theirs = c->me ? c->pong : c->ping;
    for (long i = 0; i < iters; i++) {
        uint64_t t0 = c->each ? lc_now_ns() : 0;
        uint64_t v = ++c->seq;
        if (c->me == 1 && !wait_flag(c, mine, v))
            return 1;
        if (size > 8 && locus_rma_put_nbi(c->r, peer, c->dst, c->local, size - 8))
            return 1;
        if (locus_rma_put_nbi(c->r, peer, (void *)theirs, &v, 8))
            return 1;
        if (c->me == 0 && !wait_flag(c, mine, v))
            return 1;
        if (c->each)
            c->each[i] = (double)(lc_now_ns() - t0) * 1e-9;
    }
    return locus_rma_flush_all(c->r) ? 1 : 0;
}

static int run_op(ctx_t *c, int test, size_t size, long iters, int window)
{
    if (test == T_PUT)
        return pingpong(c, size, iters);
    if (c->me != 0)
        return 0;
    uint64_t old;
    for (long i = 0; i < iters; i++) {
        locus_status_t st = LOCUS_OK;
        uint64_t t0 = c->each ? lc_now_ns() : 0;
        if (test == T_GET)
            st = locus_rma_get(c->r, 1, c->local, c->src, size);
        else if (test == T_AMO)
            st = locus_rma_fetch_add(c->r, 1, (uint64_t *)c->heap + 16, 1, &old);
        else {
            for (int k = 0; k < window && !st; k++)
                st = locus_rma_put_nbi(c->r, 1, c->dst, c->local, size);
            if (!st)
                st = locus_rma_flush(c->r, 1);
        }
        if (st)
            return 1;
        if (c->each)
            c->each[i] = (double)(lc_now_ns() - t0) * 1e-9;
    }
    return 0;
}

/* Rank 0 sizes the loop from a short timed run; everyone learns it. */
static long agree_iters(ctx_t *c, int test, size_t size, const rma_opts_t *o, int *rc)
{
    const long probe = 8;
    double per = 0;
    for (int pass = 0; pass < 2 && !*rc; pass++) { /* the first pass warms up */
        *rc = locus_rma_barrier(c->r) ? 1 : 0;
        double t0 = lc_now_s();
        *rc = *rc ? *rc : run_op(c, test, size, probe, o->window);
        per = (lc_now_s() - t0) / (double)probe;
    }
    long iters = per > 0 ? (long)(o->time / per) : 1000000;
    iters = iters < 4 ? 4 : iters > 1000000 ? 1000000 : iters;
    long *all = calloc((size_t)locus_rma_size(c->r), sizeof *all);
    if (*rc || !all || locus_boot_allgather(locus_rma_boot(c->r), &iters, sizeof iters, all)) {
        free(all);
        *rc = 1;
        return 0;
    }
    iters = all[0];
    free(all);
    return iters;
}

static const char *test_name(int t)
{
    return t == T_PUT ? "put_lat" : t == T_GET ? "get_lat" : t == T_BW ? "put_bw" : "amo_lat";
}

static int measure(ctx_t *c, int test, size_t size, const rma_opts_t *o, const char *tags)
{
    int rc = 0;
    long iters = agree_iters(c, test, size, o, &rc);
    double *t = calloc((size_t)o->reps, sizeof *t);
    for (int rep = 0; t && rep < o->reps && !rc; rep++) {
        rc = locus_rma_barrier(c->r) ? 1 : 0;
        double t0 = lc_now_s();
        rc = rc ? rc : run_op(c, test, size, iters, o->window);
        t[rep] = lc_now_s() - t0;
    }
    if (!t || rc) {
        free(t);
        return cli_fail("bench", LOCUS_ERR_PEER_FAILED);
    }
    double med = median(t, o->reps);
    free(t);
    /* through the NIC the mean hides a long tail (Soft-RoCE retries, TCG):
     * one more pass timing each iteration gives the median ("typical", as
     * perftest reports) beside the mean; on-node a clock read per iteration
     * would cost more than the operation */
    char typ[64] = "";
    double typ_us = NAN;
    if (c->nic && test != T_BW) {
        c->each = calloc((size_t)iters, sizeof *c->each);
        if (!c->each || locus_rma_barrier(c->r) || run_op(c, test, size, iters, o->window)) {
            free(c->each);
            c->each = NULL;
            return cli_fail("bench", LOCUS_ERR_PEER_FAILED);
        }
        typ_us = median(c->each, (int)iters) / (test == T_PUT ? 2 : 1) * 1e6;
        snprintf(typ, sizeof typ, " lat_typ_us=%.3f", typ_us);
        free(c->each);
        c->each = NULL;
    }
    if (c->me != 0)
        return 0;
    double lat_us = med / (double)iters / (test == T_PUT ? 2 : 1) * 1e6;
    double mbps = (double)size * o->window * iters / med / 1e6;
    if (c->json) {
        bench_row_t row = {.series = test == T_PUT ? "put" : test == T_GET ? "get" : test == T_AMO ? "fetch-add" : "put_nbi",
                           .metric = test == T_BW ? "bandwidth" : "latency", .x = test == T_AMO ? 8 : (double)size,
                           .x_unit = "bytes", .y = test == T_BW ? mbps / 1e3 : lat_us,
                           .y_unit = test == T_BW ? "GB/s" : "us", .stat = "median", .n = o->reps};
        bench_json_row(c->json, &row);
        bench_json_extra_num(c->json, "iters", (double)iters);
        if (test == T_BW)
            bench_json_extra_num(c->json, "window", o->window);
        if (!isnan(typ_us))
            bench_json_extra_num(c->json, "lat_typ_us", typ_us);
        return 0;
    }
    if (test == T_BW)
        printf("RESULT tool=locus_rma test=put_bw bytes=%zu window=%d iters=%ld bw_MBps=%.1f %s\n", size, o->window,
               iters, mbps, tags);
    else
        printf("RESULT tool=locus_rma test=%s bytes=%zu iters=%ld lat_us=%.3f%s %s\n", test_name(test),
               test == T_AMO ? (size_t)8 : size, iters, lat_us, typ, tags);
    fflush(stdout);
    return 0;
}

int locus_bench_rma(int argc, char **argv)
{
    rma_opts_t o = {.reps = 5, .window = 64, .time = 0.1, .heap_mem = true, .tests = T_PUT | T_GET | T_BW | T_AMO,
                    .reg = LOCUS_RMA_REG_CACHE};
    locus_rma_attr_t a;
    locus_rma_attr_init(&a);
    locus_status_t st = locus_rma_attr_from_env(&a);
    if (st)
        return cli_fail("bench", st);
    o.reg = a.reg;
    int rc = parse_rma(argc, argv, &o);
    if (rc >= 0)
        return rc;
    rc = 0;
    size_t maxs = 8;
    for (int i = 0; i < o.nsizes; i++)
        maxs = o.sizes[i] > maxs ? o.sizes[i] : maxs;
    uint64_t need = 4096 + 2 * ((maxs + 4095) & ~(size_t)4095);
    a.reg = o.reg;
    if (a.heap_size < need)
        a.heap_size = need;
    locus_rma_t *r;
    if ((st = locus_rma_init(&a, &r)))
        return cli_fail("bench", st);
    ctx_t c = {.r = r, .heap = locus_rma_heap_base(r), .me = locus_rma_rank(r)};
    if (locus_rma_size(r) < 2) {
        locus_rma_fini(r);
        return cli_usage_error("bench", "rma needs 2 processes: run it as `locus run -n 2 -- locus bench rma`");
    }
    c.ping = (uint64_t *)c.heap;
    c.pong = (uint64_t *)c.heap + 8;
    c.dst = c.heap + 4096;
    c.src = c.dst + ((maxs + 4095) & ~(size_t)4095);
    c.local = o.heap_mem ? c.src : malloc(maxs);
    if (!c.local) {
        locus_rma_fini(r);
        return cli_fail("bench", LOCUS_ERR_NO_MEMORY);
    }
    memset(c.local, 0x5a, maxs);
    /* how rank 0 reaches rank 1, known to every rank (the typical-value pass
     * adds a barrier: all must take it or none) */
    int nic_flag = c.me == 0 && !locus_rma_is_local(r, 1), *flags = calloc((size_t)locus_rma_size(r), sizeof *flags);
    if (!flags || locus_boot_allgather(locus_rma_boot(r), &nic_flag, sizeof nic_flag, flags)) {
        free(flags);
        locus_rma_fini(r);
        return cli_fail("bench", LOCUS_ERR_PEER_FAILED);
    }
    bool nic = flags[0] != 0;
    free(flags);
    c.nic = nic;
    char tags[128];
    snprintf(tags, sizeof tags, "path=%s mem=%s reg=%s", nic ? "nic" : "local", o.heap_mem ? "heap" : "private",
             rma_bench_reg_name(o.reg));
    if (c.me == 0 && o.json) {
        c.json = bench_json_begin("rma");
        bench_json_param_str(c.json, "sizes", o.sizes_text);
        bench_json_param_num(c.json, "reps", o.reps);
        bench_json_param_num(c.json, "time", o.time);
        bench_json_param_num(c.json, "window", o.window);
        bench_json_param_str(c.json, "mem", o.heap_mem ? "heap" : "private");
        bench_json_param_str(c.json, "reg", rma_bench_reg_name(o.reg));
        char tests[64] = "";
        for (int t = T_PUT, k = 0; t <= T_AMO; t <<= 1, k++)
            if (o.tests & t)
                snprintf(tests + strlen(tests), sizeof tests - strlen(tests), "%s%s", *tests ? "," : "",
                         (const char *[]){"put", "get", "bw", "amo"}[k]);
        bench_json_param_str(c.json, "tests", tests);
        bench_json_param_num(c.json, "processes", locus_rma_size(r));
        bench_json_summary_str(c.json, "path", nic ? "nic" : "local");
        rma_bench_json_notes(c.json, locus_rma_notes(r), NULL, 0);
    } else if (c.me == 0) {
        rma_bench_print_machine();
        printf("# locus bench rma: %d ranks, rank 0 -> rank 1 (%s), median of %d reps of ~%.2f s\n# %s",
               locus_rma_size(r), nic ? "NIC" : "mapped heap", o.reps, o.time, locus_rma_notes(r));
        fflush(stdout);
    }
    for (int t = T_PUT; t <= T_AMO && !rc; t <<= 1) {
        if (!(o.tests & t))
            continue;
        for (int i = 0; i < (t == T_AMO ? 1 : o.nsizes) && !rc; i++)
            rc = measure(&c, t, o.sizes[i], &o, tags);
    }
    if (c.json && (rc ? bench_json_end(c.json, stderr) : bench_json_end(c.json, stdout)))
        rc = rc ? rc : 1;
    if (!o.heap_mem)
        free(c.local);
    st = locus_rma_fini(r);
    return rc ? rc : st ? cli_fail("bench", st) : 0;
}
