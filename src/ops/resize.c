/* The area resize: parameters, input check, the integer-factor test and the entry point. The
 * computing lives in the backends (src/cpu, src/cuda); tsr_run checks and dispatches. */
#include "../core/internal.h"
#include "../core/ops.h"
#include "common.h"
#include <stddef.h>

static const tsr_param tsr__resize_params[] = {
    {"width", TSR_P_INT, "output width, 1 to the input's width", 1, 1 << 30, 0, NULL,
     offsetof(tsr_resize_params, width), 1},
    {"height", TSR_P_INT, "output height, 1 to the input's height", 1, 1 << 30, 0, NULL,
     offsetof(tsr_resize_params, height), 1},
};

int tsr__resize_is_integer(const tsr_image *src, const tsr_resize_params *p, int *fx, int *fy)
{
    if (src->width % p->width || src->height % p->height) return 0;
    *fx = src->width / p->width;
    *fy = src->height / p->height;
    return 1;
}

static tsr_status tsr__resize_check(const tsr_image *src, const void *params, tsr_image *out)
{
    const tsr_resize_params *p = params;
    tsr_status s = tsr__check_8_16(&tsr__op_resize, src);
    if (s) return s;
    if (p->width > src->width || p->height > src->height)
        return tsr__fail(TSR_E_UNSUPPORTED, "resize: area averaging only shrinks: %dx%d is larger than the input %dx%d",
                         p->width, p->height, src->width, src->height);
    tsr__same_shape(src, out);
    out->width = p->width;
    out->height = p->height;
    return TSR_OK;
}

tsr_op tsr__op_resize = {
    "resize", "shrink by area averaging (OpenCV's INTER_AREA)",
    "Each output pixel is the average of the input area it covers, with fractional weights at cell "
    "edges. Equal to OpenCV's resize(INTER_AREA) bit for bit, for integer and fractional factors "
    "alike (the same weights, summed in the same order in float).",
    tsr__resize_params, 2, sizeof(tsr_resize_params), tsr__resize_check, NULL};

tsr_status tsr_resize(const tsr_image *src, tsr_image *dst, const tsr_resize_params *p, const tsr_exec *ex)
{
    return tsr_run(&tsr__op_resize, src, dst, p, ex);
}
