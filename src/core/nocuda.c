/* The device layer of a build without CUDA: no device is ever available, and every device
 * request fails with a message that says why. */
#include "internal.h"

int tsr_cuda_compiled(void) { return 0; }
int tsr__cuda_available(void) { return 0; }
int tsr_cuda_available(void) { return 0; }
const char *tsr_cuda_device_name(void) { return "none (built without CUDA)"; }

tsr_status tsr__cuda_alloc(void **ptr, size_t *pitch, size_t row_bytes, int height)
{
    (void)ptr, (void)pitch, (void)row_bytes, (void)height;
    return tsr__fail(TSR_E_NO_DEVICE, "device memory requested but this build has no CUDA support");
}

void tsr__cuda_free(void *ptr) { (void)ptr; }

tsr_status tsr__cuda_copy2d(void *dst, size_t dpitch, tsr_memory dmem, const void *src, size_t spitch,
                            tsr_memory smem, size_t row_bytes, int height, void *stream)
{
    (void)dst, (void)dpitch, (void)dmem, (void)src, (void)spitch, (void)smem, (void)row_bytes, (void)height,
        (void)stream;
    return tsr__fail(TSR_E_NO_DEVICE, "device copy requested but this build has no CUDA support");
}

tsr_status tsr__cuda_sync(void *stream)
{
    (void)stream;
    return TSR_OK;   /* nothing can be queued */
}

tsr_status tsr_stream_sync(void *stream) { return tsr__cuda_sync(stream); }
