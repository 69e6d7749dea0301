/* reg: the memory hooks with liblocus as a shared library (the GoogleTest
 * executables link the static one), built twice: test_reg_shared links
 * liblocus.so and liblocus_hooks.so, as a user who opts in does;
 * test_reg_nohooks links liblocus.so only.
 *   test_reg_shared hooks         munmap, and free of an mmapped glibc chunk,
 *   LD_PRELOAD=.. test_reg_nohooks hooks   reach the cache through the hooks
 *   test_reg_nohooks none         the cache says it has no hooks (stats, notes)
 *                                 and locus_reg_invalidate still works
 *   test_reg_nohooks dlopen LIB   hooks loaded after libc see nothing: the
 *                                 cache says so instead of trusting them
 * Exit 0 = ok; every failure says what failed. */
#include <locus/reg.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define CHECK(cond, ...) do { if (!(cond)) { fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); return 1; } } while (0)

/* A get that must succeed; its id. */
static int get_id(locus_reg_cache_t *c, void *p, size_t n, uint64_t *id)
{
    const locus_reg_t *r = NULL;
    locus_status_t st = locus_reg_get(c, p, n, 0, &r);
    CHECK(st == LOCUS_OK && r, "locus_reg_get(%p, %zu): status %d (%s)", p, n, (int)st, locus_last_error());
    *id = r->id;
    locus_reg_put(c, r);
    return 0;
}

static int with_hooks(locus_reg_cache_t *c)
{
    locus_reg_stats_t s;
    CHECK(locus_reg_stats(c, &s) == LOCUS_OK, "locus_reg_stats: %s", locus_last_error());
    CHECK(s.hooks, "the cache found no memory hooks: notes '%s'", locus_reg_notes(c));

    /* munmap + mmap at the same address: a new registration */
    size_t n = 1 << 20;
    char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(p != MAP_FAILED, "mmap %zu bytes", n);
    memset(p, 1, n);
    uint64_t id0, id1;
    if (get_id(c, p, n, &id0)) return 1;
    CHECK(munmap(p, n) == 0, "munmap");
    char *q = mmap(p, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    CHECK(q == p, "mmap again at %p (got %p)", (void *)p, (void *)q);
    if (get_id(c, p, n, &id1)) return 1;
    CHECK(id1 != id0, "munmap did not invalidate: the same registration (id %llu) came back",
          (unsigned long long)id0);
    munmap(p, n);

    /* free of an mmapped glibc chunk */
    CHECK(locus_reg_stats(c, &s) == LOCUS_OK, "locus_reg_stats");
    uint64_t before = s.invalidations;
    size_t m = 8 << 20;
    char *b = malloc(m);
    CHECK(b, "malloc %zu", m);
    memset(b, 1, m);
    if (get_id(c, b, m, &id0)) return 1;
    free(b);
    CHECK(locus_reg_stats(c, &s) == LOCUS_OK, "locus_reg_stats");
    CHECK(s.invalidations > before, "free of an mmapped chunk did not invalidate (invalidations %llu)",
          (unsigned long long)s.invalidations);
    printf("munmap and free invalidated (invalidations %llu)\n", (unsigned long long)s.invalidations);
    return 0;
}

/* No hooks that see the program's calls: the cache says so (stats and a
 * note containing `why`) and explicit invalidation does the job. */
static int without_hooks(locus_reg_cache_t *c, const char *why)
{
    locus_reg_stats_t s;
    CHECK(locus_reg_stats(c, &s) == LOCUS_OK, "locus_reg_stats: %s", locus_last_error());
    CHECK(!s.hooks, "stats.hooks set without usable hooks (notes '%s')", locus_reg_notes(c));
    CHECK(strstr(locus_reg_notes(c), why), "notes '%s': expected '%s'", locus_reg_notes(c), why);
    CHECK(strstr(locus_reg_notes(c), "locus_reg_invalidate"), "notes '%s' do not say what to do",
          locus_reg_notes(c));
    size_t n = 1 << 20;
    char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(p != MAP_FAILED, "mmap %zu bytes", n);
    uint64_t id0, id1, id2;
    if (get_id(c, p, n, &id0) || get_id(c, p, n, &id1)) return 1;
    CHECK(id0 == id1, "a second get of the same range missed (%llu, %llu)", (unsigned long long)id0,
          (unsigned long long)id1);
    CHECK(locus_reg_invalidate(c, p, n) == LOCUS_OK, "locus_reg_invalidate: %s", locus_last_error());
    if (get_id(c, p, n, &id2)) return 1;
    CHECK(id2 != id0, "locus_reg_invalidate: the same registration (id %llu) came back", (unsigned long long)id0);
    munmap(p, n);
    printf("no hooks, said so: %s", locus_reg_notes(c));
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "hooks";
    if (!strcmp(mode, "dlopen")) {
        /* RTLD_GLOBAL: the cache finds locus_hooks_subscribe, but libc's munmap comes first */
        CHECK(argc > 2 && dlopen(argv[2], RTLD_NOW | RTLD_GLOBAL), "dlopen %s: %s", argc > 2 ? argv[2] : "(none)",
              dlerror());
    }
    locus_reg_attr_t a;
    locus_reg_attr_init(&a);
    a.backend = LOCUS_REG_BACKEND_NULL;
    locus_reg_cache_t *c;
    CHECK(locus_reg_cache_create(&a, &c) == LOCUS_OK, "locus_reg_cache_create: %s", locus_last_error());
    int rc = 2;
    if (!strcmp(mode, "hooks"))
        rc = with_hooks(c);
    else if (!strcmp(mode, "none"))
        rc = without_hooks(c, "memory hooks absent");
    else if (!strcmp(mode, "dlopen"))
        rc = without_hooks(c, "loaded after libc");
    else
        fprintf(stderr, "mode '%s': expected hooks, none or dlopen LIB\n", mode);
    locus_reg_cache_destroy(c);
    return rc;
}
