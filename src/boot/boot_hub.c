/* The tcp rendezvous hub: one thread that accepts every rank of a job,
 * answers HELLO with WELCOME once all arrived, concatenates GATHERs, and
 * turns every death, disconnect, early leave or abort into a FAIL (or ABORT)
 * sent to everyone still connected, so no collective hangs. Served by a
 * launcher (locus run: it also reports exits) or by rank 0's process. */
#include "boot/boot_internal.h"
#include "boot/boot_wire.h"

#include "core/clock.h"
#include "core/error.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define LOST_GRACE_S 0.5 /* launcher mode: wait this long for the exit report of a closed rank */

typedef enum { P_ABSENT, P_ARRIVED, P_LOST, P_BYE, P_GONE } peer_state_t;

typedef struct hub_conn {
    int fd;
    int rank; /* -1 until a valid HELLO */
    wire_hdr_t hdr;
    size_t got; /* bytes of the current message read: header, then payload */
    char *buf;
    size_t cap;
} hub_conn_t;

typedef struct hub_peer {
    hub_conn_t *conn;
    peer_state_t st;
    double lost_at;
    bool gave; /* contributed to the current collective */
} hub_peer_t;

struct locus_boot_hub {
    int lfd, wake[2];
    pthread_t thr;
    bool thr_started;
    int size;
    char job[BOOT_JOB_MAX + 1], launcher[16], addr[LOCUS_BOOT_ADDRESS_MAX + 8];
    double timeout, t0; /* t0: the first arrival (0: nobody yet) */
    bool accept_broken;
    hub_conn_t **conns;
    int nconn, capconn;
    hub_peer_t *peers;
    int arrived;
    /* the collective in progress */
    uint32_t seq;
    int gave, first_rank;
    uint64_t glen;
    char *gbuf;
    bool failed;
    uint32_t fail_code; /* -locus_status_t */
    char fail[WIRE_TEXT_MAX];
    /* shared with the launcher / rank 0's fini */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool aborted, all_left, job_failed;
    int ab_rank, ab_status;
    char ab_msg[WIRE_TEXT_MAX];
};

typedef struct { int32_t rank, ws; } hub_report_t; /* rank -1: stop */

static void hub_fail(locus_boot_hub_t *h, const char *fmt, ...) LOCUS_PRINTF(2, 3);
static void hub_fail_code(locus_boot_hub_t *h, uint32_t code, const char *fmt, ...)
    LOCUS_PRINTF(3, 4);

static void conn_close(locus_boot_hub_t *h, hub_conn_t *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    if (c->rank >= 0 && h->peers[c->rank].conn == c)
        h->peers[c->rank].conn = NULL;
}

static bool send_to(locus_boot_hub_t *h, int rank, uint32_t type, uint32_t arg, const void *p,
                    size_t len)
{
    hub_conn_t *c = h->peers[rank].conn;
    if (!c || c->fd < 0)
        return false;
    if (wire_send(c->fd, type, arg, p, len, h->timeout))
        return true;
    int e = errno;
    conn_close(h, c);
    if (h->peers[rank].st == P_ARRIVED)
        h->peers[rank].st = P_GONE;
    hub_fail(h, "rank %d stopped taking messages from the hub (%s)", rank, strerror(e));
    return false;
}


static void reset_collective(locus_boot_hub_t *h)
{
    free(h->gbuf);
    h->gbuf = NULL;
    h->gave = 0;
    for (int r = 0; r < h->size; r++)
        h->peers[r].gave = false;
}

/* The job failed: tell everyone connected, once (the first cause wins). The
 * FAIL's arg is the status the clients return (timeout or peer failed). */
static void vfail(locus_boot_hub_t *h, uint32_t code, const char *fmt, va_list ap)
{
    if (h->failed)
        return;
    vsnprintf(h->fail, sizeof h->fail, fmt, ap);
    h->failed = true;
    h->fail_code = code;
    reset_collective(h);
    /* rank 0 last: a rank-0 hub lives in its process, which may end once told */
    for (int r = h->size - 1; r >= 0; r--)
        send_to(h, r, W_FAIL, code, h->fail, strlen(h->fail) + 1);
}

static void hub_fail(locus_boot_hub_t *h, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(h, (uint32_t)-LOCUS_ERR_PEER_FAILED, fmt, ap);
    va_end(ap);
}

static void hub_fail_code(locus_boot_hub_t *h, uint32_t code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(h, code, fmt, ap);
    va_end(ap);
}

static void reject(hub_conn_t *c, const char *fmt, ...) LOCUS_PRINTF(2, 3);
static void reject(hub_conn_t *c, const char *fmt, ...)
{
    char msg[WIRE_TEXT_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    wire_send(c->fd, W_REJECT, 0, msg, strlen(msg) + 1, 1.0);
    close(c->fd);
    c->fd = -1;
}

static void welcome_all(locus_boot_hub_t *h)
{
    char w[BOOT_JOB_MAX + 1 + sizeof h->launcher];
    size_t jl = strlen(h->job) + 1, ll = strlen(h->launcher) + 1;
    memcpy(w, h->job, jl);
    memcpy(w + jl, h->launcher, ll);
    for (int r = 0; r < h->size; r++)
        send_to(h, r, W_WELCOME, 0, w, jl + ll);
}

static void on_hello(locus_boot_hub_t *h, hub_conn_t *c)
{
    wire_hello_t m;
    if (c->hdr.len != sizeof m) {
        reject(c, "not a locus boot client (bad hello)");
        return;
    }
    memcpy(&m, c->buf, sizeof m);
    hub_peer_t *p = m.rank >= 0 && m.rank < h->size ? &h->peers[m.rank] : NULL;
    if (m.magic != WIRE_MAGIC || m.version != WIRE_VERSION)
        reject(c, "hello version %u, magic %#x: expected a locus boot client of version %u",
               m.version, m.magic, WIRE_VERSION);
    else if (m.size != h->size)
        reject(c, "%s serves a job of %d processes; this process says size %d "
               "(another job on this port? LOCUS_SIZE?)", h->addr, h->size, (int)m.size);
    else if (!p)
        reject(c, "rank %d: expected 0..%d", (int)m.rank, h->size - 1);
    else if (p->st != P_ABSENT)
        reject(c, "rank %d already joined the job at %s (two processes with one rank, or "
               "another job on this port?)", (int)m.rank, h->addr);
    else if (h->failed) { /* late: say why the job is over */
        wire_send(c->fd, W_FAIL, h->fail_code, h->fail, strlen(h->fail) + 1, 1.0);
        close(c->fd);
        c->fd = -1;
    }
    if (c->fd < 0)
        return;
    c->rank = m.rank;
    p->conn = c;
    p->st = P_ARRIVED;
    if (!h->arrived) /* every rank must come within the timeout of the first */
        h->t0 = lc_now_s();
    if (++h->arrived == h->size)
        welcome_all(h);
}

static void finish_collective(locus_boot_hub_t *h)
{
    for (int r = h->size - 1; r >= 0; r--) /* rank 0 last, as in vfail */
        send_to(h, r, W_GATHERED, h->seq, h->gbuf, h->glen * (uint64_t)h->size);
    reset_collective(h);
    h->seq++;
}

static void on_gather(locus_boot_hub_t *h, int r, hub_conn_t *c)
{
    if (h->failed) {
        send_to(h, r, W_FAIL, h->fail_code, h->fail, strlen(h->fail) + 1);
        return;
    }
    for (int q = 0; q < h->size; q++)
        if (h->peers[q].st == P_BYE) {
            hub_fail(h, "rank %d left the job (locus_boot_fini) but rank %d entered collective #%u",
                     q, r, h->seq);
            return;
        }
    if (c->hdr.arg != h->seq || h->peers[r].gave) {
        hub_fail(h, "rank %d sent collective #%u while the job is at #%u", r, c->hdr.arg, h->seq);
        return;
    }
    if (h->gave == 0) {
        h->glen = c->hdr.len;
        h->first_rank = r;
        if (h->glen && !(h->gbuf = malloc(h->glen * (uint64_t)h->size))) {
            hub_fail(h, "hub: out of memory for %d x %llu bytes", h->size,
                     (unsigned long long)h->glen);
            return;
        }
    } else if (c->hdr.len != h->glen) {
        hub_fail(h, "allgather #%u: rank %d passed %llu bytes, rank %d %llu bytes: every process "
                 "must pass the same length", h->seq, h->first_rank, (unsigned long long)h->glen,
                 r, (unsigned long long)c->hdr.len);
        return;
    }
    if (h->glen)
        memcpy(h->gbuf + (uint64_t)r * h->glen, c->buf, h->glen);
    h->peers[r].gave = true;
    if (++h->gave == h->size)
        finish_collective(h);
}

static void on_abort(locus_boot_hub_t *h, int r, hub_conn_t *c)
{
    char msg[WIRE_TEXT_MAX];
    size_t n = c->hdr.len < sizeof msg ? c->hdr.len : sizeof msg - 1;
    memcpy(msg, c->buf, n);
    msg[n] = '\0';
    pthread_mutex_lock(&h->mu);
    if (!h->aborted) {
        h->aborted = true;
        h->ab_rank = r;
        h->ab_status = (int)c->hdr.arg;
        snprintf(h->ab_msg, sizeof h->ab_msg, "%s", msg);
    }
    pthread_mutex_unlock(&h->mu);
    /* Everyone exits: ABORT before any FAIL (a process woken by a FAIL could
     * end otherwise, and with it a rank-0 hub), highest rank first so that
     * rank 0's process, which hosts a rank-0 hub, is told last. */
    for (int q = h->size - 1; q >= 0; q--)
        send_to(h, q, W_ABORT, c->hdr.arg, msg, strlen(msg) + 1);
    hub_fail(h, "rank %d aborted the job (status %d): %s", r, (int)c->hdr.arg, msg);
}

static void on_message(locus_boot_hub_t *h, hub_conn_t *c)
{
    int r = c->rank;
    if (r < 0) {
        if (c->hdr.type == W_HELLO)
            on_hello(h, c);
        else
            reject(c, "expected a hello first");
        return;
    }
    switch (c->hdr.type) {
    case W_GATHER: on_gather(h, r, c); break;
    case W_ABORT: on_abort(h, r, c); break;
    case W_BYE:
        h->peers[r].st = P_BYE;
        conn_close(h, c);
        if (h->gave > 0 && !h->failed)
            hub_fail(h, "rank %d left the job (locus_boot_fini) during collective #%u", r, h->seq);
        break;
    default: hub_fail(h, "rank %d sent an unknown message (type %u)", r, c->hdr.type);
    }
}

/* A rank's connection closed without BYE. */
static void on_closed(locus_boot_hub_t *h, hub_conn_t *c)
{
    int r = c->rank;
    conn_close(h, c);
    if (r < 0 || h->peers[r].st != P_ARRIVED)
        return;
    if (h->launcher[0]) { /* the launcher's exit report says more: wait for it briefly */
        h->peers[r].st = P_LOST;
        h->peers[r].lost_at = lc_now_s();
        return;
    }
    h->peers[r].st = P_GONE;
    hub_fail(h, "rank %d disconnected from the rendezvous hub without locus_boot_fini "
             "(it exited or was killed)", r);
}

/* Read what is there; handle every complete message. false: closed. */
static bool conn_read(locus_boot_hub_t *h, hub_conn_t *c)
{
    while (c->fd >= 0) {
        size_t hs = sizeof c->hdr;
        char *dst;
        size_t want;
        if (c->got < hs) {
            dst = (char *)&c->hdr + c->got;
            want = hs - c->got;
        } else {
            dst = c->buf + (c->got - hs);
            want = c->hdr.len - (c->got - hs);
        }
        ssize_t n = want ? read(c->fd, dst, want) : 0;
        if (want && n < 0 && (errno == EAGAIN || errno == EINTR))
            return true;
        if (want && n <= 0)
            return false;
        c->got += (size_t)n;
        if (c->got == hs) {
            if (c->hdr.len > WIRE_MAX_PAYLOAD || (c->rank < 0 && c->hdr.len > 4096))
                return false;
            if (c->hdr.len > c->cap) {
                char *nb = realloc(c->buf, c->hdr.len);
                if (!nb)
                    return false;
                c->buf = nb;
                c->cap = c->hdr.len;
            }
        }
        if (c->got >= hs && c->got - hs == c->hdr.len) {
            c->got = 0;
            on_message(h, c);
        }
    }
    return true;
}

static void on_report(locus_boot_hub_t *h, hub_report_t rep)
{
    if (rep.rank < 0 || rep.rank >= h->size)
        return;
    hub_peer_t *p = &h->peers[rep.rank];
    /* a BYE sent just before the exit may still wait in the socket */
    if (p->conn && !conn_read(h, p->conn))
        on_closed(h, p->conn);
    if (p->st == P_BYE || p->st == P_GONE)
        return;
    char how[96];
    boot_describe_exit(rep.ws, how, sizeof how);
    bool before = p->st == P_ABSENT;
    p->st = P_GONE;
    if (p->conn)
        conn_close(h, p->conn);
    hub_fail(h, "rank %d %s%s", rep.rank, how, before ? " before joining the job" : "");
}

static void check_timers(locus_boot_hub_t *h)
{
    double now = lc_now_s();
    for (int r = 0; r < h->size; r++)
        if (h->peers[r].st == P_LOST && now - h->peers[r].lost_at >= LOST_GRACE_S) {
            h->peers[r].st = P_GONE;
            hub_fail(h, "rank %d closed its connection to the hub without locus_boot_fini", r);
        }
    if (h->failed || h->arrived == h->size || !h->arrived || now - h->t0 < h->timeout)
        return;
    char missing[200] = "";
    size_t n = 0;
    int shown = 0;
    for (int r = 0; r < h->size && n < sizeof missing - 16; r++)
        if (h->peers[r].st == P_ABSENT && shown++ < 8)
            n += (size_t)snprintf(missing + n, sizeof missing - n, "%s%d", n ? ", " : "", r);
    hub_fail_code(h, (uint32_t)-LOCUS_ERR_TIMEOUT,
             "%s: %d of %d ranks arrived within %g s (LOCUS_BOOT_TIMEOUT); missing: %s%s",
             h->addr, h->arrived, h->size, h->timeout, missing,
             h->size - h->arrived > 8 ? ", ..." : "");
}

/* Everyone left (BYE or gone); after a failure, absent ranks count as gone. */
static bool all_left(const locus_boot_hub_t *h)
{
    for (int r = 0; r < h->size; r++) {
        peer_state_t s = h->peers[r].st;
        if (s != P_BYE && s != P_GONE && !(h->failed && s == P_ABSENT))
            return false;
    }
    return true;
}

static void accept_all(locus_boot_hub_t *h)
{
    for (;;) {
        int fd = accept4(h->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0 && (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)) {
            /* the listening socket stays readable: stop polling it, say why */
            h->accept_broken = true;
            hub_fail(h, "the rendezvous hub at %s cannot take more connections (%s) after %d of "
                     "%d ranks: raise the open-file limit (ulimit -n) of the process serving it",
                     h->addr, strerror(errno), h->arrived, h->size);
        }
        if (fd < 0)
            return;
        if (h->nconn == h->capconn) {
            int cap = h->capconn ? 2 * h->capconn : 16;
            hub_conn_t **nc = realloc(h->conns, sizeof *nc * (size_t)cap);
            if (nc) {
                h->conns = nc;
                h->capconn = cap;
            }
        }
        hub_conn_t *c = h->nconn < h->capconn ? calloc(1, sizeof *c) : NULL;
        if (!c) { /* the client retries until its timeout */
            close(fd);
            return;
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        c->fd = fd;
        c->rank = -1;
        h->conns[h->nconn++] = c;
    }
}

/* Drop closed connections from the list. */
static void sweep(locus_boot_hub_t *h)
{
    int k = 0;
    for (int i = 0; i < h->nconn; i++) {
        if (h->conns[i]->fd >= 0) {
            h->conns[k++] = h->conns[i];
        } else {
            free(h->conns[i]->buf);
            free(h->conns[i]);
        }
    }
    h->nconn = k;
}

static int poll_ms(const locus_boot_hub_t *h)
{
    double now = lc_now_s(), next = 1e30;
    if (!h->failed && h->arrived && h->arrived < h->size)
        next = h->t0 + h->timeout;
    for (int r = 0; r < h->size; r++)
        if (h->peers[r].st == P_LOST && h->peers[r].lost_at + LOST_GRACE_S < next)
            next = h->peers[r].lost_at + LOST_GRACE_S;
    if (next > 1e29)
        return -1;
    return next <= now ? 0 : (int)((next - now) * 1e3) + 1;
}

/* Returns false when asked to stop. */
static bool drain_wake(locus_boot_hub_t *h)
{
    hub_report_t rep;
    while (read(h->wake[0], &rep, sizeof rep) == (ssize_t)sizeof rep) {
        if (rep.rank == -1)
            return false;
        on_report(h, rep);
    }
    return true;
}

static void *hub_main(void *arg)
{
    locus_boot_hub_t *h = arg;
    struct pollfd *pf = NULL;
    bool run = true;
    while (run) {
        struct pollfd *np = realloc(pf, sizeof *pf * (size_t)(h->nconn + 2));
        if (!np)
            break;
        pf = np;
        pf[0] = (struct pollfd){h->wake[0], POLLIN, 0};
        pf[1] = (struct pollfd){h->accept_broken ? -1 : h->lfd, POLLIN, 0};
        int n = h->nconn;
        for (int i = 0; i < n; i++)
            pf[i + 2] = (struct pollfd){h->conns[i]->fd, POLLIN, 0};
        if (poll(pf, (nfds_t)n + 2, poll_ms(h)) < 0 && errno != EINTR)
            break;
        if (pf[0].revents)
            run = drain_wake(h);
        for (int i = 0; i < n; i++)
            if (pf[i + 2].revents && h->conns[i]->fd >= 0 && !conn_read(h, h->conns[i]))
                on_closed(h, h->conns[i]);
        if (pf[1].revents)
            accept_all(h);
        check_timers(h);
        sweep(h);
        pthread_mutex_lock(&h->mu);
        h->job_failed = h->failed;
        if (!h->all_left && all_left(h)) {
            h->all_left = true;
            pthread_cond_broadcast(&h->cv);
        }
        pthread_mutex_unlock(&h->mu);
    }
    free(pf);
    return NULL;
}

/* ---------- creation and the launcher's side ---------- */

static locus_status_t hub_open(const char *address, int size, const char *job, const char *launcher,
                               double timeout, locus_boot_hub_t **out)
{
    char host[LOCUS_BOOT_ADDRESS_MAX], port[8];
    locus_status_t st = wire_parse_address(address, true, host, sizeof host, port, sizeof port);
    if (st)
        return st;
    if (size < 1 || size > 1 << 20)
        return lc_err(LOCUS_ERR_INVALID, "hub size %d: expected 1..%d processes", size, 1 << 20);
    locus_boot_hub_t *h = calloc(1, sizeof *h);
    if (!h || !(h->peers = calloc((size_t)size, sizeof *h->peers))) {
        free(h);
        return lc_err(LOCUS_ERR_NO_MEMORY, "hub for %d processes", size);
    }
    h->size = size;
    h->timeout = timeout;
    h->wake[0] = h->wake[1] = h->lfd = -1;
    snprintf(h->launcher, sizeof h->launcher, "%s", launcher ? launcher : "");
    if (job)
        snprintf(h->job, sizeof h->job, "%s", job);
    else
        boot_fresh_job(h->job, "tcp-");
    pthread_mutex_init(&h->mu, NULL);
    pthread_cond_init(&h->cv, NULL);
    int bound;
    if ((st = wire_listen(host, port, &h->lfd, &bound))) {
        locus_boot_hub_destroy(h);
        return st;
    }
    bool v6 = strchr(host, ':') != NULL;
    snprintf(h->addr, sizeof h->addr, "tcp:%s%s%s:%d", v6 ? "[" : "", host, v6 ? "]" : "", bound);
    if (pipe2(h->wake, O_CLOEXEC | O_NONBLOCK) ||
        pthread_create(&h->thr, NULL, hub_main, h)) {
        int e = errno;
        locus_boot_hub_destroy(h);
        return lc_err_errno(LOCUS_ERR_SYSTEM, e, "hub thread");
    }
    h->thr_started = true;
    *out = h;
    return LOCUS_OK;
}

static bool valid_launcher(const char *s)
{
    size_t n = strlen(s);
    if (n < 1 || n > 15)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
            return false;
    return true;
}

static bool valid_job(const char *s)
{
    char clean[BOOT_JOB_MAX + 1];
    boot_make_job(clean, "", s);
    return *s && !strcmp(clean, s);
}

locus_status_t locus_boot_hub_create(const char *address, int size, const char *job,
                                     const char *launcher, double timeout, locus_boot_hub_t **out)
{
    if (!out || !address)
        return lc_err(LOCUS_ERR_INVALID, "hub: address and out must not be NULL");
    if (!launcher || !valid_launcher(launcher))
        return lc_err(LOCUS_ERR_INVALID, "launcher '%s': expected 1-15 characters from [a-z0-9-]",
                      launcher ? launcher : "(null)");
    if (job && !valid_job(job))
        return lc_err(LOCUS_ERR_INVALID, "job '%s': expected 1-%d characters from [A-Za-z0-9_.-]",
                      job, BOOT_JOB_MAX);
    if (!(timeout > 0)) {
        locus_boot_attr_t a;
        locus_boot_attr_init(&a);
        locus_status_t st = locus_boot_attr_from_env(&a);
        if (st)
            return st;
        timeout = a.timeout;
    }
    return hub_open(address, size, job, launcher, timeout, out);
}

locus_status_t boot_hub_serve(const char *address, int size, const char *job, double timeout,
                              locus_boot_hub_t **out)
{
    return hub_open(address, size, job, NULL, timeout, out);
}

void boot_hub_finish(locus_boot_hub_t *h, bool wait)
{
    pthread_mutex_lock(&h->mu);
    double failed_for = 0;
    while (wait && !h->all_left && h->thr_started && failed_for < h->timeout) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += 1;
        pthread_cond_timedwait(&h->cv, &h->mu, &ts);
        if (h->job_failed) /* a stuck rank must not keep rank 0 forever */
            failed_for += 1;
    }
    pthread_mutex_unlock(&h->mu);
    locus_boot_hub_destroy(h);
}

const char *locus_boot_hub_address(const locus_boot_hub_t *h) { return h ? h->addr : ""; }
const char *locus_boot_hub_job(const locus_boot_hub_t *h) { return h ? h->job : ""; }

void locus_boot_hub_exited(locus_boot_hub_t *h, int rank, int wait_status)
{
    if (!h || h->wake[1] < 0)
        return;
    hub_report_t rep = {rank, wait_status};
    while (write(h->wake[1], &rep, sizeof rep) < 0 && errno == EINTR)
        ;
}

bool locus_boot_hub_aborted(locus_boot_hub_t *h, int *rank, int *status, char *msg, size_t msg_len)
{
    if (!h)
        return false;
    pthread_mutex_lock(&h->mu);
    bool ab = h->aborted;
    if (ab) {
        if (rank)
            *rank = h->ab_rank;
        if (status)
            *status = h->ab_status;
        if (msg && msg_len)
            snprintf(msg, msg_len, "%s", h->ab_msg);
    }
    pthread_mutex_unlock(&h->mu);
    return ab;
}

void locus_boot_hub_destroy(locus_boot_hub_t *h)
{
    if (!h)
        return;
    if (h->thr_started) {
        hub_report_t stop = {-1, 0};
        while (write(h->wake[1], &stop, sizeof stop) < 0 && errno == EINTR)
            ;
        pthread_join(h->thr, NULL);
    }
    for (int i = 0; i < h->nconn; i++) {
        if (h->conns[i]->fd >= 0)
            close(h->conns[i]->fd);
        free(h->conns[i]->buf);
        free(h->conns[i]);
    }
    free(h->conns);
    free(h->gbuf);
    free(h->peers);
    if (h->lfd >= 0)
        close(h->lfd);
    for (int i = 0; i < 2; i++)
        if (h->wake[i] >= 0)
            close(h->wake[i]);
    pthread_mutex_destroy(&h->mu);
    pthread_cond_destroy(&h->cv);
    free(h);
}
