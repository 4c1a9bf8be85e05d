/* deband: every variant against the reference (bit for bit) over parameters and odd sizes,
 * determinism of the seed, the effect on banding and on texture, parameter checks, y4m parsing,
 * images and the frame pipe. */
#include "test.h"
#include "../src/cpu/deband_int.h"
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* A frame with smooth gradients, a few hard edges and some noise, so that both the smoothing
 * and the keep-the-source branches are taken. */
static tsr_frame db_make(int w, int h, int chroma, int bits, unsigned salt)
{
    tsr_frame f;
    memset(&f, 0, sizeof f);
    if (tsr_frame_create(&f, w, h, chroma, bits, TSR_HOST)) return f;
    for (int p = 0; p < f.nplanes; p++) {
        int pw = tsr_frame_plane_width(w, chroma, p), ph = tsr_frame_plane_height(h, chroma, p);
        int maxv = (1 << bits) - 1;
        for (int y = 0; y < ph; y++)
            for (int x = 0; x < pw; x++) {
                long v = (long)maxv * (x + 2 * y + (int)salt) / (pw + 2 * ph + 7);
                if ((x / 5 + y / 7 + p) % 9 == 0) v = maxv - v;           /* edges */
                if (((unsigned)(x * 131 + y * 71) ^ salt) % 11 == 0) v += (long)(tsr_test_rand() % 5) - 2;   /* noise */
                if (v < 0) v = 0;
                if (v > maxv) v = maxv;
                if (bits > 8) ((uint16_t *)((char *)f.plane[p] + (size_t)y * f.stride[p]))[x] = (uint16_t)v;
                else ((uint8_t *)f.plane[p] + (size_t)y * f.stride[p])[x] = (uint8_t)v;
            }
    }
    return f;
}

/* Index of the first differing sample, or -1 when the frames are identical. */
static long db_diff(const tsr_frame *a, const tsr_frame *b)
{
    long k = 0;
    if (a->width != b->width || a->height != b->height || a->bits != b->bits || a->nplanes != b->nplanes) return 0;
    for (int p = 0; p < a->nplanes; p++) {
        int pw = tsr_frame_plane_width(a->width, a->chroma, p), ph = tsr_frame_plane_height(a->height, a->chroma, p);
        size_t row = (size_t)pw * (a->bits > 8 ? 2 : 1);
        for (int y = 0; y < ph; y++, k += pw)
            if (memcmp((char *)a->plane[p] + (size_t)y * a->stride[p], (char *)b->plane[p] + (size_t)y * b->stride[p],
                       row))
                return k;
    }
    return -1;
}

static void *db_row(const tsr_image *img, int y) { return (char *)img->data + (size_t)y * img->stride; }

static tsr_status db_run(const char *variant, const tsr_frame *src, tsr_frame *dst, const tsr_deband_params *p, int fi)
{
    tsr_exec ex = {TSR_BACKEND_AUTO, variant, NULL, 0};
    memset(dst, 0, sizeof *dst);
    return tsr_deband_frame(src, dst, p, fi, &ex);
}

/* Parameter sets covering every branch of the definition. */
static tsr_deband_params db_params(int k)
{
    tsr_deband_params p;
    tsr_deband_defaults(&p);
    p.sample_mode = 1 + (k & 1);
    p.blur_first = !(k & 2);
    p.dither = (k >> 2) % 3;
    p.output_depth = (k % 5 == 0) ? 8 : (k % 5 == 1) ? 0 : (k % 5 == 2) ? 12 : (k % 5 == 3) ? 16 : 9;
    p.keep_tv_range = (k % 7) == 3;
    p.dynamic_grain = (k % 3) == 1;
    p.grain_y = (k % 4) * 40;
    p.grain_c = (k % 6) * 30;
    p.range = (k % 8) == 5 ? 255 : (k % 8) == 6 ? 0 : 4 + k % 20;
    p.y = 32 + 37 * (k % 5);
    p.cb = 64 + 100 * (k % 3);
    p.cr = (k % 9) * 50;
    p.seed = k * 7919;
    return p;
}

TEST(test_deband_variants_match_reference)
{
    static const int sizes[][2] = {{1, 1}, {2, 3}, {13, 42}, {257, 131}, {64, 1}, {1, 37}};
    static const int bitss[] = {8, 10, 16};
    int cases = 0;
    for (int si = 0; si < 6; si++)
        for (int chroma = 0; chroma < 4; chroma++)
            for (int bi = 0; bi < 3; bi++)
                for (int k = 0; k < 6; k++) {
                    int w = sizes[si][0], h = sizes[si][1];
                    int kk = k * 5 + si + chroma * 3 + bi;
                    tsr_deband_params p = db_params(kk);
                    tsr_frame src = db_make(w, h, chroma, bitss[bi], (unsigned)kk), ref, out;
                    if (!src.plane[0]) {
                        CHECK(!"frame allocation");
                        continue;
                    }
                    if (db_run("reference", &src, &ref, &p, kk)) {
                        CHECK_MSG(0, "reference failed: %s", tsr_last_error());
                        tsr_frame_free(&src);
                        continue;
                    }
                    for (int v = 0; v < tsr_deband_variant_count(); v++) {
                        const tsr_deband_variant_info *vi = tsr_deband_variant_at(v);
                        if (vi->is_reference) continue;
                        if (vi->backend == TSR_BACKEND_CUDA && !tsr_cuda_available()) continue;
                        if (vi->only_444 && chroma != TSR_CHROMA_444) continue;
                        /* the CPU variant also without its AVX2 code (tsr__db_baseline) */
                        for (int base = 0; base <= (vi->backend == TSR_BACKEND_CPU); base++) {
                            long d;
                            tsr__db_baseline = base;
                            if (db_run(vi->name, &src, &out, &p, kk)) {
                                CHECK_MSG(0, "%s failed: %s", vi->name, tsr_last_error());
                                continue;
                            }
                            d = db_diff(&ref, &out);
                            CHECK_MSG(d < 0,
                                      "%s%s differs from the reference at sample %ld (%dx%d chroma %d %d-bit, set %d)",
                                      vi->name, base ? " (baseline)" : "", d, w, h, chroma, bitss[bi], kk);
                            tsr_frame_free(&out);
                            cases++;
                        }
                        tsr__db_baseline = 0;
                    }
                    tsr_frame_free(&ref);
                    tsr_frame_free(&src);
                }
    CHECK(cases >= 432);
}

/* A device view of f's planes starting 'skip' samples in (not owned): planes that are not aligned
 * for vector loads. */
static tsr_frame db_view(const tsr_frame *f, int width, int skip)
{
    tsr_frame v = *f;
    v.width = width;
    v.owned = 0;
    for (int i = 0; i < v.nplanes; i++) v.plane[i] = (char *)v.plane[i] + skip * (v.bits > 8 ? 2 : 1);
    return v;
}

/* Every CUDA variant on device frames whose planes (source and destination) start one sample
 * past an aligned address, so the vector paths must fall back; 4:2:0 and 4:4:4, 8 and 16 bits,
 * 16-bit and 8-bit (ordered dither) output. */
TEST(test_deband_cuda_unaligned_planes)
{
    int cases = 0;
    if (!tsr_cuda_available()) SKIP("no CUDA device");
    for (int chroma = TSR_CHROMA_420; chroma <= TSR_CHROMA_444; chroma += TSR_CHROMA_444 - TSR_CHROMA_420)
        for (int bits = 8; bits <= 16; bits += 8)
            for (int od = 0; od < 2; od++) {
                tsr_deband_params p;
                tsr_frame src, ref, dbig, obig, dsrc, ddst, out;
                int w = 261, h = 67, ob;
                tsr_deband_defaults(&p);
                p.sample_mode = 1 + (bits + od) % 2;
                if (od) p.output_depth = 8, p.dither = TSR_DITHER_ORDERED;
                ob = p.output_depth ? p.output_depth : bits;
                src = db_make(w, h, chroma, bits, (unsigned)(chroma + bits + od));
                CHECK_OK(db_run("reference", &src, &ref, &p, 0));
                CHECK_OK(tsr_frame_create(&dbig, w + 4, h, chroma, bits, TSR_DEVICE));
                CHECK_OK(tsr_frame_create(&obig, w + 4, h, chroma, ob, TSR_DEVICE));
                dsrc = db_view(&dbig, w, 1);
                ddst = db_view(&obig, w, 1);
                CHECK_OK(tsr_frame_copy(&src, &dsrc, NULL));
                for (int v = 0; v < tsr_deband_variant_count(); v++) {
                    const tsr_deband_variant_info *vi = tsr_deband_variant_at(v);
                    tsr_exec ex = {TSR_BACKEND_CUDA, vi->name, NULL, 0};
                    if (vi->backend != TSR_BACKEND_CUDA || (vi->only_444 && chroma != TSR_CHROMA_444)) continue;
                    CHECK_OK(tsr_frame_create(&out, w, h, chroma, ob, TSR_HOST));
                    CHECK_OK(tsr_deband_frame(&dsrc, &ddst, &p, 0, &ex));
                    CHECK_OK(tsr_frame_copy(&ddst, &out, NULL));
                    CHECK_OK(tsr_stream_sync(NULL));
                    CHECK_MSG(db_diff(&ref, &out) < 0, "%s differs on unaligned %dx%d chroma %d %d-bit -> %d-bit", vi->name,
                              w, h, chroma, bits, ob);
                    tsr_frame_free(&out);
                    cases++;
                }
                tsr_frame_free(&dbig);
                tsr_frame_free(&obig);
                tsr_frame_free(&ref);
                tsr_frame_free(&src);
            }
    CHECK(cases >= 12);
}

TEST(test_deband_cuda_variants)
{
    tsr_deband_params p;
    tsr_frame src, ref, out, dsrc, ddst;
    int n = 0;
    if (!tsr_cuda_available()) SKIP("no CUDA device");
    tsr_deband_defaults(&p);
    p.output_depth = 8;   /* Floyd-Steinberg on the GPU */
    src = db_make(1023, 577, TSR_CHROMA_444, 16, 3);
    CHECK_OK(db_run("reference", &src, &ref, &p, 0));
    for (int v = 0; v < tsr_deband_variant_count(); v++) {
        const tsr_deband_variant_info *vi = tsr_deband_variant_at(v);
        if (vi->backend != TSR_BACKEND_CUDA) continue;
        CHECK_OK(db_run(vi->name, &src, &out, &p, 0));
        CHECK_MSG(db_diff(&ref, &out) < 0, "%s differs on 1023x577 4:4:4", vi->name);
        tsr_frame_free(&out);
        n++;
    }
    CHECK_EQ(n, 6);
    /* Device frames on a stream: asynchronous, same result. */
    CHECK_OK(tsr_frame_create(&dsrc, src.width, src.height, src.chroma, src.bits, TSR_DEVICE));
    CHECK_OK(tsr_frame_copy(&src, &dsrc, NULL));
    memset(&ddst, 0, sizeof ddst);
    {
        tsr_exec ex = {TSR_BACKEND_CUDA, "planar", NULL, 0};
        CHECK_OK(tsr_deband_frame(&dsrc, &ddst, &p, 0, &ex));
    }
    CHECK_OK(tsr_frame_create(&out, src.width, src.height, src.chroma, 8, TSR_HOST));
    CHECK_OK(tsr_frame_copy(&ddst, &out, NULL));
    CHECK_OK(tsr_stream_sync(NULL));
    CHECK(db_diff(&ref, &out) < 0);
    tsr_frame_free(&out);
    tsr_frame_free(&dsrc);
    tsr_frame_free(&ddst);
    tsr_frame_free(&ref);
    tsr_frame_free(&src);
}

/* Frames large enough for tiles whose every pixel has the full range (the tile variant's fast
 * path) next to border tiles, in every chroma format, at 8, 10 and 16 bits, over parameter sets
 * covering both sample modes, blur-first on and off, the dithers, output depths and ranges up to
 * the staging limit: every CUDA variant against the reference. */
TEST(test_deband_cuda_inner_tiles)
{
    static const int bitss[] = {8, 10, 16};
    int cases = 0;
    if (!tsr_cuda_available()) SKIP("no CUDA device");
    for (int chroma = 0; chroma < 4; chroma++)
        for (int bi = 0; bi < 3; bi++)
            for (int k = 0; k < 8; k++) {
                int kk = 40 + k * 3 + chroma + bi;
                tsr_deband_params p = db_params(kk);
                tsr_frame src = db_make(779, 301, chroma, bitss[bi], (unsigned)kk), ref, out;
                if (k == 0) p.range = 31;   /* the largest halo, beside the defaults' 15 */
                if (k == 1) p.range = 1;
                CHECK_OK(db_run("reference", &src, &ref, &p, kk));
                for (int v = 0; v < tsr_deband_variant_count(); v++) {
                    const tsr_deband_variant_info *vi = tsr_deband_variant_at(v);
                    if (vi->backend != TSR_BACKEND_CUDA || (vi->only_444 && chroma != TSR_CHROMA_444)) continue;
                    CHECK_OK(db_run(vi->name, &src, &out, &p, kk));
                    CHECK_MSG(db_diff(&ref, &out) < 0, "%s differs on 779x301 chroma %d %d-bit, set %d (mode %d, range %d)",
                              vi->name, chroma, bitss[bi], kk, p.sample_mode, p.range);
                    tsr_frame_free(&out);
                    cases++;
                }
                tsr_frame_free(&ref);
                tsr_frame_free(&src);
            }
    CHECK(cases >= 96 * 4);
}

/* Every range from 0 to 255 on every variant against the reference, at 8 and 16 bits, in
 * 4:2:0 (groups of one and two planes) and 4:4:4 (three), both sample modes: the tile kernel's
 * staging grows with the range, past the 48 KB that needs the kernel's opt-in and past the
 * 96 KB above which a group runs 'staged'. */
TEST(test_deband_every_range)
{
    static const int bitss[] = {8, 16}, chromas[] = {TSR_CHROMA_420, TSR_CHROMA_444};
    int cases = 0;
    for (int ci = 0; ci < 2; ci++)
        for (int bi = 0; bi < 2; bi++) {
            tsr_frame src = db_make(203, 77, chromas[ci], bitss[bi], (unsigned)(ci * 2 + bi)), ref, out;
            for (int range = 0; range <= 255; range++)
                for (int mode = 1; mode <= 2; mode++) {
                    tsr_deband_params p;
                    tsr_deband_defaults(&p);
                    p.range = range;
                    p.sample_mode = mode;
                    p.seed = range;
                    p.output_depth = bitss[bi];
                    CHECK_OK(db_run("reference", &src, &ref, &p, range));
                    for (int v = 0; v < tsr_deband_variant_count(); v++) {
                        const tsr_deband_variant_info *vi = tsr_deband_variant_at(v);
                        if (vi->is_reference || (vi->only_444 && chromas[ci] != TSR_CHROMA_444)) continue;
                        if (vi->backend == TSR_BACKEND_CUDA && !tsr_cuda_available()) continue;
                        if (db_run(vi->name, &src, &out, &p, range)) {
                            CHECK_MSG(0, "%s failed at range %d (mode %d, %d-bit, chroma %d): %s", vi->name, range, mode,
                                      bitss[bi], chromas[ci], tsr_last_error());
                            continue;
                        }
                        CHECK_MSG(db_diff(&ref, &out) < 0, "%s differs at range %d (mode %d, %d-bit, chroma %d)", vi->name,
                                  range, mode, bitss[bi], chromas[ci]);
                        tsr_frame_free(&out);
                        cases++;
                    }
                    tsr_frame_free(&ref);
                }
            tsr_frame_free(&src);
        }
    CHECK(cases >= 4 * 256 * 2);   /* the CPU's 'fast' alone */
}

/* Every Floyd-Steinberg kernel (TSR_DEBAND_FS) against the reference: widths below the bands'
 * lag of 93 steps and above, heights of one band and of many (the bands and pairs kernels also
 * with their warps capped, so that bands wait in the ticket queue), 8-, 10- and 16-bit inputs
 * reduced to 8 and 10 bits, every chroma format. */
TEST(test_deband_cuda_fs_kernels)
{
    static const int sizes[][2] = {{1, 1}, {1, 100}, {3, 70}, {40, 33}, {97, 64}, {130, 257}, {257, 131}, {1023, 577}};
    /* kernel, warps cap */
    static const char *const how[][2] = {{"block", NULL}, {"bands", NULL}, {"pairs", NULL}, {"bands", "1"},
                                         {"bands", "3"},  {"pairs", "1"},  {"pairs", "6"}};
    static const int nhow = (int)(sizeof how / sizeof how[0]), bitss[] = {8, 10, 16};
    int cases = 0;
    if (!tsr_cuda_available()) SKIP("no CUDA device");
    for (int si = 0; si < 8; si++)
        for (int bi = 0; bi < 3; bi++) {
            int kk = 90 + si * 3 + bi, chroma = (si + bi) % 4;
            tsr_deband_params p = db_params(kk);
            tsr_frame src = db_make(sizes[si][0], sizes[si][1], chroma, bitss[bi], (unsigned)kk), ref, out;
            p.dither = TSR_DITHER_FLOYD;
            p.output_depth = bi == 1 ? 8 : si % 2 ? 10 : 8;
            CHECK_OK(db_run("reference", &src, &ref, &p, kk));
            for (int k = 0; k < nhow; k++) {
                if (k >= 3 && si < 4) continue;
                setenv("TSR_DEBAND_FS", how[k][0], 1);
                if (how[k][1]) setenv("TSR_DEBAND_FS_WARPS", how[k][1], 1);
                CHECK_OK(db_run("tile", &src, &out, &p, kk));
                CHECK_MSG(db_diff(&ref, &out) < 0,
                          "Floyd-Steinberg '%s' (warps %s) differs on %dx%d chroma %d %d-bit -> %d", how[k][0],
                          how[k][1] ? how[k][1] : "all", sizes[si][0], sizes[si][1], chroma, bitss[bi], p.output_depth);
                tsr_frame_free(&out);
                unsetenv("TSR_DEBAND_FS");
                unsetenv("TSR_DEBAND_FS_WARPS");
                cases++;
            }
            tsr_frame_free(&ref);
            tsr_frame_free(&src);
        }
    CHECK_EQ(cases, 4 * 3 * 3 + 4 * 3 * nhow);
}

TEST(test_deband_seed_and_grain)
{
    tsr_deband_params p;
    tsr_frame src = db_make(97, 61, TSR_CHROMA_420, 8, 1), a, b;
    tsr_deband_defaults(&p);
    CHECK_OK(db_run("fast", &src, &a, &p, 0));
    CHECK_OK(db_run("fast", &src, &b, &p, 5));
    CHECK_MSG(db_diff(&a, &b) < 0, "static grain must not depend on the frame number");
    tsr_frame_free(&b);
    p.seed = 1;
    CHECK_OK(db_run("fast", &src, &b, &p, 0));
    CHECK_MSG(db_diff(&a, &b) >= 0, "another seed must change the output");
    tsr_frame_free(&b);
    p.seed = 0;
    p.dynamic_grain = 1;
    CHECK_OK(db_run("fast", &src, &b, &p, 0));
    tsr_frame_free(&a);
    CHECK_OK(db_run("fast", &src, &a, &p, 1));
    CHECK_MSG(db_diff(&a, &b) >= 0, "dynamic grain must change with the frame number");
    tsr_frame_free(&a);
    tsr_frame_free(&b);
    tsr_frame_free(&src);
}

/* Mean squared error of a 16-bit-scaled luma plane against a double-valued truth. */
static double db_mse(const tsr_frame *f, const double *truth)
{
    double s = 0;
    int sh = 16 - f->bits;
    for (int y = 0; y < f->height; y++)
        for (int x = 0; x < f->width; x++) {
            const char *row = (const char *)f->plane[0] + (size_t)y * f->stride[0];
            double v = (f->bits > 8 ? ((const uint16_t *)row)[x] : ((const uint8_t *)row)[x]) * (double)(1 << sh);
            double d = v - truth[(size_t)y * f->width + x];
            s += d * d;
        }
    return s / ((double)f->width * f->height);
}

TEST(test_deband_reduces_banding_keeps_texture)
{
    int w = 400, h = 120;
    double *truth = malloc(sizeof(double) * w * h);
    tsr_frame band, out, tex, tout;
    tsr_deband_params p;
    double e8, ed;
    CHECK_OK(tsr_frame_create(&band, w, h, TSR_CHROMA_MONO, 8, TSR_HOST));
    /* A shallow ramp of 12 code values over 400 pixels: wide bands. */
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            double t = (100.0 + 12.0 * x / (w - 1)) * 256.0;
            truth[(size_t)y * w + x] = t;
            ((uint8_t *)band.plane[0] + (size_t)y * band.stride[0])[x] = (uint8_t)floor(t / 256.0 + 0.5);
        }
    tsr_deband_defaults(&p);
    p.grain_y = p.grain_c = 0;
    p.output_depth = 16;
    CHECK_OK(db_run("fast", &band, &out, &p, 0));
    e8 = db_mse(&band, truth);
    ed = db_mse(&out, truth);
    CHECK_MSG(ed < e8 * 0.6, "debanding must cut the error of a banded ramp: %g -> %g", e8, ed);
    tsr_frame_free(&out);
    /* Texture (noise of +-20 codes) and hard edges stay exactly as they were without grain. */
    CHECK_OK(tsr_frame_create(&tex, w, h, TSR_CHROMA_MONO, 8, TSR_HOST));
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            ((uint8_t *)tex.plane[0] + (size_t)y * tex.stride[0])[x] =
                (uint8_t)(((x / 20 + y / 20) & 1 ? 60 : 180) + (int)(tsr_test_rand() % 41) - 20);
    p.output_depth = 0;
    CHECK_OK(db_run("fast", &tex, &tout, &p, 0));
    {   /* only pixels whose references happen to average within the threshold (one code value)
         * may move, and by less than one code value */
        long changed = 0;
        int maxd = 0;
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                int a = ((uint8_t *)tex.plane[0] + (size_t)y * tex.stride[0])[x];
                int b = ((uint8_t *)tout.plane[0] + (size_t)y * tout.stride[0])[x];
                changed += a != b;
                if (abs(a - b) > maxd) maxd = abs(a - b);
            }
        CHECK_MSG(maxd <= 1, "texture moved by %d code values", maxd);
        CHECK_MSG(changed < (long)w * h / 10, "texture changed in %ld of %d pixels", changed, w * h);
    }
    tsr_frame_free(&tout);
    tsr_frame_free(&tex);
    tsr_frame_free(&band);
    free(truth);
}

TEST(test_deband_parameter_checks)
{
    tsr_deband_params p;
    tsr_frame src = db_make(8, 8, TSR_CHROMA_420, 8, 0), out;
    tsr_deband_defaults(&p);
    CHECK_EQ(p.range, 15);
    CHECK_EQ(p.y, 64);
    CHECK_EQ(p.sample_mode, 2);
    CHECK_EQ(p.blur_first, 1);
    CHECK_EQ(p.dither, TSR_DITHER_FLOYD);
    p.range = 256;
    CHECK_EQ(db_run("fast", &src, &out, &p, 0), TSR_E_ARG);
    CHECK(strstr(tsr_last_error(), "--range") != NULL);
    tsr_deband_defaults(&p);
    p.sample_mode = 3;
    CHECK_EQ(db_run("fast", &src, &out, &p, 0), TSR_E_ARG);
    CHECK(strstr(tsr_last_error(), "--sample-mode") != NULL);
    tsr_deband_defaults(&p);
    p.output_depth = 4;
    CHECK_EQ(db_run("fast", &src, &out, &p, 0), TSR_E_ARG);
    CHECK(strstr(tsr_last_error(), "--output-depth") != NULL);
    tsr_deband_defaults(&p);
    p.grain_c = -1;
    CHECK_EQ(db_run("fast", &src, &out, &p, 0), TSR_E_ARG);
    tsr_deband_defaults(&p);
    CHECK_EQ(db_run("nosuch", &src, &out, &p, 0), TSR_E_ARG);
    CHECK(strstr(tsr_last_error(), "nosuch") != NULL);
    CHECK_EQ(db_run("aos4", &src, &out, &p, 0), tsr_cuda_compiled() ? TSR_E_UNSUPPORTED : TSR_E_ARG);
    {
        tsr_exec ex = {TSR_BACKEND_CUDA, NULL, NULL, 0};
        memset(&out, 0, sizeof out);
        if (!tsr_cuda_available()) CHECK_EQ(tsr_deband_frame(&src, &out, &p, 0, &ex), TSR_E_NO_DEVICE);
    }
    tsr_frame_free(&src);
}

/* Write 'text' (len bytes) to a temporary file and parse its header (and first frame). */
static tsr_status db_parse(const char *text, size_t len, tsr_y4m_info *info, int read_frames)
{
    FILE *f = tmpfile();
    tsr_status s;
    if (!f) return TSR_E_IO;
    fwrite(text, 1, len, f);
    rewind(f);
    s = tsr_y4m_read_header(f, "test.y4m", info);
    for (int i = 0; !s && i < read_frames; i++) {
        tsr_frame fr;
        int eof;
        if ((s = tsr_frame_create(&fr, info->width, info->height, info->chroma, info->bits, TSR_HOST))) break;
        s = tsr_y4m_read_frame(f, info, &fr, i, &eof);
        tsr_frame_free(&fr);
        if (eof) break;
    }
    fclose(f);
    return s;
}

TEST(test_deband_y4m_headers)
{
    tsr_y4m_info in;
    const char *ok = "YUV4MPEG2 W4 H2 F25:1 Ip A1:1 C420p10 XYSCSS=420P10\n";
    CHECK_OK(db_parse(ok, strlen(ok), &in, 0));
    CHECK_EQ(in.width, 4);
    CHECK_EQ(in.bits, 10);
    CHECK_EQ(in.chroma, TSR_CHROMA_420);
    CHECK_EQ(in.fps_num, 25);
    CHECK(!strcmp(in.extra, "XYSCSS=420P10"));
#define DB_BAD(text, status, needle)                                                               \
    do {                                                                                           \
        CHECK_EQ(db_parse(text, strlen(text), &in, 0), status);                                    \
        CHECK_MSG(strstr(tsr_last_error(), needle) != NULL, "message '%s' lacks '%s'", tsr_last_error(), needle); \
    } while (0)
    DB_BAD("", TSR_E_FORMAT, "empty");
    DB_BAD("P5 4 4 255\n", TSR_E_FORMAT, "YUV4MPEG2");
    DB_BAD("YUV4MPEG2 H2\n", TSR_E_FORMAT, "W (width)");
    DB_BAD("YUV4MPEG2 W0 H2\n", TSR_E_FORMAT, "width");
    DB_BAD("YUV4MPEG2 W4 H2 C411\n", TSR_E_UNSUPPORTED, "C411");
    DB_BAD("YUV4MPEG2 W4 H2 C410\n", TSR_E_UNSUPPORTED, "C410");
    DB_BAD("YUV4MPEG2 W4 H2 C420p18\n", TSR_E_UNSUPPORTED, "18-bit");
    DB_BAD("YUV4MPEG2 W4 H2 Cfoo\n", TSR_E_UNSUPPORTED, "Cfoo");
    DB_BAD("YUV4MPEG2 W4 H2 Im\n", TSR_E_UNSUPPORTED, "mixed interlacing");
    DB_BAD("YUV4MPEG2 W4 H2 Ix\n", TSR_E_FORMAT, "interlace tag 'Ix'");
    {
        static const char *heads[] = {"YUV4MPEG2 W4 H2 It\n", "YUV4MPEG2 W4 H2 Ib\n", "YUV4MPEG2 W4 H2 I?\n",
                                      "YUV4MPEG2 W4 H2\n"};
        static const char want[] = {'t', 'b', 'p', 'p'};
        for (int i = 0; i < 4; i++) {
            FILE *f = tmpfile();
            char line[64] = "";
            CHECK_OK(db_parse(heads[i], strlen(heads[i]), &in, 0));
            CHECK_EQ(in.interlace, want[i]);
            CHECK_OK(tsr_y4m_write_header(f, &in, 8));   /* the field order is written back */
            rewind(f);
            CHECK(fgets(line, sizeof line, f) != NULL);
            CHECK_MSG(strstr(line, want[i] == 't' ? " It " : want[i] == 'b' ? " Ib " : " Ip ") != NULL, "header '%s'",
                      line);
            fclose(f);
        }
    }
    DB_BAD("YUV4MPEG2 W4 H2 Fx\n", TSR_E_FORMAT, "frame rate");
    DB_BAD("YUV4MPEG2 W4 H2 Q7\n", TSR_E_FORMAT, "Q7");
    {
        static const char *tags[] = {"420jpeg", "420paldv", "420mpeg2", "420", "422", "444", "mono", "422p12",
                                     "444p16", "mono16", "420p9"};
        static const int bits[] = {8, 8, 8, 8, 8, 8, 8, 12, 16, 16, 9};
        for (int i = 0; i < 11; i++) {
            char h[64];
            snprintf(h, sizeof h, "YUV4MPEG2 W3 H3 C%s\n", tags[i]);
            CHECK_OK(db_parse(h, strlen(h), &in, 0));
            CHECK_EQ(in.bits, bits[i]);
        }
    }
    /* Frames: a 3x3 4:2:0 8-bit frame is 9 + 4 + 4 bytes. */
    {
        char buf[256];
        size_t n = (size_t)snprintf(buf, sizeof buf, "YUV4MPEG2 W3 H3 C420jpeg\nFRAME\n");
        memset(buf + n, 7, 17);
        n += 17;
        memcpy(buf + n, "FRAME\n", 6);
        n += 6;
        memset(buf + n, 7, 10);   /* second frame cut short */
        CHECK_EQ(db_parse(buf, n + 10, &in, 3), TSR_E_FORMAT);
        CHECK_MSG(strstr(tsr_last_error(), "frame 1: truncated") != NULL, "got '%s'", tsr_last_error());
        CHECK_OK(db_parse(buf, n - 6, &in, 3));   /* two clean frames' worth minus the second: one frame, clean end */
        memcpy(buf + n - 6, "FRAMX\n", 6);
        CHECK_EQ(db_parse(buf, n, &in, 3), TSR_E_FORMAT);
        CHECK(strstr(tsr_last_error(), "frame 1: missing FRAME") != NULL);
    }
#undef DB_BAD
}

TEST(test_deband_y4m_roundtrip)
{
    static const int chromas[] = {TSR_CHROMA_420, TSR_CHROMA_422, TSR_CHROMA_444, TSR_CHROMA_MONO};
    static const int bitss[] = {8, 10, 16, 12};
    for (int i = 0; i < 4; i++) {
        tsr_frame a = db_make(7, 5, chromas[i], bitss[i], 9), b;
        tsr_y4m_info info, back;
        FILE *f = tmpfile();
        int eof = 0;
        memset(&info, 0, sizeof info);
        info.width = 7, info.height = 5, info.chroma = chromas[i], info.bits = bitss[i], info.fps_num = 30000,
        info.fps_den = 1001;
        CHECK_OK(tsr_y4m_write_header(f, &info, bitss[i]));
        CHECK_OK(tsr_y4m_write_frame(f, &a));
        rewind(f);
        CHECK_OK(tsr_y4m_read_header(f, "rt", &back));
        CHECK_EQ(back.bits, bitss[i]);
        CHECK_EQ(back.chroma, chromas[i]);
        CHECK_EQ(back.fps_den, 1001);
        CHECK_OK(tsr_frame_create(&b, 7, 5, chromas[i], bitss[i], TSR_HOST));
        CHECK_OK(tsr_y4m_read_frame(f, &back, &b, 0, &eof));
        CHECK_EQ(eof, 0);
        CHECK(db_diff(&a, &b) < 0);
        CHECK_OK(tsr_y4m_read_frame(f, &back, &b, 1, &eof));
        CHECK_EQ(eof, 1);
        fclose(f);
        tsr_frame_free(&a);
        tsr_frame_free(&b);
    }
}

TEST(test_deband_image)
{
    tsr_image img, out = {0};
    tsr_deband_params p;
    tsr_frame plane, ref;
    tsr_deband_defaults(&p);
    CHECK_OK(tsr_image_create(&img, 37, 23, 4, TSR_U16, TSR_HOST));
    for (int y = 0; y < 23; y++)
        for (int x = 0; x < 37; x++)
            for (int c = 0; c < 4; c++)
                ((uint16_t *)db_row(&img, y))[x * 4 + c] = (uint16_t)(c == 3 ? 1234 * (x + 1) : 600 * (x + y + c));
    p.output_depth = 8;
    CHECK_OK(tsr_deband_image(&img, &out, &p, NULL));
    CHECK_EQ(out.depth, TSR_U8);
    CHECK_EQ(out.channels, 4);
    /* Alpha is copied (rescaled to 8 bits); a colour channel equals the frame path's plane. */
    CHECK_EQ(((uint8_t *)out.data)[3], (1234 * 255 + 32767) / 65535);
    CHECK_OK(tsr_frame_create(&plane, 37, 23, TSR_CHROMA_444, 16, TSR_HOST));
    for (int c = 0; c < 3; c++)
        for (int y = 0; y < 23; y++)
            for (int x = 0; x < 37; x++)
                ((uint16_t *)((char *)plane.plane[c] + y * plane.stride[c]))[x] = ((uint16_t *)db_row(&img, y))[x * 4 + c];
    p.cb = p.cr = p.y;
    p.grain_c = p.grain_y;
    CHECK_OK(db_run("reference", &plane, &ref, &p, 0));
    for (int y = 0; y < 23; y++)
        for (int x = 0; x < 37; x++)
            CHECK_EQ(((uint8_t *)out.data)[y * out.stride + x * 4 + 1], ((uint8_t *)ref.plane[1] + y * ref.stride[1])[x]);
    tsr_frame_free(&plane);
    tsr_frame_free(&ref);
    tsr_image_free(&out);
    tsr_image_free(&img);
}

TEST(test_deband_pipe)
{
    tsr_deband_params p;
    int kinds = tsr_cuda_available() ? 2 : 1;
    tsr_deband_defaults(&p);
    p.dynamic_grain = 1;
    p.output_depth = 8;
    for (int k = 0; k < kinds; k++) {
        tsr_exec ex = {k ? TSR_BACKEND_CUDA : TSR_BACKEND_CPU, NULL, NULL, 0};
        tsr_deband_pipe *pp = NULL;
        int got = 0, next = 0;
        tsr_frame src[7];
        for (int i = 0; i < 7; i++) src[i] = db_make(45, 33, TSR_CHROMA_420, 10, (unsigned)i);
        CHECK_OK(tsr_deband_pipe_open(&pp, 45, 33, TSR_CHROMA_420, 10, &p, &ex));
        if (!pp) continue;
        for (int i = 0; i <= 7; i++) {
            const tsr_frame *done = NULL;
            tsr_frame *in;
            if (i < 7) CHECK_OK(tsr_deband_pipe_input(pp, &in, &done));
            else CHECK_OK(tsr_deband_pipe_drain(pp, &done));
            while (done) {   /* compare each finished frame with the one-shot call */
                tsr_frame ref;
                CHECK_OK(db_run("reference", &src[next], &ref, &p, next));
                CHECK_MSG(db_diff(&ref, done) < 0, "pipe frame %d differs", next);
                tsr_frame_free(&ref);
                next++, got++;
                if (i < 7) break;
                CHECK_OK(tsr_deband_pipe_drain(pp, &done));
            }
            if (i < 7) {
                CHECK_OK(tsr_frame_copy(&src[i], in, NULL));
                CHECK_OK(tsr_deband_pipe_submit(pp, i));
            }
        }
        CHECK_EQ(got, 7);
        tsr_deband_pipe_close(pp);
        for (int i = 0; i < 7; i++) tsr_frame_free(&src[i]);
    }
}

/* Streams shorter than the slots (CUDA allocates a slot's frames at its first use): 1 and 2
 * frames through the one-thread calls, and a slot run before it was ever handed out. */
TEST(test_deband_pipe_short)
{
    tsr_deband_params p;
    int kinds = tsr_cuda_available() ? 2 : 1;
    tsr_deband_defaults(&p);
    p.dynamic_grain = 1;
    for (int k = 0; k < kinds; k++)
        for (int frames = 1; frames <= 2; frames++) {
            tsr_exec ex = {k ? TSR_BACKEND_CUDA : TSR_BACKEND_CPU, NULL, NULL, 0};
            tsr_deband_pipe *pp = NULL;
            const tsr_frame *done = NULL;
            tsr_frame src[2], *in = NULL;
            int got = 0;
            CHECK_OK(tsr_deband_pipe_open(&pp, 37, 20, TSR_CHROMA_422, 12, &p, &ex));
            if (!pp) continue;
            for (int i = 0; i < frames; i++) {
                src[i] = db_make(37, 20, TSR_CHROMA_422, 12, 100u + (unsigned)i);
                CHECK_OK(tsr_deband_pipe_input(pp, &in, &done));
                CHECK(done == NULL && in != NULL && in->plane[0] != NULL);
                if (in) CHECK_OK(tsr_frame_copy(&src[i], in, NULL));
                CHECK_OK(tsr_deband_pipe_submit(pp, i));
            }
            for (;;) {
                tsr_frame ref;
                CHECK_OK(tsr_deband_pipe_drain(pp, &done));
                if (!done) break;
                CHECK_OK(db_run("reference", &src[got], &ref, &p, got));
                CHECK_MSG(db_diff(&ref, done) < 0, "%s pipe of %d frames: frame %d differs", k ? "cuda" : "cpu", frames, got);
                tsr_frame_free(&ref);
                got++;
            }
            CHECK_EQ(got, frames);
            /* CUDA: waiting for a slot that never ran is an error (its events were never recorded),
             * and the runtime's record of it must not surface as the next launch's error (it did
             * until tsr__cuda_status cleared it). compute-sanitizer counts the deliberate error. */
            if (k && !getenv("TSR_TEST_SANITIZER"))
                CHECK(tsr_deband_pipe_wait(pp, tsr_deband_pipe_slots(pp) - 1, &done) == TSR_E_DEVICE);
            /* the last slot, never handed out: runs on whatever its new frame holds */
            CHECK_OK(tsr_deband_pipe_run(pp, tsr_deband_pipe_slots(pp) - 1, 0));
            CHECK_OK(tsr_deband_pipe_wait(pp, tsr_deband_pipe_slots(pp) - 1, &done));
            CHECK(done != NULL && done->plane[0] != NULL);
            tsr_deband_pipe_close(pp);
            for (int i = 0; i < frames; i++) tsr_frame_free(&src[i]);
        }
}

/* The slot interface driven as the CLI drives it: this thread fills and runs frame n in slot
 * n % slots, a second thread waits for each output in order and keeps a copy; 'ran' and 'kept'
 * (under the lock) say which slots are free. */
typedef struct db_slots_job {
    tsr_deband_pipe *pp;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int nslots, frames, ran, kept;
    tsr_frame *got;
    tsr_status status;
} db_slots_job;

/* The waiting side: wait for frame n's slot once it has run, copy its output, free the slot. */
static void *db_slots_waiter(void *arg)
{
    db_slots_job *j = arg;
    for (int n = 0; n < j->frames; n++) {
        const tsr_frame *out = NULL;
        tsr_status s;
        pthread_mutex_lock(&j->lock);
        while (j->ran <= n) pthread_cond_wait(&j->changed, &j->lock);
        pthread_mutex_unlock(&j->lock);
        s = tsr_deband_pipe_wait(j->pp, n % j->nslots, &out);
        if (!s) s = tsr_frame_copy(out, &j->got[n], NULL);
        pthread_mutex_lock(&j->lock);
        if (s && !j->status) j->status = s;
        j->kept = n + 1;
        pthread_cond_broadcast(&j->changed);
        pthread_mutex_unlock(&j->lock);
    }
    return NULL;
}

TEST(test_deband_pipe_slots)
{
    enum { N = 11 };   /* more frames than slots: every slot is reused */
    tsr_deband_params p;
    int kinds = tsr_cuda_available() ? 2 : 1;
    tsr_deband_defaults(&p);
    p.dynamic_grain = 1;   /* frame numbers must reach the right frames */
    p.output_depth = 9;
    for (int k = 0; k < kinds; k++) {
        tsr_exec ex = {k ? TSR_BACKEND_CUDA : TSR_BACKEND_CPU, NULL, NULL, 0};
        tsr_frame src[N], got[N];
        db_slots_job j;
        pthread_t th;
        memset(&j, 0, sizeof j);
        CHECK_OK(tsr_deband_pipe_open(&j.pp, 45, 33, TSR_CHROMA_420, 10, &p, &ex));
        if (!j.pp) continue;
        j.nslots = tsr_deband_pipe_slots(j.pp);
        CHECK(j.nslots >= 3);
        CHECK(tsr_deband_pipe_slot(j.pp, j.nslots) == NULL && tsr_deband_pipe_slot(j.pp, -1) == NULL);
        CHECK(tsr_deband_pipe_run(j.pp, j.nslots, 0) == TSR_E_ARG);
        for (int i = 0; i < N; i++) {
            src[i] = db_make(45, 33, TSR_CHROMA_420, 10, (unsigned)i * 3);
            CHECK_OK(tsr_frame_create(&got[i], 45, 33, TSR_CHROMA_420, 9, TSR_HOST));
        }
        j.frames = N, j.got = got;
        pthread_mutex_init(&j.lock, NULL);
        pthread_cond_init(&j.changed, NULL);
        CHECK(pthread_create(&th, NULL, db_slots_waiter, &j) == 0);
        for (int n = 0; n < N; n++) {
            tsr_status s;
            pthread_mutex_lock(&j.lock);
            while (n - j.kept >= j.nslots) pthread_cond_wait(&j.changed, &j.lock);   /* slot still in use */
            pthread_mutex_unlock(&j.lock);
            CHECK_OK(tsr_frame_copy(&src[n], tsr_deband_pipe_slot(j.pp, n % j.nslots), NULL));
            s = tsr_deband_pipe_run(j.pp, n % j.nslots, n);
            CHECK_OK(s);
            pthread_mutex_lock(&j.lock);
            j.ran = n + 1;
            pthread_cond_broadcast(&j.changed);
            pthread_mutex_unlock(&j.lock);
        }
        pthread_join(th, NULL);
        CHECK_OK(j.status);
        for (int n = 0; n < N; n++) {
            tsr_frame ref;
            CHECK_OK(db_run("reference", &src[n], &ref, &p, n));
            CHECK_MSG(db_diff(&ref, &got[n]) < 0, "%s slot pipe: frame %d differs", k ? "cuda" : "cpu", n);
            tsr_frame_free(&ref);
            tsr_frame_free(&src[n]);
            tsr_frame_free(&got[n]);
        }
        pthread_cond_destroy(&j.changed);
        pthread_mutex_destroy(&j.lock);
        tsr_deband_pipe_close(j.pp);
    }
}

TEST(test_deband_frames_and_outputs)
{
    tsr_frame f, dst, bad;
    tsr_deband_params p;
    uint64_t old = tsr_max_pixels();
    tsr_deband_defaults(&p);
    /* Plane sizes of odd frames: chroma is ceil(w/2) (x ceil(h/2) for 4:2:0). */
    CHECK_EQ(tsr_frame_plane_width(13, TSR_CHROMA_420, 1), 7);
    CHECK_EQ(tsr_frame_plane_height(13, TSR_CHROMA_420, 2), 7);
    CHECK_EQ(tsr_frame_plane_height(13, TSR_CHROMA_422, 1), 13);
    CHECK_EQ(tsr_frame_plane_width(1, TSR_CHROMA_444, 2), 1);
    /* Sizes beyond the pixel limit, bad depths and chroma are refused. */
    tsr_set_max_pixels(1000);
    CHECK_EQ(tsr_frame_create(&f, 100, 11, TSR_CHROMA_420, 8, TSR_HOST), TSR_E_SIZE);
    tsr_set_max_pixels(old);
    CHECK_EQ(tsr_frame_create(&f, 4, 4, TSR_CHROMA_420, 7, TSR_HOST), TSR_E_UNSUPPORTED);
    CHECK_EQ(tsr_frame_create(&f, 4, 4, 9, 8, TSR_HOST), TSR_E_ARG);
    CHECK_EQ(tsr_frame_create(&f, 0, 4, TSR_CHROMA_420, 8, TSR_HOST), TSR_E_SIZE);
    /* A caller-provided output is used in place; a wrong depth or shape is refused. */
    f = db_make(21, 9, TSR_CHROMA_422, 12, 4);
    CHECK_OK(tsr_frame_create(&dst, 21, 9, TSR_CHROMA_422, 12, TSR_HOST));
    {
        void *plane0 = dst.plane[0];
        tsr_frame ref;
        tsr_exec ex = {TSR_BACKEND_CPU, NULL, NULL, 2};
        CHECK_OK(tsr_deband_frame(&f, &dst, &p, 0, &ex));
        CHECK(dst.plane[0] == plane0);
        CHECK_OK(db_run("reference", &f, &ref, &p, 0));
        CHECK(db_diff(&ref, &dst) < 0);
        tsr_frame_free(&ref);
    }
    p.output_depth = 8;
    CHECK_EQ(tsr_deband_frame(&f, &dst, &p, 0, NULL), TSR_E_SIZE);
    CHECK(strstr(tsr_last_error(), "expected 21x9") != NULL);
    p.output_depth = 0;
    bad = dst;
    bad.stride[1] = 2;   /* shorter than a row */
    CHECK_EQ(tsr_deband_frame(&f, &bad, &p, 0, NULL), TSR_E_ARG);
    bad = f;
    bad.nplanes = 1;
    tsr_frame_free(&dst);   /* the caller-provided output above (LeakSanitizer found it lost) */
    memset(&dst, 0, sizeof dst);
    CHECK_EQ(tsr_deband_frame(&bad, &dst, &p, 0, NULL), TSR_E_ARG);
    CHECK(dst.plane[0] == NULL);   /* nothing handed out on failure */
    tsr_frame_free(&f);
    {   /* written C tags follow the output depth */
        tsr_y4m_info info;
        char line[128];
        FILE *t = tmpfile();
        memset(&info, 0, sizeof info);
        info.width = 2, info.height = 2, info.chroma = TSR_CHROMA_MONO, info.bits = 8;
        CHECK_OK(tsr_y4m_write_header(t, &info, 16));
        info.chroma = TSR_CHROMA_444;
        strcpy(info.ctag, "444");
        CHECK_OK(tsr_y4m_write_header(t, &info, 10));
        CHECK_OK(tsr_y4m_write_header(t, &info, 8));
        rewind(t);
        CHECK(fgets(line, sizeof line, t) && strstr(line, " Cmono16"));
        CHECK(fgets(line, sizeof line, t) && strstr(line, " C444p10"));
        CHECK(fgets(line, sizeof line, t) && strstr(line, " C444\n"));
        fclose(t);
    }
}

/* Set sample (x, y) of plane p of a host frame. */
static void db_set(tsr_frame *f, int p, int x, int y, int v)
{
    char *row = (char *)f->plane[p] + (size_t)y * f->stride[p];
    if (f->bits > 8) ((uint16_t *)row)[x] = (uint16_t)v;
    else ((uint8_t *)row)[x] = (uint8_t)v;
}

/* tsr_frame_to_image: BT.601 limited range by hand for known colours at 8, 10 and 16 bits,
 * chroma replication, full-scale gray, the same picture at every depth, and its refusals. */
TEST(test_frame_to_image)
{
    /* Y Cb Cr (8-bit) -> R G B, worked out from the documented integer formula */
    static const int yuv_rgb[][6] = {{16, 128, 128, 0, 0, 0},    {235, 128, 128, 255, 255, 255},
                                     {126, 128, 128, 128, 128, 128}, {81, 90, 240, 255, 0, 0},
                                     {145, 54, 34, 0, 255, 1},    {41, 240, 110, 0, 0, 255}};
    static const int depths[] = {8, 10, 16};
    for (int d = 0; d < 3; d++) {
        int bits = depths[d], s = bits - 8;
        tsr_frame f;
        tsr_image img = {0}, luma = {0};
        CHECK_OK(tsr_frame_create(&f, 12, 2, TSR_CHROMA_420, bits, TSR_HOST));
        for (int x = 0; x < 12; x++) {   /* colour k covers columns 2k, 2k+1 (one chroma sample) */
            db_set(&f, 0, x, 0, yuv_rgb[x / 2][0] << s);
            db_set(&f, 0, x, 1, yuv_rgb[x / 2][0] << s);
        }
        for (int k = 0; k < 6; k++) db_set(&f, 1, k, 0, yuv_rgb[k][1] << s), db_set(&f, 2, k, 0, yuv_rgb[k][2] << s);
        CHECK_OK(tsr_frame_to_image(&f, &img, TSR_FRAME_VIEW_RGB, NULL));
        CHECK_EQ(img.channels, 3);
        CHECK_EQ(img.depth, TSR_U8);
        for (int y = 0; img.data && y < 2; y++)
            for (int x = 0; x < 12; x++)
                for (int c = 0; c < 3; c++)
                    CHECK_MSG(((uint8_t *)db_row(&img, y))[3 * x + c] == yuv_rgb[x / 2][3 + c],
                              "%d-bit pixel (%d,%d) channel %d: %d, expected %d", bits, x, y, c,
                              ((uint8_t *)db_row(&img, y))[3 * x + c], yuv_rgb[x / 2][3 + c]);
        CHECK_OK(tsr_frame_to_image(&f, &luma, TSR_FRAME_VIEW_LUMA, NULL));
        CHECK_EQ(luma.channels, 1);
        if (luma.data)   /* Y 235 << s of 2^bits - 1, full scale */
            CHECK_EQ(((uint8_t *)db_row(&luma, 1))[2], ((235 << s) * 255 + ((1 << bits) - 1) / 2) / ((1 << bits) - 1));
        tsr_image_free(&img);
        tsr_image_free(&luma);
        tsr_frame_free(&f);
    }
    {   /* 4:2:0 at 8 bits, shifted to 16 bits, and with its chroma replicated by hand into 4:4:4:
         * the same image (the odd size checks the last chroma column and row) */
        tsr_frame a = db_make(23, 9, TSR_CHROMA_420, 8, 3), b, c;
        tsr_image ia = {0}, ib = {0}, ic = {0};
        tsr_exec ex = {TSR_BACKEND_CPU, NULL, NULL, 3};
        CHECK_OK(tsr_frame_create(&b, 23, 9, TSR_CHROMA_420, 16, TSR_HOST));
        CHECK_OK(tsr_frame_create(&c, 23, 9, TSR_CHROMA_444, 8, TSR_HOST));
        for (int p = 0; p < 3; p++)
            for (int y = 0; y < 9; y++)
                for (int x = 0; x < 23; x++) {
                    int sx = p ? x / 2 : x, sy = p ? y / 2 : y;
                    int v = ((uint8_t *)a.plane[p] + (size_t)sy * a.stride[p])[sx];
                    db_set(&c, p, x, y, v);
                    db_set(&b, p, sx, sy, v << 8);
                }
        CHECK_OK(tsr_frame_to_image(&a, &ia, TSR_FRAME_VIEW_RGB, &ex));
        CHECK_OK(tsr_frame_to_image(&b, &ib, TSR_FRAME_VIEW_RGB, NULL));
        CHECK_OK(tsr_frame_to_image(&c, &ic, TSR_FRAME_VIEW_RGB, NULL));
        for (int y = 0; ia.data && ib.data && ic.data && y < 9; y++) {
            CHECK_MSG(!memcmp(db_row(&ia, y), db_row(&ib, y), 23 * 3), "row %d: 8 and 16 bits differ", y);
            CHECK_MSG(!memcmp(db_row(&ia, y), db_row(&ic, y), 23 * 3), "row %d: 4:2:0 and 4:4:4 differ", y);
        }
        /* refusals: a wrong output shape, a device frame; nothing handed out */
        CHECK_EQ(tsr_frame_to_image(&a, &ib, TSR_FRAME_VIEW_LUMA, NULL), TSR_E_SIZE);
        a.memory = TSR_DEVICE;
        tsr_image_free(&ic);
        memset(&ic, 0, sizeof ic);
        CHECK_EQ(tsr_frame_to_image(&a, &ic, TSR_FRAME_VIEW_RGB, NULL), TSR_E_ARG);
        CHECK(ic.data == NULL);
        a.memory = TSR_HOST;
        tsr_image_free(&ia);
        tsr_image_free(&ib);
        tsr_frame_free(&a);
        tsr_frame_free(&b);
        tsr_frame_free(&c);
    }
    {   /* mono: gray, full scale */
        tsr_frame m;
        tsr_image g = {0};
        CHECK_OK(tsr_frame_create(&m, 3, 1, TSR_CHROMA_MONO, 10, TSR_HOST));
        db_set(&m, 0, 0, 0, 0), db_set(&m, 0, 1, 0, 512), db_set(&m, 0, 2, 0, 1023);
        CHECK_OK(tsr_frame_to_image(&m, &g, TSR_FRAME_VIEW_RGB, NULL));
        CHECK_EQ(g.channels, 1);
        if (g.data) {
            CHECK_EQ(((uint8_t *)g.data)[0], 0);
            CHECK_EQ(((uint8_t *)g.data)[1], 128);   /* (512 * 255 + 511) / 1023 */
            CHECK_EQ(((uint8_t *)g.data)[2], 255);
        }
        tsr_image_free(&g);
        tsr_frame_free(&m);
    }
}
