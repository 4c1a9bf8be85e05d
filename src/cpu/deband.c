/* deband: parameters, planar frames, the variant table, the CPU variants ('reference', the
 * definition, and 'fast', threaded), images, and the frame pipe. The CUDA variants live in
 * src/cuda/deband.cu; both compute the functions of deband_core.h. */
#include "../core/internal.h"
#include "deband_core.h"
#include "deband_int.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---------------------------------------------------------------- parameters */

static const char *const tsr__dither_names[] = {"none", "ordered", "floyd-steinberg", NULL};

#define TSR__DB_OFF(f) offsetof(tsr_deband_params, f)
const tsr_param tsr_deband_param_table[] = {
    {"range", TSR_P_INT, "largest distance of the reference pixels", 0, 255, 15, NULL, TSR__DB_OFF(range), 0},
    {"y", TSR_P_INT, "luma threshold (64 = one 8-bit code value)", 0, 4096, 64, NULL, TSR__DB_OFF(y), 0},
    {"cb", TSR_P_INT, "Cb threshold", 0, 4096, 64, NULL, TSR__DB_OFF(cb), 0},
    {"cr", TSR_P_INT, "Cr threshold", 0, 4096, 64, NULL, TSR__DB_OFF(cr), 0},
    {"grain-y", TSR_P_INT, "luma grain amplitude (64 = +-one 8-bit code value)", 0, 4096, 64, NULL,
     TSR__DB_OFF(grain_y), 0},
    {"grain-c", TSR_P_INT, "chroma grain amplitude", 0, 4096, 64, NULL, TSR__DB_OFF(grain_c), 0},
    {"sample-mode", TSR_P_INT, "1: two references above and below; 2: four on a random cross", 1, 2, 2, NULL,
     TSR__DB_OFF(sample_mode), 0},
    {"seed", TSR_P_INT, "seed of the reference offsets and the grain", 0, 2147483647, 0, NULL, TSR__DB_OFF(seed), 0},
    {"blur-first", TSR_P_BOOL, "compare the references' average with the pixel (else every reference)", 0, 1, 1,
     NULL, TSR__DB_OFF(blur_first), 0},
    {"dynamic-grain", TSR_P_BOOL, "a new grain pattern for every frame", 0, 1, 0, NULL, TSR__DB_OFF(dynamic_grain), 0},
    {"keep-tv-range", TSR_P_BOOL, "clamp to 16..235 (luma) and 16..240 (chroma), scaled to the depth", 0, 1, 0,
     NULL, TSR__DB_OFF(keep_tv_range), 0},
    {"output-depth", TSR_P_INT, "bits of the output, 8..16 (0: the input's)", 0, 16, 0, NULL,
     TSR__DB_OFF(output_depth), 0},
    {"dither", TSR_P_CHOICE, "how the depth is reduced", 0, 2, 2, tsr__dither_names, TSR__DB_OFF(dither), 0},
};
const int tsr_deband_param_count = (int)(sizeof tsr_deband_param_table / sizeof tsr_deband_param_table[0]);

/* Public functions below are documented in include/tessera.h. */
void tsr_deband_defaults(tsr_deband_params *p)
{
    memset(p, 0, sizeof *p);
    for (int i = 0; i < tsr_deband_param_count; i++)
        tsr__param_set(&tsr_deband_param_table[i], p, tsr_deband_param_table[i].def);
}

tsr_status tsr_deband_check(const tsr_deband_params *p, int bits)
{
    if (!p) return tsr__fail(TSR_E_ARG, "deband: NULL parameters");
    for (int i = 0; i < tsr_deband_param_count; i++) {
        const tsr_param *d = &tsr_deband_param_table[i];
        double v = tsr__param_get(d, p);
        if (!(v >= d->min && v <= d->max))
            return tsr__fail(TSR_E_ARG, "deband: --%s %.0f is out of range [%.0f, %.0f]", d->name, v, d->min, d->max);
    }
    if (p->output_depth != 0 && p->output_depth < 8)
        return tsr__fail(TSR_E_ARG, "deband: --output-depth %d is out of range: 8..16, or 0 for the input's depth",
                         p->output_depth);
    if (bits < 8 || bits > 16) return tsr__fail(TSR_E_UNSUPPORTED, "deband: %d-bit samples (8 to 16 supported)", bits);
    return TSR_OK;
}

/* ---------------------------------------------------------------- frames */

int tsr_frame_plane_width(int width, int chroma, int p)
{
    return p && (chroma == TSR_CHROMA_420 || chroma == TSR_CHROMA_422) ? (width + 1) / 2 : width;
}

int tsr_frame_plane_height(int height, int chroma, int p) { return p && chroma == TSR_CHROMA_420 ? (height + 1) / 2 : height; }

tsr_status tsr_frame_create(tsr_frame *f, int width, int height, int chroma, int bits, tsr_memory memory)
{
    tsr_frame t;
    memset(&t, 0, sizeof t);
    if (!f) return tsr__fail(TSR_E_ARG, "tsr_frame_create: NULL frame");
    if (width <= 0 || height <= 0) return tsr__fail(TSR_E_SIZE, "frame size %dx%d", width, height);
    if (chroma < TSR_CHROMA_420 || chroma > TSR_CHROMA_MONO) return tsr__fail(TSR_E_ARG, "frame chroma %d", chroma);
    if (bits < 8 || bits > 16) return tsr__fail(TSR_E_UNSUPPORTED, "%d-bit frames (8 to 16 supported)", bits);
    if ((uint64_t)width * (uint64_t)height > tsr_max_pixels())
        return tsr__fail(TSR_E_SIZE, "frame %dx%d exceeds the limit of %llu pixels", width, height,
                         (unsigned long long)tsr_max_pixels());
    t.width = width, t.height = height, t.chroma = chroma, t.bits = bits, t.memory = memory, t.owned = 1;
    t.nplanes = chroma == TSR_CHROMA_MONO ? 1 : 3;
    for (int p = 0; p < t.nplanes; p++) {
        int pw = tsr_frame_plane_width(width, chroma, p), ph = tsr_frame_plane_height(height, chroma, p);
        size_t row, bytes;
        if (!tsr__mul_size((size_t)pw, bits > 8 ? 2 : 1, &row)) goto overflow;
        if (memory == TSR_DEVICE) {
            tsr_status s = tsr__cuda_alloc(&t.plane[p], &t.stride[p], row, ph);
            if (s) {
                tsr_frame_free(&t);
                return s;
            }
        } else {
            t.stride[p] = (row + 63) & ~(size_t)63;
            if (t.stride[p] < row || !tsr__mul_size(t.stride[p], (size_t)ph, &bytes)) goto overflow;
            t.plane[p] = aligned_alloc(64, bytes);
            if (!t.plane[p]) {
                tsr_frame_free(&t);
                return tsr__fail(TSR_E_NOMEM, "out of memory for a %dx%d frame", width, height);
            }
        }
    }
    *f = t;
    return TSR_OK;
overflow:
    tsr_frame_free(&t);
    return tsr__fail(TSR_E_SIZE, "frame %dx%d: size overflows", width, height);
}

void tsr_frame_free(tsr_frame *f)
{
    if (!f) return;
    if (f->owned)
        for (int p = 0; p < 3; p++) {
            if (!f->plane[p]) continue;
            if (f->memory == TSR_DEVICE) tsr__cuda_free(f->plane[p]);
            else free(f->plane[p]);
        }
    memset(f, 0, sizeof *f);
}

/* Bytes of one row of plane p. */
static size_t tsr__frame_row_bytes(const tsr_frame *f, int p)
{
    return (size_t)tsr_frame_plane_width(f->width, f->chroma, p) * (f->bits > 8 ? 2 : 1);
}

tsr_status tsr_frame_copy(const tsr_frame *src, tsr_frame *dst, void *stream)
{
    if (!src || !dst) return tsr__fail(TSR_E_ARG, "tsr_frame_copy: NULL frame");
    if (src->width != dst->width || src->height != dst->height || src->chroma != dst->chroma ||
        (src->bits > 8) != (dst->bits > 8))
        return tsr__fail(TSR_E_SIZE, "tsr_frame_copy: frames of different shapes");
    for (int p = 0; p < src->nplanes; p++) {
        size_t row = tsr__frame_row_bytes(src, p);
        int ph = tsr_frame_plane_height(src->height, src->chroma, p);
        if (src->memory == TSR_HOST && dst->memory == TSR_HOST) {
            for (int y = 0; y < ph; y++)
                memcpy((char *)dst->plane[p] + (size_t)y * dst->stride[p],
                       (const char *)src->plane[p] + (size_t)y * src->stride[p], row);
        } else {
            tsr_status s = tsr__cuda_copy2d(dst->plane[p], dst->stride[p], dst->memory, src->plane[p], src->stride[p],
                                            src->memory, row, ph, stream);
            if (s) return s;
        }
    }
    return TSR_OK;
}

/* ---------------------------------------------------------------- setup */

void tsr__deband_setup(const tsr_frame *src, const tsr_deband_params *p, int frame_index, int out_bits,
                       tsr__db_plane P[3])
{
    for (int i = 0; i < 3; i++) {
        tsr__db_plane *q = &P[i];
        int chroma_plane = i > 0;
        int geom = chroma_plane && (src->chroma == TSR_CHROMA_420 || src->chroma == TSR_CHROMA_422);
        uint32_t gk;
        memset(q, 0, sizeof *q);
        q->w = tsr_frame_plane_width(src->width, src->chroma, i);
        q->h = tsr_frame_plane_height(src->height, src->chroma, i);
        q->in_shift = 16 - src->bits;
        q->out_shift = 16 - out_bits;
        q->out_max = (1 << out_bits) - 1;
        q->thr = 4 * (i == 0 ? p->y : i == 1 ? p->cb : p->cr);
        q->grain = 4 * (i == 0 ? p->grain_y : p->grain_c);
        q->lo = 0, q->hi = 65535;
        if (p->keep_tv_range) q->lo = 16 << 8, q->hi = (chroma_plane ? 240 : 235) << 8;
        q->off_key = tsr__db_hash((uint32_t)p->seed ^ (0x9e3779b9u * (uint32_t)(geom + 1)));
        gk = tsr__db_hash((uint32_t)p->seed ^ 0x68e31da4u ^ (0x9e3779b9u * (uint32_t)(i + 1)));
        if (p->dynamic_grain) gk = tsr__db_hash(gk ^ ((uint32_t)frame_index * 0x27d4eb2fu));
        q->grain_key = gk;
        q->range = p->range, q->sample_mode = p->sample_mode, q->blur_first = p->blur_first, q->dither = p->dither;
    }
}

/* Sample (x, y) of a host plane, scaled to 16 bits. */
static inline int tsr__db_at(const void *plane, size_t stride, int wide, int shift, int x, int y)
{
    const char *row = (const char *)plane + (size_t)y * stride;
    return (wide ? ((const uint16_t *)row)[x] : ((const uint8_t *)row)[x]) << shift;
}

/* Store v into sample (x, y) of a host plane (8-bit or 16-bit samples). */
static inline void tsr__db_put(void *plane, size_t stride, int wide, int x, int y, int v)
{
    char *row = (char *)plane + (size_t)y * stride;
    if (wide) ((uint16_t *)row)[x] = (uint16_t)v;
    else ((uint8_t *)row)[x] = (uint8_t)v;
}

/* ---------------------------------------------------------------- reference */

/* The definition: every pixel on its own, planes one after another, Floyd-Steinberg left to
 * right along each row, rows top to bottom, with the errors of the next row carried. */
static tsr_status tsr__deband_reference(const tsr_frame *src, tsr_frame *dst, const tsr__db_plane P[3],
                                        const tsr_exec *ex)
{
    int wide_in = src->bits > 8, wide_out = dst->bits > 8;
    (void)ex;
    for (int i = 0; i < src->nplanes; i++) {
        const tsr__db_plane *q = &P[i];
        int *cur = NULL, *nxt = NULL;
        if (q->dither == TSR_DITHER_FLOYD) {
            cur = calloc((size_t)q->w + 2, sizeof *cur);
            nxt = calloc((size_t)q->w + 2, sizeof *nxt);
            if (!cur || !nxt) {
                free(cur), free(nxt);
                return tsr__fail(TSR_E_NOMEM, "deband: out of memory");
            }
        }
        for (int y = 0; y < q->h; y++) {
            for (int x = 0; x < q->w; x++) {
                int dx, dy, r[4], s0, v, out;
                tsr__db_offsets(q, tsr__db_rowkey(q->off_key, y), x, y, &dx, &dy);
                s0 = tsr__db_at(src->plane[i], src->stride[i], wide_in, q->in_shift, x, y);
                if (q->sample_mode == 1) {
                    r[0] = tsr__db_at(src->plane[i], src->stride[i], wide_in, q->in_shift, x, y - dy);
                    r[1] = tsr__db_at(src->plane[i], src->stride[i], wide_in, q->in_shift, x, y + dy);
                    r[2] = r[3] = 0;
                } else {
                    r[0] = tsr__db_at(src->plane[i], src->stride[i], wide_in, q->in_shift, x + dx, y + dy);
                    r[1] = tsr__db_at(src->plane[i], src->stride[i], wide_in, q->in_shift, x - dx, y - dy);
                    r[2] = tsr__db_at(src->plane[i], src->stride[i], wide_in, q->in_shift, x + dy, y - dx);
                    r[3] = tsr__db_at(src->plane[i], src->stride[i], wide_in, q->in_shift, x - dy, y + dx);
                }
                v = tsr__db_value(q, s0, r[0], r[1], r[2], r[3], tsr__db_grain(q, tsr__db_rowkey(q->grain_key, y), x));
                if (q->dither == TSR_DITHER_FLOYD) {
                    int e;
                    out = tsr__db_fs(q, v, cur[x + 1], &e);
                    cur[x + 2] += 7 * e;   /* buffers are offset by one: index x+1 is pixel x */
                    nxt[x] += 3 * e;
                    nxt[x + 1] += 5 * e;
                    nxt[x + 2] += e;
                } else {
                    out = tsr__db_quant(q, v, tsr__db_dither_add(q, x, y));
                }
                tsr__db_put(dst->plane[i], dst->stride[i], wide_out, x, y, out);
            }
            if (cur) {
                int *t = cur;
                cur = nxt, nxt = t;
                memset(nxt, 0, ((size_t)q->w + 2) * sizeof *nxt);
            }
        }
        free(cur), free(nxt);
    }
    return TSR_OK;
}

/* ---------------------------------------------------------------- fast */

struct tsr__db_job {
    const tsr_frame *src;
    const tsr_frame *dst;
    const tsr__db_plane *P;
    uint16_t *tmp[3];      /* Floyd-Steinberg: the 16-bit values of each plane */
    int rows[4];           /* prefix sums of the planes' heights */
    int failed;            /* a worker could not allocate its row buffers */
};

/* A worker's row buffers: values, offset random words, grain. */
struct tsr__db_rowbuf {
    uint16_t *v;
    uint32_t *r;
    int32_t *g;
};

/* Allocate a worker's row buffers for rows of w pixels; 0 when any allocation failed. */
static int tsr__db_rowbuf_alloc(struct tsr__db_rowbuf *b, int w)
{
    b->v = malloc((size_t)w * sizeof *b->v);
    b->r = malloc((size_t)w * sizeof *b->r);
    b->g = malloc((size_t)w * sizeof *b->g);
    return b->v && b->r && b->g;
}

/* Release a worker's row buffers (any of them may be NULL). */
static void tsr__db_rowbuf_free(struct tsr__db_rowbuf *b) { free(b->v), free(b->r), free(b->g); }

int tsr__db_baseline = 0;

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define TSR__DB_X86 1

/* Columns [x, xb) of a row whose pixels all have the full range R (see the row function), 8
 * pixels at a time with AVX2 gathers, in P's sample mode; returns the column where it stopped (the rest
 * is left to the scalar loop). row: the row's first sample (bytes: 1 or 2 a sample); rb, gb: the
 * row's offset words and grain. Each gather reads 4 bytes at a sample, so up to 3 bytes past a
 * reference: the caller keeps every reference off the plane's last row. Same values as
 * tsr__db_value. */
__attribute__((target("avx2"))) static int tsr__db_inner_avx2(const tsr__db_plane *P, const void *row, ptrdiff_t ps,
                                                              int bytes, const uint32_t *rb, const int32_t *gb,
                                                              uint16_t *v, int x, int xb)
{
    const int mode1 = P->sample_mode == 1;
    const __m256i R = _mm256_set1_epi32(mode1 ? 0 : P->range),
                  n2 = _mm256_set1_epi32(mode1 ? P->range + 1 : 2 * P->range + 1);
    const __m256i pitch = _mm256_set1_epi32((int)ps), lo16 = _mm256_set1_epi32(0xffff);
    const __m256i mask = _mm256_set1_epi32(bytes == 2 ? 0xffff : 0xff), lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i thm1 = _mm256_set1_epi32(P->thr - 1), lo = _mm256_set1_epi32(P->lo), hi = _mm256_set1_epi32(P->hi);
    const __m256i one = _mm256_set1_epi32(1), two = _mm256_set1_epi32(2);
    const __m128i sh = _mm_cvtsi32_si128(P->in_shift);
    const int *base = (const int *)row;
    for (; x + 8 <= xb; x += 8) {
        const __m256i r = _mm256_loadu_si256((const __m256i *)(rb + x));
        const __m256i dx = _mm256_sub_epi32(_mm256_srli_epi32(_mm256_mullo_epi32(_mm256_and_si256(r, lo16), n2), 16), R);
        const __m256i dy = _mm256_sub_epi32(_mm256_srli_epi32(_mm256_mullo_epi32(_mm256_srli_epi32(r, 16), n2), 16), R);
        /* mode 1: dx is its dy (pick of the low half onto 0..R), references (x, y -+ dy) */
        const __m256i o1 = mode1 ? _mm256_mullo_epi32(dx, pitch) : _mm256_add_epi32(dx, _mm256_mullo_epi32(dy, pitch));
        const __m256i o2 = _mm256_sub_epi32(dy, _mm256_mullo_epi32(dx, pitch));
        const __m256i xi = _mm256_add_epi32(_mm256_set1_epi32(x), lane);
        __m256i s, q0, q1, q2 = _mm256_setzero_si256(), q3 = q2;
        /* the gathers' scale is an immediate: one expansion per sample size */
#define TSR__DB_GATHER(SC)                                                                                       \
    do {                                                                                                         \
        q0 = _mm256_i32gather_epi32(base, _mm256_add_epi32(xi, o1), SC);                                         \
        q1 = _mm256_i32gather_epi32(base, _mm256_sub_epi32(xi, o1), SC);                                         \
        if (!mode1) {                                                                                            \
            q2 = _mm256_i32gather_epi32(base, _mm256_add_epi32(xi, o2), SC);                                     \
            q3 = _mm256_i32gather_epi32(base, _mm256_sub_epi32(xi, o2), SC);                                     \
        }                                                                                                        \
    } while (0)
        /* the pixels themselves are consecutive: a load, not a gather */
        if (bytes == 2) {
            TSR__DB_GATHER(2);
            s = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)((const uint16_t *)row + x)));
        } else {
            TSR__DB_GATHER(1);
            s = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)((const uint8_t *)row + x)));
        }
#undef TSR__DB_GATHER
        s = _mm256_sll_epi32(s, sh);
        q0 = _mm256_sll_epi32(_mm256_and_si256(q0, mask), sh);
        q1 = _mm256_sll_epi32(_mm256_and_si256(q1, mask), sh);
        __m256i avg, keep;   /* keep: all ones where the pixel keeps its own value */
        if (mode1) {
            avg = _mm256_srai_epi32(_mm256_add_epi32(_mm256_add_epi32(q0, q1), one), 1);
            q2 = q0, q3 = q1;   /* the decision without blur compares each twice: the same answer */
        } else {
            q2 = _mm256_sll_epi32(_mm256_and_si256(q2, mask), sh);
            q3 = _mm256_sll_epi32(_mm256_and_si256(q3, mask), sh);
            avg = _mm256_srai_epi32(
                _mm256_add_epi32(_mm256_add_epi32(_mm256_add_epi32(q0, q1), _mm256_add_epi32(q2, q3)), two), 2);
        }
        if (P->blur_first) {
            keep = _mm256_cmpgt_epi32(_mm256_abs_epi32(_mm256_sub_epi32(avg, s)), thm1);
        } else {
            keep = _mm256_or_si256(
                _mm256_or_si256(_mm256_cmpgt_epi32(_mm256_abs_epi32(_mm256_sub_epi32(q0, s)), thm1),
                                _mm256_cmpgt_epi32(_mm256_abs_epi32(_mm256_sub_epi32(q1, s)), thm1)),
                _mm256_or_si256(_mm256_cmpgt_epi32(_mm256_abs_epi32(_mm256_sub_epi32(q2, s)), thm1),
                                _mm256_cmpgt_epi32(_mm256_abs_epi32(_mm256_sub_epi32(q3, s)), thm1)));
        }
        __m256i o = _mm256_add_epi32(_mm256_blendv_epi8(avg, s, keep), _mm256_loadu_si256((const __m256i *)(gb + x)));
        o = _mm256_min_epi32(_mm256_max_epi32(o, lo), hi);
        o = _mm256_permute4x64_epi64(_mm256_packus_epi32(o, o), 0x08);
        _mm_storeu_si128((__m128i *)(v + x), _mm256_castsi256_si128(o));
    }
    return x;
}
#endif

#ifdef TSR__DB_X86
/* The vector loop for the inner columns, where AVX2 is present and the row's references stay off
 * the plane's last row and their offsets in an int (see tsr__db_inner_avx2). */
#define TSR__DB_INNER_SIMD                                                                                      \
    if (y <= P.h - 2 - R && (long long)ps * (R + 1) < (1LL << 30) && !tsr__db_baseline &&                       \
        __builtin_cpu_supports("avx2")) {                                                                        \
        x = tsr__db_inner_avx2(&P, row, ps, (int)sizeof *row, rb, gb, v, x, xb);                                \
    }
#else
#define TSR__DB_INNER_SIMD
#endif

/* The 16-bit values of row y of plane i into b->v[0..w), in three passes so that the hashing
 * vectorises (AVX2 where available): offset words, grain, then references and decisions. */
#define TSR__DB_ROW(T)                                                                                           \
    __attribute__((target_clones("avx2", "default"))) static void tsr__db_row_##T(                             \
        const tsr__db_plane *q, const T *base, size_t pitch, int y, const struct tsr__db_rowbuf *b)             \
    {                                                                                                            \
        tsr__db_plane P = *q; /* a local copy: its fields are loop invariants */                                \
        uint32_t orow = tsr__db_rowkey(P.off_key, y), grow = tsr__db_rowkey(P.grain_key, y);                     \
        const T *row = base + (size_t)y * pitch;                                                                 \
        const ptrdiff_t ps = (ptrdiff_t)pitch;                                                                   \
        int sh = P.in_shift, w = P.w, G = P.grain;                                                               \
        uint32_t *restrict rb = b->r;                                                                            \
        int32_t *restrict gb = b->g;                                                                             \
        uint16_t *restrict v = b->v;                                                                             \
        for (int x = 0; x < w; x++) rb[x] = tsr__db_rand(orow, x);                                               \
        if (G) {                                                                                                 \
            uint32_t n = 2u * (uint32_t)G + 1u;                                                                  \
            for (int x = 0; x < w; x++) gb[x] = (int32_t)(((tsr__db_rand(grow, x) & 0xffffu) * n) >> 16) - G;    \
        } else {                                                                                                 \
            memset(gb, 0, (size_t)w * sizeof *gb);                                                               \
        }                                                                                                        \
        if (P.sample_mode == 1) {                                                                                \
            /* mode 1 has no limit along x: rows at least the range from the top and bottom have the   \
             * full range in every column */                                                              \
            const int R = P.range, xb = y >= R && y <= P.h - 1 - R ? w : 0;                               \
            int x = 0;                                                                                   \
            P.sample_mode = 1;                                                                                   \
            TSR__DB_INNER_SIMD                                                                           \
            for (; x < w; x++) {                                                                                 \
                int dx, dy;                                                                                      \
                const T *c = row + x;                                                                            \
                tsr__db_offsets_r(&P, rb[x], x, y, &dx, &dy);                                                    \
                v[x] = (uint16_t)tsr__db_value(&P, c[0] << sh, c[-dy * ps] << sh, c[dy * ps] << sh, 0, 0, gb[x]); \
            }                                                                                                    \
        } else {                                                                                                 \
            /* columns [xa, xb) of a row whose distance to the top and bottom is at least the range     \
             * have the full range: limit R, dx and dy straight from the picks (the same values) */      \
            const int R = P.range, inner = y >= R && y <= P.h - 1 - R && w > 2 * R;                     \
            const int xa = inner ? R : w, xb = inner ? w - R : w;                                        \
            const uint32_t n2 = 2u * (uint32_t)R + 1u;                                                   \
            P.sample_mode = 2;                                                                                   \
            for (int x = 0; x < w; x++) {                                                                        \
                int dx, dy;                                                                                      \
                const T *c;                                                                                      \
                if (x == xa) { /* the full-range columns, then on past them */                                  \
                    TSR__DB_INNER_SIMD                                                                          \
                    for (; x < xb; x++) {                                                                        \
                        c = row + x;                                                                             \
                        dx = (int)(((rb[x] & 0xffffu) * n2) >> 16) - R;                                          \
                        dy = (int)(((rb[x] >> 16) * n2) >> 16) - R;                                              \
                        v[x] = (uint16_t)tsr__db_value(&P, c[0] << sh, c[dx + dy * ps] << sh,                    \
                                                       c[-dx - dy * ps] << sh, c[dy - dx * ps] << sh,            \
                                                       c[-dy + dx * ps] << sh, gb[x]);                           \
                    }                                                                                            \
                    if (x == w) break;                                                                           \
                }                                                                                                \
                c = row + x;                                                                                     \
                tsr__db_offsets_r(&P, rb[x], x, y, &dx, &dy);                                                    \
                v[x] = (uint16_t)tsr__db_value(&P, c[0] << sh, c[dx + dy * ps] << sh, c[-dx - dy * ps] << sh,    \
                                               c[dy - dx * ps] << sh, c[-dy + dx * ps] << sh, gb[x]);            \
            }                                                                                                    \
        }                                                                                                        \
    }
TSR__DB_ROW(uint8_t)
TSR__DB_ROW(uint16_t)

/* Row values of plane i, row y, whatever the input width, into b->v. */
static void tsr__db_row(const struct tsr__db_job *j, int i, int y, const struct tsr__db_rowbuf *b)
{
    const tsr_frame *s = j->src;
    if (s->bits > 8) tsr__db_row_uint16_t(&j->P[i], s->plane[i], s->stride[i] / 2, y, b);
    else tsr__db_row_uint8_t(&j->P[i], s->plane[i], s->stride[i], y, b);
}

/* Global row index r (over all planes) -> plane and row. */
static void tsr__db_split(const struct tsr__db_job *j, int r, int *i, int *y)
{
    int k = 0;
    while (r >= j->rows[k + 1]) k++;
    *i = k, *y = r - j->rows[k];
}

/* Rows [r0, r1) of all planes, values and none/ordered dithering fused. */
static void tsr__db_rows_direct(void *ctx, int r0, int r1)
{
    struct tsr__db_job *j = ctx;
    struct tsr__db_rowbuf b;
    if (!tsr__db_rowbuf_alloc(&b, j->src->width)) {
        __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
        tsr__db_rowbuf_free(&b);
        return;
    }
    for (int r = r0; r < r1; r++) {
        int i, y;
        const tsr__db_plane *q;
        const uint16_t *v = b.v;
        tsr__db_split(j, r, &i, &y);
        q = &j->P[i];
        tsr__db_row(j, i, y, &b);
        if (j->dst->bits > 8) {
            uint16_t *d = (uint16_t *)((char *)j->dst->plane[i] + (size_t)y * j->dst->stride[i]);
            if (!q->out_shift) memcpy(d, v, (size_t)q->w * 2);
            else
                for (int x = 0; x < q->w; x++) d[x] = (uint16_t)tsr__db_quant(q, v[x], tsr__db_dither_add(q, x, y));
        } else {
            uint8_t *d = (uint8_t *)j->dst->plane[i] + (size_t)y * j->dst->stride[i];
            for (int x = 0; x < q->w; x++) d[x] = (uint8_t)tsr__db_quant(q, v[x], tsr__db_dither_add(q, x, y));
        }
    }
    tsr__db_rowbuf_free(&b);
}

/* Rows [r0, r1) of all planes: values into the Floyd-Steinberg buffers. */
static void tsr__db_rows_values(void *ctx, int r0, int r1)
{
    struct tsr__db_job *j = ctx;
    struct tsr__db_rowbuf b;
    uint16_t *own;
    if (!tsr__db_rowbuf_alloc(&b, j->src->width)) {
        __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
        tsr__db_rowbuf_free(&b);
        return;
    }
    own = b.v;
    for (int r = r0; r < r1; r++) {
        int i, y;
        tsr__db_split(j, r, &i, &y);
        b.v = j->tmp[i] + (size_t)y * j->P[i].w;   /* straight into the plane's value buffer */
        tsr__db_row(j, i, y, &b);
    }
    b.v = own;
    tsr__db_rowbuf_free(&b);
}

/* Floyd-Steinberg, the reference's sums and roundings (tsr__db_fs) in a form the compiler keeps
 * in registers, K consecutive rows at once (tsr__db_fs_rows_K_T): a row's chain from pixel to
 * pixel is about 9 dependent instructions, so one row at a time waits on it, while K rows, each
 * a pixel behind the row above, are K independent chains (K = 4 measured best: 2, 3, 6 and 8
 * rows were slower). v[k] and out[k] are row k's values and output, up[x] the errors (1/16
 * units) that the row above the first left for column x, down[x] set to those the last row
 * leaves. The error to the right is carried in a register and the three below are summed once
 * per column (down[x] = 3 e[x+1] + 5 e[x] + e[x-1]). Row k works on pixel t - k at step t,
 * right after row k - 1 finished pixel t - k + 1, which completes row k - 1's error for column
 * t - k: it goes from row to row in a register ('prod'), not through memory. */

/* One pixel of row k (u: the error from above for it). The value is rounded to the output code
 * t >> s with the error wv - (code << s) == (t & low) - half, unless the code passes the top
 * (t >= 65536 exactly then): code top, error wv - top << s. */
#define TSR__DB_FS_PIXEL(k, x, u)                                                                                \
    do {                                                                                                         \
        const int a_ = (u) + 8 + right[k], f_ = a_ >= 0 ? a_ >> 4 : ~(~a_ >> 4); /* floor(a / 16) */            \
        int wv_ = v[k][x] + f_;                                                                                  \
        wv_ = wv_ < 0 ? 0 : wv_ > 65535 ? 65535 : wv_;                                                           \
        const int t_ = wv_ + half, over_ = t_ >= 65536;                                                          \
        const int e_ = over_ ? wv_ + etop : (t_ & low) - half;                                                   \
        out[k][x] = (__typeof__(out[k][0]))(over_ ? q->out_max : t_ >> s);                                       \
        prod[k] = 3 * e_ + 5 * e1[k] + e2[k]; /* column x - 1's, for the row below */                            \
        right[k] = 7 * e_, e2[k] = e1[k], e1[k] = e_;                                                            \
    } while (0)
#define TSR__DB_FS_ROWS(T, K)                                                                                    \
    static void tsr__db_fs_rows_##K##_##T(const tsr__db_plane *q, const uint16_t *const *v,                     \
                                          const int *restrict up, int *restrict down, T *const *out)            \
    {                                                                                                            \
        const int s = q->out_shift, half = (1 << s) >> 1, low = (1 << s) - 1, w = q->w;                        \
        const int etop = -(q->out_max << s); /* the error of a value rounded past the top code, less it */     \
        int right[K], e1[K], e2[K], prod[K], t = 0; /* 7 e[x-1]; e[x-1]; e[x-2]; handed on */                \
        for (int k = 0; k < K; k++) right[k] = e1[k] = e2[k] = prod[k] = 0;                                     \
        /* start-up and the end: rows off their pixels skip, a row past its last pixel hands on   \
         * its last error (column w - 1); rows in order, so row k - 1's prod is this step's */       \
        for (;;) {                                                                                               \
            if (t == K && t < w) { /* every row past its first pixel: no tests */                                \
                for (; t < w; t++) {                                                                             \
                    TSR__DB_FS_PIXEL(0, t, up[t]);                                                               \
                    _Pragma("GCC unroll 16") for (int k = 1; k < K; k++) TSR__DB_FS_PIXEL(k, t - k, prod[k - 1]); \
                    down[t - K] = prod[K - 1];                                                                   \
                }                                                                                                \
            }                                                                                                    \
            if (t >= w + K) break;                                                                               \
            for (int k = 0; k < K; k++) {                                                                        \
                const int x = t - k;                                                                             \
                if (x < 0 || x > w) continue;                                                                    \
                if (x == w) prod[k] = 5 * e1[k] + e2[k];                                                         \
                else TSR__DB_FS_PIXEL(k, x, k ? prod[k - 1] : up[x]);                                            \
                if (k == K - 1 && x) down[x - 1] = prod[k];                                                      \
            }                                                                                                    \
            t++;                                                                                                 \
        }                                                                                                        \
    }
TSR__DB_FS_ROWS(uint8_t, 4)
TSR__DB_FS_ROWS(uint16_t, 4)
TSR__DB_FS_ROWS(uint8_t, 1)
TSR__DB_FS_ROWS(uint16_t, 1)

#ifdef TSR__DB_X86
/* An 8 x 8 transpose of 16-bit samples: on return r[j] holds sample j of each input r[k], in
 * lane k. */
__attribute__((target("avx2"))) static inline void tsr__db_tr8x8(__m128i r[8])
{
    __m128i a[8], b[8];
    for (int i = 0; i < 4; i++) {
        a[2 * i] = _mm_unpacklo_epi16(r[2 * i], r[2 * i + 1]);
        a[2 * i + 1] = _mm_unpackhi_epi16(r[2 * i], r[2 * i + 1]);
    }
    for (int i = 0; i < 2; i++) {
        b[4 * i] = _mm_unpacklo_epi32(a[4 * i], a[4 * i + 2]);
        b[4 * i + 1] = _mm_unpackhi_epi32(a[4 * i], a[4 * i + 2]);
        b[4 * i + 2] = _mm_unpacklo_epi32(a[4 * i + 1], a[4 * i + 3]);
        b[4 * i + 3] = _mm_unpackhi_epi32(a[4 * i + 1], a[4 * i + 3]);
    }
    for (int i = 0; i < 4; i++) {
        r[2 * i] = _mm_unpacklo_epi64(b[i], b[i + 4]);
        r[2 * i + 1] = _mm_unpackhi_epi64(b[i], b[i + 4]);
    }
}

/* Floyd-Steinberg of 8 consecutive rows in the 8 lanes of AVX2 vectors, the same values as 8
 * rows of tsr__db_fs_rows_1. Lane k is row k, two pixels behind row k - 1: at step t it works on
 * pixel t - 2k, and the error from above that it needs (row k - 1's, complete once row k - 1
 * has done the next pixel) is what lane k - 1 handed on at step t - 1, moved one lane up. v: the
 * first row's values (rows vstride samples apart); up: the errors the row above the first left;
 * down: set to those the last row leaves; out: the first row's output (rows ostride bytes
 * apart, 16-bit samples when 'wide'). Steps where every lane is on an inner pixel go 8 at a
 * time, values and outputs through 8 x 8 transposes; the first and last steps of the rows go
 * one at a time with the lanes off their rows masked. */
__attribute__((target("avx2"))) static void tsr__db_fs_rows8_avx2(const tsr__db_plane *q, const uint16_t *v,
                                                                  size_t vstride, const int *up, int *down, char *out,
                                                                  size_t ostride, int wide)
{
    const int s = q->out_shift, w = q->w;
    const __m256i half = _mm256_set1_epi32((1 << s) >> 1), low = _mm256_set1_epi32((1 << s) - 1);
    const __m256i eight = _mm256_set1_epi32(8), top = _mm256_set1_epi32(65535), zero = _mm256_setzero_si256();
    const __m256i etop = _mm256_set1_epi32(-(q->out_max << s)), omax = _mm256_set1_epi32(q->out_max);
    const __m256i lag = _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14), up1 = _mm256_setr_epi32(0, 0, 1, 2, 3, 4, 5, 6);
    const __m128i cnt = _mm_cvtsi32_si128(s);
    __m256i right = zero, e1 = zero, e2 = zero, prod = zero, e, code;
    int t = 0;
    /* One step: e and code of every lane from its value vv and its error from above u. */
#define TSR__DB_FS8_CORE(vv, u)                                                                                  \
    do {                                                                                                         \
        const __m256i a_ = _mm256_add_epi32(_mm256_add_epi32(u, eight), right);                                 \
        __m256i wv_ = _mm256_add_epi32(vv, _mm256_srai_epi32(a_, 4)); /* floor(a / 16) */                       \
        wv_ = _mm256_min_epi32(_mm256_max_epi32(wv_, zero), top);                                                \
        const __m256i t_ = _mm256_add_epi32(wv_, half), over_ = _mm256_cmpgt_epi32(t_, top);                     \
        e = _mm256_blendv_epi8(_mm256_sub_epi32(_mm256_and_si256(t_, low), half), _mm256_add_epi32(wv_, etop),  \
                               over_);                                                                           \
        code = _mm256_blendv_epi8(_mm256_srl_epi32(t_, cnt), omax, over_);                                       \
    } while (0)
    /* The state after e: 3 e + 5 e[x-1] + e[x-2] handed on, 7 e to the right. */
#define TSR__DB_FS8_NEXT()                                                                                       \
    do {                                                                                                         \
        prod = _mm256_add_epi32(_mm256_add_epi32(_mm256_add_epi32(e, _mm256_slli_epi32(e, 1)),                  \
                                                 _mm256_add_epi32(e1, _mm256_slli_epi32(e1, 2))),                \
                                e2);                                                                             \
        right = _mm256_sub_epi32(_mm256_slli_epi32(e, 3), e);                                                    \
        e2 = e1, e1 = e;                                                                                         \
    } while (0)
    for (;;) {
        if (t == 15) /* lane 7 past its first pixel: every lane inside its row for 8 steps */
            for (; t + 7 < w; t += 8) {
                __m128i r[8];
                for (int k = 0; k < 8; k++) r[k] = _mm_loadu_si128((const __m128i *)(v + k * vstride + t - 2 * k));
                tsr__db_tr8x8(r);
                for (int j = 0; j < 8; j++) {
                    const __m256i u = _mm256_blend_epi32(_mm256_permutevar8x32_epi32(prod, up1),
                                                         _mm256_set1_epi32(up[t + j]), 1);
                    TSR__DB_FS8_CORE(_mm256_cvtepu16_epi32(r[j]), u);
                    TSR__DB_FS8_NEXT();
                    down[t + j - 15] = _mm256_extract_epi32(prod, 7);
                    r[j] = _mm_packus_epi32(_mm256_castsi256_si128(code), _mm256_extracti128_si256(code, 1));
                }
                tsr__db_tr8x8(r);
                for (int k = 0; k < 8; k++) {
                    char *o = out + k * ostride;
                    if (wide) _mm_storeu_si128((__m128i *)(o + 2 * (size_t)(t - 2 * k)), r[k]);
                    else _mm_storel_epi64((__m128i *)(o + t - 2 * k), _mm_packus_epi16(r[k], r[k]));
                }
            }
        if (t > w + 14) break;
        {
            const __m256i x = _mm256_sub_epi32(_mm256_set1_epi32(t), lag);
            const __m256i on = _mm256_andnot_si256(_mm256_cmpgt_epi32(zero, x), _mm256_cmpgt_epi32(_mm256_set1_epi32(w), x));
            const __m256i end = _mm256_cmpeq_epi32(x, _mm256_set1_epi32(w));
            int val[8], xs[8], codes[8];
            for (int k = 0; k < 8; k++) {
                xs[k] = t - 2 * k;
                val[k] = xs[k] >= 0 && xs[k] < w ? v[k * vstride + xs[k]] : 0;
            }
            const __m256i u = _mm256_blend_epi32(_mm256_permutevar8x32_epi32(prod, up1),
                                                 _mm256_set1_epi32(t < w ? up[t] : 0), 1);
            TSR__DB_FS8_CORE(_mm256_loadu_si256((const __m256i *)val), u);
            e = _mm256_andnot_si256(end, e);   /* past the last pixel: 5 e[w-1] + e[w-2] handed on */
            TSR__DB_FS8_NEXT();
            right = _mm256_and_si256(right, on), e1 = _mm256_and_si256(e1, on);   /* lanes before their row: 0 */
            _mm256_storeu_si256((__m256i *)codes, code);
            for (int k = 0; k < 8; k++)
                if (xs[k] >= 0 && xs[k] < w) {
                    if (wide) ((uint16_t *)(out + k * ostride))[xs[k]] = (uint16_t)codes[k];
                    else ((uint8_t *)(out + k * ostride))[xs[k]] = (uint8_t)codes[k];
                }
            if (xs[7] >= 1 && xs[7] <= w) down[xs[7] - 1] = _mm256_extract_epi32(prod, 7);
        }
        t++;
    }
#undef TSR__DB_FS8_CORE
#undef TSR__DB_FS8_NEXT
}
#endif

/* Floyd-Steinberg of planes [i0, i1), the reference's values: 8 rows at a time in AVX2 vectors where the
 * processor has AVX2, then 4 at a time, then one by one. */
static void tsr__db_planes_fs(void *ctx, int i0, int i1)
{
    const struct tsr__db_job *j = ctx;
    for (int i = i0; i < i1; i++) {
        const tsr__db_plane *q = &j->P[i];
        int *e = calloc(2 * (size_t)q->w, sizeof *e), *up = e, *down = e + q->w;
        if (!e) {
            __atomic_store_n(&((struct tsr__db_job *)ctx)->failed, 1, __ATOMIC_RELAXED);
            return;
        }
        int y = 0;
#ifdef TSR__DB_X86
        if (!tsr__db_baseline && __builtin_cpu_supports("avx2"))
            for (; y + 8 <= q->h; y += 8) {
                int *t;
                tsr__db_fs_rows8_avx2(q, j->tmp[i] + (size_t)y * q->w, (size_t)q->w, up, down,
                                      (char *)j->dst->plane[i] + (size_t)y * j->dst->stride[i], j->dst->stride[i],
                                      j->dst->bits > 8);
                t = up, up = down, down = t;
            }
#endif
        while (y < q->h) {   /* 4 rows at a time, then one by one */
            const int k4 = q->h - y >= 4;
            const uint16_t *v[4];
            void *rows[4];
            int *t;
            for (int k = 0; k < (k4 ? 4 : 1); k++) {
                v[k] = j->tmp[i] + (size_t)(y + k) * q->w;
                rows[k] = (char *)j->dst->plane[i] + (size_t)(y + k) * j->dst->stride[i];
            }
            if (j->dst->bits > 8)
                (k4 ? tsr__db_fs_rows_4_uint16_t : tsr__db_fs_rows_1_uint16_t)(q, v, up, down, (uint16_t *const *)rows);
            else
                (k4 ? tsr__db_fs_rows_4_uint8_t : tsr__db_fs_rows_1_uint8_t)(q, v, up, down, (uint8_t *const *)rows);
            t = up, up = down, down = t;
            y += k4 ? 4 : 1;
        }
        free(e);
    }
}

/* Threaded: rows of all planes in parallel; Floyd-Steinberg (when it reduces the depth) runs
 * per plane after the values, the planes in parallel. */
static tsr_status tsr__deband_fast(const tsr_frame *src, tsr_frame *dst, const tsr__db_plane P[3], const tsr_exec *ex)
{
    struct tsr__db_job j;
    int threads = tsr__exec_threads(ex);
    memset(&j, 0, sizeof j);
    j.src = src, j.dst = dst, j.P = P;
    for (int i = 0; i < 3; i++) j.rows[i + 1] = j.rows[i] + (i < src->nplanes ? P[i].h : 0);
    if (P[0].dither == TSR_DITHER_FLOYD && P[0].out_shift) {
        tsr_status s = TSR_OK;
        for (int i = 0; i < src->nplanes && !s; i++) {
            size_t n;
            if (!tsr__mul_size((size_t)P[i].w, (size_t)P[i].h * 2, &n)) s = tsr__fail(TSR_E_SIZE, "deband: size overflow");
            else if (!(j.tmp[i] = malloc(n))) s = tsr__fail(TSR_E_NOMEM, "deband: out of memory");
        }
        if (!s) {
            tsr__parallel_for(j.rows[3], 16, threads, tsr__db_rows_values, &j);
            if (!j.failed) tsr__parallel_for(src->nplanes, 1, threads, tsr__db_planes_fs, &j);
            if (j.failed) s = tsr__fail(TSR_E_NOMEM, "deband: out of memory for row buffers");
        }
        for (int i = 0; i < 3; i++) free(j.tmp[i]);
        return s;
    }
    tsr__parallel_for(j.rows[3], 16, threads, tsr__db_rows_direct, &j);
    return j.failed ? tsr__fail(TSR_E_NOMEM, "deband: out of memory for row buffers") : TSR_OK;
}

/* ---------------------------------------------------------------- variants and dispatch */

#ifdef TSR_HAVE_CUDA
#define TSR__DB_CUDA_ROWS 6
#else
#define TSR__DB_CUDA_ROWS 0
#endif

static const tsr_deband_variant_info tsr__db_variants[] = {
    {"reference", TSR_BACKEND_CPU, "one pixel at a time, planes in turn (the definition)", 0, 1, 0},
    {"fast", TSR_BACKEND_CPU, "rows on all threads; Floyd-Steinberg per plane in parallel", 1, 0, 0},
    {"planar", TSR_BACKEND_CUDA, "one thread per pixel on planar 16-bit or 8-bit planes", 0, 0, 0},
    {"aos3", TSR_BACKEND_CUDA, "4:4:4 packed as three shorts per pixel, read one short at a time (seed)", 0, 0, 1},
    {"aos4", TSR_BACKEND_CUDA, "4:4:4 packed as four shorts per pixel, read with one short4 load (seed)", 0, 0, 1},
    {"vec", TSR_BACKEND_CUDA, "4 pixels per thread with vector loads and stores, offsets hashed once for the planes sharing them", 0, 0, 0},
    {"staged", TSR_BACKEND_CUDA, "vec with each 128x32 tile's reach staged in shared memory by 16-byte loads, references gathered from there", 0, 0, 0},
    {"tile", TSR_BACKEND_CUDA, "staged with every plane of a tile staged at once, one launch per frame, fewer instructions per pixel", 1, 0, 0},
};

int tsr_deband_variant_count(void) { return 2 + TSR__DB_CUDA_ROWS; }

const tsr_deband_variant_info *tsr_deband_variant_at(int i)
{
    return i >= 0 && i < tsr_deband_variant_count() ? &tsr__db_variants[i] : NULL;
}

#ifdef TSR_HAVE_CUDA
/* Index into tsr__db_variants of a variant (CUDA ones: 2 planar, 3 aos3, 4 aos4, 5 vec, 6 staged, 7 tile). */
static int tsr__db_index(const tsr_deband_variant_info *v) { return (int)(v - tsr__db_variants); }
#endif

/* The variant for this exec, memory and chroma; NULL with *st and a message when none fits. */
static const tsr_deband_variant_info *tsr__db_choose(const tsr_exec *ex, tsr_memory memory, int chroma,
                                                     tsr_status *st)
{
    const char *name = ex && ex->variant && *ex->variant ? ex->variant : getenv("TSR_VARIANT_DEBAND");
    tsr_backend asked = ex ? ex->backend : TSR_BACKEND_AUTO, b;
    if (asked == TSR_BACKEND_CUDA && !tsr__cuda_available()) {
        *st = tsr__fail(TSR_E_NO_DEVICE, "deband: the CUDA backend was requested but %s",
                  tsr_cuda_compiled() ? "no usable CUDA device was found" : "this build has no CUDA support");
        return NULL;
    }
    if (name && *name) {
        for (int i = 0; i < tsr_deband_variant_count(); i++) {
            const tsr_deband_variant_info *v = &tsr__db_variants[i];
            if (strcmp(v->name, name) || (asked != TSR_BACKEND_AUTO && v->backend != asked)) continue;
            if (v->only_444 && chroma != TSR_CHROMA_444) {
                *st = tsr__fail(TSR_E_UNSUPPORTED, "deband: variant '%s' handles 4:4:4 frames and RGB images only", name);
                return NULL;
            }
            if (v->backend == TSR_BACKEND_CUDA && !tsr__cuda_available()) {
                *st = tsr__fail(TSR_E_NO_DEVICE, "deband: variant '%s' needs a CUDA device and none is usable", name);
                return NULL;
            }
            if (v->backend == TSR_BACKEND_CPU && memory == TSR_DEVICE) {
                *st = tsr__fail(TSR_E_UNSUPPORTED, "deband: variant '%s' runs on the CPU and the frame is in device memory",
                          name);
                return NULL;
            }
            return v;
        }
        *st = tsr__fail(TSR_E_ARG, "deband: no %svariant named '%s' (cpu: reference, fast; cuda: planar, aos3, aos4, vec, staged, tile%s)",
                  asked == TSR_BACKEND_CPU ? "cpu " : asked == TSR_BACKEND_CUDA ? "cuda " : "", name,
                  tsr_cuda_compiled() ? "" : ", not in this build");
        return NULL;
    }
    b = tsr_resolve_backend(ex, memory);
    if (b == TSR_BACKEND_CPU && memory == TSR_DEVICE) {
        *st = tsr__fail(TSR_E_UNSUPPORTED, "deband: the CPU backend cannot process a frame in device memory");
        return NULL;
    }
    for (int i = 0; i < tsr_deband_variant_count(); i++)
        if (tsr__db_variants[i].backend == b && tsr__db_variants[i].is_default) return &tsr__db_variants[i];
    *st = tsr__fail(TSR_E_NO_DEVICE, "deband: no %s variant in this build", tsr_backend_name(b));
    return NULL;
}

const tsr_deband_variant_info *tsr_deband_choose(const tsr_exec *ex, tsr_memory memory, int chroma)
{
    tsr_status st;
    return tsr__db_choose(ex, memory, chroma, &st);
}

/* Check a frame's fields for a call of 'who' (messages start "who: the what frame"). */
static tsr_status tsr__db_check_frame(const tsr_frame *f, const char *who, const char *what)
{
    if (!f->plane[0]) return tsr__fail(TSR_E_ARG, "%s: the %s frame has no data", who, what);
    if (f->width <= 0 || f->height <= 0)
        return tsr__fail(TSR_E_SIZE, "%s: the %s frame is %dx%d", who, what, f->width, f->height);
    if (f->chroma < TSR_CHROMA_420 || f->chroma > TSR_CHROMA_MONO)
        return tsr__fail(TSR_E_ARG, "%s: the %s frame has chroma %d", who, what, f->chroma);
    if (f->nplanes != (f->chroma == TSR_CHROMA_MONO ? 1 : 3))
        return tsr__fail(TSR_E_ARG, "%s: the %s frame has %d planes for its chroma format", who, what, f->nplanes);
    for (int p = 0; p < f->nplanes; p++)
        if (!f->plane[p] || f->stride[p] < tsr__frame_row_bytes(f, p))
            return tsr__fail(TSR_E_ARG, "%s: the %s frame's plane %d has no data or a short stride", who, what, p);
    return TSR_OK;
}

tsr_status tsr_deband_frame(const tsr_frame *src, tsr_frame *dst, const tsr_deband_params *p, int frame_index,
                            const tsr_exec *ex)
{
    tsr_exec defaults = {TSR_BACKEND_AUTO, NULL, NULL, 0};
    const tsr_deband_variant_info *v;
    tsr__db_plane P[3];
    tsr_frame out, in_v, out_v;
    const tsr_frame *in = src;
    tsr_memory vmem;
    int out_bits;
    tsr_status s;

    if (!src || !dst) return tsr__fail(TSR_E_ARG, "tsr_deband_frame: NULL frame");
    if (!ex) ex = &defaults;
    if ((s = tsr__db_check_frame(src, "deband", "input"))) return s;
    if ((s = tsr_deband_check(p, src->bits))) return s;
    out_bits = p->output_depth ? p->output_depth : src->bits;
    if (dst->plane[0]) {
        if ((s = tsr__db_check_frame(dst, "deband", "output"))) return s;
        if (dst->width != src->width || dst->height != src->height || dst->chroma != src->chroma ||
            dst->bits != out_bits)
            return tsr__fail(TSR_E_SIZE, "deband: the output frame is %dx%d chroma %d %d-bit, expected %dx%d chroma %d "
                             "%d-bit", dst->width, dst->height, dst->chroma, dst->bits, src->width, src->height,
                             src->chroma, out_bits);
    }
    if (!(v = tsr__db_choose(ex, src->memory, src->chroma, &s))) return s;
    if (tsr__log_enabled()) fprintf(stderr, "tessera: deband: %s variant '%s'\n", tsr_backend_name(v->backend), v->name);
    tsr__deband_setup(src, p, frame_index, out_bits, P);
    vmem = v->backend == TSR_BACKEND_CUDA ? TSR_DEVICE : TSR_HOST;

    memset(&in_v, 0, sizeof in_v);
    memset(&out_v, 0, sizeof out_v);
    if (src->memory != vmem) {
        if ((s = tsr_frame_create(&in_v, src->width, src->height, src->chroma, src->bits, vmem))) return s;
        if ((s = tsr_frame_copy(src, &in_v, ex->stream)) || (s = tsr__cuda_sync(ex->stream))) goto done;
        in = &in_v;
    }
    if (dst->plane[0] && dst->memory == vmem) {
        out = *dst;
    } else {
        if ((s = tsr_frame_create(&out_v, src->width, src->height, src->chroma, out_bits, vmem))) goto done;
        out = out_v;
    }
    if (v->backend == TSR_BACKEND_CPU) {
        s = v->is_reference ? tsr__deband_reference(in, &out, P, ex) : tsr__deband_fast(in, &out, P, ex);
    } else {
#ifdef TSR_HAVE_CUDA
        s = tsr__deband_cuda_run(tsr__db_index(v) - 2, in, &out, P, ex->stream);
        if (!s && (in_v.plane[0] || out_v.plane[0])) s = tsr__cuda_sync(ex->stream);
#else
        s = tsr__fail(TSR_E_NO_DEVICE, "deband: this build has no CUDA support");
#endif
    }
    if (s) goto done;
    if (out_v.plane[0]) {
        if (dst->plane[0]) {   /* the caller's frame lives in the other memory */
            if (!(s = tsr_frame_copy(&out_v, dst, ex->stream))) s = tsr__cuda_sync(ex->stream);
        } else if (out_v.memory == src->memory) {
            *dst = out_v;
            memset(&out_v, 0, sizeof out_v);
        } else {
            tsr_frame back;
            if (!(s = tsr_frame_create(&back, src->width, src->height, src->chroma, out_bits, src->memory))) {
                if (!(s = tsr_frame_copy(&out_v, &back, ex->stream))) s = tsr__cuda_sync(ex->stream);
                if (s) tsr_frame_free(&back);
                else *dst = back;
            }
        }
    }
done:
    tsr_frame_free(&in_v);
    tsr_frame_free(&out_v);
    if (!s) tsr__clear_error();
    return s;
}

/* ---------------------------------------------------------------- images */

tsr_status tsr_deband_image(const tsr_image *src, tsr_image *dst, const tsr_deband_params *p, const tsr_exec *ex)
{
    tsr_deband_params q;
    tsr_frame in, out;
    tsr_image res;
    int colours, bits, out_bits, wide_out;
    tsr_status s;

    if (!src || !dst || !p) return tsr__fail(TSR_E_ARG, "tsr_deband_image: NULL argument");
    if (!src->data || src->memory != TSR_HOST)
        return tsr__fail(TSR_E_ARG, "deband: images must be in host memory with data");
    if (src->depth != TSR_U8 && src->depth != TSR_U16)
        return tsr__fail(TSR_E_UNSUPPORTED, "deband: images of 8 or 16 bits only");
    if (src->channels < 1 || src->channels > 4) return tsr__fail(TSR_E_ARG, "deband: %d channels", src->channels);
    bits = src->depth == TSR_U8 ? 8 : 16;
    if ((s = tsr_deband_check(p, bits))) return s;
    q = *p;
    q.cb = q.cr = q.y;                 /* RGB: every channel with the luma settings */
    q.grain_c = q.grain_y;
    q.keep_tv_range = 0;               /* a TV range means nothing for RGB or gray files */
    out_bits = q.output_depth ? q.output_depth : bits;
    wide_out = out_bits > 8;
    colours = src->channels >= 3 ? 3 : 1;
    if ((s = tsr_frame_create(&in, src->width, src->height, colours == 3 ? TSR_CHROMA_444 : TSR_CHROMA_MONO, bits,
                              TSR_HOST)))
        return s;
    for (int y = 0; y < src->height; y++) {
        const unsigned char *row = tsr__row(src, y);
        for (int x = 0; x < src->width; x++)
            for (int c = 0; c < colours; c++) {
                size_t k = (size_t)x * src->channels + c;
                tsr__db_put(in.plane[c], in.stride[c], bits > 8, x, y,
                            bits > 8 ? ((const uint16_t *)row)[k] : row[k]);
            }
    }
    memset(&out, 0, sizeof out);
    s = tsr_deband_frame(&in, &out, &q, 0, ex);
    tsr_frame_free(&in);
    if (s) return s;
    memset(&res, 0, sizeof res);
    if (dst->data) {
        if (dst->width != src->width || dst->height != src->height || dst->channels != src->channels ||
            (int)dst->depth != (wide_out ? 2 : 1) || dst->memory != TSR_HOST) {
            tsr_frame_free(&out);
            return tsr__fail(TSR_E_SIZE, "deband: the output image must be a host image of the input's shape with "
                                         "%d-byte samples", wide_out ? 2 : 1);
        }
        res = *dst;
    } else if ((s = tsr_image_create(&res, src->width, src->height, src->channels, wide_out ? TSR_U16 : TSR_U8,
                                     TSR_HOST))) {
        tsr_frame_free(&out);
        return s;
    }
    for (int y = 0; y < src->height; y++) {
        const unsigned char *srow = tsr__row(src, y);
        unsigned char *drow = tsr__row(&res, y);
        for (int x = 0; x < src->width; x++)
            for (int c = 0; c < src->channels; c++) {
                size_t k = (size_t)x * src->channels + c;
                int v;
                if (c < colours) {
                    v = tsr__db_at(out.plane[c], out.stride[c], wide_out, 0, x, y);
                    if (wide_out) v <<= 16 - out_bits;   /* 16-bit files hold full-scale values */
                } else {                                  /* alpha: unchanged, rescaled */
                    v = bits > 8 ? ((const uint16_t *)srow)[k] : srow[k];
                    if (wide_out && bits == 8) v *= 257;
                    else if (!wide_out && bits > 8) v = (v * 255 + 32767) / 65535;
                }
                if (wide_out) ((uint16_t *)drow)[k] = (uint16_t)v;
                else drow[k] = (uint8_t)v;
            }
    }
    tsr_frame_free(&out);
    if (!dst->data) *dst = res;
    tsr__clear_error();
    return TSR_OK;
}

/* ---------------------------------------------------------------- display */

typedef struct tsr__fti_job {
    const tsr_frame *f;
    const tsr_image *dst;
    int gray;
} tsr__fti_job;

/* v / 2^shift clamped to 0..255 (negative sums are black; see tsr_frame_to_image). */
static inline uint8_t tsr__fti_clamp(int v, int shift)
{
    if (v < 0) return 0;
    v >>= shift;
    return (uint8_t)(v > 255 ? 255 : v);
}

/* Rows [y0, y1) of tsr_frame_to_image; the formulas are the ones its declaration documents. */
static void tsr__fti_rows(void *ctx, int y0, int y1)
{
    const tsr__fti_job *j = ctx;
    const tsr_frame *f = j->f;
    int wide = f->bits > 8, s = f->bits - 8, maxv = (1 << f->bits) - 1;
    int cx = f->chroma != TSR_CHROMA_444, cy = f->chroma == TSR_CHROMA_420;
    for (int y = y0; y < y1; y++) {
        uint8_t *d = tsr__row(j->dst, y);
        for (int x = 0; x < f->width; x++) {
            int luma = tsr__db_at(f->plane[0], f->stride[0], wide, 0, x, y), c, u, v;
            if (j->gray) {
                d[x] = (uint8_t)((luma * 255 + maxv / 2) / maxv);
                continue;
            }
            c = 298 * (luma - (16 << s)) + (128 << s);
            u = tsr__db_at(f->plane[1], f->stride[1], wide, 0, x >> cx, y >> cy) - (128 << s);
            v = tsr__db_at(f->plane[2], f->stride[2], wide, 0, x >> cx, y >> cy) - (128 << s);
            d[3 * x] = tsr__fti_clamp(c + 409 * v, 8 + s);
            d[3 * x + 1] = tsr__fti_clamp(c - 100 * u - 208 * v, 8 + s);
            d[3 * x + 2] = tsr__fti_clamp(c + 516 * u, 8 + s);
        }
    }
}

tsr_status tsr_frame_to_image(const tsr_frame *src, tsr_image *dst, tsr_frame_view view, const tsr_exec *ex)
{
    tsr__fti_job j;
    tsr_image res;
    int channels;
    tsr_status s;
    if (!src || !dst) return tsr__fail(TSR_E_ARG, "tsr_frame_to_image: NULL argument");
    if ((s = tsr__db_check_frame(src, "tsr_frame_to_image", "input"))) return s;
    if (src->memory != TSR_HOST) return tsr__fail(TSR_E_ARG, "tsr_frame_to_image: the frame must be in host memory");
    if (src->bits < 8 || src->bits > 16)
        return tsr__fail(TSR_E_UNSUPPORTED, "tsr_frame_to_image: %d-bit frames (8 to 16 supported)", src->bits);
    if (view != TSR_FRAME_VIEW_RGB && view != TSR_FRAME_VIEW_LUMA)
        return tsr__fail(TSR_E_ARG, "tsr_frame_to_image: unknown view %d", (int)view);
    j.gray = view == TSR_FRAME_VIEW_LUMA || src->chroma == TSR_CHROMA_MONO;
    channels = j.gray ? 1 : 3;
    if (dst->data) {
        if (dst->width != src->width || dst->height != src->height || dst->channels != channels ||
            dst->depth != TSR_U8 || dst->memory != TSR_HOST)
            return tsr__fail(TSR_E_SIZE, "tsr_frame_to_image: the output must be a %dx%d %d-channel 8-bit host image",
                             src->width, src->height, channels);
        res = *dst;
    } else if ((s = tsr_image_create(&res, src->width, src->height, channels, TSR_U8, TSR_HOST))) {
        return s;
    }
    j.f = src;
    j.dst = &res;
    tsr__parallel_for(src->height, 16, tsr__exec_threads(ex), tsr__fti_rows, &j);
    if (!dst->data) *dst = res;
    tsr__clear_error();
    return TSR_OK;
}

/* ---------------------------------------------------------------- pipe */

struct tsr_deband_pipe {
    const tsr_deband_variant_info *v;
    tsr_deband_params p;
    tsr_exec ex;
    int width, height, chroma, bits, out_bits, nslots;
    tsr_frame in[TSR__DB_SLOTS], out[TSR__DB_SLOTS];
    /* Processing time per slot: one field per slot, so that _run and _wait on two threads (for
     * two slots) never write the same one. */
    double slot_ms[TSR__DB_SLOTS];
    /* The one-thread interface (_input, _submit, _drain) on top of the slots. */
    int busy[TSR__DB_SLOTS];
    long long submitted, finished;  /* frames queued, frames handed back */
    int filling;                    /* slot handed out by _input and not yet submitted (-1) */
    void *cuda;                     /* the CUDA side's streams and buffers */
};

tsr_status tsr_deband_pipe_open(tsr_deband_pipe **pp, int width, int height, int chroma, int bits,
                                const tsr_deband_params *p, const tsr_exec *ex)
{
    tsr_exec defaults = {TSR_BACKEND_AUTO, NULL, NULL, 0};
    tsr_deband_pipe *d;
    tsr_status s = TSR_OK;
    if (!pp) return tsr__fail(TSR_E_ARG, "tsr_deband_pipe_open: NULL argument");
    if (!ex) ex = &defaults;
    if ((s = tsr_deband_check(p, bits))) return s;
    if (!(d = calloc(1, sizeof *d))) return tsr__fail(TSR_E_NOMEM, "deband: out of memory");
    d->p = *p, d->ex = *ex, d->width = width, d->height = height, d->chroma = chroma, d->bits = bits;
    d->out_bits = p->output_depth ? p->output_depth : bits;
    d->filling = -1;
    d->nslots = TSR__DB_SLOTS;
    if (!(d->v = tsr__db_choose(ex, TSR_HOST, chroma, &s))) {
        free(d);
        return s;
    }
    if (d->v->backend == TSR_BACKEND_CUDA) {
#ifdef TSR_HAVE_CUDA
        s = tsr__deband_cuda_pipe_open(&d->cuda, width, height, chroma, bits, d->out_bits, d->nslots, d->in, d->out);
#else
        s = tsr__fail(TSR_E_NO_DEVICE, "deband: this build has no CUDA support");
#endif
    } else {
        for (int k = 0; k < d->nslots && !s; k++) {
            s = tsr_frame_create(&d->in[k], width, height, chroma, bits, TSR_HOST);
            if (!s) s = tsr_frame_create(&d->out[k], width, height, chroma, d->out_bits, TSR_HOST);
        }
    }
    if (s) {
        tsr_deband_pipe_close(d);
        return s;
    }
    if (tsr__log_enabled())
        fprintf(stderr, "tessera: deband: %s variant '%s'\n", tsr_backend_name(d->v->backend), d->v->name);
    *pp = d;
    return TSR_OK;
}

int tsr_deband_pipe_slots(const tsr_deband_pipe *d) { return d ? d->nslots : 0; }

tsr_frame *tsr_deband_pipe_slot(tsr_deband_pipe *d, int k)
{
    if (!d || k < 0 || k >= d->nslots) {
        tsr__fail(TSR_E_ARG, "tsr_deband_pipe_slot: no slot %d", k);
        return NULL;
    }
#ifdef TSR_HAVE_CUDA
    if (d->cuda && tsr__deband_cuda_pipe_slot(d->cuda, k)) return NULL;
#endif
    return &d->in[k];
}

tsr_status tsr_deband_pipe_run(tsr_deband_pipe *d, int k, int frame_index)
{
    tsr_status s;
    if (!d || k < 0 || k >= d->nslots) return tsr__fail(TSR_E_ARG, "tsr_deband_pipe_run: no slot %d", k);
    if (d->cuda) {
#ifdef TSR_HAVE_CUDA
        tsr__db_plane P[3];
        /* a slot run before it was handed out gets its frames first: the set-up reads their shape */
        if ((s = tsr__deband_cuda_pipe_slot(d->cuda, k))) return s;
        tsr__deband_setup(&d->in[k], &d->p, frame_index, d->out_bits, P);
        s = tsr__deband_cuda_pipe_submit(d->cuda, k, tsr__db_index(d->v) - 2, P);
#else
        s = TSR_E_NO_DEVICE;
#endif
    } else {
        tsr_exec e = d->ex;
        double t0, t1;
        struct timespec ts;
        e.backend = TSR_BACKEND_CPU;
        e.variant = d->v->name;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        t0 = ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
        s = tsr_deband_frame(&d->in[k], &d->out[k], &d->p, frame_index, &e);
        clock_gettime(CLOCK_MONOTONIC, &ts);
        t1 = ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
        d->slot_ms[k] += t1 - t0;
    }
    return s;
}

tsr_status tsr_deband_pipe_wait(tsr_deband_pipe *d, int k, const tsr_frame **out)
{
    if (out) *out = NULL;
    if (!d || k < 0 || k >= d->nslots) return tsr__fail(TSR_E_ARG, "tsr_deband_pipe_wait: no slot %d", k);
#ifdef TSR_HAVE_CUDA
    if (d->cuda) {
        double ms = 0;
        tsr_status s = tsr__deband_cuda_pipe_wait(d->cuda, k, &ms);
        if (s) return s;
        d->slot_ms[k] += ms;
    }
#endif
    if (out) *out = &d->out[k];
    return TSR_OK;
}

tsr_status tsr_deband_pipe_input(tsr_deband_pipe *d, tsr_frame **in, const tsr_frame **done)
{
    int k = (int)(d->submitted % d->nslots);
    *done = NULL;
    if (d->busy[k]) {
        tsr_status s = tsr_deband_pipe_wait(d, k, done);
        if (s) return s;
        d->busy[k] = 0;
        d->finished++;
    }
#ifdef TSR_HAVE_CUDA
    if (d->cuda) {
        tsr_status s = tsr__deband_cuda_pipe_slot(d->cuda, k);
        if (s) return s;
    }
#endif
    d->filling = k;
    *in = &d->in[k];
    return TSR_OK;
}

tsr_status tsr_deband_pipe_submit(tsr_deband_pipe *d, int frame_index)
{
    int k = d->filling;
    tsr_status s;
    if (k < 0) return tsr__fail(TSR_E_ARG, "tsr_deband_pipe_submit: no frame was taken with tsr_deband_pipe_input");
    d->filling = -1;
    if ((s = tsr_deband_pipe_run(d, k, frame_index))) return s;
    d->busy[k] = 1;
    d->submitted++;
    return TSR_OK;
}

tsr_status tsr_deband_pipe_drain(tsr_deband_pipe *d, const tsr_frame **done)
{
    *done = NULL;
    if (d->finished < d->submitted) {
        int k = (int)(d->finished % d->nslots);
        tsr_status s = tsr_deband_pipe_wait(d, k, done);
        if (s) return s;
        d->busy[k] = 0;
        d->finished++;
    }
    return TSR_OK;
}

const tsr_deband_variant_info *tsr_deband_pipe_variant(const tsr_deband_pipe *d) { return d ? d->v : NULL; }

double tsr_deband_pipe_kernel_ms(const tsr_deband_pipe *d)
{
    double ms = 0;
    for (int k = 0; d && k < d->nslots; k++) ms += d->slot_ms[k];
    return ms;
}

void tsr_deband_pipe_close(tsr_deband_pipe *d)
{
    if (!d) return;
#ifdef TSR_HAVE_CUDA
    if (d->cuda) tsr__deband_cuda_pipe_close(d->cuda);   /* frees the pinned frames too */
#endif
    for (int k = 0; k < TSR__DB_SLOTS; k++) {
        tsr_frame_free(&d->in[k]);
        tsr_frame_free(&d->out[k]);
    }
    free(d);
}
