/* Every registered variant of every operation against the operation's reference, bit for bit,
 * on random images of odd sizes, every border, and the edges of each parameter range. CUDA
 * variants run when a device is present and are counted as skipped otherwise. */
#include "test.h"
#include <stdlib.h>

typedef struct {
    int w, h;
} tsize;

static const tsize sizes[] = {{1, 1}, {2, 3}, {13, 42}, {42, 13}, {64, 17}, {257, 1031}};
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))

/* Fill an image with a pattern: 0 random, 1 all maximum, 2 smooth ramp with noise, 3 zeros+max. */
static void fill(tsr_image *img, int pattern)
{
    unsigned maxv = img->depth == TSR_U8 ? 255u : 65535u;
    for (int y = 0; y < img->height; y++)
        for (int i = 0; i < img->width * img->channels; i++) {
            unsigned v;
            switch (pattern) {
            case 1: v = maxv; break;
            case 2: v = (unsigned)((unsigned long long)(i + y) * maxv / (img->width * img->channels + img->height)) ^ (tsr_test_rand() & 3); break;
            case 3: v = (tsr_test_rand() & 1) ? maxv : 0; break;
            default: v = tsr_test_rand() & maxv;
            }
            if (v > maxv) v = maxv;
            if (img->depth == TSR_U8) ((unsigned char *)img->data)[(size_t)y * img->stride + i] = (unsigned char)v;
            else ((unsigned short *)((unsigned char *)img->data + (size_t)y * img->stride))[i] = (unsigned short)v;
        }
}

static int same(const tsr_image *a, const tsr_image *b, int *bx, int *by)
{
    size_t row = tsr_image_row_bytes(a);
    if (a->width != b->width || a->height != b->height || a->channels != b->channels || a->depth != b->depth) {
        *bx = *by = -1;
        return 0;
    }
    for (int y = 0; y < a->height; y++)
        if (memcmp((char *)a->data + (size_t)y * a->stride, (char *)b->data + (size_t)y * b->stride, row)) {
            for (int x = 0; x < a->width; x++)
                if (memcmp((char *)a->data + (size_t)y * a->stride + (size_t)x * a->channels * a->depth,
                           (char *)b->data + (size_t)y * b->stride + (size_t)x * a->channels * a->depth,
                           (size_t)a->channels * a->depth)) {
                    *bx = x;
                    *by = y;
                    return 0;
                }
        }
    return 1;
}

/* Run every non-reference variant of op on src with params and compare with the reference.
 * Returns the number of CUDA variants that could not run (no device). */
static int compare_all(const char *opname, const tsr_image *src, const void *params, const char *what)
{
    const tsr_op *op = tsr_op_find(opname);
    tsr_exec ref_ex = {TSR_BACKEND_CPU, "reference", NULL, 0};
    tsr_image ref = {0};
    int skipped = 0;
    tsr_status s = tsr_run(op, src, &ref, params, &ref_ex);
    CHECK_MSG(s == TSR_OK, "%s reference failed on %s: %s", opname, what, tsr_last_error());
    if (s) return 0;
    for (int i = 0; op->variants[i]; i++) {
        const tsr_variant *v = op->variants[i];
        tsr_exec ex = {v->backend, v->name, NULL, 0};
        tsr_image out = {0};
        int bx, by;
        if (v->is_reference) continue;
        if (v->supports && !v->supports(src, params)) continue;
        if (v->backend == TSR_BACKEND_CUDA && !tsr_cuda_available()) {
            skipped++;
            continue;
        }
        /* Odd thread counts exercise uneven bands. */
        ex.threads = 1 + (int)(tsr_test_rand() % 3);
        s = tsr_run(op, src, &out, params, &ex);
        CHECK_MSG(s == TSR_OK, "%s/%s failed on %s: %s", opname, v->name, what, tsr_last_error());
        if (!s) {
            CHECK_MSG(same(&ref, &out, &bx, &by), "%s/%s differs from the reference on %s at (%d,%d)", opname, v->name,
                      what, bx, by);
        }
        tsr_image_free(&out);
    }
    tsr_image_free(&ref);
    return skipped;
}

static int cuda_variants(const char *opname)
{
    const tsr_op *op = tsr_op_find(opname);
    int n = 0;
    for (int i = 0; op->variants[i]; i++) n += op->variants[i]->backend == TSR_BACKEND_CUDA;
    return n;
}

/* Report the outcome: skipped only where CUDA variants exist but no device does. */
static void finish(const char *opname, int skipped)
{
    if (skipped && !tsr_test_failed())
        tsr_test_skip("%d CUDA variant run(s) of %s skipped: no CUDA device (CPU variants passed)", skipped, opname);
}

static int make(tsr_image *img, int w, int h, int cn, tsr_depth d, int pattern)
{
    tsr_status s = tsr_image_create(img, w, h, cn, d, TSR_HOST);
    CHECK_OK(s);
    if (s) return 0;
    fill(img, pattern);
    return 1;
}

TEST(test_variants_invert)
{
    int skipped = 0;
    for (int si = 0; si < NSIZES; si++)
        for (int cn = 1; cn <= 4; cn++)
            for (int d = 1; d <= 2; d *= 2) {
                tsr_image img;
                char what[96];
                int none = 0;
                if (!make(&img, sizes[si].w, sizes[si].h, cn, (tsr_depth)d, 0)) return;
                snprintf(what, sizeof what, "%dx%dx%d %d-bit", img.width, img.height, cn, d * 8);
                skipped += compare_all("invert", &img, &none, what);
                tsr_image_free(&img);
            }
    finish("invert", skipped);
}

TEST(test_variants_box)
{
    static const int radii[] = {0, 1, 2, 3, 4, 5, 7, 15, 31, 64, 99};
    int skipped = 0;
    for (int si = 0; si < NSIZES; si++)
        for (int ri = 0; ri < (int)(sizeof radii / sizeof radii[0]); ri++)
            for (int border = 0; border < 4; border++) {
                int cn = 1 + (int)(tsr_test_rand() % 4), big = sizes[si].w * sizes[si].h > 10000;
                tsr_depth d = (tsr_test_rand() & 1) ? TSR_U16 : TSR_U8;
                tsr_box_params p = {radii[ri], -1, -1, border, 0};
                tsr_image img;
                char what[128];
                if (big && radii[ri] > 31 && border != 0) continue;   /* keep the reference's time bounded */
                if (big) cn = 1 + (ri & 1) * 2;
                if (radii[ri] > 5 && (tsr_test_rand() & 1)) p.radius_x = (int)(tsr_test_rand() % 40);
                if (border == TSR_BORDER_CONSTANT) p.value = (int)(tsr_test_rand() % (d == TSR_U8 ? 256 : 65536));
                if (!make(&img, sizes[si].w, sizes[si].h, cn, d, (int)(tsr_test_rand() % 4))) return;
                snprintf(what, sizeof what, "%dx%dx%d %d-bit r=%d rx=%d border=%d value=%d", img.width, img.height, cn,
                         d * 8, p.radius, p.radius_x, border, p.value);
                skipped += compare_all("box", &img, &p, what);
                tsr_image_free(&img);
            }
    finish("box", skipped);
}

/* Interleaved channels against the reference, densely: every channel count 1..4 at 8 and 16
 * bits (16- and 32-bit column sums), horizontal radii from 2 (the sliding path) with rows whose
 * length lies on both sides of the 8-sum vectors of the vectorised scans (cn + 7, cn + 8, ...),
 * every border. */
TEST(test_variants_box_channels)
{
    static const int ws[] = {3, 4, 5, 9, 10, 11, 37, 300}, rxs[] = {2, 3, 6, 17};
    int skipped = 0, n = 0;
    for (int wi = 0; wi < (int)(sizeof ws / sizeof ws[0]); wi++)
        for (int cn = 1; cn <= 4; cn++)
            for (int d16 = 0; d16 < 2; d16++)
                for (int ri = 0; ri < 4; ri++, n++) {
                    const tsr_depth d = d16 ? TSR_U16 : TSR_U8;
                    tsr_box_params p = {0, rxs[ri], 1 + (n & 1), n % 4, n & 2 ? (d16 ? 65535 : 255) : 3};
                    tsr_image img;
                    char what[128];
                    if (!make(&img, ws[wi], 5, cn, d, n % 4)) return;
                    snprintf(what, sizeof what, "%dx%dx%d %d-bit rx=%d ry=%d border=%d value=%d", img.width,
                             img.height, cn, d16 ? 16 : 8, p.radius_x, p.radius_y, p.border, p.value);
                    skipped += compare_all("box", &img, &p, what);
                    tsr_image_free(&img);
                }
    finish("box", skipped);
}

/* 8-bit gray, the benchmark's case, densely: widths around the 256-column segments of the
 * warp kernels (240, 248, 256 outputs per segment at small radii), horizontal radii on both
 * sides of each 8-column halo step, of the register path's limit (8) and of the largest radius
 * the warp variants take (48), rx != ry,
 * every border and constant values at both ends. */
TEST(test_variants_box_gray8)
{
    static const struct { int w, h; } gs[] = {{239, 7}, {241, 33}, {480, 19}, {497, 70}, {1031, 9}, {3, 300}};
    static const int rxs[] = {0, 1, 2, 6, 7, 8, 9, 15, 16, 47, 48, 49, 200};
    int skipped = 0;
    for (int gi = 0; gi < (int)(sizeof gs / sizeof gs[0]); gi++)
        for (int ri = 0; ri < (int)(sizeof rxs / sizeof rxs[0]); ri++) {
            int border = (gi + ri) % 4;
            tsr_box_params p = {0, rxs[ri], 0, border, 0};
            tsr_image img;
            char what[128];
            if (ri % 3 == 0) p.radius_y = 47 + (int)(tsr_test_rand() % 3);   /* both sides of the warp variants' 48 */
            else p.radius_y = (int)(tsr_test_rand() % 49);
            if (border == TSR_BORDER_CONSTANT) p.value = ri & 1 ? 255 : 0;
            if (!make(&img, gs[gi].w, gs[gi].h, 1, TSR_U8, (int)(tsr_test_rand() % 4))) return;
            snprintf(what, sizeof what, "%dx%d gray8 rx=%d ry=%d border=%d value=%d", img.width, img.height, p.radius_x,
                     p.radius_y, border, p.value);
            skipped += compare_all("box", &img, &p, what);
            tsr_image_free(&img);
        }
    finish("box", skipped);
}

/* Small 8-bit gray windows (box/reg's range and just past it): every radius pair up to 8 on
 * widths around the 480-column segments and 16-column lanes, heights around the 32-row strips. */
TEST(test_variants_box_gray8_small)
{
    static const int ws[] = {1, 15, 17, 479, 481, 977, 1031}, hs[] = {1, 5, 33, 70};
    int skipped = 0, n = 0;
    for (int wi = 0; wi < (int)(sizeof ws / sizeof ws[0]); wi++)
        for (int hi = wi & 1; hi < (int)(sizeof hs / sizeof hs[0]); hi += 2)
            for (int rx = 0; rx <= 8; rx++)
                for (int ry = 0; ry <= 8; ry++) {
                    int border = n++ % 4;
                    tsr_box_params p = {0, rx, ry, border, border == TSR_BORDER_CONSTANT ? (n & 4 ? 255 : 3) : 0};
                    tsr_image img;
                    char what[128];
                    if (!make(&img, ws[wi], hs[hi], 1, TSR_U8, n % 4)) return;
                    snprintf(what, sizeof what, "%dx%d gray8 rx=%d ry=%d border=%d value=%d", img.width, img.height,
                             rx, ry, border, p.value);
                    skipped += compare_all("box", &img, &p, what);
                    tsr_image_free(&img);
                }
    finish("box", skipped);
}

/* CUDA box/ring and threshold/ring with strips forced to one ring, a few rings and the whole
 * image (TSR_CUDA_RING_STRIP): strip starts and ends against the image's top and bottom and the
 * last strip's partial ring, every radius pair the kernel takes (up to 3, and the squares up to
 * 12: packed horizontal sums up to 7, 32-bit ones beyond), every border; with strips of 15 and
 * every row also the deep rings that ry = 2 (and box's ry = 3 and 4) take on large images
 * (TSR_CUDA_RING_DEEP_MPIX=0).
 * box/stream and threshold/stream (squares 3 to 32, blocks 7 to 65: one halo lane up to radius
 * 16, two beyond) with strips of 1, 15 and every row (TSR_CUDA_STREAM_STRIP). With strips of 15
 * the ring's interior strips step their row pointers at every ry (TSR_CUDA_RING_INTERIOR_RY) and
 * stream's interior strips run, their first windows by plain loads or, on the 12-row image,
 * through the queue (TSR_CUDA_STREAM_LDG_START); with every row neither kernel's strips do. The
 * 111-column image leaves two output lanes between two-lane halos, the rest to the edge blocks. */
TEST(test_variants_box_ring_strips)
{
    static const char *strips[] = {"1", "15", "100000"};
    static const struct { int w, h; } gs[] = {{481, 1}, {977, 12}, {1031, 131}, {111, 97}};
    int skipped = 0, n = 0;
    for (int si = 0; si < 3; si++) {
        setenv("TSR_CUDA_RING_STRIP", strips[si], 1);
        setenv("TSR_CUDA_STREAM_STRIP", strips[si], 1);
        setenv("TSR_CUDA_RING_DEEP_MPIX", si ? "0" : "100000", 1);
        setenv("TSR_CUDA_RING_INTERIOR_RY", si == 1 ? "16" : "-1", 1);
        setenv("TSR_CUDA_STREAM_INTERIOR", si == 1 ? "1" : "0", 1);
        for (int gi = 0; gi < 4; gi++) {
            setenv("TSR_CUDA_STREAM_LDG_START", gi == 1 ? "0" : "1", 1);
            for (int r = 0; r < 46; r++, n++) {   /* every pair up to 3, then the squares 4..33 */
                int border = n % 4, rx = r < 16 ? r % 4 : r - 12, ry = r < 16 ? r / 4 : r - 12;
                tsr_box_params p = {0, rx, ry, border, border == TSR_BORDER_CONSTANT ? (n & 1 ? 255 : 7) : 0};
                tsr_image img;
                char what[128];
                if (!make(&img, gs[gi].w, gs[gi].h, 1, TSR_U8, n % 4)) break;
                snprintf(what, sizeof what, "%dx%d gray8 rx=%d ry=%d border=%d value=%d, ring strips %s", img.width,
                         img.height, p.radius_x, p.radius_y, border, p.value, strips[si]);
                skipped += compare_all("box", &img, &p, what);
                tsr_image_free(&img);
            }
            for (int b = 3; b <= 67; b += 2, n++) {
                tsr_threshold_params p = {b, (double)(n % 7) - 3.0, TSR_THRESH_MEAN, n & 1, n & 2 ? 255 : 100};
                tsr_image img;
                char what[128];
                if (!make(&img, gs[gi].w, gs[gi].h, 1, TSR_U8, n % 4)) break;
                snprintf(what, sizeof what, "%dx%d block=%d C=%g inverse=%d, ring strips %s", img.width, img.height, b,
                         p.c, p.inverse, strips[si]);
                skipped += compare_all("threshold", &img, &p, what);
                tsr_image_free(&img);
            }
        }
    }
    unsetenv("TSR_CUDA_RING_STRIP");
    unsetenv("TSR_CUDA_STREAM_STRIP");
    unsetenv("TSR_CUDA_RING_DEEP_MPIX");
    unsetenv("TSR_CUDA_RING_INTERIOR_RY");
    unsetenv("TSR_CUDA_STREAM_INTERIOR");
    unsetenv("TSR_CUDA_STREAM_LDG_START");
    finish("box", skipped);
}

/* box/wide's range, densely: horizontal radii on both sides of each 16-column halo step and of
 * its limits (127 wide, 128 tall), widths just above rx (one segment that is both edges) and
 * around the segments' 512 loaded and (32 - 2 ceil(rx/16)) * 16 written columns, heights below
 * and around the strips, every border, constants at both ends. */
TEST(test_variants_box_gray8_wide)
{
    static const int rxs[] = {0, 1, 9, 15, 16, 17, 31, 32, 33, 48, 63, 64, 65, 100, 127, 128};
    static const int ws[] = {0, 1, 255, 257, 353, 383, 385, 511, 512, 513, 767, 1031, 1301};
    static const int hs[] = {1, 2, 7, 40, 129, 300};
    int skipped = 0, n = 0;
    for (int ri = 0; ri < (int)(sizeof rxs / sizeof rxs[0]); ri++)
        for (int k = 0; k < 6; k++, n++) {
            int rx = rxs[ri], w = ws[(ri * 5 + k * 3) % (int)(sizeof ws / sizeof ws[0])];
            int h = hs[(ri + k) % (int)(sizeof hs / sizeof hs[0])];
            int border = n % 4, ry = (int)(tsr_test_rand() % 130);
            if (w <= 1) w = rx + 1 + w;   /* the narrowest widths the variant takes, and one more */
            if (k == 5) ry = 128;
            tsr_box_params p = {0, rx, ry, border, 0};
            tsr_image img;
            char what[128];
            if (border == TSR_BORDER_CONSTANT) p.value = n & 8 ? 255 : (n & 16 ? 0 : (int)(tsr_test_rand() % 256));
            if (!make(&img, w, h, 1, TSR_U8, n % 4)) return;
            snprintf(what, sizeof what, "%dx%d gray8 rx=%d ry=%d border=%d value=%d", img.width, img.height, rx, ry,
                     border, p.value);
            skipped += compare_all("box", &img, &p, what);
            tsr_image_free(&img);
        }
    finish("box", skipped);
}

/* CUDA box/wide and threshold/wide with stacked first windows forced on (TSR_CUDA_WIDE_STACK) in
 * blocks of 4 and 8 warps, strips of 3, 8 and 16 rows: windows of one chunk and of as many as the
 * row buffers hold, with and without rows after the chunks, blocks against the image's top and
 * bottom and past it, edge and interior segments, one-segment images, every border. */
TEST(test_variants_box_wide_stacked)
{
    static const char *warps[] = {"4", "8"}, *strips[] = {"3", "8", "16"};
    static const int rys[] = {1, 6, 20, 31, 59, 64, 119, 128};
    static const struct { int w, h; } gs[] = {{1031, 700}, {1400, 301}, {37, 5}, {513, 40}};
    int skipped = 0, n = 0;
    setenv("TSR_CUDA_WIDE_STACK", "1", 1);
    for (int wi = 0; wi < 2; wi++)
        for (int si = 0; si < 3; si++) {
            setenv("TSR_CUDA_WIDE_WARPS", warps[wi], 1);
            setenv("TSR_CUDA_WIDE_STRIP", strips[si], 1);
            for (int ri = 0; ri < 8; ri++, n++) {
                const int gi = (n / 8 + ri) % 4, w = gs[gi].w, ry = rys[ri];
                int rx = ri % 3 == 0 ? 1 : ri % 3 == 1 ? 17 : 64, tr = ry < 127 ? ry : 127;
                if (rx >= w) rx = w - 1;
                if (tr >= w) tr = w - 1;
                tsr_box_params p = {0, rx, ry, n % 4, n & 1 ? 255 : 9};
                tsr_threshold_params tp = {2 * tr + 1, (double)(n % 5) - 2.0, TSR_THRESH_MEAN, n & 1, 255};
                tsr_image img;
                char what[160];
                if (!make(&img, w, gs[gi].h, 1, TSR_U8, n % 4)) return;
                snprintf(what, sizeof what, "%dx%d gray8 rx=%d ry=%d border=%d, stacked, %s warps, strips of %s",
                         img.width, img.height, rx, ry, p.border, warps[wi], strips[si]);
                skipped += compare_all("box", &img, &p, what);
                snprintf(what, sizeof what, "%dx%d block=%d, stacked, %s warps, strips of %s", img.width, img.height,
                         tp.block, warps[wi], strips[si]);
                skipped += compare_all("threshold", &img, &tp, what);
                tsr_image_free(&img);
            }
        }
    unsetenv("TSR_CUDA_WIDE_STACK");
    unsetenv("TSR_CUDA_WIDE_WARPS");
    unsetenv("TSR_CUDA_WIDE_STRIP");
    finish("box", skipped);
}

/* threshold/wide: blocks around its 16-column halo steps and its largest block (255), on widths
 * around the segments and a one-segment image. */
TEST(test_variants_threshold_wide)
{
    static const int blocks[] = {3, 17, 31, 33, 35, 65, 97, 129, 131, 253, 255, 257};
    static const int ws[] = {300, 511, 513, 1031};
    int skipped = 0;
    for (int bi = 0; bi < (int)(sizeof blocks / sizeof blocks[0]); bi++)
        for (int wi = 0; wi < 4; wi++) {
            tsr_threshold_params p = {blocks[bi], (double)(int)(tsr_test_rand() % 11) - 5.5 + (wi & 1) * 0.5,
                                      TSR_THRESH_MEAN, (bi + wi) & 1, wi == 2 ? 77 : 255};
            tsr_image img;
            char what[128];
            if (!make(&img, ws[wi], 37 + bi * 7, 1, TSR_U8, (bi + wi) % 4)) return;
            snprintf(what, sizeof what, "%dx%d block=%d C=%g inverse=%d maxval=%d", img.width, img.height, p.block, p.c,
                     p.inverse, p.maxval);
            skipped += compare_all("threshold", &img, &p, what);
            tsr_image_free(&img);
        }
    finish("threshold", skipped);
}

/* Windows far past the image and sums that need 64 bits (16-bit maxima over huge windows). */
TEST(test_variants_box_extremes)
{
    int skipped = 0;
    static const struct { int w, h, cn, d, rx, ry, border, pattern; } cases[] = {
        {13, 42, 1, 2, 300, 300, 0, 1}, {13, 42, 3, 2, 400, 2, 1, 1}, {5, 7, 1, 1, 1000, 1000, 2, 0},
        {1, 31, 1, 1, 0, 200, 0, 0}, {31, 1, 4, 2, 200, 0, 3, 1}, {3, 3, 1, 2, 2047, 2047, 1, 1},
        {9, 11, 2, 1, 44, 46, 0, 0}, {9, 11, 1, 1, 45, 45, 3, 3}, {2, 2, 1, 1, 4095, 0, 0, 1},
    };
    for (int i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
        tsr_box_params p = {0, cases[i].rx, cases[i].ry, cases[i].border, cases[i].d == 1 ? 255 : 65535};
        tsr_image img;
        char what[128];
        if (!make(&img, cases[i].w, cases[i].h, cases[i].cn, (tsr_depth)cases[i].d, cases[i].pattern)) return;
        snprintf(what, sizeof what, "case %d: %dx%dx%d rx=%d ry=%d border=%d", i, cases[i].w, cases[i].h, cases[i].cn,
                 cases[i].rx, cases[i].ry, cases[i].border);
        skipped += compare_all("box", &img, &p, what);
        tsr_image_free(&img);
    }
    finish("box", skipped);
}

/* Windows wider than the row or taller than the image, where the running sums take closed forms
 * (prefix sums over one period of the reflected row, source rows counted once with their
 * multiplicity): radii just below, at and past each side and several periods past it, every
 * border, 1 to 4 channels, both depths, constant values at both ends. */
TEST(test_variants_box_far)
{
    static const struct { int w, h; } shapes[] = {{1, 1}, {1, 9}, {2, 2}, {3, 1}, {5, 4}, {7, 13}, {13, 42}, {40, 3}};
    int skipped = 0, n = 0;
    for (int si = 0; si < (int)(sizeof shapes / sizeof shapes[0]); si++)
        for (int k = 0; k < 5; k++)
            for (int border = 0; border < 4; border++) {
                const int w = shapes[si].w, h = shapes[si].h;
                /* k: just inside, at, one past, several periods past, far past (and mixed) */
                const int rxs[] = {w > 1 ? w - 1 : 0, w, w + 1, 3 * w + 2, 5 * w + 7 + (int)(tsr_test_rand() % 50)};
                const int rys[] = {h + 1, h > 1 ? h - 1 : 0, 4 * h + 3, h, 7 * h + (int)(tsr_test_rand() % 50)};
                const int cn = 1 + n % 4;
                const tsr_depth d = (n / 4) & 1 ? TSR_U16 : TSR_U8;
                tsr_box_params p = {0, rxs[k], rys[k], border, 0};
                tsr_image img;
                char what[128];
                if (border == TSR_BORDER_CONSTANT) p.value = n & 8 ? (d == TSR_U8 ? 255 : 65535) : (int)(tsr_test_rand() % 200);
                n++;
                if (!make(&img, w, h, cn, d, n % 4)) return;
                snprintf(what, sizeof what, "%dx%dx%d %d-bit rx=%d ry=%d border=%d value=%d", w, h, cn, d * 8, p.radius_x,
                         p.radius_y, border, p.value);
                skipped += compare_all("box", &img, &p, what);
                tsr_image_free(&img);
            }
    finish("box", skipped);
}

TEST(test_variants_threshold)
{
    static const int blocks[] = {3, 5, 7, 9, 15, 17, 31, 129, 199};
    static const double cs[] = {-300, -3.5, -1, 0, 0.5, 2, 7.25, 300};
    int skipped = 0;
    for (int si = 0; si < NSIZES; si++)
        for (int bi = 0; bi < (int)(sizeof blocks / sizeof blocks[0]); bi++)
            for (int ci = 0; ci < (int)(sizeof cs / sizeof cs[0]); ci++) {
                tsr_threshold_params p = {blocks[bi], cs[ci], TSR_THRESH_MEAN, (int)(tsr_test_rand() & 1), 255};
                tsr_image img;
                char what[128];
                if (sizes[si].w * sizes[si].h > 10000 && (ci & 3)) continue;
                if (ci == 3) p.maxval = (int)(tsr_test_rand() % 256);
                if (!make(&img, sizes[si].w, sizes[si].h, 1, TSR_U8, (int)(tsr_test_rand() % 4))) return;
                snprintf(what, sizeof what, "%dx%d block=%d C=%g inverse=%d maxval=%d", img.width, img.height, p.block,
                         p.c, p.inverse, p.maxval);
                skipped += compare_all("threshold", &img, &p, what);
                tsr_image_free(&img);
            }
    finish("threshold", skipped);
}

/* Constants C at the edges where the outcome becomes constant (s - mean lies in [-255, 255]):
 * the threshold's outcome offsets are clamped there, and the small blocks' comparison without
 * division (box/ring, box/reg) folds C into the window sum's offset. Saturated, two-level and
 * random images, both senses. */
TEST(test_variants_threshold_c_edges)
{
    static const int blocks[] = {3, 5, 7, 9};
    static const double cs[] = {-256, -255, -254.5, -254, -253, 252.5, 253, 254, 255, 256};
    int skipped = 0, n = 0;
    for (int bi = 0; bi < 4; bi++)
        for (int ci = 0; ci < (int)(sizeof cs / sizeof cs[0]); ci++, n++) {
            tsr_threshold_params p = {blocks[bi], cs[ci], TSR_THRESH_MEAN, (n >> 2) & 1, n & 2 ? 255 : 200};
            tsr_image img;
            char what[128];
            if (!make(&img, 517, 23, 1, TSR_U8, n % 4)) return;
            snprintf(what, sizeof what, "%dx%d block=%d C=%g inverse=%d maxval=%d pattern=%d", img.width, img.height,
                     p.block, p.c, p.inverse, p.maxval, n % 4);
            skipped += compare_all("threshold", &img, &p, what);
            tsr_image_free(&img);
        }
    finish("threshold", skipped);
}

TEST(test_variants_sums)
{
    int skipped = 0;
    for (int si = 0; si < NSIZES; si++)
        for (int axis = 0; axis < 2; axis++)
            for (int cn = 1; cn <= 4; cn++)
                for (int d = 1; d <= 2; d *= 2) {
                    tsr_sums_params p = {axis};
                    tsr_image img;
                    char what[96];
                    if (!make(&img, sizes[si].w, sizes[si].h, cn, (tsr_depth)d, (int)(tsr_test_rand() % 4))) return;
                    snprintf(what, sizeof what, "%dx%dx%d %d-bit axis=%d", img.width, img.height, cn, d * 8, axis);
                    skipped += compare_all("sums", &img, &p, what);
                    tsr_image_free(&img);
                }
    finish("sums", skipped);
}

/* Row sums of interleaved channels on long rows: rows whose sample count lies on both sides of
 * the 24-lane blocks and past the 256 blocks that 32-bit lanes hold before they are flushed,
 * maxima (the largest lane sums) and random samples, both depths. */
TEST(test_variants_sums_rows_channels)
{
    static const int ws[] = {7, 8, 9, 2049, 4100};
    int skipped = 0;
    for (int wi = 0; wi < 5; wi++)
        for (int cn = 2; cn <= 4; cn++)
            for (int d = 1; d <= 2; d *= 2)
                for (int pattern = 0; pattern < 2; pattern++) {
                    tsr_sums_params p = {TSR_AXIS_ROWS};
                    tsr_image img;
                    char what[96];
                    if (!make(&img, ws[wi], 3, cn, (tsr_depth)d, pattern)) return;
                    snprintf(what, sizeof what, "%dx%dx%d %d-bit rows, pattern %d", img.width, img.height, cn, d * 8,
                             pattern);
                    skipped += compare_all("sums", &img, &p, what);
                    tsr_image_free(&img);
                }
    finish("sums", skipped);
}

/* Columns of 65538 16-bit maxima need 64-bit sums (65537 still fit: 65535 * 65537 = 2^32 - 1). */
TEST(test_variants_sums_64bit)
{
    tsr_image img;
    tsr_sums_params p = {TSR_AXIS_COLUMNS};
    tsr_image out = {0};
    tsr_exec ex = {TSR_BACKEND_CPU, NULL, NULL, 0};
    int skipped = 0;
    if (!make(&img, 3, 65538, 1, TSR_U16, 1)) return;
    CHECK_OK(tsr_sums(&img, &out, &p, &ex));
    CHECK_EQ(out.depth, TSR_U64);
    if (out.data) CHECK(((unsigned long long *)out.data)[1] == 65538ull * 65535ull);
    tsr_image_free(&out);
    skipped += compare_all("sums", &img, &p, "3x65538 16-bit maxima");
    tsr_image_free(&img);
    finish("sums", skipped);
}

TEST(test_variants_gray)
{
    int skipped = 0;
    for (int si = 0; si < NSIZES; si++)
        for (int cn = 3; cn <= 4; cn++)
            for (int d = 1; d <= 2; d *= 2) {
                tsr_image img;
                char what[96];
                int none = 0;
                if (!make(&img, sizes[si].w, sizes[si].h, cn, (tsr_depth)d, (int)(tsr_test_rand() % 4))) return;
                snprintf(what, sizeof what, "%dx%dx%d %d-bit", img.width, img.height, cn, d * 8);
                skipped += compare_all("gray", &img, &none, what);
                tsr_image_free(&img);
            }
    finish("gray", skipped);
}

TEST(test_variants_resize)
{
    static const struct { int w, h, dw, dh; } cases[] = {
        {1, 1, 1, 1}, {2, 2, 1, 1}, {13, 42, 13, 21}, {13, 42, 1, 1}, {13, 42, 5, 17}, {42, 13, 21, 13},
        {64, 64, 32, 32}, {64, 64, 16, 16}, {64, 64, 21, 21}, {257, 1031, 100, 300}, {257, 1031, 257, 1031},
        {96, 60, 32, 20}, {96, 60, 48, 30}, {100, 100, 99, 99}, {257, 131, 3, 2},
        /* x scales near the CUDA register kernel's 4 and 8 entries (slots = floor(scale) + 2) */
        {200, 90, 29, 13}, {1000, 37, 130, 11}, {600, 50, 200, 49},
        /* CUDA vec16's 2x2 and 4x4: whole 16-output chunks, tails, a tail alone */
        {258, 130, 129, 65}, {1028, 12, 257, 3}, {4, 4, 1, 1}, {40, 8, 10, 2}, {128, 6, 32, 3},
        /* RGB 2x2: rows of whole 16-byte chunks (32 x 3 = 96 bytes), of a chunk and a tail, and long rows */
        {64, 4, 32, 2}, {34, 6, 17, 3}, {12, 2, 6, 1}, {1030, 20, 515, 10}, {2050, 3, 1025, 1},
        /* fractional cells of at most 4 x 4 samples (loaded at once by the CUDA kernel) */
        {257, 131, 100, 60}, {1000, 37, 400, 20}, {64, 64, 24, 24},
        /* CUDA rows: several blocks across (256 outputs each) and row groups (8), scales near 3
         * and near 1, rows ending inside a 16-byte chunk */
        {2000, 300, 751, 113}, {1031, 257, 1030, 256}, {3001, 97, 1001, 33}, {776, 50, 259, 17}, {523, 70, 300, 69},
        /* CUDA rows' bands (3x and more on an axis): several blocks across, one axis under 3, cells of
         * 3 samples and of many, the widest cells its plan takes (about 80 samples) */
        {3001, 401, 600, 130}, {1031, 700, 97, 333}, {2000, 1999, 150, 151}, {777, 90, 259, 29}, {4000, 9, 50, 2},
    };
    int skipped = 0;
    for (int i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++)
        for (int cn = 1; cn <= 4; cn++)
            for (int d = 1; d <= 2; d *= 2) {
                tsr_resize_params p = {cases[i].dw, cases[i].dh};
                tsr_image img;
                char what[96];
                if (!make(&img, cases[i].w, cases[i].h, cn, (tsr_depth)d, (int)(tsr_test_rand() % 4))) return;
                snprintf(what, sizeof what, "%dx%dx%d %d-bit -> %dx%d", img.width, img.height, cn, d * 8, p.width,
                         p.height);
                skipped += compare_all("resize", &img, &p, what);
                tsr_image_free(&img);
            }
    finish("resize", skipped);
}

/* Every variant against the reference on three resize cases, each as 8-bit gray, 8-bit RGB and
 * 16-bit with CN16 channels; NOTE (the knobs set by the caller) goes into the failure messages.
 * Returns the skipped count. */
struct resize_case { int w, h, dw, dh; };
static int compare_resize_kinds(const struct resize_case cases[3], int cn16, const char *note)
{
    int skipped = 0;
    for (int i = 0; i < 9; i++) {
        tsr_resize_params p = {cases[i % 3].dw, cases[i % 3].dh};
        tsr_image img;
        char what[128];
        if (!make(&img, cases[i % 3].w, cases[i % 3].h, i < 3 ? 1 : i < 6 ? 3 : cn16, i < 6 ? TSR_U8 : TSR_U16,
                  (int)(tsr_test_rand() % 4)))
            break;
        snprintf(what, sizeof what, "%dx%dx%d %d-bit -> %dx%d, %s", img.width, img.height, img.channels,
                 i < 6 ? 8 : 16, p.width, p.height, note);
        skipped += compare_all("resize", &img, &p, what);
        tsr_image_free(&img);
    }
    return skipped;
}

/* CUDA resize/rows with several row groups per block (the double-buffered loop: the next group's
 * rows copied while the current one is computed), forced through TSR_CUDA_RESIZE_ROWS_GROUPS,
 * up to every group of a column strip in one block. */
TEST(test_variants_resize_rows_groups)
{
    static const struct resize_case cases[3] = {{2000, 300, 751, 113}, {523, 700, 300, 269}, {1031, 257, 1030, 256}};
    static const char *groups[] = {"2", "3", "7", "100000"};
    int skipped = 0;
    for (int g = 0; g < 4; g++) {
        char note[64];
        setenv("TSR_CUDA_RESIZE_ROWS_GROUPS", groups[g], 1);
        snprintf(note, sizeof note, "%s groups per block", groups[g]);
        skipped += compare_resize_kinds(cases, 4, note);
    }
    unsetenv("TSR_CUDA_RESIZE_ROWS_GROUPS");
    finish("resize", skipped);
}

/* CUDA resize/rows' band kernel (shrinking 3x and more) with bands of 1 to 16 output rows and
 * stages of 1 to 8 source rows, forced through TSR_CUDA_RESIZE_BAND_ROWS and _STAGE: bands that
 * end inside a stage, stages that end inside a cell, the image's last band short; cells of 3 to
 * 80 samples (the kernel's unrolled widths 6, 10, 16 and its loop beyond). */
TEST(test_variants_resize_rows_bands)
{
    static const struct resize_case cases[3] = {{3001, 401, 600, 130}, {523, 700, 100, 69}, {1031, 257, 300, 19}};
    static const char *bands[] = {"1", "3", "16"}, *stages[] = {"1", "5", "8"};
    int skipped = 0;
    for (int b = 0; b < 3; b++)
        for (int g = 0; g < 3; g++) {
            char note[64];
            setenv("TSR_CUDA_RESIZE_BAND_ROWS", bands[b], 1);
            setenv("TSR_CUDA_RESIZE_BAND_STAGE", stages[g], 1);
            snprintf(note, sizeof note, "bands of %s rows, stages of %s", bands[b], stages[g]);
            skipped += compare_resize_kinds(cases, 2, note);
        }
    unsetenv("TSR_CUDA_RESIZE_BAND_ROWS");
    unsetenv("TSR_CUDA_RESIZE_BAND_STAGE");
    finish("resize", skipped);
}

/* The registry itself: every op has exactly one reference, on the CPU, and a CPU default. */
TEST(test_variants_registry)
{
    for (int i = 0; i < tsr_op_count(); i++) {
        const tsr_op *op = tsr_op_at(i);
        int refs = 0, cpu_default = 0;
        for (int k = 0; op->variants[k]; k++) {
            refs += op->variants[k]->is_reference;
            cpu_default += op->variants[k]->backend == TSR_BACKEND_CPU && op->variants[k]->is_default;
            CHECK_MSG(!op->variants[k]->is_reference || op->variants[k]->backend == TSR_BACKEND_CPU,
                      "%s: the reference must be a CPU variant", op->name);
        }
        CHECK_MSG(refs == 1, "%s has %d references", op->name, refs);
        CHECK_MSG(cpu_default == 1, "%s has %d CPU defaults", op->name, cpu_default);
        CHECK_MSG(tsr_op_find(op->name) == op, "%s is not found by name", op->name);
    }
    (void)cuda_variants;
}

/* The registry's choice among defaults: the first default that handles and prefers the
 * inputs, else the first default that handles them, else the reference. */
static int fake_wide_only(const tsr_image *src, const void *params) { return src->width >= 16; }
static int fake_small_only(const tsr_image *src, const void *params) { return src->width < 64; }
static tsr_status fake_run(const tsr_image *src, tsr_image *dst, const void *params, const tsr_exec *ex)
{
    return TSR_OK;
}

TEST(test_variants_registry_prefer)
{
    const tsr_variant a = {"a", TSR_BACKEND_CPU, "", fake_run, fake_small_only, 1, 0, fake_wide_only};
    const tsr_variant b = {"b", TSR_BACKEND_CPU, "", fake_run, fake_small_only, 1, 0, NULL};
    const tsr_variant ref = {"ref", TSR_BACKEND_CPU, "", fake_run, NULL, 0, 1, NULL};
    const tsr_variant *vs[] = {&a, &b, &ref, NULL};
    tsr_op op = *tsr_op_find("invert");
    op.name = "fake";
    op.variants = vs;
    tsr_exec ex = {TSR_BACKEND_CPU, NULL, NULL, 1};
    tsr_image img = {0};
    img.channels = 1;
    img.height = 1;
    img.width = 32;   /* a handles and prefers */
    CHECK(tsr_choose_variant(&op, &ex, &img, NULL) == &a);
    img.width = 8;    /* a handles, does not prefer: the next default */
    CHECK(tsr_choose_variant(&op, &ex, &img, NULL) == &b);
    img.width = 100;  /* no default handles it: the reference */
    CHECK(tsr_choose_variant(&op, &ex, &img, NULL) == &ref);
    vs[1] = &ref;     /* a is the only default and does not prefer: it still runs */
    vs[2] = NULL;
    img.width = 8;
    CHECK(tsr_choose_variant(&op, &ex, &img, NULL) == &a);
    ex.variant = "ref";   /* a name overrides preference */
    CHECK(tsr_choose_variant(&op, &ex, &img, NULL) == &ref);
}

/* Operations run from several threads at once, and from inside each other's pool, give the
 * same results as one at a time (the pool never deadlocks or mixes jobs). */
#include <pthread.h>

struct concurrent_job {
    const tsr_image *src;
    const tsr_image *expect;
    int ok;
};

static void *concurrent_box(void *arg)
{
    struct concurrent_job *j = arg;
    tsr_box_params p = {5, -1, -1, TSR_BORDER_REFLECT101, 0};
    tsr_exec ex = {TSR_BACKEND_CPU, "running", NULL, 2};
    j->ok = 1;
    for (int k = 0; k < 8 && j->ok; k++) {
        tsr_image out = {0};
        int bx, by;
        j->ok = tsr_box(j->src, &out, &p, &ex) == TSR_OK && same(j->expect, &out, &bx, &by);
        tsr_image_free(&out);
    }
    return NULL;
}

TEST(test_variants_concurrent_callers)
{
    tsr_image img, ref = {0};
    tsr_box_params p = {5, -1, -1, TSR_BORDER_REFLECT101, 0};
    tsr_exec ex = {TSR_BACKEND_CPU, "reference", NULL, 1};
    pthread_t t[4];
    struct concurrent_job jobs[4];
    if (!make(&img, 301, 203, 1, TSR_U8, 0)) return;
    CHECK_OK(tsr_box(&img, &ref, &p, &ex));
    for (int i = 0; i < 4; i++) {
        jobs[i] = (struct concurrent_job){&img, &ref, 0};
        pthread_create(&t[i], NULL, concurrent_box, &jobs[i]);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        CHECK_MSG(jobs[i].ok, "caller %d got a wrong or failed result", i);
    }
    tsr_image_free(&ref);
    tsr_image_free(&img);
}
