/* AVX-512 copy kernels; called only when cpuid and XCR0 report AVX-512F
 * with ZMM state enabled. */
/* GCC compiles the rest of the file for the target; clang needs the target on
 * every function, the inlined template's included (its pop is at the end). */
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,avx512f"))), apply_to = function)
#else
#pragma GCC target("avx2,avx512f")
#endif
#include "copy/kernels.h"

#include <immintrin.h>

#define VEC __m512i
#define W 64
#define LOADU(p) _mm512_loadu_si512((const void *)(p))
#define STOREU(p, v) _mm512_storeu_si512((void *)(p), (v))
#define STOREA(p, v) _mm512_store_si512((void *)(p), (v))
#define STREAM(p, v) _mm512_stream_si512((__m512i *)(p), (v))
#define SFX avx512
#include "copy/kernel_body.h"

#if defined(__clang__)
#pragma clang attribute pop
#endif
