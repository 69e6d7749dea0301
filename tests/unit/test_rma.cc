// The rma layer on this host: attributes, a singleton job (self path, every
// bad input refused before anything is posted, regions), and forked jobs of
// 3 processes joined through a launcher hub (mapped peers, load/store through
// locus_rma_ptr, atomics from all, no /dev/shm name left once init returned,
// a failure on one process failing every process's init with its rank named).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <string>
#include <sys/mman.h>
#include <sys/time.h>
#include <csignal>
#include <vector>

#include "boot_procs.h"

extern "C" {
#include <locus/rma.h>
#include "rma/rma_internal.h"
}

using namespace boottest;

static bool has(const char *hay, const char *needle) { return std::strstr(hay, needle) != nullptr; }

// Shared-memory names of a job left in /dev/shm.
static int shm_names(const char *job)
{
    std::string prefix = "locus-" + std::to_string(getuid()) + "-" + job + "-";
    int n = 0;
    DIR *d = opendir("/dev/shm");
    for (dirent *e; d && (e = readdir(d));)
        n += !strncmp(e->d_name, prefix.c_str(), prefix.size());
    if (d)
        closedir(d);
    return n;
}

static void clear_env()
{
    for (const char *v : {"LOCUS_RMA_HEAP_SIZE", "LOCUS_RMA_REG", "LOCUS_RMA_ONNODE", "LOCUS_HEAP_PAGES",
                          "LOCUS_HEAP_POPULATE", "LOCUS_BOOT", "LOCUS_RANK", "LOCUS_SIZE"})
        unsetenv(v);
}

TEST(RmaAttr, DefaultsEnvironmentAndGarbage)
{
    clear_env();
    locus_rma_attr_t a;
    locus_rma_attr_init(&a);
    EXPECT_EQ(a.heap_size, 256ull << 20);
    EXPECT_EQ(a.reg, LOCUS_RMA_REG_CACHE);
    EXPECT_FALSE(a.nic_only);
    EXPECT_EQ(a.boot, nullptr);
    setenv("LOCUS_RMA_HEAP_SIZE", "32M", 1);
    setenv("LOCUS_RMA_REG", "none", 1);
    setenv("LOCUS_RMA_ONNODE", "nic", 1);
    ASSERT_EQ(locus_rma_attr_from_env(&a), LOCUS_OK) << locus_last_error();
    EXPECT_EQ(a.heap_size, 32ull << 20);
    EXPECT_EQ(a.reg, LOCUS_RMA_REG_NONE);
    EXPECT_TRUE(a.nic_only);
    locus_rma_attr_t before = a;
    setenv("LOCUS_RMA_REG", "sometimes", 1);
    EXPECT_EQ(locus_rma_attr_from_env(&a), LOCUS_ERR_INVALID);
    EXPECT_TRUE(has(locus_last_error(), "LOCUS_RMA_REG")) << locus_last_error();
    EXPECT_EQ(memcmp(&a, &before, sizeof a), 0) << "all or nothing";
    setenv("LOCUS_RMA_REG", "static", 1);
    setenv("LOCUS_HEAP_PAGES", "tiny", 1);
    EXPECT_EQ(locus_rma_attr_from_env(&a), LOCUS_ERR_INVALID);
    EXPECT_TRUE(has(locus_last_error(), "LOCUS_HEAP_PAGES")) << locus_last_error();
    EXPECT_EQ(a.reg, LOCUS_RMA_REG_NONE) << "a bad heap variable leaves the rma fields too";
    clear_env();
    a.heap_size = 100;
    locus_rma_t *r = reinterpret_cast<locus_rma_t *>(0x1);
    EXPECT_EQ(locus_rma_init(&a, &r), LOCUS_ERR_RANGE);
    EXPECT_TRUE(has(locus_last_error(), "heap_size 100")) << locus_last_error();
    EXPECT_EQ(r, reinterpret_cast<locus_rma_t *>(0x1));
    EXPECT_EQ(locus_rma_init(&a, nullptr), LOCUS_ERR_INVALID);
}

class RmaSolo : public ::testing::Test {
protected:
    void SetUp() override
    {
        clear_env();
        setenv("LOCUS_BOOT", "singleton", 1);
        locus_rma_attr_t a;
        locus_rma_attr_init(&a);
        a.heap_size = 8 << 20;
        ASSERT_EQ(locus_rma_init(&a, &r), LOCUS_OK) << locus_last_error();
        heap = static_cast<char *>(locus_rma_heap_base(r));
        size = locus_rma_heap_size(r);
    }
    void TearDown() override
    {
        if (r) {
            EXPECT_EQ(locus_rma_fini(r), LOCUS_OK) << locus_last_error();
        }
        clear_env();
    }
    locus_rma_t *r = nullptr;
    char *heap = nullptr;
    uint64_t size = 0;
};

TEST_F(RmaSolo, SelfPathPutGetAtomicsAndQueries)
{
    EXPECT_EQ(locus_rma_rank(r), 0);
    EXPECT_EQ(locus_rma_size(r), 1);
    EXPECT_GE(size, 8u << 20);
    EXPECT_TRUE(locus_rma_is_local(r, 0));
    EXPECT_FALSE(locus_rma_is_local(r, 1));
    EXPECT_TRUE(has(locus_rma_notes(r), "private")) << locus_rma_notes(r);
    EXPECT_EQ(locus_rma_ptr(r, 0, heap + 100), heap + 100);
    EXPECT_EQ(locus_rma_ptr(r, 1, heap), nullptr);
    EXPECT_EQ(locus_rma_ptr(r, 0, &size), nullptr) << "not symmetric";
    std::string msg(100000, 'x');
    for (size_t i = 0; i < msg.size(); i++)
        msg[i] = static_cast<char>(i * 7);
    ASSERT_EQ(locus_rma_put(r, 0, heap + 4096 + 3, msg.data(), msg.size()), LOCUS_OK);
    EXPECT_EQ(memcmp(heap + 4096 + 3, msg.data(), msg.size()), 0);
    std::string back(msg.size(), 0);
    ASSERT_EQ(locus_rma_get_nbi(r, 0, &back[0], heap + 4096 + 3, back.size()), LOCUS_OK);
    ASSERT_EQ(locus_rma_flush(r, 0), LOCUS_OK);
    EXPECT_EQ(back, msg);
    // a put to self over its own source moves like memmove
    ASSERT_EQ(locus_rma_put(r, 0, heap + 4096 + 10, heap + 4096 + 3, 1000), LOCUS_OK);
    EXPECT_EQ(memcmp(heap + 4096 + 10, msg.data(), 1000), 0);
    uint64_t *w = reinterpret_cast<uint64_t *>(heap + 64), old = 0;
    *w = 5;
    EXPECT_EQ(locus_rma_fetch_add(r, 0, w, 10, &old), LOCUS_OK);
    EXPECT_EQ(old, 5u);
    EXPECT_EQ(locus_rma_cswap(r, 0, w, 15, 99, &old), LOCUS_OK);
    EXPECT_EQ(old, 15u);
    EXPECT_EQ(locus_rma_cswap(r, 0, w, 15, 7, &old), LOCUS_OK);
    EXPECT_EQ(old, 99u);
    EXPECT_EQ(*w, 99u) << "a failed compare leaves the word";
    EXPECT_EQ(locus_rma_swap(r, 0, w, 1, &old), LOCUS_OK);
    EXPECT_EQ(old, 99u);
    EXPECT_EQ(locus_rma_amo(r, 0, LOCUS_RMA_AMO_ADD, reinterpret_cast<char *>(w) + 4, 4, 0xffffffffu, 0, &old),
              LOCUS_OK);
    EXPECT_EQ(old, 0u);
    EXPECT_EQ(*w, 0xffffffff00000001ull) << "the upper 32-bit half only";
    EXPECT_EQ(locus_rma_amo(r, 0, LOCUS_RMA_AMO_XOR, w, 8, 3, 0, nullptr), LOCUS_OK);
    EXPECT_EQ(locus_rma_amo(r, 0, LOCUS_RMA_AMO_FETCH, w, 8, 0, 0, &old), LOCUS_OK);
    EXPECT_EQ(old, 0xffffffff00000002ull);
    EXPECT_EQ(locus_rma_barrier(r), LOCUS_OK);
    EXPECT_EQ(locus_rma_fence(r), LOCUS_OK);
    EXPECT_EQ(locus_rma_progress(r), LOCUS_OK);
    locus_rma_stats_t s;
    ASSERT_EQ(locus_rma_stats(r, &s), LOCUS_OK);
    EXPECT_EQ(s.puts_local, 2u);
    EXPECT_EQ(s.gets_local, 1u);
    EXPECT_EQ(s.amos_cpu, 7u);
    EXPECT_EQ(s.puts_nic + s.gets_nic + s.amos_nic, 0u);
}

TEST_F(RmaSolo, BadInputIsRefusedBeforeAnythingIsPosted)
{
    char buf[64] = {0};
    uint64_t old;
    locus_rma_stats_t s0, s1;
    ASSERT_EQ(locus_rma_stats(r, &s0), LOCUS_OK);
    EXPECT_EQ(locus_rma_put(r, 1, heap, buf, 8), LOCUS_ERR_RANGE);
    EXPECT_TRUE(has(locus_last_error(), "rank 1 out of range: expected 0..0")) << locus_last_error();
    EXPECT_EQ(locus_rma_get(r, -3, buf, heap, 8), LOCUS_ERR_RANGE);
    EXPECT_EQ(locus_rma_put_nbi(r, 0, heap + size - 4, buf, 8), LOCUS_ERR_RANGE);
    EXPECT_TRUE(has(locus_last_error(), "runs past the end")) << locus_last_error();
    EXPECT_EQ(locus_rma_get(r, 0, buf, heap + size, 1), LOCUS_ERR_INVALID) << "one past the end is not symmetric";
    EXPECT_EQ(locus_rma_put(r, 0, buf, heap, 8), LOCUS_ERR_INVALID);
    EXPECT_TRUE(has(locus_last_error(), "not symmetric")) << locus_last_error();
    EXPECT_EQ(locus_rma_put(r, 0, heap, nullptr, 8), LOCUS_ERR_INVALID);
    EXPECT_EQ(locus_rma_put(r, 0, heap, nullptr, 0), LOCUS_OK) << "zero length: a no-op";
    EXPECT_EQ(locus_rma_get(r, 0, nullptr, nullptr, 0), LOCUS_OK);
    EXPECT_EQ(locus_rma_fetch_add(r, 0, reinterpret_cast<uint64_t *>(heap + 4), 1, &old), LOCUS_ERR_INVALID);
    EXPECT_TRUE(has(locus_last_error(), "not 8-byte aligned")) << locus_last_error();
    EXPECT_EQ(locus_rma_amo(r, 0, LOCUS_RMA_AMO_ADD, heap + 2, 4, 1, 0, nullptr), LOCUS_ERR_INVALID);
    EXPECT_EQ(locus_rma_amo(r, 0, LOCUS_RMA_AMO_ADD, heap, 3, 1, 0, nullptr), LOCUS_ERR_INVALID);
    EXPECT_TRUE(has(locus_last_error(), "expected 4 or 8")) << locus_last_error();
    EXPECT_EQ(locus_rma_amo(r, 0, static_cast<locus_rma_amo_op_t>(42), heap, 8, 1, 0, &old), LOCUS_ERR_INVALID);
    EXPECT_EQ(locus_rma_amo(r, 0, LOCUS_RMA_AMO_SWAP, heap, 8, 1, 0, nullptr), LOCUS_ERR_INVALID);
    EXPECT_TRUE(has(locus_last_error(), "fetched NULL")) << locus_last_error();
    EXPECT_EQ(locus_rma_cswap(r, 0, reinterpret_cast<uint64_t *>(heap + size - 4), 0, 1, &old),
              LOCUS_ERR_RANGE);
    EXPECT_EQ(locus_rma_flush(r, 5), LOCUS_ERR_RANGE);
    EXPECT_EQ(locus_rma_put(nullptr, 0, heap, buf, 8), LOCUS_ERR_INVALID);
    ASSERT_EQ(locus_rma_stats(r, &s1), LOCUS_OK);
    EXPECT_EQ(memcmp(&s0, &s1, sizeof s0), 0) << "a refused call changed the counters";
}

TEST_F(RmaSolo, AddedRegionsReachSelfWithAtomics)
{
    alignas(8) static char data[8192];
    int id = -1;
    ASSERT_EQ(locus_rma_region_add(r, data, sizeof data, &id), LOCUS_OK) << locus_last_error();
    EXPECT_EQ(id, 0);
    const char msg[] = "symmetric global";
    ASSERT_EQ(locus_rma_put(r, 0, data + 100, msg, sizeof msg), LOCUS_OK) << locus_last_error();
    EXPECT_STREQ(data + 100, msg);
    char back[sizeof msg];
    ASSERT_EQ(locus_rma_get(r, 0, back, data + 100, sizeof back), LOCUS_OK);
    EXPECT_STREQ(back, msg);
    EXPECT_EQ(locus_rma_ptr(r, 0, data + 5), data + 5);
    EXPECT_EQ(locus_rma_put(r, 0, data + 8190, msg, 4), LOCUS_ERR_RANGE);
    uint64_t old;
    // the process's own copy of a region: CPU atomics (other processes' copies
    // on this node have no mapping: tests/vm/rma_check.c's region test)
    uint64_t *w = reinterpret_cast<uint64_t *>(data + 64);
    *w = 41;
    ASSERT_EQ(locus_rma_fetch_add(r, 0, w, 1, &old), LOCUS_OK) << locus_last_error();
    EXPECT_EQ(old, 41u);
    EXPECT_EQ(*w, 42u);
    EXPECT_EQ(locus_rma_fetch_add(r, 0, reinterpret_cast<uint64_t *>(data + 68), 1, &old), LOCUS_ERR_INVALID)
        << "misaligned";
    EXPECT_EQ(locus_rma_region_add(r, nullptr, 8, &id), LOCUS_ERR_INVALID);
}

// ---------- forked jobs through a launcher hub ----------

namespace {

struct Job {
    locus_boot_hub_t *hub = nullptr;
    std::string addr, job;
    explicit Job(int n)
    {
        EXPECT_EQ(locus_boot_hub_create("127.0.0.1:0", n, nullptr, "test-rma", 20, &hub), LOCUS_OK);
        addr = std::string(locus_boot_hub_address(hub)).substr(4);
        job = locus_boot_hub_job(hub);
    }
    ~Job() { locus_boot_hub_destroy(hub); }
};

// Init (attr tweaked by `tweak` for this rank), then body; records the first failure.
int rank_main(const Job &j, int rank, int n, RankOut &o, const std::function<void(locus_rma_attr_t &)> &tweak,
              const std::function<int(locus_rma_t *)> &body)
{
    clear_env();
    locus_boot_t *b;
    auto ba = tcp_attr(j.addr, rank, n);
    locus_status_t st = locus_boot_init(&ba, &b);
    if (st) {
        record(o, st);
        return 2;
    }
    locus_rma_attr_t a;
    locus_rma_attr_init(&a);
    a.heap_size = 8 << 20;
    a.boot = b;
    if (tweak)
        tweak(a);
    locus_rma_t *r;
    if ((st = locus_rma_init(&a, &r))) {
        record(o, st);
        locus_boot_fini(b);
        return 3;
    }
    int rc = body(r);
    if ((st = locus_rma_fini(r)) && !rc) {
        record(o, st);
        rc = 4;
    }
    locus_boot_fini(b);
    return rc;
}

} // namespace

TEST(RmaJob, MappedPeersLoadStoreAtomicsAndNoNameLeft)
{
    const int n = 3;
    Shared s(n);
    Job j(n);
    auto codes = run_ranks(
        n,
        [&](int rank) {
            return rank_main(j, rank, n, s[rank], nullptr, [&](locus_rma_t *r) {
                RankOut &o = s[rank];
                if (shm_names(j.job.c_str()) != 0) // every name unlinked before init returned
                    return 10;
                char *heap = static_cast<char *>(locus_rma_heap_base(r));
                for (int q = 0; q < n; q++) {
                    if (!locus_rma_is_local(r, q))
                        return 11;
                    char *p = static_cast<char *>(locus_rma_ptr(r, q, heap + 1000 + 8 * rank));
                    if (!p || (q != rank && p == heap + 1000 + 8 * rank))
                        return 12;
                    *reinterpret_cast<uint64_t *>(p) = 1000u * (unsigned)rank + (unsigned)q; // a plain store
                }
                uint64_t *ctr = reinterpret_cast<uint64_t *>(heap + 64);
                for (int i = 0; i < 300; i++)
                    if (locus_rma_fetch_add(r, i % n, ctr, 1, nullptr) ||
                        locus_rma_amo(r, i % n, LOCUS_RMA_AMO_ADD, heap + 72, 4, 2, 0, nullptr))
                        return 13;
                if (locus_rma_barrier(r))
                    return 14;
                for (int q = 0; q < n; q++)
                    if (*reinterpret_cast<uint64_t *>(heap + 1000 + 8 * q) != 1000u * (unsigned)q + (unsigned)rank)
                        return 15;
                static uint64_t global[64]; // a "symmetric global": same length, its own address
                int id;
                if (locus_rma_region_add(r, global, sizeof global, &id))
                    return 17;
                uint64_t v = 77u + (unsigned)rank;
                if (locus_rma_put(r, (rank + 1) % n, &global[rank], &v, 8)) // CMA to the next rank
                    return 18;
                if (locus_rma_barrier(r) || global[(rank + n - 1) % n] != 77u + (unsigned)((rank + n - 1) % n))
                    return 19;
                uint64_t want = 300u / n * n;
                o.t_mark = (double)*ctr;
                return *ctr == want && *reinterpret_cast<uint32_t *>(heap + 72) == 2 * want ? 0 : 16;
            });
        },
        {}, j.hub);
    for (int r = 0; r < n; r++)
        EXPECT_EQ(codes[r], 0) << "rank " << r << ": " << s[r].msg << " (counter " << s[r].t_mark << ")";
    EXPECT_EQ(shm_names(j.job.c_str()), 0);
}

// Every process of an n-process job on one node finds its heap reserved by
// default (nothing faulted at init) and says so in its notes.
static void expect_reserved_by_default(int n, const char *note)
{
    Shared s(n);
    Job j(n);
    auto codes = run_ranks(
        n,
        [&](int rank) {
            return rank_main(j, rank, n, s[rank], nullptr, [&](locus_rma_t *r) {
                locus_heap_stats_t hs;
                if (locus_heap_stats(r->heap, &hs) || hs.populate != LOCUS_POPULATE_RESERVE)
                    return 10;
                if (hs.resident_bytes > (4u << 20)) // the control block's page at most
                    return 11;
                return has(locus_rma_notes(r), note) ? 0 : 12;
            });
        },
        {}, j.hub);
    for (int r = 0; r < n; r++)
        EXPECT_EQ(codes[r], 0) << "rank " << r << ": " << s[r].msg << " (10: not reserve, 11: faulted in, 12: notes)";
}

// The symmetric heap of a job on one node (shared with the node's processes)
// is reserved by default: allocated at init, zeroed at its first touch.
TEST(RmaJob, SharedHeapIsReservedByDefault) { expect_reserved_by_default(2, "heap populate: reserve (allocated"); }

// A job of one process: nobody maps or registers its private heap, so it is
// reserved too, where it used to be faulted in whole (a 1-PE OpenSHMEM no-op
// with a 4 GiB heap took 0.12 s warm, 4.4 s cold).
TEST(RmaJob, LoneProcessHeapIsReservedByDefault)
{
    expect_reserved_by_default(1, "heap populate: reserve (private");
}

// One process cannot have its heap: every process's init fails naming it,
// nothing is left.
TEST(RmaJob, OneFailingHeapFailsEveryInitNamingTheRank)
{
    const int n = 3;
    Shared s(n);
    Job j(n);
    auto codes = run_ranks(
        n,
        [&](int rank) {
            return rank_main(
                j, rank, n, s[rank],
                [&](locus_rma_attr_t &a) {
                    if (rank == 1)
                        a.heap.pages = LOCUS_PAGES_HUGE1G; // no 1 GiB pool here
                },
                [](locus_rma_t *) { return 0; });
        },
        {}, j.hub);
    for (int r = 0; r < n; r++) {
        EXPECT_EQ(codes[r], 3) << "rank " << r << ": " << s[r].msg;
        EXPECT_TRUE(has(s[r].msg, "rank 1: pages huge1g")) << s[r].msg;
    }
    EXPECT_EQ(shm_names(j.job.c_str()), 0);
}

TEST(RmaJob, DifferentHeapSizesAreRefused)
{
    const int n = 2;
    Shared s(n);
    Job j(n);
    auto codes = run_ranks(
        n,
        [&](int rank) {
            return rank_main(
                j, rank, n, s[rank], [&](locus_rma_attr_t &a) { a.heap_size = rank ? 16 << 20 : 8 << 20; },
                [](locus_rma_t *) { return 0; });
        },
        {}, j.hub);
    for (int r = 0; r < n; r++) {
        EXPECT_EQ(codes[r], 3) << "rank " << r << ": " << s[r].msg;
        EXPECT_TRUE(has(s[r].msg, "LOCUS_RMA_HEAP_SIZE must be the same everywhere")) << s[r].msg;
    }
    EXPECT_EQ(shm_names(j.job.c_str()), 0);
}

// A process of the node that dies while another waits in a barrier: the
// waiter fails within 2 s, naming it.
TEST(RmaJob, DeadPeerEndsABarrierWithinTwoSeconds)
{
    const int n = 2;
    Shared s(n);
    Job j(n);
    auto codes = run_ranks(
        n,
        [&](int rank) {
            return rank_main(j, rank, n, s[rank], nullptr, [&](locus_rma_t *r) {
                if (locus_rma_barrier(r))
                    return 20;
                if (rank == 1) {
                    usleep(200000);
                    _exit(0);
                }
                double t0 = lc_now_s();
                locus_status_t st = locus_rma_barrier(r);
                record(s[rank], st);
                s[rank].t_mark = lc_now_s() - t0;
                return st == LOCUS_ERR_PEER_FAILED ? 0 : 21;
            });
        },
        {}, j.hub);
    EXPECT_EQ(codes[1], 0);
    EXPECT_TRUE(codes[0] == 0 || codes[0] == 4) << s[0].msg; // fini reports the failure too
    EXPECT_TRUE(has(s[0].msg, "rank 1")) << s[0].msg;
    EXPECT_LT(s[0].t_mark, 2.0);
    EXPECT_EQ(shm_names(j.job.c_str()), 0);
}

// ---------- shared copies (LOCUS_RMA_HELP) ----------

namespace {

unsigned char pattern(unsigned seed, size_t i) { return (unsigned char)((seed * 2654435761u + i * 40503u) >> 9); }

struct Piece {
    size_t src, dst, len;
};

// Rounds of large _nbi puts from rank 0's heap into rank 1's heap (random
// sizes 256 KiB-4 MiB at unaligned offsets) while rank 1 waits in the
// barrier; rank 1 checks every byte after it. Returns 0, or a code.
int shared_puts_round(locus_rma_t *r, int rank, unsigned seed, std::vector<Piece> &pieces)
{
    char *heap = static_cast<char *>(locus_rma_heap_base(r));
    unsigned x = seed * 7919u + 1;
    auto rnd = [&x] { return x = x * 1103515245u + 12345u, x >> 8; };
    pieces.clear();
    size_t at = 0;
    for (int i = 0; i < 8; i++) { // destinations in [0, 24 MiB), sources in [24, 48 MiB)
        size_t len = (256u << 10) + rnd() % (3840u << 10), skip = rnd() % 4096;
        if (at + skip + len > (24u << 20))
            break;
        pieces.push_back({(24u << 20) + at + skip, at + skip, len});
        at += skip + len;
    }
    if (rank == 0) {
        for (const Piece &p : pieces)
            for (size_t i = 0; i < p.len; i++)
                heap[p.src + i] = (char)pattern(seed, p.src + i);
        for (const Piece &p : pieces)
            if (locus_rma_put_nbi(r, 1, heap + p.dst, heap + p.src, p.len))
                return 30;
    }
    if (locus_rma_barrier(r))
        return 31;
    if (rank == 1)
        for (const Piece &p : pieces)
            for (size_t i = 0; i < p.len; i++)
                if ((unsigned char)heap[p.dst + i] != pattern(seed, p.src + i))
                    return 32;
    return locus_rma_barrier(r) ? 33 : 0;
}

} // namespace

// A peer that waits in a barrier copies pieces of the large puts posted to
// the node; every byte arrives; with LOCUS_RMA_HELP 0 nobody shares.
TEST(RmaHelp, LargePutsAreSharedWithAWaitingPeerAndArriveIntact)
{
    for (uint64_t help : {uint64_t(256) << 10, uint64_t(0)}) {
        const int n = 2;
        Shared s(n);
        Job j(n);
        auto codes = run_ranks(
            n,
            [&](int rank) {
                return rank_main(
                    j, rank, n, s[rank],
                    [&](locus_rma_attr_t &a) {
                        a.heap_size = 48 << 20;
                        a.help_min = help;
                    },
                    [&](locus_rma_t *r) {
                        std::vector<Piece> pieces;
                        locus_rma_stats_t st{};
                        for (unsigned round = 1; round <= 30; round++) {
                            int rc = shared_puts_round(r, rank, round, pieces);
                            if (rc)
                                return rc;
                            locus_rma_stats(r, &st);
                            // keep going until both sides saw a shared copy (or 30 rounds)
                            uint64_t seen = rank == 0 ? st.puts_helped : st.help_pieces, all[2];
                            if (locus_boot_allgather(locus_rma_boot(r), &seen, sizeof seen, all))
                                return 34;
                            if (help && all[0] && all[1] && round >= 3)
                                break;
                        }
                        s[rank].t_mark = (double)(rank == 0 ? st.puts_helped : st.help_pieces);
                        return 0;
                    });
            },
            {}, j.hub);
        for (int r = 0; r < n; r++)
            EXPECT_EQ(codes[r], 0) << "help " << help << ", rank " << r << ": " << s[r].msg;
        if (help) {
            EXPECT_GT(s[0].t_mark, 0) << "rank 0 never had a put shared";
            EXPECT_GT(s[1].t_mark, 0) << "rank 1 never copied a piece while it waited";
        } else {
            EXPECT_EQ(s[0].t_mark, 0);
            EXPECT_EQ(s[1].t_mark, 0);
        }
        EXPECT_EQ(shm_names(j.job.c_str()), 0);
    }
}

// A shared _nbi put still posted and a later small put over part of it: the
// later one wins (puts to a process stay in program order).
TEST(RmaHelp, PutsToAProcessStayInOrder)
{
    const int n = 2;
    Shared s(n);
    Job j(n);
    auto codes = run_ranks(
        n,
        [&](int rank) {
            return rank_main(
                j, rank, n, s[rank], [](locus_rma_attr_t &a) { a.heap_size = 16 << 20; },
                [&](locus_rma_t *r) {
                    char *heap = static_cast<char *>(locus_rma_heap_base(r));
                    const size_t len = 4u << 20;
                    if (rank == 0) {
                        memset(heap + (8u << 20), 0xaa, len);
                        uint64_t late = 0xbbbbbbbbbbbbbbbbull;
                        if (locus_rma_put_nbi(r, 1, heap, heap + (8u << 20), len) ||
                            locus_rma_put(r, 1, heap + 1000, &late, 8) ||
                            locus_rma_amo(r, 1, LOCUS_RMA_AMO_SET, heap + 2048, 8, 0xcc, 0, nullptr))
                            return 40;
                    }
                    if (locus_rma_barrier(r))
                        return 41;
                    if (rank == 1) {
                        for (size_t i = 0; i < len; i++) {
                            unsigned char want = i >= 1000 && i < 1008 ? 0xbb : i == 2048 ? 0xcc : i > 2048 && i < 2056 ? 0 : 0xaa;
                            if ((unsigned char)heap[i] != want)
                                return 42;
                        }
                    }
                    return 0;
                });
        },
        {}, j.hub);
    for (int r = 0; r < n; r++)
        EXPECT_EQ(codes[r], 0) << "rank " << r << ": " << s[r].msg;
}

// A peer of the node takes a piece of a shared put and dies before copying
// it: the owner's flush returns within 2 s with every byte there (it copies
// again what the dead peer held), and the failure is named.
TEST(RmaHelp, APeerThatDiesHoldingAPieceDoesNotHoldTheOwner)
{
    const int n = 2;
    Shared s(n);
    Job j(n);
    auto codes = run_ranks(
        n,
        [&](int rank) {
            return rank_main(
                j, rank, n, s[rank], [](locus_rma_attr_t &a) { a.heap_size = 48 << 20; },
                [&](locus_rma_t *r) {
                    char *heap = static_cast<char *>(locus_rma_heap_base(r));
                    volatile uint64_t *taken = reinterpret_cast<uint64_t *>(heap + (47u << 20));
                    const size_t len = 4u << 20;
                    if (locus_rma_barrier(r))
                        return 50;
                    if (rank == 1) {
                        int k;
                        uint64_t piece;
                        while (!rma_help_take(r, 0, &k, &piece))
                            ;
                        // tell rank 0, then die holding the piece
                        *static_cast<volatile uint64_t *>(locus_rma_ptr(r, 0, (void *)taken)) = 1 + piece;
                        _exit(0);
                    }
                    for (size_t i = 0; i < len; i++)
                        heap[(24u << 20) + i] = (char)(i / 4093);
                    if (locus_rma_put_nbi(r, 1, heap, heap + (24u << 20), len))
                        return 51;
                    while (!*taken)
                        ;
                    double t0 = lc_now_s();
                    locus_status_t st = locus_rma_flush_all(r);
                    s[rank].t_mark = lc_now_s() - t0;
                    record(s[rank], st);
                    const char *peer = static_cast<char *>(locus_rma_ptr(r, 1, heap));
                    for (size_t i = 0; i < len; i++)
                        if (peer[i] != (char)(i / 4093))
                            return 52;
                    return st == LOCUS_ERR_PEER_FAILED ? 0 : 53;
                });
        },
        {}, j.hub);
    EXPECT_EQ(codes[1], 0);
    EXPECT_TRUE(codes[0] == 0 || codes[0] == 4) << "rank 0: code " << codes[0] << ": " << s[0].msg;
    EXPECT_TRUE(has(s[0].msg, "rank 1")) << s[0].msg;
    EXPECT_LT(s[0].t_mark, 2.0);
    EXPECT_EQ(shm_names(j.job.c_str()), 0);
}
