/* box/span and threshold/span: 8-bit gray box means (and the adaptive threshold on them) for
 * windows 17 to 255 columns wide and up to 257 rows tall, with a per-row cost that does not grow
 * with the horizontal radius.
 *
 * Why: box/wide gives each warp its own 512-column segment, so at rx = 64 a quarter of every
 * warp is halo, and each lane-row spends about 265 instructions on lane-local prefixes, a warp
 * scan and 32 shared reads behind a switch (docs/perf-notes.md). Here a block spans the whole
 * row (or a few wide pieces of it) and the lanes share one shared-memory row per image row:
 *
 * - A lane owns 16 consecutive columns and keeps their column sums as 8 packed 16-bit pairs,
 *   slid by the row entering and the row leaving the window (box/wide's arithmetic).
 * - Per row it writes those 8 words, its total T and two partial prefixes (the sums of its first
 *   ma and mb columns, ma = -rx mod 16, mb = rx + 1 mod 16), all by dp2a (one instruction per
 *   pair), then one __syncthreads (two row buffers alternate).
 * - The window sum of the lane's first column is the lane totals between the window's two end
 *   lanes plus the end lanes' partial prefixes: (2 rx + 1) / 16 + 2 shared reads, no scan.
 * - The other 15 columns slide by one column sum in and one out, each taken from shared memory
 *   and added or subtracted by one dp2a: 16 reads and 30 dp2a whatever the radius.
 *
 * The row is laid out 9 words per lane (8 pairs, then T), so the 32 lanes' reads of one column
 * offset fall in 32 banks; rx mod 16 (RHO) fixes every read's offset from the two end lanes, so
 * it is a template parameter and all offsets are constants. Lanes 0..hl-1 and the last hl of a
 * block (hl = ceil(rx / 16)) are its halo. Columns outside the image are never special-cased in
 * the arithmetic: the lanes that hold them load the bytes of the columns they map to (one byte
 * at a time; only edge lanes), so their column sums are the mirrored ones. Rows outside the image
 * are mapped when loaded. The mean is byte 1 of umulhi(s + half, ceil(2^40 / area)), exact for
 * every window this variant takes (the plan declines where no such number exists). */
#include "box_common.cuh"

enum {
    TSR_SP_CPT = 16,            /* columns per lane */
    TSR_SP_LANE_WORDS = 9,      /* shared words per lane in a row buffer: 8 packed pairs, then T */
    TSR_SP_BUF_WORDS = 11,      /* per lane and row buffer: those 9, T - (first ma), (first mb) */
    TSR_SP_MAXT = 544,          /* threads per block at most: 8192 columns plus up to 8 halo lanes each
                                   side in one block, two row buffers within 48 KiB */
    TSR_SP_RXMIN = 8,           /* below, the window's end lanes could be one lane */
    TSR_SP_RXMAX = 127,
    TSR_SP_RYMAX = 128          /* 257 rows of bytes fit 16 bits */
};

/* Geometry and constants of one span launch (see tsr__box_span_plan). */
struct tsr__span_geom {
    int nt;                 /* threads per block (a multiple of 32) */
    int hl;                 /* halo lanes each side: ceil(rx / 16) */
    int ow;                 /* output columns per block: 16 (nt - 2 hl) */
    int nbx;                /* blocks across the image */
    int strip_h, nstrips;   /* rows per strip, strips down the image */
    int rxhi;               /* rx >> 4 */
    unsigned half, magic;   /* the mean is byte 1 of umulhi(s + half, magic) */
    int nomirror;           /* EXPERIMENT: skip the edge blocks' mirror step (wrong borders; timing only) */
};

/* d = c + a.lo16 * b.byte0 + a.hi16 * b.byte1 (unsigned weights). */
__device__ __forceinline__ unsigned tsr__sp_dp2a(unsigned a, unsigned b, unsigned c)
{
    unsigned d;
    asm("dp2a.lo.u32.u32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
    return d;
}

/* The same with signed weight bytes (0xff subtracts that half). */
__device__ __forceinline__ unsigned tsr__sp_dp2a_s(unsigned a, unsigned b, unsigned c)
{
    unsigned d;
    asm("dp2a.lo.u32.s32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
    return d;
}

/* How a lane loads its 16 columns xc..xc+15 (fixed for the launch), without branches: every lane
 * loads a 16-byte group of the row (lanes wholly outside the image the row's first group), then
 * keeps the bytes in the image and fills the others with the constant (constant border) or zero;
 * for the other borders the edge blocks later give those columns their mirrors' sums. A partial
 * last group's load stays inside its row: rows are 16-byte aligned, so the stride reaches the
 * end of the group. */
struct tsr__sp_lane_load {
    const uint8_t *base;   /* the group's address in row 0 */
    unsigned keep[4], fill[4];
};

__device__ __forceinline__ tsr__sp_lane_load tsr__sp_lane_load_make(const tsr__box_args &a, int xc)
{
    tsr__sp_lane_load L;
    const unsigned splat = a.border == TSR_BORDER_CONSTANT ? (unsigned)a.value * 0x01010101u : 0u;
    const int inside = xc >= 0 && xc < a.w;
    L.base = (const uint8_t *)a.src + (inside ? xc : 0);
#pragma unroll
    for (int q = 0; q < 4; q++) {
        const int n = a.w - xc - 4 * q;   /* bytes of word q in the image */
        unsigned k = !inside || n <= 0 ? 0u : n >= 4 ? 0xffffffffu : (1u << (8 * n)) - 1;
        unsigned f = splat & ~k;
        asm volatile("" : "+r"(k), "+r"(f));   /* computed once, kept in registers */
        L.keep[q] = k;
        L.fill[q] = f;
    }
    return L;
}

/* This lane's 16 bytes of image row y (mapped through the border). */
__device__ __forceinline__ uint4 tsr__sp_load(const tsr__box_args &a, int y, const tsr__sp_lane_load &L)
{
    const int yy = (unsigned)y < (unsigned)a.h ? y : tsr__rg_border_row(y, a.h, a.border);
    if (yy < 0) {
        const unsigned s = (unsigned)a.value * 0x01010101u;
        return make_uint4(s, s, s, s);
    }
    const uint4 v = __ldg((const uint4 *)(L.base + (size_t)yy * a.sstride));
    return make_uint4((v.x & L.keep[0]) | L.fill[0], (v.y & L.keep[1]) | L.fill[1], (v.z & L.keep[2]) | L.fill[2],
                      (v.w & L.keep[3]) | L.fill[3]);
}

/* The sum of the first M (0..16) of the 16 column sums in the pairs c, given the prefix sums
 * P[k] of the first k pairs. */
template <int M>
__device__ __forceinline__ unsigned tsr__sp_partial(const unsigned c[8], const unsigned P[9])
{
    if constexpr ((M & 1) == 0) return P[M >> 1];
    else return tsr__sp_dp2a(c[M >> 1], 0x0001u, P[M >> 1]);
}

/* Write lane t's column sums c to the row buffer B: the 8 pairs, the total T, T less the first
 * MA column sums and the first MB (the partial ends of the windows that start or end in it). */
template <int RHO>
__device__ __forceinline__ void tsr__sp_put(const tsr__span_geom &g, const unsigned c[8], unsigned *B, int t)
{
    enum { MA = (16 - RHO) & 15, MB = (RHO + 1) & 15 };
    unsigned P[9];
    P[0] = 0;
#pragma unroll
    for (int k = 0; k < 8; k++) P[k + 1] = tsr__sp_dp2a(c[k], 0x0101u, P[k]);
    unsigned *V = B, *X = B + TSR_SP_LANE_WORDS * g.nt, *Q = X + g.nt;
#pragma unroll
    for (int k = 0; k < 8; k++) V[TSR_SP_LANE_WORDS * t + k] = c[k];
    V[TSR_SP_LANE_WORDS * t + 8] = P[8];
    X[t] = P[8] - tsr__sp_partial<MA>(c, P);
    Q[t] = tsr__sp_partial<MB>(c, P);
}

/* A lane's 8 pairs of column sums by value (so the out-of-line mirror keeps them in registers). */
struct tsr__sp_sums {
    unsigned c[8];
};

/* Edge blocks, reflecting or replicating borders, after a barrier over the row buffer: lanes
 * holding columns outside the image (within rx of it) give them the column sums of the columns
 * they map to, which lie in this block and inside the image, and write the lane again. c, the
 * running sums of the bytes loaded (zero outside), stays as it is. */
template <int RHO>
__device__ __noinline__ void tsr__sp_mirror(const tsr__box_args &a, const tsr__span_geom &g, tsr__sp_sums cs,
                                            unsigned *B, int t, int xc, int x0)
{
#pragma unroll
    for (int k = 0; k < 8; k++) {
        unsigned pair = cs.c[k];
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int x = xc + 2 * k + h;
            if ((x < 0 && x >= -a.rx) || (x >= a.w && x < a.w + a.rx)) {
                const int i = tsr__wd_map(x, a.w, a.border) - x0;
                const unsigned v = (B[TSR_SP_LANE_WORDS * (i >> 4) + ((i >> 1) & 7)] >> (16 * (i & 1))) & 0xffffu;
                pair = h ? (pair & 0xffffu) | (v << 16) : (pair & 0xffff0000u) | v;
            }
        }
        cs.c[k] = pair;
    }
    tsr__sp_put<RHO>(g, cs.c, B, t);
}

/* Output row y of lane t from its column sums c: the row buffer B written (with the mirrored
 * columns' sums in edge blocks: 'mirror'), the block's barrier, then for output lanes the 16
 * window sums, means (or threshold outcomes against the source bytes sv) and one 16-byte store
 * at drow (n < 16: the image's partial last group). */
template <int THRESH, int RHO>
__device__ __forceinline__ void tsr__sp_row(const tsr__box_args &a, const tsr__span_geom &g, const unsigned c[8],
                                            unsigned *B, int t, int out, uint4 sv, uint8_t *drow, int n, int mirror,
                                            int xc, int x0)
{
    tsr__sp_put<RHO>(g, c, B, t);
    __syncthreads();
    if (mirror) {   /* block-uniform */
        if (xc < 0 || xc + TSR_SP_CPT > a.w) {
            tsr__sp_sums cs;
#pragma unroll
            for (int k = 0; k < 8; k++) cs.c[k] = c[k];
            tsr__sp_mirror<RHO>(a, g, cs, B, t, xc, x0);
        }
        __syncthreads();
    }
    if (!out) return;
    unsigned *V = B, *X = B + TSR_SP_LANE_WORDS * g.nt, *Q = X + g.nt;
    /* window of the first column: [16 t - rx, 16 t + rx] = columns MA.. of lane ta, lanes
     * ta+1..tb-1 whole, the first MB columns of lane tb */
    const int ta = t - g.rxhi - (RHO > 0 ? 1 : 0), tb = t + g.rxhi + ((RHO + 1) >> 4);
    unsigned h = X[ta] + Q[tb] + g.half;
    for (int u = ta + 1; u < tb; u++) h += V[TSR_SP_LANE_WORDS * u + 8];
    /* the rest slide: column 16 t + rx + j enters, 16 t - rx + j - 1 leaves (j = 1..15), as
     * columns RHO + j of lane t + rxhi and 16 - RHO + j - 1 of lane t - rxhi - 1 */
    const int be = TSR_SP_LANE_WORDS * (t + g.rxhi), bl = TSR_SP_LANE_WORDS * (t - g.rxhi - 1);
    /* the 15 differences first (independent), then the window sums by 3-input adds two columns
     * at a time: a dependent chain of 8 adds rather than 30 dp2a */
    unsigned d[16];
#pragma unroll
    for (int j = 1; j < 16; j++) {
        const int ce = RHO + j, cl = 16 - RHO + j - 1;
        const int oe = TSR_SP_LANE_WORDS * (ce >> 4) + ((ce >> 1) & 7), ol = TSR_SP_LANE_WORDS * (cl >> 4) + ((cl >> 1) & 7);
        d[j] = tsr__sp_dp2a_s(V[bl + ol], (cl & 1) ? 0xff00u : 0x00ffu, tsr__sp_dp2a(V[be + oe], (ce & 1) ? 0x0100u : 0x0001u, 0u));
    }
    unsigned m[16];
    m[0] = h;
#pragma unroll
    for (int j = 1; j < 16; j += 2) {
        m[j] = m[j - 1] + d[j];
        if (j + 1 < 16) m[j + 1] = m[j - 1] + d[j] + d[j + 1];
    }
#pragma unroll
    for (int j = 0; j < 16; j++) m[j] = __umulhi(m[j], g.magic);
    const uint4 o = tsr__rg_pack16<THRESH, 1>(a, m, sv);
    if (n >= TSR_SP_CPT) *(uint4 *)drow = o;
    else tsr__wd_partial_store(drow, n, o.x, o.y, o.z, o.w);
}

/* One block per (piece of the row, strip of rows): the first window's column sums, then per
 * row the output and the slide by the entering and leaving rows (loaded one row ahead). */
template <int THRESH, int RHO>
__global__ void __launch_bounds__(TSR_SP_MAXT, 1) tsr__box_span_kernel(tsr__box_args a, tsr__span_geom g)
{
    extern __shared__ unsigned tsr__sp_smem[];
    const int t = threadIdx.x;
    const int bx = (int)(blockIdx.x % (unsigned)g.nbx), strip = (int)(blockIdx.x / (unsigned)g.nbx);
    const int xc = bx * g.ow + TSR_SP_CPT * (t - g.hl);
    const int y0 = strip * g.strip_h, y1 = min(a.h, y0 + g.strip_h);
    const tsr__sp_lane_load L = tsr__sp_lane_load_make(a, xc);
    const int x0 = bx * g.ow - TSR_SP_CPT * g.hl;   /* the block's first column */
    const int mirror = !g.nomirror && a.border != TSR_BORDER_CONSTANT && (x0 < 0 || x0 + TSR_SP_CPT * g.nt > a.w);
    const int out = t >= g.hl && t < g.nt - g.hl && xc < a.w;
    const int n = out ? min(TSR_SP_CPT, a.w - xc) : 0;
    const int ry = a.ry;
    unsigned c[8] = {0, 0, 0, 0, 0, 0, 0, 0};
#pragma unroll 4
    for (int i = -ry; i <= ry; i++) tsr__rg_acc(c, tsr__sp_load(a, y0 + i, L));
    uint4 ein = tsr__sp_load(a, y0 + ry + 1, L), eout = tsr__sp_load(a, y0 - ry, L);
    const uint4 zero = make_uint4(0, 0, 0, 0);
    for (int y = y0; y < y1; y++) {
        const uint4 nin = tsr__sp_load(a, y + ry + 2, L), nout = tsr__sp_load(a, y + 1 - ry, L);
        const uint4 sv = THRESH && out ? tsr__sp_load(a, y, L) : zero;
        uint8_t *drow = out ? tsr__cu_row<uint8_t>(a.dst, a.dstride, y) + xc : NULL;
        tsr__sp_row<THRESH, RHO>(a, g, c, tsr__sp_smem + (y & 1) * TSR_SP_BUF_WORDS * g.nt, t, out, sv, drow, n, mirror,
                                 xc, x0);
        tsr__rg_slide(c, ein, eout);
        ein = nin;
        eout = nout;
    }
}

/* Plan a span launch; 0 when this variant does not take the arguments (not 8-bit gray, rx
 * outside 8..127 or not below the width, ry above 128, a constant above 255, rows not 16-byte aligned, no byte-1
 * multiply-high for the area). With g NULL only answers that. TSR_CUDA_SPAN_LANES caps the
 * threads per block (default and most 544), TSR_CUDA_SPAN_STRIP sets the rows per strip. */
static int tsr__box_span_plan(const tsr__box_args &a, int depth, const tsr_image *src, const tsr_image *dst,
                              tsr__span_geom *g)
{
    if (depth != TSR_U8 || a.cn != 1 || a.rx < TSR_SP_RXMIN || a.rx > TSR_SP_RXMAX || a.ry > TSR_SP_RYMAX ||
        a.value > 255)
        return 0;
    if (a.rx >= a.w) return 0;   /* one reflection covers every window (see tsr__sp_mirror) */
    if (!tsr__cu_aligned(src->data, src->stride, 16) || !tsr__cu_aligned(dst->data, dst->stride, 16)) return 0;
    unsigned magic;
    if (!tsr__box_magic_byte1(a.mean.area, a.mean.half, &magic)) return 0;
    if (!g) return 1;
    const int hl = (a.rx + 15) >> 4;
    int maxt = tsr__env_int("TSR_CUDA_SPAN_LANES", TSR_SP_MAXT);
    if (maxt > TSR_SP_MAXT) maxt = TSR_SP_MAXT;
    maxt &= ~31;
    if (maxt < 32 * ((2 * hl + 32) / 32)) maxt = 32 * ((2 * hl + 32) / 32);   /* at least one output lane */
    /* the fewest lanes in all: pieces of the row as wide as the cap allows, or a few narrower
     * ones where rounding to whole warps wastes less (ties to the narrower blocks) */
    const long long wl = ((long long)a.w + TSR_SP_CPT - 1) / TSR_SP_CPT;   /* lanes of the image */
    long long best = -1, best_nt = 0;
    for (long long nbx = 1; nbx <= wl; nbx++) {
        const long long nt = (((wl + nbx - 1) / nbx + 2 * hl) + 31) / 32 * 32;
        if (nt > maxt) continue;
        const long long ow = TSR_SP_CPT * (nt - 2 * hl), nb = ((long long)a.w + ow - 1) / ow;
        if (best < 0 || nb * nt <= best) best = nb * nt, best_nt = nt;
        if (nt <= 64 || nb * nt > 2 * best) break;
    }
    if (best < 0) return 0;
    g->nt = (int)best_nt;
    g->hl = hl;
    g->ow = TSR_SP_CPT * (g->nt - 2 * hl);
    g->nbx = (int)(((long long)a.w + g->ow - 1) / g->ow);
    long long sh = tsr__env_int("TSR_CUDA_SPAN_STRIP", 32);
    if (sh < 1) sh = 1;
    if (sh > a.h) sh = a.h;
    g->strip_h = (int)sh;
    g->nstrips = (int)((a.h + sh - 1) / sh);
    if ((long long)g->nbx * g->nstrips > 0x7fffffffLL) return 0;
    g->rxhi = a.rx >> 4;
    g->nomirror = tsr__env_int("TSR_CUDA_SPAN_NOMIRROR", 0);
    g->half = (unsigned)a.mean.half;
    g->magic = magic;
    return 1;
}

#define TSR__SP_CASE(R)                                                                                  \
    case R:                                                                                              \
        if (a.thresh) tsr__box_span_kernel<1, R><<<blocks, g.nt, smem, st>>>(a, g);                     \
        else tsr__box_span_kernel<0, R><<<blocks, g.nt, smem, st>>>(a, g);                              \
        break;

/* Queue the span kernel for box or threshold arguments (the plan checked by supports()). */
static tsr_status tsr__box_span_run(const tsr__box_args &a, const tsr_image *src, const tsr_image *dst,
                                    cudaStream_t st, const char *what)
{
    tsr__span_geom g;
    if (!tsr__box_span_plan(a, src->depth, src, dst, &g) && tsr__box_span_plan(a, src->depth, src, src, NULL))
        return tsr__box_unaligned_dst(a, src, dst, st, what);   /* only the destination's rows */
    if (!tsr__box_span_plan(a, src->depth, src, dst, &g))
        return tsr__fail(TSR_E_UNSUPPORTED, "%s: only 8-bit one-channel images with 16-byte aligned rows, rx from %d to "
                         "%d and ry up to %d", what, TSR_SP_RXMIN, TSR_SP_RXMAX, TSR_SP_RYMAX);
    if (a.w == 0 || a.h == 0) return TSR_OK;
    const unsigned blocks = (unsigned)((long long)g.nbx * g.nstrips);
    const size_t smem = (size_t)2 * TSR_SP_BUF_WORDS * g.nt * sizeof(unsigned);
    switch (a.rx & 15) {
        TSR__SP_CASE(0) TSR__SP_CASE(1) TSR__SP_CASE(2) TSR__SP_CASE(3) TSR__SP_CASE(4) TSR__SP_CASE(5)
        TSR__SP_CASE(6) TSR__SP_CASE(7) TSR__SP_CASE(8) TSR__SP_CASE(9) TSR__SP_CASE(10) TSR__SP_CASE(11)
        TSR__SP_CASE(12) TSR__SP_CASE(13) TSR__SP_CASE(14) TSR__SP_CASE(15)
    }
    return TSR_CUDA_LAUNCHED(what);
}

extern "C" int tsr__box_span_supports(const tsr_image *src, const void *params)
{
    tsr_image dummy = *src;
    return tsr__box_span_plan(tsr__box_args_box(src, &dummy, (const tsr_box_params *)params), src->depth, src, &dummy,
                              NULL);
}

/* box/span: see the comment at the top of this file. */
extern "C" tsr_status tsr__box_span(const tsr_image *src, tsr_image *dst, const void *params, const tsr_exec *ex)
{
    tsr__box_args a = tsr__box_args_box(src, dst, (const tsr_box_params *)params);
    return tsr__box_span_run(a, src, dst, (cudaStream_t)ex->stream, "box/span kernel");
}

extern "C" int tsr__threshold_span_supports(const tsr_image *src, const void *params)
{
    tsr_image dummy = *src;
    return tsr__box_span_plan(tsr__box_args_threshold(src, &dummy, (const tsr_threshold_params *)params), src->depth,
                              src, &dummy, NULL);
}

/* threshold/span: box/span's means with the comparison as the output step. */
extern "C" tsr_status tsr__threshold_span(const tsr_image *src, tsr_image *dst, const void *params, const tsr_exec *ex)
{
    tsr__box_args a = tsr__box_args_threshold(src, dst, (const tsr_threshold_params *)params);
    return tsr__box_span_run(a, src, dst, (cudaStream_t)ex->stream, "threshold/span kernel");
}
