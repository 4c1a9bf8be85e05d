#!/usr/bin/env bash
# Reliability of the command line: a broken pipe, SIGINT and SIGTERM during a long run, a full
# disk (a 64 KiB tmpfs when mount is allowed, and /dev/full for standard output), an output
# whose parent is a file, empty and garbage standard input, and the pixel limit. Each case: no
# crash (no exit by SIGSEGV/SIGABRT), no hang (bounded by timeout), at most one line on stderr,
# and no partial or temporary file left behind. Ends with "reliability: N passed, ...".
set -u
cd "$(dirname "$0")/.."
T=${TSR_BIN:-$PWD/build/tessera}
IMG=$PWD/data/images
W=$(mktemp -d)
mounted=""
trap '[ -n "$mounted" ] && umount "$mounted" 2>/dev/null; rm -rf "$W"' EXIT
passed=0 failed=0 skipped=0

pass() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL $*"; }
# check NAME RC WANT_RCS ERRFILE: rc is one of WANT_RCS (space separated) and ERRFILE has at most one line.
check() {
    local name=$1 rc=$2 want=$3 err=$4 lines
    lines=$(wc -l <"$err")
    if [[ " $want " != *" $rc "* ]]; then fail "$name: exit $rc (wanted one of: $want): $(head -c 300 "$err")"
    elif [ "$lines" -gt 1 ]; then fail "$name: $lines lines on stderr: $(head -c 300 "$err")"
    else pass; fi
}
# only FOLDER N: the folder holds exactly N entries (hidden temporary files included).
only() { [ "$(ls -A "$1" | wc -l)" -eq "$2" ]; }

# A 3000x3000 gray image of noise (9 MB as PGM): large enough that its output fills any pipe.
{ printf 'P5\n3000 3000\n255\n'; head -c 9000000 /dev/urandom; } >"$W/big.pgm"

# Broken pipe: the reader goes away after 10 bytes. Exit 1 with one line, no crash, no hang.
timeout 60 "$T" --quiet invert "$W/big.pgm" -.pgm 2>"$W/err" | head -c 10 >/dev/null
check "invert to a closed pipe" "${PIPESTATUS[0]}" "1" "$W/err"
grep -q "broken pipe" "$W/err" || fail "invert to a closed pipe: message '$(cat "$W/err")' does not say broken pipe"
# 200000 columns: some 1.4 MB of text, more than a pipe holds, so the writer must see EPIPE.
{ printf 'P5\n200000 10\n255\n'; head -c 2000000 /dev/urandom; } >"$W/wide.pgm"
timeout 60 "$T" --quiet sums --axis columns "$W/wide.pgm" - 2>"$W/err" | head -c 10 >/dev/null
check "sums text to a closed pipe" "${PIPESTATUS[0]}" "1" "$W/err"

# SIGINT and SIGTERM during a long run. Background jobs of a script start with SIGINT ignored;
# with_sigint restores the default, as an interactive shell would for Ctrl-C.
PY=${PYTHON:-python3}
# (An array, not a function: $! must be the process that becomes tessera, not a subshell.)
with_sigint=("$PY" -c 'import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execvp(sys.argv[1], sys.argv[1:])')
# (1) While a filter computes (the reference box is slow on 9 megapixels): the process dies of
# the signal (or had finished) and leaves neither output nor temporary file.
for sig in INT TERM; do
    mkdir -p "$W/sig"
    "${with_sigint[@]}" "$T" --quiet --variant reference box --radius 20 "$W/big.pgm" "$W/sig/out.png" 2>"$W/err" &
    pid=$!
    sleep 0.5
    kill -s $sig $pid 2>/dev/null
    wait $pid; rc=$?
    check "SIG$sig during box" "$rc" "$([ $sig = INT ] && echo 130 || echo 143) 0" "$W/err"
    if [ "$rc" -eq 0 ]; then only "$W/sig" 1 || fail "SIG$sig: finished run left extra files"
    else only "$W/sig" 0 || fail "SIG$sig during box left files: $(ls -A "$W/sig")"; fi
    rm -rf "$W/sig"
done
# (2) In the middle of writing a stream: deband's output file is being written while its input
# (a pipe) waits for more frames; the signal must remove the temporary output file.
{ printf 'YUV4MPEG2 W64 H48 C420\n'; for i in 1 2 3; do printf 'FRAME\n'; head -c 4608 /dev/urandom; done; } >"$W/v.y4m"
for sig in INT TERM; do
    mkdir -p "$W/sig"
    { cat "$W/v.y4m"; sleep 5; } | "${with_sigint[@]}" "$T" --quiet deband - "$W/sig/out.y4m" 2>"$W/err" &
    pid=$!
    sleep 1
    kill -s $sig $pid 2>/dev/null
    wait $pid; rc=$?
    check "SIG$sig while deband writes" "$rc" "$([ $sig = INT ] && echo 130 || echo 143)" "$W/err"
    only "$W/sig" 0 || fail "SIG$sig while deband writes left files: $(ls -A "$W/sig")"
    rm -rf "$W/sig"
done

# A full disk: a 64 KiB tmpfs (root in a container may mount one), and /dev/full as stdout.
mkdir "$W/full"
if mount -t tmpfs -o size=64k tmpfs "$W/full" 2>/dev/null; then
    mounted=$W/full
    for ext in png pgm bmp jpg; do
        "$T" --quiet invert "$W/big.pgm" "$W/full/out.$ext" 2>"$W/err"
        check "disk full, .$ext" $? "1" "$W/err"
        grep -q "No space left" "$W/err" || fail "disk full, .$ext: message '$(cat "$W/err")'"
        only "$W/full" 0 || fail "disk full, .$ext: left $(ls -A "$W/full")"
    done
    umount "$W/full" && mounted=""
else
    echo "SKIP disk full on a tmpfs: mount is not allowed here (the unit test test_limits_write_file_too_large covers a write failing midway)"
    skipped=$((skipped + 1))
fi
"$T" --quiet invert "$IMG/camera.png" - >/dev/full 2>"$W/err"
check "stdout is /dev/full" $? "1" "$W/err"
grep -q "No space left" "$W/err" || fail "stdout is /dev/full: message '$(cat "$W/err")'"

# The output's parent is a file: exit 1, one line, nothing created.
mkdir "$W/p" && touch "$W/p/file"
"$T" --quiet invert "$IMG/camera.png" "$W/p/file/out.png" 2>"$W/err"
check "parent is a file" $? "1" "$W/err"
only "$W/p" 1 || fail "parent is a file: left $(ls -A "$W/p")"

# Standard input: empty, garbage, an endless stream of zeros (refused from its first bytes).
"$T" --quiet invert - "$W/o.png" </dev/null 2>"$W/err"
check "empty stdin" $? "3" "$W/err"
head -c 100000 /dev/urandom | "$T" --quiet invert - "$W/o.png" 2>"$W/err"
check "garbage stdin" $? "3" "$W/err"
timeout 20 "$T" --quiet invert - "$W/o.png" </dev/zero 2>"$W/err"
check "endless zeros on stdin" $? "3" "$W/err"
# An endless stream that looks like a PGM: refused at the input size limit (16 bytes per
# pixel of TSR_MAX_PIXELS, plus 16 MiB), not read until memory runs out.
yes P5 | TSR_MAX_PIXELS=1000 timeout 20 "$T" --quiet invert - "$W/o.png" 2>"$W/err"
check "endless PGM-like stream" "${PIPESTATUS[1]}" "3" "$W/err"
grep -q "input longer than" "$W/err" || fail "endless PGM-like stream: message '$(cat "$W/err")'"
[ -e "$W/o.png" ] && fail "stdin cases created an output"

# The pixel limit from the environment: a 512x512 image over a 1000-pixel limit.
TSR_MAX_PIXELS=1000 "$T" --quiet invert "$IMG/camera.png" "$W/o.png" 2>"$W/err"
check "TSR_MAX_PIXELS=1000" $? "3" "$W/err"
grep -q "over the limit" "$W/err" || fail "TSR_MAX_PIXELS: message '$(cat "$W/err")'"

echo "reliability: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
