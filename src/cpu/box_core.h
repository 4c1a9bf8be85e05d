/* The running-sum box filter core, shared by box and adaptive threshold on the CPU. */
#ifndef TSR_BOX_CORE_H
#define TSR_BOX_CORE_H

#include "../core/internal.h"

typedef struct tsr__box_plan {
    const tsr_image *src;
    int rx, ry, border, value;
} tsr__box_plan;

/* Where the rounded means of row y go (a row of src->width * channels samples of src's
 * depth), and what to do once they are there (NULL: nothing). */
typedef void *(*tsr__box_target_fn)(void *ctx, int y);
typedef void (*tsr__box_done_fn)(void *ctx, int y, const void *means);

/* Compute the means of rows [y0,y1) with running sums whose cost does not depend on the radius.
 * Returns TSR_E_NOMEM if scratch memory could not be had. */
tsr_status tsr__box_band(const tsr__box_plan *pl, int y0, int y1, tsr__box_target_fn target, tsr__box_done_fn done,
                         void *ctx);

/* The plain definition: each mean from the window's samples, borders by tsr__border_index. */
tsr_status tsr__box_plain(const tsr__box_plan *pl, tsr_image *dst);

/* Effective radii of box parameters. */
static inline void tsr__box_radii(const tsr_box_params *p, int *rx, int *ry)
{
    *rx = p->radius_x >= 0 ? p->radius_x : p->radius;
    *ry = p->radius_y >= 0 ? p->radius_y : p->radius;
}

#endif
