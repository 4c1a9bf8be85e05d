/* 'tessera deband': y4m streams (files or pipes) through the frame pipe, and still images.
 * Options come from tsr_deband_param_table plus --progress. */
#include "cli.h"
#include "../core/internal.h"
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int tsr__cmd_deband(int argc, char **argv, const tsr_cli_common *global);

/* The command's values: the library's parameters, then the CLI's own. */
typedef struct tsr__deband_cli {
    tsr_deband_params p;
    int progress;
} tsr__deband_cli;

#define TSR__DB_MAXP 32

static const char tsr__deband_help[] =
    "f3kdb's banding reduction with its parameters, defaults and scales (thresholds and grain: 64 = one 8-bit "
    "code value). IN and OUT are YUV4MPEG2 streams (4:2:0, 4:2:2, 4:4:4 or mono, 8 to 16 bits; '-' is "
    "stdin/stdout), e.g. ffmpeg -i in.mkv -f yuv4mpegpipe - | tessera deband - - | ffmpeg -f yuv4mpegpipe -i - "
    "out.mkv; or PNG/JPEG/PNM/BMP images (gray, RGB; each colour channel is debanded as a plane with the Y "
    "threshold and grain-y, alpha is copied). A file OUT is written to a temporary file and renamed when complete; "
    "on stdout, frames already written stay written when a later frame fails. Same seed, same output on every "
    "backend. See docs/deband.md.";

/* Fill 'table' with the library's parameters and --progress; returns the count. */
static int tsr__deband_params(tsr_param *table)
{
    int n = 0;
    for (int i = 0; i < tsr_deband_param_count && n < TSR__DB_MAXP - 1; i++) table[n++] = tsr_deband_param_table[i];
    table[n++] = (tsr_param){"progress", TSR_P_BOOL, "frames and fps on stderr every second (default: when stderr "
                             "is a terminal)", 0, 1, 0, NULL, offsetof(tsr__deband_cli, progress), 0};
    return n;
}

int tsr_cli_is_y4m(const char *path)
{
    char head[9];
    FILE *f;
    size_t n;
    struct stat st;
    if (!strcmp(path, "-")) return 1;
    if (!stat(path, &st) && !S_ISREG(st.st_mode)) return 1;
    if (!(f = fopen(path, "rb"))) return 0;   /* the image reader reports the error */
    n = fread(head, 1, sizeof head, f);
    fclose(f);
    return n == sizeof head && !memcmp(head, "YUV4MPEG2", 9);
}

/* An output stream: stdout, or a temporary file beside 'path' renamed over it by tsr__out_commit. */
typedef struct tsr__out {
    FILE *f;
    char tmp[4096];
    const char *path;
    int slot;       /* tsr__temp_register's slot: a signal mid-stream removes the temporary file */
} tsr__out;

/* Open OUT: stdout for "-", else a temporary file beside it (made 0666 & ~umask). */
static tsr_status tsr__out_open(tsr__out *o, const char *path)
{
    const char *slash = strrchr(path, '/');
    int fd;
    o->path = path;
    o->tmp[0] = 0;
    o->slot = -1;
    if (!strcmp(path, "-")) {
        o->f = stdout;
        return TSR_OK;
    }
    if (snprintf(o->tmp, sizeof o->tmp, "%.*s.tessera-XXXXXX", slash ? (int)(slash - path + 1) : 0, path) >=
        (int)sizeof o->tmp)
        return tsr__fail(TSR_E_ARG, "%s: path too long", path);
    if ((fd = mkstemp(o->tmp)) < 0) return tsr__fail(TSR_E_IO, "%s: cannot create a file beside it: %s", path, strerror(errno));
    o->slot = tsr__temp_register(o->tmp);
    {
        mode_t mask = umask(0);
        umask(mask);
        if (fchmod(fd, 0666 & ~mask)) { /* keep mkstemp's 0600: not fatal */ }
    }
    if (!(o->f = fdopen(fd, "wb"))) {
        int e = errno;
        close(fd);
        unlink(o->tmp);
        tsr__temp_release(o->slot);
        return tsr__fail(TSR_E_IO, "%s: %s", path, strerror(e));
    }
    setvbuf(o->f, NULL, _IOFBF, 1 << 20);
    return TSR_OK;
}

/* Finish the output: flush and rename on success; remove the temporary file otherwise. */
static tsr_status tsr__out_close(tsr__out *o, int ok)
{
    tsr_status s = TSR_OK;
    if (!o->f) return TSR_OK;
    if (o->f == stdout) {
        if (ok && fflush(stdout)) s = tsr__fail(TSR_E_IO, "writing to standard output: %s", strerror(errno));
        o->f = NULL;
        return s;
    }
    if (ok && (fflush(o->f) || fsync(fileno(o->f))))
        s = tsr__fail(TSR_E_IO, "%s: write failed: %s", o->path, strerror(errno));
    if (fclose(o->f) && ok && !s) s = tsr__fail(TSR_E_IO, "%s: %s", o->path, strerror(errno));
    o->f = NULL;
    if (ok && !s && rename(o->tmp, o->path)) s = tsr__fail(TSR_E_IO, "%s: %s", o->path, strerror(errno));
    if (!ok || s) unlink(o->tmp);
    tsr__temp_release(o->slot);
    return s;
}

/* Report which variant ran, in the same words as the filter commands. */
static void tsr__deband_report(const tsr_cli_common *c, const tsr_deband_variant_info *vi, tsr_backend asked)
{
    tsr_variant v;
    memset(&v, 0, sizeof v);
    v.name = vi->name, v.backend = vi->backend, v.help = vi->help;
    tsr_cli_report_backend(c, "deband", &v, asked);
}

/* A finished frame written by a second thread while the main thread reads the next one: the
 * two pipes (in and out) then move bytes at the same time instead of in turn. The frame (the
 * pipe's output slot) stays untouched until tsr__writer_join returns; the writer owns out->f
 * meanwhile. */
typedef struct tsr__writer {
    pthread_t th;
    FILE *f;
    const tsr_frame *frame;
    tsr_status status;
    char msg[256];
    int running;
} tsr__writer;

static void *tsr__writer_main(void *arg)
{
    tsr__writer *w = (tsr__writer *)arg;
    w->status = tsr_y4m_write_frame(w->f, w->frame);
    if (w->status) snprintf(w->msg, sizeof w->msg, "%s", tsr_last_error());
    return NULL;
}

/* Start writing 'frame' to f on the writer thread (or here, if no thread can be started). */
static tsr_status tsr__writer_start(tsr__writer *w, FILE *f, const tsr_frame *frame)
{
    w->f = f, w->frame = frame, w->status = TSR_OK, w->msg[0] = 0;
    if (pthread_create(&w->th, NULL, tsr__writer_main, w)) return tsr_y4m_write_frame(f, frame);
    w->running = 1;
    return TSR_OK;
}

/* Wait for the write started last (if any); its status, with its message made this thread's. */
static tsr_status tsr__writer_join(tsr__writer *w)
{
    if (!w->running) return TSR_OK;
    pthread_join(w->th, NULL);
    w->running = 0;
    if (w->status) tsr__fail(w->status, "%s", w->msg);
    return w->status;
}

/* A y4m stream from IN to OUT through the frame pipe. */
static int tsr__deband_stream(const tsr__deband_cli *o, tsr_cli_common *c, const char *inpath, const char *outpath)
{
    FILE *in = strcmp(inpath, "-") ? fopen(inpath, "rb") : stdin;
    tsr_y4m_info info;
    tsr_deband_pipe *pp = NULL;
    tsr__out out = {0};
    tsr__writer wr = {0};
    tsr_status s;
    int frames = 0, out_bits, show = o->progress || isatty(2);
    double t0 = tsr_cli_now(), last = t0, io_ms = 0;
    tsr_backend asked = c->exec.backend;

    if (!in) {
        tsr__fail(TSR_E_IO, "%s: %s", inpath, strerror(errno));
        return tsr_cli_fail("deband", TSR_E_IO);
    }
    setvbuf(in, NULL, _IOFBF, 1 << 20);
    if ((s = tsr_y4m_read_header(in, strcmp(inpath, "-") ? inpath : "stdin", &info))) goto fail;
    if ((s = tsr_deband_check(&o->p, info.bits))) goto fail;
    out_bits = o->p.output_depth ? o->p.output_depth : info.bits;
    if ((s = tsr_deband_pipe_open(&pp, info.width, info.height, info.chroma, info.bits, &o->p, &c->exec))) goto fail;
    if ((s = tsr__out_open(&out, outpath))) goto fail;
    if ((s = tsr_y4m_write_header(out.f, &info, out_bits))) goto fail;
    for (;;) {
        tsr_frame *slot;
        const tsr_frame *done;
        int eof;
        double a;
        if ((s = tsr_deband_pipe_input(pp, &slot, &done))) goto fail;
        a = tsr_cli_now();
        /* slot (an input frame) and done (an output frame) never share memory */
        if (done && (s = tsr__writer_start(&wr, out.f, done))) goto fail;
        s = tsr_y4m_read_frame(in, &info, slot, frames, &eof);
        {
            tsr_status ws = tsr__writer_join(&wr);   /* before the slot's output is reused */
            if (!s) s = ws;
        }
        if (s) goto fail;
        io_ms += (tsr_cli_now() - a) * 1e3;
        if (eof) break;
        if ((s = tsr_deband_pipe_submit(pp, frames))) goto fail;
        frames++;
        if (show && tsr_cli_now() - last >= 1.0) {
            last = tsr_cli_now();
            fprintf(stderr, "\rtessera: deband: frame %d, %.1f fps ", frames, frames / (last - t0));
        }
    }
    for (;;) {
        const tsr_frame *done;
        if ((s = tsr_deband_pipe_drain(pp, &done))) goto fail;
        if (!done) break;
        if ((s = tsr_y4m_write_frame(out.f, done))) goto fail;
    }
    if ((s = tsr__out_close(&out, 1))) goto fail;
    if (show) fprintf(stderr, "\rtessera: deband: %d frames, %.1f fps\n", frames, frames / (tsr_cli_now() - t0 + 1e-9));
    tsr__deband_report(c, tsr_deband_pipe_variant(pp), asked);
    if (c->time)
        fprintf(stderr, "tessera: deband time: %d frames in %.3f s, kernel %.3f ms/frame, read and write (overlapped) %.3f ms/frame\n",
                frames, tsr_cli_now() - t0, tsr_deband_pipe_kernel_ms(pp) / (frames ? frames : 1),
                io_ms / (frames ? frames : 1));
    tsr_deband_pipe_close(pp);
    if (in != stdin) fclose(in);
    return 0;
fail:
    {
        int rc;
        tsr__writer_join(&wr);   /* never running here; kept so no path can leave it running */
        if (show && frames) fputc('\n', stderr);
        rc = tsr_cli_fail("deband", s);
        tsr__out_close(&out, 0);
        tsr_deband_pipe_close(pp);
        if (in != stdin) fclose(in);
        return rc;
    }
}

/* A still image from IN to OUT. */
static int tsr__deband_picture(const tsr__deband_cli *o, tsr_cli_common *c, const char *inpath, const char *outpath)
{
    tsr_image img = {0}, res = {0};
    tsr_status s;
    const tsr_deband_variant_info *vi;
    tsr_backend asked = c->exec.backend;
    double t0 = tsr_cli_now(), t1, t2;
    if ((s = tsr_read(inpath, &img))) return tsr_cli_fail("deband", s);
    if (!(vi = tsr_deband_choose(&c->exec, TSR_HOST, img.channels >= 3 ? TSR_CHROMA_444 : TSR_CHROMA_MONO))) {
        tsr_image_free(&img);
        return tsr_cli_fail("deband", TSR_E_ARG);
    }
    t1 = tsr_cli_now();
    s = tsr_deband_image(&img, &res, &o->p, &c->exec);
    tsr_image_free(&img);
    t2 = tsr_cli_now();
    if (!s) s = tsr_write(outpath, &res, 0);
    tsr_image_free(&res);
    if (s) return tsr_cli_fail("deband", s);
    tsr__deband_report(c, vi, asked);
    if (c->time)
        fprintf(stderr, "tessera: deband time: decode %.3f ms, deband %.3f ms, encode %.3f ms\n", (t1 - t0) * 1e3,
                (t2 - t1) * 1e3, (tsr_cli_now() - t2) * 1e3);
    return 0;
}

/* The command: parse the options from the parameter table, then stream or image by IN's contents. */
int tsr__cmd_deband(int argc, char **argv, const tsr_cli_common *global)
{
    tsr_cli_common c = *global;
    tsr_param table[TSR__DB_MAXP];
    int n = tsr__deband_params(table), npos = 0;
    const char *pos[TSR_CLI_MAX_POSITIONAL];
    tsr__deband_cli o;
    tsr_status s;

    memset(&o, 0, sizeof o);
    for (int i = 0; i < n; i++) tsr__param_set(&table[i], &o, table[i].def);
    if ((s = tsr_cli_parse("deband", table, n, &o, &c, argc, argv, pos, TSR_CLI_MAX_POSITIONAL, &npos)))
        return tsr_cli_fail(NULL, s);
    if (c.help) {
        tsr_cli_print_help(stdout, "deband", "IN OUT", "Reduce banding (f3kdb-compatible) in y4m video or images",
                           tsr__deband_help, table, n);
        printf("\nvariants (--variant NAME or TSR_VARIANT_DEBAND):\n");
        for (int i = 0; i < tsr_deband_variant_count(); i++) {
            const tsr_deband_variant_info *v = tsr_deband_variant_at(i);
            printf("  %-4s %-10s %-10s %s\n", tsr_backend_name(v->backend), v->name,
                   v->is_reference ? "reference" : v->is_default ? "default" : "", v->help);
        }
        return 0;
    }
    if (npos != 2) {
        fprintf(stderr, "tessera: deband: expected IN and OUT, got %d file name%s (see 'tessera deband --help')\n", npos,
                npos == 1 ? "" : "s");
        return TSR_EXIT_USAGE;
    }
    if ((s = tsr_deband_check(&o.p, 8))) return tsr_cli_fail(NULL, s);
    return tsr_cli_is_y4m(pos[0]) ? tsr__deband_stream(&o, &c, pos[0], pos[1]) : tsr__deband_picture(&o, &c, pos[0], pos[1]);
}
