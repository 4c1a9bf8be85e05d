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

extern "C" const tsr_variant tsr__gray_cuda[] = {
    {"pixels", TSR_BACKEND_CUDA, "four pixels per thread, fixed-point weights, 8/16-bit RGB or RGBA",
     tsr__gray_fast, NULL, 1, 0, NULL},
    TSR_CUDA_END};
