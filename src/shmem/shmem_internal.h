/* liblocus_shmem internals: the process-wide state, symmetric address
 * translation, the pairwise signal channels collectives are built on, and
 * the helpers every file of src/shmem shares.
 *
 * Layering: this library uses only the public API of liblocus (rma, boot,
 * copy, config); the OpenSHMEM names it exports are listed in
 * cmake/liblocus_shmem.map. Internal names are lshm_*. */
#ifndef LSHM_INTERNAL_H
#define LSHM_INTERNAL_H

#define LSHM_NO_GENERICS 1 /* the library defines the typed functions themselves */
#include <shmem.h>

#include <locus/boot.h>
#include <locus/copy.h>
#include <locus/config.h>
#include <locus/rma.h>

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define LSHM_API __attribute__((visibility("default")))

/* Define routine `name` (declared in shmem.h) as pshmem_<name>, the
 * profiling interface, with `name` a weak alias of it:
 *   LSHM_DEF(void, shmem_quiet, (void)) { ... } */
#define LSHM_DEF(ret, name, params)                                                       \
    __typeof__(name) p##name LSHM_API;                                                    \
    __typeof__(name) name __attribute__((weak, alias("p" #name))) LSHM_API;               \
    ret p##name params

/* Profiling names the library calls itself (defined with LSHM_DEF). */
void pshmem_finalize(void);
int pshmem_my_pe(void);
int pshmem_n_pes(void);
void pshmem_query_initialized(int *initialized);
void pshmem_global_exit(int status) __attribute__((noreturn));
void pshmem_free(void *ptr);
void *pshmem_realloc(void *ptr, size_t size);

/* ---- symmetric regions ---- */

enum { LSHM_HEAP = 0, LSHM_DATA = 1, LSHM_NREGIONS = 2 };

typedef struct lshm_region {
    char *base;    /* this PE's copy */
    uint64_t len;
    char **peer;   /* per PE: its copy mapped here (self: base), or NULL */
    int rma_id;    /* locus_rma region id for the data region (-1: none) */
} lshm_region_t;

/* ---- teams and contexts ---- */

#define LSHM_TEAM_MAGIC 0x7ea3u
#define LSHM_CTX_MAGIC 0xc7c7u
#define LSHM_NSLOTS 32 /* signal channels: world, shared, active sets, split teams */
enum { LSHM_SLOT_WORLD = 0, LSHM_SLOT_SHARED = 1, LSHM_SLOT_ASET = 2, LSHM_SLOT_FIRST_FREE = 3 };

typedef struct lshm_team {
    uint32_t magic;
    int start, stride, size; /* members: world PEs start + i*stride, i < size */
    int *pes;                /* or, when they are no progression, member i is pes[i] (owned; members.c) */
    int my_idx;
    int slot;                /* signal channel */
    shmem_team_config_t cfg;
    long cfg_mask;
    int nctx;                /* contexts created from it and not destroyed */
} lshm_team_t;

typedef struct lshm_ctx {
    uint32_t magic;
    lshm_team_t *team;
    long options;
} lshm_ctx_t;

/* ---- the process-wide state ---- */

typedef struct lshm_state {
    int init_count;          /* shmem_init calls not yet finalized */
    bool finalized;          /* the last shmem_finalize ran (calls now say so; a later init starts afresh) */
    bool start_pes;          /* initialized by start_pes: finalize at exit */
    bool exiting;            /* global_exit in progress */
    int exit_status;         /* nonzero: a start_pes PE in its implicit finalize, leaving with it */
    int me, npes;
    int thread_level;
    bool debug;              /* SHMEM_DEBUG: argument agreement checks, notes */
    bool oversubscribed;     /* more PEs on this node than CPUs: waits yield */
    bool spin_long;          /* one node, PEs on cpus of their own, THREAD_SINGLE: waits spin 1 ms first */
    bool cpu_amo;            /* the job's atomicity agent: CPU (one node) or NIC */
    uint64_t heap_align;     /* every PE's symmetric heap base is a multiple of this */
    bool nic_pending;        /* a locus rma operation (NIC, or a shared put) since the last quiet */
    bool rma_puts_pending;   /* a _nbi put through locus rma since the last quiet/fence */
    locus_boot_t *boot;
    locus_rma_t *rma;
    lshm_region_t reg[LSHM_NREGIONS];
    uint64_t reserve;        /* heap bytes kept by the library (channels), at its start */
    uint64_t *sent;          /* [slot][dst] signals sent (private) */
    uint64_t *consumed;      /* [slot][src] signals consumed (private) */
    uint32_t slots_used;     /* bitmap of channels in use on this PE */
    pthread_mutex_t lock;    /* serialises NIC calls under SHMEM_THREAD_MULTIPLE */
    bool mt;
    lshm_team_t world, shared;
    lshm_ctx_t default_ctx;
} lshm_state_t;

extern lshm_state_t lshm;

/* ---- error.c: bad input and failures end the job ---- */

/* Print "locus shmem: PE n: <call>: <message>" and tear the job down
 * (shmem_global_exit-style, status 1). */
void lshm_fatal(const char *call, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));
/* A failed locus call: its status and locus_last_error(). */
void lshm_fatal_status(const char *call, locus_status_t st, const char *what) __attribute__((noreturn));
/* The routine's name from __func__ ("pshmem_x" -> "shmem_x"). */
static inline const char *lshm_name(const char *func) { return func[0] == 'p' ? func + 1 : func; }
/* Every routine but init and the queries needs an initialized library. */
void lshm_require_init(const char *call);
/* -1, and under SHMEM_DEBUG a note (once): a query outside init..finalize. */
int lshm_query_uninit(const char *call);

/* ---- locking around liblocus's NIC paths (THREAD_MULTIPLE) ---- */

static inline void lshm_lock(void)
{
    if (lshm.mt)
        pthread_mutex_lock(&lshm.lock);
}
static inline void lshm_unlock(void)
{
    if (lshm.mt)
        pthread_mutex_unlock(&lshm.lock);
}

/* ---- xfer.c: translation, RMA engine, ordering ---- */

/* The region holding [sym, sym+len) on this PE, checked (fatal otherwise):
 * sets *off. */
int lshm_locate(const char *call, const void *sym, size_t len, int pe, uint64_t *off);
/* A world PE number, checked. */
static inline void lshm_check_pe(const char *call, int pe)
{
    if (pe < 0 || pe >= lshm.npes) {
        lshm_require_init(call);
        lshm_fatal(call, "PE %d out of range: the job has PEs 0..%d", pe, lshm.npes - 1);
    }
}
/* The address of pe's copy of [sym, sym+len) if it is mapped here, else NULL
 * (checked: fatal if not symmetric). */
static inline char *lshm_mapped(const char *call, const void *sym, size_t len, int pe)
{
    uint64_t off;
    int r = lshm_locate(call, sym, len, pe, &off);
    char *b = lshm.reg[r].peer[pe];
    return b ? b + off : NULL;
}
/* A collective's dest or source: symmetric, as the spec requires (fatal
 * otherwise, naming the call, this PE and the address). Checked at entry
 * because the small-size paths go through the channel boxes and would work
 * on any memory: a program must not pass at 8 bytes and fail at 64 KiB. */
static inline void lshm_check_sym(const char *call, const void *sym, size_t len)
{
    uint64_t off;
    if (len)
        (void)lshm_locate(call, sym, len, lshm.me, &off);
}
/* A team or context PE number -> world PE (fatal if out of range). */
int lshm_ctx_pe(const char *call, shmem_ctx_t ctx, int pe);
lshm_ctx_t *lshm_ctx(const char *call, shmem_ctx_t ctx);

void lshm_put(const char *call, void *dest, const void *src, size_t len, int pe, bool nbi);
/* Large puts between heaps of this node go through locus rma, which shares
 * the copy with a PE of the node that waits in the library meanwhile
 * (LOCUS_RMA_HELP); a _nbi one completes at the next quiet, fence or
 * barrier. Any other operation first completes them, so that puts to a PE
 * are applied in the order they were made. */
#define LSHM_RMA_PUT_MIN (64u << 10)
/* A put into another PE's heap mapped here: locus_copy_polled, NT stores
 * above the selector's threshold (out of line: the kernels' call anyway). */
void lshm_put_mapped(char *p, const void *src, size_t len);
/* The common put, inlined into the API routines: below LSHM_RMA_PUT_MIN
 * from this PE into another PE's heap mapped here, nothing of ours in
 * flight through locus rma; up to 2 * LOCUS_COPY_EDGE bytes stored right
 * here with locus_copy_once, longer ones by lshm_put_mapped, as lshm_put
 * would. False (nothing done) for anything else, which lshm_put then checks
 * and carries out. In a ping-pong the path between seeing the peer's flag
 * and storing ours is the latency: lshm_put's general path (PE check,
 * region search, ordering, copy choice) cost ~20 ns of a 60-80 ns one-way
 * trip on a Zen 4 host. */
static inline bool lshm_put_small(void *dest, const void *src, size_t len, int pe)
{
    const lshm_region_t *h = &lshm.reg[LSHM_HEAP];
    uint64_t off = (uint64_t)((uintptr_t)dest - (uintptr_t)h->base);
    if ((unsigned)pe >= (unsigned)lshm.npes || pe == lshm.me || len >= LSHM_RMA_PUT_MIN || off < lshm.reserve ||
        off >= h->len || len > h->len - off || __atomic_load_n(&lshm.rma_puts_pending, __ATOMIC_RELAXED))
        return false;
    char *p = h->peer[pe];
    if (!p)
        return false;
    if (len <= 2 * LOCUS_COPY_EDGE)
        locus_copy_once(p + off, src, len);
    else
        lshm_put_mapped(p + off, src, len);
    return true;
}
void lshm_get(const char *call, void *dest, const void *src, size_t len, int pe, bool nbi);
void lshm_iput(const char *call, void *dest, const void *src, ptrdiff_t dst, ptrdiff_t sst, size_t n,
               size_t esz, int pe);
void lshm_iget(const char *call, void *dest, const void *src, ptrdiff_t dst, ptrdiff_t sst, size_t n,
               size_t esz, int pe);
/* 1.6 block-strided transfers, put or get (xfer.c); nothing when bsize or
 * nblocks is 0. */
void lshm_iblock(const char *call, void *dest, const void *src, ptrdiff_t dst, ptrdiff_t sst, size_t bsize,
                 size_t nblocks, size_t esz, int pe, bool get);
void lshm_quiet(void);
void lshm_fence(void);
/* Complete _nbi puts that went through locus rma (shared copies) before any
 * other operation: puts to a PE stay in program order. */
void lshm_settle(void);
/* Drive the NIC and check peers (wait loops call it now and then). */
void lshm_progress(const char *call);

/* ---- amo.c ---- */

/* One AMO of width 4 or 8 on pe's copy of dest, by the job's agent. Returns
 * the fetched value (the old one) when `fetch`. */
uint64_t lshm_amo(const char *call, locus_rma_amo_op_t op, void *dest, size_t width, uint64_t operand,
                  uint64_t compare, int pe, bool fetch);

/* ---- p2p.c ---- */

/* Relax in a wait loop: pause, then yield when the node is oversubscribed or
 * the wait is long (spin_long: longer), nap when it is longer; progress the
 * NIC every so often. */
void lshm_relax(const char *call, unsigned *spins);
bool lshm_cmp_u64(int cmp, uint64_t v, uint64_t ref, int width, bool is_signed);

/* ---- chan.c: pairwise signals and set barriers ---- */

typedef struct lshm_set {
    int start, stride, size, my_idx, slot;
    const int *pes; /* a team's member list, or NULL (members.c) */
} lshm_set_t;

static inline int lshm_set_pe(const lshm_set_t *s, int idx)
{
    return s->pes ? s->pes[idx] : s->start + idx * s->stride;
}
lshm_set_t lshm_team_set(const lshm_team_t *t);
/* The active set (start, 2^log, size) (fatal if this PE is not in it or it
 * runs past the job). */
lshm_set_t lshm_aset(const char *call, int start, int log_stride, int size);

/* Tell world PE `to` (channel `slot`) one more event. Data put to `to`
 * before this is delivered before the signal. */
void lshm_chan_signal(const char *call, int slot, int to);
/* Wait for the next signal from world PE `from` on channel `slot`. */
void lshm_chan_wait(const char *call, int slot, int from);
/* After shmem_finalize's sync: this PE sends no more signals, and a peer on
 * this node still waiting for one stops with a message (chan.c). */
void lshm_chan_finished(void);
/* Boxes for small collectives (chan.c): does the channel have them and the
 * size fit; send to a peer's box; wait for the next data from a peer (a
 * pointer into my box, valid until done); done with it. */
#define LSHM_EAGER 256
bool lshm_chan_eager(int slot, size_t bytes);
void lshm_chan_box_send(const char *call, int slot, int to, const void *src, size_t bytes);
const void *lshm_chan_box_wait(const char *call, int slot, int from);
void lshm_chan_box_done(const char *call, int slot, int from);
/* Dissemination barrier over the set (no quiet). */
void lshm_set_sync(const char *call, const lshm_set_t *s);
/* Every member's 64-bit value, in set order (all[size]). */
void lshm_set_allgather64(const char *call, const lshm_set_t *s, uint64_t mine, uint64_t *all);
size_t lshm_chan_bytes(int npes);
void lshm_chan_init(char *area);
void lshm_chan_fini(void); /* the private counters */

/* ---- alloc.c: the deterministic symmetric allocator (private bookkeeping) ---- */

typedef struct lshm_alloc lshm_alloc_t;
lshm_alloc_t *lshm_alloc_create(uint64_t start, uint64_t end);
void lshm_alloc_destroy(lshm_alloc_t *a);
/* Offset of a block of `size` bytes aligned to `align` (power of two), or
 * UINT64_MAX when it does not fit. */
uint64_t lshm_alloc(lshm_alloc_t *a, uint64_t size, uint64_t align);
/* Size of the block at `off`, or 0 if no block starts there. */
uint64_t lshm_alloc_size(const lshm_alloc_t *a, uint64_t off);
/* Free the block at off; false if no block starts there. */
bool lshm_alloc_free(lshm_alloc_t *a, uint64_t off);
/* Grow or shrink in place if the space after it allows; false otherwise. */
bool lshm_alloc_resize(lshm_alloc_t *a, uint64_t off, uint64_t size);
uint64_t lshm_alloc_in_use(const lshm_alloc_t *a);
extern lshm_alloc_t *lshm_heap_alloc;

/* ---- globals.c ---- */

/* Find the executable's writable data (.data + .bss), share it with the
 * node's PEs, expose it to the NIC. Collective. */
void lshm_globals_init(void);
void lshm_globals_fini(void);

/* ---- env.c ---- */

typedef struct lshm_env {
    uint64_t heap_size; /* 0: locus's default (LOCUS_RMA_HEAP_SIZE) */
    const char *heap_var;
    bool info, version, debug;
} lshm_env_t;
/* SHMEM_* (then SMA_*) variables; fatal on a bad SHMEM_SYMMETRIC_SIZE. */
int lshm_env_read(lshm_env_t *env, char *err, size_t errlen);
/* SHMEM_DEBUG (or SMA_DEBUG) set: for checks made before init reads the rest. */
bool lshm_env_debug(void);
/* Parse the spec's size syntax ("3.1M", "2g", "1024"); false if invalid. */
bool lshm_parse_symmetric_size(const char *text, uint64_t *out);
void lshm_print_info(const lshm_env_t *env);

/* ---- members.c: a team's world PEs (a progression, or a list) ---- */

static inline int lshm_team_pe(const lshm_team_t *t, int idx)
{
    return t->pes ? t->pes[idx] : t->start + idx * t->stride;
}
/* The index of world PE w in t, or -1. */
int lshm_team_index(const lshm_team_t *t, int w);
/* A new team (slot 0, no config) of the world PEs w[0..n), n >= 1, in that
 * order; my_idx is world PE me's index or -1. NULL if out of memory. */
lshm_team_t *lshm_team_of(const int *w, int n, int me);
/* The team of parent's members start + i*stride, i < size (checked by the
 * caller), as lshm_team_of. */
lshm_team_t *lshm_team_sub(const lshm_team_t *parent, int start, int stride, int size, int me);
void lshm_team_free(lshm_team_t *t);

/* ---- team.c ---- */

lshm_team_t *lshm_team(const char *call, shmem_team_t t);
void lshm_teams_init(void);
void lshm_teams_fini(void);

/* ---- coll.c / reduce.c engines ---- */

void lshm_broadcast(const char *call, const lshm_set_t *s, void *dest, const void *src, size_t bytes, int root_idx,
                    bool write_root);
void lshm_collect(const char *call, const lshm_set_t *s, void *dest, const void *src, size_t bytes, bool fixed);
void lshm_alltoalls(const char *call, const lshm_set_t *s, void *dest, const void *src, ptrdiff_t dst,
                    ptrdiff_t sst, size_t nelems, size_t esz);

typedef enum { LSHM_OP_AND, LSHM_OP_OR, LSHM_OP_XOR, LSHM_OP_MAX, LSHM_OP_MIN, LSHM_OP_SUM, LSHM_OP_PROD } lshm_op_t;
/* combine(acc, in, n): acc[i] = acc[i] OP in[i] */
typedef void (*lshm_combine_fn)(void *acc, const void *in, size_t n);
void lshm_reduce(const char *call, const lshm_set_t *s, void *dest, const void *src, size_t n, size_t esz,
                 lshm_combine_fn fn);
/* Prefix combination: members up to and including this PE (inclusive) or
 * before it (exclusive; the first member gets zeros). */
void lshm_scan(const char *call, const lshm_set_t *s, void *dest, const void *src, size_t n, size_t esz,
               lshm_combine_fn fn, bool inclusive);

#endif
