/* Greedy placement grown from best buddies (after Paikin & Tal 2015): a seed with the most
 * best buddies around it, then repeatedly the empty slot and piece with the highest
 * confidence (best buddies of all placed neighbours first), confidence 1 - D / second-best D.
 * Slots are kept inside a rows x cols bounding box. A repair step keeps the largest segment
 * joined by best buddies and re-grows the rest around it while that lowers the total cost. */
#include "puzzle_core.h"
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    float key;
    int cell, o, ver;
} tsr__pz_hent;

typedef struct {
    const tsr__pz *pz;
    int R, C, BW, BH, n;
    int fixed;   /* the frame is the grid itself: initial cells are at grid coordinates */
    int *board, *ver, *unused, *unused_at;
    unsigned char *used;
    int nunused, placed, miny, maxy, minx, maxx;
    tsr__pz_hent *heap;
    size_t nheap, cap;
    float jitter;    /* > 0: scores perturbed by up to this per placed neighbour (tsr__pz_score) */
    uint64_t salt;   /* the perturbation's seed */
} tsr__pz_state;

/* Heap order: larger key first, then lower cell, then lower tile (deterministic). */
static int tsr__pz_before(const tsr__pz_hent *a, const tsr__pz_hent *b)
{
    if (a->key != b->key) return a->key > b->key;
    if (a->cell != b->cell) return a->cell < b->cell;
    return a->o < b->o;
}

/* Push onto the max-heap; -1 when out of memory. */
static int tsr__pz_push(tsr__pz_state *s, tsr__pz_hent e)
{
    size_t i;
    if (s->nheap == s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 1024;
        tsr__pz_hent *h = realloc(s->heap, nc * sizeof *h);
        if (!h) return -1;
        s->heap = h;
        s->cap = nc;
    }
    i = s->nheap++;
    while (i > 0 && tsr__pz_before(&e, &s->heap[(i - 1) / 2])) {
        s->heap[i] = s->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    s->heap[i] = e;
    return 0;
}

/* Remove and return the top of a non-empty heap. */
static tsr__pz_hent tsr__pz_pop(tsr__pz_state *s)
{
    tsr__pz_hent top = s->heap[0], last = s->heap[--s->nheap];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= s->nheap) break;
        if (c + 1 < s->nheap && tsr__pz_before(&s->heap[c + 1], &s->heap[c])) c++;
        if (!tsr__pz_before(&s->heap[c], &last)) break;
        s->heap[i] = s->heap[c];
        i = c;
    }
    if (s->nheap) s->heap[i] = last;
    return top;
}

/* Contract: see puzzle_core.h. A listed value is the D that tsr__pz_dis gives with the CPU
 * top-k (the same dot product), so with pz->dmat the list is not searched. */
float tsr__pz_lookup(const tsr__pz *pz, int o1, int d, int o2)
{
    float a, b, v;
    const tsr__pz_cand *l;
    int t = 0;
    if (pz->dmat) return tsr__pz_lookup_tab(pz, o1, d, o2);
    a = pz->lift ? pz->lift[o1 * 4 + d] : 0, b = pz->lift ? pz->lift[o2 * 4 + ((d + 2) & 3)] : 0;
    l = tsr__pz_list(pz, o1, d);
    while (t < pz->k && l[t].o != o2) t++;
    v = (t < pz->k ? l[t].d : tsr__pz_dis(pz, o1, d, o2)) + (a > b ? a : b);
    return v > 0 ? v : 0;
}

/* Contract: see puzzle_core.h. */
float tsr__pz_second(const tsr__pz *pz, int o, int d)
{
    const tsr__pz_cand *l = tsr__pz_list(pz, o, d);
    float v = (pz->k >= 2 ? l[1].d : pz->k == 1 ? l[0].d : 1.0f) + (pz->lift ? pz->lift[o * 4 + d] : 0);
    return v > 1e-3f ? v : 1e-3f;
}

/* Whether o2 on side d of o1 is a best-buddy pair (each the other's first choice). */
static int tsr__pz_is_bb(const tsr__pz *pz, int o1, int d, int o2)
{
    return pz->k > 0 && tsr__pz_list(pz, o1, d)[0].o == o2 && tsr__pz_list(pz, o2, (d + 2) & 3)[0].o == o1;
}

/* Whether a board cell is empty and filling it keeps the placed tiles within rows x cols. */
static int tsr__pz_valid(const tsr__pz_state *s, int cell)
{
    int y = cell / s->BW, x = cell % s->BW;
    if (s->board[cell] >= 0) return 0;
    if (s->fixed) return y > s->R && y <= 2 * s->R && x > s->C && x <= 2 * s->C;
    if (!s->placed) return 1;
    return (y > s->maxy ? y : s->maxy) - (y < s->miny ? y : s->miny) < s->R &&
           (x > s->maxx ? x : s->maxx) - (x < s->minx ? x : s->minx) < s->C;
}

/* Score of oriented tile x in 'cell' against its placed neighbours. */
static float tsr__pz_score(const tsr__pz_state *s, int cell, int x)
{
    const tsr__pz *pz = s->pz;
    float conf = 0;
    int cnt = 0, allbb = 1;
    for (int d = 0; d < 4; d++) {
        int nc = cell + tsr__pz_dy[d] * s->BW + tsr__pz_dx[d], nb = s->board[nc], od = (d + 2) & 3;
        if (nb < 0) continue;
        /* normalised by the smaller second-best of the two sides that meet */
        float nrm = tsr__pz_second(pz, nb, od), n2 = tsr__pz_second(pz, x, d);
        if (n2 < nrm) nrm = n2;
        conf += 1.0f - tsr__pz_lookup(pz, nb, od, x) / nrm;
        allbb &= tsr__pz_is_bb(pz, nb, od, x);
        cnt++;
    }
    if (!cnt) return -INFINITY;
    if (s->jitter > 0) {   /* a randomised regrowth: a fixed pseudo-random amount per cell and tile */
        uint64_t z = s->salt ^ (uint64_t)(unsigned)cell * 0x9E3779B97F4A7C15ull ^ (uint64_t)(unsigned)x << 32;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        conf += cnt * s->jitter * (float)((double)(z >> 40) / 16777216.0);
    }
    /* best buddies of every placed neighbour first; then confidence; slots with more placed
     * neighbours are better constrained and go a little earlier */
    return (allbb ? 4.0f : 0.0f) + conf / cnt + 0.2f * (cnt - 1);
}

/* The scan of every unused tile (in every turn) for a slot whose neighbours' lists are used up:
 * on large puzzles most of a start's time (10,000 pieces with rotation: thousands of scans of
 * up to 40,000 oriented tiles, a dot product of the features for each), so from
 * TSR_PZ_SCAN_PAR oriented tiles it is split in chunks of TSR_PZ_SCAN_CHUNK unused pieces over
 * the placement's threads. The best is the largest score, ties to the lower tile: a total
 * order, so chunks give the serial scan's answer. */
#define TSR_PZ_SCAN_CHUNK 64
#define TSR_PZ_SCAN_PAR 1024

/* Best of unused pieces [b, e) (every turn) for 'cell' into *e (e->key, e->o); b < e. */
static void tsr__pz_scan(const tsr__pz_state *s, int cell, int b, int e, tsr__pz_hent *best)
{
    int per = s->pz->rotate ? 4 : 1, found = 0;
    for (int u = b; u < e; u++)
        for (int r = 0; r < per; r++) {
            int o = s->unused[u] * per + r;
            float sc = tsr__pz_score(s, cell, o);
            if (!found || sc > best->key || (sc == best->key && o < best->o)) {
                best->key = sc;
                best->o = o;
                found = 1;
            }
        }
}

typedef struct {
    const tsr__pz_state *s;
    int cell;
    tsr__pz_hent *best;   /* per chunk */
} tsr__pz_scan_job;

/* Chunks [b, e) of a threaded scan. */
static void tsr__pz_scan_range(void *ctx, int b, int e)
{
    tsr__pz_scan_job *j = ctx;
    for (int c = b; c < e; c++) {
        int u0 = c * TSR_PZ_SCAN_CHUNK, u1 = u0 + TSR_PZ_SCAN_CHUNK;
        tsr__pz_scan(j->s, j->cell, u0, u1 < j->s->nunused ? u1 : j->s->nunused, &j->best[c]);
    }
}

/* Best candidate for a slot: from the neighbours' lists, else every unused tile. Returns 0 and
 * fills *e when one exists. */
static int tsr__pz_best_for(const tsr__pz_state *s, int cell, tsr__pz_hent *e)
{
    const tsr__pz *pz = s->pz;
    int found = 0;
    e->key = -INFINITY;
    e->cell = cell;
    e->ver = s->ver[cell];
    if (!tsr__pz_valid(s, cell)) return -1;
    for (int d = 0; d < 4; d++) {
        int nb = s->board[cell + tsr__pz_dy[d] * s->BW + tsr__pz_dx[d]];
        const tsr__pz_cand *l;
        if (nb < 0) continue;
        l = tsr__pz_list(pz, nb, (d + 2) & 3);
        for (int t = 0; t < pz->k; t++) {
            float sc;
            if (l[t].o < 0 || s->used[tsr__pz_piece(pz, l[t].o)]) continue;
            sc = tsr__pz_score(s, cell, l[t].o);
            if (!found || sc > e->key || (sc == e->key && l[t].o < e->o)) {
                e->key = sc;
                e->o = l[t].o;
                found = 1;
            }
        }
    }
    if (!found && s->nunused > 0) {
        int per = pz->rotate ? 4 : 1, nch = (s->nunused + TSR_PZ_SCAN_CHUNK - 1) / TSR_PZ_SCAN_CHUNK;
        tsr__pz_scan_job j;
        j.s = s, j.cell = cell, j.best = NULL;
        if (nch > 1 && pz->threads > 1 && (size_t)s->nunused * per >= TSR_PZ_SCAN_PAR)
            j.best = malloc(sizeof *j.best * nch);
        if (j.best) {   /* threaded: per chunk its best, then the best of those (the same order) */
            tsr__parallel_for(nch, 1, pz->threads, tsr__pz_scan_range, &j);
            for (int c = 0; c < nch; c++)
                if (!found || j.best[c].key > e->key || (j.best[c].key == e->key && j.best[c].o < e->o)) {
                    e->key = j.best[c].key, e->o = j.best[c].o;
                    found = 1;
                }
            free(j.best);
        } else {
            tsr__pz_scan(s, cell, 0, s->nunused, e);
            found = 1;
        }
    }
    return found ? 0 : -1;
}

/* Place oriented tile o in an empty cell: board, used pieces, bounding box. */
static void tsr__pz_put(tsr__pz_state *s, int cell, int o)
{
    int p = tsr__pz_piece(s->pz, o), y = cell / s->BW, x = cell % s->BW, at = s->unused_at[p];
    s->board[cell] = o;
    s->used[p] = 1;
    s->unused[at] = s->unused[--s->nunused];
    s->unused_at[s->unused[at]] = at;
    if (!s->placed) {
        s->miny = s->maxy = y;
        s->minx = s->maxx = x;
    }
    if (y < s->miny) s->miny = y;
    if (y > s->maxy) s->maxy = y;
    if (x < s->minx) s->minx = x;
    if (x > s->maxx) s->maxx = x;
    s->placed++;
}

/* Re-evaluate the empty neighbours of a cell. */
static int tsr__pz_touch(tsr__pz_state *s, int cell)
{
    for (int d = 0; d < 4; d++) {
        int nc = cell + tsr__pz_dy[d] * s->BW + tsr__pz_dx[d];
        tsr__pz_hent e;
        if (s->board[nc] >= 0) continue;
        s->ver[nc]++;
        if (tsr__pz_best_for(s, nc, &e) == 0 && tsr__pz_push(s, e)) return -1;
    }
    return 0;
}

/* Grow a placement from 'ninit' fixed cells (grid coordinates gy/gx, tiles go) into piece/rot;
 * with jitter > 0 each candidate's score is perturbed by a pseudo-random amount (up to jitter
 * per placed neighbour) that depends only on salt, the cell and the tile. Returns TSR_OK or
 * TSR_E_NOMEM. */
static tsr_status tsr__pz_grow_jittered(const tsr__pz *pz, const int *gy, const int *gx, const int *go, int ninit,
                                        int fixed, float jitter, uint64_t salt, int *piece, unsigned char *rot,
                                        void (*progress)(void *, const char *, double), void *pctx)
{
    tsr__pz_state s;
    tsr_status st = TSR_OK;
    size_t cells;
    int step = pz->n / 50 > 0 ? pz->n / 50 : 1;
    memset(&s, 0, sizeof s);
    s.pz = pz;
    s.fixed = fixed;
    s.jitter = jitter;
    s.salt = salt;
    s.R = pz->rows;
    s.C = pz->cols;
    s.BH = 3 * pz->rows + 2;
    s.BW = 3 * pz->cols + 2;
    s.n = pz->n;
    cells = (size_t)s.BH * s.BW;
    s.board = malloc(cells * sizeof(int));
    s.ver = calloc(cells, sizeof(int));
    s.unused = malloc(sizeof(int) * pz->n);
    s.unused_at = malloc(sizeof(int) * pz->n);
    s.used = calloc((size_t)pz->n, 1);
    if (!s.board || !s.ver || !s.unused || !s.unused_at || !s.used) {
        st = tsr__fail(TSR_E_NOMEM, "puzzle: out of memory for placement");
        goto done;
    }
    for (size_t i = 0; i < cells; i++) s.board[i] = -1;
    for (int p = 0; p < pz->n; p++) s.unused[p] = s.unused_at[p] = p;
    s.nunused = pz->n;
    for (int i = 0; i < ninit; i++) tsr__pz_put(&s, (gy[i] + pz->rows + 1) * s.BW + gx[i] + pz->cols + 1, go[i]);
    for (int i = 0; i < ninit; i++)
        if (tsr__pz_touch(&s, (gy[i] + pz->rows + 1) * s.BW + gx[i] + pz->cols + 1)) goto nomem;
    while (s.placed < s.n) {
        tsr__pz_hent e;
        if (!s.nheap) {   /* safety net: re-seed the frontier from every empty slot beside a tile */
            int any = 0;
            for (size_t c = (size_t)s.BW; c + s.BW < cells; c++)
                if (s.board[c] < 0 && (s.board[c - 1] >= 0 || s.board[c + 1] >= 0 || s.board[c - s.BW] >= 0 ||
                                       s.board[c + s.BW] >= 0)) {
                    if (tsr__pz_best_for(&s, (int)c, &e) == 0) {
                        if (tsr__pz_push(&s, e)) goto nomem;
                        any = 1;
                    }
                }
            if (!any) {
                st = tsr__fail(TSR_E_ARG, "puzzle: placement ran out of slots (internal error)");
                goto done;
            }
        }
        e = tsr__pz_pop(&s);
        if (s.board[e.cell] >= 0 || e.ver != s.ver[e.cell] || !tsr__pz_valid(&s, e.cell)) continue;
        if (s.used[tsr__pz_piece(pz, e.o)]) {
            if (tsr__pz_best_for(&s, e.cell, &e) == 0 && tsr__pz_push(&s, e)) goto nomem;
            continue;
        }
        tsr__pz_put(&s, e.cell, e.o);
        if (tsr__pz_touch(&s, e.cell)) goto nomem;
        if (progress && s.placed % step == 0) progress(pctx, "placing", (double)s.placed / s.n);
    }
    for (int y = 0; y < pz->rows; y++)
        for (int x = 0; x < pz->cols; x++) {
            int o = s.board[(s.miny + y) * s.BW + s.minx + x];
            piece[y * pz->cols + x] = tsr__pz_piece(pz, o);
            rot[y * pz->cols + x] = (unsigned char)(pz->rotate ? o & 3 : 0);
        }
    goto done;
nomem:
    st = tsr__fail(TSR_E_NOMEM, "puzzle: out of memory for placement");
done:
    free(s.board);
    free(s.ver);
    free(s.unused);
    free(s.unused_at);
    free(s.used);
    free(s.heap);
    return st;
}

/* Grow a placement greedily (tsr__pz_grow_jittered without perturbation). */
static tsr_status tsr__pz_grow(const tsr__pz *pz, const int *gy, const int *gx, const int *go, int ninit, int fixed,
                               int *piece, unsigned char *rot, void (*progress)(void *, const char *, double),
                               void *pctx)
{
    return tsr__pz_grow_jittered(pz, gy, gx, go, ninit, fixed, 0, 0, piece, rot, progress, pctx);
}

/* Contract: see puzzle_core.h (sum of D over the adjacent pairs of a full placement). */
double tsr__pz_total(const tsr__pz *pz, const int *piece, const unsigned char *rot)
{
    double t = 0;
    int per = pz->rotate ? 4 : 1;
    for (int y = 0; y < pz->rows; y++)
        for (int x = 0; x < pz->cols; x++) {
            int i = y * pz->cols + x, o = piece[i] * per + (pz->rotate ? rot[i] : 0);
            if (x + 1 < pz->cols) {
                float d = tsr__pz_dis(pz, o, 1, piece[i + 1] * per + (pz->rotate ? rot[i + 1] : 0));
                t += d > 0 ? d : 0;
            }
            if (y + 1 < pz->rows) {
                float d = tsr__pz_dis(pz, o, 2, piece[i + pz->cols] * per + (pz->rotate ? rot[i + pz->cols] : 0));
                t += d > 0 ? d : 0;
            }
        }
    return t;
}

/* Seeds: the 'want' oriented tiles (of distinct pieces) whose best buddies (and theirs) are most
 * numerous, then most confident, best first. Returns how many were found. */
static int tsr__pz_seeds(const tsr__pz *pz, int want, int *seeds)
{
    int got = 0;
    int *bbc = calloc((size_t)pz->m, sizeof(int));
    double *val = malloc(sizeof(double) * pz->m);
    if (!bbc || !val) {
        free(bbc), free(val);
        seeds[0] = 0;
        return 1;
    }
    for (int o = 0; o < pz->m; o++)
        for (int d = 0; d < 4; d++)
            if (pz->k && tsr__pz_is_bb(pz, o, d, tsr__pz_list(pz, o, d)[0].o)) bbc[o]++;
    for (int o = 0; o < pz->m; o++) {
        double v = 16.0 * bbc[o];
        for (int d = 0; d < 4 && pz->k; d++) {
            int x = tsr__pz_list(pz, o, d)[0].o;
            if (tsr__pz_is_bb(pz, o, d, x))   /* lifted like the confidences of the placement */
                v += 2.0 * bbc[x] + (1.0 - tsr__pz_lookup(pz, o, d, x) / tsr__pz_second(pz, o, d));
        }
        val[o] = v;
    }
    while (got < want) {
        int best = -1;
        for (int o = 0; o < pz->m; o++)
            if (val[o] >= 0 && (best < 0 || val[o] > val[best])) best = o;
        if (best < 0) break;
        seeds[got++] = best;
        for (int o = 0; o < pz->m; o++)
            if (tsr__pz_piece(pz, o) == tsr__pz_piece(pz, best)) val[o] = -1;
    }
    free(bbc), free(val);
    return got;
}

/* Largest 4-connected group of cells joined by best-buddy edges; fills gy/gx/go, returns size. */
static int tsr__pz_segment(const tsr__pz *pz, const int *piece, const unsigned char *rot, int *gy, int *gx,
                           int *go)
{
    int n = pz->n, R = pz->rows, C = pz->cols, per = pz->rotate ? 4 : 1, best = 0, bestc = -1;
    int *comp = malloc(sizeof(int) * n), *queue = malloc(sizeof(int) * n), *size = calloc((size_t)n, sizeof(int));
    if (!comp || !queue || !size) {
        free(comp), free(queue), free(size);
        return 0;
    }
    for (int i = 0; i < n; i++) comp[i] = -1;
    for (int s0 = 0, nc = 0; s0 < n; s0++) {
        int h = 0, t = 0;
        if (comp[s0] >= 0) continue;
        comp[s0] = nc;
        queue[t++] = s0;
        while (h < t) {
            int c = queue[h++], y = c / C, x = c % C, o = piece[c] * per + rot[c];
            for (int d = 0; d < 4; d++) {
                int ny = y + tsr__pz_dy[d], nx = x + tsr__pz_dx[d], c2, o2;
                if (ny < 0 || ny >= R || nx < 0 || nx >= C) continue;
                c2 = ny * C + nx;
                o2 = piece[c2] * per + rot[c2];
                if (comp[c2] < 0 && tsr__pz_is_bb(pz, o, d, o2)) {
                    comp[c2] = nc;
                    queue[t++] = c2;
                }
            }
        }
        size[nc] = t;
        if (t > best) {
            best = t;
            bestc = nc;
        }
        nc++;
    }
    for (int c = 0, j = 0; c < n; c++)
        if (comp[c] == bestc) {
            gy[j] = c / C;
            gx[j] = c % C;
            go[j++] = piece[c] * per + rot[c];
        }
    free(comp), free(queue), free(size);
    return best;
}

/* Placements tried for the largest segment inside the grid when reframing, at most, and at most
 * this many placements x pieces (each costs a partial greedy placement: 10,000 pieces get 1). */
#define TSR_PZ_FRAMES 32
#define TSR_PZ_FRAME_WORK 12000
/* Regrowing keeps the cells whose every side has an objective term below this. */
#define TSR_PZ_KEEP 1.5f
#define TSR_PZ_REGROWS 4
/* Large neighbourhood search on the best start: chains (independent of the thread count; they
 * run side by side), windows of up to TSR_PZ_LNS_WIN cells a side, iterations per chain (fewer
 * on large puzzles: at most TSR_PZ_LNS_WORK iterations x pieces). */
#define TSR_PZ_LNS_CHAINS 2
#define TSR_PZ_LNS_WIN 10
#define TSR_PZ_LNS_ITERS 48
#define TSR_PZ_LNS_WORK 400000
/* Segments moved by the neighbourhood search are joined by edges below this objective term
 * (stricter than the local search's TSR_PZ_SEG_EDGE: on the deep field's sky those run across
 * wrong seams). */
#define TSR_PZ_LNS_SEGTERM 0.7f
/* Where the best start has at least TSR_PZ_DOUBT_SHARE of its cells with a side of objective term
 * TSR_PZ_KEEP or more (on the benchmark the deep field 67-83%, the cameraman 18-31%, the others
 * 0-6%), the neighbourhood search runs instead in TSR_PZ_GROUPS groups (TSR_PZ_GROUPS_ROT with
 * rotation), group g from the (g mod starts)-th best start, each in rounds of
 * TSR_PZ_REASM_CHAINS chains of TSR_PZ_ROUND_ITERS iterations: the first two from the group's
 * best so far, each further one from a block reassembly of it (tsr__pz_reassemble) with its own
 * contact weight and listed partners per side. A group stops after TSR_PZ_ROUND_IDLE rounds in a
 * row without a lower objective, or TSR_PZ_ROUNDS rounds. */
#define TSR_PZ_DOUBT_SHARE 0.1
#define TSR_PZ_REASM_CHAINS 4
#define TSR_PZ_GROUPS 12
#define TSR_PZ_GROUPS_ROT 4
/* a chain's generator is seeded by slot + 64 x round */
_Static_assert(TSR_PZ_GROUPS * TSR_PZ_REASM_CHAINS <= 64, "chains' seeds would repeat");
#define TSR_PZ_ROUNDS 6
#define TSR_PZ_ROUND_ITERS 3
#define TSR_PZ_ROUND_IDLE 2
static const float tsr__pz_reasm_tau[TSR_PZ_REASM_CHAINS - 2] = {2.0f, 1.5f};
static const int tsr__pz_reasm_partners[TSR_PZ_REASM_CHAINS - 2] = {4, 2};

/* Local searches with rolls (tsr__pz_refine): with rotation every TSR_PZ_LNS_ROLLS iterations
 * of a chain of the neighbourhood search, and after the chains; without the table of D only up
 * to TSR_PZ_ROLL_PIECES pieces. */
#define TSR_PZ_LNS_ROLLS 16
#define TSR_PZ_ROLL_PIECES 1000
/* Randomised regrowths of the worst region (tsr__pz_regrow_region, rotation, last): at most
 * this many cells in the region's box, regrowths per round (the first greedy), the scores'
 * perturbation per placed neighbour (confidences are at most 1), rounds while it gains. */
#define TSR_PZ_REGION_CELLS 150
#define TSR_PZ_REGION_TRIES 32
#define TSR_PZ_REGION_JITTER 0.3f
#define TSR_PZ_REGION_ROUNDS 3

/* Scratch of one start (one thread). */
typedef struct {
    const tsr__pz *pz;
    tsr__pz_cache *cache;
    int *gy, *gx, *go, *p2, *p3;
    unsigned char *r2, *r3;
} tsr__pz_work;

static void tsr__pz_work_free(tsr__pz_work *w)
{
    tsr__pz_cache_free(w->cache);
    free(w->gy), free(w->gx), free(w->go), free(w->p2), free(w->p3), free(w->r2), free(w->r3);
}

/* Allocate a start's scratch; TSR_E_NOMEM (message set) when out of memory. */
static tsr_status tsr__pz_work_init(tsr__pz_work *w, const tsr__pz *pz)
{
    int n = pz->n;
    memset(w, 0, sizeof *w);
    w->pz = pz;
    w->cache = tsr__pz_cache_new(pz);
    w->gy = malloc(sizeof(int) * n), w->gx = malloc(sizeof(int) * n), w->go = malloc(sizeof(int) * n);
    w->p2 = malloc(sizeof(int) * n), w->p3 = malloc(sizeof(int) * n);
    w->r2 = malloc((size_t)n), w->r3 = malloc((size_t)n);
    if (!w->cache || !w->gy || !w->gx || !w->go || !w->p2 || !w->p3 || !w->r2 || !w->r3) {
        tsr__pz_work_free(w);
        return tsr__fail(TSR_E_NOMEM, "puzzle: out of memory for placement");
    }
    return TSR_OK;
}

/* Keep the candidate in w->p2/r2 when its objective is below *score. */
static void tsr__pz_take(tsr__pz_work *w, int *piece, unsigned char *rot, double *score)
{
    double c = tsr__pz_objective(w->pz, w->cache, w->p2, w->r2);
    if (c < *score) {
        memcpy(piece, w->p2, sizeof(int) * w->pz->n);
        memcpy(rot, w->r2, (size_t)w->pz->n);
        *score = c;
    }
}

/* A local search with rolls of a searched placement (tsr__pz_refine): a block one cell off
 * beside a line of misplaced pieces goes back whole. Nothing is dirty at first, so it starts
 * with the rolls. With the table of D (up to about 2000 pieces, 700 with rotation) a term is a
 * few loads; without it (larger puzzles, GPU lists) most of a roll pass's terms are dot products
 * (432 pieces: 5-30 ms in all; 10,000 pieces: 80 ms a pass even with rectangles of at most 4
 * cells a side), so then only up to TSR_PZ_ROLL_PIECES pieces. Uses w->p2/r2. */
static tsr_status tsr__pz_polish(tsr__pz_work *w, int *piece, unsigned char *rot, double *score)
{
    const tsr__pz *pz = w->pz;
    tsr_status s;
    if (!pz->dmat && pz->n > TSR_PZ_ROLL_PIECES) return TSR_OK;
    memcpy(w->p2, piece, sizeof(int) * pz->n);
    memcpy(w->r2, rot, (size_t)pz->n);
    if ((s = tsr__pz_refine(pz, w->cache, piece, rot, w->p2, w->r2, 1))) return s;
    *score = tsr__pz_objective(pz, w->cache, piece, rot);
    return TSR_OK;
}

/* The tries of tsr__pz_regrow_region: try k grows the region again (greedily for k = 0, else
 * perturbed with salt k), searches it locally and leaves its placement in slot k. */
struct tsr__pz_tries {
    const tsr__pz *pz;
    const int *gy, *gx, *go;   /* the cells kept */
    int keep;
    const int *piece;          /* the placement before (what the local search visits first) */
    const unsigned char *rot;
    int *tp;                   /* per try: n cells */
    unsigned char *tr;
    double cost[TSR_PZ_REGION_TRIES];
    tsr_status status[TSR_PZ_REGION_TRIES];
    char msg[TSR_PZ_REGION_TRIES][256];
};

/* Tries [b, e) with one scratch (one thread). */
static void tsr__pz_try_range(void *ctx, int b, int e)
{
    struct tsr__pz_tries *j = ctx;
    size_t n = (size_t)j->pz->n;
    tsr__pz_work w;
    tsr_status init = tsr__pz_work_init(&w, j->pz), s = init;
    for (int k = b; k < e; k++) {
        int *p = j->tp + n * k;
        unsigned char *r = j->tr + n * k;
        if (!s)
            s = tsr__pz_grow_jittered(j->pz, j->gy, j->gx, j->go, j->keep, 1, k ? TSR_PZ_REGION_JITTER : 0,
                                      0x243F6A8885A308D3ull * (uint64_t)(k + 1), p, r, NULL, NULL);
        if (!s) s = tsr__pz_refine(j->pz, w.cache, p, r, j->piece, j->rot, 0);
        if (!s) j->cost[k] = tsr__pz_objective(j->pz, w.cache, p, r);
        j->status[k] = s;
        if (s) snprintf(j->msg[k], sizeof j->msg[k], "%s", tsr_last_error());
    }
    if (!init) tsr__pz_work_free(&w);
}

/* Randomised regrowths of the worst region: the box round the largest 4-connected group of
 * cells with a side of objective term TSR_PZ_KEEP or more, one cell wider on each side (when
 * it holds at most TSR_PZ_REGION_CELLS cells and not the whole grid), is emptied and grown
 * again TSR_PZ_REGION_TRIES times inside the grid, the first greedily and the others with
 * perturbed scores (tsr__pz_grow_jittered, salts fixed), each searched locally; the lowest
 * objective is kept when it is below *score (ties: the first). A greedy regrowth of a wrong
 * region of ambiguous texture rebuilds the same wrong blocks every time (the cameraman's grass
 * with rotation: a window over it regrown greedily ends at 654 against the solver's 649 and
 * the truth's 580); perturbed ones now and then start it from the right pieces (3 of the
 * first 95 ended within 2 of the truth). The tries run side by side on up to 'threads'
 * threads, each with its own scratch; the result does not depend on the thread count. */
static tsr_status tsr__pz_regrow_region(tsr__pz_work *w, int threads, int *piece, unsigned char *rot, double *score)
{
    const tsr__pz *pz = w->pz;
    int n = pz->n, R = pz->rows, C = pz->cols, per = pz->rotate ? 4 : 1, good, best = -1, bestsz = 0, keep = 0;
    int y0 = R, y1 = -1, x0 = C, x1 = -1, area, kept = -1;
    struct tsr__pz_tries j;
    int *comp = malloc(sizeof(int) * n), *queue = malloc(sizeof(int) * n);
    unsigned char *ok = malloc((size_t)n);
    tsr_status s = TSR_OK;
    if (!comp || !queue || !ok) {
        free(comp), free(queue), free(ok);
        return tsr__fail(TSR_E_NOMEM, "puzzle: out of memory for placement");
    }
    good = tsr__pz_confident(pz, w->cache, piece, rot, TSR_PZ_KEEP, w->gy, w->gx, w->go);
    memset(ok, 0, (size_t)n);
    for (int i = 0; i < good; i++) ok[w->gy[i] * C + w->gx[i]] = 1;
    for (int i = 0; i < n; i++) comp[i] = -1;
    for (int c0 = 0; c0 < n; c0++) {   /* the groups of doubtful cells, each named by its first cell */
        int h = 0, t = 0;
        if (ok[c0] || comp[c0] >= 0) continue;
        comp[c0] = c0, queue[t++] = c0;
        while (h < t) {
            int c = queue[h++];
            for (int d = 0; d < 4; d++) {
                int ny = c / C + tsr__pz_dy[d], nx = c % C + tsr__pz_dx[d], c2 = ny * C + nx;
                if (ny < 0 || ny >= R || nx < 0 || nx >= C || ok[c2] || comp[c2] >= 0) continue;
                comp[c2] = c0, queue[t++] = c2;
            }
        }
        if (t > bestsz) bestsz = t, best = c0;
    }
    for (int i = 0; i < n && best >= 0; i++)
        if (comp[i] == best) {
            y0 = i / C < y0 ? i / C : y0, y1 = i / C > y1 ? i / C : y1;
            x0 = i % C < x0 ? i % C : x0, x1 = i % C > x1 ? i % C : x1;
        }
    free(comp), free(queue), free(ok);
    if (best < 0) return TSR_OK;
    y0 = y0 > 0 ? y0 - 1 : 0, x0 = x0 > 0 ? x0 - 1 : 0;
    y1 = y1 < R - 1 ? y1 + 1 : R - 1, x1 = x1 < C - 1 ? x1 + 1 : C - 1;
    area = (y1 - y0 + 1) * (x1 - x0 + 1);
    if (area > TSR_PZ_REGION_CELLS || area >= n) return TSR_OK;
    for (int i = 0; i < n; i++) {
        int y = i / C, x = i % C;
        if (y >= y0 && y <= y1 && x >= x0 && x <= x1) continue;
        w->gy[keep] = y, w->gx[keep] = x, w->go[keep++] = piece[i] * per + (pz->rotate ? rot[i] : 0);
    }
    memset(&j, 0, sizeof j);
    j.pz = pz, j.gy = w->gy, j.gx = w->gx, j.go = w->go, j.keep = keep, j.piece = piece, j.rot = rot;
    j.tp = malloc(sizeof(int) * n * TSR_PZ_REGION_TRIES);
    j.tr = malloc((size_t)n * TSR_PZ_REGION_TRIES);
    if (!j.tp || !j.tr) {
        free(j.tp), free(j.tr);
        return tsr__fail(TSR_E_NOMEM, "puzzle: out of memory for placement");
    }
    tsr__parallel_for(TSR_PZ_REGION_TRIES, 1, threads, tsr__pz_try_range, &j);
    for (int k = 0; k < TSR_PZ_REGION_TRIES && !s; k++) {   /* the lowest objective; ties: the first */
        if (j.status[k]) s = tsr__fail(j.status[k], "%s", j.msg[k]);
        else if (j.cost[k] < *score) *score = j.cost[k], kept = k;
    }
    if (!s && kept >= 0) {
        memcpy(piece, j.tp + (size_t)n * kept, sizeof(int) * n);
        memcpy(rot, j.tr + (size_t)n * kept, (size_t)n);
    }
    free(j.tp), free(j.tr);
    return s;
}

/* Reframe: the largest best-buddy segment kept at each position the grid leaves it (when there
 * are few enough) and the rest grown again inside the grid; the lowest objective is
 * kept. It fixes pictures grown past one side of the frame early, whose far part then had to
 * fill the other side. */
static tsr_status tsr__pz_reframe(tsr__pz_work *w, int *piece, unsigned char *rot, double *score)
{
    const tsr__pz *pz = w->pz;
    int seg = tsr__pz_segment(pz, piece, rot, w->gy, w->gx, w->go), y0 = pz->rows, y1 = -1, x0 = pz->cols, x1 = -1;
    tsr_status s;
    if (seg < 2 || seg == pz->n) return TSR_OK;
    for (int i = 0; i < seg; i++) {
        y0 = w->gy[i] < y0 ? w->gy[i] : y0, y1 = w->gy[i] > y1 ? w->gy[i] : y1;
        x0 = w->gx[i] < x0 ? w->gx[i] : x0, x1 = w->gx[i] > x1 ? w->gx[i] : x1;
    }
    if ((long long)(pz->rows - (y1 - y0)) * (pz->cols - (x1 - x0)) > TSR_PZ_FRAMES ||
        (long long)(pz->rows - (y1 - y0)) * (pz->cols - (x1 - x0)) * pz->n > TSR_PZ_FRAME_WORK)
        return TSR_OK;
    for (int oy = 0; oy + (y1 - y0) < pz->rows; oy++)
        for (int ox = 0; ox + (x1 - x0) < pz->cols; ox++) {
            /* shift in place: gy/gx become grid coordinates of this position and back afterwards */
            for (int i = 0; i < seg; i++) w->gy[i] += oy - y0, w->gx[i] += ox - x0;
            s = tsr__pz_grow(pz, w->gy, w->gx, w->go, seg, 1, w->p2, w->r2, NULL, NULL);
            for (int i = 0; i < seg; i++) w->gy[i] -= oy - y0, w->gx[i] -= ox - x0;
            if (s) return s;
            tsr__pz_take(w, piece, rot, score);
        }
    return TSR_OK;
}

/* Next value of a start's deterministic generator (splitmix64). */
static uint64_t tsr__pz_next(uint64_t *st)
{
    uint64_t z = (*st += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* The group of cells 4-connected to cell c0 by sides of objective term below TSR_PZ_LNS_SEGTERM,
 * found from c0 (comp[c0] < 0) over cells not yet in a group (comp < 0): each gets comp = id and
 * is listed in queue (n ints). Returns the group's size. */
static int tsr__pz_group(tsr__pz_work *w, const int *piece, const unsigned char *rot, int c0, int id, int *comp,
                         int *queue)
{
    const tsr__pz *pz = w->pz;
    int R = pz->rows, C = pz->cols, per = pz->rotate ? 4 : 1, h = 0, t = 0;
#define PZ_O(i) (piece[i] * per + (pz->rotate ? rot[i] : 0))
    comp[c0] = id;
    queue[t++] = c0;
    while (h < t) {
        int c = queue[h++], y = c / C, x = c % C;
        for (int d = 0; d < 4; d++) {
            int ny = y + tsr__pz_dy[d], nx = x + tsr__pz_dx[d], c2;
            if (ny < 0 || ny >= R || nx < 0 || nx >= C) continue;
            c2 = ny * C + nx;
            if (comp[c2] < 0 && tsr__pz_term_fast(pz, w->cache, PZ_O(c), d, PZ_O(c2)) < TSR_PZ_LNS_SEGTERM) {
                comp[c2] = id;
                queue[t++] = c2;
            }
        }
    }
#undef PZ_O
    return t;
}

/* Segment move of the neighbourhood search: a 4-connected group of cells joined by edges of
 * objective term below TSR_PZ_LNS_SEGTERM (one of those of 2 to n/2 cells, chosen at random) is
 * moved rigidly so that one of its border sides meets that side's first or second listed partner
 * where that partner lies now; the cells it leaves and covers and those next to its new place
 * are emptied and grown again inside the grid around it and the rest. A wrong region whose
 * pieces fit together (a coat, a patch of sky) is moved whole, where a window would break it
 * up. Fills w->p2/r2 and returns 1, or 0 when nothing was proposed (*s set when growing
 * failed). Scratch: comp, newc (n ints), mark (n bytes), w->p3 (queue). */
static int tsr__pz_segmove(tsr__pz_work *w, uint64_t *st, const int *piece, const unsigned char *rot, int *comp,
                           int *newc, unsigned char *mark, tsr_status *s)
{
    const tsr__pz *pz = w->pz;
    int n = pz->n, R = pz->rows, C = pz->cols, per = pz->rotate ? 4 : 1, ncomp = 0, pickc = -1, cnt = 0;
    int cands = 0, keep = 0, found = 0, *queue = w->p3;
#define PZ_O(i) (piece[i] * per + (pz->rotate ? rot[i] : 0))
    for (int i = 0; i < n; i++) comp[i] = -1;
    /* the groups; one of 2..n/2 cells picked uniformly (reservoir sampling) */
    for (int c0 = 0; c0 < n; c0++) {
        int t;
        if (comp[c0] >= 0) continue;
        t = tsr__pz_group(w, piece, rot, c0, ncomp, comp, queue);
        if (t >= 2 && t <= n / 2) {
            cands++;
            if (tsr__pz_next(st) % (uint64_t)cands == 0) pickc = ncomp, cnt = t;
        }
        ncomp++;
    }
    if (pickc < 0) return 0;
    /* where it goes: a random border side of a random cell of it, against a listed partner */
    for (int tries = 0; tries < 8 && !found; tries++) {
        int k = (int)(tsr__pz_next(st) % (uint64_t)cnt), c = -1, d = (int)(tsr__pz_next(st) & 3), t, y, x, ny, nx, q;
        int ok = 1, dy, dx;
        const tsr__pz_cand *l;
        t = (int)(tsr__pz_next(st) & 1);
        for (int i = 0; i < n; i++)
            if (comp[i] == pickc && k-- == 0) {
                c = i;
                break;
            }
        y = c / C, x = c % C, ny = y + tsr__pz_dy[d], nx = x + tsr__pz_dx[d];
        if ((ny >= 0 && ny < R && nx >= 0 && nx < C && comp[ny * C + nx] == pickc) || t >= pz->k) continue;
        l = tsr__pz_list(pz, PZ_O(c), d);
        if (l[t].o < 0) continue;
        for (q = 0; q < n && piece[q] != tsr__pz_piece(pz, l[t].o); q++) {}
        if (comp[q] == pickc || PZ_O(q) != l[t].o) continue;
        dy = q / C - tsr__pz_dy[d] - y, dx = q % C - tsr__pz_dx[d] - x;   /* the cell goes next to q */
        if (!dy && !dx) continue;
        for (int i = 0; i < n && ok; i++) {
            int yy = i / C + dy, xx = i % C + dx;
            newc[i] = -1;
            if (comp[i] != pickc) continue;
            ok = yy >= 0 && yy < R && xx >= 0 && xx < C && yy * C + xx != q;
            newc[i] = yy * C + xx;
        }
        found = ok;
    }
    if (!found) return 0;
    /* mark: 1 its old place, 2 its new place, 3 next to its new place; all emptied */
    memset(mark, 0, (size_t)n);
    for (int i = 0; i < n; i++)
        if (comp[i] == pickc) mark[i] = 1;
    for (int i = 0; i < n; i++)
        if (comp[i] == pickc) mark[newc[i]] = 2;
    for (int i = 0; i < n; i++)
        if (comp[i] == pickc)
            for (int d = 0; d < 4; d++) {
                int ny = newc[i] / C + tsr__pz_dy[d], nx = newc[i] % C + tsr__pz_dx[d];
                if (ny >= 0 && ny < R && nx >= 0 && nx < C && !mark[ny * C + nx]) mark[ny * C + nx] = 3;
            }
    for (int i = 0; i < n; i++) {
        if (comp[i] == pickc) {
            w->gy[keep] = newc[i] / C, w->gx[keep] = newc[i] % C, w->go[keep++] = PZ_O(i);
        } else if (!mark[i]) {
            w->gy[keep] = i / C, w->gx[keep] = i % C, w->go[keep++] = PZ_O(i);
        }
    }
#undef PZ_O
    if ((*s = tsr__pz_grow(pz, w->gy, w->gx, w->go, keep, 1, w->p2, w->r2, NULL, NULL))) return 0;
    return 1;
}

/* Large neighbourhood search: windows of up to TSR_PZ_LNS_WIN x TSR_PZ_LNS_WIN cells, each
 * around a cell with a side whose objective term is TSR_PZ_KEEP or more (chosen at random, as
 * are the window's size and offset), are emptied, grown again inside the grid from the rest and
 * searched locally; a result is kept when the objective drops. The local search moves single
 * pieces, small blocks and confident segments; a wrong region joined by ambiguous sides (grass,
 * noise) needs its pieces taken out and placed again together. Without rotation every other
 * iteration (at random) is a segment move (tsr__pz_segmove) instead: with rotation it gained
 * nothing on the benchmark. 'chain' seeds the generator, so the result depends only on the
 * input. */
static tsr_status tsr__pz_lns(tsr__pz_work *w, int chain, int iters, int *piece, unsigned char *rot, double *score)
{
    const tsr__pz *pz = w->pz;
    int n = pz->n, R = pz->rows, C = pz->cols, per = pz->rotate ? 4 : 1;
    uint64_t st = 0x6A09E667F3BCC909ull * (uint64_t)(chain + 1);
    unsigned char *ok = malloc((size_t)n);
    int *comp = malloc(sizeof(int) * n), *newc = malloc(sizeof(int) * n);
    tsr_status s = TSR_OK;
    if (!ok || !comp || !newc) {
        free(ok), free(comp), free(newc);
        return tsr__fail(TSR_E_NOMEM, "puzzle: out of memory for placement");
    }
    for (int it = 0; it < iters; it++) {
        int h = 2 + (int)(tsr__pz_next(&st) % (TSR_PZ_LNS_WIN - 1));
        int wd = 2 + (int)(tsr__pz_next(&st) % (TSR_PZ_LNS_WIN - 1));
        int good = tsr__pz_confident(pz, w->cache, piece, rot, TSR_PZ_KEEP, w->gy, w->gx, w->go), pick, y0 = 0, x0 = 0;
        int keep = 0;
        double c;
        if (good == n) break;   /* nothing looks wrong */
        /* known orientation: every other iteration (at random) moves a segment instead */
        if (!pz->rotate && tsr__pz_next(&st) < (1ull << 63)) {
            if (!tsr__pz_segmove(w, &st, piece, rot, comp, newc, ok, &s)) {
                if (s) break;
                continue;
            }
        } else {
            h = h < R ? h : R, wd = wd < C ? wd : C;
            memset(ok, 0, (size_t)n);
            for (int i = 0; i < good; i++) ok[w->gy[i] * C + w->gx[i]] = 1;
            pick = (int)(tsr__pz_next(&st) % (uint64_t)(n - good));
            for (int i = 0; i < n; i++)
                if (!ok[i] && pick-- == 0) {   /* the window holds cell i somewhere */
                    y0 = i / C - (int)(tsr__pz_next(&st) % (uint64_t)h);
                    x0 = i % C - (int)(tsr__pz_next(&st) % (uint64_t)wd);
                    break;
                }
            y0 = y0 < 0 ? 0 : y0 > R - h ? R - h : y0;
            x0 = x0 < 0 ? 0 : x0 > C - wd ? C - wd : x0;
            for (int i = 0; i < n; i++) {
                int y = i / C, x = i % C;
                if (y >= y0 && y < y0 + h && x >= x0 && x < x0 + wd) continue;
                w->gy[keep] = y, w->gx[keep] = x, w->go[keep++] = piece[i] * per + (pz->rotate ? rot[i] : 0);
            }
            if (keep < 1) continue;
            if ((s = tsr__pz_grow(pz, w->gy, w->gx, w->go, keep, 1, w->p2, w->r2, NULL, NULL))) break;
        }
        if ((s = tsr__pz_refine(pz, w->cache, w->p2, w->r2, piece, rot, 0))) break;
        c = tsr__pz_objective(pz, w->cache, w->p2, w->r2);
        if (c < *score) {
            memcpy(piece, w->p2, sizeof(int) * n);
            memcpy(rot, w->r2, (size_t)n);
            *score = c;
        }
        /* with rotation, now and then rolls (without rotation they cost the deep field a little:
         * 54.8% -> 54.2% neighbor on 6 scrambles) */
        if (pz->rotate && (it + 1) % TSR_PZ_LNS_ROLLS == 0 && (s = tsr__pz_polish(w, piece, rot, score))) break;
    }
    free(ok), free(comp), free(newc);
    return s;
}

/* One start: grow from a seed (or its better turn, with 'turn'), then (with repair) regrow from the largest best-buddy segment,
 * refine, reframe, regrow from the confident cells, refine; piece/rot and its objective. */
static tsr_status tsr__pz_start(tsr__pz_work *w, int repair, int seed, int turn, int *piece, unsigned char *rot,
                                double *score, void (*progress)(void *, const char *, double), void *pctx)
{
    const tsr__pz *pz = w->pz;
    int n = pz->n, zero = 0, *sp = w->p3;
    unsigned char *sr = w->r3;
    tsr_status s;
    if ((s = tsr__pz_grow(pz, &zero, &zero, &seed, 1, 0, piece, rot, progress, pctx))) return s;
    *score = tsr__pz_objective(pz, w->cache, piece, rot);
    /* Unknown rotation on a non-square grid: the seed's turn decides the layout's orientation;
     * 'turn' asks to choose it here, by the objective after growing, when the starts do not try
     * both turns themselves. */
    if (turn) {
        int seed2 = tsr__pz_turn(seed, 1);
        if ((s = tsr__pz_grow(pz, &zero, &zero, &seed2, 1, 0, w->p2, w->r2, progress, pctx))) return s;
        tsr__pz_take(w, piece, rot, score);
    }
    if (!repair) return TSR_OK;
    /* The largest segment joined by best buddies stays, the rest grows again around it: fixes
     * pieces placed early in the wrong place and segments shifted against each other. */
    for (int it = 0; it < 4; it++) {
        int seg = tsr__pz_segment(pz, piece, rot, w->gy, w->gx, w->go);
        double before = *score;
        if (seg < 2 || seg == n) break;
        if (progress) progress(pctx, "repairing", (double)it / 4);
        if ((s = tsr__pz_grow(pz, w->gy, w->gx, w->go, seg, 0, w->p2, w->r2, NULL, NULL))) return s;
        tsr__pz_take(w, piece, rot, score);
        if (!(*score < before)) break;
    }
    if (progress) progress(pctx, "refining", 0);
    if ((s = tsr__pz_refine(pz, w->cache, piece, rot, NULL, NULL, 0))) return s;
    *score = tsr__pz_objective(pz, w->cache, piece, rot);
    /* sp/sr: the last refined state; a later search visits what differs from it first */
    memcpy(sp, piece, sizeof(int) * n);
    memcpy(sr, rot, (size_t)n);
    if ((s = tsr__pz_reframe(w, piece, rot, score))) return s;
    if (memcmp(sp, piece, sizeof(int) * n) || memcmp(sr, rot, (size_t)n)) {
        if ((s = tsr__pz_refine(pz, w->cache, piece, rot, sp, sr, 0))) return s;
        *score = tsr__pz_objective(pz, w->cache, piece, rot);
        memcpy(sp, piece, sizeof(int) * n);
        memcpy(sr, rot, (size_t)n);
    }
    /* Regrow inside the grid from the cells whose sides all look right (in one piece or not),
     * while that lowers the objective; then refine what changed. */
    for (int it = 0; it < TSR_PZ_REGROWS; it++) {
        int keep = tsr__pz_confident(pz, w->cache, piece, rot, TSR_PZ_KEEP, w->gy, w->gx, w->go);
        double before = *score;
        if (keep == n || keep < 2) break;
        if ((s = tsr__pz_grow(pz, w->gy, w->gx, w->go, keep, 1, w->p2, w->r2, NULL, NULL))) return s;
        tsr__pz_take(w, piece, rot, score);
        if (!(*score < before)) break;
    }
    if (memcmp(sp, piece, sizeof(int) * n) || memcmp(sr, rot, (size_t)n)) {
        if ((s = tsr__pz_refine(pz, w->cache, piece, rot, sp, sr, 0))) return s;
        *score = tsr__pz_objective(pz, w->cache, piece, rot);
    }
    return TSR_OK;
}

/* Block reassembly (tsr__pz_reassemble): the blocks of a placement are its groups of cells
 * joined by sides of objective term below TSR_PZ_LNS_SEGTERM; hypotheses come from the first
 * 'partners' listed partners of each border side. */
typedef struct {
    int M, S;                        /* the longer grid side; the scratch grid's side (3 M + 2) */
    int *py, *px, *po;               /* per piece: cell and oriented tile in its block's frame */
    int *blk, *next, *head, *size;   /* per piece its block; per block a list of pieces, its size */
    int *bh, *bw;                    /* per block: its bounding box (the frame's origin at its corner) */
    int *gs, *go, stamp;             /* scratch grid: one block's cells where gs == stamp, tiles in go */
    int *gs2, *go2, stamp2, on2;     /* a second one: block on2 (or -1) in its own frame */
    int **grid;                      /* per block of TSR_PZ_BLK_GRID cells or more (where memory allowed):
                                      * its cells in its own frame, piece + 1 (0: none) */
    uint64_t *hkey;                  /* hypotheses seen in one search (open addressing), stamped */
    int *hs, hstamp, hbits;          /* at most half full: 2^hbits >= 2 x partners x border sides */
} tsr__pz_blocks;

/* Coordinates (y, x) turned k quarter turns clockwise: (y, x) -> (x, -y) each turn, as the
 * relation (o1, d, o2) becomes (o1 turned k, d + k, o2 turned k). */
static void tsr__pz_turn_yx(int k, int y, int x, int *ty, int *tx)
{
    for (int i = 0; i < (k & 3); i++) {
        int t = y;
        y = x, x = -t;
    }
    *ty = y, *tx = x;
}

/* Mark block A's cells (and tiles) on the scratch grid. */
static void tsr__pz_blk_stamp(tsr__pz_blocks *b, int A)
{
    b->stamp++;
    for (int q = b->head[A]; q >= 0; q = b->next[q]) {
        int i = (b->py[q] + b->M) * b->S + b->px[q] + b->M;
        b->gs[i] = b->stamp, b->go[i] = b->po[q];
    }
}

/* Blocks this large keep a grid of their own, so that a smaller block's proposals against them
 * read it instead of stamping them on the second grid each time (the stamps were most of the
 * reassembly's time: the large blocks are everyone's partners, and one block's proposals go to
 * several of them in turn). */
#define TSR_PZ_BLK_GRID 16

/* (Re)build block A's own grid when it is large enough; without memory it has none (only slower). */
static void tsr__pz_blk_grid(tsr__pz_blocks *b, int A)
{
    size_t cells = (size_t)b->S * b->S;
    if (b->size[A] < TSR_PZ_BLK_GRID) return;
    if (!b->grid[A]) b->grid[A] = calloc(cells, sizeof(int));
    else memset(b->grid[A], 0, cells * sizeof(int));
    if (!b->grid[A]) return;
    for (int q = b->head[A]; q >= 0; q = b->next[q]) b->grid[A][(b->py[q] + b->M) * b->S + b->px[q] + b->M] = q + 1;
}

/* The gain of joining block B, turned k quarter turns and moved by (oy, ox), to block A (marked
 * on the grid): the sum over the sides where they touch of tau minus the objective's term, with
 * their count in *contacts; -INFINITY when they overlap or together would not fit the grid (in
 * either layout with rotation). */
static double tsr__pz_blk_gain(const tsr__pz *pz, tsr__pz_cache *cache, tsr__pz_blocks *b, int A, int B, int k,
                               int oy, int ox, float tau, int *contacts)
{
    int M = b->M, S = b->S, y0 = 0, y1 = b->bh[A] - 1, x0 = 0, x1 = b->bw[A] - 1, cnt = 0;
    double gain = 0;
    if (b->size[B] > b->size[A]) {
        /* B the larger: A's cells visit B's (stamped once on the second grid in B's frame), so
         * a proposal costs A's size, not B's. The joined box from B's turned box; the same
         * sides are summed, in another order. */
        int ik = (4 - k) & 3, cy, cx, ey, ex;
        tsr__pz_turn_yx(k, 0, 0, &cy, &cx);
        tsr__pz_turn_yx(k, b->bh[B] - 1, b->bw[B] - 1, &ey, &ex);
        cy += oy, cx += ox, ey += oy, ex += ox;
        y0 = cy < y0 ? cy : y0, y0 = ey < y0 ? ey : y0, y1 = cy > y1 ? cy : y1, y1 = ey > y1 ? ey : y1;
        x0 = cx < x0 ? cx : x0, x0 = ex < x0 ? ex : x0, x1 = cx > x1 ? cx : x1, x1 = ex > x1 ? ex : x1;
        if (!((y1 - y0 < pz->rows && x1 - x0 < pz->cols) || (pz->rotate && y1 - y0 < pz->cols && x1 - x0 < pz->rows)))
            return -INFINITY;
        const int *own = b->grid[B];
        if (!own && b->on2 != B) {
            b->stamp2++, b->on2 = B;
            for (int q = b->head[B]; q >= 0; q = b->next[q]) {
                int i = (b->py[q] + M) * S + b->px[q] + M;
                b->gs2[i] = b->stamp2, b->go2[i] = b->po[q];
            }
        }
        /* B's tile at index i of its frame, or -1 */
#define PZ_BT(i) (own ? (own[i] ? b->po[own[i] - 1] : -1) : b->gs2[i] == b->stamp2 ? b->go2[i] : -1)
        for (int q = b->head[A]; q >= 0; q = b->next[q]) {   /* overlap first, as below */
            int ty, tx;
            tsr__pz_turn_yx(ik, b->py[q] - oy, b->px[q] - ox, &ty, &tx);
            if (ty + M >= 0 && ty + M < S && tx + M >= 0 && tx + M < S && PZ_BT((ty + M) * S + tx + M) >= 0)
                return -INFINITY;
        }
        for (int q = b->head[A]; q >= 0; q = b->next[q]) {
            int ty, tx;
            tsr__pz_turn_yx(ik, b->py[q] - oy, b->px[q] - ox, &ty, &tx);
            for (int e = 0; e < 4; e++) {   /* B's cell on side e of A's: A is on its side e + 2 */
                int vy, vx, ny, nx, ob;
                tsr__pz_turn_yx(ik, tsr__pz_dy[e], tsr__pz_dx[e], &vy, &vx);
                ny = ty + vy + M, nx = tx + vx + M;
                if (ny < 0 || ny >= S || nx < 0 || nx >= S || (ob = PZ_BT(ny * S + nx)) < 0) continue;
                if (pz->rotate) ob = tsr__pz_turn(ob, k);
                gain += tau - tsr__pz_term_fast(pz, cache, ob, (e + 2) & 3, b->po[q]);
                cnt++;
            }
        }
#undef PZ_BT
        *contacts = cnt;
        return gain;
    }
    for (int q = b->head[B]; q >= 0; q = b->next[q]) {
        int ty, tx;
        tsr__pz_turn_yx(k, b->py[q], b->px[q], &ty, &tx);
        ty += oy, tx += ox;
        if (ty + M < 0 || ty + M >= S || tx + M < 0 || tx + M >= S || b->gs[(ty + M) * S + tx + M] == b->stamp)
            return -INFINITY;
        y0 = ty < y0 ? ty : y0, y1 = ty > y1 ? ty : y1, x0 = tx < x0 ? tx : x0, x1 = tx > x1 ? tx : x1;
    }
    if (!((y1 - y0 < pz->rows && x1 - x0 < pz->cols) || (pz->rotate && y1 - y0 < pz->cols && x1 - x0 < pz->rows)))
        return -INFINITY;
    for (int q = b->head[B]; q >= 0; q = b->next[q]) {
        int ty, tx, oq = pz->rotate ? tsr__pz_turn(b->po[q], k) : b->po[q];
        tsr__pz_turn_yx(k, b->py[q], b->px[q], &ty, &tx);
        ty += oy + M, tx += ox + M;
        for (int d = 0; d < 4; d++) {
            int ny = ty + tsr__pz_dy[d], nx = tx + tsr__pz_dx[d];
            if (ny < 0 || ny >= S || nx < 0 || nx >= S || b->gs[ny * S + nx] != b->stamp) continue;
            gain += tau - tsr__pz_term_fast(pz, cache, oq, d, b->go[ny * S + nx]);
            cnt++;
        }
    }
    *contacts = cnt;
    return gain;
}

/* Block A's best join: each of its border sides proposes its first 'partners' listed partners
 * where they would touch it, which places the partner's whole block (turned as the partner is
 * listed); each proposal is scored once (tsr__pz_blk_gain). Returns the gain (-INFINITY when
 * there is none; ties: the lower block, the first found) and the join in hB, hk, hy, hx. */
static double tsr__pz_blk_best(const tsr__pz *pz, tsr__pz_cache *cache, tsr__pz_blocks *b, int A, int partners,
                               float tau, int *hB, int *hk, int *hy, int *hx)
{
    double best = -INFINITY;
    int M = b->M, S = b->S;
    *hB = -1;
    tsr__pz_blk_stamp(b, A);
    b->hstamp++;
    for (int q = b->head[A]; q >= 0; q = b->next[q])
        for (int d = 0; d < 4; d++) {
            int ny = b->py[q] + tsr__pz_dy[d], nx = b->px[q] + tsr__pz_dx[d];
            const tsr__pz_cand *l = tsr__pz_list(pz, b->po[q], d);
            if (b->gs[(ny + M) * S + nx + M] == b->stamp) continue;   /* inside A */
            for (int t = 0; t < partners && t < pz->k; t++) {
                int o2 = l[t].o, p2, B, k, ty, tx, cnt = 0, oy, ox, dup = 0;
                uint64_t key, h;
                double g;
                if (o2 < 0) continue;
                p2 = tsr__pz_piece(pz, o2), B = b->blk[p2];
                if (B == A) continue;
                k = pz->rotate ? (o2 - b->po[p2]) & 3 : 0;
                tsr__pz_turn_yx(k, b->py[p2], b->px[p2], &ty, &tx);
                oy = ny - ty, ox = nx - tx;
                key = (((uint64_t)B * 4 + (uint64_t)k) << 32) | ((uint64_t)(oy + 4 * M) << 16) | (uint64_t)(ox + 4 * M);
                for (h = (key * 0x9E3779B97F4A7C15ull) >> (64 - b->hbits); b->hs[h] == b->hstamp;
                     h = (h + 1) & ((1u << b->hbits) - 1))
                    if (b->hkey[h] == key) {
                        dup = 1;
                        break;
                    }
                if (dup) continue;
                b->hs[h] = b->hstamp, b->hkey[h] = key;
                g = tsr__pz_blk_gain(pz, cache, b, A, B, k, oy, ox, tau, &cnt);
                if (g == -INFINITY || !cnt) continue;
                if (*hB < 0 || g > best || (g == best && B < *hB)) best = g, *hB = B, *hk = k, *hy = oy, *hx = ox;
            }
        }
    return best;
}

/* Join block B, turned k and moved by (oy, ox) in A's frame, into A; A's frame then starts at
 * its bounding box's corner again. */
static void tsr__pz_blk_join(const tsr__pz *pz, tsr__pz_blocks *b, int A, int B, int k, int oy, int ox)
{
    int last = -1, y0 = 0, x0 = 0, y1 = 0, x1 = 0, first = 1;
    for (int q = b->head[B]; q >= 0; q = b->next[q]) {
        int ty, tx;
        tsr__pz_turn_yx(k, b->py[q], b->px[q], &ty, &tx);
        b->py[q] = ty + oy, b->px[q] = tx + ox;
        if (pz->rotate) b->po[q] = tsr__pz_turn(b->po[q], k);
        b->blk[q] = A;
        last = q;
    }
    b->next[last] = b->head[A], b->head[A] = b->head[B], b->size[A] += b->size[B];
    b->head[B] = -1, b->size[B] = 0;
    if (b->on2 == A || b->on2 == B) b->on2 = -1;   /* the second grid's block changed */
    for (int q = b->head[A]; q >= 0; q = b->next[q], first = 0) {
        if (first || b->py[q] < y0) y0 = b->py[q];
        if (first || b->px[q] < x0) x0 = b->px[q];
        if (first || b->py[q] > y1) y1 = b->py[q];
        if (first || b->px[q] > x1) x1 = b->px[q];
    }
    for (int q = b->head[A]; q >= 0; q = b->next[q]) b->py[q] -= y0, b->px[q] -= x0;
    b->bh[A] = y1 - y0 + 1, b->bw[A] = x1 - x0 + 1;
    if (!b->grid[A]) b->grid[A] = b->grid[B], b->grid[B] = NULL;   /* B's grid, if any, serves A */
    free(b->grid[B]);
    b->grid[B] = NULL;
    tsr__pz_blk_grid(b, A);
}

/* Block reassembly of a placement (in place; *score its objective afterwards): the placement is
 * cut into blocks, its groups of cells joined by sides of objective term below
 * TSR_PZ_LNS_SEGTERM (single cells included), and the blocks are joined again, turned and
 * moved whole, best join first (the largest gain, sum over the touching sides of tau minus the
 * term: a larger tau values longer contacts more) until no join fits; the largest block is kept
 * (turned to the grid's layout), the rest grown around it greedily and searched locally. The
 * local moves and the windows of the neighbourhood search work on a few cells at a time; a block
 * in the wrong place or turn is fixed by them only piece by piece, and a single side of dark sky
 * carries about one nat of evidence, while a join of blocks is judged on all the sides they
 * share. The result is a different placement (a different basin), not always a lower objective:
 * the caller searches it further and compares. */
static tsr_status tsr__pz_reassemble(tsr__pz_work *w, float tau, int partners, int *piece, unsigned char *rot,
                                     double *score)
{
    const tsr__pz *pz = w->pz;
    int n = pz->n, R = pz->rows, C = pz->cols, per = pz->rotate ? 4 : 1, big = -1, keep = 0, k;
    int *hB, *hk, *hy, *hx, *queue, *cellblk;
    double *hg;
    tsr__pz_blocks b;
    tsr_status s = TSR_OK;
    memset(&b, 0, sizeof b);
    b.on2 = -1;
    b.M = R > C ? R : C, b.S = 3 * b.M + 2;
    /* a block of c cells has at most 2 c + 2 sides on its border */
    for (b.hbits = 10; (1ull << b.hbits) < 2ull * (unsigned)partners * (2ull * (unsigned)n + 2); b.hbits++) {}
    b.py = malloc(sizeof(int) * n), b.px = malloc(sizeof(int) * n), b.po = malloc(sizeof(int) * n);
    b.blk = malloc(sizeof(int) * n), b.next = malloc(sizeof(int) * n), b.head = malloc(sizeof(int) * n);
    b.size = calloc((size_t)n, sizeof(int)), b.bh = malloc(sizeof(int) * n), b.bw = malloc(sizeof(int) * n);
    b.gs = calloc((size_t)b.S * b.S, sizeof(int)), b.go = malloc(sizeof(int) * b.S * b.S);
    b.gs2 = calloc((size_t)b.S * b.S, sizeof(int)), b.go2 = malloc(sizeof(int) * b.S * b.S);
    b.hkey = malloc(sizeof(uint64_t) << b.hbits), b.hs = calloc((size_t)1 << b.hbits, sizeof(int));
    b.grid = calloc((size_t)n, sizeof(int *));
    hB = malloc(sizeof(int) * n), hk = malloc(sizeof(int) * n), hy = malloc(sizeof(int) * n);
    hx = malloc(sizeof(int) * n), hg = malloc(sizeof(double) * n), queue = w->p3;
    cellblk = malloc(sizeof(int) * n);
    if (!cellblk || !b.py || !b.px || !b.po || !b.blk || !b.next || !b.head || !b.size || !b.bh || !b.bw || !b.gs || !b.go ||
        !b.gs2 || !b.go2 || !b.hkey || !b.hs || !b.grid || !hB || !hk || !hy || !hx || !hg) {
        s = tsr__fail(TSR_E_NOMEM, "puzzle: out of memory for placement");
        goto done;
    }
#define PZ_O(i) (piece[i] * per + (pz->rotate ? rot[i] : 0))
    /* the blocks, each named by the piece of its first cell */
    for (int i = 0; i < n; i++) b.head[i] = -1, cellblk[i] = -1;
    for (int c0 = 0; c0 < n; c0++) {
        int t, A = piece[c0], y0 = R, x0 = C, y1 = 0, x1 = 0;
        if (cellblk[c0] >= 0) continue;
        t = tsr__pz_group(w, piece, rot, c0, A, cellblk, queue);
        for (int i = 0; i < t; i++) {
            int y = queue[i] / C, x = queue[i] % C;
            y0 = y < y0 ? y : y0, x0 = x < x0 ? x : x0, y1 = y > y1 ? y : y1, x1 = x > x1 ? x : x1;
        }
        for (int i = 0; i < t; i++) {
            int c = queue[i], p = piece[c];
            b.py[p] = c / C - y0, b.px[p] = c % C - x0, b.po[p] = PZ_O(c), b.blk[p] = A;
            b.next[p] = b.head[A], b.head[A] = p;
        }
        b.size[A] = t, b.bh[A] = y1 - y0 + 1, b.bw[A] = x1 - x0 + 1;
    }
#undef PZ_O
    for (int A = 0; A < n; A++)
        if (b.size[A]) tsr__pz_blk_grid(&b, A);
    for (int A = 0; A < n; A++)
        if (b.size[A]) hg[A] = tsr__pz_blk_best(pz, w->cache, &b, A, partners, tau, &hB[A], &hk[A], &hy[A], &hx[A]);
    for (;;) {   /* the best join first (ties: the lower block), then the blocks it concerns again */
        int A = -1, B;
        for (int a = 0; a < n; a++)
            if (b.size[a] && hB[a] >= 0 && (A < 0 || hg[a] > hg[A])) A = a;
        if (A < 0) break;
        B = hB[A];
        tsr__pz_blk_join(pz, &b, A, B, hk[A], hy[A], hx[A]);
        for (int a = 0; a < n; a++)
            if (b.size[a] && (a == A || hB[a] == A || hB[a] == B))
                hg[a] = tsr__pz_blk_best(pz, w->cache, &b, a, partners, tau, &hB[a], &hk[a], &hy[a], &hx[a]);
    }
    for (int a = 0; a < n; a++)
        if (b.size[a] && (big < 0 || b.size[a] > b.size[big])) big = a;
    k = b.bh[big] <= R && b.bw[big] <= C ? 0 : 1;   /* a block in the other layout turns once */
    for (int q = b.head[big]; q >= 0; q = b.next[q]) {
        int ty, tx;
        tsr__pz_turn_yx(k, b.py[q], b.px[q], &ty, &tx);
        w->gy[keep] = ty, w->gx[keep] = tx + (k ? b.bh[big] - 1 : 0);
        w->go[keep++] = pz->rotate ? tsr__pz_turn(b.po[q], k) : b.po[q];
    }
    if ((s = tsr__pz_grow(pz, w->gy, w->gx, w->go, keep, 0, piece, rot, NULL, NULL))) goto done;
    if ((s = tsr__pz_refine(pz, w->cache, piece, rot, NULL, NULL, 0))) goto done;
    *score = tsr__pz_objective(pz, w->cache, piece, rot);
done:
    free(b.py), free(b.px), free(b.po), free(b.blk), free(b.next), free(b.head), free(b.size), free(b.bh), free(b.bw);
    for (int i = 0; b.grid && i < n; i++) free(b.grid[i]);
    free(b.gs), free(b.go), free(b.gs2), free(b.go2), free(b.hkey), free(b.hs), free(b.grid);
    free(hB), free(hk), free(hy), free(hx), free(hg), free(cellblk);
    return s;
}

struct tsr__pz_starts {
    const tsr__pz *pz;
    int repair, turn;
    int lns;                  /* iterations of each chain of the search */
    int reasm;                /* chains 2 and on start from block reassemblies of their group's best */
    const int *seeds;
    int *piece;               /* per start, later per chain (slot g x 4 + c: group g, chain c): n cells */
    unsigned char *rot;
    double *score;
    tsr_status *status;
    char (*msg)[256];         /* a failed start's or chain's message (errors are per thread) */
    void (*progress)(void *, const char *, double);
    void *pctx;
};

/* Starts [b, e), each with its own scratch; results in their slots. */
static void tsr__pz_start_range(void *ctx, int b, int e)
{
    struct tsr__pz_starts *j = ctx;
    size_t n = (size_t)j->pz->n;
    for (int i = b; i < e; i++) {
        tsr__pz_work w;
        tsr_status s = tsr__pz_work_init(&w, j->pz);
        if (!s) {
            s = tsr__pz_start(&w, j->repair, j->seeds[i], j->turn, j->piece + n * i, j->rot + n * i, &j->score[i],
                              j->progress, j->pctx);
            tsr__pz_work_free(&w);
        }
        j->status[i] = s;
        if (s) snprintf(j->msg[i], sizeof j->msg[i], "%s", tsr_last_error());
    }
}

/* The search's groups, each in rounds of nc chains from its best so far. A group's next round
 * starts as soon as its own chains are done: the groups are independent, so the answer is the
 * one rounds in lock-step would give (and the same on any thread count), but no group waits for
 * another's slowest chain. Guarded by 'lock'; workers sleep on 'wake'. */
typedef struct {
    struct tsr__pz_starts *j;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    pthread_t caller;         /* progress is reported from the calling thread only */
    int groups, nc, rounds, live, ended;
    int round[TSR_PZ_GROUPS], running[TSR_PZ_GROUPS];
    unsigned taken[TSR_PZ_GROUPS];   /* chains of the round handed out (bit c: chain c) */
    unsigned all;                    /* taken[g] once every chain is out: nc bits */
    /* with reassemblies: the hash (tsr__pz_place_hash) of the group's best as the round began,
     * which is every reassembly chain's placement when it starts */
    uint64_t ghash[TSR_PZ_GROUPS];
    int idle[TSR_PZ_GROUPS];  /* rounds in a row without a lower objective; -1: the group has stopped */
    int gbest[TSR_PZ_GROUPS];
    double before[TSR_PZ_GROUPS];
    tsr_status status;        /* the first chain's failure: no further chains are handed out */
    char msg[256];
    void (*progress)(void *, const char *, double);
    void *pctx;
    /* Block reassemblies asked for so far (tsr__pz_reasm_cached): a reassembly is a function of
     * its placement and chain, and groups of one start, or groups that reached the same
     * placement, ask for the same ones (a quarter of them on the deep field; in the first round
     * 8 groups of 4 starts ask for at most 8 distinct ones of 24). */
    pthread_cond_t ready;     /* an entry's reassembly has finished */
    int nre, capre;
    struct tsr__pz_reasm_entry *re;
} tsr__pz_sched;

struct tsr__pz_reasm_entry {
    uint64_t hash;
    int role, done;           /* done: 0 being computed, 1 stored */
    int *in, *out;            /* the placement asked for and its reassembly (pieces) */
    unsigned char *rin, *rout;
    double score;
    tsr_status status;
    char msg[256];
};

/* FNV-1a over a placement: the reassemblies' cache key (with the chain). */
static uint64_t tsr__pz_place_hash(const int *piece, const unsigned char *rot, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t c = 0; c < n; c++) h = (h ^ (uint64_t)((unsigned)piece[c] * 4u + rot[c])) * 1099511628211ull;
    return h;
}

/* Block reassembly of slot i's placement for chain 'role' (tsr__pz_reassemble), computed once
 * per distinct placement and chain: a thread that asks for one being computed waits for it
 * (its result would be the same), so the answer does not depend on who computes it. Without
 * memory for an entry it is computed here uncached. Called as the chain starts, when the slot
 * holds its group's best of the round's start (hashed in q->ghash). */
static tsr_status tsr__pz_reasm_cached(tsr__pz_sched *q, tsr__pz_work *w, int i, int role)
{
    struct tsr__pz_starts *j = q->j;
    size_t n = (size_t)j->pz->n;
    int *piece = j->piece + n * i;
    unsigned char *rot = j->rot + n * i;
    uint64_t h = q->ghash[i / TSR_PZ_REASM_CHAINS];
    struct tsr__pz_reasm_entry *e = NULL;
    tsr_status s;
    pthread_mutex_lock(&q->lock);
    for (int k = 0; k < q->nre && !e; k++) {
        struct tsr__pz_reasm_entry *x = &q->re[k];
        if (x->hash == h && x->role == role && !memcmp(x->in, piece, sizeof(int) * n) && !memcmp(x->rin, rot, n)) e = x;
    }
    if (e) {
        while (!e->done) pthread_cond_wait(&q->ready, &q->lock);
        if (!e->status) {
            memcpy(piece, e->out, sizeof(int) * n);
            memcpy(rot, e->rout, n);
            j->score[i] = e->score;
        } else {
            tsr__fail(e->status, "%s", e->msg);
        }
        s = e->status;
        pthread_mutex_unlock(&q->lock);
        return s;
    }
    if (q->nre < q->capre) {
        e = &q->re[q->nre];
        e->in = malloc(sizeof(int) * n * 2), e->rin = malloc(n * 2);
        if (e->in && e->rin) {
            e->out = e->in + n, e->rout = e->rin + n;
            e->hash = h, e->role = role, e->done = 0;
            memcpy(e->in, piece, sizeof(int) * n);
            memcpy(e->rin, rot, n);
            q->nre++;
        } else {
            free(e->in), free(e->rin);
            e = NULL;
        }
    }
    pthread_mutex_unlock(&q->lock);
    s = tsr__pz_reassemble(w, tsr__pz_reasm_tau[role - 2], tsr__pz_reasm_partners[role - 2], piece, rot, &j->score[i]);
    if (e) {
        pthread_mutex_lock(&q->lock);
        e->status = s;
        if (s) {
            snprintf(e->msg, sizeof e->msg, "%s", tsr_last_error());
        } else {
            memcpy(e->out, piece, sizeof(int) * n);
            memcpy(e->rout, rot, n);
            e->score = j->score[i];
        }
        e->done = 1;
        pthread_cond_broadcast(&q->ready);
        pthread_mutex_unlock(&q->lock);
    }
    return s;
}

/* One chain of the search in slot i, in its group's round 'round' (with the slot, it seeds the
 * chain's generator): from the slot's placement, or from a block reassembly of it for chains 2
 * and on of a group with reassemblies; result, status and message in the slot. */
static void tsr__pz_chain(tsr__pz_sched *q, int i, int round)
{
    struct tsr__pz_starts *j = q->j;
    size_t n = (size_t)j->pz->n;
    int role = i % TSR_PZ_REASM_CHAINS;
    tsr__pz_work w;
    tsr_status s = tsr__pz_work_init(&w, j->pz);
    if (!s) {
        if (j->reasm && role >= 2)   /* sets the slot's score */
            s = tsr__pz_reasm_cached(q, &w, i, role);
        else
            j->score[i] = tsr__pz_objective(j->pz, w.cache, j->piece + n * i, j->rot + n * i);
        if (!s) s = tsr__pz_lns(&w, i + 64 * round, j->lns, j->piece + n * i, j->rot + n * i, &j->score[i]);
        tsr__pz_work_free(&w);
    }
    j->status[i] = s;
    if (s) snprintf(j->msg[i], sizeof j->msg[i], "%s", tsr_last_error());
}

/* Start group g's next round: each of its slots but its best gets a copy of its best. */
static void tsr__pz_round_begin(tsr__pz_sched *q, int g)
{
    struct tsr__pz_starts *j = q->j;
    size_t n = (size_t)j->pz->n;
    q->before[g] = j->score[q->gbest[g]];
    for (int c = 0; c < q->nc; c++) {
        int i = g * TSR_PZ_REASM_CHAINS + c;
        if (i == q->gbest[g]) continue;
        memcpy(j->piece + n * i, j->piece + n * q->gbest[g], sizeof(int) * n);
        memcpy(j->rot + n * i, j->rot + n * q->gbest[g], n);
    }
    q->running[g] = 0, q->taken[g] = 0;
    if (j->reasm) q->ghash[g] = tsr__pz_place_hash(j->piece + n * q->gbest[g], j->rot + n * q->gbest[g], n);
}

/* Group g's round is over (all its chains handed out and done): its best, and whether it goes
 * on (a lower objective within TSR_PZ_ROUND_IDLE rounds, rounds left, no failure). */
static void tsr__pz_round_end(tsr__pz_sched *q, int g)
{
    const double *score = q->j->score;
    int g0 = g * TSR_PZ_REASM_CHAINS, go_on;
    q->gbest[g] = g0;
    for (int c = 1; c < q->nc; c++)
        if (score[g0 + c] < score[q->gbest[g]]) q->gbest[g] = g0 + c;
    if (score[q->gbest[g]] < q->before[g] - 1e-9) q->idle[g] = 0;
    else q->idle[g]++;
    q->ended++;
    go_on = !q->status && q->idle[g] < TSR_PZ_ROUND_IDLE && ++q->round[g] < q->rounds;
    if (go_on) {
        tsr__pz_round_begin(q, g);
    } else {
        q->idle[g] = -1;
        q->live--;
    }
}

/* Whether the reassembly that chain c of group g starts from is being computed by another
 * thread now (asking for it would wait). By hash alone: only the order of handing out
 * depends on it. */
static int tsr__pz_chain_busy(const tsr__pz_sched *q, int g, int c)
{
    for (int k = 0; k < q->nre; k++)
        if (!q->re[k].done && q->re[k].role == c && q->re[k].hash == q->ghash[g]) return 1;
    return 0;
}

/* The next chain to hand out (its group in *g), or -1: reassemblies first (they take
 * longest), except one that another thread is computing (a sibling group's, from the same
 * placement: asking for it waits), which goes last; then plain chains. Within each kind the
 * group furthest behind (the fewest rounds ended; ties: the lower group). The order changes no
 * result. Going by group alone let the first groups run ahead and the last ones finish alone on
 * a few threads: on the H200's 16 cores this order took 8-17% off the deep field's end-to-end
 * solve, and the busy reassemblies going last about 3% more. */
static int tsr__pz_next_chain(const tsr__pz_sched *q, int *g)
{
    if (q->status) return -1;
    for (int pass = 0; pass < 3; pass++) {
        int best = -1, bc = -1;
        for (int k = 0; k < q->groups; k++) {
            if (q->idle[k] < 0 || q->taken[k] == q->all) continue;
            if (best >= 0 && q->round[k] >= q->round[best]) continue;
            for (int i = 0; i < q->nc; i++) {
                int c = q->j->reasm ? (i + 2) % q->nc : i, lng = q->j->reasm && c >= 2;   /* 2, 3, 0, 1 */
                if (q->taken[k] >> c & 1) continue;
                if (pass == 0 ? lng && !tsr__pz_chain_busy(q, k, c) : pass == 1 ? !lng : 1) {
                    best = k, bc = c;
                    break;
                }
            }
        }
        if (best >= 0) {
            *g = best;
            return bc;
        }
    }
    return -1;
}

/* A worker: takes the next chain of any group with chains left to hand out, runs it, and ends
 * its group's round when it was the last; sleeps while every chain is out; returns when every
 * group has stopped. The range is ignored (the pool may run it once or on several threads). */
static void tsr__pz_sched_run(void *ctx, int b, int e)
{
    tsr__pz_sched *q = ctx;
    (void)b, (void)e;
    pthread_mutex_lock(&q->lock);
    while (q->live > 0) {
        int g = -1, c = tsr__pz_next_chain(q, &g);
        if (c < 0) {
            pthread_cond_wait(&q->wake, &q->lock);
            continue;
        }
        q->taken[g] |= 1u << c;
        int i = g * TSR_PZ_REASM_CHAINS + c, round = q->round[g];
        q->running[g]++;
        pthread_mutex_unlock(&q->lock);
        tsr__pz_chain(q, i, round);
        pthread_mutex_lock(&q->lock);
        q->running[g]--;
        if (q->j->status[i] && !q->status) {   /* stop handing out; groups end as their chains return */
            q->status = q->j->status[i];
            snprintf(q->msg, sizeof q->msg, "%s", q->j->msg[i]);
            for (int k = 0; k < q->groups; k++)
                if (q->idle[k] >= 0) q->taken[k] = q->all;
            for (int k = 0; k < q->groups; k++)
                if (q->idle[k] >= 0 && k != g && !q->running[k]) tsr__pz_round_end(q, k);
        }
        if (q->taken[g] == q->all && !q->running[g]) tsr__pz_round_end(q, g);
        pthread_cond_broadcast(&q->wake);
        if (q->progress && pthread_equal(pthread_self(), q->caller)) {
            double f = (double)q->ended / (q->groups * q->rounds);
            pthread_mutex_unlock(&q->lock);
            q->progress(q->pctx, "searching", f);
            pthread_mutex_lock(&q->lock);
        }
    }
    pthread_mutex_unlock(&q->lock);
}

/* Contract: pz has features and lists; writes a complete placement (permutation) of rows x cols
 * cells and its total cost (tsr__pz_total). Seeds: 4 when the puzzle has up to 1000 oriented
 * tiles, fewer up to 4000, then 1 (a start costs about as much as one greedy placement); on
 * several threads they run side by side. Without repair: the greedy placement from the best
 * seed. The result does not depend on the thread count. */
tsr_status tsr__pz_place(const tsr__pz *pz, int repair, int threads, int *piece, unsigned char *rot, double *cost,
                         void (*progress)(void *, const char *, double), void *pctx)
{
    int rounds_run = 0, n = pz->n, seeds[8], want = !repair ? 1 : pz->m <= 1000 ? 4 : pz->m <= 4000 ? 2 : 1, ns, best = 0;
    /* rotation on a non-square grid: several starts try each seed in both layouts (the choice
     * right after growing was wrong on the bilinear cameraman, a 90-degree picture that cannot
     * fit); a single start chooses after growing */
    int turns = pz->rotate && pz->rows != pz->cols && want > 1 ? 2 : 1;
    struct tsr__pz_starts j;
    tsr_status s = TSR_OK;
    double t0 = tsr__pz_now(), t1 = t0, t2 = t0;
    ns = tsr__pz_seeds(pz, want, seeds);
    for (int i = ns - 1; i >= 0 && turns == 2; i--) {
        seeds[2 * i] = seeds[i];
        seeds[2 * i + 1] = tsr__pz_turn(seeds[i], 1);
    }
    ns *= turns;
    int slots = ns > TSR_PZ_REASM_CHAINS * TSR_PZ_GROUPS ? ns : TSR_PZ_REASM_CHAINS * TSR_PZ_GROUPS;
    memset(&j, 0, sizeof j);
    j.pz = pz, j.repair = repair, j.seeds = seeds;
    j.turn = pz->rotate && pz->rows != pz->cols && turns == 1;
    j.piece = malloc(sizeof(int) * n * slots);
    j.rot = malloc((size_t)n * slots);
    j.score = malloc(sizeof(double) * slots);
    j.status = malloc(sizeof(tsr_status) * slots);
    j.msg = malloc(sizeof *j.msg * slots);
    if (!j.piece || !j.rot || !j.score || !j.status || !j.msg) {
        s = tsr__fail(TSR_E_NOMEM, "puzzle: out of memory for placement");
        goto done;
    }
    if (ns == 1) {   /* progress only from the calling thread */
        j.progress = progress;
        j.pctx = pctx;
    }
    tsr__parallel_for(ns, 1, threads, tsr__pz_start_range, &j);
    for (int i = 0; i < ns; i++) {
        if (j.status[i]) {
            s = tsr__fail(j.status[i], "%s", j.msg[i]);
            goto done;
        }
        if (j.score[i] < j.score[best]) best = i;   /* ties: the better seed */
    }
    t1 = tsr__pz_now();
    /* the best start, searched further by the chains (each from it; ties: the lower chain) */
    j.lns = TSR_PZ_LNS_WORK / n < TSR_PZ_LNS_ITERS ? TSR_PZ_LNS_WORK / n : TSR_PZ_LNS_ITERS;
    if (repair && j.lns > 0 && n >= 4) {
        int nc = ns < TSR_PZ_LNS_CHAINS ? ns : TSR_PZ_LNS_CHAINS, rounds = 1, groups = 1;
        double before[TSR_PZ_GROUPS];
        /* A placement of which a sizeable share looks wrong: groups of rounds of short chains,
         * half of them from block reassemblies, the lowest objective of all kept as before.
         * Where the rolls run (the table of D, or few pieces), with 4 starts or more, and grids
         * of aspect up to about 7:1 (the reassembly's scratch grid is (3 x longer side)^2 cells).
         * The chains of all groups share the threads (tsr__pz_sched_run). */
        size_t side = 3 * (size_t)(pz->rows > pz->cols ? pz->rows : pz->cols) + 2;
        if (ns >= 4 && (pz->dmat || n <= TSR_PZ_ROLL_PIECES) && side * side <= 64 * (size_t)n) {
            tsr__pz_work w;
            int good;
            if ((s = tsr__pz_work_init(&w, pz))) goto done;
            good = tsr__pz_confident(pz, w.cache, j.piece + (size_t)n * best, j.rot + (size_t)n * best, TSR_PZ_KEEP,
                                     w.gy, w.gx, w.go);
            tsr__pz_work_free(&w);
            if (n - good >= TSR_PZ_DOUBT_SHARE * n) {
                j.reasm = 1;
                /* 12 groups of the 4 starts: the deep field (48 scrambles) 75.8% (4 groups) -> 79.1%
                 * (8) -> 81.9% neighbor with known orientation; with rotation 4 and 8 gave the same
                 * (16 scrambles) */
                nc = TSR_PZ_REASM_CHAINS, rounds = TSR_PZ_ROUNDS;
                groups = pz->rotate ? TSR_PZ_GROUPS_ROT : TSR_PZ_GROUPS;
                j.lns = TSR_PZ_ROUND_ITERS;
            }
        }
        /* group g's first placement: the (g mod starts)-th best start (ties: the lower seed), into
         * its first slot; the starts' slots are free after this (the search only adds slots) */
        {
            int order[8], *tp = malloc(sizeof(int) * n * groups);
            unsigned char *tr = malloc((size_t)n * groups);
            if (!tp || !tr) {
                free(tp), free(tr);
                s = tsr__fail(TSR_E_NOMEM, "puzzle: out of memory for placement");
                goto done;
            }
            for (int i = 0; i < ns; i++) order[i] = i;
            for (int a = 1; a < ns; a++)
                for (int b = a; b > 0 && j.score[order[b]] < j.score[order[b - 1]]; b--) {
                    int t = order[b];
                    order[b] = order[b - 1], order[b - 1] = t;
                }
            for (int g = 0; g < groups; g++) {
                int from = order[g % ns];
                memcpy(tp + (size_t)n * g, j.piece + (size_t)n * from, sizeof(int) * n);
                memcpy(tr + (size_t)n * g, j.rot + (size_t)n * from, (size_t)n);
                before[g] = j.score[from];
            }
            for (int g = 0; g < groups; g++) {
                size_t at = (size_t)g * TSR_PZ_REASM_CHAINS;
                memcpy(j.piece + n * at, tp + (size_t)n * g, sizeof(int) * n);
                memcpy(j.rot + n * at, tr + (size_t)n * g, (size_t)n);
                j.score[at] = before[g];
            }
            free(tp), free(tr);
        }
        j.progress = NULL;
        if (progress) progress(pctx, "searching", 0);
        {
            tsr__pz_sched q;
            memset(&q, 0, sizeof q);
            q.j = &j, q.groups = groups, q.nc = nc, q.rounds = rounds, q.live = groups, q.all = (1u << nc) - 1;
            q.caller = pthread_self(), q.progress = progress, q.pctx = pctx;
            pthread_mutex_init(&q.lock, NULL);
            pthread_cond_init(&q.wake, NULL);
            pthread_cond_init(&q.ready, NULL);
            if (j.reasm) {   /* at most one entry per reassembly chain run */
                q.capre = groups * (nc - 2) * rounds;
                q.re = calloc((size_t)q.capre, sizeof *q.re);
                if (!q.re) q.capre = 0;   /* uncached: only slower */
            }
            for (int g = 0; g < groups; g++) {
                q.gbest[g] = g * TSR_PZ_REASM_CHAINS;
                tsr__pz_round_begin(&q, g);
            }
            /* one worker per thread, at most one per chain that can run at once */
            tsr__parallel_for(groups * nc, 1, threads < groups * nc ? threads : groups * nc, tsr__pz_sched_run, &q);
            for (int k = 0; k < q.nre; k++) free(q.re[k].in), free(q.re[k].rin);
            free(q.re);
            pthread_cond_destroy(&q.ready);
            pthread_cond_destroy(&q.wake);
            pthread_mutex_destroy(&q.lock);
            if (q.status) {
                s = tsr__fail(q.status, "%s", q.msg);
                goto done;
            }
            best = q.gbest[0];
            for (int g = 0; g < groups; g++) {
                /* round[g] counts the rounds after which it went on; the last ran too unless the limit ended it */
                int ran = q.round[g] + (q.round[g] < rounds);
                if (j.score[q.gbest[g]] < j.score[best]) best = q.gbest[g];
                if (ran > rounds_run) rounds_run = ran;
            }
        }
    }
    t2 = tsr__pz_now();
    memcpy(piece, j.piece + (size_t)n * best, sizeof(int) * n);
    memcpy(rot, j.rot + (size_t)n * best, (size_t)n);
    /* Last, rolls for the result (with rotation the chains' last ones may come before their
     * last iterations, or there were none). Here and in the chains, not in the starts or in
     * every local search: in every search they changed its course for the worse on the
     * benchmark (the cameraman with rotation no better, the deep field's objective higher); in
     * the starts too they gained nothing. */
    if (repair && n >= 4 && (pz->dmat || n <= TSR_PZ_ROLL_PIECES)) {
        tsr__pz_work w;
        double sc = 0;
        if ((s = tsr__pz_work_init(&w, pz))) goto done;
        s = tsr__pz_polish(&w, piece, rot, &sc);
        /* with rotation, then randomised regrowths of the worst region while they gain (without
         * rotation they changed nothing on the benchmark), each success polished again */
        for (int r = 0; r < TSR_PZ_REGION_ROUNDS && !s && pz->rotate; r++) {
            double before = sc;
            if ((s = tsr__pz_regrow_region(&w, threads, piece, rot, &sc)) || !(sc < before)) break;
            s = tsr__pz_polish(&w, piece, rot, &sc);
        }
        tsr__pz_work_free(&w);
        if (s) goto done;
    }
    *cost = tsr__pz_total(pz, piece, rot);
    if (tsr__log_enabled())
        fprintf(stderr, "tessera: puzzle: placement: %d starts %.1f ms, search %.1f ms (%d rounds), polish %.1f ms\n",
                ns, (t1 - t0) * 1e3, (t2 - t1) * 1e3, rounds_run, (tsr__pz_now() - t2) * 1e3);
done:
    free(j.piece), free(j.rot), free(j.score), free(j.status), free(j.msg);
    return s;
}
