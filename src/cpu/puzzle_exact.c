/* Exact puzzle search on the CPU (variant 'enum'): every placement index, as in the seed
 * article, decoded from the factorial number system and scored; threads reduce to the lowest
 * cost, ties to the lowest index. Same decode and summation order as the CUDA variant. */
#include "puzzle_core.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct tsr__pz_exact_job {
    const double *dr, *dd;
    int rows, cols, rotate, n, m;
    uint64_t count, nfact, chunk;
    pthread_mutex_t lock;
    uint64_t best_idx;
    double best_cost;
};

/* Chunks [b, e) of 'chunk' indices each: local best, then merged under the lock. */
static void tsr__pz_exact_range(void *ctx, int b, int e)
{
    struct tsr__pz_exact_job *j = ctx;
    int o[TSR_PZ_EXACT_MAX];
    uint64_t bi = UINT64_MAX;
    double bc = 0;
    for (int c = b; c < e; c++) {
        uint64_t lo = (uint64_t)c * j->chunk, hi = lo + j->chunk < j->count ? lo + j->chunk : j->count;
        for (uint64_t idx = lo; idx < hi; idx++) {
            double cost;
            tsr__pz_decode(idx, j->n, j->rotate, j->nfact, o);
            cost = tsr__pz_cost(o, j->rows, j->cols, j->m, j->dr, j->dd);
            if (bi == UINT64_MAX || cost < bc) {
                bc = cost;
                bi = idx;
            }
        }
    }
    pthread_mutex_lock(&j->lock);
    if (bi != UINT64_MAX &&
        (j->best_idx == UINT64_MAX || bc < j->best_cost || (bc == j->best_cost && bi < j->best_idx))) {
        j->best_cost = bc;
        j->best_idx = bi;
    }
    pthread_mutex_unlock(&j->lock);
}

/* Contract: see tsr__pz_exact_fn; count >= 1, rows*cols <= TSR_PZ_EXACT_MAX. */
tsr_status tsr__pz_exact_cpu(const double *dr, const double *dd, int rows, int cols, int rotate, uint64_t count,
                             uint64_t *best_idx, double *best_cost, const tsr_exec *ex)
{
    struct tsr__pz_exact_job j;
    uint64_t chunks;
    j.dr = dr;
    j.dd = dd;
    j.rows = rows;
    j.cols = cols;
    j.rotate = rotate;
    j.n = rows * cols;
    j.m = rotate ? 4 * j.n : j.n;
    j.count = count;
    j.nfact = 1;
    for (int i = 2; i <= j.n; i++) j.nfact *= (uint64_t)i;
    j.chunk = 4096;
    chunks = (count + j.chunk - 1) / j.chunk;
    while (chunks > (1u << 30)) {
        j.chunk *= 2;
        chunks = (count + j.chunk - 1) / j.chunk;
    }
    pthread_mutex_init(&j.lock, NULL);
    j.best_idx = UINT64_MAX;
    j.best_cost = 0;
    tsr__parallel_for((int)chunks, 1, tsr__exec_threads(ex), tsr__pz_exact_range, &j);
    pthread_mutex_destroy(&j.lock);
    *best_idx = j.best_idx;
    *best_cost = j.best_cost;
    return TSR_OK;
}

/* ---------------------------------------------------------------- branch and bound */

typedef struct {
    const double *dr, *dd;
    int rows, cols, n;
    double *inl, *int_, *inb;   /* per piece: cheapest left edge into it, top edge, both */
    int cur[TSR_PZ_BNB_MAX], best[TSR_PZ_BNB_MAX];
    unsigned used;
    double best_cost;
    uint64_t nodes, limit;
    int found, have_leaf, gave_up;   /* found: best_cost holds a bound; have_leaf: best[] is set */
} tsr__pz_bnb_state;

/* Sum of the k smallest of v[i] over unused pieces i (k <= 16, so a small selection). */
static double tsr__pz_smallest(const double *v, int n, unsigned used, int k)
{
    double pick[TSR_PZ_BNB_MAX], s = 0;
    int have = 0;
    if (k <= 0) return 0;
    for (int i = 0; i < n; i++) {
        int j;
        if (used >> i & 1u) continue;
        if (have < k) j = have++;
        else if (v[i] < pick[k - 1]) j = k - 1;
        else continue;
        while (j > 0 && v[i] < pick[j - 1]) {
            pick[j] = pick[j - 1];
            j--;
        }
        pick[j] = v[i];
    }
    for (int i = 0; i < have; i++) s += pick[i];
    return s;
}

/* Lower bound of the cost still to come after filling cells [0, c): each later cell pays at least
 * its cheapest incoming edges; pieces stay distinct within each kind of cell (an admissible
 * relaxation of the assignment). */
static double tsr__pz_bound(const tsr__pz_bnb_state *st, int c)
{
    int nl = 0, nt = 0, nb = 0;
    for (int i = c; i < st->n; i++) {
        int l = i % st->cols > 0, t = i >= st->cols;
        nb += l && t;
        nl += l && !t;
        nt += t && !l;
    }
    return tsr__pz_smallest(st->inl, st->n, st->used, nl) + tsr__pz_smallest(st->int_, st->n, st->used, nt) +
           tsr__pz_smallest(st->inb, st->n, st->used, nb);
}

/* Depth-first in raster order, pieces in increasing order: the first placement found at the
 * lowest cost is the lexicographically smallest, i.e. the lowest permutation index. */
static void tsr__pz_dfs(tsr__pz_bnb_state *st, int c, double cost)
{
    if (st->gave_up) return;
    if (++st->nodes > st->limit) {
        st->gave_up = 1;
        return;
    }
    if (c == st->n) {
        if (!st->have_leaf || cost < st->best_cost) {
            st->best_cost = cost;
            memcpy(st->best, st->cur, sizeof(int) * st->n);
            st->found = st->have_leaf = 1;
        }
        return;
    }
    for (int x = 0; x < st->n; x++) {
        double c2 = cost;
        if (st->used >> x & 1u) continue;
        if (c % st->cols) c2 += st->dr[st->cur[c - 1] * st->n + x];
        if (c >= st->cols) c2 += st->dd[st->cur[c - st->cols] * st->n + x];
        st->used |= 1u << x;
        /* Later subtrees have higher indices: once a leaf is known only a strictly lower cost
         * matters; before that, ties with the starting bound must still be found. */
        double lb = c2 + tsr__pz_bound(st, c + 1);
        if (!st->found || (st->have_leaf ? lb < st->best_cost * (1 - 1e-12) : lb <= st->best_cost * (1 + 1e-12))) {
            st->cur[c] = x;
            tsr__pz_dfs(st, c + 1, c2);
        }
        st->used &= ~(1u << x);
    }
}

/* Contract: exact search without rotation for up to TSR_PZ_BNB_MAX pieces over dense costs
 * (n x n). 'upper' (a known placement's cost, or a negative number for none) only prunes. Writes
 * the optimum to o[] and returns 1, or returns 0 when more than 'limit' nodes were needed. */
int tsr__pz_bnb(const double *dr, const double *dd, int rows, int cols, double upper, uint64_t limit, int *o,
                double *cost)
{
    tsr__pz_bnb_state st;
    double mins[3 * TSR_PZ_BNB_MAX];
    int n = rows * cols;
    memset(&st, 0, sizeof st);
    st.dr = dr;
    st.dd = dd;
    st.rows = rows;
    st.cols = cols;
    st.n = n;
    st.inl = mins;
    st.int_ = mins + TSR_PZ_BNB_MAX;
    st.inb = mins + 2 * TSR_PZ_BNB_MAX;
    st.limit = limit;
    for (int x = 0; x < n; x++) {
        double l = -1, t = -1;
        for (int a = 0; a < n; a++) {
            if (a == x) continue;
            if (l < 0 || dr[a * n + x] < l) l = dr[a * n + x];
            if (t < 0 || dd[a * n + x] < t) t = dd[a * n + x];
        }
        st.inl[x] = l > 0 ? l : 0;
        st.int_[x] = t > 0 ? t : 0;
        st.inb[x] = st.inl[x] + st.int_[x];
    }
    if (upper >= 0) {   /* prune with the known cost, but still find the lowest-index optimum */
        st.found = 1;
        st.best_cost = upper;
    }
    tsr__pz_dfs(&st, 0, 0);
    if (st.gave_up || !st.have_leaf) return 0;
    memcpy(o, st.best, sizeof(int) * n);
    *cost = st.best_cost;
    return 1;
}
