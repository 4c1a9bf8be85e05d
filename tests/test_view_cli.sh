#!/usr/bin/env bash
# 'tessera view' from the command line: headless and window screenshots equal the operations'
# outputs pixel for pixel (gray outputs as R=G=B), the split, live keys, the benchmark's lines,
# the interop path where a GPU is present, and one-line errors; y4m playback (deband before and
# after, stdin, pause and step, --loop, the stream's rate in a window, truncated streams) against
# frames converted independently by tests/y4m_frames.py. Ends with
# "view-cli: N passed, N failed, N skipped"; exit status 1 if any failed.
set -u
cd "$(dirname "$0")/.."
T=${TSR_BIN:-$PWD/build/tessera}
PY=${PYTHON:-$( [ -x /usr/bin/python3 ] && echo /usr/bin/python3 || echo python3 )}
IMG=$PWD/data/images
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
. "$PWD/tests/lib.sh"

same() {
    "$PY" - "$@" <<'EOF'
import sys, cv2, numpy as np
shot = cv2.imread(sys.argv[1], cv2.IMREAD_UNCHANGED)
ref = cv2.imread(sys.argv[2], cv2.IMREAD_UNCHANGED)
if shot is None or ref is None: sys.exit("unreadable image")
if ref.ndim == 2: ref = np.dstack([ref] * 3)
ref = ref[:, :, :3]
if shot.shape != ref.shape: sys.exit("shape %s vs %s" % (shot.shape, ref.shape))
x0 = int(sys.argv[3]) if len(sys.argv) > 3 else 0
x1 = int(sys.argv[4]) if len(sys.argv) > 4 else shot.shape[1]
bad = int((shot[:, x0:x1] != ref[:, x0:x1]).any(axis=2).sum())
if bad: sys.exit("%d pixels differ" % bad)
EOF
}

if "$T" view --help 2>&1 | grep -q "this build has no viewer"; then
    expect_fail "view without a viewer build: one line, exit 4" 4 "$T" view "$IMG/camera.png"
    skip "everything else: this build has no viewer"
    finish view-cli
fi

# Help and refusals that need no GL.
"$T" view --help | grep -q "^usage: tessera view"; ok "view --help" $?
"$T" view --op box --help | grep -q -- "--radius"; ok "view --op box --help shows box's options" $?
"$T" help view | grep -q -- "--screenshot"; ok "help view" $?
expect_fail "--op sums is refused (exit 4)" 4 "$T" view "$IMG/camera.png" --op sums --headless
expect_fail "--op unknown (exit 2)" 2 "$T" view "$IMG/camera.png" --op nosuch --headless
expect_fail "--op misspelt (exit 2)" 2 "$T" view "$IMG/camera.png" --op gray,bxo --headless
grep -q "unknown operation 'bxo'; did you mean 'box'?" "$W/err.txt"; ok "--op misspelt names the operation meant" $?
expect_fail "threshold on colour names the problem (exit 4)" 4 "$T" view "$IMG/coffee.png" --op threshold --block 5 --c 1 --headless
expect_fail "threshold without --block (exit 2)" 2 "$T" view "$IMG/camera.png" --op threshold --c 1 --headless
expect_fail "--radius out of range (exit 2)" 2 "$T" view "$IMG/camera.png" --op box --radius -1 --headless
expect_fail "window screenshot without --frames (exit 2)" 2 "$T" view "$IMG/camera.png" --screenshot "$W/x.png"
expect_fail "--op without a value (exit 2)" 2 "$T" view "$IMG/camera.png" --op
"$T" view --op deband --help | grep -q -- "--grain-y"; ok "view --op deband --help shows deband's options" $?
"$T" view --help | grep -q -- "--loop"; ok "view --help shows --loop" $?
Y4M() { "$PY" tests/y4m_frames.py "$@"; }
Y4M gen "$W/a420.y4m" 67 41 5 420 8 && Y4M gen "$W/b444.y4m" 40 30 4 444 16 && Y4M gen "$W/c422.y4m" 33 20 3 422 8 &&
    Y4M gen "$W/m10.y4m" 21 13 2 mono 10 && Y4M gen "$W/slow.y4m" 24 16 4 420 8 5:1
ok "tests/y4m_frames.py writes test streams" $?
head -c 12000 "$W/a420.y4m" >"$W/cut.y4m"   # frames 0 and 1, then 3591 of frame 2's 4175 bytes
printf 'YUV4MPEG2 W4 H4 C420jpeg\n' >"$W/empty.y4m"
expect_fail "deband after another operation (exit 2)" 2 "$T" view "$W/a420.y4m" --op box,deband --headless
expect_fail "--loop on an image (exit 2)" 2 "$T" view "$IMG/camera.png" --loop --headless
expect_fail "--loop on a pipe (exit 2)" 2 sh -c "cat '$W/a420.y4m' | '$T' view - --loop --frames 3 --headless"
expect_fail "--headless --loop without --frames (exit 2)" 2 "$T" view "$W/a420.y4m" --loop --headless
expect_fail "--benchmark of a stream (exit 2)" 2 "$T" view "$W/a420.y4m" --benchmark
expect_fail "a stream without frames (exit 3)" 3 "$T" view "$W/empty.y4m" --headless
expect_fail "deband's options are checked (exit 2)" 2 "$T" view "$W/a420.y4m" --op deband --range 300 --headless
expect_fail "missing input (exit 1)" 1 "$T" view "$W/none.png" --headless
expect_fail "no display without --headless (exit 4)" 4 env -u DISPLAY -u WAYLAND_DISPLAY "$T" view "$IMG/camera.png" --op box
gpu=0
"$T" list | grep -q "^CUDA: .*GiB" && gpu=1
if [ $gpu = 0 ]; then
    expect_fail "--path interop without a GPU (exit 1)" 1 "$T" view "$IMG/camera.png" --op box --headless --path interop
fi

# Off screen: is there any GL here at all?
if ! "$T" --quiet view "$IMG/camera.png" --headless --screenshot "$W/probe.png" 2>"$W/err.txt"; then
    if grep -q "no off-screen OpenGL" "$W/err.txt"; then
        skip "headless screenshots: $(cat "$W/err.txt")"
        finish view-cli
    fi
    ok "headless probe: $(cat "$W/err.txt")" 1
fi

# Headless screenshots on each path that runs here against the filter commands' outputs.
paths=cpu
[ $gpu = 1 ] && paths="cpu interop hostcopy"
shot() {   # shot NAME REF IN VIEW-ARGS...: view IN headless on each path; the shot equals REF
    local name=$1 ref=$2 in=$3; shift 3
    for p in $paths; do
        if "$T" --quiet view "$in" "$@" --headless --frames 2 --path $p --screenshot "$W/shot.png" 2>"$W/err.txt" &&
            same "$W/shot.png" "$ref" 2>>"$W/err.txt"; then ok "$name ($p)" 0
        else ok "$name ($p): $(head -c 300 "$W/err.txt")" 1; fi
    done
}
"$T" --quiet --backend cpu invert "$IMG/coffee.png" "$W/r-inv.png" && shot "invert" "$W/r-inv.png" "$IMG/coffee.png" --op invert
"$T" --quiet --backend cpu box --radius 4 "$IMG/camera.png" "$W/r-box.png" && shot "box --radius 4" "$W/r-box.png" "$IMG/camera.png" --op box --radius 4
"$T" --quiet --backend cpu gray "$IMG/coffee.png" "$W/r-gray.png" && shot "gray (R=G=B)" "$W/r-gray.png" "$IMG/coffee.png" --op gray
"$T" --quiet --backend cpu box --radius 2 --border constant --value 40 "$W/r-gray.png" "$W/r-gb.png" &&
    shot "chain gray,box with box's options" "$W/r-gb.png" "$IMG/coffee.png" --op gray,box --radius 2 --border constant --value 40
"$T" --quiet --backend cpu threshold --block 15 --c 5 "$W/r-gray.png" "$W/r-th.png" &&
    shot "chain gray,threshold" "$W/r-th.png" "$IMG/coffee.png" --op gray,threshold --block 15 --c 5
"$T" --quiet --backend cpu resize --width 250 --height 170 "$IMG/coffee.png" "$W/r-rs.png" &&
    shot "resize (output smaller than input)" "$W/r-rs.png" "$IMG/coffee.png" --op resize --width 250 --height 170
shot "no --op: the image itself" "$IMG/coffee.png" "$IMG/coffee.png"
"$T" --quiet --backend cpu deband "$IMG/coffee.png" "$W/r-db.png" &&
    shot "deband on an image, as 'tessera deband' does" "$W/r-db.png" "$IMG/coffee.png" --op deband

# Live keys, scripted: R R raises box's radius from 1 to 3; B raises threshold's block by 2.
"$T" --quiet --backend cpu box --radius 3 "$IMG/camera.png" "$W/r-box3.png"
"$T" --quiet view "$IMG/camera.png" --op box --keys RR --headless --screenshot "$W/k.png" &&
    same "$W/k.png" "$W/r-box3.png"; ok "--keys RR: radius 1 -> 3" $?
"$T" --quiet --backend cpu threshold --block 17 --c 3 "$W/r-gray.png" "$W/r-th17.png"
"$T" --quiet view "$IMG/coffee.png" --op gray,threshold --block 15 --c 5 --keys Bcc --headless --screenshot "$W/k.png" &&
    same "$W/k.png" "$W/r-th17.png"; ok "--keys Bcc: block 15 -> 17, C 5 -> 3" $?

# The split: input left of lround(0.25 * 600) = 150, output right of it.
"$T" --quiet view "$IMG/coffee.png" --op invert --split --split-at 0.25 --headless --screenshot "$W/s.png" &&
    same "$W/s.png" "$IMG/coffee.png" 0 150 && same "$W/s.png" "$W/r-inv.png" 150 600; ok "--split --split-at 0.25" $?

# The frame report and the benchmark's lines.
"$T" view "$IMG/camera.png" --op box --headless --frames 3 2>"$W/err.txt" &&
    grep -q "3 frames on the .* path, .* ms/frame, [0-9]* bytes through the host per frame" "$W/err.txt"
ok "headless report: frames, ms/frame, bytes through the host" $?
"$T" view "$IMG/coffee.png" --op gray,box --headless --benchmark --frames 3 --bench-width 320 --bench-height 180 >"$W/bench.txt" &&
    grep -q "^view benchmark: 320x180, 3 frames" "$W/bench.txt" &&
    grep -qE "^  cpu +[0-9.]+ fps +[0-9.]+ ms/frame +57600 bytes through the host per frame" "$W/bench.txt"
ok "benchmark: cpu line with 320*180 gray bytes through the host" $?
if [ $gpu = 1 ]; then
    grep -qE "^  interop +[0-9.]+ fps +[0-9.]+ ms/frame +0 bytes through the host per frame" "$W/bench.txt"
    ok "benchmark: interop moves 0 bytes through the host" $?
    grep -qE "^  hostcopy +[0-9.]+ fps +[0-9.]+ ms/frame +115200 bytes" "$W/bench.txt"
    ok "benchmark: hostcopy moves the frame down and up" $?
    "$T" view "$IMG/camera.png" --op box --headless --frames 3 --path interop 2>"$W/err.txt" &&
        grep -q "on the interop path, .* 0 bytes through the host per frame" "$W/err.txt"
    ok "interop report: 0 bytes through the host per frame" $?
else
    skip "benchmark interop and hostcopy lines: no CUDA GPU"
fi

# y4m streams, off screen on the cpu path: each screenshot equals the frame converted by
# tests/y4m_frames.py from the formula of tsr_frame_to_image, debanded first by 'tessera deband'.
vshot() {   # vshot NAME REF VIEW-ARGS...: tessera view VIEW-ARGS headless; the screenshot equals REF
    local name=$1 ref=$2; shift 2
    rm -f "$W/v.png"
    if "$T" --quiet view "$@" --headless --path cpu --screenshot "$W/v.png" 2>"$W/err.txt" &&
        same "$W/v.png" "$ref" 2>>"$W/err.txt"; then ok "$name" 0
    else ok "$name: $(head -c 300 "$W/err.txt")" 1; fi
}
"$T" --quiet --backend cpu deband "$W/a420.y4m" "$W/a420d.y4m" &&
    "$T" --quiet --backend cpu deband --y 300 --grain-y 0 "$W/b444.y4m" "$W/b444d.y4m" &&
    Y4M frame "$W/a420d.y4m" 2 "$W/a420d-2.png" && Y4M frame "$W/a420.y4m" 2 "$W/a420-2.png" &&
    Y4M frame "$W/a420.y4m" 1 "$W/a420-1.png" && Y4M frame "$W/b444d.y4m" 3 "$W/b444d-3.png" &&
    Y4M frame "$W/c422.y4m" 2 "$W/c422-2.png" && Y4M frame "$W/c422.y4m" 2 "$W/c422-2y.png" luma &&
    Y4M frame "$W/m10.y4m" 1 "$W/m10-1.png"
ok "references: tessera deband and tests/y4m_frames.py" $?
"$PY" -c "import cv2, sys; a, b = (cv2.imread(p) for p in sys.argv[1:]); sys.exit(int((a == b).all()))" \
    "$W/a420d-2.png" "$W/a420-2.png"; ok "deband changes the test frame (the comparisons can tell)" $?
vshot "4:2:0 8-bit, deband: --frames 3 shows frame 2 debanded" "$W/a420d-2.png" "$W/a420.y4m" --op deband --frames 3
vshot "4:4:4 16-bit on stdin, deband --y 300: --frames 9 of 4 shows the last" "$W/b444d-3.png" - --op deband --y 300 \
    --grain-y 0 --frames 9 <"$W/b444.y4m"
vshot "4:2:2 8-bit, no operation: the frame as converted" "$W/c422-2.png" "$W/c422.y4m"
vshot "--show luma: the Y plane as gray" "$W/c422-2y.png" "$W/c422.y4m" --show luma
vshot "mono 10-bit: gray, full scale" "$W/m10-1.png" "$W/m10.y4m"
"$T" --quiet --backend cpu box --radius 2 "$W/a420d-2.png" "$W/a420db-2.png" &&
    vshot "deband,box: box works on the RGB frame" "$W/a420db-2.png" "$W/a420.y4m" --op deband,box --radius 2 --frames 3
vshot "space then '.': paused on frame 1" "$W/a420-1.png" "$W/a420.y4m" --keys " ." --frames 4
vshot "--loop --frames 7 of 5: frame 1" "$W/a420-1.png" "$W/a420.y4m" --loop --frames 7
# The split: the frame before deband left of lround(0.5 * 67) = 34, debanded right of it.
"$T" --quiet view "$W/a420.y4m" --op deband --frames 3 --split --headless --path cpu --screenshot "$W/s.png" &&
    same "$W/s.png" "$W/a420-2.png" 0 34 && same "$W/s.png" "$W/a420d-2.png" 34 67
ok "--split: before deband left, after right" $?
"$T" view "$W/a420.y4m" --op deband --headless --frames 3 --path cpu 2>"$W/err.txt" &&
    grep -q "^tessera: view: 3 frames (y4m frame 2 last) on the cpu path, .* 16482 bytes through the host" "$W/err.txt"
ok "stream report: frames, the last y4m frame, two 67x41 RGB uploads a frame" $?
rm -f "$W/t.png"
expect_fail "truncated stream: one line, exit 3" 3 "$T" view "$W/cut.y4m" --op deband --headless --screenshot "$W/t.png"
grep -q "cut.y4m: frame 2: truncated" "$W/err.txt" && [ ! -e "$W/t.png" ]
ok "truncated stream: names the frame, writes no screenshot" $?
expect_fail "truncated stream on stdin: one line, exit 3" 3 sh -c "'$T' view - --headless --screenshot '$W/t.png' <'$W/cut.y4m'"
grep -q "^tessera: view: stdin: frame 2: truncated" "$W/err.txt" && [ ! -e "$W/t.png" ]
ok "truncated stdin: names stdin and the frame, writes no screenshot" $?
vshot "a truncated stream plays up to the frame before the cut" "$W/a420-1.png" "$W/cut.y4m" --frames 2

# A window, under Xvfb where there is no display.
xvfb=
if [ -n "${DISPLAY:-}" ] && [ -z "${TSR_VIEW_XVFB:-}" ]; then run_x() { "$@"; }
elif command -v xvfb-run >/dev/null 2>&1; then
    xvfb=1
    # Xvfb as xvfb-run starts it resets when its last client leaves and drops connections made
    # while it resets; the viewer must open one connection only (it once probed the screen's
    # size through a second, and under load its window then found no display).
    run_x() { xvfb-run -a -s "-screen 0 1280x1024x24" "$@"; }
else run_x() { return 77; }
fi
run_x "$T" --quiet view "$IMG/coffee.png" --op gray,box --radius 2 --border constant --value 40 --frames 3 \
    --screenshot "$W/win.png" 2>"$W/err.txt"
rc=$?
# Under xvfb-run a display that cannot be opened is a failure, not a reason to skip.
if [ $rc = 77 ] || grep -q "no OpenGL on this display\|no windows" "$W/err.txt" ||
    { [ -z "$xvfb" ] && grep -q "no display" "$W/err.txt"; }; then
    skip "window screenshot: no X display or xvfb-run ($(head -c 200 "$W/err.txt"))"
else
    [ $rc = 0 ] && same "$W/win.png" "$W/r-gb.png"; ok "window screenshot equals the chain's output" $?
    run_x "$T" --quiet view "$IMG/camera.png" --op box --keys "sR+0f" --frames 2 2>"$W/err.txt"
    ok "window: split, radius, zoom, 1:1 and fit keys run ($(head -c 200 "$W/err.txt"))" $?
    run_x "$T" --quiet view "$W/a420.y4m" --op deband --frames 3 --path cpu --screenshot "$W/win.png" 2>"$W/err.txt" &&
        same "$W/win.png" "$W/a420d-2.png"
    ok "window: y4m --frames 3 shows frame 2 debanded ($(head -c 200 "$W/err.txt"))" $?
    # 5 fps: frames 0..3 take at least 0.6 s in a window, and are not paced off screen.
    t0=$(date +%s%N)
    run_x "$T" --quiet view "$W/slow.y4m" --frames 4 --path cpu 2>"$W/err.txt"
    rc=$? ms=$((($(date +%s%N) - t0) / 1000000))
    [ $rc = 0 ] && [ $ms -ge 600 ]; ok "window: plays at the stream's 5 fps (4 frames in $ms ms)" $?
    tests_bin=$(dirname "$T")/tessera-tests
    if [ -x "$tests_bin" ]; then
        run_x "$tests_bin" test_view_window >"$W/unit.txt" 2>&1 && grep -q "1 passed, 0 failed, 0 skipped" "$W/unit.txt"
        ok "unit test_view_window_screenshot under a display ($(grep -v "^unit:" "$W/unit.txt" | head -c 300))" $?
    fi
fi
finish view-cli
