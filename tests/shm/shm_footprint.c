/* Under `locus run -n N`: the mapped segment equals the footprint model
 * (`locus plan shm --procs N`) within 1 %. Prints the numbers on rank 0. */
#include <locus/locus.h>

#include <inttypes.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
    locus_shm_ep_t *ep;
    if (locus_shm_init(NULL, &ep)) {
        fprintf(stderr, "shm_footprint: init: %s\n", locus_last_error());
        return 2;
    }
    int n = locus_shm_size(ep), me = locus_shm_rank(ep);
    locus_shm_plan_t model;
    if (locus_shm_plan(n, NULL, &model)) {
        fprintf(stderr, "shm_footprint: plan: %s\n", locus_last_error());
        return 2;
    }
    const char *job = getenv("LOCUS_JOB");
    char name[128], line[512];
    locus_shm_segment_name(job, name, sizeof name);
    FILE *f = fopen("/proc/self/maps", "r");
    uint64_t mapped = 0;
    while (f && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (strstr(line, name) && sscanf(line, "%lx-%lx", &lo, &hi) == 2)
            mapped += hi - lo;
    }
    if (f)
        fclose(f);
    double err = mapped > model.segment_bytes ? mapped - model.segment_bytes : model.segment_bytes - mapped;
    err /= (double)model.segment_bytes;
    int rc = err <= 0.01 ? 0 : 1;
    if (me == 0 || rc)
        printf("rank %d of %d: model %" PRIu64 " B, mapped %" PRIu64 " B (%s), error %.3f %%\n", me, n,
               model.segment_bytes, mapped, name, err * 100);
    locus_shm_barrier(ep);
    locus_shm_finalize(ep);
    return rc;
}
