#!/usr/bin/env bash
# make demo: run every operation on a bundled photo (or the image given as $1), write the
# results and an index.html that shows them side by side with their timings to demo-out/, and
# print a summary table.
set -eu
cd "$(dirname "$0")/.."
T=${TSR_BIN:-$PWD/build/tessera}
IN=${1:-data/images/coffee.png}
OUT=${DEMO_OUT:-demo-out}
mkdir -p "$OUT"
cp "$IN" "$OUT/input.${IN##*.}"
rows=""
table=""

# run NAME OUTFILE INPUT ARGS...: run one operation with --time, keep the backend and kernel time.
run() {
    local name=$1 out=$2 input=$3; shift 3
    local err
    if ! err=$("$T" --time "$@" "$input" "$OUT/$out" 2>&1); then
        echo "demo: $name failed: $err" >&2
        exit 1
    fi
    local backend kernel total
    backend=$(grep -o "ran on [a-z]*" <<<"$err" | head -n 1 | cut -d' ' -f3)
    kernel=$(grep -o "kernel [0-9.]* ms" <<<"$err" | grep -o "[0-9.]*")
    total=$(grep -o "[a-z]* [0-9.]* ms" <<<"$err" | awk '{ s += $2 } END { printf "%.2f", s }')
    table="$table$(printf '%-22s %-8s %10s %10s  %s' "$name" "$backend" "$kernel" "$total" "$OUT/$out")\n"
    rows="$rows<figure><figcaption><b>$name</b><br><code>tessera $*</code><br>$backend: kernel $kernel ms, all stages $total ms</figcaption>"
    case $out in
        *.txt) rows="$rows$(sparkline "$OUT/$out")";;
        *) rows="$rows<img src=\"$out\">";;
    esac
    rows="$rows</figure>"
}

# An inline SVG plot of the first number on each line of a sums file.
sparkline() {
    awk 'BEGIN { max = 1 } { v[NR] = $1; if ($1 > max) max = $1 }
         END { printf "<svg width=\"400\" height=\"160\" viewBox=\"0 0 %d 160\" preserveAspectRatio=\"none\"><polyline fill=\"none\" stroke=\"#36c\" points=\"", NR;
               for (i = 1; i <= NR; i++) printf "%d,%.1f ", i - 1, 158 - 156 * v[i] / max;
               printf "\"/></svg>" }' "$1"
}

run "invert" invert.png "$IN" invert
run "box filter, radius 7" box7.png "$IN" box --radius 7
run "box filter, radius 31" box31.png "$IN" box --radius 31 --border replicate
run "gray" gray.png "$IN" gray
run "adaptive threshold" threshold.png "$OUT/gray.png" threshold --block 25 --c 8
run "resize to 1/3 (area)" resize.png "$IN" resize --width "$("$T" info "$IN" | sed -E 's/.* ([0-9]+)x([0-9]+),.*/\1/' | awk '{ print int($1 / 3) }')" \
    --height "$("$T" info "$IN" | sed -E 's/.* ([0-9]+)x([0-9]+),.*/\2/' | awk '{ print int($1 / 3) }')"
run "column sums of gray" colsums.txt "$OUT/gray.png" sums --axis columns
run "row sums of gray" rowsums.txt "$OUT/gray.png" sums --axis rows

cat >"$OUT/index.html" <<EOF
<!doctype html>
<html><head><meta charset="utf-8"><title>tessera demo</title>
<style>
body { font-family: sans-serif; margin: 1.5em; background: #fafafa; }
main { display: flex; flex-wrap: wrap; gap: 1em; }
figure { margin: 0; padding: 0.6em; background: white; border: 1px solid #ddd; max-width: 420px; }
figure img, figure svg { max-width: 400px; display: block; margin-top: 0.4em; background: #eee; }
code { font-size: 0.8em; }
</style></head><body>
<h1>tessera demo</h1>
<p>Input: <code>$IN</code> ($("$T" info "$IN" | cut -d: -f2-)). Build: $("$T" --version).</p>
<main>
<figure><figcaption><b>input</b></figcaption><img src="input.${IN##*.}"></figure>
$rows
</main></body></html>
EOF

printf '\ntessera demo on %s\n\n' "$IN"
printf '%-22s %-8s %10s %10s  %s\n' "operation" "backend" "kernel ms" "total ms" "output"
printf '%b' "$table"
printf '\nopen %s/index.html to see them side by side\n' "$OUT"
