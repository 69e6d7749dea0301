/* Teams (1.5, checked against the spec only): WORLD and SHARED, split
 * strided (evens, nested), split 2d, translate_pe, get_config, invalid
 * splits, many split/destroy cycles (channels reused), team contexts with
 * team-relative PE numbers, team_sync. */
#include "tcommon.h"

int main(void)
{
    t_init();
    int me = t_me, npes = t_npes;

    CHECK(shmem_team_my_pe(SHMEM_TEAM_WORLD) == me && shmem_team_n_pes(SHMEM_TEAM_WORLD) == npes, "WORLD");
    int sn = shmem_team_n_pes(SHMEM_TEAM_SHARED), sme = shmem_team_my_pe(SHMEM_TEAM_SHARED);
    CHECK(sn >= 1 && sme >= 0 && sme < sn, "SHARED %d of %d", sme, sn);
    CHECK(shmem_team_translate_pe(SHMEM_TEAM_SHARED, sme, SHMEM_TEAM_WORLD) == me, "SHARED -> WORLD");
    CHECK(shmem_team_my_pe(SHMEM_TEAM_INVALID) == -1 && shmem_team_n_pes(SHMEM_TEAM_INVALID) == -1, "INVALID queries");
    /* every SHARED member's heap is load/store accessible */
    long *h = shmem_malloc(sizeof(long));
    for (int i = 0; i < sn; i++)
        CHECK(shmem_ptr(h, shmem_team_translate_pe(SHMEM_TEAM_SHARED, i, SHMEM_TEAM_WORLD)) != NULL,
              "SHARED member %d: shmem_ptr NULL", i);
    t_section("WORLD and SHARED");

    shmem_team_t evens;
    shmem_team_config_t cfg = {.num_contexts = 2};
    int rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (npes + 1) / 2, &cfg, SHMEM_TEAM_NUM_CONTEXTS, &evens);
    CHECK(rc == 0, "split evens rc %d", rc);
    if (me % 2 == 0) {
        CHECK(evens != SHMEM_TEAM_INVALID, "even PE got INVALID");
        CHECK(shmem_team_my_pe(evens) == me / 2 && shmem_team_n_pes(evens) == (npes + 1) / 2, "evens numbering");
        CHECK(shmem_team_translate_pe(evens, shmem_team_my_pe(evens), SHMEM_TEAM_WORLD) == me, "evens -> WORLD");
        CHECK(shmem_team_translate_pe(SHMEM_TEAM_WORLD, me, evens) == me / 2, "WORLD -> evens");
        CHECK(npes < 2 || shmem_team_translate_pe(SHMEM_TEAM_WORLD, 1, evens) == -1, "odd PE in evens");
        shmem_team_config_t got = {0};
        CHECK(shmem_team_get_config(evens, SHMEM_TEAM_NUM_CONTEXTS, &got) == 0 && got.num_contexts == 2, "config");
    } else {
        CHECK(evens == SHMEM_TEAM_INVALID, "odd PE in evens");
    }
    t_section("split_strided evens");

    /* nested: every other even PE (world stride 4) */
    shmem_team_t quarter = SHMEM_TEAM_INVALID;
    if (evens != SHMEM_TEAM_INVALID) {
        int en = shmem_team_n_pes(evens);
        rc = shmem_team_split_strided(evens, 0, 2, (en + 1) / 2, NULL, 0, &quarter);
        CHECK(rc == 0, "nested split rc %d", rc);
        CHECK((me % 4 == 0) == (quarter != SHMEM_TEAM_INVALID), "nested membership");
        if (quarter != SHMEM_TEAM_INVALID)
            CHECK(shmem_team_translate_pe(quarter, shmem_team_my_pe(quarter), SHMEM_TEAM_WORLD) == me, "nested -> WORLD");
        shmem_team_sync(evens);
    }
    t_section("nested split");

    /* 2d: rows of 2 */
    shmem_team_t xt, yt;
    rc = shmem_team_split_2d(SHMEM_TEAM_WORLD, 2, NULL, 0, &xt, NULL, 0, &yt);
    CHECK(rc == 0 && xt != SHMEM_TEAM_INVALID && yt != SHMEM_TEAM_INVALID, "split_2d rc %d", rc);
    if (!rc) {
        int xs = (me / 2) * 2 + 2 <= npes ? 2 : npes - (me / 2) * 2;
        CHECK(shmem_team_n_pes(xt) == xs && shmem_team_my_pe(xt) == me % 2, "x team %d of %d", shmem_team_my_pe(xt),
              shmem_team_n_pes(xt));
        CHECK(shmem_team_n_pes(yt) == (npes - me % 2 + 1) / 2 && shmem_team_my_pe(yt) == me / 2, "y team %d of %d",
              shmem_team_my_pe(yt), shmem_team_n_pes(yt));
        CHECK(shmem_team_translate_pe(yt, 0, SHMEM_TEAM_WORLD) == me % 2, "y team -> WORLD");
        /* both usable at once */
        shmem_team_sync(xt);
        shmem_team_sync(yt);
        shmem_team_destroy(xt);
        shmem_team_destroy(yt);
    }
    t_section("split_2d");

    /* invalid arguments: the same nonzero code everywhere, INVALID */
    shmem_team_t bad = SHMEM_TEAM_WORLD;
    rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, npes + 1, NULL, 0, &bad);
    CHECK(rc != 0 && bad == SHMEM_TEAM_INVALID, "oversized split rc %d", rc);
    rc = shmem_team_split_strided(SHMEM_TEAM_INVALID, 0, 1, 1, NULL, 0, &bad);
    CHECK(rc != 0 && bad == SHMEM_TEAM_INVALID, "split of INVALID rc %d", rc);
    t_section("invalid splits");

    /* many cycles: channels are reused */
    int okc = 1;
    for (int i = 0; i < 100; i++) {
        shmem_team_t t;
        int start = i % npes;
        rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, start, 1, npes - start, NULL, 0, &t);
        okc &= rc == 0;
        if (t != SHMEM_TEAM_INVALID) {
            shmem_team_sync(t);
            shmem_team_destroy(t);
        }
    }
    CHECK(okc, "split/destroy cycles");
    t_section("100 split/destroy cycles");

    /* team context: PE numbers relative to the team */
    if (evens != SHMEM_TEAM_INVALID) {
        shmem_ctx_t ctx;
        rc = shmem_team_create_ctx(evens, 0, &ctx);
        CHECK(rc == 0, "team_create_ctx rc %d", rc);
        shmem_team_t back;
        CHECK(shmem_ctx_get_team(ctx, &back) == 0 && back == evens, "ctx_get_team");
        int en = shmem_team_n_pes(evens), ei = shmem_team_my_pe(evens);
        shmem_ctx_long_p(ctx, h, 100 + me, (ei + 1) % en); /* to the next even PE */
        shmem_ctx_quiet(ctx);
        shmem_team_sync(evens);
        int from = ((ei + en - 1) % en) * 2;
        CHECK(*h == 100 + from, "team ctx put: %ld, want %d", *h, 100 + from);
        shmem_ctx_destroy(ctx);
    }
    shmem_team_t dt;
    CHECK(shmem_ctx_get_team(SHMEM_CTX_DEFAULT, &dt) == 0 && dt == SHMEM_TEAM_WORLD, "default ctx team");
    t_section("team contexts");

    if (quarter != SHMEM_TEAM_INVALID)
        shmem_team_destroy(quarter);
    if (evens != SHMEM_TEAM_INVALID)
        shmem_team_destroy(evens);
    shmem_free(h);
    return t_finish();
}
