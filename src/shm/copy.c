/* Every payload copy of the shm module goes through shm_copy(), which hands it
 * to the copy module with a hint chosen by topology: when the peer does not
 * share our L3, lines we write into the ring (copy-in) or read out of it
 * (copy-out) are of no use in our cache, so NT_DEST / NT_SOURCE let the
 * selector use non-temporal stores/loads earlier. Tiny copies stay memcpy. */
#include "shm/shm_internal.h"

#include <locus/copy.h>
#include <string.h>

static locus_copy_hint_t hint_in = LOCUS_COPY_HINT_NONE, hint_out = LOCUS_COPY_HINT_NONE;

void shm_copy_set_hints(bool cross_l3)
{
    hint_in = cross_l3 ? LOCUS_COPY_HINT_NT_DEST : LOCUS_COPY_HINT_NONE;
    hint_out = cross_l3 ? LOCUS_COPY_HINT_NT_SOURCE : LOCUS_COPY_HINT_NONE;
}

void shm_copy(void *dst, const void *src, size_t n, int dir)
{
    if (n <= 256) {
        memcpy(dst, src, n);
        return;
    }
    /* dir 2 (single copy out of a peer's buffer into ours) reads data the
     * peer will not need again from us: same hint as copy-out. */
    locus_copy(dst, src, n, dir == 0 ? hint_in : hint_out);
}
