/* 'tessera view': show an image, or play a y4m stream, through an operation or a chain of them
 * (deband first on streams), in a window or off screen, with a screenshot and a frame-rate
 * benchmark of the interop and host-copy paths. */
#include "cli.h"
#include "../core/internal.h"
#include "../view/view.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef TSR_HAVE_VIEW

/* Builds without GL headers have no viewer: say so in one line. */
int tsr__cmd_view(int argc, char **argv, const tsr_cli_common *global)
{
    (void)argc, (void)argv, (void)global;
    fprintf(stderr, "tessera: view: this build has no viewer (install libgl-dev libegl-dev libopengl-dev "
                    "libx11-dev and rebuild)\n");
    return TSR_EXIT_UNSUPPORTED;
}

#else

/* The viewer's own options. */
typedef struct tsr__view_args {
    int headless, frames, benchmark, split, path, bench_width, bench_height, loop, show, progress;
    double split_at;
} tsr__view_args;

static const char *const tsr__path_names[] = {"auto", "cpu", "interop", "hostcopy", NULL};
static const char *const tsr__show_names[] = {"rgb", "luma", NULL};   /* tsr_frame_view */

static const tsr_param tsr__view_params[] = {
    {"headless", TSR_P_BOOL, "render off screen (EGL) instead of in a window", 0, 1, 0, NULL,
     offsetof(tsr__view_args, headless), 0},
    {"frames", TSR_P_INT,
     "frames to render (0: until the window closes; headless: 1, a y4m stream to its end; benchmark: 100); "
     "a y4m stream shows frame N-1 last, or its last frame when shorter",
     0, 1e9, 0, NULL, offsetof(tsr__view_args, frames), 0},
    {"split", TSR_P_BOOL, "start with the before/after split (input left of it, output right)", 0, 1, 0, NULL,
     offsetof(tsr__view_args, split), 0},
    {"split-at", TSR_P_REAL, "split position as a fraction of the width", 0, 1, 0.5, NULL,
     offsetof(tsr__view_args, split_at), 0},
    {"path", TSR_P_CHOICE,
     "how frames reach GL: interop (CUDA writes the GL pixel buffer), hostcopy (through host memory), cpu; "
     "auto: interop where possible, else cpu",
     0, 3, 0, tsr__path_names, offsetof(tsr__view_args, path), 0},
    {"benchmark", TSR_P_BOOL, "headless frame rate and bytes through the host per frame of each path", 0, 1, 0, NULL,
     offsetof(tsr__view_args, benchmark), 0},
    {"bench-width", TSR_P_INT, "benchmark frame width; the input is scaled to it (0: the input's)", 0, 16384, 3840,
     NULL, offsetof(tsr__view_args, bench_width), 0},
    {"bench-height", TSR_P_INT, "benchmark frame height (0: the input's)", 0, 16384, 2160, NULL,
     offsetof(tsr__view_args, bench_height), 0},
    {"loop", TSR_P_BOOL, "y4m: start again after the last frame (IN must be a file, not a pipe)", 0, 1, 0, NULL,
     offsetof(tsr__view_args, loop), 0},
    {"show", TSR_P_CHOICE, "y4m: rgb (BT.601 limited range; mono streams as gray) or luma (the Y plane as gray)", 0, 1,
     0, tsr__show_names, offsetof(tsr__view_args, show), 0},
    {"progress", TSR_P_BOOL, "headless y4m: frame and fps on stderr every second (default: when stderr is a terminal)",
     0, 1, 0, NULL, offsetof(tsr__view_args, progress), 0},
};
#define TSR__NVIEW ((int)(sizeof tsr__view_params / sizeof tsr__view_params[0]))
#define TSR__MAXP (TSR__NVIEW + 32 + TSR_VIEW_MAX_STAGES * 16)

/* All values parsed in one go: the viewer's, deband's, then each stage's parameter block. */
typedef struct tsr__view_values {
    tsr__view_args args;
    tsr_deband_params deband;
    unsigned char stage[TSR_VIEW_MAX_STAGES][TSR_VIEW_PARAMS_BYTES];
} tsr__view_values;

static const char tsr__view_help[] =
    "Shows IN through an operation or a chain (--op gray,box) in a window: o/O switch the (last) operation, "
    "r/R b/B c/C change radius, block and C live, s toggles the before/after split (right-drag or ,/. moves it), "
    "wheel or +/- zooms, drag or arrows pan, 0 is 1:1, f fits, p switches the path, q quits; the frame time and "
    "the bytes through the host per frame are in the title. With a CUDA GPU the output is written by CUDA "
    "straight into a GL pixel buffer (zero bytes through the host). --headless renders off screen; "
    "--screenshot OUT.png writes the last frame exactly as drawn at 1:1 (gray outputs as R=G=B). The options "
    "of the operations follow --op; an option belongs to every stage that has it. "
    "A YUV4MPEG2 stream (IN.y4m, or '-' for stdin) plays at its frame rate (F; 25 fps without one; off screen as "
    "fast as possible), space pauses, '.' shows the next frame and pauses, </> move the split; at the end the "
    "last frame stays (--loop starts again). --op deband (first in the chain, with deband's options) debands "
    "each frame in YCbCr (an image as 'tessera deband' does); the frame is then shown as 8-bit RGB (BT.601 limited range, integer, chroma "
    "replicated: see tsr_frame_to_image) and the other operations work on that RGB image. The split shows the "
    "frame before deband and the operations. A truncated or corrupt stream stops with one line and exit 3.";

/* Remove '--NAME V' / '--NAME=V' from argv (compacting it) and return V, NULL when absent, or
 * set *bad when the value is missing. */
static const char *tsr__take_string(int *argc, char **argv, const char *name, int *bad)
{
    size_t n = strlen(name);
    const char *val = NULL;
    for (int i = 1; i < *argc; i++) {
        int take = 0;
        if (!strcmp(argv[i], "--")) break;
        if (!strncmp(argv[i], "--", 2) && !strncmp(argv[i] + 2, name, n)) {
            if (argv[i][2 + n] == '=') {
                val = argv[i] + 3 + n;
                take = 1;
            } else if (argv[i][2 + n] == 0) {
                if (i + 1 >= *argc) {
                    *bad = 1;
                    return NULL;
                }
                val = argv[i + 1];
                take = 2;
            }
        }
        if (take) {
            memmove(&argv[i], &argv[i + take], (size_t)(*argc - i - take) * sizeof *argv);
            *argc -= take;
            i--;
        }
    }
    return val;
}

/* Parse "a,b,c" into the stages of o (defaults filled); *deband is set when the chain starts
 * with deband, which is no registered operation: it works on whole frames before the others. */
static tsr_status tsr__parse_chain(const char *text, tsr_view_options *o, int *deband)
{
    char buf[256], *save = NULL;
    if (strlen(text) >= sizeof buf) return tsr__fail(TSR_E_ARG, "view: --op '%.40s...' is too long", text);
    strcpy(buf, text);
    for (char *name = strtok_r(buf, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
        const tsr_op *op = tsr_op_find(name);
        if (!strcmp(name, "none")) continue;
        if (!strcmp(name, "deband")) {
            if (o->nstages || *deband)
                return tsr__fail(TSR_E_ARG, "view: --op: deband comes first in a chain, once (it works on the "
                                            "frame as read)");
            *deband = 1;
            continue;
        }
        if (!op) {
            tsr_cli_near near = {name, NULL, 0};
            tsr_cli_near_add(&near, "deband");
            for (int i = 0; i < tsr_op_count(); i++)
                if (tsr_view_op_displayable(tsr_op_at(i))) tsr_cli_near_add(&near, tsr_op_at(i)->name);
            return tsr__fail(TSR_E_ARG, "view: --op: unknown operation '%s'%s (see 'tessera list')", name,
                             tsr_cli_near_hint(&near, NULL));
        }
        if (!tsr_view_op_displayable(op))
            return tsr__fail(TSR_E_UNSUPPORTED, "view: --op %s: its output cannot be shown as an image", name);
        if (o->nstages >= TSR_VIEW_MAX_STAGES)
            return tsr__fail(TSR_E_ARG, "view: --op: at most %d operations in a chain", TSR_VIEW_MAX_STAGES);
        if (op->params_size > TSR_VIEW_PARAMS_BYTES)
            return tsr__fail(TSR_E_UNSUPPORTED, "view: %s has too many parameters", name);
        o->stages[o->nstages].op = op;
        tsr_params_default(op, o->stages[o->nstages].params);
        o->nstages++;
    }
    return TSR_OK;
}

/* Scale 'in' to w x h by nearest neighbour (the benchmark's frame size). */
static tsr_status tsr__scale_nearest(const tsr_image *in, int w, int h, tsr_image *out)
{
    size_t px = (size_t)in->channels * in->depth;
    tsr_status s = tsr_image_create(out, w, h, in->channels, in->depth, TSR_HOST);
    if (s) return s;
    for (int y = 0; y < h; y++) {
        const unsigned char *srow = tsr__row(in, (int)((long long)y * in->height / h));
        unsigned char *drow = tsr__row(out, y);
        for (int x = 0; x < w; x++) memcpy(drow + x * px, srow + (size_t)((long long)x * in->width / w) * px, px);
    }
    return TSR_OK;
}

/* The benchmark: each path that runs here, headless, on the same frames; one line per path on
 * stdout. Returns the exit code. */
static int tsr__view_benchmark(const tsr_image *in, tsr_view_options *o, const tsr__view_args *a)
{
    tsr_image frame = {0};
    const tsr_image *src = in;
    tsr_view_path paths[3] = {TSR_VIEW_PATH_INTEROP, TSR_VIEW_PATH_HOSTCOPY, TSR_VIEW_PATH_CPU};
    int w = a->bench_width ? a->bench_width : in->width, h = a->bench_height ? a->bench_height : in->height, ran = 0;
    tsr_status s;
    if (w != in->width || h != in->height) {
        if ((s = tsr__scale_nearest(in, w, h, &frame))) return tsr_cli_fail("view", s);
        src = &frame;
    }
    o->headless = 1;
    o->frames = a->frames ? a->frames : 100;
    o->quiet = 1;
    printf("view benchmark: %dx%d, %d frames per path, CUDA: %s\n", w, h, o->frames,
           tsr_cuda_compiled() ? tsr_cuda_device_name() : "not compiled in");
    for (int i = 0; i < 3; i++) {
        tsr_view_stats st;
        if (a->path && (tsr_view_path)a->path != paths[i]) continue;
        if (paths[i] != TSR_VIEW_PATH_CPU && !tsr_cuda_available()) {
            printf("  %-8s  skipped: no CUDA device (%s)\n", tsr_view_path_name(paths[i]), tsr_cuda_device_name());
            continue;
        }
        o->path = paths[i];
        s = tsr_view_run(src, o, NULL, &st);
        if (s) {
            printf("  %-8s  failed: %s\n", tsr_view_path_name(paths[i]), tsr_last_error());
            continue;
        }
        ran++;
        printf("  %-8s  %9.1f fps  %8.3f ms/frame  %12llu bytes through the host per frame  (%s; %s)\n",
               tsr_view_path_name(st.path), st.fps, st.ms_per_frame, st.host_bytes_per_frame, st.renderer,
               st.platform);
    }
    fflush(stdout);
    tsr_image_free(&frame);
    if (!ran) {
        fprintf(stderr, "tessera: view: no path could run the benchmark\n");
        return TSR_EXIT_UNSUPPORTED;
    }
    return 0;
}

/* Play the y4m stream at 'path' ("-": stdin) through o; returns the status. */
static tsr_status tsr__view_stream(const char *path, const tsr_view_options *o, tsr_image *shot, tsr_view_stats *st)
{
    int std = !strcmp(path, "-");
    FILE *f = std ? stdin : fopen(path, "rb");
    tsr_status s;
    if (!f) return tsr__fail(TSR_E_IO, "%s: %s", path, strerror(errno));
    setvbuf(f, NULL, _IOFBF, 1 << 20);
    s = tsr_view_play(f, std ? "stdin" : path, o, shot, st);
    if (!std) fclose(f);
    return s;
}

/* tessera view IN [--op NAME[,NAME...] [its options]] [viewer options] */
int tsr__cmd_view(int argc, char **argv, const tsr_cli_common *global)
{
    tsr_cli_common c = *global;
    tsr_view_options o;
    static tsr__view_values vals;
    tsr_param params[TSR__MAXP];
    int np = 0, npos = 0, bad = 0, rc, deband = 0, stream;
    const char *pos[TSR_CLI_MAX_POSITIONAL], *chain, *shot_path;
    char **args = malloc((size_t)(argc + 1) * sizeof *args);
    tsr_image in = {0}, shot = {0};
    tsr_view_stats st;
    tsr_status s;

    if (!args) return tsr_cli_fail("view", tsr__fail(TSR_E_NOMEM, "out of memory"));
    memcpy(args, argv, (size_t)argc * sizeof *args);
    args[argc] = NULL;
    memset(&o, 0, sizeof o);
    memset(&vals, 0, sizeof vals);
    chain = tsr__take_string(&argc, args, "op", &bad);
    if (!bad) shot_path = tsr__take_string(&argc, args, "screenshot", &bad);
    if (!bad) o.keys = tsr__take_string(&argc, args, "keys", &bad);
    if (bad) {
        free(args);
        fprintf(stderr, "tessera: view: --op, --screenshot and --keys need a value\n");
        return TSR_EXIT_USAGE;
    }
    if (chain && (s = tsr__parse_chain(chain, &o, &deband))) {
        free(args);
        return tsr_cli_fail(NULL, s);
    }
    /* One table: the viewer's options, deband's, then each stage's (an option named twice is set
     * once and copied to every stage that has it, below). */
    for (int k = 0; k < TSR__NVIEW; k++) {
        params[np] = tsr__view_params[k];
        tsr__param_set(&params[np], &vals, params[np].def);
        np++;
    }
    tsr_deband_defaults(&vals.deband);
    for (int k = 0; deband && k < tsr_deband_param_count; k++) {
        params[np] = tsr_deband_param_table[k];
        params[np++].offset += offsetof(tsr__view_values, deband);
    }
    for (int i = 0; i < o.nstages; i++)
        for (int k = 0; k < o.stages[i].op->nparams && np < TSR__MAXP; k++) {
            tsr_param p = o.stages[i].op->params[k];
            int dup = 0;
            for (int j = 0; j < np; j++) dup |= !strcmp(params[j].name, p.name);
            if (dup) continue;
            p.offset += offsetof(tsr__view_values, stage) + (size_t)i * TSR_VIEW_PARAMS_BYTES;
            params[np++] = p;
        }
    for (int i = 0; i < o.nstages; i++) memcpy(vals.stage[i], o.stages[i].params, TSR_VIEW_PARAMS_BYTES);
    s = tsr_cli_parse("view", params, np, &vals, &c, argc, args, pos, TSR_CLI_MAX_POSITIONAL, &npos);
    free(args);
    if (s) return tsr_cli_fail(NULL, s);
    if (c.help) {
        tsr_cli_print_help(stdout, "view",
                           "IN|IN.y4m|- [--op [deband,]NAME[,NAME...] [their options]] [--screenshot OUT.png] "
                           "[--keys KEYS]",
                           "show an image or play a y4m stream through operations, live, on the GPU without host "
                           "copies",
                           tsr__view_help, params, np);
        return 0;
    }
    if ((s = tsr_cli_check_required("view", params, np))) return tsr_cli_fail(NULL, s);
    if (npos != 1) {
        fprintf(stderr, "tessera: view: expected one input image or y4m stream, got %d (see 'tessera view --help')\n",
                npos);
        return TSR_EXIT_USAGE;
    }
    /* Hand each stage its values, including options it shares with an earlier stage. */
    for (int i = 0; i < o.nstages; i++)
        for (int k = 0; k < o.stages[i].op->nparams; k++) {
            const tsr_param *p = &o.stages[i].op->params[k];
            for (int j = TSR__NVIEW; j < np; j++)
                if (!strcmp(params[j].name, p->name))
                    tsr__param_set(p, o.stages[i].params, tsr__param_get(&params[j], &vals));
        }
    o.exec = c.exec;
    o.path = (tsr_view_path)vals.args.path;
    if (o.path == TSR_VIEW_PATH_AUTO && c.exec.backend == TSR_BACKEND_CPU) o.path = TSR_VIEW_PATH_CPU;
    o.headless = vals.args.headless;
    o.frames = vals.args.frames;
    o.split = vals.args.split;
    o.split_at = vals.args.split_at;
    o.quiet = c.quiet;
    o.deband = deband ? &vals.deband : NULL;
    o.frame_view = (tsr_frame_view)vals.args.show;
    o.loop = vals.args.loop;
    o.progress = !c.quiet && (vals.args.progress || isatty(2));
    stream = tsr_cli_is_y4m(pos[0]);
    if (vals.args.benchmark && (shot_path || stream)) {
        fprintf(stderr, "tessera: view: --benchmark takes an image and writes no --screenshot\n");
        return TSR_EXIT_USAGE;
    }
    if (!stream && (o.loop || o.frame_view != TSR_FRAME_VIEW_RGB)) {
        fprintf(stderr, "tessera: view: --loop and --show are for y4m streams, and %s is an image\n", pos[0]);
        return TSR_EXIT_USAGE;
    }
    if (o.headless && o.loop && !o.frames) {
        fprintf(stderr, "tessera: view: --headless --loop needs --frames N (it would never end)\n");
        return TSR_EXIT_USAGE;
    }
    if (!o.headless && !vals.args.benchmark && shot_path && !o.frames) {
        fprintf(stderr, "tessera: view: --screenshot of a window needs --frames N (the frame to capture)\n");
        return TSR_EXIT_USAGE;
    }
    if (stream) {
        s = tsr__view_stream(pos[0], &o, shot_path ? &shot : NULL, &st);
    } else {
        if ((s = tsr_read(pos[0], &in))) return tsr_cli_fail("view", s);
        if (vals.args.benchmark) {
            if (!o.nstages && !deband) {   /* a representative default: the box filter */
                s = tsr__parse_chain("box", &o, &deband);
                if (s) return tsr_cli_fail(NULL, s);
            }
            rc = tsr__view_benchmark(&in, &o, &vals.args);
            tsr_image_free(&in);
            return rc;
        }
        s = tsr_view_run(&in, &o, shot_path ? &shot : NULL, &st);
        tsr_image_free(&in);
    }
    if (s) return tsr_cli_fail(strncmp(tsr_last_error(), "view:", 5) ? "view" : NULL, s);
    if (shot_path) {
        s = tsr_write_ex(shot_path, &shot, c.quality, c.png_level);
        tsr_image_free(&shot);
        if (s) return tsr_cli_fail("view", s);
    }
    if (!c.quiet) {
        char last[48] = "";
        if (stream) snprintf(last, sizeof last, " (y4m frame %d last)", st.stream_frame);
        fprintf(stderr, "tessera: view: %d frame%s%s on the %s path, %.3f ms/frame, %llu bytes through the host per "
                        "frame (%s; %s)\n",
                st.frames, st.frames == 1 ? "" : "s", last, tsr_view_path_name(st.path), st.ms_per_frame,
                st.host_bytes_per_frame, st.renderer, st.platform);
    }
    return 0;
}

#endif
