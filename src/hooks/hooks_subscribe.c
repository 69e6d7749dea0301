/* The subscribers: a fixed table of pointers that the hooks walk without a
 * lock, and an in-flight count that unsubscribe waits on, so that a
 * subscriber's memory may be freed as soon as unsubscribe returns. */
#include "hooks/hooks_internal.h"

#include <dlfcn.h>
#include <link.h>
#include <sched.h>
#include <string.h>

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

/* dl_iterate_phdr walks the objects in link-map order, which is the order
 * symbols resolve in (the program, preloads, its libraries breadth first,
 * then dlopen'ed ones): note whether libc comes before the object that
 * holds our munmap. */
typedef struct { bool libc_seen, libc_first, found; } order_t;

static bool holds(const struct dl_phdr_info *info, uintptr_t a)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t s = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && a >= s && a < s + ph->p_memsz)
            return true;
    }
    return false;
}

static int visit(struct dl_phdr_info *info, size_t size, void *arg)
{
    order_t *o = arg;
    const char *slash = strrchr(info->dlpi_name, '/');
    const char *base = slash ? slash + 1 : info->dlpi_name;
    if (holds(info, (uintptr_t)hooks_munmap)) {
        o->found = true;
        o->libc_first = o->libc_seen;
        return 1;
    }
    if (!strncmp(base, "libc.so", 7))
        o->libc_seen = true;
    return 0;
}

/* Whether the program's calls reach us: our munmap is the first definition
 * (linked before libc, or preloaded); or libc comes first (dlopen'ed late:
 * we see nothing); or another library's comes first (an ASan runtime, other
 * hooks: we see the calls if it chains to the next definition, as we do). */
static unsigned caps(void)
{
    unsigned k = hooks_glibc_malloc ? LOCUS_HOOKS_GLIBC_MALLOC : 0;
    if (dlsym(RTLD_DEFAULT, "munmap") == (void *)hooks_munmap)
        return k | LOCUS_HOOKS_FIRST;
    order_t o = {false, false, false};
    dl_iterate_phdr(visit, &o);
    return o.found && o.libc_first ? k | LOCUS_HOOKS_BEHIND : k;
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
