/* Who am I on this node: the job's name and this process's local rank and
 * size, which name the segment and place the process in it. In order:
 *
 *   opts.boot        the caller's boot handle: its job, local rank and size;
 *   opts.rank/size/job all given: those, boot is not asked (tests, runtimes
 *                    with a wire-up of their own);
 *   LOCUS_RANK or LOCUS_SIZE set and LOCUS_BOOT unset: the pre-boot contract
 *                    of a launcher that sets LOCUS_RANK/SIZE/JOB itself (an
 *                    older `locus run`, a harness forking the processes);
 *   else             join the job with locus_boot_init (PMIx, PMI-1, Slurm,
 *                    `locus run`, a singleton) and leave it at finalize; if
 *                    PMIx is there but its library is not, Open MPI's
 *                    OMPI_COMM_WORLD_LOCAL_RANK/SIZE + PMIX_NAMESPACE.
 *
 * opts.rank/size/job, where given, override what the source said. */
#include "shm/shm_internal.h"

#include "core/config.h"
#include "core/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static locus_status_t env_int(const char *name, int lo, int hi, int *out)
{
    int64_t x;
    if (lc_parse_int(getenv(name), lo, hi, &x) != LOCUS_OK) {
        char msg[300];
        snprintf(msg, sizeof msg, "%s", locus_last_error());
        return lc_err(LOCUS_ERR_INVALID, "%s=%s", name, msg);
    }
    *out = (int)x;
    return LOCUS_OK;
}

/* The pre-boot contract: LOCUS_RANK/SIZE/JOB as the launcher set them. */
static locus_status_t from_locus_env(int *rank, int *size, char *job, size_t joblen)
{
    int64_t r, s;
    const char *j;
    locus_status_t st;
    if ((st = lc_tun_int(LC_TUN_RANK, &r)) || (st = lc_tun_int(LC_TUN_SIZE, &s)) ||
        (st = lc_tun_string(LC_TUN_JOB, &j)))
        return st;
    *rank = (int)r;
    *size = (int)s;
    if (*j)
        snprintf(job, joblen, "%s", j);
    else if (s == 1)
        snprintf(job, joblen, "solo-%d", (int)getpid()); /* a singleton: a private name */
    else
        return lc_err(LOCUS_ERR_INVALID, "LOCUS_SIZE=%d but LOCUS_JOB is unset: start the "
                      "processes with `locus run -n N`, mpirun or mpiexec", *size);
    return LOCUS_OK;
}

/* PMIx launcher without a loadable PMIx library: Open MPI's own variables. */
static bool from_ompi_env(locus_shm_ep_t *ep, int *rank, int *size, char *job, size_t joblen)
{
    const char *ns = getenv("PMIX_NAMESPACE");
    if (!ns || !*ns || !getenv("OMPI_COMM_WORLD_LOCAL_RANK") ||
        env_int("OMPI_COMM_WORLD_LOCAL_SIZE", 1, 65536, size) ||
        env_int("OMPI_COMM_WORLD_LOCAL_RANK", 0, 65535, rank))
        return false;
    size_t j = (size_t)snprintf(job, joblen, "pmix-");
    for (size_t i = 0; ns[i] && j + 1 < joblen && j < 48; i++) { /* what LOCUS_JOB accepts */
        char c = ns[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '.' || c == '-';
        job[j++] = ok ? c : '_';
    }
    job[j] = '\0';
    lc_note_once(&ep->notes, "joined as OMPI_COMM_WORLD_LOCAL_RANK of OMPI_COMM_WORLD_LOCAL_SIZE: "
                 "the PMIx client library is not usable here");
    return true;
}

/* Join the job with boot; the handle is the endpoint's until finalize. */
static locus_status_t from_boot(locus_shm_ep_t *ep, int *rank, int *size, char *job, size_t joblen)
{
    locus_boot_t *b;
    locus_status_t st = locus_boot_init(NULL, &b);
    if (st == LOCUS_ERR_UNSUPPORTED && from_ompi_env(ep, rank, size, job, joblen))
        return LOCUS_OK;
    if (st) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s", locus_last_error());
        return lc_err(st, "shm: joining the job (locus_boot_init): %s (a process that already "
                      "holds a boot handle passes it as locus_shm_opts_t.boot)", msg);
    }
    ep->boot_owned = b;
    *rank = locus_boot_local_rank(b);
    *size = locus_boot_local_size(b);
    snprintf(job, joblen, "%s", locus_boot_job(b));
    return LOCUS_OK;
}

locus_status_t shm_job_ids(locus_shm_ep_t *ep, const locus_shm_opts_t *opts, char *job, size_t joblen)
{
    locus_status_t st = LOCUS_OK;
    int rank = 0, size = 1;
    bool given = opts && opts->rank >= 0 && opts->size > 0 && opts->job;
    bool old_env = (lc_tun_is_set(LC_TUN_RANK) || lc_tun_is_set(LC_TUN_SIZE)) && !lc_tun_is_set(LC_TUN_BOOT);
    if (opts && opts->boot) {
        rank = locus_boot_local_rank(opts->boot);
        size = locus_boot_local_size(opts->boot);
        snprintf(job, joblen, "%s", locus_boot_job(opts->boot));
    } else if (!given) {
        st = old_env ? from_locus_env(&rank, &size, job, joblen) : from_boot(ep, &rank, &size, job, joblen);
    }
    if (st)
        return st;
    if (opts && opts->size > 0)
        size = opts->size;
    if (opts && opts->rank >= 0)
        rank = opts->rank;
    if (opts && opts->job) {
        if ((st = shm_validate_job(opts->job)))
            return st;
        snprintf(job, joblen, "%s", opts->job);
    }
    if (size < 1 || rank < 0 || rank >= size)
        return lc_err(LOCUS_ERR_INVALID, "rank %d: expected 0..%d (size %d)", rank, size - 1, size);
    ep->rank = rank;
    ep->size = size;
    return LOCUS_OK;
}
