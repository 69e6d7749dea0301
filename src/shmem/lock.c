/* Distributed locks: a ticket lock in the user's symmetric long (initially
 * 0), on PE 0's copy: the high 32 bits hand out tickets, the low 32 bits
 * say whose turn it is. Acquiring is one fetch-add and then polling the
 * turn (a load on this node, a NIC fetch otherwise); clear quiets first (so
 * the next holder sees everything done under the lock) and advances the
 * turn with a compare-swap (no carry into the ticket half). First come,
 * first served; every operation goes through the job's atomicity agent. */
#include "shmem/shmem_internal.h"

#define CALL lshm_name(__func__)
#define TICKET (1ull << 32)

static void *word(const char *call, volatile long *lock)
{
    lshm_require_init(call);
    if (!lock)
        lshm_fatal(call, "lock is NULL");
    return (void *)lock;
}

LSHM_DEF(void, shmem_set_lock, (volatile long *lock))
{
    const char *call = CALL;
    void *w = word(call, lock);
    uint64_t mine = lshm_amo(call, LOCUS_RMA_AMO_ADD, w, 8, TICKET, 0, 0, true) >> 32;
    unsigned spins = 0;
    while ((uint32_t)lshm_amo(call, LOCUS_RMA_AMO_FETCH, w, 8, 0, 0, 0, true) != (uint32_t)mine)
        lshm_relax(call, &spins);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

LSHM_DEF(void, shmem_clear_lock, (volatile long *lock))
{
    const char *call = CALL;
    void *w = word(call, lock);
    lshm_quiet();
    uint64_t old = lshm_amo(call, LOCUS_RMA_AMO_FETCH, w, 8, 0, 0, 0, true);
    for (;;) {
        uint64_t next = (old & ~0xffffffffull) | (uint32_t)(old + 1);
        uint64_t seen = lshm_amo(call, LOCUS_RMA_AMO_CSWAP, w, 8, next, old, 0, true);
        if (seen == old)
            break;
        old = seen; /* a ticket was taken meanwhile */
    }
}

LSHM_DEF(int, shmem_test_lock, (volatile long *lock))
{
    const char *call = CALL;
    void *w = word(call, lock);
    uint64_t old = lshm_amo(call, LOCUS_RMA_AMO_FETCH, w, 8, 0, 0, 0, true);
    if ((uint32_t)(old >> 32) != (uint32_t)old)
        return 1; /* held (or others are waiting) */
    if (lshm_amo(call, LOCUS_RMA_AMO_CSWAP, w, 8, old + TICKET, old, 0, true) != old)
        return 1;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return 0;
}
