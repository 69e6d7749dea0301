/* All-to-all stress for the shm transport, one process per rank (started by
 * `locus run -n N`, mpirun / mpiexec, or the fault driver). Every rank keeps one send
 * and one receive in flight per peer; message k from s to d has a size and
 * content derived from (s, d, k), so the receiver checks every byte, the size,
 * and that k arrives exactly once and in order (tag = k). After --seconds each
 * rank sends DONE carrying its count; the receiver checks it got them all.
 *
 *   --seconds S     duration (default 10)
 *   --max-bits B    sizes are log-uniform in [0, 2^B) plus some exactly 2^B (23 = 8 MiB)
 *   --forever       until an error (fault tests); exit 3 on LOCUS_ERR_PEER_FAILED
 *   --ready-fd N    write one byte to fd N once attached (fault driver)
 *   --no-ptrace     drop CAP_SYS_PTRACE and become non-dumpable: the kernel refuses CMA
 *   --expect-refused  fail unless a real CMA refusal was noted by some rank
 *   --boot NAME     join the job with locus_boot_init first, check that its source
 *                   is NAME (pmix, pmi1, locus-run, ...) and pass the handle as
 *                   opts.boot (without it locus_shm_init joins the job itself)
 * Exit 0 on success, 1 on a data error, 2 on a library error, 3 on PEER_FAILED. */
#include <locus/locus.h>


#include <linux/capability.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define DONE_TAG (1ull << 62)

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

static int max_bits = 23;

static size_t msg_size(int s, int d, uint64_t k)
{
    uint64_t h = mix(((uint64_t)s << 48) ^ ((uint64_t)d << 32) ^ k);
    if (h % 97 == 0)
        return (size_t)1 << max_bits;
    int bits = (int)(h % (uint64_t)(max_bits + 1));
    return (size_t)((h >> 8) & (((uint64_t)1 << bits) - 1));
}

static void fill(unsigned char *b, size_t n, uint64_t key)
{
    uint64_t *w = (uint64_t *)b;
    size_t nw = n / 8;
    for (size_t i = 0; i < nw; i++)
        w[i] = key ^ (i * 0x9e3779b97f4a7c15ull);
    for (size_t i = nw * 8; i < n; i++)
        b[i] = (unsigned char)(key >> (i % 8 * 8)) ^ (unsigned char)i;
}

static long check(const unsigned char *b, size_t n, uint64_t key)
{
    const uint64_t *w = (const uint64_t *)b;
    size_t nw = n / 8;
    for (size_t i = 0; i < nw; i++)
        if (w[i] != (key ^ (i * 0x9e3779b97f4a7c15ull)))
            return (long)i * 8;
    for (size_t i = nw * 8; i < n; i++)
        if (b[i] != ((unsigned char)(key >> (i % 8 * 8)) ^ (unsigned char)i))
            return (long)i;
    return -1;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int drop_ptrace(void)
{
    struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct d[2];
    if (syscall(SYS_capget, &h, d))
        return -1;
    d[CAP_SYS_PTRACE / 32].effective &= ~(1u << (CAP_SYS_PTRACE % 32));
    d[CAP_SYS_PTRACE / 32].permitted &= ~(1u << (CAP_SYS_PTRACE % 32));
    if (syscall(SYS_capset, &h, d))
        return -1;
    return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

typedef struct {
    locus_shm_req_t *sreq, *rreq;
    unsigned char *sbuf, *rbuf;
    uint64_t sent, recvd, done_count;
    bool done_sent, done_recvd, heap;
    uint64_t done_msg;
} peer_t;

static int fail_lib(int me, const char *what, locus_status_t st)
{
    fprintf(stderr, "shm_stress rank %d: %s: %s\n", me, what, locus_last_error());
    return st == LOCUS_ERR_PEER_FAILED ? 3 : 2;
}

int main(int argc, char **argv)
{
    double seconds = 10;
    bool forever = false, no_ptrace = false, expect_refused = false, expect_heap_paths = false;
    const char *boot_source = NULL;
    int ready_fd = -1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
            seconds = atof(argv[++i]);
        else if (!strcmp(argv[i], "--max-bits") && i + 1 < argc)
            max_bits = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--ready-fd") && i + 1 < argc)
            ready_fd = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--forever"))
            forever = true;
        else if (!strcmp(argv[i], "--no-ptrace"))
            no_ptrace = true;
        else if (!strcmp(argv[i], "--expect-refused"))
            expect_refused = true;
        else if (!strcmp(argv[i], "--expect-heap-paths"))
            expect_heap_paths = true;
        else if (!strcmp(argv[i], "--boot") && i + 1 < argc)
            boot_source = argv[++i];
        else {
            fprintf(stderr, "shm_stress: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (max_bits < 0 || max_bits > 26)
        max_bits = 23;
    if (no_ptrace && drop_ptrace()) {
        perror("shm_stress: dropping CAP_SYS_PTRACE");
        return 2;
    }
    size_t cap = ((size_t)1 << max_bits) + 64;
    locus_shm_opts_t o;
    locus_shm_opts_init(&o);
    o.heap_bytes = 0;
    locus_shm_ep_t *ep;
    locus_boot_t *boot = NULL;
    locus_status_t st;
    /* Peers with an odd rank difference send from and receive into the shared
     * heap (one plain copy, large ones split between both sides): the heap
     * holds two buffers per peer, so it is sized from the local size, which
     * only the launcher knows before init. */
    int size_env = 2;
    if (boot_source) {
        if ((st = locus_boot_init(NULL, &boot)))
            return fail_lib(-1, "boot", st);
        if (strcmp(locus_boot_source(boot), boot_source)) {
            fprintf(stderr, "shm_stress: joined through boot source '%s', expected '%s'\n",
                    locus_boot_source(boot), boot_source);
            return 2;
        }
        o.boot = boot;
        size_env = locus_boot_local_size(boot);
    } else {
        const char *vars[] = {"LOCUS_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"};
        for (int i = 0; i < 3; i++)
            if (getenv(vars[i]) && atoi(getenv(vars[i])) > size_env)
                size_env = atoi(getenv(vars[i]));
    }
    o.heap_bytes = (uint64_t)(size_env + 1) * ((cap + 4095) & ~(size_t)4095) + 65536;
    st = locus_shm_init(&o, &ep);
    if (st)
        return fail_lib(-1, "init", st);
    int me = locus_shm_rank(ep), n = locus_shm_size(ep);
    if (ready_fd >= 0) { /* tell the fault driver we are attached */
        if (write(ready_fd, "r", 1) != 1)
            perror("shm_stress: ready fd");
        close(ready_fd);
    }
    if (n < 2) {
        fprintf(stderr, "shm_stress: %d process: start it with locus run -n N or mpirun -np N (N >= 2)\n", n);
        return 2;
    }
    peer_t *p = calloc((size_t)n, sizeof *p);
    for (int r = 0; r < n; r++) {
        if (r == me)
            continue;
        p[r].heap = (r - me) & 1;
        p[r].sbuf = p[r].heap ? locus_shm_alloc(ep, cap) : malloc(cap);
        p[r].rbuf = p[r].heap ? locus_shm_alloc(ep, cap) : malloc(cap);
        if (!p[r].sbuf || !p[r].rbuf) {
            fprintf(stderr, "rank %d: buffers: %s\n", me, locus_last_error());
            return 2;
        }
        if ((st = locus_shm_irecv(ep, r, LOCUS_SHM_ANY_TAG, p[r].rbuf, cap, &p[r].rreq)))
            return fail_lib(me, "irecv", st);
    }
    double end = now_s() + seconds;
    uint64_t bytes = 0, msgs = 0;
    int finished = 0, done_sent = 0;
    double last_event = now_s();
    while (finished < n - 1 || done_sent < n - 1) {
        if ((st = locus_shm_progress(ep)))
            return fail_lib(me, "progress", st);
        if (now_s() - last_event > 20) {
            /* A watchdog, so a lost message shows as a failure with counts, not a hang. */
            for (int r = 0; r < n; r++)
                if (r != me)
                    fprintf(stderr, "rank %d: stuck: peer %d: sent %llu%s, received %llu%s\n", me, r,
                            (unsigned long long)p[r].sent, p[r].done_sent ? " + DONE" : "",
                            (unsigned long long)p[r].recvd, p[r].done_recvd ? " + DONE" : "");
            return 4;
        }
        bool time_left = forever || now_s() < end;
        for (int r = 0; r < n; r++) {
            if (r == me)
                continue;
            peer_t *q = &p[r];
            bool done;
            locus_shm_info_t info;
            if (q->sreq) {
                if ((st = locus_shm_test(ep, q->sreq, &done, &info)))
                    return fail_lib(me, "send", st);
                if (done) {
                    q->sreq = NULL;
                    last_event = now_s();
                }
            }
            if (!q->sreq && !q->done_sent) {
                if (time_left) {
                    size_t len = msg_size(me, r, q->sent);
                    fill(q->sbuf, len, mix(((uint64_t)me << 40) ^ ((uint64_t)r << 20) ^ q->sent) + len);
                    st = locus_shm_isend(ep, r, q->sent, q->sbuf, len, &q->sreq);
                    q->sent++;
                } else {
                    q->done_msg = q->sent;
                    st = locus_shm_isend(ep, r, DONE_TAG, &q->done_msg, sizeof q->done_msg, &q->sreq);
                    q->done_sent = true;
                    done_sent++;
                }
                if (st)
                    return fail_lib(me, "isend", st);
            }
            if (q->rreq) {
                if ((st = locus_shm_test(ep, q->rreq, &done, &info)))
                    return fail_lib(me, "recv", st);
                if (!done)
                    continue;
                q->rreq = NULL;
                last_event = now_s();
                if (info.tag == DONE_TAG) {
                    uint64_t cnt;
                    memcpy(&cnt, q->rbuf, sizeof cnt);
                    if (info.len != 8 || cnt != q->recvd) {
                        fprintf(stderr, "rank %d: from %d: DONE says %llu messages, got %llu\n", me,
                                r, (unsigned long long)cnt, (unsigned long long)q->recvd);
                        return 1;
                    }
                    q->done_recvd = true;
                    finished++;
                    continue;
                }
                if (info.tag != q->recvd) {
                    fprintf(stderr, "rank %d: from %d: message %llu arrived, expected %llu (%s)\n",
                            me, r, (unsigned long long)info.tag, (unsigned long long)q->recvd,
                            info.tag < q->recvd ? "duplicate/reordered" : "lost");
                    return 1;
                }
                size_t want = msg_size(r, me, q->recvd);
                long bad = info.len == want
                               ? check(q->rbuf, want, mix(((uint64_t)r << 40) ^ ((uint64_t)me << 20) ^ q->recvd) + want)
                               : 0;
                if (info.len != want || bad >= 0) {
                    fprintf(stderr, "rank %d: from %d: message %llu: %zu B (expected %zu), first bad byte %ld\n",
                            me, r, (unsigned long long)q->recvd, info.len, want, bad);
                    return 1;
                }
                q->recvd++;
                msgs++;
                bytes += want;
                if ((st = locus_shm_irecv(ep, r, LOCUS_SHM_ANY_TAG, q->rbuf, cap, &q->rreq)))
                    return fail_lib(me, "irecv", st);
            }
        }
    }
    for (int r = 0; r < n; r++)
        if (r != me && p[r].sreq && (st = locus_shm_wait(ep, p[r].sreq, NULL)))
            return fail_lib(me, "final send", st);
    const char *notes = locus_shm_notes(ep);
    int refused = strstr(notes, "refused by the kernel") != NULL;
    if ((st = locus_shm_barrier(ep)))
        return fail_lib(me, "barrier", st);
    locus_shm_stats_t s;
    if ((st = locus_shm_stats(ep, &s)))
        return fail_lib(me, "stats", st);
    printf("rank %d: %llu messages, %.1f MB received and verified%s; %llu sent by reference, "
           "%llu split copies offered, %llu pieces copied for receivers\n", me, (unsigned long long)msgs,
           bytes / 1e6, refused ? " (CMA refused: pipelined copy)" : "", (unsigned long long)s.ref_sent,
           (unsigned long long)s.split_msgs, (unsigned long long)s.split_pieces_sent);
    /* Every message received counted once, on one path (each peer's DONE too). */
    uint64_t path_msgs = s.eager_msgs + s.ref_msgs + s.heap_msgs + s.cma_msgs + s.pipe_msgs;
    uint64_t path_bytes = s.eager_bytes + s.ref_bytes + s.heap_bytes + s.cma_bytes + s.pipe_bytes;
    if (path_msgs != msgs + (uint64_t)(n - 1) || path_bytes != bytes + 8 * (uint64_t)(n - 1)) {
        fprintf(stderr, "rank %d: %llu messages / %llu B received (+ %d DONE) but %llu / %llu counted by path\n",
                me, (unsigned long long)msgs, (unsigned long long)bytes, n - 1, (unsigned long long)path_msgs,
                (unsigned long long)path_bytes);
        return 1;
    }
    if (expect_heap_paths && (!s.ref_sent || !s.split_msgs || !s.split_pieces_sent)) {
        /* Every rank has heap peers when n >= 2: seconds of traffic use both paths. */
        fprintf(stderr, "rank %d: expected sends by reference and split copies both ways\n", me);
        return 1;
    }
    bool private_peer = false; /* peers at an even rank distance send private buffers */
    for (int r = 0; r < n; r++)
        private_peer |= r != me && !p[r].heap;
    if (expect_refused && private_peer && !refused) {
        /* Such a rank receives large private messages within seconds. */
        fprintf(stderr, "rank %d: expected a real CMA refusal note, notes: '%s'\n", me, notes);
        return 1;
    }
    for (int r = 0; r < n; r++) {
        if (r == me)
            continue;
        if (p[r].heap)
            locus_shm_free(ep, p[r].sbuf), locus_shm_free(ep, p[r].rbuf);
        else
            free(p[r].sbuf), free(p[r].rbuf);
    }
    free(p);
    locus_shm_finalize(ep);
    if (boot && (st = locus_boot_fini(boot)))
        return fail_lib(me, "boot fini", st);
    return 0;
}
