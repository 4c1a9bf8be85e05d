/* The command line: options and help generated from parameter metadata (tsr_param), common
 * options, exit codes, and the table of commands beyond the filter operations. */
#ifndef TSR_CLI_H
#define TSR_CLI_H

#include "tessera.h"
#include <stdio.h>

/* Exit codes (documented in 'tessera --help'). */
enum {
    TSR_EXIT_OK = 0,
    TSR_EXIT_RUNTIME = 1,      /* i/o, memory or device failure */
    TSR_EXIT_USAGE = 2,        /* bad command line or parameter */
    TSR_EXIT_INPUT = 3,        /* corrupt, truncated or oversized input */
    TSR_EXIT_UNSUPPORTED = 4   /* valid request that tessera cannot do */
};

/* Options every command accepts. */
typedef struct tsr_cli_common {
    tsr_exec exec;
    int time;       /* --time: per-stage times on stderr */
    int quiet;      /* --quiet: no backend line */
    int help;       /* --help was given */
    int quality;    /* --quality: JPEG outputs' quality 1..100 (0: the library's 95) */
    int png_level;  /* --png-level: PNG outputs' zlib level 1..9 (0: the library's 6) */
} tsr_cli_common;

#define TSR_CLI_MAX_POSITIONAL 8

/* Parse argv[1..argc) (argv[0] is the command name) into 'values' according to params, common
 * options into *common, and the rest into positional[] (at most max_pos; '-' counts as one).
 * Options: --name V, --name=V; BOOL: --name, --no-name; CHOICE by name. Every value is range
 * checked. Returns TSR_OK or TSR_E_ARG with a message naming the option. */
tsr_status tsr_cli_parse(const char *cmd, const tsr_param *params, int nparams, void *values, tsr_cli_common *common,
                         int argc, char **argv, const char **positional, int max_pos, int *npos);
/* Fail with TSR_E_ARG naming the first required parameter that the last tsr_cli_parse of these
 * params did not see. */
tsr_status tsr_cli_check_required(const char *cmd, const tsr_param *params, int nparams);
/* Print a command's help: usage line, paragraph, parameter table, common options. */
void tsr_cli_print_help(FILE *f, const char *cmd, const char *args, const char *summary, const char *help,
                        const tsr_param *params, int nparams);
/* Print "tessera: CMD: <last error>" to stderr (without CMD when the message starts with it) and
 * return the exit code for s. */
int tsr_cli_fail(const char *cmd, tsr_status s);
int tsr_cli_exit_code(tsr_status s);
/* Monotonic seconds. */
double tsr_cli_now(void);
/* Print the backend line ("tessera: box ran on cpu (variant 'running', 2 threads)") unless quiet. */
void tsr_cli_report_backend(const tsr_cli_common *c, const char *cmd, const tsr_variant *v, tsr_backend asked);
/* Whether a file starts with the y4m signature. stdin ("-"), pipes and other non-regular files
 * count as y4m: peeking would consume bytes that cannot be read again. (src/cli/cmd_deband.c) */
int tsr_cli_is_y4m(const char *path);
/* Write text produced by 'emit' to 'path' atomically (temp file + rename), or stdout for "-". */
tsr_status tsr_cli_write_text(const char *path, int (*emit)(FILE *f, void *ctx), void *ctx);

/* The nearest of a set of names to a mistyped word, for "did you mean" hints: consider each
 * name with tsr_cli_near_add, then read best (NULL when no name is near enough to be a slip: at
 * most 1 edit for words of up to 4 letters, 2 beyond; a swap of neighbours counts as 1). */
typedef struct tsr_cli_near {
    const char *word;
    const char *best;
    int dist;
} tsr_cli_near;
void tsr_cli_near_add(tsr_cli_near *n, const char *name);
/* "; did you mean 'PREFIXBEST'?" when n has a best name, else "" (a static buffer: use at once). */
const char *tsr_cli_near_hint(const tsr_cli_near *n, const char *prefix);

/* Commands beyond the filter operations (deband, puzzle, view...): main(argc, argv, global) with
 * argv[0] the command name and 'global' the common options given before it (start from a copy
 * of it when calling tsr_cli_parse); returns the exit code. */
typedef struct tsr_cli_command {
    const char *name;
    const char *summary;
    int (*main)(int argc, char **argv, const tsr_cli_common *global);
} tsr_cli_command;

extern const tsr_cli_command tsr_cli_commands[];   /* terminated by name NULL (src/cli/commands.c) */

#endif
