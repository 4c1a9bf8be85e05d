/* Windows BMP: reading of uncompressed 8-bit palettised, 24-bit and 32-bit files with a
 * BITMAPINFOHEADER (40 bytes), its Adobe extensions (52, 56) or a V4/V5 header (108, 124);
 * writing of 8-bit gray (with a gray palette), 24-bit and 32-bit (V4 header, BI_BITFIELDS with
 * an alpha mask). All header fields are little-endian. */
#include "io.h"
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BI_RGB = 0, BI_RLE8 = 1, BI_RLE4 = 2, BI_BITFIELDS = 3, BI_JPEG = 4, BI_PNG = 5, BI_ALPHABITFIELDS = 6 };

/* Little-endian reads from a buffer the caller has bounds-checked. */
static uint32_t tsr__le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint16_t tsr__le16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }

/* See io.h. */
tsr_status tsr__bmp_read(const char *name, const unsigned char *data, size_t size, tsr_image *img)
{
    uint32_t offset, hsize, compression, colors_used, masks[4] = {0, 0, 0, 0};
    int32_t w32, h32;
    int bpp, top_down, channels, width, height, has_masks = 0;
    uint64_t row_size64;
    size_t row_size, need;
    unsigned char pal[256][3];
    int ncolors = 0;
    tsr_image im;
    tsr_status s;

    if (size < 18 || data[0] != 'B' || data[1] != 'M')
        return tsr__fail(TSR_E_FORMAT, "%s: truncated BMP header (%zu bytes)", name, size);
    offset = tsr__le32(data + 10);
    hsize = tsr__le32(data + 14);
    if (hsize == 12 || hsize == 64)
        return tsr__fail(TSR_E_UNSUPPORTED, "%s: OS/2 BMP headers (%u bytes) are not supported", name, hsize);
    if (hsize != 40 && hsize != 52 && hsize != 56 && hsize != 108 && hsize != 124)
        return tsr__fail(TSR_E_FORMAT, "%s: corrupt BMP header (info header size %u)", name, hsize);
    if (size < 14 + (size_t)hsize)
        return tsr__fail(TSR_E_FORMAT, "%s: truncated BMP header (%zu bytes)", name, size);
    w32 = (int32_t)tsr__le32(data + 18);
    h32 = (int32_t)tsr__le32(data + 22);
    bpp = tsr__le16(data + 28);
    compression = tsr__le32(data + 30);
    colors_used = tsr__le32(data + 46);
    if (tsr__le16(data + 26) != 1)
        return tsr__fail(TSR_E_FORMAT, "%s: corrupt BMP header (%u planes)", name, tsr__le16(data + 26));
    if (w32 <= 0 || h32 == 0 || h32 == INT32_MIN)
        return tsr__fail(TSR_E_FORMAT, "%s: corrupt BMP header (image size %dx%d)", name, (int)w32, (int)h32);
    top_down = h32 < 0;
    width = w32;
    height = top_down ? -h32 : h32;
    if ((s = tsr__check_pixels(name, (uint64_t)width, (uint64_t)height))) return s;

    if (compression == BI_RLE8 || compression == BI_RLE4)
        return tsr__fail(TSR_E_UNSUPPORTED, "%s: RLE-compressed BMP is not supported", name);
    if (compression == BI_JPEG || compression == BI_PNG)
        return tsr__fail(TSR_E_UNSUPPORTED, "%s: BMP with embedded JPEG/PNG is not supported", name);
    if (compression != BI_RGB && compression != BI_BITFIELDS && compression != BI_ALPHABITFIELDS)
        return tsr__fail(TSR_E_FORMAT, "%s: corrupt BMP header (compression %u)", name, compression);
    if (bpp != 8 && bpp != 24 && bpp != 32) {
        if (bpp == 1 || bpp == 2 || bpp == 4 || bpp == 16 || bpp == 64)
            return tsr__fail(TSR_E_UNSUPPORTED, "%s: %d-bit BMP is not supported (8, 24 and 32 only)", name, bpp);
        return tsr__fail(TSR_E_FORMAT, "%s: corrupt BMP header (%d bits per pixel)", name, bpp);
    }
    if (compression != BI_RGB) {
        /* Masks: inside the header from 52 bytes on, else right after a 40-byte header. */
        size_t at = 14 + 40, n = compression == BI_ALPHABITFIELDS ? 4 : 3;
        if (bpp != 32)
            return tsr__fail(TSR_E_UNSUPPORTED, "%s: BI_BITFIELDS BMP with %d bits per pixel is not supported", name, bpp);
        if (hsize >= 56) n = 4;
        if (size < at + 4 * n) return tsr__fail(TSR_E_FORMAT, "%s: truncated BMP header (colour masks)", name);
        for (size_t i = 0; i < n; i++) masks[i] = tsr__le32(data + at + 4 * i);
        if (masks[0] != 0x00ff0000u || masks[1] != 0x0000ff00u || masks[2] != 0x000000ffu ||
            (masks[3] != 0 && masks[3] != 0xff000000u))
            return tsr__fail(TSR_E_UNSUPPORTED, "%s: BMP colour masks %08x/%08x/%08x/%08x are not supported (only 8-bit BGRA)",
                             name, masks[0], masks[1], masks[2], masks[3]);
        has_masks = 1;
    }

    row_size64 = ((uint64_t)width * (uint64_t)bpp + 31) / 32 * 4;
    if (row_size64 > SIZE_MAX || !tsr__mul_size((size_t)row_size64, (size_t)height, &need))
        return tsr__fail(TSR_E_SIZE, "%s: BMP image size overflows", name);
    row_size = (size_t)row_size64;
    if (offset < 14 + hsize || offset > size || size - offset < need) {
        if (offset < 14 + hsize || offset > size)
            return tsr__fail(TSR_E_FORMAT, "%s: corrupt BMP header (pixel data offset %u in a file of %zu bytes)", name,
                             offset, size);
        return tsr__fail(TSR_E_FORMAT, "%s: truncated BMP data (%zu of %zu pixel bytes)", name, size - offset, need);
    }

    memset(pal, 0, sizeof pal);
    if (bpp == 8) {
        /* The palette follows the info header: 4 bytes (B, G, R, 0) per entry. */
        size_t at = 14 + (size_t)hsize;
        if (colors_used > 256)
            return tsr__fail(TSR_E_FORMAT, "%s: corrupt BMP header (%u palette entries)", name, colors_used);
        ncolors = colors_used ? (int)colors_used : 256;
        if (at + 4 * (size_t)ncolors > offset)
            return tsr__fail(TSR_E_FORMAT, "%s: corrupt BMP header (the palette of %d entries overlaps the pixels)", name,
                             ncolors);
        for (int i = 0; i < ncolors; i++) {
            pal[i][0] = data[at + 4 * i + 2];
            pal[i][1] = data[at + 4 * i + 1];
            pal[i][2] = data[at + 4 * i];
        }
    }

    /* Channels: 8-bit is gray when every palette entry in use is gray; 32-bit BI_RGB is BGRX
     * unless some X byte is nonzero; with masks, an alpha mask means RGBA. */
    if (bpp == 8) {
        unsigned char used[256];
        memset(used, 0, sizeof used);
        for (int y = 0; y < height; y++) {
            const unsigned char *r = data + offset + (size_t)y * row_size;
            for (int x = 0; x < width; x++) used[r[x]] = 1;
        }
        channels = 1;
        for (int i = 0; i < 256 && channels == 1; i++)
            if (used[i] && (pal[i][0] != pal[i][1] || pal[i][1] != pal[i][2])) channels = 3;
    } else if (bpp == 24) {
        channels = 3;
    } else if (has_masks) {
        channels = masks[3] ? 4 : 3;
    } else {
        channels = 3;
        for (int y = 0; y < height && channels == 3; y++) {
            const unsigned char *r = data + offset + (size_t)y * row_size;
            for (int x = 0; x < width; x++)
                if (r[4 * x + 3]) {
                    channels = 4;
                    break;
                }
        }
    }

    if ((s = tsr__create_named(name, &im, width, height, channels, TSR_U8))) return s;
    for (int y = 0; y < height; y++) {
        const unsigned char *src = data + offset + (size_t)(top_down ? y : height - 1 - y) * row_size;
        unsigned char *dst = tsr__row(&im, y);
        if (bpp == 8) {
            if (channels == 1)
                for (int x = 0; x < width; x++) dst[x] = pal[src[x]][0];
            else
                for (int x = 0; x < width; x++) memcpy(dst + 3 * x, pal[src[x]], 3);
        } else {
            int step = bpp / 8;
            for (int x = 0; x < width; x++, src += step, dst += channels) {
                dst[0] = src[2];
                dst[1] = src[1];
                dst[2] = src[0];
                if (channels == 4) dst[3] = src[3];
            }
        }
    }
    *img = im;
    return TSR_OK;
}

/* Little-endian writes into a header being built. */
static void tsr__put32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v, p[1] = (unsigned char)(v >> 8), p[2] = (unsigned char)(v >> 16), p[3] = (unsigned char)(v >> 24);
}
static void tsr__put16(unsigned char *p, unsigned v) { p[0] = (unsigned char)v, p[1] = (unsigned char)(v >> 8); }

/* See io.h. 1 channel -> 8-bit with a gray palette, 3 -> 24-bit, 4 -> 32-bit BGRA with a V4
 * header (BI_BITFIELDS, alpha mask); bottom-up rows. 2 channels and 16-bit are unsupported. */
tsr_status tsr__bmp_write(const char *name, const tsr_image *img, int quality, tsr__buf *out)
{
    unsigned char head[14 + 108 + 1024];
    int c = img->channels, bpp = c * 8;
    size_t hsize = c == 4 ? 108 : 40, pal = c == 1 ? 1024 : 0, head_len = 14 + hsize + pal;
    uint64_t row_size = ((uint64_t)img->width * (uint64_t)bpp + 31) / 32 * 4;
    uint64_t image_size = row_size * (uint64_t)img->height, file_size = head_len + image_size;
    unsigned char *row;
    (void)quality;
    if (img->depth != TSR_U8)
        return tsr__fail(TSR_E_UNSUPPORTED, "%s: BMP cannot hold 16-bit samples (use PNG or PGM/PPM)", name);
    if (c == 2)
        return tsr__fail(TSR_E_UNSUPPORTED, "%s: BMP cannot hold gray+alpha (2 channels; use PNG)", name);
    if (file_size > 0xffffffffu || img->height > INT32_MAX)
        return tsr__fail(TSR_E_SIZE, "%s: image %dx%d is too large for a BMP file (4 GiB)", name, img->width, img->height);
    memset(head, 0, sizeof head);
    head[0] = 'B', head[1] = 'M';
    tsr__put32(head + 2, (uint32_t)file_size);
    tsr__put32(head + 10, (uint32_t)head_len);
    tsr__put32(head + 14, (uint32_t)hsize);
    tsr__put32(head + 18, (uint32_t)img->width);
    tsr__put32(head + 22, (uint32_t)img->height);   /* positive: bottom-up */
    tsr__put16(head + 26, 1);
    tsr__put16(head + 28, (unsigned)bpp);
    tsr__put32(head + 30, c == 4 ? BI_BITFIELDS : BI_RGB);
    tsr__put32(head + 34, (uint32_t)image_size);
    tsr__put32(head + 38, 2835);                    /* 72 dpi */
    tsr__put32(head + 42, 2835);
    tsr__put32(head + 46, c == 1 ? 256 : 0);
    if (c == 4) {
        tsr__put32(head + 54, 0x00ff0000u);
        tsr__put32(head + 58, 0x0000ff00u);
        tsr__put32(head + 62, 0x000000ffu);
        tsr__put32(head + 66, 0xff000000u);
        tsr__put32(head + 70, 0x73524742u);         /* LCS_sRGB */
    }
    if (c == 1)
        for (int i = 0; i < 256; i++) head[54 + 4 * i] = head[55 + 4 * i] = head[56 + 4 * i] = (unsigned char)i;
    if (!tsr__buf_append(out, head, head_len)) return tsr__fail(TSR_E_NOMEM, "%s: out of memory", name);
    row = calloc(1, (size_t)row_size);
    if (!row) return tsr__fail(TSR_E_NOMEM, "%s: out of memory", name);
    for (int y = img->height - 1; y >= 0; y--) {
        const unsigned char *src = tsr__row(img, y);
        if (c == 1) {
            memcpy(row, src, (size_t)img->width);
        } else {
            unsigned char *d = row;
            for (int x = 0; x < img->width; x++, src += c, d += c) {
                d[0] = src[2];
                d[1] = src[1];
                d[2] = src[0];
                if (c == 4) d[3] = src[3];
            }
        }
        if (!tsr__buf_append(out, row, (size_t)row_size)) {
            free(row);
            return tsr__fail(TSR_E_NOMEM, "%s: out of memory", name);
        }
    }
    free(row);
    return TSR_OK;
}
