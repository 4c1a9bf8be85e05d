/* Box (mean) filter on the CPU: the plain definition and running sums on all threads. */
#include "box_core.h"
#include "../core/ops.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static inline uint64_t tsr__px(const tsr_image *img, int x, int y, int c)
{
    const void *row = tsr__row(img, y);
    size_t i = (size_t)x * img->channels + c;
    return img->depth == TSR_U8 ? ((const uint8_t *)row)[i] : ((const uint16_t *)row)[i];
}

static inline void tsr__put(tsr_image *img, int x, int y, int c, unsigned v)
{
    void *row = tsr__row(img, y);
    size_t i = (size_t)x * img->channels + c;
    if (img->depth == TSR_U8) ((uint8_t *)row)[i] = (uint8_t)v;
    else ((uint16_t *)row)[i] = (uint16_t)v;
}

tsr_status tsr__box_plain(const tsr__box_plan *pl, tsr_image *dst)
{
    const tsr_image *src = pl->src;
    int w = src->width, h = src->height, cn = src->channels;
    uint64_t area = (uint64_t)(2 * pl->rx + 1) * (uint64_t)(2 * pl->ry + 1);
    uint64_t *vert = malloc((size_t)w * cn * sizeof *vert);
    if (!vert) return tsr__fail(TSR_E_NOMEM, "box: out of memory for a row of sums");
    for (int y = 0; y < h; y++) {
        /* Vertical window sums of every column, then horizontal sums of those: the window's
         * total, since a sample outside on either axis is the border value. */
        for (int x = 0; x < w; x++)
            for (int c = 0; c < cn; c++) {
                uint64_t s = 0;
                for (int k = -pl->ry; k <= pl->ry; k++) {
                    int yy = tsr__border_index(y + k, h, pl->border);
                    s += yy < 0 ? (uint64_t)pl->value : tsr__px(src, x, yy, c);
                }
                vert[(size_t)x * cn + c] = s;
            }
        for (int x = 0; x < w; x++)
            for (int c = 0; c < cn; c++) {
                uint64_t s = 0;
                for (int k = -pl->rx; k <= pl->rx; k++) {
                    int xx = tsr__border_index(x + k, w, pl->border);
                    s += xx < 0 ? (uint64_t)pl->value * (uint64_t)(2 * pl->ry + 1) : vert[(size_t)xx * cn + c];
                }
                tsr__put(dst, x, y, c, tsr__round_mean(s, area));
            }
    }
    free(vert);
    return TSR_OK;
}

/* ------------------------------------------------------------------------------------------
 * Running sums. For each band of rows: 'col' holds the vertical window sum of every sample
 * position, updated by one row in and one row out per output row; the horizontal window
 * sums slide along that row. The rounded mean floor((s + (area-1)/2 + 0.5) / area) is
 * computed by multiplying with the reciprocal: s/area never lies within 1/(2*area) of an
 * integer (area is odd), so float is exact while its error 2^-23 * 256 stays below that
 * (8-bit samples, area <= 8191) and double is exact for every 32-bit area.
 * ------------------------------------------------------------------------------------------ */

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define TSR_HAVE_X86 1

/* Prefix sums of 8 differences at once: hs[i] = hs[i-1] + ext[i-1+win] - ext[i-1] for one
 * channel, with 32-bit wrap-around (exact, since every true window sum fits in 32 bits). The
 * in-register scan takes two shifted adds per 128-bit half, one add to carry the low half into
 * the high one, and one broadcast of the last sum into the next vector. */
#define TSR_PREFIX8(LOAD)                                                                       \
    do {                                                                                        \
        __m256i bcast3 = _mm256_set1_epi32(3), bcast7 = _mm256_set1_epi32(7);                   \
        __m256i carry = _mm256_set1_epi32((int)hs[0]);                                          \
        for (; i + 8 <= n; i += 8) {                                                            \
            __m256i x = _mm256_sub_epi32(LOAD(ext + i - 1 + win), LOAD(ext + i - 1));           \
            x = _mm256_add_epi32(x, _mm256_slli_si256(x, 4));                                   \
            x = _mm256_add_epi32(x, _mm256_slli_si256(x, 8));                                   \
            x = _mm256_add_epi32(x, _mm256_blend_epi32(_mm256_setzero_si256(),                 \
                                                       _mm256_permutevar8x32_epi32(x, bcast3), 0xF0)); \
            x = _mm256_add_epi32(x, carry);                                                     \
            _mm256_storeu_si256((__m256i *)(hs + i), x);                                        \
            carry = _mm256_permutevar8x32_epi32(x, bcast7);                                     \
        }                                                                                       \
    } while (0)
#define TSR_LOAD_U16(p) _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(p)))
#define TSR_LOAD_U32(p) _mm256_loadu_si256((const __m256i *)(p))

/* The same for CN interleaved channels (2 to 4): hs[i] = hs[i-CN] + ext[i-CN+win] - ext[i-CN].
 * The in-register scan adds the vector shifted by CN lanes, then by 2 CN while that is under 8;
 * the carry is the previous vector's last CN sums, each spread to the lanes of its channel. */
#define TSR_PREFIX8_LAG(LOAD, CN)                                                               \
    do {                                                                                        \
        const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);                         \
        const __m256i by1 = _mm256_sub_epi32(lane, _mm256_set1_epi32(CN));                      \
        const __m256i by2 = _mm256_sub_epi32(lane, _mm256_set1_epi32(2 * (CN)));                \
        const __m256i low1 = _mm256_cmpgt_epi32(_mm256_set1_epi32(CN), lane);                   \
        const __m256i low2 = _mm256_cmpgt_epi32(_mm256_set1_epi32(2 * (CN)), lane);             \
        const __m256i spread = _mm256_setr_epi32(8 - (CN), 8 - (CN) + 1 % (CN), 8 - (CN) + 2 % (CN),       \
                                                 8 - (CN) + 3 % (CN), 8 - (CN) + 4 % (CN),            \
                                                 8 - (CN) + 5 % (CN), 8 - (CN) + 6 % (CN),            \
                                                 8 - (CN) + 7 % (CN));                                 \
        __m256i carry = _mm256_setr_epi32((int)hs[0], (int)hs[1 % (CN)], (int)hs[2 % (CN)],    \
                                          (int)hs[3 % (CN)], (int)hs[4 % (CN)], (int)hs[5 % (CN)], \
                                          (int)hs[6 % (CN)], (int)hs[7 % (CN)]);               \
        for (; i + 8 <= n; i += 8) {                                                            \
            __m256i x = _mm256_sub_epi32(LOAD(ext + i - (CN) + win), LOAD(ext + i - (CN)));     \
            x = _mm256_add_epi32(x, _mm256_andnot_si256(low1, _mm256_permutevar8x32_epi32(x, by1))); \
            if (2 * (CN) < 8)                                                                   \
                x = _mm256_add_epi32(x, _mm256_andnot_si256(low2, _mm256_permutevar8x32_epi32(x, by2))); \
            x = _mm256_add_epi32(x, carry);                                                     \
            _mm256_storeu_si256((__m256i *)(hs + i), x);                                        \
            carry = _mm256_permutevar8x32_epi32(x, spread);                                     \
        }                                                                                       \
    } while (0)

/* Window sums of one channel from column sums, hs[0] already set; returns where it stopped. */
__attribute__((target("avx2"))) static size_t tsr__prefix_u16_avx2(const uint16_t *ext, uint32_t *hs, size_t n,
                                                                   size_t win)
{
    size_t i = 1;
    TSR_PREFIX8(TSR_LOAD_U16);
    return i;
}

__attribute__((target("avx2"))) static size_t tsr__prefix_u32_avx2(const uint32_t *ext, uint32_t *hs, size_t n,
                                                                   size_t win)
{
    size_t i = 1;
    TSR_PREFIX8(TSR_LOAD_U32);
    return i;
}

/* The lagged scans for 2, 3 and 4 channels and 16- or 32-bit column sums, hs[0..CN-1] set. */
#define TSR_PREFIX_LAG_FN(NAME, COL_T, LOAD, CN)                                                  \
    __attribute__((target("avx2"))) static size_t NAME(const COL_T *ext, uint32_t *hs, size_t n, size_t win) \
    {                                                                                           \
        size_t i = CN;                                                                          \
        TSR_PREFIX8_LAG(LOAD, CN);                                                              \
        return i;                                                                               \
    }
TSR_PREFIX_LAG_FN(tsr__prefix_u16_c2, uint16_t, TSR_LOAD_U16, 2)
TSR_PREFIX_LAG_FN(tsr__prefix_u16_c3, uint16_t, TSR_LOAD_U16, 3)
TSR_PREFIX_LAG_FN(tsr__prefix_u16_c4, uint16_t, TSR_LOAD_U16, 4)
TSR_PREFIX_LAG_FN(tsr__prefix_u32_c2, uint32_t, TSR_LOAD_U32, 2)
TSR_PREFIX_LAG_FN(tsr__prefix_u32_c3, uint32_t, TSR_LOAD_U32, 3)
TSR_PREFIX_LAG_FN(tsr__prefix_u32_c4, uint32_t, TSR_LOAD_U32, 4)
#endif

/* The vectorised sliding sums of cn interleaved channels (1 to 4) where the processor has AVX2,
 * hs[0..cn-1] set; returns the first index not done (cn when there is no fast path for these
 * types). */
static size_t tsr__prefix_fast(const void *ext, size_t col_bytes, void *hs, size_t sum_bytes, size_t n, size_t win,
                               int cn)
{
#ifdef TSR_HAVE_X86
    if (sum_bytes == 4 && (col_bytes == 2 || col_bytes == 4) && __builtin_cpu_supports("avx2")) {
        const int c16 = col_bytes == 2;
        switch (cn) {
            case 1: return c16 ? tsr__prefix_u16_avx2(ext, hs, n, win) : tsr__prefix_u32_avx2(ext, hs, n, win);
            case 2: return c16 ? tsr__prefix_u16_c2(ext, hs, n, win) : tsr__prefix_u32_c2(ext, hs, n, win);
            case 3: return c16 ? tsr__prefix_u16_c3(ext, hs, n, win) : tsr__prefix_u32_c3(ext, hs, n, win);
            case 4: return c16 ? tsr__prefix_u16_c4(ext, hs, n, win) : tsr__prefix_u32_c4(ext, hs, n, win);
        }
    }
#endif
    (void)ext, (void)col_bytes, (void)hs, (void)sum_bytes, (void)n, (void)win;
    return (size_t)cn;
}

#define TSR_BOX_DEFINE(COL_T, SUM_T, NAME)                                                                         \
    __attribute__((target_clones("avx2", "default")))                                                      \
    static void NAME##_add_row(COL_T *restrict col, const tsr_image *src, int yy, int sign, COL_T outside,  \
                               size_t n)                                                                    \
    {                                                                                                       \
        if (yy < 0) {                                                                                       \
            if (sign > 0) for (size_t i = 0; i < n; i++) col[i] = (COL_T)(col[i] + outside);               \
            else for (size_t i = 0; i < n; i++) col[i] = (COL_T)(col[i] - outside);                                          \
        } else if (src->depth == TSR_U8) {                                                                  \
            const uint8_t *restrict s = tsr__row(src, yy);                                                  \
            if (sign > 0) for (size_t i = 0; i < n; i++) col[i] = (COL_T)(col[i] + s[i]);                  \
            else for (size_t i = 0; i < n; i++) col[i] = (COL_T)(col[i] - s[i]);                                             \
        } else {                                                                                            \
            const uint16_t *restrict s = tsr__row(src, yy);                                                 \
            if (sign > 0) for (size_t i = 0; i < n; i++) col[i] = (COL_T)(col[i] + s[i]);                  \
            else for (size_t i = 0; i < n; i++) col[i] = (COL_T)(col[i] - s[i]);                                             \
        }                                                                                                   \
    }                                                                                                       \
    /* col += times * row yy (yy < 0: times * outside), wrapping in COL_T: the column sums of a     \
     * window taller than the image add each source row once, times the window rows that map to it. */ \
    static void NAME##_add_row_times(COL_T *restrict col, const tsr_image *src, int yy, COL_T times,       \
                                     COL_T outside, size_t n)                                               \
    {                                                                                                       \
        if (yy < 0) {                                                                                       \
            for (size_t i = 0; i < n; i++) col[i] = (COL_T)(col[i] + (COL_T)(times * outside));            \
        } else if (src->depth == TSR_U8) {                                                                  \
            const uint8_t *restrict s = tsr__row(src, yy);                                                  \
            for (size_t i = 0; i < n; i++) col[i] = (COL_T)(col[i] + (COL_T)(times * s[i]));               \
        } else {                                                                                            \
            const uint16_t *restrict s = tsr__row(src, yy);                                                 \
            for (size_t i = 0; i < n; i++) col[i] = (COL_T)(col[i] + (COL_T)(times * s[i]));               \
        }                                                                                                   \
    }                                                                                                       \
    /* Window sums along a row narrower than its window (rx >= w), from the column sums col without \
     * border: prefix sums over the row, or over one period of the reflected row, give any window's  \
     * sum in O(1), so a row costs O(w) rather than O(w + rx). pre: 2 w + 1 sums of scratch. The sums \
     * wrap modulo SUM_T's range; the window's own sum fits, so the difference is exact. */           \
    static void NAME##_hsum_far(const COL_T *restrict col, SUM_T *restrict hs, SUM_T *restrict pre, int w,  \
                                int cn, int rx, int border, COL_T outside_col)                              \
    {                                                                                                       \
        const int reflect = w > 1 && (border == TSR_BORDER_REFLECT || border == TSR_BORDER_REFLECT101);   \
        const long long period = reflect ? 2 * (long long)w - 2 * (border == TSR_BORDER_REFLECT101) : w;   \
        for (int c = 0; c < cn; c++) {                                                                      \
            pre[0] = 0;                                                                                     \
            for (long long t = 0; t < period; t++)                                                         \
                pre[t + 1] = pre[t] + col[(size_t)tsr__border_index((int)t, w, border) * cn + c];          \
            for (long long x = 0; x < w; x++) {                                                             \
                long long a = x - rx, b = x + rx; /* the window's columns a..b */                           \
                SUM_T v;                                                                                    \
                if (reflect) {                                                                              \
                    /* F(i) = sum of the reflected row's columns 0..i-1 (negative i: minus those of i..-1) */ \
                    long long qa = a / period - (a % period < 0), qb = (b + 1) / period;                   \
                    v = (SUM_T)((SUM_T)qb * pre[period] + pre[b + 1 - qb * period]) -                       \
                        (SUM_T)((SUM_T)qa * pre[period] + pre[a - qa * period]);                            \
                } else { /* replicate, constant, or one column: the whole row, and -a columns of one    \
                          * value on the left and b - (w - 1) of another on the right (a < 0, b >= w) */  \
                    SUM_T left = border == TSR_BORDER_CONSTANT ? outside_col : col[c];                      \
                    SUM_T right = border == TSR_BORDER_CONSTANT ? outside_col : col[(size_t)(w - 1) * cn + c]; \
                    v = (SUM_T)((SUM_T)(-a) * left + (SUM_T)(b - (w - 1)) * right + pre[w]);               \
                }                                                                                           \
                hs[(size_t)x * cn + c] = v;                                                                 \
            }                                                                                               \
        }                                                                                                   \
    }                                                                                                       \
    /* Window sums along the row: ext holds the column sums with rx samples of border on each side. \
     * Radius 1 adds three shifted rows; one channel takes vectorised prefix sums; more channels   \
     * slide in four independent segments so that one segment's additions do not wait for another's. */ \
    __attribute__((target_clones("avx2", "default")))                                                      \
    static void NAME##_hsum(const COL_T *restrict ext, SUM_T *restrict hs, size_t n, int cn, int rx)        \
    {                                                                                                       \
        size_t win = (size_t)(2 * rx + 1) * cn, seg, start[4];                                             \
        if (rx == 0) {                                                                                      \
            for (size_t i = 0; i < n; i++) hs[i] = ext[i];                                                  \
            return;                                                                                         \
        }                                                                                                   \
        if (rx == 1) {                                                                                      \
            size_t c1 = (size_t)cn, c2 = 2 * c1;                                                            \
            for (size_t i = 0; i < n; i++) hs[i] = (SUM_T)ext[i] + ext[i + c1] + ext[i + c2];              \
            return;                                                                                         \
        }                                                                                                   \
        if (cn <= 4 && n >= (size_t)cn) { /* up to 4 channels: vectorised prefix sums, the rest sliding */ \
            size_t i;                                                                                       \
            for (int c = 0; c < cn; c++) {                                                                  \
                SUM_T t = 0;                                                                                \
                for (size_t m = (size_t)c; m < win; m += (size_t)cn) t += ext[m];                           \
                hs[c] = t;                                                                                  \
            }                                                                                               \
            i = tsr__prefix_fast(ext, sizeof(COL_T), hs, sizeof(SUM_T), n, win, cn);                        \
            if (cn == 1 || i > (size_t)cn) {                                                                \
                for (; i < n; i++) hs[i] = hs[i - cn] + ((SUM_T)ext[i - cn + win] - (SUM_T)ext[i - cn]);    \
                return;                                                                                     \
            }                                                                                               \
        } /* otherwise several channels slide in four segments */                                           \
        seg = (n / cn / 4) * cn;                                                                            \
        for (int k = 0; k < 4; k++) start[k] = seg * k;                                                    \
        for (int k = 0; k < 4; k++)                                                                         \
            for (int c = 0; c < cn && start[k] + c < n; c++) {                                             \
                SUM_T t = 0;                                                                                \
                for (size_t m = start[k] + c; m < start[k] + c + win; m += cn) t += ext[m];                 \
                hs[start[k] + c] = t;                                                                       \
            }                                                                                               \
        for (size_t i = cn; i < seg; i++)                                                                  \
            for (int k = 0; k < 4; k++) {                                                                   \
                size_t p = start[k] + i;                                                                    \
                hs[p] = hs[p - cn] + ((SUM_T)ext[p - cn + win] - (SUM_T)ext[p - cn]);                      \
            }                                                                                               \
        for (size_t p = seg ? 4 * seg : (size_t)cn; p < n; p++) /* the tail after the fourth segment */    \
            hs[p] = hs[p - cn] + ((SUM_T)ext[p - cn + win] - (SUM_T)ext[p - cn]);                          \
    }                                                                                                       \
    __attribute__((target_clones("avx2", "default")))                                                      \
    static void NAME##_divide(const SUM_T *restrict hs, void *restrict out, size_t n, int depth,            \
                              uint64_t area)                                                                \
    {                                                                                                       \
        SUM_T half = (SUM_T)((area - 1) / 2);                                                               \
        uint64_t xmax = (depth == TSR_U8 ? 256u : 65536u) * area;                                          \
        int shift = 0;                                                                                      \
        while (shift < 63 && ((uint64_t)1 << shift) / area <= xmax) shift++;                               \
        if (depth == TSR_U8 && area <= 8191) {                                                              \
            float inv = 1.0f / (float)area;                                                                 \
            uint8_t *restrict o = out;                                                                      \
            for (size_t i = 0; i < n; i++) o[i] = (uint8_t)(int)(((float)(hs[i] + half) + 0.5f) * inv);    \
        } else if (sizeof(SUM_T) == 4 && xmax + area < ((uint64_t)1 << 31)) {                              \
            /* a float quotient, off by at most one (x < 2^31: relative error about 2^-23, a quotient \
             * below 65536), then corrected by the remainder x - q * area in 32-bit integers */       \
            float inv = 1.0f / (float)area;                                                                 \
            const int32_t a32 = (int32_t)area;                                                              \
            if (depth == TSR_U8) {                                                                          \
                uint8_t *restrict o = out;                                                                  \
                for (size_t i = 0; i < n; i++) {                                                            \
                    int32_t x = (int32_t)(hs[i] + half), q = (int32_t)((float)x * inv), r = x - q * a32;    \
                    o[i] = (uint8_t)(q + (r >= a32) - (r < 0));                                             \
                }                                                                                           \
            } else {                                                                                        \
                uint16_t *restrict o = out;                                                                 \
                for (size_t i = 0; i < n; i++) {                                                            \
                    int32_t x = (int32_t)(hs[i] + half), q = (int32_t)((float)x * inv), r = x - q * a32;    \
                    o[i] = (uint16_t)(q + (r >= a32) - (r < 0));                                            \
                }                                                                                           \
            }                                                                                               \
        } else if (sizeof(SUM_T) == 4 && shift < 63 && (((uint64_t)1 << shift) / area + 1) >> 32 == 0) {   \
            /* x / area as (x * m) >> shift with m = floor(2^shift / area) + 1: the error x * e /     \
             * 2^shift (e = m * area - 2^shift <= area) stays below 1/area while 2^shift > xmax *    \
             * area, which the loop above ensured; 32-bit m vectorises as a 32x32->64 multiply. */    \
            uint32_t m = (uint32_t)(((uint64_t)1 << shift) / area + 1);                                     \
            if (depth == TSR_U8) {                                                                          \
                uint8_t *restrict o = out;                                                                  \
                for (size_t i = 0; i < n; i++) o[i] = (uint8_t)(((uint64_t)(uint32_t)(hs[i] + half) * m) >> shift); \
            } else {                                                                                        \
                uint16_t *restrict o = out;                                                                 \
                for (size_t i = 0; i < n; i++) o[i] = (uint16_t)(((uint64_t)(uint32_t)(hs[i] + half) * m) >> shift); \
            }                                                                                               \
        } else if (area <= 0xffffffffu) {                                                                   \
            double inv = 1.0 / (double)area;                                                                \
            if (depth == TSR_U8) {                                                                          \
                uint8_t *restrict o = out;                                                                  \
                for (size_t i = 0; i < n; i++) o[i] = (uint8_t)(int64_t)(((double)(hs[i] + half) + 0.5) * inv); \
            } else {                                                                                        \
                uint16_t *restrict o = out;                                                                 \
                for (size_t i = 0; i < n; i++) o[i] = (uint16_t)(int64_t)(((double)(hs[i] + half) + 0.5) * inv); \
            }                                                                                               \
        } else {                                                                                            \
            for (size_t i = 0; i < n; i++) {                                                                \
                unsigned q = tsr__round_mean(hs[i], area);                                                  \
                if (depth == TSR_U8) ((uint8_t *)out)[i] = (uint8_t)q;                                      \
                else ((uint16_t *)out)[i] = (uint16_t)q;                                                    \
            }                                                                                               \
        }                                                                                                   \
    }                                                                                                       \
    static tsr_status NAME##_band(const tsr__box_plan *pl, int y0, int y1, tsr__box_target_fn target,       \
                                  tsr__box_done_fn done, void *ctx)                                         \
    {                                                                                                       \
        const tsr_image *src = pl->src;                                                                     \
        int w = src->width, h = src->height, cn = src->channels, rx = pl->rx, ry = pl->ry;                  \
        size_t n = (size_t)w * cn, pad = (size_t)rx * cn;                                                   \
        uint64_t area = (uint64_t)(2 * rx + 1) * (uint64_t)(2 * ry + 1);                                    \
        COL_T outside = (COL_T)pl->value, outside_col = (COL_T)((uint64_t)pl->value * (2 * ry + 1));        \
        /* windows wider than the row take hsum_far, taller than the image the counted rows below */    \
        const int far_x = rx >= w, far_y = ry >= h;                                                         \
        COL_T *ext = malloc((n + (far_x ? 0 : 2 * pad)) * sizeof *ext);                                    \
        SUM_T *hs = malloc((n + (far_x ? 2 * (size_t)w + 1 : 0)) * sizeof *hs);                             \
        unsigned *times = far_y ? calloc((size_t)h, sizeof *times) : NULL;                                  \
        /* the source columns of the border columns -x and w - 1 + x (x = 1..rx), the same on every    \
         * row: mapped once here, not 2 rx times a row (its modulo cost 5% of a row at rx = 64) */  \
        int *bcol = malloc((far_x ? 1 : 2 * (size_t)rx + 1) * sizeof *bcol);                               \
        COL_T *col = far_x ? ext : ext + pad;                                                               \
        if (!ext || !hs || !bcol || (far_y && !times)) {                                                    \
            free(ext);                                                                                      \
            free(hs);                                                                                       \
            free(bcol);                                                                                     \
            free(times);                                                                                    \
            return tsr__fail(TSR_E_NOMEM, "box: out of memory for running sums of a %dx%d image", w, h);    \
        }                                                                                                   \
        for (int x = 1; x <= rx && !far_x; x++) {                                                           \
            bcol[2 * x - 2] = tsr__border_index(-x, w, pl->border);                                         \
            bcol[2 * x - 1] = tsr__border_index(w - 1 + x, w, pl->border);                                 \
        }                                                                                                   \
        memset(col, 0, n * sizeof *col);                                                                    \
        if (far_y) {                                                                                        \
            unsigned outside_rows = 0;                                                                      \
            for (int k = -ry; k <= ry; k++) {                                                               \
                int yy = tsr__border_index(y0 + k, h, pl->border);                                          \
                if (yy < 0) outside_rows++;                                                                 \
                else times[yy]++;                                                                           \
            }                                                                                               \
            for (int yy = 0; yy < h; yy++)                                                                  \
                if (times[yy]) NAME##_add_row_times(col, src, yy, (COL_T)times[yy], outside, n);            \
            if (outside_rows) NAME##_add_row_times(col, src, -1, (COL_T)outside_rows, outside, n);          \
        } else {                                                                                            \
            for (int k = -ry; k <= ry; k++)                                                                 \
                NAME##_add_row(col, src, tsr__border_index(y0 + k, h, pl->border), 1, outside, n);          \
        }                                                                                                   \
        for (int y = y0; y < y1; y++) {                                                                     \
            void *out;                                                                                      \
            if (y > y0) {                                                                                   \
                NAME##_add_row(col, src, tsr__border_index(y + ry, h, pl->border), 1, outside, n);          \
                NAME##_add_row(col, src, tsr__border_index(y - ry - 1, h, pl->border), -1, outside, n);     \
            }                                                                                               \
            if (far_x) {                                                                                    \
                NAME##_hsum_far(col, hs, hs + n, w, cn, rx, pl->border, outside_col);                      \
            } else {                                                                                        \
                for (int x = 1; x <= rx; x++) { /* border columns on both sides */                          \
                    int l = bcol[2 * x - 2], r = bcol[2 * x - 1];                                           \
                    for (int c = 0; c < cn; c++) {                                                          \
                        col[-(ptrdiff_t)x * cn + c] = l < 0 ? outside_col : col[(size_t)l * cn + c];        \
                        col[(size_t)(w - 1 + x) * cn + c] = r < 0 ? outside_col : col[(size_t)r * cn + c];  \
                    }                                                                                       \
                }                                                                                           \
                NAME##_hsum(ext, hs, n, cn, rx);                                                            \
            }                                                                                               \
            out = target(ctx, y);                                                                           \
            NAME##_divide(hs, out, n, src->depth, area);                                                    \
            if (done) done(ctx, y, out);                                                                    \
        }                                                                                                   \
        free(ext);                                                                                          \
        free(hs);                                                                                           \
        free(bcol);                                                                                         \
        free(times);                                                                                        \
        return TSR_OK;                                                                                      \
    }

TSR_BOX_DEFINE(uint16_t, uint32_t, tsr__box16)
TSR_BOX_DEFINE(uint32_t, uint32_t, tsr__box32)
TSR_BOX_DEFINE(uint64_t, uint64_t, tsr__box64)

tsr_status tsr__box_band(const tsr__box_plan *pl, int y0, int y1, tsr__box_target_fn target, tsr__box_done_fn done,
                         void *ctx)
{
    uint64_t maxv = pl->src->depth == TSR_U8 ? 255 : 65535;
    uint64_t area = (uint64_t)(2 * pl->rx + 1) * (uint64_t)(2 * pl->ry + 1);
    if ((uint64_t)pl->value > maxv) maxv = (uint64_t)pl->value;
    /* Sums must not wrap: column sums in 16 bits while a column of the window fits (twice as
     * many per vector), window sums with the rounding offset in 32 bits, else 64. */
    if (maxv * area + area <= 0xffffffffull && maxv * (uint64_t)(2 * pl->ry + 1) <= 0xffff)
        return tsr__box16_band(pl, y0, y1, target, done, ctx);
    if (maxv * area + area <= 0xffffffffull) return tsr__box32_band(pl, y0, y1, target, done, ctx);
    return tsr__box64_band(pl, y0, y1, target, done, ctx);
}

/* ---------------------------------------------------------------- variants */

static tsr_status tsr__box_reference(const tsr_image *src, tsr_image *dst, const void *params, const tsr_exec *ex)
{
    const tsr_box_params *p = params;
    tsr__box_plan pl = {src, 0, 0, p->border, p->value};
    (void)ex;
    tsr__box_radii(p, &pl.rx, &pl.ry);
    return tsr__box_plain(&pl, dst);
}

struct tsr__box_job {
    tsr__box_plan plan;
    tsr_image *dst;
    tsr_status status;
};

static void *tsr__box_dst_row(void *ctx, int y) { return tsr__row(((struct tsr__box_job *)ctx)->dst, y); }

static void tsr__box_rows(void *ctx, int y0, int y1)
{
    struct tsr__box_job *j = ctx;
    tsr_status s = tsr__box_band(&j->plan, y0, y1, tsr__box_dst_row, NULL, j);
    if (s) j->status = s;   /* any failing band fails the call */
}

static tsr_status tsr__box_running(const tsr_image *src, tsr_image *dst, const void *params, const tsr_exec *ex)
{
    const tsr_box_params *p = params;
    struct tsr__box_job j = {{src, 0, 0, p->border, p->value}, dst, TSR_OK};
    tsr__box_radii(p, &j.plan.rx, &j.plan.ry);
    /* Each band pays 2*ry+1 rows to start its sums: keep bands well above that. Under 128K
     * samples the calling thread does it all (256x256 r = 1: 30-34 us on 2 threads against 28 on
     * one; 512x512: 70 against 94). */
    tsr__parallel_for(src->height, 4 * j.plan.ry + 16,
                      tsr__exec_threads_for(ex, (size_t)src->width * src->channels * src->height, (size_t)1 << 17),
                      tsr__box_rows, &j);
    return j.status;
}

const tsr_variant tsr__box_cpu[] = {
    {"reference", TSR_BACKEND_CPU, "window sums sample by sample, O(rx+ry) per pixel (the definition)",
     tsr__box_reference, NULL, 0, 1, NULL},
    {"running", TSR_BACKEND_CPU, "running column and row sums, O(1) per pixel, threaded and vectorised",
     tsr__box_running, NULL, 1, 0, NULL},
    {NULL, 0, NULL, NULL, NULL, 0, 0, NULL}};
