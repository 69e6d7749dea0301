// Multi-process harness for the boot tests: each rank a forked child that
// writes what it saw into a shared page (status, error text, times), and a
// parent that waits for them (and, as a launcher would, reports exits to a
// hub). An alarm bounds every child.
#ifndef LOCUS_TEST_BOOT_PROCS_H
#define LOCUS_TEST_BOOT_PROCS_H

#include <arpa/inet.h>
#include <cstdio>
#include <cstring>
#include <functional>
#include <netinet/in.h>
#include <string>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include <locus/locus.h>

extern "C" {
#include "core/clock.h"
}

namespace boottest {

constexpr unsigned kChildSeconds = 30; // backstop only

struct RankOut {
    int st;           // last status a rank reports
    double t_mark;    // a moment the test cares about (CLOCK_MONOTONIC seconds)
    double t_err;     // when the failure was seen
    char msg[512];    // locus_last_error() of that failure
    char job[64], source[32];
    int rank, size, local_rank, local_size, node, num_nodes;
};

// One RankOut per rank in memory the children share with the parent.
struct Shared {
    RankOut *out;
    int n;
    explicit Shared(int n_) : n(n_)
    {
        out = static_cast<RankOut *>(mmap(nullptr, sizeof(RankOut) * n, PROT_READ | PROT_WRITE,
                                          MAP_SHARED | MAP_ANONYMOUS, -1, 0));
        memset(out, 0, sizeof(RankOut) * n);
    }
    ~Shared() { munmap(out, sizeof(RankOut) * n); }
    RankOut &operator[](int r) { return out[r]; }
};

inline void record(RankOut &o, locus_status_t st)
{
    o.st = st;
    o.t_err = lc_now_s();
    snprintf(o.msg, sizeof o.msg, "%s", locus_last_error());
}

inline void record_ids(RankOut &o, const locus_boot_t *b)
{
    o.rank = locus_boot_rank(b);
    o.size = locus_boot_size(b);
    o.local_rank = locus_boot_local_rank(b);
    o.local_size = locus_boot_local_size(b);
    o.node = locus_boot_node(b);
    o.num_nodes = locus_boot_num_nodes(b);
    snprintf(o.job, sizeof o.job, "%s", locus_boot_job(b));
    snprintf(o.source, sizeof o.source, "%s", locus_boot_source(b));
}

// A port nobody listens on right now (the kernel's pick, then released).
inline int free_port()
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a);
    socklen_t l = sizeof a;
    getsockname(fd, reinterpret_cast<sockaddr *>(&a), &l);
    close(fd);
    return ntohs(a.sin_port);
}

inline locus_boot_attr_t tcp_attr(const std::string &address, int rank, int size, double timeout = 10)
{
    locus_boot_attr_t a;
    locus_boot_attr_init(&a);
    a.kind = LOCUS_BOOT_TCP;
    snprintf(a.address, sizeof a.address, "%s", address.c_str());
    a.rank = rank;
    a.size = size;
    a.timeout = timeout;
    return a;
}

inline pid_t spawn(const std::function<int()> &fn)
{
    pid_t p = fork();
    if (p == 0) {
        alarm(kChildSeconds);
        _exit(fn());
    }
    return p;
}

// Exit code, or 128 + signal.
inline int code_of(int ws) { return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws); }

// Start fn(rank) for each rank in `ranks`, wait for all; exit codes by rank
// (-1 for ranks not started). With a hub, report every exit to it, as a
// launcher does.
inline std::vector<int> run_ranks(int n, const std::function<int(int)> &fn,
                                  std::vector<int> ranks = {}, locus_boot_hub_t *hub = nullptr)
{
    if (ranks.empty())
        for (int r = 0; r < n; r++)
            ranks.push_back(r);
    std::vector<pid_t> pids(n, 0);
    std::vector<int> codes(n, -1);
    for (int r : ranks)
        pids[r] = spawn([&fn, r] { return fn(r); });
    for (size_t left = ranks.size(); left > 0;) {
        int ws;
        pid_t p = wait(&ws);
        if (p < 0)
            break;
        for (int r = 0; r < n; r++)
            if (pids[r] == p) {
                codes[r] = code_of(ws);
                pids[r] = 0;
                left--;
                locus_boot_hub_exited(hub, r, ws);
            }
    }
    return codes;
}

} // namespace boottest

#endif
