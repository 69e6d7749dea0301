/* Deprecated names that older codes still call: start_pes, _my_pe,
 * _num_pes, shmalloc/shfree/shrealloc/shmemalign, the pre-1.4 AMO names
 * (fadd, finc, add, inc, cswap, swap, fetch, set), shmem_wait and
 * TYPE_wait, the cache routines, the _SHMEM_* constants, <mpp/shmem.h>.
 * my_pe and num_pes. start_pes has no finalize: the library finalizes at exit. */
#include <mpp/shmem.h>

#include <stdio.h>
#include <string.h>

/* Cray's and SGI's names without the underscore: in no OpenSHMEM header
 * (Open MPI's shmem-compat.h has them), declared by the codes that call them. */
int my_pe(void);
int num_pes(void);

static int me, npes;
static long fails, total;
static long counts[256];
static long pSync[_SHMEM_BARRIER_SYNC_SIZE];

#define CHECK(cond, what)                                                   \
    do {                                                                    \
        if (!(cond)) {                                                      \
            fails++;                                                        \
            fprintf(stderr, "PE %d: line %d: %s\n", me, __LINE__, what);    \
        }                                                                   \
    } while (0)

static void section(const char *name)
{
    shmem_barrier(0, 0, npes, pSync);
    shmem_long_p(&counts[me], fails, 0);
    shmem_barrier(0, 0, npes, pSync);
    if (me == 0) {
        long sum = 0;
        for (int i = 0; i < npes; i++)
            sum += counts[i];
        printf("%s: %s\n", name, sum ? "FAIL" : "ok");
        fflush(stdout);
    }
    total += fails;
    fails = 0;
    shmem_barrier(0, 0, npes, pSync);
}

int main(void)
{
    start_pes(0);
    start_pes(0); /* a second call is a no-op */
    me = _my_pe();
    npes = _num_pes();
    for (int i = 0; i < _SHMEM_BARRIER_SYNC_SIZE; i++)
        pSync[i] = _SHMEM_SYNC_VALUE;
    shmem_barrier_all();
    CHECK(me == shmem_my_pe() && npes == shmem_n_pes(), "_my_pe/_num_pes");
    CHECK(my_pe() == me && num_pes() == npes, "my_pe/num_pes");
    CHECK(_SHMEM_MAJOR_VERSION == SHMEM_MAJOR_VERSION && _SHMEM_MINOR_VERSION == SHMEM_MINOR_VERSION,
          "_SHMEM_ version");
    CHECK(_SHMEM_MAX_NAME_LEN == SHMEM_MAX_NAME_LEN, "_SHMEM_MAX_NAME_LEN");
    CHECK(_SHMEM_SYNC_VALUE == SHMEM_SYNC_VALUE && _SHMEM_REDUCE_MIN_WRKDATA_SIZE == SHMEM_REDUCE_MIN_WRKDATA_SIZE &&
              _SHMEM_BCAST_SYNC_SIZE == SHMEM_BCAST_SYNC_SIZE && _SHMEM_COLLECT_SYNC_SIZE == SHMEM_COLLECT_SYNC_SIZE &&
              _SHMEM_REDUCE_SYNC_SIZE == SHMEM_REDUCE_SYNC_SIZE,
          "_SHMEM_ sync constants");
    CHECK(_SHMEM_CMP_EQ == SHMEM_CMP_EQ && _SHMEM_CMP_NE == SHMEM_CMP_NE && _SHMEM_CMP_GT == SHMEM_CMP_GT &&
              _SHMEM_CMP_LE == SHMEM_CMP_LE && _SHMEM_CMP_LT == SHMEM_CMP_LT && _SHMEM_CMP_GE == SHMEM_CMP_GE,
          "_SHMEM_CMP_");
    section("start_pes, _my_pe, _num_pes, _SHMEM_ constants");

    int right = (me + 1) % npes, left = (me + npes - 1) % npes;
    long *a = shmalloc(100 * sizeof(long));
    long *b = shmemalign(4096, 100 * sizeof(long));
    CHECK(a && b && (unsigned long)b % 4096 == 0, "shmalloc/shmemalign");
    for (int i = 0; i < 100; i++)
        a[i] = me * 100 + i;
    shmem_barrier_all();
    a = shrealloc(a, 1000 * sizeof(long));
    CHECK(a && a[99] == me * 100 + 99, "shrealloc kept the contents");
    shmem_long_p(&a[999], me, right);
    shmem_barrier_all();
    CHECK(a[999] == left, "shrealloc'd block remote");
    shfree(b);
    shfree(a);
    section("shmalloc, shmemalign, shrealloc, shfree");

    long *w = shmalloc(8 * sizeof(long));
    int *wi = shmalloc(8 * sizeof(int));
    long long *wl = shmalloc(8 * sizeof(long long));
    memset(w, 0, 8 * sizeof(long));
    memset(wi, 0, 8 * sizeof(int));
    memset(wl, 0, 8 * sizeof(long long));
    shmem_barrier_all();
    for (int pe = 0; pe < npes; pe++) {
        shmem_long_add(&w[0], 2, pe);
        shmem_long_inc(&w[1], pe);
        (void)shmem_long_fadd(&w[2], 3, pe);
        (void)shmem_long_finc(&w[3], pe);
        shmem_int_add(&wi[0], 2, pe);
        shmem_int_inc(&wi[1], pe);
        (void)shmem_int_finc(&wi[3], pe);
        shmem_longlong_add(&wl[0], 2, pe);
        (void)shmem_longlong_fadd(&wl[2], 3, pe);
    }
    shmem_barrier_all();
    CHECK(w[0] == 2L * npes && w[1] == npes && w[2] == 3L * npes && w[3] == npes, "long add/inc/fadd/finc");
    CHECK(wi[0] == 2 * npes && wi[1] == npes && wi[3] == npes, "int add/inc/finc");
    CHECK(wl[0] == 2LL * npes && wl[2] == 3LL * npes, "longlong add/fadd");
    shmem_long_set(&w[4], me + 10, right);
    shmem_barrier_all();
    CHECK(shmem_long_fetch(&w[4], me) == left + 10, "long set/fetch");
    long old = shmem_long_swap(&w[5], me + 1, right);
    CHECK(old == 0, "long swap");
    shmem_barrier_all();
    old = shmem_long_cswap(&w[5], left + 1, 77, me);
    CHECK(old == left + 1 && w[5] == 77, "long cswap");
    shmem_double_set((double *)&w[6], 1.5, right);
    shmem_barrier_all();
    CHECK(shmem_double_fetch((double *)&w[6], me) == 1.5, "double set/fetch");
    section("pre-1.4 AMO names");

    /* shmem_wait / shmem_long_wait: wait while the value equals the given one */
    w[7] = 0;
    shmem_barrier_all();
    shmem_long_p(&w[7], 1, right);
    shmem_long_wait(&w[7], 0);
    CHECK(w[7] == 1, "shmem_long_wait");
    shmem_barrier_all();
    shmem_long_p(&w[7], 2, right);
    shmem_wait(&w[7], 1);
    CHECK(w[7] == 2, "shmem_wait");
    shmem_barrier_all();
    shmem_long_p(&w[7], 3, right);
    shmem_wait_until(&w[7], SHMEM_CMP_EQ, 3L);
    CHECK(w[7] == 3, "shmem_wait_until (generic or untyped)");
    section("shmem_wait, TYPE_wait");

    shmem_clear_cache_inv();
    shmem_set_cache_inv();
    shmem_clear_cache_line_inv(w);
    shmem_set_cache_line_inv(w);
    shmem_udcflush();
    shmem_udcflush_line(w);
    section("cache routines (no-ops)");

    shfree(wl);
    shfree(wi);
    shfree(w);
    if (me == 0) {
        printf("done\n");
        fflush(stdout);
    }
    return total ? 1 : 0; /* no shmem_finalize: start_pes finalizes at exit */
}
