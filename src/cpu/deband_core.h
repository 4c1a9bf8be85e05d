/* The per-pixel definition of deband, shared by the CPU variants (C) and the CUDA kernels, so
 * that every backend computes the same integers. docs/deband.md describes each step. */
#ifndef TSR_DEBAND_CORE_H
#define TSR_DEBAND_CORE_H

#include <stdint.h>

#ifdef __CUDACC__
#define TSR_DB_FN static __host__ __device__ __forceinline__
#else
#define TSR_DB_FN static inline
#endif

/* Per-plane constants, all in 16-bit internal units (a sample v of depth d is v << (16 - d)). */
typedef struct tsr__db_plane {
    int w, h;                 /* plane size */
    int in_shift;             /* 16 - input bits */
    int out_shift;            /* 16 - output bits */
    int out_max;              /* 2^output bits - 1 */
    int thr;                  /* threshold * 4 */
    int grain;                /* grain * 4 */
    int lo, hi;               /* clamp after grain: 0..65535 or the TV range */
    uint32_t off_key;         /* key of the reference offsets (shared by planes of one geometry) */
    uint32_t grain_key;       /* key of the grain (per plane, and per frame when dynamic) */
    int range, sample_mode, blur_first, dither;
} tsr__db_plane;

/* lowbias32's first step, x ^ (x >> 16). It distributes over xor: fold(a ^ b) == fold(a) ^
 * fold(b), so a kernel can keep its row and column keys folded and start a pixel's hash with one
 * xor (tsr__db_hash_folded). */
TSR_DB_FN uint32_t tsr__db_fold(uint32_t x) { return x ^ (x >> 16); }

/* lowbias32 after its first step: tsr__db_hash_folded(tsr__db_fold(x)) == tsr__db_hash(x). */
TSR_DB_FN uint32_t tsr__db_hash_folded(uint32_t x)
{
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

/* lowbias32 (Chris Wellons' integer hash): a well-mixed bijection of 32-bit words. */
TSR_DB_FN uint32_t tsr__db_hash(uint32_t x) { return tsr__db_hash_folded(tsr__db_fold(x)); }

/* The key of row y under a plane key; a pixel's random word is tsr__db_hash(rowkey ^ x*K). */
TSR_DB_FN uint32_t tsr__db_rowkey(uint32_t key, int y) { return tsr__db_hash(key ^ ((uint32_t)y * 0x85ebca6bu)); }
TSR_DB_FN uint32_t tsr__db_rand(uint32_t rowkey, int x) { return tsr__db_hash(rowkey ^ ((uint32_t)x * 0xc2b2ae35u)); }

/* A 16-bit random field r mapped onto 0..n-1 without division: (r * n) >> 16. */
TSR_DB_FN int tsr__db_pick(uint32_t r16, int n) { return (int)((r16 * (uint32_t)n) >> 16); }

TSR_DB_FN int tsr__db_min(int a, int b) { return a < b ? a : b; }
TSR_DB_FN int tsr__db_abs(int a) { return a < 0 ? -a : a; }

/* Reference offsets of pixel (x, y) from its random word r: the distance limit shrinks near the borders so every
 * reference lies inside the plane. sample_mode 1 uses (0, +-dy); mode 2 uses the cross
 * (x+dx, y+dy), (x-dx, y-dy), (x+dy, y-dx), (x-dy, y+dx). */
TSR_DB_FN void tsr__db_offsets_r(const tsr__db_plane *P, uint32_t r, int x, int y, int *dx, int *dy)
{
    int lim = tsr__db_min(P->range, tsr__db_min(y, P->h - 1 - y));
    if (P->sample_mode == 1) {
        *dx = 0;
        *dy = tsr__db_pick(r & 0xffffu, lim + 1);
    } else {
        lim = tsr__db_min(lim, tsr__db_min(x, P->w - 1 - x));
        *dx = tsr__db_pick(r & 0xffffu, 2 * lim + 1) - lim;
        *dy = tsr__db_pick(r >> 16, 2 * lim + 1) - lim;
    }
}

/* The same from the row key: the pixel's random word is tsr__db_rand(offrow, x). */
TSR_DB_FN void tsr__db_offsets(const tsr__db_plane *P, uint32_t offrow, int x, int y, int *dx, int *dy)
{
    tsr__db_offsets_r(P, tsr__db_rand(offrow, x), x, y, dx, dy);
}

/* Grain of pixel x in [-grain, grain] (16-bit units). */
TSR_DB_FN int tsr__db_grain(const tsr__db_plane *P, uint32_t grainrow, int x)
{
    if (!P->grain) return 0;
    return tsr__db_pick(tsr__db_rand(grainrow, x) & 0xffffu, 2 * P->grain + 1) - P->grain;
}

/* The debanded, grained and clamped 16-bit value of a pixel from its source value and its
 * references (already scaled to 16 bits; r2, r3 unused in sample_mode 1). */
TSR_DB_FN int tsr__db_value(const tsr__db_plane *P, int src, int r0, int r1, int r2, int r3, int grain)
{
    int avg, keep, v;
    if (P->sample_mode == 1) {
        avg = (r0 + r1 + 1) >> 1;
        keep = P->blur_first ? tsr__db_abs(avg - src) >= P->thr
                             : (tsr__db_abs(r0 - src) >= P->thr) | (tsr__db_abs(r1 - src) >= P->thr);
    } else {
        avg = (r0 + r1 + r2 + r3 + 2) >> 2;
        keep = P->blur_first ? tsr__db_abs(avg - src) >= P->thr
                             : (tsr__db_abs(r0 - src) >= P->thr) | (tsr__db_abs(r1 - src) >= P->thr) |
                                   (tsr__db_abs(r2 - src) >= P->thr) | (tsr__db_abs(r3 - src) >= P->thr);
    }
    v = (keep ? src : avg) + grain;
    return v < P->lo ? P->lo : v > P->hi ? P->hi : v;
}

/* The 8x8 Bayer matrix (0..63) at (x&7, y&7), from its bit-interleaving definition: the bits of
 * x^y and y, least significant first, become the pairs of the result, most significant first. */
TSR_DB_FN int tsr__db_bayer(int x, int y)
{
    int v = 0, a = (x ^ y) & 7, b = y & 7;
    for (int k = 0; k < 3; k++) v = (v << 2) | (((a >> k) & 1) << 1) | ((b >> k) & 1);
    return v;
}

/* What none and ordered dithering add before truncating to the output depth: none rounds half
 * up (half an output step); ordered adds (b + 1/2)/64 of a step, b the Bayer value at (x&7, y&7). */
TSR_DB_FN int tsr__db_dither_add(const tsr__db_plane *P, int x, int y)
{
    int s = P->out_shift;
    if (P->dither != 1) return (1 << s) >> 1;
    return ((2 * tsr__db_bayer(x, y) + 1) << s) >> 7;
}

/* Truncate v + add to the output depth (a no-op at 16 bits). */
TSR_DB_FN int tsr__db_quant(const tsr__db_plane *P, int v, int add)
{
    int q = (v + add) >> P->out_shift;
    return q > P->out_max ? P->out_max : q;
}

/* Floor of a/16 for any sign (no implementation-defined shifts). */
TSR_DB_FN int tsr__db_floor16(int a) { return a >= 0 ? a / 16 : -((15 - a) / 16); }

/* One Floyd-Steinberg step: v (16-bit) plus the diffused error acc (in 1/16 units); returns the
 * output code and its error (16-bit units) for the neighbours. */
TSR_DB_FN int tsr__db_fs(const tsr__db_plane *P, int v, int acc, int *err)
{
    int s = P->out_shift, w = v + tsr__db_floor16(acc + 8), q;
    w = w < 0 ? 0 : w > 65535 ? 65535 : w;
    q = (w + (1 << s >> 1)) >> s;
    if (q > P->out_max) q = P->out_max;
    *err = w - (q << s);
    return q;
}

#endif
