/* The cache's side of the memory hooks, and the list of live caches.
 *
 * liblocus does not interpose anything: the hooks are liblocus_hooks, an
 * opt-in library (src/hooks/hooks.h is the contract). At create a cache
 * looks for locus_hooks_subscribe - a weak reference (the program linked
 * the hooks, or preloaded them) else dlsym (loaded later with RTLD_GLOBAL) -
 * and subscribes reg_invalidate_from_hook for "[start, end) unmapped or
 * changed". Without the hooks, or with hooks that cannot see the program's
 * calls (loaded after libc: dlopen), the cache says so in its notes and
 * stats (hooks = false) and relies on locus_reg_invalidate. */
#include "reg/reg_internal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

/* Defined by liblocus_hooks when the program has it; NULL otherwise. */
extern int locus_hooks_subscribe(unsigned version, locus_hooks_sub_t *sub) __attribute__((weak));
extern void locus_hooks_unsubscribe(locus_hooks_sub_t *sub) __attribute__((weak));

typedef int (*subscribe_fn)(unsigned, locus_hooks_sub_t *);
typedef void (*unsubscribe_fn)(locus_hooks_sub_t *);

static void on_unmap(locus_hooks_sub_t *sub, uint64_t s, uint64_t e)
{
    locus_reg_cache_t *c = (locus_reg_cache_t *)((char *)sub - offsetof(locus_reg_cache_t, hsub));
    reg_invalidate_from_hook(c, s, e);
}

static bool find_hooks(subscribe_fn *sub, unsubscribe_fn *unsub)
{
    *sub = locus_hooks_subscribe;
    *unsub = locus_hooks_unsubscribe;
    if (!*sub || !*unsub) {
        *sub = (subscribe_fn)dlsym(RTLD_DEFAULT, "locus_hooks_subscribe");
        *unsub = (unsubscribe_fn)dlsym(RTLD_DEFAULT, "locus_hooks_unsubscribe");
    }
    return *sub && *unsub;
}

/* The object that defines the process's munmap, for a note. */
static const char *first_munmap(void)
{
    Dl_info di;
    void *f = dlsym(RTLD_DEFAULT, "munmap");
    return f && dladdr(f, &di) && di.dli_fname ? di.dli_fname : "?";
}

static void subscribe(locus_reg_cache_t *c)
{
    subscribe_fn sub;
    unsubscribe_fn unsub;
    if (!find_hooks(&sub, &unsub)) {
        lc_note(&c->notes, "memory hooks absent (liblocus_hooks not linked or preloaded): unmapped or freed "
                           "memory is not detected; this cache relies on locus_reg_invalidate");
        return;
    }
    c->hsub.fn = on_unmap;
    int rc = sub(LOCUS_HOOKS_VERSION, &c->hsub);
    if (rc == LOCUS_HOOKS_EFULL) {
        lc_note(&c->notes, "memory hooks: no free subscriber slot (too many caches): this cache relies on "
                           "locus_reg_invalidate");
        return;
    }
    if (rc != 0) {
        lc_note(&c->notes, "memory hooks: liblocus_hooks does not speak contract version %d (a different "
                           "locus release?): this cache relies on locus_reg_invalidate", LOCUS_HOOKS_VERSION);
        return;
    }
    if (c->hsub.caps & LOCUS_HOOKS_BEHIND) {
        unsub(&c->hsub);
        lc_note(&c->notes, "memory hooks: liblocus_hooks is loaded after libc (dlopen?) and sees no call: "
                           "link it (-llocus_hooks) or LD_PRELOAD it; this cache relies on locus_reg_invalidate");
        return;
    }
    if (!(c->hsub.caps & LOCUS_HOOKS_FIRST))
        lc_note(&c->notes, "memory hooks: munmap resolves to %s first: unmaps are seen only if it calls the "
                           "next definition", first_munmap());
    c->hooks_unsubscribe = unsub;
}

/* ---------- the list of live caches (locus_reg_invalidate(NULL, ...)) ---------- */

static pthread_mutex_t caches_lock = PTHREAD_MUTEX_INITIALIZER;
static locus_reg_cache_t *caches;

void reg_hooks_attach(locus_reg_cache_t *c)
{
    pthread_mutex_lock(&caches_lock);
    c->cnext = caches;
    caches = c;
    pthread_mutex_unlock(&caches_lock);
    subscribe(c);
}

void reg_hooks_detach(locus_reg_cache_t *c)
{
    if (c->hooks_unsubscribe)
        c->hooks_unsubscribe(&c->hsub); /* returns once no hook is inside on_unmap for c */
    pthread_mutex_lock(&caches_lock);
    for (locus_reg_cache_t **p = &caches; *p; p = &(*p)->cnext)
        if (*p == c) {
            *p = c->cnext;
            break;
        }
    pthread_mutex_unlock(&caches_lock);
}

/* As a hook would: never waits for a cache's lock (the caller may hold one). */
void reg_invalidate_all_caches(uint64_t s, uint64_t e)
{
    pthread_mutex_lock(&caches_lock);
    for (locus_reg_cache_t *c = caches; c; c = c->cnext)
        reg_invalidate_from_hook(c, s, e);
    pthread_mutex_unlock(&caches_lock);
}
