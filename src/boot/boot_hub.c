/* The rendezvous hub's thread and its API: one poll loop over the wake
 * pipe (exit reports from the launcher, stop), the listening socket and
 * every connection; messages go to boot_hub_job.c. Served by a launcher
 * (locus run: it also reports exits) or by rank 0's process. */
#include "boot/boot_hub.h"

#include "core/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

bool boot_hub_conn_read(locus_boot_hub_t *h, hub_conn_t *c)
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
            boot_hub_on_message(h, c);
        }
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
            boot_hub_fail(h, "the rendezvous hub at %s cannot take more connections (%s) after %d of "
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

/* Returns false when asked to stop. */
static bool drain_wake(locus_boot_hub_t *h)
{
    hub_report_t rep;
    while (read(h->wake[0], &rep, sizeof rep) == (ssize_t)sizeof rep) {
        if (rep.rank == -1)
            return false;
        boot_hub_on_report(h, rep);
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
        if (poll(pf, (nfds_t)n + 2, boot_hub_poll_ms(h)) < 0 && errno != EINTR)
            break;
        if (pf[0].revents)
            run = drain_wake(h);
        for (int i = 0; i < n; i++)
            if (pf[i + 2].revents && h->conns[i]->fd >= 0 && !boot_hub_conn_read(h, h->conns[i]))
                boot_hub_on_closed(h, h->conns[i]);
        if (pf[1].revents)
            accept_all(h);
        boot_hub_check_timers(h);
        sweep(h);
        pthread_mutex_lock(&h->mu);
        h->job_failed = h->failed;
        if (!h->all_left && boot_hub_all_left(h)) {
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
    int e = pipe2(h->wake, O_CLOEXEC | O_NONBLOCK) ? errno : wire_thread(&h->thr, hub_main, h);
    if (e) {
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
