/* <shmemx.h>: the extensions other implementations give (Sandia OpenSHMEM,
 * OSSS) that programs call: shmemx_wtime, a monotonic time in seconds. */
#include "tcommon.h"

#include <shmemx.h>
#include <pshmem.h>
#include <time.h>

int main(void)
{
    t_init();
#ifndef HAVE_SHMEMX_WTIME
    CHECK(0, "HAVE_SHMEMX_WTIME is not defined");
#endif
    double t0 = shmemx_wtime();
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
    double t1 = shmemx_wtime(), t2 = pshmemx_wtime();
    CHECK(t1 - t0 >= 0.019 && t1 - t0 < 5.0, "20 ms sleep measured %.6f s", t1 - t0);
    CHECK(t2 >= t1, "not monotonic: %.9f then %.9f", t1, t2);
    t_section("shmemx_wtime");
    return t_finish();
}
