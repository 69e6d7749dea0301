/* What the device really does, found at iface creation rather than trusted
 * from its attributes: the inline size a QP gets (ibv_query_device does not
 * report it; providers differ) and whether 64-bit atomics work and in which
 * byte order their fetched values arrive (some HCAs reply big-endian; Soft-
 * RoCE's atomic_cap is HCA: atomic against its own atomics only). */
#include "rdma/rdma_internal.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include "core/error.h"

/* The inline size requested, halved until the provider accepts a QP. */
static locus_status_t measure_inline(rdma_iface_t *ifc, rdma_ep_t **ep)
{
    rdma_md_t *md = ifc->md;
    uint32_t want = (uint32_t)md->attr.inline_max;
    for (;;) {
        locus_status_t st = rdma_ep_create_qp(ifc, want, ep);
        if (st == LOCUS_OK)
            break;
        if (want == 0 || (st != LOCUS_ERR_SYSTEM && st != LOCUS_ERR_INVALID && st != LOCUS_ERR_NO_SPACE))
            return st;
        want = want >= 16 ? want / 2 : 0;
    }
    ifc->caps.max_inline = (*ep)->max_inline;
    if (ifc->caps.max_inline < md->attr.inline_max)
        lc_note(&md->notes, "inline data: %u bytes per QP (LOCUS_RDMA_INLINE asked %llu)", ifc->caps.max_inline,
                (unsigned long long)md->attr.inline_max);
    locus_clear_error();
    return LOCUS_OK;
}

#define ST_INIT 0x0102030405060708ull
#define ST_ADD 0x10ull
#define ST_SWAP 0x1112131415161718ull

/* Fetch-add then compare-swap on a word of our own memory through a QP
 * connected to itself; the QP is destroyed here. */
static void atomic_selftest(rdma_iface_t *ifc, rdma_ep_t *ep)
{
    rdma_md_t *md = ifc->md;
    if (md->info.atomic_cap == IBV_ATOMIC_NONE) {
        lc_note(&md->notes, "atomic_cap NONE: no remote atomics");
        rdma_ep_destroy(ep);
        return;
    }
    volatile uint64_t *word = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (word == MAP_FAILED) {
        lc_note(&md->notes, "atomic self-test: mmap failed (errno %d): atomics disabled", errno);
        rdma_ep_destroy(ep);
        return;
    }
    struct ibv_mr *mr = ibv_reg_mr(md->pd, (void *)word, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC |
                                                                IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
    rdma_peer_t self;
    rdma_ep_fill_peer(ep, &self);
    self.heap_base = (uintptr_t)word;
    self.heap_len = 4096;
    self.heap_rkey = mr ? mr->rkey : 0;
    self.atomics = 1;
    uint64_t got_add = 0, got_cas = 0;
    rdma_comp_t c = {0};
    *word = ST_INIT;
    ifc->caps.atomics = true; /* let the two requests through */
    locus_status_t st = mr ? rdma_ep_connect_peer(ep, &self) : lc_err_errno(LOCUS_ERR_SYSTEM, errno, "ibv_reg_mr");
    if (!st)
        st = rdma_fetch_add(ep, 0, ST_ADD, &got_add, &c);
    if (!st)
        st = rdma_cswap(ep, 0, ST_INIT + ST_ADD, ST_SWAP, &got_cas, &c);
    if (!st)
        st = rdma_wait(ifc, &c);
    ifc->caps.atomics = false;
    uint64_t after = *word;
    if (st) {
        lc_note(&md->notes, "atomic self-test failed: %s: atomics disabled", locus_last_error());
    } else if (after != ST_SWAP) {
        lc_note(&md->notes, "atomic self-test: the word reads 0x%016llx, expected 0x%016llx: atomics disabled",
                (unsigned long long)after, (unsigned long long)ST_SWAP);
    } else if (got_add == ST_INIT && got_cas == ST_INIT + ST_ADD) {
        ifc->caps.atomics = true;
    } else if (got_add == __builtin_bswap64(ST_INIT) && got_cas == __builtin_bswap64(ST_INIT + ST_ADD)) {
        ifc->caps.atomics = ifc->caps.atomic_bswap = true;
        lc_note(&md->notes, "atomic replies arrive big-endian: fetched values are swapped");
    } else {
        lc_note(&md->notes, "atomic self-test: fetched 0x%016llx and 0x%016llx, expected 0x%016llx and "
                "0x%016llx: atomics disabled", (unsigned long long)got_add, (unsigned long long)got_cas,
                (unsigned long long)ST_INIT, (unsigned long long)(ST_INIT + ST_ADD));
    }
    if (md->info.atomic_cap == IBV_ATOMIC_HCA && ifc->caps.atomics)
        lc_note_once(&md->notes, "atomic_cap HCA: remote atomics are atomic only against this device's "
                     "atomics, not against CPU atomics on the same word");
    /* the QP goes first: the MR must outlive every request naming it */
    rdma_ep_destroy(ep);
    if (mr)
        ibv_dereg_mr(mr);
    munmap((void *)word, 4096);
    locus_clear_error();
}

locus_status_t rdma_iface_probe(rdma_iface_t *ifc)
{
    rdma_ep_t *ep;
    locus_status_t st = measure_inline(ifc, &ep);
    if (st)
        return st;
    atomic_selftest(ifc, ep);
    return LOCUS_OK;
}
