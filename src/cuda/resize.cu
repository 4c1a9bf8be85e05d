/* Shrinking by area averaging on the GPU, bit-exact with src/cpu/resize.c:
 *  - integer factors: exact integer cell sums; 2x2 (cn != 2) rounds (sum + 2) >> 2, other
 *    factors multiply the float sum by the float 1/(fx*fy) and round half to even;
 *  - fractional factors: OpenCV's per-axis weight tables, computed on the device by a small
 *    kernel with the host's double arithmetic step for step (explicit _rn intrinsics, so no
 *    FMA contraction), then each output accumulates in float in the reference's order.
 * The tables live in stream-ordered memory (cudaMallocAsync / cudaFreeAsync), so the variant
 * never synchronises the host. */
#include "kernels_common.cuh"

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

/* ------------------------------------------------------------------------ fractional tables */

/* One weight of a source sample in a destination cell. */
struct tsr__cu_area_entry {
    int si;         /* source index along the axis (pixels) */
    float alpha;
};

/* Where one axis's table lives: 'slots' entries reserved per destination index. */
struct tsr__cu_area_axis {
    tsr__cu_area_entry *tab;
    int *count;
    int ssize, dsize, slots;
    double scale;
};

/* Entries one destination cell can need: a partial sample, floor(scale) whole ones, a partial. */
static int tsr__area_slots(double scale) { return (int)scale + 2; }

/* The entries of destination index d, exactly as tsr__area_tab_compute in src/cpu/resize.c. */
__device__ static void tsr__area_cell(const tsr__cu_area_axis &ax, int d)
{
    const int ssize = ax.ssize;
    const double scale = ax.scale;
    tsr__cu_area_entry *out = ax.tab + (size_t)d * ax.slots;
    int k = 0;
    double fsx1 = __dmul_rn((double)d, scale), fsx2 = __dadd_rn(fsx1, scale);
    double rest = __dsub_rn((double)ssize, fsx1);
    double cell = scale < rest ? scale : rest;
    int sx1 = (int)ceil(fsx1), sx2 = (int)floor(fsx2);
    sx2 = sx2 < ssize - 1 ? sx2 : ssize - 1;
    sx1 = sx1 < sx2 ? sx1 : sx2;
    if (__dsub_rn((double)sx1, fsx1) > 1e-3) {
        out[k].si = sx1 - 1;
        out[k++].alpha = __double2float_rn(__ddiv_rn(__dsub_rn((double)sx1, fsx1), cell));
    }
    for (int sx = sx1; sx < sx2; sx++) {
        out[k].si = sx;
        out[k++].alpha = __double2float_rn(__ddiv_rn(1.0, cell));
    }
    if (__dsub_rn(fsx2, (double)sx2) > 1e-3) {
        double a = __dsub_rn(fsx2, (double)sx2) < 1. ? __dsub_rn(fsx2, (double)sx2) : 1.;
        a = a < cell ? a : cell;
        out[k].si = sx2;
        out[k++].alpha = __double2float_rn(__ddiv_rn(a, cell));
    }
    ax.count[d] = k;
}

/* Both axes' tables: threads [0, x.dsize) do x, the rest y. */
__global__ void tsr__area_tables_kernel(tsr__cu_area_axis x, tsr__cu_area_axis y)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < x.dsize) tsr__area_cell(x, (int)i);
    else if (i < (long long)x.dsize + y.dsize) tsr__area_cell(y, (int)(i - x.dsize));
}

/* One thread per output pixel: for each source row of the cell (weight beta) the row's weighted
 * sum in float (the reference's buf), accumulated as beta * buf in the reference's order. */
template <class T, int CN>
__global__ void tsr__resize_area_kernel(const unsigned char *src, size_t sstride, unsigned char *dst, size_t dstride,
                                        tsr__cu_area_axis x, tsr__cu_area_axis y, unsigned maxv)
{
    constexpr int cn = CN;
    int dx = blockIdx.x * blockDim.x + threadIdx.x;
    if (dx >= x.dsize) return;
    const tsr__cu_area_entry *xt = x.tab + (size_t)dx * x.slots;
    const int nx = x.count[dx];
    for (long long dy = blockIdx.y; dy < y.dsize; dy += gridDim.y) {
        const tsr__cu_area_entry *yt = y.tab + (size_t)dy * y.slots;
        const int ny = y.count[dy];
        float sum[4] = {0.f, 0.f, 0.f, 0.f};
        for (int j = 0; j < ny; j++) {
            const T *row = (const T *)(src + (size_t)yt[j].si * sstride);
            float beta = yt[j].alpha, buf[4] = {0.f, 0.f, 0.f, 0.f};
            for (int k = 0; k < nx; k++) {
                const T *p = row + (size_t)xt[k].si * cn;
                float alpha = xt[k].alpha;
#pragma unroll
                for (int c = 0; c < cn; c++) buf[c] = __fadd_rn(buf[c], __fmul_rn((float)__ldg(p + c), alpha));
            }
#pragma unroll
            for (int c = 0; c < cn; c++) sum[c] = j == 0 ? __fmul_rn(beta, buf[c]) : __fadd_rn(sum[c], __fmul_rn(beta, buf[c]));
        }
        T *d = (T *)(dst + (size_t)dy * dstride) + (size_t)dx * cn;
#pragma unroll
        for (int c = 0; c < cn; c++) {
            int r = __float2int_rn(sum[c]);
            d[c] = (T)(r < 0 ? 0u : (unsigned)r > maxv ? maxv : (unsigned)r);
        }
    }
}

/* Fractional factors: allocate the tables in stream-ordered memory, build them on the device,
 * queue the output kernel, and free the tables in stream order (no host synchronisation). */
static tsr_status tsr__resize_area(const tsr_image *src, tsr_image *dst, cudaStream_t st)
{
    tsr__cu_area_axis x, y;
    size_t nxe, nye, bytes;
    void *mem = NULL;
    tsr_status s;
    x.ssize = src->width;
    x.dsize = dst->width;
    x.scale = 1. / ((double)dst->width / src->width);   /* the reference's expression */
    x.slots = tsr__area_slots(x.scale);
    y.ssize = src->height;
    y.dsize = dst->height;
    y.scale = 1. / ((double)dst->height / src->height);
    y.slots = tsr__area_slots(y.scale);
    nxe = (size_t)x.dsize * x.slots;
    nye = (size_t)y.dsize * y.slots;
    bytes = (nxe + nye) * sizeof(tsr__cu_area_entry) + ((size_t)x.dsize + y.dsize) * sizeof(int);
    s = tsr__cuda_status(cudaMallocAsync(&mem, bytes, st), "cudaMallocAsync(resize tables)");
    if (s) return s;
    x.tab = (tsr__cu_area_entry *)mem;
    y.tab = x.tab + nxe;
    x.count = (int *)(y.tab + nye);
    y.count = x.count + x.dsize;
    {
        long long n = (long long)x.dsize + y.dsize;
        tsr__area_tables_kernel<<<(unsigned)((n + 255) / 256), 256, 0, st>>>(x, y);
        s = TSR_CUDA_LAUNCHED("resize table kernel");
    }
    if (!s) {
        dim3 block(128), grid(tsr__div_up((unsigned)dst->width, 128), tsr__cu_grid_rows(dst->height));
        unsigned maxv = src->depth == TSR_U8 ? 255u : 65535u;
        const unsigned char *sp = (const unsigned char *)src->data;
        unsigned char *dp = (unsigned char *)dst->data;
#define TSR_RESIZE_AREA(T, CN) \
    tsr__resize_area_kernel<T, CN><<<grid, block, 0, st>>>(sp, src->stride, dp, dst->stride, x, y, maxv)
#define TSR_RESIZE_AREA_CN(T)                   \
    switch (src->channels) {                    \
    case 1: TSR_RESIZE_AREA(T, 1); break;       \
    case 2: TSR_RESIZE_AREA(T, 2); break;       \
    case 3: TSR_RESIZE_AREA(T, 3); break;       \
    default: TSR_RESIZE_AREA(T, 4); break;      \
    }
        if (src->depth == TSR_U8) TSR_RESIZE_AREA_CN(uint8_t)
        else TSR_RESIZE_AREA_CN(uint16_t)
#undef TSR_RESIZE_AREA_CN
#undef TSR_RESIZE_AREA
        s = TSR_CUDA_LAUNCHED("resize area kernel");
    }
    {
        tsr_status f = tsr__cuda_status(cudaFreeAsync(mem, st), "cudaFreeAsync(resize tables)");
        if (!s) s = f;
    }
    return s;
}

/* resize/cells: integer factors exactly by cell sums, any other size by the weight tables. */
static tsr_status tsr__resize_cells(const tsr_image *src, tsr_image *dst, const void *params, const tsr_exec *ex)
{
    int fx, fy;
    cudaStream_t st = (cudaStream_t)ex->stream;
    if (tsr__resize_is_integer(src, (const tsr_resize_params *)params, &fx, &fy))
        return tsr__resize_int(src, dst, fx, fy, st);
    return tsr__resize_area(src, dst, st);
}

extern "C" const tsr_variant tsr__resize_cuda[] = {
    {"cells", TSR_BACKEND_CUDA,
     "one thread per output pixel: exact integer cells, or device-built fractional weight tables",
     tsr__resize_cells, NULL, 1, 0},
    TSR_CUDA_END};
