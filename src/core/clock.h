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

/* The nap of a poll loop whose wait has lasted `waited_ns`: 1/32 of that,
 * from min_ns up to 1 ms. A long wait then wakes its CPU rarely (every
 * wake-up is kernel work on a CPU that a software NIC's transport or an
 * oversubscribed peer needs: under TCG, a target PE napping 20 us made
 * Soft-RoCE answer READs ~1.3x slower than an idle one) and notices its
 * event at most ~3% of the time already waited late. */
static inline uint64_t lc_backoff_ns(uint64_t waited_ns, uint64_t min_ns)
{
    uint64_t ns = waited_ns / 32;
    return ns < min_ns ? min_ns : ns > 1000000 ? 1000000 : ns;
}

#endif
