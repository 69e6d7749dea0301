/* A library whose constructor allocates (like p11-kit's newlocale through
 * libcurl) and starts a thread that keeps allocating, before and while the
 * profiler's preload shim starts: linked into prof_stress. */

#include <locale.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static atomic_int stop;
static pthread_t churner;
static atomic_long churned;

/* Every allocation call, small and large (large ones are the shim's
 * tracked size), each checked and given back. Returns 0 if all worked.
 * PROF_STRESS_STD=1: only the standard calls (malloc, calloc, realloc,
 * posix_memalign, aligned_alloc, free): what jemalloc and tcmalloc both
 * provide (glibc's reallocarray/pvalloc on their blocks would crash with
 * or without a profiler). */
static int std_only(void)
{
    static int v = -1;
    if (v < 0) {
        const char *e = getenv("PROF_STRESS_STD");
        v = e && *e == '1';
    }
    return v;
}

int early_exercise(size_t big)
{
    int bad = 0;
    int all = !std_only();
    char *a = malloc(100), *b = malloc(big);
    bad |= !a || !b;
    if (b)
        memset(b, 1, big);
    char *c = calloc(big / 8, 8);
    bad |= !c || c[big - 1] != 0;
    char *d = realloc(a, big * 2);
    bad |= !d;
    if (d)
        d[big * 2 - 1] = 3;
    char *e = all ? reallocarray(NULL, big / 16, 16) : malloc(big);
    bad |= !e;
    void *f = NULL;
    bad |= posix_memalign(&f, 4096, big) != 0 || ((uintptr_t)f & 4095);
    void *g = aligned_alloc(64, big);
    void *h = all ? memalign(128, 1000) : malloc(1000);
    void *i = all ? valloc(big) : aligned_alloc(4096, big);
    void *j = all ? pvalloc(5000) : aligned_alloc(4096, 8192);
    bad |= !g || !h || !i || !j || ((uintptr_t)i & 4095) || ((uintptr_t)j & 4095);
    if (all) /* a GNU extension: tcmalloc's answers differently */
        bad |= malloc_usable_size(b) < big || malloc_usable_size(h) < 1000;
    void *m = mmap(NULL, big, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    bad |= m == MAP_FAILED;
    if (m != MAP_FAILED) {
        memset(m, 2, big);
        void *m2 = mremap(m, big, big * 2, MREMAP_MAYMOVE);
        bad |= m2 == MAP_FAILED;
        if (m2 != MAP_FAILED) {
            bad |= mprotect(m2, 4096, PROT_READ) != 0;
            bad |= ((char *)m2)[4095] != 2;
            bad |= munmap(m2, big * 2) != 0;
        }
    }
    locale_t loc = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    bad |= !loc;
    if (loc)
        freelocale(loc);
    free(b);
    free(c);
    free(d);
    free(e);
    free(f);
    free(g);
    free(h);
    free(i);
    free(j);
    free(NULL);
    return bad;
}

static void *churn(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop)) {
        if (early_exercise(256 * 1024) != 0)
            abort();
        atomic_fetch_add(&churned, 1);
    }
    return NULL;
}

/* Called by the program once it is done: the churn thread ends. */
long early_stop(void)
{
    atomic_store(&stop, 1);
    pthread_join(churner, NULL);
    return atomic_load(&churned) > 0;
}

__attribute__((constructor)) static void early_init(void)
{
    if (early_exercise(1 << 20) != 0)
        abort();
    if (pthread_create(&churner, NULL, churn, NULL) != 0)
        abort();
    while (atomic_load(&churned) == 0) /* the thread is allocating before main */
        usleep(100);
}
