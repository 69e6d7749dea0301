/* split_probe: do two cores' copies add up? One thread on CPU B copies a
 * reused buffer; then threads on CPUs A and B copy its two halves at once
 * (meeting after every round, as a split message does, and free-running).
 * The shm split copy (LOCUS_SHM_SPLIT) is worth it only where the ratio is
 * well above 1 (here 1.5-2.0x at 256 KiB .. 4 MiB).
 *
 *   split_probe [--cpus A,B] [--reps R] SIZE...   (sizes in bytes, K/M suffixes) */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static unsigned char *src, *dst;
static size_t size;
static long rounds;
static int cpus[2] = {0, 1};
static atomic_int go;
static atomic_long met[2];

typedef struct { int side; size_t off, len; int meet; } job_t;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void *worker(void *p)
{
    job_t *j = p;
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpus[j->side], &s);
    pthread_setaffinity_np(pthread_self(), sizeof s, &s);
    while (!atomic_load(&go))
        ;
    for (long i = 1; i <= rounds; i++) {
        memcpy(dst + j->off, src + j->off, j->len);
        if (j->meet) { /* both halves done before the next round, like one message */
            atomic_store(&met[j->side], i);
            while (atomic_load(&met[!j->side]) < i)
                ;
        }
    }
    return NULL;
}

/* GB/s of `nthreads` threads copying `size` bytes per round between them. */
static double run(int nthreads, int meet)
{
    pthread_t t[2];
    job_t j[2] = {{1, 0, size, 0}, {0, 0, 0, 0}};
    if (nthreads == 2) {
        j[0] = (job_t){0, 0, size / 2, meet};
        j[1] = (job_t){1, size / 2, size - size / 2, meet};
    }
    atomic_store(&go, 0);
    met[0] = met[1] = 0;
    for (int i = 0; i < nthreads; i++)
        pthread_create(&t[i], NULL, worker, &j[i]);
    double t0 = now();
    atomic_store(&go, 1);
    for (int i = 0; i < nthreads; i++)
        pthread_join(t[i], NULL);
    return (double)size * (double)rounds / (now() - t0) / 1e9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static size_t parse_size(const char *s)
{
    char *e;
    size_t v = strtoull(s, &e, 10);
    return *e == 'K' ? v << 10 : *e == 'M' ? v << 20 : v;
}

int main(int argc, char **argv)
{
    int reps = 7, first = 1;
    for (; first < argc && argv[first][0] == '-'; first += 2) {
        if (first + 1 >= argc)
            break;
        if (!strcmp(argv[first], "--cpus"))
            sscanf(argv[first + 1], "%d,%d", &cpus[0], &cpus[1]);
        else if (!strcmp(argv[first], "--reps"))
            reps = atoi(argv[first + 1]);
    }
    if (first >= argc || reps < 1 || reps > 101) {
        fprintf(stderr, "usage: split_probe [--cpus A,B] [--reps R (1..101)] SIZE...\n");
        return 2;
    }
    printf("# size  one_core_GBs  two_halves_meeting_GBs  two_halves_free_GBs  ratio_meeting  (medians of %d)\n", reps);
    for (int a = first; a < argc; a++) {
        size = parse_size(argv[a]);
        if (size < 128) {
            fprintf(stderr, "split_probe: size '%s': expected at least 128 bytes\n", argv[a]);
            return 2;
        }
        rounds = (long)(2e9 / (double)size) + 1;
        src = aligned_alloc(4096, (size + 4095) & ~(size_t)4095);
        dst = aligned_alloc(4096, (size + 4095) & ~(size_t)4095);
        memset(src, 1, size);
        memset(dst, 2, size);
        double one[101], meet[101], freer[101];
        for (int r = 0; r < reps; r++) { /* interleaved */
            one[r] = run(1, 0);
            meet[r] = run(2, 1);
            freer[r] = run(2, 0);
        }
        qsort(one, (size_t)reps, sizeof *one, cmp);
        qsort(meet, (size_t)reps, sizeof *meet, cmp);
        qsort(freer, (size_t)reps, sizeof *freer, cmp);
        printf("%zu %.1f %.1f %.1f %.2f\n", size, one[reps / 2], meet[reps / 2], freer[reps / 2],
               meet[reps / 2] / one[reps / 2]);
        free(src);
        free(dst);
    }
    return 0;
}
