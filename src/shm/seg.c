/* The node segment: create or attach it, unlink it once everybody is in, and
 * peer liveness. (Who am I in the job: job.c.) */
#include "shm/shm_internal.h"

#include "core/config.h"
#include "core/error.h"
#include "core/clock.h"
#include "core/sysfs.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>


void shm_note(locus_shm_ep_t *ep, const char *msg)
{
    lc_note_once(&ep->notes, "%s", msg);
}

static bool pid_alive(pid_t pid) { return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM); }

bool shm_peer_exited(const locus_shm_ep_t *ep, int r)
{
    struct pollfd p = ep->peer.pfd[r];
    if (p.fd >= 0)
        return poll(&p, 1, 0) > 0;
    return !pid_alive(ep->peer.pid[r]);
}

static void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

static locus_status_t check_space(uint64_t need)
{
    struct statvfs sv;
    if (statvfs("/dev/shm", &sv) != 0)
        return lc_err_errno(LOCUS_ERR_SYSTEM, errno, "statvfs(/dev/shm)");
    uint64_t avail = (uint64_t)sv.f_bavail * sv.f_frsize;
    if (avail < need) {
        char a[32], b[32];
        return lc_err(LOCUS_ERR_NO_SPACE,
                         "the shm segment needs %s (%" PRIu64 " B) but /dev/shm has %s free: "
                         "enlarge /dev/shm (e.g. docker --shm-size) or lower LOCUS_SHM_QUEUE / "
                         "LOCUS_SHM_HEAP (see `locus plan shm`)",
                         locus_format_size(need, a, sizeof a), need,
                         locus_format_size(avail, b, sizeof b));
    }
    return LOCUS_OK;
}

static locus_status_t create_segment(locus_shm_ep_t *ep, int *fd_out)
{
    uint64_t bytes = ep->plan.segment_bytes;
    locus_status_t st = check_space(bytes);
    if (st)
        return st;
    int fd = -1;
    for (int attempt = 0; attempt < 2 && fd < 0; attempt++) {
        fd = shm_open(ep->name, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
        if (fd >= 0 || errno != EEXIST)
            break;
        /* A leftover of a crashed job with the same id: remove it if its creator is gone. */
        int old = shm_open(ep->name, O_RDONLY | O_CLOEXEC, 0);
        shm_seg_hdr_t h = {0};
        bool stale = old >= 0 && pread(old, &h, sizeof h, 0) == (ssize_t)sizeof h &&
                     h.magic == SHM_MAGIC && !pid_alive((pid_t)h.creator_pid);
        if (old >= 0)
            close(old);
        if (!stale)
            return lc_err(LOCUS_ERR_BUSY, "shm segment %s exists and its creator is alive: job "
                             "id reused? (LOCUS_JOB must be unique per job)", ep->name);
        shm_unlink(ep->name);
    }
    if (fd < 0)
        return lc_err_errno(LOCUS_ERR_SYSTEM, errno, "shm_open(%s, O_CREAT|O_EXCL, 0600)", ep->name);
    /* Reserve the pages now: a full /dev/shm fails here, not as SIGBUS later. */
    int err = posix_fallocate(fd, 0, (off_t)bytes);
    if (err) {
        close(fd);
        shm_unlink(ep->name);
        char a[32];
        if (err == ENOSPC)
            return lc_err(LOCUS_ERR_NO_SPACE, "/dev/shm cannot hold the %s shm segment "
                             "(%" PRIu64 " B): enlarge /dev/shm or lower LOCUS_SHM_QUEUE/LOCUS_SHM_HEAP",
                             locus_format_size(bytes, a, sizeof a), bytes);
        return lc_err_errno(LOCUS_ERR_SYSTEM, err, "fallocate(%s, %" PRIu64 ")", ep->name, bytes);
    }
    *fd_out = fd;
    return LOCUS_OK;
}

static locus_status_t open_segment(locus_shm_ep_t *ep, double timeout_s, int *fd_out)
{
    uint64_t deadline = lc_now_ns() + (uint64_t)(timeout_s * 1e9);
    for (long us = 50;; us = us < 2000 ? us * 2 : us) {
        int fd = shm_open(ep->name, O_RDWR | O_CLOEXEC, 0);
        if (fd >= 0) {
            struct stat sb;
            if (fstat(fd, &sb) == 0 && (uint64_t)sb.st_size == ep->plan.segment_bytes) {
                *fd_out = fd;
                return LOCUS_OK;
            }
            if (fstat(fd, &sb) == 0 && sb.st_size > 0 && (uint64_t)sb.st_size != ep->plan.segment_bytes) {
                close(fd);
                return lc_err(LOCUS_ERR_INVALID,
                                 "shm segment %s is %lld B but this process plans %" PRIu64
                                 " B for %d processes: LOCUS_SHM_* settings differ between processes?",
                                 ep->name, (long long)sb.st_size, ep->plan.segment_bytes, ep->size);
            }
            close(fd);
        } else if (errno != ENOENT) {
            return lc_err_errno(LOCUS_ERR_SYSTEM, errno, "shm_open(%s)", ep->name);
        }
        if (lc_now_ns() > deadline)
            return lc_err(LOCUS_ERR_TIMEOUT, "rank 0 did not create shm segment %s within %.1f s "
                             "(LOCUS_SHM_TIMEOUT)", ep->name, timeout_s);
        sleep_us(us);
    }
}

/* Everyone waits until all attached; the last one in unlinks the name. */
static locus_status_t wait_attached(locus_shm_ep_t *ep, double timeout_s)
{
    uint64_t deadline = lc_now_ns() + (uint64_t)(timeout_s * 1e9);
    uint32_t n = (uint32_t)ep->size;
    while (__atomic_load_n(&ep->hdr->attached, __ATOMIC_ACQUIRE) < n) {
        for (int r = 0; r < ep->size; r++) {
            pid_t p = __atomic_load_n(&ep->procs[r].pid, __ATOMIC_ACQUIRE);
            if (p && !pid_alive(p)) {
                shm_unlink(ep->name);
                return lc_err(LOCUS_ERR_PEER_FAILED, "rank %d (pid %d) died while the job "
                                 "attached to %s", r, (int)p, ep->name);
            }
        }
        if (lc_now_ns() > deadline) {
            shm_unlink(ep->name);
            return lc_err(LOCUS_ERR_TIMEOUT, "only %u of %u processes attached to %s within "
                             "%.1f s (LOCUS_SHM_TIMEOUT)",
                             __atomic_load_n(&ep->hdr->attached, __ATOMIC_ACQUIRE), n, ep->name,
                             timeout_s);
        }
        sleep_us(100);
    }
    return LOCUS_OK;
}

static locus_status_t verify_header(locus_shm_ep_t *ep)
{
    const shm_seg_hdr_t *h = ep->hdr;
    if (h->magic != SHM_MAGIC || h->version != SHM_VERSION)
        return lc_err(LOCUS_ERR_CORRUPT, "%s: not a locus shm segment (magic %#" PRIx64 ")",
                         ep->name, h->magic);
    if (h->nprocs != (uint32_t)ep->size || h->segment_bytes != ep->plan.segment_bytes ||
        h->queue_bytes != ep->plan.queue_bytes || h->heap_bytes != ep->plan.heap_bytes ||
        h->max_len != ep->lay.max_len)
        return lc_err(LOCUS_ERR_INVALID,
                         "%s: rank 0 planned %u processes, queue %" PRIu64 " B, heap %" PRIu64
                         " B; this process %d, %" PRIu64 " B, %" PRIu64
                         " B: LOCUS_SIZE/LOCUS_SHM_* differ between processes",
                         ep->name, h->nprocs, h->queue_bytes, h->heap_bytes, ep->size,
                         ep->plan.queue_bytes, ep->plan.heap_bytes);
    return LOCUS_OK;
}

/* Rank 0 writes the header of the fresh (zeroed) segment and marks it ready;
 * rings need no formatting. */
static void write_header(locus_shm_ep_t *ep)
{
    shm_seg_hdr_t *h = ep->hdr;
    h->magic = SHM_MAGIC;
    h->version = SHM_VERSION;
    h->nprocs = (uint32_t)ep->size;
    h->segment_bytes = ep->plan.segment_bytes;
    h->queue_bytes = ep->plan.queue_bytes;
    h->heap_bytes = ep->plan.heap_bytes;
    h->eager_bytes = ep->plan.eager_bytes;
    h->max_len = ep->lay.max_len;
    h->creator_pid = (uint32_t)getpid();
    uint64_t salt = 0;
    if (getrandom(&salt, sizeof salt, 0) != (ssize_t)sizeof salt)
        salt = lc_now_ns() * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
    h->salt = salt | (1ull << 63);
    __atomic_store_n(&h->ready, 1, __ATOMIC_RELEASE);
}

/* The other ranks wait for rank 0's header (or its death) and check it. */
static locus_status_t await_header(locus_shm_ep_t *ep, double timeout_s)
{
    uint64_t deadline = lc_now_ns() + (uint64_t)(timeout_s * 1e9);
    while (!__atomic_load_n(&ep->hdr->ready, __ATOMIC_ACQUIRE)) {
        if (lc_now_ns() > deadline || (ep->hdr->creator_pid && !pid_alive((pid_t)ep->hdr->creator_pid)))
            return lc_err(LOCUS_ERR_TIMEOUT, "%s: rank 0 never finished setting it up", ep->name);
        sleep_us(50);
    }
    return verify_header(ep);
}

/* First touch of my own ring, fast-box pool and proc slot by me: their
 * pages land on my node. Then I count myself in; the last one in unlinks
 * the name, so nothing can leak from there on. */
static void join(locus_shm_ep_t *ep)
{
    unsigned char *myq = ep->base + ep->lay.queues + (uint64_t)ep->rank * ep->lay.queue_stride;
    madvise(myq, ep->lay.queue_stride, 23 /* MADV_POPULATE_WRITE */);
    if (ep->plan.fboxes) { /* madvise wants a page-aligned start */
        uint64_t fb = ep->lay.fboxes + (uint64_t)ep->rank * ep->plan.fboxes * ep->lay.fbox_stride;
        uint64_t lo = fb & ~(uint64_t)(SHM_PAGE - 1);
        madvise(ep->base + lo, fb - lo + ep->plan.fboxes * ep->lay.fbox_stride, 23);
    }
    shm_proc_t *me = &ep->procs[ep->rank];
    int cpu = sched_getcpu();
    me->cpu = cpu;
    me->l3 = cpu >= 0 ? lc_sysfs_l3_id(cpu) : -1;
    __atomic_store_n(&me->state, PROC_ALIVE, __ATOMIC_RELEASE);
    __atomic_store_n(&me->pid, (int32_t)getpid(), __ATOMIC_RELEASE);
    uint32_t now = __atomic_add_fetch(&ep->hdr->attached, 1, __ATOMIC_ACQ_REL);
    if (now == (uint32_t)ep->size) {
        shm_unlink(ep->name);
        __atomic_store_n(&ep->hdr->unlinked, 1, __ATOMIC_RELEASE);
    }
}

locus_status_t shm_segment_attach(locus_shm_ep_t *ep, const locus_shm_opts_t *opts)
{
    (void)opts;
    double timeout_s;
    locus_status_t st = lc_tun_double(LC_TUN_SHM_TIMEOUT, &timeout_s);
    if (st)
        return st;
    int fd = -1;
    st = ep->rank == 0 ? create_segment(ep, &fd) : open_segment(ep, timeout_s, &fd);
    if (st)
        return st;
    void *m = mmap(NULL, ep->plan.segment_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int merr = errno;
    close(fd);
    if (m == MAP_FAILED) {
        if (ep->rank == 0)
            shm_unlink(ep->name);
        return lc_err_errno(LOCUS_ERR_NO_MEMORY, merr, "mmap(%s, %" PRIu64 ")", ep->name,
                            ep->plan.segment_bytes);
    }
    ep->base = m;
    ep->map_bytes = ep->plan.segment_bytes;
    ep->hdr = (shm_seg_hdr_t *)m;
    ep->procs = (shm_proc_t *)(ep->base + ep->lay.procs);
    if (ep->rank == 0)
        write_header(ep);
    else if ((st = await_header(ep, timeout_s))) {
        shm_segment_detach(ep);
        return st;
    }
    join(ep);
    if ((st = wait_attached(ep, timeout_s))) {
        shm_segment_detach(ep);
        return st;
    }
    return LOCUS_OK;
}

void shm_segment_detach(locus_shm_ep_t *ep)
{
    if (ep->base)
        munmap(ep->base, ep->map_bytes);
    ep->base = NULL;
}

locus_status_t shm_check_peers(locus_shm_ep_t *ep)
{
    if (ep->fatal)
        return ep->fatal;
    int n = ep->size;
    bool any = false;
    for (int r = 0; r < n; r++)
        ep->peer.pfd[r].revents = 0;
    if (poll(ep->peer.pfd, (nfds_t)n, 0) > 0)
        any = true;
    for (int r = 0; r < n; r++) {
        if (r == ep->rank || ep->peer.gone[r])
            continue;
        bool dead;
        if (ep->peer.pfd[r].fd >= 0)
            dead = any && (ep->peer.pfd[r].revents & (POLLIN | POLLHUP | POLLERR));
        else
            dead = !pid_alive(ep->peer.pid[r]);
        if (!dead)
            continue;
        if (__atomic_load_n(&ep->procs[r].state, __ATOMIC_ACQUIRE) == PROC_FINALIZED) {
            ep->peer.gone[r] = true; /* left cleanly; only operations aimed at it fail */
            if (ep->peer.pfd[r].fd >= 0)
                close(ep->peer.pfd[r].fd);
            ep->peer.pfd[r].fd = -1;
            shm_fail_peer_ops(ep, r);
            continue;
        }
        ep->fatal = LOCUS_ERR_PEER_FAILED;
        snprintf(ep->fatal_msg, sizeof ep->fatal_msg,
                 "rank %d (pid %d) died without locus_shm_finalize", r, (int)ep->peer.pid[r]);
        return lc_err(ep->fatal, "%s", ep->fatal_msg);
    }
    return LOCUS_OK;
}
