#!/usr/bin/env bash
# The plan of the 2026-12-07 20:07 session (which got no device; its call44.sh, never run, folded in here) for the
# next one, on main after its last landing.
# Most needed first. On an H200: the issues' tables (prefill, decode, engine 4B at 1,024: none measured on an H200
# since call 41, and hred changed two of the engine's kernels), prefill S = 16,384. Any card: call 43's engine
# capture failure (`test_merge_by_rows_matches_torch[torch]`) alone three times, and the relaxed-capture GPU tests
# (a kernel first launched inside torch.cuda.graph; expected: pass); then the session's device scripts as the
# budget allows (each its own expectations in its header): hdec (decode fold), hattn9 (192-row D = 64 prefill),
# huser31 (sparse programs on a card), hrev33 (the reduction search on a card), and call 43's leftovers (hrev31's std_diff rows, huser27/28's benches).
# CAP_RUNS="1" runs the lone capture test once. STEPS="..." picks steps (tables cap suite s16k hdec hattn9 huser31 hrev33 hrev31 huser27 huser28); LIMIT the seconds.
. benchmarks/device_calls/preamble.sh
call_log 45
h200() { nvidia-smi -L | grep -q H200; }
cap() { local tag=$1; shift; echo "== cap $tag ($((SECONDS-t0)) s)"
  env "$@" timeout 75 python3 -m pytest -q -p no:cacheprovider -m gpu -n 0 tests/llm/test_engine_gpu.py -k merge_by_rows > "$W/cap_$tag.log" 2>&1
  local rc=$?; echo "rc=$rc"; grep -E "passed|failed|Error|INVALID" "$W/cap_$tag.log" | tail -4 | cut -c1-200; pk; return $rc; }
if h200 && want tables; then
  prefill_table; decode_table; engine_table
fi
if want cap; then
  TAILN=4 step first timeout 60 python3 -m pytest -q -p no:cacheprovider -m gpu -n 0 tests/api/test_ecosystem_gpu.py -k "first_launched or counter_buffer"
  bad=0; for i in ${CAP_RUNS:-1 2 3}; do [ $(left) -gt 80 ] && { cap r$i || bad=1; }; done
  [ $bad = 1 ] && [ $(left) -gt 80 ] && cap nored TILEC_REDUCE_STAGED=0 TILEC_REDUCE_XPOSE=0
fi
gpu_suite  # (the -m gpu suite on main: none since the 17:16 session's L4)
if h200 && want s16k && [ $(left) -gt 130 ]; then
  echo "== prefill s16k ($((SECONDS-t0)) s)"
  ATTN_TRITON=0 timeout 120 python3 -W ignore benchmarks/attention.py --prefill-only --reps 5 --seqs 16384 --out "$W/prefill_s16k" > "$W/prefill_s16k.log" 2>&1
  echo "rc=$?"; grep -E "^\| (f16|bf16)" "$W/prefill_s16k.log" | tail -12 | cut -c1-130; pk
fi
for s in hdec hattn9 huser31 hrev33 hrev31 huser27 huser28; do
  want $s && [ -f benchmarks/${s}_device.sh ] && [ $(left) -gt 70 ] && TAILN=30 step $s timeout $(( $(left) < 200 ? $(left) - 10 : 190 )) bash benchmarks/${s}_device.sh
done
pk; echo "total $((SECONDS-t0)) s"
