/* Attribution and analysis: every first touch and access sample is given to
 * a variable (a heap allocation site, a global symbol, or a mapping), then
 * per variable: pages per node, first-touch sites and threads, accesses
 * local/remote per source line, and a finding in plain words. */
#include "prof/prof_internal.h"

#pragma GCC diagnostic ignored "-Wformat-truncation" /* long names are cut, on purpose */

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    prof_session_t *s;
    prof_sym_t *sym;
    prof_result_t *r;
    size_t last_alloc;
    uint64_t page; /* base page size (first-touch filters) */
} ctx_t;

static bool runtime_module(const char *m) { return prof_runtime_module(m); }

/* ---------- variables ---------- */

static int var_find(prof_result_t *r, const char *kind, const char *key)
{
    for (size_t i = 0; i < r->vars.n; i++)
        if (!strcmp(r->vars.v[i].kind, kind) && !strcmp(r->vars.v[i].key, key))
            return (int)i;
    return -1;
}

static int var_new(prof_result_t *r, const char *kind, const char *key, const char *name)
{
    prof_var_t v;
    memset(&v, 0, sizeof v);
    snprintf(v.kind, sizeof v.kind, "%s", kind);
    snprintf(v.key, sizeof v.key, "%s", key);
    snprintf(v.site, sizeof v.site, "%s", key);
    snprintf(v.name, sizeof v.name, "%s", name);
    snprintf(v.placement_source, sizeof v.placement_source, "none");
    VEC_PUSH(r->vars, v);
    return (int)r->vars.n - 1;
}

/* One variable per distinct allocation call path. */
static void alloc_var(ctx_t *c, prof_alloc_t *a)
{
    char key[1024] = "", path[PROF_MAX_CHAIN][320];
    char name[128] = "";
    int site = -1;
    prof_loc_t loc[PROF_MAX_CHAIN];
    for (int i = 0; i < a->nframes; i++) {
        prof_sym_ip(c->sym, a->pid, a->time, a->frames[i], true, &loc[i]);
        prof_loc_str(&loc[i], path[i], sizeof path[i]);
        if (site < 0 && !runtime_module(loc[i].module))
            site = i;
        size_t kl = strlen(key);
        snprintf(key + kl, sizeof key - kl, "%s+%lx;", loc[i].module, (unsigned long)loc[i].offset);
    }
    if (site < 0)
        site = 0;
    /* name: the variable assigned at the site, or at a caller of a helper */
    for (int i = site; i < a->nframes && !name[0]; i++) {
        char text[512];
        if (loc[i].has_lines && prof_source_line(loc[i].file, loc[i].line, text, sizeof text))
            prof_guess_name(text, name, sizeof name);
        if (i - site >= 3)
            break;
    }
    const char *kind = a->kind == 1 ? "mmap" : "heap";
    int v = var_find(c->r, kind, key);
    if (v < 0) {
        char fallback[340];
        snprintf(fallback, sizeof fallback, "%s@%s", kind, a->nframes ? path[site] : "?");
        v = var_new(c->r, kind, key, name[0] ? name : fallback);
        prof_var_t *pv = &c->r->vars.v[v];
        snprintf(pv->site, sizeof pv->site, "%s", a->nframes ? path[site] : "?");
        for (int i = site; i < a->nframes && pv->npath < PROF_MAX_CHAIN; i++)
            snprintf(pv->path[pv->npath++], sizeof pv->path[0], "%s", path[i]);
        pv->lo = a->addr;
        pv->hi = a->addr + a->size;
        pv->pid = a->pid;
        if (a->nframes && !loc[site].has_symbols)
            c->s->stripped = true;
    }
    prof_var_t *pv = &c->r->vars.v[v];
    /* key is long; keep the readable site as "site" */
    a->var = v;
    pv->allocations++;
    pv->bytes += a->size;
    if (a->size > pv->max_bytes)
        pv->max_bytes = a->size;
}

static prof_alloc_t *alloc_at(ctx_t *c, int pid, uint64_t addr, uint64_t time)
{
    prof_session_t *s = c->s;
    if (c->last_alloc < s->alloc.n) {
        prof_alloc_t *a = &s->alloc.v[c->last_alloc];
        if (a->pid == pid && addr >= a->addr && addr < a->addr + a->size && time >= a->time && time < a->free_time)
            return a;
    }
    /* this process, then its ancestors (memory inherited across fork) */
    for (int depth = 0, p = pid; depth < 8 && p > 0; depth++) {
        for (size_t i = s->alloc.n; i > 0; i--) {
            prof_alloc_t *a = &s->alloc.v[i - 1];
            if (a->pid == p && addr >= a->addr && addr < a->addr + a->size && time >= a->time &&
                time < a->free_time) {
                c->last_alloc = i - 1;
                return a;
            }
        }
        int pp = -1;
        for (size_t i = 0; i < s->procs.n; i++)
            if (s->procs.v[i].pid == p)
                pp = s->procs.v[i].ppid;
        p = pp;
    }
    return NULL;
}

/* Variable of a data address: allocation, global symbol, or mapping. */
static int var_of(ctx_t *c, int pid, uint64_t time, uint64_t addr, uint64_t *lo, uint64_t *hi)
{
    prof_alloc_t *a = alloc_at(c, pid, addr, time);
    if (a) {
        *lo = a->addr;
        *hi = a->addr + a->size;
        return a->var;
    }
    char name[128];
    uint64_t start, size;
    if (prof_sym_global(c->sym, pid, time, addr, name, sizeof name, &start, &size)) {
        int v = var_find(c->r, "global", name);
        if (v < 0) {
            v = var_new(c->r, "global", name, name);
            prof_var_t *pv = &c->r->vars.v[v];
            pv->bytes = pv->max_bytes = size;
            pv->allocations = 1;
            pv->lo = start;
            pv->hi = start + size;
        }
        *lo = start;
        *hi = start + (size ? size : 1);
        return v;
    }
    const prof_map_t *m = prof_sym_map(c->sym, pid, time, addr);
    char key[300];
    if (!m)
        snprintf(key, sizeof key, "[unknown]");
    else if (m->name && m->name[0] == '/')
        snprintf(key, sizeof key, "[%s]", strrchr(m->name, '/') + 1);
    else if (m->name && m->name[0] == '[')
        snprintf(key, sizeof key, "%s", m->name);
    else
        snprintf(key, sizeof key, "[anon]");
    int v = var_find(c->r, "other", key);
    if (v < 0)
        v = var_new(c->r, "other", key, key);
    *lo = m ? m->start : addr;
    *hi = m ? m->end : addr + 1;
    return v;
}

static prof_line_t *line_get(void *vec_, const char *loc)
{
    VEC(prof_line_t) *vec = vec_;
    for (size_t i = 0; i < vec->n; i++)
        if (!strcmp(vec->v[i].loc, loc))
            return &vec->v[i];
    prof_line_t l;
    memset(&l, 0, sizeof l);
    snprintf(l.loc, sizeof l.loc, "%s", loc);
    l.tid_first = -1;
    VEC_PUSH(*vec, l);
    return &vec->v[vec->n - 1];
}

static void add_tid(void *vec_, int32_t tid)
{
    VEC(int32_t) *vec = vec_;
    for (size_t i = 0; i < vec->n; i++)
        if (vec->v[i] == tid)
            return;
    VEC_PUSH(*vec, tid);
}

/* The code location of a sample: its IP, or for code in the runtime
 * (memset, memcpy in libc) its caller: the word at the stack pointer when
 * that is a return address into the program (leaf functions), else the
 * first frame of the call chain outside the runtime. */
static void sample_loc(ctx_t *c, int pid, uint64_t time, uint64_t ip, uint64_t ret, int chain, char *buf,
                       size_t cap)
{
    prof_loc_t l;
    prof_sym_ip(c->sym, pid, time, ip, false, &l);
    bool found = !runtime_module(l.module);
    if (!found && ret) {
        prof_loc_t k;
        prof_sym_ip(c->sym, pid, time, ret, true, &k);
        if (strcmp(k.module, "?") && !runtime_module(k.module) && (k.has_symbols || k.has_lines)) {
            l = k;
            found = true;
        }
    }
    if (!found && chain >= 0) {
        const prof_chain_t *ch = &c->s->chains.v[chain];
        for (int i = 1; i < ch->n; i++) {
            prof_loc_t k;
            prof_sym_ip(c->sym, pid, time, ch->ip[i], true, &k);
            if (strcmp(k.module, "?") && !runtime_module(k.module)) {
                l = k;
                break;
            }
        }
    }
    if (strcmp(l.module, "?") && !runtime_module(l.module) && !l.has_symbols)
        c->s->stripped = true;
    prof_loc_str(&l, buf, cap);
}

/* ---------- threads ---------- */

static void thread_saw(ctx_t *c, int32_t pid, int32_t tid, int32_t cpu)
{
    if (tid <= 0)
        return;
    VEC(prof_thread_t) *v = (void *)&c->r->threads;
    prof_thread_t *t = NULL;
    for (size_t i = v->n; i > 0 && !t; i--) /* the latest threads are the likeliest */
        if (v->v[i - 1].tid == tid && v->v[i - 1].pid == pid)
            t = &v->v[i - 1];
    if (!t) {
        prof_thread_t n;
        memset(&n, 0, sizeof n);
        n.pid = pid;
        n.tid = tid;
        VEC_PUSH(*v, n);
        t = &v->v[v->n - 1];
    }
    t->samples++;
    if (cpu < 0)
        return;
    for (int i = 0; i < t->ncpus; i++)
        if (t->cpu[i] == cpu) {
            t->cpu_n[i]++;
            return;
        }
    if (t->ncpus < PROF_THREAD_CPUS) {
        t->cpu[t->ncpus] = cpu;
        t->cpu_n[t->ncpus++] = 1;
    }
}

static void threads_sort(prof_result_t *r)
{
    for (size_t k = 0; k < r->threads.n; k++) {
        prof_thread_t *t = &r->threads.v[k];
        for (int i = 1; i < t->ncpus; i++) /* insertion sort, at most 8 */
            for (int j = i; j > 0 && t->cpu_n[j] > t->cpu_n[j - 1]; j--) {
                int32_t c = t->cpu[j];
                uint64_t n = t->cpu_n[j];
                t->cpu[j] = t->cpu[j - 1];
                t->cpu_n[j] = t->cpu_n[j - 1];
                t->cpu[j - 1] = c;
                t->cpu_n[j - 1] = n;
            }
    }
}

/* ---------- first touches ---------- */

/* Only the first fault on a page is its first touch. Later faults on a page
 * already touched (NUMA-balancing hinting faults, the write fault after the
 * access sampler lifts its protection, copy-on-write after fork) would
 * otherwise outvote an initialisation that sampling caught only in part: a
 * table initialised once by one thread, then updated by every thread for
 * seconds. Three filters, because samples stand for `period` faults each: a
 * sampled page counts once per process and allocation, a page an access
 * sample found there is touched from then on (present_marks), and an
 * allocation's first touches stop at its page count. */
typedef struct {
    uint64_t (*keys)[2]; /* {page + 1, pid:instance + 1}; open addressing, 0 = empty */
    size_t mask;
} pageset_t;

static bool pageset_init(pageset_t *ps, size_t n)
{
    size_t cap = 64;
    while (cap < 2 * n)
        cap <<= 1;
    ps->keys = calloc(cap, sizeof *ps->keys);
    ps->mask = cap - 1;
    return ps->keys != NULL;
}

/* true if (pid, instance, page) was already in the set */
static bool pageset_seen(pageset_t *ps, int pid, int64_t inst, uint64_t page)
{
    uint64_t k0 = page + 1, k1 = ((uint64_t)(uint32_t)pid << 32) | (uint32_t)(inst + 1);
    size_t h = (size_t)(((k0 ^ k1 * 0xD6E8FEB86659FD93ull) * 0x9E3779B97F4A7C15ull) >> 20) & ps->mask;
    while (ps->keys[h][0]) {
        if (ps->keys[h][0] == k0 && ps->keys[h][1] == k1)
            return true;
        h = (h + 1) & ps->mask;
    }
    ps->keys[h][0] = k0;
    ps->keys[h][1] = k1;
    return false;
}

static int cmp_touch_time(const void *a, const void *b)
{
    const prof_touch_t *x = a, *y = b;
    return x->time < y->time ? -1 : x->time > y->time;
}

/* false for a fault on a page this allocation (or process) already had */
/* The allocation instance of (pid, addr) at `time` for the page sets, -1 none. */
static int64_t alloc_inst(ctx_t *c, int pid, uint64_t addr, uint64_t time, prof_alloc_t **out)
{
    prof_alloc_t *a = alloc_at(c, pid, addr, time);
    if (out)
        *out = a;
    return a ? (int64_t)(a - c->s->alloc.v) : -1;
}

static bool first_fault(ctx_t *c, pageset_t *ps, uint64_t *budget, const prof_touch_t *t)
{
    prof_alloc_t *a;
    int64_t inst = alloc_inst(c, t->pid, t->addr, t->time, &a);
    if (ps->keys && pageset_seen(ps, t->pid, inst, t->addr / c->page))
        return false;
    if (!a || !budget)
        return true;
    uint64_t pages = (a->size + c->page - 1) / c->page + 1; /* +1: an unaligned start */
    if (budget[inst] >= pages)
        return false;
    budget[inst] += t->period;
    return true;
}

/* An access sample that found its page there says the page was touched
 * before that time, so a later fault on it is a re-fault. These are the
 * faults the access sampler itself causes: while one thread's handler
 * restores a page it had protected, other threads touching the page wait in
 * the kernel and then count a (spurious) minor fault; with every thread
 * hammering a small table these outnumbered a serial initialisation that
 * sampling caught only in part. Sorted by time, NULL when there are none. */
static int cmp_access_time(const void *a, const void *b)
{
    const prof_access_t *x = *(const prof_access_t *const *)a, *y = *(const prof_access_t *const *)b;
    return x->time < y->time ? -1 : x->time > y->time;
}

static const prof_access_t **present_marks(const prof_session_t *s, size_t *n)
{
    *n = 0;
    const prof_access_t **v = malloc((s->acc.n ? s->acc.n : 1) * sizeof *v);
    if (!v)
        return NULL;
    for (size_t i = 0; i < s->acc.n; i++)
        if (s->acc.v[i].present && !s->acc.v[i].first)
            v[(*n)++] = &s->acc.v[i];
    qsort(v, *n, sizeof *v, cmp_access_time);
    return v;
}

static void mark_present(ctx_t *c, pageset_t *ps, const prof_access_t *a)
{
    (void)pageset_seen(ps, a->pid, alloc_inst(c, a->pid, a->addr, a->time, NULL), a->addr / c->page);
}

static void touch_one(ctx_t *c, const prof_touch_t *t)
{
    thread_saw(c, t->pid, t->tid, t->cpu);
    uint64_t lo, hi;
    int v = var_of(c, t->pid, t->time, t->addr, &lo, &hi);
    prof_var_t *pv = &c->r->vars.v[v];
    int node = prof_cpu_node(c->s, t->cpu);
    char loc[320];
    sample_loc(c, t->pid, t->time, t->ip, t->ret, t->chain, loc, sizeof loc);
    pv->ft_pages += t->period;
    if (t->time > pv->ft_last)
        pv->ft_last = t->time;
    if (node >= 0 && node < PROF_MAX_NODES)
        pv->ft_by_node[node] += t->period;
    add_tid(&pv->ft_tids, t->tid);
    prof_line_t *l = line_get(&pv->ft_sites, loc);
    l->count += t->period;
    if (node >= 0 && node < PROF_MAX_NODES)
        l->by_node[node] += t->period;
    if (l->tid_first < 0)
        l->tid_first = t->tid;
    else if (l->tid_first != t->tid)
        l->tids_n = 2; /* at least two threads */
    if (!strcmp(pv->kind, "other"))
        c->r->ft_unattributed++;
}

static void touches(ctx_t *c)
{
    prof_session_t *s = c->s;
    size_t n = s->touch.n;
    uint64_t *budget = calloc(s->alloc.n ? s->alloc.n : 1, sizeof *budget);
    pageset_t ps = {0};
    /* without memory the filters are skipped, not the samples */
    if (!pageset_init(&ps, n + s->acc.n)) /* the touches and the access marks */
        ps.keys = NULL;
    /* the rings are drained per cpu: put the samples in time order first */
    if (n)
        qsort(s->touch.v, n, sizeof *s->touch.v, cmp_touch_time);
    size_t nm = 0, m = 0;
    const prof_access_t **marks = ps.keys ? present_marks(s, &nm) : NULL;
    for (size_t i = 0; i < n; i++) {
        const prof_touch_t *t = &s->touch.v[i];
        for (; m < nm && marks[m]->time <= t->time; m++)
            mark_present(c, &ps, marks[m]);
        if (first_fault(c, &ps, budget, t))
            touch_one(c, t);
        else
            c->r->ft_refaults++;
    }
    free(marks);
    free(ps.keys);
    free(budget);
    for (size_t v = 0; v < c->r->vars.n; v++)
        for (size_t k = 0; k < c->r->vars.v[v].ft_sites.n; k++) {
            prof_line_t *l = &c->r->vars.v[v].ft_sites.v[k];
            if (l->tids_n == 0 && l->tid_first >= 0)
                l->tids_n = 1;
        }
}

static void accesses(ctx_t *c)
{
    prof_session_t *s = c->s;
    for (size_t i = 0; i < s->acc.n; i++) {
        prof_access_t *a = &s->acc.v[i];
        thread_saw(c, a->pid, a->tid, a->cpu);
        uint64_t lo, hi;
        int v = var_of(c, a->pid, a->time, a->addr, &lo, &hi);
        prof_var_t *pv = &c->r->vars.v[v];
        int tn = prof_cpu_node(s, a->cpu);
        int pn = a->node >= 0 ? prof_os_node_index(s, a->node) : -1;
        bool local = tn >= 0 && tn == pn;
        char loc[320];
        sample_loc(c, a->pid, a->time, a->ip, a->ret, -1, loc, sizeof loc);
        prof_line_t *l = line_get(&pv->acc_lines, loc);
        l->count++;
        pv->acc_samples++;
        c->r->acc_total++;
        if (a->node == PROF_NODE_LOCAL || a->node == PROF_NODE_REMOTE) { /* PMU: local/remote, no page node */
            local = a->node == PROF_NODE_LOCAL;
            l->local += local;
            l->remote += !local;
            pv->acc_local += local;
            pv->acc_remote += !local;
        } else if (pn >= 0 && tn >= 0) {
            l->local += local;
            l->remote += !local;
            pv->acc_local += local;
            pv->acc_remote += !local;
            if (tn < PROF_MAX_NODES && pn < PROF_MAX_NODES)
                c->r->matrix[tn][pn]++;
        }
        if (tn >= 0 && tn < PROF_MAX_NODES) {
            l->by_node[tn]++;
            /* which node uses which part: the program's use, not its
             * initialisation (a serial init touches every part once): not
             * an access that was a page's first touch, nor one made before
             * the variable's last sampled first touch (with huge pages the
             * init's later accesses find their pages already there) */
            if (hi > lo && a->addr >= lo && a->addr < hi && !a->first && a->time > pv->ft_last) {
                int part = (int)((a->addr - lo) * 8 / (hi - lo));
                pv->region_node[part < 8 ? part : 7][tn]++;
            }
        }
        if (!strcmp(pv->kind, "other"))
            c->r->acc_unattributed++;
    }
}

/* Pages per node: the shim's move_pages at free/exit, else global page
 * records, else the node of the cpu that first touched. */
static void placement(ctx_t *c)
{
    prof_session_t *s = c->s;
    for (size_t i = 0; i < s->alloc.n; i++) {
        prof_alloc_t *a = &s->alloc.v[i];
        if (a->var < 0 || !a->placed)
            continue;
        prof_var_t *pv = &c->r->vars.v[a->var];
        for (int n = 0; n < PROF_MAX_NODES; n++) {
            int idx = prof_os_node_index(s, n);
            if (a->place[n] && idx >= 0)
                pv->pages_by_node[idx] += a->place[n];
        }
        pv->pages_absent += a->place_absent;
        snprintf(pv->placement_source, sizeof pv->placement_source, "move_pages");
    }
    for (size_t v = 0; v < c->r->vars.n; v++) {
        prof_var_t *pv = &c->r->vars.v[v];
        if (!strcmp(pv->kind, "global")) {
            for (size_t g = 0; g < s->gpages.n; g++) {
                prof_gpages_t *gp = &s->gpages.v[g];
                for (uint32_t k = 0; k < gp->n; k++) {
                    uint64_t pa = gp->base + (uint64_t)k * gp->stride * gp->page;
                    if (pa + gp->page <= pv->lo || pa >= pv->hi)
                        continue;
                    int idx = prof_os_node_index(s, gp->node[k]);
                    if (gp->node[k] >= 0 && idx >= 0)
                        pv->pages_by_node[idx] += gp->stride;
                    else
                        pv->pages_absent += gp->stride;
                    snprintf(pv->placement_source, sizeof pv->placement_source, "move_pages");
                }
            }
        }
        if (!strcmp(pv->placement_source, "none") && pv->ft_pages) {
            memcpy(pv->pages_by_node, pv->ft_by_node, sizeof pv->ft_by_node);
            snprintf(pv->placement_source, sizeof pv->placement_source, "first-touch-cpu");
        }
    }
}

static int cmp_line(const void *a, const void *b)
{
    const prof_line_t *x = a, *y = b;
    uint64_t kx = x->remote * 4 + x->count, ky = y->remote * 4 + y->count;
    return kx < ky ? 1 : kx > ky ? -1 : strcmp(x->loc, y->loc);
}

static uint64_t var_weight(const prof_var_t *v)
{
    uint64_t pages = 0;
    for (int n = 0; n < PROF_MAX_NODES; n++)
        pages += v->pages_by_node[n];
    return v->acc_remote * 64 + v->acc_samples * 8 + pages + v->ft_pages;
}

static int cmp_var(const void *a, const void *b)
{
    uint64_t x = var_weight(a), y = var_weight(b);
    return x < y ? 1 : x > y ? -1 : 0;
}

void prof_analyze(prof_session_t *s, prof_result_t *r)
{
    memset(r, 0, sizeof *r);
    long pg = sysconf(_SC_PAGESIZE);
    ctx_t c = {s, prof_sym_create(s), r, 0, pg > 0 ? (uint64_t)pg : 4096};
    if (!c.sym)
        return;
    for (size_t i = 0; i < s->alloc.n; i++)
        alloc_var(&c, &s->alloc.v[i]);
    touches(&c);
    accesses(&c);
    placement(&c);
    threads_sort(r);
    if (s->crash.valid)
        sample_loc(&c, s->crash.pid, s->crash.time, s->crash.ip, s->crash.ret, -1, r->fault_loc, sizeof r->fault_loc);
    prof_sym_destroy(c.sym);
    for (size_t v = 0; v < r->vars.n; v++) {
        prof_var_t *pv = &r->vars.v[v];
        /* qsort's array must not be NULL even when empty (UBSan) */
        if (pv->ft_sites.n)
            qsort(pv->ft_sites.v, pv->ft_sites.n, sizeof *pv->ft_sites.v, cmp_line);
        if (pv->acc_lines.n)
            qsort(pv->acc_lines.v, pv->acc_lines.n, sizeof *pv->acc_lines.v, cmp_line);
    }
    if (r->vars.n)
        qsort(r->vars.v, r->vars.n, sizeof *r->vars.v, cmp_var);
    for (size_t v = 0; v < r->vars.n; v++) {
        prof_finding(s, &r->vars.v[v]);
        if (r->vars.v[v].finding[0]) {
            char *f = strdup(r->vars.v[v].finding);
            if (f)
                VEC_PUSH(r->findings, f);
        }
    }
}

void prof_result_free(prof_result_t *r)
{
    for (size_t v = 0; v < r->vars.n; v++) {
        free(r->vars.v[v].ft_tids.v);
        free(r->vars.v[v].ft_sites.v);
        free(r->vars.v[v].acc_lines.v);
    }
    free(r->vars.v);
    free(r->threads.v);
    for (size_t i = 0; i < r->findings.n; i++)
        free(r->findings.v[i]);
    free(r->findings.v);
    memset(r, 0, sizeof *r);
}

void prof_session_free(prof_session_t *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->maps.n; i++)
        free(s->maps.v[i].name);
    for (size_t i = 0; i < s->gpages.n; i++)
        free(s->gpages.v[i].node);
    for (size_t i = 0; i < s->notes.n; i++)
        free(s->notes.v[i]);
    free(s->touch.v);
    free(s->acc.v);
    free(s->alloc.v);
    free(s->maps.v);
    free(s->procs.v);
    free(s->gpages.v);
    free(s->chains.v);
    free(s->starts.v);
    free(s->notes.v);
    locus_topo_destroy(s->topo);
    free(s);
}
