#!/usr/bin/env bash
# A session's final device call on main, one script: every open issue's
# measurements and the GPU correctness checks, each step under `timeout`, the
# outputs packed into ONE file ($OUT/final.tgz, repacked after each step, so a
# call cut short keeps what it had). On a warm H200 the default steps take
# ~215 s (2026-12-02, 14:26: rows 27, suite 54, rowsan 6, decode 37, prefill 41,
# engine 38, softmax_ab ~15 s); `gemm` adds ~100 s.
#
#   STEPS="rows suite rowsan decode prefill engine softmax_ab" bash benchmarks/final_call.sh
#
# Steps (functions below; STEPS picks and orders them):
#   rows        issue 14: benchmarks/rows.py --reps 8 (softmax, layernorm vs Triton; vector add)
#   gemm        issue 14: benchmarks/gemm.py --configs 2, every section (GEMM vs cuBLAS and
#               Triton, 8191^3, linear shapes, sm_80 path, unsafe stores, first launch)
#   suite       every gpu-marked test but the serial device-memory one (8 xdist workers
#               when pytest-xdist is importable, e.g. carried as wheels in .dev/xd/)
#   rowsan      compute-sanitizer memcheck, racecheck, synccheck over the row kernels
#   gemmsan     the same over the GEMM kernels
#   decode      issue 15 decode: benchmarks/attention_device.sh DECODE_ONLY=1
#   prefill     issue 15 prefill: benchmarks/attention_prefill_device.sh
#   engine      issue 17: the 4B engine at ctx 1,024 (decode_ab, the plan twice) and
#               benchmarks/decode.py over the contexts and models (ENGINE_FULL=1)
#   softmax_ab  issue 14's open row: benchmarks/softmax_ab.py
# Needs lark: carry its wheel in .whl/ (the device's README says how).
set -uo pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
export TILEC_CACHE_DIR=${TILEC_CACHE_DIR:-/tmp/tilec-cache}
FINAL=${OUT:-/tmp/out}; mkdir -p "$FINAL"
W=$(mktemp -d /tmp/final-call.XXXX); O="$W/final"; mkdir -p "$O"
if ! python3 -c "import lark" 2>/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
    .whl/*.whl .dev/xd/*.whl 2>/dev/null
  export PYTHONPATH=$PYTHONPATH:/tmp/site
fi

step_rows() {
  timeout 150 python3 benchmarks/rows.py --reps 8 --out "$O/rows" > "$O/rows.log" 2>&1
  echo "rows rc=$?"; grep -vE "^  (tile|triton) " "$O/rows.log" | tail -20
}
step_gemm() {
  timeout 220 python3 benchmarks/gemm.py --configs 2 --out "$O/gemm" > "$O/gemm.log" 2>&1
  echo "gemm rc=$?"; grep -E "^\||first launch|unsafe" "$O/gemm.log" | tail -40
}
step_suite() {
  local par=()
  python3 -c "import xdist" 2>/dev/null && par=(-n 8)
  timeout "${T_SUITE:-200}" python3 -m pytest -q -p no:cacheprovider -m gpu "${par[@]}" tests/backend tests/runtime \
    tests/examples tests/repl tests/cli tests/api tests/std tests/llm -k 'not constant_over_10000' > "$O/suite.log" 2>&1
  echo "suite rc=$?"; grep -E "passed|failed|FAILED|ERROR" "$O/suite.log" | tail -15
}
step_rowsan() { OUT=$O SECTIONS=san T_SAN=30 bash benchmarks/rows_device.sh 2>&1 | tail -12; }
step_gemmsan() { OUT=$O STEPS=memcheck,racecheck,synccheck TOTAL=90 bash benchmarks/gemm_device.sh 2>&1 | tail -8; }
step_decode() { DECODE_ONLY=1 OUT=$O bash benchmarks/attention_device.sh 2>&1 | tail -40; }
step_prefill() { OUT=$O bash benchmarks/attention_prefill_device.sh 2>&1 | tail -60; }
step_engine() {
  timeout 70 python3 benchmarks/decode_ab.py --model 4b --contexts 1024 --rounds 5 --reps 6 --variants '[{}, {}]'
  if [[ ${ENGINE_FULL:-0} == 1 ]]; then
    timeout 300 python3 benchmarks/decode.py --models 4b --contexts 1024,8192,32768 --tokens 32 --eager-tokens 4 \
      --prefill 2048 --out "$O/engine" > "$O/engine.log" 2>&1
    echo "decode.py rc=$?"; tail -30 "$O/engine.log"
  fi
}
step_softmax_ab() { timeout 90 python3 benchmarks/softmax_ab.py --out "$O" 2>&1 | grep -v Warning | tail -30; }

nvidia-smi -L; nvidia-smi --query-gpu=clocks.max.sm,power.limit --format=csv,noheader
git log -1 --format='commit %h %cd' 2>/dev/null || true
for s in ${STEPS:-rows suite rowsan decode prefill engine softmax_ab}; do
  echo "===== step $s $(date +%T)"; t=$SECONDS
  ( "step_$s" ) 2>&1 | tee "$O/step_$s.log" | tail -"${TAILN:-45}"
  echo "===== step $s done in $((SECONDS - t)) s"
  tar -C "$W" -czf "$FINAL/final.tgz" final
done
rm -rf "$W"
