// Status codes, size parsing and tunable validation (src/core).
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>

extern "C" {
#include "core/config.h"
#include "core/error.h"
#include <locus/heap.h>
}

TEST(Status, EveryCodeHasText)
{
    for (int c = 0; c >= -15; c--)
        EXPECT_STRNE(locus_strerror((locus_status_t)c), "unknown status") << c;
    EXPECT_STREQ(locus_strerror((locus_status_t)-999), "unknown status");
}

TEST(Status, DetailIsPerThreadAndClearable)
{
    EXPECT_EQ(lc_err(LOCUS_ERR_RANGE, "x=%d", 7), LOCUS_ERR_RANGE);
    EXPECT_STREQ(locus_last_error(), "x=7");
    locus_clear_error();
    EXPECT_STREQ(locus_last_error(), "");
    EXPECT_EQ(lc_err_errno(LOCUS_ERR_SYSTEM, EPERM, "open"), LOCUS_ERR_PERMISSION);
    EXPECT_NE(std::string(locus_last_error()).find("open: "), std::string::npos);
}

TEST(ParseSize, AcceptsUnits)
{
    uint64_t v = 0;
    ASSERT_EQ(locus_parse_size("4096", &v), LOCUS_OK); EXPECT_EQ(v, 4096u);
    ASSERT_EQ(locus_parse_size("64K", &v), LOCUS_OK); EXPECT_EQ(v, 65536u);
    ASSERT_EQ(locus_parse_size("8G", &v), LOCUS_OK); EXPECT_EQ(v, 8ull << 30);
    ASSERT_EQ(locus_parse_size("1.5GiB", &v), LOCUS_OK); EXPECT_EQ(v, 3ull << 29);
    ASSERT_EQ(locus_parse_size("2m", &v), LOCUS_OK); EXPECT_EQ(v, 2ull << 20);
    ASSERT_EQ(locus_parse_size("0", &v), LOCUS_OK); EXPECT_EQ(v, 0u);
}

TEST(ParseSize, RejectsGarbageNamingTheValue)
{
    uint64_t v = 1;
    for (const char *bad : {"", "abc", "12Q", "-5", "1.5", "8GG", "1e30T", "nan"}) {
        EXPECT_NE(locus_parse_size(bad, &v), LOCUS_OK) << bad;
        EXPECT_NE(std::string(locus_last_error()).find(std::string("'") + bad + "'"),
                  std::string::npos) << locus_last_error();
    }
    EXPECT_EQ(v, 1u);
}

TEST(ParseSizePct, PercentOrBytes)
{
    uint64_t b;
    double p;
    ASSERT_EQ(lc_parse_sizepct("50%", &b, &p), LOCUS_OK);
    EXPECT_EQ(p, 50.0);
    ASSERT_EQ(lc_parse_sizepct("1G", &b, &p), LOCUS_OK);
    EXPECT_EQ(b, 1ull << 30);
    EXPECT_EQ(p, 0.0);
    EXPECT_NE(lc_parse_sizepct("0%", &b, &p), LOCUS_OK);
    EXPECT_NE(lc_parse_sizepct("101%", &b, &p), LOCUS_OK);
    EXPECT_NE(lc_parse_sizepct("x%", &b, &p), LOCUS_OK);
}

TEST(ParseOther, IntBoolChoice)
{
    int64_t i;
    bool b;
    int c;
    EXPECT_EQ(lc_parse_int("12", 0, 100, &i), LOCUS_OK);
    EXPECT_EQ(i, 12);
    EXPECT_EQ(lc_parse_int("101", 0, 100, &i), LOCUS_ERR_RANGE);
    EXPECT_EQ(lc_parse_int("1x", 0, 100, &i), LOCUS_ERR_INVALID);
    EXPECT_EQ(lc_parse_bool("On", &b), LOCUS_OK);
    EXPECT_TRUE(b);
    EXPECT_EQ(lc_parse_bool("maybe", &b), LOCUS_ERR_INVALID);
    EXPECT_EQ(lc_parse_choice("thp", "4k|thp|auto", &c), LOCUS_OK);
    EXPECT_EQ(c, 1);
    EXPECT_EQ(lc_parse_choice("th", "4k|thp|auto", &c), LOCUS_ERR_INVALID);
    EXPECT_NE(std::string(locus_last_error()).find("4k|thp|auto"), std::string::npos);
}

TEST(Tunables, EnvValueValidatedAndNamed)
{
    setenv("LOCUS_LOG_LEVEL", "loud", 1);
    int idx = -1;
    EXPECT_EQ(lc_tun_enum(LC_TUN_LOG_LEVEL, &idx), LOCUS_ERR_INVALID);
    EXPECT_NE(std::string(locus_last_error()).find("LOCUS_LOG_LEVEL='loud'"), std::string::npos)
        << locus_last_error();
    EXPECT_EQ(locus_config_check(), LOCUS_ERR_INVALID);
    setenv("LOCUS_LOG_LEVEL", "debug", 1);
    EXPECT_EQ(lc_tun_enum(LC_TUN_LOG_LEVEL, &idx), LOCUS_OK);
    EXPECT_EQ(idx, 3);
    unsetenv("LOCUS_LOG_LEVEL");
    EXPECT_EQ(lc_tun_enum(LC_TUN_LOG_LEVEL, &idx), LOCUS_OK);
    EXPECT_EQ(idx, 1);  // default "warn"
}

TEST(Tunables, UnknownLocusVariableIsReported)
{
    setenv("LOCUS_NO_SUCH_KNOB", "1", 1);
    EXPECT_EQ(locus_config_check(), LOCUS_ERR_INVALID);
    EXPECT_NE(std::string(locus_last_error()).find("LOCUS_NO_SUCH_KNOB"), std::string::npos);
    unsetenv("LOCUS_NO_SUCH_KNOB");
    EXPECT_EQ(locus_config_check(), LOCUS_OK) << locus_last_error();
}

TEST(Tunables, DescribeListsEveryTunable)
{
    ASSERT_GT(locus_config_count(), 0u);
    for (size_t i = 0; i < locus_config_count(); i++) {
        locus_tunable_info_t t;
        ASSERT_EQ(locus_config_describe(i, &t), LOCUS_OK);
        EXPECT_EQ(std::strncmp(t.name, "LOCUS_", 6), 0);
        EXPECT_TRUE(t.help && *t.help);
    }
    locus_tunable_info_t t;
    EXPECT_EQ(locus_config_describe(locus_config_count(), &t), LOCUS_ERR_INVALID);
}

TEST(Tunables, EveryDefaultParses)
{
    // Attribute structs are filled from the table's defaults: each must be valid.
    for (int i = 0; i < LC_TUN_COUNT; i++) {
        locus_tunable_info_t t;
        ASSERT_EQ(locus_config_describe((size_t)i, &t), LOCUS_OK);
        unsetenv(t.name);
    }
    EXPECT_EQ(locus_config_check(), LOCUS_OK) << locus_last_error();
    for (int i = 0; i < LC_TUN_COUNT; i++) {
        locus_tunable_info_t t;
        locus_config_describe((size_t)i, &t);
        setenv(t.name, t.def, 1);
        EXPECT_EQ(locus_config_check(), LOCUS_OK) << t.name << "=" << t.def << ": " << locus_last_error();
        unsetenv(t.name);
    }
}

namespace {
struct Attr {
    uint64_t chunk;
    uint32_t samples;
    int pages;
    bool odp;
    uint64_t size;
    double pct;
    const char *device;
};
const lc_tun_bind_t kBinds[] = {
    LC_BIND(HEAP_CHUNK, Attr, chunk),     LC_BIND(HEAP_SAMPLES, Attr, samples),
    LC_BIND(HEAP_PAGES, Attr, pages),     LC_BIND(REG_ODP, Attr, odp),
    LC_BIND_PCT(HEAP_SIZE, Attr, size, pct), LC_BIND(REG_DEVICE, Attr, device),
};
}  // namespace

TEST(Tunables, BindingsFillDefaultsThenOnlySetVariables)
{
    Attr a{};
    ASSERT_EQ(lc_tun_load(kBinds, 6, &a, sizeof a, LC_TUN_DEFAULTS), LOCUS_OK);
    EXPECT_EQ(a.chunk, 8u << 20);
    EXPECT_EQ(a.samples, 16384u);
    EXPECT_EQ(a.pages, 4);  // "auto", the fifth choice
    EXPECT_TRUE(a.odp);
    EXPECT_EQ(a.size, 1u << 30);
    EXPECT_EQ(a.pct, 0.0);
    EXPECT_EQ(a.device, nullptr);  // "" is stored as NULL

    a.chunk = 12345;
    setenv("LOCUS_HEAP_SIZE", "25%", 1);
    setenv("LOCUS_REG_DEVICE", "rxe0", 1);
    ASSERT_EQ(lc_tun_load(kBinds, 6, &a, sizeof a, LC_TUN_ENV), LOCUS_OK);
    EXPECT_EQ(a.chunk, 12345u) << "an unset variable leaves the field alone";
    EXPECT_EQ(a.pct, 25.0);
    EXPECT_STREQ(a.device, "rxe0");

    // all or nothing: one bad value, nothing written, the variable named
    Attr before = a;
    setenv("LOCUS_HEAP_SAMPLES", "7", 1);
    setenv("LOCUS_HEAP_PAGES", "giant", 1);
    EXPECT_EQ(lc_tun_load(kBinds, 6, &a, sizeof a, LC_TUN_ENV), LOCUS_ERR_INVALID);
    EXPECT_NE(std::string(locus_last_error()).find("LOCUS_HEAP_PAGES"), std::string::npos);
    EXPECT_EQ(a.samples, before.samples);
    for (const char *v : {"LOCUS_HEAP_SIZE", "LOCUS_REG_DEVICE", "LOCUS_HEAP_SAMPLES", "LOCUS_HEAP_PAGES"})
        unsetenv(v);
}

static locus_status_t only_abc(const char *v)
{
    return strcmp(v, "abc") ? lc_err(LOCUS_ERR_INVALID, "'%s': expected abc", v) : LOCUS_OK;
}

TEST(Tunables, ModulesRegisterValidators)
{
    // heap registers its policy check when it is loaded (a static link loads
    // it with the first heap call): core names no module
    locus_heap_attr_t ha;
    locus_heap_attr_init(&ha);
    setenv("LOCUS_HEAP_POLICY", "bind:", 1);
    EXPECT_EQ(locus_config_check(), LOCUS_ERR_INVALID);
    EXPECT_NE(std::string(locus_last_error()).find("LOCUS_HEAP_POLICY"), std::string::npos);
    unsetenv("LOCUS_HEAP_POLICY");

    setenv("LOCUS_REG_DEVICE", "xyz", 1);
    EXPECT_EQ(locus_config_check(), LOCUS_OK);
    lc_tun_set_validator(LC_TUN_REG_DEVICE, only_abc);
    EXPECT_EQ(locus_config_check(), LOCUS_ERR_INVALID);
    lc_tun_set_validator(LC_TUN_REG_DEVICE, nullptr);
    unsetenv("LOCUS_REG_DEVICE");
}

// ---------------------------------------------------------------- tune file

extern "C" {
#include "core/tune.h"
}
#include <fstream>
#include <unistd.h>

namespace {
struct TuneFile : ::testing::Test {
    std::string path = "/tmp/locus-tune-test-" + std::to_string(getpid()) + ".conf";
    void SetUp() override { setenv("LOCUS_TUNE_FILE", path.c_str(), 1); lc_tune_reset(); }
    void TearDown() override
    {
        unlink(path.c_str());
        unsetenv("LOCUS_TUNE_FILE");
        unsetenv("LOCUS_HEAP_CHUNK");
        lc_tune_reset();
    }
};
}  // namespace

TEST_F(TuneFile, ValuesSitBetweenEnvironmentAndDefault)
{
    locus_tune_entry_t e[] = {{"LOCUS_HEAP_CHUNK", "16M", "a comment"}, {"LOCUS_HEAP_SAMPLES", "99", nullptr}};
    ASSERT_EQ(locus_tune_file_write(nullptr, e, 2), LOCUS_OK) << locus_last_error();
    uint64_t chunk = 0;
    ASSERT_EQ(lc_tun_size(LC_TUN_HEAP_CHUNK, &chunk), LOCUS_OK);
    EXPECT_EQ(chunk, 16u << 20);
    EXPECT_EQ(lc_tun_source(LC_TUN_HEAP_CHUNK), LC_SRC_TUNE);
    setenv("LOCUS_HEAP_CHUNK", "32M", 1);  // the environment wins
    ASSERT_EQ(lc_tun_size(LC_TUN_HEAP_CHUNK, &chunk), LOCUS_OK);
    EXPECT_EQ(chunk, 32u << 20);
    EXPECT_EQ(lc_tun_source(LC_TUN_HEAP_CHUNK), LC_SRC_ENV);
    EXPECT_EQ(lc_tun_source(LC_TUN_HEAP_VERIFY), LC_SRC_DEFAULT);
    locus_heap_attr_t a;
    locus_heap_attr_init(&a);
    ASSERT_EQ(locus_heap_attr_from_env(&a), LOCUS_OK);
    EXPECT_EQ(a.samples, 99u) << "attribute structs see the tune file too";
    locus_tunable_info_t info;
    for (size_t i = 0; i < locus_config_count(); i++) {
        locus_config_describe(i, &info);
        if (!strcmp(info.name, "LOCUS_HEAP_SAMPLES")) break;
    }
    EXPECT_STREQ(info.source, "tune file");
}

TEST_F(TuneFile, BadValuesAreRefusedAndNamed)
{
    locus_tune_entry_t bad[] = {{"LOCUS_HEAP_CHUNK", "huge", nullptr}};
    EXPECT_EQ(locus_tune_file_write(nullptr, bad, 1), LOCUS_ERR_INVALID);
    EXPECT_NE(std::string(locus_last_error()).find("LOCUS_HEAP_CHUNK"), std::string::npos);
    locus_tune_entry_t unknown[] = {{"LOCUS_NO_SUCH", "1", nullptr}};
    EXPECT_EQ(locus_tune_file_write(nullptr, unknown, 1), LOCUS_ERR_INVALID);
    EXPECT_NE(access(path.c_str(), F_OK), 0) << "nothing written";
    // a file edited by hand with a bad value: the error names the file
    char host[512];
    std::ofstream(path) << "host=" << lc_tune_host(host, sizeof host) << "\nLOCUS_HEAP_CHUNK=huge\n";
    lc_tune_reset();
    EXPECT_EQ(locus_config_check(), LOCUS_ERR_INVALID);
    EXPECT_NE(std::string(locus_last_error()).find("tune file"), std::string::npos) << locus_last_error();
}

TEST_F(TuneFile, AnotherMachinesFileIsIgnored)
{
    std::ofstream(path) << "host=AuthenticAMD 25/17/1, elsewhere, 128 cpus, L3 33554432\nLOCUS_HEAP_CHUNK=16M\n";
    lc_tune_reset();
    EXPECT_EQ(lc_tune_value("LOCUS_HEAP_CHUNK"), nullptr);
    EXPECT_NE(std::string(locus_tune_file_status()).find("measured on"), std::string::npos);
    EXPECT_EQ(lc_tun_source(LC_TUN_HEAP_CHUNK), LC_SRC_DEFAULT);
    std::ofstream(path) << "LOCUS_HEAP_CHUNK=16M\n";  // no host line at all
    lc_tune_reset();
    EXPECT_EQ(lc_tune_value("LOCUS_HEAP_CHUNK"), nullptr);
    setenv("LOCUS_TUNE_FILE", "none", 1);
    lc_tune_reset();
    char buf[64];
    EXPECT_STREQ(locus_tune_file_path(buf, sizeof buf), "");
}
