#!/usr/bin/env bash
# The 2026-12-07 00:03 session's second call (lead), for an H200 after call30.sh: issue 17's whole table (4B at
# 1,024 / 8,192 / 32,768 with the prefill of 2,048; 0.6B and 8B at 1,024) and one untried lever for the H200's gap,
# the carveout between the two measured points (h17r's note: `cv` 71 cost the GEMVs 13 % on the H200 on 2026-12-04;
# a carveout that holds the ring attention's ~70 KB and one O block's 8 KB is ~35 % of 228 KB and leaves the L1
# ~150-180 KB, so O's blocks may sit beside the attention's and load under its idle DRAM).
# Expected (written before the run): 4B 1,024 ~79-81 % of the roofline on the H200 (h17p's model: the ~14.6 us a
# layer of fixed time weighs ~1.4x there; 2026-12-04 read 76.7 % at 399 tok/s on an older tree); 8,192 and 32,768
# lower (the KV bytes count); prefill 2,048 >= 1.0x the reference; cv 35 / 45 within -2..+1.5 % of the default
# (a win needs the O GEMV's x to stay in L1 at a 150-180 KB L1).
if [ -n "${PREAMBLE_DONE:-}" ]; then t0=$SECONDS; else . benchmarks/device_calls/preamble.sh; fi
W=$OUT/c31; mkdir -p "$W"; left() { echo $(( ${LIMIT:-575} - (SECONDS - t0) )); }
pk() { tar -C "$OUT" -czf "$OUT/call31.tgz" c31 2>/dev/null; }
echo "== engine 4B ($((SECONDS-t0)) s)"
timeout ${T_4B:-200} python3 benchmarks/decode.py --models 4b --contexts ${CTX_4B:-1024,8192,32768} --tokens 32 \
  --eager-tokens 4 --prefill ${PREFILL:-2048} --out "$W/engine4b" > "$W/engine4b.log" 2>&1
echo "rc=$?"; grep -E "^NVIDIA|ctx|prefill" "$W/engine4b.log" | tail -8 | cut -c1-220; pk
echo "== engine 0.6B/8B ($((SECONDS-t0)) s)"
timeout ${T_OTHER:-110} python3 benchmarks/decode.py --models 0.6b,8b --contexts 1024 --tokens 32 --eager-tokens 4 \
  --prefill 0 --out "$W/engine_other" > "$W/engine_other.log" 2>&1
echo "rc=$?"; grep -E "ctx" "$W/engine_other.log" | tail -3 | cut -c1-220; pk
if [ $(left) -gt 90 ]; then
  echo "== carveout arms ($((SECONDS-t0)) s)"
  timeout $(( $(left) - 15 )) python3 benchmarks/decode_ab.py --model 4b --contexts 1024 --rounds 3 --reps 6 \
    --variants '[{}, {"cv": 35}, {"cv": 45}, {"cv": 45}, {"cv": 35}, {}]' --out "$W/cv" > "$W/cv.log" 2>&1
  echo "rc=$?"; tail -14 "$W/cv.log" | cut -c1-220; pk
fi
pk; echo "total $((SECONDS-t0)) s"
