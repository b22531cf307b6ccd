# Sourced by a call script (call27.sh, call29.sh, call32.sh-call34.sh) on an H200: the issues' tables, most
# needed first: prefill (issue 15), decode (issue 15), the engine's 4B at 1,024 (issue 17). Reads W (the log
# folder), t0 and pk (packs the logs into $OUT) from the script.
  echo "== prefill ($((SECONDS-t0)) s)"
  ATTN_TRITON=0 timeout 110 python3 -W ignore benchmarks/attention.py --prefill-only --reps 5 --out "$W/prefill" > "$W/prefill.log" 2>&1
  echo "rc=$?"; grep -E "^\| (f16|bf16)" "$W/prefill.log" | tail -24 | cut -c1-130; pk
  echo "== decode ($((SECONDS-t0)) s)"
  timeout 60 python3 -W ignore benchmarks/attention.py --decode-only --reps 5 --out "$W/decode" > "$W/decode.log" 2>&1
  echo "rc=$?"; grep -E "^\| decode" "$W/decode.log" | cut -c1-200; pk
  echo "== engine 4B ($((SECONDS-t0)) s)"
  timeout 90 python3 benchmarks/decode.py --models 4b --contexts 1024 --tokens 32 --eager-tokens 4 --prefill 0 \
    --out "$W/engine4b" > "$W/engine4b.log" 2>&1; echo "rc=$?"; grep -E "ctx" "$W/engine4b.log" | tail -2; pk
