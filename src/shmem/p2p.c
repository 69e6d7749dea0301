/* Point-to-point synchronization: wait_until, test and their _all, _any,
 * _some and _vector forms. A wait re-loads the variable with an acquire
 * load (updates come from CPU stores or atomics on this node and from the
 * NIC's writes), relaxes (lshm_relax: pause, yield, nap) and drives locus
 * rma now and then (NIC completions; a peer that died ends the wait with a
 * message instead of a hang). */
#include "shmem/shmem_internal.h"

#include "core/clock.h"

#include <sched.h>
#include <stdint.h>
#include <stdlib.h>

#define SPIN_BEFORE_YIELD 2048u /* polls of load + pause: ~50 us on Zen 4 (pause ~25 ns) */
#define SPIN_BEFORE_SLEEP 65536u /* ~ms of spinning: the wait is long */
#define OWN_CPU_SPIN_NS 1000000u   /* PEs on cpus of their own: spin for 1 ms, */
#define OWN_CPU_SLEEP_NS 20000000u /* then yield, and nap from 20 ms (as rma's waits) */

static _Thread_local uint64_t long_since; /* this thread's current wait became long */

/* Long waits nap between polls, naps growing with the wait: a PE spinning
 * on every CPU of a node can starve the kernel's own work (Soft-RoCE runs its
 * transport in softirq context: starved, it misses ACK deadlines and the
 * link fails; woken every 20 us, it answered READs 1.2-1.3x slower). */
static void nap(uint64_t waited)
{
    lc_sleep_ns(lc_backoff_ns(waited, 20000)); /* 20 us, growing to 1 ms */
}

/* A one-node, single-threaded job whose PEs have cpus of their own
 * (lshm.spin_long): a peer or thread we wait for is not kept off its cpu by
 * us, so spinning on costs nothing it needs, while a yield hands our cpu to
 * whatever else runs here (other jobs' processes) for a time slice: beside
 * 2-4 busy loops, a bound 2-PE ping-pong (sping) had median round trips
 * 4-15x longer when it yielded after 2048 polls than when it spun for 1 ms
 * (research/LOG.md, 2026-11-27, "waits under outside load"). */
static void relax_own_cpu(unsigned s)
{
    uint64_t now = lc_now_ns();
    if (s == SPIN_BEFORE_YIELD + 1)
        long_since = now;
    uint64_t waited = now - long_since;
    if (waited < OWN_CPU_SPIN_NS)
        __builtin_ia32_pause();
    else if (waited < OWN_CPU_SLEEP_NS)
        sched_yield();
    else
        nap(waited - OWN_CPU_SLEEP_NS);
}

/* Otherwise another process of the job may need our cpu: yield after a
 * short spin (at once when the node has more PEs than cpus), nap after many
 * polls. */
void lshm_relax(const char *call, unsigned *spins)
{
    unsigned s = ++*spins;
    if ((s & 15u) == 0) /* NIC completions, peers' shared copies (join them soon), liveness */
        lshm_progress(call);
    if (s <= SPIN_BEFORE_YIELD && !lshm.oversubscribed) {
        __builtin_ia32_pause();
    } else if (lshm.spin_long) {
        relax_own_cpu(s);
    } else if (s > SPIN_BEFORE_SLEEP) {
        uint64_t now = lc_now_ns();
        if (s == SPIN_BEFORE_SLEEP + 1)
            long_since = now;
        nap(now - long_since);
    } else {
        sched_yield();
    }
}

static inline uint64_t load_width(const volatile void *p, int width)
{
    switch (width) {
    case 2: return __atomic_load_n((const volatile uint16_t *)p, __ATOMIC_ACQUIRE);
    case 4: return __atomic_load_n((const volatile uint32_t *)p, __ATOMIC_ACQUIRE);
    default: return __atomic_load_n((const volatile uint64_t *)p, __ATOMIC_ACQUIRE);
    }
}

static inline int64_t sext(uint64_t v, int width)
{
    switch (width) {
    case 2: return (int16_t)v;
    case 4: return (int32_t)v;
    default: return (int64_t)v;
    }
}
static inline uint64_t zext(uint64_t v, int width)
{
    return width == 8 ? v : v & ((1ull << (8 * width)) - 1);
}

bool lshm_cmp_u64(int cmp, uint64_t v, uint64_t ref, int width, bool is_signed)
{
    int c;
    if (is_signed) {
        int64_t a = sext(v, width), b = sext(ref, width);
        c = a < b ? -1 : a > b;
    } else {
        uint64_t a = zext(v, width), b = zext(ref, width);
        c = a < b ? -1 : a > b;
    }
    switch (cmp) {
    case SHMEM_CMP_EQ: return c == 0;
    case SHMEM_CMP_NE: return c != 0;
    case SHMEM_CMP_GT: return c > 0;
    case SHMEM_CMP_GE: return c >= 0;
    case SHMEM_CMP_LT: return c < 0;
    case SHMEM_CMP_LE: return c <= 0;
    }
    return false;
}

static void check_cmp(const char *call, int cmp)
{
    if (cmp < SHMEM_CMP_EQ || cmp > SHMEM_CMP_LE)
        lshm_fatal(call, "comparison %d: expected SHMEM_CMP_EQ, _NE, _GT, _GE, _LT or _LE", cmp);
}

static inline bool sat(const void *ivar, int width, bool sgn, int cmp, uint64_t ref)
{
    return lshm_cmp_u64(cmp, load_width(ivar, width), ref, width, sgn);
}

static void wait1(const char *call, const volatile void *ivar, int width, bool sgn, int cmp, uint64_t ref)
{
    check_cmp(call, cmp);
    unsigned spins = 0;
    while (!sat((const void *)ivar, width, sgn, cmp, ref))
        lshm_relax(call, &spins);
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
}

/* The _all/_any/_some engine over n variables of `width` bytes; ref[i] per
 * element (vector) or ref[0] for all. mode 0 all, 1 any, 2 some. Returns:
 * all: 1 when satisfied; any: index or SIZE_MAX; some: count in idx[]. */
static size_t scan(const char *ivars, size_t n, const int *status, int width, bool sgn, int cmp,
                   const uint64_t *ref, bool vec, int mode, size_t *idx, bool *any_active)
{
    size_t found = 0;
    *any_active = false;
    for (size_t i = 0; i < n; i++) {
        if (status && status[i])
            continue;
        *any_active = true;
        bool ok = sat(ivars + i * (size_t)width, width, sgn, cmp, ref[vec ? i : 0]);
        if (mode == 0 && !ok)
            return 0;
        if (mode == 1 && ok)
            return i;
        if (mode == 2 && ok)
            idx[found++] = i;
    }
    return mode == 0 ? 1 : mode == 1 ? SIZE_MAX : found;
}

static size_t multi(const char *call, const void *ivars, size_t n, const int *status, int width, bool sgn, int cmp,
                    const uint64_t *ref, bool vec, int mode, size_t *idx, bool wait)
{
    check_cmp(call, cmp);
    unsigned spins = 0;
    for (;;) {
        bool active;
        size_t r = scan(ivars, n, status, width, sgn, cmp, ref, vec, mode, idx, &active);
        if (!active) /* nothing to wait for */
            return mode == 0 ? 1 : mode == 1 ? SIZE_MAX : 0;
        bool done = mode == 0 ? r == 1 : mode == 1 ? r != SIZE_MAX : r > 0;
        if (done || !wait) {
            __atomic_thread_fence(__ATOMIC_ACQUIRE);
            return r;
        }
        lshm_relax(call, &spins);
    }
}

#define CALL lshm_name(__func__)
#define ISSIGNED(T) ((T)-1 < (T)1) /* (T)-1 < 0 warns for unsigned T */

/* Reference values as 64-bit patterns (a vector is converted element by
 * element; small vectors on the stack). */
#define VREFS(T, vals, n, out)                                                                     \
    uint64_t _stack[64] = {0}, *out = (n) <= 64 ? _stack : malloc((n) * sizeof(uint64_t));               \
    if (!out)                                                                                      \
        lshm_fatal(CALL, "out of memory for %zu comparison values", (size_t)(n));                 \
    for (size_t _i = 0; _i < (n); _i++)                                                            \
        out[_i] = (uint64_t)(vals)[_i];
#define VFREE(out) if (out != _stack) free(out);

#define DEF_P2P(T, N)                                                                              \
    LSHM_DEF(void, shmem_##N##_wait_until, (volatile T * ivar, int cmp, T cmp_value))              \
    { wait1(CALL, ivar, sizeof(T), ISSIGNED(T), cmp, (uint64_t)cmp_value); }                       \
    LSHM_DEF(int, shmem_##N##_test, (volatile T * ivar, int cmp, T cmp_value))                     \
    {                                                                                              \
        check_cmp(CALL, cmp);                                                                      \
        unsigned spins = 63; /* one progress call per test */                                      \
        if (sat((const void *)ivar, sizeof(T), ISSIGNED(T), cmp, (uint64_t)cmp_value)) {           \
            __atomic_thread_fence(__ATOMIC_ACQUIRE);                                               \
            return 1;                                                                              \
        }                                                                                          \
        lshm_relax(CALL, &spins);                                                                  \
        return 0;                                                                                  \
    }                                                                                              \
    LSHM_DEF(void, shmem_##N##_wait_until_all, (T * ivars, size_t nelems, const int *status, int cmp, T v)) \
    {                                                                                              \
        uint64_t r = (uint64_t)v;                                                                  \
        multi(CALL, ivars, nelems, status, sizeof(T), ISSIGNED(T), cmp, &r, false, 0, NULL, true); \
    }                                                                                              \
    LSHM_DEF(size_t, shmem_##N##_wait_until_any, (T * ivars, size_t nelems, const int *status, int cmp, T v)) \
    {                                                                                              \
        uint64_t r = (uint64_t)v;                                                                  \
        return multi(CALL, ivars, nelems, status, sizeof(T), ISSIGNED(T), cmp, &r, false, 1, NULL, true); \
    }                                                                                              \
    LSHM_DEF(size_t, shmem_##N##_wait_until_some,                                                  \
             (T * ivars, size_t nelems, size_t * indices, const int *status, int cmp, T v))        \
    {                                                                                              \
        uint64_t r = (uint64_t)v;                                                                  \
        return multi(CALL, ivars, nelems, status, sizeof(T), ISSIGNED(T), cmp, &r, false, 2, indices, true); \
    }                                                                                              \
    LSHM_DEF(void, shmem_##N##_wait_until_all_vector,                                              \
             (T * ivars, size_t nelems, const int *status, int cmp, T *vals))                \
    {                                                                                              \
        VREFS(T, vals, nelems, r)                                                                  \
        multi(CALL, ivars, nelems, status, sizeof(T), ISSIGNED(T), cmp, r, true, 0, NULL, true);   \
        VFREE(r)                                                                                   \
    }                                                                                              \
    LSHM_DEF(size_t, shmem_##N##_wait_until_any_vector,                                            \
             (T * ivars, size_t nelems, const int *status, int cmp, T *vals))                \
    {                                                                                              \
        VREFS(T, vals, nelems, r)                                                                  \
        size_t x = multi(CALL, ivars, nelems, status, sizeof(T), ISSIGNED(T), cmp, r, true, 1, NULL, true); \
        VFREE(r)                                                                                   \
        return x;                                                                                  \
    }                                                                                              \
    LSHM_DEF(size_t, shmem_##N##_wait_until_some_vector,                                           \
             (T * ivars, size_t nelems, size_t * indices, const int *status, int cmp, T *vals)) \
    {                                                                                              \
        VREFS(T, vals, nelems, r)                                                                  \
        size_t x = multi(CALL, ivars, nelems, status, sizeof(T), ISSIGNED(T), cmp, r, true, 2, indices, true); \
        VFREE(r)                                                                                   \
        return x;                                                                                  \
    }                                                                                              \
    LSHM_DEF(int, shmem_##N##_test_all, (T * ivars, size_t nelems, const int *status, int cmp, T v)) \
    {                                                                                              \
        uint64_t r = (uint64_t)v;                                                                  \
        return (int)multi(CALL, ivars, nelems, status, sizeof(T), ISSIGNED(T), cmp, &r, false, 0, NULL, false); \
    }                                                                                              \
    LSHM_DEF(size_t, shmem_##N##_test_any, (T * ivars, size_t nelems, const int *status, int cmp, T v)) \
    {                                                                                              \
        uint64_t r = (uint64_t)v;                                                                  \
        return multi(CALL, ivars, nelems, status, sizeof(T), ISSIGNED(T), cmp, &r, false, 1, NULL, false); \
    }                                                                                              \
    LSHM_DEF(size_t, shmem_##N##_test_some,                                                        \
             (T * ivars, size_t nelems, size_t * indices, const int *status, int cmp, T v))        \
    {                                                                                              \
        uint64_t r = (uint64_t)v;                                                                  \
        return multi(CALL, ivars, nelems, status, sizeof(T), ISSIGNED(T), cmp, &r, false, 2, indices, false); \
    }                                                                                              \
    LSHM_DEF(int, shmem_##N##_test_all_vector,                                                     \
             (T * ivars, size_t nelems, const int *status, int cmp, T *vals))                \
    {                                                                                              \
        VREFS(T, vals, nelems, r)                                                                  \
        int x = (int)multi(CALL, ivars, nelems, status, sizeof(T), ISSIGNED(T), cmp, r, true, 0, NULL, false); \
        VFREE(r)                                                                                   \
        return x;                                                                                  \
    }                                                                                              \
    LSHM_DEF(size_t, shmem_##N##_test_any_vector,                                                  \
             (T * ivars, size_t nelems, const int *status, int cmp, T *vals))                \
    {                                                                                              \
        VREFS(T, vals, nelems, r)                                                                  \
        size_t x = multi(CALL, ivars, nelems, status, sizeof(T), ISSIGNED(T), cmp, r, true, 1, NULL, false); \
        VFREE(r)                                                                                   \
        return x;                                                                                  \
    }                                                                                              \
    LSHM_DEF(size_t, shmem_##N##_test_some_vector,                                                 \
             (T * ivars, size_t nelems, size_t * indices, const int *status, int cmp, T *vals)) \
    {                                                                                              \
        VREFS(T, vals, nelems, r)                                                                  \
        size_t x = multi(CALL, ivars, nelems, status, sizeof(T), ISSIGNED(T), cmp, r, true, 2, indices, false); \
        VFREE(r)                                                                                   \
        return x;                                                                                  \
    }
_LSHM_P2P_TYPES(DEF_P2P)

/* short and unsigned short: every form (1.6; 1.5 kept only wait_until and
 * test, deprecated). */
_LSHM_P2P_OLD_TYPES(DEF_P2P)

/* Deprecated: wait while *ivar == value. */
#define DEF_WAIT(T, N)                                                                             \
    LSHM_DEF(void, shmem_##N##_wait, (volatile T * ivar, T value))                                 \
    { wait1(CALL, ivar, sizeof(T), ISSIGNED(T), SHMEM_CMP_NE, (uint64_t)value); }
DEF_WAIT(short, short)
DEF_WAIT(int, int)
DEF_WAIT(long, long)
DEF_WAIT(long long, longlong)
LSHM_DEF(void, shmem_wait, (volatile long *ivar, long value)) { wait1(CALL, ivar, sizeof(long), true, SHMEM_CMP_NE, (uint64_t)value); }
LSHM_DEF(void, shmem_wait_until, (volatile long *ivar, int cmp, long value))
{
    wait1(CALL, ivar, sizeof(long), true, cmp, (uint64_t)value);
}
