/* File handling for tsr_read / tsr_write / tsr_file_format: format detection from magic bytes
 * (reading) or the extension (writing), stdin/stdout for "-", and atomic replacement of the
 * target through a temporary file in the same folder. */
#include "io.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

typedef enum { FMT_NONE = 0, FMT_PNG, FMT_JPEG, FMT_PNM, FMT_BMP } tsr__fmt;

static const char *const tsr__fmt_names[] = {NULL, "png", "jpeg", "pnm", "bmp"};

/* ---------------------------------------------------------------- temporary files and signals */

/* Temporary files being written, so that a signal that stops the process (Ctrl-C during a long
 * write) leaves no partial file behind: tsr__temp_remove_all, called from the CLI's handler,
 * unlinks them (unlink is async-signal-safe, and the slots' states are lock-free atomics). */
#define TSR_TEMP_SLOTS 8
static char tsr__temp_paths[TSR_TEMP_SLOTS][4096];
static atomic_int tsr__temp_state[TSR_TEMP_SLOTS];   /* 0 free, 1 being filled, 2 live */

int tsr__temp_register(const char *path)
{
    size_t n = strlen(path);
    if (n >= sizeof tsr__temp_paths[0]) return -1;
    for (int i = 0; i < TSR_TEMP_SLOTS; i++) {
        int free_state = 0;
        if (atomic_compare_exchange_strong(&tsr__temp_state[i], &free_state, 1)) {
            memcpy(tsr__temp_paths[i], path, n + 1);
            atomic_store(&tsr__temp_state[i], 2);
            return i;
        }
    }
    return -1;   /* all slots busy: this file is not cleaned up on a signal */
}

void tsr__temp_release(int slot)
{
    if (slot >= 0 && slot < TSR_TEMP_SLOTS) atomic_store(&tsr__temp_state[slot], 0);
}

void tsr__temp_remove_all(void)
{
    for (int i = 0; i < TSR_TEMP_SLOTS; i++)
        if (atomic_load(&tsr__temp_state[i]) == 2) unlink(tsr__temp_paths[i]);
}

/* Remove the temporary files, then die of the same signal with its default action (so that
 * the parent sees "killed by SIGINT", as shells expect). */
static void tsr__on_signal(int sig)
{
    tsr__temp_remove_all();
    signal(sig, SIG_DFL);
    raise(sig);
}

void tsr__install_signal_cleanup(void)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction sa, old;
        /* Leave a signal alone that was ignored when we started (nohup, background jobs). */
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN) continue;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = tsr__on_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(sigs[i], &sa, NULL);
    }
}

/* ---------------------------------------------------------------- shared helpers */

/* Append n bytes to b, growing it geometrically; 0 on overflow or out of memory. */
int tsr__buf_append(tsr__buf *b, const void *p, size_t n)
{
    size_t need;
    if (!n) return 1;
    if (!tsr__add_size(b->size, n, &need)) return 0;
    if (need > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        unsigned char *d;
        while (cap < need) {
            if (!tsr__mul_size(cap, 2, &cap)) {
                cap = need;
                break;
            }
        }
        d = realloc(b->data, cap);
        if (!d) return 0;
        b->data = d;
        b->cap = cap;
    }
    memcpy(b->data + b->size, p, n);
    b->size = need;
    return 1;
}

/* Free b's memory and zero it. */
void tsr__buf_free(tsr__buf *b)
{
    free(b->data);
    b->data = NULL;
    b->size = b->cap = 0;
}

/* TSR_E_SIZE naming the file when width*height is over tsr_max_pixels(), else TSR_OK. */
tsr_status tsr__check_pixels(const char *name, uint64_t width, uint64_t height)
{
    uint64_t max = tsr_max_pixels();
    /* width and height come from 32-bit header fields, so the product fits in 64 bits. */
    if (width > 0xffffffffu || height > 0xffffffffu || width * height > max)
        return tsr__fail(TSR_E_SIZE, "%s: image size %llux%llu is over the limit of %llu pixels (TSR_MAX_PIXELS)",
                         name, (unsigned long long)width, (unsigned long long)height, (unsigned long long)max);
    return TSR_OK;
}

/* tsr_image_create on the host; a failure's message gets the file name in front. */
tsr_status tsr__create_named(const char *name, tsr_image *img, int width, int height, int channels,
                             tsr_depth depth)
{
    tsr_status s = tsr_image_create(img, width, height, channels, depth, TSR_HOST);
    if (s) {
        char msg[400];
        snprintf(msg, sizeof msg, "%s", tsr_last_error());
        return tsr__fail(s, "%s: %s", name, msg);
    }
    return TSR_OK;
}

/* Nonzero on a little-endian host. */
int tsr__little_endian(void)
{
    const uint16_t one = 1;
    return *(const unsigned char *)&one == 1;
}

/* The format of a file from its first bytes (n of them available). */
static tsr__fmt tsr__detect(const unsigned char *p, size_t n)
{
    static const unsigned char png_sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    if (n >= 8 && !memcmp(p, png_sig, 8)) return FMT_PNG;
    if (n >= 3 && p[0] == 0xff && p[1] == 0xd8 && p[2] == 0xff) return FMT_JPEG;
    if (n >= 2 && p[0] == 'P' && p[1] >= '1' && p[1] <= '7') return FMT_PNM;
    if (n >= 2 && p[0] == 'B' && p[1] == 'M') return FMT_BMP;
    return FMT_NONE;
}

/* The name to use in messages for a path ("-" is standard input or output). */
static const char *tsr__display(const char *path, int writing)
{
    if (strcmp(path, "-") == 0) return writing ? "<stdout>" : "<stdin>";
    return path;
}

/* The largest input accepted: 16 bytes per pixel of the pixel limit (above any of the formats'
 * uncompressed sizes, 8 bytes for RGBA16) plus 16 MiB for headers and metadata. */
static uint64_t tsr__max_input_bytes(void)
{
    uint64_t px = tsr_max_pixels();
    return px > (UINT64_MAX - ((uint64_t)16 << 20)) / 16 ? UINT64_MAX : px * 16 + ((uint64_t)16 << 20);
}

/* Read all of fd into a new buffer. TSR_E_IO (with strerror) on a read error. A stream is
 * refused as soon as its first bytes name no known format, and any input longer than
 * tsr__max_input_bytes() is refused: an endless stream (cat /dev/zero |) neither hangs nor
 * exhausts memory. */
static tsr_status tsr__read_fd(int fd, const char *name, tsr__buf *out)
{
    tsr__buf b = {0};
    struct stat st;
    size_t want = 65536;
    uint64_t max = tsr__max_input_bytes();
    int checked = 0;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && (uint64_t)st.st_size < SIZE_MAX - 1) {
        if ((uint64_t)st.st_size > max)
            return tsr__fail(TSR_E_SIZE, "%s: file of %llu bytes is larger than any image within the limit of %llu pixels (TSR_MAX_PIXELS)",
                             name, (unsigned long long)st.st_size, (unsigned long long)tsr_max_pixels());
        want = (size_t)st.st_size + 1;   /* +1 so that the end of the file is seen without growing */
    }
    for (;;) {
        ssize_t r;
        if (!checked && b.size >= 16) {
            checked = 1;
            if (!tsr__detect(b.data, b.size)) {
                tsr__buf_free(&b);
                return tsr__fail(TSR_E_FORMAT, "%s: not a PNG, JPEG, PGM/PPM or BMP file", name);
            }
        }
        if ((uint64_t)b.size > max) {
            tsr__buf_free(&b);
            return tsr__fail(TSR_E_SIZE, "%s: input longer than %llu bytes, more than any image within the limit of %llu pixels (TSR_MAX_PIXELS)",
                             name, (unsigned long long)max, (unsigned long long)tsr_max_pixels());
        }
        if (b.cap - b.size == 0) {
            size_t cap;
            unsigned char *d;
            if (!b.cap) cap = want;
            else if (!tsr__mul_size(b.cap, 2, &cap)) {
                tsr__buf_free(&b);
                return tsr__fail(TSR_E_SIZE, "%s: file too large", name);
            }
            d = realloc(b.data, cap);
            if (!d) {
                tsr__buf_free(&b);
                return tsr__fail(TSR_E_NOMEM, "%s: out of memory reading the file (%zu bytes)", name, cap);
            }
            b.data = d;
            b.cap = cap;
        }
        r = read(fd, b.data + b.size, b.cap - b.size);
        if (r < 0) {
            int e = errno;
            if (e == EINTR) continue;
            tsr__buf_free(&b);
            return tsr__fail(TSR_E_IO, "%s: cannot read: %s", name, strerror(e));
        }
        if (r == 0) break;
        b.size += (size_t)r;
    }
    *out = b;
    return TSR_OK;
}

/* Read a whole file ("-": standard input) into memory. */
static tsr_status tsr__read_file(const char *path, tsr__buf *out)
{
    tsr_status s;
    int fd;
    if (strcmp(path, "-") == 0) return tsr__read_fd(STDIN_FILENO, "<stdin>", out);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return tsr__fail(TSR_E_IO, "%s: cannot open: %s", path, strerror(errno));
    s = tsr__read_fd(fd, path, out);
    close(fd);
    return s;
}

/* ---------------------------------------------------------------- public: reading */

/* See tessera.h. Detection uses only the first bytes; a file that is too short or unknown is
 * TSR_E_FORMAT. */
const char *tsr_file_format(const char *path)
{
    unsigned char head[16];
    size_t n = 0;
    int fd;
    if (!path) {
        tsr__fail(TSR_E_ARG, "tsr_file_format: path is NULL");
        return NULL;
    }
    if (strcmp(path, "-") == 0) {
        tsr__fail(TSR_E_ARG, "<stdin>: the format of standard input cannot be detected without reading it");
        return NULL;
    }
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        tsr__fail(TSR_E_IO, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    while (n < sizeof head) {
        ssize_t r = read(fd, head + n, sizeof head - n);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            int e = errno;
            close(fd);
            tsr__fail(TSR_E_IO, "%s: cannot read: %s", path, strerror(e));
            return NULL;
        }
        if (r == 0) break;
        n += (size_t)r;
    }
    close(fd);
    if (n == 0) {
        tsr__fail(TSR_E_FORMAT, "%s: empty file", path);
        return NULL;
    }
    {
        tsr__fmt f = tsr__detect(head, n);
        if (!f) {
            tsr__fail(TSR_E_FORMAT, "%s: not a PNG, JPEG, PGM/PPM or BMP file", path);
            return NULL;
        }
        tsr__clear_error();
        return tsr__fmt_names[f];
    }
}

/* See io.h: detection and decoding of a whole file held in memory (tsr_read's core, also the
 * entry point of the fuzz targets and their regression test). */
tsr_status tsr__decode_mem(const char *name, const unsigned char *data, size_t size, tsr_image *img)
{
    if (size == 0) return tsr__fail(TSR_E_FORMAT, "%s: empty file", name);
    switch (tsr__detect(data, size)) {
    case FMT_PNG: return tsr__png_read(name, data, size, img);
    case FMT_JPEG: return tsr__jpeg_read(name, data, size, img);
    case FMT_PNM: return tsr__pnm_read(name, data, size, img);
    case FMT_BMP: return tsr__bmp_read(name, data, size, img);
    default: return tsr__fail(TSR_E_FORMAT, "%s: not a PNG, JPEG, PGM/PPM or BMP file", name);
    }
}

/* See io.h. The whole file is read into memory, then decoded by the format its first bytes
 * name. */
tsr_status tsr__read_format(const char *path, tsr_image *img, const char **format)
{
    tsr__buf b = {0};
    tsr_image im;
    tsr_status s;
    const char *name;
    tsr__fmt f;
    if (!path || !img) return tsr__fail(TSR_E_ARG, "tsr_read: %s is NULL", path ? "img" : "path");
    tsr__clear_error();
    name = tsr__display(path, 0);
    s = tsr__read_file(path, &b);
    if (s) return s;
    if (b.size == 0) {
        tsr__buf_free(&b);
        return tsr__fail(TSR_E_FORMAT, "%s: empty file", name);
    }
    f = tsr__detect(b.data, b.size);
    s = tsr__decode_mem(name, b.data, b.size, &im);
    tsr__buf_free(&b);
    if (s) return s;
    *img = im;
    if (format) *format = tsr__fmt_names[f];
    return TSR_OK;
}

/* See tessera.h. */
tsr_status tsr_read(const char *path, tsr_image *img)
{
    return tsr__read_format(path, img, NULL);
}

/* ---------------------------------------------------------------- public: writing */

/* The format named by the extension of path, FMT_NONE if unknown. */
static tsr__fmt tsr__fmt_from_ext(const char *path, const char **ext)
{
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(slash ? slash + 1 : path, '.');
    *ext = dot;
    if (!dot) return FMT_NONE;
    dot++;
    if (!strcasecmp(dot, "png")) return FMT_PNG;
    if (!strcasecmp(dot, "jpg") || !strcasecmp(dot, "jpeg")) return FMT_JPEG;
    if (!strcasecmp(dot, "pgm") || !strcasecmp(dot, "ppm") || !strcasecmp(dot, "pnm")) return FMT_PNM;
    if (!strcasecmp(dot, "bmp")) return FMT_BMP;
    return FMT_NONE;
}

/* Write all n bytes to fd. 0 on success, else errno. */
static int tsr__write_all(int fd, const unsigned char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return errno;
        }
        if (w == 0) return EIO;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* The permissions a newly created file would get (0666 less the umask), or those of the
 * existing target so that replacing it keeps them. The umask is read from /proc so that no
 * other thread sees it changed; 022 is assumed when /proc is not there. */
static mode_t tsr__new_file_mode(const char *path)
{
    struct stat st;
    mode_t mask = 022;
    FILE *f;
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) return st.st_mode & 07777;
    f = fopen("/proc/self/status", "re");
    if (f) {
        char line[256];
        while (fgets(line, sizeof line, f)) {
            unsigned m;
            if (sscanf(line, "Umask: %o", &m) == 1) {
                mask = (mode_t)(m & 0777);
                break;
            }
        }
        fclose(f);
    }
    return 0666 & ~mask;
}

int tsr__is_special_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

/* Put the encoded bytes at path: stdout for "-", into an existing device or FIFO in place (see
 * tsr__is_special_file), else a temporary file in the same folder (mkstemp), fsync, rename over
 * path. On failure the temporary file is removed and an existing target is untouched. */
static tsr_status tsr__commit(const char *path, const tsr__buf *b)
{
    const char *slash, *base;
    char *tmp;
    size_t dirlen, len;
    int fd, e, slot;
    if (strcmp(path, "-") == 0) {
        e = tsr__write_all(STDOUT_FILENO, b->data, b->size);
        if (e == EPIPE) return tsr__fail(TSR_E_INTERRUPTED, "<stdout>: broken pipe");
        if (e) return tsr__fail(TSR_E_IO, "<stdout>: cannot write: %s", strerror(e));
        return TSR_OK;
    }
    if (tsr__is_special_file(path)) {
        fd = open(path, O_WRONLY);
        if (fd < 0) return tsr__fail(TSR_E_IO, "%s: cannot open: %s", path, strerror(errno));
        e = tsr__write_all(fd, b->data, b->size);
        if (close(fd) != 0 && !e) e = errno;
        if (e == EPIPE) return tsr__fail(TSR_E_INTERRUPTED, "%s: broken pipe", path);
        if (e) return tsr__fail(TSR_E_IO, "%s: cannot write: %s", path, strerror(e));
        return TSR_OK;
    }
    slash = strrchr(path, '/');
    base = slash ? slash + 1 : path;
    dirlen = slash ? (size_t)(slash - path) + 1 : 0;   /* including the slash */
    len = strlen(path);
    tmp = malloc(len + 16);
    if (!tmp) return tsr__fail(TSR_E_NOMEM, "%s: out of memory", path);
    /* "<dir>/.<base>.XXXXXX": hidden, next to the target, so that rename is atomic. */
    memcpy(tmp, path, dirlen);
    tmp[dirlen] = '.';
    memcpy(tmp + dirlen + 1, base, len - dirlen);
    strcpy(tmp + len + 1, ".XXXXXX");
    fd = mkstemp(tmp);
    slot = fd >= 0 ? tsr__temp_register(tmp) : -1;
    if (fd < 0) {
        e = errno;
        free(tmp);
        if (dirlen)
            return tsr__fail(TSR_E_IO, "%s: cannot create a temporary file in folder '%.*s': %s", path,
                             (int)(dirlen > 1 ? dirlen - 1 : 1), path, strerror(e));
        return tsr__fail(TSR_E_IO, "%s: cannot create a temporary file in the current folder: %s", path,
                         strerror(e));
    }
    e = tsr__write_all(fd, b->data, b->size);
    if (!e && fchmod(fd, tsr__new_file_mode(path)) != 0) e = errno;
    if (!e && fsync(fd) != 0) e = errno;
    if (close(fd) != 0 && !e) e = errno;
    if (e) {
        unlink(tmp);
        tsr__temp_release(slot);
        free(tmp);
        return tsr__fail(TSR_E_IO, "%s: cannot write: %s", path, strerror(e));
    }
    if (rename(tmp, path) != 0) {
        e = errno;
        unlink(tmp);
        tsr__temp_release(slot);
        free(tmp);
        return tsr__fail(TSR_E_IO, "%s: cannot replace the file: %s", path, strerror(e));
    }
    tsr__temp_release(slot);
    free(tmp);
    /* Make the rename durable too (best effort: some file systems refuse fsync on folders). */
    {
        char *dir = dirlen ? strndup(path, dirlen) : NULL;
        int dfd = open(dir ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd >= 0) {
            (void)fsync(dfd);
            close(dfd);
        }
        free(dir);
    }
    return TSR_OK;
}

/* Whether path names standard output: "-" (PNG) or "-.EXT" (the format of EXT). */
static int tsr__is_stdout(const char *path)
{
    return path[0] == '-' && (path[1] == 0 || (path[1] == '.' && !strchr(path, '/')));
}

/* See tessera.h. The whole file is encoded in memory first, so a failing encoder never
 * creates any file. "-" writes PNG to standard output and "-.EXT" (e.g. "-.ppm") writes the
 * format of EXT there; no temporary file is used for standard output. */
tsr_status tsr_write(const char *path, const tsr_image *img, int quality)
{
    return tsr_write_ex(path, img, quality, 0);
}

/* See tessera.h: tsr_write with PNG's zlib level (checked here, passed as the PNG encoder's
 * quality). */
tsr_status tsr_write_ex(const char *path, const tsr_image *img, int quality, int png_level)
{
    tsr__buf b = {0};
    tsr_status s;
    const char *ext = NULL, *name;
    tsr__fmt f;
    int to_stdout;
    if (!path || !img) return tsr__fail(TSR_E_ARG, "tsr_write: %s is NULL", path ? "img" : "path");
    tsr__clear_error();
    to_stdout = tsr__is_stdout(path);
    name = to_stdout ? "<stdout>" : path;
    f = strcmp(path, "-") == 0 ? FMT_PNG : tsr__fmt_from_ext(path, &ext);
    if (!f && !ext && tsr__is_special_file(path)) f = FMT_PNG;   /* /dev/null, a FIFO: as for "-" */
    if (!f) {
        if (ext)
            return tsr__fail(TSR_E_ARG, "%s: unknown file extension '%s' (use .png, .jpg, .jpeg, .pgm, .ppm, .pnm or .bmp)",
                             name, ext);
        return tsr__fail(TSR_E_ARG, "%s: no file extension to choose the format (use .png, .jpg, .jpeg, .pgm, .ppm, .pnm or .bmp)",
                         name);
    }
    if (img->memory != TSR_HOST)
        return tsr__fail(TSR_E_ARG, "%s: the image is in device memory: copy it to the host before writing", name);
    if (!img->data) return tsr__fail(TSR_E_ARG, "%s: the image has no data", name);
    if (img->width <= 0 || img->height <= 0)
        return tsr__fail(TSR_E_SIZE, "%s: image size %dx%d: width and height must be positive", name, img->width,
                         img->height);
    if (img->channels < 1 || img->channels > 4)
        return tsr__fail(TSR_E_ARG, "%s: image has %d channels: 1 to 4 are supported", name, img->channels);
    if (img->depth != TSR_U8 && img->depth != TSR_U16)
        return tsr__fail(TSR_E_UNSUPPORTED, "%s: %d-bit samples cannot be written to an image file (8 or 16 only)", name,
                         (int)img->depth * 8);
    {
        size_t row = tsr_image_row_bytes(img);
        if (!row || img->stride < row)
            return tsr__fail(TSR_E_SIZE, "%s: image stride %zu is smaller than a row of %zu bytes", name, img->stride, row);
    }
    if (quality < 0 || quality > 100)
        return tsr__fail(TSR_E_ARG, "%s: quality %d is out of range (1..100, 0 for the default)", name, quality);
    if (png_level < 0 || png_level > 9)
        return tsr__fail(TSR_E_ARG, "%s: PNG level %d is out of range (1..9, 0 for the default)", name, png_level);
    switch (f) {
    case FMT_PNG: s = tsr__png_write(name, img, png_level, &b); break;
    case FMT_JPEG: s = tsr__jpeg_write(name, img, quality, &b); break;
    case FMT_PNM: s = tsr__pnm_write(name, img, quality, &b); break;
    default: s = tsr__bmp_write(name, img, quality, &b); break;
    }
    if (!s) s = tsr__commit(to_stdout ? "-" : path, &b);
    tsr__buf_free(&b);
    return s;
}
