/* locus tune, shm part: the shm transport's thresholds that depend on the
 * machine's cores and caches, measured between two processes forked here
 * (pinned to the first two cpus this process may use, a fresh segment per
 * run, the variable under test in their environment):
 *
 *   LOCUS_SHM_SPLIT        heap-to-heap bandwidth with the split copy always
 *                          and never, per size: the threshold from which
 *                          splitting wins
 *   LOCUS_SHM_SPLIT_PIECE  bandwidth of split messages per piece size
 *   LOCUS_SHM_REF          rate of heap isends written before each send and
 *                          read after, by reference always and never
 *   LOCUS_SHM_FBOX         message rate per fast box size
 *
 * Runs are interleaved: every round measures every variant, in an order
 * rotated per round, and each figure is the median over the rounds. A
 * candidate replaces the built-in default only if it beats it beyond the
 * run's noise (tune_pick.h); of those, the one with the best figures over
 * all sizes is written, else the default. Rounds stop early
 * once 40 s have passed (at least 3). */
#include "cli.h"
#include "progress.h"
#include "tune.h"
#include "tune_pick.h"

#include <locus/locus.h>

#include "core/clock.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAXS 10 /* sizes per group */
#define MAXV 8  /* variants per group */
#define MAXR 16 /* rounds */
#define NEVER UINT64_MAX
#define BUDGET_S 40.0    /* no new round after this (at least 3 rounds) */

typedef struct {
    const char *var;    /* LOCUS_SHM_SPLIT */
    const char *what;   /* the metric's name in the record */
    const char *help;   /* the tune file's comment */
    bool threshold;     /* variants "always" (1) and "never" (0); candidates from cands */
    bool touch, rate;   /* messages written and read; y in M/s (else GB/s) */
    int window;
    size_t sizes[MAXS];
    int nsizes;
    uint64_t cands[MAXV]; /* candidate values (threshold: NEVER = 0 = never) */
    int ncands;
    uint64_t def;         /* the built-in default (as a candidate value) */
    char def_text[32];    /* ... as the table writes it ("32K", "0") */
    double y[MAXV][MAXS][MAXR]; /* per variant, size, round (0: failed) */
} group_t;

static const char *const THRESHOLD_VALUES[2] = {"1", "0"}; /* always, never */

static int nvariants(const group_t *g) { return g->threshold ? 2 : g->ncands; }

static void variant_value(const group_t *g, int v, char *buf, size_t len)
{
    if (g->threshold)
        snprintf(buf, len, "%s", THRESHOLD_VALUES[v]);
    else
        snprintf(buf, len, "%llu", (unsigned long long)g->cands[v]);
}

static const char *value_text(uint64_t v, char *buf, size_t len)
{
    if (v == NEVER)
        return snprintf(buf, len, "never"), buf;
    return locus_format_size(v, buf, len);
}

/* ---------------------------------------------------------------- the two processes */

enum { TAG_MSG = 2, TAG_ACK = 3, TAG_LAST = 4 };

/* Windows of w isends (rank 0) / irecvs (rank 1), each answered by a 4-byte
 * ack, for `secs` of rank 0's clock (at least two windows): the window after
 * that carries TAG_LAST and is the last for both. So a run takes the same
 * time on a loaded machine, only its figures get worse. Seconds, and in
 * *msgs the messages sent; < 0 on an error. */
static double stream(locus_shm_ep_t *ep, unsigned char *sb, unsigned char *rb, size_t size, int w, size_t slot,
                     locus_shm_req_t **reqs, double secs, double *msgs)
{
    int me = locus_shm_rank(ep), peer = 1 - me;
    char ack[4] = {0};
    volatile unsigned char sink = 0;
    double t0 = lc_now_s();
    bool last = false;
    int i;
    for (i = 0; !last; i++) {
        if (me == 0)
            last = i >= 1 && lc_now_s() - t0 >= secs;
        for (int k = 0; k < w; k++) {
            if (me == 0 && slot)
                memset(sb + k * slot, i + k, size);
            if (me == 0 ? locus_shm_isend(ep, peer, last ? TAG_LAST : TAG_MSG, sb + k * slot, size, &reqs[k])
                        : locus_shm_irecv(ep, peer, LOCUS_SHM_ANY_TAG, rb + k * slot, size, &reqs[k]))
                return -1;
        }
        for (int k = 0; k < w; k++) {
            locus_shm_info_t info;
            if (locus_shm_wait(ep, reqs[k], &info))
                return -1;
            last |= info.tag == TAG_LAST;
        }
        if (slot && me == 1)
            for (int k = 0; k < w; k++)
                for (size_t b = 0; b < size; b += 64)
                    sink += rb[k * slot + b];
        if (me == 0 ? locus_shm_recv(ep, peer, TAG_ACK, ack, sizeof ack, NULL)
                    : locus_shm_send(ep, peer, TAG_ACK, ack, sizeof ack))
            return -1;
    }
    (void)sink;
    *msgs = (double)i * w;
    return lc_now_s() - t0;
}

static double median3(double *v)
{
    qsort(v, 3, sizeof *v, tune_cmp_double);
    return v[1];
}

/* One rank of a run: every size, 3 timed stretches of 10 ms after a 2 ms warm-up
 * (1.5 ms stretches read the split copy at 0.4-0.5 of what `locus bench bw`
 * measures on a Zen 5 and picked a threshold that made bench bw worse);
 * rank 0 writes the medians (bytes/s or messages/s) to fd. Exit status. */
static int rank_main(const group_t *g, int rank, const char *job, int fd)
{
    size_t maxs = 0;
    for (int i = 0; i < g->nsizes; i++)
        maxs = g->sizes[i] > maxs ? g->sizes[i] : maxs;
    size_t slot = g->touch ? (maxs + 63) & ~(size_t)63 : 0;
    size_t alloc = g->touch ? slot * (size_t)g->window : maxs;
    locus_shm_opts_t o;
    locus_shm_opts_init(&o);
    o.rank = rank;
    o.size = 2;
    o.job = job;
    o.heap_bytes = 2 * ((alloc + 4095) & ~(size_t)4095) + (64u << 10);
    locus_shm_ep_t *ep;
    if (locus_shm_init(&o, &ep))
        return 2;
    unsigned char *sb = locus_shm_alloc(ep, alloc), *rb = locus_shm_alloc(ep, alloc);
    locus_shm_req_t *reqs[64];
    if (!sb || !rb || g->window > 64)
        return 3;
    memset(sb, 0x5a, alloc);
    memset(rb, 0, alloc);
    double out[MAXS];
    for (int i = 0; i < g->nsizes; i++) {
        size_t n = g->sizes[i];
        double rate[3], msgs;
        for (int k = -1; k < 3; k++) { /* k -1: warm-up (the fast box is claimed then) */
            if (locus_shm_barrier(ep))
                return 4;
            double dt = stream(ep, sb, rb, n, g->window, slot, reqs, k < 0 ? 2e-3 : 10e-3, &msgs);
            if (dt <= 0)
                return 5;
            if (k >= 0)
                rate[k] = msgs / dt;
        }
        out[i] = g->rate ? median3(rate) : median3(rate) * n;
    }
    if (rank == 0 && write(fd, out, sizeof(double) * (size_t)g->nsizes) != (ssize_t)(sizeof(double) * (size_t)g->nsizes))
        return 6;
    locus_shm_barrier(ep);
    return locus_shm_finalize(ep) ? 7 : 0;
}

/* One run of variant v: two forked ranks on cpus[0], cpus[1]; y[size] in
 * GB/s or M/s. False if it failed or took more than 30 s (then killed). */
static bool run_variant(const group_t *g, int v, const int cpus[2], double *y)
{
    static int seq;
    char job[64], value[32];
    snprintf(job, sizeof job, "tune-%d-%d", (int)getpid(), seq++);
    variant_value(g, v, value, sizeof value);
    int fds[2];
    if (pipe(fds))
        return false;
    fflush(NULL);
    pid_t pid[2] = {-1, -1};
    for (int r = 0; r < 2; r++) {
        if ((pid[r] = fork()) == 0) {
            close(fds[0]);
            setenv(g->var, value, 1);
            cpu_set_t set;
            CPU_ZERO(&set);
            CPU_SET(cpus[r], &set);
            sched_setaffinity(0, sizeof set, &set);
            _exit(rank_main(g, r, job, fds[1]));
        }
    }
    close(fds[1]);
    double out[MAXS];
    size_t want = sizeof(double) * (size_t)g->nsizes, got = 0;
    struct pollfd p = {fds[0], POLLIN, 0};
    for (double end = lc_now_s() + 30; got < want && lc_now_s() < end;) {
        if (poll(&p, 1, 100) <= 0)
            continue;
        ssize_t k = read(fds[0], (char *)out + got, want - got);
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    close(fds[0]);
    bool ok = got == want;
    for (int r = 0; r < 2; r++) {
        int ws;
        if (pid[r] <= 0)
            continue;
        if (!ok)
            kill(pid[r], SIGKILL);
        ok &= waitpid(pid[r], &ws, 0) == pid[r] && WIFEXITED(ws) && WEXITSTATUS(ws) == 0;
    }
    char name[128];
    if (locus_shm_segment_name(job, name, sizeof name) == LOCUS_OK)
        shm_unlink(name); /* a run killed before everybody attached leaves it */
    for (int i = 0; ok && i < g->nsizes; i++)
        y[i] = out[i] / (g->rate ? 1e6 : 1e9);
    return ok;
}

/* ---------------------------------------------------------------- deciding */

typedef struct {
    tune_fig_t f[MAXV][MAXS]; /* per variant and size: median over rounds, spread */
} stats_t;

static void summarise(const group_t *g, int rounds, stats_t *s)
{
    for (int v = 0; v < nvariants(g); v++)
        for (int i = 0; i < g->nsizes; i++) {
            double x[MAXR];
            memcpy(x, g->y[v][i], sizeof(double) * (size_t)rounds);
            s->f[v][i] = tune_figure(x, rounds);
        }
}

/* The variant behind candidate c at size i (threshold groups: always if the
 * size reaches the threshold, else never; otherwise c itself). */
static int variant_at(const group_t *g, int c, int i)
{
    if (!g->threshold)
        return c;
    return g->cands[c] != NEVER && g->sizes[i] >= g->cands[c] ? 0 : 1;
}

typedef struct {
    int best, def;     /* candidate written; the default's index */
    tune_cmp_t won;    /* best against the default (n 0: the default kept) */
    tune_cmp_t seen;   /* the best gain of any candidate, even if refused */
    int seen_at;
} verdict_t;

/* Candidate c against the default d at the sizes where they differ. */
static tune_cmp_t compare(const group_t *g, const stats_t *s, int c, int d)
{
    tune_fig_t fc[MAXS], fd[MAXS];
    int n = 0;
    for (int i = 0; i < g->nsizes; i++) {
        int vc = variant_at(g, c, i), vd = variant_at(g, d, i);
        if (vc != vd)
            fc[n] = s->f[vc][i], fd[n++] = s->f[vd][i];
    }
    return tune_compare(fc, fd, n);
}

/* Candidate c over every measured size: the sum of the logs of its figures
 * (the same sizes for every candidate, so the scores rank them). */
static double score(const group_t *g, const stats_t *s, int c)
{
    double sum = 0;
    for (int i = 0; i < g->nsizes; i++) {
        double m = s->f[variant_at(g, c, i)][i].med;
        sum += m > 0 ? log(m) : -1e9;
    }
    return sum;
}

/* The best-scoring candidate among those that beat the default where they
 * differ (tune_beats), else the default. */
static verdict_t decide(const group_t *g, const stats_t *s, int def)
{
    verdict_t v = {.best = def, .def = def, .won = {0, 1, 1, 0}, .seen = {0, 1, 1, 0}, .seen_at = -1};
    double best = score(g, s, def), seen = -INFINITY;
    for (int c = 0; c < g->ncands; c++) {
        tune_cmp_t r = compare(g, s, c, def);
        if (c == def || !r.n)
            continue;
        double sc = score(g, s, c);
        if (sc > seen)
            v.seen = r, v.seen_at = c, seen = sc;
        if (tune_beats(&r) && sc > best)
            v.best = c, v.won = r, best = sc;
    }
    return v;
}

/* ---------------------------------------------------------------- printing */

static void print_group(const group_t *g, const stats_t *s, int rounds, const char *labels[])
{
    char b[32];
    const char *unit = g->rate ? "M/s" : "GB/s";
    tune_say("  %8s", "size");
    for (int v = 0; v < nvariants(g); v++)
        tune_say(" %12s", labels[v]);
    tune_say("   (%s, median of %d, ±spread)\n", unit, rounds);
    for (int i = 0; i < g->nsizes; i++) {
        tune_say("  %8s", locus_format_size(g->sizes[i], b, sizeof b));
        for (int v = 0; v < nvariants(g); v++) {
            const tune_fig_t *f = &s->f[v][i];
            tune_say(" %7.2f ±%2.0f%%", f->med, 100 * f->noise);
            bench_row_t r = {.series = labels[v], .metric = g->what, .x = (double)g->sizes[i], .x_unit = "bytes",
                             .y = f->med > 0 ? f->med : NAN, .y_unit = unit, .stat = "median", .n = rounds};
            bench_json_row(tune_json(), &r);
            bench_json_extra_num(tune_json(), "spread", f->noise);
        }
        tune_say("\n");
    }
}

/* The verdict line, the summary and the tune file entry. */
static void conclude(tune_t *t, const group_t *g, const verdict_t *v, const char *key)
{
    char d[32], a[32], seen[32], val[32], k[64];
    value_text(g->def, d, sizeof d);
    value_text(g->cands[v->best], a, sizeof a);
    if (v->seen_at >= 0)
        value_text(g->cands[v->seen_at], seen, sizeof seen);
    if (v->best != v->def)
        tune_say("  %-22s %s (default) -> %s, gain %.2fx where they differ (noise %.0f %%)\n", g->var, d, a,
                 v->won.gain, 100 * v->won.margin);
    else if (v->seen_at >= 0 && v->seen.margin > TUNE_NOISE_MAX)
        tune_say("  %-22s %s (default) kept: best %s %.2fx, but the runs spread %.0f %% (a loaded machine?)\n",
                 g->var, d, seen, v->seen.gain, 100 * v->seen.margin);
    else if (v->seen_at >= 0)
        tune_say("  %-22s %s (default) kept: best %s %.2fx (worst size %.2fx), not beyond the noise (%.0f %%)\n",
                 g->var, d, seen, v->seen.gain, v->seen.worst, 100 * v->seen.margin);
    else
        tune_say("  %-22s %s (default) kept\n", g->var, d);
    uint64_t chosen = g->cands[v->best];
    if (v->best == v->def)
        snprintf(val, sizeof val, "%s", g->def_text);
    else
        snprintf(val, sizeof val, "%llu", chosen == NEVER ? 0ull : (unsigned long long)chosen);
    snprintf(k, sizeof k, "%s_before", key);
    bench_json_summary_str(tune_json(), k, d);
    bench_json_summary_str(tune_json(), key, a);
    snprintf(k, sizeof k, "%s_gain", key);
    bench_json_summary_num(tune_json(), k, v->best != v->def ? v->won.gain : 1.0);
    char comment[200];
    snprintf(comment, sizeof comment, "%s (locus tune, shm%s)", g->help,
             v->best == v->def ? ": the default, no candidate beat it beyond the noise" : "");
    tune_add(t, g->var, val, comment);
}

/* ---------------------------------------------------------------- the groups */

static void setup(group_t g[4])
{
    g[0] = (group_t){.var = "LOCUS_SHM_SPLIT", .what = "shm bandwidth, heap to heap (split copy always / never)",
                     .help = "smallest heap-to-heap message both sides copy", .threshold = true, .window = 64,
                     .sizes = {24u << 10, 32u << 10, 64u << 10, 128u << 10, 256u << 10, 512u << 10, 1u << 20, 2u << 20},
                     .nsizes = 8,
                     .cands = {16u << 10, 32u << 10, 64u << 10, 128u << 10, 256u << 10, 512u << 10, 1u << 20, NEVER},
                     .ncands = 8};
    g[1] = (group_t){.var = "LOCUS_SHM_SPLIT_PIECE", .what = "shm bandwidth, split copies (per piece size)",
                     .help = "piece of a split copy", .window = 64,
                     .sizes = {256u << 10, 1u << 20, 4u << 20}, .nsizes = 3,
                     .cands = {32u << 10, 64u << 10, 128u << 10, 256u << 10, 512u << 10}, .ncands = 5};
    g[2] = (group_t){.var = "LOCUS_SHM_REF", .what = "shm message rate, heap isends written and read (by reference always / never)",
                     .help = "smallest heap isend sent by reference", .threshold = true, .touch = true, .rate = true,
                     .window = 64, .sizes = {64, 128, 256, 512, 1u << 10, 2u << 10, 4u << 10, 8u << 10, 16u << 10},
                     .nsizes = 9, .cands = {64, 128, 256, 512, 1u << 10, 2u << 10, 4u << 10, NEVER}, .ncands = 8};
    g[3] = (group_t){.var = "LOCUS_SHM_FBOX", .what = "shm message rate (per fast box size)",
                     .help = "fast box size (halved as processes grow)", .rate = true, .window = 64,
                     .sizes = {8, 1u << 10, 4u << 10}, .nsizes = 3,
                     .cands = {16u << 10, 32u << 10, 64u << 10, 128u << 10, 256u << 10, 512u << 10, 1u << 20},
                     .ncands = 7};
}

/* The built-in default of `var` as a candidate value (0 = never for thresholds,
 * LOCUS_SHM_FBOX 0 = its 64 KiB). */
static uint64_t default_of(group_t *g)
{
    for (size_t i = 0; i < locus_config_count(); i++) {
        locus_tunable_info_t info;
        uint64_t v;
        if (locus_config_describe(i, &info) || strcmp(info.name, g->var) || locus_parse_size(info.def, &v))
            continue;
        snprintf(g->def_text, sizeof g->def_text, "%s", info.def);
        if (!v)
            return g->threshold ? NEVER : 64u << 10;
        return v;
    }
    return 0;
}

/* The first two cpus this process may run on; false if it has one. */
static bool two_cpus(int cpus[2])
{
    cpu_set_t set;
    int n = 0;
    if (sched_getaffinity(0, sizeof set, &set))
        return false;
    for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
        if (CPU_ISSET(c, &set))
            cpus[n++] = c;
    return n == 2;
}

int tune_shm(tune_t *t, int reps)
{
    int cpus[2];
    if (!two_cpus(cpus)) {
        tune_say("shm: needs two cpus to measure between two processes: nothing chosen\n");
        bench_json_note(tune_json(), "shm not tuned: this process may use one cpu only");
        return 0;
    }
    static group_t g[4];
    int defs[4];
    setup(g);
    int rounds = reps < 3 ? 3 : reps > MAXR ? MAXR : reps, runs = 0, failed = 0;
    for (int k = 0; k < 4; k++) {
        g[k].def = default_of(&g[k]);
        int c = 0;
        while (c < g[k].ncands && g[k].cands[c] != g[k].def)
            c++;
        if (c == g[k].ncands) { /* a default off the list is measured too */
            if (c == MAXV)
                c--;
            g[k].cands[c] = g[k].def;
            g[k].ncands = c + 1;
        }
        defs[k] = c;
        memset(g[k].y, 0, sizeof g[k].y);
        runs += nvariants(&g[k]) * rounds;
    }
    locus_copy_ctx_t *cc; /* the copy selector once, here, not in every forked rank */
    (void)locus_copy_default_ctx(&cc);
    double t0 = lc_now_s();
    progress_t pr;
    progress_begin(&pr, "shm: runs of two processes", (uint64_t)runs, false);
    int done = 0, r;
    for (r = 0; r < rounds && (r < 3 || lc_now_s() - t0 < BUDGET_S); r++) /* 3: some figures anyway */
        for (int k = 0; k < 4; k++) {
            int nv = nvariants(&g[k]);
            for (int j = 0; j < nv; j++) {
                int v = (j + r) % nv; /* rotated: no variant always runs first */
                double y[MAXS];
                if (run_variant(&g[k], v, cpus, y))
                    for (int i = 0; i < g[k].nsizes; i++)
                        g[k].y[v][i][r] = y[i];
                else
                    failed++;
                progress_update(&pr, (uint64_t)++done);
            }
        }
    progress_end(&pr);
    if (r < rounds)
        bench_json_note(tune_json(), "shm: %d of %d rounds (the %.0f s budget ran out)", r, rounds, BUDGET_S);
    rounds = r;
    runs = done;
    bench_json_summary_num(tune_json(), "shm_rounds", rounds);
    tune_say("shm: two processes on cpus %d and %d, %d rounds of every variant interleaved (%.1f s%s)\n", cpus[0],
             cpus[1], rounds, lc_now_s() - t0, failed ? ", some runs failed" : "");
    if (failed * 2 > runs) {
        fprintf(stderr, "locus tune: shm: %d of %d runs failed (locus run -n 2 -- locus bench bw shows why)\n",
                failed, runs);
        return 1;
    }
    if (rounds < TUNE_MIN_ROUNDS) {
        tune_say("  %d rounds are too few to tell a gain from the noise: the defaults are kept (--reps %d or "
                 "more)\n", rounds, TUNE_MIN_ROUNDS);
        bench_json_note(tune_json(), "shm: %d rounds, fewer than %d: the defaults are kept", rounds,
                        TUNE_MIN_ROUNDS);
    }
    static const char *keys[4] = {"shm_split", "shm_split_piece", "shm_ref", "shm_fbox"};
    for (int k = 0; k < 4; k++) {
        stats_t s;
        summarise(&g[k], rounds, &s);
        char lb[MAXV][32];
        const char *labels[MAXV];
        for (int v = 0; v < nvariants(&g[k]); v++) {
            if (g[k].threshold)
                snprintf(lb[v], sizeof lb[v], "%s", v ? "never" : "always");
            else
                value_text(g[k].cands[v], lb[v], sizeof lb[v]);
            labels[v] = lb[v];
        }
        tune_say("  %s: %s\n", g[k].var, g[k].what);
        print_group(&g[k], &s, rounds, labels);
        verdict_t v = decide(&g[k], &s, defs[k]);
        if (rounds < TUNE_MIN_ROUNDS)
            v.best = v.def;
        conclude(t, &g[k], &v, keys[k]);
    }
    return 0;
}
