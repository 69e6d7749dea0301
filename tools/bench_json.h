/* The one benchmark record format (schema "locus-bench/1", docs/bench-schema.json):
 * every `locus bench ... --json` (copy, regcache, pingpong, bw, msgrate, rma,
 * exchange),
 * `locus heap --json`, `locus stream --json`, `locus tune --json` and
 * locus-bench-regcache writes it, and `locus plot` (python/locus/plot.py)
 * draws it.
 *
 * Long form: one row per measured point {series, metric, x, x_unit, y, y_unit},
 * so one plotter handles every benchmark. x is a number (a size in bytes: log
 * scale) or a category (a workload, a policy). Rows are locus's own figures;
 * peer rows are the other implementations and baselines measured in the same
 * run (glibc memcpy, ucs_rcache, a serial touch, the memset limit).
 *
 * Everything is buffered: calls may come in any order and nothing is written
 * before bench_json_end, so a tool adopts it by adding one call per figure
 * next to its printf. Host (CPU model, vendor, kernel, cpus, NUMA nodes), date,
 * the command line (/proc/self/cmdline) and the locus version are filled in.
 *
 * Adopting it in a tool: bench_json_begin at the start when --json was given,
 * one bench_json_row / bench_json_peer_row next to each figure printed, the
 * text suppressed, bench_json_end(j, stdout) at the end; then add the tool to
 * tests/py/conftest.py (records) so its output is validated.
 * TODO(shmem): its benchmarks write this record from the start. */
#ifndef LOCUS_TOOLS_BENCH_JSON_H
#define LOCUS_TOOLS_BENCH_JSON_H

#include <stdbool.h>
#include <stdio.h>

#define BENCH_JSON_SCHEMA "locus-bench/1"

typedef struct bench_json bench_json_t;

typedef struct {
    const char *series;  /* the curve or bar group: "locus", "glibc memcpy", "avx2-nt" */
    const char *metric;  /* what y is: "bandwidth", "latency", "time per op" */
    double x;            /* numeric x (when x_cat is NULL) */
    const char *x_cat;   /* categorical x: a workload, a policy (else NULL) */
    const char *x_unit;  /* "bytes", or the category's kind: "workload", "policy" */
    double y;            /* NaN or inf are written as null (not measured) */
    const char *y_unit;  /* "GB/s", "us", "ns/op", "Mops/s", "s", "x" */
    const char *stat;    /* "median", "best", "mean" (NULL: omitted) */
    int n;               /* samples behind y (0: omitted) */
    bool highlight;      /* drawn emphasised (the selector, glibc) */
    const char *peer;    /* peer rows: the implementation and version (NULL: omitted) */
} bench_row_t;

/* A record of `benchmark` ("copy", "heap", "stream", "regcache", "tune", ...).
 * NULL when out of memory (then every other call is a no-op). */
bench_json_t *bench_json_begin(const char *benchmark);

/* params: the run's parameters as given or defaulted (sizes, reps, policy). */
void bench_json_param_str(bench_json_t *j, const char *key, const char *val);
void bench_json_param_num(bench_json_t *j, const char *key, double v);
void bench_json_param_bool(bench_json_t *j, const char *key, bool v);
/* summary: scalar results that are not points (a crossover, a verdict, a count). */
void bench_json_summary_str(bench_json_t *j, const char *key, const char *val);
void bench_json_summary_num(bench_json_t *j, const char *key, double v);
void bench_json_summary_bool(bench_json_t *j, const char *key, bool v);

void bench_json_row(bench_json_t *j, const bench_row_t *r);
void bench_json_peer_row(bench_json_t *j, const bench_row_t *r);
/* Extra fields of the row added last ("extra": {...}): a ratio, a count. */
void bench_json_extra_num(bench_json_t *j, const char *key, double v);
void bench_json_extra_str(bench_json_t *j, const char *key, const char *val);

/* A note: a caveat the reader needs ("ucs_rcache not run: built without UCX"). */
void bench_json_note(bench_json_t *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The benchmark's text on stdout, unless j is a record being written (with
 * --json the record is the output). */
void bench_say(const bench_json_t *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Write the record to out (one JSON object, then a newline), free it.
 * Returns 0, or -1 if it could not be written. */
int bench_json_end(bench_json_t *j, FILE *out);

#endif
