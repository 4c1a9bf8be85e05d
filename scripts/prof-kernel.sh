#!/usr/bin/env bash
# Nsight Compute on one CUDA variant (GPU machine): one launch per case on an 8192x8192 random
# 8-bit image (W and H override; OUTFILE is the output path), printing the kernel time,
# instruction count, occupancy, issue activity, DRAM throughput and the stall reasons per issued
# instruction; with MEM=1 also the DRAM bytes, L2 hit rate and throughput and the L1 traffic
# (bandwidth questions). Output: $OUT/ncu-LABEL.txt.
#   scripts/prof-kernel.sh LABEL KERNEL_REGEX VARIANT "OP ARGS" ["OP ARGS" ...]
# e.g. scripts/prof-kernel.sh wide tsr__box_wide wide "box --radius 1" "box --radius 64"
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
label=$1 kernel=$2 variant=$3
shift 3
W=${W:-8192} H=${H:-8192}
python3 -c "
import numpy as np
a = np.random.default_rng(1).integers(0, 256, ($H, $W), dtype=np.uint8)
open('/tmp/tsr-prof.pgm', 'wb').write(b'P5 $W $H 255\n' + a.tobytes())"
metrics='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,smsp__inst_executed.sum,'
metrics+='sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,'
metrics+='gpu__time_duration.sum,launch__registers_per_thread,launch__grid_size,dram__throughput.avg.pct_of_peak_sustained_elapsed'
if [ "${MEM:-0}" = 1 ]; then
    metrics+=',dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,lts__t_bytes.sum,'
    metrics+='l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sector_hit_rate.pct,sm__maximum_warps_per_active_cycle_pct,'
    metrics+='lts__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__throughput.avg.pct_of_peak_sustained_active'
fi
for args in "$@"; do
    echo "== $variant: $args"
    # shellcheck disable=SC2086
    ncu --kernel-name regex:"$kernel" --launch-count 1 --page raw --metrics "$metrics" \
        ./build/tessera --backend cuda --variant "$variant" $args /tmp/tsr-prof.pgm "${OUTFILE:-/tmp/tsr-prof-out.pgm}" |
        grep -E 'smsp__|sm__|gpu__|launch__|dram__|lts__|l1tex__' | awk '$NF+0 > 0.05 || /inst_executed|duration|registers|pct|grid|bytes/'
done >"$OUT/ncu-$label.txt" 2>&1
