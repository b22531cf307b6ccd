#!/usr/bin/env bash
# One device call for issue 17 (h17, 2026-12-03 fifth session): the decode
# GEMVs as persistent balanced streams (`std::llm::stream::gemv_stream`,
# `Plan.sk`: SMs x MB blocks walk equal shares of the layer's [BN, BK] weight
# tiles through one cp.async ring, row sums added atomically) against main's
# one-wave register forms. First the GEMVs alone (`gemv_sweep.py --stream`
# over the candidates CANDS "ST:BN:BK:MB", then the engine's shapes, cuBLAS in
# each); the best stream shape of each matrix then goes into ONE decode_ab
# process at 4B 1,024 (main's plan first and last; each matrix alone, gate/up
# with down, all three; the same in reverse order; per-kind profiles of main
# and all three), then 8,192 and the GPU test against TorchQwen3. T*: timeouts.
# From the checkout's root: OUT=dir bash benchmarks/stream_device.sh; one
# file back, $OUT/sk.tgz.
set -uo pipefail
. benchmarks/device_env.sh sk
nvidia-smi -L; date -u; echo "tree ${TREE:-unknown: pass TREE=<commit>}"
CANDS=${CANDS:-"4:16:256:3,4:16:256:4,6:16:256:3,3:32:256:3,4:8:512:3"}
sw() {  # name timeout args...
  local n=$1 t=$2; shift 2
  timeout $t python3 benchmarks/gemv_sweep.py --reps 5 --out "$D/$n" "$@" > "$D/$n.log" 2>&1
  grep -v Warn "$D/$n.log" | grep -v "^$" | grep -v "^plan:" | tail -30; pack
}
sw sw_stream ${TS:-40} --mats o,gate_up,down --stream --only "$CANDS" --budget 36
sw sw_main ${TS:-20} --mats o,gate_up,down --engine --budget 16
# the variants from the sweep: each matrix's fastest stream shape [BN, BK, ST, MB]
V=$(python3 - "$D/sw_stream/gemv_sweep.json" <<'PY'
import json, sys
rows = [r for r in json.load(open(sys.argv[1])) if r.get("stream")]
best = {}
for m in ("o", "gate_up", "down"):
    mine = [r for r in rows if r["mat"] == m]
    if mine:
        b = min(mine, key=lambda r: r["us"])
        best[m] = [b["bn"], b["bk"], b["st"], b["mb"]]
def sk(*ms):
    return {"sk": {m: best[m] for m in ms}}
fwd = [sk("o"), sk("down"), sk("gate_up", "down"), sk("o", "gate_up", "down")]
print(json.dumps([{}] + fwd + [{}] + fwd[::-1] + [{}]))
PY
)
echo "variants: $V"
[ -n "$V" ] || V='[{}]'
ab() {  # name timeout args...
  local n=$1 t=$2; shift 2
  timeout $t python3 benchmarks/decode_ab.py "$@" --out "$D/$n" > "$D/$n.log" 2>&1
  grep -v Warn "$D/$n.log" | grep -v "^$" | grep -v "^|---" | tail -${TAIL:-80}; pack
}
ab sk_4b ${T1:-70} --model 4b --contexts 1024 --variants "$V" --profile-first 5
V8=$(python3 -c "import json,sys; v=json.loads(sys.argv[1]); print(json.dumps([v[0], v[4], v[0]]))" "$V" 2>/dev/null || echo '[{}]')
TAIL=4 ab sk_4b_8k ${T8:-25} --model 4b --contexts 8192 --variants "$V8" --rounds 2
timeout ${TT:-40} python3 -m pytest -q -p no:cacheprovider tests/llm/test_engine_gpu.py -k "streamed" \
  > "$D/tests.log" 2>&1; tail -3 "$D/tests.log"; pack
date -u
