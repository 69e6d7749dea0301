/* GID selection: which entry of the port's GID table the QPs use. Never a
 * hard-coded index: RoCE devices list one GID per (netdev address, RoCE
 * version), in an order that depends on when addresses appeared (Soft-RoCE on
 * a 1500-byte eth0: index 0 = RoCE v1 fe80::, 1 = RoCE v2 fe80::, then the
 * IPv4-mapped pair ...). The type comes from ibv_query_gid_ex, else from
 * sysfs gid_attrs/types (kernels and providers without the ioctl). */
#include "rdma/rdma_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "core/error.h"
#include "core/sysfs.h"

static bool is_zero(const uint8_t *g)
{
    static const uint8_t z[16];
    return !memcmp(g, z, 16);
}

static bool is_v4_mapped(const uint8_t *g)
{
    static const uint8_t pre[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    return !memcmp(g, pre, 12);
}

static bool is_link_local(const uint8_t *g) { return g[0] == 0xfe && (g[1] & 0xc0) == 0x80; }

/* choice: on Ethernet (RoCE) prefer RoCE v2 over IPv4 (routable, what
 * rdma_cm and perftest -x pick for IPv4 fabrics), then RoCE v2 over a global
 * IPv6 address, then RoCE v2 link-local, then RoCE v1 (one L2 segment only),
 * then an entry of unknown type. InfiniBand: the first non-empty GID. Ties
 * go to the lowest index. */
static int score(const rdma_gid_entry_t *e, int link_layer)
{
    if (is_zero(e->raw))
        return 0;
    if (link_layer != RDMA_LL_ETH)
        return e->type == RDMA_GID_IB || e->type == RDMA_GID_UNKNOWN ? 1 : 0;
    switch (e->type) {
    case RDMA_GID_ROCE_V2:
        return is_v4_mapped(e->raw) ? 6 : is_link_local(e->raw) ? 4 : 5;
    case RDMA_GID_ROCE_V1: return 2;
    case RDMA_GID_UNKNOWN: return 1;
    default: return 0;
    }
}

int rdma_gid_pick(const rdma_gid_entry_t *e, int n, int link_layer)
{
    int best = -1, best_score = 0;
    for (int i = 0; i < n; i++) {
        int s = score(&e[i], link_layer);
        if (s > best_score) {
            best = i;
            best_score = s;
        }
    }
    return best;
}

const char *rdma_gid_type_name(int type)
{
    switch (type) {
    case RDMA_GID_IB: return "IB";
    case RDMA_GID_ROCE_V1: return "RoCE v1";
    case RDMA_GID_ROCE_V2: return "RoCE v2";
    default: return "unknown type";
    }
}

void rdma_gid_text(const uint8_t gid[16], char *buf, size_t len)
{
    if (!inet_ntop(AF_INET6, gid, buf, (socklen_t)len))
        snprintf(buf, len, "?");
}

/* The kernel writes "IB/RoCE v1" or "RoCE v2"; an empty entry reads EINVAL. */
int rdma_gid_sysfs_type(const char *root, const char *dev, int port, int index, int link_layer)
{
    char path[512], line[64];
    snprintf(path, sizeof path, "%s/class/infiniband/%s/ports/%d/gid_attrs/types/%d", root, dev, port, index);
    if (!lc_read_line(path, line, sizeof line))
        return RDMA_GID_UNKNOWN;
    if (strstr(line, "v2"))
        return RDMA_GID_ROCE_V2;
    if (strstr(line, "v1") || strstr(line, "IB"))
        return link_layer == RDMA_LL_ETH ? RDMA_GID_ROCE_V1 : RDMA_GID_IB;
    return RDMA_GID_UNKNOWN;
}

/* One table entry: ibv_query_gid_ex (type included), else ibv_query_gid +
 * sysfs. An empty entry comes back zeroed. */
static void read_entry(rdma_md_t *md, int i, rdma_gid_entry_t *e, bool *ex_ok)
{
    memset(e, 0, sizeof *e);
    e->type = RDMA_GID_UNKNOWN;
    if (*ex_ok) {
        struct ibv_gid_entry x;
        int rc = ibv_query_gid_ex(md->ctx, (uint32_t)md->info.port, (uint32_t)i, &x, 0);
        if (rc == 0) {
            memcpy(e->raw, x.gid.raw, 16);
            e->type = x.gid_type == IBV_GID_TYPE_ROCE_V2 ? RDMA_GID_ROCE_V2
                    : x.gid_type == IBV_GID_TYPE_ROCE_V1 ? RDMA_GID_ROCE_V1 : RDMA_GID_IB;
            return;
        }
        if (rc != EOPNOTSUPP && rc != ENOSYS && rc != EPROTONOSUPPORT)
            return; /* ENODATA etc.: an empty entry */
        *ex_ok = false;
        lc_note_once(&md->notes, "ibv_query_gid_ex unsupported: GID types from sysfs gid_attrs");
    }
    union ibv_gid g;
    if (ibv_query_gid(md->ctx, (uint8_t)md->info.port, i, &g))
        return;
    memcpy(e->raw, g.raw, 16);
    if (!is_zero(e->raw))
        e->type = rdma_gid_sysfs_type("/sys", md->devname, md->info.port, i, md->info.link_layer);
}

locus_status_t rdma_gid_select(rdma_md_t *md, int want, int gid_tbl_len)
{
    if (gid_tbl_len <= 0)
        return lc_err(LOCUS_ERR_NO_DEVICE, "%s port %d: empty GID table", md->devname, md->info.port);
    if (want >= gid_tbl_len)
        return lc_err(LOCUS_ERR_RANGE, "LOCUS_RDMA_GID_INDEX=%d: %s port %d has GID indexes [0, %d)", want,
                      md->devname, md->info.port, gid_tbl_len);
    int n = gid_tbl_len > 256 ? 256 : gid_tbl_len; /* RoCE tables are short; IB uses index 0 */
    rdma_gid_entry_t e[256];
    bool ex_ok = true;
    int first = want >= 0 ? want : 0, last = want >= 0 ? want + 1 : n;
    for (int i = first; i < last; i++)
        read_entry(md, i, &e[i - first], &ex_ok);
    int pick = want >= 0 ? (is_zero(e[0].raw) ? -1 : 0) : rdma_gid_pick(e, last - first, md->info.link_layer);
    if (pick < 0)
        return want >= 0 ? lc_err(LOCUS_ERR_INVALID, "LOCUS_RDMA_GID_INDEX=%d: entry %d of %s port %d is empty",
                                  want, want, md->devname, md->info.port)
                         : lc_err(LOCUS_ERR_NO_DEVICE,
                                  "%s port %d: no usable GID among %d entries (RoCE: does the netdev have an "
                                  "address?)", md->devname, md->info.port, n);
    const rdma_gid_entry_t *g = &e[pick];
    md->info.gid_index = first + pick;
    md->info.gid_type = g->type;
    memcpy(md->info.gid, g->raw, 16);
    char txt[64];
    rdma_gid_text(g->raw, txt, sizeof txt);
    lc_note(&md->notes, "GID index %d (%s %s)%s", md->info.gid_index, rdma_gid_type_name(g->type), txt,
            want >= 0 ? ": LOCUS_RDMA_GID_INDEX" : "");
    if (md->info.link_layer == RDMA_LL_ETH && g->type != RDMA_GID_ROCE_V2)
        lc_note(&md->notes, "no RoCE v2 GID: %s is not routable beyond one L2 segment",
                rdma_gid_type_name(g->type));
    return LOCUS_OK;
}
