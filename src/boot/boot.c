/* locus boot: the public API, LOCUS_BOOT parsing, which source joins the
 * job, the singleton, and the shared helpers (job ids, environment). */
#include "boot/boot_internal.h"
#include "boot/boot_wire.h"

#include "core/config.h"
#include "core/error.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char BOOT_ACCEPTED[] = "auto, pmix, pmi1, singleton or tcp:HOST:PORT (PORT in [1, 65535])";

/* ---------- attributes and LOCUS_BOOT ---------- */

locus_status_t locus_boot_parse(const char *text, locus_boot_attr_t *attr)
{
    static const char *names[] = {"auto", "pmix", "pmi1", "tcp", "singleton"};
    if (!text)
        text = "";
    for (int k = 0; k < 5; k++) {
        if (k == LOCUS_BOOT_TCP || strcmp(text, names[k]))
            continue;
        if (attr) {
            attr->kind = (locus_boot_kind_t)k;
            attr->address[0] = '\0';
        }
        return LOCUS_OK;
    }
    char host[LOCUS_BOOT_ADDRESS_MAX], port[8];
    if (strncmp(text, "tcp:", 4) || strlen(text + 4) >= LOCUS_BOOT_ADDRESS_MAX ||
        wire_parse_address(text + 4, false, host, sizeof host, port, sizeof port))
        return lc_err(LOCUS_ERR_INVALID, "'%s': expected %s", text, BOOT_ACCEPTED);
    if (attr) {
        attr->kind = LOCUS_BOOT_TCP;
        snprintf(attr->address, sizeof attr->address, "%s", text + 4);
    }
    return LOCUS_OK;
}

static locus_status_t validate_boot(const char *value) { return locus_boot_parse(value, NULL); }
LC_TUN_VALIDATOR(BOOT, validate_boot)

static locus_status_t bind_boot(const char *value, void *attr)
{
    return locus_boot_parse(value, attr);
}

static const lc_tun_bind_t boot_binds[] = {
    LC_BIND_FN(BOOT, bind_boot),
    LC_BIND(BOOT_TIMEOUT, locus_boot_attr_t, timeout),
};

void locus_boot_attr_init(locus_boot_attr_t *attr)
{
    memset(attr, 0, sizeof *attr);
    attr->rank = attr->size = -1;
    /* the table's defaults always parse (tests/unit/test_core.cc checks) */
    (void)lc_tun_load(boot_binds, sizeof boot_binds / sizeof *boot_binds, attr, sizeof *attr,
                      LC_TUN_DEFAULTS);
}

locus_status_t locus_boot_attr_from_env(locus_boot_attr_t *attr)
{
    return lc_tun_load(boot_binds, sizeof boot_binds / sizeof *boot_binds, attr, sizeof *attr,
                       LC_TUN_ENV);
}

/* ---------- shared helpers ---------- */

static bool job_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '.' || c == '-';
}

/* LOCUS_JOB (set by locus run, reported as the job id, naming shm segments). */
static locus_status_t validate_job(const char *v)
{
    size_t n = v ? strlen(v) : 0;
    if (n > BOOT_JOB_MAX)
        return lc_err(LOCUS_ERR_INVALID, "'%s': expected 1-48 characters from [A-Za-z0-9_.-]", v);
    for (size_t i = 0; i < n; i++)
        if (!job_char(v[i]))
            return lc_err(LOCUS_ERR_INVALID, "'%s': character '%c' not allowed; expected 1-48 "
                          "characters from [A-Za-z0-9_.-]", v, v[i]);
    return LOCUS_OK; /* empty: unset, derived from the launcher */
}
LC_TUN_VALIDATOR(JOB, validate_job)

void boot_make_job(char out[BOOT_JOB_MAX + 1], const char *prefix, const char *raw)
{
    char whole[512];
    snprintf(whole, sizeof whole, "%s%s", prefix, raw);
    size_t n = strlen(whole);
    for (size_t i = 0; i < n; i++)
        if (!job_char(whole[i]))
            whole[i] = '_';
    if (n <= BOOT_JOB_MAX) {
        memcpy(out, whole, n + 1);
        return;
    }
    uint64_t hash = 1469598103934665603ull; /* FNV-1a of the whole text keeps long ids apart */
    for (size_t i = 0; i < n; i++)
        hash = (hash ^ (unsigned char)whole[i]) * 1099511628211ull;
    snprintf(out, BOOT_JOB_MAX + 1, "%.31s-%016llx", whole, (unsigned long long)hash);
}

void boot_fresh_job(char out[BOOT_JOB_MAX + 1], const char *prefix)
{
    uint32_t rnd = 0;
    if (getrandom(&rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
        rnd = (uint32_t)time(NULL) ^ (uint32_t)clock();
    char raw[32];
    snprintf(raw, sizeof raw, "%d-%08x", (int)getpid(), rnd);
    boot_make_job(out, prefix, raw);
}

locus_status_t boot_env_int(const char *name, long lo, long hi, int *out)
{
    const char *v = getenv(name);
    if (!v)
        return lc_err(LOCUS_ERR_NOT_FOUND, "%s is not set", name);
    int64_t x;
    if (lc_parse_int(v, lo, hi, &x)) {
        char msg[300];
        snprintf(msg, sizeof msg, "%s", locus_last_error());
        return lc_err(LOCUS_ERR_INVALID, "%s=%s", name, msg);
    }
    *out = (int)x;
    return LOCUS_OK;
}

void boot_describe_exit(int ws, char *buf, size_t len)
{
    if (WIFEXITED(ws))
        snprintf(buf, len, "exited with status %d", WEXITSTATUS(ws));
    else if (WIFSIGNALED(ws))
        snprintf(buf, len, "was killed by signal %d (%s)", WTERMSIG(ws), strsignal(WTERMSIG(ws)));
    else
        snprintf(buf, len, "ended (wait status %#x)", ws);
}

/* ---------- the singleton ---------- */

static locus_status_t single_allgather(locus_boot_t *b, const void *mine, size_t len, void *all)
{
    if (len)
        memmove(all, mine, len);
    return LOCUS_OK;
}

static void single_abort(locus_boot_t *b, int status, const char *msg) {}
static locus_status_t single_fini(locus_boot_t *b) { return LOCUS_OK; }

static const boot_ops_t single_ops = {single_allgather, single_abort, single_fini};

static locus_status_t single_open(locus_boot_t *b)
{
    const char *job = NULL;
    if (lc_tun_is_set(LC_TUN_JOB)) {
        locus_status_t st = lc_tun_string(LC_TUN_JOB, &job);
        if (st)
            return st;
    }
    if (job && *job)
        snprintf(b->job, sizeof b->job, "%s", job);
    else
        boot_fresh_job(b->job, "solo-");
    snprintf(b->source, sizeof b->source, "singleton");
    b->ops = &single_ops;
    b->rank = b->local_rank = b->node = 0;
    b->size = b->local_size = b->num_nodes = 1;
    return LOCUS_OK;
}

/* ---------- choosing the source ---------- */

/* auto: the first launcher whose environment is there, else a singleton. */
static locus_status_t open_auto(locus_boot_t *b, const locus_boot_attr_t *attr)
{
    locus_status_t (*const order[])(locus_boot_t *, const locus_boot_attr_t *) = {
        boot_pmix_open, boot_pmi1_open, boot_slurm_open};
    for (size_t i = 0; i < sizeof order / sizeof *order; i++) {
        locus_status_t st = order[i](b, attr);
        if (st != LOCUS_ERR_NOT_FOUND)
            return st;
    }
    int64_t size = 1;
    if (lc_tun_is_set(LC_TUN_SIZE)) {
        locus_status_t st = lc_tun_int(LC_TUN_SIZE, &size);
        if (st)
            return st;
    }
    if (size > 1)
        return lc_err(LOCUS_ERR_INVALID,
                      "LOCUS_SIZE=%lld but no launcher to join: no PMIx, PMI-1 or Slurm environment "
                      "and LOCUS_BOOT is not tcp:HOST:PORT; start the processes with `locus run -n N`, "
                      "mpirun or mpiexec, or set LOCUS_BOOT=tcp:HOST:PORT (rank 0 serves it)",
                      (long long)size);
    return single_open(b);
}

static locus_status_t open_source(locus_boot_t *b, const locus_boot_attr_t *attr)
{
    static const char *names[] = {"auto", "pmix", "pmi1", "tcp", "singleton"};
    locus_status_t st;
    switch (attr->kind) {
    case LOCUS_BOOT_AUTO: return open_auto(b, attr);
    case LOCUS_BOOT_PMIX: st = boot_pmix_open(b, attr); break;
    case LOCUS_BOOT_PMI1: st = boot_pmi1_open(b, attr); break;
    case LOCUS_BOOT_TCP: st = boot_tcp_open(b, attr); break;
    case LOCUS_BOOT_SINGLETON: return single_open(b);
    default:
        return lc_err(LOCUS_ERR_INVALID, "boot kind %d: expected %s", (int)attr->kind,
                      BOOT_ACCEPTED);
    }
    if (st == LOCUS_ERR_NOT_FOUND) { /* asked for explicitly: say it is not there */
        char msg[400];
        snprintf(msg, sizeof msg, "%s", locus_last_error());
        return lc_err(LOCUS_ERR_INVALID, "LOCUS_BOOT=%s: %s", names[attr->kind], msg);
    }
    return st;
}

locus_status_t locus_boot_init(const locus_boot_attr_t *attr, locus_boot_t **out)
{
    if (!out)
        return lc_err(LOCUS_ERR_INVALID, "out NULL: expected a locus_boot_t **");
    locus_boot_attr_t a;
    if (!attr) {
        locus_boot_attr_init(&a);
        locus_status_t st = locus_boot_attr_from_env(&a);
        if (st)
            return st;
        attr = &a;
    }
    if (!(attr->timeout > 0))
        return lc_err(LOCUS_ERR_INVALID, "timeout %g s: expected > 0", attr->timeout);
    locus_boot_t *b = calloc(1, sizeof *b);
    if (!b)
        return lc_err(LOCUS_ERR_NO_MEMORY, "boot handle");
    pthread_mutex_init(&b->mu, NULL);
    b->local_rank = b->local_size = b->node = b->num_nodes = -1;
    locus_status_t st = open_source(b, attr);
    if (!st && b->local_rank < 0) {
        pthread_mutex_lock(&b->mu);
        st = boot_node_map(b);
        pthread_mutex_unlock(&b->mu);
    }
    if (st) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s", locus_last_error());
        if (b->ops)
            b->ops->fini(b);
        lc_notes_free(&b->notes);
        pthread_mutex_destroy(&b->mu);
        free(b);
        return lc_err(st, "%s", msg);
    }
    *out = b;
    return LOCUS_OK;
}

locus_status_t locus_boot_fini(locus_boot_t *b)
{
    if (!b)
        return LOCUS_OK;
    locus_status_t st = b->ops->fini(b);
    lc_notes_free(&b->notes);
    pthread_mutex_destroy(&b->mu);
    free(b);
    return st;
}

int locus_boot_rank(const locus_boot_t *b) { return b ? b->rank : -1; }
int locus_boot_size(const locus_boot_t *b) { return b ? b->size : 0; }
int locus_boot_local_rank(const locus_boot_t *b) { return b ? b->local_rank : -1; }
int locus_boot_local_size(const locus_boot_t *b) { return b ? b->local_size : 0; }
int locus_boot_node(const locus_boot_t *b) { return b ? b->node : -1; }
int locus_boot_num_nodes(const locus_boot_t *b) { return b ? b->num_nodes : 0; }
const char *locus_boot_source(const locus_boot_t *b) { return b ? b->source : ""; }
const char *locus_boot_job(const locus_boot_t *b) { return b ? b->job : ""; }
const char *locus_boot_notes(const locus_boot_t *b) { return b ? lc_notes_text(&b->notes) : ""; }

locus_status_t locus_boot_allgather(locus_boot_t *b, const void *mine, size_t len, void *all)
{
    if (!b)
        return lc_err(LOCUS_ERR_INVALID, "boot handle NULL: expected one from locus_boot_init");
    if (len && (!mine || !all))
        return lc_err(LOCUS_ERR_INVALID, "allgather of %zu bytes with mine=%p all=%p: expected "
                      "both buffers (all of size*len bytes)", len, mine, all);
    if (len && len > SIZE_MAX / (size_t)b->size)
        return lc_err(LOCUS_ERR_RANGE, "allgather of %zu bytes x %d processes overflows", len,
                      b->size);
    pthread_mutex_lock(&b->mu);
    locus_status_t st = b->ops->allgather(b, mine, len, all);
    b->seq++;
    pthread_mutex_unlock(&b->mu);
    return st;
}

locus_status_t locus_boot_barrier(locus_boot_t *b) { return locus_boot_allgather(b, NULL, 0, NULL); }

void locus_boot_abort(locus_boot_t *b, int status, const char *msg)
{
    if (b) /* not under b->mu: another thread may sit in a collective */
        b->ops->abort(b, status, msg ? msg : "");
    _exit(status);
}
