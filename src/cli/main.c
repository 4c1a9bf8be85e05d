/* tessera's command line: help, list, info, one command per registered operation (options
 * generated from its metadata), and the extra commands of src/cli/commands.c. */
#include "cli.h"
#include "../core/internal.h"
#include "../io/io.h"
#include <signal.h>
#include <stdlib.h>
#include <string.h>

static void tsr__usage(FILE *f)
{
    fprintf(f, "usage: tessera [common options] COMMAND [options] ARGS\n\n"
               "tessera %s: fast image and video processing on NVIDIA GPUs, with a complete CPU path.\n"
               "Results match OpenCV bit for bit; see 'tessera COMMAND --help' for each command.\n\n"
               "filters (IN and OUT are PNG, JPEG, PGM/PPM or BMP files; '-' is stdin/stdout):\n",
            TSR_VERSION);
    for (int i = 0; i < tsr_op_count(); i++) fprintf(f, "  %-10s %s\n", tsr_op_at(i)->name, tsr_op_at(i)->summary);
    fprintf(f, "\nother commands:\n");
    for (int i = 0; tsr_cli_commands[i].name; i++)
        fprintf(f, "  %-10s %s\n", tsr_cli_commands[i].name, tsr_cli_commands[i].summary);
    fprintf(f, "  %-10s %s\n", "list", "operations and their variants per backend");
    fprintf(f, "  %-10s %s\n", "info", "format, size, channels and depth of image files");
    fprintf(f, "  %-10s %s\n", "help", "this text, or 'help COMMAND'");
    fprintf(f, "\ncommon options (before or after the command):\n"
               "  --backend auto|cpu|cuda   where to run (auto: the GPU when one is usable, else the CPU)\n"
               "  --variant NAME            a named implementation of the operation ('tessera list')\n"
               "  --threads N               CPU threads (default: all cores, or TSR_THREADS)\n"
               "  --time                    decode/upload/kernel/download/encode times on stderr\n"
               "  --quiet                   do not report which backend ran\n"
               "  --quality N               JPEG output quality, 1 to 100 (default 95)\n"
               "  --png-level N             PNG output compression, 1 (fastest) to 9 (smallest; default 6)\n"
               "  --version                 print the version\n"
               "\nenvironment: TSR_THREADS, TSR_VARIANT_<OP> (e.g. TSR_VARIANT_BOX=reference),\n"
               "  TSR_MAX_PIXELS (largest image accepted, default 1073741824), TSR_LOG=1 (log choices)\n"
               "\nexit codes: 0 success, 1 i/o, memory or device failure, 2 bad command line or\n"
               "  parameter, 3 corrupt, truncated or oversized input, 4 unsupported request\n"
               "\nexamples:\n"
               "  tessera box --radius 7 photo.png blurred.png\n"
               "  tessera threshold --block 15 --c 5 page.png binary.png\n"
               "  tessera sums --axis rows image.pgm -\n"
               "  tessera --backend cuda --time resize --width 640 --height 360 big.jpg small.png\n");
}

/* ---------------------------------------------------------------- list, info */

static int tsr__cmd_list(void)
{
    printf("CUDA: %s\n", tsr_cuda_compiled() ? (tsr_cuda_available() ? tsr_cuda_device_name()
                                                                       : "compiled in; no usable device")
                                             : "not compiled in (CPU-only build)");
    for (int i = 0; i < tsr_op_count(); i++) {
        const tsr_op *op = tsr_op_at(i);
        printf("\n%s: %s\n", op->name, op->summary);
        for (int k = 0; op->variants[k]; k++) {
            const tsr_variant *v = op->variants[k];
            printf("  %-4s %-12s %-10s %s\n", tsr_backend_name(v->backend), v->name,
                   v->is_reference ? "reference" : v->is_default ? "default" : "", v->help);
        }
    }
    return 0;
}

static int tsr__cmd_info(int argc, char **argv)
{
    int rc = 0;
    if (argc < 2) {
        fprintf(stderr, "tessera: info: name one or more image files (see 'tessera info --help')\n");
        return TSR_EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        printf("usage: tessera info FILE...\n\nPrints each file's format, size, channels and sample depth ('-': standard input).\n");
        return 0;
    }
    for (int i = 1; i < argc; i++) {
        tsr_image img;
        const char *fmt = NULL;
        tsr_status s = tsr__read_format(argv[i], &img, &fmt);
        if (s) {
            rc = tsr_cli_fail("info", s);
            continue;
        }
        printf("%s: %s %dx%d, %d channel%s, %d-bit\n", argv[i], fmt, img.width, img.height, img.channels,
               img.channels == 1 ? "" : "s", (int)img.depth * 8);
        tsr_image_free(&img);
    }
    return rc;
}

/* ---------------------------------------------------------------- filter commands */

struct tsr__sums_text {
    const tsr_image *img;
};

/* One line per sum position; channels separated by spaces. */
static int tsr__emit_sums(FILE *f, void *ctx)
{
    const tsr_image *img = ((struct tsr__sums_text *)ctx)->img;
    for (int y = 0; y < img->height; y++)
        for (int x = 0; x < img->width; x++) {
            for (int c = 0; c < img->channels; c++) {
                const unsigned char *row = tsr__row(img, y);
                size_t i = (size_t)x * img->channels + c;
                unsigned long long v = img->depth == TSR_U32 ? ((const uint32_t *)row)[i] : ((const uint64_t *)row)[i];
                if (fprintf(f, c ? " %llu" : "%llu", v) < 0) return -1;
            }
            if (fputc('\n', f) == EOF) return -1;
        }
    return ferror(f) ? -1 : 0;
}

static int tsr__cmd_op(const tsr_op *op, int argc, char **argv, const tsr_cli_common *global)
{
    tsr_cli_common c = *global;
    const char *pos[TSR_CLI_MAX_POSITIONAL];
    int npos = 0;
    unsigned char params[256];
    tsr_image in = {0}, out = {0}, din = {0}, dout = {0};
    const tsr_variant *v;
    tsr_backend asked;
    double t[6] = {0};
    tsr_status s;

    tsr_params_default(op, params);
    s = tsr_cli_parse(op->name, op->params, op->nparams, params, &c, argc, argv, pos, TSR_CLI_MAX_POSITIONAL, &npos);
    if (s) return tsr_cli_fail(NULL, s);
    if (c.help) {
        tsr_cli_print_help(stdout, op->name, "IN OUT", op->summary, op->help, op->params, op->nparams);
        if (!strcmp(op->name, "sums"))
            printf("\nOUT receives text: one line per column (or row), channels separated by spaces; '-' is stdout.\n");
        return 0;
    }
    if ((s = tsr_cli_check_required(op->name, op->params, op->nparams))) return tsr_cli_fail(NULL, s);
    if (npos != 2) {
        fprintf(stderr, "tessera: %s: expected IN and OUT, got %d file name%s (see 'tessera %s --help')\n", op->name,
                npos, npos == 1 ? "" : "s", op->name);
        return TSR_EXIT_USAGE;
    }
    if ((s = tsr_params_check(op, params))) return tsr_cli_fail(NULL, s);

    t[0] = tsr_cli_now();
    if ((s = tsr_read(pos[0], &in))) return tsr_cli_fail(op->name, s);
    t[1] = tsr_cli_now();
    asked = c.exec.backend;
    v = tsr_choose_variant(op, &c.exec, &in, params);
    if (!v) {   /* tsr_run repeats the choice and fails with its exact status and message */
        s = tsr_run(op, &in, &out, params, &c.exec);
        tsr_image_free(&in);
        tsr_image_free(&out);
        return tsr_cli_fail(NULL, s ? s : TSR_E_ARG);
    }
    s = TSR_OK;
    if (v->backend == TSR_BACKEND_CUDA) {
        /* Upload once, run on device images, download: each stage timed on its own. */
        c.exec.backend = TSR_BACKEND_CUDA;
        s = tsr_image_create(&din, in.width, in.height, in.channels, in.depth, TSR_DEVICE);
        if (!s) s = tsr_image_copy(&in, &din, c.exec.stream);
        if (!s) s = tsr_stream_sync(c.exec.stream);
        t[2] = tsr_cli_now();
        if (!s) s = tsr_run(op, &din, &dout, params, &c.exec);
        if (!s) s = tsr_stream_sync(c.exec.stream);
        t[3] = tsr_cli_now();
        if (!s) s = tsr_image_create(&out, dout.width, dout.height, dout.channels, dout.depth, TSR_HOST);
        if (!s) s = tsr_image_copy(&dout, &out, c.exec.stream);
        if (!s) s = tsr_stream_sync(c.exec.stream);
        t[4] = tsr_cli_now();
        tsr_image_free(&din);
        tsr_image_free(&dout);
        /* Under auto an image too large for the GPU's memory runs on the CPU, and says so. */
        if (s == TSR_E_DEVICE_NOMEM && asked == TSR_BACKEND_AUTO && !c.exec.variant) {
            tsr_image_free(&out);
            if (!c.quiet) fprintf(stderr, "tessera: %s: out of GPU memory, running on the CPU\n", op->name);
            c.exec.backend = TSR_BACKEND_CPU;
            v = tsr_choose_variant(op, &c.exec, &in, params);
            t[1] = tsr_cli_now();
            s = v ? TSR_OK : TSR_E_UNSUPPORTED;
        }
    }
    if (!s && v->backend == TSR_BACKEND_CPU) {
        c.exec.backend = TSR_BACKEND_CPU;
        t[2] = t[1];
        s = tsr_run(op, &in, &out, params, &c.exec);
        t[3] = t[4] = tsr_cli_now();
    }
    tsr_image_free(&in);
    if (s) {
        tsr_image_free(&out);
        return tsr_cli_fail(NULL, s);
    }
    if (out.depth == TSR_U32 || out.depth == TSR_U64) {
        struct tsr__sums_text st = {&out};
        s = tsr_cli_write_text(pos[1], tsr__emit_sums, &st);
    } else {
        s = tsr_write_ex(pos[1], &out, c.quality, c.png_level);
    }
    t[5] = tsr_cli_now();
    tsr_image_free(&out);
    if (s) return tsr_cli_fail(op->name, s);
    tsr_cli_report_backend(&c, op->name, v, asked);
    if (c.time)
        fprintf(stderr, "tessera: %s time: decode %.3f ms, upload %.3f ms, kernel %.3f ms, download %.3f ms, "
                        "encode %.3f ms\n",
                op->name, (t[1] - t[0]) * 1e3, (t[2] - t[1]) * 1e3, (t[3] - t[2]) * 1e3, (t[4] - t[3]) * 1e3,
                (t[5] - t[4]) * 1e3);
    return 0;
}

/* ---------------------------------------------------------------- main */

int main(int argc, char **argv)
{
    tsr_cli_common global;
    int first = 1;
    const char *pos[1];
    int npos = 0;
    memset(&global, 0, sizeof global);
    /* A closed pipe reports as a write error instead of killing the process silently. */
    signal(SIGPIPE, SIG_IGN);
    /* Ctrl-C or a kill while an output is being written removes its temporary file. */
    tsr__install_signal_cleanup();

    /* Common options may come before the command. */
    while (first < argc && argv[first][0] == '-' && strcmp(argv[first], "-")) {
        int take = 1;
        if (!strcmp(argv[first], "--version")) {
            printf("tessera %s (%s)\n", TSR_VERSION, tsr_cuda_compiled() ? "CUDA" : "CPU only");
            return 0;
        }
        if (!strcmp(argv[first], "--help") || !strcmp(argv[first], "-h")) {
            tsr__usage(stdout);
            return 0;
        }
        if (!strcmp(argv[first], "--backend") || !strcmp(argv[first], "--variant") || !strcmp(argv[first], "--threads") ||
            !strcmp(argv[first], "--quality") || !strcmp(argv[first], "--png-level"))
            take = 2;
        if (first + take > argc) {
            fprintf(stderr, "tessera: option %s needs a value\n", argv[first]);
            return TSR_EXIT_USAGE;
        }
        {
            char *sub[3] = {"tessera", argv[first], take == 2 ? argv[first + 1] : NULL};
            tsr_status s = tsr_cli_parse("tessera", NULL, 0, NULL, &global, take + 1, sub, pos, 0, &npos);
            if (s) return tsr_cli_fail(NULL, s);
        }
        first += take;
    }
    if (first >= argc) {
        tsr__usage(stderr);
        return TSR_EXIT_USAGE;
    }
    {
        const char *cmd = argv[first];
        const tsr_op *op = tsr_op_find(cmd);
        if (op) return tsr__cmd_op(op, argc - first, argv + first, &global);
        if (!strcmp(cmd, "help")) {
            if (first + 1 < argc) {
                char *sub[2] = {argv[first + 1], "--help"};
                const tsr_op *hop = tsr_op_find(argv[first + 1]);
                if (hop) return tsr__cmd_op(hop, 2, sub, &global);
                for (int i = 0; tsr_cli_commands[i].name; i++)
                    if (!strcmp(tsr_cli_commands[i].name, argv[first + 1]))
                        return tsr_cli_commands[i].main(2, sub, &global);
                if (!strcmp(argv[first + 1], "info")) return tsr__cmd_info(2, sub);
            }
            tsr__usage(stdout);
            return 0;
        }
        if (!strcmp(cmd, "list")) return tsr__cmd_list();
        if (!strcmp(cmd, "info")) return tsr__cmd_info(argc - first, argv + first);
        for (int i = 0; tsr_cli_commands[i].name; i++)
            if (!strcmp(tsr_cli_commands[i].name, cmd)) return tsr_cli_commands[i].main(argc - first, argv + first, &global);
        {
            tsr_cli_near near = {cmd, NULL, 0};
            static const char *const own[] = {"help", "list", "info"};
            for (int i = 0; i < tsr_op_count(); i++) tsr_cli_near_add(&near, tsr_op_at(i)->name);
            for (int i = 0; tsr_cli_commands[i].name; i++) tsr_cli_near_add(&near, tsr_cli_commands[i].name);
            for (int i = 0; i < 3; i++) tsr_cli_near_add(&near, own[i]);
            fprintf(stderr, "tessera: unknown command '%s'%s (see 'tessera --help')\n", cmd, tsr_cli_near_hint(&near, NULL));
        }
        return TSR_EXIT_USAGE;
    }
}
