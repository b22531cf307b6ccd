#!/usr/bin/env bash
# One batched device call for std::attention (issue 15): the GPU tests
# against SDPA, benchmarks/attention.py, compute-sanitizer memcheck and
# racecheck on every attention kernel.
# usage on the device machine, from the checkout's root:
#   CACHE=path/to/prewarmed/cache bash benchmarks/attention_device.sh [bench args]
# Pre-warm the cache on any machine first (the device's time is scarce):
#   TILEC_CACHE_DIR=.dev/h15cache python benchmarks/attention_prewarm.py --cubin sm_90
set -uo pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
WHL=${WHL:-.whl}
if ls "$WHL"/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site "$WHL"/*.whl \
    && export PYTHONPATH=$PYTHONPATH:/tmp/site
fi
export TILEC_CACHE_DIR=/tmp/tilec-cache
mkdir -p "$TILEC_CACHE_DIR"
if [[ -n ${CACHE:-} && -d $CACHE ]]; then cp -r "$CACHE"/. "$TILEC_CACHE_DIR"/; fi
nvidia-smi -L; git log -1 --format='commit %h %cd' 2>/dev/null || true
date -u
timeout ${TEST_TIMEOUT:-40} python3 -m pytest -q -p no:cacheprovider tests/std/test_attention_gpu.py \
  "tests/api/test_api_gpu.py::test_torch_attention_example_on_the_gpu" 2>&1 | tee "$OUT/attention_gpu_tests.log" | tail -15
timeout ${BENCH_TIMEOUT:-60} python3 benchmarks/attention.py --quick --reps ${REPS:-5} --out "$OUT" "$@" 2>&1 \
  | tee "$OUT/attention_bench.log" | tail -20
for tool in memcheck racecheck; do
  timeout ${SAN_TIMEOUT:-40} compute-sanitizer --tool $tool --print-limit 20 python3 benchmarks/attention_sanitize.py \
    > "$OUT/attention_sanitizer_$tool.log" 2>&1
  echo "$tool (rc $?): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/attention_sanitizer_$tool.log" | tail -1)"
  grep -E "err " "$OUT/attention_sanitizer_$tool.log" | head -5
done
