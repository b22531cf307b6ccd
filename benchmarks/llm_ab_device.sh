#!/usr/bin/env bash
# One device call comparing decode-step variants of the Qwen3 engine (issue
# 17): benchmarks/decode_ab.py at the given contexts with nvJitLink's cubins,
# then the first variants again with the driver's JIT (the same PTX), then a
# smaller model, and the GPU tests of the variants (FMA attention, prefetch
# branches). Each step under `timeout`; about 150 s in all. From the
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
V=${VARIANTS:-'[{}, {"tc": 0}, {"tc": 0, "ns": 16}, {"tc": 0, "ns": 8}, {"ns": 16}, {"tc": 0, "prefetch": {"o": 1.0}, "pf": [8, 1024]}, {"tc": 0, "prefetch": {"o": 1.0, "gate_up": 0.2}, "pf": [8, 512]}, {"tc": 0, "prefetch": {"o": 1.0, "gate_up": 0.4}, "pf": [8, 512]}, {"prefetch": {"o": 1.0, "gate_up": 0.2}, "pf": [8, 512]}]'}
V2=${VARIANTS2:-'[{}, {"tc": 0, "prefetch": {"o": 1.0, "gate_up": 0.2}, "pf": [8, 512]}]'}
timeout ${AB_TIMEOUT:-75} python3 benchmarks/decode_ab.py --model 4b --contexts ${CONTEXTS:-1024,8192,32768} \
  --variants "$V" --profile --out "$D" > "$D/ab_4b.log" 2>&1; grep -v Warn "$D/ab_4b.log" | grep -v "^ " ; pack
timeout ${JIT_TIMEOUT:-30} python3 benchmarks/decode_ab.py --model 4b --contexts 1024 --driver-jit \
  --variants "$V2" --profile --out "$D/jit" > "$D/ab_4b_driver.log" 2>&1; grep -v Warn "$D/ab_4b_driver.log" | grep -v "^ "; pack
timeout ${SMALL_TIMEOUT:-15} python3 benchmarks/decode_ab.py --model 0.6b --contexts 1024 \
  --variants "$V2" --out "$D" > "$D/ab_06b.log" 2>&1; grep "tok/s\|fail" "$D/ab_06b.log"; pack
timeout ${TEST_TIMEOUT:-25} python3 -m pytest -q -p no:cacheprovider tests/llm/test_engine_gpu.py \
  -k "fma or teacher" > "$D/tests.log" 2>&1; tail -3 "$D/tests.log"; pack
