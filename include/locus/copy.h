/* locus copy: memcpy-compatible copy kernels and a selector that chooses
 * ordinary or non-temporal (NT) stores and prefetchnta loads by size, hint and
 * cache topology (L3 size, cores sharing it, whether the peer shares it).
 *
 * Contract: dst and src must not overlap (checked in debug builds, i.e. when
 * the library is built without NDEBUG: LOCUS_ERR_INVALID). NULL is accepted
 * when len is 0. Every kernel that issued NT stores ends with `sfence`, so a
 * store the caller makes after the call (e.g. publishing a flag with release
 * semantics) cannot become visible before the copied data.
 *
 * Thresholds, from the strongest source to the weakest: LOCUS_COPY_NT_MIN /
 * LOCUS_COPY_NT_MIN_FAR (environment), the calibration file written by
 * `locus bench copy --calibrate` through locus_copy_calibration_save
 * (LOCUS_COPY_CALIBRATION, default
 * $XDG_CACHE_HOME/locus/copy.conf or ~/.cache/locus/copy.conf; applied only if
 * it was measured on an L3 of the same size and sharing), then the topology:
 *   nt_min     = 3/4 of the copier's share of its L3 (L3 size / cpus sharing it):
 *                from this total length source and destination cannot both
 *                stay cached, so NT stores and prefetchnta loads are used
 *                whatever the hint (they also spare the copier's other data);
 *   nt_min_far = 1/4 of that share: with NT_DEST (NT_SOURCE) and a peer that
 *                does not share the copier's L3, the destination (source) lines
 *                are of no use in this L3, so NT is used from this length. An
 *                unknown peer (locus_copy, or peer_cpu -1) trusts the hint; a
 *                peer known to share the L3 ignores it below nt_min (the reader
 *                would have found the lines in the shared L3).
 * The CPU vendor plays no part. */
#ifndef LOCUS_COPY_H
#define LOCUS_COPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <locus/status.h>
#include <locus/topo.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    LOCUS_COPY_HINT_NONE = 0,
    LOCUS_COPY_HINT_NT_DEST = 1,   /* the writer will not read dst again (copy-in to shm) */
    LOCUS_COPY_HINT_NT_SOURCE = 2, /* src will not be reused (copy-out of shm) */
    LOCUS_COPY_HINT_NT_BOTH = 3,
} locus_copy_hint_t;

/* Copy len bytes with the process-wide selector (created on first use from
 * this machine's topology, the calling CPU, no peer information). */
LOCUS_API locus_status_t locus_copy(void *dst, const void *src, size_t len, locus_copy_hint_t hint);

/* One piece of a larger transfer of total_len bytes (total_len >= len): the
 * kernel is chosen by total_len, so every piece of a large message uses the
 * same kind of store. */
LOCUS_API locus_status_t locus_copy_part(void *dst, const void *src, size_t len, size_t total_len,
                                         locus_copy_hint_t hint);

/* Internal to the inline fast path below: per hint, the length under which
 * the selector's choice is plain memcpy. 0 until the process-wide selector
 * exists, and always 0 when a kernel is forced or the library is a debug
 * build (so every call reaches the checks). */
LOCUS_API extern size_t locus_copy_memcpy_below_[4];

/* Below this many bytes no kernel ever beats memcpy (every crossover is at
 * hundreds of KiB or more): the inline path compares with a constant, not a
 * loaded threshold. At 256 B that load cost 9 % of the copy on a Xeon (0.91
 * of glibc; 1.00 with the constant). LOCUS_COPY_KERNEL and debug-build
 * overlap checks therefore apply from this size on (or through the library
 * function itself: `(locus_copy)(...)`, LOCUS_COPY_NO_INLINE). */
#define LOCUS_COPY_MEMCPY_ALWAYS_BELOW_ 2048u

/* Small copies must cost what memcpy costs: an extra call level alone costs
 * ~1.4 ns here (40 % of a 64 B memcpy), so the fast path is inlined into the
 * caller and calls memcpy directly. Define LOCUS_COPY_NO_INLINE to always
 * call the library functions. */
#if !defined(LOCUS_COPY_NO_INLINE) && defined(__GNUC__)
static inline __attribute__((always_inline)) locus_status_t
locus_copy_inline_(void *dst, const void *src, size_t len, size_t total_len, locus_copy_hint_t hint)
{
    /* Small copies: one expression without short-circuits (&, not &&), so
     * that in a caller's loop with invariant pointers and length the compiler
     * hoists all of it into one flag and one test-and-branch stays per call.
     * With && (or with the pointer tests shared by the next test) it kept two
     * flags, and in a loop with five live values the destination went to the
     * stack; the reload per call could wait on the previous copy's stores to
     * the same low address bits (4K aliasing): 256 B-2 KiB copies moved by
     * -15..+5 % with the buffers' offsets (research/probes/copy_alias_probe.c). */
    if (__builtin_expect((dst != NULL) & (src != NULL) & ((unsigned)hint < 4u) & (len <= total_len) &
                             (total_len < LOCUS_COPY_MEMCPY_ALWAYS_BELOW_),
                         1)) {
        memcpy(dst, src, len);
        return LOCUS_OK;
    }
    /* Larger ones below the loaded threshold. The empty asm keeps these
     * pointer tests from merging with the ones above into a second hoisted
     * flag (they run only for copies of 2 KiB and more, on registers the call
     * needs anyway). */
    uintptr_t d_ = (uintptr_t)dst, s_ = (uintptr_t)src;
    __asm__ volatile("" : "+r"(d_), "+r"(s_));
    if (__builtin_expect(d_ != 0 && s_ != 0 && (unsigned)hint < 4u && len <= total_len &&
                             total_len < __atomic_load_n(&locus_copy_memcpy_below_[(unsigned)hint],
                                                         __ATOMIC_RELAXED),
                         1)) {
        memcpy((void *)d_, (const void *)s_, len);
        return LOCUS_OK;
    }
    return (locus_copy_part)(dst, src, len, total_len, hint);
}
#define locus_copy(dst, src, len, hint) locus_copy_inline_((dst), (src), (len), (len), (hint))
#define locus_copy_part(dst, src, len, total_len, hint) \
    locus_copy_inline_((dst), (src), (len), (total_len), (hint))
#endif

/* A copy of at most 32 bytes with no call at all (two overlapping moves of
 * the largest power of two not above n): for payloads that are the whole
 * message of a latency-bound exchange, where even memcpy's dispatch costs as
 * much as the rest of the send. */
static inline __attribute__((always_inline)) void locus_copy_tiny(void *dst, const void *src, size_t n)
{
    unsigned char *d = (unsigned char *)dst;
    const unsigned char *s = (const unsigned char *)src;
    if (n >= 16) {
        uint64_t a[2], b[2];
        memcpy(a, s, 16);
        memcpy(b, s + n - 16, 16);
        memcpy(d, a, 16);
        memcpy(d + n - 16, b, 16);
    } else if (n >= 8) {
        uint64_t a, b;
        memcpy(&a, s, 8);
        memcpy(&b, s + n - 8, 8);
        memcpy(d, &a, 8);
        memcpy(d + n - 8, &b, 8);
    } else if (n >= 4) {
        uint32_t a, b;
        memcpy(&a, s, 4);
        memcpy(&b, s + n - 4, 4);
        memcpy(d, &a, 4);
        memcpy(d + n - 4, &b, 4);
    } else if (n) {
        unsigned char a = s[0], b = s[n / 2], c = s[n - 1];
        d[0] = a;
        d[n / 2] = b;
        d[n - 1] = c;
    }
}

/* A copy that stores every byte of dst once, each naturally aligned word of
 * up to 8 bytes with one store: for memory another process may poll while
 * the copy lands (the target of a one-sided put waiting on a word of it).
 * memcpy and locus_copy_tiny move short lengths as two overlapping moves,
 * so a word could be stored twice, and a reader that saw the first store
 * and changed the word (reset a flag, answered) could have its change undone
 * by the second. Meant for short lengths: it moves 16 bytes at a time. */
static inline __attribute__((always_inline)) void locus_copy_once(void *dst, const void *src, size_t n)
{
    unsigned char *d = (unsigned char *)dst;
    const unsigned char *s = (const unsigned char *)src;
    if (n && ((uintptr_t)d & 1)) { *d = *s; d += 1; s += 1; n -= 1; }
    if (n >= 2 && ((uintptr_t)d & 2)) { memcpy(d, s, 2); d += 2; s += 2; n -= 2; }
    if (n >= 4 && ((uintptr_t)d & 4)) { memcpy(d, s, 4); d += 4; s += 4; n -= 4; }
    while (n >= 16) { /* d is 8-aligned here unless n was too short to align it */
        memcpy(d, s, 16);
        d += 16; s += 16; n -= 16;
        __asm__ volatile("" : "+r"(d), "+r"(s)); /* stays 16-byte moves, never a memcpy call */
    }
    if (n >= 8) { memcpy(d, s, 8); d += 8; s += 8; n -= 8; }
    if (n >= 4) { memcpy(d, s, 4); d += 4; s += 4; n -= 4; }
    if (n >= 2) { memcpy(d, s, 2); d += 2; s += 2; n -= 2; }
    if (n) *d = *s;
}

/* The bytes at each end of a polled copy that go through locus_copy_once. */
#define LOCUS_COPY_EDGE 64u

/* locus_copy for memory its owner may poll (a put's target): up to
 * 2 * LOCUS_COPY_EDGE bytes through locus_copy_once; longer copies write
 * their first and last LOCUS_COPY_EDGE bytes that way, the last ones after
 * the rest (and after the kernel's closing sfence), so a flag in the first
 * or last word is stored once and the last word lands last. Words in the
 * middle may still be stored twice (the kernels' own edges). */
static inline __attribute__((always_inline)) void locus_copy_polled(void *dst, const void *src, size_t n,
                                                                  locus_copy_hint_t hint)
{
    unsigned char *d = (unsigned char *)dst;
    const unsigned char *s = (const unsigned char *)src;
    if (n <= 2 * LOCUS_COPY_EDGE) {
        locus_copy_once(d, s, n);
        return;
    }
    locus_copy_once(d, s, LOCUS_COPY_EDGE);
    locus_copy(d + LOCUS_COPY_EDGE, s + LOCUS_COPY_EDGE, n - 2 * LOCUS_COPY_EDGE, hint);
    locus_copy_once(d + n - LOCUS_COPY_EDGE, s + n - LOCUS_COPY_EDGE, LOCUS_COPY_EDGE);
}

/* ---------- kernels (tests, benchmarks, forcing) ---------- */

/* Kernels are numbered 0..locus_copy_num_kernels()-1; names: "libc" (glibc
 * memcpy), "movsb" (rep movsb), "sse2", "avx2", "avx512" (vector loops), and
 * the same ISAs with "-nt" (NT stores), "-pf" (prefetchnta loads) or "-ntpf"
 * (both), e.g. "avx2-nt". */
LOCUS_API int locus_copy_num_kernels(void);
/* Name of kernel k, or NULL if k is out of range. */
LOCUS_API const char *locus_copy_kernel_name(int k);
/* Index of the kernel with this name, or -1. */
LOCUS_API int locus_copy_kernel_find(const char *name);
/* True if this CPU (and LOCUS_COPY_ISA) allows kernel k. */
LOCUS_API bool locus_copy_kernel_available(int k);
/* Properties of kernel k (false for out-of-range k). */
LOCUS_API bool locus_copy_kernel_nt_dest(int k);
LOCUS_API bool locus_copy_kernel_nt_source(int k);
/* Run kernel k directly (same contract as locus_copy); LOCUS_ERR_UNSUPPORTED
 * if this CPU lacks its instructions. */
LOCUS_API locus_status_t locus_copy_kernel(int k, void *dst, const void *src, size_t len);

/* What kernel k is. */
typedef struct locus_copy_kernel_info {
    const char *name;   /* "avx2-nt" */
    const char *family; /* "libc", "movsb", "sse2", "avx2", "avx512": the loop; the kernels
                           of one family differ only in nt_dest / nt_source */
    const char *isa;    /* instructions it needs: "base", "erms", "sse2", "avx2", "avx512" */
    bool nt_dest;       /* non-temporal stores (the kernel ends with sfence) */
    bool nt_source;     /* prefetchnta loads */
    bool available;     /* this CPU and LOCUS_COPY_ISA allow it (locus_copy_kernel_available) */
} locus_copy_kernel_info_t;
/* Fill *out for kernel k; LOCUS_ERR_INVALID for k outside 0..locus_copy_num_kernels()-1.
 * The strings are static. */
LOCUS_API locus_status_t locus_copy_kernel_info(int k, locus_copy_kernel_info_t *out);
/* The kernel of kernel k's family with these properties (e.g. k = "avx2-ntpf",
 * true, false -> "avx2-nt"), or -1 (k out of range, or no such variant: libc
 * and movsb have none). */
LOCUS_API int locus_copy_kernel_variant(int k, bool nt_dest, bool nt_source);
/* Kernel k's function itself, for benchmark loops that must time the kernel
 * alone: no argument checks at all (the caller keeps locus_copy's contract).
 * NULL if k is out of range or this CPU lacks its instructions. */
typedef void (*locus_copy_fn_t)(void *dst, const void *src, size_t len);
LOCUS_API locus_copy_fn_t locus_copy_kernel_fn(int k);

/* ---------- selector contexts ---------- */

typedef struct locus_copy_ctx locus_copy_ctx_t;

/* What a context decided, and why. */
typedef struct locus_copy_params {
    uint64_t l3_size;        /* bytes of the copier's L3 */
    int      l3_cpus;        /* cpus sharing it */
    locus_topo_source_t l3_source;
    int      cpu, peer_cpu;  /* -1: unknown */
    int      peer_shares_l3; /* 1 yes, 0 no, -1 unknown (the hint is trusted: as no) */
    uint64_t nt_min;         /* NT from this total length, whatever the hint */
    uint64_t nt_min_far;     /* NT_DEST/NT_SOURCE with a peer on another L3 */
    const char *nt_min_origin;     /* "topology", "calibration <path>", "LOCUS_COPY_NT_MIN" */
    const char *nt_min_far_origin;
    int      forced_kernel;  /* -1, or the kernel LOCUS_COPY_KERNEL/_force imposes */
    int      regular, nt, pf, ntpf; /* kernel used for each kind of copy */
    uint64_t libc_from;      /* from this total length glibc memcpy (its own NT stores
                                won the self-test's race past its threshold); UINT64_MAX never */
} locus_copy_params_t;

/* A selector for copies made on `cpu` (-1: the calling thread's current cpu)
 * whose other end runs on `peer_cpu` (-1: unknown). `cpu` must be one of the
 * topology's (this process's) cpus; `peer_cpu` may lie outside them (another
 * rank's core): its L3 is then taken from sysfs when sysfs describes the same
 * L3, else unknown. The cpus sharing the L3 are counted by the hardware
 * (sysfs), not by this process's affinity, when sysfs agrees with the
 * topology. Reads LOCUS_COPY_* and the calibration file; bad values give
 * LOCUS_ERR_INVALID naming them. */
LOCUS_API locus_status_t locus_copy_ctx_create(const locus_topo_t *topo, int cpu, int peer_cpu,
                                               locus_copy_ctx_t **out);
LOCUS_API void locus_copy_ctx_destroy(locus_copy_ctx_t *ctx);
/* The process-wide context behind locus_copy() (created on first use). */
LOCUS_API locus_status_t locus_copy_default_ctx(locus_copy_ctx_t **out);
LOCUS_API locus_status_t locus_copy_ctx_params(const locus_copy_ctx_t *ctx, locus_copy_params_t *out);
/* Fallbacks taken while creating ctx, one per line ("" if none). */
LOCUS_API const char *locus_copy_ctx_notes(const locus_copy_ctx_t *ctx);
/* Kernel index the selector picks for a transfer of total_len bytes with this
 * hint, or -1 (with locus_last_error) for an unknown hint. */
LOCUS_API int locus_copy_ctx_select(const locus_copy_ctx_t *ctx, size_t total_len,
                                    locus_copy_hint_t hint);
/* Always use kernel k (benchmarks, tests); k = -1 restores the selector. */
LOCUS_API locus_status_t locus_copy_ctx_force(locus_copy_ctx_t *ctx, int k);
/* locus_copy_part through this context. */
LOCUS_API locus_status_t locus_copy_ctx_copy(const locus_copy_ctx_t *ctx, void *dst, const void *src,
                                             size_t len, size_t total_len, locus_copy_hint_t hint);

/* Default calibration file path (LOCUS_COPY_CALIBRATION or the cache path);
 * "" when disabled ("none"). Returns buf. */
LOCUS_API const char *locus_copy_calibration_path(char *buf, size_t len);

/* A measured NT crossover (what `locus bench copy --calibrate` finds), as the
 * calibration file holds it. */
typedef struct locus_copy_calibration {
    uint64_t l3_size;    /* bytes of the L3 it was measured on (the file applies only there) */
    int      l3_cpus;    /* cpus sharing that L3 */
    uint64_t nt_min;     /* NT stores + prefetchnta from this total length */
    uint64_t nt_min_far; /* 0: not measured (the topology's value stays) */
    int      nt_kernel;  /* the family's "-nt" kernel the selector should use, or -1 (keep its own) */
} locus_copy_calibration_t;
/* Write cal as the calibration file at path (NULL: locus_copy_calibration_path()),
 * creating missing directories; contexts created afterwards (new processes)
 * read it. LOCUS_ERR_INVALID for a zero l3_size/l3_cpus/nt_min or an
 * nt_kernel that is not an NT-store-only kernel, or when no path is
 * configured; LOCUS_ERR_SYSTEM if it cannot be written. */
LOCUS_API locus_status_t locus_copy_calibration_save(const char *path, const locus_copy_calibration_t *cal);

/* The selector's self-test, run now: where NT stores beat glibc memcpy on
 * this machine and which NT kernel wins (what LOCUS_COPY_SELFTEST=auto
 * measures once per machine at the first copy of >= 1 MiB; see
 * docs/ARCHITECTURE.md, copy). Medians of `reps` (1..16) interleaved rounds.
 * Needs ~128 MiB for a moment; LOCUS_ERR_NO_MEMORY if less than 512 MiB is
 * available. `save`: also write it where the library reads it (the cache
 * ~/.cache/locus/copy-selftest.conf). */
typedef struct locus_copy_selftest {
    int kernel;                 /* NT kernel for copies >= nt_min; -1: glibc at every size */
    uint64_t nt_min;            /* UINT64_MAX: NT never won by the margin */
    int nsizes;
    uint64_t sizes[8];          /* ascending, 1 MiB .. 64 MiB */
    double glibc_gbps[8];       /* 0: not measured (above the first size NT lost at) */
    double nt_gbps[8];          /* of `kernel`'s family winner */
    int ncandidates;
    int candidates[8];          /* NT kernels raced at the largest size ... */
    double candidate_gbps[8];   /* ... and their GB/s there */
} locus_copy_selftest_t;
LOCUS_API locus_status_t locus_copy_selftest(int reps, bool save, locus_copy_selftest_t *out);

#ifdef __cplusplus
}
#endif
#endif
