/* The job report (locus profile --merge): the terminal text and the
 * "locus-job/1" JSON of what prof_merge.c put together. */
#include "prof/prof_merge.h"
#include "core/error.h"
#include "prof/prof_json.h"

#pragma GCC diagnostic ignored "-Wformat-truncation" /* long names are cut, on purpose */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char *pct_str(uint64_t a, uint64_t b, char *buf, size_t cap)
{
    if (!b)
        return "-";
    snprintf(buf, cap, "%d %%", merge_pct(a, b));
    return buf;
}

static void nodes_str(const mrank_t *r, uint64_t mask, char *buf, size_t cap)
{
    buf[0] = 0;
    for (int k = 0; k < r->nnodes && k < 64; k++)
        if (mask >> k & 1) {
            size_t l = strlen(buf);
            snprintf(buf + l, cap - l, "%s%d", l ? "," : "", r->node_id[k]);
        }
    if (!buf[0])
        snprintf(buf, cap, "?");
}

static int count_hosts(const merge_t *m)
{
    int hosts = 0;
    for (size_t i = 0; i < m->ranks.n; i++) {
        bool seen = false;
        for (size_t j = 0; j < i; j++)
            seen |= !strcmp(m->ranks.v[i].host, m->ranks.v[j].host);
        hosts += !seen;
    }
    return hosts;
}

static void print_ranks(const merge_t *m, FILE *f)
{
    fprintf(f, "\n  %-5s %-16s %-6s %-12s %-24s %s\n", "rank", "host", "exit", "ran on node", "memory policy",
            "pages local");
    for (size_t i = 0; i < m->ranks.n; i++) {
        const mrank_t *r = &m->ranks.v[i];
        char nodes[64], lp[16];
        nodes_str(r, r->run_nodes, nodes, sizeof nodes);
        fprintf(f, "  %-5d %-16.16s %-6d %-12s %-24.24s %s\n", r->rank, r->host, r->exit_status, nodes, r->policy,
                pct_str(r->local, r->pages, lp, sizeof lp));
    }
}

/* A variable's line per rank, printed only when the ranks differ in a way
 * a finding names (imbalance, a remote rank, different access patterns). */
static void print_var_ranks(const merge_t *m, const mvar_t *v, FILE *f)
{
    for (size_t k = 0; k < v->per.n; k++) {
        const mper_t *p = &v->per.v[k];
        const mrank_t *r = merge_rank_of(m, p->rank);
        char pages[128] = "", sz[32], lp[16];
        for (int n = 0; r && n < r->nnodes && n < 8; n++) {
            size_t l = strlen(pages);
            snprintf(pages + l, sizeof pages - l, "%s%llu", n ? "/" : "", (unsigned long long)p->by_node[n]);
        }
        merge_human(p->bytes, sz, sizeof sz);
        const char *why =
            v->remote_rank && p->pages && merge_pct(p->local, p->pages) < 50 ? "  <- memory away from its threads" : "";
        fprintf(f, "    rank %-4d %-40s %10s %12s  pages per node %s%s%s%s\n", p->rank, "", sz,
                pct_str(p->local, p->pages, lp, sizeof lp), pages, why, p->pattern[0] ? "  " : "", p->pattern);
    }
}

static void print_vars(const merge_t *m, FILE *f)
{
    fprintf(f, "\n  %-20s %-6s %-24s %5s %10s %12s\n", "variable", "kind", "site", "ranks", "size", "pages local");
    for (size_t i = 0; i < m->vars.n && i < 20; i++) {
        const mvar_t *v = &m->vars.v[i];
        char sz[32], lp[16];
        merge_human(v->bytes, sz, sizeof sz);
        fprintf(f, "  %-20.20s %-6s %-24.24s %5zu %10s %12s\n", v->name, v->kind, v->site, v->per.n, sz,
                pct_str(v->local, v->pages, lp, sizeof lp));
        if (v->imbalance || v->remote_rank || v->pattern_differs)
            print_var_ranks(m, v, f);
    }
}

/* The access matrix of one host: the sum over its ranks (rank i is the
 * host's first). */
static void print_host_matrix(const merge_t *m, size_t i, FILE *f)
{
    const mrank_t *r = &m->ranks.v[i];
    uint64_t sum[MN][MN] = {{0}};
    bool any = false;
    for (size_t j = i; j < m->ranks.n; j++)
        if (!strcmp(m->ranks.v[j].host, r->host))
            for (int a = 0; a < r->nnodes; a++)
                for (int b = 0; b < r->nnodes; b++) {
                    sum[a][b] += m->ranks.v[j].matrix[a][b];
                    any |= sum[a][b] != 0;
                }
    if (!any)
        return;
    fprintf(f, "\n  %s: sampled accesses, thread node (rows) x page node (columns):\n       ", r->host);
    for (int b = 0; b < r->nnodes; b++)
        fprintf(f, " %8s%d", "node", r->node_id[b]);
    fputc('\n', f);
    for (int a = 0; a < r->nnodes; a++) {
        fprintf(f, "  node%-2d", r->node_id[a]);
        for (int b = 0; b < r->nnodes; b++)
            fprintf(f, " %9llu", (unsigned long long)sum[a][b]);
        fputc('\n', f);
    }
}

void merge_print(const merge_t *m, FILE *f)
{
    int hosts = count_hosts(m);
    fprintf(f, "locus profile: job report of %s — %zu rank%s on %d host%s\n", m->ranks.n ? m->ranks.v[0].cmd : "?",
            m->ranks.n, m->ranks.n == 1 ? "" : "s", hosts, hosts == 1 ? "" : "s");
    print_ranks(m, f);
    print_vars(m, f);
    for (size_t i = 0; i < m->ranks.n; i++) { /* one access matrix per multi-node host */
        bool first = true;
        for (size_t j = 0; j < i; j++)
            first &= strcmp(m->ranks.v[j].host, m->ranks.v[i].host) != 0;
        if (first && m->ranks.v[i].nnodes >= 2)
            print_host_matrix(m, i, f);
    }
    fprintf(f, "\n  findings:\n");
    if (!m->findings.n)
        fprintf(f, "    none\n");
    for (size_t i = 0; i < m->findings.n; i++)
        fprintf(f, "  - %s\n", m->findings.v[i]);
}

locus_status_t merge_write_json(const merge_t *m, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return lc_err_errno(LOCUS_ERR_SYSTEM, errno, "cannot write the job report to '%s'", path);
    fprintf(f, "{\n  \"schema\": \"locus-job/1\",\n  \"ranks\": [");
    for (size_t i = 0; i < m->ranks.n; i++) {
        const mrank_t *r = &m->ranks.v[i];
        char nodes[64];
        nodes_str(r, r->run_nodes, nodes, sizeof nodes);
        fprintf(f, "%s\n    {\"rank\": %d, \"host\": ", i ? "," : "", r->rank);
        pj_write_str(f, r->host);
        fprintf(f, ", \"file\": ");
        pj_write_str(f, r->file);
        fprintf(f, ", \"exit\": %d, \"ran_on_nodes\": [%s], \"policy\": ", r->exit_status, strcmp(nodes, "?") ? nodes : "");
        pj_write_str(f, r->policy);
        fprintf(f, ", \"pages\": %llu, \"pages_local\": %llu}", (unsigned long long)r->pages, (unsigned long long)r->local);
    }
    fprintf(f, "\n  ],\n  \"variables\": [");
    for (size_t i = 0; i < m->vars.n; i++) {
        const mvar_t *v = &m->vars.v[i];
        fprintf(f, "%s\n    {\"name\": ", i ? "," : "");
        pj_write_str(f, v->name);
        fprintf(f, ", \"kind\": "); /* as the profile had it: any text */
        pj_write_str(f, v->kind);
        fprintf(f, ", \"site\": ");
        pj_write_str(f, v->site);
        fprintf(f, ", \"ranks\": %zu, \"bytes\": %llu, \"pages\": %llu, \"pages_local\": %llu, \"imbalance\": %s, "
                   "\"remote_rank\": %s, \"per_rank\": [",
                v->per.n, (unsigned long long)v->bytes, (unsigned long long)v->pages, (unsigned long long)v->local,
                v->imbalance ? "true" : "false", v->remote_rank ? "true" : "false");
        for (size_t k = 0; k < v->per.n; k++) {
            const mper_t *p = &v->per.v[k];
            const mrank_t *r = merge_rank_of(m, p->rank);
            fprintf(f, "%s{\"rank\": %d, \"bytes\": %llu, \"pages\": %llu, \"pages_local\": %llu, \"pages_by_node\": [",
                    k ? ", " : "", p->rank, (unsigned long long)p->bytes, (unsigned long long)p->pages,
                    (unsigned long long)p->local);
            for (int n = 0; r && n < r->nnodes; n++)
                fprintf(f, "%s%llu", n ? "," : "", (unsigned long long)p->by_node[n]);
            fprintf(f, "], \"pattern\": ");
            pj_write_str(f, p->pattern);
            fputc('}', f);
        }
        fprintf(f, "]}");
    }
    fprintf(f, "\n  ],\n  \"findings\": [");
    for (size_t i = 0; i < m->findings.n; i++) {
        fputs(i ? ",\n    " : "\n    ", f);
        pj_write_str(f, m->findings.v[i]);
    }
    fprintf(f, "%s]\n}\n", m->findings.n ? "\n  " : "");
    if (fclose(f) != 0)
        return lc_err_errno(LOCUS_ERR_SYSTEM, errno, "writing '%s'", path);
    return LOCUS_OK;
}
