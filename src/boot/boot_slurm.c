/* srun without PMI: Slurm's variables say who and where a task is, but
 * Slurm offers no exchange of data without a PMI plugin. So this source
 * knows rank, size and the node layout; with more than one task its
 * collectives fail and say what to use instead. SLURM_STEP_ID is required:
 * a batch script also sees SLURM_PROCID=0 and SLURM_NTASKS=N, without being
 * task 0 of N. */
#include "boot/boot_internal.h"

#include "core/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *env2(const char *a, const char *b)
{
    const char *v = getenv(a);
    return v ? v : getenv(b);
}

bool boot_slurm_rank_size(int *rank, int *size)
{
    const char *step = env2("SLURM_STEP_ID", "SLURM_STEPID");
    const char *ntasks = env2("SLURM_STEP_NUM_TASKS", "SLURM_NTASKS");
    const char *procid = getenv("SLURM_PROCID");
    if (!step || !ntasks || !procid)
        return false;
    int s = atoi(ntasks), r = atoi(procid);
    if (s < 1 || r < 0 || r >= s)
        return false;
    *rank = r;
    *size = s;
    return true;
}

/* Tasks on node `node` from "2(x3),1" (SLURM_STEP_TASKS_PER_NODE); -1 if malformed. */
static int tasks_on_node(const char *spec, int node)
{
    int seen = 0;
    for (const char *s = spec; *s;) {
        char *end;
        long tasks = strtol(s, &end, 10), reps = 1;
        if (end == s || tasks < 1)
            return -1;
        if (end[0] == '(' && end[1] == 'x') {
            reps = strtol(end + 2, &end, 10);
            if (reps < 1 || *end != ')')
                return -1;
            end++;
        }
        if (node < seen + reps)
            return (int)tasks;
        seen += (int)reps;
        if (*end == ',')
            end++;
        else if (*end)
            return -1;
        s = end;
    }
    return -1;
}

static locus_status_t slurm_allgather(locus_boot_t *b, const void *mine, size_t len, void *all)
{
    if (b->size == 1) {
        if (len)
            memmove(all, mine, len);
        return LOCUS_OK;
    }
    return lc_err(LOCUS_ERR_UNSUPPORTED,
                  "started by srun without PMI (rank %d of %d from SLURM_PROCID/SLURM_NTASKS): "
                  "Slurm offers no data exchange then; use srun --mpi=pmix (or --mpi=pmi2), or set "
                  "LOCUS_BOOT=tcp:HOST:PORT with HOST an address of task 0's node",
                  b->rank, b->size);
}

static void slurm_abort(locus_boot_t *b, int status, const char *msg) {}
static locus_status_t slurm_fini(locus_boot_t *b) { return LOCUS_OK; }

static const boot_ops_t slurm_ops = {slurm_allgather, slurm_abort, slurm_fini};

locus_status_t boot_slurm_open(locus_boot_t *b, const locus_boot_attr_t *attr)
{
    int rank, size;
    if (!boot_slurm_rank_size(&rank, &size))
        return lc_err(LOCUS_ERR_NOT_FOUND, "not a task of an srun step (SLURM_PROCID, "
                      "SLURM_NTASKS, SLURM_STEP_ID)");
    const char *per_node = env2("SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE");
    locus_status_t st;
    int local, node, nodes;
    if ((st = boot_env_int("SLURM_LOCALID", 0, size - 1, &local)) ||
        (st = boot_env_int("SLURM_NODEID", 0, size - 1, &node)) ||
        (st = boot_env_int(getenv("SLURM_STEP_NUM_NODES") ? "SLURM_STEP_NUM_NODES" : "SLURM_NNODES",
                           1, size, &nodes)))
    {
        char msg[300];
        snprintf(msg, sizeof msg, "%s", locus_last_error());
        return lc_err(st == LOCUS_ERR_NOT_FOUND ? LOCUS_ERR_INVALID : st, "srun task: %s", msg);
    }
    int local_size = per_node ? tasks_on_node(per_node, node) : -1;
    if (local_size < 1 || local >= local_size || node >= nodes)
        return lc_err(LOCUS_ERR_INVALID, "srun task: SLURM_TASKS_PER_NODE='%s' does not fit "
                      "SLURM_NODEID=%d, SLURM_LOCALID=%d, %d nodes", per_node ? per_node : "",
                      node, local, nodes);
    b->ops = &slurm_ops;
    b->rank = rank;
    b->size = size;
    b->local_rank = local;
    b->local_size = local_size;
    b->node = node;
    b->num_nodes = nodes;
    char raw[64];
    snprintf(raw, sizeof raw, "%s.%s", getenv("SLURM_JOB_ID") ? getenv("SLURM_JOB_ID") : "0",
             env2("SLURM_STEP_ID", "SLURM_STEPID"));
    boot_make_job(b->job, "slurm-", raw);
    snprintf(b->source, sizeof b->source, "slurm");
    if (size > 1)
        lc_note(&b->notes, "srun without PMI: rank information only; collectives need "
                "--mpi=pmix or LOCUS_BOOT=tcp:HOST:PORT");
    return LOCUS_OK;
}
