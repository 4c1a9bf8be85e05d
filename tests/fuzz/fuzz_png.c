/* libFuzzer target: the png decoder (src/io/png.c) on arbitrary bytes held in memory. */
#define TSR_FUZZ_DECODE tsr__png_read
#include "fuzz_decode.h"
