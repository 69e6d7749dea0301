/* Hammers a small tracked table from more threads than cpus, so the
 * profiler's access sampler re-arms the same pages while other threads are
 * still inside the fault handler of an earlier arming: a stale handler must
 * never leave a page protected that no slot knows of (the program would die
 * of SIGSEGV). Prints the sum of the updates, which must equal
 * threads x updates; exit 0 when it does.
 *   prof_rearm [threads [updates-per-thread [table-KiB]]]
 * The table is 64 KiB by default: 16 pages, the shim's smallest tracked size. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>


static uint64_t *counts;
static size_t entries;
static unsigned long updates = 2000000;

static void *update(void *arg)
{
    uint64_t x = 88172645463325252ull + (uint64_t)(uintptr_t)arg;
    for (unsigned long i = 0; i < updates; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        __atomic_fetch_add(&counts[x % entries], 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 8;
    unsigned long kib = 64;
    if (argc > 2)
        updates = strtoul(argv[2], NULL, 10);
    if (argc > 3)
        kib = strtoul(argv[3], NULL, 10);
    if (n < 1 || n > 256 || updates == 0 || kib < 4 || kib > (1ul << 20)) {
        fprintf(stderr, "usage: prof_rearm [threads 1-256 [updates-per-thread [table-KiB 4-1048576]]]\n");
        return 2;
    }
    entries = kib * 1024 / sizeof(uint64_t);
    counts = calloc(entries, sizeof(uint64_t));
    if (!counts)
        return 1;
    pthread_t t[256];
    for (long i = 0; i < n; i++)
        if (pthread_create(&t[i], NULL, update, (void *)i) != 0)
            return 1;
    for (long i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    uint64_t total = 0;
    for (size_t i = 0; i < entries; i++)
        total += counts[i];
    printf("rearm: %d threads, %llu updates\n", n, (unsigned long long)total);
    free(counts);
    return total == (uint64_t)n * updates ? 0 : 1;
}
