#!/usr/bin/env bash
# One device call comparing decode-step variants of the Qwen3 engine (issue
# 17): benchmarks/decode_ab.py (plan variants of the step in one process) at
# 1,024 positions, then at 8,192 and 32,768, then the GPU tests of the
# attention forms. Each step under `timeout`; about 40 s in all. From the
# checkout's root: OUT=dir bash benchmarks/llm_ab_device.sh; one file back,
# $OUT/ab.tgz; the tables on stdout (PROFILE=1: the first variant per kind).
set -uo pipefail
. benchmarks/device_env.sh ab
WHL=${WHL:-.whl}
if ls "$WHL"/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site "$WHL"/*.whl \
    && export PYTHONPATH=$PYTHONPATH:/tmp/site
fi
nvidia-smi -L
# the forms of the decode attention (plan defaults: the stream from 1,536
# positions, the FMA loop below) against each other, and the splits
V=${VARIANTS:-'[{}, {"fma_until": 0}, {"tc": 1, "fma_until": 0}, {"tc": 0, "fma_until": 0}]'}
VL=${VARIANTS_LONG:-'[{}, {"tc": 1}, {"ns": 16}]'}
ab() {  # name timeout args...
  local n=$1 t=$2; shift 2
  timeout $t python3 benchmarks/decode_ab.py "$@" --out "$D" > "$D/$n.log" 2>&1
  grep -v Warn "$D/$n.log" | grep -v "^ " | grep -v "^$" | grep -v "^|"; pack
}
ab ab_4b_1024 ${T1:-25} --model 4b --contexts 1024 --variants "$V" ${PROFILE:+--profile}
ab ab_4b_long ${T2:-20} --model 4b --contexts 8192,32768 --variants "$VL"
timeout ${TEST_TIMEOUT:-15} python3 -m pytest -q -p no:cacheprovider tests/llm/test_engine_gpu.py \
  -k "${TESTS_K:-other_attention_forms}" > "$D/tests.log" 2>&1; tail -1 "$D/tests.log"; pack
