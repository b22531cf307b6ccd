#!/usr/bin/env bash
# The 2026-12-06 07:04 session's first call: the prefill variance probe in three processes (issue 15: our rows
# varied by up to 45 % between processes on one main; SDPA's by <= 3 %), then call5.sh's suite and tables.
# Expected (written before the run): if placement, slow allocations next to fast ones within a process; if the
# SMs' shared-memory configuration, "Tile after SDPA" slower than "Tile alone"; if a variant choice, the kernel
# name differs between processes; if clocks, the nvidia-smi column differs between slow and fast rows.
. benchmarks/device_calls/preamble.sh
W=$OUT/c6; mkdir -p "$W"
for i in 1 2 3; do
  timeout ${T_PROBE:-90} python3 -W ignore benchmarks/prefill_variance.py --allocs ${ALLOCS:-3} --reps ${REPS:-20} > "$W/probe$i.log" 2>&1
  echo "probe $i rc=$? ($((SECONDS-t0)) s)"; cat "$W/probe$i.log" | cut -c1-400
done
[ "${PROBE_ONLY:-0}" = 1 ] && exit 0
bash benchmarks/device_calls/call5.sh
