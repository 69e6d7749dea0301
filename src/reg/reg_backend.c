/* Registration backends: verbs (ibv_reg_mr), pin (mlock), null (a cost). */
#include "reg/reg_internal.h"
#include "core/error.h"
#include "core/clock.h"

#include <errno.h>
#include <stdio.h>
#include <infiniband/verbs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

/* ---------- null ---------- */

typedef struct {
    uint64_t ns, ns_per_mib;
    locus_reg_event_fn ev;
    void *arg;
} null_ctx_t;


static void busy(uint64_t ns)
{
    if (!ns)
        return;
    uint64_t until = lc_now_ns() + ns;
    while (lc_now_ns() < until)
        __builtin_ia32_pause();
}

static locus_status_t null_reg(void *ctx, reg_region_t *r)
{
    null_ctx_t *n = ctx;
    busy(n->ns + (uint64_t)((double)n->ns_per_mib * (double)(r->end - r->start) / 1048576.0));
    r->pub.lkey = r->pub.rkey = (uint32_t)r->pub.id;
    if (n->ev)
        n->ev(n->arg, LOCUS_REG_EV_REGISTER, &r->pub);
    return LOCUS_OK;
}

static void null_dereg(void *ctx, reg_region_t *r)
{
    null_ctx_t *n = ctx;
    busy(n->ns);
    if (n->ev)
        n->ev(n->arg, LOCUS_REG_EV_DEREGISTER, &r->pub);
}

static void null_close(void *ctx) { free(ctx); }

static const reg_backend_ops_t null_ops = {"null", null_reg, null_dereg, null_close, false, NULL};

/* ---------- pin ---------- */

static locus_status_t pin_reg(void *ctx, reg_region_t *r)
{
    if (mlock((void *)r->start, r->end - r->start)) {
        int e = errno;
        if (e == ENOMEM)
            return lc_err(LOCUS_ERR_INVALID,
                             "[%p, +%llu): mlock failed (ENOMEM): range not fully mapped or over the "
                             "memlock limit", (void *)r->start, (unsigned long long)(r->end - r->start));
        return lc_err_errno(e == EAGAIN ? LOCUS_ERR_NO_SPACE : LOCUS_ERR_SYSTEM, e, "mlock(%p, %llu)",
                               (void *)r->start, (unsigned long long)(r->end - r->start));
    }
    r->pub.lkey = r->pub.rkey = (uint32_t)r->pub.id;
    return LOCUS_OK;
}

static void pin_dereg(void *ctx, reg_region_t *r)
{
    munlock((void *)r->start, r->end - r->start); /* ENOMEM once unmapped: nothing left to unlock */
}

static void pin_relock(void *ctx, uint64_t s, uint64_t e) { mlock((void *)s, e - s); }

static void pin_close(void *ctx) {}

static const reg_backend_ops_t pin_ops = {"pin", pin_reg, pin_dereg, pin_close, true, pin_relock};

/* ---------- verbs ---------- */

typedef struct {
    struct ibv_device **list;
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    bool own_pd, odp;
} verbs_ctx_t;

static int verbs_flags(unsigned access, bool odp)
{
    int f = 0;
    if (access & (LOCUS_REG_LOCAL_WRITE | LOCUS_REG_REMOTE_WRITE | LOCUS_REG_REMOTE_ATOMIC))
        f |= IBV_ACCESS_LOCAL_WRITE;
    if (access & LOCUS_REG_REMOTE_WRITE) f |= IBV_ACCESS_REMOTE_WRITE;
    if (access & LOCUS_REG_REMOTE_READ) f |= IBV_ACCESS_REMOTE_READ;
    if (access & LOCUS_REG_REMOTE_ATOMIC) f |= IBV_ACCESS_REMOTE_ATOMIC;
    if (odp) f |= IBV_ACCESS_ON_DEMAND;
    return f;
}

static locus_status_t verbs_reg(void *ctx, reg_region_t *r)
{
    verbs_ctx_t *v = ctx;
    struct ibv_mr *mr = ibv_reg_mr(v->pd, (void *)r->start, r->end - r->start,
                                   verbs_flags(r->pub.access, v->odp));
    if (!mr) {
        int e = errno;
        if (e == EFAULT)
            return lc_err(LOCUS_ERR_INVALID, "[%p, +%llu): ibv_reg_mr failed (EFAULT): range not mapped",
                             (void *)r->start, (unsigned long long)(r->end - r->start));
        return lc_err_errno(e == ENOMEM || e == ENOSPC ? LOCUS_ERR_NO_SPACE : LOCUS_ERR_SYSTEM, e,
                               "ibv_reg_mr(%p, %llu)", (void *)r->start,
                               (unsigned long long)(r->end - r->start));
    }
    r->bh = mr;
    r->pub.mr = mr;
    r->pub.lkey = mr->lkey;
    r->pub.rkey = mr->rkey;
    return LOCUS_OK;
}

static void verbs_dereg(void *ctx, reg_region_t *r)
{
    if (r->bh)
        ibv_dereg_mr(r->bh);
    r->bh = NULL;
}

static void verbs_close(void *ctx)
{
    verbs_ctx_t *v = ctx;
    if (v->pd && v->own_pd)
        ibv_dealloc_pd(v->pd);
    if (v->ctx)
        ibv_close_device(v->ctx);
    if (v->list)
        ibv_free_device_list(v->list);
    free(v);
}

static const reg_backend_ops_t verbs_ops = {"verbs", verbs_reg, verbs_dereg, verbs_close, false, NULL};

static locus_status_t verbs_open(locus_reg_cache_t *c, const locus_reg_attr_t *a, uint64_t *max_mr,
                                 uint64_t *max_mr_size)
{
    verbs_ctx_t *v = calloc(1, sizeof *v);
    if (!v)
        return lc_err(LOCUS_ERR_NO_MEMORY, "registration cache: out of memory");
    int num = 0;
    v->list = ibv_get_device_list(&num);
    locus_status_t st = LOCUS_OK;
    struct ibv_device *dev = NULL;
    const char *want = a->device && *a->device ? a->device : NULL;
    for (int i = 0; v->list && i < num && !dev; i++)
        if (!want || !strcmp(ibv_get_device_name(v->list[i]), want))
            dev = v->list[i];
    if (!dev) {
        st = want ? lc_err(LOCUS_ERR_NO_DEVICE, "RDMA device '%s' not found (%d device%s present)", want,
                              num, num == 1 ? "" : "s")
                  : lc_err(LOCUS_ERR_NO_DEVICE, "no RDMA device (ibv_get_device_list found 0): use "
                                                   "LOCUS_REG_BACKEND=pin or null");
        goto fail;
    }
    snprintf(c->device, sizeof c->device, "%s", ibv_get_device_name(dev));
    v->ctx = ibv_open_device(dev);
    if (!v->ctx) {
        st = lc_err_errno(LOCUS_ERR_NO_DEVICE, errno, "ibv_open_device(%s)", c->device);
        goto fail;
    }
    struct ibv_device_attr_ex dx;
    memset(&dx, 0, sizeof dx);
    if (ibv_query_device_ex(v->ctx, NULL, &dx)) {
        struct ibv_device_attr d;
        if (ibv_query_device(v->ctx, &d)) {
            st = lc_err_errno(LOCUS_ERR_SYSTEM, errno, "ibv_query_device(%s)", c->device);
            goto fail;
        }
        dx.orig_attr = d;
    }
    *max_mr = dx.orig_attr.max_mr ? (uint64_t)dx.orig_attr.max_mr : 1024;
    *max_mr_size = dx.orig_attr.max_mr_size ? dx.orig_attr.max_mr_size : UINT64_MAX;
    v->odp = a->odp && (dx.odp_caps.general_caps & IBV_ODP_SUPPORT) &&
             (dx.odp_caps.per_transport_caps.rc_odp_caps & IBV_ODP_SUPPORT_WRITE);
    c->odp = v->odp;
    if (a->pd) {
        v->pd = a->pd;
    } else {
        v->pd = ibv_alloc_pd(v->ctx);
        v->own_pd = true;
        if (!v->pd) {
            st = lc_err_errno(LOCUS_ERR_SYSTEM, errno, "ibv_alloc_pd(%s)", c->device);
            goto fail;
        }
    }
    c->ops = &verbs_ops;
    c->bctx = v;
    return LOCUS_OK;
fail:
    verbs_close(v);
    return st;
}

void *reg_backend_pd(const locus_reg_cache_t *c)
{
    return c->ops == &verbs_ops ? ((verbs_ctx_t *)c->bctx)->pd : NULL;
}

locus_status_t reg_backend_open(locus_reg_cache_t *c, const locus_reg_attr_t *a, uint64_t *max_regions,
                                uint64_t *max_region_bytes)
{
    locus_reg_backend_t b = a->backend;
    *max_region_bytes = UINT64_MAX;
    if (b == LOCUS_REG_BACKEND_VERBS || b == LOCUS_REG_BACKEND_AUTO) {
        locus_status_t st = verbs_open(c, a, max_regions, max_region_bytes);
        if (st == LOCUS_OK || b == LOCUS_REG_BACKEND_VERBS || st != LOCUS_ERR_NO_DEVICE) {
            c->backend = LOCUS_REG_BACKEND_VERBS;
            return st;
        }
        lc_note(&c->notes, "%s: pin backend (mlock) used", locus_last_error());
        locus_clear_error();
        b = LOCUS_REG_BACKEND_PIN;
    }
    c->backend = b;
    if (b == LOCUS_REG_BACKEND_PIN) {
        /* each locked range may split a VMA in three: stay well below vm.max_map_count */
        *max_regions = 16384;
        c->ops = &pin_ops;
        return LOCUS_OK;
    }
    null_ctx_t *n = calloc(1, sizeof *n);
    if (!n)
        return lc_err(LOCUS_ERR_NO_MEMORY, "registration cache: out of memory");
    n->ns = a->null_ns;
    n->ns_per_mib = a->null_ns_per_mib;
    n->ev = a->null_event;
    n->arg = a->null_event_arg;
    *max_regions = 1u << 20;
    c->ops = &null_ops;
    c->bctx = n;
    return LOCUS_OK;
}
