/* box/wide and threshold/wide: 8-bit gray box means (and the adaptive threshold on them) for
 * windows up to 255 columns wide and 257 rows tall, at a cost that does not grow with the radius.
 *
 * Each warp is an independent machine over a 512-column segment and a strip of rows (no block
 * barriers). A lane owns 16 consecutive columns: one 16-byte load per source row entering and
 * leaving the window, the 16 column sums kept as 8 packed 16-bit pairs (2*ry+1 <= 257 rows of
 * bytes stay below 2^16). Per output row the lane writes the exclusive prefix of its 16 column
 * sums (8 dependent adds over the pairs) to the warp's own shared-memory row, while a 5-step warp
 * scan gives each lane's offset; with E[c] the sum of the segment's column sums left of c, the
 * window sum of column i is E[i + rx + 1] - E[i - rx]: two reads whatever the radius, plus the
 * difference of two lanes' offsets (four shuffles per row). The row is laid out 17 words per 16
 * columns, so the 32 lanes' reads of the same j (16 columns apart) fall in 32 different banks;
 * where a lane's 16 reads cross into the next group of 17 depends only on (rx + 1) mod 16, so one
 * switch per row picks a read sequence whose offsets are all constants. Two rows of shared memory
 * alternate, so one __syncwarp per row orders the writes and reads.
 *
 * Lanes 0..lo-1 and 32-lo..31 (lo = ceil(rx / 16)) are the halo: a segment writes the
 * (32 - 2 lo) * 16 columns between them. Columns outside the image are never mapped per pixel:
 * the lanes that hold them load zeros, and once per row the segments that touch the image's edges
 * give those columns the column sums of the columns they mirror (reflect, reflect101, replicate)
 * or the constant's column sum, through shared memory; then every segment runs the same
 * arithmetic. Edge segments' strips are split shorter so they do not finish last. Rows outside
 * the image are mapped through the border when loaded (any ry).
 *
 * The mean is floor((s + half) / area) = umulhi(s + half, magic) where the host found that exact
 * (tsr__box_magic's shift 0: windows up to about 4096 pixels), else byte 1 of umulhi(s + half,
 * ceil(2^40 / area)) (tsr__box_magic_byte1, exact for every window this kernel takes), which the
 * output's byte permutes pick without a shift (16 fewer instructions a lane-row). */
#include "box_common.cuh"
#include <mutex>

#ifndef TSR_WD_BYTE1
#define TSR_WD_BYTE1 1   /* measurement knob: 0 shifts the multiply-high of large windows instead */
#endif

enum {
    TSR_WD_CPT = 16,                        /* columns per lane */
    TSR_WD_SEG = 32 * TSR_WD_CPT,           /* columns per segment (one warp) */
    TSR_WD_GROUP = TSR_WD_CPT + 1,          /* shared words per 16 columns (one pad word) */
    TSR_WD_ROW = 32 * TSR_WD_GROUP + 1,     /* shared words of one row: lane-local prefixes of E[0..512] */
    TSR_WD_WARPS = 4,                       /* warps per block (independent) */
    TSR_WD_MINB = 6,                        /* blocks per SM the registers must allow: 80 registers,
                                               measured best from radius 15 up and equal below */
    TSR_WD_RXMAX = 127,                     /* halo of at most 8 lanes each side */
    TSR_WD_RYMAX = 128                      /* 257 rows of bytes fit 16 bits */
};

/* Geometry and constants of one wide launch (see tsr__box_wide_plan). */
struct tsr__wide_geom {
    int lo;                 /* halo lanes on each side */
    int ow;                 /* output columns per segment */
    int nseg;               /* segments across the image */
    int seg_l, seg_r;       /* interior segments (no column outside the image): [seg_l, seg_r) */
    int strip_h, nstrips;   /* rows per strip and strips of the interior segments */
    int strip_e, nstrips_e; /* the same for the edge segments (shorter strips) */
    long long nwarps_e, nwarps;   /* edge warps come first in the launch, then the interior */
    unsigned half, magic;
    int shift;              /* nonzero: the mean is byte 1 of the multiply-high (shifted by 'shift' with
                               TSR_WD_BYTE1 0) */
    int kp, mp;             /* rx + 1 = 16 kp + mp */
    int km, mm;             /* -rx = 16 km + mm, 0 <= mm < 16 */
    unsigned cv;            /* the column sum of a column outside the image (constant border) */
};

/* The window sums of this lane's 16 columns from the segment row S of lane-local prefixes:
 * E[c] = S[slot(c)] + Off[c >> 4], so sum j = S[slot(16 lane + j + rx + 1)] - S[slot(16 lane + j - rx)]
 * plus the difference of the two lanes' offsets, d<hi side crossed><lo side crossed>.
 * MP = (rx + 1) mod 16 fixes where each side's 16 reads cross into the next 17-word group, so
 * every offset is a constant; bp and bm are the slots of j = 0 on each side. */
template <int MP>
__device__ __forceinline__ void tsr__wd_read(const unsigned *S, int bp, int bm, unsigned d00, unsigned d01,
                                             unsigned d10, unsigned d11, unsigned m[16])
{
    enum { MM = (17 - MP) & 15 };
#pragma unroll
    for (int j = 0; j < 16; j++) {
        const int ch = j + MP >= 16, cl = j + MM >= 16;
        m[j] = S[bp + j + ch] - S[bm + j + cl] + (ch ? (cl ? d11 : d10) : (cl ? d01 : d00));
    }
}

/* Output row y of this lane from its column sums c: the lane-local prefixes into the segment
 * row S (whole warp; the warp scan of the lane totals runs meanwhile and only its result's
 * differences are added at the end), then for output lanes the window sums, means (or
 * threshold outcomes against the source bytes sv) and one 16-byte store (bytes at the image's
 * partial last group). */
template <int THRESH, int EDGE, int SHIFT>
__device__ __forceinline__ void tsr__wd_row(const tsr__box_args &a, const tsr__wide_geom &g, const unsigned c[8],
                                            unsigned *S, int lane, int xs, int out, uint4 sv, int y)
{
    /* local exclusive prefix over pairs first: 8 dependent adds rather than 16 */
    unsigned pre = 0;
#pragma unroll
    for (int k = 0; k < 8; k++) {
        const unsigned lo16 = c[k] & 0xffffu;
        S[TSR_WD_GROUP * lane + 2 * k] = pre;
        S[TSR_WD_GROUP * lane + 2 * k + 1] = pre + lo16;
        pre += lo16 + (c[k] >> 16);
    }
    unsigned incl = pre;
#pragma unroll
    for (int dd = 1; dd < 32; dd *= 2) {
        unsigned t = __shfl_up_sync(0xffffffffu, incl, dd);
        if (lane >= dd) incl += t;
    }
    /* Off[g] = incl of lane g - 1 (0 for g = 0): the four groups this lane's reads touch */
    const int gp = lane + g.kp, gm = lane + g.km;
    const unsigned a0 = __shfl_sync(0xffffffffu, incl, gp - 1), a1 = __shfl_sync(0xffffffffu, incl, gp);
    const unsigned b0 = __shfl_sync(0xffffffffu, incl, gm - 1), b1 = __shfl_sync(0xffffffffu, incl, gm);
    __syncwarp();
    if (!out) return;
    const unsigned A0 = gp > 0 ? a0 : 0u, B0 = gm > 0 ? b0 : 0u;
    /* the rounding offset rides along in the lane-offset differences */
    const unsigned d00 = A0 - B0 + g.half, d01 = A0 - b1 + g.half, d10 = a1 - B0 + g.half, d11 = a1 - b1 + g.half;
    const int bp = TSR_WD_GROUP * gp + g.mp, bm = TSR_WD_GROUP * gm + g.mm;
    unsigned m[16];
    switch (g.mp) {
    case 0: tsr__wd_read<0>(S, bp, bm, d00, d01, d10, d11, m); break;
    case 1: tsr__wd_read<1>(S, bp, bm, d00, d01, d10, d11, m); break;
    case 2: tsr__wd_read<2>(S, bp, bm, d00, d01, d10, d11, m); break;
    case 3: tsr__wd_read<3>(S, bp, bm, d00, d01, d10, d11, m); break;
    case 4: tsr__wd_read<4>(S, bp, bm, d00, d01, d10, d11, m); break;
    case 5: tsr__wd_read<5>(S, bp, bm, d00, d01, d10, d11, m); break;
    case 6: tsr__wd_read<6>(S, bp, bm, d00, d01, d10, d11, m); break;
    case 7: tsr__wd_read<7>(S, bp, bm, d00, d01, d10, d11, m); break;
    case 8: tsr__wd_read<8>(S, bp, bm, d00, d01, d10, d11, m); break;
    case 9: tsr__wd_read<9>(S, bp, bm, d00, d01, d10, d11, m); break;
    case 10: tsr__wd_read<10>(S, bp, bm, d00, d01, d10, d11, m); break;
    case 11: tsr__wd_read<11>(S, bp, bm, d00, d01, d10, d11, m); break;
    case 12: tsr__wd_read<12>(S, bp, bm, d00, d01, d10, d11, m); break;
    case 13: tsr__wd_read<13>(S, bp, bm, d00, d01, d10, d11, m); break;
    case 14: tsr__wd_read<14>(S, bp, bm, d00, d01, d10, d11, m); break;
    default: tsr__wd_read<15>(S, bp, bm, d00, d01, d10, d11, m); break;
    }
    const int xc = xs + TSR_WD_CPT * lane;
#pragma unroll
    for (int j = 0; j < 16; j++) m[j] = SHIFT && !TSR_WD_BYTE1 ? __umulhi(m[j], g.magic) >> g.shift : __umulhi(m[j], g.magic);
    const uint4 o = tsr__rg_pack16<THRESH, SHIFT && TSR_WD_BYTE1 ? 1 : 0>(a, m, sv);
    uint8_t *drow = tsr__cu_row<uint8_t>(a.dst, a.dstride, y) + xc;
    if (!EDGE || xc + TSR_WD_CPT <= a.w) {
        *(uint4 *)drow = o;
    } else {
        tsr__wd_partial_store(drow, a.w - xc, o.x, o.y, o.z, o.w);
    }
}

/* Edge segments: give the columns outside the image the column sums of the columns they map to
 * (a constant border's column sum for constant), so the row needs no correction afterwards.
 * Only columns within rx of the image are referenced by any window; the others stay zero. The
 * column sums travel through the row buffer S as packed pairs, which the row's prefixes then
 * overwrite (hence the second __syncwarp). */
struct tsr__wd_sums {
    unsigned c[8];
};
__device__ __noinline__ static tsr__wd_sums tsr__wd_fill_outside(tsr__wd_sums cs, unsigned *S, int lane, int xs, int w,
                                                                 int rx, int border, unsigned cv)
{
    const int xc = xs + TSR_WD_CPT * lane;
#pragma unroll
    for (int k = 0; k < 8; k++) S[8 * lane + k] = cs.c[k];
    __syncwarp();
    if (xc < 0 || xc + TSR_WD_CPT > w) {
#pragma unroll
        for (int k = 0; k < 8; k++) {
            unsigned pair = cs.c[k];
            for (int h = 0; h < 2; h++) {
                const int x = xc + 2 * k + h;
                if ((x < 0 && x >= -rx) || (x >= w && x < w + rx)) {
                    unsigned v = cv;
                    if (border != TSR_BORDER_CONSTANT) {
                        const int i = tsr__wd_map(x, w, border) - xs;
                        v = (S[i >> 1] >> (16 * (i & 1))) & 0xffffu;
                    }
                    pair = h ? (pair & 0xffffu) | (v << 16) : (pair & 0xffff0000u) | v;
                }
            }
            cs.c[k] = pair;
        }
    }
    __syncwarp();
    return cs;
}

/* Rows [y0, y1) of the segment starting at image column xs: the column sums of the first
 * window, then per row the output and the slide by the row entering and the row leaving (both
 * loaded one row ahead). */
template <int THRESH, int EDGE, int SHIFT>
__device__ __forceinline__ void tsr__wd_strip(const tsr__box_args &a, const tsr__wide_geom &g, unsigned *S, int lane,
                                              int xs, int y0, int y1)
{
    const int xc = xs + TSR_WD_CPT * lane;
    /* inside: 0 no column in the image, 1 all 16, 2 the partial last group */
    const int inside = !EDGE || (xc >= 0 && xc + TSR_WD_CPT <= a.w) ? 1 : xc >= 0 && xc < a.w ? 2 : 0;
    const int out = lane >= g.lo && lane < 32 - g.lo && (!EDGE || (xc >= 0 && xc < a.w));
    const int ry = a.ry;
    unsigned c[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    const int inner = !EDGE && y0 - ry >= 0 && y1 + ry + 1 < a.h;   /* no row of the strip needs the border */
    if (inner) {   /* the first window's rows by pointer steps (2ry+1 of them: most of a tall window's cost) */
        const uint8_t *p = tsr__cu_row<uint8_t>(a.src, a.sstride, y0 - ry) + xc;
#pragma unroll 8
        for (int i = -ry; i <= ry; i++, p += a.sstride) tsr__rg_acc(c, __ldg((const uint4 *)p));
    } else {
#pragma unroll 8
        for (int i = -ry; i <= ry; i++) tsr__rg_acc(c, tsr__wd_load<EDGE>(a, y0 + i, xc, inside));
    }
    uint4 ein = tsr__wd_load<EDGE>(a, y0 + ry + 1, xc, inside), eout = tsr__wd_load<EDGE>(a, y0 - ry, xc, inside);
    const uint4 zero = make_uint4(0, 0, 0, 0);
    if (inner) {
        /* every row this strip touches is inside the image: plain pointer steps, no border test */
        /* the rows entering and leaving (one ahead) and the source row, stepped by the stride:
         * offsets from one pointer were recomputed by 64-bit multiplies every row */
        const uint8_t *p = tsr__cu_row<uint8_t>(a.src, a.sstride, y0) + xc;
        const uint8_t *pin = tsr__cu_row<uint8_t>(a.src, a.sstride, y0 + ry + 2) + xc;
        const uint8_t *pout = tsr__cu_row<uint8_t>(a.src, a.sstride, y0 + 1 - ry) + xc;
        const size_t ss = a.sstride;
        for (int y = y0; y < y1; y++, p += ss, pin += ss, pout += ss) {
            const uint4 nin = __ldg((const uint4 *)pin), nout = __ldg((const uint4 *)pout);
            const uint4 sv = THRESH && out ? __ldg((const uint4 *)p) : zero;
            tsr__wd_row<THRESH, EDGE, SHIFT>(a, g, c, S + (y & 1) * TSR_WD_ROW, lane, xs, out, sv, y);
            tsr__rg_slide(c, ein, eout);
            ein = nin;
            eout = nout;
        }
        return;
    }
    for (int y = y0; y < y1; y++) {
        const uint4 nin = tsr__wd_load<EDGE>(a, y + ry + 2, xc, inside);
        const uint4 nout = tsr__wd_load<EDGE>(a, y + 1 - ry, xc, inside);
        const uint4 sv = THRESH && out ? tsr__wd_load<EDGE>(a, y, xc, inside) : zero;
        unsigned *Sy = S + (y & 1) * TSR_WD_ROW;
        if (EDGE) {
            tsr__wd_sums cs;
#pragma unroll
            for (int k = 0; k < 8; k++) cs.c[k] = c[k];
            cs = tsr__wd_fill_outside(cs, Sy, lane, xs, a.w, a.rx, a.border, g.cv);
            tsr__wd_row<THRESH, EDGE, SHIFT>(a, g, cs.c, Sy, lane, xs, out, sv, y);
        } else {
            tsr__wd_row<THRESH, EDGE, SHIFT>(a, g, c, Sy, lane, xs, out, sv, y);
        }
        tsr__rg_slide(c, ein, eout);
        ein = nin;
        eout = nout;
    }
}

/* One warp per (segment, strip): the edge segments' warps first, then the interior ones, whose
 * consecutive warps are neighbouring segments of one strip (their halo rows meet in L2). */
template <int THRESH, int SHIFT>
__global__ void __launch_bounds__(TSR_WD_WARPS * 32, TSR_WD_MINB) tsr__box_wide_kernel(tsr__box_args a, tsr__wide_geom g)
{
    __shared__ unsigned smem[TSR_WD_WARPS][2 * TSR_WD_ROW];
    const int lane = threadIdx.x & 31, wib = threadIdx.x >> 5;
    long long gw = (long long)blockIdx.x * TSR_WD_WARPS + wib;
    if (gw >= g.nwarps) return;   /* the whole warp leaves; nothing waits for other warps */
    unsigned *S = smem[wib];
    if (lane == 0) S[TSR_WD_GROUP * 32] = S[TSR_WD_ROW + TSR_WD_GROUP * 32] = 0;   /* local prefix of E[512] */
    if (gw < g.nwarps_e) {
        const int idx = (int)(gw / g.nstrips_e), strip = (int)(gw % g.nstrips_e);
        const int seg = idx < g.seg_l ? idx : g.seg_r + (idx - g.seg_l);
        const int y0 = strip * g.strip_e;
        tsr__wd_strip<THRESH, 1, SHIFT>(a, g, S, lane, seg * g.ow - TSR_WD_CPT * g.lo, y0, min(a.h, y0 + g.strip_e));
    } else {
        gw -= g.nwarps_e;
        const int nint = g.seg_r - g.seg_l;
        const int seg = g.seg_l + (int)(gw % nint), strip = (int)(gw / nint);
        const int y0 = strip * g.strip_h;
        tsr__wd_strip<THRESH, 0, SHIFT>(a, g, S, lane, seg * g.ow - TSR_WD_CPT * g.lo, y0, min(a.h, y0 + g.strip_h));
    }
}

/* Plan a wide launch; 0 when this variant does not take the arguments (not 8-bit gray, rx above
 * 127 or at least the width, ry above 128, a constant above 255, rows not 16-byte aligned, no
 * exact multiply-high). With g NULL only answers that. TSR_CUDA_WIDE_STRIP and
 * TSR_CUDA_WIDE_SPLIT override the rows per interior strip and the edge strips' split. */
static int tsr__box_wide_plan(const tsr__box_args &a, int depth, const tsr_image *src, const tsr_image *dst,
                              tsr__wide_geom *g)
{
    if (depth != TSR_U8 || a.cn != 1 || a.rx > TSR_WD_RXMAX || a.ry > TSR_WD_RYMAX || a.value > 255) return 0;
    if (a.rx >= a.w) return 0;   /* one reflection covers every window (see tsr__wd_outside) */
    if (!tsr__cu_aligned(src->data, src->stride, 16) || !tsr__cu_aligned(dst->data, dst->stride, 16)) return 0;
    unsigned magic;
    int shift;
    if (!tsr__box_magic(a.mean.area, a.mean.half, &magic, &shift)) return 0;
    if (shift && TSR_WD_BYTE1 && !tsr__box_magic_byte1(a.mean.area, a.mean.half, &magic)) return 0;
    if (!g) return 1;
    g->lo = (a.rx + 15) >> 4;
    g->ow = (32 - 2 * g->lo) * TSR_WD_CPT;
    g->nseg = (int)(((long long)a.w + g->ow - 1) / g->ow);
    g->seg_l = g->lo > 0 ? 1 : 0;
    /* first segment whose 512 columns pass the right edge */
    long long rnum = (long long)a.w - TSR_WD_SEG + TSR_WD_CPT * g->lo;
    long long sr = rnum < 0 ? 0 : rnum / g->ow + 1;
    if (sr < g->seg_l) sr = g->seg_l;
    if (sr > g->nseg) sr = g->nseg;
    g->seg_r = (int)sr;
    if (g->seg_l > g->nseg) g->seg_l = g->nseg;
    /* Strips (tessera-bench-cuda --wide, H100, seventh session): on images too small for
     * about 1.5 waves of resident warps (20 per SM) at 16-row strips, such as 3840x2160, 8-row
     * strips (16 from ry = 64) measured 1.2-1.3x faster than 16 at every radius from 3 to 64,
     * despite each strip first summing 2ry+1 rows; on larger ones (8192x8192) 32 rows for
     * ry < 4, 12 up to ry = 15 (ninth session's sweep: box r = 5 / 7 85.8 / 93.1 us against
     * 88.6 / 97.2 at 32, threshold blocks 11 / 15 / 31 93.1 / 102.6 / 112.4 against 96.2 / 103.9
     * / 115.6), 16 up to ry = 23, 24 up to ry = 64 (eighth session's sweep: box r = 31 / 64 132.2
     * / 170.6 us against 137.5 at 16 and 179.7 at 32; threshold block 129 177.0 against 187.6),
     * ry/2 rows for taller windows (radius 100: 222 us against 242 at 32). */
    long long nint = g->seg_r - g->seg_l, nedge = g->nseg - nint;
    long long sh;
    if (tsr__cu_short_of_warps(a.h, nint > 0 ? nint : 1)) {
        sh = a.ry / 4;
        if (sh < 8) sh = 8;
        if (sh > 16) sh = 16;
    } else {
        sh = (long long)a.h * nint / ((long long)tsr__cu_sm_count() * 30);   /* 1.5 waves, >= 16 */
        if (sh > 32) sh = 32;
        if (a.ry >= 4) sh = a.ry < 16 ? 12 : a.ry < 24 ? 16 : a.ry <= 64 ? 24 : a.ry / 2;
    }
    sh = tsr__env_int("TSR_CUDA_WIDE_STRIP", (int)sh);
    if (sh < 1) sh = 1;
    if (sh > a.h) sh = a.h;
    long long split = tsr__env_int("TSR_CUDA_WIDE_SPLIT", 2);
    if (split < 1) split = 1;
    long long se = (sh + split - 1) / split;
    g->strip_h = (int)sh;
    g->nstrips = (int)((a.h + sh - 1) / sh);
    g->strip_e = (int)se;
    g->nstrips_e = (int)((a.h + se - 1) / se);
    g->nwarps_e = nedge * g->nstrips_e;
    g->nwarps = g->nwarps_e + nint * g->nstrips;
    g->half = (unsigned)a.mean.half;
    g->magic = magic;
    g->shift = shift;
    g->kp = (a.rx + 1) >> 4;
    g->mp = (a.rx + 1) & 15;
    g->km = -((a.rx + 15) >> 4);
    g->mm = (16 - (a.rx & 15)) & 15;
    g->cv = (unsigned)(2 * a.ry + 1) * (unsigned)a.value;
    return 1;
}

/* Queue the wide kernel for box or threshold arguments (the plan checked by supports()). */
static tsr_status tsr__box_wide_run(const tsr__box_args &a, const tsr_image *src, const tsr_image *dst,
                                    cudaStream_t st, const char *what)
{
    tsr__wide_geom g;
    if (!tsr__box_wide_plan(a, src->depth, src, dst, &g) && tsr__box_wide_plan(a, src->depth, src, src, NULL))
        return tsr__box_unaligned_dst(a, src, dst, st, what);   /* only the destination's rows */
    if (!tsr__box_wide_plan(a, src->depth, src, dst, &g))
        return tsr__fail(TSR_E_UNSUPPORTED, "%s: only 8-bit one-channel images with 16-byte aligned rows, rx up to %d "
                         "(below the width) and ry up to %d", what, TSR_WD_RXMAX, TSR_WD_RYMAX);
    if (g.nwarps == 0) return TSR_OK;
    unsigned blocks = (unsigned)((g.nwarps + TSR_WD_WARPS - 1) / TSR_WD_WARPS);
    if (a.thresh && g.shift) tsr__box_wide_kernel<1, 1><<<blocks, TSR_WD_WARPS * 32, 0, st>>>(a, g);
    else if (a.thresh) tsr__box_wide_kernel<1, 0><<<blocks, TSR_WD_WARPS * 32, 0, st>>>(a, g);
    else if (g.shift) tsr__box_wide_kernel<0, 1><<<blocks, TSR_WD_WARPS * 32, 0, st>>>(a, g);
    else tsr__box_wide_kernel<0, 0><<<blocks, TSR_WD_WARPS * 32, 0, st>>>(a, g);
    return TSR_CUDA_LAUNCHED(what);
}

/* ------------------------------------------------------------------------ twopass */

/* box/twopass and threshold/twopass: box/wide's rows without its start-up. A first kernel writes
 * every row's column sums (2 ry + 1 rows of bytes, 16-bit) to a scratch image laid out as a
 * lane's packed pairs, 32 bytes per 16 columns; the second is box/wide's kernel with each lane's
 * 8 pairs loaded from that image instead of slid down a strip, so its strips can be as short as
 * the launch wants (box/wide's strips first sum 2 ry + 1 rows: at 3840x2160 and ry = 64 that is 8
 * rows summed per row written). The column sums are computed by threads of 16 columns (box/wide's
 * vertical step alone, 8 loads in flight) in strips of at least 16 rows. The scratch comes from a memory pool of tessera's
 * that keeps up to TSR_W2_POOL_KEEP bytes between calls (an allocation per call otherwise maps
 * memory each time). */

#define TSR_W2_POOL_KEEP (1ull << 30)

/* The scratch image's row pitch in bytes: 32 per 16 columns (a lane's 8 pairs). */
static inline size_t tsr__w2_vpitch(int w) { return (size_t)((w + 15) / 16) * 32; }

/* The column sums of image rows [16 k, 16 k + 16) of the 16 columns at xc < w, for every whole
 * block k of 16 rows (zero past w), stored like V's rows at B: the column pass's strips start
 * from these instead of summing 2 ry + 1 rows. */
__global__ void __launch_bounds__(256) tsr__box_bsum_kernel(tsr__box_args a, uint4 *B, size_t vs, int ngroups, int nblk)
{
    const long long gid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (gid >= (long long)ngroups * nblk) return;
    const int grp = (int)(gid % ngroups), k = (int)(gid / ngroups);
    const int xc = TSR_WD_CPT * grp, inside = xc + TSR_WD_CPT <= a.w ? 1 : 2;
    unsigned c[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    if (inside == 1) {
        const uint8_t *p = tsr__cu_row<uint8_t>(a.src, a.sstride, 16 * k) + xc;
        uint4 v[16];
#pragma unroll
        for (int i = 0; i < 16; i++) v[i] = __ldg((const uint4 *)(p + i * a.sstride));
#pragma unroll
        for (int i = 0; i < 16; i++) tsr__rg_acc(c, v[i]);
    } else {
        for (int i = 0; i < 16; i++) tsr__rg_acc(c, tsr__wd_load<1>(a, 16 * k + i, xc, 2));
    }
    uint4 *bp = B + (size_t)k * vs + 2 * grp;
    bp[0] = make_uint4(c[0], c[1], c[2], c[3]);
    bp[1] = make_uint4(c[4], c[5], c[6], c[7]);
}

/* Rows [y0, y1) of the column sums of the 16 columns at xc < w (zero past w), each row's 8
 * packed pairs stored as two 16-byte words at vp (a row of V apart): box/wide's vertical step
 * (its loads, row mapping and packed slide), without the rows. */
__global__ void __launch_bounds__(256) tsr__box_vsum_kernel(tsr__box_args a, uint4 *V, const uint4 *B, size_t vs,
                                                          int ngroups, int sh, int nstrips)
{
    const long long gid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (gid >= (long long)ngroups * nstrips) return;
    const int grp = (int)(gid % ngroups), st = (int)(gid / ngroups);
    const int xc = TSR_WD_CPT * grp, ry = a.ry;
    const int y0 = st * sh, y1 = min(a.h, y0 + sh);
    const int inside = xc + TSR_WD_CPT <= a.w ? 1 : 2;
    uint4 *vp = V + (size_t)y0 * vs + 2 * grp;
    unsigned c[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    const size_t ss = a.sstride;
    if (inside == 1 && y0 - ry >= 0 && y1 + ry < a.h) {   /* every row inside the image: pointer steps */
        /* the first window, rows lo..hi: whole blocks of 16 from B, the rest row by row */
        const int lo = y0 - ry, hi = y0 + ry, kb = (lo + 15) >> 4, ke = (hi + 1) >> 4;
        const uint8_t *p = tsr__cu_row<uint8_t>(a.src, ss, lo) + xc;
        if (B && kb < ke) {
            for (int y = lo; y < 16 * kb; y++, p += ss) tsr__rg_acc(c, __ldg((const uint4 *)p));
            const uint4 *bp = B + (size_t)kb * vs + 2 * grp;
            for (int k = kb; k < ke; k++, bp += vs) {
                const uint4 b0 = __ldg(bp), b1 = __ldg(bp + 1);
                c[0] += b0.x, c[1] += b0.y, c[2] += b0.z, c[3] += b0.w;
                c[4] += b1.x, c[5] += b1.y, c[6] += b1.z, c[7] += b1.w;
            }
            p = tsr__cu_row<uint8_t>(a.src, ss, 16 * ke) + xc;
            for (int y = 16 * ke; y <= hi; y++, p += ss) tsr__rg_acc(c, __ldg((const uint4 *)p));
        } else {
#pragma unroll 8
            for (int i = -ry; i <= ry; i++, p += ss) tsr__rg_acc(c, __ldg((const uint4 *)p));
        }
        const uint8_t *pin = tsr__cu_row<uint8_t>(a.src, ss, y0 + ry + 1) + xc;
        const uint8_t *pout = tsr__cu_row<uint8_t>(a.src, ss, y0 - ry) + xc;
        int y = y0;
        for (; y + 4 <= y1; y += 4, pin += 4 * ss, pout += 4 * ss) {   /* 8 loads in flight */
            uint4 vi[4], vo[4];
#pragma unroll
            for (int k = 0; k < 4; k++) {
                vi[k] = __ldg((const uint4 *)(pin + k * ss));
                vo[k] = __ldg((const uint4 *)(pout + k * ss));
            }
#pragma unroll
            for (int k = 0; k < 4; k++, vp += vs) {
                vp[0] = make_uint4(c[0], c[1], c[2], c[3]);
                vp[1] = make_uint4(c[4], c[5], c[6], c[7]);
                tsr__rg_slide(c, vi[k], vo[k]);
            }
        }
        for (; y < y1; y++, vp += vs, pin += ss, pout += ss) {
            const uint4 vi = __ldg((const uint4 *)pin), vo = __ldg((const uint4 *)pout);
            vp[0] = make_uint4(c[0], c[1], c[2], c[3]);
            vp[1] = make_uint4(c[4], c[5], c[6], c[7]);
            tsr__rg_slide(c, vi, vo);
        }
        return;
    }
#pragma unroll 4
    for (int i = -ry; i <= ry; i++) tsr__rg_acc(c, tsr__wd_load<1>(a, y0 + i, xc, inside));
    for (int y = y0; y < y1; y++, vp += vs) {
        const uint4 vi = tsr__wd_load<1>(a, y + ry + 1, xc, inside), vo = tsr__wd_load<1>(a, y - ry, xc, inside);
        vp[0] = make_uint4(c[0], c[1], c[2], c[3]);
        vp[1] = make_uint4(c[4], c[5], c[6], c[7]);
        tsr__rg_slide(c, vi, vo);
    }
}

/* Rows [y0, y1) of the segment starting at image column xs, each lane's column sums loaded from
 * the scratch image V (one row ahead), then box/wide's row. */
template <int THRESH, int EDGE, int SHIFT>
__device__ __forceinline__ void tsr__w2_strip(const tsr__box_args &a, const tsr__wide_geom &g, unsigned *S, int lane,
                                              int xs, int y0, int y1, const uint8_t *V, size_t vpitch)
{
    const int xc = xs + TSR_WD_CPT * lane;
    const int inside = !EDGE || (xc >= 0 && xc + TSR_WD_CPT <= a.w) ? 1 : xc >= 0 && xc < a.w ? 2 : 0;
    const int out = lane >= g.lo && lane < 32 - g.lo && (!EDGE || (xc >= 0 && xc < a.w));
    const int has = !EDGE || inside != 0;   /* the scratch holds this lane's group */
    const uint4 *vp = (const uint4 *)(V + (size_t)y0 * vpitch + (size_t)(has ? xc : 0) * 2);
    const size_t vs = vpitch / sizeof(uint4);
    const uint4 zero = make_uint4(0, 0, 0, 0);
    uint4 n0 = has ? __ldg(vp) : zero, n1 = has ? __ldg(vp + 1) : zero;
    for (int y = y0; y < y1; y++) {
        tsr__wd_sums cs = {{n0.x, n0.y, n0.z, n0.w, n1.x, n1.y, n1.z, n1.w}};
        vp += vs;
        if (has && y + 1 < y1) {
            n0 = __ldg(vp);
            n1 = __ldg(vp + 1);
        }
        const uint4 sv = THRESH && out ? tsr__wd_load<EDGE>(a, y, xc, inside) : zero;
        unsigned *Sy = S + (y & 1) * TSR_WD_ROW;
        if (EDGE) cs = tsr__wd_fill_outside(cs, Sy, lane, xs, a.w, a.rx, a.border, g.cv);
        tsr__wd_row<THRESH, EDGE, SHIFT>(a, g, cs.c, Sy, lane, xs, out, sv, y);
    }
}

/* box/wide's kernel over the scratch column sums (see tsr__w2_strip). */
template <int THRESH, int SHIFT>
__global__ void __launch_bounds__(TSR_WD_WARPS * 32, TSR_WD_MINB) tsr__box_wide2_kernel(tsr__box_args a, tsr__wide_geom g,
                                                                                      const uint8_t *V, size_t vpitch)
{
    __shared__ unsigned smem[TSR_WD_WARPS][2 * TSR_WD_ROW];
    const int lane = threadIdx.x & 31, wib = threadIdx.x >> 5;
    long long gw = (long long)blockIdx.x * TSR_WD_WARPS + wib;
    if (gw >= g.nwarps) return;
    unsigned *S = smem[wib];
    if (lane == 0) S[TSR_WD_GROUP * 32] = S[TSR_WD_ROW + TSR_WD_GROUP * 32] = 0;
    if (gw < g.nwarps_e) {
        const int idx = (int)(gw / g.nstrips_e), strip = (int)(gw % g.nstrips_e);
        const int seg = idx < g.seg_l ? idx : g.seg_r + (idx - g.seg_l);
        const int y0 = strip * g.strip_e;
        tsr__w2_strip<THRESH, 1, SHIFT>(a, g, S, lane, seg * g.ow - TSR_WD_CPT * g.lo, y0, min(a.h, y0 + g.strip_e), V,
                                        vpitch);
    } else {
        gw -= g.nwarps_e;
        const int nint = g.seg_r - g.seg_l;
        const int seg = g.seg_l + (int)(gw % nint), strip = (int)(gw / nint);
        const int y0 = strip * g.strip_h;
        tsr__w2_strip<THRESH, 0, SHIFT>(a, g, S, lane, seg * g.ow - TSR_WD_CPT * g.lo, y0, min(a.h, y0 + g.strip_h), V,
                                        vpitch);
    }
}

/* tessera's memory pool on the current device (created once per device; it keeps up to
 * TSR_W2_POOL_KEEP bytes between calls). NULL when the device has no memory pools. */
static cudaMemPool_t tsr__w2_pool(void)
{
    static std::mutex mu;
    static cudaMemPool_t pools[64];
    static int made[64];
    int dev = 0, ok = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= 64) return NULL;
    if (cudaDeviceGetAttribute(&ok, cudaDevAttrMemoryPoolsSupported, dev) != cudaSuccess || !ok) return NULL;
    std::lock_guard<std::mutex> lock(mu);
    if (!made[dev]) {
        cudaMemPoolProps props;
        memset(&props, 0, sizeof props);
        props.allocType = cudaMemAllocationTypePinned;
        props.location.type = cudaMemLocationTypeDevice;
        props.location.id = dev;
        cudaMemPool_t p;
        if (cudaMemPoolCreate(&p, &props) != cudaSuccess) return NULL;
        unsigned long long keep = TSR_W2_POOL_KEEP;
        cudaMemPoolSetAttribute(p, cudaMemPoolAttrReleaseThreshold, &keep);
        pools[dev] = p;
        made[dev] = 1;
    }
    return pools[dev];
}

/* Plan a two-pass launch: box/wide's segments (same limits), strips of any height since no
 * strip sums a first window (TSR_CUDA_TWOPASS_STRIP, TSR_CUDA_TWOPASS_VSTRIP override the
 * row pass's and the column pass's). 0 when box/wide would not take the arguments. */
static int tsr__box_twopass_plan(const tsr__box_args &a, int depth, const tsr_image *src, const tsr_image *dst,
                                 tsr__wide_geom *g, int *vstrip)
{
    if (!tsr__box_wide_plan(a, depth, src, dst, g)) return 0;
    if (!g) return 1;
    long long nint = g->seg_r - g->seg_l, nedge = g->nseg - nint;
    long long sh = tsr__cu_short_of_warps(a.h, nint > 0 ? nint : 1) ? 4 : 8;
    sh = tsr__env_int("TSR_CUDA_TWOPASS_STRIP", (int)sh);
    if (sh < 1) sh = 1;
    if (sh > a.h) sh = a.h;
    g->strip_h = (int)sh;
    g->nstrips = (int)((a.h + sh - 1) / sh);
    g->strip_e = (int)sh;
    g->nstrips_e = g->nstrips;
    g->nwarps_e = nedge * g->nstrips_e;
    g->nwarps = g->nwarps_e + nint * g->nstrips;
    /* the column pass: strips of 16 rows (their first windows come mostly from block sums) */
    long long vs = 16;
    *vstrip = tsr__env_int("TSR_CUDA_TWOPASS_VSTRIP", (int)vs);
    if (*vstrip < 1) *vstrip = 1;
    return 1;
}

/* Queue both passes for box or threshold arguments, the scratch allocated and freed on st. */
static tsr_status tsr__box_twopass_run(const tsr__box_args &a, const tsr_image *src, const tsr_image *dst,
                                       cudaStream_t st, const char *what)
{
    tsr__wide_geom g;
    int vstrip = 0;
    if (!tsr__box_twopass_plan(a, src->depth, src, dst, &g, &vstrip) && tsr__box_wide_plan(a, src->depth, src, src, NULL))
        return tsr__box_unaligned_dst(a, src, dst, st, what);
    if (!tsr__box_twopass_plan(a, src->depth, src, dst, &g, &vstrip))
        return tsr__fail(TSR_E_UNSUPPORTED, "%s: only 8-bit one-channel images with 16-byte aligned rows, rx up to %d "
                         "(below the width) and ry up to %d", what, TSR_WD_RXMAX, TSR_WD_RYMAX);
    if (g.nwarps == 0) return TSR_OK;
    /* V, then the block sums (when the windows span whole blocks of 16 rows: 2 ry + 1 >= 31) */
    const int nblk = 2 * a.ry + 1 >= 31 && !tsr__env_int("TSR_CUDA_TWOPASS_NOBLOCKS", 0) ? a.h / 16 : 0;
    const size_t vpitch = tsr__w2_vpitch(a.w), bytes = vpitch * ((size_t)a.h + (size_t)nblk);
    void *V = NULL;
    cudaMemPool_t pool = tsr__w2_pool();
    cudaError_t e = pool ? cudaMallocFromPoolAsync(&V, bytes, pool, st) : cudaMalloc(&V, bytes);
    if (e != cudaSuccess) return tsr__cuda_status(e, "box/twopass scratch");
    const int ngroups = (int)(vpitch / 32), nstrips = (a.h + vstrip - 1) / vstrip;
    const long long threads = (long long)ngroups * nstrips;
    const int passes = tsr__env_int("TSR_CUDA_TWOPASS_PASSES", 3);   /* measurement knob: 1 or 2 times one pass */
    tsr_status s = TSR_OK;
    uint4 *B = nblk ? (uint4 *)V + (size_t)a.h * (vpitch / 16) : NULL;
    if ((passes & 1) && nblk) {
        const long long bt = (long long)ngroups * nblk;
        tsr__box_bsum_kernel<<<(unsigned)((bt + 255) / 256), 256, 0, st>>>(a, B, vpitch / 16, ngroups, nblk);
        s = TSR_CUDA_LAUNCHED(what);
    }
    if (!s && (passes & 1)) {
        tsr__box_vsum_kernel<<<(unsigned)((threads + 255) / 256), 256, 0, st>>>(a, (uint4 *)V, B, vpitch / 16, ngroups,
                                                                              vstrip, nstrips);
        s = TSR_CUDA_LAUNCHED(what);
    }
    if (!s && (passes & 2)) {
        unsigned blocks = (unsigned)((g.nwarps + TSR_WD_WARPS - 1) / TSR_WD_WARPS);
        const uint8_t *Vc = (const uint8_t *)V;
        if (a.thresh && g.shift) tsr__box_wide2_kernel<1, 1><<<blocks, TSR_WD_WARPS * 32, 0, st>>>(a, g, Vc, vpitch);
        else if (a.thresh) tsr__box_wide2_kernel<1, 0><<<blocks, TSR_WD_WARPS * 32, 0, st>>>(a, g, Vc, vpitch);
        else if (g.shift) tsr__box_wide2_kernel<0, 1><<<blocks, TSR_WD_WARPS * 32, 0, st>>>(a, g, Vc, vpitch);
        else tsr__box_wide2_kernel<0, 0><<<blocks, TSR_WD_WARPS * 32, 0, st>>>(a, g, Vc, vpitch);
        s = TSR_CUDA_LAUNCHED(what);
    }
    /* freed in stream order: the memory returns to the pool once the kernels are done with it */
    cudaError_t f = pool ? cudaFreeAsync(V, st) : (cudaStreamSynchronize(st), cudaFree(V));
    if (!s && f != cudaSuccess) s = tsr__cuda_status(f, "box/twopass scratch");
    return s;
}

/* Whether twopass should be the default: on images whose column sums stay in the L2 cache
 * (at most TSR_CUDA_TWOPASS_MPIX Mpixels, default 12) for windows at least
 * TSR_CUDA_TWOPASS_RYMIN rows tall (default 24), where box/wide's strips
 * spend most of their rows on their first windows (docs/perf-notes.md). */
static int tsr__twopass_prefer(const tsr__box_args &a)
{
    const long long mpix = (long long)tsr__env_int("TSR_CUDA_TWOPASS_MPIX", 12) << 20;
    return (long long)a.w * a.h <= mpix && a.ry >= tsr__env_int("TSR_CUDA_TWOPASS_RYMIN", 24);
}

extern "C" int tsr__box_twopass_prefer(const tsr_image *src, const void *params)
{
    tsr_image dummy = *src;
    return tsr__twopass_prefer(tsr__box_args_box(src, &dummy, (const tsr_box_params *)params));
}

extern "C" int tsr__threshold_twopass_prefer(const tsr_image *src, const void *params)
{
    tsr_image dummy = *src;
    return tsr__twopass_prefer(tsr__box_args_threshold(src, &dummy, (const tsr_threshold_params *)params));
}

extern "C" int tsr__box_twopass_supports(const tsr_image *src, const void *params)
{
    tsr_image dummy = *src;
    return tsr__box_twopass_plan(tsr__box_args_box(src, &dummy, (const tsr_box_params *)params), src->depth, src,
                                 &dummy, NULL, NULL);
}

/* box/twopass: see above tsr__w2_vpitch. */
extern "C" tsr_status tsr__box_twopass(const tsr_image *src, tsr_image *dst, const void *params, const tsr_exec *ex)
{
    tsr__box_args a = tsr__box_args_box(src, dst, (const tsr_box_params *)params);
    return tsr__box_twopass_run(a, src, dst, (cudaStream_t)ex->stream, "box/twopass kernel");
}

extern "C" int tsr__threshold_twopass_supports(const tsr_image *src, const void *params)
{
    tsr_image dummy = *src;
    return tsr__box_twopass_plan(tsr__box_args_threshold(src, &dummy, (const tsr_threshold_params *)params),
                                 src->depth, src, &dummy, NULL, NULL);
}

/* threshold/twopass: box/twopass's means with the comparison as the output step. */
extern "C" tsr_status tsr__threshold_twopass(const tsr_image *src, tsr_image *dst, const void *params,
                                             const tsr_exec *ex)
{
    tsr__box_args a = tsr__box_args_threshold(src, dst, (const tsr_threshold_params *)params);
    return tsr__box_twopass_run(a, src, dst, (cudaStream_t)ex->stream, "threshold/twopass kernel");
}

extern "C" int tsr__box_wide_supports(const tsr_image *src, const void *params)
{
    tsr_image dummy = *src;
    return tsr__box_wide_plan(tsr__box_args_box(src, &dummy, (const tsr_box_params *)params), src->depth, src, &dummy,
                              NULL);
}

/* box/wide: see the comment at the top of this file. */
extern "C" tsr_status tsr__box_wide(const tsr_image *src, tsr_image *dst, const void *params, const tsr_exec *ex)
{
    tsr__box_args a = tsr__box_args_box(src, dst, (const tsr_box_params *)params);
    return tsr__box_wide_run(a, src, dst, (cudaStream_t)ex->stream, "box/wide kernel");
}

extern "C" int tsr__threshold_wide_supports(const tsr_image *src, const void *params)
{
    tsr_image dummy = *src;
    return tsr__box_wide_plan(tsr__box_args_threshold(src, &dummy, (const tsr_threshold_params *)params), src->depth,
                              src, &dummy, NULL);
}

/* threshold/wide: box/wide's means with the comparison as the output step. */
extern "C" tsr_status tsr__threshold_wide(const tsr_image *src, tsr_image *dst, const void *params, const tsr_exec *ex)
{
    tsr__box_args a = tsr__box_args_threshold(src, dst, (const tsr_threshold_params *)params);
    return tsr__box_wide_run(a, src, dst, (cudaStream_t)ex->stream, "threshold/wide kernel");
}
