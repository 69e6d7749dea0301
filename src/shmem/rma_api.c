/* The typed, sized and byte RMA routines, with and without a context,
 * generated from shmem.h's type tables onto the engine in xfer.c. */
#include "shmem/shmem_internal.h"

#define CALL lshm_name(__func__)
#define CTXPE(ctx, pe) lshm_ctx_pe(CALL, ctx, pe)

/* (dest, source, bytes, world pe) for each kind of routine */
#define DEF_RMA(T, N)                                                                              \
    LSHM_DEF(void, shmem_##N##_put, (T * dest, const T *source, size_t nelems, int pe))            \
    {                                                                                              \
        if (!lshm_put_small(dest, source, nelems * sizeof(T), pe))                                 \
            lshm_put(CALL, dest, source, nelems * sizeof(T), CTXPE(SHMEM_CTX_DEFAULT, pe), false); \
    }                                                                                              \
    LSHM_DEF(void, shmem_ctx_##N##_put, (shmem_ctx_t ctx, T * dest, const T *source, size_t nelems, int pe)) \
    { lshm_put(CALL, dest, source, nelems * sizeof(T), CTXPE(ctx, pe), false); }                   \
    LSHM_DEF(void, shmem_##N##_get, (T * dest, const T *source, size_t nelems, int pe))            \
    { lshm_get(CALL, dest, source, nelems * sizeof(T), CTXPE(SHMEM_CTX_DEFAULT, pe), false); }     \
    LSHM_DEF(void, shmem_ctx_##N##_get, (shmem_ctx_t ctx, T * dest, const T *source, size_t nelems, int pe)) \
    { lshm_get(CALL, dest, source, nelems * sizeof(T), CTXPE(ctx, pe), false); }                   \
    LSHM_DEF(void, shmem_##N##_put_nbi, (T * dest, const T *source, size_t nelems, int pe))        \
    { lshm_put(CALL, dest, source, nelems * sizeof(T), CTXPE(SHMEM_CTX_DEFAULT, pe), true); }      \
    LSHM_DEF(void, shmem_ctx_##N##_put_nbi, (shmem_ctx_t ctx, T * dest, const T *source, size_t nelems, int pe)) \
    { lshm_put(CALL, dest, source, nelems * sizeof(T), CTXPE(ctx, pe), true); }                    \
    LSHM_DEF(void, shmem_##N##_get_nbi, (T * dest, const T *source, size_t nelems, int pe))        \
    { lshm_get(CALL, dest, source, nelems * sizeof(T), CTXPE(SHMEM_CTX_DEFAULT, pe), true); }      \
    LSHM_DEF(void, shmem_ctx_##N##_get_nbi, (shmem_ctx_t ctx, T * dest, const T *source, size_t nelems, int pe)) \
    { lshm_get(CALL, dest, source, nelems * sizeof(T), CTXPE(ctx, pe), true); }                    \
    LSHM_DEF(void, shmem_##N##_p, (T * dest, T value, int pe))                                      \
    {                                                                                              \
        if (!lshm_put_small(dest, &value, sizeof(T), pe))                                          \
            lshm_put(CALL, dest, &value, sizeof(T), CTXPE(SHMEM_CTX_DEFAULT, pe), false);          \
    }                                                                                              \
    LSHM_DEF(void, shmem_ctx_##N##_p, (shmem_ctx_t ctx, T * dest, T value, int pe))                 \
    { lshm_put(CALL, dest, &value, sizeof(T), CTXPE(ctx, pe), false); }                            \
    LSHM_DEF(T, shmem_##N##_g, (const T *source, int pe))                                           \
    {                                                                                              \
        T v;                                                                                       \
        lshm_get(CALL, &v, source, sizeof(T), CTXPE(SHMEM_CTX_DEFAULT, pe), false);                \
        return v;                                                                                  \
    }                                                                                              \
    LSHM_DEF(T, shmem_ctx_##N##_g, (shmem_ctx_t ctx, const T *source, int pe))                      \
    {                                                                                              \
        T v;                                                                                       \
        lshm_get(CALL, &v, source, sizeof(T), CTXPE(ctx, pe), false);                              \
        return v;                                                                                  \
    }                                                                                              \
    LSHM_DEF(void, shmem_##N##_iput,                                                               \
             (T * dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe))      \
    { lshm_iput(CALL, dest, source, dst, sst, nelems, sizeof(T), CTXPE(SHMEM_CTX_DEFAULT, pe)); }  \
    LSHM_DEF(void, shmem_ctx_##N##_iput,                                                           \
             (shmem_ctx_t ctx, T * dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe)) \
    { lshm_iput(CALL, dest, source, dst, sst, nelems, sizeof(T), CTXPE(ctx, pe)); }                \
    LSHM_DEF(void, shmem_##N##_iget,                                                               \
             (T * dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe))      \
    { lshm_iget(CALL, dest, source, dst, sst, nelems, sizeof(T), CTXPE(SHMEM_CTX_DEFAULT, pe)); }  \
    LSHM_DEF(void, shmem_ctx_##N##_iget,                                                           \
             (shmem_ctx_t ctx, T * dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe)) \
    { lshm_iget(CALL, dest, source, dst, sst, nelems, sizeof(T), CTXPE(ctx, pe)); }
_LSHM_RMA_TYPES(DEF_RMA)

#define DEF_SIZED(B, U)                                                                            \
    LSHM_DEF(void, shmem_put##B, (void *dest, const void *source, size_t nelems, int pe))           \
    {                                                                                              \
        if (!lshm_put_small(dest, source, nelems * U, pe))                                         \
            lshm_put(CALL, dest, source, nelems * U, CTXPE(SHMEM_CTX_DEFAULT, pe), false);         \
    }                                                                                              \
    LSHM_DEF(void, shmem_ctx_put##B, (shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe)) \
    { lshm_put(CALL, dest, source, nelems * U, CTXPE(ctx, pe), false); }                           \
    LSHM_DEF(void, shmem_get##B, (void *dest, const void *source, size_t nelems, int pe))           \
    { lshm_get(CALL, dest, source, nelems * U, CTXPE(SHMEM_CTX_DEFAULT, pe), false); }             \
    LSHM_DEF(void, shmem_ctx_get##B, (shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe)) \
    { lshm_get(CALL, dest, source, nelems * U, CTXPE(ctx, pe), false); }                           \
    LSHM_DEF(void, shmem_put##B##_nbi, (void *dest, const void *source, size_t nelems, int pe))     \
    { lshm_put(CALL, dest, source, nelems * U, CTXPE(SHMEM_CTX_DEFAULT, pe), true); }              \
    LSHM_DEF(void, shmem_ctx_put##B##_nbi,                                                         \
             (shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe))              \
    { lshm_put(CALL, dest, source, nelems * U, CTXPE(ctx, pe), true); }                            \
    LSHM_DEF(void, shmem_get##B##_nbi, (void *dest, const void *source, size_t nelems, int pe))     \
    { lshm_get(CALL, dest, source, nelems * U, CTXPE(SHMEM_CTX_DEFAULT, pe), true); }              \
    LSHM_DEF(void, shmem_ctx_get##B##_nbi,                                                         \
             (shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe))              \
    { lshm_get(CALL, dest, source, nelems * U, CTXPE(ctx, pe), true); }                            \
    LSHM_DEF(void, shmem_iput##B,                                                                  \
             (void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe)) \
    { lshm_iput(CALL, dest, source, dst, sst, nelems, U, CTXPE(SHMEM_CTX_DEFAULT, pe)); }          \
    LSHM_DEF(void, shmem_ctx_iput##B,                                                              \
             (shmem_ctx_t ctx, void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe)) \
    { lshm_iput(CALL, dest, source, dst, sst, nelems, U, CTXPE(ctx, pe)); }                        \
    LSHM_DEF(void, shmem_iget##B,                                                                  \
             (void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe)) \
    { lshm_iget(CALL, dest, source, dst, sst, nelems, U, CTXPE(SHMEM_CTX_DEFAULT, pe)); }          \
    LSHM_DEF(void, shmem_ctx_iget##B,                                                              \
             (shmem_ctx_t ctx, void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe)) \
    { lshm_iget(CALL, dest, source, dst, sst, nelems, U, CTXPE(ctx, pe)); }
_LSHM_SIZES(DEF_SIZED)

LSHM_DEF(void, shmem_putmem, (void *dest, const void *source, size_t nelems, int pe))
{
    if (!lshm_put_small(dest, source, nelems, pe))
        lshm_put(CALL, dest, source, nelems, CTXPE(SHMEM_CTX_DEFAULT, pe), false);
}
LSHM_DEF(void, shmem_ctx_putmem, (shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe))
{ lshm_put(CALL, dest, source, nelems, CTXPE(ctx, pe), false); }
LSHM_DEF(void, shmem_getmem, (void *dest, const void *source, size_t nelems, int pe))
{ lshm_get(CALL, dest, source, nelems, CTXPE(SHMEM_CTX_DEFAULT, pe), false); }
LSHM_DEF(void, shmem_ctx_getmem, (shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe))
{ lshm_get(CALL, dest, source, nelems, CTXPE(ctx, pe), false); }
LSHM_DEF(void, shmem_putmem_nbi, (void *dest, const void *source, size_t nelems, int pe))
{ lshm_put(CALL, dest, source, nelems, CTXPE(SHMEM_CTX_DEFAULT, pe), true); }
LSHM_DEF(void, shmem_ctx_putmem_nbi, (shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe))
{ lshm_put(CALL, dest, source, nelems, CTXPE(ctx, pe), true); }
LSHM_DEF(void, shmem_getmem_nbi, (void *dest, const void *source, size_t nelems, int pe))
{ lshm_get(CALL, dest, source, nelems, CTXPE(SHMEM_CTX_DEFAULT, pe), true); }
LSHM_DEF(void, shmem_ctx_getmem_nbi, (shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe))
{ lshm_get(CALL, dest, source, nelems, CTXPE(ctx, pe), true); }

/* ---- block-strided (1.6) ---- */

#define DEF_IB(T, N)                                                                               \
    LSHM_DEF(void, shmem_##N##_ibput, (T * dest, const T *source, ptrdiff_t dst, ptrdiff_t sst,    \
                                        size_t bsize, size_t nblocks, int pe))                     \
    { lshm_iblock(CALL, dest, source, dst, sst, bsize, nblocks, sizeof(T), CTXPE(SHMEM_CTX_DEFAULT, pe), false); } \
    LSHM_DEF(void, shmem_ctx_##N##_ibput, (shmem_ctx_t ctx, T * dest, const T *source, ptrdiff_t dst, \
                                            ptrdiff_t sst, size_t bsize, size_t nblocks, int pe))  \
    { lshm_iblock(CALL, dest, source, dst, sst, bsize, nblocks, sizeof(T), CTXPE(ctx, pe), false); }       \
    LSHM_DEF(void, shmem_##N##_ibget, (T * dest, const T *source, ptrdiff_t dst, ptrdiff_t sst,    \
                                        size_t bsize, size_t nblocks, int pe))                     \
    { lshm_iblock(CALL, dest, source, dst, sst, bsize, nblocks, sizeof(T), CTXPE(SHMEM_CTX_DEFAULT, pe), true); } \
    LSHM_DEF(void, shmem_ctx_##N##_ibget, (shmem_ctx_t ctx, T * dest, const T *source, ptrdiff_t dst, \
                                            ptrdiff_t sst, size_t bsize, size_t nblocks, int pe))  \
    { lshm_iblock(CALL, dest, source, dst, sst, bsize, nblocks, sizeof(T), CTXPE(ctx, pe), true); }
_LSHM_RMA_TYPES(DEF_IB)

#define DEF_IB_SIZED(B, U)                                                                         \
    LSHM_DEF(void, shmem_ibput##B, (void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,  \
                                     size_t bsize, size_t nblocks, int pe))                        \
    { lshm_iblock(CALL, dest, source, dst, sst, bsize, nblocks, U, CTXPE(SHMEM_CTX_DEFAULT, pe), false); } \
    LSHM_DEF(void, shmem_ctx_ibput##B, (shmem_ctx_t ctx, void *dest, const void *source, ptrdiff_t dst, \
                                         ptrdiff_t sst, size_t bsize, size_t nblocks, int pe))     \
    { lshm_iblock(CALL, dest, source, dst, sst, bsize, nblocks, U, CTXPE(ctx, pe), false); }               \
    LSHM_DEF(void, shmem_ibget##B, (void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,  \
                                     size_t bsize, size_t nblocks, int pe))                        \
    { lshm_iblock(CALL, dest, source, dst, sst, bsize, nblocks, U, CTXPE(SHMEM_CTX_DEFAULT, pe), true); } \
    LSHM_DEF(void, shmem_ctx_ibget##B, (shmem_ctx_t ctx, void *dest, const void *source, ptrdiff_t dst, \
                                         ptrdiff_t sst, size_t bsize, size_t nblocks, int pe))     \
    { lshm_iblock(CALL, dest, source, dst, sst, bsize, nblocks, U, CTXPE(ctx, pe), true); }
_LSHM_SIZES(DEF_IB_SIZED)
