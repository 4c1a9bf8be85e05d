/* The invert: the descriptor, its input check and the typed entry point. The computing lives in
 * the backends (src/cpu, src/cuda); tsr_run checks and dispatches. */
#include "../core/internal.h"
#include "../core/ops.h"
#include "common.h"
#include <stddef.h>

static tsr_status tsr__invert_check(const tsr_image *src, const void *params, tsr_image *out)
{
    tsr_status s = tsr__check_8_16(&tsr__op_invert, src);
    (void)params;
    if (s) return s;
    tsr__same_shape(src, out);
    return TSR_OK;
}

tsr_op tsr__op_invert = {
    "invert", "invert every sample (255 - x, or 65535 - x on 16 bits)",
    "Replaces every sample x by max - x, where max is 255 for 8-bit and 65535 for 16-bit images; "
    "all channels, alpha included.",
    NULL, 0, 0, tsr__invert_check, NULL};

tsr_status tsr_invert(const tsr_image *src, tsr_image *dst, const tsr_exec *ex)
{
    int none = 0;
    return tsr_run(&tsr__op_invert, src, dst, &none, ex);
}
