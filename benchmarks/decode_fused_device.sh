#!/usr/bin/env bash
# Issue 15 (h15d): `std::attention::decode_fused` (flash decoding in one launch: the merge by each KV
# head's last block, `if last_block(1)`) against the pair on the user's path, in <= 60 s wall:
#   1. prewarm the decode launches (benchmarks/attention_prewarm.py --only decode)         <= 15 s
#   2. the fused GPU tests (against SDPA, near the pair, 4 eager launches and 20 graph
#      replays giving the same output: the group counters reset themselves)              <= 12 s
#   3. benchmarks/attention.py --decode-only: each row's detail line prints the pair's
#      graph time and `fused (NC=..) .. graph .. us`                                       <= 22 s
#   4. compute-sanitizer memcheck over attention_sanitize.py's decode kernels (fused too)   <= 8 s
# From the repo root: `bash benchmarks/decode_fused_device.sh` (logs under $OUT/h15d).
set -uo pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
O=${OUT:-/tmp/out}/h15d; mkdir -p "$O"
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "decode_fused_device: $(git log -1 --format='%h %cd' 2>/dev/null)"
cubin=(); command -v ptxas >/dev/null && cubin=(--cubin sm_90)
timeout 15 python3 benchmarks/attention_prewarm.py --jobs "$(nproc)" "${cubin[@]}" --only decode > "$O/prewarm.log" 2>&1
echo "prewarm rc $? $(el) s: $(tail -1 "$O/prewarm.log" | cut -c1-150)"
timeout 12 python3 -m pytest -q -p no:cacheprovider -m gpu tests/std/test_attention_gpu.py -k fused > "$O/tests.log" 2>&1
echo "fused gpu tests rc $? $(el) s: $(tail -1 "$O/tests.log" | cut -c1-200)"
timeout 22 python3 benchmarks/attention.py --decode-only --reps 5 --out "$O" > "$O/bench.log" 2>&1
echo "bench rc $? $(el) s:"; grep -E "^\| decode|detail|Copy" "$O/bench.log" | awk '!seen[$0]++' | cut -c1-900
timeout 8 compute-sanitizer --tool memcheck python3 benchmarks/attention_sanitize.py gpu decode > "$O/memcheck.log" 2>&1
echo "memcheck rc $? $(el) s: $(grep -E 'ERROR SUMMARY' "$O/memcheck.log" | tail -1); $(grep -c 'err ' "$O/memcheck.log") results"
