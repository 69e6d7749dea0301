/* PMIx (Open MPI's mpirun/prterun, srun --mpi=pmix), as SOS does it:
 * PMIx_Init; job size and the node layout from the launcher's keys; an
 * allgather is Put(GLOBAL, "locus.ag.<seq>") + Commit + Fence(COLLECT_DATA)
 * + a Get per rank; a barrier is a Fence; abort is PMIx_Abort.
 *
 * The library is dlopen'ed (libpmix.so.2: the soname of PMIx 2 to 5), not
 * linked: liblocus then loads on machines without PMIx, and in an MPI
 * program it shares the instance Open MPI already loaded (same soname), so
 * PMIx_Init's reference count covers both. Only the header's types and
 * constants are used at build time (pkg-config pmix); the functions come
 * through dlsym, and values are freed by hand (no macros that call into the
 * library). Keys put by allgathers stay in the PMIx store until the job
 * ends (PMIx cannot delete them). */
#include "boot/boot_internal.h"

#include "core/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if LOCUS_HAVE_PMIX_H
#include <dlfcn.h>
#include <pmix.h>

typedef struct pmix_api {
    __typeof__(PMIx_Init) *init;
    __typeof__(PMIx_Finalize) *finalize;
    __typeof__(PMIx_Abort) *abort;
    __typeof__(PMIx_Put) *put;
    __typeof__(PMIx_Commit) *commit;
    __typeof__(PMIx_Fence) *fence;
    __typeof__(PMIx_Get) *get;
    __typeof__(PMIx_Error_string) *error_string;
} pmix_api_t;

static pmix_api_t api;
static pthread_once_t api_once = PTHREAD_ONCE_INIT;
static char api_error[300];

static void load_api(void)
{
    static const char *names[] = {"libpmix.so.2", "libpmix.so"};
    void *h = NULL;
    for (int i = 0; i < 2 && !h; i++)
        h = dlopen(names[i], RTLD_NOW | RTLD_GLOBAL); /* never closed: PMIx keeps threads */
    if (!h) {
        snprintf(api_error, sizeof api_error, "cannot load the PMIx client library: %s", dlerror());
        return;
    }
    struct { void **fn; const char *name; } syms[] = {
        {(void **)&api.init, "PMIx_Init"},       {(void **)&api.finalize, "PMIx_Finalize"},
        {(void **)&api.abort, "PMIx_Abort"},     {(void **)&api.put, "PMIx_Put"},
        {(void **)&api.commit, "PMIx_Commit"},   {(void **)&api.fence, "PMIx_Fence"},
        {(void **)&api.get, "PMIx_Get"},         {(void **)&api.error_string, "PMIx_Error_string"},
    };
    for (size_t i = 0; i < sizeof syms / sizeof *syms; i++)
        if (!(*syms[i].fn = dlsym(h, syms[i].name))) {
            snprintf(api_error, sizeof api_error, "the PMIx library lacks %s", syms[i].name);
            api.init = NULL;
            return;
        }
}

typedef struct pmix_state {
    pmix_proc_t me, all; /* all: the wildcard rank of my namespace */
} pmix_state_t;

static locus_status_t fail(pmix_status_t rc, const char *what)
{
    return lc_err(LOCUS_ERR_PEER_FAILED, "PMIx: %s: %s", what, api.error_string(rc));
}

/* pmix_value_t's payload, freed by hand (PMIx_Value_destruct is 4.x only). */
static void value_free(pmix_value_t *v)
{
    if (!v)
        return;
    if (v->type == PMIX_STRING)
        free(v->data.string);
    else if (v->type == PMIX_BYTE_OBJECT)
        free(v->data.bo.bytes);
    free(v);
}

/* An unsigned integer key of proc (launchers differ in the width). */
static bool get_uint(const pmix_proc_t *proc, const char *key, uint64_t *out)
{
    pmix_value_t *v = NULL;
    if (api.get(proc, key, NULL, 0, &v) != PMIX_SUCCESS || !v)
        return false;
    bool ok = true;
    switch (v->type) {
    case PMIX_UINT8: *out = v->data.uint8; break;
    case PMIX_UINT16: *out = v->data.uint16; break;
    case PMIX_UINT32: *out = v->data.uint32; break;
    case PMIX_UINT64: *out = v->data.uint64; break;
    case PMIX_INT: ok = v->data.integer >= 0, *out = (uint64_t)v->data.integer; break;
    case PMIX_PROC_RANK: *out = v->data.rank; break;
    default: ok = false;
    }
    value_free(v);
    return ok;
}

static locus_status_t pmix_allgather(locus_boot_t *b, const void *mine, size_t len, void *all)
{
    pmix_state_t *s = b->impl;
    pmix_info_t collect;
    memset(&collect, 0, sizeof collect);
    snprintf(collect.key, sizeof collect.key, "%s", PMIX_COLLECT_DATA);
    collect.value.type = PMIX_BOOL;
    collect.value.data.flag = true;
    char key[64];
    snprintf(key, sizeof key, "locus.ag.%llu", (unsigned long long)b->seq);
    pmix_status_t rc;
    if (len) {
        pmix_value_t v;
        memset(&v, 0, sizeof v);
        v.type = PMIX_BYTE_OBJECT;
        v.data.bo.bytes = (char *)mine;
        v.data.bo.size = len;
        if ((rc = api.put(PMIX_GLOBAL, key, &v)) != PMIX_SUCCESS)
            return fail(rc, "Put");
        if ((rc = api.commit()) != PMIX_SUCCESS)
            return fail(rc, "Commit");
    }
    if ((rc = api.fence(&s->all, 1, len ? &collect : NULL, len ? 1 : 0)) != PMIX_SUCCESS)
        return fail(rc, "Fence");
    for (int r = 0; r < b->size && len; r++) {
        char *dst = (char *)all + (size_t)r * len;
        if (r == b->rank) {
            memmove(dst, mine, len);
            continue;
        }
        pmix_proc_t p = s->me;
        p.rank = (pmix_rank_t)r;
        pmix_value_t *v = NULL;
        if ((rc = api.get(&p, key, NULL, 0, &v)) != PMIX_SUCCESS || !v)
            return lc_err(LOCUS_ERR_PEER_FAILED, "PMIx: allgather #%llu: rank %d's contribution is "
                          "missing (%s): did it pass another length?", (unsigned long long)b->seq, r,
                          api.error_string(rc));
        bool ok = v->type == PMIX_BYTE_OBJECT && v->data.bo.size == len;
        size_t theirs = v->type == PMIX_BYTE_OBJECT ? v->data.bo.size : 0;
        if (ok)
            memcpy(dst, v->data.bo.bytes, len);
        value_free(v);
        if (!ok)
            return lc_err(LOCUS_ERR_INVALID, "allgather #%llu: rank %d passed %zu bytes, this rank "
                          "%zu: every process must pass the same length", (unsigned long long)b->seq,
                          r, theirs, len);
    }
    return LOCUS_OK;
}

static void pmix_abort(locus_boot_t *b, int status, const char *msg)
{
    api.abort(status, msg, NULL, 0); /* the server kills the namespace, this process too */
}

/* A process that finalized and then joins again races the others: its first
 * fence can include processes the server still counts as finalized (Open
 * MPI 4.1's mpirun answers PARTIAL SUCCESS, or not, as timing has it), so a
 * second join is refused rather than left to chance. */
static bool finalized_once;

static locus_status_t pmix_fini(locus_boot_t *b)
{
    pmix_state_t *s = b->impl;
    locus_status_t st = LOCUS_OK;
    if (s) {
        finalized_once = true;
        pmix_status_t rc = api.finalize(NULL, 0); /* drops one reference */
        if (rc != PMIX_SUCCESS)
            st = fail(rc, "Finalize");
    }
    free(s);
    b->impl = NULL;
    return st;
}

static const boot_ops_t pmix_ops = {pmix_allgather, pmix_abort, pmix_fini};

/* Local rank and size from PMIX_LOCAL_PEERS ("0,1,4": the ranks on this
 * node, ascending), for launchers that give the list but not the numbers. */
static bool local_from_peers(const pmix_state_t *s, uint64_t *lrank, uint64_t *lsize)
{
    pmix_value_t *v = NULL;
    if (api.get(&s->all, PMIX_LOCAL_PEERS, NULL, 0, &v) != PMIX_SUCCESS || !v)
        return false;
    bool found = false;
    uint64_t n = 0;
    if (v->type == PMIX_STRING && v->data.string)
        for (const char *p = v->data.string; *p; n++) {
            char *end;
            unsigned long r = strtoul(p, &end, 10);
            if (end == p)
                break;
            if (r == s->me.rank) {
                *lrank = n;
                found = true;
            }
            p = *end == ',' ? end + 1 : end;
        }
    value_free(v);
    *lsize = n;
    return found;
}

/* The launcher's node layout, when it gives all of it. */
static void layout(locus_boot_t *b, pmix_state_t *s)
{
    uint64_t lrank, lsize, node, nodes;
    bool local = (get_uint(&s->me, PMIX_LOCAL_RANK, &lrank) &&
                  get_uint(&s->all, PMIX_LOCAL_SIZE, &lsize)) ||
                 local_from_peers(s, &lrank, &lsize);
    if (!local || !get_uint(&s->me, PMIX_NODEID, &node) || !get_uint(&s->all, PMIX_NUM_NODES, &nodes) ||
        lrank >= lsize || node >= nodes || lsize > (uint64_t)b->size || nodes > (uint64_t)b->size) {
        lc_note(&b->notes, "PMIx: the launcher gave no complete node layout (PMIX_LOCAL_RANK and "
                "PMIX_LOCAL_SIZE or PMIX_LOCAL_PEERS, PMIX_NODEID, PMIX_NUM_NODES): host ids "
                "exchanged");
        return;
    }
    b->local_rank = (int)lrank;
    b->local_size = (int)lsize;
    b->node = (int)node;
    b->num_nodes = (int)nodes;
}

locus_status_t boot_pmix_open(locus_boot_t *b, const locus_boot_attr_t *attr)
{
    if (!getenv("PMIX_RANK") || !getenv("PMIX_NAMESPACE"))
        return lc_err(LOCUS_ERR_NOT_FOUND, "PMIX_RANK and PMIX_NAMESPACE are not set: not started "
                      "by a PMIx launcher");
    if (finalized_once)
        return lc_err(LOCUS_ERR_UNSUPPORTED, "PMIx: this process left the job (PMIx_Finalize); joining it "
                      "again (an OpenSHMEM program initialized again after shmem_finalize) races the other "
                      "processes' first fence under a PMIx launcher: locus run allows it");
    pthread_once(&api_once, load_api);
    if (!api.init)
        return lc_err(LOCUS_ERR_UNSUPPORTED, "PMIx launcher (PMIX_NAMESPACE=%s), but %s; install "
                      "libpmix2 or set LOCUS_BOOT", getenv("PMIX_NAMESPACE"), api_error);
    pmix_state_t *s = calloc(1, sizeof *s);
    if (!s)
        return lc_err(LOCUS_ERR_NO_MEMORY, "PMIx state");
    pmix_status_t rc = api.init(&s->me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        free(s);
        return fail(rc, "Init");
    }
    b->impl = s;
    b->ops = &pmix_ops;
    s->all = s->me;
    s->all.rank = PMIX_RANK_WILDCARD;
    uint64_t size;
    if (!get_uint(&s->all, PMIX_JOB_SIZE, &size) || size < 1 || size > INT32_MAX ||
        s->me.rank >= size)
        return lc_err(LOCUS_ERR_PEER_FAILED, "PMIx: no usable PMIX_JOB_SIZE for namespace %s",
                      s->me.nspace);
    b->rank = (int)s->me.rank;
    b->size = (int)size;
    boot_make_job(b->job, "pmix-", s->me.nspace);
    snprintf(b->source, sizeof b->source, "pmix");
    layout(b, s);
    return LOCUS_OK;
}

#else /* built without the PMIx header */

locus_status_t boot_pmix_open(locus_boot_t *b, const locus_boot_attr_t *attr)
{
    if (!getenv("PMIX_RANK") || !getenv("PMIX_NAMESPACE"))
        return lc_err(LOCUS_ERR_NOT_FOUND, "PMIX_RANK and PMIX_NAMESPACE are not set: not started "
                      "by a PMIx launcher");
    return lc_err(LOCUS_ERR_UNSUPPORTED, "PMIx launcher, but this liblocus was built without the "
                  "PMIx header (libpmix-dev); rebuild with it or set LOCUS_BOOT");
}

#endif
