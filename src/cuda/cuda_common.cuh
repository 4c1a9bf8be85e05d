/* Shared by the CUDA kernels: error checks and launch helpers. */
#ifndef TSR_CUDA_COMMON_CUH
#define TSR_CUDA_COMMON_CUH

#include <cuda_runtime.h>
#include "../core/internal.h"
#include "../core/ops.h"

/* Map a CUDA error to a tsr_status with a message naming 'what' (TSR_OK for cudaSuccess). */
tsr_status tsr__cuda_status(cudaError_t e, const char *what);

/* Check a kernel launch: configuration errors surface through cudaGetLastError. */
#define TSR_CUDA_LAUNCHED(what) tsr__cuda_status(cudaGetLastError(), what)

#define TSR_CUDA_END {NULL, TSR_BACKEND_CUDA, NULL, NULL, NULL, 0, 0, NULL}

static inline unsigned tsr__div_up(unsigned a, unsigned b) { return (a + b - 1) / b; }

#endif
