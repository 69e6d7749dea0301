/* Internal: the one monotonic clock. Header-only so that the profiler's
 * preload shim (a separate small library) can use it too. */
#ifndef LOCUS_CORE_CLOCK_H
#define LOCUS_CORE_CLOCK_H

#include <stdint.h>
#include <time.h>

/* Nanoseconds of CLOCK_MONOTONIC (vDSO: ~20 ns, no system call). */
static inline uint64_t lc_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline double lc_now_s(void) { return (double)lc_now_ns() * 1e-9; }

/* Sleep for `ns` nanoseconds (restarted after a signal). */
static inline void lc_sleep_ns(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

#endif
