/* SSE2 copy kernels (the library's baseline ISA). */
#include "copy/kernels.h"

#include <emmintrin.h>

#define VEC __m128i
#define W 16
#define LOADU(p) _mm_loadu_si128((const __m128i *)(p))
#define STOREU(p, v) _mm_storeu_si128((__m128i *)(p), (v))
#define STOREA(p, v) _mm_store_si128((__m128i *)(p), (v))
#define STREAM(p, v) _mm_stream_si128((__m128i *)(p), (v))
#define SFX sse2
#include "copy/kernel_body.h"
