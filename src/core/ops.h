/* Operation descriptors (src/ops) and the variant tables of each backend (src/cpu, src/cuda).
 * Adding a variant: append it to its backend's table; tests and benchmarks iterate the table. */
#ifndef TSR_OPS_H
#define TSR_OPS_H

#include "tessera.h"

#ifdef __cplusplus
extern "C" {
#endif

extern tsr_op tsr__op_invert, tsr__op_box, tsr__op_threshold, tsr__op_sums, tsr__op_gray, tsr__op_resize;

/* Variant tables, each terminated by an entry whose name is NULL. */
extern const tsr_variant tsr__invert_cpu[], tsr__box_cpu[], tsr__threshold_cpu[], tsr__sums_cpu[],
    tsr__gray_cpu[], tsr__resize_cpu[];
extern const tsr_variant tsr__invert_cuda[], tsr__box_cuda[], tsr__threshold_cuda[], tsr__sums_cuda[],
    tsr__gray_cuda[], tsr__resize_cuda[];

/* Border names in tsr_border order, NULL-terminated (shared by box parameters and the CLI). */
extern const char *const tsr__border_names[];

/* Output depth of sums: U32 unless the largest possible sum overflows it. */
tsr_depth tsr__sums_depth(const tsr_image *src, int axis);

/* Rounded mean of 'sum' over an odd 'area': round half up, which for odd areas is exact
 * (sum/area never ends in .5). This is the box filter's definition. */
static inline unsigned tsr__round_mean(unsigned long long sum, unsigned long long area)
{
    return (unsigned)((sum + (area - 1) / 2) / area);
}

/* RGB to gray weights: OpenCV 4's 15-bit fixed point (0.299, 0.587, 0.114 times 2^15), for 8-
 * and 16-bit samples alike; the older 14-bit set differs on about one pixel in a thousand. */
enum { TSR_GRAY_R = 9798, TSR_GRAY_G = 19235, TSR_GRAY_B = 3735, TSR_GRAY_SHIFT = 15 };

/* Adaptive threshold's integer offset: OpenCV uses ceil(C) for binary, floor(C) for inverse. */
int tsr__threshold_idelta(const tsr_threshold_params *p);

/* Resize-by-area helpers shared by the backends. */
int tsr__resize_is_integer(const tsr_image *src, const tsr_resize_params *p, int *fx, int *fy);

#ifdef __cplusplus
}
#endif
#endif
