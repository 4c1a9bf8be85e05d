/* Tests of image file reading and writing (src/io): round trips of every format, channel count
 * and depth, real photographs, crafted headers, corrupt and truncated files, atomic writes. */
#include "test.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <png.h>
#include <jpeglib.h>
#include <zlib.h>

/* ---------------------------------------------------------------- helpers */

/* Row y of an image. */
static unsigned char *io_row(const tsr_image *im, int y) { return (unsigned char *)im->data + (size_t)y * im->stride; }

/* A fresh empty folder under /tmp . */
static void io_tmpdir(char *out, size_t n)
{
    snprintf(out, n, "/tmp/tsr-io-XXXXXX");
    if (!mkdtemp(out)) out[0] = 0;
}

/* Number of entries in a folder other than . and .. */
static int io_count_files(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    if (!d) return -1;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

/* Remove a folder made by io_tmpdir and the files in it. */
static void io_rmdir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char p[512];
    if (!d) return;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        chmod(p, 0700);
        unlink(p);
    }
    closedir(d);
    chmod(dir, 0700);
    rmdir(dir);
}

static int io_write_bytes(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    if (n && fwrite(p, 1, n, f) != n) {
        fclose(f);
        return 0;
    }
    return fclose(f) == 0;
}

/* An image of random samples. */
static tsr_image io_random(int w, int h, int c, tsr_depth d)
{
    tsr_image im = {0};
    if (tsr_image_create(&im, w, h, c, d, TSR_HOST)) return im;
    for (int y = 0; y < h; y++) {
        unsigned char *r = io_row(&im, y);
        for (size_t i = 0; i < (size_t)w * c * d; i++) r[i] = (unsigned char)tsr_test_rand();
    }
    return im;
}

/* A smooth image (gradients plus a little noise): what JPEG is made for. */
static tsr_image io_smooth(int w, int h, int c)
{
    tsr_image im = {0};
    if (tsr_image_create(&im, w, h, c, TSR_U8, TSR_HOST)) return im;
    for (int y = 0; y < h; y++) {
        unsigned char *r = io_row(&im, y);
        for (int x = 0; x < w; x++)
            for (int k = 0; k < c; k++) {
                int v = 30 + (x * 140) / (w + 1) + (y * 50) / (h + 1) + k * 10 + (int)(tsr_test_rand() % 5);
                r[x * c + k] = (unsigned char)v;
            }
    }
    return im;
}

/* Whether two host images have the same shape and samples. */
static int io_equal(const tsr_image *a, const tsr_image *b)
{
    size_t row;
    if (a->width != b->width || a->height != b->height || a->channels != b->channels || a->depth != b->depth)
        return 0;
    row = (size_t)a->width * a->channels * a->depth;
    for (int y = 0; y < a->height; y++)
        if (memcmp(io_row(a, y), io_row(b, y), row)) return 0;
    return 1;
}

/* Largest absolute difference and mean absolute difference of two 8-bit images of one shape. */
static int io_diff8(const tsr_image *a, const tsr_image *b, double *mean)
{
    int worst = 0;
    double sum = 0;
    size_t n = (size_t)a->width * a->channels;
    for (int y = 0; y < a->height; y++) {
        const unsigned char *p = io_row(a, y), *q = io_row(b, y);
        for (size_t i = 0; i < n; i++) {
            int d = abs((int)p[i] - (int)q[i]);
            sum += d;
            if (d > worst) worst = d;
        }
    }
    if (mean) *mean = sum / ((double)n * a->height);
    return worst;
}

/* The failure message is one line and names the file. */
static void io_check_names(const char *file, int line, const char *path)
{
    const char *m = tsr_last_error();
    if (!strstr(m, path)) tsr_test_fail(file, line, "message '%s' does not name the file", m ? m : "");
    if (strchr(m, '\n')) tsr_test_fail(file, line, "message '%s' has a newline", m);
}
#define CHECK_MSG_NAMES(path) io_check_names(__FILE__, __LINE__, (path))

/* Expect status st from tsr_read(path); *img untouched. */
#define CHECK_READ_FAILS(path, st)                                                                 \
    do {                                                                                           \
        tsr_image im_ = {0};                                                                       \
        im_.width = 12345;                                                                         \
        tsr_status s_ = tsr_read((path), &im_);                                                    \
        CHECK_MSG(s_ == (st), "tsr_read(%s) gave %s (%s), expected %s", (path), tsr_status_name(s_),  \
                  tsr_last_error(), tsr_status_name(st));                                          \
        CHECK_EQ(im_.width, 12345);                                                                \
        CHECK(im_.data == NULL);                                                                   \
        if (s_ == TSR_OK) tsr_image_free(&im_);                                                    \
        else CHECK_MSG_NAMES(path);                                                                \
    } while (0)

static const int io_sizes[][2] = {{1, 1}, {13, 42}, {257, 31}, {2, 3}};
#define IO_NSIZES ((int)(sizeof io_sizes / sizeof io_sizes[0]))

/* Write then read one random image and compare exactly. */
static void io_roundtrip_exact(const char *dir, const char *ext, int c, tsr_depth d)
{
    for (int i = 0; i < IO_NSIZES; i++) {
        char path[512];
        tsr_image a = io_random(io_sizes[i][0], io_sizes[i][1], c, d), b = {0};
        snprintf(path, sizeof path, "%s/rt_%d_%d_%d.%s", dir, c, (int)d, i, ext);
        CHECK_OK(tsr_write(path, &a, 0));
        CHECK_OK(tsr_read(path, &b));
        CHECK_MSG(io_equal(&a, &b), "%s: %dx%dx%d depth %d differs after a round trip (read %dx%dx%d depth %d)", ext,
                  a.width, a.height, c, (int)d, b.width, b.height, b.channels, (int)b.depth);
        tsr_image_free(&a);
        tsr_image_free(&b);
    }
}

/* ---------------------------------------------------------------- round trips */

TEST(test_io_roundtrip_png)
{
    char dir[64];
    io_tmpdir(dir, sizeof dir);
    for (int c = 1; c <= 4; c++) {
        io_roundtrip_exact(dir, "png", c, TSR_U8);
        io_roundtrip_exact(dir, "png", c, TSR_U16);
    }
    {
        char path[512];
        snprintf(path, sizeof path, "%s/rt_1_1_0.png", dir);
        const char *f = tsr_file_format(path);
        CHECK(f && !strcmp(f, "png"));
    }
    io_rmdir(dir);
}

/* tsr_write_ex: every zlib level gives the same pixels; a smooth image is smaller at level 9 than
 * at level 1; levels outside 0..9 are refused before any file is made. */
TEST(test_io_png_level)
{
    char dir[64], path[512];
    size_t n1 = 0, n9 = 0;
    tsr_image a = io_smooth(257, 31, 3);
    io_tmpdir(dir, sizeof dir);
    for (int level = 0; level <= 9; level++) {
        tsr_image b = {0};
        snprintf(path, sizeof path, "%s/l%d.png", dir, level);
        CHECK_OK(tsr_write_ex(path, &a, 0, level));
        CHECK_OK(tsr_read(path, &b));
        CHECK_MSG(io_equal(&a, &b), "level %d changed the pixels", level);
        tsr_image_free(&b);
    }
    snprintf(path, sizeof path, "%s/l1.png", dir);
    free(tsr_test_read_file(path, &n1));
    snprintf(path, sizeof path, "%s/l9.png", dir);
    free(tsr_test_read_file(path, &n9));
    CHECK_MSG(n9 < n1, "level 9 %zu bytes, level 1 %zu bytes", n9, n1);
    snprintf(path, sizeof path, "%s/bad.png", dir);
    CHECK_EQ(tsr_write_ex(path, &a, 0, 10), TSR_E_ARG);
    CHECK_EQ(tsr_write_ex(path, &a, 0, -1), TSR_E_ARG);
    CHECK(access(path, F_OK) != 0);
    /* other formats ignore the level */
    snprintf(path, sizeof path, "%s/l.ppm", dir);
    CHECK_OK(tsr_write_ex(path, &a, 0, 1));
    tsr_image_free(&a);
    io_rmdir(dir);
}

/* The banded PNG encoder on images of several bands (256 KB of rows each): every channel count
 * and depth reads back exactly, and the file's bytes do not depend on the thread count. */
TEST(test_io_png_bands)
{
    char dir[64], path[512];
    io_tmpdir(dir, sizeof dir);
    for (int c = 1; c <= 4; c++)
        for (int d = 1; d <= 2; d++) {
            tsr_image a = d == 1 ? io_smooth(301, 977, c) : io_random(301, 977, c, TSR_U16), b = {0};
            unsigned char *f[2];
            size_t n[2] = {0, 0};
            for (int t = 0; t < 2; t++) {
                tsr_set_threads(t ? 3 : 1);
                snprintf(path, sizeof path, "%s/b%d_%d_%d.png", dir, c, d, t);
                CHECK_OK(tsr_write_ex(path, &a, 0, t ? 1 : 0));
                CHECK_OK(tsr_read(path, &b));
                CHECK_MSG(io_equal(&a, &b), "%d channels, %d bytes, level %d: pixels differ", c, d, t ? 1 : 0);
                tsr_image_free(&b);
                CHECK_OK(tsr_write_ex(path, &a, 0, 1));   /* level 1 again, for the bytes */
                f[t] = tsr_test_read_file(path, &n[t]);
            }
            tsr_set_threads(0);
            CHECK_MSG(f[0] && f[1] && n[0] == n[1] && !memcmp(f[0], f[1], n[0]),
                      "%d channels, %d bytes: the file differs between 1 and 3 threads", c, d);
            free(f[0]), free(f[1]);
            tsr_image_free(&a);
        }
    io_rmdir(dir);
}

TEST(test_io_roundtrip_pnm)
{
    char dir[64];
    io_tmpdir(dir, sizeof dir);
    io_roundtrip_exact(dir, "pgm", 1, TSR_U8);
    io_roundtrip_exact(dir, "pgm", 1, TSR_U16);
    io_roundtrip_exact(dir, "ppm", 3, TSR_U8);
    io_roundtrip_exact(dir, "ppm", 3, TSR_U16);
    io_roundtrip_exact(dir, "pnm", 1, TSR_U16);
    io_roundtrip_exact(dir, "pnm", 3, TSR_U8);
    for (int c = 2; c <= 4; c += 2) {
        char path[512];
        tsr_image a = io_random(5, 4, c, TSR_U8);
        snprintf(path, sizeof path, "%s/x%d.ppm", dir, c);
        CHECK_EQ(tsr_write(path, &a, 0), TSR_E_UNSUPPORTED);
        CHECK_MSG_NAMES(path);
        CHECK(access(path, F_OK) != 0);
        tsr_image_free(&a);
    }
    io_rmdir(dir);
}

TEST(test_io_roundtrip_bmp)
{
    char dir[64], path[512];
    tsr_image a;
    io_tmpdir(dir, sizeof dir);
    io_roundtrip_exact(dir, "bmp", 1, TSR_U8);
    io_roundtrip_exact(dir, "bmp", 3, TSR_U8);
    io_roundtrip_exact(dir, "bmp", 4, TSR_U8);
    /* A 4-channel image whose alpha is all zero stays 4 channels (the header has an alpha mask). */
    a = io_random(7, 5, 4, TSR_U8);
    for (int y = 0; y < 5; y++)
        for (int x = 0; x < 7; x++) io_row(&a, y)[4 * x + 3] = 0;
    snprintf(path, sizeof path, "%s/zero_alpha.bmp", dir);
    CHECK_OK(tsr_write(path, &a, 0));
    {
        tsr_image b = {0};
        CHECK_OK(tsr_read(path, &b));
        CHECK(io_equal(&a, &b));
        tsr_image_free(&b);
    }
    tsr_image_free(&a);
    a = io_random(5, 4, 2, TSR_U8);
    snprintf(path, sizeof path, "%s/ga.bmp", dir);
    CHECK_EQ(tsr_write(path, &a, 0), TSR_E_UNSUPPORTED);
    tsr_image_free(&a);
    a = io_random(5, 4, 3, TSR_U16);
    CHECK_EQ(tsr_write(path, &a, 0), TSR_E_UNSUPPORTED);
    CHECK_MSG_NAMES(path);
    tsr_image_free(&a);
    CHECK_EQ(io_count_files(dir), 3 * IO_NSIZES + 1);
    io_rmdir(dir);
}

TEST(test_io_roundtrip_jpeg)
{
    char dir[64], path[512];
    io_tmpdir(dir, sizeof dir);
    for (int c = 1; c <= 3; c += 2)
        for (int i = 0; i < IO_NSIZES; i++) {
            tsr_image a = io_smooth(io_sizes[i][0], io_sizes[i][1], c), b = {0};
            double mean;
            snprintf(path, sizeof path, "%s/rt_%d_%d.jpg", dir, c, i);
            CHECK_OK(tsr_write(path, &a, 0));
            CHECK_OK(tsr_read(path, &b));
            CHECK_EQ(b.width, a.width);
            CHECK_EQ(b.height, a.height);
            CHECK_EQ(b.channels, c);
            CHECK_EQ(b.depth, TSR_U8);
            if (b.width == a.width && b.height == a.height && b.channels == c) {
                int worst = io_diff8(&a, &b, &mean);
                CHECK_MSG(mean < 3.0 && worst < 40, "JPEG q95 %dx%dx%d: mean error %.2f, worst %d", a.width, a.height,
                          c, mean, worst);
            }
            tsr_image_free(&b);
            /* q=100 gray is nearly lossless. */
            if (c == 1) {
                snprintf(path, sizeof path, "%s/q100_%d.jpeg", dir, i);
                CHECK_OK(tsr_write(path, &a, 100));
                CHECK_OK(tsr_read(path, &b));
                if (b.data && b.width == a.width && b.height == a.height && b.channels == 1) {
                    int worst = io_diff8(&a, &b, &mean);
                    CHECK_MSG(worst <= 2, "JPEG q100 gray %dx%d: worst error %d", a.width, a.height, worst);
                }
                tsr_image_free(&b);
            }
            tsr_image_free(&a);
        }
    {
        /* Lower quality makes a smaller file. */
        tsr_image a = io_smooth(257, 31, 3);
        size_t n1 = 0, n95 = 0;
        unsigned char *p;
        snprintf(path, sizeof path, "%s/q1.jpg", dir);
        CHECK_OK(tsr_write(path, &a, 1));
        free(tsr_test_read_file(path, &n1));
        snprintf(path, sizeof path, "%s/q95.jpg", dir);
        CHECK_OK(tsr_write(path, &a, 95));
        p = tsr_test_read_file(path, &n95);
        CHECK(p && n95 > 3 && p[0] == 0xff && p[1] == 0xd8);
        free(p);
        CHECK_MSG(n1 < n95, "q1 %zu bytes, q95 %zu bytes", n1, n95);
        CHECK_EQ(tsr_write(path, &a, 101), TSR_E_ARG);
        CHECK_EQ(tsr_write(path, &a, -1), TSR_E_ARG);
        tsr_image_free(&a);
        /* No alpha, no 16 bits. */
        a = io_smooth(9, 9, 4);
        snprintf(path, sizeof path, "%s/rgba.jpg", dir);
        CHECK_EQ(tsr_write(path, &a, 0), TSR_E_UNSUPPORTED);
        CHECK(strstr(tsr_last_error(), "no alpha") != NULL);
        tsr_image_free(&a);
        a = io_smooth(9, 9, 2);
        CHECK_EQ(tsr_write(path, &a, 0), TSR_E_UNSUPPORTED);
        tsr_image_free(&a);
        a = io_random(9, 9, 1, TSR_U16);
        CHECK_EQ(tsr_write(path, &a, 0), TSR_E_UNSUPPORTED);
        CHECK_MSG_NAMES(path);
        tsr_image_free(&a);
        CHECK(access(path, F_OK) != 0);
    }
    io_rmdir(dir);
}

/* ---------------------------------------------------------------- crafted files */

/* Write a PNG directly with libpng: any colour type and bit depth, optional palette and tRNS,
 * optional interlacing. Samples come from tsr_test_rand, limited to the bit depth. */
static int io_make_png(const char *path, int w, int h, int color_type, int bit_depth, int npal, int trns,
                       int interlace)
{
    FILE *f = fopen(path, "wb");
    png_structp png;
    png_infop info;
    png_color pal[256];
    png_byte alpha[256];
    png_color_16 tc;
    unsigned char *rows;
    size_t rb;
    if (!f) return 0;
    png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    info = png_create_info_struct(png);
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        fclose(f);
        return 0;
    }
    png_init_io(png, f);
    png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)h, bit_depth, color_type,
                 interlace ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                 PNG_FILTER_TYPE_DEFAULT);
    if (color_type == PNG_COLOR_TYPE_PALETTE) {
        for (int i = 0; i < npal; i++) {
            pal[i].red = (png_byte)(i * 3), pal[i].green = (png_byte)(255 - i), pal[i].blue = (png_byte)(i * 7);
            alpha[i] = (png_byte)(i * 5);
        }
        png_set_PLTE(png, info, pal, npal);
        if (trns) png_set_tRNS(png, info, alpha, npal, NULL);
    } else if (trns) {
        memset(&tc, 0, sizeof tc);
        tc.gray = 1, tc.red = 1, tc.green = 2, tc.blue = 3;
        png_set_tRNS(png, info, NULL, 0, &tc);
    }
    png_write_info(png, info);
    rb = png_get_rowbytes(png, info);
    rows = malloc(rb * (size_t)h);
    for (size_t i = 0; i < rb * (size_t)h; i++) rows[i] = (unsigned char)tsr_test_rand();
    if (color_type == PNG_COLOR_TYPE_PALETTE) /* indices below npal */
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                unsigned char *p = rows + (size_t)y * rb + (size_t)x * bit_depth / 8;
                int shift = 8 - bit_depth - (x * bit_depth) % 8, mask = (1 << bit_depth) - 1;
                int v = (int)(tsr_test_rand() % (unsigned)npal);
                *p = (unsigned char)((*p & ~(mask << shift)) | (v << shift));
            }
    {
        png_bytep *rp = malloc(sizeof *rp * (size_t)h);
        for (int y = 0; y < h; y++) rp[y] = rows + (size_t)y * rb;
        png_write_image(png, rp);
        free(rp);
    }
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    free(rows);
    return fclose(f) == 0;
}

TEST(test_io_png_variants)
{
    static const struct { int type, depth, npal, trns, channels, out_depth; } v[] = {
        {PNG_COLOR_TYPE_GRAY, 1, 0, 0, 1, 1},        {PNG_COLOR_TYPE_GRAY, 2, 0, 0, 1, 1},
        {PNG_COLOR_TYPE_GRAY, 4, 0, 0, 1, 1},        {PNG_COLOR_TYPE_GRAY, 8, 0, 0, 1, 1},
        {PNG_COLOR_TYPE_GRAY, 16, 0, 0, 1, 2},       {PNG_COLOR_TYPE_GRAY, 8, 0, 1, 2, 1},
        {PNG_COLOR_TYPE_GRAY, 4, 0, 1, 2, 1},        {PNG_COLOR_TYPE_GRAY, 16, 0, 1, 2, 2},
        {PNG_COLOR_TYPE_GRAY_ALPHA, 8, 0, 0, 2, 1},  {PNG_COLOR_TYPE_GRAY_ALPHA, 16, 0, 0, 2, 2},
        {PNG_COLOR_TYPE_RGB, 8, 0, 0, 3, 1},         {PNG_COLOR_TYPE_RGB, 16, 0, 0, 3, 2},
        {PNG_COLOR_TYPE_RGB, 8, 0, 1, 4, 1},         {PNG_COLOR_TYPE_RGB_ALPHA, 8, 0, 0, 4, 1},
        {PNG_COLOR_TYPE_RGB_ALPHA, 16, 0, 0, 4, 2},  {PNG_COLOR_TYPE_PALETTE, 1, 2, 0, 3, 1},
        {PNG_COLOR_TYPE_PALETTE, 2, 3, 0, 3, 1},     {PNG_COLOR_TYPE_PALETTE, 4, 16, 1, 4, 1},
        {PNG_COLOR_TYPE_PALETTE, 8, 200, 0, 3, 1},   {PNG_COLOR_TYPE_PALETTE, 8, 256, 1, 4, 1},
    };
    char dir[64], path[512];
    io_tmpdir(dir, sizeof dir);
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        for (int interlace = 0; interlace < 2; interlace++) {
            tsr_image im = {0};
            snprintf(path, sizeof path, "%s/v%zu_%d.png", dir, i, interlace);
            if (!io_make_png(path, 13, 11, v[i].type, v[i].depth, v[i].npal, v[i].trns, interlace)) {
                CHECK_MSG(0, "cannot make %s", path);
                continue;
            }
            CHECK_OK(tsr_read(path, &im));
            CHECK_MSG(im.channels == v[i].channels && (int)im.depth == v[i].out_depth && im.width == 13 &&
                          im.height == 11,
                      "PNG type %d depth %d tRNS %d: read %dx%dx%d depth %d", v[i].type, v[i].depth, v[i].trns,
                      im.width, im.height, im.channels, (int)im.depth);
            /* Low bit depths expand to the full 8-bit range: 1-bit gray is 0 or 255. */
            if (im.data && v[i].type == PNG_COLOR_TYPE_GRAY && v[i].depth == 1)
                for (int y = 0; y < im.height; y++)
                    for (int x = 0; x < im.width; x++) {
                        unsigned char s = io_row(&im, y)[x];
                        CHECK_MSG(s == 0 || s == 255, "1-bit gray sample %d", s);
                    }
            /* Palette entries: green is 255 - index, so the expansion used the palette. */
            if (im.data && v[i].type == PNG_COLOR_TYPE_PALETTE)
                for (int y = 0; y < im.height; y++)
                    for (int x = 0; x < im.width; x++) {
                        unsigned char *p = io_row(&im, y) + x * im.channels;
                        int idx = 255 - p[1];
                        CHECK(p[0] == (unsigned char)(idx * 3) && p[2] == (unsigned char)(idx * 7));
                        if (im.channels == 4) CHECK(p[3] == (unsigned char)(idx * 5));
                    }
            tsr_image_free(&im);
        }
    io_rmdir(dir);
}

/* A PNG file with the given IHDR size (valid CRC) and nothing after it but IEND. */
static size_t io_png_header(unsigned char *out, uint32_t w, uint32_t h)
{
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    unsigned char *p = out;
    uLong crc;
    memcpy(p, sig, 8), p += 8;
    p[0] = 0, p[1] = 0, p[2] = 0, p[3] = 13, p += 4;
    memcpy(p, "IHDR", 4);
    p[4] = (unsigned char)(w >> 24), p[5] = (unsigned char)(w >> 16), p[6] = (unsigned char)(w >> 8), p[7] = (unsigned char)w;
    p[8] = (unsigned char)(h >> 24), p[9] = (unsigned char)(h >> 16), p[10] = (unsigned char)(h >> 8), p[11] = (unsigned char)h;
    p[12] = 8, p[13] = 2, p[14] = 0, p[15] = 0, p[16] = 0;
    crc = crc32(0, p, 17);
    p += 17;
    p[0] = (unsigned char)(crc >> 24), p[1] = (unsigned char)(crc >> 16), p[2] = (unsigned char)(crc >> 8), p[3] = (unsigned char)crc;
    p += 4;
    memcpy(p, "\0\0\0\0IEND\xae\x42\x60\x82", 12), p += 12;
    return (size_t)(p - out);
}

/* A BMP header (40-byte info header) for a w x h image of bpp bits, compression comp; the
 * pixel data is zeros (with 'palette' 4-byte entries before it). Returns the file size. */
static size_t io_bmp_header(unsigned char *out, size_t cap, int32_t w, int32_t h, int bpp, int comp, int palette,
                            size_t pixel_bytes)
{
    size_t off = 14 + 40 + 4 * (size_t)palette, total = off + pixel_bytes;
    if (total > cap) return 0;
    memset(out, 0, total);
    out[0] = 'B', out[1] = 'M';
    for (int i = 0; i < 4; i++) {
        out[2 + i] = (unsigned char)(total >> (8 * i));
        out[10 + i] = (unsigned char)(off >> (8 * i));
        out[14 + i] = (unsigned char)(40 >> (8 * i));
        out[18 + i] = (unsigned char)((uint32_t)w >> (8 * i));
        out[22 + i] = (unsigned char)((uint32_t)h >> (8 * i));
        out[30 + i] = (unsigned char)((uint32_t)comp >> (8 * i));
        out[46 + i] = (unsigned char)((uint32_t)palette >> (8 * i));
    }
    out[26] = 1;
    out[28] = (unsigned char)bpp;
    return total;
}

TEST(test_io_absurd_sizes)
{
    char dir[64], path[512];
    unsigned char buf[4096];
    size_t n;
    io_tmpdir(dir, sizeof dir);

    n = io_png_header(buf, 100000, 100000);
    snprintf(path, sizeof path, "%s/huge.png", dir);
    io_write_bytes(path, buf, n);
    CHECK_READ_FAILS(path, TSR_E_SIZE);
    CHECK(strstr(tsr_last_error(), "over the limit") != NULL);
    n = io_png_header(buf, 0x7fffffff, 0x7fffffff);
    io_write_bytes(path, buf, n);
    CHECK_READ_FAILS(path, TSR_E_SIZE);
    n = io_png_header(buf, 0, 10);
    io_write_bytes(path, buf, n);
    CHECK_READ_FAILS(path, TSR_E_FORMAT);
    n = io_png_header(buf, 0x80000000u, 10);
    io_write_bytes(path, buf, n);
    CHECK_READ_FAILS(path, TSR_E_FORMAT);
    /* A sane size but no image data. */
    n = io_png_header(buf, 10, 10);
    io_write_bytes(path, buf, n);
    CHECK_READ_FAILS(path, TSR_E_FORMAT);

    snprintf(path, sizeof path, "%s/huge.bmp", dir);
    n = io_bmp_header(buf, sizeof buf, 100000, 100000, 24, 0, 0, 16);
    io_write_bytes(path, buf, n);
    CHECK_READ_FAILS(path, TSR_E_SIZE);
    CHECK(strstr(tsr_last_error(), "100000x100000 is over the limit") != NULL);
    n = io_bmp_header(buf, sizeof buf, 0x7fffffff, -0x7fffffff, 32, 0, 0, 16);
    io_write_bytes(path, buf, n);
    CHECK_READ_FAILS(path, TSR_E_SIZE);
    n = io_bmp_header(buf, sizeof buf, 30000, 30000, 24, 0, 0, 16);   /* under the limit, no pixels */
    io_write_bytes(path, buf, n);
    CHECK_READ_FAILS(path, TSR_E_FORMAT);
    n = io_bmp_header(buf, sizeof buf, 4, INT32_MIN, 24, 0, 0, 16);
    io_write_bytes(path, buf, n);
    CHECK_READ_FAILS(path, TSR_E_FORMAT);

    snprintf(path, sizeof path, "%s/huge.pgm", dir);
    io_write_bytes(path, "P5\n100000 100000\n255\n\0\0\0", 24);
    CHECK_READ_FAILS(path, TSR_E_SIZE);
    io_write_bytes(path, "P5 99999999999999999999 2 255\n\0\0\0", 33);
    CHECK_READ_FAILS(path, TSR_E_SIZE);
    io_write_bytes(path, "P2\n30000 30000\n255\n1 2 3\n", 25);   /* too short to hold the samples */
    CHECK_READ_FAILS(path, TSR_E_FORMAT);
    io_write_bytes(path, "P5\n3 2\n65536\n\0\0\0\0\0\0", 19);
    CHECK_READ_FAILS(path, TSR_E_FORMAT);
    io_write_bytes(path, "P5\n3 2\n0\n\0\0\0\0\0\0", 15);
    CHECK_READ_FAILS(path, TSR_E_FORMAT);

    /* A JPEG whose frame header claims 65000x65000. */
    {
        tsr_image a = io_smooth(16, 16, 3);
        unsigned char *p;
        snprintf(path, sizeof path, "%s/huge.jpg", dir);
        CHECK_OK(tsr_write(path, &a, 0));
        tsr_image_free(&a);
        p = tsr_test_read_file(path, &n);
        for (size_t i = 2; p && i + 9 < n; i++)
            if (p[i] == 0xff && (p[i + 1] == 0xc0 || p[i + 1] == 0xc2)) {
                p[i + 5] = 0xfd, p[i + 6] = 0xe8, p[i + 7] = 0xfd, p[i + 8] = 0xe8;
                break;
            }
        io_write_bytes(path, p, n);
        free(p);
        CHECK_READ_FAILS(path, TSR_E_SIZE);
    }

    /* The limit is tsr_max_pixels(). */
    {
        uint64_t old = tsr_max_pixels();
        tsr_image a = io_random(13, 42, 3, TSR_U8), b = {0};
        const char *exts[] = {"png", "jpg", "ppm", "bmp"};
        for (int i = 0; i < 4; i++) {
            snprintf(path, sizeof path, "%s/limit.%s", dir, exts[i]);
            CHECK_OK(tsr_write(path, &a, 0));
            tsr_set_max_pixels(13 * 42 - 1);
            CHECK_READ_FAILS(path, TSR_E_SIZE);
            tsr_set_max_pixels(13 * 42);
            CHECK_OK(tsr_read(path, &b));
            tsr_image_free(&b);
            tsr_set_max_pixels(old);
        }
        tsr_image_free(&a);
    }
    io_rmdir(dir);
}

TEST(test_io_missing_and_empty)
{
    char dir[64], path[512];
    io_tmpdir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/none.png", dir);
    CHECK_READ_FAILS(path, TSR_E_IO);
    CHECK(strstr(tsr_last_error(), strerror(ENOENT)) != NULL);
    CHECK(tsr_file_format(path) == NULL);
    CHECK_MSG_NAMES(path);
    snprintf(path, sizeof path, "%s/empty.png", dir);
    io_write_bytes(path, "", 0);
    CHECK_READ_FAILS(path, TSR_E_FORMAT);
    CHECK(strstr(tsr_last_error(), "empty") != NULL);
    CHECK(tsr_file_format(path) == NULL);
    snprintf(path, sizeof path, "%s/text.png", dir);
    io_write_bytes(path, "hello, world\n", 13);
    CHECK_READ_FAILS(path, TSR_E_FORMAT);
    CHECK(tsr_file_format(path) == NULL);
    CHECK_READ_FAILS(dir, TSR_E_IO);   /* a folder */
    CHECK_EQ(tsr_read(NULL, NULL), TSR_E_ARG);
    io_rmdir(dir);
}

/* Files of every format, truncated at many offsets, must fail with TSR_E_FORMAT. */
TEST(test_io_truncated)
{
    const char *exts[] = {"png", "jpg", "ppm", "pgm", "bmp", "bmp", "png"};
    const int chans[] = {3, 3, 3, 1, 4, 1, 2};
    char dir[64], path[512], cut[512];
    io_tmpdir(dir, sizeof dir);
    for (int f = 0; f < 7; f++) {
        tsr_image a = f == 1 ? io_smooth(37, 29, 3) : io_random(37, 29, chans[f], TSR_U8);
        unsigned char *p;
        size_t n = 0;
        snprintf(path, sizeof path, "%s/full%d.%s", dir, f, exts[f]);
        snprintf(cut, sizeof cut, "%s/cut%d.%s", dir, f, exts[f]);
        CHECK_OK(tsr_write(path, &a, 0));
        tsr_image_free(&a);
        p = tsr_test_read_file(path, &n);
        if (!p) continue;
        for (size_t len = 1; len < n; len += len < 64 ? 1 : len < 512 ? 7 : 97) {
            io_write_bytes(cut, p, len);
            CHECK_READ_FAILS(cut, TSR_E_FORMAT);
        }
        for (size_t k = 1; k <= 4 && k < n; k++) {
            io_write_bytes(cut, p, n - k);
            CHECK_READ_FAILS(cut, TSR_E_FORMAT);
        }
        io_write_bytes(cut, p, n);
        {
            tsr_image b = {0};
            CHECK_OK(tsr_read(cut, &b));
            tsr_image_free(&b);
        }
        free(p);
    }
    io_rmdir(dir);
}

/* Garbage after a valid magic number, and random corruption of valid files: errors, never a
 * crash (this test is most useful under ASan/valgrind). */
TEST(test_io_garbage)
{
    static const char *magic[] = {"\x89PNG\r\n\x1a\n", "\xff\xd8\xff", "P5", "P6\n", "P2 ", "P3\n4 4\n", "BM"};
    const char *exts[] = {"png", "jpg", "ppm", "bmp", "pgm"};
    char dir[64], path[512];
    unsigned char buf[2048];
    io_tmpdir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/garbage", dir);
    for (size_t m = 0; m < sizeof magic / sizeof magic[0]; m++)
        for (int t = 0; t < 20; t++) {
            size_t ml = strlen(magic[m]), n = ml + 1 + tsr_test_rand() % (sizeof buf - ml - 1);
            memcpy(buf, magic[m], ml);
            for (size_t i = ml; i < n; i++) buf[i] = (unsigned char)tsr_test_rand();
            io_write_bytes(path, buf, n);
            CHECK_READ_FAILS(path, TSR_E_FORMAT);
        }
    /* Bit flips in valid files: any status, but a one-line message naming the file. */
    for (int f = 0; f < 5; f++) {
        tsr_image a = f == 1 ? io_smooth(23, 17, 3) : io_random(23, 17, f == 4 ? 1 : 3, TSR_U8);
        unsigned char *p;
        size_t n = 0;
        snprintf(path, sizeof path, "%s/flip.%s", dir, exts[f]);
        CHECK_OK(tsr_write(path, &a, 0));
        tsr_image_free(&a);
        p = tsr_test_read_file(path, &n);
        for (int t = 0; p && t < 200; t++) {
            unsigned char *q = malloc(n);
            tsr_image b = {0};
            tsr_status s;
            memcpy(q, p, n);
            for (int k = 0; k < 1 + t % 4; k++) q[(t < 100 ? tsr_test_rand() % (n < 80 ? n : 80) : tsr_test_rand() % n)] ^= (unsigned char)(1u << (tsr_test_rand() % 8));
            io_write_bytes(path, q, n);
            s = tsr_read(path, &b);
            if (s == TSR_OK) {
                CHECK(b.data != NULL && b.width > 0 && b.height > 0);
                tsr_image_free(&b);
            } else {
                CHECK(b.data == NULL);
                CHECK_MSG_NAMES(path);
            }
            free(q);
        }
        free(p);
    }
    io_rmdir(dir);
}

/* ---------------------------------------------------------------- writing */

TEST(test_io_write_errors)
{
    char dir[64], path[600], sub[512];
    tsr_image a = io_random(6, 5, 3, TSR_U8), dev;
    io_tmpdir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/x.tiff", dir);
    CHECK_EQ(tsr_write(path, &a, 0), TSR_E_ARG);
    CHECK(strstr(tsr_last_error(), ".tiff") != NULL);
    snprintf(path, sizeof path, "%s/noext", dir);
    CHECK_EQ(tsr_write(path, &a, 0), TSR_E_ARG);
    CHECK_MSG_NAMES(path);
    snprintf(path, sizeof path, "%s.d/x", dir);   /* a dot in the folder is not an extension */
    CHECK_EQ(tsr_write(path, &a, 0), TSR_E_ARG);
    /* Case-insensitive extensions. */
    snprintf(path, sizeof path, "%s/UP.PNG", dir);
    CHECK_OK(tsr_write(path, &a, 0));
    CHECK(tsr_file_format(path) && !strcmp(tsr_file_format(path), "png"));
    snprintf(path, sizeof path, "%s/UP.JpEg", dir);
    CHECK_OK(tsr_write(path, &a, 0));
    CHECK(tsr_file_format(path) && !strcmp(tsr_file_format(path), "jpeg"));
    snprintf(path, sizeof path, "%s/UP.Bmp", dir);
    CHECK_OK(tsr_write(path, &a, 0));
    CHECK(tsr_file_format(path) && !strcmp(tsr_file_format(path), "bmp"));
    snprintf(path, sizeof path, "%s/UP.PPM", dir);
    CHECK_OK(tsr_write(path, &a, 0));
    CHECK(tsr_file_format(path) && !strcmp(tsr_file_format(path), "pnm"));
    /* The format is read from the contents, not the name. */
    {
        char other[512];
        tsr_image b = {0};
        snprintf(other, sizeof other, "%s/really_a_ppm.png", dir);
        CHECK(rename(path, other) == 0);
        CHECK_OK(tsr_read(other, &b));
        CHECK(io_equal(&a, &b));
        tsr_image_free(&b);
    }
    CHECK_EQ(io_count_files(dir), 4);
    /* Device images, missing data, 32-bit samples. */
    dev = a;
    dev.memory = TSR_DEVICE;
    snprintf(path, sizeof path, "%s/dev.png", dir);
    CHECK_EQ(tsr_write(path, &dev, 0), TSR_E_ARG);
    CHECK(strstr(tsr_last_error(), "device") != NULL);
    dev = a;
    dev.data = NULL;
    CHECK_EQ(tsr_write(path, &dev, 0), TSR_E_ARG);
    {
        tsr_image big = {0};
        CHECK_OK(tsr_image_create(&big, 4, 4, 1, TSR_U32, TSR_HOST));
        CHECK_EQ(tsr_write(path, &big, 0), TSR_E_UNSUPPORTED);
        tsr_image_free(&big);
    }
    CHECK_EQ(tsr_write(NULL, &a, 0), TSR_E_ARG);
    CHECK_EQ(tsr_write(path, NULL, 0), TSR_E_ARG);
    CHECK(access(path, F_OK) != 0);
    /* Folders that do not exist or are not folders. */
    snprintf(path, sizeof path, "%s/missing/x.png", dir);
    CHECK_EQ(tsr_write(path, &a, 0), TSR_E_IO);
    CHECK_MSG_NAMES(path);
    CHECK(strstr(tsr_last_error(), strerror(ENOENT)) != NULL);
    snprintf(path, sizeof path, "%s/UP.PNG/x.png", dir);
    CHECK_EQ(tsr_write(path, &a, 0), TSR_E_IO);
    CHECK_EQ(io_count_files(dir), 4);
    /* A folder without write permission (root may write anyway: then this part is moot). */
    snprintf(sub, sizeof sub, "%s/ro", dir);
    CHECK(mkdir(sub, 0500) == 0);
    snprintf(path, sizeof path, "%s/x.png", sub);
    if (access(sub, W_OK) != 0) {
        CHECK_EQ(tsr_write(path, &a, 0), TSR_E_IO);
        CHECK(strstr(tsr_last_error(), strerror(EACCES)) != NULL);
        CHECK_MSG_NAMES(path);
        CHECK_EQ(io_count_files(sub), 0);
    }
    rmdir(sub);
    tsr_image_free(&a);
    io_rmdir(dir);
}

/* Replacing a file: atomic, keeps permissions, and a failed write leaves the original alone. */
TEST(test_io_write_atomic)
{
    char dir[64], path[512];
    unsigned char *p;
    size_t n = 0;
    struct stat st;
    tsr_image a = io_random(9, 8, 4, TSR_U8), b = io_random(9, 8, 3, TSR_U8), c = {0};
    io_tmpdir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/target.jpg", dir);
    io_write_bytes(path, "original", 8);
    CHECK_EQ(tsr_write(path, &a, 0), TSR_E_UNSUPPORTED);   /* 4 channels to JPEG */
    p = tsr_test_read_file(path, &n);
    CHECK(p && n == 8 && !memcmp(p, "original", 8));
    free(p);
    CHECK_EQ(io_count_files(dir), 1);
    /* Other failures after the format is known. */
    {
        tsr_image g = io_random(9, 8, 2, TSR_U8);
        snprintf(path, sizeof path, "%s/target.ppm", dir);
        io_write_bytes(path, "original", 8);
        CHECK_EQ(tsr_write(path, &g, 0), TSR_E_UNSUPPORTED);
        p = tsr_test_read_file(path, &n);
        CHECK(p && n == 8 && !memcmp(p, "original", 8));
        free(p);
        tsr_image_free(&g);
    }
    CHECK_EQ(io_count_files(dir), 2);
    /* A successful replacement keeps the mode and leaves no temporary file. */
    snprintf(path, sizeof path, "%s/target.png", dir);
    io_write_bytes(path, "original", 8);
    chmod(path, 0640);
    CHECK_OK(tsr_write(path, &b, 0));
    CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0640);
    CHECK_OK(tsr_read(path, &c));
    CHECK(io_equal(&b, &c));
    tsr_image_free(&c);
    CHECK_EQ(io_count_files(dir), 3);
    /* A new file gets 0666 less the umask. */
    {
        mode_t old = umask(027);
        snprintf(path, sizeof path, "%s/new.bmp", dir);
        CHECK_OK(tsr_write(path, &b, 0));
        CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0640);
        umask(old);
    }
    /* A relative path (no folder part) works in the current folder. */
    {
        char cwd[512];
        if (getcwd(cwd, sizeof cwd) && chdir(dir) == 0) {
            tsr_image empty = {0}, g;
            CHECK_EQ(tsr_write("rel.pgm", &empty, 0), TSR_E_ARG);
            g = io_random(3, 3, 1, TSR_U8);
            CHECK_OK(tsr_write("rel.pgm", &g, 0));
            tsr_image_free(&g);
            CHECK(chdir(cwd) == 0);
        }
    }
    CHECK_EQ(io_count_files(dir), 5);
    tsr_image_free(&a);
    tsr_image_free(&b);
    io_rmdir(dir);
}

/* "-" reads standard input and writes standard output ("-.EXT" picks the format). */
TEST(test_io_stdio)
{
    char dir[64], path[512];
    const char *outs[] = {"-", "-.ppm", "-.bmp", "-.jpg"};
    tsr_image a = io_random(11, 7, 3, TSR_U8);
    io_tmpdir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/stdout.bin", dir);
    for (int i = 0; i < 4; i++) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600), saved;
        tsr_image b = {0};
        tsr_status s;
        fflush(stdout);
        saved = dup(1);
        dup2(fd, 1);
        close(fd);
        s = tsr_write(outs[i], &a, 0);
        dup2(saved, 1);
        close(saved);
        CHECK_OK(s);
        fd = open(path, O_RDONLY);
        saved = dup(0);
        dup2(fd, 0);
        close(fd);
        s = tsr_read("-", &b);
        dup2(saved, 0);
        close(saved);
        CHECK_OK(s);
        CHECK_EQ(b.channels, 3);
        if (i < 3) CHECK_MSG(io_equal(&a, &b), "round trip through %s differs", outs[i]);
        tsr_image_free(&b);
    }
    CHECK_EQ(io_count_files(dir), 1);
    CHECK(tsr_file_format("-") == NULL);
    tsr_image_free(&a);
    io_rmdir(dir);
}

/* ---------------------------------------------------------------- format details */

/* Read a file made of the given bytes; returns the status and fills *im. */
static tsr_status io_read_mem(const char *dir, const char *name, const void *p, size_t n, tsr_image *im)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    io_write_bytes(path, p, n);
    return tsr_read(path, im);
}

TEST(test_io_pnm_details)
{
    char dir[64];
    tsr_image im = {0};
    io_tmpdir(dir, sizeof dir);
    /* ASCII with comments, maxval 255. */
    {
        static const char f[] = "P2\n# a comment\n3 2 # trailing comment\n255\n0 1 2\n#x\n253 254 255\n";
        CHECK_OK(io_read_mem(dir, "a.pgm", f, sizeof f - 1, &im));
        CHECK(im.width == 3 && im.height == 2 && im.channels == 1 && im.depth == TSR_U8);
        if (im.data) {
            CHECK(io_row(&im, 0)[0] == 0 && io_row(&im, 0)[2] == 2 && io_row(&im, 1)[0] == 253 && io_row(&im, 1)[2] == 255);
        }
        tsr_image_free(&im);
    }
    /* ASCII colour, maxval 15 -> scaled to 8 bits with rounding (v * 17). */
    {
        static const char f[] = "P3 2 1 15 0 7 15 1 14 8";
        static const unsigned char want[6] = {0, 119, 255, 17, 238, 136};
        CHECK_OK(io_read_mem(dir, "b.ppm", f, sizeof f - 1, &im));
        CHECK(im.width == 2 && im.height == 1 && im.channels == 3 && im.depth == TSR_U8);
        if (im.data) CHECK(!memcmp(io_row(&im, 0), want, 6));
        tsr_image_free(&im);
    }
    /* Binary 16-bit, big-endian in the file, maxval 1000 scaled to 65535 with rounding. */
    {
        static const unsigned char f[] = "P5\n2 2\n1000\n\x00\x00\x01\xf4\x03\xe8\x00\x01";
        CHECK_OK(io_read_mem(dir, "c.pgm", f, sizeof f - 1, &im));
        CHECK(im.width == 2 && im.height == 2 && im.channels == 1 && im.depth == TSR_U16);
        if (im.data) {
            const uint16_t *r0 = (const uint16_t *)io_row(&im, 0), *r1 = (const uint16_t *)io_row(&im, 1);
            CHECK_EQ(r0[0], 0);
            CHECK_EQ(r0[1], 32768);   /* 500 * 65535 / 1000 = 32767.5 -> 32768 */
            CHECK_EQ(r1[0], 65535);
            CHECK_EQ(r1[1], 66);      /* 65.535 -> 66 */
        }
        tsr_image_free(&im);
    }
    /* Binary 16-bit at maxval 65535 is kept; the file holds big-endian samples. */
    {
        static const unsigned char f[] = "P6 1 1 65535\n\x12\x34\xab\xcd\x00\x01";
        CHECK_OK(io_read_mem(dir, "d.ppm", f, sizeof f - 1, &im));
        if (im.data) {
            const uint16_t *r = (const uint16_t *)io_row(&im, 0);
            CHECK(r[0] == 0x1234 && r[1] == 0xabcd && r[2] == 1);
        }
        {
            char path[512];
            unsigned char *p;
            size_t n = 0;
            snprintf(path, sizeof path, "%s/d2.ppm", dir);
            CHECK_OK(tsr_write(path, &im, 0));
            p = tsr_test_read_file(path, &n);
            CHECK(p && n == 19 && !memcmp(p, "P6\n1 1\n65535\n\x12\x34\xab\xcd\x00\x01", 19));
            free(p);
        }
        tsr_image_free(&im);
    }
    /* Values above maxval are clamped; corrupt and unsupported variants. */
    {
        static const char f[] = "P2 2 1 100 50 300";
        CHECK_OK(io_read_mem(dir, "e.pgm", f, sizeof f - 1, &im));
        if (im.data) CHECK(io_row(&im, 0)[0] == 128 && io_row(&im, 0)[1] == 255);
        tsr_image_free(&im);
    }
    CHECK_EQ(io_read_mem(dir, "f.pgm", "P2 2 1 255 1 x", 14, &im), TSR_E_FORMAT);
    CHECK_EQ(io_read_mem(dir, "f.pgm", "P2 2 1 255 1", 12, &im), TSR_E_FORMAT);
    CHECK_EQ(io_read_mem(dir, "f.pgm", "P2 2 -1 255 1", 13, &im), TSR_E_FORMAT);
    CHECK_EQ(io_read_mem(dir, "f.pgm", "P5 2 1 255", 10, &im), TSR_E_FORMAT);
    CHECK_EQ(io_read_mem(dir, "f.pgm", "P5 2 1 255 a", 12, &im), TSR_E_FORMAT);
    CHECK_EQ(io_read_mem(dir, "f.pgm", "P5x2 1 255 ab", 13, &im), TSR_E_FORMAT);
    CHECK_EQ(io_read_mem(dir, "f.pgm", "P5 0 1 255 ab", 13, &im), TSR_E_FORMAT);
    CHECK_EQ(io_read_mem(dir, "f.pgm", "P4 8 1 \xff", 8, &im), TSR_E_UNSUPPORTED);
    CHECK_EQ(io_read_mem(dir, "f.pgm", "P1 1 1 1", 8, &im), TSR_E_UNSUPPORTED);
    CHECK_EQ(io_read_mem(dir, "f.pgm", "P7\nWIDTH 1\n", 11, &im), TSR_E_UNSUPPORTED);
    CHECK_EQ(io_read_mem(dir, "f.pgm", "P8 1 1 1", 8, &im), TSR_E_FORMAT);
    CHECK(im.data == NULL);
    io_rmdir(dir);
}

/* Build a BMP with any header size, bit depth and compression from raw rows (already padded
 * to 4 bytes, stored in file order), with 'npal' palette entries or masks. */
static size_t io_bmp(unsigned char *out, int hsize, int32_t w, int32_t h, int bpp, int comp, const uint32_t *pal,
                     int npal, const uint32_t *masks, int nmasks, const unsigned char *pix, size_t npix)
{
    size_t extra = (size_t)4 * (hsize == 40 ? (size_t)nmasks : 0), off = 14 + (size_t)hsize + extra + 4 * (size_t)npal;
    size_t total = off + npix;
    memset(out, 0, off);
    out[0] = 'B', out[1] = 'M';
    for (int i = 0; i < 4; i++) {
        out[2 + i] = (unsigned char)(total >> (8 * i));
        out[10 + i] = (unsigned char)(off >> (8 * i));
        out[14 + i] = (unsigned char)((uint32_t)hsize >> (8 * i));
        out[18 + i] = (unsigned char)((uint32_t)w >> (8 * i));
        out[22 + i] = (unsigned char)((uint32_t)h >> (8 * i));
        out[30 + i] = (unsigned char)((uint32_t)comp >> (8 * i));
        out[46 + i] = (unsigned char)((uint32_t)npal >> (8 * i));
        for (int m = 0; m < nmasks; m++) out[54 + 4 * m + i] = (unsigned char)(masks[m] >> (8 * i));
        for (int k = 0; k < npal; k++) out[14 + hsize + extra + 4 * k + i] = (unsigned char)(pal[k] >> (8 * i));
    }
    out[26] = 1;
    out[28] = (unsigned char)bpp;
    memcpy(out + off, pix, npix);
    return total;
}

TEST(test_io_bmp_details)
{
    char dir[64];
    unsigned char f[4096];
    size_t n;
    tsr_image im = {0};
    static const uint32_t gray_pal[3] = {0x000000, 0x808080, 0xffffff}, col_pal[3] = {0x000000, 0x808080, 0xff0000};
    /* 3x2 8-bit, rows padded to 4 bytes, bottom-up: the first stored row is the bottom one. */
    static const unsigned char pix8[8] = {0, 1, 2, 0, 2, 1, 0, 0};
    static const uint32_t std_masks[4] = {0x00ff0000u, 0x0000ff00u, 0x000000ffu, 0xff000000u};
    io_tmpdir(dir, sizeof dir);
    n = io_bmp(f, 40, 3, 2, 8, 0, gray_pal, 3, NULL, 0, pix8, 8);
    CHECK_OK(io_read_mem(dir, "g.bmp", f, n, &im));
    CHECK(im.channels == 1 && im.width == 3 && im.height == 2);
    if (im.data) {
        static const unsigned char top[3] = {255, 128, 0}, bottom[3] = {0, 128, 255};
        CHECK(!memcmp(io_row(&im, 0), top, 3) && !memcmp(io_row(&im, 1), bottom, 3));
    }
    tsr_image_free(&im);
    /* A coloured palette entry that is used makes it RGB; unused it does not matter. */
    n = io_bmp(f, 40, 3, 2, 8, 0, col_pal, 3, NULL, 0, pix8, 8);
    CHECK_OK(io_read_mem(dir, "c.bmp", f, n, &im));
    CHECK_EQ(im.channels, 3);
    if (im.data) CHECK(io_row(&im, 0)[0] == 255 && io_row(&im, 0)[1] == 0 && io_row(&im, 0)[2] == 0);
    tsr_image_free(&im);
    {
        static const unsigned char pix8b[8] = {0, 1, 1, 0, 1, 0, 0, 0};
        n = io_bmp(f, 40, 3, 2, 8, 0, col_pal, 3, NULL, 0, pix8b, 8);
        CHECK_OK(io_read_mem(dir, "c2.bmp", f, n, &im));
        CHECK_EQ(im.channels, 1);
        tsr_image_free(&im);
    }
    /* 24-bit top-down: BGR in the file. */
    {
        static const unsigned char pix24[16] = {1, 2, 3, 4, 5, 6, 0, 0, 7, 8, 9, 10, 11, 12, 0, 0};
        n = io_bmp(f, 40, 2, -2, 24, 0, NULL, 0, NULL, 0, pix24, 16);
        CHECK_OK(io_read_mem(dir, "t.bmp", f, n, &im));
        CHECK_EQ(im.channels, 3);
        if (im.data) {
            static const unsigned char r0[6] = {3, 2, 1, 6, 5, 4}, r1[6] = {9, 8, 7, 12, 11, 10};
            CHECK(!memcmp(io_row(&im, 0), r0, 6) && !memcmp(io_row(&im, 1), r1, 6));
        }
        tsr_image_free(&im);
    }
    /* 32-bit BI_RGB: BGRX -> 3 channels when X is all zero, else 4. */
    {
        unsigned char pix32[8] = {1, 2, 3, 0, 4, 5, 6, 0};
        n = io_bmp(f, 40, 2, 1, 32, 0, NULL, 0, NULL, 0, pix32, 8);
        CHECK_OK(io_read_mem(dir, "x.bmp", f, n, &im));
        CHECK_EQ(im.channels, 3);
        if (im.data) CHECK(io_row(&im, 0)[0] == 3 && io_row(&im, 0)[5] == 4);
        tsr_image_free(&im);
        pix32[7] = 9;
        n = io_bmp(f, 40, 2, 1, 32, 0, NULL, 0, NULL, 0, pix32, 8);
        CHECK_OK(io_read_mem(dir, "x.bmp", f, n, &im));
        CHECK_EQ(im.channels, 4);
        if (im.data) CHECK(io_row(&im, 0)[3] == 0 && io_row(&im, 0)[7] == 9);
        tsr_image_free(&im);
        /* BI_BITFIELDS after a 40-byte header (3 masks) and in V4/V5 headers (with alpha). */
        n = io_bmp(f, 40, 2, 1, 32, 3, NULL, 0, std_masks, 3, pix32, 8);
        CHECK_OK(io_read_mem(dir, "x.bmp", f, n, &im));
        CHECK_EQ(im.channels, 3);
        tsr_image_free(&im);
        n = io_bmp(f, 108, 2, 1, 32, 3, NULL, 0, std_masks, 4, pix32, 8);
        CHECK_OK(io_read_mem(dir, "x.bmp", f, n, &im));
        CHECK_EQ(im.channels, 4);
        tsr_image_free(&im);
        n = io_bmp(f, 124, 2, 1, 32, 3, NULL, 0, std_masks, 4, pix32, 8);
        CHECK_OK(io_read_mem(dir, "x.bmp", f, n, &im));
        CHECK_EQ(im.channels, 4);
        tsr_image_free(&im);
        {
            static const uint32_t odd[4] = {0x000000ffu, 0x0000ff00u, 0x00ff0000u, 0};
            n = io_bmp(f, 124, 2, 1, 32, 3, NULL, 0, odd, 4, pix32, 8);
            CHECK_EQ(io_read_mem(dir, "x.bmp", f, n, &im), TSR_E_UNSUPPORTED);
        }
    }
    /* Unsupported variants. */
    n = io_bmp(f, 40, 3, 2, 8, 1, gray_pal, 3, NULL, 0, pix8, 8);
    CHECK_EQ(io_read_mem(dir, "u.bmp", f, n, &im), TSR_E_UNSUPPORTED);
    CHECK(strstr(tsr_last_error(), "RLE") != NULL);
    n = io_bmp(f, 40, 3, 2, 4, 0, gray_pal, 3, NULL, 0, pix8, 8);
    CHECK_EQ(io_read_mem(dir, "u.bmp", f, n, &im), TSR_E_UNSUPPORTED);
    n = io_bmp(f, 40, 2, 2, 16, 0, NULL, 0, NULL, 0, pix8, 8);
    CHECK_EQ(io_read_mem(dir, "u.bmp", f, n, &im), TSR_E_UNSUPPORTED);
    n = io_bmp(f, 40, 3, 2, 1, 0, gray_pal, 2, NULL, 0, pix8, 8);
    CHECK_EQ(io_read_mem(dir, "u.bmp", f, n, &im), TSR_E_UNSUPPORTED);
    /* Corrupt: palette of 300 entries, pixel offset past the end, zero width. */
    n = io_bmp(f, 40, 3, 2, 8, 0, gray_pal, 3, NULL, 0, pix8, 8);
    f[46] = 0x2c, f[47] = 0x01;
    CHECK_EQ(io_read_mem(dir, "b.bmp", f, n, &im), TSR_E_FORMAT);
    n = io_bmp(f, 40, 3, 2, 8, 0, gray_pal, 3, NULL, 0, pix8, 8);
    f[11] = 0x10;
    CHECK_EQ(io_read_mem(dir, "b.bmp", f, n, &im), TSR_E_FORMAT);
    n = io_bmp(f, 40, 0, 2, 8, 0, gray_pal, 3, NULL, 0, pix8, 8);
    CHECK_EQ(io_read_mem(dir, "b.bmp", f, n, &im), TSR_E_FORMAT);
    n = io_bmp(f, 40, 3, 2, 8, 0, gray_pal, 3, NULL, 0, pix8, 8);
    f[14] = 41;
    CHECK_EQ(io_read_mem(dir, "b.bmp", f, n, &im), TSR_E_FORMAT);
    CHECK(im.data == NULL);
    io_rmdir(dir);
}

/* Write a JPEG directly with libjpeg in the given colour space (for CMYK). */
static int io_make_jpeg(const char *path, int w, int h, int comps, J_COLOR_SPACE cs)
{
    struct jpeg_compress_struct c;
    struct jpeg_error_mgr e;
    FILE *f = fopen(path, "wb");
    unsigned char *row = calloc((size_t)w, (size_t)comps);
    if (!f || !row) {
        if (f) fclose(f);
        free(row);
        return 0;
    }
    c.err = jpeg_std_error(&e);
    jpeg_create_compress(&c);
    jpeg_stdio_dest(&c, f);
    c.image_width = (JDIMENSION)w, c.image_height = (JDIMENSION)h, c.input_components = comps, c.in_color_space = cs;
    jpeg_set_defaults(&c);
    jpeg_start_compress(&c, TRUE);
    while (c.next_scanline < c.image_height) jpeg_write_scanlines(&c, &row, 1);
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    free(row);
    return fclose(f) == 0;
}

TEST(test_io_jpeg_details)
{
    char dir[64], path[512];
    tsr_image im = {0};
    io_tmpdir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/cmyk.jpg", dir);
    CHECK(io_make_jpeg(path, 8, 8, 4, JCS_CMYK));
    CHECK_READ_FAILS(path, TSR_E_UNSUPPORTED);
    CHECK(strstr(tsr_last_error(), "CMYK") != NULL);
    snprintf(path, sizeof path, "%s/rgb.jpg", dir);   /* Adobe RGB-coded JPEG (no YCbCr) */
    CHECK(io_make_jpeg(path, 8, 8, 3, JCS_RGB));
    CHECK_OK(tsr_read(path, &im));
    CHECK_EQ(im.channels, 3);
    tsr_image_free(&im);
    snprintf(path, sizeof path, "%s/gray.jpg", dir);
    CHECK(io_make_jpeg(path, 8, 8, 1, JCS_GRAYSCALE));
    CHECK_OK(tsr_read(path, &im));
    CHECK_EQ(im.channels, 1);
    tsr_image_free(&im);
    io_rmdir(dir);
}

/* ---------------------------------------------------------------- real files */

/* tests/data/io, found from the working folder (the repository root) or this file's path. */
static int io_data_dir(char *out, size_t n)
{
    const char *file = __FILE__, *slash = strrchr(file, '/');
    snprintf(out, n, "tests/data/io");
    if (access(out, R_OK) == 0) return 1;
    if (slash) {
        snprintf(out, n, "%.*s/data/io", (int)(slash - file), file);
        if (access(out, R_OK) == 0) return 1;
    }
    return 0;
}

/* FNV-1a 64 of the packed samples, 16-bit ones little-endian (as io_conformance.py). */
static uint64_t io_fnv(const tsr_image *im)
{
    uint64_t h = 0xcbf29ce484222325ull;
    size_t n = (size_t)im->width * im->channels;
    for (int y = 0; y < im->height; y++) {
        const unsigned char *r = io_row(im, y);
        for (size_t i = 0; i < n; i++) {
            if (im->depth == TSR_U16) {
                uint16_t v;
                memcpy(&v, r + 2 * i, 2);
                h = (h ^ (v & 0xff)) * 0x100000001b3ull;
                h = (h ^ (v >> 8)) * 0x100000001b3ull;
            } else {
                h = (h ^ r[i]) * 0x100000001b3ull;
            }
        }
    }
    return h;
}

/* Read a file with stderr captured; returns the status and the number of bytes printed. */
static tsr_status io_read_quiet(const char *path, tsr_image *im, long *printed)
{
    char log[] = "/tmp/tsr-io-stderr-XXXXXX";
    int fd = mkstemp(log), saved;
    tsr_status s;
    struct stat st;
    fflush(stderr);
    saved = dup(2);
    dup2(fd, 2);
    s = tsr_read(path, im);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    *printed = fstat(fd, &st) == 0 ? (long)st.st_size : -1;
    close(fd);
    unlink(log);
    return s;
}

/* The committed fixtures decode to what OpenCV decodes (expected.txt from io_conformance.py),
 * and libpng/libjpeg print nothing (chelsea.png has an iCCP chunk libpng warns about). */
TEST(test_io_fixtures)
{
    char dir[256], path[600], name[128];
    FILE *f;
    int lines = 0;
    if (!io_data_dir(dir, sizeof dir)) SKIP("tests/data/io not found (run from the repository root)");
    snprintf(path, sizeof path, "%s/expected.txt", dir);
    f = fopen(path, "r");
    if (!f) SKIP("%s missing", path);
    for (;;) {
        int w, h, c, bytes;
        unsigned long long want;
        long printed = 0;
        tsr_image im = {0};
        if (fscanf(f, "%127s %d %d %d %d %llx", name, &w, &h, &c, &bytes, &want) != 6) break;
        lines++;
        snprintf(path, sizeof path, "%s/%s", dir, name);
        CHECK_OK(io_read_quiet(path, &im, &printed));
        CHECK_MSG(printed == 0, "%s: %ld bytes on stderr", name, printed);
        CHECK_MSG(im.width == w && im.height == h && im.channels == c && (int)im.depth == bytes,
                  "%s: read %dx%dx%d depth %d, OpenCV %dx%dx%d depth %d", name, im.width, im.height, im.channels,
                  (int)im.depth, w, h, c, bytes);
        if (im.data) CHECK_MSG(io_fnv(&im) == (uint64_t)want, "%s: samples differ from OpenCV's decode", name);
        tsr_image_free(&im);
    }
    fclose(f);
    CHECK_MSG(lines >= 9, "expected.txt has %d lines", lines);
    /* JPEG: within a few levels of OpenCV's decoder. */
    {
        const char *jpegs[][2] = {{"chelsea_crop.jpg", "chelsea_crop.ref.ppm"}, {"camera_crop.jpg", "camera_crop.ref.pgm"}};
        for (int i = 0; i < 2; i++) {
            tsr_image a = {0}, b = {0};
            long printed = 0;
            double mean = 0;
            snprintf(path, sizeof path, "%s/%s", dir, jpegs[i][0]);
            CHECK_OK(io_read_quiet(path, &a, &printed));
            CHECK_EQ(printed, 0);
            CHECK(tsr_file_format(path) && !strcmp(tsr_file_format(path), "jpeg"));
            snprintf(path, sizeof path, "%s/%s", dir, jpegs[i][1]);
            CHECK_OK(tsr_read(path, &b));
            if (a.data && b.data && a.width == b.width && a.height == b.height && a.channels == b.channels) {
                int worst = io_diff8(&a, &b, &mean);
                CHECK_MSG(worst <= 4 && mean < 1.0, "%s: worst %d mean %.2f against OpenCV", jpegs[i][0], worst, mean);
            } else {
                CHECK_MSG(0, "%s: shape differs from OpenCV's decode", jpegs[i][0]);
            }
            tsr_image_free(&a);
            tsr_image_free(&b);
        }
    }
    /* Every fixture survives a round trip through each format that can hold it. */
    {
        char tmp[64], out[600];
        const char *exts[] = {"png", "ppm", "bmp"};
        tsr_image a = {0}, b = {0};
        io_tmpdir(tmp, sizeof tmp);
        snprintf(path, sizeof path, "%s/chelsea.png", dir);
        CHECK_OK(tsr_read(path, &a));
        for (int i = 0; i < 3 && a.data; i++) {
            snprintf(out, sizeof out, "%s/chelsea.%s", tmp, exts[i]);
            CHECK_OK(tsr_write(out, &a, 0));
            CHECK_OK(tsr_read(out, &b));
            CHECK_MSG(io_equal(&a, &b), "chelsea through %s differs", exts[i]);
            tsr_image_free(&b);
        }
        tsr_image_free(&a);
        io_rmdir(tmp);
    }
}
