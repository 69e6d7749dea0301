/* reg_threads_tsan: the reg sources without the memory hooks (their munmap,
 * mmap and free interposition cannot coexist with a sanitizer runtime) and
 * without the heap module. */
#include "reg/reg_internal.h"

#include <locus/heap.h>

int reg_hooks_add(locus_reg_cache_t *c) { (void)c; return 0; }
void reg_hooks_remove(locus_reg_cache_t *c) { (void)c; }
void reg_hooks_invalidate_all_caches(uint64_t s, uint64_t e) { (void)s; (void)e; }
void *locus_heap_base(const locus_heap_t *heap) { (void)heap; return NULL; }
uint64_t locus_heap_size(const locus_heap_t *heap) { (void)heap; return 0; }

