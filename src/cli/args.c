/* Options and help from parameter metadata, shared by every command. */
#include "cli.h"
#include "../core/internal.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#define TSR_CLI_MAX_PARAMS 64

static const char *const tsr__backend_names[] = {"auto", "cpu", "cuda", NULL};
static unsigned char tsr__given[TSR_CLI_MAX_PARAMS];

double tsr_cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int tsr_cli_exit_code(tsr_status s)
{
    if (s == TSR_OK) return TSR_EXIT_OK;
    if (s == TSR_E_ARG) return TSR_EXIT_USAGE;
    if (s == TSR_E_FORMAT || s == TSR_E_SIZE) return TSR_EXIT_INPUT;
    if (s >= TSR_E_UNSUPPORTED) return TSR_EXIT_UNSUPPORTED;
    return TSR_EXIT_RUNTIME;
}

int tsr_cli_fail(const char *cmd, tsr_status s)
{
    const char *m = tsr_last_error();
    size_t n = cmd ? strlen(cmd) : 0;
    if (cmd && !strncmp(m, cmd, n) && m[n] == ':') cmd = NULL;   /* the library named the command already */
    /* options before the command parse under the name 'tessera', which then starts the message */
    fprintf(stderr, "%s%s%s%s\n", !cmd && !strncmp(m, "tessera:", 8) ? "" : "tessera: ", cmd ? cmd : "",
            cmd ? ": " : "", *m ? m : tsr_status_name(s));
    return tsr_cli_exit_code(s);
}

/* Edit distance between a and b (insertions, deletions, substitutions and swaps of neighbours
 * cost 1), or a value above 'limit' once it is certain to exceed it. */
static int tsr__edit_distance(const char *a, const char *b, int limit)
{
    enum { N = 48 };
    int d[3][N + 1], la = (int)strlen(a), lb = (int)strlen(b);
    if (la > N || lb > N || abs(la - lb) > limit) return limit + 1;
    for (int j = 0; j <= lb; j++) d[0][j] = j;
    for (int i = 1; i <= la; i++) {
        int *cur = d[i % 3], *prev = d[(i - 1) % 3], *prev2 = d[(i + 1) % 3], low;
        cur[0] = low = i;
        for (int j = 1; j <= lb; j++) {
            int c = prev[j - 1] + (a[i - 1] != b[j - 1]);
            if (prev[j] + 1 < c) c = prev[j] + 1;
            if (cur[j - 1] + 1 < c) c = cur[j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && prev2[j - 2] + 1 < c) c = prev2[j - 2] + 1;
            cur[j] = c;
            if (c < low) low = c;
        }
        if (low > limit) return limit + 1;
    }
    return d[la % 3][lb];
}

void tsr_cli_near_add(tsr_cli_near *n, const char *name)
{
    int limit = strlen(n->word) <= 4 ? 1 : 2, dist;
    if (!name || !*name) return;
    dist = tsr__edit_distance(n->word, name, limit);
    if (dist <= limit && (!n->best || dist < n->dist)) n->best = name, n->dist = dist;
}

const char *tsr_cli_near_hint(const tsr_cli_near *n, const char *prefix)
{
    static char buf[96];
    if (!n->best) return "";
    snprintf(buf, sizeof buf, "; did you mean '%s%.64s'?", prefix ? prefix : "", n->best);
    return buf;
}

/* Index of 'name' in a NULL-terminated list, or -1. */
static int tsr__choice_index(const char *const *names, const char *name)
{
    for (int i = 0; names[i]; i++)
        if (!strcmp(names[i], name)) return i;
    return -1;
}

static void tsr__choice_list(const char *const *names, char *buf, size_t n)
{
    buf[0] = 0;
    for (int i = 0; names[i]; i++) {
        strncat(buf, names[i], n - strlen(buf) - 1);
        if (names[i + 1]) strncat(buf, "|", n - strlen(buf) - 1);
    }
}

/* Parse a whole-string integer or finite real. */
static int tsr__parse_int(const char *s, long *out)
{
    char *end;
    errno = 0;
    *out = strtol(s, &end, 10);
    return *s && !*end && !errno;
}

static int tsr__parse_real(const char *s, double *out)
{
    char *end;
    errno = 0;
    *out = strtod(s, &end);
    return *s && !*end && !errno && isfinite(*out);
}

/* Set one parameter from its text, checking type and range. */
static tsr_status tsr__set_param(const char *cmd, const tsr_param *p, void *values, const char *text)
{
    double v;
    if (p->type == TSR_P_CHOICE) {
        int i = tsr__choice_index(p->choices, text);
        if (i < 0) {
            char list[256];
            tsr__choice_list(p->choices, list, sizeof list);
            return tsr__fail(TSR_E_ARG, "%s: --%s '%s' is not one of %s", cmd, p->name, text, list);
        }
        v = i;
    } else if (p->type == TSR_P_REAL) {
        if (!tsr__parse_real(text, &v))
            return tsr__fail(TSR_E_ARG, "%s: --%s needs a number, got '%s'", cmd, p->name, text);
    } else {
        long l;
        if (!tsr__parse_int(text, &l))
            return tsr__fail(TSR_E_ARG, "%s: --%s needs an integer, got '%s'", cmd, p->name, text);
        v = (double)l;
    }
    if (!(v >= p->min && v <= p->max)) {
        if (p->type == TSR_P_REAL)
            return tsr__fail(TSR_E_ARG, "%s: --%s %s is out of range [%g, %g]", cmd, p->name, text, p->min, p->max);
        return tsr__fail(TSR_E_ARG, "%s: --%s %s is out of range [%.0f, %.0f]", cmd, p->name, text, p->min, p->max);
    }
    tsr__param_set(p, values, v);
    return TSR_OK;
}

tsr_status tsr_cli_parse(const char *cmd, const tsr_param *params, int nparams, void *values, tsr_cli_common *common,
                         int argc, char **argv, const char **positional, int max_pos, int *npos)
{
    int only_positional = 0;
    *npos = 0;
    memset(tsr__given, 0, sizeof tsr__given);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *eq, *val = NULL;
        char name[64];
        size_t len;
        int k, negated = 0;
        /* "-" is standard input or output, and "-.EXT" standard output in the format of EXT
         * (tsr_write): file names, not options. */
        if (only_positional || a[0] != '-' || !strcmp(a, "-") || a[1] == '.') {
            if (*npos >= max_pos) return tsr__fail(TSR_E_ARG, "%s: unexpected argument '%s'", cmd, a);
            positional[(*npos)++] = a;
            continue;
        }
        if (!strcmp(a, "--")) {
            only_positional = 1;
            continue;
        }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            common->help = 1;
            continue;
        }
        if (a[1] != '-') return tsr__fail(TSR_E_ARG, "%s: unknown option '%s' (see 'tessera %s --help')", cmd, a, cmd);
        a += 2;
        eq = strchr(a, '=');
        len = eq ? (size_t)(eq - a) : strlen(a);
        if (len >= sizeof name) return tsr__fail(TSR_E_ARG, "%s: unknown option '--%.40s...'", cmd, a);
        memcpy(name, a, len);
        name[len] = 0;
        if (eq) val = eq + 1;
#define TSR_NEED_VALUE()                                                                                   \
    do {                                                                                                   \
        if (!val) {                                                                                        \
            if (i + 1 >= argc) return tsr__fail(TSR_E_ARG, "%s: option --%s needs a value", cmd, name);     \
            val = argv[++i];                                                                               \
        }                                                                                                  \
    } while (0)
        /* Common options. */
        if (!strcmp(name, "backend")) {
            TSR_NEED_VALUE();
            k = tsr__choice_index(tsr__backend_names, val);
            if (k < 0) return tsr__fail(TSR_E_ARG, "%s: --backend '%s' is not one of auto|cpu|cuda", cmd, val);
            common->exec.backend = (tsr_backend)k;
            continue;
        }
        if (!strcmp(name, "variant")) {
            TSR_NEED_VALUE();
            common->exec.variant = val;
            continue;
        }
        if (!strcmp(name, "threads")) {
            long n;
            TSR_NEED_VALUE();
            if (!tsr__parse_int(val, &n) || n < 1 || n > 256)
                return tsr__fail(TSR_E_ARG, "%s: --threads needs an integer from 1 to 256, got '%s'", cmd, val);
            common->exec.threads = (int)n;
            continue;
        }
        if (!strcmp(name, "quality") || !strcmp(name, "png-level")) {
            const int q = !strcmp(name, "quality"), hi = q ? 100 : 9;
            long n;
            TSR_NEED_VALUE();
            if (!tsr__parse_int(val, &n) || n < 1 || n > hi)
                return tsr__fail(TSR_E_ARG, "%s: --%s needs an integer from 1 to %d, got '%s'", cmd, name, hi, val);
            *(q ? &common->quality : &common->png_level) = (int)n;
            continue;
        }
        if (!strcmp(name, "time") || !strcmp(name, "quiet")) {
            if (val) return tsr__fail(TSR_E_ARG, "%s: --%s takes no value", cmd, name);
            *(!strcmp(name, "time") ? &common->time : &common->quiet) = 1;
            continue;
        }
        /* The command's own parameters; booleans also as --no-NAME. */
        for (k = 0; k < nparams; k++)
            if (!strcmp(params[k].name, name)) break;
        if (k == nparams && !strncmp(name, "no-", 3)) {
            for (k = 0; k < nparams; k++)
                if (params[k].type == TSR_P_BOOL && !strcmp(params[k].name, name + 3)) break;
            negated = k < nparams;
        }
        if (k == nparams) {
            static const char *const common_names[] = {"backend", "variant", "threads", "time",     "quiet",
                                                       "help",    "quality", "png-level"};
            tsr_cli_near near = {name, NULL, 0};
            for (k = 0; k < (int)(sizeof common_names / sizeof *common_names); k++) tsr_cli_near_add(&near, common_names[k]);
            for (k = 0; k < nparams; k++) tsr_cli_near_add(&near, params[k].name);
            return tsr__fail(TSR_E_ARG, "%s: unknown option '--%s'%s (see 'tessera %s --help')", cmd, name,
                             tsr_cli_near_hint(&near, "--"), cmd);
        }
        if (params[k].type == TSR_P_BOOL) {
            if (negated && val) return tsr__fail(TSR_E_ARG, "%s: --%s takes no value", cmd, name);
            tsr__param_set(&params[k], values, negated ? 0 : 1);
            if (val) {
                tsr_status s = tsr__set_param(cmd, &params[k], values, val);
                if (s) return s;
            }
        } else {
            tsr_status s;
            TSR_NEED_VALUE();
            if ((s = tsr__set_param(cmd, &params[k], values, val))) return s;
        }
        if (k < TSR_CLI_MAX_PARAMS) tsr__given[k] = 1;
#undef TSR_NEED_VALUE
    }
    /* --threads also bounds the library's work that takes no exec (the PNG encoder's threads) */
    if (common->exec.threads > 0) tsr_set_threads(common->exec.threads);
    return TSR_OK;
}

tsr_status tsr_cli_check_required(const char *cmd, const tsr_param *params, int nparams)
{
    for (int k = 0; k < nparams && k < TSR_CLI_MAX_PARAMS; k++)
        if (params[k].required && !tsr__given[k])
            return tsr__fail(TSR_E_ARG, "%s: --%s is required (see 'tessera %s --help')", cmd, params[k].name, cmd);
    return TSR_OK;
}

/* Print text wrapped at 78 columns with the given indent. */
static void tsr__wrap(FILE *f, const char *text, int indent, int first_col)
{
    int col = first_col;
    const char *w = text;
    while (*w) {
        const char *e = w;
        while (*e && *e != ' ') e++;
        if (col > indent && col + (e - w) + 1 > 78) {
            fprintf(f, "\n%*s", indent, "");
            col = indent;
        } else if (col > indent) {
            fputc(' ', f);
            col++;
        }
        fprintf(f, "%.*s", (int)(e - w), w);
        col += (int)(e - w);
        w = *e ? e + 1 : e;
    }
    fputc('\n', f);
}

void tsr_cli_print_help(FILE *f, const char *cmd, const char *args, const char *summary, const char *help,
                        const tsr_param *params, int nparams)
{
    fprintf(f, "usage: tessera %s%s %s\n\n", cmd, nparams ? " [options]" : "", args);
    if (summary) fprintf(f, "%s.\n", summary);
    if (help) tsr__wrap(f, help, 0, 0);
    if (nparams) fprintf(f, "\noptions:\n");
    for (int i = 0; i < nparams; i++) {
        const tsr_param *p = &params[i];
        char left[256], extra[256];
        switch (p->type) {
        case TSR_P_BOOL:
            snprintf(left, sizeof left, "  --%s", p->name);
            if (p->def) snprintf(extra, sizeof extra, "(on by default; --no-%s turns it off)", p->name);
            else snprintf(extra, sizeof extra, "(flag)");
            break;
        case TSR_P_CHOICE: {
            char list[200];
            tsr__choice_list(p->choices, list, sizeof list);
            snprintf(left, sizeof left, "  --%s %s", p->name, list);
            snprintf(extra, sizeof extra, "(default %s)", p->choices[(int)p->def]);
            break;
        }
        case TSR_P_REAL:
            snprintf(left, sizeof left, "  --%s X", p->name);
            if (p->required) snprintf(extra, sizeof extra, "(required, real)");
            else snprintf(extra, sizeof extra, "(%g to %g, default %g)", p->min, p->max, p->def);
            break;
        default:
            snprintf(left, sizeof left, "  --%s N", p->name);
            if (p->required) snprintf(extra, sizeof extra, "(required, %.0f to %.0f)", p->min, p->max);
            else snprintf(extra, sizeof extra, "(%.0f to %.0f, default %.0f)", p->min, p->max, p->def);
        }
        fprintf(f, "%-26s", left);
        if (strlen(left) >= 26) fprintf(f, "\n%26s", "");
        {
            char line[512];
            snprintf(line, sizeof line, "%s %s", p->help, extra);
            tsr__wrap(f, line, 26, 26);
        }
    }
    fprintf(f, "\ncommon options:\n"
               "  --backend auto|cpu|cuda   where to run (default auto: the GPU when one is usable)\n"
               "  --variant NAME            a named implementation (see 'tessera list')\n"
               "  --threads N               CPU threads (default: all cores, or TSR_THREADS)\n"
               "  --time                    time per stage on stderr\n"
               "  --quiet                   do not report the backend that ran\n"
               "  --quality N               JPEG output quality, 1 to 100 (default 95)\n"
               "  --png-level N             PNG output compression, 1 (fastest) to 9 (smallest;\n"
               "                            default 6); the pixels are the same at every level\n"
               "  -h, --help                this help\n");
}

void tsr_cli_report_backend(const tsr_cli_common *c, const char *cmd, const tsr_variant *v, tsr_backend asked)
{
    int n = tsr__exec_threads(&c->exec);
    if (c->quiet || !v) return;
    if (v->backend == TSR_BACKEND_CUDA)
        fprintf(stderr, "tessera: %s ran on cuda, %s (variant '%s')\n", cmd, tsr_cuda_device_name(), v->name);
    else if (asked == TSR_BACKEND_AUTO && !tsr_cuda_available())
        fprintf(stderr, "tessera: %s ran on cpu (variant '%s', %d thread%s): no usable GPU, %s\n", cmd, v->name, n,
                n == 1 ? "" : "s", tsr_cuda_device_name());
    else
        fprintf(stderr, "tessera: %s ran on cpu (variant '%s', %d thread%s)\n", cmd, v->name, n, n == 1 ? "" : "s");
}

tsr_status tsr_cli_write_text(const char *path, int (*emit)(FILE *f, void *ctx), void *ctx)
{
    char tmp[4096];
    const char *slash;
    int fd, slot;
    FILE *f;
    if (!strcmp(path, "-")) {
        if (emit(stdout, ctx) || fflush(stdout))
            return tsr__fail(TSR_E_IO, "writing to standard output: %s", strerror(errno));
        return TSR_OK;
    }
    if (tsr__is_special_file(path)) {   /* a device or FIFO: in place (see tsr__is_special_file) */
        int e = 0;
        if (!(f = fopen(path, "w"))) return tsr__fail(TSR_E_IO, "%s: cannot open: %s", path, strerror(errno));
        if (emit(f, ctx) || fflush(f)) e = errno;
        if (fclose(f) && !e) e = errno;
        if (e) return tsr__fail(TSR_E_IO, "%s: write failed: %s", path, strerror(e));
        return TSR_OK;
    }
    slash = strrchr(path, '/');
    if (snprintf(tmp, sizeof tmp, "%.*s.tessera-XXXXXX", slash ? (int)(slash - path + 1) : 0, path) >= (int)sizeof tmp)
        return tsr__fail(TSR_E_ARG, "%s: path too long", path);
    fd = mkstemp(tmp);
    if (fd < 0) return tsr__fail(TSR_E_IO, "%s: cannot create a file beside it: %s", path, strerror(errno));
    slot = tsr__temp_register(tmp);   /* removed by the signal handler if we are stopped */
    {   /* mkstemp makes 0600: give the result the usual permissions */
        mode_t mask = umask(0);
        umask(mask);
        fchmod(fd, 0666 & ~mask);
    }
    f = fdopen(fd, "w");
    if (!f) {
        int e = errno;
        close(fd);
        unlink(tmp);
        tsr__temp_release(slot);
        return tsr__fail(TSR_E_IO, "%s: %s", path, strerror(e));
    }
    if (emit(f, ctx) || fflush(f) || fsync(fileno(f))) {
        int e = errno;
        fclose(f);
        unlink(tmp);
        tsr__temp_release(slot);
        return tsr__fail(TSR_E_IO, "%s: write failed: %s", path, strerror(e));
    }
    if (fclose(f) || rename(tmp, path)) {
        int e = errno;
        unlink(tmp);
        tsr__temp_release(slot);
        return tsr__fail(TSR_E_IO, "%s: %s", path, strerror(e));
    }
    tsr__temp_release(slot);
    return TSR_OK;
}
