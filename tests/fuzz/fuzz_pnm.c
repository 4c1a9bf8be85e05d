/* libFuzzer target: the pnm decoder (src/io/pnm.c) on arbitrary bytes held in memory. */
#define TSR_FUZZ_DECODE tsr__pnm_read
#include "fuzz_decode.h"
