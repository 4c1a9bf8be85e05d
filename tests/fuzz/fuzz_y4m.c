/* libFuzzer target: the YUV4MPEG2 reader (src/io/y4m.c) on a stream held in memory: the header,
 * then up to 4 frames into a frame of the stream's shape.
 *
 * Every input must come back as a status: a failure is TSR_E_FORMAT, TSR_E_SIZE,
 * TSR_E_UNSUPPORTED or TSR_E_NOMEM with a non-empty one-line message; a header that parses has
 * a shape within the pixel limit and bits 8..16, and every sample of a frame read is within
 * 0..2^bits-1 (and is read here, so that ASan sees a short plane). */
#include "../../src/core/internal.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef TSR_FUZZ_ENTRY
#define TSR_FUZZ_ENTRY LLVMFuzzerTestOneInput
#endif

static void tsr_fuzz_y4m_die(const char *what)
{
    fprintf(stderr, "fuzz: %s (last error: '%s')\n", what, tsr_last_error());
    abort();
}

static void tsr_fuzz_y4m_failure(tsr_status s)
{
    const char *m = tsr_last_error();
    if (s != TSR_E_FORMAT && s != TSR_E_SIZE && s != TSR_E_UNSUPPORTED && s != TSR_E_NOMEM)
        tsr_fuzz_y4m_die("y4m reader returned an unexpected status");
    if (!m[0] || strchr(m, '\n') || strchr(m, '\r')) tsr_fuzz_y4m_die("message is empty or not one line");
}

int TSR_FUZZ_ENTRY(const uint8_t *data, size_t size)
{
    tsr_y4m_info info;
    tsr_frame fr;
    tsr_status s;
    FILE *f;
    if (!size) return 0;   /* fmemopen refuses an empty buffer */
    tsr_set_max_pixels((uint64_t)1 << 20);
    f = fmemopen((void *)data, size, "rb");
    if (!f) return 0;
    s = tsr_y4m_read_header(f, "fuzz.y4m", &info);
    if (s) {
        tsr_fuzz_y4m_failure(s);
        fclose(f);
        return 0;
    }
    if (info.width <= 0 || info.height <= 0 || (uint64_t)info.width * (uint64_t)info.height > ((uint64_t)1 << 20) ||
        info.bits < 8 || info.bits > 16 || info.chroma < TSR_CHROMA_420 || info.chroma > TSR_CHROMA_MONO)
        tsr_fuzz_y4m_die("header accepted with an impossible shape");
    memset(&fr, 0, sizeof fr);
    s = tsr_frame_create(&fr, info.width, info.height, info.chroma, info.bits, TSR_HOST);
    if (s) {
        tsr_fuzz_y4m_failure(s);
        fclose(f);
        return 0;
    }
    for (int k = 0; k < 4; k++) {
        int eof = 0;
        s = tsr_y4m_read_frame(f, &info, &fr, k, &eof);
        if (s) {
            tsr_fuzz_y4m_failure(s);
            break;
        }
        if (eof) break;
        for (int p = 0; p < fr.nplanes; p++) {
            int pw = tsr_frame_plane_width(info.width, info.chroma, p);
            int ph = tsr_frame_plane_height(info.height, info.chroma, p);
            for (int y = 0; y < ph; y++) {
                const unsigned char *r = (const unsigned char *)fr.plane[p] + (size_t)y * fr.stride[p];
                for (int x = 0; x < pw; x++) {
                    unsigned v = info.bits > 8 ? ((const uint16_t *)r)[x] : r[x];
                    if (v >> info.bits) tsr_fuzz_y4m_die("sample above 2^bits-1");
                }
            }
        }
    }
    tsr_frame_free(&fr);
    fclose(f);
    return 0;
}
