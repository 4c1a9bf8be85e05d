#!/usr/bin/env bash
# Build the libFuzzer targets (make fuzz: clang, -fsanitize=fuzzer,address,undefined) and run
# each for a bounded time from its seed corpus tests/fuzz/corpus/<target>/.
#   FUZZ_SECONDS  seconds per target (default 15; lowered so that all targets fit FUZZ_TOTAL)
#   FUZZ_TOTAL    seconds for all targets together (default 90: about 2 minutes with the build)
#   FUZZ_BUILD    build folder (default build-fuzz); FUZZ_CC compiler (default clang)
# A crash, leak, sanitizer report or timeout fails its target; the input is saved under
# $FUZZ_BUILD/artifacts/<target>/ and its path printed (copy it to tests/fuzz/regressions/<target>/
# once fixed). Without clang or libFuzzer every target is skipped with a one-line reason.
# Last line: "fuzz: N passed, N failed, N skipped"; exit status 1 if any failed.
set -u
cd "$(dirname "$0")/../.."
FUZZ_CC=${FUZZ_CC:-clang}
FUZZ_BUILD=${FUZZ_BUILD:-build-fuzz}
FUZZ_SECONDS=${FUZZ_SECONDS:-15}
FUZZ_TOTAL=${FUZZ_TOTAL:-90}
passed=0 failed=0 skipped=0
targets=()
for src in tests/fuzz/fuzz_*.c; do t=$(basename "$src" .c); targets+=("${t#fuzz_}"); done
n=${#targets[@]}
summary() { echo "fuzz: $passed passed, $failed failed, $skipped skipped"; [ "$failed" -eq 0 ]; exit $?; }

# Can this machine build a libFuzzer binary at all?
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
reason=""
if ! command -v "$FUZZ_CC" >/dev/null 2>&1; then
    reason="$FUZZ_CC not found (install clang and libclang-rt-dev: bash scripts/deps.sh fuzz)"
else
    printf '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { return 0; }\n' >"$probe/p.c"
    "$FUZZ_CC" -fsanitize=fuzzer,address,undefined "$probe/p.c" -o "$probe/p" >"$probe/log" 2>&1 ||
        reason="$FUZZ_CC cannot link -fsanitize=fuzzer,address,undefined (libFuzzer runtime missing: bash scripts/deps.sh fuzz): $(grep -m1 -i error "$probe/log")"
fi
if [ -n "$reason" ]; then
    for t in "${targets[@]}"; do echo "SKIP fuzz_$t: $reason"; skipped=$((skipped + 1)); done
    summary
fi

echo "building $n fuzz targets into $FUZZ_BUILD"
if ! make -s fuzz FUZZ_CC="$FUZZ_CC" FUZZ_BUILD="$FUZZ_BUILD" -j"$(nproc 2>/dev/null || echo 2)" >"$probe/build.log" 2>&1; then
    tail -n 20 "$probe/build.log"
    for t in "${targets[@]}"; do
        if [ -x "$FUZZ_BUILD/fuzz_$t" ] && [ "$FUZZ_BUILD/fuzz_$t" -nt "tests/fuzz/fuzz_$t.c" ]; then continue; fi
        echo "FAIL fuzz_$t: does not build (log above)"
    done
    failed=$n
    summary
fi

secs=$FUZZ_SECONDS
[ $((secs * n)) -gt "$FUZZ_TOTAL" ] && secs=$((FUZZ_TOTAL / n))
[ "$secs" -lt 1 ] && secs=1
for t in "${targets[@]}"; do
    bin=$FUZZ_BUILD/fuzz_$t seeds=tests/fuzz/corpus/$t
    work=$FUZZ_BUILD/corpus/$t art=$FUZZ_BUILD/artifacts/$t
    mkdir -p "$work" "$art"
    [ -d "$seeds" ] || seeds=""
    # New inputs go to the work corpus (kept between runs), never into the committed seeds.
    # -timeout: one input over 10 s is a hang; -rss_limit_mb: 2 GB is a memory blow-up.
    ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1} \
    UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
        "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$art/" "$work" $seeds >"$probe/$t.log" 2>&1
    rc=$?
    runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$probe/$t.log" | grep -oE '[0-9]+$' | tail -n1)
    cov=$(grep -oE 'cov: [0-9]+' "$probe/$t.log" | tail -n1)
    corp=$(ls "$work" | wc -l)
    if [ "$rc" -eq 0 ]; then
        echo "ok   fuzz_$t: ${runs:-?} executions in ${secs}s, $cov, corpus $corp"
        passed=$((passed + 1))
    else
        crash=$(grep -oE "Test unit written to [^ ]+" "$probe/$t.log" | tail -n1 | sed 's/Test unit written to //')
        grep -E "ERROR|SUMMARY|fuzz: |runtime error" "$probe/$t.log" | head -n 5
        echo "FAIL fuzz_$t: exit $rc after ${runs:-?} executions; input saved: ${crash:-none} (log: $art/last.log)"
        cp "$probe/$t.log" "$art/last.log"
        failed=$((failed + 1))
    fi
done
summary
