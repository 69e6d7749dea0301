/* locus bench regcache: the registration cache against UCX's ucs_rcache with
 * equivalent null backends (a busy wait per registration), same workloads,
 * same process, rounds interleaved, medians.
 *
 * A stand-alone executable, bin/locus-bench-regcache, that uses only the
 * public reg API (and core's clock); `locus bench regcache` runs it from
 * beside the CLI. With REGCACHE_WITH_UCX (when UCX is installed) it also links
 * -lucs -lucm and runs ucs_rcache; liblocus and the CLI never depend on UCX.
 *
 * Workloads (get + put per operation; 4 KiB buffers 8 KiB apart so regions
 * never merge, except "adjacent"):
 *   same       one buffer again and again
 *   hit100     random hits over 100 cached regions
 *   hit10k     random hits over 10^4 cached regions
 *   below      cyclic over 1/2 of the capacity (capacity = --capacity regions)
 *   above      cyclic over 3/2 of the capacity (LRU worst case: every get misses)
 *   above-rnd  random over 3/2 of the capacity
 *   adjacent   random 1 KiB buffers packed back to back in 4 MiB
 *   threads    hit10k from 1 thread and from 2 threads (throughput, Mops/s)
 * Reported: ns per operation (median of --reps rounds), registrations per
 * operation, evictions per operation.
 *
 * threads: rounds of --thread-ops operations per thread (default 10^6,
 * ~15 ms for locus); each round, for each cache in turn: 1 thread on cpu 0,
 * 1 thread on cpu 1 ("1 thread" = the mean of the two: the host does not
 * run both vCPUs equally fast), then 2 threads on cpus 0 and 1. Every thread
 * first warms up (one pass over all regions and 10^5 operations of its own
 * sequence) before a barrier and the timed part. The same 10^4 regions are
 * shared by both threads; the thread on cpu k always runs sequence k. Each
 * round is bracketed by a placement probe (two-line cache-line ping-pong
 * between threads on cpus 0 and 1, as research/peers/clping.c): the host moves
 * the vCPUs between "near" cores (~50 ns), "far" ones (~200 ns) and SMT
 * siblings of one core (~15-25 ns). Reported per cache: medians over rounds
 * of 1- and 2-thread throughput and of each round's 2/1 ratio, by wall clock
 * (2 threads: the sum of each thread's operations per second of wall time,
 * whose ideal is the sum of the two 1-thread runs = 2 x "1 thread"; also
 * all operations / the slower thread's time, which a slower vCPU drags down)
 * and per CPU-second, and the median share of its own 1-thread speed that
 * the slower of the two threads kept, for all rounds and per placement
 * (rounds whose two probes agree), and again over the "clean" rounds only:
 * those where every thread was on its CPU for >= 97 % of its wall time (the
 * other agents' tasks on this shared machine preempt threads; a preempted
 * thread stretches the 2-thread wall time without saying anything about the
 * cache). */
#include "core/clock.h"
#include "bench_json.h"
#include "progress.h"
#include <locus/locus.h>

#include <errno.h>
#include <stdarg.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#ifdef REGCACHE_WITH_UCX
#include <ucm/api/ucm.h>
#include <ucs/memory/rcache.h>
#if __has_include(<uct/api/version.h>)
#include <uct/api/version.h>
#define UCS_PEER "UCX " UCT_VERNO_STRING " ucs_rcache, same process, null backend"
#endif
#endif
#ifndef UCS_PEER
#define UCS_PEER "UCX ucs_rcache, same process, null backend"
#endif

typedef struct {
    int reps;
    long ops, thread_ops;
    uint64_t capacity, reg_ns;
    bool stats, ucx, json;
    const char *only;
} opts_t;

/* --json: the record (docs/bench-schema.json) is the output, the text is not printed. */
static bench_json_t *json;

#define say(...) bench_say(json, __VA_ARGS__)

/* A point of cache k (0 locus: a row; 1 ucs_rcache: a peer row). */
static void point(int k, const char *metric, const char *x, const char *x_unit, double y, const char *y_unit, int n)
{
    bench_row_t r = {.series = k ? "ucs_rcache" : "locus", .metric = metric, .x_cat = x, .x_unit = x_unit,
                     .y = y, .y_unit = y_unit, .stat = strcmp(y_unit, "per op") ? "median" : "mean", .n = n,
                     .peer = k ? UCS_PEER : NULL};
    if (k)
        bench_json_peer_row(json, &r);
    else
        bench_json_row(json, &r);
}


static inline void spin_ns(uint64_t ns)
{
    if (!ns) return;
    double until = lc_now_s() + (double)ns * 1e-9;
    while (lc_now_s() < until) __builtin_ia32_pause();
}

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

/* ---------- the two caches behind one interface ---------- */

typedef struct impl {
    const char *name;
    void *cache;
    uint64_t regs, deregs; /* backend calls */
    uint64_t reg_ns;
} impl_t;

static locus_reg_cache_t *locus_make(uint64_t capacity, uint64_t reg_ns, uint64_t merge_max)
{
    locus_reg_attr_t a;
    locus_reg_attr_init(&a);
    a.backend = LOCUS_REG_BACKEND_NULL;
    a.max_regions = capacity;
    a.merge_max = merge_max;
    a.null_ns = reg_ns;
    locus_reg_cache_t *c = NULL;
    if (locus_reg_cache_create(&a, &c) != LOCUS_OK) {
        fprintf(stderr, "locus bench regcache: %s\n", locus_last_error());
        exit(1);
    }
    return c;
}

#ifdef REGCACHE_WITH_UCX
static ucs_status_t ucx_reg(void *ctx, ucs_rcache_t *rc, void *arg, ucs_rcache_region_t *r, uint16_t f)
{
    impl_t *im = ctx;
    spin_ns(im->reg_ns);
    __atomic_fetch_add(&im->regs, 1, __ATOMIC_RELAXED);
    return UCS_OK;
}

static void ucx_dereg(void *ctx, ucs_rcache_t *rc, ucs_rcache_region_t *r)
{
    impl_t *im = ctx;
    spin_ns(im->reg_ns);
    __atomic_fetch_add(&im->deregs, 1, __ATOMIC_RELAXED);
}

static void ucx_dump(void *ctx, ucs_rcache_t *rc, ucs_rcache_region_t *r, char *buf, size_t max)
{
    snprintf(buf, max, "null");
}

static const ucs_rcache_ops_t ucx_ops = {ucx_reg, ucx_dereg, ucx_dump};

static ucs_rcache_t *ucx_make(impl_t *im, uint64_t capacity)
{
    ucs_rcache_params_t p;
    memset(&p, 0, sizeof p);
    p.region_struct_size = sizeof(ucs_rcache_region_t);
    p.alignment = 4096;
    p.max_alignment = 4096;
    p.ucm_events = UCM_EVENT_VM_UNMAPPED;
    p.ucm_event_priority = 1000;
    p.ops = &ucx_ops;
    p.context = im;
    p.flags = 0;
    p.max_regions = capacity ? capacity : (unsigned long)-1;
    p.max_size = (size_t)-1;
    p.max_unreleased = (size_t)-1;
    ucs_rcache_t *rc = NULL;
    ucs_status_t st = ucs_rcache_create(&p, "bench", NULL, &rc);
    if (st != UCS_OK) {
        fprintf(stderr, "locus bench regcache: ucs_rcache_create failed (%d)\n", (int)st);
        exit(1);
    }
    return rc;
}
#endif

typedef enum { K_LOCUS = 0, K_UCX = 1 } kind_t;

typedef struct {
    kind_t kind;
    impl_t *imp; /* on the heap: UCX keeps a pointer to it */
} cache_t;

static cache_t cache_new(kind_t k, uint64_t capacity, uint64_t reg_ns, uint64_t merge_max)
{
    cache_t c;
    memset(&c, 0, sizeof c);
    c.kind = k;
    c.imp = calloc(1, sizeof *c.imp);
    c.imp->reg_ns = reg_ns;
    if (k == K_LOCUS) {
        c.imp->name = "locus";
        c.imp->cache = locus_make(capacity, reg_ns, merge_max);
    }
#ifdef REGCACHE_WITH_UCX
    else {
        c.imp->name = "ucs_rcache";
        c.imp->cache = ucx_make(c.imp, capacity);
    }
#endif
    return c;
}

static void cache_free(cache_t *c)
{
    if (c->kind == K_LOCUS)
        locus_reg_cache_destroy(c->imp->cache);
#ifdef REGCACHE_WITH_UCX
    else
        ucs_rcache_destroy(c->imp->cache);
#endif
    free(c->imp);
}

static void cache_counts(cache_t *c, uint64_t *regs, uint64_t *evictions)
{
    if (c->kind == K_LOCUS) {
        locus_reg_stats_t s;
        locus_reg_stats(c->imp->cache, &s);
        *regs = s.registrations;
        *evictions = s.evictions;
    } else {
        *regs = c->imp->regs;
        *evictions = c->imp->deregs; /* everything it deregisters during a run is an eviction */
    }
}

/* The hot loop, one copy per cache kind so neither pays an indirect call. */
static long run_locus(locus_reg_cache_t *c, char *const *bufs, const uint32_t *seq, long n, size_t len)
{
    long bad = 0;
    for (long i = 0; i < n; i++) {
        const locus_reg_t *r;
        if (locus_reg_get(c, bufs[seq[i]], len, LOCUS_REG_LOCAL_WRITE, &r) != LOCUS_OK) {
            bad++;
            continue;
        }
        locus_reg_put(c, r);
    }
    return bad;
}

#ifdef REGCACHE_WITH_UCX
static long run_ucx(ucs_rcache_t *c, char *const *bufs, const uint32_t *seq, long n, size_t len)
{
    long bad = 0;
    for (long i = 0; i < n; i++) {
        ucs_rcache_region_t *r;
        if (ucs_rcache_get(c, bufs[seq[i]], len, PROT_READ | PROT_WRITE, NULL, &r) != UCS_OK) {
            bad++;
            continue;
        }
        ucs_rcache_region_put(c, r);
    }
    return bad;
}
#endif

static long run(cache_t *c, char *const *bufs, const uint32_t *seq, long n, size_t len)
{
    if (c->kind == K_LOCUS)
        return run_locus(c->imp->cache, bufs, seq, n, len);
#ifdef REGCACHE_WITH_UCX
    return run_ucx(c->imp->cache, bufs, seq, n, len);
#else
    return 0;
#endif
}

/* ---------- workloads ---------- */

typedef struct {
    const char *name;
    uint32_t nbuf;      /* distinct buffers */
    size_t len, stride; /* buffer length and distance */
    bool cyclic;        /* 0,1,2,... instead of random */
    bool capacity;      /* run with the capacity limit */
    uint64_t merge_max;
} workload_t;

typedef struct {
    double ns[2];
    double regs_per_op[2], evict_per_op[2];
    long bad[2];
} result_t;

static uint32_t *make_seq(long n, uint32_t nbuf, bool cyclic, unsigned seed)
{
    uint32_t *s = malloc((size_t)n * sizeof *s);
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    for (long i = 0; i < n; i++) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        s[i] = cyclic ? (uint32_t)(i % nbuf) : (uint32_t)(x % nbuf);
    }
    return s;
}

static int nkinds(const opts_t *o) { return o->ucx ? 2 : 1; }

/* Progress over all batches of the workloads run. */
static progress_t wprog;
static uint64_t wdone;

static result_t run_workload(const opts_t *o, const workload_t *w)
{
    result_t res;
    memset(&res, 0, sizeof res);
    size_t span = (size_t)w->nbuf * w->stride + 4096;
    char *area = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (area == MAP_FAILED) {
        perror("mmap");
        exit(1);
    }
    memset(area, 1, span);
    char **bufs = malloc(w->nbuf * sizeof *bufs);
    for (uint32_t i = 0; i < w->nbuf; i++)
        bufs[i] = area + (size_t)i * w->stride;
    long n = o->ops;
    uint32_t *seq = make_seq(n, w->nbuf, w->cyclic, 7);
    uint32_t *warm = make_seq(w->nbuf, w->nbuf, true, 0);
    double *t[2] = {malloc((size_t)o->reps * sizeof(double)), malloc((size_t)o->reps * sizeof(double))};
    uint64_t regs[2] = {0, 0}, ev[2] = {0, 0};
    cache_t cs[2];
    for (int k = 0; k < nkinds(o); k++) {
        cs[k] = cache_new((kind_t)k, w->capacity ? o->capacity : 0, w->capacity ? o->reg_ns : 0, w->merge_max);
        run(&cs[k], bufs, warm, w->nbuf, w->len); /* fill */
    }
    /* short batches, the contenders alternating: on a shared machine most
     * batches run undisturbed and both see the same conditions */
    for (int rep = 0; rep < o->reps; rep++, progress_update(&wprog, ++wdone))
        for (int k = 0; k < nkinds(o); k++) {
            int kk = rep % 2 ? nkinds(o) - 1 - k : k;
            uint64_t r0, e0, r1, e1;
            cache_counts(&cs[kk], &r0, &e0);
            double t0 = lc_now_s();
            res.bad[kk] += run(&cs[kk], bufs, seq, n, w->len);
            t[kk][rep] = (lc_now_s() - t0) * 1e9 / (double)n;
            cache_counts(&cs[kk], &r1, &e1);
            regs[kk] += r1 - r0;
            ev[kk] += e1 - e0;
        }
    for (int k = 0; k < nkinds(o); k++) {
        res.ns[k] = median(t[k], o->reps);
        res.regs_per_op[k] = (double)regs[k] / ((double)n * o->reps);
        res.evict_per_op[k] = (double)ev[k] / ((double)n * o->reps);
        if (o->stats && k == K_LOCUS) {
            locus_reg_stats_t s;
            locus_reg_stats(cs[k].imp->cache, &s);
            say("    [%s stats] gets %llu hits %llu misses %llu merges %llu evictions %llu invalidations %llu "
                   "registrations %llu deregistrations %llu regions %llu (cached %llu) bytes %llu\n",
                   w->name, (unsigned long long)s.gets, (unsigned long long)s.hits, (unsigned long long)s.misses,
                   (unsigned long long)s.merges, (unsigned long long)s.evictions,
                   (unsigned long long)s.invalidations, (unsigned long long)s.registrations,
                   (unsigned long long)s.deregistrations, (unsigned long long)s.regions,
                   (unsigned long long)s.cached, (unsigned long long)s.bytes);
        }
        cache_free(&cs[k]);
    }
    free(t[0]);
    free(t[1]);
    free(seq);
    free(warm);
    free(bufs);
    munmap(area, span);
    return res;
}

/* ---------- threads ---------- */

static void pin_cpu(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    sched_setaffinity(0, sizeof set, &set);
}

/* Placement probe: clping's two-line mode between two threads pinned to
 * cpus 0 and 1 (one line per direction, 128 B apart), one-way ns = round
 * trip / 2, median of 21 runs of 300 round trips (a few ms). */
#define PROBE_FAR_NS 120.0
typedef struct {
    _Alignas(128) _Atomic uint64_t ping;
    _Alignas(128) _Atomic uint64_t pong;
    _Alignas(128) _Atomic int ready;
} probe_t;
enum { PROBE_RUNS = 21, PROBE_ITERS = 300 };

static void *probe_pong(void *arg)
{
    probe_t *p = arg;
    pin_cpu(1);
    atomic_store(&p->ready, 1);
    for (uint64_t k = 1; k <= (uint64_t)(PROBE_RUNS + 1) * PROBE_ITERS; k++) {
        while (atomic_load_explicit(&p->ping, memory_order_acquire) != k)
            __builtin_ia32_pause();
        atomic_store_explicit(&p->pong, k, memory_order_release);
    }
    return NULL;
}

static double probe_ns(void)
{
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
        return -1;
    probe_t *p = aligned_alloc(128, sizeof *p);
    memset(p, 0, sizeof *p);
    pthread_t th;
    pin_cpu(0);
    pthread_create(&th, NULL, probe_pong, p);
    while (!atomic_load(&p->ready))
        sched_yield();
    double t[PROBE_RUNS];
    uint64_t k = 0;
    for (int r = -1; r < PROBE_RUNS; r++) { /* run -1 warms up */
        double t0 = lc_now_s();
        for (int i = 0; i < PROBE_ITERS; i++) {
            k++;
            atomic_store_explicit(&p->ping, k, memory_order_release);
            while (atomic_load_explicit(&p->pong, memory_order_acquire) != k)
                __builtin_ia32_pause();
        }
        if (r >= 0)
            t[r] = (lc_now_s() - t0) / (2.0 * PROBE_ITERS) * 1e9;
    }
    pthread_join(th, NULL);
    free(p);
    cpu_set_t all;
    CPU_ZERO(&all);
    for (long c = 0; c < sysconf(_SC_NPROCESSORS_ONLN) && c < CPU_SETSIZE; c++)
        CPU_SET(c, &all);
    sched_setaffinity(0, sizeof all, &all);
    return median(t, PROBE_RUNS);
}

typedef struct {
    cache_t *c;
    char **bufs;
    uint32_t *seq, *warm;
    long n, nwarm;
    uint32_t nbuf;
    size_t len;
    int cpu;
    pthread_barrier_t *bar;
    double secs, cpu_secs;
} thr_t;

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void *thr_main(void *arg)
{
    thr_t *t = arg;
    pin_cpu(t->cpu);
    /* warm-up, untimed: every region once, then the start of its own sequence */
    run(t->c, t->bufs, t->warm, t->nbuf, t->len);
    run(t->c, t->bufs, t->seq, t->nwarm, t->len);
    pthread_barrier_wait(t->bar);
    double t0 = lc_now_s(), c0 = cpu_now();
    run(t->c, t->bufs, t->seq, t->n, t->len);
    t->secs = lc_now_s() - t0;
    t->cpu_secs = cpu_now() - c0;
    return NULL;
}

/* One run of nthr threads doing random hits over 10^4 regions, thread i
 * pinned to cpu (cpu0 + i) % ncpu with that cpu's sequence. Returns Mops/s by
 * wall clock (all operations / the slowest thread's time); rate[i]: thread
 * i's own Mops/s; *cpu_mops: the sum of each thread's ops per second of its
 * own CPU time; *oncpu (if not NULL) lowers to the smallest share of its
 * wall time a thread spent on its CPU (below 1: another task ran there). */
static double threads_run(cache_t *c, char **bufs, uint32_t *const *seqs, uint32_t *warm, uint32_t nbuf, long n,
                          int nthr, int cpu0, double *rate, double *cpu_mops, double *oncpu)
{
    pthread_t th[2];
    thr_t t[2];
    pthread_barrier_t bar;
    pthread_barrier_init(&bar, NULL, (unsigned)nthr);
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    long nwarm = n < 100000 ? n : 100000;
    for (int i = 0; i < nthr; i++) {
        int cpu = (int)((cpu0 + i) % ncpu);
        t[i] = (thr_t){c, bufs, seqs[cpu % 2], warm, n, nwarm, nbuf, 4096, cpu, &bar, 0, 0};
        pthread_create(&th[i], NULL, thr_main, &t[i]);
    }
    double worst = 0;
    *cpu_mops = 0;
    for (int i = 0; i < nthr; i++) {
        pthread_join(th[i], NULL);
        if (t[i].secs > worst) worst = t[i].secs;
        rate[i] = (double)n / t[i].secs / 1e6;
        *cpu_mops += (double)n / t[i].cpu_secs / 1e6;
        if (oncpu && t[i].cpu_secs / t[i].secs < *oncpu)
            *oncpu = t[i].cpu_secs / t[i].secs;
    }
    pthread_barrier_destroy(&bar);
    return (double)n * nthr / worst / 1e6;
}

enum { MAX_ROUNDS = 101 };
enum { P_NEAR, P_FAR, P_SIBLING, P_MIXED, P_CLEAN = 4 };
static const char *const place_name[] = {"near", "far", "sibling", "mixed"};
#define ONCPU_CLEAN 0.97 /* a round is clean when every thread was on its CPU >= 97 % of its time */
#define PROBE_SIBLING_NS 30.0 /* below: the two vCPUs are SMT siblings of one core */

typedef struct {
    double one[MAX_ROUNDS];        /* 1 thread: mean of the cpu 0 and cpu 1 runs, wall Mops/s */
    double two[MAX_ROUNDS];        /* 2 threads: the sum of the threads' own rates (wall clock), Mops/s */
    double two_slow[MAX_ROUNDS];   /* 2 threads: all operations / the slower thread's time */
    double cone[MAX_ROUNDS], ctwo[MAX_ROUNDS]; /* the same per CPU-second */
    double keep[MAX_ROUNDS];       /* the slower thread's 2-thread rate / its own cpu's 1-thread rate */
} tres_t;

/* Medians over the rounds in placement want (-1: all; | P_CLEAN: clean rounds only); returns how many. */
static int threads_report(int kind, const char *name, const char *what, int rounds, const int *place, int want,
                          const tres_t *t)
{
    bool clean = want >= 0 && (want & P_CLEAN);
    if (clean)
        want &= ~P_CLEAN;
    double a[MAX_ROUNDS], b[MAX_ROUNDS], r[MAX_ROUNDS], ca[MAX_ROUNDS], cb[MAX_ROUNDS], cr[MAX_ROUNDS];
    double kp[MAX_ROUNDS], bs[MAX_ROUNDS], rs[MAX_ROUNDS];
    int k = 0;
    for (int i = 0; i < rounds; i++) {
        if (want >= 0 && (place[i] & ~P_CLEAN) != want) continue;
        if (clean && !(place[i] & P_CLEAN)) continue;
        a[k] = t->one[i]; b[k] = t->two[i]; r[k] = t->two[i] / t->one[i];
        ca[k] = t->cone[i]; cb[k] = t->ctwo[i]; cr[k] = t->ctwo[i] / t->cone[i];
        kp[k] = t->keep[i];
        bs[k] = t->two_slow[i]; rs[k] = t->two_slow[i] / t->one[i];
        k++;
    }
    if (!k) return 0;
    /* the ratio of each round's runs, then the median: they ran back to back */
    say("  %-7s %-10s %-12s %3d rounds  wall: 1 thread %5.1f, 2 threads %6.1f Mops/s, scaling %.2fx"
           " (ops / slower thread's time: %6.1f, %.2fx);  per CPU-second: %5.1f / %6.1f, %.2fx;"
           "  slower thread keeps %3.0f%%\n", "threads", name, what, k, median(a, k), median(b, k), median(r, k),
           median(bs, k), median(rs, k), median(ca, k), median(cb, k), median(cr, k), 100 * median(kp, k));
    if (json) {
        if (want < 0) { /* all rounds: the throughput */
            point(kind, "throughput, hits over 10^4 regions", "1 thread", "threads", median(a, k), "Mops/s", k);
            point(kind, "throughput, hits over 10^4 regions", "2 threads", "threads", median(b, k), "Mops/s", k);
            bench_json_extra_num(json, "slower_thread_mops", median(bs, k));
            bench_json_extra_num(json, "cpu_second_mops", median(cb, k));
        }
        point(kind, "2-thread scaling", what, "placement", median(r, k), "x", k);
        bench_json_extra_num(json, "per_cpu_second", median(cr, k));
        bench_json_extra_num(json, "slower_thread_keeps", median(kp, k));
    }
    return k;
}

static void threads_workload(const opts_t *o)
{
    const uint32_t nbuf = 10000;
    size_t span = (size_t)nbuf * 8192 + 4096;
    char *area = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    memset(area, 1, span);
    char **bufs = malloc(nbuf * sizeof *bufs);
    for (uint32_t i = 0; i < nbuf; i++) bufs[i] = area + (size_t)i * 8192;
    uint32_t *warm = make_seq(nbuf, nbuf, true, 0);
    int rounds = o->reps / 5 < 5 ? 5 : (o->reps / 5 > MAX_ROUNDS ? MAX_ROUNDS : o->reps / 5);
    long tops = o->thread_ops;
    uint32_t *seqs[2] = {make_seq(tops, nbuf, false, 11), make_seq(tops, nbuf, false, 12)};
    static tres_t res[2];
    static double s1[2][MAX_ROUNDS][2], t2[2][MAX_ROUNDS][2], oncpu[2][MAX_ROUNDS];
    for (int k = 0; k < 2; k++)
        for (int rep = 0; rep < MAX_ROUNDS; rep++)
            oncpu[k][rep] = 1;
    double pb[MAX_ROUNDS], pa[MAX_ROUNDS];
    int place[MAX_ROUNDS];
    cache_t cs[2];
    for (int k = 0; k < nkinds(o); k++) {
        cs[k] = cache_new((kind_t)k, 0, 0, 0);
        run(&cs[k], bufs, warm, nbuf, 4096);
    }
    progress_t pr;
    progress_begin(&pr, "threads, rounds", (uint64_t)rounds, false);
    for (int rep = 0; rep < rounds; rep++) {
        progress_update(&pr, (uint64_t)rep);
        pb[rep] = probe_ns();
        for (int k = 0; k < nkinds(o); k++) {
            /* 1 thread on cpu 0, 1 thread on cpu 1 (the vCPUs need not be equally
             * fast on a shared host), then both */
            double r[2], c0, c1;
            threads_run(&cs[k], bufs, seqs, warm, nbuf, tops, 1, 0, r, &c0, &oncpu[k][rep]);
            s1[k][rep][0] = r[0];
            threads_run(&cs[k], bufs, seqs, warm, nbuf, tops, 1, 1, r, &c1, &oncpu[k][rep]);
            s1[k][rep][1] = r[0];
            res[k].one[rep] = (s1[k][rep][0] + s1[k][rep][1]) / 2;
            res[k].cone[rep] = (c0 + c1) / 2;
            res[k].two_slow[rep] = threads_run(&cs[k], bufs, seqs, warm, nbuf, tops, 2, 0, t2[k][rep],
                                               &res[k].ctwo[rep], &oncpu[k][rep]);
            res[k].two[rep] = t2[k][rep][0] + t2[k][rep][1];
            double k0 = t2[k][rep][0] / s1[k][rep][0], k1 = t2[k][rep][1] / s1[k][rep][1];
            res[k].keep[rep] = k0 < k1 ? k0 : k1;
        }
        pa[rep] = probe_ns();
        progress_update(&pr, (uint64_t)rep + 1);
        int cb = pb[rep] < 0 ? P_MIXED : pb[rep] > PROBE_FAR_NS ? P_FAR : pb[rep] < PROBE_SIBLING_NS ? P_SIBLING : P_NEAR;
        int ca = pa[rep] < 0 ? P_MIXED : pa[rep] > PROBE_FAR_NS ? P_FAR : pa[rep] < PROBE_SIBLING_NS ? P_SIBLING : P_NEAR;
        place[rep] = cb == ca ? cb : P_MIXED;
    }
    progress_end(&pr);
    /* clean (for each cache separately): no thread of the round shared its CPU */
    int pl[2][MAX_ROUNDS], nclean[2] = {0, 0};
    for (int k = 0; k < nkinds(o); k++)
        for (int rep = 0; rep < rounds; rep++) {
            pl[k][rep] = place[rep] | (oncpu[k][rep] >= ONCPU_CLEAN ? P_CLEAN : 0);
            nclean[k] += oncpu[k][rep] >= ONCPU_CLEAN;
        }
    int cnt[4] = {0, 0, 0, 0};
    for (int rep = 0; rep < rounds; rep++)
        cnt[place[rep]]++;
    say("  threads: %d rounds of %ld ops per thread (after a warm-up); 1 thread on cpu 0 and on cpu 1 (their mean "
           "is \"1 thread\"), then 2 threads on cpus 0 and 1; the same %u regions\n"
           "  placement (two-line ping-pong before and after each round): %d near (%.0f-%.0f ns), %d far (> %.0f ns), "
           "%d sibling (< %.0f ns: SMT threads of one core), %d mixed\n",
           rounds, tops, nbuf, cnt[P_NEAR], PROBE_SIBLING_NS, PROBE_FAR_NS, cnt[P_FAR], PROBE_FAR_NS, cnt[P_SIBLING],
           PROBE_SIBLING_NS, cnt[P_MIXED]);
    if (o->stats)
        for (int rep = 0; rep < rounds; rep++) {
            say("    [threads round %2d] probe %4.0f / %4.0f ns (%s)", rep, pb[rep], pa[rep], place_name[place[rep]]);
            for (int k = 0; k < nkinds(o); k++)
                say("  %s: cpu0 %5.1f cpu1 %5.1f -> %5.1f + %5.1f = %5.1f Mops/s (%.2fx), on cpu %3.0f%%",
                       cs[k].imp->name, s1[k][rep][0], s1[k][rep][1], t2[k][rep][0], t2[k][rep][1], res[k].two[rep],
                       res[k].two[rep] / res[k].one[rep], 100 * oncpu[k][rep]);
            say("\n");
        }
    for (int k = 0; k < nkinds(o); k++) {
        say("  %s: %d of %d rounds clean (every thread on its CPU >= %.0f%% of its wall time)\n", cs[k].imp->name,
               nclean[k], rounds, 100 * ONCPU_CLEAN);
        threads_report(k, cs[k].imp->name, "all", rounds, pl[k], -1, &res[k]);
        for (int p = 0; p < 4; p++) {
            threads_report(k, cs[k].imp->name, place_name[p], rounds, pl[k], p, &res[k]);
            char what[32];
            snprintf(what, sizeof what, "%s,clean", place_name[p]);
            threads_report(k, cs[k].imp->name, what, rounds, pl[k], p | P_CLEAN, &res[k]);
        }
        cache_free(&cs[k]);
    }
    fflush(stdout);
    free(seqs[0]);
    free(seqs[1]);
    free(warm);
    free(bufs);
    munmap(area, span);
}

/* ---------- driver ---------- */

static int usage(FILE *f, int rc)
{
    fprintf(f, "usage: locus bench regcache [--reps N] [--ops N] [--thread-ops N] [--capacity N] [--reg-ns NS]\n"
               "                            [--only NAME] [--stats] [--no-ucx]\n"
               "  ns per get+put, registrations and evictions per operation, for locus and (when\n"
               "  locus-bench-regcache was built with UCX) ucs_rcache, same workloads, same run.\n"
               "  workloads: same hit100 hit10k below above above-rnd adjacent threads\n"
               "  --reps N       batches per contender, alternating; median reported (default 201)\n"
               "  --ops N        operations per batch (default 5000)\n"
               "  --thread-ops N threads: operations per thread per run (default 1000000; rounds = reps/5, max 101)\n"
               "  --capacity N   regions for the capacity workloads (default 1000)\n"
               "  --reg-ns NS    null backend cost per (de)registration in the capacity workloads (default 2000)\n"
               "  --stats        print the locus cache statistics after each workload (threads: every round)\n"
               "  --json         the benchmark record (docs/bench-schema.json) instead of the text\n"
               "  -q             no progress on stderr (shown only on a terminal)\n");
    return rc;
}

static int parse(int argc, char **argv, opts_t *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int64_t v;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) return usage(stdout, 0);
        if (!strcmp(a, "--stats")) { o->stats = true; continue; }
        if (!strcmp(a, "--no-ucx")) { o->ucx = false; continue; }
        if (!strcmp(a, "--json")) { o->json = true; continue; }
        if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) { progress_quiet(true); continue; }
        if (i + 1 >= argc) {
            fprintf(stderr, "locus bench regcache: unknown option '%s'\n", a);
            return usage(stderr, 2);
        }
        const char *val = argv[++i];
        if (!strcmp(a, "--only")) { o->only = val; continue; }
        long long lo = 1, hi = 1000000000;
        if (!strcmp(a, "--reps")) hi = 100001;
        else if (!strcmp(a, "--reg-ns")) lo = 0;
        else if (strcmp(a, "--ops") && strcmp(a, "--thread-ops") && strcmp(a, "--capacity")) {
            fprintf(stderr, "locus bench regcache: unknown option '%s'\n", a);
            return usage(stderr, 2);
        }
        char *end;
        errno = 0;
        v = strtoll(val, &end, 10);
        if (*end || errno || v < lo || v > hi) {
            fprintf(stderr, "locus bench regcache: %s '%s': expected an integer in [%lld, %lld]\n", a, val, lo, hi);
            return 2;
        }
        if (!strcmp(a, "--reps")) o->reps = (int)v;
        else if (!strcmp(a, "--ops")) o->ops = v;
        else if (!strcmp(a, "--thread-ops")) o->thread_ops = v;
        else if (!strcmp(a, "--capacity")) o->capacity = (uint64_t)v;
        else o->reg_ns = (uint64_t)v;
    }
    return -1;
}

static bool want(const opts_t *o, const char *name) { return !o->only || !strcmp(o->only, name); }

static int regcache_main(int argc, char **argv, bool have_ucx)
{
    opts_t o = {.reps = 201, .ops = 5000, .thread_ops = 1000000, .capacity = 1000, .reg_ns = 2000, .ucx = have_ucx};
    int rc = parse(argc, argv, &o);
    if (rc >= 0) return rc;
    static const char *names[] = {"same", "hit100", "hit10k", "below", "above", "above-rnd", "adjacent", "threads"};
    bool known = !o.only;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        known = known || !strcmp(o.only, names[i]);
    if (!known) {
        fprintf(stderr, "locus bench regcache: --only '%s': expected one of same, hit100, hit10k, below, above, "
                        "above-rnd, adjacent, threads\n", o.only);
        return 2;
    }
    uint32_t cap = (uint32_t)o.capacity;
    const workload_t ws[] = {
        {"same", 1, 4096, 8192, false, false, 0},
        {"hit100", 100, 4096, 8192, false, false, 0},
        {"hit10k", 10000, 4096, 8192, false, false, 0},
        {"below", cap / 2 ? cap / 2 : 1, 4096, 8192, true, true, 0},
        {"above", cap + cap / 2, 4096, 8192, true, true, 0},
        {"above-rnd", cap + cap / 2, 4096, 8192, false, true, 0},
        {"adjacent", 4096, 1024, 1024, false, false, 64 << 20},
    };
    if (o.json) {
        json = bench_json_begin("regcache");
        bench_json_param_num(json, "reps", o.reps);
        bench_json_param_num(json, "ops", (double)o.ops);
        bench_json_param_num(json, "thread_ops", (double)o.thread_ops);
        bench_json_param_num(json, "capacity", (double)o.capacity);
        bench_json_param_num(json, "reg_ns", (double)o.reg_ns);
        bench_json_param_str(json, "only", o.only ? o.only : "");
        bench_json_param_bool(json, "ucx", o.ucx);
        bench_json_note(json, "null backends (a busy wait of reg_ns per (de)registration in the capacity "
                              "workloads below, above, above-rnd); get + put per operation");
        if (!o.ucx)
            bench_json_note(json, "ucs_rcache not run: --no-ucx or built without UCX");
    }
    int nwork = 0;
    for (size_t i = 0; i < sizeof ws / sizeof ws[0]; i++)
        nwork += want(&o, ws[i].name);
    progress_begin(&wprog, "workloads, batches", (uint64_t)nwork * (uint64_t)o.reps, false);
    say("registration cache, null backends (capacity workloads: %u regions, %llu ns per (de)registration); "
           "%d batches of %ld ops per contender, alternating; medians\n", cap, (unsigned long long)o.reg_ns, o.reps, o.ops);
    if (o.ucx)
        say("  %-10s %12s %12s %8s %12s %12s %12s %12s\n", "workload", "locus ns/op", "ucs ns/op", "ratio",
               "locus reg/op", "ucs reg/op", "locus ev/op", "ucs ev/op");
    else
        say("  %-10s %12s %12s %12s   (ucs_rcache: not run: --no-ucx or built without UCX)\n", "workload", "locus ns/op",
               "locus reg/op", "locus ev/op");
    for (size_t i = 0; i < sizeof ws / sizeof ws[0]; i++) {
        if (!want(&o, ws[i].name)) continue;
        result_t r = run_workload(&o, &ws[i]);
        progress_end(&wprog);
        for (int k = 0; k < nkinds(&o); k++) {
            point(k, "time per op", ws[i].name, "workload", r.ns[k], "ns/op", o.reps);
            point(k, "registrations per op", ws[i].name, "workload", r.regs_per_op[k], "per op", o.reps);
            point(k, "evictions per op", ws[i].name, "workload", r.evict_per_op[k], "per op", o.reps);
            if (r.bad[k])
                bench_json_extra_num(json, "failed_gets", (double)r.bad[k]);
        }
        if (o.ucx)
            say("  %-10s %12.1f %12.1f %8.2f %12.4f %12.4f %12.4f %12.4f\n", ws[i].name, r.ns[0], r.ns[1],
                   r.ns[0] / r.ns[1], r.regs_per_op[0], r.regs_per_op[1], r.evict_per_op[0], r.evict_per_op[1]);
        else
            say("  %-10s %12.1f %12.4f %12.4f\n", ws[i].name, r.ns[0], r.regs_per_op[0], r.evict_per_op[0]);
        if (r.bad[0] || (o.ucx && r.bad[1]))
            say("    failed gets: locus %ld, ucs %ld\n", r.bad[0], r.bad[1]);
        fflush(stdout);
    }
    if (want(&o, "threads"))
        threads_workload(&o);
    if (json && bench_json_end(json, stdout))
        return 1;
    return 0;
}

#ifdef REGCACHE_WITH_UCX
#define HAVE_UCX true
#else
#define HAVE_UCX false
#endif

int main(int argc, char **argv) { return regcache_main(argc, argv, HAVE_UCX); }
