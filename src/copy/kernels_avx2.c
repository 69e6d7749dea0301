/* AVX2 copy kernels; called only when cpuid and XCR0 report AVX2. */
/* GCC compiles the rest of the file for the target; clang needs the target on
 * every function, the inlined template's included (its pop is at the end). */
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2"))), apply_to = function)
#else
#pragma GCC target("avx2")
#endif
#include "copy/kernels.h"

#include <immintrin.h>

#define VEC __m256i
#define W 32
#define LOADU(p) _mm256_loadu_si256((const __m256i *)(p))
#define STOREU(p, v) _mm256_storeu_si256((__m256i *)(p), (v))
#define STOREA(p, v) _mm256_store_si256((__m256i *)(p), (v))
#define STREAM(p, v) _mm256_stream_si256((__m256i *)(p), (v))
#define SFX avx2
#include "copy/kernel_body.h"

#if defined(__clang__)
#pragma clang attribute pop
#endif
