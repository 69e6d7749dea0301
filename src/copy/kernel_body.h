/* Internal template: the four copy kernels of one vector ISA. The including
 * file defines VEC, W (vector bytes), LOADU, STOREU, STOREA, STREAM and SFX
 * (name suffix), and compiles with the matching target.
 *
 * Shape (no overlap between dst and src is assumed):
 *   n < 2W        two overlapping accesses of the largest width <= n
 *   n <= 8W       up to 8 vectors loaded first, then stored (head/tail overlap)
 *   n > 8W        first vector and last 4 vectors loaded up front; dst rounded
 *                 up to a W boundary; 4-vector loop with aligned (or NT)
 *                 stores; the 4 tail vectors finish the rest.
 * NT stores need a W-aligned destination (movntdq/vmovntdq), which is why the
 * loop runs on the aligned part only; the unaligned head and tail use ordinary
 * stores. After NT stores an sfence orders them before the caller's later
 * stores: NT stores are weakly ordered even on x86-TSO. */
#include <emmintrin.h>
#include <stdint.h>
#include <string.h>
#include <xmmintrin.h>

#include <locus/copy.h>

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define KNAME(kind) CAT(CAT(copy_, SFX), kind)

/* Distance of prefetchnta ahead of the loads: about one DRAM latency of data. */
#define PF_DIST 2048

#define INLINE static inline __attribute__((always_inline))

INLINE void small_copy(char *d, const char *s, size_t n) /* n < 2W */
{
    if (n >= W) {
        VEC a = LOADU(s), b = LOADU(s + n - W);
        STOREU(d, a);
        STOREU(d + n - W, b);
        return;
    }
#if W > 32
    if (n >= 32) {
        __m256i a = _mm256_loadu_si256((const __m256i *)s);
        __m256i b = _mm256_loadu_si256((const __m256i *)(s + n - 32));
        _mm256_storeu_si256((__m256i *)d, a);
        _mm256_storeu_si256((__m256i *)(d + n - 32), b);
        return;
    }
#endif
#if W > 16
    if (n >= 16) {
        __m128i a = _mm_loadu_si128((const __m128i *)s);
        __m128i b = _mm_loadu_si128((const __m128i *)(s + n - 16));
        _mm_storeu_si128((__m128i *)d, a);
        _mm_storeu_si128((__m128i *)(d + n - 16), b);
        return;
    }
#endif
    locus_copy_tiny(d, s, n); /* n < 16 */
}

INLINE void medium_copy(char *d, const char *s, size_t n) /* 2W <= n <= 8W */
{
    if (n <= 4 * W) {
        VEC a = LOADU(s), b = LOADU(s + W), c = LOADU(s + n - 2 * W), e = LOADU(s + n - W);
        STOREU(d, a);
        STOREU(d + W, b);
        STOREU(d + n - 2 * W, c);
        STOREU(d + n - W, e);
        return;
    }
    VEC a0 = LOADU(s), a1 = LOADU(s + W), a2 = LOADU(s + 2 * W), a3 = LOADU(s + 3 * W);
    VEC b0 = LOADU(s + n - 4 * W), b1 = LOADU(s + n - 3 * W), b2 = LOADU(s + n - 2 * W),
        b3 = LOADU(s + n - W);
    STOREU(d, a0);
    STOREU(d + W, a1);
    STOREU(d + 2 * W, a2);
    STOREU(d + 3 * W, a3);
    STOREU(d + n - 4 * W, b0);
    STOREU(d + n - 3 * W, b1);
    STOREU(d + n - 2 * W, b2);
    STOREU(d + n - W, b3);
}

INLINE void body(void *dst, const void *src, size_t n, const int nt, const int pf)
{
    char *d = (char *)dst;
    const char *s = (const char *)src;
    if (n < 2 * W) {
        small_copy(d, s, n);
        return;
    }
    if (n <= 8 * W) {
        medium_copy(d, s, n);
        return;
    }
    char *dend = d + n;
    VEC head = LOADU(s);
    VEC t0 = LOADU(s + n - 4 * W), t1 = LOADU(s + n - 3 * W), t2 = LOADU(s + n - 2 * W),
        t3 = LOADU(s + n - W);
    STOREU(d, head);
    size_t skew = W - ((uintptr_t)d & (W - 1));
    d += skew;
    s += skew;
    n -= skew;
    while (n > 4 * W) {
        if (pf)
            for (int l = 0; l < 4 * W; l += 64)
                _mm_prefetch(s + PF_DIST + l, _MM_HINT_NTA);
        VEC a0 = LOADU(s), a1 = LOADU(s + W), a2 = LOADU(s + 2 * W), a3 = LOADU(s + 3 * W);
        if (nt) {
            STREAM(d, a0);
            STREAM(d + W, a1);
            STREAM(d + 2 * W, a2);
            STREAM(d + 3 * W, a3);
        } else {
            STOREA(d, a0);
            STOREA(d + W, a1);
            STOREA(d + 2 * W, a2);
            STOREA(d + 3 * W, a3);
        }
        d += 4 * W;
        s += 4 * W;
        n -= 4 * W;
    }
    STOREU(dend - 4 * W, t0);
    STOREU(dend - 3 * W, t1);
    STOREU(dend - 2 * W, t2);
    STOREU(dend - W, t3);
    if (nt)
        _mm_sfence();
}

void KNAME()(void *dst, const void *src, size_t n) { body(dst, src, n, 0, 0); }
void KNAME(_nt)(void *dst, const void *src, size_t n) { body(dst, src, n, 1, 0); }
void KNAME(_pf)(void *dst, const void *src, size_t n) { body(dst, src, n, 0, 1); }
void KNAME(_ntpf)(void *dst, const void *src, size_t n) { body(dst, src, n, 1, 1); }
