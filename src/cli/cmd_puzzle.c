/* 'tessera puzzle': scramble an image into square tiles, solve a scrambled image, score a
 * solution against the truth. Options come from the tsr_param tables below. */
#include "cli.h"
#include "../core/internal.h"
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int tile, rows, cols, seed, rotate, method, no_repair;
} tsr__pz_cli;

static const char *const tsr__pz_methods[] = {"auto", "exact", "greedy", NULL};

/* zlib level of the PNG images that scramble and solve write: zlib's default (6) took 110-200 ms
 * of a 432-piece solve's 240-400 ms end to end on the 2-core machine (672x504, adaptive filters,
 * libpng on one thread); level 1 takes 15-20 ms there (8 ms with the banded encoder on 2
 * threads), with the same pixels and files 7-16% larger (docs/puzzle.md). --png-level overrides it. */
#define TSR_PZ_PNG_LEVEL 1

#define TSR_PZ_P(name, type, help, min, max, def, ch, field) \
    {name, type, help, min, max, def, ch, offsetof(tsr__pz_cli, field), 0}
static const tsr_param tsr__pz_scramble_params[] = {
    TSR_PZ_P("tile", TSR_P_INT, "square tile size in pixels (or give --rows and --cols, or --grid RxC)", 0, 65535, 0,
             NULL, tile),
    TSR_PZ_P("rows", TSR_P_INT, "rows of tiles (--grid RxC sets rows and columns)", 0, 1 << 20, 0, NULL, rows),
    TSR_PZ_P("cols", TSR_P_INT, "columns of tiles", 0, 1 << 20, 0, NULL, cols),
    TSR_PZ_P("seed", TSR_P_INT, "seed of the shuffle", 0, INT_MAX, 1, NULL, seed),
    TSR_PZ_P("rotate", TSR_P_BOOL, "also turn each tile by a random quarter turn", 0, 1, 0, NULL, rotate),
};
static const tsr_param tsr__pz_solve_params[] = {
    TSR_PZ_P("tile", TSR_P_INT, "square tile size in pixels (or give --rows and --cols, or --grid RxC)", 0, 65535, 0,
             NULL, tile),
    TSR_PZ_P("rows", TSR_P_INT, "rows of tiles (--grid RxC sets rows and columns)", 0, 1 << 20, 0, NULL, rows),
    TSR_PZ_P("cols", TSR_P_INT, "columns of tiles", 0, 1 << 20, 0, NULL, cols),
    TSR_PZ_P("rotate", TSR_P_BOOL, "tiles may be turned by unknown quarter turns", 0, 1, 0, NULL, rotate),
    TSR_PZ_P("method", TSR_P_CHOICE,
             "exact: every placement (9 pieces), or branch and bound (30 without rotation); greedy: best-buddy "
             "placement; auto: exact when small, greedy then a bounded branch and bound up to 30 pieces", 0, 2,
             0, tsr__pz_methods, method),
    TSR_PZ_P("no-repair", TSR_P_BOOL, "skip the segment-repair step of the greedy solver", 0, 1, 0, NULL,
             no_repair),
};
#define TSR_PZ_N(a) ((int)(sizeof a / sizeof a[0]))

/* The help of 'tessera puzzle': subcommands, JSON, variants, backend policy. */
static void tsr__pz_help(FILE *f)
{
    fprintf(f, "usage: tessera puzzle scramble|solve|score ...\n\n"
               "Square-piece jigsaw puzzles:\n"
               "  tessera puzzle scramble IN OUT (--tile PX | --grid RxC) [--seed N] [--rotate]\n"
               "  tessera puzzle solve IN OUT (--tile PX | --grid RxC) [--rotate] [--method M]\n"
               "  tessera puzzle score SOLUTION.json TRUTH.json [SCRAMBLED-IMAGE]\n\n"
               "scramble and solve write OUT and, beside it, a placement as JSON (OUT's extension\n"
               "replaced by .json): for each cell of the restored image, row by row, the source tile\n"
               "(numbered row by row in the scrambled image) and its quarter turns clockwise.\n"
               "score prints Pomeranz's direct and neighbor accuracy and the direct accuracy after the\n"
               "best shift. See 'tessera puzzle scramble --help' and 'tessera puzzle solve --help'.\n"
               "\nvariants of 'puzzle solve' (--variant NAME or TSR_VARIANT_PUZZLE; TSR_LOG=1 logs the\n"
               "choice and stage times):\n");
    for (int i = 0;; i++) {
        tsr_backend b;
        const char *help, *name = tsr_puzzle_variant_name(i, &b, &help);
        if (!name) break;
        fprintf(f, "  %-4s %-10s %s\n", tsr_backend_name(b), name, help);
    }
    fprintf(f, "\n--backend auto runs puzzles whose work is estimated under 50 ms on the CPU, since\n"
               "starting the GPU costs more; larger ones on the GPU when one is usable.\n");
}

/* Copy argv, turning '--grid RxC' / '--grid=RxC' into '--rows R --cols C' (strings in 'store').
 * Returns the new argc, or -1 with a message. */
static int tsr__pz_split_grid(int argc, char **argv, char **out, char store[2][32])
{
    int n = 0;
    for (int i = 0; i < argc; i++) {
        const char *v = NULL;
        int r, c;
        char x, extra;
        if (!strcmp(argv[i], "--grid")) {
            if (i + 1 >= argc) {
                tsr__fail(TSR_E_ARG, "puzzle: option --grid needs a value RxC");
                return -1;
            }
            v = argv[++i];
        } else if (!strncmp(argv[i], "--grid=", 7)) {
            v = argv[i] + 7;
        } else if (!strcmp(argv[i], "--")) {
            while (i < argc) out[n++] = argv[i++];
            break;
        }
        if (!v) {
            out[n++] = argv[i];
            continue;
        }
        if (sscanf(v, "%d%c%d%c", &r, &x, &c, &extra) != 3 || (x != 'x' && x != 'X') || r < 1 || c < 1) {
            tsr__fail(TSR_E_ARG, "puzzle: --grid needs ROWSxCOLS like 18x24, got '%s'", v);
            return -1;
        }
        snprintf(store[0], 32, "--rows=%d", r);
        snprintf(store[1], 32, "--cols=%d", c);
        out[n++] = store[0];
        out[n++] = store[1];
    }
    return n;
}

/* OUT's JSON path: the extension replaced by .json (appended when there is none). */
static void tsr__pz_json_path(const char *out, char *buf, size_t n)
{
    const char *slash = strrchr(out, '/'), *dot = strrchr(out, '.');
    if (dot && (!slash || dot > slash + 1)) snprintf(buf, n, "%.*s.json", (int)(dot - out), out);
    else snprintf(buf, n, "%s.json", out);
}

/* tsr_cli_write_text callback: write the NUL-terminated text ctx. */
static int tsr__pz_emit(FILE *f, void *ctx) { return fputs((const char *)ctx, f) < 0 ? -1 : 0; }

/* Write a placement as JSON to path, atomically. */
static tsr_status tsr__pz_write_json(const char *path, const tsr_puzzle_placement *p)
{
    char *js;
    tsr_status s = tsr_puzzle_to_json(p, &js);
    if (s) return s;
    s = tsr_cli_write_text(path, tsr__pz_emit, js);
    free(js);
    return s;
}

/* Grid and tile from the options and the image size; crops (a view, no copy) when the tiles do
 * not cover the image, saying so on stderr. */
static tsr_status tsr__pz_grid(const char *cmd, const tsr__pz_cli *o, const tsr_image *in, tsr_image *view,
                               int *rows, int *cols)
{
    int t;
    if (o->tile > 0 && (o->rows || o->cols))
        return tsr__fail(TSR_E_ARG, "puzzle %s: give --tile or --grid (--rows/--cols), not both", cmd);
    if (o->tile > 0) {
        t = o->tile;
        *rows = in->height / t;
        *cols = in->width / t;
    } else if (o->rows > 0 && o->cols > 0) {
        *rows = o->rows;
        *cols = o->cols;
        t = in->width / o->cols < in->height / o->rows ? in->width / o->cols : in->height / o->rows;
    } else {
        return tsr__fail(TSR_E_ARG, "puzzle %s: give --tile PX or --grid RxC (see 'tessera puzzle %s --help')", cmd,
                         cmd);
    }
    if (t < 1 || *rows < 1 || *cols < 1)
        return tsr__fail(TSR_E_SIZE, "puzzle %s: a %dx%d image is too small for that grid", cmd, in->width,
                         in->height);
    if ((long long)*rows * *cols > (1 << 24))
        return tsr__fail(TSR_E_SIZE, "puzzle %s: %lld pieces are more than tessera accepts (16777216)", cmd,
                         (long long)*rows * *cols);
    if (*cols * t != in->width || *rows * t != in->height)
        fprintf(stderr, "tessera: puzzle %s: %dx%d is not a whole number of %d-pixel tiles: using the top-left %dx%d\n",
                cmd, in->width, in->height, t, *cols * t, *rows * t);
    return tsr_image_wrap(view, *cols * t, *rows * t, in->channels, in->depth, in->data, in->stride, TSR_HOST);
}

/* Progress on stderr: each stage, then every 10%. */
static void tsr__pz_progress(void *ctx, const char *stage, double f)
{
    static char last[32];
    static int lastpct = -1;
    int pct = (int)(f * 100);
    (void)ctx;
    if (strcmp(last, stage)) {
        snprintf(last, sizeof last, "%s", stage);
        lastpct = -1;
    }
    if (pct / 10 == lastpct / 10 && lastpct >= 0) return;
    lastpct = pct;
    fprintf(stderr, "tessera: puzzle solve: %s %d%%\n", stage, pct);
}

/* Read a whole text file (at most 1 GiB). */
static tsr_status tsr__pz_slurp(const char *path, char **text, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t n = 0, cap = 0;
    if (!f) return tsr__fail(TSR_E_IO, "%s: %s", path, strerror(errno));
    for (;;) {
        size_t got;
        if (n == cap) {
            char *nb;
            if (cap >= ((size_t)1 << 30)) {
                free(buf);
                fclose(f);
                return tsr__fail(TSR_E_SIZE, "%s: larger than 1 GiB", path);
            }
            cap = cap ? cap * 2 : 65536;
            nb = realloc(buf, cap + 1);
            if (!nb) {
                free(buf);
                fclose(f);
                return tsr__fail(TSR_E_NOMEM, "%s: out of memory", path);
            }
            buf = nb;
        }
        got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
    }
    if (ferror(f)) {
        free(buf);
        fclose(f);
        return tsr__fail(TSR_E_IO, "%s: read error", path);
    }
    fclose(f);
    buf[n] = 0;
    *text = buf;
    *len = n;
    return TSR_OK;
}

/* Read and parse a placement file; errors are prefixed with the path. */
static tsr_status tsr__pz_load(const char *path, tsr_puzzle_placement *p)
{
    char *t = NULL;
    size_t n = 0;
    tsr_status s = tsr__pz_slurp(path, &t, &n);
    if (s) return s;
    s = tsr_puzzle_from_json(t, n, p);
    free(t);
    if (s) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s", tsr_last_error());
        tsr__fail(s, "%s: %s", path, msg);
    }
    return s;
}

/* 'tessera puzzle score SOLUTION.json TRUTH.json [SCRAMBLED]': the three accuracies on stdout,
 * and with the scrambled image the same with pixel-identical tiles taken as one. */
static int tsr__pz_score(int argc, char **argv, const tsr_cli_common *global)
{
    tsr_cli_common c = *global;
    const char *pos[TSR_CLI_MAX_POSITIONAL];
    int npos;
    tsr_puzzle_placement sol = {0}, truth = {0};
    tsr_puzzle_scores r, px;
    tsr_image img = {0};
    tsr_status s = tsr_cli_parse("puzzle score", NULL, 0, NULL, &c, argc, argv, pos, TSR_CLI_MAX_POSITIONAL, &npos);
    if (s) return tsr_cli_fail(NULL, s);
    if (c.help) {
        tsr_cli_print_help(stdout, "puzzle score", "SOLUTION.json TRUTH.json [SCRAMBLED-IMAGE]",
                           "Compare a solved placement with the truth",
                           "Prints direct accuracy (tiles in their exact cell and rotation), neighbor accuracy (tile "
                           "sides whose neighbour or border matches the truth, Pomeranz et al.) and the direct "
                           "accuracy after the best shift (and, with rotation, global turn). These count tiles by "
                           "identity, so blank or otherwise identical tiles in each other's places count as errors "
                           "although the picture is the same. Given the scrambled image both placements refer to, "
                           "it also prints the three with tiles of identical pixels taken as one (a uniform tile "
                           "also in any turn), and how many tiles have such a twin.",
                           NULL, 0);
        return 0;
    }
    if (npos != 2 && npos != 3) {
        fprintf(stderr, "tessera: puzzle score: expected SOLUTION.json TRUTH.json [SCRAMBLED-IMAGE] (see 'tessera "
                        "puzzle score --help')\n");
        return TSR_EXIT_USAGE;
    }
    if ((s = tsr__pz_load(pos[0], &sol)) || (s = tsr__pz_load(pos[1], &truth)) ||
        (s = tsr_puzzle_score(&sol, &truth, &r)) || (npos == 3 && (s = tsr_read(pos[2], &img))) ||
        (npos == 3 && (s = tsr_puzzle_score_pixels(&sol, &truth, &img, &px)))) {
        tsr_puzzle_placement_free(&sol);
        tsr_puzzle_placement_free(&truth);
        tsr_image_free(&img);
        return tsr_cli_fail("puzzle score", s);
    }
    printf("pieces: %d (%dx%d)\n", sol.rows * sol.cols, sol.rows, sol.cols);
    printf("direct: %.2f%%\n", 100 * r.direct);
    printf("neighbor: %.2f%%\n", 100 * r.neighbor);
    printf("direct after shift: %.2f%% (shift %d rows, %d cols, %d quarter turns)\n", 100 * r.direct_shifted,
           r.shift_rows, r.shift_cols, r.shift_turns);
    if (npos == 3) {
        printf("tiles with a pixel-identical twin: %d\n", px.twins);
        printf("by pixels: direct %.2f%%, neighbor %.2f%%, direct after shift %.2f%%\n", 100 * px.direct,
               100 * px.neighbor, 100 * px.direct_shifted);
    }
    tsr_puzzle_placement_free(&sol);
    tsr_puzzle_placement_free(&truth);
    tsr_image_free(&img);
    return 0;
}

/* 'tessera puzzle scramble|solve IN OUT': read, crop to whole tiles, run, write image and JSON. */
static int tsr__pz_image_cmd(int solve, int argc, char **argv, const tsr_cli_common *global)
{
    const char *name = solve ? "puzzle solve" : "puzzle scramble", *sub = solve ? "solve" : "scramble";
    const tsr_param *params = solve ? tsr__pz_solve_params : tsr__pz_scramble_params;
    int nparams = solve ? TSR_PZ_N(tsr__pz_solve_params) : TSR_PZ_N(tsr__pz_scramble_params);
    tsr_cli_common c = *global;
    const char *pos[TSR_CLI_MAX_POSITIONAL];
    char **av = malloc(sizeof(char *) * (size_t)(argc + 2)), store[2][32], jpath[4096];
    int npos = 0, ac, rows = 0, cols = 0;
    tsr__pz_cli o;
    tsr_image in = {0}, view, out = {0};
    tsr_puzzle_placement p = {0};
    tsr_status s;
    double t0, t1, t2, t3;
    if (!av) return tsr_cli_fail(name, tsr__fail(TSR_E_NOMEM, "out of memory"));
    ac = tsr__pz_split_grid(argc, argv, av, store);
    if (ac < 0) {
        free(av);
        return tsr_cli_fail(NULL, TSR_E_ARG);
    }
    memset(&o, 0, sizeof o);
    for (int i = 0; i < nparams; i++) tsr__param_set(&params[i], &o, params[i].def);
    s = tsr_cli_parse(name, params, nparams, &o, &c, ac, av, pos, TSR_CLI_MAX_POSITIONAL, &npos);
    free(av);
    if (s) return tsr_cli_fail(NULL, s);
    if (c.help) {
        tsr_cli_print_help(stdout, name, "IN OUT",
                           solve ? "Restore a scrambled image of square tiles"
                                 : "Cut an image into square tiles and shuffle them",
                           solve ? "Writes the restored image to OUT and the placement to OUT's name with .json "
                                   "as its extension. Up to 9 pieces are solved exactly (every placement scored); "
                                   "larger puzzles by best-buddy greedy placement on MGC compatibilities "
                                   "computed on the GPU when one is usable. Progress goes to stderr for puzzles "
                                   "of 1000 pieces or more. --grid RxC is short for --rows R --cols C."
                                 : "Writes the scrambled image to OUT and the ground truth (the placement that "
                                   "restores it) to OUT's name with .json as its extension. A tile size that does "
                                   "not divide the image crops it to the top-left whole tiles (said on stderr). "
                                   "--grid RxC is short for --rows R --cols C.",
                           params, nparams);
        return 0;
    }
    if (npos != 2) {
        fprintf(stderr, "tessera: %s: expected IN and OUT, got %d file name%s (see 'tessera %s --help')\n", name, npos,
                npos == 1 ? "" : "s", name);
        return TSR_EXIT_USAGE;
    }
    if ((o.rows > 0) != (o.cols > 0))
        return tsr_cli_fail(NULL, tsr__fail(TSR_E_ARG, "%s: give both --rows and --cols (or --grid RxC)", name));
    tsr__pz_json_path(pos[1], jpath, sizeof jpath);
    if (!strcmp(pos[1], "-"))
        return tsr_cli_fail(NULL, tsr__fail(TSR_E_ARG, "%s: OUT must be a file (the JSON goes beside it)", name));
    t0 = tsr_cli_now();
    if ((s = tsr_read(pos[0], &in))) return tsr_cli_fail(name, s);
    if (in.depth != TSR_U8) {
        tsr_image_free(&in);
        return tsr_cli_fail(name, tsr__fail(TSR_E_UNSUPPORTED, "%s: only 8-bit images are supported", pos[0]));
    }
    if ((s = tsr__pz_grid(sub, &o, &in, &view, &rows, &cols))) {
        tsr_image_free(&in);
        return tsr_cli_fail(NULL, s);
    }
    t1 = tsr_cli_now();
    if (solve) {
        tsr_puzzle_options po = {rows, cols, o.rotate, o.method, o.no_repair, NULL, NULL};
        if (rows * cols >= 1000 && !c.quiet) po.progress = tsr__pz_progress;
        if (rows * cols == 1 && !c.quiet) fprintf(stderr, "tessera: puzzle solve: one piece: nothing to solve\n");
        s = tsr_puzzle_solve(&view, &po, &p, &c.exec);
        if (!s) s = tsr_puzzle_render(&view, &p, &out);
    } else {
        s = tsr_puzzle_scramble(&view, &out, rows, cols, o.rotate, (uint64_t)o.seed, &p);
    }
    t2 = tsr_cli_now();
    tsr_image_free(&in);
    if (!s) s = tsr_write_ex(pos[1], &out, c.quality, c.png_level ? c.png_level : TSR_PZ_PNG_LEVEL);
    if (!s) s = tsr__pz_write_json(jpath, &p);
    t3 = tsr_cli_now();
    tsr_image_free(&out);
    tsr_puzzle_placement_free(&p);
    if (s) return tsr_cli_fail(name, s);
    if (solve && !c.quiet) {
        const char *v = tsr_puzzle_last_variant();
        tsr_backend b = TSR_BACKEND_CPU;
        for (int i = 0; tsr_puzzle_variant_name(i, &b, NULL); i++)
            if (!strcmp(tsr_puzzle_variant_name(i, &b, NULL), v)) break;
        if (b == TSR_BACKEND_CUDA)
            fprintf(stderr, "tessera: %s ran on cuda, %s (variant '%s')\n", name, tsr_cuda_device_name(), v);
        else
            fprintf(stderr, "tessera: %s ran on cpu (variant '%s', %d threads)\n", name, v, tsr__exec_threads(&c.exec));
    }
    if (c.time)
        fprintf(stderr, "tessera: %s time: decode %.3f ms, %s %.3f ms, encode %.3f ms\n", name, (t1 - t0) * 1e3, sub,
                (t2 - t1) * 1e3, (t3 - t2) * 1e3);
    return 0;
}

/* Contract: 'tessera puzzle SUB ...' with argv[0] = "puzzle"; returns the exit code. */
int tsr__cmd_puzzle(int argc, char **argv, const tsr_cli_common *global)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        tsr__pz_help(argc < 2 ? stderr : stdout);
        return argc < 2 ? TSR_EXIT_USAGE : 0;
    }
    if (!strcmp(argv[1], "scramble")) return tsr__pz_image_cmd(0, argc - 1, argv + 1, global);
    if (!strcmp(argv[1], "solve")) return tsr__pz_image_cmd(1, argc - 1, argv + 1, global);
    if (!strcmp(argv[1], "score")) return tsr__pz_score(argc - 1, argv + 1, global);
    fprintf(stderr, "tessera: puzzle: unknown subcommand '%s' (scramble, solve or score)\n", argv[1]);
    return TSR_EXIT_USAGE;
}
