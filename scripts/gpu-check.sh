#!/usr/bin/env bash
# One call on the GPU machine: build for the GPU at hand, run the whole test suite, the CUDA
# tests under compute-sanitizer, the viewer's GPU tests and the benchmarks. Full logs go to
# $OUT (or ./gpu-out); a short summary is printed last.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
# OpenGL loaders carried in .gl (see the README's viewer section); headers for building only.
if ls .gl/*.deb >/dev/null 2>&1; then
    for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
    mkdir -p /tmp/gl && for f in .gl/*.deb .gl/dev/*.deb; do dpkg -x "$f" /tmp/gl; done
    GLFLAGS=(EXTRA_CFLAGS=-I/tmp/gl/usr/include EXTRA_NVFLAGS=-I/tmp/gl/usr/include LDFLAGS=-L/tmp/gl/usr/lib/x86_64-linux-gnu VIEW_X11=0)
    export TSR_VIEW_EGL=device
else
    GLFLAGS=()
fi
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"
make -j"$(nproc)" CUDA_ARCHS="${CUDA_ARCHS:-90}" "${GLFLAGS[@]}" all build/tessera-tests build/tessera-bench-cuda \
    >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
SECONDS=0
make CUDA_ARCHS="${CUDA_ARCHS:-90}" "${GLFLAGS[@]}" test >"$OUT/test.log" 2>&1
echo "make test ($SECONDS s): $(tail -n 1 "$OUT/test.log")"
grep -E "^(FAIL|  FAIL)" "$OUT/test.log" | head -20
timeout 240 ./build/tessera-bench-cuda >"$OUT/bench-gpu.log" 2>&1
echo "GPU benchmark: exit $?"
# BENCH_EXTRA: one more benchmark run with these flags (a sweep, e.g. --reg), logged apart.
if [ -n "${BENCH_EXTRA:-}" ]; then
    timeout 200 ./build/tessera-bench-cuda $BENCH_EXTRA >"$OUT/bench-extra.log" 2>&1
    echo "extra benchmark ($BENCH_EXTRA): exit $?"
    sed -n "/^-- /,\$p" "$OUT/bench-extra.log" | head -80
fi
grep -E "copy|invert|box|threshold|sums|gray|resize" "$OUT/bench-gpu.log" | head -60
if command -v compute-sanitizer >/dev/null; then
    # memcheck and initcheck over the GPU-specific tests, the resize variants (resize/rows'
    # staging) and box/ring's strips; racecheck (much slower) over the device chain only.
    for tool in memcheck initcheck racecheck; do
        if [ $tool = racecheck ]; then tests="cuda_device_chain"; else tests="cuda variants_resize variants_box_ring_strips"; fi
        TSR_TEST_SANITIZER=1 timeout 300 compute-sanitizer --tool $tool --error-exitcode 9 ./build/tessera-tests $tests \
            >"$OUT/sanitizer-$tool.log" 2>&1
        echo "compute-sanitizer $tool: exit $? ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitizer-$tool.log" | tail -n 1))"
    done
fi
# Optional (PUZZLE=1): the puzzle benchmark on the GPU (432 pieces of the photos in
# TSR_PUZZLE_IMAGES, 10,000 and 20,000 pieces, 10,000 with rotation) and the end-to-end times of
# `tessera puzzle solve` on 432 pieces (known orientation and rotation, auto and cuda backends).
if [ "${PUZZLE:-0}" = 1 ]; then
    mkdir -p "$OUT/puzzle"
    TSR_PUZZLE_BENCH=1 TSR_PUZZLE_BENCH_BIG=2 TSR_PUZZLE_BENCH_SAVE="$OUT/puzzle" timeout 300 \
        ./build/tessera-tests puzzle_bench >"$OUT/puzzle-bench.log" 2>&1
    echo "puzzle benchmark: exit $?"
    grep -E "^backend|mean|retina" "$OUT/puzzle-bench.log"
    img="${TSR_PUZZLE_IMAGES:-/work/shared/images}/retina.jpg"
    if [ -f "$img" ]; then
        ./build/tessera resize "$img" "$OUT/puzzle/r672.png" --width 672 --height 504 >/dev/null 2>&1
        for rot in "" --rotate; do
            ./build/tessera puzzle scramble "$OUT/puzzle/r672.png" "$OUT/puzzle/scr$rot.png" --tile 28 --seed 5 $rot >/dev/null 2>&1
            for be in auto cuda; do
                for k in 1 2 3; do
                    s=$EPOCHREALTIME
                    ./build/tessera --backend $be puzzle solve "$OUT/puzzle/scr$rot.png" "$OUT/puzzle/sol.png" --tile 28 $rot \
                        >>"$OUT/puzzle-e2e.log" 2>&1
                    e=$EPOCHREALTIME
                    echo "432 pieces ${rot:-known} backend=$be run $k: $(awk "BEGIN{printf \"%.3f\", $e - $s}") s"
                done
            done
        done | tee -a "$OUT/puzzle-e2e.log"
    fi
fi
# Optional (DEBAND=1): the deband GPU benchmark (kernels against the copy, the y4m pipe).
if [ "${DEBAND:-0}" = 1 ]; then
    timeout 240 bash bench/deband_bench.sh gpu >"$OUT/deband-bench.log" 2>&1
    echo "deband benchmark: exit $?"
    grep -E "^\|" "$OUT/deband-bench.log" | head -40
fi
