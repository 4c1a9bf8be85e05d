/* The box (mean) filter: parameters, input check and the typed entry point. The computing lives
 * in the backends (src/cpu, src/cuda); tsr_run checks and dispatches. */
#include "../core/internal.h"
#include "../core/ops.h"
#include "common.h"
#include <stddef.h>

static const tsr_param tsr__box_params[] = {
    {"radius", TSR_P_INT, "window radius r: the window is (2r+1) x (2r+1)", 0, 65535, 1, NULL,
     offsetof(tsr_box_params, radius), 0},
    {"radius-x", TSR_P_INT, "horizontal radius, overriding --radius (-1: use --radius)", -1, 65535, -1, NULL,
     offsetof(tsr_box_params, radius_x), 0},
    {"radius-y", TSR_P_INT, "vertical radius, overriding --radius (-1: use --radius)", -1, 65535, -1, NULL,
     offsetof(tsr_box_params, radius_y), 0},
    {"border", TSR_P_CHOICE, "how pixels outside the image are made up", 0, 3, TSR_BORDER_REFLECT101,
     tsr__border_names, offsetof(tsr_box_params, border), 0},
    {"value", TSR_P_INT, "the outside value for --border constant", 0, 65535, 0, NULL,
     offsetof(tsr_box_params, value), 0},
};

static tsr_status tsr__box_check(const tsr_image *src, const void *params, tsr_image *out)
{
    const tsr_box_params *p = params;
    tsr_status s = tsr__check_8_16(&tsr__op_box, src);
    if (s) return s;
    if (p->border == TSR_BORDER_CONSTANT && src->depth == TSR_U8 && p->value > 255)
        return tsr__fail(TSR_E_ARG, "box: --value %d is out of range for an 8-bit image [0, 255]", p->value);
    tsr__same_shape(src, out);
    return TSR_OK;
}

tsr_op tsr__op_box = {
    "box", "mean (box) filter of any radius with OpenCV's borders",
    "Replaces each sample by the mean of the (2rx+1) x (2ry+1) window around it, rounded to nearest "
    "(equal to OpenCV's blur for odd windows up to 199x199). The cost does not grow with the radius. "
    "Borders: reflect101 (OpenCV's default, gfedcb|abcdefgh), replicate, reflect, constant.",
    tsr__box_params, (int)(sizeof tsr__box_params / sizeof tsr__box_params[0]), sizeof(tsr_box_params),
    tsr__box_check, NULL};

tsr_status tsr_box(const tsr_image *src, tsr_image *dst, const tsr_box_params *p, const tsr_exec *ex)
{
    return tsr_run(&tsr__op_box, src, dst, p, ex);
}
