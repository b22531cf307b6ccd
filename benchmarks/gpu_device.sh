#!/usr/bin/env bash
# One batched device call (see benchmarks/RESULTS.md): GPU tests, benchmarks,
# compute-sanitizer memcheck + racecheck over every backend case.
# usage on the device machine: bash benchmarks/gpu_device.sh [sections]
set -uo pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=$PYTHONPATH:/tmp/site
fi
export TILEC_CACHE_DIR=/tmp/tilec-cache
nvidia-smi -L; python3 -c "import llvmlite, cuda.bindings, numpy; print('llvmlite', llvmlite.__version__, 'cuda.bindings', cuda.bindings.__version__, 'numpy', numpy.__version__)"
SECTIONS=${1:-tests,bench,sanitize}
if [[ $SECTIONS == *tests* ]]; then
  timeout 300 python3 -m pytest -q -p no:cacheprovider tests/backend ${TESTS_EXTRA:-} 2>&1 | tee "$OUT/pytest.log" | tail -40
fi
if [[ $SECTIONS == *bench* ]]; then
  timeout 240 python3 benchmarks/gpu_bench.py --out "$OUT" --only ${BENCH:-vecadd,first,first_example,launch,graph,gemm,softmax} 2>&1 | tee "$OUT/bench.log"
fi
if [[ $SECTIONS == *sanitize* ]]; then
  for tool in memcheck racecheck; do
    echo "== compute-sanitizer --tool $tool: backend cases"
    timeout 200 compute-sanitizer --tool $tool --print-limit 20 python3 benchmarks/gpu_bench.py --out /tmp/san --only cases 2>&1 \
      | tee "$OUT/sanitizer_$tool.log" | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Hazard|Invalid|cases\]|FAILED" | head -30
    echo "== compute-sanitizer --tool $tool: examples"
    for ex in examples/*.tile; do
      r=$(timeout 120 compute-sanitizer --tool $tool --print-limit 10 python3 -m tilelang run "$ex" --device gpu 2>&1 | tee -a "$OUT/sanitizer_${tool}_examples.log" | grep -E "ERROR SUMMARY|RACECHECK SUMMARY" | tail -1)
      echo "$tool $ex: ${r:-no summary (see log)}"
    done
  done
fi
