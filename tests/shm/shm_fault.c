/* Fault driver: start --procs shm_stress processes (--forever), wait until
 * they all attached (the /dev/shm name is gone), let them stream for a random
 * 0-10 ms, kill -9 one of them, and require every survivor to exit with
 * status 3 (LOCUS_ERR_PEER_FAILED) within 2 s and no /dev/shm object left.
 *   shm_fault [--iterations N] [--procs P] [--verbose] path/to/shm_stress */
#include <locus/locus.h>

#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* Does process pid map the segment called name? */
static bool maps_segment(pid_t pid, const char *name)
{
    char path[64], line[512];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    FILE *f = fopen(path, "r");
    bool found = false;
    while (f && !found && fgets(line, sizeof line, f))
        found = strstr(line, name) != NULL;
    if (f)
        fclose(f);
    return found;
}

static void kill_all(pid_t *pids, int n)
{
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
    double worst = 0, total = 0;
    for (int it = 0; it < iters; it++) {
        char job[64], name[128], path[160], sz[16];
        snprintf(job, sizeof job, "fault%d-%d", (int)getpid(), it);
        locus_shm_segment_name(job, name, sizeof name);
        snprintf(path, sizeof path, "/dev/shm%s", name);
        snprintf(sz, sizeof sz, "%d", procs);
        pid_t pids[64] = {0};
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
                    dup2(dn, 2);
                }
                execl(prog, prog, "--forever", "--max-bits", "20", (char *)NULL);
                _exit(127);
            }
            pids[r] = p;
        }
        /* All attached once the name is gone while rank 0 has the segment mapped. */
        double t0 = now_s();
        bool seen = false;
        while (now_s() - t0 < 10) {
            if (access(path, F_OK) != 0 && (seen = maps_segment(pids[0], name)))
                break;
            nap(0.0002);
        }
        if (access(path, F_OK) == 0 || !seen) {
            fprintf(stderr, "iteration %d: processes never all attached (%s)\n", it, path);
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
