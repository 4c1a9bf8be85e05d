/* Public jigsaw API: placements, scrambling, rendering, solving (variant choice and dispatch
 * to the compatibility and exact-search implementations of each backend). Scoring is in
 * puzzle_score.c. */
#include "puzzle_core.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---------------------------------------------------------------- variants */

typedef struct {
    const char *name;
    tsr_backend backend;
    const char *help;
    tsr__pz_topk_fn topk;     /* compatibility variant, or */
    tsr__pz_exact_fn exact;   /* exact-search variant */
} tsr__pz_variant;

static const tsr__pz_variant tsr__pz_variants[] = {
    {"mgc", TSR_BACKEND_CPU, "MGC compatibility of all pairs and sides, threaded, best 16 per side kept",
     tsr__pz_topk_cpu, NULL},
    {"enum", TSR_BACKEND_CPU, "exact search of every placement (factorial numbering), threaded", NULL,
     tsr__pz_exact_cpu},
#ifdef TSR_HAVE_CUDA
    {"mgc-gemm", TSR_BACKEND_CUDA, "MGC compatibility as a tiled GEMM of side features, top-k on the GPU",
     tsr__pz_topk_cuda, NULL},
    {"enum-cuda", TSR_BACKEND_CUDA, "exact search, one placement per thread, block and grid reductions", NULL,
     tsr__pz_exact_cuda},
#endif
};
#define TSR_PZ_NVARIANTS ((int)(sizeof tsr__pz_variants / sizeof tsr__pz_variants[0]))

static _Thread_local const char *tsr__pz_last = "";

const char *tsr_puzzle_variant_name(int i, tsr_backend *backend, const char **help)
{
    if (i < 0 || i >= TSR_PZ_NVARIANTS) return NULL;
    if (backend) *backend = tsr__pz_variants[i].backend;
    if (help) *help = tsr__pz_variants[i].help;
    return tsr__pz_variants[i].name;
}

const char *tsr_puzzle_last_variant(void) { return tsr__pz_last; }

/* The variant of a stage (compatibility: exact == 0) for a backend, honouring a requested name
 * (exec->variant, else TSR_VARIANT_PUZZLE) when it names a variant of that stage. */
static const tsr__pz_variant *tsr__pz_pick(tsr_backend b, int exact, const char *want)
{
    if (want && *want)
        for (int i = 0; i < TSR_PZ_NVARIANTS; i++)
            if (!strcmp(tsr__pz_variants[i].name, want) && !!tsr__pz_variants[i].exact == exact)
                return &tsr__pz_variants[i];
    for (int i = 0; i < TSR_PZ_NVARIANTS; i++)
        if (tsr__pz_variants[i].backend == b && !!tsr__pz_variants[i].exact == exact) return &tsr__pz_variants[i];
    return NULL;
}

/* ---------------------------------------------------------------- placements */

/* Contracts of the public functions: see tessera.h. */
void tsr_puzzle_placement_free(tsr_puzzle_placement *p)
{
    if (!p) return;
    free(p->piece);
    free(p->rotation);
    memset(p, 0, sizeof *p);
}

tsr_status tsr_puzzle_placement_init(tsr_puzzle_placement *p, int rows, int cols, int tile, int rotate)
{
    size_t n;
    if (rows < 1 || cols < 1 || tile < 0) return tsr__fail(TSR_E_ARG, "puzzle: grid %dx%d is empty", rows, cols);
    if (!tsr__mul_size((size_t)rows, (size_t)cols, &n) || n > (1u << 28))
        return tsr__fail(TSR_E_SIZE, "puzzle: grid %dx%d has too many pieces", rows, cols);
    memset(p, 0, sizeof *p);
    p->piece = malloc(n * sizeof(int));
    p->rotation = calloc(n, 1);
    if (!p->piece || !p->rotation) {
        tsr_puzzle_placement_free(p);
        return tsr__fail(TSR_E_NOMEM, "puzzle: out of memory for a %dx%d placement", rows, cols);
    }
    for (size_t i = 0; i < n; i++) p->piece[i] = (int)i;
    p->rows = rows;
    p->cols = cols;
    p->tile = tile;
    p->rotate = !!rotate;
    return TSR_OK;
}

tsr_status tsr_puzzle_placement_check(const tsr_puzzle_placement *p)
{
    int n;
    unsigned char *seen;
    if (!p || !p->piece || !p->rotation || p->rows < 1 || p->cols < 1 || p->rows > (1 << 28) / p->cols)
        return tsr__fail(TSR_E_ARG, "puzzle: placement is empty or its grid is invalid");
    n = p->rows * p->cols;
    seen = calloc((size_t)n, 1);
    if (!seen) return tsr__fail(TSR_E_NOMEM, "puzzle: out of memory");
    for (int i = 0; i < n; i++) {
        int t = p->piece[i];
        if (t < 0 || t >= n || seen[t]) {
            free(seen);
            return tsr__fail(TSR_E_FORMAT, "puzzle: cell %d: tile %d is %s", i, t,
                             t < 0 || t >= n ? "out of range" : "used twice");
        }
        seen[t] = 1;
        if (p->rotation[i] > 3 || (!p->rotate && p->rotation[i])) {
            free(seen);
            return tsr__fail(TSR_E_FORMAT, "puzzle: cell %d: rotation %d is not allowed", i, p->rotation[i]);
        }
    }
    free(seen);
    return TSR_OK;
}

/* ---------------------------------------------------------------- scramble and render */

/* See puzzle_core.h. */
tsr_status tsr__pz_check_image(const char *what, const tsr_image *src, int rows, int cols, int *tile)
{
    if (!src || !src->data) return tsr__fail(TSR_E_ARG, "%s: no image", what);
    if (src->memory != TSR_HOST) return tsr__fail(TSR_E_UNSUPPORTED, "%s: images must be in host memory", what);
    if (src->depth != TSR_U8) return tsr__fail(TSR_E_UNSUPPORTED, "%s: only 8-bit images are supported", what);
    if (src->channels < 1 || src->channels > 4)
        return tsr__fail(TSR_E_UNSUPPORTED, "%s: %d channels are not supported", what, src->channels);
    if (rows < 1 || cols < 1) return tsr__fail(TSR_E_ARG, "%s: grid %dx%d is empty", what, rows, cols);
    if (src->width % cols || src->height % rows || src->width / cols != src->height / rows || src->width < cols)
        return tsr__fail(TSR_E_SIZE, "%s: a %dx%d image is not a %dx%d grid of square tiles", what, src->width,
                         src->height, rows, cols);
    *tile = src->width / cols;
    return TSR_OK;
}

/* Copy tile 'from' of src turned 'turns' quarter turns clockwise into cell 'to' of dst. */
static void tsr__pz_blit(const tsr_image *src, tsr_image *dst, int cols, int P, int from, int to, int turns)
{
    int cn = src->channels, sy0 = from / cols * P, sx0 = from % cols * P, dy0 = to / cols * P, dx0 = to % cols * P;
    for (int y = 0; y < P; y++) {
        uint8_t *d = (uint8_t *)tsr__row(dst, dy0 + y) + (size_t)dx0 * cn;
        for (int x = 0; x < P; x++) {
            int sy, sx;
            tsr__pz_turned_src(P, turns, y, x, &sy, &sx);
            memcpy(d + (size_t)x * cn, (const uint8_t *)tsr__row(src, sy0 + sy) + (size_t)(sx0 + sx) * cn, (size_t)cn);
        }
    }
}

/* Check a caller's output image against src, or allocate one like it (*allocated = 1). */
static tsr_status tsr__pz_prepare_dst(const tsr_image *src, tsr_image *dst, int *allocated)
{
    *allocated = 0;
    if (dst->data) {
        if (dst->width != src->width || dst->height != src->height || dst->channels != src->channels ||
            dst->depth != src->depth || dst->memory != TSR_HOST)
            return tsr__fail(TSR_E_SIZE, "puzzle: output image does not match the input's shape");
        if (dst->data == src->data) return tsr__fail(TSR_E_ARG, "puzzle: input and output overlap");
        return TSR_OK;
    }
    *allocated = 1;
    return tsr_image_create(dst, src->width, src->height, src->channels, src->depth, TSR_HOST);
}

tsr_status tsr_puzzle_render(const tsr_image *src, const tsr_puzzle_placement *p, tsr_image *dst)
{
    int P, alloc;
    tsr_image out;
    tsr_status s;
    if ((s = tsr_puzzle_placement_check(p))) return s;
    if ((s = tsr__pz_check_image("puzzle", src, p->rows, p->cols, &P))) return s;
    out = *dst;
    if ((s = tsr__pz_prepare_dst(src, &out, &alloc))) return s;
    for (int i = 0; i < p->rows * p->cols; i++) tsr__pz_blit(src, &out, p->cols, P, p->piece[i], i, p->rotation[i]);
    *dst = out;
    tsr__clear_error();
    return TSR_OK;
}

/* splitmix64: the scramble's deterministic generator. */
static uint64_t tsr__pz_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

tsr_status tsr_puzzle_scramble(const tsr_image *src, tsr_image *dst, int rows, int cols, int rotate, uint64_t seed,
                               tsr_puzzle_placement *truth)
{
    int P, n, alloc;
    tsr_puzzle_placement t;
    tsr_image out;
    tsr_status s;
    uint64_t st = seed;
    if ((s = tsr__pz_check_image("puzzle", src, rows, cols, &P))) return s;
    if ((s = tsr_puzzle_placement_init(&t, rows, cols, P, rotate))) return s;
    n = rows * cols;
    out = *dst;
    if ((s = tsr__pz_prepare_dst(src, &out, &alloc))) {
        tsr_puzzle_placement_free(&t);
        return s;
    }
    /* t.piece[i] first holds the original tile shown in scrambled cell i (Fisher-Yates). */
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(tsr__pz_rand(&st) % (uint64_t)(i + 1)), x = t.piece[i];
        t.piece[i] = t.piece[j];
        t.piece[j] = x;
    }
    {
        int *orig = malloc(sizeof(int) * n);
        unsigned char *turn = malloc((size_t)n);
        if (!orig || !turn) {
            free(orig), free(turn);
            if (alloc) tsr_image_free(&out);
            tsr_puzzle_placement_free(&t);
            return tsr__fail(TSR_E_NOMEM, "puzzle: out of memory");
        }
        for (int i = 0; i < n; i++) {
            orig[i] = t.piece[i];
            turn[i] = (unsigned char)(rotate ? tsr__pz_rand(&st) & 3 : 0);
            tsr__pz_blit(src, &out, cols, P, orig[i], i, turn[i]);
        }
        /* Truth: original cell orig[i] is restored from scrambled tile i turned back. */
        for (int i = 0; i < n; i++) {
            t.piece[orig[i]] = i;
            t.rotation[orig[i]] = (unsigned char)((4 - turn[i]) & 3);
        }
        free(orig), free(turn);
    }
    *dst = out;
    *truth = t;
    tsr__clear_error();
    return TSR_OK;
}

/* ---------------------------------------------------------------- solve */

/* Contract: see puzzle_core.h. */
double tsr__pz_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Progress callback, when the caller gave one. */
static void tsr__pz_report(const tsr_puzzle_options *opt, const char *stage, double f)
{
    if (opt->progress) opt->progress(opt->progress_ctx, stage, f);
}

/* Dense costs for the exact searches: dr[a*m+b] = D(a, right, b), dd likewise (0 within a piece). */
static tsr_status tsr__pz_dense(const tsr__pz *pz, double **pdr, double **pdd)
{
    int m = pz->m;
    double *dr = malloc(sizeof(double) * m * m), *dd = malloc(sizeof(double) * m * m);
    if (!dr || !dd) {
        free(dr), free(dd);
        return tsr__fail(TSR_E_NOMEM, "puzzle: out of memory");
    }
    for (int a = 0; a < m; a++)
        for (int b = 0; b < m; b++) {
            int same = tsr__pz_piece(pz, a) == tsr__pz_piece(pz, b);
            float r = same ? 0 : tsr__pz_dis(pz, a, 1, b), d = same ? 0 : tsr__pz_dis(pz, a, 2, b);
            dr[a * m + b] = r > 0 ? r : 0;
            dd[a * m + b] = d > 0 ? d : 0;
        }
    *pdr = dr;
    *pdd = dd;
    return TSR_OK;
}

/* Exact search over dense costs; writes piece/rot and cost. */
static tsr_status tsr__pz_solve_exact(const tsr__pz *pz, const tsr__pz_variant *v, uint64_t count,
                                      tsr_puzzle_placement *out, const tsr_exec *ex)
{
    int n = pz->n, o[TSR_PZ_EXACT_MAX];
    double *dr, *dd, cost = 0;
    uint64_t best = 0, nfact = 1;
    tsr_status s = tsr__pz_dense(pz, &dr, &dd);
    if (s) return s;
    s = v->exact(dr, dd, pz->rows, pz->cols, pz->rotate, count, &best, &cost, ex);
    free(dr), free(dd);
    if (s) return s;
    for (int i = 2; i <= n; i++) nfact *= (uint64_t)i;
    tsr__pz_decode(best, n, pz->rotate, nfact, o);
    for (int i = 0; i < n; i++) {
        out->piece[i] = tsr__pz_piece(pz, o[i]);
        out->rotation[i] = (unsigned char)(pz->rotate ? o[i] & 3 : 0);
    }
    out->cost = cost;
    out->exact = 1;
    return TSR_OK;
}

/* Branch and bound (no rotation, up to 16 pieces) from the placement in *p as the first bound;
 * replaces it with the proven optimum, or leaves it when the search needs more than 'limit'
 * nodes (*proven 0). */
static tsr_status tsr__pz_solve_bnb(const tsr__pz *pz, uint64_t limit, tsr_puzzle_placement *p, int *proven)
{
    int o[TSR_PZ_BNB_MAX];
    double *dr, *dd, cost;
    tsr_status s = tsr__pz_dense(pz, &dr, &dd);
    *proven = 0;
    if (s) return s;
    if (tsr__pz_bnb(dr, dd, pz->rows, pz->cols, tsr__pz_cost(p->piece, pz->rows, pz->cols, pz->n, dr, dd), limit,
                    o, &cost)) {
        memcpy(p->piece, o, sizeof(int) * pz->n);
        p->cost = cost;
        p->exact = 1;
        *proven = 1;
    }
    free(dr), free(dd);
    return TSR_OK;
}

tsr_status tsr_puzzle_solve(const tsr_image *src, const tsr_puzzle_options *opt, tsr_puzzle_placement *out,
                            const tsr_exec *ex)
{
    tsr_puzzle_placement p;
    tsr__pz pz;
    tsr_exec e = ex ? *ex : (tsr_exec){0};
    tsr_backend b;
    const char *want = e.variant ? e.variant : getenv("TSR_VARIANT_PUZZLE");
    int P, n, method, bnb;
    uint64_t count = 0;
    double t[3] = {0, 0, 0};
    tsr_status s;
    if (!opt) return tsr__fail(TSR_E_ARG, "puzzle: no options");
    if ((s = tsr__pz_check_image("puzzle", src, opt->rows, opt->cols, &P))) return s;
    if (opt->method < 0 || opt->method > 2) return tsr__fail(TSR_E_ARG, "puzzle: unknown method %d", opt->method);
    if ((s = tsr_puzzle_placement_init(&p, opt->rows, opt->cols, P, opt->rotate))) return s;
    n = opt->rows * opt->cols;
    if (P < 3 && n > 1) {
        tsr_puzzle_placement_free(&p);
        return tsr__fail(TSR_E_ARG, "puzzle: tiles of %d pixels are too small (3 or more)", P);
    }
    if (n <= TSR_PZ_EXACT_MAX) {
        count = 1;
        for (int i = 2; i <= n; i++) count *= (uint64_t)i;
        if (opt->rotate) count <<= 2 * n;
    }
    method = opt->method;
    if (method == TSR_PUZZLE_AUTO) method = count && count <= 40000000u ? TSR_PUZZLE_EXACT : TSR_PUZZLE_GREEDY;
    /* A requested variant decides the backend; otherwise the exec does, except that AUTO keeps
     * puzzles on the CPU whose work there is estimated under 50 ms: starting the GPU costs more. */
    if (e.backend == TSR_BACKEND_AUTO && !(want && *want)) {
        double m = opt->rotate ? 4.0 * n : n, dim = 2.0 * (10 + 3.0 * P) + (P <= TSR_PZ_JMAXP ? 2 + 6.0 * P : 0), secs;
        if (method == TSR_PUZZLE_EXACT) secs = (double)count * 60e-9 / tsr__exec_threads(&e);
        else secs = (opt->rotate ? 2.0 : 4.0) * m * m * dim / (4e9 * tsr__exec_threads(&e));
        b = secs < 0.05 ? TSR_BACKEND_CPU : tsr_resolve_backend(&e, TSR_HOST);
    } else {
        b = tsr_resolve_backend(&e, TSR_HOST);
    }
    if (want && *want) {
        int found = 0;
        for (int i = 0; i < TSR_PZ_NVARIANTS; i++)
            if (!strcmp(tsr__pz_variants[i].name, want)) {
                b = tsr__pz_variants[i].backend;
                found = 1;
            }
        if (!found) {
            tsr_puzzle_placement_free(&p);
            return tsr__fail(TSR_E_ARG, "puzzle: unknown variant '%s' (see 'tessera puzzle --help')", want);
        }
    }
    if (b == TSR_BACKEND_CUDA && !tsr_cuda_available()) {
        tsr_puzzle_placement_free(&p);
        return tsr__fail(TSR_E_NO_DEVICE, "puzzle: the CUDA backend was requested but %s", tsr_cuda_device_name());
    }
    if (n == 1) {   /* nothing to search: the one tile, unturned */
        tsr__pz_last = "none";
        *out = p;
        tsr__clear_error();
        return TSR_OK;
    }
    /* Exact beyond the enumeration: branch and bound after the greedy placement. */
    bnb = !opt->rotate && n <= TSR_PZ_BNB_MAX && method != TSR_PUZZLE_EXACT && opt->method != TSR_PUZZLE_GREEDY;
    if (method == TSR_PUZZLE_EXACT && !opt->rotate && n <= TSR_PZ_BNB_MAX && n > TSR_PZ_EXACT_MAX) {
        method = TSR_PUZZLE_GREEDY;
        bnb = 1;
    }
    if (method == TSR_PUZZLE_EXACT &&
        (!count || count > (b == TSR_BACKEND_CUDA ? ((uint64_t)1 << 37) : ((uint64_t)1 << 31)))) {
        tsr_puzzle_placement_free(&p);
        return tsr__fail(TSR_E_UNSUPPORTED,
                         "puzzle: exact search of %d pieces%s is too large for the %s backend (use the greedy "
                         "method)", n, opt->rotate ? " with rotation" : "", tsr_backend_name(b));
    }
    e.backend = b;
    t[0] = tsr__pz_now();
    tsr__pz_report(opt, "features", 0);
    if ((s = tsr__pz_features(&pz, src, opt->rows, opt->cols, opt->rotate, tsr__exec_threads(&e)))) {
        tsr_puzzle_placement_free(&p);
        return s;
    }
    if (method == TSR_PUZZLE_EXACT) {
        const tsr__pz_variant *v = tsr__pz_pick(b, 1, want);
        if (tsr__log_enabled()) fprintf(stderr, "tessera: puzzle: exact search with variant '%s'\n", v->name);
        tsr__pz_last = v->name;
        tsr__pz_report(opt, "exact search", 0);
        s = tsr__pz_solve_exact(&pz, v, count, &p, &e);
    } else {
        const tsr__pz_variant *v = tsr__pz_pick(b, 0, want);
        if (tsr__log_enabled()) fprintf(stderr, "tessera: puzzle: compatibilities with variant '%s'\n", v->name);
        tsr__pz_last = v->name;
        tsr__pz_report(opt, "compatibilities", 0);
        t[1] = tsr__pz_now();
        s = tsr__pz_lists(&pz, v->topk, &e);
        t[2] = tsr__pz_now();
        if (!s) {
            tsr__pz_report(opt, "placing", 0);
            pz.threads = tsr__exec_threads(&e);
            s = tsr__pz_place(&pz, !opt->no_repair, tsr__exec_threads(&e), p.piece, p.rotation, &p.cost, opt->progress, opt->progress_ctx);
            if (tsr__log_enabled())
                fprintf(stderr, "tessera: puzzle: %d pieces: features %.1f ms, compatibilities %.1f ms, placement %.1f ms\n",
                        n, (t[1] - t[0]) * 1e3, (t[2] - t[1]) * 1e3, (tsr__pz_now() - t[2]) * 1e3);
        }
        /* Up to 16 pieces without rotation: prove (or improve) the greedy answer exactly. */
        if (!s && bnb) {
            int proven;
            uint64_t limit = opt->method == TSR_PUZZLE_EXACT ? 4000000000ull : 20000000ull;
            tsr__pz_report(opt, "branch and bound", 0);
            s = tsr__pz_solve_bnb(&pz, limit, &p, &proven);
            if (tsr__log_enabled())
                fprintf(stderr, "tessera: puzzle: branch and bound %s\n", proven ? "proved the optimum" : "gave up");
            if (!s && proven) tsr__pz_last = "bnb";
            if (!s && !proven && opt->method == TSR_PUZZLE_EXACT)
                s = tsr__fail(TSR_E_UNSUPPORTED, "puzzle: exact search of %d pieces gave up after %llu nodes (use the "
                                                 "greedy method)", n, (unsigned long long)limit);
        }
    }
    tsr__pz_free(&pz);
    if (s) {
        tsr_puzzle_placement_free(&p);
        return s;
    }
    tsr__pz_report(opt, "done", 1);
    *out = p;
    tsr__clear_error();
    return TSR_OK;
}
