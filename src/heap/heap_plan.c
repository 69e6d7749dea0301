/* Pure fault-in planning: see heap_plan.h. */
#include "heap/heap_plan.h"

#include <string.h>

void heap_plan_init(heap_plan_t *p, uint64_t units, uint64_t unit, uint64_t chunk_units,
                    int nslots, bool strided, uint64_t phase, const int *weights)
{
    memset(p, 0, sizeof *p);
    if (nslots < 1)
        nslots = 1;
    if (nslots > HEAP_PLAN_MAX_SLOTS)
        nslots = HEAP_PLAN_MAX_SLOTS;
    p->units = units;
    p->unit = unit;
    p->chunk_units = chunk_units ? chunk_units : 1;
    p->nslots = nslots;
    p->strided = strided && nslots > 1;
    p->phase = p->strided ? phase % (uint64_t)nslots : 0;
    uint64_t wsum = 0;
    for (int s = 0; weights && s < nslots; s++)
        wsum += weights[s] > 0 ? (uint64_t)weights[s] : 0;
    uint64_t given = 0;
    for (int s = 0; s < nslots; s++) {
        uint64_t w = wsum ? (weights[s] > 0 ? (uint64_t)weights[s] : 0) : 1;
        uint64_t total_w = wsum ? wsum : (uint64_t)nslots;
        /* 128-bit so that huge heaps times thread counts cannot overflow */
        p->start[s] = given;
        given += (uint64_t)((unsigned __int128)units * w / total_w);
    }
    p->start[nslots] = units;
    /* hand the rounding remainder out one page at a time to the weighted slots */
    uint64_t rem = units - given;
    for (int s = 0; rem; s = (s + 1) % nslots) {
        if (wsum && weights[s] <= 0)
            continue;
        for (int t = s + 1; t < nslots; t++)
            p->start[t]++;
        rem--;
    }
}

int heap_plan_slot_of(const heap_plan_t *p, uint64_t k)
{
    if (p->strided)
        return (int)((p->phase + k) % (uint64_t)p->nslots);
    for (int s = 0; s < p->nslots; s++)
        if (k < p->start[s + 1])
            return s;
    return p->nslots - 1;
}

uint64_t heap_plan_slot_units(const heap_plan_t *p, int s)
{
    if (s < 0 || s >= p->nslots)
        return 0;
    if (!p->strided)
        return p->start[s + 1] - p->start[s];
    /* first page of slot s */
    uint64_t n = (uint64_t)p->nslots;
    uint64_t first = ((uint64_t)s + n - p->phase) % n;
    return p->units > first ? (p->units - first + n - 1) / n : 0;
}

uint64_t heap_plan_slot_chunks(const heap_plan_t *p, int s)
{
    uint64_t u = heap_plan_slot_units(p, s);
    return (u + p->chunk_units - 1) / p->chunk_units;
}

heap_chunk_t heap_plan_chunk(const heap_plan_t *p, int s, uint64_t c)
{
    heap_chunk_t ch = {0, 0, 1};
    uint64_t su = heap_plan_slot_units(p, s);
    uint64_t m = c * p->chunk_units; /* index within the slot's pages */
    if (m >= su)
        return ch;
    ch.count = su - m < p->chunk_units ? su - m : p->chunk_units;
    if (p->strided) {
        uint64_t n = (uint64_t)p->nslots;
        ch.first = ((uint64_t)s + n - p->phase) % n + m * n;
        ch.step = n;
    } else {
        ch.first = p->start[s] + m;
    }
    return ch;
}

int heap_plan_threads(int nslots, const int *slot_cpus, int nthreads, int max_threads,
                      int *home, int *core)
{
    int cores = 0, with_cores = 0;
    for (int s = 0; s < nslots; s++) {
        cores += slot_cpus[s] > 0 ? slot_cpus[s] : 0;
        with_cores += slot_cpus[s] > 0;
    }
    if (nthreads <= 0)
        nthreads = cores ? cores : 1;
    if (nthreads > max_threads)
        nthreads = max_threads;
    if (!with_cores) {
        for (int t = 0; t < nthreads; t++) {
            home[t] = -1;
            core[t] = t;
        }
        return nthreads;
    }
    int used[HEAP_PLAN_MAX_SLOTS] = {0};
    int s = 0;
    for (int t = 0; t < nthreads; t++) {
        /* a slot whose cores are all taken is skipped until every core is */
        bool wrap = t % cores == 0 && t > 0;
        if (wrap)
            memset(used, 0, sizeof used);
        while (slot_cpus[s] <= 0 || used[s] >= slot_cpus[s])
            s = (s + 1) % nslots;
        home[t] = s;
        core[t] = used[s]++;
        s = (s + 1) % nslots;
    }
    return nthreads;
}
