/* GPU benchmark: every CUDA variant of every operation (iterated from the registry) on random
 * 8-bit data at 8192x8192 and 3840x2160, against the device-to-device copy bandwidth measured
 * in the same run and, where the toolkit has NPP, against NPP's equivalent in the same run.
 *
 * Timing: each run is bracketed by CUDA events; a spin kernel queued before the start event
 * keeps the GPU busy while the host enqueues the variant, so host overhead is not counted.
 * Median of >= 20 runs after 3 warm-up runs. Bytes = bytes read + bytes written (one pass).
 *
 * Usage: tessera-bench-cuda [--quick] [--no-table] [--ops a,b] [--size WxH ...] [--strips | --warp | --reg | --ring | --stream | --wide | --stack | --sweep | --small | --resize | --radii]
 *   --strips: box/fast strip-height and column-sums band sweeps; --warp: box/warp and
 *   threshold/warp strip height x slide-path sweep; --reg: box/reg and threshold/reg strip heights;
 *   --ring: box/ring and threshold/ring strip heights at both sizes (radii 1..7), beside reg's and wide's defaults;
 *   --stream: box/stream and threshold/stream strip heights at both sizes (radii 3..32);
 *   --wide: box/wide and threshold/wide strip heights (3840x2160 too); --stack: the same with and
 *   without stacked first windows (TSR_CUDA_WIDE_STACK; TSR_CUDA_WIDE_WARPS from the environment); --sweep: box/sweep and
 *   threshold/sweep strip heights at both sizes; --small: box/reg and threshold/reg strip heights,
 *   sums/packed bands and the resize sweeps at both sizes; --resize: only the resize sweeps
 *   (vec16 outputs per thread, cells' preloading and blocks, rows' groups per block); --radii: the default variant of box at every
 *   radius 1..64 and of threshold at every block 3..129 (both sizes); --no-table: only the sweep;
 *   --size WxH (up to 8 times): these image sizes instead of 8192x8192 and 3840x2160 (a sweep
 *   that runs on one default size only runs on the first or second size given) */
#include "../src/core/internal.h"
#include "../src/core/ops.h"
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <initializer_list>
#include <vector>
#ifdef TSR_HAVE_NPP
#include <npp.h>
#endif

#define CK(call)                                                                                  \
    do {                                                                                          \
        cudaError_t e_ = (call);                                                                  \
        if (e_ != cudaSuccess) {                                                                  \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            exit(1);                                                                              \
        }                                                                                         \
    } while (0)

static cudaStream_t g_stream;
static int g_runs = 20;
static double g_copy_gbs;

/* Spin for about 'ns' nanoseconds of GPU time (keeps the queue busy while the host enqueues). */
__global__ void bench_spin(long long ns)
{
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while ((long long)(t - t0) < ns);
}

/* Median GPU microseconds of fn(ctx) over g_runs runs after warm-up; one run if the first
 * warm-up took longer than 'slow_ms' (reported as is). Returns -1 if fn fails. */
template <class F>
static double time_median(F fn, double slow_ms = 300)
{
    cudaEvent_t a, b;
    std::vector<float> ts;
    float ms;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    for (int i = 0; i < 3 + g_runs; i++) {
        bench_spin<<<1, 1, 0, g_stream>>>(50000);
        CK(cudaGetLastError());
        CK(cudaEventRecord(a, g_stream));
        if (!fn()) {
            cudaEventDestroy(a);
            cudaEventDestroy(b);
            return -1;
        }
        CK(cudaEventRecord(b, g_stream));
        CK(cudaEventSynchronize(b));
        CK(cudaEventElapsedTime(&ms, a, b));
        if (i >= 3) ts.push_back(ms);
        if (i == 0 && ms > slow_ms) {
            ts.push_back(ms);
            break;
        }
    }
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(b));
    std::sort(ts.begin(), ts.end());
    return ts[ts.size() / 2] * 1000.0;
}

/* Device-to-device copy bandwidth (read + write) with 1 GiB buffers. */
static double copy_bandwidth(void)
{
    size_t n = (size_t)1 << 30;
    void *x, *y;
    CK(cudaMalloc(&x, n));
    CK(cudaMalloc(&y, n));
    CK(cudaMemset(x, 1, n));
    double us = time_median([&] { return cudaMemcpyAsync(y, x, n, cudaMemcpyDeviceToDevice, g_stream) == cudaSuccess; });
    CK(cudaFree(x));
    CK(cudaFree(y));
    return 2.0 * n / (us * 1e-6) / 1e9;
}

/* A read-only pass at the device's pace: 16-byte loads, L in flight per thread, the words folded
 * by xor and one store per thread (so the loads are not dead code). Grid-stride (CHUNKED = 0), or
 * each block reading its own contiguous share (CHUNKED = 1). */
template <int L, int CHUNKED>
__global__ void bench_read(const uint4 *p, size_t n, unsigned *sink)
{
    unsigned acc = 0;
    size_t i, end, stride;
    if (CHUNKED) {
        const size_t share = (n + gridDim.x - 1) / gridDim.x;
        i = (size_t)blockIdx.x * share + threadIdx.x;
        end = min(n, (size_t)(blockIdx.x + 1) * share);
        stride = blockDim.x;
    } else {
        stride = (size_t)gridDim.x * blockDim.x;
        i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
        end = n;
    }
    for (; i + (L - 1) * stride < end; i += L * stride) {
        uint4 u[L];
#pragma unroll
        for (int k = 0; k < L; k++) u[k] = __ldg(p + i + k * stride);
#pragma unroll
        for (int k = 0; k < L; k++) acc ^= u[k].x ^ u[k].y ^ u[k].z ^ u[k].w;
    }
    for (; i < end; i += stride) {
        const uint4 u = __ldg(p + i);
        acc ^= u.x ^ u.y ^ u.z ^ u.w;
    }
    sink[(size_t)blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

/* Read-only bandwidth over n bytes (GB/s): a copy's rate counts reads and writes, and reading
 * alone, with its own start and tail, need not run at the same pace. The best of the kernel's
 * configurations (blocks per SM, loads in flight, grid-stride or chunked); ALL prints each. */
static double read_bandwidth(size_t n, int all)
{
    void *x;
    unsigned *sink;
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    CK(cudaMalloc(&x, n));
    CK(cudaMalloc(&sink, sizeof(unsigned) * 16 * sms * 256));
    CK(cudaMemset(x, 1, n));
    double best = 1e30;
    for (int bps : {2, 4, 8, 16})
        for (int l : {4, 8})
            for (int ch : {0, 1}) {
                const int blocks = bps * sms;
                double us = time_median([&] {
                    const uint4 *q = (const uint4 *)x;
                    if (l == 4 && !ch) bench_read<4, 0><<<blocks, 256, 0, g_stream>>>(q, n / 16, sink);
                    if (l == 4 && ch) bench_read<4, 1><<<blocks, 256, 0, g_stream>>>(q, n / 16, sink);
                    if (l == 8 && !ch) bench_read<8, 0><<<blocks, 256, 0, g_stream>>>(q, n / 16, sink);
                    if (l == 8 && ch) bench_read<8, 1><<<blocks, 256, 0, g_stream>>>(q, n / 16, sink);
                    return cudaGetLastError() == cudaSuccess;
                });
                if (all) printf("  read %zu MiB: %2d blocks/SM, %d loads in flight, %s: %.1f us\n", n >> 20, bps, l,
                                ch ? "chunked" : "grid-stride", us);
                best = us < best ? us : best;
            }
    CK(cudaFree(x));
    CK(cudaFree(sink));
    return n / (best * 1e-6) / 1e9;
}

static void print_header(void)
{
    printf("%-10s %-12s %-28s %10s %8s %7s %-26s %10s %7s\n", "op", "variant", "params", "median_us", "GB/s",
           "%copy", "peer", "peer_us", "speedup");
}

/* One row of the table; peer_us <= 0 means none. speedup = peer time / our time. */
static void print_row(const char *op, const char *variant, const char *params, double us, double bytes,
                      const char *peer, double peer_us)
{
    double gbs = us > 0 ? bytes / (us * 1e-6) / 1e9 : 0;
    char pu[32] = "-", sp[32] = "-";
    if (peer_us > 0) {
        snprintf(pu, sizeof pu, "%.1f", peer_us);
        snprintf(sp, sizeof sp, "%.2fx", peer_us / us);
    }
    if (us < 0) printf("%-10s %-12s %-28s %10s\n", op, variant, params, "failed");
    else
        printf("%-10s %-12s %-28s %10.1f %8.0f %6.1f%% %-26s %10s %7s\n", op, variant, params, us, gbs,
               100.0 * gbs / g_copy_gbs, peer ? peer : "-", pu, sp);
    fflush(stdout);
}

/* Random 8-bit device image (host random bytes uploaded once). */
static tsr_image random_device(int w, int h, int cn)
{
    tsr_image host, dev;
    if (tsr_image_create(&host, w, h, cn, TSR_U8, TSR_HOST) || tsr_image_create(&dev, w, h, cn, TSR_U8, TSR_DEVICE)) {
        fprintf(stderr, "allocation failed: %s\n", tsr_last_error());
        exit(1);
    }
    unsigned s = 12345u;
    for (int y = 0; y < h; y++) {
        unsigned char *r = (unsigned char *)host.data + (size_t)y * host.stride;
        for (size_t i = 0; i < (size_t)w * cn; i++) {
            s = s * 1664525u + 1013904223u;
            r[i] = (unsigned char)(s >> 24);
        }
    }
    if (tsr_image_copy(&host, &dev, NULL) || tsr_stream_sync(NULL)) {
        fprintf(stderr, "upload failed: %s\n", tsr_last_error());
        exit(1);
    }
    tsr_image_free(&host);
    return dev;
}

/* Time one CUDA variant of op on device images; dst is allocated to the op's shape. With
 * 'keep' (a host image of that shape, or data NULL to allocate one) the last result is copied
 * there, for checking that tuning knobs leave the output unchanged. */
static double time_variant(const tsr_op *op, const tsr_variant *v, const tsr_image *src, const void *params,
                           tsr_image *keep = NULL)
{
    tsr_image shape = {0}, dst;
    tsr_exec ex = {TSR_BACKEND_CUDA, v->name, g_stream, 0};
    if (op->check(src, params, &shape)) return -1;
    if (tsr_image_create(&dst, shape.width, shape.height, shape.channels, shape.depth, TSR_DEVICE)) return -1;
    double us = time_median([&] {
        tsr_status s = v->run(src, &dst, params, &ex);
        if (s) fprintf(stderr, "%s/%s: %s\n", op->name, v->name, tsr_last_error());
        return s == TSR_OK;
    });
    if (keep && us >= 0) {
        if (!keep->data && tsr_image_create(keep, shape.width, shape.height, shape.channels, shape.depth, TSR_HOST))
            us = -1;
        else if (tsr_image_copy(&dst, keep, g_stream) || tsr_stream_sync(g_stream))
            us = -1;
    }
    tsr_image_free(&dst);
    return us;
}

/* Whether two host images hold the same pixels. */
static int same_image(const tsr_image *a, const tsr_image *b)
{
    size_t row = tsr_image_row_bytes(a);
    for (int y = 0; y < a->height; y++)
        if (memcmp((char *)a->data + (size_t)y * a->stride, (char *)b->data + (size_t)y * b->stride, row)) return 0;
    return 1;
}

#ifdef TSR_HAVE_NPP
static NppStreamContext g_npp;

static void npp_init(void)
{
    cudaDeviceProp prop;
    int dev;
    CK(cudaGetDevice(&dev));
    CK(cudaGetDeviceProperties(&prop, dev));
    memset(&g_npp, 0, sizeof g_npp);
    g_npp.hStream = g_stream;
    g_npp.nCudaDeviceId = dev;
    g_npp.nMultiProcessorCount = prop.multiProcessorCount;
    g_npp.nMaxThreadsPerMultiProcessor = prop.maxThreadsPerMultiProcessor;
    g_npp.nMaxThreadsPerBlock = prop.maxThreadsPerBlock;
    g_npp.nSharedMemPerBlock = prop.sharedMemPerBlock;
    g_npp.nCudaDevAttrComputeCapabilityMajor = prop.major;
    g_npp.nCudaDevAttrComputeCapabilityMinor = prop.minor;
    CK(cudaStreamGetFlags(g_stream, &g_npp.nStreamFlags));
}

/* Median time of an NPP call (false if it returns an error). */
#define NPP_TIME(call) time_median([&] { NppStatus st_ = (call); if (st_ < 0) fprintf(stderr, "NPP error %d: %s\n", (int)st_, #call); return st_ >= 0; }, 2000)
#endif

/* A params label and struct for one measurement. */
struct bench_case {
    char label[64];
    union {
        tsr_box_params box;
        tsr_threshold_params thr;
        tsr_sums_params sums;
        tsr_resize_params resize;
        int none;
    } p;
    double bytes;
    int radius;          /* box radius / threshold block half, for skipping the O(r^2) variants */
};

/* Peer time for op and case on the gray source g (or RGB source rgb), -1 if none. */
static double peer_time(const char *op, const bench_case &c, const tsr_image *g, const tsr_image *rgb,
                        const char **name)
{
    *name = NULL;
#ifdef TSR_HAVE_NPP
    static tsr_image out = {0};
    int w = g->width, h = g->height;
    NppiSize size = {w, h};
    if (!out.data || out.width != w || out.height != h) {
        tsr_image_free(&out);
        if (tsr_image_create(&out, w, h, 1, TSR_U8, TSR_DEVICE)) return -1;
    }
    Npp8u *d = (Npp8u *)out.data;
    const Npp8u *s = (const Npp8u *)g->data;
    int ss = (int)g->stride, ds = (int)out.stride;
    if (!strcmp(op, "invert")) {
        *name = "nppiNot_8u_C1R";
        return NPP_TIME(nppiNot_8u_C1R_Ctx(s, ss, d, ds, size, g_npp));
    }
    if (!strcmp(op, "box")) {
        int r = c.p.box.radius;
        NppiSize mask = {2 * r + 1, 2 * r + 1};
        NppiPoint off = {0, 0}, anchor = {r, r};
        *name = "nppiFilterBoxBorder(repl)";
        return NPP_TIME(nppiFilterBoxBorder_8u_C1R_Ctx(s, ss, size, off, d, ds, size, mask, anchor, NPP_BORDER_REPLICATE, g_npp));
    }
    if (!strcmp(op, "threshold")) {
        NppiSize mask = {c.p.thr.block, c.p.thr.block};
        NppiPoint off = {0, 0};
        *name = "nppiFilterThresholdAdaptive";
        return NPP_TIME(nppiFilterThresholdAdaptiveBoxBorder_8u_C1R_Ctx(s, ss, size, off, d, ds, size, mask,
                                                                        (Npp32f)c.p.thr.c, 255, 0,
                                                                        NPP_BORDER_REPLICATE, g_npp));
    }
    if (!strcmp(op, "gray") && rgb) {
        *name = "nppiRGBToGray_8u_C3C1R";
        return NPP_TIME(nppiRGBToGray_8u_C3C1R_Ctx((const Npp8u *)rgb->data, (int)rgb->stride, d, ds, size, g_npp));
    }
    if (!strcmp(op, "resize")) {
        NppiSize dsize = {c.p.resize.width, c.p.resize.height};
        NppiRect sroi = {0, 0, w, h}, droi = {0, 0, dsize.width, dsize.height};
        *name = "nppiResize(SUPER)";
        return NPP_TIME(nppiResize_8u_C1R_Ctx(s, ss, size, sroi, d, ds, dsize, droi, NPPI_INTER_SUPER, g_npp));
    }
#else
    (void)op, (void)c, (void)g, (void)rgb;
#endif
    return -1;
}

/* The cases of an op at size w x h (8-bit gray source unless gray). */
static std::vector<bench_case> cases_for(const char *op, int w, int h, int quick)
{
    std::vector<bench_case> v;
    double n = (double)w * h;
    bench_case c;
    memset(&c, 0, sizeof c);
    if (!strcmp(op, "invert")) {
        snprintf(c.label, sizeof c.label, "-");
        c.bytes = 2 * n;
        v.push_back(c);
    } else if (!strcmp(op, "box")) {
        static const int radii[] = {1, 3, 7, 15, 31, 64};
        for (int r : radii) {
            if (quick && r != 1 && r != 15 && r != 64) continue;
            bench_case b = c;
            b.p.box = {r, -1, -1, TSR_BORDER_REFLECT101, 0};
            b.radius = r;
            b.bytes = 2 * n;
            snprintf(b.label, sizeof b.label, "r=%d reflect101", r);
            v.push_back(b);
        }
    } else if (!strcmp(op, "threshold")) {
        static const int blocks[] = {3, 7, 15, 31, 129};
        for (int bl : blocks) {
            bench_case b = c;
            b.p.thr = {bl, 5, TSR_THRESH_MEAN, 0, 255};
            b.radius = bl / 2;
            b.bytes = 2 * n;
            snprintf(b.label, sizeof b.label, "block=%d C=5", bl);
            v.push_back(b);
        }
    } else if (!strcmp(op, "sums")) {
        for (int axis = 0; axis < 2; axis++) {
            bench_case b = c;
            b.p.sums.axis = axis;
            b.bytes = n + 4.0 * (axis ? h : w);
            snprintf(b.label, sizeof b.label, "%s", axis ? "rows" : "columns");
            v.push_back(b);
        }
    } else if (!strcmp(op, "gray")) {
        snprintf(c.label, sizeof c.label, "RGB 8-bit");
        c.bytes = 4 * n;
        v.push_back(c);
    } else if (!strcmp(op, "resize")) {
        int dims[4][2] = {{w / 2, h / 2}, {w / 4, h / 4}, {w * 3 / 8, h * 3 / 8}, {(int)(w / 8.19), (int)(h / 8.19)}};
        for (auto &d : dims) {
            bench_case b = c;
            b.p.resize = {d[0], d[1]};
            b.bytes = n + (double)d[0] * d[1];
            snprintf(b.label, sizeof b.label, "-> %dx%d", d[0], d[1]);
            v.push_back(b);
        }
    }
    return v;
}

/* Whether a slow variant would take too long at this size (skip rather than wait minutes). */
static int too_slow(const char *op, const tsr_variant *v, const bench_case &c)
{
    if (!strcmp(v->name, "global") && c.radius > 7) return 1;
    (void)op;
    return 0;
}

/* The strip-height sweep of a box/threshold variant (env_strip), crossed with a 0/1 switch
 * (env_switch, NULL for none); 10 runs each, outputs compared with the default configuration's. */
static void sweep_strips(const char *variant, const char *env_strip, const char *env_switch,
                         std::initializer_list<int> radii, std::initializer_list<int> heights, const tsr_image *g)
{
    int saved_runs = g_runs;
    g_runs = 10;
    for (const char *opname : {"box", "threshold"}) {
        const tsr_op *wop = tsr_op_find(opname);
        const tsr_variant *var = NULL;
        for (int vi = 0; wop->variants[vi]; vi++)
            if (wop->variants[vi]->backend == TSR_BACKEND_CUDA && !strcmp(wop->variants[vi]->name, variant))
                var = wop->variants[vi];
        if (!var) continue;
        printf("\n-- %s/%s sweep (10 runs each): strip height (%s)%s%s\n", opname, variant, env_strip,
               env_switch ? " x " : "", env_switch ? env_switch : "");
        for (int r : radii) {
            bench_case c;
            tsr_image ref = {0};
            memset(&c, 0, sizeof c);
            if (!strcmp(opname, "box")) c.p.box = {r, -1, -1, TSR_BORDER_REFLECT101, 0};
            else c.p.thr = {2 * r + 1, 5.0, 0, 0, 255};
            if (var->supports && !var->supports(g, &c.p)) continue;
            double def_us = time_variant(wop, var, g, &c.p, &ref);
            char lab0[64];
            snprintf(lab0, sizeof lab0, "r=%d default", r);
            print_row(opname, variant, lab0, def_us, 2.0 * g->width * g->height, NULL, -1);
            for (int sw = env_switch ? 1 : 0; sw >= 0; sw--)
                for (int sh : heights) {
                    char val[16], lab[64];
                    tsr_image out = {0};
                    snprintf(val, sizeof val, "%d", sh);
                    setenv(env_strip, val, 1);
                    if (env_switch) setenv(env_switch, sw ? "1" : "0", 1);
                    double us = time_variant(wop, var, g, &c.p, &out);
                    snprintf(lab, sizeof lab, "r=%d sh=%d%s%s%s", r, sh, env_switch ? " switch=" : "",
                             env_switch ? (sw ? "1" : "0") : "", out.data && ref.data && same_image(&out, &ref) ? "" : " DIFF");
                    print_row(opname, variant, lab, us, 2.0 * g->width * g->height, NULL, -1);
                    tsr_image_free(&out);
                }
            unsetenv(env_strip);
            if (env_switch) unsetenv(env_switch);
            tsr_image_free(&ref);
        }
    }
    g_runs = saved_runs;
}

/* Column sums of variant 'variant' at each rows-per-band value of env_band, every output
 * compared with the variant's default configuration. */
static void sweep_sums_bands(const char *variant, const char *env_band, std::initializer_list<int> bands,
                             const tsr_image *g)
{
    const tsr_op *sop = tsr_op_find("sums");
    const tsr_variant *var = NULL;
    for (int vi = 0; sop->variants[vi]; vi++)
        if (sop->variants[vi]->backend == TSR_BACKEND_CUDA && !strcmp(sop->variants[vi]->name, variant))
            var = sop->variants[vi];
    if (!var) return;
    int saved_runs = g_runs;
    g_runs = 10;
    printf("\n-- sums/%s sweep (10 runs each): rows per band (%s)\n", variant, env_band);
    tsr_sums_params sp = {TSR_AXIS_COLUMNS};
    tsr_image ref = {0};
    const double bytes = (double)g->width * g->height + 4.0 * g->width;
    print_row("sums", variant, "columns default", time_variant(sop, var, g, &sp, &ref), bytes, NULL, -1);
    for (int band : bands) {
        char val[16], lab[64];
        tsr_image out = {0};
        snprintf(val, sizeof val, "%d", band);
        setenv(env_band, val, 1);
        double us = time_variant(sop, var, g, &sp, &out);
        snprintf(lab, sizeof lab, "columns band=%d%s", band, out.data && ref.data && same_image(&out, &ref) ? "" : " DIFF");
        print_row("sums", variant, lab, us, bytes, NULL, -1);
        tsr_image_free(&out);
    }
    unsetenv(env_band);
    tsr_image_free(&ref);
    g_runs = saved_runs;
}

/* resize/vec16 at 2x and 4x with 8 and 16 outputs per thread (TSR_CUDA_RESIZE_OUT), and
 * resize/cells at 8/3 with cells loaded at once or row by row (TSR_CUDA_RESIZE_PRELOAD) and blocks
 * down the image (TSR_CUDA_RESIZE_BLOCKS_Y), every
 * output compared with the default configuration's. */
static void sweep_resize_out(const tsr_image *g)
{
    const tsr_op *op = tsr_op_find("resize");
    const tsr_variant *var = NULL;
    for (int vi = 0; op->variants[vi]; vi++)
        if (op->variants[vi]->backend == TSR_BACKEND_CUDA && !strcmp(op->variants[vi]->name, "vec16"))
            var = op->variants[vi];
    if (!var) return;
    int saved_runs = g_runs;
    g_runs = 10;
    printf("\n-- resize/vec16 sweep (10 runs each): outputs per thread (TSR_CUDA_RESIZE_OUT)\n");
    for (int f : {2, 4}) {
        tsr_resize_params p = {g->width / f, g->height / f};
        tsr_image ref = {0};
        const double bytes = (double)g->width * g->height + (double)p.width * p.height;
        char lab[64];
        snprintf(lab, sizeof lab, "%dx default", f);
        print_row("resize", "vec16", lab, time_variant(op, var, g, &p, &ref), bytes, NULL, -1);
        for (int no : {8, 16}) {
            char val[16];
            tsr_image out = {0};
            snprintf(val, sizeof val, "%d", no);
            setenv("TSR_CUDA_RESIZE_OUT", val, 1);
            double us = time_variant(op, var, g, &p, &out);
            snprintf(lab, sizeof lab, "%dx out=%d%s", f, no, out.data && ref.data && same_image(&out, &ref) ? "" : " DIFF");
            print_row("resize", "vec16", lab, us, bytes, NULL, -1);
            tsr_image_free(&out);
        }
        unsetenv("TSR_CUDA_RESIZE_OUT");
        tsr_image_free(&ref);
    }
    /* resize/cells, fractional (scale 8/3): cells loaded at once or row by row */
    const tsr_variant *cells = NULL;
    for (int vi = 0; op->variants[vi]; vi++)
        if (op->variants[vi]->backend == TSR_BACKEND_CUDA && !strcmp(op->variants[vi]->name, "cells"))
            cells = op->variants[vi];
    if (cells) {
        tsr_resize_params p = {g->width * 3 / 8, g->height * 3 / 8};
        const double bytes = (double)g->width * g->height + (double)p.width * p.height;
        tsr_image ref = {0};
        print_row("resize", "cells", "8/3 default", time_variant(op, cells, g, &p, &ref), bytes, NULL, -1);
        for (const char *pre : {"0", "1"})
            for (const char *gy : {"", "2048", "512", "128", "64", "32"}) {
                char lab[64];
                tsr_image out = {0};
                setenv("TSR_CUDA_RESIZE_PRELOAD", pre, 1);
                setenv("TSR_CUDA_RESIZE_BLOCKS_Y", gy, 1);
                double us = time_variant(op, cells, g, &p, &out);
                snprintf(lab, sizeof lab, "8/3 preload=%s gy=%s%s", pre, *gy ? gy : "def",
                         out.data && ref.data && same_image(&out, &ref) ? "" : " DIFF");
                print_row("resize", "cells", lab, us, bytes, NULL, -1);
                tsr_image_free(&out);
            }
        unsetenv("TSR_CUDA_RESIZE_PRELOAD");
        unsetenv("TSR_CUDA_RESIZE_BLOCKS_Y");
        tsr_image_free(&ref);
    }
    /* resize/rows at 8/3: row groups per block */
    const tsr_variant *rows = NULL;
    for (int vi = 0; op->variants[vi]; vi++)
        if (op->variants[vi]->backend == TSR_BACKEND_CUDA && !strcmp(op->variants[vi]->name, "rows"))
            rows = op->variants[vi];
    if (rows) {
        tsr_resize_params p = {g->width * 3 / 8, g->height * 3 / 8};
        const double bytes = (double)g->width * g->height + (double)p.width * p.height;
        tsr_image ref = {0};
        print_row("resize", "rows", "8/3 default", time_variant(op, rows, g, &p, &ref), bytes, NULL, -1);
        for (const char *gr : {"", "1", "2", "3", "4", "6", "8"}) {
            char lab[64];
            tsr_image out = {0};
            setenv("TSR_CUDA_RESIZE_ROWS_GROUPS", gr, 1);
            double us = time_variant(op, rows, g, &p, &out);
            snprintf(lab, sizeof lab, "8/3 groups=%s%s", *gr ? gr : "def",
                     out.data && ref.data && same_image(&out, &ref) ? "" : " DIFF");
            print_row("resize", "rows", lab, us, bytes, NULL, -1);
            tsr_image_free(&out);
        }
        unsetenv("TSR_CUDA_RESIZE_ROWS_GROUPS");
        tsr_image_free(&ref);
        /* RGB at half the size (3/4 of the gray image's bytes) and 16-bit gray at half the width
         * (as many bytes): rows against cells */
        /* and RGB / RGBA at half the size shrunk 2x: vec16 against cells (and NPP for RGB) */
        static const char *kinds[4] = {"RGB 8/3", "16-bit 8/3", "RGB 2x", "RGBA 2x"};
        for (int kind = 0; cells && kind < 4; kind++) {
            tsr_image im = {0};
            const int cn = kind == 1 ? 1 : kind == 3 ? 4 : 3, sb = kind == 1 ? 2 : 1;
            if (tsr_image_create(&im, g->width / 2, kind == 1 ? g->height : g->height / 2, cn,
                                 kind == 1 ? TSR_U16 : TSR_U8, TSR_DEVICE))
                continue;
            cudaMemset2D(im.data, im.stride, 0x5a, (size_t)im.width * cn * sb, im.height);
            tsr_resize_params p3 = {im.width * 3 / 8, im.height * 3 / 8};
            if (kind >= 2) p3 = {im.width / 2, im.height / 2};
            const double b3 = (double)cn * sb * ((double)im.width * im.height + (double)p3.width * p3.height);
            tsr_image o1 = {0}, o2 = {0};
            char lab[64];
            const tsr_variant *fast = kind >= 2 ? var : rows;
            double us;
            if (!fast->supports || fast->supports(&im, &p3)) {
                const char *peer = NULL;
                double peer_us = -1;
#ifdef TSR_HAVE_NPP
                tsr_image no = {0};
                if (kind == 2 && !tsr_image_create(&no, p3.width, p3.height, 3, TSR_U8, TSR_DEVICE)) {
                    NppiSize ssz = {im.width, im.height}, dsz = {p3.width, p3.height};
                    NppiRect sr = {0, 0, im.width, im.height}, dr = {0, 0, p3.width, p3.height};
                    peer = "nppiResize_8u_C3R(SUPER)";
                    peer_us = NPP_TIME(nppiResize_8u_C3R_Ctx((const Npp8u *)im.data, (int)im.stride, ssz, sr, (Npp8u *)no.data,
                                                             (int)no.stride, dsz, dr, NPPI_INTER_SUPER, g_npp));
                    tsr_image_free(&no);
                }
#endif
                us = time_variant(op, fast, &im, &p3, &o1);
                print_row("resize", fast->name, kinds[kind], us, b3, peer, peer_us);
            }
            us = time_variant(op, cells, &im, &p3, &o2);
            snprintf(lab, sizeof lab, "%s%s", kinds[kind], !o1.data || same_image(&o1, &o2) ? "" : " DIFF");
            print_row("resize", "cells", lab, us, b3, NULL, -1);
            tsr_image_free(&o1);
            tsr_image_free(&o2);
            tsr_image_free(&im);
        }
    }
    /* fractional factors from 8/3 to thumbnails: every CUDA variant that takes the size (outputs
     * compared with cells'), NPP's super-sampling beside them */
    printf("\n-- resize by fractional factors (%dx%d 8-bit gray)\n", g->width, g->height);
    for (double f : {2.67, 3.5, 4.5, 6.5, 8.19, 13.3}) {
        tsr_resize_params p = {(int)(g->width / f), (int)(g->height / f)};
        const double bytes = (double)g->width * g->height + (double)p.width * p.height;
        char lab[64];
        bench_case c = {};
        c.p.resize = p;
        const char *peer;
        const double peer_us = peer_time("resize", c, g, NULL, &peer);
        tsr_image ref = {0};
        if (cells) time_variant(op, cells, g, &p, &ref);
        for (int vi = 0; op->variants[vi]; vi++) {
            const tsr_variant *v = op->variants[vi];
            if (v->backend != TSR_BACKEND_CUDA || (v->supports && !v->supports(g, &p))) continue;
            tsr_image out = {0};
            const double us = time_variant(op, v, g, &p, &out);
            snprintf(lab, sizeof lab, "-> %dx%d (%.2fx)%s", p.width, p.height, f,
                     out.data && ref.data && !same_image(&out, &ref) ? " DIFF" : "");
            print_row("resize", v->name, lab, us, bytes, peer, peer_us);
            tsr_image_free(&out);
        }
        tsr_image_free(&ref);
    }
    g_runs = saved_runs;
}

/* The variant the registry picks for the CUDA backend and these parameters (NULL if none). */
static const tsr_variant *default_variant(const tsr_op *op, const tsr_image *src, const void *params)
{
    for (int vi = 0; op->variants[vi]; vi++)
        if (tsr__takes_by_default(op->variants[vi], TSR_BACKEND_CUDA, src, params)) return op->variants[vi];
    return NULL;
}

/* The default CUDA variant of box at every radius 1..64 (reflect101) and of threshold at every
 * block 3..129 on image g: time and share of the copy bandwidth, so the "every radius" goal is
 * measured (at both benchmark sizes, since a kernel's choice can depend on the image's size). */
static void radii_table(const tsr_image *g)
{
    int saved_runs = g_runs;
    g_runs = 10;
    printf("\n-- default variants at every radius, %dx%d (10 runs each)\n", g->width, g->height);
    for (const char *opname : {"box", "threshold"}) {
        const tsr_op *op = tsr_op_find(opname);
        for (int r = 1; r <= 64; r++) {
            bench_case c;
            char lab[64];
            memset(&c, 0, sizeof c);
            if (!strcmp(opname, "box")) {
                c.p.box = {r, -1, -1, TSR_BORDER_REFLECT101, 0};
                snprintf(lab, sizeof lab, "r=%d reflect101", r);
            } else {
                c.p.thr = {2 * r + 1, 5.0, TSR_THRESH_MEAN, 0, 255};
                snprintf(lab, sizeof lab, "block=%d C=5", 2 * r + 1);
            }
            const tsr_variant *v = default_variant(op, g, &c.p);
            if (!v) continue;
            print_row(opname, v->name, lab, time_variant(op, v, g, &c.p), 2.0 * g->width * g->height, NULL, -1);
        }
    }
    g_runs = saved_runs;
}

/* Whether 'name' is one of the comma-separated names in 'list'. */
static int name_listed(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && !strncmp(p, name, n)) return 1;
        if (!e) break;
        p = e + 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    int quick = 0, strips = 0, table = 1;
    const char *only = NULL;   /* --ops a,b: only these operations in the table */
    int sizes[8][2] = {{8192, 8192}, {3840, 2160}}, nsizes = 2, custom = 0;   /* --size WxH replaces them */
    /* the sweeps, by flag (at most one runs: the last given) */
    static const char *const sweeps[] = {"--strips", "--warp", "--reg", "--wide", "--radii", "--sweep",
                                         "--small", "--resize", "--ring", "--stream", "--stack"};
    for (int i = 1; i < argc; i++) {
        int known = 0;
        for (int k = 0; k < (int)(sizeof sweeps / sizeof sweeps[0]); k++)
            if (!strcmp(argv[i], sweeps[k])) strips = k + 1, known = 1;
        if (known) continue;
        if (!strcmp(argv[i], "--quick")) quick = 1;
        else if (!strcmp(argv[i], "--no-table")) table = 0;
        else if (!strcmp(argv[i], "--ops") && i + 1 < argc) only = argv[++i];
        else if (!strcmp(argv[i], "--size") && i + 1 < argc) {
            int w = 0, h = 0;
            char tail = 0;
            if (sscanf(argv[++i], "%dx%d%c", &w, &h, &tail) != 2 || w < 1 || h < 1 || w > 32768 || h > 32768) {
                fprintf(stderr, "--size: expected WxH (1..32768 each), got '%s'\n", argv[i]);
                return 2;
            }
            if (!custom) nsizes = 0;
            custom = 1;
            if (nsizes == 8) {
                fprintf(stderr, "--size: at most 8 sizes\n");
                return 2;
            }
            sizes[nsizes][0] = w;
            sizes[nsizes++][1] = h;
        } else {
            const int help = !strcmp(argv[i], "--help") || !strcmp(argv[i], "-h");
            if (!help) fprintf(stderr, "tessera-bench-cuda: unknown or incomplete option '%s'\n", argv[i]);
            fprintf(help ? stdout : stderr,
                    "usage: tessera-bench-cuda [--quick] [--no-table] [--ops a,b] [--size WxH ...]\n"
                    "       [--strips | --warp | --reg | --ring | --stream | --wide | --stack | --sweep | --small | --resize | --radii]\n"
                    "(bench/cuda_bench.cu's first comment says what each does)\n");
            return help ? 0 : 2;
        }
    }
    if (!tsr_cuda_available()) {
        printf("no CUDA device: %s\n", tsr_cuda_device_name());
        return 1;
    }
    CK(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking));
#ifdef TSR_HAVE_NPP
    npp_init();
#endif
    g_copy_gbs = copy_bandwidth();
    printf("device: %s\n", tsr_cuda_device_name());
    printf("device-to-device copy (1 GiB, read+write): %.0f GB/s\n", g_copy_gbs);
    {
        const int all = getenv("TSR_BENCH_READ_ALL") != NULL;
        const double r1 = read_bandwidth((size_t)1 << 30, all), r64 = read_bandwidth((size_t)64 << 20, all);
        printf("read-only pass (16-byte loads, best of 16 configurations): 1 GiB %.0f GB/s (%.1f%% of copy), 64 MiB %.0f GB/s (%.1f%%: %.1f us)\n", r1,
               100.0 * r1 / g_copy_gbs, r64, 100.0 * r64 / g_copy_gbs, 64.0 * 1048576 / (r64 * 1e9) * 1e6);
    }
    printf("floor for one 8-bit pass over 8192x8192 in+out (128 MiB): %.1f us\n\n",
           2.0 * 8192 * 8192 / (g_copy_gbs * 1e9) * 1e6);
    for (int si = 0; si < nsizes; si++) {
        int w = sizes[si][0], h = sizes[si][1];
        tsr_image g = random_device(w, h, 1), rgb = random_device(w, h, 3);
        printf("== %dx%d 8-bit\n", w, h);
        print_header();
        for (int oi = 0; table && oi < tsr_op_count(); oi++) {
            const tsr_op *op = tsr_op_at(oi);
            if (only && !name_listed(only, op->name)) continue;
            std::vector<bench_case> cs = cases_for(op->name, w, h, quick);
            for (auto &c : cs) {
                const tsr_image *src = !strcmp(op->name, "gray") ? &rgb : &g;
                const char *peer;
                double peer_us = peer_time(op->name, c, &g, &rgb, &peer);
                for (int vi = 0; op->variants[vi]; vi++) {
                    const tsr_variant *v = op->variants[vi];
                    if (v->backend != TSR_BACKEND_CUDA) continue;
                    if (v->supports && !v->supports(src, &c.p)) continue;
                    if (too_slow(op->name, v, c)) {
                        printf("%-10s %-12s %-28s %10s\n", op->name, v->name, c.label, "skipped (O(r^2))");
                        continue;
                    }
                    double us = time_variant(op, v, src, &c.p);
                    print_row(op->name, v->name, c.label, us, c.bytes, v->is_default ? peer : NULL,
                              v->is_default ? peer_us : -1);
                }
            }
        }
        if (strips == 1 && si == 0) {
            /* box/fast sweep: strip height (TSR_CUDA_BOX_STRIP) x samples per block
             * (TSR_CUDA_BOX_EXT) x register cap (TSR_CUDA_BOX_MINB); every output compared with
             * the default configuration's (which the tests tie to the reference). */
            const tsr_op *op = tsr_op_find("box");
            const tsr_variant *fast = NULL;
            for (int vi = 0; op->variants[vi]; vi++)
                if (op->variants[vi]->backend == TSR_BACKEND_CUDA && !strcmp(op->variants[vi]->name, "fast"))
                    fast = op->variants[vi];
            static const int hs[] = {16, 32, 64, 128, 256};
            static const int ext[] = {1024, 2048, 4096};
            int saved_runs = g_runs;
            g_runs = 10;
            printf("\n-- box/fast sweep (10 runs each): strip height, samples per block, register cap\n");
            for (int r : {1, 15, 64}) {
                bench_case c;
                tsr_image ref = {0};
                memset(&c, 0, sizeof c);
                c.p.box = {r, -1, -1, TSR_BORDER_REFLECT101, 0};
                double def_us = time_variant(op, fast, &g, &c.p, &ref);
                char lab0[64];
                snprintf(lab0, sizeof lab0, "r=%d default", r);
                print_row("box", "fast", lab0, def_us, 2.0 * w * h, NULL, -1);
                for (int minb : {2, 1})
                    for (int e : ext)
                        for (int sh : hs) {
                            char val[16], lab[64];
                            tsr_image out = {0};
                            snprintf(val, sizeof val, "%d", sh);
                            setenv("TSR_CUDA_BOX_STRIP", val, 1);
                            snprintf(val, sizeof val, "%d", e);
                            setenv("TSR_CUDA_BOX_EXT", val, 1);
                            snprintf(val, sizeof val, "%d", minb);
                            setenv("TSR_CUDA_BOX_MINB", val, 1);
                            double us = time_variant(op, fast, &g, &c.p, &out);
                            snprintf(lab, sizeof lab, "r=%d sh=%d ext=%d minb=%d%s", r, sh, e, minb,
                                     out.data && ref.data && same_image(&out, &ref) ? "" : " DIFF");
                            print_row("box", "fast", lab, us, 2.0 * w * h, NULL, -1);
                            tsr_image_free(&out);
                        }
                unsetenv("TSR_CUDA_BOX_STRIP");
                unsetenv("TSR_CUDA_BOX_EXT");
                unsetenv("TSR_CUDA_BOX_MINB");
                tsr_image_free(&ref);
            }
            sweep_sums_bands("tiled", "TSR_CUDA_SUMS_BAND", {32, 64, 128, 256, 512, 1024}, &g);
            g_runs = saved_runs;
        }
        if (strips == 2 && si == 0) {
            sweep_strips("warp", "TSR_CUDA_WARP_STRIP", "TSR_CUDA_WARP_SLIDE", {1, 2, 3, 5, 8, 15, 31, 64}, {8, 16, 32, 64}, &g);
        }
        if (strips == 3 && si == 0)
            sweep_strips("reg", "TSR_CUDA_REG_STRIP", NULL, {1, 3, 5, 7}, {8, 16, 32, 64}, &g);
        if (strips == 7) {   /* the kernels short of blocks on small images */
            sweep_strips("reg", "TSR_CUDA_REG_STRIP", NULL, {1, 2, 3}, {1, 8, 12, 16, 20}, &g);
            sweep_sums_bands("packed", "TSR_CUDA_SUMS_PBAND", {8, 16, 32, 64, 128, 256}, &g);
            sweep_resize_out(&g);
        }
        if (strips == 8) sweep_resize_out(&g);
        if (strips == 9) {   /* box/ring's strip heights (rounded up to whole rings), beside box/reg's and box/wide's defaults */
            sweep_strips("reg", "TSR_CUDA_REG_STRIP", NULL, {1, 2, 3}, {}, &g);
            sweep_strips("wide", "TSR_CUDA_WIDE_STRIP", NULL, {3, 4, 5, 6, 7}, {}, &g);
            sweep_strips("ring", "TSR_CUDA_RING_STRIP", NULL, {1, 2, 3, 4, 5, 6, 7}, {1, 8, 15, 22, 29, 43}, &g);
        }
        if (strips == 10)   /* box/stream's strip heights */
            sweep_strips("stream", "TSR_CUDA_STREAM_STRIP", NULL, {3, 4, 6, 8, 12, 16, 17, 20, 24, 28, 32}, {8, 12, 16, 24, 32, 48}, &g);
        if (strips == 4 && si == 0)
            sweep_strips("wide", "TSR_CUDA_WIDE_STRIP", NULL, {3, 5, 7, 11, 15, 24, 31, 48, 64}, {12, 16, 20, 24, 28, 32, 40, 48},
                         &g);
        if (strips == 4 && si == 1)
            sweep_strips("wide", "TSR_CUDA_WIDE_STRIP", NULL, {3, 7, 15, 31, 64}, {4, 8, 12, 16, 24, 32}, &g);
        if (strips == 6)
            sweep_strips("sweep", "TSR_CUDA_SWEEP_STRIP", NULL, {1, 3, 7, 15, 31, 64}, {8, 16, 24, 32, 48, 64}, &g);
        if (strips == 5) radii_table(&g);
        if (strips == 11)   /* box/wide's stacked first windows (TSR_CUDA_WIDE_WARPS from the environment) */
            sweep_strips("wide", "TSR_CUDA_WIDE_STRIP", "TSR_CUDA_WIDE_STACK", {12, 13, 14, 15, 16, 17, 24, 48, 64}, {8, 12, 16}, &g);
        tsr_image_free(&g);
        tsr_image_free(&rgb);
        printf("\n");
    }
    CK(cudaStreamDestroy(g_stream));
    return 0;
}
