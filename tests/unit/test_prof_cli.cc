// prof end to end on this machine: exit codes passed through (forks, execs,
// threads, non-zero exit, killed by a signal), bad input, the JSON written,
// a stripped binary, and an unprivileged run (setpriv to nobody).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const std::string BIN = LOCUS_BINARY_DIR;
static const std::string LOCUS = BIN + "/bin/locus";

static std::string err_file = "/dev/null"; // per test (ctest runs tests in parallel)

static int run(const std::string &cmd)
{
    int st = std::system((cmd + " >/dev/null 2>" + err_file).c_str());
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static std::string slurp(const std::string &p)
{
    std::ifstream f(p);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

class ProfCli : public ::testing::Test {
  protected:
    std::string dir;
    void SetUp() override
    {
        char t[] = "/tmp/test_prof_cliXXXXXX";
        ASSERT_NE(mkdtemp(t), nullptr);
        dir = t;
        chmod(t, 0777);
        err_file = dir + "/err";
    }
    void TearDown() override { std::system(("rm -rf " + dir).c_str()); }
};

TEST_F(ProfCli, ExitCodesAndBadInput)
{
    EXPECT_EQ(run(LOCUS + " profile"), 2);
    EXPECT_NE(slurp(err_file).find("no program given"), std::string::npos);
    EXPECT_EQ(run(LOCUS + " profile --period -1 -- true"), 2);
    EXPECT_EQ(run(LOCUS + " profile --samplers ibs -- true"), 2);
    EXPECT_EQ(run(LOCUS + " profile -o " + dir + "/p.json -- /nonexistent/prog"), 127);
    EXPECT_NE(slurp(err_file).find("/nonexistent/prog"), std::string::npos);
    EXPECT_EQ(run(LOCUS + " profile -o " + dir + "/p.json -- /etc/hostname"), 126);
    EXPECT_EQ(run(LOCUS + " profile -o /nonexistent-dir/p.json -- true"), 1);
    EXPECT_NE(slurp(err_file).find("not writable"), std::string::npos);
    EXPECT_EQ(run(LOCUS + " profile -q -o " + dir + "/k.json -- sh -c 'kill -9 $$'"), 128 + 9);
    std::string k = slurp(dir + "/k.json");
    EXPECT_NE(k.find("\"signal\": 9"), std::string::npos) << k.substr(0, 400);
}

TEST_F(ProfCli, ForkExecThreadsNonZeroExit)
{
    std::string out = dir + "/p.json";
    EXPECT_EQ(run(LOCUS + " profile -q -o " + out + " -- " + BIN + "/examples/numa_spawn"), 3);
    std::string j = slurp(out);
    ASSERT_FALSE(j.empty());
    EXPECT_NE(j.find("\"status\": 3"), std::string::npos);
    EXPECT_NE(j.find("\"name\": \"buf\""), std::string::npos);   // named from spawn.c
    EXPECT_NE(j.find("spawn.c:"), std::string::npos);            // first touch by line
    EXPECT_NE(j.find("\"execs\": 1"), std::string::npos);        // the child exec'd
    EXPECT_NE(j.find("\"symbols\": \"ok\""), std::string::npos);
}

TEST_F(ProfCli, StrippedBinary)
{
    std::string out = dir + "/s.json";
    EXPECT_EQ(run(LOCUS + " profile -q -o " + out + " -- " + BIN + "/examples/numa_halo_stripped"), 0);
    std::string j = slurp(out);
    EXPECT_NE(j.find("\"symbols\": \"missing\""), std::string::npos);
    EXPECT_NE(j.find("numa_halo_stripped+0x"), std::string::npos); // module+offset locations
}

TEST_F(ProfCli, Unprivileged)
{
    if (geteuid() != 0 || access("/usr/bin/setpriv", X_OK) != 0)
        GTEST_SKIP() << "needs root (to drop to nobody) and setpriv";
    std::string out = dir + "/u.json";
    int rc = run("setpriv --reuid=65534 --regid=65534 --clear-groups " + LOCUS + " profile -q -o " + out + " -- " +
                 BIN + "/examples/numa_spawn");
    EXPECT_EQ(rc, 3) << slurp(err_file);
    std::string j = slurp(out);
    EXPECT_NE(j.find("\"name\": \"first-touch\", \"status\": \"on\""), std::string::npos) << j.substr(0, 800);
    EXPECT_NE(j.find("\"name\": \"buf\""), std::string::npos);
}

// The access sampler at a high rate: I/O on sampled buffers never fails with
// EFAULT, the program's own SIGSEGV handler still runs, and samples are taken.
TEST_F(ProfCli, AccessSamplerIsInvisibleToIoAndOwnHandler)
{
    std::string out = dir + "/io.json";
    EXPECT_EQ(run(LOCUS + " profile -q --access-rate 20000 -o " + out + " -- " + BIN + "/examples/numa_iosafe"), 0)
        << slurp(err_file);
    std::string j = slurp(out);
    auto pos = j.find("\"access_samples\": ");
    ASSERT_NE(pos, std::string::npos);
    EXPECT_GT(std::atol(j.c_str() + pos + 18), 0);
}
