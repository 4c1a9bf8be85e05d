/* Replays tests/fuzz/regressions/<target>/ (inputs that once crashed or misbehaved, kept after
 * the fix) and the seed corpora tests/fuzz/corpus/<target>/ through the very entry points of
 * the fuzz targets, each file in a forked child: the child must return normally (an abort from
 * a property check, a crash or a sanitizer report fails the test, naming the file). The entry
 * points are the fuzz targets' own sources, included here under other names. */
#include "test.h"
#include <dirent.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define TSR_FUZZ_ENTRY tsr_fuzz_png
#define TSR_FUZZ_DECODE tsr__png_read
#include "fuzz/fuzz_decode.h"
#undef TSR_FUZZ_ENTRY
#undef TSR_FUZZ_DECODE
#define TSR_FUZZ_ENTRY tsr_fuzz_jpeg
#define TSR_FUZZ_DECODE tsr__jpeg_read
#include "fuzz/fuzz_decode.h"
#undef TSR_FUZZ_ENTRY
#undef TSR_FUZZ_DECODE
#define TSR_FUZZ_ENTRY tsr_fuzz_pnm
#define TSR_FUZZ_DECODE tsr__pnm_read
#include "fuzz/fuzz_decode.h"
#undef TSR_FUZZ_ENTRY
#undef TSR_FUZZ_DECODE
#define TSR_FUZZ_ENTRY tsr_fuzz_bmp
#define TSR_FUZZ_DECODE tsr__bmp_read
#include "fuzz/fuzz_decode.h"
#undef TSR_FUZZ_ENTRY
#undef TSR_FUZZ_DECODE
#define TSR_FUZZ_ENTRY tsr_fuzz_read
#define TSR_FUZZ_DECODE tsr__decode_mem
#include "fuzz/fuzz_decode.h"
#undef TSR_FUZZ_ENTRY
#undef TSR_FUZZ_DECODE
#define TSR_FUZZ_ENTRY tsr_fuzz_cli_args
#include "fuzz/fuzz_cli_args.c"
#undef TSR_FUZZ_ENTRY
#define TSR_FUZZ_ENTRY tsr_fuzz_y4m
#include "fuzz/fuzz_y4m.c"
#undef TSR_FUZZ_ENTRY
#define TSR_FUZZ_ENTRY tsr_fuzz_puzzle_json
#include "fuzz/fuzz_puzzle_json.c"
#undef TSR_FUZZ_ENTRY

static const struct {
    const char *name;
    int (*entry)(const uint8_t *, size_t);
} fz_targets[] = {
    {"png", tsr_fuzz_png}, {"jpeg", tsr_fuzz_jpeg}, {"pnm", tsr_fuzz_pnm},
    {"bmp", tsr_fuzz_bmp}, {"read", tsr_fuzz_read}, {"cli_args", tsr_fuzz_cli_args},
    {"y4m", tsr_fuzz_y4m}, {"puzzle_json", tsr_fuzz_puzzle_json},
};

/* tests/fuzz, from the working folder (the repository root) or this file's path. */
static int fz_root(char *out, size_t n)
{
    const char *file = __FILE__, *slash = strrchr(file, '/');
    snprintf(out, n, "tests/fuzz");
    if (access(out, R_OK) == 0) return 1;
    if (slash) {
        snprintf(out, n, "%.*s/fuzz", (int)(slash - file), file);
        if (access(out, R_OK) == 0) return 1;
    }
    return 0;
}

/* Run every file of dir through entry, each in a child; returns the number of files run. */
static int fz_replay(const char *dir, int (*entry)(const uint8_t *, size_t))
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int count = 0;
    if (!d) return 0;
    while ((e = readdir(d))) {
        char path[1024];
        size_t n = 0;
        unsigned char *p;
        pid_t pid;
        int st = 0;
        if (e->d_name[0] == '.' || !strcmp(e->d_name, "README")) continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        p = tsr_test_read_file(path, &n);
        CHECK_MSG(p != NULL, "%s: cannot read", path);
        if (!p) continue;
        fflush(NULL);
        pid = fork();
        if (pid == 0) _exit(entry(p, n) == 0 ? 0 : 1);
        CHECK_MSG(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0,
                  "%s: %s %d", path, WIFSIGNALED(st) ? "killed by signal" : "exit status",
                  WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
        free(p);
        count++;
    }
    closedir(d);
    return count;
}

TEST(test_fuzz_regressions_replay)
{
    char root[512], dir[700];
    int total = 0;
    if (!fz_root(root, sizeof root)) SKIP("tests/fuzz not found (run from the repository root)");
    for (size_t t = 0; t < sizeof fz_targets / sizeof fz_targets[0]; t++) {
        int seeds;
        snprintf(dir, sizeof dir, "%s/corpus/%s", root, fz_targets[t].name);
        seeds = fz_replay(dir, fz_targets[t].entry);
        CHECK_MSG(seeds > 0, "%s: no seed corpus", dir);
        snprintf(dir, sizeof dir, "%s/regressions/%s", root, fz_targets[t].name);
        total += seeds + fz_replay(dir, fz_targets[t].entry);
    }
    CHECK(total > 0);
}
