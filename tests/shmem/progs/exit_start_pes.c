/* start_pes needs no shmem_finalize: the library is finalized implicitly at
 * program exit, collectively, whatever main returns (OpenSHMEM 1.5,
 * start_pes). NAS DT does this: every PE returns 1 from main, and a PE
 * without work gets there while the others still compute. Here the last PE
 * returns 3 at once; the others work on (a pause, puts among themselves),
 * PE 0 reports, and every PE returns 3: the job's status is 3 and PE 0's
 * report is there. Before this was handled, locus ended the job when the
 * idle PE left (its nonzero status was taken for an error exit).
 * With an argument: an error exit that the others wait for (see below). */
#include <shmem.h>

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static long got[4]; /* symmetric: PE i of the busy ones writes got[i] on PE 0 */
static long never;  /* symmetric: what PE 0 waits for in the "error-exit" case */

int main(int argc, char **argv)
{
    start_pes(0);
    int me = _my_pe(), npes = _num_pes();
    if (argc > 1) { /* "error-exit": the last PE exits on an error while PE 0
                       waits for it: the job cannot end, the last PE says why */
        if (me == npes - 1)
            exit(7);
        if (me == 0)
            shmem_long_wait_until(&never, SHMEM_CMP_NE, 0);
        return 0;
    }
    int busy = npes > 1 ? npes - 1 : 1; /* PEs 0..busy-1 work */
    if (me >= busy)
        return 3; /* no work: leaves main at once */
    usleep(300 * 1000); /* the idle PE is long gone by now */
    if (me < 4)
        shmem_long_p(&got[me], me + 1, 0);
    shmem_quiet();
    if (me == 0) {
        /* no barrier: the idle PE never calls one; wait for the others' puts */
        for (int pe = 0; pe < busy && pe < 4; pe++)
            shmem_long_wait_until(&got[pe], SHMEM_CMP_EQ, pe + 1);
        printf("work after the idle PE left: ok\n");
        fflush(stdout);
    }
    return 3;
}
