/* locus prof: a data-centric NUMA profiler that needs no hardware PMU.
 * Runs a program with a preloaded shim (allocations, page placement,
 * protection-based access samples) and software page-fault sampling (first
 * touch), attributes pages and accesses to variables (allocation sites and
 * globals) and source lines, and writes a JSON profile plus a terminal
 * report. See docs/PROFILER.md. */
#ifndef LOCUS_PROF_H
#define LOCUS_PROF_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <locus/status.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct locus_prof_options {
    const char *output;      /* JSON profile path ("locus-profile.json"); NULL = none */
    const char *samplers;    /* "auto" or a comma list of first-touch, access, pmu */
    uint64_t ft_period;      /* first-touch page faults per sample (1 = every page; 0 = rate-controlled) */
    uint64_t ft_rate;        /* first-touch samples/s per cpu when ft_period is 0 */
    uint64_t access_rate;    /* access samples per second per process (0 = off) */
    uint64_t min_alloc;      /* allocations tracked from this many bytes */
    int depth;               /* allocation call path frames (1..16) */
    int top;                 /* variables in the terminal report */
    const char *shim;        /* path of liblocus_prof_preload.so (NULL = none) */
    FILE *report;            /* terminal report (NULL = none) */
} locus_prof_options_t;

/* Defaults from the LOCUS_PROF_* tunables. */
LOCUS_API locus_status_t locus_prof_options_init(locus_prof_options_t *opt);

/* Run argv (argv[0] looked up in PATH) under the profiler and wait for it.
 * *exit_status is what a shell would report: the program's exit code, or
 * 128 + signal if it was killed. Returns LOCUS_ERR_NOT_FOUND (program not
 * found), LOCUS_ERR_PERMISSION (not executable), LOCUS_ERR_INVALID (bad
 * options), LOCUS_ERR_SYSTEM (output not writable, fork failed) before
 * running anything; once the program ran, LOCUS_OK (or the error writing the
 * profile) with *exit_status set. */
LOCUS_API locus_status_t locus_prof_run(const locus_prof_options_t *opt, char *const argv[], int *exit_status);

/* One report for an MPI job from its per-rank profiles (written with
 * `-o prof.%r.json`; %r is the rank from PMIX_RANK, OMPI_COMM_WORLD_RANK,
 * PMI_RANK or SLURM_PROCID, %p the pid, %h the host): variables aggregated
 * over ranks by allocation site, per-rank rows where ranks differ, access
 * matrices per host, the ranks' findings. The report goes to `report`
 * (NULL: none), the job as JSON ("locus-job/1") to `output` (NULL: none).
 * LOCUS_ERR_INVALID for a file that is not a profile or two files of the
 * same rank. */
LOCUS_API locus_status_t locus_prof_merge(const char *const *paths, int n, const char *output, FILE *report);

/* Validator of LOCUS_PROF_SAMPLERS. */
LOCUS_API locus_status_t locus_prof_validate_samplers(const char *value);

#ifdef __cplusplus
}
#endif
#endif
