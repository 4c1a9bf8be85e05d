#!/usr/bin/env bash
# Command-line tests of 'tessera deband': pipes and files, bit-exact backends and variants,
# errors with their exit codes, truncated streams, no partial output files.
# Prints "deband-cli: N passed, N failed, N skipped" last; exits non-zero on failure.
set -u
cd "$(dirname "$0")/.."
T=${TESSERA:-${TSR_BIN:-build/tessera}}
pass=0 fail=0 skip=0
D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
skipped() { skip=$((skip + 1)); echo "SKIP: $*"; }

if [[ ! -x $T ]]; then
    echo "deband-cli: 0 passed, 0 failed, 1 skipped ($T not built)"
    exit 0
fi

# A deterministic 4:2:0 stream of W x H, N frames, with a gentle ramp (8-bit or 16-bit LE).
make_y4m() {   # W H N TAG BYTES_PER_SAMPLE
    local w=$1 h=$2 n=$3 tag=$4 b=$5 cw=$(( ($1 + 1) / 2 )) ch=$(( ($2 + 1) / 2 ))
    printf 'YUV4MPEG2 W%d H%d F25:1 Ip A1:1 C%s\n' "$w" "$h" "$tag"
    for ((f = 0; f < n; f++)); do
        printf 'FRAME\n'
        awk -v w="$w" -v h="$h" -v cw="$cw" -v ch="$ch" -v b="$b" -v f="$f" 'BEGIN {
            for (p = 0; p < 3; p++) { pw = p ? cw : w; ph = p ? ch : h
              for (y = 0; y < ph; y++) for (x = 0; x < pw; x++) {
                v = int((60 + p * 20 + (x + y + f) * 8 / (pw + ph)) * (b == 2 ? 256 : 1)) + ((x * 7 + y * 3) % 5 == 0)
                if (b == 2) printf "%c%c", v % 256, int(v / 256); else printf "%c", v } } }'
    done
}
export LC_ALL=C

make_y4m 37 21 3 420 1 > "$D/a8.y4m"
make_y4m 37 21 3 420p10 2 > "$D/a10.y4m"

# 1. help from the parameter table
if "$T" deband --help | grep -q -- '--sample-mode' && "$T" deband --help | grep -q 'cpu  reference'; then ok
else bad "help lacks --sample-mode or the variants"; fi

# 2. file -> file and stdin -> stdout agree; the output is a y4m stream of the same shape
if "$T" --quiet deband "$D/a8.y4m" "$D/o1.y4m" && "$T" --quiet deband - - < "$D/a8.y4m" > "$D/o2.y4m" &&
   cmp -s "$D/o1.y4m" "$D/o2.y4m" && head -1 "$D/o1.y4m" | grep -q '^YUV4MPEG2 W37 H21 F25:1 Ip A1:1 C420$'; then ok
else bad "file and pipe outputs differ or bad header: $(head -1 "$D/o1.y4m")"; fi
if [[ $(stat -c %s "$D/o1.y4m") == $(stat -c %s "$D/a8.y4m") ]]; then ok; else bad "output size differs from input"; fi

# 3. 10-bit in, 8-bit out: header says C420, size matches an 8-bit stream
if "$T" --quiet deband --output-depth 8 "$D/a10.y4m" "$D/o3.y4m" && head -1 "$D/o3.y4m" | grep -q 'C420$' &&
   [[ $(stat -c %s "$D/o3.y4m") == $(stat -c %s "$D/a8.y4m") ]]; then ok; else bad "10->8 bit output"; fi
if "$T" --quiet deband --output-depth 16 "$D/a8.y4m" "$D/o4.y4m" && head -1 "$D/o4.y4m" | grep -q 'C420p16$'; then ok
else bad "8->16 bit header: $(head -1 "$D/o4.y4m")"; fi

# 4. seeds: same seed same output, another seed another output
"$T" --quiet deband --seed 5 "$D/a10.y4m" "$D/s5a.y4m" && "$T" --quiet deband --seed 5 "$D/a10.y4m" "$D/s5b.y4m"
"$T" --quiet deband --seed 6 "$D/a10.y4m" "$D/s6.y4m"
if cmp -s "$D/s5a.y4m" "$D/s5b.y4m" && ! cmp -s "$D/s5a.y4m" "$D/s6.y4m"; then ok; else bad "seed determinism"; fi

# 5. variants and backends agree bit for bit
for opts in "--sample-mode 1 --no-blur-first" "--dither ordered --output-depth 8" "--dynamic-grain --keep-tv-range"; do
    "$T" --quiet --backend cpu --variant reference deband $opts "$D/a10.y4m" "$D/r.y4m"
    "$T" --quiet --backend cpu --variant fast deband $opts "$D/a10.y4m" "$D/f.y4m"
    if cmp -s "$D/r.y4m" "$D/f.y4m"; then ok; else bad "reference and fast differ ($opts)"; fi
    if "$T" list 2>/dev/null | grep -q '^CUDA: .*compiled in; no usable' || ! "$T" --backend cuda --quiet deband "$D/a8.y4m" "$D/c.y4m" 2>/dev/null; then
        skipped "no CUDA device for ($opts)"
    else
        "$T" --quiet --backend cuda deband $opts "$D/a10.y4m" "$D/c.y4m"
        if cmp -s "$D/r.y4m" "$D/c.y4m"; then ok; else bad "cuda and reference differ ($opts)"; fi
    fi
done

# 6. errors: exit codes and one-line messages
check_err() {   # CODE NEEDLE CMD...
    local code=$1 needle=$2
    shift 2
    "$@" > "$D/out" 2> "$D/err"
    local rc=$?
    if [[ $rc == "$code" ]] && grep -q -- "$needle" "$D/err" && [[ $(wc -l < "$D/err") == 1 ]]; then ok
    else bad "$* -> rc $rc, '$(cat "$D/err")' (wanted $code, '$needle')"; fi
}
check_err 2 "--range 300 is out of range" "$T" deband --range 300 "$D/a8.y4m" "$D/x.y4m"
check_err 2 "output-depth" "$T" deband --output-depth 4 "$D/a8.y4m" "$D/x.y4m"
check_err 2 "is not one of none|ordered|floyd-steinberg" "$T" deband --dither foo "$D/a8.y4m" "$D/x.y4m"
check_err 2 "unknown option '--bogus'" "$T" deband --bogus "$D/a8.y4m" "$D/x.y4m"
check_err 2 "expected IN and OUT" "$T" deband "$D/a8.y4m"
printf 'YUV4MPEG2 W4 H4 C411\nFRAME\n' > "$D/c411.y4m"
check_err 4 "C411 is not supported" "$T" deband "$D/c411.y4m" "$D/x.y4m"
printf 'YUV4MPEG2 W4 H4 Ib C420\n' > "$D/ib.y4m"
check_err 4 "interlaced" "$T" deband "$D/ib.y4m" "$D/x.y4m"
printf 'YUV4MPEG2 W4 C420\n' > "$D/noh.y4m"
check_err 3 "without H" "$T" deband "$D/noh.y4m" "$D/x.y4m"
check_err 2 "no cpu variant named 'aos9' (cpu: reference, fast" "$T" --backend cpu --variant aos9 deband "$D/a8.y4m" "$D/x.y4m"

# 7. truncated stream: reported with its frame number, no output file, no temporary left behind
head -c $(( $(stat -c %s "$D/a8.y4m") - 100 )) "$D/a8.y4m" > "$D/trunc.y4m"
echo keep > "$D/existing.y4m"
check_err 3 "frame 2: truncated" "$T" --quiet deband "$D/trunc.y4m" "$D/existing.y4m"
if [[ $(cat "$D/existing.y4m") == keep ]] && ! ls "$D"/.tessera-* > /dev/null 2>&1; then ok
else bad "a failed run replaced the output or left a temporary file"; fi

# 8. progress on request
if "$T" --quiet deband --progress "$D/a8.y4m" "$D/p.y4m" 2>&1 | grep -q 'deband: 3 frames'; then ok; else bad "--progress"; fi

# 9. the backend line
if "$T" --backend cpu deband "$D/a8.y4m" "$D/b.y4m" 2>&1 | grep -q "deband ran on cpu (variant 'fast'"; then ok
else bad "backend line"; fi

# 9b. a y4m stream given as a named pipe (not peeked at, so nothing is lost)
if "$T" --quiet deband <(cat "$D/a10.y4m") "$D/fifo.y4m" && "$T" --quiet deband "$D/a10.y4m" "$D/nofifo.y4m" &&
   cmp -s "$D/fifo.y4m" "$D/nofifo.y4m"; then ok; else bad "named pipe input"; fi

# 10. images: RGB and gray PNG, 8-bit and 16-bit output, backends agree
if "$T" --quiet deband tests/data/deband/coffee.png "$D/c.png" && "$T" info "$D/c.png" | grep -q 'png 600x400, 3 channels, 8-bit' &&
   "$T" --quiet deband --output-depth 16 tests/data/deband/coffee.png "$D/c16.png" &&
   "$T" info "$D/c16.png" | grep -q '3 channels, 16-bit'; then ok; else bad "PNG deband"; fi
"$T" --quiet --backend cpu --variant reference deband tests/data/deband/coffee.png "$D/cr.png"
if cmp -s "$D/c.png" "$D/cr.png" || ! "$T" --quiet --backend cpu deband tests/data/deband/coffee.png "$D/cf.png" ||
   cmp -s "$D/cf.png" "$D/cr.png"; then ok; else bad "PNG: fast and reference differ"; fi
check_err 3 "" "$T" --quiet deband tests/test_deband_cli.sh "$D/x.png"

echo "deband-cli: $pass passed, $fail failed, $skip skipped"
[[ $fail == 0 ]]
