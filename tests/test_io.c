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

/* Whole file into malloc'd memory (NULL if unreadable). */
static unsigned char *io_read_bytes(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    unsigned char *p = NULL;
    long len;
    if (!f) return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
        p = malloc((size_t)len + 1);
        if (p && fread(p, 1, (size_t)len, f) != (size_t)len) {
            free(p);
            p = NULL;
        }
        *n = (size_t)len;
    }
    fclose(f);
    return p;
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
#define CHECK_MSG_NAMES(path)                                                                      \
    do {                                                                                           \
        const char *m_ = tsr_last_error();                                                         \
        CHECK_MSG(strstr(m_, (path)) != NULL, "message '%s' does not name '%s'", m_, (path));      \
        CHECK_MSG(!strchr(m_, '\n'), "message '%s' has a newline", m_);                            \
    } while (0)

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
        free(io_read_bytes(path, &n1));
        snprintf(path, sizeof path, "%s/q95.jpg", dir);
        CHECK_OK(tsr_write(path, &a, 95));
        p = io_read_bytes(path, &n95);
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
