/* Every payload copy of the shm module goes through shm_copy(), which hands it
 * to the copy module with a hint chosen by topology: when the peer's core does
 * not share our L3 (SHM_COPY_FAR), lines we write into its ring (copy-in) or
 * read out of shared memory (copy-out, single copy) are of no use in our cache,
 * so NT_DEST / NT_SOURCE let the selector go non-temporal earlier. Tiny copies
 * stay memcpy. */
#include "shm/shm_internal.h"

#include <locus/copy.h>
#include <string.h>

void shm_copy(void *dst, const void *src, size_t n, int dir)
{
    if (n <= 256) {
        memcpy(dst, src, n);
        return;
    }
    bool far = dir & SHM_COPY_FAR;
    locus_copy_hint_t hint = !far ? LOCUS_COPY_HINT_NONE
                             : (dir & 3) == 0 ? LOCUS_COPY_HINT_NT_DEST : LOCUS_COPY_HINT_NT_SOURCE;
    locus_copy(dst, src, n, hint);
}
