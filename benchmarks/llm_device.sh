#!/usr/bin/env bash
# One batched device call for the LLM engine (issue 17): benchmarks/decode.py
# for the main model, optionally more, the GPU tests of tests/llm/ (engine vs
# the PyTorch reference, greedy tokens, prefill, constant memory over 10,000
# tokens), optionally a GEMV sweep first.
# usage on the device machine, from the checkout's root:
#   bash benchmarks/llm_device.sh [MODEL] [CONTEXTS] [PREFILL]
# env: TOKENS, EAGER (steps timed); PROFILE=1 (each kind of launch of a step,
# and of the prefill, timed as a graph: in decode.log and *_profile_*.md);
# NOREF=1 (no PyTorch reference); PLAN (JSON block shapes, decode.py --plan);
# MORE_MODELS (e.g. "0.6b,8b": also decoded at the first context, no
# prefill, no profile; MORE_NOREF=1: without the reference); TESTS=0 (skip the GPU tests; TESTS_K: a -k
# selection); SWEEP=1 (first benchmarks/gemv_sweep.py over GEMV block shapes;
# AUTOPLAN=1: decode with its best shapes); OLD_TREE=dir (last, the sweep's
# first candidates with that tree's code: a before/after comparison).
# Everything it writes goes to a folder llm/ packed into $OUT/llm.tgz after
# each step (one file: a device call returns few; a step cut short by a
# timeout leaves the earlier steps' files); the summaries go to stdout.
set -uo pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
W=$(mktemp -d /tmp/llm-device.XXXX); D="$W/llm"; mkdir -p "$D"  # packed into $OUT, never left there
WHL=${WHL:-.whl}
if ls "$WHL"/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site "$WHL"/*.whl \
    && export PYTHONPATH=$PYTHONPATH:/tmp/site
fi
export TILEC_CACHE_DIR=${TILEC_CACHE_DIR:-/tmp/tilec-cache}
pack() { tar -C "$W" -czf "$W/llm.tgz" llm && cp "$W/llm.tgz" "$OUT/llm.tgz"; }  # after each step
nvidia-smi -L; git log -1 --format='commit %h %cd' 2>/dev/null || true
if [[ ${SWEEP:-0} == 1 ]]; then
  timeout ${SWEEP_TIMEOUT:-90} python3 benchmarks/gemv_sweep.py --out "$D" --budget ${SWEEP_BUDGET:-60} 2>&1 \
    | grep -v Warning > "$D/gemv_sweep.log"; cat "$D/gemv_sweep.log"
  if [[ ${AUTOPLAN:-0} == 1 && -s "$D/plan.json" ]]; then PLAN=$(cat "$D/plan.json"); fi
  pack
fi
CTX=${2:-1024}
timeout ${BENCH_TIMEOUT:-300} python3 benchmarks/decode.py --models "${1:-4b}" --contexts "$CTX" \
  --tokens ${TOKENS:-32} --eager-tokens ${EAGER:-4} --prefill "${3:-2048}" ${PROFILE:+--profile-step} \
  ${PLAN:+--plan "$PLAN"} ${NOREF:+--no-reference} --out "$D" > "$D/decode.log" 2>&1
grep -v "^|" "$D/decode.log" | grep -v "^$" | tail -20; grep "^|" "$D/decode.log" | head -70
pack
if [[ -n ${MORE_MODELS:-} ]]; then
  timeout ${MORE_TIMEOUT:-120} python3 benchmarks/decode.py --models "$MORE_MODELS" --contexts "${CTX%%,*}" \
    --tokens ${TOKENS:-32} --eager-tokens ${EAGER:-4} --prefill 0 ${PLAN:+--plan "$PLAN"} \
    ${NOREF:+--no-reference} ${MORE_NOREF:+--no-reference} --out "$D/more" > "$D/decode_more.log" 2>&1
  grep " ctx " "$D/decode_more.log"; grep -i "error\|failed" "$D/decode_more.log" | tail -3
  pack
fi
if [[ ${TESTS:-1} == 1 ]]; then
  timeout ${TEST_TIMEOUT:-200} python3 -m pytest -q -p no:cacheprovider tests/llm/test_engine_gpu.py ${TESTS_K:+-k "$TESTS_K"} 2>&1 | tee "$D/llm_gpu_tests.log" | tail -3
  pack
fi
if [[ -n ${OLD_TREE:-} ]]; then
  (cd "$OLD_TREE" && TILEC_CACHE_DIR=$TILEC_CACHE_DIR-old PYTHONPATH=$PWD:/tmp/site timeout ${OLD_TIMEOUT:-40} \
    python3 benchmarks/gemv_sweep.py --baseline 2>&1 | grep -v Warning) | tee "$D/gemv_baseline_old.log"
fi
pack && rm -rf "$W"
