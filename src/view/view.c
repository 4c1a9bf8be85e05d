/* The viewer: runs a chain of operations on an image, or on each frame of a y4m stream, and
 * shows the result through a GL texture, in an X11 window (keys and mouse change the chain, its
 * parameters, the split, zoom and pan, and pause a stream) or off screen. See view.h for the
 * three paths from the chain to the texture, source.h for where frames come from. */
#include "view.h"
#include "gl.h"
#include "source.h"
#include "../core/internal.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef TSR_VIEW_X11
#include <X11/Xlib.h>
#endif

/* Keys are X keysyms: Latin-1 characters are themselves; these are the others used. */
enum {
    TSR_K_ESCAPE = 0xff1b, TSR_K_LEFT = 0xff51, TSR_K_UP = 0xff52, TSR_K_RIGHT = 0xff53, TSR_K_DOWN = 0xff54,
    TSR_K_KP_ADD = 0xffab, TSR_K_KP_SUBTRACT = 0xffad
};

/* Everything one viewer session owns. */
typedef struct tsr__view {
    tsr_view_options o;            /* the chain is edited live */
    tsr__gl gl;
    tsr_view_path path;            /* the path that runs (never AUTO) */
    tsr__source src;               /* the image or stream, debanded and converted */
    tsr_image in;                  /* the chain's input: src.input (not owned) */
    tsr_image din;                 /* device input (cuda paths) */
    tsr_image shape[TSR_VIEW_MAX_STAGES];   /* output shape of each stage (no data) */
    tsr_image out;                 /* shape of the chain's output (no data) */
    tsr_image tmp[TSR_VIEW_MAX_STAGES];     /* intermediates of stages 0..n-2 (host or device) */
    tsr_image dout;                /* hostcopy: the chain's output on the device */
    unsigned char *host_out;       /* cpu, hostcopy: the output, tightly packed, to upload */
    GLuint tex, tex_before, fbo_read, fbo_before, fbo_draw, rbo, pbo;
    int tex_w, tex_h, rbo_w, rbo_h;
    size_t pbo_size;
    void *pbo_res;                 /* the PBO registered with CUDA (interop) */
    unsigned long long frame_bytes;   /* bytes through the host in the current frame */
    double zoom, pan_x, pan_y;     /* image top-left at (pan_x, pan_y) window pixels, top-down */
    int split;
    double split_at;
    int can_cuda, can_interop;     /* which paths this machine runs (for the 'p' key) */
    char note[200];                /* last refused change, shown in the title */
    int paused, step, ended;       /* streams: paused, one frame asked for ('.'), after the last */
    double fps;                    /* streams: frames shown per second, recently */
} tsr__view;

int tsr_view_compiled(void) { return 1; }

const char *tsr_view_path_name(tsr_view_path p)
{
    return p == TSR_VIEW_PATH_CPU ? "cpu" : p == TSR_VIEW_PATH_INTEROP ? "interop"
                                     : p == TSR_VIEW_PATH_HOSTCOPY   ? "hostcopy" : "auto";
}

int tsr_view_op_displayable(const tsr_op *op)
{
    /* Probe with a small RGB and a gray image: sums gives 32/64-bit outputs on both. */
    tsr_image probe[2] = {{64, 64, 3, TSR_U8, 0, NULL, TSR_HOST, 0}, {64, 64, 1, TSR_U8, 0, NULL, TSR_HOST, 0}};
    unsigned char params[TSR_VIEW_PARAMS_BYTES];
    if (!op || op->params_size > sizeof params) return 0;
    tsr_params_default(op, params);
    for (int k = 0; k < op->nparams; k++)   /* required sizes: something valid for the probe */
        if (op->params[k].required && op->params[k].type == TSR_P_INT)
            tsr__param_set(&op->params[k], params, op->params[k].min > 33 ? op->params[k].min : 33);
    for (int i = 0; i < 2; i++) {
        tsr_image out = {0};
        if (op->check(&probe[i], params, &out) == TSR_OK)
            return (out.depth == TSR_U8 || out.depth == TSR_U16) && out.channels >= 1 && out.channels <= 4;
    }
    return 0;
}

/* ---------------------------------------------------------------- chain */

/* Check every stage's parameters and input and fill v->shape and v->out. On failure the
 * message names the stage. */
static tsr_status tsr__view_validate(tsr__view *v)
{
    tsr_image cur = v->in;
    cur.data = NULL;
    for (int i = 0; i < v->o.nstages; i++) {
        const tsr_view_stage *st = &v->o.stages[i];
        tsr_image out = {0};
        tsr_exec ex = v->o.exec;
        tsr_status s;
        if (!st->op) return tsr__fail(TSR_E_ARG, "view: stage %d has no operation", i + 1);
        if (st->op->params_size > TSR_VIEW_PARAMS_BYTES)
            return tsr__fail(TSR_E_UNSUPPORTED, "view: %s has too many parameters", st->op->name);
        if ((s = tsr_params_check(st->op, st->params))) return s;
        if ((s = st->op->check(&cur, st->params, &out))) return s;
        if ((out.depth != TSR_U8 && out.depth != TSR_U16) || out.channels < 1 || out.channels > 4)
            return tsr__fail(TSR_E_UNSUPPORTED, "view: %s gives %d-bit samples, which cannot be shown", st->op->name,
                             (int)out.depth * 8);
        ex.backend = v->path == TSR_VIEW_PATH_CPU ? TSR_BACKEND_CPU : TSR_BACKEND_CUDA;
        cur.memory = v->path == TSR_VIEW_PATH_CPU ? TSR_HOST : TSR_DEVICE;
        if (!tsr_choose_variant(st->op, &ex, &cur, st->params)) return TSR_E_UNSUPPORTED;
        out.data = NULL;
        out.memory = cur.memory;
        v->shape[i] = out;
        cur = out;
    }
    v->out = cur;
    v->out.data = NULL;
    return TSR_OK;
}

/* GL pixel format of an image's channels (gray is spread to R, G and B by GL). */
static GLenum tsr__gl_format(int channels)
{
    return channels == 1 ? GL_LUMINANCE : channels == 2 ? GL_LUMINANCE_ALPHA : channels == 3 ? GL_RGB : GL_RGBA;
}

static GLenum tsr__gl_type(tsr_depth d) { return d == TSR_U16 ? GL_UNSIGNED_SHORT : GL_UNSIGNED_BYTE; }

/* (Re)create an RGBA8 texture of w x h and a read framebuffer with it attached. */
static tsr_status tsr__view_texture(tsr__view *v, GLuint *tex, GLuint *fbo, int w, int h)
{
    GLenum st;
    if (!*tex) glGenTextures(1, tex);
    if (!*fbo) v->gl.GenFramebuffers(1, fbo);
    glBindTexture(GL_TEXTURE_2D, *tex);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, w, h, 0, GL_RGBA, GL_UNSIGNED_BYTE, NULL);
    glBindTexture(GL_TEXTURE_2D, 0);
    v->gl.BindFramebuffer(GL_READ_FRAMEBUFFER, *fbo);
    v->gl.FramebufferTexture2D(GL_READ_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, *tex, 0);
    st = v->gl.CheckFramebufferStatus(GL_READ_FRAMEBUFFER);
    v->gl.BindFramebuffer(GL_READ_FRAMEBUFFER, 0);
    if (st != GL_FRAMEBUFFER_COMPLETE)
        return tsr__fail(TSR_E_DEVICE, "GL: texture framebuffer %dx%d incomplete (0x%04x)", w, h, (unsigned)st);
    return tsr__gl_check("creating a texture");
}

/* Upload a tightly packed host image (or, with data NULL, the bound unpack buffer) into tex. */
static tsr_status tsr__view_upload(tsr__view *v, GLuint tex, const tsr_image *shape, const void *data)
{
    glBindTexture(GL_TEXTURE_2D, tex);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
    glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, shape->width, shape->height, tsr__gl_format(shape->channels),
                    tsr__gl_type(shape->depth), data);
    glBindTexture(GL_TEXTURE_2D, 0);
    if (data) v->frame_bytes += tsr_image_row_bytes(shape) * (size_t)shape->height;
    return tsr__gl_check("glTexSubImage2D");
}

/* Release the chain's buffers (not the input, the textures or the context). */
static void tsr__view_free_chain(tsr__view *v)
{
    for (int i = 0; i < TSR_VIEW_MAX_STAGES; i++) tsr_image_free(&v->tmp[i]);
    tsr_image_free(&v->dout);
    free(v->host_out);
    v->host_out = NULL;
}

/* Allocate what the validated chain needs on the current path: intermediates, the output
 * buffer (host, device or the registered PBO) and the output texture. */
static tsr_status tsr__view_configure(tsr__view *v)
{
    tsr_memory mem = v->path == TSR_VIEW_PATH_CPU ? TSR_HOST : TSR_DEVICE;
    size_t out_bytes = tsr_image_row_bytes(&v->out) * (size_t)v->out.height;
    tsr_status s;
    tsr__view_free_chain(v);
    for (int i = 0; i + 1 < v->o.nstages; i++) {
        const tsr_image *sh = &v->shape[i];
        if ((s = tsr_image_create(&v->tmp[i], sh->width, sh->height, sh->channels, sh->depth, mem))) return s;
    }
    if (v->path != TSR_VIEW_PATH_INTEROP) {
        v->host_out = malloc(out_bytes);
        if (!v->host_out) return tsr__fail(TSR_E_NOMEM, "view: out of memory for a %zu-byte frame", out_bytes);
    }
    if (v->path == TSR_VIEW_PATH_HOSTCOPY &&
        (s = tsr_image_create(&v->dout, v->out.width, v->out.height, v->out.channels, v->out.depth, TSR_DEVICE)))
        return s;
    if (v->path == TSR_VIEW_PATH_INTEROP && v->pbo_size != out_bytes) {
#ifdef TSR_HAVE_CUDA
        if (v->pbo_res) tsr__view_pbo_unregister(v->pbo_res);
        v->pbo_res = NULL;
        if (!v->pbo) v->gl.GenBuffers(1, &v->pbo);
        v->gl.BindBuffer(GL_PIXEL_UNPACK_BUFFER, v->pbo);
        v->gl.BufferData(GL_PIXEL_UNPACK_BUFFER, (GLsizeiptr)out_bytes, NULL, GL_STREAM_DRAW);
        v->gl.BindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);
        if ((s = tsr__gl_check("creating the pixel buffer"))) return s;
        if ((s = tsr__view_pbo_register(v->pbo, &v->pbo_res))) return s;
        v->pbo_size = out_bytes;
#else
        return tsr__fail(TSR_E_UNSUPPORTED, "view: the interop path needs a CUDA build");
#endif
    }
    if (v->tex_w != v->out.width || v->tex_h != v->out.height) {
        if ((s = tsr__view_texture(v, &v->tex, &v->fbo_read, v->out.width, v->out.height))) return s;
        v->tex_w = v->out.width;
        v->tex_h = v->out.height;
    }
    return TSR_OK;
}

/* Run stages [0, n) from src; the last writes into 'last' (already allocated). */
static tsr_status tsr__view_run_chain(tsr__view *v, const tsr_image *src, tsr_image *last)
{
    tsr_exec ex = v->o.exec;
    ex.backend = v->path == TSR_VIEW_PATH_CPU ? TSR_BACKEND_CPU : TSR_BACKEND_CUDA;
    if (v->o.nstages == 0) {
        tsr_status s = tsr_image_copy(src, last, ex.stream);
        if (!s && src->memory != last->memory)
            v->frame_bytes += tsr_image_row_bytes(src) * (size_t)src->height;
        return s;
    }
    for (int i = 0; i < v->o.nstages; i++) {
        tsr_image *dst = i + 1 == v->o.nstages ? last : &v->tmp[i];
        tsr_status s = tsr_run(v->o.stages[i].op, i ? &v->tmp[i - 1] : src, dst, v->o.stages[i].params, &ex);
        if (s) return s;
    }
    return TSR_OK;
}

/* Compute one frame and bring it into the output texture by the current path. */
static tsr_status tsr__view_process(tsr__view *v)
{
    tsr_image host;
    tsr_status s;
    if (v->path == TSR_VIEW_PATH_INTEROP) {
#ifdef TSR_HAVE_CUDA
        void *ptr = NULL;
        size_t size = 0;
        tsr_image pbo_img;
        if ((s = tsr__view_pbo_map(v->pbo_res, &ptr, &size, v->o.exec.stream))) return s;
        if (size < v->pbo_size) s = tsr__fail(TSR_E_DEVICE, "view: mapped pixel buffer is %zu bytes, expected %zu",
                                              size, v->pbo_size);
        if (!s) s = tsr_image_wrap(&pbo_img, v->out.width, v->out.height, v->out.channels, v->out.depth, ptr, 0,
                                   TSR_DEVICE);
        if (!s) s = tsr__view_run_chain(v, &v->din, &pbo_img);
        {
            tsr_status u = tsr__view_pbo_unmap(v->pbo_res, v->o.exec.stream);
            if (!s) s = u;
        }
        if (s) return s;
        v->gl.BindBuffer(GL_PIXEL_UNPACK_BUFFER, v->pbo);
        s = tsr__view_upload(v, v->tex, &v->out, NULL);   /* from the bound PBO: GPU to GPU */
        v->gl.BindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);
        if (!s) s = tsr__gl_check("unbinding the pixel buffer");
        return s;
#else
        return tsr__fail(TSR_E_UNSUPPORTED, "view: the interop path needs a CUDA build");
#endif
    }
    if ((s = tsr_image_wrap(&host, v->out.width, v->out.height, v->out.channels, v->out.depth, v->host_out, 0,
                            TSR_HOST)))
        return s;
    if (v->path == TSR_VIEW_PATH_HOSTCOPY) {
        if ((s = tsr__view_run_chain(v, &v->din, v->o.nstages ? &v->dout : &host))) return s;
        if (v->o.nstages) {
            if ((s = tsr_image_copy(&v->dout, &host, v->o.exec.stream))) return s;
            v->frame_bytes += tsr_image_row_bytes(&host) * (size_t)host.height;
        }
        if ((s = tsr_stream_sync(v->o.exec.stream))) return s;
    } else if ((s = tsr__view_run_chain(v, &v->in, &host))) {
        return s;
    }
    return tsr__view_upload(v, v->tex, &v->out, v->host_out);
}

/* ---------------------------------------------------------------- drawing */

/* Draw the output texture (and, left of the split, the input) into framebuffer 'fb' of w x h
 * with the current zoom and pan; nearest sampling, so 1:1 is an exact copy. */
static tsr_status tsr__view_draw(tsr__view *v, GLuint fb, int w, int h)
{
    int x0 = (int)lround(v->pan_x), x1 = (int)lround(v->pan_x + v->out.width * v->zoom);
    int ytop = (int)lround(v->pan_y), ybot = (int)lround(v->pan_y + v->out.height * v->zoom);
    v->gl.BindFramebuffer(GL_DRAW_FRAMEBUFFER, fb);
    glViewport(0, 0, w, h);
    glDisable(GL_SCISSOR_TEST);
    glClearColor(0.12f, 0.12f, 0.12f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    /* Texture row 0 is the image's top row; GL's y grows upwards: blit flipped. */
    v->gl.BindFramebuffer(GL_READ_FRAMEBUFFER, v->fbo_read);
    v->gl.BlitFramebuffer(0, 0, v->out.width, v->out.height, x0, h - ytop, x1, h - ybot, GL_COLOR_BUFFER_BIT,
                          GL_NEAREST);
    if (v->split) {
        int sx = (int)lround(v->split_at * w);
        glEnable(GL_SCISSOR_TEST);
        glScissor(0, 0, sx, h);
        v->gl.BindFramebuffer(GL_READ_FRAMEBUFFER, v->fbo_before);
        v->gl.BlitFramebuffer(0, 0, v->in.width, v->in.height, x0, h - ytop, x1, h - ybot, GL_COLOR_BUFFER_BIT,
                              GL_NEAREST);
        glDisable(GL_SCISSOR_TEST);
    }
    v->gl.BindFramebuffer(GL_READ_FRAMEBUFFER, 0);
    return tsr__gl_check("drawing the frame");
}

/* Read framebuffer 'fb' (w x h) back into a new host RGB 8-bit image, top row first. */
static tsr_status tsr__view_read(tsr__view *v, GLuint fb, int w, int h, tsr_image *shot)
{
    tsr_image img;
    unsigned char *buf;
    size_t row = (size_t)w * 3;
    tsr_status s;
    if ((s = tsr_image_create(&img, w, h, 3, TSR_U8, TSR_HOST))) return s;
    buf = malloc(row * (size_t)h);
    if (!buf) {
        tsr_image_free(&img);
        return tsr__fail(TSR_E_NOMEM, "view: out of memory reading back %dx%d", w, h);
    }
    v->gl.BindFramebuffer(GL_READ_FRAMEBUFFER, fb);
    if (fb == 0) glReadBuffer(GL_BACK);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glPixelStorei(GL_PACK_ROW_LENGTH, 0);
    glReadPixels(0, 0, w, h, GL_RGB, GL_UNSIGNED_BYTE, buf);
    v->gl.BindFramebuffer(GL_READ_FRAMEBUFFER, 0);
    if ((s = tsr__gl_check("glReadPixels"))) {
        free(buf);
        tsr_image_free(&img);
        return s;
    }
    for (int y = 0; y < h; y++) memcpy(tsr__row(&img, y), buf + (size_t)(h - 1 - y) * row, row);
    free(buf);
    *shot = img;
    return TSR_OK;
}

/* (Re)make the headless target: a w x h RGBA8 renderbuffer in framebuffer fbo_draw. */
static tsr_status tsr__view_target(tsr__view *v, int w, int h)
{
    GLenum st;
    if (v->rbo_w == w && v->rbo_h == h) return TSR_OK;
    if (!v->fbo_draw) v->gl.GenFramebuffers(1, &v->fbo_draw);
    if (!v->rbo) v->gl.GenRenderbuffers(1, &v->rbo);
    v->gl.BindRenderbuffer(GL_RENDERBUFFER, v->rbo);
    v->gl.RenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, w, h);
    v->gl.BindRenderbuffer(GL_RENDERBUFFER, 0);
    v->gl.BindFramebuffer(GL_FRAMEBUFFER, v->fbo_draw);
    v->gl.FramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, v->rbo);
    st = v->gl.CheckFramebufferStatus(GL_FRAMEBUFFER);
    v->gl.BindFramebuffer(GL_FRAMEBUFFER, 0);
    if (st != GL_FRAMEBUFFER_COMPLETE)
        return tsr__fail(TSR_E_DEVICE, "GL: off-screen framebuffer %dx%d incomplete (0x%04x)", w, h, (unsigned)st);
    v->rbo_w = w;
    v->rbo_h = h;
    return tsr__gl_check("creating the off-screen framebuffer");
}

/* ---------------------------------------------------------------- live editing */

#ifdef TSR_VIEW_X11
/* Describe the chain with its parameters, e.g. "gray,box(radius=3)". */
static void tsr__view_describe(const tsr__view *v, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = 0;
    if (v->src.do_deband) len = (size_t)snprintf(buf, n, "deband");
    else if (!v->o.nstages) snprintf(buf, n, v->src.still ? "the image" : "the frames");
    for (int i = 0; i < v->o.nstages && len + 1 < n; i++) {
        const tsr_view_stage *st = &v->o.stages[i];
        int shown = 0;
        len += (size_t)snprintf(buf + len, n - len, "%s%s", len ? "," : "", st->op->name);
        for (int k = 0; k < st->op->nparams && len + 1 < n; k++) {
            const tsr_param *p = &st->op->params[k];
            double val = tsr__param_get(p, st->params);
            if (val == p->def && !p->required && strcmp(p->name, "radius")) continue;
            if (p->type == TSR_P_CHOICE)
                len += (size_t)snprintf(buf + len, n - len, "%s%s=%s", shown++ ? " " : "(", p->name,
                                        p->choices[(int)val]);
            else
                len += (size_t)snprintf(buf + len, n - len, "%s%s=%g", shown++ ? " " : "(", p->name, val);
        }
        if (shown && len + 1 < n) len += (size_t)snprintf(buf + len, n - len, ")");
    }
}
#endif

/* Add 'delta' to parameter 'name' of the last stage that has it; refused changes (out of
 * range, or the stage rejects them) leave the chain as it was and say why in the title. */
static void tsr__view_nudge(tsr__view *v, const char *name, double delta)
{
    for (int i = v->o.nstages - 1; i >= 0; i--) {
        tsr_view_stage *st = &v->o.stages[i];
        for (int k = 0; k < st->op->nparams; k++) {
            const tsr_param *p = &st->op->params[k];
            double old;
            if (strcmp(p->name, name)) continue;
            old = tsr__param_get(p, st->params);
            tsr__param_set(p, st->params, old + delta);
            if (tsr__view_validate(v)) {
                snprintf(v->note, sizeof v->note, "%s", tsr_last_error());
                if (!v->o.quiet) fprintf(stderr, "tessera: view: refused: %s\n", v->note);
                tsr__param_set(p, st->params, old);
                tsr__view_validate(v);
            } else {
                v->note[0] = 0;
            }
            return;
        }
    }
    snprintf(v->note, sizeof v->note, "no stage has --%s", name);
    if (!v->o.quiet) fprintf(stderr, "tessera: view: %s\n", v->note);
}

/* Defaults for a stage chosen with a key: required sizes half the input's, other required
 * numbers their minimum (threshold's block 3 becomes 11 to be useful). */
static void tsr__view_stage_defaults(tsr_view_stage *st, const tsr_image *src)
{
    tsr_params_default(st->op, st->params);
    for (int k = 0; k < st->op->nparams; k++) {
        const tsr_param *p = &st->op->params[k];
        if (!p->required || p->type != TSR_P_INT) continue;
        if (!strcmp(p->name, "width")) tsr__param_set(p, st->params, src->width > 1 ? src->width / 2 : 1);
        else if (!strcmp(p->name, "height")) tsr__param_set(p, st->params, src->height > 1 ? src->height / 2 : 1);
        else if (!strcmp(p->name, "block")) tsr__param_set(p, st->params, 11);
        else if (tsr__param_get(p, st->params) < p->min) tsr__param_set(p, st->params, p->min);
    }
}

/* Replace the last stage (or add one to an empty chain) by the next (dir 1) or previous
 * displayable operation that accepts its input. Returns 1 when the chain changed. */
static int tsr__view_cycle_op(tsr__view *v, int dir)
{
    int n = tsr_op_count(), last, cur = -1;
    tsr_view_stage saved;
    if (!v->o.nstages) {
        v->o.nstages = 1;
        v->o.stages[0].op = NULL;
    }
    last = v->o.nstages - 1;
    saved = v->o.stages[last];
    for (int i = 0; i < n; i++)
        if (tsr_op_at(i) == saved.op) cur = i;
    for (int step = 1; step <= n; step++) {
        int idx = ((cur < 0 ? (dir > 0 ? -1 : 0) : cur) + dir * step % n + n) % n;
        const tsr_op *op = tsr_op_at(idx);
        if (op == saved.op || !tsr_view_op_displayable(op) || op->params_size > TSR_VIEW_PARAMS_BYTES) continue;
        v->o.stages[last].op = op;
        tsr__view_stage_defaults(&v->o.stages[last], last ? &v->shape[last - 1] : &v->in);
        if (tsr__view_validate(v) == TSR_OK) {
            v->note[0] = 0;
            return 1;
        }
    }
    v->o.stages[last] = saved;
    if (!saved.op) v->o.nstages--;
    tsr__view_validate(v);
    snprintf(v->note, sizeof v->note, "no other operation accepts this input");
    if (!v->o.quiet) fprintf(stderr, "tessera: view: %s\n", v->note);
    return 0;
}

/* ---------------------------------------------------------------- session */

/* Fit the output into a w x h window: 1:1 when it fits, else the largest whole view. */
static void tsr__view_fit(tsr__view *v, int w, int h, int one_to_one)
{
    double z = fmin((double)w / v->out.width, (double)h / v->out.height);
    v->zoom = one_to_one || z >= 1 ? 1 : z;
    v->pan_x = one_to_one ? 0 : fmax(0, (w - v->out.width * v->zoom) / 2);
    v->pan_y = one_to_one ? 0 : fmax(0, (h - v->out.height * v->zoom) / 2);
}

/* Zoom by 'f' keeping window point (cx, cy) fixed. */
static void tsr__view_zoom(tsr__view *v, double f, double cx, double cy)
{
    double z = fmin(64, fmax(1.0 / 64, v->zoom * f));
    v->pan_x = cx - (cx - v->pan_x) * z / v->zoom;
    v->pan_y = cy - (cy - v->pan_y) * z / v->zoom;
    v->zoom = z;
}

static double tsr__now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Pick the path and set up the GPU side: interop needs a CUDA device driving the GL context;
 * AUTO falls back to cpu (saying why unless quiet). */
static tsr_status tsr__view_choose_path(tsr__view *v)
{
    tsr_view_path want = v->o.path;
    v->can_cuda = tsr_cuda_compiled() && tsr_cuda_available();
#ifdef TSR_HAVE_CUDA
    v->can_interop = v->can_cuda && tsr__view_cuda_select(v->gl.cuda_device) == TSR_OK;
#endif
    if (want == TSR_VIEW_PATH_CPU) {
        v->path = TSR_VIEW_PATH_CPU;
        return TSR_OK;
    }
    if (!v->can_cuda) {
        if (want != TSR_VIEW_PATH_AUTO)
            return tsr__fail(TSR_E_NO_DEVICE, "view: the %s path needs a CUDA device: %s", tsr_view_path_name(want),
                             tsr_cuda_compiled() ? tsr_cuda_device_name() : "this build has no CUDA");
        v->path = TSR_VIEW_PATH_CPU;
        return TSR_OK;
    }
    if (want == TSR_VIEW_PATH_HOSTCOPY) {
        v->path = TSR_VIEW_PATH_HOSTCOPY;
        return TSR_OK;
    }
#ifdef TSR_HAVE_CUDA
    {
        tsr_status s = v->can_interop ? TSR_OK : tsr__view_cuda_select(v->gl.cuda_device);
        if (!s) {
            v->path = TSR_VIEW_PATH_INTEROP;
            return TSR_OK;
        }
        if (want == TSR_VIEW_PATH_INTEROP) return s;
        if (!v->o.quiet)
            fprintf(stderr, "tessera: view: no CUDA-GL interop on %s (%s): copying through the host\n",
                    v->gl.renderer, tsr_last_error());
        v->path = TSR_VIEW_PATH_HOSTCOPY;
    }
#endif
    return TSR_OK;
}

/* Bring the source's current frame in on the current path: deband and convert it (once per
 * frame), copy the chain's input to the device (cuda paths), upload the before texture. */
static tsr_status tsr__view_load(tsr__view *v)
{
    tsr_exec ex = v->o.exec;
    const tsr_image *in = &v->in;
    tsr_status s;
    ex.backend = v->path == TSR_VIEW_PATH_CPU ? TSR_BACKEND_CPU : TSR_BACKEND_CUDA;
    if ((s = tsr__source_load(&v->src, &ex, &v->frame_bytes))) return s;
    if (v->path != TSR_VIEW_PATH_CPU) {
        if (!v->din.data &&
            (s = tsr_image_create(&v->din, in->width, in->height, in->channels, in->depth, TSR_DEVICE)))
            return s;
        if ((s = tsr_image_copy(in, &v->din, v->o.exec.stream))) return s;
        if ((s = tsr_stream_sync(v->o.exec.stream))) return s;
        v->frame_bytes += tsr_image_row_bytes(in) * (size_t)in->height;
    }
    if (!v->tex_before &&
        (s = tsr__view_texture(v, &v->tex_before, &v->fbo_before, v->src.before.width, v->src.before.height)))
        return s;
    return tsr__view_upload(v, v->tex_before, &v->src.before, v->src.before.data);
}

/* Set up the session after the context exists: path, the first frame, the chain. */
static tsr_status tsr__view_setup(tsr__view *v)
{
    tsr_status s;
    if ((s = tsr__view_choose_path(v))) return s;
    if ((s = tsr__view_validate(v))) {
        /* AUTO interop may fail only because a variant is missing on CUDA: then use the CPU */
        if (v->o.path != TSR_VIEW_PATH_AUTO || v->path == TSR_VIEW_PATH_CPU) return s;
        v->path = TSR_VIEW_PATH_CPU;
        if ((s = tsr__view_validate(v))) return s;
    }
    if ((s = tsr__view_load(v))) return s;
    return tsr__view_configure(v);
}

/* Release everything the session made, context last. */
static void tsr__view_close(tsr__view *v)
{
    tsr__view_free_chain(v);
    tsr_image_free(&v->din);
    tsr__source_close(&v->src);
    if (v->gl.ctx != EGL_NO_CONTEXT) {
#ifdef TSR_HAVE_CUDA
        tsr__view_pbo_unregister(v->pbo_res);
#endif
        if (v->pbo) v->gl.DeleteBuffers(1, &v->pbo);
        if (v->fbo_read) v->gl.DeleteFramebuffers(1, &v->fbo_read);
        if (v->fbo_before) v->gl.DeleteFramebuffers(1, &v->fbo_before);
        if (v->fbo_draw) v->gl.DeleteFramebuffers(1, &v->fbo_draw);
        if (v->rbo) v->gl.DeleteRenderbuffers(1, &v->rbo);
        if (v->tex) glDeleteTextures(1, &v->tex);
        if (v->tex_before) glDeleteTextures(1, &v->tex_before);
    }
    tsr__gl_close(&v->gl);
}

#ifdef TSR_VIEW_X11
/* Set the window title: chain, path, frame time, (stream: frame number, fps, state), bytes
 * through the host, zoom, note. */
static void tsr__view_title(tsr__view *v, double ms, double stream_fps)
{
    char chain[160], play[96] = "", title[720];
    tsr__view_describe(v, chain, sizeof chain);
    if (!v->src.still)
        snprintf(play, sizeof play, " | frame %d | %.1f fps of %.3g%s", tsr__source_index(&v->src), v->fps,
                 stream_fps, v->ended ? " | end" : v->paused ? " | paused" : "");
    snprintf(title, sizeof title, "tessera view: %s | %s | %.2f ms/frame%s | host %llu B/frame | %.0f%%%s%s%s", chain,
             tsr_view_path_name(v->path), ms, play, v->frame_bytes, v->zoom * 100, v->split ? " | split" : "",
             v->note[0] ? " | " : "", v->note);
    XStoreName((Display *)v->gl.xdpy, (Window)v->gl.xwin, title);
}

#endif

static const char tsr__view_keys[] =
    "keys: o/O next/previous operation, r/R radius -/+, b/B block -/+2, c/C C -/+1, s split, "
    ",/. move split, +/- or wheel zoom, 0 1:1, f fit, arrows or drag pan, p path, q quit";
static const char tsr__view_stream_keys[] =
    "keys: space pause, . next frame (pauses), o/O next/previous operation, r/R radius -/+, b/B block -/+2, "
    "c/C C -/+1, s split, </> move split, +/- or wheel zoom, 0 1:1, f fit, arrows or drag pan, p path, q quit";

static int tsr__view_key(tsr__view *v, unsigned long k, int *dirty);

#ifdef TSR_VIEW_X11

/* Handle one X event; returns 1 to quit. *dirty is set when the chain must be reconfigured. */
static int tsr__view_event(tsr__view *v, XEvent *e, int *dirty, int *drag, int *last_x, int *last_y)
{
    tsr__gl *g = &v->gl;
    if (e->type == ClientMessage && (unsigned long)e->xclient.data.l[0] == g->wm_delete) return 1;
    if (e->type == ConfigureNotify) {
        g->win_w = e->xconfigure.width;
        g->win_h = e->xconfigure.height;
    } else if (e->type == ButtonPress) {
        if (e->xbutton.button == Button4) tsr__view_zoom(v, 1.25, e->xbutton.x, e->xbutton.y);
        else if (e->xbutton.button == Button5) tsr__view_zoom(v, 0.8, e->xbutton.x, e->xbutton.y);
        else if (e->xbutton.button == Button3) v->split_at = (double)e->xbutton.x / g->win_w, v->split = 1;
        else if (e->xbutton.button == Button1) *drag = 1;
        *last_x = e->xbutton.x;
        *last_y = e->xbutton.y;
    } else if (e->type == ButtonRelease) {
        if (e->xbutton.button == Button1) *drag = 0;
    } else if (e->type == MotionNotify) {
        if (*drag) {
            v->pan_x += e->xmotion.x - *last_x;
            v->pan_y += e->xmotion.y - *last_y;
        } else if (e->xmotion.state & Button3Mask) {
            v->split_at = fmin(1, fmax(0, (double)e->xmotion.x / g->win_w));
        }
        *last_x = e->xmotion.x;
        *last_y = e->xmotion.y;
    } else if (e->type == KeyPress) {
        return tsr__view_key(v, XLookupKeysym(&e->xkey, (e->xkey.state & ShiftMask) ? 1 : 0), dirty);
    }
    return 0;
}
#endif

/* Apply one key (see tsr__view_keys); returns 1 to quit. *dirty: 1 when the chain changed
 * shape, 2 when the path changed too. */
static int tsr__view_key(tsr__view *v, unsigned long k, int *dirty)
{
    tsr__gl *g = &v->gl;
    {
        switch (k) {
        case 'q': case 'Q': case TSR_K_ESCAPE: return 1;
        case 'o': *dirty |= tsr__view_cycle_op(v, 1); break;
        case 'O': *dirty |= tsr__view_cycle_op(v, -1); break;
        case 'r': tsr__view_nudge(v, "radius", -1); break;
        case 'R': tsr__view_nudge(v, "radius", 1); break;
        case 'b': tsr__view_nudge(v, "block", -2); break;
        case 'B': tsr__view_nudge(v, "block", 2); break;
        case 'c': tsr__view_nudge(v, "c", -1); break;
        case 'C': tsr__view_nudge(v, "c", 1); break;
        case 's': case 'S': v->split = !v->split; break;
        case ' ': v->paused = !v->paused; break;
        case ',': case '<': v->split_at = fmax(0, v->split_at - 0.05); break;
        case '.':   /* streams: one frame on, then paused; images: the split moves */
            if (!v->src.still) v->paused = v->step = 1;
            else v->split_at = fmin(1, v->split_at + 0.05);
            break;
        case '>': v->split_at = fmin(1, v->split_at + 0.05); break;
        case '+': case '=': case TSR_K_KP_ADD: tsr__view_zoom(v, 2, g->win_w / 2.0, g->win_h / 2.0); break;
        case '-': case TSR_K_KP_SUBTRACT: tsr__view_zoom(v, 0.5, g->win_w / 2.0, g->win_h / 2.0); break;
        case '0': tsr__view_fit(v, g->win_w, g->win_h, 1); break;
        case 'f': case 'F': tsr__view_fit(v, g->win_w, g->win_h, 0); break;
        case TSR_K_LEFT: v->pan_x += g->win_w / 10.0; break;
        case TSR_K_RIGHT: v->pan_x -= g->win_w / 10.0; break;
        case TSR_K_UP: v->pan_y += g->win_h / 10.0; break;
        case TSR_K_DOWN: v->pan_y -= g->win_h / 10.0; break;
        case 'p': case 'P': {   /* the next path this machine can run: interop, hostcopy, cpu */
            tsr_view_path next = v->path;
            for (int i = 0; i < 3; i++) {
                next = next == TSR_VIEW_PATH_INTEROP ? TSR_VIEW_PATH_HOSTCOPY
                       : next == TSR_VIEW_PATH_HOSTCOPY ? TSR_VIEW_PATH_CPU : TSR_VIEW_PATH_INTEROP;
                if (next == TSR_VIEW_PATH_CPU || (next == TSR_VIEW_PATH_HOSTCOPY && v->can_cuda) ||
                    (next == TSR_VIEW_PATH_INTEROP && v->can_interop))
                    break;
            }
            if (next == v->path) {
                snprintf(v->note, sizeof v->note, "only the %s path runs here", tsr_view_path_name(v->path));
            } else {
                v->path = next;
                *dirty = 2;   /* also the device input */
            }
            break;
        }
        case 'h': case 'H':
            fprintf(stderr, "tessera: view: %s\n", v->src.still ? tsr__view_keys : tsr__view_stream_keys);
            break;
        default: break;
        }
    }
    return 0;
}

/* Checks that tsr_view_run and tsr_view_play share, before anything is allocated. */
static tsr_status tsr__view_check(const tsr_view_options *o, const tsr_image *shot)
{
    if (!o) return tsr__fail(TSR_E_ARG, "view: no options");
    if (o->nstages < 0 || o->nstages > TSR_VIEW_MAX_STAGES)
        return tsr__fail(TSR_E_ARG, "view: a chain has 0 to %d operations", TSR_VIEW_MAX_STAGES);
    if (o->frames < 0) return tsr__fail(TSR_E_ARG, "view: --frames must not be negative");
    if ((o->path == TSR_VIEW_PATH_INTEROP || o->path == TSR_VIEW_PATH_HOSTCOPY) &&
        (!tsr_cuda_compiled() || !tsr_cuda_available()))
        return tsr__fail(TSR_E_NO_DEVICE, "view: the %s path needs a CUDA device: %s", tsr_view_path_name(o->path),
                         tsr_cuda_compiled() ? tsr_cuda_device_name() : "this build has no CUDA");
    if (shot && !o->headless && !o->frames)
        return tsr__fail(TSR_E_ARG, "view: a screenshot of a window needs --frames N (the frame to capture)");
    return TSR_OK;
}

/* A zeroed session with o's settings. */
static tsr_status tsr__view_new(const tsr_view_options *o, tsr__view **out)
{
    tsr__view *v = calloc(1, sizeof *v);
    if (!v) return tsr__fail(TSR_E_NOMEM, "view: out of memory");
    v->o = *o;
    v->gl.dpy = EGL_NO_DISPLAY;
    v->gl.ctx = EGL_NO_CONTEXT;
    v->split = o->split;
    v->split_at = o->split_at > 0 && o->split_at < 1 ? o->split_at : 0.5;
    *out = v;
    return TSR_OK;
}

/* Where a frame is drawn: the window's back buffer, or off screen a target of the output's size. */
static tsr_status tsr__view_frame_target(tsr__view *v, GLuint *fb, int *w, int *h)
{
    tsr_status s = TSR_OK;
    if (v->o.headless) {
        *w = v->gl.win_w = v->out.width;
        *h = v->gl.win_h = v->out.height;
        s = tsr__view_target(v, *w, *h);
        *fb = v->fbo_draw;
    } else {
        *w = v->gl.win_w;
        *h = v->gl.win_h;
        *fb = 0;
    }
    return s;
}

/* Read the next stream frame; after the last, frame 0 again with o->loop, else v->ended. */
static tsr_status tsr__view_advance(tsr__view *v)
{
    int eof;
    tsr_status s = tsr__source_read(&v->src, &eof);
    if (!s && eof && v->o.loop && !(s = tsr__source_rewind(&v->src))) s = tsr__source_read(&v->src, &eof);
    v->ended = !s && eof;
    return s;
}

static void tsr__view_sleep(double seconds)
{
    struct timespec ts = {0, (long)(seconds * 1e9)};
    nanosleep(&ts, NULL);
}

/* The session once its source is open (s: how opening went): context, setup, the frame loop,
 * stats. Frees v. A stream advances one frame per tick: every frame off screen, every period
 * of the stream's rate in a window, where events redraw in between (not counted as frames). */
static tsr_status tsr__view_session(tsr__view *v, tsr_status s, tsr_image *shot, tsr_view_stats *st)
{
    const tsr_view_options *o = &v->o;
    const tsr_y4m_info *yi = &v->src.info;
    int stream = !v->src.still, frames = 0, quit = 0, first = 1, progressed = 0, nframes;
    double stream_fps = yi->fps_num > 0 && yi->fps_den > 0 ? (double)yi->fps_num / yi->fps_den : 25;
    double t0, t_sum = 0, recent = 0, due, shown_at = 0, progress_at;
    unsigned long long host_bytes = 0;   /* of the last frame counted */
#ifdef TSR_VIEW_X11
    double title_at = 0;
    int drag = 0, lx = 0, ly = 0;   /* mouse: dragging, last position */
#endif
    const char *keys = o->keys && *o->keys ? o->keys : NULL;
    nframes = o->frames ? o->frames : o->headless && !stream ? 1 : 0;   /* 0: until closed or the end */
    v->in = v->src.input;
    v->in.owned = 0;
    /* Shapes first (no context needed) so that a bad chain fails before any window opens. */
    v->path = o->path == TSR_VIEW_PATH_AUTO ? TSR_VIEW_PATH_CPU : o->path;
    if (!s && !(s = tsr__view_validate(v))) {
        if (o->headless) s = tsr__gl_open_headless(&v->gl);
        else s = tsr__gl_open_window(&v->gl, v->out.width, v->out.height, "tessera view");
    }
    if (!s) s = tsr__view_setup(v);
    if (s) {
        tsr__view_close(v);
        free(v);
        return s;
    }
    if (o->headless) {
        v->gl.win_w = v->out.width;   /* keys that zoom or pan use the target's size */
        v->gl.win_h = v->out.height;
        tsr__view_fit(v, v->out.width, v->out.height, 1);
    }
    else tsr__view_fit(v, v->gl.win_w, v->gl.win_h, 0);
    if (!o->quiet && !o->headless)
        fprintf(stderr, "tessera: view: %s\n", stream ? tsr__view_stream_keys : tsr__view_keys);

    t0 = progress_at = due = tsr__now();
    while (!quit && !s) {
        int dirty = 0, events = 0, tick = 1, last, tw, th;
        GLuint fb;
        double f0;
        if (keys) {   /* scripted keys (--keys) before the first frame */
            for (; *keys && !quit; keys++, events++) quit |= tsr__view_key(v, (unsigned char)*keys, &dirty);
            keys = NULL;
        }
#ifdef TSR_VIEW_X11
        if (!o->headless) {
            while (XPending((Display *)v->gl.xdpy)) {
                XEvent e;
                XNextEvent((Display *)v->gl.xdpy, &e);
                events++;
                quit |= tsr__view_event(v, &e, &dirty, &drag, &lx, &ly);
            }
        }
#endif
        if (quit) break;
        if (dirty == 2) {   /* path changed: the device input follows */
            tsr_image_free(&v->din);
            if (!(s = tsr__view_load(v))) s = tsr__view_validate(v);
            if (s) break;
        }
        if (dirty && (s = tsr__view_configure(v))) break;
        f0 = tsr__now();
        v->frame_bytes = 0;
        if (stream) {
            if (!o->headless) {
                if (f0 < due && !events) {
                    tsr__view_sleep(fmin(due - f0, 0.005));
                    continue;
                }
                tick = f0 >= due;
                if (tick) due = fmax(due + 1 / stream_fps, f0);
            }
            if (tick && !first && !v->ended && (!v->paused || v->step)) {
                v->step = 0;
                if ((s = tsr__view_advance(v))) break;
                if (v->ended && (o->headless || nframes)) {   /* done: the shot is the last frame drawn */
                    if (shot && !(s = tsr__view_frame_target(v, &fb, &tw, &th)) && !(s = tsr__view_draw(v, fb, tw, th)))
                        s = tsr__view_read(v, fb, tw, th, shot);
                    break;
                }
                if (!v->ended) {
                    double now = tsr__now();
                    if (shown_at > 0) v->fps = v->fps > 0 ? 0.9 * v->fps + 0.1 / (now - shown_at) : 1 / (now - shown_at);
                    shown_at = now;
                    if ((s = tsr__view_load(v))) break;
                }
            }
        }
        first = 0;
        if ((s = tsr__view_process(v))) break;
        if ((s = tsr__view_frame_target(v, &fb, &tw, &th))) break;
        if ((s = tsr__view_draw(v, fb, tw, th))) break;
        glFinish();   /* the frame time covers the GPU's work, not only its queueing */
        if (tick) {
            f0 = tsr__now() - f0;
            t_sum += f0;
            recent = frames ? 0.9 * recent + 0.1 * f0 : f0;   /* the title shows recent frames */
            frames++;
            host_bytes = v->frame_bytes;
        }
        /* Off screen, a paused stream with no frame count would show the same frame for ever. */
        last = tick && ((nframes && frames >= nframes) || (stream && o->headless && !nframes && v->paused && !v->step));
        if (shot && last && (s = tsr__view_read(v, fb, tw, th, shot))) break;
        if (!o->headless) {
            if (!eglSwapBuffers(v->gl.dpy, v->gl.surf)) {
                s = tsr__fail(TSR_E_DEVICE, "eglSwapBuffers failed (0x%x)", (unsigned)eglGetError());
                break;
            }
#ifdef TSR_VIEW_X11
            if (tsr__now() - title_at > 0.25) {
                tsr__view_title(v, recent * 1e3, stream_fps);
                title_at = tsr__now();
            }
#endif
        } else if (stream && o->progress && tsr__now() - progress_at >= 1) {
            progress_at = tsr__now();
            fprintf(stderr, "\rtessera: view: frame %d, %.1f fps ", tsr__source_index(&v->src), frames / (progress_at - t0));
            progressed = 1;
        }
        if (last) break;
    }
    if (progressed) fputc('\n', stderr);
    if (st) {
        memset(st, 0, sizeof *st);
        st->frames = frames;
        st->seconds = tsr__now() - t0;
        st->ms_per_frame = frames ? t_sum / frames * 1e3 : 0;
        st->fps = t_sum > 0 ? frames / t_sum : 0;
        st->host_bytes_per_frame = host_bytes;
        st->path = v->path;
        st->stream_frame = tsr__source_index(&v->src);
        snprintf(st->renderer, sizeof st->renderer, "%s", v->gl.renderer);
        snprintf(st->platform, sizeof st->platform, "%s", v->gl.platform);
    }
    tsr__view_close(v);
    free(v);
    return s;
}

tsr_status tsr_view_run(const tsr_image *in, const tsr_view_options *o, tsr_image *shot, tsr_view_stats *st)
{
    tsr__view *v = NULL;
    tsr_status s;
    if (!in || !in->data || in->memory != TSR_HOST)
        return tsr__fail(TSR_E_ARG, "view: the input must be an image in host memory");
    if (in->depth != TSR_U8 && in->depth != TSR_U16)
        return tsr__fail(TSR_E_UNSUPPORTED, "view: %d-bit images cannot be shown", (int)in->depth * 8);
    if ((s = tsr__view_check(o, shot)) || (s = tsr__view_new(o, &v))) return s;
    return tsr__view_session(v, tsr__source_open_still(&v->src, in, o), shot, st);
}

tsr_status tsr_view_play(FILE *f, const char *name, const tsr_view_options *o, tsr_image *shot, tsr_view_stats *st)
{
    tsr__view *v = NULL;
    tsr_status s;
    if (!f || !name) return tsr__fail(TSR_E_ARG, "view: no stream to play");
    if ((s = tsr__view_check(o, shot)) || (s = tsr__view_new(o, &v))) return s;
    return tsr__view_session(v, tsr__source_open_stream(&v->src, f, name, o), shot, st);
}
