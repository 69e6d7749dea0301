/* locus bench copy: GB/s of every copy kernel and of the selector against
 * glibc memcpy, the selector's crossover points, the cache pollution a large
 * copy causes, and --calibrate (measure the NT crossover, write the file the
 * library reads). Every figure is the median of --reps rounds; within a round
 * the contenders run back to back, so ratios come from the same conditions. */
#include "cli.h"

#include <locus/locus.h>

#include "core/config.h"
#include "core/clock.h"
#include "bench_json.h"
#include "progress.h"

#include <immintrin.h>
#include <math.h>
#include <stdarg.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define MAX_SIZES 64
#define MAX_REPS 101
#define VICTIM (16ull << 20)
#define POLLUTER (64ull << 20)

typedef struct {
    size_t sizes[MAX_SIZES];
    int nsizes, reps;
    bool calibrate, pollution, kernels, default_sizes, json;
    uint64_t max_size;
} opts_t;

/* With --json the record is the output: the text is not printed. */
static bench_json_t *json;

#define say(...) bench_say(json, __VA_ARGS__)

/* One bandwidth point of the sweep or the calibration. */
static void gbs_row(const char *series, size_t n, double gbs, int reps, bool peer, bool highlight)
{
    bench_row_t r = {.series = series, .metric = "bandwidth", .x = (double)n, .x_unit = "bytes", .y = gbs,
                     .y_unit = "GB/s", .stat = "median", .n = reps, .highlight = highlight,
                     .peer = peer ? "glibc memcpy" : NULL};
    if (peer)
        bench_json_peer_row(json, &r);
    else
        bench_json_row(json, &r);
}

/* Contender c: -2 glibc memcpy, -1 the selector (locus_copy, hint NONE), k >= 0 kernel k. */
#define C_GLIBC (-2)
#define C_SELECTOR (-1)


static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void copy_once(int c, void *d, const void *s, size_t n)
{
    if (c == C_GLIBC)
        memcpy(d, s, n);
    else if (c == C_SELECTOR)
        locus_copy(d, s, n, LOCUS_COPY_HINT_NONE);
    else /* the kernel itself, without locus_copy_kernel's argument checks */
        locus_copy_kernel_fn(c)(d, s, n);
    __asm__ volatile("" ::: "memory");
}

/* GB/s of one timed batch: enough copies for ~0.5 ms (at least one). Short
 * batches: on a shared machine a batch that lost the cpu is an outlier the
 * median drops, where long batches would all be hit. One loop per kind of
 * contender, so the loop itself costs the same for glibc and the selector. */
/* One function per loop and kind of contender, so the loop itself costs the
 * same for glibc and the selector. Where a tight loop falls relative to the
 * cpu's fetch blocks moves a small copy's speed by 5-20 % (a 1 KiB copy,
 * ~40 cycles, on a Zen 5: four nops after the loop's call moved it 0.94 ->
 * 1.01 of the other layout): a property of the code's placement, not of the
 * copy. So every loop exists at LAYOUTS placements (its start moved by 0, 8,
 * .. 56 bytes past a 64-byte boundary) and round r runs layout r % LAYOUTS: the
 * medians average over placements, and a ratio compares glibc and the
 * selector at the same placement. */
#define LAYOUTS 8
/* The loops count down: one register fewer, so that a contender's own live
 * values (the selector's hoisted test) stay in registers too. */
#define BENCH_LOOP __attribute__((noinline, aligned(64), optimize("align-loops=1")))
/* executed once per batch: align, then move the loop that follows */
#define PLACE(pad) __asm__ volatile(".p2align 6\n\t.fill " #pad ", 1, 0x90" ::: "memory")

#define LOOPS(pad)                                                                           \
    static BENCH_LOOP void loop_glibc_##pad(void *d, const void *s, size_t n, long iters)     \
    {                                                                                        \
        PLACE(pad);                                                                          \
        for (long i = iters; i > 0; i--) {                                                   \
            memcpy(d, s, n);                                                                 \
            __asm__ volatile("" ::: "memory");                                               \
        }                                                                                    \
    }                                                                                        \
    static BENCH_LOOP void loop_selector_##pad(void *d, const void *s, size_t n, long iters)  \
    {                                                                                        \
        PLACE(pad);                                                                          \
        for (long i = iters; i > 0; i--) {                                                   \
            locus_copy(d, s, n, LOCUS_COPY_HINT_NONE);                                       \
            __asm__ volatile("" ::: "memory");                                               \
        }                                                                                    \
    }                                                                                        \
    static BENCH_LOOP void loop_kernel_##pad(locus_copy_fn_t fn, void *d, const void *s, size_t n, \
                                             long iters)                                     \
    {                                                                                        \
        PLACE(pad);                                                                          \
        for (long i = iters; i > 0; i--) {                                                   \
            fn(d, s, n);                                                                     \
            __asm__ volatile("" ::: "memory");                                               \
        }                                                                                    \
    }
LOOPS(0)
LOOPS(8)
LOOPS(16)
LOOPS(24)
LOOPS(32)
LOOPS(40)
LOOPS(48)
LOOPS(56)

typedef void (*copy_loop_t)(void *, const void *, size_t, long);
typedef void (*kernel_loop_t)(locus_copy_fn_t, void *, const void *, size_t, long);
#define EIGHT(f) {f##_0, f##_8, f##_16, f##_24, f##_32, f##_40, f##_48, f##_56}
static const copy_loop_t glibc_loops[LAYOUTS] = EIGHT(loop_glibc);
static const copy_loop_t selector_loops[LAYOUTS] = EIGHT(loop_selector);
static const kernel_loop_t kernel_loops[LAYOUTS] = EIGHT(loop_kernel);

/* Where the destination sits relative to the source (both buffers start on a
 * page): at the same offset in a page, or one line apart, a copy's loads can
 * be falsely held behind the previous copy's stores to the same low 12 address
 * bits (4K aliasing), and a small copy's speed then swings by +-10 % with the
 * timing of the few instructions around the call (research/probes/copy_alias_probe.c); 1088 and 2112 B
 * apart nothing aliases and glibc, the selector and variants of its inline
 * test all measure 1.000 of each other. Rounds go through all four (64 B
 * multiples: the kernels' destination alignment is the same), so the medians
 * describe copies between buffers as programs have them, not one aliasing. */
#define OFFSETS 4
static const size_t dst_offset[OFFSETS] = {0, 64, 1088, 2112};

/* GB/s of one batch of contender c in round r: layout r % LAYOUTS, and an
 * offset that changes with it so every pair of them is met. */
static double measure(int c, void *dbase, const void *s, size_t n, long iters, int r)
{
    r = r < 0 ? -r : r;
    int lay = r % LAYOUTS;
    void *d = (char *)dbase + dst_offset[(r + r / LAYOUTS) % OFFSETS];
    if (n <= (32u << 20))
        copy_once(c, d, s, n); /* warm: same buffers as the timed copies */
    double t0 = lc_now_s();
    if (c == C_GLIBC)
        glibc_loops[lay](d, s, n, iters);
    else if (c == C_SELECTOR)
        selector_loops[lay](d, s, n, iters);
    else
        kernel_loops[lay](locus_copy_kernel_fn(c), d, s, n, iters);
    double t = lc_now_s() - t0;
    return (double)n * (double)iters / t / 1e9;
}

static long iterations(void *d, const void *s, size_t n)
{
    long it = 1;
    for (;;) {
        double t0 = lc_now_s();
        for (long i = 0; i < it; i++)
            copy_once(C_GLIBC, d, s, n);
        double t = lc_now_s() - t0;
        if (t > 2e-4 || it > (1l << 26))
            return t > 5e-4 ? it : (long)((double)it * 5e-4 / (t > 1e-9 ? t : 1e-9)) + 1;
        it *= 4;
    }
}

/* Median over `pairs` back-to-back batches of GB/s(b) / GB/s(a); the order
 * alternates. */
static double pair_ratio(int a, int b, char *d, const char *s, size_t n, long it, int pairs)
{
    double rr[MAX_REPS];
    for (int r = 0; r < pairs; r++) {
        double x, y;
        if (r % 2) {
            y = measure(b, d, s, n, it, r);
            x = measure(a, d, s, n, it, r);
        } else {
            x = measure(a, d, s, n, it, r);
            y = measure(b, d, s, n, it, r);
        }
        rr[r] = y / x;
    }
    return median(rr, pairs);
}

/* Medians of GB/s for contenders cs[0..nc) at size n; *ratio (if not NULL):
 * median over rounds of contender 1 / contender 0 measured in the same round
 * (adjacent batches), which cancels the load changes between rounds;
 * ratio[1]: the same for glibc against itself. */
static void sweep_size(const int *cs, int nc, char *d, const char *s, size_t n, int reps, double *out,
                       double *ratio)
{
    static double v[64][MAX_REPS];
    long it = iterations(d, s, n);
    /* Small sizes are cheap to repeat and the noisiest: three times the rounds. */
    if (n <= (64u << 10))
        reps = reps * 3 > MAX_REPS ? MAX_REPS : reps * 3;
    for (int r = 0; r < reps; r++)
        for (int j = 0; j < nc; j++) {
            int i = r % 2 ? nc - 1 - j : j; /* alternate the order: no contender always goes first */
            v[i][r] = measure(cs[i], d, s, n, it, r);
        }
    if (ratio) {
        /* Extra back-to-back pairs for the ratio: about 0.6 s worth, 21..101.
         * ratio[1]: the same with glibc against itself (an A/A control: the
         * noise of the ratio in this run). */
        double batch = (double)n * (double)it / median(v[0], reps) / 1e9;
        int pairs = (int)(0.3 / (batch > 1e-6 ? batch : 1e-6));
        pairs = pairs < 21 ? 21 : pairs > MAX_REPS ? MAX_REPS : pairs;
        ratio[0] = pair_ratio(cs[0], cs[1], d, s, n, it, pairs);
        ratio[1] = pair_ratio(cs[0], cs[0], d, s, n, it, pairs);
    }
    for (int i = 0; i < nc; i++)
        out[i] = median(v[i], reps);
}

static void *map(size_t n)
{
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    madvise(p, n, MADV_HUGEPAGE);
    memset(p, 1, n);
    return p;
}

static const char *fmt(size_t n, char *buf, size_t len)
{
    if (n >= (1u << 20) && n % (1u << 20) == 0)
        snprintf(buf, len, "%zuM", n >> 20);
    else if (n >= 1024 && n % 1024 == 0)
        snprintf(buf, len, "%zuK", n >> 10);
    else
        snprintf(buf, len, "%zu", n);
    return buf;
}

/* ---------- sweep and crossovers ---------- */

/* The record's rows of one size: glibc (a peer), the selector with its ratio
 * and A/A control, every kernel. */
static void sweep_rows(const int *cs, int nc, size_t n, const double *gbs, const double *rr, int reps,
                       const char *chosen)
{
    if (!json)
        return;
    int k = n <= (64u << 10) ? (reps * 3 > MAX_REPS ? MAX_REPS : reps * 3) : reps;
    gbs_row("glibc memcpy", n, gbs[0], k, true, true);
    gbs_row("locus_copy (selector)", n, gbs[1], k, false, true);
    bench_json_extra_num(json, "ratio", rr[0]);
    bench_json_extra_num(json, "aa", rr[1]);
    bench_json_extra_str(json, "chosen", chosen);
    for (int i = 2; i < nc; i++)
        gbs_row(locus_copy_kernel_name(cs[i]), n, gbs[i], k, false, false);
}

static int run_sweep(const opts_t *o, char *d, char *s, const locus_copy_params_t *p,
                     locus_copy_ctx_t *ctx)
{
    int cs[64], nc = 0;
    cs[nc++] = C_GLIBC;
    cs[nc++] = C_SELECTOR;
    if (o->kernels)
        for (int k = 0; k < locus_copy_num_kernels(); k++)
            if (locus_copy_kernel_available(k) && k != locus_copy_kernel_find("libc")) /* glibc is there */
                cs[nc++] = k;
    static double gbs[MAX_SIZES][64], ratios[MAX_SIZES];
    say("GB/s (1e9 B/s), median of %d rounds (x3 up to 64K), same buffers reused (cache-hot where\n"
           "they fit); ratio = median of locus/glibc over 21..101 extra pairs of back-to-back batches;\n"
           "A/A = the same for glibc against itself (the noise of a ratio in this run)\n\n", o->reps);
    say("%8s %8s %8s %6s %6s  %-10s", "size", "glibc", "locus", "ratio", "A/A", "chosen");
    for (int i = 2; i < nc; i++)
        say(" %7.7s", locus_copy_kernel_name(cs[i]));
    say("\n");
    double worst = 1e9;
    size_t worst_at = 0;
    progress_t pr;
    progress_begin(&pr, "copy sweep, sizes", (uint64_t)o->nsizes, false);
    for (int z = 0; z < o->nsizes; z++) {
        size_t n = o->sizes[z];
        double rr[2];
        sweep_size(cs, nc, d, s, n, o->reps, gbs[z], rr);
        progress_update(&pr, (uint64_t)z + 1);
        sweep_rows(cs, nc, n, gbs[z], rr, o->reps,
                   locus_copy_kernel_name(locus_copy_ctx_select(ctx, n, LOCUS_COPY_HINT_NONE)));
        double ratio = ratios[z] = rr[0];
        if (n >= 64 && ratio < worst) {
            worst = ratio;
            worst_at = n;
        }
        char b[32];
        say("%8s %8.2f %8.2f %6.3f %6.3f  %-10s", fmt(n, b, sizeof b), gbs[z][0], gbs[z][1], ratio, rr[1],
               locus_copy_kernel_name(locus_copy_ctx_select(ctx, n, LOCUS_COPY_HINT_NONE)));
        for (int i = 2; i < nc; i++)
            say(" %7.2f", gbs[z][i]);
        if (!json) {
            progress_end(&pr);
            say("\n");
            fflush(stdout);
        }
    }
    progress_end(&pr);
    bench_json_summary_num(json, "worst_ratio", worst);
    bench_json_summary_num(json, "worst_ratio_at", (double)worst_at);
    char b1[32];
    say("\nselector vs glibc: worst ratio %.3f at %s", worst, fmt(worst_at, b1, sizeof b1));
    for (int z = 0; z < o->nsizes; z++)
        if (o->sizes[z] == 64ull << 20)
            say("; at 64M %.2fx", ratios[z]), bench_json_summary_num(json, "ratio_64M", ratios[z]);
    say("\n");
    if (o->kernels) {
        say("measured crossovers (smallest swept size from which the kernel is >= glibc at every "
               "larger size):\n");
        for (int i = 2; i < nc; i++) {
            int from = -1;
            for (int z = o->nsizes - 1; z >= 0 && gbs[z][i] >= gbs[z][0]; z--)
                from = z;
            char b[32], key[64];
            snprintf(key, sizeof key, "crossover_%s", locus_copy_kernel_name(cs[i]));
            bench_json_summary_num(json, key, from < 0 ? NAN : (double)o->sizes[from]);
            say("  %-12s %s\n", locus_copy_kernel_name(cs[i]),
                   from < 0 ? "never" : fmt(o->sizes[from], b, sizeof b));
        }
    }
    char a[32], f[32];
    say("selector crossovers: NT stores from %s (%s); with NT_DEST/NT_SOURCE and a peer on "
           "another L3 from %s (%s)\n",
           locus_format_size(p->nt_min, a, sizeof a), p->nt_min_origin,
           locus_format_size(p->nt_min_far, f, sizeof f), p->nt_min_far_origin);
    if (p->libc_from != UINT64_MAX) {
        char g[32];
        say("  from %s glibc memcpy (its own NT stores won the self-test's race past its threshold)\n",
            locus_format_size(p->libc_from, g, sizeof g));
        bench_json_summary_num(json, "libc_from", (double)p->libc_from);
    }
    bench_json_summary_num(json, "nt_min", (double)p->nt_min);
    bench_json_summary_str(json, "nt_min_origin", p->nt_min_origin);
    bench_json_summary_num(json, "nt_min_far", (double)p->nt_min_far);
    bench_json_summary_str(json, "nt_min_far_origin", p->nt_min_far_origin);
    return 0;
}

/* ---------- cache pollution ---------- */

static double reread(const char *v, size_t n)
{
    double t0 = lc_now_s();
    __m128i acc = _mm_setzero_si128();
    for (size_t i = 0; i < n; i += 64)
        acc = _mm_add_epi64(acc, _mm_load_si128((const __m128i *)(v + i)));
    double t = lc_now_s() - t0;
    volatile long long sink = _mm_cvtsi128_si64(acc);
    (void)sink;
    return t;
}

static void run_pollution(const opts_t *o, char *d, char *s)
{
    char *victim = map(VICTIM);
    if (!victim) {
        say("\ncache pollution: skipped (cannot map %llu MiB)\n", VICTIM >> 20);
        return;
    }
    /* glibc, then the regular, NT and NT + prefetch kernels of the AVX2 (else
     * SSE2) loop, rep movsb where the CPU has ERMS (the self-test may choose
     * it for big copies), and the kernel the selector uses at this size */
    int v = locus_copy_kernel_find("avx2");
    if (!locus_copy_kernel_available(v))
        v = locus_copy_kernel_find("sse2");
    int ks[6] = {locus_copy_kernel_find("libc"), v, locus_copy_kernel_variant(v, true, false),
                 locus_copy_kernel_variant(v, true, true)}, nk = 4;
    int movsb = locus_copy_kernel_find("movsb");
    if (locus_copy_kernel_available(movsb))
        ks[nk++] = movsb;
    locus_copy_ctx_t *ctx;
    int sel = locus_copy_default_ctx(&ctx) == LOCUS_OK ? locus_copy_ctx_select(ctx, POLLUTER, LOCUS_COPY_HINT_NONE)
                                                      : -1;
    bool listed = false;
    for (int i = 0; i < nk; i++)
        listed |= ks[i] == sel;
    if (sel >= 0 && !listed)
        ks[nk++] = sel;
    double hot[MAX_REPS], after[6][MAX_REPS], copy_gbs[6][MAX_REPS];
    progress_t pr;
    progress_begin(&pr, "cache pollution, rounds", (uint64_t)o->reps, false);
    for (int r = 0; r < o->reps; r++) {
        progress_update(&pr, (uint64_t)r);
        reread(victim, VICTIM);
        hot[r] = reread(victim, VICTIM);
        for (int i = 0; i < nk; i++) {
            reread(victim, VICTIM);
            reread(victim, VICTIM);
            double t0 = lc_now_s();
            locus_copy_kernel(ks[i], d, s, POLLUTER);
            copy_gbs[i][r] = (double)POLLUTER / (lc_now_s() - t0) / 1e9;
            after[i][r] = reread(victim, VICTIM);
        }
    }
    progress_end(&pr);
    double h = median(hot, o->reps);
    bench_json_summary_num(json, "victim_hot_ms", h * 1e3);
    say("\ncache pollution: re-read of a 16 MiB victim working set after a 64 MiB copy "
           "(median of %d)\n", o->reps);
    say("  %-22s %8.3f ms\n", "victim hot (no copy)", h * 1e3);
    for (int i = 0; i < nk; i++) {
        double a = median(after[i], o->reps);
        double g = median(copy_gbs[i], o->reps);
        say("  after %-16s %8.3f ms  slowdown %5.2fx   (copy %.1f GB/s)%s\n",
               locus_copy_kernel_name(ks[i]), a * 1e3, a / h, g, ks[i] == sel ? "  <- the selector's" : "");
        bench_row_t row = {.series = "16 MiB victim", .metric = "re-read slowdown after a 64 MiB copy",
                           .x_cat = locus_copy_kernel_name(ks[i]), .x_unit = "kernel", .y = a / h, .y_unit = "x",
                           .stat = "median", .n = o->reps};
        bench_json_row(json, &row);
        bench_json_extra_num(json, "reread_ms", a * 1e3);
        bench_json_extra_num(json, "copy_gbps", g);
    }
    munmap(victim, VICTIM);
}

/* ---------- calibration ---------- */

static int run_calibrate(const opts_t *o, char *d, char *s, const locus_copy_params_t *p)
{
    char path[512];
    locus_copy_calibration_path(path, sizeof path);
    if (!*path)
        return cli_usage_error("bench copy", "--calibrate: LOCUS_COPY_CALIBRATION is 'none' and "
                               "there is no cache path (HOME unset); set it to a file path");
    int cs[4] = {C_GLIBC}, nc = 1;
    /* What the selector runs from nt_min: NT stores + prefetchnta loads. */
    const char *cand[] = {"sse2-ntpf", "avx2-ntpf", "avx512-ntpf"};
    for (int i = 0; i < 3; i++)
        if (locus_copy_kernel_available(locus_copy_kernel_find(cand[i])))
            cs[nc++] = locus_copy_kernel_find(cand[i]);
    /* Sizes from 1/16 of the L3 share to 4x the L3, four per octave. */
    size_t sizes[64] = {0};
    int nz = 0;
    uint64_t lo = p->l3_size / (uint64_t)p->l3_cpus / 16, hi = 4 * p->l3_size;
    if (lo < (256u << 10))
        lo = 256u << 10;
    if (hi < 4 * lo)
        hi = 4 * lo;
    for (double x = (double)lo; x <= (double)hi * 1.0001 && nz < 64; x *= 1.189207115)
        sizes[nz++] = ((size_t)x + 63) & ~(size_t)63;
    static double g[64][4];
    say("calibration: glibc vs NT + prefetchnta kernels, %d sizes from %zu to %zu bytes, median of %d\n",
           nz, sizes[0], sizes[nz - 1], o->reps);
    say("%12s %8s", "size", "glibc");
    for (int i = 1; i < nc; i++)
        say(" %9s", locus_copy_kernel_name(cs[i]));
    say("\n");
    /* Two passes: the crossover moves with what the other cpus do to the
     * shared L3; the later of the two keeps the selector >= glibc. */
    static double g2[64][4];
    progress_t pr;
    progress_begin(&pr, "calibration, sizes (2 passes)", 2 * (uint64_t)nz, false);
    for (int pass = 0; pass < 2; pass++)
        for (int z = 0; z < nz; z++) {
            sweep_size(cs, nc, d, s, sizes[z], o->reps, pass ? g2[z] : g[z], NULL);
            progress_update(&pr, (uint64_t)(pass * nz + z + 1));
            if (!pass)
                continue;
            bool worse = g2[z][1] / g2[z][0] < g[z][1] / g[z][0];
            for (int i = 0; worse && i < nc; i++) /* keep the pass less favourable to NT */
                g[z][i] = g2[z][i];
        }
    progress_end(&pr);
    for (int z = 0; z < nz && json; z++)
        for (int i = 0; i < nc; i++)
            gbs_row(i ? locus_copy_kernel_name(cs[i]) : "glibc memcpy", sizes[z], g[z][i], o->reps, !i, !i);
    for (int z = 0; z < nz; z++) {
        say("%12zu %8.2f", sizes[z], g[z][0]);
        for (int i = 1; i < nc; i++)
            say(" %9.2f", g[z][i]);
        say("\n");
    }
    /* The NT kernel: the narrowest one within 3% of the best beyond 2x L3
     * (wider vectors only where they pay). */
    double score[4] = {0};
    int nbig = 0;
    for (int z = 0; z < nz; z++)
        if (sizes[z] >= 2 * p->l3_size) {
            nbig++;
            for (int i = 1; i < nc; i++)
                score[i] += g[z][i];
        }
    int best = 1;
    for (int i = 2; i < nc; i++)
        if (score[i] > score[best] * 1.03)
            best = i;
    /* nt_min: smallest size from which the NT kernel beats glibc at every larger size. */
    int from = -1;
    for (int z = nz - 1; z >= 0 && g[z][best] >= g[z][0]; z--)
        from = z;
    uint64_t nt_min = from < 0 ? 2 * (uint64_t)sizes[nz - 1] : sizes[from];
    /* The file names the family's NT-store kernel; the selector derives -pf and -ntpf. */
    locus_copy_calibration_t cal = {.l3_size = p->l3_size, .l3_cpus = p->l3_cpus, .nt_min = nt_min,
                                     .nt_kernel = locus_copy_kernel_variant(cs[best], true, false)};
    locus_status_t st = locus_copy_calibration_save(path, &cal);
    if (st)
        return cli_fail("bench copy", st);
    char a[32], b[32];
    say("\nNT kernels: %s family (%s over %d sizes >= 2x L3)\n", locus_copy_kernel_name(cal.nt_kernel),
           nc > 2 ? "best within 3%" : "only candidate", nbig);
    say("nt_min: %s (was %s from %s)%s\n", locus_format_size(nt_min, a, sizeof a),
           locus_format_size(p->nt_min, b, sizeof b), p->nt_min_origin,
           from < 0 ? "; NT never won: NT effectively off" : "");
    say("nt_min_far: not measured (needs a peer on another L3); stays %s\n", p->nt_min_far_origin);
    say("wrote %s (read by new processes; LOCUS_COPY_NT_MIN still overrides it)\n", path);
    bench_json_summary_str(json, "nt_kernel", locus_copy_kernel_name(cal.nt_kernel));
    bench_json_summary_num(json, "nt_min", from < 0 ? NAN : (double)nt_min);
    bench_json_summary_num(json, "nt_min_before", (double)p->nt_min);
    bench_json_summary_str(json, "nt_min_before_origin", p->nt_min_origin);
    bench_json_summary_str(json, "wrote", path);
    return 0;
}

/* ---------- options ---------- */

static int usage(FILE *out, int rc)
{
    fprintf(out,
            "usage: locus bench copy [--quick] [--reps N] [--sizes LIST] [--max SIZE] [--no-kernels]\n"
            "                        [--no-pollution] [--calibrate] [--json] [-q]\n"
            "  GB/s of glibc memcpy, the selector (locus_copy, hint NONE) and every copy kernel\n"
            "  from 64 B to 256 MiB (medians of N rounds, default 9; --quick 5), the crossovers, and the\n"
            "  re-read time of a 16 MiB victim after a 64 MiB copy (regular vs NT stores).\n"
            "  --sizes 64,4K,64M   sizes to sweep (default: powers of 2; --quick: powers of 4)\n"
            "  --max SIZE          largest size of the default sweep (default 256M)\n"
            "  --calibrate         measure the NT crossover and write it where the library\n"
            "                      reads it (LOCUS_COPY_CALIBRATION, default ~/.cache/locus/copy.conf)\n"
            "  --json              the benchmark record (docs/bench-schema.json) instead of the text;\n"
            "                      `locus plot` draws GB/s against size per kernel\n"
            "  -q                  no progress on stderr (shown only on a terminal)\n");
    return rc;
}

static int parse(int argc, char **argv, opts_t *o)
{
    memset(o, 0, sizeof *o);
    o->reps = 9;
    o->pollution = o->kernels = true;
    o->max_size = 256ull << 20;
    bool quick = false;
    const char *sizes = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h"))
            return usage(stdout, 0) - 1;
        if (!strcmp(a, "--quick")) quick = true;
        else if (!strcmp(a, "--calibrate")) o->calibrate = true;
        else if (!strcmp(a, "--no-pollution")) o->pollution = false;
        else if (!strcmp(a, "--no-kernels")) o->kernels = false;
        else if (!strcmp(a, "--json")) o->json = true;
        else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) progress_quiet(true);
        else if ((!strcmp(a, "--reps") || !strcmp(a, "--sizes") || !strcmp(a, "--max")) && !v)
            return cli_usage_error("bench copy", "%s needs a value", a);
        else if (!strcmp(a, "--reps")) {
            int64_t r;
            if (lc_parse_int(v, 1, MAX_REPS, &r))
                return cli_usage_error("bench copy", "--reps %s", locus_last_error());
            o->reps = (int)r;
            i++;
        } else if (!strcmp(a, "--max")) {
            if (locus_parse_size(v, &o->max_size) || o->max_size < 64 || o->max_size > (4ull << 30))
                return cli_usage_error("bench copy", "--max '%s': expected a size in [64, 4G]", v);
            i++;
        } else if (!strcmp(a, "--sizes")) {
            sizes = v;
            i++;
        } else {
            usage(stderr, 2);
            return cli_usage_error("bench copy", "unknown option '%s'", a);
        }
    }
    if (sizes) {
        char buf[1024];
        snprintf(buf, sizeof buf, "%s", sizes);
        for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            uint64_t n;
            if (locus_parse_size(t, &n) || n == 0 || n > (4ull << 30) || o->nsizes == MAX_SIZES)
                return cli_usage_error("bench copy", "--sizes: '%s': expected up to %d sizes in "
                                       "[1, 4G], e.g. 64,4K,64M", t, MAX_SIZES);
            o->sizes[o->nsizes++] = (size_t)n;
        }
    } else {
        o->default_sizes = true;
        for (uint64_t n = 64; n <= o->max_size && o->nsizes < MAX_SIZES; n *= quick ? 4 : 2)
            o->sizes[o->nsizes++] = (size_t)n;
    }
    if (quick && o->reps == 9)
        o->reps = 5;
    return 1;
}

/* The record's header: what was swept and the selector's view of the machine. */
static void json_begin(const opts_t *o, const locus_copy_params_t *p, const char *notes)
{
    json = bench_json_begin(o->calibrate ? "copy-calibrate" : "copy");
    char list[1024] = "", b[32];
    for (int z = 0, n = 0; z < o->nsizes && !o->calibrate && n < (int)sizeof list; z++)
        n += snprintf(list + n, sizeof list - (size_t)n, "%s%s", z ? "," : "", fmt(o->sizes[z], b, sizeof b));
    if (!o->calibrate)
        bench_json_param_str(json, "sizes", list);
    bench_json_param_num(json, "reps", o->reps);
    bench_json_param_bool(json, "kernels", o->kernels);
    bench_json_param_bool(json, "pollution", o->pollution && !o->calibrate);
    bench_json_param_num(json, "cpu", sched_getcpu());
    bench_json_param_num(json, "l3_size", (double)p->l3_size);
    bench_json_param_num(json, "l3_cpus", p->l3_cpus);
    bench_json_param_str(json, "nt_kernel", locus_copy_kernel_name(p->nt));
    bench_json_note(json, "GB/s = 1e9 B/s; the same buffers reused (cache-hot where they fit); medians of the "
                          "rounds (x3 up to 64K); ratio = median of locus/glibc over extra back-to-back pairs, "
                          "aa = glibc against itself (the noise of a ratio in this run)");
    for (const char *q = notes; q && *q;) {
        const char *nl = strchr(q, '\n');
        int n = nl ? (int)(nl - q) : (int)strlen(q);
        if (n)
            bench_json_note(json, "%.*s", n, q);
        q += n + (nl != NULL);
    }
}

int locus_bench_copy(int argc, char **argv)
{
    opts_t o;
    int rc = parse(argc, argv, &o);
    if (rc != 1)
        return rc < 0 ? 0 : rc;
    /* Stay on one cpu: the selector's L3 is the one of the cpu it is made on (first use, below). */
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(sched_getcpu(), &set);
    sched_setaffinity(0, sizeof set, &set);

    locus_copy_ctx_t *ctx;
    locus_status_t st = locus_copy_default_ctx(&ctx);
    if (st)
        return cli_fail("bench copy", st);
    locus_copy_params_t p;
    locus_copy_ctx_params(ctx, &p);
    if (o.default_sizes) /* the selector's own switch points join the sweep */
        for (int i = 0; i < 2; i++) {
            size_t t = i ? p.nt_min : p.nt_min - 64;
            bool have = false;
            for (int z = 0; z < o.nsizes; z++)
                have |= o.sizes[z] == t;
            if (have || t < 64 || t > o.max_size || o.nsizes == MAX_SIZES)
                continue;
            int z = o.nsizes++;
            for (; z > 0 && o.sizes[z - 1] > t; z--)
                o.sizes[z] = o.sizes[z - 1];
            o.sizes[z] = t;
        }


    size_t max = 0;
    for (int z = 0; z < o.nsizes; z++)
        max = o.sizes[z] > max ? o.sizes[z] : max;
    if (o.pollution && max < POLLUTER)
        max = POLLUTER;
    if (o.calibrate && max < (4 * p.l3_size))
        max = 4 * p.l3_size;
    char *s = map(max + 4096), *d = map(max + 4096); /* room for dst_offset */
    if (!s || !d)
        return cli_fail("bench copy", LOCUS_ERR_NO_MEMORY);

    if (o.json)
        json_begin(&o, &p, locus_copy_ctx_notes(ctx));
    char l3[32], a[32];
    say("locus bench copy: cpu %d, L3 %s shared by %d cpus (%s), NT kernel %s\n", sched_getcpu(),
           locus_format_size(p.l3_size, l3, sizeof l3), p.l3_cpus,
           p.l3_source == LOCUS_TOPO_SRC_HWLOC ? "hwloc" : p.l3_source == LOCUS_TOPO_SRC_SYSFS ? "sysfs" : "default",
           locus_copy_kernel_name(p.nt));
    (void)a;
    if (*locus_copy_ctx_notes(ctx))
        say("notes: %s", locus_copy_ctx_notes(ctx));
    say("\n");
    if (o.calibrate)
        rc = run_calibrate(&o, d, s, &p);
    else {
        rc = run_sweep(&o, d, s, &p, ctx);
        if (o.pollution)
            run_pollution(&o, d, s);
    }
    munmap(s, max + 4096);
    munmap(d, max + 4096);
    if (json) {
        if (rc)
            bench_json_note(json, "the run failed (exit status %d, the reason on stderr)", rc);
        bench_json_end(json, stdout);
        json = NULL;
    }
    return rc;
}
