/* Fuzz: the shm footprint planner (`locus plan shm`, locus_shm_plan) with any
 * process count, option values and LOCUS_SHM_* environment. A plan that is
 * accepted must add up: every byte of the segment accounted for. */
#include "fuzz.h"

#include <locus/shm.h>

#include <stdio.h>

static const char *vars[] = {"LOCUS_SHM_QUEUE", "LOCUS_SHM_EAGER", "LOCUS_SHM_FBOX",
                             "LOCUS_SHM_FBOXES", "LOCUS_SHM_HEAP"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 20)
        return 0;
    int32_t nprocs;
    uint64_t queue, heap;
    memcpy(&nprocs, data, 4);
    memcpy(&queue, data + 4, 8);
    memcpy(&heap, data + 12, 8);
    data += 20;
    size -= 20;
    /* the rest: "value\0value\0..." for the variables, in order */
    char *rest = fuzz_cstr(data, size), *p = rest;
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
        if (p < rest + size && *p) {
            setenv(vars[i], p, 1);
            p += strlen(p) + 1;
        } else {
            unsetenv(vars[i]);
        }
    }
    locus_shm_opts_t o;
    locus_shm_opts_init(&o);
    o.queue_bytes = queue;
    o.heap_bytes = heap;
    locus_shm_plan_t plan;
    if (locus_shm_plan(nprocs, &o, &plan) == LOCUS_OK) {
        if (plan.nprocs != nprocs || plan.segment_bytes < plan.control_bytes)
            abort();
        if (plan.segment_bytes / (uint64_t)plan.nprocs < plan.queue_bytes / 2)
            abort(); /* every process's ring is inside the segment */
        FILE *null = fopen("/dev/null", "w");
        locus_shm_plan_print(&plan, null, true);
        locus_shm_plan_print(&plan, null, false);
        fclose(null);
    }
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
        unsetenv(vars[i]);
    free(rest);
    return 0;
}
