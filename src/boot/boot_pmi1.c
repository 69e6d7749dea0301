/* PMI-1 over PMI_FD (MPICH's mpiexec.hydra; srun --mpi=pmi2 speaks it too):
 * the "cmd=... key=value" text protocol, one request and one reply line at
 * a time. An allgather puts this rank's blob as hex in values of at most
 * vallen_max characters (keys lb<seq>.<rank>.<chunk>, the first value
 * prefixed with the length), meets the others at barrier_in/barrier_out,
 * then gets every other rank's values. */
#include "boot/boot_internal.h"

#include "core/error.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define PMI_LINE 1024 /* MPICH's simple PMI line limit: keep every request below it */

typedef struct pmi1 {
    int fd;
    char kvs[257];
    int chunk_hex; /* hex characters per value */
    char rbuf[PMI_LINE * 4];
    size_t rlen;
} pmi1_t;

static atomic_bool pmi1_in_use; /* one PMI-1 conversation per process */

static locus_status_t write_line(pmi1_t *p, const char *line)
{
    size_t n = strlen(line);
    for (size_t off = 0; off < n;) {
        /* MSG_NOSIGNAL: a launcher that hung up must give an error, not SIGPIPE */
        ssize_t w = send(p->fd, line + off, n - off, MSG_NOSIGNAL);
        if (w < 0 && errno == ENOTSOCK)
            w = write(p->fd, line + off, n - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return lc_err_errno(LOCUS_ERR_PEER_FAILED, errno, "PMI-1: write to PMI_FD=%d", p->fd);
        off += (size_t)w;
    }
    return LOCUS_OK;
}

/* One reply line (without '\n') into out. */
static locus_status_t read_line(pmi1_t *p, char *out, size_t cap)
{
    for (;;) {
        char *nl = memchr(p->rbuf, '\n', p->rlen);
        if (nl) {
            size_t n = (size_t)(nl - p->rbuf);
            snprintf(out, cap, "%.*s", (int)n, p->rbuf);
            memmove(p->rbuf, nl + 1, p->rlen - n - 1);
            p->rlen -= n + 1;
            return LOCUS_OK;
        }
        if (p->rlen == sizeof p->rbuf)
            return lc_err(LOCUS_ERR_CORRUPT, "PMI-1: reply longer than %zu bytes", sizeof p->rbuf);
        ssize_t r = read(p->fd, p->rbuf + p->rlen, sizeof p->rbuf - p->rlen);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return lc_err(LOCUS_ERR_PEER_FAILED, "PMI-1: the launcher closed PMI_FD=%d (%s)", p->fd,
                          r ? strerror(errno) : "end of file");
        p->rlen += (size_t)r;
    }
}

/* The value of " key=" in a reply line (up to the next space), or NULL. */
static const char *field(const char *line, const char *key, char *out, size_t cap)
{
    size_t kl = strlen(key);
    for (const char *s = line; (s = strstr(s, key)); s += kl) {
        if ((s != line && s[-1] != ' ') || s[kl] != '=')
            continue;
        const char *v = s + kl + 1;
        size_t n = strcspn(v, " ");
        snprintf(out, cap, "%.*s", (int)n, v);
        return out;
    }
    return NULL;
}

/* Send a request, read the reply, check it is `expect` with rc=0 if any. */
static locus_status_t call(pmi1_t *p, const char *req, const char *expect, char *reply, size_t cap)
{
    locus_status_t st = write_line(p, req);
    if (st || (st = read_line(p, reply, cap)))
        return st;
    char cmd[64], rc[16];
    if (!field(reply, "cmd", cmd, sizeof cmd) || strcmp(cmd, expect))
        return lc_err(LOCUS_ERR_CORRUPT, "PMI-1: expected cmd=%s, got '%.200s'", expect, reply);
    if (field(reply, "rc", rc, sizeof rc) && strcmp(rc, "0"))
        return lc_err(LOCUS_ERR_PEER_FAILED, "PMI-1: %.*s failed: '%.200s'",
                      (int)strcspn(req + 4, " \n"), req + 4, reply);
    return LOCUS_OK;
}

static locus_status_t barrier(pmi1_t *p)
{
    char reply[PMI_LINE];
    return call(p, "cmd=barrier_in\n", "barrier_out", reply, sizeof reply);
}

static void to_hex(const unsigned char *in, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[in[i] >> 4];
        out[2 * i + 1] = digits[in[i] & 15];
    }
    out[2 * n] = '\0';
}

static bool from_hex(const char *in, size_t n, unsigned char *out)
{
    for (size_t i = 0; i < n; i++) {
        int v = 0;
        for (int k = 0; k < 2; k++) {
            char ch = in[2 * i + k];
            int d = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
            if (d < 0)
                return false;
            v = v * 16 + d;
        }
        out[i] = (unsigned char)v;
    }
    return true;
}

static locus_status_t put_blob(pmi1_t *p, uint64_t seq, int rank, const void *mine, size_t len)
{
    char line[2 * PMI_LINE + 320], reply[PMI_LINE], hex[PMI_LINE];
    size_t per = (size_t)p->chunk_hex / 2;
    for (size_t off = 0, k = 0; off < len || k == 0; off += per, k++) {
        size_t n = len - off < per ? len - off : per;
        to_hex((const unsigned char *)mine + off, n, hex);
        char head[24] = ""; /* the first value starts with the length: "<len>:" */
        if (k == 0)
            snprintf(head, sizeof head, "%zu:", len);
        snprintf(line, sizeof line, "cmd=put kvsname=%s key=lb%llu.%d.%zu value=%s%s\n", p->kvs,
                 (unsigned long long)seq, rank, k, head, hex);
        locus_status_t st = call(p, line, "put_result", reply, sizeof reply);
        if (st)
            return st;
    }
    return LOCUS_OK;
}

static locus_status_t get_blob(pmi1_t *p, uint64_t seq, int rank, size_t len, unsigned char *out)
{
    char line[PMI_LINE], reply[PMI_LINE + 64], val[PMI_LINE + 32];
    size_t per = (size_t)p->chunk_hex / 2;
    for (size_t off = 0, k = 0; off < len || k == 0; off += per, k++) {
        snprintf(line, sizeof line, "cmd=get kvsname=%s key=lb%llu.%d.%zu\n", p->kvs,
                 (unsigned long long)seq, rank, k);
        locus_status_t st = call(p, line, "get_result", reply, sizeof reply);
        if (st == LOCUS_ERR_PEER_FAILED)
            return lc_err(st, "allgather #%llu: rank %d's contribution is missing (did it pass "
                          "another length, or leave?)", (unsigned long long)seq, rank);
        if (st || !field(reply, "value", val, sizeof val))
            return st ? st : lc_err(LOCUS_ERR_CORRUPT, "PMI-1: get without value: '%.200s'", reply);
        const char *hex = val;
        if (k == 0) {
            char *colon = strchr(val, ':');
            unsigned long long theirs = strtoull(val, NULL, 10);
            if (!colon || theirs != len)
                return lc_err(LOCUS_ERR_INVALID, "allgather #%llu: rank %d passed %llu bytes, this "
                              "rank %zu: every process must pass the same length",
                              (unsigned long long)seq, rank, theirs, len);
            hex = colon + 1;
        }
        size_t n = len - off < per ? len - off : per;
        if (strlen(hex) != 2 * n || !from_hex(hex, n, out + off))
            return lc_err(LOCUS_ERR_CORRUPT, "PMI-1: rank %d's value %zu is malformed", rank, k);
    }
    return LOCUS_OK;
}

static locus_status_t pmi1_allgather(locus_boot_t *b, const void *mine, size_t len, void *all)
{
    pmi1_t *p = b->impl;
    if (len == 0)
        return barrier(p);
    locus_status_t st = put_blob(p, b->seq, b->rank, mine, len);
    if (st || (st = barrier(p)))
        return st;
    for (int r = 0; r < b->size && !st; r++) {
        if (r == b->rank)
            memmove((char *)all + (size_t)r * len, mine, len);
        else
            st = get_blob(p, b->seq, r, len, (unsigned char *)all + (size_t)r * len);
    }
    return st;
}

static void pmi1_abort(locus_boot_t *b, int status, const char *msg)
{
    pmi1_t *p = b->impl;
    char line[64];
    snprintf(line, sizeof line, "cmd=abort exitcode=%d\n", status);
    if (write_line(p, line) == LOCUS_OK)
        sleep(5); /* hydra kills the job; if it does not, the caller exits */
}

/* hydra closes PMI_FD after a finalize: this process cannot join again */
static atomic_bool pmi1_finalized;

static locus_status_t pmi1_fini(locus_boot_t *b)
{
    pmi1_t *p = b->impl;
    locus_status_t st = LOCUS_OK;
    if (p && p->fd >= 0) {
        char reply[PMI_LINE];
        st = call(p, "cmd=finalize\n", "finalize_ack", reply, sizeof reply);
        atomic_store(&pmi1_finalized, true);
        /* PMI_FD belongs to the launcher's environment: left open, so its
         * number is never reused for something else a later init would
         * write to */
    }
    if (p)
        atomic_store(&pmi1_in_use, false);
    free(p);
    b->impl = NULL;
    return st;
}

static const boot_ops_t pmi1_ops = {pmi1_allgather, pmi1_abort, pmi1_fini};

static locus_status_t handshake(pmi1_t *p, locus_boot_t *b)
{
    char reply[PMI_LINE], v[300];
    locus_status_t st = call(p, "cmd=init pmi_version=1 pmi_subversion=1\n", "response_to_init",
                             reply, sizeof reply);
    if (st || (st = call(p, "cmd=get_maxes\n", "maxes", reply, sizeof reply)))
        return st;
    int vallen = field(reply, "vallen_max", v, sizeof v) ? atoi(v) : 256;
    if ((st = call(p, "cmd=get_my_kvsname\n", "my_kvsname", reply, sizeof reply)))
        return st;
    if (!field(reply, "kvsname", p->kvs, sizeof p->kvs) || !*p->kvs)
        return lc_err(LOCUS_ERR_CORRUPT, "PMI-1: no kvsname in '%.200s'", reply);
    /* a put line: "cmd=put kvsname=K key=lbSEQ.RANK.CHUNK value=LEN:HEX\n" */
    int room = PMI_LINE - 1 - (int)strlen(p->kvs) - 96;
    p->chunk_hex = (vallen - 24 < room ? vallen - 24 : room) & ~1;
    if (p->chunk_hex < 32)
        return lc_err(LOCUS_ERR_UNSUPPORTED, "PMI-1: values of %d characters (kvsname '%s'): too "
                      "small to exchange data", vallen, p->kvs);
    boot_make_job(b->job, "", p->kvs);
    return LOCUS_OK;
}

locus_status_t boot_pmi1_open(locus_boot_t *b, const locus_boot_attr_t *attr)
{
    if (!getenv("PMI_FD") || !getenv("PMI_RANK") || !getenv("PMI_SIZE"))
        return lc_err(LOCUS_ERR_NOT_FOUND, "PMI_FD, PMI_RANK and PMI_SIZE are not all set: not "
                      "started by a PMI-1 launcher (mpiexec.hydra)");
    int fd, rank, size;
    locus_status_t st;
    if ((st = boot_env_int("PMI_FD", 0, 1 << 20, &fd)) ||
        (st = boot_env_int("PMI_SIZE", 1, 1 << 24, &size)) ||
        (st = boot_env_int("PMI_RANK", 0, size - 1, &rank)))
        return st;
    if (atomic_load(&pmi1_finalized))
        return lc_err(LOCUS_ERR_UNSUPPORTED, "PMI-1: this process finalized its PMI-1 connection and "
                      "the launcher closed PMI_FD=%d: joining the job again (an OpenSHMEM program "
                      "initialized again after shmem_finalize) is not possible under mpiexec.hydra; "
                      "locus run or mpirun (PMIx) allow it", fd);
    if (atomic_exchange(&pmi1_in_use, true))
        return lc_err(LOCUS_ERR_BUSY, "PMI-1: another locus_boot handle of this process already "
                      "talks over PMI_FD=%d (one per process)", fd);
    pmi1_t *p = calloc(1, sizeof *p);
    if (!p) {
        atomic_store(&pmi1_in_use, false);
        return lc_err(LOCUS_ERR_NO_MEMORY, "PMI-1 state");
    }
    p->fd = fd;
    b->impl = p;
    b->ops = &pmi1_ops;
    b->rank = rank;
    b->size = size;
    snprintf(b->source, sizeof b->source, "pmi1");
    if ((st = handshake(p, b)))
        p->fd = -1; /* no finalize on a conversation that never started */
    return st;
}
