#!/usr/bin/env bash
# One batched device call for std::attention (issue 15), <= 200 s in all:
#   1. fill the compile cache in parallel on the device's cores (every launch
#      of steps 2-4, benchmarks/attention_prewarm.py)                 <= 45 s
#   2. the GPU tests against SDPA + the PyTorch example on the GPU     <= 60 s
#   3. benchmarks/attention.py --sweep (the issue's whole table: decode rows
#      first, each decode shape under several plans, then every prefill
#      row; each printed as measured, so a cut run keeps what it had)   <= 55 s
#   4. compute-sanitizer memcheck, then racecheck, over
#      benchmarks/attention_sanitize.py                              2 x 20 s
# Each step runs under `timeout`, so a hang costs its own cap only.
# DECODE_ONLY=1: the decode half only, <= 60 s (prefill is
# benchmarks/attention_prefill_device.sh's): the decode launches prewarmed
# (15 s), the decode GPU tests + the PyTorch example (15 s), the decode rows
# with their fixed-cost probes (`--fixed`: the pair as a CUDA graph, with
# PDL, a one-position split, empty kernels) and the sweep (20 s; 11 s on
# the H200 at 4ae5a61), both sanitizers on the decode kernels (2 x 5 s).
# usage on the device machine, from the checkout's root (after the lark
# wheel install the lead's calls do, or with WHL=dir holding the wheel):
#   bash benchmarks/attention_device.sh
# Writes ONE file to $OUT (a device call returns at most 8): attention_device.tgz
# holding attention_prewarm.log, attention_gpu_tests.log, attention_bench.log,
# attention.json, attention.md, attention_sanitizer_{memcheck,racecheck}.log;
# stdout is a summary of each step.
set -uo pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
FINAL=${OUT:-/tmp/out}; mkdir -p "$FINAL"
OUT=$(mktemp -d)
trap 'tar czf "$FINAL/attention_device.tgz" -C "$OUT" . && rm -rf "$OUT"' EXIT
WHL=${WHL:-.whl}
if ! python3 -c "import lark" 2>/dev/null && ls "$WHL"/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site "$WHL"/*.whl \
    && export PYTHONPATH=$PYTHONPATH:/tmp/site
fi
export TILEC_CACHE_DIR=${TILEC_CACHE_DIR:-/tmp/tilec-cache}
mkdir -p "$TILEC_CACHE_DIR"
nvidia-smi -L; git log -1 --format='commit %h %cd' 2>/dev/null || true
date -u
t0=$(date +%s)
cubin=(); command -v ptxas >/dev/null && cubin=(--cubin sm_90)
only=(); tests=(tests/std/test_attention_gpu.py); bench=(--sweep); san=()
if [[ ${DECODE_ONLY:-0} == 1 ]]; then
  python3 benchmarks/attention_prewarm.py --help 2>/dev/null | grep -q -- --only && only=(--only decode)
  # the 4-D/scale prefill test last: its kernels are prewarmed by the prefill half only
  tests=(tests/std/test_attention_gpu.py -k "decoding or torch_attention_example"); bench=(--decode-only --sweep --fixed); san=(decode)
  : "${PREWARM_TIMEOUT:=15}" "${TEST_TIMEOUT:=15}" "${BENCH_TIMEOUT:=20}" "${SAN_TIMEOUT:=5}"
fi
timeout ${PREWARM_TIMEOUT:-45} python3 benchmarks/attention_prewarm.py --jobs "$(nproc)" "${cubin[@]}" "${only[@]}" \
  > "$OUT/attention_prewarm.log" 2>&1
echo "prewarm (rc $?, $(( $(date +%s) - t0 )) s): $(tail -1 "$OUT/attention_prewarm.log")"
timeout ${TEST_TIMEOUT:-60} python3 -m pytest -q -p no:cacheprovider -m gpu \
  "tests/api/test_api_gpu.py::test_torch_attention_example_on_the_gpu" "${tests[@]}" > "$OUT/attention_gpu_tests.log" 2>&1
echo "gpu tests (rc $?, $(( $(date +%s) - t0 )) s):"; tail -4 "$OUT/attention_gpu_tests.log" | cut -c1-200
timeout ${BENCH_TIMEOUT:-55} python3 benchmarks/attention.py "${bench[@]}" --reps ${REPS:-5} --out "$OUT" \
  > "$OUT/attention_bench.log" 2>&1
echo "bench (rc $?, $(( $(date +%s) - t0 )) s):"; grep -E "^\| (f16|bf16|decode)|Copy|error|^  detail" "$OUT/attention_bench.log" \
  | awk '!seen[$0]++' | cut -c1-700 | tail -20
python3 - "$OUT/attention_bench.log" <<'EOF' || true
import re, sys  # the sweep: each decode shape's best four plans as a graph (and eager: the two kernels' sum)
best = {}
for line in open(sys.argv[1]):
    m = re.match(r"\s+(?:sweep|detail) ?(\S*) (B=\d+ ctx=\d+) (.*?): split .*? us = ([\d.]+) TB/s(?:, graph [\d.]+ us = ([\d.]+) TB/s)?", line)
    if m:
        best.setdefault(m.group(2), []).append((float(m.group(5) or 0), float(m.group(4)), (m.group(1) or "DEFAULT") + " " + m.group(3)))
for shape, rs in best.items():
    print("sweep", shape, "| graph/eager", " | ".join(f"{g:.2f}/{t:.2f} {p}" for g, t, p in sorted(rs, reverse=True)[:4]))
EOF
for tool in memcheck racecheck; do
  timeout ${SAN_TIMEOUT:-20} compute-sanitizer --tool $tool --print-limit 20 python3 benchmarks/attention_sanitize.py \
    gpu "${san[@]}" > "$OUT/attention_sanitizer_$tool.log" 2>&1
  echo "$tool (rc $?, $(( $(date +%s) - t0 )) s): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/attention_sanitizer_$tool.log" | tail -1)"
  grep -E "err " "$OUT/attention_sanitizer_$tool.log" | head -5
done
