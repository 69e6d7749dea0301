/* The profile as JSON (schema: python/locus/schema/profile.schema.json,
 * keys documented in docs/PROFILER.md) and as a terminal report. */
#include "prof/prof_internal.h"

#pragma GCC diagnostic ignored "-Wformat-truncation" /* long names are cut, on purpose */
#include "core/error.h"
#include "prof/prof_json.h"

#include <locus/version.h>

#include <errno.h>
#include <string.h>

#define PROF_SCHEMA_ID "locus-profile/1"
#define MAX_LINES 20


static int os_node(const prof_session_t *s, int idx)
{
    locus_topo_node_t nd;
    return locus_topo_node(s->topo, idx, &nd) == LOCUS_OK ? nd.os_index : idx;
}

static void jnodes(FILE *f, const prof_session_t *s, const uint64_t *v)
{
    fputc('[', f);
    for (int n = 0; n < s->nnodes && n < PROF_MAX_NODES; n++)
        fprintf(f, "%s%llu", n ? "," : "", (unsigned long long)v[n]);
    fputc(']', f);
}

static void jsampler(FILE *f, const char *name, const char *status, const char *detail, uint64_t samples,
                     uint64_t lost, bool last)
{
    fprintf(f, "    {\"name\": \"%s\", \"status\": \"%s\", \"detail\": ", name, status);
    pj_write_str(f, detail);
    fprintf(f, ", \"samples\": %llu, \"lost\": %llu}%s\n", (unsigned long long)samples, (unsigned long long)lost,
            last ? "" : ",");
}

static void jlines(FILE *f, const prof_session_t *s, const void *vec_, bool access)
{
    const VEC(prof_line_t) *vec = vec_;
    fputc('[', f);
    for (size_t i = 0; i < vec->n && i < MAX_LINES; i++) {
        const prof_line_t *l = &vec->v[i];
        fprintf(f, "%s\n        {\"location\": ", i ? "," : "");
        pj_write_str(f, l->loc);
        if (access)
            fprintf(f, ", \"samples\": %llu, \"local\": %llu, \"remote\": %llu", (unsigned long long)l->count,
                    (unsigned long long)l->local, (unsigned long long)l->remote);
        else
            fprintf(f, ", \"pages\": %llu, \"threads\": %llu", (unsigned long long)l->count,
                    (unsigned long long)l->tids_n);
        fprintf(f, ", \"by_thread_node\": ");
        jnodes(f, s, l->by_node);
        fputc('}', f);
    }
    fputc(']', f);
}

static void jvar(FILE *f, const prof_session_t *s, const prof_var_t *v, bool last)
{
    fprintf(f, "    {\"name\": ");
    pj_write_str(f, v->name);
    fprintf(f, ", \"kind\": \"%s\", \"site\": ", v->kind);
    pj_write_str(f, v->site);
    fprintf(f, ",\n      \"alloc_path\": [");
    for (int i = 0; i < v->npath; i++) {
        fputs(i ? ", " : "", f);
        pj_write_str(f, v->path[i]);
    }
    fprintf(f, "], \"allocations\": %llu, \"bytes\": %llu, \"max_bytes\": %llu,\n",
            (unsigned long long)v->allocations, (unsigned long long)v->bytes, (unsigned long long)v->max_bytes);
    fprintf(f, "      \"pages_by_node\": ");
    jnodes(f, s, v->pages_by_node);
    fprintf(f, ", \"pages_absent\": %llu, \"placement_source\": \"%s\",\n", (unsigned long long)v->pages_absent,
            v->placement_source);
    fprintf(f, "      \"first_touch\": {\"pages\": %llu, \"threads\": %zu, \"by_node\": ",
            (unsigned long long)v->ft_pages, v->ft_tids.n);
    jnodes(f, s, v->ft_by_node);
    fprintf(f, ", \"sites\": ");
    jlines(f, s, &v->ft_sites, false);
    fprintf(f, "},\n      \"accesses\": {\"samples\": %llu, \"local\": %llu, \"remote\": %llu, \"lines\": ",
            (unsigned long long)v->acc_samples, (unsigned long long)v->acc_local, (unsigned long long)v->acc_remote);
    jlines(f, s, &v->acc_lines, true);
    fprintf(f, "},\n      \"pattern\": ");
    pj_write_str(f, v->pattern);
    fprintf(f, ", \"finding\": ");
    pj_write_str(f, v->finding);
    fprintf(f, "}%s\n", last ? "" : ",");
}

static void jmask(FILE *f, const uint64_t *mask, int words)
{
    fputc('[', f);
    int k = 0;
    for (int n = 0; n < words * 64; n++)
        if (mask[n / 64] >> (n % 64) & 1)
            fprintf(f, "%s%d", k++ ? "," : "", n);
    fputc(']', f);
}

static void jprocesses(FILE *f, const prof_session_t *s)
{
    fprintf(f, "  \"processes\": [");
    for (size_t i = 0; i < s->procs.n; i++) {
        const prof_proc_t *p = &s->procs.v[i];
        fprintf(f, "%s{\"pid\": %d, \"ppid\": %d, \"comm\": ", i ? ",\n    " : "", p->pid, p->ppid);
        pj_write_str(f, p->comm);
        fprintf(f, ", \"execs\": %d", p->gen);
        const prof_start_t *st = prof_start_of(s, p->pid);
        if (st) {
            fprintf(f, ", \"policy\": {\"mode\": \"%s\", \"nodes\": ",
                    st->policy_mode < 0 ? "unknown" : prof_policy_name(st->policy_mode));
            jmask(f, st->policy_nodes, 4);
            fprintf(f, "}, \"cpus\": ");
            jmask(f, st->cpus, 16);
        }
        fputc('}', f);
    }
    fprintf(f, "],\n");
}

static void jthreads(FILE *f, const prof_session_t *s, const prof_result_t *r)
{
    fprintf(f, "  \"threads\": [");
    for (size_t i = 0; i < r->threads.n && i < 1024; i++) {
        const prof_thread_t *t = &r->threads.v[i];
        fprintf(f, "%s{\"pid\": %d, \"tid\": %d, \"samples\": %llu, \"cpus\": [", i ? ",\n    " : "", t->pid,
                t->tid, (unsigned long long)t->samples);
        for (int k = 0; k < t->ncpus; k++)
            fprintf(f, "%s%d", k ? "," : "", t->cpu[k]);
        fprintf(f, "], \"nodes\": [");
        for (int k = 0; k < t->ncpus; k++)
            fprintf(f, "%s%d", k ? "," : "", os_node(s, prof_cpu_node(s, t->cpu[k])));
        fprintf(f, "]}");
    }
    fprintf(f, "],\n");
}

static void jexit(FILE *f, const prof_session_t *s, const prof_result_t *r)
{
    fprintf(f, "  \"exit\": {\"status\": %d, \"code\": ", s->exit_status);
    if (s->exit_signal) {
        const char *nm = sigabbrev_np(s->exit_signal);
        fprintf(f, "null, \"signal\": %d, \"signal_name\": \"SIG%s\"", s->exit_signal, nm ? nm : "?");
        if (s->crash.valid && s->crash.sig == s->exit_signal) {
            fprintf(f, ", \"fault\": {\"location\": ");
            pj_write_str(f, r->fault_loc);
            fprintf(f, ", \"address\": \"0x%llx\", \"ip\": \"0x%llx\", \"tid\": %d}",
                    (unsigned long long)s->crash.addr, (unsigned long long)s->crash.ip, s->crash.tid);
        }
        fprintf(f, "},\n");
    } else {
        fprintf(f, "%d, \"signal\": null},\n", s->exit_code);
    }
}

static void jjob(FILE *f, const prof_session_t *s)
{
    fprintf(f, "  \"host\": ");
    pj_write_str(f, s->job.host);
    if (s->job.rank >= 0)
        fprintf(f, ",\n  \"job\": {\"rank\": %d, \"size\": %d, \"from\": \"%s\"}", s->job.rank,
                s->job.size, s->job.var);
    else
        fprintf(f, ",\n  \"job\": null");
    fprintf(f, ",\n  \"shim\": {\"status\": ");
    pj_write_str(f, s->shim_status[0] ? s->shim_status : "ok");
    fprintf(f, ", \"processes\": %d, \"early_allocations\": %llu, \"untracked\": %llu, \"log_errors\": %llu},\n",
            s->shim_procs, (unsigned long long)s->shim_early, (unsigned long long)s->shim_untracked,
            (unsigned long long)s->shim_log_errors);
}

static void jmachine(FILE *f, const prof_session_t *s)
{
    fprintf(f, "  \"machine\": {\"nodes\": [");
    for (int n = 0; n < s->nnodes; n++) {
        locus_topo_node_t nd;
        if (locus_topo_node(s->topo, n, &nd) != LOCUS_OK)
            continue;
        fprintf(f, "%s{\"id\": %d, \"cpus\": [", n ? ", " : "", nd.os_index);
        for (int c = 0; c < nd.num_cpus; c++)
            fprintf(f, "%s%d", c ? "," : "", nd.cpus[c]);
        fprintf(f, "], \"memory_bytes\": %llu}", (unsigned long long)nd.memory_bytes);
    }
    fprintf(f, "], \"distances\": [");
    for (int a = 0; a < s->nnodes; a++) {
        fprintf(f, "%s[", a ? ", " : "");
        for (int b = 0; b < s->nnodes; b++)
            fprintf(f, "%s%d", b ? "," : "", locus_topo_distance(s->topo, a, b));
        fputc(']', f);
    }
    fprintf(f, "]},\n");
}

locus_status_t prof_write_json(const prof_session_t *s, const prof_result_t *r, FILE *f)
{
    fprintf(f, "{\n  \"schema\": \"%s\",\n  \"locus_version\": \"%s\",\n  \"command\": [", PROF_SCHEMA_ID,
            LOCUS_VERSION_STRING);
    for (int i = 0; s->argv[i]; i++) {
        fputs(i ? ", " : "", f);
        pj_write_str(f, s->argv[i]);
    }
    fprintf(f, "],\n");
    jexit(f, s, r);
    jjob(f, s);
    fprintf(f, "  \"duration_s\": %.6f,\n", (double)(s->t_end - s->t_start) * 1e-9);
    jmachine(f, s);
    fprintf(f, "  \"samplers\": [\n");
    jsampler(f, "first-touch", s->ft_on ? "on" : (strncmp(s->ft_detail, "off", 3) ? "unavailable" : "off"),
             s->ft_detail, s->ft_samples, s->ft_lost, false);
    jsampler(f, "access", s->acc_on ? "on" : (strncmp(s->acc_detail, "off", 3) ? "unavailable" : "off"),
             s->acc_detail, s->acc.n, s->acc_dropped, false);
    jsampler(f, "pmu", s->pmu_status, s->pmu_detail, s->pmu_samples, 0, true);
    fprintf(f, "  ],\n  \"symbols\": \"%s\",\n  \"notes\": [", s->stripped ? "missing" : "ok");
    for (size_t i = 0; i < s->notes.n; i++) {
        fputs(i ? ", " : "", f);
        pj_write_str(f, s->notes.v[i]);
    }
    fprintf(f, "],\n");
    jprocesses(f, s);
    jthreads(f, s, r);
    fprintf(f, "  \"access_matrix\": [");
    for (int a = 0; a < s->nnodes && a < PROF_MAX_NODES; a++) {
        fputs(a ? ", " : "", f);
        jnodes(f, s, r->matrix[a]);
    }
    fprintf(f, "],\n  \"totals\": {\"first_touches\": %llu, \"first_touches_unattributed\": %llu, "
               "\"first_touches_refaults\": %llu, \"access_samples\": %llu, \"access_unattributed\": %llu, "
               "\"allocations\": %zu},\n",
            (unsigned long long)s->ft_samples, (unsigned long long)r->ft_unattributed,
            (unsigned long long)r->ft_refaults,
            (unsigned long long)r->acc_total, (unsigned long long)r->acc_unattributed, s->alloc.n);
    fprintf(f, "  \"variables\": [\n");
    for (size_t v = 0; v < r->vars.n; v++)
        jvar(f, s, &r->vars.v[v], v + 1 == r->vars.n);
    fprintf(f, "  ],\n  \"findings\": [");
    for (size_t i = 0; i < r->findings.n; i++) {
        fputs(i ? ",\n    " : "\n    ", f);
        pj_write_str(f, r->findings.v[i]);
    }
    fprintf(f, "%s]\n}\n", r->findings.n ? "\n  " : "");
    if (ferror(f))
        return lc_err_errno(LOCUS_ERR_SYSTEM, errno, "writing the profile");
    return LOCUS_OK;
}

static void human_bytes(uint64_t b, char *buf, size_t cap)
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

/* "exit 0", "exit 3", "exit 139: the program died of signal 11 (SIGSEGV) at x.c:12, address 0x0" */
static void exit_words(const prof_session_t *s, const prof_result_t *r, char *buf, size_t cap)
{
    if (!s->exit_signal) {
        snprintf(buf, cap, "exit %d", s->exit_status);
        return;
    }
    const char *nm = sigabbrev_np(s->exit_signal);
    int n = snprintf(buf, cap, "exit %d: the program died of signal %d (SIG%s)", s->exit_status, s->exit_signal,
                     nm ? nm : "?");
    if (n > 0 && (size_t)n < cap && s->crash.valid && s->crash.sig == s->exit_signal)
        snprintf(buf + n, cap - (size_t)n, " at %s, address 0x%llx", r->fault_loc[0] ? r->fault_loc : "?",
                 (unsigned long long)s->crash.addr);
}

/* One line per rank in a job: the job report is `locus profile --merge`. */
static void print_rank_line(const prof_session_t *s, const prof_result_t *r, FILE *f)
{
    char ex[512];
    exit_words(s, r, ex, sizeof ex);
    fprintf(f, "locus profile: rank %d of %d on %s: %s, %.2f s, %zu findings%s%s\n", s->job.rank, s->job.size,
            s->job.host, ex, (double)(s->t_end - s->t_start) * 1e-9, r->findings.n,
            s->opt.output ? ", profile " : "", s->opt.output ? s->opt.output : "");
    if (s->shim_status[0])
        fprintf(f, "locus profile: rank %d: no allocation log: %s\n", s->job.rank, s->shim_status);
    if (s->job.rank == 0 && s->out_pattern) { /* the pattern with every %x a '*' */
        char glob[512];
        size_t n = 0;
        for (const char *p = s->out_pattern; *p && n + 2 < sizeof glob; p++) {
            if (*p == '%' && p[1] == '%')
                glob[n++] = *++p;
            else if (*p == '%' && p[1])
                glob[n++] = '*', p++;
            else
                glob[n++] = *p;
        }
        glob[n] = 0;
        fprintf(f, "locus profile: the job report: locus profile --merge %s\n", glob);
    }
}

static void print_threads(const prof_session_t *s, const prof_result_t *r, FILE *f)
{
    if (r->threads.n < 2)
        return;
    fprintf(f, "\n  threads (cpu → node where the samples saw them):\n");
    for (size_t i = 0; i < r->threads.n && i < 16; i++) {
        const prof_thread_t *t = &r->threads.v[i];
        char where[160] = "";
        for (int k = 0; k < t->ncpus && k < 4; k++) {
            size_t l = strlen(where);
            snprintf(where + l, sizeof where - l, "%scpu %d → node %d", k ? ", " : "", t->cpu[k],
                     os_node(s, prof_cpu_node(s, t->cpu[k])));
        }
        fprintf(f, "    tid %-8d (pid %d) %-40s %6llu samples\n", t->tid, t->pid, where[0] ? where : "-",
                (unsigned long long)t->samples);
    }
    if (r->threads.n > 16)
        fprintf(f, "    ... %zu more in the JSON profile\n", r->threads.n - 16);
}

static void print_policy(const prof_session_t *s, FILE *f)
{
    const prof_start_t *st = s->starts.n ? &s->starts.v[0] : NULL;
    if (!st || st->policy_mode <= 0 || (st->policy_mode & 0xff) == 4)
        return;
    char nodes[128] = "";
    for (int n = 0; n < 256; n++)
        if (st->policy_nodes[n / 64] >> (n % 64) & 1) {
            size_t l = strlen(nodes);
            snprintf(nodes + l, sizeof nodes - l, "%s%d", l ? "," : "", n);
        }
    fprintf(f, "  memory policy at start: %s to node %s (set from outside the program: numactl, the launcher)\n",
            prof_policy_name(st->policy_mode), nodes);
}

void prof_print_report(const prof_session_t *s, const prof_result_t *r, FILE *f)
{
    if (s->job.rank >= 0) {
        print_rank_line(s, r, f);
        return;
    }
    char ex[512];
    exit_words(s, r, ex, sizeof ex);
    fprintf(f, "\nlocus profile: %s — %s, %.2f s, %d NUMA node%s\n", s->argv[0], ex,
            (double)(s->t_end - s->t_start) * 1e-9, s->nnodes, s->nnodes == 1 ? "" : "s");
    print_policy(s, f);
    fprintf(f, "  first touch: %s — %llu samples%s", s->ft_detail, (unsigned long long)s->ft_samples,
            s->ft_lost ? " (some lost)" : "");
    if (r->ft_refaults)
        fprintf(f, ", %llu of them re-faults on pages already touched (not first touches)",
                (unsigned long long)r->ft_refaults);
    fputc('\n', f);
    fprintf(f, "  accesses:    %s — %zu samples\n", s->acc_detail, s->acc.n);
    fprintf(f, "  pmu:         %s: %s\n", s->pmu_status, s->pmu_detail);
    if (s->stripped)
        fprintf(f, "  note: symbols are missing for some code (stripped binary?): locations are module+offset\n");
    for (size_t i = 0; i < s->notes.n; i++)
        fprintf(f, "  note: %s\n", s->notes.v[i]);
    fprintf(f, "\n  %-20s %-6s %10s  %-24s %-28s %8s %7s\n", "variable", "kind", "size", "pages per node",
            "first touch", "accesses", "remote");
    int shown = 0;
    for (size_t v = 0; v < r->vars.n && shown < s->opt.top; v++) {
        const prof_var_t *pv = &r->vars.v[v];
        char size[32], place[128] = "", ft[64];
        human_bytes(pv->max_bytes, size, sizeof size);
        for (int n = 0; n < s->nnodes && n < 8; n++) {
            size_t l = strlen(place);
            snprintf(place + l, sizeof place - l, "%s%llu", n ? "/" : "", (unsigned long long)pv->pages_by_node[n]);
        }
        snprintf(ft, sizeof ft, "%s%s", pv->ft_sites.n ? pv->ft_sites.v[0].loc : "-",
                 pv->ft_tids.n == 1 ? " (1 thr)" : "");
        char rem[16] = "-";
        if (pv->acc_local + pv->acc_remote)
            snprintf(rem, sizeof rem, "%.0f %%", 100.0 * (double)pv->acc_remote / (double)(pv->acc_local + pv->acc_remote));
        fprintf(f, "  %-20.20s %-6s %10s  %-24.24s %-28.28s %8llu %7s\n", pv->name, pv->kind, size, place, ft,
                (unsigned long long)pv->acc_samples, rem);
        shown++;
    }
    if (s->nnodes > 1 && r->acc_total) {
        fprintf(f, "\n  sampled accesses, thread node (rows) x page node (columns):\n       ");
        for (int b = 0; b < s->nnodes; b++)
            fprintf(f, " %8s%d", "node", os_node(s, b));
        fputc('\n', f);
        for (int a = 0; a < s->nnodes && a < PROF_MAX_NODES; a++) {
            fprintf(f, "  node%-2d", os_node(s, a));
            for (int b = 0; b < s->nnodes && b < PROF_MAX_NODES; b++)
                fprintf(f, " %9llu", (unsigned long long)r->matrix[a][b]);
            fputc('\n', f);
        }
    }
    print_threads(s, r, f);
    fprintf(f, "\n  findings:\n");
    if (!r->findings.n)
        fprintf(f, "    none%s\n", s->nnodes == 1 ? " (one NUMA node: every access is local)" : "");
    for (size_t i = 0; i < r->findings.n; i++)
        fprintf(f, "  - %s\n", r->findings.v[i]);
    if (s->opt.output)
        fprintf(f, "\n  profile written to %s\n", s->opt.output);
}
