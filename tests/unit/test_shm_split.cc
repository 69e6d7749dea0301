// Split copy: a heap-to-heap rendezvous of >= LOCUS_SHM_SPLIT bytes whose
// receive buffer is in the receiver's shared heap is copied by both sides
// (the receiver from the front, the sender from the back, pieces claimed by
// CAS). What must hold: every byte arrives, both sides really copy, a sender
// that does not progress never holds the receiver up, and only what qualifies
// is split.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <vector>

#include <locus/locus.h>

#include "shm_procs.h"

extern "C" {
#include "shm/shm_internal.h"
}

using shmtest::run_procs;
using shmtest::stats;

namespace {

constexpr uint64_t kHeap = 40ull << 20;

unsigned char pattern(size_t i, size_t msg) { return (unsigned char)(i * 131 + msg * 17 + (i >> 12)); }

void fill(unsigned char *p, size_t n, size_t msg)
{
    for (size_t i = 0; i < n; i++)
        p[i] = pattern(i, msg);
}

// The first byte that differs from the pattern, or n.
size_t first_bad(const unsigned char *p, size_t n, size_t msg)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != pattern(i, msg))
            return i;
    return n;
}

// Sizes around the piece boundaries; the first is one byte short of the
// default threshold (not split), one goes to a private buffer (not split).
const size_t kSizes[] = {(32u << 10) - 1, 32u << 10, (1u << 20) + 37, (4u << 20) + 64, (6u << 20) + 1};

} // namespace

// At least 8 rounds, and more until the sender has taken a piece: under
// load it may not run while the receiver copies, which is allowed, but a
// sender side that never copies fails. Up to 60 s: on a machine loaded far
// past its cpus (load 7-13 on 2) the receiver copied every piece within its
// time slice round after round, and 15 s was not always enough.
TEST(ShmSplit, EveryByteArrivesAndBothSidesCopy)
{
    int bad = run_procs(2, [](locus_shm_ep_t *ep) -> int {
        int me = locus_shm_rank(ep);
        size_t cap = 7u << 20;
        unsigned char *heap = (unsigned char *)locus_shm_alloc(ep, cap);
        std::vector<unsigned char> priv(cap);
        CHILD_CHECK(heap != nullptr);
        uint64_t splits = 0;
        auto t0 = std::chrono::steady_clock::now();
        for (int round = 0, more = 1; more; round++) {
            for (size_t k = 0; k < sizeof kSizes / sizeof *kSizes; k++) {
                size_t n = kSizes[k], msg = (round % 1000) * 16 + k;
                bool to_private = k == 2 && round % 2; // same size into a malloc buffer
                if (me == 0) {
                    fill(heap, n, msg);
                    CHILD_CHECK(locus_shm_send(ep, 1, msg, heap, n) == LOCUS_OK);
                } else {
                    unsigned char *dst = to_private ? priv.data() : heap;
                    memset(dst, 0xee, n + 64);
                    locus_shm_info_t info;
                    CHILD_CHECK(locus_shm_recv(ep, 0, msg, dst, cap, &info) == LOCUS_OK);
                    CHILD_CHECK(info.len == n);
                    size_t at = first_bad(dst, n, msg);
                    if (at != n)
                        fprintf(stderr, "message %zu (%zu B): byte %zu wrong\n", msg, n, at);
                    CHILD_CHECK(at == n);
                    CHILD_CHECK(dst[n] == 0xee); // nothing written past the message
                    splits += !to_private && n >= (32u << 10);
                }
                // Both ranks wait here, so rank 0 reuses its buffer only after the receive.
                CHILD_CHECK(locus_shm_barrier(ep) == LOCUS_OK);
            }
            if (me == 0)
                more = round < 7 ||
                       (!stats(ep).split_pieces_sent && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(60));
            CHILD_CHECK(me == 0 ? locus_shm_send(ep, 1, 999, &more, sizeof more) == LOCUS_OK
                                : locus_shm_recv(ep, 0, 999, &more, sizeof more, nullptr) == LOCUS_OK);
        }
        locus_shm_stats_t s = stats(ep);
        if (me == 1) {
            // One offer per qualifying message: not the short one, not into malloc.
            CHILD_CHECK(s.split_msgs == splits && s.heap_msgs > splits);
            CHILD_CHECK(s.split_pieces_sent == 0 && s.split_pieces_recv > 0);
        } else {
            CHILD_CHECK(s.split_pieces_sent > 0 && s.split_msgs == 0 && s.split_pieces_recv == 0);
            fprintf(stderr, "sender copied %llu pieces\n", (unsigned long long)s.split_pieces_sent);
        }
        return 0;
    }, nullptr, kHeap);
    EXPECT_EQ(bad, 0);
}

// LOCUS_SHM_SPLIT_PIECE differs between the two: the receiver cuts the
// message (32 pieces here, its target 64 KiB) and tells the sender, whose own
// target (1 MiB: 3 pieces) must not matter. Rounds until the sender took a
// piece (at most 60 s, as above), every byte checked.
TEST(ShmSplit, TheReceiversPieceSizeCutsTheMessage)
{
    int bad = run_procs(2, [](locus_shm_ep_t *ep) -> int {
        int me = locus_shm_rank(ep);
        ep->split.piece = me == 0 ? 1u << 20 : 64u << 10; // as if LOCUS_SHM_SPLIT_PIECE differed
        size_t n = (3u << 20) + 5;
        unsigned char *buf = (unsigned char *)locus_shm_alloc(ep, n + 64);
        CHILD_CHECK(buf != nullptr);
        auto t0 = std::chrono::steady_clock::now();
        for (int round = 0, more = 1; more; round++) {
            if (me == 0) {
                fill(buf, n, round);
                CHILD_CHECK(locus_shm_send(ep, 1, 5, buf, n) == LOCUS_OK);
            } else {
                memset(buf, 0xee, n + 64);
                CHILD_CHECK(locus_shm_recv(ep, 0, 5, buf, n + 64, nullptr) == LOCUS_OK);
                size_t at = first_bad(buf, n, round);
                if (at != n)
                    fprintf(stderr, "round %d: byte %zu wrong\n", round, at);
                CHILD_CHECK(at == n && buf[n] == 0xee);
            }
            CHILD_CHECK(locus_shm_barrier(ep) == LOCUS_OK);
            if (me == 0)
                more = round < 3 ||
                       (!stats(ep).split_pieces_sent && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(60));
            CHILD_CHECK(me == 0 ? locus_shm_send(ep, 1, 999, &more, sizeof more) == LOCUS_OK
                                : locus_shm_recv(ep, 0, 999, &more, sizeof more, nullptr) == LOCUS_OK);
        }
        locus_shm_stats_t s = stats(ep);
        uint64_t sent = s.split_pieces_sent;
        CHILD_CHECK(me == 0 ? locus_shm_send(ep, 1, 998, &sent, sizeof sent) == LOCUS_OK
                            : locus_shm_recv(ep, 0, 998, &sent, sizeof sent, nullptr) == LOCUS_OK);
        CHILD_CHECK(sent > 0);
        if (me == 1) // 32 pieces per message: the receiver's share plus the sender's
            CHILD_CHECK(s.split_msgs > 0 && s.split_pieces_recv + sent == 32 * s.split_msgs);
        return 0;
    }, nullptr, kHeap);
    EXPECT_EQ(bad, 0);
}

// The sender posts the message and then does not call the library again
// until the receiver says (through its own heap, no message) that it has the
// data: a receiver that waited for the sender's share would never finish.
TEST(ShmSplit, SenderThatDoesNotProgressDoesNotHoldTheReceiver)
{
    int bad = run_procs(2, [](locus_shm_ep_t *ep) -> int {
        int me = locus_shm_rank(ep);
        size_t n = 4u << 20;
        unsigned char *buf = (unsigned char *)locus_shm_alloc(ep, n + 64);
        CHILD_CHECK(buf != nullptr);
        uint64_t hb = ep->plan.heap_bytes;
        // The flag: the last word of rank 1's heap, seen by rank 0 directly.
        volatile uint64_t *flag = (volatile uint64_t *)(ep->base + ep->lay.heaps + 1 * hb + hb - 64);
        if (me == 0) {
            fill(buf, n, 7);
            locus_shm_req_t *r;
            CHILD_CHECK(locus_shm_isend(ep, 1, 7, buf, n, &r) == LOCUS_OK);
            auto t0 = std::chrono::steady_clock::now();
            while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) != 1) {
                if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(10)) {
                    fprintf(stderr, "the receiver waited for a sender that does not progress\n");
                    return 1;
                }
            }
            CHILD_CHECK(locus_shm_wait(ep, r, nullptr) == LOCUS_OK);
            CHILD_CHECK(stats(ep).split_pieces_sent == 0);
        } else {
            CHILD_CHECK(locus_shm_recv(ep, 0, 7, buf, n + 64, nullptr) == LOCUS_OK);
            CHILD_CHECK(first_bad(buf, n, 7) == n);
            CHILD_CHECK(stats(ep).split_msgs == 1);
            __atomic_store_n(flag, 1, __ATOMIC_RELEASE);
        }
        return 0;
    }, nullptr, kHeap);
    EXPECT_EQ(bad, 0);
}

// LOCUS_SHM_SPLIT=0 turns it off: the receiver copies alone.
TEST(ShmSplit, TunableZeroTurnsItOff)
{
    int bad = run_procs(2, [](locus_shm_ep_t *ep) -> int {
        size_t n = 2u << 20;
        unsigned char *buf = (unsigned char *)locus_shm_alloc(ep, n);
        CHILD_CHECK(buf != nullptr);
        if (locus_shm_rank(ep) == 0) {
            fill(buf, n, 3);
            CHILD_CHECK(locus_shm_send(ep, 1, 3, buf, n) == LOCUS_OK);
        } else {
            CHILD_CHECK(locus_shm_recv(ep, 0, 3, buf, n, nullptr) == LOCUS_OK);
            CHILD_CHECK(first_bad(buf, n, 3) == n);
            CHILD_CHECK(stats(ep).split_msgs == 0 && stats(ep).heap_msgs == 1);
        }
        return 0;
    }, "LOCUS_SHM_SPLIT=0", kHeap);
    EXPECT_EQ(bad, 0);
}

// A sender that dies holding a piece it claimed (here: claims one by hand,
// as on_help does, and exits without copying it): the receiver's wait for
// that piece ends with LOCUS_ERR_PEER_FAILED naming the split copy, not a
// hang. Retried on a fresh message when the receiver took every piece first.
TEST(ShmSplit, SenderThatDiesMidCopyFailsTheReceive)
{
    int bad = run_procs(2, [](locus_shm_ep_t *ep) -> int {
        size_t n = 64u << 20;
        unsigned char *buf = (unsigned char *)locus_shm_alloc(ep, n);
        CHILD_CHECK(buf != nullptr);
        for (uint64_t attempt = 0; attempt < 20; attempt++) {
            if (locus_shm_rank(ep) == 0) {
                locus_shm_req_t *r;
                CHILD_CHECK(locus_shm_isend(ep, 1, attempt, buf, n, &r) == LOCUS_OK);
                uint64_t *w = &ep->procs[1].split_claim;
                auto t0 = std::chrono::steady_clock::now();
                uint64_t c;
                while ((c = __atomic_load_n(w, __ATOMIC_ACQUIRE)) >> 32 != attempt + 1)
                    CHILD_CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(60));
                while ((uint32_t)(c >> 16 & 0xffff) < (uint32_t)(c & 0xffff))
                    if (__atomic_compare_exchange_n(w, &c, c - 1, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
                        _exit(0); // dies holding the last piece
                CHILD_CHECK(locus_shm_wait(ep, r, nullptr) == LOCUS_OK);
            } else {
                locus_status_t st = locus_shm_recv(ep, 0, attempt, buf, n, nullptr);
                if (st == LOCUS_ERR_PEER_FAILED) {
                    CHILD_CHECK(strstr(locus_last_error(), "split copy") != nullptr);
                    _exit(0); // the endpoint is broken
                }
                CHILD_CHECK(st == LOCUS_OK);
            }
        }
        fprintf(stderr, "rank %d: 20 messages without a piece left for the sender\n", locus_shm_rank(ep));
        return 1;
    }, nullptr, 65u << 20);
    EXPECT_EQ(bad, 0);
}
