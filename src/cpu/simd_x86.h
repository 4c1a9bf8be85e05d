/* Small AVX2 helpers shared by the CPU kernels (x86 only; callers compile them under
 * target("avx2")). */
#ifndef TSR_SIMD_X86_H
#define TSR_SIMD_X86_H

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#include <stdint.h>

/* Two 16-byte loads into the two halves of a 256-bit register: the per-half kernels (one group
 * of pixels in each 128-bit half) read their two groups this way. */
__attribute__((target("avx2"))) static inline __m256i tsr__load2x16(const uint8_t *lo, const uint8_t *hi)
{
    return _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)lo)),
                                   _mm_loadu_si128((const __m128i *)hi), 1);
}
#endif

#endif
