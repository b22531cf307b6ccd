#!/usr/bin/env bash
# huser10 (2026-12-05, no device time of its own): benchmarks/wgmma_diff.py's random tensor-core programs on a
# real GPU against the interpreter: the Hopper GEMM pipeline (TMA or the register-copy producer, MN-/K-major
# descriptors, 64/128 x 8..256 tiles, edges in M, N and K, element-wise/cast epilogues, hints) and the attention
# pipeline (S = Q K^T, a random body, the register-A second product, carried row statistics, rescales, 3-D
# heads), with near-misses on mma.sync. Integer inputs, powers of two: all but the softmax rows must agree bit
# for bit. On the CPU they agree with llsim at sm_90a (and sm_80 for a quarter) on every program tried
# (RESULTS.md, "huser10"); a card adds what llsim does not model: the real wgmma, TMA and swizzle hardware,
# ptxas, the mbarrier ring's timing (llsim runs one thread at a time), real pointers' alignment.
# From the repo root after `pip install --no-deps -e .`, TILEC_CACHE_DIR set by the caller; ~100 s on a warm
# machine: N (8) processes side by side, each starting programs for BUDGET (80) s.
# usage: bash benchmarks/huser10_device.sh      (ARCH=sm_90a runs the same through llsim, for a dry run)
# Prints one line a disagreement or error and one summary line a process; writes $OUT/huser10.tgz (the programs).
set -uo pipefail
. benchmarks/device_env.sh huser10
N=${N:-8}; BUDGET=${BUDGET:-80}; ARCH=${ARCH:-gpu}
for i in $(seq 0 $((N - 1))); do
  s0=$((20000 + i * 125))
  timeout $((BUDGET + 40)) python3 benchmarks/wgmma_diff.py "$s0" $((s0 + 125)) --arch "$ARCH" --budget "$BUDGET" \
    --out "$D/p$i" > "$D/run$i.log" 2>&1 &
done
wait
for i in $(seq 0 $((N - 1))); do
  if grep -q "^wgmma_diff" "$D/run$i.log"; then
    grep -E "DISAGREE|Error|interpreter:|^wgmma_diff" "$D/run$i.log"
  else
    echo "huser10 process $i: no summary line (timed out?): $(tail -n 1 "$D/run$i.log")"
  fi
done
echo "huser10 total: $(cat "$D"/run*.log | grep -o '[0-9]* programs, [0-9]* problems' \
  | awk '{p += $1; b += $3} END {print p " programs, " b " problems"}')"
pack
