/* First-touch sampler: one PERF_COUNT_SW_PAGE_FAULTS_MIN event per CPU on
 * the (not yet exec'd) child, inherited by its threads and children and
 * enabled at exec. Minor faults are first touches of anonymous pages (and
 * file pages already in the page cache); each sample carries the data
 * address, IP, thread, CPU, time and the user call chain. The mmap/comm/task
 * side-band records give the address spaces for attribution. */
#include "prof/prof_internal.h"
#include "core/error.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define RING_PAGES 64 /* data pages per CPU: fits perf_event_mlock_kb (516) unprivileged */

struct prof_perf {
    int n;
    int fd[1024];
    void *ring[1024];
    size_t ring_bytes;
    uint64_t sample_type;
    uint64_t st[1024]; /* per event: first-touch or PMU sample layout */
    char *tmp;
};

static int perf_open(struct perf_event_attr *a, pid_t pid, int cpu)
{
    return (int)syscall(SYS_perf_event_open, a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static void ft_attr(struct perf_event_attr *a, uint64_t period, uint64_t rate, bool phys)
{
    memset(a, 0, sizeof *a);
    a->size = sizeof *a;
    a->type = PERF_TYPE_SOFTWARE;
    a->config = PERF_COUNT_SW_PAGE_FAULTS_MIN;
    if (period) {
        a->sample_period = period;
    } else { /* rate control: the kernel adapts the period; each sample carries it */
        a->freq = 1;
        a->sample_freq = rate;
    }
    a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR |
                     PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_STACK_USER |
                     (phys ? PERF_SAMPLE_PHYS_ADDR : 0);
    a->sample_stack_user = 8; /* [sp]: the caller of a leaf function (memset) */
    a->disabled = 1;
    a->inherit = 1;
    a->enable_on_exec = 1;
    a->exclude_kernel = 1; /* the fault's user registers are still sampled */
    a->exclude_hv = 1;
    a->exclude_callchain_kernel = 1;
    a->mmap = 1;
    a->mmap2 = 1;
    a->mmap_data = 1;
    a->comm = 1;
    a->comm_exec = 1;
    a->task = 1;
    a->sample_id_all = 1;
    a->use_clockid = 1;
    a->clockid = CLOCK_MONOTONIC;
    a->watermark = 1; /* wake the drain at half a ring, not per few samples */
    a->wakeup_watermark = RING_PAGES * 4096 / 2;
    a->sample_max_stack = PROF_MAX_CHAIN;
}

locus_status_t prof_perf_open(prof_session_t *s, pid_t child, prof_perf_t **out)
{
    prof_perf_t *p = calloc(1, sizeof *p);
    if (!p)
        return lc_err(LOCUS_ERR_NO_MEMORY, "first-touch sampler state");
    long pg = sysconf(_SC_PAGESIZE);
    p->ring_bytes = (size_t)RING_PAGES * (size_t)pg;
    p->tmp = malloc(65536);
    struct perf_event_attr a;
    bool phys = true;
    int ncpu = locus_topo_num_cpus(s->topo);
    int err = 0;
    for (int i = 0; i < ncpu && p->n < 1024; i++) {
        int cpu = locus_topo_cpu(s->topo, i);
        ft_attr(&a, s->ft_period, s->opt.ft_rate, phys);
        int fd = perf_open(&a, child, cpu);
        if (fd < 0 && phys) { /* PHYS_ADDR needs privileges: go on without it */
            phys = false;
            ft_attr(&a, s->ft_period, s->opt.ft_rate, false);
            fd = perf_open(&a, child, cpu);
        }
        if (fd < 0) {
            err = errno;
            break;
        }
        void *r = mmap(NULL, p->ring_bytes + (size_t)pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (r == MAP_FAILED) {
            err = errno;
            close(fd);
            break;
        }
        p->fd[p->n] = fd;
        p->ring[p->n] = r;
        p->st[p->n] = a.sample_type;
        p->n++;
        p->sample_type = a.sample_type;
    }
    if (err) {
        prof_perf_close(p);
        return lc_err_errno(LOCUS_ERR_SYSTEM, err, "perf_event_open(PAGE_FAULTS_MIN) for pid %d", (int)child);
    }
    s->ft_phys = phys;
    *out = p;
    return LOCUS_OK;
}

/* PMU address sampling on the child, one event per CPU, same rings. */
int prof_perf_open_pmu(prof_session_t *s, pid_t child, prof_perf_t *p)
{
    struct perf_event_attr a;
    if (!prof_pmu_event(&a))
        return 0;
    long pg = sysconf(_SC_PAGESIZE);
    int ncpu = locus_topo_num_cpus(s->topo), opened = 0;
    for (int i = 0; i < ncpu && p->n < 1024; i++) {
        int fd = perf_open(&a, child, locus_topo_cpu(s->topo, i));
        if (fd < 0)
            break;
        void *r = mmap(NULL, p->ring_bytes + (size_t)pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (r == MAP_FAILED) {
            close(fd);
            break;
        }
        p->fd[p->n] = fd;
        p->ring[p->n] = r;
        p->st[p->n] = a.sample_type;
        p->n++;
        opened++;
    }
    return opened;
}

int prof_perf_count(prof_perf_t *p) { return p ? p->n : 0; }
int prof_perf_poll_fd(prof_perf_t *p, int i) { return p->fd[i]; }

/* ---- record parsing ---- */

typedef struct {
    const uint8_t *p, *end;
} rd_t;

static uint64_t rd64(rd_t *r)
{
    uint64_t v = 0;
    if (r->p + 8 <= r->end)
        memcpy(&v, r->p, 8);
    r->p += 8;
    return v;
}

static void rd_pidtid(rd_t *r, int32_t *pid, int32_t *tid)
{
    uint64_t v = rd64(r);
    *pid = (int32_t)(uint32_t)v;
    *tid = (int32_t)(uint32_t)(v >> 32);
}

static int intern_chain(prof_session_t *s, const uint64_t *ips, int n)
{
    if (n <= 0)
        return -1;
    /* consecutive samples often share a chain: check the last few */
    for (size_t k = s->chains.n; k > 0 && k + 8 > s->chains.n; k--) {
        prof_chain_t *c = &s->chains.v[k - 1];
        if (c->n == n && !memcmp(c->ip, ips, (size_t)n * 8))
            return (int)(k - 1);
    }
    prof_chain_t c = {.n = n};
    memcpy(c.ip, ips, (size_t)n * 8);
    VEC_PUSH(s->chains, c);
    return (int)s->chains.n - 1;
}

/* A PMU sample (IBS/PEBS/SPE): an access with its data source. */
static void parse_pmu_sample(prof_session_t *s, rd_t *r, uint64_t st)
{
    prof_access_t a = {0};
    a.write = -1;
    if (st & PERF_SAMPLE_IP)
        a.ip = rd64(r);
    if (st & PERF_SAMPLE_TID)
        rd_pidtid(r, &a.pid, &a.tid);
    if (st & PERF_SAMPLE_TIME)
        a.time = rd64(r);
    if (st & PERF_SAMPLE_ADDR)
        a.addr = rd64(r);
    if (st & PERF_SAMPLE_CPU)
        a.cpu = (int32_t)(uint32_t)rd64(r);
    if (st & PERF_SAMPLE_WEIGHT)
        rd64(r);
    uint64_t src = (st & PERF_SAMPLE_DATA_SRC) ? rd64(r) : 0;
    int remote = prof_pmu_data_src(src);
    if (remote < 0 || !a.addr)
        return; /* not a memory access, or the source is unknown */
    a.node = remote ? PROF_NODE_REMOTE : PROF_NODE_LOCAL;
    a.present = true; /* a retired load or store had its page */
    s->pmu_samples++;
    VEC_PUSH(s->acc, a);
}

static void parse_sample(prof_session_t *s, rd_t *r, uint64_t st)
{
    if (st & PERF_SAMPLE_DATA_SRC) {
        parse_pmu_sample(s, r, st);
        return;
    }
    prof_touch_t t = {.chain = -1};
    if (st & PERF_SAMPLE_IP)
        t.ip = rd64(r);
    if (st & PERF_SAMPLE_TID)
        rd_pidtid(r, &t.pid, &t.tid);
    if (st & PERF_SAMPLE_TIME)
        t.time = rd64(r);
    if (st & PERF_SAMPLE_ADDR)
        t.addr = rd64(r);
    if (st & PERF_SAMPLE_CPU)
        t.cpu = (int32_t)(uint32_t)rd64(r);
    t.period = (st & PERF_SAMPLE_PERIOD) ? rd64(r) : s->ft_period;
    if (!t.period)
        t.period = 1;
    if (st & PERF_SAMPLE_CALLCHAIN) {
        uint64_t nr = rd64(r);
        uint64_t ips[PROF_MAX_CHAIN];
        int k = 0;
        for (uint64_t i = 0; i < nr && r->p < r->end; i++) {
            uint64_t ip = rd64(r);
            if (ip >= (uint64_t)PERF_CONTEXT_MAX)
                continue; /* context markers */
            if (k < PROF_MAX_CHAIN)
                ips[k++] = ip;
        }
        t.chain = intern_chain(s, ips, k);
    }
    if (st & PERF_SAMPLE_STACK_USER) {
        uint64_t size = rd64(r);
        if (size) {
            t.ret = rd64(r);
            r->p += size - 8;
            uint64_t dyn = rd64(r);
            if (dyn < 8)
                t.ret = 0;
        }
    }
    if (st & PERF_SAMPLE_PHYS_ADDR)
        t.phys = rd64(r);
    s->ft_samples++;
    s->ft_weight += t.period;
    VEC_PUSH(s->touch, t);
}

static prof_proc_t *proc_get(prof_session_t *s, int pid)
{
    for (size_t i = 0; i < s->procs.n; i++)
        if (s->procs.v[i].pid == pid)
            return &s->procs.v[i];
    prof_proc_t p;
    memset(&p, 0, sizeof p);
    p.pid = pid;
    p.ppid = -1;
    VEC_PUSH(s->procs, p);
    return &s->procs.v[s->procs.n - 1];
}

static void parse_mmap2(prof_session_t *s, rd_t *r, uint16_t misc)
{
    prof_map_t m;
    memset(&m, 0, sizeof m);
    rd_pidtid(r, &m.pid, &(int32_t){0});
    m.start = rd64(r);
    m.end = m.start + rd64(r);
    m.pgoff = rd64(r);
    if (misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
        r->p += 24; /* build id size + pad + 20 bytes */
    } else {
        uint64_t mm = rd64(r);
        m.maj = (uint32_t)mm;
        m.min = (uint32_t)(mm >> 32);
        m.ino = rd64(r);
        rd64(r); /* ino_generation */
    }
    uint64_t pf = rd64(r);
    m.prot = (uint32_t)pf;
    const char *name = (const char *)r->p;
    size_t maxlen = (size_t)(r->end - r->p);
    m.name = strndup(name, maxlen);
    if (m.name)
        m.name[strnlen(m.name, maxlen)] = 0;
    m.gen = proc_get(s, m.pid)->gen;
    VEC_PUSH(s->maps, m);
}

void prof_perf_parse(prof_session_t *s, const void *rec, size_t len, uint64_t st)
{
    const struct perf_event_header *h = rec;
    rd_t r = {(const uint8_t *)rec + sizeof *h, (const uint8_t *)rec + len};
    switch (h->type) {
    case PERF_RECORD_SAMPLE:
        parse_sample(s, &r, st);
        break;
    case PERF_RECORD_MMAP2:
        parse_mmap2(s, &r, h->misc);
        break;
    case PERF_RECORD_COMM: {
        int32_t pid, tid;
        rd_pidtid(&r, &pid, &tid);
        if (pid != tid)
            break; /* a thread renamed itself */
        prof_proc_t *p = proc_get(s, pid);
        snprintf(p->comm, sizeof p->comm, "%.*s", (int)(r.end - r.p), (const char *)r.p);
        if (h->misc & PERF_RECORD_MISC_COMM_EXEC) {
            /* the time is in the sample_id trailer: TID, TIME, CPU */
            size_t nl = strnlen((const char *)r.p, (size_t)(r.end - r.p));
            const uint8_t *tr = r.p + ((nl + 1 + 7) & ~(size_t)7);
            rd_t t = {tr + 8, r.end};
            uint64_t time = rd64(&t);
            if (p->gen < 8)
                p->exec_time[p->gen] = time;
            p->gen++;
        }
        break;
    }
    case PERF_RECORD_FORK: {
        struct { uint32_t pid, ppid, tid, ptid; uint64_t time; } f;
        if (len < sizeof *h + sizeof f)
            break;
        memcpy(&f, (const uint8_t *)rec + sizeof *h, sizeof f);
        if (f.pid != f.tid)
            break; /* a new thread, not a process */
        prof_proc_t *p = proc_get(s, (int)f.pid);
        p->ppid = (int)f.ppid;
        p->fork_time = f.time;
        /* it starts with a copy of its parent's address space */
        int pgen = proc_get(s, (int)f.ppid)->gen;
        size_t nm = s->maps.n;
        for (size_t i = 0; i < nm; i++)
            if (s->maps.v[i].pid == (int)f.ppid && s->maps.v[i].gen == pgen) {
                prof_map_t m = s->maps.v[i];
                m.pid = (int)f.pid;
                m.gen = 0;
                m.name = m.name ? strdup(m.name) : NULL;
                VEC_PUSH(s->maps, m);
            }
        break;
    }
    case PERF_RECORD_LOST:
        rd64(&r);
        s->ft_lost += rd64(&r);
        break;
    default:
        break;
    }
}

static void drain_one(prof_session_t *s, prof_perf_t *p, int i)
{
    struct perf_event_mmap_page *mp = p->ring[i];
    uint8_t *data = (uint8_t *)mp + sysconf(_SC_PAGESIZE);
    uint64_t head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
    uint64_t tail = mp->data_tail;
    size_t size = p->ring_bytes;
    while (tail < head) {
        struct perf_event_header h;
        size_t off = (size_t)(tail % size);
        if (off + sizeof h <= size) {
            memcpy(&h, data + off, sizeof h);
        } else {
            size_t a = size - off;
            memcpy(&h, data + off, a);
            memcpy((uint8_t *)&h + a, data, sizeof h - a);
        }
        if (h.size < sizeof h)
            break;
        if (off + h.size <= size) {
            prof_perf_parse(s, data + off, h.size, p->st[i]);
        } else {
            size_t a = size - off;
            memcpy(p->tmp, data + off, a);
            memcpy(p->tmp + a, data, h.size - a);
            prof_perf_parse(s, p->tmp, h.size, p->st[i]);
        }
        tail += h.size;
    }
    __atomic_store_n(&mp->data_tail, tail, __ATOMIC_RELEASE);
}

void prof_perf_drain(prof_session_t *s, prof_perf_t *p)
{
    for (int i = 0; p && i < p->n; i++)
        drain_one(s, p, i);
}

void prof_perf_close(prof_perf_t *p)
{
    if (!p)
        return;
    for (int i = 0; i < p->n; i++) {
        munmap(p->ring[i], p->ring_bytes + (size_t)sysconf(_SC_PAGESIZE));
        close(p->fd[i]);
    }
    free(p->tmp);
    free(p);
}
