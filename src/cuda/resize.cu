/* Shrinking by area averaging on the GPU, bit-exact with src/cpu/resize.c:
 *  - integer factors: exact integer cell sums; 2x2 (cn != 2) rounds (sum + 2) >> 2, other
 *    factors multiply the float sum by the float 1/(fx*fy) and round half to even;
 *  - fractional factors: OpenCV's per-axis weight cells, computed inside the output kernel with
 *    the host's double arithmetic step for step (explicit _rn intrinsics, so no FMA
 *    contraction), then each output accumulates in float in the reference's order.
 * No tables, no allocation, no host synchronisation. */
#include "kernels_common.cuh"
#include <stdlib.h>

/* ------------------------------------------------------------------------ integer factors */

/* One thread per output pixel (all CN channels, a template parameter so the per-channel sums
 * stay in registers): the fx x fy cell summed exactly. */
template <class T, class S, int CN>
__global__ void tsr__resize_int_kernel(const unsigned char *src, size_t sstride, unsigned char *dst, size_t dstride,
                                       int dw, int dh, int fx, int fy, float inv_area, unsigned maxv)
{
    constexpr int cn = CN;
    int dx = blockIdx.x * blockDim.x + threadIdx.x;
    if (dx >= dw) return;
    for (long long dy = blockIdx.y; dy < dh; dy += gridDim.y) {
        S sum[4] = {0, 0, 0, 0};
        for (long long y = dy * fy; y < dy * fy + fy; y++) {
            const T *row = (const T *)(src + (size_t)y * sstride) + (size_t)dx * fx * cn;
            for (int k = 0; k < fx * cn; k += cn)
#pragma unroll
                for (int c = 0; c < cn; c++) sum[c] += __ldg(row + k + c);
        }
        T *d = (T *)(dst + (size_t)dy * dstride) + (size_t)dx * cn;
#pragma unroll
        for (int c = 0; c < cn; c++) {
            unsigned v;
            if (fx == 1 && fy == 1) v = (unsigned)sum[c];
            else if (fx == 2 && fy == 2 && cn != 2) v = (unsigned)((sum[c] + 2) >> 2);
            else {
                int r = __float2int_rn(__fmul_rn(__ull2float_rn((unsigned long long)sum[c]), inv_area));
                v = r < 0 ? 0u : (unsigned)r > maxv ? maxv : (unsigned)r;
            }
            d[c] = (T)v;
        }
    }
}

/* Integer factors fx x fy: queue the cell kernel; 32-bit sums when maxv * fx * fy fits. */
static tsr_status tsr__resize_int(const tsr_image *src, tsr_image *dst, int fx, int fy, cudaStream_t st)
{
    unsigned maxv = src->depth == TSR_U8 ? 255u : 65535u;
    float inv_area = 1.f / (float)(fx * fy);   /* the reference's float reciprocal, same rounding */
    int fit32 = (unsigned long long)maxv * (unsigned long long)fx * (unsigned long long)fy + 2 <= 0xffffffffull;
    dim3 block(128), grid(tsr__div_up((unsigned)dst->width, 128), tsr__cu_grid_rows(dst->height));
    const unsigned char *s = (const unsigned char *)src->data;
    unsigned char *d = (unsigned char *)dst->data;
    int dw = dst->width, dh = dst->height;
#define TSR_RESIZE_INT(T, S, CN) \
    tsr__resize_int_kernel<T, S, CN><<<grid, block, 0, st>>>(s, src->stride, d, dst->stride, dw, dh, fx, fy, inv_area, maxv)
#define TSR_RESIZE_INT_CN(T, S)                 \
    switch (src->channels) {                    \
    case 1: TSR_RESIZE_INT(T, S, 1); break;     \
    case 2: TSR_RESIZE_INT(T, S, 2); break;     \
    case 3: TSR_RESIZE_INT(T, S, 3); break;     \
    default: TSR_RESIZE_INT(T, S, 4); break;    \
    }
    if (src->depth == TSR_U8) {
        if (fit32) TSR_RESIZE_INT_CN(uint8_t, uint32_t)
        else TSR_RESIZE_INT_CN(uint8_t, unsigned long long)
    } else {
        if (fit32) TSR_RESIZE_INT_CN(uint16_t, uint32_t)
        else TSR_RESIZE_INT_CN(uint16_t, unsigned long long)
    }
#undef TSR_RESIZE_INT_CN
#undef TSR_RESIZE_INT
    return TSR_CUDA_LAUNCHED("resize integer-factor kernel");
}

/* ------------------------------------------------------------------------ 8-bit gray 2x2 and 4x4 */

/* resize/vec16 (8-bit one channel, F x F cells, F = 2 or 4): a thread makes NO (16 or 8) output
 * bytes of one row from F rows of NO x F source bytes, all 16-byte loads and one 16- or 8-byte
 * store. The cells kernel above loaded one byte per sample and stored one per output: 4 (2x2)
 * or 16 (4x4) loads and a store per output byte, bound by load instructions at 28% (2x) and 49%
 * (4x) of the copy bandwidth on 8192x8192. 2x2: a word's two byte pairs summed as packed 16-bit
 * halves, the rows added, (s + 2) >> 2 as the reference rounds; 4x4: one dp4a per word and row,
 * the sum's float product with 1/16 (exact) rounded half to even as an integer. Outputs past the
 * last whole NO (the row's tail) are made one by one from bytes. */
template <int F>
__device__ static inline unsigned tsr__cell_round(unsigned s)
{
    return F == 2 ? (s + 2) >> 2 : (s + 7 + ((s >> 4) & 1)) >> 4;   /* 4x4: half to even */
}

template <int F, int NO>
__global__ void __launch_bounds__(128) tsr__resize_vec16_kernel(const unsigned char *src, size_t sstride,
                                                                unsigned char *dst, size_t dstride, int dw, int dh)
{
    constexpr int L = NO * F / 16;   /* 16-byte loads per source row */
    const int t = blockIdx.x * blockDim.x + threadIdx.x, x0 = NO * t;
    if (x0 >= dw) return;
    for (long long dy = blockIdx.y; dy < dh; dy += gridDim.y) {
        const unsigned char *s0 = src + (size_t)dy * F * sstride + (size_t)x0 * F;
        unsigned char *d = dst + (size_t)dy * dstride + x0;
        if (x0 + NO <= dw) {
            unsigned w[F][4 * L];
#pragma unroll
            for (int r = 0; r < F; r++)
#pragma unroll
                for (int k = 0; k < L; k++) {
                    const uint4 u = __ldg((const uint4 *)(s0 + (size_t)r * sstride) + k);
                    w[r][4 * k] = u.x;
                    w[r][4 * k + 1] = u.y;
                    w[r][4 * k + 2] = u.z;
                    w[r][4 * k + 3] = u.w;
                }
            unsigned o[NO / 4];
            if constexpr (F == 2) {
                unsigned h[4 * L];   /* per source word: two 2x2 sums (+2) as 16-bit halves */
#pragma unroll
                for (int j = 0; j < 4 * L; j++)
                    h[j] = (w[0][j] & 0x00ff00ffu) + ((w[0][j] >> 8) & 0x00ff00ffu) + (w[F - 1][j] & 0x00ff00ffu) +
                           ((w[F - 1][j] >> 8) & 0x00ff00ffu) + 0x00020002u;
#pragma unroll
                for (int j = 0; j < NO / 4; j++)
                    o[j] = __byte_perm((h[2 * j] >> 2) & 0x00ff00ffu, (h[2 * j + 1] >> 2) & 0x00ff00ffu, 0x6420);
            } else {
                unsigned sum[NO];   /* one output per source word */
#pragma unroll
                for (int j = 0; j < NO; j++) {
                    sum[j] = 0;
#pragma unroll
                    for (int r = 0; r < F; r++) sum[j] = __dp4a(w[r][j], 0x01010101u, sum[j]);
                }
#pragma unroll
                for (int j = 0; j < NO / 4; j++)
                    o[j] = tsr__cell_round<F>(sum[4 * j]) | tsr__cell_round<F>(sum[4 * j + 1]) << 8 |
                           tsr__cell_round<F>(sum[4 * j + 2]) << 16 | tsr__cell_round<F>(sum[4 * j + 3]) << 24;
            }
            if constexpr (NO == 16) *(uint4 *)d = make_uint4(o[0], o[1], o[2], o[3]);
            else *(uint2 *)d = make_uint2(o[0], o[1]);
        } else {
            for (int x = 0; x < dw - x0; x++) {
                unsigned sum = 0;
                for (int r = 0; r < F; r++)
                    for (int k = 0; k < F; k++) sum += s0[(size_t)r * sstride + (size_t)x * F + k];
                d[x] = (unsigned char)tsr__cell_round<F>(sum);
            }
        }
    }
}

/* resize/vec16 for 8-bit RGBA shrunk 2x2: a thread makes NP output pixels (NP a multiple of 4:
 * whole 16-byte stores) from two source rows of 2 * NP pixels, all 16-byte loads; each pixel is
 * one word (channel c in byte c), the four pixels of a cell are summed as packed 16-bit halves
 * (channels 0 and 2, then 1 and 3) and rounded (s + 2) >> 2 as the reference does. Outputs past
 * the last whole NP (the row's tail) are made one by one from bytes. The cells kernel loaded each
 * sample with its own 1-byte load. The same scheme for RGB (16 pixels per thread, 96 source
 * bytes per row) was slower than cells on 4096x4096 (H100: 46.2 against 32.7 us; each 16-byte
 * load of a warp spread over 3 KB): RGB has its own kernel below. */
template <int NP>
__global__ void __launch_bounds__(128) tsr__resize_vec16c_kernel(const unsigned char *src, size_t sstride,
                                                                unsigned char *dst, size_t dstride, int dw, int dh)
{
    const int t = blockIdx.x * blockDim.x + threadIdx.x, x0 = NP * t;
    if (x0 >= dw) return;
    for (long long dy = blockIdx.y; dy < dh; dy += gridDim.y) {
        const unsigned char *s0 = src + (size_t)dy * 2 * sstride + (size_t)x0 * 8;
        unsigned char *d = dst + (size_t)dy * dstride + (size_t)x0 * 4;
        if (x0 + NP <= dw) {
            unsigned w[2][2 * NP];   /* the two rows' source pixels */
#pragma unroll
            for (int r = 0; r < 2; r++)
#pragma unroll
                for (int k = 0; k < NP / 2; k++) {
                    const uint4 u = __ldg((const uint4 *)(s0 + (size_t)r * sstride) + k);
                    w[r][4 * k] = u.x;
                    w[r][4 * k + 1] = u.y;
                    w[r][4 * k + 2] = u.z;
                    w[r][4 * k + 3] = u.w;
                }
            unsigned o[NP];
#pragma unroll
            for (int j = 0; j < NP; j++) {
                const unsigned px[4] = {w[0][2 * j], w[0][2 * j + 1], w[1][2 * j], w[1][2 * j + 1]};
                unsigned lo = 0x00020002u, hi = 0x00020002u;
#pragma unroll
                for (int q = 0; q < 4; q++) {
                    lo += px[q] & 0x00ff00ffu;
                    hi += (px[q] >> 8) & 0x00ff00ffu;
                }
                o[j] = ((lo >> 2) & 0x00ff00ffu) | (((hi >> 2) & 0x00ff00ffu) << 8);
            }
#pragma unroll
            for (int k = 0; k < NP / 4; k++) ((uint4 *)d)[k] = make_uint4(o[4 * k], o[4 * k + 1], o[4 * k + 2], o[4 * k + 3]);
        } else {
            for (int x = 0; x < dw - x0; x++)
                for (int c = 0; c < 4; c++) {
                    const size_t i = (size_t)x * 8 + c;
                    const unsigned sum = s0[i] + s0[i + 4] + s0[sstride + i] + s0[sstride + i + 4];
                    d[(size_t)x * 4 + c] = (unsigned char)((sum + 2) >> 2);
                }
        }
    }
}

/* resize/vec16 for 8-bit RGB shrunk 2x2: thread t makes output bytes [16t, 16t + 16) of a row
 * (5 1/3 pixels: one 16-byte store) from source bytes [32t - 2, 32t + 34) of two rows: the
 * warp's 16-byte loads cover 1 KB of each row without gaps, where a thread per 16 whole pixels
 * (96 source bytes) spread each load of a warp over 3 KB and measured slower than the cells
 * kernel. A thread's first output byte is channel p = t mod 3 of its pixel, which differs from
 * lane to lane; the code is the same for every p (no divergence): the rows' bytes are summed
 * as packed 16-bit halves (even and odd bytes apart), the window is moved by 2 - p halves so it
 * starts at channel 0 of the thread's first pixel (a funnel shift by a lane-dependent amount),
 * the 18 outputs of those 6 pixels are formed ((s + 2) >> 2, as the reference rounds) and the
 * 16 bytes from output p on are stored (another funnel shift). Outputs past the last whole 16
 * bytes of a row are made one by one from bytes. */
__global__ void __launch_bounds__(128) tsr__resize_vec16rgb_kernel(const unsigned char *src, size_t sstride,
                                                                  long long srow, unsigned char *dst, size_t dstride,
                                                                  int dw, int dh)
{
    const int t = blockIdx.x * blockDim.x + threadIdx.x, drow = 3 * dw;
    if (16LL * t >= drow) return;
    const int ob = 16 * t, p = t % 3;
    const long long sb = 32LL * t;   /* the thread's first aligned source byte */
    for (long long dy = blockIdx.y; dy < dh; dy += gridDim.y) {
        const unsigned char *s0 = src + (size_t)dy * 2 * sstride;
        unsigned char *d = dst + (size_t)dy * dstride + ob;
        if (ob + 16 <= drow) {
            /* the stream: word 0 = bytes sb - 4 .. sb - 1, words 1..8 = sb .. sb + 31, word 9 =
             * sb + 32 .. sb + 35 (each read only where inside the row and needed: word 0 from
             * t = 1 on, where p = 0 does not use it; word 9 whenever it lies inside the row's
             * bytes, which it does whenever p < 2 needs it) */
            unsigned ev[10], od[10];   /* vertical sums: even bytes (4j, 4j + 2), odd (4j + 1, 4j + 3) */
#pragma unroll
            for (int j = 0; j < 10; j++) ev[j] = od[j] = 0;
#pragma unroll
            for (int r = 0; r < 2; r++) {
                const unsigned char *row = s0 + (size_t)r * sstride;
                unsigned w[10];
                w[0] = t > 0 ? __ldg((const unsigned *)(row + sb) - 1) : 0u;
                const uint4 a = __ldg((const uint4 *)(row + sb)), b = __ldg((const uint4 *)(row + sb) + 1);
                w[1] = a.x; w[2] = a.y; w[3] = a.z; w[4] = a.w;
                w[5] = b.x; w[6] = b.y; w[7] = b.z; w[8] = b.w;
                w[9] = sb + 36 <= srow ? __ldg((const unsigned *)(row + sb) + 8) : 0u;
#pragma unroll
                for (int j = 0; j < 10; j++) {
                    ev[j] += w[j] & 0x00ff00ffu;
                    od[j] += (w[j] >> 8) & 0x00ff00ffu;
                }
            }
            /* S = the stream from byte 4 - 2p: channel 0 of the first pixel at S position 0 */
            const unsigned sh = 16 * (2 - p);
            unsigned Se[10], So[10];
#pragma unroll
            for (int j = 0; j < 9; j++) {
                Se[j] = __funnelshift_rc(ev[j], ev[j + 1], sh);
                So[j] = __funnelshift_rc(od[j], od[j + 1], sh);
            }
            Se[9] = So[9] = 0;
            /* H[i] = V[i] + V[i + 3], rounded: (H[4w], H[4w + 2]) and (H[4w + 1], H[4w + 3]) */
            unsigned Re[9], Ro[9];
#pragma unroll
            for (int j = 0; j < 9; j++) {
                Re[j] = (((Se[j] + __byte_perm(So[j], So[j + 1], 0x5432)) + 0x00020002u) >> 2) & 0x00ff00ffu;
                Ro[j] = (((So[j] + Se[j + 1]) + 0x00020002u) >> 2) & 0x00ff00ffu;
            }
            /* output m (pixel m / 3, channel m % 3) is H at S position 6 (m / 3) + m % 3 */
            unsigned q[5] = {0, 0, 0, 0, 0};
#pragma unroll
            for (int m = 0; m < 18; m++) {
                const int i = 6 * (m / 3) + m % 3, r = i & 3;
                const unsigned v = ((r & 1 ? Ro[i >> 2] : Re[i >> 2]) >> (16 * (r >> 1))) & 0xffu;
                q[m >> 2] |= v << (8 * (m & 3));
            }
            const unsigned bs = 8 * p;   /* the thread's 16 bytes start at output p */
            *(uint4 *)d = make_uint4(__funnelshift_r(q[0], q[1], bs), __funnelshift_r(q[1], q[2], bs),
                                     __funnelshift_r(q[2], q[3], bs), __funnelshift_r(q[3], q[4], bs));
        } else {
            for (int o = ob; o < drow; o++) {
                const size_t i = (size_t)(o / 3) * 6 + o % 3;
                const unsigned sum = s0[i] + s0[i + 3] + s0[sstride + i] + s0[sstride + i + 3];
                d[o - ob] = (unsigned char)((sum + 2) >> 2);
            }
        }
    }
}

/* Whether these arguments are vec16's: 8-bit one channel shrunk by 2 or 4 both ways, or 8-bit
 * RGB or RGBA shrunk by 2 both ways. */
static int tsr__resize_vec16_supports(const tsr_image *src, const void *params)
{
    int fx, fy;
    if (src->depth != TSR_U8 || !tsr__resize_is_integer(src, (const tsr_resize_params *)params, &fx, &fy) || fx != fy)
        return 0;
    return src->channels == 1 ? fx == 2 || fx == 4 : (src->channels == 3 || src->channels == 4) && fx == 2;
}

/* resize/vec16: see the kernel; rows not 16-byte aligned run the cells kernel. */
static tsr_status tsr__resize_vec16(const tsr_image *src, tsr_image *dst, const void *params, const tsr_exec *ex)
{
    cudaStream_t st = (cudaStream_t)ex->stream;
    const int f = src->width / dst->width;
    if (!tsr__cu_aligned(src->data, src->stride, 16) || !tsr__cu_aligned(dst->data, dst->stride, 16))
        return tsr__resize_int(src, dst, f, f, st);
    /* Outputs per thread (TSR_CUDA_RESIZE_OUT, 8 or 16, for tessera-bench-cuda --small): 2x the
     * same either way (30.6 / 30.7 us on 8192x8192, H100); 4x 8 (27.3 against 28.4 us, 4.8
     * against 5.2 at 3840x2160): twice the threads, each with 8 loads in flight, not 16. */
    if (src->channels == 3) {   /* RGB: 16 output bytes per thread */
        dim3 block(128), grid(tsr__div_up(tsr__div_up(3u * (unsigned)dst->width, 16), 128), tsr__cu_grid_rows(dst->height));
        tsr__resize_vec16rgb_kernel<<<grid, block, 0, st>>>((const unsigned char *)src->data, src->stride,
                                                            (long long)tsr_image_row_bytes(src), (unsigned char *)dst->data,
                                                            dst->stride, dst->width, dst->height);
        return TSR_CUDA_LAUNCHED("resize/vec16 kernel");
    }
    if (src->channels == 4) {   /* RGBA: 4 outputs (16 bytes) per thread */
        dim3 block(128), grid(tsr__div_up(tsr__div_up((unsigned)dst->width, 4), 128), tsr__cu_grid_rows(dst->height));
        tsr__resize_vec16c_kernel<4><<<grid, block, 0, st>>>((const unsigned char *)src->data, src->stride,
                                                            (unsigned char *)dst->data, dst->stride, dst->width,
                                                            dst->height);
        return TSR_CUDA_LAUNCHED("resize/vec16 kernel");
    }
    const char *e = getenv("TSR_CUDA_RESIZE_OUT");
    const int no = e && *e ? (atoi(e) == 8 ? 8 : 16) : f == 4 ? 8 : 16;
    dim3 block(128), grid(tsr__div_up(tsr__div_up((unsigned)dst->width, no), 128), tsr__cu_grid_rows(dst->height));
    const unsigned char *s = (const unsigned char *)src->data;
    unsigned char *d = (unsigned char *)dst->data;
#define TSR__RV16(F, NO) tsr__resize_vec16_kernel<F, NO><<<grid, block, 0, st>>>(s, src->stride, d, dst->stride, dst->width, dst->height)
    if (f == 2) {
        if (no == 8) TSR__RV16(2, 8);
        else TSR__RV16(2, 16);
    } else {
        if (no == 8) TSR__RV16(4, 8);
        else TSR__RV16(4, 16);
    }
#undef TSR__RV16
    return TSR_CUDA_LAUNCHED("resize/vec16 kernel");
}

/* ------------------------------------------------------------------------ fractional factors */

/* One axis shrunk from ssize to dsize samples (scale = ssize/dsize as the reference computes it). */
struct tsr__cu_area_axis {
    int ssize, dsize;
    double scale;
};

/* Samples one destination cell can touch: a partial one, floor(scale) whole ones, a partial. */
static int tsr__area_slots(double scale) { return (int)scale + 2; }

/* One destination cell of an axis: source samples si0 .. si0+n-1 (always consecutive), weighted
 * 'first' for the first, 'last' for the last and 'mid' for the others (n == 1: first == last). */
struct tsr__cu_cell {
    int si0, n;
    float first, mid, last;
};

/* Cell d of an axis, exactly as tsr__area_tab_compute in src/cpu/resize.c: the host's double
 * arithmetic step for step (explicit _rn intrinsics, so no FMA contraction). */
__device__ static tsr__cu_cell tsr__area_cell_of(const tsr__cu_area_axis &ax, int d)
{
    tsr__cu_cell c;
    const int ssize = ax.ssize;
    const double scale = ax.scale;
    double fsx1 = __dmul_rn((double)d, scale), fsx2 = __dadd_rn(fsx1, scale);
    double rest = __dsub_rn((double)ssize, fsx1);
    double cell = scale < rest ? scale : rest;
    int sx1 = (int)ceil(fsx1), sx2 = (int)floor(fsx2), lo, hi;
    float alo = 0.f, ahi = 0.f;
    sx2 = sx2 < ssize - 1 ? sx2 : ssize - 1;
    sx1 = sx1 < sx2 ? sx1 : sx2;
    lo = __dsub_rn((double)sx1, fsx1) > 1e-3;
    hi = __dsub_rn(fsx2, (double)sx2) > 1e-3;
    if (lo) alo = __double2float_rn(__ddiv_rn(__dsub_rn((double)sx1, fsx1), cell));
    c.mid = __double2float_rn(__ddiv_rn(1.0, cell));
    if (hi) {
        double a = __dsub_rn(fsx2, (double)sx2) < 1. ? __dsub_rn(fsx2, (double)sx2) : 1.;
        a = a < cell ? a : cell;
        ahi = __double2float_rn(__ddiv_rn(a, cell));
    }
    c.si0 = lo ? sx1 - 1 : sx1;
    c.n = lo + (sx2 - sx1) + hi;
    c.first = lo ? alo : sx2 > sx1 ? c.mid : ahi;
    c.last = hi ? ahi : sx2 > sx1 ? c.mid : alo;
    return c;
}

/* round(v a) for a sample v (below 2^23) and the weight A, AB = -2^23 A, the product of the
 * sample as a float and its weight that the reference rounds: 2^23 + v is exact (v fills the
 * mantissa), and (2^23 + v) a - 2^23 a is exactly v a before the fused multiply-add's single
 * rounding. Two instructions (an or and the multiply-add) where converting first took three,
 * and the integer conversion runs at a quarter of the rate. */
__device__ static __forceinline__ float tsr__sample_times(unsigned v, float a, float ab)
{
    return __fmaf_rn(__uint_as_float(0x4b000000u | v), a, ab);
}

/* Weight of entry k of cell c. */
__device__ static __forceinline__ float tsr__cell_alpha(const tsr__cu_cell &c, int k)
{
    return k == 0 ? c.first : k == c.n - 1 ? c.last : c.mid;
}

/* One thread per output column, ROWS output rows per block. Each thread computes its x cell,
 * the block's first threads the cells of its rows (into shared memory), so no tables are read
 * or allocated. For each source row of an output's cell (weight beta) the row's x-weighted sum is
 * formed in float (the reference's buf) and accumulated as beta * buf, all in the reference's
 * order. MAXS > 0: x cells have at most MAXS samples, held in registers and applied predicated;
 * MAXS == 0: any width, a loop over the cell. A source row shared by two cells (the partial row
 * at their boundary) is weighted once: its sum depends only on the row and dx, so reuse is exact. */
template <class T, int CN, int MAXS, int MAXR, int ROWS>
__device__ __forceinline__ void tsr__resize_area_body(const unsigned char *src, size_t sstride, unsigned char *dst, size_t dstride,
                                        tsr__cu_area_axis x, tsr__cu_area_axis y, unsigned maxv)
{
    constexpr int cn = CN, ms = MAXS > 0 ? MAXS : 1;
    __shared__ tsr__cu_cell ycell[ROWS];
    const int dx = blockIdx.x * blockDim.x + threadIdx.x, live = dx < x.dsize;
    tsr__cu_cell xc = {0, 0, 0.f, 0.f, 0.f};
    int xs[ms];
    float xa[ms], xb[ms];   /* the weights, and -2^23 times them (tsr__sample_times) */
    if (live) {
        xc = tsr__area_cell_of(x, dx);
#pragma unroll
        for (int k = 0; k < ms; k++) {
            xs[k] = (xc.si0 + (k < xc.n ? k : 0)) * cn;
            xa[k] = tsr__cell_alpha(xc, k);
            xb[k] = __fmul_rn(xa[k], -8388608.f);
        }
    }
    for (long long dy0 = (long long)blockIdx.y * ROWS; dy0 < y.dsize; dy0 += (long long)gridDim.y * ROWS) {
        const int nrows = y.dsize - dy0 < ROWS ? (int)(y.dsize - dy0) : ROWS;
        int cached = -1;
        float cbuf[4] = {0.f, 0.f, 0.f, 0.f};
        __syncthreads();   /* the previous group's cells are no longer read */
        if (threadIdx.x < nrows) ycell[threadIdx.x] = tsr__area_cell_of(y, (int)(dy0 + threadIdx.x));
        __syncthreads();
        if (!live) continue;
        for (int r = 0; r < nrows; r++) {
            const tsr__cu_cell yc = ycell[r];
            float sum[4] = {0.f, 0.f, 0.f, 0.f};
            if constexpr (MAXR > 0 && MAXS > 0) {
                /* y cells of at most MAXR rows: every sample of the cell loaded before any
                 * arithmetic (up to MAXR x MAXS loads in flight, where the loop below waits a
                 * memory latency per source row); a first row that was the last of the cell
                 * above is neither loaded nor weighted again (its sum depends only on the row
                 * and dx, so the kept one is the same float) */
                const bool reuse = yc.si0 == cached;
                unsigned v[MAXR][ms][cn];
#pragma unroll
                for (int j = 0; j < MAXR; j++)
                    if (j < yc.n && (j > 0 || !reuse)) {
                        const T *row = (const T *)(src + (size_t)(yc.si0 + j) * sstride);
#pragma unroll
                        for (int k = 0; k < ms; k++)
                            if (k < xc.n) {
#pragma unroll
                                for (int c = 0; c < cn; c++) v[j][k][c] = __ldg(row + xs[k] + c);
                            }
                    }
#pragma unroll
                for (int j = 0; j < MAXR; j++)
                    if (j < yc.n) {
                        const float beta = tsr__cell_alpha(yc, j);
                        float buf[4] = {0.f, 0.f, 0.f, 0.f};
                        if (j == 0 && reuse) {
#pragma unroll
                            for (int c = 0; c < cn; c++) buf[c] = cbuf[c];
                        } else {
#pragma unroll
                            for (int k = 0; k < ms; k++)
                                if (k < xc.n) {
#pragma unroll
                                    for (int c = 0; c < cn; c++)
                                        buf[c] = __fadd_rn(buf[c], tsr__sample_times(v[j][k][c], xa[k], xb[k]));
                                }
                        }
#pragma unroll
                        for (int c = 0; c < cn; c++) sum[c] = j == 0 ? __fmul_rn(beta, buf[c]) : __fadd_rn(sum[c], __fmul_rn(beta, buf[c]));
                        if (j == yc.n - 1) {
#pragma unroll
                            for (int c = 0; c < cn; c++) cbuf[c] = buf[c];
                        }
                    }
                cached = yc.si0 + yc.n - 1;
            } else
            {
            for (int j = 0; j < yc.n; j++) {
                const int si = yc.si0 + j;
                const float beta = tsr__cell_alpha(yc, j);
                if (si != cached) {
                    const T *row = (const T *)(src + (size_t)si * sstride);
                    float buf[4] = {0.f, 0.f, 0.f, 0.f};
                    if (MAXS) {
#pragma unroll
                        for (int k = 0; k < ms; k++)
                            if (k < xc.n) {
#pragma unroll
                                for (int c = 0; c < cn; c++)
                                    buf[c] = __fadd_rn(buf[c], tsr__sample_times(__ldg(row + xs[k] + c), xa[k], xb[k]));
                            }
                    } else {
                        for (int k = 0; k < xc.n; k++) {
                            const T *p = row + (size_t)(xc.si0 + k) * cn;
                            const float alpha = tsr__cell_alpha(xc, k), ab = __fmul_rn(alpha, -8388608.f);
#pragma unroll
                            for (int c = 0; c < cn; c++) buf[c] = __fadd_rn(buf[c], tsr__sample_times(__ldg(p + c), alpha, ab));
                        }
                    }
#pragma unroll
                    for (int c = 0; c < cn; c++) cbuf[c] = buf[c];
                    cached = si;
                }
#pragma unroll
                for (int c = 0; c < cn; c++) sum[c] = j == 0 ? __fmul_rn(beta, cbuf[c]) : __fadd_rn(sum[c], __fmul_rn(beta, cbuf[c]));
            }
            }
            T *d = (T *)(dst + (size_t)(dy0 + r) * dstride) + (size_t)dx * cn;
#pragma unroll
            for (int c = 0; c < cn; c++) {
                int v = __float2int_rn(sum[c]);
                d[c] = (T)(v < 0 ? 0u : (unsigned)v > maxv ? maxv : (unsigned)v);
            }
        }
    }
}

/* The fractional kernel (tsr__resize_area_body) as launched; one channel with cells preloaded
 * also as tsr__resize_area_kernel8, capped at 64 registers so that 8 blocks of 128 threads fit
 * an SM (the compiler's choice was 71 registers, 7 blocks; issue-bound at 38% of warps resident
 * in Nsight Compute, fourth session). */
template <class T, int CN, int MAXS, int MAXR, int ROWS>
__global__ void tsr__resize_area_kernel(const unsigned char *src, size_t sstride, unsigned char *dst, size_t dstride,
                                        tsr__cu_area_axis x, tsr__cu_area_axis y, unsigned maxv)
{
    tsr__resize_area_body<T, CN, MAXS, MAXR, ROWS>(src, sstride, dst, dstride, x, y, maxv);
}

template <class T, int CN, int MAXS, int MAXR, int ROWS>
__global__ void __launch_bounds__(128, 8) tsr__resize_area_kernel8(const unsigned char *src, size_t sstride,
                                                                    unsigned char *dst, size_t dstride,
                                                                    tsr__cu_area_axis x, tsr__cu_area_axis y,
                                                                    unsigned maxv)
{
    tsr__resize_area_body<T, CN, MAXS, MAXR, ROWS>(src, sstride, dst, dstride, x, y, maxv);
}

/* Output rows per block: reuse of boundary rows against parallelism. */
#define TSR_RESIZE_AREA_ROWS 4

/* Queue the fractional kernel for T samples; x cells of up to 4 or 8 samples in registers. */
template <class T>
static void tsr__resize_area_launch(const tsr_image *src, tsr_image *dst, const tsr__cu_area_axis &x,
                                    const tsr__cu_area_axis &y, cudaStream_t st)
{
    const int rows = TSR_RESIZE_AREA_ROWS, slots = tsr__area_slots(x.scale);
    /* cells of at most 4 x 4 samples (shrinking by less than 3 both ways) load them all first;
     * TSR_CUDA_RESIZE_PRELOAD=0 keeps the row-by-row loop (the benchmark's comparison) */
    const char *e = getenv("TSR_CUDA_RESIZE_PRELOAD");
    const int preload = slots <= 4 && tsr__area_slots(y.scale) <= 4 && !(e && *e == '0');
    /* Row groups per block: each thread works out its x cell once (double arithmetic, three
     * divisions) and reuses it for every group it visits, so blocks take several groups where
     * there are enough blocks across to fill the GPU (about 64 per SM in all; 8192 -> 3072 on the
     * H100: 114.9-116.0 us at 128-512 blocks down, 119.7 at 88, 120.0 at one group per block).
     * TSR_CUDA_RESIZE_BLOCKS_Y overrides the blocks down the image. */
    const long long groups = ((long long)dst->height + rows - 1) / rows, bx = tsr__div_up((unsigned)dst->width, 128);
    long long gy = 64LL * tsr__cu_sm_count() / bx;
    const char *eg = getenv("TSR_CUDA_RESIZE_BLOCKS_Y");
    const char *e8 = getenv("TSR_CUDA_RESIZE_CAP64");   /* 0: the uncapped kernel (the benchmark's comparison) */
    if (eg && *eg) gy = atoi(eg);
    if (gy < 1) gy = 1;
    if (gy > groups) gy = groups;
    dim3 block(128), grid((unsigned)bx, tsr__cu_grid_rows((int)gy));
    unsigned maxv = src->depth == TSR_U8 ? 255u : 65535u;
    const unsigned char *sp = (const unsigned char *)src->data;
    unsigned char *dp = (unsigned char *)dst->data;
#define TSR_RESIZE_AREA(CN, MAXS, MAXR) \
    tsr__resize_area_kernel<T, CN, MAXS, MAXR, TSR_RESIZE_AREA_ROWS><<<grid, block, 0, st>>>(sp, src->stride, dp, dst->stride, x, y, maxv)
#define TSR_RESIZE_AREA_CN(CN)                      \
    do {                                            \
        if (preload && CN == 1 && !(e8 && *e8 == '0')) \
            tsr__resize_area_kernel8<T, 1, 4, 4, TSR_RESIZE_AREA_ROWS><<<grid, block, 0, st>>>(sp, src->stride, dp, dst->stride, x, y, maxv); \
        else if (preload) TSR_RESIZE_AREA(CN, 4, 4); \
        else if (slots <= 4) TSR_RESIZE_AREA(CN, 4, 0); \
        else if (slots <= 8) TSR_RESIZE_AREA(CN, 8, 0); \
        else TSR_RESIZE_AREA(CN, 0, 0);             \
    } while (0)
    switch (src->channels) {
    case 1: TSR_RESIZE_AREA_CN(1); break;
    case 2: TSR_RESIZE_AREA_CN(2); break;
    case 3: TSR_RESIZE_AREA_CN(3); break;
    default: TSR_RESIZE_AREA_CN(4); break;
    }
#undef TSR_RESIZE_AREA_CN
#undef TSR_RESIZE_AREA
}

/* The two axes of a fractional shrink from src's size to dst's. */
static void tsr__area_axes(const tsr_image *src, const tsr_image *dst, tsr__cu_area_axis *x, tsr__cu_area_axis *y)
{
    x->ssize = src->width;
    x->dsize = dst->width;
    x->scale = 1. / ((double)dst->width / src->width);   /* the reference's expression */
    y->ssize = src->height;
    y->dsize = dst->height;
    y->scale = 1. / ((double)dst->height / src->height);
}

/* Fractional factors: one kernel, no tables and no allocation (no host synchronisation). */
static tsr_status tsr__resize_area(const tsr_image *src, tsr_image *dst, cudaStream_t st)
{
    tsr__cu_area_axis x, y;
    tsr__area_axes(src, dst, &x, &y);
    if (src->depth == TSR_U8) tsr__resize_area_launch<uint8_t>(src, dst, x, y, st);
    else tsr__resize_area_launch<uint16_t>(src, dst, x, y, st);
    return TSR_CUDA_LAUNCHED("resize area kernel");
}

/* ------------------------------------------------------------------------ fractional, staged rows */

/* resize/rows (8- and 16-bit, 1 to 4 channels), fractional factors shrinking by less than 3 both ways
 * (larger ones: the band kernel further down):
 * resize/cells loads every sample of an output's cell with its own 1-byte load (about 16
 * predicated loads and their 64-bit addresses per output at 8/3), which left it issue-bound at
 * 23% of the copy bandwidth. Here a block of 256 threads (one output sample each: a channel of a
 * pixel) stages the source rows of a group of output rows (8 for 8-bit samples, 4 for 16-bit)
 * into shared memory with 16-byte copies,
 * then every thread takes its cell's (at most 4) samples of a staged row from a few shared words
 * by funnel shifts and forms the row's weighted sum and the beta-weighted accumulation exactly
 * as resize/cells does (same cells, same float operations in the same order: bit for bit). */
enum { TSR_RR_COLS = 256 };   /* threads per block: 256 / CN pixels x CN channels */

/* The staging's shape for samples of SB bytes: output rows per group, staged rows (cells of
 * scale < 3), bytes staged past the last cell (a thread reads up to 5 or 8 words from its first
 * sample) and the row pitch (>= (3 * COLS + 8) * SB + 15 for the alignment + PAST, a multiple
 * of 16); two stages stay under 48 KB of shared memory. */
template <int SB>
struct tsr__rr_geom {
    static constexpr int OUT = SB == 1 ? 8 : 4;
    static constexpr int MAXR = 3 * OUT + 2;
    static constexpr int PAST = SB == 1 ? 20 : 32;
    static constexpr int PITCH = SB == 1 ? 816 : 1616;
};

/* The SB-byte sample at byte q of a word plus 2^23, as a float (as in tsr__sample_times); MAGIC
 * is 0x4b000000 (a run-time value, so that the selector stays an immediate). */
template <int SB>
__device__ static __forceinline__ float tsr__sample_biased(unsigned word, int q, unsigned magic)
{
    const unsigned sel = SB == 1 ? 0x7440u | (unsigned)q : 0x7400u | (unsigned)(q + 1) << 4 | (unsigned)q;
    return __uint_as_float(__byte_perm(word, magic, sel));
}

/* Queue the copies of one group's NR staged source rows (from R0) into STAGE. The thread copies
 * chunk column 'col' (16 bytes from SRC_COL within a row, N of them inside the image) of rows
 * ROW, ROW + RSTEP, ...; threads with ROW >= RSTEP have no chunk. Whole chunks are asynchronous
 * copies; the row's last, partial chunk is read byte by byte and zero-filled here (the copy's own
 * zero fill would touch the row's padding, which compute-sanitizer's initcheck reports). */
template <int PITCH>
__device__ static __forceinline__ void tsr__rows_stage(unsigned char *stage, const unsigned char *src_col, size_t sstride,
                                                       int r0, int nr, int row, int rstep, int n)
{
    const unsigned char *p = src_col + (size_t)(r0 + row) * sstride;
    const size_t pstep = (size_t)rstep * sstride;
    if (n == 16)
        for (; row < nr; row += rstep, p += pstep) tsr__cp16(stage + row * PITCH, p);
    else
        for (; row < nr; row += rstep, p += pstep) {
            unsigned w[4] = {0u, 0u, 0u, 0u};
#pragma unroll
            for (int k = 0; k < 16; k++)
                if (k < n) w[k >> 2] |= (unsigned)__ldg(p + k) << (8 * (k & 3));
            *(uint4 *)(stage + row * PITCH) = make_uint4(w[0], w[1], w[2], w[3]);
        }
    tsr__cp_commit();
}

/* How staged row i (source row r0 + i) of a group enters its outputs: added with weight 'cur' to
 * the cell it belongs to first; when it is that cell's last row (end), the output is complete
 * and the next cell starts with this row weighted 'next' (0 where the next cell starts at the
 * following row). Cells are consecutive and share at most their boundary row, and a cell that
 * starts on a shared row has more than one row (shrinking by the 1e-3 rule of the cells). */
struct tsr__rows_desc {
    float cur, next;
    int end, pad;
};

/* The descriptor of source row GI among a group's NCELLS consecutive cells. */
__device__ static tsr__rows_desc tsr__rows_desc_of(const tsr__cu_cell *cells, int ncells, int gi)
{
    int r = 0;
    while (r < ncells - 1 && gi >= cells[r].si0 + cells[r].n) r++;
    const tsr__cu_cell c = cells[r];
    tsr__rows_desc d;
    d.cur = tsr__cell_alpha(c, gi - c.si0);
    d.end = gi == c.si0 + c.n - 1;
    d.next = d.end && r + 1 < ncells && cells[r + 1].si0 == gi ? cells[r + 1].first : 0.f;
    d.pad = 0;
    return d;
}

/* One block: output pixels blockIdx.x * (COLS / CN) onwards, row groups blockIdx.y, + gridDim.y,
 * ..., two stages: the next group's rows are copied while the current one is computed. The
 * source must be 16-byte aligned (data and stride), its rows at most 2^30 bytes. 4 blocks per SM
 * (at most 64 registers, 43-46 KB of shared memory each). MAGIC is 0x4b000000 (a parameter so that
 * the byte selectors stay immediates). Asynchronous: queued on the caller's stream. */
template <class T, int CN>
__global__ void __launch_bounds__(TSR_RR_COLS, 4) tsr__resize_rows_kernel(const unsigned char *src, size_t sstride,
                                                                         unsigned char *dst, size_t dstride,
                                                                         tsr__cu_area_axis x, tsr__cu_area_axis y,
                                                                         unsigned magic)
{
    extern __shared__ __align__(16) unsigned char tsr__rows_smem[];   /* 2 stages */
    constexpr int SB = sizeof(T), OUT = tsr__rr_geom<SB>::OUT, MAXR = tsr__rr_geom<SB>::MAXR;
    constexpr int PAST = tsr__rr_geom<SB>::PAST, PITCH = tsr__rr_geom<SB>::PITCH;
    /* three slots: a thread may write the next group's cells while a slower one still reads the
     * previous group's (the barriers keep them within one group of each other) */
    __shared__ tsr__cu_cell ycell[3][OUT];
    __shared__ tsr__rows_desc rdesc[3][MAXR];
    __shared__ int span[2];
    /* thread tid: channel ch of output pixel dx (PIX pixels per block; CN = 3 leaves one idle) */
    constexpr int PIX = TSR_RR_COLS / CN;
    const int tid = threadIdx.x, ch = tid % CN, dx0 = blockIdx.x * PIX, dx = dx0 + tid / CN;
    const int live = tid < PIX * CN && dx < x.dsize;
    const int last = x.dsize - dx0 < PIX ? x.dsize - 1 : dx0 + PIX - 1;
    int si0 = 0;
    float xa[4] = {0.f, 0.f, 0.f, 0.f};   /* weights of the cell's samples, 0 past its end */
    float xb[4] = {0.f, 0.f, 0.f, 0.f};   /* -2^23 times them (exact: a power of two) */
    if (live) {
        const tsr__cu_cell xc = tsr__area_cell_of(x, dx);
        si0 = xc.si0;
#pragma unroll
        for (int k = 0; k < 4; k++) {
            xa[k] = k < xc.n ? tsr__cell_alpha(xc, k) : 0.f;
            xb[k] = __fmul_rn(xa[k], -8388608.f);
        }
        if (dx == dx0 && ch == 0) span[0] = xc.si0 * CN * SB;
        if (dx == last && ch == 0) span[1] = (xc.si0 + xc.n) * CN * SB;
    }
    long long dy0 = (long long)blockIdx.y * OUT;
    const long long step = (long long)gridDim.y * OUT;
    if (tid < OUT && dy0 + tid < y.dsize) ycell[0][tid] = tsr__area_cell_of(y, (int)(dy0 + tid));
    __syncthreads();
    /* the staged span (bytes): 16-byte chunks from the first cell's sample (aligned down) to PAST
     * bytes past the last cell's, so that every thread's shared words lie inside the loaded chunks */
    const int base = span[0] & ~15, nchunks = (span[1] - base + PAST + 15) >> 4;
    const int off = (si0 * CN + ch) * SB - base;
    /* this thread's chunk column and first row of each group; rows step by COLS / nchunks */
    const int rstep = TSR_RR_COLS / nchunks, col = tid % nchunks;
    const int row0 = tid / nchunks < rstep ? tid / nchunks : MAXR;   /* the last few threads: none */
    const int rbytes = x.ssize * CN * SB;
    const int c = base + 16 * col, n = rbytes - c < 16 ? (rbytes - c > 0 ? rbytes - c : 0) : 16;
    const unsigned char *src_col = src + c;   /* not read where n == 0 */
    unsigned char *stage_col = tsr__rows_smem + 16 * col;
    int nrows = y.dsize - dy0 < OUT ? (int)(y.dsize - dy0) : OUT;
    int r0 = ycell[0][0].si0, nr = ycell[0][nrows - 1].si0 + ycell[0][nrows - 1].n - r0;
    if (tid < nr) rdesc[0][tid] = tsr__rows_desc_of(ycell[0], nrows, r0 + tid);
    tsr__rows_stage<PITCH>(stage_col, src_col, sstride, r0, nr, row0, rstep, n);
    for (int b = 0, cs = 0; dy0 < y.dsize; dy0 += step, b ^= 1, cs = cs == 2 ? 0 : cs + 1) {
        const long long dn = dy0 + step;
        const int cn = cs == 2 ? 0 : cs + 1;
        const int nrows_n = dn < y.dsize ? (y.dsize - dn < OUT ? (int)(y.dsize - dn) : OUT) : 0;
        if (tid < nrows_n) ycell[cn][tid] = tsr__area_cell_of(y, (int)(dn + tid));
        __syncthreads();   /* the next cells are written; the other stage's last reader is done */
        int r0_n = 0, nr_n = 0;
        if (nrows_n) {
            r0_n = ycell[cn][0].si0;
            nr_n = ycell[cn][nrows_n - 1].si0 + ycell[cn][nrows_n - 1].n - r0_n;
            tsr__rows_stage<PITCH>(stage_col + (b ^ 1) * MAXR * PITCH, src_col, sstride, r0_n, nr_n, row0, rstep, n);
            if (tid < nr_n) rdesc[cn][tid] = tsr__rows_desc_of(ycell[cn], nrows_n, r0_n + tid);
            tsr__cp_wait<1>();
        } else
            tsr__cp_wait<0>();
        __syncthreads();   /* this group's rows are in */
        if (live) {
            /* The staged rows in order: each row's x-weighted sum formed once (4 samples, the
             * weights past the cell's end 0: rs + 0 == rs), then added, beta weighted, to its
             * cell's sum, and the output stored where the cell ends (tsr__rows_desc). The
             * descriptors are the block's, so the control flow is uniform. Sums start at +0:
             * 0 + p == p for the p >= 0 here, as the reference's first assignment. */
            const unsigned char *stage = tsr__rows_smem + b * MAXR * PITCH + (off & ~3);
            const int sh = 8 * (off & 3);
            float sum = 0.f;
            unsigned char *d = dst + (size_t)dy0 * dstride + ((size_t)dx * CN + ch) * SB;
            constexpr int NF = 3 * CN * SB / 4 + 1;   /* words holding samples k * CN, k < 4, from 'off' */
            constexpr unsigned maxv = SB == 1 ? 255u : 65535u;
            for (int i = 0; i < nr; i++, stage += PITCH) {
                const unsigned *w = (const unsigned *)stage;
                unsigned f[NF];
#pragma unroll
                for (int q = 0; q < NF; q++) f[q] = __funnelshift_r(w[q], w[q + 1], sh);
                /* round(v a) in one instruction: (2^23 + v) a - 2^23 a is exactly v a before the fused
                 * multiply-add's single rounding; 0 + p == p exactly for the first */
                float rs = __fmaf_rn(tsr__sample_biased<SB>(f[0], 0, magic), xa[0], xb[0]);
#pragma unroll
                for (int k = 1; k < 4; k++)
                    rs = __fadd_rn(rs, __fmaf_rn(tsr__sample_biased<SB>(f[k * CN * SB / 4], k * CN * SB % 4, magic), xa[k],
                                                 xb[k]));
                const tsr__rows_desc e = rdesc[cs][i];
                sum = __fadd_rn(sum, __fmul_rn(e.cur, rs));
                if (e.end) {
                    const unsigned v = __float2uint_rn(sum);   /* saturates: below 0 (and NaN) to 0 */
                    *(T *)d = (T)(v > maxv ? maxv : v);
                    d += dstride;
                    sum = __fmul_rn(e.next, rs);
                }
            }
        }
        nrows = nrows_n;
        r0 = r0_n;
        nr = nr_n;
    }
}

/* ------------------------------------------------------------------------ fractional, bands of rows */

/* resize/rows for factors of 3 and more on either axis (thumbnails: 3.5x to 13x measured 70-153 us
 * in resize/cells at 8192x8192, level with NPP's super-sampling at 3.5x and 4.5x): a cell has up to
 * floor(scale) + 2 samples a row, more than the 4 that the kernel above unpacks from two words.
 * A block of 256 threads (one output sample each, as above) takes a band of g.ob output rows and
 * streams the band's source rows through shared memory g.rs rows at a time (16-byte copies, two
 * stages); each thread reads its cell's samples of a staged row one by one (a byte or 16-bit load
 * each, so any channel count and any width of cell) and forms the row's weighted sum and the
 * beta-weighted accumulation exactly as resize/cells does, with the same row descriptors as the
 * kernel above (computed once for the band). */
enum { TSR_RB_OBMAX = 16, TSR_RB_MAXR = 256 };

/* Geometry of a band launch (tsr__resize_band_plan). */
struct tsr__band_geom {
    int ob;      /* output rows per block */
    int rs;      /* source rows per stage */
    int pitch;   /* bytes per staged row (a multiple of 16) */
};

/* Stage rows [A, B) of the band (source rows from R0) into stage row 0 onwards of DST: each row's
 * NCHUNKS 16-byte chunks from byte BASE, by the block's threads in turn; a chunk that passes the
 * row's RBYTES is read byte by byte (the copy would touch the row's padding). */
__device__ static __forceinline__ void tsr__band_stage(unsigned char *dst, int pitch, const unsigned char *src,
                                                       size_t sstride, int r0, int a, int b, int base, int nchunks,
                                                       int rbytes)
{
    for (int r = a; r < b; r++) {
        const unsigned char *srow = src + (size_t)(r0 + r) * sstride + base;
        unsigned char *drow = dst + (r - a) * pitch;
        for (int c = threadIdx.x; c < nchunks; c += blockDim.x) {
            const int n = rbytes - base - 16 * c;
            if (n >= 16)
                tsr__cp16(drow + 16 * c, srow + 16 * c);
            else {
                unsigned w[4] = {0u, 0u, 0u, 0u};
#pragma unroll
                for (int k = 0; k < 16; k++)
                    if (k < n) w[k >> 2] |= (unsigned)__ldg(srow + 16 * c + k) << (8 * (k & 3));
                *(uint4 *)(drow + 16 * c) = make_uint4(w[0], w[1], w[2], w[3]);
            }
        }
    }
    tsr__cp_commit();
}

/* One block: output pixels blockIdx.x * (COLS / CN) onwards, output rows blockIdx.y * g.ob onwards
 * (g.ob of them, fewer at the end). Dynamic shared memory: two stages of g.rs rows of g.pitch
 * bytes, then the band's row descriptors (at most TSR_RB_MAXR). The source must be 16-byte
 * aligned (data and stride), its rows at most 2^30 bytes. Asynchronous: queued on the caller's
 * stream. */
template <class T, int CN, int K>
__global__ void __launch_bounds__(TSR_RR_COLS) tsr__resize_band_kernel(const unsigned char *src, size_t sstride,
                                                                     unsigned char *dst, size_t dstride,
                                                                     tsr__cu_area_axis x, tsr__cu_area_axis y,
                                                                     tsr__band_geom g)
{
    extern __shared__ __align__(16) unsigned char tsr__band_smem[];
    tsr__rows_desc *desc = (tsr__rows_desc *)(tsr__band_smem + 2 * g.rs * g.pitch);
    __shared__ tsr__cu_cell ycell[TSR_RB_OBMAX];
    __shared__ int span[2];
    constexpr int SB = sizeof(T), PIX = TSR_RR_COLS / CN;
    constexpr unsigned maxv = SB == 1 ? 255u : 65535u;
    const int tid = threadIdx.x, ch = tid % CN, dx0 = blockIdx.x * PIX, dx = dx0 + tid / CN;
    const int live = tid < PIX * CN && dx < x.dsize;
    const int last = x.dsize - dx0 < PIX ? x.dsize - 1 : dx0 + PIX - 1;
    tsr__cu_cell xc = {0, 1, 0.f, 0.f, 0.f};
    if (live) {
        xc = tsr__area_cell_of(x, dx);
        if (dx == dx0 && ch == 0) span[0] = xc.si0 * CN * SB;
        if (dx == last && ch == 0) span[1] = (xc.si0 + xc.n) * CN * SB;
    }
    const int dy0 = blockIdx.y * g.ob, nout = y.dsize - dy0 < g.ob ? y.dsize - dy0 : g.ob;
    if (tid < nout) ycell[tid] = tsr__area_cell_of(y, dy0 + tid);
    __syncthreads();
    const int r0 = ycell[0].si0, nr = ycell[nout - 1].si0 + ycell[nout - 1].n - r0;
    for (int i = tid; i < nr; i += TSR_RR_COLS) desc[i] = tsr__rows_desc_of(ycell, nout, r0 + i);
    const int base = span[0] & ~15, nchunks = (span[1] - base + 15) >> 4, rbytes = x.ssize * CN * SB;
    const int nst = (nr + g.rs - 1) / g.rs;
    tsr__band_stage(tsr__band_smem, g.pitch, src, sstride, r0, 0, nr < g.rs ? nr : g.rs, base, nchunks, rbytes);
    /* the cell's weights and -2^23 times them (tsr__sample_times) */
    const float a0 = xc.first, a1 = xc.mid, a2 = xc.last;
    const float b0 = __fmul_rn(a0, -8388608.f), b1 = __fmul_rn(a1, -8388608.f), b2 = __fmul_rn(a2, -8388608.f);
    /* K > 0 (cells of at most K samples): every row takes K samples, the weights past the cell's
     * end 0 (rs + 0 == rs), so the loop is the same for every thread and fully unrolled */
    float wa[K > 0 ? K : 1], wb[K > 0 ? K : 1];
#pragma unroll
    for (int k = 0; k < (K > 0 ? K : 1); k++) {
        wa[k] = k < xc.n ? tsr__cell_alpha(xc, k) : 0.f;
        wb[k] = __fmul_rn(wa[k], -8388608.f);
    }
    const int n = xc.n, step = CN * SB, off = (xc.si0 * CN + ch) * SB - base;
    float sum = 0.f;
    unsigned char *d = dst + (size_t)dy0 * dstride + ((size_t)dx * CN + ch) * SB;
    for (int j = 0; j < nst; j++) {
        if (j + 1 < nst) {   /* stage j + 1 into the buffer that stage j - 1 left */
            const int a = (j + 1) * g.rs, b = a + g.rs < nr ? a + g.rs : nr;
            tsr__band_stage(tsr__band_smem + ((j + 1) & 1) * g.rs * g.pitch, g.pitch, src, sstride, r0, a, b, base,
                            nchunks, rbytes);
            tsr__cp_wait<1>();
        } else
            tsr__cp_wait<0>();
        __syncthreads();   /* stage j is in (and, the first time, the descriptors are written) */
        if (live) {
            /* each staged row's x-weighted sum in the reference's order (first, mids, last), then
             * as the kernel above: added beta weighted to its cell, stored where the cell ends */
            const int ra = j * g.rs, rb = ra + g.rs < nr ? ra + g.rs : nr;
            const unsigned char *p = tsr__band_smem + (j & 1) * g.rs * g.pitch + off;
            for (int i = ra; i < rb; i++, p += g.pitch) {
                float rs;
                if constexpr (K > 0) {
                    rs = tsr__sample_times(*(const T *)p, wa[0], wb[0]);   /* 0 + p == p exactly */
#pragma unroll
                    for (int k = 1; k < K; k++) rs = __fadd_rn(rs, tsr__sample_times(*(const T *)(p + k * step), wa[k], wb[k]));
                } else {
                    rs = tsr__sample_times(*(const T *)p, a0, b0);
                    const unsigned char *q = p + step;
#pragma unroll 4
                    for (int k = 1; k < n - 1; k++, q += step) rs = __fadd_rn(rs, tsr__sample_times(*(const T *)q, a1, b1));
                    if (n > 1) rs = __fadd_rn(rs, tsr__sample_times(*(const T *)q, a2, b2));
                }
                const tsr__rows_desc e = desc[i];
                sum = __fadd_rn(sum, __fmul_rn(e.cur, rs));
                if (e.end) {
                    const unsigned v = __float2uint_rn(sum);   /* saturates: below 0 (and NaN) to 0 */
                    *(T *)d = (T)(v > maxv ? maxv : v);
                    d += dstride;
                    sum = __fmul_rn(e.next, rs);
                }
            }
        }
        __syncthreads();   /* stage j's rows are read: the next round may refill them */
    }
}

/* The band kernel's K for cells of an x scale: the smallest of 6, 10, 16 that holds
 * floor(scale) + 2 samples, 0 (the loop over each cell's own width) beyond;
 * TSR_CUDA_RESIZE_BAND_K=0 forces the loop. */
static int tsr__band_k(double scale)
{
    const int slots = tsr__area_slots(scale);
    if (!tsr__env_int("TSR_CUDA_RESIZE_BAND_K", 1)) return 0;
    return slots <= 6 ? 6 : slots <= 10 ? 10 : slots <= 16 ? 16 : 0;
}

/* Plan a band launch for a source of CN channels of SB-byte samples: output rows per block (at
 * most TSR_RB_OBMAX, and few enough that a band has at most TSR_RB_MAXR source rows), two stages
 * of up to 8 rows in about 40 KB. Returns 0 (resize/cells then runs) when a staged row would pass
 * 20 KB (cells over 80 samples wide) or a band would need more rows than that.
 * TSR_CUDA_RESIZE_BAND_ROWS and _STAGE override the rows per band and per stage (within those
 * limits), for tests and measurements. */
static int tsr__resize_band_plan(int cn, int sb, const tsr__cu_area_axis &x, const tsr__cu_area_axis &y,
                                 tsr__band_geom *g, size_t *smem)
{
    const int pix = TSR_RR_COLS / cn;
    double samples = pix * x.scale + 4;   /* a block's cells, their partial ends and the alignment */
    if (samples > x.ssize + 16.) samples = x.ssize + 16.;
    const int k = tsr__band_k(x.scale);
    const double bytes = (samples + k) * cn * sb + 32;   /* K > 0: the last thread reads K samples on */
    if (bytes > 20 * 1024) return 0;
    const int pitch = ((int)bytes + 15) / 16 * 16;
    /* about 24 source rows a band, but at least 3 blocks per SM (H200 sweep of 1 to 16 rows a band
     * at 3.5x to 13.3x, 8192x8192 and 3840x2160: docs/perf-notes.md) */
    long long bx = (x.dsize + pix - 1) / pix, ob = (long long)(24 / y.scale);
    const long long obpar = (long long)y.dsize * bx / (3LL * tsr__cu_sm_count());
    if (ob > obpar) ob = obpar;
    const long long obmax = (long long)((TSR_RB_MAXR - 3) / y.scale);
    ob = tsr__env_int("TSR_CUDA_RESIZE_BAND_ROWS", (int)ob);
    if (ob > TSR_RB_OBMAX) ob = TSR_RB_OBMAX;
    if (ob > obmax) ob = obmax;
    if (ob < 1) ob = 1;
    if ((y.dsize + ob - 1) / ob > TSR_CU_MAX_GRID_Y || ob * y.scale + 3 > TSR_RB_MAXR) return 0;
    int rs = tsr__env_int("TSR_CUDA_RESIZE_BAND_STAGE", 20 * 1024 / pitch);
    if (rs > 20 * 1024 / pitch) rs = 20 * 1024 / pitch;
    g->ob = (int)ob;
    g->rs = rs < 1 ? 1 : rs > 8 ? 8 : rs;
    g->pitch = pitch;
    *smem = 2 * (size_t)g->rs * pitch + TSR_RB_MAXR * sizeof(tsr__rows_desc);
    return 1;
}

/* Queue the band kernel for T samples (the plan said yes). */
template <class T>
static void tsr__resize_band_launch(const tsr_image *src, tsr_image *dst, const tsr__cu_area_axis &x,
                                    const tsr__cu_area_axis &y, const tsr__band_geom &g, size_t smem, cudaStream_t st)
{
    const unsigned bx = tsr__div_up((unsigned)dst->width, TSR_RR_COLS / src->channels);
    const dim3 grid(bx, (unsigned)((dst->height + g.ob - 1) / g.ob));
    const unsigned char *sp = (const unsigned char *)src->data;
    unsigned char *dp = (unsigned char *)dst->data;
#define TSR__RBK(CN, K) tsr__resize_band_kernel<T, CN, K><<<grid, TSR_RR_COLS, smem, st>>>(sp, src->stride, dp, dst->stride, x, y, g)
#define TSR__RB(CN)                                                                                                  \
    (k == 6 ? TSR__RBK(CN, 6) : k == 10 ? TSR__RBK(CN, 10) : k == 16 ? TSR__RBK(CN, 16) : TSR__RBK(CN, 0))
    const int k = tsr__band_k(x.scale);
    switch (src->channels) {
    case 1: TSR__RB(1); break;
    case 2: TSR__RB(2); break;
    case 3: TSR__RB(3); break;
    default: TSR__RB(4); break;
    }
#undef TSR__RB
#undef TSR__RBK
}

/* Whether these arguments are resize/rows': 8- or 16-bit, a fractional size, shrinking by less than
 * 3 both ways (cells of at most 4 x 4 samples: the staged-rows kernel) or by more where a band
 * plan exists (cells up to about 80 samples wide: the band kernel). The sizes were checked before
 * (tsr_run: 1 to the input's). */
static int tsr__resize_rows_supports(const tsr_image *src, const void *params)
{
    const tsr_resize_params *p = (const tsr_resize_params *)params;
    int fx, fy;
    if ((src->depth != TSR_U8 && src->depth != TSR_U16) || tsr__resize_is_integer(src, p, &fx, &fy)) return 0;
    if (tsr_image_row_bytes(src) > 0x3fffffff) return 0;   /* byte offsets within a row stay int */
    tsr_image dst = *src;
    dst.width = p->width;
    dst.height = p->height;
    tsr__cu_area_axis x, y;
    tsr__area_axes(src, &dst, &x, &y);
    if (tsr__area_slots(x.scale) <= 4 && tsr__area_slots(y.scale) <= 4) return 1;
    tsr__band_geom g;
    size_t smem;
    return tsr__resize_band_plan(src->channels, src->depth == TSR_U8 ? 1 : 2, x, y, &g, &smem);
}

/* Queue resize/rows' kernel for T samples. Row groups per block: about groups x blocks across /
 * (11 x SMs), at least 1 (8192 -> 3072 on the H100: 3 groups, 47.1-50.9 us, against 49.0-51.6 at
 * the 2 of 16 x SMs; 3840x2160 -> 1440x810: 1 group, 3 would cost 10-15%);
 * TSR_CUDA_RESIZE_ROWS_GROUPS overrides it. */
template <class T>
static void tsr__resize_rows_launch(const tsr_image *src, tsr_image *dst, const tsr__cu_area_axis &x,
                                    const tsr__cu_area_axis &y, cudaStream_t st)
{
    constexpr int OUT = tsr__rr_geom<sizeof(T)>::OUT;
    const long long bx = tsr__div_up((unsigned)dst->width, TSR_RR_COLS / src->channels), groups = (dst->height + OUT - 1) / OUT;
    long long per = groups * bx / (11LL * tsr__cu_sm_count());
    const char *e = getenv("TSR_CUDA_RESIZE_ROWS_GROUPS");
    if (e && *e) per = atoi(e);
    if (per < 1) per = 1;
    const long long gy = (groups + per - 1) / per;
    dim3 grid((unsigned)bx, tsr__cu_grid_rows((int)(gy < TSR_CU_MAX_GRID_Y ? gy : TSR_CU_MAX_GRID_Y)));
    const unsigned char *sp = (const unsigned char *)src->data;
    unsigned char *dp = (unsigned char *)dst->data;
    /* two stages: 42.4 KB for 8-bit samples, 45.2 KB for 16-bit (under 48 KB: no opt-in) */
    const size_t smem = 2 * tsr__rr_geom<sizeof(T)>::MAXR * tsr__rr_geom<sizeof(T)>::PITCH;
#define TSR__RR(CN) tsr__resize_rows_kernel<T, CN><<<grid, TSR_RR_COLS, smem, st>>>(sp, src->stride, dp, dst->stride, x, y, 0x4b000000u)
    switch (src->channels) {
    case 1: TSR__RR(1); break;
    case 2: TSR__RR(2); break;
    case 3: TSR__RR(3); break;
    default: TSR__RR(4); break;
    }
#undef TSR__RR
}

/* resize/rows: see the kernel; a source not 16-byte aligned runs resize/cells' kernel. */
static tsr_status tsr__resize_rows(const tsr_image *src, tsr_image *dst, const void *params, const tsr_exec *ex)
{
    cudaStream_t st = (cudaStream_t)ex->stream;
    (void)params;
    if (!tsr__cu_aligned(src->data, src->stride, 16)) return tsr__resize_area(src, dst, st);
    tsr__cu_area_axis x, y;
    tsr__area_axes(src, dst, &x, &y);
    if (tsr__area_slots(x.scale) <= 4 && tsr__area_slots(y.scale) <= 4) {
        if (src->depth == TSR_U8) tsr__resize_rows_launch<uint8_t>(src, dst, x, y, st);
        else tsr__resize_rows_launch<uint16_t>(src, dst, x, y, st);
        return TSR_CUDA_LAUNCHED("resize/rows kernel");
    }
    tsr__band_geom g;
    size_t smem;
    if (!tsr__resize_band_plan(src->channels, src->depth == TSR_U8 ? 1 : 2, x, y, &g, &smem))
        return tsr__resize_area(src, dst, st);
    if (src->depth == TSR_U8) tsr__resize_band_launch<uint8_t>(src, dst, x, y, g, smem, st);
    else tsr__resize_band_launch<uint16_t>(src, dst, x, y, g, smem, st);
    return TSR_CUDA_LAUNCHED("resize/rows band kernel");
}

/* resize/cells: integer factors exactly by cell sums, any other size by the weight cells. */
static tsr_status tsr__resize_cells(const tsr_image *src, tsr_image *dst, const void *params, const tsr_exec *ex)
{
    int fx, fy;
    cudaStream_t st = (cudaStream_t)ex->stream;
    if (tsr__resize_is_integer(src, (const tsr_resize_params *)params, &fx, &fy))
        return tsr__resize_int(src, dst, fx, fy, st);
    return tsr__resize_area(src, dst, st);
}

extern "C" const tsr_variant tsr__resize_cuda[] = {
    {"vec16", TSR_BACKEND_CUDA,
     "8-bit gray shrunk 2x2 or 4x4, RGB and RGBA shrunk 2x2: several outputs per thread from 16-byte loads and stores",
     tsr__resize_vec16, tsr__resize_vec16_supports, 1, 0, NULL},
    {"rows", TSR_BACKEND_CUDA,
     "fractional sizes: a block stages its source rows in shared memory with 16-byte copies, one "
     "output sample per thread (by less than 3: a cell's 4 samples from two words; by more: bands "
     "of rows streamed, samples one by one)",
     tsr__resize_rows, tsr__resize_rows_supports, 1, 0, NULL},
    {"cells", TSR_BACKEND_CUDA,
     "one thread per output pixel: exact integer cells, or fractional weight cells computed in the kernel",
     tsr__resize_cells, NULL, 1, 0, NULL},
    TSR_CUDA_END};
