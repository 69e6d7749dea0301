/* The subscribers: a fixed table of pointers that the hooks walk without a
 * lock, and an in-flight count that unsubscribe waits on, so that a
 * subscriber's memory may be freed as soon as unsubscribe returns. */
#include "hooks/hooks_internal.h"

#include <dlfcn.h>
#include <sched.h>

#define MAX_SUBS 16

static _Atomic(locus_hooks_sub_t *) subs[MAX_SUBS];
_Atomic int hooks_nsubs;
static _Atomic int inflight;

void hooks_call(uint64_t s, uint64_t e)
{
    atomic_fetch_add(&inflight, 1);
    for (int i = 0; i < MAX_SUBS; i++) {
        locus_hooks_sub_t *sub = atomic_load(&subs[i]);
        if (sub)
            sub->fn(sub, s, e);
    }
    atomic_fetch_sub(&inflight, 1);
}

/* Whether the program's calls reach us: our munmap is the first definition
 * (linked before libc, or preloaded), or libc's is (dlopen'ed late: we see
 * nothing), or another library's (it sees them first; we see them if it
 * chains to the next definition, as we do). */
static unsigned caps(void)
{
    unsigned k = hooks_glibc_malloc ? LOCUS_HOOKS_GLIBC_MALLOC : 0;
    void *first = dlsym(RTLD_DEFAULT, "munmap");
    if (first == (void *)hooks_munmap)
        return k | LOCUS_HOOKS_FIRST;
    void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    if (libc) {
        void *own = dlsym(libc, "munmap");
        dlclose(libc);
        if (first == own)
            return k | LOCUS_HOOKS_BEHIND;
    }
    return k;
}

HOOK int locus_hooks_subscribe(unsigned version, locus_hooks_sub_t *sub)
{
    if (version != LOCUS_HOOKS_VERSION)
        return LOCUS_HOOKS_EVERSION;
    hooks_ready();
    sub->caps = caps();
    for (int i = 0; i < MAX_SUBS; i++) {
        locus_hooks_sub_t *none = NULL;
        if (atomic_compare_exchange_strong(&subs[i], &none, sub)) {
            sub->slot = i;
            atomic_fetch_add(&hooks_nsubs, 1);
            return 0;
        }
    }
    sub->slot = -1;
    return LOCUS_HOOKS_EFULL;
}

HOOK void locus_hooks_unsubscribe(locus_hooks_sub_t *sub)
{
    if (sub->slot < 0 || sub->slot >= MAX_SUBS || atomic_load(&subs[sub->slot]) != sub)
        return;
    atomic_store(&subs[sub->slot], NULL);
    atomic_fetch_sub(&hooks_nsubs, 1);
    sub->slot = -1;
    while (atomic_load(&inflight))
        sched_yield();
}
