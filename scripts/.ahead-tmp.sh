set -u
make -j16 CUDA_ARCHS=90 build/tessera-bench-cuda > $OUT/build.log 2>&1 || { tail $OUT/build.log; exit 1; }
for a in 2 6 8 12; do
  rm -rf build-a$a; cp -a build build-a$a; rm -f build-a$a/obj/src/cuda/box.o build-a$a/tessera-bench-cuda
  ( make -j2 CUDA_ARCHS=90 BUILD=build-a$a EXTRA_NVFLAGS=-DTSR_RN_AHEAD=$a build-a$a/tessera-bench-cuda > $OUT/build-a$a.log 2>&1 || echo "build a$a failed" ) &
done
wait
ln -sfn build build-a4
for a in 2 4 6 8 12; do
  echo "=== AHEAD=$a"
  ./build-a$a/tessera-bench-cuda --ring --no-table 2>&1 | grep -E '^(box|threshold)|^== '
done > $OUT/ahead.txt
grep -c . $OUT/ahead.txt
