// rdma: attributes and tunables, the timeout arithmetic, GID choice (pure and
// from a fake sysfs tree), the address blob; with a device (Soft-RoCE in the
// locus-vm guest: vm_rdma_unit) md/iface/ep over a loopback pair. Without a
// device the device tests skip with the reason.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include <arpa/inet.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <infiniband/verbs.h>
extern "C" {
#include "rdma/rdma_internal.h"
}

namespace {

const char *VARS[] = {"DEVICE", "PORT", "GID_INDEX", "MTU", "SQ_DEPTH", "CQ_DEPTH", "SIGNAL", "INLINE",
                      "BOUNCE_SIZE", "BOUNCE_COUNT", "TIMEOUT", "RETRY", "RD_ATOMIC", "STALL"};

struct CleanEnv : ::testing::Test {
    void SetUp() override
    {
        for (const char *v : VARS)
            unsetenv((std::string("LOCUS_RDMA_") + v).c_str());
    }
    void TearDown() override { SetUp(); }
};

using RdmaAttr = CleanEnv;

TEST_F(RdmaAttr, DefaultsPassTheirOwnCheckAndDetectADeadPeerWithinTwoSeconds)
{
    rdma_attr_t a;
    rdma_attr_init(&a);
    EXPECT_EQ(rdma_attr_check(&a), LOCUS_OK) << locus_last_error();
    EXPECT_EQ(a.device, nullptr);
    EXPECT_EQ(a.gid_index, -1) << "the GID must be chosen by type, never a fixed index";
    EXPECT_LT(a.retry, 7) << "Soft-RoCE retries forever with 7";
    // nominal and at the IBA's upper bound (hardware may wait 4x per try)
    EXPECT_LE(rdma_detect_ns(a.timeout, a.retry), 2000000000ull);
    EXPECT_LE(4 * rdma_detect_ns(a.timeout, a.retry), 2000000000ull);
    EXPECT_GE(a.signal_every, 1);
    EXPECT_LE(a.signal_every, a.sq_depth / 2);
}

TEST(RdmaDetect, FollowsTheIbaFormula)
{
    // (retry + 1) tries of 4.096 us * 2^timeout
    EXPECT_EQ(rdma_detect_ns(14, 6), 7ull * 4096 * 16384);
    EXPECT_EQ(rdma_detect_ns(1, 0), 8192ull);
    EXPECT_EQ(rdma_detect_ns(31, 6), 7ull * (4096ull << 31));
    EXPECT_EQ(rdma_detect_ns(32, 1), 0ull);
    EXPECT_GT(rdma_detect_ns(15, 6), rdma_detect_ns(14, 6));
}

TEST_F(RdmaAttr, EnvironmentOverridesAndBadValuesNameTheVariable)
{
    rdma_attr_t a;
    rdma_attr_init(&a);
    setenv("LOCUS_RDMA_DEVICE", "mlx5_3", 1);
    setenv("LOCUS_RDMA_MTU", "1024", 1);
    setenv("LOCUS_RDMA_TIMEOUT", "12", 1);
    setenv("LOCUS_RDMA_BOUNCE_SIZE", "16K", 1);
    ASSERT_EQ(rdma_attr_from_env(&a), LOCUS_OK) << locus_last_error();
    EXPECT_STREQ(a.device, "mlx5_3");
    EXPECT_EQ(a.mtu, (int)IBV_MTU_1024);
    EXPECT_EQ(a.timeout, 12);
    EXPECT_EQ(a.bounce_size, 16384u);

    rdma_attr_t b = a;
    setenv("LOCUS_RDMA_RETRY", "7", 1);
    EXPECT_NE(rdma_attr_from_env(&b), LOCUS_OK);
    EXPECT_NE(std::string(locus_last_error()).find("LOCUS_RDMA_RETRY"), std::string::npos) << locus_last_error();
    EXPECT_EQ(memcmp(&a, &b, sizeof a), 0) << "a bad variable must leave the attributes as they were";
    setenv("LOCUS_RDMA_RETRY", "3", 1);
    setenv("LOCUS_RDMA_MTU", "9000", 1);
    EXPECT_EQ(rdma_attr_from_env(&b), LOCUS_ERR_INVALID);
    EXPECT_NE(std::string(locus_last_error()).find("LOCUS_RDMA_MTU"), std::string::npos) << locus_last_error();
}

TEST(RdmaAttrCheck, NamesTheBadField)
{
    rdma_attr_t a;
    rdma_attr_init(&a);
    a.sq_depth = 4;
    EXPECT_EQ(rdma_attr_check(&a), LOCUS_ERR_RANGE);
    EXPECT_NE(std::string(locus_last_error()).find("sq_depth"), std::string::npos) << locus_last_error();
    rdma_attr_init(&a);
    a.retry = 7;
    EXPECT_EQ(rdma_attr_check(&a), LOCUS_ERR_RANGE);
    EXPECT_NE(std::string(locus_last_error()).find("retry"), std::string::npos);
    rdma_attr_init(&a);
    a.stall_s = 0;
    EXPECT_EQ(rdma_attr_check(&a), LOCUS_ERR_RANGE);
    EXPECT_EQ(rdma_attr_check(nullptr), LOCUS_ERR_INVALID);
    rdma_md_t *md = reinterpret_cast<rdma_md_t *>(1);
    a.stall_s = 0;
    EXPECT_EQ(rdma_md_open(&a, &md), LOCUS_ERR_RANGE);
    EXPECT_EQ(md, nullptr);
}

// ---------- GID choice ----------

rdma_gid_entry_t gid(const char *text, int type)
{
    rdma_gid_entry_t e;
    memset(&e, 0, sizeof e);
    e.type = type;
    if (text) {
        EXPECT_EQ(inet_pton(AF_INET6, text, e.raw), 1) << text;
    }
    return e;
}

TEST(RdmaGid, RoceV2OverIpv4WinsWhereverItSits)
{
    // Soft-RoCE on eth0 with 10.0.2.15: link-local pair first, IPv4 pair after
    rdma_gid_entry_t t[] = {gid("fe80::5054:ff:fe12:3456", RDMA_GID_ROCE_V1),
                            gid("fe80::5054:ff:fe12:3456", RDMA_GID_ROCE_V2),
                            gid("::ffff:10.0.2.15", RDMA_GID_ROCE_V1), gid("::ffff:10.0.2.15", RDMA_GID_ROCE_V2)};
    EXPECT_EQ(rdma_gid_pick(t, 4, RDMA_LL_ETH), 3);
    std::swap(t[0], t[3]);
    EXPECT_EQ(rdma_gid_pick(t, 4, RDMA_LL_ETH), 0);
}

TEST(RdmaGid, FallsBackByTypeThenAddress)
{
    rdma_gid_entry_t v6[] = {gid("fe80::1", RDMA_GID_ROCE_V1), gid("fe80::1", RDMA_GID_ROCE_V2),
                             gid("2001:db8::1", RDMA_GID_ROCE_V1), gid("2001:db8::1", RDMA_GID_ROCE_V2)};
    EXPECT_EQ(rdma_gid_pick(v6, 4, RDMA_LL_ETH), 3) << "global IPv6 RoCE v2 before link-local";
    EXPECT_EQ(rdma_gid_pick(v6, 2, RDMA_LL_ETH), 1) << "RoCE v2 link-local before RoCE v1";
    rdma_gid_entry_t v1[] = {gid(nullptr, RDMA_GID_UNKNOWN), gid("::ffff:10.0.0.1", RDMA_GID_ROCE_V1)};
    EXPECT_EQ(rdma_gid_pick(v1, 2, RDMA_LL_ETH), 1) << "RoCE v1 only: still usable";
    rdma_gid_entry_t empty[] = {gid(nullptr, RDMA_GID_ROCE_V2), gid(nullptr, RDMA_GID_UNKNOWN)};
    EXPECT_EQ(rdma_gid_pick(empty, 2, RDMA_LL_ETH), -1);
    EXPECT_EQ(rdma_gid_pick(empty, 0, RDMA_LL_ETH), -1);
    // InfiniBand: the first non-empty IB entry, never a RoCE one
    rdma_gid_entry_t ib[] = {gid(nullptr, RDMA_GID_IB), gid("fe80::2:c903:a:b", RDMA_GID_IB),
                             gid("fe80::2:c903:a:c", RDMA_GID_IB)};
    EXPECT_EQ(rdma_gid_pick(ib, 3, RDMA_LL_IB), 1);
}

struct TmpTree {
    std::string root;
    TmpTree()
    {
        char tmpl[] = "/tmp/locus_rdma_sysfsXXXXXX";
        root = mkdtemp(tmpl);
    }
    ~TmpTree() { (void)!system(("rm -rf " + root).c_str()); }
    void file(const std::string &rel, const std::string &text)
    {
        std::string path = root + "/" + rel;
        (void)!system(("mkdir -p $(dirname " + path + ")").c_str());
        std::ofstream(path) << text;
    }
};

TEST(RdmaGid, TypesFromSysfsGidAttrs)
{
    TmpTree t;
    t.file("class/infiniband/rxe0/ports/1/gid_attrs/types/0", "IB/RoCE v1\n");
    t.file("class/infiniband/rxe0/ports/1/gid_attrs/types/1", "RoCE v2\n");
    t.file("class/infiniband/mlx5_0/ports/1/gid_attrs/types/0", "IB/RoCE v1\n");
    const char *r = t.root.c_str();
    EXPECT_EQ(rdma_gid_sysfs_type(r, "rxe0", 1, 0, RDMA_LL_ETH), RDMA_GID_ROCE_V1);
    EXPECT_EQ(rdma_gid_sysfs_type(r, "rxe0", 1, 1, RDMA_LL_ETH), RDMA_GID_ROCE_V2);
    EXPECT_EQ(rdma_gid_sysfs_type(r, "rxe0", 1, 2, RDMA_LL_ETH), RDMA_GID_UNKNOWN) << "empty entry";
    EXPECT_EQ(rdma_gid_sysfs_type(r, "mlx5_0", 1, 0, RDMA_LL_IB), RDMA_GID_IB);
    EXPECT_EQ(rdma_gid_sysfs_type(r, "nosuch", 1, 0, RDMA_LL_IB), RDMA_GID_UNKNOWN);
}

// ---------- address blob ----------

rdma_peer_t sample_peer()
{
    rdma_peer_t p;
    memset(&p, 0, sizeof p);
    p.qpn = 0x12345;
    p.psn = 0xabcdef;
    p.lid = 0x1234;
    p.link_layer = RDMA_LL_ETH;
    p.mtu = IBV_MTU_1024;
    p.rd_atomic = 16;
    p.atomics = 1;
    for (int i = 0; i < 16; i++)
        p.gid[i] = (uint8_t)(i * 17 + 3);
    p.heap_base = 0x7f0012345000ull;
    p.heap_len = 1ull << 30;
    p.heap_rkey = 0xdeadbeef;
    return p;
}

TEST(RdmaAddr, RoundTripsEveryFieldInAFixedLittleEndianLayout)
{
    rdma_peer_t p = sample_peer(), q;
    uint8_t blob[RDMA_ADDR_BYTES];
    rdma_addr_pack(&p, blob);
    EXPECT_EQ(memcmp(blob, "LRD1", 4), 0);
    EXPECT_EQ(blob[8], 0x45);  // qpn, least significant byte first
    EXPECT_EQ(blob[10], 0x01);
    EXPECT_EQ(blob[20], 0xef); // rkey
    ASSERT_EQ(rdma_addr_unpack(blob, &q), LOCUS_OK) << locus_last_error();
    EXPECT_EQ(memcmp(&p, &q, sizeof p), 0);
}

TEST(RdmaAddr, RejectsCorruptBlobsNamingTheField)
{
    rdma_peer_t p = sample_peer(), q;
    uint8_t good[RDMA_ADDR_BYTES], b[RDMA_ADDR_BYTES];
    rdma_addr_pack(&p, good);
    struct Case { int off; uint8_t val; const char *word; } cases[] = {
        {0, 'X', "magic"}, {4, 2, "version"}, {5, 3, "link layer"}, {6, 0, "MTU"}, {6, 6, "MTU"},
        {11, 1, "24 bits"}, {15, 1, "24 bits"}, {7, 0, "rd_atomic"}, {18, 2, "atomics"}, {55, 0xff, "wraps"},
    };
    for (const Case &c : cases) {
        memcpy(b, good, sizeof b);
        b[c.off] = c.val;
        if (c.off == 55)
            memset(b + 40, 0xff, 8); // base near the top + a huge length
        EXPECT_EQ(rdma_addr_unpack(b, &q), LOCUS_ERR_INVALID) << "byte " << c.off;
        EXPECT_NE(std::string(locus_last_error()).find(c.word), std::string::npos) << locus_last_error();
    }
    EXPECT_EQ(rdma_addr_unpack(nullptr, &q), LOCUS_ERR_INVALID);
}

// ---------- with a device ----------

TEST_F(RdmaAttr, UnknownDeviceIsNamed)
{
    setenv("LOCUS_RDMA_DEVICE", "nosuch0", 1);
    rdma_attr_t a;
    rdma_attr_init(&a);
    ASSERT_EQ(rdma_attr_from_env(&a), LOCUS_OK);
    rdma_md_t *md = nullptr;
    EXPECT_EQ(rdma_md_open(&a, &md), LOCUS_ERR_NO_DEVICE);
    EXPECT_EQ(md, nullptr);
    EXPECT_NE(std::string(locus_last_error()).find("nosuch0"), std::string::npos) << locus_last_error();
}

const size_t HEAP = 16 << 20;

struct Dev : CleanEnv {
    rdma_md_t *md = nullptr;
    rdma_iface_t *ifc = nullptr;
    rdma_ep_t *a = nullptr, *b = nullptr;
    char *heap = nullptr;

    void SetUp() override
    {
        CleanEnv::SetUp();
        rdma_attr_t at;
        rdma_attr_init(&at);
        locus_status_t st = rdma_md_open(&at, &md);
        if (st == LOCUS_ERR_NO_DEVICE)
            GTEST_SKIP() << locus_last_error() << ": device tests run in the Soft-RoCE guest (vm_rdma_unit)";
        ASSERT_EQ(st, LOCUS_OK) << locus_last_error();
        heap = (char *)mmap(nullptr, HEAP, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        ASSERT_NE(heap, MAP_FAILED);
        memset(heap, 0, HEAP);
        ASSERT_EQ(rdma_md_reg_heap(md, heap, HEAP), LOCUS_OK) << locus_last_error();
        ASSERT_EQ(rdma_iface_create(md, &ifc), LOCUS_OK) << locus_last_error();
    }
    void pair()
    {
        ASSERT_EQ(rdma_ep_create(ifc, &a), LOCUS_OK) << locus_last_error();
        ASSERT_EQ(rdma_ep_create(ifc, &b), LOCUS_OK) << locus_last_error();
        uint8_t ba[RDMA_ADDR_BYTES], bb[RDMA_ADDR_BYTES];
        rdma_ep_addr(a, ba);
        rdma_ep_addr(b, bb);
        ASSERT_EQ(rdma_ep_connect(a, bb), LOCUS_OK) << locus_last_error();
        ASSERT_EQ(rdma_ep_connect(b, ba), LOCUS_OK) << locus_last_error();
    }
    void TearDown() override
    {
        rdma_iface_destroy(ifc); // destroys a and b
        rdma_md_close(md);
        if (heap && heap != MAP_FAILED)
            munmap(heap, HEAP);
        CleanEnv::TearDown();
    }
    rdma_iface_stats_t stats()
    {
        rdma_iface_stats_t s;
        rdma_iface_stats(ifc, &s);
        return s;
    }
};

TEST_F(Dev, PortGidAndMtuComeFromTheDevice)
{
    const rdma_md_info_t *i = rdma_md_info(md);
    std::printf("device %s port %d gid %d (%s) mtu code %d atomic_cap %d\n%s", i->device, i->port, i->gid_index,
                rdma_gid_type_name(i->gid_type), i->active_mtu, i->atomic_cap, rdma_md_notes(md));
    EXPECT_GE(i->port, 1);
    static const uint8_t zero[16] = {};
    EXPECT_NE(memcmp(i->gid, zero, 16), 0);
    if (i->link_layer == RDMA_LL_ETH) {
        EXPECT_EQ(i->gid_type, RDMA_GID_ROCE_V2);
        // the path MTU (<= the port's active MTU) fits the netdev's MTU
        char path[256], ndev[64] = "";
        snprintf(path, sizeof path, "/sys/class/infiniband/%s/ports/%d/gid_attrs/ndevs/%d", i->device, i->port,
                 i->gid_index);
        std::ifstream(path) >> ndev;
        uint64_t netmtu = 0;
        std::ifstream(std::string("/sys/class/net/") + ndev + "/mtu") >> netmtu;
        if (netmtu) {
            EXPECT_LE(128u << i->active_mtu, netmtu) << ndev;
        }
    }
    const rdma_caps_t *c = rdma_iface_caps(ifc);
    EXPECT_LE(c->signal_every * 2, c->sq_depth);
    EXPECT_EQ(c->detect_ns, rdma_detect_ns(md->attr.timeout, md->attr.retry));
    if (i->atomic_cap != IBV_ATOMIC_NONE) {
        EXPECT_TRUE(c->atomics) << rdma_md_notes(md);
    }
}

TEST_F(Dev, LoopbackPutGetAndAtomics)
{
    pair();
    for (size_t i = 0; i < 100000; i++)
        heap[i] = (char)(i * 7 + 1);
    rdma_comp_t c = {};
    ASSERT_EQ(rdma_put(a, heap, 1 << 20, 100000, &c), LOCUS_OK) << locus_last_error();
    ASSERT_EQ(rdma_wait(ifc, &c), LOCUS_OK) << locus_last_error();
    EXPECT_EQ(memcmp(heap, heap + (1 << 20), 100000), 0);
    char small[300];
    ASSERT_EQ(rdma_get(b, small, 1 << 20, sizeof small, &c), LOCUS_OK);
    ASSERT_EQ(rdma_wait(ifc, &c), LOCUS_OK) << locus_last_error();
    EXPECT_EQ(memcmp(small, heap, sizeof small), 0);
    if (!rdma_iface_caps(ifc)->atomics)
        GTEST_SKIP() << "no atomics: " << rdma_md_notes(md);
    uint64_t *w = (uint64_t *)(heap + 4096);
    *w = 40;
    uint64_t old = 0, old2 = 0;
    ASSERT_EQ(rdma_fetch_add(a, 4096, 2, &old, &c), LOCUS_OK);
    ASSERT_EQ(rdma_cswap(b, 4096, 42, 7, &old2, &c), LOCUS_OK);
    ASSERT_EQ(rdma_wait(ifc, &c), LOCUS_OK) << locus_last_error();
    EXPECT_EQ(old, 40u);
    EXPECT_EQ(old2, 42u);
    EXPECT_EQ(*w, 7u);
    EXPECT_EQ(rdma_ep_flush(a), LOCUS_OK);
    EXPECT_EQ(rdma_iface_flush(ifc), LOCUS_OK);
}

TEST_F(Dev, TellsWhetherAPutCopiesItsSource)
{
    pair();
    uint32_t inl = rdma_iface_caps(ifc)->max_inline;
    size_t bounce = md->attr.bounce_size;
    if (inl >= bounce)
        GTEST_SKIP() << "inline size " << inl << " >= bounce size " << bounce;
    char *m = (char *)malloc(bounce + 1);
    ASSERT_NE(m, nullptr);
    EXPECT_TRUE(rdma_put_copies_source(a, heap, inl)) << "inline, even from the heap";
    EXPECT_FALSE(rdma_put_copies_source(a, heap, inl + 1)) << "the heap is registered: sent from place";
    EXPECT_TRUE(rdma_put_copies_source(a, m, bounce)) << "bounce buffer";
    EXPECT_FALSE(rdma_put_copies_source(a, m, bounce + 1)) << "registration cache";
    // and the stats agree with the prediction
    rdma_iface_stats_t s0 = stats();
    rdma_comp_t c = {};
    ASSERT_EQ(rdma_put(a, m, 0, bounce, &c), LOCUS_OK);
    ASSERT_EQ(rdma_put(a, m, 0, bounce + 1, &c), LOCUS_OK);
    ASSERT_EQ(rdma_wait(ifc, &c), LOCUS_OK) << locus_last_error();
    EXPECT_EQ(stats().bounce, s0.bounce + 1);
    EXPECT_EQ(stats().cached, s0.cached + 1);
    free(m);
}

TEST_F(Dev, BadArgumentsFailBeforeAnythingIsPosted)
{
    rdma_ep_t *lone;
    ASSERT_EQ(rdma_ep_create(ifc, &lone), LOCUS_OK);
    EXPECT_EQ(rdma_put(lone, heap, 0, 8, nullptr), LOCUS_ERR_INVALID) << "not connected";
    EXPECT_NE(std::string(locus_last_error()).find("not connected"), std::string::npos);
    uint8_t junk[RDMA_ADDR_BYTES] = {1, 2, 3};
    EXPECT_EQ(rdma_ep_connect(lone, junk), LOCUS_ERR_INVALID);
    rdma_ep_destroy(lone);
    pair();
    rdma_iface_stats_t s0 = stats();
    uint64_t v;
    EXPECT_EQ(rdma_put(a, heap, HEAP - 4, 8, nullptr), LOCUS_ERR_RANGE);
    EXPECT_NE(std::string(locus_last_error()).find("outside the peer's heap"), std::string::npos);
    EXPECT_EQ(rdma_get(a, heap, ~0ull - 2, 8, nullptr), LOCUS_ERR_RANGE);
    EXPECT_EQ(rdma_get(a, nullptr, 0, 8, nullptr), LOCUS_ERR_INVALID);
    EXPECT_EQ(rdma_put(a, nullptr, 0, 0, nullptr), LOCUS_OK) << "zero bytes: a no-op";
    if (rdma_iface_caps(ifc)->atomics) {
        EXPECT_EQ(rdma_fetch_add(a, 12, 1, &v, nullptr), LOCUS_ERR_INVALID);
        EXPECT_NE(std::string(locus_last_error()).find("aligned"), std::string::npos);
        EXPECT_EQ(rdma_cswap(a, HEAP, 0, 1, &v, nullptr), LOCUS_ERR_RANGE);
    }
    rdma_iface_stats_t s1 = stats();
    EXPECT_EQ(s1.puts + s1.gets + s1.atomics, s0.puts + s0.gets + s0.atomics);
    EXPECT_EQ(rdma_ep_outstanding(a), 0u);
}

TEST_F(Dev, FlushAfterAnUnsignalledTailPostsAMarker)
{
    pair();
    uint32_t k = rdma_iface_caps(ifc)->signal_every;
    if (k < 2)
        GTEST_SKIP() << "LOCUS_RDMA_SIGNAL=1: every request is signalled";
    rdma_iface_stats_t s0 = stats();
    ASSERT_EQ(rdma_put(a, heap, 8192, 64, nullptr), LOCUS_OK);
    EXPECT_EQ(rdma_ep_outstanding(a), 1u);
    ASSERT_EQ(rdma_ep_flush(a), LOCUS_OK) << locus_last_error();
    EXPECT_EQ(rdma_ep_outstanding(a), 0u);
    EXPECT_EQ(stats().markers, s0.markers + 1);
    ASSERT_EQ(rdma_ep_flush(a), LOCUS_OK);
    EXPECT_EQ(stats().markers, s0.markers + 1) << "nothing in flight: no marker";
}

TEST_F(Dev, DestroyWithPendingOperationsCompletesThemWithAnError)
{
    pair();
    rdma_comp_t c = {};
    for (int i = 0; i < 32; i++)
        ASSERT_EQ(rdma_put(a, heap, 8 << 20, 4 << 20, &c), LOCUS_OK);
    uint32_t pending = c.pending;
    rdma_ep_destroy(a);
    a = nullptr;
    EXPECT_EQ(c.pending, 0u);
    if (pending) {
        EXPECT_EQ(c.status, LOCUS_ERR_BUSY);
    }
    EXPECT_EQ(rdma_ep_flush(b), LOCUS_OK);
}

TEST_F(Dev, CompletionQueueGrowsWithTheEndpoints)
{
    // a 64-entry CQ must grow to (depth + 1) per QP: every QP can flush its
    // whole send queue in error at once
    rdma_iface_destroy(ifc);
    ifc = nullptr;
    setenv("LOCUS_RDMA_CQ_DEPTH", "64", 1);
    rdma_attr_t at;
    rdma_attr_init(&at);
    ASSERT_EQ(rdma_attr_from_env(&at), LOCUS_OK);
    md->attr.cq_depth = at.cq_depth;
    ASSERT_EQ(rdma_iface_create(md, &ifc), LOCUS_OK) << locus_last_error();
    const int PAIRS = 6;
    rdma_ep_t *x[PAIRS], *y[PAIRS];
    for (int i = 0; i < PAIRS; i++) {
        ASSERT_EQ(rdma_ep_create(ifc, &x[i]), LOCUS_OK) << locus_last_error();
        ASSERT_EQ(rdma_ep_create(ifc, &y[i]), LOCUS_OK) << locus_last_error();
        uint8_t bx[RDMA_ADDR_BYTES], by[RDMA_ADDR_BYTES];
        rdma_ep_addr(x[i], bx);
        rdma_ep_addr(y[i], by);
        ASSERT_EQ(rdma_ep_connect(x[i], by), LOCUS_OK);
        ASSERT_EQ(rdma_ep_connect(y[i], bx), LOCUS_OK);
    }
    EXPECT_GE(ifc->cq_cap, ifc->cq_need);
    EXPECT_GE(ifc->cq_need, 2 * PAIRS * (int)(ifc->caps.sq_depth + 1));
    for (int i = 0; i < 4096; i++)
        heap[(1 << 20) + i] = (char)(i ^ 0x5a);
    for (int i = 0; i < PAIRS; i++)
        for (int j = 0; j < 64; j++)
            ASSERT_EQ(rdma_put(x[i], heap + (1 << 20), (uint64_t)(2 + i) << 20 | (uint64_t)j << 12, 4096, nullptr),
                      LOCUS_OK);
    ASSERT_EQ(rdma_iface_flush(ifc), LOCUS_OK) << locus_last_error();
    for (int i = 0; i < PAIRS; i++)
        EXPECT_EQ(memcmp(heap + ((2 + i) << 20) + (63 << 12), heap + (1 << 20), 4096), 0) << i;
    int need = ifc->cq_need;
    rdma_ep_destroy(x[0]);
    EXPECT_EQ(ifc->cq_need, need - (int)(ifc->caps.sq_depth + 1)) << "a healthy endpoint gives its room back";
}

TEST_F(Dev, AnUnsignalledTailIsNotAStall)
{
    // nothing owes a completion for an unsignalled request: the backstop must
    // not fail its endpoint however long the caller waits elsewhere
    pair();
    if (rdma_iface_caps(ifc)->signal_every < 2)
        GTEST_SKIP() << "every request is signalled";
    md->attr.stall_s = 0.1;
    ASSERT_EQ(rdma_put(a, heap, 8192, 16, nullptr), LOCUS_OK);
    usleep(300000);
    for (int i = 0; i < 100; i++) {
        rdma_iface_progress(ifc);
        rdma_iface_check(ifc, true);
    }
    EXPECT_EQ(rdma_ep_status(a), LOCUS_OK) << locus_last_error();
    // a signalled request posted now owes its completion from now, not from
    // the unsignalled put 0.3 s ago (loopback completes it inside the post, so
    // check before polling, as a READ on its way across a link would be)
    char got[16];
    rdma_comp_t c = {};
    ASSERT_EQ(rdma_get(a, got, 8192, sizeof got, &c), LOCUS_OK) << locus_last_error();
    rdma_iface_check(ifc, true);
    EXPECT_EQ(rdma_ep_status(a), LOCUS_OK) << "judged by the unsignalled put's age: " << locus_last_error();
    EXPECT_EQ(rdma_wait(ifc, &c), LOCUS_OK) << locus_last_error();
    EXPECT_EQ(rdma_ep_flush(a), LOCUS_OK) << locus_last_error();
    EXPECT_EQ(stats().failed_eps, 0u);
}

} // namespace
