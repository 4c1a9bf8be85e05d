/* The 'tile' CUDA deband kernel (included by src/cuda/deband.cu after deband_vec.cuh).
 *
 * 'staged' spends about 94 instructions per luma pixel in sample mode 2 (SASS of sm_90): 35 for
 * the offsets (per-pixel border limit and branches, 16-bit packing for the later planes), 11 for
 * staging (an integer division per 16-byte chunk), 48 for the planes (a shift per reference for
 * the input depth, 64-bit-style address arithmetic, a grain branch per pixel). It is bound by
 * instruction issue, so this kernel does the same work in fewer instructions:
 *  - one launch for the whole frame: the blocks of the luma's group come first, then those of the
 *    chroma group; every plane of a group is staged at once, so a row's offsets are hashed once
 *    and used straight away by each plane (no packing), with one barrier per block;
 *  - tiles whose pixels all have the full range (the border limit never binds) take a path with
 *    constant limits; pick() as one multiply-high: (r16 * n) >> 16 == umulhi(r16 << 16, n);
 *  - staging by rows (a warp per row, a lane per 16-byte chunk): no division;
 *  - the input depth as one shift of the sum: (sum of (r << s)) == (sum of r) << s;
 *  - the grain hashed only when the plane has grain (a branch uniform over the block).
 * Every value is the definition's (deband_core.h), so the output is the reference's bit for bit.
 * Groups whose staging does not fit, or planes not aligned to 16 bytes, run 'staged' instead. */
#ifndef TSR_DEBAND_TILE_CUH
#define TSR_DEBAND_TILE_CUH

#define TSR_DBT_BX 32                              /* threads along x, 4 pixels each */
#ifndef TSR_DBT_BY
#define TSR_DBT_BY 8                               /* warps of a block */
#endif
#ifndef TSR_DBT_ROWS
#define TSR_DBT_ROWS 4                             /* rows of a thread, TSR_DBT_BY apart */
#endif
#define TSR_DBT_TW (TSR_DBT_BX * TSR_DBV_PX)       /* tile: 128 x 32 pixels */
#define TSR_DBT_TH (TSR_DBT_BY * TSR_DBT_ROWS)
#define TSR_DBT_SMEM_MAX (96 * 1024)               /* staging of a block; > 48 KB needs the opt-in */
#ifndef TSR_DBT_MINB
#define TSR_DBT_MINB 4
#endif

/* The row and column keys are kept folded (tsr__db_fold), so each hash of a pixel starts with
 * one xor instead of xor, shift, xor; -DTSR_DBT_FOLD=0 hashes them whole (a measurement knob). */
#ifndef TSR_DBT_FOLD
#define TSR_DBT_FOLD 1
#endif
#if TSR_DBT_FOLD
#define TSR__DBT_KEY(v) tsr__db_fold(v)
#define TSR__DBT_HASH(v) tsr__db_hash_folded(v)
#else
#define TSR__DBT_KEY(v) (v)
#define TSR__DBT_HASH(v) tsr__db_hash(v)
#endif
/* The row loop is compiled for each plane count a group can have (1: luma or gray; 2: the
 * chroma pair; 3: 4:4:4 and RGB), so the planes' constants are loaded once rather than on each
 * row; -DTSR_DBT_NP=0 keeps one loop over a plane count read at run time (a measurement knob). */
#ifndef TSR_DBT_NP
#define TSR_DBT_NP 1
#endif

/* One group of planes sharing geometry and offsets, with its staging layout and tile grid. */
struct tsr__dbt_group {
    tsr__dbv_args a;
    int sw;         /* staged row pitch, samples (a multiple of 16 bytes) */
    int ps;         /* staged samples per plane */
    int tx;         /* tiles across */
    int nb;         /* tiles of the group */
};

struct tsr__dbt_args {
    tsr__dbt_group g[2];
    int ng;
    int first;      /* the group whose blocks come first in the launch (tsr__dbt_first) */
};

/* Staging by asynchronous copies (sm_80 and later): every 16-byte chunk of the block's reach is
 * in flight at once and nothing waits on a register, where a load and a store per chunk made a
 * thread's 8 or 16 chunks 8 or 16 global round trips in sequence before the barrier (the SASS of
 * the sixteenth session). -DTSR_DBT_ASYNC=0 copies through registers (a measurement knob). */
#ifndef TSR_DBT_ASYNC
#define TSR_DBT_ASYNC 1
#endif

/* Copy rows [ya, yb) x columns [xa, xb) of a plane (xa a multiple of 16 bytes) into b (pitch
 * sw): a warp per row, a lane per 16-byte chunk; a chunk that would pass the plane's width w is
 * copied sample by sample up to xb. With TSR_DBT_ASYNC the whole chunks are only queued: the
 * caller waits for them (tsr__cp_commit, tsr__cp_wait<0>) before its barrier. */
template <typename Tin>
__device__ __forceinline__ void tsr__dbt_stage(const Tin *src, int sp, int xa, int xb, int ya, int yb, int w, int sw,
                                               Tin *b)
{
    constexpr int vs = 16 / sizeof(Tin);
    const int chunks = (xb - xa + vs - 1) / vs;
    for (int r = threadIdx.y; r < yb - ya; r += TSR_DBT_BY) {
        const Tin *g = src + (size_t)(ya + r) * (size_t)sp + xa;
        Tin *d = b + r * sw;
        for (int c = threadIdx.x; c < chunks; c += TSR_DBT_BX) {
            const int x = c * vs;
            if (xa + x + vs <= w) {
#if TSR_DBT_ASYNC
                tsr__cp16((unsigned char *)(d + x), (const unsigned char *)(g + x));
#else
                *(uint4 *)(d + x) = __ldg((const uint4 *)(g + x));
#endif
            } else {
                for (int k = 0; k < xb - xa - x; k++) d[x + k] = __ldg(g + x + k);
            }
        }
    }
}

/* Deband, grain and store 4 pixels of one plane's row. pb: pixel x0 in the staging; pixel k's
 * references are at byte offsets k*S +-v1[k] and (mode 2) k*S +-v2[k] from it (S the sample
 * size); grow: the row's grain key and xk the pixels' column keys, both folded (TSR__DBT_KEY).
 * d: pixel x0 of the output row; n: pixels inside the plane (1..4). SH: the input shift when
 * known at compile time (0 for 16-bit samples), else -1. */
template <typename Tin, typename Tout, int MODE, int BLUR, int RAW, int SH>
__device__ __forceinline__ void tsr__dbt_pixels(const tsr__db_plane &P, const Tin *pb, const int *v1, const int *v2,
                                                uint32_t grow, int x0, int y, const uint32_t *xk, Tout *d, int n,
                                                int vec)
{
    typedef typename tsr__dbv_vec<Tin>::type V;
    constexpr int S = (int)sizeof(Tin);
    const V sv = *(const V *)pb;
    const int src[TSR_DBV_PX] = {sv.x, sv.y, sv.z, sv.w};
    const int sh = SH >= 0 ? SH : P.in_shift, G = P.grain;
    /* |a - b| >= thr as one unsigned compare: a - b + thr - 1 outside [0, 2 thr - 2] (always
     * true for thr 0) */
    const unsigned thm1 = (unsigned)P.thr - 1u, lim2 = P.thr ? 2u * (unsigned)P.thr - 1u : 0u;
    const char *pc = (const char *)pb;
    int ref[TSR_DBV_PX][4], grain[TSR_DBV_PX], out[TSR_DBV_PX];
#pragma unroll
    for (int k = 0; k < TSR_DBV_PX; k++) {
        ref[k][0] = *(const Tin *)(pc + v1[k] + k * S);
        ref[k][1] = *(const Tin *)(pc - v1[k] + k * S);
        if (MODE == 2) {
            ref[k][2] = *(const Tin *)(pc + v2[k] + k * S);
            ref[k][3] = *(const Tin *)(pc - v2[k] + k * S);
        } else {
            ref[k][2] = ref[k][3] = 0;
        }
    }
    /* grain without its -G, which goes into the source and the average below */
    if (G) {
        const uint32_t n2 = 2u * (uint32_t)G + 1u;
#pragma unroll
        for (int k = 0; k < TSR_DBV_PX; k++) grain[k] = (int)__umulhi(TSR__DBT_HASH(grow ^ xk[k]) << 16, n2);
    } else {
#pragma unroll
        for (int k = 0; k < TSR_DBV_PX; k++) grain[k] = 0;
    }
#pragma unroll
    for (int k = 0; k < TSR_DBV_PX; k++) {
        /* s and avg less G (avg - G == (sum + 2 - 4G) >> 2 exactly); the sum of the shifted
         * references is the shifted sum */
        const int s = (src[k] << sh) - G;
        int avg, keep;
        if (MODE == 1) {
            avg = (((ref[k][0] + ref[k][1]) << sh) + 1 - 2 * G) >> 1;
        } else {
            avg = (((ref[k][0] + ref[k][1] + ref[k][2] + ref[k][3]) << sh) + 2 - 4 * G) >> 2;
        }
        if (BLUR) {
            keep = (unsigned)(avg - s) + thm1 >= lim2;
        } else {
            const int s0 = src[k] << sh;
            keep = ((unsigned)((ref[k][0] << sh) - s0) + thm1 >= lim2) | ((unsigned)((ref[k][1] << sh) - s0) + thm1 >= lim2);
            if (MODE == 2)
                keep |= ((unsigned)((ref[k][2] << sh) - s0) + thm1 >= lim2) | ((unsigned)((ref[k][3] << sh) - s0) + thm1 >= lim2);
        }
        const int v = min(max((keep ? s : avg) + grain[k], P.lo), P.hi);
        out[k] = RAW ? v : tsr__db_quant(&P, v, tsr__db_dither_add(&P, x0 + k, y));
    }
    tsr__dbv_store<Tout>(out, d, n, vec);
}

/* The rows of a block's tile after its staging (see tsr__dbt_kernel): each thread debands its
 * 4 pixels on each of its rows in every plane of the group. NP: the group's plane count when
 * known at compile time, else 0. */
template <typename Tin, typename Tout, int MODE, int BLUR, int RAW, int SH, int NP>
__device__ __forceinline__ void tsr__dbt_rows(const tsr__dbt_group &G, const Tin *buf, const uint32_t (*keys)[TSR_DBT_TH],
                                              const uint4 *ck, int x0, int n, int by0, int xa, int ya, bool inner)
{
    constexpr int S = (int)sizeof(Tin);
    const int h = G.a.P[0].h, R = G.a.P[0].range, sw = G.sw, swb = sw * S;
#pragma unroll
    for (int j = 0; j < TSR_DBT_ROWS; j++) {
        const int ty = threadIdx.y + TSR_DBT_BY * j, y = by0 + ty;
        const uint32_t orow = keys[0][ty];
        /* read from shared memory on each row: kept in registers, the compiler remade them
         * from x0 on each row instead (3 instructions a pixel and hash) */
        const uint4 c = *ck;
        const uint32_t xk[TSR_DBV_PX] = {c.x, c.y, c.z, c.w};
        int v1[TSR_DBV_PX], v2[TSR_DBV_PX];
        if (y >= h) break;
        if (inner) {
            /* dx = dxr - R, dy = dyr - R: the R terms are the constants C1, C2 */
            const uint32_t n2 = MODE == 1 ? (uint32_t)R + 1u : 2u * (uint32_t)R + 1u;
            const int C1 = R * (S + swb), C2 = R * (swb - S);
#pragma unroll
            for (int k = 0; k < TSR_DBV_PX; k++) {
                const uint32_t r = TSR__DBT_HASH(orow ^ xk[k]);
                if (MODE == 1) {
                    v1[k] = (int)__umulhi(r << 16, n2) * swb;
                    v2[k] = 0;
                } else {
                    const int dxr = (int)__umulhi(r << 16, n2), dyr = (int)__umulhi(r & 0xffff0000u, n2);
                    v1[k] = dxr * S + dyr * swb - C1;
                    v2[k] = dyr * S - dxr * swb + C2;
                }
            }
        } else {
            tsr__db_plane Q = G.a.P[0];
            Q.sample_mode = MODE;
#pragma unroll
            for (int k = 0; k < TSR_DBV_PX; k++) {
                int dx = 0, dy = 0;   /* pixels past the width read their own place; not stored */
                if (k < n) tsr__db_offsets_r(&Q, TSR__DBT_HASH(orow ^ xk[k]), x0 + k, y, &dx, &dy);
                v1[k] = MODE == 1 ? dy * swb : dx * S + dy * swb;
                v2[k] = MODE == 1 ? 0 : dy * S - dx * swb;
            }
        }
#pragma unroll
        for (int q = 0; q < (NP ? NP : 3); q++) {
            if (!NP && q == G.a.np) break;
            tsr__dbt_pixels<Tin, Tout, MODE, BLUR, RAW, SH>(
                G.a.P[q], buf + q * G.ps + (y - ya) * sw + (x0 - xa), v1, v2, keys[1 + q][ty], x0, y, xk,
                (Tout *)G.a.dst[q] + (size_t)y * (size_t)G.a.dp[q] + x0, n, G.a.vec);
        }
    }
}

/* A block stages its tile's reach of every plane of its group and the row keys of its 32 rows,
 * then each thread debands 4 pixels on each of 4 rows (8 apart) of every plane. A pixel's
 * references are kept as byte offsets in the staging: v1 = (dx + dy*sw)*S, v2 = (dy - dx*sw)*S
 * (mode 1: v1 = dy*sw*S). */
template <typename Tin, typename Tout, int MODE, int BLUR, int RAW, int SH>
__global__ void __launch_bounds__(TSR_DBT_BX *TSR_DBT_BY, TSR_DBT_MINB) tsr__dbt_kernel(const tsr__dbt_args A)
{
    extern __shared__ uint4 tsr__dbt_mem[];
    __shared__ uint32_t keys[4][TSR_DBT_TH];   /* offset key, then grain keys of planes 0..2 */
    Tin *buf = (Tin *)tsr__dbt_mem;
    constexpr int vs = 16 / sizeof(Tin);
    const int late = A.ng > 1 && (int)blockIdx.x >= A.g[A.first].nb;   /* a block of the group that comes second */
    const tsr__dbt_group &G = A.g[late ? 1 - A.first : A.first];
    const int b = (int)blockIdx.x - (late ? A.g[A.first].nb : 0), tby = b / G.tx, tbx = b - tby * G.tx;
    const int w = G.a.P[0].w, h = G.a.P[0].h, R = G.a.P[0].range, np = G.a.np, sw = G.sw;
    const int bx0 = tbx * TSR_DBT_TW, by0 = tby * TSR_DBT_TH, x0 = bx0 + threadIdx.x * TSR_DBV_PX;
    const int ya = max(by0 - R, 0), yb = min(by0 + TSR_DBT_TH + R, h);
    const int xa = MODE == 1 ? bx0 : max(bx0 - R, 0) / vs * vs;
    const int xb = min(bx0 + TSR_DBT_TW + (MODE == 1 ? 0 : R), w);
    const int n = x0 < w ? min(w - x0, TSR_DBV_PX) : 0;
    /* Every pixel of the tile has the full range: the border limit never binds. */
    const bool inner = by0 >= R && by0 + TSR_DBT_TH + R <= h &&
                       (MODE == 1 ? bx0 + TSR_DBT_TW <= w : bx0 >= R && bx0 + TSR_DBT_TW + R <= w);
    /* the staging first: with TSR_DBT_ASYNC its copies are in flight while the keys are hashed */
    for (int q = 0; q < np; q++)
        tsr__dbt_stage<Tin>((const Tin *)G.a.src[q], G.a.sp[q], xa, xb, ya, yb, w, sw, buf + q * G.ps);
    __shared__ uint4 ck[TSR_DBT_BX];           /* column keys of each thread's 4 pixels */
    if (threadIdx.y == TSR_DBT_BY - 1) {
        const uint32_t c = (uint32_t)x0 * 0xc2b2ae35u;
        ck[threadIdx.x] = make_uint4(TSR__DBT_KEY(c), TSR__DBT_KEY(c + 0xc2b2ae35u), TSR__DBT_KEY(c + 2u * 0xc2b2ae35u),
                                     TSR__DBT_KEY(c + 3u * 0xc2b2ae35u));
    }
    if (threadIdx.y < 1 + np) {   /* warp 0: offset keys; warps 1..np: grain keys */
        const uint32_t key = threadIdx.y ? G.a.P[threadIdx.y - 1].grain_key : G.a.P[0].off_key;
        for (int i = threadIdx.x; i < TSR_DBT_TH; i += TSR_DBT_BX) keys[threadIdx.y][i] = TSR__DBT_KEY(tsr__db_rowkey(key, by0 + i));
    }
#if TSR_DBT_ASYNC
    tsr__cp_commit();
    tsr__cp_wait<0>();
#endif
    __syncthreads();
    if (!n) return;
#if TSR_DBT_NP
    if (np == 1)
        tsr__dbt_rows<Tin, Tout, MODE, BLUR, RAW, SH, 1>(G, buf, keys, ck + threadIdx.x, x0, n, by0, xa, ya, inner);
    else if (np == 2)
        tsr__dbt_rows<Tin, Tout, MODE, BLUR, RAW, SH, 2>(G, buf, keys, ck + threadIdx.x, x0, n, by0, xa, ya, inner);
    else
        tsr__dbt_rows<Tin, Tout, MODE, BLUR, RAW, SH, 3>(G, buf, keys, ck + threadIdx.x, x0, n, by0, xa, ya, inner);
#else
    tsr__dbt_rows<Tin, Tout, MODE, BLUR, RAW, SH, 0>(G, buf, keys, ck + threadIdx.x, x0, n, by0, xa, ya, inner);
#endif
}

/* Staging layout of a group (sw, ps) and its bytes, or 0 when it does not fit a block. */
static size_t tsr__dbt_plan(tsr__dbt_group *g, int sample_bytes)
{
    const int vs = 16 / sample_bytes, R = g->a.P[0].range;
    const long long sw = g->a.P[0].sample_mode == 1 ? TSR_DBT_TW : (TSR_DBT_TW + 2LL * R + vs - 1) / vs * vs + vs;
    const long long ps = sw * (TSR_DBT_TH + 2LL * R), bytes = ps * g->a.np * sample_bytes;
    if (bytes > TSR_DBT_SMEM_MAX) return 0;
    g->sw = (int)sw;
    g->ps = (int)ps;
    g->tx = (int)tsr__div_up((unsigned)g->a.P[0].w, TSR_DBT_TW);
    g->nb = g->tx * (int)tsr__div_up((unsigned)g->a.P[0].h, TSR_DBT_TH);
    return (size_t)bytes;
}

/* Queue the instantiation of the tile kernel for A with 'bytes' of staging per block; 16-bit
 * samples at 16 bits (no input shift) get their own. */
template <typename Tin, typename Tout, int RAW, int SH>
static tsr_status tsr__dbt_launch_sh(const tsr__dbt_args &A, size_t bytes, cudaStream_t st)
{
    const int m = A.g[0].a.P[0].sample_mode, bl = A.g[0].a.P[0].blur_first != 0;
    void (*k)(const tsr__dbt_args) =
        m == 1 ? (bl ? tsr__dbt_kernel<Tin, Tout, 1, 1, RAW, SH> : tsr__dbt_kernel<Tin, Tout, 1, 0, RAW, SH>)
               : (bl ? tsr__dbt_kernel<Tin, Tout, 2, 1, RAW, SH> : tsr__dbt_kernel<Tin, Tout, 2, 0, RAW, SH>);
    const unsigned blocks = (unsigned)A.g[0].nb + (A.ng > 1 ? (unsigned)A.g[1].nb : 0u);
    /* the row and column keys are static shared memory: with them a block may not pass 48 KB
     * unless the kernel opts in (leaving out the column keys' 512 bytes failed the launch of
     * staging sizes just under 48 KB, e.g. 16-bit luma at range 40 in sample mode 2) */
    if (bytes + sizeof(uint32_t) * 4 * TSR_DBT_TH + sizeof(uint4) * TSR_DBT_BX > 48 * 1024)
        TSR_DB_TRY(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes),
                   "deband: tile kernel shared memory");
    k<<<blocks, dim3(TSR_DBT_BX, TSR_DBT_BY), bytes, st>>>(A);
    return TSR_CUDA_LAUNCHED("deband: tile kernel");
}

template <typename Tin, typename Tout, int RAW>
static tsr_status tsr__dbt_launch(const tsr__dbt_args &A, size_t bytes, cudaStream_t st)
{
    /* 8-bit samples always have an input shift, so only 16-bit ones instantiate SH = 0 (with
     * a plain 'if' the compiler built 12 kernels that nothing launched, a sixth of this file's
     * machine code and of its compile time) */
    if constexpr (sizeof(Tin) == 2)
        if (A.g[0].a.P[0].in_shift == 0) return tsr__dbt_launch_sh<Tin, Tout, RAW, 0>(A, bytes, st);
    return tsr__dbt_launch_sh<Tin, Tout, RAW, -1>(A, bytes, st);
}

/* Which group's blocks a two-group launch (luma and the chroma pair) runs first. The chroma
 * blocks (two planes each, a quarter as many) are the heaviest; run last they left the launch a
 * tail. H200, thirty-first session, one build, TSR_CUDA_DEBAND_CHROMA_FIRST 0 / 1 alternating, 2
 * rounds, 4K 16-bit 4:2:0, % of the frame's plane-by-plane copy: sample mode 2 83.6-84.4 / 85.1-86.2
 * (0.046 / 0.045 ms), mode 1 102.9-103.4 / 107.9-109.5 (0.037 / 0.035 ms). So chroma first is the
 * default in both modes (the twentieth session's separate builds had measured mode 1 slower that
 * way, 102-103 against 105.5-106, but their register allocations differed).
 * TSR_CUDA_DEBAND_CHROMA_FIRST (0 or 1) overrides. */
static int tsr__dbt_first(void)
{
    return tsr__env_int("TSR_CUDA_DEBAND_CHROMA_FIRST", 1) ? 1 : 0;
}

/* Queue the tile variant for a frame (arguments as tsr__dbv_run): one launch for all groups when
 * every plane is aligned to 16 bytes and each group's staging fits; else 'staged'. */
static tsr_status tsr__dbt_run(const tsr_frame *src, tsr_frame *dst, const tsr__db_plane P[3], uint16_t *vals,
                               cudaStream_t st)
{
    const int wide_in = src->bits > 8, wide_out = vals || dst->bits > 8, ib = wide_in ? 2 : 1, ob = wide_out ? 2 : 1;
    tsr__dbt_args A;
    size_t base = 0, bytes = 0;
    int raw;
    memset(&A, 0, sizeof A);
    for (int i = 0; i < src->nplanes; i++) {
        const tsr__db_plane *q = &P[i];
        const size_t sp = src->stride[i] / (size_t)ib, dp = vals ? (size_t)q->w : dst->stride[i] / (size_t)ob;
        void *d = vals ? (void *)(vals + base) : dst->plane[i];
        tsr__dbv_args *a = A.ng ? &A.g[A.ng - 1].a : NULL;
        if ((uintptr_t)src->plane[i] % 16 || src->stride[i] % 16 || sp > (size_t)INT_MAX || dp > (size_t)INT_MAX)
            return tsr__dbv_run(src, dst, P, vals, 1, st);
        if (!a || q->w != a->P[0].w || q->h != a->P[0].h || q->off_key != a->P[0].off_key) {
            if (A.ng == 2) return tsr__dbv_run(src, dst, P, vals, 1, st);
            a = &A.g[A.ng++].a;
            a->vec = 1;
        }
        a->P[a->np] = *q;
        a->src[a->np] = src->plane[i];
        a->sp[a->np] = (int)sp;
        a->dst[a->np] = d;
        a->dp[a->np] = (int)dp;
        a->vec &= tsr__dbv_aligned(d, dp * (size_t)ob, ob);
        a->np++;
        base += (size_t)q->w * (size_t)q->h;
    }
    for (int gi = 0; gi < A.ng; gi++) {
        const size_t b = tsr__dbt_plan(&A.g[gi], ib);
        if (!b) return tsr__dbv_run(src, dst, P, vals, 1, st);
        bytes = b > bytes ? b : bytes;
    }
    if (!A.ng) return TSR_OK;
    A.first = A.ng > 1 ? tsr__dbt_first() : 0;
    raw = vals || (wide_out && P[0].out_shift == 0);
    if (raw) return wide_in ? tsr__dbt_launch<uint16_t, uint16_t, 1>(A, bytes, st) : tsr__dbt_launch<uint8_t, uint16_t, 1>(A, bytes, st);
    if (wide_in) return wide_out ? tsr__dbt_launch<uint16_t, uint16_t, 0>(A, bytes, st) : tsr__dbt_launch<uint16_t, uint8_t, 0>(A, bytes, st);
    return wide_out ? tsr__dbt_launch<uint8_t, uint16_t, 0>(A, bytes, st) : tsr__dbt_launch<uint8_t, uint8_t, 0>(A, bytes, st);
}

#endif
