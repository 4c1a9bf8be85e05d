/* Refinement of a full placement: the objective (normalised, capped dissimilarities of adjacent
 * sides), and a local search that lowers it with four kinds of move: swap two pieces or two
 * blocks of up to 2 x 2, turn a piece (rotation puzzles), and shift a segment of confidently
 * joined pieces, the pieces in its way sliding round it into the cells it leaves; on request a
 * fifth, rolls of rectangles by one cell (tsr__pz_ls_rolls). */
#include "puzzle_core.h"
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* One hopeless side (a flat edge next to texture) counts at most this many "second-best" units:
 * the raw sum of D let a few such sides outweigh hundreds of good ones. */
#define TSR_PZ_CAP 3.0f
/* Largest block side of the block swaps: larger blocks cost more and gained nothing on the
 * benchmark photos. */
#define TSR_PZ_BLOCK 2
/* Partners tried per cell and side in the swaps: on the benchmark photos the first 2 or 4 did
 * as well as all 16 listed, at a fraction of the time. */
#define TSR_PZ_TRY 4
#define TSR_PZ_SWEEPS 20
/* Segments for shifting are joined by edges below this objective (D under the geometric mean of
 * the two sides' second-best values). */
#define TSR_PZ_SEG_EDGE 1.0f

typedef struct {
    uint64_t key;   /* pair key + 1; 0: empty */
    float val;
} tsr__pz_slot;

struct tsr__pz_cache {
    const tsr__pz *pz;
    float *nrm;           /* per oriented tile and side: sqrt of its second-best D */
    float *dense;         /* small puzzles: every pair's term, NaN until computed */
    tsr__pz_slot *slot;   /* larger ones: direct-mapped cache */
    size_t mask;
};

/* Normalisers of the objective: per oriented tile and side, sqrt of its second-best D (nrm has
 * m x 4 entries). */
static void tsr__pz_norms(const tsr__pz *pz, float *nrm)
{
    for (int o = 0; o < pz->m; o++)
        for (int d = 0; d < 4; d++) nrm[o * 4 + d] = sqrtf(tsr__pz_second(pz, o, d));
}

/* The objective's term from D of o2 on side d of o1 (d = 1 or 2): D over the geometric mean of
 * the two sides' second-best D, capped. The one definition for the per-thread caches and the
 * shared table, which must hold the same values. */
static inline float tsr__pz_norm_term(float D, const float *nrm, int o1, int d, int o2)
{
    float v = D / (nrm[o1 * 4 + d] * nrm[o2 * 4 + ((d + 2) & 3)]);
    return v < TSR_PZ_CAP ? v : TSR_PZ_CAP;   /* NaN too */
}

/* Contract: see puzzle_core.h. */
tsr__pz_cache *tsr__pz_cache_new(const tsr__pz *pz)
{
    tsr__pz_cache *c = calloc(1, sizeof *c);
    size_t want = 1024;
    if (!c) return NULL;
    c->pz = pz;
    c->nrm = malloc(sizeof(float) * pz->m * 4);
    if (!c->nrm) {
        free(c);
        return NULL;
    }
    tsr__pz_norms(pz, c->nrm);
    /* With pz->dmat a term is read from the shared table pz->term (tsr__pz_terms), or costs a
     * few loads (tsr__pz_lookup_tab, inlined) and a division, as fast as a cached one, so there
     * is no cache: the 4 MB cache, faulted in again by each start
     * (with TLB shootdowns when threads run), cost more than it saved (rotation, 432 pieces, 2
     * threads: a quarter less CPU time without it), and the table below, filled by each start,
     * saved nothing. Without pz->dmat: every pair of a puzzle of up to 1024 oriented tiles in a
     * table (at most 8 MB), else a cache of 256K entries (4 MB: larger ones, which each start
     * clears, were slower); without either the search is only slower. */
    if (pz->dmat) {
        /* no cache */
    } else if ((size_t)pz->m * pz->m * 2 <= ((size_t)1 << 21)) {
        size_t cnt = (size_t)pz->m * pz->m * 2;
        c->dense = malloc(cnt * sizeof(float));
        if (c->dense)
            for (size_t i = 0; i < cnt; i++) c->dense[i] = NAN;
    } else {
        while (want < (size_t)pz->m * pz->m * 2 && want < ((size_t)1 << 18)) want *= 2;
        c->slot = calloc(want, sizeof(tsr__pz_slot));
        c->mask = want - 1;
    }
    return c;
}

/* Contract: see puzzle_core.h. */
void tsr__pz_cache_free(tsr__pz_cache *c)
{
    if (!c) return;
    free(c->nrm), free(c->dense), free(c->slot), free(c);
}

/* Objective of o2 on side d of o1: D over the geometric mean of the two sides' second-best D,
 * capped. The search asks for the same pairs again and again, most outside the neighbour lists
 * (a dot product each without pz->dmat), so values are cached then; a cached value is the value
 * computed. */
static float tsr__pz_edge_slow(tsr__pz_cache *c, int o1, int d, int o2, uint64_t key);

static inline float tsr__pz_edge(tsr__pz_cache *c, int o1, int d, int o2)
{
    uint64_t key = tsr__pz_term_key(c->pz, o1, d, o2);
    if (c->pz->term) return c->pz->term[key];   /* the common case, inlined into the searches' loops */
    if (d == 0 || d == 3) {   /* as keyed: o2 right of, or below, o1 */
        int t = o1;
        o1 = o2, o2 = t, d = (d + 2) & 3;
    }
    return tsr__pz_edge_slow(c, o1, d, o2, key);
}

/* tsr__pz_edge without the table: o1, d, o2 as keyed (d 1 or 2). */
static float tsr__pz_edge_slow(tsr__pz_cache *c, int o1, int d, int o2, uint64_t key)
{
    size_t at = 0;
    float v;
    if (c->dense) {
        if (c->dense[key] == c->dense[key]) return c->dense[key];   /* not NaN: known */
    } else if (c->slot) {
        at = (size_t)(((key + 1) * 0x9E3779B97F4A7C15ull) >> 20) & c->mask;
        if (c->slot[at].key == key + 1) return c->slot[at].val;
    }
    v = tsr__pz_norm_term(c->pz->dmat ? tsr__pz_lookup_tab(c->pz, o1, d, o2) : tsr__pz_lookup(c->pz, o1, d, o2),
                          c->nrm, o1, d, o2);
    if (c->dense) {
        c->dense[key] = v;
    } else if (c->slot) {
        c->slot[at].key = key + 1;
        c->slot[at].val = v;
    }
    return v;
}

/* Contract: see puzzle_core.h. */
float tsr__pz_term(tsr__pz_cache *c, int o1, int d, int o2) { return tsr__pz_edge(c, o1, d, o2); }

struct tsr__pz_terms_job {
    const tsr__pz *pz;
    const float *nrm;
    float *term;
};

/* Rows o1 in [b, e) of both relations (tsr__pz_edge's keys). */
static void tsr__pz_terms_range(void *ctx, int b, int e)
{
    const struct tsr__pz_terms_job *j = ctx;
    const tsr__pz *pz = j->pz;
    size_t m = (size_t)pz->m;
    for (int o1 = b; o1 < e; o1++)
        for (int r = 0; r < 2; r++) {
            int d = r ? 2 : 1;
            float *row = j->term + ((size_t)o1 * 2 + (size_t)r) * m;
            for (int o2 = 0; o2 < (int)m; o2++)
                row[o2] = tsr__pz_norm_term(tsr__pz_lookup_tab(pz, o1, d, o2), j->nrm, o1, d, o2);
        }
}

/* Contract: see puzzle_core.h. The placement's searches spend much of their time on terms: with
 * the table each is one load, against a few loads and a division (measured: 34% of a hard
 * puzzle's placement in tsr__pz_edge). The chains run side by side and share it. */
tsr_status tsr__pz_terms(tsr__pz *pz, int threads)
{
    size_t m = (size_t)pz->m;
    struct tsr__pz_terms_job j;
    float *nrm;
    free(pz->term);
    pz->term = NULL;
    if (!pz->dmat || m == 0 || m * m * 2 > TSR_PZ_TERM_BYTES / sizeof(float)) return TSR_OK;
    nrm = malloc(sizeof(float) * m * 4);
    pz->term = malloc(sizeof(float) * m * m * 2);
    if (!nrm || !pz->term) {   /* without it, only slower */
        free(nrm), free(pz->term);
        pz->term = NULL;
        return TSR_OK;
    }
    tsr__pz_norms(pz, nrm);
    j.pz = pz, j.nrm = nrm, j.term = pz->term;
    tsr__parallel_for((int)m, 16, threads, tsr__pz_terms_range, &j);
    free(nrm);
    return TSR_OK;
}

/* Oriented tile of cell i of a placement. */
static inline int tsr__pz_cell(const tsr__pz *pz, const int *piece, const unsigned char *rot, int i)
{
    return pz->rotate ? piece[i] * 4 + rot[i] : piece[i];
}

/* Contract: see puzzle_core.h. */
double tsr__pz_objective(const tsr__pz *pz, tsr__pz_cache *c, const int *piece, const unsigned char *rot)
{
    double t = 0;
    for (int y = 0; y < pz->rows; y++)
        for (int x = 0; x < pz->cols; x++) {
            int i = y * pz->cols + x, o = tsr__pz_cell(pz, piece, rot, i);
            if (x + 1 < pz->cols) t += tsr__pz_edge(c, o, 1, tsr__pz_cell(pz, piece, rot, i + 1));
            if (y + 1 < pz->rows) t += tsr__pz_edge(c, o, 2, tsr__pz_cell(pz, piece, rot, i + pz->cols));
        }
    return t;
}

/* Contract: see puzzle_core.h. */
int tsr__pz_confident(const tsr__pz *pz, tsr__pz_cache *c, const int *piece, const unsigned char *rot, float thr,
                      int *gy, int *gx, int *go)
{
    int k = 0;
    for (int y = 0; y < pz->rows; y++)
        for (int x = 0; x < pz->cols; x++) {
            int i = y * pz->cols + x, o = tsr__pz_cell(pz, piece, rot, i), ok = 1;
            for (int d = 0; d < 4 && ok; d++) {
                int ny = y + tsr__pz_dy[d], nx = x + tsr__pz_dx[d];
                if (ny < 0 || ny >= pz->rows || nx < 0 || nx >= pz->cols) continue;
                ok = tsr__pz_edge(c, o, d, tsr__pz_cell(pz, piece, rot, ny * pz->cols + nx)) < thr;
            }
            if (ok) {
                gy[k] = y, gx[k] = x, go[k++] = o;
            }
        }
    return k;
}

typedef struct {
    const tsr__pz *pz;
    tsr__pz_cache *cache;
    int R, C, n;
    int *o, *pos;             /* oriented tile per cell, cell per piece */
    int *nov, *stamp, cur;    /* a proposal: cell -> new tile where stamp[cell] == cur */
    int *chg, nchg;           /* cells the proposal changes */
    unsigned char *dirty;     /* cells changed (or next to a change) since their last visit */
    unsigned char *touched;   /* cells dirty at the start of this sweep or changed during it */
    int *seg, *segcells, *segstart, nseg;   /* segments: id per cell, cells by segment */
    int *queue;               /* scratch: search queue, offsets tried */
    int *nbr;                 /* per cell and direction: the neighbouring cell, or -1 at the border */
    float *term;              /* per cell and direction: the objective's term of that side now */
} tsr__pz_ls;

/* Tile in a cell under the proposal. */
static inline int tsr__pz_ls_at(const tsr__pz_ls *b, int c) { return b->stamp[c] == b->cur ? b->nov[c] : b->o[c]; }

/* Add "cell c gets tile o" to the proposal. */
static void tsr__pz_ls_put(tsr__pz_ls *b, int c, int o)
{
    if (b->stamp[c] != b->cur) {
        b->stamp[c] = b->cur;
        b->chg[b->nchg++] = c;
    }
    b->nov[c] = o;
}

/* Sum of the objective over the edges that touch changed cells, as they are (after = 0, from
 * the terms kept per cell: the same values) or under the proposal; stops early once it exceeds
 * 'limit'. */
static double tsr__pz_ls_sum(const tsr__pz_ls *b, int after, double limit)
{
    double s = 0;
    for (int i = 0; i < b->nchg; i++) {
        int c = b->chg[i];
        for (int d = 0; d < 4; d++) {
            int c2 = b->nbr[c * 4 + d];
            if (c2 < 0 || (b->stamp[c2] == b->cur && c2 < c)) continue;   /* border; counted from the other cell */
            s += after ? tsr__pz_edge(b->cache, tsr__pz_ls_at(b, c), d, tsr__pz_ls_at(b, c2)) : b->term[c * 4 + d];
        }
        if (s > limit) return s;
    }
    return s;
}

/* The terms of cell c's sides as the placement is now, in c's entries and its neighbours'
 * (an edge's term is the same from either side: tsr__pz_edge takes each pair one way). */
static void tsr__pz_ls_terms(tsr__pz_ls *b, int c)
{
    for (int d = 0; d < 4; d++) {
        int c2 = b->nbr[c * 4 + d];
        if (c2 < 0) continue;
        b->term[c * 4 + d] = b->term[c2 * 4 + ((d + 2) & 3)] = tsr__pz_edge(b->cache, b->o[c], d, b->o[c2]);
    }
}

/* Apply the proposal when it lowers the objective (by more than rounding); always closes it.
 * Returns 1 when applied. */
static int tsr__pz_ls_commit(tsr__pz_ls *b)
{
    double before = tsr__pz_ls_sum(b, 0, INFINITY), lim = before - 1e-5 * (1 + before);
    int ok = b->nchg > 0 && tsr__pz_ls_sum(b, 1, lim) < lim;
    if (ok) {
        for (int i = 0; i < b->nchg; i++) {
            int c = b->chg[i];
            b->o[c] = b->nov[c];
            b->pos[tsr__pz_piece(b->pz, b->o[c])] = c;
            b->dirty[c] = 1;
            b->touched[c] = 1;
            for (int d = 0; d < 4; d++)
                if (b->nbr[c * 4 + d] >= 0) b->dirty[b->nbr[c * 4 + d]] = 1;
        }
        for (int i = 0; i < b->nchg; i++) tsr__pz_ls_terms(b, b->chg[i]);
    }
    b->cur++;
    b->nchg = 0;
    return ok;
}

/* Propose swapping the h x w blocks at (ay, ax) and (by, bx); 0 (nothing proposed) when one is
 * out of the grid or they overlap. */
static int tsr__pz_ls_block(tsr__pz_ls *b, int ay, int ax, int by, int bx, int h, int w)
{
    if (ay < 0 || ax < 0 || by < 0 || bx < 0 || ay + h > b->R || by + h > b->R || ax + w > b->C || bx + w > b->C)
        return 0;
    if (ay < by + h && by < ay + h && ax < bx + w && bx < ax + w) return 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int ca = (ay + y) * b->C + ax + x, cb = (by + y) * b->C + bx + x;
            tsr__pz_ls_put(b, ca, b->o[cb]);
            tsr__pz_ls_put(b, cb, b->o[ca]);
        }
    return 1;
}

/* Propose shifting segment s by (dy, dx): its pieces move rigidly; each piece in the way slides
 * against the shift to the far end of the segment's run it stands in, into a cell the segment
 * leaves (along each line of the shift a run has one such cell at each end). 0 (nothing
 * proposed) when the segment would leave the grid. */
static int tsr__pz_ls_shift(tsr__pz_ls *b, int s, int dy, int dx)
{
    const int *cells = b->segcells + b->segstart[s];
    int cnt = b->segstart[s + 1] - b->segstart[s];
    for (int i = 0; i < cnt; i++) {
        int y = cells[i] / b->C + dy, x = cells[i] % b->C + dx;
        if (y < 0 || y >= b->R || x < 0 || x >= b->C) return 0;
    }
    for (int i = 0; i < cnt; i++) {
        int c = cells[i], t = c + dy * b->C + dx;
        tsr__pz_ls_put(b, t, b->o[c]);
        if (b->seg[t] != s) {
            int y = c / b->C, x = c % b->C;
            for (;;) {
                int py = y - dy, px = x - dx;
                if (py < 0 || py >= b->R || px < 0 || px >= b->C || b->seg[py * b->C + px] != s) break;
                y = py, x = px;
            }
            tsr__pz_ls_put(b, y * b->C + x, b->o[t]);
        }
    }
    return 1;
}

/* Segments: 4-connected groups of cells joined by edges below TSR_PZ_SEG_EDGE. */
static void tsr__pz_ls_segments(tsr__pz_ls *b)
{
    int k = 0, *queue = b->queue;
    for (int c = 0; c < b->n; c++) b->seg[c] = -1;
    b->nseg = 0;
    for (int c0 = 0; c0 < b->n; c0++) {
        int h = 0, t = 0;
        if (b->seg[c0] >= 0) continue;
        b->seg[c0] = b->nseg;
        queue[t++] = c0;
        while (h < t) {
            int c = queue[h++];
            for (int d = 0; d < 4; d++) {
                int c2 = b->nbr[c * 4 + d];
                if (c2 < 0) continue;
                if (b->seg[c2] < 0 && b->term[c * 4 + d] < TSR_PZ_SEG_EDGE) {
                    b->seg[c2] = b->nseg;
                    queue[t++] = c2;
                }
            }
        }
        b->segstart[b->nseg] = k;
        memcpy(b->segcells + k, queue, sizeof(int) * t);
        k += t;
        b->nseg++;
    }
    b->segstart[b->nseg] = k;
}

/* One pass of swaps over the dirty cells: for each cell and neighbour, the neighbour's first
 * TSR_PZ_TRY listed partners on that side that beat the present tile are tried in the cell (turned as listed),
 * as one piece or bringing a block of up to TSR_PZ_BLOCK x TSR_PZ_BLOCK along. */
static int tsr__pz_ls_swaps(tsr__pz_ls *b)
{
    const tsr__pz *pz = b->pz;
    int moved = 0;
    for (int c = 0; c < b->n; c++) {
        if (!b->dirty[c]) continue;
        b->dirty[c] = 0;   /* a move below marks it again */
        for (int d = 0; d < 4; d++) {
            int y = c / b->C, x = c % b->C, ny = y + tsr__pz_dy[d], nx = x + tsr__pz_dx[d], nb;
            const tsr__pz_cand *l;
            float here;
            if (ny < 0 || ny >= b->R || nx < 0 || nx >= b->C) continue;
            nb = b->o[ny * b->C + nx];
            l = tsr__pz_list(pz, nb, (d + 2) & 3);
            here = tsr__pz_lookup(pz, nb, (d + 2) & 3, b->o[c]);
            for (int t = 0; t < pz->k && t < TSR_PZ_TRY; t++) {
                int j, jy, jx, done = 0;
                /* the list is ascending; its raw values against the present lifted one let a few
                 * more partners through than lifted ones would, and the objective judges */
                if (l[t].o < 0 || !(l[t].d < here)) break;
                j = b->pos[tsr__pz_piece(pz, l[t].o)];
                if (j == c) {   /* the partner is here, turned otherwise */
                    tsr__pz_ls_put(b, c, l[t].o);
                    moved += tsr__pz_ls_commit(b);
                    break;
                }
                if (b->o[j] != l[t].o) {   /* rotation: bring it turned; the displaced piece tries each turn */
                    for (int r = 0; r < 4 && !done; r++) {
                        tsr__pz_ls_put(b, c, l[t].o);
                        tsr__pz_ls_put(b, j, tsr__pz_turn(b->o[c], r));
                        done = tsr__pz_ls_commit(b);
                    }
                } else {
                    jy = j / b->C, jx = j % b->C;
                    for (int h = 1; h <= TSR_PZ_BLOCK && !done; h++)
                        for (int w = 1; w <= TSR_PZ_BLOCK && !done; w++) {
                            /* c lies on the block's side that faces the neighbour */
                            int oy0 = d == 2 ? h - 1 : 0, oy1 = d == 0 ? 0 : h - 1;
                            int ox0 = d == 1 ? w - 1 : 0, ox1 = d == 3 ? 0 : w - 1;
                            for (int oy = oy0; oy <= oy1 && !done; oy++)
                                for (int ox = ox0; ox <= ox1 && !done; ox++)
                                    if (tsr__pz_ls_block(b, y - oy, x - ox, jy - oy, jx - ox, h, w))
                                        done = tsr__pz_ls_commit(b);
                        }
                }
                if (done) {
                    moved++;
                    break;
                }
            }
        }
    }
    return moved;
}

/* One pass of segment shifts: each segment of up to half the pieces is tried at the offsets
 * that put one of its border sides against that side's best or second-best partner. */
static int tsr__pz_ls_shifts(tsr__pz_ls *b)
{
    const tsr__pz *pz = b->pz;
    int moved = 0, *tried = b->queue;
    tsr__pz_ls_segments(b);
    for (int s = 0; s < b->nseg; s++) {
        int cnt = b->segstart[s + 1] - b->segstart[s], ntried = 0, done = 0, near = 0;
        if (cnt > b->n / 2) continue;   /* moving the rest instead is the same move */
        /* a segment with nothing changed in or next to it since the last sweep was tried then */
        for (int i = 0; i < cnt && !near; i++) near = b->touched[b->segcells[b->segstart[s] + i]];
        if (!near) continue;
        for (int i = 0; i < cnt && !done; i++) {
            int c = b->segcells[b->segstart[s] + i], y = c / b->C, x = c % b->C;
            for (int d = 0; d < 4 && !done; d++) {
                int ny = y + tsr__pz_dy[d], nx = x + tsr__pz_dx[d];
                const tsr__pz_cand *l = tsr__pz_list(pz, b->o[c], d);
                if (ny >= 0 && ny < b->R && nx >= 0 && nx < b->C && b->seg[ny * b->C + nx] == s) continue;
                for (int t = 0; t < 2 && t < pz->k && !done; t++) {
                    int q, dy, dx, dup = 0;
                    if (l[t].o < 0) continue;
                    q = b->pos[tsr__pz_piece(pz, l[t].o)];
                    if (b->seg[q] == s || b->o[q] != l[t].o) continue;
                    dy = q / b->C - tsr__pz_dy[d] - y;
                    dx = q % b->C - tsr__pz_dx[d] - x;
                    for (int u = 0; u < ntried && !dup; u++) dup = tried[2 * u] == dy && tried[2 * u + 1] == dx;
                    if (dup) continue;
                    if (ntried < b->n) {
                        tried[2 * ntried] = dy;
                        tried[2 * ntried + 1] = dx;
                        ntried++;
                    }
                    tsr__pz_ls_shift(b, s, dy, dx);
                    done = tsr__pz_ls_commit(b);
                }
            }
        }
        if (done) {
            moved++;
            tsr__pz_ls_segments(b);   /* the offsets list in 'queue' is no longer needed */
        }
    }
    return moved;
}

/* Longest side of a rolled rectangle (cells), and at most TSR_PZ_ROLL_WORK / pieces: a roll
 * pass computes about 10 x pieces x that many terms and sums 4 x pieces x its square. */
#define TSR_PZ_ROLL_MAX 24
#define TSR_PZ_ROLL_WORK 200000

/* Rolls: the cells of a rectangle move one cell along its rows (or columns), the cells pushed
 * out at one end going in at the other, as on a conveyor. A block put one cell off beside a
 * line of misplaced pieces (grass, sky) goes back in one move, where swaps and shifts would
 * have to break it or pass through worse placements. The change of the objective of every
 * rectangle (sides up to 'lim') is the sum of its lines' changes along the roll and of its two
 * ends across it, each read from per-line tables and prefix sums, so a pass costs
 * O(pieces x lim^2); the best is proposed (ties: the first found) and kept when it lowers the
 * objective. Returns 1 when a roll was applied, -1 when out of memory. */
static int tsr__pz_ls_rolls(tsr__pz_ls *b, int lim)
{
    int R = b->R, C = b->C, bt = -1, bl0 = 0, bl1 = 0, bp0 = 0, bw = 0, bdir = 0;
    double best = -1e-4;
    for (int t = 0; t < 2; t++) {
        int NL = t ? C : R, L = t ? R : C, al = t ? 2 : 1, ac = t ? 1 : 2;
        int W = L < lim ? L : lim, H = NL < lim ? NL : lim;
        size_t sz = (size_t)NL * L * (W + 1), psz = (size_t)NL * (L + 1);
        float *tab, *rf, *rb, *tf, *tb, *bf, *bb;
        double *pv, *pa, *pb;
        if (W < 2) continue;
        tab = malloc(sizeof(float) * sz * 6);
        pv = malloc(sizeof(double) * psz * 3);
        if (!tab || !pv) {
            free(tab), free(pv);
            return -1;
        }
        rf = tab, rb = tab + sz, tf = tab + 2 * sz, tb = tab + 3 * sz, bf = tab + 4 * sz, bb = tab + 5 * sz;
        pa = pv + psz, pb = pv + 2 * psz;
#define PZ_CELL(l, p) (t ? (p) * C + (l) : (l) * C + (p))
#define PZ_O(l, p) b->o[PZ_CELL(l, p)]
#define PZ_AL(l, p) b->term[PZ_CELL(l, p) * 4 + al]              /* (l, p) and (l, p + 1) */
#define PZ_AC(l, p) b->term[PZ_CELL(l, p) * 4 + ((ac + 2) & 3)]  /* (l - 1, p) and (l, p) */
#define PZ_E(o1, d, o2) tsr__pz_edge(b->cache, o1, d, o2)
        /* prefix sums along line l >= 1 of the sides across to line l - 1: as they are (pv), with
         * line l - 1 one cell further along (pa) or line l one cell further along (pb) */
        for (int l = 1; l < NL; l++) {
            double *v = pv + (size_t)l * (L + 1), *a = pa + (size_t)l * (L + 1), *bq = pb + (size_t)l * (L + 1);
            v[0] = a[0] = bq[0] = 0;
            for (int p = 0; p < L; p++) {
                v[p + 1] = v[p] + PZ_AC(l, p);
                a[p + 1] = a[p] + (p ? PZ_E(PZ_O(l - 1, p - 1), ac, PZ_O(l, p)) : 0);
                bq[p + 1] = bq[p] + (p ? PZ_E(PZ_O(l - 1, p), ac, PZ_O(l, p - 1)) : 0);
            }
        }
        for (int l = 0; l < NL; l++)
            for (int p0 = 0; p0 < L; p0++)
                for (int w = 2; w <= W && p0 + w <= L; w++) {
                    int p1 = p0 + w - 1;
                    size_t at = ((size_t)l * L + p0) * (W + 1) + w;
                    const double *v, *a, *bq;
                    /* forward: (l, p) takes (l, p - 1), (l, p0) takes (l, p1); backward the reverse */
                    rf[at] = (float)((p0 ? PZ_E(PZ_O(l, p0 - 1), al, PZ_O(l, p1)) - PZ_AL(l, p0 - 1) : 0) +
                                     PZ_E(PZ_O(l, p1), al, PZ_O(l, p0)) - PZ_AL(l, p1 - 1) +
                                     (p1 < L - 1 ? PZ_E(PZ_O(l, p1 - 1), al, PZ_O(l, p1 + 1)) - PZ_AL(l, p1) : 0));
                    rb[at] = (float)((p0 ? PZ_E(PZ_O(l, p0 - 1), al, PZ_O(l, p0 + 1)) - PZ_AL(l, p0 - 1) : 0) +
                                     PZ_E(PZ_O(l, p1), al, PZ_O(l, p0)) - PZ_AL(l, p0) +
                                     (p1 < L - 1 ? PZ_E(PZ_O(l, p0), al, PZ_O(l, p1 + 1)) - PZ_AL(l, p1) : 0));
                    tf[at] = tb[at] = bf[at] = bb[at] = 0;
                    if (l) {   /* l the first line: its sides across to line l - 1 */
                        v = pv + (size_t)l * (L + 1), a = pa + (size_t)l * (L + 1), bq = pb + (size_t)l * (L + 1);
                        tf[at] = (float)(bq[p1 + 1] - bq[p0 + 1] + PZ_E(PZ_O(l - 1, p0), ac, PZ_O(l, p1)) -
                                         (v[p1 + 1] - v[p0]));
                        tb[at] = (float)(a[p1 + 1] - a[p0 + 1] + PZ_E(PZ_O(l - 1, p1), ac, PZ_O(l, p0)) -
                                         (v[p1 + 1] - v[p0]));
                    }
                    if (l < NL - 1) {   /* l the last line: its sides across to line l + 1 */
                        v = pv + (size_t)(l + 1) * (L + 1), a = pa + (size_t)(l + 1) * (L + 1);
                        bq = pb + (size_t)(l + 1) * (L + 1);
                        bf[at] = (float)(a[p1 + 1] - a[p0 + 1] + PZ_E(PZ_O(l, p1), ac, PZ_O(l + 1, p0)) -
                                         (v[p1 + 1] - v[p0]));
                        bb[at] = (float)(bq[p1 + 1] - bq[p0 + 1] + PZ_E(PZ_O(l, p0), ac, PZ_O(l + 1, p1)) -
                                         (v[p1 + 1] - v[p0]));
                    }
                }
        for (int p0 = 0; p0 < L; p0++)
            for (int w = 2; w <= W && p0 + w <= L; w++)
                for (int l0 = 0; l0 < NL; l0++) {
                    double af = 0, ab = 0;
                    for (int l1 = l0; l1 < NL && l1 < l0 + H; l1++) {
                        size_t a0 = ((size_t)l0 * L + p0) * (W + 1) + w, a1 = ((size_t)l1 * L + p0) * (W + 1) + w;
                        double f, g;
                        af += rf[a1], ab += rb[a1];
                        f = af + tf[a0] + bf[a1];
                        g = ab + tb[a0] + bb[a1];
                        if (f < best) best = f, bt = t, bl0 = l0, bl1 = l1, bp0 = p0, bw = w, bdir = 1;
                        if (w > 2 && g < best) best = g, bt = t, bl0 = l0, bl1 = l1, bp0 = p0, bw = w, bdir = -1;
                    }
                }
        free(tab), free(pv);
    }
    if (bt < 0) return 0;
    {
        int t = bt, p1 = bp0 + bw - 1;
        for (int l = bl0; l <= bl1; l++)
            for (int p = bp0; p <= p1; p++) {
                int from = bdir > 0 ? (p == bp0 ? p1 : p - 1) : (p == p1 ? bp0 : p + 1);
                tsr__pz_ls_put(b, PZ_CELL(l, p), PZ_O(l, from));
            }
    }
#undef PZ_CELL
#undef PZ_O
#undef PZ_AL
#undef PZ_AC
#undef PZ_E
    return tsr__pz_ls_commit(b);
}

/* Contract: see puzzle_core.h. */
tsr_status tsr__pz_refine(const tsr__pz *pz, tsr__pz_cache *cache, int *piece, unsigned char *rot,
                          const int *prev_piece, const unsigned char *prev_rot, int rolls)
{
    tsr__pz_ls b;
    int n = pz->n, ok, lim = !rolls ? 0 : TSR_PZ_ROLL_WORK / n < TSR_PZ_ROLL_MAX ? TSR_PZ_ROLL_WORK / n : TSR_PZ_ROLL_MAX;
    memset(&b, 0, sizeof b);
    b.pz = pz, b.cache = cache, b.R = pz->rows, b.C = pz->cols, b.n = n;
    b.o = malloc(sizeof(int) * n);
    b.pos = malloc(sizeof(int) * n);
    b.nov = malloc(sizeof(int) * n);
    b.stamp = calloc((size_t)n, sizeof(int));
    b.dirty = calloc((size_t)n, 1);
    b.touched = malloc((size_t)n);
    b.chg = malloc(sizeof(int) * n * 2);
    b.seg = malloc(sizeof(int) * n);
    b.segcells = malloc(sizeof(int) * n);
    b.segstart = malloc(sizeof(int) * (n + 1));
    b.queue = malloc(sizeof(int) * n * 2);
    b.nbr = malloc(sizeof(int) * n * 4);
    b.term = malloc(sizeof(float) * n * 4);
    ok = b.o && b.pos && b.nov && b.stamp && b.dirty && b.touched && b.chg && b.seg && b.segcells && b.segstart &&
         b.queue && b.nbr && b.term;
    if (ok) {
        b.cur = 1;
        for (int i = 0; i < n; i++)
            for (int d = 0; d < 4; d++) {
                int ny = i / b.C + tsr__pz_dy[d], nx = i % b.C + tsr__pz_dx[d];
                b.nbr[i * 4 + d] = ny >= 0 && ny < b.R && nx >= 0 && nx < b.C ? ny * b.C + nx : -1;
            }
        for (int i = 0; i < n; i++) {
            b.o[i] = tsr__pz_cell(pz, piece, rot, i);
            b.pos[piece[i]] = i;
            /* only what changed since the last search (and its neighbours) needs a first visit */
            if (!prev_piece || prev_piece[i] != piece[i] || (pz->rotate && prev_rot[i] != rot[i])) {
                int y = i / b.C, x = i % b.C;
                b.dirty[i] = 1;
                for (int d = 0; d < 4; d++) {
                    int ny = y + tsr__pz_dy[d], nx = x + tsr__pz_dx[d];
                    if (ny >= 0 && ny < b.R && nx >= 0 && nx < b.C) b.dirty[ny * b.C + nx] = 1;
                }
            }
        }
        for (int i = 0; i < n; i++)   /* each edge once: from its left or top cell */
            for (int d = 1; d <= 2; d++) {
                int c2 = b.nbr[i * 4 + d];
                if (c2 >= 0)
                    b.term[i * 4 + d] = b.term[c2 * 4 + ((d + 2) & 3)] = tsr__pz_edge(cache, b.o[i], d, b.o[c2]);
            }
        for (int sw = 0; sw < TSR_PZ_SWEEPS; sw++) {
            int moved;
            memcpy(b.touched, b.dirty, (size_t)n);
            moved = tsr__pz_ls_swaps(&b);
            moved += tsr__pz_ls_shifts(&b);
            if (!moved && lim >= 2) {   /* rolls only where nothing else moves: a pass costs more */
                int r = tsr__pz_ls_rolls(&b, lim);
                if (r < 0) {
                    ok = 0;
                    break;
                }
                moved = r;
            }
            if (!moved) break;
        }
        for (int i = 0; i < n; i++) {
            piece[i] = tsr__pz_piece(pz, b.o[i]);
            rot[i] = (unsigned char)(pz->rotate ? b.o[i] & 3 : 0);
        }
    }
    free(b.o), free(b.pos), free(b.nov), free(b.stamp), free(b.dirty), free(b.touched), free(b.chg), free(b.seg), free(b.segcells);
    free(b.segstart), free(b.queue), free(b.nbr), free(b.term);
    return ok ? TSR_OK : tsr__fail(TSR_E_NOMEM, "puzzle: out of memory for the local search");
}
