/* Shared by the CUDA box-filter and adaptive-threshold variants (box.cu, box_wide.cu): the
 * exact rounded mean, the launch arguments built from an op's parameters, and small helpers. */
#ifndef TSR_BOX_COMMON_CUH
#define TSR_BOX_COMMON_CUH

#include "kernels_common.cuh"
#include "../cpu/box_core.h"
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ rounded means */

/* How the rounded mean floor((s + (area-1)/2) / area) is computed; each mode is exact for the
 * inputs it is chosen for (the argument is in src/cpu/box.c): float reciprocal for 8-bit
 * samples and area <= 8191, double reciprocal for area <= 2^32, integer division otherwise. */
struct tsr__cu_mean {
    unsigned long long area, half;
    float invf;
    double invd;
    int mode;
};

/* Choose the exact method for 'area' and the sample depth (host side). */
static inline tsr__cu_mean tsr__cu_mean_make(unsigned long long area, int depth)
{
    tsr__cu_mean m;
    m.area = area;
    m.half = (area - 1) / 2;
    m.invf = 1.0f / (float)area;
    m.invd = 1.0 / (double)area;
    m.mode = depth == TSR_U8 && area <= 8191 ? 0 : area <= 0xffffffffull ? 1 : 2;
    return m;
}

/* The rounded mean of the window sum s (device side); explicit _rn intrinsics keep the
 * compiler from contracting the add and multiply into an FMA. */
__device__ static inline unsigned tsr__cu_round_mean(unsigned long long s, const tsr__cu_mean &m)
{
    unsigned long long t = s + m.half;
    if (m.mode == 0) return (unsigned)__float2uint_rz(__fmul_rn(__fadd_rn(__ull2float_rn(t), 0.5f), m.invf));
    if (m.mode == 1) return (unsigned)__double2ull_rz(__dmul_rn(__dadd_rn(__ull2double_rn(t), 0.5), m.invd));
    return (unsigned)(t / m.area);
}

/* ------------------------------------------------------------------------ launch arguments */

/* Everything a box or threshold kernel needs, passed by value. */
struct tsr__box_args {
    const void *src;
    size_t sstride;
    void *dst;
    size_t dstride;
    int w, h, cn, rx, ry, border, value;
    tsr__cu_mean mean;
    int thresh;                 /* nonzero: write the threshold test instead of the mean */
    int idelta, inverse, maxval;
};

/* Arguments of a box run from its parameters. */
static inline tsr__box_args tsr__box_args_box(const tsr_image *src, tsr_image *dst, const tsr_box_params *p)
{
    tsr__box_args a;
    memset(&a, 0, sizeof a);
    a.src = src->data;
    a.sstride = src->stride;
    a.dst = dst->data;
    a.dstride = dst->stride;
    a.w = src->width;
    a.h = src->height;
    a.cn = src->channels;
    tsr__box_radii(p, &a.rx, &a.ry);
    a.border = p->border;
    a.value = p->border == TSR_BORDER_CONSTANT ? p->value : 0;
    a.mean = tsr__cu_mean_make((unsigned long long)(2 * a.rx + 1) * (unsigned long long)(2 * a.ry + 1), src->depth);
    return a;
}

/* Arguments of an adaptive threshold run: the 8-bit box mean with replicated borders. */
static inline tsr__box_args tsr__box_args_threshold(const tsr_image *src, tsr_image *dst, const tsr_threshold_params *p)
{
    tsr_box_params bp = {p->block / 2, -1, -1, TSR_BORDER_REPLICATE, 0};
    tsr__box_args a = tsr__box_args_box(src, dst, &bp);
    a.thresh = 1;
    a.idelta = tsr__threshold_idelta(p);
    a.inverse = p->inverse;
    a.maxval = p->maxval;
    return a;
}

/* box.cu: the run for a destination whose rows are not 16-byte aligned, of a variant whose plan
 * needs them (box/warp, else box/fast). */
tsr_status tsr__box_unaligned_dst(const tsr__box_args &a, const tsr_image *src, const tsr_image *dst, cudaStream_t st,
                                  const char *what);

/* Whether window sums (plus the rounding offset) fit 32 bits: the CPU's rule, so that
 * wrapping 32-bit running sums still give exact window sums. */
static inline int tsr__box_sums_fit_32(const tsr__box_args &a, int depth)
{
    unsigned long long maxv = depth == TSR_U8 ? 255 : 65535;
    if ((unsigned long long)a.value > maxv) maxv = (unsigned long long)a.value;
    return maxv * a.mean.area + a.mean.area <= 0xffffffffull;
}

/* A sample of the source with borders applied: yy/xx are mapped indices, -1 is outside
 * (constant border). */
template <class T>
__device__ static inline unsigned tsr__box_sample(const tsr__box_args &a, int yy, int xx, int c)
{
    if (yy < 0 || xx < 0) return (unsigned)a.value;
    return tsr__cu_row<T>(a.src, a.sstride, yy)[(size_t)xx * a.cn + c];
}

/* The output sample for window sum 'sum' at row y, sample index i: the rounded mean, or for
 * threshold the outcome of OpenCV's test on src - mean. */
template <class T>
__device__ static inline T tsr__box_result(const tsr__box_args &a, unsigned long long sum, int y, size_t i)
{
    unsigned m = tsr__cu_round_mean(sum, a.mean);
    if (!a.thresh) return (T)m;
    int diff = (int)tsr__cu_row<T>(a.src, a.sstride, y)[i] - (int)m;
    int pass = a.inverse ? diff <= -a.idelta : diff > -a.idelta;
    return (T)(pass ? a.maxval : 0);
}

/* Whether 'nseg' warp-wide column segments over h rows come short of about 1.5 waves of
 * resident warps (20 per SM) at 16-row strips: there (3840x2160 on the H100, against
 * 8192x8192) short strips and the kernels with more warps in flight measured faster. */
static inline int tsr__cu_short_of_warps(long long h, long long nseg)
{
    return h * nseg < (long long)tsr__cu_sm_count() * 30 * 16;
}

/* ---- 8-bit gray column sums as packed 16-bit pairs (box/reg, box/wide) */

/* Row y outside the image mapped through the border (out of line: only the first and last
 * strips need it, and inlined into every unrolled row it multiplied the code). */
__device__ __noinline__ static int tsr__rg_border_row(int y, int h, int border)
{
    return tsr__cu_border_index(y, h, border);
}

/* Add the 16 bytes of w to the packed column-sum pairs c. */
__device__ __forceinline__ void tsr__rg_acc(unsigned c[8], uint4 w)
{
    const unsigned v[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
    for (int k = 0; k < 4; k++) {
        c[2 * k] += __byte_perm(v[k], 0, 0x4140);
        c[2 * k + 1] += __byte_perm(v[k], 0, 0x4342);
    }
}

/* Slide the column sums from the window ending at row 'in' - 1 to the one ending at 'in':
 * both rows' bytes enter one 3-input add per pair (the difference never goes negative, so no
 * borrow crosses the halves). */
__device__ __forceinline__ void tsr__rg_slide(unsigned c[8], uint4 in, uint4 out)
{
    const unsigned vi[4] = {in.x, in.y, in.z, in.w}, vo[4] = {out.x, out.y, out.z, out.w};
#pragma unroll
    for (int k = 0; k < 4; k++) {
        c[2 * k] = c[2 * k] + __byte_perm(vi[k], 0, 0x4140) - __byte_perm(vo[k], 0, 0x4140);
        c[2 * k + 1] = c[2 * k + 1] + __byte_perm(vi[k], 0, 0x4342) - __byte_perm(vo[k], 0, 0x4342);
    }
}

#ifndef TSR_PACK_SIGN
#define TSR_PACK_SIGN 1   /* measurement knob: 0 spreads the outcome bits by shift, mask and multiply */
#endif
/* prmt.b32 with selectors whose nibbles may set their top bit, which fills the result byte with
 * bit 7 of the selected byte (PTX's default mode; __byte_perm documents only the low 3 bits). */
__device__ __forceinline__ unsigned tsr__prmt_sign(unsigned a, unsigned b, unsigned sel)
{
    unsigned r;
    asm("prmt.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(sel));
    return r;
}

/* a b + c modulo 2^32, and the top word of the 64-bit a b + c, as written: in plain C the compiler
 * regroups s M + half M into (s + half) M with a 64-bit add and carries, or the shifted sum into
 * a funnel shift and masks on the integer ALU pipe, which these multiply-adds are meant to spare. */
__device__ __forceinline__ unsigned tsr__mad_lo(unsigned a, unsigned b, unsigned c)
{
    unsigned r;
    asm("mad.lo.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    return r;
}
__device__ __forceinline__ unsigned tsr__mad_wide_hi(unsigned a, unsigned b, unsigned long long c)
{
    return (unsigned)(((unsigned long long)a * b + c) >> 32);
}

/* The 16 output bytes of a lane from its 16 means m (8-bit gray box/reg and box/wide): the means
 * themselves, or for threshold OpenCV's test of the source bytes sv against them; packed for one
 * 16-byte store. Box means: each m[j] is below 2^16, so m[2i] + (m[2i + 1] << 16) is one multiply-
 * add with no carry between the halves, and one byte permute takes the two means of each half
 * (TSR_RG_PACK_IMAD); three byte permutes per 4 bytes otherwise. The permutes run on the integer
 * ALU pipe, which box/ring's rows keep busiest (16 lanes a sub-partition: 2 cycles a warp
 * instruction), the multiply-adds on the FMA pipe beside it. */
#ifndef TSR_RG_PACK_IMAD
#define TSR_RG_PACK_IMAD 1   /* measurement knob: 0 three permutes; 1 multiply-adds where MB = 1; 2 for every MB */
#endif
template <int THRESH, int MB = 0>   /* MB: the byte of m[j] that holds the mean (0 or 1, the rest below 2^(8 MB + 8)) */
__device__ __forceinline__ uint4 tsr__rg_pack16(const tsr__box_args &a, unsigned m[16], uint4 sv)
{
    unsigned o[4];
    if constexpr (THRESH) {
        /* In 16-bit halves, two pixels per add: pass <=> s - m > -idelta <=> s - m + 0x200 >= T,
         * T = 0x201 - idelta clamped to [0, 0x300] (s - m + 0x200 lies in [0x101, 0x2ff], so
         * the clamp keeps "always" and "never"); then s - m + 0x8200 - T has bit 15 set exactly
         * when the pixel passes, and stays within [0, 0xffff], so no borrow crosses halves.
         * Inverse: m - s + 0x7dff + T, bit 15 set exactly when it fails. Bytes 1 and 3 of each
         * half pair carry those bits as their bit 7, which one byte permute with sign-filling
         * selectors spreads over their bytes (0xff or 0); masked by maxval, they are the output. */
        const int T = min(max(0x201 - a.idelta, 0), 0x300);
        const unsigned sw[4] = {sv.x, sv.y, sv.z, sv.w};
        const unsigned c = (unsigned)(a.inverse ? 0x7dff + T : 0x8200 - T) * 0x10001u;
        const unsigned mv = (unsigned)a.maxval * 0x01010101u;
#pragma unroll
        for (int q = 0; q < 4; q++) {
            const unsigned s0 = __byte_perm(sw[q], 0, 0x4140), s1 = __byte_perm(sw[q], 0, 0x4342);
            const unsigned sel = MB ? 0x6521 : 0x5410;
            const unsigned m0 = __byte_perm(m[4 * q], m[4 * q + 1], sel), m1 = __byte_perm(m[4 * q + 2], m[4 * q + 3], sel);
            const unsigned x0 = a.inverse ? m0 - s0 + c : s0 - m0 + c, x1 = a.inverse ? m1 - s1 + c : s1 - m1 + c;
            o[q] = TSR_PACK_SIGN ? tsr__prmt_sign(x0, x1, 0xfdb9) & mv
                                 : ((__byte_perm(x0, x1, 0x7531) >> 7) & 0x01010101u) * (unsigned)a.maxval;
        }
        return make_uint4(o[0], o[1], o[2], o[3]);
    } else {
#pragma unroll
        for (int q = 0; q < 4; q++)
            o[q] = TSR_RG_PACK_IMAD > 1 - MB
                       ? __byte_perm(tsr__mad_lo(m[4 * q + 1], 65536u, m[4 * q]), tsr__mad_lo(m[4 * q + 3], 65536u, m[4 * q + 2]),
                                     MB ? 0x7531 : 0x6420)
                       : __byte_perm(__byte_perm(m[4 * q], m[4 * q + 1], MB ? 0x0051 : 0x0040),
                                     __byte_perm(m[4 * q + 2], m[4 * q + 3], MB ? 0x0051 : 0x0040), 0x5410);
        return make_uint4(o[0], o[1], o[2], o[3]);
    }
}

/* Word q (bytes 4q..4q+3) of a lane's partial last group at column xc of row 'row' (NULL: the
 * constant's row): bytes at or past the width w are zero. Scalar words, so nothing goes to
 * local memory. */
__device__ __noinline__ static unsigned tsr__wd_partial_word(const uint8_t *row, int xc, int w, int value, int q)
{
    unsigned v = 0;
    for (int k = 0; k < 4; k++) {
        const int j = 4 * q + k;
        if (xc + j < w) v |= (unsigned)(row ? __ldg(row + j) : (uint8_t)value) << (8 * k);
    }
    return v;
}

/* This lane's 16 bytes of image row y at column xc (rows outside the image mapped through the
 * border, constant rows splatted). Interior segments (EDGE 0): one 16-byte load. Edge segments:
 * by 'inside', 0 no column in the image (zeros), 1 all 16 (one load), 2 the partial last group
 * of a row whose width is not a multiple of 16 (bytes at or past w are zero). */
template <int EDGE>
__device__ __forceinline__ uint4 tsr__wd_load(const tsr__box_args &a, int y, int xc, int inside)
{
    int yy = (unsigned)y < (unsigned)a.h ? y : tsr__rg_border_row(y, a.h, a.border);
    if (EDGE && inside == 0) return make_uint4(0, 0, 0, 0);
    if (!EDGE || inside == 1) {
        if (yy < 0) {
            unsigned splat = (unsigned)a.value * 0x01010101u;
            return make_uint4(splat, splat, splat, splat);
        }
        return __ldg((const uint4 *)(tsr__cu_row<uint8_t>(a.src, a.sstride, yy) + xc));
    }
    const uint8_t *row = yy < 0 ? NULL : tsr__cu_row<uint8_t>(a.src, a.sstride, yy) + xc;
    return make_uint4(tsr__wd_partial_word(row, xc, a.w, a.value, 0), tsr__wd_partial_word(row, xc, a.w, a.value, 1),
                      tsr__wd_partial_word(row, xc, a.w, a.value, 2), tsr__wd_partial_word(row, xc, a.w, a.value, 3));
}

/* Column c (within rx of the image, rx < w) mapped into the image through a reflecting or
 * replicating border. */
__device__ __forceinline__ int tsr__wd_map(int c, int w, int border)
{
    if (border == TSR_BORDER_REPLICATE) return c < 0 ? 0 : w - 1;
    const int d = border == TSR_BORDER_REFLECT101;
    return c < 0 ? -c - 1 + d : 2 * w - 1 - d - c;
}

/* Store the first n (< 16) of the 16 bytes o0..o3 at d: the image's partial last group. Out of
 * line with the words by value, so the full-group path keeps them in registers. */
__device__ __noinline__ static void tsr__wd_partial_store(uint8_t *d, int n, unsigned o0, unsigned o1, unsigned o2,
                                                          unsigned o3)
{
    for (int j = 0; j < n; j++) {
        const unsigned wq = j < 4 ? o0 : j < 8 ? o1 : j < 12 ? o2 : o3;
        d[j] = (uint8_t)(wq >> (8 * (j & 3)));
    }
}

/* M = ceil(2^k / area) when floor(t / area) == floor(t * M / 2^k) for every t <= 255 * area +
 * half, proven by (M * area - 2^k) * tmax < 2^k, and M fits 32 bits; 0 otherwise. */
static inline int tsr__box_magic_at(unsigned long long area, unsigned long long half, int k, unsigned *magic)
{
    const unsigned long long tmax = 255 * area + half, two_k = 1ull << k, M = (two_k + area - 1) / area;
    if (M > 0xffffffffull || (M * area - two_k) * tmax >= two_k) return 0;
    *magic = (unsigned)M;
    return 1;
}

/* The exact multiply-high division of the 8-bit window mean: floor((s + half) / area) ==
 * umulhi(s + half, *magic) >> *shift for every window sum s <= 255 * area (k = 32 + shift, the
 * smallest that works). 0 when no 32-bit magic number works. */
static inline int tsr__box_magic(unsigned long long area, unsigned long long half, unsigned *magic, int *shift)
{
    for (int s = 0; s < 32; s++)
        if (tsr__box_magic_at(area, half, 32 + s, magic)) {
            *shift = s;
            return 1;
        }
    return 0;
}

/* The same division with the mean in byte 1 of the multiply-high: floor((s + half) / area) ==
 * umulhi(s + half, *magic) >> 8 (k = 40), so a byte permute that packs the output takes it
 * without a shift instruction (the result stays below 2^16). 0 when no 32-bit magic works (area
 * 256 or less: use tsr__box_magic's shift 0). */
static inline int tsr__box_magic_byte1(unsigned long long area, unsigned long long half, unsigned *magic)
{
    return tsr__box_magic_at(area, half, 40, magic);
}

/* box/wide and threshold/wide (box_wide.cu), registered in box.cu's tables. */
extern "C" int tsr__box_wide_supports(const tsr_image *src, const void *params);
extern "C" tsr_status tsr__box_wide(const tsr_image *src, tsr_image *dst, const void *params, const tsr_exec *ex);
extern "C" int tsr__threshold_wide_supports(const tsr_image *src, const void *params);
extern "C" tsr_status tsr__threshold_wide(const tsr_image *src, tsr_image *dst, const void *params, const tsr_exec *ex);
/* box/sweep and threshold/sweep (box_sweep.cu), registered in box.cu's tables. */
extern "C" int tsr__box_sweep_supports(const tsr_image *src, const void *params);
extern "C" tsr_status tsr__box_sweep(const tsr_image *src, tsr_image *dst, const void *params, const tsr_exec *ex);
extern "C" int tsr__threshold_sweep_supports(const tsr_image *src, const void *params);
extern "C" tsr_status tsr__threshold_sweep(const tsr_image *src, tsr_image *dst, const void *params, const tsr_exec *ex);

#endif
