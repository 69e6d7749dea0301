/* Reductions: the team forms (1.5, TYPE_OP_reduce) and the active-set forms
 * (TYPE_OP_to_all; pWrk and pSync are not needed). Up to LSHM_EAGER bytes
 * through the channel boxes (reduce_eager). Larger: after an entry sync
 * every member combines all members' sources itself, reading them straight
 * from the mapped heaps on this node (a get into a bounce buffer from other
 * nodes), in member order, so every PE computes the same bits (floating
 * point included); an exit sync keeps each source in place until all have
 * read it. In-place reductions (dest == source) keep the result privately
 * until then. Scans (1.6) are the same with fewer members combined. */
#include "shmem/shmem_internal.h"

#include <stdlib.h>

#define CALL lshm_name(__func__)
#define CHUNK (64u * 1024u)

/* Up to LSHM_EAGER bytes: every member's source goes into every other
 * member's box, and each member combines them in member order itself (the
 * same bits everywhere); no sync, and the source is reusable at once. */
static void reduce_eager(const char *call, const lshm_set_t *s, void *dest, const void *src, size_t bytes,
                         size_t esz, lshm_combine_fn fn, int count)
{
    _Alignas(max_align_t) unsigned char acc[LSHM_EAGER]; /* dest may be the source */
    if (count == 0)
        memset(acc, 0, bytes); /* an exclusive scan's first member */
    for (int k = 1; k < s->size; k++)
        lshm_chan_box_send(call, s->slot, lshm_set_pe(s, (s->my_idx + k) % s->size), src, bytes);
    for (int i = 0; i < s->size; i++) {
        int pe = lshm_set_pe(s, i);
        const void *p = i == s->my_idx ? src : lshm_chan_box_wait(call, s->slot, pe);
        if (i == 0 && count > 0)
            memcpy(acc, p, bytes);
        else if (i < count)
            fn(acc, p, bytes / esz);
        if (i != s->my_idx)
            lshm_chan_box_done(call, s->slot, pe);
    }
    memcpy(dest, acc, bytes);
}

/* dest = the combination of the sources of the set's first `count` members
 * (all of them for a reduction, those up to and including or before this PE
 * for a scan; none: zeros). */
static void combine_members(const char *call, const lshm_set_t *s, void *dest, const void *src, size_t n,
                            size_t esz, lshm_combine_fn fn, int count)
{
    size_t bytes = n * esz;
    if (!bytes)
        return;
    lshm_check_sym(call, dest, bytes);
    lshm_check_sym(call, src, bytes);
    if (lshm_chan_eager(s->slot, bytes)) {
        reduce_eager(call, s, dest, src, bytes, esz, fn, count);
        return;
    }
    bool overlap = (char *)dest < (const char *)src + bytes && (const char *)src < (char *)dest + bytes;
    char *out = overlap ? malloc(bytes) : dest;
    char *bounce = malloc(CHUNK);
    if (!out || !bounce)
        lshm_fatal(call, "out of memory for a %zu-byte reduction", bytes);
    lshm_set_sync(call, s);
    size_t step = CHUNK / esz * esz;
    for (size_t o = 0; o < bytes; o += step) {
        size_t len = bytes - o < step ? bytes - o : step;
        if (count == 0)
            memset(out + o, 0, len);
        for (int i = 0; i < count; i++) {
            int pe = lshm_set_pe(s, i);
            const char *p = lshm_mapped(call, (const char *)src + o, len, pe);
            if (!p) {
                lshm_get(call, bounce, (const char *)src + o, len, pe, false);
                p = bounce;
            }
            if (i == 0)
                memcpy(out + o, p, len);
            else
                fn(out + o, p, len / esz);
        }
    }
    lshm_set_sync(call, s);
    if (overlap) {
        memcpy(dest, out, bytes);
        free(out);
    }
    free(bounce);
}

void lshm_reduce(const char *call, const lshm_set_t *s, void *dest, const void *src, size_t n, size_t esz,
                 lshm_combine_fn fn)
{
    combine_members(call, s, dest, src, n, esz, fn, s->size);
}

void lshm_scan(const char *call, const lshm_set_t *s, void *dest, const void *src, size_t n, size_t esz,
               lshm_combine_fn fn, bool inclusive)
{
    combine_members(call, s, dest, src, n, esz, fn, s->my_idx + (inclusive ? 1 : 0));
}

/* ---- combine functions ---- */

#define CMB(T, N, OP, EXPR)                                                                        \
    static void cmb_##N##_##OP(void *acc, const void *in, size_t n)                                \
    {                                                                                              \
        T *a = acc;                                                                                \
        const T *b = in;                                                                           \
        for (size_t i = 0; i < n; i++)                                                             \
            a[i] = EXPR;                                                                           \
    }
#define CMB_BIT(T, N) CMB(T, N, and, a[i] & b[i]) CMB(T, N, or, a[i] | b[i]) CMB(T, N, xor, a[i] ^ b[i])
#define CMB_MM(T, N) CMB(T, N, max, a[i] > b[i] ? a[i] : b[i]) CMB(T, N, min, a[i] < b[i] ? a[i] : b[i])
#define CMB_AR(T, N) CMB(T, N, sum, a[i] + b[i]) CMB(T, N, prod, a[i] * b[i])
_LSHM_RED_BIT_TYPES(CMB_BIT)
_LSHM_RED_MINMAX_TYPES(CMB_MM)
_LSHM_RED_ARITH_TYPES(CMB_AR)
/* signed types of the active-set bitwise reductions */
_LSHM_TOALL_BIT_TYPES(CMB_BIT)

/* ---- team reductions ---- */

#define DEF_RED(T, N, OP)                                                                          \
    LSHM_DEF(int, shmem_##N##_##OP##_reduce, (shmem_team_t team, T * dest, const T *source, size_t nreduce)) \
    {                                                                                              \
        lshm_require_init(CALL);                                                                   \
        if (!team)                                                                                 \
            return -1;                                                                             \
        lshm_set_t s = lshm_team_set(lshm_team(CALL, team));                                       \
        lshm_reduce(CALL, &s, dest, source, nreduce, sizeof(T), cmb_##N##_##OP);                   \
        return 0;                                                                                  \
    }
#define DEF_RED_BIT(T, N) DEF_RED(T, N, and) DEF_RED(T, N, or) DEF_RED(T, N, xor)
#define DEF_RED_MM(T, N) DEF_RED(T, N, max) DEF_RED(T, N, min)
#define DEF_RED_AR(T, N) DEF_RED(T, N, sum) DEF_RED(T, N, prod)
_LSHM_RED_BIT_TYPES(DEF_RED_BIT)
_LSHM_RED_BIT_SIGNED_TYPES(DEF_RED_BIT)
_LSHM_RED_MINMAX_TYPES(DEF_RED_MM)
_LSHM_RED_ARITH_TYPES(DEF_RED_AR)

/* ---- scans (1.6): sum over the members up to this one, or before it ---- */

#define DEF_SCAN(T, N, KIND, INCL)                                                                 \
    LSHM_DEF(int, shmem_##N##_sum_##KIND, (shmem_team_t team, T * dest, const T *source, size_t nelems)) \
    {                                                                                              \
        lshm_require_init(CALL);                                                                   \
        if (!team)                                                                                 \
            return -1;                                                                             \
        lshm_set_t s = lshm_team_set(lshm_team(CALL, team));                                       \
        lshm_scan(CALL, &s, dest, source, nelems, sizeof(T), cmb_##N##_sum, INCL);                 \
        return 0;                                                                                  \
    }
#define DEF_SCANS(T, N) DEF_SCAN(T, N, inscan, true) DEF_SCAN(T, N, exscan, false)
_LSHM_RED_ARITH_TYPES(DEF_SCANS)

/* ---- active-set reductions ---- */

#define DEF_TOALL(T, N, OP)                                                                        \
    LSHM_DEF(void, shmem_##N##_##OP##_to_all, (T * dest, const T *source, int nreduce, int PE_start, \
                                                int logPE_stride, int PE_size, T *pWrk, long *pSync)) \
    {                                                                                              \
        (void)pWrk;                                                                                \
        (void)pSync;                                                                               \
        lshm_require_init(CALL);                                                                   \
        if (nreduce < 0)                                                                           \
            lshm_fatal(CALL, "nreduce %d: expected >= 0", nreduce);                               \
        lshm_set_t s = lshm_aset(CALL, PE_start, logPE_stride, PE_size);                           \
        lshm_reduce(CALL, &s, dest, source, (size_t)nreduce, sizeof(T), cmb_##N##_##OP);           \
    }
#define DEF_TOALL_BIT(T, N) DEF_TOALL(T, N, and) DEF_TOALL(T, N, or) DEF_TOALL(T, N, xor)
#define DEF_TOALL_MM(T, N) DEF_TOALL(T, N, max) DEF_TOALL(T, N, min)
#define DEF_TOALL_AR(T, N) DEF_TOALL(T, N, sum) DEF_TOALL(T, N, prod)
_LSHM_TOALL_BIT_TYPES(DEF_TOALL_BIT)
_LSHM_TOALL_MINMAX_TYPES(DEF_TOALL_MM)
_LSHM_TOALL_ARITH_TYPES(DEF_TOALL_AR)
