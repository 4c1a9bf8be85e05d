/* libFuzzer target: the bmp decoder (src/io/bmp.c) on arbitrary bytes held in memory. */
#define TSR_FUZZ_DECODE tsr__bmp_read
#include "fuzz_decode.h"
