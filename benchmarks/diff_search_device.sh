# Sourced by the differential searches' device scripts (huser9_device.sh: layout_diff.py, huser10_device.sh:
# wgmma_diff.py), from the checkout's root after `. benchmarks/device_env.sh NAME`:
#   diff_search NAME SCRIPT SEED0
# N (8) processes side by side, process i over seeds SEED0 + 125 i .. + 125, each starting programs for BUDGET
# (80) s at ARCH (gpu; sm_90a runs the same through llsim, for a dry run); prints one line a disagreement or
# error, one summary line a process and the total; packs $D (the programs and logs).
diff_search() {
  local name=$1 script=$2 seed0=$3 tool
  tool=$(basename "$script" .py)
  N=${N:-8}; BUDGET=${BUDGET:-80}; ARCH=${ARCH:-gpu}
  for i in $(seq 0 $((N - 1))); do
    s0=$((seed0 + i * 125))
    timeout $((BUDGET + 40)) python3 "$script" "$s0" $((s0 + 125)) --arch "$ARCH" --budget "$BUDGET" \
      --out "$D/p$i" > "$D/run$i.log" 2>&1 &
  done
  wait
  for i in $(seq 0 $((N - 1))); do
    if grep -q "^$tool" "$D/run$i.log"; then
      grep -E "DISAGREE|Error|interpreter:|^$tool" "$D/run$i.log"
    else
      echo "$name process $i: no summary line (timed out?): $(tail -n 1 "$D/run$i.log")"
    fi
  done
  echo "$name total: $(cat "$D"/run*.log | grep -o '[0-9]* programs, [0-9]* problems' \
    | awk '{p += $1; b += $3} END {print p " programs, " b " problems"}')"
  pack
}
