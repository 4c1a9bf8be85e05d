/* Shrinking by area averaging on the CPU, following OpenCV's INTER_AREA arithmetic:
 *  - integer factors fx x fy: the cell's integer sum; 2x2 rounds (sum + 2) >> 2 (1, 3 or 4
 *    channels), other factors multiply by the float 1/(fx*fy) and round half to even;
 *  - other sizes: per-axis tables of fractional cell weights (float), rows accumulated in
 *    float in OpenCV's order, rounded half to even. */
#include "../core/internal.h"
#include "../core/ops.h"
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static inline unsigned tsr__sat(float v, unsigned maxv)
{
    long r = lrintf(v);   /* round half to even in the default rounding mode, as cvRound */
    return r < 0 ? 0 : (unsigned long)r > maxv ? maxv : (unsigned)r;
}

static inline unsigned tsr__ld(const tsr_image *img, int y, size_t i)
{
    const void *row = tsr__row(img, y);
    return img->depth == TSR_U8 ? ((const uint8_t *)row)[i] : ((const uint16_t *)row)[i];
}

static inline void tsr__st(tsr_image *img, int y, size_t i, unsigned v)
{
    void *row = tsr__row(img, y);
    if (img->depth == TSR_U8) ((uint8_t *)row)[i] = (uint8_t)v;
    else ((uint16_t *)row)[i] = (uint16_t)v;
}

/* One output sample of an integer-factor cell from its sum. */
static inline unsigned tsr__cell_value(uint64_t sum, int fx, int fy, int cn, unsigned maxv)
{
    if (fx == 1 && fy == 1) return (unsigned)sum;
    if (fx == 2 && fy == 2 && cn != 2) return (unsigned)((sum + 2) >> 2);
    return tsr__sat((float)sum * (1.f / (float)(fx * fy)), maxv);
}

/* ---------------------------------------------------------------- fractional tables */

typedef struct {
    int di, si;        /* destination and source index (channel-scaled for x) */
    float alpha;       /* weight of the source sample in that destination cell */
} tsr__area_tab;

/* Fill tab (room for 2*ssize entries) with the weights of source samples in each destination
 * cell of an axis shrunk from ssize to dsize, the way OpenCV's computeResizeAreaTab does. */
static int tsr__area_tab_compute(int ssize, int dsize, int cn, double scale, tsr__area_tab *tab)
{
    int k = 0;
    for (int dx = 0; dx < dsize; dx++) {
        double fsx1 = dx * scale, fsx2 = fsx1 + scale;
        double cell = scale < ssize - fsx1 ? scale : ssize - fsx1;
        int sx1 = (int)ceil(fsx1), sx2 = (int)floor(fsx2);
        sx2 = sx2 < ssize - 1 ? sx2 : ssize - 1;
        sx1 = sx1 < sx2 ? sx1 : sx2;
        if (sx1 - fsx1 > 1e-3) tab[k++] = (tsr__area_tab){dx * cn, (sx1 - 1) * cn, (float)((sx1 - fsx1) / cell)};
        for (int sx = sx1; sx < sx2; sx++) tab[k++] = (tsr__area_tab){dx * cn, sx * cn, (float)(1.0 / cell)};
        if (fsx2 - sx2 > 1e-3) {
            double a = fsx2 - sx2 < 1. ? fsx2 - sx2 : 1.;
            a = a < cell ? a : cell;
            tab[k++] = (tsr__area_tab){dx * cn, sx2 * cn, (float)(a / cell)};
        }
    }
    return k;
}

typedef struct {
    tsr__area_tab *xtab, *ytab;
    int nx, ny;
    int *ystart;       /* first ytab entry of each destination row; ystart[dh] = ny */
} tsr__area_plan;

static void tsr__area_plan_free(tsr__area_plan *pl)
{
    free(pl->xtab);
    free(pl->ytab);
    free(pl->ystart);
}

static tsr_status tsr__area_plan_make(const tsr_image *src, int dw, int dh, tsr__area_plan *pl)
{
    int cn = src->channels;
    memset(pl, 0, sizeof *pl);
    pl->xtab = malloc(sizeof *pl->xtab * 2 * (size_t)src->width);
    pl->ytab = malloc(sizeof *pl->ytab * 2 * (size_t)src->height);
    pl->ystart = malloc(sizeof *pl->ystart * ((size_t)dh + 1));
    if (!pl->xtab || !pl->ytab || !pl->ystart) {
        tsr__area_plan_free(pl);
        return tsr__fail(TSR_E_NOMEM, "resize: out of memory for the area tables");
    }
    pl->nx = tsr__area_tab_compute(src->width, dw, cn, 1. / ((double)dw / src->width), pl->xtab);
    pl->ny = tsr__area_tab_compute(src->height, dh, 1, 1. / ((double)dh / src->height), pl->ytab);
    for (int dy = 0, j = 0; dy <= dh; dy++) {
        while (j < pl->ny && pl->ytab[j].di < dy) j++;
        pl->ystart[dy] = j;
    }
    return TSR_OK;
}

/* Source rows through the x table (the reference's sums, in its order), NR rows at once into
 * buf[0..NR): samples of type T, CN channels (0: cn at run time). Each destination cell's
 * entries are consecutive in the table, so a cell's sum stays in a register from 0 (as the
 * reference's zeroed buffer) and is stored once; the NR rows' sums are independent chains that
 * share the table's loads. Row pointers and the sample type are fixed here, which the generic
 * loader's per-sample row lookup kept the compiler from doing. */
#define TSR__AREA_XPASS(NAME, T, CN, NR)                                                                         \
    static void NAME(const T *const *row, const tsr__area_tab *restrict tab, int nx, int cn,                    \
                     float *const *buf)                                                                          \
    {                                                                                                            \
        const int ch = CN ? CN : cn;                                                                             \
        for (int k = 0; k < nx;) {                                                                               \
            const int di = tab[k].di;                                                                            \
            float acc[NR][CN ? CN : 4];                                                                          \
            for (int c0 = 0; c0 < ch; c0 += (CN ? CN : 4)) {                                                     \
                const int nc = ch - c0 < (CN ? CN : 4) ? ch - c0 : (CN ? CN : 4);                                \
                int e = k;                                                                                       \
                for (int r = 0; r < NR; r++)                                                                     \
                    for (int c = 0; c < (CN ? CN : 4); c++) acc[r][c] = 0.f;                                     \
                do {                                                                                             \
                    const tsr__area_tab t = tab[e];                                                              \
                    for (int r = 0; r < NR; r++)                                                                 \
                        for (int c = 0; c < (CN ? CN : nc); c++)                                                 \
                            acc[r][c] += (float)row[r][t.si + c0 + c] * t.alpha;                                 \
                    e++;                                                                                         \
                } while (e < nx && tab[e].di == di);                                                             \
                for (int r = 0; r < NR; r++)                                                                     \
                    for (int c = 0; c < (CN ? CN : nc); c++) buf[r][di + c0 + c] = acc[r][c];                    \
                if (c0 + (CN ? CN : 4) >= ch) k = e;                                                             \
            }                                                                                                    \
        }                                                                                                        \
    }
TSR__AREA_XPASS(tsr__area_x_u8c1_1, uint8_t, 1, 1)
TSR__AREA_XPASS(tsr__area_x_u8c1_2, uint8_t, 1, 2)
TSR__AREA_XPASS(tsr__area_x_u8c1_3, uint8_t, 1, 3)
TSR__AREA_XPASS(tsr__area_x_u8c1_4, uint8_t, 1, 4)
TSR__AREA_XPASS(tsr__area_x_u8c3_1, uint8_t, 3, 1)
TSR__AREA_XPASS(tsr__area_x_u8c3_2, uint8_t, 3, 2)
TSR__AREA_XPASS(tsr__area_x_u8c3_3, uint8_t, 3, 3)
TSR__AREA_XPASS(tsr__area_x_u8c3_4, uint8_t, 3, 4)
TSR__AREA_XPASS(tsr__area_x_u8c2_1, uint8_t, 2, 1)
TSR__AREA_XPASS(tsr__area_x_u8c2_2, uint8_t, 2, 2)
TSR__AREA_XPASS(tsr__area_x_u8c2_3, uint8_t, 2, 3)
TSR__AREA_XPASS(tsr__area_x_u8c2_4, uint8_t, 2, 4)
TSR__AREA_XPASS(tsr__area_x_u8c4_1, uint8_t, 4, 1)
TSR__AREA_XPASS(tsr__area_x_u8c4_2, uint8_t, 4, 2)
TSR__AREA_XPASS(tsr__area_x_u8c4_3, uint8_t, 4, 3)
TSR__AREA_XPASS(tsr__area_x_u8c4_4, uint8_t, 4, 4)
TSR__AREA_XPASS(tsr__area_x_u16c2_1, uint16_t, 2, 1)
TSR__AREA_XPASS(tsr__area_x_u16c2_2, uint16_t, 2, 2)
TSR__AREA_XPASS(tsr__area_x_u16c2_3, uint16_t, 2, 3)
TSR__AREA_XPASS(tsr__area_x_u16c2_4, uint16_t, 2, 4)
TSR__AREA_XPASS(tsr__area_x_u16c3_1, uint16_t, 3, 1)
TSR__AREA_XPASS(tsr__area_x_u16c3_2, uint16_t, 3, 2)
TSR__AREA_XPASS(tsr__area_x_u16c3_3, uint16_t, 3, 3)
TSR__AREA_XPASS(tsr__area_x_u16c3_4, uint16_t, 3, 4)
TSR__AREA_XPASS(tsr__area_x_u16c4_1, uint16_t, 4, 1)
TSR__AREA_XPASS(tsr__area_x_u16c4_2, uint16_t, 4, 2)
TSR__AREA_XPASS(tsr__area_x_u16c4_3, uint16_t, 4, 3)
TSR__AREA_XPASS(tsr__area_x_u16c4_4, uint16_t, 4, 4)
TSR__AREA_XPASS(tsr__area_x_u8_1, uint8_t, 0, 1)
TSR__AREA_XPASS(tsr__area_x_u8_2, uint8_t, 0, 2)
TSR__AREA_XPASS(tsr__area_x_u8_3, uint8_t, 0, 3)
TSR__AREA_XPASS(tsr__area_x_u8_4, uint8_t, 0, 4)
TSR__AREA_XPASS(tsr__area_x_u16c1_1, uint16_t, 1, 1)
TSR__AREA_XPASS(tsr__area_x_u16c1_2, uint16_t, 1, 2)
TSR__AREA_XPASS(tsr__area_x_u16c1_3, uint16_t, 1, 3)
TSR__AREA_XPASS(tsr__area_x_u16c1_4, uint16_t, 1, 4)
TSR__AREA_XPASS(tsr__area_x_u16_1, uint16_t, 0, 1)
TSR__AREA_XPASS(tsr__area_x_u16_2, uint16_t, 0, 2)
TSR__AREA_XPASS(tsr__area_x_u16_3, uint16_t, 0, 3)
TSR__AREA_XPASS(tsr__area_x_u16_4, uint16_t, 0, 4)

/* The x pass of nr (1 to 4) source rows of src into buf[0..nr). */
typedef void (*tsr__area_xfn)(const void *const *, const tsr__area_tab *, int, int, float *const *);
static void tsr__area_xpass(const tsr_image *src, const void *const *rows, int nr, const tsr__area_plan *pl,
                            float *const *buf)
{
#define TSR__AREA_FNS(P) {(tsr__area_xfn)P##_1, (tsr__area_xfn)P##_2, (tsr__area_xfn)P##_3, (tsr__area_xfn)P##_4}
    /* by depth, then channel count (index 0: any count, at run time) */
    static const tsr__area_xfn fns[2][5][4] = {
        {TSR__AREA_FNS(tsr__area_x_u8), TSR__AREA_FNS(tsr__area_x_u8c1), TSR__AREA_FNS(tsr__area_x_u8c2),
         TSR__AREA_FNS(tsr__area_x_u8c3), TSR__AREA_FNS(tsr__area_x_u8c4)},
        {TSR__AREA_FNS(tsr__area_x_u16), TSR__AREA_FNS(tsr__area_x_u16c1), TSR__AREA_FNS(tsr__area_x_u16c2),
         TSR__AREA_FNS(tsr__area_x_u16c3), TSR__AREA_FNS(tsr__area_x_u16c4)}};
#undef TSR__AREA_FNS
    const int cn = src->channels;
    const tsr__area_xfn *f = fns[src->depth != TSR_U8][cn >= 1 && cn <= 4 ? cn : 0];
    f[nr - 1](rows, pl->xtab, pl->nx, cn, buf);
}

/* One destination row from its source rows, sample by sample through the generic loader (the
 * reference): buf and sum hold dw*cn floats each. */
static void tsr__area_row(const tsr_image *src, tsr_image *dst, const tsr__area_plan *pl, int dy, float *buf,
                          float *sum)
{
    size_t n = (size_t)dst->width * dst->channels;
    int cn = src->channels;
    unsigned maxv = src->depth == TSR_U8 ? 255u : 65535u;
    for (int j = pl->ystart[dy]; j < pl->ystart[dy + 1]; j++) {
        float beta = pl->ytab[j].alpha;
        int sy = pl->ytab[j].si;
        memset(buf, 0, n * sizeof *buf);
        for (int k = 0; k < pl->nx; k++) {
            const tsr__area_tab *t = &pl->xtab[k];
            for (int c = 0; c < cn; c++) buf[t->di + c] += (float)tsr__ld(src, sy, (size_t)t->si + c) * t->alpha;
        }
        if (j == pl->ystart[dy])
            for (size_t i = 0; i < n; i++) sum[i] = beta * buf[i];
        else
            for (size_t i = 0; i < n; i++) sum[i] += beta * buf[i];
    }
    for (size_t i = 0; i < n; i++) tsr__st(dst, dy, i, tsr__sat(sum[i], maxv));
}

/* The same row with the x pass of tsr__area_xpass, 4 source rows at a time: the same operations
 * in the same order. buf holds 5 rows of dw*cn floats, sum one. A source row shared with the
 * previous destination row (the cell boundary falls inside it) is not passed again: *cached
 * names the source row whose x pass buf's fifth row holds (-1: none), as this call leaves it. */
static void tsr__area_row_fast(const tsr_image *src, tsr_image *dst, const tsr__area_plan *pl, int dy, float *buf,
                               float *sum, int *cached)
{
    size_t n = (size_t)dst->width * dst->channels;
    unsigned maxv = src->depth == TSR_U8 ? 255u : 65535u;
    float *bufs[5] = {buf, buf + n, buf + 2 * n, buf + 3 * n, buf + 4 * n};
    const int j0 = pl->ystart[dy], j1 = pl->ystart[dy + 1];
    int j = j0;
    if (j < j1 && pl->ytab[j].si == *cached) {   /* the first source row's x pass is the cached one */
        const float beta = pl->ytab[j].alpha, *b = bufs[4];
        for (size_t i = 0; i < n; i++) sum[i] = beta * b[i];
        j++;
    }
    while (j < j1) {
        const int nr = j1 - j >= 4 ? 4 : j1 - j;
        const void *rows[4];
        for (int r = 0; r < nr; r++) rows[r] = tsr__row(src, pl->ytab[j + r].si);
        for (int r = 0; r < nr; r++) memset(bufs[r], 0, n * sizeof(float));
        tsr__area_xpass(src, rows, nr, pl, bufs);
        for (int r = 0; r < nr; r++, j++) {
            const float beta = pl->ytab[j].alpha, *b = bufs[r];
            if (j == j0)
                for (size_t i = 0; i < n; i++) sum[i] = beta * b[i];
            else
                for (size_t i = 0; i < n; i++) sum[i] += beta * b[i];
        }
        if (j == j1) {   /* keep the last source row's x pass for the next destination row */
            memcpy(bufs[4], bufs[nr - 1], n * sizeof(float));
            *cached = pl->ytab[j1 - 1].si;
        }
    }
    if (src->depth == TSR_U8)
        for (size_t i = 0; i < n; i++) ((uint8_t *)tsr__row(dst, dy))[i] = (uint8_t)tsr__sat(sum[i], maxv);
    else
        for (size_t i = 0; i < n; i++) ((uint16_t *)tsr__row(dst, dy))[i] = (uint16_t)tsr__sat(sum[i], maxv);
}

/* ---------------------------------------------------------------- reference */

static tsr_status tsr__resize_reference(const tsr_image *src, tsr_image *dst, const void *params, const tsr_exec *ex)
{
    const tsr_resize_params *p = params;
    int cn = src->channels, fx, fy;
    unsigned maxv = src->depth == TSR_U8 ? 255u : 65535u;
    (void)ex;
    if (tsr__resize_is_integer(src, p, &fx, &fy)) {
        for (int dy = 0; dy < dst->height; dy++)
            for (int dx = 0; dx < dst->width; dx++)
                for (int c = 0; c < cn; c++) {
                    uint64_t s = 0;
                    for (int y = dy * fy; y < dy * fy + fy; y++)
                        for (int x = dx * fx; x < dx * fx + fx; x++) s += tsr__ld(src, y, (size_t)x * cn + c);
                    tsr__st(dst, dy, (size_t)dx * cn + c, tsr__cell_value(s, fx, fy, cn, maxv));
                }
        return TSR_OK;
    }
    {
        tsr__area_plan pl;
        size_t n = (size_t)dst->width * cn;
        float *buf;
        tsr_status s = tsr__area_plan_make(src, dst->width, dst->height, &pl);
        if (s) return s;
        buf = malloc(2 * n * sizeof *buf);
        if (!buf) {
            tsr__area_plan_free(&pl);
            return tsr__fail(TSR_E_NOMEM, "resize: out of memory for a row buffer");
        }
        for (int dy = 0; dy < dst->height; dy++) tsr__area_row(src, dst, &pl, dy, buf, buf + n);
        free(buf);
        tsr__area_plan_free(&pl);
    }
    return TSR_OK;
}

/* ---------------------------------------------------------------- threaded */

struct tsr__resize_job {
    const tsr_image *src;
    tsr_image *dst;
    int fx, fy;
    tsr__area_plan plan;
    tsr_status status;
};

#if defined(__x86_64__) || defined(__i386__)
#include "simd_x86.h"
/* The 2x2 kernels of 1 and 4 channels share one loop: each step reads 64 bytes of each source
 * row (two 32-byte halves, k = 0 and 1), CELLS turns a half of both rows into its cells' means,
 * (sum + 2) >> 2, in 16-bit (8-bit samples) or 32-bit lanes, PACK packs the two halves, whose
 * 128-bit interleave the final permute undoes, and 32 bytes are stored. NAME returns the number
 * of output pixels done. */
#define TSR_SHRINK2_AVX2(NAME, T, CN, CELLS, PACK)                                                     \
    __attribute__((target("avx2"))) static int NAME(const T *s0, const T *s1, T *o, int dw)         \
    {                                                                                                \
        enum { STEP = 32 / ((CN) * (int)sizeof(T)), HALF = 32 / (int)sizeof(T) };                   \
        int d = 0;                                                                                   \
        for (; d + STEP <= dw; d += STEP) {                                                          \
            __m256i q[2];                                                                            \
            for (int k = 0; k < 2; k++)                                                              \
                q[k] = CELLS(_mm256_loadu_si256((const __m256i *)(s0 + 2 * (CN) * (size_t)d + HALF * k)), \
                             _mm256_loadu_si256((const __m256i *)(s1 + 2 * (CN) * (size_t)d + HALF * k))); \
            _mm256_storeu_si256((__m256i *)(o + (CN) * (size_t)d), _mm256_permute4x64_epi64(PACK(q[0], q[1]), 0xD8)); \
        }                                                                                            \
        return d;                                                                                    \
    }

/* One 8-bit channel: pmaddubsw with ones adds horizontal pairs into 16-bit lanes, the two rows'
 * pair sums are added. */
__attribute__((target("avx2"))) static inline __m256i tsr__cells_u8(__m256i a, __m256i b)
{
    const __m256i ones = _mm256_set1_epi8(1);
    const __m256i sum = _mm256_add_epi16(_mm256_maddubs_epi16(a, ones), _mm256_maddubs_epi16(b, ones));
    return _mm256_srli_epi16(_mm256_add_epi16(sum, _mm256_set1_epi16(2)), 2);
}

/* 8-bit RGBA: the rows' sums in 16-bit lanes hold two pixels per 64-bit half (p0 p1 | p4 p5 from
 * the low unpack, p2 p3 | p6 p7 from the high one); each half plus the other adds a pixel pair,
 * and a 64-bit unpack puts the four cells in order 0 1 | 2 3. */
__attribute__((target("avx2"))) static inline __m256i tsr__cells_rgba8(__m256i a, __m256i b)
{
    const __m256i z = _mm256_setzero_si256();
    __m256i lo = _mm256_add_epi16(_mm256_unpacklo_epi8(a, z), _mm256_unpacklo_epi8(b, z));
    __m256i hi = _mm256_add_epi16(_mm256_unpackhi_epi8(a, z), _mm256_unpackhi_epi8(b, z));
    lo = _mm256_add_epi16(lo, _mm256_srli_si256(lo, 8));
    hi = _mm256_add_epi16(hi, _mm256_srli_si256(hi, 8));
    return _mm256_srli_epi16(_mm256_add_epi16(_mm256_unpacklo_epi64(lo, hi), _mm256_set1_epi16(2)), 2);
}

/* One 16-bit channel: a horizontal pair is one 32-bit lane, its halves masked and shifted and
 * added to the other row's in 32 bits. */
__attribute__((target("avx2"))) static inline __m256i tsr__cells_u16(__m256i a, __m256i b)
{
    const __m256i lo16 = _mm256_set1_epi32(0xffff);
    const __m256i sum = _mm256_add_epi32(_mm256_add_epi32(_mm256_and_si256(a, lo16), _mm256_srli_epi32(a, 16)),
                                         _mm256_add_epi32(_mm256_and_si256(b, lo16), _mm256_srli_epi32(b, 16)));
    return _mm256_srli_epi32(_mm256_add_epi32(sum, _mm256_set1_epi32(2)), 2);
}

/* 16-bit RGBA: the 16-to-32-bit unpacks of a 128-bit half put pixel 2i in the low and 2i + 1 in
 * the high unpack, so the four unpacks of the two rows add up to whole cells (2^16 of headroom
 * for four samples and the rounding). */
__attribute__((target("avx2"))) static inline __m256i tsr__cells_rgba16(__m256i a, __m256i b)
{
    const __m256i z = _mm256_setzero_si256();
    const __m256i sum = _mm256_add_epi32(_mm256_add_epi32(_mm256_unpacklo_epi16(a, z), _mm256_unpackhi_epi16(a, z)),
                                         _mm256_add_epi32(_mm256_unpacklo_epi16(b, z), _mm256_unpackhi_epi16(b, z)));
    return _mm256_srli_epi32(_mm256_add_epi32(sum, _mm256_set1_epi32(2)), 2);
}

TSR_SHRINK2_AVX2(tsr__resize2x2_u8_avx2, uint8_t, 1, tsr__cells_u8, _mm256_packus_epi16)
TSR_SHRINK2_AVX2(tsr__resize2x2_rgba8_avx2, uint8_t, 4, tsr__cells_rgba8, _mm256_packus_epi16)
TSR_SHRINK2_AVX2(tsr__resize2x2_u16_avx2, uint16_t, 1, tsr__cells_u16, _mm256_packus_epi32)
TSR_SHRINK2_AVX2(tsr__resize2x2_rgba16_avx2, uint16_t, 4, tsr__cells_rgba16, _mm256_packus_epi32)

/* 2x2 cells of RGB, 8-bit (16 output pixels a step) and 16-bit (8): each 128-bit half takes 48
 * bytes of each source row (16 or 8 pixels), the two rows' sums go into lanes of twice the sample
 * width (LB bits: unpacks with zero, UB the sample's), each sample plus the one 3 lanes on (the
 * same channel of the next pixel, by alignr across neighbouring vectors), (sum + 2) >> 2, packed
 * back, and the 24 bytes of samples at the pairs' first pixels (j mod 6 < 3) gathered by byte
 * shuffles M00 | M10 (16 bytes) and M11 | M21 (8). Returns the number of output pixels done. */
#define TSR_SHRINK2_RGB_AVX2(NAME, T, UB, LB, M00, M10, M11, M21)                                    \
    __attribute__((target("avx2"))) static int NAME(const T *s0, const T *s1, T *o, int dw)          \
    {                                                                                                 \
        const __m256i m00 = _mm256_setr_epi8(M00, M00), m10 = _mm256_setr_epi8(M10, M10);            \
        const __m256i m11 = _mm256_setr_epi8(M11, M11), m21 = _mm256_setr_epi8(M21, M21);            \
        const __m256i z = _mm256_setzero_si256(), two = _mm256_set1_epi##LB(2);                       \
        enum { STEP = 16 / (int)sizeof(T) };                                                          \
        int d = 0;                                                                                    \
        for (; d + STEP <= dw; d += STEP) {                                                           \
            const uint8_t *p0 = (const uint8_t *)(s0 + 3 * 2 * (size_t)d), *p1 = (const uint8_t *)(s1 + 3 * 2 * (size_t)d); \
            __m256i v[7], w[6];                                                                       \
            for (int k = 0; k < 3; k++) {                                                             \
                const __m256i a = tsr__load2x16(p0 + 16 * k, p0 + 48 + 16 * k);                       \
                const __m256i b = tsr__load2x16(p1 + 16 * k, p1 + 48 + 16 * k);                       \
                v[2 * k] = _mm256_add_epi##LB(_mm256_unpacklo_epi##UB(a, z), _mm256_unpacklo_epi##UB(b, z)); \
                v[2 * k + 1] = _mm256_add_epi##LB(_mm256_unpackhi_epi##UB(a, z), _mm256_unpackhi_epi##UB(b, z)); \
            }                                                                                         \
            v[6] = z;                                                                                 \
            for (int k = 0; k < 6; k++)                                                               \
                w[k] = _mm256_srli_epi##LB(                                                           \
                    _mm256_add_epi##LB(_mm256_add_epi##LB(v[k], _mm256_alignr_epi8(v[k + 1], v[k], 3 * (LB) / 8)), two), 2); \
            const __m256i q0 = _mm256_packus_epi##LB(w[0], w[1]), q1 = _mm256_packus_epi##LB(w[2], w[3]); \
            const __m256i q2 = _mm256_packus_epi##LB(w[4], w[5]);                                     \
            const __m256i first = _mm256_or_si256(_mm256_shuffle_epi8(q0, m00), _mm256_shuffle_epi8(q1, m10)); \
            const __m256i last = _mm256_or_si256(_mm256_shuffle_epi8(q1, m11), _mm256_shuffle_epi8(q2, m21)); \
            uint8_t *out = (uint8_t *)(o + 3 * (size_t)d);                                            \
            _mm_storeu_si128((__m128i *)out, _mm256_castsi256_si128(first));                          \
            _mm_storel_epi64((__m128i *)(out + 16), _mm256_castsi256_si128(last));                    \
            _mm_storeu_si128((__m128i *)(out + 24), _mm256_extracti128_si256(first, 1));              \
            _mm_storel_epi64((__m128i *)(out + 40), _mm256_extracti128_si256(last, 1));               \
        }                                                                                             \
        return d;                                                                                     \
    }

#define X -128
#define TSR_ARGS(...) __VA_ARGS__   /* a mask's 16 bytes as one macro argument */
/* 8-bit: packed samples 0-15 (q0), 16-31 (q1), 32-47 (q2) of a half; outputs are samples 0 1 2
 * 6 7 8 12 13 14 18 19 20 24 25 26 30 | 31 32 36 37 38 42 43 44 */
TSR_SHRINK2_RGB_AVX2(tsr__resize2x2_rgb8_avx2, uint8_t, 8, 16,
                     TSR_ARGS(0, 1, 2, 6, 7, 8, 12, 13, 14, X, X, X, X, X, X, X),
                     TSR_ARGS(X, X, X, X, X, X, X, X, X, 2, 3, 4, 8, 9, 10, 14),
                     TSR_ARGS(15, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X),
                     TSR_ARGS(X, 0, 4, 5, 6, 10, 11, 12, X, X, X, X, X, X, X, X))
/* 16-bit: packed samples 0-7 (q0), 8-15 (q1), 16-23 (q2) of a half; outputs are samples 0 1 2 6
 * 7 8 12 13 | 14 18 19 20 */
TSR_SHRINK2_RGB_AVX2(tsr__resize2x2_rgb16_avx2, uint16_t, 16, 32,
                     TSR_ARGS(0, 1, 2, 3, 4, 5, 12, 13, 14, 15, X, X, X, X, X, X),
                     TSR_ARGS(X, X, X, X, X, X, X, X, X, X, 0, 1, 8, 9, 10, 11),
                     TSR_ARGS(12, 13, X, X, X, X, X, X, X, X, X, X, X, X, X, X),
                     TSR_ARGS(X, X, 4, 5, 6, 7, 8, 9, X, X, X, X, X, X, X, X))
#undef TSR_ARGS
#undef X
#define TSR_HAVE_RESIZE_SIMD 1
#endif

/* 2x2 cells of CN interleaved channels (1, 3 or 4), (sum + 2) >> 2 as
 * tsr__cell_value rounds them, straight from the two source rows, the channel count fixed so
 * that the compiler vectorises the interleaved loads. */
#define TSR_SHRINK2(NAME, T, CN)                                                                  \
    __attribute__((target_clones("avx2", "default"))) static void NAME(                          \
        const T *restrict s0, const T *restrict s1, T *restrict o, size_t dw)                    \
    {                                                                                           \
        for (size_t d = 0; d < dw; d++)                                                         \
            for (int c = 0; c < (CN); c++) {                                                    \
                const size_t i = 2 * d * (CN) + (size_t)c;                                      \
                o[d * (CN) + (size_t)c] =                                                       \
                    (T)(((uint32_t)s0[i] + s0[i + (CN)] + s1[i] + s1[i + (CN)] + 2) >> 2);      \
            }                                                                                   \
    }
TSR_SHRINK2(tsr__shrink2_u8_c1, uint8_t, 1)
TSR_SHRINK2(tsr__shrink2_u8_c3, uint8_t, 3)
TSR_SHRINK2(tsr__shrink2_u8_c4, uint8_t, 4)
TSR_SHRINK2(tsr__shrink2_u16_c1, uint16_t, 1)
TSR_SHRINK2(tsr__shrink2_u16_c3, uint16_t, 3)
TSR_SHRINK2(tsr__shrink2_u16_c4, uint16_t, 4)

/* The cell sums of one row of column sums cs for CN channels (fixed, so the channel loop unrolls
 * and the compiler keeps the CN sums of a cell in registers). */
#define TSR_CELL_SUMS(CN)                                                                        \
    for (int dx = 0; dx < dw; dx++) {                                                           \
        const uint32_t *restrict p = cs + (size_t)dx * fx * (CN);                               \
        uint32_t t[CN];                                                                         \
        for (int c = 0; c < (CN); c++) t[c] = p[c];                                             \
        for (int k = 1; k < fx; k++)                                                            \
            for (int c = 0; c < (CN); c++) t[c] += p[(size_t)k * (CN) + c];                     \
        for (int c = 0; c < (CN); c++) cl[(size_t)dx * (CN) + c] = t[c];                        \
    }

/* One output row of 2x2 cells of B-bit samples (s0, s1, o, cn, dw in scope): the AVX2 kernel for
 * the channel count, then the loop for the rest of the row. */
#ifdef TSR_HAVE_RESIZE_SIMD
#define TSR_SHRINK2_SIMD(B)                                                                         \
    (__builtin_cpu_supports("avx2") ? cn == 1   ? tsr__resize2x2_u##B##_avx2(s0, s1, o, dw)          \
                                      : cn == 3 ? tsr__resize2x2_rgb##B##_avx2(s0, s1, o, dw)        \
                                                : tsr__resize2x2_rgba##B##_avx2(s0, s1, o, dw)       \
                                    : 0)
#else
#define TSR_SHRINK2_SIMD(B) 0
#endif
#define TSR_SHRINK2_ROW(B)                                                                          \
    do {                                                                                            \
        const int d = TSR_SHRINK2_SIMD(B);                                                          \
        const size_t in = 2 * (size_t)cn * d, on = (size_t)cn * d;                                  \
        (cn == 1 ? tsr__shrink2_u##B##_c1 : cn == 3 ? tsr__shrink2_u##B##_c3 : tsr__shrink2_u##B##_c4)( \
            (const uint##B##_t *)s0 + in, (const uint##B##_t *)s1 + in, (uint##B##_t *)o + on, (size_t)(dw - d)); \
    } while (0)

/* Integer factors: column sums of the fy source rows, then the fx-wide cells of that row. The
 * common cases (2x2 of 1/3/4 channels, any factor of one channel) get loops the compiler
 * vectorises; the rest go through tsr__cell_value. */
__attribute__((target_clones("avx2", "default")))
static void tsr__resize_int_rows(void *ctx, int y0, int y1)
{
    struct tsr__resize_job *j = ctx;
    const tsr_image *src = j->src;
    int cn = src->channels, fx = j->fx, fy = j->fy, dw = j->dst->width;
    size_t n = (size_t)src->width * cn, nd = (size_t)dw * cn;
    unsigned maxv = src->depth == TSR_U8 ? 255u : 65535u;
    /* Adding and subtracting 1.5 * 2^23 rounds a float below 2^22 half to even, as lrintf does,
     * in a form the compiler vectorises (the build keeps floating-point contraction off). */
    float scale = 1.f / (float)(fx * fy), magic = 12582912.0f;
    uint32_t *col = malloc(n * sizeof *col);
    uint32_t *cell = malloc(nd * sizeof *cell);
    if (!col || !cell) {
        free(col);
        free(cell);
        j->status = tsr__fail(TSR_E_NOMEM, "resize: out of memory for a row of sums");
        return;
    }
    for (int dy = y0; dy < y1; dy++) {
        uint32_t *restrict cs = col, *restrict cl = cell;
        if (fx == 2 && fy == 2 && (cn == 1 || cn == 3 || cn == 4)) {
            /* The most common shrinks, straight from the two source rows ((sum + 2) >> 2; two
             * channels round otherwise, tsr__cell_value): an AVX2 kernel per depth and channel
             * count, then the loop for the rest of the row. */
            const void *s0 = tsr__row(src, 2 * dy), *s1 = tsr__row(src, 2 * dy + 1);
            void *o = tsr__row(j->dst, dy);
            if (src->depth == TSR_U8) TSR_SHRINK2_ROW(8);
            else TSR_SHRINK2_ROW(16);
            continue;
        }
        memset(cs, 0, n * sizeof *cs);
        for (int y = dy * fy; y < dy * fy + fy; y++) {
            if (src->depth == TSR_U8) {
                const uint8_t *restrict s = tsr__row(src, y);
                for (size_t i = 0; i < n; i++) cs[i] += s[i];
            } else {
                const uint16_t *restrict s = tsr__row(src, y);
                for (size_t i = 0; i < n; i++) cs[i] += s[i];
            }
        }
        /* Cell sums along the row. */
        if (cn == 1 && fx == 2) {
            for (size_t d = 0; d < nd; d++) cl[d] = cs[2 * d] + cs[2 * d + 1];
        } else if (cn == 1) {
            for (size_t d = 0; d < nd; d++) {
                uint32_t t = 0;
                for (int k = 0; k < fx; k++) t += cs[d * fx + k];
                cl[d] = t;
            }
        } else if (cn == 2) {
            TSR_CELL_SUMS(2)
        } else if (cn == 3) {
            TSR_CELL_SUMS(3)
        } else if (cn == 4) {
            TSR_CELL_SUMS(4)
        } else {
            for (int dx = 0; dx < dw; dx++)
                for (int c = 0; c < cn; c++) {
                    uint32_t t = 0;
                    for (int k = 0; k < fx; k++) t += cs[((size_t)dx * fx + k) * cn + c];
                    cl[(size_t)dx * cn + c] = t;
                }
        }
        /* Cell sums to samples, by OpenCV's rule for this factor. 32-bit cell sums hold
         * fx * fy * 65535 only while that fits; larger cells take the 64-bit path. */
        if ((uint64_t)fx * fy * maxv > 0xffffffffu) {
            for (int dx = 0; dx < dw; dx++)
                for (int c = 0; c < cn; c++) {
                    uint64_t t = 0;
                    for (int k = 0; k < fx; k++) t += cs[((size_t)dx * fx + k) * cn + c];
                    tsr__st(j->dst, dy, (size_t)dx * cn + c, tsr__cell_value(t, fx, fy, cn, maxv));
                }
        } else if (src->depth == TSR_U8) {
            uint8_t *restrict o = tsr__row(j->dst, dy);
            if (fx == 1 && fy == 1) for (size_t d = 0; d < nd; d++) o[d] = (uint8_t)cl[d];
            else if (fx == 2 && fy == 2 && cn != 2) for (size_t d = 0; d < nd; d++) o[d] = (uint8_t)((cl[d] + 2) >> 2);
            else for (size_t d = 0; d < nd; d++) o[d] = (uint8_t)(int)(((float)cl[d] * scale + magic) - magic);
        } else {
            uint16_t *restrict o = tsr__row(j->dst, dy);
            if (fx == 1 && fy == 1) for (size_t d = 0; d < nd; d++) o[d] = (uint16_t)cl[d];
            else if (fx == 2 && fy == 2 && cn != 2) for (size_t d = 0; d < nd; d++) o[d] = (uint16_t)((cl[d] + 2) >> 2);
            else for (size_t d = 0; d < nd; d++) o[d] = (uint16_t)(int)(((float)cl[d] * scale + magic) - magic);
        }
    }
    free(col);
    free(cell);
}

static void tsr__resize_area_rows(void *ctx, int y0, int y1)
{
    struct tsr__resize_job *j = ctx;
    size_t n = (size_t)j->dst->width * j->dst->channels;
    float *buf = malloc(6 * n * sizeof *buf);
    int cached = -1;
    if (!buf) {
        j->status = tsr__fail(TSR_E_NOMEM, "resize: out of memory for a row buffer");
        return;
    }
    for (int dy = y0; dy < y1; dy++) tsr__area_row_fast(j->src, j->dst, &j->plan, dy, buf, buf + 5 * n, &cached);
    free(buf);
}

static tsr_status tsr__resize_threaded(const tsr_image *src, tsr_image *dst, const void *params, const tsr_exec *ex)
{
    const tsr_resize_params *p = params;
    struct tsr__resize_job j;
    memset(&j, 0, sizeof j);
    j.src = src;
    j.dst = dst;
    if (tsr__resize_is_integer(src, p, &j.fx, &j.fy)) {
        /* 32-bit column sums of fy rows of 16-bit samples fit while fy <= 65537; taller cells
         * (a 65538-row image shrunk to one row) take the reference's 64-bit sums. */
        if (j.fy > 65537) return tsr__resize_reference(src, dst, params, ex);
        /* sources under 2 MiB on the calling thread (1024x1024 gray 2x: 27 us on 2 threads, 16 on
         * one; 2048x2048: 55 / 58) */
        const size_t bytes = tsr_image_row_bytes(src) * (size_t)src->height;
        tsr__parallel_for(dst->height, 1, tsr__exec_threads_for(ex, bytes, (size_t)2 << 20), tsr__resize_int_rows, &j);
        return j.status;
    }
    if ((j.status = tsr__area_plan_make(src, dst->width, dst->height, &j.plan))) return j.status;
    tsr__parallel_for(dst->height, 1, tsr__exec_threads(ex), tsr__resize_area_rows, &j);
    tsr__area_plan_free(&j.plan);
    return j.status;
}

const tsr_variant tsr__resize_cpu[] = {
    {"reference", TSR_BACKEND_CPU, "each cell summed or weighted sample by sample (the definition)",
     tsr__resize_reference, NULL, 0, 1, NULL},
    {"threaded", TSR_BACKEND_CPU,
     "rows on all threads (small integer shrinks on one), integer factors through vectorised column sums",
     tsr__resize_threaded, NULL, 1, 0, NULL},
    {NULL, 0, NULL, NULL, NULL, 0, 0, NULL}};
