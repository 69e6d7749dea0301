/* locus tune: measure every machine-dependent default on this machine, print
 * before / after with the gain, and write the tune file the library reads
 * (below the environment, above the built-in defaults; `locus config` shows
 * which values came from it). Each part is a function: copy and heap here,
 * shm in tune_shm.c (tune.h). */
#include "cli.h"

#include <locus/locus.h>

#include "core/clock.h"
#include "bench_json.h"
#include "progress.h"
#include "tune.h"

#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --json: the record (docs/bench-schema.json) is the output, the text is not printed. */
static bench_json_t *json;

bench_json_t *tune_json(void) { return json; }

void tune_say(const char *fmt, ...)
{
    if (json)
        return;
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap); /* bench_say's rule, for tune_shm.c too (it has no `json`) */
    va_end(ap);
}

static void gbs_row(const char *series, const char *metric, double x, const char *x_cat, double y, int n, bool peer,
                    bool highlight)
{
    bench_row_t r = {.series = series, .metric = metric, .x = x, .x_cat = x_cat, .x_unit = x_cat ? "order" : "bytes",
                     .y = y > 0 ? y : NAN, .y_unit = "GB/s", .stat = "median", .n = n, .highlight = highlight,
                     .peer = peer ? series : NULL};
    if (peer)
        bench_json_peer_row(json, &r);
    else
        bench_json_row(json, &r);
}

void tune_add(tune_t *t, const char *name, const char *value, const char *comment)
{
    if (t->n == TUNE_MAX_ENTRIES)
        return;
    snprintf(t->values[t->n], sizeof t->values[0], "%s", value);
    snprintf(t->comments[t->n], sizeof t->comments[0], "%s", comment);
    t->e[t->n] = (locus_tune_entry_t){name, t->values[t->n], t->comments[t->n]};
    t->n++;
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: locus tune [--only copy,heap,shm] [--reps N] [--dry-run] [-o FILE] [--json] [-q]\n"
            "  measures the defaults that depend on the machine and writes them to the tune\n"
            "  file (default %s; LOCUS_TUNE_FILE), which the library reads below the\n"
            "  environment and above its built-in defaults, on this machine only:\n"
            "    copy  where NT stores beat glibc memcpy and which NT kernel (LOCUS_COPY_NT_MIN,\n"
            "          LOCUS_COPY_NT_KERNEL): the self-test with more rounds\n"
            "    heap  the order huge pages are faulted in (LOCUS_HEAP_FAULT_ORDER)\n"
            "    shm   between two processes on the first two cpus: where the split copy starts\n"
            "          to win and its piece size (LOCUS_SHM_SPLIT, LOCUS_SHM_SPLIT_PIECE), where\n"
            "          sends by reference do (LOCUS_SHM_REF), the fast box size (LOCUS_SHM_FBOX);\n"
            "          a candidate is chosen only if it beats the default beyond the noise\n"
            "  prints each value before (built-in: self-test cache or topology) and after,\n"
            "  with the gain measured in the same run. Run it on a quiet machine.\n"
            "  --reps N    rounds per measurement (default 9)\n"
            "  --dry-run   measure and print, write nothing\n"
            "  --json      the benchmark record (docs/bench-schema.json) instead of the text\n"
            "  -q          no progress on stderr (shown only on a terminal)\n",
            "~/.cache/locus/tune.conf");
}

static const char *size_text(uint64_t v, char *buf, size_t len)
{
    return v == UINT64_MAX ? "never" : locus_format_size(v, buf, len);
}

/* GB/s of the choice (threshold `nt_min`) at measured size i. */
static double chosen(const locus_copy_selftest_t *s, uint64_t nt_min, int i)
{
    return s->sizes[i] >= nt_min && s->nt_gbps[i] > 0 ? s->nt_gbps[i] : s->glibc_gbps[i];
}

static int tune_copy(tune_t *t, int reps, bool save)
{
    locus_copy_ctx_t *ctx;
    locus_copy_params_t before;
    locus_status_t st = locus_copy_default_ctx(&ctx);
    if (!st)
        st = locus_copy_ctx_params(ctx, &before);
    if (st)
        return cli_fail("tune", st);
    locus_copy_selftest_t s;
    double t0 = lc_now_s();
    progress_ticker_t *tick = progress_ticker_start("copy: NT stores vs glibc", 0.25 * reps);
    st = locus_copy_selftest(reps, save, &s); /* --dry-run leaves the cache alone too */
    progress_ticker_stop(tick);
    if (st)
        return cli_fail("tune", st);
    char b1[32], b2[32];
    tune_say("copy: NT stores vs glibc memcpy (%d rounds, %.1f s)\n", reps, lc_now_s() - t0);
    tune_say("  candidates at %s:", locus_format_size(s.sizes[s.nsizes - 1], b1, sizeof b1));
    for (int i = 0; i < s.ncandidates; i++)
        tune_say(" %s %.2f", locus_copy_kernel_name(s.candidates[i]), s.candidate_gbps[i]);
    tune_say(" GB/s (glibc %.2f)\n", s.glibc_gbps[s.nsizes - 1]);
    tune_say("  %8s %8s %8s %10s %10s %6s\n", "size", "glibc", "NT", "before", "after", "gain");
    for (int i = 0; i < s.nsizes; i++) {
        if (s.glibc_gbps[i] <= 0)
            continue;
        double b = chosen(&s, before.nt_min, i), a = chosen(&s, s.nt_min, i);
        if (json) {
            double x = (double)s.sizes[i];
            gbs_row("glibc memcpy", "copy bandwidth", x, NULL, s.glibc_gbps[i], reps, true, true);
            gbs_row(s.kernel >= 0 ? locus_copy_kernel_name(s.kernel) : "NT stores", "copy bandwidth", x, NULL,
                    s.nt_gbps[i], reps, false, false);
            gbs_row("locus_copy before", "copy bandwidth", x, NULL, b, reps, false, false);
            gbs_row("locus_copy tuned", "copy bandwidth", x, NULL, a, reps, false, true);
        }
        tune_say("  %8s %8.2f %8.2f %10.2f %10.2f %5.2fx\n", locus_format_size(s.sizes[i], b1, sizeof b1),
               s.glibc_gbps[i], s.nt_gbps[i], b, a, b > 0 ? a / b : 0);
    }
    tune_say("  LOCUS_COPY_NT_MIN     %s (%s) -> %s\n", size_text(before.nt_min, b1, sizeof b1),
           before.nt_min_origin, size_text(s.nt_min, b2, sizeof b2));
    tune_say("  LOCUS_COPY_NT_KERNEL  %s -> %s\n", locus_copy_kernel_name(before.ntpf),
           s.kernel >= 0 ? locus_copy_kernel_name(s.kernel) : "none (glibc)");
    bench_json_summary_num(json, "copy_nt_min_before", before.nt_min == UINT64_MAX ? NAN : (double)before.nt_min);
    bench_json_summary_str(json, "copy_nt_min_before_origin", before.nt_min_origin);
    bench_json_summary_num(json, "copy_nt_min", s.nt_min == UINT64_MAX ? NAN : (double)s.nt_min);
    bench_json_summary_str(json, "copy_nt_kernel_before", locus_copy_kernel_name(before.ntpf));
    bench_json_summary_str(json, "copy_nt_kernel", s.kernel >= 0 ? locus_copy_kernel_name(s.kernel) : "none");
    char v[64];
    if (s.nt_min == UINT64_MAX)
        snprintf(v, sizeof v, "never");
    else
        snprintf(v, sizeof v, "%llu", (unsigned long long)s.nt_min);
    tune_add(t, "LOCUS_COPY_NT_MIN", v, "copies from this size use non-temporal stores (locus tune, copy)");
    if (s.kernel >= 0)
        tune_add(t, "LOCUS_COPY_NT_KERNEL", locus_copy_kernel_name(s.kernel), "the NT kernel that won");
    return 0;
}

/* Fault-in GB/s of a THP heap of `size` with the given order. */
static double fault_rate(uint64_t size, locus_heap_fault_order_t order)
{
    locus_heap_attr_t a;
    locus_heap_attr_init(&a);
    a.size = size;
    a.percent = 0;
    a.pages = LOCUS_PAGES_THP;
    a.verify = LOCUS_VERIFY_NONE;
    a.fault_order = order;
    locus_heap_t *h;
    if (locus_heap_create(&a, NULL, &h))
        return 0;
    locus_heap_stats_t s;
    double g = locus_heap_stats(h, &s) == LOCUS_OK && s.huge_bytes ? s.gbps : 0;
    locus_heap_destroy(h);
    return g;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int tune_heap(tune_t *t, int reps)
{
    const uint64_t size = 1ull << 30;
    double g[2][16];
    int n = reps > 16 ? 16 : reps < 3 ? 3 : reps;
    double t0 = lc_now_s();
    progress_t pr;
    progress_begin(&pr, "heap: fault-in of 1 GiB, heaps", 2 * (uint64_t)n, false);
    for (int r = 0; r < n; r++)
        for (int j = 0; j < 2; j++) {
            int o = (j + r) % 2;
            g[o][r] = fault_rate(size, o ? LOCUS_FAULT_FIRST : LOCUS_FAULT_LAST);
            progress_update(&pr, (uint64_t)(2 * r + j + 1));
        }
    progress_end(&pr);
    qsort(g[0], (size_t)n, sizeof(double), cmp_double);
    qsort(g[1], (size_t)n, sizeof(double), cmp_double);
    double last = g[0][n / 2], first = g[1][n / 2];
    tune_say("heap: fault-in of a 1 GiB THP heap, last-4-KiB-first vs first-to-last (%d rounds, %.1f s)\n", n,
           lc_now_s() - t0);
    if (last <= 0 || first <= 0) {
        tune_say("  no transparent huge pages here: nothing to choose (kept auto)\n");
        return 0;
    }
    gbs_row("locus heap, THP", "fault-in of a 1 GiB heap", (double)size, "last 4 KiB first", last, n, false, true);
    gbs_row("locus heap, THP", "fault-in of a 1 GiB heap", (double)size, "first to last", first, n, false, true);
    /* the built-in default (auto) is "last"; "first" only if it wins clearly */
    bool pick_first = first > 1.03 * last;
    tune_say("  last %.2f GB/s, first %.2f GB/s\n", last, first);
    tune_say("  LOCUS_HEAP_FAULT_ORDER auto (last) -> %s, gain %.2fx\n", pick_first ? "first" : "last",
           pick_first ? first / last : 1.0);
    bench_json_summary_str(json, "heap_fault_order", pick_first ? "first" : "last");
    tune_add(t, "LOCUS_HEAP_FAULT_ORDER", pick_first ? "first" : "last",
        "order of a huge page's 4 KiB parts at fault-in (locus tune, heap)");
    return 0;
}

int locus_cmd_tune(int argc, char **argv)
{
    static const struct option opts[] = {{"only", required_argument, 0, 'O'}, {"reps", required_argument, 0, 'r'},
                                         {"dry-run", no_argument, 0, 'n'},     {"help", no_argument, 0, 'h'},
                                         {"json", no_argument, 0, 'j'},        {"quiet", no_argument, 0, 'q'},
                                         {0, 0, 0, 0}};
    const char *only = "copy,heap,shm", *out = NULL;
    bool dry = false, quiet = false, as_json = false;
    int reps = 9, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:qh", opts, NULL)) != -1) {
        switch (c) {
        case 'O': only = optarg; break;
        case 'r': reps = atoi(optarg); break;
        case 'n': dry = true; break;
        case 'o': out = optarg; break;
        case 'q': quiet = true; progress_quiet(true); break;
        case 'j': as_json = true; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (reps < 1 || reps > 16)
        return cli_usage_error("tune", "--reps %d: expected 1..16", reps);
    for (const char *p = only; *p;) {
        size_t len = strcspn(p, ",");
        if (!(len == 4 && !strncmp(p, "copy", 4)) && !(len == 4 && !strncmp(p, "heap", 4)) &&
            !(len == 3 && !strncmp(p, "shm", 3)))
            return cli_usage_error("tune", "--only %s: expected a comma list of copy, heap, shm", only);
        p += len + (p[len] == ',');
    }
    /* "before" is the library without a tune file; written where it is read */
    char path[512];
    if (!out)
        out = locus_tune_file_path(path, sizeof path);
    setenv("LOCUS_TUNE_FILE", "none", 1);
    tune_t t = {.quiet = quiet};
    if (as_json) {
        json = bench_json_begin("tune");
        bench_json_param_str(json, "only", only);
        bench_json_param_num(json, "reps", reps);
        bench_json_param_bool(json, "dry_run", dry);
        bench_json_param_str(json, "file", out);
    }
    double t0 = lc_now_s();
    int rc = 0;
    if (strstr(only, "copy"))
        rc |= tune_copy(&t, reps, !dry);
    if (!rc && strstr(only, "heap"))
        rc |= tune_heap(&t, reps);
    if (!rc && strstr(only, "shm"))
        rc |= tune_shm(&t, reps);
    if (rc) {
        bench_json_end(json, stdout); /* what was measured; the reason on stderr */
        return rc;
    }
    tune_say("measured in %.1f s\n", lc_now_s() - t0);
    bench_json_summary_num(json, "measured_s", lc_now_s() - t0);
    if (dry) {
        tune_say("--dry-run: nothing written (would write %s)\n", out);
        return json && bench_json_end(json, stdout) ? 1 : 0;
    }
    locus_status_t st = locus_tune_file_write(out, t.e, (size_t)t.n);
    if (st) {
        bench_json_end(json, stdout);
        return cli_fail("tune", st);
    }
    tune_say("wrote %s (%d values); `locus config` shows them\n", out, t.n);
    bench_json_summary_str(json, "wrote", out);
    return json && bench_json_end(json, stdout) ? 1 : 0;
}
