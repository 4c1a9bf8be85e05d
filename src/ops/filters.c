/* Descriptors of the filter operations: parameters (which drive the CLI and its help), input
 * checks and output shapes, and the typed public entry points. The computing lives in the
 * backends (src/cpu, src/cuda); tsr_run (src/core/registry.c) checks and dispatches. */
#include "../core/internal.h"
#include "../core/ops.h"
#include <math.h>
#include <stddef.h>

const char *const tsr__border_names[] = {"reflect101", "replicate", "reflect", "constant", NULL};
static const char *const tsr__axis_names[] = {"columns", "rows", NULL};
static const char *const tsr__method_names[] = {"mean", NULL};

/* Inputs of the filters are 8- or 16-bit images. */
static tsr_status tsr__check_8_16(const tsr_op *op, const tsr_image *src)
{
    if (src->depth != TSR_U8 && src->depth != TSR_U16)
        return tsr__fail(TSR_E_UNSUPPORTED, "%s: %d-bit samples are not supported (8 or 16 bits)", op->name,
                         (int)src->depth * 8);
    if (src->channels < 1 || src->channels > 4)
        return tsr__fail(TSR_E_UNSUPPORTED, "%s: %d channels are not supported", op->name, src->channels);
    return TSR_OK;
}

static void tsr__same_shape(const tsr_image *src, tsr_image *out)
{
    out->width = src->width;
    out->height = src->height;
    out->channels = src->channels;
    out->depth = src->depth;
}

/* ---------------------------------------------------------------- invert */

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

/* ---------------------------------------------------------------- box */

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

/* ---------------------------------------------------------------- threshold */

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

/* ---------------------------------------------------------------- sums */

static const tsr_param tsr__sums_params[] = {
    {"axis", TSR_P_CHOICE, "columns: one sum per column; rows: one sum per row", 0, 1, TSR_AXIS_COLUMNS,
     tsr__axis_names, offsetof(tsr_sums_params, axis), 0},
};

tsr_depth tsr__sums_depth(const tsr_image *src, int axis)
{
    unsigned long long maxv = src->depth == TSR_U8 ? 255u : 65535u;
    unsigned long long n = axis == TSR_AXIS_COLUMNS ? (unsigned long long)src->height : (unsigned long long)src->width;
    return maxv * n <= 0xffffffffull ? TSR_U32 : TSR_U64;
}

static tsr_status tsr__sums_check(const tsr_image *src, const void *params, tsr_image *out)
{
    const tsr_sums_params *p = params;
    tsr_status s = tsr__check_8_16(&tsr__op_sums, src);
    if (s) return s;
    out->width = p->axis == TSR_AXIS_COLUMNS ? src->width : 1;
    out->height = p->axis == TSR_AXIS_COLUMNS ? 1 : src->height;
    out->channels = src->channels;
    out->depth = tsr__sums_depth(src, p->axis);
    return TSR_OK;
}

tsr_op tsr__op_sums = {
    "sums", "column or row sums into 32-bit (64-bit where needed) totals",
    "Adds each column (or row) of every channel: the result is a width x 1 (or 1 x height) image of "
    "32-bit sums, 64-bit where 32 bits could overflow. Equal to OpenCV's reduce(REDUCE_SUM).",
    tsr__sums_params, 1, sizeof(tsr_sums_params), tsr__sums_check, NULL};

tsr_status tsr_sums(const tsr_image *src, tsr_image *dst, const tsr_sums_params *p, const tsr_exec *ex)
{
    return tsr_run(&tsr__op_sums, src, dst, p, ex);
}

/* ---------------------------------------------------------------- gray */

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

/* ---------------------------------------------------------------- resize */

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
    "edges. Equal to OpenCV's resize(INTER_AREA) for integer factors, within 1 for fractional ones.",
    tsr__resize_params, 2, sizeof(tsr_resize_params), tsr__resize_check, NULL};

tsr_status tsr_resize(const tsr_image *src, tsr_image *dst, const tsr_resize_params *p, const tsr_exec *ex)
{
    return tsr_run(&tsr__op_resize, src, dst, p, ex);
}
