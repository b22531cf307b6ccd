#!/usr/bin/env bash
# The first call of the next session (not run: the 2026-12-06 02:10 session's device starts failed from 02:40 on),
# ~420 s warm, on main after that session (the sm_90 decode plan with `Plan.gl` gate_up and `Plan.me`, promoted from
# call 3's decode_ab rows; huser12's g programs; hrev13's rounds; h15x's opt-in chained split and tail):
# the `-m gpu` suite (14 workers), the 10,000-token memory test alone (T_LEAK=0 skips it), the engine table (4B at
# CTX_4B = 1,024 / 8,192 / 32,768 with the PREFILL = 2,048-token prefill), h15x_device.sh, 0.6B and 8B at 1,024.
# Expected (written before): the suite all green (the g programs' first GPU run); on an H100 4B 1,024 ~314 tok/s
# (call 3's me + GL1 row, +1.1 % over call X's decode.py 309.3), 8,192 ~+1.2 %, 32,768 about +0.5 % (the same us of
# a longer step), 0.6B and 8B within 0.3 % of call 2 (+0.25 / +0.2 % by call 3); prefill unchanged (1.17x). On an
# H200 (the card): 4B 1,024 ~80 % (h17p's model ~79 % for the old default, + ~1.4 % for the same us).
# h15x: RESULTS.md's "h15x" section.
. benchmarks/device_calls/preamble.sh
timeout ${T_SUITE:-150} python3 -m pytest -q -p no:cacheprovider -m gpu -n 14 --dist worksteal tests -k 'not constant_over_10000' \
  > $OUT/suite.log 2>&1
echo "suite rc=$? ($((SECONDS-t0)) s)"; grep -E "^FAILED|^ERROR|passed|failed" $OUT/suite.log | tail -30
if [ "${T_LEAK:-120}" != 0 ]; then
  timeout ${T_LEAK:-120} python3 -m pytest -q -p no:cacheprovider -m gpu tests -k 'constant_over_10000' > $OUT/leak.log 2>&1
  echo "leak rc=$? ($((SECONDS-t0)) s): $(tail -1 $OUT/leak.log)"
fi
timeout ${T_4B:-150} python3 benchmarks/decode.py --models 4b --contexts ${CTX_4B:-1024,8192,32768} --tokens 32 --eager-tokens 4 \
  --prefill ${PREFILL:-2048} --out "$OUT/engine4b" > "$OUT/engine4b.log" 2>&1
echo "4b rc=$? ($((SECONDS-t0)) s)"; grep -E "^NVIDIA|ctx|prefill" "$OUT/engine4b.log" | tail -6
echo "===== h15x ($((SECONDS-t0)) s)"; bash benchmarks/h15x_device.sh 2>&1 | tail -40
timeout 100 python3 benchmarks/decode.py --models 0.6b,8b --contexts 1024 --tokens 32 --eager-tokens 4 \
  --prefill 0 --out "$OUT/engine_other" > "$OUT/engine_other.log" 2>&1
echo "0.6b/8b rc=$? ($((SECONDS-t0)) s)"; grep -E "ctx" "$OUT/engine_other.log" | tail -3
echo "total $((SECONDS-t0)) s"
