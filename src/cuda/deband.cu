/* deband on CUDA: the planar kernel (one thread per pixel), the vec kernel (4 pixels per
 * thread, offsets shared by the planes of one geometry; staged: the same with the references
 * gathered from shared memory; deband_vec.cuh), the seed's packed-pixel
 * experiments
 * (aos3: three shorts read one at a time; aos4: four shorts read with one short4 load),
 * Floyd-Steinberg as exact wavefronts (pairs: a stepping warp and a helper warp per 32 rows, every
 * band of the frame at once; bands: one warp per 32 rows; block: the earlier one block per plane, a
 * thread per row), and the three-stream frame pipe. Every CUDA call is checked. */
#include "kernels_common.cuh"
#include "../cpu/deband_int.h"
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TSR_DB_BX 32
#define TSR_DB_BY 8
#define TSR_DB_FS_THREADS 1024

#define TSR_DB_TRY(call, what)                                                                       \
    do {                                                                                             \
        tsr_status s_ = tsr__cuda_status((call), what);                                              \
        if (s_) return s_;                                                                           \
    } while (0)

/* Scratch of one call or one pipe slot: 16-bit values for Floyd-Steinberg, its errors, and the
 * packed buffers of the aos variants. Grown on demand, never shrunk. */
struct tsr__db_scratch {
    uint16_t *vals;      /* the three planes' 16-bit values, back to back */
    int *errs;           /* Floyd-Steinberg errors, same layout */
    size_t vals_n;       /* samples allocated in vals / errs */
    uint16_t *aos_in, *aos_out;
    size_t aos_bytes;
};

/* Offsets of plane i's samples in the back-to-back scratch layout. */
static size_t tsr__db_plane_base(const tsr__db_plane P[3], int i)
{
    size_t b = 0;
    for (int k = 0; k < i; k++) b += (size_t)P[k].w * (size_t)P[k].h;
    return b;
}

/* Reserve scratch for a frame; vals/errs when Floyd-Steinberg reduces the depth, aos buffers
 * for kinds 1 and 2 (aos3, aos4). Allocation is synchronous (only when growing). */
static tsr_status tsr__db_scratch_reserve(tsr__db_scratch *sc, const tsr__db_plane P[3], int nplanes, int kind)
{
    size_t total = 0, n;
    for (int i = 0; i < nplanes; i++) {
        if (!tsr__mul_size((size_t)P[i].w, (size_t)P[i].h, &n) || !tsr__add_size(total, n, &total))
            return tsr__fail(TSR_E_SIZE, "deband: frame size overflows");
    }
    if (P[0].dither == TSR_DITHER_FLOYD && P[0].out_shift && sc->vals_n < total) {
        size_t bv, be;
        cudaFree(sc->vals);
        cudaFree(sc->errs);
        sc->vals = NULL, sc->errs = NULL, sc->vals_n = 0;
        if (!tsr__mul_size(total, 2, &bv) || !tsr__mul_size(total + 1, 4, &be))
            return tsr__fail(TSR_E_SIZE, "deband: frame size overflows");
        TSR_DB_TRY(cudaMalloc((void **)&sc->vals, bv), "deband: cudaMalloc");
        TSR_DB_TRY(cudaMalloc((void **)&sc->errs, be), "deband: cudaMalloc");
        sc->vals_n = total;
    }
    if (kind == 1 || kind == 2) {
        size_t px = (size_t)P[0].w * (size_t)P[0].h, bytes;
        if (!tsr__mul_size(px, kind == 1 ? 6 : 8, &bytes)) return tsr__fail(TSR_E_SIZE, "deband: frame size overflows");
        if (sc->aos_bytes < bytes) {
            cudaFree(sc->aos_in);
            cudaFree(sc->aos_out);
            sc->aos_in = sc->aos_out = NULL, sc->aos_bytes = 0;
            TSR_DB_TRY(cudaMalloc((void **)&sc->aos_in, bytes), "deband: cudaMalloc");
            TSR_DB_TRY(cudaMalloc((void **)&sc->aos_out, bytes), "deband: cudaMalloc");
            sc->aos_bytes = bytes;
        }
    }
    return TSR_OK;
}

/* Free all scratch buffers (after the work using them has finished) and zero *sc. */
static void tsr__db_scratch_free(tsr__db_scratch *sc)
{
    cudaFree(sc->vals);
    cudaFree(sc->errs);
    cudaFree(sc->aos_in);
    cudaFree(sc->aos_out);
    memset(sc, 0, sizeof *sc);
}

/* ---------------------------------------------------------------- planar */

/* One thread per pixel of one plane. TOVALS: write the 16-bit value to 'vals' (for
 * Floyd-Steinberg) instead of the dithered sample to dst. The row keys of the block's rows are
 * computed once per block. */
template <typename Tin, typename Tout, int MODE, bool TOVALS>
__global__ void __launch_bounds__(TSR_DB_BX *TSR_DB_BY)
    tsr__db_planar_kernel(tsr__db_plane P, const Tin *__restrict__ src, size_t sp, Tout *__restrict__ dst, size_t dp,
                          uint16_t *__restrict__ vals)
{
    __shared__ uint32_t keys[2][TSR_DB_BY];
    int x = blockIdx.x * TSR_DB_BX + threadIdx.x, y = blockIdx.y * TSR_DB_BY + threadIdx.y;
    if (threadIdx.x < 2) keys[threadIdx.x][threadIdx.y] = tsr__db_rowkey(threadIdx.x ? P.grain_key : P.off_key, y);
    __syncthreads();
    if (x >= P.w || y >= P.h) return;
    {
        const Tin *row = src + (size_t)y * sp;
        int sh = P.in_shift, dx, dy, r0, r1, r2 = 0, r3 = 0, v;
        int s0 = __ldg(row + x) << sh;
        P.sample_mode = MODE;
        tsr__db_offsets(&P, keys[0][threadIdx.y], x, y, &dx, &dy);
        if (MODE == 1) {
            r0 = __ldg(row + x - (ptrdiff_t)dy * (ptrdiff_t)sp) << sh;
            r1 = __ldg(row + x + (ptrdiff_t)dy * (ptrdiff_t)sp) << sh;
        } else {
            r0 = __ldg(row + x + dx + (ptrdiff_t)dy * (ptrdiff_t)sp) << sh;
            r1 = __ldg(row + x - dx - (ptrdiff_t)dy * (ptrdiff_t)sp) << sh;
            r2 = __ldg(row + x + dy - (ptrdiff_t)dx * (ptrdiff_t)sp) << sh;
            r3 = __ldg(row + x - dy + (ptrdiff_t)dx * (ptrdiff_t)sp) << sh;
        }
        v = tsr__db_value(&P, s0, r0, r1, r2, r3, tsr__db_grain(&P, keys[1][threadIdx.y], x));
        if (TOVALS) vals[(size_t)y * P.w + x] = (uint16_t)v;
        else dst[(size_t)y * dp + x] = (Tout)tsr__db_quant(&P, v, tsr__db_dither_add(&P, x, y));
    }
}

/* Launch the planar kernel for one plane with the right instantiation (vals: FS values or NULL). */
template <typename Tin, typename Tout>
static tsr_status tsr__db_launch_planar(const tsr__db_plane &P, const void *src, size_t spitch, void *dst,
                                        size_t dpitch, uint16_t *vals, cudaStream_t st)
{
    dim3 b(TSR_DB_BX, TSR_DB_BY), g(tsr__div_up((unsigned)P.w, TSR_DB_BX), tsr__div_up((unsigned)P.h, TSR_DB_BY));
    const Tin *s = (const Tin *)src;
    Tout *d = (Tout *)dst;
    size_t sp = spitch / sizeof(Tin), dp = dpitch / sizeof(Tout);
    if (P.sample_mode == 1) {
        if (vals) tsr__db_planar_kernel<Tin, Tout, 1, true><<<g, b, 0, st>>>(P, s, sp, d, dp, vals);
        else tsr__db_planar_kernel<Tin, Tout, 1, false><<<g, b, 0, st>>>(P, s, sp, d, dp, vals);
    } else {
        if (vals) tsr__db_planar_kernel<Tin, Tout, 2, true><<<g, b, 0, st>>>(P, s, sp, d, dp, vals);
        else tsr__db_planar_kernel<Tin, Tout, 2, false><<<g, b, 0, st>>>(P, s, sp, d, dp, vals);
    }
    return TSR_CUDA_LAUNCHED("deband: planar kernel");
}

#include "deband_vec.cuh"
#include "deband_tile.cuh"

/* ---------------------------------------------------------------- packed pixels (the seed) */

/* Planar 4:4:4 -> packed pixels of C shorts (16-bit scaled), the fourth one zero. */
template <typename Tin, int C>
__global__ void tsr__db_pack_kernel(int w, int h, int shift, const Tin *__restrict__ a, const Tin *__restrict__ b,
                                    const Tin *__restrict__ c, size_t sp, uint16_t *__restrict__ out)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    size_t i, o;
    if (x >= w || y >= h) return;
    i = (size_t)y * sp + x;
    o = ((size_t)y * w + x) * C;
    out[o] = (uint16_t)(a[i] << shift);
    out[o + 1] = (uint16_t)(b[i] << shift);
    out[o + 2] = (uint16_t)(c[i] << shift);
    if (C == 4) out[o + 3] = 0;
}

/* Three shorts of a packed pixel, read one short at a time (what AviUtl's PIXEL_YC compiles to). */
struct tsr__db_px3 {
    unsigned short c[3];
};

/* The deband kernel on packed pixels: every reference is one pixel read (C == 4: one 8-byte
 * short4 load; C == 3: three 2-byte loads). Writes 16-bit values, packed the same way. */
template <int C, int MODE>
__global__ void __launch_bounds__(TSR_DB_BX *TSR_DB_BY)
    tsr__db_aos_kernel(tsr__db_plane P0, tsr__db_plane P1, tsr__db_plane P2, const uint16_t *__restrict__ in,
                       uint16_t *__restrict__ out)
{
    __shared__ uint32_t keys[4][TSR_DB_BY];
    int x = blockIdx.x * TSR_DB_BX + threadIdx.x, y = blockIdx.y * TSR_DB_BY + threadIdx.y, w = P0.w;
    if (threadIdx.x < 4)
        keys[threadIdx.x][threadIdx.y] = tsr__db_rowkey(
            threadIdx.x == 0 ? P0.off_key : threadIdx.x == 1 ? P0.grain_key : threadIdx.x == 2 ? P1.grain_key : P2.grain_key, y);
    __syncthreads();
    if (x >= w || y >= P0.h) return;
    {
        int dx, dy, s[3], r[4][3];
        size_t o[4];
        P0.sample_mode = MODE;
        tsr__db_offsets(&P0, keys[0][threadIdx.y], x, y, &dx, &dy);
        if (MODE == 1) {
            o[0] = (size_t)(y - dy) * w + x;
            o[1] = (size_t)(y + dy) * w + x;
            o[2] = o[3] = 0;
        } else {
            o[0] = (size_t)(y + dy) * w + (x + dx);
            o[1] = (size_t)(y - dy) * w + (x - dx);
            o[2] = (size_t)(y - dx) * w + (x + dy);
            o[3] = (size_t)(y + dx) * w + (x - dy);
        }
        if (C == 4) {
            const ushort4 *p4 = (const ushort4 *)in;
            ushort4 c0 = __ldg(p4 + (size_t)y * w + x);
            s[0] = c0.x, s[1] = c0.y, s[2] = c0.z;
            for (int k = 0; k < (MODE == 1 ? 2 : 4); k++) {
                ushort4 q = __ldg(p4 + o[k]);
                r[k][0] = q.x, r[k][1] = q.y, r[k][2] = q.z;
            }
        } else {
            const tsr__db_px3 *p3 = (const tsr__db_px3 *)in;
            tsr__db_px3 c0 = p3[(size_t)y * w + x];
            s[0] = c0.c[0], s[1] = c0.c[1], s[2] = c0.c[2];
            for (int k = 0; k < (MODE == 1 ? 2 : 4); k++) {
                tsr__db_px3 q = p3[o[k]];
                r[k][0] = q.c[0], r[k][1] = q.c[1], r[k][2] = q.c[2];
            }
        }
        if (MODE == 1)
            for (int c = 0; c < 3; c++) r[2][c] = r[3][c] = 0;
        {
            int v0 = tsr__db_value(&P0, s[0], r[0][0], r[1][0], r[2][0], r[3][0], tsr__db_grain(&P0, keys[1][threadIdx.y], x));
            int v1 = tsr__db_value(&P1, s[1], r[0][1], r[1][1], r[2][1], r[3][1], tsr__db_grain(&P1, keys[2][threadIdx.y], x));
            int v2 = tsr__db_value(&P2, s[2], r[0][2], r[1][2], r[2][2], r[3][2], tsr__db_grain(&P2, keys[3][threadIdx.y], x));
            size_t i = (size_t)y * w + x;
            if (C == 4) {
                ((ushort4 *)out)[i] = make_ushort4((unsigned short)v0, (unsigned short)v1, (unsigned short)v2, 0);
            } else {
                tsr__db_px3 q;
                q.c[0] = (unsigned short)v0, q.c[1] = (unsigned short)v1, q.c[2] = (unsigned short)v2;
                ((tsr__db_px3 *)out)[i] = q;
            }
        }
    }
}

/* Packed 16-bit values -> planes: dithered samples into dst, or values into 'vals' (FS). */
template <typename Tout, int C>
__global__ void tsr__db_unpack_kernel(tsr__db_plane P0, tsr__db_plane P1, tsr__db_plane P2, const uint16_t *__restrict__ in,
                                      Tout *__restrict__ d0, Tout *__restrict__ d1, Tout *__restrict__ d2, size_t dp,
                                      uint16_t *__restrict__ vals)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y, w = P0.w;
    size_t i;
    if (x >= w || y >= P0.h) return;
    i = ((size_t)y * w + x) * C;
    if (vals) {
        size_t n = (size_t)w * P0.h, k = (size_t)y * w + x;
        vals[k] = in[i], vals[n + k] = in[i + 1], vals[2 * n + k] = in[i + 2];
        return;
    }
    d0[(size_t)y * dp + x] = (Tout)tsr__db_quant(&P0, in[i], tsr__db_dither_add(&P0, x, y));
    d1[(size_t)y * dp + x] = (Tout)tsr__db_quant(&P1, in[i + 1], tsr__db_dither_add(&P1, x, y));
    d2[(size_t)y * dp + x] = (Tout)tsr__db_quant(&P2, in[i + 2], tsr__db_dither_add(&P2, x, y));
}

/* ---------------------------------------------------------------- Floyd-Steinberg */

struct tsr__db_fs_args {
    tsr__db_plane P[3];
    const uint16_t *vals[3];
    int *errs[3];
    void *dst[3];
    size_t dp[3];          /* in samples */
};

/* One block per plane, one thread per row of a chunk of up to 1024 rows. At step t the thread of
 * row r (within the chunk) handles pixel x = t - 2r: the row above has then finished x+1, so
 * every error the pixel receives (7/16 from the left, 1/16, 5/16, 3/16 from the row above at
 * x-1, x, x+1) is final. Sums and rounding are those of the CPU reference, so the output is
 * identical. Chunks run one after another; the last row of a chunk feeds the next. */
template <typename Tout>
__global__ void __launch_bounds__(TSR_DB_FS_THREADS) tsr__db_fs_kernel(tsr__db_fs_args a)
{
    int i = blockIdx.x, t = threadIdx.x;
    const tsr__db_plane P = a.P[i];
    const uint16_t *vals = a.vals[i];
    int *e = a.errs[i];
    Tout *dst = (Tout *)a.dst[i];
    int w = P.w;
    for (int y0 = 0; y0 < P.h; y0 += TSR_DB_FS_THREADS) {
        int rows = P.h - y0 < TSR_DB_FS_THREADS ? P.h - y0 : TSR_DB_FS_THREADS;
        int y = y0 + t, steps = w + 2 * (rows - 1), eleft = 0;
        for (int step = 0; step < steps; step++) {
            int x = step - 2 * t;
            if (t < rows && x >= 0 && x < w) {
                int acc = 7 * eleft, err, q;
                if (y > 0) {
                    const int *up = e + (size_t)(y - 1) * w;
                    acc += 5 * up[x];
                    if (x > 0) acc += up[x - 1];
                    if (x + 1 < w) acc += 3 * up[x + 1];
                }
                q = tsr__db_fs(&P, vals[(size_t)y * w + x], acc, &err);
                e[(size_t)y * w + x] = err;
                eleft = err;
                dst[(size_t)y * a.dp[i] + x] = (Tout)q;
            }
            __syncthreads();
        }
    }
}

/* Floyd-Steinberg in bands of 32 rows, a warp per band and a lane per row.
 *
 * The block kernel above keeps one block per plane busy: a barrier and a round trip through
 * global memory per pixel step, width + 2046 steps per 1024 rows, on three of the device's
 * multiprocessors. Here every band of every plane runs at once on a warp of its own. Lane l
 * handles pixel x = t - 3l at step t; the error of the pixel above and right (x+1 of the row
 * above) was made by lane l-1 two steps earlier, so it arrives by one shuffle a step with a step
 * to spare, and the only chain from step to step is the error passed to the right. Lane 31 hands
 * its row's errors to the next band through global memory, each stored as 2 err + 1 so that the
 * word itself says it is ready (the buffer is zeroed before the launch): the next band's lanes
 * wait for the words they need at the start of each 32-step chunk, no fences or counters. Bands
 * are handed out in order by a ticket counter, so a warp only ever waits for a band that a
 * running warp already holds: no deadlock, however few warps are resident. Sums and rounding
 * are the CPU reference's, so the output is identical. */
#define TSR_DB_FSB_LAG 3   /* steps each row runs behind the row above */

struct tsr__db_fsb_args {
    tsr__db_plane P[3];
    const uint16_t *vals[3];
    int *bnd[3];            /* per plane, bands x w words: band b's last row of errors */
    void *dst[3];
    size_t dp[3];           /* in samples */
    int bands[3];           /* bands of 32 rows per plane (0 for absent planes) */
    int total;              /* bands of all planes */
    int *ticket;            /* zeroed before the launch */
};

__device__ __forceinline__ int tsr__db_ld_relaxed(const int *p)
{
    int v;
    asm volatile("ld.relaxed.gpu.global.s32 %0, [%1];" : "=r"(v) : "l"(p));
    return v;
}

__device__ __forceinline__ void tsr__db_st_relaxed(int *p, int v)
{
    asm volatile("st.relaxed.gpu.global.s32 [%0], %1;" ::"l"(p), "r"(v));
}

/* The 32 steps of a chunk starting at step c0 for lane l (row l of a band), in both band kernels:
 * v holds the chunk's values and gets the output codes, e gets the errors, bv is lane j's word of
 * the band above's errors for lane 0 at step j; the lane's state between chunks is eleft (the error
 * from the left), u0, u1, u2 (the row above's at x-1, x, x+1) and prev (its own last error, for
 * the lane below). Only the chain of errors runs here, 8 dependent instructions a step: global
 * loads and stores between the steps held up the in-order issue (tried: about 2x slower a step).
 * w = clamp(v + floor((acc + 8) / 16)) is carried as w + half; r is the output code << s. A macro
 * rather than a function: the function form compiled to other schedules. */
#define TSR_DB_FS_STEPS(c0)                                                                          \
    do {                                                                                             \
        _Pragma("unroll") for (int j = 0; j < 32; j++) {                                             \
            const int x = (c0) + j - TSR_DB_FSB_LAG * l;                                              \
            const bool ok = row && (unsigned)x < (unsigned)w;                                        \
            int inc = __shfl_up_sync(full, prev, 1); /* lane l-1's last error: x + 2 of the row above */ \
            const int top = __shfl_sync(full, bv, j);                                                \
            if (l == 0) inc = top;                                                                   \
            int acc = 5 * u1 + u0 + 3 * u2 + 8;                                                      \
            asm("mov.b32 %0, %0;" : "+r"(acc)); /* keeps the compiler from folding eleft in first */ \
            const int wh = min(max(v[j] + ((acc + 7 * eleft) >> 4) + half, half), 65535 + half);     \
            const int r = min(wh & mask, qmax);                                                      \
            const int err = ok ? wh - half - r : 0;                                                  \
            v[j] = r >> s;                                                                           \
            e[j] = err;                                                                              \
            eleft = err;                                                                             \
            prev = err;                                                                              \
            u0 = u1;                                                                                 \
            u1 = u2;                                                                                 \
            u2 = inc;                                                                                \
        }                                                                                            \
    } while (0)

/* The values of the chunk at step c of a band's rows into nv: lane l takes row r's pixel
 * c + l - 3r (0 outside the plane), at vb + (c + l) + r (w - 3); both band kernels. */
#define TSR_DB_FS_FETCH(c)                                                                           \
    do {                                                                                             \
        const uint16_t *pv_ = vb + ((c) + l);                                                        \
        _Pragma("unroll") for (int r = 0; r < 32; r++) {                                             \
            const int x = (c) - TSR_DB_FSB_LAG * r + l;                                               \
            nv[r] = r < rows && (unsigned)x < (unsigned)w ? __ldg(pv_ + (ptrdiff_t)r * (w - TSR_DB_FSB_LAG)) : 0; \
        }                                                                                            \
    } while (0)

/* The warp's staging in shared memory, rings of 64 steps per row (row r's pixel x at step
 * x + 3r): each lane's values and outputs go through it so that global memory sees one
 * coalesced row segment per instruction (a lane per pixel of one row) rather than 32 rows per
 * instruction, whose stores queue behind each other and hold up the registers they read. */
template <typename Tout>
struct tsr__db_fsb_smem {
    uint16_t v[32][64];   /* values */
    Tout q[32][64];       /* output codes */
    int e[64];            /* lane 31's errors */
};

/* Band b of plane i (all 32 lanes of the warp). Chunk by chunk of 32 steps: the next chunk's
 * values and the band above's errors are fetched while this one runs, so that their latency is
 * off the chain of errors from pixel to pixel (8 dependent instructions a step). */
template <typename Tout>
__device__ __forceinline__ void tsr__db_fsb_band(const tsr__db_fsb_args &a, int i, int b, tsr__db_fsb_smem<Tout> &m)
{
    const unsigned full = 0xffffffffu;
    const int l = threadIdx.x, w = a.P[i].w, h = a.P[i].h, s = a.P[i].out_shift, y0 = b * 32;
    const int half = (1 << s) >> 1, mask = -(1 << s), qmax = a.P[i].out_max << s, rows = min(32, h - y0);
    const bool row = l < rows, last = b + 1 < a.bands[i];
    const int dp = (int)a.dp[i];   /* the launcher checks that 32 rows of offsets fit an int */
    const uint16_t *vb = a.vals[i] + (size_t)y0 * (size_t)w;
    Tout *db = (Tout *)a.dst[i] + (size_t)y0 * a.dp[i];
    const int *bin = a.bnd[i] + (size_t)(b ? b - 1 : 0) * (size_t)w;
    int *bout = a.bnd[i] + (size_t)b * (size_t)w;
    /* eleft: the error from the left; u0, u1, u2: the row above's at x-1, x, x+1 */
    int eleft = 0, u0 = 0, u1 = 0, u2 = 0, prev = 0, bnext = 1, nv[32];
    const int steps = w + TSR_DB_FSB_LAG * 31;
#define TSR_DB_FSB_STAGE(c)                                                                          \
    do {                                                                                             \
        _Pragma("unroll") for (int r = 0; r < 32; r++) m.v[r][((c) & 32) + l] = (uint16_t)nv[r];    \
    } while (0)
    /* lane 0 at step c0 + j needs the error at x + 2 = c0 + j + 2 of the band above's last row:
     * lane j fetches it */
#define TSR_DB_FSB_TOP(c) (b && (c) + 2 + l < w ? tsr__db_ld_relaxed(bin + (c) + 2 + l) : 1)
    if (b && l == 0) {   /* lane 0's first window: the row above's errors at x = 0 and 1 */
        do u1 = tsr__db_ld_relaxed(bin);
        while (!(u1 & 1));
        u1 >>= 1;
        if (w > 1) {
            do u2 = tsr__db_ld_relaxed(bin + 1);
            while (!(u2 & 1));
            u2 >>= 1;
        }
    }
    TSR_DB_FS_FETCH(0);
    bnext = TSR_DB_FSB_TOP(0);
    TSR_DB_FSB_STAGE(0);
    __syncwarp();
    for (int c0 = 0; c0 < steps; c0 += 32) {
        const int o = c0 & 32;   /* this chunk's half of the rings */
        int bv, v[32], e[32];
        while (!(bnext & 1)) bnext = tsr__db_ld_relaxed(bin + c0 + 2 + l);   /* not written yet */
        bv = bnext >> 1;
#pragma unroll
        for (int j = 0; j < 32; j++) v[j] = m.v[l][o + j];
        if (c0 + 32 < steps) {
            TSR_DB_FS_FETCH(c0 + 32);
            bnext = TSR_DB_FSB_TOP(c0 + 32);
        }
        TSR_DB_FS_STEPS(c0);
#pragma unroll
        for (int j = 0; j < 32; j++) m.q[l][o + j] = (Tout)v[j];
        if (l == 31) {
#pragma unroll
            for (int j = 0; j < 32; j++) m.e[o + j] = e[j];
        }
        __syncwarp();
        {
            Tout *pd = db + (c0 + l);   /* row r's pixel: pd + r (dp - 3) */
#pragma unroll
            for (int r = 0; r < 32; r++) {   /* the chunk's outputs, row by row */
                const int x = c0 - TSR_DB_FSB_LAG * r + l;
                if (r < rows && (unsigned)x < (unsigned)w) pd[(ptrdiff_t)r * (dp - TSR_DB_FSB_LAG)] = m.q[r][o + l];
            }
        }
        if (last) {   /* the band's last row of errors, for the band below */
            const int x = c0 - TSR_DB_FSB_LAG * 31 + l;
            if ((unsigned)x < (unsigned)w) tsr__db_st_relaxed(bout + x, 2 * m.e[o + l] + 1);
        }
        if (c0 + 32 < steps) TSR_DB_FSB_STAGE(c0 + 32);
        __syncwarp();
    }
#undef TSR_DB_FSB_STAGE
#undef TSR_DB_FSB_TOP
}

template <typename Tout>
__global__ void __launch_bounds__(32) tsr__db_fsb_kernel(const tsr__db_fsb_args a)
{
    __shared__ tsr__db_fsb_smem<Tout> m;
    for (;;) {
        int tk = 0, i = 0;
        if (threadIdx.x == 0) tk = atomicAdd(a.ticket, 1);
        tk = __shfl_sync(0xffffffffu, tk, 0);
        if (tk >= a.total) return;
        while (tk >= a.bands[i]) tk -= a.bands[i++];
        tsr__db_fsb_band<Tout>(a, i, tk, m);
    }
}

/* Floyd-Steinberg in bands, a pair of warps per band (the 'pairs' kernel): the bands kernel's
 * warp spends about 1400 instructions on a chunk of 32 steps, of which the steps themselves are
 * about 580; the rest (the next chunk's values fetched and staged, the outputs stored, the band
 * above's errors awaited, row 31's stored for the band below) sits in the same in-order stream
 * as the chain of errors, on a warp that is alone on its scheduler. Here a second warp does all
 * of that, a chunk ahead (values, the band above's errors) or behind (outputs, row 31's errors),
 * through double buffers in shared memory, one barrier of the pair per chunk; the first warp
 * only reads its values, runs the steps and writes its codes. Same lanes, lags, hand-over words
 * and tickets as the bands kernel, so the same proofs of exactness and progress hold. */
template <typename Tout>
struct tsr__db_fsp_smem {
    uint16_t v[2][32][32];   /* values of chunks c & 1: [row][step] */
    Tout q[2][32][32];       /* output codes, same layout */
    int top[2][32];          /* the band above's errors for lane 0, by step */
    int eo[2][32];           /* row 31's errors, by step */
    int u[2];                /* the band above's errors at x = 0 and 1 */
    int ticket;
};

template <typename Tout>
__global__ void __launch_bounds__(64) tsr__db_fsp_kernel(const tsr__db_fsb_args a)
{
    __shared__ __align__(16) tsr__db_fsp_smem<Tout> m;
    const unsigned full = 0xffffffffu;
    const int l = threadIdx.x & 31;
    const bool helper = threadIdx.x >= 32;
    for (;;) {
        int b, i = 0;
        if (threadIdx.x == 0) m.ticket = atomicAdd(a.ticket, 1);
        __syncthreads();
        b = m.ticket;
        __syncthreads();   /* both warps have the ticket before thread 0 takes the next */
        if (b >= a.total) return;
        while (b >= a.bands[i]) b -= a.bands[i++];
        const int w = a.P[i].w, h = a.P[i].h, y0 = b * 32, rows = min(32, h - y0);
        const int steps = w + TSR_DB_FSB_LAG * 31, chunks = (steps + 31) >> 5;
        const bool last = b + 1 < a.bands[i];
        const int *bin = a.bnd[i] + (size_t)(b ? b - 1 : 0) * (size_t)w;
        int *bout = a.bnd[i] + (size_t)b * (size_t)w;
        int tnext = 1;
#define TSR_DB_FSP_TOP(c) (b && (c) + 2 + l < w ? tsr__db_ld_relaxed(bin + (c) + 2 + l) : 1)
/* chunk c's row 31 errors from eo[k], for the band below */
#define TSR_DB_FSP_SINK(c, k)                                                                        \
    do {                                                                                             \
        const int x = (c) - TSR_DB_FSB_LAG * 31 + l;                                                  \
        if (last && (unsigned)x < (unsigned)w) tsr__db_st_relaxed(bout + x, 2 * m.eo[k][l] + 1);    \
    } while (0)
        if (helper) {
            const int dp = (int)a.dp[i];   /* the launcher checks that 32 rows of offsets fit an int */
            const uint16_t *vb = a.vals[i] + (size_t)y0 * (size_t)w;
            Tout *db = (Tout *)a.dst[i] + (size_t)y0 * a.dp[i];
            int nv[32];
/* a chunk whose 32 rows' pixels all lie inside the plane: no tests per row (they made a branch
 * per row around each store) */
#define TSR_DB_FSP_INSIDE(c) (rows == 32 && (c) >= TSR_DB_FSB_LAG * 31 && (c) + 31 < w)
#define TSR_DB_FSP_FETCH(c)                                                                          \
    do {                                                                                             \
        const uint16_t *pi_ = vb + ((c) + l);                                                        \
        if (TSR_DB_FSP_INSIDE(c)) {                                                                  \
            _Pragma("unroll") for (int r = 0; r < 32; r++) nv[r] = __ldg(pi_ + (ptrdiff_t)r * (w - TSR_DB_FSB_LAG)); \
        } else {                                                                                     \
            TSR_DB_FS_FETCH(c);                                                                      \
        }                                                                                            \
    } while (0)
#define TSR_DB_FSP_STAGE(k)                                                                          \
    do {                                                                                             \
        _Pragma("unroll") for (int r = 0; r < 32; r++) m.v[k][r][l] = (uint16_t)nv[r];               \
    } while (0)
/* the band above's errors of chunk c into top[k], waiting for the words not yet written */
#define TSR_DB_FSP_TOPWAIT(c, k)                                                                     \
    do {                                                                                             \
        while (!(tnext & 1)) tnext = tsr__db_ld_relaxed(bin + (c) + 2 + l);                          \
        m.top[k][l] = tnext >> 1;                                                                    \
    } while (0)
/* chunk c's outputs from q[k] */
#define TSR_DB_FSP_OUT(c, k)                                                                         \
    do {                                                                                             \
        Tout *pd = db + ((c) + l);                                                                   \
        if (TSR_DB_FSP_INSIDE(c)) {                                                                  \
            _Pragma("unroll") for (int r = 0; r < 32; r++) pd[(ptrdiff_t)r * (dp - TSR_DB_FSB_LAG)] = m.q[k][r][l]; \
        } else {                                                                                     \
            _Pragma("unroll") for (int r = 0; r < 32; r++) {                                         \
                const int x = (c) - TSR_DB_FSB_LAG * r + l;                                           \
                if (r < rows && (unsigned)x < (unsigned)w) pd[(ptrdiff_t)r * (dp - TSR_DB_FSB_LAG)] = m.q[k][r][l]; \
            }                                                                                        \
        }                                                                                            \
    } while (0)
            if (b && l < 2) {   /* lane 0's first window: the row above's errors at x = 0 and 1 */
                int u = 0;
                if (l < w) {
                    do u = tsr__db_ld_relaxed(bin + l);
                    while (!(u & 1));
                    u >>= 1;
                }
                m.u[l] = u;
            } else if (l < 2) {
                m.u[l] = 0;
            }
            TSR_DB_FSP_FETCH(0);
            tnext = TSR_DB_FSP_TOP(0);
            TSR_DB_FSP_STAGE(0);
            TSR_DB_FSP_TOPWAIT(0, 0);
            if (chunks > 1) {
                TSR_DB_FSP_FETCH(32);
                tnext = TSR_DB_FSP_TOP(32);
            }
            __syncthreads();
            /* The band below waits for row 31's errors, so they go first; the band above's are
             * awaited last, giving them the most time. */
            for (int c = 0; c < chunks; c++) {   /* the other warp runs chunk c meanwhile */
                const int k1 = (c + 1) & 1;
                if (c) TSR_DB_FSP_SINK(32 * (c - 1), k1);
                if (c + 1 < chunks) {
                    TSR_DB_FSP_STAGE(k1);
                    if (c + 2 < chunks) TSR_DB_FSP_FETCH(32 * (c + 2));
                }
                if (c) TSR_DB_FSP_OUT(32 * (c - 1), k1);
                if (c + 1 < chunks) {
                    TSR_DB_FSP_TOPWAIT(32 * (c + 1), k1);
                    if (c + 2 < chunks) tnext = TSR_DB_FSP_TOP(32 * (c + 2));
                }
                __syncthreads();
            }
            TSR_DB_FSP_SINK(32 * (chunks - 1), (chunks - 1) & 1);
            TSR_DB_FSP_OUT(32 * (chunks - 1), (chunks - 1) & 1);
#undef TSR_DB_FSP_FETCH
#undef TSR_DB_FSP_STAGE
#undef TSR_DB_FSP_TOPWAIT
#undef TSR_DB_FSP_OUT
#undef TSR_DB_FSP_INSIDE
        } else {
            const int s = a.P[i].out_shift;
            const int half = (1 << s) >> 1, mask = -(1 << s), qmax = a.P[i].out_max << s;
            const bool row = l < rows;
            int eleft = 0, u0 = 0, u1 = 0, u2 = 0, prev = 0;
            __syncthreads();
            if (l == 0) {
                u1 = m.u[0];
                u2 = m.u[1];
            }
            for (int c = 0; c < chunks; c++) {
                const int k = c & 1, c0 = 32 * c;
                int v[32], e[32];
                const int bv = m.top[k][l];
#pragma unroll
                for (int j = 0; j < 32; j++) v[j] = m.v[k][l][j];
                TSR_DB_FS_STEPS(c0);
#pragma unroll
                for (int j = 0; j < 32; j++) m.q[k][l][j] = (Tout)v[j];
                if (l == 31) {
#pragma unroll
                    for (int j = 0; j < 32; j++) m.eo[k][j] = e[j];
                }
                __syncthreads();
            }
        }
#undef TSR_DB_FSP_TOP
#undef TSR_DB_FSP_SINK
        __syncthreads();   /* the last chunk's outputs are out before the buffers take the next band */
    }
}

/* Which Floyd-Steinberg kernel runs: 'pairs' (default), 'bands' or 'block' (TSR_DEBAND_FS), logged;
 * 0 block, 1 bands, 2 pairs. */
static int tsr__db_fs_kind(void)
{
    static const char *const names[] = {"block", "bands", "pairs"};
    const char *e = getenv("TSR_DEBAND_FS");
    int kind = 2;
    for (int k = 0; k < 3; k++)
        if (e && strcmp(e, names[k]) == 0) kind = k;
    if (tsr__log_enabled()) fprintf(stderr, "tessera: deband: Floyd-Steinberg kernel '%s'\n", names[kind]);
    return kind;
}

/* Queue Floyd-Steinberg of the frame's 16-bit values (sc->vals) into dst's planes. */
static tsr_status tsr__db_fs_enqueue(const tsr_frame *src, tsr_frame *dst, const tsr__db_plane P[3],
                                     tsr__db_scratch *sc, cudaStream_t st)
{
    const int wide_out = dst->bits > 8;
    int fits = 1;   /* the bands and pairs kernels address 32 rows with int offsets */
    for (int i = 0; i < src->nplanes; i++)
        fits &= (long long)P[i].w * 32 < INT_MAX && (long long)(dst->stride[i] / (wide_out ? 2 : 1)) * 32 < INT_MAX;
    const int kind = fits ? tsr__db_fs_kind() : 0;
    if (kind) {
        tsr__db_fsb_args a;
        size_t off = 0;
        memset(&a, 0, sizeof a);
        for (int i = 0; i < src->nplanes; i++) {
            a.P[i] = P[i];
            a.vals[i] = sc->vals + tsr__db_plane_base(P, i);
            a.bnd[i] = sc->errs + off;
            a.dst[i] = dst->plane[i];
            a.dp[i] = dst->stride[i] / (wide_out ? 2 : 1);
            a.bands[i] = (P[i].h + 31) / 32;
            a.total += a.bands[i];
            off += (size_t)a.bands[i] * (size_t)P[i].w;   /* <= the plane's samples */
        }
        a.ticket = sc->errs + off;   /* the scratch has one word more than the samples */
        TSR_DB_TRY(cudaMemsetAsync(sc->errs, 0, (off + 1) * sizeof(int), st), "deband: cudaMemsetAsync");
        {
            /* TSR_DEBAND_FS_WARPS caps the warps, in whole blocks (tests: bands queued behind busy
             * warps) */
            const char *e = getenv("TSR_DEBAND_FS_WARPS");
            const int per = kind == 2 ? 2 : 1, cap = e && atoi(e) > 0 ? atoi(e) : tsr__cu_sm_count() * 16;
            const int blocks = min(a.total, max(1, cap / per));
            if (kind == 1) {
                if (wide_out) tsr__db_fsb_kernel<uint16_t><<<blocks, 32, 0, st>>>(a);
                else tsr__db_fsb_kernel<uint8_t><<<blocks, 32, 0, st>>>(a);
            } else {
                if (wide_out) tsr__db_fsp_kernel<uint16_t><<<blocks, 64, 0, st>>>(a);
                else tsr__db_fsp_kernel<uint8_t><<<blocks, 64, 0, st>>>(a);
            }
        }
        return TSR_CUDA_LAUNCHED("deband: Floyd-Steinberg kernel");
    }
    {
        tsr__db_fs_args a;
        memset(&a, 0, sizeof a);
        for (int i = 0; i < src->nplanes; i++) {
            size_t base = tsr__db_plane_base(P, i);
            a.P[i] = P[i];
            a.vals[i] = sc->vals + base;
            a.errs[i] = sc->errs + base;
            a.dst[i] = dst->plane[i];
            a.dp[i] = dst->stride[i] / (wide_out ? 2 : 1);
        }
        if (wide_out) tsr__db_fs_kernel<uint16_t><<<src->nplanes, TSR_DB_FS_THREADS, 0, st>>>(a);
        else tsr__db_fs_kernel<uint8_t><<<src->nplanes, TSR_DB_FS_THREADS, 0, st>>>(a);
        return TSR_CUDA_LAUNCHED("deband: Floyd-Steinberg kernel");
    }
}

/* ---------------------------------------------------------------- one frame */

/* Queue the whole computation of one frame on 'st' with scratch 'sc'. */
static tsr_status tsr__db_enqueue(int kind, const tsr_frame *src, tsr_frame *dst, const tsr__db_plane P[3],
                                  tsr__db_scratch *sc, cudaStream_t st)
{
    int fs = P[0].dither == TSR_DITHER_FLOYD && P[0].out_shift, wide_in = src->bits > 8, wide_out = dst->bits > 8;
    tsr_status s;
    if ((s = tsr__db_scratch_reserve(sc, P, src->nplanes, kind))) return s;
    if (kind == 0) {
        for (int i = 0; i < src->nplanes; i++) {
            uint16_t *vals = fs ? sc->vals + tsr__db_plane_base(P, i) : NULL;
            if (wide_in && wide_out)
                s = tsr__db_launch_planar<uint16_t, uint16_t>(P[i], src->plane[i], src->stride[i], dst->plane[i], dst->stride[i], vals, st);
            else if (wide_in)
                s = tsr__db_launch_planar<uint16_t, uint8_t>(P[i], src->plane[i], src->stride[i], dst->plane[i], dst->stride[i], vals, st);
            else if (wide_out)
                s = tsr__db_launch_planar<uint8_t, uint16_t>(P[i], src->plane[i], src->stride[i], dst->plane[i], dst->stride[i], vals, st);
            else
                s = tsr__db_launch_planar<uint8_t, uint8_t>(P[i], src->plane[i], src->stride[i], dst->plane[i], dst->stride[i], vals, st);
            if (s) return s;
        }
    } else if (kind == 3 || kind == 4) {
        if ((s = tsr__dbv_run(src, dst, P, fs ? sc->vals : NULL, kind == 4, st))) return s;
    } else if (kind == 5) {
        if ((s = tsr__dbt_run(src, dst, P, fs ? sc->vals : NULL, st))) return s;
    } else {
        int w = P[0].w, h = P[0].h;
        dim3 b(TSR_DB_BX, TSR_DB_BY), g(tsr__div_up((unsigned)w, TSR_DB_BX), tsr__div_up((unsigned)h, TSR_DB_BY));
        if (src->chroma != TSR_CHROMA_444 || src->stride[1] != src->stride[0] || src->stride[2] != src->stride[0] ||
            dst->stride[1] != dst->stride[0] || dst->stride[2] != dst->stride[0])
            return tsr__fail(TSR_E_UNSUPPORTED, "deband: the aos variants need 4:4:4 frames with equal plane strides");
        if (wide_in)
            kind == 1 ? tsr__db_pack_kernel<uint16_t, 3><<<g, b, 0, st>>>(w, h, P[0].in_shift, (const uint16_t *)src->plane[0], (const uint16_t *)src->plane[1], (const uint16_t *)src->plane[2], src->stride[0] / 2, sc->aos_in)
                      : tsr__db_pack_kernel<uint16_t, 4><<<g, b, 0, st>>>(w, h, P[0].in_shift, (const uint16_t *)src->plane[0], (const uint16_t *)src->plane[1], (const uint16_t *)src->plane[2], src->stride[0] / 2, sc->aos_in);
        else
            kind == 1 ? tsr__db_pack_kernel<uint8_t, 3><<<g, b, 0, st>>>(w, h, P[0].in_shift, (const uint8_t *)src->plane[0], (const uint8_t *)src->plane[1], (const uint8_t *)src->plane[2], src->stride[0], sc->aos_in)
                      : tsr__db_pack_kernel<uint8_t, 4><<<g, b, 0, st>>>(w, h, P[0].in_shift, (const uint8_t *)src->plane[0], (const uint8_t *)src->plane[1], (const uint8_t *)src->plane[2], src->stride[0], sc->aos_in);
        if ((s = TSR_CUDA_LAUNCHED("deband: pack kernel"))) return s;
        if (kind == 1) {
            if (P[0].sample_mode == 1) tsr__db_aos_kernel<3, 1><<<g, b, 0, st>>>(P[0], P[1], P[2], sc->aos_in, sc->aos_out);
            else tsr__db_aos_kernel<3, 2><<<g, b, 0, st>>>(P[0], P[1], P[2], sc->aos_in, sc->aos_out);
        } else {
            if (P[0].sample_mode == 1) tsr__db_aos_kernel<4, 1><<<g, b, 0, st>>>(P[0], P[1], P[2], sc->aos_in, sc->aos_out);
            else tsr__db_aos_kernel<4, 2><<<g, b, 0, st>>>(P[0], P[1], P[2], sc->aos_in, sc->aos_out);
        }
        if ((s = TSR_CUDA_LAUNCHED("deband: aos kernel"))) return s;
        if (wide_out)
            kind == 1 ? tsr__db_unpack_kernel<uint16_t, 3><<<g, b, 0, st>>>(P[0], P[1], P[2], sc->aos_out, (uint16_t *)dst->plane[0], (uint16_t *)dst->plane[1], (uint16_t *)dst->plane[2], dst->stride[0] / 2, fs ? sc->vals : NULL)
                      : tsr__db_unpack_kernel<uint16_t, 4><<<g, b, 0, st>>>(P[0], P[1], P[2], sc->aos_out, (uint16_t *)dst->plane[0], (uint16_t *)dst->plane[1], (uint16_t *)dst->plane[2], dst->stride[0] / 2, fs ? sc->vals : NULL);
        else
            kind == 1 ? tsr__db_unpack_kernel<uint8_t, 3><<<g, b, 0, st>>>(P[0], P[1], P[2], sc->aos_out, (uint8_t *)dst->plane[0], (uint8_t *)dst->plane[1], (uint8_t *)dst->plane[2], dst->stride[0], fs ? sc->vals : NULL)
                      : tsr__db_unpack_kernel<uint8_t, 4><<<g, b, 0, st>>>(P[0], P[1], P[2], sc->aos_out, (uint8_t *)dst->plane[0], (uint8_t *)dst->plane[1], (uint8_t *)dst->plane[2], dst->stride[0], fs ? sc->vals : NULL);
        if ((s = TSR_CUDA_LAUNCHED("deband: unpack kernel"))) return s;
    }
    if (fs) return tsr__db_fs_enqueue(src, dst, P, sc, st);
    return TSR_OK;
}

/* One frame on device memory (contract in deband_int.h). */
extern "C" tsr_status tsr__deband_cuda_run(int kind, const tsr_frame *src, tsr_frame *dst, const tsr__db_plane P[3],
                                           void *stream)
{
    tsr__db_scratch sc;
    cudaStream_t st = (cudaStream_t)stream;
    tsr_status s, s2;
    memset(&sc, 0, sizeof sc);
    s = tsr__db_enqueue(kind, src, dst, P, &sc, st);
    /* The scratch must outlive the queued kernels: wait only when there is scratch to free. */
    if (sc.vals || sc.aos_in) {
        s2 = tsr__cuda_status(cudaStreamSynchronize(st), "deband: cudaStreamSynchronize");
        if (!s) s = s2;
    }
    tsr__db_scratch_free(&sc);
    return s;
}

/* ---------------------------------------------------------------- pipe */

struct tsr__db_slot {
    cudaStream_t st;
    cudaEvent_t k0, k1;
    tsr_frame din, dout;
    tsr__db_scratch sc;
    int ready;   /* its frames (host and device) are allocated */
};

struct tsr__db_cuda_pipe {
    int nslots;
    int width, height, chroma, bits, out_bits;
    tsr_frame *in, *out;   /* the front end's pinned host frames */
    tsr__db_slot slot[TSR__DB_SLOTS];
};

/* Pinned host frame of this shape. */
static tsr_status tsr__db_pinned(tsr_frame *f, int width, int height, int chroma, int bits)
{
    memset(f, 0, sizeof *f);
    f->width = width, f->height = height, f->chroma = chroma, f->bits = bits, f->memory = TSR_HOST;
    f->nplanes = chroma == TSR_CHROMA_MONO ? 1 : 3;
    for (int p = 0; p < f->nplanes; p++) {
        size_t row = (size_t)tsr_frame_plane_width(width, chroma, p) * (bits > 8 ? 2 : 1), bytes;
        f->stride[p] = (row + 63) & ~(size_t)63;
        if (!tsr__mul_size(f->stride[p], (size_t)tsr_frame_plane_height(height, chroma, p), &bytes))
            return tsr__fail(TSR_E_SIZE, "deband: frame size overflows");
        TSR_DB_TRY(cudaMallocHost(&f->plane[p], bytes), "deband: cudaMallocHost");
    }
    return TSR_OK;
}

/* Free a pinned frame from tsr__db_pinned and zero it. */
static void tsr__db_pinned_free(tsr_frame *f)
{
    for (int p = 0; p < 3; p++)
        if (f->plane[p]) cudaFreeHost(f->plane[p]);
    memset(f, 0, sizeof *f);
}

/* The pipe functions: contracts in deband_int.h. */
extern "C" void tsr__deband_cuda_pipe_close(void *state)
{
    tsr__db_cuda_pipe *c = (tsr__db_cuda_pipe *)state;
    if (!c) return;
    for (int k = 0; k < c->nslots; k++) {
        tsr__db_slot *s = &c->slot[k];
        if (s->st) cudaStreamSynchronize(s->st);
        tsr__db_scratch_free(&s->sc);
        tsr_frame_free(&s->din);
        tsr_frame_free(&s->dout);
        if (s->k0) cudaEventDestroy(s->k0);
        if (s->k1) cudaEventDestroy(s->k1);
        if (s->st) cudaStreamDestroy(s->st);
        tsr__db_pinned_free(&c->in[k]);
        tsr__db_pinned_free(&c->out[k]);
    }
    free(c);
}

extern "C" tsr_status tsr__deband_cuda_pipe_open(void **state, int width, int height, int chroma, int bits,
                                                 int out_bits, int nslots, tsr_frame *in, tsr_frame *out)
{
    tsr__db_cuda_pipe *c = (tsr__db_cuda_pipe *)calloc(1, sizeof *c);
    tsr_status s = TSR_OK;
    if (!c) return tsr__fail(TSR_E_NOMEM, "deband: out of memory");
    if (nslots < 1 || nslots > TSR__DB_SLOTS) {
        free(c);
        return tsr__fail(TSR_E_ARG, "deband: %d pipe slots (1 to %d)", nslots, TSR__DB_SLOTS);
    }
    c->nslots = nslots, c->in = in, c->out = out;
    c->width = width, c->height = height, c->chroma = chroma, c->bits = bits, c->out_bits = out_bits;
    for (int k = 0; k < nslots && !s; k++) {
        tsr__db_slot *sl = &c->slot[k];
        if ((s = tsr__cuda_status(cudaStreamCreateWithFlags(&sl->st, cudaStreamNonBlocking), "deband: cudaStreamCreate"))) break;
        if ((s = tsr__cuda_status(cudaEventCreate(&sl->k0), "deband: cudaEventCreate"))) break;
        if ((s = tsr__cuda_status(cudaEventCreate(&sl->k1), "deband: cudaEventCreate"))) break;
    }
    /* Slot 0's frames now, so that a stream that cannot have one frame's buffers fails at once;
     * the others at their first use: pinning a 4K 16-bit frame's 25 MB takes about 11 ms, and a
     * short stream never reaches the later slots. */
    if (!s) s = tsr__deband_cuda_pipe_slot(c, 0);
    if (s) {
        tsr__deband_cuda_pipe_close(c);
        return s;
    }
    *state = c;
    return TSR_OK;
}

extern "C" tsr_status tsr__deband_cuda_pipe_slot(void *state, int k)
{
    tsr__db_cuda_pipe *c = (tsr__db_cuda_pipe *)state;
    tsr__db_slot *sl = &c->slot[k];
    tsr_status s;
    if (sl->ready) return TSR_OK;
    if ((s = tsr__db_pinned(&c->in[k], c->width, c->height, c->chroma, c->bits)) ||
        (s = tsr__db_pinned(&c->out[k], c->width, c->height, c->chroma, c->out_bits)) ||
        (s = tsr_frame_create(&sl->din, c->width, c->height, c->chroma, c->bits, TSR_DEVICE)) ||
        (s = tsr_frame_create(&sl->dout, c->width, c->height, c->chroma, c->out_bits, TSR_DEVICE))) {
        tsr__db_pinned_free(&c->in[k]);
        tsr__db_pinned_free(&c->out[k]);
        tsr_frame_free(&sl->din);
        tsr_frame_free(&sl->dout);
        return s;
    }
    sl->ready = 1;
    return TSR_OK;
}

extern "C" tsr_status tsr__deband_cuda_pipe_submit(void *state, int k, int kind, const tsr__db_plane P[3])
{
    tsr__db_cuda_pipe *c = (tsr__db_cuda_pipe *)state;
    tsr__db_slot *sl = &c->slot[k];
    tsr_status s;
    if ((s = tsr__db_scratch_reserve(&sl->sc, P, sl->din.nplanes, kind))) return s;   /* before queuing: may sync */
    if ((s = tsr_frame_copy(&c->in[k], &sl->din, sl->st))) return s;
    TSR_DB_TRY(cudaEventRecord(sl->k0, sl->st), "deband: cudaEventRecord");
    if ((s = tsr__db_enqueue(kind, &sl->din, &sl->dout, P, &sl->sc, sl->st))) return s;
    TSR_DB_TRY(cudaEventRecord(sl->k1, sl->st), "deband: cudaEventRecord");
    return tsr_frame_copy(&sl->dout, &c->out[k], sl->st);
}

extern "C" tsr_status tsr__deband_cuda_pipe_wait(void *state, int k, double *kernel_ms)
{
    tsr__db_cuda_pipe *c = (tsr__db_cuda_pipe *)state;
    float ms = 0;
    TSR_DB_TRY(cudaStreamSynchronize(c->slot[k].st), "deband: frame processing");
    TSR_DB_TRY(cudaEventElapsedTime(&ms, c->slot[k].k0, c->slot[k].k1), "deband: cudaEventElapsedTime");
    *kernel_ms = ms;
    return TSR_OK;
}

/* ---------------------------------------------------------------- bench */

/* Bench timing of one variant's kernel(s) and of a copy (contract in deband_int.h). */
extern "C" tsr_status tsr__deband_cuda_time(int kind, const tsr_frame *src, tsr_frame *dst, const tsr__db_plane P[3],
                                            int iters, double *kernel_ms, double *copy_ms, double *flat_ms)
{
    tsr__db_scratch sc;
    cudaEvent_t e0 = NULL, e1 = NULL;
    float ms = 0;
    tsr_status s;
    int wide_in = src->bits > 8, wide_out = dst->bits > 8;
    memset(&sc, 0, sizeof sc);
    if ((kind == 1 || kind == 2) && src->chroma != TSR_CHROMA_444) return tsr__fail(TSR_E_UNSUPPORTED, "deband: aos variants need 4:4:4");
    if ((s = tsr__cuda_status(cudaEventCreate(&e0), "cudaEventCreate")) ||
        (s = tsr__cuda_status(cudaEventCreate(&e1), "cudaEventCreate")))
        goto done;
    if ((s = tsr__db_enqueue(kind, src, dst, P, &sc, 0))) goto done;   /* warm-up; packs the aos input */
    for (int pass = 0; pass < 2 && !s; pass++) {
        if ((s = tsr__cuda_status(cudaEventRecord(e0, 0), "cudaEventRecord"))) break;
        for (int it = 0; it < iters && !s; it++) {
            if (pass == 1) {
                s = tsr_frame_copy(src, dst, NULL);   /* same bytes in and out as the kernel */
            } else if (P[0].dither == TSR_DITHER_FLOYD && P[0].out_shift) {
                s = tsr__db_enqueue(kind, src, dst, P, &sc, 0);   /* deband into the values, then Floyd-Steinberg */
            } else if (kind == 0) {
                for (int i = 0; i < src->nplanes && !s; i++) {
                    if (wide_in && wide_out)
                        s = tsr__db_launch_planar<uint16_t, uint16_t>(P[i], src->plane[i], src->stride[i], dst->plane[i], dst->stride[i], NULL, 0);
                    else if (!wide_in && !wide_out)
                        s = tsr__db_launch_planar<uint8_t, uint8_t>(P[i], src->plane[i], src->stride[i], dst->plane[i], dst->stride[i], NULL, 0);
                    else
                        s = tsr__fail(TSR_E_UNSUPPORTED, "deband bench: same input and output depth only");
                }
            } else if (kind == 3 || kind == 4) {
                s = tsr__dbv_run(src, dst, P, NULL, kind == 4, 0);
            } else if (kind == 5) {
                s = tsr__dbt_run(src, dst, P, NULL, 0);
            } else {
                dim3 b(TSR_DB_BX, TSR_DB_BY), g(tsr__div_up((unsigned)P[0].w, TSR_DB_BX), tsr__div_up((unsigned)P[0].h, TSR_DB_BY));
                if (kind == 1) {
                    if (P[0].sample_mode == 1) tsr__db_aos_kernel<3, 1><<<g, b>>>(P[0], P[1], P[2], sc.aos_in, sc.aos_out);
                    else tsr__db_aos_kernel<3, 2><<<g, b>>>(P[0], P[1], P[2], sc.aos_in, sc.aos_out);
                } else {
                    if (P[0].sample_mode == 1) tsr__db_aos_kernel<4, 1><<<g, b>>>(P[0], P[1], P[2], sc.aos_in, sc.aos_out);
                    else tsr__db_aos_kernel<4, 2><<<g, b>>>(P[0], P[1], P[2], sc.aos_in, sc.aos_out);
                }
                s = TSR_CUDA_LAUNCHED("deband: aos kernel");
            }
        }
        if (!s) s = tsr__cuda_status(cudaEventRecord(e1, 0), "cudaEventRecord");
        if (!s) s = tsr__cuda_status(cudaEventSynchronize(e1), "cudaEventSynchronize");
        if (!s) s = tsr__cuda_status(cudaEventElapsedTime(&ms, e0, e1), "cudaEventElapsedTime");
        if (!s) *(pass ? copy_ms : kernel_ms) = ms / iters;
    }
    if (!s && flat_ms) {   /* the device's copy bandwidth for as many bytes, without plane boundaries */
        size_t bytes = 0;
        void *fa = NULL, *fb = NULL;
        for (int i = 0; i < src->nplanes; i++)
            bytes += (size_t)P[i].w * (size_t)P[i].h * (size_t)(src->bits > 8 ? 2 : 1);
        s = tsr__cuda_status(cudaMalloc(&fa, bytes), "cudaMalloc");
        if (!s) s = tsr__cuda_status(cudaMalloc(&fb, bytes), "cudaMalloc");
        if (!s) s = tsr__cuda_status(cudaMemcpy(fb, fa, bytes, cudaMemcpyDeviceToDevice), "cudaMemcpy");
        if (!s) s = tsr__cuda_status(cudaEventRecord(e0, 0), "cudaEventRecord");
        for (int it = 0; it < iters && !s; it++)
            s = tsr__cuda_status(cudaMemcpyAsync(fb, fa, bytes, cudaMemcpyDeviceToDevice, 0), "cudaMemcpyAsync");
        if (!s) s = tsr__cuda_status(cudaEventRecord(e1, 0), "cudaEventRecord");
        if (!s) s = tsr__cuda_status(cudaEventSynchronize(e1), "cudaEventSynchronize");
        if (!s) s = tsr__cuda_status(cudaEventElapsedTime(&ms, e0, e1), "cudaEventElapsedTime");
        if (!s) *flat_ms = ms / iters;
        cudaFree(fa);
        cudaFree(fb);
    }
done:
    cudaDeviceSynchronize();
    tsr__db_scratch_free(&sc);
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    return s;
}
