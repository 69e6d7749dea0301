/* Every payload copy of the shm module goes through shm_copy(), which hands it
 * to the copy module with a hint chosen by topology: when the peer's core does
 * not share our L3 (far), lines we write into its ring (copy-in) or read out
 * of shared memory (copy-out, single copy) are of no use in our cache, so
 * NT_DEST / NT_SOURCE let the selector go non-temporal earlier. Tiny copies
 * stay memcpy. */
#include "shm/msg.h"

#include <locus/copy.h>
#include <string.h>

void shm_copy(void *dst, const void *src, size_t n, shm_copy_dir_t dir, bool far)
{
    if (n <= 256) {
        memcpy(dst, src, n);
        return;
    }
    locus_copy_hint_t hint = !far ? LOCUS_COPY_HINT_NONE
                             : dir == SHM_COPY_IN ? LOCUS_COPY_HINT_NT_DEST : LOCUS_COPY_HINT_NT_SOURCE;
    locus_copy(dst, src, n, hint);
}

void shm_copy_near(void *dst, const void *src, size_t n, shmq_dir_t dir)
{
    shm_copy(dst, src, n, (shm_copy_dir_t)dir, false);
}

void shm_copy_far(void *dst, const void *src, size_t n, shmq_dir_t dir)
{
    shm_copy(dst, src, n, (shm_copy_dir_t)dir, true);
}
