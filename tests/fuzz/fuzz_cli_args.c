/* libFuzzer target: the CLI's metadata-driven option parser (tsr_cli_parse in src/cli/args.c)
 * with argv vectors built from the input, for every operation's parameters and for the global
 * options main() parses before the command.
 *
 * Input layout: byte 0 picks the parameter table (op index modulo count+1; the extra value is
 * the global table with no parameters, as main.c uses it), byte 1 the number of positional
 * slots (0..8); the rest is split at NUL bytes into at most 64 arguments, each copied into its
 * own allocation so that ASan catches a read past any argument's end.
 *
 * Properties: the status is TSR_OK or TSR_E_ARG; a failure has a non-empty one-line message;
 * on success every positional points into argv and every parameter is within its range. */
#include "../../src/cli/cli.h"
#include "../../src/core/internal.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TSR_FUZZ_MAX_ARGS 64

#ifndef TSR_FUZZ_ENTRY
#define TSR_FUZZ_ENTRY LLVMFuzzerTestOneInput
#endif

static void tsr_fuzz_cli_die(const char *what)
{
    fprintf(stderr, "fuzz: %s (last error: '%s')\n", what, tsr_last_error());
    abort();
}

int TSR_FUZZ_ENTRY(const uint8_t *data, size_t size)
{
    char *argv[TSR_FUZZ_MAX_ARGS + 1];
    const char *pos[TSR_CLI_MAX_POSITIONAL];
    int argc = 1, npos = -1, max_pos, nops = tsr_op_count();
    const tsr_op *op;
    void *values = NULL;
    tsr_cli_common common;
    tsr_status s;
    size_t at = 2;
    if (size < 2) return 0;
    op = data[0] % (nops + 1) < nops ? tsr_op_at(data[0] % (nops + 1)) : NULL;
    max_pos = data[1] % (TSR_CLI_MAX_POSITIONAL + 1);
    argv[0] = strdup(op ? op->name : "tessera");
    while (at < size && argc < TSR_FUZZ_MAX_ARGS) {
        const uint8_t *nul = memchr(data + at, 0, size - at);
        size_t len = nul ? (size_t)(nul - (data + at)) : size - at;
        argv[argc] = malloc(len + 1);
        memcpy(argv[argc], data + at, len);
        argv[argc][len] = 0;
        argc++;
        at += len + 1;
    }
    argv[argc] = NULL;
    if (op) {
        values = malloc(op->params_size);   /* exactly its size: ASan sees any write past it */
        tsr_params_default(op, values);
    }
    memset(&common, 0, sizeof common);
    s = tsr_cli_parse(argv[0], op ? op->params : NULL, op ? op->nparams : 0, values, &common, argc, argv, pos, max_pos,
                      &npos);
    if (!s && op) s = tsr_cli_check_required(op->name, op->params, op->nparams);
    if (!s && op) {
        /* Every value the parser accepted must pass the registry's range check. */
        if (tsr_params_check(op, values)) tsr_fuzz_cli_die("parser accepted a value out of range");
    }
    if (s) {
        const char *m = tsr_last_error();
        if (s != TSR_E_ARG) tsr_fuzz_cli_die("parser returned a status other than TSR_E_ARG");
        if (!m[0] || strchr(m, '\n') || strchr(m, '\r')) tsr_fuzz_cli_die("parser message is empty or not one line");
    } else {
        if (npos < 0 || npos > max_pos) tsr_fuzz_cli_die("positional count out of range");
        for (int i = 0; i < npos; i++) {
            int found = 0;
            for (int k = 1; k < argc; k++) found |= pos[i] == argv[k];
            if (!found) tsr_fuzz_cli_die("positional argument does not point into argv");
        }
        if ((int)common.exec.backend < 0 || common.exec.backend > TSR_BACKEND_CUDA) tsr_fuzz_cli_die("backend out of range");
        if (common.exec.threads < 0 || common.exec.threads > 256) tsr_fuzz_cli_die("threads out of range");
    }
    free(values);
    for (int i = 0; i < argc; i++) free(argv[i]);
    return 0;
}
