/* osu_mpi: OSU-style MPI benchmarks between ranks 0 and 1, the peers' side of
 * `locus bench pingpong|bw|msgrate` (same loops, same iteration budget, same
 * output), built by research/peers/compare.py with mpicc.openmpi and mpicc.mpich.
 *   lat      ping-pong, one-way latency = round trip / 2
 *   bw       windows of --window MPI_Isend (receiver MPI_Irecv), MPI_Waitall,
 *            then a 4-byte ack, like osu_bw; MB/s = 1e6 B/s
 *   msgrate  the same window loop reported as messages per second
 * Every figure is the median of --reps repetitions (after one warm-up).
 * --json prints [{"size", "lat_us", "mbps", "msgps"}, ...], --tsv a header line
 * and one tab-separated line per size. */
#include <mpi.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { LAT, BW, MSGRATE };
enum { OUT_TEXT, OUT_JSON, OUT_TSV };

#define MAX_SIZES 64

typedef struct {
    int what, out, reps, window, nsizes;
    size_t sizes[MAX_SIZES];
} opts_t;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int parse_size(const char *s, size_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *s == '-')
        return -1;
    if (*end == 'K' || *end == 'k')
        v <<= 10, end++;
    else if (*end == 'M' || *end == 'm')
        v <<= 20, end++;
    if (*end || v > (1ull << 30))
        return -1;
    *out = (size_t)v;
    return 0;
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: mpirun -np 2 osu_mpi lat|bw|msgrate [--sizes LIST | --min S --max S]\n"
            "         [--reps R] [--window W] [--json | --tsv]\n"
            "  --sizes  comma-separated sizes (K/M suffixes); default powers of two from 0\n"
            "           (lat) or 8 to 4M (lat, bw) or 64K (msgrate)\n"
            "  --reps   repetitions, the median is reported (default 7)\n"
            "  --window sends in flight for bw/msgrate (default 64)\n");
}

/* Returns -1 to run, else an exit code. Only rank 0 prints. */
static int parse_args(int argc, char **argv, opts_t *o, int me)
{
    if (argc < 2) {
        if (!me)
            usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        if (!me)
            usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "lat"))
        o->what = LAT;
    else if (!strcmp(argv[1], "bw"))
        o->what = BW;
    else if (!strcmp(argv[1], "msgrate"))
        o->what = MSGRATE;
    else {
        if (!me)
            fprintf(stderr, "osu_mpi: unknown benchmark '%s': expected lat, bw or msgrate\n", argv[1]);
        return 2;
    }
    size_t lo = o->what == LAT ? 0 : 8, hi = o->what == MSGRATE ? 64u << 10 : 4u << 20;
    int list = 0;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end;
        if (!strcmp(a, "--json")) {
            o->out = OUT_JSON;
        } else if (!strcmp(a, "--tsv")) {
            o->out = OUT_TSV;
        } else if (!strcmp(a, "--sizes") && v) {
            char buf[1024];
            snprintf(buf, sizeof buf, "%s", v);
            o->nsizes = 0;
            for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
                if (o->nsizes == MAX_SIZES || parse_size(t, &o->sizes[o->nsizes])) {
                    if (!me)
                        fprintf(stderr, "osu_mpi: --sizes '%s': expected up to %d sizes <= 1G, "
                                "e.g. 8,1K,64K\n", v, MAX_SIZES);
                    return 2;
                }
                o->nsizes++;
            }
            list = 1;
            i++;
        } else if ((!strcmp(a, "--min") || !strcmp(a, "--max")) && v) {
            if (parse_size(v, !strcmp(a, "--min") ? &lo : &hi)) {
                if (!me)
                    fprintf(stderr, "osu_mpi: %s '%s': expected a size <= 1G\n", a, v);
                return 2;
            }
            i++;
        } else if ((!strcmp(a, "--reps") || !strcmp(a, "--window")) && v) {
            long x = strtol(v, &end, 10);
            if (*end || end == v || x < 1 || x > 4096) {
                if (!me)
                    fprintf(stderr, "osu_mpi: %s '%s': expected 1..4096\n", a, v);
                return 2;
            }
            *(!strcmp(a, "--reps") ? &o->reps : &o->window) = (int)x;
            i++;
        } else {
            if (!me) {
                fprintf(stderr, "osu_mpi: unknown option '%s'\n", a);
                usage(stderr);
            }
            return 2;
        }
    }
    if (!list) {
        o->nsizes = 0;
        if (lo == 0)
            o->sizes[o->nsizes++] = 0;
        for (size_t s = lo ? lo : 1; s <= hi && o->nsizes < MAX_SIZES; s *= 2)
            o->sizes[o->nsizes++] = s;
    }
    return -1;
}

/* Iterations per repetition: ~4 ms of traffic, the budget `locus bench` uses. */
static int iters_for(const opts_t *o, size_t size)
{
    double per = o->what == LAT ? 0.3e-6 + size / 10e9 : o->window * (0.05e-6 + size / 20e9);
    int it = (int)(4e-3 / per);
    return it < 10 ? 10 : it > 20000 ? 20000 : it;
}

static double run_lat(int me, char *sb, char *rb, size_t size, int iters)
{
    int peer = 1 - me;
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        if (me == 0) {
            MPI_Send(sb, (int)size, MPI_CHAR, peer, 1, MPI_COMM_WORLD);
            MPI_Recv(rb, (int)size, MPI_CHAR, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(rb, (int)size, MPI_CHAR, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(sb, (int)size, MPI_CHAR, peer, 1, MPI_COMM_WORLD);
        }
    }
    return MPI_Wtime() - t0;
}

static double run_window(int me, char *sb, char *rb, size_t size, int iters, int w, MPI_Request *req)
{
    int peer = 1 - me;
    char ack[4] = {0};
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        for (int k = 0; k < w; k++) {
            if (me == 0)
                MPI_Isend(sb, (int)size, MPI_CHAR, peer, 2, MPI_COMM_WORLD, &req[k]);
            else
                MPI_Irecv(rb, (int)size, MPI_CHAR, peer, 2, MPI_COMM_WORLD, &req[k]);
        }
        MPI_Waitall(w, req, MPI_STATUSES_IGNORE);
        if (me == 0)
            MPI_Recv(ack, sizeof ack, MPI_CHAR, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        else
            MPI_Send(ack, sizeof ack, MPI_CHAR, peer, 3, MPI_COMM_WORLD);
    }
    return MPI_Wtime() - t0;
}

static void print_row(const opts_t *o, int first, size_t size, double lat_us, double mbps,
                      double msgps)
{
    if (o->out == OUT_JSON)
        printf("%s{\"size\": %zu, \"lat_us\": %.4f, \"mbps\": %.1f, \"msgps\": %.0f}",
               first ? "" : ", ", size, lat_us, mbps, msgps);
    else if (o->out == OUT_TSV)
        printf("%zu\t%.4f\t%.1f\t%.0f\n", size, lat_us, mbps, msgps);
    else
        printf("  %10zu %12.3f %12.1f %14.0f\n", size, lat_us, mbps, msgps);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    opts_t o = {.reps = 7, .window = 64};
    int rc = parse_args(argc, argv, &o, me);
    if (rc < 0 && np != 2) {
        if (!me)
            fprintf(stderr, "osu_mpi: needs exactly 2 ranks, got %d (mpirun -np 2)\n", np);
        rc = 2;
    }
    if (rc >= 0) {
        MPI_Finalize();
        return rc;
    }
    size_t maxs = 1;
    for (int i = 0; i < o.nsizes; i++)
        maxs = o.sizes[i] > maxs ? o.sizes[i] : maxs;
    char *sb = NULL, *rb = NULL;
    MPI_Request *req = calloc((size_t)o.window, sizeof *req);
    double *t = calloc((size_t)o.reps, sizeof *t);
    if (posix_memalign((void **)&sb, 4096, maxs) || posix_memalign((void **)&rb, 4096, maxs) ||
        !req || !t) {
        fprintf(stderr, "osu_mpi: out of memory for %zu-byte buffers\n", maxs);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(sb, 0xa5, maxs);
    memset(rb, 0, maxs);
    if (me == 0 && o.out == OUT_TEXT)
        printf("# osu_mpi %s: 2 ranks, median of %d reps%s\n# %10s %12s %12s %14s\n",
               argv[1], o.reps, o.what == LAT ? ", one-way latency" : "", "size", "lat_us",
               "MB/s", "msg/s");
    else if (me == 0 && o.out == OUT_TSV)
        printf("size\tlat_us\tmbps\tmsgps\n");
    else if (me == 0)
        printf("[");
    for (int si = 0; si < o.nsizes; si++) {
        size_t size = o.sizes[si];
        int iters = iters_for(&o, size);
        for (int rep = -1; rep < o.reps; rep++) { /* rep -1: warm-up */
            int n = rep < 0 ? iters / 4 + 1 : iters;
            MPI_Barrier(MPI_COMM_WORLD);
            double dt = o.what == LAT ? run_lat(me, sb, rb, size, n)
                                      : run_window(me, sb, rb, size, n, o.window, req);
            if (rep >= 0)
                t[rep] = dt;
        }
        qsort(t, (size_t)o.reps, sizeof *t, cmp_double);
        double med = o.reps % 2 ? t[o.reps / 2] : (t[o.reps / 2 - 1] + t[o.reps / 2]) / 2;
        double msgs = o.what == LAT ? 2.0 * iters : (double)iters * o.window;
        double lat_us = med / msgs * 1e6, msgps = msgs / med, mbps = size * msgps / 1e6;
        if (me == 0)
            print_row(&o, si == 0, size, lat_us, mbps, msgps);
    }
    if (me == 0 && o.out == OUT_JSON)
        printf("]\n");
    free(sb);
    free(rb);
    free(req);
    free(t);
    MPI_Finalize();
    return 0;
}
