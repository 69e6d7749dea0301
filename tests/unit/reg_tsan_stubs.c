/* reg_threads_tsan: the reg sources without the heap module (the memory
 * hooks are a library of their own that this test does not link: the
 * caches find none and rely on explicit invalidation). */
#include "reg/reg_internal.h"

#include <locus/heap.h>

void *locus_heap_base(const locus_heap_t *heap) { (void)heap; return NULL; }
uint64_t locus_heap_size(const locus_heap_t *heap) { (void)heap; return 0; }
