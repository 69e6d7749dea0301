/* locus boot: who am I in the job, and the few collectives a runtime needs
 * before it has a transport of its own (process-management wire-up).
 *
 * locus_boot_init() finds the launcher and joins the job. Sources, tried in
 * this order with LOCUS_BOOT=auto (the default):
 *   "pmix"      PMIX_RANK + PMIX_NAMESPACE in the environment (Open MPI's
 *               mpirun/prterun, srun --mpi=pmix): the PMIx client library,
 *               loaded at run time (libpmix.so.2), so liblocus does not
 *               depend on it. PMIx_Init is reference-counted: an MPI library
 *               in the same process may use PMIx too.
 *   "pmi1"      PMI_FD + PMI_RANK + PMI_SIZE (MPICH's mpiexec.hydra): the
 *               PMI-1 text protocol over PMI_FD. Do not use it in a process
 *               whose MPI library also speaks PMI over the same fd (MPICH).
 *   "slurm"     srun without PMI (SLURM_PROCID, SLURM_NTASKS, SLURM_STEP_ID):
 *               rank and node information only; with more than one process
 *               the collectives fail and say to use srun --mpi=pmix or
 *               LOCUS_BOOT=tcp:HOST:PORT.
 *   "tcp"       LOCUS_BOOT=tcp:HOST:PORT with LOCUS_RANK/LOCUS_SIZE (or
 *               Slurm's rank variables): a rendezvous hub on HOST:PORT,
 *               served by rank 0 (a thread of that process) unless a
 *               launcher already serves it there.
 *   "locus-run" `locus run -n N` serves the hub itself (no port race) and
 *               passes LOCUS_BOOT=tcp:127.0.0.1:PORT; when a process dies it
 *               tells the others ("rank 2 exited with status 3").
 *   "singleton" no launcher: rank 0 of 1.
 * An explicit LOCUS_BOOT (pmix, pmi1, tcp:HOST:PORT, singleton) is used
 * alone: if it does not work, init fails and says why.
 *
 * Node identity: processes share a node when they share hostname and
 * /proc/sys/kernel/random/boot_id. Nodes are numbered 0..num_nodes-1 in the
 * order of their lowest rank (rank 0 is on node 0); local ranks are numbered
 * by rank within a node. Under PMIx the launcher's PMIX_LOCAL_RANK,
 * PMIX_LOCAL_SIZE, PMIX_NODEID and PMIX_NUM_NODES are used when it provides
 * them (node ids are then the launcher's), else the host ids are exchanged.
 *
 * Collectives (allgather, barrier) are collective over the whole job: every
 * process calls them in the same order with the same length. One collective
 * at a time per process (calls from several threads are serialised). A
 * process that dies, disconnects or finalizes while others are in (or later
 * enter) a collective makes those collectives fail with LOCUS_ERR_PEER_FAILED
 * and a message naming the rank, never a hang (tcp and locus-run; under PMIx
 * and PMI-1 the launcher tears the job down). A boot handle is not usable in
 * a forked child. A process joins its job once under pmi1 and tcp (a second
 * handle is refused: pass the one handle to whatever needs it); PMIx allows
 * several (reference-counted).
 *
 * How shm uses it: the node segment is named from locus_boot_job() (the same
 * on every process of the job, unique per job, 1-48 characters from
 * [A-Za-z0-9_.-], what LOCUS_JOB accepts), and a process joins it as
 * locus_boot_local_rank() of locus_boot_local_size(): locus_shm_init takes
 * them from the handle in its options, or joins the job itself when given
 * none (include/locus/shm.h). A runtime that needs the map of global rank
 * <-> (node, local rank) allgathers the pair once.
 */
#ifndef LOCUS_BOOT_H
#define LOCUS_BOOT_H

#include <stdbool.h>
#include <stddef.h>
#include <locus/status.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct locus_boot locus_boot_t;

typedef enum locus_boot_kind {
    LOCUS_BOOT_AUTO = 0,  /* the first launcher found (order above) */
    LOCUS_BOOT_PMIX,
    LOCUS_BOOT_PMI1,
    LOCUS_BOOT_TCP,       /* address = "HOST:PORT" */
    LOCUS_BOOT_SINGLETON,
} locus_boot_kind_t;

#define LOCUS_BOOT_ADDRESS_MAX 256

typedef struct locus_boot_attr {
    locus_boot_kind_t kind;               /* LOCUS_BOOT */
    char address[LOCUS_BOOT_ADDRESS_MAX]; /* tcp: "HOST:PORT" ("[v6]:PORT") */
    double timeout;                       /* LOCUS_BOOT_TIMEOUT: seconds to reach the
                                             hub, and for the last rank to arrive
                                             after the first */
    int rank, size;                       /* tcp: -1 = LOCUS_RANK/LOCUS_SIZE, else
                                             SLURM_PROCID/SLURM_NTASKS */
} locus_boot_attr_t;

/* Defaults (kind AUTO, timeout from the tunables table, rank/size -1). */
LOCUS_API void locus_boot_attr_init(locus_boot_attr_t *attr);
/* Overwrite the fields whose LOCUS_BOOT* variable is set. All or nothing:
 * a bad value leaves attr as it was and the error names the variable. */
LOCUS_API locus_status_t locus_boot_attr_from_env(locus_boot_attr_t *attr);
/* Parse a LOCUS_BOOT value ("auto", "pmix", "pmi1", "singleton",
 * "tcp:HOST:PORT") into attr->kind/address (attr may be NULL: check only). */
LOCUS_API locus_status_t locus_boot_parse(const char *text, locus_boot_attr_t *attr);

/* Join the job. attr NULL = defaults + environment. Under tcp this waits
 * for every rank (at most LOCUS_BOOT_TIMEOUT after the first one arrived);
 * the error then names the address, how many arrived and who is missing. */
LOCUS_API locus_status_t locus_boot_init(const locus_boot_attr_t *attr, locus_boot_t **out);
/* Leave the job (collective: every process calls it). Under tcp with a rank-0
 * hub, rank 0 returns once every other rank left. Safe with NULL. */
LOCUS_API locus_status_t locus_boot_fini(locus_boot_t *b);

LOCUS_API int locus_boot_rank(const locus_boot_t *b);
LOCUS_API int locus_boot_size(const locus_boot_t *b);
LOCUS_API int locus_boot_local_rank(const locus_boot_t *b);
LOCUS_API int locus_boot_local_size(const locus_boot_t *b);
LOCUS_API int locus_boot_node(const locus_boot_t *b);
LOCUS_API int locus_boot_num_nodes(const locus_boot_t *b);
/* "pmix", "pmi1", "slurm", "tcp", "locus-run" (or another launcher's name
 * given to locus_boot_hub_create) or "singleton". */
LOCUS_API const char *locus_boot_source(const locus_boot_t *b);
/* The job id: the same on every process of the job; usable to name shared
 * segments (see above). */
LOCUS_API const char *locus_boot_job(const locus_boot_t *b);
/* Choices and fallbacks made at init, one per line; "" if none. */
LOCUS_API const char *locus_boot_notes(const locus_boot_t *b);

/* all[r*len .. r*len+len) = rank r's `mine`, for every rank r; all holds
 * size*len bytes. len must be the same on every process (0 is a barrier). */
LOCUS_API locus_status_t locus_boot_allgather(locus_boot_t *b, const void *mine, size_t len,
                                              void *all);
LOCUS_API locus_status_t locus_boot_barrier(locus_boot_t *b);

/* Bring the whole job down with `status`: the launcher (PMIx_Abort, PMI-1
 * abort, the locus run hub) terminates every process; msg is shown by the
 * launcher where the protocol carries one (PMIx, locus run) — PMI-1 carries
 * none: print it yourself first. With a rank-0 tcp hub the other processes
 * exit with `status` from their boot thread. Does not return: if the job is
 * not torn down within a few seconds, the caller _exit()s with `status`
 * (stdio is not flushed: flush first). b may be NULL (then just _exit). */
LOCUS_API void locus_boot_abort(locus_boot_t *b, int status, const char *msg)
    __attribute__((noreturn));

/* ---- The rendezvous hub, for launchers ----
 * A launcher that starts the processes itself serves the hub (it holds the
 * listening socket, so there is no port race), passes
 * LOCUS_BOOT=<locus_boot_hub_address()> and LOCUS_RANK/LOCUS_SIZE to the
 * processes, reports each process's exit, and polls for aborts. */
typedef struct locus_boot_hub locus_boot_hub_t;

/* Listen on address "HOST:PORT" (PORT 0: the kernel picks one) for a job of
 * `size` processes; job NULL = generate one; launcher: the source name the
 * processes report ("locus-run"), 1-15 characters [a-z0-9-]; timeout <= 0:
 * LOCUS_BOOT_TIMEOUT (every rank must arrive within it of the first; a job
 * whose processes never use locus_boot is never failed). The hub runs in a
 * thread of its own until destroyed. */
LOCUS_API locus_status_t locus_boot_hub_create(const char *address, int size, const char *job,
                                               const char *launcher, double timeout,
                                               locus_boot_hub_t **out);
/* The LOCUS_BOOT value for the processes: "tcp:127.0.0.1:40123". */
LOCUS_API const char *locus_boot_hub_address(const locus_boot_hub_t *h);
LOCUS_API const char *locus_boot_hub_job(const locus_boot_hub_t *h);
/* Process `rank` ended with waitpid status `wait_status`. Unless it had
 * called locus_boot_fini, the others' pending and later collectives fail with
 * "rank R exited with status S" (or "was killed by signal N"). */
LOCUS_API void locus_boot_hub_exited(locus_boot_hub_t *h, int rank, int wait_status);
/* True once a process called locus_boot_abort: its rank, status and message
 * (msg may be NULL). The launcher then terminates the others. */
LOCUS_API bool locus_boot_hub_aborted(locus_boot_hub_t *h, int *rank, int *status, char *msg,
                                      size_t msg_len);
/* Stop the thread, close every connection. Safe with NULL. */
LOCUS_API void locus_boot_hub_destroy(locus_boot_hub_t *h);

#ifdef __cplusplus
}
#endif
#endif
