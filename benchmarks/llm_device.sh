#!/usr/bin/env bash
# One batched device call for the LLM engine (issue 17): the GPU tests of
# tests/llm/ (engine vs the PyTorch reference, greedy tokens, prefill,
# constant memory over 10,000 tokens), then benchmarks/decode.py.
# usage on the device machine, from the checkout's root:
#   bash benchmarks/llm_device.sh [MODELS] [CONTEXTS] [PREFILL]
# env: TOKENS, EAGER (steps timed), PROFILE=1 (one step launch by launch under
# tilelang.profile(): GPU time per kernel, $OUT/step_profile_*.md)
set -uo pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
WHL=${WHL:-.whl}
if ls "$WHL"/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site "$WHL"/*.whl \
    && export PYTHONPATH=$PYTHONPATH:/tmp/site
fi
export TILEC_CACHE_DIR=${TILEC_CACHE_DIR:-/tmp/tilec-cache}
nvidia-smi -L; git log -1 --format='commit %h %cd' 2>/dev/null || true
timeout ${TEST_TIMEOUT:-200} python3 -m pytest -q -p no:cacheprovider tests/llm/test_engine_gpu.py 2>&1 | tee "$OUT/llm_gpu_tests.log" | tail -25
timeout ${BENCH_TIMEOUT:-300} python3 benchmarks/decode.py --models "${1:-4b}" --contexts "${2:-1024}" \
  --tokens ${TOKENS:-32} --eager-tokens ${EAGER:-4} --prefill "${3:-2048}" ${PROFILE:+--profile-step} --out "$OUT" 2>&1 | tee "$OUT/decode.log"
