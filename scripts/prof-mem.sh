#!/usr/bin/env bash
# Nsight Compute memory view of one CUDA variant (GPU machine): like prof-kernel.sh, plus the
# DRAM bytes, L2 hit rate, L1 traffic and bytes in flight, for bandwidth questions.
#   scripts/prof-mem.sh LABEL KERNEL_REGEX VARIANT "OP ARGS" ["OP ARGS" ...]
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
label=$1 kernel=$2 variant=$3
shift 3
W=${W:-8192} H=${H:-8192}
[ -f /tmp/tsr-prof.pgm ] || python3 -c "
import numpy as np
a = np.random.default_rng(1).integers(0, 256, ($H, $W), dtype=np.uint8)
open('/tmp/tsr-prof.pgm', 'wb').write(b'P5 $W $H 255\n' + a.tobytes())"
metrics='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,smsp__inst_executed.sum,'
metrics+='sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,'
metrics+='gpu__time_duration.sum,launch__registers_per_thread,launch__grid_size,dram__throughput.avg.pct_of_peak_sustained_elapsed,'
metrics+='dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,lts__t_bytes.sum,'
metrics+='l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sector_hit_rate.pct,launch__occupancy_limit_registers,'
metrics+='sm__maximum_warps_per_active_cycle_pct,lts__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__throughput.avg.pct_of_peak_sustained_active'
for args in "$@"; do
    echo "== $variant: $args"
    # shellcheck disable=SC2086
    ncu --kernel-name regex:"$kernel" --launch-count 1 --page raw --metrics "$metrics" \
        ./build/tessera --backend cuda --variant "$variant" $args /tmp/tsr-prof.pgm /tmp/tsr-prof-out.pgm |
        grep -E 'smsp__|sm__|gpu__|launch__|dram__|lts__|l1tex__' | awk '$NF+0 > 0.05 || /inst_executed|duration|registers|pct|grid|bytes/'
done >"$OUT/ncu-$label.txt" 2>&1
