/* OpenSHMEM 1.5 for C: liblocus_shmem (locus's OpenSHMEM library, over
 * locus rma and the fixed heap).
 *
 * Build: locus-oshcc prog.c (or pkg-config --cflags --libs locus-shmem);
 * run: locus run -n N ./prog, or mpirun/prterun (PMIx).
 *
 * The typed, sized and context interfaces are generated from the type tables
 * below (X-macros: each table applies a macro to (TYPE, TYPENAME) pairs).
 * With C11 (and not C++), the type-generic interfaces of the spec are macros
 * over _Generic. The deprecated names older codes call (start_pes, _my_pe,
 * shmalloc, the _SHMEM_* constants, TYPE_fadd, TYPE_to_all, active-set
 * collectives ...) are declared too. Every routine also exists as pshmem_*
 * (the profiling interface, declared in <pshmem.h>): shmem_* are weak aliases
 * of them.
 *
 * Beyond 1.5: the routines 1.6 adds that codes call (team_ptr, pe_quiet,
 * ibget/ibput, signal_add/set, sessions, sum scans), and a few extensions of
 * other implementations that their programs call (signed bitwise AMOs and
 * reductions, below). In C++ the generic names are overloads (shmem_cxx.h). */
#ifndef LOCUS_SHMEM_H
#define LOCUS_SHMEM_H

#include <stddef.h>
#include <stdint.h>
#if !defined(__cplusplus)
#include <complex.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- constants */

#define SHMEM_MAJOR_VERSION 1
#define SHMEM_MINOR_VERSION 5
#define SHMEM_MAX_NAME_LEN 256
#define SHMEM_VENDOR_STRING "locus OpenSHMEM (liblocus_shmem 0.1)"

#define SHMEM_THREAD_SINGLE 0
#define SHMEM_THREAD_FUNNELED 1
#define SHMEM_THREAD_SERIALIZED 2
#define SHMEM_THREAD_MULTIPLE 3

#define SHMEM_CTX_SERIALIZED (1L << 0)
#define SHMEM_CTX_PRIVATE (1L << 1)
#define SHMEM_CTX_NOSTORE (1L << 2)

#define SHMEM_TEAM_NUM_CONTEXTS (1L << 0)

#define SHMEM_MALLOC_ATOMICS_REMOTE (1L << 0)
#define SHMEM_MALLOC_SIGNAL_REMOTE (1L << 1)

#define SHMEM_SIGNAL_SET 0
#define SHMEM_SIGNAL_ADD 1

#define SHMEM_CMP_EQ 0
#define SHMEM_CMP_NE 1
#define SHMEM_CMP_GT 2
#define SHMEM_CMP_GE 3
#define SHMEM_CMP_LT 4
#define SHMEM_CMP_LE 5

/* pSync/pWrk of the active-set collectives (the library keeps its own sync
 * state; pSync is only read back as the spec requires it to be set). */
#define SHMEM_SYNC_VALUE 0L
#define SHMEM_BARRIER_SYNC_SIZE 4
#define SHMEM_BCAST_SYNC_SIZE 4
#define SHMEM_COLLECT_SYNC_SIZE 4
#define SHMEM_REDUCE_SYNC_SIZE 4
#define SHMEM_ALLTOALL_SYNC_SIZE 4
#define SHMEM_ALLTOALLS_SYNC_SIZE 4
#define SHMEM_SYNC_SIZE 4
#define SHMEM_REDUCE_MIN_WRKDATA_SIZE 1

/* Deprecated spellings (still required). */
#define _SHMEM_MAJOR_VERSION SHMEM_MAJOR_VERSION
#define _SHMEM_MINOR_VERSION SHMEM_MINOR_VERSION
#define _SHMEM_MAX_NAME_LEN SHMEM_MAX_NAME_LEN
#define _SHMEM_VENDOR_STRING SHMEM_VENDOR_STRING
#define _SHMEM_SYNC_VALUE SHMEM_SYNC_VALUE
#define _SHMEM_BARRIER_SYNC_SIZE SHMEM_BARRIER_SYNC_SIZE
#define _SHMEM_BCAST_SYNC_SIZE SHMEM_BCAST_SYNC_SIZE
#define _SHMEM_COLLECT_SYNC_SIZE SHMEM_COLLECT_SYNC_SIZE
#define _SHMEM_REDUCE_SYNC_SIZE SHMEM_REDUCE_SYNC_SIZE
#define _SHMEM_ALLTOALL_SYNC_SIZE SHMEM_ALLTOALL_SYNC_SIZE
#define _SHMEM_ALLTOALLS_SYNC_SIZE SHMEM_ALLTOALLS_SYNC_SIZE
#define _SHMEM_REDUCE_MIN_WRKDATA_SIZE SHMEM_REDUCE_MIN_WRKDATA_SIZE
#define _SHMEM_CMP_EQ SHMEM_CMP_EQ
#define _SHMEM_CMP_NE SHMEM_CMP_NE
#define _SHMEM_CMP_GT SHMEM_CMP_GT
#define _SHMEM_CMP_GE SHMEM_CMP_GE
#define _SHMEM_CMP_LT SHMEM_CMP_LT
#define _SHMEM_CMP_LE SHMEM_CMP_LE

/* ---------------------------------------------------------------- handles */

/* Contexts and teams are pointers to distinct structures, so that the C11
 * generics tell them apart from each other and from buffers. */
typedef struct shmem_internal_ctx { long _opaque; } *shmem_ctx_t;
typedef struct shmem_internal_team { long _opaque; } *shmem_team_t;

extern struct shmem_internal_ctx shmem_internal_ctx_default;
extern struct shmem_internal_team shmem_internal_team_world;
extern struct shmem_internal_team shmem_internal_team_shared;
#define SHMEM_CTX_DEFAULT (&shmem_internal_ctx_default)
#define SHMEM_CTX_INVALID ((shmem_ctx_t)0)
#define SHMEM_TEAM_WORLD (&shmem_internal_team_world)
#define SHMEM_TEAM_SHARED (&shmem_internal_team_shared)
#define SHMEM_TEAM_INVALID ((shmem_team_t)0)

typedef struct {
    int num_contexts;
} shmem_team_config_t;

/* Sessions (1.6): hints about a batch of operations on a context. */
typedef struct {
    size_t total_ops;
} shmem_ctx_session_config_t;
#define SHMEM_CTX_SESSION_BATCH (1L << 0)
/* not in 1.6's option list, but its own session example passes it: a hint too */
#define SHMEM_CTX_SESSION_SAME_AMO (1L << 1)
#define SHMEM_CTX_SESSION_TOTAL_OPS (1L << 0)

#if defined(__GNUC__)
#define _LSHM_NORETURN __attribute__((noreturn))
#else
#define _LSHM_NORETURN
#endif

/* ---------------------------------------------------------------- type tables */

/* Standard RMA types (put, get, p, g, iput, iget, nbi, put_signal, broadcast,
 * collect, fcollect, alltoall, alltoalls). */
#define _LSHM_RMA_TYPES(X)                                                                         \
    X(float, float) X(double, double) X(long double, longdouble) X(char, char)                     \
    X(signed char, schar) X(short, short) X(int, int) X(long, long) X(long long, longlong)         \
    X(unsigned char, uchar) X(unsigned short, ushort) X(unsigned int, uint) X(unsigned long, ulong) \
    X(unsigned long long, ulonglong) X(int8_t, int8) X(int16_t, int16) X(int32_t, int32)           \
    X(int64_t, int64) X(uint8_t, uint8) X(uint16_t, uint16) X(uint32_t, uint32)                    \
    X(uint64_t, uint64) X(size_t, size) X(ptrdiff_t, ptrdiff)

/* Sized RMA: (bits, unused). */
#define _LSHM_SIZES(X) X(8, 1) X(16, 2) X(32, 4) X(64, 8) X(128, 16)

/* Standard AMO types (all AMOs), extended (fetch, set, swap), bitwise. */
#define _LSHM_AMO_STD_TYPES(X)                                                                     \
    X(int, int) X(long, long) X(long long, longlong) X(unsigned int, uint) X(unsigned long, ulong) \
    X(unsigned long long, ulonglong) X(int32_t, int32) X(int64_t, int64) X(uint32_t, uint32)       \
    X(uint64_t, uint64) X(size_t, size) X(ptrdiff_t, ptrdiff)
#define _LSHM_AMO_EXT_TYPES(X) _LSHM_AMO_STD_TYPES(X) X(float, float) X(double, double)
#define _LSHM_AMO_BIT_TYPES(X)                                                                     \
    X(unsigned int, uint) X(unsigned long, ulong) X(unsigned long long, ulonglong) X(int32_t, int32) \
    X(int64_t, int64) X(uint32_t, uint32) X(uint64_t, uint64) _LSHM_AMO_BIT_SIGNED_TYPES(X)
/* Not in 1.5's bitwise table: int, long and long long. Open MPI and OSSS
 * have them (and Open MPI's generics take them), so programs written for
 * those call shmem_int_atomic_and and the like; an extension, like theirs. */
#define _LSHM_AMO_BIT_SIGNED_TYPES(X) X(int, int) X(long, long) X(long long, longlong)

/* Point-to-point synchronization types (1.5), and the deprecated ones. */
#define _LSHM_P2P_TYPES(X)                                                                         \
    X(int, int) X(long, long) X(long long, longlong) X(unsigned int, uint) X(unsigned long, ulong) \
    X(unsigned long long, ulonglong) X(int32_t, int32) X(int64_t, int64) X(uint32_t, uint32)       \
    X(uint64_t, uint64) X(size_t, size) X(ptrdiff_t, ptrdiff)
#define _LSHM_P2P_OLD_TYPES(X) X(short, short) X(unsigned short, ushort)

/* Team reductions (1.5): bitwise, min/max, sum/prod. */
#define _LSHM_RED_BIT_TYPES(X)                                                                     \
    X(unsigned char, uchar) X(unsigned short, ushort) X(unsigned int, uint) X(unsigned long, ulong) \
    X(unsigned long long, ulonglong) X(int8_t, int8) X(int16_t, int16) X(int32_t, int32)           \
    X(int64_t, int64) X(uint8_t, uint8) X(uint16_t, uint16) X(uint32_t, uint32)                    \
    X(uint64_t, uint64) X(size_t, size)
#define _LSHM_RED_MINMAX_TYPES(X)                                                                  \
    X(char, char) X(signed char, schar) X(short, short) X(int, int) X(long, long)                  \
    X(long long, longlong) X(ptrdiff_t, ptrdiff) X(unsigned char, uchar) X(unsigned short, ushort) \
    X(unsigned int, uint) X(unsigned long, ulong) X(unsigned long long, ulonglong)                 \
    X(int8_t, int8) X(int16_t, int16) X(int32_t, int32) X(int64_t, int64) X(uint8_t, uint8)        \
    X(uint16_t, uint16) X(uint32_t, uint32) X(uint64_t, uint64) X(size_t, size) X(float, float)    \
    X(double, double) X(long double, longdouble)
/* The complex types: C99 _Complex, which GNU C++ compilers take as an
 * extension (__extension__ keeps -pedantic quiet), so C++ codes written for
 * Sandia OpenSHMEM that call the complex reductions build too; other C++
 * compilers get none (the spec allows leaving them out). */
#if !defined(__cplusplus)
typedef double _Complex _lshm_complexd;
typedef float _Complex _lshm_complexf;
#define _LSHM_COMPLEX_TYPES(X) X(_lshm_complexd, complexd) X(_lshm_complexf, complexf)
#elif defined(__GNUC__)
__extension__ typedef double _Complex _lshm_complexd;
__extension__ typedef float _Complex _lshm_complexf;
#define _LSHM_COMPLEX_TYPES(X) X(_lshm_complexd, complexd) X(_lshm_complexf, complexf)
#else
#define _LSHM_COMPLEX_TYPES(X)
#endif
#define _LSHM_RED_ARITH_TYPES(X) _LSHM_RED_MINMAX_TYPES(X) _LSHM_COMPLEX_TYPES(X)

/* Active-set reductions (deprecated TYPE_OP_to_all); the signed types are
 * also those of the team bitwise reductions' extension. */
#define _LSHM_TOALL_BIT_TYPES(X) X(short, short) X(int, int) X(long, long) X(long long, longlong)
#define _LSHM_RED_BIT_SIGNED_TYPES(X) _LSHM_TOALL_BIT_TYPES(X)
#define _LSHM_TOALL_MINMAX_TYPES(X)                                                                \
    _LSHM_TOALL_BIT_TYPES(X) X(float, float) X(double, double) X(long double, longdouble)
#define _LSHM_TOALL_ARITH_TYPES(X) _LSHM_TOALL_MINMAX_TYPES(X) _LSHM_COMPLEX_TYPES(X)

/* ---------------------------------------------------------------- setup, query */

void shmem_init(void);
int shmem_init_thread(int requested, int *provided);
void shmem_query_thread(int *provided);
void shmem_finalize(void);
void shmem_global_exit(int status) _LSHM_NORETURN;
int shmem_my_pe(void);
int shmem_n_pes(void);
int shmem_pe_accessible(int pe);
int shmem_addr_accessible(const void *addr, int pe);
void *shmem_ptr(const void *dest, int pe);
void shmem_info_get_version(int *major, int *minor);
void shmem_info_get_name(char *name);
void shmem_pcontrol(const int level, ...);

/* ---------------------------------------------------------------- memory */

void *shmem_malloc(size_t size);
void *shmem_malloc_with_hints(size_t size, long hints);
void *shmem_calloc(size_t count, size_t size);
void *shmem_align(size_t alignment, size_t size);
void *shmem_realloc(void *ptr, size_t size);
void shmem_free(void *ptr);

/* ---------------------------------------------------------------- teams, contexts */

int shmem_team_my_pe(shmem_team_t team);
int shmem_team_n_pes(shmem_team_t team);
int shmem_team_get_config(shmem_team_t team, long config_mask, shmem_team_config_t *config);
int shmem_team_translate_pe(shmem_team_t src_team, int src_pe, shmem_team_t dest_team);
int shmem_team_split_strided(shmem_team_t parent_team, int start, int stride, int size,
                             const shmem_team_config_t *config, long config_mask, shmem_team_t *new_team);
int shmem_team_split_2d(shmem_team_t parent_team, int xrange, const shmem_team_config_t *xaxis_config,
                        long xaxis_mask, shmem_team_t *xaxis_team, const shmem_team_config_t *yaxis_config,
                        long yaxis_mask, shmem_team_t *yaxis_team);
void shmem_team_destroy(shmem_team_t team);
int shmem_ctx_create(long options, shmem_ctx_t *ctx);
int shmem_team_create_ctx(shmem_team_t team, long options, shmem_ctx_t *ctx);
void shmem_ctx_destroy(shmem_ctx_t ctx);
int shmem_ctx_get_team(shmem_ctx_t ctx, shmem_team_t *team);

/* ---------------------------------------------------------------- RMA */

#define _LSHM_DECL_RMA(T, N)                                                                       \
    void shmem_##N##_put(T *dest, const T *source, size_t nelems, int pe);                         \
    void shmem_ctx_##N##_put(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems, int pe);    \
    void shmem_##N##_get(T *dest, const T *source, size_t nelems, int pe);                         \
    void shmem_ctx_##N##_get(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems, int pe);    \
    void shmem_##N##_put_nbi(T *dest, const T *source, size_t nelems, int pe);                     \
    void shmem_ctx_##N##_put_nbi(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems, int pe); \
    void shmem_##N##_get_nbi(T *dest, const T *source, size_t nelems, int pe);                     \
    void shmem_ctx_##N##_get_nbi(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems, int pe); \
    void shmem_##N##_p(T *dest, T value, int pe);                                                  \
    void shmem_ctx_##N##_p(shmem_ctx_t ctx, T *dest, T value, int pe);                             \
    T shmem_##N##_g(const T *source, int pe);                                                      \
    T shmem_ctx_##N##_g(shmem_ctx_t ctx, const T *source, int pe);                                 \
    void shmem_##N##_iput(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe); \
    void shmem_ctx_##N##_iput(shmem_ctx_t ctx, T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, \
                              size_t nelems, int pe);                                              \
    void shmem_##N##_iget(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe); \
    void shmem_ctx_##N##_iget(shmem_ctx_t ctx, T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, \
                              size_t nelems, int pe);                                              \
    void shmem_##N##_put_signal(T *dest, const T *source, size_t nelems, uint64_t *sig_addr,       \
                                uint64_t signal, int sig_op, int pe);                              \
    void shmem_ctx_##N##_put_signal(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems,      \
                                    uint64_t *sig_addr, uint64_t signal, int sig_op, int pe);      \
    void shmem_##N##_put_signal_nbi(T *dest, const T *source, size_t nelems, uint64_t *sig_addr,   \
                                    uint64_t signal, int sig_op, int pe);                          \
    void shmem_ctx_##N##_put_signal_nbi(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems,  \
                                        uint64_t *sig_addr, uint64_t signal, int sig_op, int pe);
_LSHM_RMA_TYPES(_LSHM_DECL_RMA)

#define _LSHM_DECL_SIZED(B, U)                                                                     \
    void shmem_put##B(void *dest, const void *source, size_t nelems, int pe);                      \
    void shmem_ctx_put##B(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe); \
    void shmem_get##B(void *dest, const void *source, size_t nelems, int pe);                      \
    void shmem_ctx_get##B(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe); \
    void shmem_put##B##_nbi(void *dest, const void *source, size_t nelems, int pe);                \
    void shmem_ctx_put##B##_nbi(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe); \
    void shmem_get##B##_nbi(void *dest, const void *source, size_t nelems, int pe);                \
    void shmem_ctx_get##B##_nbi(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe); \
    void shmem_iput##B(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe); \
    void shmem_ctx_iput##B(shmem_ctx_t ctx, void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, \
                           size_t nelems, int pe);                                                 \
    void shmem_iget##B(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe); \
    void shmem_ctx_iget##B(shmem_ctx_t ctx, void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, \
                           size_t nelems, int pe);                                                 \
    void shmem_put##B##_signal(void *dest, const void *source, size_t nelems, uint64_t *sig_addr,  \
                               uint64_t signal, int sig_op, int pe);                               \
    void shmem_ctx_put##B##_signal(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, \
                                   uint64_t *sig_addr, uint64_t signal, int sig_op, int pe);       \
    void shmem_put##B##_signal_nbi(void *dest, const void *source, size_t nelems, uint64_t *sig_addr, \
                                   uint64_t signal, int sig_op, int pe);                           \
    void shmem_ctx_put##B##_signal_nbi(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, \
                                       uint64_t *sig_addr, uint64_t signal, int sig_op, int pe);
_LSHM_SIZES(_LSHM_DECL_SIZED)

void shmem_putmem(void *dest, const void *source, size_t nelems, int pe);
void shmem_ctx_putmem(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe);
void shmem_getmem(void *dest, const void *source, size_t nelems, int pe);
void shmem_ctx_getmem(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe);
void shmem_putmem_nbi(void *dest, const void *source, size_t nelems, int pe);
void shmem_ctx_putmem_nbi(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe);
void shmem_getmem_nbi(void *dest, const void *source, size_t nelems, int pe);
void shmem_ctx_getmem_nbi(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe);
void shmem_putmem_signal(void *dest, const void *source, size_t nelems, uint64_t *sig_addr, uint64_t signal,
                         int sig_op, int pe);
void shmem_ctx_putmem_signal(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems,
                             uint64_t *sig_addr, uint64_t signal, int sig_op, int pe);
void shmem_putmem_signal_nbi(void *dest, const void *source, size_t nelems, uint64_t *sig_addr,
                             uint64_t signal, int sig_op, int pe);
void shmem_ctx_putmem_signal_nbi(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems,
                                 uint64_t *sig_addr, uint64_t signal, int sig_op, int pe);
uint64_t shmem_signal_fetch(const uint64_t *sig_addr);
uint64_t shmem_signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t cmp_value);

/* ---------------------------------------------------------------- AMO */

#define _LSHM_DECL_AMO_EXT(T, N)                                                                   \
    T shmem_##N##_atomic_fetch(const T *source, int pe);                                           \
    T shmem_ctx_##N##_atomic_fetch(shmem_ctx_t ctx, const T *source, int pe);                      \
    void shmem_##N##_atomic_set(T *dest, T value, int pe);                                         \
    void shmem_ctx_##N##_atomic_set(shmem_ctx_t ctx, T *dest, T value, int pe);                    \
    T shmem_##N##_atomic_swap(T *dest, T value, int pe);                                           \
    T shmem_ctx_##N##_atomic_swap(shmem_ctx_t ctx, T *dest, T value, int pe);                      \
    void shmem_##N##_atomic_fetch_nbi(T *fetch, const T *source, int pe);                          \
    void shmem_ctx_##N##_atomic_fetch_nbi(shmem_ctx_t ctx, T *fetch, const T *source, int pe);     \
    void shmem_##N##_atomic_swap_nbi(T *fetch, T *dest, T value, int pe);                          \
    void shmem_ctx_##N##_atomic_swap_nbi(shmem_ctx_t ctx, T *fetch, T *dest, T value, int pe);
_LSHM_AMO_EXT_TYPES(_LSHM_DECL_AMO_EXT)

#define _LSHM_DECL_AMO_STD(T, N)                                                                   \
    T shmem_##N##_atomic_compare_swap(T *dest, T cond, T value, int pe);                           \
    T shmem_ctx_##N##_atomic_compare_swap(shmem_ctx_t ctx, T *dest, T cond, T value, int pe);      \
    T shmem_##N##_atomic_fetch_inc(T *dest, int pe);                                               \
    T shmem_ctx_##N##_atomic_fetch_inc(shmem_ctx_t ctx, T *dest, int pe);                          \
    void shmem_##N##_atomic_inc(T *dest, int pe);                                                  \
    void shmem_ctx_##N##_atomic_inc(shmem_ctx_t ctx, T *dest, int pe);                             \
    T shmem_##N##_atomic_fetch_add(T *dest, T value, int pe);                                      \
    T shmem_ctx_##N##_atomic_fetch_add(shmem_ctx_t ctx, T *dest, T value, int pe);                 \
    void shmem_##N##_atomic_add(T *dest, T value, int pe);                                         \
    void shmem_ctx_##N##_atomic_add(shmem_ctx_t ctx, T *dest, T value, int pe);                    \
    void shmem_##N##_atomic_compare_swap_nbi(T *fetch, T *dest, T cond, T value, int pe);          \
    void shmem_ctx_##N##_atomic_compare_swap_nbi(shmem_ctx_t ctx, T *fetch, T *dest, T cond, T value, int pe); \
    void shmem_##N##_atomic_fetch_inc_nbi(T *fetch, T *dest, int pe);                              \
    void shmem_ctx_##N##_atomic_fetch_inc_nbi(shmem_ctx_t ctx, T *fetch, T *dest, int pe);         \
    void shmem_##N##_atomic_fetch_add_nbi(T *fetch, T *dest, T value, int pe);                     \
    void shmem_ctx_##N##_atomic_fetch_add_nbi(shmem_ctx_t ctx, T *fetch, T *dest, T value, int pe);
_LSHM_AMO_STD_TYPES(_LSHM_DECL_AMO_STD)

#define _LSHM_DECL_AMO_BIT(T, N)                                                                   \
    T shmem_##N##_atomic_fetch_and(T *dest, T value, int pe);                                      \
    T shmem_ctx_##N##_atomic_fetch_and(shmem_ctx_t ctx, T *dest, T value, int pe);                 \
    void shmem_##N##_atomic_and(T *dest, T value, int pe);                                         \
    void shmem_ctx_##N##_atomic_and(shmem_ctx_t ctx, T *dest, T value, int pe);                    \
    T shmem_##N##_atomic_fetch_or(T *dest, T value, int pe);                                       \
    T shmem_ctx_##N##_atomic_fetch_or(shmem_ctx_t ctx, T *dest, T value, int pe);                  \
    void shmem_##N##_atomic_or(T *dest, T value, int pe);                                          \
    void shmem_ctx_##N##_atomic_or(shmem_ctx_t ctx, T *dest, T value, int pe);                     \
    T shmem_##N##_atomic_fetch_xor(T *dest, T value, int pe);                                      \
    T shmem_ctx_##N##_atomic_fetch_xor(shmem_ctx_t ctx, T *dest, T value, int pe);                 \
    void shmem_##N##_atomic_xor(T *dest, T value, int pe);                                         \
    void shmem_ctx_##N##_atomic_xor(shmem_ctx_t ctx, T *dest, T value, int pe);                    \
    void shmem_##N##_atomic_fetch_and_nbi(T *fetch, T *dest, T value, int pe);                     \
    void shmem_ctx_##N##_atomic_fetch_and_nbi(shmem_ctx_t ctx, T *fetch, T *dest, T value, int pe); \
    void shmem_##N##_atomic_fetch_or_nbi(T *fetch, T *dest, T value, int pe);                      \
    void shmem_ctx_##N##_atomic_fetch_or_nbi(shmem_ctx_t ctx, T *fetch, T *dest, T value, int pe); \
    void shmem_##N##_atomic_fetch_xor_nbi(T *fetch, T *dest, T value, int pe);                     \
    void shmem_ctx_##N##_atomic_fetch_xor_nbi(shmem_ctx_t ctx, T *fetch, T *dest, T value, int pe);
_LSHM_AMO_BIT_TYPES(_LSHM_DECL_AMO_BIT)

/* Deprecated AMO names (before 1.4). */
#define _LSHM_DECL_AMO_OLD(T, N)                                                                   \
    T shmem_##N##_fadd(T *target, T value, int pe);                                                \
    T shmem_##N##_finc(T *target, int pe);                                                         \
    void shmem_##N##_add(T *target, T value, int pe);                                              \
    void shmem_##N##_inc(T *target, int pe);                                                       \
    T shmem_##N##_cswap(T *target, T cond, T value, int pe);                                       \
    T shmem_##N##_swap(T *target, T value, int pe);                                                \
    T shmem_##N##_fetch(const T *target, int pe);                                                  \
    void shmem_##N##_set(T *target, T value, int pe);
_LSHM_DECL_AMO_OLD(int, int)
_LSHM_DECL_AMO_OLD(long, long)
_LSHM_DECL_AMO_OLD(long long, longlong)
float shmem_float_swap(float *target, float value, int pe);
float shmem_float_fetch(const float *target, int pe);
void shmem_float_set(float *target, float value, int pe);
double shmem_double_swap(double *target, double value, int pe);
double shmem_double_fetch(const double *target, int pe);
void shmem_double_set(double *target, double value, int pe);
long shmem_swap(long *target, long value, int pe);

/* ---------------------------------------------------------------- point-to-point */

/* ivar arguments are declared volatile, as before 1.4, so that older codes
 * passing volatile pointers compile without warnings; plain pointers convert.
 * cmp_values of the _vector forms is TYPE *, as the 1.5 synopsis has it (not
 * const): a redeclaration or function pointer written from the spec matches. */
#define _LSHM_DECL_P2P(T, N)                                                                       \
    void shmem_##N##_wait_until(volatile T *ivar, int cmp, T cmp_value);                           \
    void shmem_##N##_wait_until_all(T *ivars, size_t nelems, const int *status, int cmp, T cmp_value); \
    size_t shmem_##N##_wait_until_any(T *ivars, size_t nelems, const int *status, int cmp, T cmp_value); \
    size_t shmem_##N##_wait_until_some(T *ivars, size_t nelems, size_t *indices, const int *status, int cmp, \
                                       T cmp_value);                                               \
    void shmem_##N##_wait_until_all_vector(T *ivars, size_t nelems, const int *status, int cmp,     \
                                           T *cmp_values);                                   \
    size_t shmem_##N##_wait_until_any_vector(T *ivars, size_t nelems, const int *status, int cmp,   \
                                             T *cmp_values);                                 \
    size_t shmem_##N##_wait_until_some_vector(T *ivars, size_t nelems, size_t *indices, const int *status, \
                                              int cmp, T *cmp_values);                       \
    int shmem_##N##_test(volatile T *ivar, int cmp, T cmp_value);                                  \
    int shmem_##N##_test_all(T *ivars, size_t nelems, const int *status, int cmp, T cmp_value);     \
    size_t shmem_##N##_test_any(T *ivars, size_t nelems, const int *status, int cmp, T cmp_value);  \
    size_t shmem_##N##_test_some(T *ivars, size_t nelems, size_t *indices, const int *status, int cmp, \
                                 T cmp_value);                                                     \
    int shmem_##N##_test_all_vector(T *ivars, size_t nelems, const int *status, int cmp, T *cmp_values); \
    size_t shmem_##N##_test_any_vector(T *ivars, size_t nelems, const int *status, int cmp,         \
                                       T *cmp_values);                                       \
    size_t shmem_##N##_test_some_vector(T *ivars, size_t nelems, size_t *indices, const int *status, int cmp, \
                                        T *cmp_values);
_LSHM_P2P_TYPES(_LSHM_DECL_P2P)
/* short and unsigned short: 1.5 keeps only their (deprecated) wait_until and
 * test; OpenSHMEM 1.6 gives them every form again, and codes written for it
 * (SOS's tests among them) call them, so all forms are here. */
_LSHM_P2P_OLD_TYPES(_LSHM_DECL_P2P)
/* Deprecated: wait while *ivar == value. */
void shmem_short_wait(volatile short *ivar, short value);
void shmem_int_wait(volatile int *ivar, int value);
void shmem_long_wait(volatile long *ivar, long value);
void shmem_longlong_wait(volatile long long *ivar, long long value);
void shmem_wait(volatile long *ivar, long value);
/* Deprecated untyped form (long); under C11 the generic macro below wins. */
void shmem_wait_until(volatile long *ivar, int cmp, long cmp_value);

/* ---------------------------------------------------------------- ordering */

void shmem_fence(void);
void shmem_ctx_fence(shmem_ctx_t ctx);
void shmem_quiet(void);
void shmem_ctx_quiet(shmem_ctx_t ctx);

/* ---------------------------------------------------------------- locks */

void shmem_set_lock(volatile long *lock);
void shmem_clear_lock(volatile long *lock);
int shmem_test_lock(volatile long *lock);

/* ---------------------------------------------------------------- collectives */

void shmem_barrier_all(void);
void shmem_sync_all(void);
int shmem_team_sync(shmem_team_t team);
/* Deprecated active-set barrier and sync. */
void shmem_barrier(int PE_start, int logPE_stride, int PE_size, long *pSync);
void shmem_sync(int PE_start, int logPE_stride, int PE_size, long *pSync);

#define _LSHM_DECL_COLL(T, N)                                                                      \
    int shmem_##N##_broadcast(shmem_team_t team, T *dest, const T *source, size_t nelems, int PE_root); \
    int shmem_##N##_collect(shmem_team_t team, T *dest, const T *source, size_t nelems);           \
    int shmem_##N##_fcollect(shmem_team_t team, T *dest, const T *source, size_t nelems);          \
    int shmem_##N##_alltoall(shmem_team_t team, T *dest, const T *source, size_t nelems);          \
    int shmem_##N##_alltoalls(shmem_team_t team, T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, \
                              size_t nelems);
_LSHM_RMA_TYPES(_LSHM_DECL_COLL)
int shmem_broadcastmem(shmem_team_t team, void *dest, const void *source, size_t nelems, int PE_root);
int shmem_collectmem(shmem_team_t team, void *dest, const void *source, size_t nelems);
int shmem_fcollectmem(shmem_team_t team, void *dest, const void *source, size_t nelems);
int shmem_alltoallmem(shmem_team_t team, void *dest, const void *source, size_t nelems);
int shmem_alltoallsmem(shmem_team_t team, void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,
                       size_t nelems);

#define _LSHM_DECL_RED(T, N, OP) int shmem_##N##_##OP##_reduce(shmem_team_t team, T *dest, const T *source, size_t nreduce);
#define _LSHM_DECL_RED_BIT(T, N) _LSHM_DECL_RED(T, N, and) _LSHM_DECL_RED(T, N, or) _LSHM_DECL_RED(T, N, xor)
#define _LSHM_DECL_RED_MM(T, N) _LSHM_DECL_RED(T, N, max) _LSHM_DECL_RED(T, N, min)
#define _LSHM_DECL_RED_AR(T, N) _LSHM_DECL_RED(T, N, sum) _LSHM_DECL_RED(T, N, prod)
_LSHM_RED_BIT_TYPES(_LSHM_DECL_RED_BIT)
/* Not in 1.5's table: and/or/xor reductions on short, int, long and long
 * long. Sandia OpenSHMEM and Open MPI 5 have them and programs call them
 * (shmem_int_and_reduce); an extension, like theirs. */
_LSHM_RED_BIT_SIGNED_TYPES(_LSHM_DECL_RED_BIT)
_LSHM_RED_MINMAX_TYPES(_LSHM_DECL_RED_MM)
_LSHM_RED_ARITH_TYPES(_LSHM_DECL_RED_AR)

/* Deprecated active-set collectives. */
#define _LSHM_DECL_ASET(B, U)                                                                      \
    void shmem_broadcast##B(void *dest, const void *source, size_t nelems, int PE_root, int PE_start, \
                            int logPE_stride, int PE_size, long *pSync);                           \
    void shmem_collect##B(void *dest, const void *source, size_t nelems, int PE_start, int logPE_stride, \
                          int PE_size, long *pSync);                                               \
    void shmem_fcollect##B(void *dest, const void *source, size_t nelems, int PE_start, int logPE_stride, \
                           int PE_size, long *pSync);                                              \
    void shmem_alltoall##B(void *dest, const void *source, size_t nelems, int PE_start, int logPE_stride, \
                           int PE_size, long *pSync);                                              \
    void shmem_alltoalls##B(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, \
                            int PE_start, int logPE_stride, int PE_size, long *pSync);
_LSHM_DECL_ASET(32, 4)
_LSHM_DECL_ASET(64, 8)

#define _LSHM_DECL_TOALL(T, N, OP)                                                                 \
    void shmem_##N##_##OP##_to_all(T *dest, const T *source, int nreduce, int PE_start, int logPE_stride, \
                                   int PE_size, T *pWrk, long *pSync);
#define _LSHM_DECL_TOALL_BIT(T, N) _LSHM_DECL_TOALL(T, N, and) _LSHM_DECL_TOALL(T, N, or) _LSHM_DECL_TOALL(T, N, xor)
#define _LSHM_DECL_TOALL_MM(T, N) _LSHM_DECL_TOALL(T, N, max) _LSHM_DECL_TOALL(T, N, min)
#define _LSHM_DECL_TOALL_AR(T, N) _LSHM_DECL_TOALL(T, N, sum) _LSHM_DECL_TOALL(T, N, prod)
_LSHM_TOALL_BIT_TYPES(_LSHM_DECL_TOALL_BIT)
_LSHM_TOALL_MINMAX_TYPES(_LSHM_DECL_TOALL_MM)
_LSHM_TOALL_ARITH_TYPES(_LSHM_DECL_TOALL_AR)

/* ---------------------------------------------------------------- deprecated */

void start_pes(int npes);
int _my_pe(void);
int _num_pes(void);
void *shmalloc(size_t size);
void shfree(void *ptr);
void *shrealloc(void *ptr, size_t size);
void *shmemalign(size_t alignment, size_t size);
void globalexit(int status) _LSHM_NORETURN;
/* Cache management (removed from the spec after 1.4): no-ops. */
void shmem_clear_cache_inv(void);
void shmem_set_cache_inv(void);
void shmem_clear_cache_line_inv(void *dest);
void shmem_set_cache_line_inv(void *dest);
void shmem_udcflush(void);
void shmem_udcflush_line(void *dest);

/* ---------------------------------------------------------------- OpenSHMEM 1.6 */
/* Routines 1.6 adds that codes written for it call: query_initialized,
 * team_ptr, pe_quiet, block-strided RMA, signal_add/set, sessions, scans. */
void shmem_query_initialized(int *initialized);
void *shmem_team_ptr(shmem_team_t team, const void *dest, int pe);
void shmem_pe_quiet(const int *target_pes, size_t npes);
void shmem_ctx_pe_quiet(shmem_ctx_t ctx, const int *target_pes, size_t npes);
void shmem_signal_add(uint64_t *sig_addr, uint64_t signal, int pe);
void shmem_ctx_signal_add(shmem_ctx_t ctx, uint64_t *sig_addr, uint64_t signal, int pe);
void shmem_signal_set(uint64_t *sig_addr, uint64_t signal, int pe);
void shmem_ctx_signal_set(shmem_ctx_t ctx, uint64_t *sig_addr, uint64_t signal, int pe);
void shmem_ctx_session_start(shmem_ctx_t ctx, long options, const shmem_ctx_session_config_t *config,
                             long config_mask);
void shmem_ctx_session_stop(shmem_ctx_t ctx);
/* ibput/ibget: nblocks blocks of bsize elements, block starts dst and sst
 * elements apart (each at least bsize). */
#define _LSHM_DECL_IB(T, N)                                                                        \
    void shmem_##N##_ibput(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t bsize,   \
                           size_t nblocks, int pe);                                                \
    void shmem_ctx_##N##_ibput(shmem_ctx_t ctx, T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, \
                               size_t bsize, size_t nblocks, int pe);                              \
    void shmem_##N##_ibget(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t bsize,   \
                           size_t nblocks, int pe);                                                \
    void shmem_ctx_##N##_ibget(shmem_ctx_t ctx, T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, \
                               size_t bsize, size_t nblocks, int pe);
_LSHM_RMA_TYPES(_LSHM_DECL_IB)
#define _LSHM_DECL_IB_SIZED(B, U)                                                                  \
    void shmem_ibput##B(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t bsize, \
                        size_t nblocks, int pe);                                                   \
    void shmem_ctx_ibput##B(shmem_ctx_t ctx, void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, \
                            size_t bsize, size_t nblocks, int pe);                                 \
    void shmem_ibget##B(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t bsize, \
                        size_t nblocks, int pe);                                                   \
    void shmem_ctx_ibget##B(shmem_ctx_t ctx, void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, \
                            size_t bsize, size_t nblocks, int pe);
_LSHM_SIZES(_LSHM_DECL_IB_SIZED)
#define _LSHM_DECL_SCAN(T, N)                                                                      \
    int shmem_##N##_sum_inscan(shmem_team_t team, T *dest, const T *source, size_t nelems);        \
    int shmem_##N##_sum_exscan(shmem_team_t team, T *dest, const T *source, size_t nelems);
_LSHM_RED_ARITH_TYPES(_LSHM_DECL_SCAN)

#ifdef __cplusplus
}
/* C++: overloads of the generic names (the C11 interfaces' counterpart). */
#if !defined(LSHM_NO_GENERICS)
#include "shmem_cxx.h"
#endif
#endif

/* ---------------------------------------------------------------- C11 generics */

#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L && !defined(__cplusplus) && \
    !defined(LSHM_NO_GENERICS)

/* A call whose argument types match no interface gets this function, which
 * does not exist: the program fails to link, naming it. */
void shmem_generic_interface_argument_type_not_supported(void);
#define _LSHM_NOTYPE shmem_generic_interface_argument_type_not_supported

#define _LSHM_A1(a, ...) a
#define _LSHM_A2(a, b, ...) b

/* Dispatch on a value's type (qualifiers dropped by lvalue conversion) over
 * the basic C types; fixed-width and size types are typedefs of these. */
#define _LSHM_BY_VALUE_RMA(v, pre, suf)                                                            \
    _Generic((v), float: pre##float##suf, double: pre##double##suf, long double: pre##longdouble##suf, \
             char: pre##char##suf, signed char: pre##schar##suf, short: pre##short##suf,           \
             int: pre##int##suf, long: pre##long##suf, long long: pre##longlong##suf,              \
             unsigned char: pre##uchar##suf, unsigned short: pre##ushort##suf,                     \
             unsigned int: pre##uint##suf, unsigned long: pre##ulong##suf,                         \
             unsigned long long: pre##ulonglong##suf, default: _LSHM_NOTYPE)
/* Dispatch on a pointer's type (T* or const T*): the context forms, where
 * the argument may not be a pointer at all in the branch not taken. */
#define _LSHM_PB(T, f) T *: f, const T *: f
#define _LSHM_BY_PTR_RMA(p, pre, suf)                                                              \
    _Generic((p), _LSHM_PB(float, pre##float##suf), _LSHM_PB(double, pre##double##suf),            \
             _LSHM_PB(long double, pre##longdouble##suf), _LSHM_PB(char, pre##char##suf),          \
             _LSHM_PB(signed char, pre##schar##suf), _LSHM_PB(short, pre##short##suf),             \
             _LSHM_PB(int, pre##int##suf), _LSHM_PB(long, pre##long##suf),                         \
             _LSHM_PB(long long, pre##longlong##suf), _LSHM_PB(unsigned char, pre##uchar##suf),    \
             _LSHM_PB(unsigned short, pre##ushort##suf), _LSHM_PB(unsigned int, pre##uint##suf),   \
             _LSHM_PB(unsigned long, pre##ulong##suf), _LSHM_PB(unsigned long long, pre##ulonglong##suf), \
             default: _LSHM_NOTYPE)
/* AMO types: standard (int, long, long long and unsigned), + float/double. */
#define _LSHM_BY_VALUE_AMO(v, pre, suf)                                                            \
    _Generic((v), int: pre##int##suf, long: pre##long##suf, long long: pre##longlong##suf,         \
             unsigned int: pre##uint##suf, unsigned long: pre##ulong##suf,                         \
             unsigned long long: pre##ulonglong##suf, default: _LSHM_NOTYPE)
#define _LSHM_BY_PTR_AMO(p, pre, suf)                                                              \
    _Generic((p), _LSHM_PB(int, pre##int##suf), _LSHM_PB(long, pre##long##suf),                    \
             _LSHM_PB(long long, pre##longlong##suf), _LSHM_PB(unsigned int, pre##uint##suf),      \
             _LSHM_PB(unsigned long, pre##ulong##suf), _LSHM_PB(unsigned long long, pre##ulonglong##suf), \
             default: _LSHM_NOTYPE)
#define _LSHM_BY_VALUE_EXT(v, pre, suf)                                                            \
    _Generic((v), float: pre##float##suf, double: pre##double##suf, int: pre##int##suf,            \
             long: pre##long##suf, long long: pre##longlong##suf, unsigned int: pre##uint##suf,    \
             unsigned long: pre##ulong##suf, unsigned long long: pre##ulonglong##suf,              \
             default: _LSHM_NOTYPE)
#define _LSHM_BY_PTR_EXT(p, pre, suf)                                                              \
    _Generic((p), _LSHM_PB(float, pre##float##suf), _LSHM_PB(double, pre##double##suf),            \
             _LSHM_PB(int, pre##int##suf), _LSHM_PB(long, pre##long##suf),                         \
             _LSHM_PB(long long, pre##longlong##suf), _LSHM_PB(unsigned int, pre##uint##suf),      \
             _LSHM_PB(unsigned long, pre##ulong##suf), _LSHM_PB(unsigned long long, pre##ulonglong##suf), \
             default: _LSHM_NOTYPE)
#define _LSHM_BY_VALUE_BIT(v, pre, suf)                                                            \
    _Generic((v), unsigned int: pre##uint##suf, unsigned long: pre##ulong##suf,                    \
             unsigned long long: pre##ulonglong##suf, int: pre##int##suf, long: pre##long##suf,   \
             long long: pre##longlong##suf, default: _LSHM_NOTYPE)
#define _LSHM_BY_PTR_BIT(p, pre, suf)                                                              \
    _Generic((p), _LSHM_PB(unsigned int, pre##uint##suf), _LSHM_PB(unsigned long, pre##ulong##suf), \
             _LSHM_PB(unsigned long long, pre##ulonglong##suf), _LSHM_PB(int, pre##int##suf),      \
             _LSHM_PB(long, pre##long##suf), _LSHM_PB(long long, pre##longlong##suf),              \
             default: _LSHM_NOTYPE)

/* The first argument decides: a context (then the element type comes from
 * the second argument, a pointer) or the first pointer itself. */
#define _LSHM_CTX_OR(KIND, pre, suf, ...)                                                          \
    _Generic((_LSHM_A1(__VA_ARGS__, 0)),                                                           \
             shmem_ctx_t: _LSHM_BY_PTR_##KIND(_LSHM_A2(__VA_ARGS__, 0), shmem_ctx_##pre, suf),     \
             default: _LSHM_BY_VALUE_##KIND(*(_LSHM_A1(__VA_ARGS__, 0)), shmem_##pre, suf))(__VA_ARGS__)

#define shmem_put(...) _LSHM_CTX_OR(RMA, , _put, __VA_ARGS__)
#define shmem_get(...) _LSHM_CTX_OR(RMA, , _get, __VA_ARGS__)
#define shmem_put_nbi(...) _LSHM_CTX_OR(RMA, , _put_nbi, __VA_ARGS__)
#define shmem_get_nbi(...) _LSHM_CTX_OR(RMA, , _get_nbi, __VA_ARGS__)
#define shmem_p(...) _LSHM_CTX_OR(RMA, , _p, __VA_ARGS__)
#define shmem_g(...) _LSHM_CTX_OR(RMA, , _g, __VA_ARGS__)
#define shmem_iput(...) _LSHM_CTX_OR(RMA, , _iput, __VA_ARGS__)
#define shmem_iget(...) _LSHM_CTX_OR(RMA, , _iget, __VA_ARGS__)
#define shmem_put_signal(...) _LSHM_CTX_OR(RMA, , _put_signal, __VA_ARGS__)
#define shmem_put_signal_nbi(...) _LSHM_CTX_OR(RMA, , _put_signal_nbi, __VA_ARGS__)
#define shmem_ibput(...) _LSHM_CTX_OR(RMA, , _ibput, __VA_ARGS__)
#define shmem_ibget(...) _LSHM_CTX_OR(RMA, , _ibget, __VA_ARGS__)

#define shmem_atomic_fetch(...) _LSHM_CTX_OR(EXT, , _atomic_fetch, __VA_ARGS__)
#define shmem_atomic_set(...) _LSHM_CTX_OR(EXT, , _atomic_set, __VA_ARGS__)
#define shmem_atomic_swap(...) _LSHM_CTX_OR(EXT, , _atomic_swap, __VA_ARGS__)
#define shmem_atomic_compare_swap(...) _LSHM_CTX_OR(AMO, , _atomic_compare_swap, __VA_ARGS__)
#define shmem_atomic_fetch_inc(...) _LSHM_CTX_OR(AMO, , _atomic_fetch_inc, __VA_ARGS__)
#define shmem_atomic_inc(...) _LSHM_CTX_OR(AMO, , _atomic_inc, __VA_ARGS__)
#define shmem_atomic_fetch_add(...) _LSHM_CTX_OR(AMO, , _atomic_fetch_add, __VA_ARGS__)
#define shmem_atomic_add(...) _LSHM_CTX_OR(AMO, , _atomic_add, __VA_ARGS__)
#define shmem_atomic_fetch_and(...) _LSHM_CTX_OR(BIT, , _atomic_fetch_and, __VA_ARGS__)
#define shmem_atomic_and(...) _LSHM_CTX_OR(BIT, , _atomic_and, __VA_ARGS__)
#define shmem_atomic_fetch_or(...) _LSHM_CTX_OR(BIT, , _atomic_fetch_or, __VA_ARGS__)
#define shmem_atomic_or(...) _LSHM_CTX_OR(BIT, , _atomic_or, __VA_ARGS__)
#define shmem_atomic_fetch_xor(...) _LSHM_CTX_OR(BIT, , _atomic_fetch_xor, __VA_ARGS__)
#define shmem_atomic_xor(...) _LSHM_CTX_OR(BIT, , _atomic_xor, __VA_ARGS__)
/* _nbi fetching AMOs: the first pointer is the fetch buffer (same type). */
#define shmem_atomic_fetch_nbi(...) _LSHM_CTX_OR(EXT, , _atomic_fetch_nbi, __VA_ARGS__)
#define shmem_atomic_swap_nbi(...) _LSHM_CTX_OR(EXT, , _atomic_swap_nbi, __VA_ARGS__)
#define shmem_atomic_compare_swap_nbi(...) _LSHM_CTX_OR(AMO, , _atomic_compare_swap_nbi, __VA_ARGS__)
#define shmem_atomic_fetch_inc_nbi(...) _LSHM_CTX_OR(AMO, , _atomic_fetch_inc_nbi, __VA_ARGS__)
#define shmem_atomic_fetch_add_nbi(...) _LSHM_CTX_OR(AMO, , _atomic_fetch_add_nbi, __VA_ARGS__)
#define shmem_atomic_fetch_and_nbi(...) _LSHM_CTX_OR(BIT, , _atomic_fetch_and_nbi, __VA_ARGS__)
#define shmem_atomic_fetch_or_nbi(...) _LSHM_CTX_OR(BIT, , _atomic_fetch_or_nbi, __VA_ARGS__)
#define shmem_atomic_fetch_xor_nbi(...) _LSHM_CTX_OR(BIT, , _atomic_fetch_xor_nbi, __VA_ARGS__)

/* Deprecated generic AMO names: the spec maps each onto its shmem_atomic_
 * name ("identical behavior and call signature"), so they take every type
 * those take (as Sandia OpenSHMEM's do), not only 1.3's int/long/long long. */
#define shmem_fadd(p, v, pe) shmem_atomic_fetch_add(p, v, pe)
#define shmem_finc(p, pe) shmem_atomic_fetch_inc(p, pe)
#define shmem_add(p, v, pe) shmem_atomic_add(p, v, pe)
#define shmem_inc(p, pe) shmem_atomic_inc(p, pe)
#define shmem_cswap(p, c, v, pe) shmem_atomic_compare_swap(p, c, v, pe)
#define shmem_swap(p, v, pe) shmem_atomic_swap(p, v, pe)
#define shmem_fetch(p, pe) shmem_atomic_fetch(p, pe)
#define shmem_set(p, v, pe) shmem_atomic_set(p, v, pe)

/* Point-to-point: on the ivar's value type (volatile or not). */
#define _LSHM_BY_VALUE_P2P(v, pre, suf)                                                            \
    _Generic((v), short: pre##short##suf, unsigned short: pre##ushort##suf, int: pre##int##suf,    \
             long: pre##long##suf, long long: pre##longlong##suf, unsigned int: pre##uint##suf,    \
             unsigned long: pre##ulong##suf, unsigned long long: pre##ulonglong##suf,              \
             default: _LSHM_NOTYPE)
#define shmem_wait_until(ivar, ...) _LSHM_BY_VALUE_P2P(*(ivar), shmem_, _wait_until)(ivar, __VA_ARGS__)
/* deprecated shmem_wait: the types that have a typed wait (OSSS's generic) */
#define shmem_wait(ivar, value)                                                                    \
    _Generic(*(ivar), short: shmem_short_wait, int: shmem_int_wait, long: shmem_long_wait,         \
             long long: shmem_longlong_wait, default: _LSHM_NOTYPE)(ivar, value)
#define shmem_test(ivar, ...) _LSHM_BY_VALUE_P2P(*(ivar), shmem_, _test)(ivar, __VA_ARGS__)
#define shmem_wait_until_all(ivars, ...) _LSHM_BY_VALUE_P2P(*(ivars), shmem_, _wait_until_all)(ivars, __VA_ARGS__)
#define shmem_wait_until_any(ivars, ...) _LSHM_BY_VALUE_P2P(*(ivars), shmem_, _wait_until_any)(ivars, __VA_ARGS__)
#define shmem_wait_until_some(ivars, ...) _LSHM_BY_VALUE_P2P(*(ivars), shmem_, _wait_until_some)(ivars, __VA_ARGS__)
#define shmem_wait_until_all_vector(ivars, ...) _LSHM_BY_VALUE_P2P(*(ivars), shmem_, _wait_until_all_vector)(ivars, __VA_ARGS__)
#define shmem_wait_until_any_vector(ivars, ...) _LSHM_BY_VALUE_P2P(*(ivars), shmem_, _wait_until_any_vector)(ivars, __VA_ARGS__)
#define shmem_wait_until_some_vector(ivars, ...) _LSHM_BY_VALUE_P2P(*(ivars), shmem_, _wait_until_some_vector)(ivars, __VA_ARGS__)
#define shmem_test_all(ivars, ...) _LSHM_BY_VALUE_P2P(*(ivars), shmem_, _test_all)(ivars, __VA_ARGS__)
#define shmem_test_any(ivars, ...) _LSHM_BY_VALUE_P2P(*(ivars), shmem_, _test_any)(ivars, __VA_ARGS__)
#define shmem_test_some(ivars, ...) _LSHM_BY_VALUE_P2P(*(ivars), shmem_, _test_some)(ivars, __VA_ARGS__)
#define shmem_test_all_vector(ivars, ...) _LSHM_BY_VALUE_P2P(*(ivars), shmem_, _test_all_vector)(ivars, __VA_ARGS__)
#define shmem_test_any_vector(ivars, ...) _LSHM_BY_VALUE_P2P(*(ivars), shmem_, _test_any_vector)(ivars, __VA_ARGS__)
#define shmem_test_some_vector(ivars, ...) _LSHM_BY_VALUE_P2P(*(ivars), shmem_, _test_some_vector)(ivars, __VA_ARGS__)

/* Team collectives: the team first, then the element type of dest. */
#define _LSHM_TEAM_COLL(suf, team, dest, ...) _LSHM_BY_VALUE_RMA(*(dest), shmem_, suf)(team, dest, __VA_ARGS__)
#define shmem_broadcast(team, dest, ...) _LSHM_TEAM_COLL(_broadcast, team, dest, __VA_ARGS__)
#define shmem_collect(team, dest, ...) _LSHM_TEAM_COLL(_collect, team, dest, __VA_ARGS__)
#define shmem_fcollect(team, dest, ...) _LSHM_TEAM_COLL(_fcollect, team, dest, __VA_ARGS__)
#define shmem_alltoall(team, dest, ...) _LSHM_TEAM_COLL(_alltoall, team, dest, __VA_ARGS__)
#define shmem_alltoalls(team, dest, ...) _LSHM_TEAM_COLL(_alltoalls, team, dest, __VA_ARGS__)

#define _LSHM_BY_VALUE_REDBIT(v, suf)                                                              \
    _Generic((v), unsigned char: shmem_uchar##suf, unsigned short: shmem_ushort##suf,             \
             unsigned int: shmem_uint##suf, unsigned long: shmem_ulong##suf,                      \
             unsigned long long: shmem_ulonglong##suf, signed char: shmem_int8##suf,               \
             short: shmem_short##suf, int: shmem_int##suf, long: shmem_long##suf,                  \
             long long: shmem_longlong##suf, default: _LSHM_NOTYPE)
#define _LSHM_BY_VALUE_REDNUM(v, suf)                                                              \
    _Generic((v), char: shmem_char##suf, signed char: shmem_schar##suf, short: shmem_short##suf,   \
             int: shmem_int##suf, long: shmem_long##suf, long long: shmem_longlong##suf,           \
             unsigned char: shmem_uchar##suf, unsigned short: shmem_ushort##suf,                   \
             unsigned int: shmem_uint##suf, unsigned long: shmem_ulong##suf,                       \
             unsigned long long: shmem_ulonglong##suf, float: shmem_float##suf,                    \
             double: shmem_double##suf, long double: shmem_longdouble##suf, default: _LSHM_NOTYPE)
#define _LSHM_BY_VALUE_REDAR(v, suf)                                                               \
    _Generic((v), char: shmem_char##suf, signed char: shmem_schar##suf, short: shmem_short##suf,   \
             int: shmem_int##suf, long: shmem_long##suf, long long: shmem_longlong##suf,           \
             unsigned char: shmem_uchar##suf, unsigned short: shmem_ushort##suf,                   \
             unsigned int: shmem_uint##suf, unsigned long: shmem_ulong##suf,                       \
             unsigned long long: shmem_ulonglong##suf, float: shmem_float##suf,                    \
             double: shmem_double##suf, long double: shmem_longdouble##suf,                        \
             double _Complex: shmem_complexd##suf, float _Complex: shmem_complexf##suf,            \
             default: _LSHM_NOTYPE)
#define shmem_and_reduce(team, dest, ...) _LSHM_BY_VALUE_REDBIT(*(dest), _and_reduce)(team, dest, __VA_ARGS__)
#define shmem_or_reduce(team, dest, ...) _LSHM_BY_VALUE_REDBIT(*(dest), _or_reduce)(team, dest, __VA_ARGS__)
#define shmem_xor_reduce(team, dest, ...) _LSHM_BY_VALUE_REDBIT(*(dest), _xor_reduce)(team, dest, __VA_ARGS__)
#define shmem_max_reduce(team, dest, ...) _LSHM_BY_VALUE_REDNUM(*(dest), _max_reduce)(team, dest, __VA_ARGS__)
#define shmem_min_reduce(team, dest, ...) _LSHM_BY_VALUE_REDNUM(*(dest), _min_reduce)(team, dest, __VA_ARGS__)
#define shmem_sum_reduce(team, dest, ...) _LSHM_BY_VALUE_REDAR(*(dest), _sum_reduce)(team, dest, __VA_ARGS__)
#define shmem_prod_reduce(team, dest, ...) _LSHM_BY_VALUE_REDAR(*(dest), _prod_reduce)(team, dest, __VA_ARGS__)

/* shmem_sync(team) (1.5) beside the deprecated shmem_sync(start, log, size, pSync). */
#define shmem_sync(...) \
    _Generic((_LSHM_A1(__VA_ARGS__, 0)), shmem_team_t: shmem_team_sync, default: shmem_sync)(__VA_ARGS__)

/* Signals; 1.6's generic signal_add/set take a context first. */
#define shmem_signal_wait_until shmem_signal_wait_until
#define shmem_signal_add(...)                                                                      \
    _Generic((_LSHM_A1(__VA_ARGS__, 0)), shmem_ctx_t: shmem_ctx_signal_add, default: shmem_signal_add)(__VA_ARGS__)
#define shmem_signal_set(...)                                                                      \
    _Generic((_LSHM_A1(__VA_ARGS__, 0)), shmem_ctx_t: shmem_ctx_signal_set, default: shmem_signal_set)(__VA_ARGS__)

/* Scans (1.6). */
#define shmem_sum_inscan(team, dest, ...) _LSHM_BY_VALUE_REDAR(*(dest), _sum_inscan)(team, dest, __VA_ARGS__)
#define shmem_sum_exscan(team, dest, ...) _LSHM_BY_VALUE_REDAR(*(dest), _sum_exscan)(team, dest, __VA_ARGS__)

#endif /* C11 generics */

#endif /* LOCUS_SHMEM_H */
