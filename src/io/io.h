/* Internal interface of the file formats: every decoder works on a whole file held in memory,
 * every encoder appends the whole file to a growable buffer; src/io/file.c does the file and
 * stream handling (detection, stdin/stdout, atomic replacement). */
#ifndef TSR_IO_H
#define TSR_IO_H

#include "../core/internal.h"

/* A growable byte buffer (zero-initialise; release with tsr__buf_free). */
typedef struct tsr__buf {
    unsigned char *data;
    size_t size, cap;
} tsr__buf;

/* Append n bytes; 0 when out of memory or the size overflows (b is then unchanged). */
int tsr__buf_append(tsr__buf *b, const void *p, size_t n);
/* Release the buffer's memory and zero it. */
void tsr__buf_free(tsr__buf *b);

/* Fail with TSR_E_SIZE naming the file when width*height exceeds tsr_max_pixels(); call before
 * allocating anything that depends on the size. */
tsr_status tsr__check_pixels(const char *name, uint64_t width, uint64_t height);
/* tsr_image_create for a decoder: a failure's message is prefixed with the file name. */
tsr_status tsr__create_named(const char *name, tsr_image *img, int width, int height, int channels,
                             tsr_depth depth);
/* Nonzero on a little-endian host. */
int tsr__little_endian(void);

/* Decoders: data/size is the whole file, name is used in messages. *img (a new host image) is
 * written only on success. */
tsr_status tsr__png_read(const char *name, const unsigned char *data, size_t size, tsr_image *img);
tsr_status tsr__jpeg_read(const char *name, const unsigned char *data, size_t size, tsr_image *img);
tsr_status tsr__pnm_read(const char *name, const unsigned char *data, size_t size, tsr_image *img);
tsr_status tsr__bmp_read(const char *name, const unsigned char *data, size_t size, tsr_image *img);

/* Detect the format from the first bytes of data/size and decode it (what tsr_read does once
 * the file is in memory). *img is written only on success. */
tsr_status tsr__decode_mem(const char *name, const unsigned char *data, size_t size, tsr_image *img);

/* tsr_read that also says the format read ("png", "jpeg", "pnm" or "bmp", static strings) in
 * *format when format is not NULL; the file ("-": standard input) is read once. Both outputs
 * are written only on success. */
tsr_status tsr__read_format(const char *path, tsr_image *img, const char **format);

/* Encoders: img is a checked host image (1..4 channels, U8 or U16, positive size). The file is
 * appended to out; on failure out may hold partial data (the caller frees it). 'quality' is
 * JPEG's 0..100 and PNG's zlib level 0..9 (0: zlib's default); the others ignore it. */
tsr_status tsr__png_write(const char *name, const tsr_image *img, int quality, tsr__buf *out);
tsr_status tsr__jpeg_write(const char *name, const tsr_image *img, int quality, tsr__buf *out);
tsr_status tsr__pnm_write(const char *name, const tsr_image *img, int quality, tsr__buf *out);
tsr_status tsr__bmp_write(const char *name, const tsr_image *img, int quality, tsr__buf *out);

#endif
