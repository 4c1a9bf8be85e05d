/* YUV4MPEG2 streams: header parsing (strict, with one-line messages), frame reading with
 * truncation reports, and writing. Samples above 8 bits are little-endian 16-bit in the file. */
#include "../core/internal.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define TSR__Y4M_MAGIC "YUV4MPEG2"
#define TSR__Y4M_MAX_LINE 1024

/* Read one '\n'-terminated line of at most cap-1 bytes (without the newline). Returns the length,
 * -1 at a clean end of file before any byte, -2 when too long or cut short. */
static int tsr__y4m_line(FILE *f, char *buf, int cap)
{
    int n = 0, c;
    while ((c = getc(f)) != EOF && c != '\n') {
        if (n + 1 >= cap) return -2;
        buf[n++] = (char)c;
    }
    buf[n] = 0;
    if (c == EOF) return n == 0 ? -1 : -2;
    return n;
}

/* Parse "A:B" with positive parts. */
static int tsr__y4m_ratio(const char *s, int *a, int *b)
{
    char *e;
    long x = strtol(s, &e, 10), y;
    if (*e != ':') return 0;
    y = strtol(e + 1, &e, 10);
    if (*e || x < 0 || y < 0 || x > 2147483647L || y > 2147483647L) return 0;
    *a = (int)x, *b = (int)y;
    return 1;
}

/* The chroma format and depth of a C tag, or 0 (with a message) when unsupported. */
static int tsr__y4m_ctag(const char *name, const char *tag, int *chroma, int *bits)
{
    static const struct { const char *p; int chroma; } fam[] = {
        {"420jpeg", TSR_CHROMA_420}, {"420paldv", TSR_CHROMA_420}, {"420mpeg2", TSR_CHROMA_420},
        {"420", TSR_CHROMA_420},     {"422", TSR_CHROMA_422},      {"444", TSR_CHROMA_444},
        {"mono", TSR_CHROMA_MONO}};
    if (!strncmp(tag, "411", 3) || !strncmp(tag, "410", 3)) {
        tsr__fail(TSR_E_UNSUPPORTED, "%s: y4m chroma C%s is not supported (4:2:0, 4:2:2, 4:4:4 and mono are)", name, tag);
        return 0;
    }
    if (!strcmp(tag, "444alpha")) {
        tsr__fail(TSR_E_UNSUPPORTED, "%s: y4m chroma C444alpha is not supported", name);
        return 0;
    }
    for (size_t i = 0; i < sizeof fam / sizeof fam[0]; i++) {
        size_t n = strlen(fam[i].p);
        const char *rest = tag + n;
        if (strncmp(tag, fam[i].p, n)) continue;
        *chroma = fam[i].chroma;
        if (!*rest) {
            *bits = 8;
            return 1;
        }
        if (i < 3) break;   /* 420jpeg etc. take no depth suffix */
        if (*rest == 'p' && fam[i].chroma != TSR_CHROMA_MONO) rest++;
        {
            char *e;
            long b = strtol(rest, &e, 10);
            if (*rest >= '0' && *rest <= '9' && !*e && b >= 8 && b <= 16) {
                *bits = (int)b;
                return 1;
            }
            if (*rest >= '0' && *rest <= '9' && !*e) {
                tsr__fail(TSR_E_UNSUPPORTED, "%s: y4m chroma C%s: %ld-bit samples (8 to 16 supported)", name, tag, b);
                return 0;
            }
        }
        break;
    }
    tsr__fail(TSR_E_UNSUPPORTED, "%s: unknown y4m chroma tag C%s", name, tag);
    return 0;
}

tsr_status tsr_y4m_read_header(FILE *f, const char *name, tsr_y4m_info *info)
{
    char line[TSR__Y4M_MAX_LINE];
    tsr_y4m_info t;
    int n = tsr__y4m_line(f, line, sizeof line), have_w = 0, have_h = 0;
    char *save = NULL, *tok;
    memset(&t, 0, sizeof t);
    t.chroma = TSR_CHROMA_420, t.bits = 8, t.interlace = 'p';
    if (n == -1) return tsr__fail(TSR_E_FORMAT, "%s: empty input (no y4m header)", name);
    if (n == -2) return tsr__fail(TSR_E_FORMAT, "%s: not a y4m stream (no header line within %d bytes)", name,
                                  TSR__Y4M_MAX_LINE);
    if (strncmp(line, TSR__Y4M_MAGIC, 9) || (line[9] != ' ' && line[9] != 0))
        return tsr__fail(TSR_E_FORMAT, "%s: not a y4m stream (missing 'YUV4MPEG2' signature)", name);
    for (tok = strtok_r(line + 9, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        const char *v = tok + 1;
        char *e;
        long l;
        switch (tok[0]) {
        case 'W':
        case 'H':
            l = strtol(v, &e, 10);
            if (!*v || *e || l <= 0 || l > 1000000)
                return tsr__fail(TSR_E_FORMAT, "%s: bad y4m %s '%s'", name, tok[0] == 'W' ? "width" : "height", tok);
            if (tok[0] == 'W') t.width = (int)l, have_w = 1;
            else t.height = (int)l, have_h = 1;
            break;
        case 'F':
            if (!tsr__y4m_ratio(v, &t.fps_num, &t.fps_den))
                return tsr__fail(TSR_E_FORMAT, "%s: bad y4m frame rate '%s'", name, tok);
            break;
        case 'A':
            if (!tsr__y4m_ratio(v, &t.par_num, &t.par_den))
                return tsr__fail(TSR_E_FORMAT, "%s: bad y4m aspect ratio '%s'", name, tok);
            break;
        case 'I':
            if (!strcmp(v, "t") || !strcmp(v, "b")) t.interlace = v[0];
            else if (!strcmp(v, "m"))
                return tsr__fail(TSR_E_UNSUPPORTED, "%s: y4m with mixed interlacing (Im, a tag per frame) is not "
                                                    "supported: mark the stream It or Ib, or deinterlace first", name);
            else if (strcmp(v, "p") && strcmp(v, "?"))
                return tsr__fail(TSR_E_FORMAT, "%s: bad y4m interlace tag '%s'", name, tok);
            break;
        case 'C':
            if (strlen(v) >= sizeof t.ctag) return tsr__fail(TSR_E_UNSUPPORTED, "%s: unknown y4m chroma tag %s", name, tok);
            if (!tsr__y4m_ctag(name, v, &t.chroma, &t.bits)) return TSR_E_UNSUPPORTED;
            strcpy(t.ctag, v);
            break;
        case 'X': {
            size_t have = strlen(t.extra), add = strlen(tok);
            if (have + add + 2 < sizeof t.extra) {   /* longer extras are dropped, not fatal */
                if (have) t.extra[have++] = ' ';
                memcpy(t.extra + have, tok, add + 1);
            }
            break;
        }
        default:
            return tsr__fail(TSR_E_FORMAT, "%s: unknown y4m header field '%s'", name, tok);
        }
    }
    if (!have_w || !have_h) return tsr__fail(TSR_E_FORMAT, "%s: y4m header without %s", name, have_w ? "H (height)" : "W (width)");
    if ((uint64_t)t.width * (uint64_t)t.height > tsr_max_pixels())
        return tsr__fail(TSR_E_SIZE, "%s: y4m frames of %dx%d exceed the limit of %llu pixels", name, t.width, t.height,
                         (unsigned long long)tsr_max_pixels());
    *info = t;
    return TSR_OK;
}

/* Whether this host stores uint16_t little-endian (then file rows are read in place). */
static int tsr__little_endian(void)
{
    const uint16_t one = 1;
    return *(const unsigned char *)&one == 1;
}

tsr_status tsr_y4m_read_frame(FILE *f, const tsr_y4m_info *info, tsr_frame *frame, int frame_number, int *eof)
{
    char line[TSR__Y4M_MAX_LINE];
    int n;
    size_t want = 0, got = 0;
    *eof = 0;
    if (frame->memory != TSR_HOST || frame->width != info->width || frame->height != info->height ||
        frame->chroma != info->chroma || (frame->bits > 8) != (info->bits > 8))
        return tsr__fail(TSR_E_ARG, "y4m: frame buffer does not match the stream");
    n = tsr__y4m_line(f, line, sizeof line);
    if (n == -1) {
        if (ferror(f)) return tsr__fail(TSR_E_IO, "frame %d: read error: %s", frame_number, strerror(errno));
        *eof = 1;
        return TSR_OK;
    }
    if (n == -2) return tsr__fail(TSR_E_FORMAT, "frame %d: truncated (bad or cut frame header)", frame_number);
    if (strncmp(line, "FRAME", 5) || (line[5] != ' ' && line[5] != 0))
        return tsr__fail(TSR_E_FORMAT, "frame %d: missing FRAME marker (stream out of sync or wrong size)", frame_number);
    for (int p = 0; p < frame->nplanes; p++) {
        int pw = tsr_frame_plane_width(info->width, info->chroma, p);
        int ph = tsr_frame_plane_height(info->height, info->chroma, p);
        size_t row = (size_t)pw * (info->bits > 8 ? 2 : 1);
        want += row * (size_t)ph;
    }
    for (int p = 0; p < frame->nplanes; p++) {
        int pw = tsr_frame_plane_width(info->width, info->chroma, p);
        int ph = tsr_frame_plane_height(info->height, info->chroma, p);
        size_t row = (size_t)pw * (info->bits > 8 ? 2 : 1);
        /* Contiguous rows (the usual case: strides are rows rounded to 64 bytes) are one read. */
        int whole = frame->stride[p] == row;
        for (int y = 0; y < ph; y += whole ? ph : 1) {
            unsigned char *d = (unsigned char *)frame->plane[p] + (size_t)y * frame->stride[p];
            size_t len = whole ? row * (size_t)ph : row, k = fread(d, 1, len, f);
            got += k;
            if (k != len) {
                if (ferror(f)) return tsr__fail(TSR_E_IO, "frame %d: read error: %s", frame_number, strerror(errno));
                return tsr__fail(TSR_E_FORMAT, "frame %d: truncated (%zu of %zu bytes)", frame_number, got, want);
            }
            if (info->bits > 8) {
                uint16_t *s = (uint16_t *)d;
                uint16_t maxv = (uint16_t)((1u << info->bits) - 1);
                size_t n = len / 2;
                if (!tsr__little_endian())
                    for (size_t x = 0; x < n; x++) s[x] = (uint16_t)(d[2 * x] | d[2 * x + 1] << 8);
                /* Out-of-range samples (e.g. 10-bit streams with stray high bits) are clamped so
                 * that every backend sees the same values. */
                if (info->bits < 16)
                    for (size_t x = 0; x < n; x++) s[x] = s[x] > maxv ? maxv : s[x];
            }
        }
    }
    frame->bits = info->bits;
    return TSR_OK;
}

/* The C tag for frames of 'bits' depth with info's chroma: the input's tag when depths agree. */
static void tsr__y4m_out_tag(const tsr_y4m_info *info, int bits, char *tag, size_t cap)
{
    const char *fam = info->chroma == TSR_CHROMA_420 ? "420" : info->chroma == TSR_CHROMA_422 ? "422"
                      : info->chroma == TSR_CHROMA_444 ? "444" : "mono";
    if (bits == info->bits && info->ctag[0]) snprintf(tag, cap, "%s", info->ctag);
    else if (bits == 8) snprintf(tag, cap, "%s", info->chroma == TSR_CHROMA_420 && !info->ctag[0] ? "420jpeg" : fam);
    else if (info->chroma == TSR_CHROMA_MONO) snprintf(tag, cap, "mono%d", bits);
    else snprintf(tag, cap, "%sp%d", fam, bits);
}

tsr_status tsr_y4m_write_header(FILE *f, const tsr_y4m_info *info, int bits)
{
    char tag[32];
    tsr__y4m_out_tag(info, bits, tag, sizeof tag);
    if (fprintf(f, "YUV4MPEG2 W%d H%d", info->width, info->height) < 0) goto fail;
    if (info->fps_den && fprintf(f, " F%d:%d", info->fps_num, info->fps_den) < 0) goto fail;
    if (fprintf(f, " I%c", info->interlace == 't' || info->interlace == 'b' ? info->interlace : 'p') < 0) goto fail;
    if (info->par_den && fprintf(f, " A%d:%d", info->par_num, info->par_den) < 0) goto fail;
    if (fprintf(f, " C%s", tag) < 0) goto fail;
    if (info->extra[0] && fprintf(f, " %s", info->extra) < 0) goto fail;
    if (fputc('\n', f) == EOF) goto fail;
    return TSR_OK;
fail:
    return tsr__fail(TSR_E_IO, "writing the y4m header: %s", strerror(errno));
}

tsr_status tsr_y4m_write_frame(FILE *f, const tsr_frame *frame)
{
    unsigned char *tmp = NULL;
    if (frame->memory != TSR_HOST) return tsr__fail(TSR_E_ARG, "y4m: frames must be in host memory to be written");
    if (fputs("FRAME\n", f) == EOF) goto fail;
    for (int p = 0; p < frame->nplanes; p++) {
        int pw = tsr_frame_plane_width(frame->width, frame->chroma, p);
        int ph = tsr_frame_plane_height(frame->height, frame->chroma, p);
        size_t row = (size_t)pw * (frame->bits > 8 ? 2 : 1);
        if (frame->stride[p] == row && (frame->bits == 8 || tsr__little_endian())) {   /* one write */
            size_t len = row * (size_t)ph;
            if (fwrite(frame->plane[p], 1, len, f) != len) goto fail;
            continue;
        }
        for (int y = 0; y < ph; y++) {
            const unsigned char *s = (const unsigned char *)frame->plane[p] + (size_t)y * frame->stride[p];
            if (frame->bits > 8 && !tsr__little_endian()) {
                if (!tmp && !(tmp = malloc(row))) return tsr__fail(TSR_E_NOMEM, "y4m: out of memory");
                for (int x = 0; x < pw; x++) {
                    uint16_t v = ((const uint16_t *)s)[x];
                    tmp[2 * x] = (unsigned char)v, tmp[2 * x + 1] = (unsigned char)(v >> 8);
                }
                s = tmp;
            }
            if (fwrite(s, 1, row, f) != row) goto fail;
        }
    }
    free(tmp);
    return TSR_OK;
fail:
    free(tmp);
    return tsr__fail(TSR_E_IO, "writing a y4m frame: %s", strerror(errno));
}
