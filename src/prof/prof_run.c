/* locus_prof_run: start the program stopped before exec, attach the
 * samplers, release it, drain the rings while it runs, then attribute,
 * analyse and write the profile. */
#include "prof/prof_internal.h"
#include "core/config.h"
#include "core/error.h"
#include "core/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>
#include <elf.h>

extern char **environ;


void prof_note(prof_session_t *s, const char *fmt, ...)
{
    char *msg = NULL;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&msg, fmt, ap) < 0)
        msg = NULL;
    va_end(ap);
    if (msg)
        VEC_PUSH(s->notes, msg);
}

int prof_cpu_node(const prof_session_t *s, int cpu) { return cpu < 0 ? -1 : locus_topo_cpu_node(s->topo, cpu); }
int prof_os_node_index(const prof_session_t *s, int os) { return os < 0 ? -1 : locus_topo_node_index(s->topo, os); }

/* ---------- options ---------- */

static const char SAMPLERS_ACCEPTED[] = "'auto' or a comma list of first-touch, access, pmu";

static int samplers_mask(const char *v) /* bit 0 ft, 1 access, 2 pmu; -1 bad */
{
    if (!strcmp(v, "auto"))
        return 7;
    int m = 0;
    const char *p = v;
    while (*p) {
        size_t n = strcspn(p, ",");
        if (n == 11 && !strncmp(p, "first-touch", n))
            m |= 1;
        else if (n == 6 && !strncmp(p, "access", n))
            m |= 2;
        else if (n == 3 && !strncmp(p, "pmu", n))
            m |= 4;
        else
            return -1;
        p += n;
        if (*p == ',')
            p++;
    }
    return m ? m : -1;
}

locus_status_t locus_prof_validate_samplers(const char *value)
{
    if (!value || samplers_mask(value) < 0)
        return lc_err(LOCUS_ERR_INVALID, "samplers '%s': expected %s", value ? value : "", SAMPLERS_ACCEPTED);
    return LOCUS_OK;
}

locus_status_t locus_prof_options_init(locus_prof_options_t *o)
{
    memset(o, 0, sizeof *o);
    o->output = "locus-profile.json";
    int64_t v;
    uint64_t sz;
    locus_status_t st;
    if ((st = lc_tun_string(LC_TUN_PROF_SAMPLERS, &o->samplers)) != LOCUS_OK)
        return st;
    if ((st = lc_tun_int(LC_TUN_PROF_FT_PERIOD, &v)) != LOCUS_OK)
        return st;
    o->ft_period = (uint64_t)v;
    if ((st = lc_tun_int(LC_TUN_PROF_FT_RATE, &v)) != LOCUS_OK)
        return st;
    o->ft_rate = (uint64_t)v;
    if ((st = lc_tun_int(LC_TUN_PROF_ACCESS_RATE, &v)) != LOCUS_OK)
        return st;
    o->access_rate = (uint64_t)v;
    if ((st = lc_tun_size(LC_TUN_PROF_MIN_ALLOC, &sz)) != LOCUS_OK)
        return st;
    o->min_alloc = sz;
    if ((st = lc_tun_int(LC_TUN_PROF_DEPTH, &v)) != LOCUS_OK)
        return st;
    o->depth = (int)v;
    if ((st = lc_tun_int(LC_TUN_PROF_TOP, &v)) != LOCUS_OK)
        return st;
    o->top = (int)v;
    o->report = stderr;
    return LOCUS_OK;
}

/* ---------- the program ---------- */

/* Like execvp's search, so "not found" and "not executable" are told
 * before anything runs. */
static locus_status_t resolve_program(const char *name, char *out, size_t cap)
{
    struct stat st;
    if (strchr(name, '/')) {
        if (stat(name, &st) != 0)
            return lc_err(LOCUS_ERR_NOT_FOUND, "program '%s' not found", name);
        if (S_ISDIR(st.st_mode) || access(name, X_OK) != 0)
            return lc_err(LOCUS_ERR_PERMISSION, "program '%s' is not executable", name);
        snprintf(out, cap, "%s", name);
        return LOCUS_OK;
    }
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    bool seen = false;
    for (const char *p = path; *p;) {
        size_t n = strcspn(p, ":");
        snprintf(out, cap, "%.*s/%s", (int)(n ? n : 1), n ? p : ".", name);
        if (stat(out, &st) == 0 && !S_ISDIR(st.st_mode)) {
            if (access(out, X_OK) == 0)
                return LOCUS_OK;
            seen = true;
        }
        p += n;
        if (*p == ':')
            p++;
    }
    if (seen)
        return lc_err(LOCUS_ERR_PERMISSION, "program '%s' is not executable", name);
    return lc_err(LOCUS_ERR_NOT_FOUND, "program '%s' not found in PATH", name);
}

static locus_status_t check_output(const char *path)
{
    if (!path)
        return LOCUS_OK;
    bool existed = access(path, F_OK) == 0;
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return lc_err_errno(LOCUS_ERR_SYSTEM, errno, "output '%s' is not writable", path);
    close(fd);
    if (!existed)
        unlink(path);
    return LOCUS_OK;
}

static void child_env(const prof_session_t *s, int mask)
{
    char buf[64];
    /* the shim's own settings start with an underscore: not tunables, so
     * `locus config` run under the profiler does not call them unknown */
    setenv("_LOCUS_PROF_OUT", s->dir, 1);
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)s->opt.min_alloc);
    setenv("LOCUS_PROF_MIN_ALLOC", buf, 1);
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)((mask & 2) ? s->opt.access_rate : 0));
    setenv("LOCUS_PROF_ACCESS_RATE", buf, 1);
    snprintf(buf, sizeof buf, "%d", s->opt.depth);
    setenv("LOCUS_PROF_DEPTH", buf, 1);
    /* `locus profile -- mpirun ...`: the ranks below are in a job this
     * process is not; with samplers auto each of them leaves access off */
    bool auto_samplers = !strcmp(s->opt.samplers ? s->opt.samplers : "auto", "auto");
    setenv("_LOCUS_PROF_ACCESS_IN_JOB", auto_samplers ? "off" : "on", 1);
    if (s->opt.shim) {
        const char *old = getenv("LD_PRELOAD");
        char *v = NULL;
        if (asprintf(&v, "%s%s%s", s->opt.shim, old && *old ? ":" : "", old ? old : "") > 0)
            setenv("LD_PRELOAD", v, 1);
    }
}

static void run_child(const prof_session_t *s, int mask, const char *path, char *const argv[], int go, int err)
{
    signal(SIGINT, SIG_DFL);
    signal(SIGQUIT, SIG_DFL);
    child_env(s, mask);
    char c;
    while (read(go, &c, 1) < 0 && errno == EINTR)
        ;
    close(go);
    execv(path, argv);
    int e = errno;
    if (write(err, &e, sizeof e) < 0)
        _exit(127);
    _exit(e == ENOENT ? 127 : 126);
}

static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            if (e->d_name[0] == '.')
                continue;
            char p[1024];
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            unlink(p);
        }
        closedir(d);
    }
    rmdir(dir);
}

static void session_dir(prof_session_t *s)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(s->dir, sizeof s->dir, "%s/locus-prof.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(s->dir))
        snprintf(s->dir, sizeof s->dir, "/tmp/locus-prof.XXXXXX"), (void)mkdtemp(s->dir);
}

/* LD_PRELOAD splits at spaces and colons and has no escape, so a shim under
 * such a path ("/srv/with space/x/build/lib/...") would never load. Such a
 * shim goes in through a symbolic link in the session directory, named as
 * the shim is (shim_was_mapped matches the mapped file's name). The link
 * lives as long as the session, like the directory the shim writes to. */
static const char PRELOAD_SEPARATORS[] = " :";

static locus_status_t preload_path(prof_session_t *s)
{
    const char *shim = s->opt.shim;
    if (!shim || !shim[strcspn(shim, PRELOAD_SEPARATORS)])
        return LOCUS_OK;
    char *real = realpath(shim, NULL);
    if (!real)
        return lc_err_errno(LOCUS_ERR_SYSTEM, errno, "preload shim '%s'", shim);
    const char *base = strrchr(real, '/') + 1;
    locus_status_t st = LOCUS_OK;
    if (base[strcspn(base, PRELOAD_SEPARATORS)] || s->dir[strcspn(s->dir, PRELOAD_SEPARATORS)] ||
        (size_t)snprintf(s->shim_link, sizeof s->shim_link, "%s/%s", s->dir, base) >= sizeof s->shim_link)
        st = lc_err(LOCUS_ERR_UNSUPPORTED,
                    "the preload shim '%s' has a space or ':' in its path, which LD_PRELOAD cannot carry, and "
                    "it cannot be linked from the session directory '%s' (it has one too, or the name is too "
                    "long): set TMPDIR to a directory without them, or give --shim a path without them",
                    shim, s->dir);
    else if (symlink(real, s->shim_link) != 0)
        st = lc_err_errno(LOCUS_ERR_SYSTEM, errno, "linking the preload shim '%s' as '%s'", real, s->shim_link);
    else
        s->opt.shim = s->shim_link;
    free(real);
    return st;
}

/* Waits for the child while draining the rings. */
static int supervise(prof_session_t *s, prof_perf_t *perf, pid_t child)
{
    int n = prof_perf_count(perf), status = 0;
    struct pollfd pf[1024];
    for (int i = 0; i < n; i++)
        pf[i] = (struct pollfd){prof_perf_poll_fd(perf, i), POLLIN, 0};
    for (;;) {
        if (n)
            poll(pf, (nfds_t)n, 50);
        else
            usleep(20000);
        prof_perf_drain(s, perf);
        pid_t w = waitpid(child, &status, WNOHANG);
        if (w == child)
            break;
        if (w < 0 && errno != EINTR)
            break;
    }
    prof_perf_drain(s, perf);
    return status;
}

static void set_exit(prof_session_t *s, int status)
{
    if (WIFSIGNALED(status)) {
        s->exit_signal = WTERMSIG(status);
        s->exit_code = -1;
        s->exit_status = 128 + s->exit_signal;
    } else {
        s->exit_signal = 0;
        s->exit_code = WEXITSTATUS(status);
        s->exit_status = s->exit_code;
    }
}

/* No PT_INTERP: the dynamic loader never runs, LD_PRELOAD does nothing. */
static bool is_static_elf(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    Elf64_Ehdr eh;
    bool st = false;
    if (fread(&eh, sizeof eh, 1, f) == 1 && !memcmp(eh.e_ident, ELFMAG, SELFMAG) && eh.e_ident[EI_CLASS] == ELFCLASS64) {
        st = true;
        for (int i = 0; i < eh.e_phnum; i++) {
            Elf64_Phdr ph;
            if (fseek(f, (long)(eh.e_phoff + (uint64_t)i * eh.e_phentsize), SEEK_SET) != 0 ||
                fread(&ph, sizeof ph, 1, f) != 1)
                break;
            if (ph.p_type == PT_INTERP)
                st = false;
        }
    }
    fclose(f);
    return st;
}

static bool shim_was_mapped(const prof_session_t *s)
{
    const char *base = strrchr(s->opt.shim, '/');
    base = base ? base + 1 : s->opt.shim;
    for (size_t i = 0; i < s->maps.n; i++) {
        const char *n = s->maps.v[i].name;
        const char *b = n ? strrchr(n, '/') : NULL;
        if (b && !strcmp(b + 1, base))
            return true;
    }
    return false;
}

/* Why there is no allocation log, told apart: a program the shim cannot
 * load into (static, setuid), a program that died before the shim started,
 * a shim that loaded and never started. "" when the log is there. */
static void shim_verdict(prof_session_t *s, const char *path)
{
    char *v = s->shim_status;
    size_t cap = sizeof s->shim_status;
    struct stat st;
    v[0] = 0;
    if (s->shim_procs)
        return;
    if (!s->opt.shim) {
        snprintf(v, cap, "the preload shim was not found");
        return;
    }
    s->shim_mapped = shim_was_mapped(s);
    if (is_static_elf(path))
        snprintf(v, cap, "static program: the preload shim cannot load into it");
    else if (stat(path, &st) == 0 && (st.st_mode & (S_ISUID | S_ISGID)) && geteuid() != 0)
        snprintf(v, cap, "setuid/setgid program: the loader ignores LD_PRELOAD");
    else if (s->exit_signal)
        snprintf(v, cap, "the program died of signal %d (%s) before the shim started%s", s->exit_signal,
                 sigabbrev_np(s->exit_signal) ? sigabbrev_np(s->exit_signal) : "?",
                 s->shim_mapped ? " (the shim was loaded)" : "");
    else if (s->shim_mapped)
        snprintf(v, cap, "the shim was loaded but the program ended before the shim started");
    else if (s->ft_on)
        snprintf(v, cap, "the shim did not load (LD_PRELOAD dropped by the program or a wrapper?)");
    else
        snprintf(v, cap, "the shim did not start (static or setuid program, or it died early)");
}

static locus_status_t write_profile(prof_session_t *s, const prof_result_t *r)
{
    /* a temporary beside it, renamed: a reader (a merge) never sees half */
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp%d", s->opt.output, (int)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f)
        return lc_err_errno(LOCUS_ERR_SYSTEM, errno, "cannot write the profile to '%s'", s->opt.output);
    locus_status_t st = prof_write_json(s, r, f);
    if (fclose(f) != 0 && st == LOCUS_OK)
        st = lc_err_errno(LOCUS_ERR_SYSTEM, errno, "writing '%s'", s->opt.output);
    if (st == LOCUS_OK && rename(tmp, s->opt.output) != 0)
        st = lc_err_errno(LOCUS_ERR_SYSTEM, errno, "renaming '%s' to '%s'", tmp, s->opt.output);
    if (st != LOCUS_OK)
        unlink(tmp);
    return st;
}

static locus_status_t finish(prof_session_t *s, int mask, const char *path)
{
    prof_shimlog_read_dir(s);
    shim_verdict(s, path);
    if (mask & 2) {
        if (!s->opt.shim)
            snprintf(s->acc_detail, sizeof s->acc_detail, "off: the preload shim was not found");
        else if (!s->shim_procs)
            snprintf(s->acc_detail, sizeof s->acc_detail, "no data: %s", s->shim_status);
        s->acc_on = s->opt.shim && s->shim_procs && s->opt.access_rate;
        if (s->acc_on)
            snprintf(s->acc_detail, sizeof s->acc_detail,
                     "protection faults on sampled pages of allocations >= %llu bytes, <= %llu samples/s per process",
                     (unsigned long long)s->opt.min_alloc, (unsigned long long)s->opt.access_rate);
    } else if (!s->acc_detail[0]) {
        snprintf(s->acc_detail, sizeof s->acc_detail, "off (not selected)");
    }
    return prof_session_finish(s);
}

locus_status_t prof_session_finish(prof_session_t *s)
{
    if (!s->shim_procs && s->opt.shim)
        prof_note(s, "no allocation log: %s; heap variables cannot be named, pages are grouped by mapping",
                  s->shim_status);
    if (s->shim_early)
        prof_note(s, "%llu large allocation%s made before the shim started (other libraries' constructors) "
                     "are not named", (unsigned long long)s->shim_early, s->shim_early == 1 ? " was" : "s were");
    if (s->shim_untracked)
        prof_note(s, "%llu allocation%s not tracked: the shim's table was full", (unsigned long long)s->shim_untracked,
                  s->shim_untracked == 1 ? " was" : "s were");
    prof_pmu_detect(s);
    prof_result_t r;
    prof_analyze(s, &r);
    locus_status_t st = s->opt.output ? write_profile(s, &r) : LOCUS_OK;
    if (s->opt.report)
        prof_print_report(s, &r, s->opt.report);
    prof_result_free(&r);
    return st;
}

/* The options that need no program to check: the sampler set (its mask
 * into *mask), the rates, the depth. */
static locus_status_t check_options(const locus_prof_options_t *opt, char *const argv[], int *mask)
{
    if (!argv || !argv[0] || !argv[0][0])
        return lc_err(LOCUS_ERR_INVALID, "no program given: expected -- PROGRAM [ARGS...]");
    *mask = samplers_mask(opt->samplers ? opt->samplers : "auto");
    if (*mask < 0)
        return lc_err(LOCUS_ERR_INVALID, "samplers '%s': expected %s", opt->samplers, SAMPLERS_ACCEPTED);
    if (opt->ft_period == 0 && opt->ft_rate < 1)
        return lc_err(LOCUS_ERR_INVALID, "first-touch rate 0 with period 0: expected a rate >= 1 sample/s");
    if (opt->depth < 1 || opt->depth > PROF_MAX_CHAIN)
        return lc_err(LOCUS_ERR_INVALID, "depth %d: expected 1..%d", opt->depth, PROF_MAX_CHAIN);
    return LOCUS_OK;
}

/* In an MPI job other ranks read this process's memory (process_vm_readv
 * for single-copy transfers, RDMA registration): a protected page would
 * fail their call. The access sampler runs there only when asked for. */
static int mpi_job_samplers(prof_session_t *s, int mask)
{
    const char *asked = s->opt.samplers ? s->opt.samplers : "auto";
    if (s->job.rank < 0 || strcmp(asked, "auto") || !(mask & 2))
        return mask;
    snprintf(s->acc_detail, sizeof s->acc_detail,
             "off in an MPI job (%s is set): other ranks may read this process's memory directly; "
             "--samplers first-touch,access turns it on", s->job.var);
    return mask & ~2;
}

/* The first-touch sampler (software page-fault events) and, on top of it,
 * the PMU sampler where the machine has one; what each is goes into the
 * report's header. Failing to open them is a note, not an error: the shim
 * still records placement. */
static prof_perf_t *open_samplers(prof_session_t *s, int mask, pid_t child)
{
    prof_perf_t *perf = NULL;
    if (!(mask & 1)) {
        snprintf(s->ft_detail, sizeof s->ft_detail, "off (not selected)");
        return NULL;
    }
    if (prof_perf_open(s, child, &perf) != LOCUS_OK) {
        snprintf(s->ft_detail, sizeof s->ft_detail, "unavailable: %s", locus_last_error());
        prof_note(s, "first-touch sampler unavailable (%s); placement comes from the shim only",
                  locus_last_error());
        return NULL;
    }
    s->ft_on = true;
    const char *phys = s->ft_phys ? ", physical addresses" : "";
    if (s->ft_period)
        snprintf(s->ft_detail, sizeof s->ft_detail,
                 "software event PAGE_FAULTS_MIN, 1 sample per %llu first touches, one event per cpu%s",
                 (unsigned long long)s->ft_period, phys);
    else
        snprintf(s->ft_detail, sizeof s->ft_detail,
                 "software event PAGE_FAULTS_MIN, <= %llu samples/s per cpu (period adapted by the kernel, "
                 "samples weighted by it), one event per cpu%s",
                 (unsigned long long)s->opt.ft_rate, phys);
    if (mask & 4)
        s->pmu_on = prof_perf_open_pmu(s, child, perf) > 0;
    return perf;
}

/* Releases the forked child into exec and supervises it to its end, with
 * the terminal's SIGINT/SIGQUIT going to the program, not to us; its wait
 * status into *status. Fails when exec failed. */
static locus_status_t run_program(prof_session_t *s, prof_perf_t *perf, pid_t child, int go, int err,
                                  const char *prog, int *status)
{
    void (*oint)(int) = signal(SIGINT, SIG_IGN);
    void (*oquit)(int) = signal(SIGQUIT, SIG_IGN);
    s->t_start = lc_now_ns();
    if (write(go, "g", 1) < 0) {
        /* the child is gone already: supervise() gets its status, which says why */
    }
    close(go);
    *status = supervise(s, perf, child);
    s->t_end = lc_now_ns();
    signal(SIGINT, oint);
    signal(SIGQUIT, oquit);
    int e = 0;
    ssize_t got = read(err, &e, sizeof e);
    close(err);
    if (got == (ssize_t)sizeof e) /* exec failed after all */
        return e == ENOENT ? lc_err(LOCUS_ERR_NOT_FOUND, "program '%s' not found", prog)
                           : lc_err_errno(LOCUS_ERR_PERMISSION, e, "cannot execute '%s'", prog);
    return LOCUS_OK;
}

/* Checks the output pattern (%r/%p/%h) before anything runs. */
static locus_status_t check_output_pattern(const locus_prof_options_t *opt, const prof_job_t *job)
{
    char probe[4096];
    if (!opt->output)
        return LOCUS_OK;
    locus_status_t st = prof_output_path(opt->output, job, 0, probe, sizeof probe);
    return st != LOCUS_OK ? st : check_output(probe);
}

static locus_status_t session_new(const locus_prof_options_t *opt, char *const argv[], prof_session_t **out)
{
    prof_job_t job;
    prof_job_detect(&job);
    locus_status_t st = check_output_pattern(opt, &job);
    if (st != LOCUS_OK)
        return st;
    prof_session_t *s = calloc(1, sizeof *s);
    if (!s)
        return lc_err(LOCUS_ERR_NO_MEMORY, "profiler session");
    s->opt = *opt;
    s->job = job;
    s->argv = (char **)argv;
    s->ft_period = opt->ft_period;
    if ((st = locus_topo_load(&s->topo)) != LOCUS_OK) {
        free(s);
        return st;
    }
    s->nnodes = locus_topo_num_nodes(s->topo);
    session_dir(s);
    *out = s;
    return LOCUS_OK;
}

locus_status_t locus_prof_run(const locus_prof_options_t *opt, char *const argv[], int *exit_status)
{
    int mask = 0;
    char path[4096];
    prof_session_t *s = NULL;
    locus_status_t st = check_options(opt, argv, &mask);
    if (st != LOCUS_OK || (st = resolve_program(argv[0], path, sizeof path)) != LOCUS_OK ||
        (st = session_new(opt, argv, &s)) != LOCUS_OK)
        return st;
    mask = mpi_job_samplers(s, mask);
    if ((st = preload_path(s)) != LOCUS_OK)
        goto out;

    int go[2], err[2];
    if (pipe2(go, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) {
        st = lc_err_errno(LOCUS_ERR_SYSTEM, errno, "pipe");
        goto out;
    }
    fflush(NULL);
    pid_t child = fork();
    if (child < 0) {
        st = lc_err_errno(LOCUS_ERR_SYSTEM, errno, "fork");
        goto out;
    }
    if (child == 0)
        run_child(s, mask, path, argv, go[0], err[1]);
    close(go[0]);
    close(err[1]);
    if (opt->output) { /* %p is the program's pid */
        prof_output_path(opt->output, &s->job, (long)child, s->out_path, sizeof s->out_path);
        s->out_pattern = opt->output;
        s->opt.output = s->out_path;
    }
    prof_perf_t *perf = open_samplers(s, mask, child);
    int status = 0;
    st = run_program(s, perf, child, go[1], err[0], argv[0], &status);
    prof_perf_close(perf);
    if (st != LOCUS_OK)
        goto out;
    set_exit(s, status);
    *exit_status = s->exit_status;
    st = finish(s, mask, path);
out:
    remove_dir(s->dir);
    prof_session_free(s);
    return st;
}

LC_TUN_VALIDATOR(PROF_SAMPLERS, locus_prof_validate_samplers)
