/* locus run -n N [--bind auto|core|l3|numa|none] -- prog args: start N local
 * processes of one job (LOCUS_RANK/LOCUS_SIZE/LOCUS_JOB), serve their
 * rendezvous (the locus_boot hub: LOCUS_BOOT=tcp:127.0.0.1:PORT, its socket
 * held here so there is no port race; it hears of every exit and abort), wait
 * for them, and remove the job's shm name if something died before it was
 * unlinked. */
#include "cli.h"

#include <locus/locus.h>

#include "core/config.h"
#include "core/sysfs.h"
#include "run_bind.h"

#include <errno.h>
#include <numa.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { BIND_AUTO, BIND_NONE, BIND_CORE, BIND_L3, BIND_NUMA };

static void usage(FILE *out)
{
    fprintf(out,
            "usage: locus run -n N [--bind auto|core|l3|numa|none] [--grace SECONDS] -- prog [args...]\n"
            "  starts N local processes with LOCUS_RANK=0..N-1, LOCUS_SIZE=N, a fresh\n"
            "  LOCUS_JOB and LOCUS_BOOT=tcp:127.0.0.1:PORT (the locus_boot rendezvous this\n"
            "  command serves: a process that dies fails the others' collectives, an abort\n"
            "  ends the job); --bind pins rank r to one CPU (core), the CPUs of one L3 (l3) or of\n"
            "  one NUMA node (numa), round-robin over the CPUs this command may use; auto (the\n"
            "  default) gives each rank a block of its own of those CPUs (about CPUs/N, near each\n"
            "  other: the same node and L3 first; whole cores with their hardware threads while N\n"
            "  is at most the cores) when N is at most the CPUs, and leaves the ranks unbound when\n"
            "  there are more; none never binds.\n"
            "  When a process fails, the others get --grace seconds (default 5) to notice\n"
            "  and exit before they are killed. Exit status: the first failure's (a rank's\n"
            "  own code; 128+N if it was killed by signal N; 127 if prog cannot be executed),\n"
            "  else 0; 2 for a usage error of locus run.\n");
}

/* The rma heaps of a job whose process died during init (before the names
 * were unlinked, which happens once every local process mapped them):
 * /dev/shm/locus-<uid>-<job>-h<rank>, or the same name on a hugetlbfs mount. */
static void remove_heaps(const char *job, long n)
{
    char dirs[8][512] = {"/dev/shm"};
    int nd = 1;
    FILE *m = fopen("/proc/mounts", "re");
    char dev[256], mnt[512], type[64];
    while (m && nd < 8 && fscanf(m, "%255s %511s %63s %*[^\n]", dev, mnt, type) == 3)
        if (!strcmp(type, "hugetlbfs"))
            snprintf(dirs[nd++], sizeof dirs[0], "%s", mnt);
    if (m)
        fclose(m);
    int removed = 0;
    for (int d = 0; d < nd; d++)
        for (long r = 0; r < n; r++) {
            char path[700];
            snprintf(path, sizeof path, "%.511s/locus-%u-%.64s-h%ld", dirs[d], (unsigned)getuid(), job, r);
            removed += unlink(path) == 0;
        }
    if (removed)
        fprintf(stderr, "locus run: removed %d heap object%s a failed process left behind\n", removed,
                removed == 1 ? "" : "s");
}

/* The CPUs of set, in number order, into cpus; how many. */
static int cpu_list(const cpu_set_t *set, int *cpus)
{
    int n = 0;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, set))
            cpus[n++] = c;
    return n;
}

/* Where cpu c sits (run_bind.h): NUMA node, L3, its core's first thread. */
static run_cpu_t cpu_place(int c)
{
    char path[96], line[256];
    int sib[CPU_SETSIZE];
    long node = numa_available() >= 0 ? numa_node_of_cpu(c) : 0, l3 = lc_sysfs_l3_id(c), core = c;
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", c);
    if (lc_read_line(path, line, sizeof line) && lc_parse_cpulist(line, sib, CPU_SETSIZE) > 0)
        core = sib[0];
    return (run_cpu_t){node < 0 ? 0 : node, l3 < 0 ? 0 : l3, core, c};
}

/* auto (run_auto_blocks): a block of cpus of its own per rank while the
 * ranks fit the cpus, whole cores while they fit the cores (all of them for
 * one rank, so a hybrid rank's threads keep every CPU). Unbound ranks whose
 * threads spin (OpenMP's waiting workers) stack on CPUs: 2 ranks x 2 threads
 * of SSCA#1 took 8-34 s in a kernel that bound ranks finish in 0.27 s (Open
 * MPI: 25-38 s unbound, 0.7 s with its default core binding;
 * research/LOG.md). More ranks than CPUs: no binding, the scheduler
 * balances them. The cpus we may use, in place order, are read once before
 * the ranks are forked; each rank takes its block. */
static run_cpu_t places[CPU_SETSIZE];
static int nplaces;

static void places_load(const cpu_set_t *avail)
{
    int cpus[CPU_SETSIZE];
    nplaces = cpu_list(avail, cpus);
    for (int i = 0; i < nplaces; i++)
        places[i] = cpu_place(cpus[i]);
    run_sort_cpus(places, nplaces);
}

/* The CPU set of rank r for this binding, over the CPUs we may use. */
static void bind_set(int mode, int rank, const cpu_set_t *avail, cpu_set_t *out)
{
    int cpus[CPU_SETSIZE], n = cpu_list(avail, cpus);
    CPU_ZERO(out);
    if (!n)
        return;
    int pick = cpus[rank % n];
    if (mode == BIND_CORE) {
        CPU_SET(pick, out);
        return;
    }
    /* l3/numa: the domains in order of their first CPU; rank r gets domain r % ndomains. */
    int dom[CPU_SETSIZE], ndom = 0;
    for (int i = 0; i < n; i++) {
        int d = mode == BIND_L3 ? lc_sysfs_l3_id(cpus[i]) : (numa_available() >= 0 ? numa_node_of_cpu(cpus[i]) : 0);
        bool seen = false;
        for (int k = 0; k < ndom; k++)
            seen |= dom[k] == d;
        if (!seen)
            dom[ndom++] = d;
    }
    int want = dom[rank % ndom];
    for (int i = 0; i < n; i++) {
        int d = mode == BIND_L3 ? lc_sysfs_l3_id(cpus[i]) : (numa_available() >= 0 ? numa_node_of_cpu(cpus[i]) : 0);
        if (d == want)
            CPU_SET(cpus[i], out);
    }
}

static volatile sig_atomic_t got_signal;
static void on_signal(int sig) { got_signal = sig; }

static int status_code(int ws)
{
    if (WIFEXITED(ws))
        return WEXITSTATUS(ws);
    if (WIFSIGNALED(ws))
        return 128 + WTERMSIG(ws);
    return 1;
}

/* Say once that a process aborted the job; true the first time. */
static bool report_abort(locus_boot_hub_t *hub, bool *said, int *rc)
{
    int rank, status;
    char msg[256];
    if (*said || !locus_boot_hub_aborted(hub, &rank, &status, msg, sizeof msg))
        return false;
    *said = true;
    fprintf(stderr, "locus run: rank %d %s the job (status %d): %s\n", rank, status ? "aborted" : "ended", status,
            msg);
    /* the status the process gave is the job's (shmem_global_exit(0) ends
     * a job successfully, as under Open MPI's oshrun); library errors abort
     * with 1 */
    if (!*rc)
        *rc = status & 0xff;
    return true;
}

typedef struct {
    int64_t n;
    int bind;
    double grace;
    int prog; /* argv index of the program */
} run_opts_t;

/* Options up to the program; 0 to go on, else the exit status (help: 0 via *done). */
static int parse(int argc, char **argv, run_opts_t *o, bool *done)
{
    *o = (run_opts_t){.n = -1, .bind = BIND_AUTO, .grace = 5};
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--")) {
            i++;
            break;
        }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            *done = true;
            return 0;
        }
        if ((!strcmp(a, "-n") || !strcmp(a, "-np")) && i + 1 < argc) {
            if (lc_parse_int(argv[++i], 1, 65536, &o->n))
                return cli_usage_error("run", "-n %s", locus_last_error());
        } else if (!strcmp(a, "--bind") && i + 1 < argc) {
            if (lc_parse_choice(argv[++i], "auto|none|core|l3|numa", &o->bind))
                return cli_usage_error("run", "--bind %s", locus_last_error());
        } else if (!strcmp(a, "--grace") && i + 1 < argc) {
            char *end;
            o->grace = strtod(argv[++i], &end);
            if (*end || !(o->grace >= 0) || o->grace > 3600)
                return cli_usage_error("run", "--grace '%s': expected seconds in [0, 3600]", argv[i]);
        } else if (a[0] == '-') {
            return cli_usage_error("run", "unknown option '%s' (locus run --help)", a);
        } else {
            break; /* the program, without "--" */
        }
    }
    if (o->n < 1)
        return cli_usage_error("run", "missing -n N: expected the number of processes (1..65536)");
    if (i >= argc)
        return cli_usage_error("run", "missing program: locus run -n N -- prog [args...]");
    o->prog = i;
    return 0;
}

/* The hub holds one socket per process: raise the soft limit if needed. */
static void raise_nofile(int64_t n)
{
    struct rlimit nofile;
    if (!getrlimit(RLIMIT_NOFILE, &nofile) && nofile.rlim_cur < (rlim_t)n + 64 &&
        nofile.rlim_cur < nofile.rlim_max) {
        nofile.rlim_cur = (rlim_t)n + 64 < nofile.rlim_max ? (rlim_t)n + 64 : nofile.rlim_max;
        setrlimit(RLIMIT_NOFILE, &nofile);
    }
}

/* In the child: the job's environment and binding, then the program. */
static void exec_rank(const run_opts_t *o, char **argv, int r, const char *job, locus_boot_hub_t *hub,
                      const cpu_set_t *avail)
{
    char rs[16], sz[16];
    snprintf(rs, sizeof rs, "%d", r);
    snprintf(sz, sizeof sz, "%d", (int)o->n);
    setenv("LOCUS_RANK", rs, 1);
    setenv("LOCUS_SIZE", sz, 1);
    setenv("LOCUS_JOB", job, 1);
    if (hub)
        setenv("LOCUS_BOOT", locus_boot_hub_address(hub), 1);
    if (o->bind != BIND_NONE) {
        cpu_set_t set;
        if (o->bind == BIND_AUTO)
            run_auto_blocks(places, nplaces, r, o->n, &set);
        else
            bind_set(o->bind, r, avail, &set);
        if (CPU_COUNT(&set) && !CPU_EQUAL(&set, avail))
            sched_setaffinity(0, sizeof set, &set);
    }
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    execvp(argv[o->prog], argv + o->prog);
    fprintf(stderr, "locus run: cannot execute '%s': %s\n", argv[o->prog], strerror(errno));
    _exit(127);
}

/* Fork the ranks; returns how many started (fewer after a failed fork, *rc 1). */
static int64_t spawn(const run_opts_t *o, char **argv, const char *job, locus_boot_hub_t *hub, pid_t *pids,
                     int *rc)
{
    cpu_set_t avail;
    if (sched_getaffinity(0, sizeof avail, &avail))
        CPU_ZERO(&avail);
    if (o->bind == BIND_AUTO && o->n > 1 && o->n <= CPU_COUNT(&avail)) /* else every rank keeps avail */
        places_load(&avail);
    for (int r = 0; r < o->n; r++) {
        pid_t p = fork();
        if (p < 0) {
            fprintf(stderr, "locus run: fork: %s\n", strerror(errno));
            *rc = 1;
            return r;
        }
        if (p == 0)
            exec_rank(o, argv, r, job, hub, &avail);
        pids[r] = p;
    }
    return o->n;
}

/* One rank's exit: the hub hears of it; the first failure sets the status.
 * False if p is none of the ranks. */
static bool reap(locus_boot_hub_t *hub, pid_t *pids, int64_t n, pid_t p, int ws, int *rc, bool *failed)
{
    for (int r = 0; r < n; r++) {
        if (pids[r] != p)
            continue;
        pids[r] = 0;
        locus_boot_hub_exited(hub, r, ws);
        int code = status_code(ws);
        if (code && !*rc) {
            *rc = code;
            if (WIFSIGNALED(ws))
                fprintf(stderr, "locus run: rank %d killed by signal %d\n", r, WTERMSIG(ws));
        }
        *failed |= code != 0;
        return true;
    }
    return false;
}

static void kill_all(const pid_t *pids, int64_t n, int sig)
{
    for (int r = 0; r < n; r++)
        if (pids[r])
            kill(pids[r], sig);
}

/* Wait for every rank. After a failure, an abort or a signal the others get
 * `grace` seconds to exit on their own, then SIGKILL. */
static void supervise(locus_boot_hub_t *hub, pid_t *pids, int64_t n, double grace, int *rc)
{
    int64_t left = n;
    double kill_at = -1;
    bool aborted = false;
    while (left > 0) {
        int ws;
        pid_t p = waitpid(-1, &ws, WNOHANG);
        if (p > 0) {
            bool failed = false;
            left -= reap(hub, pids, n, p, ws, rc, &failed);
            if (failed && kill_at < 0)
                kill_at = grace;
            continue;
        }
        if (report_abort(hub, &aborted, rc) && kill_at < 0)
            kill_at = grace; /* the others exit on the hub's word; stragglers get --grace */
        if (got_signal && kill_at < 0) {
            kill_all(pids, n, got_signal);
            kill_at = grace;
            *rc = *rc ? *rc : 128 + got_signal;
        }
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
        if (kill_at >= 0 && (kill_at -= 0.002) < 0) {
            kill_all(pids, n, SIGKILL);
            kill_at = 1e9;
        }
    }
    report_abort(hub, &aborted, rc); /* if every process was gone before we looked */
}

int locus_cmd_run(int argc, char **argv)
{
    run_opts_t o;
    bool done = false;
    int prc = parse(argc, argv, &o, &done);
    if (prc || done)
        return prc;
    uint32_t rnd = 0;
    if (getrandom(&rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
        rnd = (uint32_t)time(NULL) ^ (uint32_t)clock();
    char job[64], seg[128];
    snprintf(job, sizeof job, "run%d-%08x", (int)getpid(), rnd);
    if (locus_shm_segment_name(job, seg, sizeof seg))
        return cli_fail("run", LOCUS_ERR_INVALID);
    /* The rendezvous: listening before any child exists, on a port the
     * kernel picks. Programs that do not use locus_boot never notice it. */
    raise_nofile(o.n);
    locus_boot_hub_t *hub = NULL;
    locus_status_t hst = locus_boot_hub_create("127.0.0.1:0", (int)o.n, job, "locus-run", 0, &hub);
    if (hst == LOCUS_ERR_INVALID)
        return cli_fail("run", hst);
    if (hst)
        fprintf(stderr, "locus run: warning: no rendezvous for locus_boot (%s)\n", locus_last_error());
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    pid_t *pids = calloc((size_t)o.n, sizeof *pids);
    if (!pids) {
        locus_boot_hub_destroy(hub);
        return cli_fail("run", LOCUS_ERR_NO_MEMORY);
    }
    int rc = 0;
    int64_t started = spawn(&o, argv, job, hub, pids, &rc);
    supervise(hub, pids, started, o.grace, &rc);
    shm_unlink(seg); /* normally gone already: unlinked once every process attached */
    remove_heaps(job, started);
    locus_boot_hub_destroy(hub);
    free(pids);
    return rc;
}
