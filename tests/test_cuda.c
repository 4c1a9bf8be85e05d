/* GPU-specific tests: device-resident chains on a created stream, the CUDA backend on host
 * images, variants' supports() boundaries, unaligned and odd pitches, tall images (grid
 * striding), and the behaviour without a device. Every test that needs a GPU calls
 * SKIP("no CUDA device") when none is usable, so CI without a GPU counts them as skipped. */
#include "test.h"
#include <stdlib.h>
#ifdef TSR_HAVE_CUDA
#include <cuda_runtime.h>
#endif

#define NEED_DEVICE()                                                                      \
    do {                                                                                   \
        if (!tsr_cuda_available()) SKIP("no CUDA device");                                 \
    } while (0)

/* Random samples in every row of a host image. */
static void fill_random(tsr_image *img)
{
    unsigned maxv = img->depth == TSR_U8 ? 255u : 65535u;
    size_t n = (size_t)img->width * img->channels;
    for (int y = 0; y < img->height; y++)
        for (size_t i = 0; i < n; i++) {
            unsigned v = tsr_test_rand() & maxv;
            if (img->depth == TSR_U8) ((unsigned char *)img->data)[(size_t)y * img->stride + i] = (unsigned char)v;
            else ((unsigned short *)((unsigned char *)img->data + (size_t)y * img->stride))[i] = (unsigned short)v;
        }
}

/* Whether two host images have equal pixels; *at gets the first differing row. */
static int same_pixels(const tsr_image *a, const tsr_image *b, int *at)
{
    size_t row = tsr_image_row_bytes(a);
    *at = -1;
    if (a->width != b->width || a->height != b->height || a->channels != b->channels || a->depth != b->depth) return 0;
    for (int y = 0; y < a->height; y++)
        if (memcmp((char *)a->data + (size_t)y * a->stride, (char *)b->data + (size_t)y * b->stride, row)) {
            *at = y;
            return 0;
        }
    return 1;
}

/* The CPU reference result of op on a host image (NULL data on failure). */
static tsr_image reference(const char *opname, const tsr_image *src, const void *params)
{
    tsr_exec ex = {TSR_BACKEND_CPU, "reference", NULL, 0};
    tsr_image out = {0};
    CHECK_OK(tsr_run(tsr_op_find(opname), src, &out, params, &ex));
    return out;
}

/* Without a device: the CUDA backend is refused with TSR_E_NO_DEVICE and a message that says
 * why, device images cannot be created, and AUTO falls back to the CPU. With one: the device
 * is described. */
TEST(test_cuda_no_device_behaviour)
{
    tsr_image img, out = {0}, dev;
    tsr_exec cuda = {TSR_BACKEND_CUDA, NULL, NULL, 0};
    tsr_box_params p = {1, -1, -1, 0, 0};
    if (tsr_cuda_available()) {
        CHECK(tsr_cuda_compiled());
        CHECK(strlen(tsr_cuda_device_name()) > 0);
        CHECK_EQ(tsr_resolve_backend(NULL, TSR_HOST), TSR_BACKEND_CUDA);
        return;
    }
    CHECK_EQ(tsr_resolve_backend(NULL, TSR_HOST), TSR_BACKEND_CPU);
    CHECK_EQ(tsr_resolve_backend(NULL, TSR_DEVICE), TSR_BACKEND_CUDA);
    CHECK_OK(tsr_image_create(&img, 7, 5, 1, TSR_U8, TSR_HOST));
    fill_random(&img);
    CHECK_EQ(tsr_box(&img, &out, &p, &cuda), TSR_E_NO_DEVICE);
    CHECK(out.data == NULL);
    CHECK_MSG(strstr(tsr_last_error(), "CUDA") != NULL, "message: %s", tsr_last_error());
    CHECK_EQ(tsr_image_create(&dev, 7, 5, 1, TSR_U8, TSR_DEVICE), TSR_E_NO_DEVICE);
    CHECK_OK(tsr_box(&img, &out, &p, NULL));   /* AUTO: the CPU */
    tsr_image_free(&out);
    tsr_image_free(&img);
}

/* Upload once, box then threshold on device images asynchronously on a created stream, one
 * download at the end: equal to the CPU reference chain. */
TEST(test_cuda_device_chain)
{
#ifdef TSR_HAVE_CUDA
    tsr_image host, dsrc, dbox = {0}, dthr = {0}, back, ref_box, ref_thr;
    tsr_box_params bp = {3, -1, -1, TSR_BORDER_REFLECT101, 0};
    tsr_threshold_params tp = {15, 2.5, TSR_THRESH_MEAN, 0, 255};
    cudaStream_t stream;
    tsr_exec ex = {TSR_BACKEND_AUTO, NULL, NULL, 0};
    int at;
    NEED_DEVICE();
    CHECK_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
    ex.stream = stream;
    CHECK_OK(tsr_image_create(&host, 1031, 257, 1, TSR_U8, TSR_HOST));
    fill_random(&host);
    CHECK_OK(tsr_image_create(&dsrc, host.width, host.height, 1, TSR_U8, TSR_DEVICE));
    CHECK_OK(tsr_image_copy(&host, &dsrc, stream));
    CHECK_OK(tsr_box(&dsrc, &dbox, &bp, &ex));          /* device in: device out, no host copy */
    CHECK_EQ(dbox.memory, TSR_DEVICE);
    CHECK_OK(tsr_threshold(&dbox, &dthr, &tp, &ex));
    CHECK_EQ(dthr.memory, TSR_DEVICE);
    CHECK_OK(tsr_image_create(&back, host.width, host.height, 1, TSR_U8, TSR_HOST));
    CHECK_OK(tsr_image_copy(&dthr, &back, stream));
    CHECK_OK(tsr_stream_sync(stream));
    ref_box = reference("box", &host, &bp);
    ref_thr = reference("threshold", &ref_box, &tp);
    CHECK_MSG(same_pixels(&ref_thr, &back, &at), "chain differs from the reference at row %d", at);
    tsr_image_free(&ref_box);
    tsr_image_free(&ref_thr);
    tsr_image_free(&back);
    tsr_image_free(&dthr);
    tsr_image_free(&dbox);
    tsr_image_free(&dsrc);
    tsr_image_free(&host);
    CHECK_EQ(cudaStreamDestroy(stream), cudaSuccess);
#else
    SKIP("no CUDA device");
#endif
}

/* One case of an op: the default CUDA variant on host images through exec->backend CUDA. */
static void check_host_cuda(const char *opname, const tsr_image *src, const void *params, const char *what)
{
    tsr_exec ex = {TSR_BACKEND_CUDA, NULL, NULL, 0};
    tsr_image out = {0}, ref = reference(opname, src, params);
    int at;
    tsr_status s = tsr_run(tsr_op_find(opname), src, &out, params, &ex);
    CHECK_MSG(s == TSR_OK, "%s on %s: %s", opname, what, tsr_last_error());
    if (!s && ref.data) {
        CHECK_EQ(out.memory, TSR_HOST);
        CHECK_MSG(same_pixels(&ref, &out, &at), "%s (CUDA default) differs on %s at row %d", opname, what, at);
    }
    tsr_image_free(&out);
    tsr_image_free(&ref);
}

/* exec->backend = CUDA with host images: upload, run, download for every op. */
TEST(test_cuda_backend_host_images)
{
    tsr_image g8, rgb16;
    tsr_box_params bp = {7, -1, 2, TSR_BORDER_CONSTANT, 200};
    tsr_threshold_params tp = {31, -3, TSR_THRESH_MEAN, 1, 200};
    tsr_sums_params cols = {TSR_AXIS_COLUMNS}, rows = {TSR_AXIS_ROWS};
    tsr_resize_params rp = {333, 77};
    int none = 0;
    NEED_DEVICE();
    CHECK_OK(tsr_image_create(&g8, 1000, 301, 1, TSR_U8, TSR_HOST));
    CHECK_OK(tsr_image_create(&rgb16, 999, 233, 3, TSR_U16, TSR_HOST));
    fill_random(&g8);
    fill_random(&rgb16);
    check_host_cuda("invert", &rgb16, &none, "999x233 RGB 16-bit");
    check_host_cuda("box", &g8, &bp, "1000x301 gray");
    check_host_cuda("box", &rgb16, &bp, "999x233 RGB 16-bit");
    check_host_cuda("threshold", &g8, &tp, "1000x301 gray");
    check_host_cuda("sums", &g8, &cols, "columns");
    check_host_cuda("sums", &rgb16, &rows, "rows RGB 16-bit");
    check_host_cuda("gray", &rgb16, &none, "999x233 RGB 16-bit");
    check_host_cuda("resize", &rgb16, &rp, "999x233 -> 333x77");
    tsr_image_free(&g8);
    tsr_image_free(&rgb16);
}

/* Whether the named CUDA variant of op accepts src and params. */
static int cuda_supports(const char *opname, const char *variant, const tsr_image *src, const void *params)
{
    const tsr_op *op = tsr_op_find(opname);
    for (int i = 0; op->variants[i]; i++) {
        const tsr_variant *v = op->variants[i];
        if (v->backend == TSR_BACKEND_CUDA && !strcmp(v->name, variant)) return !v->supports || v->supports(src, params);
    }
    tsr_test_fail(__FILE__, __LINE__, "no CUDA variant %s/%s", opname, variant);
    return 0;
}

/* The narrow variants accept exactly what they can do, and the registry refuses the rest. */
TEST(test_cuda_supports_boundaries)
{
    tsr_image g8 = {64, 64, 1, TSR_U8, 64, (void *)16, TSR_DEVICE, 0};
    tsr_image g16 = {64, 64, 1, TSR_U16, 128, (void *)16, TSR_DEVICE, 0};
    tsr_box_params r1 = {1, -1, -1, 0, 0}, r2 = {2, -1, -1, 0, 0}, r1y2 = {1, 1, 2, 0, 0};
    tsr_box_params r16 = {16, -1, -1, 0, 0}, r17 = {16, 17, -1, 0, 0}, huge = {0, 60000, 3, 0, 0};
    tsr_box_params wide = {0, 1500, 3, 0, 0};
    tsr_threshold_params b33 = {33, 0, 0, 0, 255}, b35 = {35, 0, 0, 0, 255};
    tsr_sums_params cols = {TSR_AXIS_COLUMNS}, rows = {TSR_AXIS_ROWS};
    if (!tsr_cuda_compiled()) SKIP("no CUDA device");
    CHECK(cuda_supports("box", "unrolled3x3", &g8, &r1));
    CHECK(!cuda_supports("box", "unrolled3x3", &g8, &r2));
    CHECK(!cuda_supports("box", "unrolled3x3", &g8, &r1y2));
    CHECK(cuda_supports("box", "shared", &g8, &r16));
    CHECK(!cuda_supports("box", "shared", &g8, &r17));
    CHECK(cuda_supports("box", "global", &g8, &huge));
    CHECK(!cuda_supports("box", "fast", &g8, &huge));
    CHECK(cuda_supports("threshold", "shared-tile", &g8, &b33));
    CHECK(!cuda_supports("threshold", "shared-tile", &g8, &b35));
    CHECK(cuda_supports("threshold", "fused", &g8, &b35));
    CHECK(cuda_supports("sums", "byte", &g8, &cols));
    CHECK(!cuda_supports("sums", "byte", &g16, &cols));
    CHECK(!cuda_supports("sums", "byte", &g8, &rows));
    CHECK(!cuda_supports("sums", "word4", &g8, &rows));
    CHECK(!cuda_supports("sums", "vec16", &g16, &rows));
    CHECK(cuda_supports("sums", "vec16", &g16, &cols));
    CHECK(cuda_supports("sums", "tiled", &g16, &rows));
    NEED_DEVICE();
    CHECK(cuda_supports("box", "fast", &g8, &wide));   /* needs the device's opt-in shared memory */
    {
        tsr_image host, out = {0};
        tsr_exec ex = {TSR_BACKEND_CUDA, "unrolled3x3", NULL, 0};
        tsr_exec big = {TSR_BACKEND_CUDA, NULL, NULL, 0};
        tsr_image ref;
        int at;
        CHECK_OK(tsr_image_create(&host, 9, 7, 1, TSR_U8, TSR_HOST));
        fill_random(&host);
        CHECK_EQ(tsr_box(&host, &out, &r2, &ex), TSR_E_UNSUPPORTED);
        CHECK(out.data == NULL);
        /* The default falls back to a variant that handles a huge radius. */
        CHECK_OK(tsr_box(&host, &out, &huge, &big));
        ref = reference("box", &host, &huge);
        if (out.data && ref.data) CHECK_MSG(same_pixels(&ref, &out, &at), "huge radius differs at row %d", at);
        tsr_image_free(&ref);
        tsr_image_free(&out);
        tsr_image_free(&host);
    }
}

/* The CUDA backend's default variant name for op on src (NULL if none). */
static const char *cuda_default(const char *opname, const tsr_image *src, const void *params)
{
    tsr_exec ex = {TSR_BACKEND_CUDA, NULL, NULL, 0};
    const tsr_variant *v = tsr_choose_variant(tsr_op_find(opname), &ex, src, params);
    return v ? v->name : NULL;
}

/* Square windows that box/ring and box/stream both take go to ring up to box radius 6 and
 * threshold block 15 and to stream beyond, at every size (tsr__ring_prefer); ring keeps them where
 * stream is switched off; radii only one of them takes are unaffected. Stream keeps its squares
 * up to 16 at every size unless TSR_CUDA_STREAM_WIDE_MPIX gives smaller images to wide, 17 to 27
 * from 24 Mpixels, 28 to 32 from 48; wide takes the rest (tsr__stream_prefer). */
TEST(test_cuda_ring_stream_preference)
{
    tsr_image uhd = {3840, 2160, 1, TSR_U8, 3840, (void *)16, TSR_DEVICE, 0};
    tsr_image big = {8192, 8192, 1, TSR_U8, 8192, (void *)16, TSR_DEVICE, 0};
    tsr_image fuhd = {7680, 4320, 1, TSR_U8, 7680, (void *)16, TSR_DEVICE, 0};
    tsr_image fhd = {1920, 1080, 1, TSR_U8, 1920, (void *)16, TSR_DEVICE, 0};
    tsr_image m26 = {5120, 5120, 1, TSR_U8, 5120, (void *)16, TSR_DEVICE, 0};
    tsr_box_params r17 = {17, -1, -1, 0, 0}, r20 = {20, -1, -1, 0, 0};
    tsr_box_params r27 = {27, -1, -1, 0, 0}, r28 = {28, -1, -1, 0, 0}, r32 = {32, -1, -1, 0, 0};
    tsr_threshold_params b35 = {35, 0, 0, 0, 255}, b55 = {55, 0, 0, 0, 255}, b57 = {57, 0, 0, 0, 255};
    tsr_box_params r3 = {3, -1, -1, 0, 0}, r6 = {6, -1, -1, 0, 0}, r7 = {7, -1, -1, 0, 0}, r8 = {8, -1, -1, 0, 0};
    tsr_box_params r12 = {12, -1, -1, 0, 0}, r13 = {13, -1, -1, 0, 0}, r16 = {16, -1, -1, 0, 0};
    tsr_box_params r9x10 = {0, 9, 10, 0, 0}, r11 = {11, -1, -1, 0, 0};
    tsr_threshold_params b15 = {15, 0, 0, 0, 255}, b17 = {17, 0, 0, 0, 255}, b25 = {25, 0, 0, 0, 255}, b27 = {27, 0, 0, 0, 255};
    const char *name;
    NEED_DEVICE();   /* the rings of ry 11 and 12 need the device's opt-in shared memory */
#define DEFAULT_IS(op, img, p, want)                                                                  \
    do {                                                                                              \
        name = cuda_default(op, img, p);                                                              \
        CHECK_MSG(name && !strcmp(name, want), "%s on %dx%d: default %s, expected %s", #p, (img)->width, \
                  (img)->height, name ? name : "(none)", want);                                       \
    } while (0)
    DEFAULT_IS("box", &uhd, &r3, "ring");
    DEFAULT_IS("box", &big, &r6, "ring");
    DEFAULT_IS("box", &uhd, &r7, "stream");
    DEFAULT_IS("box", &big, &r7, "stream");
    DEFAULT_IS("box", &uhd, &r8, "stream");
    DEFAULT_IS("box", &uhd, &r11, "stream");
    DEFAULT_IS("box", &uhd, &r12, "stream");
    DEFAULT_IS("box", &fhd, &r12, "stream");
    DEFAULT_IS("box", &fhd, &r13, "stream");
    DEFAULT_IS("box", &fhd, &r16, "stream");
    DEFAULT_IS("box", &big, &r16, "stream");
    DEFAULT_IS("box", &big, &r8, "stream");
    DEFAULT_IS("box", &fuhd, &r12, "stream");
    DEFAULT_IS("box", &uhd, &r13, "stream");
    DEFAULT_IS("box", &uhd, &r9x10, "wide");
    DEFAULT_IS("threshold", &big, &b15, "ring");
    DEFAULT_IS("threshold", &uhd, &b17, "stream");
    DEFAULT_IS("threshold", &uhd, &b25, "stream");
    DEFAULT_IS("threshold", &fhd, &b25, "stream");
    DEFAULT_IS("threshold", &fhd, &b27, "stream");
    DEFAULT_IS("box", &uhd, &r16, "stream");
    DEFAULT_IS("box", &big, &r17, "stream");
    DEFAULT_IS("box", &big, &r28, "stream");
    DEFAULT_IS("box", &big, &r32, "stream");
    DEFAULT_IS("box", &m26, &r20, "stream");
    DEFAULT_IS("box", &m26, &r27, "stream");
    DEFAULT_IS("box", &m26, &r28, "wide");
    DEFAULT_IS("box", &uhd, &r17, "wide");
    DEFAULT_IS("box", &fhd, &r17, "wide");
    DEFAULT_IS("threshold", &big, &b35, "stream");
    DEFAULT_IS("threshold", &big, &b57, "stream");
    DEFAULT_IS("threshold", &m26, &b55, "stream");
    DEFAULT_IS("threshold", &m26, &b57, "wide");
    DEFAULT_IS("threshold", &uhd, &b35, "wide");
    setenv("TSR_CUDA_STREAM_WIDE_MPIX", "4", 1);   /* wide for ry 13..16 under 4 Mpixels */
    DEFAULT_IS("box", &fhd, &r16, "wide");
    DEFAULT_IS("box", &fhd, &r12, "stream");
    DEFAULT_IS("box", &uhd, &r16, "stream");
    unsetenv("TSR_CUDA_STREAM_WIDE_MPIX");
    DEFAULT_IS("threshold", &big, &b25, "stream");
    setenv("TSR_CUDA_STREAM_RMAX", "0", 1);   /* stream declines every radius */
    DEFAULT_IS("box", &uhd, &r12, "ring");
    DEFAULT_IS("box", &big, &r8, "ring");
    DEFAULT_IS("threshold", &uhd, &b25, "ring");
    unsetenv("TSR_CUDA_STREAM_RMAX");
#undef DEFAULT_IS
}

/* Copy a host image to a device image wrapped at an offset of 'offset' bytes with 'extra'
 * bytes of padding per row (odd pitches, unaligned rows). *buf owns the device memory. */
static int upload_odd(const tsr_image *host, size_t offset, size_t extra, tsr_image *buf, tsr_image *wrapped)
{
    size_t row = tsr_image_row_bytes(host), stride = row + extra;
    size_t bytes = stride * (size_t)host->height + offset + 16;
    tsr_status s = tsr_image_create(buf, (int)bytes, 1, 1, TSR_U8, TSR_DEVICE);
    CHECK_OK(s);
    if (s) return 0;
    s = tsr_image_wrap(wrapped, host->width, host->height, host->channels, host->depth,
                       (unsigned char *)buf->data + offset, stride, TSR_DEVICE);
    CHECK_OK(s);
    if (!s) s = tsr_image_copy(host, wrapped, NULL);
    CHECK_OK(s);
    return s == TSR_OK;
}

/* Every CUDA variant of op on device images with unaligned starts and odd pitches (input and
 * output), compared with the reference. */
static void check_odd_pitches(const char *opname, const tsr_image *host, const void *params, const char *what)
{
    const tsr_op *op = tsr_op_find(opname);
    tsr_image ref = reference(opname, host, params), shape = {0};
    if (!ref.data) return;
    CHECK_OK(op->check(host, params, &shape));
    for (int i = 0; op->variants[i]; i++) {
        const tsr_variant *v = op->variants[i];
        tsr_image sbuf, src, dbuf, dst, back;
        tsr_exec ex = {TSR_BACKEND_CUDA, v->name, NULL, 0};
        size_t dextra = (size_t)shape.depth * 3, doff = (size_t)shape.depth * 5;
        int at;
        if (v->backend != TSR_BACKEND_CUDA || (v->supports && !v->supports(host, params))) continue;
        if (!upload_odd(host, host->depth, (size_t)host->depth * 7, &sbuf, &src)) continue;
        /* A variant that needs aligned rows declines these (supports() sees the device image);
         * then the CUDA dispatcher must pick another variant, checked in its place. */
        if (v->supports && !v->supports(&src, params)) ex.variant = NULL;
        CHECK_OK(tsr_image_create(&dbuf, (int)((tsr_image_row_bytes(&ref) + dextra) * ref.height + doff + 16), 1, 1,
                                  TSR_U8, TSR_DEVICE));
        CHECK_OK(tsr_image_wrap(&dst, ref.width, ref.height, ref.channels, ref.depth, (unsigned char *)dbuf.data + doff,
                                tsr_image_row_bytes(&ref) + dextra, TSR_DEVICE));
        CHECK_OK(tsr_image_create(&back, ref.width, ref.height, ref.channels, ref.depth, TSR_HOST));
        {
            tsr_status s = tsr_run(op, &src, &dst, params, &ex);
            CHECK_MSG(s == TSR_OK, "%s/%s on %s: %s", opname, v->name, what, tsr_last_error());
            if (!s) {
                CHECK_OK(tsr_image_copy(&dst, &back, NULL));
                CHECK_OK(tsr_stream_sync(NULL));
                CHECK_MSG(same_pixels(&ref, &back, &at), "%s/%s differs on %s (odd pitches) at row %d", opname,
                          v->name, what, at);
            }
        }
        tsr_image_free(&back);
        tsr_image_free(&dbuf);
        tsr_image_free(&sbuf);
    }
    tsr_image_free(&ref);
}

/* box and threshold with an aligned source but a destination whose rows are not 16-byte aligned
 * (supports() sees only the source; the viewer's pixel buffers are such destinations): the reg,
 * ring and wide variants, asked for by name or chosen by default, hand the run to a kernel that takes
 * any alignment, and the result is exact. Radii 1 and 3 (reg, ring, wide), 64 (wide beyond box/warp's
 * 48: box/fast), blocks 5, 17 and 129. */
TEST(test_cuda_unaligned_destination)
{
    NEED_DEVICE();
    tsr_image host, src, dbuf, dst, back;
    static const char *variants[] = {"reg", "ring", "wide", NULL};
    static const int radii[] = {1, 3, 64};
    CHECK_OK(tsr_image_create(&host, 700, 37, 1, TSR_U8, TSR_HOST));
    fill_random(&host);
    CHECK_OK(tsr_image_create(&src, 700, 37, 1, TSR_U8, TSR_DEVICE));
    CHECK_OK(tsr_image_copy(&host, &src, NULL));
    CHECK_OK(tsr_image_create(&dbuf, 705 * 37 + 16, 1, 1, TSR_U8, TSR_DEVICE));
    CHECK_OK(tsr_image_wrap(&dst, 700, 37, 1, TSR_U8, (unsigned char *)dbuf.data + 3, 705, TSR_DEVICE));
    CHECK_OK(tsr_image_create(&back, 700, 37, 1, TSR_U8, TSR_HOST));
    for (int k = 0; k < 2; k++)
        for (int v = 0; v < 4; v++)
            for (int r = 0; r < 3; r++) {
                const char *opname = k ? "threshold" : "box";
                tsr_box_params bp = {radii[r], -1, -1, TSR_BORDER_REFLECT101, 0};
                tsr_threshold_params tp = {2 * radii[r] + 3, 2.0, TSR_THRESH_MEAN, 0, 255};
                const void *params = k ? (const void *)&tp : (const void *)&bp;
                const tsr_variant *vi;
                tsr_exec ex = {TSR_BACKEND_CUDA, variants[v], NULL, 0};
                tsr_image ref;
                int at;
                vi = tsr_choose_variant(tsr_op_find(opname), &ex, &src, params);
                if (variants[v] && !vi) continue;   /* reg beyond its radii */
                ref = reference(opname, &host, params);
                CHECK_OK(tsr_run(tsr_op_find(opname), &src, &dst, params, &ex));
                CHECK_OK(tsr_image_copy(&dst, &back, NULL));
                CHECK_OK(tsr_stream_sync(NULL));
                CHECK_MSG(same_pixels(&ref, &back, &at), "%s/%s radius %d with an unaligned destination differs at row %d",
                          opname, variants[v] ? variants[v] : "(default)", radii[r], at);
                tsr_image_free(&ref);
            }
    tsr_image_free(&back);
    tsr_image_free(&dbuf);
    tsr_image_free(&src);
    tsr_image_free(&host);
}

TEST(test_cuda_odd_pitches)
{
    static const int cns[] = {1, 3, 4};
    int none = 0;
    NEED_DEVICE();
    for (int d = 1; d <= 2; d++)
        for (int k = 0; k < 3; k++) {
            tsr_image img;
            tsr_box_params bp = {5, -1, -1, (d + k) % 4, 77};
            tsr_sums_params cols = {TSR_AXIS_COLUMNS}, rows = {TSR_AXIS_ROWS};
            tsr_resize_params rp = {41, 19}, rp2 = {50, 20};
            char what[64];
            CHECK_OK(tsr_image_create(&img, 101, 43, cns[k], (tsr_depth)d, TSR_HOST));
            fill_random(&img);
            snprintf(what, sizeof what, "101x43x%d %d-bit", cns[k], d * 8);
            check_odd_pitches("invert", &img, &none, what);
            check_odd_pitches("box", &img, &bp, what);
            check_odd_pitches("sums", &img, &cols, what);
            check_odd_pitches("sums", &img, &rows, what);
            check_odd_pitches("resize", &img, &rp, what);
            if (img.width % 2 == 0) check_odd_pitches("resize", &img, &rp2, what);
            if (cns[k] >= 3) check_odd_pitches("gray", &img, &none, what);
            if (cns[k] == 1 && d == 1) {
                tsr_threshold_params tp = {7, 1.5, 0, 0, 255};
                check_odd_pitches("threshold", &img, &tp, what);
            }
            tsr_image_free(&img);
        }
}

/* Images taller than the 65535 blocks of grid.y, and wide ones with several tiles per row:
 * every CUDA variant (the slow ones at small radii) against the reference. */
TEST(test_cuda_tall_and_wide)
{
    tsr_image tall, wide;
    tsr_box_params bp = {1, -1, -1, TSR_BORDER_REFLECT, 0}, bp2 = {70, 3, 70, TSR_BORDER_REFLECT101, 0};
    tsr_sums_params cols = {TSR_AXIS_COLUMNS}, rows = {TSR_AXIS_ROWS};
    tsr_resize_params rp = {3, 35000};
    int none = 0;
    NEED_DEVICE();
    CHECK_OK(tsr_image_create(&tall, 5, 70001, 1, TSR_U8, TSR_HOST));
    CHECK_OK(tsr_image_create(&wide, 9001, 40, 2, TSR_U8, TSR_HOST));
    fill_random(&tall);
    fill_random(&wide);
    check_odd_pitches("invert", &tall, &none, "5x70001");
    check_odd_pitches("box", &tall, &bp, "5x70001 r=1");
    check_odd_pitches("box", &wide, &bp, "9001x40x2 r=1");
    check_odd_pitches("box", &wide, &bp2, "9001x40x2 rx=3 ry=70");
    check_odd_pitches("sums", &tall, &cols, "5x70001 columns");
    check_odd_pitches("sums", &tall, &rows, "5x70001 rows");
    check_odd_pitches("resize", &tall, &rp, "5x70001 -> 3x35000");
    tsr_image_free(&tall);
    tsr_image_free(&wide);
}

/* Large images at the benchmark's size, default variants only: the fast paths (vector loads,
 * several tiles and strips) against the threaded CPU result, which test_variants ties to the
 * reference. */
TEST(test_cuda_large_defaults)
{
    static const int radii[] = {1, 7, 64, 300};
    tsr_image img, ref = {0}, out = {0};
    tsr_exec cpu = {TSR_BACKEND_CPU, NULL, NULL, 0}, gpu = {TSR_BACKEND_CUDA, NULL, NULL, 0};
    int at;
    NEED_DEVICE();
    CHECK_OK(tsr_image_create(&img, 4099, 2051, 1, TSR_U8, TSR_HOST));
    fill_random(&img);
    for (int i = 0; i < 4; i++) {
        tsr_box_params bp = {radii[i], -1, -1, i % 4, 9};
        tsr_threshold_params tp = {2 * radii[i] + 1, 1, 0, i & 1, 255};
        CHECK_OK(tsr_box(&img, &ref, &bp, &cpu));
        CHECK_OK(tsr_box(&img, &out, &bp, &gpu));
        if (ref.data && out.data) CHECK_MSG(same_pixels(&ref, &out, &at), "box r=%d differs at row %d", radii[i], at);
        tsr_image_free(&ref);
        tsr_image_free(&out);
        CHECK_OK(tsr_threshold(&img, &ref, &tp, &cpu));
        CHECK_OK(tsr_threshold(&img, &out, &tp, &gpu));
        if (ref.data && out.data)
            CHECK_MSG(same_pixels(&ref, &out, &at), "threshold block=%d differs at row %d", tp.block, at);
        tsr_image_free(&ref);
        tsr_image_free(&out);
    }
    tsr_image_free(&img);
}

/* Out of device memory: with nearly all of the GPU's memory taken by this process, a host
 * image too large for what is left gets TSR_E_DEVICE_NOMEM under the CUDA backend and runs on
 * the CPU under auto, with the reference's result. The memory is given back afterwards. */
TEST(test_cuda_out_of_memory_fallback)
{
#ifdef TSR_HAVE_CUDA
    enum { MAX_BLOCKS = 4096 };
    static void *blocks[MAX_BLOCKS];
    int nblocks = 0;
    size_t free_b = 0, total_b = 0, chunk = (size_t)1 << 30;
    tsr_image img, ref = {0}, out = {0};
    tsr_exec gpu = {TSR_BACKEND_CUDA, NULL, NULL, 0}, autox = {TSR_BACKEND_AUTO, NULL, NULL, 0};
    tsr_box_params bp = {3, -1, -1, 0, 0};
    int at;
    NEED_DEVICE();
    /* compute-sanitizer counts each refused cudaMalloc as an API error. */
    if (getenv("TSR_TEST_SANITIZER")) SKIP("deliberate allocation failures under compute-sanitizer");
    CHECK_OK(tsr_image_create(&img, 4096, 4096, 1, TSR_U8, TSR_HOST));
    fill_random(&img);
    ref = reference("box", &img, &bp);
    /* Warm the library's own device state first, so that only image buffers are refused. */
    CHECK_OK(tsr_box(&img, &out, &bp, &gpu));
    tsr_image_free(&out);
    /* Take memory in shrinking chunks until less than 4 MiB is left. */
    while (chunk >= ((size_t)1 << 20) && nblocks < MAX_BLOCKS) {
        void *p = NULL;
        if (cudaMalloc(&p, chunk) == cudaSuccess) blocks[nblocks++] = p;
        else {
            (void)cudaGetLastError();
            chunk /= 2;
        }
    }
    cudaMemGetInfo(&free_b, &total_b);
    CHECK_MSG(free_b < ((size_t)16 << 20), "could not fill device memory (%zu bytes free)", free_b);
    CHECK_EQ(tsr_box(&img, &out, &bp, &gpu), TSR_E_DEVICE_NOMEM);
    CHECK(out.data == NULL);
    CHECK(strstr(tsr_last_error(), "memory") != NULL);
    CHECK_OK(tsr_box(&img, &out, &bp, &autox));
    if (ref.data && out.data) CHECK_MSG(same_pixels(&ref, &out, &at), "auto fallback differs at row %d", at);
    tsr_image_free(&out);
    while (nblocks) cudaFree(blocks[--nblocks]);
    /* With the memory back, the GPU runs again. */
    CHECK_OK(tsr_box(&img, &out, &bp, &gpu));
    if (ref.data && out.data) CHECK_MSG(same_pixels(&ref, &out, &at), "box after release differs at row %d", at);
    tsr_image_free(&out);
    tsr_image_free(&ref);
    tsr_image_free(&img);
#else
    SKIP("built without CUDA");
#endif
}
