/* libFuzzer target: the jpeg decoder (src/io/jpeg.c) on arbitrary bytes held in memory. */
#define TSR_FUZZ_DECODE tsr__jpeg_read
#include "fuzz_decode.h"
