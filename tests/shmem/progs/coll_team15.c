/* Team collectives (1.5, checked against the spec only): broadcast (the
 * root's dest is written too), collect, fcollect, alltoall, alltoalls, the
 * mem forms, every team reduction type and operator, the C11 generic forms,
 * on WORLD and on the team of odd PEs; back-to-back calls into one dest
 * (broadcasts; small reductions and fcollects). */
#include "tcommon.h"
#include <complex.h>

#define NR 300

/* Symmetric buffers, allocated by every PE (shmem_malloc is collective over
 * WORLD), used by the members of the team under test only. */
static int *src, *dst;
static long *lb, *ld;

static void data_colls(shmem_team_t team, const char *tn)
{
    if (team == SHMEM_TEAM_INVALID)
        return;
    int n = shmem_team_n_pes(team), i = shmem_team_my_pe(team), bad = 0;
    for (int root = 0; root < n && root < 3; root++) {
        for (int k = 0; k < 64; k++)
            src[k] = i * 1000 + k, dst[k] = -1;
        shmem_team_sync(team);
        CHECK(shmem_int_broadcast(team, dst, src, 64, root) == 0, "broadcast rc");
        for (int k = 0; k < 64; k++)
            bad += dst[k] != root * 1000 + k;
    }
    CHECK(!bad, "%s broadcast: %d wrong", tn, bad);
    /* back to back into one dest, no sync between: each result right */
    bad = 0;
    for (int r = 0; r < 50; r++) {
        for (int k = 0; k < 8; k++)
            lb[k] = r * 10 + k;
        shmem_long_broadcast(team, ld, lb, 8, r % n);
        for (int k = 0; k < 8; k++)
            bad += ld[k] != r * 10 + k;
    }
    CHECK(!bad, "%s back-to-back broadcasts: %d wrong", tn, bad);
    shmem_broadcastmem(team, dst, src, 10, 0);

    /* collect: member k gives k+1 ints */
    for (int k = 0; k < 64 * n; k++)
        dst[k] = -1;
    shmem_team_sync(team);
    shmem_int_collect(team, dst, src, (size_t)i + 1);
    bad = 0;
    int o = 0;
    for (int k = 0; k < n; k++)
        for (int j = 0; j <= k; j++)
            bad += dst[o++] != k * 1000 + j;
    CHECK(!bad, "%s collect: %d wrong", tn, bad);
    shmem_team_sync(team);
    shmem_fcollectmem(team, dst, src, 5 * sizeof(int));
    bad = 0;
    for (int k = 0; k < n; k++)
        for (int j = 0; j < 5; j++)
            bad += dst[k * 5 + j] != k * 1000 + j;
    CHECK(!bad, "%s fcollectmem: %d wrong", tn, bad);

    /* alltoall: block k of src goes to member k */
    for (int k = 0; k < 4 * n; k++)
        src[k] = i * 1000 + k;
    shmem_team_sync(team);
    shmem_int_alltoall(team, dst, src, 4);
    bad = 0;
    for (int k = 0; k < n; k++)
        for (int j = 0; j < 4; j++)
            bad += dst[k * 4 + j] != k * 1000 + i * 4 + j;
    CHECK(!bad, "%s alltoall: %d wrong", tn, bad);
    for (int k = 0; k < 64 * n; k++)
        dst[k] = -1;
    shmem_team_sync(team);
    shmem_int_alltoalls(team, dst, src, 2, 3, 2);
    bad = 0;
    for (int k = 0; k < n; k++)
        for (int j = 0; j < 2; j++)
            bad += dst[2 * (k * 2 + j)] != k * 1000 + 3 * (i * 2 + j) || dst[2 * (k * 2 + j) + 1] != -1;
    CHECK(!bad, "%s alltoalls: %d wrong", tn, bad);
    shmem_team_sync(team);
}

/* Back to back with no sync between: small reductions (through the channel
 * boxes on WORLD), one in place, and small fcollects; each result right. */
static void small_b2b(shmem_team_t team, const char *tn)
{
    if (team == SHMEM_TEAM_INVALID)
        return;
    int n = shmem_team_n_pes(team), i = shmem_team_my_pe(team), bad = 0;
    shmem_team_sync(team);
    for (int r = 0; r < 50; r++) {
        for (int k = 0; k < 8; k++)
            lb[k] = (long)(i + 1) * (r + k);
        shmem_long_sum_reduce(team, ld, lb, 8);
        for (int k = 0; k < 8; k++)
            bad += ld[k] != (long)n * (n + 1) / 2 * (r + k);
        shmem_long_max_reduce(team, lb, lb, 8); /* in place */
        for (int k = 0; k < 8; k++)
            bad += lb[k] != (long)n * (r + k);
        src[0] = i * 1000 + r, src[1] = i;
        shmem_int_fcollect(team, dst, src, 2);
        for (int m = 0; m < n; m++)
            bad += dst[2 * m] != m * 1000 + r || dst[2 * m + 1] != m;
    }
    CHECK(!bad, "%s back-to-back small reductions and fcollects: %d wrong", tn, bad);
    /* one root, members that fall behind now and then: the root runs ahead by
     * up to two broadcasts and must wait for the third */
    bad = 0;
    for (int r = 0; r < 200; r++) {
        for (int k = 0; k < 8; k++)
            lb[k] = r * 10 + k;
        shmem_long_broadcast(team, ld, lb, 8, 0);
        for (int k = 0; k < 8; k++)
            bad += ld[k] != r * 10 + k;
        if (i && r % 8 == 0)
            for (volatile int w = 0; w < 200000; w++)
                ;
    }
    CHECK(!bad, "%s back-to-back broadcasts from one root: %d wrong", tn, bad);
    shmem_team_sync(team);
}

/* value of element k on member i */
#define RV(i, k) ((((i) + 1) * 3 + (k) % 5) % 7 + 1)

#define RED(T, N, OP, INIT, EXPR)                                                                  \
    static int red_##N##_##OP(shmem_team_t team)                                                   \
    {                                                                                              \
        int n = shmem_team_n_pes(team), me = shmem_team_my_pe(team), bad = 0;                      \
        T *s = shmem_malloc(NR * sizeof(T)), *d = shmem_malloc(NR * sizeof(T));                    \
        for (int k = 0; k < NR; k++)                                                               \
            s[k] = (T)RV(me, k), d[k] = (T)0;                                                      \
        shmem_team_sync(team);                                                                     \
        bad += shmem_##N##_##OP##_reduce(team, d, s, NR) != 0;                                     \
        for (int k = 0; k < NR; k++) {                                                             \
            T acc = (T)(INIT);                                                                     \
            for (int m = 0; m < n; m++) {                                                          \
                T v = (T)RV(m, k);                                                                 \
                acc = EXPR;                                                                        \
            }                                                                                      \
            bad += d[k] != acc;                                                                    \
        }                                                                                          \
        shmem_##N##_##OP##_reduce(team, s, s, NR); /* in place */                                  \
        for (int k = 0; k < NR; k++)                                                               \
            bad += s[k] != d[k];                                                                   \
        shmem_team_sync(team);                                                                     \
        shmem_free(d);                                                                             \
        shmem_free(s);                                                                             \
        return bad;                                                                                \
    }
#define RED_BIT(T, N) RED(T, N, and, ~(T)0, acc & v) RED(T, N, or, 0, acc | v) RED(T, N, xor, 0, acc ^ v)
#define RED_MM(T, N) RED(T, N, max, 0, v > acc ? v : acc) RED(T, N, min, 100, v < acc ? v : acc)
#define RED_ARF(T, N) RED(T, N, sum, 0, acc + v) RED(T, N, prod, 1, acc * v)

RED_BIT(unsigned char, uchar) RED_BIT(unsigned int, uint) RED_BIT(int64_t, int64) RED_BIT(size_t, size)
/* the extension on signed types (Sandia OpenSHMEM and Open MPI 5 have it too) */
RED_BIT(short, short) RED_BIT(int, int) RED_BIT(long long, longlong)
RED_MM(char, char) RED_MM(short, short) RED_MM(long, long) RED_MM(uint32_t, uint32) RED_MM(double, double)
RED_MM(ptrdiff_t, ptrdiff)
RED_ARF(int, int) RED_ARF(unsigned long long, ulonglong) RED_ARF(float, float) RED_ARF(long double, longdouble)

static int red_complexd_sum(shmem_team_t team)
{
    int n = shmem_team_n_pes(team), me = shmem_team_my_pe(team), bad = 0;
    double complex *s = shmem_malloc(8 * sizeof *s), *d = shmem_malloc(8 * sizeof *d);
    for (int k = 0; k < 8; k++)
        s[k] = me + k * I;
    shmem_team_sync(team);
    shmem_complexd_sum_reduce(team, d, s, 8);
    for (int k = 0; k < 8; k++)
        bad += d[k] != (double)n * (n - 1) / 2 + (double)(n * k) * I;
    shmem_team_sync(team);
    shmem_free(d);
    shmem_free(s);
    return bad;
}

static void reductions(shmem_team_t team, const char *tn)
{
    if (team == SHMEM_TEAM_INVALID)
        return;
    int bad = red_uchar_and(team) + red_uchar_or(team) + red_uchar_xor(team) + red_uint_and(team) +
              red_uint_or(team) + red_uint_xor(team) + red_int64_and(team) + red_int64_or(team) +
              red_int64_xor(team) + red_size_and(team) + red_size_or(team) + red_size_xor(team);
    CHECK(!bad, "%s and/or/xor: %d wrong", tn, bad);
    bad = red_short_and(team) + red_short_or(team) + red_short_xor(team) + red_int_and(team) +
          red_int_or(team) + red_int_xor(team) + red_longlong_and(team) + red_longlong_or(team) +
          red_longlong_xor(team);
    CHECK(!bad, "%s and/or/xor on signed types: %d wrong", tn, bad);
    bad = red_char_max(team) + red_char_min(team) + red_short_max(team) + red_short_min(team) +
          red_long_max(team) + red_long_min(team) + red_uint32_max(team) + red_uint32_min(team) +
          red_double_max(team) + red_double_min(team) + red_ptrdiff_max(team) + red_ptrdiff_min(team);
    CHECK(!bad, "%s max/min: %d wrong", tn, bad);
    bad = red_int_sum(team) + red_int_prod(team) + red_ulonglong_sum(team) + red_ulonglong_prod(team) +
          red_float_sum(team) + red_float_prod(team) + red_longdouble_sum(team) + red_longdouble_prod(team) +
          red_complexd_sum(team);
    CHECK(!bad, "%s sum/prod: %d wrong", tn, bad);
    /* C11 generic forms */
    long *s = shmem_malloc(4 * sizeof(long)), *d = shmem_malloc(4 * sizeof(long));
    for (int k = 0; k < 4; k++)
        s[k] = shmem_team_my_pe(team) + k;
    shmem_sync(team);
    shmem_sum_reduce(team, d, s, 4);
    int n = shmem_team_n_pes(team);
    for (int k = 0; k < 4; k++)
        bad += d[k] != (long)n * (n - 1) / 2 + (long)n * k;
    shmem_max_reduce(team, d, s, 4);
    for (int k = 0; k < 4; k++)
        bad += d[k] != n - 1 + k;
    shmem_broadcast(team, d, s, 4, 0);
    for (int k = 0; k < 4; k++)
        bad += d[k] != k;
    long long *ls = shmem_malloc(sizeof(long long)), *ld2 = shmem_malloc(sizeof(long long));
    *ls = 1LL << (shmem_team_my_pe(team) % 40);
    shmem_sync(team);
    shmem_or_reduce(team, ld2, ls, 1); /* long long: the generic of the extension */
    long long want = 0;
    for (int m = 0; m < n; m++)
        want |= 1LL << (m % 40);
    bad += *ld2 != want;
    shmem_sync(team);
    shmem_free(ld2);
    shmem_free(ls);
    CHECK(!bad, "%s generic reduce/broadcast: %d wrong", tn, bad);
    shmem_sync(team);
    shmem_free(d);
    shmem_free(s);
}

int main(void)
{
    t_init();
    shmem_team_t odds = SHMEM_TEAM_INVALID;
    int rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, 1, 2, t_npes / 2, NULL, 0, &odds);
    CHECK(t_npes < 2 ? rc != 0 : rc == 0, "split odds rc %d", rc);
    src = shmem_malloc(64 * t_npes * sizeof(int));
    dst = shmem_malloc(64 * t_npes * t_npes * sizeof(int));
    lb = shmem_malloc(8 * sizeof(long));
    ld = shmem_malloc(8 * sizeof(long));
    data_colls(SHMEM_TEAM_WORLD, "world");
    t_section("data collectives on WORLD");
    data_colls(odds, "odds");
    t_section("data collectives on the odd team");
    reductions(SHMEM_TEAM_WORLD, "world");
    t_section("reductions on WORLD");
    small_b2b(SHMEM_TEAM_WORLD, "world");
    small_b2b(odds, "odds");
    t_section("back-to-back small reductions and fcollects");
    shmem_free(ld);
    shmem_free(lb);
    shmem_free(dst);
    shmem_free(src);
    if (odds != SHMEM_TEAM_INVALID)
        shmem_team_destroy(odds);
    return t_finish();
}
