/* Device-side helpers shared by the CUDA variants: border mapping, image addressing, launch
 * geometry. Everything here is header-only so each .cu stays self-contained. */
#ifndef TSR_KERNELS_COMMON_CUH
#define TSR_KERNELS_COMMON_CUH

#include "cuda_common.cuh"
#include <stdint.h>
#include <stdlib.h>

/* OpenCV's borderInterpolate in closed form (equal to tsr__border_index for every p and len):
 * reflect modes are periodic, so one modulo replaces the folding loop. -1 means "outside" for
 * TSR_BORDER_CONSTANT. */
__host__ __device__ static inline int tsr__cu_border_index(int p, int len, int border)
{
    if ((unsigned)p < (unsigned)len) return p;
    if (border == TSR_BORDER_CONSTANT) return -1;
    if (border == TSR_BORDER_REPLICATE || len == 1) return p < 0 ? 0 : len - 1;
    /* One reflection covers everything within one image length of the edges (every window
     * of a radius below the image size): 32-bit arithmetic, no modulo. */
    if (p >= -len + 1 && (long long)p < 2LL * len - 1) {
        int delta = border == TSR_BORDER_REFLECT101;
        int q = p < 0 ? -p - 1 + delta : (int)(2LL * len - 1 - p - delta);
        if ((unsigned)q < (unsigned)len) return q;
    }
    if (border == TSR_BORDER_REFLECT101) {
        long long period = 2LL * (len - 1);
        long long m = ((long long)p % period + period) % period;
        return (int)(m < len ? m : period - m);
    } else { /* TSR_BORDER_REFLECT */
        long long period = 2LL * len;
        long long m = ((long long)p % period + period) % period;
        return (int)(m < len ? m : period - 1 - m);
    }
}

/* Pointer to row y of a pitched image (device or host address, no dereference). */
template <class T>
__host__ __device__ static inline T *tsr__cu_row(void *base, size_t stride, long long y)
{
    return (T *)((unsigned char *)base + (size_t)y * stride);
}
template <class T>
__host__ __device__ static inline const T *tsr__cu_row(const void *base, size_t stride, long long y)
{
    return (const T *)((const unsigned char *)base + (size_t)y * stride);
}

/* Whether a pointer and a stride are both multiples of 'align' bytes. */
static inline int tsr__cu_aligned(const void *p, size_t stride, size_t align)
{
    return ((uintptr_t)p % align) == 0 && stride % align == 0;
}

/* The largest grid y dimension; kernels loop over rows beyond it (heights up to 2^30). */
enum { TSR_CU_MAX_GRID_Y = 65535 };

static inline unsigned tsr__cu_grid_rows(int height)
{
    return (unsigned)(height < TSR_CU_MAX_GRID_Y ? height : TSR_CU_MAX_GRID_Y);
}

/* Number of multiprocessors of the current device (cached; 1 if unknown). */
static inline int tsr__cu_sm_count(void)
{
    static int sms = 0;
    if (!sms) {
        int dev = 0, n = 0;
        if (cudaGetDevice(&dev) == cudaSuccess &&
            cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev) == cudaSuccess && n > 0)
            sms = n;
        else {
            cudaGetLastError();
            sms = 1;
        }
    }
    return sms;
}

/* An integer from the environment (benchmark tuning knobs), or def. */
static inline int tsr__env_int(const char *name, int def)
{
    const char *e = getenv(name);
    return e && *e ? atoi(e) : def;
}

/* 16 bytes from global to shared memory: an asynchronous copy from sm_80 (completed by
 * tsr__cp_wait), a load and a store before (sm_75: the commit and wait are then no-ops).
 * Used by resize/rows and box/ring. */
__device__ static __forceinline__ void tsr__cp16(unsigned char *to, const unsigned char *from)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"((unsigned)__cvta_generic_to_shared(to)), "l"(from)
                 : "memory");
#else
    *(uint4 *)to = __ldg((const uint4 *)from);
#endif
}

/* tsr__cp16, or 16 zero bytes where copy is 0 (the source is then not read): a predicated copy
 * without a branch around it. */
__device__ static __forceinline__ void tsr__cp16_or_zero(unsigned char *to, const unsigned char *from, int copy)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"((unsigned)__cvta_generic_to_shared(to)),
                 "l"(from), "r"(copy ? 16 : 0)
                 : "memory");
#else
    *(uint4 *)to = copy ? __ldg((const uint4 *)from) : make_uint4(0, 0, 0, 0);
#endif
}

__device__ static __forceinline__ void tsr__cp_commit(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

/* Wait until at most N committed groups of this thread's copies are still in flight. */
template <int N>
__device__ static __forceinline__ void tsr__cp_wait(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

#endif
