#!/usr/bin/env bash
# Nsight Compute on box/wide (GPU machine): one launch per radius on an 8192x8192 random 8-bit
# image, with the stall reasons per issued instruction, instruction count, occupancy and issue
# activity. Output: $OUT/ncu-wide.txt. RADII and VARIANT override the radii and the variant.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
python3 -c "
import numpy as np
a = np.random.default_rng(1).integers(0, 256, (8192, 8192), dtype=np.uint8)
open('/tmp/tsr-prof.pgm', 'wb').write(b'P5 8192 8192 255\n' + a.tobytes())"
metrics='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,smsp__inst_executed.sum,'
metrics+='sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,'
metrics+='gpu__time_duration.sum,launch__registers_per_thread,smsp__thread_inst_executed_per_inst_executed.ratio'
for r in ${RADII:-1 15 64}; do
    echo "== ${VARIANT:-wide} r=$r"
    ncu --kernel-name regex:"${KERNEL:-tsr__box_wide}" --launch-count 1 --page raw --metrics "$metrics" \
        ./build/tessera --backend cuda --variant "${VARIANT:-wide}" box --radius "$r" /tmp/tsr-prof.pgm /tmp/tsr-prof-out.pgm |
        grep -E 'smsp__|sm__|gpu__|launch__' | awk '$NF+0 > 0.05 || /inst_executed|duration|registers|pct/'
done >"$OUT/ncu-wide.txt" 2>&1
