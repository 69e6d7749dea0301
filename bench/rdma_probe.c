/* rdma_probe: latency and bandwidth of the rdma transport (src/rdma) over an
 * RC loopback, for comparison with perftest's ib_write_lat / ib_read_lat /
 * ib_atomic_lat / ib_write_bw / ib_read_bw run on the same device
 * (bench/peers/rdma_perftest.sh runs both in the Soft-RoCE guest). Under QEMU
 * TCG with Soft-RoCE the kernel does every copy: only ratios to perftest
 * measured in the same boot mean anything.
 *
 * Two processes, like perftest's client and server, each with its own
 * md/iface/ep, connected through the device (addresses over a socketpair):
 *   put pingpong   ib_write_lat's measure: A writes len bytes into B's heap,
 *                  B spins on the last byte and writes back, A spins; one-way
 *                  = round trip / 2 (both spin: give the guest two vCPUs)
 * then B idles while A measures, against B's heap:
 *   put/get/fadd   post one signalled request, wait for its completion
 *   bw put/get     non-blocking requests streamed from one reused buffer
 *                  (the send queue kept full, LOCUS_RDMA_SQ_DEPTH in flight),
 *                  one flush at the end
 * Latencies: median (and mean) over the iterations, microseconds.
 * Usage: rdma_probe [iterations (default 1000)] [bw MiB per size (default 256)] */
#include "rdma/rdma.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define HEAP (64u << 20)

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void die(const char *what)
{
    fprintf(stderr, "rdma_probe: %s: %s\n", what, locus_last_error());
    exit(1);
}

typedef struct side {
    rdma_md_t *md;
    rdma_iface_t *ifc;
    rdma_ep_t *ep;
    volatile char *heap;
} side_t;

static void open_side(side_t *s, int sock, bool first)
{
    rdma_attr_t a;
    rdma_attr_init(&a);
    if (rdma_attr_from_env(&a) || rdma_md_open(&a, &s->md))
        die("rdma_md_open");
    s->heap = mmap(NULL, HEAP, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (s->heap == MAP_FAILED || rdma_md_reg_heap(s->md, (void *)s->heap, HEAP) ||
        rdma_iface_create(s->md, &s->ifc) || rdma_ep_create(s->ifc, &s->ep))
        die("heap/iface/ep");
    uint8_t mine[RDMA_ADDR_BYTES], theirs[RDMA_ADDR_BYTES];
    rdma_ep_addr(s->ep, mine);
    if (first ? write(sock, mine, sizeof mine) != sizeof mine || read(sock, theirs, sizeof theirs) != sizeof theirs
              : read(sock, theirs, sizeof theirs) != sizeof theirs || write(sock, mine, sizeof mine) != sizeof mine)
        die("address exchange");
    if (rdma_ep_connect(s->ep, theirs))
        die("connect");
}

static void close_side(side_t *s)
{
    rdma_ep_destroy(s->ep);
    rdma_iface_destroy(s->ifc);
    rdma_md_close(s->md);
    munmap((void *)s->heap, HEAP);
}

static void report(const char *what, size_t len, double *t, int n)
{
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += t[i];
    qsort(t, (size_t)n, sizeof *t, cmp_d);
    printf("%-14s %8zu B  median %9.2f us  mean %9.2f us  (%d iterations)\n", what, len, t[n / 2], sum / n, n);
}

/* ib_write_lat's measure: the last byte carries the iteration's tag; each
 * side spins on its own heap and answers. `me` 0 starts. */
static void pingpong(side_t *s, int me, size_t len, int iters, double *t)
{
    char *src = (char *)s->heap + HEAP / 2;
    volatile char *flag = s->heap + len - 1;
    for (int i = 0; i < iters; i++) {
        double t0 = now_us();
        for (int k = 0; k < 2; k++) {
            char tag = (char)(i * 2 + k + 1);
            if (k == me) {
                src[len - 1] = tag;
                if (rdma_put(s->ep, src, 0, len, NULL))
                    die("put");
            } else {
                while (*flag != tag)
                    rdma_iface_progress(s->ifc);
            }
        }
        if (t)
            t[i] = (now_us() - t0) / 2;
    }
    if (rdma_iface_flush(s->ifc))
        die("flush");
}

enum { PUT, GET, FADD };

static void one_by_one(side_t *a, int op, size_t len, int iters, double *t)
{
    char *local = (char *)a->heap + HEAP / 2;
    uint64_t old;
    for (int i = 0; i < iters; i++) {
        rdma_comp_t c = {0};
        double t0 = now_us();
        locus_status_t st = op == PUT ? rdma_put(a->ep, local, 0, len, &c)
                          : op == GET ? rdma_get(a->ep, local, 0, len, &c) : rdma_fetch_add(a->ep, 0, 1, &old, &c);
        if (st || rdma_wait(a->ifc, &c))
            die("request");
        t[i] = now_us() - t0;
    }
}

/* As ib_write_bw / ib_read_bw: one buffer per side, reused by every request. */
static void bandwidth(side_t *a, int op, size_t len, uint64_t total)
{
    char *local = (char *)a->heap + HEAP / 2;
    uint64_t n = total / len < 64 ? 64 : total / len;
    double t0 = now_us();
    for (uint64_t i = 0; i < n; i++)
        if ((op == PUT ? rdma_put(a->ep, local, 0, len, NULL) : rdma_get(a->ep, local, 0, len, NULL)))
            die("bw request");
    if (rdma_ep_flush(a->ep))
        die("bw flush");
    double us = now_us() - t0;
    printf("bw %-3s         %8zu B  %9.1f MB/s  %9.0f ops/s  (%llu requests, up to %u in flight)\n",
           op == PUT ? "put" : "get", len, (double)(n * len) / us, (double)n / us * 1e6, (unsigned long long)n,
           rdma_iface_caps(a->ifc)->sq_depth);
}

static const size_t lat_sizes[] = {8, 64, 256, 1024, 4096, 65536};
#define NLAT (sizeof lat_sizes / sizeof *lat_sizes)

/* The second process: answers the ping-pongs, then stays idle (as perftest's
 * server) until told to quit. */
static void serve(int sock, int iters)
{
    side_t b = {0};
    open_side(&b, sock, false);
    for (size_t i = 0; i < NLAT; i++)
        pingpong(&b, 1, lat_sizes[i], iters, NULL);
    char q;
    if (read(sock, &q, 1) != 1)
        die("quit");
    close_side(&b);
    _exit(0);
}

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 1000;
    uint64_t bw_mib = argc > 2 ? strtoull(argv[2], NULL, 10) : 256;
    if (iters < 1)
        iters = 1;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
        die("socketpair");
    pid_t pid = fork(); /* before any verbs object exists */
    if (pid < 0)
        die("fork");
    if (pid == 0) {
        close(sv[0]);
        serve(sv[1], iters);
    }
    close(sv[1]);
    side_t a = {0};
    open_side(&a, sv[0], true);
    const rdma_md_info_t *mi = rdma_md_info(a.md);
    const rdma_caps_t *c = rdma_iface_caps(a.ifc);
    printf("rdma_probe: %s port %d GID %d, max_inline %u, signal every %u, two processes\n", mi->device, mi->port,
           mi->gid_index, c->max_inline, c->signal_every);
    double *t = malloc(sizeof *t * (size_t)iters);
    for (size_t i = 0; i < NLAT; i++) {
        pingpong(&a, 0, lat_sizes[i], iters, t);
        report("put pingpong", lat_sizes[i], t, iters);
    }
    static const size_t one_sizes[] = {8, 4096, 65536};
    for (size_t i = 0; i < sizeof one_sizes / sizeof *one_sizes; i++) {
        one_by_one(&a, PUT, one_sizes[i], iters, t);
        report("put completion", one_sizes[i], t, iters);
        one_by_one(&a, GET, one_sizes[i], iters, t);
        report("get", one_sizes[i], t, iters);
    }
    if (c->atomics) {
        one_by_one(&a, FADD, 8, iters, t);
        report("fetch-add", 8, t, iters);
    }
    static const size_t bw_sizes[] = {4096, 65536, 1u << 20, 4u << 20};
    for (size_t i = 0; i < sizeof bw_sizes / sizeof *bw_sizes; i++) {
        bandwidth(&a, PUT, bw_sizes[i], bw_mib << 20);
        bandwidth(&a, GET, bw_sizes[i], bw_mib << 20);
    }
    free(t);
    close_side(&a);
    if (write(sv[0], "q", 1) != 1 || waitpid(pid, NULL, 0) != pid)
        die("child");
    return 0;
}
