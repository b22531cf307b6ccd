#!/usr/bin/env bash
# One device call comparing decode-step variants of the Qwen3 engine (issue
# 17): benchmarks/decode_ab.py at the given contexts with nvJitLink's cubins,
# then the first variants again with the driver's JIT (the same PTX), then a
# smaller model, and the GPU tests of the variants (FMA attention, prefetch
# branches). Each step under `timeout`; about 170 s in all. From the
# checkout's root: OUT=dir bash benchmarks/llm_ab_device.sh; one file back,
# $OUT/ab.tgz; the tables on stdout.
set -uo pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; D=$(mktemp -d /tmp/ab.XXXX)/ab; mkdir -p "$D"
WHL=${WHL:-.whl}
if ls "$WHL"/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site "$WHL"/*.whl \
    && export PYTHONPATH=$PYTHONPATH:/tmp/site
fi
export TILEC_CACHE_DIR=${TILEC_CACHE_DIR:-/tmp/tilec-cache}
pack() { tar -C "$(dirname "$D")" -czf "$OUT/ab.tgz" ab; }
nvidia-smi -L
P1='"prefetch": {"o": 1.0, "gate_up": 0.2}, "pf": [8, 512]'
V=${VARIANTS:-'[{}, {"tc": 0}, {"tc": 0, "ns": 16}, {"tc": 0, "ns": 8}, {"ns": 16}, {"tc": 0, "ns": 16, "bt": 64}, {"tc": 0, "prefetch": {"o": 1.0}, "pf": [8, 1024]}, {"tc": 0, '"$P1"'}, {"tc": 0, "prefetch": {"o": 1.0, "gate_up": 0.4}, "pf": [8, 512]}, {'"$P1"'}, {}]'}
VL=${VARIANTS_LONG:-'[{}, {"tc": 0}, {"ns": 16}, {'"$P1"'}, {"tc": 0, '"$P1"'}]'}
V2=${VARIANTS2:-'[{}, {"tc": 0, '"$P1"'}]'}
ab() {  # name timeout args...
  local n=$1 t=$2; shift 2
  timeout $t python3 benchmarks/decode_ab.py "$@" --out "$D" > "$D/$n.log" 2>&1
  grep -v Warn "$D/$n.log" | grep -v "^ " | grep -v "^$"; pack
}
ab ab_4b_1024 ${T1:-45} --model 4b --contexts 1024 --variants "$V" --profile
ab ab_4b_long ${T2:-40} --model 4b --contexts 8192,32768 --variants "$VL" --profile
ab ab_4b_driver ${T3:-25} --model 4b --contexts 1024 --variants "$V2" --profile --driver-jit
ab ab_06b ${T4:-12} --model 0.6b --contexts 1024 --variants "$V2"
ab ab_8b ${T5:-18} --model 8b --contexts 1024 --variants "$V2"
timeout ${TEST_TIMEOUT:-25} python3 -m pytest -q -p no:cacheprovider tests/llm/test_engine_gpu.py \
  -k "fma or teacher" > "$D/tests.log" 2>&1; tail -3 "$D/tests.log"; pack
