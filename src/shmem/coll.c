/* Barriers and data collectives over a set of PEs (a team, or an active set
 * of the deprecated interface; pSync is not needed: sync state lives in the
 * library's channels). Every algorithm pushes data with puts (a copy into
 * the member's mapped heap on this node, RDMA WRITE to other nodes) and
 * announces it with one signal per destination:
 *   broadcast  up to LSHM_EAGER bytes on the world, shared and
 *              active-set channels: the root puts into each member's box
 *              and signals, the member copies to its dest (chan.c); larger:
 *              members tell the root their dest is free, the root waits for
 *              all, puts to each and signals each;
 *   collect    one all-to-all exchange of sizes (which also says every
 *              member is in), puts at the prefix offsets, signals;
 *   fcollect   blocks up to LSHM_EAGER bytes: each member's block into
 *              every other member's box, each member copies them out;
 *   fcollect, alltoall(s)  a dissemination sync (every dest is free), puts,
 *              signals; each member returns once all its blocks arrived.
 * Blocking puts leave the source reusable, so no exit sync is needed; the
 * entry step keeps back-to-back calls on one dest safe even when a program
 * does not synchronise between them. */
#include "shmem/shmem_internal.h"

#include <stdlib.h>

#define CALL lshm_name(__func__)

static void copy_local(void *dest, const void *src, size_t bytes)
{
    if (dest != src && bytes)
        memmove(dest, src, bytes);
}

void lshm_broadcast(const char *call, const lshm_set_t *s, void *dest, const void *src, size_t bytes, int root,
                    bool write_root)
{
    if (root < 0 || root >= s->size)
        lshm_fatal(call, "root %d out of range for a team or active set of %d PEs", root, s->size);
    lshm_check_sym(call, dest, bytes);
    lshm_check_sym(call, src, bytes);
    int rpe = lshm_set_pe(s, root);
    if (lshm_chan_eager(s->slot, bytes)) {
        if (s->my_idx != root) {
            memcpy(dest, lshm_chan_box_wait(call, s->slot, rpe), bytes);
            lshm_chan_box_done(call, s->slot, rpe);
            return;
        }
        for (int i = 0; i < s->size; i++)
            if (i != root)
                lshm_chan_box_send(call, s->slot, lshm_set_pe(s, i), src, bytes);
        if (write_root)
            copy_local(dest, src, bytes);
        return;
    }
    if (s->my_idx != root) {
        lshm_chan_signal(call, s->slot, rpe);
        lshm_chan_wait(call, s->slot, rpe);
        return;
    }
    for (int i = 0; i < s->size; i++)
        if (i != root)
            lshm_chan_wait(call, s->slot, lshm_set_pe(s, i));
    for (int i = 0; i < s->size; i++)
        if (i != root)
            lshm_put(call, dest, src, bytes, lshm_set_pe(s, i), false);
    for (int i = 0; i < s->size; i++)
        if (i != root)
            lshm_chan_signal(call, s->slot, lshm_set_pe(s, i));
    if (write_root)
        copy_local(dest, src, bytes);
}

/* Wait for one signal from every other member. */
static void wait_all(const char *call, const lshm_set_t *s)
{
    for (int k = 1; k < s->size; k++)
        lshm_chan_wait(call, s->slot, lshm_set_pe(s, (s->my_idx - k + s->size) % s->size));
}

/* fcollect of small blocks: every member's block goes into every other
 * member's box; each member copies them into its own dest. */
static void fcollect_eager(const char *call, const lshm_set_t *s, void *dest, const void *src, size_t bytes)
{
    for (int k = 1; k < s->size; k++)
        lshm_chan_box_send(call, s->slot, lshm_set_pe(s, (s->my_idx + k) % s->size), src, bytes);
    copy_local((char *)dest + (size_t)s->my_idx * bytes, src, bytes);
    for (int k = 1; k < s->size; k++) {
        int i = (s->my_idx - k + s->size) % s->size, pe = lshm_set_pe(s, i);
        memcpy((char *)dest + (size_t)i * bytes, lshm_chan_box_wait(call, s->slot, pe), bytes);
        lshm_chan_box_done(call, s->slot, pe);
    }
}

void lshm_collect(const char *call, const lshm_set_t *s, void *dest, const void *src, size_t bytes, bool fixed)
{
    lshm_check_sym(call, src, bytes);
    if (fixed)
        lshm_check_sym(call, dest, bytes * (size_t)s->size);
    if (fixed && lshm_chan_eager(s->slot, bytes)) {
        fcollect_eager(call, s, dest, src, bytes);
        return;
    }
    uint64_t off = (uint64_t)s->my_idx * bytes;
    if (!fixed) {
        uint64_t *all = malloc((size_t)s->size * sizeof *all);
        if (!all)
            lshm_fatal(call, "out of memory for %d sizes", s->size);
        lshm_set_allgather64(call, s, bytes, all);
        uint64_t total = 0;
        for (int i = 0; i < s->size; i++) {
            if (i == s->my_idx)
                off = total;
            total += all[i];
        }
        free(all);
        lshm_check_sym(call, dest, (size_t)total);
    } else {
        lshm_set_sync(call, s);
    }
    /* start with the next member so that members do not all write to one */
    for (int k = 1; k < s->size; k++)
        lshm_put(call, (char *)dest + off, src, bytes, lshm_set_pe(s, (s->my_idx + k) % s->size), false);
    copy_local((char *)dest + off, src, bytes);
    for (int k = 1; k < s->size; k++)
        lshm_chan_signal(call, s->slot, lshm_set_pe(s, (s->my_idx + k) % s->size));
    wait_all(call, s);
}

void lshm_alltoalls(const char *call, const lshm_set_t *s, void *dest, const void *src, ptrdiff_t dst, ptrdiff_t sst,
                    size_t nelems, size_t esz)
{
    if (nelems) { /* the first element and the last one strided, as lshm_iput checks */
        ptrdiff_t last = (ptrdiff_t)((size_t)s->size * nelems - 1) * (ptrdiff_t)esz;
        lshm_check_sym(call, dest, esz);
        lshm_check_sym(call, (char *)dest + last * dst, esz);
        lshm_check_sym(call, src, esz);
        lshm_check_sym(call, (const char *)src + last * sst, esz);
    }
    lshm_set_sync(call, s);
    for (int k = 0; k < s->size; k++) {
        int j = (s->my_idx + k) % s->size, pe = lshm_set_pe(s, j);
        char *d = (char *)dest + (ptrdiff_t)((size_t)s->my_idx * nelems) * dst * (ptrdiff_t)esz;
        const char *from = (const char *)src + (ptrdiff_t)((size_t)j * nelems) * sst * (ptrdiff_t)esz;
        if (dst == 1 && sst == 1)
            lshm_put(call, d, from, nelems * esz, pe, false);
        else
            lshm_iput(call, d, from, dst, sst, nelems, esz, pe);
    }
    for (int k = 1; k < s->size; k++)
        lshm_chan_signal(call, s->slot, lshm_set_pe(s, (s->my_idx + k) % s->size));
    wait_all(call, s);
}

/* ---- barriers ---- */

LSHM_DEF(void, shmem_barrier_all, (void))
{
    lshm_require_init(CALL);
    lshm_quiet();
    lshm_set_t s = lshm_team_set(&lshm.world);
    lshm_set_sync(CALL, &s);
}

LSHM_DEF(void, shmem_sync_all, (void))
{
    lshm_require_init(CALL);
    lshm_set_t s = lshm_team_set(&lshm.world);
    lshm_set_sync(CALL, &s);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

LSHM_DEF(int, shmem_team_sync, (shmem_team_t team))
{
    lshm_require_init(CALL);
    if (!team)
        return -1;
    lshm_set_t s = lshm_team_set(lshm_team(CALL, team));
    lshm_set_sync(CALL, &s);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return 0;
}

LSHM_DEF(void, shmem_barrier, (int PE_start, int logPE_stride, int PE_size, long *pSync))
{
    (void)pSync;
    lshm_require_init(CALL);
    lshm_set_t s = lshm_aset(CALL, PE_start, logPE_stride, PE_size);
    lshm_quiet();
    lshm_set_sync(CALL, &s);
}

LSHM_DEF(void, shmem_sync, (int PE_start, int logPE_stride, int PE_size, long *pSync))
{
    (void)pSync;
    lshm_require_init(CALL);
    lshm_set_t s = lshm_aset(CALL, PE_start, logPE_stride, PE_size);
    lshm_set_sync(CALL, &s);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/* ---- team collectives (1.5) ---- */

#define TEAMSET(team, s)                                                                           \
    lshm_require_init(CALL);                                                                       \
    if (!(team))                                                                                   \
        return -1;                                                                                 \
    lshm_set_t s = lshm_team_set(lshm_team(CALL, team))

#define DEF_TCOLL(T, N)                                                                            \
    LSHM_DEF(int, shmem_##N##_broadcast, (shmem_team_t team, T * dest, const T *source, size_t nelems, int PE_root)) \
    {                                                                                              \
        TEAMSET(team, s);                                                                          \
        lshm_broadcast(CALL, &s, dest, source, nelems * sizeof(T), PE_root, true);                 \
        return 0;                                                                                  \
    }                                                                                              \
    LSHM_DEF(int, shmem_##N##_collect, (shmem_team_t team, T * dest, const T *source, size_t nelems)) \
    {                                                                                              \
        TEAMSET(team, s);                                                                          \
        lshm_collect(CALL, &s, dest, source, nelems * sizeof(T), false);                           \
        return 0;                                                                                  \
    }                                                                                              \
    LSHM_DEF(int, shmem_##N##_fcollect, (shmem_team_t team, T * dest, const T *source, size_t nelems)) \
    {                                                                                              \
        TEAMSET(team, s);                                                                          \
        lshm_collect(CALL, &s, dest, source, nelems * sizeof(T), true);                            \
        return 0;                                                                                  \
    }                                                                                              \
    LSHM_DEF(int, shmem_##N##_alltoall, (shmem_team_t team, T * dest, const T *source, size_t nelems)) \
    {                                                                                              \
        TEAMSET(team, s);                                                                          \
        lshm_alltoalls(CALL, &s, dest, source, 1, 1, nelems, sizeof(T));                           \
        return 0;                                                                                  \
    }                                                                                              \
    LSHM_DEF(int, shmem_##N##_alltoalls,                                                           \
             (shmem_team_t team, T * dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems)) \
    {                                                                                              \
        TEAMSET(team, s);                                                                          \
        lshm_alltoalls(CALL, &s, dest, source, dst, sst, nelems, sizeof(T));                       \
        return 0;                                                                                  \
    }
_LSHM_RMA_TYPES(DEF_TCOLL)

LSHM_DEF(int, shmem_broadcastmem, (shmem_team_t team, void *dest, const void *source, size_t nelems, int PE_root))
{
    TEAMSET(team, s);
    lshm_broadcast(CALL, &s, dest, source, nelems, PE_root, true);
    return 0;
}
LSHM_DEF(int, shmem_collectmem, (shmem_team_t team, void *dest, const void *source, size_t nelems))
{
    TEAMSET(team, s);
    lshm_collect(CALL, &s, dest, source, nelems, false);
    return 0;
}
LSHM_DEF(int, shmem_fcollectmem, (shmem_team_t team, void *dest, const void *source, size_t nelems))
{
    TEAMSET(team, s);
    lshm_collect(CALL, &s, dest, source, nelems, true);
    return 0;
}
LSHM_DEF(int, shmem_alltoallmem, (shmem_team_t team, void *dest, const void *source, size_t nelems))
{
    TEAMSET(team, s);
    lshm_alltoalls(CALL, &s, dest, source, 1, 1, nelems, 1);
    return 0;
}
LSHM_DEF(int, shmem_alltoallsmem,
         (shmem_team_t team, void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems))
{
    TEAMSET(team, s);
    lshm_alltoalls(CALL, &s, dest, source, dst, sst, nelems, 1);
    return 0;
}

/* ---- active-set collectives (deprecated) ---- */

#define DEF_ASET(B, U)                                                                             \
    LSHM_DEF(void, shmem_broadcast##B, (void *dest, const void *source, size_t nelems, int PE_root, int PE_start, \
                                        int logPE_stride, int PE_size, long *pSync))               \
    {                                                                                              \
        (void)pSync;                                                                               \
        lshm_require_init(CALL);                                                                   \
        lshm_set_t s = lshm_aset(CALL, PE_start, logPE_stride, PE_size);                           \
        lshm_broadcast(CALL, &s, dest, source, nelems * U, PE_root, false);                        \
    }                                                                                              \
    LSHM_DEF(void, shmem_collect##B, (void *dest, const void *source, size_t nelems, int PE_start,  \
                                      int logPE_stride, int PE_size, long *pSync))                 \
    {                                                                                              \
        (void)pSync;                                                                               \
        lshm_require_init(CALL);                                                                   \
        lshm_set_t s = lshm_aset(CALL, PE_start, logPE_stride, PE_size);                           \
        lshm_collect(CALL, &s, dest, source, nelems * U, false);                                   \
    }                                                                                              \
    LSHM_DEF(void, shmem_fcollect##B, (void *dest, const void *source, size_t nelems, int PE_start, \
                                       int logPE_stride, int PE_size, long *pSync))                \
    {                                                                                              \
        (void)pSync;                                                                               \
        lshm_require_init(CALL);                                                                   \
        lshm_set_t s = lshm_aset(CALL, PE_start, logPE_stride, PE_size);                           \
        lshm_collect(CALL, &s, dest, source, nelems * U, true);                                    \
    }                                                                                              \
    LSHM_DEF(void, shmem_alltoall##B, (void *dest, const void *source, size_t nelems, int PE_start, \
                                       int logPE_stride, int PE_size, long *pSync))                \
    {                                                                                              \
        (void)pSync;                                                                               \
        lshm_require_init(CALL);                                                                   \
        lshm_set_t s = lshm_aset(CALL, PE_start, logPE_stride, PE_size);                           \
        lshm_alltoalls(CALL, &s, dest, source, 1, 1, nelems, U);                                   \
    }                                                                                              \
    LSHM_DEF(void, shmem_alltoalls##B, (void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, \
                                        size_t nelems, int PE_start, int logPE_stride, int PE_size, long *pSync)) \
    {                                                                                              \
        (void)pSync;                                                                               \
        lshm_require_init(CALL);                                                                   \
        lshm_set_t s = lshm_aset(CALL, PE_start, logPE_stride, PE_size);                           \
        lshm_alltoalls(CALL, &s, dest, source, dst, sst, nelems, U);                               \
    }
DEF_ASET(32, 4)
DEF_ASET(64, 8)
