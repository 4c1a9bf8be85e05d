/* Placements as JSON, with a small strict reader for this one schema:
 *   {"format": "tessera-puzzle", "version": 1, "rows": R, "cols": C, "tile": T, "rotate": false,
 *    "cost": X, "exact": false, "cells": [[tile, quarter_turns_clockwise], ...]}
 * cells are row-major over the restored image. Unknown keys are skipped (after checking their
 * syntax); rows, cols and cells are required. */
#include "puzzle_core.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *buf;
    size_t len, cap;
    int failed;
} tsr__pz_sb;

/* Append formatted text to a growing buffer; sets b->failed when out of memory. */
static void tsr__pz_sb_printf(tsr__pz_sb *b, const char *fmt, ...) TSR_PRINTF(2, 3);
static void tsr__pz_sb_printf(tsr__pz_sb *b, const char *fmt, ...)
{
    va_list ap;
    int k;
    if (b->failed) return;
    for (;;) {
        va_start(ap, fmt);
        k = vsnprintf(b->buf + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
        if (k < 0) {
            b->failed = 1;
            return;
        }
        if ((size_t)k < b->cap - b->len) break;
        {
            size_t nc = (b->cap + (size_t)k + 1) * 2;
            char *nb = realloc(b->buf, nc);
            if (!nb) {
                b->failed = 1;
                return;
            }
            b->buf = nb;
            b->cap = nc;
        }
    }
    b->len += (size_t)k;
}

/* Contract: see tessera.h. */
tsr_status tsr_puzzle_to_json(const tsr_puzzle_placement *p, char **json)
{
    tsr__pz_sb b = {NULL, 0, 0, 0};
    tsr_status s = tsr_puzzle_placement_check(p);
    if (s) return s;
    b.buf = malloc(1024);
    b.cap = b.buf ? 1024 : 0;
    if (!b.buf) return tsr__fail(TSR_E_NOMEM, "puzzle: out of memory");
    b.buf[0] = 0;
    tsr__pz_sb_printf(&b,
                      "{\n  \"format\": \"tessera-puzzle\",\n  \"version\": 1,\n  \"rows\": %d,\n  \"cols\": %d,\n"
                      "  \"tile\": %d,\n  \"rotate\": %s,\n  \"cost\": %.9g,\n  \"exact\": %s,\n  \"cells\": [",
                      p->rows, p->cols, p->tile, p->rotate ? "true" : "false", p->cost, p->exact ? "true" : "false");
    for (int y = 0; y < p->rows; y++) {
        tsr__pz_sb_printf(&b, "%s\n    ", y ? "," : "");
        for (int x = 0; x < p->cols; x++) {
            int i = y * p->cols + x;
            tsr__pz_sb_printf(&b, "%s[%d, %d]", x ? ", " : "", p->piece[i], p->rotation[i]);
        }
    }
    tsr__pz_sb_printf(&b, "\n  ]\n}\n");
    if (b.failed) {
        free(b.buf);
        return tsr__fail(TSR_E_NOMEM, "puzzle: out of memory writing JSON");
    }
    *json = b.buf;
    return TSR_OK;
}

/* ---------------------------------------------------------------- reader */

typedef struct {
    const char *s;
    size_t len, pos;
    tsr_status err;
} tsr__pz_jr;

/* Fail at the current position with line and column (1-based). */
static tsr_status tsr__pz_jfail(tsr__pz_jr *r, const char *what)
{
    int line = 1, col = 1;
    for (size_t i = 0; i < r->pos && i < r->len; i++) {
        if (r->s[i] == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    if (!r->err) r->err = tsr__fail(TSR_E_FORMAT, "puzzle JSON: line %d, column %d: %s", line, col, what);
    return r->err;
}

/* Skip JSON whitespace; the next byte, or -1 at the end. */
static int tsr__pz_peek(tsr__pz_jr *r)
{
    while (r->pos < r->len && (r->s[r->pos] == ' ' || r->s[r->pos] == '\t' || r->s[r->pos] == '\n' ||
                               r->s[r->pos] == '\r'))
        r->pos++;
    return r->pos < r->len ? (unsigned char)r->s[r->pos] : -1;
}

/* Consume c after whitespace; 1 if it was there. */
static int tsr__pz_eat(tsr__pz_jr *r, int c)
{
    if (tsr__pz_peek(r) != c) return 0;
    r->pos++;
    return 1;
}

/* A string into out (truncated to cap-1 bytes; escapes checked, \u kept as '?'). */
static tsr_status tsr__pz_jstring(tsr__pz_jr *r, char *out, size_t cap)
{
    size_t k = 0;
    if (!tsr__pz_eat(r, '"')) return tsr__pz_jfail(r, "expected a string");
    for (;;) {
        int c;
        if (r->pos >= r->len) return tsr__pz_jfail(r, "unterminated string");
        c = (unsigned char)r->s[r->pos++];
        if (c == '"') break;
        if (c < 0x20) return tsr__pz_jfail(r, "control character in string");
        if (c == '\\') {
            if (r->pos >= r->len) return tsr__pz_jfail(r, "unterminated string");
            c = r->s[r->pos++];
            if (c == 'u') {
                for (int i = 0; i < 4; i++, r->pos++)
                    if (r->pos >= r->len || !strchr("0123456789abcdefABCDEF", r->s[r->pos]) || !r->s[r->pos])
                        return tsr__pz_jfail(r, "bad \\u escape");
                c = '?';
            } else if (!strchr("\"\\/bfnrt", c) || !c) {
                r->pos--;
                return tsr__pz_jfail(r, "bad escape in string");
            }
        }
        if (k + 1 < cap) out[k++] = (char)c;
    }
    if (cap) out[k] = 0;
    return TSR_OK;
}

/* A number by JSON's grammar. */
static tsr_status tsr__pz_jnumber(tsr__pz_jr *r, double *v)
{
    size_t st;
    char tmp[64];
    int c = tsr__pz_peek(r);
    st = r->pos;
    if (c == '-') r->pos++;
    if (r->pos < r->len && r->s[r->pos] == '0') {
        r->pos++;
    } else if (r->pos < r->len && r->s[r->pos] >= '1' && r->s[r->pos] <= '9') {
        while (r->pos < r->len && r->s[r->pos] >= '0' && r->s[r->pos] <= '9') r->pos++;
    } else {
        return tsr__pz_jfail(r, "expected a value");
    }
    if (r->pos < r->len && r->s[r->pos] == '.') {
        r->pos++;
        if (r->pos >= r->len || r->s[r->pos] < '0' || r->s[r->pos] > '9') return tsr__pz_jfail(r, "bad number");
        while (r->pos < r->len && r->s[r->pos] >= '0' && r->s[r->pos] <= '9') r->pos++;
    }
    if (r->pos < r->len && (r->s[r->pos] == 'e' || r->s[r->pos] == 'E')) {
        r->pos++;
        if (r->pos < r->len && (r->s[r->pos] == '+' || r->s[r->pos] == '-')) r->pos++;
        if (r->pos >= r->len || r->s[r->pos] < '0' || r->s[r->pos] > '9') return tsr__pz_jfail(r, "bad number");
        while (r->pos < r->len && r->s[r->pos] >= '0' && r->s[r->pos] <= '9') r->pos++;
    }
    if (r->pos - st >= sizeof tmp) return tsr__pz_jfail(r, "number too long");
    memcpy(tmp, r->s + st, r->pos - st);
    tmp[r->pos - st] = 0;
    *v = strtod(tmp, NULL);
    if (!isfinite(*v)) return tsr__pz_jfail(r, "number out of range");
    return TSR_OK;
}

/* A number that must be an integer in [lo, hi]. */
static tsr_status tsr__pz_jint(tsr__pz_jr *r, int lo, int hi, int *out)
{
    double v;
    tsr_status s = tsr__pz_jnumber(r, &v);
    if (s) return s;
    if (v != floor(v) || v < lo || v > hi) return tsr__pz_jfail(r, "integer out of range");
    *out = (int)v;
    return TSR_OK;
}

/* true or false. */
static tsr_status tsr__pz_jbool(tsr__pz_jr *r, int *out)
{
    tsr__pz_peek(r);
    if (r->len - r->pos >= 4 && !memcmp(r->s + r->pos, "true", 4)) {
        r->pos += 4;
        *out = 1;
    } else if (r->len - r->pos >= 5 && !memcmp(r->s + r->pos, "false", 5)) {
        r->pos += 5;
        *out = 0;
    } else {
        return tsr__pz_jfail(r, "expected true or false");
    }
    return TSR_OK;
}

/* Any value, checked and discarded. */
static tsr_status tsr__pz_jskip(tsr__pz_jr *r, int depth)
{
    int c = tsr__pz_peek(r);
    char tmp[2];
    double v;
    int b;
    if (depth > 64) return tsr__pz_jfail(r, "nested too deeply");
    if (c == '"') return tsr__pz_jstring(r, tmp, sizeof tmp);
    if (c == 't' || c == 'f') return tsr__pz_jbool(r, &b);
    if (c == 'n') {
        if (r->len - r->pos >= 4 && !memcmp(r->s + r->pos, "null", 4)) {
            r->pos += 4;
            return TSR_OK;
        }
        return tsr__pz_jfail(r, "expected a value");
    }
    if (c == '[' || c == '{') {
        int close = c == '[' ? ']' : '}';
        r->pos++;
        if (tsr__pz_eat(r, close)) return TSR_OK;
        for (;;) {
            tsr_status s;
            if (close == '}') {
                if ((s = tsr__pz_jstring(r, tmp, sizeof tmp))) return s;
                if (!tsr__pz_eat(r, ':')) return tsr__pz_jfail(r, "expected ':'");
            }
            if ((s = tsr__pz_jskip(r, depth + 1))) return s;
            if (tsr__pz_eat(r, close)) return TSR_OK;
            if (!tsr__pz_eat(r, ',')) return tsr__pz_jfail(r, close == ']' ? "expected ',' or ']'" : "expected ',' or '}'");
        }
    }
    return tsr__pz_jnumber(r, &v);
}

/* Contract: see tessera.h and the schema at the top of this file. */
tsr_status tsr_puzzle_from_json(const char *json, size_t len, tsr_puzzle_placement *out)
{
    tsr__pz_jr r = {json, len, 0, TSR_OK};
    int rows = -1, cols = -1, tile = 0, rotate = 0, exact = 0, have_cells = 0, ncells = 0, cap = 0;
    double cost = 0;
    int *cells = NULL;   /* pairs */
    tsr_puzzle_placement p;
    tsr_status s = TSR_OK;
    char key[64];
    if (!json) return tsr__fail(TSR_E_ARG, "puzzle JSON: no text");
    if (!tsr__pz_eat(&r, '{')) return tsr__pz_jfail(&r, "expected '{'");
    if (!tsr__pz_eat(&r, '}'))
        for (;;) {
            if ((s = tsr__pz_jstring(&r, key, sizeof key))) goto fail;
            if (!tsr__pz_eat(&r, ':')) {
                s = tsr__pz_jfail(&r, "expected ':'");
                goto fail;
            }
            if (!strcmp(key, "rows")) s = tsr__pz_jint(&r, 1, 1 << 20, &rows);
            else if (!strcmp(key, "cols")) s = tsr__pz_jint(&r, 1, 1 << 20, &cols);
            else if (!strcmp(key, "tile")) s = tsr__pz_jint(&r, 0, 1 << 20, &tile);
            else if (!strcmp(key, "rotate")) s = tsr__pz_jbool(&r, &rotate);
            else if (!strcmp(key, "exact")) s = tsr__pz_jbool(&r, &exact);
            else if (!strcmp(key, "cost")) s = tsr__pz_jnumber(&r, &cost);
            else if (!strcmp(key, "format")) {
                if (!(s = tsr__pz_jstring(&r, key, sizeof key)) && strcmp(key, "tessera-puzzle"))
                    s = tsr__pz_jfail(&r, "\"format\" is not \"tessera-puzzle\"");
            } else if (!strcmp(key, "cells")) {
                have_cells = 1;
                if (!tsr__pz_eat(&r, '[')) {
                    s = tsr__pz_jfail(&r, "\"cells\" must be an array");
                    goto fail;
                }
                if (!tsr__pz_eat(&r, ']'))
                    for (;;) {
                        if (ncells == cap) {
                            int nc = cap ? cap * 2 : 256, *nb;
                            if (nc > (1 << 28)) {
                                s = tsr__pz_jfail(&r, "too many cells");
                                goto fail;
                            }
                            nb = realloc(cells, sizeof(int) * 2 * (size_t)nc);
                            if (!nb) {
                                s = tsr__fail(TSR_E_NOMEM, "puzzle JSON: out of memory");
                                goto fail;
                            }
                            cells = nb;
                            cap = nc;
                        }
                        if (!tsr__pz_eat(&r, '[')) {
                            s = tsr__pz_jfail(&r, "a cell must be [tile, rotation]");
                            goto fail;
                        }
                        if ((s = tsr__pz_jint(&r, 0, (1 << 28) - 1, &cells[2 * ncells]))) goto fail;
                        if (!tsr__pz_eat(&r, ',')) {
                            s = tsr__pz_jfail(&r, "a cell must be [tile, rotation]");
                            goto fail;
                        }
                        if ((s = tsr__pz_jint(&r, 0, 3, &cells[2 * ncells + 1]))) goto fail;
                        if (!tsr__pz_eat(&r, ']')) {
                            s = tsr__pz_jfail(&r, "a cell must be [tile, rotation]");
                            goto fail;
                        }
                        ncells++;
                        if (tsr__pz_eat(&r, ']')) break;
                        if (!tsr__pz_eat(&r, ',')) {
                            s = tsr__pz_jfail(&r, "expected ',' or ']'");
                            goto fail;
                        }
                    }
            } else {
                s = tsr__pz_jskip(&r, 1);
            }
            if (s) goto fail;
            if (tsr__pz_eat(&r, '}')) break;
            if (!tsr__pz_eat(&r, ',')) {
                s = tsr__pz_jfail(&r, "expected ',' or '}'");
                goto fail;
            }
        }
    if (tsr__pz_peek(&r) != -1) {
        s = tsr__pz_jfail(&r, "text after the end of the object");
        goto fail;
    }
    if (rows < 0 || cols < 0 || !have_cells) {
        s = tsr__pz_jfail(&r, rows < 0 ? "missing \"rows\"" : cols < 0 ? "missing \"cols\"" : "missing \"cells\"");
        goto fail;
    }
    if ((long long)rows * cols != ncells) {
        s = tsr__fail(TSR_E_FORMAT, "puzzle JSON: %d cells for a %dx%d grid", ncells, rows, cols);
        goto fail;
    }
    if ((s = tsr_puzzle_placement_init(&p, rows, cols, tile, rotate))) goto fail;
    for (int i = 0; i < ncells; i++) {
        p.piece[i] = cells[2 * i];
        p.rotation[i] = (unsigned char)cells[2 * i + 1];
    }
    p.cost = cost;
    p.exact = exact;
    free(cells);
    if ((s = tsr_puzzle_placement_check(&p))) {
        char msg[256];
        const char *m = tsr_last_error();
        snprintf(msg, sizeof msg, "%s", strncmp(m, "puzzle: ", 8) ? m : m + 8);
        tsr__fail(s, "puzzle JSON: %s", msg);
        tsr_puzzle_placement_free(&p);
        return s;
    }
    *out = p;
    tsr__clear_error();
    return TSR_OK;
fail:
    free(cells);
    return s ? s : TSR_E_FORMAT;
}
