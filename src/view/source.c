/* The viewer's frames: a still image, or a y4m stream read with the library's y4m reader,
 * debanded in YCbCr and converted for display with tsr_frame_to_image. See source.h. */
#include "source.h"
#include "../core/internal.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* A new tightly packed host image (GL uploads rows without padding). */
static tsr_status tsr__source_image(tsr_image *img, int w, int h, int channels, tsr_depth depth)
{
    tsr_image t = {w, h, channels, depth, 0, NULL, TSR_HOST, 0};
    size_t bytes = tsr_image_row_bytes(&t);
    void *data = bytes && tsr__mul_size(bytes, (size_t)h, &bytes) ? malloc(bytes) : NULL;
    tsr_status s;
    if (!data) return tsr__fail(TSR_E_NOMEM, "view: out of memory for a %dx%d frame", w, h);
    if ((s = tsr_image_wrap(img, w, h, channels, depth, data, 0, TSR_HOST))) {
        free(data);
        return s;
    }
    img->owned = 1;   /* ours: tsr_image_free releases it */
    return TSR_OK;
}

/* before shows input's pixels (nothing is debanded): a view of them that owns nothing. */
static void tsr__source_share(tsr__source *src)
{
    src->before = src->input;
    src->before.owned = 0;
}

/* Copy o's deband options, if any, checked for samples of 'bits'. */
static tsr_status tsr__source_options(tsr__source *src, const tsr_view_options *o, int bits)
{
    src->view = o->frame_view;
    if (!o->deband) return TSR_OK;
    src->do_deband = 1;
    src->deband = *o->deband;
    return tsr_deband_check(&src->deband, bits);
}

tsr_status tsr__source_open_still(tsr__source *src, const tsr_image *img, const tsr_view_options *o)
{
    int bits = img->depth == TSR_U16 ? 16 : 8, out_bits;
    tsr_image *copy;
    tsr_status s;
    memset(src, 0, sizeof *src);
    src->still = img;
    src->data_at = -1;
    if ((s = tsr__source_options(src, o, bits))) return s;
    out_bits = src->deband.output_depth ? src->deband.output_depth : bits;
    copy = src->do_deband ? &src->before : &src->input;
    s = tsr__source_image(copy, img->width, img->height, img->channels, img->depth);
    if (!s) s = tsr_image_copy(img, copy, NULL);
    if (!s && src->do_deband)
        s = tsr__source_image(&src->input, img->width, img->height, img->channels, out_bits > 8 ? TSR_U16 : TSR_U8);
    if (s) {
        tsr__source_close(src);
        return s;
    }
    if (!src->do_deband) tsr__source_share(src);
    return TSR_OK;
}

/* Fail with s, the stream's name before the reader's message (which names the frame). */
static tsr_status tsr__source_named(const tsr__source *src, tsr_status s)
{
    char msg[512];
    snprintf(msg, sizeof msg, "%s", tsr_last_error());
    return tsr__fail(s, "%s: %s", src->name, msg);
}

tsr_status tsr__source_open_stream(tsr__source *src, FILE *f, const char *name, const tsr_view_options *o)
{
    tsr_y4m_info *in = &src->info;
    int eof = 0, ch;
    tsr_status s;
    memset(src, 0, sizeof *src);
    src->f = f;
    src->name = name;
    src->data_at = -1;
    if ((s = tsr_y4m_read_header(f, name, in))) return s;
    if ((s = tsr__source_options(src, o, in->bits))) return s;
    if (o->loop && ((src->data_at = ftell(f)) < 0 || fseek(f, src->data_at, SEEK_SET)))
        return tsr__fail(TSR_E_ARG, "view: --loop needs a file that can be read again, and %s cannot (%s)", name,
                         strerror(errno));
    ch = src->view == TSR_FRAME_VIEW_LUMA || in->chroma == TSR_CHROMA_MONO ? 1 : 3;
    s = tsr_frame_create(&src->raw, in->width, in->height, in->chroma, in->bits, TSR_HOST);
    if (!s && src->do_deband)
        s = tsr_frame_create(&src->debanded, in->width, in->height, in->chroma,
                             src->deband.output_depth ? src->deband.output_depth : in->bits, TSR_HOST);
    if (!s) s = tsr__source_image(&src->input, in->width, in->height, ch, TSR_U8);
    if (!s && src->do_deband) s = tsr__source_image(&src->before, in->width, in->height, ch, TSR_U8);
    if (!s && !src->do_deband) tsr__source_share(src);
    if (!s) s = tsr__source_read(src, &eof);
    if (!s && eof) s = tsr__fail(TSR_E_FORMAT, "%s: the y4m stream has no frames", name);
    if (s) tsr__source_close(src);
    return s;
}

tsr_status tsr__source_read(tsr__source *src, int *eof)
{
    tsr_status s = tsr_y4m_read_frame(src->f, &src->info, &src->raw, src->next, eof);
    if (s) return tsr__source_named(src, s);
    if (!*eof) {
        src->next++;
        src->loaded = 0;
    }
    return TSR_OK;
}

tsr_status tsr__source_rewind(tsr__source *src)
{
    if (src->data_at < 0 || fseek(src->f, src->data_at, SEEK_SET))
        return tsr__fail(TSR_E_IO, "%s: cannot go back to the first frame: %s", src->name,
                         src->data_at < 0 ? "not opened for --loop" : strerror(errno));
    src->next = 0;
    return TSR_OK;
}

/* Bytes of a frame's samples. */
static unsigned long long tsr__source_frame_bytes(const tsr_frame *f)
{
    unsigned long long n = 0;
    for (int p = 0; p < f->nplanes; p++)
        n += (unsigned long long)tsr_frame_plane_width(f->width, f->chroma, p) * (f->bits > 8 ? 2 : 1) *
             (unsigned long long)tsr_frame_plane_height(f->height, f->chroma, p);
    return n;
}

tsr_status tsr__source_load(tsr__source *src, const tsr_exec *ex, unsigned long long *bytes)
{
    tsr_status s = TSR_OK;
    int on_gpu = ex->backend == TSR_BACKEND_CUDA;
    if (src->loaded) return TSR_OK;
    if (src->still) {
        /* tsr_deband_image converts to a frame on the host and back: CUDA copies both ways */
        if (src->do_deband && !(s = tsr_deband_image(&src->before, &src->input, &src->deband, ex)) && on_gpu)
            *bytes += 2 * (unsigned long long)tsr_image_row_bytes(&src->before) * src->before.height;
    } else {
        const tsr_frame *shown = &src->raw;
        if (src->do_deband) {
            if ((s = tsr_deband_frame(&src->raw, &src->debanded, &src->deband, src->next - 1, ex))) return s;
            if (on_gpu) *bytes += tsr__source_frame_bytes(&src->raw) + tsr__source_frame_bytes(&src->debanded);
            if ((s = tsr_frame_to_image(&src->raw, &src->before, src->view, ex))) return s;
            shown = &src->debanded;
        }
        s = tsr_frame_to_image(shown, &src->input, src->view, ex);
    }
    if (!s) src->loaded = 1;
    return s;
}

int tsr__source_index(const tsr__source *src) { return src->still ? 0 : src->next - 1; }

void tsr__source_close(tsr__source *src)
{
    tsr_frame_free(&src->raw);
    tsr_frame_free(&src->debanded);
    tsr_image_free(&src->input);
    tsr_image_free(&src->before);
    memset(src, 0, sizeof *src);
}
