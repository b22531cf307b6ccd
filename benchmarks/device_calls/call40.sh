#!/usr/bin/env bash
# The 2026-12-07 08:53 session's last call (lead), on landed main (or dev40.patch). On any card: the -m gpu suite on
# the landed tree, then issue 15's decode table and issue 17's engine 4B at 1,024 on this card (hstatic's static
# dims changed the decode and engine kernels' PTX: folds only; expected within the spread of the last H100 numbers:
# decode B=1 32k ~ call 32's, engine 4B ~314 tok/s, 85.4 % of the H100 roofline), and on an H200 also the prefill
# table first (tables.sh). STEPS picks steps.
[ -f dev40.patch ] && git apply dev40.patch && rm dev40.patch && echo "applied dev40.patch"
. benchmarks/device_calls/preamble.sh
W=$OUT/c40; mkdir -p "$W"; left() { echo $(( ${LIMIT:-575} - (SECONDS - t0) )); }
pk() { tar -C "$OUT" -czf "$OUT/call40.tgz" c40 2>/dev/null; }
want() { [ -z "${STEPS:-}" ] || [[ " $STEPS " == *" $1 "* ]]; }
if want tables && nvidia-smi -L | grep -q H200; then
  . benchmarks/device_calls/tables.sh
fi
want suite && [ $(left) -gt 90 ] && { echo "== suite ($((SECONDS-t0)) s)"
  timeout $(( $(left) < 130 ? $(left) - 10 : 120 )) python3 -m pytest -q -p no:cacheprovider -m gpu -n 14 --dist worksteal tests -k 'not constant_over_10000' > "$W/suite.log" 2>&1
  echo "suite rc=$?"; grep -E "^FAILED|^ERROR|passed|failed" "$W/suite.log" | tail -12 | cut -c1-220; pk; }
if want decode && ! nvidia-smi -L | grep -q H200 && [ $(left) -gt 70 ]; then
  echo "== decode ($((SECONDS-t0)) s)"
  timeout 60 python3 -W ignore benchmarks/attention.py --decode-only --reps 5 --out "$W/decode" > "$W/decode.log" 2>&1
  echo "rc=$?"; grep -E "^\| decode" "$W/decode.log" | cut -c1-200; pk
fi
if want engine && ! nvidia-smi -L | grep -q H200 && [ $(left) -gt 100 ]; then
  echo "== engine 4B ($((SECONDS-t0)) s)"
  timeout 90 python3 benchmarks/decode.py --models 4b --contexts 1024 --tokens 32 --eager-tokens 4 --prefill 0 \
    --out "$W/engine4b" > "$W/engine4b.log" 2>&1; echo "rc=$?"; grep -E "ctx" "$W/engine4b.log" | tail -2; pk
fi
pk; echo "total $((SECONDS-t0)) s"
