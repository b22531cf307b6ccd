#!/usr/bin/env bash
# One budgeted device call that re-measures a session's work on main (lead).
# Every step runs under `timeout`; a step starts only if the budget allows it.
# usage, from the repository root on the device: BUDGET=300 bash benchmarks/session_device.sh
#   STEPS: a comma list of api,launch,examples,sm80,gemm,llm (default: all)
set -uo pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
if ls .whl/*.whl >/dev/null 2>&1 && ! python3 -c "import lark" 2>/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=$PYTHONPATH:/tmp/site
fi
BUDGET=${BUDGET:-300}
STEPS=${STEPS:-api,launch,examples,sm80,gemm,llm}
T0=$SECONDS
left() { echo $(( BUDGET - (SECONDS - T0) )); }
want() { [[ ",$STEPS," == *",$1,"* ]]; }
step() {  # step NAME NEED_SECONDS
  want "$1" || return 1
  if (( $(left) < $2 )); then echo "== skipped $1: $(left) s left, needs $2" | tee -a "$OUT/session.txt"; return 1; fi
  echo "== $1 ($(left) s left)" | tee -a "$OUT/session.txt"
}
nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv | tee "$OUT/card.txt"
git log -1 --format='%H %cd' 2>/dev/null | tee -a "$OUT/card.txt"

if step api 50; then
  timeout 70 python3 -m pytest -q -m gpu -p no:cacheprovider tests/api/test_ecosystem_gpu.py \
    tests/api/test_api_gpu.py > "$OUT/api_gpu.log" 2>&1; echo "api rc=$?" >> "$OUT/session.txt"
  tail -3 "$OUT/api_gpu.log" >> "$OUT/session.txt"
fi
if step launch 25; then
  timeout 40 python3 benchmarks/launch.py --only gpu,graph,profile --out "$OUT/launch" > "$OUT/launch.log" 2>&1
  echo "launch rc=$?" >> "$OUT/session.txt"
fi
if step examples 40; then
  timeout 75 python3 -m pytest -q -m gpu -p no:cacheprovider tests/backend/test_gpu_examples.py \
    > "$OUT/examples_gpu.log" 2>&1; echo "examples rc=$?" >> "$OUT/session.txt"
  tail -3 "$OUT/examples_gpu.log" >> "$OUT/session.txt"
fi
if step sm80 60 && [[ -f benchmarks/sm80_device.sh ]]; then
  timeout 95 bash benchmarks/sm80_device.sh > "$OUT/sm80.log" 2>&1; echo "sm80 rc=$?" >> "$OUT/session.txt"
fi
if step gemm 40; then
  timeout 60 python3 benchmarks/gemm.py --only first > "$OUT/gemm_first.log" 2>&1
  grep '^\[first\]' "$OUT/gemm_first.log" >> "$OUT/session.txt"
fi
if step llm 50; then
  TOKENS=16 EAGER=2 timeout 80 bash benchmarks/llm_device.sh 4b 1024 2048 > "$OUT/llm.log" 2>&1
  echo "llm rc=$?" >> "$OUT/session.txt"
fi
echo "== done in $((SECONDS - T0)) s" | tee -a "$OUT/session.txt"
