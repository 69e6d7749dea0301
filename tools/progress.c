/* Progress lines on a terminal (see progress.h). */
#include "progress.h"

#include <locus/locus.h>

#include "core/clock.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SHOW_AFTER_S 0.5
#define REDRAW_S 0.2

static bool quiet;

void progress_quiet(bool q) { quiet = q; }

bool progress_enabled(void) { return !quiet && isatty(STDERR_FILENO); }

void progress_begin(progress_t *p, const char *what, uint64_t total, bool bytes)
{
    memset(p, 0, sizeof *p);
    snprintf(p->what, sizeof p->what, "%s", what);
    p->total = total;
    p->bytes = bytes;
    p->start = lc_now_s();
}

static const char *count(const progress_t *p, uint64_t v, char *buf, size_t len)
{
    if (p->bytes)
        return locus_format_size(v, buf, len);
    snprintf(buf, len, "%llu", (unsigned long long)v);
    return buf;
}

void progress_update(progress_t *p, uint64_t done)
{
    double now = lc_now_s();
    if (now - p->start < SHOW_AFTER_S || now - p->last < REDRAW_S || !progress_enabled())
        return;
    p->last = now;
    char d[32], t[32], eta[48] = "";
    double el = now - p->start;
    if (p->total && done > 0 && done < p->total) {
        double left = el * (double)(p->total - done) / (double)done;
        snprintf(eta, sizeof eta, ", ETA %.0f s", left < 1 ? 1 : left);
    }
    if (p->ms) {
        double left = p->total > done ? (double)(p->total - done) * 1e-3 : 0;
        if (p->total && left >= 1)
            snprintf(eta, sizeof eta, ", ETA %.0f s", left);
        fprintf(stderr, "\r\033[K  %s: %.0f s%s", p->what, el, eta);
    } else if (p->total)
        fprintf(stderr, "\r\033[K  %s: %s/%s (%.0f%%), %.0f s%s", p->what, count(p, done, d, sizeof d),
                count(p, p->total, t, sizeof t), 100.0 * (double)done / (double)p->total, el, eta);
    else
        fprintf(stderr, "\r\033[K  %s: %s, %.0f s", p->what, count(p, done, d, sizeof d), el);
    fflush(stderr);
    p->shown = true;
}

void progress_end(progress_t *p)
{
    if (p->shown) {
        fprintf(stderr, "\r\033[K");
        fflush(stderr);
    }
    p->shown = false;
}

void progress_callback(void *arg, uint64_t done, uint64_t total)
{
    progress_t *p = arg;
    p->total = total;
    progress_update(p, done);
}

/* ---------- ticker ---------- */

struct progress_ticker {
    progress_t p;
    double expect_s;
    atomic_bool stop;
    pthread_t thread;
};

static void *tick(void *arg)
{
    progress_ticker_t *t = arg;
    while (!atomic_load(&t->stop)) {
        lc_sleep_ns(50000000);
        /* steps are milliseconds: the ETA follows the expected duration */
        progress_update(&t->p, (uint64_t)((lc_now_s() - t->p.start) * 1e3));
    }
    return NULL;
}

progress_ticker_t *progress_ticker_start(const char *what, double expect_s)
{
    if (!progress_enabled())
        return NULL;
    progress_ticker_t *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    progress_begin(&t->p, what, expect_s > 0 ? (uint64_t)(expect_s * 1e3) : 0, false);
    t->p.ms = true;
    if (pthread_create(&t->thread, NULL, tick, t)) {
        free(t);
        return NULL;
    }
    return t;
}

void progress_ticker_stop(progress_ticker_t *t)
{
    if (!t)
        return;
    atomic_store(&t->stop, true);
    pthread_join(t->thread, NULL);
    progress_end(&t->p);
    free(t);
}
