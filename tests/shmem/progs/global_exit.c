/* shmem_global_exit: the last PE calls it with status 99 while the others
 * wait in a barrier that can never complete; every PE ends, the launcher
 * reports status 99, and output flushed before is kept. */
#include "tcommon.h"
#include <unistd.h>

int main(void)
{
    t_init();
    shmem_barrier_all();
    if (t_me == 0) {
        printf("before global_exit: ok\n");
        fflush(stdout);
    }
    shmem_barrier_all();
    if (t_me == t_npes - 1)
        shmem_global_exit(99);
    shmem_barrier_all(); /* never completes for the others */
    for (;;)
        sleep(1);
    return 0;
}
