/* The viewer: off-screen screenshots equal the operations' outputs pixel for pixel on every
 * path that runs here (cpu with Mesa or NVIDIA GL; interop and hostcopy with a CUDA GPU), the
 * split, live keys, bytes through the host per frame, and the refusals that need no GL. */
#include "test.h"
#include "../src/view/view.h"
#include <stdlib.h>

#ifdef TSR_HAVE_VIEW

#if defined(__SANITIZE_ADDRESS__)
/* GL drivers (Mesa, NVIDIA) keep allocations until exit: not tessera's leaks. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:libEGL\nleak:libGLX\nleak:libGLdispatch\nleak:libgallium\nleak:_dri.so\nleak:libLLVM\n"
           "leak:libnvidia\nleak:libX11\nleak:libxcb\nleak:libglapi\nleak:libdrm\n";
}
#endif

/* A random host image. */
static void tsr__vt_random(tsr_image *img, int w, int h, int ch, tsr_depth d)
{
    CHECK_OK(tsr_image_create(img, w, h, ch, d, TSR_HOST));
    for (int y = 0; y < h; y++) {
        unsigned char *row = (unsigned char *)img->data + (size_t)y * img->stride;
        for (size_t i = 0; i < (size_t)w * ch * d; i++) row[i] = (unsigned char)tsr_test_rand();
    }
}

/* Add stage NAME to o with its defaults. */
static void tsr__vt_stage(tsr_view_options *o, const char *name)
{
    o->stages[o->nstages].op = tsr_op_find(name);
    tsr_params_default(o->stages[o->nstages].op, o->stages[o->nstages].params);
    o->nstages++;
}

/* Run the chain of o on the CPU, the reference for the screenshots. */
static tsr_status tsr__vt_reference(const tsr_image *in, const tsr_view_options *o, tsr_image *out)
{
    tsr_image cur = {0}, next = {0};
    tsr_exec ex = {TSR_BACKEND_CPU, NULL, NULL, 0};
    tsr_status s = tsr_image_create(&cur, in->width, in->height, in->channels, in->depth, TSR_HOST);
    if (!s) s = tsr_image_copy(in, &cur, NULL);
    for (int i = 0; !s && i < o->nstages; i++) {
        memset(&next, 0, sizeof next);
        s = tsr_run(o->stages[i].op, &cur, &next, o->stages[i].params, &ex);
        tsr_image_free(&cur);
        cur = next;
    }
    if (s) tsr_image_free(&cur);
    else *out = cur;
    return s;
}

/* The screenshot pixel (x, y) as the 8-bit value GL shows for sample v of 'depth'. */
static int tsr__vt_sample(const tsr_image *img, int x, int y, int c)
{
    const unsigned char *row = (const unsigned char *)img->data + (size_t)y * img->stride;
    if (img->depth == TSR_U16) return (int)((((const uint16_t *)row)[(size_t)x * img->channels + c] * 255u + 32767u) / 65535u);
    return row[(size_t)x * img->channels + c];
}

/* Count pixels of shot (RGB) that differ from ref shown as RGB (gray: R=G=B; alpha dropped)
 * for columns [x0, x1), allowing 'tol'. */
static long tsr__vt_diff(const tsr_image *shot, const tsr_image *ref, int x0, int x1, int tol)
{
    long bad = 0;
    for (int y = 0; y < shot->height; y++)
        for (int x = x0; x < x1; x++)
            for (int c = 0; c < 3; c++) {
                int want = tsr__vt_sample(ref, x, y, ref->channels < 3 ? 0 : c);
                int got = ((const unsigned char *)shot->data)[(size_t)y * shot->stride + (size_t)x * 3 + c];
                if (abs(want - got) > tol) bad++;
            }
    return bad;
}

/* Render o headless on 'path' and compare with the CPU reference; returns 0 when GL is missing
 * (after SKIP's message), 1 otherwise. */
static int tsr__vt_check(const tsr_image *in, tsr_view_options o, tsr_view_path path, const char *what, int tol)
{
    tsr_image shot = {0}, ref = {0};
    tsr_view_stats st;
    tsr_status s;
    o.headless = 1;
    o.quiet = 1;
    o.path = path;
    if (!o.frames) o.frames = 2;
    s = tsr_view_run(in, &o, &shot, &st);
    if (s == TSR_E_UNSUPPORTED && strstr(tsr_last_error(), "OpenGL")) {
        tsr_test_skip("no off-screen OpenGL here: %s", tsr_last_error());
        return 0;
    }
    CHECK_MSG(s == TSR_OK, "%s: %s", what, tsr_last_error());
    if (s) return 1;
    CHECK_OK(tsr__vt_reference(in, &o, &ref));
    CHECK_EQ(shot.width, ref.width);
    CHECK_EQ(shot.height, ref.height);
    CHECK_EQ(shot.channels, 3);
    CHECK_EQ(st.path, path);
    CHECK_EQ(st.frames, o.frames);
    if (shot.width == ref.width && shot.height == ref.height) {
        long bad = tsr__vt_diff(&shot, &ref, 0, ref.width, tol);
        CHECK_MSG(bad == 0, "%s on %s: %ld samples differ from the operation's output", what, tsr_view_path_name(path), bad);
    }
    {   /* bytes through the host per frame: none for interop; output bytes per copy otherwise */
        unsigned long long out_bytes = (unsigned long long)ref.width * ref.height * ref.channels * ref.depth;
        unsigned long long want = path == TSR_VIEW_PATH_INTEROP ? 0 : path == TSR_VIEW_PATH_HOSTCOPY ? 2 * out_bytes
                                                                                                    : out_bytes;
        CHECK_MSG(st.host_bytes_per_frame == want, "%s on %s: %llu bytes through the host per frame, expected %llu",
                  what, tsr_view_path_name(path), st.host_bytes_per_frame, want);
    }
    tsr_image_free(&shot);
    tsr_image_free(&ref);
    return 1;
}

/* Every displayable operation and a few chains, on the given path. */
static void tsr__vt_all_ops(tsr_view_path path)
{
    tsr_image rgb, gray, rgba;
    tsr__vt_random(&rgb, 37, 23, 3, TSR_U8);
    tsr__vt_random(&gray, 41, 19, 1, TSR_U8);
    tsr__vt_random(&rgba, 16, 9, 4, TSR_U8);
    {
        tsr_view_options o = {0};
        if (!tsr__vt_check(&rgb, o, path, "no operation", 0)) goto out;
    }
    {
        tsr_view_options o = {0};
        tsr__vt_stage(&o, "invert");
        tsr__vt_check(&rgb, o, path, "invert", 0);
        tsr__vt_check(&rgba, o, path, "invert RGBA", 0);
    }
    {
        tsr_view_options o = {0};
        tsr__vt_stage(&o, "box");
        ((tsr_box_params *)o.stages[0].params)->radius = 3;
        tsr__vt_check(&rgb, o, path, "box radius 3", 0);
        tsr__vt_check(&gray, o, path, "box radius 3 gray", 0);
    }
    {
        tsr_view_options o = {0};
        tsr__vt_stage(&o, "gray");
        tsr__vt_check(&rgb, o, path, "gray", 0);
        tsr__vt_stage(&o, "box");
        tsr__vt_check(&rgb, o, path, "gray,box", 0);
    }
    {
        tsr_view_options o = {0};
        tsr_threshold_params *tp;
        tsr__vt_stage(&o, "gray");
        tsr__vt_stage(&o, "threshold");
        tp = (tsr_threshold_params *)o.stages[1].params;
        tp->block = 7;
        tp->c = 3;
        tsr__vt_check(&rgb, o, path, "gray,threshold", 0);
    }
    {
        tsr_view_options o = {0};
        tsr__vt_stage(&o, "resize");
        ((tsr_resize_params *)o.stages[0].params)->width = 12;
        ((tsr_resize_params *)o.stages[0].params)->height = 7;
        tsr__vt_check(&rgb, o, path, "resize to 12x7", 0);
    }
out:
    tsr_image_free(&rgb);
    tsr_image_free(&gray);
    tsr_image_free(&rgba);
}

TEST(test_view_cpu_screenshot_equals_output)
{
    tsr__vt_all_ops(TSR_VIEW_PATH_CPU);
}

TEST(test_view_interop_screenshot_equals_output)
{
    if (!tsr_cuda_available()) SKIP("no CUDA device: %s", tsr_cuda_device_name());
    tsr__vt_all_ops(TSR_VIEW_PATH_INTEROP);
}

TEST(test_view_hostcopy_screenshot_equals_output)
{
    if (!tsr_cuda_available()) SKIP("no CUDA device: %s", tsr_cuda_device_name());
    tsr__vt_all_ops(TSR_VIEW_PATH_HOSTCOPY);
}

TEST(test_view_16bit_shown_scaled)
{
    tsr_image in;
    tsr_view_options o = {0};
    tsr__vt_random(&in, 13, 11, 1, TSR_U16);
    tsr__vt_stage(&o, "invert");
    tsr__vt_check(&in, o, TSR_VIEW_PATH_CPU, "invert 16-bit", 1);   /* GL rounds 16 to 8 bits */
    tsr_image_free(&in);
}

TEST(test_view_split_shows_input_left_output_right)
{
    tsr_image in, shot = {0}, ref = {0};
    tsr_view_options o = {0};
    tsr_status s;
    tsr__vt_random(&in, 30, 17, 3, TSR_U8);
    tsr__vt_stage(&o, "invert");
    o.headless = o.quiet = o.split = 1;
    o.split_at = 0.3;
    o.path = TSR_VIEW_PATH_CPU;
    s = tsr_view_run(&in, &o, &shot, NULL);
    if (s == TSR_E_UNSUPPORTED) {
        tsr_image_free(&in);
        SKIP("no off-screen OpenGL here: %s", tsr_last_error());
    }
    CHECK_OK(s);
    CHECK_OK(tsr__vt_reference(&in, &o, &ref));
    if (!s && ref.data) {
        CHECK_EQ(tsr__vt_diff(&shot, &in, 0, 9, 0), 0);     /* lround(0.3 * 30) = 9 columns before */
        CHECK_EQ(tsr__vt_diff(&shot, &ref, 9, 30, 0), 0);
    }
    tsr_image_free(&shot);
    tsr_image_free(&ref);
    tsr_image_free(&in);
}

TEST(test_view_keys_change_parameters_live)
{
    tsr_image in, shot = {0}, ref = {0};
    tsr_view_options o = {0};
    tsr_status s;
    tsr__vt_random(&in, 25, 21, 1, TSR_U8);
    tsr__vt_stage(&o, "box");
    o.headless = o.quiet = 1;
    o.path = TSR_VIEW_PATH_CPU;
    o.keys = "RRRr";   /* radius 1 -> 3 */
    s = tsr_view_run(&in, &o, &shot, NULL);
    if (s == TSR_E_UNSUPPORTED) {
        tsr_image_free(&in);
        SKIP("no off-screen OpenGL here: %s", tsr_last_error());
    }
    CHECK_OK(s);
    ((tsr_box_params *)o.stages[0].params)->radius = 3;
    CHECK_OK(tsr__vt_reference(&in, &o, &ref));
    if (!s && ref.data) CHECK_EQ(tsr__vt_diff(&shot, &ref, 0, 25, 0), 0);
    tsr_image_free(&shot);
    tsr_image_free(&ref);

    /* 'o' on a gray image from box: the next operation that accepts it (threshold) */
    o.keys = "o";
    s = tsr_view_run(&in, &o, &shot, NULL);
    CHECK_OK(s);
    if (!s) {
        tsr_view_options t = {0};
        tsr__vt_stage(&t, "threshold");
        ((tsr_threshold_params *)t.stages[0].params)->block = 11;
        CHECK_OK(tsr__vt_reference(&in, &t, &ref));
        if (ref.data) CHECK_EQ(tsr__vt_diff(&shot, &ref, 0, 25, 0), 0);
    }
    tsr_image_free(&shot);
    tsr_image_free(&ref);
    tsr_image_free(&in);
}

TEST(test_view_refuses_before_any_gl)
{
    tsr_image in;
    tsr_view_options o = {0};
    tsr__vt_random(&in, 8, 8, 3, TSR_U8);
    CHECK(!tsr_view_op_displayable(tsr_op_find("sums")));
    CHECK(tsr_view_op_displayable(tsr_op_find("threshold")));
    CHECK(tsr_view_op_displayable(tsr_op_find("resize")));
    tsr__vt_stage(&o, "threshold");   /* needs a gray input */
    ((tsr_threshold_params *)o.stages[0].params)->block = 3;
    o.headless = o.quiet = 1;
    CHECK_EQ(tsr_view_run(&in, &o, NULL, NULL), TSR_E_UNSUPPORTED);
    CHECK(strstr(tsr_last_error(), "threshold") != NULL);
    o.stages[0].op = tsr_op_find("box");
    tsr_params_default(o.stages[0].op, o.stages[0].params);
    ((tsr_box_params *)o.stages[0].params)->radius = -3;
    CHECK_EQ(tsr_view_run(&in, &o, NULL, NULL), TSR_E_ARG);
    o.headless = 0;   /* a window screenshot needs a frame count */
    ((tsr_box_params *)o.stages[0].params)->radius = 1;
    {
        tsr_image shot = {0};
        CHECK_EQ(tsr_view_run(&in, &o, &shot, NULL), TSR_E_ARG);
        CHECK(shot.data == NULL);
    }
    if (!tsr_cuda_available()) {
        o.headless = 1;
        o.path = TSR_VIEW_PATH_INTEROP;
        CHECK_EQ(tsr_view_run(&in, &o, NULL, NULL), TSR_E_NO_DEVICE);
    }
    tsr_image_free(&in);
}

TEST(test_view_window_screenshot)
{
    tsr_image in, shot = {0}, ref = {0};
    tsr_view_options o = {0};
    tsr_status s;
    const char *d = getenv("DISPLAY");
    if (!d || !*d) SKIP("no DISPLAY (the CLI script runs this under xvfb-run)");
    tsr__vt_random(&in, 33, 20, 3, TSR_U8);
    tsr__vt_stage(&o, "gray");
    o.quiet = 1;
    o.frames = 3;
    o.path = TSR_VIEW_PATH_CPU;
    s = tsr_view_run(&in, &o, &shot, NULL);
    if (s == TSR_E_UNSUPPORTED) {
        tsr_image_free(&in);
        SKIP("no OpenGL window on DISPLAY %s: %s", d, tsr_last_error());
    }
    CHECK_OK(s);
    CHECK_OK(tsr__vt_reference(&in, &o, &ref));
    /* a window manager may resize the window: compare only when it kept the image's size */
    if (!s && ref.data && shot.width == ref.width && shot.height == ref.height)
        CHECK_EQ(tsr__vt_diff(&shot, &ref, 0, ref.width, 0), 0);
    tsr_image_free(&shot);
    tsr_image_free(&ref);
    tsr_image_free(&in);
}

/* A y4m stream of n frames (each different, with bands for deband to smooth) in a temporary
 * file, at its start; cut: bytes to drop from the end. */
static FILE *tsr__vt_stream(int w, int h, int chroma, int bits, int n, long cut)
{
    tsr_y4m_info info;
    tsr_frame f;
    FILE *t = tmpfile();
    char *all = NULL;
    long size;
    memset(&info, 0, sizeof info);
    info.width = w, info.height = h, info.chroma = chroma, info.bits = bits, info.fps_num = 25, info.fps_den = 1;
    if (!t || tsr_frame_create(&f, w, h, chroma, bits, TSR_HOST)) return t;
    CHECK_OK(tsr_y4m_write_header(t, &info, bits));
    for (int k = 0; k < n; k++) {
        for (int p = 0; p < f.nplanes; p++)
            for (int y = 0; y < tsr_frame_plane_height(h, chroma, p); y++)
                for (int x = 0; x < tsr_frame_plane_width(w, chroma, p); x++) {
                    int v = p ? 90 + 40 * p + (int)(tsr_test_rand() % 60) : 16 + ((x + 3 * k) / 5) * 2 + y / 7;
                    char *row = (char *)f.plane[p] + (size_t)y * f.stride[p];
                    if (bits > 8) ((uint16_t *)row)[x] = (uint16_t)(v << (bits - 8));
                    else ((uint8_t *)row)[x] = (uint8_t)v;
                }
        CHECK_OK(tsr_y4m_write_frame(t, &f));
    }
    tsr_frame_free(&f);
    size = ftell(t);
    if (cut > 0 && size > cut && (all = malloc((size_t)size))) {   /* rewrite it shorter */
        rewind(t);
        CHECK_EQ(fread(all, 1, (size_t)size, t), size);
        fclose(t);
        t = tmpfile();
        if (t) CHECK_EQ(fwrite(all, 1, (size_t)(size - cut), t), size - cut);
        free(all);
    }
    if (t) rewind(t);
    return t;
}

/* Frame k of stream t (rewound afterwards) shown as the viewer must: debanded with p (NULL:
 * not), converted by tsr_frame_to_image. */
static tsr_status tsr__vt_frame(FILE *t, int k, const tsr_deband_params *p, tsr_image *out)
{
    tsr_y4m_info info;
    tsr_frame f = {0}, d = {0};
    tsr_exec ex = {TSR_BACKEND_CPU, NULL, NULL, 0};
    int eof = 0;
    tsr_status s = tsr_y4m_read_header(t, "test", &info);
    if (!s) s = tsr_frame_create(&f, info.width, info.height, info.chroma, info.bits, TSR_HOST);
    for (int i = 0; !s && i <= k; i++) s = tsr_y4m_read_frame(t, &info, &f, i, &eof);
    if (!s && p) s = tsr_deband_frame(&f, &d, p, k, &ex);
    if (!s) s = tsr_frame_to_image(p ? &d : &f, out, TSR_FRAME_VIEW_RGB, NULL);
    tsr_frame_free(&f);
    tsr_frame_free(&d);
    rewind(t);
    return s;
}

/* Play t headless on the cpu path and compare the screenshot with frame 'want' as the library
 * shows it; returns 0 (after SKIP's message) when there is no GL. */
static int tsr__vt_play(FILE *t, tsr_view_options o, int want, const char *what)
{
    tsr_image shot = {0}, ref = {0};
    tsr_view_stats st;
    tsr_status s;
    o.headless = o.quiet = 1;
    o.path = TSR_VIEW_PATH_CPU;
    s = tsr_view_play(t, "test.y4m", &o, &shot, &st);
    if (s == TSR_E_UNSUPPORTED && strstr(tsr_last_error(), "OpenGL")) {
        tsr_test_skip("no off-screen OpenGL here: %s", tsr_last_error());
        return 0;
    }
    CHECK_MSG(s == TSR_OK, "%s: %s", what, tsr_last_error());
    rewind(t);
    CHECK_OK(tsr__vt_frame(t, want, o.deband, &ref));
    if (!s && ref.data) {
        CHECK_MSG(st.stream_frame == want, "%s: showed frame %d last, expected %d", what, st.stream_frame, want);
        CHECK_EQ(shot.width, ref.width);
        CHECK_EQ(shot.height, ref.height);
        if (shot.width == ref.width && shot.height == ref.height)
            CHECK_MSG(tsr__vt_diff(&shot, &ref, 0, ref.width, 0) == 0, "%s: the screenshot differs from frame %d", what,
                      want);
    }
    tsr_image_free(&shot);
    tsr_image_free(&ref);
    rewind(t);
    return 1;
}

TEST(test_view_play_y4m)
{
    tsr_deband_params p;
    tsr_view_options o = {0};
    FILE *a = tsr__vt_stream(45, 27, TSR_CHROMA_420, 8, 4, 0), *b = tsr__vt_stream(19, 14, TSR_CHROMA_444, 16, 3, 0);
    tsr_deband_defaults(&p);
    if (!a || !b) SKIP("no temporary files");
    o.deband = &p;
    o.frames = 3;
    if (!tsr__vt_play(a, o, 2, "4:2:0 8-bit debanded, 3 frames")) goto out;
    {   /* the comparison can tell: deband changes frame 2 */
        tsr_image x = {0}, y = {0};
        CHECK_OK(tsr__vt_frame(a, 2, &p, &x));
        CHECK_OK(tsr__vt_frame(a, 2, NULL, &y));
        if (x.data && y.data) CHECK(tsr__vt_diff(&x, &y, 0, x.width, 0) > 0);
        tsr_image_free(&x);
        tsr_image_free(&y);
    }
    o.frames = 0;   /* off screen: the whole stream */
    tsr__vt_play(a, o, 3, "4:2:0 to the end");
    o.frames = 9;
    tsr__vt_play(b, o, 2, "4:4:4 16-bit, 9 frames of 3");
    o.deband = NULL;
    o.frames = 2;
    tsr__vt_play(b, o, 1, "4:4:4 16-bit as read");
    o.keys = " .";   /* pause, then one frame on */
    o.frames = 5;
    tsr__vt_play(a, o, 1, "paused, stepped once");
    o.keys = NULL;
    o.loop = 1;
    o.frames = 6;   /* 0 1 2 3 0 1 */
    tsr__vt_play(a, o, 1, "looped");
out:
    fclose(a);
    fclose(b);
}

TEST(test_view_play_refusals)
{
    tsr_image shot = {0};
    tsr_view_options o = {0};
    tsr_deband_params p;
    FILE *cut = tsr__vt_stream(16, 8, TSR_CHROMA_420, 8, 3, 50), *ok = tsr__vt_stream(16, 8, TSR_CHROMA_420, 8, 2, 0);
    tsr_status s;
    if (!cut || !ok) SKIP("no temporary files");
    o.headless = o.quiet = 1;
    o.path = TSR_VIEW_PATH_CPU;
    o.frames = 2;
    s = tsr_view_play(cut, "cut.y4m", &o, &shot, NULL);
    if (s == TSR_E_UNSUPPORTED && strstr(tsr_last_error(), "OpenGL")) {
        fclose(cut);
        fclose(ok);
        SKIP("no off-screen OpenGL here: %s", tsr_last_error());
    }
    CHECK_EQ(s, TSR_OK);   /* frames 0 and 1: the cut is not reached */
    tsr_image_free(&shot);
    rewind(cut);
    o.frames = 0;          /* the whole stream */
    CHECK_EQ(tsr_view_play(cut, "cut.y4m", &o, &shot, NULL), TSR_E_FORMAT);
    CHECK_MSG(strstr(tsr_last_error(), "cut.y4m: frame 2: truncated") != NULL, "message: %s", tsr_last_error());
    CHECK(shot.data == NULL);
    tsr_deband_defaults(&p);
    p.range = 300;
    o.deband = &p;
    CHECK_EQ(tsr_view_play(ok, "ok.y4m", &o, &shot, NULL), TSR_E_ARG);
    CHECK(strstr(tsr_last_error(), "range") != NULL);
    CHECK(shot.data == NULL);
    fclose(cut);
    fclose(ok);
}

TEST(test_view_image_deband)
{
    tsr_image in, ref = {0};
    tsr_view_options o = {0};
    tsr_deband_params p;
    tsr_exec ex = {TSR_BACKEND_CPU, NULL, NULL, 0};
    tsr_deband_defaults(&p);
    CHECK_OK(tsr_image_create(&in, 31, 17, 3, TSR_U8, TSR_HOST));
    for (int y = 0; y < 17; y++)
        for (int x = 0; x < 31 * 3; x++) ((uint8_t *)in.data)[(size_t)y * in.stride + x] = (uint8_t)(40 + x / 9 + y / 5);
    o.deband = &p;
    o.headless = o.quiet = 1;
    o.path = TSR_VIEW_PATH_CPU;
    {
        tsr_image shot = {0};
        tsr_status s = tsr_view_run(&in, &o, &shot, NULL);
        if (s == TSR_E_UNSUPPORTED) {
            tsr_image_free(&in);
            SKIP("no off-screen OpenGL here: %s", tsr_last_error());
        }
        CHECK_OK(s);
        CHECK_OK(tsr_deband_image(&in, &ref, &p, &ex));
        if (!s && ref.data) CHECK_EQ(tsr__vt_diff(&shot, &ref, 0, 31, 0), 0);
        tsr_image_free(&shot);
    }
    tsr_image_free(&ref);
    tsr_image_free(&in);
}

#else

TEST(test_view_not_built)
{
    SKIP("this build has no viewer (no GL, EGL or X11 headers)");
}

#endif
