/* shm_floor: what a ring of 64-byte cells costs between two cores with no
 * library around it, the floor under `locus bench pingpong|msgrate`.
 *
 * Two processes pinned to CPUs A and B share an anonymous MAP_SHARED mapping
 * (as clping does). Measured in one run, repetitions interleaved, medians:
 *   flag      one 8-byte flag per direction, reused (clping's two-line);
 *   cell/1    a message cell (32-byte header + 8-byte payload, sequence word
 *             stored last) per direction, the same cell every time;
 *   cell/256  the same message through a 256-cell ring (a 16 KiB locus fast box):
 *             every message on a fresh line;
 *   mailbox   one cell per direction claimed by compare-and-swap from the
 *             state the receiver left it in (it frees the cell when it next
 *             waits), so the cell is reused with flow control;
 *   stream    one-way streaming through a 256-cell ring, the receiver copying
 *             each payload out and publishing its head every quarter ring,
 *             for 8 B, 128 B and 1 KiB payloads: messages/s and the ratio to 8 B.
 * The latencies are one-way (round trip / 2). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NCELLS 256u
#define CELL 64u

typedef struct {
    uint64_t seq;
    uint32_t len, src;
    uint64_t tag, aux;
    unsigned char payload[32];
} cell_t;

typedef struct {
    _Alignas(128) uint64_t flag[2][16];
    _Alignas(128) uint64_t head[16];
    _Alignas(4096) cell_t one[2][2]; /* [direction][0]; [1] keeps 128 B apart */
    _Alignas(4096) cell_t mbox[2][2];
    _Alignas(4096) cell_t ring[2][NCELLS];
} shared_t;

static shared_t *sh;
static int me;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void wait_eq(const uint64_t *p, uint64_t v)
{
    while (__atomic_load_n(p, __ATOMIC_ACQUIRE) != v)
        __builtin_ia32_pause();
}

static void post(cell_t *c, uint64_t seq, const void *buf, uint32_t len)
{
    c->len = len;
    c->src = (uint32_t)me;
    c->tag = seq;
    c->aux = seq;
    memcpy(c->payload, buf, len < 32 ? len : 32);
    __atomic_store_n(&c->seq, seq, __ATOMIC_RELEASE);
}

/* Ping-pong: rank 0 sends k, rank 1 answers k; cells from `cells` (n per direction). */
static double pingpong(int iters, int mode, uint64_t base)
{
    unsigned char buf[8] = {1};
    double t0 = now_s();
    for (int i = 0; i < iters; i++) {
        uint64_t k = base + (uint64_t)i + 1;
        for (int step = 0; step < 2; step++) {
            int sender = step; /* 0 sends first, 1 answers */
            if (mode == 0) {
                if (me == sender)
                    __atomic_store_n(&sh->flag[sender][0], k, __ATOMIC_RELEASE);
                else
                    wait_eq(&sh->flag[sender][0], k);
                continue;
            }
            if (mode == 3) {
                cell_t *c = &sh->mbox[sender][0];
                if (me == sender) {
                    uint64_t free_state = (k - 1) << 1; /* freed after message k - 1 */
                    while (!__atomic_compare_exchange_n(&c->seq, &free_state, 1, false, __ATOMIC_ACQUIRE,
                                                        __ATOMIC_RELAXED)) {
                        free_state = (k - 1) << 1;
                        __builtin_ia32_pause();
                    }
                    post(c, (k << 1) | 1, buf, 8);
                } else {
                    /* Free the cell (message k - 1 was read) only now, when
                     * waiting: off the path of the reply we sent before. */
                    __atomic_store_n(&c->seq, (k - 1) << 1, __ATOMIC_RELEASE);
                    wait_eq(&c->seq, (k << 1) | 1);
                    memcpy(buf, c->payload, 8);
                }
                continue;
            }
            cell_t *c = mode == 1 ? &sh->one[sender][0] : &sh->ring[sender][k % NCELLS];
            if (me == sender)
                post(c, k, buf, 8);
            else {
                wait_eq(&c->seq, k);
                memcpy(buf, c->payload, 8);
            }
        }
    }
    return (now_s() - t0) / iters / 2;
}

/* Streaming rank 0 -> rank 1 through ring[0]; returns messages/s. */
static double stream(long n, uint32_t len, uint64_t *pos)
{
    static unsigned char src[2048], dst[2048];
    uint64_t k = (32 + len + CELL - 1) / CELL, t = *pos, cached = *pos, pub = *pos;
    unsigned char *cells = (unsigned char *)sh->ring[0];
    double t0 = now_s();
    for (long i = 0; i < n; i++) {
        if ((t % NCELLS) + k > NCELLS)
            t += NCELLS - t % NCELLS; /* a message never wraps: skip to the start */
        unsigned char *c = cells + (t % NCELLS) * CELL;
        if (me == 0) {
            while (t + k - cached > NCELLS)
                cached = __atomic_load_n(&sh->head[0], __ATOMIC_ACQUIRE);
            if (len > 32)
                memcpy(c + CELL, src + 32, len - 32);
            post((cell_t *)c, t + 1, src, len);
        } else {
            wait_eq(&((cell_t *)c)->seq, t + 1);
            memcpy(dst, c + 32, len < 32 ? len : 32);
            if (len > 32)
                memcpy(dst + 32, c + CELL, len - 32);
            if (t + k - pub >= NCELLS / 4)
                __atomic_store_n(&sh->head[0], pub = t + k, __ATOMIC_RELEASE);
        }
        t += k;
    }
    if (me == 1)
        __atomic_store_n(&sh->head[0], t, __ATOMIC_RELEASE);
    else
        wait_eq(&sh->head[0], t); /* the receiver has everything */
    *pos = t;
    return n / (now_s() - t0);
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void pin(int cpu)
{
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    if (sched_setaffinity(0, sizeof s, &s)) {
        perror("shm_floor: sched_setaffinity");
        exit(2);
    }
}

int main(int argc, char **argv)
{
    int cpus[2] = {0, 1}, reps = 21;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--cpus") && i + 1 < argc && sscanf(argv[i + 1], "%d,%d", &cpus[0], &cpus[1]) == 2)
            i++;
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc && (reps = atoi(argv[i + 1])) >= 1 && reps <= 1001)
            i++;
        else {
            fprintf(stderr, "usage: shm_floor [--cpus A,B] [--reps R (1..1001, default 21)]\n");
            return 2;
        }
    }
    sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) {
        perror("shm_floor: mmap");
        return 1;
    }
    memset(sh, 0, sizeof *sh);
    pid_t pid = fork();
    if (pid < 0) {
        perror("shm_floor: fork");
        return 1;
    }
    me = pid == 0;
    if (me) {
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive the parent */
        if (getppid() == 1)
            _exit(1);
    } else {
        alarm(120); /* a stuck peer ends the run instead of hanging it */
    }
    pin(cpus[me]);
    enum { FLAG, CELL1, CELL256, MBOX, S8, S128, S1K, N };
    static const char *names[N] = {"flag (two-line)", "cell/1", "cell/256", "mailbox", "stream 8 B", "stream 128 B",
                                   "stream 1 KiB"};
    double *v[N];
    for (int m = 0; m < N; m++)
        v[m] = calloc((size_t)reps, sizeof(double));
    uint64_t base = 0, pos = 0;
    for (int r = -1; r < reps; r++) { /* r = -1: warm-up */
        for (int m = FLAG; m <= MBOX; m++) {
            double x = pingpong(20000, m, base);
            base += 20000;
            if (r >= 0)
                v[m][r] = x * 1e9;
        }
        static const uint32_t lens[3] = {8, 128, 1024};
        for (int s = 0; s < 3; s++) {
            double x = stream(100000, lens[s], &pos);
            if (r >= 0)
                v[S8 + s][r] = x;
        }
    }
    if (me)
        _exit(0);
    int ws;
    waitpid(pid, &ws, 0);
    double med[N];
    for (int m = 0; m < N; m++)
        med[m] = median(v[m], reps);
    printf("# shm_floor: CPUs %d,%d, median of %d reps\n", cpus[0], cpus[1], reps);
    for (int m = FLAG; m <= MBOX; m++)
        printf("%-16s one-way %7.1f ns  (%.2fx flag)\n", names[m], med[m], med[m] / med[FLAG]);
    for (int m = S8; m < N; m++)
        printf("%-16s %8.2f M msg/s  (%.2fx 8 B)\n", names[m], med[m] / 1e6, med[m] / med[S8]);
    return WIFEXITED(ws) && WEXITSTATUS(ws) == 0 ? 0 : 1;
}
