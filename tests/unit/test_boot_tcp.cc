// boot over the tcp rendezvous, forked processes on 127.0.0.1: a hub served
// by rank 0 or by this test acting as the launcher. Exchanges of several
// sizes, and every way a job can go wrong: a rank dies mid-collective, the
// hub's rank dies, a rank never arrives, nobody serves, lengths differ, a
// rank leaves early, an abort, a stranger at the port.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "boot_procs.h"

using namespace boottest;

namespace {

bool has_text(const char *text, const char *part) { return strstr(text, part) != nullptr; }

std::string addr_rank0() { return "127.0.0.1:" + std::to_string(free_port()); }

// Byte k of rank r's blob in round i.
unsigned char pattern(int r, int i, size_t k) { return (unsigned char)(r * 131 + i * 17 + k * 7 + (k >> 8)); }

// 100 rounds of allgather (lengths 0, 1, 7, 4 KiB, 64 KiB, 13) and barriers.
int exchange_rounds(locus_boot_t *b, RankOut &o)
{
    static const size_t lens[] = {0, 1, 7, 4096, 65536, 13};
    int n = locus_boot_size(b), me = locus_boot_rank(b);
    std::vector<unsigned char> mine(65536), all(65536 * (size_t)n);
    for (int i = 0; i < 100; i++) {
        size_t len = lens[i % 6];
        for (size_t k = 0; k < len; k++)
            mine[k] = pattern(me, i, k);
        locus_status_t st = locus_boot_allgather(b, mine.data(), len, all.data());
        if (!st && i % 3 == 0)
            st = locus_boot_barrier(b);
        if (st) {
            record(o, st);
            return 2;
        }
        for (int r = 0; r < n; r++)
            for (size_t k = 0; k < len; k++)
                if (all[(size_t)r * len + k] != pattern(r, i, k)) {
                    snprintf(o.msg, sizeof o.msg, "round %d: byte %zu of rank %d wrong", i, k, r);
                    return 3;
                }
    }
    return 0;
}

int join_and_exchange(const locus_boot_attr_t &a, RankOut &o)
{
    locus_boot_t *b;
    locus_status_t st = locus_boot_init(&a, &b);
    if (st) {
        record(o, st);
        return 1;
    }
    record_ids(o, b);
    int rc = exchange_rounds(b, o);
    if (!rc && (st = locus_boot_fini(b))) {
        record(o, st);
        return 4;
    }
    return rc;
}

void expect_consistent(Shared &s, int n, const char *source)
{
    for (int r = 0; r < n; r++) {
        EXPECT_EQ(s[r].rank, r);
        EXPECT_EQ(s[r].size, n);
        EXPECT_STREQ(s[r].source, source);
        EXPECT_STREQ(s[r].job, s[0].job) << "rank " << r;
        EXPECT_GT(strlen(s[r].job), 0u);
        // one host: one node, local rank = rank
        EXPECT_EQ(s[r].node, 0);
        EXPECT_EQ(s[r].num_nodes, 1);
        EXPECT_EQ(s[r].local_rank, r);
        EXPECT_EQ(s[r].local_size, n);
    }
}

} // namespace

TEST(BootTcp, Rank0HubAllgathersHundredRoundsOfMixedSizes)
{
    const int n = 4;
    Shared s(n);
    std::string addr = addr_rank0();
    auto codes = run_ranks(n, [&](int r) { return join_and_exchange(tcp_attr(addr, r, n), s[r]); });
    for (int r = 0; r < n; r++)
        EXPECT_EQ(codes[r], 0) << "rank " << r << ": " << s[r].msg;
    expect_consistent(s, n, "tcp");
}

TEST(BootTcp, LauncherHubServesTheJobAndNamesIt)
{
    const int n = 3;
    Shared s(n);
    locus_boot_hub_t *hub;
    ASSERT_EQ(locus_boot_hub_create("127.0.0.1:0", n, "unit-job.1", "test-launcher", 10, &hub),
              LOCUS_OK) << locus_last_error();
    std::string value = locus_boot_hub_address(hub);
    ASSERT_EQ(value.rfind("tcp:127.0.0.1:", 0), 0u) << value;
    EXPECT_STREQ(locus_boot_hub_job(hub), "unit-job.1");
    std::string addr = value.substr(4);
    auto codes = run_ranks(n, [&](int r) { return join_and_exchange(tcp_attr(addr, r, n), s[r]); },
                           {}, hub);
    locus_boot_hub_destroy(hub);
    for (int r = 0; r < n; r++)
        EXPECT_EQ(codes[r], 0) << "rank " << r << ": " << s[r].msg;
    expect_consistent(s, n, "test-launcher");
    EXPECT_STREQ(s[0].job, "unit-job.1");
}

TEST(BootTcp, EnvironmentSelectsTcpWithLocusRankAndSize)
{
    const int n = 2;
    Shared s(n);
    std::string addr = addr_rank0();
    auto codes = run_ranks(n, [&](int r) {
        setenv("LOCUS_BOOT", ("tcp:" + addr).c_str(), 1);
        setenv("LOCUS_RANK", std::to_string(r).c_str(), 1);
        setenv("LOCUS_SIZE", std::to_string(n).c_str(), 1);
        locus_boot_t *b;
        locus_status_t st = locus_boot_init(nullptr, &b);
        if (st) {
            record(s[r], st);
            return 1;
        }
        record_ids(s[r], b);
        return (int)locus_boot_barrier(b) | (int)locus_boot_fini(b);
    });
    for (int r = 0; r < n; r++)
        EXPECT_EQ(codes[r], 0) << "rank " << r << ": " << s[r].msg;
    EXPECT_STREQ(s[1].source, "tcp");
    EXPECT_EQ(s[1].rank, 1);
}

// A rank that dies while the others sit in a barrier: they fail, naming it.
static void rank_dies(bool launcher, int victim, const char *expect)
{
    const int n = 4;
    Shared s(n);
    locus_boot_hub_t *hub = nullptr;
    std::string addr = addr_rank0();
    if (launcher) {
        ASSERT_EQ(locus_boot_hub_create("127.0.0.1:0", n, nullptr, "test-launcher", 10, &hub),
                  LOCUS_OK);
        addr = std::string(locus_boot_hub_address(hub)).substr(4);
    }
    auto codes = run_ranks(n, [&](int r) {
        locus_boot_t *b;
        auto a = tcp_attr(addr, r, n);
        if (locus_boot_init(&a, &b) || locus_boot_barrier(b))
            return 1;
        if (r == victim) {
            usleep(200000); // the others are in the barrier by now
            s[r].t_mark = lc_now_s();
            _exit(3);
        }
        locus_status_t st = locus_boot_barrier(b);
        record(s[r], st);
        // later collectives fail too, at once
        locus_status_t again = locus_boot_allgather(b, &r, sizeof r, s[r].msg + 400);
        return st == LOCUS_ERR_PEER_FAILED && again == LOCUS_ERR_PEER_FAILED ? 0 : 2;
    }, {}, hub);
    locus_boot_hub_destroy(hub);
    EXPECT_EQ(codes[victim], 3);
    for (int r = 0; r < n; r++) {
        if (r == victim || (victim == 0 && !launcher && codes[r] == 0 && s[r].t_err == 0))
            continue;
        EXPECT_EQ(codes[r], 0) << "rank " << r << " status " << s[r].st << ": " << s[r].msg;
        EXPECT_NE(std::string(s[r].msg).find(expect), std::string::npos) << s[r].msg;
        EXPECT_LT(s[r].t_err - s[victim].t_mark, 2.0) << "rank " << r << " noticed late";
    }
}

TEST(BootTcp, RankDyingMidCollectiveFailsTheOthersNamingIt_Rank0Hub)
{
    rank_dies(false, 2, "rank 2 disconnected");
}

TEST(BootTcp, RankDyingMidCollectiveFailsTheOthersNamingIt_LauncherHub)
{
    rank_dies(true, 2, "rank 2 exited with status 3");
}

TEST(BootTcp, LauncherReportsARankThatNeverJoined)
{
    const int n = 3;
    Shared s(n);
    locus_boot_hub_t *hub;
    ASSERT_EQ(locus_boot_hub_create("127.0.0.1:0", n, nullptr, "test-launcher", 20, &hub), LOCUS_OK);
    std::string addr = std::string(locus_boot_hub_address(hub)).substr(4);
    double t0 = lc_now_s();
    auto codes = run_ranks(n, [&](int r) {
        if (r == 2)
            return 127; // as if exec had failed
        locus_boot_t *b;
        auto a = tcp_attr(addr, r, n, 20);
        locus_status_t st = locus_boot_init(&a, &b);
        record(s[r], st);
        return st == LOCUS_ERR_PEER_FAILED ? 0 : 1;
    }, {}, hub);
    locus_boot_hub_destroy(hub);
    for (int r = 0; r < 2; r++) {
        EXPECT_EQ(codes[r], 0) << s[r].msg;
        EXPECT_TRUE(has_text(s[r].msg, "rank 2 exited with status 127 before joining the job"))
            << s[r].msg;
    }
    EXPECT_LT(lc_now_s() - t0, 5.0); // not the 20 s timeout
}

TEST(BootTcp, HubRankDyingFailsTheOthersNamingRank0)
{
    rank_dies(false, 0, "rank 0");
}

TEST(BootTcp, TimeoutWhenARankNeverArrivesNamesAddressAndCount)
{
    const int n = 3;
    Shared s(n);
    std::string addr = addr_rank0();
    double t0 = lc_now_s();
    auto codes = run_ranks(n, [&](int r) {
        locus_boot_t *b;
        auto a = tcp_attr(addr, r, n, 1.0);
        locus_status_t st = locus_boot_init(&a, &b);
        record(s[r], st);
        return st == LOCUS_ERR_TIMEOUT ? 0 : 1;
    }, {0, 1});
    double took = lc_now_s() - t0;
    for (int r = 0; r < 2; r++) {
        EXPECT_EQ(codes[r], 0) << "rank " << r << " status " << s[r].st << ": " << s[r].msg;
        std::string m = s[r].msg;
        EXPECT_NE(m.find("tcp:" + addr), std::string::npos) << m;
        EXPECT_NE(m.find("2 of 3 ranks arrived"), std::string::npos) << m;
        EXPECT_NE(m.find("missing: 2"), std::string::npos) << m;
    }
    EXPECT_LT(took, 6.0);
}

TEST(BootTcp, NoHubAtTheAddressTimesOutSayingWhoServesIt)
{
    Shared s(2);
    std::string addr = addr_rank0();
    auto codes = run_ranks(2, [&](int r) {
        locus_boot_t *b;
        auto a = tcp_attr(addr, r, 2, 0.5);
        locus_status_t st = locus_boot_init(&a, &b);
        record(s[r], st);
        return st == LOCUS_ERR_TIMEOUT ? 0 : 1;
    }, {1});
    EXPECT_EQ(codes[1], 0) << s[1].msg;
    std::string m = s[1].msg;
    EXPECT_NE(m.find("tcp:" + addr + ": no rendezvous hub answered within 0.5 s"), std::string::npos)
        << m;
    EXPECT_NE(m.find("rank 0"), std::string::npos) << m;
}

TEST(BootTcp, DifferentLengthsFailEveryRankNamingThem)
{
    const int n = 3;
    Shared s(n);
    std::string addr = addr_rank0();
    auto codes = run_ranks(n, [&](int r) {
        locus_boot_t *b;
        auto a = tcp_attr(addr, r, n);
        if (locus_boot_init(&a, &b))
            return 1;
        char mine[16] = {}, all[64];
        locus_status_t st = locus_boot_allgather(b, mine, r == 1 ? 16 : 8, all);
        record(s[r], st);
        locus_boot_fini(b);
        return st == LOCUS_ERR_PEER_FAILED ? 0 : 2;
    });
    for (int r = 0; r < n; r++) {
        EXPECT_EQ(codes[r], 0) << "rank " << r << ": " << s[r].msg;
        EXPECT_NE(std::string(s[r].msg).find("same length"), std::string::npos) << s[r].msg;
        std::string m = s[r].msg; // "rank A passed X bytes, rank B Y bytes", in arrival order
        EXPECT_TRUE(m.find("rank 1 passed 16 bytes") != std::string::npos ||
                    m.find("rank 1 16 bytes") != std::string::npos) << m;
    }
}

TEST(BootTcp, RankLeavingEarlyFailsTheOthersCollective)
{
    const int n = 3;
    Shared s(n);
    std::string addr = addr_rank0();
    auto codes = run_ranks(n, [&](int r) {
        locus_boot_t *b;
        auto a = tcp_attr(addr, r, n);
        if (locus_boot_init(&a, &b))
            return 1;
        if (r == 2)
            return (int)locus_boot_fini(b);
        locus_status_t st = locus_boot_barrier(b);
        record(s[r], st);
        locus_boot_fini(b);
        return st == LOCUS_ERR_PEER_FAILED ? 0 : 2;
    });
    for (int r = 0; r < n; r++)
        EXPECT_EQ(codes[r], 0) << "rank " << r << ": " << s[r].msg;
    EXPECT_NE(std::string(s[0].msg).find("rank 2 left the job"), std::string::npos) << s[0].msg;
}

static void abort_case(bool launcher)
{
    const int n = 3;
    locus_boot_hub_t *hub = nullptr;
    std::string addr = addr_rank0();
    if (launcher) {
        ASSERT_EQ(locus_boot_hub_create("127.0.0.1:0", n, nullptr, "test-launcher", 10, &hub),
                  LOCUS_OK);
        addr = std::string(locus_boot_hub_address(hub)).substr(4);
    }
    double t0 = lc_now_s();
    auto codes = run_ranks(n, [&](int r) {
        locus_boot_t *b;
        auto a = tcp_attr(addr, r, n);
        if (locus_boot_init(&a, &b) || locus_boot_barrier(b))
            return 1;
        if (r == 1)
            locus_boot_abort(b, 9, "unit test abort");
        if (r == 0)
            locus_boot_barrier(b); // blocked in a collective
        else
            sleep(20); // busy elsewhere
        return 2;
    }, {}, hub);
    EXPECT_LT(lc_now_s() - t0, 10.0);
    for (int r = 0; r < n; r++)
        EXPECT_EQ(codes[r], 9) << "rank " << r;
    if (launcher) {
        int rank = -1, status = -1;
        char msg[64];
        EXPECT_TRUE(locus_boot_hub_aborted(hub, &rank, &status, msg, sizeof msg));
        EXPECT_EQ(rank, 1);
        EXPECT_EQ(status, 9);
        EXPECT_STREQ(msg, "unit test abort");
        locus_boot_hub_destroy(hub);
    }
}

TEST(BootTcp, AbortEndsEveryProcessWithItsStatus_Rank0Hub) { abort_case(false); }
TEST(BootTcp, AbortEndsEveryProcessWithItsStatus_LauncherHub) { abort_case(true); }

TEST(BootTcp, HubRefusesWrongSizeAndDuplicateRank)
{
    locus_boot_hub_t *hub;
    ASSERT_EQ(locus_boot_hub_create("127.0.0.1:0", 2, nullptr, "test-launcher", 1.5, &hub), LOCUS_OK);
    std::string addr = std::string(locus_boot_hub_address(hub)).substr(4);
    Shared s(3);
    // slot 0: a process saying size 3; slots 1 and 2: two processes claiming rank 1
    auto codes = run_ranks(3, [&](int slot) {
        locus_boot_t *b;
        auto a = tcp_attr(addr, slot == 0 ? 0 : 1, slot == 0 ? 3 : 2, 2.0);
        if (slot == 2)
            usleep(300000); // the other rank 1 is in first
        locus_status_t st = locus_boot_init(&a, &b);
        record(s[slot], st);
        return st == LOCUS_OK ? 0 : 1;
    });
    locus_boot_hub_destroy(hub);
    EXPECT_EQ(codes[0], 1);
    EXPECT_NE(std::string(s[0].msg).find("serves a job of 2 processes; this process says size 3"),
              std::string::npos) << s[0].msg;
    EXPECT_EQ(codes[2], 1);
    EXPECT_NE(std::string(s[2].msg).find("rank 1 already joined"), std::string::npos) << s[2].msg;
    EXPECT_EQ(codes[1], 1); // rank 0 never came: the hub's timeout
    EXPECT_NE(std::string(s[1].msg).find("1 of 2 ranks arrived"), std::string::npos) << s[1].msg;
}

TEST(BootTcp, HubArgumentsAreChecked)
{
    locus_boot_hub_t *hub = nullptr;
    EXPECT_EQ(locus_boot_hub_create("127.0.0.1:0", 2, nullptr, "Bad Name", 1, &hub), LOCUS_ERR_INVALID);
    EXPECT_NE(std::string(locus_last_error()).find("[a-z0-9-]"), std::string::npos);
    EXPECT_EQ(locus_boot_hub_create("127.0.0.1:0", 2, "bad/job", "x", 1, &hub), LOCUS_ERR_INVALID);
    EXPECT_NE(std::string(locus_last_error()).find("bad/job"), std::string::npos);
    EXPECT_EQ(locus_boot_hub_create("127.0.0.1", 2, nullptr, "x", 1, &hub), LOCUS_ERR_INVALID);
    EXPECT_NE(std::string(locus_last_error()).find("HOST:PORT"), std::string::npos);
    EXPECT_EQ(locus_boot_hub_create("127.0.0.1:0", 0, nullptr, "x", 1, &hub), LOCUS_ERR_INVALID);
    EXPECT_EQ(hub, nullptr);
    locus_boot_hub_destroy(nullptr);
    locus_boot_hub_exited(nullptr, 0, 0);
    EXPECT_FALSE(locus_boot_hub_aborted(nullptr, nullptr, nullptr, nullptr, 0));
}

TEST(BootTcp, Rank0CannotServeAnAddressThatIsNotItsOwn)
{
    // 192.0.2.0/24 is TEST-NET-1: never an address of this host
    auto a = tcp_attr("192.0.2.1:4000", 0, 2, 0.3);
    locus_boot_t *b;
    EXPECT_NE(locus_boot_init(&a, &b), LOCUS_OK);
    EXPECT_NE(std::string(locus_last_error()).find("rank 0 serves the rendezvous hub"),
              std::string::npos) << locus_last_error();
}
