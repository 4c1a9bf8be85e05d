/* Exact puzzle search on the CPU (variant 'enum'): every placement index, as in the seed
 * article, decoded from the factorial number system and scored; threads reduce to the lowest
 * cost, ties to the lowest index. Same decode and summation order as the CUDA variant. */
#include "puzzle_core.h"
#include <pthread.h>
#include <stdlib.h>

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
