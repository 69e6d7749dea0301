/* The contract between liblocus_hooks (the memory hooks, an opt-in library of
 * its own) and its subscribers (the registration cache, src/reg/reg_hooks.c).
 *
 * liblocus_hooks defines munmap, mremap, madvise, mmap/mmap64, brk, sbrk,
 * shmdt, shmat and, with glibc malloc, free, realloc, reallocarray and
 * malloc_trim. Each calls the next definition and then tells every
 * subscriber which pages it unmapped, replaced or emptied. liblocus never
 * links it: it finds locus_hooks_subscribe at run time (a weak reference,
 * else dlsym), so a program without the hooks pays nothing and a cache knows
 * it has none.
 *
 * This header is the whole contract; it depends on nothing of liblocus. A
 * change of meaning bumps LOCUS_HOOKS_VERSION: a subscriber built for
 * another version is refused (subscribe returns LOCUS_HOOKS_EVERSION). */
#ifndef LOCUS_HOOKS_H
#define LOCUS_HOOKS_H

#include <stdint.h>

#define LOCUS_HOOKS_VERSION 1

/* caps, filled by a successful subscribe */
#define LOCUS_HOOKS_FIRST 1u        /* the process's munmap is this library's (linked or preloaded) */
#define LOCUS_HOOKS_BEHIND 2u       /* libc's munmap comes first (dlopen'ed late): nothing is seen */
#define LOCUS_HOOKS_GLIBC_MALLOC 4u /* free/realloc/malloc_trim report glibc's internal unmaps */

/* subscribe's errors */
#define LOCUS_HOOKS_EFULL (-1)      /* every subscriber slot is taken */
#define LOCUS_HOOKS_EVERSION (-2)   /* the subscriber was built for another version */

typedef struct locus_hooks_sub locus_hooks_sub_t;
struct locus_hooks_sub {
    /* [start, end) was unmapped, remapped or emptied (page aligned; end ==
     * UINT64_MAX: free pages anywhere may have been emptied, malloc_trim).
     * Called from inside munmap, free, ... (maybe inside malloc's own
     * lock): it must not block, allocate or unmap. */
    void (*fn)(locus_hooks_sub_t *sub, uint64_t start, uint64_t end);
    unsigned caps;                  /* out: LOCUS_HOOKS_* */
    int slot;                       /* out: private to the hooks */
};

/* Start calling sub->fn (sub stays owned by the caller, valid until
 * unsubscribe returns). 0, or LOCUS_HOOKS_EFULL / LOCUS_HOOKS_EVERSION. */
int locus_hooks_subscribe(unsigned version, locus_hooks_sub_t *sub);
/* Stop; returns once no call to sub->fn is in flight. */
void locus_hooks_unsubscribe(locus_hooks_sub_t *sub);

#endif
