/* Parallel fault-in: hand-made pthreads, each pinned to one core before it
 * starts, claiming chunks of its home node first (heap_plan.h). */
#include "heap/heap_internal.h"

#include "core/error.h"
#include "core/clock.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif


static int populate_range(char *p, uint64_t len, uint64_t stride, int *use_touch)
{
    if (!__atomic_load_n(use_touch, __ATOMIC_RELAXED)) {
        for (;;) {
            if (madvise(p, len, MADV_POPULATE_WRITE) == 0)
                return 0;
            if (errno == EINTR || errno == EAGAIN)
                continue;
            if (errno != EINVAL)
                return errno;
            break; /* kernel < 5.14: no MADV_POPULATE_WRITE */
        }
        __atomic_store_n(use_touch, 1, __ATOMIC_RELAXED);
    }
    for (uint64_t off = 0; off < len; off += stride)
        ((volatile char *)p)[off] = 0;
    return 0;
}

int heap_populate(char *p, uint64_t len, uint64_t tail_unit, bool refill, uint64_t stride, int *use_touch)
{
    if (tail_unit <= 4096 || len < tail_unit)
        return populate_range(p, len, stride, use_touch);
    for (uint64_t off = 0; off + tail_unit <= len; off += tail_unit) {
        int e = populate_range(p + off + tail_unit - 4096, 4096, 4096, use_touch);
        if (e)
            return e;
    }
    return refill ? populate_range(p, len, stride, use_touch) : 0;
}

typedef struct {
    const heap_fault_args_t *a;
    _Atomic uint64_t next[HEAP_PLAN_MAX_SLOTS];
    _Atomic uint64_t done_bytes;
    _Atomic int failed;
    int use_touch;
    int err;
    uint64_t err_off, err_len;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int finished;
} job_t;

typedef struct {
    job_t *job;
    int index;
    pthread_t tid;
} worker_t;

static void fail(job_t *j, int err, uint64_t off, uint64_t len)
{
    pthread_mutex_lock(&j->mu);
    if (!j->err) {
        j->err = err;
        j->err_off = off;
        j->err_len = len;
    }
    pthread_mutex_unlock(&j->mu);
    atomic_store(&j->failed, 1);
}

static void do_chunk(job_t *j, heap_chunk_t ch)
{
    const heap_plan_t *p = j->a->plan;
    uint64_t run = ch.step == 1 ? ch.count : 1; /* pages per madvise */
    for (uint64_t i = 0; i < ch.count; i += run) {
        uint64_t off = (ch.first + i * ch.step) * p->unit, len = run * p->unit;
        int e = heap_populate(j->a->base + off, len, j->a->tail_unit, j->a->tail_refill, j->a->touch_stride,
                              &j->use_touch);
        if (e) {
            fail(j, e, off, len);
            return;
        }
    }
    atomic_fetch_add_explicit(&j->done_bytes, ch.count * p->unit, memory_order_relaxed);
}

static void *worker(void *arg)
{
    worker_t *w = arg;
    job_t *j = w->job;
    const heap_plan_t *p = j->a->plan;
    int home = j->a->home[w->index];
    int start = home >= 0 ? home : w->index % p->nslots;
    int slots = j->a->home_only && home >= 0 ? 1 : p->nslots;
    for (int i = 0; i < slots && !atomic_load(&j->failed); i++) {
        int s = (start + i) % p->nslots;
        uint64_t n = heap_plan_slot_chunks(p, s);
        for (;;) {
            uint64_t c = atomic_fetch_add_explicit(&j->next[s], 1, memory_order_relaxed);
            if (c >= n || atomic_load_explicit(&j->failed, memory_order_relaxed))
                break;
            do_chunk(j, heap_plan_chunk(p, s, c));
        }
    }
    pthread_mutex_lock(&j->mu);
    j->finished++;
    pthread_cond_signal(&j->cv);
    pthread_mutex_unlock(&j->mu);
    return NULL;
}

static int start_worker(worker_t *w, int cpu)
{
    pthread_attr_t at;
    pthread_attr_init(&at);
    cpu_set_t set;
    CPU_ZERO(&set);
    if (cpu >= 0 && cpu < CPU_SETSIZE) {
        CPU_SET(cpu, &set);
        pthread_attr_setaffinity_np(&at, sizeof set, &set);
    }
    int e = pthread_create(&w->tid, &at, worker, w);
    pthread_attr_destroy(&at);
    return e;
}

/* Wait for every worker, reporting progress about every 100 ms. */
static void wait_workers(job_t *j, int started)
{
    uint64_t total = j->a->plan->units * j->a->plan->unit;
    pthread_mutex_lock(&j->mu);
    while (j->finished < started) {
        if (!j->a->progress) {
            pthread_cond_wait(&j->cv, &j->mu);
            continue;
        }
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 100 * 1000 * 1000;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        if (pthread_cond_timedwait(&j->cv, &j->mu, &ts) == ETIMEDOUT) {
            pthread_mutex_unlock(&j->mu);
            j->a->progress(j->a->progress_arg, atomic_load(&j->done_bytes), total);
            pthread_mutex_lock(&j->mu);
        }
    }
    pthread_mutex_unlock(&j->mu);
    if (j->a->progress)
        j->a->progress(j->a->progress_arg, atomic_load(&j->done_bytes), total);
}

locus_status_t heap_fault_in(const heap_fault_args_t *a, bool *fallback)
{
    job_t *j = calloc(1, sizeof *j);
    worker_t *w = calloc((size_t)a->nthreads, sizeof *w);
    if (!j || !w) {
        free(j);
        free(w);
        return lc_err(LOCUS_ERR_NO_MEMORY, "heap fault-in: cannot allocate %d thread records",
                         a->nthreads);
    }
    j->a = a;
    pthread_mutex_init(&j->mu, NULL);
    pthread_cond_init(&j->cv, NULL);
    int started = 0, create_err = 0;
    for (int t = 0; t < a->nthreads; t++) {
        w[t].job = j;
        w[t].index = t;
        if ((create_err = start_worker(&w[t], a->cpus[t])) != 0) {
            atomic_store(&j->failed, 1);
            break;
        }
        started++;
    }
    wait_workers(j, started);
    for (int t = 0; t < started; t++)
        pthread_join(w[t].tid, NULL);
    *fallback = j->use_touch != 0;
    locus_status_t st = LOCUS_OK;
    if (create_err)
        st = lc_err_errno(LOCUS_ERR_SYSTEM, create_err, "heap fault-in: pthread_create of thread %d of %d",
                             started, a->nthreads);
    else if (j->err)
        st = lc_err_errno(LOCUS_ERR_NO_MEMORY, j->err,
                             "heap fault-in: MADV_POPULATE_WRITE of %llu bytes at offset %llu failed "
                             "(out of memory or the node's pages exhausted)",
                             (unsigned long long)j->err_len, (unsigned long long)j->err_off);
    pthread_mutex_destroy(&j->mu);
    pthread_cond_destroy(&j->cv);
    free(w);
    free(j);
    return st;
}
