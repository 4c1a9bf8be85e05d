/* Private interface of the jigsaw solver (src/cpu/puzzle*.c, src/cuda/puzzle.cu).
 *
 * Vocabulary: n pieces (tiles of the scrambled image), "oriented tiles" o: without rotation
 * o = piece; with rotation o = piece * 4 + r, the piece turned r quarter turns clockwise, so
 * m = n or 4n oriented tiles. Directions d: 0 up, 1 right, 2 down, 3 left.
 * D(o1, d, o2): dissimilarity of o2 lying on side d of o1 (Mahalanobis gradient
 * compatibility, Gallagher 2012, both ways, plus the log-likelihood ratio of a Gaussian model of
 * the pixels across the boundary; D can be negative), expanded so that it is one dot product of
 * a "right" feature vector of the left tile and a "left" feature vector of the right tile:
 *   D(a, right, b) = fr[a] . fl[b]
 * Vertical relations use the same form on transposed tiles (no rotation), or the identity
 * D(a, down, b) = D(a', right, b') with x' = x turned a further 3 quarter turns (rotation). */
#ifndef TSR_PUZZLE_CORE_H
#define TSR_PUZZLE_CORE_H

#include "../core/internal.h"
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __CUDACC__
#define TSR_PZ_HD __host__ __device__
#else
#define TSR_PZ_HD
#endif

#define TSR_PZ_K 16            /* neighbours kept per oriented tile and side */
#define TSR_PZ_EXACT_MAX 9     /* largest piece count the exact enumeration handles */
#define TSR_PZ_BNB_MAX 30      /* largest piece count of the branch-and-bound search (< 32) */
/* Largest tile (pixels) with the joint boundary model in D (puzzle_compat.c): its statistics
 * cost grows with the tile's cube and its matrices with (4 x tile x channels)^2. */
#define TSR_PZ_JMAXP 48

static const int tsr__pz_dy[4] = {-1, 0, 1, 0};
static const int tsr__pz_dx[4] = {0, 1, 0, -1};

/* One candidate neighbour: oriented tile and its dissimilarity. */
typedef struct tsr__pz_cand {
    float d;
    int o;
} tsr__pz_cand;

/* Features and neighbour lists of one puzzle. */
typedef struct tsr__pz {
    int n, rows, cols, tile, channels, rotate, m;
    int dim;                   /* feature length, a multiple of 4 */
    float *fr[2], *fl[2];      /* [0]: tiles, [1]: transposed tiles (no rotation only); m x dim */
    int k;                     /* list length: min(TSR_PZ_K, candidates) */
    tsr__pz_cand *list;        /* m x 4 x k: nearest oriented tiles on each side, ascending */
    float *lift;               /* m x 4: raises the side's best D to the median first-second gap */
    /* Every D of the left-right relation (m x m, row o1, column o2) and, without rotation, then
     * of the top-bottom one, as the top-k computed them on either backend (bit for bit
     * tsr__pz_dot's), kept when they fit TSR_PZ_DMAT_BYTES; NULL otherwise: tsr__pz_dis computes
     * what it needs. */
    float *dmat;
    /* With dmat: every objective term (tsr__pz_term's values, 2 x m x m, laid out as
     * tsr__pz_edge's keys), built once by tsr__pz_lists for the placement's threads to share;
     * NULL otherwise (terms are then computed and cached per thread). */
    float *term;
    /* Threads the placement may use inside one start (set by the caller; 0 counts as 1): the
     * greedy's scans of every unused tile, which dominate large puzzles' starts, split over
     * them when not already inside a parallel loop. Results do not depend on it. */
    int threads;
} tsr__pz;

/* Largest all-pairs table of D kept (bytes): 432 pieces take 1.5 MB, 12 MB with rotation. */
#define TSR_PZ_DMAT_BYTES ((size_t)32 << 20)

/* The piece of an oriented tile. */
static inline int tsr__pz_piece(const tsr__pz *pz, int o) { return pz->rotate ? o >> 2 : o; }
/* Oriented tile turned by 'turns' more quarter turns clockwise (rotation puzzles only). */
static inline int tsr__pz_turn(int o, int turns) { return (o & ~3) | ((o + turns) & 3); }

/* Where pixel (y, x) of a P x P tile turned 'turns' quarter turns clockwise comes from in the
 * unturned tile (one turn: out[y][x] = in[P-1-x][y]). */
static inline void tsr__pz_turned_src(int P, int turns, int y, int x, int *sy, int *sx)
{
    switch (turns & 3) {
    case 1: *sy = P - 1 - x, *sx = y; break;
    case 2: *sy = P - 1 - y, *sx = P - 1 - x; break;
    case 3: *sy = x, *sx = P - 1 - y; break;
    default: *sy = y, *sx = x;
    }
}

/* Shape check of scramble, render, solve and scoring (puzzle.c): a host 8-bit image of 1-4
 * channels cut into rows x cols square tiles; *tile receives their size. */
tsr_status tsr__pz_check_image(const char *what, const tsr_image *src, int rows, int cols, int *tile);

/* Build features of every oriented tile of a rows x cols puzzle image (host, 8-bit). */
tsr_status tsr__pz_features(tsr__pz *pz, const tsr_image *src, int rows, int cols, int rotate, int threads);
void tsr__pz_free(tsr__pz *pz);
/* D(o1, d, o2) computed from the features (float accumulation in a fixed order), or read from
 * pz->dmat, which holds the same value. */
float tsr__pz_dis(const tsr__pz *pz, int o1, int d, int o2);
/* Dot product of two feature vectors, the one definition every CPU path uses. */
float tsr__pz_dot(const float *a, const float *b, int dim);

/* Row and column top-k of the m x m matrix M[i][j] = X[i] . Y[j] (excluding j of the same piece
 * as i; 'rot4': pieces are groups of 4 consecutive indices). rows_out[i*stride + t] gets the
 * t-th smallest over j for row i, cols_out[j*stride + t] the t-th smallest over i for column j,
 * ties to the lower index. When 'full' is not NULL it also receives all of M (m x m floats, row
 * i at full + i m), the same values on every backend. Implemented per backend (a compatibility
 * variant). */
typedef tsr_status (*tsr__pz_topk_fn)(const float *X, const float *Y, int m, int dim, int rot4, int k,
                                      tsr__pz_cand *rows_out, tsr__pz_cand *cols_out, int stride,
                                      const tsr_exec *ex, float *full);
tsr_status tsr__pz_topk_cpu(const float *X, const float *Y, int m, int dim, int rot4, int k,
                            tsr__pz_cand *rows_out, tsr__pz_cand *cols_out, int stride, const tsr_exec *ex,
                            float *full);
tsr_status tsr__pz_topk_cuda(const float *X, const float *Y, int m, int dim, int rot4, int k,
                             tsr__pz_cand *rows_out, tsr__pz_cand *cols_out, int stride, const tsr_exec *ex,
                             float *full);
/* Tests only: nonzero makes the CPU kernels that have an AVX2 build use their baseline build
 * (the results are the same; the tests check it). */
extern int tsr__pz_baseline;
/* Fill pz->list with the chosen top-k implementation (progress optional). */
tsr_status tsr__pz_lists(tsr__pz *pz, tsr__pz_topk_fn fn, const tsr_exec *ex);

/* Exact search: dense costs dr[o1*m+o2] = D(o1, right, o2), dd likewise for down (double).
 * Placement index idx in [0, count): perm = idx mod n! (factorial number system), rotation
 * digits (base 4, cell i in bits 2i..2i+1) = idx / n!. */
typedef tsr_status (*tsr__pz_exact_fn)(const double *dr, const double *dd, int rows, int cols, int rotate,
                                       uint64_t count, uint64_t *best_idx, double *best_cost, const tsr_exec *ex);
tsr_status tsr__pz_exact_cpu(const double *dr, const double *dd, int rows, int cols, int rotate, uint64_t count,
                             uint64_t *best_idx, double *best_cost, const tsr_exec *ex);
tsr_status tsr__pz_exact_cuda(const double *dr, const double *dd, int rows, int cols, int rotate, uint64_t count,
                              uint64_t *best_idx, double *best_cost, const tsr_exec *ex);

/* Branch and bound without rotation (up to TSR_PZ_BNB_MAX pieces, dense n x n costs): the
 * optimum with the enumeration's tie rule, or 0 when it needed more than 'limit' nodes. */
int tsr__pz_bnb(const double *dr, const double *dd, int rows, int cols, double upper, uint64_t limit, int *o,
                double *cost);

/* Decode a placement index into oriented tiles per cell (o[i] = piece or piece*4+rot). */
static inline TSR_PZ_HD void tsr__pz_decode(uint64_t idx, int n, int rotate, uint64_t nfact, int *o)
{
    uint64_t p = idx % nfact, r = idx / nfact, f = nfact;
    unsigned used = 0;
    for (int i = 0; i < n; i++) {
        int d, k, j = 0;
        f /= (uint64_t)(n - i);
        d = (int)(p / f);
        p %= f;
        for (k = 0;; k++) /* the d-th unused piece */
            if (!(used >> k & 1u) && j++ == d) break;
        used |= 1u << k;
        o[i] = rotate ? k * 4 + (int)((r >> (2 * i)) & 3u) : k;
    }
}

/* Cost of a decoded placement: for each cell in raster order, its left edge then its top edge. */
static inline TSR_PZ_HD double tsr__pz_cost(const int *o, int rows, int cols, int m, const double *dr,
                                            const double *dd)
{
    double c = 0;
    for (int y = 0; y < rows; y++)
        for (int x = 0; x < cols; x++) {
            int i = y * cols + x;
            if (x) c += dr[(size_t)o[i - 1] * m + o[i]];
            if (y) c += dd[(size_t)o[i - cols] * m + o[i]];
        }
    return c;
}

/* The k nearest partners of oriented tile o on side d, ascending. */
static inline const tsr__pz_cand *tsr__pz_list(const tsr__pz *pz, int o, int d)
{
    return pz->list + ((size_t)o * 4 + d) * pz->k;
}
/* D(o1, d, o2) lifted by the larger lift of the two sides, never negative (the confidences
 * and the objective divide by second-best values): from o1's list when present, else computed. */
float tsr__pz_lookup(const tsr__pz *pz, int o1, int d, int o2);

/* D(o1, d, o2) from pz->dmat, which must be there (what tsr__pz_dis returns then); inline for
 * the hot loops of the placement. */
static inline float tsr__pz_dtab(const tsr__pz *pz, int o1, int d, int o2)
{
    size_t m = (size_t)pz->m;
    if (d == 0 || d == 3) {   /* o1 below or right of o2 */
        int t = o1;
        o1 = o2, o2 = t, d = (d + 2) & 3;
    }
    if (d == 1) return pz->dmat[o1 * m + o2];
    if (pz->rotate) return pz->dmat[tsr__pz_turn(o1, 3) * m + tsr__pz_turn(o2, 3)];
    return pz->dmat[m * m + o1 * m + o2];
}

/* tsr__pz_lookup when pz->dmat is there: the value, lifted, never negative. */
static inline float tsr__pz_lookup_tab(const tsr__pz *pz, int o1, int d, int o2)
{
    float a = pz->lift ? pz->lift[o1 * 4 + d] : 0, b = pz->lift ? pz->lift[o2 * 4 + ((d + 2) & 3)] : 0, v;
    v = tsr__pz_dtab(pz, o1, d, o2);
    v += a > b ? a : b;
    return v > 0 ? v : 0;
}
/* Second-best D on side d of o lifted by the side's lift (the normaliser of confidences), never
 * below a tiny positive. */
float tsr__pz_second(const tsr__pz *pz, int o, int d);

/* Monotonic seconds (stage times logged with TSR_LOG). */
double tsr__pz_now(void);

/* Greedy best-buddy placement; with 'repair', from several seeds (on up to 'threads' threads),
 * each repaired and refined, the lowest objective kept. out arrays have rows*cols entries. */
tsr_status tsr__pz_place(const tsr__pz *pz, int repair, int threads, int *piece, unsigned char *rot, double *cost,
                         void (*progress)(void *, const char *, double), void *pctx);
/* The refinement's objective: the sum over adjacent sides of D normalised by the geometric mean
 * of the two sides' second-best D, each term capped (src/cpu/puzzle_refine.c). A cache holds the
 * normalisers and computed terms; one per thread. */
typedef struct tsr__pz_cache tsr__pz_cache;
tsr__pz_cache *tsr__pz_cache_new(const tsr__pz *pz);   /* NULL when out of memory */
void tsr__pz_cache_free(tsr__pz_cache *c);
double tsr__pz_objective(const tsr__pz *pz, tsr__pz_cache *c, const int *piece, const unsigned char *rot);
/* The objective's term of o2 on side d of o1 (normalised, capped). */
float tsr__pz_term(tsr__pz_cache *c, int o1, int d, int o2);
/* Index of the pair (o1, d, o2) in pz->term: each pair once, as o2 right of (d 1) or below (d 2)
 * o1, the other two sides turned round. */
static inline size_t tsr__pz_term_key(const tsr__pz *pz, int o1, int d, int o2)
{
    if (d == 0 || d == 3) {
        int t = o1;
        o1 = o2, o2 = t, d = (d + 2) & 3;
    }
    return ((size_t)o1 * 2 + (d == 2)) * (size_t)pz->m + (size_t)o2;
}
/* tsr__pz_term, with the table's lookup inlined into the caller's loop (the searches' hot
 * paths); c is pz's cache. */
static inline float tsr__pz_term_fast(const tsr__pz *pz, tsr__pz_cache *c, int o1, int d, int o2)
{
    return pz->term ? pz->term[tsr__pz_term_key(pz, o1, d, o2)] : tsr__pz_term(c, o1, d, o2);
}
/* Fill pz->term from pz->dmat (no-op without it, or where the table would pass
 * TSR_PZ_TERM_BYTES); threaded. */
tsr_status tsr__pz_terms(tsr__pz *pz, int threads);
#define TSR_PZ_TERM_BYTES ((size_t)64 << 20)
/* Cells of a full placement all of whose sides inside the grid have objective terms below thr:
 * fills grid coordinates gy/gx and oriented tiles go, returns their count. */
int tsr__pz_confident(const tsr__pz *pz, tsr__pz_cache *c, const int *piece, const unsigned char *rot, float thr,
                      int *gy, int *gx, int *go);
/* Local search on a full placement (piece/rot updated in place) with moves that lower the
 * objective. With prev_piece (and prev_rot), a placement it already searched, only cells that
 * differ from it and their neighbours are visited first. With 'rolls', when nothing else moves,
 * rectangles rolled by one cell along rows or columns are tried too (the best of all). */
tsr_status tsr__pz_refine(const tsr__pz *pz, tsr__pz_cache *c, int *piece, unsigned char *rot, const int *prev_piece,
                          const unsigned char *prev_rot, int rolls);
/* Total dissimilarity of a placement (each adjacent pair once). */
double tsr__pz_total(const tsr__pz *pz, const int *piece, const unsigned char *rot);

#ifdef __cplusplus
}
#endif
#endif
