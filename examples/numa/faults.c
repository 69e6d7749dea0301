/* First touch of 256 MiB of fresh 4 KiB pages, one thread: the time per
 * page fault, plain or under the first-touch sampler (per-sample cost in
 * docs/PERFORMANCE.md). */
#include <stdio.h>
#include <sys/mman.h>
#include <time.h>

#define SIZE (256ul << 20)

int main(void)
{
    char *p = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return 1;
    madvise(p, SIZE, MADV_NOHUGEPAGE);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (size_t i = 0; i < SIZE; i += 4096)
        p[i] = 1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ns = (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec);
    printf("faults: %.0f ns per first touch (%lu pages)\n", ns / (double)(SIZE / 4096), SIZE / 4096);
    return 0;
}
