/* liblocus_shmem loaded at run time by a program that does not link it, as
 * a Python, Julia or R extension module is (the module is dlopen'ed after
 * the process started, and it pulls in liblocus_shmem and liblocus). glibc
 * places the TLS of a library loaded that way in the small static TLS
 * surplus if the library uses the initial-exec model anywhere; liblocus has
 * ~40 KB of TLS, so it must not (the dlopen then fails with "cannot allocate
 * memory in static TLS block").
 *
 * Sections (run_diff.sh "spec" kind: PE 0 prints "name: ok|FAIL", "done"):
 *   load     dlopen(RTLD_NOW | RTLD_LOCAL), every entry point found
 *   setup    shmem_init_thread; my_pe / n_pes in range
 *   put      every PE writes its number into slot me of every PE's array
 *   atomic   every PE adds me + 1 to PE 0's counter: the sum is n(n+1)/2
 *   thread   a thread started after the load (its TLS block of liblocus is
 *            made when it first needs it) does an atomic fetch-add and a get
 *   finalize
 * LOCUS_SHMEM_SO is the library's path (set by CMake). CHECK and section()
 * repeat progs/tcommon.h's through dlsym'd pointers: including it would link
 * the program against liblocus_shmem, which is what this test must not do. */
#include <shmem.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef LOCUS_SHMEM_SO
#define LOCUS_SHMEM_SO "liblocus_shmem.so.0"
#endif

static __typeof__(shmem_init_thread) *p_init_thread;
static __typeof__(shmem_my_pe) *p_my_pe;
static __typeof__(shmem_n_pes) *p_n_pes;
static __typeof__(shmem_malloc) *p_malloc;
static __typeof__(shmem_free) *p_free;
static __typeof__(shmem_long_p) *p_long_p;
static __typeof__(shmem_long_g) *p_long_g;
static __typeof__(shmem_long_atomic_fetch_add) *p_long_fadd;
static __typeof__(shmem_barrier_all) *p_barrier_all;
static __typeof__(shmem_quiet) *p_quiet;
static __typeof__(shmem_finalize) *p_finalize;

static int me, npes;
static long fails;   /* this PE's failures in the current section */
static long *counts; /* PE 0's copy: every PE's count for the section */

#define CHECK(cond, ...)                                                                   \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            fails++;                                                                       \
            fprintf(stderr, "PE %d: %s:%d: check failed: %s: ", me, __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                                  \
            fputc('\n', stderr);                                                           \
        }                                                                                  \
    } while (0)

static void section(const char *name)
{
    p_barrier_all();
    p_long_p(&counts[me], fails, 0);
    p_barrier_all();
    if (me == 0) {
        long sum = 0;
        for (int i = 0; i < npes; i++)
            sum += counts[i];
        printf("%s: %s\n", name, sum ? "FAIL" : "ok");
        fflush(stdout);
    }
    fails = 0;
    p_barrier_all();
}

#define FIND(var, name)                                                                    \
    do {                                                                                   \
        *(void **)&(var) = dlsym(h, name);                                                 \
        if (!(var)) {                                                                      \
            printf("load: FAIL\n");                                                        \
            fprintf(stderr, "dlsym(%s): %s\n", name, dlerror());                           \
            return 1;                                                                      \
        }                                                                                  \
    } while (0)

static long *ctr;

static void *thread_main(void *arg)
{
    long *got = arg;
    got[0] = p_long_fadd(ctr, 1, 0);
    p_quiet();
    got[1] = p_long_g(ctr, 0);
    return NULL;
}

int main(void)
{
    void *h = dlopen(LOCUS_SHMEM_SO, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        printf("load: FAIL\n");
        fprintf(stderr, "dlopen(%s): %s\n", LOCUS_SHMEM_SO, dlerror());
        return 1;
    }
    FIND(p_init_thread, "shmem_init_thread");
    FIND(p_my_pe, "shmem_my_pe");
    FIND(p_n_pes, "shmem_n_pes");
    FIND(p_malloc, "shmem_malloc");
    FIND(p_free, "shmem_free");
    FIND(p_long_p, "shmem_long_p");
    FIND(p_long_g, "shmem_long_g");
    FIND(p_long_fadd, "shmem_long_atomic_fetch_add");
    FIND(p_barrier_all, "shmem_barrier_all");
    FIND(p_quiet, "shmem_quiet");
    FIND(p_finalize, "shmem_finalize");

    int provided = -1;
    int rc = p_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
    if (rc != 0) {
        fprintf(stderr, "shmem_init_thread returned %d\n", rc);
        return 1;
    }
    me = p_my_pe();
    npes = p_n_pes();
    if (npes < 1 || me < 0 || me >= npes) {
        fprintf(stderr, "my_pe %d, n_pes %d\n", me, npes);
        return 1;
    }
    counts = p_malloc((size_t)npes * sizeof *counts);
    long *slots = p_malloc((size_t)npes * sizeof *slots);
    ctr = p_malloc(sizeof *ctr);
    if (!counts || !slots || !ctr) {
        fprintf(stderr, "shmem_malloc failed\n");
        return 1;
    }
    for (int i = 0; i < npes; i++)
        counts[i] = 0, slots[i] = -1;
    *ctr = 0;
    p_barrier_all();
    if (me == 0)
        printf("load: ok\n");
    section("setup");

    for (int pe = 0; pe < npes; pe++)
        p_long_p(&slots[me], me, pe);
    p_barrier_all();
    for (int i = 0; i < npes; i++)
        CHECK(slots[i] == i, "slot %d holds %ld", i, slots[i]);
    section("put");

    p_long_fadd(ctr, me + 1, 0);
    p_barrier_all();
    long want = (long)npes * (npes + 1) / 2;
    long sum = p_long_g(ctr, 0);
    CHECK(sum == want, "counter on PE 0 is %ld, expected %ld", sum, want);
    section("atomic");

    if (provided == SHMEM_THREAD_MULTIPLE) {
        long got[2] = {-1, -1};
        pthread_t t;
        CHECK(pthread_create(&t, NULL, thread_main, got) == 0, "pthread_create");
        pthread_join(t, NULL);
        CHECK(got[0] >= want && got[0] < want + npes, "fetch-add from a thread returned %ld", got[0]);
        CHECK(got[1] > got[0], "get after fetch-add returned %ld (fetched %ld)", got[1], got[0]);
        p_barrier_all();
        long end = p_long_g(ctr, 0);
        CHECK(end == want + npes, "counter is %ld after the threads, expected %ld", end, want + npes);
    }
    section("thread");

    p_free(ctr);
    p_free(slots);
    p_barrier_all();
    if (me == 0)
        printf("finalize: ok\ndone\n");
    fflush(stdout);
    p_free(counts);
    p_finalize();
    return 0;
}
