/* Teams and contexts. A team is its members in world PE numbers (a
 * progression start + i*stride, or a list: members.c) plus a signal channel
 * (slot) its collectives use. A split is collective
 * over the parent: the members AND their bitmaps of free slots (one
 * all-to-all exchange on the parent's channel) and take the lowest slot
 * free everywhere, so teams that share a PE never share a channel; PEs left
 * out get SHMEM_TEAM_INVALID, every PE gets the same return code. Contexts
 * are handles over a team: operations complete in order on the single
 * transport state, so ctx_quiet/ctx_fence are the quiet/fence of every
 * context (allowed: the spec sets no upper bound on what they complete). */
#include "shmem/shmem_internal.h"

#include <stdlib.h>

#define CALL lshm_name(__func__)

lshm_team_t *lshm_team(const char *call, shmem_team_t t)
{
    if (t == SHMEM_TEAM_WORLD)
        return &lshm.world;
    if (t == SHMEM_TEAM_SHARED)
        return &lshm.shared;
    if (!t)
        lshm_fatal(call, "team is SHMEM_TEAM_INVALID");
    lshm_team_t *tm = (lshm_team_t *)t;
    if (tm->magic != LSHM_TEAM_MAGIC)
        lshm_fatal(call, "%p is not a team (destroyed, or never created by shmem_team_split_*)", (void *)t);
    return tm;
}

lshm_ctx_t *lshm_ctx(const char *call, shmem_ctx_t ctx)
{
    if (ctx == SHMEM_CTX_DEFAULT)
        return &lshm.default_ctx;
    if (!ctx)
        lshm_fatal(call, "context is SHMEM_CTX_INVALID");
    lshm_ctx_t *c = (lshm_ctx_t *)ctx;
    if (c->magic != LSHM_CTX_MAGIC)
        lshm_fatal(call, "%p is not a context (destroyed, or never created)", (void *)ctx);
    return c;
}

int lshm_ctx_pe(const char *call, shmem_ctx_t ctx, int pe)
{
    if (ctx == SHMEM_CTX_DEFAULT) {
        lshm_check_pe(call, pe);
        return pe;
    }
    lshm_team_t *t = lshm_ctx(call, ctx)->team;
    if (t == &lshm.world) {
        lshm_check_pe(call, pe);
        return pe;
    }
    if (pe < 0 || pe >= t->size)
        lshm_fatal(call, "PE %d out of range for the context's team of %d PEs", pe, t->size);
    return lshm_team_pe(t, pe);
}

void lshm_teams_init(void)
{
    lshm.world = (lshm_team_t){.magic = LSHM_TEAM_MAGIC, .start = 0, .stride = 1, .size = lshm.npes,
                               .my_idx = lshm.me, .slot = LSHM_SLOT_WORLD};
    /* SHARED: the PEs whose heap is mapped here (this PE among them), in
     * world order; a list when the placement makes them no progression */
    int *w = malloc((size_t)lshm.npes * sizeof *w), n = 0;
    if (!w)
        lshm_fatal("shmem_init", "out of memory for SHMEM_TEAM_SHARED's members");
    for (int pe = 0; pe < lshm.npes; pe++)
        if (lshm.reg[LSHM_HEAP].peer[pe])
            w[n++] = pe;
    lshm_team_t *sh = lshm_team_of(w, n, lshm.me);
    free(w);
    if (!sh || sh->my_idx < 0)
        lshm_fatal("shmem_init", "SHMEM_TEAM_SHARED: %s", sh ? "this PE's own heap is not mapped" : "out of memory");
    lshm.shared = *sh; /* the predefined team lives in lshm; its list moves with it */
    lshm.shared.slot = LSHM_SLOT_SHARED;
    free(sh);
    lshm.slots_used = (1u << LSHM_SLOT_FIRST_FREE) - 1;
    lshm.default_ctx = (lshm_ctx_t){LSHM_CTX_MAGIC, &lshm.world, 0};
}

void lshm_teams_fini(void)
{
    free(lshm.shared.pes);
    lshm.shared.pes = NULL;
}

/* ---- queries ---- */

LSHM_DEF(int, shmem_team_my_pe, (shmem_team_t team))
{
    if (!team)
        return -1;
    return lshm_team(CALL, team)->my_idx;
}

LSHM_DEF(int, shmem_team_n_pes, (shmem_team_t team))
{
    if (!team)
        return -1;
    return lshm_team(CALL, team)->size;
}

LSHM_DEF(int, shmem_team_get_config, (shmem_team_t team, long config_mask, shmem_team_config_t *config))
{
    if (!team)
        return -1;
    if (!config_mask) /* 1.6: no action, config may be NULL */
        return 0;
    if (!config)
        return -1;
    lshm_team_t *t = lshm_team(CALL, team);
    if (config_mask & SHMEM_TEAM_NUM_CONTEXTS)
        config->num_contexts = t->cfg.num_contexts;
    return 0;
}

LSHM_DEF(int, shmem_team_translate_pe, (shmem_team_t src_team, int src_pe, shmem_team_t dest_team))
{
    if (!src_team || !dest_team)
        return -1;
    lshm_team_t *s = lshm_team(CALL, src_team), *d = lshm_team(CALL, dest_team);
    if (src_pe < 0 || src_pe >= s->size)
        return -1;
    return lshm_team_index(d, lshm_team_pe(s, src_pe));
}

/* ---- splits ---- */

/* Agree with the parent's members on `want` slots free everywhere; fills
 * slots[] and returns 0, or -1 (everywhere) when there are not enough. */
static int agree_slots(const char *call, lshm_team_t *parent, int want, int *slots)
{
    lshm_set_t ps = lshm_team_set(parent);
    uint64_t *all = malloc((size_t)ps.size * sizeof *all);
    if (!all)
        lshm_fatal(call, "out of memory for %d bitmaps", ps.size);
    lshm_set_allgather64(call, &ps, ~(uint64_t)lshm.slots_used, all);
    uint64_t free_all = ((uint64_t)1 << LSHM_NSLOTS) - 1;
    for (int i = 0; i < ps.size; i++)
        free_all &= all[i];
    free(all);
    for (int k = 0; k < want; k++) {
        if (!free_all)
            return -1;
        slots[k] = __builtin_ctzll(free_all);
        free_all &= free_all - 1;
    }
    return 0;
}

/* The team of the parent's members start + i*stride, i < size, on channel
 * slot; SHMEM_TEAM_INVALID on the PEs left out. */
static shmem_team_t make_team(const char *call, const lshm_team_t *parent, int start, int stride, int size, int slot,
                              const shmem_team_config_t *cfg, long mask)
{
    lshm_team_t *t = lshm_team_sub(parent, start, stride, size, lshm.me);
    if (!t)
        lshm_fatal(call, "out of memory for a team of %d PEs", size);
    if (t->my_idx < 0) {
        lshm_team_free(t);
        return SHMEM_TEAM_INVALID;
    }
    t->slot = slot;
    if (cfg && (mask & SHMEM_TEAM_NUM_CONTEXTS))
        t->cfg = *cfg, t->cfg_mask = mask;
    lshm.slots_used |= 1u << slot;
    return (shmem_team_t)t;
}

LSHM_DEF(int, shmem_team_split_strided, (shmem_team_t parent_team, int start, int stride, int size,
                                          const shmem_team_config_t *config, long config_mask,
                                          shmem_team_t *new_team))
{
    const char *call = CALL;
    lshm_require_init(call);
    if (!new_team)
        lshm_fatal(call, "new_team is NULL");
    *new_team = SHMEM_TEAM_INVALID;
    if (!parent_team)
        return -1;
    lshm_team_t *p = lshm_team(call, parent_team);
    /* 1.6: a negative stride takes the members from start downwards (the new
     * team in reverse order); a zero stride only for a team of one */
    int64_t last = (int64_t)start + (int64_t)(size - 1) * stride;
    if (size < 1 || start < 0 || start >= p->size || (!stride && size > 1) || last < 0 || last >= p->size)
        return -1; /* the same arguments everywhere: every PE returns here */
    int slot;
    if (agree_slots(call, p, 1, &slot))
        return -1;
    *new_team = make_team(call, p, start, stride, size, slot, config, config_mask);
    return 0;
}

LSHM_DEF(int, shmem_team_split_2d, (shmem_team_t parent_team, int xrange, const shmem_team_config_t *xaxis_config,
                                     long xaxis_mask, shmem_team_t *xaxis_team,
                                     const shmem_team_config_t *yaxis_config, long yaxis_mask,
                                     shmem_team_t *yaxis_team))
{
    const char *call = CALL;
    lshm_require_init(call);
    if (!xaxis_team || !yaxis_team)
        lshm_fatal(call, "xaxis_team or yaxis_team is NULL");
    *xaxis_team = *yaxis_team = SHMEM_TEAM_INVALID;
    if (!parent_team || xrange < 1)
        return -1;
    lshm_team_t *p = lshm_team(call, parent_team);
    if (xrange > p->size)
        xrange = p->size;
    int slots[2];
    if (agree_slots(call, p, 2, slots))
        return -1;
    int i = p->my_idx, row = i / xrange, col = i % xrange;
    int xsize = p->size - row * xrange < xrange ? p->size - row * xrange : xrange;
    int ysize = (p->size - col + xrange - 1) / xrange;
    *xaxis_team = make_team(call, p, row * xrange, 1, xsize, slots[0], xaxis_config, xaxis_mask);
    *yaxis_team = make_team(call, p, col, xrange, ysize, slots[1], yaxis_config, yaxis_mask);
    return 0;
}

LSHM_DEF(void, shmem_team_destroy, (shmem_team_t team))
{
    if (!team || team == SHMEM_TEAM_WORLD || team == SHMEM_TEAM_SHARED)
        return; /* the predefined teams cannot be destroyed */
    lshm_team_t *t = lshm_team(CALL, team);
    lshm.slots_used &= ~(1u << t->slot);
    lshm_team_free(t);
}

/* ---- contexts ---- */

static int new_ctx(lshm_team_t *t, long options, shmem_ctx_t *ctx)
{
    lshm_ctx_t *c = calloc(1, sizeof *c);
    if (!c) {
        *ctx = SHMEM_CTX_INVALID;
        return -1;
    }
    *c = (lshm_ctx_t){LSHM_CTX_MAGIC, t, options};
    t->nctx++;
    *ctx = (shmem_ctx_t)c;
    return 0;
}

LSHM_DEF(int, shmem_ctx_create, (long options, shmem_ctx_t *ctx))
{
    lshm_require_init(CALL);
    if (!ctx)
        lshm_fatal(CALL, "ctx is NULL");
    return new_ctx(&lshm.world, options, ctx);
}

LSHM_DEF(int, shmem_team_create_ctx, (shmem_team_t team, long options, shmem_ctx_t *ctx))
{
    lshm_require_init(CALL);
    if (!ctx)
        lshm_fatal(CALL, "ctx is NULL");
    *ctx = SHMEM_CTX_INVALID;
    if (!team)
        return -1;
    return new_ctx(lshm_team(CALL, team), options, ctx);
}

LSHM_DEF(void, shmem_ctx_destroy, (shmem_ctx_t ctx))
{
    if (!ctx || ctx == SHMEM_CTX_DEFAULT)
        return;
    lshm_ctx_t *c = lshm_ctx(CALL, ctx);
    lshm_quiet(); /* destroying a context completes its operations */
    c->team->nctx--;
    c->magic = 0;
    free(c);
}

LSHM_DEF(int, shmem_ctx_get_team, (shmem_ctx_t ctx, shmem_team_t *team))
{
    if (!team)
        return -1;
    if (!ctx) {
        *team = SHMEM_TEAM_INVALID;
        return -1;
    }
    lshm_team_t *t = lshm_ctx(CALL, ctx)->team;
    *team = t == &lshm.world ? SHMEM_TEAM_WORLD : t == &lshm.shared ? SHMEM_TEAM_SHARED : (shmem_team_t)t;
    return 0;
}

/* ---- sessions (1.6) ---- */

/* A session tells the library a batch of operations on the context follows;
 * it changes no completion or ordering rule. locus moves each operation at
 * once and has nothing to batch, so start and stop only check their
 * arguments (SHMEM_CTX_INVALID: nothing, as the spec says). */
LSHM_DEF(void, shmem_ctx_session_start,
         (shmem_ctx_t ctx, long options, const shmem_ctx_session_config_t *config, long config_mask))
{
    (void)options;
    if (!ctx)
        return;
    lshm_ctx(CALL, ctx);
    if ((config_mask & SHMEM_CTX_SESSION_TOTAL_OPS) && !config)
        lshm_fatal(CALL, "config is NULL but config_mask has SHMEM_CTX_SESSION_TOTAL_OPS");
}

LSHM_DEF(void, shmem_ctx_session_stop, (shmem_ctx_t ctx))
{
    if (ctx)
        lshm_ctx(CALL, ctx);
}
