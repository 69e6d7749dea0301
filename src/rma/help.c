/* Shared copies: a large on-node put from this process's heap into another
 * heap of the node is posted as a descriptor in our control block and cut
 * into pieces; whoever takes a piece copies it — this process, and any peer
 * of the node that waits inside the library meanwhile (a barrier, a flush,
 * locus_rma_progress: the waits of shmem_wait_until, barrier_all and quiet
 * call it), which maps both heaps like we do. One core's copy is the limit
 * of a one-sided put (the target's cpu takes no part); a peer that waits
 * anyway is a second core (two cores moved 2.1-2.6x one core's 1-4 MiB
 * copies on a Zen 5 host).
 *
 * A descriptor's claim word holds its posting's generation (odd while
 * posted), its piece count and the next piece: a piece is taken by one CAS
 * on it, which fails once the posting is retired or replaced, so the fields
 * a taker reads afterwards are that posting's (the owner retires it only
 * when every taken piece is counted done). The owner takes what is left,
 * then waits for the pieces others took: a blocking put before it returns,
 * a _nbi one at the next flush, fence or barrier (or when the ring is full).
 * The first and last LOCUS_COPY_EDGE bytes are the owner's, each stored
 * once, the last ones after every piece (a target may poll a word there).
 * A copy is idempotent (the source may not change until then), so if a
 * taker dies with a piece, the owner copies everything itself once the
 * liveness check has seen the death. Not used when the node has more
 * processes than cpus (a taker preempted in the middle of a piece would
 * hold the owner for a time slice). */
#include "rma/rma_internal.h"

#include <locus/copy.h>

#include <stdatomic.h>
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>

#include "core/clock.h"

typedef struct {
    _Atomic uint64_t claim; /* gen:24 | npieces:20 | next:20; gen odd = posted */
    _Atomic uint64_t done;  /* pieces copied, of this posting */
    uint64_t src_off;       /* in the owner's heap */
    uint64_t dst_off;       /* in dst_rank's heap */
    uint64_t len, piece;
    int32_t dst_rank;
    uint32_t pad[3];
} help_slot_t;

typedef struct {
    _Atomic uint64_t posted; /* descriptors posted and not retired: takers skip a ring at 0 */
    uint64_t pad[7];
    help_slot_t slot[RMA_HELP_SLOTS];
} help_ring_t;

_Static_assert(sizeof(help_slot_t) == 64, "a descriptor is one cache line");
_Static_assert(RMA_CTRL_HELP + sizeof(help_ring_t) <= RMA_CTRL, "the ring fits the control block");

#define GEN_SHIFT 40
#define NP_SHIFT 20
#define FIELD 0xfffffull
#define MAX_PIECES 1024u
#define MIN_PIECE (32ull << 10)

static help_ring_t *ring_of(const locus_rma_t *r, int q)
{
    const rma_peer_t *p = &r->peers[q];
    return (help_ring_t *)(p->base + p->obj_size - RMA_CTRL + RMA_CTRL_HELP);
}

static uint64_t claim_word(uint64_t gen, uint64_t np, uint64_t next)
{
    return (gen & 0xffffffull) << GEN_SHIFT | (np & FIELD) << NP_SHIFT | (next & FIELD);
}

/* The next piece of a posted descriptor, or -1 (none left, or not posted). */
static int64_t take(help_slot_t *s)
{
    uint64_t c = atomic_load_explicit(&s->claim, memory_order_acquire);
    for (;;) {
        uint64_t gen = c >> GEN_SHIFT, np = (c >> NP_SHIFT) & FIELD, next = c & FIELD;
        if (!(gen & 1) || next >= np)
            return -1;
        if (atomic_compare_exchange_weak_explicit(&s->claim, &c, c + 1, memory_order_acq_rel,
                                                  memory_order_acquire))
            return (int64_t)next;
    }
}

/* Copy piece i of owner's descriptor s (its fields are stable: we hold a
 * piece), count it done. False if the fields make no sense (a corrupt
 * control block): the piece is counted, nothing is written. */
static bool copy_piece(locus_rma_t *r, int owner, help_slot_t *s, uint64_t i)
{
    uint64_t len = s->len, piece = s->piece, src_off = s->src_off, dst_off = s->dst_off;
    int dst = s->dst_rank;
    bool ok = dst >= 0 && dst < r->size && r->peers[dst].path == RMA_PATH_LOCAL && r->peers[dst].base &&
              piece && len <= r->user_size && src_off <= r->user_size - len && dst_off <= r->user_size - len &&
              i * piece < len;
    if (ok) {
        uint64_t off = i * piece, n = len - off < piece ? len - off : piece;
        /* the kernel the whole put would get (NT stores for a big one) */
        locus_copy_part(r->peers[dst].base + dst_off + off, r->peers[owner].base + src_off + off, n, len,
                        (locus_copy_hint_t)r->peers[dst].put_hint);
    }
    /* NT stores end with sfence; the locked add orders every store before it */
    atomic_fetch_add_explicit(&s->done, 1, memory_order_release);
    return ok;
}

/* The node's other processes, listed once: waits scan only them. */
void rma_help_init(locus_rma_t *r)
{
    r->help_on = false;
    if (!r->attr.help_min || r->oversubscribed)
        return;
    r->help_peers = calloc((size_t)r->size, sizeof *r->help_peers);
    r->nhelp_peers = 0;
    for (int q = 0; r->help_peers && q < r->size; q++)
        if (q != r->rank && r->peers[q].path == RMA_PATH_LOCAL && r->peers[q].base)
            r->help_peers[r->nhelp_peers++] = q;
    r->help_on = r->nhelp_peers > 0;
}

bool rma_help_wanted(const locus_rma_t *r, int rank, const void *src, size_t len)
{
    uintptr_t s = (uintptr_t)src, b = (uintptr_t)r->base;
    return r->help_on && len >= r->attr.help_min && rank != r->rank && r->peers[rank].path == RMA_PATH_LOCAL &&
           s >= b && s - b < r->user_size && len <= r->user_size - (s - b);
}

bool rma_help_take(locus_rma_t *r, int owner, int *k, uint64_t *piece)
{
    help_ring_t *ring = ring_of(r, owner);
    if (!atomic_load_explicit(&ring->posted, memory_order_acquire))
        return false;
    for (*k = 0; *k < RMA_HELP_SLOTS; (*k)++) {
        int64_t i = take(&ring->slot[*k]);
        if (i >= 0) {
            *piece = (uint64_t)i;
            return true;
        }
    }
    return false;
}

/* Others' descriptors: take and copy their pieces until none is left. */
void rma_help_others(locus_rma_t *r)
{
    if (!r->help_on)
        return;
    for (int j = 0; j < r->nhelp_peers; j++) {
        int q = r->help_peers[j], k;
        uint64_t i;
        while (rma_help_take(r, q, &k, &i)) {
            copy_piece(r, q, &ring_of(r, q)->slot[k], i);
            r->stats.help_pieces++;
        }
    }
}

/* Everything of descriptor k: the pieces nobody took, then the wait for the
 * others'; then it is retired. */
static void complete(locus_rma_t *r, int k)
{
    help_slot_t *s = &ring_of(r, r->rank)->slot[k];
    uint64_t np = (atomic_load_explicit(&s->claim, memory_order_relaxed) >> NP_SHIFT) & FIELD;
    int64_t i;
    uint64_t mine = 0;
    while ((i = take(s)) >= 0) {
        copy_piece(r, r->rank, s, (uint64_t)i);
        mine++;
    }
    unsigned spins = 0;
    uint64_t start = 0;
    while (atomic_load_explicit(&s->done, memory_order_acquire) < np) {
        if (++spins < 1024) {
            __builtin_ia32_pause();
            continue;
        }
        spins = 0;
        sched_yield(); /* a taker that lost its cpu may need ours */
        uint64_t now = lc_now_ns();
        start = start ? start : now;
        /* a taker that died holds its piece forever: the liveness check
         * names it, and the copy is done again here (idempotent; a third
         * process still copying a piece of it would write the same bytes,
         * late: the job has failed by then, every later call says so) */
        if (now - start > RMA_HELP_STUCK_NS && rma_liveness(r, true) != LOCUS_OK) {
            locus_copy(r->peers[s->dst_rank].base + s->dst_off, r->base + s->src_off, s->len,
                       (locus_copy_hint_t)r->peers[s->dst_rank].put_hint);
            break;
        }
    }
    uint32_t e = r->help_edge[k];
    if (e) /* the last bytes last, once */
        locus_copy_once(r->peers[s->dst_rank].base + s->dst_off + s->len, r->base + s->src_off + s->len, e);
    r->stats.puts_helped += mine < np;
    r->help_gen[k]++; /* even: retired */
    atomic_store_explicit(&s->claim, claim_word(r->help_gen[k], 0, 0), memory_order_release);
    atomic_fetch_sub_explicit(&ring_of(r, r->rank)->posted, 1, memory_order_release);
}

static void complete_oldest(locus_rma_t *r)
{
    int k = r->help_head;
    r->help_head = (r->help_head + 1) % RMA_HELP_SLOTS;
    r->help_count--;
    complete(r, k);
}

void rma_help_flush(locus_rma_t *r)
{
    while (r->help_count)
        complete_oldest(r);
}

void rma_help_put(locus_rma_t *r, int rank, uint64_t dst_off, const void *src, size_t len, bool blocking)
{
    if (r->help_count == RMA_HELP_SLOTS)
        complete_oldest(r);
    int k = (r->help_head + r->help_count) % RMA_HELP_SLOTS;
    help_slot_t *s = &ring_of(r, r->rank)->slot[k];
    /* the edges are the owner's, each byte stored once (a target may poll a
     * word there, see locus_copy_polled): the first now, the last when the
     * pieces are done; the pieces cover the middle */
    uint32_t edge = len >= 4 * LOCUS_COPY_EDGE ? LOCUS_COPY_EDGE : 0;
    if (edge)
        locus_copy_once(r->peers[rank].base + dst_off, src, edge);
    r->help_edge[k] = edge;
    src = (const char *)src + edge;
    dst_off += edge;
    len -= 2 * (size_t)edge;
    uint64_t piece = len / 16 > MIN_PIECE ? len / 16 : MIN_PIECE;
    if ((len + piece - 1) / piece > MAX_PIECES)
        piece = (len + MAX_PIECES - 1) / MAX_PIECES;
    piece = (piece + 4095) & ~4095ull; /* whole pages: no line written by two cores */
    s->src_off = (uint64_t)((const char *)src - r->base);
    s->dst_off = dst_off;
    s->len = len;
    s->piece = piece;
    s->dst_rank = rank;
    atomic_store_explicit(&s->done, 0, memory_order_relaxed);
    r->help_gen[k]++; /* odd: posted */
    atomic_store_explicit(&s->claim, claim_word(r->help_gen[k], (len + piece - 1) / piece, 0),
                          memory_order_release);
    atomic_fetch_add_explicit(&ring_of(r, r->rank)->posted, 1, memory_order_release);
    r->help_count++;
    r->stats.puts_local++;
    r->stats.bytes_local += len + 2 * (size_t)edge;
    if (blocking) {
        /* it is the newest: complete the older ones first keeps the FIFO */
        rma_help_flush(r);
    }
}
