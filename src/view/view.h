/* The viewer: shows an image, or plays a y4m stream, through a chain of operations in a window
 * (X11 + EGL) or renders it off screen (EGL device, surfaceless or default platform). Three ways
 * to bring a frame to the texture:
 *   interop   CUDA writes the chain's output straight into a GL pixel buffer registered with
 *             CUDA; the texture is filled from that buffer: no bytes through the host per frame.
 *   hostcopy  CUDA computes into device memory, the result is copied to the host and uploaded.
 *   cpu       the CPU computes into host memory, which is uploaded.
 * This header needs no GL headers: src/cli includes it in every build. */
#ifndef TSR_VIEW_H
#define TSR_VIEW_H

#include "tessera.h"

#define TSR_VIEW_MAX_STAGES 8
#define TSR_VIEW_PARAMS_BYTES 256

typedef enum tsr_view_path {
    TSR_VIEW_PATH_AUTO = 0,   /* interop when CUDA and a CUDA-capable GL context exist, else cpu */
    TSR_VIEW_PATH_CPU = 1,
    TSR_VIEW_PATH_INTEROP = 2,
    TSR_VIEW_PATH_HOSTCOPY = 3
} tsr_view_path;

/* One operation of the chain with its parameter block (as filled by tsr_params_default). */
typedef struct tsr_view_stage {
    const tsr_op *op;
    unsigned char params[TSR_VIEW_PARAMS_BYTES];
} tsr_view_stage;

typedef struct tsr_view_options {
    int nstages;                          /* 0: the image as it is */
    tsr_view_stage stages[TSR_VIEW_MAX_STAGES];
    tsr_view_path path;
    tsr_exec exec;                        /* threads and variant for the operations */
    int headless;                         /* render off screen (no window, no display needed) */
    int frames;                           /* frames to render; 0: until the window is closed */
    int split;                            /* start with the before/after split on */
    double split_at;                      /* split position, 0..1 of the width (0: the middle) */
    int quiet;                            /* no lines on stderr */
    const char *keys;                     /* keys pressed before the first frame (as typed in
                                             the window: "RRs" = radius +2, split), or NULL */
    const tsr_deband_params *deband;      /* deband before the chain (NULL: no): y4m frames in
                                             YCbCr, images as tsr_deband_image does */
    tsr_frame_view frame_view;            /* y4m: how frames are shown (tsr_frame_to_image) */
    int loop;                             /* y4m: start again after the last frame */
    int progress;                         /* headless y4m: frame and fps on stderr each second */
} tsr_view_options;

typedef struct tsr_view_stats {
    int frames;                           /* frames rendered */
    double seconds;                       /* wall time of those frames */
    double fps;
    double ms_per_frame;
    unsigned long long host_bytes_per_frame;   /* bytes through host memory per frame (copies
                                                  host<->device and host->GL), measured */
    tsr_view_path path;                   /* the path that ran */
    char renderer[128];                   /* GL_RENDERER */
    char platform[64];                    /* how the GL context was made */
    int stream_frame;                     /* y4m: number (from 0) of the stream frame drawn last */
} tsr_view_stats;

/* Whether this build has the viewer (1) or was built without GL (0). */
int tsr_view_compiled(void);
/* Name of a path ("interop", "hostcopy", "cpu", "auto"). */
const char *tsr_view_path_name(tsr_view_path p);
/* Whether an operation can be shown: 8/16-bit output of 1..4 channels (not sums). */
int tsr_view_op_displayable(const tsr_op *op);

/* Show 'in' (host memory, 8/16-bit, 1..4 channels) through the chain in o. Window mode runs
 * until closed or o->frames frames; headless renders o->frames (at least 1) frames at 1:1.
 * shot, when not NULL, receives (allocated, host, RGB 8-bit) the last frame exactly as drawn
 * at 1:1: the output's size, or the window's in window mode. st, when not NULL, receives the
 * timings. Fails with a one-line message: TSR_E_UNSUPPORTED when no display or GL is usable,
 * TSR_E_NO_DEVICE when a CUDA path is demanded without a GPU, TSR_E_ARG for a bad chain. */
tsr_status tsr_view_run(const tsr_image *in, const tsr_view_options *o, tsr_image *shot, tsr_view_stats *st);

/* Play the YUV4MPEG2 stream f ('name' in messages) as tsr_view_run shows an image: each frame is
 * read with tsr_y4m_read_frame, debanded in YCbCr (o->deband), converted by tsr_frame_to_image
 * (o->frame_view) into the chain's input, which the image operations then process; the split
 * shows the converted frame before deband and the chain. A window plays at the stream's frame
 * rate (F; 25 fps without one): space pauses, '.' shows the next frame and pauses; at the end
 * it stays on the last frame, or with o->loop starts again (f must be seekable). Off screen
 * every rendered frame is the next stream frame, as fast as possible. o->frames N: N frames
 * rendered (while playing: stream frames 0..N-1), fewer when the stream ends first (0: the
 * whole stream off screen, until closed in a window). shot: the last frame rendered. A
 * truncated or corrupt stream fails with TSR_E_FORMAT naming the frame (*shot untouched). */
tsr_status tsr_view_play(FILE *f, const char *name, const tsr_view_options *o, tsr_image *shot, tsr_view_stats *st);

#endif
