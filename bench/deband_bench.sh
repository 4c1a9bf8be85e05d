#!/usr/bin/env bash
# deband benchmarks and quality measures (docs/deband.md reports their output).
#   bench/deband_bench.sh [all|quality|gpu|cpu|pipe]
# Environment: BUILD (default build: its libtessera.a and tessera), TESSERA (the CLI to time),
# FRAMES (4K frames through the pipe, default 24), CPU_FRAMES (default 8), THREADS (default nproc),
# REPEAT (CPU runs per program, the best counts; pipe runs, the median counts; default 3),
# PIPE_BACKEND ('pipe': the --backend to time, default cpu), TESSERA_BEFORE ('pipe': a second CLI,
# e.g. a build of an earlier commit, timed in the same rounds),
# BENCH_TMP (where the 4K test stream is written, default /tmp).
# 'quality' and the FFmpeg comparison need ffmpeg (Debian's: apt-get install -y ffmpeg).
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
BUILD=${BUILD:-build}
TESSERA=${TESSERA:-$BUILD/tessera}
FRAMES=${FRAMES:-24}
CPU_FRAMES=${CPU_FRAMES:-8}
THREADS=${THREADS:-$(nproc)}
REPEAT=${REPEAT:-3}
TMPD=$(mktemp -d "${BENCH_TMP:-/tmp}/deband-bench.XXXXXX")
trap 'rm -rf "$TMPD"' EXIT
W=3840 H=2160

# The helper, linked against the library as built (CUDA or not).
tool=$TMPD/deband_tool
if ar t "$BUILD/libtessera.a" 2>/dev/null | grep -qx device.o; then   # a CUDA build
    nvcc_path=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
    cuda_home=${nvcc_path%/bin/nvcc}
    cc -O2 -std=c11 -D_GNU_SOURCE -DTSR_HAVE_CUDA=1 -Iinclude -c bench/deband/deband_tool.c -o "$TMPD/tool.o"
    c++ -o "$tool" "$TMPD/tool.o" "$BUILD/libtessera.a" ${EXTRA_LIBS:-} -L"$cuda_home/lib64" \
        -L"$cuda_home/targets/x86_64-linux/lib" -lcudart_static -ldl -lrt -lpthread -lm
else
    cc -O2 -std=c11 -D_GNU_SOURCE -Iinclude bench/deband/deband_tool.c "$BUILD/libtessera.a" ${EXTRA_LIBS:-} \
        -lpthread -lm -o "$tool"
fi

now() { date +%s.%N; }
calc() { awk "BEGIN { printf \"%.2f\", $1 }"; }

if [[ $what == all || $what == quality ]]; then
    echo "## quality (luma; PSNR vs the 16-bit source, peak 65535; LF error = RMS of the 9x9 mean of the"
    echo "## error in 8-bit code values; contours = one-code steps between runs of 8 equal codes)"
    echo "| source | output | PSNR dB | LF error | contours |"
    echo "|---|---|---|---|---|"
    for k in 0 1 2; do "$tool" quality "synthetic-$k" "synthetic-$k"; done
    if command -v ffmpeg >/dev/null; then
        # The sky of rocket.jpg (above the towers), 4x bicubic upscale in 16 bits, Gaussian blur sigma 8.
        ffmpeg -v error -y -i tests/data/deband/rocket.jpg \
            -vf "crop=300:100:100:0,format=gray16le,scale=1200:400:flags=bicubic,gblur=sigma=8" \
            -f yuv4mpegpipe -strict -1 "$TMPD/sky16.y4m"
        "$tool" quality rocket-sky "$TMPD/sky16.y4m"
        echo
        echo "| textured 8-bit image | run | PSNR dB vs input | LF change | changed |"
        echo "|---|---|---|---|---|"
        for img in tests/data/deband/coffee.png /work/shared/images/chelsea.png; do
            [[ -f $img ]] || continue
            ffmpeg -v error -y -i "$img" -pix_fmt gray -f yuv4mpegpipe "$TMPD/tex.y4m"
            "$tool" texture "$(basename "${img%.*}")" "$TMPD/tex.y4m"
        done
    else
        echo "(ffmpeg missing: photo rows skipped)"
    fi
    echo
fi

if [[ $what == all || $what == gpu || $what == cpu || $what == pipe ]]; then
    n=$FRAMES
    [[ $what == cpu ]] && n=$CPU_FRAMES
    "$tool" gen $W $H "$n" 16 > "$TMPD/uhd16.y4m"
fi

if [[ $what == all || $what == gpu ]]; then
    echo "## GPU: kernel time vs a device-to-device copy of the same frame (16 bits in and out)"
    "$tool" gpu $W $H 50
    if [[ -x $TESSERA ]] && "$TESSERA" --backend cuda --quiet deband --help >/dev/null 2>&1; then
        for v in planar vec staged tile; do
            t0=$(now)
            cat "$TMPD/uhd16.y4m" | "$TESSERA" --backend cuda --variant $v --time deband - - 2>"$TMPD/err" | cat > /dev/null
            t1=$(now)
            echo "gpu pipe ($v): $FRAMES frames 3840x2160 4:2:0 16-bit through a y4m pipe in $(calc "$t1 - $t0") s" \
                 "= $(calc "$FRAMES / ($t1 - $t0)") fps"
            grep -v "^tessera: deband ran" "$TMPD/err" || true
            t0=$(now)
            cat "$TMPD/uhd16.y4m" | "$TESSERA" --backend cuda --variant $v --quiet deband --output-depth 8 - - | cat > /dev/null
            t1=$(now)
            echo "gpu pipe ($v, --output-depth 8, Floyd-Steinberg wavefront): $(calc "$FRAMES / ($t1 - $t0)") fps"
        done
        t0=$(now)
        cat "$TMPD/uhd16.y4m" | cat > /dev/null
        t1=$(now)
        echo "pipe alone (cat | cat): $(calc "$FRAMES / ($t1 - $t0)") fps"
        # 8-bit in and out (the common stream: Floyd-Steinberg by default), each dither kernel.
        "$tool" gen $W $H "$FRAMES" 8 > "$TMPD/uhd8.y4m"
        for fs in block bands pairs; do
            t0=$(now)
            cat "$TMPD/uhd8.y4m" | TSR_DEBAND_FS=$fs "$TESSERA" --backend cuda --quiet deband - - | cat > /dev/null
            t1=$(now)
            echo "gpu pipe (8-bit, Floyd-Steinberg '$fs'): $FRAMES frames in $(calc "$t1 - $t0") s = $(calc "$FRAMES / ($t1 - $t0)") fps (start-up included)"
        done
        t0=$(now)
        cat "$TMPD/uhd8.y4m" | cat | cat > /dev/null
        t1=$(now)
        echo "8-bit pipe alone (cat | cat | cat): $(calc "$FRAMES / ($t1 - $t0)") fps"
    fi
    echo
fi

if [[ $what == all || $what == cpu ]]; then
    n=$CPU_FRAMES
    head -c "$(( $(head -1 "$TMPD/uhd16.y4m" | wc -c) + n * (6 + W * H * 3) ))" "$TMPD/uhd16.y4m" > "$TMPD/cpu.y4m"
    echo "## CPU: $n frames 3840x2160 4:2:0 16-bit, $THREADS threads, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
    echo "## (each the best of $REPEAT runs, alternating, so that both see the same machine load)"
    declare -A best
    for ((rep = 0; rep < REPEAT; rep++)); do
        for k in tessera tessera-mode1 ffmpeg ffmpeg-copy; do
            case $k in
            tessera) cmd=("$TESSERA" --backend cpu --threads "$THREADS" --quiet deband "$TMPD/cpu.y4m" -) ;;
            tessera-mode1) cmd=("$TESSERA" --backend cpu --threads "$THREADS" --quiet deband --sample-mode 1 "$TMPD/cpu.y4m" -) ;;
            ffmpeg) cmd=(ffmpeg -v error -threads "$THREADS" -filter_threads "$THREADS" -f yuv4mpegpipe -i "$TMPD/cpu.y4m"
                         -vf deband -f yuv4mpegpipe -strict -1 -) ;;
            ffmpeg-copy) cmd=(ffmpeg -v error -threads "$THREADS" -filter_threads "$THREADS" -f yuv4mpegpipe -i "$TMPD/cpu.y4m"
                              -f yuv4mpegpipe -strict -1 -) ;;
            esac
            [[ $k == ffmpeg* ]] && ! command -v ffmpeg > /dev/null && continue
            t0=$(now)
            "${cmd[@]}" > /dev/null
            t1=$(now)
            t=$(calc "$t1 - $t0")
            if [[ -z ${best[$k]:-} ]] || awk "BEGIN { exit !($t < ${best[$k]}) }"; then best[$k]=$t; fi
        done
    done
    echo "tessera deband (cpu, fast): $(calc "$n / ${best[tessera]}") fps"
    echo "tessera deband (cpu, fast, --sample-mode 1): $(calc "$n / ${best[tessera-mode1]}") fps"
    if [[ -n ${best[ffmpeg]:-} ]]; then
        echo "ffmpeg -vf deband (defaults: range 16, 4 references, blur): $(calc "$n / ${best[ffmpeg]}") fps" \
             "($(ffmpeg -version | head -1 | cut -d' ' -f1-3))"
        echo "ffmpeg without a filter (its read+write alone): $(calc "$n / ${best[ffmpeg-copy]}") fps"
    else
        echo "ffmpeg missing: no comparison"
    fi
fi

if [[ $what == pipe ]]; then
    # End to end through y4m pipes, as a user runs it: cat IN | tessera deband - - | cat > /dev/null,
    # beside cat | cat of the same stream (the pipe alone). Runs alternate round by round so that
    # every program sees the same machine load; each figure is the median over REPEAT rounds.
    b=${PIPE_BACKEND:-cpu}
    echo "## pipe: $FRAMES frames 3840x2160 4:2:0 16-bit, --backend $b, $THREADS threads, median of $REPEAT rounds"
    progs=(after cat)
    [[ -n ${TESSERA_BEFORE:-} ]] && progs=(before after cat)
    declare -A times
    for ((rep = 0; rep < REPEAT; rep++)); do
        for k in "${progs[@]}"; do
            t0=$(now)
            case $k in
            after) cat "$TMPD/uhd16.y4m" | "$TESSERA" --backend "$b" --threads "$THREADS" --quiet deband - - | cat > /dev/null ;;
            before) cat "$TMPD/uhd16.y4m" | "$TESSERA_BEFORE" --backend "$b" --threads "$THREADS" --quiet deband - - | cat > /dev/null ;;
            cat) cat "$TMPD/uhd16.y4m" | cat > /dev/null ;;
            esac
            t1=$(now)
            times[$k]="${times[$k]:-} $(calc "$FRAMES / ($t1 - $t0)")"
        done
    done
    median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
    for k in "${progs[@]}"; do
        case $k in
        after) name="tessera deband ($TESSERA)" ;;
        before) name="tessera deband ($TESSERA_BEFORE)" ;;
        cat) name="cat | cat (the pipe alone)" ;;
        esac
        echo "$name: median $(median <<< "${times[$k]}") fps (runs:${times[$k]})"
    done
fi
