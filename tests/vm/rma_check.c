/* rma_check: the one-sided layer (locus rma) end to end, run by every rank of
 * a job: under `locus run -n N`, mpirun (PMIx) on one host, or in the two
 * guests of `locus-vm --pair` (one rank per guest, LOCUS_BOOT=tcp:...).
 *   1. Data: batches of random puts and gets (sizes 1 B..4 MiB, mostly small;
 *      random remote and local alignments; local buffers in the heap, from
 *      malloc and on the stack; blocking and _nbi), every put verified
 *      byte-exact by its target, every get by its issuer.
 *   2. Atomics, all ranks at once: fetch-add (sum exact, each issuer's old
 *      values increasing), non-fetching add, a compare-swap counter, 32-bit
 *      adds on both halves of one word, or/and/xor bits, swap.
 *   2b. Fence: a put_nbi and an add, fence, a flag: the receiver finds the
 *      data and the count when it sees the flag (100 rounds around a ring).
 *   3. A buffer unmapped and mapped again at the same address (and one freed
 *      and malloc'd again) carries its new bytes in a put and a get.
 *   4. Bad input: a rank out of range, a range past the heap's end, a
 *      misaligned atomic, a non-symmetric address: the documented error,
 *      nothing posted.
 *   5. --kill-test busy|wait [--victim R] [--die-after S | --kill-cmd CMD]:
 *      rank R (default the last) dies S s after a barrier (_exit, no fini),
 *      or stays until killed from outside: the others run CMD (e.g.
 *      `locus-vm-kill A`) right after the barrier. Each survivor, busy with
 *      traffic to it or only waiting in a barrier, gets an error within 2 s;
 *      fini returns promptly; no /dev/shm object, no pinned memory, no QP left.
 * Options: --ops N (per rank, default 5000), --seed S, --expect local|nic
 * (how peers must be reached), --expect-reg-full (some transfers found the
 * registration cache full and went through the bounce buffers: run with a
 * small LOCUS_REG_MAX_BYTES), --expect-cpus own|shared|over (what the node's
 * processes run on: each bound to cpus of its own, sharing them, more
 * processes than cpus; own and shared exit 77 on a machine with fewer cpus than
 * ranks), --quiet. Prints "rma_check: ok ..." per rank.
 */
#include <locus/locus.h>

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define MiB (1u << 20)
#define MAXLEN (4u << 20)
#define BATCH_MAX 64
#define WORDS 0u                  /* atomics area: 4 KiB */
#define STAGE 4096u               /* heap-local buffers: bump area */
#define STAGE_LEN (8u * MiB + 8192u)
#define RECV0 (STAGE + STAGE_LEN) /* per-source receive slots */

static int me = -1, np;
static bool quiet, expect_reg_full;

static void fail(int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("rma_check: rank %d: FAIL (line %d): ", me, line);
    vprintf(fmt, ap);
    printf(" [%s]\n", locus_last_error());
    va_end(ap);
    fflush(stdout);
    _exit(1);
}
#define CHECK(cond, ...)                                                                                     \
    do {                                                                                                     \
        if (!(cond))                                                                                         \
            fail(__LINE__, __VA_ARGS__);                                                                     \
    } while (0)
#define OK(call) CHECK((call) == LOCUS_OK, "%s", #call)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---------- deterministic streams (a target replays its sources' choices) ---------- */

typedef struct {
    uint64_t s;
} rng_t;

static uint64_t next(rng_t *g)
{
    g->s ^= g->s >> 12;
    g->s ^= g->s << 25;
    g->s ^= g->s >> 27;
    return g->s * 2685821657736338717ull;
}
static uint64_t below(rng_t *g, uint64_t n) { return n ? next(g) % n : 0; }
static rng_t seeded(uint64_t a, uint64_t b, uint64_t c)
{
    rng_t g = {a * 0x9e3779b97f4a7c15ull ^ (b + 1) * 0xbf58476d1ce4e5b9ull ^ (c + 7) * 0x94d049bb133111ebull};
    if (!g.s)
        g.s = 1;
    for (int i = 0; i < 4; i++)
        next(&g);
    return g;
}

static void fill(void *p, size_t n, uint64_t seed)
{
    rng_t g = {seed | 1};
    uint8_t *b = p;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t v = next(&g);
        memcpy(b + i, &v, 8);
    }
    for (uint64_t v = next(&g); i < n; i++, v >>= 8)
        b[i] = (uint8_t)v;
}

/* First differing byte, or -1. */
static long diff(const void *p, size_t n, uint64_t seed)
{
    rng_t g = {seed | 1};
    const uint8_t *b = p;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t v = next(&g);
        if (memcmp(b + i, &v, 8))
            for (size_t k = 0; k < 8; k++)
                if (b[i + k] != (uint8_t)(v >> (8 * k)))
                    return (long)(i + k);
    }
    for (uint64_t v = next(&g); i < n; i++, v >>= 8)
        if (b[i] != (uint8_t)v)
            return (long)i;
    return -1;
}

/* ---------- 1. data ---------- */

typedef struct {
    int target;
    size_t len;
    uint64_t roff;      /* in the target's heap */
    int kind;           /* 0 heap, 1 malloc, 2 stack (small blocking puts) */
    unsigned lalign;
    bool nbi, get_nbi;
    uint64_t seed;
} op_t;

static uint64_t slot_size(uint64_t heap)
{
    return ((heap - RECV0) / (uint64_t)np) & ~4095ull;
}

/* The ops `source` issues in `batch`: packed into each target's slot for
 * this source until one does not fit, at most BATCH_MAX. */
static int gen_batch(uint64_t seed, int source, int batch, uint64_t slot, op_t *ops)
{
    rng_t g = seeded(seed, (uint64_t)source, (uint64_t)batch);
    uint64_t pos[1024] = {0};
    int n = 0;
    while (n < BATCH_MAX) {
        op_t o;
        o.target = (int)below(&g, (uint64_t)np);
        /* 1 % log-uniform up to 4 MiB (exactly 4 MiB now and then), else up to 64 KiB */
        unsigned top = below(&g, 100) == 0 ? 23 : 17;
        unsigned bits = (unsigned)below(&g, top);
        o.len = (size_t)(1ull << bits) + below(&g, 1ull << bits);
        if (o.len > MAXLEN || below(&g, 500) == 0)
            o.len = MAXLEN;
        unsigned ralign = (unsigned)below(&g, 64);
        o.kind = (int)below(&g, 3);
        if (o.kind == 2 && o.len > 256)
            o.kind = 1;
        o.lalign = (unsigned)below(&g, 64);
        o.nbi = o.kind != 2 && below(&g, 3) == 0;
        o.get_nbi = below(&g, 3) == 0;
        o.seed = next(&g);
        if (pos[o.target] + ralign + o.len > slot)
            break;
        o.roff = RECV0 + (uint64_t)source * slot + pos[o.target] + ralign;
        pos[o.target] += (ralign + o.len + 7) & ~7ull;
        ops[n++] = o;
    }
    return n;
}

typedef struct {
    char *stage;
    uint64_t used;
    void *mallocs[BATCH_MAX * 2];
    int nmallocs;
} bufs_t;

static char *local_buf(bufs_t *b, const op_t *o)
{
    if (o->kind == 0) {
        uint64_t at = (b->used + 63) & ~63ull;
        if (at + o->lalign + o->len > STAGE_LEN)
            return NULL;
        b->used = at + o->lalign + o->len;
        return b->stage + at + o->lalign;
    }
    char *m = malloc(o->len + 64);
    CHECK(m, "malloc %zu", o->len);
    b->mallocs[b->nmallocs++] = m;
    return m + o->lalign;
}

static void free_bufs(bufs_t *b)
{
    for (int i = 0; i < b->nmallocs; i++)
        free(b->mallocs[i]);
    b->nmallocs = 0;
    b->used = 0;
}

static void put_ops(locus_rma_t *r, char *heap, const op_t *ops, int n, bufs_t *b)
{
    for (int i = 0; i < n; i++) {
        const op_t *o = &ops[i];
        char stack[256 + 64];
        char *src = o->kind == 2 ? stack + o->lalign : local_buf(b, o);
        if (!src) { /* stage full: complete what uses it */
            OK(locus_rma_flush_all(r));
            b->used = 0;
            src = local_buf(b, o);
        }
        fill(src, o->len, o->seed);
        locus_status_t st = o->nbi ? locus_rma_put_nbi(r, o->target, heap + o->roff, src, o->len)
                                   : locus_rma_put(r, o->target, heap + o->roff, src, o->len);
        CHECK(st == LOCUS_OK, "put%s of %zu B to rank %d at %llu", o->nbi ? "_nbi" : "", o->len, o->target,
              (unsigned long long)o->roff);
        if (!o->nbi) /* the source may be reused at return */
            memset(src, 0xa5, o->len);
    }
}

/* The target's check: every source's ops to us, replayed. */
static long verify_mine(char *heap, uint64_t seed, int batch, uint64_t slot)
{
    static op_t ops[BATCH_MAX];
    long count = 0;
    for (int s = 0; s < np; s++) {
        int n = gen_batch(seed, s, batch, slot, ops);
        for (int i = 0; i < n; i++) {
            if (ops[i].target != me)
                continue;
            long d = diff(heap + ops[i].roff, ops[i].len, ops[i].seed);
            CHECK(d < 0, "batch %d: put %d of %zu B from rank %d at offset %llu: byte %ld differs", batch, i,
                  ops[i].len, s, (unsigned long long)ops[i].roff, d);
            count++;
        }
    }
    return count;
}

/* The issuer's check: read each of its puts back. */
static long get_back(locus_rma_t *r, char *heap, const op_t *ops, int n, bufs_t *b)
{
    char *dst[BATCH_MAX];
    int unchecked = 0; /* dst[unchecked..i) may still be in flight (get_nbi) */
    for (int i = 0; i < n; i++) {
        const op_t *o = &ops[i];
        op_t lo = *o;
        if (lo.kind == 2)
            lo.kind = 1;
        dst[i] = local_buf(b, &lo);
        if (!dst[i]) { /* stage full: complete and check what uses it */
            OK(locus_rma_flush_all(r));
            for (; unchecked < i; unchecked++)
                CHECK(diff(dst[unchecked], ops[unchecked].len, ops[unchecked].seed) < 0, "get %d back", unchecked);
            b->used = 0;
            dst[i] = local_buf(b, &lo);
        }
        memset(dst[i], 0x5a, o->len);
        locus_status_t st = o->get_nbi ? locus_rma_get_nbi(r, o->target, dst[i], heap + o->roff, o->len)
                                       : locus_rma_get(r, o->target, dst[i], heap + o->roff, o->len);
        CHECK(st == LOCUS_OK, "get of %zu B from rank %d", o->len, o->target);
        if (o->get_nbi && (o->seed >> 7) % 2) { /* flush(rank) now and then */
            OK(locus_rma_flush(r, o->target));
            long d = diff(dst[i], o->len, o->seed);
            CHECK(d < 0, "get_nbi of %zu B from rank %d after flush(rank): byte %ld differs", o->len, o->target, d);
        } else if (!o->get_nbi) {
            long d = diff(dst[i], o->len, o->seed);
            CHECK(d < 0, "get of %zu B from rank %d at %llu: byte %ld differs", o->len, o->target,
                  (unsigned long long)o->roff, d);
        }
    }
    OK(locus_rma_flush_all(r));
    for (int i = unchecked; i < n; i++) {
        long d = diff(dst[i], ops[i].len, ops[i].seed);
        CHECK(d < 0, "get%s %d of %zu B from rank %d: byte %ld differs", ops[i].get_nbi ? "_nbi" : "", i,
              ops[i].len, ops[i].target, d);
    }
    return n;
}

/* Batches until every rank issued want_ops puts + gets (all ranks run the
 * same number: the verification and barriers are collective). Returns the
 * operations this rank verified: puts others made to it, and its gets. */
static long data_test(locus_rma_t *r, uint64_t seed, long want_ops)
{
    char *heap = locus_rma_heap_base(r);
    uint64_t slot = slot_size(locus_rma_heap_size(r));
    CHECK(slot >= MAXLEN + 64, "heap of %llu B too small for %d ranks (LOCUS_RMA_HEAP_SIZE >= %llu)",
          (unsigned long long)locus_rma_heap_size(r), np, (unsigned long long)(RECV0 + (MAXLEN + 4096ull) * np));
    static op_t ops[BATCH_MAX];
    bufs_t b = {.stage = heap + STAGE};
    long done = 0, verified = 0;
    for (int batch = 0;; batch++) {
        int n = gen_batch(seed, me, batch, slot, ops);
        put_ops(r, heap, ops, n, &b);
        OK(locus_rma_barrier(r)); /* every put of the batch complete and visible */
        free_bufs(&b);
        verified += verify_mine(heap, seed, batch, slot);
        verified += get_back(r, heap, ops, n, &b);
        free_bufs(&b);
        done += 2 * n;
        OK(locus_rma_barrier(r)); /* nobody overwrites a slot still being read */
        long all[1024], least = done;
        OK(locus_boot_allgather(locus_rma_boot(r), &done, sizeof done, all));
        for (int q = 0; q < np; q++)
            least = all[q] < least ? all[q] : least;
        if (least >= want_ops)
            break;
    }
    return verified;
}

/* ---------- 2. atomics ---------- */

static uint64_t word(char *heap, int i) { return __atomic_load_n((uint64_t *)(heap + WORDS) + i, __ATOMIC_ACQUIRE); }
static uint64_t *sym(char *heap, int i) { return (uint64_t *)(heap + WORDS) + i; }

static void atomics_test(locus_rma_t *r, int k)
{
    char *heap = locus_rma_heap_base(r);
    k -= k % np;
    uint64_t last[1024] = {0}, sum = (uint64_t)np * (np + 1) / 2;
    for (int i = 0; i < k; i++) { /* interleaved over targets: every word contended */
        int t = (i + me) % np;
        uint64_t old;
        OK(locus_rma_fetch_add(r, t, sym(heap, 0), (uint64_t)me + 1, &old));
        CHECK(i < np || old > last[t], "fetch-add on rank %d returned %llu after %llu", t, (unsigned long long)old,
              (unsigned long long)last[t]);
        last[t] = old;
        OK(locus_rma_amo(r, t, LOCUS_RMA_AMO_ADD, sym(heap, 1), 8, 3, 0, NULL));
        for (;;) { /* a compare-swap counter */
            uint64_t cur, got;
            OK(locus_rma_amo(r, t, LOCUS_RMA_AMO_FETCH, sym(heap, 2), 8, 0, 0, &cur));
            OK(locus_rma_cswap(r, t, sym(heap, 2), cur, cur + 1, &got));
            if (got == cur)
                break;
        }
        uint64_t h0, h1; /* both 32-bit halves of word 4 */
        OK(locus_rma_amo(r, t, LOCUS_RMA_AMO_ADD, sym(heap, 4), 4, 1, 0, &h0));
        OK(locus_rma_amo(r, t, LOCUS_RMA_AMO_ADD, (char *)sym(heap, 4) + 4, 4, 2, 0, &h1));
        CHECK(h0 <= 0xffffffffull && h1 <= 0xffffffffull, "32-bit fetched values wider than 32 bits");
    }
    for (int t = 0; t < np; t++) {
        OK(locus_rma_amo(r, t, LOCUS_RMA_AMO_OR, sym(heap, 5), 8, 1ull << (me % 64), 0, NULL));
        OK(locus_rma_amo(r, t, LOCUS_RMA_AMO_XOR, sym(heap, 6), 4, 1u << (me % 32), 0, NULL));
    }
    uint64_t prev;
    OK(locus_rma_swap(r, (me + 1) % np, sym(heap, 3), (uint64_t)me + 100, &prev));
    CHECK(prev == 0, "swap into a word only this rank swaps returned %llu", (unsigned long long)prev);
    OK(locus_rma_barrier(r));
    uint64_t per = (uint64_t)(k / np), bits = 0, bits32 = 0;
    for (int q = 0; q < np; q++) {
        bits |= 1ull << (q % 64);
        bits32 ^= 1u << (q % 32);
    }
    CHECK(word(heap, 0) == per * sum, "fetch-add sum %llu, expected %llu", (unsigned long long)word(heap, 0),
          (unsigned long long)(per * sum));
    CHECK(word(heap, 1) == per * 3 * np, "add sum %llu, expected %llu", (unsigned long long)word(heap, 1),
          (unsigned long long)(per * 3 * np));
    CHECK(word(heap, 2) == per * np, "compare-swap counter %llu, expected %llu", (unsigned long long)word(heap, 2),
          (unsigned long long)(per * np));
    CHECK(word(heap, 4) == ((per * np * 2) << 32 | per * np), "32-bit halves 0x%llx, expected low %llu high %llu",
          (unsigned long long)word(heap, 4), (unsigned long long)(per * np), (unsigned long long)(per * np * 2));
    CHECK(word(heap, 5) == bits, "or bits 0x%llx, expected 0x%llx", (unsigned long long)word(heap, 5),
          (unsigned long long)bits);
    CHECK((word(heap, 6) & 0xffffffffull) == bits32 && word(heap, 6) >> 32 == 0, "xor (32-bit) 0x%llx",
          (unsigned long long)word(heap, 6));
    CHECK(word(heap, 3) == (uint64_t)((me + np - 1) % np) + 100, "swapped value %llu",
          (unsigned long long)word(heap, 3));
    OK(locus_rma_barrier(r));
    for (int t = 0; t < np; t++)
        OK(locus_rma_amo(r, t, LOCUS_RMA_AMO_AND, sym(heap, 5), 8, ~(1ull << (me % 64)), 0, NULL));
    uint64_t v;
    OK(locus_rma_amo(r, me, LOCUS_RMA_AMO_SET, sym(heap, 7), 8, 42, 0, NULL));
    OK(locus_rma_amo(r, me, LOCUS_RMA_AMO_FETCH, sym(heap, 7), 8, 0, 0, &v));
    CHECK(v == 42, "set then fetch on self: %llu", (unsigned long long)v);
    OK(locus_rma_barrier(r));
    CHECK(word(heap, 5) == 0, "and cleared bits: 0x%llx left", (unsigned long long)word(heap, 5));
}

/* ---------- 2b. fence: nothing issued after it overtakes what came before ---------- */

static void wait_word(locus_rma_t *r, char *heap, int i, uint64_t v, const char *what)
{
    double t0 = now_s();
    while (word(heap, i) < v) {
        OK(locus_rma_progress(r));
        CHECK(now_s() - t0 < 60, "waited 60 s for %s (word %d is %llu, expected %llu)", what, i,
              (unsigned long long)word(heap, i), (unsigned long long)v);
    }
}

/* Round k, to the next rank: a 64 KiB put_nbi, a non-fetching add (both may
 * still be in flight), fence, the round number into a flag word by a plain
 * put. The receiver, seeing the flag, must find that round's bytes and count
 * already there, then acks. To another node the fence waits for nothing
 * (the NIC orders the flag behind them); on this node, in a job across
 * nodes, it completes the NIC's atomic before the flag's CPU store. */
static void fence_test(locus_rma_t *r, int rounds)
{
    char *heap = locus_rma_heap_base(r);
    uint64_t slot = slot_size(locus_rma_heap_size(r));
    int t = (me + 1) % np, from = (me + np - 1) % np;
    size_t len = 64u << 10;
    char *src = malloc(len);
    CHECK(src != NULL, "64 KiB");
    for (uint64_t k = 1; k <= (uint64_t)rounds; k++) {
        fill(src, len, 7000 + 1000 * (uint64_t)me + k);
        OK(locus_rma_put_nbi(r, t, heap + RECV0 + (uint64_t)me * slot, src, len));
        OK(locus_rma_amo(r, t, LOCUS_RMA_AMO_ADD, sym(heap, 65), 8, 1, 0, NULL));
        OK(locus_rma_fence(r));
        OK(locus_rma_put(r, t, sym(heap, 64), &k, 8));
        wait_word(r, heap, 64, k, "the flag of a fenced round");
        long d = diff(heap + RECV0 + (uint64_t)from * slot, len, 7000 + 1000 * (uint64_t)from + k);
        CHECK(d < 0, "round %llu: the flag from rank %d arrived before the data put ahead of its fence (byte %ld)",
              (unsigned long long)k, from, d);
        CHECK(word(heap, 65) >= k, "round %llu: the flag from rank %d arrived before the add ahead of its fence "
              "(count %llu)", (unsigned long long)k, from, (unsigned long long)word(heap, 65));
        OK(locus_rma_put(r, from, sym(heap, 66), &k, 8)); /* ack: the sender may reuse its slot */
        wait_word(r, heap, 66, k, "the ack of a fenced round");
    }
    OK(locus_rma_barrier(r));
    free(src);
}

/* ---------- 3. a buffer freed and mapped again at the same address ---------- */

static void realloc_test(locus_rma_t *r, int *same_malloc)
{
    char *heap = locus_rma_heap_base(r);
    uint64_t slot = slot_size(locus_rma_heap_size(r));
    int t = (me + 1) % np, from = (me + np - 1) % np;
    size_t len = 1 * MiB;
    char *dst = heap + RECV0 + (uint64_t)me * slot; /* our slot in t's heap */
    for (int round = 0; round < 2; round++) {
        /* round 0: munmap + mmap at the same address; round 1: free + malloc */
        char *p = round ? malloc(len) : mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        CHECK(p && p != MAP_FAILED, "allocation of 1 MiB");
        fill(p, len, 1000 + (uint64_t)me);
        OK(locus_rma_put(r, t, dst, p, len));
        OK(locus_rma_get(r, t, p, dst, len)); /* registers p as a get destination too */
        char *q;
        if (round) {
            free(p);
            q = malloc(len);
            *same_malloc = q == p;
        } else {
            munmap(p, len);
            q = mmap(p, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
            CHECK(q == p, "mmap again at %p gave %p", (void *)p, (void *)q);
        }
        fill(q, len, 2000 + (uint64_t)me + 17 * (uint64_t)round);
        OK(locus_rma_put(r, t, dst, q, len));
        OK(locus_rma_barrier(r));
        long d = diff(heap + RECV0 + (uint64_t)from * slot, len, 2000 + (uint64_t)from + 17 * (uint64_t)round);
        CHECK(d < 0, "round %d: the put from rank %d after its buffer was %s carried old bytes (byte %ld)", round,
              from, round ? "freed and malloc'd again" : "unmapped and mapped again", d);
        /* the get side: the new pages must receive the data */
        memset(q, 0, len);
        OK(locus_rma_get(r, t, q, dst, len));
        d = diff(q, len, 2000 + (uint64_t)me + 17 * (uint64_t)round);
        CHECK(d < 0, "round %d: a get into the reallocated buffer missed its bytes (byte %ld)", round, d);
        OK(locus_rma_barrier(r));
        if (round)
            free(q);
        else
            munmap(q, len);
    }
}

/* ---------- 4. bad input ---------- */

static void errors_test(locus_rma_t *r)
{
    char *heap = locus_rma_heap_base(r);
    uint64_t size = locus_rma_heap_size(r);
    char buf[64] = {0};
    locus_rma_stats_t s0, s1;
    OK(locus_rma_stats(r, &s0));
    CHECK(locus_rma_put(r, np, heap, buf, 8) == LOCUS_ERR_RANGE, "rank %d accepted", np);
    CHECK(strstr(locus_last_error(), "out of range"), "message for a bad rank: %s", locus_last_error());
    CHECK(locus_rma_get(r, -1, buf, heap, 8) == LOCUS_ERR_RANGE, "rank -1 accepted");
    CHECK(locus_rma_put(r, 0, heap + size - 8, buf, 16) == LOCUS_ERR_RANGE, "a put past the heap's end accepted");
    CHECK(strstr(locus_last_error(), "past the end"), "message: %s", locus_last_error());
    CHECK(locus_rma_get_nbi(r, 0, buf, heap + size, 1) != LOCUS_OK, "a get at the heap's end accepted");
    uint64_t old;
    CHECK(locus_rma_fetch_add(r, 0, (uint64_t *)(heap + 4), 1, &old) == LOCUS_ERR_INVALID, "misaligned atomic");
    CHECK(strstr(locus_last_error(), "aligned"), "message: %s", locus_last_error());
    CHECK(locus_rma_amo(r, 0, LOCUS_RMA_AMO_ADD, heap + 2, 4, 1, 0, NULL) == LOCUS_ERR_INVALID, "misaligned 32-bit");
    CHECK(locus_rma_amo(r, 0, LOCUS_RMA_AMO_ADD, heap, 2, 1, 0, NULL) == LOCUS_ERR_INVALID, "width 2");
    CHECK(locus_rma_put(r, 0, buf, buf + 8, 8) == LOCUS_ERR_INVALID, "a non-symmetric address accepted");
    CHECK(strstr(locus_last_error(), "not symmetric"), "message: %s", locus_last_error());
    CHECK(locus_rma_put(r, 0, heap, NULL, 0) == LOCUS_OK, "a zero-length put with NULL is a no-op");
    OK(locus_rma_stats(r, &s1));
    CHECK(!memcmp(&s0, &s1, sizeof s0), "a refused operation changed the statistics (something was posted)");
}

/* ---------- 5. a peer that dies ---------- */

static bool shm_left(const char *job)
{
    char prefix[128];
    snprintf(prefix, sizeof prefix, "locus-%u-%s-", (unsigned)getuid(), job);
    DIR *d = opendir("/dev/shm");
    bool left = false;
    for (struct dirent *e; d && (e = readdir(d));)
        left |= !strncmp(e->d_name, prefix, strlen(prefix));
    if (d)
        closedir(d);
    return left;
}

static long status_kb(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, key, strlen(key)))
            v = strtol(line + strlen(key), NULL, 10);
    if (f)
        fclose(f);
    return v;
}

/* QPs of this process the kernel still has (rdma res show qp), -1 if the
 * tool is not there. */
static int qps_left(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rdma res show qp 2>/dev/null | grep -c 'pid %d '", (int)getpid());
    FILE *p = popen(cmd, "r");
    int n = -1;
    if (p && fscanf(p, "%d", &n) != 1)
        n = -1;
    if (p)
        pclose(p);
    return n;
}

static int kill_test(locus_rma_t *r, int victim_rank, bool wait_mode, const char *kill_cmd, double die_after)
{
    bool victim = me == victim_rank;
    char *heap = locus_rma_heap_base(r);
    char job[64];
    snprintf(job, sizeof job, "%s", locus_boot_job(locus_rma_boot(r)));
    int other = victim_rank;
    OK(locus_rma_barrier(r));
    if (victim) {
        printf("rma_check: rank %d: victim ready\n", me);
        fflush(stdout);
        if (die_after >= 0) {
            usleep((useconds_t)(die_after * 1e6));
            _exit(0); /* no fini: the survivors must find out */
        }
        for (;;)
            pause(); /* killed from outside */
    }
    double t0 = now_s();
    if (kill_cmd) {
        CHECK(system(kill_cmd) == 0, "kill command '%s'", kill_cmd);
        t0 = now_s();
    } else {
        t0 += die_after;
    }
    static char src[64 << 10];
    locus_status_t st = LOCUS_OK;
    double last_ok = now_s();
    if (wait_mode) {
        st = locus_rma_barrier(r); /* the victim never comes */
    } else {
        for (long i = 0; !st; i++) {
            st = locus_rma_put_nbi(r, other, heap + RECV0, src, sizeof src);
            if (!st && i % 8 == 7)
                st = locus_rma_get(r, other, src, heap + RECV0, 64);
            if (!st && i % 16 == 15) /* completion is where failures surface */
                st = locus_rma_flush_all(r);
            if (!st)
                last_ok = now_s();
            CHECK(now_s() - t0 < 30, "no error 30 s after the peer died");
        }
    }
    double t_err = now_s();
    char msg[512];
    snprintf(msg, sizeof msg, "%s", locus_last_error());
    double since = t_err - t0;
    (void)last_ok;
    printf("rma_check: rank %d: %s failed %.2f s after the peer died: %s: %s\n", me, wait_mode ? "barrier" : "traffic",
           since, locus_strerror(st), msg);
    CHECK(st == LOCUS_ERR_PEER_FAILED || st == LOCUS_ERR_TIMEOUT, "unexpected status %d", (int)st);
    CHECK(since < 2.0, "the error came %.2f s after the peer died (bound 2 s)", since);
    CHECK(locus_rma_put_nbi(r, other, heap, src, 16) != LOCUS_OK, "a later put to the dead rank succeeded");
    CHECK(locus_rma_flush_all(r) != LOCUS_OK, "flush_all after a failure succeeded");
    CHECK(locus_rma_barrier(r) != LOCUS_OK, "a barrier after a failure succeeded");
    usleep(500000); /* the other survivors find the victim before this one leaves */
    locus_boot_t *boot = locus_rma_boot(r); /* ours (attr.boot): left after rma's fini */
    int qps_before = qps_left();
    double f0 = now_s();
    locus_rma_fini(r);
    double took = now_s() - f0;
    CHECK(took < 2.0, "fini took %.2f s after a failure", took);
    CHECK(!shm_left(job), "a /dev/shm object of job %s is left", job);
    long pin = status_kb("VmPin:"), qps = qps_left();
    CHECK(pin <= 0, "%ld kB still pinned after fini", pin);
    CHECK(qps <= 0, "%ld QPs of this process left after fini", qps);
    /* boot's own fini may wait a few seconds for a hub that died with its host */
    double b0 = now_s();
    locus_boot_fini(boot);
    printf("rma_check: rank %d: ok (kill test, %s): error after %.2f s, rma fini %.3f s (boot fini %.2f s), nothing "
           "left (VmPin %ld kB, QPs %ld, %d before fini)\n", me, wait_mode ? "waiting" : "busy", since, took, now_s() - b0,
           pin, qps, qps_before);
    return 0;
}

/* ---------- main ---------- */

/* An added region (a static array, at a different address in every process):
 * each rank puts its mark into slot `me` of every other rank's copy, reads
 * it back, and fetch-adds a shared counter in rank 0's copy; the sums and
 * marks must be exact. Through CMA on the node, RDMA windows across nodes;
 * atomics on another process's region need the NIC (one node: refused). */
static uint64_t region_words[1024 + 8] __attribute__((aligned(64)));

static void region_test(locus_rma_t *r)
{
    int id = -1;
    OK(locus_rma_region_add(r, region_words, sizeof region_words, &id));
    OK(locus_rma_barrier(r));
    for (int q = 0; q < np; q++) {
        uint64_t mark = 0x5eed0000ull + (uint64_t)me, back = 0;
        OK(locus_rma_put(r, q, &region_words[8 + me], &mark, 8));
        OK(locus_rma_get(r, q, &back, &region_words[8 + me], 8));
        CHECK(back == mark, "region: rank %d's slot %d read back 0x%llx, wrote 0x%llx", q, me,
              (unsigned long long)back, (unsigned long long)mark);
    }
    bool nic_amos = false;
    for (int q = 0; q < np; q++)
        nic_amos |= q != me && !locus_rma_is_local(r, q);
    int adds = 0;
    for (int i = 0; i < 100; i++) {
        uint64_t old;
        locus_status_t st = locus_rma_fetch_add(r, 0, &region_words[0], 1, &old);
        if (st == LOCUS_ERR_UNSUPPORTED && me != 0 && !nic_amos)
            break; /* one node: another process's region has no mapping here */
        OK(st);
        adds++;
    }
    OK(locus_rma_barrier(r));
    for (int q = 0; q < np; q++)
        CHECK(region_words[8 + q] == 0x5eed0000ull + (uint64_t)q, "region: slot %d holds 0x%llx", q,
              (unsigned long long)region_words[8 + q]);
    if (me == 0) { /* NIC agent: every rank's adds; CPU agent: rank 0's own only */
        uint64_t total = __atomic_load_n(&region_words[0], __ATOMIC_ACQUIRE), want = nic_amos ? 100ull * np : 100;
        CHECK(total == want, "region: counter %llu, expected %llu", (unsigned long long)total,
              (unsigned long long)want);
    }
}

/* How the node's processes share its cpus, as the launcher bound them. */
static void cpus_test(locus_rma_t *r, const char *want)
{
    const char *got = locus_rma_oversubscribed(r) ? "over" : locus_rma_own_cpus(r) ? "own" : "shared";
    if (strcmp(want, "over") && sysconf(_SC_NPROCESSORS_ONLN) < np) {
        printf("SKIP: %d ranks cannot have cpus of their own on %ld cpus\n", np, sysconf(_SC_NPROCESSORS_ONLN));
        exit(77);
    }
    CHECK(!strcmp(got, want), "the node's cpus: %s, expected %s", got, want);
    CHECK(!(locus_rma_oversubscribed(r) && locus_rma_own_cpus(r)), "both oversubscribed and on cpus of its own");
}

int main(int argc, char **argv)
{
    long want_ops = 5000;
    uint64_t seed = 12345;
    const char *expect = NULL, *expect_cpus = NULL, *kill_mode = NULL, *kill_cmd = NULL;
    int victim = -1;
    double die_after = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--ops") && v)
            want_ops = atol(argv[++i]);
        else if (!strcmp(a, "--seed") && v)
            seed = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(a, "--expect") && v)
            expect = argv[++i];
        else if (!strcmp(a, "--expect-cpus") && v)
            expect_cpus = argv[++i];
        else if (!strcmp(a, "--kill-test") && v)
            kill_mode = argv[++i];
        else if (!strcmp(a, "--victim") && v)
            victim = atoi(argv[++i]);
        else if (!strcmp(a, "--kill-cmd") && v)
            kill_cmd = argv[++i];
        else if (!strcmp(a, "--die-after") && v)
            die_after = atof(argv[++i]);
        else if (!strcmp(a, "--quiet"))
            quiet = true;
        else if (!strcmp(a, "--expect-reg-full"))
            expect_reg_full = true;
        else {
            fprintf(stderr, "rma_check: unknown option %s\n", a);
            return 2;
        }
    }
    locus_rma_t *r;
    double t0 = now_s();
    locus_rma_attr_t attr;
    locus_rma_attr_init(&attr);
    locus_status_t st = locus_rma_attr_from_env(&attr);
    if (!st && kill_mode) /* the kill test times rma's fini apart from boot's */
        st = locus_boot_init(NULL, &attr.boot);
    if (!st)
        st = locus_rma_init(&attr, &r);
    if (st) {
        printf("rma_check: init failed: %s: %s\n", locus_strerror(st), locus_last_error());
        return 1;
    }
    me = locus_rma_rank(r);
    np = locus_rma_size(r);
    CHECK(np <= 1024, "at most 1024 ranks");
    double t_init = now_s() - t0;
    if (!quiet && me == 0)
        printf("rma_check: %d ranks, heap %llu B, init %.3f s; notes:\n%s", np,
               (unsigned long long)locus_rma_heap_size(r), t_init, locus_rma_notes(r));
    if (expect)
        for (int q = 0; q < np; q++)
            if (q != me)
                CHECK(locus_rma_is_local(r, q) == !strcmp(expect, "local"), "rank %d is %s, expected %s", q,
                      locus_rma_is_local(r, q) ? "local" : "reached by the NIC", expect);
    if (expect_cpus)
        cpus_test(r, expect_cpus);
    if (kill_mode)
        return kill_test(r, victim < 0 ? np - 1 : victim, !strcmp(kill_mode, "wait"), kill_cmd, die_after);
    errors_test(r);
    double t1 = now_s();
    long ops = data_test(r, seed, want_ops);
    double t2 = now_s();
    atomics_test(r, want_ops / 10 < 50 ? 50 : (int)(want_ops / 10 > 2000 ? 2000 : want_ops / 10));
    fence_test(r, 100);
    int same_malloc = 0;
    realloc_test(r, &same_malloc);
    region_test(r);
    errors_test(r);
    locus_rma_stats_t s;
    OK(locus_rma_stats(r, &s));
    CHECK(!expect_reg_full || s.reg_full > 0, "no transfer found the registration cache full (%llu through it)",
          (unsigned long long)s.reg_cache_gets);
    OK(locus_rma_barrier(r));
    printf("rma_check: rank %d: ok: %ld data operations verified in %.2f s, atomics, fence, realloc (malloc gave "
           "%s address), errors; local puts %llu gets %llu cpu amos %llu, nic puts %llu gets %llu amos %llu, inline "
           "%llu, bounce %llu, cache gets %llu, registrations %llu, cache full %llu\n",
           me, ops, t2 - t1, same_malloc ? "the same" : "another", (unsigned long long)s.puts_local,
           (unsigned long long)s.gets_local, (unsigned long long)s.amos_cpu, (unsigned long long)s.puts_nic,
           (unsigned long long)s.gets_nic, (unsigned long long)s.amos_nic, (unsigned long long)s.puts_inline,
           (unsigned long long)s.bounce, (unsigned long long)s.reg_cache_gets, (unsigned long long)s.registrations,
           (unsigned long long)s.reg_full);
    char job[64];
    snprintf(job, sizeof job, "%s", locus_boot_job(locus_rma_boot(r)));
    CHECK(!shm_left(job), "a /dev/shm object is left after init");
    OK(locus_rma_fini(r));
    long pin = status_kb("VmPin:");
    CHECK(pin <= 0, "%ld kB pinned after fini", pin);
    return 0;
}
