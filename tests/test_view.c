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

#else

TEST(test_view_not_built)
{
    SKIP("this build has no viewer (no GL, EGL or X11 headers)");
}

#endif
