#!/usr/bin/env bash
# The whole test suite: C unit tests (every variant against the reference), OpenCV conformance,
# and the command-line scripts tests/*_cli.sh. Each stage ends with "NAME: N passed, N failed,
# N skipped"; the totals are the last line. Exit status 1 if anything failed.
set -u
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-$( [ -x /usr/bin/python3 ] && echo /usr/bin/python3 || echo python3 )}
BUILD=${BUILD:-build}
export TSR_BIN="$PWD/$BUILD/tessera" TSR_LIB="$PWD/$BUILD/libtessera.so"
passed=0 failed=0 skipped=0 broken=""

# Run one stage, show its output, and add its closing counts.
stage() {
    local name=$1; shift
    local log; log=$(mktemp)
    echo "== $name"
    "$@" 2>&1 | tee "$log"
    local rc=${PIPESTATUS[0]}
    local line; line=$(grep -E '[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
    rm -f "$log"
    if [ -z "$line" ]; then
        broken="$broken $name"; failed=$((failed + 1))
        echo "$name: ended (exit $rc) without its counts" >&2
        return
    fi
    local p f s
    p=$(sed -E 's/.* ([0-9]+) passed.*/\1/' <<<"$line")
    f=$(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$line")
    s=$(grep -oE '[0-9]+ skipped' <<<"$line" | grep -oE '[0-9]+' || echo 0)
    passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + ${s:-0}))
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then broken="$broken $name"; failed=$((failed + 1)); fi
}

stage unit "$BUILD/tessera-tests"
stage conformance "$PYTHON" tests/conformance.py ${TSR_QUICK:+--quick}
for t in tests/*_cli.sh; do
    [ -e "$t" ] || continue
    stage "$(basename "$t" .sh)" bash "$t"
done
[ -n "$broken" ] && echo "stages that broke:$broken"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
