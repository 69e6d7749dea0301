// The preload shim never changes what a program does: every interposed call
// from a library constructor that runs before the shim's, from a thread that
// library starts, across fork/vfork/exec/spawn/system, with jemalloc or
// tcmalloc preloaded, with C++ new/delete; the profiler tells "the shim could
// not load" from "the program died" (and where); the shim exports only the
// names it interposes.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shell_quote.h"

static const std::string BIN = LOCUS_BINARY_DIR;
static const std::string LOCUS = shq(BIN + "/bin/locus"); // a shell word
static const std::string SHIM = BIN + "/lib/liblocus_prof_preload.so";

static std::string slurp(const std::string &p)
{
    std::ifstream f(p);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

struct Outcome {
    int status; // exit code, or 128 + signal
    std::string out;
};

static Outcome run(const std::string &cmd, const std::string &dir)
{
    std::string out = dir + "/stdout";
    // a hang is a failure (status 124), not a stuck suite
    int st = std::system(("timeout -k 5 300 sh -c " + shq(cmd) + " >" + out + " 2>>" + dir + "/stderr").c_str());
    int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return {code, slurp(out)};
}

class ProfShim : public ::testing::Test {
  protected:
    std::string dir;
    void SetUp() override
    {
        char t[] = "/tmp/test_prof_shimXXXXXX";
        ASSERT_NE(mkdtemp(t), nullptr);
        dir = t;
    }
    void TearDown() override { std::system(("rm -rf " + dir).c_str()); }

    // The same stdout and exit status with and without the profiler.
    void same(const std::string &cmd, const std::string &env = "")
    {
        Outcome a = run(env + " " + cmd, dir);
        Outcome b = run(env + " " + LOCUS + " profile -q -o " + dir + "/p.json -- " + cmd, dir);
        EXPECT_EQ(a.status, b.status) << cmd << "\n" << slurp(dir + "/stderr");
        EXPECT_EQ(a.out, b.out) << cmd;
        EXPECT_FALSE(a.out.empty()) << cmd;
    }
};

// Issue #12 part 4: no shim internals (S, shim_guard, shim_lock, lc_*) in
// every profiled program's symbol namespace.
TEST_F(ProfShim, ExportsOnlyInterposedNames)
{
    static const std::set<std::string> allowed = {
        "malloc", "calloc", "realloc", "reallocarray", "free", "posix_memalign", "aligned_alloc", "memalign",
        "valloc", "pvalloc", "malloc_usable_size", "mmap", "mmap64", "munmap", "mremap", "mprotect",
        "execve", "execv", "execvp", "execvpe", "execl", "execlp", "execle", "fexecve", "posix_spawn",
        "posix_spawnp", "system", "sigaction", "signal", "sigaltstack", "pthread_attr_setstack",
        "read", "write", "pread", "pwrite", "pread64", "pwrite64", "readv", "writev", "preadv", "pwritev",
        "recv", "recvfrom", "send", "sendto", "recvmsg", "sendmsg", "fread", "fwrite",
        "shmem_malloc", "shmem_malloc_with_hints", "shmem_calloc", "shmem_align", "shmem_realloc", "shmem_free",
        "shmalloc", "shmemalign", "shrealloc", "shfree", "process_vm_readv", "process_vm_writev", "move_pages"};
    FILE *p = popen(("nm -D --defined-only " + shq(SHIM) + " 2>&1").c_str(), "r");
    ASSERT_NE(p, nullptr);
    char line[512];
    int n = 0;
    std::string unexpected;
    while (fgets(line, sizeof line, p)) {
        char addr[64], type[8], name[256];
        if (sscanf(line, "%63s %7s %255s", addr, type, name) != 3)
            continue;
        n++;
        if (!allowed.count(name))
            unexpected += std::string(" ") + name + " (" + type + ")";
    }
    ASSERT_EQ(pclose(p), 0) << "nm -D failed on " << SHIM;
    EXPECT_GE(n, 20) << "the shim exports too little: was it built?";
    EXPECT_TRUE(unexpected.empty()) << "exported beyond the interposed names:" << unexpected;
}

// A library constructor allocates (and starts a thread that keeps
// allocating) before the shim's constructor; every interposed call from
// threads, fork, vfork, exec, posix_spawn, system. Before the fix this died
// of SIGSEGV in record_alloc.
TEST_F(ProfShim, StressProgramBehavesTheSame)
{
    same(shq(BIN + "/examples/prof_stress"));
    std::string j = slurp(dir + "/p.json");
    EXPECT_NE(j.find("\"shim\": {\"status\": \"ok\""), std::string::npos) << j.substr(0, 600);
    // the parent, the fork child, 5 exec'd children (execv, execl, vfork+execve,
    // posix_spawn, system's sh and its child): all with the shim
    auto pos = j.find("\"processes\": ");
    ASSERT_NE(pos, std::string::npos);
    EXPECT_GE(std::atoi(j.c_str() + pos + 13), 8) << j.substr(pos, 80);
    // the constructor's allocations came before the shim started: counted
    pos = j.find("\"early_allocations\": ");
    ASSERT_NE(pos, std::string::npos);
    EXPECT_GT(std::atol(j.c_str() + pos + 21), 0);
    EXPECT_NE(j.find("\"name\": \"grid\""), std::string::npos); // named after the shim started
}

// More threads than cpus update a small table while the access sampler
// arms its pages as fast as it can: handlers that run late (for a fault of
// an earlier arming of the same page) meet the sampler re-arming it. A page
// must never stay protected with no slot naming it (the CI's 4-node guest
// saw the table example die of SIGSEGV that way). Every round must behave as
// without the profiler, and the sampler must have sampled.
TEST_F(ProfShim, ReArmingUnderManyThreadsNeverKillsTheProgram)
{
    for (const char *kib : {"64", "2048"})
        for (int round = 0; round < 3; round++) {
            same(shq(BIN + "/examples/prof_rearm") + " 8 3000000 " + kib, "LOCUS_PROF_ACCESS_RATE=100000");
            std::string j = slurp(dir + "/p.json");
            auto pos = j.find("\"access_samples\": ");
            ASSERT_NE(pos, std::string::npos) << j.substr(0, 600);
            EXPECT_GT(std::atol(j.c_str() + pos + 18), 0) << "the sampler never sampled: the test tests nothing";
        }
}

TEST_F(ProfShim, CxxNewDeleteBehavesTheSame) { same(shq(BIN + "/examples/prof_cxx")); }

static std::string find_lib(const char *name)
{
    for (const char *d : {"/usr/lib/x86_64-linux-gnu/", "/lib/x86_64-linux-gnu/", "/usr/lib64/", "/usr/lib/"}) {
        std::string p = std::string(d) + name;
        if (access(p.c_str(), R_OK) == 0)
            return p;
    }
    return "";
}

// The program's own allocator preloaded after the shim: the shim forwards to
// it (RTLD_NEXT), never mixes it with libc's.
TEST_F(ProfShim, JemallocPreloaded)
{
    std::string lib = find_lib("libjemalloc.so.2");
    if (lib.empty())
        GTEST_SKIP() << "libjemalloc.so.2 not installed (Debian libjemalloc2; scripts/deps.sh installs it)";
    same(shq(BIN + "/examples/prof_stress"), "PROF_STRESS_STD=1 LD_PRELOAD=" + lib);
    same(shq(BIN + "/examples/prof_cxx"), "LD_PRELOAD=" + lib);
}

TEST_F(ProfShim, TcmallocPreloaded)
{
    std::string lib = find_lib("libtcmalloc_minimal.so.4");
    if (lib.empty())
        GTEST_SKIP() << "libtcmalloc_minimal.so.4 not installed (Debian libtcmalloc-minimal4; scripts/deps.sh)";
    same(shq(BIN + "/examples/prof_stress"), "PROF_STRESS_STD=1 LD_PRELOAD=" + lib);
    same(shq(BIN + "/examples/prof_cxx"), "LD_PRELOAD=" + lib);
}

// The program dies: the report says of what and where, not that the shim did
// not load; the profiler's status is the program's.
TEST_F(ProfShim, DeathBySignalIsToldWithItsLine)
{
    std::string src = slurp(std::string(LOCUS_SOURCE_DIR) + "/examples/prof/crash.c");
    int line = 0, n = 0;
    std::istringstream is(src);
    for (std::string l; std::getline(is, l);)
        if (++n && l.find("CRASH_LINE") != std::string::npos && l.find("*nowhere") != std::string::npos)
            line = n;
    ASSERT_GT(line, 0);
    Outcome r = run(LOCUS + " profile -o " + dir + "/c.json -- " + shq(BIN + "/examples/prof_crash"), dir);
    EXPECT_EQ(r.status, 128 + 11);
    EXPECT_EQ(r.out, "before the crash: 1000\n");
    std::string err = slurp(dir + "/stderr");
    EXPECT_NE(err.find("died of signal 11 (SIGSEGV) at crash.c:" + std::to_string(line)), std::string::npos) << err;
    EXPECT_EQ(err.find("did not load"), std::string::npos) << err;
    std::string j = slurp(dir + "/c.json");
    EXPECT_NE(j.find("\"signal_name\": \"SIGSEGV\""), std::string::npos);
    EXPECT_NE(j.find("\"location\": \"crash.c:" + std::to_string(line) + "\""), std::string::npos) << j.substr(0, 400);
    EXPECT_NE(j.find("\"shim\": {\"status\": \"ok\""), std::string::npos);
}

// A static program: the shim cannot load, and the report says so.
TEST_F(ProfShim, StaticProgramIsToldApart)
{
    const char *bb = "/bin/busybox";
    if (access(bb, X_OK) != 0)
        GTEST_SKIP() << "no /bin/busybox (Debian busybox-static, a static program)";
    Outcome r = run(LOCUS + " profile -o " + dir + "/s.json -- /bin/busybox echo hi", dir);
    EXPECT_EQ(r.status, 0);
    EXPECT_EQ(r.out, "hi\n");
    std::string j = slurp(dir + "/s.json");
    EXPECT_NE(j.find("static program: the preload shim cannot load"), std::string::npos) << j.substr(0, 800);
    EXPECT_EQ(j.find("died of signal"), std::string::npos);
}
