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

#include "shell_quote.h"

static const std::string BIN = LOCUS_BINARY_DIR;
static const std::string LOCUS = shq(BIN + "/bin/locus"); // a shell word

static std::string err_file = "/dev/null"; // per test (ctest runs tests in parallel)

static int run(const std::string &cmd)
{
    int st = std::system((cmd + " >/dev/null 2>" + shq(err_file)).c_str());
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
    EXPECT_EQ(run(LOCUS + " profile -q -o " + out + " -- " + shq(BIN + "/examples/numa_spawn")), 3);
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
    EXPECT_EQ(run(LOCUS + " profile -q -o " + out + " -- " + shq(BIN + "/examples/numa_halo_stripped")), 0);
    std::string j = slurp(out);
    EXPECT_NE(j.find("\"symbols\": \"missing\""), std::string::npos);
    EXPECT_NE(j.find("numa_halo_stripped+0x"), std::string::npos); // module+offset locations
}

TEST_F(ProfCli, Unprivileged)
{
    if (geteuid() != 0 || access("/usr/bin/setpriv", X_OK) != 0)
        GTEST_SKIP() << "needs root (to drop to nobody) and setpriv";
    const std::string nobody = "setpriv --reuid=65534 --regid=65534 --clear-groups ";
    const std::string spawn = shq(BIN + "/examples/numa_spawn");
    // A checkout under a directory that others cannot enter (/root, mode 0700)
    // has a build tree that nobody can run from: nothing to test there.
    if (run(nobody + "test -x " + LOCUS + " -a -r " + spawn) != 0)
        GTEST_SKIP() << "the build tree " << BIN << " is not reachable by an unprivileged user (a parent directory "
                     << "without search permission for others, e.g. /root mode 0700)";
    std::string out = dir + "/u.json";
    int rc = run(nobody + LOCUS + " profile -q -o " + out + " -- " + spawn);
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
    EXPECT_EQ(run(LOCUS + " profile -q --access-rate 20000 -o " + out + " -- " + shq(BIN + "/examples/numa_iosafe")), 0)
        << slurp(err_file);
    std::string j = slurp(out);
    auto pos = j.find("\"access_samples\": ");
    ASSERT_NE(pos, std::string::npos);
    EXPECT_GT(std::atol(j.c_str() + pos + 18), 0);
}

// -o with %r outside an MPI job is a usage error that says why.
TEST_F(ProfCli, RankPatternNeedsAJob)
{
    EXPECT_EQ(run("env -u PMIX_RANK -u OMPI_COMM_WORLD_RANK -u PMI_RANK -u SLURM_PROCID " + LOCUS +
                  " profile -q -o " + dir + "/p.%r.json -- true"),
              2);
    EXPECT_NE(slurp(err_file).find("%r is the MPI rank"), std::string::npos) << slurp(err_file);
    EXPECT_EQ(run(LOCUS + " profile -q -o " + dir + "/p.%p.json -- true"), 0); // %p: the program's pid
    EXPECT_EQ(run("ls " + dir + "/p.*.json | grep -q 'p\\.[0-9][0-9]*\\.json'"), 0);
    EXPECT_EQ(run(LOCUS + " profile --merge"), 2);
    EXPECT_EQ(run(LOCUS + " profile --merge " + dir + "/none.json"), 1);
}

// mpirun -np 2 locus profile -o prof.%r.json: one profile per rank, the
// rank's line on the terminal, one job report from --merge.
TEST_F(ProfCli, OneProfilePerRankAndAJobReport)
{
    std::string app = BIN + "/examples/mpi_field";
    if (access("/usr/bin/mpirun", X_OK) != 0 || access(app.c_str(), X_OK) != 0)
        GTEST_SKIP() << "needs mpirun (Debian openmpi-bin) and examples/mpi_field (libopenmpi-dev)";
    std::string mpirun = "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
                         "OMPI_MCA_rmaps_base_oversubscribe=1 timeout -k 5 300 /usr/bin/mpirun -np 2 ";
    EXPECT_EQ(run("cd " + dir + " && " + mpirun + LOCUS + " profile -o prof.%r.json -- " + shq(app)), 0)
        << slurp(err_file);
    std::string err = slurp(err_file);
    EXPECT_NE(err.find("rank 0 of 2"), std::string::npos) << err;
    EXPECT_NE(err.find("rank 1 of 2"), std::string::npos) << err;
    EXPECT_NE(err.find("locus profile --merge prof.*.json"), std::string::npos) << err;
    for (int r = 0; r < 2; r++) {
        std::string j = slurp(dir + "/prof." + std::to_string(r) + ".json");
        EXPECT_NE(j.find("\"job\": {\"rank\": " + std::to_string(r) + ", \"size\": 2"), std::string::npos) << j.substr(0, 500);
        EXPECT_NE(j.find("\"name\": \"field\""), std::string::npos);
        // the access sampler stays off in a job unless asked for
        EXPECT_NE(j.find("off in an MPI job"), std::string::npos);
    }
    std::string out = dir + "/job.txt";
    EXPECT_EQ(run("cd " + dir + " && " + LOCUS + " profile --merge -o job.json prof.*.json >" + out + " 2>&1 && cat " +
                  out + " >&2"),
              0);
    std::string job = slurp(out);
    EXPECT_NE(job.find("2 ranks on 1 host"), std::string::npos) << job;
    EXPECT_NE(job.find("field"), std::string::npos) << job;
    EXPECT_NE(slurp(dir + "/job.json").find("\"schema\": \"locus-job/1\""), std::string::npos);
}
