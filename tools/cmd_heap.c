/* locus heap: create the fixed heap as a runtime would, print startup time,
 * GB/s, page kind and placement; --compare adds a serial touch and the
 * memset limit measured in the same process. */
#include "cli.h"

#include <locus/locus.h>

#include "core/config.h"
#include "bench_json.h"
#include "heap_baseline.h"
#include "progress.h"
#include "core/clock.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void usage(FILE *out)
{
    fprintf(out,
            "usage: locus heap [--size S|N%%] [--procs P] [--policy POL] [--pages KIND] [--threads N]\n"
            "                  [--verify all|sample|none] [--chunk S] [--compare] [--json] [-q]\n"
            "  creates the fixed heap (defaults from LOCUS_HEAP_*; see locus config) and prints\n"
            "  startup time split in reserve/fault-in/verify, GB/s, page kind, pages per node\n"
            "  POL:  interleave[:NODES] | firsttouch | bind:NODES | local[:NODES]\n"
            "  KIND: 4k | thp | huge2m | huge1g | auto\n"
            "  --compare  also a serial one-thread touch of a fresh mapping of the same size and\n"
            "             kind (each page written at its last byte, the faster order for huge\n"
            "             pages) and the memset limit (memset over the resident heap), with ratios;\n"
            "             a warm-up allocation runs first so every run sees host-backed memory\n"
            "  --json     the benchmark record (docs/bench-schema.json) instead of the text;\n"
            "             `locus plot` draws fault-in GB/s against heap size from several runs\n"
            "  -q         no progress on stderr (shown only on a terminal)\n");
}

typedef struct {
    bool on;
    double serial, memset_n, memset_1;
    int memset_threads;
} compare_t;

static void print_text(const locus_heap_attr_t *a, const locus_heap_stats_t *s, const compare_t *c)
{
    char b1[32], b2[32];
    printf("heap        %s, policy %s", locus_format_size(s->size, b1, sizeof b1),
           locus_heap_policy_name(s->policy));
    for (int i = 0; i < a->num_nodes; i++)
        printf("%s%d", i ? "," : ":", a->nodes[i]);
    printf(", pages %s -> %s (%s pages), %d fault-in threads\n", locus_heap_pages_name(s->pages_requested),
           locus_heap_pages_name(s->pages), locus_format_size(s->page_size, b2, sizeof b2), s->threads);
    printf("startup     %.3f s = reserve %.3f + fault-in %.3f + verify %.3f s\n",
           s->reserve_s + s->fault_s + s->verify_s, s->reserve_s, s->fault_s, s->verify_s);
    if (s->policy != LOCUS_HEAP_FIRSTTOUCH)
        printf("fault-in    %.2f GB/s%s\n", s->gbps, s->populate_fallback ? " (write-touch fallback)" : "");
    printf("resident    %s (%s as huge pages)\n", locus_format_size(s->resident_bytes, b1, sizeof b1),
           locus_format_size(s->huge_bytes, b2, sizeof b2));
    if (s->units_checked) {
        printf("placement   move_pages on %s%llu of %llu pages of %s\n",
               s->units_checked < s->units_total ? "a sample of " : "all ",
               (unsigned long long)s->units_checked, (unsigned long long)s->units_total,
               locus_format_size(s->unit_size, b1, sizeof b1));
        for (int i = 0; i < s->num_nodes; i++)
            printf("  node %-3d  %10llu pages  %5.1f %%\n", s->node_os[i], (unsigned long long)s->node_units[i],
                   100.0 * (double)s->node_units[i] / (double)s->units_checked);
        if (s->not_faulted)
            printf("  not faulted %llu pages (-ENOENT)\n", (unsigned long long)s->not_faulted);
        if (s->zero_page)
            printf("  zero page   %llu pages (-EFAULT: read, never written)\n", (unsigned long long)s->zero_page);
        if (s->other_status)
            printf("  other       %llu pages\n", (unsigned long long)s->other_status);
    }
    if (*s->notes) {
        printf("notes\n");
        for (const char *p = s->notes; *p;) {
            const char *nl = strchr(p, '\n');
            int n = nl ? (int)(nl - p) : (int)strlen(p);
            printf("  %.*s\n", n, p);
            p += n + (nl != NULL);
        }
    }
    if (c->on) {
        printf("compare     same process, same size and kind, memory warm (warm-up allocation first)\n");
        printf("  serial touch, 1 thread     %7.2f GB/s\n", c->serial);
        printf("  locus, %2d threads          %7.2f GB/s   %.2fx serial\n", s->threads, s->gbps,
               s->gbps / c->serial);
        printf("  memset limit, %2d threads   %7.2f GB/s   locus/limit %.2f\n", c->memset_threads,
               c->memset_n, s->gbps / c->memset_n);
        printf("  memset limit, 1 thread     %7.2f GB/s   locus/limit %.2f\n", c->memset_1,
               s->gbps / c->memset_1);
    }
}

/* The record (docs/bench-schema.json): locus's fault-in GB/s at this heap
 * size, and with --compare the baselines of the same process as peer rows;
 * startup times, placement and the rest in summary. */
static void print_json(const locus_heap_attr_t *a, const locus_heap_stats_t *s, const compare_t *c)
{
    bench_json_t *j = bench_json_begin("heap");
    char nodes[256] = "";
    for (int i = 0, n = 0; i < a->num_nodes && n < (int)sizeof nodes; i++)
        n += snprintf(nodes + n, sizeof nodes - (size_t)n, "%s%d", i ? "," : "", a->nodes[i]);
    bench_json_param_num(j, "size", (double)s->size);
    bench_json_param_str(j, "policy", locus_heap_policy_name(s->policy));
    bench_json_param_str(j, "nodes", nodes);
    bench_json_param_str(j, "pages", locus_heap_pages_name(s->pages_requested));
    bench_json_param_num(j, "threads", s->threads);
    bench_json_param_bool(j, "compare", c->on);
    bench_json_summary_str(j, "pages", locus_heap_pages_name(s->pages));
    bench_json_summary_num(j, "page_size", (double)s->page_size);
    bench_json_summary_num(j, "startup_s", s->reserve_s + s->fault_s + s->verify_s);
    bench_json_summary_num(j, "reserve_s", s->reserve_s);
    bench_json_summary_num(j, "fault_s", s->fault_s);
    bench_json_summary_num(j, "verify_s", s->verify_s);
    bench_json_summary_bool(j, "populate_fallback", s->populate_fallback);
    bench_json_summary_num(j, "resident_bytes", (double)s->resident_bytes);
    bench_json_summary_num(j, "huge_bytes", (double)s->huge_bytes);
    bench_json_summary_num(j, "unit_size", (double)s->unit_size);
    bench_json_summary_num(j, "units_total", (double)s->units_total);
    bench_json_summary_num(j, "units_checked", (double)s->units_checked);
    for (int i = 0; i < s->num_nodes; i++) {
        char key[32];
        snprintf(key, sizeof key, "node%d_pages", s->node_os[i]);
        bench_json_summary_num(j, key, (double)s->node_units[i]);
    }
    bench_json_summary_num(j, "not_faulted", (double)s->not_faulted);
    bench_json_summary_num(j, "zero_page", (double)s->zero_page);
    bench_json_summary_num(j, "other_status", (double)s->other_status);
    char series[64];
    snprintf(series, sizeof series, "locus, %d threads", s->threads);
    bench_row_t r = {.series = series, .metric = "fault-in", .x = (double)s->size, .x_unit = "bytes",
                     .y = s->policy == LOCUS_HEAP_FIRSTTOUCH ? NAN : s->gbps, .y_unit = "GB/s",
                     .highlight = true};
    bench_json_row(j, &r);
    bench_json_extra_str(j, "pages", locus_heap_pages_name(s->pages));
    if (c->on) {
        bench_json_extra_num(j, "over_serial", s->gbps / c->serial);
        bench_json_extra_num(j, "over_memset", s->gbps / c->memset_n);
        bench_json_extra_num(j, "over_memset1", s->gbps / c->memset_1);
        char ms[64];
        snprintf(ms, sizeof ms, "memset limit, %d threads", c->memset_threads);
        const bench_row_t p[] = {
            {.series = "serial touch, 1 thread", .y = c->serial, .peer = "one thread writes each page (last byte)"},
            {.series = ms, .y = c->memset_n, .peer = "memset over the resident heap"},
            {.series = "memset limit, 1 thread", .y = c->memset_1, .peer = "memset over the resident heap"}};
        for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) {
            bench_row_t q = p[i];
            q.metric = r.metric;
            q.x = r.x;
            q.x_unit = r.x_unit;
            q.y_unit = r.y_unit;
            bench_json_peer_row(j, &q);
        }
    }
    for (const char *p = s->notes; *p;) {
        const char *nl = strchr(p, '\n');
        int n = nl ? (int)(nl - p) : (int)strlen(p);
        bench_json_note(j, "%.*s", n, p);
        p += n + (nl != NULL);
    }
    bench_json_end(j, stdout);
}

static int parse_args(int argc, char **argv, locus_heap_attr_t *a, bool *json, bool *cmp)
{
    static const struct option opts[] = {
        {"size", 1, 0, 's'}, {"procs", 1, 0, 'P'}, {"policy", 1, 0, 'p'}, {"pages", 1, 0, 'k'},
        {"threads", 1, 0, 't'}, {"verify", 1, 0, 'v'}, {"chunk", 1, 0, 'c'}, {"json", 0, 0, 'j'},
        {"compare", 0, 0, 'C'}, {"quiet", 0, 0, 'q'}, {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
    int o;
    int64_t v;
    optind = 1;
    opterr = 0;
    while ((o = getopt_long(argc, argv, "q", opts, NULL)) != -1) {
        locus_status_t st = LOCUS_OK;
        switch (o) {
        case 's': st = lc_parse_sizepct(optarg, &a->size, &a->percent); break;
        case 'P': if (!(st = lc_parse_int(optarg, 1, 65536, &v))) a->procs = (int)v; break;
        case 'p': st = locus_heap_parse_policy(optarg, a); break;
        case 'k': st = locus_heap_parse_pages(optarg, &a->pages); break;
        case 't': if (!(st = lc_parse_int(optarg, 0, 4096, &v))) a->threads = (int)v; break;
        case 'v': st = locus_heap_parse_verify(optarg, &a->verify); break;
        case 'c': st = locus_parse_size(optarg, &a->chunk); break;
        case 'j': *json = true; break;
        case 'C': *cmp = true; break;
        case 'q': progress_quiet(true); break;
        case 'h': usage(stdout); return 0;
        default:
            return cli_usage_error("heap", "unknown or incomplete option '%s' (see locus heap --help)",
                                   argv[optind - 1]);
        }
        if (st) {
            const char *name = "?";
            for (const struct option *op = opts; op->name; op++)
                if (op->val == o)
                    name = op->name;
            return cli_usage_error("heap", "--%s %s", name, locus_last_error());
        }
    }
    if (optind < argc)
        return cli_usage_error("heap", "unexpected argument '%s'", argv[optind]);
    return -1;
}

/* The comparison: warm-up, serial touch, then (caller) the locus heap. */
static int compare_before(const locus_heap_attr_t *a, const locus_topo_t *topo, compare_t *c,
                          locus_heap_pages_t *kind)
{
    locus_heap_attr_t w = *a;
    w.verify = LOCUS_VERIFY_NONE;
    locus_heap_t *h;
    progress_t pr;
    progress_begin(&pr, "warm-up", 0, true);
    w.progress = progress_callback;
    w.progress_arg = &pr;
    locus_status_t st = locus_heap_create(&w, topo, &h);
    progress_end(&pr);
    if (st)
        return cli_fail("heap", st);
    locus_heap_stats_t s;
    locus_heap_stats(h, &s);
    *kind = s.pages;
    uint64_t size = s.size;
    locus_heap_destroy(h);
    progress_begin(&pr, "serial touch", size, true);
    st = baseline_serial_touch(*kind, size, progress_callback, &pr, &c->serial);
    progress_end(&pr);
    if (st)
        return cli_fail("heap", st);
    return 0;
}

int locus_cmd_heap(int argc, char **argv)
{
    locus_heap_attr_t a;
    locus_heap_attr_init(&a);
    locus_status_t st = locus_heap_attr_from_env(&a);
    if (st)
        return cli_fail("heap", st);
    bool json = false;
    compare_t c = {0};
    int rc = parse_args(argc, argv, &a, &json, &c.on);
    if (rc >= 0)
        return rc;
    locus_topo_t *topo;
    if ((st = locus_topo_load(&topo)))
        return cli_fail("heap", st);
    locus_heap_pages_t kind;
    if (c.on && a.policy != LOCUS_HEAP_FIRSTTOUCH && (rc = compare_before(&a, topo, &c, &kind))) {
        locus_topo_destroy(topo);
        return rc;
    }
    c.on = c.on && a.policy != LOCUS_HEAP_FIRSTTOUCH;
    progress_t pr;
    progress_begin(&pr, "fault-in", 0, true);
    a.progress = progress_callback;
    a.progress_arg = &pr;
    locus_heap_t *h;
    st = locus_heap_create(&a, topo, &h);
    progress_end(&pr);
    if (st) {
        locus_topo_destroy(topo);
        return cli_fail("heap", st);
    }
    locus_heap_stats_t s;
    locus_heap_stats(h, &s);
    if (c.on) {
        int n = s.threads > 0 ? s.threads : 1;
        int *cpus = malloc(sizeof(int) * (size_t)n);
        for (int i = 0; cpus && i < n; i++)
            cpus[i] = locus_topo_cpu(topo, i % locus_topo_num_cpus(topo));
        c.memset_threads = n;
        c.memset_n = baseline_memset(locus_heap_base(h), s.size, n, cpus);
        c.memset_1 = baseline_memset(locus_heap_base(h), s.size, 1, cpus);
        free(cpus);
    }
    if (json)
        print_json(&a, &s, &c);
    else
        print_text(&a, &s, &c);
    locus_heap_destroy(h);
    locus_topo_destroy(topo);
    return 0;
}
