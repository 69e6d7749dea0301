/* RMA corner cases of 1.5 (checked against the spec only): zero-length
 * transfers with NULL pointers are no-ops, puts to self overlapping their
 * source, and shmem_ptr to a heap object of every PE of this node. */
#include "tcommon.h"

int main(void)
{
    t_init();
    int me = t_me, npes = t_npes, right = (me + 1) % npes;
    shmem_putmem(NULL, NULL, 0, right);
    shmem_getmem(NULL, NULL, 0, right);
    shmem_putmem_nbi(NULL, NULL, 0, right);
    shmem_getmem_nbi(NULL, NULL, 0, right);
    shmem_long_put(NULL, NULL, 0, right);
    shmem_long_iput(NULL, NULL, 1, 1, 0, right);
    shmem_quiet();
    t_section("zero length with NULL pointers");

    char *h = shmem_malloc(1000);
    for (int i = 0; i < 1000; i++)
        h[i] = (char)i;
    shmem_putmem(h + 10, h, 500, me); /* overlapping, to self */
    int bad = 0;
    for (int i = 0; i < 500; i++)
        bad += h[10 + i] != (char)i;
    CHECK(!bad, "overlapping put to self: %d wrong", bad);
    t_section("overlapping put to self");

    shmem_barrier_all();
    for (int pe = 0; pe < npes; pe++) {
        char *p = shmem_ptr(h, pe);
        if (pe == me)
            CHECK(p == h, "shmem_ptr self");
        if (p && pe != me)
            CHECK(shmem_addr_accessible(h, pe), "shmem_ptr non-NULL but not accessible");
    }
    t_section("shmem_ptr");
    shmem_free(h);
    return t_finish();
}
