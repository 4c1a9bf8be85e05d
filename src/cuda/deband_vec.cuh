/* The 'vec' CUDA deband kernel (included by src/cuda/deband.cu).
 *
 * The planar kernel is bound by instruction issue, not by memory: about 220 instructions per
 * sample (two hashes, 64-bit address arithmetic for five loads, the Bayer dither even when the
 * output keeps 16 bits, the row keys), which at the H100's issue rate is most of its time. This
 * kernel spends fewer per sample:
 *  - a thread owns 4 consecutive pixels of a row: one 4-sample load of the sources and one
 *    4-sample store (when the plane is aligned for it), the row's keys and border limit once;
 *  - the planes that share their reference offsets (Y alone; Cb and Cr of 4:2:0 and 4:2:2; all
 *    three of 4:4:4) go through one launch, and a pixel's offsets are hashed once for all of them;
 *  - references are addressed with 32-bit offsets from the pixel (the host checks that range
 *    rows of a plane span less than 2^31 samples);
 *  - sample mode, blur-first and whether the output is the 16-bit value itself (no rounding or
 *    dither: 16-bit output, or the Floyd-Steinberg values) are template parameters.
 * Every step is the shared per-pixel definition of deband_core.h, so the result is the
 * reference's bit for bit. */
#ifndef TSR_DEBAND_VEC_CUH
#define TSR_DEBAND_VEC_CUH

#include <limits.h>

#define TSR_DBV_PX 4   /* pixels of a thread, consecutive along x */
#define TSR_DBV_BX 32  /* threads of a block along x: 128 pixels */
#define TSR_DBV_BY 4   /* rows of a block */
/* Resident blocks per SM asked of the compiler (a register cap; bench/deband/minb_sweep.sh).
 * Tighter caps (10-16 blocks of vec, 5-8 of staged) spill and were slower or no faster. */
#ifndef TSR_DBV_MINB
#define TSR_DBV_MINB 8
#endif

/* One launch: the planes of one geometry (equal size, offset key, range and sample mode). dst
 * may be the Floyd-Steinberg values (16-bit, pitch w) instead of the output plane. */
struct tsr__dbv_args {
    tsr__db_plane P[3];
    const void *src[3];
    void *dst[3];
    int sp[3], dp[3];   /* pitches in samples */
    int np;             /* planes: 1..3 */
    int vec;            /* every src and dst row is aligned for 4-sample loads and stores */
};

/* A 4-sample vector of T: 8 bytes for 16-bit samples, 4 for 8-bit. */
template <typename T> struct tsr__dbv_vec;
template <> struct tsr__dbv_vec<uint16_t> { typedef ushort4 type; };
template <> struct tsr__dbv_vec<uint8_t> { typedef uchar4 type; };

/* Store the n (1..4) output values of a thread at d: one 4-sample store when the row is aligned
 * for it (vec) and all 4 are inside the plane, else one at a time. */
template <typename Tout>
__device__ __forceinline__ void tsr__dbv_store(const int *out, Tout *d, int n, int vec)
{
    if (vec && n == TSR_DBV_PX) {
        typename tsr__dbv_vec<Tout>::type v;
        v.x = (Tout)out[0], v.y = (Tout)out[1], v.z = (Tout)out[2], v.w = (Tout)out[3];
        *(typename tsr__dbv_vec<Tout>::type *)d = v;
    } else {
#pragma unroll
        for (int k = 0; k < TSR_DBV_PX; k++)
            if (k < n) d[k] = (Tout)out[k];
    }
}

/* Deband the 4 pixels at (x0.., y) from their samples and references (raw, at the input depth;
 * Q's sample mode and blur-first already the kernel's constants), then store the n (1..4) inside
 * the plane at d: one 4-sample store when the row is aligned for it (vec) and all 4 are inside,
 * else one at a time. grow: the row's grain key. RAW: store the 16-bit values. */
template <typename Tout, int RAW>
__device__ __forceinline__ void tsr__dbv_finish(const tsr__db_plane &Q, const int *src0, const int (*ref)[4],
                                                uint32_t grow, int x0, int y, Tout *d, int n, int vec)
{
    const int sh = Q.in_shift;
    int out[TSR_DBV_PX];
#pragma unroll
    for (int k = 0; k < TSR_DBV_PX; k++) {
        const int v = tsr__db_value(&Q, src0[k] << sh, ref[k][0] << sh, ref[k][1] << sh, ref[k][2] << sh,
                                    ref[k][3] << sh, Q.grain ? tsr__db_grain(&Q, grow, x0 + k) : 0);
        out[k] = RAW ? v : tsr__db_quant(&Q, v, tsr__db_dither_add(&Q, x0 + k, y));
    }
    tsr__dbv_store<Tout>(out, d, n, vec);
}

/* Plane q's 4 pixels at (x0.., y): load, deband with the given offsets, store. n: pixels inside
 * the plane (1..4); pixels past it repeat pixel 0's loads (valid addresses) and are not stored.
 * dxs/dys[k]: the reference offsets of pixel k. */
template <typename Tin, typename Tout, int MODE, int BLUR, int RAW>
__device__ __forceinline__ void tsr__dbv_plane(const tsr__dbv_args &a, int q, int x0, int y, int n, const int *dxs,
                                               const int *dys)
{
    tsr__db_plane Q = a.P[q];
    const int sp = a.sp[q];
    const Tin *s = (const Tin *)a.src[q] + (size_t)y * (size_t)sp + x0;
    Tout *d = (Tout *)a.dst[q] + (size_t)y * (size_t)a.dp[q] + x0;
    const uint32_t grow = Q.grain ? tsr__db_rowkey(Q.grain_key, y) : 0;
    int src0[TSR_DBV_PX];
    Q.sample_mode = MODE;
    Q.blur_first = BLUR;
    if (a.vec && n == TSR_DBV_PX) {
        typename tsr__dbv_vec<Tin>::type v = __ldg((const typename tsr__dbv_vec<Tin>::type *)s);
        src0[0] = v.x, src0[1] = v.y, src0[2] = v.z, src0[3] = v.w;
    } else {
#pragma unroll
        for (int k = 0; k < TSR_DBV_PX; k++) src0[k] = k < n ? __ldg(s + k) : 0;
    }
    /* All references first (independent loads in flight together), then the arithmetic. */
    int ref[TSR_DBV_PX][4];
#pragma unroll
    for (int k = 0; k < TSR_DBV_PX; k++) {
        const int kk = k < n ? k : 0, dx = k < n ? dxs[k] : dxs[0], dy = k < n ? dys[k] : dys[0];
        const int o1 = dx + dy * sp, o2 = dy - dx * sp;
        if (MODE == 1) {
            ref[k][0] = __ldg(s + kk - dy * sp);
            ref[k][1] = __ldg(s + kk + dy * sp);
            ref[k][2] = ref[k][3] = 0;
        } else {
            ref[k][0] = __ldg(s + kk + o1);
            ref[k][1] = __ldg(s + kk - o1);
            ref[k][2] = __ldg(s + kk + o2);
            ref[k][3] = __ldg(s + kk - o2);
        }
    }
    tsr__dbv_finish<Tout, RAW>(Q, src0, ref, grow, x0, y, d, n, a.vec);
}

/* A block covers 128 x 4 pixels of every plane in a. RAW: store the 16-bit value (16-bit output
 * without rounding, or the Floyd-Steinberg values; Tout is then uint16_t). */
template <typename Tin, typename Tout, int MODE, int BLUR, int RAW>
__global__ void __launch_bounds__(TSR_DBV_BX *TSR_DBV_BY, TSR_DBV_MINB) tsr__dbv_kernel(const tsr__dbv_args a)
{
    const int x0 = (blockIdx.x * TSR_DBV_BX + threadIdx.x) * TSR_DBV_PX, y = blockIdx.y * TSR_DBV_BY + threadIdx.y;
    const int w = a.P[0].w, h = a.P[0].h;
    int dxs[TSR_DBV_PX], dys[TSR_DBV_PX], n;
    if (x0 >= w || y >= h) return;
    n = w - x0 < TSR_DBV_PX ? w - x0 : TSR_DBV_PX;
    {
        tsr__db_plane Q = a.P[0];
        const uint32_t orow = tsr__db_rowkey(Q.off_key, y);
        Q.sample_mode = MODE;
#pragma unroll
        for (int k = 0; k < TSR_DBV_PX; k++) tsr__db_offsets(&Q, orow, x0 + k, y, &dxs[k], &dys[k]);
    }
    tsr__dbv_plane<Tin, Tout, MODE, BLUR, RAW>(a, 0, x0, y, n, dxs, dys);
    if (a.np > 1) tsr__dbv_plane<Tin, Tout, MODE, BLUR, RAW>(a, 1, x0, y, n, dxs, dys);
    if (a.np > 2) tsr__dbv_plane<Tin, Tout, MODE, BLUR, RAW>(a, 2, x0, y, n, dxs, dys);
}

/* ---------------------------------------------------------------- staged in shared memory */

/* The references of a tile gathered from shared memory instead of global memory: a global
 * gather of 32 random references costs a warp about 7 L1 wavefronts (one per distinct line),
 * which ncu showed to be the vec kernel's floor; a shared-memory gather costs its bank conflicts
 * (about 3.5). A block of 32 x 8 threads covers 128 x 32 pixels of each plane of the group; it
 * stages the part of the plane its references can reach (range rows above and below; in sample
 * mode 2 also range columns left and right, the left edge rounded down to 16 bytes) with 16-byte
 * loads, then every thread computes 4 pixels on each of 4 rows (8 apart). The offsets are hashed
 * for the first plane and kept, packed, for the others. */
#define TSR_DBS_BY 8      /* warps of a block */
#define TSR_DBS_ROWS 4    /* rows of a thread, TSR_DBS_BY apart */
#define TSR_DBS_TW (TSR_DBV_BX * TSR_DBV_PX)
#define TSR_DBS_TH (TSR_DBS_BY * TSR_DBS_ROWS)
#define TSR_DBS_SMEM_MAX 49152
#ifndef TSR_DBS_MINB
#define TSR_DBS_MINB 4
#endif

/* Staging geometry of a group: samples per staged row (sw) and the buffer's bytes, or 0 when
 * the kernel cannot take it (buffer too big, offsets not packable in 16 bits). */
static size_t tsr__dbs_plan(const tsr__dbv_args &a, int sample_bytes, int *sw)
{
    const int vs = 16 / sample_bytes, R = a.P[0].range;
    long long w = a.P[0].sample_mode == 1 ? TSR_DBS_TW : ((TSR_DBS_TW + 2LL * R + vs - 1) / vs) * vs + vs;
    long long bytes = w * (TSR_DBS_TH + 2LL * R) * sample_bytes;
    if (bytes > TSR_DBS_SMEM_MAX || (long long)R * (w + 1) > 32767) return 0;
    *sw = (int)w;
    return (size_t)bytes;
}

/* Copy rows [ya, yb) x columns [xa, xb) of plane q into buf (row pitch sw): 16-byte loads,
 * except the piece of the last chunk that would pass the plane's right edge. */
template <typename Tin>
__device__ __forceinline__ void tsr__dbs_stage(const tsr__dbv_args &a, int q, int xa, int xb, int ya, int yb, int sw,
                                               Tin *buf)
{
    constexpr int vs = 16 / sizeof(Tin);
    const int chunks = (xb - xa + vs - 1) / vs, n = chunks * (yb - ya), sp = a.sp[q];
    const Tin *src = (const Tin *)a.src[q];
    for (int i = threadIdx.y * TSR_DBV_BX + threadIdx.x; i < n; i += TSR_DBV_BX * TSR_DBS_BY) {
        const int r = i / chunks, c = xa + (i - r * chunks) * vs;
        const Tin *g = src + (size_t)(ya + r) * (size_t)sp + c;
        Tin *b = buf + r * sw + (c - xa);
        if (c + vs <= xb) {
            *(uint4 *)b = __ldg((const uint4 *)g);
        } else {
            for (int k = 0; k < xb - c; k++) b[k] = __ldg(g + k);
        }
    }
}

template <typename Tin, typename Tout, int MODE, int BLUR, int RAW>
__global__ void __launch_bounds__(TSR_DBV_BX *TSR_DBS_BY, TSR_DBS_MINB) tsr__dbs_kernel(const tsr__dbv_args a, const int sw)
{
    extern __shared__ uint4 tsr__dbs_mem[];
    Tin *buf = (Tin *)tsr__dbs_mem;
    constexpr int vs = 16 / sizeof(Tin);
    const int w = a.P[0].w, h = a.P[0].h, R = a.P[0].range;
    const int bx0 = blockIdx.x * TSR_DBS_TW, by0 = blockIdx.y * TSR_DBS_TH, x0 = bx0 + threadIdx.x * TSR_DBV_PX;
    const int ya = by0 - R > 0 ? by0 - R : 0, yb = by0 + TSR_DBS_TH + R < h ? by0 + TSR_DBS_TH + R : h;
    const int xa = MODE == 1 ? bx0 : (bx0 - R > 0 ? bx0 - R : 0) / vs * vs;
    const int xb = MODE == 1 ? (bx0 + TSR_DBS_TW < w ? bx0 + TSR_DBS_TW : w) : (bx0 + TSR_DBS_TW + R < w ? bx0 + TSR_DBS_TW + R : w);
    const int n = x0 < w ? (w - x0 < TSR_DBV_PX ? w - x0 : TSR_DBV_PX) : 0;
    int off[TSR_DBS_ROWS][TSR_DBV_PX];   /* o1 = dx + dy*sw (low half), o2 = dy - dx*sw (high half) */
    {
        tsr__db_plane Q = a.P[0];
        Q.sample_mode = MODE;
#pragma unroll
        for (int j = 0; j < TSR_DBS_ROWS; j++) {
            const int y = by0 + threadIdx.y + TSR_DBS_BY * j;
            const uint32_t orow = tsr__db_rowkey(Q.off_key, y);
#pragma unroll
            for (int k = 0; k < TSR_DBV_PX; k++) {
                int dx = 0, dy = 0;
                if (k < n && y < h) tsr__db_offsets(&Q, orow, x0 + k, y, &dx, &dy);
                off[j][k] = (int)(((unsigned)(dx + dy * sw) & 0xffffu) | ((unsigned)(dy - dx * sw) << 16));
            }
        }
    }
#pragma unroll
    for (int q = 0; q < 3; q++) {
        if (q >= a.np) break;   /* the same for the whole block: every thread reaches the barriers */
        tsr__db_plane Q = a.P[q];
        Q.sample_mode = MODE;
        Q.blur_first = BLUR;
        if (q) __syncthreads();   /* the previous plane's staging is no longer read */
        tsr__dbs_stage<Tin>(a, q, xa, xb, ya, yb, sw, buf);
        __syncthreads();
        if (!n) continue;
#pragma unroll
        for (int j = 0; j < TSR_DBS_ROWS; j++) {
            const int y = by0 + threadIdx.y + TSR_DBS_BY * j, c = (y - ya) * sw + (x0 - xa);
            int src0[TSR_DBV_PX], ref[TSR_DBV_PX][4];
            if (y >= h) break;
            {
                const uint32_t grow = Q.grain ? tsr__db_rowkey(Q.grain_key, y) : 0;
                typedef typename tsr__dbv_vec<Tin>::type V;
                const V v = *(const V *)(buf + c);   /* inside the staged chunk of x0 even past w */
                src0[0] = v.x, src0[1] = v.y, src0[2] = v.z, src0[3] = v.w;
#pragma unroll
                for (int k = 0; k < TSR_DBV_PX; k++) {
                    const int kk = k < n ? k : 0, ok = k < n ? off[j][k] : off[j][0];   /* selects: off stays in registers */
                    const int o1 = (short)(ok & 0xffff), o2 = ok >> 16;
                    if (MODE == 1) {
                        ref[k][0] = buf[c + kk - o1];
                        ref[k][1] = buf[c + kk + o1];
                        ref[k][2] = ref[k][3] = 0;
                    } else {
                        ref[k][0] = buf[c + kk + o1];
                        ref[k][1] = buf[c + kk - o1];
                        ref[k][2] = buf[c + kk + o2];
                        ref[k][3] = buf[c + kk - o2];
                    }
                }
                tsr__dbv_finish<Tout, RAW>(Q, src0, ref, grow, x0, y,
                                           (Tout *)a.dst[q] + (size_t)y * (size_t)a.dp[q] + x0, n, a.vec);
            }
        }
    }
}

/* Queue the kernel for a (instantiation by sample mode, blur-first and RAW): staged when asked
 * for and the group's staging fits, else references from global memory. */
template <typename Tin, typename Tout, int RAW>
static tsr_status tsr__dbv_launch(const tsr__dbv_args &a, int staged, cudaStream_t st)
{
    const int m = a.P[0].sample_mode, bl = a.P[0].blur_first != 0;
    int sw = 0;
    size_t bytes = staged ? tsr__dbs_plan(a, (int)sizeof(Tin), &sw) : 0;
    if (bytes) {
        dim3 b(TSR_DBV_BX, TSR_DBS_BY),
            g(tsr__div_up((unsigned)a.P[0].w, TSR_DBS_TW), tsr__div_up((unsigned)a.P[0].h, TSR_DBS_TH));
        if (m == 1) bl ? tsr__dbs_kernel<Tin, Tout, 1, 1, RAW><<<g, b, bytes, st>>>(a, sw) : tsr__dbs_kernel<Tin, Tout, 1, 0, RAW><<<g, b, bytes, st>>>(a, sw);
        else bl ? tsr__dbs_kernel<Tin, Tout, 2, 1, RAW><<<g, b, bytes, st>>>(a, sw) : tsr__dbs_kernel<Tin, Tout, 2, 0, RAW><<<g, b, bytes, st>>>(a, sw);
        return TSR_CUDA_LAUNCHED("deband: vec kernel (staged)");
    }
    dim3 b(TSR_DBV_BX, TSR_DBV_BY),
        g(tsr__div_up((unsigned)a.P[0].w, TSR_DBV_BX * TSR_DBV_PX), tsr__div_up((unsigned)a.P[0].h, TSR_DBV_BY));
    if (m == 1) bl ? tsr__dbv_kernel<Tin, Tout, 1, 1, RAW><<<g, b, 0, st>>>(a) : tsr__dbv_kernel<Tin, Tout, 1, 0, RAW><<<g, b, 0, st>>>(a);
    else bl ? tsr__dbv_kernel<Tin, Tout, 2, 1, RAW><<<g, b, 0, st>>>(a) : tsr__dbv_kernel<Tin, Tout, 2, 0, RAW><<<g, b, 0, st>>>(a);
    return TSR_CUDA_LAUNCHED("deband: vec kernel");
}

/* Whether the pointer and pitch keep every row aligned for 4-sample vectors of 'bytes' each. */
static int tsr__dbv_aligned(const void *p, size_t pitch_bytes, int bytes)
{
    return (uintptr_t)p % (uintptr_t)(4 * bytes) == 0 && pitch_bytes % (size_t)(4 * bytes) == 0;
}

/* Queue the vec variant (staged: the 'staged' one) for a frame: one launch per group of
 * consecutive planes with the same geometry and offset key. vals: the Floyd-Steinberg values
 * (planes back to back, pitch w) or NULL for direct output. The staged kernel needs source planes
 * aligned to 16 bytes (pointer and pitch) and a halo that fits its buffer; other groups run the
 * vec kernel. */
static tsr_status tsr__dbv_run(const tsr_frame *src, tsr_frame *dst, const tsr__db_plane P[3], uint16_t *vals,
                               int staged, cudaStream_t st)
{
    const int wide_in = src->bits > 8, wide_out = vals || dst->bits > 8, ib = wide_in ? 2 : 1, ob = wide_out ? 2 : 1;
    size_t base = 0;
    for (int i = 0; i < src->nplanes;) {
        tsr__dbv_args a;
        tsr_status s;
        int raw, aligned16 = 1;
        memset(&a, 0, sizeof a);
        a.vec = 1;
        while (i < src->nplanes) {
            const tsr__db_plane *q = &P[i];
            size_t sp = src->stride[i] / (size_t)ib, dp = vals ? (size_t)q->w : dst->stride[i] / (size_t)ob;
            void *d = vals ? (void *)(vals + base) : dst->plane[i];
            if (a.np && (q->w != a.P[0].w || q->h != a.P[0].h || q->off_key != a.P[0].off_key ||
                         q->range != a.P[0].range || q->sample_mode != a.P[0].sample_mode))
                break;
            /* 32-bit reference offsets: a reference is at most range rows away. */
            if (sp > (size_t)INT_MAX / (size_t)(q->range + 1) || dp > (size_t)INT_MAX)
                return tsr__fail(TSR_E_UNSUPPORTED, "deband: vec variant: plane too large for 32-bit offsets");
            a.P[a.np] = *q;
            a.src[a.np] = src->plane[i];
            a.sp[a.np] = (int)sp;
            a.dst[a.np] = d;
            a.dp[a.np] = (int)dp;
            a.vec &= tsr__dbv_aligned(src->plane[i], src->stride[i], ib) && tsr__dbv_aligned(d, dp * (size_t)ob, ob);
            aligned16 &= (uintptr_t)src->plane[i] % 16 == 0 && src->stride[i] % 16 == 0;
            base += (size_t)q->w * (size_t)q->h;
            a.np++, i++;
        }
        raw = vals || (wide_out && P[0].out_shift == 0);
        staged = staged && aligned16;
        if (raw) s = wide_in ? tsr__dbv_launch<uint16_t, uint16_t, 1>(a, staged, st) : tsr__dbv_launch<uint8_t, uint16_t, 1>(a, staged, st);
        else if (wide_in) s = wide_out ? tsr__dbv_launch<uint16_t, uint16_t, 0>(a, staged, st) : tsr__dbv_launch<uint16_t, uint8_t, 0>(a, staged, st);
        else s = wide_out ? tsr__dbv_launch<uint8_t, uint16_t, 0>(a, staged, st) : tsr__dbv_launch<uint8_t, uint8_t, 0>(a, staged, st);
        if (s) return s;
    }
    return TSR_OK;
}

#endif
