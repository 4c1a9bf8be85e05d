/* libFuzzer target: tsr_read's in-memory core (format detection from the magic bytes, then the
 * decoder it names), as a file or standard input would reach it. */
#define TSR_FUZZ_DECODE tsr__decode_mem
#include "fuzz_decode.h"
