/* Helpers shared by the operation descriptors in src/ops. */
#ifndef TSR_OPS_COMMON_H
#define TSR_OPS_COMMON_H

#include "../core/internal.h"

/* Inputs of the filters are 8- or 16-bit images with 1 to 4 channels. */
tsr_status tsr__check_8_16(const tsr_op *op, const tsr_image *src);
/* Give out the shape of src (data stays NULL). */
void tsr__same_shape(const tsr_image *src, tsr_image *out);

#endif
