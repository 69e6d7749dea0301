/* locus bench exchange: the all-to-all of a distributed sort over locus rma
 * (`locus run -n N -- locus bench exchange`, mpirun, one rank per guest).
 * Each round every rank writes N random keys, partitioned by owner (key mod
 * ranks), into a freshly allocated array (the last --live arrays stay
 * allocated, as an application's would), takes a slot in each owner's
 * receive area by fetch-add on its counter and puts the part there; after a
 * barrier every owner checks the count and that each key is its own. The
 * put sources are ordinary memory, so for NIC peers LOCUS_RMA_REG decides
 * their fate: static (bounce pieces), cache, none (register per put), and
 * "small", the cache with room for half of the live parts (LOCUS_REG_MERGE_MAX
 * 0, LOCUS_REG_MAX_REGIONS), which thrashes. One line per mode: keys/s per
 * rank, round time, registrations per round, ratio to the first mode.
 * --json: rank 0 writes the benchmark record instead (tools/bench_json.h,
 * docs/bench-schema.json), x the mode (x_unit "reg mode", drawn as bars):
 * metric "key rate per rank" (Mkeys/s, median round; round_ms and the ratio
 * to the first mode in extra), metric "registrations" (per round, mean);
 * keys, rounds, live, modes in params, the path in the summary. Figures are
 * rank 0's (every round ends in a barrier: the ranks' rounds take as long). */
#include "bench_json.h"
#include "bench_rma.h"
#include "cli.h"

#include <locus/locus.h>

#include "core/clock.h"
#include "core/config.h"
#include "core/error.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char name[16];
    locus_rma_reg_t reg;
    bool small;
} xmode_t;

typedef struct {
    long keys;
    int rounds, live, nmodes;
    bool json;
    xmode_t modes[8];
} xopts_t;

typedef struct {
    double keys_per_s, round_ms, regs_per_round;
} xresult_t;

static void usage(FILE *out)
{
    fprintf(out, "usage: locus run -n N -- locus bench exchange [--keys N] [--rounds R] [--live K]\n"
                 "         [--modes static,cache,none,small] [--json]\n"
                 "  keys per rank per round (default 1M), timed rounds (default 10) after --live warm-up ones,\n"
                 "  arrays kept allocated (default 4); modes run in order, ratios to the first\n"
                 "  --json  rank 0 writes the benchmark record (docs/bench-schema.json) instead of the\n"
                 "          RESULT lines: keys/s per rank and registrations per round for each mode\n");
}

static int parse(int argc, char **argv, xopts_t *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int64_t x;
        uint64_t s;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--json")) {
            o->json = true;
        } else if (!strcmp(a, "--keys") && v) {
            if (locus_parse_size(argv[++i], &s) || s < 1 || s > (1ull << 28))
                return cli_usage_error("bench", "--keys %s: expected 1..256M (K/M suffixes)", v);
            o->keys = (long)s;
        } else if (!strcmp(a, "--rounds") && v) {
            if (lc_parse_int(argv[++i], 1, 100000, &x))
                return cli_usage_error("bench", "--rounds %s", locus_last_error());
            o->rounds = (int)x;
        } else if (!strcmp(a, "--live") && v) {
            if (lc_parse_int(argv[++i], 1, 64, &x))
                return cli_usage_error("bench", "--live %s", locus_last_error());
            o->live = (int)x;
        } else if (!strcmp(a, "--modes") && v) {
            char buf[128];
            snprintf(buf, sizeof buf, "%s", argv[++i]);
            o->nmodes = 0;
            for (char *t = strtok(buf, ","); t && o->nmodes < 8; t = strtok(NULL, ",")) {
                int c;
                if (lc_parse_choice(t, "cache|static|none|small", &c))
                    return cli_usage_error("bench", "--modes '%s': expected a list of static, cache, none, small", v);
                xmode_t *m = &o->modes[o->nmodes++];
                snprintf(m->name, sizeof m->name, "%s", t);
                m->reg = c == 3 ? LOCUS_RMA_REG_CACHE : (locus_rma_reg_t)c;
                m->small = c == 3;
            }
        } else {
            return cli_usage_error("bench", "exchange: unknown option '%s' (locus bench exchange --help)", a);
        }
    }
    return -1;
}

static int cmp_time(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static uint64_t next_key(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

typedef struct {
    locus_rma_t *r;
    int me, np;
    long n;
    uint64_t *scratch, *recv, *counter, rng;
    long *count, *start;
} xctx_t;

/* One round: partition into `arr`, put the parts, check what came. */
static locus_status_t round_once(xctx_t *x, uint64_t *arr)
{
    locus_status_t st;
    memset(x->count, 0, sizeof *x->count * (size_t)x->np);
    for (long i = 0; i < x->n; i++) {
        x->scratch[i] = next_key(&x->rng);
        x->count[x->scratch[i] % (uint64_t)x->np]++;
    }
    for (int o = 0, at = 0; o < x->np; at += (int)x->count[o], o++)
        x->start[o] = at;
    for (long i = 0; i < x->n; i++) /* start[] moves to each part's end */
        arr[x->start[x->scratch[i] % (uint64_t)x->np]++] = x->scratch[i];
    for (int k = 1; k <= x->np; k++) {
        int o = (x->me + k) % x->np;
        long c = x->count[o];
        uint64_t pos;
        if ((st = locus_rma_fetch_add(x->r, o, x->counter, (uint64_t)c, &pos)))
            return st;
        if (c && (st = locus_rma_put(x->r, o, x->recv + pos, arr + x->start[o] - c, (size_t)c * 8)))
            return st;
    }
    if ((st = locus_rma_barrier(x->r)))
        return st;
    uint64_t got, bad = 0;
    if ((st = locus_rma_amo(x->r, x->me, LOCUS_RMA_AMO_SWAP, x->counter, 8, 0, 0, &got)))
        return st;
    for (uint64_t i = 0; i < got; i++)
        bad += x->recv[i] % (uint64_t)x->np != (uint64_t)x->me;
    if (bad)
        return LOCUS_ERR_CORRUPT;
    return locus_rma_barrier(x->r);
}

/* The "small" cache: no merging, room for half of the live parts. */
static void set_small(bool on, int live, int np)
{
    if (!on) {
        unsetenv("LOCUS_REG_MERGE_MAX");
        unsetenv("LOCUS_REG_MAX_REGIONS");
        return;
    }
    char v[32];
    int parts = live * (np > 1 ? np - 1 : 1);
    snprintf(v, sizeof v, "%d", 1 + (parts / 2 > 0 ? parts / 2 : 1)); /* + the heap's static region */
    setenv("LOCUS_REG_MERGE_MAX", "0", 1);
    setenv("LOCUS_REG_MAX_REGIONS", v, 1);
}

static locus_status_t rounds(xctx_t *x, const xopts_t *o, xresult_t *res)
{
    uint64_t **ring = calloc((size_t)o->live, sizeof *ring);
    double *t = calloc((size_t)o->rounds, sizeof *t);
    locus_status_t st = ring && t ? LOCUS_OK : LOCUS_ERR_NO_MEMORY;
    locus_rma_stats_t s0 = {0}, s1;
    /* warm-up: the ring fills once (first touches), then timed rounds */
    for (int i = -o->live; i < o->rounds && !st; i++) {
        if (i == 0)
            locus_rma_stats(x->r, &s0);
        double t0 = lc_now_s();
        int k = (i + o->live) % o->live;
        free(ring[k]); /* the array of `live` rounds ago goes, a fresh one comes */
        ring[k] = malloc((size_t)x->n * 8);
        if (!ring[k])
            st = LOCUS_ERR_NO_MEMORY;
        else
            st = round_once(x, ring[k]);
        if (i >= 0)
            t[i] = lc_now_s() - t0;
    }
    if (!st) {
        locus_rma_stats(x->r, &s1);
        qsort(t, (size_t)o->rounds, sizeof *t, cmp_time);
        double med = o->rounds % 2 ? t[o->rounds / 2] : (t[o->rounds / 2 - 1] + t[o->rounds / 2]) / 2;
        res->round_ms = med * 1e3;
        res->keys_per_s = (double)x->n / med;
        res->regs_per_round = (double)(s1.registrations - s0.registrations) / o->rounds;
    }
    for (int k = 0; ring && k < o->live; k++)
        free(ring[k]);
    free(ring);
    free(t);
    return st;
}

/* json: the record that takes the layer's notes (those not in seen yet). */
static locus_status_t run_mode(locus_boot_t *b, const xopts_t *o, const xmode_t *m, xresult_t *res, bool *nic,
                               bench_json_t *json, char *seen, size_t seen_size)
{
    locus_rma_attr_t a;
    locus_rma_attr_init(&a);
    locus_status_t st = locus_rma_attr_from_env(&a);
    if (st)
        return st;
    uint64_t need = (uint64_t)o->keys * 16 + (1u << 20); /* receive area: twice the mean */
    a.heap_size = a.heap_size < need ? need : a.heap_size;
    a.reg = m->reg;
    a.boot = b;
    set_small(m->small, o->live, locus_boot_size(b));
    xctx_t x = {.me = locus_boot_rank(b), .np = locus_boot_size(b), .n = o->keys};
    x.rng = 0x9e3779b97f4a7c15ull * (uint64_t)(x.me + 1);
    st = locus_rma_init(&a, &x.r);
    set_small(false, 0, 0);
    if (st)
        return st;
    for (int q = 0; q < x.np; q++)
        *nic |= !locus_rma_is_local(x.r, q);
    rma_bench_json_notes(json, locus_rma_notes(x.r), seen, seen_size);
    char *heap = locus_rma_heap_base(x.r);
    x.counter = (uint64_t *)heap;
    x.recv = (uint64_t *)(heap + 4096);
    x.scratch = malloc((size_t)x.n * 8);
    x.count = calloc((size_t)x.np, sizeof *x.count);
    x.start = calloc((size_t)x.np, sizeof *x.start);
    st = x.scratch && x.count && x.start ? rounds(&x, o, res) : LOCUS_ERR_NO_MEMORY;
    char why[512];
    snprintf(why, sizeof why, "%s", locus_last_error());
    free(x.scratch);
    free(x.count);
    free(x.start);
    locus_status_t f = locus_rma_fini(x.r);
    if (st == LOCUS_ERR_CORRUPT)
        snprintf(why, sizeof why, "a received key belongs to another rank");
    return st ? lc_err(st, "exchange (%s): %s", m->name, why) : f;
}

int locus_bench_exchange(int argc, char **argv)
{
    xopts_t o = {.keys = 1 << 20, .rounds = 10, .live = 4, .nmodes = 4};
    const char *def[] = {"static", "cache", "none", "small"};
    for (int i = 0; i < 4; i++) {
        snprintf(o.modes[i].name, sizeof o.modes[i].name, "%s", def[i]);
        o.modes[i].reg = i == 0 ? LOCUS_RMA_REG_STATIC : i == 2 ? LOCUS_RMA_REG_NONE : LOCUS_RMA_REG_CACHE;
        o.modes[i].small = i == 3;
    }
    int rc = parse(argc, argv, &o);
    if (rc >= 0)
        return rc;
    locus_boot_t *b;
    locus_status_t st = locus_boot_init(NULL, &b);
    if (st)
        return cli_fail("bench", st);
    int me = locus_boot_rank(b);
    bench_json_t *json = NULL;
    if (me == 0 && o.json) {
        json = bench_json_begin("exchange");
        char modes[128] = "";
        for (int i = 0; i < o.nmodes; i++)
            snprintf(modes + strlen(modes), sizeof modes - strlen(modes), "%s%s", i ? "," : "", o.modes[i].name);
        bench_json_param_num(json, "keys", (double)o.keys);
        bench_json_param_num(json, "rounds", o.rounds);
        bench_json_param_num(json, "live", o.live);
        bench_json_param_str(json, "modes", modes);
        bench_json_param_num(json, "processes", locus_boot_size(b));
    } else if (me == 0) {
        rma_bench_print_machine();
        printf("# locus bench exchange: %d ranks, %ld keys (%ld KiB) per rank per round, %d rounds (median), "
               "%d arrays live\n", locus_boot_size(b), o.keys, o.keys * 8 / 1024, o.rounds, o.live);
        fflush(stdout);
    }
    /* one untimed pass first: the process's allocator and page tables settle
     * (glibc raises its mmap threshold after the first frees), so that the
     * first mode is not charged for it */
    xopts_t warm = o;
    warm.rounds = 1;
    xresult_t first = {0};
    bool nic0 = false;
    char seen[4096] = "";
    st = run_mode(b, &warm, &o.modes[0], &first, &nic0, json, seen, sizeof seen);
    if (json)
        bench_json_summary_str(json, "path", nic0 ? "nic" : "local");
    for (int i = 0; i < o.nmodes && !st; i++) {
        xresult_t res = {0};
        bool nic = false;
        st = run_mode(b, &o, &o.modes[i], &res, &nic, json, seen, sizeof seen);
        if (st)
            break;
        if (i == 0)
            first = res;
        if (json) {
            bench_row_t row = {.series = "locus", .metric = "key rate per rank", .x_cat = o.modes[i].name,
                               .x_unit = "reg mode", .y = res.keys_per_s / 1e6, .y_unit = "Mkeys/s",
                               .stat = "median", .n = o.rounds};
            bench_json_row(json, &row);
            bench_json_extra_num(json, "round_ms", res.round_ms);
            bench_json_extra_num(json, "ratio", res.keys_per_s / first.keys_per_s);
            bench_json_extra_str(json, "ratio_to", o.modes[0].name);
            row = (bench_row_t){.series = "locus", .metric = "registrations", .x_cat = o.modes[i].name,
                                .x_unit = "reg mode", .y = res.regs_per_round, .y_unit = "per round",
                                .stat = "mean", .n = o.rounds};
            bench_json_row(json, &row);
        } else if (me == 0)
            printf("RESULT tool=locus_exchange mode=%s path=%s ranks=%d keys=%ld keys_per_s_rank=%.0f round_ms=%.3f "
                   "regs_per_round=%.2f ratio_to_%s=%.3f\n", o.modes[i].name, nic ? "nic" : "local",
                   locus_boot_size(b), o.keys, res.keys_per_s, res.round_ms, res.regs_per_round, o.modes[0].name,
                   res.keys_per_s / first.keys_per_s);
        fflush(stdout);
    }
    if (st)
        rc = cli_fail("bench", st);
    if (json && (st ? bench_json_end(json, stderr) : bench_json_end(json, stdout)))
        rc = rc > 0 ? rc : 1;
    locus_boot_fini(b);
    return rc < 0 ? 0 : rc;
}
