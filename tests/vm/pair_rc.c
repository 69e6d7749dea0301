/* Runs in the two guests of `locus-vm --pair`: one RC queue pair between the two kernels,
 * with the transport retry count and timeout chosen here (ibv_rc_pingpong and perftest fix
 * retry_cnt at 7, which Soft-RoCE treats as "retry forever": a dead peer is never reported).
 *
 *   pair_rc [-d DEV] [-g GID_INDEX] [-p PORT] [-r RETRY] [-t TIMEOUT]           (server)
 *   pair_rc [...] [-n WRITES] SERVER_IP                                           (client)
 *
 * The server registers an 8-byte target and waits. The client RDMA-WRITEs 1, 2, ... WRITES
 * into it, one at a time, each completion awaited (WRITES 0: until an error), then
 * RDMA-READs it back and tells the server the count over TCP; both check the value.
 * A failed completion prints its status and the time since the last good one, exit 1.
 * Defaults: rxe1, GID index 1 (RoCE v2 over IPv4), port 18600, retry 3, timeout 14
 * (4.096 us * 2^14 = 67 ms per try). */
#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct opts {
    const char *dev, *server;
    int gid_index, port, retry, timeout;
    unsigned long writes;
};

struct wire { /* what each side tells the other over TCP */
    uint32_t qpn, psn, rkey;
    uint64_t addr;
    uint8_t gid[16];
};

struct rc {
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    struct ibv_cq *cq;
    struct ibv_qp *qp;
    struct ibv_mr *mr;
    volatile uint64_t *buf; /* [0]: the target the peer writes, [1]: the read-back */
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int die(const char *what)
{
    fprintf(stderr, "pair_rc: %s\n", what);
    return 1;
}

static int parse(int argc, char **argv, struct opts *o)
{
    *o = (struct opts){"rxe1", NULL, 1, 18600, 3, 14, 1000};
    int c;
    while ((c = getopt(argc, argv, "d:g:p:r:t:n:")) != -1) {
        switch (c) {
        case 'd': o->dev = optarg; break;
        case 'g': o->gid_index = atoi(optarg); break;
        case 'p': o->port = atoi(optarg); break;
        case 'r': o->retry = atoi(optarg); break;
        case 't': o->timeout = atoi(optarg); break;
        case 'n': o->writes = strtoul(optarg, NULL, 10); break;
        default: return -1;
        }
    }
    if (optind < argc)
        o->server = argv[optind];
    if (o->retry < 0 || o->retry > 7 || o->timeout < 0 || o->timeout > 31 || o->port <= 0 ||
        o->port > 65535)
        return -1;
    return 0;
}

/* Server: listen and accept one connection; client: connect (the caller made sure the
 * server listens). Returns the connected socket or -1. */
static int tcp_connect(const struct opts *o)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(o->port)};
    int s = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    if (s < 0)
        return -1;
    if (o->server) {
        if (inet_pton(AF_INET, o->server, &sa.sin_addr) != 1 ||
            connect(s, (struct sockaddr *)&sa, sizeof sa) != 0)
            return close(s), -1;
        return s;
    }
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(s, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(s, 1) != 0)
        return close(s), -1;
    int c = accept(s, NULL, NULL);
    close(s);
    return c;
}

static int xfer(int s, void *out, void *in, size_t len)
{
    if (write(s, out, len) != (ssize_t)len)
        return -1;
    for (size_t got = 0; got < len;) {
        ssize_t r = read(s, (char *)in + got, len - got);
        if (r <= 0)
            return -1;
        got += (size_t)r;
    }
    return 0;
}

static int open_rc(const struct opts *o, struct rc *rc)
{
    int n = 0;
    struct ibv_device **list = ibv_get_device_list(&n);
    for (int i = 0; list && i < n && !rc->ctx; i++)
        if (strcmp(ibv_get_device_name(list[i]), o->dev) == 0)
            rc->ctx = ibv_open_device(list[i]);
    if (list)
        ibv_free_device_list(list);
    if (!rc->ctx)
        return die("no such RDMA device (-d)");
    rc->buf = calloc(2, sizeof(uint64_t));
    rc->pd = ibv_alloc_pd(rc->ctx);
    rc->cq = rc->pd ? ibv_create_cq(rc->ctx, 4, NULL, NULL, 0) : NULL;
    if (!rc->buf || !rc->cq)
        return die("ibv_alloc_pd / ibv_create_cq failed");
    rc->mr = ibv_reg_mr(rc->pd, (void *)rc->buf, 2 * sizeof(uint64_t),
                        IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
    struct ibv_qp_init_attr qa = {.send_cq = rc->cq, .recv_cq = rc->cq, .qp_type = IBV_QPT_RC,
                                  .cap = {.max_send_wr = 2, .max_recv_wr = 1, .max_send_sge = 1,
                                          .max_recv_sge = 1}};
    rc->qp = rc->mr ? ibv_create_qp(rc->pd, &qa) : NULL;
    return rc->qp ? 0 : die("ibv_reg_mr / ibv_create_qp failed");
}

/* INIT -> RTR -> RTS towards the peer, with the chosen transport retry count and timeout. */
static int connect_qp(const struct opts *o, struct rc *rc, const struct wire *me, const struct wire *peer)
{
    struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1,
                            .qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ};
    if (ibv_modify_qp(rc->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
        return die("modify QP to INIT failed");
    a = (struct ibv_qp_attr){.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
                             .dest_qp_num = peer->qpn, .rq_psn = peer->psn,
                             .max_dest_rd_atomic = 1, .min_rnr_timer = 12,
                             .ah_attr = {.is_global = 1, .port_num = 1,
                                         .grh = {.hop_limit = 1, .sgid_index = (uint8_t)o->gid_index}}};
    memcpy(a.ah_attr.grh.dgid.raw, peer->gid, 16);
    if (ibv_modify_qp(rc->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                                      IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
        return die("modify QP to RTR failed");
    a = (struct ibv_qp_attr){.qp_state = IBV_QPS_RTS, .sq_psn = me->psn, .max_rd_atomic = 1,
                             .timeout = (uint8_t)o->timeout, .retry_cnt = (uint8_t)o->retry,
                             .rnr_retry = (uint8_t)o->retry};
    if (ibv_modify_qp(rc->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC |
                                      IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY))
        return die("modify QP to RTS failed");
    return 0;
}

/* One signaled RDMA WRITE (of buf[0]) or READ (into buf[1]), completion awaited. */
static int one_op(struct rc *rc, const struct wire *peer, enum ibv_wr_opcode op, uint64_t seq,
                  double last_ok)
{
    struct ibv_sge sge = {.addr = (uintptr_t)&rc->buf[op == IBV_WR_RDMA_READ], .length = 8,
                          .lkey = rc->mr->lkey};
    struct ibv_send_wr wr = {.wr_id = seq, .sg_list = &sge, .num_sge = 1, .opcode = op,
                             .send_flags = IBV_SEND_SIGNALED,
                             .wr.rdma = {.remote_addr = peer->addr, .rkey = peer->rkey}}, *bad;
    if (ibv_post_send(rc->qp, &wr, &bad))
        return die("ibv_post_send failed");
    struct ibv_wc wc;
    int n;
    while ((n = ibv_poll_cq(rc->cq, 1, &wc)) == 0)
        ;
    if (n < 0)
        return die("ibv_poll_cq failed");
    if (wc.status != IBV_WC_SUCCESS) {
        printf("pair_rc: %s %lu failed: %s (status %d), %.2f s after the last good completion\n",
               op == IBV_WR_RDMA_READ ? "read" : "write", (unsigned long)seq,
               ibv_wc_status_str(wc.status), wc.status, now_s() - last_ok);
        return 1;
    }
    return 0;
}

static int run_client(struct rc *rc, const struct opts *o, const struct wire *peer, int s)
{
    double t0 = now_s(), last_ok = t0;
    unsigned long i;
    for (i = 1; o->writes == 0 || i <= o->writes; i++) {
        rc->buf[0] = i;
        if (one_op(rc, peer, IBV_WR_RDMA_WRITE, i, last_ok))
            return 1;
        last_ok = now_s();
    }
    unsigned long done = i - 1;
    if (one_op(rc, peer, IBV_WR_RDMA_READ, done + 1, last_ok))
        return 1;
    double t = now_s() - t0;
    printf("pair_rc: %lu writes in %.2f s (%.0f us each), read back %lu\n", done, t,
           done ? t / done * 1e6 : 0.0, (unsigned long)rc->buf[1]);
    uint64_t msg = done, ack = 0;
    if (xfer(s, &msg, &ack, sizeof msg) || ack != done || rc->buf[1] != done)
        return die("the server's buffer does not hold the last value written");
    return 0;
}

static int run_server(struct rc *rc, int s)
{
    uint64_t count = 0;
    for (size_t got = 0; got < sizeof count;) { /* the client's count when it is done */
        ssize_t r = read(s, (char *)&count + got, sizeof count - got);
        if (r <= 0)
            return die("client went away");
        got += (size_t)r;
    }
    uint64_t seen = rc->buf[0];
    if (write(s, &seen, sizeof seen) != (ssize_t)sizeof seen || seen != count) {
        printf("pair_rc: server holds %lu, the client wrote %lu\n", (unsigned long)seen,
               (unsigned long)count);
        return 1;
    }
    printf("pair_rc: server holds %lu, as written\n", (unsigned long)seen);
    return 0;
}

int main(int argc, char **argv)
{
    struct opts o;
    if (parse(argc, argv, &o)) {
        fprintf(stderr, "usage: pair_rc [-d DEV] [-g GID_INDEX] [-p PORT] [-r RETRY 0..7] "
                        "[-t TIMEOUT 0..31] [-n WRITES (0: until an error)] [SERVER_IP]\n");
        return 2;
    }
    struct rc rc = {0};
    if (open_rc(&o, &rc))
        return 1;
    union ibv_gid gid;
    if (ibv_query_gid(rc.ctx, 1, o.gid_index, &gid))
        return die("ibv_query_gid failed (-g)");
    srand48(getpid() ^ (long)time(NULL));
    struct wire me = {.qpn = rc.qp->qp_num, .psn = (uint32_t)lrand48() & 0xffffff,
                      .rkey = rc.mr->rkey, .addr = (uintptr_t)rc.buf}, peer;
    memcpy(me.gid, gid.raw, 16);
    int s = tcp_connect(&o);
    if (s < 0 || xfer(s, &me, &peer, sizeof me))
        return die("TCP exchange with the peer failed");
    if (connect_qp(&o, &rc, &me, &peer))
        return 1;
    printf("pair_rc: connected, retry_cnt %d, timeout %d (%.0f ms per try)\n", o.retry, o.timeout,
           4.096e-3 * (double)(1u << o.timeout));
    fflush(stdout);
    int rcode = o.server ? run_client(&rc, &o, &peer, s) : run_server(&rc, s);
    close(s);
    ibv_destroy_qp(rc.qp);
    ibv_dereg_mr(rc.mr);
    ibv_destroy_cq(rc.cq);
    ibv_dealloc_pd(rc.pd);
    ibv_close_device(rc.ctx);
    free((void *)rc.buf);
    return rcode;
}
