/* Jigsaw solver on the GPU: the all-pairs compatibility as a tiled FP32 GEMM of side features
 * (bit for bit the host's dot products) with row and column top-k kernels (variant 'mgc-gemm'),
 * and the exact search that scores one placement per thread with block and grid reductions
 * (variant 'enum-cuda'). Every CUDA call and launch is checked; work runs on the exec's stream. */
#include "cuda_common.cuh"
#include "../cpu/puzzle_core.h"
#include <float.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define TSR_PZ_BM 64   /* outputs per block side */
#define TSR_PZ_BK 16   /* dimension per shared-memory tile */

/* The eight partial sums of tsr__pz_dot (partial c sums elements i = c mod 8 in increasing i)
 * are accumulated one after another, so the features are laid out class by class in this order,
 * each class zero-padded to the same length L, a multiple of TSR_PZ_BK; the order lets each
 * class be added in as tsr__pz_dot combines them: ((s0 + s4) + (s1 + s5)) + ((s2 + s6) + (s3 + s7)). */
static const int tsr__pz_class_order[8] = {0, 4, 1, 5, 2, 6, 3, 7};

/* C[i - r0][j] = X[i] . Y[j] for rows i in [r0, r1), all m columns, bit for bit as tsr__pz_dot
 * computes it on the host: every product rounded, then added (no fused multiply-add), in the
 * same order. X and Y are in the class layout above (row length 8 L). 256 threads, 64 x 64
 * outputs per block, 4 x 4 per thread, each with its running class sum and three combined ones. */
__global__ void tsr__pz_gemm(const float *__restrict__ X, const float *__restrict__ Y, float *__restrict__ C, int r0,
                             int r1, int m, int L)
{
    __shared__ __align__(16) float As[TSR_PZ_BK][TSR_PZ_BM];
    __shared__ __align__(16) float Bs[TSR_PZ_BK][TSR_PZ_BM];
    int tid = threadIdx.x, tx = tid % 16, ty = tid / 16, dimp = 8 * L;
    int bi = r0 + blockIdx.y * TSR_PZ_BM, bj = blockIdx.x * TSR_PZ_BM;
    float acc[4][4], t[4][4], u[4][4], v[4][4];
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++) acc[a][b] = t[a][b] = u[a][b] = v[a][b] = 0.f;
    for (int k0 = 0; k0 < dimp; k0 += TSR_PZ_BK) {
        {
            int r = tid >> 2, kq = (tid & 3) * 4;
            float4 va = make_float4(0.f, 0.f, 0.f, 0.f), vb = va;
            if (bi + r < r1) va = *(const float4 *)(X + (size_t)(bi + r) * dimp + k0 + kq);
            if (bj + r < m) vb = *(const float4 *)(Y + (size_t)(bj + r) * dimp + k0 + kq);
            As[kq][r] = va.x, As[kq + 1][r] = va.y, As[kq + 2][r] = va.z, As[kq + 3][r] = va.w;
            Bs[kq][r] = vb.x, Bs[kq + 1][r] = vb.y, Bs[kq + 2][r] = vb.z, Bs[kq + 3][r] = vb.w;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TSR_PZ_BK; k++) {
            float4 a4 = *(const float4 *)&As[k][ty * 4], b4 = *(const float4 *)&Bs[k][tx * 4];
            float a[4] = {a4.x, a4.y, a4.z, a4.w}, b[4] = {b4.x, b4.y, b4.z, b4.w};
#pragma unroll
            for (int x = 0; x < 4; x++)
#pragma unroll
                for (int y = 0; y < 4; y++) acc[x][y] = __fadd_rn(acc[x][y], __fmul_rn(a[x], b[y]));
        }
        __syncthreads();
        if ((k0 + TSR_PZ_BK) % L == 0) {   /* class number q (of the order above) is complete */
            int q = (k0 + TSR_PZ_BK) / L - 1;
#pragma unroll
            for (int x = 0; x < 4; x++)
#pragma unroll
                for (int y = 0; y < 4; y++) {
                    float c = acc[x][y];
                    switch (q) {
                    case 0: t[x][y] = c; break;                                   /* s0 */
                    case 1: t[x][y] = __fadd_rn(t[x][y], c); break;               /* s0 + s4 */
                    case 2: case 4: u[x][y] = c; break;                           /* s1, s2 */
                    case 3: t[x][y] = __fadd_rn(t[x][y], __fadd_rn(u[x][y], c)); break;
                    case 5: u[x][y] = __fadd_rn(u[x][y], c); break;               /* s2 + s6 */
                    case 6: v[x][y] = c; break;                                   /* s3 */
                    default: t[x][y] = __fadd_rn(t[x][y], __fadd_rn(u[x][y], __fadd_rn(v[x][y], c)));
                    }
                    acc[x][y] = 0.f;
                }
        }
    }
    for (int x = 0; x < 4; x++) {
        int i = bi + ty * 4 + x;
        if (i >= r1) continue;
        for (int y = 0; y < 4; y++) {
            int j = bj + tx * 4 + y;
            if (j < m) C[(size_t)(i - r0) * m + j] = t[x][y];
        }
    }
}

/* Insert into an ascending list of k; strict '<' keeps the earlier index first on ties. */
__device__ static void tsr__pz_dinsert(float *d, int *o, int k, int *have, float v, int idx)
{
    int i;
    if (*have < k) {
        i = (*have)++;
    } else {
        if (!(v < d[k - 1])) return;
        i = k - 1;
    }
    while (i > 0 && v < d[i - 1]) {
        d[i] = d[i - 1];
        o[i] = o[i - 1];
        i--;
    }
    d[i] = v;
    o[i] = idx;
}

/* Row top-k: one warp per row of the chunk; each lane keeps its own list over a strided part,
 * then k rounds of a warp minimum on (value, index) merge them. */
__global__ void tsr__pz_rowtopk(const float *__restrict__ C, int r0, int r1, int m, int rot4, int k,
                                tsr__pz_cand *__restrict__ out)
{
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31, i = r0 + warp;
    float d[TSR_PZ_K];
    int o[TSR_PZ_K], have = 0, head = 0, pi;
    if (i >= r1) return;
    pi = rot4 ? i >> 2 : i;
    for (int j = lane; j < m; j += 32) {
        if ((rot4 ? j >> 2 : j) == pi) continue;
        tsr__pz_dinsert(d, o, k, &have, C[(size_t)(i - r0) * m + j], j);
    }
    for (int t = 0; t < k; t++) {
        float v = head < have ? d[head] : FLT_MAX;
        int idx = head < have ? o[head] : INT_MAX;
        for (int off = 16; off; off >>= 1) {
            float v2 = __shfl_xor_sync(0xffffffffu, v, off);
            int i2 = __shfl_xor_sync(0xffffffffu, idx, off);
            if (v2 < v || (v2 == v && i2 < idx)) v = v2, idx = i2;
        }
        if (head < have && o[head] == idx) head++;
        if (lane == 0) {
            out[(size_t)i * k + t].d = idx == INT_MAX ? INFINITY : v;
            out[(size_t)i * k + t].o = idx == INT_MAX ? -1 : idx;
        }
    }
}

/* Column top-k, merged across row chunks: one thread per column, rows of the chunk in order. */
__global__ void tsr__pz_coltopk(const float *__restrict__ C, int r0, int r1, int m, int rot4, int k,
                                tsr__pz_cand *__restrict__ lists)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x, have = 0, pj;
    float d[TSR_PZ_K];
    int o[TSR_PZ_K];
    if (j >= m) return;
    pj = rot4 ? j >> 2 : j;
    for (int t = 0; t < k; t++)
        if (lists[(size_t)j * k + t].o >= 0) {
            d[have] = lists[(size_t)j * k + t].d;
            o[have++] = lists[(size_t)j * k + t].o;
        }
    for (int i = r0; i < r1; i++) {
        if ((rot4 ? i >> 2 : i) == pj) continue;
        tsr__pz_dinsert(d, o, k, &have, C[(size_t)(i - r0) * m + j], i);
    }
    for (int t = 0; t < k; t++) {
        lists[(size_t)j * k + t].d = t < have ? d[t] : INFINITY;
        lists[(size_t)j * k + t].o = t < have ? o[t] : -1;
    }
}

/* Mark count list entries empty (infinite dissimilarity, no partner). */
__global__ void tsr__pz_fill_empty(tsr__pz_cand *l, size_t count)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < count) {
        l[i].d = INFINITY;
        l[i].o = -1;
    }
}

/* Contract: see tsr__pz_topk_fn. The m x m matrix is computed in row chunks whose size keeps
 * device memory for it within (m/4)^2 x 16 bytes for rotation puzzles (n x n x 4 sides x 4
 * bytes) and m^2 x 4 bytes otherwise, and within half the free memory; with 'full' each chunk
 * is also copied to the host (synchronously: full is pageable memory). */
extern "C" tsr_status tsr__pz_topk_cuda(const float *X, const float *Y, int m, int dim, int rot4, int k,
                                        tsr__pz_cand *rows_out, tsr__pz_cand *cols_out, int stride,
                                        const tsr_exec *ex, float *full)
{
    cudaStream_t st = ex ? (cudaStream_t)ex->stream : 0;
    int L = ((dim + 7) / 8 + TSR_PZ_BK - 1) / TSR_PZ_BK * TSR_PZ_BK, dimp = 8 * L;
    float *dX = NULL, *dY = NULL, *dC = NULL, *hpad = NULL;
    tsr__pz_cand *dR = NULL, *dL = NULL, *hR = NULL, *hL = NULL;
    size_t feat = (size_t)m * dimp * sizeof(float), freeb = 0, totalb = 0, budget, chunk;
    tsr_status s = TSR_OK;
    if (k <= 0) return TSR_OK;
    if ((s = tsr__cuda_status(cudaMemGetInfo(&freeb, &totalb), "puzzle: cudaMemGetInfo"))) return s;
    budget = rot4 ? (size_t)(m / 4) * (m / 4) * 16 : (size_t)m * m * 4;
    if (budget > freeb / 2) budget = freeb / 2;
    chunk = budget / ((size_t)m * sizeof(float));
    if (chunk > (size_t)m) chunk = (size_t)m;
    if (chunk < 1) return tsr__fail(TSR_E_DEVICE_NOMEM, "puzzle: %d pieces need more device memory", rot4 ? m / 4 : m);
    hpad = (float *)malloc(feat);
    hR = (tsr__pz_cand *)malloc(sizeof(tsr__pz_cand) * m * k);
    hL = (tsr__pz_cand *)malloc(sizeof(tsr__pz_cand) * m * k);
    if (!hpad || !hR || !hL) {
        s = tsr__fail(TSR_E_NOMEM, "puzzle: out of host memory");
        goto done;
    }
#define TSR_PZ_CK(call, what)                                                                      \
    do {                                                                                           \
        if ((s = tsr__cuda_status((call), what))) goto done;                                       \
    } while (0)
    TSR_PZ_CK(cudaMalloc((void **)&dX, feat), "puzzle: cudaMalloc");
    TSR_PZ_CK(cudaMalloc((void **)&dY, feat), "puzzle: cudaMalloc");
    TSR_PZ_CK(cudaMalloc((void **)&dC, chunk * m * sizeof(float)), "puzzle: cudaMalloc");
    TSR_PZ_CK(cudaMalloc((void **)&dR, sizeof(tsr__pz_cand) * m * k), "puzzle: cudaMalloc");
    TSR_PZ_CK(cudaMalloc((void **)&dL, sizeof(tsr__pz_cand) * m * k), "puzzle: cudaMalloc");
    for (int pass = 0; pass < 2; pass++) {   /* X then Y in the class layout (see tsr__pz_gemm) */
        const float *src = pass ? Y : X;
        memset(hpad, 0, feat);
        for (int i = 0; i < m; i++)
            for (int q = 0; q < 8; q++)
                for (int c = tsr__pz_class_order[q], e = c, j = 0; e < dim; e += 8, j++)
                    hpad[(size_t)i * dimp + (size_t)q * L + j] = src[(size_t)i * dim + e];
        TSR_PZ_CK(cudaMemcpyAsync(pass ? dY : dX, hpad, feat, cudaMemcpyHostToDevice, st), "puzzle: upload");
        TSR_PZ_CK(cudaStreamSynchronize(st), "puzzle: upload");
    }
    tsr__pz_fill_empty<<<(unsigned)tsr__div_up((unsigned)(m * k), 256), 256, 0, st>>>(dL, (size_t)m * k);
    if ((s = TSR_CUDA_LAUNCHED("puzzle: init kernel"))) goto done;
    for (int r0 = 0; r0 < m; r0 += (int)chunk) {
        int r1 = r0 + (int)chunk < m ? r0 + (int)chunk : m;
        dim3 grid(tsr__div_up((unsigned)m, TSR_PZ_BM), tsr__div_up((unsigned)(r1 - r0), TSR_PZ_BM));
        tsr__pz_gemm<<<grid, 256, 0, st>>>(dX, dY, dC, r0, r1, m, L);
        if ((s = TSR_CUDA_LAUNCHED("puzzle: gemm kernel"))) goto done;
        tsr__pz_rowtopk<<<tsr__div_up((unsigned)(r1 - r0) * 32, 256), 256, 0, st>>>(dC, r0, r1, m, rot4, k, dR);
        if ((s = TSR_CUDA_LAUNCHED("puzzle: row top-k kernel"))) goto done;
        tsr__pz_coltopk<<<tsr__div_up((unsigned)m, 128), 128, 0, st>>>(dC, r0, r1, m, rot4, k, dL);
        if ((s = TSR_CUDA_LAUNCHED("puzzle: column top-k kernel"))) goto done;
        if (full)
            TSR_PZ_CK(cudaMemcpyAsync(full + (size_t)r0 * m, dC, sizeof(float) * (size_t)(r1 - r0) * m,
                                      cudaMemcpyDeviceToHost, st),
                      "puzzle: download of the matrix");
    }
    TSR_PZ_CK(cudaMemcpyAsync(hR, dR, sizeof(tsr__pz_cand) * m * k, cudaMemcpyDeviceToHost, st), "puzzle: download");
    TSR_PZ_CK(cudaMemcpyAsync(hL, dL, sizeof(tsr__pz_cand) * m * k, cudaMemcpyDeviceToHost, st), "puzzle: download");
    TSR_PZ_CK(cudaStreamSynchronize(st), "puzzle: compatibility kernels");
    for (int i = 0; i < m; i++) {
        memcpy(rows_out + (size_t)i * stride, hR + (size_t)i * k, sizeof(tsr__pz_cand) * k);
        memcpy(cols_out + (size_t)i * stride, hL + (size_t)i * k, sizeof(tsr__pz_cand) * k);
    }
done:
    cudaFree(dX);
    cudaFree(dY);
    cudaFree(dC);
    cudaFree(dR);
    cudaFree(dL);
    free(hpad);
    free(hR);
    free(hL);
    return s;
}

/* ---------------------------------------------------------------- exact search */

#define TSR_PZ_EXACT_THREADS 256

/* Each thread scores indices tid, tid + stride, ...; the block reduces to its best (lowest cost,
 * then lowest index) into bc/bi[blockIdx.x]. Costs live in shared memory. */
__global__ void tsr__pz_exact_kernel(const double *__restrict__ gdr, const double *__restrict__ gdd, int rows,
                                     int cols, int rotate, int m, uint64_t count, uint64_t nfact, double *bc,
                                     unsigned long long *bi)
{
    extern __shared__ double sh[];
    __shared__ double rc[TSR_PZ_EXACT_THREADS];
    __shared__ unsigned long long ri[TSR_PZ_EXACT_THREADS];
    double *dr = sh, *dd = sh + m * m;
    int o[TSR_PZ_EXACT_MAX], n = rows * cols;
    double best = 0;
    unsigned long long besti = ~0ull;
    for (int i = threadIdx.x; i < m * m; i += blockDim.x) {
        dr[i] = gdr[i];
        dd[i] = gdd[i];
    }
    __syncthreads();
    for (uint64_t idx = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; idx < count;
         idx += (uint64_t)gridDim.x * blockDim.x) {
        double c;
        tsr__pz_decode(idx, n, rotate, nfact, o);
        c = tsr__pz_cost(o, rows, cols, m, dr, dd);
        if (besti == ~0ull || c < best) {   /* indices rise per thread: the first of equals stays */
            best = c;
            besti = idx;
        }
    }
    rc[threadIdx.x] = best;
    ri[threadIdx.x] = besti;
    __syncthreads();
    for (int h = blockDim.x / 2; h; h >>= 1) {
        if (threadIdx.x < h) {
            double c2 = rc[threadIdx.x + h];
            unsigned long long i2 = ri[threadIdx.x + h];
            if (i2 != ~0ull && (ri[threadIdx.x] == ~0ull || c2 < rc[threadIdx.x] ||
                                (c2 == rc[threadIdx.x] && i2 < ri[threadIdx.x]))) {
                rc[threadIdx.x] = c2;
                ri[threadIdx.x] = i2;
            }
        }
        __syncthreads();
    }
    if (!threadIdx.x) {
        bc[blockIdx.x] = rc[0];
        bi[blockIdx.x] = ri[0];
    }
}

/* Contract: see tsr__pz_exact_fn. The blocks' results are reduced on the host with the same
 * order (lowest cost, then lowest index), so the answer equals the CPU variant's. */
extern "C" tsr_status tsr__pz_exact_cuda(const double *dr, const double *dd, int rows, int cols, int rotate,
                                         uint64_t count, uint64_t *best_idx, double *best_cost, const tsr_exec *ex)
{
    cudaStream_t st = ex ? (cudaStream_t)ex->stream : 0;
    int n = rows * cols, m = rotate ? 4 * n : n, blocks;
    size_t costs = sizeof(double) * m * m;
    uint64_t nfact = 1, want;
    double *gdr = NULL, *gdd = NULL, *gbc = NULL, *hbc = NULL;
    unsigned long long *gbi = NULL, *hbi = NULL;
    tsr_status s = TSR_OK;
    for (int i = 2; i <= n; i++) nfact *= (uint64_t)i;
    want = (count + TSR_PZ_EXACT_THREADS * 64 - 1) / (TSR_PZ_EXACT_THREADS * 64);   /* ~64 per thread */
    blocks = want < 1 ? 1 : want > 8192 ? 8192 : (int)want;
    if (2 * costs > 48 * 1024) return tsr__fail(TSR_E_UNSUPPORTED, "puzzle: exact search grid too large");
    hbc = (double *)malloc(sizeof(double) * blocks);
    hbi = (unsigned long long *)malloc(sizeof(unsigned long long) * blocks);
    if (!hbc || !hbi) {
        s = tsr__fail(TSR_E_NOMEM, "puzzle: out of host memory");
        goto done;
    }
    TSR_PZ_CK(cudaMalloc((void **)&gdr, costs), "puzzle: cudaMalloc");
    TSR_PZ_CK(cudaMalloc((void **)&gdd, costs), "puzzle: cudaMalloc");
    TSR_PZ_CK(cudaMalloc((void **)&gbc, sizeof(double) * blocks), "puzzle: cudaMalloc");
    TSR_PZ_CK(cudaMalloc((void **)&gbi, sizeof(unsigned long long) * blocks), "puzzle: cudaMalloc");
    TSR_PZ_CK(cudaMemcpyAsync(gdr, dr, costs, cudaMemcpyHostToDevice, st), "puzzle: upload");
    TSR_PZ_CK(cudaMemcpyAsync(gdd, dd, costs, cudaMemcpyHostToDevice, st), "puzzle: upload");
    tsr__pz_exact_kernel<<<blocks, TSR_PZ_EXACT_THREADS, 2 * costs, st>>>(gdr, gdd, rows, cols, rotate, m, count,
                                                                          nfact, gbc, gbi);
    if ((s = TSR_CUDA_LAUNCHED("puzzle: exact search kernel"))) goto done;
    TSR_PZ_CK(cudaMemcpyAsync(hbc, gbc, sizeof(double) * blocks, cudaMemcpyDeviceToHost, st), "puzzle: download");
    TSR_PZ_CK(cudaMemcpyAsync(hbi, gbi, sizeof(unsigned long long) * blocks, cudaMemcpyDeviceToHost, st),
              "puzzle: download");
    TSR_PZ_CK(cudaStreamSynchronize(st), "puzzle: exact search");
    {
        unsigned long long bi = ~0ull;
        double bc = 0;
        for (int b = 0; b < blocks; b++)
            if (hbi[b] != ~0ull && (bi == ~0ull || hbc[b] < bc || (hbc[b] == bc && hbi[b] < bi))) {
                bc = hbc[b];
                bi = hbi[b];
            }
        *best_idx = bi;
        *best_cost = bc;
    }
done:
    cudaFree(gdr);
    cudaFree(gdd);
    cudaFree(gbc);
    cudaFree(gbi);
    free(hbc);
    free(hbi);
    return s;
}
