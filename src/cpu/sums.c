/* Column and row sums on the CPU. */
#include "../core/internal.h"
#include "../core/ops.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static inline uint64_t tsr__sample(const tsr_image *img, int x, int y, int c)
{
    const void *row = tsr__row(img, y);
    size_t i = (size_t)x * img->channels + c;
    return img->depth == TSR_U8 ? ((const uint8_t *)row)[i] : ((const uint16_t *)row)[i];
}

static inline void tsr__store_sum(tsr_image *dst, size_t i, uint64_t v)
{
    if (dst->depth == TSR_U32) ((uint32_t *)dst->data)[i] = (uint32_t)v;
    else ((uint64_t *)dst->data)[i] = v;
}

/* Reference: each sum added up sample by sample. The output is one row (columns) or one
 * column (rows); a 1 x height image has one element per row, 'stride' bytes apart. */
static tsr_status tsr__sums_reference(const tsr_image *src, tsr_image *dst, const void *params, const tsr_exec *ex)
{
    const tsr_sums_params *p = params;
    int cn = src->channels;
    (void)ex;
    if (p->axis == TSR_AXIS_COLUMNS) {
        for (int x = 0; x < src->width; x++)
            for (int c = 0; c < cn; c++) {
                uint64_t s = 0;
                for (int y = 0; y < src->height; y++) s += tsr__sample(src, x, y, c);
                tsr__store_sum(dst, (size_t)x * cn + c, s);
            }
    } else {
        for (int y = 0; y < src->height; y++)
            for (int c = 0; c < cn; c++) {
                uint64_t s = 0;
                for (int x = 0; x < src->width; x++) s += tsr__sample(src, x, y, c);
                tsr_image row = *dst;
                row.data = tsr__row(dst, y);
                tsr__store_sum(&row, (size_t)c, s);
            }
    }
    return TSR_OK;
}

/* Columns: each worker adds a band of rows into its own totals. 8-bit rows first go into
 * 16-bit partial sums (257 rows of 255 fit), which vectorise twice as wide. */
struct tsr__colsum_job {
    const tsr_image *src;
    size_t n;               /* samples per row */
    int bands;
    uint64_t *partial;      /* bands x n */
};

__attribute__((target_clones("avx2", "default")))
static void tsr__colsum_bands(void *ctx, int b0, int b1)
{
    struct tsr__colsum_job *j = ctx;
    size_t n = j->n;
    int h = j->src->height;
    uint32_t *acc = malloc(n * sizeof *acc);
    uint16_t *acc16 = malloc(n * sizeof *acc16);
    for (int b = b0; b < b1; b++) {
        int y0 = (int)((long long)h * b / j->bands), y1 = (int)((long long)h * (b + 1) / j->bands);
        uint64_t *out = j->partial + (size_t)b * n;
        if (!acc || !acc16) {   /* no scratch memory: add straight into the 64-bit totals */
            for (int y = y0; y < y1; y++)
                for (size_t i = 0; i < n; i++)
                    out[i] += j->src->depth == TSR_U8 ? ((const uint8_t *)tsr__row(j->src, y))[i]
                                                     : ((const uint16_t *)tsr__row(j->src, y))[i];
            continue;
        }
        /* 32-bit totals overflow after 65537 rows of 16-bit samples: flush every 65536 rows. */
        for (int ys = y0; ys < y1; ys += 65536) {
            int ye = ys + 65536 < y1 ? ys + 65536 : y1;
            memset(acc, 0, n * sizeof *acc);
            if (j->src->depth == TSR_U8) {
                for (int y = ys; y < ye; y += 257) {
                    int e = y + 257 < ye ? y + 257 : ye;
                    memset(acc16, 0, n * sizeof *acc16);
                    for (int r = y; r < e; r++) {
                        const uint8_t *restrict s = tsr__row(j->src, r);
                        for (size_t i = 0; i < n; i++) acc16[i] = (uint16_t)(acc16[i] + s[i]);
                    }
                    for (size_t i = 0; i < n; i++) acc[i] += acc16[i];
                }
            } else {
                for (int r = ys; r < ye; r++) {
                    const uint16_t *restrict s = tsr__row(j->src, r);
                    for (size_t i = 0; i < n; i++) acc[i] += s[i];
                }
            }
            for (size_t i = 0; i < n; i++) out[i] += acc[i];
        }
    }
    free(acc);
    free(acc16);
}

struct tsr__rowsum_job {
    const tsr_image *src;
    tsr_image *dst;
};

__attribute__((target_clones("avx2", "default")))
static void tsr__rowsum_rows(void *ctx, int y0, int y1)
{
    struct tsr__rowsum_job *j = ctx;
    int cn = j->src->channels, w = j->src->width;
    for (int y = y0; y < y1; y++) {
        uint64_t tot[4] = {0, 0, 0, 0};
        tsr_image row = *j->dst;
        row.data = tsr__row(j->dst, y);
        if (cn == 1) {
            /* Blocks of 256 samples fit 32-bit lanes whatever the depth. */
            for (int x0 = 0; x0 < w; x0 += 256) {
                int x1 = x0 + 256 < w ? x0 + 256 : w;
                uint32_t s = 0;
                if (j->src->depth == TSR_U8) {
                    const uint8_t *restrict p = tsr__row(j->src, y);
                    for (int x = x0; x < x1; x++) s += p[x];
                } else {
                    const uint16_t *restrict p = tsr__row(j->src, y);
                    for (int x = x0; x < x1; x++) s += p[x];
                }
                tot[0] += s;
            }
        } else if (cn <= 4) {
            /* The row as one run of samples into 24 lanes (24 is a multiple of 2, 3 and 4, so
             * lane k always holds channel k mod cn), which vectorise; 256 blocks of them fit
             * 32-bit lanes whatever the depth, then the lanes go to their channels' totals. */
            const size_t n = (size_t)w * cn;
            size_t i = 0;
            while (i + 24 <= n) {
                uint32_t acc[24] = {0};
                const size_t end = n - (n - i) % 24, stop = i + 24 * 256 < end ? i + 24 * 256 : end;
                if (j->src->depth == TSR_U8) {
                    const uint8_t *restrict p = tsr__row(j->src, y);
                    for (; i < stop; i += 24)
                        for (int k = 0; k < 24; k++) acc[k] += p[i + k];
                } else {
                    const uint16_t *restrict p = tsr__row(j->src, y);
                    for (; i < stop; i += 24)
                        for (int k = 0; k < 24; k++) acc[k] += p[i + k];
                }
                for (int k = 0; k < 24; k++) tot[k % cn] += acc[k];
            }
            for (; i < n; i++) tot[i % cn] += tsr__sample(j->src, (int)(i / cn), y, (int)(i % cn));
        } else {
            for (int x = 0; x < w; x++)
                for (int c = 0; c < cn; c++) tot[c] += tsr__sample(j->src, x, y, c);
        }
        for (int c = 0; c < cn; c++) tsr__store_sum(&row, (size_t)c, tot[c]);
    }
}

static tsr_status tsr__sums_fast(const tsr_image *src, tsr_image *dst, const void *params, const tsr_exec *ex)
{
    const tsr_sums_params *p = params;
    /* sources under 2 MiB on the calling thread (1024x1024 column sums: 36 us on 2 threads, 26 on
     * one; 2048x2048: 76 / 90) */
    int threads = tsr__exec_threads_for(ex, tsr_image_row_bytes(src) * (size_t)src->height, (size_t)2 << 20);
    if (p->axis == TSR_AXIS_COLUMNS) {
        struct tsr__colsum_job j;
        size_t bytes;
        j.src = src;
        j.n = (size_t)src->width * src->channels;
        j.bands = threads < src->height ? threads : src->height;
        if (!tsr__mul_size(j.n * sizeof(uint64_t), (size_t)j.bands, &bytes))
            return tsr__fail(TSR_E_SIZE, "sums: scratch size overflows");
        j.partial = calloc(1, bytes);
        if (!j.partial) return tsr__fail(TSR_E_NOMEM, "sums: out of memory for %zu bytes of partial sums", bytes);
        tsr__parallel_for(j.bands, 1, threads, tsr__colsum_bands, &j);
        for (size_t i = 0; i < j.n; i++) {
            uint64_t s = 0;
            for (int b = 0; b < j.bands; b++) s += j.partial[(size_t)b * j.n + i];
            tsr__store_sum(dst, i, s);
        }
        free(j.partial);
    } else {
        struct tsr__rowsum_job j = {src, dst};
        tsr__parallel_for(src->height, 64, threads, tsr__rowsum_rows, &j);
    }
    return TSR_OK;
}

const tsr_variant tsr__sums_cpu[] = {
    {"reference", TSR_BACKEND_CPU, "each sum added sample by sample (the definition)", tsr__sums_reference, NULL, 0,
     1, NULL},
    {"threaded", TSR_BACKEND_CPU, "row bands per thread, 16-bit partial sums for 8-bit input, vectorised",
     tsr__sums_fast, NULL, 1, 0, NULL},
    {NULL, 0, NULL, NULL, NULL, 0, 0, NULL}};
