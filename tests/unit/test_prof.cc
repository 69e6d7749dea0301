// prof: name guessing, option validation, shim-log and perf-record parsing.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>
#include <linux/perf_event.h>

extern "C" {
#include "prof/prof_internal.h"
#include "prof/preload/shim_format.h"
}

static std::string guess(const char *line)
{
    char name[64];
    return prof_guess_name(line, name, sizeof name) ? name : "";
}

TEST(ProfName, AssignmentLeftHandSide)
{
    EXPECT_EQ(guess("    double *c = malloc(n * sizeof *c);"), "c");
    EXPECT_EQ(guess("grid = calloc(n, 8); /* x */"), "grid");
    EXPECT_EQ(guess("  s->field = aligned_alloc(64, n);"), "s->field");
    EXPECT_EQ(guess("  tab[i] = new double[n];"), "tab");
    EXPECT_EQ(guess("return malloc(n);"), "");
    EXPECT_EQ(guess("if (a == b) foo();"), "");
}

TEST(ProfOptions, SamplersValidator)
{
    EXPECT_EQ(locus_prof_validate_samplers("auto"), LOCUS_OK);
    EXPECT_EQ(locus_prof_validate_samplers("first-touch,access"), LOCUS_OK);
    EXPECT_EQ(locus_prof_validate_samplers("pmu"), LOCUS_OK);
    EXPECT_EQ(locus_prof_validate_samplers("ibs"), LOCUS_ERR_INVALID);
    EXPECT_NE(std::string(locus_last_error()).find("'ibs'"), std::string::npos);
    EXPECT_EQ(locus_prof_validate_samplers(""), LOCUS_ERR_INVALID);
}

TEST(ProfOptions, RunRejectsBadInputBeforeRunning)
{
    locus_prof_options_t o;
    ASSERT_EQ(locus_prof_options_init(&o), LOCUS_OK);
    o.report = nullptr;
    o.output = nullptr;
    int status = -1;
    char *none[] = {nullptr};
    EXPECT_EQ(locus_prof_run(&o, none, &status), LOCUS_ERR_INVALID);
    char *missing[] = {(char *)"/nonexistent/prog", nullptr};
    EXPECT_EQ(locus_prof_run(&o, missing, &status), LOCUS_ERR_NOT_FOUND);
    char *notexec[] = {(char *)"/etc/hostname", nullptr};
    EXPECT_EQ(locus_prof_run(&o, notexec, &status), LOCUS_ERR_PERMISSION);
    char *ok[] = {(char *)"true", nullptr};
    o.output = "/nonexistent-dir/p.json";
    EXPECT_EQ(locus_prof_run(&o, ok, &status), LOCUS_ERR_SYSTEM);
    EXPECT_NE(std::string(locus_last_error()).find("not writable"), std::string::npos);
    EXPECT_EQ(status, -1); // nothing ran
}

static prof_session_t *new_session()
{
    auto *s = (prof_session_t *)calloc(1, sizeof(prof_session_t));
    s->ft_period = 1;
    return s;
}

TEST(ProfShimLog, AllocFreePagesAccess)
{
    char path[] = "/tmp/test_prof_shimXXXXXX";
    int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    FILE *f = fdopen(fd, "wb");
    lprof_start_t st{};
    st.h = {LPROF_REC_START, sizeof st};
    st.magic = LPROF_MAGIC;
    st.time = 10;
    st.pid = 42;
    fwrite(&st, sizeof st, 1, f);
    lprof_alloc_t a{};
    a.time = 20;
    a.addr = 0x100000;
    a.size = 1 << 20;
    a.tid = 42;
    a.nframes = 2;
    a.frames[0] = 0x1234;
    a.frames[1] = 0x5678;
    a.h = {LPROF_REC_ALLOC, (uint32_t)(sizeof a - (LPROF_MAX_FRAMES - 2) * 8)};
    fwrite(&a, a.h.size, 1, f);
    struct {
        lprof_pages_t p;
        int8_t nodes[8];
    } pg{};
    pg.p = {{LPROF_REC_PAGES, sizeof pg}, 30, 0x100000, 0x100000, 64, 4, 4096, 0};
    int8_t nodes[4] = {0, 1, 1, -1};
    memcpy(pg.nodes, nodes, 4);
    fwrite(&pg, sizeof pg, 1, f);
    lprof_access_t ac{{LPROF_REC_ACCESS, sizeof ac}, 35, 0x100010, 0x4000, 43, 1, 0, 1, 0};
    fwrite(&ac, sizeof ac, 1, f);
    lprof_free_t fr{{LPROF_REC_FREE, sizeof fr}, 40, 0x100000, 42, 0};
    fwrite(&fr, sizeof fr, 1, f);
    lprof_hdr_t bad{LPROF_REC_ALLOC, 2}; // damaged tail: ignored
    fwrite(&bad, sizeof bad, 1, f);
    fclose(f);

    prof_session_t *s = new_session();
    ASSERT_EQ(prof_shimlog_read(s, path), LOCUS_OK);
    unlink(path);
    ASSERT_EQ(s->alloc.n, 1u);
    const prof_alloc_t &al = s->alloc.v[0];
    EXPECT_EQ(al.pid, 42);
    EXPECT_EQ(al.nframes, 2);
    EXPECT_EQ(al.frames[1], 0x5678u);
    EXPECT_EQ(al.free_time, 40u);
    EXPECT_TRUE(al.placed);
    EXPECT_EQ(al.place[0], 64u); // one sampled page per 64
    EXPECT_EQ(al.place[1], 128u);
    EXPECT_EQ(al.place_absent, 64u);
    ASSERT_EQ(s->acc.n, 1u);
    EXPECT_EQ(s->acc.v[0].tid, 43);
    EXPECT_EQ(s->acc.v[0].node, 0);
    EXPECT_EQ(s->shim_procs, 1);
    free(s->alloc.v);
    free(s->acc.v);
    free(s);
}

TEST(ProfPerf, ParsesSampleWithCallchainAndStack)
{
    uint64_t st = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU |
                  PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_STACK_USER;
    uint64_t rec[32] = {};
    size_t n = 1;
    rec[n++] = 0x401000;                            // ip
    rec[n++] = 7ull | (8ull << 32);                 // pid 7, tid 8
    rec[n++] = 1234;                                // time
    rec[n++] = 0x7000;                              // addr
    rec[n++] = 1;                                   // cpu 1
    rec[n++] = 3;                                   // callchain: nr
    rec[n++] = (uint64_t)PERF_CONTEXT_USER;         // marker, skipped
    rec[n++] = 0x401000;
    rec[n++] = 0x402000;
    rec[n++] = 8;                                   // stack size
    rec[n++] = 0x403000;                            // [sp]
    rec[n++] = 8;                                   // dyn size
    perf_event_header h{PERF_RECORD_SAMPLE, 0, (uint16_t)(n * 8)};
    memcpy(rec, &h, sizeof h);
    prof_session_t *s = new_session();
    prof_perf_parse(s, rec, n * 8, st);
    ASSERT_EQ(s->touch.n, 1u);
    const prof_touch_t &t = s->touch.v[0];
    EXPECT_EQ(t.pid, 7);
    EXPECT_EQ(t.tid, 8);
    EXPECT_EQ(t.addr, 0x7000u);
    EXPECT_EQ(t.cpu, 1);
    EXPECT_EQ(t.ret, 0x403000u);
    ASSERT_GE(t.chain, 0);
    EXPECT_EQ(s->chains.v[t.chain].n, 2);
    EXPECT_EQ(s->chains.v[t.chain].ip[1], 0x402000u);
    free(s->touch.v);
    free(s->chains.v);
    free(s);
}
