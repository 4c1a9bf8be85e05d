/* Device detection, device memory and copies. Every CUDA call is checked. */
#include "cuda_common.cuh"
#include <stdio.h>
#include <string.h>

extern "C" int tsr_cuda_compiled(void) { return 1; }

static int tsr__cuda_state = -1;   /* -1 unknown, 0 absent, 1 present */
static char tsr__cuda_name[256] = "none";
static char tsr__cuda_why[256] = "";

extern "C" int tsr__cuda_available(void)
{
    if (tsr__cuda_state < 0) {
        int n = 0;
        cudaError_t e = cudaGetDeviceCount(&n);
        if (e != cudaSuccess || n == 0) {
            snprintf(tsr__cuda_why, sizeof tsr__cuda_why, "%s",
                     e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device");
            snprintf(tsr__cuda_name, sizeof tsr__cuda_name, "none (%.200s)", tsr__cuda_why);
            cudaGetLastError();   /* clear the (non-sticky) error so later calls start clean */
            tsr__cuda_state = 0;
        } else {
            cudaDeviceProp prop;
            int dev = 0;
            cudaGetDevice(&dev);
            if (cudaGetDeviceProperties(&prop, dev) == cudaSuccess)
                snprintf(tsr__cuda_name, sizeof tsr__cuda_name, "%.200s (sm_%d%d, %.0f GiB)", prop.name, prop.major,
                         prop.minor, prop.totalGlobalMem / 1073741824.0);
            tsr__cuda_state = 1;
        }
    }
    return tsr__cuda_state;
}

extern "C" int tsr_cuda_available(void) { return tsr__cuda_available(); }
extern "C" const char *tsr_cuda_device_name(void)
{
    tsr__cuda_available();
    return tsr__cuda_name;
}

tsr_status tsr__cuda_status(cudaError_t e, const char *what)
{
    if (e == cudaSuccess) return TSR_OK;
    /* A failed runtime call also leaves its error as the thread's last error, which the next
     * launch check (cudaGetLastError) would report as its own: clear it here, where it is
     * reported. (An error that corrupts the context stays; every later call returns it.) */
    (void)cudaGetLastError();
    if (e == cudaErrorMemoryAllocation)
        return tsr__fail(TSR_E_DEVICE_NOMEM, "%s: out of device memory", what);
    if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver)
        return tsr__fail(TSR_E_NO_DEVICE, "%s: %s", what, cudaGetErrorString(e));
    return tsr__fail(TSR_E_DEVICE, "%s: %s", what, cudaGetErrorString(e));
}

extern "C" tsr_status tsr__cuda_alloc(void **ptr, size_t *pitch, size_t row_bytes, int height)
{
    void *p = NULL;
    size_t pt = 0;
    cudaError_t e;
    if (!tsr__cuda_available())
        return tsr__fail(TSR_E_NO_DEVICE, "device memory requested but no usable CUDA device (%s)", tsr__cuda_why);
    e = cudaMallocPitch(&p, &pt, row_bytes, (size_t)height);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return tsr__cuda_status(e, "cudaMallocPitch");
    }
    *ptr = p;
    *pitch = pt;
    return TSR_OK;
}

extern "C" void tsr__cuda_free(void *ptr)
{
    if (ptr) cudaFree(ptr);
}

extern "C" tsr_status tsr__cuda_copy2d(void *dst, size_t dpitch, tsr_memory dmem, const void *src, size_t spitch,
                                       tsr_memory smem, size_t row_bytes, int height, void *stream)
{
    cudaMemcpyKind kind = dmem == TSR_DEVICE ? (smem == TSR_DEVICE ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice)
                                             : (smem == TSR_DEVICE ? cudaMemcpyDeviceToHost : cudaMemcpyHostToHost);
    if (!tsr__cuda_available())
        return tsr__fail(TSR_E_NO_DEVICE, "device copy requested but no usable CUDA device (%s)", tsr__cuda_why);
    return tsr__cuda_status(cudaMemcpy2DAsync(dst, dpitch, src, spitch, row_bytes, (size_t)height, kind,
                                              (cudaStream_t)stream),
                            "cudaMemcpy2DAsync");
}

extern "C" tsr_status tsr__cuda_sync(void *stream)
{
    if (tsr__cuda_state != 1) return TSR_OK;
    return tsr__cuda_status(cudaStreamSynchronize((cudaStream_t)stream), "cudaStreamSynchronize");
}

extern "C" tsr_status tsr_stream_sync(void *stream) { return tsr__cuda_sync(stream); }
