/* SHMEM_SYMMETRIC_SIZE / SMA_SYMMETRIC_SIZE set the symmetric heap (locus
 * only): argv[1] is the size the test set; a block of nearly that size fits,
 * one of that size plus 8 MiB does not (NULL on every PE). */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    size_t want = argc > 1 ? strtoull(argv[1], NULL, 0) : 0;
    shmem_init();
    void *a = shmem_malloc(want - (1 << 20));
    void *b = shmem_malloc(want + (8 << 20));
    if (shmem_my_pe() == 0)
        printf("heap %zu: nearly all %s, more %s\n", want, a ? "fits" : "does not fit", b ? "fits" : "does not fit");
    shmem_free(a);
    shmem_finalize();
    return a && !b ? 0 : 1;
}
