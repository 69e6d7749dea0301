/* Time to a usable symmetric heap (docs/PERFORMANCE.md): shmem_init,
 * shmem_malloc nearly the whole heap (SHMEM_SYMMETRIC_SIZE minus 64 MiB for
 * the implementation's own use), write every byte, barrier, finalize; or,
 * with --init-only, init and finalize alone. Timed from outside (launch to
 * exit); the program prints its own phases too:
 *   RESULT impl=<vendor> pes=N heap=<bytes> init=<s> malloc=<s> touch=<s> finalize=<s>
 * Build with either implementation's wrapper (locus-oshcc, oshcc).
 * --plain: no OpenSHMEM at all, the floor any program pays for the same
 * work: private anonymous memory of the same size with MADV_HUGEPAGE, the
 * same memset (the kernel zeroes each huge page at its first touch, then
 * memset writes it); start one per CPU beside each other like the PEs.
 * --pieces (before the other options): write every byte in 2 MiB memsets,
 * first to last, the way an initialisation loop writes (ordinary stores
 * that find the lines the kernel has just zeroed still in cache). One memset
 * of gigabytes streams past them with non-temporal stores instead: on the
 * Zen 4 host of 2026-11-28 the first write of fresh huge pages took 1.8x the
 * kernel's zeroing alone that way, 1.35-1.5x in pieces (research/LOG.md). */
#include <shmem.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#define PIECE ((size_t)2 << 20) /* --pieces: one huge page per memset */
static int pieces;

static void fill(char *p, size_t len)
{
    if (!pieces) {
        memset(p, 1, len);
        return;
    }
    for (size_t o = 0; o < len; o += PIECE)
        memset(p + o, 1, len - o < PIECE ? len - o : PIECE);
}

static int plain(size_t len)
{
    double t0 = now_s();
    char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        perror("heap_time --plain: mmap");
        return 1;
    }
    madvise(p, len, MADV_HUGEPAGE);
    fill(p, len);
    double t1 = now_s();
    munmap(p, len);
    const char *rank = getenv("LOCUS_RANK");
    if (!rank || !strcmp(rank, "0"))
        printf("RESULT impl=plain used=%zu write=%s touch=%.3f\n", len, pieces ? "pieces" : "memset", t1 - t0);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--pieces"))
        pieces = 1, argc--, argv++;
    int init_only = argc > 1 && !strcmp(argv[1], "--init-only");
    const char *hs = getenv("SHMEM_SYMMETRIC_SIZE");
    if (!hs)
        hs = getenv("SMA_SYMMETRIC_SIZE");
    double heap = hs ? strtod(hs, NULL) : 0;
    if (hs && strpbrk(hs, "gG"))
        heap *= 1024.0 * 1024 * 1024;
    else if (hs && strpbrk(hs, "mM"))
        heap *= 1024.0 * 1024;
    size_t len = heap > (128 << 20) ? (size_t)heap - (64 << 20) : (size_t)heap / 2;
    if (argc > 1 && !strcmp(argv[1], "--plain"))
        return plain(len);
    double t0 = now_s();
    shmem_init();
    double t1 = now_s(), t2 = t1, t3 = t1;
    if (!init_only) {
        char *p = shmem_malloc(len);
        t2 = now_s();
        if (!p) {
            fprintf(stderr, "PE %d: shmem_malloc(%zu) failed\n", shmem_my_pe(), len);
            shmem_global_exit(1);
        }
        fill(p, len);
        shmem_barrier_all();
        t3 = now_s();
    }
    char name[SHMEM_MAX_NAME_LEN];
    shmem_info_get_name(name);
    int me = shmem_my_pe(), n = shmem_n_pes();
    shmem_finalize();
    double t4 = now_s();
    if (me == 0)
        printf("RESULT impl=%s pes=%d heap=%.0f used=%zu write=%s init=%.3f malloc=%.3f touch=%.3f finalize=%.3f\n",
               strstr(name, "locus") ? "locus" : "openmpi", n, heap, init_only ? 0 : len, pieces ? "pieces" : "memset",
               t1 - t0, t2 - t1, t3 - t2, t4 - t3);
    return 0;
}
