#!/usr/bin/env bash
# One device call comparing decode-step variants of the Qwen3 engine (issue
# 17): benchmarks/decode_ab.py at the given contexts with nvJitLink's cubins,
# then the first variants again with the driver's JIT (the same PTX), then a
# smaller model, and the GPU tests of the variants (FMA attention, prefetch
# branches). Each step under `timeout`; about 60 s in all (call 2). From the
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
# call 2 (h17, 2026-12-02): the FMA form below 4,096 positions (the default)
# against tensor cores throughout, and prefetch branches on small grids
PO='"prefetch": {"o": 1.0}, "pf": [16, 1024], "pf_blocks": 32'
PT='"prefetch": {"o": 0.25}, "pf": [16, 1024], "pf_blocks": 8'
V=${VARIANTS:-'[{}, {"fma_until": 0}, {'"$PO"'}, {'"$PT"'}, {}, {"fma_until": 0}]'}
ab() {  # name timeout args...
  local n=$1 t=$2; shift 2
  timeout $t python3 benchmarks/decode_ab.py "$@" --out "$D" > "$D/$n.log" 2>&1
  grep -v Warn "$D/$n.log" | grep -v "^ " | grep -v "^$"; pack
}
ab ab_4b_1024 ${T1:-40} --model 4b --contexts ${CONTEXTS:-1024} --variants "$V" --profile
if [[ -n ${DRIVER:-} ]]; then ab ab_4b_driver ${T3:-25} --model 4b --contexts 1024 --variants '[{}]' --profile --driver-jit; fi
timeout ${TEST_TIMEOUT:-20} python3 -m pytest -q -p no:cacheprovider tests/llm/test_engine_gpu.py \
  -k "${TESTS_K:-fma}" > "$D/tests.log" 2>&1; tail -3 "$D/tests.log"; pack
