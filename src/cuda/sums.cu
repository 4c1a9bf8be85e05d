/* Column and row sums on the GPU, exact integers (32-bit totals, 64-bit when tsr__sums_depth
 * says 32 bits could overflow).
 *  byte    seeds/001: one thread per column sample over all rows, 1-byte loads (8-bit, columns)
 *  word4   one thread per 4 bytes of the row over all rows (columns)
 *  vec16   one thread per 16 bytes of the row over all rows (columns)
 *  tiled   columns: bands of rows per block, 16-byte loads, partial sums added atomically
 *          (exact: integer addition commutes); rows: one warp per row, shuffle reduction.
 *          Fastest for both axes (default). */
#include "kernels_common.cuh"
#include <type_traits>
#include <stdlib.h>

/* An integer knob from the environment (benchmark sweeps), or def. */
static long long tsr__env_rows(const char *name, long long def)
{
    const char *e = getenv(name);
    return e && *e && atoll(e) > 0 ? atoll(e) : def;
}

/* A sample of row 'row' at sample index i. */
template <class T>
__device__ static inline unsigned tsr__sum_ld(const unsigned char *row, size_t i)
{
    return ((const T *)row)[i];
}

/* ------------------------------------------------------------------------ one thread per column chunk */

/* Each thread sums CHUNK bytes of every row (CHUNK/sizeof(T) samples) down the whole image and
 * writes their totals. Vector loads of CHUNK bytes when 'vec'; a partial chunk at the row's
 * end (or any chunk when not 'vec') is read sample by sample. */
template <class T, class S, int CHUNK>
__global__ void tsr__colsum_chunk_kernel(const unsigned char *src, size_t sstride, S *out, size_t row_bytes,
                                         int height, int vec)
{
    constexpr int N = CHUNK / (int)sizeof(T);
    size_t b0 = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) * CHUNK;
    if (b0 >= row_bytes) return;
    size_t i0 = b0 / sizeof(T);
    S acc[N];
#pragma unroll
    for (int k = 0; k < N; k++) acc[k] = 0;
    if (vec && b0 + CHUNK <= row_bytes) {
        for (int y = 0; y < height; y++) {
            const unsigned char *row = src + (size_t)y * sstride + b0;
            union {
                T e[N];
                typename std::conditional<CHUNK == 16, uint4, typename std::conditional<CHUNK == 4, unsigned, unsigned char>::type>::type u;
            } pk;
            pk.u = *(const decltype(pk.u) *)row;
#pragma unroll
            for (int k = 0; k < N; k++) acc[k] += pk.e[k];
        }
    } else {
        int n = (int)((row_bytes - b0) / sizeof(T) < (size_t)N ? (row_bytes - b0) / sizeof(T) : (size_t)N);
        for (int y = 0; y < height; y++) {
            const unsigned char *row = src + (size_t)y * sstride;
            for (int k = 0; k < n; k++) acc[k] += tsr__sum_ld<T>(row, i0 + k);
        }
    }
    int n = (int)((row_bytes - b0) / sizeof(T) < (size_t)N ? (row_bytes - b0) / sizeof(T) : (size_t)N);
#pragma unroll
    for (int k = 0; k < N; k++)
        if (k < n) out[i0 + k] = acc[k];
}

template <int CHUNK>
static tsr_status tsr__colsum_chunk_launch(const tsr_image *src, tsr_image *dst, cudaStream_t st, const char *what)
{
    size_t row = tsr_image_row_bytes(src);
    unsigned threads = 128, blocks = (unsigned)((row + (size_t)CHUNK * threads - 1) / ((size_t)CHUNK * threads));
    int vec = tsr__cu_aligned(src->data, src->stride, CHUNK);
    const unsigned char *s = (const unsigned char *)src->data;
    if constexpr (CHUNK == 1) {   /* one byte is one 8-bit sample: byte handles 8-bit only */
        if (dst->depth == TSR_U32)
            tsr__colsum_chunk_kernel<uint8_t, uint32_t, CHUNK><<<blocks, threads, 0, st>>>(s, src->stride, (uint32_t *)dst->data, row, src->height, vec);
        else
            tsr__colsum_chunk_kernel<uint8_t, unsigned long long, CHUNK><<<blocks, threads, 0, st>>>(s, src->stride, (unsigned long long *)dst->data, row, src->height, vec);
    } else if (src->depth == TSR_U8) {
        if (dst->depth == TSR_U32)
            tsr__colsum_chunk_kernel<uint8_t, uint32_t, CHUNK><<<blocks, threads, 0, st>>>(s, src->stride, (uint32_t *)dst->data, row, src->height, vec);
        else
            tsr__colsum_chunk_kernel<uint8_t, unsigned long long, CHUNK><<<blocks, threads, 0, st>>>(s, src->stride, (unsigned long long *)dst->data, row, src->height, vec);
    } else {
        if (dst->depth == TSR_U32)
            tsr__colsum_chunk_kernel<uint16_t, uint32_t, CHUNK><<<blocks, threads, 0, st>>>(s, src->stride, (uint32_t *)dst->data, row, src->height, vec);
        else
            tsr__colsum_chunk_kernel<uint16_t, unsigned long long, CHUNK><<<blocks, threads, 0, st>>>(s, src->stride, (unsigned long long *)dst->data, row, src->height, vec);
    }
    return TSR_CUDA_LAUNCHED(what);
}

/* The column-only variants say so. */
static int tsr__sums_columns_only(const tsr_image *src, const void *params)
{
    (void)src;
    return ((const tsr_sums_params *)params)->axis == TSR_AXIS_COLUMNS;
}

/* byte: the seed's experiment, 8-bit samples only. */
static int tsr__sums_byte_supports(const tsr_image *src, const void *params)
{
    return src->depth == TSR_U8 && tsr__sums_columns_only(src, params);
}

/* sums/byte: one thread per column sample, 1-byte loads (8-bit columns, per supports()). */
static tsr_status tsr__sums_byte(const tsr_image *src, tsr_image *dst, const void *params, const tsr_exec *ex)
{
    (void)params;
    return tsr__colsum_chunk_launch<1>(src, dst, (cudaStream_t)ex->stream, "sums/byte kernel");
}

/* sums/word4: one thread per 4 bytes of each row, 4-byte loads when aligned (columns). */
static tsr_status tsr__sums_word4(const tsr_image *src, tsr_image *dst, const void *params, const tsr_exec *ex)
{
    (void)params;
    return tsr__colsum_chunk_launch<4>(src, dst, (cudaStream_t)ex->stream, "sums/word4 kernel");
}

/* sums/vec16: one thread per 16 bytes of each row, 16-byte loads when aligned (columns). */
static tsr_status tsr__sums_vec16(const tsr_image *src, tsr_image *dst, const void *params, const tsr_exec *ex)
{
    (void)params;
    return tsr__colsum_chunk_launch<16>(src, dst, (cudaStream_t)ex->stream, "sums/vec16 kernel");
}

/* ------------------------------------------------------------------------ tiled columns */

enum { TSR_COLSUM_THREADS = 256, TSR_COLSUM_UNROLL = 8 };

/* Sum of the samples of a 16-byte chunk into N lanes. */
template <class T, class S, int N>
__device__ static inline void tsr__add_chunk(S *acc, uint4 u)
{
    union {
        uint4 u;
        T e[N];
    } pk;
    pk.u = u;
#pragma unroll
    for (int k = 0; k < N; k++) acc[k] += pk.e[k];
}

/* grid.x: 16-byte chunks of the row (one per thread), grid.y: bands of band_h rows. Each
 * thread sums its chunk over the band (TSR_COLSUM_UNROLL rows in flight) and adds the totals to
 * 'out' atomically; 'out' was zeroed on the stream before. Partial chunks at the row's end and
 * unaligned images are read sample by sample. Band partial sums fit S (band_h <= 65536). */
template <class T, class S>
__global__ void tsr__colsum_tiled_kernel(const unsigned char *src, size_t sstride, S *out, size_t row_bytes,
                                         int height, int band_h, int vec)
{
    constexpr int N = 16 / (int)sizeof(T);
    size_t b0 = ((size_t)blockIdx.x * TSR_COLSUM_THREADS + threadIdx.x) * 16;
    if (b0 >= row_bytes) return;
    size_t i0 = b0 / sizeof(T);
    int n = (int)((row_bytes - b0) / sizeof(T) < (size_t)N ? (row_bytes - b0) / sizeof(T) : (size_t)N);
    for (long long y0 = (long long)blockIdx.y * band_h; y0 < height; y0 += (long long)gridDim.y * band_h) {
        int y1 = (int)(y0 + band_h < height ? y0 + band_h : height);
        S acc[N];
#pragma unroll
        for (int k = 0; k < N; k++) acc[k] = 0;
        if (vec && n == N) {
            const unsigned char *p = src + (size_t)y0 * sstride + b0;
            int y = (int)y0;
            for (; y + TSR_COLSUM_UNROLL <= y1; y += TSR_COLSUM_UNROLL) {
                uint4 u[TSR_COLSUM_UNROLL];
#pragma unroll
                for (int r = 0; r < TSR_COLSUM_UNROLL; r++) u[r] = __ldg((const uint4 *)(p + (size_t)r * sstride));
#pragma unroll
                for (int r = 0; r < TSR_COLSUM_UNROLL; r++) tsr__add_chunk<T, S, N>(acc, u[r]);
                p += (size_t)TSR_COLSUM_UNROLL * sstride;
            }
            for (; y < y1; y++, p += sstride) tsr__add_chunk<T, S, N>(acc, __ldg((const uint4 *)p));
        } else {
            for (int y = (int)y0; y < y1; y++) {
                const unsigned char *row = src + (size_t)y * sstride;
                for (int k = 0; k < n; k++) acc[k] += tsr__sum_ld<T>(row, i0 + k);
            }
        }
#pragma unroll
        for (int k = 0; k < N; k++)
            if (k < n) atomicAdd(out + i0 + k, acc[k]);
    }
}

/* Column sums into dst (width x 1): zero it on the stream, then add each band's partial sums
 * atomically. Bands of at least 64 rows (fewer atomics; 64 measured best at 8192^2) and at
 * most 65536 (32-bit partial sums of 16-bit samples). */
static tsr_status tsr__colsum_tiled(const tsr_image *src, tsr_image *dst, cudaStream_t st)
{
    size_t row = tsr_image_row_bytes(src);
    unsigned bx = (unsigned)((row + 16 * TSR_COLSUM_THREADS - 1) / (16 * TSR_COLSUM_THREADS));
    long long per_band = (long long)((row + 15) / 16);
    long long goal = (long long)tsr__cu_sm_count() * 2048;
    long long bands = (goal + per_band - 1) / per_band;
    long long band_h = (src->height + bands - 1) / bands;
    int vec = tsr__cu_aligned(src->data, src->stride, 16);
    const unsigned char *s = (const unsigned char *)src->data;
    tsr_status e;
    band_h = tsr__env_rows("TSR_CUDA_SUMS_BAND", band_h < 64 ? 64 : band_h);   /* keep the atomics few */
    if (band_h > 65536) band_h = 65536;     /* 32-bit partial sums of 16-bit samples */
    bands = (src->height + band_h - 1) / band_h;
    dim3 grid(bx, (unsigned)(bands < TSR_CU_MAX_GRID_Y ? bands : TSR_CU_MAX_GRID_Y));
    e = tsr__cuda_status(cudaMemsetAsync(dst->data, 0, tsr_image_row_bytes(dst), st), "cudaMemsetAsync(sums)");
    if (e) return e;
    if (src->depth == TSR_U8) {
        if (dst->depth == TSR_U32)
            tsr__colsum_tiled_kernel<uint8_t, uint32_t><<<grid, TSR_COLSUM_THREADS, 0, st>>>(s, src->stride, (uint32_t *)dst->data, row, src->height, (int)band_h, vec);
        else
            tsr__colsum_tiled_kernel<uint8_t, unsigned long long><<<grid, TSR_COLSUM_THREADS, 0, st>>>(s, src->stride, (unsigned long long *)dst->data, row, src->height, (int)band_h, vec);
    } else {
        if (dst->depth == TSR_U32)
            tsr__colsum_tiled_kernel<uint16_t, uint32_t><<<grid, TSR_COLSUM_THREADS, 0, st>>>(s, src->stride, (uint32_t *)dst->data, row, src->height, (int)band_h, vec);
        else
            tsr__colsum_tiled_kernel<uint16_t, unsigned long long><<<grid, TSR_COLSUM_THREADS, 0, st>>>(s, src->stride, (unsigned long long *)dst->data, row, src->height, (int)band_h, vec);
    }
    return TSR_CUDA_LAUNCHED("sums/tiled columns kernel");
}

/* ------------------------------------------------------------------------ packed columns */

/* sums/packed (8-bit columns): a block of 8 warps owns 512 consecutive bytes of the row (16 per
 * lane, one 16-byte load per row) and a band of up to 8 x 32 rows; warp k takes rows k, k + 8,
 * ..., so the 8 warps' loads of a row group are adjacent. A lane keeps its 16 running sums as 8
 * packed 16-bit pairs (32 rows x 255 fit 16 bits): one byte permute and one add per pair and
 * row, half the instructions of adding byte by byte. The warps' sums meet in shared memory and
 * each column's band total is one atomic add: 16 rows per atomic became 256 (the atomics to the
 * same 8192 addresses were a large part of sums/tiled's time). The totals start from zero, which
 * a small kernel writes first; on sm_90 the sums kernel is launched as its programmatic
 * dependent, so its blocks start and load while the zeroing finishes and wait for it only
 * before their atomics (a separate memset and launch cost about 3 of 32 us at 8192x8192). */
enum { TSR_CSP_WARPS = 8, TSR_CSP_ROWS = 32, TSR_CSP_BAND = TSR_CSP_WARPS * TSR_CSP_ROWS, TSR_CSP_COLS = 512 };

template <class S>
__global__ void __launch_bounds__(TSR_CSP_WARPS * 32) tsr__colsum_packed_kernel(const unsigned char *src, size_t sstride,
                                                                               S *out, int row_bytes, int height,
                                                                               int band)
{
    __shared__ unsigned part[TSR_CSP_WARPS][TSR_CSP_COLS + 4];
    const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    const int c0 = blockIdx.x * TSR_CSP_COLS + 16 * lane;   /* this lane's first byte */
    const int whole = c0 + 16 <= row_bytes;
    unsigned q[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    const long long y0 = (long long)blockIdx.y * band + wid;
    const long long y1 = min((long long)height, (long long)(blockIdx.y + 1) * band);
    if (whole) {
        const unsigned char *p = src + (size_t)y0 * sstride + c0;
        const size_t step = (size_t)TSR_CSP_WARPS * sstride;
        long long y = y0;
        for (; y + 3 * TSR_CSP_WARPS < y1; y += 4 * TSR_CSP_WARPS, p += 4 * step) {   /* 4 loads in flight */
            uint4 u[4];
#pragma unroll
            for (int r = 0; r < 4; r++) u[r] = __ldg((const uint4 *)(p + r * step));
#pragma unroll
            for (int r = 0; r < 4; r++) {
                const unsigned w[4] = {u[r].x, u[r].y, u[r].z, u[r].w};
#pragma unroll
                for (int k = 0; k < 4; k++) {
                    q[2 * k] += __byte_perm(w[k], 0, 0x4140);
                    q[2 * k + 1] += __byte_perm(w[k], 0, 0x4342);
                }
            }
        }
        for (; y < y1; y += TSR_CSP_WARPS, p += step) {
            const uint4 u = __ldg((const uint4 *)p);
            const unsigned w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
            for (int k = 0; k < 4; k++) {
                q[2 * k] += __byte_perm(w[k], 0, 0x4140);
                q[2 * k + 1] += __byte_perm(w[k], 0, 0x4342);
            }
        }
    } else if (c0 < row_bytes) {   /* the row's last, partial chunk: byte by byte */
        for (long long y = y0; y < y1; y += TSR_CSP_WARPS) {
            const unsigned char *row = src + (size_t)y * sstride + c0;
#pragma unroll
            for (int j = 0; j < 16; j++)   /* unrolled: q stays in registers (no local-memory array) */
                if (c0 + j < row_bytes) q[j >> 1] += (unsigned)row[j] << (16 * (j & 1));
        }
    }
    /* pairs hold bytes (0,1), (2,3), ... of each word: byte j is in q[j >> 1], half j & 1 */
#pragma unroll
    for (int j = 0; j < 16; j++) part[wid][16 * lane + j] = (q[j >> 1] >> (16 * (j & 1))) & 0xffffu;
    __syncthreads();
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    cudaGridDependencySynchronize();   /* the zeroed totals (a no-op without a programmatic launch) */
#endif
    for (int col = threadIdx.x; col < TSR_CSP_COLS; col += TSR_CSP_WARPS * 32) {
        const int c = blockIdx.x * TSR_CSP_COLS + col;
        if (c >= row_bytes) break;
        unsigned t = 0;
#pragma unroll
        for (int k = 0; k < TSR_CSP_WARPS; k++) t += part[k][col];
        atomicAdd(out + c, (S)t);
    }
}

/* Zero n totals; lets its programmatic dependent (the sums kernel) start at once. */
template <class S>
__global__ void tsr__colsum_zero_kernel(S *out, int n)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    cudaTriggerProgrammaticLaunchCompletion();
#endif
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) out[i] = 0;
}

/* Whether the current device runs programmatic dependent launches (compute capability 9.0 up). */
static int tsr__cu_pdl(void)
{
    static int pdl = -1;
    if (pdl < 0) {
        int dev = 0, major = 0;
        pdl = cudaGetDevice(&dev) == cudaSuccess &&
              cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) == cudaSuccess && major >= 9;
        cudaGetLastError();
    }
    return pdl;
}

/* Zero the totals, then queue the sums kernel behind it (programmatically dependent on sm_90). */
template <class S>
static tsr_status tsr__colsum_packed_launch(const tsr_image *src, S *out, size_t row, dim3 grid, int band,
                                            cudaStream_t st)
{
    tsr__colsum_zero_kernel<S><<<(unsigned)((row + 1023) / 1024), 256, 0, st>>>(out, (int)row);
    tsr_status e = TSR_CUDA_LAUNCHED("sums/packed zeroing kernel");
    if (e) return e;
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute attr[1] = {};
    cfg.gridDim = grid;
    cfg.blockDim = dim3(TSR_CSP_WARPS * 32);
    cfg.stream = st;
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = attr;
    cfg.numAttrs = tsr__cu_pdl() ? 1 : 0;
    return tsr__cuda_status(cudaLaunchKernelEx(&cfg, tsr__colsum_packed_kernel<S>, (const unsigned char *)src->data,
                                               src->stride, out, (int)row, src->height, band),
                            "sums/packed columns kernel");
}

static int tsr__sums_packed_supports(const tsr_image *src, const void *params)
{
    return src->depth == TSR_U8 && tsr__sums_columns_only(src, params) && tsr_image_row_bytes(src) <= 0x7fffffff;
}

/* sums/packed: see the kernel's comment; rows that are not 16-byte aligned go to sums/tiled. */
static tsr_status tsr__sums_packed(const tsr_image *src, tsr_image *dst, const void *params, const tsr_exec *ex)
{
    cudaStream_t st = (cudaStream_t)ex->stream;
    size_t row = tsr_image_row_bytes(src);
    if (!tsr__cu_aligned(src->data, src->stride, 16)) return tsr__colsum_tiled(src, dst, st);
    const long long cols = (long long)((row + TSR_CSP_COLS - 1) / TSR_CSP_COLS);
    /* Bands of 256 rows (one atomic per column and band) where that gives a block per SM;
     * shorter ones (down to 32 rows) on smaller images, which otherwise leave SMs idle.
     * tessera-bench-cuda --small (H100): 3840x2160 bands of 256 / 128 / 64 / 32 rows (72 / 136 /
     * 272 / 544 blocks) 7.5 / 6.6 / 6.8 / 8.3 us; 8192x8192 256 rows best (31.3 against 33.1). */
    long long band = TSR_CSP_BAND;
    while (band > 4 * TSR_CSP_WARPS && cols * ((src->height + band - 1) / band) < tsr__cu_sm_count()) band /= 2;
    band = tsr__env_rows("TSR_CUDA_SUMS_PBAND", band);
    if (band < TSR_CSP_WARPS) band = TSR_CSP_WARPS;
    if (band > TSR_CSP_BAND) band = TSR_CSP_BAND;   /* the packed 16-bit sums hold 32 rows per lane */
    band -= band % TSR_CSP_WARPS;
    long long bands = ((long long)src->height + band - 1) / band;
    if (bands > TSR_CU_MAX_GRID_Y) return tsr__colsum_tiled(src, dst, st);   /* more than 65535 bands */
    dim3 grid((unsigned)cols, (unsigned)bands);
    if (dst->depth == TSR_U32) return tsr__colsum_packed_launch(src, (uint32_t *)dst->data, row, grid, (int)band, st);
    return tsr__colsum_packed_launch(src, (unsigned long long *)dst->data, row, grid, (int)band, st);
}

/* ------------------------------------------------------------------------ rows */

enum { TSR_ROWSUM_WARPS = 8 };

/* Warp sum of a per-lane value. */
template <class S>
__device__ static inline S tsr__warp_sum(S v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

/* One warp per row (rows strided over the grid). One channel with aligned rows: lanes read
 * 16-byte chunks (8-bit chunks summed with dp4a); otherwise lanes stride over samples with a
 * total per channel. Lane 0 writes the row's sums at out + y * ostride. */
template <class T, class S>
__global__ void tsr__rowsum_kernel(const unsigned char *src, size_t sstride, unsigned char *out, size_t ostride,
                                   int width, int cn, int height, int vec)
{
    const int lane = threadIdx.x & 31;
    const long long nwarps = (long long)gridDim.x * TSR_ROWSUM_WARPS;
    for (long long y = (long long)blockIdx.x * TSR_ROWSUM_WARPS + (threadIdx.x >> 5); y < height; y += nwarps) {
        const unsigned char *row = src + (size_t)y * sstride;
        S *o = (S *)(out + (size_t)y * ostride);
        size_t n = (size_t)width * cn;
        if (cn == 1 && vec) {
            size_t bytes = n * sizeof(T), chunks = bytes / 16;
            S acc = 0;
            for (size_t c = lane; c < chunks; c += 32) {
                uint4 u = __ldg((const uint4 *)row + c);
                if (sizeof(T) == 1) {
                    unsigned s4 = __dp4a(u.x, 0x01010101u, 0u);
                    s4 = __dp4a(u.y, 0x01010101u, s4);
                    s4 = __dp4a(u.z, 0x01010101u, s4);
                    s4 = __dp4a(u.w, 0x01010101u, s4);
                    acc += s4;
                } else {
                    acc += (S)((u.x & 0xffff) + (u.x >> 16) + (u.y & 0xffff) + (u.y >> 16)) +
                           (S)((u.z & 0xffff) + (u.z >> 16) + (u.w & 0xffff) + (u.w >> 16));
                }
            }
            for (size_t i = chunks * 16 / sizeof(T) + lane; i < n; i += 32) acc += tsr__sum_ld<T>(row, i);
            acc = tsr__warp_sum(acc);
            if (lane == 0) o[0] = acc;
        } else {
            S acc[4] = {0, 0, 0, 0};
            int c = lane % cn, step = 32 % cn;
            for (size_t i = lane; i < n; i += 32) {
                unsigned v = tsr__sum_ld<T>(row, i);
                acc[0] += c == 0 ? v : 0;
                acc[1] += c == 1 ? v : 0;
                acc[2] += c == 2 ? v : 0;
                acc[3] += c == 3 ? v : 0;
                c += step;
                if (c >= cn) c -= cn;
            }
#pragma unroll
            for (int k = 0; k < 4; k++) acc[k] = tsr__warp_sum(acc[k]);
            if (lane == 0) {
#pragma unroll
                for (int k = 0; k < 4; k++)   /* unrolled: acc stays in registers */
                    if (k < cn) o[k] = acc[k];
            }
        }
    }
}

/* Row sums into dst (1 x height, one element per row at dst->stride): a warp per row. */
static tsr_status tsr__rowsum(const tsr_image *src, tsr_image *dst, cudaStream_t st)
{
    long long blocks = ((long long)src->height + TSR_ROWSUM_WARPS - 1) / TSR_ROWSUM_WARPS;
    unsigned grid = (unsigned)(blocks < 65535 * 16 ? blocks : 65535 * 16);
    int vec = tsr__cu_aligned(src->data, src->stride, 16);
    const unsigned char *s = (const unsigned char *)src->data;
    unsigned char *o = (unsigned char *)dst->data;
    if (src->depth == TSR_U8) {
        if (dst->depth == TSR_U32)
            tsr__rowsum_kernel<uint8_t, uint32_t><<<grid, 32 * TSR_ROWSUM_WARPS, 0, st>>>(s, src->stride, o, dst->stride, src->width, src->channels, src->height, vec);
        else
            tsr__rowsum_kernel<uint8_t, unsigned long long><<<grid, 32 * TSR_ROWSUM_WARPS, 0, st>>>(s, src->stride, o, dst->stride, src->width, src->channels, src->height, vec);
    } else {
        if (dst->depth == TSR_U32)
            tsr__rowsum_kernel<uint16_t, uint32_t><<<grid, 32 * TSR_ROWSUM_WARPS, 0, st>>>(s, src->stride, o, dst->stride, src->width, src->channels, src->height, vec);
        else
            tsr__rowsum_kernel<uint16_t, unsigned long long><<<grid, 32 * TSR_ROWSUM_WARPS, 0, st>>>(s, src->stride, o, dst->stride, src->width, src->channels, src->height, vec);
    }
    return TSR_CUDA_LAUNCHED("sums/tiled rows kernel");
}

/* sums/tiled: the column or the row kernel by the axis parameter. */
static tsr_status tsr__sums_tiled(const tsr_image *src, tsr_image *dst, const void *params, const tsr_exec *ex)
{
    cudaStream_t st = (cudaStream_t)ex->stream;
    return ((const tsr_sums_params *)params)->axis == TSR_AXIS_COLUMNS ? tsr__colsum_tiled(src, dst, st)
                                                                       : tsr__rowsum(src, dst, st);
}

extern "C" const tsr_variant tsr__sums_cuda[] = {
    {"packed", TSR_BACKEND_CUDA,
     "8-bit columns: 16 bytes per lane as packed 16-bit pairs, 8 warps per block reduced in shared memory, one atomic per column and 256 rows",
     tsr__sums_packed, tsr__sums_packed_supports, 1, 0, NULL},
    {"byte", TSR_BACKEND_CUDA, "seeds/001: one thread per column, 1-byte loads over all rows (8-bit, columns only)",
     tsr__sums_byte, tsr__sums_byte_supports, 0, 0, NULL},
    {"word4", TSR_BACKEND_CUDA, "one thread per 4 bytes of the row, 4-byte loads over all rows (columns only)",
     tsr__sums_word4, tsr__sums_columns_only, 0, 0, NULL},
    {"vec16", TSR_BACKEND_CUDA, "one thread per 16 bytes of the row, 16-byte loads over all rows (columns only)",
     tsr__sums_vec16, tsr__sums_columns_only, 0, 0, NULL},
    {"tiled", TSR_BACKEND_CUDA,
     "columns: row bands per block with 16-byte loads and atomic totals; rows: a warp per row (both axes)",
     tsr__sums_tiled, NULL, 1, 0, NULL},
    TSR_CUDA_END};
