/* The rule by which `locus tune` replaces a built-in default with a measured
 * candidate (tune_shm.c), kept apart so tests/unit/test_tune_pick.cc checks
 * it on made-up figures. Each figure is the median of interleaved rounds
 * with its relative spread: half the range of the rounds, without the
 * highest and the lowest once there are 5 or more, over the median (wider
 * than the median absolute deviation, which 3 to 9 loaded rounds can make
 * look small by chance). Fewer than TUNE_MIN_ROUNDS rounds decide nothing. A candidate
 * wins when, over the sizes where it and the default differ, its geometric
 * mean gain exceeds the noise (the larger sum of the two spreads at any such
 * size, at least TUNE_NOISE_MIN), it loses by more than that nowhere, and
 * the noise is at most TUNE_NOISE_MAX (a loaded machine chooses nothing). */
#ifndef LOCUS_TOOLS_TUNE_PICK_H
#define LOCUS_TOOLS_TUNE_PICK_H

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#define TUNE_NOISE_MIN 0.03
#define TUNE_NOISE_MAX 0.25
#define TUNE_MIN_ROUNDS 5

typedef struct {
    double med;   /* median over the rounds (0: none measured) */
    double noise; /* relative spread of the rounds */
} tune_fig_t;

typedef struct {
    int n;        /* sizes compared (0: the two never differ, or a figure is missing) */
    double gain;  /* geometric mean of candidate / default */
    double worst; /* the smallest ratio */
    double margin; /* the noise the gain must beat */
} tune_cmp_t;

static inline int tune_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median and relative spread of the positive samples of x[0..n) (at
 * most 64 samples; 0 are failed rounds). */
static inline tune_fig_t tune_figure(const double *x, int n)
{
    tune_fig_t f = {0, 1};
    double v[64];
    int k = 0;
    for (int i = 0; i < n && k < 64; i++)
        if (x[i] > 0)
            v[k++] = x[i];
    if (!k)
        return f;
    qsort(v, (size_t)k, sizeof *v, tune_cmp_double);
    f.med = k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
    int cut = k >= 5;
    f.noise = (v[k - 1 - cut] - v[cut]) / 2 / f.med;
    return f;
}

/* Candidate c against default d over n sizes where they differ (higher is better). */
static inline tune_cmp_t tune_compare(const tune_fig_t *c, const tune_fig_t *d, int n)
{
    tune_cmp_t r = {0, 1, 1, TUNE_NOISE_MIN};
    double logsum = 0;
    r.worst = INFINITY;
    for (int i = 0; i < n; i++) {
        if (c[i].med <= 0 || d[i].med <= 0)
            return (tune_cmp_t){0, 1, 1, TUNE_NOISE_MIN};
        double q = c[i].med / d[i].med;
        logsum += log(q);
        r.worst = fmin(r.worst, q);
        r.margin = fmax(r.margin, c[i].noise + d[i].noise);
    }
    r.n = n;
    r.gain = n ? exp(logsum / n) : 1;
    if (!n)
        r.worst = 1;
    return r;
}

static inline bool tune_beats(const tune_cmp_t *r)
{
    return r->n > 0 && r->margin <= TUNE_NOISE_MAX && r->gain > 1 + r->margin && r->worst > 1 - r->margin;
}

#endif
