/* The profiling interface (OpenSHMEM 1.5 section 10, as the spec's
 * pshmem_example does): the program includes <pshmem.h>, defines some
 * shmem_* routines itself, and reaches the library's through pshmem_*.
 * Its definitions must replace the library's for every call the program
 * makes (typed and through the C11 generic names), pshmem_* must do the work
 * without passing through them, and the library must not call them itself
 * (shmem_malloc, barriers, finalize and collectives do not count as the
 * program's quiets, mallocs or puts). */
#include <pshmem.h>

#include "tcommon.h"

#define N 16

static long n_put, n_put_elems, n_malloc, n_fadd, n_quiet;

void shmem_long_put(long *dest, const long *source, size_t nelems, int pe)
{
    n_put++;
    n_put_elems += (long)nelems;
    pshmem_long_put(dest, source, nelems, pe);
}

void *shmem_malloc(size_t size)
{
    n_malloc++;
    return pshmem_malloc(size);
}

int shmem_int_atomic_fetch_add(int *dest, int value, int pe)
{
    n_fadd++;
    return pshmem_int_atomic_fetch_add(dest, value, pe);
}

void shmem_quiet(void)
{
    n_quiet++;
    pshmem_quiet();
}

int main(void)
{
    t_init();
    int me = t_me, npes = t_npes, right = (me + 1) % npes;
    long *dst = shmem_malloc(2 * N * sizeof(long));
    int *sum = shmem_calloc(1, sizeof(int));
    long src[N];
    CHECK(dst && sum, "allocation failed");
    CHECK(n_malloc == 1, "shmem_malloc seen %ld times, called once (shmem_calloc must not reach it)", n_malloc);
    t_section("malloc interposed");

    for (int i = 0; i < N; i++)
        src[i] = me * 1000 + i;
    shmem_long_put(dst, src, N, right);       /* interposed */
    pshmem_long_put(dst + N, src, N, right);  /* the library's, directly */
    shmem_quiet();
    shmem_barrier_all();
    int left = (me + npes - 1) % npes, bad = 0;
    for (int i = 0; i < N; i++)
        bad += dst[i] != left * 1000 + i || dst[N + i] != left * 1000 + i;
    CHECK(!bad, "%d elements wrong after the puts from PE %d", bad, left);
    CHECK(n_put == 1 && n_put_elems == N, "put seen %ld times (%ld elements): expected once (%d)", n_put,
          n_put_elems, N);
    t_section("put interposed, pshmem_long_put direct");

#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
    shmem_put(dst, src, N, right); /* the generic name selects shmem_long_put: the program's */
    shmem_barrier_all();
    CHECK(n_put == 2, "put through the generic shmem_put seen %ld times in all, expected 2", n_put);
#endif
    t_section("generic put reaches the program's routine");

    int old = shmem_int_atomic_fetch_add(sum, 1, 0);
    CHECK(old >= 0 && old < 2 * npes, "fetch-add returned %d", old); /* the others add too */
    pshmem_int_atomic_add(sum, 1, 0);
    shmem_barrier_all();
    if (me == 0)
        CHECK(*sum == 2 * npes, "sum %d, expected %d", *sum, 2 * npes);
    CHECK(n_fadd == 1, "fetch-add seen %ld times, expected once", n_fadd);
    t_section("atomics interposed");

    /* barriers, collectives, frees and reductions quiet inside the library:
     * none of that may reach the program's shmem_quiet */
    long before = n_quiet;
    static long pSync[SHMEM_BCAST_SYNC_SIZE], bsrc[N]; /* symmetric, as the source must be */
    for (int i = 0; i < SHMEM_BCAST_SYNC_SIZE; i++)
        pSync[i] = SHMEM_SYNC_VALUE;
    shmem_barrier_all();
    shmem_broadcast64(dst, bsrc, N, 0, 0, 0, npes, pSync);
    shmem_barrier_all();
    shmem_free(sum);
    CHECK(n_quiet == before, "the library called the program's shmem_quiet %ld times", n_quiet - before);
    shmem_quiet();
    CHECK(n_quiet == before + 1, "shmem_quiet seen %ld times, expected %ld", n_quiet, before + 1);
    t_section("library calls stay inside");

    CHECK(pshmem_my_pe() == me && pshmem_n_pes() == npes, "pshmem_my_pe/n_pes disagree");
    t_section("pshmem queries");

    shmem_free(dst);
    return t_finish();
}
