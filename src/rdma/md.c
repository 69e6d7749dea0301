/* md: the memory domain — device, port, GID, protection domain, the heap
 * registered once, the registration cache for other local buffers and a
 * small pre-registered pool of bounce buffers and atomic result cells. */
#include "rdma/rdma_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "core/error.h"

static locus_status_t open_device(rdma_md_t *md)
{
    int num = 0;
    errno = 0;
    md->list = ibv_get_device_list(&num);
    const char *want = md->attr.device && *md->attr.device ? md->attr.device : NULL;
    struct ibv_device *dev = NULL;
    for (int i = 0; md->list && i < num && !dev; i++)
        if (!want || !strcmp(ibv_get_device_name(md->list[i]), want))
            dev = md->list[i];
    if (!dev && want)
        return lc_err(LOCUS_ERR_NO_DEVICE, "LOCUS_RDMA_DEVICE=%s: no such RDMA device (%d present)", want, num);
    if (!dev)
        return lc_err(LOCUS_ERR_NO_DEVICE, "no RDMA device (ibv_get_device_list: %d device%s%s%s)", num,
                      num == 1 ? "" : "s", md->list ? "" : ", ", md->list ? "" : strerror(errno));
    snprintf(md->devname, sizeof md->devname, "%s", ibv_get_device_name(dev));
    snprintf(md->info.device, sizeof md->info.device, "%s", md->devname);
    md->ctx = ibv_open_device(dev);
    if (!md->ctx)
        return lc_err_errno(LOCUS_ERR_NO_DEVICE, errno, "ibv_open_device(%s)", md->devname);
    struct ibv_device_attr d;
    if (ibv_query_device(md->ctx, &d))
        return lc_err_errno(LOCUS_ERR_SYSTEM, errno, "ibv_query_device(%s)", md->devname);
    md->info.atomic_cap = d.atomic_cap;
    md->info.max_qp_wr = d.max_qp_wr;
    md->info.max_qp_rd_atom = d.max_qp_rd_atom;
    md->info.max_qp_init_rd_atom = d.max_qp_init_rd_atom;
    /* the iface reads async events in its wait loops: never block there */
    int fl = fcntl(md->ctx->async_fd, F_GETFL);
    if (fl < 0 || fcntl(md->ctx->async_fd, F_SETFL, fl | O_NONBLOCK) < 0)
        return lc_err_errno(LOCUS_ERR_SYSTEM, errno, "%s: async event fd non-blocking", md->devname);
    return LOCUS_OK;
}

static const char *port_state(enum ibv_port_state s)
{
    return s == IBV_PORT_ACTIVE ? "active" : s == IBV_PORT_DOWN ? "down" : s == IBV_PORT_INIT ? "init" : "not active";
}

/* LOCUS_RDMA_PORT, else the first active port. */
static locus_status_t pick_port(rdma_md_t *md, struct ibv_port_attr *pa)
{
    struct ibv_device_attr d;
    if (ibv_query_device(md->ctx, &d))
        return lc_err_errno(LOCUS_ERR_SYSTEM, errno, "ibv_query_device(%s)", md->devname);
    int nports = d.phys_port_cnt;
    if (md->attr.port > nports)
        return lc_err(LOCUS_ERR_RANGE, "LOCUS_RDMA_PORT=%d: %s has ports 1..%d", md->attr.port, md->devname, nports);
    for (int p = md->attr.port ? md->attr.port : 1; p <= nports; p++) {
        if (ibv_query_port(md->ctx, (uint8_t)p, pa))
            return lc_err_errno(LOCUS_ERR_SYSTEM, errno, "ibv_query_port(%s, %d)", md->devname, p);
        if (pa->state == IBV_PORT_ACTIVE) {
            md->info.port = p;
            return LOCUS_OK;
        }
        if (md->attr.port)
            return lc_err(LOCUS_ERR_NO_DEVICE, "LOCUS_RDMA_PORT=%d: port %d of %s is %s", p, p, md->devname,
                          port_state(pa->state));
    }
    return lc_err(LOCUS_ERR_NO_DEVICE, "%s: none of its %d port%s is active (RoCE: is the netdev up?)",
                  md->devname, nports, nports == 1 ? "" : "s");
}

static locus_status_t open_port(rdma_md_t *md)
{
    struct ibv_port_attr pa;
    locus_status_t st = pick_port(md, &pa);
    if (st)
        return st;
    md->info.link_layer = pa.link_layer == IBV_LINK_LAYER_ETHERNET ? RDMA_LL_ETH : RDMA_LL_IB;
    md->info.lid = pa.lid;
    md->info.active_mtu = pa.active_mtu;
    md->info.max_msg = pa.max_msg_sz;
    if (md->info.link_layer == RDMA_LL_IB && pa.lid == 0)
        return lc_err(LOCUS_ERR_NO_DEVICE, "%s port %d: InfiniBand port without a LID (no subnet manager?)",
                      md->devname, md->info.port);
    return rdma_gid_select(md, md->attr.gid_index, pa.gid_tbl_len);
}

/* ---------- pool: bounce buffers + atomic result cells, one MR ---------- */

#define POOL_CELLS 1024 /* 8 KiB: atomics in flight across the md's endpoints */

static locus_status_t pool_open(rdma_md_t *md)
{
    rdma_pool_t *p = &md->pool;
    p->bsize = (uint32_t)((md->attr.bounce_size + 63) & ~63ull);
    p->nbounce = (uint32_t)md->attr.bounce_count;
    p->ncells = POOL_CELLS;
    p->bytes = ((size_t)p->bsize * p->nbounce + (size_t)p->ncells * 8 + 4095) & ~(size_t)4095;
    p->mem = mmap(NULL, p->bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p->mem == MAP_FAILED) {
        p->mem = NULL;
        return lc_err_errno(LOCUS_ERR_NO_MEMORY, errno, "bounce pool: mmap of %zu bytes", p->bytes);
    }
    p->bfree = malloc(sizeof *p->bfree * p->nbounce);
    p->cfree = malloc(sizeof *p->cfree * p->ncells);
    if (!p->bfree || !p->cfree)
        return lc_err(LOCUS_ERR_NO_MEMORY, "bounce pool: free lists");
    for (uint32_t i = 0; i < p->nbounce; i++)
        p->bfree[i] = p->nbounce - 1 - i;
    for (uint32_t i = 0; i < p->ncells; i++)
        p->cfree[i] = p->ncells - 1 - i;
    p->nbfree = p->nbounce;
    p->ncfree = p->ncells;
    /* local use only (sources, READ and atomic destinations): no remote rights */
    p->mr = ibv_reg_mr(md->pd, p->mem, p->bytes, IBV_ACCESS_LOCAL_WRITE);
    if (!p->mr)
        return lc_err_errno(errno == ENOMEM ? LOCUS_ERR_NO_SPACE : LOCUS_ERR_SYSTEM, errno,
                            "bounce pool: ibv_reg_mr of %zu bytes (RLIMIT_MEMLOCK? LOCUS_RDMA_BOUNCE_COUNT/SIZE)",
                            p->bytes);
    return LOCUS_OK;
}

static void pool_close(rdma_md_t *md)
{
    rdma_pool_t *p = &md->pool;
    if (p->mr)
        ibv_dereg_mr(p->mr);
    if (p->mem)
        munmap(p->mem, p->bytes);
    free(p->bfree);
    free(p->cfree);
    memset(p, 0, sizeof *p);
}

int rdma_pool_take_bounce(rdma_md_t *md)
{
    return md->pool.nbfree ? (int)md->pool.bfree[--md->pool.nbfree] : -1;
}

int rdma_pool_take_cell(rdma_md_t *md)
{
    return md->pool.ncfree ? (int)md->pool.cfree[--md->pool.ncfree] : -1;
}

void rdma_pool_give_bounce(rdma_md_t *md, int i) { md->pool.bfree[md->pool.nbfree++] = (uint32_t)i; }
void rdma_pool_give_cell(rdma_md_t *md, int i) { md->pool.cfree[md->pool.ncfree++] = (uint32_t)i; }

/* ---------- md ---------- */

static locus_status_t open_cache(rdma_md_t *md)
{
    locus_reg_attr_t ra;
    locus_reg_attr_init(&ra);
    locus_status_t st = locus_reg_attr_from_env(&ra);
    if (st)
        return st;
    ra.backend = LOCUS_REG_BACKEND_VERBS;
    ra.device = md->devname;
    ra.pd = md->pd;
    if ((st = locus_reg_cache_create(&ra, &md->cache)))
        return st;
    /* Without the memory hooks nothing tells the cache that a buffer was
     * freed and its address reused: a cached registration would send the old
     * pages. Then every non-heap buffer is registered afresh (correct, and
     * what LOCUS_RMA_REG=none costs); linking liblocus_hooks restores reuse. */
    locus_reg_stats_t rs;
    md->cache_trusted = locus_reg_stats(md->cache, &rs) == LOCUS_OK && rs.hooks;
    if (!md->cache_trusted)
        lc_note(&md->notes, "no memory hooks (liblocus_hooks not linked or preloaded): buffers outside "
                "the heap are registered for each transfer");
    return LOCUS_OK;
}

locus_status_t rdma_md_open(const rdma_attr_t *attr, rdma_md_t **out)
{
    if (!out)
        return lc_err(LOCUS_ERR_INVALID, "rdma_md_open: out NULL");
    *out = NULL;
    locus_status_t st = rdma_attr_check(attr);
    if (st)
        return st;
    rdma_md_t *md = calloc(1, sizeof *md);
    if (!md)
        return lc_err(LOCUS_ERR_NO_MEMORY, "rdma md: out of memory");
    md->attr = *attr;
    md->attr.device = NULL; /* the caller's string: only devname is kept */
    if (attr->device && *attr->device)
        snprintf(md->devname, sizeof md->devname, "%s", attr->device);
    md->attr.device = md->devname[0] ? md->devname : NULL;
    if ((st = open_device(md)) || (st = open_port(md)))
        goto fail;
    md->pd = ibv_alloc_pd(md->ctx);
    if (!md->pd) {
        st = lc_err_errno(LOCUS_ERR_SYSTEM, errno, "ibv_alloc_pd(%s)", md->devname);
        goto fail;
    }
    if ((st = pool_open(md)) || (st = open_cache(md)))
        goto fail;
    *out = md;
    return LOCUS_OK;
fail:
    rdma_md_close(md);
    return st;
}

void rdma_md_close(rdma_md_t *md)
{
    if (!md)
        return;
    /* the cache deregisters everything it holds (the heap too) before the PD goes */
    locus_reg_cache_destroy(md->cache);
    pool_close(md);
    if (md->pd)
        ibv_dealloc_pd(md->pd);
    if (md->ctx)
        ibv_close_device(md->ctx);
    if (md->list)
        ibv_free_device_list(md->list);
    lc_notes_free(&md->notes);
    free(md);
}

const rdma_md_info_t *rdma_md_info(const rdma_md_t *md) { return md ? &md->info : NULL; }
locus_reg_cache_t *rdma_md_cache(const rdma_md_t *md) { return md ? md->cache : NULL; }
const char *rdma_md_notes(const rdma_md_t *md) { return md ? lc_notes_text(&md->notes) : ""; }

locus_status_t rdma_md_reg_heap(rdma_md_t *md, void *base, size_t len)
{
    if (!md || !base || !len)
        return lc_err(LOCUS_ERR_INVALID, "rdma_md_reg_heap(%p, %p, %zu): expected an md, a base and a length > 0",
                      (void *)md, base, len);
    if (md->heap.base)
        return lc_err(LOCUS_ERR_BUSY, "rdma md: a heap [%p, +%llu) is already registered", (void *)md->heap.base,
                      (unsigned long long)md->heap.len);
    locus_status_t st = locus_reg_static(md->cache, base, len, LOCUS_REG_ACCESS_ALL);
    if (st)
        return st;
    const locus_reg_t *r; /* a static region: the get hits it without a reference */
    if ((st = locus_reg_get(md->cache, base, len, LOCUS_REG_ACCESS_ALL, &r)))
        return st;
    md->heap.base = base;
    md->heap.len = len;
    md->heap.lkey = r->lkey;
    md->heap.rkey = r->rkey;
    locus_reg_put(md->cache, r);
    return LOCUS_OK;
}

locus_status_t rdma_md_reg_window(rdma_md_t *md, void *base, size_t len, uint32_t *rkey)
{
    if (!md || !base || !len || !rkey)
        return lc_err(LOCUS_ERR_INVALID, "rdma_md_reg_window(%p, %p, %zu): expected an md, a base, a length > 0 "
                      "and an rkey", (void *)md, base, len);
    locus_status_t st = locus_reg_static(md->cache, base, len, LOCUS_REG_ACCESS_ALL);
    const locus_reg_t *r;
    if (!st && !(st = locus_reg_get(md->cache, base, len, LOCUS_REG_ACCESS_ALL, &r))) {
        *rkey = r->rkey;
        locus_reg_put(md->cache, r);
    }
    return st;
}
