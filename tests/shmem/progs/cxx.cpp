// A C++ OpenSHMEM program (built with locus-oshc++): shmem.h from C++ (the C
// API, extern "C"), symmetric C++ globals and class statics, RMA into and out
// of std::vector storage, an AMO, a team reduction and a broadcast. Prints
// "done" on PE 0 when every check held.
#include <shmem.h>

#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <vector>

namespace {
long counter;                     // symmetric: a global of the program
struct Table {
    static int cells[8];          // symmetric: a class static
};
int Table::cells[8];

int failures;
void check(bool ok, const char *what, long got, long want)
{
    if (!ok) {
        std::printf("PE %d: FAIL %s: got %ld, want %ld\n", shmem_my_pe(), what, got, want);
        failures++;
    }
}
}  // namespace

int main()
{
    shmem_init();
    const int me = shmem_my_pe(), n = shmem_n_pes(), right = (me + 1) % n;

    // RMA from a std::vector into a peer's symmetric buffer, and back.
    auto *dst = static_cast<long *>(shmem_calloc(64, sizeof(long)));
    std::vector<long> src(64);
    std::iota(src.begin(), src.end(), 1000L * me);
    shmem_long_put(dst, src.data(), src.size(), right);
    shmem_barrier_all();
    const int left = (me + n - 1) % n;
    for (int i = 0; i < 64; i++)
        check(dst[i] == 1000L * left + i, "put from a vector", dst[i], 1000L * left + i);
    std::vector<long> back(64);
    shmem_long_get(back.data(), dst, back.size(), right);
    for (int i = 0; i < 64; i++)
        check(back[i] == 1000L * me + i, "get into a vector", back[i], 1000L * me + i);

    // Globals and class statics are symmetric: an AMO and a p.
    shmem_long_atomic_add(&counter, me + 1, 0);
    shmem_int_p(&Table::cells[me % 8], me, right);
    shmem_barrier_all();
    if (me == 0)
        check(counter == 1L * n * (n + 1) / 2, "fetch-free add to a global", counter, 1L * n * (n + 1) / 2);
    check(Table::cells[left % 8] == left, "p to a class static", Table::cells[left % 8], left);

    // A team reduction and an active-set broadcast with a static pSync.
    auto *v = static_cast<long *>(shmem_malloc(sizeof(long)));
    auto *sum = static_cast<long *>(shmem_malloc(sizeof(long)));
    *v = me;
    shmem_long_sum_reduce(SHMEM_TEAM_WORLD, sum, v, 1);
    check(*sum == 1L * n * (n - 1) / 2, "sum_reduce", *sum, 1L * n * (n - 1) / 2);
    static long psync[SHMEM_BCAST_SYNC_SIZE];
    for (long &p : psync)
        p = SHMEM_SYNC_VALUE;
    shmem_barrier_all();
    *v = me == 0 ? 4242 : -1;
    shmem_broadcast64(sum, v, 1, 0, 0, 0, n, psync);
    if (me != 0)
        check(*sum == 4242, "broadcast64", *sum, 4242);

    shmem_free(v);
    shmem_free(sum);
    shmem_free(dst);
    int total = shmem_int_atomic_fetch_add(&Table::cells[0], 0, me);  // keep cells used
    (void)total;
    long bad = failures;
    shmem_barrier_all();
    if (me == 0 && bad == 0)
        std::printf("done\n");
    shmem_finalize();
    return failures ? EXIT_FAILURE : EXIT_SUCCESS;
}
