/* Shared body of the decoder fuzz targets (libFuzzer). Each fuzz_<fmt>.c defines
 * TSR_FUZZ_DECODE as one in-memory decoder of src/io/io.h and includes this file.
 *
 * Every input must come back as a status: TSR_OK with a well-formed image (all of whose pixels
 * are read here, so that ASan sees any short allocation), or a failure with a non-empty one-line
 * message. Anything else aborts, which libFuzzer reports as a crash. A decoded image is encoded
 * again as PNG and decoded once more, which must give the same pixels. */
#include "../../src/io/io.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The entry point's name: libFuzzer's, unless tests/test_fuzz_regressions.c includes several
 * targets into one file under names of its own. */
#ifndef TSR_FUZZ_ENTRY
#define TSR_FUZZ_ENTRY LLVMFuzzerTestOneInput
#endif

#ifndef TSR_FUZZ_DECODE_HELPERS
#define TSR_FUZZ_DECODE_HELPERS

/* The default limit (2^30 pixels) lets a 30-byte header ask for gigabytes, which is legal but
 * beyond libFuzzer's 2 GB memory limit; 2^22 pixels keeps every accepted image small while
 * still exercising the limit check itself. */
#define TSR_FUZZ_MAX_PIXELS ((uint64_t)1 << 22)

static void tsr_fuzz_decode_die(const char *what)
{
    fprintf(stderr, "fuzz: %s (last error: '%s')\n", what, tsr_last_error());
    abort();
}

/* Check a failure's status and message. */
static void tsr_fuzz_check_failure(tsr_status s)
{
    const char *m = tsr_last_error();
    if (s != TSR_E_FORMAT && s != TSR_E_SIZE && s != TSR_E_UNSUPPORTED && s != TSR_E_NOMEM)
        tsr_fuzz_decode_die("decoder returned an unexpected status");
    if (!m[0]) tsr_fuzz_decode_die("failure without a message");
    if (strchr(m, '\n') || strchr(m, '\r')) tsr_fuzz_decode_die("message is not one line");
}

/* Check a decoded image's shape and read every pixel byte. */
static unsigned tsr_fuzz_check_image(const tsr_image *im)
{
    unsigned sum = 0;
    size_t row;
    if (!im->data || im->memory != TSR_HOST || !im->owned) tsr_fuzz_decode_die("image without owned host data");
    if (im->width <= 0 || im->height <= 0 || (uint64_t)im->width * (uint64_t)im->height > TSR_FUZZ_MAX_PIXELS)
        tsr_fuzz_decode_die("image size out of range");
    if (im->channels < 1 || im->channels > 4 || (im->depth != TSR_U8 && im->depth != TSR_U16))
        tsr_fuzz_decode_die("image channels or depth out of range");
    row = tsr_image_row_bytes(im);
    if (!row || im->stride < row) tsr_fuzz_decode_die("image stride smaller than a row");
    for (int y = 0; y < im->height; y++) {
        const unsigned char *r = tsr__row(im, y);
        for (size_t i = 0; i < row; i++) sum += r[i];
    }
    return sum;
}

#endif /* TSR_FUZZ_DECODE_HELPERS */

int TSR_FUZZ_ENTRY(const uint8_t *data, size_t size)
{
    tsr_image im, back;
    tsr_status s;
    tsr_set_max_pixels(TSR_FUZZ_MAX_PIXELS);
    memset(&im, 0x5a, sizeof im);   /* must stay untouched on failure: poison it */
    s = TSR_FUZZ_DECODE("fuzz", data, size, &im);
    if (s) {
        tsr_fuzz_check_failure(s);
        return 0;
    }
    tsr_fuzz_check_image(&im);
    /* Round trip through the PNG encoder for small images: must decode to the same pixels. */
    if ((uint64_t)im.width * (uint64_t)im.height <= 65536) {
        tsr__buf b = {0};
        s = tsr__png_write("fuzz.png", &im, 0, &b);
        if (s) tsr_fuzz_decode_die("PNG encoding of a decoded image failed");
        s = tsr__png_read("fuzz.png", b.data, b.size, &back);
        if (s) tsr_fuzz_decode_die("PNG round trip does not decode");
        if (back.width != im.width || back.height != im.height || back.channels != im.channels || back.depth != im.depth)
            tsr_fuzz_decode_die("PNG round trip changed the shape");
        for (int y = 0; y < im.height; y++)
            if (memcmp(tsr__row(&im, y), tsr__row(&back, y), tsr_image_row_bytes(&im)))
                tsr_fuzz_decode_die("PNG round trip changed the pixels");
        tsr_image_free(&back);
        tsr__buf_free(&b);
    }
    tsr_image_free(&im);
    return 0;
}
