/* locus profile: data-centric NUMA profile of a program (docs/PROFILER.md). */
#include "cli.h"

#include <locus/locus.h>
#include <locus/config.h>
#include "core/config.h"
#include "core/error.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SHIM "liblocus_prof_preload.so"

static void profile_usage(FILE *out)
{
    fprintf(out,
            "usage: locus profile [options] -- PROGRAM [ARGS...]\n"
            "       locus profile --merge [-o job.json] PROFILE...\n"
            "  runs PROGRAM, prints a NUMA report per variable and writes a JSON profile.\n"
            "  -o, --output FILE    JSON profile (default locus-profile.json; in an MPI job\n"
            "                       locus-profile.%%r.json); %%r rank, %%p pid, %%h host, %%%% a '%%'\n"
            "  --merge              one job report from the ranks' profiles (-o: the job as JSON)\n"
            "  --no-json            do not write the JSON profile\n"
            "  --samplers LIST      auto, or a comma list of first-touch, access, pmu (LOCUS_PROF_SAMPLERS)\n"
            "  --period N           first touches per first-touch sample; 1 = every page, 0 = rate-controlled\n"
            "                       (LOCUS_PROF_FT_PERIOD, 0)\n"
            "  --ft-rate N          first-touch samples/s per cpu when --period is 0 (LOCUS_PROF_FT_RATE, 4000)\n"
            "  --access-rate N      access samples per second per process, 0 = off (LOCUS_PROF_ACCESS_RATE, 500)\n"
            "  --min-alloc SIZE     track allocations from this size (LOCUS_PROF_MIN_ALLOC, 64K)\n"
            "  --depth N            allocation call path frames, 1..16 (LOCUS_PROF_DEPTH, 8)\n"
            "  --top N              variables in the terminal report (LOCUS_PROF_TOP, 10)\n"
            "  -q, --quiet          no terminal report\n"
            "  --shim PATH          the preload library (default: found beside this executable)\n"
            "exit status: the program's own (also when the profile could not be written); 128+N if it\n"
            "  was killed by signal N; 127 program not found; 126 not executable; 2 usage error;\n"
            "  1 profiler error before the program ran (e.g. output not writable).\n"
            "  python -m locus.report locus-profile.json --html out.html draws the plots.\n");
}

/* The shim sits in <exe dir>/../lib (build tree and install prefix) or a
 * multiarch/lib64 variant. */
static const char *find_shim(char *buf, size_t cap)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return NULL;
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (!slash)
        return NULL;
    *slash = 0;
    static const char *rel[] = {"../lib/", "../lib64/", "../lib/x86_64-linux-gnu/", "", "../lib/locus/"};
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
        snprintf(buf, cap, "%s/%s%s", exe, rel[i], SHIM);
        if (access(buf, R_OK) == 0)
            return buf;
    }
    return NULL;
}

static int opt_u64(const char *opt, const char *v, int64_t lo, int64_t hi, uint64_t *out)
{
    int64_t x;
    if (lc_parse_int(v, lo, hi, &x) != LOCUS_OK)
        return cli_usage_error("profile", "%s '%s': expected an integer in %lld..%lld", opt, v, (long long)lo,
                               (long long)hi);
    *out = (uint64_t)x;
    return 0;
}

static int merge_main(int argc, char **argv)
{
    const char *out = NULL;
    const char **files = calloc((size_t)argc + 1, sizeof *files);
    int n = 0;
    if (!files)
        return cli_fail("profile", lc_err(LOCUS_ERR_NO_MEMORY, "argument list"));
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--merge"))
            continue;
        if (!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output")) {
            if (i + 1 >= argc) {
                free(files);
                return cli_usage_error("profile", "%s needs a value (see locus profile --help)", argv[i]);
            }
            out = argv[++i];
        } else if (argv[i][0] == '-' && argv[i][1]) {
            free(files);
            return cli_usage_error("profile", "--merge takes [-o FILE] and profiles, not '%s'", argv[i]);
        } else {
            files[n++] = argv[i];
        }
    }
    if (!n) {
        free(files);
        return cli_usage_error("profile", "--merge: no profiles given: expected the ranks' files, e.g. prof.*.json");
    }
    locus_status_t st = locus_prof_merge(files, n, out, stdout);
    free(files);
    if (st != LOCUS_OK)
        return cli_fail("profile", st);
    if (out)
        printf("\n  job report written to %s\n", out);
    return 0;
}

int locus_cmd_profile(int argc, char **argv)
{
    for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
        if (!strcmp(argv[i], "--merge"))
            return merge_main(argc, argv);
    locus_prof_options_t o;
    locus_status_t st = locus_prof_options_init(&o);
    if (st != LOCUS_OK)
        return cli_fail("profile", st);
    char shimbuf[PATH_MAX + 64];
    o.shim = find_shim(shimbuf, sizeof shimbuf);
    /* one profile per rank unless told otherwise */
    if (getenv("PMIX_RANK") || getenv("OMPI_COMM_WORLD_RANK") || getenv("PMI_RANK") || getenv("SLURM_PROCID"))
        o.output = "locus-profile.%r.json";
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        uint64_t u = 0;
        int rc = 0;
        if (!strcmp(a, "--")) {
            i++;
            break;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            profile_usage(stdout);
            return 0;
        } else if (!strcmp(a, "--no-json")) {
            o.output = NULL;
            continue;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            o.report = NULL;
            continue;
        } else if (a[0] != '-') {
            break; /* the program, without "--" */
        }
        if (!v)
            return cli_usage_error("profile", "%s needs a value (see locus profile --help)", a);
        i++;
        if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            o.output = v;
        } else if (!strcmp(a, "--samplers")) {
            if (locus_prof_validate_samplers(v) != LOCUS_OK)
                return cli_usage_error("profile", "--samplers %s", locus_last_error());
            o.samplers = v;
        } else if (!strcmp(a, "--period")) {
            rc = opt_u64(a, v, 0, 1048576, &o.ft_period);
        } else if (!strcmp(a, "--ft-rate")) {
            rc = opt_u64(a, v, 10, 1000000, &o.ft_rate);
        } else if (!strcmp(a, "--access-rate")) {
            rc = opt_u64(a, v, 0, 100000, &o.access_rate);
        } else if (!strcmp(a, "--depth")) {
            rc = opt_u64(a, v, 1, 16, &u);
            o.depth = (int)u;
        } else if (!strcmp(a, "--top")) {
            rc = opt_u64(a, v, 1, 100000, &u);
            o.top = (int)u;
        } else if (!strcmp(a, "--min-alloc")) {
            if (locus_parse_size(v, &o.min_alloc) != LOCUS_OK || o.min_alloc < 4096)
                return cli_usage_error("profile", "--min-alloc '%s': expected a size >= 4096 bytes, e.g. 64K", v);
        } else if (!strcmp(a, "--shim")) {
            if (access(v, R_OK) != 0)
                return cli_usage_error("profile", "--shim '%s': no such readable file", v);
            o.shim = v;
        } else {
            profile_usage(stderr);
            return cli_usage_error("profile", "unknown option '%s' (see locus profile --help)", a);
        }
        if (rc)
            return rc;
    }
    if (i >= argc) {
        profile_usage(stderr);
        return cli_usage_error("profile", "no program given: expected locus profile [options] -- PROGRAM [ARGS...]");
    }
    if (!o.shim)
        fprintf(stderr, "locus profile: note: %s not found beside the locus executable: no allocation names, "
                        "no access samples (give --shim PATH)\n", SHIM);
    int status = -1; /* set once the program ran */
    st = locus_prof_run(&o, argv + i, &status);
    if (st == LOCUS_ERR_NOT_FOUND && status < 0) {
        fprintf(stderr, "locus profile: %s\n", locus_last_error());
        return 127;
    }
    if (st == LOCUS_ERR_PERMISSION && status < 0) {
        fprintf(stderr, "locus profile: %s\n", locus_last_error());
        return 126;
    }
    if (st == LOCUS_ERR_INVALID && status < 0) { /* e.g. -o 'p.%r.json' outside a job */
        cli_fail("profile", st);
        return 2;
    }
    if (st != LOCUS_OK) {
        cli_fail("profile", st);
        return status >= 0 ? status : 1; /* once the program ran, its status */
    }
    return status;
}
