/* rma attributes: defaults and LOCUS_RMA_* (plus the heap's LOCUS_HEAP_*). */
#include "rma/rma_internal.h"

#include <stddef.h>
#include <string.h>

#include "core/config.h"
#include "core/error.h"

static const lc_tun_bind_t rma_binds[] = {
    LC_BIND(RMA_HEAP_SIZE, locus_rma_attr_t, heap_size),
    LC_BIND(RMA_REG, locus_rma_attr_t, reg),        /* cache|static|none = enum order */
    LC_BIND(RMA_ONNODE, locus_rma_attr_t, nic_only), /* auto = 0, nic = 1 */
    LC_BIND(RMA_HELP, locus_rma_attr_t, help_min),
};

void locus_rma_attr_init(locus_rma_attr_t *a)
{
    if (!a)
        return;
    memset(a, 0, sizeof *a);
    (void)lc_tun_load(rma_binds, sizeof rma_binds / sizeof *rma_binds, a, sizeof *a, LC_TUN_DEFAULTS);
    locus_heap_attr_init(&a->heap);
}

locus_status_t locus_rma_attr_from_env(locus_rma_attr_t *a)
{
    if (!a)
        return lc_err(LOCUS_ERR_INVALID, "rma attr NULL: expected one from locus_rma_attr_init");
    locus_rma_attr_t tmp = *a;
    locus_status_t st = lc_tun_load(rma_binds, sizeof rma_binds / sizeof *rma_binds, &tmp, sizeof tmp, LC_TUN_ENV);
    if (st || (st = locus_heap_attr_from_env(&tmp.heap)))
        return st;
    *a = tmp;
    return LOCUS_OK;
}
