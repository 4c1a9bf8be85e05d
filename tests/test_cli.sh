#!/usr/bin/env bash
# Command-line tests: help, list, every operation on a real image, exit codes, one-line errors,
# and that no failure leaves a partial or replaced output file. Ends with "cli: N passed, ...".
set -u
cd "$(dirname "$0")/.."
T=${TSR_BIN:-$PWD/build/tessera}
IMG=$PWD/data/images
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
. "$PWD/tests/lib.sh"

# Help and discovery.
"$T" --help | grep -q "exit codes"; ok "--help lists exit codes" $?
"$T" --version | grep -q "^tessera "; ok "--version" $?
for op in invert box threshold sums gray resize; do
    "$T" $op --help | grep -q "^usage: tessera $op"; ok "$op --help" $?
    "$T" help $op | grep -q "^usage: tessera $op"; ok "help $op" $?
done
"$T" box --help | grep -q -- "--border reflect101|replicate|reflect|constant"; ok "box --help shows the border choices" $?
"$T" list | grep -q "running"; ok "list shows variants" $?
"$T" info "$IMG/coffee.png" | grep -q "png 600x400, 3 channels, 8-bit"; ok "info coffee.png" $?
"$T" info - <"$IMG/camera.png" | grep -q "^-: png 512x512, 1 channel, 8-bit"; ok "info - reads standard input" $?
echo hello | "$T" info - 2>"$W/err.txt"; [ $? -ne 0 ] && grep -q "<stdin>: not a PNG" "$W/err.txt"; ok "info - names a non-image stdin" $?

# Every operation on real images, each compared with a second variant where there is one.
"$T" --quiet invert "$IMG/camera.png" "$W/inv.png" && "$T" --quiet invert "$W/inv.png" "$W/inv2.pgm" &&
    "$T" --quiet invert "$IMG/camera.png" "$W/inv.pgm"; ok "invert runs" $?
"$T" --quiet --variant reference invert "$IMG/camera.png" "$W/inv-ref.pgm" && cmp -s "$W/inv.pgm" "$W/inv-ref.pgm"
ok "invert: default equals reference" $?
"$T" --quiet invert "$W/inv.png" "$W/back.pgm" && "$T" --quiet invert "$W/back.pgm" "$W/back2.pgm" &&
    cmp -s "$W/inv.pgm" "$W/back2.pgm"; ok "invert twice is the identity through PNG and PGM" $?
for b in reflect101 replicate reflect constant; do
    "$T" --quiet box --radius 7 --border $b --value 9 "$IMG/coffee.png" "$W/box.ppm" &&
        "$T" --quiet box --variant reference --radius 7 --border $b --value 9 "$IMG/coffee.png" "$W/box-ref.ppm" &&
        cmp -s "$W/box.ppm" "$W/box-ref.ppm"
    ok "box --border $b: default equals reference" $?
done
"$T" --quiet box --radius-x 3 --radius-y 0 "$IMG/camera.png" "$W/boxx.png"; ok "box per-axis radii" $?
"$T" --quiet threshold --block 15 --c 5 "$IMG/page.png" "$W/th.pgm" &&
    TSR_VARIANT_THRESHOLD=reference "$T" --quiet threshold --block 15 --c 5 "$IMG/page.png" "$W/th-ref.pgm" &&
    cmp -s "$W/th.pgm" "$W/th-ref.pgm"; ok "threshold: default equals reference (TSR_VARIANT_THRESHOLD)" $?
"$T" --quiet threshold --block 15 --c 2.5 --inverse --maxval 200 "$IMG/text.png" "$W/thi.png"; ok "threshold --inverse" $?
"$T" --quiet sums --axis columns "$IMG/camera.png" "$W/cols.txt" && [ "$(wc -l <"$W/cols.txt")" -eq 512 ]
ok "sums columns: one line per column" $?
"$T" --quiet sums --axis rows "$IMG/coffee.png" - | awk 'NF != 3 { bad = 1 } END { exit bad || NR != 400 }'
ok "sums rows to stdout: 400 lines of 3 channel sums" $?
"$T" --quiet gray "$IMG/coffee.png" "$W/gray.png" && "$T" info "$W/gray.png" | grep -q "1 channel, 8-bit"
ok "gray gives one channel" $?
"$T" --quiet resize --width 200 --height 100 "$IMG/coffee.png" "$W/small.jpg" && "$T" info "$W/small.jpg" | grep -q "200x100"
ok "resize to JPEG" $?
"$T" --time --threads 1 box --radius 3 "$IMG/camera.png" "$W/t.png" 2>"$W/time.txt" &&
    grep -q "decode .* upload .* kernel .* download .* encode" "$W/time.txt" && grep -q "ran on \(cpu\|cuda\)" "$W/time.txt"
ok "--time splits the stages and the backend is reported" $?
cat "$IMG/camera.png" | "$T" --quiet invert - - >"$W/pipe.png" && "$T" info "$W/pipe.png" | grep -q "512x512"
ok "stdin to stdout" $?

# Errors: exit code, one line, no output file left behind, an existing file untouched.
expect_fail "missing input" 1 "$T" invert "$W/none.png" "$W/x.png"
[ ! -e "$W/x.png" ]; ok "missing input leaves no output" $?
printf 'P5\n99999 99999\n255\n' >"$W/bomb.pgm"
expect_fail "oversized input" 3 "$T" invert "$W/bomb.pgm" "$W/x.png"
head -c 3000 "$IMG/camera.png" >"$W/trunc.png"
expect_fail "truncated PNG" 3 "$T" invert "$W/trunc.png" "$W/x.png"
echo "not an image" >"$W/garbage.png"
expect_fail "garbage input" 3 "$T" invert "$W/garbage.png" "$W/x.png"
[ ! -e "$W/x.png" ]; ok "failed inputs leave no output" $?
expect_fail "bad integer" 2 "$T" box --radius 3x "$IMG/camera.png" "$W/x.png"
expect_fail "out of range" 2 "$T" box --radius -2 "$IMG/camera.png" "$W/x.png"
expect_fail "bad choice" 2 "$T" box --border mirror "$IMG/camera.png" "$W/x.png"
expect_fail "even block" 2 "$T" threshold --block 4 --c 1 "$IMG/page.png" "$W/x.png"
expect_fail "missing required" 2 "$T" threshold --c 1 "$IMG/page.png" "$W/x.png"
expect_fail "unknown option" 2 "$T" invert --bogus "$IMG/page.png" "$W/x.png"
expect_fail "unknown command" 2 "$T" frobnicate
grep -q "unknown command 'frobnicate' (see" "$W/err.txt"; ok "no hint for a word far from every command" $?
expect_fail "misspelt command" 2 "$T" treshold --block 5 --c 1 "$IMG/page.png" "$W/x.png"
grep -q "did you mean 'threshold'?" "$W/err.txt"; ok "a misspelt command names the command meant" $?
expect_fail "misspelt option" 2 "$T" box --raduis 3 "$IMG/page.png" "$W/x.png"
grep -q "unknown option '--raduis'; did you mean '--radius'?" "$W/err.txt"; ok "a misspelt option names the option meant" $?
expect_fail "misspelt common option" 2 "$T" invert --therads 2 "$IMG/page.png" "$W/x.png"
grep -q "did you mean '--threads'?" "$W/err.txt"; ok "a misspelt common option names it" $?
expect_fail "too few files" 2 "$T" invert "$IMG/page.png"
# Output encoding: --png-level trades size for time with the same pixels, --quality sets JPEG's;
# both before or after the command, range-checked, one prefix in the message.
"$T" --quiet --png-level 1 invert "$IMG/camera.png" "$W/l1.png" && "$T" --quiet invert --png-level 9 "$IMG/camera.png" "$W/l9.png" &&
    [ "$(stat -c %s "$W/l1.png")" -gt "$(stat -c %s "$W/l9.png")" ] &&
    "$T" --quiet box --radius 0 "$W/l1.png" "$W/l1.pgm" && "$T" --quiet box --radius 0 "$W/l9.png" "$W/l9.pgm" &&
    cmp -s "$W/l1.pgm" "$W/l9.pgm"; ok "--png-level 1 writes a larger file than 9, with the same pixels" $?
"$T" --quiet --quality 30 invert "$IMG/rocket.jpg" "$W/q30.jpg" && "$T" --quiet invert "$IMG/rocket.jpg" "$W/q95.jpg" &&
    [ "$(stat -c %s "$W/q30.jpg")" -lt "$(stat -c %s "$W/q95.jpg")" ]; ok "--quality 30 writes a smaller JPEG than the default" $?
expect_fail "quality out of range" 2 "$T" invert --quality 101 "$IMG/page.png" "$W/x.jpg"
grep -q "^tessera: invert: --quality needs an integer from 1 to 100, got '101'" "$W/err.txt"; ok "--quality's range named" $?
expect_fail "png level out of range before the command" 2 "$T" --png-level 0 invert "$IMG/page.png" "$W/x.png"
grep -q "^tessera: --png-level needs an integer from 1 to 9, got '0'" "$W/err.txt"; ok "an option before the command: one prefix" $?
expect_fail "unknown variant" 2 "$T" box --variant nosuch "$IMG/page.png" "$W/x.png"
grep -q "^tessera: box: no variant named 'nosuch' (cpu: reference, running" "$W/err.txt"; ok "an unknown variant lists the names there are" $?
expect_fail "threshold on RGB" 4 "$T" threshold --block 5 --c 1 "$IMG/coffee.png" "$W/x.png"
expect_fail "upscaling resize" 4 "$T" resize --width 2000 --height 10 "$IMG/coffee.png" "$W/x.png"
expect_fail "unknown extension" 2 "$T" invert "$IMG/page.png" "$W/x.xyz"
[ ! -e "$W/x.png" ] && [ ! -e "$W/x.xyz" ]; ok "bad arguments leave no output" $?
cp "$IMG/page.png" "$W/keep.png"
expect_fail "missing input over an existing output" 1 "$T" invert "$W/nothing.png" "$W/keep.png"
cmp -s "$IMG/page.png" "$W/keep.png"; ok "an existing output survives a failed read" $?
# A 4x4 RGBA PNG (every sample 100), written by hand so that this script needs no Python packages.
echo iVBORw0KGgoAAAANSUhEUgAAAAQAAAAECAYAAACp8Z5+AAAAD0lEQVR4nGNIQQMMpAsAAFJxGQFTrHnKAAAAAElFTkSuQmCC | base64 -d > "$W/rgba.png"
cp "$IMG/rocket.jpg" "$W/keep.jpg"
expect_fail "JPEG cannot hold alpha" 4 "$T" invert "$W/rgba.png" "$W/keep.jpg"
cmp -s "$IMG/rocket.jpg" "$W/keep.jpg"; ok "an existing output survives a failed write" $?
[ -z "$(ls "$W" | grep tessera-)" ]; ok "no temporary files left" $?
# An existing OUT that is not a regular file is written in place, never replaced by a file: a
# FIFO (its reader gets the image or the text), and device nodes made here (root only).
mkfifo "$W/fifo"
{ timeout 60 cat "$W/fifo" > "$W/fifo.png"; } &
reader=$!
"$T" --quiet invert "$IMG/page.png" "$W/fifo"; rc=$?
wait $reader
"$T" --quiet invert "$IMG/page.png" "$W/direct.png"
[ $rc = 0 ] && [ -p "$W/fifo" ] && cmp -s "$W/fifo.png" "$W/direct.png"; ok "an image into an existing FIFO" $?
{ timeout 60 cat "$W/fifo" > "$W/fifo.txt"; } &
reader=$!
"$T" --quiet sums --axis rows "$IMG/page.png" "$W/fifo"; rc=$?
wait $reader
"$T" --quiet sums --axis rows "$IMG/page.png" "$W/direct.txt"
[ $rc = 0 ] && [ -p "$W/fifo" ] && cmp -s "$W/fifo.txt" "$W/direct.txt"; ok "text into an existing FIFO" $?
if mknod "$W/full" c 1 7 2>/dev/null && mknod "$W/null" c 1 3 2>/dev/null && : 2>/dev/null >"$W/null"; then
    expect_fail "an image into a full device" 1 "$T" --quiet invert "$IMG/page.png" "$W/full"
    "$T" --quiet invert "$IMG/page.png" "$W/null" && "$T" --quiet sums "$IMG/page.png" "$W/null" &&
        [ -c "$W/full" ] && [ -c "$W/null" ]
    ok "device nodes as OUT are written, not replaced" $?
else
    skip "device nodes as OUT (mknod needs root and a file system that allows devices)"
fi
mkdir "$W/ro" && chmod 500 "$W/ro"
if [ "$(id -u)" = 0 ]; then skip "unwritable folder (running as root)"
else expect_fail "unwritable folder" 1 "$T" invert "$IMG/page.png" "$W/ro/x.png"; fi
if "$T" list | grep -q "^CUDA: compiled in; no usable device\|^CUDA: not compiled"; then
    expect_fail "--backend cuda without a GPU" 1 "$T" --backend cuda invert "$IMG/page.png" "$W/x.png"
    grep -q "CUDA" "$W/err.txt"; ok "the no-GPU message names CUDA" $?
    "$T" invert "$IMG/page.png" "$W/auto.png" 2>"$W/auto.txt" && grep -q "ran on cpu" "$W/auto.txt"
    ok "auto falls back to the CPU and says so" $?
else
    "$T" --backend cuda invert "$IMG/page.png" "$W/gpu.png" 2>"$W/gpu.txt" && grep -q "ran on cuda" "$W/gpu.txt"
    ok "--backend cuda runs on the GPU" $?
    "$T" --quiet --backend cpu invert "$IMG/page.png" "$W/cpu.png" && cmp -s "$W/gpu.png" "$W/cpu.png"
    ok "GPU and CPU outputs are identical" $?
fi
finish cli
