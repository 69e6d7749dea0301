/* Verification: residency and page kind from /proc/self/smaps (RSS, not
 * mincore: a read-only touch maps the zero page), placement from move_pages. */
#include "heap/heap_internal.h"

#include "core/error.h"

#include <errno.h>
#include <inttypes.h>
#include <numaif.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

locus_status_t heap_smaps(const void *base, uint64_t size, uint64_t *rss, uint64_t *anon_huge,
                          uint64_t *hugetlb)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f)
        return lc_err_errno(LOCUS_ERR_SYSTEM, errno, "open /proc/self/smaps");
    uintptr_t lo = (uintptr_t)base, hi = lo + size;
    uint64_t r = 0, a = 0, h = 0;
    bool in = false;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        uintptr_t s, e;
        unsigned long long kb;
        char key[64];
        if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " ", &s, &e) == 2 && strchr(line, '-') < strchr(line, ' ')) {
            in = s < hi && e > lo;
            continue;
        }
        if (!in || sscanf(line, "%63[^:]: %llu kB", key, &kb) != 2)
            continue;
        if (!strcmp(key, "Rss"))
            r += kb << 10;
        else if (!strcmp(key, "AnonHugePages") || !strcmp(key, "ShmemPmdMapped"))
            a += kb << 10;
        else if (!strcmp(key, "Private_Hugetlb") || !strcmp(key, "Shared_Hugetlb"))
            h += kb << 10;
    }
    fclose(f);
    *rss = r;
    *anon_huge = a;
    *hugetlb = h;
    return LOCUS_OK;
}

/* Units to query: all, or one per equal stratum at a pseudo-random position
 * inside it (a fixed stride would alias with the interleave period). */
static uint64_t pick(uint64_t i, uint64_t n, uint64_t units, uint64_t *rng)
{
    if (n >= units)
        return i;
    uint64_t lo = (uint64_t)((unsigned __int128)i * units / n);
    uint64_t hi = (uint64_t)((unsigned __int128)(i + 1) * units / n);
    *rng ^= *rng << 13;
    *rng ^= *rng >> 7;
    *rng ^= *rng << 17;
    return lo + *rng % (hi - lo);
}

static locus_status_t histogram(struct locus_heap *h, locus_heap_verify_t mode)
{
    locus_heap_stats_t *s = &h->stats;
    uint64_t units = s->units_total;
    uint64_t n = mode == LOCUS_VERIFY_ALL ? units : (h->samples < units ? h->samples : units);
    enum { BATCH = 16384 };
    void **pages = malloc(BATCH * sizeof *pages);
    int *status = malloc(BATCH * sizeof *status);
    if (!pages || !status) {
        free(pages);
        free(status);
        return lc_err(LOCUS_ERR_NO_MEMORY, "heap verify: cannot allocate move_pages arrays");
    }
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    for (uint64_t i = 0; i < n;) {
        unsigned long cnt = n - i < BATCH ? (unsigned long)(n - i) : BATCH;
        for (unsigned long b = 0; b < cnt; b++)
            pages[b] = h->base + pick(i + b, n, units, &rng) * s->unit_size;
        if (move_pages(0, cnt, pages, NULL, status, 0) != 0) {
            int e = errno;
            free(pages);
            free(status);
            return lc_err_errno(LOCUS_ERR_SYSTEM, e, "heap verify: move_pages(%lu pages)", cnt);
        }
        for (unsigned long b = 0; b < cnt; b++) {
            int st = status[b], k = -1;
            for (int x = 0; st >= 0 && x < s->num_nodes; x++)
                if (s->node_os[x] == st)
                    k = x;
            if (k >= 0)
                s->node_units[k]++;
            else if (st == -ENOENT)
                s->not_faulted++;
            else if (st == -EFAULT) /* zero page; kernels < 6.x say so for untouched too */
                s->not_faulted++, s->zero_page++;
            else
                s->other_status++;
        }
        i += cnt;
    }
    s->units_checked = n;
    free(pages);
    free(status);
    return LOCUS_OK;
}

/* The histogram unit: the obtained page size, or 4 KiB when THP was only
 * partly obtained (a 2 MiB unit would then misreport the 4 KiB pages). */
static void choose_unit(struct locus_heap *h, uint64_t rss, uint64_t anon_huge, uint64_t hugetlb)
{
    locus_heap_stats_t *s = &h->stats;
    uint64_t base = 4096;
    s->resident_bytes = rss + hugetlb;
    s->huge_bytes = h->hugetlb ? hugetlb : anon_huge;
    s->unit_size = s->page_size;
    if (s->pages == LOCUS_PAGES_THP && s->resident_bytes > 0 && anon_huge < s->resident_bytes) {
        s->unit_size = base;
        if (anon_huge == 0) {
            s->pages = LOCUS_PAGES_4K;
            s->page_size = base;
            lc_note(&h->notes, "thp: no transparent huge page obtained (AnonHugePages 0 of %llu resident "
                      "bytes); the heap uses 4 KiB pages",
                      (unsigned long long)s->resident_bytes);
        } else {
            lc_note(&h->notes, "thp: only %llu of %llu resident bytes are huge pages (AnonHugePages); "
                      "placement counted in 4 KiB pages",
                      (unsigned long long)anon_huge, (unsigned long long)s->resident_bytes);
        }
    }
    if (s->pages == LOCUS_PAGES_4K && anon_huge > 0)
        lc_note(&h->notes, "4k: %llu bytes became transparent huge pages despite MADV_NOHUGEPAGE",
                  (unsigned long long)anon_huge);
    s->units_total = h->size / s->unit_size;
}

locus_status_t heap_verify_now(struct locus_heap *h, locus_heap_verify_t mode)
{
    locus_heap_stats_t *s = &h->stats;
    double t0 = lc_now_s();
    lc_notes_truncate(&h->notes, h->notes_base);
    uint64_t rss, anon_huge, hugetlb;
    locus_status_t st = heap_smaps(h->base, h->size, &rss, &anon_huge, &hugetlb);
    if (st)
        return st;
    choose_unit(h, rss, anon_huge, hugetlb);
    memset(s->node_units, 0, sizeof s->node_units);
    s->units_checked = s->not_faulted = s->zero_page = s->other_status = 0;
    if (mode != LOCUS_VERIFY_NONE && (st = histogram(h, mode)))
        return st;
    s->verify_s = lc_now_s() - t0;
    return LOCUS_OK;
}
