/* Why a small copy's ratio to glibc moved with nothing but code and buffer
 * placement (#14, research/LOG.md 2026-11-26): the same 64 B-2 KiB memcpy
 * called from loops that differ only in the inline test around the call
 * (c: the && form the header had, a: one & expression, b: pointer tests
 * nested, h: glibc again from another place), each loop at 8 placements,
 * glibc and the variant alternating, median of 400 ratios (glibc time /
 * variant time: > 1 = variant faster).
 *   gcc -O2 -o /tmp/alias research/probes/copy_alias_probe.c
 *   /tmp/alias SIZE [DST_OFFSET]      (offset of dst from src mod 2 MiB)
 * Finding on a Zen 5 (2026-11-26): at offsets 0 and 64 (source and
 * destination at the same low 12 address bits: loads can wait on the
 * previous copy's stores, 4K aliasing) every variant moves by -10..+5 %;
 * at 1088 and 2048 all of them, glibc's own second loop too, are 1.000. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

size_t below[4];

__attribute__((noinline)) int slow(void *d, const void *s, size_t n, size_t t, unsigned h)
{
    (void)t, (void)h;
    if (!d || !s)
        return -1;
    memcpy(d, s, n);
    return 0;
}

static inline __attribute__((always_inline)) int var_c(void *d, const void *s, size_t len, size_t total,
                                                       unsigned hint)
{
    if (__builtin_expect(d && s && hint < 4u && len <= total &&
                             (total < 2048u || total < __atomic_load_n(&below[hint], __ATOMIC_RELAXED)),
                         1)) {
        memcpy(d, s, len);
        return 0;
    }
    return slow(d, s, len, total, hint);
}

static inline __attribute__((always_inline)) int var_a(void *d, const void *s, size_t len, size_t total,
                                                       unsigned hint)
{
    if (__builtin_expect(((d != NULL) & (s != NULL) & (hint < 4u) & (len <= total) & (total < 2048u)) ||
                             (d && s && hint < 4u && len <= total &&
                              total < __atomic_load_n(&below[hint], __ATOMIC_RELAXED)),
                         1)) {
        memcpy(d, s, len);
        return 0;
    }
    return slow(d, s, len, total, hint);
}

static inline __attribute__((always_inline)) int var_b(void *d, const void *s, size_t len, size_t total,
                                                       unsigned hint)
{
    if (__builtin_expect(total < 2048u && len <= total && hint < 4u, 1)) {
        if (__builtin_expect(d && s, 1)) {
            memcpy(d, s, len);
            return 0;
        }
    } else if (d && s && hint < 4u && len <= total && total < __atomic_load_n(&below[hint], __ATOMIC_RELAXED)) {
        memcpy(d, s, len);
        return 0;
    }
    return slow(d, s, len, total, hint);
}

#define L __attribute__((noinline, aligned(64), optimize("align-loops=1")))
#define PLACE(pad) __asm__ volatile(".p2align 6\n\t.fill " #pad ", 1, 0x90" ::: "memory")
#define BARRIER __asm__ volatile("" ::: "memory")
#define LOOP(name, p, CALL)                                                                                \
    L void name##_##p(void *d, const void *s, size_t n, long it)                                           \
    {                                                                                                      \
        PLACE(p);                                                                                          \
        for (long i = 0; i < it; i++) {                                                                    \
            CALL;                                                                                          \
            BARRIER;                                                                                       \
        }                                                                                                  \
    }
#define LOOPS(p)                                                                                           \
    LOOP(g, p, memcpy(d, s, n))                                                                            \
    LOOP(h, p, memcpy(d, s, n))                                                                            \
    LOOP(c, p, var_c(d, s, n, n, 0))                                                                       \
    LOOP(a, p, var_a(d, s, n, n, 0))                                                                       \
    LOOP(b, p, var_b(d, s, n, n, 0))
LOOPS(0) LOOPS(8) LOOPS(16) LOOPS(24) LOOPS(32) LOOPS(40) LOOPS(48) LOOPS(56)

typedef void (*loop_fn)(void *, const void *, size_t, long);
#define EIGHT(f) {f##_0, f##_8, f##_16, f##_24, f##_32, f##_40, f##_48, f##_56}
static loop_fn loops[5][8] = {EIGHT(g), EIGHT(c), EIGHT(a), EIGHT(b), EIGHT(h)};

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? (size_t)atol(argv[1]) : 512;
    size_t off = argc > 2 ? (size_t)atol(argv[2]) : 0;
    if (n == 0 || n > (1u << 20) || off >= (1u << 20)) {
        fprintf(stderr, "usage: %s SIZE(1..1M) [DST_OFFSET(<1M)]\n", argv[0]);
        return 2;
    }
    long it = (long)(200000 * 512 / n) + 1;
    char *s = mmap(NULL, 4u << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (s == MAP_FAILED)
        return 1;
    memset(s, 1, 4u << 20);
    char *d = s + (2u << 20) + off;
    for (int v = 1; v < 5; v++) {
        double r[400];
        for (int rep = 0; rep < 400; rep++) {
            int lay = rep % 8;
            loop_fn first = loops[rep & 1 ? 0 : v][lay], second = loops[rep & 1 ? v : 0][lay];
            double t0 = now();
            first(d, s, n, it);
            double t1 = now();
            second(d, s, n, it);
            double t2 = now();
            r[rep] = rep & 1 ? (t1 - t0) / (t2 - t1) : (t2 - t1) / (t1 - t0);
        }
        qsort(r, 400, sizeof *r, cmpd);
        printf("size %zu offset %zu variant %c ratio %.3f\n", n, off, "gcabh"[v], r[200]);
    }
    return 0;
}
