// prof: name guessing, option validation, shim-log and perf-record parsing.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>
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
    /* several statements on the line: the one that calls the allocator */
    EXPECT_EQ(guess(" size_t n=64<<20; char *a=shmem_malloc(n);"), "a");
    EXPECT_EQ(guess("for (i = 0; i < n; i++) t[i] = malloc(m);"), "t");
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
    lprof_access_t ac{{LPROF_REC_ACCESS, sizeof ac}, 35, 0x100010, 0x4000, 43, 1, 0, 1 | 4, 0};
    fwrite(&ac, sizeof ac, 1, f);
    lprof_access_t ac2{{LPROF_REC_ACCESS, sizeof ac2}, 36, 0x100020, 0x4000, 43, 1, -1, 2, 0};
    fwrite(&ac2, sizeof ac2, 1, f);
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
    ASSERT_EQ(s->acc.n, 2u);
    EXPECT_EQ(s->acc.v[0].tid, 43);
    EXPECT_EQ(s->acc.v[0].node, 0);
    EXPECT_EQ(s->acc.v[0].write, 1);
    EXPECT_TRUE(s->acc.v[0].present);
    EXPECT_FALSE(s->acc.v[0].first);
    EXPECT_EQ(s->acc.v[1].write, 0);
    EXPECT_TRUE(s->acc.v[1].first);
    EXPECT_FALSE(s->acc.v[1].present);
    EXPECT_EQ(s->shim_procs, 1);
    prof_session_free(s);
}

// A record shorter than its type's fields is damaged: skipped, never read
// past its end (the reader's buffer still held the previous record there).
TEST(ProfShimLog, ShortRecordsAreSkipped)
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
    a.h = {LPROF_REC_ALLOC, sizeof a};
    a.time = 20;
    a.addr = 0x100000;
    a.size = 1 << 20;
    a.nframes = LPROF_MAX_FRAMES;
    for (int i = 0; i < LPROF_MAX_FRAMES; i++)
        a.frames[i] = 0x1000 + i;
    fwrite(&a, sizeof a, 1, f);
    // says 16 frames, holds 2: the 2
    a.addr = 0x200000;
    a.h.size = (uint32_t)(sizeof a - (LPROF_MAX_FRAMES - 2) * 8);
    fwrite(&a, a.h.size, 1, f);
    // header and half the fields of each type: none of them taken
    uint64_t words[4] = {};
    for (uint32_t t = LPROF_REC_START; t <= LPROF_REC_CRASH; t++) {
        lprof_hdr_t h{t, 16};
        memcpy(words, &h, sizeof h);
        fwrite(words, 16, 1, f);
    }
    fclose(f);

    prof_session_t *s = new_session();
    ASSERT_EQ(prof_shimlog_read(s, path), LOCUS_OK);
    unlink(path);
    ASSERT_EQ(s->alloc.n, 2u);
    EXPECT_EQ(s->alloc.v[0].nframes, LPROF_MAX_FRAMES);
    EXPECT_EQ(s->alloc.v[1].nframes, 2);
    EXPECT_EQ(s->alloc.v[1].frames[1], 0x1001u);
    EXPECT_EQ(s->alloc.v[0].free_time, UINT64_MAX); // no FREE of its address taken
    EXPECT_EQ(s->acc.n, 0u);
    EXPECT_EQ(s->shim_procs, 1);
    EXPECT_FALSE(s->crash.valid);
    prof_session_free(s);
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
    prof_session_free(s);
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

static void push_access(prof_session_t *s, uint64_t time, uint64_t addr, bool first, bool present)
{
    prof_access_t a{};
    a.time = time;
    a.addr = addr;
    a.ip = 0x3000;
    a.pid = 7;
    a.tid = 8;
    a.cpu = -1;
    a.node = present ? 0 : -1;
    a.write = 1;
    a.first = first;
    a.present = present;
    push(s->acc, a);
}

static void free_session(prof_session_t *s, prof_result_t *r)
{
    prof_result_free(r);
    prof_session_free(s);
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

// An access sample that found its page there makes later faults on that
// page re-faults, even on pages no first-touch sample saw and with the
// allocation's budget not spent: the spurious faults of threads that waited
// while the access sampler restored a page (a shared table, vm_prof_table).
// An access that was the page's first touch, or whose page state is
// unknown, marks nothing; a fault before the access is still a first touch.
TEST(ProfAnalyze, FaultsAfterAnAccessSampleFoundThePageAreRefaults)
{
    const uint64_t base = 0x40000000;
    prof_session_t *s = one_alloc_session(base, 8);
    push_touch(s, 100, base, 1, 0x1000); // the init, caught on 2 pages of 8
    push_touch(s, 101, base + 4096, 1, 0x1000);
    for (uint64_t p = 2; p < 6; p++)
        push_access(s, 500 + p, base + p * 4096 + 64, false, true);
    push_access(s, 500, base + 6 * 4096, true, false); // its first touch
    push_access(s, 501, base + 7 * 4096, false, false); // move_pages failed
    push_touch(s, 400, base + 5 * 4096, 1, 0x1000);     // before its access
    for (uint64_t p = 2; p < 8; p++)
        push_touch(s, 600 + p, base + p * 4096, 1, 0x2000); // the update loop
    prof_result_t r;
    prof_analyze(s, &r);
    ASSERT_EQ(r.vars.n, 1u);
    EXPECT_EQ(r.ft_refaults, 4u); // pages 2..5 after their access samples
    EXPECT_EQ(r.vars.v[0].ft_pages, 5u);
    ASSERT_EQ(r.vars.v[0].ft_sites.n, 2u);
    uint64_t init = 0, loop = 0;
    for (size_t k = 0; k < r.vars.v[0].ft_sites.n; k++)
        (strstr(r.vars.v[0].ft_sites.v[k].loc, "0x1000") ? init : loop) += r.vars.v[0].ft_sites.v[k].count;
    EXPECT_EQ(init, 3u);
    EXPECT_EQ(loop, 2u); // pages 6 and 7: their accesses did not see them there
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
    prof_session_free(s);
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

extern "C" {
#include "prof/prof_json.h"
}

static std::string slurp(const std::string &p)
{
    std::ifstream f(p);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

TEST(ProfJson, ReadsItsOwnKindOfDocument)
{
    const char *doc = "{\"a\": [1, 2.5, -3e2, true, false, null], \"s\": \"x\\\"y\\\\z\\u00e9\\n\", \"o\": {}}";
    char err[128];
    pj_t *v = pj_parse(doc, strlen(doc), err, sizeof err);
    ASSERT_NE(v, nullptr) << err;
    EXPECT_EQ(pj_len(pj_get(v, "a")), 6u);
    EXPECT_EQ(pj_num(pj_at(pj_get(v, "a"), 2), 0), -300);
    EXPECT_EQ(pj_num(pj_at(pj_get(v, "a"), 3), 0), 1);
    EXPECT_EQ(pj_at(pj_get(v, "a"), 5)->t, PJ_NULL);
    EXPECT_STREQ(pj_str(pj_get(v, "s"), ""), "x\"y\\z\xc3\xa9\n");
    EXPECT_EQ(pj_len(pj_get(v, "o")), 0u);
    EXPECT_EQ(pj_get(v, "missing"), nullptr);
    EXPECT_EQ(pj_get(pj_get(v, "a"), "x"), nullptr); // not an object: no crash
    pj_free(v);
}

TEST(ProfJson, BadInputIsAnErrorWithItsPlace)
{
    std::string deep(200, '[');
    const char *bad[] = {"", "{", "[1,]", "\"abc", "{\"a\" 1}", "[1] x", "\"\\q\"", "\"\\u12\"", "{\"a\":}",
                         "-", "[tru]", deep.c_str()};
    for (const char *b : bad) {
        char err[128];
        pj_t *v = pj_parse(b, strlen(b), err, sizeof err);
        EXPECT_EQ(v, nullptr) << "accepted: " << b;
        EXPECT_NE(std::string(err).find("at byte"), std::string::npos) << b << ": " << err;
    }
}

TEST(ProfJob, OutputPatternRankPidHost)
{
    prof_job_t j{};
    j.rank = 3;
    j.size = 4;
    snprintf(j.host, sizeof j.host, "h1");
    char out[256];
    ASSERT_EQ(prof_output_path("p.%r.%p.%h.json", &j, 42, out, sizeof out), LOCUS_OK);
    EXPECT_STREQ(out, "p.3.42.h1.json");
    ASSERT_EQ(prof_output_path("100%%.%r", &j, 1, out, sizeof out), LOCUS_OK);
    EXPECT_STREQ(out, "100%.3");
    EXPECT_EQ(prof_output_path("p.%q.json", &j, 1, out, sizeof out), LOCUS_ERR_INVALID);
    EXPECT_NE(std::string(locus_last_error()).find("%q"), std::string::npos);
    j.rank = -1;
    EXPECT_EQ(prof_output_path("p.%r.json", &j, 1, out, sizeof out), LOCUS_ERR_INVALID);
    EXPECT_NE(std::string(locus_last_error()).find("PMIX_RANK"), std::string::npos);
    ASSERT_EQ(prof_output_path("plain.json", &j, 1, out, sizeof out), LOCUS_OK);
    EXPECT_STREQ(out, "plain.json");
}

TEST(ProfJob, RankFromTheLaunchersEnvironmentInOrder)
{
    const char *vars[] = {"PMIX_RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_SIZE",
                          "PMIX_SIZE", "PMI_SIZE", "SLURM_NTASKS"};
    for (const char *v : vars)
        unsetenv(v);
    prof_job_t j;
    prof_job_detect(&j);
    EXPECT_EQ(j.rank, -1);
    setenv("SLURM_PROCID", "7", 1);
    setenv("SLURM_NTASKS", "8", 1);
    prof_job_detect(&j);
    EXPECT_EQ(j.rank, 7);
    EXPECT_EQ(j.size, 8);
    EXPECT_STREQ(j.var, "SLURM_PROCID");
    setenv("PMI_RANK", "6", 1);
    prof_job_detect(&j);
    EXPECT_EQ(j.rank, 6);
    setenv("OMPI_COMM_WORLD_RANK", "5", 1);
    setenv("OMPI_COMM_WORLD_SIZE", "9", 1);
    prof_job_detect(&j);
    EXPECT_EQ(j.rank, 5);
    EXPECT_EQ(j.size, 9);
    setenv("PMIX_RANK", "2", 1);
    prof_job_detect(&j);
    EXPECT_EQ(j.rank, 2);
    EXPECT_STREQ(j.var, "PMIX_RANK");
    EXPECT_EQ(j.size, 9); // no PMIX_SIZE: Open MPI's
    setenv("PMIX_RANK", "x", 1); // not a number: the next one
    prof_job_detect(&j);
    EXPECT_EQ(j.rank, 5);
    for (const char *v : vars)
        unsetenv(v);
}

// Pages on node 0, first touched from node 1, the process started bound to
// node 0: the cause is the policy set from outside, not the first touch.
static prof_var_t *bound_var(prof_session_t *s, int mode)
{
    s->nnodes = 2;
    prof_start_t st{};
    st.pid = 7;
    st.policy_mode = mode;
    st.policy_nodes[0] = 1; // node 0
    push(s->starts, st);
    auto *v = (prof_var_t *)calloc(1, sizeof(prof_var_t));
    snprintf(v->name, sizeof v->name, "field");
    snprintf(v->kind, sizeof v->kind, "heap");
    snprintf(v->placement_source, sizeof v->placement_source, "move_pages");
    v->pid = 7;
    v->allocations = 1;
    v->pages_by_node[0] = 6144;
    v->ft_pages = 6144;
    v->ft_by_node[1] = 6144;
    prof_line_t l{};
    snprintf(l.loc, sizeof l.loc, "field.c:24");
    l.count = 6144;
    l.tids_n = 1;
    push(v->ft_sites, l);
    return v;
}

static void free_var(prof_var_t *v)
{
    free(v->ft_sites.v);
    free(v->acc_lines.v);
    free(v);
}

TEST(ProfFinding, PolicySetFromOutsideIsNamed)
{
    prof_session_t *s = new_session();
    prof_var_t *v = bound_var(s, 2 /* MPOL_BIND */);
    prof_finding(s, v);
    EXPECT_STREQ(v->pattern, "policy-placement");
    std::string f = v->finding;
    EXPECT_NE(f.find("set from outside (bind to node 0"), std::string::npos) << f;
    EXPECT_NE(f.find("field.c:24"), std::string::npos) << f;
    EXPECT_NE(f.find("not by the first touch"), std::string::npos) << f;
    free_var(v);
    prof_session_free(s);

    s = new_session(); // no policy at start: not "from outside"
    v = bound_var(s, 0);
    prof_finding(s, v);
    EXPECT_STREQ(v->pattern, "policy-placement");
    EXPECT_EQ(std::string(v->finding).find("outside"), std::string::npos) << v->finding;
    free_var(v);
    prof_session_free(s);

    s = new_session(); // touched where it lies: nothing to say
    v = bound_var(s, 2);
    v->ft_by_node[1] = 0;
    v->ft_by_node[0] = 6144;
    prof_finding(s, v);
    EXPECT_STRNE(v->pattern, "policy-placement");
    free_var(v);
    prof_session_free(s);
}

// Two ranks' profiles as `locus profile -o prof.%r.json` writes them (only
// the keys the merge reads): rank 1 ran on node 1 with its pages on node 0.
static std::string rank_profile(int rank, int run_node, int page_node, const char *finding, long bytes)
{
    char buf[4096];
    int pages[2] = {0, 0};
    pages[page_node] = (int)(bytes / 4096);
    snprintf(buf, sizeof buf,
             "{\"schema\": \"locus-profile/1\", \"command\": [\"./field\"], \"host\": \"h\","
             " \"job\": {\"rank\": %d, \"size\": 2, \"from\": \"PMIX_RANK\"},"
             " \"exit\": {\"status\": 0, \"code\": 0, \"signal\": null},"
             " \"machine\": {\"nodes\": [{\"id\": 0, \"cpus\": [0]}, {\"id\": 1, \"cpus\": [1]}]},"
             " \"processes\": [{\"pid\": 1, \"cpus\": [%d], \"policy\": {\"mode\": \"%s\", \"nodes\": [0]}}],"
             " \"threads\": [{\"pid\": 1, \"tid\": 1, \"samples\": 9, \"cpus\": [%d], \"nodes\": [%d]}],"
             " \"access_matrix\": [[0, 0], [0, 0]],"
             " \"variables\": [{\"name\": \"field\", \"kind\": \"heap\", \"site\": \"field.c:20\", \"bytes\": %ld,"
             " \"max_bytes\": %ld, \"pages_by_node\": [%d, %d], \"accesses\": {\"samples\": 0, \"remote\": 0},"
             " \"pattern\": \"%s\", \"finding\": \"%s\"},"
             " {\"name\": \"[stack]\", \"kind\": \"other\", \"site\": \"[stack]\", \"bytes\": 0, \"max_bytes\": 0,"
             " \"pages_by_node\": [5, 0], \"pattern\": \"\", \"finding\": \"\"}]}",
             rank, run_node, finding[0] ? "bind" : "default", run_node, run_node, bytes, bytes, pages[0], pages[1],
             finding[0] ? "policy-placement" : "", finding);
    return buf;
}

class ProfMerge : public ::testing::Test {
  protected:
    std::string dir;
    void SetUp() override
    {
        char t[] = "/tmp/test_prof_mergeXXXXXX";
        ASSERT_NE(mkdtemp(t), nullptr);
        dir = t;
    }
    void TearDown() override { std::system(("rm -rf " + dir).c_str()); }
    std::string write(const std::string &name, const std::string &text)
    {
        std::string p = dir + "/" + name;
        FILE *f = fopen(p.c_str(), "w");
        fputs(text.c_str(), f);
        fclose(f);
        return p;
    }
    std::string merge(const std::vector<std::string> &files, locus_status_t *st, const std::string &out = "")
    {
        std::vector<const char *> v;
        for (auto &f : files)
            v.push_back(f.c_str());
        char *text = nullptr;
        size_t len = 0;
        FILE *rep = open_memstream(&text, &len);
        *st = locus_prof_merge(v.data(), (int)v.size(), out.empty() ? nullptr : out.c_str(), rep);
        fclose(rep);
        std::string r = text ? text : "";
        free(text);
        return r;
    }
};

TEST_F(ProfMerge, NamesTheRankWhoseMemoryIsAway)
{
    const char *why = "field: 100 % of pages on node 0, but first touched by threads on node 1 at field.c:24: the "
                      "memory policy was set from outside (bind to node 0 ...), not by the first touch";
    std::string a = write("p.0.json", rank_profile(0, 0, 0, "", 8 << 20));
    std::string b = write("p.1.json", rank_profile(1, 1, 0, why, 8 << 20));
    locus_status_t st;
    std::string r = merge({b, a}, &st, dir + "/job.json"); // any order
    ASSERT_EQ(st, LOCUS_OK) << locus_last_error();
    EXPECT_NE(r.find("2 ranks on 1 host"), std::string::npos) << r;
    EXPECT_NE(r.find("- rank 1 (h): field: 100 % of pages on node 0"), std::string::npos) << r;
    EXPECT_EQ(r.find("- rank 0"), std::string::npos) << r;
    EXPECT_NE(r.find("<- memory away from its threads"), std::string::npos) << r;
    EXPECT_NE(r.find("bind to node 0"), std::string::npos) << r; // the ranks' table
    EXPECT_EQ(r.find("[stack]"), std::string::npos) << r;         // mappings are not variables
    std::string j = slurp(dir + "/job.json");
    EXPECT_NE(j.find("\"schema\": \"locus-job/1\""), std::string::npos);
    EXPECT_NE(j.find("\"remote_rank\": true"), std::string::npos) << j;
    char err[128];
    pj_t *doc = pj_parse(j.c_str(), j.size(), err, sizeof err);
    EXPECT_NE(doc, nullptr) << err; // the job JSON reads back
    pj_free(doc);
}

TEST_F(ProfMerge, UnequalSizesAreAnImbalance)
{
    std::string a = write("p.0.json", rank_profile(0, 0, 0, "", 4 << 20));
    std::string b = write("p.1.json", rank_profile(1, 1, 1, "", 16 << 20));
    locus_status_t st;
    std::string r = merge({a, b}, &st);
    ASSERT_EQ(st, LOCUS_OK);
    EXPECT_NE(r.find("field (field.c:20): ranks allocate unequal amounts: rank 1 16.0 MiB, the smallest 4.0 MiB"),
              std::string::npos)
        << r;
    EXPECT_EQ(r.find("away"), std::string::npos) << r; // both local
}

TEST_F(ProfMerge, BadInputIsRefusedClearly)
{
    locus_status_t st;
    std::string a = write("p.0.json", rank_profile(0, 0, 0, "", 4 << 20));
    merge({a, write("bad.json", "{\"schema\": ")}, &st);
    EXPECT_EQ(st, LOCUS_ERR_INVALID);
    EXPECT_NE(std::string(locus_last_error()).find("bad.json' is not JSON"), std::string::npos) << locus_last_error();
    merge({a, write("other.json", "{\"schema\": \"locus-job/1\"}")}, &st);
    EXPECT_EQ(st, LOCUS_ERR_INVALID);
    EXPECT_NE(std::string(locus_last_error()).find("not a locus profile"), std::string::npos);
    merge({a, write("again.json", rank_profile(0, 1, 1, "", 4 << 20))}, &st);
    EXPECT_EQ(st, LOCUS_ERR_INVALID);
    EXPECT_NE(std::string(locus_last_error()).find("both rank 0"), std::string::npos) << locus_last_error();
    merge({dir + "/missing.json"}, &st);
    EXPECT_EQ(st, LOCUS_ERR_SYSTEM);
    merge({}, &st);
    EXPECT_EQ(st, LOCUS_ERR_INVALID);
}
