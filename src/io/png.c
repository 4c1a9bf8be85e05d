/* PNG through libpng: decoding from memory, encoding into a buffer. libpng errors longjmp back
 * to the function that called setjmp; everything that must be released is kept in a context
 * owned by its caller, so no local of the setjmp function is needed after a longjmp. */
#include "io.h"
#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *name;
    const unsigned char *data;
    size_t size, pos;
    int truncated;            /* the reader ran out of data */
    char msg[200];            /* libpng's error message */
    tsr_status status;        /* set when the failure is ours, not libpng's (size, memory) */
    png_structp png;
    png_infop info;
    png_bytep *rows;
    tsr_image img;
    tsr__buf *out;            /* encoding */
    int out_failed;
} tsr__png_ctx;

/* libpng error callback: remember the message and jump back to the setjmp. */
static void tsr__png_error(png_structp png, png_const_charp msg)
{
    tsr__png_ctx *c = png_get_error_ptr(png);
    snprintf(c->msg, sizeof c->msg, "%s", msg ? msg : "unknown error");
    png_longjmp(png, 1);
}

/* libpng warning callback: warnings are dropped (nothing may reach stderr). */
static void tsr__png_warning(png_structp png, png_const_charp msg) { (void)png, (void)msg; }

/* libpng read callback on the in-memory file; running out of data is an error. */
static void tsr__png_read_fn(png_structp png, png_bytep out, size_t n)
{
    tsr__png_ctx *c = png_get_io_ptr(png);
    if (n > c->size - c->pos) {
        c->truncated = 1;
        png_error(png, "Read Error");
    }
    memcpy(out, c->data + c->pos, n);
    c->pos += n;
}

/* The decoding steps that may longjmp; returns TSR_OK, or an error with the message set. */
static tsr_status tsr__png_decode(tsr__png_ctx *c)
{
    png_uint_32 w, h;
    int bit_depth, color_type, channels;
    tsr_status s;
    if (setjmp(png_jmpbuf(c->png))) {
        if (c->status) return c->status;
        if (c->truncated) return tsr__fail(TSR_E_FORMAT, "%s: truncated PNG data (libpng: %s)", c->name, c->msg);
        return tsr__fail(TSR_E_FORMAT, "%s: corrupt PNG data (libpng: %s)", c->name, c->msg);
    }
    png_set_read_fn(c->png, c, tsr__png_read_fn);
    /* Size limits are ours (tsr_max_pixels), not libpng's default of 1000000 per side. */
    png_set_user_limits(c->png, PNG_UINT_31_MAX, PNG_UINT_31_MAX);
    png_read_info(c->png, c->info);
    png_get_IHDR(c->png, c->info, &w, &h, &bit_depth, &color_type, NULL, NULL, NULL);
    if ((s = tsr__check_pixels(c->name, w, h))) return s;
    /* Palette -> RGB(A), gray < 8 bits -> 8 bits, tRNS -> alpha; 16-bit stays 16-bit. */
    png_set_expand(c->png);
    if (bit_depth == 16 && tsr__little_endian()) png_set_swap(c->png);
    (void)png_set_interlace_handling(c->png);
    png_read_update_info(c->png, c->info);
    channels = png_get_channels(c->png, c->info);
    bit_depth = png_get_bit_depth(c->png, c->info);
    if (channels < 1 || channels > 4 || (bit_depth != 8 && bit_depth != 16))
        return tsr__fail(TSR_E_UNSUPPORTED, "%s: PNG with %d channels of %d bits after expansion", c->name, channels,
                         bit_depth);
    if ((s = tsr__create_named(c->name, &c->img, (int)w, (int)h, channels, bit_depth == 16 ? TSR_U16 : TSR_U8)))
        return s;
    if (png_get_rowbytes(c->png, c->info) > c->img.stride)
        return tsr__fail(TSR_E_FORMAT, "%s: PNG row size %zu does not match the image", c->name,
                         (size_t)png_get_rowbytes(c->png, c->info));
    c->rows = malloc((size_t)h * sizeof *c->rows);   /* h <= max pixels: no overflow */
    if (!c->rows) return tsr__fail(TSR_E_NOMEM, "%s: out of memory", c->name);
    for (png_uint_32 y = 0; y < h; y++) c->rows[y] = tsr__row(&c->img, (int)y);
    png_read_image(c->png, c->rows);
    png_read_end(c->png, NULL);
    return TSR_OK;
}

/* See io.h. */
tsr_status tsr__png_read(const char *name, const unsigned char *data, size_t size, tsr_image *img)
{
    tsr__png_ctx c;
    tsr_status s;
    /* Check the IHDR size before libpng reads further chunks, so that an oversized header is
     * TSR_E_SIZE whatever follows it (libpng validates the header itself later). */
    if (size >= 24 && !memcmp(data + 12, "IHDR", 4)) {
        uint32_t w = (uint32_t)data[16] << 24 | (uint32_t)data[17] << 16 | (uint32_t)data[18] << 8 | data[19];
        uint32_t h = (uint32_t)data[20] << 24 | (uint32_t)data[21] << 16 | (uint32_t)data[22] << 8 | data[23];
        if (w && h && w <= PNG_UINT_31_MAX && h <= PNG_UINT_31_MAX && (s = tsr__check_pixels(name, w, h))) return s;
        /* Decompression bomb guard under the pixel limit: deflate expands at most 1032:1, so a
         * file holds at most 1032 bytes of filtered rows per byte of its size. A 100-byte file
         * claiming 2^30 pixels is truncated, and refusing it here avoids allocating gigabytes for
         * an image that libpng would find incomplete a few rows later. */
        if (w && h && size >= 26) {
            static const int samples[7] = {1, 0, 3, 1, 2, 0, 4};   /* per colour type */
            int depth = data[24], ctype = data[25];
            if (ctype <= 6 && samples[ctype] && depth >= 1 && depth <= 16) {
                uint64_t row = ((uint64_t)w * (uint64_t)(samples[ctype] * depth) + 7) / 8 + 1;   /* + filter byte */
                if (row * h / 1032 > (uint64_t)size)
                    return tsr__fail(TSR_E_FORMAT, "%s: truncated PNG data (%zu bytes cannot hold a %ux%u image)", name,
                                     size, (unsigned)w, (unsigned)h);
            }
        }
    }
    memset(&c, 0, sizeof c);
    c.name = name;
    c.data = data;
    c.size = size;
    c.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &c, tsr__png_error, tsr__png_warning);
    if (!c.png) return tsr__fail(TSR_E_NOMEM, "%s: out of memory (libpng)", name);
    c.info = png_create_info_struct(c.png);
    if (!c.info) {
        png_destroy_read_struct(&c.png, NULL, NULL);
        return tsr__fail(TSR_E_NOMEM, "%s: out of memory (libpng)", name);
    }
    s = tsr__png_decode(&c);
    png_destroy_read_struct(&c.png, &c.info, NULL);
    free(c.rows);
    if (s) {
        tsr_image_free(&c.img);
        return s;
    }
    *img = c.img;
    return TSR_OK;
}

/* libpng write callback: append to the output buffer. */
static void tsr__png_write_fn(png_structp png, png_bytep p, size_t n)
{
    tsr__png_ctx *c = png_get_io_ptr(png);
    if (!tsr__buf_append(c->out, p, n)) {
        c->out_failed = 1;
        png_error(png, "out of memory");
    }
}

/* libpng flush callback: nothing to do for a memory buffer. */
static void tsr__png_flush_fn(png_structp png) { (void)png; }

/* The encoding steps that may longjmp; level: zlib's 1..9, 0 for its default. */
static tsr_status tsr__png_encode(tsr__png_ctx *c, const tsr_image *img, int level)
{
    static const int types[5] = {0, PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA, PNG_COLOR_TYPE_RGB,
                                 PNG_COLOR_TYPE_RGB_ALPHA};
    if (setjmp(png_jmpbuf(c->png))) {
        if (c->out_failed) return tsr__fail(TSR_E_NOMEM, "%s: out of memory encoding PNG", c->name);
        return tsr__fail(TSR_E_FORMAT, "%s: cannot encode PNG (libpng: %s)", c->name, c->msg);
    }
    png_set_write_fn(c->png, c, tsr__png_write_fn, tsr__png_flush_fn);
    if (level > 0) png_set_compression_level(c->png, level);
    png_set_IHDR(c->png, c->info, (png_uint_32)img->width, (png_uint_32)img->height, img->depth == TSR_U16 ? 16 : 8,
                 types[img->channels], PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(c->png, c->info);
    if (img->depth == TSR_U16 && tsr__little_endian()) png_set_swap(c->png);
    for (int y = 0; y < img->height; y++) png_write_row(c->png, (png_const_bytep)tsr__row(img, y));
    png_write_end(c->png, NULL);
    return TSR_OK;
}

/* See io.h. quality is zlib's level (1..9; 0: its default, 6): PNG is lossless, the level
 * only trades file size for time. */
tsr_status tsr__png_write(const char *name, const tsr_image *img, int quality, tsr__buf *out)
{
    tsr__png_ctx c;
    tsr_status s;
    memset(&c, 0, sizeof c);
    c.name = name;
    c.out = out;
    c.png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &c, tsr__png_error, tsr__png_warning);
    if (!c.png) return tsr__fail(TSR_E_NOMEM, "%s: out of memory (libpng)", name);
    c.info = png_create_info_struct(c.png);
    if (!c.info) {
        png_destroy_write_struct(&c.png, NULL);
        return tsr__fail(TSR_E_NOMEM, "%s: out of memory (libpng)", name);
    }
    s = tsr__png_encode(&c, img, quality);
    png_destroy_write_struct(&c.png, &c.info);
    return s;
}
