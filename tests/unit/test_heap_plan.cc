// Fault-in planning (src/heap/heap_plan.c): which pages each node's threads
// fault, checked on synthetic node counts (2 and 4 nodes, a memory-only node).
#include <gtest/gtest.h>

#include <vector>

extern "C" {
#include "heap/heap_plan.h"
}

// Every page is covered exactly once and each chunk only holds pages of its slot.
static std::vector<int> coverage(const heap_plan_t &p)
{
    std::vector<int> seen(p.units, 0);
    for (int s = 0; s < p.nslots; s++) {
        uint64_t pages = 0;
        for (uint64_t c = 0; c < heap_plan_slot_chunks(&p, s); c++) {
            heap_chunk_t ch = heap_plan_chunk(&p, s, c);
            EXPECT_GE(ch.count, 1u);
            EXPECT_LE(ch.count, p.chunk_units);
            for (uint64_t i = 0; i < ch.count; i++) {
                uint64_t k = ch.first + i * ch.step;
                EXPECT_LT(k, p.units);
                if (k >= p.units)
                    continue;
                EXPECT_EQ(heap_plan_slot_of(&p, k), s) << "page " << k;
                seen[k]++;
            }
            pages += ch.count;
        }
        EXPECT_EQ(pages, heap_plan_slot_units(&p, s));
    }
    return seen;
}

TEST(HeapPlan, InterleaveTwoNodesPageKOnNodeKMod2)
{
    heap_plan_t p;
    heap_plan_init(&p, 1001, 4096, 16, 2, true, 0, nullptr);
    for (uint64_t k = 0; k < 1001; k++)
        EXPECT_EQ(heap_plan_slot_of(&p, k), (int)(k % 2));
    EXPECT_EQ(heap_plan_slot_units(&p, 0), 501u);
    EXPECT_EQ(heap_plan_slot_units(&p, 1), 500u);
    for (int c : coverage(p))
        EXPECT_EQ(c, 1);
    heap_chunk_t ch = heap_plan_chunk(&p, 1, 2);  // node 1's third chunk: pages 65, 67, ...
    EXPECT_EQ(ch.first, 65u);
    EXPECT_EQ(ch.step, 2u);
    EXPECT_EQ(ch.count, 16u);
}

TEST(HeapPlan, InterleaveFourNodesWithPhase)
{
    // The kernel interleaves on address/page: a heap starting at page 4n+3
    // puts its page 0 on the fourth node.
    for (uint64_t phase = 0; phase < 4; phase++) {
        heap_plan_t p;
        heap_plan_init(&p, 4099, 2 << 20, 3, 4, true, phase + 40, nullptr);
        for (uint64_t k = 0; k < 4099; k++)
            ASSERT_EQ(heap_plan_slot_of(&p, k), (int)((phase + k) % 4));
        uint64_t total = 0, lo = ~0ull, hi = 0;
        for (int s = 0; s < 4; s++) {
            uint64_t u = heap_plan_slot_units(&p, s);
            total += u;
            lo = std::min(lo, u);
            hi = std::max(hi, u);
        }
        EXPECT_EQ(total, 4099u);
        EXPECT_LE(hi - lo, 1u);  // balanced to one page
        for (int c : coverage(p))
            EXPECT_EQ(c, 1);
    }
}

TEST(HeapPlan, BlockedSplitFollowsThreadWeights)
{
    heap_plan_t p;
    int w[2] = {3, 1};
    heap_plan_init(&p, 1000, 4096, 7, 2, false, 0, w);
    EXPECT_EQ(heap_plan_slot_units(&p, 0), 750u);
    EXPECT_EQ(heap_plan_slot_units(&p, 1), 250u);
    EXPECT_EQ(heap_plan_slot_of(&p, 749), 0);
    EXPECT_EQ(heap_plan_slot_of(&p, 750), 1);
    heap_chunk_t ch = heap_plan_chunk(&p, 1, 0);
    EXPECT_EQ(ch.first, 750u);
    EXPECT_EQ(ch.step, 1u);
    for (int c : coverage(p))
        EXPECT_EQ(c, 1);
    // Rounding remainders are handed out; a zero-weight slot gets nothing.
    int w4[4] = {1, 0, 1, 1};
    heap_plan_init(&p, 10, 4096, 1, 4, false, 0, w4);
    EXPECT_EQ(heap_plan_slot_units(&p, 1), 0u);
    EXPECT_EQ(heap_plan_slot_units(&p, 0) + heap_plan_slot_units(&p, 2) + heap_plan_slot_units(&p, 3), 10u);
    for (int c : coverage(p))
        EXPECT_EQ(c, 1);
}

TEST(HeapPlan, SingleSlotIsContiguous)
{
    heap_plan_t p;
    heap_plan_init(&p, 100, 4096, 8, 1, true, 5, nullptr);  // one node: strided means nothing
    EXPECT_FALSE(p.strided);
    EXPECT_EQ(heap_plan_slot_chunks(&p, 0), 13u);
    heap_chunk_t last = heap_plan_chunk(&p, 0, 12);
    EXPECT_EQ(last.first, 96u);
    EXPECT_EQ(last.count, 4u);
    EXPECT_EQ(heap_plan_chunk(&p, 0, 13).count, 0u);
    for (int c : coverage(p))
        EXPECT_EQ(c, 1);
}

TEST(HeapPlan, ThreadsOnePerCoreDealtOverNodes)
{
    int home[16], core[16];
    int cpus2[2] = {2, 2};
    ASSERT_EQ(heap_plan_threads(2, cpus2, 0, 16, home, core), 4);
    int want_home[4] = {0, 1, 0, 1}, want_core[4] = {0, 0, 1, 1};
    for (int t = 0; t < 4; t++) {
        EXPECT_EQ(home[t], want_home[t]);
        EXPECT_EQ(core[t], want_core[t]);
    }
    // 4 nodes, the third memory-only: nobody lives there, its pages are taken by the others.
    int cpus4[4] = {1, 2, 0, 1};
    ASSERT_EQ(heap_plan_threads(4, cpus4, 0, 16, home, core), 4);
    int h4[4] = {0, 1, 3, 1};
    for (int t = 0; t < 4; t++)
        EXPECT_EQ(home[t], h4[t]) << t;
    EXPECT_EQ(core[3], 1);
    // More threads than cores wrap over the cores.
    ASSERT_EQ(heap_plan_threads(2, cpus2, 6, 16, home, core), 6);
    EXPECT_EQ(home[4], 0);
    EXPECT_EQ(core[4], 0);
    // Capped at max_threads.
    EXPECT_EQ(heap_plan_threads(2, cpus2, 0, 3, home, core), 3);
    // Only memory-only nodes: threads have no home.
    int none[2] = {0, 0};
    ASSERT_EQ(heap_plan_threads(2, none, 2, 16, home, core), 2);
    EXPECT_EQ(home[0], -1);
    EXPECT_EQ(core[1], 1);
}
