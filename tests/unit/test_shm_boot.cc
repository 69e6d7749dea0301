// Which job and local rank locus_shm_init takes (include/locus/shm.h): the
// caller's boot handle, explicit options, the pre-boot LOCUS_RANK/SIZE/JOB
// contract, or a job it joins itself with boot (here: a tcp hub served by the
// test as a launcher would, like `locus run`). Forked processes on one node.
#include <gtest/gtest.h>

#include <string>

#include "boot_procs.h"

using namespace boottest;

namespace {

bool has_text(const char *text, const char *part) { return strstr(text, part) != nullptr; }

// Every launcher variable unset: the child then sets what its case needs.
void clean_env()
{
    for (const char *v : {"LOCUS_BOOT", "LOCUS_RANK", "LOCUS_SIZE", "LOCUS_JOB", "PMIX_RANK",
                          "PMIX_NAMESPACE", "PMI_FD", "PMI_RANK", "PMI_SIZE", "SLURM_PROCID",
                          "SLURM_NTASKS", "SLURM_STEP_ID", "OMPI_COMM_WORLD_LOCAL_RANK"})
        unsetenv(v);
}

// locus run's environment for rank r of n at the hub (without LOCUS_JOB: the
// job must come from boot, not from the pre-boot contract).
void launcher_env(const std::string &hub_value, int r, int n)
{
    clean_env();
    setenv("LOCUS_BOOT", hub_value.c_str(), 1);
    setenv("LOCUS_RANK", std::to_string(r).c_str(), 1);
    setenv("LOCUS_SIZE", std::to_string(n).c_str(), 1);
}

// Init with opts, check the ids, pass a token around the ring, finalize.
int ring(const locus_shm_opts_t &o, int want_rank, int want_size, RankOut &out)
{
    locus_shm_ep_t *ep;
    locus_status_t st = locus_shm_init(&o, &ep);
    if (st) {
        record(out, st);
        return 1;
    }
    int me = locus_shm_rank(ep), n = locus_shm_size(ep);
    out.rank = me;
    out.size = n;
    if (me != want_rank || n != want_size) {
        snprintf(out.msg, sizeof out.msg, "rank %d of %d, expected %d of %d", me, n, want_rank, want_size);
        locus_shm_finalize(ep);
        return 2;
    }
    int got = -1, token = 1000 + me;
    if (n > 1) {
        locus_shm_req_t *r;
        if ((st = locus_shm_irecv(ep, (me + n - 1) % n, 7, &got, sizeof got, &r)) ||
            (st = locus_shm_send(ep, (me + 1) % n, 7, &token, sizeof token)) ||
            (st = locus_shm_wait(ep, r, nullptr)) || (st = locus_shm_barrier(ep))) {
            record(out, st);
            return 3;
        }
        if (got != 1000 + (me + n - 1) % n) {
            snprintf(out.msg, sizeof out.msg, "token %d from the left neighbour", got);
            return 4;
        }
    }
    return locus_shm_finalize(ep) == LOCUS_OK ? 0 : 5;
}

struct Hub {
    locus_boot_hub_t *h = nullptr;
    std::string value;
    explicit Hub(int n)
    {
        if (locus_boot_hub_create("127.0.0.1:0", n, nullptr, "test-launcher", 10, &h) == LOCUS_OK)
            value = locus_boot_hub_address(h);
    }
    ~Hub() { locus_boot_hub_destroy(h); }
};

} // namespace

TEST(ShmBoot, InitJoinsTheJobOfALauncher)
{
    const int n = 3;
    Hub hub(n);
    ASSERT_FALSE(hub.value.empty()) << locus_last_error();
    Shared s(n);
    auto codes = run_ranks(n, [&](int r) {
        launcher_env(hub.value, r, n);
        locus_shm_opts_t o;
        locus_shm_opts_init(&o);
        return ring(o, r, n, s[r]);
    }, {}, hub.h);
    for (int r = 0; r < n; r++)
        EXPECT_EQ(codes[r], 0) << "rank " << r << ": " << s[r].msg;
}

TEST(ShmBoot, APassedHandleIsUsedAndStaysTheCallers)
{
    const int n = 3;
    Hub hub(n);
    ASSERT_FALSE(hub.value.empty()) << locus_last_error();
    Shared s(n);
    auto codes = run_ranks(n, [&](int r) {
        launcher_env(hub.value, r, n);
        locus_boot_t *b;
        locus_status_t st = locus_boot_init(nullptr, &b);
        if (st) {
            record(s[r], st);
            return 10;
        }
        locus_shm_opts_t o;
        locus_shm_opts_init(&o);
        o.boot = b;
        int rc = ring(o, locus_boot_local_rank(b), locus_boot_local_size(b), s[r]);
        if (rc)
            return rc;
        // still the caller's: a collective after locus_shm_finalize works
        if ((st = locus_boot_barrier(b)) || (st = locus_boot_fini(b))) {
            record(s[r], st);
            return 11;
        }
        return 0;
    }, {}, hub.h);
    for (int r = 0; r < n; r++)
        EXPECT_EQ(codes[r], 0) << "rank " << r << ": " << s[r].msg;
}

TEST(ShmBoot, ASecondJoinIsRefusedAndSaysToPassTheHandle)
{
    const int n = 2;
    Hub hub(n);
    ASSERT_FALSE(hub.value.empty()) << locus_last_error();
    Shared s(n);
    auto codes = run_ranks(n, [&](int r) {
        launcher_env(hub.value, r, n);
        setenv("LOCUS_BOOT_TIMEOUT", "3", 1);
        locus_boot_t *b;
        locus_status_t st = locus_boot_init(nullptr, &b);
        if (st) {
            record(s[r], st);
            return 10;
        }
        locus_shm_opts_t o;
        locus_shm_opts_init(&o);
        locus_shm_ep_t *ep;
        st = locus_shm_init(&o, &ep); // joins again: refused
        record(s[r], st);
        if (!st)
            locus_shm_finalize(ep);
        locus_boot_fini(b);
        return st ? 0 : 12;
    }, {}, hub.h);
    for (int r = 0; r < n; r++) {
        EXPECT_EQ(codes[r], 0) << "rank " << r << ": " << s[r].msg;
        EXPECT_TRUE(has_text(s[r].msg, "locus_shm_opts_t.boot")) << s[r].msg;
    }
}

TEST(ShmBoot, ExplicitIdsDoNotAskBoot)
{
    Shared s(1);
    auto codes = run_ranks(1, [&](int) {
        clean_env();
        // boot would fail here: nobody serves this address
        setenv("LOCUS_BOOT", ("tcp:127.0.0.1:" + std::to_string(free_port())).c_str(), 1);
        setenv("LOCUS_BOOT_TIMEOUT", "1", 1);
        std::string job = "explicit-" + std::to_string(getpid());
        locus_shm_opts_t o;
        locus_shm_opts_init(&o);
        o.rank = 0;
        o.size = 1;
        o.job = job.c_str();
        return ring(o, 0, 1, s[0]);
    });
    EXPECT_EQ(codes[0], 0) << s[0].msg;
}

TEST(ShmBoot, PreBootEnvironmentWithoutLocusBoot)
{
    // LOCUS_RANK/SIZE/JOB as an older locus run (or a fault harness) sets them.
    const int n = 2;
    std::string job = "preboot-" + std::to_string(getpid());
    Shared s(n);
    auto codes = run_ranks(n, [&](int r) {
        clean_env();
        setenv("LOCUS_RANK", std::to_string(r).c_str(), 1);
        setenv("LOCUS_SIZE", std::to_string(n).c_str(), 1);
        setenv("LOCUS_JOB", job.c_str(), 1);
        locus_shm_opts_t o;
        locus_shm_opts_init(&o);
        return ring(o, r, n, s[r]);
    });
    for (int r = 0; r < n; r++)
        EXPECT_EQ(codes[r], 0) << "rank " << r << ": " << s[r].msg;
    // ... and without LOCUS_JOB the error says how to start the processes
    codes = run_ranks(1, [&](int) {
        clean_env();
        setenv("LOCUS_SIZE", "2", 1);
        locus_shm_ep_t *ep;
        locus_status_t st = locus_shm_init(nullptr, &ep);
        record(s[0], st);
        return st == LOCUS_ERR_INVALID ? 0 : 1;
    });
    EXPECT_EQ(codes[0], 0) << s[0].msg;
    EXPECT_TRUE(has_text(s[0].msg, "LOCUS_SIZE=2 but LOCUS_JOB is unset")) << s[0].msg;
}

TEST(ShmBoot, NoLauncherIsASingleton)
{
    Shared s(1);
    auto codes = run_ranks(1, [&](int) {
        clean_env();
        locus_shm_opts_t o;
        locus_shm_opts_init(&o);
        return ring(o, 0, 1, s[0]);
    });
    EXPECT_EQ(codes[0], 0) << s[0].msg;
}
