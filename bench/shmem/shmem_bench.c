/* OpenSHMEM micro-benchmarks (OSU style), one source built against any
 * OpenSHMEM (locus-oshcc or Open MPI's oshcc), printing one line per
 * measurement:
 *   RESULT impl=<vendor> pes=N test=<t> size=<bytes> value=<v> unit=<us|MB/s>
 * (with --typical, latency lines end in typ=<us>)
 * Tests (--tests, comma list; default all):
 *   put_lat   ping-pong between PE 0 and PE 1, one way (half the round
 *             trip): putmem of the data, fence, an 8-byte flag (p); the peer
 *             waits on the flag, answers the same way
 *   p_lat     ping-pong of one shmem_long_p (8 B) each way, the peer waiting
 *             on that word itself: one 8-byte write per direction, what
 *             ib_write_lat -s 8 measures (one way = half the round trip)
 *   put_nofence_lat  (only when named: a diagnostic) put_lat without the
 *             fence: data and flag ordered only by the transport (one RC
 *             queue pair per peer through locus rma); not a correct OpenSHMEM
 *             program in general, it says what put_lat's fence costs
 *   put_call  time of one blocking shmem_putmem (source reusable), PE 0 -> 1
 *   get_lat   one blocking shmem_getmem, PE 0 <- PE 1
 *   put_bw    windows of 64 shmem_putmem_nbi then shmem_quiet, PE 0 -> 1
 *   fadd_lat, cswap_lat  shmem_long_atomic_fetch_add / compare_swap to PE 1
 *   barrier   shmem_barrier_all, every PE
 *   bcast, fcollect, alltoall, sum   active-set (1.4 interface, every
 *             implementation has it) broadcast64 / fcollect64 / alltoall64 /
 *             long_sum_to_all over all PEs, per-PE size
 * Each value is the median of --reps (5) runs of about --time (0.2) s; the
 * iteration count is set by PE 0 from a short run and broadcast. Heap
 * buffers only. --sizes 8,4K,64K: those sizes instead of 8, 16, ... --max.
 * --typical: the latency tests (put_lat, p_lat, get_lat, fadd_lat,
 * cswap_lat) make one more run timing each iteration on PE 0 and add
 * typ=<median of those, us> to the line (perftest's "typical"; the value
 * is a median of means, which a long tail, e.g. through Soft-RoCE, moves). Other PEs than 0 and 1 wait in a barrier during the
 * point-to-point tests. */
#include <shmem.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAXSZ (4u << 20)
#define WINDOW 64

static int me, npes;
static char *sbuf, *rbuf, *big;
static long *flag, *word;
static long pSync[SHMEM_REDUCE_SYNC_SIZE > SHMEM_COLLECT_SYNC_SIZE ? SHMEM_REDUCE_SYNC_SIZE : SHMEM_COLLECT_SYNC_SIZE];
static long pSyncA[SHMEM_ALLTOALL_SYNC_SIZE], pSyncB[SHMEM_BCAST_SYNC_SIZE];
static long pWrk[MAXSZ / 16 + SHMEM_REDUCE_MIN_WRKDATA_SIZE];
static long iters_shared;
static double tsum;
static long seq;
static int reps = 5;
static double target = 0.2;
static double *each; /* --typical: PE 0's time of each iteration, or NULL */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef double (*run_fn)(size_t size, long iters); /* returns seconds on PE 0 */

/* PE 0 sizes the iteration count so one run takes about `target` s. */
static long size_iters(run_fn fn, size_t size)
{
    long it = 1;
    for (;;) {
        double t = fn(size, it);
        if (me == 0)
            iters_shared = t > target / 4 || it >= (1L << 24) ? it : it * 4;
        shmem_barrier_all();
        long next = shmem_long_g(&iters_shared, 0);
        shmem_barrier_all();
        if (next == it)
            return it > 1 ? (long)(it * (target / (t > 1e-9 ? t : 1e-9)) + 1) : 1;
        it = next;
    }
}

/* Median time per iteration (PE 0's), shared with every PE; with typ, one
 * more run timing each iteration, *typ = their median (PE 0's). */
static double measure(run_fn fn, size_t size, double *typ)
{
    long it = size_iters(fn, size);
    if (me == 0)
        iters_shared = it;
    shmem_barrier_all();
    it = shmem_long_g(&iters_shared, 0);
    double *t = malloc(sizeof(double) * (size_t)reps);
    for (int r = 0; r < reps; r++)
        t[r] = fn(size, it) / (double)it;
    qsort(t, (size_t)reps, sizeof *t, cmpd);
    double m = t[reps / 2];
    free(t);
    if (me == 0)
        tsum = m;
    shmem_barrier_all();
    m = shmem_double_g(&tsum, 0);
    shmem_barrier_all();
    if (typ) {
        double *e = calloc((size_t)it, sizeof *e);
        if (!e) {
            fprintf(stderr, "shmem_bench: no memory for %ld iteration times\n", it);
            shmem_global_exit(1);
        }
        each = e; /* every PE runs the same code; PE 0's loops fill it */
        (void)fn(size, it);
        each = NULL;
        qsort(e, (size_t)it, sizeof *e, cmpd);
        *typ = it % 2 ? e[it / 2] : (e[it / 2 - 1] + e[it / 2]) / 2;
        free(e);
    }
    return m;
}

/* "8,4K,64K" (K, M: binary) into sizes[]; their count, or -1. */
static int parse_sizes(const char *s, size_t *sizes, int max)
{
    int n = 0;
    while (*s) {
        char *end;
        unsigned long long v = strtoull(s, &end, 10);
        if (end == s || n == max)
            return -1;
        if (*end == 'K' || *end == 'k')
            v <<= 10, end++;
        else if (*end == 'M' || *end == 'm')
            v <<= 20, end++;
        if (!v || v > MAXSZ || (*end && *end != ','))
            return -1;
        sizes[n++] = (size_t)v;
        s = *end ? end + 1 : end;
    }
    return n;
}

/* ---- point to point: PE 0 and PE 1 ---- */

static int nofence; /* put_lat: leave the fence out (put_nofence_lat) */

static double put_lat(size_t size, long iters)
{
    shmem_barrier_all();
    double t0 = now_s();
    if (me < 2 && npes >= 2) {
        int peer = 1 - me;
        for (long i = 0; i < iters; i++) {
            long v = ++seq;
            if (me == 0) {
                double ti = each ? now_s() : 0;
                shmem_putmem(rbuf, sbuf, size, peer);
                if (!nofence)
                    shmem_fence();
                shmem_long_p(flag, v, peer);
                shmem_long_wait_until(flag, SHMEM_CMP_EQ, v);
                if (each)
                    each[i] = (now_s() - ti) / 2;
            } else {
                shmem_long_wait_until(flag, SHMEM_CMP_EQ, v);
                shmem_putmem(rbuf, sbuf, size, peer);
                if (!nofence)
                    shmem_fence();
                shmem_long_p(flag, v, peer);
            }
        }
    }
    double t = (now_s() - t0) / 2; /* one way */
    shmem_barrier_all();
    return t;
}

static double put_nofence_lat(size_t size, long iters)
{
    nofence = 1;
    double t = put_lat(size, iters);
    nofence = 0;
    return t;
}

static double p_lat(size_t size, long iters)
{
    (void)size;
    shmem_barrier_all();
    double t0 = now_s();
    if (me < 2 && npes >= 2) {
        int peer = 1 - me;
        for (long i = 0; i < iters; i++) {
            long v = ++seq;
            if (me == 0) {
                double ti = each ? now_s() : 0;
                shmem_long_p(flag, v, peer);
                shmem_long_wait_until(flag, SHMEM_CMP_EQ, v);
                if (each)
                    each[i] = (now_s() - ti) / 2;
            } else {
                shmem_long_wait_until(flag, SHMEM_CMP_EQ, v);
                shmem_long_p(flag, v, peer);
            }
        }
    }
    double t = (now_s() - t0) / 2; /* one way */
    shmem_barrier_all();
    return t;
}

static double put_call(size_t size, long iters)
{
    shmem_barrier_all();
    double t0 = now_s();
    if (me == 0)
        for (long i = 0; i < iters; i++)
            shmem_putmem(rbuf, sbuf, size, 1);
    double t = now_s() - t0;
    shmem_quiet();
    shmem_barrier_all();
    return t;
}

static double get_lat(size_t size, long iters)
{
    shmem_barrier_all();
    double t0 = now_s();
    if (me == 0)
        for (long i = 0; i < iters; i++) {
            double ti = each ? now_s() : 0;
            shmem_getmem(rbuf, sbuf, size, 1);
            if (each)
                each[i] = now_s() - ti;
        }
    double t = now_s() - t0;
    shmem_barrier_all();
    return t;
}

static double put_bw(size_t size, long iters)
{
    shmem_barrier_all();
    double t0 = now_s();
    if (me == 0)
        for (long i = 0; i < iters; i++) {
            for (int w = 0; w < WINDOW; w++)
                shmem_putmem_nbi(big + (size_t)w * size % (64u << 20 > (size_t)WINDOW * size ? (size_t)WINDOW * size : 64u << 20), sbuf, size, 1);
            shmem_quiet();
        }
    double t = now_s() - t0;
    shmem_barrier_all();
    return t;
}

static double fadd_lat(size_t size, long iters)
{
    (void)size;
    shmem_barrier_all();
    double t0 = now_s();
    if (me == 0)
        for (long i = 0; i < iters; i++) {
            double ti = each ? now_s() : 0;
            (void)shmem_long_atomic_fetch_add(word, 1, 1);
            if (each)
                each[i] = now_s() - ti;
        }
    double t = now_s() - t0;
    shmem_barrier_all();
    return t;
}

static double cswap_lat(size_t size, long iters)
{
    (void)size;
    shmem_barrier_all();
    double t0 = now_s();
    if (me == 0)
        for (long i = 0; i < iters; i++) {
            double ti = each ? now_s() : 0;
            (void)shmem_long_atomic_compare_swap(word, i, i + 1, 1);
            if (each)
                each[i] = now_s() - ti;
        }
    double t = now_s() - t0;
    shmem_barrier_all();
    return t;
}

/* ---- collectives: every PE ---- */

static double barrier(size_t size, long iters)
{
    (void)size;
    shmem_barrier_all();
    double t0 = now_s();
    for (long i = 0; i < iters; i++)
        shmem_barrier_all();
    return now_s() - t0;
}

static double bcast(size_t size, long iters)
{
    shmem_barrier_all();
    double t0 = now_s();
    for (long i = 0; i < iters; i++) {
        shmem_broadcast64(rbuf, sbuf, size / 8, 0, 0, 0, npes, pSyncB);
        shmem_barrier_all(); /* pSync reuse and dest readiness, as programs must */
    }
    return now_s() - t0;
}

static double fcollect(size_t size, long iters)
{
    shmem_barrier_all();
    double t0 = now_s();
    for (long i = 0; i < iters; i++) {
        shmem_fcollect64(big, sbuf, size / 8, 0, 0, npes, pSync);
        shmem_barrier_all();
    }
    return now_s() - t0;
}

static double alltoall(size_t size, long iters)
{
    shmem_barrier_all();
    double t0 = now_s();
    for (long i = 0; i < iters; i++) {
        shmem_alltoall64(big, rbuf, size / 8, 0, 0, npes, pSyncA);
        shmem_barrier_all();
    }
    return now_s() - t0;
}

static double sum(size_t size, long iters)
{
    shmem_barrier_all();
    double t0 = now_s();
    for (long i = 0; i < iters; i++) {
        shmem_long_sum_to_all((long *)rbuf, (long *)sbuf, (int)(size / 8), 0, 0, npes, pWrk, pSync);
        shmem_barrier_all();
    }
    return now_s() - t0;
}

static int want(const char *list, const char *t, int diag)
{
    if (!list)
        return !diag;
    size_t n = strlen(t);
    for (const char *p = list; (p = strstr(p, t)); p += n)
        if ((p == list || p[-1] == ',') && (p[n] == ',' || !p[n]))
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    const char *tests = NULL;
    size_t maxsz = MAXSZ, sizes[32];
    int nsizes = 0, typical = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--tests") && i + 1 < argc)
            tests = argv[++i];
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--time") && i + 1 < argc)
            target = atof(argv[++i]);
        else if (!strcmp(argv[i], "--max") && i + 1 < argc)
            maxsz = strtoul(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
            if ((nsizes = parse_sizes(argv[++i], sizes, 32)) <= 0) {
                fprintf(stderr, "shmem_bench: --sizes '%s': expected a comma list of sizes 1..4M (K, M suffixes)\n",
                        argv[i]);
                return 2;
            }
        } else if (!strcmp(argv[i], "--typical"))
            typical = 1;
    }
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    for (size_t i = 0; i < sizeof pSync / sizeof pSync[0]; i++)
        pSync[i] = SHMEM_SYNC_VALUE;
    for (size_t i = 0; i < sizeof pSyncA / sizeof pSyncA[0]; i++)
        pSyncA[i] = SHMEM_SYNC_VALUE;
    for (size_t i = 0; i < sizeof pSyncB / sizeof pSyncB[0]; i++)
        pSyncB[i] = SHMEM_SYNC_VALUE;
    sbuf = shmem_malloc(MAXSZ);
    rbuf = shmem_malloc(MAXSZ);
    big = shmem_malloc((size_t)npes * MAXSZ > (64u << 20) ? (size_t)npes * MAXSZ : (64u << 20));
    flag = shmem_calloc(1, sizeof(long));
    word = shmem_calloc(1, sizeof(long));
    memset(sbuf, 1, MAXSZ);
    memset(rbuf, 2, MAXSZ);
    char name[SHMEM_MAX_NAME_LEN];
    shmem_info_get_name(name);
    const char *impl = strstr(name, "locus") ? "locus" : strstr(name, "open-mpi") ? "openmpi" : "other";
    shmem_barrier_all();

    /* lat: the loop can time each iteration (--typical); diag: run only when named */
    struct { const char *name; run_fn fn; int p2p; int sized; const char *unit; int lat, diag; } t[] = {
        {"put_lat", put_lat, 1, 1, "us", 1, 0},      {"put_nofence_lat", put_nofence_lat, 1, 1, "us", 1, 1},
        {"p_lat", p_lat, 1, 0, "us", 1, 0},          {"put_call", put_call, 1, 1, "us", 0, 0},
        {"get_lat", get_lat, 1, 1, "us", 1, 0},      {"put_bw", put_bw, 1, 1, "MB/s", 0, 0},
        {"fadd_lat", fadd_lat, 1, 0, "us", 1, 0},    {"cswap_lat", cswap_lat, 1, 0, "us", 1, 0},
        {"barrier", barrier, 0, 0, "us", 0, 0},      {"bcast", bcast, 0, 2, "us", 0, 0},
        {"fcollect", fcollect, 0, 2, "us", 0, 0},    {"alltoall", alltoall, 0, 2, "us", 0, 0},
        {"sum", sum, 0, 2, "us", 0, 0},
    };
    for (size_t k = 0; k < sizeof t / sizeof t[0]; k++) {
        if (!want(tests, t[k].name, t[k].diag) || (t[k].p2p && npes < 2))
            continue;
        size_t list[32];
        int n = 0;
        if (nsizes && t[k].sized == 1)
            for (n = 0; n < nsizes; n++)
                list[n] = sizes[n];
        else
            for (size_t size = 8; size <= maxsz && n < 32; size *= t[k].sized == 1 ? 2 : 32) {
                if (t[k].sized == 2 && size > (1u << 20))
                    break;
                list[n++] = size;
                if (!t[k].sized)
                    break;
            }
        for (int j = 0; j < n; j++) {
            size_t size = list[j];
            double typ = 0;
            double s = measure(t[k].fn, size, typical && t[k].lat ? &typ : NULL);
            double v = !strcmp(t[k].unit, "MB/s") ? (double)size * WINDOW / s / 1e6 : s * 1e6;
            if (me == 0) {
                char extra[48] = "";
                if (typical && t[k].lat)
                    snprintf(extra, sizeof extra, " typ=%.3f", typ * 1e6);
                printf("RESULT impl=%s pes=%d test=%s size=%zu value=%.3f unit=%s%s\n", impl, npes, t[k].name,
                       t[k].sized ? size : 8, v, t[k].unit, extra);
                fflush(stdout);
            }
        }
    }
    shmem_barrier_all();
    shmem_finalize();
    return 0;
}
