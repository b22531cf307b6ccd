#!/usr/bin/env bash
# Step 4 of README.md here (~450 s warm, best on an H200, the issues' card): issue 17's engine table (decode.py: 4B
# at 1,024 / 8,192 / 32,768 with the 2,048-token prefill; 0.6B and 8B at 1,024) and issue 15's tables (the prefill
# script: its GPU tests, attention.py --prefill-only, sanitizers; the decode rows). Each step under `timeout`;
# the logs packed into $OUT/call2.tgz after each step, so a call cut short keeps what it had.
. benchmarks/device_calls/preamble.sh
W=$(mktemp -d /tmp/call2.XXXX)/call2; mkdir -p "$W"; pk() { tar -C "$(dirname "$W")" -czf "$OUT/call2.tgz" call2; }
timeout ${T_4B:-240} python3 benchmarks/decode.py --models 4b --contexts 1024,8192,32768 --tokens 32 --eager-tokens 4 \
  --prefill 2048 --out "$W/engine4b" > "$W/engine4b.log" 2>&1
echo "4b rc=$? ($((SECONDS-t0)) s)"; tail -25 "$W/engine4b.log"; pk
timeout ${T_OTHER:-150} python3 benchmarks/decode.py --models 0.6b,8b --contexts 1024 --tokens 32 --eager-tokens 4 \
  --prefill 0 --out "$W/engine_other" > "$W/engine_other.log" 2>&1
echo "0.6b/8b rc=$? ($((SECONDS-t0)) s)"; tail -20 "$W/engine_other.log"; pk
echo "===== prefill ($((SECONDS-t0)) s)"; OUT=$W bash benchmarks/attention_prefill_device.sh 2>&1 | tail -45; pk
echo "===== decode attention ($((SECONDS-t0)) s)"; DECODE_ONLY=1 OUT=$W bash benchmarks/attention_device.sh 2>&1 | tail -25; pk
echo "total $((SECONDS-t0)) s"
