/* The RMA engine: symmetric address translation (heap, then the data
 * segment), then either one copy into or out of the peer's copy mapped here
 * (the copy module's kernels; self included) or locus rma's NIC path; the
 * ordering routines (1.6's pe_quiet too); shmem_ptr, shmem_team_ptr and the
 * accessibility queries. */
#include "shmem/shmem_internal.h"

#include <stdio.h>

int lshm_locate(const char *call, const void *sym, size_t len, int pe, uint64_t *off)
{
    lshm_check_pe(call, pe);
    uintptr_t a = (uintptr_t)sym;
    for (int r = 0; r < LSHM_NREGIONS; r++) {
        const lshm_region_t *g = &lshm.reg[r];
        uintptr_t b = (uintptr_t)g->base;
        if (g->len && a >= b && a - b < g->len) {
            uint64_t o = a - b;
            if (r == LSHM_HEAP && o < lshm.reserve)
                break; /* the library's own words, never the user's */
            if (len > g->len - o)
                lshm_fatal(call, "%zu bytes at %p on PE %d run past the end of the symmetric %s (%llu bytes "
                           "from %p)", len, sym, pe, r == LSHM_HEAP ? "heap" : "data segment",
                           (unsigned long long)g->len, (void *)g->base);
            *off = o;
            return r;
        }
    }
    lshm_fatal(call, "address %p (PE %d) is not symmetric: not in the symmetric heap [%p, +%llu) nor in the "
               "program's global and static variables [%p, +%llu)", sym, pe,
               (void *)(lshm.reg[LSHM_HEAP].base + lshm.reserve),
               (unsigned long long)(lshm.reg[LSHM_HEAP].len - lshm.reserve), (void *)lshm.reg[LSHM_DATA].base,
               (unsigned long long)lshm.reg[LSHM_DATA].len);
}

static void nic_failed(const char *call, locus_status_t st, int pe, const void *addr)
{
    char what[200];
    snprintf(what, sizeof what, "to PE %d at %p%s", pe, addr,
             st == LOCUS_ERR_UNSUPPORTED ? " (a global or static variable of a PE on another node: locus rma "
                                           "reaches only the symmetric heap there for now; use shmem_malloc)"
                                         : "");
    lshm_fatal_status(call, st, what);
}

/* One transfer by locus rma: over the NIC, or (mapped) a large put that rma
 * may share. What is left in flight is completed by the next quiet or fence:
 * a NIC put (its source is free, not its delivery), any _nbi one; a mapped
 * _nbi put is also completed before this PE's next other operation. */
static void through_rma(const char *call, void *sym, void *local, size_t len, int pe, bool put, bool nbi,
                        bool mapped)
{
    lshm_lock();
    locus_status_t st = put ? (nbi ? locus_rma_put_nbi(lshm.rma, pe, sym, local, len)
                                   : locus_rma_put(lshm.rma, pe, sym, local, len))
                            : (nbi ? locus_rma_get_nbi(lshm.rma, pe, local, sym, len)
                                   : locus_rma_get(lshm.rma, pe, local, sym, len));
    lshm_unlock();
    if (st)
        nic_failed(call, st, pe, sym);
    if (nbi || (put && !mapped))
        __atomic_store_n(&lshm.nic_pending, true, __ATOMIC_RELAXED);
    if (put && nbi && mapped)
        __atomic_store_n(&lshm.rma_puts_pending, true, __ATOMIC_RELAXED);
}

void lshm_settle(void)
{
    if (__atomic_load_n(&lshm.rma_puts_pending, __ATOMIC_RELAXED))
        lshm_fence();
}

/* A put into mapped memory goes through locus_copy_polled: the target may be
 * waiting on a word of it, and shmem_wait_until "must not return before the
 * update of the memory indicated by ivar is fully complete" (1.5, 9.10.2);
 * with memcpy a one-element put stored its word twice and the Quadrics sping
 * ping-pong hung (copy.h says why). */
void lshm_put_mapped(char *p, const void *src, size_t len)
{
    locus_copy_polled(p, src, len, LOCUS_COPY_HINT_NT_DEST);
}

void lshm_put(const char *call, void *dest, const void *src, size_t len, int pe, bool nbi)
{
    if (!len)
        return;
    uint64_t off;
    int r = lshm_locate(call, dest, len, pe, &off);
    char *p = lshm.reg[r].peer[pe] ? lshm.reg[r].peer[pe] + off : NULL;
    if (p && len >= LSHM_RMA_PUT_MIN && r == LSHM_HEAP && pe != lshm.me) {
        through_rma(call, dest, (void *)src, len, pe, true, nbi, true);
        return;
    }
    lshm_settle();
    if (p) {
        if (pe != lshm.me)
            lshm_put_mapped(p, src, len);
        else if ((char *)src < p + len && p < (const char *)src + len)
            memmove(p, src, len); /* overlapping put to self */
        else
            locus_copy_polled(p, src, len, LOCUS_COPY_HINT_NONE);
        return;
    }
    through_rma(call, dest, (void *)src, len, pe, true, nbi, false);
}

void lshm_get(const char *call, void *dest, const void *src, size_t len, int pe, bool nbi)
{
    if (!len)
        return;
    lshm_settle();
    uint64_t off;
    int r = lshm_locate(call, src, len, pe, &off);
    const char *p = lshm.reg[r].peer[pe] ? lshm.reg[r].peer[pe] + off : NULL;
    if (p) {
        if (pe == lshm.me && (char *)dest < p + len && p < (char *)dest + len)
            memmove(dest, p, len);
        else
            locus_copy(dest, p, len, LOCUS_COPY_HINT_NONE);
        return;
    }
    through_rma(call, (void *)src, dest, len, pe, false, nbi, false);
}

/* Element copies of a constant size (a switch so that each is one move). */
static inline void copy_elem(char *d, const char *s, size_t esz)
{
    switch (esz) {
    case 1: *d = *s; break;
    case 2: memcpy(d, s, 2); break;
    case 4: memcpy(d, s, 4); break;
    case 8: memcpy(d, s, 8); break;
    case 16: memcpy(d, s, 16); break;
    default: memcpy(d, s, esz);
    }
}

void lshm_iput(const char *call, void *dest, const void *src, ptrdiff_t dst, ptrdiff_t sst, size_t n, size_t esz,
               int pe)
{
    if (!n)
        return;
    /* the whole strided span must be symmetric (first and last element) */
    lshm_settle();
    char *first = lshm_mapped(call, dest, esz, pe);
    lshm_mapped(call, (char *)dest + (ptrdiff_t)(n - 1) * dst * (ptrdiff_t)esz, esz, pe);
    const char *s = src;
    if (first) {
        for (size_t i = 0; i < n; i++)
            copy_elem(first + (ptrdiff_t)i * dst * (ptrdiff_t)esz, s + (ptrdiff_t)i * sst * (ptrdiff_t)esz, esz);
        return;
    }
    for (size_t i = 0; i < n; i++)
        lshm_put(call, (char *)dest + (ptrdiff_t)i * dst * (ptrdiff_t)esz, s + (ptrdiff_t)i * sst * (ptrdiff_t)esz,
                 esz, pe, false);
}

void lshm_iget(const char *call, void *dest, const void *src, ptrdiff_t dst, ptrdiff_t sst, size_t n, size_t esz,
               int pe)
{
    if (!n)
        return;
    lshm_settle();
    const char *first = lshm_mapped(call, src, esz, pe);
    lshm_mapped(call, (const char *)src + (ptrdiff_t)(n - 1) * sst * (ptrdiff_t)esz, esz, pe);
    char *d = dest;
    if (first) {
        for (size_t i = 0; i < n; i++)
            copy_elem(d + (ptrdiff_t)i * dst * (ptrdiff_t)esz, first + (ptrdiff_t)i * sst * (ptrdiff_t)esz, esz);
        return;
    }
    for (size_t i = 0; i < n; i++)
        lshm_get(call, d + (ptrdiff_t)i * dst * (ptrdiff_t)esz, (const char *)src + (ptrdiff_t)i * sst * (ptrdiff_t)esz,
                 esz, pe, true);
    lshm_quiet();
}

/* Block-strided (1.6): block i is bsize elements at source + i*sst and
 * dest + i*dst (element units), each moved as one contiguous transfer. */
static bool blocks_ok(const char *call, ptrdiff_t dst, ptrdiff_t sst, size_t bsize, size_t nblocks)
{
    if (!bsize || !nblocks)
        return false;
    if (bsize > (size_t)PTRDIFF_MAX || dst < (ptrdiff_t)bsize || sst < (ptrdiff_t)bsize)
        lshm_fatal(call, "block strides dst %td and sst %td must be at least the block size %zu (in elements)", dst,
                   sst, bsize);
    return true;
}

void lshm_iblock(const char *call, void *dest, const void *src, ptrdiff_t dst, ptrdiff_t sst, size_t bsize,
                 size_t nblocks, size_t esz, int pe, bool get)
{
    if (!blocks_ok(call, dst, sst, bsize, nblocks))
        return;
    for (size_t i = 0; i < nblocks; i++) {
        char *d = (char *)dest + (ptrdiff_t)i * dst * (ptrdiff_t)esz;
        const char *s = (const char *)src + (ptrdiff_t)i * sst * (ptrdiff_t)esz;
        if (get)
            lshm_get(call, d, s, bsize * esz, pe, true);
        else
            lshm_put(call, d, s, bsize * esz, pe, false);
    }
    if (get)
        lshm_quiet(); /* ibget returns with dest filled */
}

void lshm_quiet(void)
{
    if (__atomic_load_n(&lshm.nic_pending, __ATOMIC_RELAXED)) {
        lshm_lock();
        __atomic_store_n(&lshm.nic_pending, false, __ATOMIC_RELAXED);
        __atomic_store_n(&lshm.rma_puts_pending, false, __ATOMIC_RELAXED);
        locus_status_t st = locus_rma_flush_all(lshm.rma);
        lshm_unlock();
        if (st)
            lshm_fatal_status("shmem_quiet", st, "completing operations to other nodes");
    }
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/* Copies into mapped heaps are complete when they return (the NT kernels
 * end with sfence), and x86 keeps stores in order: only operations still in
 * flight in locus rma need ordering, which its fence does. NIC requests to
 * another node stay in flight after it (ordered, not completed), so
 * nic_pending stays set for the next quiet. */
void lshm_fence(void)
{
    if (__atomic_load_n(&lshm.nic_pending, __ATOMIC_RELAXED)) {
        lshm_lock();
        __atomic_store_n(&lshm.rma_puts_pending, false, __ATOMIC_RELAXED);
        locus_status_t st = locus_rma_fence(lshm.rma);
        lshm_unlock();
        if (st)
            lshm_fatal_status("shmem_fence", st, "ordering operations to other nodes");
    }
    __atomic_thread_fence(__ATOMIC_RELEASE);
}

void lshm_progress(const char *call)
{
    lshm_lock();
    locus_status_t st = locus_rma_progress(lshm.rma);
    lshm_unlock();
    if (st)
        lshm_fatal_status(call, st, "while waiting");
}

/* ---- ordering routines ---- */

LSHM_DEF(void, shmem_quiet, (void)) { lshm_quiet(); }
LSHM_DEF(void, shmem_fence, (void)) { lshm_fence(); }
LSHM_DEF(void, shmem_ctx_quiet, (shmem_ctx_t ctx))
{
    lshm_ctx(lshm_name(__func__), ctx);
    lshm_quiet();
}
LSHM_DEF(void, shmem_ctx_fence, (shmem_ctx_t ctx))
{
    lshm_ctx(lshm_name(__func__), ctx);
    lshm_fence();
}

/* 1.6: completion to the listed PEs (of the context's team). Every PE's
 * operations complete, which the spec allows (it may act as quiet). */
static void pe_quiet(const char *call, shmem_ctx_t ctx, const int *pes, size_t npes)
{
    lshm_require_init(call);
    lshm_ctx(call, ctx);
    if (!npes)
        return;
    if (!pes)
        lshm_fatal(call, "target_pes is NULL with npes %zu", npes);
    for (size_t i = 0; i < npes; i++)
        (void)lshm_ctx_pe(call, ctx, pes[i]);
    lshm_quiet();
}
LSHM_DEF(void, shmem_pe_quiet, (const int *target_pes, size_t npes))
{
    pe_quiet(lshm_name(__func__), SHMEM_CTX_DEFAULT, target_pes, npes);
}
LSHM_DEF(void, shmem_ctx_pe_quiet, (shmem_ctx_t ctx, const int *target_pes, size_t npes))
{
    pe_quiet(lshm_name(__func__), ctx, target_pes, npes);
}

/* ---- shmem_ptr and accessibility ---- */

static int region_of(const void *addr, uint64_t *off)
{
    uintptr_t a = (uintptr_t)addr;
    for (int r = 0; r < LSHM_NREGIONS; r++) {
        const lshm_region_t *g = &lshm.reg[r];
        uintptr_t b = (uintptr_t)g->base;
        if (g->len && a >= b && a - b < g->len && !(r == LSHM_HEAP && a - b < lshm.reserve)) {
            *off = a - b;
            return r;
        }
    }
    return -1;
}

LSHM_DEF(void *, shmem_ptr, (const void *dest, int pe))
{
    lshm_require_init(lshm_name(__func__));
    uint64_t off;
    int r = region_of(dest, &off);
    if (r < 0 || pe < 0 || pe >= lshm.npes || !lshm.reg[r].peer[pe])
        return NULL;
    return lshm.reg[r].peer[pe] + off;
}

/* 1.6: shmem_ptr with pe numbered in the team; NULL for SHMEM_TEAM_INVALID
 * or a PE outside the team. */
LSHM_DEF(void *, shmem_team_ptr, (shmem_team_t team, const void *dest, int pe))
{
    const char *call = lshm_name(__func__);
    lshm_require_init(call);
    if (team == SHMEM_TEAM_INVALID)
        return NULL;
    const lshm_team_t *t = lshm_team(call, team);
    if (pe < 0 || pe >= t->size)
        return NULL;
    return pshmem_ptr(dest, lshm_team_pe(t, pe));
}

LSHM_DEF(int, shmem_addr_accessible, (const void *addr, int pe))
{
    lshm_require_init(lshm_name(__func__));
    uint64_t off;
    int r = region_of(addr, &off);
    if (r < 0 || pe < 0 || pe >= lshm.npes)
        return 0;
    /* the data segment of another node is reachable once locus rma carries
     * regions over the NIC */
    return r == LSHM_HEAP || lshm.reg[r].peer[pe] || lshm.reg[r].rma_id >= 0;
}

LSHM_DEF(int, shmem_pe_accessible, (int pe))
{
    lshm_require_init(lshm_name(__func__));
    return pe >= 0 && pe < lshm.npes;
}
