/* Pairwise signal channels: the one synchronisation primitive every
 * collective, team split and barrier of this library is built on.
 *
 * The first bytes of every PE's heap hold, for each channel (a team's slot)
 * and each source PE, a mailbox that only that source writes: a count of
 * plain signals, a count of payload signals and two payload words. A
 * signal is one 8-byte store into the peer's mapped heap (release order
 * after the data it announces), or one 8-byte RDMA WRITE behind a fence to
 * another node; the receiver waits on its own memory. With a single writer
 * per word no atomics are needed, so the scheme is the same with the CPU
 * or the NIC as the atomicity agent, and counts never need resetting:
 * every signal sent on a (channel, pair) is consumed in the order it was
 * sent, which holds because members of a set call its collectives in the
 * same order.
 *
 * Payloads: at most two payload signals of one pair are ever unconsumed
 * (they are exchanged only all-to-all, where nobody starts the next
 * exchange before everybody sent in this one), so two words by parity do.
 *
 * Boxes for small collectives (the world, shared and active-set channels):
 * after the mailboxes, per channel and source PE, two buffers of LSHM_EAGER
 * bytes that only that source fills and an ack word that only that source
 * writes into its peer's copy. A sender puts its data n for a peer into the
 * peer's buffer n % 2 and signals; the peer reads it (into its dest, or
 * combines it) and acks n. The sender waits only before data n + 2, for ack
 * n: nobody waits for others to arrive, and nobody but its owner writes a
 * dest. Every pair sends and consumes in the order of the collectives,
 * which members of a set call in the same order. */
#include "shmem/shmem_internal.h"

#include "core/clock.h"

#include <stdlib.h>

typedef struct mbox {
    uint64_t arrive;   /* plain signals received from this source */
    uint64_t parrive;  /* payload signals received */
    uint64_t pay[2];   /* payload of payload-signal n at pay[n % 2] */
} mbox_t;

typedef struct bbox {
    uint64_t ack;  /* box data from me this source has consumed */
    uint64_t pad[7];
    unsigned char data[2][LSHM_EAGER]; /* box data n from this source at n % 2 */
} bbox_t;

#define BSLOTS 3 /* channels with boxes: LSHM_SLOT_WORLD, _SHARED, _ASET */
_Static_assert(LSHM_SLOT_WORLD == 0 && LSHM_SLOT_SHARED == 1 && LSHM_SLOT_ASET == 2,
               "the box channels are the first BSLOTS: a box is found by its slot");

static uint64_t psent_base, pcons_base; /* payload counters follow the plain ones */
static uint64_t *bsent, *bcons;         /* [bslot][peer] box data sent / consumed */

static size_t mbox_bytes(int npes) { return (size_t)LSHM_NSLOTS * (size_t)npes * sizeof(mbox_t); }

static size_t boxes_end(int npes) { return mbox_bytes(npes) + (size_t)BSLOTS * (size_t)npes * sizeof(bbox_t); }

/* Then one line whose first word its PE sets when it has passed
 * shmem_finalize's sync: from then on it sends no signal on any channel. */
size_t lshm_chan_bytes(int npes) { return boxes_end(npes) + 64; }

void lshm_chan_init(char *area)
{
    memset(area, 0, lshm_chan_bytes(lshm.npes));
    size_t n = (size_t)LSHM_NSLOTS * (size_t)lshm.npes, bn = (size_t)BSLOTS * (size_t)lshm.npes;
    /* [0, n) plain, [n, 2n) payload */
    lshm.sent = calloc(2 * n, sizeof(uint64_t));
    lshm.consumed = calloc(2 * n, sizeof(uint64_t));
    bsent = calloc(bn, sizeof(uint64_t));
    bcons = calloc(bn, sizeof(uint64_t));
    if (!lshm.sent || !lshm.consumed || !bsent || !bcons)
        lshm_fatal("shmem_init", "out of memory for %zu signal counters", 4 * n + 2 * bn);
    psent_base = pcons_base = n;
}

void lshm_chan_fini(void)
{
    free(lshm.sent);
    free(lshm.consumed);
    free(bsent);
    free(bcons);
    lshm.sent = lshm.consumed = bsent = bcons = NULL;
}

static inline size_t idx(int slot, int pe) { return (size_t)slot * (size_t)lshm.npes + (size_t)pe; }
/* My mailbox for source `src` on channel `slot` (in my heap). */
static inline mbox_t *my_box(int slot, int src) { return (mbox_t *)lshm.reg[LSHM_HEAP].base + idx(slot, src); }

/* `to`'s copy of my area at my_copy: its address in this process's mapping
 * of `to`'s heap, or NULL when `to` is reached through the NIC. */
static char *mapped_copy(int to, const void *my_copy)
{
    char *peer = lshm.reg[LSHM_HEAP].peer[to];
    return peer ? peer + ((const char *)my_copy - lshm.reg[LSHM_HEAP].base) : NULL;
}

/* The same bytes into `to`'s copy through the NIC (no order of its own). */
static void nic_store(const char *call, int to, const void *my_copy, const void *src, size_t bytes)
{
    lshm_lock();
    locus_status_t st = locus_rma_put(lshm.rma, to, (void *)my_copy, src, bytes);
    lshm_unlock();
    if (st)
        lshm_fatal_status(call, st, "signalling a PE of another node, or sending it a collective's data");
    __atomic_store_n(&lshm.nic_pending, true, __ATOMIC_RELAXED);
}

/* Store one word into `to`'s mailbox from me: mapped (release store) or a
 * NIC put behind a fence for the data before it. */
static void store_word(const char *call, int to, uint64_t *my_copy_of_word, uint64_t v, bool release)
{
    char *p = mapped_copy(to, my_copy_of_word);
    if (p) {
        __atomic_store_n((uint64_t *)p, v, release ? __ATOMIC_RELEASE : __ATOMIC_RELAXED);
        return;
    }
    if (release)
        lshm_fence();
    nic_store(call, to, my_copy_of_word, &v, sizeof v);
}

/* Copy bytes into `to`'s copy of my area at my_copy, unordered: the release
 * of the signal after it orders it. */
static void store_bytes(const char *call, int to, void *my_copy, const void *src, size_t bytes)
{
    char *p = mapped_copy(to, my_copy);
    if (p)
        memcpy(p, src, bytes);
    else
        nic_store(call, to, my_copy, src, bytes);
}

void lshm_chan_signal(const char *call, int slot, int to)
{
    uint64_t n = ++lshm.sent[idx(slot, to)];
    mbox_t *b = my_box(slot, lshm.me);
    store_word(call, to, &b->arrive, n, true);
}

static void payload_signal(const char *call, int slot, int to, uint64_t payload)
{
    uint64_t n = ++lshm.sent[psent_base + idx(slot, to)];
    mbox_t *b = my_box(slot, lshm.me);
    store_word(call, to, &b->pay[n % 2], payload, false);
    store_word(call, to, &b->parrive, n, true);
}

void lshm_chan_finished(void)
{
    __atomic_store_n((uint64_t *)(lshm.reg[LSHM_HEAP].base + boxes_end(lshm.npes)), 1, __ATOMIC_RELEASE);
}

/* A wait for `from`'s signal n on *count that can never end: `from` (on
 * this node) has passed shmem_finalize's sync, and its signals, which it
 * stored before that (release/acquire), do not reach n. The PEs called
 * different collectives (an extra barrier on one of them, say): say so
 * rather than hang (1.5 leaves the program erroneous). */
static void check_finished(const char *call, int from, const uint64_t *count, uint64_t n)
{
    const char *peer = lshm.reg[LSHM_HEAP].peer[from];
    if (!peer || !__atomic_load_n((const uint64_t *)(peer + boxes_end(lshm.npes)), __ATOMIC_ACQUIRE))
        return;
    if (__atomic_load_n(count, __ATOMIC_ACQUIRE) < n)
        lshm_fatal(call, "PE %d has finished (passed shmem_finalize) while this PE waits for it: the PEs did not call "
                   "the same collectives (a barrier or collective on some PEs only, or shmem_finalize on some "
                   "while others are in a collective)", from);
}

/* A start_pes PE that left main with a nonzero status waits in the implicit
 * finalize, which the spec makes collective, for PEs that may be waiting for
 * it instead (one PE's exit(1) on an error path): then the job never ends.
 * Say so once, after EXIT_NOTICE_S; the job goes on if they come. */
#define EXIT_NOTICE_S 10
static void exit_notice(int from)
{
    static uint64_t since;
    uint64_t now = lc_now_ns();
    if (!since)
        since = now;
    else if (since != UINT64_MAX && now - since > EXIT_NOTICE_S * 1000000000ull) {
        fprintf(stderr, "locus shmem: PE %d left main with status %d and has waited %d s in start_pes's implicit "
                "shmem_finalize (collective) for PE %d; if that PE waits for this one, the job cannot end "
                "(shmem_global_exit ends a job on an error)\n", lshm.me, lshm.exit_status, EXIT_NOTICE_S, from);
        since = UINT64_MAX;
    }
}

/* Wait until *count reaches n (from `from`'s stores into my heap). */
static void wait_count(const char *call, int from, const uint64_t *count, uint64_t n)
{
    unsigned spins = 0;
    while (__atomic_load_n(count, __ATOMIC_ACQUIRE) < n) {
        lshm_relax(call, &spins);
        if ((spins & 4095u) == 0) {
            check_finished(call, from, count, n);
            if (lshm.exit_status)
                exit_notice(from);
        }
    }
}

void lshm_chan_wait(const char *call, int slot, int from)
{
    uint64_t n = ++lshm.consumed[idx(slot, from)];
    wait_count(call, from, &my_box(slot, from)->arrive, n);
}

static uint64_t payload_wait(const char *call, int slot, int from)
{
    uint64_t n = ++lshm.consumed[pcons_base + idx(slot, from)];
    mbox_t *b = my_box(slot, from);
    wait_count(call, from, &b->parrive, n);
    return __atomic_load_n(&b->pay[n % 2], __ATOMIC_RELAXED);
}

bool lshm_chan_eager(int slot, size_t bytes) { return slot < BSLOTS && bytes <= LSHM_EAGER; }

/* My box for source `src` on box channel `slot` (in my heap, after the mailboxes). */
static inline bbox_t *my_bbox(int slot, int src)
{
    return (bbox_t *)(lshm.reg[LSHM_HEAP].base + mbox_bytes(lshm.npes)) + (size_t)slot * (size_t)lshm.npes + src;
}

void lshm_chan_box_send(const char *call, int slot, int to, const void *src, size_t bytes)
{
    uint64_t n = ++bsent[(size_t)slot * (size_t)lshm.npes + to];
    if (n > 2) /* buffer n % 2 held data n - 2: wait until `to` is done with it */
        wait_count(call, to, &my_bbox(slot, to)->ack, n - 2);
    store_bytes(call, to, my_bbox(slot, lshm.me)->data[n % 2], src, bytes);
    lshm_chan_signal(call, slot, to); /* release: after the data */
}

const void *lshm_chan_box_wait(const char *call, int slot, int from)
{
    lshm_chan_wait(call, slot, from);
    uint64_t n = bcons[(size_t)slot * (size_t)lshm.npes + from] + 1;
    return my_bbox(slot, from)->data[n % 2];
}

void lshm_chan_box_done(const char *call, int slot, int from)
{
    uint64_t n = ++bcons[(size_t)slot * (size_t)lshm.npes + from];
    store_word(call, from, &my_bbox(slot, lshm.me)->ack, n, true); /* release: after our loads of it */
}

void lshm_set_sync(const char *call, const lshm_set_t *s)
{
    for (int d = 1; d < s->size; d <<= 1) {
        int to = lshm_set_pe(s, (s->my_idx + d) % s->size);
        int from = lshm_set_pe(s, (s->my_idx - d % s->size + s->size) % s->size);
        lshm_chan_signal(call, s->slot, to);
        lshm_chan_wait(call, s->slot, from);
    }
}

void lshm_set_allgather64(const char *call, const lshm_set_t *s, uint64_t mine, uint64_t *all)
{
    for (int k = 1; k < s->size; k++)
        payload_signal(call, s->slot, lshm_set_pe(s, (s->my_idx + k) % s->size), mine);
    all[s->my_idx] = mine;
    for (int k = 1; k < s->size; k++) {
        int i = (s->my_idx - k + s->size) % s->size;
        all[i] = payload_wait(call, s->slot, lshm_set_pe(s, i));
    }
}

lshm_set_t lshm_team_set(const lshm_team_t *t)
{
    return (lshm_set_t){t->start, t->stride, t->size, t->my_idx, t->slot, t->pes};
}

lshm_set_t lshm_aset(const char *call, int start, int log_stride, int size)
{
    if (log_stride < 0 || log_stride > 30 || size < 1 || start < 0)
        lshm_fatal(call, "active set (PE_start %d, logPE_stride %d, PE_size %d): expected PE_start >= 0, "
                   "0 <= logPE_stride <= 30, PE_size >= 1", start, log_stride, size);
    int stride = 1 << log_stride;
    if ((int64_t)start + (int64_t)(size - 1) * stride >= lshm.npes)
        lshm_fatal(call, "active set (PE_start %d, logPE_stride %d, PE_size %d) runs past the last PE (%d)",
                   start, log_stride, size, lshm.npes - 1);
    int rel = lshm.me - start;
    if (rel < 0 || rel % stride || rel / stride >= size)
        lshm_fatal(call, "PE %d is not in the active set (PE_start %d, logPE_stride %d, PE_size %d) it called "
                   "the collective on", lshm.me, start, log_stride, size);
    return (lshm_set_t){start, stride, size, rel / stride, LSHM_SLOT_ASET, NULL};
}
