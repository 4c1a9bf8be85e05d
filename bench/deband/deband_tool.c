/* Helper of bench/deband_bench.sh (built by it against build/libtessera.a):
 *   gen W H N BITS           N synthetic smooth 4:2:0 frames as y4m on stdout
 *   gpu W H ITERS            kernel time vs device copy for planar, vec, staged and tile (4:2:0, 4:4:4), aos3, aos4
 *   cpu W H ITERS THREADS [DEPTH]  median time of the CPU 'fast' variant on one 16-bit 4:2:0 frame, sample
 *                            modes 1 and 2, output depth DEPTH (default 16; 8 takes Floyd-Steinberg)
 *   quality NAME SRC.y4m     banding metrics of deband on a 16-bit source (first frame, luma)
 *   quality NAME synthetic-K built-in 16-bit gradients (K = 0, 1, 2)
 *   texture NAME IMG8.y4m    how much deband changes an 8-bit textured image
 * The quality measures are defined in docs/deband.md. */
#include "tessera.h"
#include "../../src/cpu/deband_int.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void die(const char *what)
{
    fprintf(stderr, "deband_tool: %s: %s\n", what, tsr_last_error());
    exit(1);
}

static int *at16(const tsr_frame *f, int x, int y, int *v)
{
    const char *row = (const char *)f->plane[0] + (size_t)y * f->stride[0];
    *v = (f->bits > 8 ? ((const uint16_t *)row)[x] : ((const uint8_t *)row)[x]) << (16 - f->bits);
    return v;
}

/* Smooth synthetic content: 0 a slow horizontal ramp, 1 a radial gradient, 2 a dark diagonal
 * ramp with a gentle vertical wave; values in 16 bits. */
static int synth(int k, int x, int y, int w, int h)
{
    double u = (double)x / (w - 1), v = (double)y / (h - 1), t;
    if (k == 0) t = 0.40 + 0.06 * u;
    else if (k == 1) t = 0.30 + 0.10 * sqrt((u - 0.5) * (u - 0.5) + (v - 0.5) * (v - 0.5));
    else t = 0.08 + 0.04 * (u + v) / 2 + 0.01 * sin(6.283 * v);
    return (int)floor(t * 65535 + 0.5);
}

static void cmd_gen(int w, int h, int n, int bits)
{
    tsr_frame f;
    tsr_y4m_info info;
    memset(&info, 0, sizeof info);
    info.width = w, info.height = h, info.chroma = TSR_CHROMA_420, info.bits = bits, info.fps_num = 24, info.fps_den = 1;
    if (tsr_frame_create(&f, w, h, TSR_CHROMA_420, bits, TSR_HOST)) die("frame");
    for (int p = 0; p < 3; p++) {
        int pw = tsr_frame_plane_width(w, f.chroma, p), ph = tsr_frame_plane_height(h, f.chroma, p);
        for (int y = 0; y < ph; y++)
            for (int x = 0; x < pw; x++) {
                int v = synth(p, x, y, pw, ph) >> (16 - bits);
                if (bits > 8) ((uint16_t *)((char *)f.plane[p] + y * f.stride[p]))[x] = (uint16_t)v;
                else ((uint8_t *)f.plane[p] + y * f.stride[p])[x] = (uint8_t)v;
            }
    }
    if (tsr_y4m_write_header(stdout, &info, bits)) die("write");
    for (int i = 0; i < n; i++)
        if (tsr_y4m_write_frame(stdout, &f)) die("write");
    tsr_frame_free(&f);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The CPU variant's time per frame in process (no y4m reading or writing): a synthetic 16-bit
 * 4:2:0 frame debanded ITERS times into one preallocated output; median, minimum and maximum. */
static void cmd_cpu(int w, int h, int iters, int threads, int depth)
{
    tsr_exec ex = {TSR_BACKEND_CPU, "fast", NULL, threads};
    tsr_frame in, out;
    tsr_deband_params p;
    const int ob = depth > 8 ? 16 : 8;
    double *t = malloc(sizeof *t * (size_t)(iters > 0 ? iters : 1));
    if (!t || iters < 1) die("iterations");
    if (tsr_frame_create(&in, w, h, TSR_CHROMA_420, 16, TSR_HOST) || tsr_frame_create(&out, w, h, TSR_CHROMA_420, ob, TSR_HOST))
        die("frame");
    for (int pl = 0; pl < 3; pl++) {
        int pw = tsr_frame_plane_width(w, in.chroma, pl), ph = tsr_frame_plane_height(h, in.chroma, pl);
        for (int y = 0; y < ph; y++)
            for (int x = 0; x < pw; x++)
                ((uint16_t *)((char *)in.plane[pl] + y * in.stride[pl]))[x] = (uint16_t)synth(pl, x, y, pw, ph);
    }
    tsr_deband_defaults(&p);
    p.output_depth = depth;
    for (int mode = 2; mode >= 1; mode--) {
        p.sample_mode = mode;
        for (int i = 0; i < iters; i++) {
            struct timespec a, b;
            clock_gettime(CLOCK_MONOTONIC, &a);
            if (tsr_deband_frame(&in, &out, &p, 0, &ex)) die("deband");
            clock_gettime(CLOCK_MONOTONIC, &b);
            t[i] = (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) * 1e-6;
        }
        qsort(t, (size_t)iters, sizeof *t, cmp_double);
        printf("cpu: %dx%d 16-bit 4:2:0 to %d bits, sample mode %d, %d thread(s): median %.2f ms a frame (min %.2f, max %.2f, "
               "%d runs)\n", w, h, depth, mode, threads ? threads : tsr_threads(), t[iters / 2], t[0], t[iters - 1], iters);
    }
    tsr_frame_free(&in);
    tsr_frame_free(&out);
    free(t);
}

static void cmd_gpu(int w, int h, int iters)
{
    static const struct { int kind, chroma; const char *name; } runs[] = {
        {0, TSR_CHROMA_420, "planar 4:2:0"}, {0, TSR_CHROMA_444, "planar 4:4:4"}, {1, TSR_CHROMA_444, "aos3 4:4:4"},
        {2, TSR_CHROMA_444, "aos4 4:4:4"}, {3, TSR_CHROMA_420, "vec 4:2:0"}, {3, TSR_CHROMA_444, "vec 4:4:4"},
        {4, TSR_CHROMA_420, "staged 4:2:0"}, {4, TSR_CHROMA_444, "staged 4:4:4"}, {5, TSR_CHROMA_420, "tile 4:2:0"},
        {5, TSR_CHROMA_444, "tile 4:4:4"}};
    tsr_deband_params p;
#ifndef TSR_HAVE_CUDA
    (void)w, (void)h, (void)iters, (void)p;
    printf("gpu: this build has no CUDA backend\n");
    return;
#endif
    if (!tsr_cuda_available()) {
        printf("gpu: no CUDA device (%s)\n", tsr_cuda_device_name());
        return;
    }
    printf("gpu: %s, %dx%d 16-bit, defaults (sample mode 2, blur first, grain 64), %d iterations; copy: the frame "
           "plane by plane (cudaMemcpy2DAsync); flat copy: one cudaMemcpyAsync of as many bytes\n",
           tsr_cuda_device_name(), w, h, iters);
    tsr_deband_defaults(&p);
    for (int mode = 1; mode <= 2; mode++)
        for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
            tsr_frame host, d_in, d_out;
            tsr__db_plane P[3];
            double kms = 0, cms = 0, fms = 0, bytes = 0;
            p.sample_mode = mode;
            if (tsr_frame_create(&host, w, h, runs[r].chroma, 16, TSR_HOST)) die("frame");
            for (int pl = 0; pl < 3; pl++) {
                int pw = tsr_frame_plane_width(w, host.chroma, pl), ph = tsr_frame_plane_height(h, host.chroma, pl);
                bytes += 2.0 * pw * ph * 2;   /* read + write */
                for (int y = 0; y < ph; y++)
                    for (int x = 0; x < pw; x++)
                        ((uint16_t *)((char *)host.plane[pl] + y * host.stride[pl]))[x] = (uint16_t)synth(pl, x, y, pw, ph);
            }
            if (tsr_frame_create(&d_in, w, h, host.chroma, 16, TSR_DEVICE) ||
                tsr_frame_create(&d_out, w, h, host.chroma, 16, TSR_DEVICE) || tsr_frame_copy(&host, &d_in, NULL) ||
                tsr_stream_sync(NULL))
                die("device frames");
            tsr__deband_setup(&host, &p, 0, 16, P);
#ifdef TSR_HAVE_CUDA
            if (tsr__deband_cuda_time(runs[r].kind, &d_in, &d_out, P, iters, &kms, &cms, &fms)) die("timing");
#endif
            printf("gpu: sample-mode %d %-13s kernel %7.3f ms  copy %7.3f ms  = %5.1f%% of copy bandwidth "
                   "(%.0f GB/s payload); flat copy %7.3f ms = %5.1f%%\n",
                   mode, runs[r].name, kms, cms, 100.0 * cms / kms, bytes / (kms * 1e-3) / 1e9, fms, 100.0 * fms / kms);
            tsr_frame_free(&host);
            tsr_frame_free(&d_in);
            tsr_frame_free(&d_out);
        }
    /* 8-bit frames keep 8 bits out by default, which takes Floyd-Steinberg: the whole frame (tile
     * kernel into 16-bit values, then the dither) with each dither kernel, and without dither. */
    printf("gpu: 8-bit 4:2:0 in and out, defaults (tile, Floyd-Steinberg); copy: the frame plane by plane\n");
    tsr_deband_defaults(&p);
    /* the frame, 1080p, and frames of 2 and 20 bands of luma rows: their difference over 18 is
     * the lag from band to band, the first the time of one band */
    for (int sz = 0; sz < 4; sz++) {
        static const int szs[][2] = {{0, 0}, {1920, 1080}, {3840, 64}, {3840, 640}};
        int fw = sz ? szs[sz][0] : w, fh = sz ? szs[sz][1] : h;
        static const char *const how[] = {"no dither", "block", "bands", "pairs"};
        tsr_frame host, d_in, d_out;
        if (tsr_frame_create(&host, fw, fh, TSR_CHROMA_420, 8, TSR_HOST)) die("frame");
        for (int pl = 0; pl < 3; pl++) {
            int pw = tsr_frame_plane_width(fw, host.chroma, pl), ph = tsr_frame_plane_height(fh, host.chroma, pl);
            for (int y = 0; y < ph; y++)
                for (int x = 0; x < pw; x++)
                    ((uint8_t *)host.plane[pl] + y * host.stride[pl])[x] = (uint8_t)(synth(pl, x, y, pw, ph) >> 8);
        }
        if (tsr_frame_create(&d_in, fw, fh, TSR_CHROMA_420, 8, TSR_DEVICE) ||
            tsr_frame_create(&d_out, fw, fh, TSR_CHROMA_420, 8, TSR_DEVICE) || tsr_frame_copy(&host, &d_in, NULL) ||
            tsr_stream_sync(NULL))
            die("device frames");
        for (int k = 0; k < (int)(sizeof how / sizeof how[0]); k++) {
            tsr__db_plane P[3];
            double kms = 0, cms = 0;
            p.dither = k ? TSR_DITHER_FLOYD : TSR_DITHER_NONE;
            if (k) setenv("TSR_DEBAND_FS", how[k], 1);
            tsr__deband_setup(&host, &p, 0, 8, P);
#ifdef TSR_HAVE_CUDA
            if (tsr__deband_cuda_time(5, &d_in, &d_out, P, k == 1 ? 3 : iters, &kms, &cms, NULL)) die("timing");
#endif
            printf("gpu: 8-bit %dx%d %-11s frame %8.3f ms  copy %7.3f ms  = %5.1f%% of copy bandwidth  (%.0f frames/s)\n",
                   fw, fh, how[k], kms, cms, 100.0 * cms / kms, 1e3 / kms);
        }
        unsetenv("TSR_DEBAND_FS");
        tsr_frame_free(&host);
        tsr_frame_free(&d_in);
        tsr_frame_free(&d_out);
    }
}

/* Luma of the first frame of a y4m file. */
static tsr_frame read_luma(const char *path)
{
    FILE *f = fopen(path, "rb");
    tsr_y4m_info info;
    tsr_frame fr, mono;
    int eof;
    if (!f) {
        perror(path);
        exit(1);
    }
    if (tsr_y4m_read_header(f, path, &info) || tsr_frame_create(&fr, info.width, info.height, info.chroma, info.bits, TSR_HOST) ||
        tsr_y4m_read_frame(f, &info, &fr, 0, &eof) || eof)
        die(path);
    fclose(f);
    if (tsr_frame_create(&mono, info.width, info.height, TSR_CHROMA_MONO, info.bits, TSR_HOST)) die("frame");
    for (int y = 0; y < info.height; y++)
        memcpy((char *)mono.plane[0] + y * mono.stride[0], (char *)fr.plane[0] + y * fr.stride[0],
               (size_t)info.width * (info.bits > 8 ? 2 : 1));
    tsr_frame_free(&fr);
    return mono;
}

struct metrics {
    double psnr, lf_rms, contour_pct;
};

/* PSNR (peak 65535) against the source; RMS of the 9x9 mean of the error in 8-bit code values
 * (the low-frequency, visible part of the error: the staircase); for 8-bit outputs, the percent of
 * pixels on a false contour: a one-code step between runs of 8 equal codes on both sides (noise
 * almost never makes such runs; the bands of a quantised gradient always do). */
static struct metrics measure(const tsr_frame *src, const tsr_frame *o)
{
    struct metrics m = {0, 0, -1};
    int w = src->width, h = src->height, r = 4;
    double se = 0, lf = 0;
    long nlf = 0, contours = 0;
    double *e = malloc(sizeof(double) * w * h), *colsum = calloc((size_t)w, sizeof(double));
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int a, b;
            at16(src, x, y, &a), at16(o, x, y, &b);
            e[(size_t)y * w + x] = b - a;
            se += (double)(b - a) * (b - a);
        }
    m.psnr = se ? 10 * log10(65535.0 * 65535.0 / (se / ((double)w * h))) : 999;
    for (int y = r; y < h - r; y += 2)
        for (int x = r; x < w - r; x += 2) {
            double s = 0;
            for (int dy = -r; dy <= r; dy++)
                for (int dx = -r; dx <= r; dx++) s += e[(size_t)(y + dy) * w + x + dx];
            s /= (2 * r + 1) * (2 * r + 1) * 256.0;
            lf += s * s;
            nlf++;
        }
    m.lf_rms = nlf ? sqrt(lf / nlf) : 0;
    if (o->bits == 8) {
        const uint8_t *c = o->plane[0];
        size_t st = o->stride[0];
#define C(x, y) c[(size_t)(y) * st + (x)]
#define RUN 8
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                int hit = 0;
                if (x >= RUN - 1 && x + RUN < w && abs(C(x + 1, y) - C(x, y)) == 1) {
                    hit = 1;
                    for (int k = 1; k < RUN && hit; k++) hit = C(x - k, y) == C(x, y) && C(x + 1 + k, y) == C(x + 1, y);
                }
                if (!hit && y >= RUN - 1 && y + RUN < h && abs(C(x, y + 1) - C(x, y)) == 1) {
                    hit = 1;
                    for (int k = 1; k < RUN && hit; k++) hit = C(x, y - k) == C(x, y) && C(x, y + 1 + k) == C(x, y + 1);
                }
                contours += hit;
            }
#undef C
#undef RUN
        m.contour_pct = 100.0 * contours / ((double)w * h);
    }
    free(e);
    free(colsum);
    return m;
}

static void row(const char *name, const char *what, struct metrics m)
{
    char c[32] = "-";
    if (m.contour_pct >= 0) snprintf(c, sizeof c, "%.2f%%", m.contour_pct);
    printf("| %s | %s | %.2f | %.3f | %s |\n", name, what, m.psnr, m.lf_rms, c);
}

static tsr_frame deband_r(const tsr_frame *in, int grain, int out_depth, int range)
{
    tsr_deband_params p;
    tsr_frame out;
    tsr_exec ex = {TSR_BACKEND_CPU, "fast", NULL, 0};
    tsr_deband_defaults(&p);
    p.grain_y = p.grain_c = grain;
    p.output_depth = out_depth;
    p.range = range;
    memset(&out, 0, sizeof out);
    if (tsr_deband_frame(in, &out, &p, 0, &ex)) die("deband");
    return out;
}

static tsr_frame deband(const tsr_frame *in, int grain, int out_depth) { return deband_r(in, grain, out_depth, 15); }

static void cmd_quality(const char *name, const char *src_path)
{
    tsr_frame src, q8, o;
    int w, h;
    if (!strncmp(src_path, "synthetic-", 10)) {
        int k = atoi(src_path + 10);
        w = 1920, h = 1080;
        if (tsr_frame_create(&src, w, h, TSR_CHROMA_MONO, 16, TSR_HOST)) die("frame");
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) ((uint16_t *)((char *)src.plane[0] + y * src.stride[0]))[x] = (uint16_t)synth(k, x, y, w, h);
    } else {
        src = read_luma(src_path);
        w = src.width, h = src.height;
        if (src.bits != 16) {
            fprintf(stderr, "deband_tool: %s: need a 16-bit source\n", src_path);
            exit(1);
        }
    }
    if (tsr_frame_create(&q8, w, h, TSR_CHROMA_MONO, 8, TSR_HOST)) die("frame");
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int v = ((uint16_t *)((char *)src.plane[0] + y * src.stride[0]))[x];
            v = (v + 128) >> 8;
            ((uint8_t *)q8.plane[0] + y * q8.stride[0])[x] = (uint8_t)(v > 255 ? 255 : v);
        }
    row(name, "8-bit input (rounded)", measure(&src, &q8));
    o = deband(&q8, 64, 0), row(name, "deband defaults, 8-bit out (grain 64, Floyd-Steinberg)", measure(&src, &o)), tsr_frame_free(&o);
    o = deband(&q8, 0, 0), row(name, "deband grain 0, 8-bit out (Floyd-Steinberg)", measure(&src, &o)), tsr_frame_free(&o);
    o = deband(&q8, 64, 16), row(name, "deband defaults, 16-bit out", measure(&src, &o)), tsr_frame_free(&o);
    o = deband(&q8, 0, 16), row(name, "deband grain 0, 16-bit out", measure(&src, &o)), tsr_frame_free(&o);
    o = deband_r(&q8, 0, 16, 63), row(name, "deband grain 0, range 63, 16-bit out", measure(&src, &o)), tsr_frame_free(&o);
    o = deband_r(&q8, 64, 0, 63), row(name, "deband defaults but range 63, 8-bit out", measure(&src, &o)), tsr_frame_free(&o);
    tsr_frame_free(&q8);
    tsr_frame_free(&src);
}

static void cmd_texture(const char *name, const char *path)
{
    tsr_frame src = read_luma(path), o;
    long changed;
    int grains[2] = {64, 0};
    for (int g = 0; g < 2; g++) {
        struct metrics m;
        o = deband(&src, grains[g], 0);
        m = measure(&src, &o);
        changed = 0;
        for (int y = 0; y < src.height; y++)
            for (int x = 0; x < src.width; x++) {
                int a, b;
                at16(&src, x, y, &a), at16(&o, x, y, &b);
                changed += a != b;
            }
        printf("| %s | deband grain %d vs input | %.2f | %.3f | %.1f%% of pixels changed |\n", name, grains[g], m.psnr,
               m.lf_rms, 100.0 * changed / ((double)src.width * src.height));
        tsr_frame_free(&o);
    }
    tsr_frame_free(&src);
}

int main(int argc, char **argv)
{
    if (argc == 6 && !strcmp(argv[1], "gen")) cmd_gen(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), atoi(argv[5]));
    else if (argc == 5 && !strcmp(argv[1], "gpu")) cmd_gpu(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
    else if ((argc == 6 || argc == 7) && !strcmp(argv[1], "cpu"))
        cmd_cpu(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), atoi(argv[5]), argc == 7 ? atoi(argv[6]) : 16);
    else if (argc == 4 && !strcmp(argv[1], "quality")) cmd_quality(argv[2], argv[3]);
    else if (argc == 4 && !strcmp(argv[1], "texture")) cmd_texture(argv[2], argv[3]);
    else {
        fprintf(stderr, "usage: deband_tool gen W H N BITS | gpu W H ITERS | cpu W H ITERS THREADS [DEPTH] | quality NAME SRC | texture NAME IMG\n");
        return 2;
    }
    return 0;
}
