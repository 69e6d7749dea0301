/* Access sampling without a PMU: a background thread protects (PROT_NONE)
 * randomly chosen pages of tracked allocations at a bounded rate; the first
 * access to such a page faults, the SIGSEGV handler records (address, IP,
 * thread, CPU, node of the page), restores the protection and returns, so the
 * access is retried. Faults that are not ours go to the program's handler
 * (or the default action).
 *
 * Armed pages live in a fixed slot array changed only with atomics, so the
 * handler takes no lock. A slot holds a page address and its state in the
 * low bits: ARMING while the sampler's mprotect(PROT_NONE) is in flight,
 * armed (no bit) once it has landed, CLAIMING while a handler restores the
 * page. The invariant the program's life depends on: a page is protected
 * only while a slot names it. So a handler claims only an armed slot (a
 * handler that ran late, for a fault of an earlier arming of the same page,
 * must not restore a page whose protection is still to land), faults on an
 * ARMING or CLAIMING page are simply retried, and the page is restored
 * before its slot is freed. A page is also pushed to a "recently released"
 * ring before its slot is freed, so a late handler retries without a
 * syscall.
 *
 * The same handler (SIGSEGV and SIGBUS) writes a CRASH record when a fault
 * is not ours and the program has no handler of its own, so the report can
 * say where the program died. */
#include "shim.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <sys/uio.h>
#include <linux/futex.h>
#include <sched.h>
#include <ucontext.h>
#include <unistd.h>

static _Atomic uintptr_t slot_page[SHIM_SLOTS];
static int slot_prot[SHIM_SLOTS];
#define SLOT_ARMING ((uintptr_t)1)
#define SLOT_CLAIMING ((uintptr_t)2)
#define SLOT_STATE (SLOT_ARMING | SLOT_CLAIMING)

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

/* the program's own dispositions of the signals we handle */
static struct sigaction app_act[2];
static _Atomic int handler_on[2];
static int sig_index(int sig) { return sig == SIGSEGV ? 0 : sig == SIGBUS ? 1 : -1; }

static pthread_t armer;
static _Atomic int armer_run;
static _Atomic int armer_started;
static _Atomic uint64_t pause_until; /* no arming before (a vfork child execs) */
static _Atomic int spawns;           /* spawns in flight: no arming */
static _Atomic int sampling;         /* our handler is in place and the ring exists */

void shim_pause_arming(uint64_t ns)
{
    uint64_t t = lc_now_ns() + ns, cur = atomic_load(&pause_until);
    while (cur < t && !atomic_compare_exchange_weak(&pause_until, &cur, t))
        ;
}

void shim_block_arming(int delta) { atomic_fetch_add(&spawns, delta); }

static int arming_paused(void) { return atomic_load(&spawns) > 0 || lc_now_ns() < atomic_load(&pause_until); }

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

/* t: taken before the page was restored, so every fault the restore lets
 * through (another thread's access that waited on it) comes after it. */
static void record_access(uint64_t t, uintptr_t addr, uintptr_t page, const ucontext_t *uc)
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
    int status = -1, first = 0;
    if (syscall(SYS_move_pages, 0, 1ul, &pg, NULL, &status, 0) < 0)
        status = -1;
    else
        first = status == -ENOENT; /* not there yet: this access places it */
    s->r = (lprof_access_t){{LPROF_REC_ACCESS, sizeof(lprof_access_t)}, t, addr,
                            (uint64_t)uc->uc_mcontext.gregs[REG_RIP], (int32_t)syscall(SYS_gettid),
                            (int32_t)cpu, status < 0 ? -1 : status,
                            ((uc->uc_mcontext.gregs[REG_ERR] & 2) ? 1 : 0) | (first ? 2 : 0) |
                                (status >= 0 ? 4 : 0),
                            *(const uint64_t *)uc->uc_mcontext.gregs[REG_RSP]};
    atomic_store_explicit(&s->seq, h + 1, memory_order_release);
    __atomic_fetch_add(&S.stats.samples, 1, __ATOMIC_RELAXED);
}

/* Restores an armed slot's page and frees the slot, if this caller wins it
 * (1), else 0. slot_prot[i] is read before the slot is freed: the sampler
 * reuses only free slots. */
static __thread int t_claiming __attribute__((tls_model("initial-exec")));

static int release_slot(int i, uintptr_t page)
{
    uintptr_t armed = page;
    if (!atomic_compare_exchange_strong(&slot_page[i], &armed, page | SLOT_CLAIMING))
        return 0;
    t_claiming++;
    push_recent(page);
    shim_real_mprotect((void *)page, S.page, slot_prot[i]);
    atomic_store(&slot_page[i], 0);
    t_claiming--;
    return 1;
}

/* 1 if the fault was on a page we armed or are arming or restoring (the
 * access is retried); a sample is recorded by the handler that restores. */
static int claim(uintptr_t addr, const ucontext_t *uc)
{
    uintptr_t page = addr & ~(uintptr_t)(S.page - 1);
    for (int i = 0; i < SHIM_SLOTS; i++) {
        uintptr_t v = atomic_load(&slot_page[i]);
        if ((v & ~SLOT_STATE) != page)
            continue;
        if (!(v & SLOT_STATE)) {
            uint64_t t = lc_now_ns(); /* before the restore: see record_access */
            if (release_slot(i, page))
                record_access(t, addr, page, uc);
        }
        return 1;
    }
    return 0;
}

/* A thread may run its handler long after another thread restored the page
 * (slow or oversubscribed machines): if the page was released a moment ago
 * or is readable now, retry the access, a bounded number of times in a row
 * for the same page (a late handler needs one; a page the program itself
 * protected ends in its own handler). */
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
    return ++retry_count < 1000 && (is_recent(page) || readable_now(addr));
}

/* The program's own handler runs as it would have (its mask, its flags);
 * with the default action we write where it died and let the kernel
 * deliver the signal again. */
static void crash_record(int sig, siginfo_t *si, const ucontext_t *uc)
{
    lprof_crash_t c = {{LPROF_REC_CRASH, sizeof c}, lc_now_ns(), (uint64_t)(uintptr_t)si->si_addr,
                       (uint64_t)uc->uc_mcontext.gregs[REG_RIP], 0, (int32_t)syscall(SYS_gettid), sig,
                       si->si_code, 0};
    uint64_t sp = (uint64_t)uc->uc_mcontext.gregs[REG_RSP];
    char w;
    struct iovec l = {&w, 1}, r = {(void *)(uintptr_t)sp, 1};
    if (sp && syscall(SYS_process_vm_readv, (long)getpid(), &l, 1ul, &r, 1ul, 0ul) == 1)
        c.ret = *(const uint64_t *)(uintptr_t)sp;
    shim_log_direct(&c, sizeof c);
}

static void chain(int sig, siginfo_t *si, void *uc)
{
    int k = sig_index(sig);
    struct sigaction *app = &app_act[k];
    __atomic_fetch_add(&S.stats.chained, 1, __ATOMIC_RELAXED);
    void (*h)(int) = app->sa_handler;
    if (h != SIG_DFL && h != SIG_IGN) {
        sigset_t old;
        pthread_sigmask(SIG_BLOCK, &app->sa_mask, &old);
        int info = (app->sa_flags & SA_SIGINFO) != 0;
        void (*ha)(int, siginfo_t *, void *) = app->sa_sigaction;
        if (app->sa_flags & SA_RESETHAND) {
            memset(app, 0, sizeof *app);
            app->sa_handler = SIG_DFL;
        }
        if (info)
            ha(sig, si, uc);
        else
            h(sig);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        return;
    }
    if (h == SIG_IGN && si->si_code <= 0)
        return; /* sent by kill/raise and ignored by the program */
    /* a real fault with SIG_IGN kills the process as the default does */
    /* default action: record, uninstall ourselves; the faulting instruction
     * runs again and the kernel delivers the real signal (a sent one is
     * raised again). */
    if (atomic_load(&S.ready))
        crash_record(sig, si, uc);
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    atomic_store(&handler_on[k], 0);
    if (k == 0)
        atomic_store(&sampling, 0);
    shim_R.sigaction(sig, &dfl, NULL);
    if (si->si_code <= 0) /* sent by kill/raise: nothing re-executes */
        raise(sig);
}

static void on_segv(int sig, siginfo_t *si, void *uc)
{
    int saved = errno;
    if (sig != SIGSEGV) {
        chain(sig, si, uc);
        errno = saved;
        return;
    }
    if (si->si_code == SEGV_ACCERR && acc_ring && claim((uintptr_t)si->si_addr, uc)) {
        retry_page = 0; /* the late-fault count is per run of faults, not per life */
        errno = saved;
        return;
    }
    if (si->si_code == SEGV_ACCERR && acc_ring && retry_ok((uintptr_t)si->si_addr)) {
        errno = saved;
        return;
    }
    chain(sig, si, uc);
    errno = saved;
}

/* Called with the lock held, so no slot in the range is ARMING (the sampler
 * arms under the lock); one a handler is restoring is waited for: the
 * caller is about to unmap or re-protect the range, and a restore landing
 * after that would change somebody else's mapping or undo the program's
 * own protection. */
void shim_disarm_range_locked(uintptr_t lo, size_t len)
{
    uintptr_t hi = lo + len < lo ? ~(uintptr_t)0 : lo + len;
    for (int i = 0; i < SHIM_SLOTS; i++) {
        for (;;) {
            uintptr_t v = atomic_load(&slot_page[i]), p = v & ~SLOT_STATE;
            if (!v || p + S.page <= lo || p >= hi)
                break;
            if (!(v & SLOT_STATE) && release_slot(i, p))
                break;
            if (t_claiming)
                break; /* a signal handler interrupted this thread's own restore */
            sched_yield(); /* another thread's handler is restoring it */
        }
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
        if (arming_paused() || !shim_pick_page_locked(*rnd, &page, &prot) || shim_io_overlaps_locked(page, page + S.page))
            continue;
        int dup = 0;
        for (int j = 0; j < SHIM_SLOTS; j++)
            dup |= (atomic_load(&slot_page[j]) & ~SLOT_STATE) == page;
        if (dup)
            continue;
        slot_prot[i] = prot;
        /* named before it is protected, armed (claimable) only after */
        atomic_store(&slot_page[i], page | SLOT_ARMING);
        if (shim_real_mprotect((void *)page, S.page, PROT_NONE) != 0) {
            atomic_store(&slot_page[i], 0);
            continue;
        }
        atomic_store(&slot_page[i], page);
        S.stats.armed++;
    }
}

static void on_segv(int sig, siginfo_t *si, void *uc);

static int handler_still_ours(void)
{
    struct sigaction cur;
    if (shim_R.sigaction(SIGSEGV, NULL, &cur) != 0)
        return 0;
    return (cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_segv;
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
        /* a tick, cut short by shim_access_stop (a process that exits or
         * execs must not wait for the tick) */
        struct timespec ts = {0, (long)tick_ns};
        syscall(SYS_futex, &armer_run, FUTEX_WAIT_PRIVATE, 1, &ts, NULL, 0);
        if (!atomic_load(&armer_run))
            break;
        shim_lock();
        shim_access_flush_locked();
        if (atomic_load(&sampling) && !handler_still_ours()) {
            /* the program replaced our handler without sigaction():
             * an armed page must never reach its handler */
            atomic_store(&sampling, 0);
            shim_disarm_range_locked(0, ~(uintptr_t)0);
        }
        if (!atomic_load(&S.finished) && atomic_load(&sampling) && !arming_paused())
            arm_some_locked(&rnd, quota);
        if (++ticks % 10 == 0)
            shim_flush_locked();
        shim_unlock();
    }
    return NULL;
}

void shim_access_start(void)
{
    int expect = 0;
    if (S.fd < 0 || !atomic_compare_exchange_strong(&armer_started, &expect, 1))
        return;
    atomic_store(&armer_run, 1);
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setstacksize(&a, 64 * 1024);
    int g = shim_guard;
    shim_guard = 1;
    if (pthread_create(&armer, &a, armer_main, NULL) == 0)
        pthread_setname_np(armer, "locus-prof");
    else
        atomic_store(&armer_started, 0);
    shim_guard = g;
    pthread_attr_destroy(&a);
}

void shim_access_stop(void)
{
    if (!atomic_load(&armer_started))
        return;
    atomic_store(&armer_run, 0);
    syscall(SYS_futex, &armer_run, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    pthread_join(armer, NULL);
    atomic_store(&armer_started, 0);
}

/* A forked child has no sampler thread: it starts with the child's next
 * recorded allocation (a child that only execs never creates a thread). */
void shim_access_after_fork(void)
{
    atomic_store(&armer_started, 0);
    atomic_store(&spawns, 0);
    atomic_store(&pause_until, 0);
    for (int i = 0; i < SHIM_SLOTS; i++)
        atomic_store(&slot_page[i], 0);
    acc_flushed = atomic_load(&acc_head); /* the parent flushes its own */
}

static void install(int sig)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    int k = sig_index(sig);
    if (shim_R.sigaction && shim_R.sigaction(sig, &sa, &app_act[k]) == 0)
        atomic_store(&handler_on[k], 1);
}

void shim_access_init(void)
{
    if (S.access_rate) {
        acc_ring = (acc_slot_t *)syscall(SYS_mmap, NULL, SHIM_ACC_RING * sizeof(acc_slot_t),
                                         PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (acc_ring == MAP_FAILED)
            acc_ring = NULL;
    }
    install(SIGSEGV);
    install(SIGBUS);
    if (!atomic_load(&handler_on[0]) || !acc_ring)
        S.access_rate = 0;
    else
        atomic_store(&sampling, 1);
    /* The thread (arming, and flushing the log every 100 ms) starts with
     * the first tracked allocation: a process that has none (sh, echo, the
     * many short children of make or xargs) never pays for a thread. */
}

/* ---------- the program's own SIGSEGV/SIGBUS handlers are chained, not replaced ---------- */

SHIM_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    shim_resolve();
    int k = sig_index(sig);
    if (k < 0 || !atomic_load(&handler_on[k]))
        return shim_R.sigaction(sig, act, old);
    struct sigaction prev = app_act[k];
    if (act)
        app_act[k] = *act;
    if (old)
        *old = prev;
    return 0;
}

SHIM_EXPORT sighandler_t signal(int sig, sighandler_t h)
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
static void never_protect(void *lo, size_t n)
{
    if (shim_guard || !shim_recording())
        return;
    shim_guard = 1;
    shim_lock();
    shim_mark_noprotect_locked((uintptr_t)lo, (uintptr_t)lo + n);
    shim_disarm_range_locked((uintptr_t)lo, n);
    shim_unlock();
    shim_guard = 0;
}

SHIM_EXPORT int pthread_attr_setstack(pthread_attr_t *a, void *stack, size_t size)
{
    shim_resolve();
    never_protect(stack, size);
    return shim_R.pthread_attr_setstack(a, stack, size);
}

SHIM_EXPORT int sigaltstack(const stack_t *ss, stack_t *old)
{
    shim_resolve();
    if (ss && !(ss->ss_flags & SS_DISABLE))
        never_protect(ss->ss_sp, ss->ss_size);
    return shim_R.sigaltstack(ss, old);
}
