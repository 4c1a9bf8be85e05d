#!/usr/bin/env bash
# make bench: the CPU table (tessera beside OpenCV, same image, same cores), then the GPU table
# (CUDA events, copy bandwidth and NPP in the same run) when a GPU is usable.
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
PYTHON=${PYTHON:-python3}
TSR_LIB=$PWD/$BUILD/libtessera.so "$PYTHON" bench/bench.py "$@"
if [ -x "$BUILD/tessera-bench-cuda" ]; then
    if "$BUILD/tessera" list | grep -q "^CUDA: .*sm_"; then
        echo
        "$BUILD/tessera-bench-cuda"
    else
        echo "GPU benchmark skipped: no usable CUDA device"
    fi
fi
