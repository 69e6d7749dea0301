// The fixed heap on this machine (one NUMA node): attribute parsing and
// validation, every bad input, nothing left mapped, 4k/thp/firsttouch placement
// and residency.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <string>
#include <sys/mman.h>
#include <unistd.h>

extern "C" {
#include <locus/heap.h>
#include <locus/topo.h>
#include "core/config.h"
}

static const uint64_t MiB = 1ull << 20;

// Address ranges in /proc/self/maps.
static std::set<std::pair<uintptr_t, uintptr_t>> maps()
{
    std::set<std::pair<uintptr_t, uintptr_t>> r;
    std::ifstream f("/proc/self/maps");
    std::string line;
    while (std::getline(f, line)) {
        uintptr_t a, b;
        if (sscanf(line.c_str(), "%lx-%lx", &a, &b) == 2)
            r.insert({a, b});
    }
    return r;
}

static bool overlaps_any(uintptr_t lo, uintptr_t hi)
{
    for (auto &m : maps())
        if (m.first < hi && m.second > lo)
            return true;
    return false;
}

// Mappings of at least `min` bytes.
static size_t big_mappings(uint64_t min)
{
    size_t n = 0;
    for (auto &m : maps())
        n += m.second - m.first >= min;
    return n;
}

static bool has(const char *hay, const char *needle) { return std::strstr(hay, needle) != nullptr; }

class Heap : public ::testing::Test {
protected:
    void SetUp() override
    {
        ASSERT_EQ(locus_topo_load(&topo), LOCUS_OK) << locus_last_error();
        locus_heap_attr_init(&a);
        a.size = 64 * MiB;
        a.verify = LOCUS_VERIFY_ALL;
        for (const char *v : {"SIZE", "PROCS", "POLICY", "PAGES", "THREADS", "VERIFY", "CHUNK", "SAMPLES"})
            unsetenv((std::string("LOCUS_HEAP_") + v).c_str());
    }
    void TearDown() override { locus_topo_destroy(topo); }
    // Creation must fail with `code`, name `needle`, and map nothing.
    void expect_fail(locus_status_t code, const char *needle)
    {
        size_t before = big_mappings(32 * MiB);
        locus_heap_t *h = reinterpret_cast<locus_heap_t *>(0x1);
        EXPECT_EQ(locus_heap_create(&a, topo, &h), code) << locus_last_error();
        EXPECT_TRUE(has(locus_last_error(), needle)) << locus_last_error();
        EXPECT_EQ(h, reinterpret_cast<locus_heap_t *>(0x1));
        EXPECT_EQ(big_mappings(32 * MiB), before);
        EXPECT_EQ(strchr(locus_last_error(), '\n'), nullptr) << "one line";
    }
    // Creation must succeed; the new heap's stats into s.
    locus_heap_t *create_ok(locus_heap_stats_t &s)
    {
        locus_heap_t *h = nullptr;
        EXPECT_EQ(locus_heap_create(&a, topo, &h), LOCUS_OK) << locus_last_error();
        if (h)
            locus_heap_stats(h, &s);
        return h;
    }
    // After a full verify: the heap's stats into s, and the units found on nodes.
    static uint64_t verified_units(locus_heap_t *h, locus_heap_stats_t &s)
    {
        EXPECT_EQ(locus_heap_verify(h, LOCUS_VERIFY_ALL), LOCUS_OK) << locus_last_error();
        locus_heap_stats(h, &s);
        uint64_t on_nodes = 0;
        for (int i = 0; i < s.num_nodes; i++)
            on_nodes += s.node_units[i];
        return on_nodes;
    }
    locus_topo_t *topo = nullptr;
    locus_heap_attr_t a;
};

TEST(HeapAttr, ParsesPolicies)
{
    locus_heap_attr_t a;
    locus_heap_attr_init(&a);
    ASSERT_EQ(locus_heap_parse_policy("bind:1,3-5", &a), LOCUS_OK);
    EXPECT_EQ(a.policy, LOCUS_HEAP_BIND);
    ASSERT_EQ(a.num_nodes, 4);
    EXPECT_EQ(a.nodes[0], 1);
    EXPECT_EQ(a.nodes[3], 5);
    ASSERT_EQ(locus_heap_parse_policy("interleave", &a), LOCUS_OK);
    EXPECT_EQ(a.policy, LOCUS_HEAP_INTERLEAVE);
    EXPECT_EQ(a.num_nodes, 0);
    ASSERT_EQ(locus_heap_parse_policy("interleave:0,2", &a), LOCUS_OK);
    EXPECT_EQ(a.num_nodes, 2);
    ASSERT_EQ(locus_heap_parse_policy("firsttouch", &a), LOCUS_OK);
    EXPECT_EQ(a.policy, LOCUS_HEAP_FIRSTTOUCH);
    EXPECT_EQ(a.num_nodes, 0);
    ASSERT_EQ(locus_heap_parse_policy("local", &a), LOCUS_OK);
    EXPECT_EQ(a.policy, LOCUS_HEAP_LOCAL);
}

TEST(HeapAttr, RejectsBadPoliciesNamingThem)
{
    locus_heap_attr_t a, before;
    locus_heap_attr_init(&a);
    before = a;
    for (const char *bad : {"", "spread", "bind", "bind:", "bind:x", "bind:1,", "bind:1,1", "bind:3-1",
                            "bind:-1", "bind:2048", "firsttouch:0", "interleave:", "interleave:0;1",
                            "local:a", "interleaves"}) {
        EXPECT_EQ(locus_heap_parse_policy(bad, &a), LOCUS_ERR_INVALID) << bad;
        EXPECT_TRUE(has(locus_last_error(), (std::string("'") + bad + "'").c_str())) << locus_last_error();
        EXPECT_TRUE(has(locus_last_error(), "bind:NODES")) << locus_last_error();
    }
    EXPECT_EQ(memcmp(&a, &before, sizeof a), 0);
}

TEST(HeapAttr, PagesAndVerify)
{
    locus_heap_pages_t p;
    locus_heap_verify_t v;
    ASSERT_EQ(locus_heap_parse_pages("huge2m", &p), LOCUS_OK);
    EXPECT_EQ(p, LOCUS_PAGES_HUGE2M);
    ASSERT_EQ(locus_heap_parse_pages("THP", &p), LOCUS_OK);
    EXPECT_EQ(p, LOCUS_PAGES_THP);
    EXPECT_EQ(locus_heap_parse_pages("2m", &p), LOCUS_ERR_INVALID);
    EXPECT_TRUE(has(locus_last_error(), "'2m'") && has(locus_last_error(), "huge1g"));
    ASSERT_EQ(locus_heap_parse_verify("none", &v), LOCUS_OK);
    EXPECT_EQ(v, LOCUS_VERIFY_NONE);
    EXPECT_EQ(locus_heap_parse_verify("some", &v), LOCUS_ERR_INVALID);
    EXPECT_TRUE(has(locus_last_error(), "'some'"));
}

TEST_F(Heap, EnvOverridesAndGarbageIsNamed)
{
    setenv("LOCUS_HEAP_SIZE", "10%", 1);
    setenv("LOCUS_HEAP_PROCS", "4", 1);
    setenv("LOCUS_HEAP_POLICY", "bind:0", 1);
    setenv("LOCUS_HEAP_PAGES", "4k", 1);
    setenv("LOCUS_HEAP_THREADS", "3", 1);
    setenv("LOCUS_HEAP_VERIFY", "none", 1);
    setenv("LOCUS_HEAP_CHUNK", "4M", 1);
    setenv("LOCUS_HEAP_SAMPLES", "100", 1);
    locus_heap_attr_t e;
    locus_heap_attr_init(&e);
    ASSERT_EQ(locus_heap_attr_from_env(&e), LOCUS_OK) << locus_last_error();
    EXPECT_EQ(e.percent, 10.0);
    EXPECT_EQ(e.procs, 4);
    EXPECT_EQ(e.policy, LOCUS_HEAP_BIND);
    EXPECT_EQ(e.num_nodes, 1);
    EXPECT_EQ(e.pages, LOCUS_PAGES_4K);
    EXPECT_EQ(e.threads, 3);
    EXPECT_EQ(e.verify, LOCUS_VERIFY_NONE);
    EXPECT_EQ(e.chunk, 4 * MiB);
    EXPECT_EQ(e.samples, 100u);
    struct { const char *var, *bad; } cases[] = {
        {"LOCUS_HEAP_SIZE", "12Q"},      {"LOCUS_HEAP_SIZE", "0%"},   {"LOCUS_HEAP_PROCS", "0"},
        {"LOCUS_HEAP_PROCS", "two"},     {"LOCUS_HEAP_POLICY", "bind:"}, {"LOCUS_HEAP_POLICY", "near"},
        {"LOCUS_HEAP_PAGES", "64k"},     {"LOCUS_HEAP_THREADS", "-1"}, {"LOCUS_HEAP_THREADS", "1.5"},
        {"LOCUS_HEAP_VERIFY", "most"},   {"LOCUS_HEAP_CHUNK", "1K"},  {"LOCUS_HEAP_CHUNK", "2T"},
        {"LOCUS_HEAP_SAMPLES", "0"},
    };
    for (auto &c : cases) {
        std::string old = getenv(c.var);
        setenv(c.var, c.bad, 1);
        locus_heap_attr_t x, before;
        locus_heap_attr_init(&x);
        before = x;
        EXPECT_NE(locus_heap_attr_from_env(&x), LOCUS_OK) << c.var << "=" << c.bad;
        EXPECT_TRUE(has(locus_last_error(), c.var)) << locus_last_error();
        EXPECT_TRUE(has(locus_last_error(), c.bad)) << locus_last_error();
        EXPECT_EQ(memcmp(&x, &before, sizeof x), 0) << "attr changed by a bad " << c.var;
        EXPECT_NE(locus_config_check(), LOCUS_OK) << c.var;
        setenv(c.var, old.c_str(), 1);
    }
    for (const char *v : {"SIZE", "PROCS", "POLICY", "PAGES", "THREADS", "VERIFY", "CHUNK", "SAMPLES"})
        unsetenv((std::string("LOCUS_HEAP_") + v).c_str());
}

TEST_F(Heap, BadInputFailsCleanly)
{
    a.size = 0;
    expect_fail(LOCUS_ERR_INVALID, "size 0");
    a.size = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE) + 4096;
    expect_fail(LOCUS_ERR_RANGE, "larger than physical memory");
    a.size = 64 * MiB;
    ASSERT_EQ(locus_heap_parse_policy("bind:7", &a), LOCUS_OK);
    expect_fail(LOCUS_ERR_RANGE, "node 7 out of range");
    ASSERT_EQ(locus_heap_parse_policy("interleave:0,9", &a), LOCUS_OK);
    expect_fail(LOCUS_ERR_RANGE, "node 9");
    ASSERT_EQ(locus_heap_parse_policy("interleave", &a), LOCUS_OK);
    a.procs = 0;
    expect_fail(LOCUS_ERR_INVALID, "procs 0");
    a.procs = 1;
    a.threads = -2;
    expect_fail(LOCUS_ERR_INVALID, "threads -2");
    a.threads = 0;
    a.policy = (locus_heap_policy_t)9;
    expect_fail(LOCUS_ERR_INVALID, "policy 9");
    a.policy = LOCUS_HEAP_BIND;
    a.num_nodes = 0;
    expect_fail(LOCUS_ERR_INVALID, "bind");
}

TEST_F(Heap, HugePagesWithoutPoolSaysHowToReserve)
{
    FILE *f = fopen("/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages", "r");
    long freep = -1;
    if (f) {
        if (fscanf(f, "%ld", &freep) != 1)
            freep = -1;
        fclose(f);
    }
    if (freep < 0 || freep >= 32)
        GTEST_SKIP() << "the 2 MiB pool has free pages (or none exists)";
    a.pages = LOCUS_PAGES_HUGE2M;
    expect_fail(LOCUS_ERR_NO_MEMORY, "32 pages of 2.0 MiB needed");
    EXPECT_TRUE(has(locus_last_error(), "echo 32 > /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"))
        << locus_last_error();
}

TEST_F(Heap, FourKInterleaveAllResidentOnNodeZeroAndUnmapped)
{
    if (locus_topo_num_nodes(topo) != 1)
        GTEST_SKIP() << "single-node expectations";
    a.pages = LOCUS_PAGES_4K;
    locus_heap_t *h;
    ASSERT_EQ(locus_heap_create(&a, topo, &h), LOCUS_OK) << locus_last_error();
    locus_heap_stats_t s;
    ASSERT_EQ(locus_heap_stats(h, &s), LOCUS_OK);
    EXPECT_EQ(s.size, 64 * MiB);
    EXPECT_EQ(s.pages, LOCUS_PAGES_4K);
    EXPECT_EQ(s.unit_size, 4096u);
    EXPECT_EQ(s.units_total, 16384u);
    EXPECT_EQ(s.units_checked, 16384u);
    EXPECT_EQ(s.node_units[0], 16384u);
    EXPECT_EQ(s.not_faulted + s.zero_page + s.other_status, 0u);
    EXPECT_EQ(s.resident_bytes, 64 * MiB);
    EXPECT_EQ(s.huge_bytes, 0u);
    EXPECT_GE(s.threads, 1);
    EXPECT_GT(s.gbps, 0);
    uintptr_t base = (uintptr_t)locus_heap_base(h);
    EXPECT_EQ(base % 4096, 0u);
    EXPECT_TRUE(overlaps_any(base, base + s.size));
    locus_heap_destroy(h);
    EXPECT_FALSE(overlaps_any(base - 4096, base + s.size + 4096)) << "heap or guard pages left mapped";
}

// The base is aligned to the largest power of two not above the size, so an
// allocator aligning offsets aligns addresses (shmem_align of 4 MiB and up
// returned 2 MiB-aligned blocks before); a guard page still sits either side.
TEST_F(Heap, BaseAlignedToThePowerOfTwoBelowTheSize)
{
    a.pages = LOCUS_PAGES_4K;
    a.verify = LOCUS_VERIFY_NONE;
    for (uint64_t size : {uint64_t(4096), 3 * MiB, 64 * MiB, 96 * MiB + 4096}) {
        uint64_t want = 4096;
        while (want * 2 <= size)
            want *= 2;
        a.size = size;
        locus_heap_t *h;
        ASSERT_EQ(locus_heap_create(&a, topo, &h), LOCUS_OK) << locus_last_error();
        uintptr_t base = (uintptr_t)locus_heap_base(h);
        EXPECT_EQ(base % want, 0u) << "size " << size << " base " << std::hex << base;
        locus_heap_destroy(h);
        EXPECT_FALSE(overlaps_any(base - 4096, base + size + 4096)) << "size " << size << ": left mapped";
    }
}

TEST_F(Heap, ThpObtainedOrReported)
{
    if (locus_topo_num_nodes(topo) != 1)
        GTEST_SKIP() << "single-node expectations";
    locus_thp_mode_t m = locus_topo_thp_mode(topo);
    a.pages = LOCUS_PAGES_THP;
    a.size = 63 * MiB;  // rounded up to the THP size
    locus_heap_t *h;
    if (m == LOCUS_THP_NEVER || m == LOCUS_THP_UNAVAILABLE) {
        expect_fail(LOCUS_ERR_UNSUPPORTED, "thp");
        return;
    }
    ASSERT_EQ(locus_heap_create(&a, topo, &h), LOCUS_OK) << locus_last_error();
    locus_heap_stats_t s;
    locus_heap_stats(h, &s);
    uint64_t thp = locus_topo_thp_size(topo);
    EXPECT_EQ(s.size, 64 * MiB);
    EXPECT_EQ((uintptr_t)locus_heap_base(h) % thp, 0u);
    EXPECT_EQ(s.resident_bytes, 64 * MiB);
    if (s.huge_bytes == s.size) {
        EXPECT_EQ(s.pages, LOCUS_PAGES_THP);
        EXPECT_EQ(s.unit_size, thp);
        EXPECT_EQ(s.node_units[0], s.size / thp);
    } else {
        EXPECT_TRUE(has(s.notes, "thp:")) << "THP shortfall must be reported: " << s.notes;
        EXPECT_EQ(s.unit_size, 4096u);
        EXPECT_EQ(s.node_units[0], s.size / 4096);
    }
    locus_heap_destroy(h);
}

TEST_F(Heap, FirstTouchUnfaultedUntilTouched)
{
    a.policy = LOCUS_HEAP_FIRSTTOUCH;
    a.pages = LOCUS_PAGES_4K;
    locus_heap_stats_t s;
    locus_heap_t *h = create_ok(s);
    ASSERT_NE(h, nullptr);
    EXPECT_EQ(s.threads, 0);
    EXPECT_EQ(s.resident_bytes, 0u);
    EXPECT_EQ(s.not_faulted, 16384u);
    char *p = (char *)locus_heap_base(h);
    for (uint64_t off = 0; off < 32 * MiB; off += 4096)
        p[off] = 1;
    volatile char sink = p[48 * MiB];  // a read maps the zero page: not resident
    (void)sink;
    EXPECT_EQ(verified_units(h, s), 8192u);
    EXPECT_EQ(s.resident_bytes, 32 * MiB);
    EXPECT_EQ(s.zero_page, 1u);      // the page only read
    EXPECT_EQ(s.not_faulted, 8192u); // the untouched half, that page included
    locus_heap_destroy(h);
}

// Reserve on a private heap (no file to fallocate): mapped under its
// policy, nothing faulted at create; pages come at their first touch, on
// the policy's nodes, and auto stays eager for a private heap.
TEST_F(Heap, PrivateReserveFaultsNothingUntilTouched)
{
    a.policy = LOCUS_HEAP_INTERLEAVE;
    a.pages = LOCUS_PAGES_4K;
    a.populate = LOCUS_POPULATE_RESERVE;
    locus_heap_stats_t s;
    locus_heap_t *h = create_ok(s);
    ASSERT_NE(h, nullptr);
    EXPECT_EQ(s.populate, LOCUS_POPULATE_RESERVE) << s.notes;
    EXPECT_EQ(s.threads, 0);
    EXPECT_EQ(s.resident_bytes, 0u);
    EXPECT_TRUE(has(s.notes, "populate reserve on a private heap")) << s.notes;
    char *p = (char *)locus_heap_base(h);
    memset(p, 1, 16 * MiB);
    EXPECT_EQ(verified_units(h, s), 4096u);
    EXPECT_EQ(s.resident_bytes, 16 * MiB);
    locus_heap_destroy(h);

    a.populate = LOCUS_POPULATE_AUTO;
    ASSERT_NE(h = create_ok(s), nullptr);
    EXPECT_EQ(s.populate, LOCUS_POPULATE_EAGER) << s.notes;
    EXPECT_EQ(s.resident_bytes, 64 * MiB);
    locus_heap_destroy(h);
}

TEST_F(Heap, PoliciesThreadsAndChunksAllFaultEverything)
{
    struct { const char *pol; int threads; uint64_t chunk; } cases[] = {
        {"interleave:0", 1, 0}, {"local", 3, 12288}, {"bind:0", 0, 1 * MiB}, {"local:0", 0, 0},
    };
    for (auto &c : cases) {
        ASSERT_EQ(locus_heap_parse_policy(c.pol, &a), LOCUS_OK);
        a.threads = c.threads;
        a.chunk = c.chunk;
        a.pages = LOCUS_PAGES_4K;
        locus_heap_t *h;
        ASSERT_EQ(locus_heap_create(&a, topo, &h), LOCUS_OK) << c.pol << ": " << locus_last_error();
        locus_heap_stats_t s;
        locus_heap_stats(h, &s);
        EXPECT_EQ(s.resident_bytes, 64 * MiB) << c.pol;
        EXPECT_EQ(s.not_faulted, 0u) << c.pol;
        if (c.threads) {
            EXPECT_EQ(s.threads, c.threads) << c.pol;
        }
        locus_heap_destroy(h);
    }
}

static void count_progress(void *arg, uint64_t done, uint64_t total)
{
    auto *v = static_cast<uint64_t *>(arg);
    v[0]++;
    v[1] = done;
    v[2] = total;
}

TEST_F(Heap, PercentProcsSampleProgressAuto)
{
    uint64_t phys = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);
    a.size = 0;
    a.percent = 0.5;
    a.procs = 4;
    a.pages = LOCUS_PAGES_AUTO;
    a.verify = LOCUS_VERIFY_SAMPLE;
    a.samples = 1000;
    uint64_t prog[3] = {0, 0, 0};
    a.progress = count_progress;
    a.progress_arg = prog;
    locus_heap_t *h;
    ASSERT_EQ(locus_heap_create(&a, topo, &h), LOCUS_OK) << locus_last_error();
    locus_heap_stats_t s;
    locus_heap_stats(h, &s);
    uint64_t want = (uint64_t)((double)phys * 0.005) / 4;
    EXPECT_GE(s.size, want);
    EXPECT_LT(s.size, want + s.page_size);
    EXPECT_EQ(s.size % s.page_size, 0u);
    EXPECT_NE(s.pages, LOCUS_PAGES_AUTO);
    EXPECT_TRUE(has(s.notes, "auto: chose")) << s.notes;
    EXPECT_EQ(s.units_checked, std::min<uint64_t>(1000, s.units_total));
    uint64_t seen = s.not_faulted + s.zero_page + s.other_status;
    for (int i = 0; i < s.num_nodes; i++)
        seen += s.node_units[i];
    EXPECT_EQ(seen, s.units_checked);
    EXPECT_GE(prog[0], 1u);
    EXPECT_EQ(prog[1], s.size);
    EXPECT_EQ(prog[2], s.size);
    locus_heap_destroy(h);
}
