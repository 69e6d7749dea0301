/* The rendezvous hub's job logic: HELLO -> WELCOME once all arrived,
 * GATHERs concatenated into one GATHERED, and every death, disconnect, early
 * leave, timeout or abort turned into a FAIL (or ABORT) sent to everyone
 * still connected, so no collective hangs. Runs on the hub's thread. */
#include "boot/boot_hub.h"

#include "core/clock.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void hub_fail_code(locus_boot_hub_t *h, uint32_t code, const char *fmt, ...)
    LOCUS_PRINTF(3, 4);

void boot_hub_conn_close(locus_boot_hub_t *h, hub_conn_t *c)
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
    boot_hub_conn_close(h, c);
    if (h->peers[rank].st == P_ARRIVED)
        h->peers[rank].st = P_GONE;
    boot_hub_fail(h, "rank %d stopped taking messages from the hub (%s)", rank, strerror(e));
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

void boot_hub_fail(locus_boot_hub_t *h, const char *fmt, ...)
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

/* Refuse a connection with a message; arg WIRE_REJECT_RETRY tells the
 * client to connect again. */
static void reject(hub_conn_t *c, uint32_t arg, const char *fmt, ...) LOCUS_PRINTF(3, 4);
static void reject(hub_conn_t *c, uint32_t arg, const char *fmt, ...)
{
    char msg[WIRE_TEXT_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    wire_send(c->fd, W_REJECT, arg, msg, strlen(msg) + 1, 1.0);
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

/* A rank that left the job (BYE) joins it again: parked until every rank has
 * done so, then the job starts over (collectives numbered from 0) with a
 * WELCOME to all. A hub rank 0 serves ends with rank 0's locus_boot_fini and
 * rank 0 serves a new one when it joins again: the rank is told to retry. */
static void rejoin(locus_boot_hub_t *h, hub_conn_t *c, hub_peer_t *p, int rank)
{
    if (!h->launcher[0]) { /* rank 0's: it ends with rank 0's fini; rank 0 serves a new one */
        reject(c, WIRE_REJECT_RETRY, "rank %d joins the job again while rank 0's hub at %s closes: try again",
               rank, h->addr);
        return;
    }
    for (int q = 0; q < h->size; q++)
        if (h->peers[q].exited || h->peers[q].st == P_GONE) {
            reject(c, 0, "rank %d joins the job again, but rank %d has ended: the job cannot start over", rank, q);
            return;
        }
    c->rank = rank;
    p->conn = c;
    p->st = P_REJOIN;
    if (!h->rejoining++)
        h->t_rejoin = lc_now_s();
    for (int q = 0; q < h->size; q++)
        if (h->peers[q].st != P_REJOIN)
            return;
    for (int q = 0; q < h->size; q++)
        h->peers[q].st = P_ARRIVED;
    h->rejoining = 0;
    reset_collective(h);
    h->seq = 0;
    welcome_all(h);
}

static void on_hello(locus_boot_hub_t *h, hub_conn_t *c)
{
    wire_hello_t m;
    if (c->hdr.len != sizeof m) {
        reject(c, 0, "not a locus boot client (bad hello)");
        return;
    }
    memcpy(&m, c->buf, sizeof m);
    hub_peer_t *p = m.rank >= 0 && m.rank < h->size ? &h->peers[m.rank] : NULL;
    if (m.magic != WIRE_MAGIC || m.version != WIRE_VERSION)
        reject(c, 0, "hello version %u, magic %#x: expected a locus boot client of version %u",
               m.version, m.magic, WIRE_VERSION);
    else if (m.size != h->size)
        reject(c, 0, "%s serves a job of %d processes; this process says size %d "
               "(another job on this port? LOCUS_SIZE?)", h->addr, h->size, (int)m.size);
    else if (!p)
        reject(c, 0, "rank %d: expected 0..%d", (int)m.rank, h->size - 1);
    else if (p->st == P_BYE && !h->failed) {
        rejoin(h, c, p, m.rank);
        return;
    } else if (p->st != P_ABSENT)
        reject(c, 0, "rank %d already joined the job at %s (two processes with one rank, or "
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
            boot_hub_fail(h, "rank %d left the job (locus_boot_fini) but rank %d entered collective #%u",
                     q, r, h->seq);
            return;
        }
    if (c->hdr.arg != h->seq || h->peers[r].gave) {
        boot_hub_fail(h, "rank %d sent collective #%u while the job is at #%u", r, c->hdr.arg, h->seq);
        return;
    }
    if (h->gave == 0) {
        h->glen = c->hdr.len;
        h->first_rank = r;
        if (h->glen && !(h->gbuf = malloc(h->glen * (uint64_t)h->size))) {
            boot_hub_fail(h, "hub: out of memory for %d x %llu bytes", h->size,
                     (unsigned long long)h->glen);
            return;
        }
    } else if (c->hdr.len != h->glen) {
        boot_hub_fail(h, "allgather #%u: rank %d passed %llu bytes, rank %d %llu bytes: every process "
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
    boot_hub_fail(h, "rank %d aborted the job (status %d): %s", r, (int)c->hdr.arg, msg);
}

void boot_hub_on_message(locus_boot_hub_t *h, hub_conn_t *c)
{
    int r = c->rank;
    if (r < 0) {
        if (c->hdr.type == W_HELLO)
            on_hello(h, c);
        else
            reject(c, 0, "expected a hello first");
        return;
    }
    switch (c->hdr.type) {
    case W_GATHER: on_gather(h, r, c); break;
    case W_ABORT: on_abort(h, r, c); break;
    case W_BYE:
        h->peers[r].st = P_BYE;
        boot_hub_conn_close(h, c);
        if (h->gave > 0 && !h->failed)
            boot_hub_fail(h, "rank %d left the job (locus_boot_fini) during collective #%u", r, h->seq);
        break;
    default: boot_hub_fail(h, "rank %d sent an unknown message (type %u)", r, c->hdr.type);
    }
}

/* A rank's connection closed without BYE. */
void boot_hub_on_closed(locus_boot_hub_t *h, hub_conn_t *c)
{
    int r = c->rank;
    boot_hub_conn_close(h, c);
    if (r < 0 || (h->peers[r].st != P_ARRIVED && h->peers[r].st != P_REJOIN))
        return;
    if (h->launcher[0]) { /* the launcher's exit report says more: wait for it briefly */
        h->peers[r].st = P_LOST;
        h->peers[r].lost_at = lc_now_s();
        return;
    }
    h->peers[r].st = P_GONE;
    boot_hub_fail(h, "rank %d disconnected from the rendezvous hub without locus_boot_fini "
             "(it exited or was killed)", r);
}

void boot_hub_on_report(locus_boot_hub_t *h, hub_report_t rep)
{
    if (rep.rank < 0 || rep.rank >= h->size)
        return;
    hub_peer_t *p = &h->peers[rep.rank];
    /* a BYE sent just before the exit may still wait in the socket */
    if (p->conn && !boot_hub_conn_read(h, p->conn))
        boot_hub_on_closed(h, p->conn);
    if (p->st == P_BYE) { /* ended after it left: fine, unless others wait to start over with it */
        p->exited = true;
        if (h->rejoining)
            boot_hub_fail(h, "rank %d ended after leaving the job while %d rank%s joined it again", rep.rank,
                          h->rejoining, h->rejoining == 1 ? "" : "s");
        return;
    }
    if (p->st == P_GONE)
        return;
    char how[96];
    boot_describe_exit(rep.ws, how, sizeof how);
    bool before = p->st == P_ABSENT;
    p->st = P_GONE;
    if (p->conn)
        boot_hub_conn_close(h, p->conn);
    boot_hub_fail(h, "rank %d %s%s", rep.rank, how, before ? " before joining the job" : "");
}

/* For a timeout message: the first 8 ranks whose state is st (is) or is not
 * st (!is), "3, 5, ..." when there are more. */
static void ranks_where(const locus_boot_hub_t *h, peer_state_t st, bool is, char *buf, size_t len)
{
    size_t n = 0;
    int shown = 0;
    buf[0] = '\0';
    for (int r = 0; r < h->size; r++)
        if ((h->peers[r].st == st) == is && shown++ < 8)
            n += (size_t)snprintf(buf + n, len - n, "%s%d", n ? ", " : "", r);
    if (shown > 8)
        snprintf(buf + n, len - n, ", ...");
}

void boot_hub_check_timers(locus_boot_hub_t *h)
{
    double now = lc_now_s();
    for (int r = 0; r < h->size; r++)
        if (h->peers[r].st == P_LOST && now - h->peers[r].lost_at >= LOST_GRACE_S) {
            h->peers[r].st = P_GONE;
            boot_hub_fail(h, "rank %d closed its connection to the hub without locus_boot_fini", r);
        }
    char missing[128];
    if (!h->failed && h->rejoining && now - h->t_rejoin >= h->timeout) {
        ranks_where(h, P_REJOIN, false, missing, sizeof missing);
        hub_fail_code(h, (uint32_t)-LOCUS_ERR_TIMEOUT,
                      "%s: %d of %d ranks joined the job again within %g s (LOCUS_BOOT_TIMEOUT); missing: %s",
                      h->addr, h->rejoining, h->size, h->timeout, missing);
    }
    if (h->failed || h->arrived == h->size || !h->arrived || now - h->t0 < h->timeout)
        return;
    ranks_where(h, P_ABSENT, true, missing, sizeof missing);
    hub_fail_code(h, (uint32_t)-LOCUS_ERR_TIMEOUT,
                  "%s: %d of %d ranks arrived within %g s (LOCUS_BOOT_TIMEOUT); missing: %s", h->addr,
                  h->arrived, h->size, h->timeout, missing);
}

bool boot_hub_all_left(const locus_boot_hub_t *h)
{
    for (int r = 0; r < h->size; r++) {
        peer_state_t s = h->peers[r].st;
        if (s != P_BYE && s != P_GONE && !(h->failed && s == P_ABSENT))
            return false;
    }
    return true;
}

int boot_hub_poll_ms(const locus_boot_hub_t *h)
{
    double now = lc_now_s(), next = 1e30;
    if (!h->failed && h->arrived && h->arrived < h->size)
        next = h->t0 + h->timeout;
    if (!h->failed && h->rejoining && h->t_rejoin + h->timeout < next)
        next = h->t_rejoin + h->timeout;
    for (int r = 0; r < h->size; r++)
        if (h->peers[r].st == P_LOST && h->peers[r].lost_at + LOST_GRACE_S < next)
            next = h->peers[r].lost_at + LOST_GRACE_S;
    if (next > 1e29)
        return -1;
    return next <= now ? 0 : (int)((next - now) * 1e3) + 1;
}
