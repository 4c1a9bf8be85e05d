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
 * A strip's first window (2 ry + 1 rows summed before its first output row) costs more than the
 * strip itself at large radii, and on images that do not fill the GPU twice over the slowest
 * warp sets the kernel's time. So from ry = 12 the warps are stacked (g.stack): a block's 8 warps
 * take 8 consecutive strips of one segment, the rows their first windows need are cut into chunks
 * of one strip height, each chunk is summed once (by one warp) into shared memory, and each warp
 * adds its window's chunks and at most a strip of rows (tsr__wd_stack_start): about 8 + (2 ry +
 * 1) / strip rows per block instead of 8 (2 ry + 1), and no warp waits on more than a few chunks.
 *
 * The mean is floor((s + half) / area) = umulhi(s + half, magic) where the host found that exact
 * (tsr__box_magic's shift 0: windows up to about 4096 pixels), else byte 1 of umulhi(s + half,
 * ceil(2^40 / area)) (tsr__box_magic_byte1, exact for every window this kernel takes), which the
 * output's byte permutes pick without a shift (16 fewer instructions a lane-row). */
#include "box_common.cuh"

#ifndef TSR_WD_BYTE1
#define TSR_WD_BYTE1 1   /* measurement knob: 0 shifts the multiply-high of large windows instead */
#endif

enum {
    TSR_WD_CPT = 16,                        /* columns per lane */
    TSR_WD_SEG = 32 * TSR_WD_CPT,           /* columns per segment (one warp) */
    TSR_WD_GROUP = TSR_WD_CPT + 1,          /* shared words per 16 columns (one pad word) */
    TSR_WD_ROW = 32 * TSR_WD_GROUP + 1,     /* shared words of one row: lane-local prefixes of E[0..512] */
    TSR_WD_RESIDENT = 24,                   /* warps per SM the registers must allow (in blocks of 4 or 8
                                               warps, g.warps): 80 registers, measured best from radius
                                               15 up and equal below */
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
    int warps;              /* warps per block (4 or 8) */
    int stack;              /* nonzero: the interior warps of a block are consecutive strips of one
                               segment and build their first windows from shared chunk sums */
    int sq, srem, nchunks;  /* stacked: 2 ry + 1 = sq chunks of strip_h rows + srem rows; chunks per block */
    int sq_e, srem_e, nchunks_e;   /* the same for the edge segments' strips (strip_e rows) */
    long long eblocks;      /* stacked: blocks of the edge segments, which come first */
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
template <int THRESH, int EDGE, int SHIFT, int PRE = 0>
__device__ __forceinline__ void tsr__wd_strip(const tsr__box_args &a, const tsr__wide_geom &g, unsigned *S, int lane,
                                              int xs, int y0, int y1, const unsigned *pre = nullptr)
{
    const int xc = xs + TSR_WD_CPT * lane;
    /* inside: 0 no column in the image, 1 all 16, 2 the partial last group */
    const int inside = !EDGE || (xc >= 0 && xc + TSR_WD_CPT <= a.w) ? 1 : xc >= 0 && xc < a.w ? 2 : 0;
    const int out = lane >= g.lo && lane < 32 - g.lo && (!EDGE || (xc >= 0 && xc < a.w));
    const int ry = a.ry;
    unsigned c[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    const int inner = !EDGE && y0 - ry >= 0 && y1 + ry + 1 < a.h;   /* no row of the strip needs the border */
    if (PRE) {   /* the first window came with the call (a stacked block's chunk sums) */
#pragma unroll
        for (int k = 0; k < 8; k++) c[k] = pre[k];
    } else if (inner) {   /* the first window's rows by pointer steps (2ry+1 of them: most of a tall window's cost) */
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

/* Add rows [ya, ya + n) of this lane's 16 columns to t: by pointer steps where every row is
 * inside the image and every column too (rows_inside, !EDGE), else mapped through the border. */
template <int EDGE>
__device__ __forceinline__ void tsr__wd_sum_rows(const tsr__box_args &a, int ya, int n, int xc, int inside,
                                                 bool rows_inside, unsigned t[8])
{
    if (!EDGE && rows_inside) {
        const uint8_t *p = tsr__cu_row<uint8_t>(a.src, a.sstride, ya) + xc;
#pragma unroll 8
        for (int i = 0; i < n; i++, p += a.sstride) tsr__rg_acc(t, __ldg((const uint4 *)p));
    } else {
#pragma unroll 8
        for (int i = 0; i < n; i++) tsr__rg_acc(t, tsr__wd_load<EDGE>(a, ya + i, xc, inside));
    }
}

/* The first windows of a stacked block (warp wib's strip starts at Y0 + wib * strip_h): the rows
 * from Y0 - ry on are cut into chunks of strip_h rows, the warps sum the chunks between them (each
 * chunk once) into shared memory C, and each warp's window is its sq chunks plus the srem rows
 * after them, so a block loads about (warps + sq) strip_h rows for its first windows instead of
 * warps (2 ry + 1), and no warp's start waits for more than a few chunks. Rows outside the image
 * are mapped through the border as the strips map them. Block-wide: every warp reaches both
 * barriers. C aliases the warps' row buffers, which the strips only touch after the second. */
template <int W, int EDGE>
__device__ __forceinline__ void tsr__wd_stack_start(const tsr__box_args &a, int sh, int sq, int srem, int nchunks, uint4 *C,
                                                    int lane, int wib, int xc, int inside, int Y0, bool rows_inside,
                                                    unsigned c[8])
{
    const int ya = Y0 - a.ry;
#pragma unroll
    for (int k = 0; k < 8; k++) c[k] = 0;
    tsr__wd_sum_rows<EDGE>(a, ya + (wib + sq) * sh, srem, xc, inside, rows_inside, c);
    for (int k = wib; k < nchunks; k += W) {
        unsigned t[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        tsr__wd_sum_rows<EDGE>(a, ya + k * sh, sh, xc, inside, rows_inside, t);
        /* lane-consecutive 16-byte words: conflict-free */
        C[64 * k + lane] = make_uint4(t[0], t[1], t[2], t[3]);
        C[64 * k + 32 + lane] = make_uint4(t[4], t[5], t[6], t[7]);
    }
    __syncthreads();
    for (int k = wib; k < wib + sq; k++) {
        const uint4 u = C[64 * k + lane], v = C[64 * k + 32 + lane];
        c[0] += u.x, c[1] += u.y, c[2] += u.z, c[3] += u.w;
        c[4] += v.x, c[5] += v.y, c[6] += v.z, c[7] += v.w;
    }
    __syncthreads();
}

/* A stacked block: warps of one segment (edge or interior, EDGE) on W consecutive strips of sh
 * rows (the edge segments' strip_e, else strip_h) from Y0. */
template <int THRESH, int EDGE, int SHIFT, int W>
__device__ __forceinline__ void tsr__wd_stacked(const tsr__box_args &a, const tsr__wide_geom &g, unsigned (*smem)[2 * TSR_WD_ROW],
                                                int lane, int wib, int xs, int Y0)
{
    unsigned *S = smem[wib];
    const int sh = EDGE ? g.strip_e : g.strip_h, xc = xs + TSR_WD_CPT * lane, y0 = Y0 + wib * sh;
    const int inside = !EDGE || (xc >= 0 && xc + TSR_WD_CPT <= a.w) ? 1 : xc >= 0 && xc < a.w ? 2 : 0;
    const bool rows_inside = Y0 >= a.ry && Y0 + W * sh + a.ry + 1 < a.h;
    unsigned c[8];
    tsr__wd_stack_start<W, EDGE>(a, sh, EDGE ? g.sq_e : g.sq, EDGE ? g.srem_e : g.srem, EDGE ? g.nchunks_e : g.nchunks,
                                 (uint4 *)&smem[0][0], lane, wib, xc, inside, Y0, rows_inside, c);
    if (y0 >= a.h) return;
    if (lane == 0) S[TSR_WD_GROUP * 32] = S[TSR_WD_ROW + TSR_WD_GROUP * 32] = 0;   /* local prefix of E[512] */
    __syncwarp();
    tsr__wd_strip<THRESH, EDGE, SHIFT, 1>(a, g, S, lane, xs, y0, min(a.h, y0 + sh), c);
}

/* One warp per (segment, strip), the edge segments' (shorter strips) first. Unstacked,
 * consecutive interior warps are neighbouring segments of one strip (their halo rows meet in
 * L2). Stacked (g.stack): a block's W warps are W consecutive strips of one segment, consecutive
 * interior blocks neighbouring segments, and the warps share their first windows' rows
 * (tsr__wd_stack_start). */
template <int THRESH, int SHIFT, int W>
__global__ void __launch_bounds__(W * 32, TSR_WD_RESIDENT / W) tsr__box_wide_kernel(tsr__box_args a, tsr__wide_geom g)
{
    __shared__ __align__(16) unsigned smem[W][2 * TSR_WD_ROW];
    const int lane = threadIdx.x & 31, wib = threadIdx.x >> 5;
    if (g.stack) {
        const int ngroups_e = (g.nstrips_e + W - 1) / W, b = (int)blockIdx.x;
        if (b < g.eblocks) {
            const int idx = b / ngroups_e, seg = idx < g.seg_l ? idx : g.seg_r + (idx - g.seg_l);
            tsr__wd_stacked<THRESH, 1, SHIFT, W>(a, g, smem, lane, wib, seg * g.ow - TSR_WD_CPT * g.lo,
                                                 (b % ngroups_e) * W * g.strip_e);
        } else {
            const int bi = b - (int)g.eblocks, nint = g.seg_r - g.seg_l, seg = g.seg_l + bi % nint;
            tsr__wd_stacked<THRESH, 0, SHIFT, W>(a, g, smem, lane, wib, seg * g.ow - TSR_WD_CPT * g.lo,
                                                 bi / nint * W * g.strip_h);
        }
        return;
    }
    unsigned *S = smem[wib];
    long long gw = (long long)blockIdx.x * W + wib;
    if (gw >= g.nwarps) return;   /* the whole warp leaves; nothing waits for other warps */
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
    const int short_of_warps = tsr__cu_short_of_warps(a.h, nint > 0 ? nint : 1);
    long long sh;
    if (short_of_warps) {
        sh = a.ry / 4;
        if (sh < 8) sh = 8;
        if (sh > 16) sh = 16;
    } else {
        sh = (long long)a.h * nint / ((long long)tsr__cu_sm_count() * 30);   /* 1.5 waves, >= 16 */
        if (sh > 32) sh = 32;
        if (a.ry >= 4) sh = a.ry < 16 ? 12 : a.ry < 24 ? 16 : a.ry <= 64 ? 24 : a.ry / 2;
    }
    /* Stacked first windows (tsr__wd_stack_start) from ry = 12, in blocks of 8 warps: the
     * twenty-fifth session's sweep (H200; docs/perf-notes.md) measured them 1.2-1.7x faster than
     * the per-warp ones at 3840x2160 from r = 16 and 1.1-1.4x at 8192x8192 from r = 16, the same at
     * r = 8 and slower at r = 4. Their strips: 8 rows up to ry = 40 on images short of warps and up
     * to ry = 24 on larger ones, then 12, and 16 from ry = 41 on larger ones; taller where the
     * chunks would not fit the row buffers. TSR_CUDA_WIDE_STACK (0 or 1), TSR_CUDA_WIDE_WARPS (4
     * or 8) and TSR_CUDA_WIDE_STRIP override. */
    const int env_strip = tsr__env_int("TSR_CUDA_WIDE_STRIP", 0);
    const int want_stack = tsr__env_int("TSR_CUDA_WIDE_STACK", a.ry >= 12) != 0;
    long long split = tsr__env_int("TSR_CUDA_WIDE_SPLIT", 2);
    if (split < 1) split = 1;
    g->warps = tsr__env_int("TSR_CUDA_WIDE_WARPS", want_stack ? 8 : 4) == 8 ? 8 : 4;
    const int cap = g->warps * 2 * TSR_WD_ROW / 256;   /* chunks the row buffers hold */
    auto stack_fits = [&](long long s) {
        const long long se = (s + split - 1) / split, q = (2 * a.ry + 1) / s, qe = (2 * a.ry + 1) / se;
        return q >= 1 && g->warps + q - 1 <= cap && g->warps + qe - 1 <= cap;
    };
    g->stack = 0;
    if (want_stack) {
        long long s = env_strip > 0 ? env_strip
                      : short_of_warps ? (a.ry <= 40 ? 8 : 12)
                                       : (a.ry <= 24 ? 8 : a.ry <= 40 ? 12 : 16);
        for (;; s += 4) {
            const long long sc = s < a.h ? s : a.h;
            if (stack_fits(sc)) {
                g->stack = 1;
                sh = sc;
                break;
            }
            if (env_strip > 0 || sc == a.h || s >= 64) break;
        }
    }
    if (!g->stack && env_strip > 0) sh = env_strip;
    if (sh < 1) sh = 1;
    if (sh > a.h) sh = a.h;
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
    g->sq = (2 * a.ry + 1) / g->strip_h;
    g->srem = 2 * a.ry + 1 - g->sq * g->strip_h;
    g->nchunks = g->warps + g->sq - 1;
    g->sq_e = (2 * a.ry + 1) / g->strip_e;
    g->srem_e = 2 * a.ry + 1 - g->sq_e * g->strip_e;
    g->nchunks_e = g->warps + g->sq_e - 1;
    g->eblocks = g->stack ? nedge * ((g->nstrips_e + g->warps - 1) / g->warps) : 0;
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
    const long long W = g.warps;
    const long long nb = g.stack ? g.eblocks + (long long)(g.seg_r - g.seg_l) * ((g.nstrips + W - 1) / W)
                                 : (g.nwarps + W - 1) / W;
    if (nb > INT_MAX) return tsr__fail(TSR_E_UNSUPPORTED, "%s: image too large for one launch", what);
    const unsigned blocks = (unsigned)nb, threads = (unsigned)W * 32;
    if (W == 8) {
        if (a.thresh && g.shift) tsr__box_wide_kernel<1, 1, 8><<<blocks, threads, 0, st>>>(a, g);
        else if (a.thresh) tsr__box_wide_kernel<1, 0, 8><<<blocks, threads, 0, st>>>(a, g);
        else if (g.shift) tsr__box_wide_kernel<0, 1, 8><<<blocks, threads, 0, st>>>(a, g);
        else tsr__box_wide_kernel<0, 0, 8><<<blocks, threads, 0, st>>>(a, g);
    } else {
        if (a.thresh && g.shift) tsr__box_wide_kernel<1, 1, 4><<<blocks, threads, 0, st>>>(a, g);
        else if (a.thresh) tsr__box_wide_kernel<1, 0, 4><<<blocks, threads, 0, st>>>(a, g);
        else if (g.shift) tsr__box_wide_kernel<0, 1, 4><<<blocks, threads, 0, st>>>(a, g);
        else tsr__box_wide_kernel<0, 0, 4><<<blocks, threads, 0, st>>>(a, g);
    }
    return TSR_CUDA_LAUNCHED(what);
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
