/* CUDA-GL interop for the viewer: a GL pixel buffer registered with CUDA (write-discard), mapped
 * each frame so that CUDA writes the frame straight into it. Every CUDA call is checked. */
#include "../core/internal.h"
#include <cuda_runtime.h>
#include <GL/gl.h>
#include <cuda_gl_interop.h>

/* Fail with TSR_E_DEVICE (or NO_DEVICE) naming the call, clearing CUDA's last error. */
static tsr_status tsr__view_cuda(cudaError_t e, const char *what)
{
    if (e == cudaSuccess) return TSR_OK;
    cudaGetLastError();
    if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver)
        return tsr__fail(TSR_E_NO_DEVICE, "%s: %s", what, cudaGetErrorString(e));
    return tsr__fail(TSR_E_DEVICE, "%s: %s", what, cudaGetErrorString(e));
}

/* Make the CUDA device that drives the current GL context current (cuda_device from the EGL
 * device when known, else the first that cudaGLGetDevices names). Call before any allocation. */
extern "C" tsr_status tsr__view_cuda_select(int cuda_device)
{
    unsigned int n = 0;
    int devs[8];
    tsr_status s;
    if (cuda_device >= 0) return tsr__view_cuda(cudaSetDevice(cuda_device), "cudaSetDevice");
    s = tsr__view_cuda(cudaGLGetDevices(&n, devs, 8, cudaGLDeviceListAll),
                       "cudaGLGetDevices (is the GL context on an NVIDIA GPU?)");
    if (s) return s;
    if (n == 0) return tsr__fail(TSR_E_DEVICE, "cudaGLGetDevices: no CUDA device drives this GL context");
    return tsr__view_cuda(cudaSetDevice(devs[0]), "cudaSetDevice");
}

/* Register GL buffer 'pbo' for CUDA writes; *res receives the handle on success. */
extern "C" tsr_status tsr__view_pbo_register(GLuint pbo, void **res)
{
    cudaGraphicsResource_t r = NULL;
    tsr_status s = tsr__view_cuda(cudaGraphicsGLRegisterBuffer(&r, pbo, cudaGraphicsRegisterFlagsWriteDiscard),
                                  "cudaGraphicsGLRegisterBuffer");
    if (!s) *res = r;
    return s;
}

/* Map the buffer on 'stream' and return its device pointer and size. */
extern "C" tsr_status tsr__view_pbo_map(void *res, void **ptr, size_t *size, void *stream)
{
    cudaGraphicsResource_t r = (cudaGraphicsResource_t)res;
    tsr_status s = tsr__view_cuda(cudaGraphicsMapResources(1, &r, (cudaStream_t)stream), "cudaGraphicsMapResources");
    if (s) return s;
    s = tsr__view_cuda(cudaGraphicsResourceGetMappedPointer(ptr, size, r), "cudaGraphicsResourceGetMappedPointer");
    if (s) cudaGraphicsUnmapResources(1, &r, (cudaStream_t)stream);
    return s;
}

/* Unmap on 'stream': GL work issued afterwards sees what CUDA wrote before. */
extern "C" tsr_status tsr__view_pbo_unmap(void *res, void *stream)
{
    cudaGraphicsResource_t r = (cudaGraphicsResource_t)res;
    return tsr__view_cuda(cudaGraphicsUnmapResources(1, &r, (cudaStream_t)stream), "cudaGraphicsUnmapResources");
}

/* Release the registration (NULL is ignored). */
extern "C" void tsr__view_pbo_unregister(void *res)
{
    if (res) tsr__view_cuda(cudaGraphicsUnregisterResource((cudaGraphicsResource_t)res),
                            "cudaGraphicsUnregisterResource");
}
