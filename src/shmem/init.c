/* Start-up, shut-down and the queries: shmem_init[_thread] joins the job
 * (locus boot: locus run, mpirun/prterun through PMIx, or singleton),
 * creates the symmetric heap through locus rma (SHMEM_SYMMETRIC_SIZE plus
 * the library's channels, mapped by the node's PEs, registered with the
 * NIC when the job spans nodes), shares the data segment (globals.c) and
 * decides the job's atomicity agent. shmem_finalize is collective and
 * undoes it; a program that returns from main without it (start_pes, or a
 * forgotten finalize) is finalized at exit, but a PE of a larger job that
 * called shmem_init and exits with a nonzero status ends the job instead
 * (see at_exit).
 * shmem_global_exit ends every PE through the launcher with the given
 * status. */
#include "shmem/shmem_internal.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define CALL lshm_name(__func__)

lshm_state_t lshm = {.me = -1, .lock = PTHREAD_MUTEX_INITIALIZER};

/* Exported tags behind SHMEM_CTX_DEFAULT, SHMEM_TEAM_WORLD, SHMEM_TEAM_SHARED
 * (the state lives in lshm; only the addresses matter). */
LSHM_API struct shmem_internal_ctx shmem_internal_ctx_default;
LSHM_API struct shmem_internal_team shmem_internal_team_world;
LSHM_API struct shmem_internal_team shmem_internal_team_shared;

static uint64_t page_up(uint64_t v) { return (v + 4095) & ~(uint64_t)4095; }

static void heap_init(const lshm_env_t *env)
{
    locus_rma_attr_t a;
    locus_rma_attr_init(&a);
    locus_status_t st = locus_rma_attr_from_env(&a);
    if (st)
        lshm_fatal_status("shmem_init", st, "reading LOCUS_RMA_*/LOCUS_HEAP_*");
    a.boot = lshm.boot;
    lshm.reserve = page_up(lshm_chan_bytes(lshm.npes));
    uint64_t user = env->heap_var ? env->heap_size : a.heap_size; /* 0 is a size asked for */
    a.heap_size = page_up(user) + lshm.reserve;
    if ((st = locus_rma_init(&a, &lshm.rma))) {
        char b[32];
        lshm_fatal("shmem_init", "creating the %s symmetric heap (%s): %s (%s)",
                   locus_format_size(user, b, sizeof b),
                   env->heap_var ? env->heap_var : "LOCUS_RMA_HEAP_SIZE or its default", locus_last_error(),
                   locus_strerror(st));
    }
    /* Every PE's heap base is aligned to a power of two near its size (the
     * heap module's rule); the least of them bounds what shmem_align can
     * honour with the same offset on every PE. */
    lshm_region_t *h = &lshm.reg[LSHM_HEAP];
    char *rb = locus_rma_heap_base(lshm.rma);
    uint64_t mine = (uint64_t)(uintptr_t)rb;
    uint64_t *bases = calloc((size_t)lshm.npes, sizeof *bases);
    h->peer = calloc((size_t)lshm.npes, sizeof *h->peer);
    if (!bases || !h->peer)
        lshm_fatal("shmem_init", "out of memory for %d PEs", lshm.npes);
    if ((st = locus_boot_allgather(lshm.boot, &mine, sizeof mine, bases)))
        lshm_fatal_status("shmem_init", st, "exchanging heap addresses");
    lshm.heap_align = UINT64_C(1) << 63;
    for (int pe = 0; pe < lshm.npes; pe++)
        if (bases[pe] && (bases[pe] & -bases[pe]) < lshm.heap_align)
            lshm.heap_align = bases[pe] & -bases[pe];
    free(bases);
    h->base = rb;
    h->len = locus_rma_heap_size(lshm.rma);
    h->rma_id = -1;
    bool all_mapped = true;
    for (int pe = 0; pe < lshm.npes; pe++) {
        h->peer[pe] = pe == lshm.me ? rb : locus_rma_ptr(lshm.rma, pe, rb);
        all_mapped &= h->peer[pe] != NULL;
    }
    /* the same rule as locus rma's: the CPU when every PE's heap is mapped
     * here (one node, on-node path), the NIC otherwise */
    lshm.cpu_amo = all_mapped;
}

/* Runs at exit() of a PE that did not call shmem_finalize. A start_pes
 * program never calls it: the spec finalizes it implicitly at exit, a
 * collective with a global synchronization, whatever main returns (NAS DT
 * returns 1 on every PE, and a PE with no work leaves at once while the
 * others compute). After shmem_init, status 0 (a forgotten finalize) is
 * finalized the same way; any other status is an error exit of this PE
 * alone: the finalize sync would wait for the others, who may be anywhere
 * (waiting for a flag this PE never sets: the job hangs), and it would even
 * complete a shmem_barrier_all they are waiting in, letting them past a
 * barrier this PE never reached. Instead the job ends through the launcher
 * with this status and says why, as shmem_global_exit does. A job of one
 * PE is finalized either way. exit() flushes stdio only after these
 * handlers. */
static void at_exit(int status, void *arg)
{
    (void)arg;
    if (lshm.init_count <= 0 || lshm.exiting)
        return;
    if (status != 0 && lshm.npes > 1 && lshm.boot && !lshm.start_pes) {
        char msg[128];
        lshm.exiting = true;
        fflush(NULL);
        snprintf(msg, sizeof msg, "PE %d exited with status %d without calling shmem_finalize", lshm.me, status);
        locus_boot_abort(lshm.boot, status, msg); /* does not return */
    }
    fflush(NULL); /* before the collective wait: a PE killed in it (another
                     PE's error exit) keeps what it printed */
    lshm.exit_status = status; /* a long wait in that sync says why (chan.c) */
    lshm.init_count = 1;
    pshmem_finalize();
}

static int do_init(int requested, int *provided, bool fatal_on_error)
{
    if (lshm.init_count > 0) {
        lshm.init_count++;
        if (provided)
            *provided = lshm.thread_level;
        return 0;
    }
    /* 1.6: after the last shmem_finalize the library may be initialized
     * again: everything is set up afresh, joining the job again included */
    lshm_env_t env;
    char err[300];
    if (lshm_env_read(&env, err, sizeof err)) {
        if (fatal_on_error)
            lshm_fatal("shmem_init", "%s", err);
        fprintf(stderr, "locus shmem: shmem_init_thread: %s\n", err);
        return -1;
    }
    lshm.debug = env.debug;
    locus_status_t st = locus_boot_init(NULL, &lshm.boot);
    if (st) {
        if (fatal_on_error)
            lshm_fatal_status("shmem_init", st, "joining the job");
        fprintf(stderr, "locus shmem: shmem_init_thread: joining the job: %s\n", locus_last_error());
        return -1;
    }
    lshm.me = locus_boot_rank(lshm.boot);
    lshm.npes = locus_boot_size(lshm.boot);
    heap_init(&env);
    lshm.oversubscribed = locus_rma_oversubscribed(lshm.rma);
    lshm_chan_init(lshm.reg[LSHM_HEAP].base);
    lshm_globals_init();
    lshm_heap_alloc = lshm_alloc_create(lshm.reserve, lshm.reg[LSHM_HEAP].len);
    if (!lshm_heap_alloc)
        lshm_fatal("shmem_init", "out of memory for the allocator");
    lshm_teams_init();
    lshm.thread_level = requested < SHMEM_THREAD_SINGLE ? SHMEM_THREAD_SINGLE
                        : requested > SHMEM_THREAD_MULTIPLE ? SHMEM_THREAD_MULTIPLE : requested;
    lshm.mt = lshm.thread_level == SHMEM_THREAD_MULTIPLE;
    /* Waits spin longer only where nobody needs this cpu: one node (a software
     * NIC, Soft-RoCE, needs the cpus' time), a cpu of its own, one thread. */
    lshm.spin_long = lshm.cpu_amo && !lshm.oversubscribed && locus_rma_own_cpus(lshm.rma) &&
                     lshm.thread_level == SHMEM_THREAD_SINGLE;
    if (provided)
        *provided = lshm.thread_level;
    /* every mailbox is cleared before anyone signals */
    if ((st = locus_rma_barrier(lshm.rma)))
        lshm_fatal_status("shmem_init", st, "start-up barrier");
    lshm.init_count = 1;
    lshm.finalized = false;
    static bool registered;
    if (!registered) {
        on_exit(at_exit, NULL);
        registered = true;
    }
    if (lshm.me == 0 && (env.info || env.version))
        lshm_print_info(&env);
    return 0;
}

LSHM_DEF(void, shmem_init, (void)) { do_init(SHMEM_THREAD_SINGLE, NULL, true); }

LSHM_DEF(int, shmem_init_thread, (int requested, int *provided))
{
    return do_init(requested, provided, false);
}

/* 1.6: callable at any time, initialized or not */
LSHM_DEF(void, shmem_query_initialized, (int *initialized))
{
    if (initialized)
        *initialized = lshm.init_count > 0;
}

LSHM_DEF(void, shmem_query_thread, (int *provided))
{
    if (provided)
        *provided = lshm.thread_level;
}

LSHM_DEF(void, shmem_finalize, (void))
{
    if (lshm.init_count <= 0 || --lshm.init_count > 0)
        return;
    lshm_quiet();
    lshm_set_t s = lshm_team_set(&lshm.world);
    lshm_set_sync("shmem_finalize", &s);
    lshm_chan_finished(); /* a PE still waiting for us in a collective is told why it waits in vain */
    lshm_globals_fini();
    locus_status_t st = locus_rma_fini(lshm.rma);
    lshm.rma = NULL;
    /* every PE passed the sync above: a peer that is gone by now finished
     * (locus rma's fini barrier can see an early finisher exit) */
    if (st && (st != LOCUS_ERR_PEER_FAILED || lshm.debug))
        fprintf(stderr, "locus shmem: PE %d: shmem_finalize: %s\n", lshm.me, locus_last_error());
    locus_boot_fini(lshm.boot);
    lshm.boot = NULL;
    lshm_alloc_destroy(lshm_heap_alloc);
    lshm_heap_alloc = NULL;
    free(lshm.reg[LSHM_HEAP].peer);
    lshm_teams_fini();
    lshm_chan_fini();
    memset(lshm.reg, 0, sizeof lshm.reg);
    lshm.npes = 0; /* every later call fails its PE check and says why */
    lshm.finalized = true;
}

LSHM_DEF(void, shmem_global_exit, (int status))
{
    fflush(NULL);
    lshm.exiting = true;
    if (lshm.boot) {
        char msg[128];
        snprintf(msg, sizeof msg, "shmem_global_exit(%d) called by PE %d", status, lshm.me);
        locus_boot_abort(lshm.boot, status, msg);
    }
    _exit(status);
}

LSHM_DEF(int, shmem_my_pe, (void)) { return lshm.init_count > 0 ? lshm.me : lshm_query_uninit(CALL); }
LSHM_DEF(int, shmem_n_pes, (void)) { return lshm.init_count > 0 ? lshm.npes : lshm_query_uninit(CALL); }

LSHM_DEF(void, shmem_info_get_version, (int *major, int *minor))
{
    if (major)
        *major = SHMEM_MAJOR_VERSION;
    if (minor)
        *minor = SHMEM_MINOR_VERSION;
}

LSHM_DEF(void, shmem_info_get_name, (char *name))
{
    if (!name)
        return;
    snprintf(name, SHMEM_MAX_NAME_LEN, "%s", SHMEM_VENDOR_STRING);
}

LSHM_DEF(void, shmem_pcontrol, (const int level, ...)) { (void)level; }

/* ---- deprecated ---- */

LSHM_DEF(void, start_pes, (int npes))
{
    (void)npes; /* ignored since 1.2: the launcher decides */
    if (lshm.init_count > 0)
        return;
    do_init(SHMEM_THREAD_SINGLE, NULL, true);
    lshm.start_pes = true;
}
LSHM_DEF(int, _my_pe, (void)) { return pshmem_my_pe(); }
LSHM_DEF(int, _num_pes, (void)) { return pshmem_n_pes(); }
/* Cray's and SGI's names without the underscore (Open MPI exports them
 * too): in no OpenSHMEM header, so not in ours, where they would clash with
 * programs' own variables named my_pe; the codes that call them declare them. */
int my_pe(void);
int num_pes(void);
LSHM_DEF(int, my_pe, (void)) { return pshmem_my_pe(); }
LSHM_DEF(int, num_pes, (void)) { return pshmem_n_pes(); }
LSHM_DEF(void, globalexit, (int status)) { pshmem_global_exit(status); }
LSHM_DEF(void, shmem_clear_cache_inv, (void)) {}
LSHM_DEF(void, shmem_set_cache_inv, (void)) {}
LSHM_DEF(void, shmem_clear_cache_line_inv, (void *dest)) { (void)dest; }
LSHM_DEF(void, shmem_set_cache_line_inv, (void *dest)) { (void)dest; }
LSHM_DEF(void, shmem_udcflush, (void)) {}
LSHM_DEF(void, shmem_udcflush_line, (void *dest)) { (void)dest; }
