/* Runs the registered tests (all, or those whose name contains an argument; an argument
 * "-NAME" leaves out those whose name contains NAME) and prints "N passed, N failed, N skipped"
 * as its last line; exit status 1 if any failed. */
#include "test.h"
#include <stdarg.h>
#include <stdlib.h>

#define TSR_MAX_TESTS 1024

static struct {
    const char *name, *file;
    tsr_test_fn fn;
} tsr_tests[TSR_MAX_TESTS];
static int tsr_ntests, tsr_fails_now, tsr_skipped_now;
static unsigned tsr_rng = 2463534242u;
static const char *tsr_current;

void tsr_test_register(const char *name, tsr_test_fn fn, const char *file)
{
    if (tsr_ntests < TSR_MAX_TESTS) {
        tsr_tests[tsr_ntests].name = name;
        tsr_tests[tsr_ntests].file = file;
        tsr_tests[tsr_ntests++].fn = fn;
    }
}

void tsr_test_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    if (++tsr_fails_now > 10) return;   /* the first ten failures of a test say enough */
    fprintf(stderr, "  FAIL %s (%s:%d): ", tsr_current, file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

void tsr_test_skip(const char *fmt, ...)
{
    va_list ap;
    tsr_skipped_now = 1;
    fprintf(stderr, "  SKIP %s: ", tsr_current);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

int tsr_test_failed(void) { return tsr_fails_now; }

unsigned tsr_test_rand(void)
{
    tsr_rng ^= tsr_rng << 13;
    tsr_rng ^= tsr_rng >> 17;
    tsr_rng ^= tsr_rng << 5;
    return tsr_rng;
}

unsigned char *tsr_test_read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    unsigned char *p = NULL;
    long len;
    if (!f) return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
        p = malloc((size_t)len + 1);
        if (p && fread(p, 1, (size_t)len, f) != (size_t)len) {
            free(p);
            p = NULL;
        }
        *n = (size_t)len;
    }
    fclose(f);
    return p;
}

static int tsr_cmp(const void *a, const void *b)
{
    const char *fa = ((const __typeof__(tsr_tests[0]) *)a)->file, *fb = ((const __typeof__(tsr_tests[0]) *)b)->file;
    int c = strcmp(fa, fb);
    return c ? c : strcmp(((const __typeof__(tsr_tests[0]) *)a)->name, ((const __typeof__(tsr_tests[0]) *)b)->name);
}

int main(int argc, char **argv)
{
    int passed = 0, failed = 0, skipped = 0, verbose = getenv("TSR_TEST_VERBOSE") != NULL;
    qsort(tsr_tests, (size_t)tsr_ntests, sizeof tsr_tests[0], tsr_cmp);
    for (int i = 0; i < tsr_ntests; i++) {
        /* Arguments select tests whose names contain them; "-NAME" leaves such tests out. */
        int run = 1, want = 0, chosen = 0;
        for (int a = 1; a < argc; a++) {
            if (argv[a][0] == '-') {
                if (strstr(tsr_tests[i].name, argv[a] + 1)) run = 0;
            } else {
                want = 1;
                if (strstr(tsr_tests[i].name, argv[a])) chosen = 1;
            }
        }
        if (!run || (want && !chosen)) continue;
        tsr_current = tsr_tests[i].name;
        tsr_fails_now = tsr_skipped_now = 0;
        tsr_rng = 2463534242u + (unsigned)i * 7919u;
        if (verbose) fprintf(stderr, "  run  %s\n", tsr_current);
        tsr_tests[i].fn();
        if (tsr_fails_now) failed++;
        else if (tsr_skipped_now) skipped++;
        else passed++;
    }
    printf("unit: %d passed, %d failed, %d skipped\n", passed, failed, skipped);
    return failed ? 1 : 0;
}
