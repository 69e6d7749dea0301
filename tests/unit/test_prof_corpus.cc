// Real programs from Debian packages that no one here wrote, each run alone
// and under `locus profile`: the same stdout, byte for byte, and the same
// exit status, with the shim loaded (the profile says "shim": "ok"). C, C++,
// Fortran, Python with numpy, an MPI application (alone and under
// mpirun -np 2), programs with their own allocator (tcmalloc, jemalloc
// linked), programs that fork and exec (make, xargs, python's subprocess).
// scripts/deps.sh installs the packages; a program that is missing is
// skipped with its package named.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "shell_quote.h"

static const std::string BIN = LOCUS_BINARY_DIR;
static const std::string LOCUS = shq(BIN + "/bin/locus"); // a shell word
static std::string DATA; // the suite's directory: input files

struct Program {
    const char *name;    // test name
    const char *lang;    // what it is written in / why it is here
    const char *package; // Debian package
    const char *exe;     // must exist to run (absolute path)
    const char *args;    // shell words after the program (may use $D, the data directory)
    const char *needs;   // a shell check that must pass (e.g. a Python module), or nullptr
};

static const Program CORPUS[] = {
    {"cmake_version", "C++ (libcurl, p11-kit constructor)", "cmake", "/usr/bin/cmake", "--version", nullptr},
    {"cmake_sha256", "C++", "cmake", "/usr/bin/cmake", "-E sha256sum $D/text $D/numbers", nullptr},
    {"python_numpy", "Python + numpy", "python3-numpy", "/usr/bin/python3",
     "-c 'import numpy as np; r = np.random.default_rng(7); a = r.integers(0, 1000, size=4_000_000); "
     "a.sort(); c = np.cumsum(a); m = np.arange(1 << 20, dtype=np.int64).reshape(1024, 1024); "
     "print(int(c[-1]), int(a[123456]), int((m @ m.T).trace() % 1000003), np.__version__)'",
     "/usr/bin/python3 -c 'import numpy'"},
    {"python_subprocess", "Python: vfork/fork + exec, non-zero exit", "python3", "/usr/bin/python3",
     "-c 'import subprocess, os, sys; print(subprocess.run([\"sh\", \"-c\", \"echo from sh; exit 4\"]).returncode); "
     "print(subprocess.check_output([\"printf\", \"%s\", \"captured\"]).decode()); sys.stdout.flush(); "
     "p = os.fork(); os._exit(5) if p == 0 else print(os.waitstatus_to_exitcode(os.waitpid(p, 0)[1])); "
     "sys.exit(3)'",
     nullptr},
    {"blas_xblat1d", "Fortran (reference BLAS tests, double)", "libblas-test",
     "/usr/lib/x86_64-linux-gnu/blas/xblat1d", "", nullptr},
    {"blas_xblat1z", "Fortran (reference BLAS tests, complex)", "libblas-test",
     "/usr/lib/x86_64-linux-gnu/blas/xblat1z", "", nullptr},
    {"xtb_version", "Fortran application", "xtb", "/usr/bin/xtb", "--version", nullptr},
    {"mpi4py_alone", "MPI application (singleton)", "python3-mpi4py", "/usr/bin/python3",
     "-m mpi4py.bench helloworld", "/usr/bin/python3 -c 'import mpi4py.MPI'"},
    {"swipl", "own allocator: tcmalloc linked", "swi-prolog-core", "/usr/bin/swipl",
     "-g 'numlist(1, 300000, L), sum_list(L, S), length(L, N), format(\"~w ~w~n\", [S, N])' -t halt", nullptr},
    {"redis_cli", "own allocator: jemalloc linked", "redis-tools", "/usr/bin/redis-cli", "--version", nullptr},
    {"make", "forks and execs (sh, commands)", "make", "/usr/bin/make", "-s -f $D/Makefile -C $D", nullptr},
    {"xargs", "forks and execs echo", "findutils", "/usr/bin/xargs", "-n 7 echo < $D/words", nullptr},
    {"xz", "C, a 94 MiB compressor state", "xz-utils", "/usr/bin/xz", "-6 -c $D/text", nullptr},
    {"bzip2", "C", "bzip2", "/bin/bzip2", "-9 -c $D/text", nullptr},
    {"gzip", "C", "gzip", "/bin/gzip", "-n -9 -c $D/text", nullptr},
    {"sqlite3", "C", "sqlite3", "/usr/bin/sqlite3",
     ":memory: 'with recursive c(x) as (select 1 union all select x + 1 from c limit 300000) "
     "select sum(x), count(*), max(x * 7 % 1009) from c;'",
     nullptr},
    {"jq", "C", "jq", "/usr/bin/jq", "-n '[range(200000)] | map(. * 3 % 101) | add'", nullptr},
    {"gawk", "C", "gawk", "/usr/bin/gawk",
     "'BEGIN { for (i = 0; i < 300000; i++) a[i] = i % 977; s = 0; for (k in a) s += a[k]; print s }'", nullptr},
    {"perl", "C", "perl-base", "/usr/bin/perl",
     "-e 'my %h; $h{$_ % 5003} += $_ for 1 .. 300000; my $s = 0; $s += $h{$_} * $_ for keys %h; print \"$s\\n\"'",
     nullptr},
    {"sort", "C", "coreutils", "/usr/bin/sort", "-n $D/numbers", nullptr},
    {"bc", "C", "bc", "/usr/bin/bc", "-q $D/bc.in", nullptr},
};

static std::string slurp(const std::string &p)
{
    std::ifstream f(p);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

static void spit(const std::string &p, const std::string &s) { std::ofstream(p) << s; }

static std::string subst(std::string s)
{
    for (size_t at; (at = s.find("$D")) != std::string::npos;)
        s.replace(at, 2, DATA);
    return s;
}

struct Outcome {
    int status;
    std::string out;
};

static Outcome run(const std::string &cmd, const std::string &dir)
{
    std::string out = dir + "/stdout";
    // a hang is a failure (status 124), not a stuck suite
    int st = std::system(("timeout -k 5 300 sh -c " + shq(cmd) + " >" + out + " 2>>" + dir + "/stderr").c_str());
    return {WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st), slurp(out)};
}

class ProfCorpus : public ::testing::TestWithParam<Program> {
  protected:
    std::string dir;
    static void SetUpTestSuite()
    {
        char t[] = "/tmp/test_prof_corpusXXXXXX";
        ASSERT_NE(mkdtemp(t), nullptr);
        DATA = t;
        // deterministic inputs: 4 MiB of words, 200 000 numbers
        std::string text, numbers, words;
        uint64_t x = 88172645463325252ull;
        const char *syll[] = {"lo", "cus", "nu", "ma", "page", "node", "ran", "tou", "ch", "mem"};
        while (text.size() < (4u << 20)) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            text += syll[x % 10];
            text += (x >> 8) % 7 ? "" : ((x >> 12) % 5 ? " " : "\n");
        }
        for (int i = 0; i < 200000; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            numbers += std::to_string(x % 1000000007) + "\n";
            if (i < 3000)
                words += syll[x % 10] + std::to_string(i) + (i % 13 ? " " : "\n");
        }
        spit(DATA + "/text", text);
        spit(DATA + "/numbers", numbers);
        spit(DATA + "/words", words);
        spit(DATA + "/bc.in", "scale=50\nx=4*a(1)\nx\n2^4000 % 1000000007\nquit\n");
        spit(DATA + "/Makefile", "all: a b c\n\t@echo done\n"
                                 "a:\n\t@echo making a; sh -c 'exit 0'\n"
                                 "b: a\n\t@printf '%s\\n' b\n"
                                 "c: b\n\t@wc -l < numbers\n");
    }
    static void TearDownTestSuite() { std::system(("rm -rf " + DATA).c_str()); }
    void SetUp() override
    {
        char t[] = "/tmp/test_prof_corpus_runXXXXXX";
        ASSERT_NE(mkdtemp(t), nullptr);
        dir = t;
    }
    void TearDown() override { std::system(("rm -rf " + dir).c_str()); }

    bool available(const Program &p)
    {
        if (access(p.exe, X_OK) != 0) {
            skip_reason = std::string(p.exe) + " is not installed (Debian package " + p.package +
                          "; scripts/deps.sh installs it)";
            return false;
        }
        if (p.needs && std::system((std::string(p.needs) + " >/dev/null 2>&1").c_str()) != 0) {
            skip_reason = std::string("'") + p.needs + "' fails (Debian package " + p.package + " missing?)";
            return false;
        }
        return true;
    }
    std::string skip_reason;
};

TEST_P(ProfCorpus, SameOutputAndStatus)
{
    const Program &p = GetParam();
    if (!available(p))
        GTEST_SKIP() << p.name << " skipped: " << skip_reason;
    std::string args = subst(p.args);
    std::string in = args.find('<') == std::string::npos ? " </dev/null" : "";
    Outcome a = run(std::string(p.exe) + " " + args + in, dir);
    Outcome b = run(LOCUS + " profile -q -o " + dir + "/p.json -- " + p.exe + " " + args + in, dir);
    EXPECT_EQ(a.status, b.status) << p.name << " (" << p.lang << ")\n" << slurp(dir + "/stderr");
    EXPECT_TRUE(a.out == b.out) << p.name << ": stdout differs under the profiler (" << a.out.size() << " vs "
                                << b.out.size() << " bytes)\nalone:    " << a.out.substr(0, 300)
                                << "\nprofiled: " << b.out.substr(0, 300);
    EXPECT_FALSE(a.out.empty()) << p.name << " printed nothing: the comparison would prove nothing";
    std::string j = slurp(dir + "/p.json");
    EXPECT_NE(j.find("\"shim\": {\"status\": \"ok\""), std::string::npos)
        << p.name << ": the shim did not run in it\n" << j.substr(0, 1500);
}

INSTANTIATE_TEST_SUITE_P(Debian, ProfCorpus, ::testing::ValuesIn(CORPUS),
                         [](const ::testing::TestParamInfo<Program> &i) { return std::string(i.param.name); });

// An MPI application under mpirun -np 2, each rank profiled (one profile per
// rank via %r). mpirun interleaves the ranks' lines in any order, even
// without a profiler: the lines are compared as a sorted list.
TEST(ProfCorpusMpi, Mpi4pyUnderMpirun)
{
    if (access("/usr/bin/mpirun", X_OK) != 0)
        GTEST_SKIP() << "mpirun is not installed (Debian package openmpi-bin; scripts/deps.sh installs it)";
    if (std::system("/usr/bin/python3 -c 'import mpi4py.MPI' >/dev/null 2>&1") != 0)
        GTEST_SKIP() << "mpi4py is not installed (Debian package python3-mpi4py; scripts/deps.sh installs it)";
    char t[] = "/tmp/test_prof_corpus_mpiXXXXXX";
    ASSERT_NE(mkdtemp(t), nullptr);
    std::string dir = t;
    const std::string mpirun = "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 "
                               "/usr/bin/mpirun -np 2 ";
    const std::string app = "/usr/bin/python3 -m mpi4py.bench helloworld </dev/null";
    Outcome a = run(mpirun + app, dir);
    Outcome b = run(mpirun + LOCUS + " profile -o " + dir + "/p.%r.json -- " + app, dir);
    auto lines = [](const std::string &s) {
        std::vector<std::string> v;
        std::istringstream is(s);
        for (std::string l; std::getline(is, l);)
            v.push_back(l);
        std::sort(v.begin(), v.end());
        return v;
    };
    EXPECT_EQ(a.status, 0) << slurp(dir + "/stderr");
    EXPECT_EQ(a.status, b.status) << slurp(dir + "/stderr");
    EXPECT_EQ(lines(a.out), lines(b.out));
    EXPECT_EQ(lines(a.out).size(), 2u) << a.out;
    for (int r = 0; r < 2; r++) {
        std::string j = slurp(dir + "/p." + std::to_string(r) + ".json");
        EXPECT_NE(j.find("\"job\": {\"rank\": " + std::to_string(r) + ", \"size\": 2"), std::string::npos)
            << "rank " << r << ": " << j.substr(0, 600);
        EXPECT_NE(j.find("\"shim\": {\"status\": \"ok\""), std::string::npos) << j.substr(0, 600);
    }
    std::system(("rm -rf " + dir).c_str());
}
