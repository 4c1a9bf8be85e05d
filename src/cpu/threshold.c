/* Adaptive threshold (mean method) on the CPU, with OpenCV's rules: the mean is the 8-bit box
 * filter with replicated borders, and the offset is ceil(C) (binary) or floor(C) (inverse). */
#include "box_core.h"
#include "../core/ops.h"
#include <stdint.h>
#include <stdlib.h>

/* Whether src - mean passes the test for this idelta (the definition of the output). */
static inline int tsr__thresh_pass(int diff, int idelta, int inverse)
{
    return inverse ? diff <= -idelta : diff > -idelta;
}

static tsr_status tsr__threshold_reference(const tsr_image *src, tsr_image *dst, const void *params,
                                           const tsr_exec *ex)
{
    const tsr_threshold_params *p = params;
    int r = p->block / 2, idelta = tsr__threshold_idelta(p);
    tsr__box_plan pl = {src, r, r, TSR_BORDER_REPLICATE, 0};
    tsr_status s;
    (void)ex;
    /* The means go to dst first, then each is replaced by the test's outcome. */
    if ((s = tsr__box_plain(&pl, dst))) return s;
    for (int y = 0; y < src->height; y++) {
        const uint8_t *in = tsr__row(src, y);
        uint8_t *io = tsr__row(dst, y);
        for (int x = 0; x < src->width; x++)
            io[x] = tsr__thresh_pass((int)in[x] - (int)io[x], idelta, p->inverse) ? (uint8_t)p->maxval : 0;
    }
    return TSR_OK;
}

struct tsr__thresh_job {
    tsr__box_plan plan;
    const tsr_threshold_params *p;
    int idelta;
    tsr_image *dst;
    tsr_status status;
};

struct tsr__thresh_band {
    struct tsr__thresh_job *job;
    uint8_t *means;
};

static void *tsr__thresh_target(void *ctx, int y)
{
    (void)y;
    return ((struct tsr__thresh_band *)ctx)->means;
}

/* Compare a row of means with the source row in one vectorisable pass. */
__attribute__((target_clones("avx2", "default")))
static void tsr__thresh_row(void *ctx, int y, const void *means)
{
    struct tsr__thresh_job *j = ((struct tsr__thresh_band *)ctx)->job;
    const uint8_t *restrict m = means, *restrict s = tsr__row(j->plan.src, y);
    uint8_t *restrict d = tsr__row(j->dst, y);
    uint8_t maxval = (uint8_t)j->p->maxval;
    int w = j->plan.src->width, t = -j->idelta;
    if (j->p->inverse)
        for (int x = 0; x < w; x++) d[x] = ((int)s[x] - (int)m[x] <= t) ? maxval : 0;
    else
        for (int x = 0; x < w; x++) d[x] = ((int)s[x] - (int)m[x] > t) ? maxval : 0;
}

static void tsr__thresh_rows(void *ctx, int y0, int y1)
{
    struct tsr__thresh_job *j = ctx;
    struct tsr__thresh_band b = {j, malloc((size_t)j->plan.src->width)};
    tsr_status s;
    if (!b.means) {
        j->status = tsr__fail(TSR_E_NOMEM, "threshold: out of memory for a row of means");
        return;
    }
    s = tsr__box_band(&j->plan, y0, y1, tsr__thresh_target, tsr__thresh_row, &b);
    if (s) j->status = s;
    free(b.means);
}

static tsr_status tsr__threshold_fused(const tsr_image *src, tsr_image *dst, const void *params, const tsr_exec *ex)
{
    const tsr_threshold_params *p = params;
    int r = p->block / 2;
    struct tsr__thresh_job j = {{src, r, r, TSR_BORDER_REPLICATE, 0}, p, tsr__threshold_idelta(p), dst, TSR_OK};
    /* as box: under 128K pixels on the calling thread (256x256 block 3: 46 us on 2 threads, 35 on one) */
    tsr__parallel_for(src->height, 4 * r + 16, tsr__exec_threads_for(ex, (size_t)src->width * src->height, (size_t)1 << 17),
                      tsr__thresh_rows, &j);
    return j.status;
}

const tsr_variant tsr__threshold_cpu[] = {
    {"reference", TSR_BACKEND_CPU, "plain box means, then the test pixel by pixel (the definition)",
     tsr__threshold_reference, NULL, 0, 1, NULL},
    {"fused", TSR_BACKEND_CPU, "running-sum means and the test in one pass per row, threaded", tsr__threshold_fused,
     NULL, 1, 0, NULL},
    {NULL, 0, NULL, NULL, NULL, 0, 0, NULL}};
