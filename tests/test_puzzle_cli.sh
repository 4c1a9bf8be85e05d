#!/usr/bin/env bash
# CLI tests of 'tessera puzzle': scramble/solve/score round trips, cropping, bad input and exit
# codes. TSR_BIN (or TESSERA) names the binary (default build/tessera); photos come from TSR_PUZZLE_PHOTOS
# (default /work/shared/images) and are skipped when absent. Last line:
# "puzzle-cli: N passed, N failed, N skipped"; exit status 1 if any failed.
set -u
T=${TSR_BIN:-${TESSERA:-build/tessera}}
PHOTOS=${TSR_PUZZLE_PHOTOS:-/work/shared/images}
D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT
pass=0 fail=0 skip=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "  FAIL $*" >&2; }
skp() { skip=$((skip + 1)); echo "  SKIP $*" >&2; }
# expect CODE NAME -- command...: run, check the exit status, keep stderr in $D/err
expect() {
    local code=$1 name=$2 rc
    shift 3
    "$@" >"$D/out" 2>"$D/err"
    rc=$?
    if [ "$rc" = "$code" ]; then ok; else bad "$name: exit $rc, expected $code: $(head -c 300 "$D/err")"; fi
}
# A smooth colour test image (binary PPM) of W x H pixels.
mkppm() {
    LC_ALL=C awk -v w="$1" -v h="$2" -v f="$3" 'BEGIN {
        printf "P6\n%d %d\n255\n", w, h
        for (y = 0; y < h; y++) for (x = 0; x < w; x++) {
            a = sin(x / 13 + f) * cos(y / 17); b = sin((x + 2 * y) / 23 + f * 0.3); c = cos((x - y) / 19) * sin(y / 7 + f)
            printf "%c%c%c", int(128 + 70 * a + 30 * c), int(128 + 80 * b), int(128 + 50 * c + 40 * a * b)
        } }' >"$4"
}
[ -x "$T" ] || { echo "puzzle-cli: no binary at $T" >&2; echo "puzzle-cli: 0 passed, 1 failed, 0 skipped"; exit 1; }

mkppm 96 96 1 "$D/img.ppm"
# exact round trip on 3x3 (auto picks the exact search)
expect 0 "scramble 3x3" -- "$T" puzzle scramble --grid 3x3 --seed 5 "$D/img.ppm" "$D/scr.png"
[ -s "$D/scr.png" ] && [ -s "$D/scr.json" ] && ok || bad "scramble wrote no image or JSON"
expect 0 "solve 3x3" -- "$T" --quiet puzzle solve --grid 3x3 "$D/scr.png" "$D/sol.png"
grep -q '"exact": true' "$D/sol.json" && ok || bad "3x3 solution not marked exact"
expect 0 "score 3x3" -- "$T" puzzle score "$D/sol.json" "$D/scr.json"
grep -q '^direct: 100.00%' "$D/out" && grep -q '^neighbor: 100.00%' "$D/out" && ok || bad "3x3 not solved: $(cat "$D/out")"
# pixels of the restored image equal the original's (both decoded to PPM by a CPU command)
"$T" --backend cpu --quiet invert "$D/img.ppm" "$D/a.ppm" && "$T" --backend cpu --quiet invert "$D/sol.png" "$D/b.ppm" &&
    [ -s "$D/a.ppm" ] && cmp -s "$D/a.ppm" "$D/b.ppm" && ok || bad "restored image differs from the original"
# --tile that does not divide the image: crop, say so, carry on
expect 0 "tile crop" -- "$T" puzzle scramble --tile 40 "$D/img.ppm" "$D/crop.png"
grep -q 'using the top-left 80x80' "$D/err" && ok || bad "no crop message: $(cat "$D/err")"
grep -q '"rows": 2' "$D/crop.json" && ok || bad "crop grid wrong"
# the same by --tile and by --grid, JSON appended when OUT has no extension
expect 0 "tile 32" -- "$T" puzzle scramble --tile 32 --seed 9 --rotate "$D/img.ppm" "$D/t32.png"
expect 0 "solve rotate" -- "$T" --quiet puzzle solve --tile 32 --rotate "$D/t32.png" "$D/t32s.png"
expect 0 "score rotate" -- "$T" puzzle score "$D/t32s.json" "$D/t32.json"
grep -q '^neighbor: 100.00%' "$D/out" && ok || bad "3x3 rotation not solved: $(cat "$D/out")"
# 1x1: nothing to solve, still an answer
expect 0 "1x1" -- "$T" puzzle scramble --grid 1x1 "$D/img.ppm" "$D/one.png"
expect 0 "1x1 solve" -- "$T" puzzle solve --grid 1x1 "$D/one.png" "$D/one_s.png"
grep -q 'one piece' "$D/err" && ok || bad "1x1 message missing"
# bad command lines: exit 2 with one line
expect 2 "no grid" -- "$T" puzzle solve "$D/scr.png" "$D/x.png"
[ "$(wc -l <"$D/err")" = 1 ] && ok || bad "error is not one line: $(cat "$D/err")"
expect 2 "bad grid" -- "$T" puzzle solve --grid 3by3 "$D/scr.png" "$D/x.png"
expect 2 "tile and grid" -- "$T" puzzle solve --grid 3x3 --tile 32 "$D/scr.png" "$D/x.png"
expect 2 "unknown sub" -- "$T" puzzle shuffle "$D/scr.png" "$D/x.png"
expect 2 "unknown method" -- "$T" puzzle solve --grid 3x3 --method magic "$D/scr.png" "$D/x.png"
expect 2 "score arity" -- "$T" puzzle score "$D/sol.json"
expect 4 "exact too big" -- "$T" puzzle solve --grid 6x6 --rotate --method exact "$D/img.ppm" "$D/x.png"
expect 3 "too small" -- "$T" puzzle scramble --grid 200x200 "$D/img.ppm" "$D/x.png"
# malformed JSON: exit 3, one line naming line and column
printf '{\n  "rows": 3,\n  "cols": 3\n  "cells": []\n}\n' >"$D/bad.json"
expect 3 "malformed json" -- "$T" puzzle score "$D/bad.json" "$D/scr.json"
grep -q 'line 4, column 3' "$D/err" && [ "$(wc -l <"$D/err")" = 1 ] && ok || bad "malformed JSON message: $(cat "$D/err")"
printf '{"rows": 3, "cols": 3, "cells": [[0,0],[0,0],[2,0],[3,0],[4,0],[5,0],[6,0],[7,0],[8,0]]}' >"$D/dup.json"
expect 3 "duplicate tile" -- "$T" puzzle score "$D/dup.json" "$D/scr.json"
expect 1 "missing json" -- "$T" puzzle score "$D/none.json" "$D/scr.json"
expect 3 "grid mismatch" -- "$T" puzzle score "$D/crop.json" "$D/scr.json"
# blank image: identical tiles solve without trouble
LC_ALL=C awk 'BEGIN { printf "P5\n64 64\n255\n"; for (i = 0; i < 4096; i++) printf "%c", 90 }' >"$D/blank.pgm"
expect 0 "blank" -- "$T" --quiet puzzle solve --tile 8 --rotate "$D/blank.pgm" "$D/blank.png"
# ... and score 100% by pixels, whatever their identities (given the scrambled image)
expect 0 "blank scramble" -- "$T" puzzle scramble --tile 8 --rotate --seed 4 "$D/blank.pgm" "$D/bls.png"
expect 0 "blank solve" -- "$T" --quiet puzzle solve --tile 8 --rotate "$D/bls.png" "$D/blsol.png"
expect 0 "score by pixels" -- "$T" puzzle score "$D/blsol.json" "$D/bls.json" "$D/bls.png"
grep -q '^tiles with a pixel-identical twin: 64$' "$D/out" &&
    grep -q '^by pixels: direct 100.00%, neighbor 100.00%, direct after shift 100.00%$' "$D/out" && ok ||
    bad "blank puzzle by pixels: $(cat "$D/out")"
expect 3 "score image of another grid" -- "$T" puzzle score "$D/blsol.json" "$D/bls.json" "$D/img.ppm"
grep -q "scrambled image's tiles are 12 pixels, the placement's 8" "$D/err" && [ "$(wc -l <"$D/err")" = 1 ] && ok || bad "image grid message: $(cat "$D/err")"
expect 2 "score arity 4" -- "$T" puzzle score "$D/blsol.json" "$D/bls.json" "$D/bls.png" "$D/x.png"
# a real photo: 18x18 pieces of 28 pixels, greedy solver
if [ -f "$PHOTOS/astronaut.png" ]; then
    expect 0 "photo scramble" -- "$T" puzzle scramble --tile 28 --seed 3 "$PHOTOS/astronaut.png" "$D/ph.png"
    grep -q 'using the top-left 504x504' "$D/err" && ok || bad "photo crop message"
    expect 0 "photo solve" -- "$T" --quiet puzzle solve --tile 28 "$D/ph.png" "$D/phs.png"
    expect 0 "photo score" -- "$T" puzzle score "$D/phs.json" "$D/ph.json"
    nb=$(sed -n 's/^neighbor: \([0-9]*\).*/\1/p' "$D/out")
    [ "${nb:-0}" -ge 85 ] && ok || bad "photo neighbor accuracy ${nb:-?}% < 85%"
else
    skp "photos: no $PHOTOS/astronaut.png"
fi
echo "puzzle-cli: $pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
