/* Memphis case 2: a shared table updated by all threads (a hot spot). The
 * table is small compared with the data, every thread updates all of it, and
 * it was initialised by one thread, so most updates are remote whatever the
 * schedule. Fix: interleave it, or give each node its own copy and combine. */
#include "numa_common.h"

#include <stdint.h>

#define TABLE (2u << 20) /* bytes */
#define UPDATES (6u << 20)

static uint64_t *counts;
static size_t entries;

static void *update(void *arg)
{
    long id = (long)arg;
    pin_to_cpu((int)id);
    uint64_t x = 88172645463325252ull + (uint64_t)id;
    pthread_barrier_wait(&barrier);
    for (unsigned i = 0; i < UPDATES; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        __atomic_fetch_add(&counts[x % entries], 1, __ATOMIC_RELAXED); /* REMOTE_LOOP */
    }
    return NULL;
}

int main(void)
{
    setup_threads();
    entries = TABLE / sizeof(uint64_t);
    counts = malloc(TABLE);
    if (!counts)
        return 1;
    for (size_t i = 0; i < entries; i++)
        counts[i] = 1; /* FIRST_TOUCH */
    run_threads(update);
    uint64_t total = 0;
    for (size_t i = 0; i < entries; i++)
        total += counts[i];
    printf("table: %d threads, %llu updates\n", nthreads, (unsigned long long)total);
    free(counts);
    return 0;
}
