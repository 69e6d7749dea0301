/* <shmem_cxx.h>, included by <shmem.h> in C++: overloads of the generic
 * names (shmem_put, shmem_atomic_add, shmem_wait_until, shmem_sum_reduce, …)
 * for C++, where the spec's C11 _Generic interfaces do not exist. The spec
 * defines the generic names for C11 only; Sandia OpenSHMEM gives C++ these
 * overloads, and C++ codes written for it call them. 1.6's ibput/ibget,
 * sum_inscan/exscan and the context forms of signal_add/set are here too. Each overload calls the
 * typed routine of its element type, so the two are the same call.
 *
 * Only the basic C++ types get overloads: the fixed-width and size typedefs
 * are the same types (int32_t is int), and overloading on both would
 * redefine a function. Not here: overloads for the complex reductions (C99
 * _Complex is a GNU extension in C++; their typed names are declared) and the
 * long forms that the C API already declares with these
 * exact parameters (shmem_wait_until(volatile long *, int, long), the
 * deprecated untyped shmem_wait(volatile long *, long) and shmem_swap(long *,
 * long, int)). */
#ifndef LOCUS_SHMEM_CXX_H
#define LOCUS_SHMEM_CXX_H

/* Basic-type tables: (type, the typed routines' name part). */
#define _LSHM_CXX_RMA_TYPES(X)                                                                     \
    X(float, float) X(double, double) X(long double, longdouble) X(char, char)                     \
    X(signed char, schar) X(short, short) X(int, int) X(long, long) X(long long, longlong)         \
    X(unsigned char, uchar) X(unsigned short, ushort) X(unsigned int, uint)                        \
    X(unsigned long, ulong) X(unsigned long long, ulonglong)
#define _LSHM_CXX_AMO_TYPES(X)                                                                     \
    X(int, int) X(long, long) X(long long, longlong) X(unsigned int, uint)                         \
    X(unsigned long, ulong) X(unsigned long long, ulonglong)
#define _LSHM_CXX_EXT_TYPES(X) _LSHM_CXX_AMO_TYPES(X) X(float, float) X(double, double)
#define _LSHM_CXX_P2P_TYPES(X)                                                                     \
    X(short, short) X(unsigned short, ushort) X(int, int) X(long, long) X(long long, longlong)     \
    X(unsigned int, uint) X(unsigned long, ulong) X(unsigned long long, ulonglong)
#define _LSHM_CXX_REDBIT_TYPES(X)                                                                  \
    X(unsigned char, uchar) X(unsigned short, ushort) X(unsigned int, uint)                        \
    X(unsigned long, ulong) X(unsigned long long, ulonglong) X(signed char, int8)                  \
    X(short, short) X(int, int) X(long, long) X(long long, longlong)
#define _LSHM_CXX_REDNUM_TYPES(X)                                                                  \
    X(char, char) X(signed char, schar) X(short, short) X(int, int) X(long, long)                  \
    X(long long, longlong) X(unsigned char, uchar) X(unsigned short, ushort)                       \
    X(unsigned int, uint) X(unsigned long, ulong) X(unsigned long long, ulonglong)                 \
    X(float, float) X(double, double) X(long double, longdouble)

/* One overload: NAME(PARAMS) calls TYPED(ARGS). */
#define _LSHM_CXX(R, NAME, TYPED, PARAMS, ARGS)                                                    \
    static inline R NAME PARAMS { return TYPED ARGS; }
/* The same with a context first. */
#define _LSHM_CXX2(R, NAME, N, SUF, PARAMS, ARGS)                                                  \
    _LSHM_CXX(R, NAME, shmem_##N##SUF, PARAMS, ARGS)                                               \
    _LSHM_CXX(R, NAME, shmem_ctx_##N##SUF, (shmem_ctx_t ctx, _LSHM_CXX_UNPAREN PARAMS),            \
              (ctx, _LSHM_CXX_UNPAREN ARGS))
#define _LSHM_CXX_UNPAREN(...) __VA_ARGS__

/* ---- RMA, signals */
#define _LSHM_CXX_RMA(T, N)                                                                        \
    _LSHM_CXX2(void, shmem_put, N, _put, (T * d, const T *s, size_t n, int pe), (d, s, n, pe))     \
    _LSHM_CXX2(void, shmem_get, N, _get, (T * d, const T *s, size_t n, int pe), (d, s, n, pe))     \
    _LSHM_CXX2(void, shmem_put_nbi, N, _put_nbi, (T * d, const T *s, size_t n, int pe), (d, s, n, pe)) \
    _LSHM_CXX2(void, shmem_get_nbi, N, _get_nbi, (T * d, const T *s, size_t n, int pe), (d, s, n, pe)) \
    _LSHM_CXX2(void, shmem_p, N, _p, (T * d, T v, int pe), (d, v, pe))                             \
    _LSHM_CXX2(T, shmem_g, N, _g, (const T *s, int pe), (s, pe))                                   \
    _LSHM_CXX2(void, shmem_iput, N, _iput,                                                         \
               (T * d, const T *s, ptrdiff_t dst, ptrdiff_t sst, size_t n, int pe),                \
               (d, s, dst, sst, n, pe))                                                            \
    _LSHM_CXX2(void, shmem_iget, N, _iget,                                                         \
               (T * d, const T *s, ptrdiff_t dst, ptrdiff_t sst, size_t n, int pe),                \
               (d, s, dst, sst, n, pe))                                                            \
    _LSHM_CXX2(void, shmem_put_signal, N, _put_signal,                                             \
               (T * d, const T *s, size_t n, uint64_t *sig, uint64_t signal, int op, int pe),      \
               (d, s, n, sig, signal, op, pe))                                                     \
    _LSHM_CXX2(void, shmem_put_signal_nbi, N, _put_signal_nbi,                                     \
               (T * d, const T *s, size_t n, uint64_t *sig, uint64_t signal, int op, int pe),      \
               (d, s, n, sig, signal, op, pe))                                                     \
    _LSHM_CXX2(void, shmem_ibput, N, _ibput,                                                       \
               (T * d, const T *s, ptrdiff_t dst, ptrdiff_t sst, size_t b, size_t nb, int pe),     \
               (d, s, dst, sst, b, nb, pe))                                                        \
    _LSHM_CXX2(void, shmem_ibget, N, _ibget,                                                       \
               (T * d, const T *s, ptrdiff_t dst, ptrdiff_t sst, size_t b, size_t nb, int pe),     \
               (d, s, dst, sst, b, nb, pe))
_LSHM_CXX_RMA_TYPES(_LSHM_CXX_RMA)

/* ---- atomics */
#define _LSHM_CXX_EXT(T, N)                                                                        \
    _LSHM_CXX2(T, shmem_atomic_fetch, N, _atomic_fetch, (const T *s, int pe), (s, pe))             \
    _LSHM_CXX2(void, shmem_atomic_set, N, _atomic_set, (T * d, T v, int pe), (d, v, pe))           \
    _LSHM_CXX2(T, shmem_atomic_swap, N, _atomic_swap, (T * d, T v, int pe), (d, v, pe))            \
    _LSHM_CXX2(void, shmem_atomic_fetch_nbi, N, _atomic_fetch_nbi, (T * f, const T *s, int pe),    \
               (f, s, pe))                                                                         \
    _LSHM_CXX2(void, shmem_atomic_swap_nbi, N, _atomic_swap_nbi, (T * f, T * d, T v, int pe),      \
               (f, d, v, pe))
_LSHM_CXX_EXT_TYPES(_LSHM_CXX_EXT)

#define _LSHM_CXX_AMO(T, N)                                                                        \
    _LSHM_CXX2(T, shmem_atomic_compare_swap, N, _atomic_compare_swap, (T * d, T c, T v, int pe),   \
               (d, c, v, pe))                                                                      \
    _LSHM_CXX2(T, shmem_atomic_fetch_inc, N, _atomic_fetch_inc, (T * d, int pe), (d, pe))          \
    _LSHM_CXX2(void, shmem_atomic_inc, N, _atomic_inc, (T * d, int pe), (d, pe))                   \
    _LSHM_CXX2(T, shmem_atomic_fetch_add, N, _atomic_fetch_add, (T * d, T v, int pe), (d, v, pe))  \
    _LSHM_CXX2(void, shmem_atomic_add, N, _atomic_add, (T * d, T v, int pe), (d, v, pe))           \
    _LSHM_CXX2(void, shmem_atomic_compare_swap_nbi, N, _atomic_compare_swap_nbi,                   \
               (T * f, T * d, T c, T v, int pe), (f, d, c, v, pe))                                 \
    _LSHM_CXX2(void, shmem_atomic_fetch_inc_nbi, N, _atomic_fetch_inc_nbi, (T * f, T * d, int pe), \
               (f, d, pe))                                                                         \
    _LSHM_CXX2(void, shmem_atomic_fetch_add_nbi, N, _atomic_fetch_add_nbi,                         \
               (T * f, T * d, T v, int pe), (f, d, v, pe))                                         \
    _LSHM_CXX_BIT1(T, N, and) _LSHM_CXX_BIT1(T, N, or) _LSHM_CXX_BIT1(T, N, xor)
/* bitwise: every standard AMO type (the signed ones are the extension
 * declared in shmem.h) */
#define _LSHM_CXX_BIT1(T, N, OP)                                                                   \
    _LSHM_CXX2(T, shmem_atomic_fetch_##OP, N, _atomic_fetch_##OP, (T * d, T v, int pe), (d, v, pe)) \
    _LSHM_CXX2(void, shmem_atomic_##OP, N, _atomic_##OP, (T * d, T v, int pe), (d, v, pe))         \
    _LSHM_CXX2(void, shmem_atomic_fetch_##OP##_nbi, N, _atomic_fetch_##OP##_nbi,                   \
               (T * f, T * d, T v, int pe), (f, d, v, pe))
_LSHM_CXX_AMO_TYPES(_LSHM_CXX_AMO)

/* deprecated generic AMO names: those of shmem_atomic_ (the spec: identical
 * behaviour and signature), over the same types; shmem_swap on long is the C
 * API's untyped routine */
#define _LSHM_CXX_OLD(T, N)                                                                        \
    _LSHM_CXX(T, shmem_fadd, shmem_##N##_atomic_fetch_add, (T * d, T v, int pe), (d, v, pe))       \
    _LSHM_CXX(T, shmem_finc, shmem_##N##_atomic_fetch_inc, (T * d, int pe), (d, pe))               \
    _LSHM_CXX(void, shmem_add, shmem_##N##_atomic_add, (T * d, T v, int pe), (d, v, pe))           \
    _LSHM_CXX(void, shmem_inc, shmem_##N##_atomic_inc, (T * d, int pe), (d, pe))                   \
    _LSHM_CXX(T, shmem_cswap, shmem_##N##_atomic_compare_swap, (T * d, T c, T v, int pe), (d, c, v, pe))
#define _LSHM_CXX_OLDX(T, N)                                                                       \
    _LSHM_CXX(T, shmem_fetch, shmem_##N##_atomic_fetch, (const T *s, int pe), (s, pe))             \
    _LSHM_CXX(void, shmem_set, shmem_##N##_atomic_set, (T * d, T v, int pe), (d, v, pe))
#define _LSHM_CXX_SWAP(T, N)                                                                       \
    _LSHM_CXX(T, shmem_swap, shmem_##N##_atomic_swap, (T * d, T v, int pe), (d, v, pe))
_LSHM_CXX_AMO_TYPES(_LSHM_CXX_OLD)
_LSHM_CXX_EXT_TYPES(_LSHM_CXX_OLDX)
_LSHM_CXX_SWAP(int, int)
_LSHM_CXX_SWAP(long long, longlong)
_LSHM_CXX_SWAP(unsigned int, uint)
_LSHM_CXX_SWAP(unsigned long, ulong)
_LSHM_CXX_SWAP(unsigned long long, ulonglong)
_LSHM_CXX_SWAP(float, float)
_LSHM_CXX_SWAP(double, double)

/* ---- point-to-point */
/* the all/any/some forms and their _vector forms, of wait_until (the _all
 * form returns nothing) and of test (it returns int). The C API's
 * cmp_values is TYPE * as in the 1.5 synopsis (bindings generated from it
 * match); 1.5's errata and 1.6 make it const, so the generic names take a
 * const array (a plain one converts; the routines only read it). */
#define _LSHM_CXX_P2P_SET(K, RALL, T, N)                                                           \
    _LSHM_CXX(RALL, shmem_##K##_all, shmem_##N##_##K##_all, (T * v, size_t n, const int *st, int cmp, T x), \
              (v, n, st, cmp, x))                                                                  \
    _LSHM_CXX(size_t, shmem_##K##_any, shmem_##N##_##K##_any,                                      \
              (T * v, size_t n, const int *st, int cmp, T x), (v, n, st, cmp, x))                  \
    _LSHM_CXX(size_t, shmem_##K##_some, shmem_##N##_##K##_some,                                    \
              (T * v, size_t n, size_t *idx, const int *st, int cmp, T x), (v, n, idx, st, cmp, x)) \
    _LSHM_CXX(RALL, shmem_##K##_all_vector, shmem_##N##_##K##_all_vector,                          \
              (T * v, size_t n, const int *st, int cmp, const T *x), (v, n, st, cmp, (T *)x))      \
    _LSHM_CXX(size_t, shmem_##K##_any_vector, shmem_##N##_##K##_any_vector,                        \
              (T * v, size_t n, const int *st, int cmp, const T *x), (v, n, st, cmp, (T *)x))      \
    _LSHM_CXX(size_t, shmem_##K##_some_vector, shmem_##N##_##K##_some_vector,                      \
              (T * v, size_t n, size_t *idx, const int *st, int cmp, const T *x), (v, n, idx, st, cmp, (T *)x))
#define _LSHM_CXX_P2P(T, N)                                                                        \
    _LSHM_CXX(int, shmem_test, shmem_##N##_test, (volatile T * v, int cmp, T x), (v, cmp, x))      \
    _LSHM_CXX_P2P_SET(wait_until, void, T, N) _LSHM_CXX_P2P_SET(test, int, T, N)
_LSHM_CXX_P2P_TYPES(_LSHM_CXX_P2P)
/* wait_until for all but long, which the C API already declares so */
#define _LSHM_CXX_WAIT(T, N)                                                                       \
    _LSHM_CXX(void, shmem_wait_until, shmem_##N##_wait_until, (volatile T * v, int cmp, T x),      \
              (v, cmp, x))
_LSHM_CXX_WAIT(short, short)
_LSHM_CXX_WAIT(unsigned short, ushort)
_LSHM_CXX_WAIT(int, int)
_LSHM_CXX_WAIT(long long, longlong)
_LSHM_CXX_WAIT(unsigned int, uint)
_LSHM_CXX_WAIT(unsigned long, ulong)
_LSHM_CXX_WAIT(unsigned long long, ulonglong)
/* deprecated shmem_wait: short, int, long long (long: the C API's) */
_LSHM_CXX(void, shmem_wait, shmem_short_wait, (volatile short *v, short x), (v, x))
_LSHM_CXX(void, shmem_wait, shmem_int_wait, (volatile int *v, int x), (v, x))
_LSHM_CXX(void, shmem_wait, shmem_longlong_wait, (volatile long long *v, long long x), (v, x))

/* ---- team collectives, reductions, sync */
#define _LSHM_CXX_COLL(T, N)                                                                       \
    _LSHM_CXX(int, shmem_broadcast, shmem_##N##_broadcast,                                         \
              (shmem_team_t t, T * d, const T *s, size_t n, int root), (t, d, s, n, root))         \
    _LSHM_CXX(int, shmem_collect, shmem_##N##_collect, (shmem_team_t t, T * d, const T *s, size_t n), \
              (t, d, s, n))                                                                        \
    _LSHM_CXX(int, shmem_fcollect, shmem_##N##_fcollect,                                           \
              (shmem_team_t t, T * d, const T *s, size_t n), (t, d, s, n))                         \
    _LSHM_CXX(int, shmem_alltoall, shmem_##N##_alltoall,                                           \
              (shmem_team_t t, T * d, const T *s, size_t n), (t, d, s, n))                         \
    _LSHM_CXX(int, shmem_alltoalls, shmem_##N##_alltoalls,                                         \
              (shmem_team_t t, T * d, const T *s, ptrdiff_t dst, ptrdiff_t sst, size_t n),         \
              (t, d, s, dst, sst, n))
_LSHM_CXX_RMA_TYPES(_LSHM_CXX_COLL)

#define _LSHM_CXX_RED(T, N, OP)                                                                    \
    _LSHM_CXX(int, shmem_##OP##_reduce, shmem_##N##_##OP##_reduce,                                 \
              (shmem_team_t t, T * d, const T *s, size_t n), (t, d, s, n))
#define _LSHM_CXX_REDBIT(T, N) _LSHM_CXX_RED(T, N, and) _LSHM_CXX_RED(T, N, or) _LSHM_CXX_RED(T, N, xor)
#define _LSHM_CXX_REDNUM(T, N)                                                                     \
    _LSHM_CXX_RED(T, N, max) _LSHM_CXX_RED(T, N, min) _LSHM_CXX_RED(T, N, sum)                    \
    _LSHM_CXX_RED(T, N, prod)                                                                      \
    _LSHM_CXX(int, shmem_sum_inscan, shmem_##N##_sum_inscan, (shmem_team_t t, T * d, const T *s, size_t n), \
              (t, d, s, n))                                                                        \
    _LSHM_CXX(int, shmem_sum_exscan, shmem_##N##_sum_exscan, (shmem_team_t t, T * d, const T *s, size_t n), \
              (t, d, s, n))
_LSHM_CXX_REDBIT_TYPES(_LSHM_CXX_REDBIT)
_LSHM_CXX_REDNUM_TYPES(_LSHM_CXX_REDNUM)

/* 1.6's signal_add/set with a context first, beside the C routines */
static inline void shmem_signal_add(shmem_ctx_t ctx, uint64_t *sig, uint64_t v, int pe)
{
    shmem_ctx_signal_add(ctx, sig, v, pe);
}
static inline void shmem_signal_set(shmem_ctx_t ctx, uint64_t *sig, uint64_t v, int pe)
{
    shmem_ctx_signal_set(ctx, sig, v, pe);
}

/* shmem_sync(team) (1.5) beside the deprecated active-set shmem_sync */
static inline int shmem_sync(shmem_team_t team) { return shmem_team_sync(team); }

#endif /* LOCUS_SHMEM_CXX_H */
