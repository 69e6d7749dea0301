/* locus stream: STREAM triad (a = b + q*c) over three locus heaps, threads
 * pinned, once per placement policy, so the effect of placement on bandwidth
 * shows side by side. */
#include "cli.h"

#include <locus/locus.h>

#include "core/config.h"
#include "core/clock.h"
#include "bench_json.h"
#include "progress.h"

#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    const char *label;
    const char *policy;   /* locus_heap_parse_policy text */
    int parallel_init;    /* firsttouch: the triad threads write their blocks first */
} variant_t;

typedef struct {
    double *a, *b, *c;
    uint64_t n;
    int nthreads;
    const int *cpus;
    int parallel_init;
    int reps;
    pthread_barrier_t bar;
} job_t;

typedef struct {
    job_t *job;
    int t;
} warg_t;


static void block(const job_t *j, int t, uint64_t *lo, uint64_t *hi)
{
    *lo = j->n * (uint64_t)t / (uint64_t)j->nthreads;
    *hi = j->n * (uint64_t)(t + 1) / (uint64_t)j->nthreads;
}

static void *worker(void *v)
{
    warg_t *w = v;
    job_t *j = w->job;
    uint64_t lo, hi;
    block(j, w->t, &lo, &hi);
    if (j->parallel_init)
        for (uint64_t i = lo; i < hi; i++) {
            j->a[i] = 0.0;
            j->b[i] = 1.0;
            j->c[i] = 2.0;
        }
    pthread_barrier_wait(&j->bar);
    const double q = 3.0;
    double *restrict a = j->a;
    const double *restrict b = j->b, *restrict c = j->c;
    for (int r = 0; r < j->reps; r++) {
        pthread_barrier_wait(&j->bar);
        for (uint64_t i = lo; i < hi; i++)
            a[i] = b[i] + q * c[i];
        pthread_barrier_wait(&j->bar);
    }
    return NULL;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* Threads pinned node by node (all cpus of node 0, then node 1, ...) so that
 * a static block schedule matches the `local` heap's per-node blocks. */
static int pick_cpus(const locus_topo_t *topo, int want, int *cpus, int max)
{
    int n = 0;
    for (int k = 0; k < locus_topo_num_nodes(topo); k++) {
        locus_topo_node_t nd;
        locus_topo_node(topo, k, &nd);
        for (int c = 0; c < nd.num_cpus && n < max; c++)
            cpus[n++] = nd.cpus[c];
    }
    if (!n)
        for (int i = 0; i < locus_topo_num_cpus(topo) && n < max; i++)
            cpus[n++] = locus_topo_cpu(topo, i);
    if (want <= 0 || want > max)
        return n;
    for (int i = n; i < want; i++) /* more threads than cores: wrap */
        cpus[i] = cpus[i % n];
    return want;
}

typedef struct {
    double best, median;
    double node_pct[LOCUS_HEAP_MAX_NODES];
    int num_nodes, node_os[LOCUS_HEAP_MAX_NODES];
    double unplaced_pct;
    const char *kind;
    int ok;
} result_t;

/* One placement; progress: step `step0` + the repetitions done. */
static int run_variant(const variant_t *v, const locus_heap_attr_t *base_attr, const locus_topo_t *topo,
                       const int *cpus, int nthreads, int reps, result_t *res, progress_t *pr, uint64_t step0)
{
    locus_heap_attr_t at = *base_attr;
    locus_status_t st = locus_heap_parse_policy(v->policy, &at);
    if (st)
        return cli_fail("stream", st);
    at.threads = nthreads; /* fault-in uses the same number of threads */
    at.size /= 3;          /* one heap per array */
    at.percent /= 3;
    at.verify = LOCUS_VERIFY_NONE;
    locus_heap_t *h[3] = {0};
    for (int i = 0; i < 3; i++)
        if ((st = locus_heap_create(&at, topo, &h[i]))) {
            for (int k = 0; k < i; k++)
                locus_heap_destroy(h[k]);
            return cli_fail("stream", st);
        }
    job_t j = {.a = locus_heap_base(h[0]), .b = locus_heap_base(h[1]), .c = locus_heap_base(h[2]),
               .n = at.size / sizeof(double), .nthreads = nthreads, .cpus = cpus,
               .parallel_init = v->parallel_init || at.policy != LOCUS_HEAP_FIRSTTOUCH, .reps = reps};
    if (!j.parallel_init) /* the seed's mistake: one thread touches everything */
        for (uint64_t i = 0; i < j.n; i++) {
            j.a[i] = 0.0;
            j.b[i] = 1.0;
            j.c[i] = 2.0;
        }
    pthread_barrier_init(&j.bar, NULL, (unsigned)nthreads + 1);
    pthread_t *tid = calloc((size_t)nthreads, sizeof *tid);
    warg_t *w = calloc((size_t)nthreads, sizeof *w);
    int started = 0;
    for (int t = 0; tid && w && t < nthreads; t++) {
        w[t] = (warg_t){&j, t};
        pthread_attr_t pa;
        pthread_attr_init(&pa);
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpus[t], &set);
        pthread_attr_setaffinity_np(&pa, sizeof set, &set);
        if (pthread_create(&tid[t], &pa, worker, &w[t]) == 0)
            started++;
        pthread_attr_destroy(&pa);
    }
    if (started != nthreads) {
        fprintf(stderr, "locus stream: could not start %d threads\n", nthreads);
        exit(1); /* the started ones wait on a barrier that can never fill */
    }
    pthread_barrier_wait(&j.bar); /* init done */
    double *gbps = calloc((size_t)reps, sizeof *gbps);
    for (int r = 0; r < reps; r++) {
        /* t0 before the start barrier: taken after it, a main thread descheduled
         * there (more threads than cpus) started the clock after the work */
        double t0 = lc_now_s();
        pthread_barrier_wait(&j.bar);
        pthread_barrier_wait(&j.bar);
        gbps[r] = 3.0 * (double)j.n * sizeof(double) / (lc_now_s() - t0) / 1e9;
        progress_update(pr, step0 + (uint64_t)r + 1);
    }
    for (int t = 0; t < nthreads; t++)
        pthread_join(tid[t], NULL);
    qsort(gbps, (size_t)reps, sizeof *gbps, cmp_double);
    res->best = gbps[reps - 1];
    res->median = gbps[reps / 2];
    res->ok = 1;
    for (uint64_t i = 0; i < j.n; i += 4099)
        if (j.a[i] != 7.0)
            res->ok = 0;
    /* placement of the three arrays, from a move_pages sample of each */
    uint64_t tot = 0, un = 0, per[LOCUS_HEAP_MAX_NODES] = {0};
    for (int i = 0; i < 3; i++) {
        locus_heap_stats_t s;
        locus_heap_verify(h[i], LOCUS_VERIFY_SAMPLE);
        locus_heap_stats(h[i], &s);
        res->num_nodes = s.num_nodes;
        for (int k = 0; k < s.num_nodes; k++) {
            per[k] += s.node_units[k];
            res->node_os[k] = s.node_os[k];
        }
        tot += s.units_checked;
        un += s.not_faulted + s.zero_page + s.other_status;
        res->kind = locus_heap_pages_name(s.pages);
    }
    for (int k = 0; k < res->num_nodes; k++)
        res->node_pct[k] = tot ? 100.0 * (double)per[k] / (double)tot : 0;
    res->unplaced_pct = tot ? 100.0 * (double)un / (double)tot : 0;
    pthread_barrier_destroy(&j.bar);
    free(gbps);
    free(tid);
    free(w);
    for (int i = 0; i < 3; i++)
        locus_heap_destroy(h[i]);
    return 0;
}

/* Two rows per placement (median and best GB/s), its pages and placement as extras. */
static void json_rows(bench_json_t *j, const char *label, const result_t *r, int reps)
{
    for (int k = 0; k < 2; k++) {
        bench_row_t row = {.series = "locus heap", .metric = "triad", .x_cat = label, .x_unit = "policy",
                           .y = k ? r->best : r->median, .y_unit = "GB/s", .stat = k ? "best" : "median",
                           .n = reps};
        bench_json_row(j, &row);
        bench_json_extra_str(j, "pages", r->kind);
        for (int i = 0; i < r->num_nodes; i++) {
            char key[32];
            snprintf(key, sizeof key, "node%d_pct", r->node_os[i]);
            bench_json_extra_num(j, key, r->node_pct[i]);
        }
        if (r->unplaced_pct > 0)
            bench_json_extra_num(j, "unplaced_pct", r->unplaced_pct);
        if (!r->ok)
            bench_json_extra_str(j, "error", "wrong result");
    }
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: locus stream [--size S] [--threads N] [--policy POL] [--pages KIND] [--reps R] [--json] [-q]\n"
            "  STREAM triad a = b + 3c over three heaps (S in total, default 1G), threads pinned\n"
            "  node by node, static blocks; once per placement: interleave, bind:<first node>,\n"
            "  firsttouch with parallel init, firsttouch with serial init (everything where the\n"
            "  main thread runs), local. --policy POL runs only that one. GB/s counts 24 bytes\n"
            "  per element (2 loads + 1 store); best and median of R repetitions (default 10)\n"
            "  --json  the benchmark record (docs/bench-schema.json) instead of the table\n"
            "  -q      no progress on stderr (shown only on a terminal)\n");
}

int locus_cmd_stream(int argc, char **argv)
{
    static const struct option opts[] = {{"size", 1, 0, 's'},  {"threads", 1, 0, 't'}, {"policy", 1, 0, 'p'},
                                         {"pages", 1, 0, 'k'}, {"reps", 1, 0, 'r'},    {"json", 0, 0, 'j'},
                                         {"quiet", 0, 0, 'q'}, {"help", 0, 0, 'h'},    {0, 0, 0, 0}};
    locus_heap_attr_t a;
    locus_heap_attr_init(&a);
    a.pages = LOCUS_PAGES_AUTO;
    int64_t threads = 0, reps = 10;
    const char *only = NULL;
    bool json = false;
    int o;
    optind = 1;
    opterr = 0;
    while ((o = getopt_long(argc, argv, "q", opts, NULL)) != -1) {
        locus_status_t st = LOCUS_OK;
        const char *opt = "";
        switch (o) {
        case 's': opt = "size"; st = lc_parse_sizepct(optarg, &a.size, &a.percent); break;
        case 't': opt = "threads"; st = lc_parse_int(optarg, 0, 4096, &threads); break;
        case 'p': opt = "policy"; only = optarg; st = locus_heap_parse_policy(optarg, NULL); break;
        case 'k': opt = "pages"; st = locus_heap_parse_pages(optarg, &a.pages); break;
        case 'r': opt = "reps"; st = lc_parse_int(optarg, 1, 100000, &reps); break;
        case 'j': json = true; break;
        case 'q': progress_quiet(true); break;
        case 'h': usage(stdout); return 0;
        default:
            return cli_usage_error("stream", "unknown or incomplete option '%s' (see locus stream --help)",
                                   argv[optind - 1]);
        }
        if (st)
            return cli_usage_error("stream", "--%s %s", opt, locus_last_error());
    }
    if (optind < argc)
        return cli_usage_error("stream", "unexpected argument '%s'", argv[optind]);
    locus_topo_t *topo;
    locus_status_t st = locus_topo_load(&topo);
    if (st)
        return cli_fail("stream", st);
    int cpus[4096];
    int nthreads = pick_cpus(topo, (int)threads, cpus, 4096);
    locus_topo_node_t first;
    locus_topo_node(topo, 0, &first);
    char bind0[32];
    snprintf(bind0, sizeof bind0, "bind:%d", first.os_index);
    variant_t all[] = {{"interleave", "interleave", 1},
                       {bind0, bind0, 1},
                       {"firsttouch, parallel init", "firsttouch", 1},
                       {"firsttouch, serial init", "firsttouch", 0},
                       {"local", "local", 1}};
    variant_t one = {only ? only : "", only ? only : "", 1};
    variant_t *list = only ? &one : all;
    int count = only ? 1 : 5;
    char b[32];
    bench_json_t *j = NULL;
    if (json) {
        j = bench_json_begin("stream");
        bench_json_param_num(j, "size", (double)a.size);
        bench_json_param_num(j, "threads", nthreads);
        bench_json_param_num(j, "reps", (double)reps);
        bench_json_param_str(j, "pages", locus_heap_pages_name(a.pages));
        bench_json_note(j, "STREAM triad a = b + 3c over three heaps, 24 bytes per element; threads pinned node "
                           "by node, static blocks");
    } else
        printf("STREAM triad, %s in 3 arrays, %d threads pinned, %lld reps, GB/s = 24 B/element\n"
               "%-28s %5s %9s %9s   placement (sampled, %% of pages per node)\n",
               locus_format_size(a.size, b, sizeof b), nthreads, (long long)reps, "policy", "pages",
               "best", "median");
    progress_t pr;
    progress_begin(&pr, "triad", (uint64_t)count * (uint64_t)reps, false);
    int rc = 0;
    for (int i = 0; i < count && !rc; i++) {
        result_t r = {.kind = "?"};
        if ((rc = run_variant(&list[i], &a, topo, cpus, nthreads, (int)reps, &r, &pr, (uint64_t)(i * reps))))
            break;
        if (json)
            json_rows(j, list[i].label, &r, (int)reps);
        else {
            progress_end(&pr);
            printf("%-28s %5s %9.2f %9.2f  ", list[i].label, r.kind, r.best, r.median);
            for (int k = 0; k < r.num_nodes; k++)
                printf(" n%d %5.1f%%", r.node_os[k], r.node_pct[k]);
            if (r.unplaced_pct > 0)
                printf("  unplaced %.1f%%", r.unplaced_pct);
            printf("%s\n", r.ok ? "" : "  WRONG RESULT");
            fflush(stdout);
        }
        if (!r.ok)
            rc = 1;
    }
    progress_end(&pr);
    if (json) {
        if (rc)
            bench_json_note(j, "the run failed (exit status %d, the reason on stderr): rows may be missing", rc);
        bench_json_end(j, stdout);
    }
    locus_topo_destroy(topo);
    return rc;
}
