/* The adaptive threshold: parameters (OpenCV's rules for C), input check, entry point. The
 * computing lives in the backends (src/cpu, src/cuda); tsr_run checks and dispatches. */
#include "../core/internal.h"
#include "../core/ops.h"
#include "common.h"
#include <stddef.h>
#include <math.h>

static const char *const tsr__method_names[] = {"mean", NULL};

static const tsr_param tsr__threshold_params[] = {
    {"block", TSR_P_INT, "odd side of the square neighbourhood whose mean is the threshold", 3, 65535, 0, NULL,
     offsetof(tsr_threshold_params, block), 1},
    {"c", TSR_P_REAL, "constant subtracted from the mean (any real)", -1e9, 1e9, 0, NULL,
     offsetof(tsr_threshold_params, c), 1},
    {"method", TSR_P_CHOICE, "how the neighbourhood is weighted", 0, 0, TSR_THRESH_MEAN, tsr__method_names,
     offsetof(tsr_threshold_params, method), 0},
    {"inverse", TSR_P_BOOL, "maxval where src <= mean - C instead of src > mean - C", 0, 1, 0, NULL,
     offsetof(tsr_threshold_params, inverse), 0},
    {"maxval", TSR_P_INT, "value written where the test holds (0 elsewhere)", 0, 255, 255, NULL,
     offsetof(tsr_threshold_params, maxval), 0},
};

int tsr__threshold_idelta(const tsr_threshold_params *p)
{
    return p->inverse ? (int)floor(p->c) : (int)ceil(p->c);
}

static tsr_status tsr__threshold_check(const tsr_image *src, const void *params, tsr_image *out)
{
    const tsr_threshold_params *p = params;
    if (src->depth != TSR_U8 || src->channels != 1)
        return tsr__fail(TSR_E_UNSUPPORTED, "threshold: needs an 8-bit single-channel image (got %d channel(s), %d-bit); "
                         "convert with 'tessera gray' first", src->channels, (int)src->depth * 8);
    if (p->block % 2 == 0) return tsr__fail(TSR_E_ARG, "threshold: --block %d must be odd", p->block);
    tsr__same_shape(src, out);
    return TSR_OK;
}

tsr_op tsr__op_threshold = {
    "threshold", "adaptive threshold against the local mean (OpenCV's ADAPTIVE_THRESH_MEAN_C)",
    "Writes maxval where the pixel is above its block x block neighbourhood mean minus C (replicated "
    "borders), else 0; --inverse swaps the test. Equal to OpenCV's adaptiveThreshold, including its "
    "rounding of C: ceil(C) for binary, floor(C) for inverse.",
    tsr__threshold_params, (int)(sizeof tsr__threshold_params / sizeof tsr__threshold_params[0]),
    sizeof(tsr_threshold_params), tsr__threshold_check, NULL};

tsr_status tsr_threshold(const tsr_image *src, tsr_image *dst, const tsr_threshold_params *p, const tsr_exec *ex)
{
    return tsr_run(&tsr__op_threshold, src, dst, p, ex);
}
