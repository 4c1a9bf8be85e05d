/* RGB(A) to gray on the GPU with OpenCV's fixed-point weights (TSR_GRAY_* in ops.h), exact integer arithmetic
 * identical to src/cpu/gray.c. One thread per pixel, a 2D grid of rows (strided for tall
 * images); 8-bit RGB rows are read through the L1 cache, which coalesces the 3-byte pixels. */
#include "kernels_common.cuh"


/* Gray value of one pixel (the definition). */
__device__ static inline unsigned tsr__cu_gray_px(unsigned r, unsigned g, unsigned b)
{
    return (r * TSR_GRAY_R + g * TSR_GRAY_G + b * TSR_GRAY_B + (1u << (TSR_GRAY_SHIFT - 1))) >>
           TSR_GRAY_SHIFT;
}

/* Each thread converts PX consecutive pixels of a row (CN channels of T). */
template <class T, int CN, int PX>
__global__ void tsr__gray_kernel(const unsigned char *src, size_t sstride, unsigned char *dst, size_t dstride,
                                 int width, int height)
{
    int x0 = (blockIdx.x * blockDim.x + threadIdx.x) * PX;
    if (x0 >= width) return;
    for (long long y = blockIdx.y; y < height; y += gridDim.y) {
        const T *s = (const T *)(src + (size_t)y * sstride) + (size_t)x0 * CN;
        T *d = (T *)(dst + (size_t)y * dstride) + x0;
#pragma unroll
        for (int k = 0; k < PX; k++)
            if (x0 + k < width) d[k] = (T)tsr__cu_gray_px(__ldg(s + k * CN), __ldg(s + k * CN + 1), __ldg(s + k * CN + 2));
    }
}

/* gray/pixels: four pixels per thread, kernels for 8/16-bit and 3/4 channels. */
static tsr_status tsr__gray_fast(const tsr_image *src, tsr_image *dst, const void *params, const tsr_exec *ex)
{
    enum { PX = 4, THREADS = 256 };
    cudaStream_t st = (cudaStream_t)ex->stream;
    dim3 grid(tsr__div_up((unsigned)src->width, PX * THREADS), tsr__cu_grid_rows(src->height));
    const unsigned char *s = (const unsigned char *)src->data;
    unsigned char *d = (unsigned char *)dst->data;
    (void)params;
    if (src->depth == TSR_U8) {
        if (src->channels == 3) tsr__gray_kernel<uint8_t, 3, PX><<<grid, THREADS, 0, st>>>(s, src->stride, d, dst->stride, src->width, src->height);
        else tsr__gray_kernel<uint8_t, 4, PX><<<grid, THREADS, 0, st>>>(s, src->stride, d, dst->stride, src->width, src->height);
    } else {
        if (src->channels == 3) tsr__gray_kernel<uint16_t, 3, PX><<<grid, THREADS, 0, st>>>(s, src->stride, d, dst->stride, src->width, src->height);
        else tsr__gray_kernel<uint16_t, 4, PX><<<grid, THREADS, 0, st>>>(s, src->stride, d, dst->stride, src->width, src->height);
    }
    return TSR_CUDA_LAUNCHED("gray kernel");
}

/* gray/vec16 (8-bit RGB or RGBA): a thread converts 16 pixels of a row from CN 16-byte loads
 * (48 or 64 bytes) into one 16-byte store; the pixels kernel's 1-byte loads and stores made it
 * bound by load and store instructions (80% of the copy bandwidth on 8192x8192). Pixels past the
 * row's last whole 16 are converted one by one. */
template <int CN>
__global__ void __launch_bounds__(256) tsr__gray_vec16_kernel(const unsigned char *src, size_t sstride,
                                                              unsigned char *dst, size_t dstride, int width, int height)
{
    const int x0 = 16 * (blockIdx.x * blockDim.x + threadIdx.x);
    if (x0 >= width) return;
    for (long long y = blockIdx.y; y < height; y += gridDim.y) {
        const unsigned char *s = src + (size_t)y * sstride + (size_t)x0 * CN;
        unsigned char *d = dst + (size_t)y * dstride + x0;
        if (x0 + 16 <= width) {
            unsigned w[4 * CN];
#pragma unroll
            for (int k = 0; k < CN; k++) {
                const uint4 u = __ldg((const uint4 *)s + k);
                w[4 * k] = u.x;
                w[4 * k + 1] = u.y;
                w[4 * k + 2] = u.z;
                w[4 * k + 3] = u.w;
            }
            unsigned o[4] = {0, 0, 0, 0};
#pragma unroll
            for (int p = 0; p < 16; p++) {
                const int b = p * CN;   /* the pixel's first byte among the 16 CN */
                const unsigned r = (w[b >> 2] >> (8 * (b & 3))) & 0xffu;
                const unsigned g = (w[(b + 1) >> 2] >> (8 * ((b + 1) & 3))) & 0xffu;
                const unsigned bl = (w[(b + 2) >> 2] >> (8 * ((b + 2) & 3))) & 0xffu;
                o[p >> 2] |= tsr__cu_gray_px(r, g, bl) << (8 * (p & 3));
            }
            *(uint4 *)d = make_uint4(o[0], o[1], o[2], o[3]);
        } else {
            for (int k = 0; k < width - x0; k++) d[k] = (unsigned char)tsr__cu_gray_px(s[k * CN], s[k * CN + 1], s[k * CN + 2]);
        }
    }
}

static int tsr__gray_vec16_supports(const tsr_image *src, const void *params)
{
    return src->depth == TSR_U8 && (src->channels == 3 || src->channels == 4);
}

/* gray/vec16: see the kernel; rows not 16-byte aligned run the pixels kernel. */
static tsr_status tsr__gray_vec16(const tsr_image *src, tsr_image *dst, const void *params, const tsr_exec *ex)
{
    enum { THREADS = 256 };
    if (!tsr__cu_aligned(src->data, src->stride, 16) || !tsr__cu_aligned(dst->data, dst->stride, 16))
        return tsr__gray_fast(src, dst, params, ex);
    cudaStream_t st = (cudaStream_t)ex->stream;
    dim3 grid(tsr__div_up((unsigned)src->width, 16 * THREADS), tsr__cu_grid_rows(src->height));
    const unsigned char *s = (const unsigned char *)src->data;
    unsigned char *d = (unsigned char *)dst->data;
    if (src->channels == 3) tsr__gray_vec16_kernel<3><<<grid, THREADS, 0, st>>>(s, src->stride, d, dst->stride, src->width, src->height);
    else tsr__gray_vec16_kernel<4><<<grid, THREADS, 0, st>>>(s, src->stride, d, dst->stride, src->width, src->height);
    return TSR_CUDA_LAUNCHED("gray/vec16 kernel");
}

extern "C" const tsr_variant tsr__gray_cuda[] = {
    {"vec16", TSR_BACKEND_CUDA, "8-bit RGB or RGBA: 16 pixels per thread from 16-byte loads, one 16-byte store",
     tsr__gray_vec16, tsr__gray_vec16_supports, 1, 0, NULL},
    {"pixels", TSR_BACKEND_CUDA, "four pixels per thread, fixed-point weights, 8/16-bit RGB or RGBA",
     tsr__gray_fast, NULL, 1, 0, NULL},
    TSR_CUDA_END};
