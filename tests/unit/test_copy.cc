// Copy kernels: every size 0..2 KiB, every src/dst alignment 0..63, sizes
// around the selector thresholds, guard bytes, bad input. This file is also
// built with ASan/UBSan (test_copy_sanitized, see src/copy/module.cmake) and
// run inside the multi-NUMA VM guest (no AVX-512 there).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <locus/copy.h>

namespace {

// The selector tests here check kernels and the topology's rule; the
// self-test (tests/unit/test_copy_proof.cc) would measure in every process
// that has no cache, which under TCG in the VM guests takes seconds.
const bool kNoSelftest = [] { return setenv("LOCUS_COPY_SELFTEST", "off", 0) == 0; }();

constexpr size_t kGuard = 64;
constexpr uint8_t kGuardByte = 0xA5;
constexpr int kOnce = -2, kPolled = -3; // Buffers::run: locus_copy_once, locus_copy_polled

// A source and a destination region, each with room for any alignment 0..63
// and guard bytes on both sides of the destination.
struct Buffers {
    std::vector<uint8_t> src, dst;
    explicit Buffers(size_t max_len) : src(max_len + 128), dst(max_len + 128 + 2 * kGuard)
    {
        uint32_t x = 2463534242u;
        for (auto &b : src) {
            x ^= x << 13; x ^= x >> 17; x ^= x << 5;
            b = (uint8_t)x;
        }
    }
    // Copies with kernel k (or the selector, k < 0) and checks the bytes and guards.
    ::testing::AssertionResult run(int k, size_t len, size_t sa, size_t da, size_t total = 0,
                                   locus_copy_hint_t hint = LOCUS_COPY_HINT_NONE)
    {
        uint8_t *d = dst.data() + kGuard + da;
        const uint8_t *s = src.data() + sa;
        std::memset(dst.data(), kGuardByte, kGuard + da + len + kGuard);
        locus_status_t st = LOCUS_OK;
        if (k == kOnce)
            locus_copy_once(d, s, len);
        else if (k == kPolled)
            locus_copy_polled(d, s, len, hint);
        else
            st = k >= 0 ? locus_copy_kernel(k, d, s, len)
                        : total ? locus_copy_part(d, s, len, total, hint) : locus_copy(d, s, len, hint);
        if (st != LOCUS_OK)
            return ::testing::AssertionFailure() << "status " << st << ": " << locus_last_error();
        if (std::memcmp(d, s, len)) {
            size_t i = 0;
            while (d[i] == s[i]) i++;
            return ::testing::AssertionFailure() << "byte " << i << " differs";
        }
        for (size_t i = 0; i < kGuard + da; i++)
            if (dst[i] != kGuardByte)
                return ::testing::AssertionFailure() << "guard before dst hit at -" << (kGuard + da - i);
        for (size_t i = 0; i < kGuard; i++)
            if (d[len + i] != kGuardByte)
                return ::testing::AssertionFailure() << "guard after dst hit at +" << i;
        return ::testing::AssertionSuccess();
    }
};

std::vector<int> available_kernels()
{
    std::vector<int> ks;
    for (int k = 0; k < locus_copy_num_kernels(); k++)
        if (locus_copy_kernel_available(k))
            ks.push_back(k);
    return ks;
}

class Kernel : public ::testing::TestWithParam<int> {};

std::string kernel_name(const ::testing::TestParamInfo<int> &info)
{
    std::string n = locus_copy_kernel_name(info.param);
    for (auto &c : n)
        if (c == '-') c = '_';
    return n;
}

} // namespace

TEST_P(Kernel, EverySizeUpTo2KiB)
{
    Buffers b(2048);
    const size_t aligns[][2] = {{0, 0}, {1, 63}, {63, 1}, {17, 5}, {32, 0}, {0, 48}};
    for (auto &a : aligns)
        for (size_t len = 0; len <= 2048; len++)
            ASSERT_TRUE(b.run(GetParam(), len, a[0], a[1])) << "len " << len << " src+" << a[0]
                                                             << " dst+" << a[1];
}

TEST_P(Kernel, EveryAlignmentPair)
{
    Buffers b(8192);
    // Sizes that end in each code path: scalar tail, two vectors, 4/8-vector
    // blocks, the aligned loop with every remainder class.
    const size_t sizes[] = {1, 7, 15, 31, 63, 64, 65, 127, 129, 255, 511, 513, 1031, 2049, 4099, 8192};
    for (size_t len : sizes)
        for (size_t sa = 0; sa < 64; sa++)
            for (size_t da = 0; da < 64; da++)
                ASSERT_TRUE(b.run(GetParam(), len, sa, da)) << "len " << len << " src+" << sa
                                                            << " dst+" << da;
}

TEST_P(Kernel, LargeCopies)
{
    // Sizes around the default NT thresholds of common L3 shares, odd tails.
    const size_t sizes[] = {(1u << 20) - 1, (3u << 20) + 7, (6u << 20) + 1, (12u << 20) - 3};
    Buffers b(sizes[3] + 1);
    for (size_t len : sizes)
        ASSERT_TRUE(b.run(GetParam(), len, 3, 61)) << "len " << len;
}

// The copies for memory a peer polls (one store per byte): every size to
// 2 KiB and past the edges, every alignment pair for the sizes that end in
// each of their paths, large ones through the kernels between the edges.
TEST(CopyOnce, EverySizeAndAlignment)
{
    Buffers b(8192);
    for (int k : {kOnce, kPolled})
        for (size_t len = 0; len <= 2048; len++)
            ASSERT_TRUE(b.run(k, len, 3, 5)) << "k " << k << " len " << len;
    const size_t sizes[] = {1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 63, 64, 65, 127, 128, 129, 255, 256, 257, 4099, 8192};
    for (int k : {kOnce, kPolled})
        for (size_t len : sizes)
            for (size_t sa = 0; sa < 16; sa++)
                for (size_t da = 0; da < 16; da++)
                    ASSERT_TRUE(b.run(k, len, sa, da)) << "k " << k << " len " << len << " src+" << sa << " dst+" << da;
    Buffers big((12u << 20) + 1);
    for (locus_copy_hint_t h : {LOCUS_COPY_HINT_NONE, LOCUS_COPY_HINT_NT_DEST})
        ASSERT_TRUE(big.run(kPolled, (12u << 20) - 3, 3, 61, 0, h));
}

INSTANTIATE_TEST_SUITE_P(All, Kernel, ::testing::ValuesIn(available_kernels()), kernel_name);

TEST(CopyKernels, NamesAndLookupAgree)
{
    ASSERT_GE(locus_copy_num_kernels(), 14);
    for (int k = 0; k < locus_copy_num_kernels(); k++) {
        const char *n = locus_copy_kernel_name(k);
        ASSERT_NE(n, nullptr);
        EXPECT_EQ(locus_copy_kernel_find(n), k);
        bool nt = std::strstr(n, "-nt") != nullptr, pf = std::strstr(n, "pf") != nullptr;
        EXPECT_EQ(locus_copy_kernel_nt_dest(k), nt) << n;
        EXPECT_EQ(locus_copy_kernel_nt_source(k), pf) << n;
    }
    EXPECT_EQ(locus_copy_kernel_name(-1), nullptr);
    EXPECT_EQ(locus_copy_kernel_name(locus_copy_num_kernels()), nullptr);
    EXPECT_EQ(locus_copy_kernel_find("avx1024"), -1);
    EXPECT_TRUE(locus_copy_kernel_available(locus_copy_kernel_find("libc")));
    EXPECT_TRUE(locus_copy_kernel_available(locus_copy_kernel_find("sse2-nt")));
}

TEST(CopyKernels, InfoDescribesEveryKernel)
{
    for (int k = 0; k < locus_copy_num_kernels(); k++) {
        locus_copy_kernel_info_t i;
        ASSERT_EQ(locus_copy_kernel_info(k, &i), LOCUS_OK);
        EXPECT_STREQ(i.name, locus_copy_kernel_name(k));
        EXPECT_EQ(i.nt_dest, locus_copy_kernel_nt_dest(k)) << i.name;
        EXPECT_EQ(i.nt_source, locus_copy_kernel_nt_source(k)) << i.name;
        EXPECT_EQ(i.available, locus_copy_kernel_available(k)) << i.name;
        // The name is the family, then -nt / -pf / -ntpf for the variants.
        std::string suffix = i.nt_dest ? (i.nt_source ? "-ntpf" : "-nt") : i.nt_source ? "-pf" : "";
        EXPECT_EQ(std::string(i.name), std::string(i.family) + suffix);
        EXPECT_NE(i.isa, nullptr);
        // Every kernel with a variant finds it in its own family, and itself.
        EXPECT_EQ(locus_copy_kernel_variant(k, i.nt_dest, i.nt_source), k) << i.name;
        int v = locus_copy_kernel_variant(k, !i.nt_dest, i.nt_source);
        if (v >= 0) {
            locus_copy_kernel_info_t j;
            ASSERT_EQ(locus_copy_kernel_info(v, &j), LOCUS_OK);
            EXPECT_STREQ(j.family, i.family);
            EXPECT_EQ(j.nt_dest, !i.nt_dest);
        }
        // The function pointer exists exactly when the CPU can run it, and copies.
        locus_copy_fn_t fn = locus_copy_kernel_fn(k);
        EXPECT_EQ(fn != nullptr, locus_copy_kernel(k, nullptr, nullptr, 0) == LOCUS_OK) << i.name;
        if (fn) {
            Buffers b(300);
            fn(b.dst.data() + kGuard, b.src.data(), 300);
            EXPECT_EQ(std::memcmp(b.dst.data() + kGuard, b.src.data(), 300), 0) << i.name;
        }
    }
    EXPECT_EQ(locus_copy_kernel_info(0, nullptr), LOCUS_ERR_INVALID);
    locus_copy_kernel_info_t i;
    EXPECT_EQ(locus_copy_kernel_info(-1, &i), LOCUS_ERR_INVALID);
    EXPECT_EQ(locus_copy_kernel_info(locus_copy_num_kernels(), &i), LOCUS_ERR_INVALID);
    EXPECT_EQ(locus_copy_kernel_variant(locus_copy_kernel_find("avx2-ntpf"), true, false),
              locus_copy_kernel_find("avx2-nt"));
    EXPECT_EQ(locus_copy_kernel_variant(locus_copy_kernel_find("sse2"), false, true),
              locus_copy_kernel_find("sse2-pf"));
    EXPECT_EQ(locus_copy_kernel_variant(locus_copy_kernel_find("libc"), true, false), -1);
    EXPECT_EQ(locus_copy_kernel_variant(-1, false, false), -1);
    EXPECT_EQ(locus_copy_kernel_fn(-1), nullptr);
    EXPECT_EQ(locus_copy_kernel_fn(locus_copy_num_kernels()), nullptr);
}

TEST(CopySelector, PublicCallsAroundThresholds)
{
    locus_copy_ctx_t *ctx = nullptr;
    ASSERT_EQ(locus_copy_default_ctx(&ctx), LOCUS_OK) << locus_last_error();
    locus_copy_params_t p;
    ASSERT_EQ(locus_copy_ctx_params(ctx, &p), LOCUS_OK);
    ASSERT_GT(p.nt_min, 0u);
    size_t t = p.nt_min;
    Buffers b(t + 64);
    for (size_t len : {t - 1, t, t + 1, t + 63})
        for (int h = 0; h < 4; h++) {
            ASSERT_TRUE(b.run(-1, len, 5, 59, 0, (locus_copy_hint_t)h)) << "len " << len << " hint " << h;
            // A piece whose total crosses the threshold while the piece does not.
            ASSERT_TRUE(b.run(-1, 4096 + 3, 1, 2, len, (locus_copy_hint_t)h)) << "total " << len;
        }
    for (size_t len = 0; len <= 300; len++)
        ASSERT_TRUE(b.run(-1, len, len % 64, (len * 7) % 64)) << len;
}

TEST(CopyBadInput, UnknownHintNullAndTotal)
{
    char a[64] = {1}, c[64] = {0};
    EXPECT_EQ(locus_copy(nullptr, nullptr, 0, LOCUS_COPY_HINT_NONE), LOCUS_OK);
    EXPECT_EQ(locus_copy_part(nullptr, nullptr, 0, 0, LOCUS_COPY_HINT_NT_BOTH), LOCUS_OK);
    EXPECT_EQ(locus_copy_kernel(0, nullptr, nullptr, 0), LOCUS_OK);

    EXPECT_EQ(locus_copy(c, a, 8, (locus_copy_hint_t)7), LOCUS_ERR_INVALID);
    EXPECT_NE(std::string(locus_last_error()).find("hint 7"), std::string::npos) << locus_last_error();
    EXPECT_EQ(locus_copy(c, a, 0, (locus_copy_hint_t)-1), LOCUS_ERR_INVALID);

    EXPECT_EQ(locus_copy(nullptr, a, 8, LOCUS_COPY_HINT_NONE), LOCUS_ERR_INVALID);
    EXPECT_NE(std::string(locus_last_error()).find("dst NULL"), std::string::npos) << locus_last_error();
    EXPECT_EQ(locus_copy(c, nullptr, 8, LOCUS_COPY_HINT_NONE), LOCUS_ERR_INVALID);

    EXPECT_EQ(locus_copy_part(c, a, 16, 8, LOCUS_COPY_HINT_NONE), LOCUS_ERR_INVALID);
    EXPECT_NE(std::string(locus_last_error()).find("total_len 8"), std::string::npos);

    EXPECT_EQ(locus_copy_kernel(-1, c, a, 8), LOCUS_ERR_INVALID);
    EXPECT_EQ(locus_copy_kernel(locus_copy_num_kernels(), c, a, 8), LOCUS_ERR_INVALID);
    EXPECT_EQ(c[0], 0); // nothing copied by any failed call
}

TEST(CopyBadInput, OverlapRejectedInDebugBuilds)
{
#ifdef NDEBUG
    GTEST_SKIP() << "release build: the overlap contract is checked in debug builds only";
#else
    // (locus_copy)(...) calls the library function, not the header's inline fast path.
    char buf[256];
    for (int i = 0; i < 256; i++) buf[i] = (char)i;
    EXPECT_EQ((locus_copy)(buf + 1, buf, 100, LOCUS_COPY_HINT_NONE), LOCUS_ERR_INVALID);
    EXPECT_NE(std::string(locus_last_error()).find("overlap"), std::string::npos);
    EXPECT_EQ((locus_copy)(buf, buf + 99, 100, LOCUS_COPY_HINT_NT_DEST), LOCUS_ERR_INVALID);
    EXPECT_EQ((locus_copy_part)(buf, buf + 50, 100, 1 << 30, LOCUS_COPY_HINT_NONE), LOCUS_ERR_INVALID);
    EXPECT_EQ(locus_copy_kernel(locus_copy_kernel_find("sse2"), buf + 8, buf, 64), LOCUS_ERR_INVALID);
    EXPECT_EQ(buf[1], 1); // untouched
    // Adjacent is not overlapping.
    EXPECT_EQ((locus_copy)(buf + 100, buf, 100, LOCUS_COPY_HINT_NONE), LOCUS_OK);
#endif
}

// What the kernel says the CPU can do (it lists avx2/avx512f only when it
// enabled their register state): an independent view of the cpuid dispatch.
static std::string isa_from_proc_cpuinfo()
{
    std::ifstream f("/proc/cpuinfo");
    std::string line;
    while (std::getline(f, line)) {
        if (line.rfind("flags", 0) != 0)
            continue;
        std::istringstream words(line.substr(line.find(':') + 1));
        bool avx2 = false, avx512 = false;
        for (std::string w; words >> w;) {
            avx2 |= w == "avx2";
            avx512 |= w == "avx512f";
        }
        return avx512 && avx2 ? "avx512" : avx2 ? "avx2" : "sse2";
    }
    return "";
}

// The multi-NUMA VM guest (TCG) has AVX2 but no AVX-512: its test run sets
// LOCUS_TEST_EXPECT_ISA=avx2. Elsewhere the expectation comes from /proc/cpuinfo.
TEST(CopyKernels, DispatchMatchesExpectedIsa)
{
    const char *want = std::getenv("LOCUS_TEST_EXPECT_ISA");
    std::string w = want ? want : isa_from_proc_cpuinfo();
    if (w.empty())
        GTEST_SKIP() << "LOCUS_TEST_EXPECT_ISA not set and no flags line in /proc/cpuinfo";
    if (std::getenv("LOCUS_COPY_ISA"))
        GTEST_SKIP() << "LOCUS_COPY_ISA caps the dispatch";
    bool avx2 = w == "avx2" || w == "avx512", avx512 = w == "avx512";
    EXPECT_EQ(locus_copy_kernel_available(locus_copy_kernel_find("avx2-nt")), avx2);
    EXPECT_EQ(locus_copy_kernel_available(locus_copy_kernel_find("avx512")), avx512);
    char a[64] = {1}, b[64];
    EXPECT_EQ(locus_copy_kernel(locus_copy_kernel_find("avx512-nt"), b, a, 64),
              avx512 ? LOCUS_OK : LOCUS_ERR_UNSUPPORTED);
    const char *cal = std::getenv("LOCUS_COPY_CALIBRATION");
    if (!cal || std::string(cal) != "none")
        return; // a calibration file may choose another NT family
    locus_copy_ctx_t *ctx = nullptr;
    ASSERT_EQ(locus_copy_default_ctx(&ctx), LOCUS_OK);
    locus_copy_params_t p;
    ASSERT_EQ(locus_copy_ctx_params(ctx, &p), LOCUS_OK);
    EXPECT_STREQ(locus_copy_kernel_name(p.nt), avx2 ? "avx2-nt" : "sse2-nt");
}

TEST(CopySelector, ForcingTheDefaultContextReachesTheInlinePath)
{
    locus_copy_ctx_t *ctx = nullptr;
    ASSERT_EQ(locus_copy_default_ctx(&ctx), LOCUS_OK);
    locus_copy_params_t p;
    ASSERT_EQ(locus_copy_ctx_params(ctx, &p), LOCUS_OK);
    if (p.forced_kernel >= 0)
        GTEST_SKIP() << "LOCUS_COPY_KERNEL is set";
    int k = locus_copy_kernel_find("sse2-ntpf");
    ASSERT_EQ(locus_copy_ctx_force(ctx, k), LOCUS_OK);
    for (int h = 0; h < 4; h++)
        EXPECT_EQ(locus_copy_memcpy_below_[h], 0u) << "copies from LOCUS_COPY_MEMCPY_ALWAYS_BELOW_ on must reach the forced kernel";
    EXPECT_EQ(locus_copy_ctx_select(ctx, 64, LOCUS_COPY_HINT_NONE), k);
    Buffers b(4096);
    for (size_t len : {0, 1, 64, 1000, 4096})
        ASSERT_TRUE(b.run(-1, len, 7, 9)) << len;
    ASSERT_EQ(locus_copy_ctx_force(ctx, -1), LOCUS_OK);
#ifdef NDEBUG
    EXPECT_EQ(locus_copy_memcpy_below_[0], p.nt_min);
#else
    EXPECT_EQ(locus_copy_memcpy_below_[0], 0u) << "debug builds check every call";
#endif
    locus_copy_ctx_destroy(ctx); // the process-wide context survives this
    ASSERT_TRUE(b.run(-1, 100, 1, 2));
    ASSERT_EQ(locus_copy_default_ctx(&ctx), LOCUS_OK);
    EXPECT_EQ(locus_copy_ctx_select(ctx, 64, LOCUS_COPY_HINT_NONE), locus_copy_kernel_find("libc"));
}
