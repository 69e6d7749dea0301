/* The endpoint address blob: what the bootstrap exchanges so that a peer can
 * connect its QP to ours and address our heap. Fixed little-endian layout:
 *
 *   0  u32 magic "LRD1"      4  u8 version, link layer, mtu, rd_atomic
 *   8  u32 qpn              12  u32 psn
 *  16  u16 lid, u8 atomics, u8 0   20  u32 heap rkey
 *  24  gid[16]
 *  40  u64 heap base        48  u64 heap length
 *  56  u64 0 (reserved)
 */
#include "rdma/rdma.h"

#include <string.h>
#include "core/error.h"

#define ADDR_MAGIC 0x3144524cu /* "LRD1" */
#define ADDR_VERSION 1

static void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t get32(const uint8_t *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}
static uint64_t get64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

void rdma_addr_pack(const rdma_peer_t *p, uint8_t out[RDMA_ADDR_BYTES])
{
    memset(out, 0, RDMA_ADDR_BYTES);
    put32(out, ADDR_MAGIC);
    out[4] = ADDR_VERSION;
    out[5] = p->link_layer;
    out[6] = p->mtu;
    out[7] = p->rd_atomic;
    put32(out + 8, p->qpn);
    put32(out + 12, p->psn);
    put16(out + 16, p->lid);
    out[18] = p->atomics ? 1 : 0;
    put32(out + 20, p->heap_rkey);
    memcpy(out + 24, p->gid, 16);
    put64(out + 40, p->heap_base);
    put64(out + 48, p->heap_len);
}

locus_status_t rdma_addr_unpack(const uint8_t in[RDMA_ADDR_BYTES], rdma_peer_t *p)
{
    if (!in || !p)
        return lc_err(LOCUS_ERR_INVALID, "rdma address: NULL blob or output");
    if (get32(in) != ADDR_MAGIC)
        return lc_err(LOCUS_ERR_INVALID, "rdma address: magic 0x%08x, expected 0x%08x (not an endpoint blob)",
                      get32(in), ADDR_MAGIC);
    if (in[4] != ADDR_VERSION)
        return lc_err(LOCUS_ERR_INVALID, "rdma address: version %u, expected %u", in[4], ADDR_VERSION);
    memset(p, 0, sizeof *p);
    p->link_layer = in[5];
    p->mtu = in[6];
    p->rd_atomic = in[7];
    p->qpn = get32(in + 8);
    p->psn = get32(in + 12);
    p->lid = get16(in + 16);
    p->atomics = in[18];
    p->heap_rkey = get32(in + 20);
    memcpy(p->gid, in + 24, 16);
    p->heap_base = get64(in + 40);
    p->heap_len = get64(in + 48);
    if (p->link_layer != RDMA_LL_IB && p->link_layer != RDMA_LL_ETH)
        return lc_err(LOCUS_ERR_INVALID, "rdma address: link layer %u, expected 1 (IB) or 2 (Ethernet)",
                      p->link_layer);
    if (p->mtu < 1 || p->mtu > 5)
        return lc_err(LOCUS_ERR_INVALID, "rdma address: MTU code %u, expected 1..5 (256..4096 bytes)", p->mtu);
    if (p->qpn > 0xffffff || p->psn > 0xffffff)
        return lc_err(LOCUS_ERR_INVALID, "rdma address: QPN 0x%x / PSN 0x%x wider than 24 bits", p->qpn, p->psn);
    if (p->rd_atomic == 0)
        return lc_err(LOCUS_ERR_INVALID, "rdma address: rd_atomic 0, expected >= 1");
    if (p->atomics > 1)
        return lc_err(LOCUS_ERR_INVALID, "rdma address: atomics flag %u, expected 0 or 1", p->atomics);
    if (p->heap_base + p->heap_len < p->heap_base)
        return lc_err(LOCUS_ERR_INVALID, "rdma address: heap [0x%llx, +%llu) wraps around",
                      (unsigned long long)p->heap_base, (unsigned long long)p->heap_len);
    return LOCUS_OK;
}
