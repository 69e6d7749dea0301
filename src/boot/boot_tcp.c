/* The tcp rendezvous client (LOCUS_BOOT=tcp:HOST:PORT; locus run too).
 *
 * Rank 0 first tries the address once: a launcher (locus run) may already
 * serve the hub there; else rank 0 serves it itself, in a thread. Every rank
 * connects (bounded retries with backoff), says HELLO and waits for WELCOME.
 * A watcher thread reads everything the hub sends: results go straight into
 * the waiting collective's buffer, a FAIL (a rank died, left, or never came)
 * fails the pending and every later collective, an ABORT ends the process. */
#include "boot/boot_internal.h"
#include "boot/boot_wire.h"

#include "core/clock.h"
#include "core/config.h"
#include "core/error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

typedef struct tcp_client {
    int fd, rank, size;
    double timeout;
    char addr[LOCUS_BOOT_ADDRESS_MAX + 8]; /* "tcp:HOST:PORT", for messages */
    locus_boot_hub_t *hub;                 /* rank 0's own hub, if it serves it */
    bool init_done;
    pthread_t thr;
    bool thr_started;
    pthread_mutex_t mu, send_mu;
    pthread_cond_t cv; /* CLOCK_MONOTONIC */
    /* under mu */
    bool welcomed, ended, leaving, failed;
    bool retry; /* the hub said: try again (a closing rank-0 hub met a re-join) */
    bool told;  /* the hub sent a FAIL: a reason, not a closing hub */
    locus_status_t fail_code;
    char fail[WIRE_TEXT_MAX];
    char job[BOOT_JOB_MAX + 1], launcher[16];
    bool waiting, done; /* the pending collective */
    uint32_t seq;
    void *all;
    uint64_t all_len;
} tcp_client_t;

static void set_failed(tcp_client_t *c, locus_status_t code, const char *msg)
{
    pthread_mutex_lock(&c->mu);
    if (!c->failed) {
        c->failed = true;
        c->fail_code = code;
        snprintf(c->fail, sizeof c->fail, "%s", msg);
    }
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
}

static bool discard(int fd, uint64_t len)
{
    char junk[4096];
    while (len) {
        size_t n = len < sizeof junk ? (size_t)len : sizeof junk;
        if (!wire_read_all(fd, junk, n))
            return false;
        len -= n;
    }
    return true;
}

/* A len-byte text payload; keeps what fits. */
static bool read_text(int fd, uint64_t len, char *out, size_t cap)
{
    size_t keep = len < cap ? (size_t)len : cap - 1;
    if (!wire_read_all(fd, out, keep))
        return false;
    out[keep] = '\0';
    return discard(fd, len - keep);
}

static bool on_welcome(tcp_client_t *c, uint64_t len)
{
    char w[BOOT_JOB_MAX + 1 + 16 + 1] = "";
    if (len > sizeof w - 1 || !wire_read_all(c->fd, w, (size_t)len))
        return false;
    w[len] = '\0';
    size_t jlen = strlen(w);
    if (jlen >= sizeof c->job)
        return false; /* a job id longer than any hub sends */
    const char *launcher = w + jlen + 1;
    pthread_mutex_lock(&c->mu);
    memcpy(c->job, w, jlen + 1);
    snprintf(c->launcher, sizeof c->launcher, "%s", launcher < w + len ? launcher : "");
    c->welcomed = true;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    return true;
}

static bool on_gathered(tcp_client_t *c, const wire_hdr_t *h)
{
    pthread_mutex_lock(&c->mu);
    bool ok = c->waiting && !c->done && h->arg == c->seq && h->len == c->all_len;
    void *all = c->all;
    pthread_mutex_unlock(&c->mu);
    if (!ok) {
        char msg[WIRE_TEXT_MAX];
        snprintf(msg, sizeof msg, "%s: unexpected result of collective #%u (%llu bytes)", c->addr,
                 h->arg, (unsigned long long)h->len);
        set_failed(c, LOCUS_ERR_CORRUPT, msg);
        return discard(c->fd, h->len);
    }
    /* the caller waits (its buffer stays valid) until done or failed, and
     * only this thread sets either */
    if (h->len && !wire_read_all(c->fd, all, h->len))
        return false;
    pthread_mutex_lock(&c->mu);
    c->done = true;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    return true;
}

static void *watch(void *arg)
{
    tcp_client_t *c = arg;
    char text[WIRE_TEXT_MAX];
    bool ok = true;
    while (ok) {
        wire_hdr_t h;
        if (!wire_read_all(c->fd, &h, sizeof h))
            break;
        switch (h.type) {
        case W_WELCOME: ok = on_welcome(c, h.len); break;
        case W_GATHERED: ok = on_gathered(c, &h); break;
        case W_FAIL:
        case W_REJECT:
            pthread_mutex_lock(&c->mu);
            c->retry |= h.type == W_REJECT && h.arg == WIRE_REJECT_RETRY;
            c->told |= h.type == W_FAIL;
            pthread_mutex_unlock(&c->mu);
            if ((ok = read_text(c->fd, h.len, text, sizeof text)))
                set_failed(c, h.type == W_REJECT ? LOCUS_ERR_INVALID : -(locus_status_t)h.arg,
                           text);
            break;
        case W_ABORT: /* another rank brought the job down */
            _exit((int)h.arg);
        default: ok = false;
        }
    }
    pthread_mutex_lock(&c->mu);
    c->ended = true;
    bool quiet = c->leaving, by_rank0 = c->welcomed && !c->launcher[0];
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    if (!quiet) {
        snprintf(text, sizeof text, "lost the connection to the rendezvous hub at %s (%s)", c->addr,
                 by_rank0 ? "served by rank 0: rank 0 exited or was killed"
                          : "the process serving it exited?");
        set_failed(c, LOCUS_ERR_PEER_FAILED, text);
    }
    return NULL;
}

/* Wait on c->cv until *flag or a failure, at most until deadline (ns, 0 = none). */
static bool wait_for(tcp_client_t *c, const bool *flag, uint64_t deadline)
{
    while (!*flag && !c->failed) {
        if (!deadline) {
            pthread_cond_wait(&c->cv, &c->mu);
            continue;
        }
        if (lc_now_ns() >= deadline)
            return false;
        struct timespec ts = {(time_t)(deadline / 1000000000ull), (long)(deadline % 1000000000ull)};
        pthread_cond_timedwait(&c->cv, &c->mu, &ts);
    }
    return true;
}

static locus_status_t failure(tcp_client_t *c)
{
    return lc_err(c->fail_code ? c->fail_code : LOCUS_ERR_PEER_FAILED, "%s", c->fail);
}

/* ---------- the collectives ---------- */

static locus_status_t tcp_allgather(locus_boot_t *b, const void *mine, size_t len, void *all)
{
    tcp_client_t *c = b->impl;
    pthread_mutex_lock(&c->mu);
    if (c->failed) {
        pthread_mutex_unlock(&c->mu);
        return failure(c);
    }
    c->waiting = true;
    c->done = false;
    c->seq = (uint32_t)b->seq;
    c->all = all;
    c->all_len = (uint64_t)len * (uint64_t)c->size;
    pthread_mutex_unlock(&c->mu);

    pthread_mutex_lock(&c->send_mu);
    bool sent = wire_send(c->fd, W_GATHER, (uint32_t)b->seq, mine, len, 3600);
    int e = errno;
    pthread_mutex_unlock(&c->send_mu);
    if (!sent) {
        char msg[WIRE_TEXT_MAX];
        snprintf(msg, sizeof msg, "lost the connection to the rendezvous hub at %s (send: %s)",
                 c->addr, strerror(e));
        set_failed(c, LOCUS_ERR_PEER_FAILED, msg);
    }
    pthread_mutex_lock(&c->mu);
    wait_for(c, &c->done, 0);
    c->waiting = false;
    locus_status_t st = c->done ? LOCUS_OK : failure(c);
    pthread_mutex_unlock(&c->mu);
    return st;
}

static void tcp_abort(locus_boot_t *b, int status, const char *msg)
{
    tcp_client_t *c = b->impl;
    size_t n = strnlen(msg, WIRE_TEXT_MAX - 1);
    char text[WIRE_TEXT_MAX];
    memcpy(text, msg, n);
    text[n] = '\0';
    pthread_mutex_lock(&c->send_mu);
    bool sent = wire_send(c->fd, W_ABORT, (uint32_t)status, text, n + 1, 2.0);
    pthread_mutex_unlock(&c->send_mu);
    /* the hub sends ABORT back to everyone, this process too: the watcher exits */
    for (int i = 0; sent && i < 500; i++) {
        pthread_mutex_lock(&c->mu);
        bool ended = c->ended;
        pthread_mutex_unlock(&c->mu);
        if (ended)
            break;
        lc_sleep_ns(10000000);
    }
}

static locus_status_t tcp_fini(locus_boot_t *b)
{
    tcp_client_t *c = b->impl;
    if (!c)
        return LOCUS_OK;
    if (c->thr_started) {
        pthread_mutex_lock(&c->mu);
        c->leaving = true;
        pthread_mutex_unlock(&c->mu);
        pthread_mutex_lock(&c->send_mu);
        wire_send(c->fd, W_BYE, 0, NULL, 0, 2.0);
        pthread_mutex_unlock(&c->send_mu);
        shutdown(c->fd, SHUT_WR);
        /* the hub closes after BYE; if it does not, stop reading anyway */
        pthread_mutex_lock(&c->mu);
        bool ended = wait_for(c, &c->ended, lc_now_ns() + 5000000000ull) && c->ended;
        pthread_mutex_unlock(&c->mu);
        if (!ended)
            shutdown(c->fd, SHUT_RDWR);
        pthread_join(c->thr, NULL);
    }
    if (c->fd >= 0)
        close(c->fd);
    if (c->hub) /* rank 0 serves the others until they left */
        boot_hub_finish(c->hub, c->init_done);
    pthread_mutex_destroy(&c->mu);
    pthread_mutex_destroy(&c->send_mu);
    pthread_cond_destroy(&c->cv);
    free(c);
    b->impl = NULL;
    return LOCUS_OK;
}

static const boot_ops_t tcp_ops = {tcp_allgather, tcp_abort, tcp_fini};

/* ---------- joining ---------- */

/* Rank and size: the attributes, else LOCUS_RANK/LOCUS_SIZE, else srun's. */
static locus_status_t who_am_i(const locus_boot_attr_t *attr, int *rank, int *size)
{
    if (attr->rank >= 0 && attr->size > 0) {
        *rank = attr->rank;
        *size = attr->size;
    } else if (lc_tun_is_set(LC_TUN_SIZE) || lc_tun_is_set(LC_TUN_RANK)) {
        int64_t r, s;
        locus_status_t st;
        if ((st = lc_tun_int(LC_TUN_RANK, &r)) || (st = lc_tun_int(LC_TUN_SIZE, &s)))
            return st;
        *rank = (int)r;
        *size = (int)s;
    } else if (!boot_slurm_rank_size(rank, size)) {
        return lc_err(LOCUS_ERR_INVALID, "this process's rank is unknown: set LOCUS_RANK and "
                      "LOCUS_SIZE (locus run does), or start it with srun");
    }
    if (*rank < 0 || *rank >= *size)
        return lc_err(LOCUS_ERR_INVALID, "rank %d: expected 0..%d (size %d)", *rank, *size - 1,
                      *size);
    return LOCUS_OK;
}

/* Rank 0 serves the hub unless something answers at the address already. */
static locus_status_t serve_if_needed(tcp_client_t *c, locus_boot_t *b, const char *address,
                                      const char *host, const char *port)
{
    int err;
    c->fd = wire_connect(host, port, c->timeout < 1 ? c->timeout : 1, &err);
    if (c->fd >= 0)
        return LOCUS_OK;
    const char *job = NULL;
    if (lc_tun_is_set(LC_TUN_JOB)) {
        locus_status_t st = lc_tun_string(LC_TUN_JOB, &job);
        if (st)
            return st;
    }
    locus_status_t st = boot_hub_serve(address, c->size, job && *job ? job : NULL, c->timeout,
                                       &c->hub);
    if (st) {
        char msg[400];
        snprintf(msg, sizeof msg, "%s", locus_last_error());
        return lc_err(st, "%s: rank 0 serves the rendezvous hub, but %s (HOST must be an "
                      "address of rank 0's host)", c->addr, msg);
    }
    lc_note(&b->notes, "rank 0 serves the rendezvous hub at %s", c->addr);
    return LOCUS_OK;
}

static locus_status_t connect_retrying(tcp_client_t *c, const char *host, const char *port)
{
    uint64_t deadline = lc_now_ns() + (uint64_t)(c->timeout * 1e9);
    uint64_t pause = 10000000; /* 10 ms, growing to 250 ms */
    int err = 0;
    while (c->fd < 0) {
        double left = (double)(deadline - lc_now_ns()) * 1e-9;
        c->fd = wire_connect(host, port, left < 2 ? left : 2, &err);
        if (c->fd >= 0)
            break;
        if (lc_now_ns() + pause >= deadline)
            return lc_err(LOCUS_ERR_TIMEOUT,
                          "%s: no rendezvous hub answered within %g s (LOCUS_BOOT_TIMEOUT; last "
                          "error: %s); it is served by rank 0 (started with the same LOCUS_BOOT) "
                          "or by the launcher", c->addr, c->timeout, strerror(err));
        lc_sleep_ns(pause);
        pause = pause * 3 / 2 > 250000000 ? 250000000 : pause * 3 / 2;
    }
    return LOCUS_OK;
}

static locus_status_t hello(tcp_client_t *c, locus_boot_t *b)
{
    wire_hello_t m = {WIRE_MAGIC, WIRE_VERSION, c->rank, c->size, (int32_t)getpid()};
    if (!wire_send(c->fd, W_HELLO, 0, &m, sizeof m, c->timeout))
        return lc_err_errno(LOCUS_ERR_PEER_FAILED, errno, "%s: hello", c->addr);
    int e = wire_thread(&c->thr, watch, c);
    if (e)
        return lc_err_errno(LOCUS_ERR_SYSTEM, e, "boot watcher thread");
    c->thr_started = true;
    /* the hub fails the job, saying who is missing, when ranks do not all
     * arrive within its timeout; the extra second lets that message come */
    uint64_t deadline = lc_now_ns() + (uint64_t)((c->timeout + 1) * 1e9);
    pthread_mutex_lock(&c->mu);
    bool in_time = wait_for(c, &c->welcomed, deadline);
    locus_status_t st = LOCUS_OK;
    if (c->failed)
        st = failure(c);
    else if (!in_time)
        st = lc_err(LOCUS_ERR_TIMEOUT, "%s: the hub did not start the job within %g s of this "
                    "rank's arrival", c->addr, c->timeout + 1);
    pthread_mutex_unlock(&c->mu);
    if (st)
        return st;
    snprintf(b->job, sizeof b->job, "%s", c->job);
    snprintf(b->source, sizeof b->source, "%s", c->launcher[0] ? c->launcher : "tcp");
    return LOCUS_OK;
}

/* Joining the job again (after locus_boot_fini in this process: an
 * OpenSHMEM program initialized again) may meet the hub rank 0 served the
 * first time while it closes: it says retry, or closes before a WELCOME.
 * Then this connection is dropped and the next one tried (rank 0 serves a
 * new hub at the same address when it joins again), until the timeout. */
static bool joined_once;

static bool rejoin_again(tcp_client_t *c, uint64_t deadline)
{
    pthread_mutex_lock(&c->mu);
    bool again = joined_once && !c->welcomed && (c->retry || (c->ended && !c->told)) && lc_now_ns() < deadline;
    pthread_mutex_unlock(&c->mu);
    if (!again)
        return false;
    shutdown(c->fd, SHUT_RDWR);
    pthread_join(c->thr, NULL);
    close(c->fd);
    c->fd = -1;
    c->thr_started = false;
    c->ended = c->failed = c->retry = c->told = false;
    c->fail_code = LOCUS_OK;
    c->fail[0] = '\0';
    lc_sleep_ns(20000000);
    return true;
}

locus_status_t boot_tcp_open(locus_boot_t *b, const locus_boot_attr_t *attr)
{
    if (attr->kind != LOCUS_BOOT_TCP)
        return lc_err(LOCUS_ERR_NOT_FOUND, "LOCUS_BOOT is not tcp:HOST:PORT");
    char host[LOCUS_BOOT_ADDRESS_MAX], port[8];
    locus_status_t st = wire_parse_address(attr->address, false, host, sizeof host, port,
                                           sizeof port);
    int rank, size;
    if (st || (st = who_am_i(attr, &rank, &size)))
        return st;
    tcp_client_t *c = calloc(1, sizeof *c);
    if (!c)
        return lc_err(LOCUS_ERR_NO_MEMORY, "boot tcp client");
    c->fd = -1;
    c->rank = rank;
    c->size = size;
    c->timeout = attr->timeout;
    snprintf(c->addr, sizeof c->addr, "tcp:%s", attr->address);
    pthread_mutex_init(&c->mu, NULL);
    pthread_mutex_init(&c->send_mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&c->cv, &ca);
    pthread_condattr_destroy(&ca);
    b->impl = c;
    b->ops = &tcp_ops;
    b->rank = rank;
    b->size = size;
    if (rank == 0 && (st = serve_if_needed(c, b, attr->address, host, port)))
        return st;
    uint64_t deadline = lc_now_ns() + (uint64_t)(c->timeout * 1e9);
    while ((st = connect_retrying(c, host, port)) == LOCUS_OK && (st = hello(c, b)) != LOCUS_OK &&
           rejoin_again(c, deadline))
        ;
    if (st)
        return st;
    c->init_done = true;
    joined_once = true;
    return LOCUS_OK;
}
