/* invert on the GPU. max - x equals ~x for 8- and 16-bit samples, so both variants work on the
 * bytes of each row and are exact for every depth and channel count.
 *  row1024  seeds/000: one block per row, 1024 threads striding the row byte by byte
 *  vec16    16-byte loads and stores, each row's unaligned head and tail bytewise (default) */
#include "kernels_common.cuh"
#include <stdlib.h>

/* One block per row (rows beyond grid.x strided), threads striding its bytes. */
__global__ void tsr__invert_row_kernel(const unsigned char *src, size_t sstride, unsigned char *dst, size_t dstride,
                                       size_t row_bytes, int height)
{
    for (long long y = blockIdx.x; y < height; y += gridDim.x) {
        const unsigned char *s = src + (size_t)y * sstride;
        unsigned char *d = dst + (size_t)y * dstride;
        for (size_t i = threadIdx.x; i < row_bytes; i += blockDim.x) d[i] = (unsigned char)~s[i];
    }
}

/* invert/row1024: one block per row (heights are at most 2^30, within grid.x's 2^31 - 1). */
static tsr_status tsr__invert_row1024(const tsr_image *src, tsr_image *dst, const void *params, const tsr_exec *ex)
{
    (void)params;
    tsr__invert_row_kernel<<<(unsigned)src->height, 1024, 0, (cudaStream_t)ex->stream>>>(
        (const unsigned char *)src->data, src->stride, (unsigned char *)dst->data, dst->stride,
        tsr_image_row_bytes(src), src->height);
    return TSR_CUDA_LAUNCHED("invert/row1024 kernel");
}

enum { TSR_INV_THREADS = 256, TSR_INV_CHUNKS = 2 };

/* grid.x covers a row's 16-byte chunks (TSR_INV_CHUNKS per thread), grid.y its rows (strided).
 * 'head' bytes before the first aligned chunk and the tail after the last one are done
 * bytewise by the first threads. When source and destination rows are not congruent modulo
 * 16 ('vec' = 0) every byte is done one at a time. */
__global__ void tsr__invert_vec_kernel(const unsigned char *src, size_t sstride, unsigned char *dst, size_t dstride,
                                       size_t row_bytes, int height, int vec)
{
    size_t t = (size_t)blockIdx.x * TSR_INV_THREADS * TSR_INV_CHUNKS + threadIdx.x;
    for (long long y = blockIdx.y; y < height; y += gridDim.y) {
        const unsigned char *s = src + (size_t)y * sstride;
        unsigned char *d = dst + (size_t)y * dstride;
        if (!vec) {
            for (int k = 0; k < TSR_INV_CHUNKS * 16; k++) {
                size_t i = (size_t)blockIdx.x * TSR_INV_THREADS * TSR_INV_CHUNKS * 16 + (size_t)k * TSR_INV_THREADS +
                           threadIdx.x;
                if (i < row_bytes) d[i] = (unsigned char)~s[i];
            }
            continue;
        }
        size_t head = (16 - (uintptr_t)s % 16) % 16;
        if (head > row_bytes) head = row_bytes;
        size_t nchunks = (row_bytes - head) / 16, tail0 = head + nchunks * 16;
        const uint4 *sv = (const uint4 *)(s + head);
        uint4 *dv = (uint4 *)(d + head);
        uint4 r[TSR_INV_CHUNKS];
#pragma unroll
        for (int k = 0; k < TSR_INV_CHUNKS; k++) {
            size_t c = t + (size_t)k * TSR_INV_THREADS;
            if (c < nchunks) r[k] = __ldg(sv + c);
        }
#pragma unroll
        for (int k = 0; k < TSR_INV_CHUNKS; k++) {
            size_t c = t + (size_t)k * TSR_INV_THREADS;
            if (c < nchunks) dv[c] = make_uint4(~r[k].x, ~r[k].y, ~r[k].z, ~r[k].w);
        }
        if (t < head) d[t] = (unsigned char)~s[t];
        if (t < row_bytes - tail0) d[tail0 + t] = (unsigned char)~s[tail0 + t];
    }
}

static tsr_status tsr__invert_vec16_rows(const tsr_image *src, tsr_image *dst, const void *params,
                                         const tsr_exec *ex);

/* Both images 16-byte aligned (base and stride): the rows' 16-byte chunks as one flat index
 * space, so short rows still fill whole blocks. Chunk index 'cpr' of a row (one past its
 * whole chunks) stands for the row's tail bytes, done one by one. */
__global__ void tsr__invert_flat_kernel(const unsigned char *src, size_t sstride, unsigned char *dst, size_t dstride,
                                        size_t row_bytes, size_t cpr, size_t total)
{
    size_t per_row = cpr + (row_bytes % 16 != 0);
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (size_t)gridDim.x * blockDim.x) {
        size_t y = total <= 0xffffffffu ? (unsigned)i / (unsigned)per_row : i / per_row, c = i - y * per_row;
        const unsigned char *s = src + y * sstride;
        unsigned char *d = dst + y * dstride;
        if (c < cpr) {
            uint4 r = __ldg((const uint4 *)s + c);
            ((uint4 *)d)[c] = make_uint4(~r.x, ~r.y, ~r.z, ~r.w);
        } else {
            for (size_t b = cpr * 16; b < row_bytes; b++) d[b] = (unsigned char)~s[b];
        }
    }
}

/* Aligned rows that are whole 16-byte chunks: block (x, y) inverts chunks [256 x, 256 x + 256)
 * of rows y, y + gridDim.y, ..., each of its 64 threads four chunks 64 apart, all four loads
 * issued before the stores; no index division (the flat kernel divides per chunk). */
enum { TSR_INV2_THREADS = 64, TSR_INV2_CH = 4 };
__global__ void __launch_bounds__(TSR_INV2_THREADS) tsr__invert_rows16_kernel(const unsigned char *src, size_t sstride,
                                                                              unsigned char *dst, size_t dstride,
                                                                              unsigned cpr, int height)
{
    const unsigned c0 = blockIdx.x * TSR_INV2_THREADS * TSR_INV2_CH + threadIdx.x;
    for (long long y = blockIdx.y; y < height; y += gridDim.y) {
        const uint4 *s = (const uint4 *)(src + (size_t)y * sstride);
        uint4 *d = (uint4 *)(dst + (size_t)y * dstride);
        uint4 r[TSR_INV2_CH];
#pragma unroll
        for (int k = 0; k < TSR_INV2_CH; k++)
            if (c0 + k * TSR_INV2_THREADS < cpr) r[k] = __ldg(s + c0 + k * TSR_INV2_THREADS);
#pragma unroll
        for (int k = 0; k < TSR_INV2_CH; k++)
            if (c0 + k * TSR_INV2_THREADS < cpr) d[c0 + k * TSR_INV2_THREADS] = make_uint4(~r[k].x, ~r[k].y, ~r[k].z, ~r[k].w);
    }
}

/* invert/vec16: the row kernel for aligned images of whole 16-byte rows, the flat kernel for
 * other aligned images, the per-row kernel otherwise. TSR_CUDA_INVERT_ROWS=0 (a measurement
 * knob) sends the first kind to the flat kernel too. */
static tsr_status tsr__invert_vec16(const tsr_image *src, tsr_image *dst, const void *params, const tsr_exec *ex)
{
    size_t rb = tsr_image_row_bytes(src);
    if (tsr__cu_aligned(src->data, src->stride, 16) && tsr__cu_aligned(dst->data, dst->stride, 16) && rb % 16 == 0 &&
        rb / 16 <= 0xffffffffu && (!getenv("TSR_CUDA_INVERT_ROWS") || atoi(getenv("TSR_CUDA_INVERT_ROWS")))) {
        size_t cpr = rb / 16, per_block = (size_t)TSR_INV2_THREADS * TSR_INV2_CH;
        dim3 grid((unsigned)((cpr + per_block - 1) / per_block), tsr__cu_grid_rows(src->height));
        (void)params;
        tsr__invert_rows16_kernel<<<grid, TSR_INV2_THREADS, 0, (cudaStream_t)ex->stream>>>(
            (const unsigned char *)src->data, src->stride, (unsigned char *)dst->data, dst->stride, (unsigned)cpr,
            src->height);
        return TSR_CUDA_LAUNCHED("invert/vec16 kernel");
    }
    if (tsr__cu_aligned(src->data, src->stride, 16) && tsr__cu_aligned(dst->data, dst->stride, 16)) {
        size_t row = tsr_image_row_bytes(src), cpr = row / 16;
        size_t total = (cpr + (row % 16 != 0)) * (size_t)src->height;
        size_t blocks = (total + 255) / 256, cap = (size_t)tsr__cu_sm_count() * 64;
        (void)params;
        tsr__invert_flat_kernel<<<(unsigned)(blocks < cap ? blocks : cap), 256, 0, (cudaStream_t)ex->stream>>>(
            (const unsigned char *)src->data, src->stride, (unsigned char *)dst->data, dst->stride, row, cpr, total);
        return TSR_CUDA_LAUNCHED("invert/vec16 kernel");
    }
    return tsr__invert_vec16_rows(src, dst, params, ex);
}

/* Unaligned images: one row per grid.y index, head and tail bytes apart. */
static tsr_status tsr__invert_vec16_rows(const tsr_image *src, tsr_image *dst, const void *params, const tsr_exec *ex)
{
    size_t row = tsr_image_row_bytes(src);
    int vec = ((uintptr_t)src->data - (uintptr_t)dst->data) % 16 == 0 && (src->stride - dst->stride) % 16 == 0;
    size_t per_block = (size_t)TSR_INV_THREADS * TSR_INV_CHUNKS * 16;
    dim3 grid((unsigned)((row + per_block - 1) / per_block), tsr__cu_grid_rows(src->height));
    (void)params;
    tsr__invert_vec_kernel<<<grid, TSR_INV_THREADS, 0, (cudaStream_t)ex->stream>>>(
        (const unsigned char *)src->data, src->stride, (unsigned char *)dst->data, dst->stride, row, src->height, vec);
    return TSR_CUDA_LAUNCHED("invert/vec16 kernel");
}

extern "C" const tsr_variant tsr__invert_cuda[] = {
    {"row1024", TSR_BACKEND_CUDA, "seeds/000: one block of 1024 threads per row, one byte per thread step",
     tsr__invert_row1024, NULL, 0, 0, NULL},
    {"vec16", TSR_BACKEND_CUDA, "16-byte vector loads and stores, unaligned head and tail bytewise",
     tsr__invert_vec16, NULL, 1, 0, NULL},
    TSR_CUDA_END};
