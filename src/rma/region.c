/* Added regions (locus_rma_region_add): memory outside the heap that every
 * process exposes with the same length at its own address, e.g. a PIE
 * program's data and bss. On this node they are reached by CMA
 * (process_vm_writev/readv at the owner's address); the NIC path addresses
 * the heap only (the rdma layer's operations carry the heap's key), so other
 * nodes' regions are refused with LOCUS_ERR_UNSUPPORTED. */
#include "rma/rma_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "core/error.h"

locus_status_t locus_rma_region_add(locus_rma_t *r, void *base, size_t len, int *id)
{
    if (!r || !base || !len || !id)
        return lc_err(LOCUS_ERR_INVALID, "rma region_add(%p, %zu): expected a handle, a base, a length > 0 and id",
                      base, len);
    uint64_t mine[2] = {(uintptr_t)base, len}, *all = calloc((size_t)r->size * 2, sizeof *all);
    rma_region_t *g = realloc(r->regions, sizeof *g * (size_t)(r->nregions + 1));
    if (!all || !g) {
        free(all);
        if (g)
            r->regions = g;
        return lc_err(LOCUS_ERR_NO_MEMORY, "rma region_add: tables for %d processes", r->size);
    }
    r->regions = g;
    locus_status_t st = locus_boot_allgather(r->boot, mine, sizeof mine, all);
    for (int q = 0; !st && q < r->size; q++)
        if (all[2 * q + 1] != len)
            st = lc_err(LOCUS_ERR_INVALID, "rma region_add: rank %d exposes %llu bytes, this process (rank %d) "
                        "%zu: the same length is needed everywhere", q, (unsigned long long)all[2 * q + 1], r->rank,
                        len);
    if (st) {
        free(all);
        return st;
    }
    rma_region_t *rg = &r->regions[r->nregions];
    rg->mine = base;
    rg->len = len;
    rg->bases = all; /* bases at even indexes */
    *id = r->nregions++;
    return LOCUS_OK;
}

locus_status_t rma_region_xfer(locus_rma_t *r, int rank, int region, uint64_t off, void *local, size_t len,
                               bool put)
{
    rma_region_t *rg = &r->regions[region];
    const rma_peer_t *p = &r->peers[rank];
    char *remote = (char *)(uintptr_t)rg->bases[2 * rank] + off;
    if (rank == r->rank) {
        memmove(put ? remote : local, put ? local : remote, len);
        return LOCUS_OK;
    }
    if (p->node != r->node)
        return lc_err(LOCUS_ERR_UNSUPPORTED, "rma %s to region %d of rank %d on node %d: added regions are reached "
                      "on this node only (CMA); use the symmetric heap across nodes", put ? "put" : "get", region,
                      rank, p->node);
    for (size_t done = 0; done < len;) {
        struct iovec l = {(char *)local + done, len - done}, rv = {remote + done, len - done};
        ssize_t n = put ? process_vm_writev(p->pid, &l, 1, &rv, 1, 0) : process_vm_readv(p->pid, &l, 1, &rv, 1, 0);
        if (n <= 0) {
            int e = n < 0 ? errno : EIO;
            if (e == ESRCH)
                return rma_fail_rank(r, rank, lc_err(LOCUS_ERR_PEER_FAILED, "process %d is gone", (int)p->pid));
            return lc_err_errno(e == EPERM ? LOCUS_ERR_PERMISSION : LOCUS_ERR_SYSTEM, e,
                                "rma %s to region %d of rank %d (pid %d) by %s (kernel.yama.ptrace_scope must allow "
                                "it)", put ? "put" : "get", region, rank, (int)p->pid,
                                put ? "process_vm_writev" : "process_vm_readv");
        }
        done += (size_t)n;
    }
    if (put)
        r->stats.puts_local++;
    else
        r->stats.gets_local++;
    r->stats.bytes_local += len;
    return LOCUS_OK;
}

void rma_regions_free(locus_rma_t *r)
{
    for (int i = 0; i < r->nregions; i++)
        free(r->regions[i].bases);
    free(r->regions);
    r->regions = NULL;
    r->nregions = 0;
}
