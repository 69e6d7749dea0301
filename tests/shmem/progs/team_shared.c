/* SHMEM_TEAM_SHARED on any placement (1.5, checked against the spec only):
 * the team is exactly the PEs whose heap shmem_ptr reaches, in world order,
 * whether or not they form a progression of world numbers (mpirun --map-by
 * node over nodes of 3 and 1 slots puts world PEs 0, 2, 3 on one node and 1
 * on the other). Its numbering, translate both ways, team_ptr, collectives
 * (sync, broadcast, fcollect, alltoall, sum), a team context, and teams split
 * from it (strided, reversed, 2-D, nested). On one node SHARED is WORLD; the
 * VM pair suite runs it on an irregular placement too. Output is the same on
 * every placement. */
#include "tcommon.h"

#define SH SHMEM_TEAM_SHARED

static int members[T_MAXPE], nmem; /* world PEs shmem_ptr reaches, ascending */
static long *c_src, *c_sum, *c_all;  /* check_coll's buffers: allocated by every PE
                                        up front (shmem_malloc is collective over WORLD) */

/* Check team t's members are world PEs want[0..n) in that order. */
static void check_members(shmem_team_t t, const int *want, int n, const char *what)
{
    CHECK(shmem_team_n_pes(t) == n, "%s: %d PEs, expected %d", what, shmem_team_n_pes(t), n);
    for (int i = 0; i < n; i++) {
        CHECK(shmem_team_translate_pe(t, i, SHMEM_TEAM_WORLD) == want[i], "%s: member %d is PE %d, expected %d", what,
              i, shmem_team_translate_pe(t, i, SHMEM_TEAM_WORLD), want[i]);
        CHECK(shmem_team_translate_pe(SHMEM_TEAM_WORLD, want[i], t) == i, "%s: world PE %d -> %d, expected %d", what,
              want[i], shmem_team_translate_pe(SHMEM_TEAM_WORLD, want[i], t), i);
    }
    for (int w = 0; w < t_npes; w++) {
        int in = 0;
        for (int i = 0; i < n; i++)
            in |= want[i] == w;
        if (!in)
            CHECK(shmem_team_translate_pe(SHMEM_TEAM_WORLD, w, t) == -1, "%s: world PE %d is no member", what, w);
    }
}

/* A sum and an fcollect of world numbers over team t of members want[0..n). */
static void check_coll(shmem_team_t t, const int *want, int n, const char *what)
{
    long *src = c_src, *sum = c_sum, *all = c_all;
    *src = t_me;
    CHECK(shmem_long_sum_reduce(t, sum, src, 1) == 0, "%s: sum_reduce", what);
    long expect = 0;
    for (int i = 0; i < n; i++)
        expect += want[i];
    CHECK(*sum == expect, "%s: sum %ld, expected %ld", what, *sum, expect);
    CHECK(shmem_long_fcollect(t, all, src, 1) == 0, "%s: fcollect", what);
    for (int i = 0; i < n; i++)
        CHECK(all[i] == want[i], "%s: fcollect[%d] = %ld, expected %d", what, i, all[i], want[i]);
    shmem_team_sync(t);
}

static void section_membership(long *h)
{
    nmem = 0;
    for (int p = 0; p < t_npes; p++)
        if (shmem_ptr(h, p))
            members[nmem++] = p;
    check_members(SH, members, nmem, "SHARED");
    CHECK(shmem_team_translate_pe(SH, shmem_team_my_pe(SH), SHMEM_TEAM_WORLD) == t_me, "SHARED my_pe");
    for (int i = 0; i < nmem; i++)
        CHECK(shmem_team_ptr(SH, h, i) == shmem_ptr(h, members[i]), "team_ptr(SHARED, %d)", i);
    CHECK(shmem_team_ptr(SH, h, nmem) == NULL, "team_ptr past the team");
    t_section("SHARED is the PEs shmem_ptr reaches");
}

static void section_collectives(void)
{
    int sme = shmem_team_my_pe(SH);
    check_coll(SH, members, nmem, "SHARED");
    long *v = shmem_malloc(4 * sizeof(long)), *b = shmem_calloc(4, sizeof(long));
    long *a2a_src = shmem_malloc(T_MAXPE * sizeof(long)), *a2a = shmem_calloc(T_MAXPE, sizeof(long));
    for (int i = 0; i < 4; i++)
        v[i] = t_pat(t_me, i);
    CHECK(shmem_long_broadcast(SH, b, v, 4, nmem - 1) == 0, "broadcast");
    for (int i = 0; i < 4; i++)
        CHECK(b[i] == (long)t_pat(members[nmem - 1], i), "broadcast[%d] from the last member", i);
    for (int i = 0; i < nmem; i++)
        a2a_src[i] = 1000L * sme + i;
    CHECK(shmem_long_alltoall(SH, a2a, a2a_src, 1) == 0, "alltoall");
    for (int i = 0; i < nmem; i++)
        CHECK(a2a[i] == 1000L * i + sme, "alltoall[%d] = %ld", i, a2a[i]);
    shmem_team_sync(SH);
    shmem_free(a2a);
    shmem_free(a2a_src);
    shmem_free(b);
    shmem_free(v);
    t_section("SHARED collectives");
}

static void section_context(void)
{
    int sme = shmem_team_my_pe(SH);
    long *slot = shmem_calloc(1, sizeof(long));
    shmem_ctx_t ctx;
    CHECK(shmem_team_create_ctx(SH, 0, &ctx) == 0, "team_create_ctx(SHARED)");
    shmem_team_sync(SH);
    if (ctx != SHMEM_CTX_INVALID) {
        shmem_ctx_long_p(ctx, slot, 7000 + sme, (sme + 1) % nmem); /* team-relative PE */
        shmem_ctx_quiet(ctx);
    }
    shmem_team_sync(SH);
    CHECK(*slot == 7000 + (sme + nmem - 1) % nmem, "ctx put from the previous member: %ld", *slot);
    shmem_ctx_destroy(ctx);
    shmem_free(slot);
    t_section("SHARED context");
}

static void section_splits(void)
{
    int sme = shmem_team_my_pe(SH), want[T_MAXPE], n;
    shmem_team_t ev, rev, nest = SHMEM_TEAM_INVALID, xt, yt;
    for (n = 0; 2 * n < nmem; n++)
        want[n] = members[2 * n];
    CHECK(shmem_team_split_strided(SH, 0, 2, n, NULL, 0, &ev) == 0, "split evens of SHARED");
    CHECK((sme % 2 == 0) == (ev != SHMEM_TEAM_INVALID), "evens membership");
    if (ev != SHMEM_TEAM_INVALID) {
        check_members(ev, want, n, "evens of SHARED");
        check_coll(ev, want, n, "evens of SHARED");
    }
    for (int i = 0; i < nmem; i++)
        want[i] = members[nmem - 1 - i];
    CHECK(shmem_team_split_strided(SH, nmem - 1, -1, nmem, NULL, 0, &rev) == 0, "split reversed SHARED");
    if (rev != SHMEM_TEAM_INVALID) {
        check_members(rev, want, nmem, "reversed SHARED");
        check_coll(rev, want, nmem, "reversed SHARED");
        int rn = (nmem + 1) / 2; /* every other member of the reversed team */
        CHECK(shmem_team_split_strided(rev, 0, 2, rn, NULL, 0, &nest) == 0, "nested split");
        for (int i = 0; i < rn; i++)
            want[i] = members[nmem - 1 - 2 * i];
        if (nest != SHMEM_TEAM_INVALID)
            check_members(nest, want, rn, "nested");
    }
    CHECK(shmem_team_split_2d(SH, 2, NULL, 0, &xt, NULL, 0, &yt) == 0, "split_2d of SHARED");
    int row = sme / 2, col = sme % 2;
    for (n = 0; n < 2 && row * 2 + n < nmem; n++)
        want[n] = members[row * 2 + n];
    check_members(xt, want, n, "x of SHARED");
    for (n = 0; col + 2 * n < nmem; n++)
        want[n] = members[col + 2 * n];
    check_members(yt, want, n, "y of SHARED");
    check_coll(yt, want, n, "y of SHARED");
    shmem_team_destroy(nest);
    shmem_team_destroy(ev);
    shmem_team_destroy(rev);
    shmem_team_destroy(xt);
    shmem_team_destroy(yt);
    t_section("teams split from SHARED");
}

int main(void)
{
    t_init();
    long *h = shmem_malloc(sizeof(long));
    c_src = shmem_malloc(sizeof(long));
    c_sum = shmem_malloc(sizeof(long));
    c_all = shmem_calloc(T_MAXPE, sizeof(long));
    section_membership(h);
    section_collectives();
    section_context();
    section_splits();
    shmem_free(c_all);
    shmem_free(c_sum);
    shmem_free(c_src);
    shmem_free(h);
    return t_finish();
}
