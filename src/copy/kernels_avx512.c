/* AVX-512 copy kernels; called only when cpuid and XCR0 report AVX-512F
 * with ZMM state enabled. */
#pragma GCC target("avx2,avx512f")
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
