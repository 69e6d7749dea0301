/* topo: what the kernel says in sysfs — page sizes, THP, hugetlb pools, and
 * the fallbacks for cache sizes and node distances hwloc got wrong or lacks. */
#include "topo/topo_internal.h"

#include "core/sysfs.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

uint64_t topo_sysfs_cache_size(const char *root, int os_cpu, int level)
{
    lc_cache_t c;
    return lc_sysfs_cache(root, os_cpu, level, &c) ? c.size_bytes : 0;
}

bool topo_sysfs_distance_row(const char *root, int os_node, const int *os_of, int n, int *row)
{
    char path[256], buf[4096];
    snprintf(path, sizeof path, "%s/devices/system/node/node%d/distance", root, os_node);
    if (!lc_read_line(path, buf, sizeof buf))
        return false;
    /* The row lists every online node in os-index order; our nodes are a subset. */
    int vals[1024], nv = 0;
    for (char *p = buf, *end; *p && nv < 1024; p = end) {
        long v = strtol(p, &end, 10);
        if (end == p)
            break;
        vals[nv++] = (int)v;
    }
    char online[256];
    int os_list[1024];
    int nos = -1;
    snprintf(path, sizeof path, "%s/devices/system/node/online", root);
    if (lc_read_line(path, online, sizeof online))
        nos = lc_parse_cpulist(online, os_list, 1024);
    for (int i = 0; i < n; i++) {
        int col = os_of[i]; /* sysfs column = position in the "online" list */
        if (nos > 0) {
            col = -1;
            for (int k = 0; k < nos; k++)
                if (os_list[k] == os_of[i])
                    col = k;
        }
        if (col < 0 || col >= nv)
            return false;
        row[i] = vals[col];
    }
    return true;
}

static locus_thp_mode_t parse_thp(const char *line)
{
    const char *open = strchr(line, '['), *close = open ? strchr(open, ']') : NULL;
    if (!close)
        return LOCUS_THP_UNAVAILABLE;
    size_t len = (size_t)(close - open - 1);
    if (len == 6 && !strncmp(open + 1, "always", 6))
        return LOCUS_THP_ALWAYS;
    if (len == 7 && !strncmp(open + 1, "madvise", 7))
        return LOCUS_THP_MADVISE;
    if (len == 5 && !strncmp(open + 1, "never", 5))
        return LOCUS_THP_NEVER;
    return LOCUS_THP_UNAVAILABLE;
}

static int cmp_pool(const void *a, const void *b)
{
    uint64_t x = ((const locus_topo_hugepool_t *)a)->page_size, y = ((const locus_topo_hugepool_t *)b)->page_size;
    return (x > y) - (x < y);
}

static void read_hugepools(struct locus_topo *t, const char *root)
{
    char path[512];
    snprintf(path, sizeof path, "%s/kernel/mm/hugepages", root);
    DIR *d = opendir(path);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        unsigned long long kb;
        if (sscanf(e->d_name, "hugepages-%llukB", &kb) != 1)
            continue;
        locus_topo_hugepool_t pool = {.page_size = (uint64_t)kb << 10};
        snprintf(path, sizeof path, "%s/kernel/mm/hugepages/%s/nr_hugepages", root, e->d_name);
        lc_read_u64(path, &pool.total_pages);
        snprintf(path, sizeof path, "%s/kernel/mm/hugepages/%s/free_hugepages", root, e->d_name);
        lc_read_u64(path, &pool.free_pages);
        void *p = realloc(t->hugepools, (size_t)(t->num_hugepools + 1) * sizeof pool);
        if (!p)
            break;
        t->hugepools = p;
        t->hugepools[t->num_hugepools++] = pool;
    }
    closedir(d);
    qsort(t->hugepools, (size_t)t->num_hugepools, sizeof *t->hugepools, cmp_pool);
}

void topo_read_pages(struct locus_topo *t, const char *root)
{
    long ps = sysconf(_SC_PAGESIZE);
    t->base_page = ps > 0 ? (uint64_t)ps : 4096;
    char path[256], buf[256];
    snprintf(path, sizeof path, "%s/kernel/mm/transparent_hugepage/enabled", root);
    t->thp_mode = lc_read_line(path, buf, sizeof buf) ? parse_thp(buf) : LOCUS_THP_UNAVAILABLE;
    t->thp_size = 0;
    if (t->thp_mode != LOCUS_THP_UNAVAILABLE) {
        snprintf(path, sizeof path, "%s/kernel/mm/transparent_hugepage/hpage_pmd_size", root);
        if (!lc_read_u64(path, &t->thp_size)) {
            t->thp_size = 2u << 20;
            lc_note(&t->notes, "THP is %s but hpage_pmd_size is unreadable; assumed 2 MiB",
                      locus_thp_mode_name(t->thp_mode));
        }
    }
    read_hugepools(t, root);
}
