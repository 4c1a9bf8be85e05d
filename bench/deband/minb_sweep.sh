#!/usr/bin/env bash
# deband vec/staged register-cap sweep (GPU machine): rebuild the library per setting of
# TSR_DBV_MINB / TSR_DBS_MINB and time the kernels with deband_tool (docs/deband.md).
set -u
cd "$(dirname "$0")/../.."
for cfg in "8 4" "10 5" "12 6" "16 8"; do
  set -- $cfg
  touch src/cuda/deband.cu
  make -j16 CUDA_ARCHS=90 VIEW_X11=0 EXTRA_NVFLAGS="-DTSR_DBV_MINB=$1 -DTSR_DBS_MINB=$2" build/libtessera.a >/dev/null 2>&1 || { echo build failed; exit 1; }
  cc -O2 -std=c11 -D_GNU_SOURCE -DTSR_HAVE_CUDA=1 -Iinclude -c bench/deband/deband_tool.c -o /tmp/tool.o && c++ -o /tmp/tool /tmp/tool.o build/libtessera.a -L/usr/local/cuda/lib64 -lcudart_static -ldl -lrt -lpthread -lm
  echo "== vec minb $1, staged minb $2"; /tmp/tool gpu 3840 2160 50 | grep -E "vec|staged"
done
