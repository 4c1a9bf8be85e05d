/* The column and row sums: parameters, the output depth rule, input check, entry point. The
 * computing lives in the backends (src/cpu, src/cuda); tsr_run checks and dispatches. */
#include "../core/internal.h"
#include "../core/ops.h"
#include "common.h"
#include <stddef.h>

static const char *const tsr__axis_names[] = {"columns", "rows", NULL};

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
