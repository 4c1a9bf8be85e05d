/* The RGB(A) to gray: input check and the typed entry point. The computing lives in the backends
 * (src/cpu, src/cuda); tsr_run checks and dispatches. */
#include "../core/internal.h"
#include "../core/ops.h"
#include "common.h"
#include <stddef.h>

static tsr_status tsr__gray_check(const tsr_image *src, const void *params, tsr_image *out)
{
    tsr_status s = tsr__check_8_16(&tsr__op_gray, src);
    (void)params;
    if (s) return s;
    if (src->channels != 3 && src->channels != 4)
        return tsr__fail(TSR_E_UNSUPPORTED, "gray: needs an RGB or RGBA image (got %d channel(s))", src->channels);
    tsr__same_shape(src, out);
    out->channels = 1;
    return TSR_OK;
}

tsr_op tsr__op_gray = {
    "gray", "RGB(A) to gray with OpenCV's fixed-point weights",
    "Y = (9798 R + 19235 G + 3735 B + 16384) >> 15, the weights 0.299/0.587/0.114 in OpenCV 4's 15-bit "
    "fixed point, for 8- and 16-bit samples; alpha is dropped. Equal to OpenCV's cvtColor(RGB2GRAY).",
    NULL, 0, 0, tsr__gray_check, NULL};

tsr_status tsr_gray(const tsr_image *src, tsr_image *dst, const tsr_exec *ex)
{
    int none = 0;
    return tsr_run(&tsr__op_gray, src, dst, &none, ex);
}
