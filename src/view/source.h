/* What the viewer shows: a still image or a y4m stream, debanded first or not. Either way the
 * current frame is two tightly packed host images of one size: 'before' (as read, shown left of
 * the split) and 'input' (after deband: the chain's input). Needs no GL; internal to src/view. */
#ifndef TSR_VIEW_SOURCE_H
#define TSR_VIEW_SOURCE_H

#include "view.h"

typedef struct tsr__source {
    const tsr_image *still;        /* the image, or NULL for a stream */
    FILE *f;                       /* the stream, its name in messages and its header */
    const char *name;
    tsr_y4m_info info;
    long data_at;                  /* offset of frame 0 for --loop (-1: not asked for) */
    tsr_frame raw, debanded;       /* the frame last read, and it debanded */
    int next;                      /* number of the next frame to read */
    int loaded;                    /* before and input hold the frame last read */
    int do_deband;
    tsr_deband_params deband;
    tsr_frame_view view;
    tsr_image before, input;       /* before shares input's pixels when nothing is debanded */
} tsr__source;

/* Take a still image (host, 8/16-bit, 1..4 channels): copy it and check o's deband options.
 * On failure the source holds nothing. */
tsr_status tsr__source_open_still(tsr__source *src, const tsr_image *img, const tsr_view_options *o);
/* Take a stream: read its header and frame 0, check o's deband and loop options (a stream
 * without frames, or --loop on a pipe, fails here, before any window opens). The source never
 * closes f. On failure the source holds nothing. */
tsr_status tsr__source_open_stream(tsr__source *src, FILE *f, const char *name, const tsr_view_options *o);
/* Read the next stream frame; *eof = 1 (and TSR_OK) after the last one. Failures name the
 * stream and the frame. */
tsr_status tsr__source_read(tsr__source *src, int *eof);
/* Go back to frame 0 (streams opened with o->loop). */
tsr_status tsr__source_rewind(tsr__source *src);
/* Fill before and input from the frame last read (once per frame): deband it on ex (its backend
 * says CPU or CUDA), convert it. Adds the bytes copied between host and device to *bytes. */
tsr_status tsr__source_load(tsr__source *src, const tsr_exec *ex, unsigned long long *bytes);
/* Number of the frame in before and input (0 for a still image). */
int tsr__source_index(const tsr__source *src);
/* Release what the source allocated; safe on a zeroed source. */
void tsr__source_close(tsr__source *src);

#endif
