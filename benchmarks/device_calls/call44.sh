#!/usr/bin/env bash
# The 2026-12-07 20:07 session's first call (lead), on main. On an H200: the issues' tables (prefill, decode, engine 4B
# at 1,024; none measured on an H200 since call 41, and hred changed two of the engine's kernels), then prefill
# S = 16,384. Any card: call 43's engine capture failure (test_merge_by_rows_matches_torch[torch]) run alone three
# times; if it fails, once more with hred's reductions off (TILEC_REDUCE_STAGED=0 TILEC_REDUCE_XPOSE=0). Then
# call 43's steps that did not run: hrev31's std_diff rows, huser27/28's benches.
. benchmarks/device_calls/preamble.sh
call_log 44
first() { echo "== first-in-capture $1 ($((SECONDS-t0)) s)"
  timeout 60 python3 -m pytest -q -p no:cacheprovider -m gpu -n 0 tests/api/test_ecosystem_gpu.py -k "first_launched or counter_buffer" > "$W/first_$1.log" 2>&1
  echo "rc=$?"; grep -E "passed|failed|INVALID" "$W/first_$1.log" | tail -3 | cut -c1-200; }
if [ -f dev44.patch ]; then  # the lead's relaxed-capture change: its GPU test before and after the runtime part
  git apply --include='tests/*' dev44.patch && first before
  git apply --exclude='tests/*' dev44.patch && rm dev44.patch && echo "applied dev44.patch" && first after
fi
h200() { nvidia-smi -L | grep -q H200; }
cap() { local tag=$1; shift; echo "== cap $tag ($((SECONDS-t0)) s)"
  env "$@" timeout 75 python3 -m pytest -q -p no:cacheprovider -m gpu -n 0 tests/llm/test_engine_gpu.py -k merge_by_rows > "$W/cap_$tag.log" 2>&1
  local rc=$?; echo "rc=$rc"; grep -E "passed|failed|Error|INVALID" "$W/cap_$tag.log" | tail -4 | cut -c1-200; pk; return $rc; }
if h200 && want tables; then
  prefill_table; decode_table; engine_table
fi
if want cap; then
  bad=0; for i in 1 2 3; do [ $(left) -gt 80 ] && { cap r$i || bad=1; }; done
  [ $bad = 1 ] && [ $(left) -gt 80 ] && cap nored TILEC_REDUCE_STAGED=0 TILEC_REDUCE_XPOSE=0
fi
if h200 && want s16k && [ $(left) -gt 130 ]; then
  echo "== prefill s16k ($((SECONDS-t0)) s)"
  ATTN_TRITON=0 timeout $(( $(left) - 10 )) python3 -W ignore benchmarks/attention.py --prefill-only --reps 5 --seqs 16384 --out "$W/prefill_s16k" > "$W/prefill_s16k.log" 2>&1
  echo "rc=$?"; grep -E "^\| (f16|bf16)" "$W/prefill_s16k.log" | tail -12 | cut -c1-130; pk
fi
for s in hrev31 huser27 huser28; do  # call 43's steps that did not run (any card)
  want $s && [ -f benchmarks/${s}_device.sh ] && [ $(left) -gt 70 ] && TAILN=30 step $s timeout $(( $(left) < 160 ? $(left) - 10 : 150 )) bash benchmarks/${s}_device.sh
done
pk; echo "total $((SECONDS-t0)) s"
