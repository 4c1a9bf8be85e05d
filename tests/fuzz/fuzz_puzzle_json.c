/* libFuzzer target: the puzzle placement JSON reader (tsr_puzzle_from_json in
 * src/cpu/puzzle_json.c) on arbitrary text, not NUL-terminated (the reader takes a length).
 *
 * Properties: a failure is TSR_E_FORMAT, TSR_E_SIZE, TSR_E_ARG or TSR_E_NOMEM with a non-empty
 * one-line message and the output untouched; a placement that parses passes
 * tsr_puzzle_placement_check, and writing it with tsr_puzzle_to_json and reading that back
 * gives the same placement. */
#include "../../src/core/internal.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef TSR_FUZZ_ENTRY
#define TSR_FUZZ_ENTRY LLVMFuzzerTestOneInput
#endif

static void tsr_fuzz_pz_die(const char *what)
{
    fprintf(stderr, "fuzz: %s (last error: '%s')\n", what, tsr_last_error());
    abort();
}

int TSR_FUZZ_ENTRY(const uint8_t *data, size_t size)
{
    tsr_puzzle_placement p, q;
    char *text = malloc(size ? size : 1), *json = NULL;   /* exactly 'size' bytes: ASan sees overreads */
    tsr_status s;
    if (!text) return 0;
    memcpy(text, data, size);
    memset(&p, 0x5a, sizeof p);
    s = tsr_puzzle_from_json(text, size, &p);
    if (s) {
        const char *m = tsr_last_error();
        if (s != TSR_E_FORMAT && s != TSR_E_SIZE && s != TSR_E_ARG && s != TSR_E_NOMEM)
            tsr_fuzz_pz_die("unexpected status");
        if (!m[0] || strchr(m, '\n') || strchr(m, '\r')) tsr_fuzz_pz_die("message is empty or not one line");
        free(text);
        return 0;
    }
    if (tsr_puzzle_placement_check(&p)) tsr_fuzz_pz_die("parsed placement fails tsr_puzzle_placement_check");
    if (tsr_puzzle_to_json(&p, &json)) tsr_fuzz_pz_die("parsed placement cannot be written");
    memset(&q, 0, sizeof q);
    if (tsr_puzzle_from_json(json, strlen(json), &q)) tsr_fuzz_pz_die("written placement does not parse");
    if (q.rows != p.rows || q.cols != p.cols || q.tile != p.tile || q.rotate != p.rotate || q.exact != p.exact ||
        memcmp(q.piece, p.piece, sizeof *p.piece * (size_t)p.rows * p.cols) ||
        memcmp(q.rotation, p.rotation, (size_t)p.rows * p.cols))
        tsr_fuzz_pz_die("JSON round trip changed the placement");
    free(json);
    tsr_puzzle_placement_free(&p);
    tsr_puzzle_placement_free(&q);
    free(text);
    return 0;
}
