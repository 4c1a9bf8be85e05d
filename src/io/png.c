/* PNG through libpng: decoding from memory, encoding into a buffer. libpng errors longjmp back
 * to the function that called setjmp; everything that must be released is kept in a context
 * owned by its caller, so no local of the setjmp function is needed after a longjmp. */
#include "io.h"
#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

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

/* ---------------------------------------------------------------- banded encoder
 *
 * libpng filters and deflates row after row on one thread: 110 ms at zlib's default level and
 * 18 ms at level 1 for a 672x504 RGB image, most of a 432-piece puzzle's output. This encoder
 * filters the rows in parallel (libpng's adaptive choice: per row the filter whose bytes, as
 * signed values, have the smallest absolute sum, ties to the lower filter type), then deflates
 * bands of TSR_PNG_BAND rows' bytes in parallel, each band primed with the 32 KB before it as
 * its dictionary and ended by a sync flush, the streams joined under one zlib header and the
 * combined Adler-32 (as pigz does). The band size is fixed, so the file does not depend on the
 * thread count. */
#define TSR_PNG_BAND ((size_t)256 << 10)
/* Largest filtered image (bytes) kept in memory at once; larger ones go through libpng, which
 * streams rows. */
#define TSR_PNG_BANDED_MAX ((size_t)512 << 20)

struct tsr__png_job {
    const tsr_image *img;
    size_t rowbytes, bpp;           /* bytes per row, per pixel (filter distance) */
    int level, rows_per_band, nbands, swap;
    unsigned char *filt;            /* height x (1 + rowbytes): filter type, filtered bytes */
    unsigned char **z;              /* per band: raw deflate data */
    size_t *zlen;
    uLong *adler;                   /* per band: Adler-32 of its filtered bytes */
    volatile int failed;            /* out of memory, or a zlib error */
};

/* Sum of a filtered row's bytes read as signed, in absolute value (libpng's measure). */
static inline __attribute__((always_inline)) unsigned tsr__png_sum(const unsigned char *f, size_t n)
{
    unsigned s = 0;
    for (size_t i = 0; i < n; i++) s += (unsigned)abs((signed char)f[i]);
    return s;
}

/* Rows [b, e): each row's four predicted filterings (Sub, Up, Average, Paeth) and none, the one
 * with the smallest tsr__png_sum kept (ties to the lower type). Each filter is its own simple
 * loop over bytes, which compilers vectorise. */
static inline __attribute__((always_inline)) void tsr__png_filter_body(void *ctx, int b, int e)
{
    struct tsr__png_job *j = ctx;
    size_t n = j->rowbytes, bpp = j->bpp;
    unsigned char *buf = malloc(n * 6), *cur = buf, *prev = buf + n, *f = buf + 2 * n;
    unsigned char *f1 = f, *f2 = f + n, *f3 = f + 2 * n, *f4 = f + 3 * n;
    if (!buf) {
        j->failed = 1;
        return;
    }
    for (int y = b; y < e; y++) {
        unsigned char *out = j->filt + (size_t)y * (n + 1);
        unsigned sum[5], best = 0;
        for (int k = 0; k < 2; k++) {   /* this row (k 0) and the one above (zeros above row 0) */
            unsigned char *d = k ? prev : cur;
            if (k && y == 0) {
                memset(d, 0, n);
                continue;
            }
            memcpy(d, tsr__row(j->img, y - k), n);
            if (j->swap)   /* 16-bit samples are big-endian in PNG */
                for (size_t i = 0; i + 1 < n; i += 2) {
                    unsigned char t = d[i];
                    d[i] = d[i + 1], d[i + 1] = t;
                }
        }
        for (size_t i = 0; i < bpp && i < n; i++) {   /* no left neighbour: a = c = 0 */
            f1[i] = cur[i];
            f2[i] = (unsigned char)(cur[i] - prev[i]);
            f3[i] = (unsigned char)(cur[i] - (prev[i] >> 1));
            f4[i] = (unsigned char)(cur[i] - prev[i]);   /* Paeth of (0, up, 0) is up */
        }
        for (size_t i = bpp; i < n; i++) f1[i] = (unsigned char)(cur[i] - cur[i - bpp]);
        for (size_t i = bpp; i < n; i++) f2[i] = (unsigned char)(cur[i] - prev[i]);
        for (size_t i = bpp; i < n; i++)
            f3[i] = (unsigned char)(cur[i] - ((cur[i - bpp] + prev[i]) >> 1));
        for (size_t i = bpp; i < n; i++) {
            short a = cur[i - bpp], up = prev[i], c = prev[i - bpp];
            short pa = (short)abs(up - c), pb = (short)abs(a - c), pc = (short)abs(a + up - 2 * c);
            f4[i] = (unsigned char)(cur[i] - (pa <= pb && pa <= pc ? a : pb <= pc ? up : c));
        }
        sum[0] = tsr__png_sum(cur, n);
        for (int t = 1; t < 5; t++) sum[t] = tsr__png_sum(f + (size_t)(t - 1) * n, n);
        for (unsigned t = 1; t < 5; t++)
            if (sum[t] < sum[best]) best = t;
        out[0] = (unsigned char)best;
        memcpy(out + 1, best ? f + (best - 1) * n : cur, n);
    }
    free(buf);
}

/* tsr__parallel_for callbacks of the filtering: an AVX2 build where the CPU has it (the same
 * bytes) and the baseline. */
#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("avx2"))) static void tsr__png_filter_avx2(void *ctx, int b, int e)
{
    tsr__png_filter_body(ctx, b, e);
}
#endif
static void tsr__png_filter_rows(void *ctx, int b, int e) { tsr__png_filter_body(ctx, b, e); }

/* Bands [b, e): raw deflate of each band's filtered bytes, with the 32 KB before it as the
 * dictionary; a sync flush ends every band but the last. */
static void tsr__png_deflate_bands(void *ctx, int b, int e)
{
    struct tsr__png_job *j = ctx;
    size_t row = j->rowbytes + 1, total = row * (size_t)j->img->height;
    for (int band = b; band < e && !j->failed; band++) {
        size_t at = row * (size_t)band * j->rows_per_band, len = row * (size_t)j->rows_per_band, cap;
        int last = band == j->nbands - 1, zs;
        z_stream zst;
        if (last) len = total - at;
        memset(&zst, 0, sizeof zst);
        if (deflateInit2(&zst, j->level ? j->level : Z_DEFAULT_COMPRESSION, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) !=
            Z_OK) {
            j->failed = 1;
            return;
        }
        if (band > 0) {
            size_t dict = at < 32768 ? at : 32768;
            deflateSetDictionary(&zst, j->filt + at - dict, (uInt)dict);
        }
        cap = deflateBound(&zst, (uLong)len) + 16;   /* + the sync flush's empty block */
        j->z[band] = malloc(cap);
        if (!j->z[band]) {
            deflateEnd(&zst);
            j->failed = 1;
            return;
        }
        zst.next_in = j->filt + at;
        zst.avail_in = (uInt)len;
        zst.next_out = j->z[band];
        zst.avail_out = (uInt)cap;
        zs = deflate(&zst, last ? Z_FINISH : Z_SYNC_FLUSH);
        if (zs != (last ? Z_STREAM_END : Z_OK) || zst.avail_in != 0 || zst.avail_out == 0) j->failed = 1;
        j->zlen[band] = cap - zst.avail_out;
        j->adler[band] = adler32(1L, j->filt + at, (uInt)len);
        deflateEnd(&zst);
    }
}

/* Append a chunk (length, type, data, CRC) to out; 0 when out of memory. */
static int tsr__png_chunk(tsr__buf *out, const char *type, const unsigned char *data, size_t len)
{
    unsigned char h[8] = {(unsigned char)(len >> 24), (unsigned char)(len >> 16), (unsigned char)(len >> 8),
                          (unsigned char)len, (unsigned char)type[0], (unsigned char)type[1],
                          (unsigned char)type[2], (unsigned char)type[3]}, t[4];
    uLong crc = crc32(0L, h + 4, 4);
    if (len) crc = crc32(crc, data, (uInt)len);   /* crc32 with no data returns its initial value */
    t[0] = (unsigned char)(crc >> 24), t[1] = (unsigned char)(crc >> 16), t[2] = (unsigned char)(crc >> 8);
    t[3] = (unsigned char)crc;
    return tsr__buf_append(out, h, 8) && (!len || tsr__buf_append(out, data, len)) && tsr__buf_append(out, t, 4);
}

/* The banded encoder (see above); TSR_E_NOMEM or TSR_E_FORMAT (zlib) on failure. */
static tsr_status tsr__png_write_banded(const char *name, const tsr_image *img, int level, tsr__buf *out)
{
    static const unsigned char sig[8] = {137, 80, 78, 71, 13, 10, 26, 10};
    static const unsigned char types[5] = {0, 0, 4, 2, 6};   /* grey, grey+alpha, RGB, RGBA */
    struct tsr__png_job j;
    size_t row, total;
    unsigned char ihdr[13], zh[2], tail[4];
    uLong adler = 1;
    int ok;
    memset(&j, 0, sizeof j);
    j.img = img;
    j.bpp = (size_t)img->channels * (img->depth == TSR_U16 ? 2 : 1);
    j.rowbytes = j.bpp * (size_t)img->width;
    j.level = level;
    j.swap = img->depth == TSR_U16 && tsr__little_endian();
    row = j.rowbytes + 1;
    total = row * (size_t)img->height;
    j.rows_per_band = (int)(TSR_PNG_BAND / row) > 0 ? (int)(TSR_PNG_BAND / row) : 1;
    j.nbands = (img->height + j.rows_per_band - 1) / j.rows_per_band;
    j.filt = malloc(total);
    j.z = calloc((size_t)j.nbands, sizeof *j.z);
    j.zlen = calloc((size_t)j.nbands, sizeof *j.zlen);
    j.adler = calloc((size_t)j.nbands, sizeof *j.adler);
    ok = j.filt && j.z && j.zlen && j.adler;
    if (ok) {
#if defined(__x86_64__) || defined(__i386__)
        if (__builtin_cpu_supports("avx2")) tsr__parallel_for(img->height, 16, 0, tsr__png_filter_avx2, &j);
        else
#endif
            tsr__parallel_for(img->height, 16, 0, tsr__png_filter_rows, &j);
        if (!j.failed) tsr__parallel_for(j.nbands, 1, 0, tsr__png_deflate_bands, &j);
        ok = !j.failed;
    }
    if (ok) {
        int lv = level ? level : 6, flevel = lv == 1 ? 0 : lv < 6 ? 1 : lv == 6 ? 2 : 3;
        for (int i = 0; i < 4; i++) {
            ihdr[i] = (unsigned char)((unsigned)img->width >> (24 - 8 * i));
            ihdr[4 + i] = (unsigned char)((unsigned)img->height >> (24 - 8 * i));
        }
        ihdr[8] = img->depth == TSR_U16 ? 16 : 8;
        ihdr[9] = types[img->channels];
        ihdr[10] = ihdr[11] = ihdr[12] = 0;   /* deflate, adaptive filtering, no interlace */
        zh[0] = 0x78;                         /* deflate, 32 KB window */
        zh[1] = (unsigned char)(flevel << 6);
        zh[1] = (unsigned char)(zh[1] + (31 - (zh[0] * 256 + zh[1]) % 31) % 31);
        for (int b = 0; b < j.nbands; b++) {   /* the bands' checksums, joined in order */
            size_t at = row * (size_t)b * j.rows_per_band, len = b == j.nbands - 1 ? total - at : row * j.rows_per_band;
            adler = b ? adler32_combine(adler, j.adler[b], (z_off_t)len) : j.adler[0];
        }
        for (int i = 0; i < 4; i++) tail[i] = (unsigned char)(adler >> (24 - 8 * i));
        ok = tsr__buf_append(out, sig, 8) && tsr__png_chunk(out, "IHDR", ihdr, 13) &&
             tsr__png_chunk(out, "IDAT", zh, 2);
        for (int b = 0; b < j.nbands && ok; b++) ok = tsr__png_chunk(out, "IDAT", j.z[b], j.zlen[b]);
        ok = ok && tsr__png_chunk(out, "IDAT", tail, 4) && tsr__png_chunk(out, "IEND", NULL, 0);
        if (!ok) j.failed = 2;
    }
    for (int b = 0; j.z && b < j.nbands; b++) free(j.z[b]);
    free(j.filt), free(j.z), free(j.zlen), free(j.adler);
    if (ok) return TSR_OK;
    return tsr__fail(TSR_E_NOMEM, "%s: out of memory encoding PNG", name);
}

/* See io.h. quality is zlib's level (1..9; 0: its default, 6): PNG is lossless, the level
 * only trades file size for time. Images whose filtered bytes fit TSR_PNG_BANDED_MAX are encoded
 * by the banded encoder above, larger ones by libpng. */
tsr_status tsr__png_write(const char *name, const tsr_image *img, int quality, tsr__buf *out)
{
    tsr__png_ctx c;
    tsr_status s;
    if (((size_t)img->width * img->channels * (img->depth == TSR_U16 ? 2 : 1) + 1) * (size_t)img->height <=
        TSR_PNG_BANDED_MAX)
        return tsr__png_write_banded(name, img, quality, out);
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
