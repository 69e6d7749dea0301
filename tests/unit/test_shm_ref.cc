// Sends by reference: a non-blocking send of an eager-sized message
// (>= LOCUS_SHM_REF) from the shared heap, through an open fast box, posts
// only {offset, length}; the receiver copies from the sender's heap. What
// must hold: the data arrives whether the receive was posted or not, the send
// completes only once the receiver has taken the data (and then without
// waiting for a matching receive), blocking sends and private buffers keep
// the eager copy, and a receiver that dies fails the pending sends.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include <locus/locus.h>

#include "shm_procs.h"

extern "C" {
#include "shm/shm_internal.h"
}

using shmtest::run_procs;
using shmtest::stats;

namespace {

constexpr uint64_t kHeap = 1u << 20;
constexpr uint64_t kWarm = 1000;

unsigned char pat(size_t i, int msg) { return (unsigned char)(i * 7 + msg * 31 + 1); }

bool intact(const unsigned char *p, size_t n, int msg)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != pat(i, msg))
            return false;
    return true;
}

// Enough small blocking sends for rank 0 to open its box at rank 1, then an
// ack back: rank 1 is out of the library before rank 0 goes on (else its
// last receive could take what rank 0 sends next).
int warm_up(locus_shm_ep_t *ep)
{
    uint64_t v = 0;
    bool zero = locus_shm_rank(ep) == 0;
    for (int i = 0; i <= SHM_FBOX_AFTER; i++) {
        if (zero)
            CHILD_CHECK(locus_shm_send(ep, 1, kWarm, &v, sizeof v) == LOCUS_OK);
        else
            CHILD_CHECK(locus_shm_recv(ep, 0, kWarm, &v, sizeof v, nullptr) == LOCUS_OK);
    }
    if (zero) {
        CHILD_CHECK(locus_shm_recv(ep, 1, kWarm, &v, sizeof v, nullptr) == LOCUS_OK);
        CHILD_CHECK(stats(ep).fboxes_claimed == 1);
    } else {
        CHILD_CHECK(locus_shm_send(ep, 0, kWarm, &v, sizeof v) == LOCUS_OK);
    }
    return 0;
}

// A word in `owner`'s heap that both ranks read directly (no message, so the
// reader need not progress): the last line of the heap.
volatile uint64_t *flag(locus_shm_ep_t *ep, int owner)
{
    uint64_t hb = ep->plan.heap_bytes;
    return (volatile uint64_t *)(ep->base + ep->lay.heaps + owner * hb + hb - 64);
}

// Spin (progressing when asked) until *f == v; false after 10 s.
bool await(locus_shm_ep_t *ep, volatile uint64_t *f, uint64_t v, bool progress)
{
    auto t0 = std::chrono::steady_clock::now();
    while (__atomic_load_n(f, __ATOMIC_ACQUIRE) != v) {
        if (progress && locus_shm_progress(ep) != LOCUS_OK)
            return false;
        if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(10))
            return false;
    }
    return true;
}

// The rendezvous (16385) first: it needs its receive posted to complete.
const size_t kSizes[] = {16385, 1023, 1024, 2048, 4000, 16384}; // by reference: 1 KiB .. 16 KiB
constexpr int kByRef = 4;

} // namespace

// Rank 1 posts receives for the first half only and just progresses until
// rank 0's sends are all complete; rank 0 then overwrites its buffers, and
// the second half is received from the unexpected list: intact, so the data
// was copied out before the sends completed, and completion did not wait
// for matching.
TEST(ShmRef, PostedAndUnexpectedReceivesGetTheDataBeforeTheSendCompletes)
{
    int bad = run_procs(2, [](locus_shm_ep_t *ep) -> int {
        if (warm_up(ep))
            return 1;
        const int n = sizeof kSizes / sizeof *kSizes;
        size_t stride = 17u << 10;
        unsigned char *heap = (unsigned char *)locus_shm_alloc(ep, n * stride);
        CHILD_CHECK(heap != nullptr);
        if (locus_shm_rank(ep) == 0) {
            locus_shm_req_t *r[n];
            for (int k = 0; k < n; k++) {
                for (size_t i = 0; i < kSizes[k]; i++)
                    heap[k * stride + i] = pat(i, k);
                CHILD_CHECK(locus_shm_isend(ep, 1, k, heap + k * stride, kSizes[k], &r[k]) == LOCUS_OK);
            }
            CHILD_CHECK(stats(ep).ref_sent == kByRef);
            for (int k = 0; k < n; k++)
                CHILD_CHECK(locus_shm_wait(ep, r[k], nullptr) == LOCUS_OK);
            memset(heap, 0xdd, n * stride); // allowed now: every send is complete
            __atomic_store_n(flag(ep, 0), 1, __ATOMIC_RELEASE);
            // Blocking sends and private buffers never go by reference.
            std::vector<unsigned char> priv(1024, 'p');
            CHILD_CHECK(locus_shm_send(ep, 1, 100, heap, 1024) == LOCUS_OK);
            locus_shm_req_t *q;
            CHILD_CHECK(locus_shm_isend(ep, 1, 101, priv.data(), priv.size(), &q) == LOCUS_OK);
            CHILD_CHECK(locus_shm_wait(ep, q, nullptr) == LOCUS_OK);
            CHILD_CHECK(stats(ep).ref_sent == kByRef);
            return 0;
        }
        std::vector<std::vector<unsigned char>> got(n, std::vector<unsigned char>(kSizes[n - 1] + 64));
        locus_shm_req_t *r[n];
        for (int k = 0; k < n / 2; k++)
            CHILD_CHECK(locus_shm_irecv(ep, 0, k, got[k].data(), got[k].size(), &r[k]) == LOCUS_OK);
        CHILD_CHECK(await(ep, flag(ep, 0), 1, true)); // rank 0 saw all its sends complete
        for (int k = n / 2; k < n; k++)
            CHILD_CHECK(locus_shm_irecv(ep, 0, k, got[k].data(), got[k].size(), &r[k]) == LOCUS_OK);
        for (int k = 0; k < n; k++) {
            locus_shm_info_t info;
            CHILD_CHECK(locus_shm_wait(ep, r[k], &info) == LOCUS_OK);
            CHILD_CHECK(info.len == kSizes[k]);
            if (!intact(got[k].data(), kSizes[k], k))
                fprintf(stderr, "message %d (%zu B) damaged\n", k, kSizes[k]);
            CHILD_CHECK(intact(got[k].data(), kSizes[k], k));
        }
        unsigned char b[1024];
        CHILD_CHECK(locus_shm_recv(ep, 0, 100, b, sizeof b, nullptr) == LOCUS_OK);
        CHILD_CHECK(locus_shm_recv(ep, 0, 101, b, sizeof b, nullptr) == LOCUS_OK);
        // Each message counted once, on its path: the warm-up, 1023 B and the
        // two copied 1 KiB ones eager, four by reference, the 16385 B from the heap.
        locus_shm_stats_t s = stats(ep);
        CHILD_CHECK(s.ref_msgs == kByRef && s.ref_bytes == 1024 + 2048 + 4000 + 16384);
        CHILD_CHECK(s.heap_msgs == 1 && s.heap_bytes == 16385 && s.split_msgs == 0);
        CHILD_CHECK(s.eager_msgs == SHM_FBOX_AFTER + 1 + 3 &&
                    s.eager_bytes == (SHM_FBOX_AFTER + 1) * 8 + 1023 + 2 * 1024);
        CHILD_CHECK(s.cma_msgs == 0 && s.pipe_msgs == 0 && s.ref_sent == 0);
        return 0;
    }, nullptr, kHeap);
    EXPECT_EQ(bad, 0);
}

// While rank 1 does not call the library the send stays incomplete (its
// buffer is still being read from); once rank 1 receives, it completes.
TEST(ShmRef, SendCompletesOnlyOnceTheReceiverTookIt)
{
    int bad = run_procs(2, [](locus_shm_ep_t *ep) -> int {
        if (warm_up(ep))
            return 1;
        unsigned char *buf = (unsigned char *)locus_shm_alloc(ep, 1024);
        CHILD_CHECK(buf != nullptr);
        if (locus_shm_rank(ep) == 0) {
            for (size_t i = 0; i < 1024; i++)
                buf[i] = pat(i, 5);
            locus_shm_req_t *r;
            CHILD_CHECK(locus_shm_isend(ep, 1, 5, buf, 1024, &r) == LOCUS_OK);
            CHILD_CHECK(stats(ep).ref_sent == 1);
            bool done = false;
            for (int i = 0; i < 200 && !done; i++) { // ~20 ms
                CHILD_CHECK(locus_shm_test(ep, r, &done, nullptr) == LOCUS_OK);
                std::this_thread::sleep_for(std::chrono::microseconds(100));
            }
            CHILD_CHECK(!done);
            __atomic_store_n(flag(ep, 0), 1, __ATOMIC_RELEASE);
            CHILD_CHECK(locus_shm_wait(ep, r, nullptr) == LOCUS_OK);
            return 0;
        }
        CHILD_CHECK(await(ep, flag(ep, 0), 1, false));
        unsigned char b[1024];
        CHILD_CHECK(locus_shm_recv(ep, 0, 5, b, sizeof b, nullptr) == LOCUS_OK);
        CHILD_CHECK(intact(b, sizeof b, 5));
        return 0;
    }, nullptr, kHeap);
    EXPECT_EQ(bad, 0);
}

// A receiver that dies before taking the message: the send fails with
// LOCUS_ERR_PEER_FAILED instead of waiting for ever.
TEST(ShmRef, ReceiverThatDiesFailsThePendingSend)
{
    int bad = run_procs(2, [](locus_shm_ep_t *ep) -> int {
        if (warm_up(ep))
            return 1;
        unsigned char *buf = (unsigned char *)locus_shm_alloc(ep, 2048);
        CHILD_CHECK(buf != nullptr);
        if (locus_shm_rank(ep) == 0) {
            memset(buf, 1, 2048);
            locus_shm_req_t *r;
            CHILD_CHECK(locus_shm_isend(ep, 1, 9, buf, 2048, &r) == LOCUS_OK);
            CHILD_CHECK(stats(ep).ref_sent == 1);
            __atomic_store_n(flag(ep, 0), 1, __ATOMIC_RELEASE);
            locus_status_t st = locus_shm_wait(ep, r, nullptr);
            if (st != LOCUS_ERR_PEER_FAILED)
                fprintf(stderr, "wait: status %d (%s), expected LOCUS_ERR_PEER_FAILED\n", (int)st, locus_strerror(st));
            CHILD_CHECK(st == LOCUS_ERR_PEER_FAILED);
            return 0;
        }
        CHILD_CHECK(await(ep, flag(ep, 0), 1, false));
        _exit(0); // no finalize, nothing received
    }, nullptr, kHeap);
    EXPECT_EQ(bad, 0);
}

// LOCUS_SHM_REF=0: every heap send is copied in as before.
TEST(ShmRef, TunableZeroTurnsItOff)
{
    int bad = run_procs(2, [](locus_shm_ep_t *ep) -> int {
        if (warm_up(ep))
            return 1;
        unsigned char *buf = (unsigned char *)locus_shm_alloc(ep, 4096);
        CHILD_CHECK(buf != nullptr);
        if (locus_shm_rank(ep) == 0) {
            memset(buf, 3, 4096);
            locus_shm_req_t *r;
            CHILD_CHECK(locus_shm_isend(ep, 1, 3, buf, 4096, &r) == LOCUS_OK);
            CHILD_CHECK(locus_shm_wait(ep, r, nullptr) == LOCUS_OK);
            CHILD_CHECK(stats(ep).ref_sent == 0);
        } else {
            CHILD_CHECK(locus_shm_recv(ep, 0, 3, buf, 4096, nullptr) == LOCUS_OK);
            CHILD_CHECK(buf[4095] == 3);
        }
        return 0;
    }, "LOCUS_SHM_REF=0", kHeap);
    EXPECT_EQ(bad, 0);
}
