/* Reads the preload shim's per-process logs (format: preload/shim_format.h). */
#include "prof/prof_internal.h"
#include "prof/preload/shim_format.h"
#include "core/error.h"

#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static prof_alloc_t *find_alloc(prof_session_t *s, int pid, uint64_t addr, uint64_t time)
{
    for (size_t i = s->alloc.n; i > 0; i--) {
        prof_alloc_t *a = &s->alloc.v[i - 1];
        if (a->pid == pid && a->addr == addr && a->time <= time && a->free_time == UINT64_MAX)
            return a;
    }
    return NULL;
}

static void on_alloc(prof_session_t *s, int pid, const lprof_alloc_t *r, size_t len)
{
    /* the shim writes only the frames it has: never more than the record holds */
    size_t have = (len - offsetof(lprof_alloc_t, frames)) / 8;
    prof_alloc_t a;
    memset(&a, 0, sizeof a);
    a.pid = pid;
    a.tid = r->tid;
    a.time = r->time;
    a.free_time = UINT64_MAX;
    a.addr = r->addr;
    a.size = r->size;
    a.kind = r->kind;
    a.nframes = r->nframes > PROF_MAX_CHAIN ? PROF_MAX_CHAIN : r->nframes;
    if ((size_t)a.nframes > have)
        a.nframes = (int)have;
    memcpy(a.frames, r->frames, (size_t)a.nframes * 8);
    a.var = -1;
    VEC_PUSH(s->alloc, a);
}

static void on_pages(prof_session_t *s, int pid, const lprof_pages_t *r, size_t len)
{
    const int8_t *node = (const int8_t *)(r + 1);
    if (sizeof *r + r->n > len)
        return;
    if (!r->alloc) {
        prof_gpages_t g = {pid, r->base, r->page, r->stride, r->n, malloc(r->n ? r->n : 1)};
        if (!g.node)
            return;
        memcpy(g.node, node, r->n);
        VEC_PUSH(s->gpages, g);
        return;
    }
    prof_alloc_t *a = find_alloc(s, pid, r->alloc, r->time);
    if (!a)
        return;
    memset(a->place, 0, sizeof a->place);
    a->place_absent = 0;
    for (uint32_t i = 0; i < r->n; i++) {
        if (node[i] >= 0 && node[i] < PROF_MAX_NODES)
            a->place[node[i]] += r->stride;
        else
            a->place_absent += r->stride;
    }
    a->placed = true;
}

/* The fields a record of each type must have for the reader to use it (the
 * start and stats records grew: their older, shorter form still counts). */
static size_t min_size(uint32_t type)
{
    switch (type) {
    case LPROF_REC_START:  return offsetof(lprof_start_t, min_alloc);
    case LPROF_REC_ALLOC:  return offsetof(lprof_alloc_t, frames);
    case LPROF_REC_FREE:   return sizeof(lprof_free_t);
    case LPROF_REC_PAGES:  return sizeof(lprof_pages_t);
    case LPROF_REC_ACCESS: return sizeof(lprof_access_t);
    case LPROF_REC_STATS:  return offsetof(lprof_stats_t, early);
    case LPROF_REC_CRASH:  return sizeof(lprof_crash_t);
    default:               return sizeof(lprof_hdr_t);
    }
}

/* A process (or an exec of it) began: its start facts, and the end of
 * what an earlier image of this pid allocated. */
static void on_start(prof_session_t *s, int *pid, const lprof_start_t *r)
{
    if (r->magic != LPROF_MAGIC)
        return;
    *pid = r->pid;
    if (r->h.size >= sizeof *r) {
        prof_start_t st;
        memset(&st, 0, sizeof st);
        st.pid = r->pid;
        st.time = r->time;
        st.policy_mode = r->policy_mode;
        memcpy(st.policy_nodes, r->policy_nodes, sizeof st.policy_nodes);
        memcpy(st.cpus, r->cpus, sizeof st.cpus);
        snprintf(st.exe, sizeof st.exe, "%.*s", (int)sizeof r->exe, r->exe);
        VEC_PUSH(s->starts, st);
    }
    for (size_t i = 0; i < s->alloc.n; i++)
        if (s->alloc.v[i].pid == r->pid && s->alloc.v[i].free_time > r->time && s->alloc.v[i].time < r->time)
            s->alloc.v[i].free_time = r->time;
    s->shim_procs++;
}

/* The shim's counters at a process's end (older shims wrote fewer). */
static void on_stats(prof_session_t *s, const lprof_stats_t *r)
{
    s->acc_armed += r->armed;
    s->acc_dropped += r->dropped;
    s->acc_io += r->io_unprotects;
    s->acc_chained += r->chained;
    s->shim_untracked += r->untracked;
    if (r->h.size >= sizeof *r) {
        s->shim_early += r->early;
        s->shim_log_errors += r->log_errors;
    }
}

static void on_record(prof_session_t *s, int *pid, const lprof_hdr_t *h, size_t len)
{
    if (len < min_size(h->type))
        return; /* a damaged record: its fields would be the previous record's bytes */
    switch (h->type) {
    case LPROF_REC_START:
        on_start(s, pid, (const void *)h);
        break;
    case LPROF_REC_ALLOC:
        on_alloc(s, *pid, (const void *)h, len);
        break;
    case LPROF_REC_FREE: {
        const lprof_free_t *r = (const void *)h;
        prof_alloc_t *a = find_alloc(s, *pid, r->addr, r->time);
        if (a)
            a->free_time = r->time;
        break;
    }
    case LPROF_REC_PAGES:
        on_pages(s, *pid, (const void *)h, len);
        break;
    case LPROF_REC_ACCESS: {
        const lprof_access_t *r = (const void *)h;
        prof_access_t a = {r->time, r->addr, r->ip, r->ret, *pid, r->tid, r->cpu, r->node,
                           r->write < 0 ? -1 : (r->write & 1), r->write >= 0 && (r->write & 2),
                           r->write >= 0 && (r->write & 4)};
        VEC_PUSH(s->acc, a);
        break;
    }
    case LPROF_REC_STATS:
        on_stats(s, (const void *)h);
        break;
    case LPROF_REC_CRASH: {
        const lprof_crash_t *r = (const void *)h;
        if (h->size < sizeof *r || s->crash.valid)
            break;
        s->crash = (prof_crash_t){true, *pid, r->tid, r->sig, r->code, r->time, r->addr, r->ip, r->ret};
        break;
    }
    default:
        break;
    }
}

locus_status_t prof_shimlog_read(prof_session_t *s, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return lc_err_errno(LOCUS_ERR_SYSTEM, errno, "open %s", path);
    size_t cap = 1 << 16;
    uint8_t *buf = malloc(cap);
    int pid = -1;
    lprof_hdr_t h;
    while (buf && fread(&h, sizeof h, 1, f) == 1) {
        if (h.size < sizeof h || h.size > (1u << 20))
            break; /* truncated or damaged: keep what was read */
        if (h.size > cap) {
            uint8_t *nb = realloc(buf, h.size);
            if (!nb)
                break;
            buf = nb;
            cap = h.size;
        }
        memcpy(buf, &h, sizeof h);
        if (fread(buf + sizeof h, h.size - sizeof h, 1, f) != 1)
            break;
        on_record(s, &pid, (const lprof_hdr_t *)buf, h.size);
    }
    free(buf);
    fclose(f);
    return LOCUS_OK;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

static int is_shim(const struct dirent *d) { return !strncmp(d->d_name, "shim.", 5); }

locus_status_t prof_shimlog_read_dir(prof_session_t *s)
{
    struct dirent **list;
    int n = scandir(s->dir, &list, is_shim, by_name);
    if (n < 0)
        return lc_err_errno(LOCUS_ERR_SYSTEM, errno, "read %s", s->dir);
    for (int i = 0; i < n; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", s->dir, list[i]->d_name);
        prof_shimlog_read(s, path);
        free(list[i]);
    }
    free(list);
    return LOCUS_OK;
}
