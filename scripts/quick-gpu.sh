#!/usr/bin/env bash
# A short GPU iteration (one device call): build for sm_90 only, run the named unit tests
# (TESTS, default the box/threshold variant tests and the CUDA tests), then the benchmark with
# BENCH flags. Full logs under $OUT (or ./gpu-out). For the complete check use gpu-check.sh.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
SECONDS=0
make -j"$(nproc)" CUDA_ARCHS=90 all build/tessera-tests build/tessera-bench-cuda >"$OUT/build.log" 2>&1 ||
    { tail -30 "$OUT/build.log"; exit 1; }
echo "build: $SECONDS s"
./build/tessera-tests ${TESTS:-variants_box variants_threshold cuda} >"$OUT/tests.log" 2>&1
echo "tests: exit $? -- $(tail -n 1 "$OUT/tests.log")"
grep -E "FAIL" "$OUT/tests.log" | head -20
if [ -n "${SANITIZE:-}" ]; then
    TSR_TEST_SANITIZER=1 timeout 200 compute-sanitizer --tool "$SANITIZE" --error-exitcode 9 ./build/tessera-tests \
        ${SANITIZE_TESTS:-variants_box_gray8_wide} >"$OUT/sanitizer.log" 2>&1
    echo "compute-sanitizer $SANITIZE: exit $? ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitizer.log" | tail -n 1))"
fi
for flags in ${BENCH:-"--radii"}; do
    timeout 300 ./build/tessera-bench-cuda ${flags//,/ } >"$OUT/bench${flags//[ ,]/}.log" 2>&1
    echo "bench $flags: exit $?"
    grep -E "copy|^-- |^box|^threshold" "$OUT/bench${flags//[ ,]/}.log" | head -150
done
