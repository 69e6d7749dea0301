// The multi-producer cell ring, in one process (threads as producers).
// Also built under ThreadSanitizer by tests/shm (shm_queue_tsan).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

extern "C" {
#include "shm/queue.h"
}

namespace {

void plain_copy(void *d, const void *s, size_t n, shmq_dir_t) { memcpy(d, s, n); }

struct Ring {
    std::vector<uint64_t> mem;
    shmq_t q;
    shmq_rx_t rx{};
    Ring(uint64_t ncells, uint32_t max_len) : mem((SHMQ_CTL_BYTES + ncells * SHMQ_CELL) / 8, 0)
    {
        shmq_view(&q, mem.data(), ncells, max_len, 0x5eed1234abcdull);
        shmq_format(&q);
    }
};

// Bytes of message `seq` from producer `p`: deterministic, position dependent.
unsigned char pattern(int p, uint64_t seq, size_t i) { return (unsigned char)(p * 131 + seq * 7 + i * 13); }

bool recv_one(Ring &r, shmq_hdr_t *h, std::vector<unsigned char> &buf)
{
    bool corrupt = false;
    const shmq_hdr_t *c = shmq_peek(&r.q, &r.rx, &corrupt);
    if (!c)
        return false;
    EXPECT_FALSE(corrupt);
    *h = *c;
    buf.resize(h->len);
    shmq_read(&r.q, &r.rx, 0, buf.data(), h->len, plain_copy);
    shmq_consume(&r.q, &r.rx, h->len);
    return true;
}

} // namespace

TEST(ShmQueue, CellsPerMessage)
{
    EXPECT_EQ(shmq_cells_for(0), 1u);
    EXPECT_EQ(shmq_cells_for(32), 1u);  // header + 32 B inline in one cell
    EXPECT_EQ(shmq_cells_for(33), 2u);
    EXPECT_EQ(shmq_cells_for(1024), 17u);
}

TEST(ShmQueue, RoundTripAcrossWrapKeepsBytesAndOrder)
{
    Ring r(64, 1024); // 4 KiB ring: messages wrap many times
    uint64_t cached = 0;
    std::vector<unsigned char> msg, got;
    std::mt19937 rng(7);
    for (uint64_t seq = 0; seq < 2000; seq++) {
        size_t len = rng() % 700;
        msg.resize(len);
        for (size_t i = 0; i < len; i++)
            msg[i] = pattern(0, seq, i);
        shmq_hdr_t h{};
        h.len = (uint32_t)len;
        h.src = 3;
        h.type = 1;
        h.tag = seq;
        h.aux = ~seq;
        ASSERT_TRUE(shmq_send(&r.q, &cached, &h, msg.data(), plain_copy)) << seq;
        shmq_hdr_t out;
        ASSERT_TRUE(recv_one(r, &out, got));
        EXPECT_EQ(out.tag, seq);
        EXPECT_EQ(out.aux, ~seq);
        EXPECT_EQ(out.src, 3);
        ASSERT_EQ(got, msg) << "message " << seq << " of " << len << " B";
    }
    bool corrupt;
    EXPECT_EQ(shmq_peek(&r.q, &r.rx, &corrupt), nullptr);
}

TEST(ShmQueue, FullRingRefusesUntilHeadPublished)
{
    Ring r(16, 512);
    uint64_t cached = 0;
    shmq_hdr_t h{};
    h.len = 100; // 3 cells
    std::vector<unsigned char> p(100, 1), got;
    int sent = 0;
    while (shmq_send(&r.q, &cached, &h, p.data(), plain_copy))
        sent++;
    EXPECT_EQ(sent, 5); // 15 of 16 cells
    shmq_hdr_t out;
    ASSERT_TRUE(recv_one(r, &out, got));
    // Consumed but not yet published (batching): still full for the sender.
    EXPECT_FALSE(shmq_send(&r.q, &cached, &h, p.data(), plain_copy));
    shmq_publish_head(&r.q, &r.rx);
    EXPECT_TRUE(shmq_send(&r.q, &cached, &h, p.data(), plain_copy));
}

TEST(ShmQueue, FreshCellsAreNotMessages)
{
    Ring r(16, 64);
    bool corrupt;
    EXPECT_NE(r.q.salt >> 63, 0u); // salted seq is never 0
    EXPECT_EQ(shmq_peek(&r.q, &r.rx, &corrupt), nullptr);
}

TEST(ShmQueue, PayloadThatLooksLikeAHeaderIsNeverReadAsOne)
{
    // Fill payload words with every position a future header could carry
    // (structured data such as counters must never pose as a header).
    Ring r(32, 4096);
    uint64_t cached = 0;
    std::vector<uint64_t> words(200);
    std::vector<unsigned char> got;
    for (int round = 0; round < 50; round++) {
        for (size_t i = 0; i < words.size(); i++)
            words[i] = r.rx.head + 1 + i; // every plausible next seq
        shmq_hdr_t h{};
        h.len = (uint32_t)(8 * (5 + round % 20));
        ASSERT_TRUE(shmq_send(&r.q, &cached, &h, words.data(), plain_copy));
        shmq_hdr_t out;
        ASSERT_TRUE(recv_one(r, &out, got));
        shmq_publish_head(&r.q, &r.rx);
        bool corrupt = false;
        EXPECT_EQ(shmq_peek(&r.q, &r.rx, &corrupt), nullptr) << "phantom message in round " << round;
    }
}

TEST(ShmQueue, OversizedHeaderIsReportedCorrupt)
{
    Ring r(16, 64);
    uint64_t cached = 0;
    shmq_hdr_t h{};
    h.len = 10;
    unsigned char p[10] = {0};
    ASSERT_TRUE(shmq_send(&r.q, &cached, &h, p, plain_copy));
    // A hostile peer rewrites the length after publication.
    reinterpret_cast<shmq_hdr_t *>(r.q.cells)->len = 1u << 30;
    bool corrupt = false;
    ASSERT_NE(shmq_peek(&r.q, &r.rx, &corrupt), nullptr);
    EXPECT_TRUE(corrupt);
}

TEST(ShmQueue, ManyProducersOneConsumerNoLossNoDuplicateOrderPerProducer)
{
    const int P = 3;
    const uint64_t N = 20000;
    Ring r(1024, 2048);
    std::vector<std::thread> th;
    for (int p = 0; p < P; p++)
        th.emplace_back([&r, p, N] {
            uint64_t cached = 0;
            std::mt19937 rng(p + 1);
            std::vector<unsigned char> msg;
            for (uint64_t seq = 0; seq < N; seq++) {
                size_t len = rng() % 300;
                msg.resize(len);
                for (size_t i = 0; i < len; i++)
                    msg[i] = pattern(p, seq, i);
                shmq_hdr_t h{};
                h.len = (uint32_t)len;
                h.src = (uint16_t)p;
                h.tag = seq;
                while (!shmq_send(&r.q, &cached, &h, msg.data(), plain_copy))
                    std::this_thread::yield();
            }
        });
    std::vector<uint64_t> next(P, 0);
    std::vector<unsigned char> got;
    uint64_t total = 0;
    while (total < P * N) {
        shmq_hdr_t h;
        if (!recv_one(r, &h, got)) {
            shmq_publish_head(&r.q, &r.rx);
            std::this_thread::yield();
            continue;
        }
        ASSERT_LT(h.src, P);
        ASSERT_EQ(h.tag, next[h.src]) << "producer " << h.src << " out of order";
        for (size_t i = 0; i < got.size(); i++)
            ASSERT_EQ(got[i], pattern(h.src, h.tag, i)) << "byte " << i;
        next[h.src]++;
        total++;
    }
    for (auto &t : th)
        t.join();
    for (int p = 0; p < P; p++)
        EXPECT_EQ(next[p], N);
    bool corrupt;
    EXPECT_EQ(shmq_peek(&r.q, &r.rx, &corrupt), nullptr);
}
