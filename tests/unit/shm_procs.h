// Multi-process harness for the shm tests: run a function as every rank of a
// fresh job, each rank a forked child.
#ifndef LOCUS_TEST_SHM_PROCS_H
#define LOCUS_TEST_SHM_PROCS_H

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include <locus/locus.h>

namespace shmtest {

inline std::string fresh_job()
{
    static int n = 0;
    return "ut" + std::to_string(getpid()) + "-" + std::to_string(n++);
}

constexpr unsigned kChildSeconds = 20; // backstop only: every test takes milliseconds

// Run fn(ep) in `size` forked processes; returns how many failed (+100 if the
// segment name was still linked afterwards). A rank whose fn fails exits
// without finalize, so peers waiting for it fail with PEER_FAILED instead of
// hanging; an alarm bounds every child anyway.
inline int run_procs(int size, const std::function<int(locus_shm_ep_t *)> &fn, const char *env = nullptr,
                     uint64_t heap = 0)
{
    std::string job = fresh_job();
    std::vector<pid_t> pids;
    for (int r = 0; r < size; r++) {
        pid_t p = fork();
        if (p == 0) {
            alarm(kChildSeconds);
            if (env)
                putenv(const_cast<char *>(env));
            locus_shm_opts_t o;
            locus_shm_opts_init(&o);
            o.rank = r;
            o.size = size;
            o.job = job.c_str();
            o.heap_bytes = heap;
            locus_shm_ep_t *ep;
            if (locus_shm_init(&o, &ep)) {
                fprintf(stderr, "rank %d: init: %s\n", r, locus_last_error());
                _exit(10);
            }
            int rc = fn(ep);
            if (rc)
                _exit(rc);
            locus_shm_barrier(ep);
            locus_shm_finalize(ep);
            _exit(rc);
        }
        pids.push_back(p);
    }
    int bad = 0;
    for (pid_t p : pids) {
        int ws;
        waitpid(p, &ws, 0);
        bad += !(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
    }
    char name[128];
    locus_shm_segment_name(job.c_str(), name, sizeof name);
    if (shm_unlink(name) == 0)
        bad += 100; // the name must be gone once everybody attached
    return bad;
}

// The endpoint's counters (locus_shm_stats); zeroes if the call fails.
inline locus_shm_stats_t stats(const locus_shm_ep_t *ep)
{
    locus_shm_stats_t s{};
    if (locus_shm_stats(ep, &s) != LOCUS_OK)
        s = locus_shm_stats_t{};
    return s;
}

} // namespace shmtest

#define CHILD_CHECK(c)                                                                             \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #c, locus_last_error()); \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

#endif
