/* A profile in an MPI job: the rank from the launcher's environment, the
 * host, and the output path pattern (%r rank, %p pid, %h host, %% a '%'). */
#include "prof/prof_internal.h"
#include "core/error.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Launchers, in the order they are trusted: PMIx (Open MPI 5, PRRTE,
 * Slurm's PMIx), Open MPI 4's own, the PMI-1/2 family (MPICH, Intel MPI,
 * hydra), locus run, Slurm's srun. */
static const char *const RANK_VARS[][2] = {
    {"PMIX_RANK", "PMIX_SIZE"}, /* PMIX_SIZE is not always set: see below */
    {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
    {"PMI_RANK", "PMI_SIZE"},
    {"LOCUS_RANK", "LOCUS_SIZE"}, /* locus run */
    {"SLURM_PROCID", "SLURM_NTASKS"},
};

static int env_int(const char *name)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return -1;
    char *end;
    long x = strtol(v, &end, 10);
    return (*end || x < 0 || x > 1 << 24) ? -1 : (int)x;
}

void prof_job_detect(prof_job_t *j)
{
    memset(j, 0, sizeof *j);
    j->rank = j->size = -1;
    if (gethostname(j->host, sizeof j->host - 1) != 0)
        snprintf(j->host, sizeof j->host, "localhost");
    for (size_t i = 0; i < sizeof RANK_VARS / sizeof RANK_VARS[0]; i++) {
        int r = env_int(RANK_VARS[i][0]);
        if (r < 0)
            continue;
        j->rank = r;
        snprintf(j->var, sizeof j->var, "%s", RANK_VARS[i][0]);
        j->size = env_int(RANK_VARS[i][1]);
        if (j->size < 0) /* PMIx without PMIX_SIZE: Open MPI sets its own too */
            j->size = env_int("OMPI_COMM_WORLD_SIZE");
        return;
    }
}

locus_status_t prof_output_path(const char *pattern, const prof_job_t *j, long pid, char *out, size_t cap)
{
    size_t n = 0;
    for (const char *p = pattern; *p; p++) {
        char buf[300];
        const char *add = buf;
        if (*p != '%') {
            buf[0] = *p;
            buf[1] = 0;
        } else if (p[1] == 'r') {
            if (j->rank < 0)
                return lc_err(LOCUS_ERR_INVALID,
                              "output '%s': %%r is the MPI rank, but none of PMIX_RANK, OMPI_COMM_WORLD_RANK, "
                              "PMI_RANK, SLURM_PROCID is set (run it under mpirun/srun, or drop %%r)", pattern);
            snprintf(buf, sizeof buf, "%d", j->rank);
            p++;
        } else if (p[1] == 'p') {
            snprintf(buf, sizeof buf, "%ld", pid);
            p++;
        } else if (p[1] == 'h') {
            add = j->host;
            p++;
        } else if (p[1] == '%') {
            buf[0] = '%';
            buf[1] = 0;
            p++;
        } else {
            return lc_err(LOCUS_ERR_INVALID, "output '%s': unknown '%%%c': expected %%r (rank), %%p (pid), %%h (host) or %%%%",
                          pattern, p[1] ? p[1] : ' ');
        }
        size_t l = strlen(add);
        if (n + l + 1 > cap)
            return lc_err(LOCUS_ERR_INVALID, "output '%s': path too long", pattern);
        memcpy(out + n, add, l);
        n += l;
    }
    out[n] = 0;
    return LOCUS_OK;
}
