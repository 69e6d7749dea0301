/* Heap fault-in benchmark: for each size and page kind, medians of R runs of
 * GB/s for a serial one-thread touch (each page written at its first byte, and
 * at its last byte, the faster order for huge pages here), locus_heap_create,
 * the single-thread kernel mechanisms (MADV_POPULATE_WRITE, MAP_POPULATE) and
 * the memset limit (memset over the resident heap, better of N threads and 1),
 * with the ratios; "serial" in the ratios is the better of the two touches.
 * Memory is "warm" (still backed by the host) as far as it can be made so:
 * every measured allocation directly follows an untimed warm-up
 * locus_heap_create + destroy of the same size, and a comment line after each
 * row gives the /proc/vmstat counters for THP fallback, compaction and reclaim.
 *
 *   heap_bench [--sizes 1G,4G,12G] [--kinds 4k,thp,huge2m] [--runs 5] [--threads N]
 *              [--markdown] [--verbose]   (--verbose: every run's figures as a comment line)
 *
 * huge2m/huge1g: the hugetlb pool is grown by what the size needs plus 8 pages
 * of headroom, and given back afterwards (also on SIGINT/SIGTERM); a kind whose
 * pages cannot be reserved is skipped with a message. Needs root for that. */
#include <locus/locus.h>

#include "core/config.h"
#include "heap_baseline.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { M_SERIAL_FIRST, M_SERIAL, M_LOCUS, M_POP1, M_MAPPOP, M_MEMSET_N, M_MEMSET_1, M_COUNT };
static const char *mname[M_COUNT] = {"serial_first", "serial", "locus", "populate1", "map_populate", "memsetN",
                                     "memset1"};

static char pool_path[128];
static long long pool_orig = -1;

static long long read_ll(const char *path)
{
    FILE *f = fopen(path, "r");
    long long v = -1;
    if (f) {
        if (fscanf(f, "%lld", &v) != 1)
            v = -1;
        fclose(f);
    }
    return v;
}

static int write_ll(const char *path, long long v)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    int ok = fprintf(f, "%lld\n", v) > 0;
    return fclose(f) == 0 && ok ? 0 : -1;
}

static void pool_restore(void)
{
    if (pool_orig >= 0) {
        write_ll(pool_path, pool_orig);
        pool_orig = -1;
    }
}

static void on_signal(int sig)
{
    pool_restore();
    signal(sig, SIG_DFL);
    raise(sig);
}

/* Grow the pool of `page` so that `need` pages are free; 0 if done. */
static int pool_reserve(uint64_t page, uint64_t need)
{
    char dir[96];
    snprintf(dir, sizeof dir, "/sys/kernel/mm/hugepages/hugepages-%llukB", (unsigned long long)(page >> 10));
    snprintf(pool_path, sizeof pool_path, "%s/nr_hugepages", dir);
    char fp[128];
    snprintf(fp, sizeof fp, "%s/free_hugepages", dir);
    long long nr = read_ll(pool_path), fr = read_ll(fp);
    if (nr < 0 || fr < 0) {
        printf("# skip %s pages: no such hugetlb pool\n", page >> 20 >= 1024 ? "1G" : "2M");
        return -1;
    }
    pool_orig = nr;
    if (fr < (long long)need + 8 && write_ll(pool_path, nr + (long long)need + 8 - fr)) {
        printf("# skip: cannot write %s (needs root)\n", pool_path);
        pool_restore();
        return -1;
    }
    fr = read_ll(fp);
    if (fr < (long long)need) {
        printf("# skip: the kernel found only %lld free %llu KiB pages of the %llu needed\n", fr,
               (unsigned long long)(page >> 10), (unsigned long long)need);
        pool_restore();
        return -1;
    }
    return 0;
}

/* /proc/vmstat counters that tell THP fallback, compaction and reclaim apart;
 * their change over a row is printed as a comment line after it. */
static const char *vm_names[] = {"thp_fault_alloc", "thp_fault_fallback", "compact_stall", "compact_fail",
                                 "allocstall_normal", "allocstall_movable", "pgscan_direct", NULL};
enum { VM_N = 7 };

static void vm_read(long long *v)
{
    for (int i = 0; i < VM_N; i++)
        v[i] = 0;
    FILE *f = fopen("/proc/vmstat", "r");
    if (!f)
        return;
    char name[64];
    long long x;
    while (fscanf(f, "%63s %lld", name, &x) == 2)
        for (int i = 0; i < VM_N; i++)
            if (!strcmp(name, vm_names[i]))
                v[i] = x;
    fclose(f);
}

static void vm_print(const long long *a, const long long *b)
{
    printf("# vmstat over the row:");
    for (int i = 0; i < VM_N; i++)
        printf(" %s +%lld", vm_names[i], b[i] - a[i]);
    printf("\n");
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void loadavg(char *buf, size_t len)
{
    FILE *f = fopen("/proc/loadavg", "r");
    buf[0] = 0;
    if (f) {
        if (!fgets(buf, (int)len, f))
            buf[0] = 0;
        fclose(f);
    }
    buf[strcspn(buf, "\n")] = 0;
}

/* An untimed locus_heap_create + destroy of the same size and kind: makes
 * `size` bytes recently freed, i.e. still backed by the host (warm). */
static int warm_up(const locus_heap_attr_t *a, const locus_topo_t *topo)
{
    locus_heap_t *h;
    if (locus_heap_create(a, topo, &h)) {
        printf("# %s\n", locus_last_error());
        return -1;
    }
    locus_heap_destroy(h);
    return 0;
}

/* One run of every method; results in GB/s, 0 when a method failed. Every
 * timed allocation directly follows its own warm-up: this VM hands freed
 * memory back to the host 1-2 s after the free (page reporting), so one
 * warm-up for the whole run leaves the later methods of a 12 GiB run on cold
 * memory. The allocating methods run in an order rotated by `run`, so that
 * none is always first or last. */
static int one_run(const locus_topo_t *topo, locus_heap_pages_t kind, uint64_t size, int threads, int run,
                   double *r, char *obtained, size_t olen)
{
    locus_heap_attr_t a;
    locus_heap_attr_init(&a);
    a.size = size;
    a.pages = kind;
    a.threads = threads;
    a.verify = LOCUS_VERIFY_NONE;
    static const int order[] = {M_SERIAL, M_SERIAL_FIRST, M_LOCUS, M_POP1, M_MAPPOP};
    const int nm = (int)(sizeof order / sizeof *order);
    for (int i = 0; i < nm; i++) {
        int m = order[(i + run) % nm];
        /* 4 KiB pages have no subpages: first and last byte are the same touch */
        if (m == M_SERIAL_FIRST && kind == LOCUS_PAGES_4K)
            continue;
        if (warm_up(&a, topo))
            return -1;
        if (m == M_SERIAL && baseline_serial_touch(kind, size, NULL, NULL, &r[M_SERIAL]))
            r[M_SERIAL] = 0;
        if (m == M_SERIAL_FIRST && baseline_serial_touch_first(kind, size, &r[M_SERIAL_FIRST]))
            r[M_SERIAL_FIRST] = 0;
        if (m == M_POP1 && baseline_populate1(kind, size, &r[M_POP1]))
            r[M_POP1] = 0;
        if (m == M_MAPPOP && baseline_map_populate(kind, size, &r[M_MAPPOP]))
            r[M_MAPPOP] = 0;
        if (m != M_LOCUS)
            continue;
        locus_heap_t *h;
        if (locus_heap_create(&a, topo, &h)) {
            printf("# %s\n", locus_last_error());
            return -1;
        }
        locus_heap_stats_t s;
        locus_heap_stats(h, &s);
        r[M_LOCUS] = s.gbps;
        int cpus[4096], n = s.threads < 4096 ? s.threads : 4096;
        for (int c = 0; c < n; c++)
            cpus[c] = locus_topo_cpu(topo, c % locus_topo_num_cpus(topo));
        r[M_MEMSET_N] = baseline_memset(locus_heap_base(h), s.size, n, cpus);
        r[M_MEMSET_1] = baseline_memset(locus_heap_base(h), s.size, 1, cpus);
        snprintf(obtained, olen, "%s/%dt%s", locus_heap_pages_name(s.pages), s.threads,
                 s.pages == LOCUS_PAGES_THP && s.huge_bytes < s.size ? " partial THP" : "");
        locus_heap_destroy(h);
    }
    if (kind == LOCUS_PAGES_4K)
        r[M_SERIAL_FIRST] = r[M_SERIAL];
    return 0;
}

int main(int argc, char **argv)
{
    const char *sizes = "1G,4G,12G", *kinds = "4k,thp,huge2m";
    int runs = 5, threads = 0, markdown = 0, verbose = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--sizes") && i + 1 < argc)
            sizes = argv[++i];
        else if (!strcmp(argv[i], "--kinds") && i + 1 < argc)
            kinds = argv[++i];
        else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--markdown"))
            markdown = 1;
        else if (!strcmp(argv[i], "--verbose"))
            verbose = 1;
        else {
            fprintf(stderr, "usage: heap_bench [--sizes 1G,4G,12G] [--kinds 4k,thp,huge2m,huge1g] [--runs 5] "
                            "[--threads N] [--markdown] [--verbose]\n");
            return 2;
        }
    }
    if (runs < 1 || runs > 1000)
        return fprintf(stderr, "heap_bench: --runs %d: expected 1 to 1000\n", runs), 2;
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    atexit(pool_restore);
    locus_topo_t *topo;
    if (locus_topo_load(&topo))
        return fprintf(stderr, "heap_bench: %s\n", locus_last_error()), 1;
    char la[128];
    loadavg(la, sizeof la);
    printf("# heap_bench: %d runs, medians in GB/s (1e9 B/s), warm memory (a free of the same size precedes\n"
           "# every measured allocation), %d cpus, loadavg at start: %s\n", runs, locus_topo_num_cpus(topo), la);
    printf(markdown ? "| size | kind (obtained/threads) | serial, first byte | serial, last byte | locus | POPULATE_WRITE 1t "
                      "| MAP_POPULATE | memset %s | memset 1t | locus/serial | locus/best mech | locus/memset limit "
                      "| locus/memset 1t |\n"
                      "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n"
                    : "%-5s %-22s %7s %7s %7s %9s %9s %8s %8s %8s %8s %8s %8s\n",
           markdown ? "Nt" : "size", "kind", "ser1st", "serial", "locus", "populate1", "map_pop", "memsetN", "memset1",
           "l/ser", "l/mech", "l/memlim", "l/mem1");
    char sbuf[256], kbuf[256];
    snprintf(sbuf, sizeof sbuf, "%s", sizes);
    for (char *sv = strtok(sbuf, ","); sv; sv = strtok(NULL, ",")) {
        uint64_t size;
        if (locus_parse_size(sv, &size) || !size)
            return fprintf(stderr, "heap_bench: --sizes '%s': %s\n", sv, locus_last_error()), 2;
        snprintf(kbuf, sizeof kbuf, "%s", kinds);
        char *ksave;
        for (char *kv = strtok_r(kbuf, ",", &ksave); kv; kv = strtok_r(NULL, ",", &ksave)) {
            locus_heap_pages_t kind;
            if (locus_heap_parse_pages(kv, &kind))
                return fprintf(stderr, "heap_bench: --kinds: %s\n", locus_last_error()), 2;
            char *save_s = NULL;
            (void)save_s;
            uint64_t page = kind == LOCUS_PAGES_HUGE1G ? 1ull << 30 : 2ull << 20;
            if ((kind == LOCUS_PAGES_HUGE2M || kind == LOCUS_PAGES_HUGE1G) &&
                pool_reserve(page, (size + page - 1) / page))
                continue;
            long long vm0[VM_N], vm1[VM_N];
            vm_read(vm0);
            double v[M_COUNT][1000];
            char obtained[64] = "?";
            int ok = 0;
            for (int r = 0; r < runs; r++) {
                double one[M_COUNT] = {0};
                if (one_run(topo, kind, size, threads, r, one, obtained, sizeof obtained))
                    break;
                for (int m = 0; m < M_COUNT; m++)
                    v[m][r] = one[m];
                if (verbose) {
                    printf("# run %d:", r);
                    for (int m = 0; m < M_COUNT; m++)
                        printf(" %s %.2f", mname[m], one[m]);
                    printf("\n");
                }
                ok++;
            }
            pool_restore();
            vm_read(vm1);
            if (ok < runs) {
                printf("# %s %s: skipped after %d runs\n", sv, kv, ok);
                continue;
            }
            double med[M_COUNT];
            for (int m = 0; m < M_COUNT; m++)
                med[m] = median(v[m], runs);
            /* serial: the better of the two one-thread touches; best mech: the better single-thread
             * kernel mechanism; memset limit: memset over the resident heap with the better thread count */
            double ser = med[M_SERIAL] > med[M_SERIAL_FIRST] ? med[M_SERIAL] : med[M_SERIAL_FIRST];
            double best = med[M_POP1] > med[M_MAPPOP] ? med[M_POP1] : med[M_MAPPOP];
            double lim = med[M_MEMSET_N] > med[M_MEMSET_1] ? med[M_MEMSET_N] : med[M_MEMSET_1];
            if (markdown)
                printf("| %s | %s (%s) | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n",
                       sv, kv, obtained, med[M_SERIAL_FIRST], med[M_SERIAL], med[M_LOCUS], med[M_POP1], med[M_MAPPOP],
                       med[M_MEMSET_N], med[M_MEMSET_1], med[M_LOCUS] / ser, med[M_LOCUS] / best,
                       med[M_LOCUS] / lim, med[M_LOCUS] / med[M_MEMSET_1]);
            else
                printf("%-5s %-22s %7.2f %7.2f %7.2f %9.2f %9.2f %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f\n", sv, obtained,
                       med[M_SERIAL_FIRST], med[M_SERIAL], med[M_LOCUS], med[M_POP1], med[M_MAPPOP], med[M_MEMSET_N],
                       med[M_MEMSET_1], med[M_LOCUS] / ser, med[M_LOCUS] / best, med[M_LOCUS] / lim,
                       med[M_LOCUS] / med[M_MEMSET_1]);
            vm_print(vm0, vm1);
            fflush(stdout);
        }
    }
    loadavg(la, sizeof la);
    printf("# loadavg at end: %s\n", la);
    locus_topo_destroy(topo);
    return 0;
}
