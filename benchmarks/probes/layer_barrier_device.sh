#!/usr/bin/env bash
# Issue 17, the persistent-layer probe on the device (one call). Run from the
# tree's root with the cubin built on the CPU machine beside the tree:
#   python3 benchmarks/probes/layer_barrier.py --build --cubin ../layer_barrier.cubin
# then OUT=... bash benchmarks/probes/layer_barrier_device.sh (../commit.txt: the commit).
# 1. layer_barrier.py: forms (a)-(d), the GEMVs alone, cuBLAS, the copy bandwidth.
# 2. with SWEEP=1, gemv_sweep.py --engine: the engine's Tile GEMVs on the same
#    card, for the probe's GEMV rate against the engine's (off by default: the
#    probe's cuBLAS row and the recorded Tile/cuBLAS ratios cost no device time).
set -u
D=${OUT:-/tmp/lb_out}
mkdir -p "$D"
CUBIN=${CUBIN:-../layer_barrier.cubin}
{
  echo "tree $(cat ../commit.txt 2>/dev/null || echo '?') cubin $(sha256sum "$CUBIN" | cut -c1-12) $(date -u)"
  nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,power.limit --format=csv
  echo "nvcc here: $(command -v nvcc || echo none)"
} 2>&1 | tee "$D/probe.log"
timeout ${PROBE_TIMEOUT:-90} python3 benchmarks/probes/layer_barrier.py --cubin "$CUBIN" --out "$D/probe.json" 2>&1 \
  | tee -a "$D/probe.log"
echo "probe rc ${PIPESTATUS[0]}" | tee -a "$D/probe.log"
[ "${SWEEP:-0}" = 1 ] || exit 0
timeout ${SWEEP_TIMEOUT:-55} python3 benchmarks/gemv_sweep.py --config qwen3-4b --engine --mats qkv,o,gate_up,down \
  --reps 5 --budget 40 2>&1 | grep -v Warning | tee "$D/sweep.log"
echo "sweep rc ${PIPESTATUS[0]}" | tee -a "$D/sweep.log"
