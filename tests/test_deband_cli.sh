#!/usr/bin/env bash
# Command-line tests of 'tessera deband': pipes and files, bit-exact backends and variants,
# errors with their exit codes, truncated streams, no partial output files, the three-thread
# stream (order, frames before a failure written, errors with frames in flight, no hang), an
# existing FIFO or device as OUT.
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

# 5b. interlaced streams (It, Ib): each field debanded on its own, exactly as the same fields
# would be as a progressive stream of half-height frames (top, bottom, top...; the frame index of
# --dynamic-grain counts fields), on every backend; --whole-frames debands the frames as given.
fields() {   # split|join W H CHROMA BYTES IN OUT: frames <-> a stream of their fields (python3)
    python3 - "$@" <<'PY'
import sys
op, w, h, chroma, b, src, dst = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], int(sys.argv[5]), sys.argv[6], sys.argv[7]
cw, ch = {"420": ((w + 1) // 2, (h + 1) // 2), "422": ((w + 1) // 2, h), "444": (w, h)}[chroma]
planes = [(w * b, h), (cw * b, ch), (cw * b, ch)]
data = open(src, "rb").read()
head, body = data.split(b"\n", 1)
out = []
if op == "split":
    out.append(head.replace(b" H%d " % h, b" H%d " % (h // 2)).replace(b" It", b" Ip").replace(b" Ib", b" Ip"))
    size = sum(r * n for r, n in planes)
    for k in range(len(body) // (size + 6)):
        frame = body[k * (size + 6) + 6:(k + 1) * (size + 6)]
        for f in (0, 1):
            out.append(b"FRAME")
            pos, parts = 0, []
            for r, n in planes:
                parts += [frame[pos + y * r:pos + (y + 1) * r] for y in range(f, n, 2)]
                pos += r * n
            out[-1] += b"\n" + b"".join(parts)
    open(dst, "wb").write(b"\n".join(out[:1]) + b"\n" + b"".join(o + b"" for o in out[1:]))
else:
    fsize = sum(r * (n // 2) for r, n in planes)
    fields = [body[k * (fsize + 6) + 6:(k + 1) * (fsize + 6)] for k in range(len(body) // (fsize + 6))]
    res = bytearray()
    for k in range(0, len(fields), 2):
        res += b"FRAME\n"
        pos = 0
        for r, n in planes:
            rows = [None] * n
            for f in (0, 1):
                for i, y in enumerate(range(f, n, 2)):
                    rows[y] = fields[k + f][pos + i * r:pos + (i + 1) * r]
            res += b"".join(rows)
            pos += r * (n // 2)
    open(dst, "wb").write(res)
PY
}
make_y4m 38 24 2 420p10 2 | sed '1s/ Ip / It /' > "$D/it.y4m"
fields split 38 24 420 2 "$D/it.y4m" "$D/itf.y4m"
for be in cpu cuda; do
    if [[ $be == cuda ]] && { "$T" list 2>/dev/null | grep -q '^CUDA: .*compiled in; no usable' ||
                              ! "$T" --backend cuda --quiet deband "$D/a8.y4m" "$D/c.y4m" 2>/dev/null; }; then
        skipped "no CUDA device for interlaced streams"
        continue
    fi
    for opts in "--dynamic-grain" "--output-depth 8 --sample-mode 1"; do
        if "$T" --quiet --backend $be deband $opts "$D/it.y4m" "$D/ito.y4m" &&
           "$T" --quiet --backend $be deband $opts "$D/itf.y4m" "$D/itfo.y4m" &&
           fields join 38 24 420 $([[ $opts == *depth* ]] && echo 1 || echo 2) "$D/itfo.y4m" "$D/itj.frames" &&
           head -1 "$D/ito.y4m" | grep -q ' It ' && cmp -s <(tail -c +$(( $(head -1 "$D/ito.y4m" | wc -c) + 1 )) "$D/ito.y4m") "$D/itj.frames"
        then ok; else bad "interlaced stream is not debanded field by field ($be, $opts)"; fi
    done
done
"$T" --quiet deband "$D/it.y4m" "$D/itd.y4m"
"$T" --quiet deband --whole-frames "$D/it.y4m" "$D/itw.y4m"
sed '1s/ It / Ip /' "$D/it.y4m" > "$D/itp.y4m"
"$T" --quiet deband "$D/itp.y4m" "$D/itpo.y4m"
if cmp -s <(tail -n +2 "$D/itw.y4m") <(tail -n +2 "$D/itpo.y4m") && ! cmp -s "$D/itw.y4m" "$D/itd.y4m"; then ok
else bad "--whole-frames does not deband interlaced frames as progressive ones"; fi

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
# The library's messages name deband already: once on the line, for streams and pictures alike.
check_err 2 "^tessera: deband: no variant named 'nosuch' (cpu: reference, fast" "$T" deband --variant nosuch "$D/a8.y4m" "$D/x.y4m"
check_err 2 "^tessera: deband: no variant named 'nosuch' (cpu: reference, fast" "$T" deband --variant nosuch tests/data/deband/coffee.png "$D/x.png"
printf 'YUV4MPEG2 W4 H4 C411\nFRAME\n' > "$D/c411.y4m"
check_err 4 "C411 is not supported" "$T" deband "$D/c411.y4m" "$D/x.y4m"
printf 'YUV4MPEG2 W4 H6 Ib C420\nFRAME\n' > "$D/ib.y4m"
check_err 4 "fields need a height that is a multiple of 4 for 4:2:0" "$T" deband "$D/ib.y4m" "$D/x.y4m"
printf 'YUV4MPEG2 W4 H4 Im C420\n' > "$D/im.y4m"
check_err 4 "mixed interlacing (Im" "$T" deband "$D/im.y4m" "$D/x.y4m"
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

# 11. streams run on three threads (reader, processing, writer) through a ring of slots: frames
# stay in order, the frames before a failure are all written, errors end the run cleanly.
# Every run has a time limit: a stage left waiting would hang instead of failing.
TO="timeout 60"
make_y4m 24 14 11 420 1 > "$D/m11.y4m"    # more frames than slots: every slot is reused
hdr=$(head -1 "$D/m11.y4m" | wc -c) fsz=$(( 6 + 24 * 14 + 2 * 12 * 7 ))
$TO "$T" --quiet deband - - < "$D/m11.y4m" > "$D/m11.out"
# 11a. the stream's output, frame by frame, is each frame debanded alone (no dynamic grain)
: > "$D/m11.cat"
for ((i = 0; i < 11; i++)); do
    { head -1 "$D/m11.y4m"; tail -c +$((hdr + i * fsz + 1)) "$D/m11.y4m" | head -c $fsz; } > "$D/one.y4m"
    $TO "$T" --quiet deband "$D/one.y4m" "$D/one.out" && tail -c +$((hdr + 1)) "$D/one.out" >> "$D/m11.cat"
done
if [[ $(stat -c %s "$D/m11.out") == $(stat -c %s "$D/m11.y4m") ]] &&
   cmp -s <(tail -c +$((hdr + 1)) "$D/m11.out") "$D/m11.cat"; then ok
else bad "11 frames through the slots: not each frame's own result, in order"; fi
$TO "$T" --quiet deband --dynamic-grain --output-depth 8 - - < "$D/m11.y4m" > "$D/dg1.y4m"
$TO "$T" --quiet deband --dynamic-grain --output-depth 8 "$D/m11.y4m" "$D/dg2.y4m"
if [[ -s $D/dg1.y4m ]] && cmp -s "$D/dg1.y4m" "$D/dg2.y4m"; then ok; else bad "dynamic grain: pipe and file differ"; fi

# 11b. a truncated last frame through pipes: frames 0-9 (in flight when the reader fails) are all
# written, then the one-line error with the frame number
size=$(stat -c %s "$D/m11.y4m")
head -c $((size - 50)) "$D/m11.y4m" | $TO "$T" --quiet deband - - > "$D/t.out" 2> "$D/err"
rc=$?
if [[ $rc == 3 ]] && [[ $(cat "$D/err") == "tessera: deband: frame 10: truncated (454 of 504 bytes)" ]] &&
   cmp -s "$D/t.out" <(head -c $((hdr + 10 * fsz)) "$D/m11.out"); then ok
else bad "truncated last frame on stdout: rc $rc, '$(cat "$D/err")', $(stat -c %s "$D/t.out") bytes (wanted $((hdr + 10 * fsz)))"; fi
# ... and to a file: no file, the existing one untouched, no temporary left
echo keep > "$D/existing.y4m"
head -c $((size - 50)) "$D/m11.y4m" > "$D/t11.y4m"
check_err 3 "frame 10: truncated (454 of 504 bytes)" $TO "$T" --quiet deband "$D/t11.y4m" "$D/existing.y4m"
if [[ $(cat "$D/existing.y4m") == keep ]] && ! ls "$D"/.tessera-* > /dev/null 2>&1; then ok
else bad "a truncated 11-frame stream replaced the output or left a temporary file"; fi

# 11c. an error in the middle (a broken FRAME marker at frame 6) with frames in flight
{ head -c $((hdr + 6 * fsz)) "$D/m11.y4m"; printf 'FRAMX'; tail -c +$((hdr + 6 * fsz + 6)) "$D/m11.y4m"; } > "$D/bad6.y4m"
$TO "$T" --quiet deband - - < "$D/bad6.y4m" > "$D/b.out" 2> "$D/err"
rc=$?
if [[ $rc == 3 ]] && grep -q "^tessera: deband: frame 6: missing FRAME marker" "$D/err" && [[ $(wc -l < "$D/err") == 1 ]] &&
   cmp -s "$D/b.out" <(head -c $((hdr + 6 * fsz)) "$D/m11.out"); then ok
else bad "bad marker at frame 6: rc $rc, '$(cat "$D/err")', $(stat -c %s "$D/b.out") bytes"; fi
check_err 3 "frame 6: missing FRAME marker" $TO "$T" --quiet deband "$D/bad6.y4m" "$D/existing.y4m"
if [[ $(cat "$D/existing.y4m") == keep ]] && ! ls "$D"/.tessera-* > /dev/null 2>&1; then ok
else bad "a broken 11-frame stream replaced the output or left a temporary file"; fi

# 11d. an empty stream and a header without frames (stdin/stdout and files)
check_err 3 "stdin: empty input (no y4m header)" $TO "$T" --quiet deband - - < /dev/null
if [[ ! -s $D/out ]]; then ok; else bad "empty input wrote something"; fi
: > "$D/empty.y4m"
check_err 3 "empty.y4m: empty file" $TO "$T" --quiet deband "$D/empty.y4m" "$D/e.y4m"
head -1 "$D/m11.y4m" > "$D/hdr.y4m"
if $TO "$T" --quiet deband - - < "$D/hdr.y4m" > "$D/h1.y4m" && $TO "$T" --quiet deband "$D/hdr.y4m" "$D/h2.y4m" &&
   cmp -s "$D/h1.y4m" "$D/hdr.y4m" && cmp -s "$D/h2.y4m" "$D/hdr.y4m"; then ok
else bad "a header without frames: not the header alone"; fi

# 11e. tiny frames (1x1, 2x1), more of them than slots
for sz in "1 1" "2 1"; do
    make_y4m $sz 9 420 1 > "$D/tiny.y4m"
    if $TO "$T" --quiet deband - - < "$D/tiny.y4m" > "$D/tp.y4m" && $TO "$T" --quiet deband "$D/tiny.y4m" "$D/tf.y4m" &&
       cmp -s "$D/tp.y4m" "$D/tf.y4m" && [[ $(stat -c %s "$D/tp.y4m") == $(stat -c %s "$D/tiny.y4m") ]] &&
       [[ $(grep -c FRAME "$D/tp.y4m") == 9 ]]; then ok
    else bad "tiny frames ($sz): pipe and file differ or frames lost"; fi
done

# 11f. large frames (1280x720 16-bit: 2.7 MB, more than the stdio buffer and the pipe's), 6 frames,
# through pipes on both sides against file to file; truncated in the middle of frame 3
lw=1280 lh=720 lfs=$(( 6 + 1280 * 720 * 3 ))
{ printf 'YUV4MPEG2 W%d H%d F25:1 Ip C420p16\n' $lw $lh
  for ((i = 0; i < 6; i++)); do printf 'FRAME\n'; head -c $((lfs - 6)) /dev/urandom; done; } > "$D/big.y4m"
lhdr=$(head -1 "$D/big.y4m" | wc -c)
$TO "$T" --quiet deband "$D/big.y4m" "$D/bigf.y4m"
cat "$D/big.y4m" | $TO "$T" --quiet deband - - | cat > "$D/bigp.y4m"
if [[ $(stat -c %s "$D/bigp.y4m") == $(stat -c %s "$D/big.y4m") ]] && cmp -s "$D/bigp.y4m" "$D/bigf.y4m"; then ok
else bad "large frames: pipe and file differ"; fi
head -c $((lhdr + 3 * lfs + 1000000)) "$D/big.y4m" | $TO "$T" --quiet deband - - > "$D/bt.out" 2> "$D/err"
rc=$?
if [[ $rc == 3 ]] && [[ $(cat "$D/err") == "tessera: deband: frame 3: truncated ($((1000000 - 6)) of $((lfs - 6)) bytes)" ]] &&
   cmp -s "$D/bt.out" <(head -c $((lhdr + 3 * lfs)) "$D/bigf.y4m"); then ok
else bad "large frames truncated in frame 3: rc $rc, '$(cat "$D/err")', $(stat -c %s "$D/bt.out") bytes"; fi

# 11g. a reader error while the writer runs: the consumer is slow, so the writer is still writing
# frame 0 when the reader meets the cut; every frame before it still arrives
head -c $((lhdr + 3 * lfs + 1000)) "$D/big.y4m" | $TO "$T" --quiet deband - - 2> "$D/err" | { sleep 1; cat; } > "$D/bs.out"
rc=${PIPESTATUS[1]}
if [[ $rc == 3 ]] && grep -q "frame 3: truncated" "$D/err" && cmp -s "$D/bs.out" <(head -c $((lhdr + 3 * lfs)) "$D/bigf.y4m"); then ok
else bad "reader error behind a slow writer: rc $rc, '$(cat "$D/err")', $(stat -c %s "$D/bs.out") bytes"; fi
# ... and a slow producer (a pause in the middle of frame 2): the same output as from the file
{ head -c $((lhdr + 2 * lfs + 5000)) "$D/big.y4m"; sleep 1; tail -c +$((lhdr + 2 * lfs + 5001)) "$D/big.y4m"; } |
    $TO "$T" --quiet deband - - > "$D/bw.out"
if cmp -s "$D/bw.out" "$D/bigf.y4m"; then ok; else bad "a pausing producer changed the output"; fi

# 11h. write errors end the run while the reader still has frames to read: /dev/full (one line,
# the errno's words, exit 1) and a consumer that leaves (broken pipe); neither may hang
cat "$D/big.y4m" "$D/big.y4m" | $TO "$T" --quiet deband - - > /dev/full 2> "$D/err"
rc=${PIPESTATUS[1]}
if [[ $rc == 1 ]] && grep -q "No space left on device" "$D/err" && [[ $(wc -l < "$D/err") == 1 ]]; then ok
else bad "stdout on /dev/full: rc $rc, '$(cat "$D/err")'"; fi
$TO "$T" --quiet deband "$D/big.y4m" - 2> "$D/err" | head -c 1000 > /dev/null
rc=${PIPESTATUS[0]}
if [[ $rc == 1 ]] && grep -q "Broken pipe" "$D/err" && [[ $(wc -l < "$D/err") == 1 ]]; then ok
else bad "consumer gone: rc $rc, '$(cat "$D/err")'"; fi

# 11i. --time reports the reader's and the writer's own times
if $TO "$T" --quiet --time deband "$D/m11.y4m" "$D/tm.y4m" 2>&1 | grep -q 'kernel .* ms/frame, read .* ms/frame and write .* ms/frame'; then ok
else bad "--time line"; fi

# 12. an OUT that exists and is not a regular file is written in place, never replaced by a file:
# a FIFO (its reader gets the stream), and device nodes (made here: root only, else skipped)
mkfifo "$D/fifo"
{ timeout 60 cat "$D/fifo" > "$D/fifo.out"; } &
reader=$!
$TO "$T" --quiet deband "$D/m11.y4m" "$D/fifo"
rc=$?
if [[ -p $D/fifo ]]; then wait $reader; else kill $reader 2> /dev/null; wait $reader 2> /dev/null; fi
if [[ $rc == 0 && -p $D/fifo ]] && cmp -s "$D/fifo.out" "$D/m11.out"; then ok
else bad "FIFO as OUT: rc $rc, still a FIFO: $([[ -p $D/fifo ]] && echo yes || echo no)"; fi
if mknod "$D/full" c 1 7 2> /dev/null && mknod "$D/null" c 1 3 2> /dev/null && : 2> /dev/null > "$D/null"; then
    check_err 1 "No space left on device" $TO "$T" --quiet deband "$D/m11.y4m" "$D/full"
    if $TO "$T" --quiet deband "$D/m11.y4m" "$D/null" && [[ -c $D/full && -c $D/null ]]; then ok
    else bad "device nodes as OUT were replaced or failed"; fi
else
    skipped "device nodes as OUT (mknod needs root and a file system that allows devices)"
fi

# 13. CUDA: the 11-frame stream with dynamic grain, the pipe against the CPU
if "$T" list 2>/dev/null | grep -q '^CUDA: .*compiled in; no usable' || ! "$T" --backend cuda --quiet deband "$D/a8.y4m" "$D/c.y4m" 2>/dev/null; then
    skipped "no CUDA device for the 11-frame stream"
else
    $TO "$T" --quiet --backend cuda deband --dynamic-grain --output-depth 8 - - < "$D/m11.y4m" > "$D/dgc.y4m"
    if cmp -s "$D/dg1.y4m" "$D/dgc.y4m"; then ok; else bad "11-frame stream: cuda and cpu differ"; fi
fi

echo "deband-cli: $pass passed, $fail failed, $skip skipped"
[[ $fail == 0 ]]
