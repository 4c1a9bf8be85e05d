/* Scoring a jigsaw solution against the truth: Pomeranz's direct and neighbor accuracy by tile
 * identity (tsr_puzzle_score), and the same with tiles of identical pixels taken as one
 * (tsr_puzzle_score_pixels). */
#include "puzzle_core.h"
#include <stdlib.h>
#include <string.h>

/* For cell c of placement p: the (tile, tile side) across tile side 'side' of the tile in c,
 * encoded tile*4+side, or -1 for the border. Tile sides are in the scrambled tile's own frame;
 * a tile turned r clockwise shows its side s on direction (s + r) & 3. */
static int tsr__pz_across(const tsr_puzzle_placement *p, int c, int side)
{
    int dir = (side + p->rotation[c]) & 3, y = c / p->cols + tsr__pz_dy[dir], x = c % p->cols + tsr__pz_dx[dir], c2;
    if (y < 0 || y >= p->rows || x < 0 || x >= p->cols) return -1;
    c2 = y * p->cols + x;
    return p->piece[c2] * 4 + (((dir + 2) - p->rotation[c2]) & 3);
}

/* The truth's cell that solution cell c corresponds to when the solution is turned 'turns'
 * quarter turns clockwise and shifted by (dr, dc) (tsr_puzzle_scores' convention), or -1 when
 * it falls outside the grid. */
static int tsr__pz_shifted_cell(int R, int C, int c, int turns, int dr, int dc)
{
    int y = c / C, x = c % C, ty, tx;
    switch (turns) {   /* where cell (y, x) lands when the solution turns clockwise */
    case 1: ty = x, tx = R - 1 - y; break;
    case 2: ty = R - 1 - y, tx = C - 1 - x; break;
    case 3: ty = C - 1 - x, tx = y; break;
    default: ty = y, tx = x;
    }
    ty -= dr;
    tx -= dc;
    return ty < 0 || ty >= R || tx < 0 || tx >= C ? -1 : ty * C + tx;
}

tsr_status tsr_puzzle_score(const tsr_puzzle_placement *sol, const tsr_puzzle_placement *truth,
                            tsr_puzzle_scores *out)
{
    tsr_status s;
    int n, R, C, *where_s, *where_t, good = 0, nb = 0;
    tsr_puzzle_scores r;
    if ((s = tsr_puzzle_placement_check(sol)) || (s = tsr_puzzle_placement_check(truth))) return s;
    if (sol->rows != truth->rows || sol->cols != truth->cols)
        return tsr__fail(TSR_E_SIZE, "puzzle: solution grid %dx%d differs from the truth's %dx%d", sol->rows,
                         sol->cols, truth->rows, truth->cols);
    R = sol->rows;
    C = sol->cols;
    n = R * C;
    where_s = malloc(sizeof(int) * n);
    where_t = malloc(sizeof(int) * n);
    if (!where_s || !where_t) {
        free(where_s), free(where_t);
        return tsr__fail(TSR_E_NOMEM, "puzzle: out of memory");
    }
    memset(&r, 0, sizeof r);
    for (int i = 0; i < n; i++) {
        where_s[sol->piece[i]] = i;
        where_t[truth->piece[i]] = i;
        good += sol->piece[i] == truth->piece[i] && sol->rotation[i] == truth->rotation[i];
    }
    r.direct = (double)good / n;
    for (int t = 0; t < n; t++)
        for (int side = 0; side < 4; side++) nb += tsr__pz_across(sol, where_s[t], side) == tsr__pz_across(truth, where_t[t], side);
    r.neighbor = (double)nb / (4.0 * n);
    /* Best shift (and, with rotation, global turn that keeps the grid's shape): each correctly
     * turned tile votes for the shift that would put it in its true cell. */
    {
        int W = 2 * C - 1, H = 2 * R - 1;
        int *votes = malloc(sizeof(int) * (size_t)W * H);
        if (!votes) {
            free(where_s), free(where_t);
            return tsr__fail(TSR_E_NOMEM, "puzzle: out of memory");
        }
        r.direct_shifted = r.direct;
        for (int turns = 0; turns < (sol->rotate || truth->rotate ? 4 : 1); turns++) {
            if ((turns & 1) && R != C) continue;
            memset(votes, 0, sizeof(int) * (size_t)W * H);
            for (int c = 0; c < n; c++) {
                int tc = where_t[sol->piece[c]], at = tsr__pz_shifted_cell(R, C, c, turns, 0, 0);
                if (((sol->rotation[c] + turns) & 3) != truth->rotation[tc]) continue;
                votes[(at / C - tc / C + R - 1) * W + (at % C - tc % C + C - 1)]++;
            }
            for (int k = 0; k < W * H; k++)
                if ((double)votes[k] / n > r.direct_shifted) {
                    r.direct_shifted = (double)votes[k] / n;
                    r.shift_rows = k / W - (R - 1);
                    r.shift_cols = k % W - (C - 1);
                    r.shift_turns = turns;
                }
        }
        free(votes);
    }
    free(where_s), free(where_t);
    *out = r;
    tsr__clear_error();
    return TSR_OK;
}

/* ---------------------------------------------------------------- identical tiles */

/* Pixels of tiles a and b of img (cols tiles a row, P pixels a side) turned ta and tb quarter
 * turns clockwise are the same. */
static int tsr__pz_same_pixels(const tsr_image *img, int cols, int P, int a, int ta, int b, int tb)
{
    int cn = img->channels, ay = a / cols * P, ax = a % cols * P, by = b / cols * P, bx = b % cols * P;
    for (int y = 0; y < P; y++)
        for (int x = 0; x < P; x++) {
            int sy, sx, qy, qx;
            tsr__pz_turned_src(P, ta, y, x, &sy, &sx);
            tsr__pz_turned_src(P, tb, y, x, &qy, &qx);
            if (memcmp((const uint8_t *)tsr__row(img, ay + sy) + (size_t)(ax + sx) * cn,
                       (const uint8_t *)tsr__row(img, by + qy) + (size_t)(bx + qx) * cn, (size_t)cn))
                return 0;
        }
    return 1;
}

/* A hash of tile t's pixels that does not change when the tile turns: the sum of its samples
 * and the sum of their squares (a quick test before tsr__pz_same_pixels). */
static uint64_t tsr__pz_turn_free_hash(const tsr_image *img, int cols, int P, int t)
{
    uint64_t s1 = 0, s2 = 0;
    int cn = img->channels, y0 = t / cols * P, x0 = t % cols * P;
    for (int y = 0; y < P; y++) {
        const uint8_t *row = (const uint8_t *)tsr__row(img, y0 + y) + (size_t)x0 * cn;
        for (int i = 0; i < P * cn; i++) s1 += row[i], s2 += (uint64_t)row[i] * row[i];
    }
    return s1 * 0x9E3779B97F4A7C15ull ^ s2;
}

static int tsr__pz_cmp_key(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : x[1] < y[1] ? -1 : x[1] > y[1];
}

/* Relabel sol so that, wherever a cell (under the truth's correspondence 'turns', dr, dc) shows
 * the same pixels as the truth's cell but through another tile or turn, it holds the truth's
 * tile and turn; the tile it held moves to where the truth's tile was, turned to show the same
 * pixels there. The rendered image does not change. hash: tsr__pz_turn_free_hash per tile. */
static void tsr__pz_relabel(const tsr_image *img, const uint64_t *hash, const tsr_puzzle_placement *truth,
                            tsr_puzzle_placement *sol, int *where_s, int turns, int dr, int dc)
{
    int R = sol->rows, C = sol->cols, n = R * C, P = sol->tile;
    for (int i = 0; i < n; i++) where_s[sol->piece[i]] = i;
    for (int c = 0; c < n; c++) {
        int tc = tsr__pz_shifted_cell(R, C, c, turns, dr, dc), a, ra, b, rb, want, c2;
        if (tc < 0) continue;
        a = sol->piece[c], ra = sol->rotation[c], b = truth->piece[tc], rb = truth->rotation[tc];
        want = (rb - turns) & 3;   /* b's turn in cell c that shows the truth's pixels */
        if ((a == b && ra == want) || hash[a] != hash[b] || !tsr__pz_same_pixels(img, C, P, a, ra + turns, b, rb))
            continue;
        /* a turned k shows what b turned k + rb - ra - turns shows */
        c2 = where_s[b];
        if (c2 != c) {
            sol->piece[c2] = a;
            sol->rotation[c2] = (unsigned char)((sol->rotation[c2] - rb + ra + turns) & 3);
            where_s[a] = c2;
        }
        sol->piece[c] = b;
        sol->rotation[c] = (unsigned char)want;
        where_s[b] = c;
    }
}

tsr_status tsr_puzzle_score_pixels(const tsr_puzzle_placement *sol, const tsr_puzzle_placement *truth,
                                   const tsr_image *scrambled, tsr_puzzle_scores *out)
{
    tsr_status s;
    tsr_puzzle_scores id, r;
    tsr_puzzle_placement re = {0};
    int P, n, twins = 0, *where = NULL, turned = sol->rotate || truth->rotate;
    uint64_t *hash = NULL, *key = NULL;
    if ((s = tsr_puzzle_score(sol, truth, &id))) return s;
    if ((s = tsr__pz_check_image("puzzle", scrambled, sol->rows, sol->cols, &P))) return s;
    if (sol->tile && sol->tile != P)
        return tsr__fail(TSR_E_SIZE, "puzzle: the scrambled image's tiles are %d pixels, the placement's %d", P, sol->tile);
    n = sol->rows * sol->cols;
    if ((s = tsr_puzzle_placement_init(&re, sol->rows, sol->cols, P, turned))) return s;
    hash = malloc(sizeof(uint64_t) * n);
    key = malloc(sizeof(uint64_t) * 2 * n);
    where = malloc(sizeof(int) * n);
    if (!hash || !key || !where) {
        s = tsr__fail(TSR_E_NOMEM, "puzzle: out of memory");
        goto done;
    }
    for (int t = 0; t < n; t++) {
        hash[t] = tsr__pz_turn_free_hash(scrambled, sol->cols, P, t);
        key[2 * t] = hash[t], key[2 * t + 1] = (uint64_t)t;
    }
    /* Tiles with a twin: the same pixels as another tile (in some turn, when turns are unknown). */
    qsort(key, (size_t)n, 2 * sizeof(uint64_t), tsr__pz_cmp_key);
    for (int lo = 0, hi; lo < n; lo = hi) {   /* runs of equal hashes hold every twin */
        for (hi = lo + 1; hi < n && key[2 * hi] == key[2 * lo]; hi++) {}
        for (int i = lo; i < hi; i++) {
            int twin = 0;
            for (int j = lo; j < hi && !twin; j++)
                for (int t = 0; t < (turned ? 4 : 1) && !twin && j != i; t++)
                    twin = tsr__pz_same_pixels(scrambled, sol->cols, P, (int)key[2 * i + 1], 0, (int)key[2 * j + 1], t);
            twins += twin;
        }
    }
    re.cost = sol->cost;
    re.exact = sol->exact;
    /* Correspondences to relabel under: the best by identity (where the solution agrees with the
     * truth by identity it agrees by pixels), and no shift in each turn the grid allows (a
     * picture of mostly identical tiles may have no clear best by identity). Keep the best
     * direct accuracy after shift, then neighbor accuracy. */
    memset(&r, 0, sizeof r);
    r.direct_shifted = -1;
    for (int k = -1; k < 4; k++) {
        tsr_puzzle_scores q;
        int turns = k < 0 ? id.shift_turns : k, dr = k < 0 ? id.shift_rows : 0, dc = k < 0 ? id.shift_cols : 0;
        if (k > 0 && (!turned || ((k & 1) && sol->rows != sol->cols))) continue;
        memcpy(re.piece, sol->piece, sizeof(int) * n);
        memcpy(re.rotation, sol->rotation, (size_t)n);
        tsr__pz_relabel(scrambled, hash, truth, &re, where, turns, dr, dc);
        if ((s = tsr_puzzle_score(&re, truth, &q))) goto done;
        if (q.direct_shifted > r.direct_shifted || (q.direct_shifted == r.direct_shifted && q.neighbor > r.neighbor))
            r = q;
    }
    r.twins = twins;
    *out = r;
    tsr__clear_error();
done:
    free(hash), free(key), free(where);
    tsr_puzzle_placement_free(&re);
    return s;
}
