/* PGM and PPM (Netpbm): P5/P6 binary and P2/P3 ASCII reading, P5/P6 binary writing.
 *
 * Sample scaling: a maxval of 255 or 65535 is kept as is (8 or 16 bits). Any other maxval is
 * scaled to the full range of the sample size it fits in (maxval <= 255 -> 8 bits, else 16
 * bits) with rounding to the nearest value: out = (v * full + maxval / 2) / maxval, where full is
 * 255 or 65535. Samples larger than maxval (invalid) are clamped to maxval first. */
#include "io.h"
#include <limits.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    const unsigned char *p, *end;
} tsr__pnm_cur;

/* Skip whitespace and '#' comments (to the end of the line). */
static void tsr__pnm_skip(tsr__pnm_cur *c)
{
    while (c->p < c->end) {
        unsigned char ch = *c->p;
        if (ch == '#') {
            while (c->p < c->end && *c->p != '\n' && *c->p != '\r') c->p++;
        } else if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\v' || ch == '\f') {
            c->p++;
        } else {
            break;
        }
    }
}

/* Parse one unsigned decimal number after whitespace/comments. Returns 1 with *v set (values
 * above 'limit' are reported as limit + 1), 0 at the end of the data, -1 on a non-digit. */
static int tsr__pnm_number(tsr__pnm_cur *c, uint32_t limit, uint32_t *v)
{
    uint64_t n = 0;
    tsr__pnm_skip(c);
    if (c->p >= c->end) return 0;
    if (*c->p < '0' || *c->p > '9') return -1;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
        n = n * 10 + (uint64_t)(*c->p - '0');
        if (n > limit) n = (uint64_t)limit + 1;
        c->p++;
    }
    *v = (uint32_t)n;
    return 1;
}

/* Scale a sample already clamped to maxval to the full range of the output depth. */
static inline unsigned tsr__pnm_scale(uint32_t v, uint32_t maxval, uint32_t full)
{
    if (v > maxval) v = maxval;
    if (maxval == full) return v;
    return (unsigned)(((uint64_t)v * full + maxval / 2) / maxval);
}

/* See io.h. */
tsr_status tsr__pnm_read(const char *name, const unsigned char *data, size_t size, tsr_image *img)
{
    tsr__pnm_cur c = {data, data + size};
    const char *fields[3] = {"width", "height", "maxval"};
    uint32_t vals[3];
    int kind, channels, ascii;
    uint32_t maxval, full;
    tsr_image im;
    tsr_status s;
    size_t row_samples;
    if (size < 2 || data[0] != 'P') return tsr__fail(TSR_E_FORMAT, "%s: not a PGM/PPM file", name);
    kind = data[1];
    switch (kind) {
    case '2': case '5': channels = 1; break;
    case '3': case '6': channels = 3; break;
    case '1': case '4':
        return tsr__fail(TSR_E_UNSUPPORTED, "%s: PBM bitmaps (P%c) are not supported (only PGM/PPM)", name, kind);
    case '7':
        return tsr__fail(TSR_E_UNSUPPORTED, "%s: PAM (P7) files are not supported (only PGM/PPM)", name);
    default:
        return tsr__fail(TSR_E_FORMAT, "%s: not a PGM/PPM file", name);
    }
    ascii = kind == '2' || kind == '3';
    c.p += 2;
    if (c.p < c.end && !(*c.p == ' ' || *c.p == '\t' || *c.p == '\n' || *c.p == '\r' || *c.p == '#'))
        return tsr__fail(TSR_E_FORMAT, "%s: corrupt PGM/PPM header (no whitespace after the magic number)", name);
    for (int i = 0; i < 3; i++) {
        int r = tsr__pnm_number(&c, i < 2 ? 0x7fffffffu : 65536u, &vals[i]);
        if (r == 0) return tsr__fail(TSR_E_FORMAT, "%s: truncated PGM/PPM header (no %s)", name, fields[i]);
        if (r < 0) return tsr__fail(TSR_E_FORMAT, "%s: corrupt PGM/PPM header (%s is not a number)", name, fields[i]);
    }
    if (vals[0] == 0 || vals[1] == 0)
        return tsr__fail(TSR_E_FORMAT, "%s: corrupt PGM/PPM header (image size %ux%u)", name, vals[0], vals[1]);
    if (vals[0] > 0x7fffffffu || vals[1] > 0x7fffffffu)
        return tsr__fail(TSR_E_SIZE, "%s: PGM/PPM image size is over %u pixels per side", name, 0x7fffffffu);
    maxval = vals[2];
    if (maxval == 0 || maxval > 65535)
        return tsr__fail(TSR_E_FORMAT, "%s: corrupt PGM/PPM header (maxval %s: must be 1..65535)", name,
                         maxval ? "over 65535" : "0");
    if ((s = tsr__check_pixels(name, vals[0], vals[1]))) return s;
    full = maxval <= 255 ? 255 : 65535;
    /* Exactly one whitespace character separates the header from binary samples. */
    if (c.p >= c.end) return tsr__fail(TSR_E_FORMAT, "%s: truncated PGM/PPM data (no pixels)", name);
    if (!ascii) {
        if (!(*c.p == ' ' || *c.p == '\t' || *c.p == '\n' || *c.p == '\r'))
            return tsr__fail(TSR_E_FORMAT, "%s: corrupt PGM/PPM header (no whitespace after maxval)", name);
        c.p++;
    }
    row_samples = (size_t)vals[0] * (size_t)channels;   /* < 2^33: no overflow on 64-bit size_t */
    if (ascii) {
        /* Every sample takes at least one digit and one separator: refuse before allocating
         * when the file cannot possibly hold them. */
        size_t need;
        if (!tsr__mul_size(row_samples, vals[1], &need) || !tsr__mul_size(need, 2, &need))
            return tsr__fail(TSR_E_SIZE, "%s: PGM/PPM image size overflows", name);
        if ((size_t)(c.end - c.p) + 1 < need)
            return tsr__fail(TSR_E_FORMAT, "%s: truncated PGM/PPM data (%zu bytes cannot hold %zu samples)", name,
                             (size_t)(c.end - c.p), need / 2);
    } else {
        size_t need, bps = full == 255 ? 1 : 2;
        if (!tsr__mul_size(row_samples, bps, &need) || !tsr__mul_size(need, vals[1], &need))
            return tsr__fail(TSR_E_SIZE, "%s: PGM/PPM image size overflows", name);
        if ((size_t)(c.end - c.p) < need)
            return tsr__fail(TSR_E_FORMAT, "%s: truncated PGM/PPM data (%zu of %zu pixel bytes)", name,
                             (size_t)(c.end - c.p), need);
    }
    if ((s = tsr__create_named(name, &im, (int)vals[0], (int)vals[1], channels, full == 255 ? TSR_U8 : TSR_U16)))
        return s;
    for (int y = 0; y < im.height; y++) {
        unsigned char *r8 = tsr__row(&im, y);
        uint16_t *r16 = tsr__row(&im, y);
        if (ascii) {
            for (size_t i = 0; i < row_samples; i++) {
                uint32_t v;
                int r = tsr__pnm_number(&c, 65535, &v);
                if (r <= 0) {
                    int h = im.height;
                    tsr_image_free(&im);
                    if (r == 0)
                        return tsr__fail(TSR_E_FORMAT, "%s: truncated PGM/PPM data (row %d of %d)", name, y + 1, h);
                    return tsr__fail(TSR_E_FORMAT, "%s: corrupt PGM/PPM data (a sample is not a number)", name);
                }
                if (full == 255) r8[i] = (unsigned char)tsr__pnm_scale(v, maxval, full);
                else r16[i] = (uint16_t)tsr__pnm_scale(v, maxval, full);
            }
        } else if (full == 255) {
            if (maxval == 255) memcpy(r8, c.p, row_samples);
            else
                for (size_t i = 0; i < row_samples; i++) r8[i] = (unsigned char)tsr__pnm_scale(c.p[i], maxval, full);
            c.p += row_samples;
        } else {
            for (size_t i = 0; i < row_samples; i++)
                r16[i] = (uint16_t)tsr__pnm_scale((uint32_t)c.p[2 * i] << 8 | c.p[2 * i + 1], maxval, full);
            c.p += 2 * row_samples;
        }
    }
    *img = im;
    return TSR_OK;
}

/* See io.h. P5 for 1 channel, P6 for 3; 16-bit samples are written big-endian with maxval
 * 65535. quality is ignored. */
tsr_status tsr__pnm_write(const char *name, const tsr_image *img, int quality, tsr__buf *out)
{
    char head[64];
    int n;
    size_t row = tsr_image_row_bytes(img);
    (void)quality;
    if (img->channels != 1 && img->channels != 3)
        return tsr__fail(TSR_E_UNSUPPORTED, "%s: PGM/PPM holds 1 or 3 channels, not %d (alpha needs PNG)", name,
                         img->channels);
    n = snprintf(head, sizeof head, "P%c\n%d %d\n%d\n", img->channels == 1 ? '5' : '6', img->width, img->height,
                 img->depth == TSR_U16 ? 65535 : 255);
    if (!tsr__buf_append(out, head, (size_t)n)) return tsr__fail(TSR_E_NOMEM, "%s: out of memory", name);
    for (int y = 0; y < img->height; y++) {
        const unsigned char *src = tsr__row(img, y);
        if (img->depth == TSR_U8) {
            if (!tsr__buf_append(out, src, row)) return tsr__fail(TSR_E_NOMEM, "%s: out of memory", name);
        } else {
            unsigned char tmp[4096];
            const uint16_t *s16 = (const uint16_t *)src;
            size_t samples = row / 2;
            for (size_t i = 0; i < samples;) {
                size_t k = 0;
                for (; k < sizeof tmp && i < samples; k += 2, i++) {
                    tmp[k] = (unsigned char)(s16[i] >> 8);
                    tmp[k + 1] = (unsigned char)(s16[i] & 0xff);
                }
                if (!tsr__buf_append(out, tmp, k)) return tsr__fail(TSR_E_NOMEM, "%s: out of memory", name);
            }
        }
    }
    return TSR_OK;
}
