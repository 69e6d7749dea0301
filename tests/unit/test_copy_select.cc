// The copy selector on synthetic topologies: thresholds from L3 size and
// sharing, near/far peers, two nodes, a VM reporting L3 = 0, tunables and the
// calibration file.
//
// tests/data/topo/copy_vm_l3_zero.xml was made with
//   lstopo-no-graphics -i "pack:2 [numa(memory=1GB)] l3:1 core:2 pu:1" --of xml - |
//   sed -E 's/(<object type="L3Cache"[^>]*cache_size=")[0-9]+"/\10"/'
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <locus/copy.h>
#include <locus/topo.h>

extern "C" {
#include "copy/kernels.h"
}

namespace {

const char *kVars[] = {"LOCUS_COPY_NT_MIN", "LOCUS_COPY_NT_MIN_FAR", "LOCUS_COPY_KERNEL",
                       "LOCUS_COPY_ISA", "LOCUS_COPY_CALIBRATION", "LOCUS_COPY_SELFTEST",
                       "LOCUS_COPY_NT_KERNEL", "LOCUS_TUNE_FILE"};

class Select : public ::testing::Test {
protected:
    void SetUp() override
    {
        for (const char *v : kVars)
            unsetenv(v);
        setenv("LOCUS_COPY_CALIBRATION", "none", 1);
        // these tests check the topology's rule; tests/unit/test_copy_proof.cc the self-test
        setenv("LOCUS_COPY_SELFTEST", "off", 1);
        setenv("LOCUS_TUNE_FILE", "none", 1);
    }
    void TearDown() override
    {
        for (auto *c : ctxs) locus_copy_ctx_destroy(c);
        for (auto *t : topos) locus_topo_destroy(t);
        for (const char *v : kVars)
            unsetenv(v);
    }
    locus_topo_t *synthetic(const char *desc)
    {
        locus_topo_t *t = nullptr;
        EXPECT_EQ(locus_topo_load_synthetic(desc, &t), LOCUS_OK) << locus_last_error();
        if (t) topos.push_back(t);
        return t;
    }
    locus_copy_ctx_t *ctx(const locus_topo_t *t, int cpu, int peer)
    {
        locus_copy_ctx_t *c = nullptr;
        EXPECT_EQ(locus_copy_ctx_create(t, cpu, peer, &c), LOCUS_OK) << locus_last_error();
        if (c) ctxs.push_back(c);
        return c;
    }
    static locus_copy_params_t params(const locus_copy_ctx_t *c)
    {
        locus_copy_params_t p;
        EXPECT_EQ(locus_copy_ctx_params(c, &p), LOCUS_OK);
        return p;
    }
    static std::string pick(const locus_copy_ctx_t *c, size_t total, int hint)
    {
        const char *n = locus_copy_kernel_name(locus_copy_ctx_select(c, total, (locus_copy_hint_t)hint));
        return n ? n : "(none)";
    }
    std::vector<locus_copy_ctx_t *> ctxs;
    std::vector<locus_topo_t *> topos;
};

uint64_t l3_of(const locus_topo_t *t, int cpu, int *ncpus)
{
    locus_topo_l3_t l3;
    EXPECT_EQ(locus_topo_l3(t, locus_topo_cpu_l3(t, cpu), &l3), LOCUS_OK);
    *ncpus = l3.num_cpus;
    return l3.size_bytes;
}

} // namespace

TEST_F(Select, TwoL3DomainsOnOneNode)
{
    // cpus 0-3 share L3 #0, cpus 4-7 share L3 #1.
    auto *t = synthetic("pack:1 [numa(memory=8GB)] l3:2 core:4 pu:1");
    ASSERT_NE(t, nullptr);
    int n;
    uint64_t l3 = l3_of(t, 0, &n);
    ASSERT_EQ(n, 4);
    auto *near = ctx(t, 0, 1), *far = ctx(t, 0, 5), *unknown = ctx(t, 0, -1);
    auto pn = params(near), pf = params(far), pu = params(unknown);
    EXPECT_EQ(pn.peer_shares_l3, 1);
    EXPECT_EQ(pf.peer_shares_l3, 0);
    EXPECT_EQ(pu.peer_shares_l3, -1);
    EXPECT_EQ(pn.l3_size, l3);
    EXPECT_EQ(pn.l3_cpus, 4);
    EXPECT_EQ(pn.nt_min, l3 / 4 / 4 * 3);
    EXPECT_EQ(pn.nt_min_far, l3 / 4 / 4);
    EXPECT_STREQ(pn.nt_min_origin, "topology");

    std::string regular = locus_copy_kernel_name(pn.regular), nt = locus_copy_kernel_name(pn.nt);
    std::string pfk = locus_copy_kernel_name(pn.pf), ntpf = locus_copy_kernel_name(pn.ntpf);
    EXPECT_EQ(regular, "libc");
    EXPECT_NE(nt.find("-nt"), std::string::npos);

    size_t mid = (pn.nt_min + pn.nt_min_far) / 2, big = pn.nt_min, small = pn.nt_min_far - 1;
    // Below every threshold: glibc, whatever the hint or peer.
    for (int h = 0; h < 4; h++) {
        EXPECT_EQ(pick(near, small, h), regular) << h;
        EXPECT_EQ(pick(far, small, h), regular) << h;
    }
    // Between the far and the general threshold the peer decides.
    EXPECT_EQ(pick(far, mid, LOCUS_COPY_HINT_NONE), regular);
    EXPECT_EQ(pick(far, mid, LOCUS_COPY_HINT_NT_DEST), nt);
    EXPECT_EQ(pick(far, mid, LOCUS_COPY_HINT_NT_SOURCE), pfk);
    EXPECT_EQ(pick(far, mid, LOCUS_COPY_HINT_NT_BOTH), ntpf);
    for (int h = 0; h < 4; h++)
        EXPECT_EQ(pick(near, mid, h), regular) << "peer shares the L3: keep lines for it";
    // An unknown peer trusts the hint.
    EXPECT_EQ(pick(unknown, mid, LOCUS_COPY_HINT_NONE), regular);
    EXPECT_EQ(pick(unknown, mid, LOCUS_COPY_HINT_NT_DEST), nt);
    EXPECT_EQ(pick(unknown, mid, LOCUS_COPY_HINT_NT_SOURCE), pfk);
    EXPECT_EQ(pick(unknown, mid, LOCUS_COPY_HINT_NT_BOTH), ntpf);
    // From nt_min neither side can stay cached: NT stores and prefetchnta
    // loads for every hint.
    for (auto *c : {near, far, unknown}) {
        for (int h = 0; h < 4; h++)
            EXPECT_EQ(pick(c, big, h), ntpf) << h;
        EXPECT_EQ(pick(c, big - 1, LOCUS_COPY_HINT_NONE), regular);
    }
    EXPECT_EQ(locus_copy_ctx_select(near, 100, (locus_copy_hint_t)4), -1);
    EXPECT_NE(std::string(locus_last_error()).find("hint 4"), std::string::npos);
    EXPECT_STREQ(locus_copy_ctx_notes(near), "");
}

TEST_F(Select, TwoNodes)
{
    auto *t = synthetic("pack:2 [numa(memory=1GB)] l3:1 core:2 pu:1");
    ASSERT_NE(t, nullptr);
    ASSERT_EQ(locus_topo_num_nodes(t), 2);
    auto *same = ctx(t, 0, 1), *other = ctx(t, 1, 2);
    EXPECT_EQ(params(same).peer_shares_l3, 1);
    EXPECT_EQ(params(other).peer_shares_l3, 0);
    auto p = params(other);
    size_t mid = (p.nt_min + p.nt_min_far) / 2;
    EXPECT_STREQ(locus_copy_kernel_name(locus_copy_ctx_select(other, mid, LOCUS_COPY_HINT_NT_DEST)),
                 locus_copy_kernel_name(p.nt));
    EXPECT_STREQ(locus_copy_kernel_name(locus_copy_ctx_select(same, mid, LOCUS_COPY_HINT_NT_DEST)),
                 "libc");
}

TEST_F(Select, ThresholdsFollowL3SizeAndSharing)
{
    auto *t2 = synthetic("pack:1 [numa(memory=8GB)] l3:1(size=32MB) core:2 pu:1");
    auto *t8 = synthetic("pack:1 [numa(memory=8GB)] l3:1(size=32MB) core:8 pu:1");
    auto *big = synthetic("pack:1 [numa(memory=8GB)] l3:1(size=128MB) core:8 pu:1");
    ASSERT_TRUE(t2 && t8 && big);
    auto p2 = params(ctx(t2, 0, -1)), p8 = params(ctx(t8, 0, -1)), pb = params(ctx(big, 0, -1));
    EXPECT_EQ(p2.l3_size, p8.l3_size);
    EXPECT_EQ(p2.nt_min, 4 * p8.nt_min) << "4x the cores sharing the L3: 1/4 of the threshold";
    EXPECT_EQ(pb.nt_min, 4 * p8.nt_min) << "4x the L3: 4x the threshold";
    EXPECT_EQ(p2.nt_min, p2.l3_size / 2 / 4 * 3);
}

TEST_F(Select, VmReportingL3ZeroStillWorks)
{
    locus_topo_t *t = nullptr;
    ASSERT_EQ(locus_topo_load_xml(LOCUS_SOURCE_DIR "/tests/data/topo/copy_vm_l3_zero.xml", &t),
              LOCUS_OK) << locus_last_error();
    topos.push_back(t);
    auto *c = ctx(t, 0, 3);
    auto p = params(c);
    EXPECT_GT(p.l3_size, 0u);
    EXPECT_NE(p.l3_source, LOCUS_TOPO_SRC_HWLOC);
    EXPECT_GT(p.nt_min, p.nt_min_far);
    EXPECT_GT(p.nt_min_far, 0u);
    EXPECT_EQ(p.peer_shares_l3, 0);
    // The substitution is reported, by the topology and by the context.
    EXPECT_NE(std::string(locus_topo_notes(t)), "");
    EXPECT_NE(std::string(locus_copy_ctx_notes(c)).find("not hwloc"), std::string::npos)
        << locus_copy_ctx_notes(c);
    std::vector<char> a(1 << 20, 7), b(1 << 20, 0);
    for (int h = 0; h < 4; h++) {
        std::fill(b.begin(), b.end(), 0);
        ASSERT_EQ(locus_copy_ctx_copy(c, b.data(), a.data(), a.size(), a.size(), (locus_copy_hint_t)h),
                  LOCUS_OK);
        EXPECT_EQ(a, b);
    }
}

TEST_F(Select, TunablesOverrideAndAreValidated)
{
    auto *t = synthetic("pack:1 [numa(memory=8GB)] l3:2 core:4 pu:1");
    ASSERT_NE(t, nullptr);
    setenv("LOCUS_COPY_NT_MIN", "1M", 1);
    setenv("LOCUS_COPY_NT_MIN_FAR", "64K", 1);
    auto p = params(ctx(t, 0, 4));
    EXPECT_EQ(p.nt_min, 1u << 20);
    EXPECT_EQ(p.nt_min_far, 64u << 10);
    EXPECT_STREQ(p.nt_min_origin, "LOCUS_COPY_NT_MIN");

    locus_copy_ctx_t *c = nullptr;
    setenv("LOCUS_COPY_NT_MIN", "12Q", 1);
    EXPECT_EQ(locus_copy_ctx_create(t, 0, -1, &c), LOCUS_ERR_INVALID);
    EXPECT_EQ(c, nullptr);
    EXPECT_NE(std::string(locus_last_error()).find("LOCUS_COPY_NT_MIN='12Q'"), std::string::npos)
        << locus_last_error();
    EXPECT_NE(std::string(locus_last_error()).find("auto"), std::string::npos);
    unsetenv("LOCUS_COPY_NT_MIN");

    setenv("LOCUS_COPY_KERNEL", "avx9", 1);
    EXPECT_EQ(locus_copy_ctx_create(t, 0, -1, &c), LOCUS_ERR_INVALID);
    EXPECT_NE(std::string(locus_last_error()).find("avx9"), std::string::npos);

    // Every kernel name is accepted by LOCUS_COPY_KERNEL and forces that kernel.
    for (int k = 0; k < locus_copy_num_kernels(); k++) {
        if (!locus_copy_kernel_available(k)) continue;
        setenv("LOCUS_COPY_KERNEL", locus_copy_kernel_name(k), 1);
        auto *f = ctx(t, 0, -1);
        ASSERT_NE(f, nullptr);
        EXPECT_EQ(params(f).forced_kernel, k);
        EXPECT_EQ(locus_copy_ctx_select(f, 64, LOCUS_COPY_HINT_NONE), k);
        EXPECT_EQ(locus_copy_ctx_select(f, 1ull << 30, LOCUS_COPY_HINT_NT_BOTH), k);
    }
    unsetenv("LOCUS_COPY_KERNEL");

    setenv("LOCUS_COPY_ISA", "sse2", 1);
    auto ps = params(ctx(t, 0, -1));
    EXPECT_STREQ(locus_copy_kernel_name(ps.nt), "sse2-nt");
    EXPECT_FALSE(locus_copy_kernel_available(locus_copy_kernel_find("avx2")));
    setenv("LOCUS_COPY_ISA", "avx3", 1);
    EXPECT_EQ(locus_copy_ctx_create(t, 0, -1, &c), LOCUS_ERR_INVALID);
    EXPECT_NE(std::string(locus_last_error()).find("LOCUS_COPY_ISA"), std::string::npos);
}

TEST_F(Select, BadCpusAndForce)
{
    auto *t = synthetic("pack:1 [numa(memory=8GB)] l3:1 core:4 pu:1");
    locus_copy_ctx_t *c = nullptr;
    EXPECT_EQ(locus_copy_ctx_create(t, 99, -1, &c), LOCUS_ERR_INVALID);
    EXPECT_NE(std::string(locus_last_error()).find("cpu 99"), std::string::npos);
    EXPECT_EQ(locus_copy_ctx_create(t, 0, -7, &c), LOCUS_ERR_INVALID);
    EXPECT_NE(std::string(locus_last_error()).find("peer cpu -7"), std::string::npos);
    EXPECT_EQ(locus_copy_ctx_create(t, 0, 1, nullptr), LOCUS_ERR_INVALID);
    auto *ok = ctx(t, 0, 1);
    EXPECT_EQ(locus_copy_ctx_force(ok, locus_copy_num_kernels()), LOCUS_ERR_INVALID);
    EXPECT_EQ(locus_copy_ctx_force(ok, locus_copy_kernel_find("sse2-ntpf")), LOCUS_OK);
    EXPECT_STREQ(locus_copy_kernel_name(locus_copy_ctx_select(ok, 8, LOCUS_COPY_HINT_NONE)), "sse2-ntpf");
    EXPECT_EQ(locus_copy_ctx_force(ok, -1), LOCUS_OK);
    EXPECT_STREQ(locus_copy_kernel_name(locus_copy_ctx_select(ok, 8, LOCUS_COPY_HINT_NONE)), "libc");
}

TEST_F(Select, CalibrationFileAppliesOnlyToTheSameL3)
{
    auto *t = synthetic("pack:1 [numa(memory=8GB)] l3:2 core:4 pu:1");
    ASSERT_NE(t, nullptr);
    int n;
    uint64_t l3 = l3_of(t, 0, &n);
    std::string path = ::testing::TempDir() + "locus_copy_calib_test.conf";
    setenv("LOCUS_COPY_CALIBRATION", path.c_str(), 1);
    auto write = [&](const std::string &text) {
        FILE *f = std::fopen(path.c_str(), "w");
        ASSERT_NE(f, nullptr);
        std::fputs(text.c_str(), f);
        std::fclose(f);
    };
    write("# test\nl3_size=" + std::to_string(l3) + "\nl3_cpus=4\nnt_min=3M\nnt_min_far=256K\n"
          "nt_kernel=sse2-nt\nfuture_key=1\n");
    auto *c = ctx(t, 0, 5);
    auto p = params(c);
    EXPECT_EQ(p.nt_min, 3u << 20);
    EXPECT_EQ(p.nt_min_far, 256u << 10);
    EXPECT_EQ(std::string(p.nt_min_origin), "calibration " + path);
    EXPECT_STREQ(locus_copy_kernel_name(p.nt), "sse2-nt");
    EXPECT_STREQ(locus_copy_kernel_name(p.ntpf), "sse2-ntpf");
    EXPECT_STREQ(locus_copy_kernel_name(p.pf), "sse2-pf");

    // The environment beats the file.
    setenv("LOCUS_COPY_NT_MIN", "5M", 1);
    EXPECT_EQ(params(ctx(t, 0, 5)).nt_min, 5u << 20);
    unsetenv("LOCUS_COPY_NT_MIN");

    write("l3_size=" + std::to_string(l3 * 2) + "\nl3_cpus=4\nnt_min=3M\n");
    auto *other = ctx(t, 0, 5);
    EXPECT_STREQ(params(other).nt_min_origin, "topology");
    EXPECT_NE(std::string(locus_copy_ctx_notes(other)).find("ignored"), std::string::npos);

    write("l3_size=" + std::to_string(l3) + "\nl3_cpus=4\nnt_min=lots\n");
    auto *bad = ctx(t, 0, 5);
    EXPECT_STREQ(params(bad).nt_min_origin, "topology");
    EXPECT_NE(std::string(locus_copy_ctx_notes(bad)).find("nt_min='lots'"), std::string::npos)
        << locus_copy_ctx_notes(bad);
    std::remove(path.c_str());

    char buf[256];
    setenv("LOCUS_COPY_CALIBRATION", "none", 1);
    EXPECT_STREQ(locus_copy_calibration_path(buf, sizeof buf), "");
    unsetenv("LOCUS_COPY_CALIBRATION");
    setenv("XDG_CACHE_HOME", "/tmp/xdg", 1);
    EXPECT_STREQ(locus_copy_calibration_path(buf, sizeof buf), "/tmp/xdg/locus/copy.conf");
    unsetenv("XDG_CACHE_HOME");
}

TEST_F(Select, CalibrationSaveWritesWhatTheSelectorReads)
{
    auto *t = synthetic("pack:1 [numa(memory=8GB)] l3:2 core:4 pu:1");
    ASSERT_NE(t, nullptr);
    int n;
    uint64_t l3 = l3_of(t, 0, &n);
    std::string dir = ::testing::TempDir() + "locus_copy_save_test";
    std::string path = dir + "/a/b/copy.conf";
    std::filesystem::remove_all(dir);
    int default_nt = params(ctx(t, 0, 5)).nt; // no calibration file yet (SetUp: "none")
    setenv("LOCUS_COPY_CALIBRATION", path.c_str(), 1);
    locus_copy_calibration_t cal = {l3, 4, 3u << 20, 256u << 10, locus_copy_kernel_find("sse2-nt")};
    ASSERT_EQ(locus_copy_calibration_save(nullptr, &cal), LOCUS_OK) << locus_last_error();
    auto p = params(ctx(t, 0, 5));
    EXPECT_EQ(p.nt_min, 3u << 20);
    EXPECT_EQ(p.nt_min_far, 256u << 10);
    EXPECT_EQ(std::string(p.nt_min_origin), "calibration " + path);
    EXPECT_STREQ(locus_copy_kernel_name(p.nt), "sse2-nt");
    EXPECT_STREQ(locus_copy_kernel_name(p.pf), "sse2-pf");
    EXPECT_STREQ(locus_copy_kernel_name(p.ntpf), "sse2-ntpf");

    // No nt_min_far, no kernel: those stay the topology's / the selector's own.
    cal.nt_min_far = 0;
    cal.nt_kernel = -1;
    ASSERT_EQ(locus_copy_calibration_save(path.c_str(), &cal), LOCUS_OK) << locus_last_error();
    auto q = params(ctx(t, 0, 5));
    EXPECT_EQ(q.nt_min, 3u << 20);
    EXPECT_STREQ(q.nt_min_far_origin, "topology");
    EXPECT_EQ(q.nt, default_nt);

    // Bad records are refused, and the file is left as it was.
    locus_copy_calibration_t bad = cal;
    bad.nt_min = 0;
    EXPECT_EQ(locus_copy_calibration_save(path.c_str(), &bad), LOCUS_ERR_INVALID);
    EXPECT_NE(std::string(locus_last_error()).find("nt_min 0"), std::string::npos) << locus_last_error();
    bad = cal;
    bad.nt_kernel = locus_copy_kernel_find("avx2-ntpf");
    EXPECT_EQ(locus_copy_calibration_save(path.c_str(), &bad), LOCUS_ERR_INVALID);
    EXPECT_NE(std::string(locus_last_error()).find("avx2-ntpf"), std::string::npos) << locus_last_error();
    EXPECT_EQ(locus_copy_calibration_save(path.c_str(), nullptr), LOCUS_ERR_INVALID);
    EXPECT_EQ(params(ctx(t, 0, 5)).nt_min, 3u << 20);

    // Nowhere to write: a path through a regular file, and "none".
    std::string blocked = path + "/below/copy.conf";
    EXPECT_EQ(locus_copy_calibration_save(blocked.c_str(), &cal), LOCUS_ERR_SYSTEM);
    EXPECT_NE(std::string(locus_last_error()).find(path), std::string::npos) << locus_last_error();
    setenv("LOCUS_COPY_CALIBRATION", "none", 1);
    EXPECT_EQ(locus_copy_calibration_save(nullptr, &cal), LOCUS_ERR_INVALID);
    std::filesystem::remove_all(dir);
}

TEST_F(Select, CopiesAroundEveryThresholdAreExact)
{
    // Far peer: both thresholds are live for the hinted copies.
    auto *t = synthetic("pack:1 [numa(memory=8GB)] l3:2 core:4 pu:1");
    ASSERT_NE(t, nullptr);
    auto *far = ctx(t, 0, 6);
    auto p = params(far);
    std::vector<size_t> sizes;
    for (uint64_t th : {p.nt_min_far, p.nt_min})
        for (long d : {-65L, -1L, 0L, 1L, 63L})
            sizes.push_back((size_t)((long)th + d));
    size_t max = p.nt_min + 64 + 128;
    std::vector<unsigned char> src(max), dst(max + 128);
    for (size_t i = 0; i < src.size(); i++) src[i] = (unsigned char)(i * 131 + 7);
    for (size_t len : sizes)
        for (int h = 0; h < 4; h++) {
            std::fill(dst.begin(), dst.end(), 0xA5);
            unsigned char *d = dst.data() + 64 + 3;
            const unsigned char *s = src.data() + 29;
            ASSERT_EQ(locus_copy_ctx_copy(far, d, s, len, len, (locus_copy_hint_t)h), LOCUS_OK);
            ASSERT_EQ(std::memcmp(d, s, len), 0) << "len " << len << " hint " << h;
            for (size_t i = 0; i < 67; i++) ASSERT_EQ(dst[i], 0xA5) << "guard before, len " << len;
            for (size_t i = 0; i < 64; i++) ASSERT_EQ(d[len + i], 0xA5) << "guard after, len " << len;
            // A piece of a larger transfer uses the transfer's kernel; the bytes are the same.
            ASSERT_EQ(locus_copy_ctx_copy(far, d, s, 1000, len, (locus_copy_hint_t)h), LOCUS_OK);
            ASSERT_EQ(std::memcmp(d, s, 1000), 0);
        }
    EXPECT_EQ(locus_copy_ctx_copy(far, dst.data(), src.data(), 8, 4, LOCUS_COPY_HINT_NONE),
              LOCUS_ERR_INVALID);
    EXPECT_EQ(locus_copy_ctx_copy(nullptr, dst.data(), src.data(), 8, 8, LOCUS_COPY_HINT_NONE),
              LOCUS_ERR_INVALID);
}

TEST_F(Select, PinnedProcessStillSeesHardwareSharing)
{
    // The topology shows 2 cpus per L3 (as for a process allowed on 2 cpus);
    // a fake sysfs says cpu 0's L3 is shared by cpus 0-7.
    auto *t = synthetic("pack:1 [numa(memory=8GB)] l3:2 core:2 pu:1");
    ASSERT_NE(t, nullptr);
    int n;
    uint64_t l3 = l3_of(t, 0, &n);
    ASSERT_EQ(n, 2);
    namespace fs = std::filesystem;
    fs::path root = fs::path(::testing::TempDir()) / "locus_copy_fake_sys";
    fs::path cache = root / "devices/system/cpu/cpu0/cache";
    fs::create_directories(cache / "index0");
    fs::create_directories(cache / "index1");
    auto put = [](const fs::path &f, const std::string &v) { std::ofstream(f) << v << "\n"; };
    put(cache / "index0/level", "2");
    put(cache / "index1/level", "3");
    put(cache / "index1/shared_cpu_list", "0-3,4-7");
    put(cache / "index1/size", std::to_string(l3 >> 10) + "K");
    const char *saved = copy_sysfs_root;
    std::string r = root.string();
    copy_sysfs_root = r.c_str();

    auto *c = ctx(t, 0, 1);
    auto p = params(c);
    EXPECT_EQ(p.l3_cpus, 8);
    EXPECT_EQ(p.nt_min, l3 / 8 / 4 * 3);
    EXPECT_NE(std::string(locus_copy_ctx_notes(c)).find("shared by 8 cpus (sysfs)"), std::string::npos)
        << locus_copy_ctx_notes(c);
    // Peers outside this process's cpus: sharing from sysfs.
    EXPECT_EQ(params(ctx(t, 0, 5)).peer_shares_l3, 1);
    EXPECT_EQ(params(ctx(t, 0, 9)).peer_shares_l3, 0);
    EXPECT_EQ(params(ctx(t, 0, 2)).peer_shares_l3, 0) << "in the topology: the topology decides";

    // sysfs describing another cache (other size) is not used.
    put(cache / "index1/size", std::to_string((l3 >> 10) * 2) + "K");
    EXPECT_EQ(params(ctx(t, 0, 1)).l3_cpus, 2);
    auto *u = ctx(t, 0, 9);
    EXPECT_EQ(params(u).peer_shares_l3, -1);
    EXPECT_NE(std::string(locus_copy_ctx_notes(u)).find("sharing unknown"), std::string::npos);
    // A malformed list is not used either.
    put(cache / "index1/size", std::to_string(l3 >> 10) + "K");
    put(cache / "index1/shared_cpu_list", "0-x");
    EXPECT_EQ(params(ctx(t, 0, 1)).l3_cpus, 2);

    copy_sysfs_root = saved;
    fs::remove_all(root);
    locus_copy_ctx_t *bad = nullptr;
    EXPECT_EQ(locus_copy_ctx_create(t, 0, 5000, &bad), LOCUS_ERR_INVALID);
    EXPECT_NE(std::string(locus_last_error()).find("peer cpu 5000"), std::string::npos);
}
