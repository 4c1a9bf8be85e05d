/*
 * tessera: fast image and video processing on NVIDIA GPUs with a complete CPU path.
 *
 * Conventions
 *  - Every fallible call returns a tsr_status: 0 is success; 1..99 environment or device
 *    problems, 100..199 bad arguments or input, 200..299 unsupported requests.
 *  - On failure a one-line, thread-local message is readable with tsr_last_error().
 *  - Outputs are written only on success: an output image passed with data == NULL is
 *    allocated by the call and handed to the caller only when the call succeeds.
 *  - Images in device memory (TSR_DEVICE) are processed by the CUDA backend, asynchronously
 *    on the stream in tsr_exec; images in host memory are processed synchronously.
 */
#ifndef TESSERA_H
#define TESSERA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TSR_VERSION "0.1.0"

typedef enum tsr_status {
    TSR_OK = 0,
    /* 1..99: environment and device */
    TSR_E_IO = 1,             /* a file or stream could not be read or written */
    TSR_E_NOMEM = 2,          /* host memory allocation failed */
    TSR_E_NO_DEVICE = 3,      /* the CUDA backend was demanded and no usable GPU is present */
    TSR_E_DEVICE = 4,         /* a CUDA call or kernel launch failed */
    TSR_E_DEVICE_NOMEM = 5,   /* device memory allocation failed */
    TSR_E_INTERRUPTED = 6,    /* stopped by a signal or a broken pipe */
    /* 100..199: bad argument or input */
    TSR_E_ARG = 100,          /* a parameter is out of range or inconsistent */
    TSR_E_SIZE = 101,         /* sizes do not match, overflow, or exceed the limits */
    TSR_E_FORMAT = 102,       /* corrupt, truncated or unrecognised file contents */
    /* 200..299: unsupported */
    TSR_E_UNSUPPORTED = 200   /* valid request that this build or operation cannot do */
} tsr_status;

/* The message of the calling thread's last failure ("" if none). Valid until its next call. */
const char *tsr_last_error(void);
/* A short constant name for a status, e.g. "bad argument". */
const char *tsr_status_name(tsr_status s);

/* ---------------------------------------------------------------- images */

typedef enum tsr_depth {      /* bytes per sample */
    TSR_U8 = 1, TSR_U16 = 2, TSR_U32 = 4, TSR_U64 = 8
} tsr_depth;

typedef enum tsr_memory { TSR_HOST = 0, TSR_DEVICE = 1 } tsr_memory;

/* An image: interleaved channels (1 gray, 2 gray+alpha, 3 RGB, 4 RGBA), rows 'stride' bytes
 * apart. 32- and 64-bit samples only appear as outputs (sums). */
typedef struct tsr_image {
    int width, height, channels;
    tsr_depth depth;
    size_t stride;
    void *data;
    tsr_memory memory;
    int owned;                /* nonzero when tsr_image_free must release data */
} tsr_image;

/* Largest width*height accepted from files and by tsr_image_create (decompression-bomb guard).
 * Default 1<<30 pixels (also settable with the TSR_MAX_PIXELS environment variable). */
void tsr_set_max_pixels(uint64_t max_pixels);
uint64_t tsr_max_pixels(void);

/* Allocate an image (rows padded to 64 bytes on the host, pitched on the device). *img is
 * written only on success; release with tsr_image_free. */
tsr_status tsr_image_create(tsr_image *img, int width, int height, int channels, tsr_depth depth,
                            tsr_memory memory);
/* Describe caller-owned memory as an image; stride 0 means tightly packed. No copy is made and
 * tsr_image_free will not release the data. */
tsr_status tsr_image_wrap(tsr_image *img, int width, int height, int channels, tsr_depth depth,
                          void *data, size_t stride, tsr_memory memory);
/* Release owned data and zero *img. Safe on a zeroed or already freed image. */
void tsr_image_free(tsr_image *img);
/* Copy pixels between two images of the same shape in any memory (host<->device). With a
 * stream, device copies are asynchronous on it; host-side buffers must then stay alive. */
tsr_status tsr_image_copy(const tsr_image *src, tsr_image *dst, void *stream);
/* Bytes of one row's pixels (width * channels * depth), or 0 on overflow. */
size_t tsr_image_row_bytes(const tsr_image *img);

/* ---------------------------------------------------------------- files */

/* Read PNG, JPEG, PGM/PPM or BMP (format from the magic bytes). *img is host memory, RGB order
 * for colour. Corrupt, truncated or oversized files fail with TSR_E_FORMAT / TSR_E_SIZE. */
tsr_status tsr_read(const char *path, tsr_image *img);
/* The format of an existing file from its first bytes: "png", "jpeg", "pnm", "bmp", or NULL
 * (with a message) when unreadable or unrecognised. */
const char *tsr_file_format(const char *path);
/* Write by extension (.png .jpg/.jpeg .pgm/.ppm/.pnm .bmp) through a temporary file in the
 * same folder that is renamed over 'path' only when complete. quality: JPEG 1..100 (0: 95). */
tsr_status tsr_write(const char *path, const tsr_image *img, int quality);
/* tsr_write with PNG's zlib level: 1 (fastest) .. 9 (smallest), 0 zlib's default (6), which
 * tsr_write uses. The pixels are the same at every level; only the file size and the encoding
 * time change (a 672x504 photo on one thread: level 6 about 105 ms, level 1 about 13 ms and
 * 7-16% larger). PNG is encoded on tsr_threads() threads (bands of 256 KB of rows); the file's
 * bytes do not depend on the thread count. Other formats ignore png_level. */
tsr_status tsr_write_ex(const char *path, const tsr_image *img, int quality, int png_level);

/* ---------------------------------------------------------------- execution */

typedef enum tsr_backend { TSR_BACKEND_AUTO = 0, TSR_BACKEND_CPU = 1, TSR_BACKEND_CUDA = 2 } tsr_backend;

/* How to run an operation. A NULL tsr_exec* means all defaults. */
typedef struct tsr_exec {
    tsr_backend backend;      /* AUTO: device images -> CUDA; host images -> CUDA if a GPU is
                                 present (upload, run, download), else CPU */
    const char *variant;      /* NULL: TSR_VARIANT_<OP> from the environment, else the default */
    void *stream;             /* cudaStream_t for device work; NULL is the legacy default stream */
    int threads;              /* CPU threads; 0: tsr_set_threads(), else TSR_THREADS, else all cores */
} tsr_exec;

/* Default number of CPU threads (0 restores "all cores"). */
void tsr_set_threads(int n);
int tsr_threads(void);

/* Whether a usable CUDA device is present (0/1), and a one-line description of it. */
int tsr_cuda_available(void);
const char *tsr_cuda_device_name(void);
/* Whether this build contains the CUDA backend at all. */
int tsr_cuda_compiled(void);
/* Wait for all work queued on a stream (NULL: the default stream). */
tsr_status tsr_stream_sync(void *stream);

/* Choose the backend AUTO resolves to for this exec and image memory, and whether it was a
 * fallback (CUDA unavailable). Used by the CLI to say which backend ran. */
tsr_backend tsr_resolve_backend(const tsr_exec *ex, tsr_memory memory);
const char *tsr_backend_name(tsr_backend b);

/* ---------------------------------------------------------------- operations */

typedef enum tsr_border {
    TSR_BORDER_REFLECT101 = 0,  /* gfedcb|abcdefgh|gfedcb  (OpenCV's default) */
    TSR_BORDER_REPLICATE = 1,   /* aaaaaa|abcdefgh|hhhhhh */
    TSR_BORDER_REFLECT = 2,     /* fedcba|abcdefgh|hgfedc */
    TSR_BORDER_CONSTANT = 3     /* vvvvvv|abcdefgh|vvvvvv */
} tsr_border;

typedef struct tsr_box_params {
    int radius;                 /* window (2*r+1) x (2*r+1), 0..65535 */
    int radius_x, radius_y;     /* per-axis radius overriding 'radius' when >= 0 (-1: unused) */
    int border;                 /* tsr_border */
    int value;                  /* border value for TSR_BORDER_CONSTANT */
} tsr_box_params;

typedef enum tsr_thresh_method { TSR_THRESH_MEAN = 0, TSR_THRESH_GAUSSIAN = 1 } tsr_thresh_method;

typedef struct tsr_threshold_params {
    int block;                  /* odd, >= 3 */
    double c;                   /* subtracted from the local mean */
    int method;                 /* tsr_thresh_method */
    int inverse;                /* 0: maxval where src > mean - C; 1: where src <= mean - C */
    int maxval;                 /* 0..255 */
} tsr_threshold_params;

typedef enum tsr_axis { TSR_AXIS_COLUMNS = 0, TSR_AXIS_ROWS = 1 } tsr_axis;

typedef struct tsr_sums_params {
    int axis;                   /* tsr_axis: columns -> width x 1 image, rows -> 1 x height */
} tsr_sums_params;

typedef struct tsr_resize_params {
    int width, height;          /* target size, each no larger than the source's */
} tsr_resize_params;

/* dst: output image. If dst->data is NULL it is allocated (same memory as src) on success;
 * otherwise it must already have the output's shape. src and dst must not overlap. */
tsr_status tsr_invert(const tsr_image *src, tsr_image *dst, const tsr_exec *ex);
tsr_status tsr_box(const tsr_image *src, tsr_image *dst, const tsr_box_params *p, const tsr_exec *ex);
tsr_status tsr_threshold(const tsr_image *src, tsr_image *dst, const tsr_threshold_params *p,
                         const tsr_exec *ex);
/* Sums are U32 unless they can overflow 32 bits, then U64; one sum per channel. */
tsr_status tsr_sums(const tsr_image *src, tsr_image *dst, const tsr_sums_params *p, const tsr_exec *ex);
tsr_status tsr_gray(const tsr_image *src, tsr_image *dst, const tsr_exec *ex);
tsr_status tsr_resize(const tsr_image *src, tsr_image *dst, const tsr_resize_params *p,
                      const tsr_exec *ex);

/* ---------------------------------------------------------------- registry */

typedef enum tsr_param_type { TSR_P_INT, TSR_P_REAL, TSR_P_BOOL, TSR_P_CHOICE } tsr_param_type;

/* One parameter of an operation: drives the CLI, its help, and range checks. */
typedef struct tsr_param {
    const char *name;           /* CLI option --name */
    tsr_param_type type;
    const char *help;
    double min, max, def;       /* range and default (index for CHOICE, 0/1 for BOOL) */
    const char *const *choices; /* CHOICE: NULL-terminated names; the value is the index */
    size_t offset;              /* into the params struct: int for INT/BOOL/CHOICE, double REAL */
    int required;               /* must be given on the command line */
} tsr_param;

/* A named implementation of an operation. src and dst are already checked and allocated in
 * the variant's memory; the variant only computes. */
typedef struct tsr_variant {
    const char *name;
    tsr_backend backend;        /* CPU or CUDA */
    const char *help;
    tsr_status (*run)(const tsr_image *src, tsr_image *dst, const void *params, const tsr_exec *ex);
    /* NULL or nonzero when this variant handles these inputs (some seed kernels are narrow). */
    int (*supports)(const tsr_image *src, const void *params);
    int is_default;             /* preferred variant for its backend */
    int is_reference;           /* the plain definition the others are tested against */
    /* NULL or nonzero when this default should take these inputs: a speed choice between
     * defaults that all handle them (supports() is the correctness one). */
    int (*prefer)(const tsr_image *src, const void *params);
} tsr_variant;

typedef struct tsr_op {
    const char *name;
    const char *summary;        /* one line for 'tessera --help' */
    const char *help;           /* paragraph for 'tessera NAME --help' */
    const tsr_param *params;
    int nparams;
    size_t params_size;
    /* Validate src and params; fill *out with the output's shape (data NULL). */
    tsr_status (*check)(const tsr_image *src, const void *params, tsr_image *out);
    const tsr_variant *const *variants;   /* NULL-terminated, CPU then CUDA */
} tsr_op;

int tsr_op_count(void);
const tsr_op *tsr_op_at(int i);
const tsr_op *tsr_op_find(const char *name);
/* Fill params with every parameter's default. */
void tsr_params_default(const tsr_op *op, void *params);
/* Check ranges of every parameter (TSR_E_ARG with a message naming it). */
tsr_status tsr_params_check(const tsr_op *op, const void *params);
/* The variant that tsr_run would choose for these inputs (NULL with a message if none fits):
 * exec->variant, else the environment's TSR_VARIANT_<OP>, else the backend's default. */
const tsr_variant *tsr_choose_variant(const tsr_op *op, const tsr_exec *ex, const tsr_image *src,
                                      const void *params);
/* Run any registered operation. See the dst rules above tsr_invert. */
tsr_status tsr_run(const tsr_op *op, const tsr_image *src, tsr_image *dst, const void *params,
                   const tsr_exec *ex);
/* Verbose logging of variant choices to stderr (also TSR_LOG=1). */
void tsr_set_log(int on);

/* ---------------------------------------------------------------- deband */
#include <stdio.h>   /* FILE, for the y4m functions */
/*
 * f3kdb-style banding reduction (docs/deband.md defines every step). All arithmetic is integer,
 * so the CPU reference, the threaded CPU variant and the CUDA variants agree bit for bit.
 */

typedef enum tsr_chroma {
    TSR_CHROMA_420 = 0, TSR_CHROMA_422 = 1, TSR_CHROMA_444 = 2, TSR_CHROMA_MONO = 3
} tsr_chroma;

/* A planar YCbCr frame. Samples are uint8_t for bits == 8, else host-order uint16_t holding
 * values 0..2^bits-1. Chroma planes of 4:2:0 / 4:2:2 are ceil(width/2) wide, and ceil(height/2)
 * high for 4:2:0. Mono frames have one plane. */
typedef struct tsr_frame {
    int width, height;          /* luma size */
    int chroma;                 /* tsr_chroma */
    int bits;                   /* 8..16 */
    int nplanes;                /* 1 (mono) or 3 */
    void *plane[3];
    size_t stride[3];           /* bytes between rows of each plane */
    tsr_memory memory;
    int owned;                  /* nonzero when tsr_frame_free must release the planes */
} tsr_frame;

/* Allocate a frame (host rows padded to 64 bytes, pitched on the device). *f is written only on
 * success. Sizes are checked against tsr_max_pixels() and for overflow. */
tsr_status tsr_frame_create(tsr_frame *f, int width, int height, int chroma, int bits, tsr_memory memory);
/* Release owned planes and zero *f. Safe on a zeroed frame. */
void tsr_frame_free(tsr_frame *f);
/* Size of plane p (0 luma, 1 Cb, 2 Cr) of a frame of this shape. */
int tsr_frame_plane_width(int width, int chroma, int p);
int tsr_frame_plane_height(int height, int chroma, int p);
/* Copy between frames of the same shape in any memory; asynchronous on 'stream' for device copies. */
tsr_status tsr_frame_copy(const tsr_frame *src, tsr_frame *dst, void *stream);

/* How tsr_frame_to_image shows a frame. */
typedef enum tsr_frame_view {
    TSR_FRAME_VIEW_RGB = 0,     /* RGB (mono frames: the Y plane as gray) */
    TSR_FRAME_VIEW_LUMA = 1     /* the Y plane as gray */
} tsr_frame_view;
/* Convert a host frame into an 8-bit host image for display (what 'tessera view' shows of y4m):
 * 3 channels for TSR_FRAME_VIEW_RGB of 4:2:0, 4:2:2 and 4:4:4 frames, else 1. With s = bits - 8,
 * all in integers (>> of a non-negative value; results clamped to 0..255):
 *   RGB, BT.601 limited range:  C = 298 (Y - 16<<s) + (128<<s),  D = Cb - 128<<s,  E = Cr - 128<<s
 *     R = (C + 409 E) >> (8+s),  G = (C - 100 D - 208 E) >> (8+s),  B = (C + 516 D) >> (8+s)
 *   gray (mono, or the Y plane), full scale:  (Y * 255 + M/2) / M  with M = 2^bits - 1
 * Chroma is replicated: pixel (x, y) takes chroma sample (x/2, y/2) in 4:2:0 and (x/2, y) in
 * 4:2:2. dst follows tsr_invert's rules (allocated on success when dst->data is NULL, else a host
 * image of that shape). ex: threads only (NULL: defaults). */
tsr_status tsr_frame_to_image(const tsr_frame *src, tsr_image *dst, tsr_frame_view view, const tsr_exec *ex);

typedef enum tsr_dither { TSR_DITHER_NONE = 0, TSR_DITHER_ORDERED = 1, TSR_DITHER_FLOYD = 2 } tsr_dither;

/* Every parameter, with f3kdb's names, scales and defaults (tsr_deband_defaults). */
typedef struct tsr_deband_params {
    int range;                  /* 0..255: largest reference distance in pixels (default 15) */
    int y, cb, cr;              /* 0..4096 thresholds; 64 = one 8-bit code value (default 64) */
    int grain_y, grain_c;       /* 0..4096 grain amplitude; 64 = +-one 8-bit code value (64) */
    int sample_mode;            /* 1: two references above/below; 2: four on a cross (2) */
    int seed;                   /* 0..2147483647 (0) */
    int blur_first;             /* compare the average (1) or every reference (0) (default 1) */
    int dynamic_grain;          /* grain changes with the frame index (0) */
    int keep_tv_range;          /* clamp to 16..235 luma, 16..240 chroma (scaled) (0) */
    int output_depth;           /* 8..16, 0: the input's depth (0) */
    int dither;                 /* tsr_dither, applied when reducing depth (FLOYD) */
} tsr_deband_params;

/* The defaults above. */
void tsr_deband_defaults(tsr_deband_params *p);
/* Check every parameter for a frame of 'bits' (TSR_E_ARG naming the first bad one). */
tsr_status tsr_deband_check(const tsr_deband_params *p, int bits);
/* Parameter metadata (for the CLI and its help): offsets into tsr_deband_params. */
extern const tsr_param tsr_deband_param_table[];
extern const int tsr_deband_param_count;

/* The named implementations: CPU 'reference' (the definition), 'fast' (threaded), CUDA
 * 'planar' (default), 'aos3' and 'aos4' (4:4:4 packed-pixel experiments). */
typedef struct tsr_deband_variant_info {
    const char *name;
    tsr_backend backend;
    const char *help;
    int is_default, is_reference;
    int only_444;               /* handles 4:4:4 (and RGB images) only */
} tsr_deband_variant_info;
int tsr_deband_variant_count(void);
const tsr_deband_variant_info *tsr_deband_variant_at(int i);
/* The variant a call with this exec would use for frames in 'memory' of this chroma (NULL with a
 * message when none): ex->variant, else TSR_VARIANT_DEBAND, else the backend's default. */
const tsr_deband_variant_info *tsr_deband_choose(const tsr_exec *ex, tsr_memory memory, int chroma);

/* Deband one frame. frame_index feeds dynamic grain. dst: if dst->plane[0] is NULL a frame of
 * the output depth is allocated (in src's memory) on success; otherwise it must have src's shape
 * and bits == output depth. Device frames run asynchronously on ex->stream, except that with
 * Floyd-Steinberg depth reduction or an aos variant the call waits for the stream (it frees its
 * scratch memory); tsr_deband_pipe keeps its scratch and never waits needlessly. */
tsr_status tsr_deband_frame(const tsr_frame *src, tsr_frame *dst, const tsr_deband_params *p, int frame_index,
                            const tsr_exec *ex);
/* Deband a gray or RGB image (8 or 16 bits; an alpha channel is copied unchanged). Every colour
 * channel is treated as a plane with the Y threshold and grain_y. dst follows tsr_invert's rules;
 * its depth is 1 byte for output depth 8, else 2 bytes (values scaled to 16 bits: v << (16-d)). */
tsr_status tsr_deband_image(const tsr_image *src, tsr_image *dst, const tsr_deband_params *p, const tsr_exec *ex);

/* A stream of frames of one shape, pipelined through a fixed ring of slots (tsr_deband_pipe_slots,
 * each a host input and a host output frame): on CUDA the frames of several slots are in flight on
 * their own streams (upload of the next and download of the previous overlap the kernel) through
 * pinned host buffers; on the CPU a frame is processed when it is run or submitted. Two ways to
 * drive it, not to be mixed on one pipe: the one-thread calls _input/_submit/_drain, or the slot
 * calls _slot/_run/_wait for callers that read, process and write on different threads. */
typedef struct tsr_deband_pipe tsr_deband_pipe;
tsr_status tsr_deband_pipe_open(tsr_deband_pipe **pp, int width, int height, int chroma, int bits,
                                const tsr_deband_params *p, const tsr_exec *ex);
/* The number of slots (fixed at open; the one-thread calls use them in turn). */
int tsr_deband_pipe_slots(const tsr_deband_pipe *pp);
/* Slot k's host input frame. Fill it only when the slot is free: before its first run, or once
 * the output of its previous frame (tsr_deband_pipe_wait) has been consumed. On CUDA a slot's
 * pinned and device frames are allocated at its first use (here or in _input or _run); NULL
 * when k is out of range or they could not be had (tsr_last_error() says which). */
tsr_frame *tsr_deband_pipe_slot(tsr_deband_pipe *pp, int k);
/* Process slot k's input as frame number frame_index (dynamic grain): on the CPU now (threaded),
 * on CUDA queued on the slot's stream. */
tsr_status tsr_deband_pipe_run(tsr_deband_pipe *pp, int k, int frame_index);
/* Wait for slot k's run to finish; *out (may be NULL) receives its output frame, valid until the
 * slot runs again. May be called on another thread than _run as long as the two calls are for
 * different slots and each _wait follows its _run (e.g. ordered by a mutex). */
tsr_status tsr_deband_pipe_wait(tsr_deband_pipe *pp, int k, const tsr_frame **out);
/* The host frame to fill with the next input. *done receives the oldest finished output when the
 * slot had one (write it out before the next call), else NULL. */
tsr_status tsr_deband_pipe_input(tsr_deband_pipe *pp, tsr_frame **in, const tsr_frame **done);
/* Queue the frame filled after tsr_deband_pipe_input, as frame number frame_index. */
tsr_status tsr_deband_pipe_submit(tsr_deband_pipe *pp, int frame_index);
/* The oldest unfinished output (waiting for it), or *done = NULL when none is left. */
tsr_status tsr_deband_pipe_drain(tsr_deband_pipe *pp, const tsr_frame **done);
/* The variant the pipe runs. */
const tsr_deband_variant_info *tsr_deband_pipe_variant(const tsr_deband_pipe *pp);
/* Accumulated kernel time in milliseconds (CUDA events; CPU: processing time). */
double tsr_deband_pipe_kernel_ms(const tsr_deband_pipe *pp);
void tsr_deband_pipe_close(tsr_deband_pipe *pp);

/* YUV4MPEG2 streams. C tags: 420jpeg 420paldv 420mpeg2 420 422 444 mono and the pNN forms
 * (420p10, 422p12, 444p16, mono16...); samples above 8 bits are little-endian 16-bit. It and Ib
 * (interlaced, top or bottom field first) are read as whole frames of interleaved fields, with
 * 'interlace' saying so; Im (a tag per frame) and 411/410 are rejected with a message; I? and Ip
 * are read as progressive. */
typedef struct tsr_y4m_info {
    int width, height, chroma, bits;
    int fps_num, fps_den;       /* 0/0 when absent */
    int par_num, par_den;       /* 0/0 when absent */
    char ctag[16];              /* the C tag as read ("" when absent: 420jpeg) */
    char extra[256];            /* X... and other tags, passed through verbatim */
    char interlace;             /* 'p' progressive (Ip, I? or none), 't' top field first, 'b' bottom;
                                   written back as I<interlace> (0 reads as 'p') */
} tsr_y4m_info;
/* Parse a stream header from f ('name' is used in messages). */
tsr_status tsr_y4m_read_header(FILE *f, const char *name, tsr_y4m_info *info);
/* Read the next frame into a host frame of the stream's shape. *eof = 1 (and TSR_OK) on a clean
 * end before a frame; a partial frame fails with "frame N: truncated" (N from 0). */
tsr_status tsr_y4m_read_frame(FILE *f, const tsr_y4m_info *info, tsr_frame *frame, int frame_number, int *eof);
/* Write a header for frames of 'bits' depth with info's other fields. */
tsr_status tsr_y4m_write_header(FILE *f, const tsr_y4m_info *info, int bits);
/* Write one host frame. */
tsr_status tsr_y4m_write_frame(FILE *f, const tsr_frame *frame);

/* ---- puzzle ---- */

/* Square-piece jigsaw puzzles: an image cut into rows x cols square tiles of 'tile' pixels.
 * A placement says, for each cell of the restored image (row-major, cell = row * cols + col),
 * which tile of the scrambled image goes there (tiles numbered row-major too) and how many
 * quarter turns clockwise to rotate it by. Scrambling writes the same kind of placement as its
 * ground truth, so a solution and the truth compare cell by cell. */
typedef struct tsr_puzzle_placement {
    int rows, cols, tile;       /* grid and tile size in pixels */
    int rotate;                 /* 1 when rotations were unknown (rotation[] may be nonzero) */
    int *piece;                 /* rows*cols source tile indices, a permutation */
    unsigned char *rotation;    /* rows*cols quarter turns clockwise, 0..3 */
    double cost;                /* solver's total dissimilarity of adjacent sides (0 for truth) */
    int exact;                  /* 1 when the solver proved this placement optimal for its cost */
} tsr_puzzle_placement;

typedef enum tsr_puzzle_method {
    TSR_PUZZLE_AUTO = 0,        /* exact when the search space is small, else greedy */
    TSR_PUZZLE_EXACT = 1,       /* enumerate every placement (n! x 4^n with rotation) */
    TSR_PUZZLE_GREEDY = 2       /* best-buddy greedy placement with segment repair */
} tsr_puzzle_method;

typedef struct tsr_puzzle_options {
    int rows, cols;             /* grid; the image must be exactly rows*t x cols*t for a square t */
    int rotate;                 /* pieces may be rotated by unknown quarter turns */
    int method;                 /* tsr_puzzle_method */
    int no_repair;              /* skip the segment-repair step of the greedy solver */
    /* Optional progress report (stage name, fraction done 0..1); called from the solving thread. */
    void (*progress)(void *ctx, const char *stage, double fraction);
    void *progress_ctx;
} tsr_puzzle_options;

typedef struct tsr_puzzle_scores {
    double direct;              /* share of cells holding the right tile in the right rotation */
    double neighbor;            /* share of the 4n tile sides with the right neighbour (or border) */
    double direct_shifted;      /* direct accuracy after the best shift (and global turn) */
    int shift_rows, shift_cols; /* that shift: solution cell (r+dr, c+dc) compared to truth (r, c) */
    int shift_turns;            /* that global turn (quarter turns clockwise of the solution) */
    int twins;                  /* tsr_puzzle_score_pixels: tiles whose pixels another tile has */
} tsr_puzzle_scores;

/* Release the arrays of a placement and zero it. Safe on a zeroed placement. */
void tsr_puzzle_placement_free(tsr_puzzle_placement *p);
/* Allocate a rows x cols placement (identity: piece[i] = i, no rotation). */
tsr_status tsr_puzzle_placement_init(tsr_puzzle_placement *p, int rows, int cols, int tile, int rotate);
/* Check that a placement is a permutation with rotations in range (and 0 unless rotate). */
tsr_status tsr_puzzle_placement_check(const tsr_puzzle_placement *p);

/* Cut a host image of exactly rows*tile x cols*tile pixels into tiles, shuffle them (and rotate
 * each by a random quarter turn when 'rotate') with a deterministic generator seeded by 'seed'.
 * dst: see the rules above tsr_invert (host memory). *truth receives the placement that restores
 * the original from dst. */
tsr_status tsr_puzzle_scramble(const tsr_image *src, tsr_image *dst, int rows, int cols, int rotate,
                               uint64_t seed, tsr_puzzle_placement *truth);
/* Assemble dst from the tiles of src as the placement says (dst rules as for tsr_invert). */
tsr_status tsr_puzzle_render(const tsr_image *src, const tsr_puzzle_placement *p, tsr_image *dst);
/* Solve a scrambled host image. The pairwise compatibilities run on the backend 'ex' selects
 * (ex->variant names a compatibility or exact-search variant; see tsr_puzzle_variant_name).
 * *out is written only on success. */
tsr_status tsr_puzzle_solve(const tsr_image *src, const tsr_puzzle_options *opt, tsr_puzzle_placement *out,
                            const tsr_exec *ex);
/* Pomeranz's direct and neighbor accuracy of a solution against the truth (same grid). */
tsr_status tsr_puzzle_score(const tsr_puzzle_placement *solution, const tsr_puzzle_placement *truth,
                            tsr_puzzle_scores *out);
/* The same scores with tiles of identical pixels taken as one: 'scrambled' is the image both
 * placements refer to (host, 8-bit). Wherever a cell of the solution shows the truth's pixels
 * through another tile or turn (a blank tile for another, a uniform tile turned), it counts as
 * the truth's tile, so a solution that renders the original image scores 100%. The cells are
 * matched under tsr_puzzle_score's best shift and turn, or under no shift in any turn, whichever
 * scores higher. out->twins counts the tiles whose pixels another tile has. */
tsr_status tsr_puzzle_score_pixels(const tsr_puzzle_placement *solution, const tsr_puzzle_placement *truth,
                                   const tsr_image *scrambled, tsr_puzzle_scores *out);
/* Placement as JSON text (malloc'ed, NUL-terminated) and back. Parsing is strict: malformed
 * text fails with TSR_E_FORMAT naming the line and column. */
tsr_status tsr_puzzle_to_json(const tsr_puzzle_placement *p, char **json);
tsr_status tsr_puzzle_from_json(const char *json, size_t len, tsr_puzzle_placement *p);
/* Names of the puzzle variants (i-th, NULL past the end), their backend and a one-line help;
 * the name of the variant the last tsr_puzzle_solve of this thread used for its main stage. */
const char *tsr_puzzle_variant_name(int i, tsr_backend *backend, const char **help);
const char *tsr_puzzle_last_variant(void);

#ifdef __cplusplus
}
#endif
#endif
