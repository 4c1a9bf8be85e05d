/* Box filter and adaptive threshold on the GPU. Every variant is bit-exact with the CPU
 * reference (src/cpu/box.c, src/cpu/threshold.c): sums are exact integers and the rounded mean
 * is computed by one of three methods that are each exact (see tsr__cu_mean_make).
 *
 * Variants (default first where several apply: the registry takes the first that supports)
 *  box/ring         8-bit gray, radii up to 3 or equal radii up to 12 (the default up to 6): column
 *                   sums in registers, the window rows in a per-lane shared-memory ring filled by
 *                   asynchronous copies
 *  box/stream       8-bit gray, equal radii 3 to 32 (the default from 7; from 17 on large images):
 *                   ring's lanes with only the entering, leaving (and threshold's own) rows queued
 *                   ahead
 *  box/reg          the same arithmetic with the window rows in registers (slower than ring)
 *  box/wide         8-bit gray, rx up to 127, ry up to 128: per-warp prefix rows (box_wide.cu)
 *  box/sweep        8-bit gray, rx up to 94, ry up to 128: column sums transposed, row running sums (box_sweep.cu)
 *  box/warp         8-bit gray, radii up to 48, any alignment: per-warp sliding sums
 *  box/fast         running column sums down a strip of rows plus a block-wide prefix scan of
 *                   each row: any image, cost independent of the radius
 *  box/tiled        eight rows per barrier pair (an experiment, slower)
 *  box/shared       a shared-memory tile with its halo, separable sums inside the tile; r <= 16
 *  box/unrolled3x3  radius 1 only, the 9 taps unrolled (the seed's meanFilterKernelUnwind)
 *  box/global       one thread per pixel loops over the window in global memory, O(rx*ry)
 *  threshold/...    ring, reg, wide, warp, fused (box/fast's sums), tiled with the comparison as the
 *                   output step; shared-tile (seeds/003: dynamic shared tile with a clamped
 *                   halo) and global
 */
#include "box_common.cuh"
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ global */

/* One thread per pixel (all channels), rows strided over grid.y: the window read sample by
 * sample from global memory. */
/* Output sample (x, y) of every channel from the window read sample by sample. */
template <class T>
__device__ static inline void tsr__box_global_pixel(const tsr__box_args &a, int x, int y)
{
    for (int c = 0; c < a.cn; c++) {
        unsigned long long s = 0;
        for (int ky = -a.ry; ky <= a.ry; ky++) {
            int yy = tsr__cu_border_index(y + ky, a.h, a.border);
            for (int kx = -a.rx; kx <= a.rx; kx++)
                s += tsr__box_sample<T>(a, yy, tsr__cu_border_index(x + kx, a.w, a.border), c);
        }
        tsr__cu_row<T>(a.dst, a.dstride, y)[(size_t)x * a.cn + c] = tsr__box_result<T>(a, s, y, (size_t)x * a.cn + c);
    }
}

template <class T>
__global__ void tsr__box_global_kernel(tsr__box_args a)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= a.w) return;
    for (int y = blockIdx.y; y < a.h; y += gridDim.y) tsr__box_global_pixel<T>(a, x, y);
}

/* Launch the global kernel for the sample type of a.  */
static tsr_status tsr__box_global_launch(const tsr__box_args &a, int depth, cudaStream_t st)
{
    dim3 block(128), grid(tsr__div_up((unsigned)a.w, 128), tsr__cu_grid_rows(a.h));
    if (depth == TSR_U8) tsr__box_global_kernel<uint8_t><<<grid, block, 0, st>>>(a);
    else tsr__box_global_kernel<uint16_t><<<grid, block, 0, st>>>(a);
    return TSR_CUDA_LAUNCHED("box/global kernel");
}

/* box/global: any radius, any border; slow (O(rx*ry) loads per sample). */
static tsr_status tsr__box_global(const tsr_image *src, tsr_image *dst, const void *params, const tsr_exec *ex)
{
    tsr__box_args a = tsr__box_args_box(src, dst, (const tsr_box_params *)params);
    return tsr__box_global_launch(a, src->depth, (cudaStream_t)ex->stream);
}

/* ------------------------------------------------------------------------ unrolled 3x3 */

/* Radius 1: the three mapped rows and columns once per pixel, nine taps unrolled, area 9. */
template <class T>
__global__ void tsr__box_3x3_kernel(tsr__box_args a)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= a.w) return;
    int xl = tsr__cu_border_index(x - 1, a.w, a.border), xr = tsr__cu_border_index(x + 1, a.w, a.border);
    for (int y = blockIdx.y; y < a.h; y += gridDim.y) {
        int yu = tsr__cu_border_index(y - 1, a.h, a.border), yd = tsr__cu_border_index(y + 1, a.h, a.border);
        for (int c = 0; c < a.cn; c++) {
            unsigned s = tsr__box_sample<T>(a, yu, xl, c) + tsr__box_sample<T>(a, yu, x, c) +
                         tsr__box_sample<T>(a, yu, xr, c) + tsr__box_sample<T>(a, y, xl, c) +
                         tsr__box_sample<T>(a, y, x, c) + tsr__box_sample<T>(a, y, xr, c) +
                         tsr__box_sample<T>(a, yd, xl, c) + tsr__box_sample<T>(a, yd, x, c) +
                         tsr__box_sample<T>(a, yd, xr, c);
            T *d = tsr__cu_row<T>(a.dst, a.dstride, y);
            d[(size_t)x * a.cn + c] = (T)((s + 4) / 9);
        }
    }
}

/* box/unrolled3x3 handles exactly rx == ry == 1. */
static int tsr__box_3x3_supports(const tsr_image *src, const void *params)
{
    int rx, ry;
    (void)src;
    tsr__box_radii((const tsr_box_params *)params, &rx, &ry);
    return rx == 1 && ry == 1;
}

/* box/unrolled3x3: queue the 3x3 kernel on the exec stream (supports() guarantees radius 1). */
static tsr_status tsr__box_3x3(const tsr_image *src, tsr_image *dst, const void *params, const tsr_exec *ex)
{
    tsr__box_args a = tsr__box_args_box(src, dst, (const tsr_box_params *)params);
    cudaStream_t st = (cudaStream_t)ex->stream;
    dim3 block(128), grid(tsr__div_up((unsigned)a.w, 128), tsr__cu_grid_rows(a.h));
    if (src->depth == TSR_U8) tsr__box_3x3_kernel<uint8_t><<<grid, block, 0, st>>>(a);
    else tsr__box_3x3_kernel<uint16_t><<<grid, block, 0, st>>>(a);
    return TSR_CUDA_LAUNCHED("box/unrolled3x3 kernel");
}

/* ------------------------------------------------------------------------ shared tile */

enum { TSR_TILE_W = 32, TSR_TILE_H = 16, TSR_TILE_MAX_R = 16 };

/* Dynamic shared memory of the tile kernel: the haloed tile of samples, then the vertical
 * sums of its TSR_TILE_H output rows (32-bit: at most 65535 * 33 * 33). */
static size_t tsr__tile_smem(int rx, int ry, int cn, int depth)
{
    size_t rowlen = (size_t)(TSR_TILE_W + 2 * rx) * cn;
    size_t tile = ((size_t)(TSR_TILE_H + 2 * ry) * rowlen * depth + 15) & ~(size_t)15;
    return tile + (size_t)TSR_TILE_H * rowlen * sizeof(unsigned);
}

/* A 32x16-pixel output tile per block: the tile and its halo (border-mapped, so replicate is
 * the seed's clamp) are loaded into shared memory once, then summed vertically and
 * horizontally from there. Block: 256 threads. Tiles stride over grid.y for tall images. */
template <class T>
__global__ void tsr__box_tile_kernel(tsr__box_args a)
{
    extern __shared__ __align__(16) unsigned char tsr__tile_smem_raw[];
    const int ew = TSR_TILE_W + 2 * a.rx, eh = TSR_TILE_H + 2 * a.ry, cn = a.cn, rowlen = ew * cn;
    T *tile = (T *)tsr__tile_smem_raw;
    unsigned *vs = (unsigned *)(tsr__tile_smem_raw + (((size_t)eh * rowlen * sizeof(T) + 15) & ~(size_t)15));
    const int tid = threadIdx.x, nthr = blockDim.x, x0 = blockIdx.x * TSR_TILE_W;
    for (long long y0 = (long long)blockIdx.y * TSR_TILE_H; y0 < a.h; y0 += (long long)gridDim.y * TSR_TILE_H) {
        for (int i = tid; i < eh * rowlen; i += nthr) {
            int ey = i / rowlen, r = i - ey * rowlen, ex = r / cn, c = r - ex * cn;
            int yy = tsr__cu_border_index((int)y0 - a.ry + ey, a.h, a.border);
            int xx = tsr__cu_border_index(x0 - a.rx + ex, a.w, a.border);
            tile[i] = (T)tsr__box_sample<T>(a, yy, xx, c);
        }
        __syncthreads();
        for (int i = tid; i < TSR_TILE_H * rowlen; i += nthr) {
            int r = i / rowlen, col = i - r * rowlen;
            unsigned s = 0;
            for (int k = 0; k <= 2 * a.ry; k++) s += tile[(r + k) * rowlen + col];
            vs[i] = s;
        }
        __syncthreads();
        for (int i = tid; i < TSR_TILE_H * TSR_TILE_W * cn; i += nthr) {
            int r = i / (TSR_TILE_W * cn), o = i - r * (TSR_TILE_W * cn), x = o / cn, c = o - x * cn;
            long long y = y0 + r;
            if (y < a.h && x0 + x < a.w) {
                unsigned long long s = 0;
                for (int k = 0; k <= 2 * a.rx; k++) s += vs[r * rowlen + (x + k) * cn + c];
                size_t idx = (size_t)(x0 + x) * cn + c;
                tsr__cu_row<T>(a.dst, a.dstride, y)[idx] = tsr__box_result<T>(a, s, (int)y, idx);
            }
        }
        __syncthreads();   /* the next tile overwrites shared memory */
    }
}

/* Queue the shared-tile kernel for box or threshold arguments (radii <= TSR_TILE_MAX_R); 'what' names
 * it in error messages. */
static tsr_status tsr__box_tile_launch(const tsr__box_args &a, int depth, cudaStream_t st, const char *what)
{
    dim3 block(256), grid(tsr__div_up((unsigned)a.w, TSR_TILE_W),
                          (unsigned)(tsr__div_up((unsigned)a.h, TSR_TILE_H) < TSR_CU_MAX_GRID_Y
                                         ? tsr__div_up((unsigned)a.h, TSR_TILE_H) : TSR_CU_MAX_GRID_Y));
    size_t smem = tsr__tile_smem(a.rx, a.ry, a.cn, depth);
    if (depth == TSR_U8) tsr__box_tile_kernel<uint8_t><<<grid, block, smem, st>>>(a);
    else tsr__box_tile_kernel<uint16_t><<<grid, block, smem, st>>>(a);
    return TSR_CUDA_LAUNCHED(what);
}

/* box/shared: radii up to TSR_TILE_MAX_R on both axes (the tile fits 48 KiB of shared memory). */
static int tsr__box_tile_supports(const tsr_image *src, const void *params)
{
    int rx, ry;
    (void)src;
    tsr__box_radii((const tsr_box_params *)params, &rx, &ry);
    return rx <= TSR_TILE_MAX_R && ry <= TSR_TILE_MAX_R;
}

/* box/shared: the shared-tile kernel with the op's border (radii checked by supports()). */
static tsr_status tsr__box_tile(const tsr_image *src, tsr_image *dst, const void *params, const tsr_exec *ex)
{
    tsr__box_args a = tsr__box_args_box(src, dst, (const tsr_box_params *)params);
    return tsr__box_tile_launch(a, src->depth, (cudaStream_t)ex->stream, "box/shared kernel");
}

/* threshold/shared-tile: blocks up to 2*16+1 = 33. */
static int tsr__threshold_tile_supports(const tsr_image *src, const void *params)
{
    (void)src;
    return ((const tsr_threshold_params *)params)->block / 2 <= TSR_TILE_MAX_R;
}

/* threshold/shared-tile: the shared-tile kernel with replicated borders and the test fused. */
static tsr_status tsr__threshold_tile(const tsr_image *src, tsr_image *dst, const void *params, const tsr_exec *ex)
{
    tsr__box_args a = tsr__box_args_threshold(src, dst, (const tsr_threshold_params *)params);
    return tsr__box_tile_launch(a, TSR_U8, (cudaStream_t)ex->stream, "threshold/shared-tile kernel");
}

/* ------------------------------------------------------------------------ fast */

/* Tiles start on, and their left halo is rounded up to, multiples of this many pixels, so that
 * 8-byte loads and stores stay aligned whatever the channel count and depth. */
enum { TSR_FAST_ALIGN = 16, TSR_FAST_MAX_THREADS = 512 };

/* Geometry of one fast launch (see tsr__box_fast_plan). */
struct tsr__fast_geom {
    int tile_w;       /* output pixels per tile, a multiple of TSR_FAST_ALIGN */
    int lead;         /* halo pixels loaded left of the tile: rx rounded up to TSR_FAST_ALIGN */
    int ext_px;       /* pixels of the extended row a block holds: floor(threads * V / cn) */
    int strip_h;      /* rows per strip */
    int nstrips;
    int vec_src, vec_dst; /* 8-byte accesses allowed (pointers and strides aligned) */
};

/* Shared-memory index with one pad word per 32, which makes the stride-V accesses of the scan
 * and the arbitrary offsets of the window differences free of bank conflicts. */
__device__ static inline int tsr__pad(int i) { return i + (i >> 5); }

/* Sample k of an 8-byte pack of T (k is a constant once the caller's loop is unrolled, so this
 * is one bit-field extract; a union would force the pack into local memory). */
template <class T>
__device__ __forceinline__ unsigned tsr__pk_get(uint2 w, int k)
{
    if (sizeof(T) == 1) return ((k < 4 ? w.x : w.y) >> (8 * (k & 3))) & 0xffu;
    return ((k < 2 ? w.x : w.y) >> (16 * (k & 1))) & 0xffffu;
}

/* Set sample k of a pack that is zero there. */
template <class T>
__device__ __forceinline__ void tsr__pk_set(uint2 &w, int k, unsigned v)
{
    if (sizeof(T) == 1) {
        if (k < 4) w.x |= v << (8 * (k & 3));
        else w.y |= v << (8 * (k & 3));
    } else {
        if (k < 2) w.x |= v << (16 * (k & 1));
        else w.y |= v << (16 * (k & 1));
    }
}

/* The edge case of tsr__fast_load, out of line to keep the main loop's registers free: the
 * samples one by one, each column mapped through the border. */
template <class T, int CN>
__device__ __noinline__ uint2 tsr__fast_load_edge(const tsr__box_args &a, const T *row, int xs, int o0)
{
    constexpr int V = 8 / (int)sizeof(T);
    uint2 w = make_uint2(0, 0);
#pragma unroll
    for (int v = 0; v < V; v++) {
        int es = o0 + v, px = es / CN, c = es - px * CN;
        int mx = tsr__cu_border_index(xs + px, a.w, a.border);
        tsr__pk_set<T>(w, v, mx < 0 ? (unsigned)a.value : (unsigned)row[(size_t)mx * CN + c]);
    }
    return w;
}

/* The V = 8 / sizeof(T) extended samples [o0, o0 + V) of mapped row yy, the extended row
 * starting at pixel xs: one 8-byte load when they lie inside the row and 'vec' allows it, else
 * sample by sample with the border applied (yy < 0: the constant border's row). */
template <class T, int CN>
__device__ __forceinline__ uint2 tsr__fast_load(const tsr__box_args &a, int yy, int xs, int o0, int vec)
{
    constexpr int V = 8 / (int)sizeof(T);
    uint2 w = make_uint2(0, 0);
    if (yy < 0) {
        unsigned splat = sizeof(T) == 1 ? (unsigned)a.value * 0x01010101u : (unsigned)a.value * 0x00010001u;
        return make_uint2(splat, splat);
    }
    const T *row = tsr__cu_row<T>(a.src, a.sstride, yy);
    long long first = (long long)xs * CN + o0;
    if (vec && first >= 0 && first + V <= (long long)a.w * CN) return __ldg((const uint2 *)(row + first));
    return tsr__fast_load_edge<T, CN>(a, row, xs, o0);
}

/* The rounded mean for a method fixed at compile time (MODE 0: float, 1: double, both with
 * sums + offset below 2^32 as the planner guarantees; -1: chosen at run time). */
template <int MODE, class S>
__device__ __forceinline__ unsigned tsr__fast_mean(S s, const tsr__cu_mean &m)
{
    if (MODE == 0) return __float2uint_rz(__fmul_rn(__fadd_rn(__uint2float_rn((unsigned)s + (unsigned)m.half), 0.5f), m.invf));
    if (MODE == 1) return __double2uint_rz(__dmul_rn(__dadd_rn(__uint2double_rn((unsigned)s + (unsigned)m.half), 0.5), m.invd));
    return tsr__cu_round_mean((unsigned long long)s, m);
}

/* One block per (tile of columns, strip of rows). Each thread owns V = 8 / sizeof(T)
 * consecutive samples of the extended row [x0 - lead, x0 + tile_w + rx) and keeps their
 * vertical window sums in registers, updated by one row in and one row out per output row
 * (8-byte loads away from the edges, the next rows prefetched). Each row's sums are then
 * prefix-scanned across the block (per channel: planar order in shared memory when CN > 1),
 * and every output is the difference of two prefix values, so the cost does not depend on
 * either radius. S is the sum type: 32-bit sums may wrap in the prefix, their differences stay
 * exact. CN and the rounding method are template parameters so that every index and every
 * mean compiles to a few instructions. MINB (blocks of 512 per SM) caps the registers: 2 gives 64
 * per thread (full occupancy, a few spills), 1 gives up to 128. */
template <class T, class S, int CN, int MODE, int MINB>
__global__ void __launch_bounds__(TSR_FAST_MAX_THREADS, MINB) tsr__box_fast_kernel(tsr__box_args a, tsr__fast_geom g)
{
    constexpr int V = 8 / (int)sizeof(T);
    extern __shared__ __align__(16) unsigned char tsr__fast_smem_raw[];
    const int nt = blockDim.x, t = threadIdx.x, lane = t & 31, warp = t >> 5, nwarps = nt >> 5;
    const int E = nt * V, padE = tsr__pad(E - 1) + 1, Ep = g.ext_px;
    S *P0 = (S *)tsr__fast_smem_raw, *P1 = P0 + padE, *wt = P1 + padE, *colsh = wt + 64;
    const int x0 = blockIdx.x * g.tile_w, xs = x0 - g.lead;
    const int o0 = t * V, tile_samples = g.tile_w * CN, row_samples = a.w * CN, out0 = x0 * CN + o0;
    const int active_out = o0 < tile_samples && out0 < row_samples;
    const int full_out = o0 + V <= tile_samples && out0 + V <= row_samples;

    for (int strip = blockIdx.y; strip < g.nstrips; strip += gridDim.y) {
        const int y_begin = strip * g.strip_h, y_end = min(a.h, y_begin + g.strip_h);
        S col[V];
        uint2 in_n = make_uint2(0, 0), out_n = make_uint2(0, 0);
        int buf = 0;
#pragma unroll
        for (int v = 0; v < V; v++) col[v] = 0;
        for (int k = -a.ry; k <= a.ry; k++) {
            uint2 w = tsr__fast_load<T, CN>(a, tsr__cu_border_index(y_begin + k, a.h, a.border), xs, o0, g.vec_src);
#pragma unroll
            for (int v = 0; v < V; v++) col[v] += (S)tsr__pk_get<T>(w, v);
        }
        for (int y = y_begin; y < y_end; y++) {
            if (y + 1 < y_end) {   /* prefetch the rows that enter and leave for row y + 1 */
                in_n = tsr__fast_load<T, CN>(a, tsr__cu_border_index(y + 1 + a.ry, a.h, a.border), xs, o0, g.vec_src);
                out_n = tsr__fast_load<T, CN>(a, tsr__cu_border_index(y - a.ry, a.h, a.border), xs, o0, g.vec_src);
            }
            /* Inclusive prefix of the column sums across the block (planar order if CN > 1). */
            S p[V];
            if (CN == 1) {
#pragma unroll
                for (int v = 0; v < V; v++) p[v] = col[v];
            } else {
#pragma unroll
                for (int v = 0; v < V; v++) {
                    int es = o0 + v, px = es / CN, c = es - px * CN;
                    if (px < Ep) colsh[tsr__pad(c * Ep + px)] = col[v];
                }
                __syncthreads();
#pragma unroll
                for (int v = 0; v < V; v++) p[v] = o0 + v < CN * Ep ? colsh[tsr__pad(o0 + v)] : (S)0;
            }
#pragma unroll
            for (int v = 1; v < V; v++) p[v] += p[v - 1];
            S total = p[V - 1], incl = total;
#pragma unroll
            for (int o = 1; o < 32; o <<= 1) {
                S n = __shfl_up_sync(0xffffffffu, incl, o);
                if (lane >= o) incl += n;
            }
            if (lane == 31) wt[buf * 32 + warp] = incl;
            __syncthreads();
            S wv = lane < nwarps ? wt[buf * 32 + lane] : (S)0;
#pragma unroll
            for (int o = 1; o < 32; o <<= 1) {
                S n = __shfl_up_sync(0xffffffffu, wv, o);
                if (lane >= o) wv += n;
            }
            S before = __shfl_sync(0xffffffffu, wv, (warp + 31) & 31);
            S base = (warp > 0 ? before : (S)0) + (incl - total);
            S *P = buf ? P1 : P0;
#pragma unroll
            for (int v = 0; v < V; v++) P[tsr__pad(o0 + v)] = p[v] + base;
            __syncthreads();
            /* Outputs: the window of output sample o is planar prefix (lo, hi]. */
            if (active_out) {
                uint2 res = make_uint2(0, 0), sv = make_uint2(0, 0);
                T *drow = tsr__cu_row<T>(a.dst, a.dstride, y);
                if (a.thresh) {
                    const T *srow = tsr__cu_row<T>(a.src, a.sstride, y);
                    if (full_out && g.vec_src) sv = __ldg((const uint2 *)(srow + out0));
                    else
#pragma unroll
                        for (int v = 0; v < V; v++)
                            if (out0 + v < row_samples) tsr__pk_set<T>(sv, v, srow[out0 + v]);
                }
#pragma unroll
                for (int v = 0; v < V; v++) {
                    int o = o0 + v, j = o / CN, c = o - j * CN;
                    int hi = c * Ep + j + g.lead + a.rx, lo = hi - (2 * a.rx + 1);
                    if (o >= tile_samples) continue;   /* past the tile: hi would leave the row */
                    S sum = P[tsr__pad(hi)] - (lo >= 0 ? P[tsr__pad(lo)] : (S)0);
                    unsigned m = tsr__fast_mean<MODE, S>(sum, a.mean);
                    if (a.thresh) {
                        int diff = (int)tsr__pk_get<T>(sv, v) - (int)m;
                        int pass = a.inverse ? diff <= -a.idelta : diff > -a.idelta;
                        m = pass ? (unsigned)a.maxval : 0u;
                    }
                    tsr__pk_set<T>(res, v, m);
                }
                if (full_out && g.vec_dst) {
                    *(uint2 *)(drow + out0) = res;
                } else {
#pragma unroll
                    for (int v = 0; v < V; v++)
                        if (o0 + v < tile_samples && out0 + v < row_samples) drow[out0 + v] = (T)tsr__pk_get<T>(res, v);
                }
            }
            if (y + 1 < y_end) {
#pragma unroll
                for (int v = 0; v < V; v++) col[v] += (S)tsr__pk_get<T>(in_n, v) - (S)tsr__pk_get<T>(out_n, v);
            }
            buf ^= 1;
        }
        __syncthreads();   /* the next strip reuses the shared buffers */
    }
}

/* Largest dynamic shared memory per block this device allows (opt-in), cached. */
static size_t tsr__cu_smem_optin(void)
{
    static size_t bytes = 0;
    if (!bytes) {
        int dev = 0, n = 0;
        if (cudaGetDevice(&dev) == cudaSuccess &&
            cudaDeviceGetAttribute(&n, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) == cudaSuccess && n > 0)
            bytes = (size_t)n;
        else {
            cudaGetLastError();
            bytes = 48 * 1024;
        }
    }
    return bytes;
}

/* Dynamic shared memory of the fast kernel for nt threads of V samples of sum size ssize. */
static size_t tsr__fast_smem(int nt, int V, int cn, size_t ssize)
{
    size_t E = (size_t)nt * V, padE = E + (E - 1) / 32 + 1;
    return ((cn > 1 ? 3 : 2) * padE + 64) * ssize;
}

/* Plan a fast launch: tile width and threads from the horizontal radius, strip height from
 * the vertical radius (values from the measured sweep). Returns 0 when the extended row of the
 * smallest tile does not fit a block of TSR_FAST_MAX_THREADS (8-bit gray: rx above about 2000;
 * the registry then falls back to box/global). With g NULL only answers that question.
 * Knobs for measurements: TSR_CUDA_BOX_STRIP (rows per strip), TSR_CUDA_BOX_EXT (samples per
 * block target), TSR_CUDA_BOX_MINB (register cap, see the kernel). */
static int tsr__box_fast_plan(const tsr__box_args &a, int depth, const tsr_image *src, const tsr_image *dst,
                              tsr__fast_geom *g, int *threads, size_t *smem)
{
    const int V = 8 / depth, cn = a.cn;
    const size_t ssize = tsr__box_sums_fit_32(a, depth) ? 4 : 8;
    long long lead = ((long long)a.rx + TSR_FAST_ALIGN - 1) / TSR_FAST_ALIGN * TSR_FAST_ALIGN;
    long long need_min = (lead + TSR_FAST_ALIGN + a.rx) * cn;   /* samples for a 16-pixel tile */
    int max_nt = TSR_FAST_MAX_THREADS;
    while (max_nt > 32 && tsr__fast_smem(max_nt, V, cn, ssize) > tsr__cu_smem_optin()) max_nt -= 32;
    if (need_min > (long long)max_nt * V) return 0;
    if (!g) return 1;
    /* Aim at 128 threads, more when the halo would dominate the tile: the kernel is bound by
     * each block's per-row latency, so many small blocks beat few large ones (sweep in
     * docs/perf-notes.md: 1024 samples per block beat 2048 and 4096 at every radius). */
    long long ext = tsr__env_int("TSR_CUDA_BOX_EXT", 128 * V);
    if (ext < 2 * need_min) ext = 2 * need_min;
    if (ext > (long long)max_nt * V) ext = (long long)max_nt * V;
    long long tw_max = (ext / cn - lead - a.rx) / TSR_FAST_ALIGN * TSR_FAST_ALIGN;
    long long ntiles = (a.w + tw_max - 1) / tw_max;
    long long tw = ((a.w + ntiles - 1) / ntiles + TSR_FAST_ALIGN - 1) / TSR_FAST_ALIGN * TSR_FAST_ALIGN;
    int nt = (int)(((lead + tw + a.rx) * cn + V - 1) / V);
    nt = (nt + 31) / 32 * 32;
    /* Strips: short, for the same reason (16 rows measured best at radii 1 and 15), but at
     * least a quarter of the 2*ry+1 rows each strip first sums (32 rows measured best at 64). */
    long long sh = 2LL * a.ry + 1 > 64 ? (2LL * a.ry + 1) / 4 : 16;
    if (sh > a.h) sh = a.h;
    sh = tsr__env_int("TSR_CUDA_BOX_STRIP", (int)sh);
    if (sh < 1) sh = 1;
    g->tile_w = (int)tw;
    g->lead = (int)lead;
    g->ext_px = nt * V / cn;
    g->strip_h = (int)sh;
    g->nstrips = (int)((a.h + sh - 1) / sh);
    g->vec_src = tsr__cu_aligned(src->data, src->stride, 8);
    g->vec_dst = tsr__cu_aligned(dst->data, dst->stride, 8);
    *threads = nt;
    *smem = tsr__fast_smem(nt, V, cn, ssize);
    (void)ntiles;
    return 1;
}

/* Set a kernel's dynamic shared memory limit when it needs more than the default 48 KiB. */
template <class K>
static tsr_status tsr__cu_allow_smem(K kernel, size_t bytes)
{
    if (bytes <= 48 * 1024) return TSR_OK;
    return tsr__cuda_status(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes),
                            "cudaFuncSetAttribute(box kernel shared memory)");
}

template <class T, class S, int CN, int MODE, int MINB>
static tsr_status tsr__box_fast_launch_typed(const tsr__box_args &a, const tsr__fast_geom &g, int nt, size_t smem,
                                             cudaStream_t st, const char *what)
{
    tsr_status s = tsr__cu_allow_smem(tsr__box_fast_kernel<T, S, CN, MODE, MINB>, smem);
    if (s) return s;
    dim3 grid(tsr__div_up((unsigned)a.w, (unsigned)g.tile_w),
              (unsigned)(g.nstrips < TSR_CU_MAX_GRID_Y ? g.nstrips : TSR_CU_MAX_GRID_Y));
    tsr__box_fast_kernel<T, S, CN, MODE, MINB><<<grid, nt, smem, st>>>(a, g);
    return TSR_CUDA_LAUNCHED(what);
}

/* The kernel for the channel count. The 8-bit gray float-mean case (the common one) also
 * exists with 128 registers, chosen by TSR_CUDA_BOX_MINB=1 for measurements. */
template <class T, class S, int MODE>
static tsr_status tsr__box_fast_by_cn(const tsr__box_args &a, const tsr__fast_geom &g, int nt, size_t smem,
                                      cudaStream_t st, const char *what)
{
    switch (a.cn) {
    case 1:
        if (sizeof(T) == 1 && sizeof(S) == 4 && MODE == 0 && tsr__env_int("TSR_CUDA_BOX_MINB", 2) == 1)
            return tsr__box_fast_launch_typed<T, S, 1, MODE, 1>(a, g, nt, smem, st, what);
        return tsr__box_fast_launch_typed<T, S, 1, MODE, 2>(a, g, nt, smem, st, what);
    case 2: return tsr__box_fast_launch_typed<T, S, 2, MODE, 2>(a, g, nt, smem, st, what);
    case 3: return tsr__box_fast_launch_typed<T, S, 3, MODE, 2>(a, g, nt, smem, st, what);
    default: return tsr__box_fast_launch_typed<T, S, 4, MODE, 2>(a, g, nt, smem, st, what);
    }
}

/* Run the fast kernel for box or threshold arguments; TSR_E_UNSUPPORTED if the radius is too
 * large for it (supports() says so beforehand). 32-bit sums where they cannot overflow, with
 * the float mean for 8-bit areas up to 8191 and the double mean otherwise (both exact with
 * sums below 2^32); 64-bit sums choose their method at run time. */
static tsr_status tsr__box_fast_run(const tsr__box_args &a, const tsr_image *src, tsr_image *dst, cudaStream_t st,
                                    const char *what)
{
    tsr__fast_geom g;
    int nt;
    size_t smem;
    if (!tsr__box_fast_plan(a, src->depth, src, dst, &g, &nt, &smem))
        return tsr__fail(TSR_E_UNSUPPORTED, "%s: horizontal radius %d is too large for one block", what, a.rx);
    int fit32 = tsr__box_sums_fit_32(a, src->depth);
    if (src->depth == TSR_U8) {
        if (!fit32) return tsr__box_fast_by_cn<uint8_t, unsigned long long, -1>(a, g, nt, smem, st, what);
        return a.mean.mode == 0 ? tsr__box_fast_by_cn<uint8_t, uint32_t, 0>(a, g, nt, smem, st, what)
                                : tsr__box_fast_by_cn<uint8_t, uint32_t, 1>(a, g, nt, smem, st, what);
    }
    return fit32 ? tsr__box_fast_by_cn<uint16_t, uint32_t, 1>(a, g, nt, smem, st, what)
                 : tsr__box_fast_by_cn<uint16_t, unsigned long long, -1>(a, g, nt, smem, st, what);
}

/* box/fast handles horizontal radii whose extended row fits one block (a few thousand). */
static int tsr__box_fast_supports(const tsr_image *src, const void *params)
{
    tsr_image dummy = *src;
    tsr__box_args a = tsr__box_args_box(src, &dummy, (const tsr_box_params *)params);
    return tsr__box_fast_plan(a, src->depth, src, &dummy, NULL, NULL, NULL);
}

/* box/fast: the running-sum kernel (radius range checked by supports()). */
static tsr_status tsr__box_fast(const tsr_image *src, tsr_image *dst, const void *params, const tsr_exec *ex)
{
    tsr__box_args a = tsr__box_args_box(src, dst, (const tsr_box_params *)params);
    return tsr__box_fast_run(a, src, dst, (cudaStream_t)ex->stream, "box/fast kernel");
}

/* threshold/fused handles blocks whose extended row fits one block (as box/fast). */
static int tsr__threshold_fused_supports(const tsr_image *src, const void *params)
{
    tsr_image dummy = *src;
    tsr__box_args a = tsr__box_args_threshold(src, &dummy, (const tsr_threshold_params *)params);
    return tsr__box_fast_plan(a, TSR_U8, src, &dummy, NULL, NULL, NULL);
}

/* threshold/fused: the running-sum kernel with the comparison as its output step. */
static tsr_status tsr__threshold_fused(const tsr_image *src, tsr_image *dst, const void *params, const tsr_exec *ex)
{
    tsr__box_args a = tsr__box_args_threshold(src, dst, (const tsr_threshold_params *)params);
    return tsr__box_fast_run(a, src, dst, (cudaStream_t)ex->stream, "threshold/fused kernel");
}

/* threshold/global: the plain window loop, for blocks too large for the other two. */
static tsr_status tsr__threshold_global(const tsr_image *src, tsr_image *dst, const void *params, const tsr_exec *ex)
{
    tsr__box_args a = tsr__box_args_threshold(src, dst, (const tsr_threshold_params *)params);
    return tsr__box_global_launch(a, TSR_U8, (cudaStream_t)ex->stream);
}

/* ------------------------------------------------------------------------ tiled */

/* box/tiled and threshold/tiled: one channel, 32-bit sums. A block of TSR_TL_NT threads owns
 * TSR_TL_TW output columns and a strip of rows. Each thread keeps running column sums of four
 * neighbouring columns in registers (one 4- or 8-byte load per source row), K rows at a time
 * go to shared memory, one barrier, each warp turns one row into prefix sums with 16-byte
 * shared loads and a 5-step shuffle scan, one barrier, and every thread forms window sums as
 * differences of two prefix sums for its columns of the K rows. Two barriers per K rows
 * instead of per row is the change from box/fast. Measured on the H100 it is slower than
 * box/fast (445 vs 212 us at r=1, 8192^2): it issues far more instructions per pixel than
 * planned (docs/perf-notes.md), so it stays a registered experiment, not the default. */
enum { TSR_TL_NT = 256, TSR_TL_TW = 4 * TSR_TL_NT, TSR_TL_K = 8, TSR_TL_RMAX = 256 };

/* Four neighbouring samples of source row yy (mapped; -1 is the constant border) starting at
 * extended column c0; 'fast' when all four lie inside the image and the load is aligned. */
template <class T>
__device__ static inline void tsr__tl_load4(const tsr__box_args &a, int yy, int c0, int fast, const int xm[4],
                                            unsigned v[4])
{
    if (yy < 0) {
        v[0] = v[1] = v[2] = v[3] = (unsigned)a.value;
        return;
    }
    const T *row = tsr__cu_row<T>(a.src, a.sstride, yy);
    if (fast) {
        if (sizeof(T) == 1) {
            uchar4 q = *(const uchar4 *)(row + c0);
            v[0] = q.x, v[1] = q.y, v[2] = q.z, v[3] = q.w;
        } else {
            ushort4 q = *(const ushort4 *)(row + c0);
            v[0] = q.x, v[1] = q.y, v[2] = q.z, v[3] = q.w;
        }
        return;
    }
    for (int j = 0; j < 4; j++) v[j] = xm[j] < 0 ? (unsigned)a.value : (unsigned)row[xm[j]];
}

template <class T>
__global__ void __launch_bounds__(TSR_TL_NT) tsr__box_tiled_kernel(tsr__box_args a, int r4, int sh, int vec_ok)
{
    extern __shared__ uint4 tsr__tl_smem4[];
    unsigned *sm = (unsigned *)tsr__tl_smem4;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int L4 = TSR_TL_TW + 2 * r4, nq = L4 / 4;
    const int x0 = blockIdx.x * TSR_TL_TW, xs = x0 - r4;
    const int lo_off = r4 - a.rx - 1, hi_off = r4 + a.rx;
    unsigned cs[2][4];
    int c0[2], fast[2], xm[2][4];
    bool active[2];

    for (int k = 0; k < 2; k++) {
        int q = tid + k * TSR_TL_NT;
        active[k] = q < nq;
        c0[k] = xs + 4 * q;
        fast[k] = vec_ok && c0[k] >= 0 && c0[k] + 3 < a.w;
        for (int j = 0; j < 4; j++) xm[k][j] = tsr__cu_border_index(c0[k] + j, a.w, a.border);
    }
    for (long long strip = blockIdx.y; strip * sh < a.h; strip += gridDim.y) {
        const int y0 = (int)(strip * sh), y1 = min(y0 + sh, a.h);
        /* Vertical window sums of the strip's first row. */
        for (int k = 0; k < 2; k++)
            for (int j = 0; j < 4; j++) cs[k][j] = 0;
        for (int dy = -a.ry; dy <= a.ry; dy++) {
            int yy = tsr__cu_border_index(y0 + dy, a.h, a.border);
            for (int k = 0; k < 2; k++) {
                unsigned v[4];
                if (!active[k]) continue;
                tsr__tl_load4<T>(a, yy, c0[k], fast[k], xm[k], v);
                for (int j = 0; j < 4; j++) cs[k][j] += v[j];
            }
        }
        for (int yb = y0; yb < y1; yb += TSR_TL_K) {
            const int kr = min(TSR_TL_K, y1 - yb);
            for (int r = 0; r < kr; r++) {
                const int y = yb + r;
                if (y > y0) {   /* slide the window down one row: wrapping 32-bit sums stay exact */
                    int ya = tsr__cu_border_index(y + a.ry, a.h, a.border);
                    int ys = tsr__cu_border_index(y - a.ry - 1, a.h, a.border);
                    for (int k = 0; k < 2; k++) {
                        unsigned va[4], vs[4];
                        if (!active[k]) continue;
                        tsr__tl_load4<T>(a, ya, c0[k], fast[k], xm[k], va);
                        tsr__tl_load4<T>(a, ys, c0[k], fast[k], xm[k], vs);
                        for (int j = 0; j < 4; j++) cs[k][j] += va[j] - vs[j];
                    }
                }
                for (int k = 0; k < 2; k++)
                    if (active[k])
                        tsr__tl_smem4[(r * L4) / 4 + tid + k * TSR_TL_NT] =
                            make_uint4(cs[k][0], cs[k][1], cs[k][2], cs[k][3]);
            }
            __syncthreads();
            /* Inclusive prefix sums of each row, one warp per row, 128 entries a step. */
            for (int r = warp; r < kr; r += TSR_TL_NT / 32) {
                uint4 *row4 = tsr__tl_smem4 + (r * L4) / 4;
                unsigned carry = 0;
                for (int base = 0; base < nq; base += 32) {
                    int i = base + lane;
                    uint4 v = i < nq ? row4[i] : make_uint4(0, 0, 0, 0);
                    v.y += v.x;
                    v.z += v.y;
                    v.w += v.z;
                    unsigned t = v.w;
                    for (int o = 1; o < 32; o <<= 1) {
                        unsigned n = __shfl_up_sync(0xffffffffu, t, o);
                        if (lane >= o) t += n;
                    }
                    unsigned ex = t - v.w + carry;
                    v.x += ex, v.y += ex, v.z += ex, v.w += ex;
                    if (i < nq) row4[i] = v;
                    carry += __shfl_sync(0xffffffffu, t, 31);
                }
            }
            __syncthreads();
            /* Window sums as prefix differences; consecutive threads take consecutive columns,
             * so the shared reads are conflict-free and the stores coalesce. */
            for (int r = 0; r < kr; r++) {
                const unsigned *row = sm + r * L4;
                const int y = yb + r;
                T *out = tsr__cu_row<T>(a.dst, a.dstride, y);
                for (int m = 0; m < 4; m++) {
                    int x = tid + m * TSR_TL_NT;
                    if (x0 + x >= a.w) break;
                    unsigned lo = x + lo_off >= 0 ? row[x + lo_off] : 0u;
                    out[x0 + x] = tsr__box_result<T>(a, (unsigned long long)(row[x + hi_off] - lo), y, (size_t)(x0 + x));
                }
            }
            __syncthreads();   /* the next rows reuse the shared rows */
        }
    }
}

/* Whether box/tiled takes these arguments: one channel, 32-bit sums, halo within the block. */
static int tsr__box_tiled_fits(const tsr__box_args &a, int depth)
{
    return a.cn == 1 && (depth == TSR_U8 || depth == TSR_U16) && a.rx <= TSR_TL_RMAX && tsr__box_sums_fit_32(a, depth);
}

/* Launch box/tiled: strips of at least four window heights (the start of each strip re-sums
 * 2*ry+1 rows), enough strips to fill the device. TSR_CUDA_TILED_STRIP overrides for sweeps. */
static tsr_status tsr__box_tiled_run(const tsr__box_args &a, const tsr_image *src, const tsr_image *dst,
                                     cudaStream_t st, const char *what)
{
    int r4 = (a.rx + 3) / 4 * 4;
    size_t smem = (size_t)TSR_TL_K * (TSR_TL_TW + 2 * r4) * sizeof(unsigned);
    int gx = (int)tsr__div_up((unsigned)a.w, TSR_TL_TW);
    long long sh = 4LL * (2 * a.ry + 1);
    long long want = 4LL * tsr__cu_sm_count() / gx;       /* about four blocks per SM */
    if (want < 1) want = 1;
    if (sh < (a.h + want - 1) / want) sh = (a.h + want - 1) / want;
    if (sh < 16) sh = 16;
    sh = tsr__env_int("TSR_CUDA_TILED_STRIP", (int)sh);
    if (sh < 1) sh = 1;
    if (sh > a.h) sh = a.h;
    long long gy = (a.h + sh - 1) / sh;
    int vec_ok = tsr__cu_aligned(src->data, src->stride, 8);
    dim3 grid((unsigned)gx, (unsigned)(gy < TSR_CU_MAX_GRID_Y ? gy : TSR_CU_MAX_GRID_Y));
    tsr_status s;
    (void)dst;
    if (src->depth == TSR_U8) {
        if ((s = tsr__cu_allow_smem(tsr__box_tiled_kernel<uint8_t>, smem))) return s;
        tsr__box_tiled_kernel<uint8_t><<<grid, TSR_TL_NT, smem, st>>>(a, r4, (int)sh, vec_ok);
    } else {
        if ((s = tsr__cu_allow_smem(tsr__box_tiled_kernel<uint16_t>, smem))) return s;
        tsr__box_tiled_kernel<uint16_t><<<grid, TSR_TL_NT, smem, st>>>(a, r4, (int)sh, vec_ok);
    }
    return TSR_CUDA_LAUNCHED(what);
}

static int tsr__box_tiled_supports(const tsr_image *src, const void *params)
{
    tsr_image dummy = *src;
    return tsr__box_tiled_fits(tsr__box_args_box(src, &dummy, (const tsr_box_params *)params), src->depth);
}

/* box/tiled: see the kernel's comment. */
static tsr_status tsr__box_tiled(const tsr_image *src, tsr_image *dst, const void *params, const tsr_exec *ex)
{
    tsr__box_args a = tsr__box_args_box(src, dst, (const tsr_box_params *)params);
    return tsr__box_tiled_run(a, src, dst, (cudaStream_t)ex->stream, "box/tiled kernel");
}

static int tsr__threshold_tiled_supports(const tsr_image *src, const void *params)
{
    tsr_image dummy = *src;
    return tsr__box_tiled_fits(tsr__box_args_threshold(src, &dummy, (const tsr_threshold_params *)params), TSR_U8);
}

/* threshold/tiled: box/tiled's sums with the comparison as the output step. */
static tsr_status tsr__threshold_tiled(const tsr_image *src, tsr_image *dst, const void *params, const tsr_exec *ex)
{
    tsr__box_args a = tsr__box_args_threshold(src, dst, (const tsr_threshold_params *)params);
    return tsr__box_tiled_run(a, src, dst, (cudaStream_t)ex->stream, "threshold/tiled kernel");
}

/* ------------------------------------------------------------------------ warp */

/* box/warp and threshold/warp: 8-bit, one channel. Each warp is an independent machine with no
 * block barrier: it owns a segment of 256 consecutive columns (8 per lane, one 8-byte load per
 * source row) and a strip of rows. Column sums of up to 257 rows fit 16 bits, so each lane keeps
 * its 8 running column sums as four packed pairs and slides them with one 3-input add per pair.
 * Per output row the warp turns the 256 sums into prefix sums (8 serial adds per lane, a 5-step
 * shuffle scan), parks them in its own shared row (__syncwarp only) and forms every window sum
 * as the difference of two of them; lane t writes the outputs t, t + 32, ..., so the shared
 * reads are conflict-free at fixed offsets and the byte stores coalesce. The mean is
 * floor((sum + half) / area) by a multiply-high and shift whose exactness the host proves for
 * the largest possible sum. The rows entering and leaving the window are loaded DEPTH rows
 * ahead of their use, so each warp keeps several loads in flight. The outer rx + 1 (left,
 * rounded up to 8) and rx (right) columns of a segment are halo: segments overlap by that much,
 * re-read from L1/L2. */
enum { TSR_WP_CPT = 8, TSR_WP_SEG = 32 * TSR_WP_CPT, TSR_WP_WARPS = 4, TSR_WP_RMAX_SLIDE = 8, TSR_WP_RMAX = 48 };

/* Geometry and mean constants of one warp launch (see tsr__box_warp_plan). */
struct tsr__warp_geom {
    int pad_l;          /* halo columns left of the segment's outputs: rx + 1 rounded up to 8 */
    int ow;             /* output columns per segment */
    int nseg, strip_h, nstrips;
    unsigned half, magic;
    int shift;          /* mean = umulhi(sum + half, magic) >> shift, exact (host-checked) */
    int vec;            /* source 8-byte aligned (pointer and stride) */
    int vec_dst;        /* destination 8-byte aligned */
};

/* The 8 bytes of w as four packed 16-bit pairs (bytes 0,1 / 2,3 / 4,5 / 6,7). */
__device__ __forceinline__ void tsr__wp_pairs(uint2 w, unsigned q[4])
{
    q[0] = __byte_perm(w.x, 0, 0x4140);
    q[1] = __byte_perm(w.x, 0, 0x4342);
    q[2] = __byte_perm(w.y, 0, 0x4140);
    q[3] = __byte_perm(w.y, 0, 0x4342);
}

/* This lane's 8 source bytes of mapped row yy (-1: the constant border's row): one 8-byte load
 * inside the image (scol is the lane's first column in row 0). EDGE warps (segments that cross
 * the image's left or right edge, or unaligned sources) take the border-mapped path, out of line,
 * where their lanes need it; interior warps are compiled without it, free of the call's
 * register cost. */
template <int EDGE>
__device__ __forceinline__ uint2 tsr__wp_load(const tsr__box_args &a, int yy, const uint8_t *scol, int fast, int xs,
                                              int o0)
{
    if (yy < 0) {
        unsigned splat = (unsigned)a.value * 0x01010101u;
        return make_uint2(splat, splat);
    }
    if (!EDGE || fast) return __ldg((const uint2 *)(scol + (size_t)yy * a.sstride));
    return tsr__fast_load_edge<uint8_t, 1>(a, tsr__cu_row<uint8_t>(a.src, a.sstride, yy), xs, o0);
}

/* The output row y of a warp's segment from its column sums c, by prefix sums in shared memory
 * (see the kernel's comment). */
template <int THRESH>
__device__ __forceinline__ void tsr__wp_row(const tsr__box_args &a, const tsr__warp_geom &g, const unsigned c[4],
                                            unsigned *P, const unsigned *Phi, const unsigned *Plo, int lane, int x0,
                                            int nout, int y)
{
    const int o0 = TSR_WP_CPT * lane;
    /* Prefix of the 256 column sums: lane-serial, then across the warp. */
    unsigned p[8];
    p[0] = c[0] & 0xffffu;
    p[1] = p[0] + (c[0] >> 16);
    p[2] = p[1] + (c[1] & 0xffffu);
    p[3] = p[2] + (c[1] >> 16);
    p[4] = p[3] + (c[2] & 0xffffu);
    p[5] = p[4] + (c[2] >> 16);
    p[6] = p[5] + (c[3] & 0xffffu);
    p[7] = p[6] + (c[3] >> 16);
    unsigned incl = p[7];
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        unsigned n = __shfl_up_sync(0xffffffffu, incl, o);
        if (lane >= o) incl += n;
    }
    const unsigned base = incl - p[7];
    *(uint4 *)(P + o0) = make_uint4(p[0] + base, p[1] + base, p[2] + base, p[3] + base);
    *(uint4 *)(P + o0 + 4) = make_uint4(p[4] + base, p[5] + base, p[6] + base, p[7] + base);
    __syncwarp();
    const uint8_t *srow = THRESH ? tsr__cu_row<uint8_t>(a.src, a.sstride, y) + x0 : NULL;
    uint8_t *drow = tsr__cu_row<uint8_t>(a.dst, a.dstride, y) + x0;
#pragma unroll
    for (int j = 0; j < 8; j++) {
        const int o = lane + 32 * j;
        if (o < nout) {
            unsigned m = __umulhi(Phi[32 * j] - Plo[32 * j] + g.half, g.magic) >> g.shift;
            if (THRESH) {
                int diff = (int)srow[o] - (int)m;
                int pass = a.inverse ? diff <= -a.idelta : diff > -a.idelta;
                m = pass ? (unsigned)a.maxval : 0u;
            }
            drow[o] = (uint8_t)m;
        }
    }
    __syncwarp();   /* the next row overwrites P */
}

/* The output row y of a warp's segment for a compile-time horizontal radius R <= 8, all in
 * registers: the R columns beyond each end of the lane's 8 come from its neighbours by shuffle,
 * the first window is summed and the next seven slide by one 3-input add each; lanes 1..30
 * write their 8 outputs with one 8-byte store (lanes 0 and 31 are the halo). */
template <int THRESH, int R>
__device__ __forceinline__ void tsr__sl_row(const tsr__box_args &a, const tsr__warp_geom &g, const unsigned c[4],
                                            int lane, int xo, int full, int y)
{
    unsigned v[8 + 2 * R];   /* v[i]: the column sum at lane offset i - R */
#pragma unroll
    for (int k = 0; k < 4; k++) {
        v[R + 2 * k] = c[k] & 0xffffu;
        v[R + 2 * k + 1] = c[k] >> 16;
    }
#pragma unroll
    for (int k = 0; k < 4; k++) {
        if (2 * k + 1 >= 8 - R) {   /* the left neighbour's columns 2k, 2k+1 are offsets 2k-8, 2k-7 */
            unsigned n = __shfl_up_sync(0xffffffffu, c[k], 1);
            if (2 * k - 8 >= -R) v[R + 2 * k - 8] = n & 0xffffu;
            v[R + 2 * k - 7] = n >> 16;
        }
        if (2 * k < R) {            /* the right neighbour's columns 2k, 2k+1 are offsets 8+2k, 9+2k */
            unsigned n = __shfl_down_sync(0xffffffffu, c[k], 1);
            v[R + 8 + 2 * k] = n & 0xffffu;
            if (2 * k + 1 < R) v[R + 9 + 2 * k] = n >> 16;
        }
    }
    if (lane == 0 || lane == 31 || xo >= a.w) return;
    unsigned sum = g.half, m[8];
#pragma unroll
    for (int i = 0; i <= 2 * R; i++) sum += v[i];
    m[0] = __umulhi(sum, g.magic) >> g.shift;
#pragma unroll
    for (int j = 1; j < 8; j++) {
        sum = sum + v[j + 2 * R] - v[j - 1];
        m[j] = __umulhi(sum, g.magic) >> g.shift;
    }
    const uint8_t *srow = THRESH ? tsr__cu_row<uint8_t>(a.src, a.sstride, y) + xo : NULL;
    uint8_t *drow = tsr__cu_row<uint8_t>(a.dst, a.dstride, y) + xo;
    if (THRESH) {
        uint2 sv = make_uint2(0, 0);
        if (full) sv = __ldg((const uint2 *)srow);
        else
#pragma unroll
            for (int j = 0; j < 8; j++)
                if (xo + j < a.w) tsr__pk_set<uint8_t>(sv, j, srow[j]);
#pragma unroll
        for (int j = 0; j < 8; j++) {
            int diff = (int)tsr__pk_get<uint8_t>(sv, j) - (int)m[j];
            int pass = a.inverse ? diff <= -a.idelta : diff > -a.idelta;
            m[j] = pass ? (unsigned)a.maxval : 0u;
        }
    }
    if (full) {
        uint2 res;
        res.x = __byte_perm(__byte_perm(m[0], m[1], 0x0040), __byte_perm(m[2], m[3], 0x0040), 0x5410);
        res.y = __byte_perm(__byte_perm(m[4], m[5], 0x0040), __byte_perm(m[6], m[7], 0x0040), 0x5410);
        *(uint2 *)drow = res;
    } else {
#pragma unroll
        for (int j = 0; j < 8; j++)
            if (xo + j < a.w) drow[j] = (uint8_t)m[j];
    }
}

/* Every strip of this warp's segment: the initial column sums (loads in batches), then per
 * output row the row (prefix path for R == 0, register path for R in 1..8) and the window's
 * slide, the entering and leaving rows loaded one row ahead. */
template <int THRESH, int R, int EDGE>
__device__ __forceinline__ void tsr__wp_strips(const tsr__box_args &a, const tsr__warp_geom &g, unsigned *P, int lane,
                                               int x0, int fast)
{
    const int xs = x0 - g.pad_l, o0 = TSR_WP_CPT * lane, xo = xs + o0;
    const uint8_t *scol = (const uint8_t *)a.src + xo;
    const int nout = min(g.ow, a.w - x0);
    const unsigned *Phi = P + g.pad_l + a.rx + lane, *Plo = Phi - (2 * a.rx + 1);
    const int full = g.vec_dst && xo + TSR_WP_CPT <= a.w;

    for (int strip = blockIdx.y; strip < g.nstrips; strip += gridDim.y) {
        const int y0 = strip * g.strip_h, y1 = min(a.h, y0 + g.strip_h);
        unsigned c[4] = {0, 0, 0, 0}, q[4], r[4];
#pragma unroll 8
        for (int k = -a.ry; k <= a.ry; k++) {
            tsr__wp_pairs(tsr__wp_load<EDGE>(a, tsr__cu_border_index(y0 + k, a.h, a.border), scol, fast, xs, o0), q);
#pragma unroll
            for (int j = 0; j < 4; j++) c[j] += q[j];
        }
        for (int y = y0; y < y1; y++) {
            uint2 win = make_uint2(0, 0), wout = make_uint2(0, 0);
            if (y + 1 < y1) {
                win = tsr__wp_load<EDGE>(a, tsr__cu_border_index(y + 1 + a.ry, a.h, a.border), scol, fast, xs, o0);
                wout = tsr__wp_load<EDGE>(a, tsr__cu_border_index(y - a.ry, a.h, a.border), scol, fast, xs, o0);
            }
            if (R == 0) tsr__wp_row<THRESH>(a, g, c, P, Phi, Plo, lane, x0, nout, y);
            else tsr__sl_row<THRESH, R>(a, g, c, lane, xo, full, y);
            tsr__wp_pairs(win, q);
            tsr__wp_pairs(wout, r);
#pragma unroll
            for (int j = 0; j < 4; j++) c[j] = c[j] + q[j] - r[j];
        }
    }
}

template <int THRESH, int R>
__global__ void __launch_bounds__(TSR_WP_WARPS * 32, 8) tsr__box_warp_kernel(tsr__box_args a, tsr__warp_geom g)
{
    __shared__ __align__(16) unsigned sp[R == 0 ? TSR_WP_WARPS : 1][R == 0 ? TSR_WP_SEG : 4];
    const int lane = threadIdx.x & 31, wib = threadIdx.x >> 5;
    const int seg = blockIdx.x * TSR_WP_WARPS + wib;
    if (seg >= g.nseg) return;   /* the whole warp leaves; nothing below waits for other warps */
    const int x0 = seg * g.ow, xc = x0 - g.pad_l + TSR_WP_CPT * lane;
    const int fast = g.vec && xc >= 0 && xc + TSR_WP_CPT <= a.w;
    unsigned *P = sp[R == 0 ? wib : 0];
    if (__all_sync(0xffffffffu, fast)) tsr__wp_strips<THRESH, R, 0>(a, g, P, lane, x0, fast);
    else tsr__wp_strips<THRESH, R, 1>(a, g, P, lane, x0, fast);
}

/* Plan a warp launch; 0 when this variant does not take the arguments (not 8-bit gray, a
 * window taller than 255 rows, a constant value above 255, a halo leaving fewer than 8 outputs
 * per segment, or no exact multiply-high for the area). With g NULL only answers that.
 * TSR_CUDA_WARP_STRIP overrides the rows per strip for measurements. */
static int tsr__box_warp_plan(const tsr__box_args &a, int depth, const tsr_image *src, const tsr_image *dst,
                              tsr__warp_geom *g)
{
    /* Above radius 48 box/fast is as fast (measured at 64: 550 vs 580 us), so it takes over. */
    if (depth != TSR_U8 || a.cn != 1 || a.rx > TSR_WP_RMAX || a.ry > TSR_WP_RMAX || a.value > 255) return 0;
    /* The register path (rx <= 8) takes its halo from the neighbouring lanes: one lane each side. */
    long long pad_l = a.rx <= TSR_WP_RMAX_SLIDE && tsr__env_int("TSR_CUDA_WARP_SLIDE", 1) ? 8 : ((long long)a.rx + 1 + 7) / 8 * 8;
    long long ow = pad_l == 8 && a.rx <= TSR_WP_RMAX_SLIDE ? TSR_WP_SEG - 16
                                                           : ((long long)TSR_WP_SEG - pad_l - a.rx) / 8 * 8;   /* 8-aligned */
    if (ow < 8) return 0;
    unsigned magic;
    int shift;
    if (!tsr__box_magic(a.mean.area, a.mean.half, &magic, &shift)) return 0;
    if (!g) return 1;
    long long nseg = (a.w + ow - 1) / ow;
    long long sh = a.ry + 1;   /* short strips: many warps (sweep in docs/perf-notes.md) */
    if (sh < 8) sh = 8;
    sh = tsr__env_int("TSR_CUDA_WARP_STRIP", (int)sh);
    if (sh < 1) sh = 1;
    if (sh > a.h) sh = a.h;
    g->pad_l = (int)pad_l;
    g->ow = (int)ow;
    g->nseg = (int)nseg;
    g->strip_h = (int)sh;
    g->nstrips = (int)((a.h + sh - 1) / sh);
    g->half = (unsigned)a.mean.half;
    g->magic = magic;
    g->shift = shift;
    g->vec = tsr__cu_aligned(src->data, src->stride, 8);
    g->vec_dst = tsr__cu_aligned(dst->data, dst->stride, 8);
    return 1;
}

/* Queue the warp kernel for box or threshold arguments (plan checked by supports()). */
static tsr_status tsr__box_warp_run(const tsr__box_args &a, const tsr_image *src, const tsr_image *dst,
                                    cudaStream_t st, const char *what)
{
    tsr__warp_geom g;
    if (!tsr__box_warp_plan(a, src->depth, src, dst, &g))
        return tsr__fail(TSR_E_UNSUPPORTED, "%s: only 8-bit one-channel images with radii up to %d", what, TSR_WP_RMAX);
    dim3 grid(tsr__div_up((unsigned)g.nseg, TSR_WP_WARPS),
              (unsigned)(g.nstrips < TSR_CU_MAX_GRID_Y ? g.nstrips : TSR_CU_MAX_GRID_Y));
    /* Horizontal radii up to 8 take the register path (R = rx), larger ones the prefix path. */
    int R = a.rx <= TSR_WP_RMAX_SLIDE && tsr__env_int("TSR_CUDA_WARP_SLIDE", 1) ? a.rx : 0;
    unsigned nt = TSR_WP_WARPS * 32;
#define TSR__WP_CASE(K)                                                                                  \
    case K:                                                                                              \
        if (a.thresh) tsr__box_warp_kernel<1, K><<<grid, nt, 0, st>>>(a, g);                             \
        else tsr__box_warp_kernel<0, K><<<grid, nt, 0, st>>>(a, g);                                      \
        break
    switch (R) {
        TSR__WP_CASE(1); TSR__WP_CASE(2); TSR__WP_CASE(3); TSR__WP_CASE(4);
        TSR__WP_CASE(5); TSR__WP_CASE(6); TSR__WP_CASE(7); TSR__WP_CASE(8);
        default: TSR__WP_CASE(0);
    }
#undef TSR__WP_CASE
    return TSR_CUDA_LAUNCHED(what);
}

static int tsr__box_warp_supports(const tsr_image *src, const void *params)
{
    tsr_image dummy = *src;
    return tsr__box_warp_plan(tsr__box_args_box(src, &dummy, (const tsr_box_params *)params), src->depth, src, &dummy,
                              NULL);
}

/* box/warp: see the kernel's comment. */
static tsr_status tsr__box_warp(const tsr_image *src, tsr_image *dst, const void *params, const tsr_exec *ex)
{
    tsr__box_args a = tsr__box_args_box(src, dst, (const tsr_box_params *)params);
    return tsr__box_warp_run(a, src, dst, (cudaStream_t)ex->stream, "box/warp kernel");
}

static int tsr__threshold_warp_supports(const tsr_image *src, const void *params)
{
    tsr_image dummy = *src;
    return tsr__box_warp_plan(tsr__box_args_threshold(src, &dummy, (const tsr_threshold_params *)params), src->depth,
                              src, &dummy, NULL);
}

/* threshold/warp: box/warp's means with the comparison as the output step. */
static tsr_status tsr__threshold_warp(const tsr_image *src, tsr_image *dst, const void *params, const tsr_exec *ex)
{
    tsr__box_args a = tsr__box_args_threshold(src, dst, (const tsr_threshold_params *)params);
    return tsr__box_warp_run(a, src, dst, (cudaStream_t)ex->stream, "threshold/warp kernel");
}

/* ------------------------------------------------------------------------ reg */

/* box/reg and threshold/reg: 8-bit gray, compile-time radii up to 2 (the small windows where
 * box/warp spends ~28 instructions per pixel and NPP is ahead). Like box/warp each warp is an
 * independent machine over a segment of columns and a strip of rows, but everything stays in
 * registers: a lane owns 16 columns (one 16-byte load per source row), the 2*RY+1 source rows of
 * the window plus TSR_RG_AHEAD prefetched rows live in a register ring (the loop is unrolled by
 * the ring's length, so every ring index is static and no row is ever loaded twice), the 16
 * column sums are 8 packed 16-bit pairs updated with one 3-input add per pair, and the horizontal
 * window is added pair-wise too: the odd-offset pairs come from one byte permute of two
 * neighbouring pairs. Sums stay below 2^16 (5 * 5 * 255). Larger windows go to box/wide, which
 * measured faster from radius 3 up (r = 3: 85.1 against 91.4 us on 8192x8192, 20.0 against 28.5
 * at 3840x2160) and much faster than this kernel's former variant for radii 4 to 7 that
 * reloaded the leaving row (r = 7: 101 against 197 us). The mean is one
 * multiply-high per pixel, floor((s + half) / area) = umulhi(s + half, ceil(2^32 / area)), exact
 * for area < 4096 (the host checks it). Lanes 0 and 31 are the halo: each warp writes the 480
 * columns of lanes 1..30 and re-reads 16 columns on each side. Only whole aligned 16-column
 * groups with their halo inside the image are done this way, so no lane ever maps a column
 * through the border; the first 16 and the last 16-31 columns are left to one more column of
 * blocks that stages their windows in shared memory (a per-lane border path cost 20% more
 * instructions and diverged: 21 of 32 lanes active). */
#ifndef TSR_RG_MINB
#define TSR_RG_MINB 1   /* blocks per SM the register allocation must allow (measurement knob) */
#endif
enum { TSR_RG_CPT = 16, TSR_RG_LANES_OUT = 30, TSR_RG_OW = TSR_RG_LANES_OUT * TSR_RG_CPT, TSR_RG_WARPS = 4,
       TSR_RG_RMAX = 2, TSR_RG_RMAX_THRESH = 3, TSR_RG_AHEAD = 2, TSR_RN_RMAX_SQUARE = 12, TSR_RN_RMAX_PACKED = 7 };

/* Geometry and mean constants of one reg launch (see tsr__box_reg_plan). */
struct tsr__reg_geom {
    int nseg, strip_h, nstrips;
    unsigned half2;     /* half in both 16-bit halves */
    unsigned tbase2;    /* threshold windows up to 64 pixels: half + (tau - 1) area + 2^15 in both halves
                           (tsr__rg_row) */
    unsigned magic;     /* ceil(2^32 / area) */
    int xend;           /* outputs cover [16 HL, xend); xend = w rounded down to 16, less 16 HL (HL halo lanes:
                           1, or 2 for box/stream beyond radius 16) */
    int ahead;          /* box/ring: rows queued ahead, which picks its kernel (tsr__rn_ahead_for); host only */
    int interior;       /* box/ring, box/stream: the largest ry whose interior strips step row pointers */
    int ldg_start;      /* box/stream: interior strips sum their first window by plain loads (tsr__rs_strip) */
    /* Packed means with the rounding folded in (tsr__rg_row, FOLD): the high mean's 64-bit addend
     * half2 M (masked windows: (half << 16) M) and the low mean's multiplier 2^16. They come from
     * the host so that the compiler cannot regroup them: given half2 M it multiplied out
     * (s + half2) M with a 64-bit add and carries, and the shift by 2^16 became an integer-pipe LEA. */
    unsigned long long pk_hi_add;
    unsigned pk_shift;
};

/* This lane's 16 source bytes of row y (unmapped: the row border applies here) with one 16-byte
 * load; lanes right of the right halo (load == 0) take zeros. */
__device__ __forceinline__ uint4 tsr__rg_load(const tsr__box_args &a, int y, int xc, int load)
{
    int yy = (unsigned)y < (unsigned)a.h ? y : tsr__rg_border_row(y, a.h, a.border);
    if (yy < 0) {
        unsigned splat = (unsigned)a.value * 0x01010101u;
        return make_uint4(splat, splat, splat, splat);
    }
    if (!load) return make_uint4(0, 0, 0, 0);
    return __ldg((const uint4 *)(tsr__cu_row<uint8_t>(a.src, a.sstride, yy) + xc));
}

/* Windows up to 15x15 take their means straight from the packed pair s = (hi << 16) | lo of
 * window sums (plus half), with no unpacking: with M = ceil(2^24 / A), A = (2 RX + 1)(2 RY + 1),
 * byte 1 of umulhi(s, M) is floor(hi / A) and byte 1 of umulhi(s << 16, M) is floor(lo / A), and
 * the packing picks byte 1. Exact when X e / 2^24 + X / 2^16 < 1 (X = 255 A + (A - 1) / 2 the
 * largest s, e = M A - 2^24): what the excess of M and the low half add below the hi quotient
 * stays under 1 / A. That holds for every window up to 7x7 and the squares up to 13x13, checked
 * exhaustively for each. 15x15 masks the low half off first (umulhi(s & 0xffff0000, M)), which
 * needs only X e / 2^24 < 1 (tsr__rg_pk_masked). The unpacking shifts and masks ran on the integer ALU
 * pipe, the kernel's busiest (Nsight Compute: math-pipe throttle); the multiplies run on the
 * FMA pipe. */
#ifndef TSR_RG_PK
#define TSR_RG_PK 1   /* measurement knob: 0 unpacks every window sum before its multiply-high */
#endif
#ifndef TSR_RG_DP
#define TSR_RG_DP 1   /* measurement knob: 0 slides the 32-bit window sums (ry >= 8) column by column */
#endif
#ifndef TSR_RG_SUMCMP
#define TSR_RG_SUMCMP 1   /* measurement knob: 0 divides first for every threshold window */
#endif
#ifndef TSR_RG_PK_FOLD
#define TSR_RG_PK_FOLD 1   /* measurement knob: 0 adds the rounding half to every packed window sum */
#endif
#ifndef TSR_RG_PK_MASKED
#define TSR_RG_PK_MASKED TSR_RG_PK   /* measurement knob: 0 leaves 15x15 unpacked */
#endif
__host__ __device__ constexpr unsigned long long tsr__rg_area(int rx, int ry)
{
    return (2ull * rx + 1) * (2ull * ry + 1);
}
__host__ __device__ constexpr unsigned tsr__rg_pk_magic(int rx, int ry)
{
    return (unsigned)(((1ull << 24) + tsr__rg_area(rx, ry) - 1) / tsr__rg_area(rx, ry));
}
/* X, the largest window sum plus half, and e, the excess M A - 2^24, of the conditions above */
__host__ __device__ constexpr unsigned long long tsr__rg_pk_x(int rx, int ry)
{
    return 255 * tsr__rg_area(rx, ry) + (tsr__rg_area(rx, ry) - 1) / 2;
}
__host__ __device__ constexpr unsigned long long tsr__rg_pk_e(int rx, int ry)
{
    return tsr__rg_pk_magic(rx, ry) * tsr__rg_area(rx, ry) - (1ull << 24);
}
__host__ __device__ constexpr bool tsr__rg_pk_exact(int rx, int ry)
{
    return TSR_RG_PK && tsr__rg_pk_x(rx, ry) * (tsr__rg_pk_e(rx, ry) * 65536 + (1ull << 24)) < (1ull << 40);
}
__host__ __device__ constexpr bool tsr__rg_pk_masked(int rx, int ry)
{
    return TSR_RG_PK_MASKED && !tsr__rg_pk_exact(rx, ry) && tsr__rg_pk_x(rx, ry) < 65536 &&
           tsr__rg_pk_x(rx, ry) * tsr__rg_pk_e(rx, ry) < (1ull << 24);
}

/* Threshold windows of up to 64 pixels compare without dividing: with m = floor((W + half) / A)
 * and tau = 1 - idelta clamped to [-255, 256] (s - m lies in [-255, 255]), the pixel passes
 * (s - m >= tau) exactly when W + half + (tau - 1) A - s A < 0. Each half of the packed pair
 * z = (W + half + (tau - 1) A + 2^15) - s A lies in [2^15 - 511 A, 2^15 + 510.5 A], within
 * [0, 2^16) for A <= 64, so one multiply-add per pair of pixels (no borrow crosses the halves)
 * leaves the outcome in bit 15 of each half: for blocks 3, 5 and 7 this replaces the
 * multiply-highs, the means' packing and the subtraction (five instructions a pair). */
__host__ __device__ constexpr bool tsr__rg_sumcmp(int rx, int ry)
{
    return TSR_RG_SUMCMP && tsr__rg_area(rx, ry) <= 64;
}

/* The output row of this lane from its column sums c (and for threshold the source row sv):
 * horizontal window sums pair by pair (summed up to RX = 3, slid beyond), means by
 * multiply-high, bytes packed and stored at drow with one 16-byte store where the lane is whole. */
template <int THRESH, int RX, int RY>
__device__ __forceinline__ void tsr__rg_row(const tsr__box_args &a, const tsr__reg_geom &g, const unsigned c[8],
                                            uint4 sv, unsigned char *drow, int store)
{
    enum { NP = (RX + 1) / 2 };   /* pairs needed from each neighbour */
    unsigned P[8 + 2 * NP + 1];   /* P[k + NP]: the pair (v[2k], v[2k+1]) for k in -NP..8+NP-1 */
#pragma unroll
    for (int k = 0; k < 8; k++) P[k + NP] = c[k];
#pragma unroll
    for (int k = 0; k < NP; k++) {   /* windows wider than 33 columns (box/stream) reach two lanes over */
        P[k] = k >= NP - 8 ? __shfl_up_sync(0xffffffffu, c[8 - NP + k], 1) : __shfl_up_sync(0xffffffffu, c[16 - NP + k], 2);
        P[8 + NP + k] = k < 8 ? __shfl_down_sync(0xffffffffu, c[k], 1) : __shfl_down_sync(0xffffffffu, c[k - 8], 2);
    }
    P[8 + 2 * NP] = 0;
    if (!store) return;
    if constexpr (RX > TSR_RN_RMAX_PACKED && TSR_RG_DP) {
        /* Windows wider than 15 columns overflow the packed halves: 32-bit sums built by dp2a,
         * which adds the two 16-bit halves of a word, each times a byte weight of a constant, to
         * a 32-bit sum in one instruction (on the FMA pipe, which the multiply-highs share, while
         * the byte permutes of the column sums keep the integer pipe busy). The first window is
         * RX + 1 of them over its pairs; then each pair of pixels 2k, 2k + 1 slides by the packed
         * differences D = (entering - leaving) of its two columns, made signed 16-bit halves by
         * a bias and a flip of their top bits (|difference| <= 33 x 255, so no borrow crosses),
         * and two dp2a from pixel 2k's sum: weights (1, 0) for pixel 2k + 1, (1, 1) for 2k + 2. */
        unsigned m[16];
        int s = (int)(g.half2 & 0xffffu);
#pragma unroll
        for (int k = -((RX + 1) / 2); k <= RX / 2; k++) {   /* pairs holding columns -RX .. RX */
            const int lo = 2 * k >= -RX && 2 * k <= RX, hi = 2 * k + 1 >= -RX && 2 * k + 1 <= RX;
            s = __dp2a_lo((int)P[NP + k], lo | hi << 8, s);
        }
        m[0] = __umulhi((unsigned)s, g.magic);
#pragma unroll
        for (int k = 0; k < 8; k++) {
            /* columns 2k + RX + 1, 2k + RX + 2 entering; 2k - RX, 2k - RX + 1 leaving: one of the
             * two offsets is even (a pair as it is), the other odd (a byte permute of two) */
            const unsigned in = (RX + 1) % 2 == 0 ? P[NP + k + (RX + 1) / 2]
                                                  : __byte_perm(P[NP + k + RX / 2], P[NP + k + RX / 2 + 1], 0x5432);
            const unsigned out = RX % 2 == 0 ? P[NP + k - RX / 2]
                                             : __byte_perm(P[NP + k - (RX + 1) / 2], P[NP + k - (RX + 1) / 2 + 1], 0x5432);
            const int d = (int)((in - out + 0x80008000u) ^ 0x80008000u);
            m[2 * k + 1] = __umulhi((unsigned)__dp2a_lo(d, 0x0001, s), g.magic);
            if (k < 7) {
                s = __dp2a_lo(d, 0x0101, s);
                m[2 * k + 2] = __umulhi((unsigned)s, g.magic);
            }
        }
        *(uint4 *)drow = tsr__rg_pack16<THRESH, 0>(a, m, sv);
        return;
    } else if constexpr (RX > TSR_RN_RMAX_PACKED) {
        /* Windows wider than 15 columns overflow the packed halves (31 x 31 x 255 at radius 15):
         * the column sums of lane offsets -RX .. 15 + RX as 32-bit words, the first window summed,
         * then slid one column in and one out per pixel (one 3-input add). */
        unsigned v[16 + 2 * RX], m[16];
#pragma unroll
        for (int j = -RX; j < 16 + RX; j++) {   /* column j is half (j & 1) of pair floor(j / 2) */
            const unsigned p = P[(j + 2 * NP) / 2];
            v[j + RX] = (j + 2 * NP) & 1 ? p >> 16 : p & 0xffffu;
        }
        unsigned s = g.half2 & 0xffffu;
#pragma unroll
        for (int j = 0; j <= 2 * RX; j++) s += v[j];
#pragma unroll
        for (int i = 0; i < 16; i++) {
            if (i > 0) s = s + v[i + 2 * RX] - v[i - 1];
            m[i] = __umulhi(s, g.magic);
        }
        *(uint4 *)drow = tsr__rg_pack16<THRESH, 0>(a, m, sv);
        return;
    }
    /* pair(j): the column sums of lane offsets j and j + 1 as a packed pair, from P directly
     * (even j) or from the high half of one pair and the low half of the next (odd j). */
#define TSR__RG_PAIR(j) (((j) & 1) == 0 ? P[NP + (j) / 2] : __byte_perm(P[NP + ((j) - 1) / 2], P[NP + ((j) - 1) / 2 + 1], 0x5432))
    enum { SUMCMP = THRESH && tsr__rg_sumcmp(RX, RY), PK = tsr__rg_pk_exact(RX, RY) || tsr__rg_pk_masked(RX, RY),
           FOLD = !SUMCMP && PK && TSR_RG_PK_FOLD };
    enum : unsigned { PKM = tsr__rg_pk_magic(RX, RY) };
    /* FOLD: the rounding half joins the multiplies instead of every window sum: the low mean's
     * (s << 16) + (half << 16) is one multiply-add (modulo 2^32 it is (low half + half) << 16,
     * since the low half plus half stays below 2^16), and the high mean is the top word of the 64-bit
     * s M + half2 M (one wide multiply-add; masked: (s & 0xffff0000) M + (half << 16) M), which
     * equal umulhi((s + half2) << 16, M) and umulhi(s + half2, M) exactly. The sum of the three
     * pairs is then one 3-input add; one add fewer per pair of pixels. */
    const unsigned base = SUMCMP ? g.tbase2 : FOLD ? 0u : g.half2;
    const unsigned lo_add = g.half2 << 16;
    const unsigned sw[4] = {sv.x, sv.y, sv.z, sv.w};
    unsigned m[16], s = base;
#pragma unroll
    for (int d = -RX; d <= RX; d++) s += TSR__RG_PAIR(d);   /* the window of pixels 0 and 1 */
#pragma unroll
    for (int k = 0; k < 8; k++) {
        if (k > 0 && RX <= 3) {   /* the pair-wise sum of the 2RX+1 pairs */
            s = base;
#pragma unroll
            for (int d = -RX; d <= RX; d++) s += TSR__RG_PAIR(2 * k + d);
        } else if (k > 0) {   /* wider: slid by two pairs in, two out (exact modulo 2^32: no half
                               * ends negative, so no borrow is left between them) */
            s = s + TSR__RG_PAIR(2 * k + RX - 1) + TSR__RG_PAIR(2 * k + RX) - TSR__RG_PAIR(2 * k - 2 - RX) -
                TSR__RG_PAIR(2 * k - 1 - RX);
        }
        if constexpr (SUMCMP) {   /* z = base + W - s A per half: the outcome in bit 15 */
            m[k] = s + __byte_perm(sw[k >> 1], 0, k & 1 ? 0x4342 : 0x4140) * (unsigned)-(int)tsr__rg_area(RX, RY);
        } else if constexpr (FOLD) {
            m[2 * k] = __umulhi(tsr__mad_lo(s, g.pk_shift, lo_add), PKM);
            m[2 * k + 1] = tsr__mad_wide_hi(tsr__rg_pk_masked(RX, RY) ? s & 0xffff0000u : s, PKM, g.pk_hi_add);
        } else if constexpr (PK) {
            m[2 * k] = __umulhi(s << 16, tsr__rg_pk_magic(RX, RY));
            m[2 * k + 1] = __umulhi(tsr__rg_pk_masked(RX, RY) ? s & 0xffff0000u : s, tsr__rg_pk_magic(RX, RY));
        } else {
            m[2 * k] = __umulhi(s & 0xffffu, g.magic);
            m[2 * k + 1] = __umulhi(s >> 16, g.magic);
        }
    }
#undef TSR__RG_PAIR
    if constexpr (SUMCMP) {   /* 0xff bytes where bit 15 is set (fails), flipped unless inverse, masked by maxval */
        const unsigned flip = a.inverse ? 0u : 0xffffffffu, mv = (unsigned)a.maxval * 0x01010101u;
        *(uint4 *)drow = make_uint4((tsr__prmt_sign(m[0], m[1], 0xfdb9) ^ flip) & mv, (tsr__prmt_sign(m[2], m[3], 0xfdb9) ^ flip) & mv,
                                    (tsr__prmt_sign(m[4], m[5], 0xfdb9) ^ flip) & mv, (tsr__prmt_sign(m[6], m[7], 0xfdb9) ^ flip) & mv);
    } else {
        *(uint4 *)drow = tsr__rg_pack16<THRESH, PK ? 1 : 0>(a, m, sv);
    }
}

/* Every strip of this warp's segment. The ring holds the source rows y - RY .. y + RY + AHEAD
 * at output row y; slot of row y0 + i is i % N, static inside the unrolled body. */
template <int THRESH, int RX, int RY>
__device__ __forceinline__ void tsr__rg_strips(const tsr__box_args &a, const tsr__reg_geom &g, int lane, int xc,
                                               int load, int out)
{
    enum { N = 2 * RY + 1 + TSR_RG_AHEAD };
    for (int strip = blockIdx.y; strip < g.nstrips; strip += gridDim.y) {
        const int y0 = strip * g.strip_h, y1 = min(a.h, y0 + g.strip_h);
        uint4 ring[N];
        unsigned c[8] = {0, 0, 0, 0, 0, 0, 0, 0};
#pragma unroll
        for (int i = 0; i < N; i++) ring[i] = tsr__rg_load(a, y0 - RY + i, xc, load);
#pragma unroll
        for (int i = 0; i < 2 * RY + 1; i++) tsr__rg_acc(c, ring[i]);
        /* Whole groups of N rows, no early exit inside, so the compiler can interleave the
         * rows' independent horizontal work; rows past the strip (the image's last strip only:
         * the plan makes strip heights multiples of N) are computed but not stored. */
        for (int yb = y0; yb < y1; yb += N) {
#pragma unroll
            for (int k = 0; k < N; k++) {
                const int y = yb + k;
                /* slot of row y: (y - y0 + RY) % N; row y - RY: (y - y0) % N, which the row
                 * y + RY + 1 + AHEAD replaces once it has left the window. */
                tsr__rg_row<THRESH, RX, RY>(a, g, c, ring[(k + RY) % N], tsr__cu_row<uint8_t>(a.dst, a.dstride, y) + xc,
                                        out && y < y1);
                tsr__rg_slide(c, ring[(k + 2 * RY + 1) % N], ring[k % N]);
                ring[k % N] = tsr__rg_load(a, y + 1 + RY + TSR_RG_AHEAD, xc, load);
            }
        }
    }
}

/* The columns the warps leave out, [0, 16 HL) and [xend, w), of the rows of strip 'strip' (32 to
 * 47 columns with one halo lane, HL = 1; 64 to 79 with two: a fraction of a percent of a large
 * image), by the whole block through shared memory 'smem' (tsr__rg_edge_bytes(RX, RY, HL) bytes)
 * in chunks of up to 16 rows: the chunk's source window mapped through the borders and staged
 * once, its column sums, then the row sums (whole windows up to ry = 6, running sums beyond:
 * tsr__rg_edge_run). Per-pixel windows (49 loads a pixel at radius 3, with every tap unrolled)
 * made these blocks, one in six of a launch at 8192x8192, the slow ones: with them skipped
 * box/ring r = 3 took 61 us instead of 72 (docs/perf-notes.md). */
enum { TSR_RG_EDGE_CH = 16 };
__host__ __device__ constexpr int tsr__rg_edge_cols(int rx, int hl = 1) { return (2 * hl + 1) * TSR_RG_CPT - 1 + 4 * rx; }
__host__ __device__ constexpr int tsr__rg_edge_bytes(int rx, int ry, int hl = 1)
{
    return ((TSR_RG_EDGE_CH + 2 * ry) * tsr__rg_edge_cols(rx, hl) + 15) / 16 * 16 +
           TSR_RG_EDGE_CH * tsr__rg_edge_cols(rx, hl) * 2;
}
/* tsr__rg_edge_tile's rows y0 .. y1 - 1 by running sums: the chunk's source rows staged a row per
 * warp (the border mapping once per row, no division per byte), then each column's sums slid
 * down the chunk by one thread (2 ry + 1 + 2 ch reads, not ch (2 ry + 1)), then the row sums slid
 * along pieces of 8 outputs (2 rx + 15 reads, not 8 (2 rx + 1)). With whole windows per element
 * the edge blocks' cost grew with the radius while the warps' does not, and they set box/stream's
 * time from radius 13 (H200, us, whole / running: 8192x8192 r = 16 / 24 / 32 70.7 / 105.9 / 133.4
 * against 64.3 / 84.3 / 97.2; 3840x2160 r = 16 / 24 21.5 / 46.1 against 18.8 / 27.0). Below ry =
 * TSR_RG_EDGE_RUN_RY the chains of dependent reads cost more than they save (box/ring r = 3..6 and
 * threshold blocks 7..13 lost 1-7%), so small windows keep the whole sums. */
#ifndef TSR_RG_EDGE_RUN
#define TSR_RG_EDGE_RUN 1   /* measurement knob: 0 sums every edge window whole */
#endif
#ifndef TSR_RG_EDGE_RUN_RY
#define TSR_RG_EDGE_RUN_RY 7   /* the smallest ry whose edge columns take running sums */
#endif
template <int RX, int RY, int HL>
__device__ __forceinline__ void tsr__rg_edge_run(const tsr__box_args &a, const tsr__reg_geom &g, int y0, int y1,
                                                 unsigned char *smem)
{
    enum { CH = TSR_RG_EDGE_CH, LW = HL * TSR_RG_CPT, L = LW + 2 * RX, TC = tsr__rg_edge_cols(RX, HL), PW = 8 };
    unsigned char(*T)[TC] = (unsigned char(*)[TC])smem;
    unsigned short(*V)[TC] = (unsigned short(*)[TC])(smem + ((CH + 2 * RY) * TC + 15) / 16 * 16);
    const int nr = a.w - g.xend, tc = L + nr + 2 * RX;
    const int pl = LW / PW, np = pl + (nr + PW - 1) / PW;   /* pieces of a row: left, then right */
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, nw = blockDim.x >> 5;
    for (int t0 = y0; t0 < y1; t0 += CH) {
        const int ch = min((int)CH, y1 - t0), tr = ch + 2 * RY;
        __syncthreads();   /* the previous chunk's readers are done */
        for (int r = warp; r < tr; r += nw) {
            const int yy = tsr__cu_border_index(t0 - RY + r, a.h, a.border);
            const uint8_t *row = yy >= 0 ? tsr__cu_row<uint8_t>(a.src, a.sstride, yy) : nullptr;
            for (int c = lane; c < tc; c += 32) {
                const int xx = tsr__cu_border_index(c < L ? c - RX : g.xend - RX + (c - L), a.w, a.border);
                T[r][c] = row && xx >= 0 ? __ldg(row + xx) : (unsigned char)a.value;
            }
        }
        __syncthreads();
        for (int c = threadIdx.x; c < tc; c += blockDim.x) {
            unsigned s = 0;
#pragma unroll 8
            for (int j = 0; j <= 2 * RY; j++) s += T[j][c];
            V[0][c] = (unsigned short)s;
            for (int r = 1; r < ch; r++) {
                s += T[r + 2 * RY][c] - T[r - 1][c];
                V[r][c] = (unsigned short)s;
            }
        }
        __syncthreads();
        for (int i = threadIdx.x; i < ch * np; i += blockDim.x) {
            const int r = i / np, p = i - r * np, left = p < pl;
            const int col = left ? p * PW : LW + (p - pl) * PW;   /* the piece's first output */
            const int n = left ? (int)PW : min((int)PW, nr - (p - pl) * PW);
            const int c = left ? col : L + (col - LW), x = left ? col : g.xend + (col - LW);
            unsigned s = 0;
#pragma unroll 8
            for (int k = 0; k <= 2 * RX; k++) s += V[r][c + k];
            uint8_t *drow = tsr__cu_row<uint8_t>(a.dst, a.dstride, t0 + r);
            for (int j = 0; j < n; j++) {
                if (j) s += V[r][c + j + 2 * RX] - V[r][c + j - 1];
                drow[x + j] = tsr__box_result<uint8_t>(a, s, t0 + r, (size_t)(x + j));
            }
        }
    }
}

/* tsr__rg_edge_tile's rows y0 .. y1 - 1 with every window summed whole (small windows). */
template <int RX, int RY, int HL>
__device__ __forceinline__ void tsr__rg_edge_whole(const tsr__box_args &a, const tsr__reg_geom &g, int y0, int y1,
                                                   unsigned char *smem)
{
    enum { CH = TSR_RG_EDGE_CH, LW = HL * TSR_RG_CPT, L = LW + 2 * RX, TC = tsr__rg_edge_cols(RX, HL) };
    unsigned char(*T)[TC] = (unsigned char(*)[TC])smem;   /* staged source: chunk rows + 2 RY */
    unsigned short(*V)[TC] = (unsigned short(*)[TC])(smem + ((CH + 2 * RY) * TC + 15) / 16 * 16);   /* column sums */
    /* tile column c < L is source column c - RX (left); from L on, xend - RX + (c - L) (right) */
    const int nr = a.w - g.xend, tc = L + nr + 2 * RX, ncols = LW + nr;
    for (int t0 = y0; t0 < y1; t0 += CH) {
        const int ch = min((int)CH, y1 - t0), tr = ch + 2 * RY;
        __syncthreads();   /* the previous chunk's readers are done */
        for (int i = threadIdx.x; i < tr * tc; i += blockDim.x) {
            const int r = i / tc, c = i - r * tc;
            const int xx = tsr__cu_border_index(c < L ? c - RX : g.xend - RX + (c - L), a.w, a.border);
            const int yy = tsr__cu_border_index(t0 - RY + r, a.h, a.border);
            T[r][c] = yy < 0 || xx < 0 ? (unsigned char)a.value : __ldg(tsr__cu_row<uint8_t>(a.src, a.sstride, yy) + xx);
        }
        __syncthreads();
        for (int i = threadIdx.x; i < ch * tc; i += blockDim.x) {
            const int r = i / tc, c = i - r * tc;
            unsigned s = 0;
#pragma unroll
            for (int j = 0; j <= 2 * RY; j++) s += T[r + j][c];
            V[r][c] = (unsigned short)s;
        }
        __syncthreads();
        for (int i = threadIdx.x; i < ch * ncols; i += blockDim.x) {
            const int r = i / ncols, col = i - r * ncols;
            const int left = col < LW, c = left ? col : L + (col - LW);   /* the window's first */
            const int x = left ? col : g.xend + (col - LW);
            unsigned s = 0;
#pragma unroll
            for (int k = 0; k <= 2 * RX; k++) s += V[r][c + k];
            tsr__cu_row<uint8_t>(a.dst, a.dstride, t0 + r)[x] = tsr__box_result<uint8_t>(a, s, t0 + r, (size_t)x);
        }
    }
}

template <int RX, int RY, int HL = 1>
__device__ __forceinline__ void tsr__rg_edge_tile(const tsr__box_args &a, const tsr__reg_geom &g, int strip,
                                                  unsigned char *smem)
{
    const int y0 = strip * g.strip_h, y1 = min(a.h, y0 + g.strip_h);
    if constexpr (TSR_RG_EDGE_RUN && RY >= TSR_RG_EDGE_RUN_RY) tsr__rg_edge_run<RX, RY, HL>(a, g, y0, y1, smem);
    else tsr__rg_edge_whole<RX, RY, HL>(a, g, y0, y1, smem);
}

/* The last column of blocks does the edge columns of its strips (one launch: at 3840x2160 a
 * second kernel's launch was a tenth of the time); the others run the warps. */
template <int THRESH, int RX, int RY>
__global__ void __launch_bounds__(TSR_RG_WARPS * 32, TSR_RG_MINB) tsr__box_reg_kernel(tsr__box_args a, tsr__reg_geom g)
{
    __shared__ __align__(16) unsigned char edge[tsr__rg_edge_bytes(RX, RY)];
    if (blockIdx.x == gridDim.x - 1) {
        for (int strip = blockIdx.y; strip < g.nstrips; strip += gridDim.y) tsr__rg_edge_tile<RX, RY>(a, g, strip, edge);
        return;
    }
    const int lane = threadIdx.x & 31;
    const int seg = blockIdx.x * TSR_RG_WARPS + (threadIdx.x >> 5);
    if (seg >= g.nseg) return;   /* the whole warp leaves; nothing waits for other warps */
    const int xc = seg * TSR_RG_OW + TSR_RG_CPT * lane;
    /* Lane 0 and the lane after the last output are halo; every loading lane is inside the row. */
    const int out = lane >= 1 && lane <= TSR_RG_LANES_OUT && xc < g.xend;
    tsr__rg_strips<THRESH, RX, RY>(a, g, lane, xc, xc <= g.xend, out);
}

/* ------------------------------------------------------------------------ ring */

/* box/ring and threshold/ring: box/reg's arithmetic (16 columns per lane, packed column sums,
 * pair-wise horizontal windows, lanes 0 and 31 as halo, the edge columns by the last column of
 * blocks) with the window rows in shared memory instead of registers. Nsight Compute on box/reg
 * at r = 1 (8192x8192, H100): 57.7% issue active, 2.1 cycles of long-scoreboard stall per
 * issue, 19 of its 24 warps resident (78 registers), and L2 at 77.5% of its peak from the rows
 * each 5-row strip loads again (147 MB through L1 for a 67 MB image): too few bytes in flight
 * and too many of them twice. Here each lane keeps a private ring of NS = 2 RY + 1 + AHEAD
 * 16-byte slots, filled by asynchronous copies AHEAD rows before the row enters the window, so
 * the copies in flight cost no registers (52-64 against reg's 78-80: 8-9 blocks per SM). A lane
 * only ever reads its own slots, so the ring needs no barrier: cp.async.wait_group orders each
 * lane's copies against its own reads. A strip is one ring, every row it reads queued at its
 * start (9 rows for 7 outputs at r = 1): taller strips measured slower on the H100 (r = 1:
 * 53.3 us at 7 rows, 58.7 at 14, 87.3 at 112; docs/perf-notes.md). Square windows of radius 4
 * to 7 take the ring too (13 to 17 slots), their horizontal windows slid by pairs rather than
 * summed: 1.26-1.32x box/wide there; squares 8 to 12 (19 to 27 slots, 4 or 5 blocks a
 * multiprocessor) slide 32-bit sums, since the packed halves would overflow: 1.14-1.23x box/wide
 * at 8192x8192 on the H200, level at 3840x2160 (from ry = 13 the rings leave 3 blocks a
 * multiprocessor, and box/wide was faster: docs/perf-notes.md). At ry = 7 a strip's 17 rows unrolled missed the
 * instruction cache (threshold block 15: 86.0 us unrolled, 77.8 rolled); at ry = 6 rolling
 * gained 2-6% at 8192x8192 and lost 3-5% at 3840x2160, so it starts at 7. */
#ifndef TSR_RN_MINB
#define TSR_RN_MINB 8   /* blocks per SM the registers must allow: 64 (measurement knob) */
#endif
#ifndef TSR_RN_WARPS
#define TSR_RN_WARPS 4   /* warps (segments) per box/ring block (measurement knob: 1, 2 or 4) */
#endif
#ifndef TSR_RN_MINB_WIDE
#define TSR_RN_MINB_WIDE 6   /* the same from ry = 4, whose rings (13 to 17 slots) fit 6 to 8 blocks */
#endif

/* Rows queued ahead of the entering row (the rule; ry = 2 on large images: below): the ring is
 * NS = 2 RY + 1 + AHEAD slots, at least 7. */
#ifndef TSR_RN_AHEAD
#define TSR_RN_AHEAD 0   /* measurement knob: a fixed AHEAD for every ry (0: the rule) */
#endif
#ifndef TSR_RN_ROLL_FROM
#define TSR_RN_ROLL_FROM 7   /* from this ry a strip's row loop stays rolled, slots indexed at run time (measurement knob) */
#endif
#ifndef TSR_RN_THRESH7_AHEAD
/* threshold block 7's rows ahead (measurement knob). 3 against the box rule's 2: H200 1.03x at
 * 8192x8192, 1.05x at 3840x2160; box r = 3 lost 1% at 8192x8192 with 3, so it keeps 2. */
#define TSR_RN_THRESH7_AHEAD 3
#endif
__host__ __device__ constexpr int tsr__rn_ahead(int ry, int thresh = 0)
{
    return TSR_RN_AHEAD ? TSR_RN_AHEAD : thresh && ry == 3 ? TSR_RN_THRESH7_AHEAD : 6 - 2 * ry > 2 ? 6 - 2 * ry : 2;
}
/* On large images ry = 2 queues 6 rows ahead (rings of 11 slots, strips of 11 rows). H200, deep
 * against the rule's 2, alternating, two rounds, us, box r = 2 / threshold block 5: 8192x8192
 * 44.4 / 43.3 against 46.8 / 44.8; 6144x6144 29.6 / 28.0 against 30.1 / 28.6; 5760x4320 20.2 /
 * 19.6 against 20.7 / 19.9; but 3840x2160 10.5 / 10.0 against 10.1 / 9.4 (fewer, longer strips
 * leave its multiprocessors short of blocks). So from 20 Mpixels, between the two sizes
 * measured (docs/perf-notes.md). Box (not threshold) takes it at ry = 3 and 4 too
 * (tsr__rn_ahead_for). */
enum { TSR_RN_AHEAD_DEEP = 6 };
#ifndef TSR_RN_DEEP_MPIX
#define TSR_RN_DEEP_MPIX 20   /* Mpixels from which ry = 2 takes the deep ring (TSR_CUDA_RING_DEEP_MPIX overrides) */
#endif

/* Queue source row y (unmapped) into this lane's slot: an asynchronous copy, or stored here where
 * it is the constant's row or the lane loads nothing (zeros). The caller commits. */
__device__ __forceinline__ void tsr__rn_put(const tsr__box_args &a, uint4 *slot, int y, int xc, int load)
{
    const int yy = (unsigned)y < (unsigned)a.h ? y : tsr__rg_border_row(y, a.h, a.border);
    if (yy >= 0 && load)
        tsr__cp16((unsigned char *)slot, tsr__cu_row<uint8_t>(a.src, a.sstride, yy) + xc);
    else {
        const unsigned v = load ? (unsigned)a.value * 0x01010101u : 0u;
        *slot = make_uint4(v, v, v, v);
    }
}

/* Queue strip row y (unmapped) into this lane's slot, as its own commit group. */
__device__ __forceinline__ void tsr__rn_issue(const tsr__box_args &a, uint4 *slot, int y, int xc, int load, int want)
{
    if (want) tsr__rn_put(a, slot, y, xc, load);
    tsr__cp_commit();
}

/* Queue the row at p (inside the image) into this lane's slot, as its own commit group; lanes
 * that load nothing store zeros. */
__device__ __forceinline__ void tsr__rn_issue_at(uint4 *slot, const unsigned char *p, int load, int want)
{
    if (want) tsr__cp16_or_zero((unsigned char *)slot, p, load);
    tsr__cp_commit();
}

#ifndef TSR_RN_INTERIOR_RY
#define TSR_RN_INTERIOR_RY 12   /* the largest ry with the interior strips' path (-1: none; TSR_CUDA_RING_INTERIOR_RY overrides) */
#endif

/* One strip of this warp's segment: rows y0 .. y0 + n - 1. Strip row i is source row y0 - RY + i,
 * in slot i % NS; output row t needs rows t .. t + 2 RY, and after it row t leaves the window,
 * row t + 2 RY + 1 enters, and row t + NS is queued into the slot row t leaves. INTERIOR: every
 * row the strip reads is inside the image, so rows are queued from a pointer stepped by the
 * stride, without the border test and the row's address arithmetic. */
template <int THRESH, int RX, int RY, int AHEAD, int INTERIOR>
__device__ __forceinline__ void tsr__rn_strip(const tsr__box_args &a, const tsr__reg_geom &g, uint4 *ring, int xc,
                                              int load, int out, int y0, int n)
{
    enum { NS = 2 * RY + 1 + AHEAD, UNROLL = RY >= TSR_RN_ROLL_FROM ? 1 : NS };
    /* strip rows past last are never read for an output that is stored (the slide after the
     * strip's last output reads row n + 2 RY, but nothing uses its result) */
    const int last = n - 1 + 2 * RY;
    const unsigned char *ps = INTERIOR ? tsr__cu_row<uint8_t>(a.src, a.sstride, y0 - RY) + xc : NULL;
    unsigned char *pd = tsr__cu_row<uint8_t>(a.dst, a.dstride, y0) + xc;
#pragma unroll
    for (int i = 0; i < NS; i++) {
        if (INTERIOR) tsr__rn_issue_at(ring + 32 * i, ps + i * a.sstride, load, i <= last);
        else tsr__rn_issue(a, ring + 32 * i, y0 - RY + i, xc, load, i <= last);
    }
    if (INTERIOR) ps += NS * a.sstride;   /* the next row to queue */
    tsr__cp_wait<AHEAD>();
    unsigned c[8] = {0, 0, 0, 0, 0, 0, 0, 0};
#pragma unroll
    for (int i = 0; i < 2 * RY + 1; i++) tsr__rg_acc(c, ring[32 * i]);
    /* whole groups of NS rows (strip heights are multiples of NS but for the image's last
     * strip, whose rows past n are computed from stale slots and not stored) */
    for (int tb = 0; tb < n; tb += NS) {
#pragma unroll(UNROLL)
        for (int k = 0; k < NS; k++) {
            const int t = tb + k;
            tsr__cp_wait<AHEAD - 1>();
            const uint4 sv = THRESH ? ring[32 * ((k + RY) % NS)] : make_uint4(0, 0, 0, 0);
            tsr__rg_row<THRESH, RX, RY>(a, g, c, sv, pd, out && t < n);
            pd += a.dstride;
            tsr__rg_slide(c, ring[32 * ((k + 2 * RY + 1) % NS)], ring[32 * (k % NS)]);
            if (INTERIOR) {
                tsr__rn_issue_at(ring + 32 * (k % NS), ps, load, t + NS <= last);
                ps += a.sstride;
            } else {
                tsr__rn_issue(a, ring + 32 * (k % NS), y0 - RY + t + NS, xc, load, t + NS <= last);
            }
        }
    }
    tsr__cp_wait<0>();   /* nothing of this strip may land in the next one's ring */
}

/* Every strip of this warp's segment; strips whose rows all lie inside the image take the
 * interior path, up to ry = g.interior. Until the twenty-seventh session that was ry <= 2 only;
 * every ry measured faster with it on the H200 (8192x8192 box r = 5 / 7 / 10 57.2 / 64.4 / 70.3 ->
 * 51.8 / 60.6 / 64.3 us, threshold blocks 9 / 25 60.2 / 85.3 -> 52.4 / 78.1; 3840x2160 within
 * 3%), and copies of lanes that load nothing became predicated zero-fills. */
template <int THRESH, int RX, int RY, int AHEAD>
__device__ __forceinline__ void tsr__rn_strips(const tsr__box_args &a, const tsr__reg_geom &g, uint4 *ring, int xc,
                                               int load, int out)
{
    for (int strip = blockIdx.y; strip < g.nstrips; strip += gridDim.y) {
        const int y0 = strip * g.strip_h, n = min(a.h, y0 + g.strip_h) - y0;
        if (RY <= g.interior && y0 >= RY && y0 + n + RY <= a.h)
            tsr__rn_strip<THRESH, RX, RY, AHEAD, 1>(a, g, ring, xc, load, out, y0, n);
        else
            tsr__rn_strip<THRESH, RX, RY, AHEAD, 0>(a, g, ring, xc, load, out, y0, n);
    }
}

/* A block's rings: NS slots of 16 bytes per lane. From ry = 11 (25 slots, 50 KiB) they pass the
 * 48 KiB of static shared memory and are allocated dynamically (opt-in). */
__host__ __device__ constexpr size_t tsr__rn_bytes(int ry, int ahead)
{
    return (size_t)(2 * ry + 1 + ahead) * 32 * TSR_RN_WARPS * sizeof(uint4);
}
__host__ __device__ constexpr size_t tsr__rn_bytes(int ry) { return tsr__rn_bytes(ry, tsr__rn_ahead(ry)); }
__host__ __device__ constexpr bool tsr__rn_dynamic(int ry, int ahead) { return tsr__rn_bytes(ry, ahead) > 48 * 1024; }
__host__ __device__ constexpr int tsr__rn_minb_nw(int b) { return b > 32 ? 32 : b; }   /* resident blocks: at most 32 */
/* Blocks per SM the registers must allow: 8 at ry <= 3, 6 to 7; from 8 as many as the rings
 * leave room for (3 to 5), so that the wider windows' 32-bit sums may take the registers. */
__host__ __device__ constexpr int tsr__rn_minb(int ry)
{
    return tsr__rn_minb_nw(ry <= 3 ? TSR_RN_MINB * 4 / TSR_RN_WARPS
                           : ry <= TSR_RN_RMAX_PACKED ? TSR_RN_MINB_WIDE * 4 / TSR_RN_WARPS : (int)((227 * 1024) / tsr__rn_bytes(ry)));
}
extern __shared__ uint4 tsr__rn_dyn[];

/* In a ring or stream launch the last column of blocks stages and writes the edge columns of its
 * strips through smem, where the rings would be; true for those blocks. */
template <int RX, int RY, int HL = 1>
__device__ __forceinline__ bool tsr__rn_edge_blocks(const tsr__box_args &a, const tsr__reg_geom &g, unsigned char *smem)
{
    if (blockIdx.x != gridDim.x - 1) return false;
    for (int strip = blockIdx.y; strip < g.nstrips; strip += gridDim.y) tsr__rg_edge_tile<RX, RY, HL>(a, g, strip, smem);
    return true;
}

/* This thread's place in a ring or stream launch, as the kernel's own statements (a function
 * returning them through pointers or a struct changed the compiled prologue of every ring kernel):
 * lane, warp, the warp's segment (the warp leaves when it has none), the lane's first column xc
 * and whether it stores (lanes HL..31 - HL, the others being the halo, left of xend). A segment
 * writes 32 - 2 HL lanes of 16 columns. */
#define TSR__RN_PLACE_HL(g, HL, NW)                                                                      \
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;                                          \
    const int seg = blockIdx.x * (NW) + warp;                                                            \
    if (seg >= (g).nseg) return;                                                                         \
    const int xc = seg * (32 - 2 * (HL)) * TSR_RG_CPT + TSR_RG_CPT * lane;                              \
    const int out = lane >= (HL) && lane < 32 - (HL) && xc < (g).xend
#define TSR__RN_PLACE(g) TSR__RN_PLACE_HL(g, 1, TSR_RN_WARPS)

template <int THRESH, int RX, int RY, int AHEAD>
__global__ void __launch_bounds__(TSR_RN_WARPS * 32, tsr__rn_minb(RY)) tsr__box_ring_kernel(tsr__box_args a, tsr__reg_geom g)
{
    enum { NS = 2 * RY + 1 + AHEAD };
    __shared__ uint4 ring_static[tsr__rn_dynamic(RY, AHEAD) ? 1 : TSR_RN_WARPS * NS * 32];
    uint4 *const ring = tsr__rn_dynamic(RY, AHEAD) ? tsr__rn_dyn : ring_static;
    static_assert(tsr__rn_bytes(RY, AHEAD) >= tsr__rg_edge_bytes(RX, RY), "the edge columns' staging fits in the ring");
    if (tsr__rn_edge_blocks<RX, RY>(a, g, (unsigned char *)ring)) return;
    TSR__RN_PLACE(g);
    tsr__rn_strips<THRESH, RX, RY, AHEAD>(a, g, ring + warp * NS * 32 + lane, xc, xc <= g.xend, out);
}

/* Queue one ring kernel, with its dynamic shared memory where its rings need it. */
template <int THRESH, int RX, int RY, int AHEAD>
static tsr_status tsr__rn_launch(const tsr__box_args &a, const tsr__reg_geom &g, dim3 grid, unsigned nt, cudaStream_t st)
{
    const size_t dyn = tsr__rn_dynamic(RY, AHEAD) ? tsr__rn_bytes(RY, AHEAD) : 0;
    const tsr_status s = tsr__cu_allow_smem(tsr__box_ring_kernel<THRESH, RX, RY, AHEAD>, dyn);
    if (s) return s;
    tsr__box_ring_kernel<THRESH, RX, RY, AHEAD><<<grid, nt, dyn, st>>>(a, g);
    return TSR_OK;
}

/* Rows a ring launch queues ahead for these arguments: the rule, or the deep ring's at ry = 2 on
 * images of TSR_RN_DEEP_MPIX Mpixels or more, and for box (not threshold) at ry = 3 and 4 from
 * TSR_RN_DEEP34_MPIX (TSR_CUDA_RING_DEEP_MPIX overrides both; 0: always). H200, thirty-first
 * session, box r = 3 / 4, deep against the rule's 2 rows ahead, us: 8192x8192 46.4-47.0 / 46.9-47.1
 * against 49.2-49.4 / 50.5-50.8; 6144x6144 31.6 / 32.3 against 31.9-32.3 / 32.8-32.9; 5120x5120
 * 24.1-24.7 / 24.1-24.4 against 24.0-24.1 / 23.9; 4096x4096 19.1 / 19.0-19.5 against 17.6-17.7 /
 * 18.0-18.4; threshold blocks 7 and 9 level or slower at every size (docs/perf-notes.md). */
#ifndef TSR_RN_DEEP34_MPIX
#define TSR_RN_DEEP34_MPIX 32   /* Mpixels from which box ry = 3 and 4 take the deep ring */
#endif
static int tsr__rn_ahead_for(const tsr__box_args &a)
{
    const int deep_ry = a.ry == 2 || (!a.thresh && (a.ry == 3 || (a.ry == 4 && a.rx == 4)));
    if (!deep_ry || TSR_RN_AHEAD) return tsr__rn_ahead(a.ry, a.thresh);
    const long long from = (long long)tsr__env_int("TSR_CUDA_RING_DEEP_MPIX", a.ry == 2 ? TSR_RN_DEEP_MPIX : TSR_RN_DEEP34_MPIX)
                           << 20;
    return (long long)a.w * a.h >= from ? (int)TSR_RN_AHEAD_DEEP : tsr__rn_ahead(a.ry, a.thresh);
}

/* ---------------------------------------------------------------------- stream */

/* box/stream and threshold/stream: box/ring's lanes and arithmetic for square windows of radius
 * 3 to 32, without keeping the window's rows. A lane's ring holds only the next D steps of three
 * streams of 16-byte rows: the row entering the window, the row leaving it (loaded again, 2 ry + 1
 * rows after it entered: an L2 hit) and, for threshold, the output row's own source row. So the
 * shared memory no longer grows with the radius (24 KiB a block of 4 warps at D = 4, against
 * box/ring's 2 ry + 3 slots: 3 blocks a multiprocessor from ry = 13), and strips can be taller
 * than the window. Measured (H200, eighteenth session): strips of 16 rows beat 32, 64 and 8 at
 * both sizes (64: 97-98 us at r = 13 on 8192x8192, 16: 86-88, 8: 102), and at 16 rows it is
 * 1.08-1.11x box/wide at r = 13..16 (8192x8192) and 1.04-1.09x at 3840x2160, threshold blocks
 * 27..33 1.04-1.07x; below 13 box/ring was faster at 8192x8192 (r = 8: 69 against 72 us). Since
 * the twenty-seventh session interior strips queue from stepped row pointers and the 32-bit
 * window sums slide by dp2a (tsr__rg_row), which made stream 1.3x faster (r = 16: 95 -> 73 us)
 * and the default from radius 7 (tsr__ring_prefer; docs/perf-notes.md). Since the twenty-eighth,
 * windows wider than 33 columns reach two lanes over (tsr__rs_halo: radii 17 to 32, 448 columns a
 * warp), the first windows of 16-row strips come by plain loads, and the edge columns' blocks slide
 * running sums (tsr__rg_edge_run): r = 16 / 24 / 32 at 8192x8192 64.6 / 84.3 / 97.4 us, against
 * 72.6 and wide's 107.0 / 118.0 before (tsr__stream_prefer for the sizes). */
#ifndef TSR_RS_D
#define TSR_RS_D 4   /* steps queued ahead per stream (a power of two; measurement knob) */
#endif
enum { TSR_RS_RMIN = 3, TSR_RS_RMAX = 32, TSR_RS_STRIP = 16 };

/* Halo lanes on each side of a stream segment: windows up to 33 columns wide reach one lane
 * over, wider ones two (a segment then writes 28 lanes, 448 columns). */
__host__ __device__ constexpr int tsr__rs_halo(int rx) { return rx > TSR_RG_CPT ? 2 : 1; }

/* box/stream's strip height: 16 rows, or 8 on images short of warps: under 16 Mpixels up to
 * ry = 12, under 4 Mpixels at every ry (H200, tessera-bench-cuda --stream, 8 / 16 rows, us:
 * 3840x2160 box r = 3 / 8 / 12 / 16 11.8 / 14.8 / 17.7 / 21.1 against 12.7 / 14.9 / 17.7 / 21.0,
 * threshold blocks 7 / 17 / 25 / 33 11.8 / 15.7 / 18.5 / 22.3 against 13.0 / 17.2 / 19.4 / 21.7,
 * box r = 13 20.4 against 19.4-19.6; 1920x1080 box r = 13 / 16 13.6 / 15.4 against 16.0-16.1 /
 * 17.3; 8192x8192 r = 3 / 8 / 16 49.5 / 61.2 / 85.5 against 48.6 / 56.7 / 72.9). */
static int tsr__rs_strip_rows(const tsr__box_args &a)
{
    const long long px = (long long)a.w * a.h;
    return px < (4ll << 20) || (px < (16ll << 20) && a.ry <= 12) ? 8 : TSR_RS_STRIP;
}

/* One strip of outputs y0 .. y0 + n - 1. Step u (0 .. n + 2 ry - 1) adds source row y0 - ry + u
 * to the column sums and, from u = 2 ry + 1, takes away row y0 - 3 ry - 1 + u; from u = 2 ry it
 * writes output row y0 - 2 ry + u (threshold compares that same source row). Each step's rows
 * are one commit group, queued D steps ahead into slot u mod D of each stream. The 2 ry start-up
 * steps only add, so they run as a loop of their own, and the output steps' loop slides with no
 * test. INTERIOR: every row the strip reads lies inside the image, so each stream queues from a
 * pointer stepped by the stride, with no border test and no row address per row (lanes that
 * load nothing copy zeros). */
template <int THRESH, int RX, int RY, int INTERIOR>
__device__ __forceinline__ void tsr__rs_strip(const tsr__box_args &a, const tsr__reg_geom &g, uint4 *ring, int xc,
                                              int load, int out, int y0, int n)
{
    enum { D = TSR_RS_D, W = 2 * RY + 1 };
    uint4 *const E = ring, *const L = ring + 32 * D, *const C = ring + 64 * D;
    const int steps = n + 2 * RY;
    unsigned char *pd = tsr__cu_row<uint8_t>(a.dst, a.dstride, y0) + xc;
    /* the next row each stream queues (INTERIOR only): entering, leaving, threshold's own */
    const unsigned char *pe = INTERIOR ? tsr__cu_row<uint8_t>(a.src, a.sstride, y0 - RY) + xc : NULL, *pl = pe;
    const unsigned char *pc = INTERIOR && THRESH ? tsr__cu_row<uint8_t>(a.src, a.sstride, y0) + xc : NULL;
    /* step u's rows into slot u mod D (the caller commits) */
    auto queue = [&](int u) {
        if (u >= steps) return;
        const int sl = 32 * (u & (D - 1));
        if (INTERIOR) {
            tsr__cp16_or_zero((unsigned char *)(E + sl), pe, load);
            pe += a.sstride;
            if (u >= W) {
                tsr__cp16_or_zero((unsigned char *)(L + sl), pl, load);
                pl += a.sstride;
            }
            if (THRESH && u >= 2 * RY) {
                tsr__cp16_or_zero((unsigned char *)(C + sl), pc, load);
                pc += a.sstride;
            }
        } else {
            tsr__rn_put(a, E + sl, y0 - RY + u, xc, load);
            if (u >= W) tsr__rn_put(a, L + sl, y0 - RY + u - W, xc, load);
            if (THRESH && u >= 2 * RY) tsr__rn_put(a, C + sl, y0 - 2 * RY + u, xc, load);
        }
    };
    unsigned c[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    /* output step u: row u's sums are in c; write its output row and queue step u + D */
    auto output = [&](int u) {
        const int sl = 32 * (u & (D - 1));
        const uint4 sv = THRESH ? C[sl] : make_uint4(0, 0, 0, 0);
        tsr__rg_row<THRESH, RX, RY>(a, g, c, sv, pd, out);
        pd += a.dstride;
        queue(u + D);   /* into the slots just read */
        tsr__cp_commit();
    };
    if (INTERIOR && g.ldg_start) {
        /* The start-up steps by plain loads, eight in flight: each cost about 34 instructions
         * through the queue (wait, shared load, copy, commit) against about 18 here. The queue
         * starts at step 2 ry, its copies in flight meanwhile. */
        pe += 2 * RY * a.sstride;
#pragma unroll
        for (int u = 2 * RY; u < 2 * RY + D; u++) {
            queue(u);
            tsr__cp_commit();
        }
        if (load) {
            const unsigned char *p = tsr__cu_row<uint8_t>(a.src, a.sstride, y0 - RY) + xc;
#pragma unroll 8
            for (int u = 0; u < 2 * RY; u++, p += a.sstride) tsr__rg_acc(c, __ldg((const uint4 *)p));
        }
    } else {
#pragma unroll
        for (int u = 0; u < D; u++) {
            queue(u);
            tsr__cp_commit();
        }
        for (int u = 0; u < 2 * RY; u++) {   /* start-up: rows 0 .. 2 ry - 1 of the first window */
            tsr__cp_wait<D - 1>();
            tsr__rg_acc(c, E[32 * (u & (D - 1))]);
            queue(u + D);
            tsr__cp_commit();
        }
    }
    tsr__cp_wait<D - 1>();   /* step 2 ry completes the first window */
    tsr__rg_acc(c, E[32 * ((2 * RY) & (D - 1))]);
    output(2 * RY);
    for (int u = W; u < steps; u++) {
        tsr__cp_wait<D - 1>();
        const int sl = 32 * (u & (D - 1));
        tsr__rg_slide(c, E[sl], L[sl]);
        output(u);
    }
    tsr__cp_wait<0>();   /* nothing of this strip may land in the next one's ring */
}

template <int THRESH, int RX, int RY>
__global__ void __launch_bounds__(TSR_RG_WARPS * 32, TSR_RN_MINB_WIDE) tsr__box_stream_kernel(tsr__box_args a, tsr__reg_geom g)
{
    enum { HL = tsr__rs_halo(RX) };
    __shared__ uint4 ring[TSR_RG_WARPS * 3 * TSR_RS_D * 32];
    static_assert(sizeof(ring) >= tsr__rg_edge_bytes(RX, RY, HL), "the edge columns' staging fits in the ring");
    if (tsr__rn_edge_blocks<RX, RY, HL>(a, g, (unsigned char *)ring)) return;
    TSR__RN_PLACE_HL(g, HL, TSR_RG_WARPS);
    uint4 *const lr = ring + warp * 3 * TSR_RS_D * 32 + lane;
    const int load = xc < g.xend + HL * TSR_RG_CPT;   /* the right halo's lanes still load */
    for (int strip = blockIdx.y; strip < g.nstrips; strip += gridDim.y) {
        const int y0 = strip * g.strip_h, n = min(a.h, y0 + g.strip_h) - y0;
        if (RY <= g.interior && y0 >= RY && y0 + n + RY <= a.h)
            tsr__rs_strip<THRESH, RX, RY, 1>(a, g, lr, xc, load, out, y0, n);
        else
            tsr__rs_strip<THRESH, RX, RY, 0>(a, g, lr, xc, load, out, y0, n);
    }
}

/* The run of a variant whose plan needs 16-byte aligned destination rows, for a destination
 * whose rows are not (supports() sees only the source, so a default can meet one: the viewer's
 * pixel buffers): box/warp, else box/fast (which computes threshold too), both taking any
 * alignment. Shared with box/wide (box_common.cuh). */
tsr_status tsr__box_unaligned_dst(const tsr__box_args &a, const tsr_image *src, const tsr_image *dst, cudaStream_t st,
                                  const char *what)
{
    tsr__fast_geom g;
    int nt;
    size_t smem;
    if (tsr__box_warp_plan(a, src->depth, src, dst, NULL)) return tsr__box_warp_run(a, src, dst, st, what);
    if (tsr__box_fast_plan(a, src->depth, src, dst, &g, &nt, &smem))
        return tsr__box_fast_run(a, src, (tsr_image *)dst, st, what);
    return tsr__fail(TSR_E_UNSUPPORTED, "%s: no kernel takes this destination's row alignment at radius %d", what, a.rx);
}

/* Plan a reg (ring = 0) or ring launch; 0 when the variant does not take the arguments (not 8-bit
 * gray; reg: a box radius above 2 or a threshold block above 7; ring: a radius above 3 unless both
 * are equal and at most 7; a constant above 255). With g NULL only answers that.
 * TSR_CUDA_REG_STRIP / TSR_CUDA_RING_STRIP override the rows per strip for measurements. */
static int tsr__box_reg_plan(const tsr__box_args &a, int depth, const tsr_image *src, const tsr_image *dst,
                             tsr__reg_geom *g, int ring)
{
    const int stream = ring == 2;   /* box/stream: square windows of radius 3 to 32 only */
    const int hl = stream ? tsr__rs_halo(a.rx) : 1;   /* halo lanes each side */
    if (stream && (a.rx != a.ry || a.rx < TSR_RS_RMIN || a.rx > TSR_RS_RMAX ||
                   a.rx > tsr__env_int("TSR_CUDA_STREAM_RMAX", TSR_RS_RMAX)))
        return 0;
    const int rmax = stream ? (int)TSR_RS_RMAX : a.thresh || ring ? (int)TSR_RG_RMAX_THRESH : (int)TSR_RG_RMAX;   /* ring: box radii up to 3 too */
    /* ring also takes square windows up to radius 12 (threshold blocks up to 25): packed
     * horizontal sums up to r = 7, where (2r + 1)^2 x 255 plus the rounding fits 16 bits, 32-bit
     * ones beyond (tsr__rg_row). TSR_CUDA_RING_RMAX lowers that limit (a measurement knob). */
    const int square = ring && a.rx == a.ry && a.rx <= tsr__env_int("TSR_CUDA_RING_RMAX", TSR_RN_RMAX_SQUARE) &&
                       a.rx <= TSR_RN_RMAX_SQUARE;
    if (depth != TSR_U8 || a.cn != 1 || ((a.rx > rmax || a.ry > rmax) && !square) || a.value > 255) return 0;
    /* the rings from ry = 11 need opted-in shared memory (55 KiB at ry = 12; sm_75 allows 64) */
    if (ring == 1 && tsr__rn_bytes(a.ry) > tsr__cu_smem_optin()) return 0;
    /* 16-byte loads and stores: aligned rows, and at least two lanes of outputs between the
     * halo lanes (narrower images go to box/warp). */
    if (!tsr__cu_aligned(src->data, src->stride, 16) || !tsr__cu_aligned(dst->data, dst->stride, 16) ||
        a.w < 32 * hl + 32)
        return 0;
    /* the mean is one multiply-high with no shift: tsr__box_magic must find shift 0 exact */
    unsigned magic;
    int shift;
    if (!tsr__box_magic(a.mean.area, a.mean.half, &magic, &shift) || shift != 0) return 0;
    /* the packed-pair means of the smallest windows (tsr__rg_row) take the area from RX and RY */
    if (a.mean.area != (unsigned long long)(2 * a.rx + 1) * (2 * a.ry + 1) || a.mean.half != (a.mean.area - 1) / 2) return 0;
    if (!g) return 1;
    /* Strips are whole groups of ring length n rows (see tsr__rg_strips, tsr__rn_strips). */
    g->ahead = ring == 1 ? tsr__rn_ahead_for(a) : 0;
    g->interior = stream ? tsr__env_int("TSR_CUDA_STREAM_INTERIOR", 1) ? TSR_RS_RMAX : -1
                         : tsr__env_int("TSR_CUDA_RING_INTERIOR_RY", TSR_RN_INTERIOR_RY);
    long long n = 2 * a.ry + 1 + (ring == 1 ? g->ahead : (int)TSR_RG_AHEAD);
    /* outputs [16 hl, xend) in segments of 32 - 2 hl lanes; the rest is the edge blocks' */
    const int ow = (32 - 2 * hl) * TSR_RG_CPT;
    g->xend = (a.w & ~(TSR_RG_CPT - 1)) - hl * TSR_RG_CPT;
    g->nseg = (int)(((long long)g->xend - hl * TSR_RG_CPT + ow - 1) / ow);
    /* box/ring: one ring per strip, every row of the strip queued at its start.
     * box/reg: strips of one ring (n rows), two for ry = 1 on images short of warps:
     * tessera-bench-cuda --small (H100, eighth session), box r = 1 / 2 on 8192x8192 56.8 / 70.1 us
     * against 59.1 / 74.7 at two rings, r = 2 on 3840x2160 17.0 against 20.8; r = 1 there 11.8 at
     * two rings against 12.3 at one. TSR_CUDA_RING_STRIP / TSR_CUDA_REG_STRIP (rows, rounded up
     * to whole rings) for measurements. */
    long long sh = stream ? tsr__rs_strip_rows(a) : ring || a.ry >= 2 || !tsr__cu_short_of_warps(a.h, g->nseg) ? 1 : n + 1;
    sh = tsr__env_int(stream ? "TSR_CUDA_STREAM_STRIP" : ring ? "TSR_CUDA_RING_STRIP" : "TSR_CUDA_REG_STRIP", (int)sh);
    if (sh < 1) sh = 1;
    if (sh > a.h) sh = a.h;
    if (!stream) sh = (sh + n - 1) / n * n;   /* box/stream's strips take any height */
    g->strip_h = (int)sh;
    g->nstrips = (int)((a.h + sh - 1) / sh);
    /* box/stream's first windows by plain loads on strips of 16 rows or more (H200, 8192x8192: r
     * = 8 / 16 54.8 / 69.3 us against 57.7 / 72.8 through the queue, threshold block 31 75.0
     * against 80.3); the 8-row strips of 3840x2160 lost 0.3-1.2 us with them at ry 8..12 (r = 12
     * 18.2-18.5 against 17.3), where the queue's copies overlap the short strips better.
     * TSR_CUDA_STREAM_LDG_START (0 or 1) overrides. */
    g->ldg_start = stream && tsr__env_int("TSR_CUDA_STREAM_LDG_START", sh >= 16) != 0;
    g->half2 = (unsigned)a.mean.half * 0x10001u;
    g->tbase2 = 0;
    if (a.thresh) {   /* the outcome's sign offset for the comparison without division (tsr__rg_row) */
        long long tau = 1 - (long long)a.idelta;
        tau = tau < -255 ? -255 : tau > 256 ? 256 : tau;
        const long long tbase = (long long)a.mean.half + (tau - 1) * (long long)a.mean.area + 0x8000;
        g->tbase2 = tbase >= 0 && tbase <= 0xffff ? (unsigned)tbase * 0x10001u : 0u;   /* used for area <= 64 only */
    }
    g->magic = magic;
    g->pk_shift = 65536u;
    g->pk_hi_add = a.rx <= TSR_RN_RMAX_PACKED && a.ry <= TSR_RN_RMAX_PACKED && (tsr__rg_pk_exact(a.rx, a.ry) || tsr__rg_pk_masked(a.rx, a.ry))
                       ? (unsigned long long)(tsr__rg_pk_masked(a.rx, a.ry) ? g->half2 & 0xffff0000u : g->half2) * tsr__rg_pk_magic(a.rx, a.ry)
                       : 0;
    return 1;
}

/* Queue the reg kernel for box or threshold arguments (plan checked by supports()). */
static tsr_status tsr__box_reg_run(const tsr__box_args &a, const tsr_image *src, const tsr_image *dst,
                                   cudaStream_t st, const char *what, int ring)
{
    tsr__reg_geom g;
    if (!tsr__box_reg_plan(a, src->depth, src, dst, &g, ring)) {
        if (tsr__box_reg_plan(a, src->depth, src, src, NULL, ring))   /* only the destination's rows */
            return tsr__box_unaligned_dst(a, src, dst, st, what);
        if (ring == 2)
            return tsr__fail(TSR_E_UNSUPPORTED, "%s: only 8-bit one-channel images with equal radii from %d to %d", what,
                             TSR_RS_RMIN, TSR_RS_RMAX);
        if (ring)
            return tsr__fail(TSR_E_UNSUPPORTED, "%s: only 8-bit one-channel images with radii up to %d, or equal radii up to %d",
                             what, TSR_RG_RMAX_THRESH, TSR_RN_RMAX_SQUARE);
        return tsr__fail(TSR_E_UNSUPPORTED, "%s: only 8-bit one-channel images with radii up to %d (%d for threshold)", what,
                         TSR_RG_RMAX, TSR_RG_RMAX_THRESH);
    }
    const unsigned nw = ring == 1 ? TSR_RN_WARPS : TSR_RG_WARPS;
    dim3 grid(tsr__div_up((unsigned)g.nseg, nw) + 1,   /* + the edge columns' blocks */
              (unsigned)(g.nstrips < TSR_CU_MAX_GRID_Y ? g.nstrips : TSR_CU_MAX_GRID_Y));
    unsigned nt = nw * 32;
    if (ring == 2) {
#define TSR__RS_LAUNCH(R)                                                                                \
    case R:                                                                                              \
        if (a.thresh) tsr__box_stream_kernel<1, R, R><<<grid, nt, 0, st>>>(a, g);                        \
        else tsr__box_stream_kernel<0, R, R><<<grid, nt, 0, st>>>(a, g);                                 \
        break
        switch (a.rx) {
            TSR__RS_LAUNCH(3); TSR__RS_LAUNCH(4); TSR__RS_LAUNCH(5); TSR__RS_LAUNCH(6); TSR__RS_LAUNCH(7);
            TSR__RS_LAUNCH(8); TSR__RS_LAUNCH(9); TSR__RS_LAUNCH(10); TSR__RS_LAUNCH(11); TSR__RS_LAUNCH(12);
            TSR__RS_LAUNCH(13); TSR__RS_LAUNCH(14); TSR__RS_LAUNCH(15); TSR__RS_LAUNCH(16);
            TSR__RS_LAUNCH(17); TSR__RS_LAUNCH(18); TSR__RS_LAUNCH(19); TSR__RS_LAUNCH(20); TSR__RS_LAUNCH(21);
            TSR__RS_LAUNCH(22); TSR__RS_LAUNCH(23); TSR__RS_LAUNCH(24); TSR__RS_LAUNCH(25); TSR__RS_LAUNCH(26);
            TSR__RS_LAUNCH(27); TSR__RS_LAUNCH(28); TSR__RS_LAUNCH(29); TSR__RS_LAUNCH(30); TSR__RS_LAUNCH(31);
            TSR__RS_LAUNCH(32);
        }
#undef TSR__RS_LAUNCH
        return TSR_CUDA_LAUNCHED(what);
    }
    if (ring) {
#define TSR__RN_LAUNCH2(RX, RY, AHT, AHB)                                                                \
    do {                                                                                                 \
        /* threshold windows are square: its other pairs are never launched, nor compiled (the      \
           untaken branch names the square's own kernel) */                                          \
        const tsr_status s_ = a.thresh && RX == RY                                                       \
                                  ? tsr__rn_launch<1, RX, RX, RX == RY ? AHT : tsr__rn_ahead(RX, 1)>(a, g, grid, nt, st) \
                                  : tsr__rn_launch<0, RX, RY, AHB>(a, g, grid, nt, st);                  \
        if (s_) return s_;                                                                               \
    } while (0)
#define TSR__RN_LAUNCH_AHEAD(RX, RY, AH) TSR__RN_LAUNCH2(RX, RY, AH, AH)
#define TSR__RN_LAUNCH(RX, RY) TSR__RN_LAUNCH2(RX, RY, tsr__rn_ahead(RY, 1), tsr__rn_ahead(RY))
#define TSR__RN_ROW(RX)                                                                                  \
    case RX:                                                                                             \
        switch (a.ry) {                                                                                  \
            case 0: TSR__RN_LAUNCH(RX, 0); break;                                                        \
            case 1: TSR__RN_LAUNCH(RX, 1); break;                                                        \
            case 2:                                                                                      \
                if (g.ahead == TSR_RN_AHEAD_DEEP) TSR__RN_LAUNCH_AHEAD(RX, 2, TSR_RN_AHEAD_DEEP);            \
                else TSR__RN_LAUNCH(RX, 2);                                                              \
                break;                                                                                   \
            default:   /* threshold never takes the deep ring at ry = 3 (tsr__rn_ahead_for) */             \
                if (g.ahead == TSR_RN_AHEAD_DEEP) TSR__RN_LAUNCH2(RX, 3, tsr__rn_ahead(3, 1), TSR_RN_AHEAD_DEEP); \
                else TSR__RN_LAUNCH(RX, 3);                                                              \
                break;                                                                                   \
        }                                                                                                \
        break
        switch (a.rx) {
            TSR__RN_ROW(0); TSR__RN_ROW(1); TSR__RN_ROW(2); TSR__RN_ROW(3);
            case 4:   /* square windows only from radius 4 */
                if (g.ahead == TSR_RN_AHEAD_DEEP) TSR__RN_LAUNCH2(4, 4, tsr__rn_ahead(4, 1), TSR_RN_AHEAD_DEEP);
                else TSR__RN_LAUNCH(4, 4);
                break;
            case 5: TSR__RN_LAUNCH(5, 5); break;
            case 6: TSR__RN_LAUNCH(6, 6); break;
            case 7: TSR__RN_LAUNCH(7, 7); break;
            case 8: TSR__RN_LAUNCH(8, 8); break;   /* 32-bit horizontal sums from radius 8 */
            case 9: TSR__RN_LAUNCH(9, 9); break;
            case 10: TSR__RN_LAUNCH(10, 10); break;
            case 11: TSR__RN_LAUNCH(11, 11); break;
            case 12: TSR__RN_LAUNCH(12, 12); break;
        }
#undef TSR__RN_ROW
#undef TSR__RN_LAUNCH
#undef TSR__RN_LAUNCH_AHEAD
#undef TSR__RN_LAUNCH2
        return TSR_CUDA_LAUNCHED(what);
    }
#define TSR__RG_LAUNCH(RX, RY)                                                                           \
    do {                                                                                                 \
        if (a.thresh && RX == RY) tsr__box_reg_kernel<1, RX, RX><<<grid, nt, 0, st>>>(a, g);            \
        else tsr__box_reg_kernel<0, RX, RY><<<grid, nt, 0, st>>>(a, g);                                  \
    } while (0)
#define TSR__RG_ROW(RX)                                                                                  \
    case RX:                                                                                             \
        switch (a.ry) {                                                                                  \
            case 0: TSR__RG_LAUNCH(RX, 0); break;                                                        \
            case 1: TSR__RG_LAUNCH(RX, 1); break;                                                        \
            default: TSR__RG_LAUNCH(RX, 2); break;                                                       \
        }                                                                                                \
        break
    switch (a.rx) {
        TSR__RG_ROW(0); TSR__RG_ROW(1); TSR__RG_ROW(2);
        case 3: tsr__box_reg_kernel<1, 3, 3><<<grid, nt, 0, st>>>(a, g); break;   /* threshold block 7 only */
    }
#undef TSR__RG_ROW
#undef TSR__RG_LAUNCH
    return TSR_CUDA_LAUNCHED(what);
}

/* Arguments of box/reg, box/ring, threshold/reg and threshold/ring from an op's parameters (dst
 * may be a stand-in with src's layout, for supports()). */
static tsr__box_args tsr__small_args(const tsr_image *src, tsr_image *dst, const void *params, int thresh)
{
    return thresh ? tsr__box_args_threshold(src, dst, (const tsr_threshold_params *)params)
                  : tsr__box_args_box(src, dst, (const tsr_box_params *)params);
}

static int tsr__small_supports(const tsr_image *src, const void *params, int thresh, int ring)
{
    tsr_image dummy = *src;
    return tsr__box_reg_plan(tsr__small_args(src, &dummy, params, thresh), src->depth, src, &dummy, NULL, ring);
}

static tsr_status tsr__small_run(const tsr_image *src, tsr_image *dst, const void *params, const tsr_exec *ex,
                                 int thresh, int ring)
{
    static const char *what[2][3] = {{"box/reg kernel", "box/ring kernel", "box/stream kernel"},
                                     {"threshold/reg kernel", "threshold/ring kernel", "threshold/stream kernel"}};
    return tsr__box_reg_run(tsr__small_args(src, dst, params, thresh), src, dst, (cudaStream_t)ex->stream,
                            what[thresh][ring], ring);
}

/* box/reg: see the kernel's comment. box/ring: see the comment above tsr__box_ring_kernel (the
 * same arithmetic, radii up to 3 or equal radii up to 12). threshold/reg and threshold/ring: their means with the
 * comparison as the output step. */
static int tsr__box_reg_supports(const tsr_image *src, const void *params) { return tsr__small_supports(src, params, 0, 0); }
static int tsr__box_ring_supports(const tsr_image *src, const void *params) { return tsr__small_supports(src, params, 0, 1); }
static int tsr__threshold_reg_supports(const tsr_image *src, const void *params)
{
    return tsr__small_supports(src, params, 1, 0);
}
static int tsr__threshold_ring_supports(const tsr_image *src, const void *params)
{
    return tsr__small_supports(src, params, 1, 1);
}
/* Where both take a square window: box/ring up to box radius 6 and threshold block 15, box/stream
 * beyond, at every size. Before the twenty-seventh session the ring was the faster on large
 * images up to radius 12; since stream's interior strips step their row pointers and its 32-bit
 * window sums slide by dp2a, stream wins from box radius 7 and block 17 (H200, tessera-bench-cuda
 * --radii with the ring capped by TSR_CUDA_RING_RMAX against stream off by TSR_CUDA_STREAM_RMAX=0,
 * two rounds each, us, ring / stream):
 *   box r =         4            5            6            7            8            12
 *   8192x8192   51.0 / 49.5  51.6 / 52.6  53.0 / 54.4  60.7 / 58.6  59.5 / 57.1  70.0 / 64.1
 *   3840x2160   11.6 / 13.1  12.2 / 13.7  13.7 / 14.1  16.0 / 14.8  17.2 / 15.0  22.4 / 17.7
 *   threshold blocks 9..15 (ry 4..7) 8192x8192 52.5-64.6 / 55.1-66.7, 3840x2160 12.3-15.9 /
 *   15.2-17.3; blocks 17 / 25: 8192x8192 64.2 / 78.1 against 63.5 / 72.1, 3840x2160 17.1 / 22.3
 *   against 17.2 / 19.4.
 * (Box r = 4 at 8192x8192 alone favours stream by 3%; the rule keeps one crossover.) */
static int tsr__ring_prefer(const tsr_image *src, const void *params, int thresh)
{
    tsr_image dummy = *src;
    const tsr__box_args a = tsr__small_args(src, &dummy, params, thresh);
    if (a.rx != a.ry || a.ry < (thresh ? 8 : 7)) return 1;
    return !tsr__small_supports(src, params, thresh, 2);   /* keep the ring where stream would decline */
}
static int tsr__box_ring_prefer(const tsr_image *src, const void *params) { return tsr__ring_prefer(src, params, 0); }
static int tsr__threshold_ring_prefer(const tsr_image *src, const void *params)
{
    return tsr__ring_prefer(src, params, 1);
}
/* box/wide's stacked first windows (from ry = 12) overtook stream's squares on images of up to
 * 10 Mpixels, which leave both kernels short of warps (H200, twenty-fifth session, us, wide /
 * stream, box r = 12 / 14 / 16: 1920x1080 15.4 / 15.8 / 16.3 against 17.7 / 18.9 / 20.0, 3840x2160
 * 20.4 / 21.0 / 21.5 against 20.3 / 21.7 / 24.0). Since the twenty-seventh session's faster
 * stream, with 8-row strips on small images (tsr__rs_strip_rows), stream wins at every size:
 * 3840x2160 17.7 / 18.9 / 20.8 against wide's 20.0 / 20.9 / 21.1; 1920x1080 box r = 13 / 16 13.6
 * / 15.4 against 15.8 / 16.1, threshold blocks 27 / 33 13.5 / 14.9 against 16.6 / 17.1; 1280x720
 * alike. TSR_CUDA_STREAM_WIDE_MPIX (Mpixels; 0, the default: never) gives ry 13..16 on smaller
 * images back to wide, for measurements.
 * From ry = 17 stream's two halo lanes and 2 ry start-up rows a strip make its cost grow with the
 * radius, while wide's does not (twenty-eighth session, H200, us, stream / wide, box): 8192x8192 r
 * = 17 / 24 / 28 / 32 73.3 / 84.3 / 98.5 / 97.2 against 106.0 / 107.2 / 112.7 / 118.9, threshold
 * blocks 35 / 57 / 65 77.3 / 102.0 / 104.6 against 112.4 / 116.6 / 122.0; 5120x5120 r = 17 / 27 /
 * 28 / 32 41.7 / 57.0 / 57.7 / 56.6 against 53.4 / 58.4 / 54.7 / 55.7, blocks 35 / 55 / 57 42.6 /
 * 57.4 / 58.6 against 56.1 / 61.2 / 57.9; 3840x2160 r = 17 / 24 23.0 / 27.0 against 21.8 / 23.4;
 * 1920x1080 r = 17 / 18 17.0 / 18.1 against 17.1 / 16.9. So stream keeps every square up to 32
 * on images of 48 Mpixels and more, up to 27 from 24 Mpixels; wide takes ry 17 and up on smaller
 * ones (TSR_CUDA_STREAM_PREFER_RMAX sets that limit at every size, for measurements). */
static int tsr__stream_prefer(const tsr_image *src, const void *params, int thresh)
{
    tsr_image dummy = *src;
    const tsr__box_args a = tsr__small_args(src, &dummy, params, thresh);
    const long long px = (long long)a.w * a.h;
    const long long below = (long long)tsr__env_int("TSR_CUDA_STREAM_WIDE_MPIX", 0) << 20;
    const int rmax = tsr__env_int("TSR_CUDA_STREAM_PREFER_RMAX", px >= (48ll << 20) ? 32 : px >= (24ll << 20) ? 27 : 16);
    if (a.ry < 13 || (a.ry <= rmax && px >= below)) return 1;
    return !(thresh ? tsr__threshold_wide_supports(src, params) : tsr__box_wide_supports(src, params));
}
static int tsr__box_stream_prefer(const tsr_image *src, const void *params) { return tsr__stream_prefer(src, params, 0); }
static int tsr__threshold_stream_prefer(const tsr_image *src, const void *params)
{
    return tsr__stream_prefer(src, params, 1);
}
static int tsr__box_stream_supports(const tsr_image *src, const void *params)
{
    return tsr__small_supports(src, params, 0, 2);
}
static int tsr__threshold_stream_supports(const tsr_image *src, const void *params)
{
    return tsr__small_supports(src, params, 1, 2);
}
static tsr_status tsr__box_stream(const tsr_image *src, tsr_image *dst, const void *params, const tsr_exec *ex)
{
    return tsr__small_run(src, dst, params, ex, 0, 2);
}
static tsr_status tsr__threshold_stream(const tsr_image *src, tsr_image *dst, const void *params, const tsr_exec *ex)
{
    return tsr__small_run(src, dst, params, ex, 1, 2);
}
static tsr_status tsr__box_reg(const tsr_image *src, tsr_image *dst, const void *params, const tsr_exec *ex)
{
    return tsr__small_run(src, dst, params, ex, 0, 0);
}
static tsr_status tsr__box_ring(const tsr_image *src, tsr_image *dst, const void *params, const tsr_exec *ex)
{
    return tsr__small_run(src, dst, params, ex, 0, 1);
}
static tsr_status tsr__threshold_reg(const tsr_image *src, tsr_image *dst, const void *params, const tsr_exec *ex)
{
    return tsr__small_run(src, dst, params, ex, 1, 0);
}
static tsr_status tsr__threshold_ring(const tsr_image *src, tsr_image *dst, const void *params, const tsr_exec *ex)
{
    return tsr__small_run(src, dst, params, ex, 1, 1);
}

extern "C" const tsr_variant tsr__box_cuda[] = {
    {"global", TSR_BACKEND_CUDA, "one thread per pixel loops over the window in global memory, any radius (slow)",
     tsr__box_global, NULL, 0, 0, NULL},
    {"unrolled3x3", TSR_BACKEND_CUDA, "radius 1 only: nine taps unrolled per pixel", tsr__box_3x3,
     tsr__box_3x3_supports, 0, 0, NULL},
    {"shared", TSR_BACKEND_CUDA, "shared-memory tile with halo, separable sums in the tile; radii up to 16",
     tsr__box_tile, tsr__box_tile_supports, 0, 0, NULL},
    {"ring", TSR_BACKEND_CUDA,
     "8-bit gray, radii up to 3 or equal radii up to 12: box/reg's arithmetic, the window rows in a per-lane shared-memory ring filled by cp.async",
     tsr__box_ring, tsr__box_ring_supports, 1, 0, tsr__box_ring_prefer},
    {"stream", TSR_BACKEND_CUDA,
     "8-bit gray, equal radii 3 to 32: box/ring's lanes with only the entering and leaving rows queued ahead (shared memory independent of the radius, 8- or 16-row strips)",
     tsr__box_stream, tsr__box_stream_supports, 1, 0, tsr__box_stream_prefer},
    {"reg", TSR_BACKEND_CUDA,
     "8-bit gray, radii up to 2: 16 columns per lane, window rows and column sums in registers (box/ring is faster)",
     tsr__box_reg, tsr__box_reg_supports, 0, 0, NULL},
    {"wide", TSR_BACKEND_CUDA,
     "8-bit gray, rx up to 127, ry up to 128: per-warp prefix rows in shared memory, two reads per pixel whatever the radius",
     tsr__box_wide, tsr__box_wide_supports, 1, 0, NULL},
    {"sweep", TSR_BACKEND_CUDA,
     "8-bit gray, rx up to 94, ry up to 128: column sums transposed through shared memory, a running sum along each row",
     tsr__box_sweep, tsr__box_sweep_supports, 0, 0, NULL},
    {"warp", TSR_BACKEND_CUDA,
     "8-bit gray, radii up to 48: each warp slides packed column sums over its own segment and strip, no barriers",
     tsr__box_warp, tsr__box_warp_supports, 1, 0, NULL},
    {"fast", TSR_BACKEND_CUDA,
     "running column sums in registers plus a block-wide prefix scan per row: cost independent of the radius",
     tsr__box_fast, tsr__box_fast_supports, 1, 0, NULL},
    {"tiled", TSR_BACKEND_CUDA,
     "one channel: running column sums in registers, 8 rows per barrier pair, warp prefix scans (measured slower)",
     tsr__box_tiled, tsr__box_tiled_supports, 0, 0, NULL},
    TSR_CUDA_END};

extern "C" const tsr_variant tsr__threshold_cuda[] = {
    {"shared-tile", TSR_BACKEND_CUDA, "seeds/003: dynamic shared tile with a clamped halo; blocks up to 33",
     tsr__threshold_tile, tsr__threshold_tile_supports, 0, 0, NULL},
    {"ring", TSR_BACKEND_CUDA, "box/ring's means with the comparison as the output step (8-bit, blocks up to 25)",
     tsr__threshold_ring, tsr__threshold_ring_supports, 1, 0, tsr__threshold_ring_prefer},
    {"stream", TSR_BACKEND_CUDA, "box/stream's means with the comparison as the output step (8-bit, blocks 7 to 65)",
     tsr__threshold_stream, tsr__threshold_stream_supports, 1, 0, tsr__threshold_stream_prefer},
    {"reg", TSR_BACKEND_CUDA, "box/reg's means with the comparison as the output step (8-bit, blocks up to 7)",
     tsr__threshold_reg, tsr__threshold_reg_supports, 0, 0, NULL},
    {"wide", TSR_BACKEND_CUDA, "box/wide's means with the comparison as the output step (8-bit, blocks up to 255)",
     tsr__threshold_wide, tsr__threshold_wide_supports, 1, 0, NULL},
    {"sweep", TSR_BACKEND_CUDA, "box/sweep's means with the comparison in the row pass (8-bit, blocks up to 189)",
     tsr__threshold_sweep, tsr__threshold_sweep_supports, 0, 0, NULL},
    {"warp", TSR_BACKEND_CUDA, "box/warp's means with the comparison as the output step (8-bit, blocks up to 97)",
     tsr__threshold_warp, tsr__threshold_warp_supports, 1, 0, NULL},
    {"fused", TSR_BACKEND_CUDA, "the fast box kernel's sums with the comparison fused into its output pass",
     tsr__threshold_fused, tsr__threshold_fused_supports, 1, 0, NULL},
    {"tiled", TSR_BACKEND_CUDA, "box/tiled's sums with the comparison as the output step (measured slower)",
     tsr__threshold_tiled, tsr__threshold_tiled_supports, 0, 0, NULL},
    {"global", TSR_BACKEND_CUDA, "window loop in global memory, any block size (slow; fallback for huge blocks)",
     tsr__threshold_global, NULL, 0, 0, NULL},
    TSR_CUDA_END};
