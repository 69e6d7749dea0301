/* The OpenSHMEM peer of `locus bench rma`: the same loops on shmem_* calls,
 * so that the two print comparable lines ("RESULT tool=oshmem test=... ").
 *   put_lat  ping-pong, one-way: putmem_nbi of size - 8 bytes and an 8-byte
 *            flag (the whole message at 8 B), the peer polls its own copy
 *   get_lat  blocking shmem_getmem
 *   put_bw   windows of shmem_putmem_nbi, then shmem_quiet
 *   amo_lat  shmem_ulong_atomic_fetch_add
 * Median of --reps repetitions of about --time seconds each; the iteration
 * count is sized by PE 0 from a short run and broadcast.
 *   oshcc -O2 -o oshmem_rma oshmem_rma.c
 *   OMPI_MCA_opal_common_ucx_opal_mem_hooks=0 oshrun -n 2 ./oshmem_rma [--sizes 8,1M] [--tests put,bw]
 * (Open MPI 4.1 on Debian 12 may crash in shmem_finalize after the output:
 * the variable above avoids it; as root add --allow-run-as-root --oversubscribe.) */
#include <shmem.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { T_PUT = 1, T_GET = 2, T_BW = 4, T_AMO = 8 };

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static uint64_t *ping, *pong, *word, seq;
static char *dst, *src;
static int me;
static long sync_iters;
static long psync[SHMEM_BCAST_SYNC_SIZE];

static void pingpong(size_t size, long iters)
{
    uint64_t *mine = me ? ping : pong, *theirs = me ? pong : ping;
    int peer = 1 - me;
    for (long i = 0; i < iters; i++) {
        uint64_t v = ++seq;
        if (me == 1)
            shmem_uint64_wait_until(mine, SHMEM_CMP_EQ, v);
        if (size > 8)
            shmem_putmem_nbi(dst, src, size - 8, peer);
        shmem_putmem_nbi(theirs, &v, 8, peer);
        if (me == 0)
            shmem_uint64_wait_until(mine, SHMEM_CMP_EQ, v);
    }
    shmem_quiet();
}

static void run_op(int test, size_t size, long iters, int window)
{
    if (test == T_PUT) {
        pingpong(size, iters);
        return;
    }
    if (me != 0)
        return;
    for (long i = 0; i < iters; i++) {
        if (test == T_GET)
            shmem_getmem(src, src, size, 1);
        else if (test == T_AMO)
            (void)shmem_ulong_atomic_fetch_add((unsigned long *)word, 1, 1);
        else {
            for (int k = 0; k < window; k++)
                shmem_putmem_nbi(dst, src, size, 1);
            shmem_quiet();
        }
    }
}

static long agree_iters(int test, size_t size, double time, int window)
{
    double per = 0;
    for (int pass = 0; pass < 2; pass++) {
        shmem_barrier_all();
        double t0 = now_s();
        run_op(test, size, 8, window);
        per = (now_s() - t0) / 8;
    }
    long it = per > 0 ? (long)(time / per) : 1000000;
    sync_iters = it < 4 ? 4 : it > 1000000 ? 1000000 : it;
    shmem_barrier_all();
    shmem_broadcast64(&sync_iters, &sync_iters, 1, 0, 0, 0, shmem_n_pes(), psync);
    shmem_barrier_all();
    return sync_iters;
}

int main(int argc, char **argv)
{
    size_t sizes[64];
    int nsizes = 0, reps = 5, window = 64, tests = T_PUT | T_GET | T_BW | T_AMO;
    double time = 0.1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
            char buf[512];
            snprintf(buf, sizeof buf, "%s", argv[++i]);
            for (char *t = strtok(buf, ","); t && nsizes < 64; t = strtok(NULL, ",")) {
                char *e;
                double v = strtod(t, &e);
                v *= *e == 'K' || *e == 'k' ? 1024 : *e == 'M' || *e == 'm' ? 1048576 : 1;
                sizes[nsizes++] = (size_t)v;
            }
        } else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
            reps = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--time") && i + 1 < argc) {
            time = atof(argv[++i]);
        } else if (!strcmp(argv[i], "--window") && i + 1 < argc) {
            window = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--tests") && i + 1 < argc) {
            tests = 0;
            tests |= strstr(argv[i + 1], "put") ? T_PUT : 0;
            tests |= strstr(argv[i + 1], "get") ? T_GET : 0;
            tests |= strstr(argv[i + 1], "bw") ? T_BW : 0;
            tests |= strstr(argv[i + 1], "amo") ? T_AMO : 0;
            i++;
        }
    }
    if (!nsizes)
        for (size_t s = 8; s <= (4u << 20); s *= 2)
            sizes[nsizes++] = s;
    size_t maxs = 8;
    for (int i = 0; i < nsizes; i++)
        maxs = sizes[i] > maxs ? sizes[i] : maxs;
    for (int i = 0; i < SHMEM_BCAST_SYNC_SIZE; i++)
        psync[i] = SHMEM_SYNC_VALUE;
    shmem_init();
    me = shmem_my_pe();
    if (shmem_n_pes() < 2) {
        fprintf(stderr, "oshmem_rma: needs 2 PEs\n");
        shmem_finalize();
        return 2;
    }
    ping = shmem_calloc(16, sizeof *ping);
    pong = ping + 8;
    word = shmem_calloc(1, sizeof *word);
    dst = shmem_malloc(maxs);
    src = shmem_malloc(maxs);
    memset(src, 0x5a, maxs);
    if (me == 0)
        printf("# oshmem_rma: %d PEs, PE 0 -> PE 1, median of %d reps of ~%.2f s\n", shmem_n_pes(), reps, time);
    double *t = calloc((size_t)reps, sizeof *t);
    for (int test = T_PUT; test <= T_AMO; test <<= 1) {
        if (!(tests & test))
            continue;
        for (int si = 0; si < (test == T_AMO ? 1 : nsizes); si++) {
            size_t size = sizes[si];
            long iters = agree_iters(test, size, time, window);
            for (int r = 0; r < reps; r++) {
                shmem_barrier_all();
                double t0 = now_s();
                run_op(test, size, iters, window);
                t[r] = now_s() - t0;
            }
            qsort(t, (size_t)reps, sizeof *t, cmp);
            double med = reps % 2 ? t[reps / 2] : (t[reps / 2 - 1] + t[reps / 2]) / 2;
            if (me != 0)
                continue;
            if (test == T_BW)
                printf("RESULT tool=oshmem test=put_bw bytes=%zu window=%d iters=%ld bw_MBps=%.1f\n", size, window,
                       iters, (double)size * window * iters / med / 1e6);
            else
                printf("RESULT tool=oshmem test=%s bytes=%zu iters=%ld lat_us=%.3f\n",
                       test == T_PUT ? "put_lat" : test == T_GET ? "get_lat" : "amo_lat", test == T_AMO ? 8 : size,
                       iters, med / (double)iters / (test == T_PUT ? 2 : 1) * 1e6);
            fflush(stdout);
        }
    }
    shmem_barrier_all();
    shmem_finalize();
    return 0;
}
