/* Limits and failure modes: decompression bombs refused before allocating, overflow-checked
 * image sizes, 65535-pixel sides through every operation, out of memory (RLIMIT_AS in a forked
 * child), a full disk (a 64 KiB tmpfs when this process may mount one) and a file size limit
 * hit in the middle of a write (RLIMIT_FSIZE), neither leaving a partial file behind, and the
 * removal of a pending temporary file when a signal stops the process. */
#include "test.h"
#include "../src/core/internal.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <dirent.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

/* AddressSanitizer reserves terabytes of address space: RLIMIT_AS tests cannot run under it. */
#if defined(__SANITIZE_ADDRESS__)
#define LIM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LIM_ASAN 1
#endif
#endif
#ifndef LIM_ASAN
#define LIM_ASAN 0
#endif

static double lim_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void lim_tmpdir(char *out, size_t n)
{
    snprintf(out, n, "/tmp/tsr-limits-XXXXXX");
    if (!mkdtemp(out)) out[0] = 0;
}

/* Number of entries in a folder, hidden ones (temporary files) included. */
static int lim_count(const char *dir)
{
    int n = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    if (!d) return -1;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

static void lim_rmdir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char p[600];
    if (!d) return;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            unlink(p);
        }
    closedir(d);
    rmdir(dir);
}

static int lim_write(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(p, 1, n, f) == n;
    if (f && fclose(f)) ok = 0;
    return ok;
}

static int lim_one_line(const char *m) { return m[0] && !strchr(m, '\n') && !strchr(m, '\r'); }

/* Run fn in a forked child with its address space limited to as_bytes (0: no limit); returns
 * the child's exit status, or 1000 + signal number when a signal ended it. */
static int lim_child(int (*fn)(void *), void *ctx, size_t as_bytes)
{
    pid_t pid;
    int st;
    fflush(NULL);
    pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        if (as_bytes) {
            struct rlimit rl = {as_bytes, as_bytes};
            if (setrlimit(RLIMIT_AS, &rl)) _exit(90);
        }
        _exit(fn(ctx));
    }
    if (waitpid(pid, &st, 0) != pid) return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 1000 + WTERMSIG(st);
}

/* ---------------------------------------------------------------- decompression bombs */

static uint32_t lim_crc(const unsigned char *p, size_t n) { return (uint32_t)crc32(0, p, (uInt)n); }

static void lim_be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24), p[1] = (unsigned char)(v >> 16), p[2] = (unsigned char)(v >> 8), p[3] = (unsigned char)v;
}

/* A PNG of one IHDR (w x h, bit depth, colour type), an IDAT holding 'idat' bytes of zlib data
 * for the first rows only, and IEND: a few dozen bytes that claim w*h pixels. */
static size_t lim_png(unsigned char *out, uint32_t w, uint32_t h, int depth, int ctype)
{
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    unsigned char raw[64] = {0}, z[128];
    uLongf zn = sizeof z;
    size_t n = 0;
    memcpy(out, sig, 8), n = 8;
    lim_be32(out + n, 13), memcpy(out + n + 4, "IHDR", 4);
    lim_be32(out + n + 8, w), lim_be32(out + n + 12, h);
    out[n + 16] = (unsigned char)depth, out[n + 17] = (unsigned char)ctype, out[n + 18] = out[n + 19] = out[n + 20] = 0;
    lim_be32(out + n + 21, lim_crc(out + n + 4, 17)), n += 25;
    compress(z, &zn, raw, sizeof raw);
    lim_be32(out + n, (uint32_t)zn), memcpy(out + n + 4, "IDAT", 4), memcpy(out + n + 8, z, zn);
    lim_be32(out + n + 8 + zn, lim_crc(out + n + 4, 4 + zn)), n += 12 + zn;
    lim_be32(out + n, 0), memcpy(out + n + 4, "IEND", 4), lim_be32(out + n + 8, lim_crc(out + n + 4, 4)), n += 12;
    return n;
}

/* A baseline JPEG header (SOF0, w x h, 'comps' components 1x1) with an SOS and no data. */
static size_t lim_jpeg(unsigned char *out, uint16_t w, uint16_t h, int comps)
{
    size_t n = 0;
    static const unsigned char dqt[] = {0xff, 0xdb, 0, 67, 0};
    static const unsigned char dht_dc[] = {0xff, 0xc4, 0, 20, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    static const unsigned char dht_ac[] = {0xff, 0xc4, 0, 20, 0x10, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    out[n++] = 0xff, out[n++] = 0xd8;
    memcpy(out + n, dqt, sizeof dqt), n += sizeof dqt;
    memset(out + n, 1, 64), n += 64;
    memcpy(out + n, dht_dc, sizeof dht_dc), n += sizeof dht_dc;   /* one code: symbol 0 (DC diff 0) */
    memcpy(out + n, dht_ac, sizeof dht_ac), n += sizeof dht_ac;   /* one code: symbol 0 (EOB) */
    out[n++] = 0xff, out[n++] = 0xc0, out[n++] = 0, out[n++] = (unsigned char)(8 + 3 * comps), out[n++] = 8;
    out[n++] = (unsigned char)(h >> 8), out[n++] = (unsigned char)h, out[n++] = (unsigned char)(w >> 8), out[n++] = (unsigned char)w;
    out[n++] = (unsigned char)comps;
    for (int c = 0; c < comps; c++) out[n++] = (unsigned char)(c + 1), out[n++] = 0x11, out[n++] = 0;
    out[n++] = 0xff, out[n++] = 0xda, out[n++] = 0, out[n++] = (unsigned char)(6 + 2 * comps), out[n++] = (unsigned char)comps;
    for (int c = 0; c < comps; c++) out[n++] = (unsigned char)(c + 1), out[n++] = 0x00;
    out[n++] = 0, out[n++] = 63, out[n++] = 0;
    out[n++] = 0x00;   /* a few bits of entropy-coded data, then the end */
    out[n++] = 0xff, out[n++] = 0xd9;
    return n;
}

struct lim_bomb {
    const char *path;
    tsr_status want;
};

/* Child: read the file under an address-space limit; exit 0 when the status is the one wanted. */
static int lim_read_child(void *ctx)
{
    struct lim_bomb *b = ctx;
    tsr_image im = {0};
    tsr_status s = tsr_read(b->path, &im);
    if (s != b->want) {
        fprintf(stderr, "    %s: %s (%s), wanted %s\n", b->path, tsr_status_name(s), tsr_last_error(),
                tsr_status_name(b->want));
        return 1;
    }
    if (!lim_one_line(tsr_last_error())) return 2;
    return 0;
}

/* Headers over the pixel limit are refused at once, before any allocation: read in a child
 * whose address space is 256 MiB beyond what it has, the status is still TSR_E_SIZE (an
 * attempt to allocate the image would give TSR_E_NOMEM), and each read takes well under 1 s. */
TEST(test_limits_bombs_refused_before_allocating)
{
    char dir[64], path[600];
    unsigned char buf[4096];
    size_t n;
    struct {
        const char *name;
        size_t len;
    } files[8];
    int nf = 0;
    lim_tmpdir(dir, sizeof dir);
#define LIM_FILE(NAME, LEN)                                                                 \
    do {                                                                                    \
        snprintf(path, sizeof path, "%s/%s", dir, NAME);                                    \
        CHECK(lim_write(path, buf, LEN));                                                   \
        files[nf].name = NAME, files[nf].len = LEN, nf++;                                   \
    } while (0)
    n = lim_png(buf, 65535, 65535, 16, 6);           /* 4.3 G pixels, 34 GB as RGBA16 */
    LIM_FILE("bomb.png", n);
    n = lim_jpeg(buf, 65500, 65500, 3);               /* 4.3 G pixels */
    LIM_FILE("bomb.jpg", n);
    n = (size_t)snprintf((char *)buf, sizeof buf, "P6\n65535 65535\n65535\n") + 6;
    memset(buf + n - 6, 0, 6);
    LIM_FILE("bomb.ppm", n);
    memset(buf, 0, 70);                               /* BMP, 40-byte header, 65535 x -65535, 32 bits */
    buf[0] = 'B', buf[1] = 'M', buf[10] = 54, buf[14] = 40;
    buf[18] = 0xff, buf[19] = 0xff, buf[22] = 0x01, buf[23] = 0x00, buf[24] = 0xff, buf[25] = 0xff;   /* h = -65535 */
    buf[26] = 1, buf[28] = 32;
    LIM_FILE("bomb.bmp", 70);
#undef LIM_FILE
    for (int i = 0; i < nf; i++) {
        struct lim_bomb b = {path, TSR_E_SIZE};
        tsr_image im = {0};
        double t0;
        snprintf(path, sizeof path, "%s/%s", dir, files[i].name);
        t0 = lim_now();
        CHECK_EQ(tsr_read(path, &im), TSR_E_SIZE);
        CHECK_MSG(lim_now() - t0 < 1.0, "%s: refusing took %.3f s", files[i].name, lim_now() - t0);
        CHECK_MSG(strstr(tsr_last_error(), "limit") && lim_one_line(tsr_last_error()), "%s: '%s'", files[i].name,
                  tsr_last_error());
        CHECK(im.data == NULL);
        /* Again in a child that could not allocate the image: still TSR_E_SIZE. */
        if (!LIM_ASAN) CHECK_EQ(lim_child(lim_read_child, &b, 256u << 20), 0);
    }
    lim_rmdir(dir);
}

/* Inputs longer than any image within the limit (16 bytes per pixel plus 16 MiB) are refused
 * from the file's size, before reading it: here a sparse 1 GiB file under a 1000-pixel limit. */
TEST(test_limits_input_size)
{
    char dir[64], path[600];
    tsr_image im = {0};
    uint64_t old = tsr_max_pixels();
    int fd;
    double t0;
    lim_tmpdir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/sparse.pgm", dir);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0 && write(fd, "P5\n30 30\n255\n", 13) == 13 && ftruncate(fd, (off_t)1 << 30) == 0);
    if (fd >= 0) close(fd);
    tsr_set_max_pixels(1000);
    t0 = lim_now();
    CHECK_EQ(tsr_read(path, &im), TSR_E_SIZE);
    CHECK(lim_now() - t0 < 0.5);
    CHECK(strstr(tsr_last_error(), "larger than") && lim_one_line(tsr_last_error()));
    tsr_set_max_pixels(old);
    lim_rmdir(dir);
}

/* Sizes under the limit in files far too small to hold them (a 100-byte "PNG" or "JPEG" of
 * 2^30 pixels) are refused as truncated before the image is allocated: in a child with 256 MiB
 * of address space the status is TSR_E_FORMAT, not TSR_E_NOMEM. */
TEST(test_limits_small_file_large_header)
{
    char dir[64], path[600];
    unsigned char buf[4096];
    size_t n;
    struct lim_bomb b = {path, TSR_E_FORMAT};
    if (LIM_ASAN) SKIP("RLIMIT_AS cannot be used under AddressSanitizer");
    lim_tmpdir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/near.png", dir);
    n = lim_png(buf, 32768, 32768, 16, 6);            /* 2^30 pixels: 8 GiB as RGBA16 */
    CHECK(lim_write(path, buf, n));
    CHECK_EQ(lim_child(lim_read_child, &b, 256u << 20), 0);
    snprintf(path, sizeof path, "%s/near.jpg", dir);
    n = lim_jpeg(buf, 32768, 32768, 3);               /* 2^30 pixels: 3 GiB as RGB */
    CHECK(lim_write(path, buf, n));
    CHECK_EQ(lim_child(lim_read_child, &b, 256u << 20), 0);
    lim_rmdir(dir);
}

/* ---------------------------------------------------------------- size arithmetic */

TEST(test_limits_create_overflow)
{
    tsr_image im = {0};
    uint64_t old = tsr_max_pixels();
    tsr_set_max_pixels(UINT64_MAX);   /* only the arithmetic stands between these and malloc */
    /* (2^31-1)^2 pixels of 32 bytes: the total overflows size_t. */
    CHECK_EQ(tsr_image_create(&im, INT_MAX, INT_MAX, 4, TSR_U64, TSR_HOST), TSR_E_SIZE);
    CHECK(lim_one_line(tsr_last_error()));
    CHECK(im.data == NULL);
    /* 2^62 bytes: no overflow, and no memory either (ASan aborts on such a request instead of
     * returning NULL, so not under it). */
    if (!LIM_ASAN) {
        CHECK_EQ(tsr_image_create(&im, INT_MAX, INT_MAX, 1, TSR_U8, TSR_HOST), TSR_E_NOMEM);
        CHECK(im.data == NULL && lim_one_line(tsr_last_error()));
    }
    CHECK_EQ(tsr_image_create(&im, -1, 5, 1, TSR_U8, TSR_HOST), TSR_E_SIZE);
    CHECK_EQ(tsr_image_create(&im, 5, INT_MIN, 1, TSR_U8, TSR_HOST), TSR_E_SIZE);
    CHECK_EQ(tsr_image_create(&im, 5, 5, 5, TSR_U8, TSR_HOST), TSR_E_ARG);
    CHECK_EQ(tsr_image_create(&im, 5, 5, 1, (tsr_depth)3, TSR_HOST), TSR_E_ARG);
    CHECK(im.data == NULL);
    tsr_set_max_pixels(old);
    /* The default limit refuses a 2^31-1 square before any arithmetic matters. */
    CHECK_EQ(tsr_image_create(&im, INT_MAX, INT_MAX, 4, TSR_U8, TSR_HOST), TSR_E_SIZE);
    CHECK(strstr(tsr_last_error(), "limit") != NULL);
    /* Row bytes: width * channels * depth, 0 for nonsense. */
    {
        tsr_image r = {INT_MAX, 1, 4, TSR_U64, 0, NULL, TSR_HOST, 0};
        CHECK_EQ(tsr_image_row_bytes(&r), (size_t)INT_MAX * 32);
        r.width = -3;
        CHECK_EQ(tsr_image_row_bytes(&r), 0);
    }
}

/* tsr_image_wrap: a stride that would make the address of the last row overflow is refused
 * (the operations compute row y at data + y * stride). */
TEST(test_limits_wrap_stride_overflow)
{
    static unsigned char px[64];
    tsr_image im = {0};
    CHECK_EQ(tsr_image_wrap(&im, 4, 3, 1, TSR_U8, px, SIZE_MAX / 2, TSR_HOST), TSR_E_SIZE);
    CHECK(lim_one_line(tsr_last_error()));
    CHECK(im.data == NULL);
    CHECK_EQ(tsr_image_wrap(&im, 4, 2, 1, TSR_U8, px, SIZE_MAX - 2, TSR_HOST), TSR_E_SIZE);
    CHECK_EQ(tsr_image_wrap(&im, 4, 3, 1, TSR_U8, px, 3, TSR_HOST), TSR_E_SIZE);   /* stride < row */
    CHECK_OK(tsr_image_wrap(&im, 4, 3, 1, TSR_U8, px, 16, TSR_HOST));
    CHECK_EQ(im.stride, 16);
    /* One row: the stride is never multiplied, any value at least a row is fine. */
    CHECK_OK(tsr_image_wrap(&im, 4, 1, 1, TSR_U8, px, SIZE_MAX, TSR_HOST));
    /* Caller-owned memory is not bound by the pixel limit, only by the arithmetic. */
    CHECK_EQ(tsr_image_wrap(&im, INT_MAX, INT_MAX, 4, TSR_U64, px, 0, TSR_HOST), TSR_E_SIZE);
}

/* ---------------------------------------------------------------- 65535-pixel sides */

/* Parameters of op at their defaults, required ones (default out of range) at their minimum. */
static void lim_params(const tsr_op *op, void *params)
{
    tsr_params_default(op, params);
    for (int i = 0; i < op->nparams; i++) {
        const tsr_param *p = &op->params[i];
        double v = tsr__param_get(p, params);
        if (!(v >= p->min && v <= p->max)) tsr__param_set(p, params, p->min);
    }
}

/* Every operation, every CPU variant, on 65535x1 and 1x65535 images of a constant, 1 and 3
 * channels: succeeds with the shape its check announces, and where the result is known from
 * the constant (invert, gray, box away from constant borders, resize) it is checked. */
TEST(test_limits_65535_sides_every_op)
{
    static const int shapes[][2] = {{65535, 1}, {1, 65535}};
    for (int si = 0; si < 2; si++)
        for (int ch = 1; ch <= 3; ch += 2) {
            tsr_image src = {0};
            int w = shapes[si][0], h = shapes[si][1];
            CHECK_OK(tsr_image_create(&src, w, h, ch, TSR_U8, TSR_HOST));
            if (!src.data) continue;
            for (int y = 0; y < h; y++) memset(tsr__row(&src, y), 77, (size_t)w * ch);
            for (int i = 0; i < tsr_op_count(); i++) {
                const tsr_op *op = tsr_op_at(i);
                unsigned char params[256];
                tsr_image shape;
                lim_params(op, params);
                if (op->check(&src, params, &shape)) continue;   /* e.g. gray needs colour */
                for (int k = 0; op->variants[k]; k++) {
                    const tsr_variant *v = op->variants[k];
                    tsr_exec ex = {TSR_BACKEND_CPU, v->name, NULL, 2};
                    tsr_image dst = {0};
                    tsr_status s;
                    if (v->backend != TSR_BACKEND_CPU || (v->supports && !v->supports(&src, params))) continue;
                    s = tsr_run(op, &src, &dst, params, &ex);
                    CHECK_MSG(s == TSR_OK, "%s/%s on %dx%dx%d: %s (%s)", op->name, v->name, w, h, ch,
                              tsr_status_name(s), tsr_last_error());
                    if (s) continue;
                    CHECK(dst.width == shape.width && dst.height == shape.height && dst.channels == shape.channels);
                    if (!strcmp(op->name, "invert") || !strcmp(op->name, "gray") || !strcmp(op->name, "box") ||
                        !strcmp(op->name, "resize")) {
                        int want = !strcmp(op->name, "invert") ? 255 - 77 : 77, bad = 0;
                        for (int y = 0; y < dst.height && !bad; y++) {
                            const unsigned char *r = tsr__row(&dst, y);
                            for (size_t x = 0; x < (size_t)dst.width * dst.channels; x++) bad |= r[x] != want;
                        }
                        CHECK_MSG(!bad, "%s/%s on %dx%dx%d: wrong values", op->name, v->name, w, h, ch);
                    }
                    tsr_image_free(&dst);
                }
            }
            tsr_image_free(&src);
        }
}

/* Box with radius 65535 (the maximum), every border, through the default variant: a constant
 * image stays constant except with a constant border, where the mean of 77 inside and 'value'
 * outside over the whole (2r+1)^2 window is known exactly. Before the running sums took closed
 * forms for windows wider or taller than the image, 1x65535 cost O(radius) per row (75 s here)
 * and ran only with TSR_TEST_SLOW=1, and 65535x1 about a second per border; all six shapes now
 * take 0.06 s. Before tsr__border_index folded reflections in O(1), 300x200 took 2 s. */
TEST(test_limits_box_radius_65535)
{
    const tsr_op *op = tsr_op_find("box");
    static const int shapes[][2] = {{65535, 1}, {300, 200}, {1, 300}, {300, 1}, {2, 2}, {1, 65535}};
    const int nshapes = (int)(sizeof shapes / sizeof shapes[0]);
    CHECK(op != NULL);
    if (!op) return;
    for (int si = 0; si < nshapes; si++)
        for (int border = 0; border < 4; border++) {
            tsr_image src = {0}, dst = {0};
            tsr_box_params p = {65535, -1, -1, border, 5};
            int w = shapes[si][0], h = shapes[si][1], bad = 0;
            CHECK_OK(tsr_image_create(&src, w, h, 1, TSR_U8, TSR_HOST));
            if (!src.data) continue;
            for (int y = 0; y < h; y++) memset(tsr__row(&src, y), 77, (size_t)w);
            CHECK_OK(tsr_run(op, &src, &dst, &p, NULL));
            if (dst.data) {
                unsigned long long area = 131071ull * 131071ull, inside = (unsigned long long)w * h;
                unsigned want = border == TSR_BORDER_CONSTANT
                                    ? (unsigned)((inside * 77 + (area - inside) * 5 + (area - 1) / 2) / area)
                                    : 77;
                for (int y = 0; y < h && !bad; y++)
                    for (int x = 0; x < w; x++) bad |= ((unsigned char *)tsr__row(&dst, y))[x] != want;
                CHECK_MSG(!bad, "box r=65535 border %d on %dx%d: wrong values (want %u)", border, w, h, want);
            }
            tsr_image_free(&src);
            tsr_image_free(&dst);
        }
}

/* 65535-pixel sides through every file format: written and read back, except JPEG, whose
 * limit is 65500 per side: refused with TSR_E_SIZE and no file. */
TEST(test_limits_65535_sides_files)
{
    static const char *const exts[] = {"png", "pgm", "bmp", "jpg"};
    static const int shapes[][2] = {{65535, 1}, {1, 65535}};
    char dir[64], path[600];
    lim_tmpdir(dir, sizeof dir);
    for (int si = 0; si < 2; si++) {
        tsr_image a = {0};
        CHECK_OK(tsr_image_create(&a, shapes[si][0], shapes[si][1], 1, TSR_U8, TSR_HOST));
        if (!a.data) continue;
        for (int y = 0; y < a.height; y++)
            for (int x = 0; x < a.width; x++) ((unsigned char *)tsr__row(&a, y))[x] = (unsigned char)(x * 7 + y * 3);
        for (int e = 0; e < 4; e++) {
            tsr_image b = {0};
            snprintf(path, sizeof path, "%s/side%d.%s", dir, si, exts[e]);
            if (!strcmp(exts[e], "jpg")) {
                CHECK_EQ(tsr_write(path, &a, 0), TSR_E_SIZE);
                CHECK(access(path, F_OK) != 0);
                continue;
            }
            CHECK_OK(tsr_write(path, &a, 0));
            CHECK_OK(tsr_read(path, &b));
            if (b.data) {
                int same = b.width == a.width && b.height == a.height && b.channels == 1;
                for (int y = 0; same && y < a.height; y++) same = !memcmp(tsr__row(&a, y), tsr__row(&b, y), (size_t)a.width);
                CHECK_MSG(same, "%s: round trip differs", path);
            }
            tsr_image_free(&b);
        }
        tsr_image_free(&a);
    }
    lim_rmdir(dir);
}

/* ---------------------------------------------------------------- out of memory */

static int lim_oom_child(void *ctx)
{
    tsr_image im = {0};
    tsr_status s;
    (void)ctx;
    /* 20000 x 20000 RGBA: 1.6 GB in a 256 MiB address space. */
    s = tsr_image_create(&im, 20000, 20000, 4, TSR_U8, TSR_HOST);
    if (s != TSR_E_NOMEM || im.data) return 1;
    if (!lim_one_line(tsr_last_error()) || !strstr(tsr_last_error(), "out of memory")) return 2;
    return 0;
}

/* A compressed PNG of 16384 x 16384 zero pixels (a valid file of some 300 KB) read with
 * 128 MiB of address space: TSR_E_NOMEM naming the file. */
static int lim_oom_read_child(void *ctx)
{
    tsr_image im = {0};
    tsr_status s = tsr_read((const char *)ctx, &im);
    if (s != TSR_E_NOMEM) {
        fprintf(stderr, "    %s: %s (%s)\n", (const char *)ctx, tsr_status_name(s), tsr_last_error());
        return 1;
    }
    if (!lim_one_line(tsr_last_error()) || !strstr(tsr_last_error(), (const char *)ctx)) return 2;
    return 0;
}

/* Write a 'side' x 'side' 8-bit gray PNG of zeros without holding the image. */
static int lim_zero_png(const char *path, uint32_t side)
{
    unsigned char head[33], *z, *row;
    z_stream zs;
    size_t cap = (size_t)side * side / 500 + 65536, zn;
    FILE *f;
    int ok = 1;
    memcpy(head, "\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR", 16);
    lim_be32(head + 16, side), lim_be32(head + 20, side);
    head[24] = 8, head[25] = 0, head[26] = head[27] = head[28] = 0;
    lim_be32(head + 29, lim_crc(head + 12, 17));
    z = malloc(cap + 8);
    row = calloc(1, side + 1);
    if (!z || !row) return free(z), free(row), 0;
    memset(&zs, 0, sizeof zs);
    deflateInit(&zs, 9);
    zs.next_out = z + 8, zs.avail_out = (uInt)cap;
    for (uint32_t y = 0; y < side && ok; y++) {
        zs.next_in = row, zs.avail_in = side + 1;
        ok = deflate(&zs, y + 1 == side ? Z_FINISH : Z_NO_FLUSH) != Z_STREAM_ERROR && zs.avail_out > 0;
    }
    zn = cap - zs.avail_out;
    deflateEnd(&zs);
    lim_be32(z, (uint32_t)zn), memcpy(z + 4, "IDAT", 4);
    f = fopen(path, "wb");
    if (!f) ok = 0;
    if (ok) {
        unsigned char crc[4], iend[12] = {0, 0, 0, 0, 'I', 'E', 'N', 'D'};
        lim_be32(crc, lim_crc(z + 4, zn + 4));
        lim_be32(iend + 8, lim_crc(iend + 4, 4));
        ok = fwrite(head, 1, 33, f) == 33 && fwrite(z, 1, zn + 8, f) == zn + 8 && fwrite(crc, 1, 4, f) == 4 &&
             fwrite(iend, 1, 12, f) == 12;
    }
    if (f && fclose(f)) ok = 0;
    free(z);
    free(row);
    return ok;
}

TEST(test_limits_out_of_memory)
{
    char dir[64], path[600];
    if (LIM_ASAN) SKIP("RLIMIT_AS cannot be used under AddressSanitizer");
    CHECK_EQ(lim_child(lim_oom_child, NULL, 256u << 20), 0);
    lim_tmpdir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/zeros.png", dir);
    CHECK(lim_zero_png(path, 16384));
    CHECK_EQ(lim_child(lim_oom_read_child, path, 128u << 20), 0);
    lim_rmdir(dir);
}

/* ---------------------------------------------------------------- write failures */

/* An incompressible 300x300 RGB image: some 270 KB in any format. */
static tsr_image lim_noise(void)
{
    tsr_image a = {0};
    if (tsr_image_create(&a, 300, 300, 3, TSR_U8, TSR_HOST)) return a;
    for (int y = 0; y < a.height; y++)
        for (int x = 0; x < 900; x++) ((unsigned char *)tsr__row(&a, y))[x] = (unsigned char)tsr_test_rand();
    return a;
}

struct lim_write_ctx {
    const char *dir, *path;
    const tsr_image *img;
};

/* Child: write where the disk fills or the file size limit is hit in the middle of the file;
 * the result must be TSR_E_IO with one line naming the path, and the folder must hold exactly
 * what it held before (an existing target unchanged, no temporary file). */
static int lim_write_fail_child(void *ctx)
{
    struct lim_write_ctx *c = ctx;
    int before = lim_count(c->dir);
    struct stat st0, st1;
    int had = stat(c->path, &st0) == 0;
    tsr_status s = tsr_write(c->path, c->img, 0);
    if (s != TSR_E_IO) {
        fprintf(stderr, "    write to %s: %s (%s)\n", c->path, tsr_status_name(s), tsr_last_error());
        return 1;
    }
    if (!lim_one_line(tsr_last_error()) || !strstr(tsr_last_error(), c->path)) return 2;
    if (lim_count(c->dir) != before) return 3;
    if (had && (stat(c->path, &st1) != 0 || st1.st_size != st0.st_size || st1.st_ino != st0.st_ino)) return 4;
    return 0;
}

static int lim_fsize_child(void *ctx)
{
    struct rlimit rl = {100000, 100000};
    signal(SIGXFSZ, SIG_IGN);   /* write() then fails with EFBIG instead of killing */
    if (setrlimit(RLIMIT_FSIZE, &rl)) return 91;
    return lim_write_fail_child(ctx);
}

/* A file size limit hit after 100000 bytes of a 270 KB file, for a new file and over an
 * existing one. Needs no privileges. */
TEST(test_limits_write_file_too_large)
{
    char dir[64], path[600];
    tsr_image a = lim_noise(), small = {0};
    struct lim_write_ctx c = {dir, path, &a};
    lim_tmpdir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/out.ppm", dir);
    CHECK_EQ(lim_child(lim_fsize_child, &c, 0), 0);
    CHECK(access(path, F_OK) != 0);
    CHECK_OK(tsr_image_create(&small, 3, 3, 3, TSR_U8, TSR_HOST));
    if (small.data) memset(small.data, 9, small.stride * 3);
    CHECK_OK(tsr_write(path, &small, 0));
    CHECK_EQ(lim_child(lim_fsize_child, &c, 0), 0);
    {
        tsr_image b = {0};
        CHECK_OK(tsr_read(path, &b));   /* still the small image */
        CHECK(b.width == 3 && b.height == 3);
        tsr_image_free(&b);
    }
    tsr_image_free(&small);
    tsr_image_free(&a);
    lim_rmdir(dir);
}

static int lim_tmpfs_child(void *ctx)
{
    struct lim_write_ctx *c = ctx;
    /* A private mount namespace: the tmpfs vanishes with this process. */
    if (unshare(CLONE_NEWNS) != 0) return 77;
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) return 77;
    if (mount("tmpfs", c->dir, "tmpfs", 0, "size=64k") != 0) return 77;
    return lim_write_fail_child(ctx);
}

/* A full disk: a 64 KiB tmpfs (needs the right to mount, as root in a container usually has;
 * skipped otherwise: test_limits_write_file_too_large covers the same path without it). Every
 * format, since each is encoded in memory and then written. */
TEST(test_limits_write_disk_full)
{
    static const char *const exts[] = {"png", "ppm", "bmp", "jpg"};
    char dir[64], path[600];
    tsr_image a = lim_noise();
    struct lim_write_ctx c = {dir, path, &a};
    lim_tmpdir(dir, sizeof dir);
    for (int e = 0; e < 4; e++) {
        int r;
        snprintf(path, sizeof path, "%s/out.%s", dir, exts[e]);
        r = lim_child(lim_tmpfs_child, &c, 0);
        if (r == 77) {
            tsr_image_free(&a);
            lim_rmdir(dir);
            SKIP("cannot mount a tmpfs here (needs CAP_SYS_ADMIN)");
        }
        CHECK_MSG(r == 0, "full disk, %s: child returned %d", exts[e], r);
    }
    CHECK_EQ(lim_count(dir), 0);
    tsr_image_free(&a);
    lim_rmdir(dir);
}

/* The parent of the output is a file: TSR_E_IO, one line, nothing created. */
TEST(test_limits_write_parent_is_file)
{
    char dir[64], path[600], file[600];
    tsr_image a = lim_noise();
    lim_tmpdir(dir, sizeof dir);
    snprintf(file, sizeof file, "%s/plain", dir);
    CHECK(lim_write(file, "x", 1));
    snprintf(path, sizeof path, "%s/plain/out.png", dir);
    CHECK_EQ(tsr_write(path, &a, 0), TSR_E_IO);
    CHECK(lim_one_line(tsr_last_error()) && strstr(tsr_last_error(), strerror(ENOTDIR)));
    CHECK_EQ(lim_count(dir), 1);
    tsr_image_free(&a);
    lim_rmdir(dir);
}

/* ---------------------------------------------------------------- signals */

static int lim_signal_child(void *ctx)
{
    const char *dir = ctx;
    char live[600], done[600];
    int slot;
    snprintf(live, sizeof live, "%s/.out.png.XXXXXX", dir);
    snprintf(done, sizeof done, "%s/kept.png", dir);
    if (!lim_write(done, "x", 1)) return 1;
    if (close(mkstemp(live)) != 0) return 2;
    /* The cleanup keeps a signal the process inherited as ignored ignored (as under nohup, or a
     * background job of a non-interactive shell, which ignores SIGINT); this test is about the
     * default disposition, so it sets that rather than inherit whatever the runner had. */
    signal(SIGINT, SIG_DFL);
    tsr__install_signal_cleanup();
    slot = tsr__temp_register(done);
    tsr__temp_release(slot);            /* a finished file: must survive */
    if (tsr__temp_register(live) < 0) return 3;
    raise(SIGINT);                      /* as Ctrl-C in the middle of writing 'live' */
    return 4;                           /* not reached: the handler ends the process */
}

/* A signal during a write removes the temporary file and the process still dies of the
 * signal (exit status 128+2 in a shell), leaving finished files alone. */
TEST(test_limits_signal_removes_temp_file)
{
    char dir[64], kept[600];
    lim_tmpdir(dir, sizeof dir);
    CHECK_EQ(lim_child(lim_signal_child, dir, 0), 1000 + SIGINT);
    snprintf(kept, sizeof kept, "%s/kept.png", dir);
    CHECK(access(kept, F_OK) == 0);
    CHECK_EQ(lim_count(dir), 1);
    lim_rmdir(dir);
}

/* deband (a command beside the registry) on 65535x1 and 1x65535 gray and RGB images with its
 * defaults, on the CPU: succeeds with the input's shape; a constant image has no bands, so
 * with grain off it stays constant. */
TEST(test_limits_65535_sides_deband)
{
    static const int shapes[][2] = {{65535, 1}, {1, 65535}};
    tsr_deband_params p;
    tsr_exec ex = {TSR_BACKEND_CPU, NULL, NULL, 2};
    tsr_deband_defaults(&p);
    p.grain_y = p.grain_c = 0;
    for (int si = 0; si < 2; si++)
        for (int ch = 1; ch <= 3; ch += 2) {
            tsr_image src = {0}, dst = {0};
            int w = shapes[si][0], h = shapes[si][1], bad = 0;
            CHECK_OK(tsr_image_create(&src, w, h, ch, TSR_U8, TSR_HOST));
            if (!src.data) continue;
            for (int y = 0; y < h; y++) memset(tsr__row(&src, y), 77, (size_t)w * ch);
            CHECK_OK(tsr_deband_image(&src, &dst, &p, &ex));
            if (dst.data) {
                CHECK(dst.width == w && dst.height == h && dst.channels == ch && dst.depth == TSR_U8);
                for (int y = 0; y < h && !bad; y++)
                    for (size_t x = 0; x < (size_t)w * ch; x++) bad |= ((unsigned char *)tsr__row(&dst, y))[x] != 77;
                CHECK_MSG(!bad, "deband on %dx%dx%d: a constant image changed", w, h, ch);
            }
            tsr_image_free(&src);
            tsr_image_free(&dst);
        }
}
