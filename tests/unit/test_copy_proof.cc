// The copy self-test: measured once per machine and cached, the cache used
// only on the machine (CPU, L3, glibc, ISA) that wrote it, its answer driving
// the selector (which kernel, from which size), and the ways to turn it off.
// The proof is once per process, so each case runs in a forked child.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

extern "C" {
#include <locus/copy.h>
#include "copy/proof.h"
}

namespace {

std::string tmpdir()
{
    char t[] = "/tmp/locus-proof-XXXXXX";
    return mkdtemp(t);
}

std::string slurp(const std::string &path)
{
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

// Run fn in a child with XDG_CACHE_HOME=dir; its exit status (0 = all good).
// The machine looks quiet to the self-test (a cache it writes is final, one
// it reads is kept), whatever else the test suite runs meanwhile.
template <class F> int in_child(const std::string &dir, F fn)
{
    static std::string quiet;
    quiet = dir + "/stat-quiet";
    std::ofstream(quiet) << "procs_running 1\n";
    pid_t pid = fork();
    if (pid == 0) {
        copy_proc_stat = quiet.c_str();
        setenv("XDG_CACHE_HOME", dir.c_str(), 1);
        setenv("LOCUS_COPY_CALIBRATION", "none", 1);
        setenv("LOCUS_TUNE_FILE", "none", 1);
        _exit(fn());
    }
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 100 + WTERMSIG(st);
}

locus_copy_params_t default_params()
{
    locus_copy_ctx_t *c = nullptr;
    locus_copy_params_t p{};
    if (locus_copy_default_ctx(&c) == LOCUS_OK)
        locus_copy_ctx_params(c, &p);
    return p;
}

}  // namespace

TEST(CopyProof, MeasuresOnceAndCaches)
{
    std::string dir = tmpdir(), file = dir + "/locus/copy-selftest.conf";
    int rc = in_child(dir, [] {
        locus_copy_params_t p = default_params();
        // the answer is self-consistent: NT from a measured size, or never
        if (std::string(p.nt_min_origin).rfind("self-test 20", 0) != 0) return 1;
        if (p.nt_min != UINT64_MAX && (p.nt_min < (1u << 20) || p.nt_min > (64u << 20))) return 2;
        return 0;
    });
    ASSERT_EQ(rc, 0);
    std::string text = slurp(file);
    ASSERT_NE(text.find("key="), std::string::npos) << text;
    ASSERT_NE(text.find("nt_min="), std::string::npos) << text;
    // a second process reads the cache instead of measuring
    rc = in_child(dir, [] {
        locus_copy_params_t p = default_params();
        return std::string(p.nt_min_origin).find("self-test cache") == 0 ? 0 : 1;
    });
    EXPECT_EQ(rc, 0);
    std::system(("rm -rf " + dir).c_str());
}

TEST(CopyProof, CachedAnswerDrivesTheSelector)
{
    std::string dir = tmpdir();
    // write a valid proof for this machine: NT (plain, no prefetch) from 4 MiB
    int rc = in_child(dir, [] {
        copy_proof_t pr{};
        pr.valid = true;
        pr.kernel = locus_copy_kernel_find("sse2-nt");
        pr.nt_min = 4u << 20;
        pr.libc_from = 128ull << 20; // glibc's own NT path won past its threshold
        snprintf(pr.origin, sizeof pr.origin, "self-test test");
        return copy_proof_save(&pr) == 0 ? 0 : 1;
    });
    ASSERT_EQ(rc, 0);
    rc = in_child(dir, [] {
        locus_copy_params_t p = default_params();
        if (p.nt_min != (4u << 20)) return 1;
        if (std::string(locus_copy_kernel_name(p.ntpf)) != "sse2-nt") return 2;  // big copies
        locus_copy_ctx_t *c;
        locus_copy_default_ctx(&c);
        if (locus_copy_ctx_select(c, (4u << 20) - 1, LOCUS_COPY_HINT_NONE) != 0) return 3;  // libc
        if (locus_copy_ctx_select(c, 64u << 20, LOCUS_COPY_HINT_NONE) != p.ntpf) return 4;
        if (p.libc_from != (128ull << 20)) return 7;
        if (locus_copy_ctx_select(c, 128ull << 20, LOCUS_COPY_HINT_NONE) != 0) return 8;  // libc again
        if (locus_copy_ctx_select(c, 256ull << 20, LOCUS_COPY_HINT_NT_DEST) != 0) return 9;
        // the prefetch kernels lost: hinted copies do not use them
        if (std::string(locus_copy_kernel_name(p.pf)) != "libc") return 5;
        // and the copy itself is right on both sides of the threshold
        for (size_t n : {size_t(1) << 20, size_t(6) << 20}) {
            std::string a(n, 'x'), b(n, 'y');
            for (size_t i = 0; i < n; i += 4093) a[i] = char(i);
            if (locus_copy(&b[0], a.data(), n, LOCUS_COPY_HINT_NONE) || a != b) return 6;
        }
        return 0;
    });
    EXPECT_EQ(rc, 0);
    // LOCUS_COPY_NT_KERNEL overrides the winner
    rc = in_child(dir, [] {
        setenv("LOCUS_COPY_NT_KERNEL", "sse2-ntpf", 1);
        locus_copy_params_t p = default_params();
        return std::string(locus_copy_kernel_name(p.ntpf)) == "sse2-ntpf" && p.nt_min == (4u << 20) ? 0 : 1;
    });
    EXPECT_EQ(rc, 0);
    std::system(("rm -rf " + dir).c_str());
}

// A big-copy answer of rep movsb (it won on a Zen 5): big copies use it,
// copies hinted NT still get an NT kernel (movsb has no NT variant).
TEST(CopyProof, MovsbAnswerDrivesTheSelector)
{
    std::string dir = tmpdir();
    int movsb = locus_copy_kernel_find("movsb");
    if (!locus_copy_kernel_available(movsb))
        GTEST_SKIP() << "this CPU has no ERMS: rep movsb is never a candidate";
    int rc = in_child(dir, [movsb] {
        copy_proof_t pr{};
        pr.valid = true;
        pr.kernel = movsb;
        pr.nt_min = 16u << 20;
        pr.libc_from = UINT64_MAX;
        snprintf(pr.origin, sizeof pr.origin, "self-test test");
        return copy_proof_save(&pr) == 0 ? 0 : 1;
    });
    ASSERT_EQ(rc, 0);
    rc = in_child(dir, [movsb] {
        locus_copy_params_t p = default_params();
        if (p.nt_min != (16u << 20) || p.ntpf != movsb) return 1;
        locus_copy_ctx_t *c;
        locus_copy_default_ctx(&c);
        if (locus_copy_ctx_select(c, 64u << 20, LOCUS_COPY_HINT_NONE) != movsb) return 2;
        if (locus_copy_ctx_select(c, (16u << 20) - 1, LOCUS_COPY_HINT_NONE) != 0) return 3;
        if (!locus_copy_kernel_nt_dest(p.nt)) return 4;  // hinted NT copies stay NT
        std::string a(20u << 20, 'x'), b(20u << 20, 'y');
        for (size_t i = 0; i < a.size(); i += 4093) a[i] = char(i);
        return locus_copy(&b[0], a.data(), a.size(), LOCUS_COPY_HINT_NONE) == LOCUS_OK && a == b ? 0 : 5;
    });
    EXPECT_EQ(rc, 0);
    std::system(("rm -rf " + dir).c_str());
}

// A self-test run while the machine was busy is provisional: a later process
// that starts on a quiet machine measures again (and that answer is final);
// one on a busy machine keeps it; after PROVISIONAL_MAX busy runs it stays.
TEST(CopyProof, BusyAnswerIsProvisionalAndMeasuredAgainWhenQuiet)
{
    std::string dir = tmpdir(), file = dir + "/locus/copy-selftest.conf";
    std::string busy = dir + "/stat-busy", quiet = dir + "/stat-quiet";
    std::ofstream(busy) << "cpu  1 2 3 4\nprocs_running 3\nprocs_blocked 0\n";
    std::ofstream(quiet) << "cpu  1 2 3 4\nprocs_running 1\nprocs_blocked 0\n";
    auto origin_with = [&](const std::string &stat) {
        return in_child(dir, [&stat] {
            copy_proc_stat = stat.c_str();
            std::string o = default_params().nt_min_origin;
            return o.rfind("self-test 20", 0) == 0 ? 10 : o.find("provisional") != std::string::npos ? 11 : 12;
        });
    };
    EXPECT_EQ(origin_with(busy), 10);  // measured, busy
    EXPECT_NE(slurp(file).find("provisional=1"), std::string::npos) << slurp(file);
    EXPECT_EQ(origin_with(busy), 11);  // still busy: the provisional answer is used
    EXPECT_EQ(origin_with(quiet), 10); // quiet: measured again ...
    EXPECT_EQ(slurp(file).find("provisional"), std::string::npos) << slurp(file); // ... and final
    EXPECT_EQ(origin_with(quiet), 12);  // read from the cache as it is
    // a cache that was measured busy PROVISIONAL_MAX times stays
    std::string text = slurp(file);
    size_t at = text.find("origin=");
    ASSERT_NE(at, std::string::npos);
    text.insert(at, "provisional=4\n");
    std::ofstream(file) << text;
    EXPECT_EQ(origin_with(quiet), 11);
    std::system(("rm -rf " + dir).c_str());
}

TEST(CopyProof, CacheOfAnotherMachineIsIgnored)
{
    std::string dir = tmpdir(), file = dir + "/locus/copy-selftest.conf";
    std::system(("mkdir -p " + dir + "/locus").c_str());
    std::ofstream(file) << "key=AuthenticAMD 25/17/1, some other cpu; glibc 2.36; isa avx2\n"
                           "kernel=avx2-nt\nnt_min=1048576\norigin=elsewhere\n";
    int rc = in_child(dir, [] {
        locus_copy_params_t p = default_params();
        return std::string(p.nt_min_origin).rfind("self-test 20", 0) == 0 ? 0 : 1;  // measured anew
    });
    EXPECT_EQ(rc, 0);
    EXPECT_EQ(slurp(file).find("some other cpu"), std::string::npos) << "replaced by this machine's";
    std::system(("rm -rf " + dir).c_str());
}

TEST(CopyProof, MalformedCacheIsRemeasured)
{
    std::string dir = tmpdir(), file = dir + "/locus/copy-selftest.conf";
    int rc = in_child(dir, [] { return default_params().nt_min_origin ? 0 : 1; });
    ASSERT_EQ(rc, 0);
    std::string text = slurp(file);
    size_t at = text.find("nt_min=");
    ASSERT_NE(at, std::string::npos);
    text.replace(at, text.find('\n', at) - at, "nt_min=lots");
    std::ofstream(file) << text;
    rc = in_child(dir, [] {
        return std::string(default_params().nt_min_origin).rfind("self-test 20", 0) == 0 ? 0 : 1;
    });
    EXPECT_EQ(rc, 0);
    std::system(("rm -rf " + dir).c_str());
}

TEST(CopyProof, OffMeansTheTopologyRule)
{
    std::string dir = tmpdir();
    int rc = in_child(dir, [] {
        setenv("LOCUS_COPY_SELFTEST", "off", 1);
        locus_copy_params_t p = default_params();
        return std::string(p.nt_min_origin) == "topology" ? 0 : 1;
    });
    EXPECT_EQ(rc, 0);
    EXPECT_NE(access((dir + "/locus/copy-selftest.conf").c_str(), F_OK), 0) << "nothing measured";
    rc = in_child(dir, [] {
        setenv("LOCUS_COPY_NT_MIN", "3M", 1);
        locus_copy_params_t p = default_params();
        return p.nt_min == (3u << 20) && std::string(p.nt_min_origin) == "LOCUS_COPY_NT_MIN" ? 0 : 1;
    });
    EXPECT_EQ(rc, 0);
    std::system(("rm -rf " + dir).c_str());
}

TEST(CopyProof, SmallCopiesNeverRunIt)
{
    std::string dir = tmpdir();
    int rc = in_child(dir, [] {
        char a[4096] = {1}, b[4096];
        for (size_t n = 1; n <= 512 * 1024; n *= 2) {
            std::string x(n, 'q'), y(n, 'r');
            if (locus_copy(&y[0], x.data(), n, LOCUS_COPY_HINT_NONE) || x != y) return 1;
        }
        return locus_copy(b, a, sizeof a, LOCUS_COPY_HINT_NONE) == LOCUS_OK && copy_proof_peek() == nullptr ? 0 : 2;
    });
    EXPECT_EQ(rc, 0);
    std::system(("rm -rf " + dir).c_str());
}
