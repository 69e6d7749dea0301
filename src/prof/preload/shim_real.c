/* The real functions behind the interposers, and the bootstrap arena.
 *
 * The first interposed call can come from anywhere: the dynamic loader's
 * own allocations, another library's constructor running before ours, a
 * thread that library started. It resolves every real function once with
 * dlsym(RTLD_NEXT) (what the program would have called without the shim:
 * libc, or jemalloc/tcmalloc linked or preloaded). dlsym may allocate; the
 * resolving thread (thread-local flag) is served from a static arena, whose
 * blocks are never freed (free is a no-op on them, realloc copies out). */
#include "shim.h"

#include <dlfcn.h>
#include <sched.h>
#include <string.h>

shim_real_t shim_R;

#define BOOT_ARENA (256u * 1024u)
static char boot_arena[BOOT_ARENA] __attribute__((aligned(4096)));
static _Atomic size_t boot_used;
static _Atomic int rstate; /* 0 unresolved, 1 resolving, 2 done */
static __thread int t_resolving SHIM_TLS;

/* Each block is preceded by its size (16 bytes, keeps 16-byte alignment). */
void *shim_boot_alloc(size_t n, size_t align)
{
    if (align < 16)
        align = 16;
    if (n > BOOT_ARENA || align > 4096)
        return NULL;
    size_t need = n + 16 + align;
    size_t off = atomic_fetch_add(&boot_used, (need + 15) & ~(size_t)15);
    if (off + need > BOOT_ARENA)
        return NULL;
    uintptr_t p = ((uintptr_t)boot_arena + off + 16 + align - 1) & ~(uintptr_t)(align - 1);
    ((size_t *)p)[-1] = n;
    return (void *)p;
}

int shim_is_boot(const void *p)
{
    return (const char *)p >= boot_arena && (const char *)p < boot_arena + BOOT_ARENA;
}

size_t shim_boot_size(const void *p) { return ((const size_t *)p)[-1]; }

#define RESOLVE(name) shim_R.name = (__typeof__(shim_R.name))dlsym(RTLD_NEXT, #name)

static void resolve_all(void)
{
    /* free first: whatever dlsym allocates with the real malloc later can
     * be given back */
    RESOLVE(free);
    RESOLVE(calloc);
    RESOLVE(realloc);
    RESOLVE(reallocarray);
    RESOLVE(posix_memalign);
    RESOLVE(aligned_alloc);
    RESOLVE(memalign);
    RESOLVE(valloc);
    RESOLVE(pvalloc);
    RESOLVE(malloc_usable_size);
    RESOLVE(mmap);
    RESOLVE(mmap64);
    RESOLVE(munmap);
    RESOLVE(mremap);
    RESOLVE(mprotect);
    RESOLVE(execve);
    RESOLVE(execvpe);
    RESOLVE(fexecve);
    RESOLVE(posix_spawn);
    RESOLVE(posix_spawnp);
    RESOLVE(system);
    RESOLVE(sigaction);
    RESOLVE(pthread_attr_setstack);
    RESOLVE(sigaltstack);
    shim_io_resolve();
    RESOLVE(malloc); /* last: "malloc resolved" means everything is */
}

void shim_resolve(void)
{
    if (atomic_load_explicit(&rstate, memory_order_acquire) == 2 || t_resolving)
        return;
    int expect = 0;
    if (atomic_compare_exchange_strong(&rstate, &expect, 1)) {
        t_resolving = 1;
        resolve_all();
        t_resolving = 0;
        atomic_store_explicit(&rstate, 2, memory_order_release);
        return;
    }
    /* Another thread is resolving (only possible while the process starts):
     * wait for it. */
    while (atomic_load_explicit(&rstate, memory_order_acquire) != 2)
        sched_yield();
}
