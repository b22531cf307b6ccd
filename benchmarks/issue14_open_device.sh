#!/usr/bin/env bash
# Issue 14's two open targets in one device call (helper h14, 2026-12-02):
#   sweep   the sm_80 path (TILEC_ARCH=sm_80) at 8192^3 ($DT: f16,bf16) over $SWEEP configs
#   variants the same under other settings: VARIANTS="ENV=1 ENV2=1:cfg,cfg;ENV=1:cfg"
#   first   benchmarks/gemm.py --only first (fresh process, empty cache)
#   probe   benchmarks/first_launch_probe.py (the first launch piece by piece)
#   trace   benchmarks/first_launch_trace.py $TRACE (a timeline of the first launch, by thread)
#   ab      benchmarks/first_launch_ab.py $AB (variants of the first launch, fresh processes in turn)
#   tests   tests/backend/test_sm80.py -m gpu (the sm_80 path against the interpreter)
#   hopper  the wgmma GEMM at 8192^3 $HDT (f16,bf16; 128x256x64 w8 s4) against cuBLAS
#   edge    the register-copy producer GEMM at 8191^3 f16 (128x256x64 w8 s4) against cuBLAS, checked
#   ncu     warp stall reasons of the sm_80 GEMM at $NCU_CFG (skipped if ncu is missing)
# Steps run in the order STEPS names them, each under `timeout`; logs in $OUT/h14/, tarred to $OUT/h14.tgz.
# usage, from a checkout root: OUT=... STEPS=hopper,first,ab,sweep bash benchmarks/issue14_open_device.sh
set -uo pipefail
OUT=${OUT:-/tmp/out}; O=$OUT/h14; mkdir -p "$O"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
WHL=${WHL:-../../.whl}
if ! python3 -c "import lark" 2>/dev/null; then
  timeout 20 python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$WHL"/*.whl \
    && export PYTHONPATH=$PYTHONPATH:/tmp/site
fi
timeout 20 python3 -m compileall -q tilelang tests/backend/gemm_cases.py > /dev/null 2>&1
STEPS=${STEPS:-sweep,first,probe}
SWEEP=${SWEEP:-128x256x64,256x128x32,128x128x32}
VARIANTS=${VARIANTS:-}
NCU_CFG=${NCU_CFG:-128 128 32 4 4}
T0=$SECONDS
step_sweep() {
  SM80_CONFIGS=$SWEEP TILEC_ARCH=sm_80 TILEC_CACHE_DIR=/tmp/tc-h14a timeout ${SWEEP_T:-30} \
    python3 benchmarks/gemm.py --only square80 --dtypes ${DT:-f16,bf16} > "$O/sweep.log" 2>&1
  echo "== sweep rc $? ($((SECONDS - T0)) s)"; grep -E "^\s+\[|^\[" "$O/sweep.log"
}
step_variants() {  # VARIANTS="ENV=1 ENV2=1:cfg,cfg;ENV=1:cfg": the same sweep under other settings
  [[ -n "$VARIANTS" ]] || return 0
  IFS=';' read -ra VS <<< "$VARIANTS"
  i=0
  for v in "${VS[@]}"; do
    i=$((i + 1))
    env ${v%%:*} SM80_CONFIGS=${v#*:} TILEC_ARCH=sm_80 TILEC_CACHE_DIR=/tmp/tc-h14v$i timeout ${VAR_T:-14} \
      python3 benchmarks/gemm.py --only square80 --dtypes ${VAR_DT:-f16} > "$O/variant$i.log" 2>&1
    echo "== variant $i (${v%%:*}) rc $? ($((SECONDS - T0)) s)"; grep -E "^\s+\[|^\[" "$O/variant$i.log"
  done
}
step_trace() {  # TRACE="label=ROOT[:ENV=V,ENV=V] ...": stages, CUDA steps and sampled stacks, by thread
  timeout ${TRACE_T:-40} python3 benchmarks/first_launch_trace.py ${TRACE:-this=.} > "$O/trace.log" 2>&1
  echo "== trace rc $? ($((SECONDS - T0)) s)"
  grep -E "^=== |^TRACE|^JIT|^EV .*(from_ptx|_warm_driver_jit|llvm_to_ptx|CudaDevice|compile_kernel|first sync)" "$O/trace.log"
}
step_first() {
  timeout ${FIRST_T:-22} python3 benchmarks/gemm.py --only first > "$O/first.log" 2>&1
  echo "== first rc $? ($((SECONDS - T0)) s)"; grep -E "^\[first\] first|FIRST" "$O/first.log"
}
step_probe() {
  CUDA_CACHE_DISABLE=1 TILEC_CACHE_DIR=/tmp/tc-h14c timeout 14 python3 benchmarks/first_launch_probe.py > "$O/probe.log" 2>&1
  echo "== probe rc $? ($((SECONDS - T0)) s)"; grep PROBE "$O/probe.log"
}
step_tests() {  # the sm_80 path on the GPU against the interpreter (edges, K < tile, one row/column)
  timeout ${TESTS_T:-25} python3 -m pytest -q -p no:cacheprovider -m gpu tests/backend/test_sm80.py > "$O/sm80_tests.log" 2>&1
  echo "== sm_80 GPU tests rc $? ($((SECONDS - T0)) s): $(tail -1 "$O/sm80_tests.log")"
}
step_edge() {  # odd strides: the register-copy producer (LLVM -O1 again since the third session)
  timeout ${EDGE_T:-15} python3 -c "import sys; sys.argv = ['gemm.py']; sys.path.insert(0, 'benchmarks'); import gemm; \
gemm.measure('f16 NN 8191^3 copy producer', 8191, 8191, 8191, 'f16', False, configs=gemm.TILE_CONFIGS[:1], triton=False)" \
    > "$O/edge.log" 2>&1
  echo "== edge rc $? ($((SECONDS - T0)) s)"; grep -E "^\s+\[|^\[" "$O/edge.log"
}
step_ab() {  # AB="REPS label=ROOT[:ENV=V] ...", DIAG=label: a profile and an importtime log of that one
  PROFILE=${DIAG:+1} IMPORTTIME=${DIAG:+$O/imp} timeout ${AB_T:-60} python3 benchmarks/first_launch_ab.py ${AB:-3} > "$O/ab.log" 2>&1
  echo "== ab rc $? ($((SECONDS - T0)) s)"; grep -E "^\[ab\] [^ ]+ run|^\[ab\] [^ ]+: median|FAILED" "$O/ab.log" | cut -c1-220
}
step_hopper() {  # the wgmma GEMM at 8192^3 ($HDT: f16[,bf16]), 128x256x64 w8 s4, against cuBLAS
  timeout ${HOPPER_T:-15} python3 -c "import sys; sys.argv = ['gemm.py']; sys.path.insert(0, 'benchmarks'); import gemm; \
[gemm.measure(f'{d} NN 8192^3 wgmma', 8192, 8192, 8192, d, False, configs=gemm.TILE_CONFIGS[:1], triton=False) \
 for d in '${HDT:-f16}'.split(',')]" > "$O/hopper.log" 2>&1
  echo "== hopper rc $? ($((SECONDS - T0)) s)"; grep -E "^\s+\[|^\[" "$O/hopper.log"
}
step_ncu() {
  command -v ncu > /dev/null || return 0
  CFG=$NCU_CFG TILEC_ARCH=sm_80 TILEC_CACHE_DIR=/tmp/tc-h14a timeout ${NCU_T:-25} ncu --clock-control none -k regex:gemm -s 1 -c 1 \
    --section WarpStateStats \
    --metrics l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,smsp__inst_executed_pipe_tensor_op_hmma.sum,smsp__inst_executed.sum,lts__t_bytes.sum,dram__bytes_read.sum,gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second \
    python3 benchmarks/ncu_sm80_probe.py > "$O/ncu.log" 2>&1
  echo "== ncu rc $? ($((SECONDS - T0)) s)"; grep -E "Stall|stall|Warp Cycles|Issued|bank|hmma|inst_executed|duration|per_second|lts__t|dram__|Active Warps|Eligible|No Eligible" "$O/ncu.log" | head -60
}
for s in ${STEPS//,/ }; do  # in the order given
  if declare -F "step_$s" > /dev/null; then "step_$s"; else echo "== unknown step $s"; fi
done
echo "== total $((SECONDS - T0)) s"
tar czf "$OUT/h14.tgz" -C "$OUT" h14
