/* OpenSHMEM 1.6 routines that codes written for it call (locus only; Open
 * MPI 4.1 has none): shmem_team_ptr, shmem_pe_quiet, block-strided
 * ibput/ibget (typed, sized, context, generic), signal_add/set, sessions, and
 * the sum scans (inclusive, exclusive; small and large, in place, on a
 * strided team), negative and zero strides of shmem_team_split_strided. */
#include "tcommon.h"

static shmem_team_t odds = SHMEM_TEAM_INVALID; /* world PEs 1, 3, 5, ... */

static void team_ptr(void)
{
    int *x = shmem_malloc(sizeof(int));
    CHECK(shmem_team_ptr(SHMEM_TEAM_WORLD, x, t_me) == shmem_ptr(x, t_me), "team_ptr(world, me)");
    CHECK(shmem_team_ptr(SHMEM_TEAM_WORLD, x, t_me) != NULL, "team_ptr(world, me) is NULL");
    CHECK(shmem_team_ptr(SHMEM_TEAM_INVALID, x, 0) == NULL, "team_ptr(INVALID) not NULL");
    CHECK(shmem_team_ptr(SHMEM_TEAM_WORLD, x, t_npes) == NULL, "team_ptr past the team not NULL");
    if (odds != SHMEM_TEAM_INVALID)
        CHECK(shmem_team_ptr(odds, x, 0) == shmem_ptr(x, 1), "team_ptr(odds, 0) is not PE 1's");
    shmem_barrier_all();
    shmem_free(x);
}

static void pe_quiet(void)
{
    long *d = shmem_calloc(64, sizeof(long));
    long src[64];
    int right = (t_me + 1) % t_npes, left = (t_me + t_npes - 1) % t_npes;
    for (int i = 0; i < 64; i++)
        src[i] = t_me * 100 + i;
    shmem_long_put_nbi(d, src, 32, right);
    shmem_pe_quiet(&right, 1);
    shmem_ctx_long_put_nbi(SHMEM_CTX_DEFAULT, d + 32, src + 32, 32, right);
    int both[2] = {right, right};
    shmem_ctx_pe_quiet(SHMEM_CTX_DEFAULT, both, 2);
    shmem_pe_quiet(NULL, 0);
    shmem_barrier_all();
    int bad = 0;
    for (int i = 0; i < 64; i++)
        bad += d[i] != left * 100 + i;
    CHECK(!bad, "pe_quiet: %d elements wrong", bad);
    shmem_barrier_all();
    shmem_free(d);
}

/* ibput: 3 blocks of 2 elements, source blocks 3 apart, dest blocks 4 apart;
 * ibget the other way round. Untouched dest elements keep -1. */
static void blocks(void)
{
    int right = (t_me + 1) % t_npes, left = (t_me + t_npes - 1) % t_npes;
    long *d = shmem_malloc(16 * sizeof(long)), src[16], got[16];
    for (int i = 0; i < 16; i++)
        d[i] = -1, src[i] = t_me * 100 + i, got[i] = -1;
    shmem_barrier_all();
    shmem_long_ibput(d, src, 4, 3, 2, 3, right);
    shmem_barrier_all();
    static const int want_at[16] = {0, 1, -1, -1, 3, 4, -1, -1, 6, 7, -1, -1, -1, -1, -1, -1};
    int bad = 0;
    for (int i = 0; i < 16; i++)
        bad += d[i] != (want_at[i] < 0 ? -1 : left * 100 + want_at[i]);
    CHECK(!bad, "long ibput: %d elements wrong", bad);
    /* ibget from the right neighbour's d (left-of-right is me): blocks at 0, 4, 8 */
    shmem_long_ibget(got, d, 3, 4, 2, 3, right);
    bad = 0;
    static const int get_at[16] = {0, 1, -1, 3, 4, -1, 6, 7, -1, -1, -1, -1, -1, -1, -1, -1};
    for (int i = 0; i < 16; i++)
        bad += got[i] != (get_at[i] < 0 ? -1 : t_me * 100 + get_at[i]);
    CHECK(!bad, "long ibget: %d elements wrong", bad);
    shmem_barrier_all();
    /* sized, context and generic forms; bsize 0 and nblocks 0 move nothing */
    for (int i = 0; i < 16; i++)
        d[i] = -1;
    shmem_barrier_all();
    shmem_ctx_ibput64(SHMEM_CTX_DEFAULT, d, src, 2, 2, 2, 2, right); /* contiguous: 4 elements */
    shmem_ibput(d + 8, src, 2, 1, 1, 4, right);                        /* iput-like */
    shmem_ibput32(d, src, 2, 2, 0, 5, right);
    shmem_long_ibget(got, d, 1, 1, 4, 0, right);
    shmem_quiet();
    shmem_barrier_all();
    bad = 0;
    for (int i = 0; i < 4; i++)
        bad += d[i] != left * 100 + i;
    for (int i = 0; i < 4; i++)
        bad += d[8 + 2 * i] != left * 100 + i || d[9 + 2 * i] != -1;
    CHECK(!bad, "ibput64 / generic ibput: %d elements wrong", bad);
    double *dd = shmem_calloc(8, sizeof(double)), ds[8];
    shmem_barrier_all();
    for (int i = 0; i < 8; i++)
        ds[i] = t_me + i / 8.0;
    shmem_ctx_double_ibput(SHMEM_CTX_DEFAULT, dd, ds, 4, 4, 2, 2, right);
    shmem_barrier_all();
    double dg[8] = {0};
    shmem_ibget(dg, dd, 2, 4, 2, 2, t_me);
    CHECK(dg[0] == left && dg[2] == left + 0.5 && dg[3] == left + 5 / 8.0, "double ibput/ibget: %g %g %g", dg[0],
          dg[2], dg[3]);
    shmem_barrier_all();
    shmem_free(dd);
    shmem_free(d);
}

static void signals(void)
{
    uint64_t *sig = shmem_calloc(2, sizeof(uint64_t));
    shmem_barrier_all();
    shmem_signal_add(&sig[0], (uint64_t)t_me + 1, 0);
    shmem_ctx_signal_add(SHMEM_CTX_DEFAULT, &sig[0], 1, 0);
    shmem_signal_set(&sig[1], 7, (t_me + 1) % t_npes);
    uint64_t want = (uint64_t)t_npes * (t_npes + 1) / 2 + (uint64_t)t_npes;
    if (t_me == 0)
        CHECK(shmem_signal_wait_until(&sig[0], SHMEM_CMP_EQ, want) == want, "signal_add sum");
    shmem_signal_wait_until(&sig[1], SHMEM_CMP_EQ, 7);
    shmem_barrier_all();
    shmem_signal_set(SHMEM_CTX_DEFAULT, &sig[1], 9, t_me); /* generic, context first */
    shmem_signal_add(SHMEM_CTX_DEFAULT, &sig[1], 1, t_me);
    shmem_quiet();
    CHECK(shmem_signal_fetch(&sig[1]) == 10, "signal_set then add: %llu",
          (unsigned long long)shmem_signal_fetch(&sig[1]));
    shmem_barrier_all();
    shmem_free(sig);
}

static void sessions(void)
{
    long *d = shmem_calloc(8, sizeof(long));
    shmem_barrier_all();
    shmem_ctx_session_config_t cfg = {.total_ops = 8};
    shmem_ctx_session_start(SHMEM_CTX_DEFAULT, SHMEM_CTX_SESSION_BATCH, &cfg, SHMEM_CTX_SESSION_TOTAL_OPS);
    for (int i = 0; i < 8; i++)
        shmem_long_p(&d[i], t_me + i, (t_me + 1) % t_npes);
    shmem_ctx_session_start(SHMEM_CTX_DEFAULT, 0, NULL, 0); /* again: options and defaults */
    shmem_ctx_session_stop(SHMEM_CTX_DEFAULT);
    shmem_ctx_session_stop(SHMEM_CTX_DEFAULT); /* stopped already: nothing */
    shmem_ctx_session_start(SHMEM_CTX_INVALID, SHMEM_CTX_SESSION_BATCH, NULL, 0);
    shmem_ctx_session_stop(SHMEM_CTX_INVALID);
    shmem_barrier_all();
    int left = (t_me + t_npes - 1) % t_npes, bad = 0;
    for (int i = 0; i < 8; i++)
        bad += d[i] != left + i;
    CHECK(!bad, "puts in a session: %d wrong", bad);
    shmem_barrier_all();
    shmem_free(d);
}

/* member m's element k is m + 1 + k; in: sum over members 0..i, ex: 0..i-1 */
static void scan_members(shmem_team_t team, size_t n, long *s, long *in, long *ex)
{
    int me = shmem_team_my_pe(team), bad = 0;
    for (size_t k = 0; k < n; k++)
        s[k] = me + 1 + (long)k, ex[k] = -5;
    shmem_team_sync(team);
    bad += shmem_long_sum_inscan(team, in, s, n) != 0;
    bad += shmem_sum_exscan(team, ex, s, n) != 0; /* generic */
    for (size_t k = 0; k < n; k++) {
        long win = 0, wex = 0;
        for (int m = 0; m <= me; m++)
            win += m + 1 + (long)k, wex += m < me ? m + 1 + (long)k : 0;
        bad += in[k] != win || ex[k] != wex;
    }
    shmem_long_sum_inscan(team, s, s, n); /* in place */
    for (size_t k = 0; k < n; k++)
        bad += s[k] != in[k];
    CHECK(!bad, "long scans of %zu elements: %d wrong", n, bad);
}

static void scan_team(shmem_team_t team, size_t n)
{
    /* shmem_malloc is collective over the world: every PE allocates */
    long *s = shmem_malloc(n * sizeof(long)), *in = shmem_malloc(n * sizeof(long)), *ex = shmem_malloc(n * sizeof(long));
    if (team != SHMEM_TEAM_INVALID)
        scan_members(team, n, s, in, ex);
    shmem_barrier_all();
    shmem_free(ex);
    shmem_free(in);
    shmem_free(s);
}

static void scans(void)
{
    scan_team(SHMEM_TEAM_WORLD, 4);    /* channel boxes */
    scan_team(SHMEM_TEAM_WORLD, 5000); /* read from every member's heap */
    scan_team(odds, 4);
    scan_team(odds, 5000);
    double *s = shmem_malloc(sizeof(double)), *d = shmem_malloc(sizeof(double));
    *s = 0.5;
    shmem_barrier_all();
    shmem_double_sum_exscan(SHMEM_TEAM_WORLD, d, s, 1);
    CHECK(*d == 0.5 * t_me, "double exscan %g", *d);
    shmem_barrier_all();
    shmem_free(d);
    shmem_free(s);
}

/* 1.6's strides: a negative one lists the members downwards from start (the
 * new team in reverse order), a zero one makes a team of one; collectives,
 * translations and team_ptr number the members in the team's order */
static void split_strides(void)
{
    int n = t_npes, me = t_me;
    shmem_team_t rev, down2, one, bad;
    int rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, n - 1, -1, n, NULL, 0, &rev);
    CHECK(rc == 0 && rev != SHMEM_TEAM_INVALID, "split (n-1, -1, n): rc %d", rc);
    CHECK(shmem_team_my_pe(rev) == n - 1 - me && shmem_team_n_pes(rev) == n, "reversed: my_pe %d of %d",
          shmem_team_my_pe(rev), shmem_team_n_pes(rev));
    CHECK(shmem_team_translate_pe(rev, 0, SHMEM_TEAM_WORLD) == n - 1, "reversed 0 -> WORLD");
    CHECK(shmem_team_translate_pe(SHMEM_TEAM_WORLD, 0, rev) == n - 1, "WORLD 0 -> reversed");
    int *x = shmem_malloc(sizeof(int)), *all = shmem_malloc((size_t)n * sizeof(int));
    long *v = shmem_malloc(sizeof(long)), *in = shmem_malloc(sizeof(long));
    CHECK(shmem_team_ptr(rev, x, 0) == shmem_ptr(x, n - 1), "team_ptr(reversed, 0) is not PE n-1's");
    *x = me, *v = me;
    shmem_team_sync(rev);
    shmem_int_fcollect(rev, all, x, 1);
    for (int i = 0; i < n; i++)
        CHECK(all[i] == n - 1 - i, "reversed fcollect[%d] = %d", i, all[i]);
    shmem_long_sum_inscan(rev, in, v, 1); /* members 0..i are world PEs n-1 down to me */
    CHECK(*in == (long)(n - 1 + me) * (n - me) / 2, "reversed inscan %ld", *in);
    shmem_team_sync(rev);
    shmem_int_broadcast(rev, x, x, 1, 0);
    CHECK(*x == n - 1, "reversed broadcast from its PE 0: %d", *x);
    /* stride -2: world PEs n-1, n-3, ...; the same team split from the reversed one */
    rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, n - 1, -2, (n + 1) / 2, NULL, 0, &down2);
    CHECK(rc == 0, "split (n-1, -2): rc %d", rc);
    CHECK(((n - 1 - me) % 2 == 0) == (down2 != SHMEM_TEAM_INVALID), "stride -2 membership");
    if (down2 != SHMEM_TEAM_INVALID) {
        CHECK(shmem_team_my_pe(down2) == (n - 1 - me) / 2, "stride -2: my_pe %d", shmem_team_my_pe(down2));
        shmem_team_sync(down2);
        shmem_team_destroy(down2);
    }
    rc = shmem_team_split_strided(rev, 0, 2, (n + 1) / 2, NULL, 0, &down2);
    CHECK(rc == 0 && ((n - 1 - me) % 2 == 0) == (down2 != SHMEM_TEAM_INVALID), "nested split of the reversed");
    if (down2 != SHMEM_TEAM_INVALID) {
        CHECK(shmem_team_translate_pe(down2, 0, SHMEM_TEAM_WORLD) == n - 1, "nested 0 -> WORLD");
        shmem_team_destroy(down2);
    }
    /* stride 0: a team of one; with more, or wrapping around, invalid */
    rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, n - 1, 0, 1, NULL, 0, &one);
    CHECK(rc == 0 && (me == n - 1) == (one != SHMEM_TEAM_INVALID), "split (n-1, 0, 1): rc %d", rc);
    if (one != SHMEM_TEAM_INVALID) {
        CHECK(shmem_team_my_pe(one) == 0 && shmem_team_n_pes(one) == 1, "team of one");
        shmem_team_destroy(one);
    }
    if (n > 1) {
        rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 0, 2, NULL, 0, &bad);
        CHECK(rc != 0 && bad == SHMEM_TEAM_INVALID, "stride 0 with size 2 accepted");
        rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, -1, 2, NULL, 0, &bad);
        CHECK(rc != 0 && bad == SHMEM_TEAM_INVALID, "a wrap below PE 0 accepted");
    }
    shmem_barrier_all();
    shmem_team_destroy(rev);
    shmem_free(in);
    shmem_free(v);
    shmem_free(all);
    shmem_free(x);
}

int main(void)
{
    t_init();
    if (t_npes > 1)
        shmem_team_split_strided(SHMEM_TEAM_WORLD, 1, 2, t_npes / 2, NULL, 0, &odds);
    team_ptr();
    t_section("shmem_team_ptr");
    pe_quiet();
    t_section("shmem_pe_quiet");
    blocks();
    t_section("shmem_ibput, shmem_ibget");
    signals();
    t_section("shmem_signal_add, shmem_signal_set");
    sessions();
    t_section("sessions");
    scans();
    t_section("shmem_sum_inscan, shmem_sum_exscan");
    split_strides();
    t_section("shmem_team_split_strided: negative and zero strides");
    if (odds != SHMEM_TEAM_INVALID)
        shmem_team_destroy(odds);
    return t_finish();
}
