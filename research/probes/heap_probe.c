/* Heap fault-in probe: the measurements behind the heap section of
 * research/LOG.md (why fault-in is slower than memset on this VM).
 * Every line is one timed experiment with the /proc/vmstat counters that
 * moved during it.
 *
 *   heap_probe [--size 4G] [--threads 2] [--sleep 10] [--only a,b,...] [--kind thp|4k] [--reps 7]
 *
 * Experiments (names for --only):
 *   ab        interleaved A/B, medians of --reps: populate and serial touch, first byte vs tail first
 *   decay     tail-first populate by --threads threads 0 to 10 s after freeing the same size
 *   warm      map, MADV_POPULATE_WRITE by 1 thread right after freeing a region of the same size
 *   cold      the same after sleeping --sleep seconds (freed memory goes back to the host)
 *   repop     POPULATE_WRITE, MADV_DONTNEED, then POPULATE_WRITE again (timed: the second)
 *   pop2      POPULATE_WRITE by --threads pinned threads, contiguous halves (warm)
 *   memset    memset over the resident region, 1 and --threads threads
 *   clear4k   user-space emulation of the kernel's page clearing over resident memory:
 *             `rep stosb` of 4 KiB at a time (clear_page_erms), 1 and N threads;
 *             also per 2 MiB and 4 KiB with non-temporal stores
 *   touch     serial write touch at the page stride (2 MiB for thp, 4 KiB for 4k)
 *   hugetlb   2 MiB hugetlb: POPULATE_WRITE 1 and N threads (pool grown and restored; root)
 *   huge1g    1 GiB hugetlb: the same (pool grown and restored; root)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
#ifndef MAP_HUGE_SHIFT
#define MAP_HUGE_SHIFT 26
#endif

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- /proc/vmstat deltas ---- */
enum { MAXV = 512 };
typedef struct {
    int n;
    char name[MAXV][48];
    long long v[MAXV];
} vmstat_t;

static void vm_read(vmstat_t *s)
{
    FILE *f = fopen("/proc/vmstat", "r");
    s->n = 0;
    if (!f)
        return;
    while (s->n < MAXV && fscanf(f, "%47s %lld", s->name[s->n], &s->v[s->n]) == 2)
        s->n++;
    fclose(f);
}

static const char *watch[] = {"thp_fault_alloc", "thp_fault_fallback", "thp_fault_fallback_charge",
                              "compact_stall", "compact_fail", "compact_success", "compact_migrate_scanned",
                              "compact_free_scanned", "allocstall_normal", "allocstall_movable",
                              "pgscan_direct", "pgsteal_direct", "thp_split_pmd", "thp_zero_page_alloc",
                              "htlb_buddy_alloc_success", "pgfault", "pgalloc_normal", "pgfree", NULL};

static void vm_print(const vmstat_t *a, const vmstat_t *b)
{
    printf("   vmstat:");
    for (int w = 0; watch[w]; w++)
        for (int i = 0; i < a->n && i < b->n; i++)
            if (!strcmp(a->name[i], watch[w]) && b->v[i] != a->v[i])
                printf(" %s+%lld", watch[w], b->v[i] - a->v[i]);
    printf("\n");
}

/* ---- regions ---- */
static int kind_thp = 1;
static uint64_t kpage(void) { return kind_thp ? 2ull << 20 : 4096; }

static char *map_anon(uint64_t size)
{
    uint64_t over = size + (2ull << 20);
    char *p = mmap(NULL, over, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    char *a = (char *)(((uintptr_t)p + (2u << 20) - 1) & ~(uintptr_t)((2u << 20) - 1));
    if (a > p)
        munmap(p, (size_t)(a - p));
    if (p + over > a + size)
        munmap(a + size, (size_t)(p + over - (a + size)));
    madvise(a, size, kind_thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
    return a;
}

static char *map_hugetlb(uint64_t size, int shift)
{
    char *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | (shift << MAP_HUGE_SHIFT), -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* ---- threads ---- */
typedef void (*work_fn)(char *p, uint64_t len);
typedef struct {
    work_fn fn;
    char *p;
    uint64_t len;
    int cpu;
    pthread_barrier_t *bar;
} targ_t;

static void *trun(void *v)
{
    targ_t *a = v;
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(a->cpu, &s);
    pthread_setaffinity_np(pthread_self(), sizeof s, &s);
    pthread_barrier_wait(a->bar);
    a->fn(a->p, a->len);
    return NULL;
}

static int ncpu;

/* fn over [p, p+len) split in nt contiguous parts (page aligned), threads pinned to cpu t % ncpu. */
static double par(work_fn fn, char *p, uint64_t len, int nt)
{
    pthread_t tid[64];
    targ_t a[64];
    pthread_barrier_t bar;
    pthread_barrier_init(&bar, NULL, (unsigned)nt + 1);
    uint64_t pg = 2ull << 20, share = len / (uint64_t)nt / pg * pg;
    for (int t = 0; t < nt; t++) {
        a[t] = (targ_t){fn, p + share * (uint64_t)t, t == nt - 1 ? len - share * (uint64_t)t : share, t % ncpu, &bar};
        pthread_create(&tid[t], NULL, trun, &a[t]);
    }
    pthread_barrier_wait(&bar);
    double t0 = now();
    for (int t = 0; t < nt; t++)
        pthread_join(tid[t], NULL);
    double t = now() - t0;
    pthread_barrier_destroy(&bar);
    return t;
}

static void w_populate(char *p, uint64_t len)
{
    if (madvise(p, len, MADV_POPULATE_WRITE))
        perror("MADV_POPULATE_WRITE");
}
/* MADV_POPULATE_WRITE of the last 4 KiB of every 2 MiB: the fault's address is
 * in the last subpage, so the kernel clears the huge page first to last; then
 * one pass over the whole range for whatever was not a huge page */
static void w_populate_tail(char *p, uint64_t len)
{
    const uint64_t hp = 2ull << 20;
    for (uint64_t o = 0; o + hp <= len; o += hp)
        if (madvise(p + o + hp - 4096, 4096, MADV_POPULATE_WRITE))
            perror("MADV_POPULATE_WRITE tail");
    if (madvise(p, len, MADV_POPULATE_WRITE))
        perror("MADV_POPULATE_WRITE");
}
static void w_touch_tail(char *p, uint64_t len)
{
    for (uint64_t o = kpage() - 1; o < len; o += kpage())
        ((volatile char *)p)[o] = 0;
}
static void w_memset(char *p, uint64_t len) { memset(p, 1, len); }
static void w_stosb(char *p, uint64_t len, uint64_t piece)
{
    for (uint64_t o = 0; o < len; o += piece) {
        void *d = p + o;
        uint64_t c = piece;
        __asm__ volatile("rep stosb" : "+D"(d), "+c"(c) : "a"(0) : "memory");
    }
}
static void w_stosb4k(char *p, uint64_t len) { w_stosb(p, len, 4096); }
static void w_stosb2m(char *p, uint64_t len) { w_stosb(p, len, 2ull << 20); }
/* what folio_zero_user does for a 2 MiB folio faulted at its first byte:
 * subpages cleared from the last to the first (process_huge_page) */
static void w_stosb4k_rev(char *p, uint64_t len)
{
    for (uint64_t h = 0; h < len; h += 2ull << 20)
        for (uint64_t o = (2ull << 20) - 4096 + 4096; o > 0; o -= 4096)
            w_stosb(p + h + o - 4096, 4096, 4096);
}
static void w_nt4k(char *p, uint64_t len)
{
    __m256i z = _mm256_setzero_si256();
    for (uint64_t o = 0; o < len; o += 4096) {
        for (uint64_t i = 0; i < 4096; i += 128) {
            _mm256_stream_si256((__m256i *)(p + o + i), z);
            _mm256_stream_si256((__m256i *)(p + o + i + 32), z);
            _mm256_stream_si256((__m256i *)(p + o + i + 64), z);
            _mm256_stream_si256((__m256i *)(p + o + i + 96), z);
        }
    }
    _mm_sfence();
}
static void w_touch(char *p, uint64_t len)
{
    for (uint64_t o = 0; o < len; o += kpage())
        ((volatile char *)p)[o] = 0;
}

static uint64_t size = 4ull << 30;
static int nthreads = 2, sleep_s = 10, reps = 7;

static void report(const char *what, double t, uint64_t len, const vmstat_t *a)
{
    vmstat_t b;
    vm_read(&b);
    printf("%-44s %7.3f s %7.2f GB/s\n", what, t, (double)len / t / 1e9);
    if (a)
        vm_print(a, &b);
    fflush(stdout);
}

/* map + populate by nt threads, timed from before the mmap */
static double map_pop(int nt, char **out)
{
    double t0 = now();
    char *p = map_anon(size);
    if (!p)
        return -1;
    if (nt == 1)
        w_populate(p, size);
    else
        par(w_populate, p, size, nt);
    *out = p;
    return now() - t0;
}

static void prime(void)
{
    /* make `size` bytes recently freed (warm) */
    char *p;
    map_pop(nthreads, &p);
    munmap(p, size);
}

static char *pool_path_g;
static long long pool_orig_g = -1;
static void pool_restore(void)
{
    if (pool_orig_g >= 0 && pool_path_g) {
        FILE *f = fopen(pool_path_g, "w");
        if (f) {
            fprintf(f, "%lld\n", pool_orig_g);
            fclose(f);
        }
        pool_orig_g = -1;
    }
}
static void on_sig(int s)
{
    pool_restore();
    signal(s, SIG_DFL);
    raise(s);
}

static void hugetlb_run(int shift)
{
    static char path[128];
    uint64_t page = 1ull << shift, need = (size + page - 1) / page;
    snprintf(path, sizeof path, "/sys/kernel/mm/hugepages/hugepages-%llukB/nr_hugepages",
             (unsigned long long)(page >> 10));
    FILE *f = fopen(path, "r");
    long long nr = -1;
    if (!f || fscanf(f, "%lld", &nr) != 1) {
        printf("# no pool %s\n", path);
        if (f)
            fclose(f);
        return;
    }
    fclose(f);
    pool_path_g = path;
    pool_orig_g = nr;
    double t0 = now();
    f = fopen(path, "w");
    if (!f) {
        printf("# cannot write %s\n", path);
        pool_orig_g = -1;
        return;
    }
    fprintf(f, "%lld\n", nr + (long long)need);
    fclose(f);
    printf("# pool %s: %lld -> %lld pages in %.2f s\n", path, nr, nr + (long long)need, now() - t0);
    char name[64];
    for (int rep = 0; rep < (shift == 21 ? 3 : 2); rep++) {
        for (int nt = 1; nt <= nthreads; nt += nthreads - 1 ? nthreads - 1 : 1) {
            vmstat_t a;
            vm_read(&a);
            t0 = now();
            char *p = map_hugetlb(size, shift);
            if (!p) {
                printf("# hugetlb mmap failed: %s\n", strerror(errno));
                pool_restore();
                return;
            }
            work_fn fn = rep == 2 ? w_populate_tail : w_populate;
            if (nt == 1)
                fn(p, size);
            else
                par(fn, p, size, nt);
            double t = now() - t0;
            snprintf(name, sizeof name, "hugetlb %s populate%s %dt (pass %d)", shift == 30 ? "1G" : "2M",
                     rep == 2 ? " tail-first" : "", nt, rep);
            report(name, t, size, &a);
            if (nt == 1 && rep == 1) {
                t = par(w_memset, p, size, 1);
                report("   memset 1t over it", t, size, NULL);
                t = par(w_stosb4k, p, size, 1);
                report("   rep stosb 4 KiB pieces 1t over it", t, size, NULL);
            }
            munmap(p, size);
            if (nt == nthreads)
                break;
        }
    }
    pool_restore();
}

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A/B, interleaved: first-byte populate vs tail-first populate (1 thread), and
 * first-byte vs last-byte serial touch; medians of reps. */
static void ab(int reps)
{
    enum { K = 4 };
    static const char *nm[K] = {"populate 1t (fault at each page's first byte)", "populate 1t tail-first",
                                "serial touch, first byte of each page", "serial touch, last byte of each page"};
    double v[K][64];
    if (reps > 64)
        reps = 64;
    for (int r = 0; r < reps; r++)
        for (int k = 0; k < K; k++) {
            prime();
            double t0 = now();
            char *p = map_anon(size);
            if (k == 0)
                w_populate(p, size);
            else if (k == 1)
                w_populate_tail(p, size);
            else if (k == 2)
                w_touch(p, size);
            else
                w_touch_tail(p, size);
            v[k][r] = (double)size / (now() - t0) / 1e9;
            munmap(p, size);
        }
    for (int k = 0; k < K; k++) {
        qsort(v[k], (size_t)reps, sizeof(double), cmpd);
        printf("ab: %-46s median %6.2f GB/s  (min %.2f max %.2f, %d reps)\n", nm[k], v[k][reps / 2], v[k][0],
               v[k][reps - 1], reps);
    }
    fflush(stdout);
}

/* How fast freed memory goes cold: prime (populate + free), wait d seconds,
 * then time a tail-first populate by all threads (the heap's method). */
static void decay(void)
{
    static const double waits[] = {0, 0.5, 1, 1.5, 2, 2.5, 3, 4, 6, 10};
    for (unsigned i = 0; i < sizeof waits / sizeof *waits; i++) {
        prime();
        struct timespec ts = {(time_t)waits[i], (long)((waits[i] - (double)(time_t)waits[i]) * 1e9)};
        nanosleep(&ts, NULL);
        double t0 = now();
        char *p = map_anon(size);
        par(w_populate_tail, p, size, nthreads);
        double t = now() - t0;
        printf("decay: %4.1f s after the free: tail-first populate %dt %7.3f s %7.2f GB/s\n", waits[i], nthreads, t,
               (double)size / t / 1e9);
        fflush(stdout);
        munmap(p, size);
    }
}

static int want(const char *only, const char *name)
{
    if (!only)
        return 1;
    size_t n = strlen(name);
    for (const char *p = only; (p = strstr(p, name)); p += n)
        if ((p == only || p[-1] == ',') && (p[n] == ',' || p[n] == 0))
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--size") && i + 1 < argc) {
            char *e;
            double v = strtod(argv[++i], &e);
            size = (uint64_t)(v * (double)(*e == 'G' ? 1ull << 30 : *e == 'M' ? 1ull << 20 : 1));
        } else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            nthreads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--sleep") && i + 1 < argc)
            sleep_s = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
        else if (!strcmp(argv[i], "--kind") && i + 1 < argc)
            kind_thp = strcmp(argv[++i], "4k") != 0;
        else {
            fprintf(stderr, "usage: heap_probe [--size 4G] [--threads 2] [--sleep 10] [--only a,b] [--kind thp|4k]\n");
            return 2;
        }
    }
    if (nthreads < 1 || nthreads > 64)
        nthreads = 2;
    ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
    signal(SIGINT, on_sig);
    signal(SIGTERM, on_sig);
    atexit(pool_restore);
    char la[128] = "";
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (!fgets(la, sizeof la, f))
            la[0] = 0;
        fclose(f);
    }
    printf("# heap_probe: size %.2f GiB, kind %s, %d threads, %d cpus, loadavg %s", (double)size / (1 << 30),
           kind_thp ? "thp" : "4k", nthreads, ncpu, la);
    vmstat_t a;
    char *p;
    double t;
    if (want(only, "decay"))
        decay();
    if (want(only, "ab"))
        ab(reps);
    if (want(only, "warm")) {
        prime();
        vm_read(&a);
        t = map_pop(1, &p);
        report("warm: populate 1t after a free", t, size, &a);
        munmap(p, size);
    }
    if (want(only, "cold")) {
        prime();
        printf("# sleeping %d s\n", sleep_s);
        fflush(stdout);
        sleep((unsigned)sleep_s);
        vm_read(&a);
        t = map_pop(1, &p);
        report("cold: populate 1t after a free + sleep", t, size, &a);
        munmap(p, size);
    }
    if (want(only, "repop")) {
        map_pop(1, &p);
        madvise(p, size, MADV_DONTNEED);
        vm_read(&a);
        double t0 = now();
        w_populate(p, size);
        report("repop: populate 1t after MADV_DONTNEED", now() - t0, size, &a);
        munmap(p, size);
    }
    if (want(only, "touch")) {
        prime();
        vm_read(&a);
        double t0 = now();
        p = map_anon(size);
        w_touch(p, size);
        report("touch: serial write touch at page stride", now() - t0, size, &a);
        munmap(p, size);
    }
    if (want(only, "tail")) {
        for (int nt = 1; nt <= nthreads; nt += nthreads - 1 ? nthreads - 1 : 1) {
            prime();
            vm_read(&a);
            double t0 = now();
            p = map_anon(size);
            if (nt == 1)
                w_populate_tail(p, size);
            else
                par(w_populate_tail, p, size, nt);
            char name[64];
            snprintf(name, sizeof name, "tail: populate last 4 KiB of each 2 MiB %dt", nt);
            report(name, now() - t0, size, &a);
            munmap(p, size);
            if (nt == nthreads)
                break;
        }
        prime();
        vm_read(&a);
        double t0 = now();
        p = map_anon(size);
        w_touch_tail(p, size);
        report("tail: serial write touch, last byte of each page", now() - t0, size, &a);
        munmap(p, size);
    }
    if (want(only, "pop2")) {
        prime();
        vm_read(&a);
        t = map_pop(nthreads, &p);
        char name[64];
        snprintf(name, sizeof name, "pop2: populate %dt contiguous parts", nthreads);
        report(name, t, size, &a);
        munmap(p, size);
    }
    if (want(only, "memset") || want(only, "clear4k")) {
        map_pop(nthreads, &p);
        char name[64];
        for (int nt = 1; nt <= nthreads; nt += nthreads - 1 ? nthreads - 1 : 1) {
            if (want(only, "memset")) {
                snprintf(name, sizeof name, "memset %dt over resident", nt);
                report(name, par(w_memset, p, size, nt), size, NULL);
            }
            if (want(only, "clear4k")) {
                snprintf(name, sizeof name, "rep stosb 4 KiB pieces %dt (clear_page_erms)", nt);
                report(name, par(w_stosb4k, p, size, nt), size, NULL);
                snprintf(name, sizeof name, "rep stosb 4 KiB pieces, last to first %dt", nt);
                report(name, par(w_stosb4k_rev, p, size, nt), size, NULL);
                snprintf(name, sizeof name, "rep stosb 2 MiB pieces %dt", nt);
                report(name, par(w_stosb2m, p, size, nt), size, NULL);
                snprintf(name, sizeof name, "NT stores 4 KiB pieces %dt", nt);
                report(name, par(w_nt4k, p, size, nt), size, NULL);
            }
            if (nt == nthreads)
                break;
        }
        munmap(p, size);
    }
    if (want(only, "hugetlb"))
        hugetlb_run(21);
    if (want(only, "huge1g"))
        hugetlb_run(30);
    f = fopen("/proc/loadavg", "r");
    if (f) {
        if (!fgets(la, sizeof la, f))
            la[0] = 0;
        fclose(f);
    }
    printf("# loadavg at end %s", la);
    return 0;
}
