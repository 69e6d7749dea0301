/* The NIC side: one memory domain with the heap registered once (static),
 * one interface, one RC endpoint per process that needs one (other nodes;
 * every process, self included, when the NIC is the atomic agent or
 * LOCUS_RMA_ONNODE=nic), the address blobs exchanged through boot. */
#include "rma/rma_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

/* Bring up md, iface and the endpoints; the blob table (RDMA_ADDR_BYTES per
 * rank, zero where no endpoint) goes to *table. */
static locus_status_t open_local(locus_rma_t *r, const bool *need, uint8_t *table)
{
    rdma_attr_t a;
    rdma_attr_init(&a);
    locus_status_t st = rdma_attr_from_env(&a);
    if (st || (st = rdma_md_open(&a, &r->md)) || (st = rdma_md_reg_heap(r->md, r->base, r->obj_size)) ||
        (st = rdma_iface_create(r->md, &r->ifc)))
        return st;
    r->cache = rdma_md_cache(r->md);
    r->bounce = (a.bounce_size + 63) & ~63ull; /* the pool's buffer size (md.c) */
    uint64_t max_msg = rdma_md_info(r->md)->max_msg;
    r->max_chunk = max_msg && max_msg < (1ull << 30) ? max_msg : (1ull << 30);
    for (int q = 0; q < r->size; q++) {
        if (!need[q])
            continue;
        if ((st = rdma_ep_create(r->ifc, &r->peers[q].ep)))
            return st;
        rdma_ep_addr(r->peers[q].ep, table + (size_t)q * RDMA_ADDR_BYTES);
    }
    return LOCUS_OK;
}

/* LOCUS_RMA_REG=cache is only safe when the cache learns that memory went
 * away (the hooks) or the registrations follow the page tables (ODP). */
static void settle_reg(locus_rma_t *r)
{
    locus_reg_stats_t rs;
    if (r->reg != LOCUS_RMA_REG_CACHE || locus_reg_stats(r->cache, &rs) != LOCUS_OK || rs.hooks || rs.odp)
        return;
    r->reg = LOCUS_RMA_REG_STATIC;
    lc_note(&r->notes, "LOCUS_RMA_REG=cache: the memory hooks are absent (link liblocus_hooks or LD_PRELOAD it) and "
            "the device has no ODP: buffers outside the heap go through the bounce buffers (static), so that one "
            "freed and reallocated at the same address still sends its new bytes");
}

locus_status_t rma_nic_setup(locus_rma_t *r, const bool *need)
{
    size_t row = (size_t)r->size * RDMA_ADDR_BYTES;
    uint8_t *mine = calloc(1, row), *all = NULL;
    if (!mine)
        return lc_err(LOCUS_ERR_NO_MEMORY, "rma init: blob table of %zu bytes", row);
    locus_status_t st = open_local(r, need, mine);
    if ((st = rma_agree(r, st, "rma init (NIC)")))
        goto out;
    /* every process publishes one blob per peer: an all-to-all done as an
     * allgather of size^2 blobs (see docs/ARCHITECTURE.md, rma: scaling) */
    if (!(all = malloc(row * (size_t)r->size))) {
        st = lc_err(LOCUS_ERR_NO_MEMORY, "rma init: %d x %zu bytes of blobs", r->size, row);
        goto out;
    }
    if ((st = locus_boot_allgather(r->boot, mine, row, all)))
        goto out;
    for (int q = 0; q < r->size && !st; q++)
        if (r->peers[q].ep)
            st = rdma_ep_connect(r->peers[q].ep, all + (size_t)q * row + (size_t)r->rank * RDMA_ADDR_BYTES);
    /* nobody posts before every QP is ready to receive */
    st = rma_agree(r, st, "rma init (connecting)");
    if (!st) {
        settle_reg(r);
        const rdma_caps_t *c = rdma_iface_caps(r->ifc);
        const rdma_md_info_t *mi = rdma_md_info(r->md);
        int eps = 0;
        for (int q = 0; q < r->size; q++)
            eps += r->peers[q].ep != NULL;
        lc_note(&r->notes, "NIC: %s port %d, %d endpoint%s, inline %u B, bounce %llu B, atomics %s%s", mi->device,
                mi->port, eps, eps == 1 ? "" : "s", c->max_inline, (unsigned long long)r->bounce,
                c->atomics ? "usable" : "unusable", c->atomic_bswap ? " (byte-swapped replies)" : "");
        if (!r->cpu_atomics && !c->atomics)
            lc_note(&r->notes, "the NIC's atomics failed their self-test: locus_rma_amo returns "
                    "LOCUS_ERR_UNSUPPORTED");
    }
out:
    free(mine);
    free(all);
    return st;
}

void rma_nic_teardown(locus_rma_t *r)
{
    for (int q = 0; r->peers && q < r->size; q++) {
        rdma_ep_destroy(r->peers[q].ep);
        r->peers[q].ep = NULL;
    }
    rdma_iface_destroy(r->ifc);
    rdma_md_close(r->md); /* deregisters the heap and whatever the cache holds */
    r->ifc = NULL;
    r->md = NULL;
    r->cache = NULL;
}
