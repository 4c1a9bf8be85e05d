/* box/sweep and threshold/sweep: 8-bit gray box means (and the adaptive threshold on them) whose
 * horizontal pass is a running sum along each row, for radii up to 94 across and 128 down.
 *
 * Each warp is an independent machine (no block barriers) over a segment of 512 columns and a
 * strip of rows, which it takes in batches of 8 rows and three phases:
 *  A. columns: a lane owns 16 consecutive columns, keeps their column sums as 8 packed 16-bit
 *     pairs (2 ry + 1 <= 257 rows of bytes fit 16 bits), slides them down by one 16-byte load of
 *     the row entering and one of the row leaving, and stores them (two 16-byte shared stores) as
 *     row i of the batch's table of column sums;
 *  B. rows: the table transposed in the lanes' roles: lane (i, k) takes row i of the batch and
 *     chunk k of 4 of the segment's output columns, sums its first window (2 rx + 1 column sums)
 *     and then slides it along the row, one column sum entering and one leaving per output:
 *     two 16-bit shared loads and one add whatever the radius. The means go into an output table;
 *  C. the output table's rows go out as 16-byte stores (threshold: compared with the source's
 *     16 bytes, loaded here where the lanes' loads are coalesced).
 * The next batch's 8 entering rows are loaded after phase A, so they are in flight during B and
 * C; the 8 leaving rows (cache hits mostly) at the start of phase A.
 * The sum slides serially only along a chunk, so a row's work is split four ways, and the table
 * rows are laid out 260 words apart (4 banks) with chunk k starting 2 k columns past a multiple of
 * 64, so the 32 lanes' loads of phase B fall in 32 different banks.
 *
 * A segment writes the 512 - 2 H columns between its halos of H = 16 ceil((rx + 2) / 16) columns.
 * Columns outside the image are loaded as zeros; in segments that touch an edge, once per batch
 * the column sums of the columns within rx of the image are replaced by those of the columns they
 * map to (reflect, reflect101, replicate: always inside the same segment) or the constant's, as
 * box/wide does. Rows outside the image are mapped through the border when loaded (any ry).
 *
 * The mean is umulhi(s + half, magic) >> shift (tsr__box_magic), exact for 8-bit sums. */
#include "box_common.cuh"

enum {
    TSR_SW_R = 8,                  /* rows per batch */
    TSR_SW_CHUNKS = 4,             /* chunks per row in phase B (TSR_SW_R * TSR_SW_CHUNKS = 32 lanes) */
    TSR_SW_COLS = 512,             /* columns per segment */
    TSR_SW_ROWW = 260,             /* words per row of column sums: 520 16-bit slots, 260 = 4 mod 32 */
    TSR_SW_OB = 528,               /* bytes per row of outputs (16-byte aligned rows) */
    TSR_SW_WARP_WORDS = TSR_SW_R * TSR_SW_ROWW + TSR_SW_R * TSR_SW_OB / 4,
    TSR_SW_WARPS = 4,
    TSR_SW_MINB = 3,               /* blocks per SM the registers must allow (up to 168): measured
                                      faster than 4 (128 registers; shared memory allows 4) */
    TSR_SW_RXMAX = 94,             /* H <= 96: at least 320 output columns per segment */
    TSR_SW_RYMAX = 128
};

/* Geometry and constants of one sweep launch (see tsr__box_sweep_plan). */
struct tsr__sweep_geom {
    int H, tw;                  /* halo columns each side; output columns per segment */
    int cstart[TSR_SW_CHUNKS + 1];   /* phase B's chunks: output columns [cstart[k], cstart[k + 1]) (4 chunks) */
    int nseg, seg_l, seg_r;     /* segments; interior ones (no column outside the image): [seg_l, seg_r) */
    int strip_h, nstrips;       /* rows per strip (a multiple of TSR_SW_R), strips */
    long long nwarps_e, nwarps; /* edge warps first in the launch, then the interior */
    unsigned half, magic;
    int shift;
    unsigned cv;                /* the column sum of a column outside the image (constant border) */
};

/* Edge segments: give the columns outside the image that some window reads (within rx of it)
 * the column sums of the columns they map to, or the constant's, in every row of the batch. */
__device__ __noinline__ static void tsr__sw_fill_outside(unsigned short *S16, int xs, int w, int rx, int border,
                                                         unsigned cv, int lane)
{
    const int l0 = max(xs, -rx), l1 = min(0, xs + TSR_SW_COLS);          /* left: [l0, l1) */
    const int r0 = max(xs, w), r1 = min(w + rx, xs + TSR_SW_COLS);      /* right: [r0, r1) */
    const int nl = max(0, l1 - l0), n = nl + max(0, r1 - r0);
    for (int t = lane; t < n * TSR_SW_R; t += 32) {
        const int i = t / n, j = t - i * n, x = j < nl ? l0 + j : r0 + (j - nl);
        unsigned short *row = S16 + i * (2 * TSR_SW_ROWW);
        row[x - xs] = border == TSR_BORDER_CONSTANT ? (unsigned short)cv : row[tsr__wd_map(x, w, border) - xs];
    }
}

/* A lane's 16 bytes of consecutive image rows from row y on. INNER (the strip's rows and the
 * windows' rows all inside the image, an interior segment): a pointer stepped by the stride, one
 * add per row; otherwise every row mapped through the border as it is loaded. */
template <int EDGE, int INNER>
struct tsr__sw_rows {
    const uint8_t *p;
    int y;
    __device__ __forceinline__ tsr__sw_rows(const tsr__box_args &a, int y0, int xc)
        : p(INNER ? tsr__cu_row<uint8_t>(a.src, a.sstride, y0) + xc : NULL), y(y0) {}
    __device__ __forceinline__ uint4 next(const tsr__box_args &a, int xc, int inside)
    {
        if (INNER) {
            const uint4 v = __ldg((const uint4 *)p);
            p += a.sstride;
            return v;
        }
        return tsr__wd_load<EDGE>(a, y++, xc, inside);
    }
};

/* Rows [y0, y1) of the segment whose outputs start at image column x0 (see the top of the file). */
template <int THRESH, int EDGE, int SHIFT, int INNER>
__device__ __forceinline__ void tsr__sw_strip(const tsr__box_args &a, const tsr__sweep_geom &g, unsigned *S,
                                              unsigned char *O, int lane, int x0, int y0, int y1)
{
    const int xs = x0 - g.H, xc = xs + 16 * lane;
    /* inside: 0 no column in the image, 1 all 16, 2 the partial last group */
    const int inside = !EDGE || (xc >= 0 && xc + 16 <= a.w) ? 1 : xc >= 0 && xc < a.w ? 2 : 0;
    const int ry = a.ry, rx = a.rx;
    unsigned c[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    {
        tsr__sw_rows<EDGE, INNER> first(a, y0 - ry, xc);
#pragma unroll 8
        for (int i = -ry; i <= ry; i++) tsr__rg_acc(c, first.next(a, xc, inside));
    }
    /* the rows entering and leaving the windows of the next batch, loaded a whole batch ahead so
     * that their latency passes during phases B and C */
    tsr__sw_rows<EDGE, INNER> rin(a, y0 + ry + 1, xc), rout(a, y0 - ry, xc);
    uint4 pin[TSR_SW_R];
#pragma unroll
    for (int i = 0; i < TSR_SW_R; i++) pin[i] = rin.next(a, xc, inside);
    const int nvalid = min(g.tw, a.w - x0);
    /* phase B's role: row bi of the batch, chunk bk; selects rather than an indexed load (an
     * index into the parameters would copy them to the stack) */
    const int bi = lane & (TSR_SW_R - 1), bk = lane / TSR_SW_R;
    const int xa = bk == 0 ? 0 : bk == 1 ? g.cstart[1] : bk == 2 ? g.cstart[2] : g.cstart[3];
    const int xb = min(bk == 0 ? g.cstart[1] : bk == 1 ? g.cstart[2] : bk == 2 ? g.cstart[3] : g.tw, nvalid);
    const unsigned short *S16 = (const unsigned short *)S + bi * (2 * TSR_SW_ROWW);
    for (int yb = y0; yb < y1; yb += TSR_SW_R) {
        /* A: the batch's column sums, row by row, then the next batch's loads. The rows leaving
         * (read 2 ry + 1 rows earlier, so mostly cache hits) are loaded here, all 8 at once:
         * kept a batch ahead like the entering rows, their 32 registers cost a block per SM */
        uint4 pout[TSR_SW_R];
#pragma unroll
        for (int i = 0; i < TSR_SW_R; i++) pout[i] = rout.next(a, xc, inside);
#pragma unroll
        for (int i = 0; i < TSR_SW_R; i++) {
            uint4 *srow = (uint4 *)(S + i * TSR_SW_ROWW + 8 * lane);
            srow[0] = make_uint4(c[0], c[1], c[2], c[3]);
            srow[1] = make_uint4(c[4], c[5], c[6], c[7]);
            tsr__rg_slide(c, pin[i], pout[i]);
        }
        if (yb + TSR_SW_R < y1) {
#pragma unroll
            for (int i = 0; i < TSR_SW_R; i++) pin[i] = rin.next(a, xc, inside);
        }
        __syncwarp();
        if (EDGE) {
            tsr__sw_fill_outside((unsigned short *)S, xs, a.w, rx, a.border, g.cv, lane);
            __syncwarp();
        }
        /* B: slide along row bi over chunk bk, 8 outputs per step with their 16 loads first */
        if (yb + bi < y1 && xa < xb) {
            const unsigned short *cin = S16 + xa + g.H + rx + 1, *cout = S16 + xa + g.H - rx;
            unsigned s = g.half;
            for (const unsigned short *p = S16 + xa + g.H - rx; p < cin; p++) s += *p;
            unsigned short *orow = (unsigned short *)(O + bi * TSR_SW_OB + xa);
            const unsigned magic = g.magic;
            const int shift = g.shift;
            int x = xa;
            for (; x + 8 <= xb; x += 8, cin += 8, cout += 8, orow += 4) {
                unsigned vi[8], vo[8], m[8];
#pragma unroll
                for (int j = 0; j < 8; j++) {
                    vi[j] = cin[j];
                    vo[j] = cout[j];
                }
#pragma unroll
                for (int j = 0; j < 8; j++) {
                    m[j] = SHIFT ? __umulhi(s, magic) >> shift : __umulhi(s, magic);
                    s += vi[j] - vo[j];
                }
#pragma unroll
                for (int j = 0; j < 4; j++) orow[j] = (unsigned short)__byte_perm(m[2 * j], m[2 * j + 1], 0x0040);
            }
            /* the chunk's last outputs, two at a time: the next chunk's lane writes past its end */
            for (; x < xb; x += 2, cin += 2, cout += 2) {
                const unsigned m0 = SHIFT ? __umulhi(s, magic) >> shift : __umulhi(s, magic);
                s += (unsigned)cin[0] - (unsigned)cout[0];
                const unsigned m1 = SHIFT ? __umulhi(s, magic) >> shift : __umulhi(s, magic);
                s += (unsigned)cin[1] - (unsigned)cout[1];
                *orow++ = (unsigned short)__byte_perm(m0, m1, 0x0040);
            }
        }
        __syncwarp();
        /* C: the batch's output rows, 16 bytes per lane (threshold: the test against the source) */
        const int xo = 16 * lane;
        if (xo < nvalid) {
            for (int i = 0; i < TSR_SW_R && yb + i < y1; i++) {
                uint4 v = *(const uint4 *)(O + i * TSR_SW_OB + xo);
                if (THRESH) {
                    const uint4 sv = tsr__wd_load<1>(a, yb + i, x0 + xo, xo + 16 <= nvalid ? 1 : 2);
                    unsigned m[16];
                    const unsigned vw[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
                    for (int j = 0; j < 16; j++) m[j] = __byte_perm(vw[j >> 2], 0, 0x4440 + (j & 3));
                    v = tsr__rg_pack16<1>(a, m, sv);
                }
                uint8_t *d = tsr__cu_row<uint8_t>(a.dst, a.dstride, yb + i) + x0 + xo;
                if (xo + 16 <= nvalid) *(uint4 *)d = v;
                else tsr__wd_partial_store(d, nvalid - xo, v.x, v.y, v.z, v.w);
            }
        }
        __syncwarp();
    }
}

/* One warp per (segment, strip): the edge segments' warps first, then the interior ones, whose
 * consecutive warps are neighbouring segments of one strip. */
template <int THRESH, int SHIFT>
__global__ void __launch_bounds__(TSR_SW_WARPS * 32, TSR_SW_MINB) tsr__box_sweep_kernel(tsr__box_args a, tsr__sweep_geom g)
{
    extern __shared__ uint4 tsr__sw_smem[];
    const int lane = threadIdx.x & 31, wib = threadIdx.x >> 5;
    long long gw = (long long)blockIdx.x * TSR_SW_WARPS + wib;
    if (gw >= g.nwarps) return;   /* the whole warp leaves; nothing waits for other warps */
    unsigned *S = (unsigned *)tsr__sw_smem + wib * TSR_SW_WARP_WORDS;
    unsigned char *O = (unsigned char *)(S + TSR_SW_R * TSR_SW_ROWW);
    if (gw < g.nwarps_e) {
        const int idx = (int)(gw / g.nstrips), strip = (int)(gw % g.nstrips);
        const int seg = idx < g.seg_l ? idx : g.seg_r + (idx - g.seg_l);
        const int y0 = strip * g.strip_h;
        tsr__sw_strip<THRESH, 1, SHIFT, 0>(a, g, S, O, lane, seg * g.tw, y0, min(a.h, y0 + g.strip_h));
    } else {
        gw -= g.nwarps_e;
        const int nint = g.seg_r - g.seg_l;
        const int seg = g.seg_l + (int)(gw % nint), strip = (int)(gw / nint);
        const int y0 = strip * g.strip_h, y1 = min(a.h, y0 + g.strip_h);
        /* every row the strip loads (its first window, the batches' rows entering and leaving) in the image */
        if (y0 - a.ry >= 0 && y1 + TSR_SW_R + a.ry < a.h)
            tsr__sw_strip<THRESH, 0, SHIFT, 1>(a, g, S, O, lane, seg * g.tw, y0, y1);
        else
            tsr__sw_strip<THRESH, 0, SHIFT, 0>(a, g, S, O, lane, seg * g.tw, y0, y1);
    }
}

/* Plan a sweep launch; 0 when this variant does not take the arguments (not 8-bit gray, rx above
 * 94 or at least the width, ry above 128, a constant above 255, rows not 16-byte aligned, no
 * exact multiply-high). With g NULL only answers that. TSR_CUDA_SWEEP_STRIP overrides the rows
 * per strip (rounded up to whole batches). */
static int tsr__box_sweep_plan(const tsr__box_args &a, int depth, const tsr_image *src, const tsr_image *dst,
                               tsr__sweep_geom *g)
{
    if (depth != TSR_U8 || a.cn != 1 || a.rx > TSR_SW_RXMAX || a.ry > TSR_SW_RYMAX || a.value > 255) return 0;
    if (a.rx >= a.w) return 0;   /* one reflection maps every column a window reads */
    if (!tsr__cu_aligned(src->data, src->stride, 16) || !tsr__cu_aligned(dst->data, dst->stride, 16)) return 0;
    unsigned magic;
    int shift;
    if (!tsr__box_magic(a.mean.area, a.mean.half, &magic, &shift)) return 0;
    if (!g) return 1;
    g->H = 16 * ((a.rx + 2 + 15) / 16);
    g->tw = TSR_SW_COLS - 2 * g->H;
    /* chunk k starts 2k columns past a multiple of 64 (its loads' bank offset k), near k tw / 4 */
    for (int k = 0; k < TSR_SW_CHUNKS; k++) {
        const int want = k * g->tw / TSR_SW_CHUNKS - 2 * k;
        g->cstart[k] = k == 0 ? 0 : (want + 32) / 64 * 64 + 2 * k;
    }
    g->cstart[TSR_SW_CHUNKS] = g->tw;
    g->nseg = (int)(((long long)a.w + g->tw - 1) / g->tw);
    g->seg_l = g->nseg > 0 ? 1 : 0;   /* segment 0 starts H columns left of the image */
    /* first segment whose 512 columns pass the right edge */
    long long rnum = (long long)a.w - TSR_SW_COLS + g->H;
    long long sr = rnum < 0 ? 0 : rnum / g->tw + 1;
    if (sr < g->seg_l) sr = g->seg_l;
    if (sr > g->nseg) sr = g->nseg;
    g->seg_r = (int)sr;
    long long nint = g->seg_r - g->seg_l, nedge = g->nseg - nint;
    /* Strips (tessera-bench-cuda --sweep, H100, seventh session): images too small for about
     * 1.5 waves of resident warps at 16-row strips (3840x2160) 8 rows below ry = 24 and 16 from
     * there; larger ones (8192x8192) 24 rows below ry = 48 and 48 from there. */
    long long sh = tsr__cu_short_of_warps(a.h, nint > 0 ? nint : 1) ? (a.ry < 24 ? 8 : 16) : (a.ry < 48 ? 24 : 48);
    sh = tsr__env_int("TSR_CUDA_SWEEP_STRIP", (int)sh);
    if (sh < TSR_SW_R) sh = TSR_SW_R;
    if (sh > a.h) sh = a.h;
    sh = (sh + TSR_SW_R - 1) / TSR_SW_R * TSR_SW_R;
    g->strip_h = (int)sh;
    g->nstrips = (int)((a.h + sh - 1) / sh);
    g->nwarps_e = nedge * g->nstrips;
    g->nwarps = g->nwarps_e + nint * g->nstrips;
    g->half = (unsigned)a.mean.half;
    g->magic = magic;
    g->shift = shift;
    g->cv = (unsigned)(2 * a.ry + 1) * (unsigned)a.value;
    return 1;
}

/* Let one kernel instance use 'smem' bytes of dynamic shared memory (above the 48 KB default),
 * once per process; a repeated call by a racing thread sets the same value. */
template <int THRESH, int SHIFT>
static cudaError_t tsr__sw_allow_smem(size_t smem)
{
    static int done = 0;
    if (done) return cudaSuccess;
    cudaError_t e = cudaFuncSetAttribute(tsr__box_sweep_kernel<THRESH, SHIFT>,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e == cudaSuccess) done = 1;
    return e;
}

/* Queue the sweep kernel for box or threshold arguments (the plan checked by supports()). */
static tsr_status tsr__box_sweep_run(const tsr__box_args &a, const tsr_image *src, const tsr_image *dst,
                                     cudaStream_t st, const char *what)
{
    tsr__sweep_geom g;
    if (!tsr__box_sweep_plan(a, src->depth, src, dst, &g) && tsr__box_sweep_plan(a, src->depth, src, src, NULL))
        return tsr__box_unaligned_dst(a, src, dst, st, what);   /* only the destination's rows */
    if (!tsr__box_sweep_plan(a, src->depth, src, dst, &g))
        return tsr__fail(TSR_E_UNSUPPORTED, "%s: only 8-bit one-channel images with 16-byte aligned rows, rx up to %d "
                         "(below the width) and ry up to %d", what, TSR_SW_RXMAX, TSR_SW_RYMAX);
    if (g.nwarps == 0) return TSR_OK;
    const size_t smem = (size_t)TSR_SW_WARPS * TSR_SW_WARP_WORDS * 4;
    const unsigned blocks = (unsigned)((g.nwarps + TSR_SW_WARPS - 1) / TSR_SW_WARPS);
    cudaError_t e;
#define TSR__SW_LAUNCH(T, S)                                                                             \
    do {                                                                                                \
        e = tsr__sw_allow_smem<T, S>(smem);                                                             \
        if (e != cudaSuccess) return tsr__cuda_status(e, what);                                         \
        tsr__box_sweep_kernel<T, S><<<blocks, TSR_SW_WARPS * 32, smem, st>>>(a, g);                     \
    } while (0)
    if (a.thresh && g.shift) TSR__SW_LAUNCH(1, 1);
    else if (a.thresh) TSR__SW_LAUNCH(1, 0);
    else if (g.shift) TSR__SW_LAUNCH(0, 1);
    else TSR__SW_LAUNCH(0, 0);
#undef TSR__SW_LAUNCH
    return TSR_CUDA_LAUNCHED(what);
}

extern "C" int tsr__box_sweep_supports(const tsr_image *src, const void *params)
{
    tsr_image dummy = *src;
    return tsr__box_sweep_plan(tsr__box_args_box(src, &dummy, (const tsr_box_params *)params), src->depth, src, &dummy,
                               NULL);
}

/* box/sweep: see the comment at the top of this file. */
extern "C" tsr_status tsr__box_sweep(const tsr_image *src, tsr_image *dst, const void *params, const tsr_exec *ex)
{
    tsr__box_args a = tsr__box_args_box(src, dst, (const tsr_box_params *)params);
    return tsr__box_sweep_run(a, src, dst, (cudaStream_t)ex->stream, "box/sweep kernel");
}

extern "C" int tsr__threshold_sweep_supports(const tsr_image *src, const void *params)
{
    tsr_image dummy = *src;
    return tsr__box_sweep_plan(tsr__box_args_threshold(src, &dummy, (const tsr_threshold_params *)params), src->depth,
                               src, &dummy, NULL);
}

/* threshold/sweep: box/sweep's means with the comparison in phase B. */
extern "C" tsr_status tsr__threshold_sweep(const tsr_image *src, tsr_image *dst, const void *params,
                                           const tsr_exec *ex)
{
    tsr__box_args a = tsr__box_args_threshold(src, dst, (const tsr_threshold_params *)params);
    return tsr__box_sweep_run(a, src, dst, (cudaStream_t)ex->stream, "threshold/sweep kernel");
}
