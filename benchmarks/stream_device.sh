#!/usr/bin/env bash
# One device call for issue 17 (h17, 2026-12-03 fifth session): the decode
# GEMVs as persistent balanced streams (`std::llm::stream::gemv_stream`,
# `Plan.sk`: SMs x MB blocks walk equal shares of the layer's [BN, BK] weight
# tiles through one cp.async ring, row sums added atomically) against main's
# one-wave register forms, in ONE decode_ab process at 4B 1,024 (main's plan
# first, in the middle and last; each matrix alone, then together, then the
# same in reverse order: the card's drift), per-kind profiles of main's plan
# and the first combined form; then 8,192; the GEMVs alone (gemv_sweep.py
# --stream, the engine's shapes and cuBLAS in the same process); the GPU test
# against TorchQwen3. S*: the stream shapes "BN, BK, ST, MB"; T*: timeouts.
# From the checkout's root: OUT=dir bash benchmarks/stream_device.sh; one
# file back, $OUT/sk.tgz.
set -uo pipefail
. benchmarks/device_env.sh sk
nvidia-smi -L; date -u; echo "tree ${TREE:-unknown: pass TREE=<commit>}"
A=${SA:-"16, 256, 4, 3"}; B=${SB:-"16, 256, 4, 4"}; C=${SC:-"16, 256, 6, 3"}; E=${SE:-"8, 256, 8, 4"}
sk() {  # shape, matrices...: a variant with those matrices streamed in that shape
  local s=$1 out="" m; shift
  for m in "$@"; do out="$out${out:+, }\"$m\": [$s]"; done
  echo "{\"sk\": {$out}}"; }
ALL="o gate_up down"; NOPDL='{"pdl": false}'
V1=${V1:-"[{}, $(sk "$A" o), $(sk "$A" down), $(sk "$A" gate_up down), $(sk "$A" $ALL),
  {}, $(sk "$B" $ALL), $(sk "$C" $ALL), $(sk "$E" $ALL),
  $(sk "$A" $ALL), $(sk "$A" gate_up down), $(sk "$A" down), $(sk "$A" o), {},
  $NOPDL, $(sk "$A" $ALL | sed 's/}}$/}, "pdl": false}/')]"}
V8=${V8:-"[{}, $(sk "$A" $ALL), $(sk "$B" $ALL), {}]"}
ab() {  # name timeout args...
  local n=$1 t=$2; shift 2
  timeout $t python3 benchmarks/decode_ab.py "$@" --out "$D/$n" > "$D/$n.log" 2>&1
  grep -v Warn "$D/$n.log" | grep -v "^$" | grep -v "^|---" | tail -${TAIL:-80}; pack
}
ab sk_4b ${T1:-100} --model 4b --contexts 1024 --variants "$V1" --profile-first 5
TAIL=6 ab sk_4b_8k ${T8:-30} --model 4b --contexts 8192 --variants "$V8" --rounds 2
sw() {  # name timeout args...
  local n=$1 t=$2; shift 2
  timeout $t python3 benchmarks/gemv_sweep.py --reps 5 --out "$D/$n" "$@" > "$D/$n.log" 2>&1
  grep -v Warn "$D/$n.log" | grep -v "^$" | grep -v "^plan:" | tail -30; pack
}
sw sw_stream ${TS:-22} --mats o,gate_up,down,qkv --stream --only "4:16:256:3,4:16:256:4,6:16:256:3,8:8:256:4" --budget 20
sw sw_main ${TS:-22} --mats o,gate_up,down,qkv --engine --budget 20
timeout ${TT:-40} python3 -m pytest -q -p no:cacheprovider tests/llm/test_engine_gpu.py -k "streamed" \
  > "$D/tests.log" 2>&1; tail -3 "$D/tests.log"; pack
date -u
