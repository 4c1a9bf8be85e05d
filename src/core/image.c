/* Image allocation, wrapping and copies between host and device memory. */
#include "internal.h"
#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static uint64_t tsr__max_px;

uint64_t tsr_max_pixels(void)
{
    if (!tsr__max_px) {
        const char *e = getenv("TSR_MAX_PIXELS");
        unsigned long long v = e ? strtoull(e, NULL, 10) : 0;
        tsr__max_px = v ? (uint64_t)v : (uint64_t)1 << 30;
    }
    return tsr__max_px;
}

void tsr_set_max_pixels(uint64_t max_pixels) { tsr__max_px = max_pixels; }

size_t tsr_image_row_bytes(const tsr_image *img)
{
    size_t n;
    if (img->width < 0 || img->channels < 0) return 0;
    if (!tsr__mul_size((size_t)img->width, (size_t)img->channels, &n)) return 0;
    if (!tsr__mul_size(n, (size_t)img->depth, &n)) return 0;
    return n;
}

static int tsr__valid_depth(tsr_depth d) { return d == TSR_U8 || d == TSR_U16 || d == TSR_U32 || d == TSR_U64; }

/* Shape checks common to create and wrap. */
static tsr_status tsr__check_shape(int width, int height, int channels, tsr_depth depth)
{
    if (width <= 0 || height <= 0)
        return tsr__fail(TSR_E_SIZE, "image size %dx%d: width and height must be positive", width, height);
    if (channels < 1 || channels > 4)
        return tsr__fail(TSR_E_ARG, "image has %d channels: 1 to 4 are supported", channels);
    if (!tsr__valid_depth(depth))
        return tsr__fail(TSR_E_ARG, "image sample size %d bytes: 1, 2, 4 or 8 are supported", (int)depth);
    if ((uint64_t)width * (uint64_t)height > tsr_max_pixels())
        return tsr__fail(TSR_E_SIZE, "image size %dx%d is over the limit of %llu pixels (TSR_MAX_PIXELS)",
                         width, height, (unsigned long long)tsr_max_pixels());
    return TSR_OK;
}

tsr_status tsr_image_create(tsr_image *img, int width, int height, int channels, tsr_depth depth,
                            tsr_memory memory)
{
    tsr_image im = {width, height, channels, depth, 0, NULL, memory, 1};
    size_t row, total;
    tsr_status s = tsr__check_shape(width, height, channels, depth);
    if (s) return s;
    row = tsr_image_row_bytes(&im);
    if (!row) return tsr__fail(TSR_E_SIZE, "image size %dx%dx%d overflows", width, height, channels);
    if (memory == TSR_DEVICE) {
        s = tsr__cuda_alloc(&im.data, &im.stride, row, height);
        if (s) return s;
    } else if (memory == TSR_HOST) {
        size_t stride;
        if (!tsr__add_size(row, 63, &stride)) return tsr__fail(TSR_E_SIZE, "image row of %zu bytes overflows", row);
        stride &= ~(size_t)63;
        if (!tsr__mul_size(stride, (size_t)height, &total))
            return tsr__fail(TSR_E_SIZE, "image size %dx%d overflows", width, height);
        im.data = aligned_alloc(64, total);
        if (!im.data)
            return tsr__fail(TSR_E_NOMEM, "out of memory allocating a %dx%d image (%zu bytes)", width, height, total);
        im.stride = stride;
    } else {
        return tsr__fail(TSR_E_ARG, "unknown memory kind %d", (int)memory);
    }
    *img = im;
    return TSR_OK;
}

tsr_status tsr_image_wrap(tsr_image *img, int width, int height, int channels, tsr_depth depth,
                          void *data, size_t stride, tsr_memory memory)
{
    tsr_image im = {width, height, channels, depth, stride, data, memory, 0};
    size_t row;
    tsr_status s;
    if (width <= 0 || height <= 0)
        return tsr__fail(TSR_E_SIZE, "image size %dx%d: width and height must be positive", width, height);
    s = tsr__check_shape(width, height, channels, depth);
    if (s && s != TSR_E_SIZE) return s;   /* caller-owned memory: the pixel limit does not apply */
    if (!data) return tsr__fail(TSR_E_ARG, "tsr_image_wrap: data is NULL");
    row = tsr_image_row_bytes(&im);
    if (!row) return tsr__fail(TSR_E_SIZE, "image size %dx%dx%d overflows", width, height, channels);
    if (!stride) im.stride = row;
    else if (stride < row)
        return tsr__fail(TSR_E_SIZE, "stride %zu is smaller than a row of %zu bytes", stride, row);
    /* Rows are addressed as data + y * stride: the last row's end must not overflow (a huge
     * stride would otherwise wrap around to an address outside the caller's memory). */
    {
        size_t last, end;
        if (!tsr__mul_size(im.stride, (size_t)(height - 1), &last) || !tsr__add_size(last, row, &end) ||
            end > (size_t)PTRDIFF_MAX)
            return tsr__fail(TSR_E_SIZE, "image of %d rows with stride %zu overflows the address space", height,
                             im.stride);
    }
    *img = im;
    return TSR_OK;
}

void tsr_image_free(tsr_image *img)
{
    if (!img) return;
    if (img->owned && img->data) {
        if (img->memory == TSR_DEVICE) tsr__cuda_free(img->data);
        else free(img->data);
    }
    memset(img, 0, sizeof *img);
}

tsr_status tsr_image_copy(const tsr_image *src, tsr_image *dst, void *stream)
{
    size_t row = tsr_image_row_bytes(src);
    if (!src->data || !dst->data) return tsr__fail(TSR_E_ARG, "image copy: image has no data");
    if (src->width != dst->width || src->height != dst->height || src->channels != dst->channels ||
        src->depth != dst->depth)
        return tsr__fail(TSR_E_SIZE, "image copy: shapes differ (%dx%dx%d vs %dx%dx%d)", src->width,
                         src->height, src->channels, dst->width, dst->height, dst->channels);
    if (src->memory == TSR_HOST && dst->memory == TSR_HOST) {
        for (int y = 0; y < src->height; y++) memcpy(tsr__row(dst, y), tsr__row(src, y), row);
        return TSR_OK;
    }
    return tsr__cuda_copy2d(dst->data, dst->stride, dst->memory, src->data, src->stride, src->memory, row,
                            src->height, stream);
}
