// topo: this machine (checked against what the kernel says in sysfs), hwloc XML
// and synthetic fixtures (tests/data/topo/, made by make_fixtures.py), the sysfs
// readers on a fake sysfs tree, and bad input.
#include <gtest/gtest.h>

#include <dirent.h>
#include <sched.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

extern "C" {
#include <locus/topo.h>
#include "topo/topo_internal.h"
#include "core/sysfs.h"
}

namespace {

const std::string kData = std::string(LOCUS_SOURCE_DIR) + "/tests/data/topo/";

struct TopoPtr {
    locus_topo_t *t = nullptr;
    ~TopoPtr() { locus_topo_destroy(t); }
};

std::vector<int> cpus_of(const int *c, int n) { return std::vector<int>(c, c + n); }

std::string slurp(const std::string &path)
{
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

std::vector<int> parse_list(const std::string &s)
{
    std::vector<int> v(4096);
    int n = lc_parse_cpulist(s.c_str(), v.data(), (int)v.size());
    v.resize(n > 0 ? n : 0);
    return v;
}

std::string print_json(const locus_topo_t *t)
{
    char *buf = nullptr;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    EXPECT_EQ(locus_topo_print_json(t, f), LOCUS_OK);
    fclose(f);
    std::string s(buf, len);
    free(buf);
    return s;
}

std::string print_table(const locus_topo_t *t)
{
    char *buf = nullptr;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    EXPECT_EQ(locus_topo_print(t, f), LOCUS_OK);
    fclose(f);
    std::string s(buf, len);
    free(buf);
    return s;
}

// ------------------------------------------------------------ this machine

TEST(TopoLocal, CpusAreThisProcessAffinity)
{
    TopoPtr p;
    ASSERT_EQ(locus_topo_load(&p.t), LOCUS_OK) << locus_last_error();
    cpu_set_t set;
    ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
    std::vector<int> want;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set))
            want.push_back(c);
    std::vector<int> got;
    for (int i = 0; i < locus_topo_num_cpus(p.t); i++)
        got.push_back(locus_topo_cpu(p.t, i));
    EXPECT_EQ(got, want);
    EXPECT_EQ(locus_topo_cpu(p.t, -1), -1);
    EXPECT_EQ(locus_topo_cpu(p.t, locus_topo_num_cpus(p.t)), -1);
}

// A process limited to one cpu sees only that cpu everywhere, and says so;
// its node is still not "memory-only".
TEST(TopoLocal, RestrictedAffinityIsRespectedAndNoted)
{
    cpu_set_t saved, one;
    ASSERT_EQ(sched_getaffinity(0, sizeof saved, &saved), 0);
    if (CPU_COUNT(&saved) < 2)
        GTEST_SKIP() << "needs 2 usable cpus";
    int last = -1;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &saved))
            last = c;
    CPU_ZERO(&one);
    CPU_SET(last, &one);
    ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
    TopoPtr p;
    locus_status_t st = locus_topo_load(&p.t);
    sched_setaffinity(0, sizeof saved, &saved);
    ASSERT_EQ(st, LOCUS_OK) << locus_last_error();
    ASSERT_EQ(locus_topo_num_cpus(p.t), 1);
    EXPECT_EQ(locus_topo_cpu(p.t, 0), last);
    int usable_total = 0;
    for (int i = 0; i < locus_topo_num_nodes(p.t); i++) {
        locus_topo_node_t n;
        ASSERT_EQ(locus_topo_node(p.t, i, &n), LOCUS_OK);
        usable_total += n.num_cpus;
    }
    EXPECT_EQ(usable_total, 1);
    int node = locus_topo_cpu_node(p.t, last);
    ASSERT_GE(node, 0);
    EXPECT_FALSE(locus_topo_node_is_memory_only(p.t, node));
    locus_topo_l3_t d;
    ASSERT_EQ(locus_topo_l3(p.t, locus_topo_cpu_l3(p.t, last), &d), LOCUS_OK);
    EXPECT_EQ(cpus_of(d.cpus, d.num_cpus), std::vector<int>{last});
    EXPECT_NE(std::string(locus_topo_notes(p.t)).find("limits this process to 1 of"), std::string::npos)
        << locus_topo_notes(p.t);
}

TEST(TopoLocal, NodesMatchSysfs)
{
    TopoPtr p;
    ASSERT_EQ(locus_topo_load(&p.t), LOCUS_OK) << locus_last_error();
    std::vector<int> online = parse_list(slurp("/sys/devices/system/node/online"));
    if (online.empty())
        online = {0}; // kernels without NUMA: hwloc makes one node 0
    ASSERT_EQ(locus_topo_num_nodes(p.t), (int)online.size());
    for (int i = 0; i < locus_topo_num_nodes(p.t); i++) {
        locus_topo_node_t n;
        ASSERT_EQ(locus_topo_node(p.t, i, &n), LOCUS_OK);
        EXPECT_EQ(n.os_index, online[i]) << "ascending os_index";
        EXPECT_EQ(locus_topo_node_index(p.t, n.os_index), i);
        EXPECT_GT(n.memory_bytes, 0u);
        EXPECT_EQ(locus_topo_distance(p.t, i, i), 10);
        std::string cl = slurp("/sys/devices/system/node/node" + std::to_string(n.os_index) + "/cpulist");
        std::set<int> kernel;
        for (int c : parse_list(cl))
            kernel.insert(c);
        for (int k = 0; k < n.num_cpus; k++) {
            EXPECT_TRUE(kernel.count(n.cpus[k])) << "cpu " << n.cpus[k] << " not on node " << n.os_index;
            EXPECT_EQ(locus_topo_cpu_node(p.t, n.cpus[k]), i);
            if (k)
                EXPECT_LT(n.cpus[k - 1], n.cpus[k]);
        }
    }
    EXPECT_EQ(locus_topo_node_index(p.t, 9999), -1);
}

TEST(TopoLocal, L3DomainsMatchSysfs)
{
    TopoPtr p;
    ASSERT_EQ(locus_topo_load(&p.t), LOCUS_OK) << locus_last_error();
    ASSERT_GE(locus_topo_num_l3(p.t), 1);
    int covered = 0;
    for (int i = 0; i < locus_topo_num_l3(p.t); i++) {
        locus_topo_l3_t d;
        ASSERT_EQ(locus_topo_l3(p.t, i, &d), LOCUS_OK);
        EXPECT_GE(d.size_bytes, 256u << 10);
        EXPECT_LE(d.size_bytes, 4ull << 30);
        covered += d.num_cpus;
        for (int k = 0; k < d.num_cpus; k++)
            EXPECT_EQ(locus_topo_cpu_l3(p.t, d.cpus[k]), i);
    }
    EXPECT_EQ(covered, locus_topo_num_cpus(p.t)) << "every usable cpu is in exactly one domain";
    // Where the kernel lists an L3 for cpu a, share_l3 agrees with shared_cpu_list.
    for (int i = 0; i < locus_topo_num_cpus(p.t); i++) {
        int a = locus_topo_cpu(p.t, i);
        std::string dir = "/sys/devices/system/cpu/cpu" + std::to_string(a) + "/cache/index3/";
        if (slurp(dir + "level").rfind("3", 0) != 0)
            continue;
        std::set<int> shared;
        for (int c : parse_list(slurp(dir + "shared_cpu_list")))
            shared.insert(c);
        for (int j = 0; j < locus_topo_num_cpus(p.t); j++) {
            int b = locus_topo_cpu(p.t, j);
            EXPECT_EQ(locus_topo_share_l3(p.t, a, b), shared.count(b) == 1) << a << " vs " << b;
        }
    }
}

TEST(TopoLocal, PagesMatchSysfs)
{
    TopoPtr p;
    ASSERT_EQ(locus_topo_load(&p.t), LOCUS_OK) << locus_last_error();
    EXPECT_EQ(locus_topo_base_page(p.t), (uint64_t)sysconf(_SC_PAGESIZE));
    std::string thp = slurp("/sys/kernel/mm/transparent_hugepage/enabled");
    locus_thp_mode_t want = thp.find("[always]") != std::string::npos    ? LOCUS_THP_ALWAYS
                            : thp.find("[madvise]") != std::string::npos ? LOCUS_THP_MADVISE
                            : thp.find("[never]") != std::string::npos   ? LOCUS_THP_NEVER
                                                                         : LOCUS_THP_UNAVAILABLE;
    EXPECT_EQ(locus_topo_thp_mode(p.t), want);
    if (want != LOCUS_THP_UNAVAILABLE)
        EXPECT_EQ(locus_topo_thp_size(p.t),
                  std::strtoull(slurp("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size").c_str(), nullptr, 10));
    int pools = 0;
    if (DIR *d = opendir("/sys/kernel/mm/hugepages")) {
        while (dirent *e = readdir(d))
            pools += std::strncmp(e->d_name, "hugepages-", 10) == 0;
        closedir(d);
    }
    EXPECT_EQ(locus_topo_num_hugepools(p.t), pools);
    for (int i = 0; i < locus_topo_num_hugepools(p.t); i++) {
        locus_topo_hugepool_t hp;
        ASSERT_EQ(locus_topo_hugepool(p.t, i, &hp), LOCUS_OK);
        EXPECT_LE(hp.free_pages, hp.total_pages);
        EXPECT_GT(hp.page_size, locus_topo_base_page(p.t));
    }
}

TEST(TopoLocal, JsonHasTheKeysAndNodes)
{
    TopoPtr p;
    ASSERT_EQ(locus_topo_load(&p.t), LOCUS_OK) << locus_last_error();
    std::string js = print_json(p.t);
    for (const char *key : {"\"origin\": \"local\"", "\"nodes\"", "\"distances\"", "\"cpus\"", "\"l3\"", "\"pages\"",
                            "\"thp_mode\"", "\"hugepools\"", "\"notes\""})
        EXPECT_NE(js.find(key), std::string::npos) << key;
    std::string table = print_table(p.t);
    EXPECT_NE(table.find("NUMA nodes: " + std::to_string(locus_topo_num_nodes(p.t))), std::string::npos) << table;
}

// ----------------------------------------------------------------- fixtures

TEST(TopoFixture, TwoL3DomainsOnOneNode)
{
    TopoPtr p;
    ASSERT_EQ(locus_topo_load_xml((kData + "two_l3_one_node.xml").c_str(), &p.t), LOCUS_OK) << locus_last_error();
    ASSERT_EQ(locus_topo_num_nodes(p.t), 1);
    ASSERT_EQ(locus_topo_num_cpus(p.t), 4);
    ASSERT_EQ(locus_topo_num_l3(p.t), 2);
    locus_topo_l3_t d0, d1;
    ASSERT_EQ(locus_topo_l3(p.t, 0, &d0), LOCUS_OK);
    ASSERT_EQ(locus_topo_l3(p.t, 1, &d1), LOCUS_OK);
    EXPECT_EQ(cpus_of(d0.cpus, d0.num_cpus), (std::vector<int>{0, 1}));
    EXPECT_EQ(cpus_of(d1.cpus, d1.num_cpus), (std::vector<int>{2, 3}));
    EXPECT_EQ(d0.size_bytes, 16u << 20);
    EXPECT_EQ(d0.size_source, LOCUS_TOPO_SRC_HWLOC);
    EXPECT_TRUE(locus_topo_share_l3(p.t, 0, 1));
    EXPECT_TRUE(locus_topo_share_l3(p.t, 2, 3));
    EXPECT_FALSE(locus_topo_share_l3(p.t, 1, 2));
    EXPECT_FALSE(locus_topo_share_l3(p.t, 0, 99));
    EXPECT_EQ(locus_topo_cpu_l3(p.t, 3), 1);
    EXPECT_STREQ(locus_topo_notes(p.t), "");
    locus_topo_node_t n;
    ASSERT_EQ(locus_topo_node(p.t, 0, &n), LOCUS_OK);
    EXPECT_EQ(n.memory_bytes, 8000000000u);
}

TEST(TopoFixture, TwoNodesWithDistances)
{
    TopoPtr p;
    ASSERT_EQ(locus_topo_load_xml((kData + "two_nodes.xml").c_str(), &p.t), LOCUS_OK) << locus_last_error();
    ASSERT_EQ(locus_topo_num_nodes(p.t), 2);
    EXPECT_EQ(locus_topo_distance(p.t, 0, 0), 10);
    EXPECT_EQ(locus_topo_distance(p.t, 0, 1), 20);
    EXPECT_EQ(locus_topo_distance(p.t, 1, 0), 20);
    EXPECT_EQ(locus_topo_distance(p.t, 1, 1), 10);
    EXPECT_EQ(locus_topo_distance(p.t, 0, 2), -1);
    EXPECT_EQ(locus_topo_distance(p.t, -1, 0), -1);
    EXPECT_EQ(locus_topo_cpu_node(p.t, 0), 0);
    EXPECT_EQ(locus_topo_cpu_node(p.t, 3), 1);
    EXPECT_EQ(locus_topo_cpu_node(p.t, 4), -1);
    locus_topo_node_t n;
    ASSERT_EQ(locus_topo_node(p.t, 1, &n), LOCUS_OK);
    EXPECT_EQ(cpus_of(n.cpus, n.num_cpus), (std::vector<int>{2, 3}));
    std::string js = print_json(p.t);
    EXPECT_NE(js.find("[10, 20]"), std::string::npos) << js;
    EXPECT_NE(js.find("\"distance_source\": \"hwloc\""), std::string::npos) << js;
}

TEST(TopoFixture, MemoryOnlyNode)
{
    TopoPtr p;
    ASSERT_EQ(locus_topo_load_xml((kData + "memory_only_node.xml").c_str(), &p.t), LOCUS_OK) << locus_last_error();
    ASSERT_EQ(locus_topo_num_nodes(p.t), 3);
    int want_cpus[3] = {2, 2, 0};
    for (int i = 0; i < 3; i++) {
        locus_topo_node_t n;
        ASSERT_EQ(locus_topo_node(p.t, i, &n), LOCUS_OK);
        EXPECT_EQ(n.os_index, i);
        EXPECT_EQ(n.num_cpus, want_cpus[i]) << "node " << i;
    }
    locus_topo_node_t mo;
    ASSERT_EQ(locus_topo_node(p.t, 2, &mo), LOCUS_OK);
    EXPECT_EQ(mo.memory_bytes, 512000000u);
    EXPECT_EQ(locus_topo_distance(p.t, 0, 2), 30);
    EXPECT_EQ(locus_topo_distance(p.t, 1, 2), 30);
    EXPECT_EQ(locus_topo_distance(p.t, 0, 1), 20);
    EXPECT_TRUE(locus_topo_node_is_memory_only(p.t, 2));
    EXPECT_FALSE(locus_topo_node_is_memory_only(p.t, 0));
    EXPECT_FALSE(locus_topo_node_is_memory_only(p.t, 3)) << "bad index";
    EXPECT_EQ(locus_topo_num_cpus(p.t), 4);
    for (int c = 0; c < 4; c++)
        EXPECT_NE(locus_topo_cpu_node(p.t, c), 2) << "no cpu belongs to the memory-only node";
    std::string js = print_json(p.t);
    EXPECT_NE(js.find("\"memory_only\": true, \"cpus\": []"), std::string::npos) << js;
    EXPECT_NE(print_table(p.t).find("memory-only"), std::string::npos);
}

// A VM reporting L3 size 0: the size comes from this machine's sysfs for cpu 0
// (or, where sysfs has no L3 either, the 8 MiB default), and a note says so.
TEST(TopoFixture, VmZeroL3SizeFallsBackAndNotes)
{
    TopoPtr p;
    ASSERT_EQ(locus_topo_load_xml((kData + "vm_l3_zero.xml").c_str(), &p.t), LOCUS_OK) << locus_last_error();
    ASSERT_GE(locus_topo_num_l3(p.t), 1);
    locus_topo_l3_t d;
    ASSERT_EQ(locus_topo_l3(p.t, 0, &d), LOCUS_OK);
    uint64_t sys = topo_sysfs_cache_size("/sys", d.cpus[0], 3);
    std::string notes = locus_topo_notes(p.t);
    EXPECT_NE(notes.find("hwloc reports 0 bytes"), std::string::npos) << notes;
    if (sys >= (256u << 10) && sys <= (4ull << 30)) {
        EXPECT_EQ(d.size_source, LOCUS_TOPO_SRC_SYSFS);
        EXPECT_EQ(d.size_bytes, sys);
        EXPECT_NE(notes.find("used sysfs cpu"), std::string::npos) << notes;
    } else {
        EXPECT_EQ(d.size_source, LOCUS_TOPO_SRC_DEFAULT);
        EXPECT_EQ(d.size_bytes, 8u << 20);
    }
    EXPECT_NE(print_json(p.t).find("\"size_source\": \"" + std::string(d.size_source == LOCUS_TOPO_SRC_SYSFS ? "sysfs" : "default")),
              std::string::npos);
}

TEST(TopoFixture, AbsurdL3SizesAreReplaced)
{
    TopoPtr p;
    ASSERT_EQ(locus_topo_load_xml((kData + "l3_absurd.xml").c_str(), &p.t), LOCUS_OK) << locus_last_error();
    ASSERT_EQ(locus_topo_num_l3(p.t), 2);
    std::string notes = locus_topo_notes(p.t);
    EXPECT_NE(notes.find("hwloc reports 68719476736 bytes"), std::string::npos) << notes;
    EXPECT_NE(notes.find("hwloc reports 100 bytes"), std::string::npos) << notes;
    for (int i = 0; i < 2; i++) {
        locus_topo_l3_t d;
        ASSERT_EQ(locus_topo_l3(p.t, i, &d), LOCUS_OK);
        EXPECT_NE(d.size_source, LOCUS_TOPO_SRC_HWLOC);
        EXPECT_GE(d.size_bytes, 256u << 10);
        EXPECT_LE(d.size_bytes, 4ull << 30);
    }
}

TEST(TopoSynthetic, PackagesNodesAndL3)
{
    TopoPtr p;
    ASSERT_EQ(locus_topo_load_synthetic("pack:2 [numa] l3:2 core:2 pu:1", &p.t), LOCUS_OK) << locus_last_error();
    EXPECT_EQ(locus_topo_num_nodes(p.t), 2);
    EXPECT_EQ(locus_topo_num_cpus(p.t), 8);
    EXPECT_EQ(locus_topo_num_l3(p.t), 4);
    EXPECT_TRUE(locus_topo_share_l3(p.t, 4, 5));
    EXPECT_FALSE(locus_topo_share_l3(p.t, 3, 4));
    EXPECT_EQ(locus_topo_cpu_node(p.t, 5), 1);
    // No distance matrix in a synthetic description: unknown off the diagonal, noted.
    EXPECT_EQ(locus_topo_distance(p.t, 0, 1), -1);
    EXPECT_EQ(locus_topo_distance(p.t, 1, 1), 10);
    EXPECT_NE(std::string(locus_topo_notes(p.t)).find("no NUMA distance matrix"), std::string::npos);
    // Page information is this machine's.
    EXPECT_EQ(locus_topo_base_page(p.t), (uint64_t)sysconf(_SC_PAGESIZE));
}

TEST(TopoSynthetic, NoL3UsesL2AndNotes)
{
    TopoPtr p;
    ASSERT_EQ(locus_topo_load_synthetic("pack:1 [numa] l2:4 core:1 pu:1", &p.t), LOCUS_OK) << locus_last_error();
    EXPECT_EQ(locus_topo_num_l3(p.t), 4);
    EXPECT_FALSE(locus_topo_share_l3(p.t, 0, 1));
    EXPECT_NE(std::string(locus_topo_notes(p.t)).find("no L3 cache"), std::string::npos);
}

TEST(TopoSynthetic, NoCachesOneDomainPerPackage)
{
    TopoPtr p;
    ASSERT_EQ(locus_topo_load_synthetic("pack:2 [numa] core:3 pu:1", &p.t), LOCUS_OK) << locus_last_error();
    ASSERT_EQ(locus_topo_num_l3(p.t), 2);
    EXPECT_TRUE(locus_topo_share_l3(p.t, 0, 2));
    EXPECT_FALSE(locus_topo_share_l3(p.t, 2, 3));
    locus_topo_l3_t d;
    ASSERT_EQ(locus_topo_l3(p.t, 1, &d), LOCUS_OK);
    EXPECT_NE(d.size_source, LOCUS_TOPO_SRC_HWLOC);
    EXPECT_NE(std::string(locus_topo_notes(p.t)).find("no cache objects"), std::string::npos);
}

// ---------------------------------------------------------------- bad input

TEST(TopoErrors, MissingXmlFile)
{
    locus_topo_t *t = reinterpret_cast<locus_topo_t *>(0x1);
    EXPECT_EQ(locus_topo_load_xml("/nonexistent/topo.xml", &t), LOCUS_ERR_NOT_FOUND);
    EXPECT_EQ(t, nullptr);
    EXPECT_NE(std::string(locus_last_error()).find("/nonexistent/topo.xml"), std::string::npos);
}

TEST(TopoErrors, XmlThatIsNotATopology)
{
    locus_topo_t *t = nullptr;
    std::string path = kData + "make_fixtures.py";
    EXPECT_EQ(locus_topo_load_xml(path.c_str(), &t), LOCUS_ERR_INVALID);
    EXPECT_EQ(t, nullptr);
    EXPECT_NE(std::string(locus_last_error()).find("make_fixtures.py"), std::string::npos);
    EXPECT_EQ(locus_topo_load_xml(kData.c_str(), &t), LOCUS_ERR_INVALID) << "a directory";
}

TEST(TopoErrors, BadSyntheticString)
{
    locus_topo_t *t = nullptr;
    EXPECT_EQ(locus_topo_load_synthetic("pack:two pu:banana", &t), LOCUS_ERR_INVALID);
    EXPECT_EQ(t, nullptr);
    std::string msg = locus_last_error();
    EXPECT_NE(msg.find("pack:two pu:banana"), std::string::npos) << msg;
    EXPECT_NE(msg.find("expected"), std::string::npos) << msg;
    EXPECT_EQ(locus_topo_load_synthetic("", &t), LOCUS_ERR_INVALID);
}

TEST(TopoErrors, NullArguments)
{
    EXPECT_EQ(locus_topo_load(nullptr), LOCUS_ERR_INVALID);
    EXPECT_EQ(locus_topo_load_xml(nullptr, nullptr), LOCUS_ERR_INVALID);
    locus_topo_t *t = nullptr;
    EXPECT_EQ(locus_topo_load_xml(nullptr, &t), LOCUS_ERR_INVALID);
    EXPECT_EQ(locus_topo_load_synthetic(nullptr, &t), LOCUS_ERR_INVALID);
    locus_topo_node_t n;
    locus_topo_l3_t d;
    locus_topo_hugepool_t hp;
    EXPECT_EQ(locus_topo_node(nullptr, 0, &n), LOCUS_ERR_INVALID);
    EXPECT_EQ(locus_topo_l3(nullptr, 0, &d), LOCUS_ERR_INVALID);
    EXPECT_EQ(locus_topo_hugepool(nullptr, 0, &hp), LOCUS_ERR_INVALID);
    EXPECT_EQ(locus_topo_print(nullptr, stdout), LOCUS_ERR_INVALID);
    EXPECT_EQ(locus_topo_print_json(nullptr, stdout), LOCUS_ERR_INVALID);
    EXPECT_EQ(locus_topo_num_nodes(nullptr), 0);
    EXPECT_EQ(locus_topo_distance(nullptr, 0, 0), -1);
    EXPECT_FALSE(locus_topo_share_l3(nullptr, 0, 0));
    EXPECT_STREQ(locus_topo_notes(nullptr), "");
    locus_topo_destroy(nullptr);
}

TEST(TopoErrors, IndexOutOfRange)
{
    TopoPtr p;
    ASSERT_EQ(locus_topo_load_xml((kData + "two_nodes.xml").c_str(), &p.t), LOCUS_OK);
    locus_topo_node_t n;
    EXPECT_EQ(locus_topo_node(p.t, 2, &n), LOCUS_ERR_RANGE);
    EXPECT_NE(std::string(locus_last_error()).find("node index 2: expected 0..1"), std::string::npos)
        << locus_last_error();
    EXPECT_EQ(locus_topo_node(p.t, -1, &n), LOCUS_ERR_RANGE);
    EXPECT_EQ(locus_topo_node(p.t, 0, nullptr), LOCUS_ERR_INVALID);
    locus_topo_l3_t d;
    EXPECT_EQ(locus_topo_l3(p.t, 5, &d), LOCUS_ERR_RANGE);
    EXPECT_NE(std::string(locus_last_error()).find("L3 index 5"), std::string::npos);
    locus_topo_hugepool_t hp;
    EXPECT_EQ(locus_topo_hugepool(p.t, locus_topo_num_hugepools(p.t), &hp), LOCUS_ERR_RANGE);
}

// ------------------------------------------------------ sysfs on a fake tree

struct FakeTopo {
    locus_topo t{};
    ~FakeTopo()
    {
        lc_notes_free(&t.notes);
        free(t.hugepools);
    }
};

TEST(TopoSysfs, PagesFromFakeTree)
{
    FakeTopo f;
    topo_read_pages(&f.t, (kData + "fakesys").c_str());
    EXPECT_EQ(f.t.thp_mode, LOCUS_THP_ALWAYS);
    EXPECT_EQ(f.t.thp_size, 2u << 20);
    ASSERT_EQ(f.t.num_hugepools, 2);
    EXPECT_EQ(f.t.hugepools[0].page_size, 2u << 20) << "pools sorted by page size";
    EXPECT_EQ(f.t.hugepools[0].total_pages, 512u);
    EXPECT_EQ(f.t.hugepools[0].free_pages, 500u);
    EXPECT_EQ(f.t.hugepools[1].page_size, 1u << 30);
    EXPECT_EQ(f.t.hugepools[1].total_pages, 2u);
    EXPECT_EQ(f.t.hugepools[1].free_pages, 1u);
}

TEST(TopoSysfs, NoThpNoPools)
{
    FakeTopo f;
    topo_read_pages(&f.t, (kData + "fakesys_nothp").c_str());
    EXPECT_EQ(f.t.thp_mode, LOCUS_THP_UNAVAILABLE);
    EXPECT_EQ(f.t.thp_size, 0u);
    EXPECT_EQ(f.t.num_hugepools, 0);
    EXPECT_STREQ(locus_thp_mode_name(f.t.thp_mode), "unavailable");
}

TEST(TopoSysfs, CacheSizeByLevelSkipsInstructionCache)
{
    std::string root = kData + "fakesys";
    EXPECT_EQ(topo_sysfs_cache_size(root.c_str(), 5, 3), 96u << 20);
    EXPECT_EQ(topo_sysfs_cache_size(root.c_str(), 5, 2), 1u << 20);
    EXPECT_EQ(topo_sysfs_cache_size(root.c_str(), 5, 1), 48u << 10) << "data, not instruction";
    EXPECT_EQ(topo_sysfs_cache_size(root.c_str(), 5, 4), 0u);
    EXPECT_EQ(topo_sysfs_cache_size(root.c_str(), 6, 3), 0u) << "cpu without cache dir";
}

TEST(TopoSysfs, DistanceRowFollowsOnlineList)
{
    std::string root = kData + "fakesys";
    int os_of[3] = {0, 1, 3}, row[3];
    ASSERT_TRUE(topo_sysfs_distance_row(root.c_str(), 3, os_of, 3, row));
    EXPECT_EQ(row[0], 31);
    EXPECT_EQ(row[1], 32);
    EXPECT_EQ(row[2], 10);
    int sub[1] = {3};
    ASSERT_TRUE(topo_sysfs_distance_row(root.c_str(), 1, sub, 1, row));
    EXPECT_EQ(row[0], 32);
    int missing[1] = {2};
    EXPECT_FALSE(topo_sysfs_distance_row(root.c_str(), 0, missing, 1, row));
    EXPECT_FALSE(topo_sysfs_distance_row(root.c_str(), 7, os_of, 3, row));
}

TEST(TopoSysfs, Parsers)
{
    EXPECT_EQ(lc_parse_kernel_size("32768K"), 32u << 20);
    EXPECT_EQ(lc_parse_kernel_size("2M"), 2u << 20);
    EXPECT_EQ(lc_parse_kernel_size("4096"), 4096u);
    EXPECT_EQ(lc_parse_kernel_size("x"), 0u);
    EXPECT_EQ(lc_parse_kernel_size("12Q"), 0u);
    EXPECT_EQ(parse_list("0-2,5,7-8\n"), (std::vector<int>{0, 1, 2, 5, 7, 8}));
    int buf[4];
    EXPECT_EQ(lc_parse_cpulist("0-9", buf, 4), -1) << "overflow";
    EXPECT_EQ(lc_parse_cpulist("3-1", buf, 4), -1);
    EXPECT_EQ(lc_parse_cpulist("1,a", buf, 4), -1);
    // found by fuzz_lists: a number beyond int must not wrap to a negative cpu
    EXPECT_EQ(lc_parse_cpulist("03010010510", buf, 4), -1);
    EXPECT_EQ(lc_parse_cpulist("0-4294967297", buf, 4), -1);
    char out[64];
    int cpus[] = {0, 1, 2, 4, 6, 7};
    topo_format_cpulist(cpus, 6, out, sizeof out);
    EXPECT_STREQ(out, "0-2,4,6-7");
    topo_format_cpulist(cpus, 0, out, sizeof out);
    EXPECT_STREQ(out, "-");
    topo_format_size(32u << 20, out, sizeof out);
    EXPECT_STREQ(out, "32 MiB");
    topo_format_size(1000000000u, out, sizeof out);
    EXPECT_STREQ(out, "953.7 MiB");
}

} // namespace
