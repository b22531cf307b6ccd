#!/usr/bin/env bash
# One device call for issue 14's row kernels (h14b): GPU tests of the layouts
# and reductions, benchmarks/rows.py, compute-sanitizer on the row cases.
# usage on the device machine, from the tree's root: bash benchmarks/rows_device.sh
set -uo pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export TILEC_CACHE_DIR=/tmp/tilec-cache
nvidia-smi -L
if [[ ${SECTIONS:-rows,tests,san,ex} == *rows* ]]; then
echo "== rows.py $(date +%T)"
timeout ${T_ROWS:-110} python3 benchmarks/rows.py --out "$OUT" --reps 8 2>&1 | tee "$OUT/rows.log" | grep -vE "^  (tile|triton) " | tail -16
fi
if [[ ${SECTIONS:-rows,tests,san,ex} == *tests* ]]; then
echo "== tests $(date +%T)"
timeout ${T_TESTS:-45} python3 -m pytest -q -p no:cacheprovider tests/backend/test_gpu_rows.py tests/backend/test_gpu.py \
  2>&1 | tee "$OUT/pytest.log" | grep -E "passed|failed|FAILED|Error" | head -20
fi
if [[ ${SECTIONS:-rows,tests,san,ex} == *san* ]]; then
for tool in memcheck racecheck synccheck; do
  echo "== $tool $(date +%T)"
  timeout ${T_SAN:-25} compute-sanitizer --tool $tool --print-limit 5 python3 benchmarks/rows_sanitize.py 2>&1 \
    | tee "$OUT/sanitizer_$tool.log" | grep -E "SUMMARY|rows_sanitize|MISMATCH|Hazard|Invalid" | head -5
done
fi
if [[ ${SECTIONS:-rows,tests,san,ex} == *ex* ]]; then
echo "== examples $(date +%T)"
timeout ${T_EX:-30} python3 -m pytest -q -p no:cacheprovider tests/backend/test_gpu_examples.py 2>&1 \
  | tee "$OUT/pytest_examples.log" | grep -E "passed|failed|FAILED|Error" | head -10
fi
echo "== done $(date +%T)"
