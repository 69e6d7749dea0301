/* locus run --bind auto: which cpus each rank gets, from where each cpu
 * sits (a pure function of the placement, so it is tested on topologies
 * this machine does not have: tests/unit/test_boot_bind.cc). */
#ifndef LOCUS_TOOLS_RUN_BIND_H
#define LOCUS_TOOLS_RUN_BIND_H

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

/* Where a cpu sits: NUMA node, L3, core (the first cpu of its hardware
 * threads: Intel numbers a core's threads c and c + cores, so the number
 * alone would put a core's two threads in different ranks' blocks). */
typedef struct {
    long node, l3, core;
    int cpu;
} run_cpu_t;

static inline int run_cpu_cmp(const void *a, const void *b)
{
    const run_cpu_t *x = (const run_cpu_t *)a, *y = (const run_cpu_t *)b;
    if (x->node != y->node)
        return x->node < y->node ? -1 : 1;
    if (x->l3 != y->l3)
        return x->l3 < y->l3 ? -1 : 1;
    if (x->core != y->core)
        return x->core < y->core ? -1 : 1;
    return (x->cpu > y->cpu) - (x->cpu < y->cpu);
}

/* Whether pl[i] (sorted) starts a core of its own. */
static inline bool run_new_core(const run_cpu_t *pl, int i)
{
    return i == 0 || pl[i].core != pl[i - 1].core || pl[i].l3 != pl[i - 1].l3 || pl[i].node != pl[i - 1].node;
}

/* Put pl in place order (node, L3, core, number): once, before the blocks. */
static inline void run_sort_cpus(run_cpu_t *pl, int n)
{
    if (n > 0)
        qsort(pl, (size_t)n, sizeof pl[0], run_cpu_cmp);
}

/* Rank `rank` of `nranks` over the n cpus of pl, in place order (sorted by
 * run_sort_cpus). At most as many ranks as cores: rank r gets cores
 * [r*C/N, (r+1)*C/N) with all their threads (two ranks never share a core);
 * more ranks than cores but at most n: cpus [r*n/N, (r+1)*n/N); more ranks
 * than cpus: none (out empty: leave the rank unbound). */
static inline void run_auto_blocks(const run_cpu_t *pl, int n, int64_t rank, int64_t nranks, cpu_set_t *out)
{
    CPU_ZERO(out);
    if (n <= 0 || nranks > n || rank < 0 || rank >= nranks)
        return;
    int64_t cores = 0;
    for (int i = 0; i < n; i++)
        cores += run_new_core(pl, i);
    int64_t units = nranks <= cores ? cores : n, unit = -1;
    for (int i = 0; i < n; i++) {
        unit = nranks <= cores ? unit + run_new_core(pl, i) : i;
        if (unit >= rank * units / nranks && unit < (rank + 1) * units / nranks)
            CPU_SET(pl[i].cpu, out);
    }
}

#endif
