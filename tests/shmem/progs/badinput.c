/* Bad input (locus only; the spec defines no behaviour for most of it):
 * the last PE makes one bad call, chosen by argv[1], while the others wait
 * in a barrier. Expected: a message naming the call, the PE and the address
 * on stderr, and the whole job ends with status 1 (no hang); for a heap too
 * small, the spec's NULL. tests/shmem/run_bad.sh checks each case. */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long global_word;

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "";
    if (!strcmp(what, "before-init")) {
        shmem_long_p(&global_word, 1, 0);
        return 0;
    }
    if (!strcmp(what, "query-before-init")) /* -1, and a note under SHMEM_DEBUG */
        return shmem_my_pe() == -1 && shmem_n_pes() == -1 ? 0 : 1;
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    if (!strcmp(what, "malloc-mismatch")) /* run with SHMEM_DEBUG set */
        (void)shmem_malloc(me == npes - 1 ? 128 : 64);
    long *heap = shmem_malloc(64);
    long stack_word = 0;
    shmem_barrier_all();
    if (me == npes - 1) {
        if (!strcmp(what, "pe-range"))
            shmem_long_p(heap, 1, npes + 5);
        else if (!strcmp(what, "pe-negative"))
            (void)shmem_long_g(&global_word, -1);
        else if (!strcmp(what, "not-symmetric"))
            shmem_long_p(&stack_word, 1, 0);
        else if (!strcmp(what, "past-end"))
            shmem_putmem(heap, malloc(1 << 30), (size_t)1 << 30, 0);
        else if (!strcmp(what, "misaligned"))
            shmem_int_atomic_inc((int *)((char *)heap + 2), 0);
        else if (!strcmp(what, "bad-free"))
            shmem_free(&stack_word);
        else if (!strcmp(what, "bad-cmp"))
            shmem_long_wait_until(heap, 42, 0);
        else if (!strcmp(what, "bad-sigop"))
            shmem_long_put_signal(heap, &stack_word, 1, (uint64_t *)heap + 1, 1, 7, 0);
        else if (!strcmp(what, "bad-root"))
            shmem_long_broadcast(SHMEM_TEAM_WORLD, heap, heap, 1, npes + 1);
        else if (!strcmp(what, "coll-not-symmetric")) /* 8 bytes: the channel-box path checks too */
            shmem_long_sum_reduce(SHMEM_TEAM_WORLD, heap, &stack_word, 1);
        else if (!strcmp(what, "invalid-ctx"))
            shmem_ctx_long_p(SHMEM_CTX_INVALID, heap, 1, 0);
        else if (!strcmp(what, "ibput-stride")) /* 1.6: block starts closer than a block */
            shmem_long_ibput(heap, heap, 1, 2, 2, 2, 0);
        else if (!strcmp(what, "pe-quiet-range")) {
            int pes[2] = {0, npes + 3};
            shmem_pe_quiet(pes, 2);
        } else if (!strcmp(what, "unmatched-barrier")) /* one barrier more than the others */
            shmem_barrier_all();
    }
    if (!strcmp(what, "heap-too-small")) {
        /* the spec's behaviour: NULL on every PE, and the heap stays usable */
        void *p = shmem_malloc((size_t)1 << 46);
        long *q = shmem_malloc(1024);
        if (me == 0)
            printf("heap-too-small: %s, next malloc %s\n", p ? "not NULL" : "NULL", q ? "works" : "fails");
        shmem_finalize();
        return p == NULL && q ? 0 : 1;
    }
    if (!strcmp(what, "after-finalize")) {
        shmem_finalize();
        shmem_long_p(&global_word, 1, 0);
        return 0;
    }
    shmem_barrier_all(); /* the bad PE never gets here */
    shmem_finalize();
    return 0;
}
