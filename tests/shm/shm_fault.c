/* Fault driver: start --procs shm_stress processes (--forever), wait until
 * they all attached (the /dev/shm name is gone), let them stream for a random
 * 0-10 ms, kill -9 one of them, and require every survivor to exit with
 * status 3 (LOCUS_ERR_PEER_FAILED) within 2 s and no /dev/shm object left.
 *   shm_fault [--iterations N] [--procs P] [--verbose] path/to/shm_stress */
#include <locus/locus.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void nap(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

static int logfd = -1;

/* The children's stderr of the failed iteration. */
static void dump_log(void)
{
    char buf[4096];
    ssize_t n;
    lseek(logfd, 0, SEEK_SET);
    fprintf(stderr, "--- children's stderr:\n");
    while ((n = read(logfd, buf, sizeof buf)) > 0)
        fwrite(buf, 1, (size_t)n, stderr);
}

static void kill_all(pid_t *pids, int n)
{
    dump_log();
    for (int r = 0; r < n; r++)
        if (pids[r] > 0) {
            kill(pids[r], SIGKILL);
            waitpid(pids[r], NULL, 0);
            pids[r] = 0;
        }
}

int main(int argc, char **argv)
{
    int iters = 100, procs = 4;
    bool verbose = false;
    const char *prog = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--iterations") && i + 1 < argc)
            iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--procs") && i + 1 < argc)
            procs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--verbose"))
            verbose = true;
        else
            prog = argv[i];
    }
    if (!prog || procs < 2 || procs > 64 || iters < 1) {
        fprintf(stderr, "usage: shm_fault [--iterations N] [--procs 2..64] [--verbose] shm_stress\n");
        return 2;
    }
    srand((unsigned)getpid());
    char logpath[64];
    snprintf(logpath, sizeof logpath, "/tmp/shm_fault_%d.log", (int)getpid());
    logfd = open(logpath, O_RDWR | O_CREAT | O_TRUNC | O_APPEND, 0600);
    unlink(logpath);
    if (logfd < 0) {
        perror("shm_fault: log file");
        return 2;
    }
    double worst = 0, total = 0;
    for (int it = 0; it < iters; it++) {
        char job[64], name[128], path[160], sz[16];
        snprintf(job, sizeof job, "fault%d-%d", (int)getpid(), it);
        locus_shm_segment_name(job, name, sizeof name);
        snprintf(path, sizeof path, "/dev/shm%s", name);
        snprintf(sz, sizeof sz, "%d", procs);
        pid_t pids[64] = {0};
        int pfd[2];
        if (pipe(pfd)) {
            perror("shm_fault: pipe");
            return 2;
        }
        char fdarg[16];
        snprintf(fdarg, sizeof fdarg, "%d", pfd[1]);
        if (ftruncate(logfd, 0) || lseek(logfd, 0, SEEK_SET) < 0)
            perror("shm_fault: log");
        for (int r = 0; r < procs; r++) {
            pid_t p = fork();
            if (p == 0) {
                char rs[16];
                snprintf(rs, sizeof rs, "%d", r);
                setenv("LOCUS_RANK", rs, 1);
                setenv("LOCUS_SIZE", sz, 1);
                setenv("LOCUS_JOB", job, 1);
                setenv("LOCUS_SHM_TIMEOUT", "10", 1);
                if (!verbose) {
                    int dn = open("/dev/null", O_WRONLY);
                    dup2(dn, 1);
                    dup2(logfd, 2); /* shown only when the iteration fails */
                }
                close(pfd[0]);
                execl(prog, prog, "--forever", "--max-bits", "20", "--ready-fd", fdarg, (char *)NULL);
                _exit(127);
            }
            pids[r] = p;
        }
        /* Every child writes one byte to the pipe once locus_shm_init returned. */
        close(pfd[1]);
        double t0 = now_s();
        int ready = 0;
        while (ready < procs && now_s() - t0 < 10) {
            struct pollfd pf = {pfd[0], POLLIN, 0};
            char buf[64];
            if (poll(&pf, 1, 100) > 0) {
                ssize_t k = read(pfd[0], buf, sizeof buf);
                if (k <= 0)
                    break; /* every child closed the pipe: some died before attaching */
                ready += (int)k;
            }
        }
        close(pfd[0]);
        if (ready < procs || access(path, F_OK) == 0) {
            fprintf(stderr, "iteration %d: only %d of %d processes attached within %.1f s%s\n", it,
                    ready, procs, now_s() - t0, access(path, F_OK) == 0 ? " (name still there)" : "");
            kill_all(pids, procs);
            shm_unlink(name);
            return 1;
        }
        nap((rand() % 10000) * 1e-6);
        int victim = rand() % procs;
        kill(pids[victim], SIGKILL);
        double tk = now_s();
        waitpid(pids[victim], NULL, 0);
        pids[victim] = 0;
        int left = procs - 1;
        while (left && now_s() - tk < 2.0) {
            int ws;
            pid_t p = waitpid(-1, &ws, WNOHANG);
            if (p <= 0) {
                nap(0.0002);
                continue;
            }
            for (int r = 0; r < procs; r++)
                if (pids[r] == p) {
                    pids[r] = 0;
                    left--;
                    if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 3) {
                        fprintf(stderr, "iteration %d: survivor rank %d ended with %s %d, expected "
                                "exit 3 (peer failed)\n", it, r, WIFEXITED(ws) ? "status" : "signal",
                                WIFEXITED(ws) ? WEXITSTATUS(ws) : WTERMSIG(ws));
                        kill_all(pids, procs);
                        return 1;
                    }
                }
        }
        double dt = now_s() - tk;
        if (left) {
            fprintf(stderr, "iteration %d: %d survivor(s) still running 2 s after rank %d was "
                    "killed (hang)\n", it, left, victim);
            if (getenv("SHM_FAULT_DEBUG"))
                for (int r = 0; r < procs; r++)
                    if (pids[r]) {
                        char cmd[128];
                        snprintf(cmd, sizeof cmd, "gdb -p %d -batch -ex 'bt 12' 2>/dev/null | grep '^#'", (int)pids[r]);
                        if (system(cmd) < 0)
                            perror("system");
                    }
            kill_all(pids, procs);
            return 1;
        }
        if (access(path, F_OK) == 0) {
            fprintf(stderr, "iteration %d: %s left behind\n", it, path);
            shm_unlink(name);
            return 1;
        }
        worst = dt > worst ? dt : worst;
        total += dt;
    }
    printf("%d iterations: every survivor reported the failure; detection mean %.1f ms, worst "
           "%.1f ms; no /dev/shm object left\n", iters, total / iters * 1e3, worst * 1e3);
    return 0;
}
