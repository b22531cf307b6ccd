#!/usr/bin/env bash
# The 2026-12-07 11:51 session's first call (lead), on comb (applied from dev41.patch when present): main bf5aabb3 +
# hnum, hcliff13, hgemv, hrev29, huser26, hstream as posted. On an H200 the issues' tables first (tables.sh); on any card: the
# -m gpu suite, then on an H100 the decode table and the engine's 4B row (call 40's steps: hstatic's folded decode
# kernels; expected within the spread of the last H100 numbers: engine 4B ~314 tok/s, 85.4 % of the roofline), then
# hgemv's GEMV arms, hstream's rule arms (its header), huser26's programs on the card, (its header: gemv new 0.9-1.35x torch vs old ~0.76x; bm16 0.7-1.2x vs 0.13x) and
# hcliff13's arms (huser25's bench rows, new/old: its header, GEMM+tanh-GELU epilogue 0.80x -> 1.4-2.0x). STEPS picks steps.
[ -f dev41.patch ] && git apply dev41.patch && rm dev41.patch && echo "applied dev41.patch"
. benchmarks/device_calls/preamble.sh
W=$OUT/c41; mkdir -p "$W"; left() { echo $(( ${LIMIT:-575} - (SECONDS - t0) )); }
pk() { tar -C "$OUT" -czf "$OUT/call41.tgz" c41 2>/dev/null; }
want() { [ -z "${STEPS:-}" ] || [[ " $STEPS " == *" $1 "* ]]; }
step() { local name=$1; shift; echo "== $name ($((SECONDS-t0)) s)"; env "$@" > "$W/$name.log" 2>&1; echo "rc=$?"; tail -${TAILN:-25} "$W/$name.log" | cut -c1-200; pk; }
h200() { nvidia-smi -L | grep -q H200; }
if want tables && h200; then . benchmarks/device_calls/tables.sh; fi
want suite && [ $(left) -gt 90 ] && { echo "== suite ($((SECONDS-t0)) s)"
  timeout $(( $(left) < 130 ? $(left) - 10 : 120 )) python3 -m pytest -q -p no:cacheprovider -m gpu -n 14 --dist worksteal tests -k 'not constant_over_10000' > "$W/suite.log" 2>&1
  echo "suite rc=$?"; grep -E "^FAILED|^ERROR|passed|failed" "$W/suite.log" | tail -12 | cut -c1-220; pk; }
if want decode && ! h200 && [ $(left) -gt 70 ]; then
  echo "== decode ($((SECONDS-t0)) s)"
  timeout 60 python3 -W ignore benchmarks/attention.py --decode-only --reps 5 --out "$W/decode" > "$W/decode.log" 2>&1
  echo "rc=$?"; grep -E "^\| decode" "$W/decode.log" | cut -c1-200; pk
fi
if want engine && ! h200 && [ $(left) -gt 100 ]; then
  echo "== engine 4B ($((SECONDS-t0)) s)"
  timeout 90 python3 benchmarks/decode.py --models 4b --contexts 1024 --tokens 32 --eager-tokens 4 --prefill 0 \
    --out "$W/engine4b" > "$W/engine4b.log" 2>&1; echo "rc=$?"; grep -E "ctx" "$W/engine4b.log" | tail -2; pk
fi
want hgemv && [ -f benchmarks/hgemv_device.sh ] && [ $(left) -gt 70 ] && TAILN=30 step hgemv timeout $(( $(left) < 160 ? $(left) - 10 : 150 )) bash benchmarks/hgemv_device.sh
want hstream && [ -f benchmarks/hstream_device.sh ] && [ $(left) -gt 70 ] && TAILN=30 step hstream timeout $(( $(left) < 150 ? $(left) - 10 : 140 )) bash benchmarks/hstream_device.sh
want huser26 && [ -f benchmarks/huser26_device.sh ] && [ $(left) -gt 70 ] && TAILN=30 step huser26 timeout $(( $(left) < 160 ? $(left) - 10 : 150 )) bash benchmarks/huser26_device.sh
want hcliff13 && [ -f benchmarks/hcliff13_device.sh ] && [ $(left) -gt 70 ] && TAILN=30 step hcliff13 timeout $(( $(left) < 150 ? $(left) - 10 : 140 )) bash benchmarks/hcliff13_device.sh
pk; echo "total $((SECONDS-t0)) s"
