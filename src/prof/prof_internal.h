/* prof internals: what the samplers collect (session), what attribution and
 * analysis make of it (variables), and the pieces between. */
#ifndef LOCUS_PROF_INTERNAL_H
#define LOCUS_PROF_INTERNAL_H

#include <locus/prof.h>
#include <locus/topo.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <linux/perf_event.h>
#include "core/clock.h"

#define PROF_MAX_CHAIN 16
#define PROF_MAX_NODES 64
/* node of an access sample when only "local"/"remote" is known (PMU data source) */
#define PROF_NODE_LOCAL (-3)
#define PROF_NODE_REMOTE (-2)

/* growable array */
#define VEC(T) struct { T *v; size_t n, cap; }
#define VEC_PUSH(vec, item)                                                    \
    do {                                                                       \
        if ((vec).n == (vec).cap) {                                            \
            size_t nc_ = (vec).cap ? (vec).cap * 2 : 64;                       \
            void *nv_ = realloc((vec).v, nc_ * sizeof *(vec).v);               \
            if (!nv_)                                                          \
                abort();                                                       \
            (vec).v = nv_;                                                     \
            (vec).cap = nc_;                                                   \
        }                                                                      \
        (vec).v[(vec).n++] = (item);                                           \
    } while (0)

typedef struct {
    uint64_t time, addr, ip, phys, ret; /* ret: word at the user stack pointer */
    uint64_t period;                     /* first touches this sample stands for */
    int32_t pid, tid, cpu;
    int32_t chain; /* index into session chains, -1 none */
} prof_touch_t;

typedef struct {
    uint64_t time, addr, ip, ret;
    int32_t pid, tid, cpu, node, write;
    bool first;   /* the sampled access was the page's first touch (initialisation, not use) */
    bool present; /* the page was there at `time`: later faults on it are not first touches */
} prof_access_t;

typedef struct {
    int32_t pid, tid;
    uint64_t time, free_time; /* free_time UINT64_MAX while live */
    uint64_t addr, size;
    int kind, nframes;
    uint64_t frames[PROF_MAX_CHAIN];
    int var;                    /* variable index after attribution */
    uint64_t place[PROF_MAX_NODES]; /* pages per node (os index), scaled by stride */
    uint64_t place_absent;
    bool placed;
} prof_alloc_t;

typedef struct {
    int32_t pid, gen;
    uint64_t start, end, pgoff, ino;
    uint32_t maj, min, prot;
    char *name;
} prof_map_t;

typedef struct {
    int32_t pid, ppid, gen; /* gen: number of execs seen */
    uint64_t fork_time;
    uint64_t exec_time[8];
    char comm[32];
    char exe[256];
} prof_proc_t;

typedef struct { /* per-page node of a global segment */
    int32_t pid;
    uint64_t base, page;
    uint32_t stride, n;
    int8_t *node;
} prof_gpages_t;

typedef struct {
    int n;
    uint64_t ip[PROF_MAX_CHAIN];
} prof_chain_t;

/* A process image as its shim saw it start: the memory policy and cpu
 * affinity it was given (numactl, the launcher). */
typedef struct {
    int32_t pid;
    uint64_t time;
    int32_t policy_mode; /* MPOL_*, -1 unknown */
    uint64_t policy_nodes[4];
    uint64_t cpus[16];
    char exe[256];
} prof_start_t;

/* Where the program died (the shim's handler saw the fault). */
typedef struct {
    bool valid;
    int32_t pid, tid, sig, code;
    uint64_t time, addr, ip, ret;
} prof_crash_t;

/* The MPI rank of this profile, from the launcher's environment. */
typedef struct {
    int rank, size;  /* -1: not in a job */
    char var[32];    /* the variable it came from (PMIX_RANK, ...) */
    char host[256];
} prof_job_t;

typedef struct prof_session {
    locus_prof_options_t opt;
    locus_topo_t *topo;
    int nnodes;            /* topo nodes; indices below are topo indices */
    char dir[512];         /* session directory with the shim logs */
    char shim_link[640];   /* dir/<shim name>: the shim as LD_PRELOAD names it (preload_path) */
    VEC(prof_touch_t) touch;
    VEC(prof_access_t) acc;
    VEC(prof_alloc_t) alloc;
    VEC(prof_map_t) maps;
    VEC(prof_proc_t) procs;
    VEC(prof_gpages_t) gpages;
    VEC(prof_chain_t) chains;
    uint64_t ft_lost, ft_samples, ft_period, ft_weight;
    bool ft_on, ft_phys;
    char ft_detail[256];
    bool acc_on;
    char acc_detail[384];
    uint64_t acc_armed, acc_dropped, acc_io, acc_chained, shim_untracked;
    uint64_t shim_early, shim_log_errors;
    int shim_procs;
    bool shim_mapped;      /* the perf side-band saw the shim mapped in a process */
    char shim_status[256]; /* why there is no allocation log ("" if there is) */
    VEC(prof_start_t) starts;
    prof_crash_t crash;
    prof_job_t job;
    char out_path[4096];   /* the output with %r/%p/%h expanded */
    const char *out_pattern; /* as given */
    char pmu_status[64], pmu_detail[256];
    bool pmu_on;
    uint64_t pmu_samples;
    uint64_t t_start, t_end;
    int exit_status, exit_signal, exit_code;
    char **argv;
    VEC(char *) notes;
    bool stripped;
} prof_session_t;

void prof_note(prof_session_t *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int prof_cpu_node(const prof_session_t *s, int cpu);     /* topo index or -1 */
int prof_os_node_index(const prof_session_t *s, int os); /* topo index or -1 */

/* MPI job and output path (prof_job.c) */
void prof_job_detect(prof_job_t *j);
/* pattern with %r (rank), %p (pid), %h (host), %% expanded */
locus_status_t prof_output_path(const char *pattern, const prof_job_t *j, long pid, char *out, size_t cap);

/* first-touch sampler (prof_perf.c) */
typedef struct prof_perf prof_perf_t;
locus_status_t prof_perf_open(prof_session_t *s, pid_t child, prof_perf_t **out);
void prof_perf_drain(prof_session_t *s, prof_perf_t *p);
int prof_perf_poll_fd(prof_perf_t *p, int i);
int prof_perf_count(prof_perf_t *p);
void prof_perf_close(prof_perf_t *p);
/* parse one ring record (exposed for tests) */
void prof_perf_parse(prof_session_t *s, const void *rec, size_t len, uint64_t sample_type);

/* PMU (prof_pmu.c) */
void prof_pmu_detect(prof_session_t *s);
/* The data-address sampling event of this machine's PMU; false if none. */
bool prof_pmu_event(struct perf_event_attr *a);
/* 1 remote, 0 local, -1 unknown, from PERF_SAMPLE_DATA_SRC */
int prof_pmu_data_src(uint64_t data_src);
int prof_perf_open_pmu(prof_session_t *s, pid_t child, prof_perf_t *p);

/* shim logs (prof_shimlog.c) */
locus_status_t prof_shimlog_read_dir(prof_session_t *s);
locus_status_t prof_shimlog_read(prof_session_t *s, const char *path);

/* attribution (prof_sym.c) */
typedef struct prof_sym prof_sym_t;
typedef struct {
    char func[128];
    char file[256];   /* full path, "" if unknown */
    int line;
    char module[256]; /* basename */
    uint64_t offset;  /* address relative to the module */
    bool has_symbols, has_lines;
} prof_loc_t;
prof_sym_t *prof_sym_create(prof_session_t *s);
void prof_sym_destroy(prof_sym_t *y);
/* IP (a return address if is_return) at time in pid -> location */
void prof_sym_ip(prof_sym_t *y, int pid, uint64_t time, uint64_t ip, bool is_return, prof_loc_t *out);
/* global variable containing addr: name, start, size; false if none */
bool prof_sym_global(prof_sym_t *y, int pid, uint64_t time, uint64_t addr, char *name, size_t cap,
                     uint64_t *start, uint64_t *size);
/* the mapping containing addr (for "other" memory) */
const prof_map_t *prof_sym_map(prof_sym_t *y, int pid, uint64_t time, uint64_t addr);
/* libc, libstdc++, ld.so, the shim: code whose caller is the better location */
bool prof_runtime_module(const char *module);
/* "file.c:42", else "func+0x1f (module)", else "module+0x1234" */
void prof_loc_str(const prof_loc_t *l, char *buf, size_t cap);

/* analysis (prof_analyze.c) */
typedef struct {
    char loc[320];
    uint64_t count;          /* pages (first touch) or samples (accesses) */
    uint64_t local, remote;
    uint64_t by_node[PROF_MAX_NODES]; /* thread node (topo index) */
    uint64_t tids_n;
    int32_t tid_first;
} prof_line_t;

typedef struct {
    char name[128];
    char kind[16];          /* heap, mmap, global, other */
    char key[1024];         /* identity: call path (heap), symbol (global), mapping */
    char site[320];         /* allocation site, readable */
    char path[PROF_MAX_CHAIN][320];
    int npath;
    uint64_t allocations, bytes, max_bytes;
    uint64_t pages_by_node[PROF_MAX_NODES]; /* topo index */
    uint64_t pages_absent;
    char placement_source[24];
    uint64_t ft_pages;
    uint64_t ft_last; /* time of its last first-touch sample: initialisation ends */
    uint64_t ft_by_node[PROF_MAX_NODES];
    VEC(int32_t) ft_tids;
    VEC(prof_line_t) ft_sites;
    uint64_t acc_samples, acc_local, acc_remote;
    VEC(prof_line_t) acc_lines;
    uint64_t region_node[8][PROF_MAX_NODES]; /* accesses per eighth of the variable x thread node */
    uint64_t lo, hi;        /* address range (first allocation / symbol) */
    int32_t pid;            /* process of its first allocation (0: none) */
    char finding[1024];
    char pattern[24];
} prof_var_t;

/* A thread as the samples saw it: where it ran. */
#define PROF_THREAD_CPUS 8
typedef struct {
    int32_t pid, tid;
    int ncpus;
    int32_t cpu[PROF_THREAD_CPUS];    /* most samples first after sorting */
    uint64_t cpu_n[PROF_THREAD_CPUS];
    uint64_t samples;
} prof_thread_t;

typedef struct {
    VEC(prof_var_t) vars;
    VEC(prof_thread_t) threads;
    char fault_loc[320]; /* where the program died (crash record), "" if unknown */
    uint64_t matrix[PROF_MAX_NODES][PROF_MAX_NODES]; /* thread node x page node */
    uint64_t acc_total, acc_unattributed, ft_unattributed;
    uint64_t ft_refaults; /* fault samples on pages already touched: not first touches */
    VEC(char *) findings;
} prof_result_t;

void prof_analyze(prof_session_t *s, prof_result_t *r);
void prof_result_free(prof_result_t *r);
/* The start record of a process (its memory policy), NULL if none. */
const prof_start_t *prof_start_of(const prof_session_t *s, int pid);
/* "bind", "interleave", ... for an MPOL_* mode (flags masked off). */
const char *prof_policy_name(int mode);
/* Plain-language finding of one variable (empty if nothing to say). */
void prof_finding(const prof_session_t *s, prof_var_t *v);
/* (prof_name.c) Name of the variable assigned on a source line ("c" in
 * "double *c = malloc(n)"), or false. */
bool prof_guess_name(const char *line, char *name, size_t cap);
/* Line `lineno` (from 1) of a source file; false if it is not there. */
bool prof_source_line(const char *file, int lineno, char *buf, size_t cap);

/* output (prof_report.c) */
locus_status_t prof_write_json(const prof_session_t *s, const prof_result_t *r, FILE *out);
void prof_print_report(const prof_session_t *s, const prof_result_t *r, FILE *out);
void prof_session_free(prof_session_t *s);

/* The end of a session once the samples and the shim logs are in (the last
 * step of locus_prof_run): notes from the logs' counters, attribution,
 * analysis, the profile to opt.output and the report to opt.report (each
 * skipped if NULL). Needs no live process: the shim log fuzz harness runs it
 * on a session that has only a log. */
locus_status_t prof_session_finish(prof_session_t *s);


#endif
