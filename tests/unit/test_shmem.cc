// liblocus_shmem's stand-alone parts: the deterministic symmetric allocator
// (src/shmem/alloc.c), SHMEM_SYMMETRIC_SIZE's syntax (src/shmem/size.c) and
// a team's members (src/shmem/members.c).
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

extern "C" {
typedef struct lshm_alloc lshm_alloc_t;
lshm_alloc_t *lshm_alloc_create(uint64_t start, uint64_t end);
void lshm_alloc_destroy(lshm_alloc_t *a);
uint64_t lshm_alloc(lshm_alloc_t *a, uint64_t size, uint64_t align);
uint64_t lshm_alloc_size(const lshm_alloc_t *a, uint64_t off);
bool lshm_alloc_free(lshm_alloc_t *a, uint64_t off);
bool lshm_alloc_resize(lshm_alloc_t *a, uint64_t off, uint64_t size);
uint64_t lshm_alloc_in_use(const lshm_alloc_t *a);
bool lshm_parse_symmetric_size(const char *text, uint64_t *out);
typedef struct lshm_team lshm_team_t;
int lshm_team_index(const lshm_team_t *t, int w);
lshm_team_t *lshm_team_of(const int *w, int n, int me);
lshm_team_t *lshm_team_sub(const lshm_team_t *parent, int start, int stride, int size, int me);
void lshm_team_free(lshm_team_t *t);
}

namespace {

struct Block {
    uint64_t off, len;
};

// Replays a pseudo-random sequence of allocations and frees; returns every
// offset handed out, in order.
std::vector<uint64_t> replay(unsigned seed, uint64_t heap)
{
    lshm_alloc_t *a = lshm_alloc_create(4096, heap);
    std::mt19937 rng(seed);
    std::vector<Block> live;
    std::vector<uint64_t> offs;
    for (int i = 0; i < 5000; i++) {
        if (!live.empty() && rng() % 3 == 0) {
            size_t k = rng() % live.size();
            EXPECT_TRUE(lshm_alloc_free(a, live[k].off));
            live.erase(live.begin() + (long)k);
            continue;
        }
        uint64_t len = 1 + rng() % 100000, align = 1ull << (rng() % 14);
        uint64_t off = lshm_alloc(a, len, align);
        offs.push_back(off);
        if (off == UINT64_MAX)
            continue;
        EXPECT_EQ(off % align, 0u);
        EXPECT_EQ(off % 64, 0u);
        EXPECT_GE(off, 4096u);
        EXPECT_LE(off + len, heap);
        for (const Block &b : live)
            EXPECT_TRUE(off + len <= b.off || b.off + b.len <= off) << "overlap at " << off;
        live.push_back({off, len});
    }
    for (const Block &b : live)
        EXPECT_TRUE(lshm_alloc_free(a, b.off));
    EXPECT_EQ(lshm_alloc_in_use(a), 0u);
    // everything coalesced back: the whole heap is one block again
    EXPECT_EQ(lshm_alloc(a, heap - 4096, 64), 4096u);
    lshm_alloc_destroy(a);
    return offs;
}

TEST(ShmemAlloc, SameCallsGiveSameOffsets)
{
    // symmetric = deterministic: two replays of one sequence agree exactly
    EXPECT_EQ(replay(7, 64u << 20), replay(7, 64u << 20));
    EXPECT_NE(replay(7, 64u << 20), replay(8, 64u << 20));
}

TEST(ShmemAlloc, ExhaustionAndReuse)
{
    lshm_alloc_t *a = lshm_alloc_create(0, 1 << 20);
    EXPECT_EQ(lshm_alloc(a, 2 << 20, 64), UINT64_MAX);
    EXPECT_EQ(lshm_alloc(a, 0, 64), UINT64_MAX);
    uint64_t x = lshm_alloc(a, 1 << 19, 64), y = lshm_alloc(a, 1 << 19, 64);
    ASSERT_NE(x, UINT64_MAX);
    ASSERT_NE(y, UINT64_MAX);
    EXPECT_EQ(lshm_alloc(a, 64, 64), UINT64_MAX);
    EXPECT_TRUE(lshm_alloc_free(a, x));
    EXPECT_FALSE(lshm_alloc_free(a, x)) << "double free must be refused";
    EXPECT_FALSE(lshm_alloc_free(a, 12345));
    EXPECT_EQ(lshm_alloc(a, 100, 64), x);
    lshm_alloc_destroy(a);
}

TEST(ShmemAlloc, ResizeInPlace)
{
    lshm_alloc_t *a = lshm_alloc_create(0, 1 << 20);
    uint64_t x = lshm_alloc(a, 1000, 64);
    EXPECT_EQ(lshm_alloc_size(a, x), 1024u);
    EXPECT_TRUE(lshm_alloc_resize(a, x, 100000));
    EXPECT_EQ(lshm_alloc_size(a, x), 100032u);
    uint64_t y = lshm_alloc(a, 64, 64);
    EXPECT_GE(y, x + 100032);
    EXPECT_FALSE(lshm_alloc_resize(a, x, 200000)) << "y is in the way";
    EXPECT_TRUE(lshm_alloc_resize(a, x, 64));
    EXPECT_EQ(lshm_alloc(a, 64, 64), x + 64) << "the freed tail is reused";
    lshm_alloc_destroy(a);
}

TEST(ShmemSize, SpecSyntax)
{
    uint64_t v = 0;
    EXPECT_TRUE(lshm_parse_symmetric_size("1024", &v));
    EXPECT_EQ(v, 1024u);
    EXPECT_TRUE(lshm_parse_symmetric_size("3.1M", &v));
    EXPECT_EQ(v, 3250586u);
    EXPECT_TRUE(lshm_parse_symmetric_size("2g", &v));
    EXPECT_EQ(v, 2ull << 30);
    EXPECT_TRUE(lshm_parse_symmetric_size("1.5GiB", &v)) << "B or iB after the multiplier";
    EXPECT_EQ(v, 3ull << 29);
    EXPECT_TRUE(lshm_parse_symmetric_size("512MB", &v));
    EXPECT_EQ(v, 512ull << 20);
    EXPECT_TRUE(lshm_parse_symmetric_size("0", &v)) << "non-negative: no heap beyond the library's";
    EXPECT_EQ(v, 0u);
    EXPECT_TRUE(lshm_parse_symmetric_size(" 8m ", &v));
    EXPECT_EQ(v, 8ull << 20);
    EXPECT_TRUE(lshm_parse_symmetric_size("64k", &v));
    EXPECT_EQ(v, 65536u);
    EXPECT_TRUE(lshm_parse_symmetric_size("1T", &v));
    EXPECT_EQ(v, 1ull << 40);
    for (const char *bad : {"", "M", "-5M", "12X", "abc", "1e400", "20kk", "0x100", "1Gi", "2 G", "3MBx"})
        EXPECT_FALSE(lshm_parse_symmetric_size(bad, &v)) << bad;
}

// The team's members, read back through lshm_team_index over world PEs
// 0..npes-1: member i at index i, everyone else -1.
void expect_members(const lshm_team_t *t, std::vector<int> want, int npes)
{
    ASSERT_NE(t, nullptr);
    for (int w = 0; w < npes; w++) {
        int idx = -1;
        for (size_t i = 0; i < want.size(); i++)
            if (want[i] == w)
                idx = (int)i;
        EXPECT_EQ(lshm_team_index(t, w), idx) << "world PE " << w;
    }
}

TEST(ShmemTeam, ProgressionAndList)
{
    const int block[] = {4, 5, 6, 7}, robin[] = {1, 3, 5}, uneven[] = {0, 2, 3}, down[] = {6, 4, 2};
    lshm_team_t *t = lshm_team_of(block, 4, 6);
    expect_members(t, {4, 5, 6, 7}, 10);
    lshm_team_free(t);
    t = lshm_team_of(robin, 3, 3);
    expect_members(t, {1, 3, 5}, 10);
    lshm_team_free(t);
    t = lshm_team_of(down, 3, 2);
    expect_members(t, {6, 4, 2}, 10);
    lshm_team_free(t);
    // mpirun --map-by node over nodes of 3 and 1 slots: node A holds 0, 2, 3
    t = lshm_team_of(uneven, 3, 2);
    expect_members(t, {0, 2, 3}, 10);
    lshm_team_free(t);
    EXPECT_EQ(lshm_team_of(block, 0, 4), nullptr);
}

TEST(ShmemTeam, SplitsOfAList)
{
    const int node[] = {0, 1, 3, 6, 7};
    lshm_team_t *p = lshm_team_of(node, 5, 3);
    lshm_team_t *t = lshm_team_sub(p, 0, 2, 3, 3); // parent indices 0, 2, 4
    expect_members(t, {0, 3, 7}, 10);
    lshm_team_free(t);
    t = lshm_team_sub(p, 4, -1, 5, 3); // reversed (1.6 negative stride)
    expect_members(t, {7, 6, 3, 1, 0}, 10);
    lshm_team_t *u = lshm_team_sub(t, 1, 1, 3, 3); // a split of the split
    expect_members(u, {6, 3, 1}, 10);
    lshm_team_free(u);
    lshm_team_free(t);
    t = lshm_team_sub(p, 2, 1, 2, 3); // 3, 6: a progression again
    expect_members(t, {3, 6}, 10);
    lshm_team_free(t);
    t = lshm_team_sub(p, 3, 0, 1, 3); // a team of one by stride 0
    expect_members(t, {6}, 10);
    lshm_team_free(t);
    lshm_team_free(p);
}

} // namespace
