/* Runs inside the locus-vm guest: proves the guest has real NUMA.
 *   vm_smoke NODES MEMONLY CPUS_PER_NODE
 * Checks the node count, cpus and distances in /sys, that MPOL_INTERLEAVE over
 * 64 MiB of 4 KiB pages is an exact page round-robin over all nodes (move_pages),
 * and that MPOL_BIND to the last node puts every page there when faulted from a
 * node-0 CPU. Prints "vm-smoke: ok" or the first failure (exit 1). */
#include <errno.h>
#include <numaif.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MAXN 64
#define REGION (64ul << 20)

static int fail(const char *what)
{
    printf("vm-smoke: FAIL: %s\n", what);
    return 1;
}

static int read_line(const char *path, char *buf, size_t n)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    if (!fgets(buf, (int)n, f))
        buf[0] = 0;
    fclose(f);
    buf[strcspn(buf, "\n")] = 0;
    return 0;
}

/* Number of entries in a kernel list like "0-3,5" (empty string: 0). */
static int list_count(const char *s)
{
    int count = 0;
    while (*s) {
        char *end;
        long a = strtol(s, &end, 10), b = a;
        if (end == s)
            return -1;
        if (*end == '-')
            b = strtol(end + 1, &end, 10);
        count += (int)(b - a + 1);
        s = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            return -1;
    }
    return count;
}

static int check_sysfs(int nodes, int memonly, int cpn)
{
    char buf[4096], path[128];
    int total = nodes + memonly;
    if (read_line("/sys/devices/system/node/online", buf, sizeof buf) < 0)
        return fail("cannot read /sys/devices/system/node/online");
    int n = list_count(buf);
    printf("nodes online: %s (%d)\n", buf, n);
    if (n != total)
        return fail("node count differs from the requested topology");
    for (int i = 0; i < total; i++) {
        snprintf(path, sizeof path, "/sys/devices/system/node/node%d/cpulist", i);
        if (read_line(path, buf, sizeof buf) < 0)
            return fail("missing node cpulist");
        int c = list_count(buf);
        printf("node %d cpus: '%s' (%d)\n", i, buf, c);
        if (c != (i < nodes ? cpn : 0))
            return fail("node cpu count differs from the requested topology");
        snprintf(path, sizeof path, "/sys/devices/system/node/node%d/distance", i);
        if (read_line(path, buf, sizeof buf) < 0)
            return fail("missing node distance");
        char *p = buf;
        for (int j = 0; j < total; j++) {
            char *end;
            long d = strtol(p, &end, 10);
            if (end == p || d != (i == j ? 10 : 20)) {
                printf("node %d distance row: %s\n", i, buf);
                return fail("distance is not 10 local / 20 remote");
            }
            p = end;
        }
    }
    return 0;
}

static char *map_region(void)
{
    char *p = mmap(NULL, REGION, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    if (madvise(p, REGION, MADV_NOHUGEPAGE) != 0) {
        munmap(p, REGION);
        return NULL;
    }
    return p;
}

/* Node of each 4 KiB page of p, touched first. */
static int page_nodes(char *p, int *status, size_t npages)
{
    void **pages = malloc(npages * sizeof *pages);
    if (!pages)
        return -1;
    for (size_t i = 0; i < npages; i++) {
        p[i * 4096] = 1;
        pages[i] = p + i * 4096;
    }
    long rc = move_pages(0, npages, pages, NULL, status, 0);
    free(pages);
    return rc == 0 ? 0 : -1;
}

static int check_interleave(int total)
{
    size_t npages = REGION / 4096;
    unsigned long mask = (total >= 64) ? ~0ul : (1ul << total) - 1;
    int *status = malloc(npages * sizeof *status);
    char *p = map_region();
    if (!status || !p)
        return fail("mmap/madvise of 64 MiB");
    if (mbind(p, REGION, MPOL_INTERLEAVE, &mask, MAXN, 0) != 0)
        return fail(strerror(errno));
    if (page_nodes(p, status, npages) != 0)
        return fail("move_pages after interleave");
    long count[MAXN] = {0};
    int first = status[0], bad = 0;
    for (size_t i = 0; i < npages; i++) {
        if (status[i] < 0 || status[i] >= total) {
            bad = 1;
            break;
        }
        count[status[i]]++;
        if (status[i] != (int)((first + i) % total))
            bad = 1;
    }
    printf("interleave 64 MiB / 4 KiB over %d nodes:", total);
    for (int i = 0; i < total; i++)
        printf(" %ld", count[i]);
    printf(" pages\n");
    long lo = count[0], hi = count[0];
    for (int i = 1; i < total; i++) {
        lo = count[i] < lo ? count[i] : lo;
        hi = count[i] > hi ? count[i] : hi;
    }
    munmap(p, REGION);
    free(status);
    if (bad)
        return fail("interleave is not a strict page round-robin");
    if (hi - lo > 1)
        return fail("interleave page counts differ by more than one page");
    return 0;
}

static int check_bind_last(int total)
{
    size_t npages = REGION / 4096;
    int last = total - 1;
    unsigned long mask = 1ul << last;
    cpu_set_t cpu0;
    CPU_ZERO(&cpu0);
    CPU_SET(0, &cpu0); /* cpu 0 is on node 0: fault the pages from there */
    if (sched_setaffinity(0, sizeof cpu0, &cpu0) != 0)
        return fail("sched_setaffinity(cpu 0)");
    int *status = malloc(npages * sizeof *status);
    char *p = map_region();
    if (!status || !p)
        return fail("mmap/madvise of 64 MiB");
    if (mbind(p, REGION, MPOL_BIND, &mask, MAXN, 0) != 0)
        return fail(strerror(errno));
    if (page_nodes(p, status, npages) != 0)
        return fail("move_pages after bind");
    size_t on = 0;
    for (size_t i = 0; i < npages; i++)
        on += status[i] == last;
    printf("bind to node %d, faulted from cpu 0: %zu of %zu pages on node %d\n", last, on, npages,
           last);
    munmap(p, REGION);
    free(status);
    return on == npages ? 0 : fail("MPOL_BIND left pages off the bound node");
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: vm_smoke NODES MEMONLY CPUS_PER_NODE\n");
        return 2;
    }
    int nodes = atoi(argv[1]), memonly = atoi(argv[2]), cpn = atoi(argv[3]);
    if (nodes < 1 || memonly < 0 || cpn < 1 || nodes + memonly > MAXN) {
        fprintf(stderr, "vm_smoke: bad arguments %s %s %s: expected NODES>=1 MEMONLY>=0 CPUS>=1\n",
                argv[1], argv[2], argv[3]);
        return 2;
    }
    int total = nodes + memonly;
    if (check_sysfs(nodes, memonly, cpn) || check_interleave(total) || check_bind_last(total))
        return 1;
    printf("vm-smoke: ok\n");
    return 0;
}
