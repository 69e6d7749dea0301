// locus run --bind auto's blocks (tools/run_bind.h) on topologies this
// machine does not have: hardware threads numbered c and c + cores (Intel),
// NUMA nodes whose cpus interleave, more ranks than cores or than cpus.
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "../../tools/run_bind.h"

namespace {

// cores x threads cpus on one node and L3, thread t of core k numbered k + t * cores.
std::vector<run_cpu_t> smt(int cores, int threads)
{
    std::vector<run_cpu_t> v;
    for (int t = 0; t < threads; t++)
        for (int k = 0; k < cores; k++)
            v.push_back({0, 0, k, k + t * cores});
    return v;
}

std::set<int> block(std::vector<run_cpu_t> pl, int rank, int nranks)
{
    cpu_set_t out;
    run_sort_cpus(pl.data(), (int)pl.size());
    run_auto_blocks(pl.data(), (int)pl.size(), rank, nranks, &out);
    std::set<int> s;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &out))
            s.insert(c);
    return s;
}

} // namespace

TEST(BootBind, RanksGetWholeCoresWithTheirHardwareThreads)
{
    auto pl = smt(4, 2); // cpus 0-3 first threads, 4-7 their siblings
    EXPECT_EQ(block(pl, 0, 2), (std::set<int>{0, 4, 1, 5}));
    EXPECT_EQ(block(pl, 1, 2), (std::set<int>{2, 6, 3, 7}));
    EXPECT_EQ(block(pl, 0, 3), (std::set<int>{0, 4}));
    EXPECT_EQ(block(pl, 1, 3), (std::set<int>{1, 5}));
    EXPECT_EQ(block(pl, 2, 3), (std::set<int>{2, 6, 3, 7}));
    EXPECT_EQ(block(pl, 0, 1), (std::set<int>{0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST(BootBind, MoreRanksThanCoresShareCoresNotCpus)
{
    auto pl = smt(4, 2);
    std::set<int> seen;
    for (int r = 0; r < 6; r++) {
        auto b = block(pl, r, 6);
        EXPECT_FALSE(b.empty()) << "rank " << r;
        for (int c : b)
            EXPECT_TRUE(seen.insert(c).second) << "cpu " << c << " in two blocks";
    }
    EXPECT_EQ(seen.size(), 8u);
    EXPECT_EQ(block(pl, 0, 8), (std::set<int>{0})); // one cpu each, a core's threads in rank order
    EXPECT_EQ(block(pl, 1, 8), (std::set<int>{4}));
}

TEST(BootBind, MoreRanksThanCpusAreLeftUnbound)
{
    EXPECT_TRUE(block(smt(2, 2), 0, 5).empty());
    EXPECT_TRUE(block(smt(2, 2), 4, 5).empty());
}

TEST(BootBind, BlocksFollowNumaNodesThenL3)
{
    // 2 nodes whose cpus interleave (even on node 0, odd on node 1), 2 L3s per node
    std::vector<run_cpu_t> pl;
    for (int c = 0; c < 8; c++)
        pl.push_back({c % 2, (c % 2) * 2 + (c / 4), c, c});
    EXPECT_EQ(block(pl, 0, 2), (std::set<int>{0, 2, 4, 6}));
    EXPECT_EQ(block(pl, 1, 2), (std::set<int>{1, 3, 5, 7}));
    EXPECT_EQ(block(pl, 0, 4), (std::set<int>{0, 2})); // node 0's first L3
    EXPECT_EQ(block(pl, 3, 4), (std::set<int>{5, 7})); // node 1's second L3
}
