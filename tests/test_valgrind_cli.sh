#!/usr/bin/env bash
# A handful of small CLI runs under valgrind (memcheck): every filter family, each image
# format, text output, and the failure paths (corrupt input, bad option, unwritable output).
# A run passes when it exits with its expected status and valgrind reports no error: invalid
# reads or writes, uninitialised values, and definitely or indirectly lost memory all count
# (--errors-for-leak-kinds=definite,indirect). Skipped when valgrind is not installed.
# Ends with "valgrind-cli: N passed, N failed, N skipped".
set -u
cd "$(dirname "$0")/.."
T=${TSR_BIN:-$PWD/build/tessera}
IMG=$PWD/data/images
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
passed=0 failed=0 skipped=0
runs=11

if ! command -v valgrind >/dev/null 2>&1; then
    echo "SKIP valgrind is not installed (bash scripts/deps.sh fuzz installs it)"
    echo "valgrind-cli: 0 passed, 0 failed, $runs skipped"
    exit 0
fi

if grep -q __asan_init "$T" 2>/dev/null; then
    echo "SKIP $T is built with AddressSanitizer, which cannot run under valgrind"
    echo "valgrind-cli: 0 passed, 0 failed, $runs skipped"
    exit 0
fi

# Small inputs: valgrind runs some 30 times slower.
"$T" --quiet resize --width 64 --height 48 "$IMG/coffee.png" "$W/small.png" &&
    "$T" --quiet resize --width 64 --height 64 "$IMG/camera.png" "$W/gray.pgm" &&
    "$T" --quiet invert "$W/small.png" "$W/small.jpg" &&
    "$T" --quiet invert "$W/small.png" "$W/small.bmp" || { echo "FAIL cannot make the inputs"; exit 1; }
head -c 300 "$W/small.png" >"$W/cut.png"

# vg NAME WANT_RC ARGS...: run tessera under memcheck.
vg() {
    local name=$1 want=$2; shift 2
    valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
        --show-leak-kinds=definite,indirect --log-file="$W/vg.log" "$T" --quiet --threads 2 "$@" >"$W/out" 2>"$W/err"
    local rc=$?
    if [ "$rc" -ne "$want" ] || [ -s "$W/vg.log" ]; then
        echo "FAIL $name: exit $rc (wanted $want)"; head -n 20 "$W/vg.log"; head -n 3 "$W/err"
        failed=$((failed + 1))
    else
        passed=$((passed + 1))
    fi
}

vg "invert png -> png" 0 invert "$W/small.png" "$W/o1.png"
vg "box jpeg -> bmp, constant border" 0 box --radius 3 --border constant --value 9 "$W/small.jpg" "$W/o2.bmp"
vg "threshold pgm -> pgm" 0 threshold --block 7 --c 2 "$W/gray.pgm" "$W/o3.pgm"
vg "gray bmp -> png" 0 gray "$W/small.bmp" "$W/o4.png"
vg "sums to a text file" 0 sums --axis rows "$W/small.png" "$W/o5.txt"
vg "resize to stdout as ppm" 0 resize --width 10 --height 7 "$W/small.png" -.ppm
vg "info" 0 info "$W/small.png" "$W/small.jpg" "$W/gray.pgm" "$W/small.bmp"
vg "truncated png" 3 invert "$W/cut.png" "$W/o6.png"
vg "bad option" 2 box --radius 99999999 "$W/small.png" "$W/o7.png"
vg "unwritable output" 1 invert "$W/small.png" "$W/cut.png/o8.png"
vg "unknown input format" 3 invert "$0" "$W/o9.png"

[ $((passed + failed)) -eq "$runs" ] || echo "valgrind-cli: ran $((passed + failed)) of $runs declared runs"
echo "valgrind-cli: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
