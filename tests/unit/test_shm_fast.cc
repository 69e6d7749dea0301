// The blocking send/recv fast paths (mailbox or direct box/ring send, receive
// straight from the head cell) against the general path: order, flow control when the box
// is full, fallbacks (wrong tag at the head, unexpected messages, truncation,
// rendezvous in between), ANY_SOURCE.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "shm_procs.h"

extern "C" {
#include "shm/shm_internal.h"
}

using shmtest::run_procs;
using shmtest::stats;

namespace {

// Payload of message i: its bytes are a function of i, so any mix-up shows.
void fill(unsigned char *b, size_t n, uint32_t i)
{
    for (size_t k = 0; k < n; k++)
        b[k] = (unsigned char)(i * 131 + k * 7 + 1);
}

bool check(const unsigned char *b, size_t n, uint32_t i)
{
    for (size_t k = 0; k < n; k++)
        if (b[k] != (unsigned char)(i * 131 + k * 7 + 1))
            return false;
    return true;
}

// These tests are about the box, the mailbox and the ring together, so the
// boxes are the 16 KiB ones many processes get (2 processes alone would get
// 64 KiB boxes, which take every eager message and leave the ring nothing).
static const int small_boxes = setenv("LOCUS_SHM_FBOX", "16384", 0);

// Sizes cycle through one cell (0..32 B), several cells, above a 16 KiB box's
// half (ring) and, every 97th, a rendezvous.
size_t size_of(uint32_t i)
{
    static const size_t s[] = {0, 1, 8, 16, 24, 32, 33, 100, 1024, 9000};
    return i % 97 == 96 ? 40000 : s[i % 10];
}

} // namespace

TEST(ShmFast, BlockingInOrderThroughFullBoxes)
{
    const uint32_t n = 6000;
    EXPECT_EQ(run_procs(2,
                        [&](locus_shm_ep_t *ep) {
                            std::vector<unsigned char> b(40000);
                            if (locus_shm_rank(ep) == 1) {
                                for (uint32_t i = 0; i < n; i++) {
                                    fill(b.data(), size_of(i), i);
                                    CHILD_CHECK(locus_shm_send(ep, 0, i, b.data(), size_of(i)) == LOCUS_OK);
                                }
                                return 0;
                            }
                            for (uint32_t i = 0; i < n; i++) {
                                if (i % 500 == 0)
                                    usleep(2000); // let the sender fill the box and wait for space
                                locus_shm_info_t info;
                                memset(b.data(), 0, size_of(i));
                                uint64_t tag = i % 3 ? (uint64_t)i : LOCUS_SHM_ANY_TAG;
                                CHILD_CHECK(locus_shm_recv(ep, 1, tag, b.data(), b.size(), &info) == LOCUS_OK);
                                CHILD_CHECK(info.source == 1 && info.tag == i && info.len == size_of(i));
                                CHILD_CHECK(check(b.data(), size_of(i), i));
                            }
                            return 0;
                        }),
              0);
}

TEST(ShmFast, WrongTagAtHeadAndTruncationFallBack)
{
    EXPECT_EQ(run_procs(2,
                        [&](locus_shm_ep_t *ep) {
                            unsigned char b[64];
                            if (locus_shm_rank(ep) == 1) {
                                for (uint32_t i = 0; i < 40; i++) { // opens the box
                                    fill(b, 8, i);
                                    CHILD_CHECK(locus_shm_send(ep, 0, 1000 + i, b, 8) == LOCUS_OK);
                                }
                                fill(b, 24, 1);
                                CHILD_CHECK(locus_shm_send(ep, 0, 1, b, 24) == LOCUS_OK);
                                fill(b, 24, 2);
                                CHILD_CHECK(locus_shm_send(ep, 0, 2, b, 24) == LOCUS_OK);
                                return 0;
                            }
                            locus_shm_info_t info;
                            // Taken out of order: tag 1039 is behind 39 others, which go unexpected.
                            CHILD_CHECK(locus_shm_recv(ep, 1, 1039, b, sizeof b, &info) == LOCUS_OK);
                            CHILD_CHECK(info.tag == 1039 && check(b, 8, 39));
                            for (uint32_t i = 0; i < 39; i++) {
                                CHILD_CHECK(locus_shm_recv(ep, 1, 1000 + i, b, sizeof b, &info) == LOCUS_OK);
                                CHILD_CHECK(check(b, 8, i));
                            }
                            // Tag 2 asked first: tag 1 at the head goes unexpected, then is found there.
                            CHILD_CHECK(locus_shm_recv(ep, 1, 2, b, sizeof b, &info) == LOCUS_OK);
                            CHILD_CHECK(info.len == 24 && check(b, 24, 2));
                            // Truncation is reported by the general path, with the bytes that fit.
                            memset(b, 0, sizeof b);
                            CHILD_CHECK(locus_shm_recv(ep, 1, 1, b, 10, &info) == LOCUS_ERR_TRUNCATED);
                            CHILD_CHECK(check(b, 10, 1) && b[10] == 0);
                            return 0;
                        }),
              0);
}

TEST(ShmFast, AnySourceFromThreeSendersKeepsEachPairsOrder)
{
    const uint32_t n = 3000;
    EXPECT_EQ(run_procs(4,
                        [&](locus_shm_ep_t *ep) {
                            int me = locus_shm_rank(ep);
                            unsigned char b[64];
                            if (me != 0) {
                                for (uint32_t i = 0; i < n; i++) {
                                    fill(b, 16, i * 4 + me);
                                    CHILD_CHECK(locus_shm_send(ep, 0, i, b, 16) == LOCUS_OK);
                                }
                                return 0;
                            }
                            uint32_t next[4] = {0, 0, 0, 0};
                            for (uint32_t k = 0; k < 3 * n; k++) {
                                locus_shm_info_t info;
                                CHILD_CHECK(locus_shm_recv(ep, LOCUS_SHM_ANY_SOURCE, LOCUS_SHM_ANY_TAG, b, sizeof b,
                                                           &info) == LOCUS_OK);
                                CHILD_CHECK(info.source >= 1 && info.source <= 3);
                                CHILD_CHECK(info.tag == next[info.source]);
                                CHILD_CHECK(check(b, 16, (uint32_t)info.tag * 4 + info.source));
                                next[info.source]++;
                            }
                            return 0;
                        }),
              0);
}

// Lock-step bursts: the first one-cell message of a burst finds the mailbox
// free, the rest of the burst goes through the box ring (mailbox not freed
// yet), the box's larger messages and the process ring's; every message must
// arrive in order whichever way it went, blocking and non-blocking receives.
TEST(ShmFast, MailboxBoxAndRingKeepPairOrder)
{
    const uint32_t bursts = 300;
    static const size_t sizes[] = {8, 16, 1, 32, 1024, 20000, 0, 24};
    const uint32_t per = sizeof sizes / sizeof sizes[0];
    EXPECT_EQ(run_procs(2,
                        [&](locus_shm_ep_t *ep) {
                            std::vector<unsigned char> b(20000);
                            char ack = 0;
                            if (locus_shm_rank(ep) == 1) {
                                for (uint32_t k = 0; k < bursts; k++) {
                                    for (uint32_t j = 0; j < per; j++) {
                                        uint32_t i = k * per + j;
                                        fill(b.data(), sizes[j], i);
                                        CHILD_CHECK(locus_shm_send(ep, 0, i, b.data(), sizes[j]) == LOCUS_OK);
                                    }
                                    CHILD_CHECK(locus_shm_recv(ep, 0, 0, &ack, 1, nullptr) == LOCUS_OK);
                                }
                                return 0;
                            }
                            for (uint32_t k = 0; k < bursts; k++) {
                                for (uint32_t j = 0; j < per; j++) {
                                    uint32_t i = k * per + j;
                                    locus_shm_info_t info;
                                    if (j % 3 == 2) {
                                        locus_shm_req_t *r;
                                        CHILD_CHECK(locus_shm_irecv(ep, 1, LOCUS_SHM_ANY_TAG, b.data(), b.size(), &r) ==
                                                    LOCUS_OK);
                                        CHILD_CHECK(locus_shm_wait(ep, r, &info) == LOCUS_OK);
                                    } else {
                                        CHILD_CHECK(locus_shm_recv(ep, 1, LOCUS_SHM_ANY_TAG, b.data(), b.size(), &info) ==
                                                    LOCUS_OK);
                                    }
                                    CHILD_CHECK(info.tag == i && info.len == sizes[j] && check(b.data(), sizes[j], i));
                                }
                                CHILD_CHECK(locus_shm_send(ep, 1, 0, &ack, 1) == LOCUS_OK);
                            }
                            // The mailbox carried part of the traffic (a burst's first message at least).
                            CHILD_CHECK(stats(ep).mailbox_msgs >= bursts / 2);
                            return 0;
                        }),
              0);
}

// Rank 0 leaves by _exit either way: the peer waits in a receive that only
// our exit (its liveness check) ends, so a failure must not reach the barrier.
#define EXIT_CHECK(c)                                                                              \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #c, locus_last_error()); \
            _exit(1);                                                                              \
        }                                                                                          \
    } while (0)

// A hostile sender that opened its box writes a mailbox message that is not
// a one-cell eager message from it: the receiver fails with LOCUS_ERR_CORRUPT.
TEST(ShmFast, HostileMailboxIsRejected)
{
    for (int variant = 0; variant < 3; variant++) {
        EXPECT_EQ(run_procs(2,
                            [&](locus_shm_ep_t *ep) {
                                unsigned char b[64] = {0};
                                if (locus_shm_rank(ep) == 1) {
                                    for (uint32_t i = 0; i < 40; i++) // opens the box (and uses the mailbox)
                                        CHILD_CHECK(locus_shm_send(ep, 0, 1, b, 8) == LOCUS_OK);
                                    CHILD_CHECK(locus_shm_recv(ep, 0, 2, b, 1, nullptr) == LOCUS_OK);
                                    shm_fbtx_t *f = &ep->fbox.tx[0];
                                    shmq_hdr_t *c = shm_mailbox(&f->q);
                                    while (__atomic_load_n(&c->seq, __ATOMIC_ACQUIRE) != f->mb_sent << 1)
                                        __builtin_ia32_pause(); // rank 0 frees it while it waits
                                    c->len = variant == 0 ? 200 : 8; // 0: longer than a cell
                                    c->src = variant == 1 ? 0 : 1;   // 1: not the box's sender
                                    c->type = variant == 2 ? MT_FIN : MT_EAGER; // 2: not eager
                                    c->aux = f->seq;
                                    __atomic_store_n(&c->seq, ((f->mb_sent + 1) << 1) | 1, __ATOMIC_RELEASE);
                                    locus_shm_recv(ep, 0, 5, b, sizeof b, nullptr); // until rank 0 exits
                                    return 0;
                                }
                                for (uint32_t i = 0; i < 40; i++)
                                    EXIT_CHECK(locus_shm_recv(ep, 1, 1, b, sizeof b, nullptr) == LOCUS_OK);
                                EXIT_CHECK(stats(ep).mailbox_msgs > 0);
                                EXIT_CHECK(locus_shm_send(ep, 1, 2, b, 1) == LOCUS_OK);
                                // Bounded: a check that lets the message through may also leave it
                                // waiting forever for its turn; that must fail, not hang.
                                locus_shm_req_t *r;
                                EXIT_CHECK(locus_shm_irecv(ep, 1, LOCUS_SHM_ANY_TAG, b, sizeof b, &r) == LOCUS_OK);
                                bool done = false;
                                locus_status_t st = LOCUS_OK;
                                for (int spin = 0; !done && st == LOCUS_OK && spin < 5000; spin++) {
                                    st = locus_shm_test(ep, r, &done, nullptr);
                                    if (!done && st == LOCUS_OK)
                                        usleep(1000);
                                }
                                EXIT_CHECK(st == LOCUS_ERR_CORRUPT);
                                EXIT_CHECK(strstr(locus_last_error(), "rank 1") != nullptr);
                                _exit(0); // broken endpoint; the peer is released by our exit
                            }),
                  0)
            << "variant " << variant;
    }
}

// A peer that finalizes and leaves: what it sent is still received, then a
// receive from it (posted before or after it left, blocking or not) fails
// with LOCUS_ERR_PEER_FAILED instead of waiting forever.
TEST(ShmFast, ReceiveFromAPeerThatLeftFailsAfterItsMessages)
{
    EXPECT_EQ(run_procs(2,
                        [&](locus_shm_ep_t *ep) {
                            unsigned char b[64];
                            if (locus_shm_rank(ep) == 1) {
                                for (uint32_t i = 0; i < 3; i++) {
                                    fill(b, 8 + i * 20, i);
                                    CHILD_CHECK(locus_shm_send(ep, 0, i, b, 8 + i * 20) == LOCUS_OK);
                                }
                                locus_shm_finalize(ep);
                                _exit(0);
                            }
                            locus_shm_req_t *early;
                            CHILD_CHECK(locus_shm_irecv(ep, 1, 99, b, sizeof b, &early) == LOCUS_OK);
                            // Bounded wait: the posted receive must end once rank 1 is gone.
                            bool done = false;
                            locus_status_t st = LOCUS_OK;
                            for (int spin = 0; !done && spin < 50000; spin++) {
                                st = locus_shm_test(ep, early, &done, nullptr);
                                if (!done)
                                    usleep(100);
                            }
                            CHILD_CHECK(done && st == LOCUS_ERR_PEER_FAILED);
                            for (uint32_t i = 0; i < 3; i++) {
                                locus_shm_info_t info;
                                CHILD_CHECK(locus_shm_recv(ep, 1, i, b, sizeof b, &info) == LOCUS_OK);
                                CHILD_CHECK(info.len == 8 + i * 20 && check(b, info.len, i));
                            }
                            CHILD_CHECK(locus_shm_recv(ep, 1, 3, b, sizeof b, nullptr) == LOCUS_ERR_PEER_FAILED);
                            CHILD_CHECK(strstr(locus_last_error(), "rank 1") != nullptr);
                            locus_shm_req_t *late;
                            CHILD_CHECK(locus_shm_irecv(ep, 1, 4, b, sizeof b, &late) == LOCUS_OK);
                            CHILD_CHECK(locus_shm_wait(ep, late, nullptr) == LOCUS_ERR_PEER_FAILED);
                            return 0;
                        }),
              0);
}

// Private-buffer rendezvous under LOCUS_SHM_CMA=auto measure both ways (CMA
// first, then the pipelined copy, then the other way again every
// SHM_CMA_EXPLORE-th) and keep the data intact whichever is taken; `on` and
// `off` take only their own way.
TEST(ShmCma, AutoMeasuresBothWaysOnOffKeepTheirOwn)
{
    for (const char *env : {"LOCUS_SHM_CMA=auto", "LOCUS_SHM_CMA=on", "LOCUS_SHM_CMA=off"}) {
        int bad = run_procs(2, [env](locus_shm_ep_t *ep) -> int {
            const size_t n = 200000;
            const int count = SHM_CMA_EXPLORE + 8;
            std::vector<unsigned char> b(n);
            for (int i = 0; i < count; i++) {
                if (locus_shm_rank(ep) == 0) {
                    fill(b.data(), n, (uint32_t)i);
                    CHILD_CHECK(locus_shm_send(ep, 1, i, b.data(), n) == LOCUS_OK);
                } else {
                    CHILD_CHECK(locus_shm_recv(ep, 0, i, b.data(), n, nullptr) == LOCUS_OK);
                    CHILD_CHECK(check(b.data(), n, (uint32_t)i));
                }
            }
            if (locus_shm_rank(ep) == 1) {
                locus_shm_stats_t s = stats(ep);
                bool cma = s.cma_gbps > 0, pipe = s.pipe_gbps > 0;
                CHILD_CHECK(s.cma_msgs + s.pipe_msgs == (uint64_t)count && s.eager_msgs == 0 && s.heap_msgs == 0);
                CHILD_CHECK(s.cma_bytes == s.cma_msgs * n && s.pipe_bytes == s.pipe_msgs * n);
                CHILD_CHECK(cma == (s.cma_msgs > 0) && pipe == (s.pipe_msgs > 0));
                if (!strcmp(env, "LOCUS_SHM_CMA=auto")) // both measured, the slower way again every SHM_CMA_EXPLORE-th
                    CHILD_CHECK(cma && pipe && std::min(s.cma_msgs, s.pipe_msgs) >= count / SHM_CMA_EXPLORE);
                else if (!strcmp(env, "LOCUS_SHM_CMA=on"))
                    CHILD_CHECK(cma && !pipe);
                else
                    CHILD_CHECK(!cma && pipe);
            }
            return 0;
        }, env);
        EXPECT_EQ(bad, 0) << env;
    }
}
