/* 'tessera deband': y4m streams (files or pipes) through the frame pipe, and still images.
 * Options come from tsr_deband_param_table plus --progress. */
#include "cli.h"
#include "../core/internal.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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
    int whole_frames;           /* interlaced streams debanded as whole frames, not field by field */
} tsr__deband_cli;

#define TSR__DB_MAXP 32

static const char tsr__deband_help[] =
    "f3kdb's banding reduction with its parameters, defaults and scales (thresholds and grain: 64 = one 8-bit "
    "code value). IN and OUT are YUV4MPEG2 streams (4:2:0, 4:2:2, 4:4:4 or mono, 8 to 16 bits; '-' is "
    "stdin/stdout), e.g. ffmpeg -i in.mkv -f yuv4mpegpipe - | tessera deband - - | ffmpeg -f yuv4mpegpipe -i - "
    "out.mkv; or PNG/JPEG/PNM/BMP images (gray, RGB; each colour channel is debanded as a plane with the Y "
    "threshold and grain-y, alpha is copied). A file OUT is written to a temporary file and renamed when complete; "
    "on stdout, frames already written stay written when a later frame fails. Interlaced streams (It, Ib) are "
    "debanded field by field, so that no reference pixel comes from the other field (--whole-frames: as "
    "progressive frames). Same seed, same output on every backend. See docs/deband.md.";

/* Fill 'table' with the library's parameters and --progress; returns the count. */
static int tsr__deband_params(tsr_param *table)
{
    int n = 0;
    for (int i = 0; i < tsr_deband_param_count && n < TSR__DB_MAXP - 1; i++) table[n++] = tsr_deband_param_table[i];
    table[n++] = (tsr_param){"progress", TSR_P_BOOL, "frames and fps on stderr every second (default: when stderr "
                             "is a terminal)", 0, 1, 0, NULL, offsetof(tsr__deband_cli, progress), 0};
    table[n++] = (tsr_param){"whole-frames", TSR_P_BOOL, "deband interlaced y4m (It, Ib) as whole frames rather than "
                             "each field on its own (for progressive content flagged as interlaced)", 0, 1, 0, NULL,
                             offsetof(tsr__deband_cli, whole_frames), 0};
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

/* Where fd is a pipe, ask Linux for a 1 MiB buffer (TSR_PIPE_SIZE bytes; 0 leaves it): a 4K
 * frame then crosses in 25 reads or writes instead of 400 of the default 64 KiB, and the other
 * end waits less often. Failures (a limit, another system) are ignored. */
static void tsr__pipe_grow(int fd)
{
#ifdef F_SETPIPE_SZ
    struct stat st;
    const char *e = getenv("TSR_PIPE_SIZE");
    long size = e && *e ? atol(e) : 1L << 20;
    if (size > 0 && fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode)) fcntl(fd, F_SETPIPE_SZ, (int)size);
#else
    (void)fd;
#endif
}

/* An output stream: stdout, an existing device or FIFO, or a temporary file beside 'path' renamed
 * over it by tsr__out_close. */
typedef struct tsr__out {
    FILE *f;
    char tmp[4096];
    const char *path;
    int slot;       /* tsr__temp_register's slot: a signal mid-stream removes the temporary file */
} tsr__out;

/* Open OUT: stdout for "-"; an existing OUT that is not a regular file (a device such as
 * /dev/null or /dev/full, a FIFO) in place, since renaming a file over it would replace the
 * device or FIFO itself (as root, even in /dev); else a temporary file beside it (made
 * 0666 & ~umask). */
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
    if (tsr__is_special_file(path)) {   /* a folder fails at the rename */
        if (!(o->f = fopen(path, "wb"))) return tsr__fail(TSR_E_IO, "%s: %s", path, strerror(errno));
        setvbuf(o->f, NULL, _IOFBF, 1 << 20);
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
    if (!o->tmp[0]) {   /* a device or FIFO written in place: nothing to sync, rename or remove */
        if (ok && fflush(o->f)) s = tsr__fail(TSR_E_IO, "%s: write failed: %s", o->path, strerror(errno));
        if (fclose(o->f) && ok && !s) s = tsr__fail(TSR_E_IO, "%s: %s", o->path, strerror(errno));
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

/* A y4m stream on three threads: the reader parses frames into the pipe's slots ahead of the
 * processing, the calling thread runs them through the pipe (CPU: the threaded deband; CUDA:
 * upload, kernels and download queued on the slot's stream), and the writer waits for each output
 * and writes it. Frame n lives in slot n % nslots from its read to the end of its write, so at most
 * nslots frames are in memory and every stage works in frame order. One mutex and one condition
 * variable guard the counters; every change is broadcast (three threads at most, each waiting for
 * one thing, so no wake-up is worth targeting) and nobody spins.
 * The stream ends at 'end': the frame count at a clean end of input, or the first frame that a
 * stage failed on. Every stage stops there, so the frames before a failure are still processed
 * and written (a consumer of stdout gets them all), and the error reported is the earliest
 * frame's, whichever thread found it first.
 * Interlaced streams go through the pipe as fields: unit 2k is frame k's top field (its even
 * rows), unit 2k+1 its bottom field; the reader splits each frame it reads from whole_in, the
 * writer joins the two fields into whole_out and writes it after the second. */
typedef struct tsr__flow {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    tsr_deband_pipe *pp;
    const tsr_y4m_info *info;
    FILE *in, *out;
    int nslots;
    int fields;                 /* 1: units are fields (interlaced), 0: units are frames */
    tsr_frame whole_in, whole_out;   /* host frames of the stream's size, when fields */
    int read, run, written;     /* units (frames or fields) through each stage */
    int end;                    /* INT_MAX until the end is known */
    tsr_status status;          /* why the stream ended at 'end' (TSR_OK: end of input) */
    char msg[512];              /* the failing thread's tsr_last_error() */
    double read_ms, write_ms;   /* each touched by its own thread only, read after the joins */
} tsr__flow;

/* End the stream after frame n-1 with status s (TSR_OK: clean end of input) unless it already
 * ends earlier; s's message is taken from the calling thread. Called with the lock held. */
static void tsr__flow_end(tsr__flow *f, int n, tsr_status s)
{
    if (n >= f->end) return;   /* a failure past the end changes nothing */
    f->end = n;
    f->status = s;
    snprintf(f->msg, sizeof f->msg, "%s", s ? tsr_last_error() : "");
    pthread_cond_broadcast(&f->changed);
}

/* Wait until frame n is ready for a stage (*counter > n, with 'ahead' slots of room: the reader
 * needs frame n - nslots written) or the stream ends before it; 1 when the stage may go on.
 * Called with the lock held. */
static int tsr__flow_wait(tsr__flow *f, int n, const int *counter, int ahead)
{
    while (n < f->end && n >= *counter + ahead) pthread_cond_wait(&f->changed, &f->lock);
    return n < f->end;
}

/* Mark frame n done by a stage: *counter = n + 1, or the stream's end at n when s failed. */
static void tsr__flow_done(tsr__flow *f, int n, int *counter, tsr_status s)
{
    pthread_mutex_lock(&f->lock);
    if (s) tsr__flow_end(f, n, s);
    else if (n < f->end) {
        *counter = n + 1;
        pthread_cond_broadcast(&f->changed);
    }
    pthread_mutex_unlock(&f->lock);
}

/* Copy field 'field' (0: rows 0, 2, 4...) of every plane between a whole frame and a frame of
 * the field's size and the same depth: from the whole frame into the field's (split), or from
 * the field's into the whole frame's rows of that parity (weave). */
static void tsr__field_rows(const tsr_frame *from, tsr_frame *to, int field, int split)
{
    const tsr_frame *half = split ? to : from;
    size_t bps = from->bits > 8 ? 2 : 1;
    for (int p = 0; p < from->nplanes; p++) {
        size_t row = (size_t)tsr_frame_plane_width(half->width, half->chroma, p) * bps;
        int ph = tsr_frame_plane_height(half->height, half->chroma, p);
        for (int y = 0; y < ph; y++) {
            size_t fy = split ? (size_t)(2 * y + field) : (size_t)y, ty = split ? (size_t)y : (size_t)(2 * y + field);
            memcpy((unsigned char *)to->plane[p] + ty * to->stride[p],
                   (const unsigned char *)from->plane[p] + fy * from->stride[p], row);
        }
    }
}

/* Read unit n into its slot: frame n, or (fields) field n & 1 of frame n / 2, which is read
 * from the input when n is even. */
static tsr_status tsr__flow_read_unit(tsr__flow *f, int n, int *eof)
{
    tsr_frame *slot = tsr_deband_pipe_slot(f->pp, n % f->nslots);
    tsr_status s;
    if (!slot) return TSR_E_NOMEM;   /* its buffers, allocated at first use (tsr_last_error() names them) */
    if (!f->fields) return tsr_y4m_read_frame(f->in, f->info, slot, n, eof);
    if (!(n & 1) && ((s = tsr_y4m_read_frame(f->in, f->info, &f->whole_in, n / 2, eof)) || *eof)) return s;
    tsr__field_rows(&f->whole_in, slot, n & 1, 1);
    return TSR_OK;
}

/* Write unit n's output: frame n, or (fields) field n & 1 into whole_out, written after field 1. */
static tsr_status tsr__flow_write_unit(tsr__flow *f, int n, const tsr_frame *done)
{
    if (!f->fields) return tsr_y4m_write_frame(f->out, done);
    tsr__field_rows(done, &f->whole_out, n & 1, 0);
    return n & 1 ? tsr_y4m_write_frame(f->out, &f->whole_out) : TSR_OK;
}

/* The reader: frames into free slots until the end of input, a read error or the stream's end. */
static void *tsr__flow_reader(void *arg)
{
    tsr__flow *f = (tsr__flow *)arg;
    for (int n = 0;; n++) {
        tsr_status s;
        int eof = 0, go;
        double t0;
        pthread_mutex_lock(&f->lock);
        go = tsr__flow_wait(f, n, &f->written, f->nslots);
        pthread_mutex_unlock(&f->lock);
        if (!go) return NULL;
        t0 = tsr_cli_now();
        s = tsr__flow_read_unit(f, n, &eof);
        f->read_ms += (tsr_cli_now() - t0) * 1e3;
        if (eof) {
            pthread_mutex_lock(&f->lock);
            tsr__flow_end(f, n, TSR_OK);
            pthread_mutex_unlock(&f->lock);
            return NULL;
        }
        tsr__flow_done(f, n, &f->read, s);
        if (s) return NULL;
    }
}

/* The writer: each processed frame, waited for, to OUT in order, until the stream's end. */
static void *tsr__flow_writer(void *arg)
{
    tsr__flow *f = (tsr__flow *)arg;
    for (int n = 0;; n++) {
        const tsr_frame *done = NULL;
        tsr_status s;
        int go;
        double t0;
        pthread_mutex_lock(&f->lock);
        go = tsr__flow_wait(f, n, &f->run, 0);
        pthread_mutex_unlock(&f->lock);
        if (!go) return NULL;
        s = tsr_deband_pipe_wait(f->pp, n % f->nslots, &done);
        t0 = tsr_cli_now();
        if (!s) s = tsr__flow_write_unit(f, n, done);
        f->write_ms += (tsr_cli_now() - t0) * 1e3;
        tsr__flow_done(f, n, &f->written, s);
        if (s) return NULL;
    }
}

/* Run the stream's frames from f->in to f->out: reader and writer threads around the processing
 * on this thread. Returns the number of frames (>= 0) when every frame was read, processed and
 * written, else -1 with the earliest failure as this thread's error and *status. All threads
 * have ended when it returns. */
static int tsr__flow_run(tsr__flow *f, int show, double t0, tsr_status *status)
{
    pthread_t reader, writer;
    int e;
    double last = t0;
    if ((e = pthread_create(&writer, NULL, tsr__flow_writer, f))) {
        *status = tsr__fail(TSR_E_NOMEM, "cannot start the writer thread: %s", strerror(e));
        return -1;
    }
    if ((e = pthread_create(&reader, NULL, tsr__flow_reader, f))) {
        pthread_mutex_lock(&f->lock);
        tsr__fail(TSR_E_NOMEM, "cannot start the reader thread: %s", strerror(e));
        tsr__flow_end(f, 0, TSR_E_NOMEM);
        pthread_mutex_unlock(&f->lock);
        pthread_join(writer, NULL);
    } else {
        for (int n = 0;; n++) {
            int go;
            pthread_mutex_lock(&f->lock);
            go = tsr__flow_wait(f, n, &f->read, 0);
            pthread_mutex_unlock(&f->lock);
            if (!go) break;
            tsr__flow_done(f, n, &f->run, tsr_deband_pipe_run(f->pp, n % f->nslots, n));
            if (show && tsr_cli_now() - last >= 1.0) {
                last = tsr_cli_now();
                int k = (n + 1) >> f->fields;   /* frames done */
                fprintf(stderr, "\rtessera: deband: frame %d, %.1f fps ", k, k / (last - t0));
            }
        }
        pthread_join(reader, NULL);
        pthread_join(writer, NULL);
    }
    if ((*status = f->status)) {
        tsr__fail(f->status, "%s", f->msg);
        return -1;
    }
    return f->end >> f->fields;
}

/* A y4m stream from IN to OUT through the frame pipe. */
static int tsr__deband_stream(const tsr__deband_cli *o, tsr_cli_common *c, const char *inpath, const char *outpath)
{
    FILE *in = strcmp(inpath, "-") ? fopen(inpath, "rb") : stdin;
    tsr_y4m_info info;
    tsr_deband_pipe *pp = NULL;
    tsr__out out = {0};
    tsr__flow flow;
    tsr_status s;
    int frames = 0, out_bits, show = o->progress || isatty(2);
    double t0 = tsr_cli_now();
    tsr_backend asked = c->exec.backend;

    memset(&flow, 0, sizeof flow);
    if (!in) {
        tsr__fail(TSR_E_IO, "%s: %s", inpath, strerror(errno));
        return tsr_cli_fail("deband", TSR_E_IO);
    }
    setvbuf(in, NULL, _IOFBF, 1 << 20);
    tsr__pipe_grow(fileno(in));
    if ((s = tsr_y4m_read_header(in, strcmp(inpath, "-") ? inpath : "stdin", &info))) goto fail;
    if ((s = tsr_deband_check(&o->p, info.bits))) goto fail;
    out_bits = o->p.output_depth ? o->p.output_depth : info.bits;
    flow.fields = info.interlace != 'p' && !o->whole_frames;
    if (flow.fields) {
        /* Each field's chroma rows must be the field's own rows: every other row of the plane. */
        int unit = info.chroma == TSR_CHROMA_420 ? 4 : 2;
        if (info.height % unit) {
            s = tsr__fail(TSR_E_UNSUPPORTED, "interlaced y4m (I%c) of height %d: fields need a height that is a multiple "
                          "of %d%s (or --whole-frames)", info.interlace, info.height, unit,
                          unit == 4 ? " for 4:2:0" : "");
            goto fail;
        }
        if ((s = tsr_frame_create(&flow.whole_in, info.width, info.height, info.chroma, info.bits, TSR_HOST)) ||
            (s = tsr_frame_create(&flow.whole_out, info.width, info.height, info.chroma, out_bits, TSR_HOST)))
            goto fail;
    }
    if ((s = tsr_deband_pipe_open(&pp, info.width, info.height >> flow.fields, info.chroma, info.bits, &o->p,
                                  &c->exec)))
        goto fail;
    if ((s = tsr__out_open(&out, outpath))) goto fail;
    tsr__pipe_grow(fileno(out.f));
    if ((s = tsr_y4m_write_header(out.f, &info, out_bits))) goto fail;
    pthread_mutex_init(&flow.lock, NULL);
    pthread_cond_init(&flow.changed, NULL);
    flow.pp = pp, flow.info = &info, flow.in = in, flow.out = out.f;
    flow.nslots = tsr_deband_pipe_slots(pp);
    flow.end = INT_MAX;
    frames = tsr__flow_run(&flow, show, t0, &s);
    pthread_cond_destroy(&flow.changed);
    pthread_mutex_destroy(&flow.lock);
    if (frames < 0) {
        frames = flow.run;   /* for the progress line's newline */
        goto fail;
    }
    if ((s = tsr__out_close(&out, 1))) goto fail;
    if (show) fprintf(stderr, "\rtessera: deband: %d frames, %.1f fps\n", frames, frames / (tsr_cli_now() - t0 + 1e-9));
    tsr__deband_report(c, tsr_deband_pipe_variant(pp), asked);
    if (c->time)
        fprintf(stderr, "tessera: deband time: %d frames in %.3f s, kernel %.3f ms/frame, read %.3f ms/frame and write "
                "%.3f ms/frame (each on its own thread, overlapping the processing)\n",
                frames, tsr_cli_now() - t0, tsr_deband_pipe_kernel_ms(pp) / (frames ? frames : 1),
                flow.read_ms / (frames ? frames : 1), flow.write_ms / (frames ? frames : 1));
    tsr_deband_pipe_close(pp);
    tsr_frame_free(&flow.whole_in);
    tsr_frame_free(&flow.whole_out);
    if (in != stdin) fclose(in);
    return 0;
fail:
    {
        int rc;
        if (show && frames) fputc('\n', stderr);
        rc = tsr_cli_fail("deband", s);
        tsr__out_close(&out, 0);
        tsr_deband_pipe_close(pp);
        tsr_frame_free(&flow.whole_in);
        tsr_frame_free(&flow.whole_out);
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
    t1 = tsr_cli_now();
    /* The run's own status says why no variant fits (a missing GPU is not a usage error); the
     * variant it took is asked for after, for the report. */
    s = tsr_deband_image(&img, &res, &o->p, &c->exec);
    vi = s ? NULL : tsr_deband_choose(&c->exec, TSR_HOST, img.channels >= 3 ? TSR_CHROMA_444 : TSR_CHROMA_MONO);
    tsr_image_free(&img);
    t2 = tsr_cli_now();
    if (!s) s = tsr_write_ex(outpath, &res, c->quality, c->png_level);
    tsr_image_free(&res);
    if (s) return tsr_cli_fail("deband", s);
    if (vi) tsr__deband_report(c, vi, asked);
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
