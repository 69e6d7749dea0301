/* Fetching non-blocking AMOs (1.5, checked against the spec only): the
 * fetched values are there after quiet, and are exact. */
#include "tcommon.h"

#define K 64
static char *seen; /* heap */

int main(void)
{
    t_init();
    seen = shmem_calloc(K * T_MAXPE, 1);
    int me = t_me, npes = t_npes, right = (me + 1) % npes;
    long *w = shmem_calloc(8, sizeof(long));
    uint64_t *u = shmem_calloc(4, sizeof(uint64_t));
    long got[K];
    shmem_barrier_all();
    for (int k = 0; k < K; k++)
        shmem_long_atomic_fetch_inc_nbi(&got[k], &w[0], 0);
    shmem_quiet();
    int mono = 1;
    for (int k = 0; k < K; k++) {
        mono &= k == 0 || got[k] > got[k - 1];
        if (got[k] >= 0 && got[k] < K * npes)
            shmem_char_p(&seen[got[k]], 1, 0);
    }
    CHECK(mono, "fetch_inc_nbi values not increasing");
    shmem_barrier_all();
    if (me == 0) {
        int missing = 0;
        for (int i = 0; i < K * npes; i++)
            missing += seen[i] != 1;
        CHECK(!missing && w[0] == K * npes, "fetch_inc_nbi: %d values missing, total %ld", missing, w[0]);
    }
    t_section("fetch_inc_nbi");

    long a, b, c, d;
    shmem_long_atomic_fetch_add_nbi(&a, &w[1], 5, right);
    shmem_quiet();
    shmem_barrier_all();
    shmem_long_atomic_fetch_nbi(&b, &w[1], right);
    shmem_long_atomic_swap_nbi(&c, &w[2], me + 1, right);
    shmem_quiet();
    shmem_barrier_all();
    shmem_long_atomic_compare_swap_nbi(&d, &w[2], me + 1 == 0 ? -1 : (right + npes - 1) % npes + 1, 77, right);
    shmem_quiet();
    CHECK(a == 0 && b == 5 && c == 0, "fetch_add_nbi %ld, fetch_nbi %ld, swap_nbi %ld", a, b, c);
    CHECK(d == me + 1, "compare_swap_nbi fetched %ld", d);
    shmem_barrier_all();
    CHECK(w[2] == 77, "compare_swap_nbi result %ld", w[2]);
    t_section("fetch_add/fetch/swap/compare_swap _nbi");

    uint64_t x, y, z;
    shmem_uint64_atomic_fetch_or_nbi(&x, &u[0], 1ull << me, 0);
    shmem_quiet();
    shmem_barrier_all();
    shmem_uint64_atomic_fetch_and_nbi(&y, &u[0], ~0ull, 0);
    shmem_quiet();
    uint64_t all = npes >= 64 ? ~0ull : (1ull << npes) - 1;
    CHECK((x & (1ull << me)) == 0 && y == all, "fetch_or_nbi %llx, fetch_and_nbi %llx", (unsigned long long)x,
          (unsigned long long)y);
    shmem_barrier_all();
    shmem_uint64_atomic_fetch_xor_nbi(&z, &u[1], 1ull << me, 0);
    shmem_quiet();
    shmem_barrier_all();
    if (me == 0)
        CHECK(u[1] == all, "fetch_xor_nbi result %llx", (unsigned long long)u[1]);
    double dv;
    double *dw = (double *)&u[2];
    shmem_double_atomic_swap_nbi(&dv, dw, 2.5, me);
    shmem_quiet();
    CHECK(dv == 0.0 && *dw == 2.5, "double swap_nbi");
    t_section("bitwise and extended _nbi");
    shmem_free(u);
    shmem_free(w);
    return t_finish();
}
