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
grep -E "copy|invert|box|threshold|sums|gray|resize" "$OUT/bench-gpu.log" | head -60
if command -v compute-sanitizer >/dev/null; then
    # memcheck and initcheck over the GPU-specific tests; racecheck (much slower) over the
    # device chain only.
    for tool in memcheck initcheck racecheck; do
        if [ $tool = racecheck ]; then tests="cuda_device_chain"; else tests="cuda"; fi
        TSR_TEST_SANITIZER=1 timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 ./build/tessera-tests $tests \
            >"$OUT/sanitizer-$tool.log" 2>&1
        echo "compute-sanitizer $tool: exit $? ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitizer-$tool.log" | tail -n 1))"
    done
fi
