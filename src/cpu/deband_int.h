/* Private interface between the deband front end (src/cpu/deband.c) and its CUDA backend
 * (src/cuda/deband.cu). */
#ifndef TSR_DEBAND_INT_H
#define TSR_DEBAND_INT_H

#include "tessera.h"
#include "deband_core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Fill the three planes' constants for a frame of src's shape, frame number frame_index
 * (dynamic grain) and an output of out_bits. */
void tsr__deband_setup(const tsr_frame *src, const tsr_deband_params *p, int frame_index, int out_bits,
                       tsr__db_plane P[3]);

/* CUDA variants: kind 0 planar, 1 aos3, 2 aos4, 3 vec, 4 staged, 5 tile. src and dst are device frames; the work is queued
 * on 'stream' and the call returns without waiting (temporary buffers are freed stream-ordered). */
tsr_status tsr__deband_cuda_run(int kind, const tsr_frame *src, tsr_frame *dst, const tsr__db_plane P[3],
                                void *stream);

/* Tests only: nonzero makes the CPU 'fast' variant skip its AVX2 code (the gather loop and
 * Floyd-Steinberg on 8 rows), so that the paths processors without AVX2 take are checked on
 * machines that have it (the values are the same; the tests check it). */
extern int tsr__db_baseline;

/* Slots of tsr_deband_pipe, on both backends. CUDA needs three for upload, kernel and download to
 * overlap; a caller that reads, processes and writes on three threads (the CLI) needs one per
 * stage, and the fourth lets the reader run a frame ahead so that an uneven pipe stalls no one. */
#define TSR__DB_SLOTS 4

/* The CUDA pipe: nslots (at most TSR__DB_SLOTS) slots, each with pinned host frames in[k] / out[k] (filled in here, not
 * owned by the caller), device frames, scratch and a stream of its own. Slot 0's frames are allocated at open, the
 * others' by tsr__deband_cuda_pipe_slot at their first use. */
tsr_status tsr__deband_cuda_pipe_open(void **state, int width, int height, int chroma, int bits, int out_bits,
                                      int nslots, tsr_frame *in, tsr_frame *out);
/* Allocate slot k's host and device frames unless it has them (in[k] and out[k] are zero until then). Call before
 * filling in[k]; not for one slot on two threads at once. */
tsr_status tsr__deband_cuda_pipe_slot(void *state, int k);
/* Queue upload, kernels and download of slot k. */
tsr_status tsr__deband_cuda_pipe_submit(void *state, int k, int kind, const tsr__db_plane P[3]);
/* Wait for slot k; *kernel_ms receives its kernels' time. */
tsr_status tsr__deband_cuda_pipe_wait(void *state, int k, double *kernel_ms);
/* Wait for everything and free the streams and buffers (pinned frames included). */
void tsr__deband_cuda_pipe_close(void *state);

/* Bench only (bench/deband): average milliseconds of the deband kernel(s) of 'kind' alone on
 * device frames (aos: the packed-pixel kernel after one packing; with Floyd-Steinberg depth
 * reduction, the whole frame: deband into 16-bit values, then the dither), of a device-to-device copy of
 * src into dst (the same bytes in and out, plane by plane), and (flat_ms, may be NULL) of one
 * flat cudaMemcpy of as many bytes between two buffers, over 'iters' runs each. */
tsr_status tsr__deband_cuda_time(int kind, const tsr_frame *src, tsr_frame *dst, const tsr__db_plane P[3], int iters,
                                 double *kernel_ms, double *copy_ms, double *flat_ms);

#ifdef __cplusplus
}
#endif
#endif
