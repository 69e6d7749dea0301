/* One report for an MPI job: the per-rank profiles (locus profile -o
 * prof.%r.json under mpirun) read back and put together. Variables are
 * aggregated over ranks by allocation site; where ranks differ (unequal
 * sizes, one rank whose memory is away from where its threads ran, a
 * finding in some ranks only) the report shows the ranks' own rows; access
 * matrices are summed per host (node numbers mean nothing across hosts). */
#include "prof/prof_merge.h"
#include "prof/prof_json.h"
#include "core/error.h"

#pragma GCC diagnostic ignored "-Wformat-truncation" /* long names are cut, on purpose */

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *b = malloc(cap);
    size_t got;
    while (b && (got = fread(b + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *nb = realloc(b, cap * 2);
            if (!nb) {
                free(b);
                b = NULL;
                break;
            }
            b = nb;
            cap *= 2;
        }
    }
    fclose(f);
    *len = n;
    return b;
}

static int node_index(const mrank_t *r, int os)
{
    for (int i = 0; i < r->nnodes; i++)
        if (r->node_id[i] == os)
            return i;
    return -1;
}


/* Where the rank's threads ran: the threads' nodes, else the cpu affinity
 * of its first process. */
static void rank_run_nodes(mrank_t *r, const pj_t *p)
{
    const pj_t *th = pj_get(p, "threads");
    for (size_t i = 0; i < pj_len(th); i++) {
        const pj_t *nodes = pj_get(pj_at(th, i), "nodes");
        if (pj_len(nodes)) { /* the node it ran on most */
            int k = node_index(r, pj_int(pj_at(nodes, 0), -1));
            if (k >= 0 && k < 64)
                r->run_nodes |= 1ull << k;
        }
    }
    if (r->run_nodes)
        return;
    const pj_t *cpus = pj_get(pj_at(pj_get(p, "processes"), 0), "cpus");
    const pj_t *mn = pj_get(pj_get(p, "machine"), "nodes");
    for (size_t c = 0; c < pj_len(cpus); c++)
        for (size_t n = 0; n < pj_len(mn) && n < 64; n++) {
            const pj_t *nc = pj_get(pj_at(mn, n), "cpus");
            for (size_t k = 0; k < pj_len(nc); k++)
                if (pj_num(pj_at(nc, k), -1) == pj_num(pj_at(cpus, c), -2))
                    r->run_nodes |= 1ull << n;
        }
}

static void rank_policy(mrank_t *r, const pj_t *p)
{
    const pj_t *pol = pj_get(pj_at(pj_get(p, "processes"), 0), "policy");
    const char *mode = pj_str(pj_get(pol, "mode"), "unknown");
    if (!strcmp(mode, "default") || !strcmp(mode, "unknown") || !strcmp(mode, "local")) {
        snprintf(r->policy, sizeof r->policy, "%s", mode);
        return;
    }
    int n = snprintf(r->policy, sizeof r->policy, "%s to node ", mode);
    const pj_t *nodes = pj_get(pol, "nodes");
    for (size_t i = 0; i < pj_len(nodes) && n > 0 && (size_t)n < sizeof r->policy; i++)
        n += snprintf(r->policy + n, sizeof r->policy - (size_t)n, "%s%d", i ? "," : "", pj_int(pj_at(nodes, i), -1));
}

static void add_var(merge_t *m, mrank_t *r, const pj_t *v)
{
    const char *kind = pj_str(pj_get(v, "kind"), "?");
    if (!strcmp(kind, "other"))
        return; /* mappings ([stack], [anon]) are not the program's variables */
    const char *name = pj_str(pj_get(v, "name"), "?"), *site = pj_str(pj_get(v, "site"), "?");
    char key[700];
    snprintf(key, sizeof key, "%s|%s|%s", kind, name, site);
    mvar_t *mv = NULL;
    for (size_t i = 0; i < m->vars.n && !mv; i++)
        if (!strcmp(m->vars.v[i].key, key))
            mv = &m->vars.v[i];
    if (!mv) {
        mvar_t n;
        memset(&n, 0, sizeof n);
        snprintf(n.key, sizeof n.key, "%s", key);
        snprintf(n.name, sizeof n.name, "%s", name);
        snprintf(n.kind, sizeof n.kind, "%s", kind);
        snprintf(n.site, sizeof n.site, "%s", site);
        VEC_PUSH(m->vars, n);
        mv = &m->vars.v[m->vars.n - 1];
    }
    mper_t per;
    memset(&per, 0, sizeof per);
    per.rank = r->rank;
    per.bytes = pj_u64(pj_get(v, "bytes"), 0);
    const pj_t *pbn = pj_get(v, "pages_by_node");
    for (size_t k = 0; k < pj_len(pbn) && k < MN; k++) {
        per.by_node[k] = pj_u64(pj_at(pbn, k), 0);
        per.pages += per.by_node[k];
        if (k < 64 && (r->run_nodes >> k & 1))
            per.local += per.by_node[k];
    }
    const pj_t *acc = pj_get(v, "accesses");
    per.acc = pj_u64(pj_get(acc, "samples"), 0);
    per.remote = pj_u64(pj_get(acc, "remote"), 0);
    snprintf(per.pattern, sizeof per.pattern, "%s", pj_str(pj_get(v, "pattern"), ""));
    snprintf(per.finding, sizeof per.finding, "%s", pj_str(pj_get(v, "finding"), ""));
    r->pages += per.pages;
    r->local += per.local;
    /* two call paths with the same site in one rank are one row */
    for (size_t k = 0; k < mv->per.n; k++) {
        mper_t *o = &mv->per.v[k];
        if (o->rank != per.rank)
            continue;
        o->bytes += per.bytes;
        o->pages += per.pages;
        o->local += per.local;
        o->acc += per.acc;
        o->remote += per.remote;
        for (int n = 0; n < MN; n++)
            o->by_node[n] += per.by_node[n];
        if (!o->finding[0] && per.finding[0]) {
            snprintf(o->pattern, sizeof o->pattern, "%s", per.pattern);
            snprintf(o->finding, sizeof o->finding, "%s", per.finding);
        }
        return;
    }
    VEC_PUSH(mv->per, per);
}

static locus_status_t read_rank(merge_t *m, const char *path, int idx)
{
    size_t len = 0;
    char *text = slurp(path, &len);
    if (!text)
        return lc_err_errno(LOCUS_ERR_SYSTEM, errno, "cannot read profile '%s'", path);
    char err[256];
    pj_t *p = pj_parse(text, len, err, sizeof err);
    free(text);
    if (!p)
        return lc_err(LOCUS_ERR_INVALID, "profile '%s' is not JSON: %s", path, err);
    if (strcmp(pj_str(pj_get(p, "schema"), ""), "locus-profile/1")) {
        pj_free(p);
        return lc_err(LOCUS_ERR_INVALID, "'%s' is not a locus profile (schema locus-profile/1 expected)", path);
    }
    mrank_t r;
    memset(&r, 0, sizeof r);
    const pj_t *job = pj_get(p, "job");
    r.rank = job && job->t == PJ_OBJ ? pj_int(pj_get(job, "rank"), idx) : idx;
    snprintf(r.host, sizeof r.host, "%s", pj_str(pj_get(p, "host"), "?"));
    snprintf(r.file, sizeof r.file, "%s", path);
    snprintf(r.cmd, sizeof r.cmd, "%s", pj_str(pj_at(pj_get(p, "command"), 0), "?"));
    const pj_t *ex = pj_get(p, "exit");
    r.exit_status = pj_int(pj_get(ex, "status"), 0);
    r.exit_signal = pj_int(pj_get(ex, "signal"), 0);
    const pj_t *nodes = pj_get(pj_get(p, "machine"), "nodes");
    for (size_t i = 0; i < pj_len(nodes) && i < MN; i++)
        r.node_id[r.nnodes++] = pj_int(pj_get(pj_at(nodes, i), "id"), (int)i);
    const pj_t *mx = pj_get(p, "access_matrix");
    for (size_t a = 0; a < pj_len(mx) && a < MN; a++)
        for (size_t b = 0; b < pj_len(pj_at(mx, a)) && b < MN; b++) {
            r.matrix[a][b] = pj_u64(pj_at(pj_at(mx, a), b), 0);
            r.has_matrix |= r.matrix[a][b] != 0;
        }
    rank_run_nodes(&r, p);
    rank_policy(&r, p);
    VEC_PUSH(m->ranks, r);
    mrank_t *rp = &m->ranks.v[m->ranks.n - 1];
    const pj_t *vars = pj_get(p, "variables");
    for (size_t i = 0; i < pj_len(vars); i++)
        add_var(m, rp, pj_at(vars, i));
    pj_free(p);
    return LOCUS_OK;
}

int merge_pct(uint64_t a, uint64_t b) { return b ? (int)((a * 100 + b / 2) / b) : 0; }

static void finding(merge_t *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void finding(merge_t *m, const char *fmt, ...)
{
    char *s = NULL;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    if (s)
        VEC_PUSH(m->findings, s);
}

const mrank_t *merge_rank_of(const merge_t *m, int rank)
{
    for (size_t i = 0; i < m->ranks.n; i++)
        if (m->ranks.v[i].rank == rank)
            return &m->ranks.v[i];
    return NULL;
}

void merge_human(uint64_t b, char *buf, size_t cap)
{
    const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)b;
    int i = 0;
    while (v >= 1024 && i < 4) {
        v /= 1024;
        i++;
    }
    snprintf(buf, cap, i ? "%.1f %s" : "%.0f %s", v, u[i]);
}

static int cmp_own(const void *a, const void *b)
{
    const mfind_t *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1; /* not a difference: ranks come from the files, any int */
    bool ax = !strcmp(x->pattern, "away"), ay = !strcmp(y->pattern, "away"); /* the profile's own findings first */
    if (ax != ay)
        return ax - ay;
    int c = strcmp(x->pattern, y->pattern);
    if (c)
        return c;
    return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : strcmp(x->name, y->name);
}

/* One finding per rank and cause: the largest variable's, with the others
 * of that rank and cause named after it (a rank bound away has every
 * variable away, the runtime's small tables too). */
static void own_findings(merge_t *m)
{
    if (m->own.n)
        qsort(m->own.v, m->own.n, sizeof *m->own.v, cmp_own);
    for (size_t i = 0; i < m->own.n;) {
        size_t j = i + 1;
        while (j < m->own.n && m->own.v[j].rank == m->own.v[i].rank && !strcmp(m->own.v[j].pattern, m->own.v[i].pattern))
            j++;
        if (j - i == 1) {
            finding(m, "%s", m->own.v[i].text);
        } else {
            char more[512] = "";
            for (size_t k = i + 1; k < j && k < i + 6; k++) {
                size_t l = strlen(more);
                snprintf(more + l, sizeof more - l, "%s%s", l ? ", " : "", m->own.v[k].name);
            }
            finding(m, "%s (the same for %zu more variable%s of rank %d: %s%s)", m->own.v[i].text, j - i - 1,
                    j - i - 1 == 1 ? "" : "s", m->own.v[i].rank, more, j - i - 1 > 5 ? ", ..." : "");
        }
        i = j;
    }
}

/* Where ranks differ, and the job's findings. */
static void analyse(merge_t *m)
{
    for (size_t i = 0; i < m->vars.n; i++) {
        mvar_t *v = &m->vars.v[i];
        uint64_t lo = UINT64_MAX, hi = 0;
        int good = 0, bad = 0;
        for (size_t k = 0; k < v->per.n; k++) {
            mper_t *p = &v->per.v[k];
            v->bytes += p->bytes;
            v->pages += p->pages;
            v->local += p->local;
            lo = p->bytes < lo ? p->bytes : lo;
            hi = p->bytes > hi ? p->bytes : hi;
            if (p->pages) {
                good += merge_pct(p->local, p->pages) >= 80;
                bad += merge_pct(p->local, p->pages) < 50;
            }
            if (k && strcmp(p->pattern, v->per.v[0].pattern))
                v->pattern_differs = true;
        }
        /* unequal by a quarter and by at least a MiB: not the runtime's small tables */
        v->imbalance = v->per.n >= 2 && hi > lo + lo / 4 && hi - lo >= (1u << 20);
        v->remote_rank = v->per.n >= 2 && bad && good;
        if (v->imbalance) {
            char a[32], b[32];
            merge_human(hi, a, sizeof a);
            merge_human(lo, b, sizeof b);
            int rh = -1;
            for (size_t k = 0; k < v->per.n; k++)
                if (v->per.v[k].bytes == hi)
                    rh = v->per.v[k].rank;
            finding(m, "%s (%s): ranks allocate unequal amounts: rank %d %s, the smallest %s (%.1fx) → balance the "
                       "decomposition", v->name, v->site, rh, a, b, lo ? (double)hi / (double)lo : 0.0);
        }
        /* per-rank findings: said once when every rank has it */
        bool same = v->per.n == m->ranks.n && !v->pattern_differs && v->per.v[0].finding[0];
        for (size_t k = 0; k < v->per.n; k++) {
            mper_t *p = &v->per.v[k];
            const mrank_t *r = merge_rank_of(m, p->rank);
            if (same) {
                finding(m, "all %zu ranks: %s", m->ranks.n, p->finding);
                break;
            }
            mfind_t o;
            memset(&o, 0, sizeof o);
            o.rank = p->rank;
            o.bytes = p->bytes;
            snprintf(o.name, sizeof o.name, "%s", v->name);
            if (p->finding[0]) {
                snprintf(o.pattern, sizeof o.pattern, "%s", p->pattern);
                snprintf(o.text, sizeof o.text, "rank %d (%s): %s", p->rank, r ? r->host : "?", p->finding);
            } else if (v->remote_rank && p->pages && merge_pct(p->local, p->pages) < 50) {
                snprintf(o.pattern, sizeof o.pattern, "away");
                bool named = !strchr(v->name, '@'); /* heap@site names carry the site already */
                snprintf(o.text, sizeof o.text,
                         "rank %d (%s): %s%s%s%s: %d %% of its pages are away from the nodes its threads ran on; "
                         "the other ranks' are local → check that rank's memory binding",
                         p->rank, r ? r->host : "?", v->name, named ? " (" : "", named ? v->site : "",
                         named ? ")" : "", 100 - merge_pct(p->local, p->pages));
            } else {
                continue;
            }
            VEC_PUSH(m->own, o);
        }
    }
    own_findings(m);
}

static int cmp_rank(const void *a, const void *b)
{
    int x = ((const mrank_t *)a)->rank, y = ((const mrank_t *)b)->rank;
    return (x > y) - (x < y);
}

static void merge_free(merge_t *m)
{
    for (size_t i = 0; i < m->vars.n; i++)
        free(m->vars.v[i].per.v);
    free(m->vars.v);
    free(m->ranks.v);
    for (size_t i = 0; i < m->findings.n; i++)
        free(m->findings.v[i]);
    free(m->findings.v);
    free(m->own.v);
}

static int cmp_var(const void *a, const void *b)
{
    const mvar_t *x = a, *y = b;
    /* ranks that differ first, then size */
    int dx = x->imbalance || x->remote_rank || x->pattern_differs, dy = y->imbalance || y->remote_rank || y->pattern_differs;
    if (dx != dy)
        return dy - dx;
    return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : strcmp(x->key, y->key);
}

locus_status_t locus_prof_merge(const char *const *paths, int n, const char *output, FILE *report)
{
    if (!paths || n < 1)
        return lc_err(LOCUS_ERR_INVALID, "no profiles to merge: expected one file per rank (prof.*.json)");
    merge_t m;
    memset(&m, 0, sizeof m);
    locus_status_t st = LOCUS_OK;
    for (int i = 0; i < n && st == LOCUS_OK; i++)
        st = read_rank(&m, paths[i], i);
    for (size_t i = 1; st == LOCUS_OK && i < m.ranks.n; i++)
        for (size_t j = 0; j < i; j++)
            if (m.ranks.v[i].rank == m.ranks.v[j].rank)
                st = lc_err(LOCUS_ERR_INVALID, "'%s' and '%s' are both rank %d: profiles of two jobs?",
                            m.ranks.v[j].file, m.ranks.v[i].file, m.ranks.v[i].rank);
    if (st == LOCUS_OK) {
        qsort(m.ranks.v, m.ranks.n, sizeof *m.ranks.v, cmp_rank);
        analyse(&m);
        if (m.vars.n)
            qsort(m.vars.v, m.vars.n, sizeof *m.vars.v, cmp_var);
        if (output)
            st = merge_write_json(&m, output);
        if (report)
            merge_print(&m, report);
    }
    merge_free(&m);
    return st;
}
