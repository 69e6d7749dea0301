/* A small MPI program: every rank allocates its part of a field,
 * initialises it (its first touch) and updates it in a loop with a halo
 * exchange between neighbours. Run one rank with its memory bound to
 * another node (numactl --membind) and `locus profile --merge` names that
 * rank, `field` and the cause (tests/vm/prof_mpi_check.sh). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define FIELD_BYTES (24u << 20)
#define STEPS 4

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    size_t n = FIELD_BYTES / sizeof(double);
    double *field = malloc(n * sizeof *field);
    if (!field)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (size_t i = 0; i < n; i++)
        field[i] = rank + (double)(i % 1000) * 1e-3; /* FIRST_TOUCH */
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    for (int s = 0; s < STEPS; s++) {
        double halo = 0;
        MPI_Sendrecv(&field[n - 1], 1, MPI_DOUBLE, right, 0, &halo, 1, MPI_DOUBLE, left, 0, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        field[0] = 0.5 * (field[0] + halo);
        for (size_t i = 1; i < n; i++)
            field[i] = 0.5 * (field[i] + field[i - 1]); /* UPDATE_LOOP */
    }
    double mine = field[n / 2], all = 0;
    MPI_Reduce(&mine, &all, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("field: %d ranks, checksum %.6f\n", size, all);
    free(field);
    MPI_Finalize();
    return 0;
}
