/* rdma attributes: defaults and LOCUS_RDMA_* from the tunables table. */
#include "rdma/rdma.h"

#include <stddef.h>
#include <string.h>
#include "core/config.h"
#include "core/error.h"

static const lc_tun_bind_t rdma_binds[] = {
    LC_BIND(RDMA_DEVICE, rdma_attr_t, device),
    LC_BIND(RDMA_PORT, rdma_attr_t, port),
    LC_BIND(RDMA_GID_INDEX, rdma_attr_t, gid_index),
    LC_BIND(RDMA_MTU, rdma_attr_t, mtu),  /* choice index = enum ibv_mtu (auto = 0) */
    LC_BIND(RDMA_SQ_DEPTH, rdma_attr_t, sq_depth),
    LC_BIND(RDMA_CQ_DEPTH, rdma_attr_t, cq_depth),
    LC_BIND(RDMA_SIGNAL, rdma_attr_t, signal_every),
    LC_BIND(RDMA_INLINE, rdma_attr_t, inline_max),
    LC_BIND(RDMA_BOUNCE_SIZE, rdma_attr_t, bounce_size),
    LC_BIND(RDMA_BOUNCE_COUNT, rdma_attr_t, bounce_count),
    LC_BIND(RDMA_TIMEOUT, rdma_attr_t, timeout),
    LC_BIND(RDMA_RETRY, rdma_attr_t, retry),
    LC_BIND(RDMA_RD_ATOMIC, rdma_attr_t, rd_atomic),
    LC_BIND(RDMA_STALL, rdma_attr_t, stall_s),
};

void rdma_attr_init(rdma_attr_t *a)
{
    memset(a, 0, sizeof *a);
    /* the table's defaults always parse (tests/unit/test_rdma.cc checks) */
    (void)lc_tun_load(rdma_binds, sizeof rdma_binds / sizeof *rdma_binds, a, sizeof *a, LC_TUN_DEFAULTS);
}

locus_status_t rdma_attr_from_env(rdma_attr_t *a)
{
    return lc_tun_load(rdma_binds, sizeof rdma_binds / sizeof *rdma_binds, a, sizeof *a, LC_TUN_ENV);
}

/* For structs filled by hand: the same bounds as the LOCUS_RDMA_* lines of
 * tunables.def (which check the environment). */
locus_status_t rdma_attr_check(const rdma_attr_t *a)
{
    if (!a)
        return lc_err(LOCUS_ERR_INVALID, "rdma attr NULL: expected attributes from rdma_attr_init");
#define RANGE(f, lo, hi)                                                                              \
    if ((long long)a->f < (lo) || (long long)a->f > (hi))                                             \
        return lc_err(LOCUS_ERR_RANGE, "rdma attr " #f " = %lld: expected [%lld, %lld]", (long long)a->f, \
                      (long long)(lo), (long long)(hi));
    RANGE(port, 0, 255)
    RANGE(gid_index, -1, 65535)
    RANGE(mtu, 0, 5)
    RANGE(sq_depth, 16, 32768)
    RANGE(cq_depth, 64, 4194304)
    RANGE(signal_every, 1, 1024)
    RANGE(inline_max, 0, 65536)
    RANGE(bounce_size, 64, 1048576)
    RANGE(bounce_count, 1, 65536)
    RANGE(timeout, 1, 31)
    RANGE(retry, 0, 6)
    RANGE(rd_atomic, 1, 255)
#undef RANGE
    if (!(a->stall_s >= 0.1 && a->stall_s <= 86400))
        return lc_err(LOCUS_ERR_RANGE, "rdma attr stall_s = %g: expected [0.1, 86400] seconds", a->stall_s);
    return LOCUS_OK;
}

/* The arithmetic and the choice of defaults: ep.c, "timeouts". */
uint64_t rdma_detect_ns(int timeout, int retry)
{
    if (timeout < 0 || timeout > 31 || retry < 0)
        return 0;
    return (uint64_t)(retry + 1) * (4096ull << timeout);
}
