/* Active-set collectives (the 1.4 interface, deprecated in 1.5 but still
 * required): broadcast, collect, fcollect, alltoall, alltoalls (32 and 64
 * bit) and the TYPE_OP_to_all reductions, on all PEs and on the odd PEs
 * (stride 2), with pSync/pWrk as the spec sizes them. */
#include "tcommon.h"
#include <complex.h>

#define NR 1000 /* reduction length: several pWrk-sized pieces */
static long pSync[SHMEM_REDUCE_SYNC_SIZE > SHMEM_COLLECT_SYNC_SIZE ? SHMEM_REDUCE_SYNC_SIZE : SHMEM_COLLECT_SYNC_SIZE];
static long pSyncA[SHMEM_ALLTOALL_SYNC_SIZE > SHMEM_ALLTOALLS_SYNC_SIZE ? SHMEM_ALLTOALL_SYNC_SIZE : SHMEM_ALLTOALLS_SYNC_SIZE];

static int set_start, set_log, set_size, set_member, set_idx;
static const char *set_name;

static void choose_set(int which)
{
    int me = t_me, npes = t_npes;
    if (which == 0) {
        set_start = 0, set_log = 0, set_size = npes, set_name = "all";
    } else {
        set_start = 1, set_log = 1, set_size = npes / 2, set_name = "odd";
    }
    int stride = 1 << set_log;
    set_member = set_size > 0 && me >= set_start && (me - set_start) % stride == 0 &&
                 (me - set_start) / stride < set_size;
    set_idx = set_member ? (me - set_start) / stride : -1;
}
static int set_pe(int idx) { return set_start + idx * (1 << set_log); }

static void reset_psync(void)
{
    for (size_t i = 0; i < sizeof pSync / sizeof pSync[0]; i++)
        pSync[i] = SHMEM_SYNC_VALUE;
    for (size_t i = 0; i < sizeof pSyncA / sizeof pSyncA[0]; i++)
        pSyncA[i] = SHMEM_SYNC_VALUE;
    shmem_barrier_all();
}

#define BCAST(BITS, UT)                                                                     \
    static void bcast##BITS(void)                                                           \
    {                                                                                       \
        int n = 300, bad = 0;                                                               \
        UT *src = shmem_malloc(n * sizeof(UT)), *dst = shmem_malloc(n * sizeof(UT));        \
        for (int root = 0; root < (set_size ? set_size : 1) && root < 3; root++) {          \
            for (int i = 0; i < n; i++)                                                     \
                src[i] = (UT)(t_me * 1000 + i), dst[i] = (UT)-1;                            \
            reset_psync();                                                                  \
            if (set_member)                                                                 \
                shmem_broadcast##BITS(dst, src, n, root, set_start, set_log, set_size, pSync); \
            shmem_barrier_all();                                                            \
            if (set_member)                                                                 \
                for (int i = 0; i < n; i++)                                                 \
                    bad += set_idx == root ? dst[i] != (UT)-1 : dst[i] != (UT)(set_pe(root) * 1000 + i); \
        }                                                                                   \
        CHECK(!bad, "broadcast%d %s: %d wrong", BITS, set_name, bad);                       \
        shmem_free(src);                                                                    \
        shmem_free(dst);                                                                    \
        t_section("broadcast%d %s", BITS, set_name);                                        \
    }
BCAST(32, uint32_t)
BCAST(64, uint64_t)

#define COLLECT(BITS, UT)                                                                   \
    static void collect##BITS(void)                                                         \
    {                                                                                       \
        int max = T_MAXPE, bad = 0;                                                         \
        UT *src = shmem_malloc(max * sizeof(UT)), *dst = shmem_malloc(max * max * sizeof(UT)); \
        /* collect: PE with set index k contributes k+1 elements */                         \
        int mine = set_idx + 1;                                                             \
        for (int i = 0; i < max; i++)                                                       \
            src[i] = (UT)(t_me * 1000 + i);                                                 \
        for (int i = 0; i < max * max; i++)                                                 \
            dst[i] = (UT)-1;                                                                \
        reset_psync();                                                                      \
        if (set_member)                                                                     \
            shmem_collect##BITS(dst, src, mine, set_start, set_log, set_size, pSync);       \
        shmem_barrier_all();                                                                \
        if (set_member) {                                                                   \
            int o = 0;                                                                      \
            for (int k = 0; k < set_size; k++)                                              \
                for (int i = 0; i <= k; i++)                                                \
                    bad += dst[o++] != (UT)(set_pe(k) * 1000 + i);                          \
            bad += dst[o] != (UT)-1;                                                        \
        }                                                                                   \
        CHECK(!bad, "collect%d %s: %d wrong", BITS, set_name, bad);                         \
        /* fcollect: 7 each */                                                              \
        for (int i = 0; i < max * max; i++)                                                 \
            dst[i] = (UT)-1;                                                                \
        reset_psync();                                                                      \
        if (set_member)                                                                     \
            shmem_fcollect##BITS(dst, src, 7, set_start, set_log, set_size, pSync);         \
        shmem_barrier_all();                                                                \
        bad = 0;                                                                            \
        if (set_member)                                                                     \
            for (int k = 0; k < set_size; k++)                                              \
                for (int i = 0; i < 7; i++)                                                 \
                    bad += dst[k * 7 + i] != (UT)(set_pe(k) * 1000 + i);                    \
        CHECK(!bad, "fcollect%d %s: %d wrong", BITS, set_name, bad);                        \
        shmem_free(src);                                                                    \
        shmem_free(dst);                                                                    \
        t_section("collect/fcollect%d %s", BITS, set_name);                                 \
    }
COLLECT(32, uint32_t)
COLLECT(64, uint64_t)

#define ALLTOALL(BITS, UT)                                                                  \
    static void alltoall##BITS(void)                                                        \
    {                                                                                       \
        int n = 5, bad = 0, sz = set_size ? set_size : 1;                                   \
        UT *src = shmem_malloc(sz * n * 3 * sizeof(UT)), *dst = shmem_malloc(sz * n * 3 * sizeof(UT)); \
        for (int i = 0; i < sz * n * 3; i++)                                                \
            src[i] = (UT)(t_me * 10000 + i), dst[i] = (UT)-1;                               \
        reset_psync();                                                                      \
        if (set_member)                                                                     \
            shmem_alltoall##BITS(dst, src, n, set_start, set_log, set_size, pSyncA);        \
        shmem_barrier_all();                                                                \
        if (set_member) /* block k of dst = block set_idx of member k's src */              \
            for (int k = 0; k < set_size; k++)                                              \
                for (int i = 0; i < n; i++)                                                 \
                    bad += dst[k * n + i] != (UT)(set_pe(k) * 10000 + set_idx * n + i);     \
        CHECK(!bad, "alltoall%d %s: %d wrong", BITS, set_name, bad);                        \
        /* alltoalls: dst stride 3, src stride 2 */                                         \
        for (int i = 0; i < sz * n * 3; i++)                                                \
            dst[i] = (UT)-1;                                                                \
        reset_psync();                                                                      \
        if (set_member)                                                                     \
            shmem_alltoalls##BITS(dst, src, 3, 2, n, set_start, set_log, set_size, pSyncA); \
        shmem_barrier_all();                                                                \
        bad = 0;                                                                            \
        if (set_member)                                                                     \
            for (int k = 0; k < set_size; k++)                                              \
                for (int i = 0; i < n; i++) {                                               \
                    bad += dst[3 * (k * n + i)] != (UT)(set_pe(k) * 10000 + 2 * (set_idx * n + i)); \
                    bad += dst[3 * (k * n + i) + 1] != (UT)-1;                              \
                }                                                                           \
        CHECK(!bad, "alltoalls%d %s: %d wrong", BITS, set_name, bad);                       \
        shmem_free(src);                                                                    \
        shmem_free(dst);                                                                    \
        t_section("alltoall/alltoalls%d %s", BITS, set_name);                               \
    }
ALLTOALL(32, uint32_t)
ALLTOALL(64, uint64_t)

/* Reductions: source value of element i on the member with set index k. */
#define RV(k, i) (((k) + 1) * 3 + (i) % 7)

#define REDUCE(TYPE, NAME, OP, INIT, COMBINE, VAL)                                               \
    static int reduce_##NAME##_##OP(TYPE *src, TYPE *dst, TYPE *wrk, int inplace)           \
    {                                                                                       \
        int bad = 0;                                                                        \
        for (int i = 0; i < NR; i++)                                                        \
            src[i] = (TYPE)VAL(set_idx, i), dst[i] = (TYPE)-1;                               \
        reset_psync();                                                                      \
        if (set_member)                                                                     \
            shmem_##NAME##_##OP##_to_all(inplace ? src : dst, src, NR, set_start, set_log, set_size, \
                                         wrk, pSync);                                       \
        shmem_barrier_all();                                                                \
        TYPE *res = inplace ? src : dst;                                                    \
        if (set_member)                                                                     \
            for (int i = 0; i < NR; i++) {                                                  \
                TYPE acc = (TYPE)(INIT);                                                    \
                for (int k = 0; k < set_size; k++) {                                        \
                    TYPE v = (TYPE)VAL(k, i);                                                \
                    acc = COMBINE;                                                          \
                }                                                                           \
                bad += res[i] != acc;                                                       \
            }                                                                               \
        return bad;                                                                         \
    }

#define ARITH(TYPE, NAME)                                                                  \
    REDUCE(TYPE, NAME, sum, 0, acc + v, RV)                                                 \
    REDUCE(TYPE, NAME, prod, 1, acc * v, PV)                                                \
    REDUCE(TYPE, NAME, max, -1000, (v > acc ? v : acc), MV)                                 \
    REDUCE(TYPE, NAME, min, 1000, (v < acc ? v : acc), MV)
#define BITW(TYPE, NAME)                                                                   \
    REDUCE(TYPE, NAME, and, ~0, acc & v, BV)                                                \
    REDUCE(TYPE, NAME, or, 0, acc | v, BV)                                                  \
    REDUCE(TYPE, NAME, xor, 0, acc ^ v, BV)

/* prod: 1 or 2, exact in every type; max/min: signed, varied; bitwise: bits. */
#define PV(k, i) (1 + ((k) + (i)) % 3 / 2)
#define MV(k, i) ((((k) * 7 + (i) * 13) % 41) - 20)
#define BV(k, i) ((((k) + 1) * 0x1357 + (i) * 0x9a1) & 0x7fff)

ARITH(short, short)
ARITH(int, int)
ARITH(long, long)
ARITH(long long, longlong)
ARITH(float, float)
ARITH(double, double)
ARITH(long double, longdouble)
BITW(short, short)
BITW(int, int)
BITW(long, long)
BITW(long long, longlong)

#define RUN(TYPE, NAME, OP)                                                                 \
    {                                                                                       \
        size_t wn = NR / 2 + 1 > SHMEM_REDUCE_MIN_WRKDATA_SIZE ? NR / 2 + 1 : SHMEM_REDUCE_MIN_WRKDATA_SIZE; \
        TYPE *src = shmem_malloc(NR * sizeof(TYPE)), *dst = shmem_malloc(NR * sizeof(TYPE)); \
        TYPE *wrk = shmem_malloc(wn * sizeof(TYPE));                                        \
        int bad = reduce_##NAME##_##OP(src, dst, wrk, 0);                                   \
        CHECK(!bad, #NAME "_" #OP "_to_all %s: %d wrong", set_name, bad);                   \
        bad = reduce_##NAME##_##OP(src, dst, wrk, 1);                                       \
        CHECK(!bad, #NAME "_" #OP "_to_all in place %s: %d wrong", set_name, bad);          \
        shmem_free(wrk);                                                                    \
        shmem_free(dst);                                                                    \
        shmem_free(src);                                                                    \
        t_section(#NAME "_" #OP "_to_all %s", set_name);                                    \
    }

static void reductions(void)
{
#define ARITH_RUN(TYPE, NAME) RUN(TYPE, NAME, sum) RUN(TYPE, NAME, prod) RUN(TYPE, NAME, max) RUN(TYPE, NAME, min)
#define BITW_RUN(TYPE, NAME) RUN(TYPE, NAME, and) RUN(TYPE, NAME, or) RUN(TYPE, NAME, xor)
    ARITH_RUN(short, short)
    ARITH_RUN(int, int)
    ARITH_RUN(long, long)
    ARITH_RUN(long long, longlong)
    ARITH_RUN(float, float)
    ARITH_RUN(double, double)
    ARITH_RUN(long double, longdouble)
    BITW_RUN(short, short)
    BITW_RUN(int, int)
    BITW_RUN(long, long)
    BITW_RUN(long long, longlong)
}

int main(void)
{
    t_init();
    for (int which = 0; which < 2; which++) {
        choose_set(which);
        bcast32();
        bcast64();
        collect32();
        collect64();
        alltoall32();
        alltoall64();
        reductions();
    }
    return t_finish();
}
