/* The typed AMO routines (standard, extended, bitwise; fetching _nbi
 * forms; context forms; the pre-1.4 names) onto lshm_amo. Values travel as
 * their bit patterns in a 64-bit word (float and double included). */
#include "shmem/shmem_internal.h"

#define CALL lshm_name(__func__)
#define CTXPE(ctx, pe) lshm_ctx_pe(CALL, ctx, pe)

static inline uint64_t bits_of(const void *v, size_t n)
{
    uint64_t b = 0;
    memcpy(&b, v, n);
    return b;
}
#define TOB(T, v) bits_of(&(T){v}, sizeof(T))
#define FROMB(T, b) (__extension__({ uint64_t _b = (b); T _v; memcpy(&_v, &_b, sizeof(T)); _v; }))
#define AMO(T, op, dest, v, c, pe, fetch) \
    lshm_amo(CALL, LOCUS_RMA_AMO_##op, dest, sizeof(T), TOB(T, v), TOB(T, c), pe, fetch)

#define DEF_EXT(T, N)                                                                              \
    LSHM_DEF(T, shmem_##N##_atomic_fetch, (const T *source, int pe))                               \
    { return FROMB(T, AMO(T, FETCH, (void *)source, 0, 0, CTXPE(SHMEM_CTX_DEFAULT, pe), true)); }   \
    LSHM_DEF(T, shmem_ctx_##N##_atomic_fetch, (shmem_ctx_t ctx, const T *source, int pe))          \
    { return FROMB(T, AMO(T, FETCH, (void *)source, 0, 0, CTXPE(ctx, pe), true)); }                 \
    LSHM_DEF(void, shmem_##N##_atomic_set, (T * dest, T value, int pe))                            \
    { AMO(T, SET, dest, value, 0, CTXPE(SHMEM_CTX_DEFAULT, pe), false); }                          \
    LSHM_DEF(void, shmem_ctx_##N##_atomic_set, (shmem_ctx_t ctx, T * dest, T value, int pe))       \
    { AMO(T, SET, dest, value, 0, CTXPE(ctx, pe), false); }                                        \
    LSHM_DEF(T, shmem_##N##_atomic_swap, (T * dest, T value, int pe))                              \
    { return FROMB(T, AMO(T, SWAP, dest, value, 0, CTXPE(SHMEM_CTX_DEFAULT, pe), true)); }          \
    LSHM_DEF(T, shmem_ctx_##N##_atomic_swap, (shmem_ctx_t ctx, T * dest, T value, int pe))         \
    { return FROMB(T, AMO(T, SWAP, dest, value, 0, CTXPE(ctx, pe), true)); }                        \
    LSHM_DEF(void, shmem_##N##_atomic_fetch_nbi, (T * fetch, const T *source, int pe))             \
    { *fetch = FROMB(T, AMO(T, FETCH, (void *)source, 0, 0, CTXPE(SHMEM_CTX_DEFAULT, pe), true)); } \
    LSHM_DEF(void, shmem_ctx_##N##_atomic_fetch_nbi, (shmem_ctx_t ctx, T * fetch, const T *source, int pe)) \
    { *fetch = FROMB(T, AMO(T, FETCH, (void *)source, 0, 0, CTXPE(ctx, pe), true)); }               \
    LSHM_DEF(void, shmem_##N##_atomic_swap_nbi, (T * fetch, T * dest, T value, int pe))            \
    { *fetch = FROMB(T, AMO(T, SWAP, dest, value, 0, CTXPE(SHMEM_CTX_DEFAULT, pe), true)); }        \
    LSHM_DEF(void, shmem_ctx_##N##_atomic_swap_nbi, (shmem_ctx_t ctx, T * fetch, T * dest, T value, int pe)) \
    { *fetch = FROMB(T, AMO(T, SWAP, dest, value, 0, CTXPE(ctx, pe), true)); }
_LSHM_AMO_EXT_TYPES(DEF_EXT)

#define DEF_STD(T, N)                                                                              \
    LSHM_DEF(T, shmem_##N##_atomic_compare_swap, (T * dest, T cond, T value, int pe))              \
    { return FROMB(T, AMO(T, CSWAP, dest, value, cond, CTXPE(SHMEM_CTX_DEFAULT, pe), true)); }      \
    LSHM_DEF(T, shmem_ctx_##N##_atomic_compare_swap, (shmem_ctx_t ctx, T * dest, T cond, T value, int pe)) \
    { return FROMB(T, AMO(T, CSWAP, dest, value, cond, CTXPE(ctx, pe), true)); }                    \
    LSHM_DEF(T, shmem_##N##_atomic_fetch_inc, (T * dest, int pe))                                  \
    { return FROMB(T, AMO(T, ADD, dest, 1, 0, CTXPE(SHMEM_CTX_DEFAULT, pe), true)); }               \
    LSHM_DEF(T, shmem_ctx_##N##_atomic_fetch_inc, (shmem_ctx_t ctx, T * dest, int pe))             \
    { return FROMB(T, AMO(T, ADD, dest, 1, 0, CTXPE(ctx, pe), true)); }                             \
    LSHM_DEF(void, shmem_##N##_atomic_inc, (T * dest, int pe))                                     \
    { AMO(T, ADD, dest, 1, 0, CTXPE(SHMEM_CTX_DEFAULT, pe), false); }                              \
    LSHM_DEF(void, shmem_ctx_##N##_atomic_inc, (shmem_ctx_t ctx, T * dest, int pe))                \
    { AMO(T, ADD, dest, 1, 0, CTXPE(ctx, pe), false); }                                            \
    LSHM_DEF(T, shmem_##N##_atomic_fetch_add, (T * dest, T value, int pe))                         \
    { return FROMB(T, AMO(T, ADD, dest, value, 0, CTXPE(SHMEM_CTX_DEFAULT, pe), true)); }           \
    LSHM_DEF(T, shmem_ctx_##N##_atomic_fetch_add, (shmem_ctx_t ctx, T * dest, T value, int pe))    \
    { return FROMB(T, AMO(T, ADD, dest, value, 0, CTXPE(ctx, pe), true)); }                         \
    LSHM_DEF(void, shmem_##N##_atomic_add, (T * dest, T value, int pe))                            \
    { AMO(T, ADD, dest, value, 0, CTXPE(SHMEM_CTX_DEFAULT, pe), false); }                          \
    LSHM_DEF(void, shmem_ctx_##N##_atomic_add, (shmem_ctx_t ctx, T * dest, T value, int pe))       \
    { AMO(T, ADD, dest, value, 0, CTXPE(ctx, pe), false); }                                        \
    LSHM_DEF(void, shmem_##N##_atomic_compare_swap_nbi, (T * fetch, T * dest, T cond, T value, int pe)) \
    { *fetch = FROMB(T, AMO(T, CSWAP, dest, value, cond, CTXPE(SHMEM_CTX_DEFAULT, pe), true)); }    \
    LSHM_DEF(void, shmem_ctx_##N##_atomic_compare_swap_nbi,                                        \
             (shmem_ctx_t ctx, T * fetch, T * dest, T cond, T value, int pe))                      \
    { *fetch = FROMB(T, AMO(T, CSWAP, dest, value, cond, CTXPE(ctx, pe), true)); }                  \
    LSHM_DEF(void, shmem_##N##_atomic_fetch_inc_nbi, (T * fetch, T * dest, int pe))                \
    { *fetch = FROMB(T, AMO(T, ADD, dest, 1, 0, CTXPE(SHMEM_CTX_DEFAULT, pe), true)); }             \
    LSHM_DEF(void, shmem_ctx_##N##_atomic_fetch_inc_nbi, (shmem_ctx_t ctx, T * fetch, T * dest, int pe)) \
    { *fetch = FROMB(T, AMO(T, ADD, dest, 1, 0, CTXPE(ctx, pe), true)); }                           \
    LSHM_DEF(void, shmem_##N##_atomic_fetch_add_nbi, (T * fetch, T * dest, T value, int pe))       \
    { *fetch = FROMB(T, AMO(T, ADD, dest, value, 0, CTXPE(SHMEM_CTX_DEFAULT, pe), true)); }         \
    LSHM_DEF(void, shmem_ctx_##N##_atomic_fetch_add_nbi, (shmem_ctx_t ctx, T * fetch, T * dest, T value, int pe)) \
    { *fetch = FROMB(T, AMO(T, ADD, dest, value, 0, CTXPE(ctx, pe), true)); }
_LSHM_AMO_STD_TYPES(DEF_STD)

#define DEF_BIT1(T, N, OP, UOP)                                                                    \
    LSHM_DEF(T, shmem_##N##_atomic_fetch_##OP, (T * dest, T value, int pe))                        \
    { return FROMB(T, AMO(T, UOP, dest, value, 0, CTXPE(SHMEM_CTX_DEFAULT, pe), true)); }           \
    LSHM_DEF(T, shmem_ctx_##N##_atomic_fetch_##OP, (shmem_ctx_t ctx, T * dest, T value, int pe))   \
    { return FROMB(T, AMO(T, UOP, dest, value, 0, CTXPE(ctx, pe), true)); }                         \
    LSHM_DEF(void, shmem_##N##_atomic_##OP, (T * dest, T value, int pe))                           \
    { AMO(T, UOP, dest, value, 0, CTXPE(SHMEM_CTX_DEFAULT, pe), false); }                          \
    LSHM_DEF(void, shmem_ctx_##N##_atomic_##OP, (shmem_ctx_t ctx, T * dest, T value, int pe))      \
    { AMO(T, UOP, dest, value, 0, CTXPE(ctx, pe), false); }                                        \
    LSHM_DEF(void, shmem_##N##_atomic_fetch_##OP##_nbi, (T * fetch, T * dest, T value, int pe))    \
    { *fetch = FROMB(T, AMO(T, UOP, dest, value, 0, CTXPE(SHMEM_CTX_DEFAULT, pe), true)); }         \
    LSHM_DEF(void, shmem_ctx_##N##_atomic_fetch_##OP##_nbi,                                        \
             (shmem_ctx_t ctx, T * fetch, T * dest, T value, int pe))                              \
    { *fetch = FROMB(T, AMO(T, UOP, dest, value, 0, CTXPE(ctx, pe), true)); }
#define DEF_BIT(T, N) DEF_BIT1(T, N, and, AND) DEF_BIT1(T, N, or, OR) DEF_BIT1(T, N, xor, XOR)
_LSHM_AMO_BIT_TYPES(DEF_BIT)

/* Pre-1.4 names. */
#define DEF_OLD(T, N)                                                                              \
    LSHM_DEF(T, shmem_##N##_fadd, (T * target, T value, int pe))                                   \
    { return FROMB(T, AMO(T, ADD, target, value, 0, CTXPE(SHMEM_CTX_DEFAULT, pe), true)); }         \
    LSHM_DEF(T, shmem_##N##_finc, (T * target, int pe))                                            \
    { return FROMB(T, AMO(T, ADD, target, 1, 0, CTXPE(SHMEM_CTX_DEFAULT, pe), true)); }             \
    LSHM_DEF(void, shmem_##N##_add, (T * target, T value, int pe))                                 \
    { AMO(T, ADD, target, value, 0, CTXPE(SHMEM_CTX_DEFAULT, pe), false); }                        \
    LSHM_DEF(void, shmem_##N##_inc, (T * target, int pe))                                          \
    { AMO(T, ADD, target, 1, 0, CTXPE(SHMEM_CTX_DEFAULT, pe), false); }                            \
    LSHM_DEF(T, shmem_##N##_cswap, (T * target, T cond, T value, int pe))                          \
    { return FROMB(T, AMO(T, CSWAP, target, value, cond, CTXPE(SHMEM_CTX_DEFAULT, pe), true)); }    \
    LSHM_DEF(T, shmem_##N##_swap, (T * target, T value, int pe))                                   \
    { return FROMB(T, AMO(T, SWAP, target, value, 0, CTXPE(SHMEM_CTX_DEFAULT, pe), true)); }        \
    LSHM_DEF(T, shmem_##N##_fetch, (const T *target, int pe))                                      \
    { return FROMB(T, AMO(T, FETCH, (void *)target, 0, 0, CTXPE(SHMEM_CTX_DEFAULT, pe), true)); }   \
    LSHM_DEF(void, shmem_##N##_set, (T * target, T value, int pe))                                 \
    { AMO(T, SET, target, value, 0, CTXPE(SHMEM_CTX_DEFAULT, pe), false); }
DEF_OLD(int, int)
DEF_OLD(long, long)
DEF_OLD(long long, longlong)

#define DEF_OLD_EXT(T, N)                                                                          \
    LSHM_DEF(T, shmem_##N##_swap, (T * target, T value, int pe))                                   \
    { return FROMB(T, AMO(T, SWAP, target, value, 0, CTXPE(SHMEM_CTX_DEFAULT, pe), true)); }        \
    LSHM_DEF(T, shmem_##N##_fetch, (const T *target, int pe))                                      \
    { return FROMB(T, AMO(T, FETCH, (void *)target, 0, 0, CTXPE(SHMEM_CTX_DEFAULT, pe), true)); }   \
    LSHM_DEF(void, shmem_##N##_set, (T * target, T value, int pe))                                 \
    { AMO(T, SET, target, value, 0, CTXPE(SHMEM_CTX_DEFAULT, pe), false); }
DEF_OLD_EXT(float, float)
DEF_OLD_EXT(double, double)

LSHM_DEF(long, shmem_swap, (long *target, long value, int pe))
{ return FROMB(long, AMO(long, SWAP, target, value, 0, CTXPE(SHMEM_CTX_DEFAULT, pe), true)); }
