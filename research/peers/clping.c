/* clping: cache-line ping-pong between two processes pinned to two CPUs, the
 * physical floor for an on-node message. Two variants, both one-way latency
 * (round trip / 2), median of many short runs:
 *   one-line: both processes flip one shared line (ping writes 2k+1, pong 2k+2);
 *   two-line: one line per direction (what a message queue needs at least).
 * The pair lives in a MAP_SHARED anonymous mapping across fork(), like two
 * ranks of a shared-memory transport.
 *
 * --probe is a few-ms run used as a placement probe: the host moves the two
 * vCPUs between near and far physical cores, which changes every transport's
 * latency, so benchmarks probe before and after each run and keep only runs
 * measured in one placement. Output: human text, `--json`, or with --probe a
 * single `key=value` line. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_setaffinity when built outside CMake */
#endif
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* 128 B apart: Zen's adjacent-line prefetcher pairs 64 B lines, so two lines
 * in one 128 B block would share traffic. */
#define SLOT 128

typedef struct {
    _Alignas(SLOT) _Atomic uint64_t ping; /* one-line mode uses this one only */
    _Alignas(SLOT) _Atomic uint64_t pong;
    _Alignas(SLOT) _Atomic int ready;
    _Atomic int abort;
} shared_t;

typedef struct {
    int cpu[2];
    int runs, iters;
    int pause;          /* spin with _mm_pause (1) or pure spin (0) */
    double far_ns;      /* two-line one-way latency above this = "far" placement */
    double timeout_s;
} opts_t;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static inline void relax(int pause)
{
    if (pause)
        __builtin_ia32_pause();
}

static int pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(0, sizeof set, &set);
}

/* Spin until *p == want; gives up after timeout (peer died) and says so. */
static int wait_eq(_Atomic uint64_t *p, uint64_t want, const shared_t *sh, const opts_t *o)
{
    unsigned n = 0;
    double t0 = 0;
    while (atomic_load_explicit(p, memory_order_acquire) != want) {
        relax(o->pause);
        if (++n % (1u << 20) == 0) {
            if (atomic_load_explicit(&sh->abort, memory_order_relaxed))
                return -1;
            if (t0 == 0)
                t0 = now_s();
            else if (now_s() - t0 > o->timeout_s)
                return -1;
        }
    }
    return 0;
}

/* The responder: echo every sequence number of the whole session. */
static int pong(shared_t *sh, int two, const opts_t *o)
{
    uint64_t total = (uint64_t)(o->runs + 1) * o->iters;
    atomic_store(&sh->ready, 1);
    for (uint64_t k = 0; k < total; k++) {
        if (two) {
            if (wait_eq(&sh->ping, k + 1, sh, o))
                return 1;
            atomic_store_explicit(&sh->pong, k + 1, memory_order_release);
        } else {
            if (wait_eq(&sh->ping, 2 * k + 1, sh, o))
                return 1;
            atomic_store_explicit(&sh->ping, 2 * k + 2, memory_order_release);
        }
    }
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* One session (fork a responder) → median one-way ns over o->runs runs, or < 0. */
static double session(int two, const opts_t *o)
{
    shared_t *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) {
        fprintf(stderr, "clping: mmap(%zu): %s\n", sizeof *sh, strerror(errno));
        return -1;
    }
    memset(sh, 0, sizeof *sh);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "clping: fork: %s\n", strerror(errno));
        munmap(sh, sizeof *sh);
        return -1;
    }
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(1);
        if (pin(o->cpu[1])) {
            fprintf(stderr, "clping: cannot pin to CPU %d: %s\n", o->cpu[1], strerror(errno));
            atomic_store(&sh->abort, 1);
            _exit(1);
        }
        _exit(pong(sh, two, o));
    }
    double *t = calloc((size_t)o->runs, sizeof *t), med = -1;
    if (!t || pin(o->cpu[0])) {
        fprintf(stderr, "clping: cannot pin to CPU %d: %s\n", o->cpu[0], strerror(errno));
        goto out;
    }
    while (!atomic_load(&sh->ready) && !atomic_load(&sh->abort))
        sched_yield();
    uint64_t k = 0;
    for (int r = -1; r < o->runs; r++) { /* run -1 warms up */
        double t0 = now_s();
        for (int i = 0; i < o->iters; i++, k++) {
            if (two) {
                atomic_store_explicit(&sh->ping, k + 1, memory_order_release);
                if (wait_eq(&sh->pong, k + 1, sh, o))
                    goto fail;
            } else {
                atomic_store_explicit(&sh->ping, 2 * k + 1, memory_order_release);
                if (wait_eq(&sh->ping, 2 * k + 2, sh, o))
                    goto fail;
            }
        }
        if (r >= 0)
            t[r] = (now_s() - t0) / (2.0 * o->iters) * 1e9;
    }
    qsort(t, (size_t)o->runs, sizeof *t, cmp_double);
    med = o->runs % 2 ? t[o->runs / 2] : (t[o->runs / 2 - 1] + t[o->runs / 2]) / 2;
    goto out;
fail:
    fprintf(stderr, "clping: responder on CPU %d stopped answering\n", o->cpu[1]);
out:
    atomic_store(&sh->abort, 1);
    if (med < 0)
        kill(pid, SIGKILL);
    int status;
    waitpid(pid, &status, 0);
    if (med >= 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
        fprintf(stderr, "clping: responder failed\n");
        med = -1;
    }
    free(t);
    munmap(sh, sizeof *sh);
    return med;
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: clping [--cpus A,B] [--runs R] [--iters I] [--spin pause|pure]\n"
            "              [--far-ns NS] [--probe] [--json]\n"
            "  one-way latency (round trip / 2) of a cache-line ping-pong between two\n"
            "  processes pinned to CPUs A and B (default 0,1); median of R runs of I round\n"
            "  trips (default 201 x 2000). --probe: a few-ms run (21 x 300) printing\n"
            "  'placement=near|far one_line_ns=X two_line_ns=Y'; the placement is 'far'\n"
            "  when the two-line latency exceeds --far-ns (default 120).\n");
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return -1;
    *out = (int)v;
    return 0;
}

int main(int argc, char **argv)
{
    opts_t o = {.cpu = {0, 1}, .runs = 201, .iters = 2000, .pause = 1, .far_ns = 120,
                .timeout_s = 10};
    int json = 0, probe = 0, runs_set = 0, iters_set = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--json")) {
            json = 1;
        } else if (!strcmp(a, "--probe")) {
            probe = 1;
        } else if (!strcmp(a, "--cpus") && v) {
            if (sscanf(v, "%d,%d", &o.cpu[0], &o.cpu[1]) != 2 || o.cpu[0] < 0 || o.cpu[1] < 0 ||
                o.cpu[0] == o.cpu[1] || o.cpu[0] >= CPU_SETSIZE || o.cpu[1] >= CPU_SETSIZE) {
                fprintf(stderr, "clping: --cpus '%s': expected two different CPUs, e.g. 0,1\n", v);
                return 2;
            }
            i++;
        } else if (!strcmp(a, "--runs") && v) {
            if (parse_int(v, 1, 100000, &o.runs)) {
                fprintf(stderr, "clping: --runs '%s': expected 1..100000\n", v);
                return 2;
            }
            runs_set = 1;
            i++;
        } else if (!strcmp(a, "--iters") && v) {
            if (parse_int(v, 1, 100000000, &o.iters)) {
                fprintf(stderr, "clping: --iters '%s': expected 1..100000000\n", v);
                return 2;
            }
            iters_set = 1;
            i++;
        } else if (!strcmp(a, "--spin") && v) {
            if (strcmp(v, "pause") && strcmp(v, "pure")) {
                fprintf(stderr, "clping: --spin '%s': expected pause or pure\n", v);
                return 2;
            }
            o.pause = !strcmp(v, "pause");
            i++;
        } else if (!strcmp(a, "--far-ns") && v) {
            char *end;
            o.far_ns = strtod(v, &end);
            if (end == v || *end || !(o.far_ns > 0)) {
                fprintf(stderr, "clping: --far-ns '%s': expected a positive number\n", v);
                return 2;
            }
            i++;
        } else {
            fprintf(stderr, "clping: unknown option '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }
    if (probe) {
        if (!runs_set)
            o.runs = 21;
        if (!iters_set)
            o.iters = 300;
    }
    double one = session(0, &o);
    double two = one < 0 ? -1 : session(1, &o);
    if (one < 0 || two < 0)
        return 1;
    const char *place = two > o.far_ns ? "far" : "near";
    if (json)
        printf("{\"cpus\": [%d, %d], \"one_line_ns\": %.1f, \"two_line_ns\": %.1f, "
               "\"placement\": \"%s\", \"far_ns\": %.0f, \"runs\": %d, \"iters\": %d, "
               "\"spin\": \"%s\"}\n",
               o.cpu[0], o.cpu[1], one, two, place, o.far_ns, o.runs, o.iters,
               o.pause ? "pause" : "pure");
    else if (probe)
        printf("placement=%s one_line_ns=%.1f two_line_ns=%.1f\n", place, one, two);
    else
        printf("clping CPUs %d,%d (%s spin): one-way one shared line %.1f ns, one line per "
               "direction %.1f ns; median of %d runs x %d round trips; placement %s\n",
               o.cpu[0], o.cpu[1], o.pause ? "pause" : "pure", one, two, o.runs, o.iters, place);
    return 0;
}
