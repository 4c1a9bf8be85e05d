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
