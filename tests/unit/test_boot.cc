// boot without a network: the singleton, LOCUS_BOOT parsing and its errors,
// source selection from the environment (Slurm's variables, missing
// launchers), job ids, abort, and the PMI-1 protocol against a small fake
// launcher (two forked ranks talking to a KVS thread over socketpairs).
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <poll.h>
#include <string>
#include <sys/socket.h>
#include <thread>
#include <vector>

#include "boot_procs.h"

extern "C" {
#include "boot/boot_internal.h"
}

using namespace boottest;

namespace {

// Clears every launcher variable, sets the given ones, restores all at the end.
class Env {
public:
    Env(std::initializer_list<std::pair<const char *, const char *>> set = {})
    {
        static const char *names[] = {
            "LOCUS_BOOT", "LOCUS_BOOT_TIMEOUT", "LOCUS_RANK", "LOCUS_SIZE", "LOCUS_JOB",
            "PMIX_RANK", "PMIX_NAMESPACE", "PMI_FD", "PMI_RANK", "PMI_SIZE", "SLURM_PROCID",
            "SLURM_NTASKS", "SLURM_STEP_NUM_TASKS", "SLURM_STEP_ID", "SLURM_STEPID",
            "SLURM_LOCALID", "SLURM_NODEID", "SLURM_NNODES", "SLURM_STEP_NUM_NODES",
            "SLURM_TASKS_PER_NODE", "SLURM_STEP_TASKS_PER_NODE", "SLURM_JOB_ID"};
        for (const char *n : names) {
            const char *v = getenv(n);
            saved_.push_back({n, v ? v : "", v != nullptr});
            unsetenv(n);
        }
        for (auto &kv : set)
            setenv(kv.first, kv.second, 1);
    }
    ~Env()
    {
        for (auto &s : saved_)
            s.had ? (void)setenv(s.name.c_str(), s.value.c_str(), 1) : (void)unsetenv(s.name.c_str());
    }

private:
    struct Saved { std::string name, value; bool had; };
    std::vector<Saved> saved_;
};

bool has(const std::string &text, const std::string &part) { return text.find(part) != std::string::npos; }

bool valid_job(const char *j)
{
    size_t n = strlen(j);
    if (n < 1 || n > 48)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)j[i]) && !strchr("_.-", j[i]))
            return false;
    return true;
}

} // namespace

TEST(Boot, SingletonIsRankZeroOfOne)
{
    Env env({{"LOCUS_BOOT", "singleton"}});
    locus_boot_t *b;
    ASSERT_EQ(locus_boot_init(nullptr, &b), LOCUS_OK) << locus_last_error();
    EXPECT_EQ(locus_boot_rank(b), 0);
    EXPECT_EQ(locus_boot_size(b), 1);
    EXPECT_EQ(locus_boot_local_rank(b), 0);
    EXPECT_EQ(locus_boot_local_size(b), 1);
    EXPECT_EQ(locus_boot_node(b), 0);
    EXPECT_EQ(locus_boot_num_nodes(b), 1);
    EXPECT_STREQ(locus_boot_source(b), "singleton");
    EXPECT_TRUE(valid_job(locus_boot_job(b))) << locus_boot_job(b);
    char mine[5] = "abcd", all[5] = {};
    EXPECT_EQ(locus_boot_allgather(b, mine, 4, all), LOCUS_OK);
    EXPECT_STREQ(all, "abcd");
    EXPECT_EQ(locus_boot_barrier(b), LOCUS_OK);
    EXPECT_EQ(locus_boot_allgather(b, nullptr, 4, all), LOCUS_ERR_INVALID);
    EXPECT_TRUE(has(locus_last_error(), "allgather of 4 bytes")) << locus_last_error();
    EXPECT_EQ(locus_boot_fini(b), LOCUS_OK);
}

TEST(Boot, AutoWithoutAnyLauncherIsASingletonAndKeepsLocusJob)
{
    Env env({{"LOCUS_JOB", "given-job"}});
    locus_boot_t *b;
    ASSERT_EQ(locus_boot_init(nullptr, &b), LOCUS_OK) << locus_last_error();
    EXPECT_STREQ(locus_boot_source(b), "singleton");
    EXPECT_STREQ(locus_boot_job(b), "given-job");
    locus_boot_fini(b);
}

TEST(Boot, LocusSizeWithoutALauncherIsAnError)
{
    Env env({{"LOCUS_SIZE", "4"}, {"LOCUS_RANK", "1"}});
    locus_boot_t *b;
    EXPECT_EQ(locus_boot_init(nullptr, &b), LOCUS_ERR_INVALID);
    EXPECT_TRUE(has(locus_last_error(), "LOCUS_SIZE=4 but no launcher")) << locus_last_error();
    EXPECT_TRUE(has(locus_last_error(), "locus run")) << locus_last_error();
}

TEST(Boot, ParseAcceptsTheDocumentedForms)
{
    locus_boot_attr_t a;
    locus_boot_attr_init(&a);
    EXPECT_EQ(a.kind, LOCUS_BOOT_AUTO);
    EXPECT_GT(a.timeout, 0);
    EXPECT_EQ(a.rank, -1);
    struct { const char *text; locus_boot_kind_t kind; const char *address; } ok[] = {
        {"auto", LOCUS_BOOT_AUTO, ""},          {"pmix", LOCUS_BOOT_PMIX, ""},
        {"pmi1", LOCUS_BOOT_PMI1, ""},          {"singleton", LOCUS_BOOT_SINGLETON, ""},
        {"tcp:node7:4000", LOCUS_BOOT_TCP, "node7:4000"},
        {"tcp:[::1]:65535", LOCUS_BOOT_TCP, "[::1]:65535"},
    };
    for (auto &c : ok) {
        ASSERT_EQ(locus_boot_parse(c.text, &a), LOCUS_OK) << c.text << ": " << locus_last_error();
        EXPECT_EQ(a.kind, c.kind) << c.text;
        EXPECT_STREQ(a.address, c.address) << c.text;
    }
}

TEST(Boot, ParseRejectsWithWhatIsAccepted)
{
    const char *bad[] = {"", "tcp", "tcp:", "tcp:host", "tcp:host:0", "tcp:host:70000", "tcp::5",
                         "tcp:[::1:5", "tcp:::1:5", "tcp:h:5x", "PMI", "mpi", "tcp:h:-1"};
    for (const char *t : bad) {
        EXPECT_EQ(locus_boot_parse(t, nullptr), LOCUS_ERR_INVALID) << t;
        EXPECT_TRUE(has(locus_last_error(), "expected auto, pmix, pmi1, singleton or tcp:HOST:PORT"))
            << t << ": " << locus_last_error();
    }
}

TEST(Boot, BadVariablesNameThemselves)
{
    {
        Env env({{"LOCUS_BOOT", "tcp:nohost"}});
        locus_boot_attr_t a;
        locus_boot_attr_init(&a);
        EXPECT_EQ(locus_boot_attr_from_env(&a), LOCUS_ERR_INVALID);
        EXPECT_TRUE(has(locus_last_error(), "LOCUS_BOOT='tcp:nohost': expected")) << locus_last_error();
        EXPECT_EQ(a.kind, LOCUS_BOOT_AUTO); // all or nothing
        EXPECT_EQ(locus_config_check(), LOCUS_ERR_INVALID);
        EXPECT_TRUE(has(locus_last_error(), "LOCUS_BOOT=")) << locus_last_error();
        locus_boot_t *b;
        EXPECT_EQ(locus_boot_init(nullptr, &b), LOCUS_ERR_INVALID);
    }
    {
        Env env({{"LOCUS_BOOT_TIMEOUT", "0"}});
        locus_boot_t *b;
        EXPECT_NE(locus_boot_init(nullptr, &b), LOCUS_OK);
        EXPECT_TRUE(has(locus_last_error(), "LOCUS_BOOT_TIMEOUT='0': expected a number in [0.1, 86400]"))
            << locus_last_error();
    }
}

TEST(Boot, ExplicitSourcesSayWhatIsMissing)
{
    locus_boot_t *b;
    {
        Env env({{"LOCUS_BOOT", "pmix"}});
        EXPECT_EQ(locus_boot_init(nullptr, &b), LOCUS_ERR_INVALID);
        EXPECT_TRUE(has(locus_last_error(), "LOCUS_BOOT=pmix: PMIX_RANK and PMIX_NAMESPACE are not set"))
            << locus_last_error();
    }
    {
        Env env({{"LOCUS_BOOT", "pmi1"}});
        EXPECT_EQ(locus_boot_init(nullptr, &b), LOCUS_ERR_INVALID);
        EXPECT_TRUE(has(locus_last_error(), "LOCUS_BOOT=pmi1: PMI_FD, PMI_RANK and PMI_SIZE"))
            << locus_last_error();
    }
    {
        Env env({{"LOCUS_BOOT", "tcp:127.0.0.1:9"}});
        EXPECT_EQ(locus_boot_init(nullptr, &b), LOCUS_ERR_INVALID);
        EXPECT_TRUE(has(locus_last_error(), "rank is unknown: set LOCUS_RANK and LOCUS_SIZE"))
            << locus_last_error();
    }
    {
        Env env({{"PMI_FD", "x"}, {"PMI_RANK", "0"}, {"PMI_SIZE", "2"}});
        EXPECT_EQ(locus_boot_init(nullptr, &b), LOCUS_ERR_INVALID);
        EXPECT_TRUE(has(locus_last_error(), "PMI_FD='x'")) << locus_last_error();
    }
    EXPECT_EQ(locus_boot_init(nullptr, nullptr), LOCUS_ERR_INVALID);
    EXPECT_EQ(locus_boot_fini(nullptr), LOCUS_OK);
    EXPECT_EQ(locus_boot_barrier(nullptr), LOCUS_ERR_INVALID);
}

TEST(Boot, SlurmTaskGivesRankAndLayoutButNoExchange)
{
    Env env({{"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "8"}, {"SLURM_STEP_ID", "3"},
             {"SLURM_LOCALID", "1"}, {"SLURM_NODEID", "2"}, {"SLURM_NNODES", "3"},
             {"SLURM_TASKS_PER_NODE", "2(x2),4"}, {"SLURM_JOB_ID", "777"}});
    locus_boot_t *b;
    ASSERT_EQ(locus_boot_init(nullptr, &b), LOCUS_OK) << locus_last_error();
    EXPECT_STREQ(locus_boot_source(b), "slurm");
    EXPECT_EQ(locus_boot_rank(b), 5);
    EXPECT_EQ(locus_boot_size(b), 8);
    EXPECT_EQ(locus_boot_local_rank(b), 1);
    EXPECT_EQ(locus_boot_local_size(b), 4); // node 2 of "2(x2),4"
    EXPECT_EQ(locus_boot_node(b), 2);
    EXPECT_EQ(locus_boot_num_nodes(b), 3);
    EXPECT_STREQ(locus_boot_job(b), "slurm-777.3");
    EXPECT_TRUE(has(locus_boot_notes(b), "srun without PMI")) << locus_boot_notes(b);
    EXPECT_EQ(locus_boot_barrier(b), LOCUS_ERR_UNSUPPORTED);
    EXPECT_TRUE(has(locus_last_error(), "LOCUS_BOOT=tcp:HOST:PORT")) << locus_last_error();
    EXPECT_TRUE(has(locus_last_error(), "--mpi=pmix")) << locus_last_error();
    locus_boot_fini(b);
}

TEST(Boot, SlurmBatchScriptIsNotATaskOfAStep)
{
    // sbatch's script sees SLURM_PROCID=0 and SLURM_NTASKS=N but no step
    Env env({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "8"}, {"SLURM_JOB_ID", "777"}});
    locus_boot_t *b;
    ASSERT_EQ(locus_boot_init(nullptr, &b), LOCUS_OK) << locus_last_error();
    EXPECT_STREQ(locus_boot_source(b), "singleton");
    locus_boot_fini(b);
}

TEST(Boot, SlurmWithBadLayoutIsAClearError)
{
    Env env({{"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "2"}, {"SLURM_STEP_ID", "0"},
             {"SLURM_LOCALID", "1"}, {"SLURM_NODEID", "0"}, {"SLURM_NNODES", "1"},
             {"SLURM_TASKS_PER_NODE", "1(y2)"}});
    locus_boot_t *b;
    EXPECT_EQ(locus_boot_init(nullptr, &b), LOCUS_ERR_INVALID);
    EXPECT_TRUE(has(locus_last_error(), "SLURM_TASKS_PER_NODE='1(y2)'")) << locus_last_error();
}

TEST(Boot, JobIdsAreShortAndDistinct)
{
    char a[BOOT_JOB_MAX + 1], b[BOOT_JOB_MAX + 1];
    boot_make_job(a, "pmix-", "prterun-host@1/with spaces");
    EXPECT_STREQ(a, "pmix-prterun-host_1_with_spaces");
    std::string long1(200, 'x'), long2 = long1;
    long2[150] = 'y';
    boot_make_job(a, "p-", long1.c_str());
    boot_make_job(b, "p-", long2.c_str());
    EXPECT_TRUE(valid_job(a)) << a;
    EXPECT_EQ(strlen(a), 48u);
    EXPECT_STRNE(a, b);
}

TEST(Boot, NodesAreNumberedByLowestRankAndLocalRanksByRank)
{
    // ranks 0..5 on hosts B A B C A B: nodes B=0, A=1, C=2
    const char *host[] = {"B", "A", "B", "C", "A", "B"};
    std::vector<char> ids(6 * BOOT_HOSTID_LEN, 0);
    for (int r = 0; r < 6; r++)
        snprintf(&ids[r * BOOT_HOSTID_LEN], BOOT_HOSTID_LEN, "%s/boot-id", host[r]);
    int node[] = {0, 1, 0, 2, 1, 0}, local[] = {0, 0, 1, 0, 1, 2}, lsize[] = {3, 2, 3, 1, 2, 3};
    for (int r = 0; r < 6; r++) {
        locus_boot_t b{};
        b.rank = r;
        b.size = 6;
        ASSERT_EQ(boot_node_assign(&b, ids.data()), LOCUS_OK);
        EXPECT_EQ(b.node, node[r]) << "rank " << r;
        EXPECT_EQ(b.local_rank, local[r]) << "rank " << r;
        EXPECT_EQ(b.local_size, lsize[r]) << "rank " << r;
        EXPECT_EQ(b.num_nodes, 3) << "rank " << r;
    }
}

TEST(Boot, AbortExitsWithTheStatus)
{
    pid_t p = spawn([] {
        Env env({{"LOCUS_BOOT", "singleton"}});
        locus_boot_t *b;
        if (locus_boot_init(nullptr, &b))
            return 1;
        locus_boot_abort(b, 5, "singleton abort");
    });
    pid_t q = spawn([]() -> int { locus_boot_abort(nullptr, 6, nullptr); });
    int ws;
    waitpid(p, &ws, 0);
    EXPECT_EQ(code_of(ws), 5);
    waitpid(q, &ws, 0);
    EXPECT_EQ(code_of(ws), 6);
}

// ---------- PMI-1 against a fake launcher ----------

namespace {

// A KVS speaking hydra's PMI-1 replies to `n` ranks, one socketpair each.
class FakePmi {
public:
    explicit FakePmi(int n, int close_after = -1) : n_(n), close_after_(close_after)
    {
        for (int r = 0; r < n; r++) {
            int sv[2];
            socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
            ours_.push_back(sv[0]);
            servers_.push_back(sv[0]);
            theirs_.push_back(sv[1]);
        }
        thread_ = std::thread([this] { serve(); });
    }
    ~FakePmi()
    {
        for (int fd : theirs_)
            close(fd);
        thread_.join();
    }
    int fd_for(int r) const { return theirs_[r]; }
    // In a forked rank: drop the copies of the launcher's ends, so that the
    // launcher closing them is seen.
    void child_side() const
    {
        for (int fd : servers_)
            close(fd);
    }
    std::atomic<size_t> longest_line{0};
    int abort_code = -1;

private:
    void reply(int r, const std::string &s)
    {
        std::string l = s + "\n";
        (void)!write(ours_[r], l.data(), l.size());
    }
    static std::string field(const std::string &line, const std::string &key)
    {
        size_t p = line.find(" " + key + "=");
        if (p == std::string::npos)
            return "";
        p += key.size() + 2;
        return line.substr(p, line.find(' ', p) - p);
    }
    void handle(int r, const std::string &line)
    {
        if (line.size() + 1 > longest_line)
            longest_line = line.size() + 1;
        std::string cmd = line.substr(4, line.find(' ') - 4);
        if (cmd == "init")
            reply(r, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0");
        else if (cmd == "get_maxes")
            reply(r, "cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024");
        else if (cmd == "get_my_kvsname")
            reply(r, "cmd=my_kvsname kvsname=fake_kvs_1");
        else if (cmd == "put") {
            kvs_[field(line, "key")] = field(line, "value");
            reply(r, "cmd=put_result rc=0 msg=success");
        } else if (cmd == "get") {
            auto it = kvs_.find(field(line, "key"));
            reply(r, it == kvs_.end() ? "cmd=get_result rc=-1 msg=key_not_found value=unknown"
                                      : "cmd=get_result rc=0 msg=success value=" + it->second);
        } else if (cmd == "barrier_in") {
            if (++in_barrier_ == n_) {
                for (int q = 0; q < n_; q++)
                    reply(q, "cmd=barrier_out");
                in_barrier_ = 0;
            }
        } else if (cmd == "finalize")
            reply(r, "cmd=finalize_ack");
        else if (cmd == "abort")
            abort_code = atoi(field(line, "exitcode").c_str());
    }
    void serve()
    {
        std::vector<std::string> buf(n_);
        int open = n_, handled = 0;
        while (open > 0) {
            std::vector<pollfd> pf;
            for (int fd : ours_)
                pf.push_back({fd, POLLIN, 0});
            if (poll(pf.data(), pf.size(), 20000) <= 0)
                break;
            for (int r = 0; r < n_; r++) {
                if (ours_[r] < 0 || !pf[r].revents)
                    continue;
                char tmp[4096];
                ssize_t k = read(ours_[r], tmp, sizeof tmp);
                if (k <= 0 || handled == close_after_) {
                    close(ours_[r]);
                    ours_[r] = -1;
                    open--;
                    continue;
                }
                buf[r].append(tmp, k);
                for (size_t nl; (nl = buf[r].find('\n')) != std::string::npos;) {
                    handle(r, buf[r].substr(0, nl));
                    handled++;
                    buf[r].erase(0, nl + 1);
                }
            }
        }
    }
    int n_, close_after_, in_barrier_ = 0;
    std::vector<int> ours_, servers_, theirs_;
    std::map<std::string, std::string> kvs_;
    std::thread thread_;
};

// Rank r of a fake PMI-1 job runs fn(b) after init; its environment is set in the child.
int pmi_rank(const FakePmi &pmi, int r, int n, const std::function<int(locus_boot_t *)> &fn, RankOut &o)
{
    pmi.child_side();
    Env env({{"PMI_FD", std::to_string(pmi.fd_for(r)).c_str()},
             {"PMI_RANK", std::to_string(r).c_str()},
             {"PMI_SIZE", std::to_string(n).c_str()}});
    locus_boot_t *b;
    locus_status_t st = locus_boot_init(nullptr, &b);
    if (st) {
        record(o, st);
        return 1;
    }
    record_ids(o, b);
    int rc = fn(b);
    locus_boot_fini(b);
    return rc;
}

} // namespace

TEST(BootPmi1, ExchangesLargeAndEmptyBlobsWithinTheLineLimit)
{
    const int n = 2;
    FakePmi pmi(n);
    Shared s(n);
    auto codes = run_ranks(n, [&](int r) {
        return pmi_rank(pmi, r, n, [&](locus_boot_t *b) {
            for (size_t len : {size_t(65536), size_t(0), size_t(5), size_t(511)}) {
                std::vector<unsigned char> mine(len + 1), all(2 * len + 1);
                for (size_t k = 0; k < len; k++)
                    mine[k] = (unsigned char)(r * 77 + k * 13);
                if (locus_boot_allgather(b, mine.data(), len, all.data())) {
                    record(s[r], LOCUS_ERR_INVALID);
                    return 2;
                }
                for (int q = 0; q < n; q++)
                    for (size_t k = 0; k < len; k++)
                        if (all[q * len + k] != (unsigned char)(q * 77 + k * 13))
                            return 3;
            }
            return 0;
        }, s[r]);
    });
    for (int r = 0; r < n; r++) {
        EXPECT_EQ(codes[r], 0) << "rank " << r << ": " << s[r].msg;
        EXPECT_STREQ(s[r].source, "pmi1");
        EXPECT_STREQ(s[r].job, "fake_kvs_1");
        EXPECT_EQ(s[r].rank, r);
        EXPECT_EQ(s[r].local_size, n);
        EXPECT_EQ(s[r].num_nodes, 1);
    }
    EXPECT_LE(pmi.longest_line.load(), 1024u); // MPICH's simple PMI line limit
}

TEST(BootPmi1, DifferentLengthsAreNamed)
{
    const int n = 2;
    FakePmi pmi(n);
    Shared s(n);
    auto codes = run_ranks(n, [&](int r) {
        return pmi_rank(pmi, r, n, [&](locus_boot_t *b) {
            char mine[32] = {}, all[64];
            locus_status_t st = locus_boot_allgather(b, mine, r ? 32 : 16, all);
            record(s[r], st);
            return st == LOCUS_ERR_INVALID ? 0 : 1;
        }, s[r]);
    });
    EXPECT_EQ(codes[0], 0) << s[0].msg;
    EXPECT_TRUE(has(s[0].msg, "rank 1 passed 32 bytes, this rank 16")) << s[0].msg;
}

TEST(BootPmi1, LauncherHangingUpIsAnErrorNotAHang)
{
    // answers init, get_maxes and get_my_kvsname, then hangs up in the middle
    // of init's exchange of host ids
    FakePmi pmi(1, 3);
    Shared s(1);
    auto codes = run_ranks(1, [&](int r) {
        return pmi_rank(pmi, 0, 1, [&](locus_boot_t *) { return 0; }, s[0]) == 1 &&
                       s[0].st == LOCUS_ERR_PEER_FAILED ? 0 : 1;
    });
    EXPECT_EQ(codes[0], 0) << s[0].msg;
    EXPECT_TRUE(has(s[0].msg, "PMI-1: the launcher closed PMI_FD")) << s[0].msg;
}
