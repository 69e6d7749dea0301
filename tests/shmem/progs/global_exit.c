/* shmem_global_exit: the last PE calls it with status 99 while the others
 * wait in a barrier that can never complete; every PE ends, the launcher
 * reports status 99, and output flushed before is kept (global_exit0.c: the
 * same with status 0, which the launcher reports as success). */
#include "tcommon.h"
#include <unistd.h>

#ifndef T_EXIT_STATUS
#define T_EXIT_STATUS 99
#endif

int main(void)
{
    t_init();
    shmem_barrier_all();
    if (t_me == 0) {
        printf("before global_exit: ok\ndone\n"); /* all this program prints: the rest must never run */
        fflush(stdout);
    }
    shmem_barrier_all();
    if (t_me == t_npes - 1)
        shmem_global_exit(T_EXIT_STATUS);
    shmem_barrier_all(); /* never completes for the others */
    for (;;)
        sleep(1);
    return 0;
}
