/* A job whose rank 0 is killed (SIGALRM, default action) in the middle of
 * locus_rma_init, after its heap's named object exists and before the names
 * are unlinked (that happens once every local process mapped them): the
 * process cannot clean up, so `locus run` must. The heap is large enough that
 * its (eager) fault-in outlasts the timer. */
#include <locus/rma.h>

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

/* Called by the heap's fault-in every ~100 ms: the first call means the heap
 * object exists and is being faulted in. */
static void die(void *arg, uint64_t done, uint64_t total)
{
    (void)arg, (void)done, (void)total;
    raise(SIGALRM);
}

int main(void)
{
    const char *r = getenv("LOCUS_RANK");
    locus_rma_attr_t a;
    locus_rma_attr_init(&a);
    locus_rma_attr_from_env(&a);
    a.heap_size = 2ull << 30;
    a.heap.populate = LOCUS_POPULATE_EAGER; /* reserve has no fault-in to call die() from */
    if (r && atoi(r) == 0)
        a.heap.progress = die;
    locus_rma_t *rma;
    return locus_rma_init(&a, &rma) == LOCUS_OK ? 0 : 4;
}
