/* Access sampling without a PMU: a background thread protects (PROT_NONE)
 * randomly chosen pages of tracked allocations at a bounded rate; the first
 * access to such a page faults, the SIGSEGV handler records (address, IP,
 * thread, CPU, node of the page), restores the protection and returns, so the
 * access is retried. Faults that are not ours go to the program's handler
 * (or the default action).
 *
 * Armed pages live in a fixed slot array changed only with atomics, so the
 * handler takes no lock. A page is pushed to a "recently released" ring
 * before its slot is cleared: a second thread faulting on the same page in
 * between sees it there and simply retries. */
#include "shim.h"

#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <sys/uio.h>
#include <ucontext.h>
#include <unistd.h>

static _Atomic uintptr_t slot_page[SHIM_SLOTS];
static int slot_prot[SHIM_SLOTS];

#define RECENT 256
static _Atomic uintptr_t recent_page[RECENT];
static _Atomic uint64_t recent_time[RECENT];
static _Atomic unsigned recent_next;

typedef struct {
    _Atomic uint64_t seq; /* index + 1 once the record is complete */
    lprof_access_t r;
} acc_slot_t;
static acc_slot_t *acc_ring;
static _Atomic uint64_t acc_head;
static uint64_t acc_flushed;

static struct sigaction app_act; /* the program's own SIGSEGV disposition */
static int handler_on;
static int (*real_sigaction)(int, const struct sigaction *, struct sigaction *);

static pthread_t armer;
static _Atomic int armer_run;
static int armer_started;

static void push_recent(uintptr_t page)
{
    unsigned i = atomic_fetch_add(&recent_next, 1) % RECENT;
    atomic_store(&recent_time[i], lc_now_ns());
    atomic_store(&recent_page[i], page);
}

static int is_recent(uintptr_t page)
{
    uint64_t now = lc_now_ns();
    for (int i = 0; i < RECENT; i++)
        if (atomic_load(&recent_page[i]) == page && now - atomic_load(&recent_time[i]) < 1000000000ull)
            return 1;
    return 0;
}

static void record_access(uintptr_t addr, uintptr_t page, const ucontext_t *uc)
{
    uint64_t h = atomic_load(&acc_head);
    do {
        if (h - acc_flushed >= SHIM_ACC_RING) {
            __atomic_fetch_add(&S.stats.dropped, 1, __ATOMIC_RELAXED);
            return;
        }
    } while (!atomic_compare_exchange_weak(&acc_head, &h, h + 1));
    acc_slot_t *s = &acc_ring[h % SHIM_ACC_RING];
    unsigned cpu = 0, node = 0;
    syscall(SYS_getcpu, &cpu, &node, NULL);
    void *pg = (void *)page;
    int status = -1;
    if (syscall(SYS_move_pages, 0, 1ul, &pg, NULL, &status, 0) < 0)
        status = -1;
    s->r = (lprof_access_t){{LPROF_REC_ACCESS, sizeof(lprof_access_t)}, lc_now_ns(), addr,
                            (uint64_t)uc->uc_mcontext.gregs[REG_RIP], (int32_t)syscall(SYS_gettid),
                            (int32_t)cpu, status < 0 ? -1 : status,
                            (uc->uc_mcontext.gregs[REG_ERR] & 2) ? 1 : 0,
                            *(const uint64_t *)uc->uc_mcontext.gregs[REG_RSP]};
    atomic_store_explicit(&s->seq, h + 1, memory_order_release);
    __atomic_fetch_add(&S.stats.samples, 1, __ATOMIC_RELAXED);
}

/* 1 if the fault was on a page we armed (the access will be retried). */
static int claim(uintptr_t addr, const ucontext_t *uc)
{
    uintptr_t page = addr & ~(uintptr_t)(S.page - 1);
    for (int i = 0; i < SHIM_SLOTS; i++) {
        uintptr_t p = atomic_load(&slot_page[i]);
        if (p != page)
            continue;
        push_recent(page);
        if (atomic_compare_exchange_strong(&slot_page[i], &p, 0)) {
            shim_real_mprotect((void *)page, S.page, slot_prot[i]);
            record_access(addr, page, uc);
        }
        return 1;
    }
    return is_recent(page);
}

/* A thread may run its handler long after another thread restored the page
 * (slow or oversubscribed machines): if the page is readable now, retry the
 * access, a bounded number of times in a row for the same page. */
static __thread uintptr_t retry_page __attribute__((tls_model("initial-exec")));
static __thread unsigned retry_count __attribute__((tls_model("initial-exec")));

static int readable_now(uintptr_t addr)
{
    char c;
    struct iovec l = {&c, 1}, r = {(void *)addr, 1};
    return syscall(SYS_process_vm_readv, (long)getpid(), &l, 1ul, &r, 1ul, 0ul) == 1;
}

static int retry_ok(uintptr_t addr)
{
    uintptr_t page = addr & ~(uintptr_t)(S.page - 1);
    if (page != retry_page) {
        retry_page = page;
        retry_count = 0;
    }
    return ++retry_count < 1000 && readable_now(addr);
}

static void chain(int sig, siginfo_t *si, void *uc)
{
    __atomic_fetch_add(&S.stats.chained, 1, __ATOMIC_RELAXED);
    if ((app_act.sa_flags & SA_SIGINFO) && app_act.sa_sigaction) {
        app_act.sa_sigaction(sig, si, uc);
        return;
    }
    if (app_act.sa_handler != SIG_DFL && app_act.sa_handler != SIG_IGN) {
        app_act.sa_handler(sig);
        return;
    }
    /* default action: uninstall ourselves; the faulting instruction runs
     * again and the kernel delivers the real SIGSEGV. */
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    real_sigaction(sig, &dfl, NULL);
}

static void on_segv(int sig, siginfo_t *si, void *uc)
{
    int saved = errno;
    if (si->si_code == SEGV_ACCERR && claim((uintptr_t)si->si_addr, uc)) {
        retry_page = 0;
        errno = saved;
        return;
    }
    if (si->si_code == SEGV_ACCERR && retry_ok((uintptr_t)si->si_addr)) {
        errno = saved;
        return;
    }
    errno = saved;
    chain(sig, si, uc);
}

void shim_disarm_range_locked(uintptr_t lo, size_t len)
{
    uintptr_t hi = lo + len < lo ? ~(uintptr_t)0 : lo + len;
    for (int i = 0; i < SHIM_SLOTS; i++) {
        uintptr_t p = atomic_load(&slot_page[i]);
        if (!p || p + S.page <= lo || p >= hi)
            continue;
        push_recent(p);
        if (atomic_compare_exchange_strong(&slot_page[i], &p, 0))
            shim_real_mprotect((void *)p, S.page, slot_prot[i]);
    }
}

void shim_access_flush_locked(void)
{
    if (!acc_ring)
        return;
    uint64_t h = atomic_load(&acc_head);
    while (acc_flushed < h) {
        acc_slot_t *s = &acc_ring[acc_flushed % SHIM_ACC_RING];
        if (atomic_load_explicit(&s->seq, memory_order_acquire) != acc_flushed + 1)
            break;
        if (s->r.node < 0) {
            /* the sampled access was the page's first touch: it exists now */
            void *pg = (void *)(uintptr_t)(s->r.addr & ~(uint64_t)(S.page - 1));
            int status = -1;
            if (syscall(SYS_move_pages, 0, 1ul, &pg, NULL, &status, 0) == 0 && status >= 0)
                s->r.node = status;
        }
        shim_log_locked(&s->r, sizeof s->r);
        acc_flushed++;
    }
}

/* I/O ranges in flight (shim_io.c) must not be armed. */
extern int shim_io_overlaps_locked(uintptr_t lo, uintptr_t hi);

static void arm_some_locked(uint64_t *rnd, int quota)
{
    for (int i = 0; i < SHIM_SLOTS && quota > 0; i++) {
        if (atomic_load(&slot_page[i]))
            continue;
        *rnd ^= *rnd << 13;
        *rnd ^= *rnd >> 7;
        *rnd ^= *rnd << 17;
        uintptr_t page;
        int prot;
        quota--;
        if (!shim_pick_page_locked(*rnd, &page, &prot) || shim_io_overlaps_locked(page, page + S.page))
            continue;
        int dup = 0;
        for (int j = 0; j < SHIM_SLOTS; j++)
            dup |= atomic_load(&slot_page[j]) == page;
        if (dup)
            continue;
        slot_prot[i] = prot;
        atomic_store(&slot_page[i], page);
        if (shim_real_mprotect((void *)page, S.page, PROT_NONE) != 0) {
            atomic_store(&slot_page[i], 0);
            continue;
        }
        S.stats.armed++;
    }
}

static void *armer_main(void *arg)
{
    (void)arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    shim_guard = 1;
    uint64_t rnd = lc_now_ns() | 1;
    const uint64_t tick_ns = 10000000; /* 10 ms */
    int quota = (int)(S.access_rate / 100);
    if (quota < 1)
        quota = 1;
    unsigned ticks = 0;
    while (atomic_load(&armer_run)) {
        struct timespec ts = {0, (long)tick_ns};
        nanosleep(&ts, NULL);
        shim_lock();
        shim_access_flush_locked();
        if (!S.finished && S.access_rate)
            arm_some_locked(&rnd, quota);
        if (++ticks % 10 == 0)
            shim_flush_locked();
        shim_unlock();
    }
    return NULL;
}

void shim_access_start(void)
{
    if (armer_started || S.fd < 0)
        return;
    atomic_store(&armer_run, 1);
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setstacksize(&a, 64 * 1024);
    if (pthread_create(&armer, &a, armer_main, NULL) == 0) {
        armer_started = 1;
        pthread_setname_np(armer, "locus-prof");
    }
    pthread_attr_destroy(&a);
}

void shim_access_stop(void)
{
    if (!armer_started)
        return;
    atomic_store(&armer_run, 0);
    pthread_join(armer, NULL);
    armer_started = 0;
}

void shim_access_after_fork(void)
{
    armer_started = 0;
    acc_flushed = atomic_load(&acc_head); /* the parent flushes its own */
    shim_access_start();
}

void shim_access_init(void)
{
    real_sigaction = dlsym(RTLD_NEXT, "sigaction");
    if (S.access_rate) {
        acc_ring = (acc_slot_t *)syscall(SYS_mmap, NULL, SHIM_ACC_RING * sizeof(acc_slot_t),
                                         PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (acc_ring == MAP_FAILED)
            acc_ring = NULL;
    }
    if (acc_ring && real_sigaction) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_segv;
        sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK | SA_RESTART;
        sigemptyset(&sa.sa_mask);
        if (real_sigaction(SIGSEGV, &sa, &app_act) == 0)
            handler_on = 1;
    }
    if (!handler_on)
        S.access_rate = 0;
    /* the thread also flushes the log periodically, sampler or not */
    shim_access_start();
}

/* ---------- the program's own SIGSEGV handlers are chained, not replaced ---------- */

int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    if (!real_sigaction)
        real_sigaction = dlsym(RTLD_NEXT, "sigaction");
    if (sig != SIGSEGV || !handler_on)
        return real_sigaction(sig, act, old);
    if (old)
        *old = app_act;
    if (act)
        app_act = *act;
    return 0;
}

sighandler_t signal(int sig, sighandler_t h)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = h;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(sig, &sa, &old) != 0)
        return SIG_ERR;
    return old.sa_handler;
}

/* Memory used as a stack must never be protected. */
int pthread_attr_setstack(pthread_attr_t *a, void *stack, size_t size)
{
    static int (*real)(pthread_attr_t *, void *, size_t);
    if (!real)
        real = dlsym(RTLD_NEXT, "pthread_attr_setstack");
    if (S.ready) {
        shim_lock();
        shim_mark_noprotect_locked((uintptr_t)stack, (uintptr_t)stack + size);
        shim_disarm_range_locked((uintptr_t)stack, size);
        shim_unlock();
    }
    return real(a, stack, size);
}

int sigaltstack(const stack_t *ss, stack_t *old)
{
    static int (*real)(const stack_t *, stack_t *);
    if (!real)
        real = dlsym(RTLD_NEXT, "sigaltstack");
    if (ss && S.ready && !(ss->ss_flags & SS_DISABLE)) {
        shim_lock();
        shim_mark_noprotect_locked((uintptr_t)ss->ss_sp, (uintptr_t)ss->ss_sp + ss->ss_size);
        shim_disarm_range_locked((uintptr_t)ss->ss_sp, ss->ss_size);
        shim_unlock();
    }
    return real(ss, old);
}
