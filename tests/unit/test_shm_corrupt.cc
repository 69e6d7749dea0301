// Fast box corruption checks of the shm transport, and box + ring traffic.
//
// A fast box is a per-pair single-producer ring in the receiver's pool that a
// sender claims (CAS on the receiver's fbox_used) and announces with MT_FBOX
// through the receiver's ring; every matchable message carries a per-pair
// sequence number in hdr.aux. Hostile tests: rank 1 (or 2) of a forked job
// writes crafted headers straight into rank 0's ring or into its own box;
// rank 0's receive, through the public API only, must fail with
// LOCUS_ERR_CORRUPT naming the culprit and the check. After each hostile
// message the culprit sends a legitimate "sentinel" through the same channel,
// so a missing check shows as a receive that succeeds instead of a hang; an
// alarm bounds every child anyway. Each case runs with a blocking receive, a
// non-blocking receive + wait, and a receive for the sentinel's tag only.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <poll.h>
#include <string>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include <locus/locus.h>

#include "shm_procs.h"

extern "C" {
#include "shm/shm_internal.h"
}

using shmtest::run_procs;

namespace {

// Boxes of 16 KiB (what many processes get), so that eager messages too big
// for a box go through the ring: 2 processes alone get 64 KiB boxes, which
// take every eager message.
static const int small_boxes = setenv("LOCUS_SHM_FBOX", "16384", 0);

constexpr uint64_t kOpened = SHM_FBOX_AFTER + 1; // matchable messages of open_box()
enum : uint64_t { T_WARM = 100, T_ACK, T_SENTINEL, T_HOSTILE, T_BIG, T_LEAVE };

void raw_copy(void *d, const void *s, size_t n, shmq_dir_t) { memcpy(d, s, n); }

shmq_hdr_t hdr(int src, int type, uint64_t aux, uint32_t len = 0, uint64_t tag = T_HOSTILE)
{
    shmq_hdr_t h{};
    h.src = (uint16_t)src;
    h.type = (uint8_t)type;
    h.aux = aux;
    h.len = len;
    h.tag = tag;
    return h;
}

// ---- the hostile side ----

// A crafted header (src as given, not checked) into rank 0's ring.
bool ring_post(locus_shm_ep_t *ep, shmq_hdr_t h, const void *payload = nullptr)
{
    uint64_t cached = 0;
    return shmq_send(&ep->q[0], &cached, &h, payload, raw_copy);
}

// Claim a box of rank 0's pool as fbox_open does (without the bookkeeping of
// a real open: this process's own sends keep to the ring).
uint32_t claim_box(locus_shm_ep_t *ep)
{
    return __atomic_fetch_add(&ep->procs[0].fbox_used, 1, __ATOMIC_RELAXED);
}

// A crafted header into this process's open box at rank 0, as send_matchable
// writes it (the box's private tail moves; the send sequence does not).
bool box_post(locus_shm_ep_t *ep, shmq_hdr_t h, const void *payload = nullptr)
{
    shm_fbtx_t *f = &ep->fbox.tx[0];
    uint64_t pos;
    if (f->state != FB_OPEN || !shmq_claim_sp(&f->q, &f->tail, &f->cached_head, h.len, &pos))
        return false;
    shmq_post(&f->q, pos, &h, payload, raw_copy);
    return true;
}

// Open this process's box at rank 0 for real: SHM_FBOX_AFTER sends through
// the ring, the announcement, one send through the box; then wait for rank
// 0's ack (accept_box: it has them all and polls the box). *ack = its payload.
int open_box(locus_shm_ep_t *ep, uint64_t *ack)
{
    for (uint64_t i = 0; i < kOpened; i++)
        CHILD_CHECK(locus_shm_send(ep, 0, T_WARM, &i, sizeof i) == LOCUS_OK);
    CHILD_CHECK(ep->fbox.tx[0].state == FB_OPEN && ep->fbox.tx[0].seq == kOpened);
    CHILD_CHECK(locus_shm_recv(ep, 0, T_ACK, ack, sizeof *ack, nullptr) == LOCUS_OK);
    return 0;
}

// The legitimate message after a hostile one, through the same channel (box:
// it is drained before the ring, so a ring sentinel could overtake a hostile
// box message). If the victim lets the hostile message pass, it receives one
// of the two instead of failing.
void sentinel(locus_shm_ep_t *ep, bool via_box)
{
    shm_fbtx_t *f = &ep->fbox.tx[0];
    size_t n = 40; // more than a cell: never through the box's mailbox, which is polled first
    if (!via_box && f->state == FB_OPEN)
        n = ep->plan.fbox_eager_bytes + 1; // too big for the box
    if (via_box && f->state != FB_OPEN)
        _exit(3);
    std::vector<char> b(n, 's');
    locus_shm_send(ep, 0, T_SENTINEL, b.data(), n); // rank 0 may have left already
}

// ---- the victim's side (rank 0) ----

// Receive rank 1's open_box() traffic, check its box is polled, ack with `ack`.
int accept_box(locus_shm_ep_t *ep, uint64_t ack)
{
    for (uint64_t i = 0; i < kOpened; i++) {
        uint64_t v = ~0ull;
        locus_shm_info_t info;
        CHILD_CHECK(locus_shm_recv(ep, 1, T_WARM, &v, sizeof v, &info) == LOCUS_OK);
        CHILD_CHECK(v == i && info.len == sizeof v);
    }
    CHILD_CHECK(ep->fbox.rx_of[1] >= 0 && ep->match.rxseq[1] == kOpened);
    CHILD_CHECK(locus_shm_send(ep, 1, T_ACK, &ack, sizeof ack) == LOCUS_OK);
    return 0;
}

enum RecvMode { kRecv, kIrecvWait, kRecvSentinelTag, kModes };

// The receive must fail with LOCUS_ERR_CORRUPT naming `culprit` and `why`.
int expect_corrupt(locus_shm_ep_t *ep, int mode, int culprit, const char *why)
{
    std::vector<char> buf(1 << 20);
    locus_shm_info_t info{};
    info.source = -1;
    uint64_t tag = mode == kRecvSentinelTag ? T_SENTINEL : LOCUS_SHM_ANY_TAG;
    locus_status_t st;
    if (mode == kIrecvWait) {
        locus_shm_req_t *r;
        st = locus_shm_irecv(ep, LOCUS_SHM_ANY_SOURCE, tag, buf.data(), buf.size(), &r);
        if (st == LOCUS_OK)
            st = locus_shm_wait(ep, r, &info);
    } else {
        st = locus_shm_recv(ep, LOCUS_SHM_ANY_SOURCE, tag, buf.data(), buf.size(), &info);
    }
    if (st != LOCUS_ERR_CORRUPT) {
        fprintf(stderr, "rank 0: expected LOCUS_ERR_CORRUPT (%s), got %d (source %d tag %llu len %zu)%s%s\n",
                why, (int)st, info.source, (unsigned long long)info.tag, info.len, st ? ": " : "",
                st ? locus_last_error() : "");
        return 1;
    }
    std::string msg = locus_last_error(), name = "rank " + std::to_string(culprit);
    if (msg.find(name) == std::string::npos || msg.find(why) == std::string::npos) {
        fprintf(stderr, "rank 0: error should name '%s' and '%s': %s\n", name.c_str(), why, msg.c_str());
        return 1;
    }
    return 0;
}

struct Attack {
    int procs = 2;
    uint64_t heap = 0;   // shared heap per process
    int culprit = 1;     // the rank the error must name
    const char *why = ""; // what the error must say
    std::function<int(locus_shm_ep_t *)> victim_setup; // rank 0, before the receive (optional)
    std::function<int(locus_shm_ep_t *)> attack;       // every other rank
};

// Run the attack once per receive mode; returns the failed runs.
int run_attack(const Attack &a)
{
    int failed = 0;
    for (int mode = 0; mode < kModes; mode++) {
        int bad = run_procs(a.procs, [&](locus_shm_ep_t *ep) -> int {
            if (locus_shm_rank(ep) == 0) {
                int rc = a.victim_setup ? a.victim_setup(ep) : 0;
                if (!rc)
                    rc = expect_corrupt(ep, mode, a.culprit, a.why);
                _exit(rc); // the endpoint is broken; the others are released by our exit
            }
            int rc = a.attack(ep);
            if (rc)
                _exit(rc); // rank 0 then fails with PEER_FAILED rather than wait
            char b[8];
            locus_shm_recv(ep, 0, T_LEAVE, b, sizeof b, nullptr); // ends when rank 0 exits
            return 0;
        }, nullptr, a.heap);
        if (bad)
            fprintf(stderr, "  (receive mode %d)\n", mode);
        failed += bad;
    }
    return failed;
}

} // namespace

// 1. A box index outside the pool; the hostile rank also raises the shared
// claim counter so that only the pool-size check stands in the way (index
// 1000000 would be a view far outside the segment).
TEST(ShmFbox, AnnouncementIndexOutOfRange)
{
    for (uint64_t idx : {uint64_t(1), uint64_t(1000000)}) { // 2 processes: 1 box per pool
        Attack a;
        a.why = "fast box announcement";
        a.attack = [idx](locus_shm_ep_t *ep) -> int {
            CHILD_CHECK(ep->plan.fboxes == 1);
            __atomic_store_n(&ep->procs[0].fbox_used, UINT32_MAX, __ATOMIC_RELAXED);
            CHILD_CHECK(ring_post(ep, hdr(1, MT_FBOX, idx)));
            sentinel(ep, false);
            return 0;
        };
        EXPECT_EQ(run_attack(a), 0) << "index " << idx;
    }
}

// 2. A box of the pool that no sender claimed (fbox_used is still 0).
TEST(ShmFbox, AnnouncementOfUnclaimedBox)
{
    Attack a;
    a.why = "fast box announcement";
    a.attack = [](locus_shm_ep_t *ep) -> int {
        CHILD_CHECK(ring_post(ep, hdr(1, MT_FBOX, 0)));
        sentinel(ep, false);
        return 0;
    };
    EXPECT_EQ(run_attack(a), 0);
}

// 3. One sender announcing a second box (3 processes: 2 boxes per pool, both
// claimed), and announcing the same box twice.
TEST(ShmFbox, SenderAnnouncesTwice)
{
    Attack two;
    two.procs = 3;
    two.why = "fast box announcement";
    two.attack = [](locus_shm_ep_t *ep) -> int {
        if (locus_shm_rank(ep) != 1)
            return 0;
        CHILD_CHECK(ep->plan.fboxes == 2);
        CHILD_CHECK(claim_box(ep) == 0 && claim_box(ep) == 1);
        CHILD_CHECK(ring_post(ep, hdr(1, MT_FBOX, 0)) && ring_post(ep, hdr(1, MT_FBOX, 1)));
        sentinel(ep, false);
        return 0;
    };
    EXPECT_EQ(run_attack(two), 0);
    Attack same;
    same.why = "fast box announcement";
    same.attack = [](locus_shm_ep_t *ep) -> int {
        CHILD_CHECK(claim_box(ep) == 0);
        CHILD_CHECK(ring_post(ep, hdr(1, MT_FBOX, 0)) && ring_post(ep, hdr(1, MT_FBOX, 0)));
        sentinel(ep, false);
        return 0;
    };
    EXPECT_EQ(run_attack(same), 0);
}

// 3b. Rank 2 announces the box rank 1 claimed and announced.
TEST(ShmFbox, BoxAnnouncedByTwoSenders)
{
    Attack a;
    a.procs = 3;
    a.culprit = 2;
    a.why = "two senders";
    a.attack = [](locus_shm_ep_t *ep) -> int {
        if (locus_shm_rank(ep) == 1) {
            CHILD_CHECK(claim_box(ep) == 0);
            CHILD_CHECK(ring_post(ep, hdr(1, MT_FBOX, 0)));
            return 0;
        }
        // Behind rank 1's announcement in the ring (it claimed position 0).
        while (__atomic_load_n(ep->q[0].tail, __ATOMIC_ACQUIRE) < 1)
            __builtin_ia32_pause();
        CHILD_CHECK(__atomic_load_n(&ep->procs[0].fbox_used, __ATOMIC_RELAXED) == 1);
        CHILD_CHECK(ring_post(ep, hdr(2, MT_FBOX, 0)));
        sentinel(ep, false);
        return 0;
    };
    EXPECT_EQ(run_attack(a), 0);
}

// 4a. A message in rank 1's box claiming to come from someone else: rank 2
// (3 processes; aux 0 is rank 2's next number, so without the owner check it
// would be delivered as rank 2's), rank 0 itself, a rank outside the job. The
// error names the box's owner.
TEST(ShmFbox, BoxMessageNotFromItsOwner)
{
    for (int forged : {2, 0, 7}) {
        Attack a;
        a.procs = forged == 2 ? 3 : 2;
        a.why = "not from its sender";
        a.victim_setup = [](locus_shm_ep_t *ep) { return accept_box(ep, 0); };
        a.attack = [forged](locus_shm_ep_t *ep) -> int {
            if (locus_shm_rank(ep) != 1)
                return 0;
            uint64_t ack;
            if (open_box(ep, &ack))
                return 1;
            uint64_t v = 42;
            CHILD_CHECK(box_post(ep, hdr(forged, MT_EAGER, 0, sizeof v), &v));
            sentinel(ep, true);
            return 0;
        };
        EXPECT_EQ(run_attack(a), 0) << "forged source " << forged;
    }
}

// 4b. A non-matchable message in the box. The FIN quotes the rendezvous rank 0
// really started with rank 1, so only the box's type check can refuse it;
// MT_FBOX would be refused later as a repeated announcement.
TEST(ShmFbox, BoxMessageOfWrongType)
{
    for (int type : {MT_FIN, MT_FBOX}) {
        Attack a;
        a.why = "not from its sender";
        a.victim_setup = [](locus_shm_ep_t *ep) -> int {
            static std::vector<char> big(4 * ep->plan.eager_bytes, 'b');
            locus_shm_req_t *r;
            CHILD_CHECK(locus_shm_isend(ep, 1, T_BIG, big.data(), big.size(), &r) == LOCUS_OK);
            CHILD_CHECK(r->proto == MT_RTS && ep->send.rndv.head == r);
            return accept_box(ep, r->msgid); // tells rank 1 the rendezvous id
        };
        a.attack = [type](locus_shm_ep_t *ep) -> int {
            uint64_t msgid;
            if (open_box(ep, &msgid))
                return 1;
            CHILD_CHECK(box_post(ep, hdr(1, type, type == MT_FIN ? msgid : 0)));
            sentinel(ep, true);
            return 0;
        };
        EXPECT_EQ(run_attack(a), 0) << "type " << type;
    }
}

// 5. Per-pair sequence numbers out of order: a ring message ahead while the
// box holds nothing (box open, and no box at all), a replayed number through
// the ring and through the box.
TEST(ShmFbox, MessageOutOfItsSendersOrder)
{
    struct Case {
        const char *name;
        bool open, in_box;
        uint64_t aux;
    };
    for (Case c : {Case{"ahead, box open and empty", true, false, kOpened + 5},
                   Case{"ahead, no box", false, false, 5}, Case{"replayed, ring", true, false, kOpened - 1},
                   Case{"replayed, box", true, true, kOpened - 1}}) {
        Attack a;
        a.why = "out of its sender's order";
        if (c.open)
            a.victim_setup = [](locus_shm_ep_t *ep) { return accept_box(ep, 0); };
        a.attack = [c](locus_shm_ep_t *ep) -> int {
            uint64_t ack, v = 42;
            if (c.open && open_box(ep, &ack))
                return 1;
            shmq_hdr_t h = hdr(1, MT_EAGER, c.aux, sizeof v);
            CHILD_CHECK(c.in_box ? box_post(ep, h, &v) : ring_post(ep, h, &v));
            sentinel(ep, c.in_box);
            return 0;
        };
        EXPECT_EQ(run_attack(a), 0) << c.name;
    }
}

namespace {
unsigned char pattern(uint64_t i, size_t k) { return (unsigned char)(i * 131 + k * 7 + 1); }
} // namespace

// Once rank 1's box is open, small messages (box), eager ones above the box's
// limit (ring) and rendezvous (descriptor through the box, payload by CMA,
// shared heap or fragments through the ring) interleaved; all sent at once
// (the box and ring fill, the rest queues). Rank 0 receives every one intact
// and in send order, by blocking receives, receive + wait, and receives
// posted ahead of the messages.
TEST(ShmFbox, BoxAndRingTrafficArrivesIntactInOrder)
{
    struct Variant {
        const char *env;
        uint64_t heap;
    };
    for (Variant v : {Variant{"LOCUS_SHM_CMA=auto", 0}, Variant{"LOCUS_SHM_CMA=off", 0},
                      Variant{"LOCUS_SHM_CMA=auto", 8 << 20}}) {
        int bad = run_procs(2, [&](locus_shm_ep_t *ep) -> int {
            const size_t F = ep->plan.fbox_eager_bytes, E = ep->plan.eager_bytes;
            CHILD_CHECK(ep->plan.fboxes == 1 && F + 1 < E);
            const size_t sizes[] = {0, 8, F, F + 1, 1, E, 200, E + 1, 64, 3 * E, F - 1, 1000};
            const uint64_t n = 120;
            auto size_of = [&](uint64_t i) { return sizes[i % (sizeof sizes / sizeof *sizes)]; };
            if (locus_shm_rank(ep) == 1) {
                std::vector<std::vector<unsigned char>> priv(n);
                std::vector<unsigned char *> bufs(n);
                std::vector<locus_shm_req_t *> reqs(n);
                for (uint64_t i = 0; i < n; i++) {
                    size_t s = size_of(i);
                    priv[i].resize(s + 1);
                    bufs[i] = v.heap ? (unsigned char *)locus_shm_alloc(ep, s + 1) : priv[i].data();
                    CHILD_CHECK(bufs[i]);
                    for (size_t k = 0; k < s; k++)
                        bufs[i][k] = pattern(i, k);
                    CHILD_CHECK(locus_shm_isend(ep, 0, 1000 + i, bufs[i], s, &reqs[i]) == LOCUS_OK);
                }
                for (uint64_t i = 0; i < n; i++)
                    CHILD_CHECK(locus_shm_wait(ep, reqs[i], nullptr) == LOCUS_OK);
                CHILD_CHECK(ep->fbox.tx[0].state == FB_OPEN && ep->fbox.tx[0].seq == n);
                return 0;
            }
            std::vector<std::vector<unsigned char>> got(n, std::vector<unsigned char>(3 * E + 1));
            std::vector<locus_shm_info_t> info(n);
            uint64_t i = 0;
            while (i < n) {
                int step = (int)((i / 3) % 3); // recv, irecv + wait, 4 posted ahead
                if (step == 0) {
                    CHILD_CHECK(locus_shm_recv(ep, 1, LOCUS_SHM_ANY_TAG, got[i].data(), got[i].size(),
                                               &info[i]) == LOCUS_OK);
                    i++;
                } else if (step == 1) {
                    locus_shm_req_t *r;
                    CHILD_CHECK(locus_shm_irecv(ep, LOCUS_SHM_ANY_SOURCE, LOCUS_SHM_ANY_TAG, got[i].data(),
                                                got[i].size(), &r) == LOCUS_OK);
                    CHILD_CHECK(locus_shm_wait(ep, r, &info[i]) == LOCUS_OK);
                    i++;
                } else {
                    uint64_t m = n - i < 4 ? n - i : 4;
                    locus_shm_req_t *r[4];
                    for (uint64_t j = 0; j < m; j++)
                        CHILD_CHECK(locus_shm_irecv(ep, 1, LOCUS_SHM_ANY_TAG, got[i + j].data(),
                                                    got[i + j].size(), &r[j]) == LOCUS_OK);
                    for (uint64_t j = 0; j < m; j++)
                        CHILD_CHECK(locus_shm_wait(ep, r[j], &info[i + j]) == LOCUS_OK);
                    i += m;
                }
            }
            for (i = 0; i < n; i++) {
                size_t s = size_of(i);
                if (info[i].source != 1 || info[i].tag != 1000 + i || info[i].len != s) {
                    fprintf(stderr, "message %llu: source %d tag %llu len %zu, expected 1 %llu %zu\n",
                            (unsigned long long)i, info[i].source, (unsigned long long)info[i].tag,
                            info[i].len, (unsigned long long)(1000 + i), s);
                    return 1;
                }
                for (size_t k = 0; k < s; k++)
                    if (got[i][k] != pattern(i, k)) {
                        fprintf(stderr, "message %llu (%zu B): byte %zu differs\n", (unsigned long long)i, s, k);
                        return 1;
                    }
            }
            int b = ep->fbox.rx_of[1];
            CHILD_CHECK(b >= 0 && ep->fbox.rx[b].rx.head > 0 && ep->match.rxseq[1] == n);
            return 0;
        }, v.env, v.heap);
        EXPECT_EQ(bad, 0) << v.env << " heap " << v.heap;
    }
}

// The two merge paths of pair order, made deterministic by a pipe: rank 0
// looks only once rank 1 has posted everything. (a) A ring message then a box
// message: the box, drained first, holds the later one, which waits. (b) 70
// box messages then a ring message: one progress call drains 64 of the box,
// then meets the ring message ahead and catches up with the box's rest.
TEST(ShmFbox, BoxAndRingMergeInPairOrder)
{
    int pfd[2];
    ASSERT_EQ(pipe(pfd), 0);
    int bad = run_procs(2, [&](locus_shm_ep_t *ep) -> int {
        const size_t F = ep->plan.fbox_eager_bytes;
        std::vector<unsigned char> mid(F + 1, 'm'); // ring
        uint64_t ack = 0;
        if (locus_shm_rank(ep) == 1) {
            if (open_box(ep, &ack))
                return 1;
            std::vector<uint64_t> v(71);
            std::vector<locus_shm_req_t *> r(73);
            CHILD_CHECK(locus_shm_isend(ep, 0, 1, mid.data(), mid.size(), &r[0]) == LOCUS_OK);
            v[0] = 2;
            CHILD_CHECK(locus_shm_isend(ep, 0, 2, &v[0], 8, &r[1]) == LOCUS_OK);
            CHILD_CHECK(write(pfd[1], "a", 1) == 1);
            CHILD_CHECK(locus_shm_recv(ep, 0, T_ACK, &ack, sizeof ack, nullptr) == LOCUS_OK);
            for (int i = 1; i <= 70; i++) {
                v[i] = 10 + i;
                CHILD_CHECK(locus_shm_isend(ep, 0, 10 + i, &v[i], 8, &r[1 + i]) == LOCUS_OK);
            }
            CHILD_CHECK(locus_shm_isend(ep, 0, 81, mid.data(), mid.size(), &r[72]) == LOCUS_OK);
            // Everything is in the box or the ring, nothing queued.
            CHILD_CHECK(!ep->send.queue[0].head && ep->fbox.tx[0].seq == kOpened + 73);
            CHILD_CHECK(write(pfd[1], "b", 1) == 1);
            for (auto *q : r)
                CHILD_CHECK(locus_shm_wait(ep, q, nullptr) == LOCUS_OK);
            return 0;
        }
        auto wait_pipe = [&](char want) -> bool {
            struct pollfd p = {pfd[0], POLLIN, 0};
            char c = 0;
            return poll(&p, 1, 10000) == 1 && read(pfd[0], &c, 1) == 1 && c == want;
        };
        if (accept_box(ep, 0))
            return 1;
        std::vector<unsigned char> got(F + 1);
        locus_shm_info_t info;
        CHILD_CHECK(wait_pipe('a'));
        CHILD_CHECK(locus_shm_progress(ep) == LOCUS_OK);
        CHILD_CHECK(ep->match.rxseq[1] == kOpened + 1); // the ring one; the box one waits
        CHILD_CHECK(locus_shm_recv(ep, 1, LOCUS_SHM_ANY_TAG, got.data(), got.size(), &info) == LOCUS_OK);
        CHILD_CHECK(info.tag == 1 && info.len == F + 1 && got[F] == 'm');
        CHILD_CHECK(locus_shm_recv(ep, 1, LOCUS_SHM_ANY_TAG, got.data(), got.size(), &info) == LOCUS_OK);
        CHILD_CHECK(info.tag == 2 && info.len == 8);
        CHILD_CHECK(locus_shm_send(ep, 1, T_ACK, &ack, sizeof ack) == LOCUS_OK);
        CHILD_CHECK(wait_pipe('b'));
        CHILD_CHECK(locus_shm_progress(ep) == LOCUS_OK);
        CHILD_CHECK(ep->match.rxseq[1] == kOpened + 73); // all of (b) in one call
        for (int i = 1; i <= 81 - 10; i++) {
            locus_shm_req_t *r;
            CHILD_CHECK(locus_shm_irecv(ep, 1, LOCUS_SHM_ANY_TAG, got.data(), got.size(), &r) == LOCUS_OK);
            CHILD_CHECK(locus_shm_wait(ep, r, &info) == LOCUS_OK);
            CHILD_CHECK(info.tag == (uint64_t)(10 + i) && info.len == (i <= 70 ? 8u : F + 1));
        }
        return 0;
    });
    close(pfd[0]);
    close(pfd[1]);
    EXPECT_EQ(bad, 0);
}

// 10. A split-copy offer (MT_HELP) that does not fit: for a rendezvous the
// victim never started, with a destination outside the offering receiver's
// heap (the victim, as sender, would copy its share there), or cut in pieces
// (the receiver's LOCUS_SHM_SPLIT_PIECE, in 64 B units above the job) of 0 B
// or too small for at most 32 pieces.
TEST(ShmSplit, HostileCopyOfferIsRejected)
{
    constexpr uint64_t heap = 4u << 20;
    constexpr size_t big = 1u << 20;
    constexpr uint64_t job1_half = (uint64_t)(big / 2 / 64) << 32 | 1; // a valid cut
    struct Case { uint64_t msgid, off, d1; };
    for (Case c : {Case{99, 0, job1_half}, Case{1, heap - big / 2, job1_half}, Case{1, UINT64_MAX - 8, job1_half},
                   Case{1, 0, 1}, Case{1, 0, 1ull << 32 | 1}}) {
        Attack a;
        a.heap = heap;
        a.why = "copy offer";
        a.victim_setup = [](locus_shm_ep_t *ep) -> int {
            void *b = locus_shm_alloc(ep, big);
            CHILD_CHECK(b != nullptr);
            locus_shm_req_t *r; // its first rendezvous: msgid 1
            CHILD_CHECK(locus_shm_isend(ep, 1, T_BIG, b, big, &r) == LOCUS_OK);
            uint64_t go = 1;
            CHILD_CHECK(locus_shm_send(ep, 1, T_ACK, &go, sizeof go) == LOCUS_OK);
            return 0;
        };
        a.attack = [c](locus_shm_ep_t *ep) -> int {
            uint64_t go;
            CHILD_CHECK(locus_shm_recv(ep, 0, T_ACK, &go, sizeof go, nullptr) == LOCUS_OK);
            uint64_t d[2] = {c.off, c.d1};
            CHILD_CHECK(ring_post(ep, hdr(1, MT_HELP, c.msgid, sizeof d, 0), d));
            sentinel(ep, false);
            return 0;
        };
        EXPECT_EQ(run_attack(a), 0) << "msgid " << c.msgid << " offset " << c.off << " d1 " << c.d1;
    }
}

// 11. A send by reference (MT_REF) that does not fit: through the ring (its
// completion is read off a box head, so only a box may carry it), pointing
// past the sender's heap, or longer than an eager message.
TEST(ShmRef, HostileReferenceIsRejected)
{
    constexpr uint64_t heap = 1u << 20;
    struct Case { bool ring; uint64_t off, len; const char *why; };
    for (Case c : {Case{true, 0, 64, "reference message"}, Case{false, heap, 8, "reference outside"},
                   Case{false, heap - 4, 64, "reference outside"}, Case{false, UINT64_MAX, 2, "reference outside"},
                   Case{false, 0, 0, ""}}) {
        if (!c.why[0])
            c = Case{false, 0, 1u << 19, "reference outside"}; // above LOCUS_SHM_EAGER, inside the heap
        Attack a;
        a.heap = heap;
        a.why = c.why;
        a.victim_setup = [](locus_shm_ep_t *ep) -> int { return accept_box(ep, 0); };
        a.attack = [c](locus_shm_ep_t *ep) -> int {
            uint64_t ack;
            if (open_box(ep, &ack))
                return 1;
            uint64_t d[2] = {c.off, c.len};
            shmq_hdr_t h = hdr(1, MT_REF, ep->fbox.tx[0].seq, sizeof d, T_HOSTILE);
            CHILD_CHECK(c.ring ? ring_post(ep, h, d) : box_post(ep, h, d));
            sentinel(ep, !c.ring);
            return 0;
        };
        EXPECT_EQ(run_attack(a), 0) << "ring " << c.ring << " offset " << c.off << " length " << c.len;
    }
}
