// `locus heap` and `locus stream` as a user runs them: exit codes, one-line
// errors naming the bad value, JSON output, the comparison.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

#include "shell_quote.h"

struct CliRun {
    int status;
    std::string out, err;
};

static CliRun run(const std::string &args, const std::string &env = "")
{
    // One file per process: ctest runs each TEST as its own process, in parallel.
    std::string errf = std::string(LOCUS_BINARY_DIR) + "/test_heap_cli." + std::to_string(getpid()) + ".stderr";
    std::string cmd = env + " " + shq(std::string(LOCUS_BINARY_DIR) + "/bin/locus") + " " + args + " 2>" + shq(errf);
    CliRun r{-1, "", ""};
    FILE *p = popen(cmd.c_str(), "r");
    if (!p)
        return r;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0)
        r.out.append(buf, n);
    int st = pclose(p);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    if (FILE *f = fopen(errf.c_str(), "r")) {
        while ((n = fread(buf, 1, sizeof buf, f)) > 0)
            r.err.append(buf, n);
        fclose(f);
    }
    remove(errf.c_str());
    return r;
}

static void expect_error(const CliRun &r, int status, const std::string &needle)
{
    EXPECT_EQ(r.status, status) << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;
    EXPECT_EQ(r.err.rfind("locus heap: ", 0), 0u) << r.err;
}

TEST(HeapCli, BadInputOneLineNonZero)
{
    expect_error(run("heap --size 0"), 1, "size 0");
    expect_error(run("heap --size 100T"), 1, "larger than physical memory");
    expect_error(run("heap --size 12Q"), 2, "'12Q'");
    expect_error(run("heap --policy scatter"), 2, "'scatter'");
    expect_error(run("heap --size 64M --policy bind:63"), 1, "node 63 out of range");
    expect_error(run("heap --pages 64k"), 2, "'64k'");
    expect_error(run("heap --threads -3"), 2, "'-3'");
    expect_error(run("heap --verify most"), 2, "'most'");
    expect_error(run("heap --frobnicate"), 2, "--frobnicate");
    expect_error(run("heap", "LOCUS_HEAP_PAGES=giant"), 1, "LOCUS_HEAP_PAGES");
    expect_error(run("heap", "LOCUS_HEAP_SIZE=lots"), 1, "'lots'");
    expect_error(run("heap", "LOCUS_HEAP_POLICY=bind:"), 1, "LOCUS_HEAP_POLICY");
}

TEST(HeapCli, JsonAndCompare)
{
    CliRun r = run("heap --size 64M --pages 4k --verify all --json --compare");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("\"pages\": \"4k\""), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\"units_checked\": 16384"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\"schema\": \"locus-bench/1\""), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\"series\": \"serial touch, 1 thread\""), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\"resident_bytes\": 67108864"), std::string::npos) << r.out;
    r = run("heap --size 64M --pages auto --compare");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("serial touch"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("memset limit"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("auto: chose"), std::string::npos) << r.out;
}

TEST(HeapCli, StreamEveryPolicyComputesTheTriad)
{
    CliRun r = run("stream --size 48M --reps 2");
    ASSERT_EQ(r.status, 0) << r.err << r.out;
    for (const char *p : {"interleave", "bind:", "firsttouch, parallel init", "firsttouch, serial init", "local"})
        EXPECT_NE(r.out.find(p), std::string::npos) << p << "\n" << r.out;
    EXPECT_EQ(r.out.find("WRONG"), std::string::npos) << r.out;
    r = run("stream --size 48M --reps 2 --policy nowhere");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("'nowhere'"), std::string::npos) << r.err;
}
