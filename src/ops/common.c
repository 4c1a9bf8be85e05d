/* Helpers shared by the operation descriptors, and the names the CLI shows for borders. */
#include "../core/ops.h"
#include "common.h"

const char *const tsr__border_names[] = {"reflect101", "replicate", "reflect", "constant", NULL};

tsr_status tsr__check_8_16(const tsr_op *op, const tsr_image *src)
{
    if (src->depth != TSR_U8 && src->depth != TSR_U16)
        return tsr__fail(TSR_E_UNSUPPORTED, "%s: %d-bit samples are not supported (8 or 16 bits)", op->name,
                         (int)src->depth * 8);
    if (src->channels < 1 || src->channels > 4)
        return tsr__fail(TSR_E_UNSUPPORTED, "%s: %d channels are not supported", op->name, src->channels);
    return TSR_OK;
}

void tsr__same_shape(const tsr_image *src, tsr_image *out)
{
    out->width = src->width;
    out->height = src->height;
    out->channels = src->channels;
    out->depth = src->depth;
}
