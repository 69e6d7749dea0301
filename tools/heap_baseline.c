/* Baselines for the heap comparison: see heap_baseline.h. */
#include "heap_baseline.h"

#include "core/clock.h"
#include "core/error.h"

#include <errno.h>
#include <stdbool.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#ifndef MAP_HUGE_SHIFT
#define MAP_HUGE_SHIFT 26
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

static uint64_t kind_page(locus_heap_pages_t k)
{
    return k == LOCUS_PAGES_HUGE1G ? 1ull << 30 : k == LOCUS_PAGES_4K ? 4096 : 2ull << 20;
}

/* A fresh region: aligned to the kind's page, advised for it. *len = mapped length. */
static locus_status_t map_region(locus_heap_pages_t k, uint64_t size, int extra_flags, char **out,
                                 uint64_t *len)
{
    uint64_t page = kind_page(k);
    size = (size + page - 1) / page * page;
    int flags = MAP_PRIVATE | MAP_ANONYMOUS | extra_flags;
    char *p;
    if (k == LOCUS_PAGES_HUGE2M || k == LOCUS_PAGES_HUGE1G) {
        flags |= MAP_HUGETLB | (k == LOCUS_PAGES_HUGE1G ? 30 : 21) << MAP_HUGE_SHIFT;
        p = mmap(NULL, size, PROT_READ | PROT_WRITE, flags, -1, 0);
        if (p == MAP_FAILED)
            return lc_err_errno(LOCUS_ERR_NO_MEMORY, errno, "mmap %llu bytes of %s",
                                   (unsigned long long)size, locus_heap_pages_name(k));
        *out = p;
        *len = size;
        return LOCUS_OK;
    }
    /* over-map by one THP so the region can start 2 MiB-aligned */
    uint64_t over = size + (2ull << 20);
    p = mmap(NULL, over, PROT_READ | PROT_WRITE, flags | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return lc_err_errno(LOCUS_ERR_NO_MEMORY, errno, "mmap %llu bytes", (unsigned long long)over);
    char *a = (char *)(((uintptr_t)p + (2u << 20) - 1) & ~(uintptr_t)((2u << 20) - 1));
    if (a > p)
        munmap(p, (size_t)(a - p));
    if (p + over > a + size)
        munmap(a + size, (size_t)(p + over - (a + size)));
    madvise(a, size, k == LOCUS_PAGES_4K ? MADV_NOHUGEPAGE : MADV_HUGEPAGE);
    *out = a;
    *len = size;
    return LOCUS_OK;
}

/* True if every 4 KiB page of [p, p + len) is resident. mincore is right
 * here (unlike for a read touch, which maps the shared zero page): the pages
 * it is asked about were written or never touched at all. */
static bool all_resident(const char *p, uint64_t len)
{
    uint64_t pages = (len + 4095) / 4096;
    unsigned char *vec = malloc((size_t)pages);
    bool all = vec && mincore((void *)p, (size_t)len, vec) == 0;
    for (uint64_t i = 0; all && i < pages; i++)
        all = vec[i] & 1;
    free(vec);
    return all;
}

static locus_status_t serial_touch(locus_heap_pages_t kind, uint64_t size, bool last_byte,
                                   baseline_progress_fn progress, void *arg, double *gbps)
{
    double t0 = lc_now_s();
    char *p;
    uint64_t len;
    locus_status_t st = map_region(kind, size, 0, &p, &len);
    if (st)
        return st;
    uint64_t stride = kind_page(kind), step = 64ull << 20, at = last_byte ? stride - 1 : 0;
    for (uint64_t off = 0; off < len; off += step) {
        uint64_t end = off + step < len ? off + step : len;
        for (uint64_t o = off; o < end; o += stride)
            ((volatile char *)p)[o + at] = 0;
        if (progress)
            progress(arg, end, len);
    }
    /* THP not obtained everywhere: the 2 MiB stride left 4 KiB pages untouched */
    if (kind == LOCUS_PAGES_THP && !all_resident(p, len))
        for (uint64_t o = 0; o < len; o += 4096)
            ((volatile char *)p)[o] = 0;
    double t = lc_now_s() - t0;
    *gbps = (double)len / t / 1e9;
    munmap(p, len);
    return LOCUS_OK;
}

locus_status_t baseline_serial_touch(locus_heap_pages_t kind, uint64_t size,
                                   baseline_progress_fn progress, void *arg, double *gbps)
{
    return serial_touch(kind, size, true, progress, arg, gbps);
}

locus_status_t baseline_serial_touch_first(locus_heap_pages_t kind, uint64_t size, double *gbps)
{
    return serial_touch(kind, size, false, NULL, NULL, gbps);
}

locus_status_t baseline_populate1(locus_heap_pages_t kind, uint64_t size, double *gbps)
{
    double t0 = lc_now_s();
    char *p;
    uint64_t len;
    locus_status_t st = map_region(kind, size, 0, &p, &len);
    if (st)
        return st;
    if (madvise(p, len, MADV_POPULATE_WRITE)) {
        int e = errno;
        munmap(p, len);
        return lc_err_errno(LOCUS_ERR_UNSUPPORTED, e, "MADV_POPULATE_WRITE");
    }
    double t = lc_now_s() - t0;
    *gbps = (double)len / t / 1e9;
    munmap(p, len);
    return LOCUS_OK;
}

locus_status_t baseline_map_populate(locus_heap_pages_t kind, uint64_t size, double *gbps)
{
    double t0 = lc_now_s();
    char *p;
    uint64_t len;
    locus_status_t st = map_region(kind, size, MAP_POPULATE, &p, &len);
    if (st)
        return st;
    double t = lc_now_s() - t0;
    *gbps = (double)len / t / 1e9;
    munmap(p, len);
    return LOCUS_OK;
}

typedef struct {
    char *p;
    uint64_t len;
    int cpu;
    pthread_barrier_t *bar;
} ms_arg_t;

static void *ms_worker(void *v)
{
    ms_arg_t *a = v;
    pthread_barrier_wait(a->bar);
    memset(a->p, 1, a->len);
    return NULL;
}

double baseline_memset(void *p, uint64_t size, int nthreads, const int *cpus)
{
    if (nthreads < 1)
        nthreads = 1;
    ms_arg_t *args = calloc((size_t)nthreads, sizeof *args);
    pthread_t *tid = calloc((size_t)nthreads, sizeof *tid);
    if (!args || !tid) {
        free(args);
        free(tid);
        return 0;
    }
    pthread_barrier_t bar;
    pthread_barrier_init(&bar, NULL, (unsigned)nthreads + 1);
    uint64_t share = size / (uint64_t)nthreads / 64 * 64;
    for (int t = 0; t < nthreads; t++) {
        args[t] = (ms_arg_t){(char *)p + share * (uint64_t)t,
                             t == nthreads - 1 ? size - share * (uint64_t)t : share, cpus ? cpus[t] : -1, &bar};
        pthread_attr_t at;
        pthread_attr_init(&at);
        if (cpus) {
            cpu_set_t set;
            CPU_ZERO(&set);
            CPU_SET(cpus[t], &set);
            pthread_attr_setaffinity_np(&at, sizeof set, &set);
        }
        pthread_create(&tid[t], &at, ms_worker, &args[t]);
        pthread_attr_destroy(&at);
    }
    pthread_barrier_wait(&bar);
    double t0 = lc_now_s();
    for (int t = 0; t < nthreads; t++)
        pthread_join(tid[t], NULL);
    double t = lc_now_s() - t0;
    pthread_barrier_destroy(&bar);
    free(args);
    free(tid);
    return (double)size / t / 1e9;
}
