/* A distributed histogram on locus rma: every process draws samples, and
 * the histogram's bins are spread over the processes (bin b lives on
 * process b mod P, in its symmetric heap). A sample is counted with a
 * one-sided atomic add on the owner's bin: no message, no receiver code.
 * Then everyone reads the whole histogram back with gets and checks that it
 * counts every sample once.
 *
 * Runs the same on one host and across nodes (the layer picks copies into
 * mapped heaps or RDMA per peer):
 *   locus run -n 4 -- ./rma_histogram [samples-per-process] [bins]
 *   mpirun -n 4 ./rma_histogram
 *   LOCUS_BOOT=tcp:HOST:PORT LOCUS_RANK=r LOCUS_SIZE=n ./rma_histogram   (any launcher) */
#include <locus/locus.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static int fail(const char *what, locus_status_t st)
{
    fprintf(stderr, "rma_histogram: %s: %s: %s\n", what, locus_strerror(st), locus_last_error());
    return 1;
}

int main(int argc, char **argv)
{
    long samples = argc > 1 ? atol(argv[1]) : 100000;
    long bins = argc > 2 ? atol(argv[2]) : 1000;
    locus_rma_t *r;
    locus_status_t st = locus_rma_init(NULL, &r); /* joins the job: locus run, mpirun, ... */
    if (st)
        return fail("init", st);
    int me = locus_rma_rank(r), np = locus_rma_size(r);
    long per = (bins + np - 1) / np; /* bins each process holds */
    if ((uint64_t)per * 8 > locus_rma_heap_size(r)) {
        locus_rma_fini(r);
        fprintf(stderr, "rma_histogram: %ld bins per process do not fit the heap (LOCUS_RMA_HEAP_SIZE)\n", per);
        return 1;
    }
    /* the bins: the same symmetric address in every process (a fresh heap is zero) */
    uint64_t *local_bins = locus_rma_heap_base(r);

    /* count: bin b is slot b / np on process b % np */
    uint64_t x = 0x9e3779b97f4a7c15ull * (uint64_t)(me + 1), mine = 0;
    for (long i = 0; i < samples; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        long b = (long)(x % (uint64_t)bins);
        if ((st = locus_rma_amo(r, (int)(b % np), LOCUS_RMA_AMO_ADD, &local_bins[b / np], 8, 1, 0, NULL)))
            return fail("atomic add", st);
        mine += (uint64_t)b;
    }
    if ((st = locus_rma_barrier(r))) /* every add done, everywhere */
        return fail("barrier", st);

    /* read the histogram back: one get per process of its slice */
    uint64_t *all = calloc((size_t)per * (size_t)np, sizeof *all), total = 0;
    for (int p = 0; all && p < np; p++)
        if ((st = locus_rma_get(r, p, all + (size_t)p * (size_t)per, local_bins, (size_t)per * 8)))
            return fail("get", st);
    for (long b = 0; all && b < bins; b++)
        total += all[(size_t)(b % np) * (size_t)per + (size_t)(b / np)];

    /* every process's sample count and its bins' sum, exchanged for the check */
    uint64_t mine2[2] = {(uint64_t)samples, mine}, *sums = calloc((size_t)np * 2, sizeof *sums), want = 0;
    if (!sums || (st = locus_boot_allgather(locus_rma_boot(r), mine2, sizeof mine2, sums)))
        return fail("allgather", st ? st : LOCUS_ERR_NO_MEMORY);
    for (int p = 0; p < np; p++)
        want += sums[2 * p];
    uint64_t weighted = 0, want_weighted = 0;
    for (long b = 0; all && b < bins; b++)
        weighted += (uint64_t)b * all[(size_t)(b % np) * (size_t)per + (size_t)(b / np)];
    for (int p = 0; p < np; p++)
        want_weighted += sums[2 * p + 1];
    int ok = total == want && weighted == want_weighted;
    if (me == 0)
        printf("rma_histogram: %d processes, %ld samples each into %ld bins: %s (%llu counted, %llu drawn)\n", np,
               samples, bins, ok ? "ok" : "WRONG", (unsigned long long)total, (unsigned long long)want);
    free(all);
    free(sums);
    if ((st = locus_rma_fini(r)))
        return fail("fini", st);
    return ok ? 0 : 1;
}
