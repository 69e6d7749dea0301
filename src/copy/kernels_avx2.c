/* AVX2 copy kernels; called only when cpuid and XCR0 report AVX2. */
#pragma GCC target("avx2")
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
