/* The cache as an object: attributes (from the tunables table), create
 * (backend, capacity, counter shards, hint table, hooks), destroy, and the
 * read-side calls (stats, notes, pd). */
#include "reg/reg_internal.h"
#include "core/config.h"
#include "core/error.h"

#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/rseq.h>
#include <unistd.h>

/* ---------- attributes ---------- */

/* The cache's tunables and the attribute fields they fill (defaults: tunables.def). */
static const lc_tun_bind_t reg_binds[] = {
    LC_BIND(REG_BACKEND, locus_reg_attr_t, backend),
    LC_BIND(REG_DEVICE, locus_reg_attr_t, device),
    LC_BIND(REG_MAX_REGIONS, locus_reg_attr_t, max_regions),
    LC_BIND(REG_MAX_BYTES, locus_reg_attr_t, max_bytes),
    LC_BIND(REG_RESERVE, locus_reg_attr_t, reserve_pct),
    LC_BIND(REG_MERGE_MAX, locus_reg_attr_t, merge_max),
    LC_BIND(REG_ODP, locus_reg_attr_t, odp),
    LC_BIND(REG_NULL_NS, locus_reg_attr_t, null_ns),
    LC_BIND(REG_NULL_NS_PER_MIB, locus_reg_attr_t, null_ns_per_mib),
};

void locus_reg_attr_init(locus_reg_attr_t *a)
{
    memset(a, 0, sizeof *a);
    (void)lc_tun_load(reg_binds, sizeof reg_binds / sizeof *reg_binds, a, sizeof *a,
                      LC_TUN_DEFAULTS);
}

/* All or nothing: a bad variable leaves attr as it was. */
locus_status_t locus_reg_attr_from_env(locus_reg_attr_t *attr)
{
    return lc_tun_load(reg_binds, sizeof reg_binds / sizeof *reg_binds, attr, sizeof *attr,
                       LC_TUN_ENV);
}

static locus_status_t check_attr(const locus_reg_attr_t *a)
{
    if ((unsigned)a->backend > LOCUS_REG_BACKEND_NULL)
        return lc_err(LOCUS_ERR_INVALID, "backend %d: expected auto, verbs, pin or null (0-3)", (int)a->backend);
    if (a->reserve_pct < 0 || a->reserve_pct > 90)
        return lc_err(LOCUS_ERR_RANGE, "reserve %d%%: expected 0-90", a->reserve_pct);
    return LOCUS_OK;
}

/* ---------- create, destroy ---------- */

static uint64_t default_max_bytes(void)
{
    struct rlimit rl;
    if (geteuid() != 0 && !getrlimit(RLIMIT_MEMLOCK, &rl) && rl.rlim_cur != RLIM_INFINITY)
        return (uint64_t)rl.rlim_cur;
    long pages = sysconf(_SC_PHYS_PAGES), ps = sysconf(_SC_PAGESIZE);
    return pages > 0 && ps > 0 ? (uint64_t)pages * (uint64_t)ps / 4 * 3 : (1ull << 30);
}

/* Counter shards (a power of two >= the cpus, at most REG_MAX_CNT_SHARDS)
 * and where the calling thread's cpu number is (reg_refs.h). */
static void init_shards(locus_reg_cache_t *c)
{
    long ncpu = sysconf(_SC_NPROCESSORS_CONF);
    unsigned nsh = 1;
    while (nsh < REG_MAX_CNT_SHARDS && (long)nsh < ncpu)
        nsh *= 2;
    c->cnt_mask = nsh - 1;
    /* glibc >= 2.35 registers rseq for every thread unless told not to */
    c->rseq_cpu_off = __rseq_size >= offsetof(struct rseq, cpu_id) + sizeof(uint32_t)
                          ? (long)__rseq_offset + (long)offsetof(struct rseq, cpu_id) : -1;
}

/* Capacity: the attributes, else the device's limits minus the reserve. */
static void init_capacity(locus_reg_cache_t *c, const locus_reg_attr_t *a, uint64_t dev_regions,
                          uint64_t dev_region_bytes)
{
    uint64_t keep = (uint64_t)(100 - a->reserve_pct);
    c->max_regions = a->max_regions ? a->max_regions : dev_regions * keep / 100;
    if (!c->max_regions) c->max_regions = 1;
    c->max_bytes = a->max_bytes ? a->max_bytes : default_max_bytes() / 100 * keep;
    c->merge_max = a->merge_max;
    c->max_region_bytes = dev_region_bytes;
}

/* What create allocated; safe on a partly built cache. */
static void cache_free(locus_reg_cache_t *c)
{
    if (c->ops)
        c->ops->close(c->bctx);
    reg_idx_free_all(atomic_load(&c->idx));
    free(c->hint);
    for (size_t i = 0; i < c->nslabs; i++)
        free(c->slabs[i]);
    free(c->slabs);
    pthread_mutex_destroy(&c->lock);
    lc_notes_free(&c->notes);
    free(c);
}

locus_status_t locus_reg_cache_create(const locus_reg_attr_t *attr, locus_reg_cache_t **out)
{
    if (!out)
        return lc_err(LOCUS_ERR_INVALID, "out NULL: expected a place for the cache");
    locus_reg_attr_t a;
    if (attr) a = *attr;
    else locus_reg_attr_init(&a);
    locus_status_t st = check_attr(&a);
    if (st != LOCUS_OK)
        return st;
    locus_reg_cache_t *c = aligned_alloc(64, (sizeof *c + 63) & ~(size_t)63);
    if (!c)
        return lc_err(LOCUS_ERR_NO_MEMORY, "registration cache: out of memory");
    memset(c, 0, sizeof *c);
    pthread_mutex_init(&c->lock, NULL);
    atomic_flag_clear(&c->pend_lock);
    uint64_t dev_regions = 0, dev_region_bytes = UINT64_MAX;
    st = reg_backend_open(c, &a, &dev_regions, &dev_region_bytes);
    if (st == LOCUS_OK)
        st = reg_idx_reserve(c, 0);
    c->hint_mask = (1u << 15) - 1;
    if (st == LOCUS_OK && !(c->hint = calloc(c->hint_mask + 1, sizeof *c->hint)))
        st = lc_err(LOCUS_ERR_NO_MEMORY, "registration cache: out of memory");
    if (st != LOCUS_OK) {
        cache_free(c);
        return st;
    }
    init_shards(c);
    init_capacity(c, &a, dev_regions, dev_region_bytes);
    reg_hooks_attach(c);
    *out = c;
    return LOCUS_OK;
}

void locus_reg_cache_destroy(locus_reg_cache_t *c)
{
    if (!c)
        return;
    reg_hooks_detach(c);
    pthread_mutex_lock(&c->lock);
    c->destroying = true;
    while (c->live) {
        reg_region_t *r = c->live;
        atomic_fetch_or_explicit(&r->flags, REG_DEAD | REG_FREED, memory_order_relaxed);
        reg_region_release(c, r);
    }
    pthread_mutex_unlock(&c->lock);
    cache_free(c);
}

/* ---------- stats, notes, pd ---------- */

static void stats_counts(const locus_reg_cache_t *c, locus_reg_stats_t *o)
{
    for (int i = 0; i < REG_SHARDS; i++)
        o->hits += c->shards[i].hits;
    o->hits += c->slow_hits;
    o->misses = c->misses;
    o->failed = c->failed;
    o->gets = o->hits + o->misses + o->failed;
    o->merges = c->merges;
    o->replaced = c->replaced;
    o->evictions = c->evictions;
    o->invalidations = c->invalidations;
    o->invalidate_calls = c->invalidate_calls;
    o->registrations = c->registrations;
    o->deregistrations = c->deregistrations;
    o->bytes_registered = c->bytes_registered;
}

static void stats_state(const locus_reg_cache_t *c, locus_reg_stats_t *o)
{
    o->regions = c->regions;
    o->bytes = c->bytes;
    o->cached = atomic_load_explicit(&c->n, memory_order_relaxed);
    int ns = atomic_load_explicit(&c->nstatic, memory_order_relaxed);
    o->static_regions = (uint64_t)ns;
    for (int i = 0; i < ns; i++)
        o->static_bytes += c->statics[i]->end - c->statics[i]->start;
    o->max_regions = c->max_regions;
    o->max_bytes = c->max_bytes;
    o->merge_max = c->merge_max;
    o->max_region_bytes = c->max_region_bytes;
    o->backend = c->ops->name;
    o->device = c->device;
    o->odp = c->odp;
    o->hooks = c->hooks_unsubscribe != NULL;
}

locus_status_t locus_reg_stats(const locus_reg_cache_t *cc, locus_reg_stats_t *o)
{
    locus_reg_cache_t *c = (locus_reg_cache_t *)cc;
    if (!c || !o)
        return lc_err(LOCUS_ERR_INVALID, "cache %p, out %p: expected non-NULL", (void *)c, (void *)o);
    memset(o, 0, sizeof *o);
    reg_lock(c);
    stats_counts(c, o);
    stats_state(c, o);
    reg_unlock(c);
    return LOCUS_OK;
}

const char *locus_reg_notes(const locus_reg_cache_t *c) { return c ? lc_notes_text(&c->notes) : ""; }
void *locus_reg_pd(const locus_reg_cache_t *c) { return c ? reg_backend_pd(c) : NULL; }

const char *locus_reg_backend_name(locus_reg_backend_t b)
{
    static const char *names[] = {"auto", "verbs", "pin", "null"};
    return (unsigned)b < 4 ? names[b] : "?";
}
