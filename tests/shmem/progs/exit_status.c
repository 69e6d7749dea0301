/* A PE that calls exit() with a nonzero status without shmem_finalize,
 * while the others wait in shmem_barrier_all: the job ends with that status
 * and the barrier never completes for the others (the PE never reached
 * it). Before this was handled, the exiting PE's finalize-at-exit took the
 * place of its barrier call, the others went on, and the job hung in
 * finalize. At 1 PE the status is simply the job's. */
#include "tcommon.h"
#include <unistd.h>

int main(void)
{
    t_init();
    shmem_barrier_all();
    if (t_me == 0) {
        printf("before exit: ok\n");
        fflush(stdout);
    }
    shmem_barrier_all();
    if (t_me == t_npes - 1)
        exit(7); /* no shmem_finalize */
    shmem_barrier_all(); /* never completes for the others */
    if (t_me == 0) {
        printf("barrier completed without PE %d: FAIL\n", t_npes - 1);
        fflush(stdout);
    }
    for (;;)
        sleep(1);
    return 0;
}
