/* Progress of long work on stderr: "  what: done/total (pct), ETA 12 s",
 * redrawn at most every 0.2 s once the work has run for 0.5 s, cleared at the
 * end. Silent when stderr is not a terminal or after progress_quiet(true)
 * (the tools' -q), so logs and pipes never see it. Shared by the CLI tools
 * and locus-bench-regcache. */
#ifndef LOCUS_TOOLS_PROGRESS_H
#define LOCUS_TOOLS_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

typedef struct {
    char what[64];
    uint64_t total;
    bool bytes;         /* done/total are bytes: shown as sizes */
    bool ms;            /* done/total are milliseconds (a ticker): elapsed and ETA only */
    double start, last; /* lc_now_s() of begin and of the last redraw */
    bool shown;         /* a line is on the terminal */
} progress_t;

/* -q: no progress for the rest of the process. */
void progress_quiet(bool quiet);
/* True when progress is shown (stderr is a terminal, not quiet). */
bool progress_enabled(void);

/* Start `what` with `total` steps (0: unknown, no ETA); bytes: steps are bytes. */
void progress_begin(progress_t *p, const char *what, uint64_t total, bool bytes);
/* `done` of total steps are done (cheap when nothing is drawn: call it freely). */
void progress_update(progress_t *p, uint64_t done);
/* Clear the line (if one was drawn). */
void progress_end(progress_t *p);
/* An adapter for callbacks of the form fn(arg, done, total), such as
 * locus_heap_attr_t.progress: arg is a progress_t. */
void progress_callback(void *arg, uint64_t done, uint64_t total);

/* Work that reports nothing while it runs (a library call): a thread redraws
 * "what: N s" (with an ETA when expect_s > 0) until progress_ticker_stop. */
typedef struct progress_ticker progress_ticker_t;
progress_ticker_t *progress_ticker_start(const char *what, double expect_s);
void progress_ticker_stop(progress_ticker_t *t);

#endif
