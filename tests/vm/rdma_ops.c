/* Runs inside the locus-vm --rdma guest (Soft-RoCE rxe0): the rdma transport
 * (src/rdma) end to end over rxe0 loopback.
 *   1. A killed peer: a forked child connects its own md/iface/ep to ours and
 *      is SIGKILLed under traffic; our pending and later operations fail
 *      within 2 s, naming the bad completion's status and vendor_err.
 *   2. Two stacks in this process (md + locus heap + iface each), endpoints
 *      S0<->S1 and S1 connected to itself.
 *   3. Random put/get (>= 10^4 by default), sizes 1 B..4 MiB, random local
 *      and remote alignments, local buffers in the registered heap, malloc'd
 *      (registration cache or bounce) and on the stack (inline); byte-exact,
 *      guard bytes around every target intact; every local-buffer path and
 *      selective signalling seen.
 *   4. Atomics: fetched byte order; fetch-add from two endpoints on one word
 *      (the fetched values are exactly init..init+2N-1, the sum exact);
 *      compare-swap semantics and a CAS-loop counter from two endpoints.
 *   5. Registration cache: a buffer freed and reallocated at the same address
 *      (malloc and mmap) carries its new bytes in a put and a get.
 *   6. Bad arguments: clear errors, nothing posted.
 *   7. One side destroyed: the other's pending operations complete with an
 *      error within 2 s; later posts fail at once.
 *   8. The stall detector (LOCUS_RDMA_STALL, here 0.3 s): a get and a flush
 *      0.7 s after an unsignalled put are not failed as stalls (the clock
 *      starts when a completion is owed); a READ to a peer QP in RESET, which
 *      drops it silently, fails in ~0.3 s naming the request.
 *   9. Teardown: the device's PD/CQ/QP/MR/context counts (rdma resource
 *      show) are back to where they started.
 * Usage: rdma_ops [operations] (default 12000). Prints "rdma-ops: ok" or the
 * first failure (exit 1). */
#include "rdma/rdma.h"
#include "rdma/rdma_internal.h" /* rdma_iface_check, ep->qp */

#include <locus/heap.h>
#include <locus/reg.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define HEAP (64u << 20)
#define HALF (HEAP / 2)
#define MAXLEN (4u << 20)

#define CHECK(cond, ...)                                                                                     \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            printf("rdma-ops: FAIL (line %d): ", __LINE__);                                                  \
            printf(__VA_ARGS__);                                                                             \
            printf(" [%s]\n", locus_last_error());                                                           \
            exit(1);                                                                                         \
        }                                                                                                    \
    } while (0)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 2685821657736338717ull;
}
static uint64_t rnd_below(uint64_t n) { return n ? rnd() % n : 0; }

static void fill_random(void *p, size_t n)
{
    uint8_t *b = p;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t v = rnd();
        memcpy(b + i, &v, 8);
    }
    for (uint64_t v = rnd(); i < n; i++, v >>= 8)
        b[i] = (uint8_t)v;
}

/* ---------- device objects left behind: `rdma resource show` ---------- */

typedef struct { long pd, cq, qp, mr, ctx; } res_t;

static res_t resources(void)
{
    res_t r = {-1, -1, -1, -1, -1};
    FILE *f = popen("rdma resource show 2>&1", "r");
    char line[512];
    while (f && fgets(line, sizeof line, f)) {
        if (!strstr(line, "rxe0"))
            continue;
        char *tok = strtok(line, " \n");
        while (tok) {
            char *val = strtok(NULL, " \n");
            if (!val)
                break;
            long *dst = !strcmp(tok, "pd") ? &r.pd : !strcmp(tok, "cq") ? &r.cq : !strcmp(tok, "qp") ? &r.qp
                      : !strcmp(tok, "mr") ? &r.mr : !strcmp(tok, "ctx") ? &r.ctx : NULL;
            if (dst)
                *dst = strtol(val, NULL, 10);
            tok = dst ? strtok(NULL, " \n") : val;
        }
    }
    if (f)
        pclose(f);
    return r;
}

/* ---------- a side: md + heap + iface ---------- */

typedef struct side {
    rdma_md_t *md;
    rdma_iface_t *ifc;
    locus_heap_t *heap;
    char *base;
} side_t;

/* stall_s, timeout: 0 keeps LOCUS_RDMA_STALL / LOCUS_RDMA_TIMEOUT */
static void side_open(side_t *s, const char *name, double stall_s, int timeout)
{
    rdma_attr_t a;
    rdma_attr_init(&a);
    CHECK(rdma_attr_from_env(&a) == LOCUS_OK, "LOCUS_RDMA_*");
    if (stall_s > 0)
        a.stall_s = stall_s;
    if (timeout > 0)
        a.timeout = timeout;
    CHECK(rdma_md_open(&a, &s->md) == LOCUS_OK, "%s: rdma_md_open", name);
    locus_heap_attr_t ha;
    locus_heap_attr_init(&ha);
    ha.size = HEAP;
    ha.pages = LOCUS_PAGES_4K;
    ha.policy = LOCUS_HEAP_INTERLEAVE;
    ha.verify = LOCUS_VERIFY_NONE;
    CHECK(locus_heap_create(&ha, NULL, &s->heap) == LOCUS_OK, "%s: locus_heap_create", name);
    s->base = locus_heap_base(s->heap);
    CHECK(rdma_md_reg_heap(s->md, s->base, HEAP) == LOCUS_OK, "%s: rdma_md_reg_heap", name);
    CHECK(rdma_iface_create(s->md, &s->ifc) == LOCUS_OK, "%s: rdma_iface_create", name);
}

static void side_close(side_t *s)
{
    rdma_iface_destroy(s->ifc);
    rdma_md_close(s->md);
    locus_heap_destroy(s->heap);
    memset(s, 0, sizeof *s);
}

static void connect_pair(rdma_ep_t *x, rdma_ep_t *y)
{
    uint8_t bx[RDMA_ADDR_BYTES], by[RDMA_ADDR_BYTES];
    rdma_ep_addr(x, bx);
    rdma_ep_addr(y, by);
    CHECK(rdma_ep_connect(x, by) == LOCUS_OK, "connect");
    CHECK(rdma_ep_connect(y, bx) == LOCUS_OK, "connect");
}

static rdma_ep_t *new_ep(side_t *s)
{
    rdma_ep_t *e;
    CHECK(rdma_ep_create(s->ifc, &e) == LOCUS_OK, "rdma_ep_create");
    return e;
}

/* ---------- 1 and 7: a peer that goes away ---------- */

/* Post 1 MiB puts until a post fails (after the ep failed); returns seconds
 * from t0 to that point; all pending complete with an error. */
static double until_failure(rdma_iface_t *ifc, rdma_ep_t *e, const void *src, double t0, rdma_comp_t *c)
{
    locus_status_t st;
    uint64_t n = 0;
    while ((st = rdma_put(e, src, (n++ % 8) << 20, 1u << 20, c)) == LOCUS_OK) {
        rdma_iface_progress(ifc);
        CHECK(now_s() - t0 < 30, "no failure 30 s after the peer went away");
    }
    double dt = now_s() - t0;
    CHECK(st == LOCUS_ERR_PEER_FAILED, "post after the peer died: status %d, expected PEER_FAILED", st);
    char msg[512];
    snprintf(msg, sizeof msg, "%s", locus_last_error());
    CHECK(strstr(msg, "status") && strstr(msg, "vendor_err"), "message lacks status/vendor_err: %s", msg);
    CHECK(rdma_wait(ifc, c) == LOCUS_ERR_PEER_FAILED && c->pending == 0, "pending operations after the failure");
    CHECK(rdma_ep_status(e) == LOCUS_ERR_PEER_FAILED, "endpoint status");
    CHECK(rdma_put(e, src, 0, 8, NULL) == LOCUS_ERR_PEER_FAILED, "a post to a failed endpoint");
    printf("  failure after %.3f s: %s\n", dt, msg);
    return dt;
}

static void killed_peer(void)
{
    int sv[2];
    CHECK(!socketpair(AF_UNIX, SOCK_STREAM, 0, sv), "socketpair");
    pid_t pid = fork();
    CHECK(pid >= 0, "fork");
    if (pid == 0) { /* the peer: its own md/heap/iface/ep; waits to be killed */
        close(sv[0]);
        side_t s = {0};
        side_open(&s, "child", 0, 0);
        rdma_ep_t *e = new_ep(&s);
        uint8_t mine[RDMA_ADDR_BYTES], theirs[RDMA_ADDR_BYTES];
        rdma_ep_addr(e, mine);
        CHECK(write(sv[1], mine, sizeof mine) == sizeof mine, "child: send blob");
        CHECK(read(sv[1], theirs, sizeof theirs) == sizeof theirs, "child: receive blob");
        CHECK(rdma_ep_connect(e, theirs) == LOCUS_OK, "child: connect");
        CHECK(write(sv[1], "r", 1) == 1, "child: ready");
        for (;;)
            pause();
    }
    close(sv[1]);
    side_t s = {0};
    side_open(&s, "parent", 0, 0);
    rdma_ep_t *e = new_ep(&s);
    uint8_t mine[RDMA_ADDR_BYTES], theirs[RDMA_ADDR_BYTES];
    char ready;
    CHECK(read(sv[0], theirs, sizeof theirs) == sizeof theirs, "receive the child's blob");
    rdma_ep_addr(e, mine);
    CHECK(write(sv[0], mine, sizeof mine) == sizeof mine, "send blob");
    CHECK(rdma_ep_connect(e, theirs) == LOCUS_OK, "connect to the child");
    CHECK(read(sv[0], &ready, 1) == 1, "child ready");
    /* the connection works: a round trip through the child's heap */
    fill_random(s.base, 65536);
    rdma_comp_t c = {0};
    CHECK(rdma_put(e, s.base, 4096, 65536, &c) == LOCUS_OK && rdma_get(e, s.base + HALF, 4096, 65536, &c) == 0,
          "put/get to the child");
    CHECK(rdma_wait(s.ifc, &c) == LOCUS_OK, "round trip to the child");
    CHECK(!memcmp(s.base, s.base + HALF, 65536), "round trip through the child's heap not byte-exact");
    for (int i = 0; i < 8; i++)
        CHECK(rdma_put(e, s.base, (uint64_t)i << 20, 1u << 20, &c) == LOCUS_OK, "put");
    kill(pid, SIGKILL);
    double t0 = now_s();
    CHECK(waitpid(pid, NULL, 0) == pid, "waitpid");
    printf("killed peer (pid %d) with %u operations pending\n", (int)pid, c.pending);
    double dt = until_failure(s.ifc, e, s.base, t0, &c);
    CHECK(dt <= 2.0, "the killed peer was detected after %.3f s (> 2 s)", dt);
    rdma_ep_destroy(e);
    side_close(&s);
    close(sv[0]);
}

/* ---------- 3: random put/get ---------- */

enum { K_HEAP, K_MALLOC, K_STACK, K_COUNT };
static const char *kname[] = {"heap", "malloc", "stack"};

typedef struct op {
    int put;          /* 1 put, 0 get */
    int kind;
    rdma_ep_t *ep;
    char *local;      /* where the bytes are locally */
    char *alloc;      /* malloc'd block to free */
    char *remote;     /* the target's bytes (in the peer's heap) */
    uint64_t roff;
    size_t len;
    uint8_t guard_r[2][16], guard_l[2][16];
} op_t;

static size_t random_len(void)
{
    static const size_t edge[] = {1, 2, 7, 8, 255, 256, 257, 8191, 8192, 8193, 65536, MAXLEN - 1, MAXLEN};
    static unsigned next;
    if (next < sizeof edge / sizeof *edge)
        return edge[next++];
    /* log-uniform: 31/32 within 1 B..64 KiB, 1/32 within 64 KiB..4 MiB */
    unsigned lo = 0, hi = 16;
    if (rnd_below(32) == 0)
        lo = 16, hi = 22;
    size_t base = (size_t)1 << (lo + rnd_below(hi - lo));
    size_t len = base + rnd_below(base);
    return len < 1 ? 1 : len > MAXLEN ? MAXLEN : len;
}

static char stackbuf[2][4096 + 64];

static void guard_save(uint8_t g[2][16], const char *p, size_t len)
{
    memcpy(g[0], p - 16, 16);
    memcpy(g[1], p + len, 16);
}

static int guard_ok(uint8_t g[2][16], const char *p, size_t len)
{
    return !memcmp(g[0], p - 16, 16) && !memcmp(g[1], p + len, 16);
}

/* One batch: non-overlapping remote targets in the lower half of each heap,
 * local heap buffers in the upper half; then a flush and the checks. */
static uint64_t batch(side_t *s, rdma_ep_t *e01, rdma_ep_t *e10, int nops, uint64_t *bytes)
{
    op_t ops[64];
    uint64_t rcur[2] = {64, 64}, lcur[2] = {HALF + 64, HALF + 64};
    int n = 0, sk[2] = {0, 0};
    while (n < nops && n < 64) {
        op_t *o = &ops[n];
        memset(o, 0, sizeof *o);
        int from = (int)rnd_below(2), to = 1 - from;
        o->ep = from == 0 ? e01 : e10;
        o->put = (int)rnd_below(2);
        o->len = random_len();
        o->kind = (int)rnd_below(K_COUNT);
        if (o->kind == K_STACK && (o->len > 4096 || sk[from]))
            o->kind = K_MALLOC;
        uint64_t roff = rcur[to] + 16 + rnd_below(4096);
        uint64_t loff = lcur[from] + 16 + rnd_below(4096);
        if (roff + o->len + 16 > HALF || (o->kind == K_HEAP && loff + o->len + 16 > HEAP))
            break;
        rcur[to] = roff + o->len;
        o->roff = roff;
        o->remote = s[to].base + roff;
        if (o->kind == K_HEAP) {
            lcur[from] = loff + o->len;
            o->local = s[from].base + loff;
        } else if (o->kind == K_MALLOC) {
            o->alloc = malloc(o->len + 64);
            CHECK(o->alloc, "malloc(%zu)", o->len + 64);
            o->local = o->alloc + 16 + rnd_below(32);
        } else {
            sk[from] = 1;
            o->local = stackbuf[from] + 16 + rnd_below(32);
        }
        if (o->put) {
            fill_random(o->local, o->len);
        } else {
            fill_random(o->remote, o->len);
            memset(o->local, 0xa5, o->len);
        }
        guard_save(o->guard_r, o->remote, o->len);
        guard_save(o->guard_l, o->local, o->len);
        locus_status_t st = o->put ? rdma_put(o->ep, o->local, o->roff, o->len, NULL)
                                   : rdma_get(o->ep, o->local, o->roff, o->len, NULL);
        CHECK(st == LOCUS_OK, "%s of %zu bytes (%s buffer)", o->put ? "put" : "get", o->len, kname[o->kind]);
        *bytes += o->len;
        n++;
    }
    CHECK(rdma_iface_flush(s[0].ifc) == LOCUS_OK && rdma_iface_flush(s[1].ifc) == LOCUS_OK, "flush");
    for (int i = 0; i < n; i++) {
        op_t *o = &ops[i];
        CHECK(!memcmp(o->local, o->remote, o->len), "%s of %zu bytes (%s buffer %p, remote offset %llu) not "
              "byte-exact", o->put ? "put" : "get", o->len, kname[o->kind], (void *)o->local,
              (unsigned long long)o->roff);
        CHECK(guard_ok(o->guard_r, o->remote, o->len) && guard_ok(o->guard_l, o->local, o->len),
              "%s of %zu bytes wrote outside its buffers", o->put ? "put" : "get", o->len);
        free(o->alloc);
    }
    return (uint64_t)n;
}

static void random_rw(side_t *s, rdma_ep_t *e01, rdma_ep_t *e10, long want)
{
    rdma_iface_stats_t a0, a1, b0, b1;
    rdma_iface_stats(s[0].ifc, &a0);
    rdma_iface_stats(s[1].ifc, &a1);
    uint64_t done = 0, bytes = 0;
    double t0 = now_s();
    while (done < (uint64_t)want)
        done += batch(s, e01, e10, (int)(want - (long)done < 64 ? want - (long)done : 64), &bytes);
    double dt = now_s() - t0;
    rdma_iface_stats(s[0].ifc, &b0);
    rdma_iface_stats(s[1].ifc, &b1);
#define D(f) (b0.f + b1.f - a0.f - a1.f)
    uint64_t ops = D(puts) + D(gets), inl = D(inline_puts), bnc = D(bounce), cch = D(cached), hp = D(heap);
    uint64_t sig = D(signalled), marks = D(markers);
#undef D
    printf("random put/get: %llu operations, %.1f MiB, %.1f s, all byte-exact; local buffers: inline %llu, "
           "bounce %llu, registration cache %llu, heap %llu; signalled %llu, flush markers %llu\n",
           (unsigned long long)done, (double)bytes / 1048576.0, dt, (unsigned long long)inl,
           (unsigned long long)bnc, (unsigned long long)cch, (unsigned long long)hp, (unsigned long long)sig,
           (unsigned long long)marks);
    CHECK(ops == done, "posts counted %llu, expected %llu", (unsigned long long)ops, (unsigned long long)done);
    CHECK(inl && bnc && cch && hp, "a local-buffer path never taken");
    CHECK(sig < done, "every request signalled (%llu of %llu): no selective signalling", (unsigned long long)sig,
          (unsigned long long)done);
}

/* ---------- 4: atomics ---------- */

static void atomics(side_t *s, rdma_ep_t *e01, rdma_ep_t *e11)
{
    if (!rdma_iface_caps(s[0].ifc)->atomics || !rdma_iface_caps(s[1].ifc)->atomics) {
        printf("atomics: not usable here (%s) - skipped\n", rdma_md_notes(s[0].md));
        return;
    }
    volatile uint64_t *w = (volatile uint64_t *)(s[1].base + 8);
    rdma_comp_t c = {0};
    uint64_t got = 0;
    *w = 0x0102030405060708ull;
    CHECK(rdma_fetch_add(e01, 8, 0, &got, &c) == LOCUS_OK && rdma_wait(s[0].ifc, &c) == LOCUS_OK, "fetch");
    CHECK(got == 0x0102030405060708ull, "fetched 0x%016llx: byte order", (unsigned long long)got);

    /* fetch-add +1 from two endpoints, interleaved, N each */
    enum { N = 2000 };
    static uint64_t r01[N], r11[N];
    const uint64_t init = 1000000;
    *w = init;
    rdma_comp_t c0 = {0}, c1 = {0};
    for (int i = 0; i < N; i++) {
        CHECK(rdma_fetch_add(e01, 8, 1, &r01[i], i % 64 == 63 ? &c0 : NULL) == LOCUS_OK, "fetch-add S0->S1");
        CHECK(rdma_fetch_add(e11, 8, 1, &r11[i], i % 64 == 63 ? &c1 : NULL) == LOCUS_OK, "fetch-add S1->S1");
    }
    CHECK(rdma_iface_flush(s[0].ifc) == LOCUS_OK && rdma_iface_flush(s[1].ifc) == LOCUS_OK, "flush");
    CHECK(c0.pending == 0 && c1.pending == 0 && !c0.status && !c1.status, "comps");
    CHECK(*w == init + 2 * N, "after 2 x %d fetch-adds: %llu, expected %llu", N, (unsigned long long)*w,
          (unsigned long long)(init + 2 * N));
    static unsigned char seen[2 * N];
    memset(seen, 0, sizeof seen);
    for (int i = 0; i < 2 * N; i++) {
        uint64_t v = i < N ? r01[i] : r11[i - N];
        CHECK(v >= init && v < init + 2 * N && !seen[v - init], "fetched %llu twice or out of [%llu, %llu)",
              (unsigned long long)v, (unsigned long long)init, (unsigned long long)(init + 2 * N));
        seen[v - init] = 1;
    }
    printf("fetch-add: 2 endpoints x %d on one word: sum exact, fetched values a permutation of %llu..%llu\n", N,
           (unsigned long long)init, (unsigned long long)(init + 2 * N - 1));

    /* compare-swap semantics */
    *w = 5;
    CHECK(rdma_cswap(e01, 8, 5, 9, &got, &c) == LOCUS_OK && rdma_wait(s[0].ifc, &c) == LOCUS_OK, "cswap");
    CHECK(got == 5 && *w == 9, "cswap(5 -> 9) on 5: fetched %llu, word %llu", (unsigned long long)got,
          (unsigned long long)*w);
    CHECK(rdma_cswap(e01, 8, 5, 11, &got, &c) == LOCUS_OK && rdma_wait(s[0].ifc, &c) == LOCUS_OK, "cswap");
    CHECK(got == 9 && *w == 9, "cswap(5 -> 11) on 9: fetched %llu, word %llu (must not swap)",
          (unsigned long long)got, (unsigned long long)*w);
    /* a CAS-loop counter from two endpoints, alternating */
    enum { M = 300 };
    *w = 0;
    rdma_ep_t *eps[2] = {e01, e11};
    rdma_iface_t *ifs[2] = {s[0].ifc, s[1].ifc};
    uint64_t guess[2] = {0, 0}, done[2] = {0, 0}, fails = 0;
    while (done[0] < M || done[1] < M) {
        for (int k = 0; k < 2; k++) {
            if (done[k] == M)
                continue;
            CHECK(rdma_cswap(eps[k], 8, guess[k], guess[k] + 1, &got, &c) == LOCUS_OK &&
                  rdma_wait(ifs[k], &c) == LOCUS_OK, "cas loop");
            if (got == guess[k])
                done[k]++, guess[k]++;
            else
                guess[k] = got, fails++;
        }
    }
    CHECK(*w == 2 * M, "CAS counter: %llu, expected %d", (unsigned long long)*w, 2 * M);
    printf("compare-swap: swaps only on a match; CAS counter from 2 endpoints = %d (%llu retries)\n", 2 * M,
           (unsigned long long)fails);
}

/* ---------- 5: registration cache invalidation ---------- */

static uint64_t invalidations(side_t *s)
{
    locus_reg_stats_t st;
    locus_reg_stats(rdma_md_cache(s->md), &st);
    return st.invalidations;
}

static void put_get_check(side_t *s, rdma_ep_t *e01, char *buf, size_t len, const char *what)
{
    rdma_comp_t c = {0};
    char *target = s[1].base + (8u << 20);
    CHECK(rdma_put(e01, buf, 8u << 20, len, &c) == LOCUS_OK && rdma_wait(s[0].ifc, &c) == LOCUS_OK, "%s", what);
    CHECK(!memcmp(target, buf, len), "%s: the put carried stale bytes", what);
    fill_random(target, len);
    CHECK(rdma_get(e01, buf, 8u << 20, len, &c) == LOCUS_OK && rdma_wait(s[0].ifc, &c) == LOCUS_OK, "%s", what);
    CHECK(!memcmp(target, buf, len), "%s: the get landed elsewhere", what);
}

static void reuse(side_t *s, rdma_ep_t *e01)
{
    const size_t len = MAXLEN;
    uint64_t inv0 = invalidations(&s[0]);
    char *p = malloc(len);
    CHECK(p, "malloc");
    fill_random(p, len);
    put_get_check(s, e01, p, len, "malloc'd 4 MiB");
    free(p);
    char *q = malloc(len);
    CHECK(q, "malloc");
    fill_random(q, len);
    put_get_check(s, e01, q, len, "reallocated 4 MiB");
    printf("free + malloc: %s address, new bytes carried\n", q == p ? "same" : "different");
    free(q);
    /* mmap, munmap and mmap again at exactly that address */
    char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(m != MAP_FAILED, "mmap");
    fill_random(m, len);
    put_get_check(s, e01, m, len, "mmapped 4 MiB");
    CHECK(!munmap(m, len), "munmap");
    char *m2 = mmap(m, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    CHECK(m2 == m, "mmap at the same address");
    fill_random(m2, len);
    put_get_check(s, e01, m2, len, "re-mmapped 4 MiB at the same address");
    munmap(m2, len);
    CHECK(invalidations(&s[0]) > inv0, "no registration was invalidated");
    printf("registration cache: %llu invalidations; reallocated buffers carried their new bytes\n",
           (unsigned long long)(invalidations(&s[0]) - inv0));
}

/* ---------- 6: bad arguments ---------- */

static void bad_args(side_t *s, rdma_ep_t *e01)
{
    rdma_iface_stats_t a, b;
    rdma_iface_stats(s[0].ifc, &a);
    uint64_t v;
    struct { locus_status_t got, want; const char *what; } c[] = {
        {rdma_put(e01, s[0].base, HEAP - 3, 8, NULL), LOCUS_ERR_RANGE, "put past the end"},
        {rdma_get(e01, s[0].base, HEAP, 1, NULL), LOCUS_ERR_RANGE, "get at the end"},
        {rdma_get(e01, s[0].base, ~0ull - 7, 16, NULL), LOCUS_ERR_RANGE, "offset that overflows"},
        {rdma_put(e01, NULL, 0, 16, NULL), LOCUS_ERR_INVALID, "NULL source"},
        {rdma_fetch_add(e01, 12, 1, &v, NULL), LOCUS_ERR_INVALID, "misaligned fetch-add"},
        {rdma_cswap(e01, 3, 0, 1, &v, NULL), LOCUS_ERR_INVALID, "misaligned cswap"},
        {rdma_fetch_add(e01, HEAP, 1, &v, NULL), LOCUS_ERR_RANGE, "fetch-add past the end"},
        {rdma_put(NULL, s[0].base, 0, 8, NULL), LOCUS_ERR_INVALID, "NULL endpoint"},
    };
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        locus_status_t want = c[i].want;
        if (!rdma_iface_caps(s[0].ifc)->atomics && strstr(c[i].what, "cswap"))
            want = LOCUS_ERR_UNSUPPORTED;
        if (!rdma_iface_caps(s[0].ifc)->atomics && strstr(c[i].what, "fetch-add"))
            want = LOCUS_ERR_UNSUPPORTED;
        CHECK(c[i].got == want, "%s: status %d, expected %d", c[i].what, c[i].got, want);
    }
    rdma_ep_t *lone = new_ep(&s[0]);
    CHECK(rdma_put(lone, s[0].base, 0, 8, NULL) == LOCUS_ERR_INVALID, "put on an unconnected endpoint");
    printf("unconnected: %s\n", locus_last_error());
    uint8_t blob[RDMA_ADDR_BYTES];
    rdma_ep_addr(e01, blob);
    blob[6] = 9;
    CHECK(rdma_ep_connect(lone, blob) == LOCUS_ERR_INVALID, "a blob with MTU code 9");
    printf("bad blob: %s\n", locus_last_error());
    rdma_ep_destroy(lone);
    rdma_iface_stats(s[0].ifc, &b);
    CHECK(a.puts == b.puts && a.gets == b.gets && a.atomics == b.atomics && rdma_ep_outstanding(e01) == 0,
          "a rejected call posted something");
    CHECK(rdma_put(e01, s[0].base, HEAP - 3, 8, NULL) == LOCUS_ERR_RANGE, "again");
    printf("bad arguments: rejected before posting (%s)\n", locus_last_error());
}

/* ---------- 7: one side destroyed ---------- */

static void destroyed_peer(side_t *s)
{
    rdma_ep_t *x = new_ep(&s[0]), *y = new_ep(&s[1]);
    connect_pair(x, y);
    rdma_comp_t c = {0};
    for (int i = 0; i < 8; i++)
        CHECK(rdma_put(x, s[0].base + HALF, (uint64_t)i << 20, 1u << 20, &c) == LOCUS_OK, "put");
    unsigned pending = c.pending;
    rdma_ep_destroy(y);
    double t0 = now_s();
    printf("destroyed the peer endpoint with %u operations pending towards it\n", pending);
    double dt = until_failure(s[0].ifc, x, s[0].base + HALF, t0, &c);
    CHECK(dt <= 2.0, "the destroyed peer was detected after %.3f s (> 2 s)", dt);
    rdma_ep_destroy(x);
}

/* ---------- 8: the stall detector: a signalled request long after an unsignalled one ---------- */

/* The stall detector (LOCUS_RDMA_STALL) counts from the moment a completion
 * is owed. An unsignalled put owes none, however long the program then
 * computes; the flush marker or the READ posted behind it later must get the
 * full stall time, not be failed at once for the put's age (the SOS bigget
 * job across the two guests: a barrier WRITE, 36 s of traffic to other PEs,
 * then quiet's READ failed as a 36 s stall). */
static void idle_then_request(side_t *peer)
{
    side_t q = {0};
    side_open(&q, "S2", 0.3, 0);
    rdma_ep_t *x = new_ep(&q), *y = new_ep(peer);
    connect_pair(x, y);
    rdma_iface_stats_t a, b;
    for (int round = 0; round < 2; round++) {
        rdma_iface_stats(q.ifc, &a);
        uint64_t v = 0x5eed0000u + (unsigned)round;
        CHECK(rdma_put(x, &v, 64, 8, NULL) == LOCUS_OK, "put");
        rdma_iface_stats(q.ifc, &b);
        CHECK(b.signalled == a.signalled, "the 8-byte put was signalled: the case needs an unsignalled one");
        usleep(700000); /* idle, no progress, > 2x the stall time */
        if (round == 0) {
            /* loopback completes inside ibv_post_send, so the check is
             * called before any completion is polled, as it is across a
             * link while the READ is on its way */
            uint64_t got = 0;
            rdma_comp_t c = {0};
            CHECK(rdma_get(x, &got, 64, 8, &c) == LOCUS_OK, "get");
            rdma_iface_check(q.ifc, true);
            CHECK(rdma_ep_status(x) == LOCUS_OK, "a get posted 0.7 s after an unsignalled put was failed at once "
                  "as a stall (stall 0.3 s): %s", locus_last_error());
            CHECK(rdma_wait(q.ifc, &c) == LOCUS_OK, "get: %s", locus_last_error());
            CHECK(got == v, "get read %llx, expected %llx", (unsigned long long)got, (unsigned long long)v);
        } else {
            CHECK(rdma_iface_flush(q.ifc) == LOCUS_OK, "flush 0.7 s after an unsignalled put, stall 0.3 s: %s",
                  locus_last_error());
        }
    }
    CHECK(rdma_ep_status(x) == LOCUS_OK, "endpoint failed");
    printf("idle after an unsignalled put: flush and get 0.7 s later succeed (stall 0.3 s)\n");
    rdma_ep_destroy(x);
    rdma_ep_destroy(y);
    side_close(&q);
}

/* ---------- 8: the stall detector: a peer that drops every packet ---------- */

/* A QP in RESET drops what reaches it without a NAK. With a QP detection
 * time far beyond the stall time (timeout 20: 4.3 s a try, 30 s in all), the
 * READ neither completes nor fails in the QP: the stall detector alone ends
 * the wait, in about the stall time, naming the request. */
static void silent_peer(side_t *peer)
{
    side_t q = {0};
    side_open(&q, "S3", 0.3, 20);
    rdma_ep_t *x = new_ep(&q), *y = new_ep(peer);
    connect_pair(x, y);
    struct ibv_qp_attr reset = {.qp_state = IBV_QPS_RESET};
    CHECK(ibv_modify_qp(y->qp, &reset, IBV_QP_STATE) == 0, "peer QP to RESET");
    uint64_t got = 0;
    rdma_comp_t c = {0};
    double t0 = now_s();
    CHECK(rdma_get(x, &got, 64, 8, &c) == LOCUS_OK, "get");
    locus_status_t st = rdma_wait(q.ifc, &c);
    double dt = now_s() - t0;
    const char *msg = locus_last_error();
    CHECK(st == LOCUS_ERR_TIMEOUT, "a READ to a silent peer: status %d, expected TIMEOUT (%s)", st, msg);
    CHECK(strstr(msg, "no completion for") && strstr(msg, "RDMA READ") && strstr(msg, "LOCUS_RDMA_STALL"),
          "stall message lacks the request or the tunable: %s", msg);
    CHECK(dt >= 0.3 && dt < 3.0, "silent peer found after %.2f s (stall 0.3 s, the QP's own detection 30 s)", dt);
    CHECK(c.pending == 0 && rdma_ep_status(x) == LOCUS_ERR_TIMEOUT, "the endpoint did not fail with the request");
    printf("silent peer (QP in RESET): stall detected after %.2f s: %s\n", dt, msg);
    rdma_ep_destroy(x);
    rdma_ep_destroy(y);
    side_close(&q);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    long nops = argc > 1 ? strtol(argv[1], NULL, 10) : 12000;
    res_t r0 = resources();
    printf("rxe0 resources at start: pd %ld cq %ld qp %ld mr %ld ctx %ld\n", r0.pd, r0.cq, r0.qp, r0.mr, r0.ctx);
    CHECK(r0.qp >= 0, "rdma resource show gave no counts for rxe0");

    killed_peer();

    side_t s[2] = {{0}};
    side_open(&s[0], "S0", 0, 0);
    side_open(&s[1], "S1", 0, 0);
    const rdma_md_info_t *mi = rdma_md_info(s[0].md);
    const rdma_caps_t *caps = rdma_iface_caps(s[0].ifc);
    printf("device %s port %d GID %d; max_inline %u, sq_depth %u, signal every %u, rd_atomic %d, atomics %d "
           "(byte-swapped %d), dead peer after %.2f s\n%s", mi->device, mi->port, mi->gid_index, caps->max_inline,
           caps->sq_depth, caps->signal_every, caps->rd_atomic, caps->atomics, caps->atomic_bswap,
           (double)caps->detect_ns * 1e-9, rdma_md_notes(s[0].md));
    rdma_ep_t *e01 = new_ep(&s[0]), *e10 = new_ep(&s[1]), *e11 = new_ep(&s[1]);
    connect_pair(e01, e10);
    uint8_t self[RDMA_ADDR_BYTES];
    rdma_ep_addr(e11, self);
    CHECK(rdma_ep_connect(e11, self) == LOCUS_OK, "connect an endpoint to itself");

    random_rw(s, e01, e10, nops);
    atomics(s, e01, e11);
    reuse(s, e01);
    bad_args(s, e01);
    destroyed_peer(s);
    idle_then_request(&s[1]);
    silent_peer(&s[1]);

    CHECK(rdma_iface_flush(s[0].ifc) == LOCUS_OK && rdma_iface_flush(s[1].ifc) == LOCUS_OK, "final flush");
    rdma_ep_destroy(e01);
    rdma_ep_destroy(e10);
    side_close(&s[0]);
    side_close(&s[1]);
    res_t r1 = resources();
    printf("rxe0 resources at the end: pd %ld cq %ld qp %ld mr %ld ctx %ld\n", r1.pd, r1.cq, r1.qp, r1.mr, r1.ctx);
    CHECK(r1.pd == r0.pd && r1.cq == r0.cq && r1.qp == r0.qp && r1.mr == r0.mr && r1.ctx == r0.ctx,
          "device objects left behind");
    printf("rdma-ops: ok\n");
    return 0;
}
