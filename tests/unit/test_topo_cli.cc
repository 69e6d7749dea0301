// `locus topo`: exit codes, messages and JSON validity of the CLI binary.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "shell_quote.h"

namespace {

const std::string kLocus = std::string(LOCUS_BINARY_DIR) + "/bin/locus";
const std::string kData = std::string(LOCUS_SOURCE_DIR) + "/tests/data/topo/";

struct CliResult {
    int status;
    std::string out; // stdout + stderr
};

CliResult run(const std::string &args)
{
    std::string cmd = shq(kLocus) + " topo " + args + " 2>&1";
    FILE *p = popen(cmd.c_str(), "r");
    CliResult r{-1, ""};
    if (!p)
        return r;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0)
        r.out.append(buf, n);
    int st = pclose(p);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return r;
}

class TopoCli : public ::testing::Test {
protected:
    void SetUp() override
    {
        if (access(kLocus.c_str(), X_OK) != 0)
            GTEST_SKIP() << kLocus << " not built";
    }
};

TEST_F(TopoCli, TablePrintsSections)
{
    CliResult r = run("");
    ASSERT_EQ(r.status, 0) << r.out;
    for (const char *s : {"NUMA nodes:", "Node distances", "Shared L3 domains:", "THP", "Notes:"})
        EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
}

TEST_F(TopoCli, JsonIsValid)
{
    if (system("python3 -c pass >/dev/null 2>&1") != 0)
        GTEST_SKIP() << "python3 not available to validate JSON";
    for (std::string args : {std::string("--json"), "--json --xml " + shq(kData + "memory_only_node.xml"),
                             std::string("--json --synthetic 'pack:2 [numa] l3:2 core:2 pu:1'")}) {
        std::string cmd = shq(kLocus) + " topo " + args +
                          " | python3 -c 'import json,sys; d=json.load(sys.stdin); "
                          "assert len(d[\"distances\"]) == len(d[\"nodes\"]); print(len(d[\"nodes\"]))'";
        FILE *p = popen(cmd.c_str(), "r");
        ASSERT_NE(p, nullptr);
        char buf[64] = {0};
        size_t n = fread(buf, 1, sizeof buf - 1, p);
        int st = pclose(p);
        EXPECT_EQ(st, 0) << args;
        EXPECT_GT(n, 0u) << args;
    }
}

TEST_F(TopoCli, XmlShowsForeignTopology)
{
    CliResult r = run("--xml " + shq(kData + "memory_only_node.xml"));
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("NUMA nodes: 3"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("memory-only"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("not this machine"), std::string::npos) << r.out;
}

TEST_F(TopoCli, LibraryErrorsExitOneWithMessage)
{
    CliResult r = run("--xml /nonexistent/t.xml");
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.out.find("'/nonexistent/t.xml'"), std::string::npos) << r.out;
    r = run("--synthetic 'pack:zz'");
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.out.find("'pack:zz'"), std::string::npos) << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << "one line: " << r.out;
}

TEST_F(TopoCli, UsageErrorsExitTwo)
{
    CliResult r = run("--bogus");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.out.find("unknown option '--bogus'"), std::string::npos) << r.out;
    EXPECT_EQ(run("--xml").status, 2);
    EXPECT_EQ(run("--xml a.xml --synthetic 'pu:2'").status, 2);
    r = run("--help");
    EXPECT_EQ(r.status, 0);
    EXPECT_NE(r.out.find("usage: locus topo"), std::string::npos);
}

} // namespace
