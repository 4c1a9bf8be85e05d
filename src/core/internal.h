/* Internal helpers shared by the core, the backends and the file formats. */
#ifndef TSR_INTERNAL_H
#define TSR_INTERNAL_H

#include "tessera.h"
#include <stdarg.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define TSR_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define TSR_PRINTF(a, b)
#endif

/* Record a one-line message for tsr_last_error() and return s (for 'return tsr__fail(...)'). */
tsr_status tsr__fail(tsr_status s, const char *fmt, ...) TSR_PRINTF(2, 3);
/* Clear the thread's message (called on entry of public functions that succeed). */
void tsr__clear_error(void);

/* Overflow-checked size arithmetic: return 0 on overflow, 1 with *out set otherwise. */
int tsr__mul_size(size_t a, size_t b, size_t *out);
int tsr__add_size(size_t a, size_t b, size_t *out);

/* OpenCV's borderInterpolate: map coordinate p into [0,len) for the border mode, or -1 for
 * TSR_BORDER_CONSTANT outside the image. */
static inline int tsr__border_index(int p, int len, int border)
{
    if ((unsigned)p < (unsigned)len) return p;
    if (border == TSR_BORDER_CONSTANT) return -1;
    if (border == TSR_BORDER_REPLICATE) return p < 0 ? 0 : len - 1;
    if (len == 1) return 0;
    {
        /* Reflections repeat with a period of 2*len (reflect) or 2*(len-1) (reflect101): fold p
         * into one period in O(1). (Reflecting step by step took |p|/len steps, which made a box
         * of radius 65535 on a narrow image take seconds per row.) */
        int delta = border == TSR_BORDER_REFLECT101;
        long long period = 2 * (long long)len - 2 * delta, q = (long long)p % period;
        if (q < 0) q += period;
        return q < len ? (int)q : (int)(period - (1 - delta) - q);
    }
}

/* Pointer to row y of an image. */
static inline void *tsr__row(const tsr_image *img, int y)
{
    return (unsigned char *)img->data + (size_t)y * img->stride;
}

/* Run fn(ctx, begin, end) over [0,n) split into contiguous chunks on up to 'threads' workers
 * (0: default). Blocks until all chunks are done. Chunks are at least min_chunk long. */
typedef void (*tsr__range_fn)(void *ctx, int begin, int end);
void tsr__parallel_for(int n, int min_chunk, int threads, tsr__range_fn fn, void *ctx);
/* The thread count an exec asks for (resolves 0). */
int tsr__exec_threads(const tsr_exec *ex);
/* The same, or 1 when the job is smaller than 'serial_below' (in the caller's unit of work):
 * waking a worker costs some 8-15 us on the 2-core development machine, more than small images
 * take on one thread (C benchmark, threads 1 / 2: 256x256 threshold block 3 35 / 46 us, gray RGB
 * 9.7 / 15 us, 1024x1024 2x shrink 16 / 27 us, column sums 26 / 36 us). */
int tsr__exec_threads_for(const tsr_exec *ex, size_t work, size_t serial_below);

/* Whether v is a default of this backend (any under AUTO) that handles and prefers these
 * inputs: the registry's first choice, shared with the benchmark. */
int tsr__takes_by_default(const tsr_variant *v, tsr_backend backend, const tsr_image *src, const void *params);

/* Whether variant logging is on. */
int tsr__log_enabled(void);

/* Device side (src/cuda/device.cu, or src/core/nocuda.c in CPU-only builds). */
int tsr__cuda_available(void);
tsr_status tsr__cuda_alloc(void **ptr, size_t *pitch, size_t row_bytes, int height);
void tsr__cuda_free(void *ptr);
tsr_status tsr__cuda_copy2d(void *dst, size_t dpitch, tsr_memory dmem, const void *src, size_t spitch,
                            tsr_memory smem, size_t row_bytes, int height, void *stream);
tsr_status tsr__cuda_sync(void *stream);

/* Temporary output files (src/io/file.c): register one while it is written (slot, or -1 when
 * none is free), release it once renamed or removed. tsr__temp_remove_all unlinks the registered
 * ones and is async-signal-safe; tsr__install_signal_cleanup makes SIGINT, SIGTERM, SIGHUP and
 * SIGQUIT call it and then end the process with the signal (used by the CLI). */
int tsr__temp_register(const char *path);
void tsr__temp_release(int slot);
void tsr__temp_remove_all(void);
void tsr__install_signal_cleanup(void);
/* Whether path names an existing file that is neither a regular file nor a folder (a device
 * such as /dev/null or /dev/full, a FIFO, a socket): outputs are written into it in place, since
 * renaming a temporary file over it would replace the device or FIFO itself (as root, even in
 * /dev). */
int tsr__is_special_file(const char *path);

/* Parameter access by descriptor. */
double tsr__param_get(const tsr_param *p, const void *params);
void tsr__param_set(const tsr_param *p, void *params, double v);

#ifdef __cplusplus
}
#endif
#endif
