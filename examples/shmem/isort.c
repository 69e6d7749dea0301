/* A distributed integer sort (ISx-like) in OpenSHMEM 1.4 calls, so that any
 * implementation builds it (locus-oshcc, oshcc): every PE draws N random
 * keys, buckets them by owner (key range / npes), exchanges the counts with
 * shmem_alltoall64, answers each sender with its offsets (a second
 * alltoall), puts every bucket straight into its owner's receive buffer
 * (shmem_putmem_nbi), quiets and barriers, then counting-sorts what it
 * received. Verified: every PE's keys sorted, every key below the next
 * PE's, the total kept. Prints keys/s per PE (median of the iterations):
 *   RESULT impl=<vendor> pes=N test=isort keys_per_pe=N value=<keys/s/PE>
 *   locus-oshcc -O2 -o isort isort.c && locus run -n 4 ./isort [keys_per_pe] [iterations] */
#include <shmem.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAXKEY (1u << 24) /* the key range: the counting sort stays in cache-friendly bounds */

static long pSync[SHMEM_ALLTOALL_SYNC_SIZE], pSync2[SHMEM_ALLTOALL_SYNC_SIZE];
static long pSyncR[SHMEM_REDUCE_SYNC_SIZE];
static long pWrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE + 8];
static long bad_total, bad_src;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t rng(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1L << 22;
    int iters = argc > 2 ? atoi(argv[2]) : 5;
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    for (int i = 0; i < SHMEM_ALLTOALL_SYNC_SIZE; i++)
        pSync[i] = pSync2[i] = SHMEM_SYNC_VALUE;
    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++)
        pSyncR[i] = SHMEM_SYNC_VALUE;
    long cap = n + n / 4 + 4096; /* room for an unlucky owner */
    uint32_t *keys = malloc((size_t)n * sizeof *keys);
    uint32_t *send = malloc((size_t)n * sizeof *send);
    uint32_t *recv = shmem_malloc((size_t)cap * sizeof *recv);
    int64_t *counts = shmem_malloc((size_t)npes * sizeof(int64_t));
    int64_t *incoming = shmem_malloc((size_t)npes * sizeof(int64_t));
    int64_t *offs_for = shmem_malloc((size_t)npes * sizeof(int64_t));
    int64_t *offs_at = shmem_malloc((size_t)npes * sizeof(int64_t));
    long *start = calloc((size_t)npes + 1, sizeof *start);
    uint32_t *hist = calloc(MAXKEY / (uint32_t)npes + 2, sizeof *hist);
    double *t = malloc(sizeof(double) * (size_t)iters), *tx = malloc(sizeof(double) * (size_t)iters);
    uint32_t span = MAXKEY / (uint32_t)npes + 1;
    if (!keys || !send || !recv || !counts || !start || !hist || !t) {
        fprintf(stderr, "PE %d: out of memory\n", me);
        shmem_global_exit(1);
    }
    long got = 0;
    for (int it = 0; it < iters; it++) {
        uint64_t s = 0x9E3779B97F4A7C15ull * (uint64_t)(me + 1) + (uint64_t)it;
        for (long i = 0; i < n; i++)
            keys[i] = (uint32_t)(rng(&s) % MAXKEY);
        shmem_barrier_all();
        double t0 = now_s();
        /* bucket by owner */
        for (int d = 0; d < npes; d++)
            counts[d] = 0;
        for (long i = 0; i < n; i++)
            counts[keys[i] / span]++;
        start[0] = 0;
        for (int d = 0; d < npes; d++)
            start[d + 1] = start[d] + counts[d];
        for (long i = 0; i < n; i++)
            send[start[keys[i] / span]++] = keys[i];
        for (int d = npes; d > 0; d--)
            start[d] = start[d - 1];
        start[0] = 0;
        /* counts to their owners, offsets back */
        shmem_barrier_all();
        double tx0 = now_s();
        shmem_alltoall64(incoming, counts, 1, 0, 0, npes, pSync);
        int64_t o = 0;
        for (int src = 0; src < npes; src++)
            offs_for[src] = o, o += incoming[src];
        got = (long)o;
        if (got > cap) {
            fprintf(stderr, "PE %d: %ld keys do not fit the %ld-key receive buffer\n", me, got, cap);
            shmem_global_exit(1);
        }
        shmem_barrier_all();
        shmem_alltoall64(offs_at, offs_for, 1, 0, 0, npes, pSync2);
        /* the exchange itself */
        for (int k = 0; k < npes; k++) {
            int d = (me + k) % npes;
            shmem_putmem_nbi(recv + offs_at[d], send + start[d], (size_t)counts[d] * sizeof *send, d);
        }
        shmem_barrier_all();
        tx[it] = now_s() - tx0;
        /* counting sort of my range */
        uint32_t lo = (uint32_t)me * span;
        memset(hist, 0, (size_t)span * sizeof *hist);
        for (long i = 0; i < got; i++)
            hist[recv[i] - lo]++;
        long w = 0;
        for (uint32_t v = 0; v < span; v++)
            for (uint32_t c = hist[v]; c; c--)
                recv[w++] = lo + v;
        t[it] = now_s() - t0;
    }
    /* verify: sorted here, below the next PE, nothing lost */
    long bad = 0;
    for (long i = 1; i < got; i++)
        bad += recv[i - 1] > recv[i];
    uint32_t mymin = got ? recv[0] : UINT32_MAX, mymax = got ? recv[got - 1] : 0;
    bad += got && (mymin / span != (uint32_t)me || mymax / span != (uint32_t)me);
    bad_src = got;
    shmem_barrier_all();
    shmem_long_sum_to_all(&bad_total, &bad_src, 1, 0, 0, npes, pWrk, pSyncR);
    if (bad_total != n * npes)
        bad++;
    qsort(t, (size_t)iters, sizeof *t, cmpd);
    double med = t[iters / 2];
    qsort(tx, (size_t)iters, sizeof *tx, cmpd);
    char name[SHMEM_MAX_NAME_LEN];
    shmem_info_get_name(name);
    if (bad)
        fprintf(stderr, "PE %d: sort check failed (%ld problems, %ld keys in total)\n", me, bad, bad_total);
    shmem_barrier_all();
    if (me == 0)
        printf("RESULT impl=%s pes=%d test=isort keys_per_pe=%ld value=%.0f unit=keys/s/PE exchange_ms=%.3f "
               "check=%s\n", strstr(name, "locus") ? "locus" : "openmpi", npes, n, (double)n / med,
               tx[iters / 2] * 1e3, bad ? "FAIL" : "ok");
    free(keys), free(send), free(start), free(hist), free(t), free(tx);
    shmem_free(recv), shmem_free(counts), shmem_free(incoming), shmem_free(offs_for), shmem_free(offs_at);
    shmem_finalize();
    return bad ? 1 : 0;
}
