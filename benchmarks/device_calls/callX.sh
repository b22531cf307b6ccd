#!/usr/bin/env bash
# One call where device starts are scarce (~560 s warm): the `-m gpu` suite (14 workers), h17p_device.sh at
# 1,024 (the default's H200 number and the opt-in variants), decode.py 4B at 1,024 / 8,192 / 32,768 with the
# 2,048-token prefill, and the prefill attention script (its GPU tests, attention.py --prefill-only, sanitizers).
# Logs packed into $OUT/callX.tgz after each step.
. benchmarks/device_calls/preamble.sh
W=$(mktemp -d /tmp/callX.XXXX)/callX; mkdir -p "$W"; pk() { tar -C "$(dirname "$W")" -czf "$OUT/callX.tgz" callX; }
timeout ${T_SUITE:-200} python3 -m pytest -q -p no:cacheprovider -m gpu -n 14 --dist worksteal tests -k 'not constant_over_10000' \
  -o junit_family=xunit2 --junitxml=$W/suite.xml > $W/suite.log 2>&1
echo "suite rc=$? ($((SECONDS-t0)) s)"; grep -E "^FAILED|^ERROR|passed|failed" $W/suite.log | tail -30; pk
echo "===== h17p ($((SECONDS-t0)) s)"; OUT=$W CONTEXTS=1024 timeout 90 bash benchmarks/h17p_device.sh 2>&1 | tail -30; pk
echo "===== engine ($((SECONDS-t0)) s)"
timeout ${T_4B:-170} python3 benchmarks/decode.py --models 4b --contexts 1024,8192,32768 --tokens 32 --eager-tokens 4 \
  --prefill 2048 --out "$W/engine4b" > "$W/engine4b.log" 2>&1
echo "4b rc=$? ($((SECONDS-t0)) s)"; tail -22 "$W/engine4b.log"; pk
echo "===== prefill ($((SECONDS-t0)) s)"; OUT=$W timeout 80 bash benchmarks/attention_prefill_device.sh 2>&1 | tail -40; pk
echo "total $((SECONDS-t0)) s"
