/* JPEG through libjpeg(-turbo): decoding from memory, encoding into a buffer. libjpeg errors
 * longjmp back to the function that called setjmp; what must be released lives in a context
 * owned by its caller. Nothing is ever printed: messages are formatted with format_message. */
#include "io.h"
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>
#include <jerror.h>

typedef struct {
    struct jpeg_error_mgr pub;     /* first: libjpeg hands back a pointer to it */
    jmp_buf jump;
    char msg[JMSG_LENGTH_MAX];
    int truncated;
} tsr__jpeg_err;

typedef struct {
    struct jpeg_destination_mgr pub;
    tsr__buf *out;
    unsigned char chunk[16384];
    int failed;
} tsr__jpeg_dest;

/* libjpeg fatal error: format the message and jump back. */
static void tsr__jpeg_error_exit(j_common_ptr cinfo)
{
    tsr__jpeg_err *e = (tsr__jpeg_err *)cinfo->err;
    cinfo->err->format_message(cinfo, e->msg);
    longjmp(e->jump, 1);
}

/* libjpeg warnings and traces: silent, except that a premature end of the data (a truncated
 * file, for which libjpeg would otherwise fill the rest of the image with gray) is fatal.
 * Other corrupt-data warnings are tolerated, like most decoders do. */
static void tsr__jpeg_emit(j_common_ptr cinfo, int level)
{
    tsr__jpeg_err *e = (tsr__jpeg_err *)cinfo->err;
    if (level < 0) {
        cinfo->err->num_warnings++;
        if (cinfo->err->msg_code == JWRN_JPEG_EOF) {
            e->truncated = 1;
            cinfo->err->format_message(cinfo, e->msg);
            longjmp(e->jump, 1);
        }
    }
}

/* libjpeg message output: dropped (nothing may reach stderr). */
static void tsr__jpeg_output(j_common_ptr cinfo) { (void)cinfo; }

/* Install the error manager on e. */
static struct jpeg_error_mgr *tsr__jpeg_errors(tsr__jpeg_err *e)
{
    memset(e, 0, sizeof *e);
    jpeg_std_error(&e->pub);
    e->pub.error_exit = tsr__jpeg_error_exit;
    e->pub.emit_message = tsr__jpeg_emit;
    e->pub.output_message = tsr__jpeg_output;
    return &e->pub;
}

typedef struct {
    const char *name;
    struct jpeg_decompress_struct d;
    tsr__jpeg_err err;
    tsr_image img;
} tsr__jpeg_rctx;

/* The decoding steps that may longjmp; TSR_OK or an error with the message set. */
static tsr_status tsr__jpeg_decode(tsr__jpeg_rctx *c, const unsigned char *data, size_t size)
{
    tsr_status s;
    int channels;
    if (setjmp(c->err.jump)) {
        if (c->err.truncated) return tsr__fail(TSR_E_FORMAT, "%s: truncated JPEG data (libjpeg: %s)", c->name, c->err.msg);
        return tsr__fail(TSR_E_FORMAT, "%s: corrupt JPEG data (libjpeg: %s)", c->name, c->err.msg);
    }
    jpeg_mem_src(&c->d, data, (unsigned long)size);
    jpeg_read_header(&c->d, TRUE);
    if ((s = tsr__check_pixels(c->name, c->d.image_width, c->d.image_height))) return s;
    /* Decompression bomb guard under the pixel limit: with Huffman coding every MCU costs at
     * least one bit (a DC code), so a file of 'size' bytes covers at most 8 * size MCUs. A tiny
     * file claiming 2^30 pixels is truncated (libjpeg would fill it with gray after allocating
     * gigabytes). Arithmetic coding has no such bound and is left to the pixel limit. */
    if (!c->d.arith_code && c->d.max_h_samp_factor > 0 && c->d.max_v_samp_factor > 0) {
        uint64_t mw = 8 * (uint64_t)c->d.max_h_samp_factor, mh = 8 * (uint64_t)c->d.max_v_samp_factor;
        uint64_t mcus = ((uint64_t)c->d.image_width + mw - 1) / mw * (((uint64_t)c->d.image_height + mh - 1) / mh);
        if (mcus / 8 > (uint64_t)size)
            return tsr__fail(TSR_E_FORMAT, "%s: truncated JPEG data (%zu bytes cannot hold a %ux%u image)", c->name, size,
                             (unsigned)c->d.image_width, (unsigned)c->d.image_height);
    }
    switch (c->d.jpeg_color_space) {
    case JCS_GRAYSCALE: c->d.out_color_space = JCS_GRAYSCALE; channels = 1; break;
    case JCS_YCbCr:
    case JCS_RGB: c->d.out_color_space = JCS_RGB; channels = 3; break;
    case JCS_CMYK:
    case JCS_YCCK:
        return tsr__fail(TSR_E_UNSUPPORTED, "%s: CMYK/YCCK JPEG is not supported (only gray and colour YCbCr/RGB)",
                         c->name);
    default:
        return tsr__fail(TSR_E_UNSUPPORTED, "%s: JPEG colour space %d is not supported", c->name,
                         (int)c->d.jpeg_color_space);
    }
    jpeg_start_decompress(&c->d);
    if ((int)c->d.output_components != channels || c->d.output_width != c->d.image_width ||
        c->d.output_height != c->d.image_height)
        return tsr__fail(TSR_E_FORMAT, "%s: unexpected JPEG decoder output", c->name);
    if ((s = tsr__create_named(c->name, &c->img, (int)c->d.output_width, (int)c->d.output_height, channels, TSR_U8)))
        return s;
    while (c->d.output_scanline < c->d.output_height) {
        JSAMPROW row = tsr__row(&c->img, (int)c->d.output_scanline);
        if (jpeg_read_scanlines(&c->d, &row, 1) != 1)
            return tsr__fail(TSR_E_FORMAT, "%s: truncated JPEG data", c->name);
    }
    jpeg_finish_decompress(&c->d);
    return TSR_OK;
}

/* jpeg_create_decompress, which can only fail for lack of memory: 1 on success. */
static int tsr__jpeg_create_d(tsr__jpeg_rctx *c)
{
    if (setjmp(c->err.jump)) return 0;
    jpeg_create_decompress(&c->d);
    return 1;
}

/* See io.h. */
tsr_status tsr__jpeg_read(const char *name, const unsigned char *data, size_t size, tsr_image *img)
{
    tsr__jpeg_rctx *c = calloc(1, sizeof *c);
    tsr_status s;
    if (!c) return tsr__fail(TSR_E_NOMEM, "%s: out of memory", name);
    c->name = name;
    c->d.err = tsr__jpeg_errors(&c->err);
    if (!tsr__jpeg_create_d(c)) {
        jpeg_destroy_decompress(&c->d);
        free(c);
        return tsr__fail(TSR_E_NOMEM, "%s: out of memory (libjpeg)", name);
    }
    s = tsr__jpeg_decode(c, data, size);
    jpeg_destroy_decompress(&c->d);
    if (s) tsr_image_free(&c->img);
    else *img = c->img;
    free(c);
    return s;
}

/* Destination manager: libjpeg fills 'chunk', which is appended to the output buffer. */
static void tsr__jpeg_dest_init(j_compress_ptr cinfo)
{
    tsr__jpeg_dest *d = (tsr__jpeg_dest *)cinfo->dest;
    d->pub.next_output_byte = d->chunk;
    d->pub.free_in_buffer = sizeof d->chunk;
}

/* The chunk is full: append all of it. */
static boolean tsr__jpeg_dest_empty(j_compress_ptr cinfo)
{
    tsr__jpeg_dest *d = (tsr__jpeg_dest *)cinfo->dest;
    if (!tsr__buf_append(d->out, d->chunk, sizeof d->chunk)) {
        d->failed = 1;
        ERREXIT1(cinfo, JERR_OUT_OF_MEMORY, 0);
    }
    d->pub.next_output_byte = d->chunk;
    d->pub.free_in_buffer = sizeof d->chunk;
    return TRUE;
}

/* The end: append what is in the chunk. */
static void tsr__jpeg_dest_term(j_compress_ptr cinfo)
{
    tsr__jpeg_dest *d = (tsr__jpeg_dest *)cinfo->dest;
    if (!tsr__buf_append(d->out, d->chunk, sizeof d->chunk - d->pub.free_in_buffer)) {
        d->failed = 1;
        ERREXIT1(cinfo, JERR_OUT_OF_MEMORY, 0);
    }
}

typedef struct {
    const char *name;
    struct jpeg_compress_struct c;
    tsr__jpeg_err err;
    tsr__jpeg_dest dest;
} tsr__jpeg_wctx;

/* The encoding steps that may longjmp. */
static tsr_status tsr__jpeg_encode(tsr__jpeg_wctx *w, const tsr_image *img, int quality)
{
    if (setjmp(w->err.jump)) {
        if (w->dest.failed) return tsr__fail(TSR_E_NOMEM, "%s: out of memory encoding JPEG", w->name);
        return tsr__fail(TSR_E_FORMAT, "%s: cannot encode JPEG (libjpeg: %s)", w->name, w->err.msg);
    }
    w->dest.pub.init_destination = tsr__jpeg_dest_init;
    w->dest.pub.empty_output_buffer = tsr__jpeg_dest_empty;
    w->dest.pub.term_destination = tsr__jpeg_dest_term;
    w->c.dest = &w->dest.pub;
    w->c.image_width = (JDIMENSION)img->width;
    w->c.image_height = (JDIMENSION)img->height;
    w->c.input_components = img->channels;
    w->c.in_color_space = img->channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(&w->c);
    jpeg_set_quality(&w->c, quality, TRUE);
    jpeg_start_compress(&w->c, TRUE);
    while (w->c.next_scanline < w->c.image_height) {
        JSAMPROW row = tsr__row(img, (int)w->c.next_scanline);
        jpeg_write_scanlines(&w->c, &row, 1);
    }
    jpeg_finish_compress(&w->c);
    return TSR_OK;
}

/* jpeg_create_compress, which can only fail for lack of memory: 1 on success. */
static int tsr__jpeg_create_c(tsr__jpeg_wctx *w)
{
    if (setjmp(w->err.jump)) return 0;
    jpeg_create_compress(&w->c);
    return 1;
}

/* See io.h. 8-bit gray or RGB only; quality 1..100, 0 means 95. */
tsr_status tsr__jpeg_write(const char *name, const tsr_image *img, int quality, tsr__buf *out)
{
    tsr__jpeg_wctx *w;
    tsr_status s;
    if (img->depth != TSR_U8)
        return tsr__fail(TSR_E_UNSUPPORTED, "%s: JPEG cannot hold 16-bit samples (use PNG or PGM/PPM)", name);
    if (img->channels == 2 || img->channels == 4)
        return tsr__fail(TSR_E_UNSUPPORTED, "%s: JPEG has no alpha (the image has %d channels; use PNG)", name,
                         img->channels);
    if (img->width > JPEG_MAX_DIMENSION || img->height > JPEG_MAX_DIMENSION)
        return tsr__fail(TSR_E_SIZE, "%s: image size %dx%d is over JPEG's limit of %d per side", name, img->width,
                         img->height, (int)JPEG_MAX_DIMENSION);
    if (quality == 0) quality = 95;
    w = calloc(1, sizeof *w);
    if (!w) return tsr__fail(TSR_E_NOMEM, "%s: out of memory", name);
    w->name = name;
    w->dest.out = out;
    w->c.err = tsr__jpeg_errors(&w->err);
    if (!tsr__jpeg_create_c(w)) {
        jpeg_destroy_compress(&w->c);
        free(w);
        return tsr__fail(TSR_E_NOMEM, "%s: out of memory (libjpeg)", name);
    }
    s = tsr__jpeg_encode(w, img, quality);
    jpeg_destroy_compress(&w->c);
    free(w);
    return s;
}
