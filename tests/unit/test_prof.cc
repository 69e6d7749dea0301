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

// VEC_PUSH is C (void * to T *): the tests grow the vectors themselves
template <typename V, typename T> static void push(V &vec, const T &item)
{
    vec.v = (T *)realloc(vec.v, (vec.n + 1) * sizeof(T));
    ASSERT_NE(vec.v, nullptr);
    vec.v[vec.n++] = item;
    vec.cap = vec.n;
}

static void push_touch(prof_session_t *s, uint64_t time, uint64_t addr, uint64_t period, uint64_t ip)
{
    prof_touch_t t{};
    t.time = time;
    t.addr = addr;
    t.ip = ip;
    t.period = period;
    t.pid = 7;
    t.tid = 7;
    t.cpu = -1;
    t.chain = -1;
    push(s->touch, t);
}

static prof_session_t *one_alloc_session(uint64_t base, uint64_t pages)
{
    prof_session_t *s = new_session();
    prof_alloc_t a{};
    a.pid = 7;
    a.tid = 7;
    a.time = 1;
    a.free_time = UINT64_MAX;
    a.addr = base;
    a.size = pages * 4096;
    push(s->alloc, a);
    return s;
}

static void free_session(prof_session_t *s, prof_result_t *r)
{
    prof_result_free(r);
    free(s->touch.v);
    free(s->alloc.v);
    free(s);
}

// A fault on a page already touched (a NUMA hinting fault, the write fault
// after a protection is lifted) is not a first touch, even when it comes
// later from another line: the init line keeps the variable.
TEST(ProfAnalyze, RefaultOnTouchedPageIsNotAFirstTouch)
{
    const uint64_t base = 0x10000000;
    prof_session_t *s = one_alloc_session(base, 8);
    for (int rep = 0; rep < 5; rep++) // out of time order on purpose
        for (uint64_t p = 0; p < 8; p++)
            push_touch(s, 1000 + rep * 100 + p, base + p * 4096 + 8 * rep, 1, 0x2000);
    for (uint64_t p = 0; p < 8; p++)
        push_touch(s, 100 + p, base + p * 4096, 1, 0x1000);
    prof_result_t r;
    prof_analyze(s, &r);
    ASSERT_EQ(r.vars.n, 1u);
    EXPECT_EQ(r.vars.v[0].ft_pages, 8u);
    EXPECT_EQ(r.ft_refaults, 40u);
    ASSERT_EQ(r.vars.v[0].ft_sites.n, 1u); // the later line never appears
    free_session(s, &r);
}

// Sampled faults stand for `period` faults: once an allocation has had as
// many first touches as it has pages, faults on pages no sample saw are
// re-faults too.
TEST(ProfAnalyze, FirstTouchesStopAtTheAllocationsPageCount)
{
    const uint64_t base = 0x20000000;
    prof_session_t *s = one_alloc_session(base, 8);
    for (uint64_t p = 0; p < 3; p++) // 3 samples x period 4 >= 8 + 1 pages
        push_touch(s, 100 + p, base + p * 3 * 4096, 4, 0x1000);
    push_touch(s, 500, base + 1 * 4096, 1, 0x2000);
    push_touch(s, 501, base + 2 * 4096, 1, 0x2000);
    prof_result_t r;
    prof_analyze(s, &r);
    ASSERT_EQ(r.vars.n, 1u);
    EXPECT_EQ(r.vars.v[0].ft_pages, 12u);
    EXPECT_EQ(r.ft_refaults, 2u);
    free_session(s, &r);
}

// Memory freed and allocated again at the same address is touched afresh.
TEST(ProfAnalyze, NewAllocationAtTheSameAddressIsTouchedAfresh)
{
    const uint64_t base = 0x30000000;
    prof_session_t *s = one_alloc_session(base, 2);
    s->alloc.v[0].free_time = 50;
    prof_alloc_t again = s->alloc.v[0];
    again.time = 60;
    again.free_time = UINT64_MAX;
    push(s->alloc, again);
    push_touch(s, 10, base, 1, 0x1000);
    push_touch(s, 70, base, 1, 0x1000);
    prof_result_t r;
    prof_analyze(s, &r);
    EXPECT_EQ(r.ft_refaults, 0u);
    uint64_t pages = 0;
    for (size_t v = 0; v < r.vars.n; v++)
        pages += r.vars.v[v].ft_pages;
    EXPECT_EQ(pages, 2u);
    free_session(s, &r);
}

// A table all 4 nodes update everywhere, 85 access samples (a short run):
// its eighths lead by chance, which must not read as partitioned use.
// `part` = 1: each eighth used by one node (a halo grid).
static std::string pattern_of(uint64_t seed, int samples, bool part)
{
    prof_session_t *s = new_session();
    s->nnodes = 4;
    auto *v = (prof_var_t *)calloc(1, sizeof(prof_var_t));
    snprintf(v->name, sizeof v->name, "t");
    snprintf(v->kind, sizeof v->kind, "heap");
    v->allocations = 1;
    v->pages_by_node[0] = 512;
    prof_line_t l{};
    snprintf(l.loc, sizeof l.loc, "t.c:25");
    uint64_t x = seed * 2654435761u + 1;
    for (int i = 0; i < samples; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        int region = (int)(x % 8), node = part ? region / 2 : (int)((x >> 8) % 4);
        v->region_node[region][node]++;
        l.by_node[node]++;
        (node ? l.remote : l.local)++;
    }
    v->acc_samples = (uint64_t)samples;
    v->acc_local = l.local;
    v->acc_remote = l.remote;
    push(v->acc_lines, l);
    prof_finding(s, v);
    std::string p = v->pattern;
    free(v->acc_lines.v);
    free(v);
    free(s);
    return p;
}

TEST(ProfFinding, FewSamplesOfASharedTableAreNotReadAsPartitioned)
{
    int hot = 0, init = 0;
    for (uint64_t seed = 1; seed <= 400; seed++) {
        hot += pattern_of(seed, 85, false) == "shared-hotspot";
        init += pattern_of(seed, 85, true) == "one-node-init";
    }
    EXPECT_GE(hot, 396) << "shared table misread as partitioned in " << 400 - hot << " of 400";
    EXPECT_EQ(init, 400);
}
