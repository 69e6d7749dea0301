/* One plain finding per variable, with a suggested fix, for the three
 * shapes the Memphis studies found (CICE halo copy, shared tables, arrays
 * allocated every step) and the general remote-access case. */
#include "prof/prof_internal.h"

#pragma GCC diagnostic ignored "-Wformat-truncation" /* long names are cut, on purpose */

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MIN_SAMPLES 8

static int os_node(const prof_session_t *s, int idx)
{
    locus_topo_node_t nd;
    if (locus_topo_node(s->topo, idx, &nd) != LOCUS_OK)
        return idx;
    return nd.os_index;
}

static int pct(uint64_t a, uint64_t b) { return b ? (int)((a * 100 + b / 2) / b) : 0; }

/* How much knowing which eighth of the variable was accessed tells about
 * the accessing node: ~0 when every node uses every part the same way
 * (shared), large when each part has its own node (partitioned). With few
 * samples per eighth its busiest node leads by chance alone, so the lead a
 * shared variable would show is taken off: for k equally busy nodes and n
 * samples the busiest exceeds n/k by about m_k * sqrt(n/k), m_k the expected
 * largest of k standard normals (a 4-node table with ~85 samples read 0.10
 * by chance, and sometimes above the 0.15 that separates the patterns). */
static double partitioned(const prof_session_t *s, const prof_var_t *v)
{
    static const double m[] = {0, 0, 0.56, 0.85, 1.03, 1.16, 1.27, 1.35, 1.42};
    uint64_t dom = 0, all = 0, per_node[PROF_MAX_NODES] = {0};
    double chance = 0;
    int k = 0;
    for (int n = 0; n < s->nnodes && n < PROF_MAX_NODES; n++)
        for (int p = 0; p < 8; p++)
            if (v->region_node[p][n]) {
                k++;
                break;
            }
    for (int p = 0; p < 8; p++) {
        uint64_t best = 0, np = 0;
        for (int n = 0; n < s->nnodes && n < PROF_MAX_NODES; n++) {
            per_node[n] += v->region_node[p][n];
            np += v->region_node[p][n];
            if (v->region_node[p][n] > best)
                best = v->region_node[p][n];
        }
        dom += best;
        all += np;
        if (k >= 2)
            chance += sqrt((double)np / k);
    }
    uint64_t base = 0;
    for (int n = 0; n < s->nnodes && n < PROF_MAX_NODES; n++)
        if (per_node[n] > base)
            base = per_node[n];
    if (!all)
        return 0;
    if (k >= 2)
        chance = m[k < 8 ? k : 8] * (chance - sqrt((double)all / k));
    double lead = (double)(dom - base) - (chance > 0 ? chance : 0);
    return lead > 0 ? lead / (double)all : 0;
}

static int accessing_nodes(const prof_session_t *s, const prof_var_t *v, uint64_t *by_node)
{
    int k = 0;
    memset(by_node, 0, sizeof(uint64_t) * PROF_MAX_NODES);
    for (size_t i = 0; i < v->acc_lines.n; i++)
        for (int n = 0; n < s->nnodes && n < PROF_MAX_NODES; n++)
            by_node[n] += v->acc_lines.v[i].by_node[n];
    for (int n = 0; n < s->nnodes && n < PROF_MAX_NODES; n++)
        k += by_node[n] * 10 >= v->acc_samples && by_node[n] > 0;
    return k;
}

/* The line paying the most remote accesses, and the nodes its remote
 * accesses come from ("1" or "1,3"). */
static const prof_line_t *worst_line(const prof_session_t *s, const prof_var_t *v, int dom, char *nodes, size_t cap)
{
    const prof_line_t *w = NULL;
    for (size_t i = 0; i < v->acc_lines.n; i++)
        if (v->acc_lines.v[i].remote && (!w || v->acc_lines.v[i].remote > w->remote))
            w = &v->acc_lines.v[i];
    nodes[0] = 0;
    if (!w)
        return NULL;
    for (int n = 0; n < s->nnodes && n < PROF_MAX_NODES; n++) {
        if (n == dom || !w->by_node[n])
            continue;
        size_t l = strlen(nodes);
        snprintf(nodes + l, cap - l, "%s%d", l ? "," : "", os_node(s, n));
    }
    if (!nodes[0])
        snprintf(nodes, cap, "other");
    return w;
}

const prof_start_t *prof_start_of(const prof_session_t *s, int pid)
{
    const prof_start_t *st = NULL;
    for (size_t i = 0; i < s->starts.n; i++)
        if (s->starts.v[i].pid == pid)
            st = &s->starts.v[i]; /* the last image of the pid */
    return st;
}

const char *prof_policy_name(int mode)
{
    static const char *const names[] = {"default", "preferred", "bind", "interleave", "local", "preferred-many",
                                        "weighted-interleave"};
    mode &= 0xff; /* MPOL_F_STATIC_NODES / RELATIVE_NODES */
    return mode >= 0 && mode < (int)(sizeof names / sizeof names[0]) ? names[mode] : "unknown";
}

static void node_list(const uint64_t *mask, int words, char *buf, size_t cap)
{
    buf[0] = 0;
    for (int n = 0; n < words * 64; n++)
        if (mask[n / 64] >> (n % 64) & 1) {
            size_t l = strlen(buf);
            snprintf(buf + l, cap - l, "%s%d", l ? "," : "", n);
        }
}

/* Pages mostly on one node while the threads that first touched them ran
 * on another: not the first-touch policy. The process's memory policy at
 * start (numactl --membind, the launcher) says why. Returns true if it
 * wrote the finding. */
static bool policy_placement(const prof_session_t *s, prof_var_t *v, int dom, uint64_t best, uint64_t pages)
{
    uint64_t ft = 0, ft_best = 0;
    int ft_dom = -1;
    for (int n = 0; n < s->nnodes && n < PROF_MAX_NODES; n++) {
        ft += v->ft_by_node[n];
        if (v->ft_by_node[n] > ft_best) {
            ft_best = v->ft_by_node[n];
            ft_dom = n;
        }
    }
    if (s->nnodes < 2 || strcmp(v->placement_source, "move_pages") || pct(best, pages) < 80 || !ft ||
        pct(ft_best, ft) < 60 || ft_dom == dom || v->ft_by_node[dom] * 5 > ft)
        return false;
    int dn = os_node(s, dom), fn = os_node(s, ft_dom);
    const prof_start_t *st = prof_start_of(s, v->pid);
    int mode = st ? st->policy_mode & 0xff : -1;
    char nodes[128] = "";
    if (st)
        node_list(st->policy_nodes, 4, nodes, sizeof nodes);
    const char *ft_site = v->ft_sites.n ? v->ft_sites.v[0].loc : "?";
    snprintf(v->pattern, sizeof v->pattern, "policy-placement");
    if (mode == 1 || mode == 2 || mode == 3 || mode == 5 || mode == 6)
        snprintf(v->finding, sizeof v->finding,
                 "%s: %d %% of pages on node %d, but first touched by threads on node %d at %s: the memory policy "
                 "was set from outside (%s to node %s when the process started: numactl --membind or the launcher), "
                 "not by the first touch → remove that binding, or bind the memory to node %d where the threads run",
                 v->name, pct(best, pages), dn, fn, ft_site, prof_policy_name(mode), nodes, fn);
    else
        snprintf(v->finding, sizeof v->finding,
                 "%s: %d %% of pages on node %d, but first touched by threads on node %d at %s: not the first touch "
                 "(no memory policy at start: the program set one itself with mbind/set_mempolicy, or node %d was "
                 "full) → check the program's memory binding, or free memory on node %d",
                 v->name, pct(best, pages), dn, fn, ft_site, fn, fn);
    return true;
}

void prof_finding(const prof_session_t *s, prof_var_t *v)
{
    v->finding[0] = 0;
    uint64_t pages = 0, best = 0;
    int dom = -1;
    for (int n = 0; n < s->nnodes && n < PROF_MAX_NODES; n++) {
        pages += v->pages_by_node[n];
        if (v->pages_by_node[n] > best) {
            best = v->pages_by_node[n];
            dom = n;
        }
    }
    if (!strcmp(v->kind, "other") || (!pages && !v->acc_samples))
        return;
    const char *ft_site = v->ft_sites.n ? v->ft_sites.v[0].loc : "?";
    char who[64];
    if (!v->ft_sites.n || v->ft_sites.v[0].tids_n <= 1)
        snprintf(who, sizeof who, "one thread");
    else
        snprintf(who, sizeof who, "several threads");
    uint64_t by_node[PROF_MAX_NODES];
    int nacc = accessing_nodes(s, v, by_node);
    char rnodes[64];
    const prof_line_t *w = worst_line(s, v, dom, rnodes, sizeof rnodes);
    uint64_t known = v->acc_local + v->acc_remote; /* samples whose page node is known */
    bool remote = s->nnodes > 1 && known >= MIN_SAMPLES && pct(v->acc_remote, known) >= 20 && w;
    int dn = dom >= 0 ? os_node(s, dom) : -1;
    size_t cap = sizeof v->finding;

    if (dom >= 0 && policy_placement(s, v, dom, best, pages))
        return;
    if (v->allocations >= 4 && strcmp(v->kind, "global")) {
        snprintf(v->pattern, sizeof v->pattern, "allocated-afresh");
        int n = snprintf(v->finding, cap,
                         "%s: allocated %llu times at %s; every allocation first-touches new pages "
                         "(~%llu page first touches), %d %% of its pages on node %d, first touched by %s at %s",
                         v->name, (unsigned long long)v->allocations, v->site, (unsigned long long)v->ft_pages,
                         pct(best, pages), dn, who, ft_site);
        if (remote && n > 0 && (size_t)n < cap)
            n += snprintf(v->finding + n, cap - (size_t)n, "; %d %% of accesses from node-%s threads in %s are remote",
                          pct(w->remote, w->local + w->remote), rnodes, w->loc);
        if (n > 0 && (size_t)n < cap)
            snprintf(v->finding + n, cap - (size_t)n,
                     " → allocate %s once, outside the time-step loop, and reuse it%s", v->name,
                     remote ? ", initialised in parallel with the loop that uses it" : "");
        return;
    }
    if (!remote)
        return;
    double part = partitioned(s, v);
    if (nacc >= 2 && part < 0.15) {
        snprintf(v->pattern, sizeof v->pattern, "shared-hotspot");
        snprintf(v->finding, cap,
                 "%s: shared hot spot: every part of it is used from %d nodes; %d %% of sampled accesses are remote "
                 "(%s: %d %% of its accesses); %d %% of its pages are on node %d (first touched by %s at %s) → "
                 "interleave %s across the nodes to spread the traffic, or give each node its own copy and combine them",
                 v->name, nacc, pct(v->acc_remote, known), w->loc, pct(w->remote, w->local + w->remote),
                 pct(best, pages), dn, who, ft_site, v->name);
        return;
    }
    if (pages && pct(best, pages) >= 80) {
        snprintf(v->pattern, sizeof v->pattern, "one-node-init");
        snprintf(v->finding, cap,
                 "%s: %d %% of pages on node %d, first touched by %s at %s; %d %% of accesses from node-%s threads "
                 "in %s are remote → initialise %s in parallel with the schedule of %s, or interleave it",
                 v->name, pct(best, pages), dn, who, ft_site, pct(w->remote, w->local + w->remote), rnodes, w->loc, v->name,
                 w->loc);
        return;
    }
    snprintf(v->pattern, sizeof v->pattern, "remote");
    snprintf(v->finding, cap,
             "%s: %d %% of sampled accesses are remote, most in %s (from node-%s threads); pages were first touched "
             "by %s at %s → first-touch each part from the threads that use it (same schedule as %s)",
             v->name, pct(v->acc_remote, known), w->loc, rnodes, who, ft_site, w->loc);
}
