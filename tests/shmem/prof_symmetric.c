/* `locus profile` of an OpenSHMEM program names symmetric objects by their
 * shmem_malloc / shmem_calloc site (test shmem_profile_names): "grid" and
 * "halo" must appear as heap variables of the right sizes. */
#include <shmem.h>
#include <stdio.h>
#include <string.h>
int main(void)
{
    shmem_init();
    size_t n = 16 << 20;
    double *grid = shmem_malloc(n * sizeof(double));
    for (size_t i = 0; i < n; i++)
        grid[i] = (double)i;
    long *halo = shmem_calloc(1 << 20, sizeof(long));
    shmem_barrier_all();
    double s = 0;
    for (int r = 0; r < 4; r++)
        for (size_t i = 0; i < n; i += 8)
            s += grid[i] + (double)halo[i % (1 << 20)];
    if (shmem_my_pe() == 0)
        printf("sum %g\n", s);
    shmem_free(halo);
    shmem_free(grid);
    shmem_finalize();
    return 0;
}
