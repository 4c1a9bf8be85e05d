/* RGB(A) to gray on the CPU with OpenCV's fixed-point weights (TSR_GRAY_* in ops.h). */
#include "../core/internal.h"
#include "../core/ops.h"
#include <stdint.h>


static inline unsigned tsr__gray_px(unsigned r, unsigned g, unsigned b)
{
    return (r * TSR_GRAY_R + g * TSR_GRAY_G + b * TSR_GRAY_B + (1u << (TSR_GRAY_SHIFT - 1))) >> TSR_GRAY_SHIFT;
}

/* Reference: one pixel at a time. */
static tsr_status tsr__gray_reference(const tsr_image *src, tsr_image *dst, const void *params, const tsr_exec *ex)
{
    int cn = src->channels;
    (void)params;
    (void)ex;
    for (int y = 0; y < src->height; y++)
        for (int x = 0; x < src->width; x++) {
            if (src->depth == TSR_U8) {
                const uint8_t *p = (const uint8_t *)tsr__row(src, y) + (size_t)x * cn;
                ((uint8_t *)tsr__row(dst, y))[x] = (uint8_t)tsr__gray_px(p[0], p[1], p[2]);
            } else {
                const uint16_t *p = (const uint16_t *)tsr__row(src, y) + (size_t)x * cn;
                ((uint16_t *)tsr__row(dst, y))[x] = (uint16_t)tsr__gray_px(p[0], p[1], p[2]);
            }
        }
    return TSR_OK;
}

struct tsr__gray_job {
    const tsr_image *src;
    tsr_image *dst;
};

/* Constant channel counts let the compiler vectorise the de-interleave. */
#define TSR_GRAY_ROW(T, CN)                                                                 \
    do {                                                                                    \
        const T *restrict s = tsr__row(j->src, y);                                          \
        T *restrict d = tsr__row(j->dst, y);                                                \
        for (int x = 0; x < w; x++)                                                         \
            d[x] = (T)tsr__gray_px(s[x * CN], s[x * CN + 1], s[x * CN + 2]);               \
    } while (0)

#if defined(__x86_64__) || defined(__i386__)
#include "simd_x86.h"

/* 8-bit RGB to gray, 32 pixels a step (16 per 128-bit half): byte shuffles gather R, G and B,
 * pmaddwd forms R*wr + G*wg and B*wb + 2^14 in 32-bit lanes, then packs back to bytes. Returns
 * the number of pixels done (a multiple of 32); the caller finishes the row. */
__attribute__((target("avx2"))) static int tsr__gray_rgb8_simd(const uint8_t *s, uint8_t *d, int w)
{
#define TSR_M(...) _mm256_setr_epi8(__VA_ARGS__, __VA_ARGS__)
    const __m256i mr0 = TSR_M(0, 3, 6, 9, 12, 15, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
    const __m256i mr1 = TSR_M(-1, -1, -1, -1, -1, -1, 2, 5, 8, 11, 14, -1, -1, -1, -1, -1);
    const __m256i mr2 = TSR_M(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 1, 4, 7, 10, 13);
    const __m256i mg0 = TSR_M(1, 4, 7, 10, 13, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
    const __m256i mg1 = TSR_M(-1, -1, -1, -1, -1, 0, 3, 6, 9, 12, 15, -1, -1, -1, -1, -1);
    const __m256i mg2 = TSR_M(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 2, 5, 8, 11, 14);
    const __m256i mb0 = TSR_M(2, 5, 8, 11, 14, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
    const __m256i mb1 = TSR_M(-1, -1, -1, -1, -1, 1, 4, 7, 10, 13, -1, -1, -1, -1, -1, -1);
    const __m256i mb2 = TSR_M(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 3, 6, 9, 12, 15);
#undef TSR_M
    const __m256i wrg = _mm256_set1_epi32(TSR_GRAY_R | (TSR_GRAY_G << 16));
    const __m256i wb1 = _mm256_set1_epi32(TSR_GRAY_B | (1 << 30));   /* (B, 1) x (wb, 2^14) */
    const __m256i one = _mm256_set1_epi16(1), zero = _mm256_setzero_si256();
    int x = 0;
    for (; x + 32 <= w; x += 32) {
        const uint8_t *p = s + 3 * x;
        __m256i a = tsr__load2x16(p, p + 48), b = tsr__load2x16(p + 16, p + 64), c = tsr__load2x16(p + 32, p + 80);
        __m256i r = _mm256_or_si256(_mm256_or_si256(_mm256_shuffle_epi8(a, mr0), _mm256_shuffle_epi8(b, mr1)),
                                    _mm256_shuffle_epi8(c, mr2));
        __m256i g = _mm256_or_si256(_mm256_or_si256(_mm256_shuffle_epi8(a, mg0), _mm256_shuffle_epi8(b, mg1)),
                                    _mm256_shuffle_epi8(c, mg2));
        __m256i bl = _mm256_or_si256(_mm256_or_si256(_mm256_shuffle_epi8(a, mb0), _mm256_shuffle_epi8(b, mb1)),
                                     _mm256_shuffle_epi8(c, mb2));
        __m256i out16[2];
        for (int h = 0; h < 2; h++) {
            __m256i r16 = h ? _mm256_unpackhi_epi8(r, zero) : _mm256_unpacklo_epi8(r, zero);
            __m256i g16 = h ? _mm256_unpackhi_epi8(g, zero) : _mm256_unpacklo_epi8(g, zero);
            __m256i b16 = h ? _mm256_unpackhi_epi8(bl, zero) : _mm256_unpacklo_epi8(bl, zero);
            __m256i lo = _mm256_add_epi32(_mm256_madd_epi16(_mm256_unpacklo_epi16(r16, g16), wrg),
                                          _mm256_madd_epi16(_mm256_unpacklo_epi16(b16, one), wb1));
            __m256i hi = _mm256_add_epi32(_mm256_madd_epi16(_mm256_unpackhi_epi16(r16, g16), wrg),
                                          _mm256_madd_epi16(_mm256_unpackhi_epi16(b16, one), wb1));
            out16[h] = _mm256_packs_epi32(_mm256_srli_epi32(lo, TSR_GRAY_SHIFT), _mm256_srli_epi32(hi, TSR_GRAY_SHIFT));
        }
        /* Every step stays inside its 128-bit half, so the halves hold pixels 0-15 and 16-31. */
        _mm256_storeu_si256((__m256i *)(d + x), _mm256_packus_epi16(out16[0], out16[1]));
    }
    return x;
}

/* 8-bit RGBA to gray, 32 pixels a step: each pixel's 32 bits give (R, B) and, shifted by a
 * byte, (G, A) as 16-bit pairs, so two pmaddwd form R*wr + B*wb and G*wg (A's weight 0) per
 * pixel; the rounding, the shift and two packs follow, and a final permute undoes the packs'
 * 128-bit interleave. Returns the number of pixels done (a multiple of 32). */
__attribute__((target("avx2"))) static int tsr__gray_rgba8_simd(const uint8_t *s, uint8_t *d, int w)
{
    const __m256i lo8 = _mm256_set1_epi32(0x00ff00ff), wrb = _mm256_set1_epi32(TSR_GRAY_R | (TSR_GRAY_B << 16));
    const __m256i wg = _mm256_set1_epi32(TSR_GRAY_G), half = _mm256_set1_epi32(1 << (TSR_GRAY_SHIFT - 1));
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    int x = 0;
    for (; x + 32 <= w; x += 32) {
        __m256i v[4];
        for (int k = 0; k < 4; k++) {
            const __m256i px = _mm256_loadu_si256((const __m256i *)(s + 4 * (size_t)x + 32 * k));
            const __m256i rb = _mm256_and_si256(px, lo8), ga = _mm256_and_si256(_mm256_srli_epi32(px, 8), lo8);
            v[k] = _mm256_srli_epi32(
                _mm256_add_epi32(_mm256_add_epi32(_mm256_madd_epi16(rb, wrb), _mm256_madd_epi16(ga, wg)), half),
                TSR_GRAY_SHIFT);
        }
        /* packs: 32-bit lanes 0-3 of v0, v1, 4-7 of v0, v1 (and v2, v3); packus: 4-pixel groups
         * 0 2 4 6 | 1 3 5 7 of the 8 groups in order 0..7, put back by the permute */
        const __m256i p = _mm256_packus_epi16(_mm256_packs_epi32(v[0], v[1]), _mm256_packs_epi32(v[2], v[3]));
        _mm256_storeu_si256((__m256i *)(d + x), _mm256_permutevar8x32_epi32(p, order));
    }
    return x;
}

/* 16-bit samples: pmaddwd multiplies signed 16-bit lanes, so each sample is offset by -2^15 (its
 * top bit flipped) and the offsets' share, 2^15 (wr + wg + wb), goes back in with the rounding:
 * the weighted sum r wr + g wg + b wb + 2^13 is exact in 32 bits (below 2^30), and so is each
 * partial sum of offset samples. */
#define TSR_GRAY16_BIAS ((1 << 15) * (TSR_GRAY_R + TSR_GRAY_G + TSR_GRAY_B) + (1 << (TSR_GRAY_SHIFT - 1)))

/* 16-bit RGB to gray, 16 pixels a step (8 per 128-bit half): byte shuffles gather R, G and B
 * as in the 8-bit kernel, then (R, G) and (B, 0) pairs go through pmaddwd, and packus_epi32
 * packs the 32-bit results back. Returns the number of pixels done (a multiple of 16). */
__attribute__((target("avx2"))) static int tsr__gray_rgb16_simd(const uint16_t *s, uint16_t *d, int w)
{
#define TSR_M(...) _mm256_setr_epi8(__VA_ARGS__, __VA_ARGS__)
#define Z -1, -1
    /* samples of the chunks a (0-7), b (8-15), c (16-23): R at 0 3 6 | 9 12 15 | 18 21 */
    const __m256i mr0 = TSR_M(0, 1, 6, 7, 12, 13, Z, Z, Z, Z, Z);
    const __m256i mr1 = TSR_M(Z, Z, Z, 2, 3, 8, 9, 14, 15, Z, Z);
    const __m256i mr2 = TSR_M(Z, Z, Z, Z, Z, Z, 4, 5, 10, 11);
    /* G at 1 4 7 | 10 13 | 16 19 22 */
    const __m256i mg0 = TSR_M(2, 3, 8, 9, 14, 15, Z, Z, Z, Z, Z);
    const __m256i mg1 = TSR_M(Z, Z, Z, 4, 5, 10, 11, Z, Z, Z);
    const __m256i mg2 = TSR_M(Z, Z, Z, Z, Z, 0, 1, 6, 7, 12, 13);
    /* B at 2 5 | 8 11 14 | 17 20 23 */
    const __m256i mb0 = TSR_M(4, 5, 10, 11, Z, Z, Z, Z, Z, Z);
    const __m256i mb1 = TSR_M(Z, Z, 0, 1, 6, 7, 12, 13, Z, Z, Z);
    const __m256i mb2 = TSR_M(Z, Z, Z, Z, Z, 2, 3, 8, 9, 14, 15);
#undef Z
#undef TSR_M
    const __m256i wrg = _mm256_set1_epi32(TSR_GRAY_R | (TSR_GRAY_G << 16)), wb = _mm256_set1_epi32(TSR_GRAY_B);
    const __m256i flip = _mm256_set1_epi16((short)0x8000), bias = _mm256_set1_epi32(TSR_GRAY16_BIAS);
    const __m256i zero = _mm256_setzero_si256();
    int x = 0;
    for (; x + 16 <= w; x += 16) {
        const uint8_t *p = (const uint8_t *)(s + 3 * (size_t)x);
        const __m256i a = tsr__load2x16(p, p + 48), b = tsr__load2x16(p + 16, p + 64), c = tsr__load2x16(p + 32, p + 80);
        const __m256i r = _mm256_xor_si256(
            _mm256_or_si256(_mm256_or_si256(_mm256_shuffle_epi8(a, mr0), _mm256_shuffle_epi8(b, mr1)), _mm256_shuffle_epi8(c, mr2)),
            flip);
        const __m256i g = _mm256_xor_si256(
            _mm256_or_si256(_mm256_or_si256(_mm256_shuffle_epi8(a, mg0), _mm256_shuffle_epi8(b, mg1)), _mm256_shuffle_epi8(c, mg2)),
            flip);
        const __m256i bl = _mm256_xor_si256(
            _mm256_or_si256(_mm256_or_si256(_mm256_shuffle_epi8(a, mb0), _mm256_shuffle_epi8(b, mb1)), _mm256_shuffle_epi8(c, mb2)),
            flip);
        const __m256i lo = _mm256_add_epi32(_mm256_add_epi32(_mm256_madd_epi16(_mm256_unpacklo_epi16(r, g), wrg),
                                                             _mm256_madd_epi16(_mm256_unpacklo_epi16(bl, zero), wb)),
                                            bias);
        const __m256i hi = _mm256_add_epi32(_mm256_add_epi32(_mm256_madd_epi16(_mm256_unpackhi_epi16(r, g), wrg),
                                                             _mm256_madd_epi16(_mm256_unpackhi_epi16(bl, zero), wb)),
                                            bias);
        /* each half: pixels 0-3 in lo, 4-7 in hi, so packus puts them back in order */
        _mm256_storeu_si256((__m256i *)(d + x),
                            _mm256_packus_epi32(_mm256_srli_epi32(lo, TSR_GRAY_SHIFT), _mm256_srli_epi32(hi, TSR_GRAY_SHIFT)));
    }
    return x;
}

/* 16-bit RGBA to gray, 16 pixels a step: one pmaddwd per 4 pixels gives R wr + G wg and B wb
 * (A's weight 0) in neighbouring 32-bit lanes, hadd adds them, packus_epi32 packs, and a final
 * permute undoes the 128-bit interleave of hadd and packus. Returns the number of pixels done. */
__attribute__((target("avx2"))) static int tsr__gray_rgba16_simd(const uint16_t *s, uint16_t *d, int w)
{
    const __m256i wts = _mm256_set1_epi64x((long long)((unsigned)TSR_GRAY_R | ((unsigned)TSR_GRAY_G << 16)) |
                                           ((long long)TSR_GRAY_B << 32));
    const __m256i flip = _mm256_set1_epi16((short)0x8000), bias = _mm256_set1_epi32(TSR_GRAY16_BIAS);
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    int x = 0;
    for (; x + 16 <= w; x += 16) {
        __m256i m[4];
        for (int k = 0; k < 4; k++)   /* pixels 4k .. 4k + 3: (rg, ba) of 4k, 4k + 1 | of 4k + 2, 4k + 3 */
            m[k] = _mm256_madd_epi16(
                _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(s + 4 * (size_t)x + 16 * k)), flip), wts);
        /* hadd: 0 1 4 5 | 2 3 6 7 and 8 9 12 13 | 10 11 14 15 */
        const __m256i v0 = _mm256_srli_epi32(_mm256_add_epi32(_mm256_hadd_epi32(m[0], m[1]), bias), TSR_GRAY_SHIFT);
        const __m256i v1 = _mm256_srli_epi32(_mm256_add_epi32(_mm256_hadd_epi32(m[2], m[3]), bias), TSR_GRAY_SHIFT);
        /* packus: pairs (0 1) (4 5) (8 9) (12 13) | (2 3) (6 7) (10 11) (14 15) */
        _mm256_storeu_si256((__m256i *)(d + x), _mm256_permutevar8x32_epi32(_mm256_packus_epi32(v0, v1), order));
    }
    return x;
}
#define TSR_HAVE_GRAY_SIMD 1
#endif

/* Row y of samples T: the AVX2 kernels RGB / RGBA (simd) and their rows' ends, else the loop for
 * the channel count. */
#ifdef TSR_HAVE_GRAY_SIMD
#define TSR_GRAY_ANY_ROW(T, RGB, RGBA)                                                              \
    do {                                                                                            \
        if (simd) {                                                                                 \
            const T *s = tsr__row(j->src, y);                                                       \
            T *d = tsr__row(j->dst, y);                                                             \
            const int cn = j->src->channels;                                                        \
            for (int x = cn == 3 ? RGB(s, d, w) : RGBA(s, d, w); x < w; x++)                        \
                d[x] = (T)tsr__gray_px(s[cn * x], s[cn * x + 1], s[cn * x + 2]);                    \
        } else if (j->src->channels == 3) TSR_GRAY_ROW(T, 3);                                       \
        else TSR_GRAY_ROW(T, 4);                                                                    \
    } while (0)
#else
#define TSR_GRAY_ANY_ROW(T, RGB, RGBA)                                                              \
    do {                                                                                            \
        if (j->src->channels == 3) TSR_GRAY_ROW(T, 3);                                              \
        else TSR_GRAY_ROW(T, 4);                                                                    \
    } while (0)
#endif

__attribute__((target_clones("avx2", "default")))
static void tsr__gray_rows(void *ctx, int y0, int y1)
{
    const struct tsr__gray_job *j = ctx;
    int w = j->src->width;
#ifdef TSR_HAVE_GRAY_SIMD
    int simd = __builtin_cpu_supports("avx2");
#endif
    for (int y = y0; y < y1; y++) {
        if (j->src->depth == TSR_U8) TSR_GRAY_ANY_ROW(uint8_t, tsr__gray_rgb8_simd, tsr__gray_rgba8_simd);
        else TSR_GRAY_ANY_ROW(uint16_t, tsr__gray_rgb16_simd, tsr__gray_rgba16_simd);
    }
}

static tsr_status tsr__gray_fast(const tsr_image *src, tsr_image *dst, const void *params, const tsr_exec *ex)
{
    struct tsr__gray_job j = {src, dst};
    (void)params;
    /* under 384K pixels on the calling thread (256x256 RGB: 15 us on 2 threads, 9.7 on one; 512x512
     * 41 / 38; 1024x1024 117 / 151) */
    tsr__parallel_for(src->height, 16384 / src->width + 1,
                      tsr__exec_threads_for(ex, (size_t)src->width * src->height, (size_t)3 << 17), tsr__gray_rows, &j);
    return TSR_OK;
}

const tsr_variant tsr__gray_cpu[] = {
    {"reference", TSR_BACKEND_CPU, "one pixel at a time (the definition)", tsr__gray_reference, NULL, 0, 1, NULL},
    {"threaded", TSR_BACKEND_CPU, "rows on all threads (small images on one), AVX2 for RGB and RGBA at 8 and 16 bits",
     tsr__gray_fast, NULL, 1, 0, NULL},
    {NULL, 0, NULL, NULL, NULL, 0, 0, NULL}};
