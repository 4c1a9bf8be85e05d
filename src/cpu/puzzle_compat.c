/* Pairwise compatibility of puzzle pieces: Mahalanobis gradient compatibility (MGC, Gallagher
 * 2012) in both directions plus a joint Gaussian model of the four pixel columns across a
 * boundary learnt from the image itself, expanded into dot products of per-side feature vectors,
 * and the CPU variant of the all-pairs top-k search (threaded with tsr__parallel_for). */
#include "puzzle_core.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Variance added to the gradient covariance (in 8-bit levels squared): keeps flat edges from
 * producing huge inverse covariances (the role of Gallagher's dummy gradients). */
#define TSR_PZ_REG 3.0
/* The boundary prediction continues the edge by a mix of the edge's mean gradient (Gallagher's
 * MGC) and each row's own gradient (the prediction of Pomeranz's measure); on the benchmark
 * photos 0.65 of the row's own raised the share of right first choices from 85% to 87%. */
#define TSR_PZ_ROWW 0.65

/* Weight of the joint model's log-likelihood ratio against the MGC terms. */
#define TSR_PZ_JW 8.0
/* Tiles sampled (evenly) for the joint model's statistics, tiles per deterministic chunk, and
 * the longest offset along a boundary whose correlation it keeps. */
#define TSR_PZ_JTILES 64
#define TSR_PZ_JCHUNK 8
#define TSR_PZ_JLAG 8
/* Largest gain of a low-contrast side's columns in the joint model (in variance; see
 * tsr__pz_joint), and the variance (levels^2) added to a side's own so that flat sides are not
 * raised to pure quantisation noise. */
#define TSR_PZ_JGAIN 4.0
#define TSR_PZ_JFLOOR 4.0

/* Source pixel of oriented tile pixel (y, x): 'turns' quarter turns clockwise, or transposed. */
static void tsr__pz_src(int P, int turns, int transpose, int y, int x, int *sy, int *sx)
{
    if (transpose) {
        int t = y;
        y = x;
        x = t;
    }
    for (int i = 0; i < turns; i++) {   /* out[y][x] = in[P-1-x][y] */
        int ny = P - 1 - x, nx = y;
        y = ny;
        x = nx;
    }
    *sy = y;
    *sx = x;
}

/* Invert a small symmetric positive definite matrix (C = 1 or 3), row-major. */
static void tsr__pz_inv(const double *s, double *a, int C)
{
    if (C == 1) {
        a[0] = 1.0 / s[0];
        return;
    }
    {
        double c00 = s[4] * s[8] - s[5] * s[7], c01 = s[5] * s[6] - s[3] * s[8], c02 = s[3] * s[7] - s[4] * s[6];
        double det = s[0] * c00 + s[1] * c01 + s[2] * c02, id = 1.0 / det;
        a[0] = c00 * id;
        a[1] = (s[2] * s[7] - s[1] * s[8]) * id;
        a[2] = (s[1] * s[5] - s[2] * s[4]) * id;
        a[3] = c01 * id;
        a[4] = (s[0] * s[8] - s[2] * s[6]) * id;
        a[5] = (s[2] * s[3] - s[0] * s[5]) * id;
        a[6] = c02 * id;
        a[7] = (s[1] * s[6] - s[0] * s[7]) * id;
        a[8] = (s[0] * s[4] - s[1] * s[3]) * id;
    }
}

/* Model half of a side's features: [K, A (CxC), -2 A c_r (C per row)] for the gradient model of
 * edge e (outer column) and e2 (next column inwards), P rows of C channels: the partner's edge b_r
 * costs sum_r (b_r - c_r)^T A (b_r - c_r) with c_r the predicted boundary value and A the inverse
 * covariance of the edge's gradients. */
static void tsr__pz_model(const double *e, const double *e2, int P, int C, float *out)
{
    double mu[3] = {0}, S[9] = {0}, A[9], K = 0;
    for (int r = 0; r < P; r++)
        for (int c = 0; c < C; c++) mu[c] += (e[r * C + c] - e2[r * C + c]) / P;
    for (int r = 0; r < P; r++)
        for (int i = 0; i < C; i++)
            for (int j = 0; j < C; j++)
                S[i * C + j] += (e[r * C + i] - e2[r * C + i] - mu[i]) * (e[r * C + j] - e2[r * C + j] - mu[j]) /
                                (P > 1 ? P - 1 : 1);
    for (int i = 0; i < C; i++) S[i * C + i] += TSR_PZ_REG;
    tsr__pz_inv(S, A, C);
    for (int r = 0; r < P; r++) {
        double cr[3], Ac[3];
        for (int i = 0; i < C; i++)
            cr[i] = e[r * C + i] + (1 - TSR_PZ_ROWW) * mu[i] + TSR_PZ_ROWW * (e[r * C + i] - e2[r * C + i]);
        for (int i = 0; i < C; i++) {
            Ac[i] = 0;
            for (int j = 0; j < C; j++) Ac[i] += A[i * C + j] * cr[j];
            K += cr[i] * Ac[i];
            out[1 + C * C + r * C + i] = (float)(-2.0 * Ac[i]);
        }
    }
    out[0] = (float)K;
    for (int i = 0; i < C * C; i++) out[1 + i] = (float)A[i];
}

/* Data half of a side's features: [1, sum_r e_r e_r^T (CxC), e_r (C per row)]. */
static void tsr__pz_data(const double *e, int P, int C, float *out)
{
    double E[9] = {0};
    for (int r = 0; r < P; r++)
        for (int i = 0; i < C; i++) {
            for (int j = 0; j < C; j++) E[i * C + j] += e[r * C + i] * e[r * C + j];
            out[1 + C * C + r * C + i] = (float)e[r * C + i];
        }
    out[0] = 1.0f;
    for (int i = 0; i < C * C; i++) out[1 + i] = (float)E[i];
}

/* ---------------------------------------------------------------- joint boundary model
 *
 * The four columns across a boundary (two of each tile: x = P-2, P-1 | 0, 1), as one vector
 * z = [u; v] of N = 4 P C values, are modelled as Gaussian with the covariance that pixels at
 * those offsets have inside the tiles of this image (stationary, the same in every direction and
 * mirror image; correlations along the boundary fade linearly to zero at TSR_PZ_JLAG + 1 pixels,
 * and products are averaged over all pixel positions, which keeps S positive semi-definite).
 * D gains w (z' S^-1 z - u' Suu^-1 u - v' Svv^-1 v): the log-likelihood ratio of
 * "adjacent" against "independent", up to constants. It is a quadratic form, so it splits into
 * su(a) + sv(b) + u_a' M12 v_b with M = S^-1 - diag(Suu^-1, Svv^-1), a dot product again. It
 * sees the fine structure of noise and texture that gradients miss: on the benchmark photos it
 * raised right first choices on the dark deep-field sky from 46% to 54% (and on the
 * cameraman's grass and sky from 82% to 83%). */

/* Four doubles as one value: lane k holds partial sum k of tsr__pz_ddot (GCC and Clang vector
 * extension; element-wise arithmetic, the scalar loop's operations in its order). */
typedef double tsr__pz_v4d __attribute__((vector_size(32)));

/* Set in tests: use the baseline build of the kernels that also have an AVX2 build. */
int tsr__pz_baseline;

/* Whether the AVX2 builds of the kernels may run. */
static int tsr__pz_avx2(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return !tsr__pz_baseline && __builtin_cpu_supports("avx2");
#else
    return 0;
#endif
}

/* Dot product of doubles with four partial sums s0..s3 over i mod 4 (the lanes of one vector),
 * the n mod 4 last terms into s0, then (s0 + s1) + (s2 + s3): a fixed order, deterministic.
 * Inlined, so that it takes the vector width of the build it is inlined into. */
static inline __attribute__((always_inline)) double tsr__pz_ddot(const double *a, const double *b, int n)
{
    tsr__pz_v4d s = {0, 0, 0, 0}, x, y;
    double s0;
    int i = 0;
    for (; i + 4 <= n; i += 4) {
        memcpy(&x, a + i, sizeof x);
        memcpy(&y, b + i, sizeof y);
        s += x * y;
    }
    s0 = s[0];
    for (; i < n; i++) s0 += a[i] * b[i];
    return (s0 + s[1]) + (s[2] + s[3]);
}

struct tsr__pz_lag_job {
    const tsr_image *src;
    const double *mean;
    int cols, P, C, step, nsample;
    double *slots;   /* per chunk: sums of z_p z_q' per (along, across) lag */
    volatile int failed;
};

/* Lag sums of the sampled tiles of chunks [b, e): for along-offsets a <= TSR_PZ_JLAG (and < P)
 * and across-offsets b < 4, the pairs (y, x)-(y + a, x +- b) and (y, x)-(y +- b, x + a) inside
 * one tile. */
/* Three dot products of a with b0, b1, b2, each bit for bit tsr__pz_ddot's, computed together:
 * the lag sums' vectors are short (a tile wide) and one product's chain of additions kept the
 * processor waiting. */
static inline __attribute__((always_inline)) void tsr__pz_ddot3(const double *a, const double *b0, const double *b1,
                                                                const double *b2, int n, double *r)
{
    tsr__pz_v4d s0 = {0, 0, 0, 0}, s1 = {0, 0, 0, 0}, s2 = {0, 0, 0, 0}, x, y;
    double e0, e1, e2;
    int i = 0;
    for (; i + 4 <= n; i += 4) {
        memcpy(&x, a + i, sizeof x);
        memcpy(&y, b0 + i, sizeof y);
        s0 += x * y;
        memcpy(&y, b1 + i, sizeof y);
        s1 += x * y;
        memcpy(&y, b2 + i, sizeof y);
        s2 += x * y;
    }
    e0 = s0[0], e1 = s1[0], e2 = s2[0];
    for (; i < n; i++) {
        e0 += a[i] * b0[i];
        e1 += a[i] * b1[i];
        e2 += a[i] * b2[i];
    }
    r[0] = (e0 + s0[1]) + (s0[2] + s0[3]);
    r[1] = (e1 + s1[1]) + (s1[2] + s1[3]);
    r[2] = (e2 + s2[1]) + (s2[2] + s2[3]);
}

static inline __attribute__((always_inline)) void tsr__pz_lag_body(void *ctx, int b, int e)
{
    struct tsr__pz_lag_job *j = ctx;
    int P = j->P, C = j->C, CC = C * C, sc = j->src->channels;
    size_t per = (size_t)P * 4 * CC;
    double *z = malloc(sizeof(double) * P * P * C);
    if (!z) {
        j->failed = 1;
        return;
    }
    for (int ch = b; ch < e; ch++) {
        double *g = j->slots + per * ch;
        memset(g, 0, sizeof(double) * per);
        for (int si = ch * TSR_PZ_JCHUNK; si < (ch + 1) * TSR_PZ_JCHUNK && si < j->nsample; si++) {
            int t = si * j->step, ty = t / j->cols, tx = t % j->cols;
            for (int y = 0; y < P; y++) {   /* planar: z[(c * P + y) * P + x] */
                const uint8_t *row = (const uint8_t *)tsr__row(j->src, ty * P + y) + (size_t)tx * P * sc;
                for (int x = 0; x < P; x++)
                    for (int c = 0; c < C; c++) z[(c * P + y) * P + x] = row[(size_t)x * sc + c] - j->mean[c];
            }
            for (int a = 0; a < P && a <= TSR_PZ_JLAG; a++)
                for (int bb = 0; bb < 4; bb++)
                    for (int set = 0; set < 2; set++)
                        for (int sg = (bb ? -1 : 1); sg <= 1; sg += 2) {
                            /* set 0: boundary between columns (along = y); set 1: between rows */
                            int dy = set ? sg * bb : a, dx = set ? a : sg * bb;
                            double *gl = g + (size_t)(a * 4 + bb) * CC;
                            int y0 = dy < 0 ? -dy : 0, y1 = dy > 0 ? P - dy : P;
                            int x0 = dx < 0 ? -dx : 0, x1 = dx > 0 ? P - dx : P;
                            if (y1 <= y0 || x1 <= x0) continue;
                            if (C == 3) {   /* the three c2 together; each sum still takes y in order */
                                for (int c1 = 0; c1 < 3; c1++)
                                    for (int y = y0; y < y1; y++) {
                                        const double *zb = z + (size_t)(y + dy) * P + x0 + dx;
                                        double r[3];
                                        tsr__pz_ddot3(z + (c1 * P + y) * P + x0, zb, zb + P * P, zb + 2 * P * P,
                                                      x1 - x0, r);
                                        gl[c1 * 3] += r[0], gl[c1 * 3 + 1] += r[1], gl[c1 * 3 + 2] += r[2];
                                    }
                                continue;
                            }
                            for (int c1 = 0; c1 < C; c1++)
                                for (int c2 = 0; c2 < C; c2++)
                                    for (int y = y0; y < y1; y++)
                                        gl[c1 * C + c2] += tsr__pz_ddot(z + (c1 * P + y) * P + x0,
                                                                       z + (c2 * P + y + dy) * P + x0 + dx, x1 - x0);
                        }
        }
    }
    free(z);
}

/* tsr__parallel_for callbacks of the lag sums: AVX2 and baseline builds (the same sums). */
#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("avx2"))) static void tsr__pz_lag_range_avx2(void *ctx, int b, int e)
{
    tsr__pz_lag_body(ctx, b, e);
}
#endif
static void tsr__pz_lag_range(void *ctx, int b, int e) { tsr__pz_lag_body(ctx, b, e); }

/* Inverse of a symmetric positive definite N x N matrix by Cholesky, S = L L': S^-1 = L^-T L^-1,
 * with W = L^-1. The factor and the two products run on threads, each entry computed as by the
 * one-thread loops (the same bits on any thread count). */
struct tsr__pz_spd_job {
    const double *L;
    double *W, *out;
    int N, n2;
};

/* Columns of W = L^-1 in blocks of TSR_PZ_SPD_COLS: row i = -(sum_j<i L[i][j] W[j]) / L[i][i]
 * restricted to the block's columns (W lower triangular, zeroed beforehand). A row's block is
 * summed in registers (acc), in increasing j as in place: kept in W, each step waited on the
 * last one's store (L^-1 of 336 x 336 took 3 ms on the H200's 16 threads, now 0.6 ms). */
#define TSR_PZ_SPD_COLS 16
static inline __attribute__((always_inline)) void tsr__pz_linv_body(void *ctx, int b, int e)
{
    const struct tsr__pz_spd_job *j = ctx;
    int N = j->N;
    for (int blk = b; blk < e; blk++) {
        int k0 = blk * TSR_PZ_SPD_COLS, k1 = k0 + TSR_PZ_SPD_COLS < N ? k0 + TSR_PZ_SPD_COLS : N;
        for (int i = k0; i < N; i++) {
            double *wi = j->W + (size_t)i * N, acc[TSR_PZ_SPD_COLS];
            const double *li = j->L + (size_t)i * N;
            int j2 = k0;
            for (int k = 0; k < TSR_PZ_SPD_COLS; k++) acc[k] = 0;
            for (; j2 < i && j2 + 1 < k1; j2++) {   /* the block's triangle: columns k0..j2 */
                const double *wj = j->W + (size_t)j2 * N + k0;
                double f = li[j2];
                for (int k = 0; k <= j2 - k0; k++) acc[k] -= f * wj[k];
            }
            if (k1 - k0 == TSR_PZ_SPD_COLS) {
                for (; j2 < i; j2++) {   /* every column of the block */
                    const double *wj = j->W + (size_t)j2 * N + k0;
                    double f = li[j2];
                    for (int k = 0; k < TSR_PZ_SPD_COLS; k++) acc[k] -= f * wj[k];
                }
            } else {
                for (; j2 < i; j2++) {
                    const double *wj = j->W + (size_t)j2 * N + k0;
                    double f = li[j2];
                    for (int k = 0; k < k1 - k0; k++) acc[k] -= f * wj[k];
                }
            }
            for (int k = k0; k < k1 && k < i; k++) wi[k] = acc[k - k0] / li[i];
            if (i < k1) wi[i] = 1.0 / li[i];
        }
    }
}

/* Rows [b, e) of out = W' W over rows j < n2 of W (W lower triangular): out[i][k], k <= i,
 * sums W[j][i] W[j][k] over j >= i in increasing j, terms with W[j][i] = 0 skipped; the upper
 * triangle is mirrored afterwards. The full loop's matrix bit for bit, for half the products:
 * out[k][i] has the same products, and a skipped term is a zero, which leaves these sums
 * (never -0: they start at +0) unchanged. */
static inline __attribute__((always_inline)) void tsr__pz_wtw_body(void *ctx, int b, int e)
{
    const struct tsr__pz_spd_job *j = ctx;
    int N = j->N, n2 = j->n2;
    for (int i = b; i < e; i++) {
        double *oi = j->out + (size_t)i * n2;
        memset(oi, 0, sizeof(double) * n2);
        for (int r = i; r < n2; r++) {
            const double *wr = j->W + (size_t)r * N;
            double f = wr[i];
            if (f == 0) continue;
            for (int k = 0; k <= i; k++) oi[k] += f * wr[k];
        }
    }
}

/* tsr__parallel_for callbacks: AVX2 and baseline builds (the same arithmetic). */
#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("avx2"))) static void tsr__pz_linv_avx2(void *ctx, int b, int e) { tsr__pz_linv_body(ctx, b, e); }
__attribute__((target("avx2"))) static void tsr__pz_wtw_avx2(void *ctx, int b, int e) { tsr__pz_wtw_body(ctx, b, e); }
#endif
static void tsr__pz_linv_range(void *ctx, int b, int e) { tsr__pz_linv_body(ctx, b, e); }
static void tsr__pz_wtw_range(void *ctx, int b, int e) { tsr__pz_wtw_body(ctx, b, e); }

/* The factor L of S (N x N, zeroed beforehand), by panels of TSR_PZ_SPD_COLS columns: the
 * panel's diagonal block here, then its rows below on threads (tsr__pz_chol_rows). Every entry
 * is the column-by-column loop's, L[i][j] = (S[i][j] - L[i][0..j) . L[j][0..j)) / L[j][j] with
 * the same dot product, so the bits do not depend on the threads. 0 when S is not positive
 * definite. */
struct tsr__pz_chol_job {
    const double *S;
    double *L;
    int N, j0, j1;   /* the panel's columns; rows from j1 */
};

static inline __attribute__((always_inline)) void tsr__pz_chol_rows_body(void *ctx, int b, int e)
{
    const struct tsr__pz_chol_job *c = ctx;
    const int N = c->N;
    for (int i = c->j1 + b; i < c->j1 + e; i++) {
        double *li = c->L + (size_t)i * N;
        for (int j = c->j0; j < c->j1; j++) {
            const double *lj = c->L + (size_t)j * N;
            li[j] = (c->S[(size_t)i * N + j] - tsr__pz_ddot(li, lj, j)) / lj[j];
        }
    }
}

static inline __attribute__((always_inline)) int tsr__pz_chol_diag_body(const double *S, int N, double *L, int j0,
                                                                       int j1)
{
    for (int j = j0; j < j1; j++) {
        double d = S[(size_t)j * N + j] - tsr__pz_ddot(L + (size_t)j * N, L + (size_t)j * N, j);
        double *lj = L + (size_t)j * N;
        if (!(d > 0)) return 0;
        d = sqrt(d);
        lj[j] = d;
        for (int i = j + 1; i < j1; i++) {
            double *li = L + (size_t)i * N;
            li[j] = (S[(size_t)i * N + j] - tsr__pz_ddot(li, lj, j)) / d;
        }
    }
    return 1;
}
#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("avx2"))) static void tsr__pz_chol_rows_avx2(void *ctx, int b, int e)
{
    tsr__pz_chol_rows_body(ctx, b, e);
}
__attribute__((target("avx2"))) static int tsr__pz_chol_diag_avx2(const double *S, int N, double *L, int j0, int j1)
{
    return tsr__pz_chol_diag_body(S, N, L, j0, j1);
}
#endif
static void tsr__pz_chol_rows(void *ctx, int b, int e) { tsr__pz_chol_rows_body(ctx, b, e); }
static int tsr__pz_chol_diag(const double *S, int N, double *L, int j0, int j1)
{
    return tsr__pz_chol_diag_body(S, N, L, j0, j1);
}

static int tsr__pz_chol(const double *S, int N, double *L, int avx2, int threads)
{
    struct tsr__pz_chol_job c = {S, L, N, 0, 0};
    for (c.j0 = 0; c.j0 < N; c.j0 = c.j1) {
        int ok;
        c.j1 = c.j0 + TSR_PZ_SPD_COLS < N ? c.j0 + TSR_PZ_SPD_COLS : N;
#if defined(__x86_64__) || defined(__i386__)
        if (avx2) ok = tsr__pz_chol_diag_avx2(S, N, L, c.j0, c.j1);
        else
#endif
            ok = tsr__pz_chol_diag(S, N, L, c.j0, c.j1);
        if (!ok) return 0;
#if defined(__x86_64__) || defined(__i386__)
        if (avx2) tsr__parallel_for(N - c.j1, 8, threads, tsr__pz_chol_rows_avx2, &c);
        else
#endif
            tsr__parallel_for(N - c.j1, 8, threads, tsr__pz_chol_rows, &c);
    }
    return 1;
}

/* 'inv' gets S^-1 and 'inv_lead' (when not NULL) the inverse of S's leading h x h block, which
 * comes from the same factor (L's leading block is that block's factor); on up to 'threads'
 * threads. Returns 0 when S is not positive definite or memory runs out. */
static int tsr__pz_spd_inverse(const double *S, int N, double *inv, int h, double *inv_lead, int threads)
{
    double *L = calloc((size_t)N * N, sizeof(double)), *W = calloc((size_t)N * N, sizeof(double));
    struct tsr__pz_spd_job j;
    int ok, avx2 = 0;
#if defined(__x86_64__) || defined(__i386__)
    avx2 = tsr__pz_avx2();
#endif
    if (!L || !W) {
        free(L), free(W);
        return 0;
    }
    ok = tsr__pz_chol(S, N, L, avx2, threads);
    if (ok) {
        j.L = L, j.W = W, j.N = N;
        tsr__parallel_for((N + TSR_PZ_SPD_COLS - 1) / TSR_PZ_SPD_COLS, 1, threads,
                          avx2 ? tsr__pz_linv_avx2 : tsr__pz_linv_range, &j);
        for (int pass = 0; pass < (inv_lead ? 2 : 1); pass++) {
            int n2 = pass ? h : N;
            j.n2 = n2, j.out = pass ? inv_lead : inv;
            tsr__parallel_for(n2, 8, threads, avx2 ? tsr__pz_wtw_avx2 : tsr__pz_wtw_range, &j);
            for (int i = 0; i < n2; i++)
                for (int k = 0; k < i; k++) j.out[(size_t)k * n2 + i] = j.out[(size_t)i * n2 + k];
        }
    }
    free(L), free(W);
    return ok;
}

/* Contract: the joint model's M (N x N, N = 4 P C, row-major, symmetric) of a puzzle image whose
 * samples are centred on 'mean', and the pixel variance it saw (*pvar, mean over channels);
 * *out is NULL (and TSR_OK) when the tile is above TSR_PZ_JMAXP. */
static tsr_status tsr__pz_joint_model(const tsr_image *src, int rows, int cols, int C, const double *mean,
                                      int threads, double **out, double *pvar)
{
    struct tsr__pz_lag_job j;
    int P = src->width / cols, N = 4 * P * C, h = N / 2, CC = C * C, n = rows * cols, nchunks, nomem = 1;
    size_t per = (size_t)P * 4 * CC;
    double *G, *S = NULL, *Su = NULL, var = 0, ridge, added = 0;
    *out = NULL;
    *pvar = 0;
    if (P > TSR_PZ_JMAXP) return TSR_OK;
    j.src = src, j.mean = mean, j.cols = cols, j.P = P, j.C = C, j.failed = 0;
    j.step = (n + TSR_PZ_JTILES - 1) / TSR_PZ_JTILES;
    j.nsample = (n + j.step - 1) / j.step;
    nchunks = (j.nsample + TSR_PZ_JCHUNK - 1) / TSR_PZ_JCHUNK;
    j.slots = malloc(sizeof(double) * per * nchunks);
    G = calloc(per, sizeof(double));
    S = malloc(sizeof(double) * N * N);
    Su = malloc(sizeof(double) * h * h);   /* inverse of u's (and v's) covariance */
    if (!j.slots || !G || !S || !Su) goto done;
    nomem = 0;
    /* Fixed chunks summed in order: the model does not depend on the thread count. */
#if defined(__x86_64__) || defined(__i386__)
    if (tsr__pz_avx2()) tsr__parallel_for(nchunks, 1, threads, tsr__pz_lag_range_avx2, &j);
    else
#endif
        tsr__parallel_for(nchunks, 1, threads, tsr__pz_lag_range, &j);
    if ((nomem = j.failed)) goto done;
    for (int ch = 0; ch < nchunks; ch++)
        for (size_t i = 0; i < per; i++) G[i] += j.slots[per * ch + i];
    for (int l = 0; l < P * 4; l++) {
        /* products per pixel of the sampled tiles and per direction (2 at across-offset 0, else 4),
         * tapered, symmetric in the channels (mirror images) */
        double *g = G + (size_t)l * CC, t[9], a = l / 4, f;
        f = (a > TSR_PZ_JLAG ? 0 : 1 - a / (TSR_PZ_JLAG + 1)) / ((double)j.nsample * P * P * (l % 4 ? 4 : 2));
        for (int c1 = 0; c1 < C; c1++)
            for (int c2 = 0; c2 < C; c2++) t[c1 * C + c2] = (g[c1 * C + c2] + g[c2 * C + c1]) * f / 2;
        memcpy(g, t, sizeof(double) * CC);
    }
    for (int c = 0; c < C; c++) var += G[c * C + c] / C;
    *pvar = var;
    for (int i = 0; i < N; i++) {
        int x1 = i / (P * C), r1 = i / C % P, c1 = i % C;
        for (int k = 0; k < N; k++) {
            int x2 = k / (P * C), r2 = k / C % P, c2 = k % C;
            int a = r1 > r2 ? r1 - r2 : r2 - r1, b = x1 > x2 ? x1 - x2 : x2 - x1;
            S[(size_t)i * N + k] = G[(size_t)(a * 4 + b) * CC + c1 * C + c2];
        }
    }
    /* Flat images are singular, and rounding can leave S barely indefinite: a ridge of a
     * thousandth of the pixel variance (plus a thousandth of a level^2), grown until the
     * factorisation succeeds. */
    for (ridge = 1e-3 * var + 1e-3; ridge < 1e6 * (var + 1); ridge *= 10) {
        double *A = malloc(sizeof(double) * N * N);
        if ((nomem = !A)) goto done;
        for (int i = 0; i < N; i++) S[(size_t)i * N + i] += ridge - added;
        added = ridge;
        if (tsr__pz_spd_inverse(S, N, A, h, Su, threads)) {
            /* S of v equals S of u (same offsets), so both diagonal blocks lose Su^-1 */
            for (int blk = 0; blk < 2; blk++)
                for (int i = 0; i < h; i++)
                    for (int k = 0; k < h; k++) A[(size_t)(blk * h + i) * N + blk * h + k] -= Su[(size_t)i * h + k];
            *out = A;
            break;
        }
        free(A);
    }
done:
    free(j.slots), free(G), free(S), free(Su);
    /* a model that stays singular whatever the ridge is left out (the MGC terms remain) */
    return nomem ? tsr__fail(TSR_E_NOMEM, "puzzle: out of memory for the boundary model") : TSR_OK;
}

/* ---------------------------------------------------------------- features */

struct tsr__pz_feat_job {
    tsr__pz *pz;
    const tsr_image *src;
    double mean[3];
    const double *jm;      /* joint model M (N x N), or NULL */
    double jvar;           /* the pixel variance of the image's tiles (the joint model's) */
    volatile int failed;   /* a worker could not allocate its scratch */
};

/* Gain of a side's columns x (h values, C channels) in the joint model: the image's pixel
 * variance over the side's own (about its mean per channel, plus TSR_PZ_JFLOOR), between 1 and
 * TSR_PZ_JGAIN. */
static double tsr__pz_gain(const double *x, int h, int C, double pvar)
{
    double m[3] = {0, 0, 0}, v = 0, g;
    for (int i = 0; i < h; i++) m[i % C] += x[i] / (h / C);
    for (int i = 0; i < h; i++) v += (x[i] - m[i % C]) * (x[i] - m[i % C]) / h;
    g = pvar / (v + TSR_PZ_JFLOOR);
    return g < 1 ? 1 : g > TSR_PZ_JGAIN ? TSR_PZ_JGAIN : g;
}

/* Joint-model part of a side's features (see above): the left tile's right side gets
 * [w su, 1, 2 w M12' u], the right tile's left side [1, w sv, v]; u, v are the two columns next
 * to the boundary on each side, ordered across it, centred samples, each scaled by the square
 * root of its side's gain (tsr__pz_gain): the model is one for the whole image, and on sides of
 * low contrast (dark sky, shadow) the correlation of their faint noise and texture, the only
 * clue there, counted for little next to the textured sides; scaled up towards the image's
 * contrast it counts about as much (deep field: right first choices 54% -> 56%, neighbor
 * accuracy 49% -> 57%). This step fills u and v (h = 2 P C values each); tsr__pz_joint_batch
 * computes the features. */
static void tsr__pz_joint_uv(double pvar, const double *eR, const double *eR2, const double *eL, const double *eL2,
                             int P, int C, double *u, double *v)
{
    int h = 2 * P * C;
    double ga, gb;
    memcpy(u, eR2, sizeof(double) * P * C);
    memcpy(u + P * C, eR, sizeof(double) * P * C);
    memcpy(v, eL, sizeof(double) * P * C);
    memcpy(v + P * C, eL2, sizeof(double) * P * C);
    ga = sqrt(tsr__pz_gain(u, h, C, pvar)), gb = sqrt(tsr__pz_gain(v, h, C, pvar));
    for (int i = 0; i < h; i++) {
        u[i] *= ga;
        v[i] *= gb;
    }
}

/* Tiles whose joint features are computed together: each row of M is read once for all of them
 * (M is N x N doubles, 900 KB at 28-pixel tiles, and each tile used three quarters of it). */
#define TSR_PZ_JBATCH 8

/* Joint features of nb <= TSR_PZ_JBATCH tiles: u[t], v[t] from tsr__pz_joint_uv, features into
 * fr[t] and fl[t] (the joint part's first value). Each product is tsr__pz_ddot's, bit for bit:
 * lanes 0..3 are its partial sums s0..s3, the h mod 4 last terms go into s0, then
 * (s0 + s1) + (s2 + s3); su and sv add up over i in order as before. Four tiles at a time share
 * the loads of M's rows, and their twelve sums are independent chains of additions (three per
 * tile waited on each other's latency). */
static inline __attribute__((always_inline)) void tsr__pz_joint_body(const double *M, int P, int C, int nb,
                                                                     double *const *u, double *const *v,
                                                                     float *const *fr, float *const *fl)
{
    int h = 2 * P * C, N = 2 * h, h4 = h & ~3;
    double su[TSR_PZ_JBATCH] = {0}, sv[TSR_PZ_JBATCH] = {0};
    for (int i = 0; i < h; i++) {
        const double *m1 = M + (size_t)i * N, *m2 = M + (size_t)(h + i) * N, *m22 = m2 + h;
        for (int t0 = 0; t0 < nb; t0 += 4) {
            tsr__pz_v4d s1[4], s2[4], s3[4], x, y, a, b, c;
            const double *ut[4], *vt[4];
            int nt = nb - t0 < 4 ? nb - t0 : 4;
            for (int g = 0; g < 4; g++) {   /* a short group repeats its last tile, unused */
                ut[g] = u[t0 + (g < nt ? g : nt - 1)];
                vt[g] = v[t0 + (g < nt ? g : nt - 1)];
                s1[g] = s2[g] = s3[g] = (tsr__pz_v4d){0, 0, 0, 0};
            }
            for (int q = 0; q < h4; q += 4) {
                memcpy(&a, m1 + q, sizeof a);
                memcpy(&b, m22 + q, sizeof b);
                memcpy(&c, m2 + q, sizeof c);
                for (int g = 0; g < 4; g++) {
                    memcpy(&x, ut[g] + q, sizeof x);
                    memcpy(&y, vt[g] + q, sizeof y);
                    s1[g] += a * x;
                    s2[g] += b * y;
                    s3[g] += c * x;
                }
            }
            for (int g = 0; g < nt; g++) {
                int t = t0 + g;
                double r1, r2, r3, e1 = s1[g][0], e2 = s2[g][0], e3 = s3[g][0];
                for (int q = h4; q < h; q++) {
                    e1 += m1[q] * u[t][q];
                    e2 += m22[q] * v[t][q];
                    e3 += m2[q] * u[t][q];
                }
                r1 = (e1 + s1[g][1]) + (s1[g][2] + s1[g][3]);   /* (M11 u)_i */
                r2 = (e2 + s2[g][1]) + (s2[g][2] + s2[g][3]);   /* (M22 v)_i */
                r3 = (e3 + s3[g][1]) + (s3[g][2] + s3[g][3]);   /* (M21 u)_i = (M12' u)_i */
                su[t] += u[t][i] * r1;
                sv[t] += v[t][i] * r2;
                fr[t][2 + i] = (float)(2.0 * TSR_PZ_JW * r3);
                fl[t][2 + i] = (float)v[t][i];
            }
        }
    }
    for (int t = 0; t < nb; t++) {
        fr[t][0] = (float)(TSR_PZ_JW * su[t]);
        fr[t][1] = 1.0f;
        fl[t][0] = 1.0f;
        fl[t][1] = (float)(TSR_PZ_JW * sv[t]);
    }
}

/* The batch in an AVX2 build (four doubles per register) where the CPU has it, else the
 * baseline's; the results are the same. */
#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("avx2"))) static void tsr__pz_joint_batch_avx2(const double *M, int P, int C, int nb,
                                                                     double *const *u, double *const *v,
                                                                     float *const *fr, float *const *fl)
{
    tsr__pz_joint_body(M, P, C, nb, u, v, fr, fl);
}
#endif
static void tsr__pz_joint_batch(const double *M, int P, int C, int nb, double *const *u, double *const *v,
                                float *const *fr, float *const *fl)
{
#if defined(__x86_64__) || defined(__i386__)
    if (tsr__pz_avx2()) {
        tsr__pz_joint_batch_avx2(M, P, C, nb, u, v, fr, fl);
        return;
    }
#endif
    tsr__pz_joint_body(M, P, C, nb, u, v, fr, fl);
}

/* Features of oriented tiles [b, e) for both problems; the joint parts TSR_PZ_JBATCH sides at a
 * time. */
static void tsr__pz_feat_range(void *ctx, int b, int e)
{
    struct tsr__pz_feat_job *j = ctx;
    tsr__pz *pz = j->pz;
    int P = pz->tile, C = pz->channels, sc = j->src->channels, half = 1 + C * C + C * P, h = 2 * P * C, nb = 0;
    double *col = malloc(sizeof(double) * (4 * P * C + 2 * TSR_PZ_JBATCH * h)), *u[TSR_PZ_JBATCH], *v[TSR_PZ_JBATCH];
    float *jr[TSR_PZ_JBATCH], *jl[TSR_PZ_JBATCH];
    if (!col) {
        j->failed = 1;
        return;
    }
    for (int t = 0; t < TSR_PZ_JBATCH; t++) {
        u[t] = col + 4 * P * C + (size_t)2 * t * h;
        v[t] = u[t] + h;
    }
    for (int o = b; o < e; o++) {
        int piece = tsr__pz_piece(pz, o), turns = pz->rotate ? (o & 3) : 0;
        int ty = piece / pz->cols, tx = piece % pz->cols;
        for (int prob = 0; prob < (pz->rotate ? 1 : 2); prob++) {
            /* columns: 0 = x P-1, 1 = x P-2, 2 = x 0, 3 = x 1 of the oriented (or transposed) tile */
            static const int which[4] = {-1, -2, 0, 1};
            for (int k = 0; k < 4; k++)
                for (int r = 0; r < P; r++) {
                    int x = which[k] < 0 ? P + which[k] : which[k], sy, sx;
                    const uint8_t *px;
                    tsr__pz_src(P, turns, prob, r, x, &sy, &sx);
                    px = (const uint8_t *)tsr__row(j->src, ty * P + sy) + (size_t)(tx * P + sx) * sc;
                    for (int c = 0; c < C; c++) col[(k * P + r) * C + c] = px[c] - j->mean[c];
                }
            {
                float *fr = pz->fr[prob] + (size_t)o * pz->dim, *fl = pz->fl[prob] + (size_t)o * pz->dim;
                const double *eR = col, *eR2 = col + P * C, *eL = col + 2 * P * C, *eL2 = col + 3 * P * C;
                memset(fr, 0, sizeof(float) * pz->dim);
                memset(fl, 0, sizeof(float) * pz->dim);
                tsr__pz_model(eR, eR2, P, C, fr);          /* left tile's right-edge gradient model */
                tsr__pz_data(eR, P, C, fr + half);         /* its edge as data for the partner's model */
                tsr__pz_data(eL, P, C, fl);                /* right tile's left edge as data */
                tsr__pz_model(eL, eL2, P, C, fl + half);   /* its left-edge gradient model */
                if (j->jm) {
                    tsr__pz_joint_uv(j->jvar, eR, eR2, eL, eL2, P, C, u[nb], v[nb]);
                    jr[nb] = fr + 2 * half;
                    jl[nb] = fl + 2 * half;
                    if (++nb == TSR_PZ_JBATCH) {
                        tsr__pz_joint_batch(j->jm, P, C, nb, u, v, jr, jl);
                        nb = 0;
                    }
                }
            }
        }
    }
    if (nb) tsr__pz_joint_batch(j->jm, P, C, nb, u, v, jr, jl);
    free(col);
}

/* Release features and lists and zero *pz. */
void tsr__pz_free(tsr__pz *pz)
{
    for (int i = 0; i < 2; i++) {
        free(pz->fr[i]);
        free(pz->fl[i]);
    }
    free(pz->list);
    free(pz->lift);
    free(pz->dmat);
    free(pz->term);
    memset(pz, 0, sizeof *pz);
}

/* Contract: src is a host 8-bit image of exactly rows*t x cols*t pixels with t = width/cols;
 * fills every field of *pz except the lists (pz->list allocated, k set). */
tsr_status tsr__pz_features(tsr__pz *pz, const tsr_image *src, int rows, int cols, int rotate, int threads)
{
    struct tsr__pz_feat_job job;
    size_t bytes;
    int C = src->channels >= 3 ? 3 : 1;
    memset(pz, 0, sizeof *pz);
    pz->rows = rows;
    pz->cols = cols;
    pz->n = rows * cols;
    pz->tile = src->width / cols;
    pz->channels = C;
    pz->rotate = rotate;
    pz->m = rotate ? pz->n * 4 : pz->n;
    /* MGC both ways, then the joint model's 2 + 2 P C values when the tile is small enough */
    pz->dim = (2 * (1 + C * C + C * pz->tile) + (pz->tile <= TSR_PZ_JMAXP ? 2 + 2 * C * pz->tile : 0) + 3) & ~3;
    pz->k = pz->m - (rotate ? 4 : 1);
    if (pz->k > TSR_PZ_K) pz->k = TSR_PZ_K;
    if (!tsr__mul_size((size_t)pz->m, (size_t)pz->dim * sizeof(float), &bytes))
        return tsr__fail(TSR_E_SIZE, "puzzle: too many pieces");
    for (int i = 0; i < (rotate ? 1 : 2); i++) {
        pz->fr[i] = malloc(bytes);
        pz->fl[i] = malloc(bytes);
        if (!pz->fr[i] || !pz->fl[i]) {
            tsr__pz_free(pz);
            return tsr__fail(TSR_E_NOMEM, "puzzle: out of memory for %d pieces' features", rows * cols);
        }
    }
    pz->list = calloc((size_t)pz->m * 4 * (pz->k > 0 ? pz->k : 1), sizeof(tsr__pz_cand));
    if (!pz->list) {
        tsr__pz_free(pz);
        return tsr__fail(TSR_E_NOMEM, "puzzle: out of memory for neighbour lists");
    }
    /* Centre the samples on the image mean: smaller magnitudes, less cancellation in float. */
    {
        double sum[3] = {0};
        for (int y = 0; y < src->height; y++) {
            const uint8_t *row = tsr__row(src, y);
            for (int x = 0; x < src->width; x++)
                for (int c = 0; c < C; c++) sum[c] += row[(size_t)x * src->channels + c];
        }
        for (int c = 0; c < C; c++) job.mean[c] = sum[c] / ((double)src->width * src->height);
    }
    {
        double *jm;
        tsr_status s = tsr__pz_joint_model(src, rows, cols, C, job.mean, threads, &jm, &job.jvar);
        if (s) {
            tsr__pz_free(pz);
            return s;
        }
        job.jm = jm;
    }
    job.pz = pz;
    job.src = src;
    job.failed = 0;
    tsr__parallel_for(pz->m, 16, threads, tsr__pz_feat_range, &job);
    free((double *)job.jm);
    if (job.failed) {
        tsr__pz_free(pz);
        return tsr__fail(TSR_E_NOMEM, "puzzle: out of memory computing features");
    }
    return TSR_OK;
}

/* Contract: see puzzle_core.h; dim is a multiple of 4. Eight partial sums (two vectors of four
 * when the compiler vectorises, the second a chain of its own), the last four entries of an odd
 * count of quads into the first half, combined in a fixed order. */
float tsr__pz_dot(const float *a, const float *b, int dim)
{
    float s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    int i = 0;
    for (; i + 8 <= dim; i += 8)
        for (int k = 0; k < 8; k++) s[k] += a[i + k] * b[i + k];
    for (; i < dim; i += 4)
        for (int k = 0; k < 4; k++) s[k] += a[i + k] * b[i + k];
    return ((s[0] + s[4]) + (s[1] + s[5])) + ((s[2] + s[6]) + (s[3] + s[7]));
}

/* Contract: see puzzle_core.h. */
float tsr__pz_dis(const tsr__pz *pz, int o1, int d, int o2)
{
    size_t dim = (size_t)pz->dim;
    if (pz->dmat) return tsr__pz_dtab(pz, o1, d, o2);   /* the same dots, computed by the top-k */
    switch (d) {
    case 1: return tsr__pz_dot(pz->fr[0] + o1 * dim, pz->fl[0] + o2 * dim, pz->dim);
    case 3: return tsr__pz_dot(pz->fr[0] + o2 * dim, pz->fl[0] + o1 * dim, pz->dim);
    case 2:
        if (pz->rotate)
            return tsr__pz_dot(pz->fr[0] + tsr__pz_turn(o1, 3) * dim, pz->fl[0] + tsr__pz_turn(o2, 3) * dim, pz->dim);
        return tsr__pz_dot(pz->fr[1] + o1 * dim, pz->fl[1] + o2 * dim, pz->dim);
    default: return tsr__pz_dis(pz, o2, 2, o1);
    }
}

/* Insert (d, o) into an ascending list of length k holding 'have' entries; equal values keep
 * the earlier (lower index, since callers scan in increasing order) first. */
static inline void tsr__pz_insert(tsr__pz_cand *l, int k, int *have, float d, int o)
{
    int i;
    if (*have < k) {
        i = (*have)++;
    } else {
        if (!(d < l[k - 1].d)) return;   /* full list: only a strictly smaller value enters */
        i = k - 1;
    }
    while (i > 0 && d < l[i - 1].d) {
        l[i] = l[i - 1];
        i--;
    }
    l[i].d = d;
    l[i].o = o;
}

/* Most row blocks of the CPU top-k (each keeps m column lists of k). */
#define TSR_PZ_TOPK_BLOCKS 32

struct tsr__pz_topk_job {
    const float *X, *Y;
    int m, dim, rot4, k, stride, nblocks;
    tsr__pz_cand *rows;       /* row lists (stride apart) */
    tsr__pz_cand *cout;       /* merged column lists (stride apart) */
    tsr__pz_cand *cols;       /* per block: m column lists of k, over the block's rows */
    int *have;                /* per block: entries in each column list */
    int *rhave;               /* entries in each row list */
    float *full;              /* NULL, or the m x m matrix of every dot (row i, column o) */
};

/* Eight floats as one value (GCC and Clang vector extension): lane k holds partial sum k of
 * tsr__pz_dot. Vector adds and multiplies are element-wise, in the order written, so a lane
 * computes exactly what the scalar loop computes for it. */
typedef float tsr__pz_v8 __attribute__((vector_size(32)));

/* Dots of rows a[0..3] with columns y0 and y1 (dim floats, a multiple of 4) into d[r][c], bit
 * for bit tsr__pz_dot's: the same eight partial sums, the last quad of an odd count into lanes
 * 0..3 (lanes 4..7 add 0 * 0 = +0, which leaves a sum that started at +0 unchanged), the same
 * final additions. Four rows by two columns share each load: the all-pairs search was bound by
 * loads, one row and one column per dot product. */
static inline __attribute__((always_inline)) void tsr__pz_dots42(const float *const *a, const float *y0,
                                                                   const float *y1, int dim, float d[4][2])
{
    tsr__pz_v8 s[4][2], b0, b1, x;
    int i = 0;
    for (int r = 0; r < 4; r++) s[r][0] = s[r][1] = (tsr__pz_v8){0, 0, 0, 0, 0, 0, 0, 0};
    for (; i + 8 <= dim; i += 8) {
        memcpy(&b0, y0 + i, sizeof b0);
        memcpy(&b1, y1 + i, sizeof b1);
        for (int r = 0; r < 4; r++) {
            memcpy(&x, a[r] + i, sizeof x);
            s[r][0] += x * b0;
            s[r][1] += x * b1;
        }
    }
    if (i < dim) {
        b0 = (tsr__pz_v8){y0[i], y0[i + 1], y0[i + 2], y0[i + 3], 0, 0, 0, 0};
        b1 = (tsr__pz_v8){y1[i], y1[i + 1], y1[i + 2], y1[i + 3], 0, 0, 0, 0};
        for (int r = 0; r < 4; r++) {
            x = (tsr__pz_v8){a[r][i], a[r][i + 1], a[r][i + 2], a[r][i + 3], 0, 0, 0, 0};
            s[r][0] += x * b0;
            s[r][1] += x * b1;
        }
    }
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 2; c++) {
            tsr__pz_v8 t = s[r][c];
            d[r][c] = ((t[0] + t[4]) + (t[1] + t[5])) + ((t[2] + t[6]) + (t[3] + t[7]));
        }
}

/* Columns of Y per pass over a block's rows: 192 KB of them stay in the core's L2 cache while
 * every row meets them (streaming all of Y from memory for each group of rows was the
 * bottleneck: 1728 x 360 floats, 2.5 MB, per 4 rows with rotation). */
#define TSR_PZ_TOPK_YBYTES (192 << 10)

/* Blocks [b, e) of rows: each row's k smallest dots over all columns, and each column's k
 * smallest over the block's rows (rows in increasing order, so equal values keep the lower
 * index first, as in one pass over all rows). Columns are taken in chunks (rows 4 at a time,
 * columns 2 at a time within a chunk): each row list still receives its columns in increasing
 * order and each column list its rows, so the lists are those of the plain row-by-row pass. */
static inline __attribute__((always_inline)) void tsr__pz_topk_body(void *ctx, int b, int e)
{
    const struct tsr__pz_topk_job *j = ctx;
    int m = j->m, k = j->k, dim = j->dim;
    int chunk = (int)(TSR_PZ_TOPK_YBYTES / ((size_t)dim * sizeof(float))) & ~1;
    if (chunk < 2) chunk = 2;
    for (int blk = b; blk < e; blk++) {
        int r0 = (int)((long long)m * blk / j->nblocks), r1 = (int)((long long)m * (blk + 1) / j->nblocks);
        tsr__pz_cand *cl = j->cols + (size_t)blk * m * k;
        int *ch = j->have + (size_t)blk * m, *rh = j->rhave + r0;
        for (size_t t = 0; t < (size_t)m * k; t++) {
            cl[t].d = INFINITY;
            cl[t].o = -1;
        }
        memset(ch, 0, sizeof(int) * m);
        memset(rh, 0, sizeof(int) * (r1 - r0));
        for (int i = r0; i < r1; i++) {
            tsr__pz_cand *l = j->rows + (size_t)i * j->stride;
            for (int t = 0; t < k; t++) {
                l[t].d = INFINITY;
                l[t].o = -1;
            }
        }
        for (int c0 = 0; c0 < m; c0 += chunk) {
            int c1 = m - c0 < chunk ? m : c0 + chunk;
            for (int i0 = r0; i0 < r1; i0 += 4) {
                int nr = r1 - i0 < 4 ? r1 - i0 : 4;
                const float *a[4];
                for (int r = 0; r < 4; r++)   /* a short last group repeats its last row */
                    a[r] = j->X + (size_t)(i0 + (r < nr ? r : nr - 1)) * dim;
                for (int o0 = c0; o0 < c1; o0 += 2) {
                    int nc = c1 - o0 < 2 ? 1 : 2;   /* a last odd column is computed twice, used once */
                    float d[4][2];
                    tsr__pz_dots42(a, j->Y + (size_t)o0 * dim, j->Y + (size_t)(o0 + nc - 1) * dim, dim, d);
                    for (int c = 0; c < nc; c++) {
                        int o = o0 + c;
                        for (int r = 0; r < nr; r++) {
                            int i = i0 + r;
                            if (j->full) j->full[(size_t)i * m + o] = d[r][c];
                            if ((j->rot4 ? o >> 2 : o) == (j->rot4 ? i >> 2 : i)) continue;
                            tsr__pz_insert(j->rows + (size_t)i * j->stride, k, &rh[i - r0], d[r][c], o);
                            tsr__pz_insert(cl + (size_t)o * k, k, &ch[o], d[r][c], i);
                        }
                    }
                }
            }
        }
    }
}

/* tsr__parallel_for callbacks of the body: compiled for AVX2 (eight-float vectors in one
 * register) and for the baseline; the results are the same. */
#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("avx2"))) static void tsr__pz_topk_range_avx2(void *ctx, int b, int e)
{
    tsr__pz_topk_body(ctx, b, e);
}
#endif
static void tsr__pz_topk_range(void *ctx, int b, int e) { tsr__pz_topk_body(ctx, b, e); }

/* Columns [b, e): merge the blocks' column lists into the k smallest (ascending value, ties to
 * the earlier block, whose rows are the lower indices: the lists one pass over all rows gives). */
static void tsr__pz_topk_merge(void *ctx, int b, int e)
{
    const struct tsr__pz_topk_job *j = ctx;
    int m = j->m, k = j->k, at[TSR_PZ_TOPK_BLOCKS];
    for (int o = b; o < e; o++) {
        tsr__pz_cand *out = j->cout + (size_t)o * j->stride;
        for (int blk = 0; blk < j->nblocks; blk++) at[blk] = 0;
        for (int t = 0; t < k; t++) {
            const tsr__pz_cand *best = NULL;
            int bb = -1;
            for (int blk = 0; blk < j->nblocks; blk++) {
                const tsr__pz_cand *c = j->cols + ((size_t)blk * m + o) * k + at[blk];
                if (at[blk] < j->have[(size_t)blk * m + o] && (!best || c->d < best->d)) {
                    best = c;
                    bb = blk;
                }
            }
            if (!best) {
                out[t].d = INFINITY;
                out[t].o = -1;
                continue;
            }
            out[t] = *best;
            at[bb]++;
        }
    }
}

/* Contract: see tsr__pz_topk_fn. CPU variant 'mgc': one threaded pass over row blocks, four
 * rows at a time; each block keeps its own column lists, merged at the end, so every dot product
 * is computed once and the result does not depend on the number of blocks (threads). */
tsr_status tsr__pz_topk_cpu(const float *X, const float *Y, int m, int dim, int rot4, int k,
                            tsr__pz_cand *rows_out, tsr__pz_cand *cols_out, int stride, const tsr_exec *ex,
                            float *full)
{
    struct tsr__pz_topk_job j;
    int threads = tsr__exec_threads(ex), nb = threads < TSR_PZ_TOPK_BLOCKS ? threads : TSR_PZ_TOPK_BLOCKS;
    size_t per = (size_t)m * k * sizeof(tsr__pz_cand) + (size_t)m * sizeof(int);
    if (k <= 0) return TSR_OK;
    /* the column lists of a block cost m x k entries: fewer blocks where memory is short */
    while (nb > 1 && per * nb > ((size_t)256 << 20)) nb--;
    if (nb > m / 4) nb = m / 4 > 0 ? m / 4 : 1;
    memset(&j, 0, sizeof j);
    j.X = X, j.Y = Y, j.m = m, j.dim = dim, j.rot4 = rot4, j.k = k, j.stride = stride, j.nblocks = nb;
    j.rows = rows_out;
    j.cout = cols_out;
    j.full = full;
    j.cols = malloc((size_t)nb * m * k * sizeof(tsr__pz_cand));
    j.have = malloc((size_t)nb * m * sizeof(int));
    j.rhave = malloc((size_t)m * sizeof(int));
    if (!j.cols || !j.have || !j.rhave) {
        free(j.cols), free(j.have), free(j.rhave);
        return tsr__fail(TSR_E_NOMEM, "puzzle: out of memory for the compatibility lists of %d tiles", m);
    }
#if defined(__x86_64__) || defined(__i386__)
    if (tsr__pz_avx2()) tsr__parallel_for(nb, 1, threads, tsr__pz_topk_range_avx2, &j);
    else
#endif
        tsr__parallel_for(nb, 1, threads, tsr__pz_topk_range, &j);
    tsr__parallel_for(m, 64, threads, tsr__pz_topk_merge, &j);
    free(j.cols), free(j.have), free(j.rhave);
    return TSR_OK;
}

/* Ascending order of floats (qsort). */
static int tsr__pz_fcmp(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

/* Lifts of every side: its values are raised so that its best is at least T, the median over
 * all sides of the gap between first and second choice (the image's own scale of a clear
 * decision). The joint model's log-likelihood ratio makes D negative where two sides are much
 * likelier together than apart, above all on flat areas, where every pair is. Clamped at 0, or
 * lifted to a best of exactly 0, every such side's first choice had confidence 1 however close
 * its second was, and the placement took flat sky for certain matches (the bilinear cameraman
 * with rotation fell from 96% to 77%). With the floor at T a side whose second is as close as
 * its first stays ambiguous (confidence gap / (gap + T)); sides whose best is above T keep
 * their values. */
static tsr_status tsr__pz_lifts(tsr__pz *pz)
{
    size_t ns = (size_t)pz->m * 4;
    float T = 0;
    pz->lift = malloc(sizeof(float) * ns);
    if (!pz->lift) return tsr__fail(TSR_E_NOMEM, "puzzle: out of memory for neighbour lists");
    if (pz->k >= 2) {   /* the median gap (pz->lift as scratch) */
        for (size_t i = 0; i < ns; i++) pz->lift[i] = pz->list[i * pz->k + 1].d - pz->list[i * pz->k].d;
        qsort(pz->lift, ns, sizeof(float), tsr__pz_fcmp);
        T = pz->lift[ns / 2];
        if (!(T > 0) || T == INFINITY) T = 0;   /* identical tiles, or unfilled lists */
    }
    for (size_t i = 0; i < ns; i++) {
        float best = pz->k > 0 && pz->list[i * pz->k].o >= 0 ? pz->list[i * pz->k].d : T;
        pz->lift[i] = best < T ? T - best : 0;
    }
    return TSR_OK;
}

/* Contract: fills pz->list (m x 4 x k) using fn for the all-pairs search, and pz->lift; also
 * pz->dmat when it fits TSR_PZ_DMAT_BYTES, from either backend (the placement asks for many D
 * outside the lists: the deep field's spent a quarter of its time on their dot products, and
 * without the table each chain of the search fills a cache of its own). */
static tsr_status tsr__pz_lists_only(tsr__pz *pz, tsr__pz_topk_fn fn, const tsr_exec *ex)
{
    int k = pz->k, st = 4 * k, rel = pz->rotate ? 1 : 2;
    size_t mm = (size_t)pz->m * pz->m;
    tsr_status s;
    if (k <= 0) return tsr__pz_lifts(pz);
    free(pz->dmat), free(pz->term);
    pz->dmat = pz->term = NULL;
    if (mm <= TSR_PZ_DMAT_BYTES / sizeof(float) / rel)
        pz->dmat = malloc(sizeof(float) * mm * rel);   /* without it, only slower */
    s = fn(pz->fr[0], pz->fl[0], pz->m, pz->dim, pz->rotate, k, pz->list + 1 * k, pz->list + 3 * k, st, ex, pz->dmat);
    if (!s && !pz->rotate)
        s = fn(pz->fr[1], pz->fl[1], pz->m, pz->dim, 0, k, pz->list + 2 * k, pz->list + 0 * k, st, ex,
               pz->dmat ? pz->dmat + mm : NULL);
    if (s) return s;
    if (!pz->rotate) return tsr__pz_lifts(pz);
    /* Rotation: D(a, down, b) = D(a', right, b') with x' = x turned 3 more quarter turns. */
    for (int o = 0; o < pz->m; o++) {
        int src = tsr__pz_turn(o, 3);
        for (int t = 0; t < k; t++) {
            tsr__pz_cand r = pz->list[((size_t)src * 4 + 1) * k + t], l = pz->list[((size_t)src * 4 + 3) * k + t];
            r.o = r.o >= 0 ? tsr__pz_turn(r.o, 1) : -1;
            l.o = l.o >= 0 ? tsr__pz_turn(l.o, 1) : -1;
            pz->list[((size_t)o * 4 + 2) * k + t] = r;
            pz->list[((size_t)o * 4 + 0) * k + t] = l;
        }
    }
    return tsr__pz_lifts(pz);
}

/* Contract: see puzzle_core.h (the lists, lifts and table of D, then the table of terms). */
tsr_status tsr__pz_lists(tsr__pz *pz, tsr__pz_topk_fn fn, const tsr_exec *ex)
{
    tsr_status s = tsr__pz_lists_only(pz, fn, ex);
    return s ? s : tsr__pz_terms(pz, tsr__exec_threads(ex));
}
