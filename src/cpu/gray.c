/* RGB(A) to gray on the CPU with OpenCV's fixed-point weights. OpenCV 4 uses 15-bit weights
 * (0.299, 0.587, 0.114 scaled by 2^15) for 8- and 16-bit samples alike; the older 14-bit set
 * (4899, 9617, 1868) differs from it on about one pixel in a thousand. */
#include "../core/internal.h"
#include "../core/ops.h"
#include <stdint.h>

enum { TSR_GRAY_R = 9798, TSR_GRAY_G = 19235, TSR_GRAY_B = 3735, TSR_GRAY_SHIFT = 15 };

static inline unsigned tsr__gray_px(unsigned r, unsigned g, unsigned b)
{
    return (r * TSR_GRAY_R + g * TSR_GRAY_G + b * TSR_GRAY_B + (1u << (TSR_GRAY_SHIFT - 1))) >> TSR_GRAY_SHIFT;
}

/* Reference: one pixel at a time. */
static tsr_status tsr__gray_reference(const tsr_image *src, tsr_image *dst, const void *params, const tsr_exec *ex)
{
    int cn = src->channels;
    (void)params;
    (void)ex;
    for (int y = 0; y < src->height; y++)
        for (int x = 0; x < src->width; x++) {
            if (src->depth == TSR_U8) {
                const uint8_t *p = (const uint8_t *)tsr__row(src, y) + (size_t)x * cn;
                ((uint8_t *)tsr__row(dst, y))[x] = (uint8_t)tsr__gray_px(p[0], p[1], p[2]);
            } else {
                const uint16_t *p = (const uint16_t *)tsr__row(src, y) + (size_t)x * cn;
                ((uint16_t *)tsr__row(dst, y))[x] = (uint16_t)tsr__gray_px(p[0], p[1], p[2]);
            }
        }
    return TSR_OK;
}

struct tsr__gray_job {
    const tsr_image *src;
    tsr_image *dst;
};

/* Constant channel counts let the compiler vectorise the de-interleave. */
#define TSR_GRAY_ROW(T, CN)                                                                 \
    do {                                                                                    \
        const T *restrict s = tsr__row(j->src, y);                                          \
        T *restrict d = tsr__row(j->dst, y);                                                \
        for (int x = 0; x < w; x++)                                                         \
            d[x] = (T)tsr__gray_px(s[x * CN], s[x * CN + 1], s[x * CN + 2]);               \
    } while (0)

__attribute__((target_clones("avx2", "default")))
static void tsr__gray_rows(void *ctx, int y0, int y1)
{
    const struct tsr__gray_job *j = ctx;
    int w = j->src->width;
    for (int y = y0; y < y1; y++) {
        if (j->src->depth == TSR_U8) {
            if (j->src->channels == 3) TSR_GRAY_ROW(uint8_t, 3);
            else TSR_GRAY_ROW(uint8_t, 4);
        } else {
            if (j->src->channels == 3) TSR_GRAY_ROW(uint16_t, 3);
            else TSR_GRAY_ROW(uint16_t, 4);
        }
    }
}

static tsr_status tsr__gray_fast(const tsr_image *src, tsr_image *dst, const void *params, const tsr_exec *ex)
{
    struct tsr__gray_job j = {src, dst};
    (void)params;
    tsr__parallel_for(src->height, 16384 / src->width + 1, tsr__exec_threads(ex), tsr__gray_rows, &j);
    return TSR_OK;
}

const tsr_variant tsr__gray_cpu[] = {
    {"reference", TSR_BACKEND_CPU, "one pixel at a time (the definition)", tsr__gray_reference, NULL, 0, 1},
    {"threaded", TSR_BACKEND_CPU, "rows on all threads, per-channel-count loops vectorised", tsr__gray_fast, NULL, 1,
     0},
    {NULL, 0, NULL, NULL, NULL, 0, 0}};
