#!/usr/bin/env bash
# The 2026-12-07 00:03 session's first call (lead), on comb (main + this session's first posts: hattn6's ticket word
# and decode arms, hdebt's cache keys, hrev22's fixes, hcliff8's gather product, huser21's programs). On an H200 the
# issues' tables first (call29.sh's: prefill, decode, engine 4B at 1,024). Then the -m gpu suite and the helpers'
# scripts, most needed first; STEPS (default all) picks them for a second call on a warm machine, e.g.
# STEPS="hattn5 hcliff5" bash call32.sh. Expectations: each script's header and device_calls/README.md's top item.
. benchmarks/device_calls/preamble.sh
call_log 32
if want tables && nvidia-smi -L | grep -q H200; then
  . benchmarks/device_calls/tables.sh
fi
if want suite; then
  echo "== suite ($((SECONDS-t0)) s)"
  timeout 150 python3 -m pytest -q -p no:cacheprovider -m gpu -n 14 --dist worksteal tests -k 'not constant_over_10000' > "$W/suite.log" 2>&1
  echo "suite rc=$?"; grep -E "^FAILED|^ERROR|passed|failed" "$W/suite.log" | tail -12 | cut -c1-220; pk
fi
want hrev22 && [ $(left) -gt 70 ] && TAILN=10 step hrev22 timeout 75 bash benchmarks/hrev22_device.sh
want hcliff6 && [ $(left) -gt 100 ] && TAILN=30 step hcliff6 timeout 170 bash benchmarks/hcliff6_device.sh
want hcliff8 && [ $(left) -gt 80 ] && TAILN=20 step hcliff8 timeout $(( $(left) < 160 ? $(left) - 10 : 150 )) bash benchmarks/hcliff8_device.sh
want hcliff7 && [ $(left) -gt 80 ] && TAILN=20 step hcliff7 timeout 110 bash benchmarks/hcliff7_device.sh
want hattn6 && [ $(left) -gt 100 ] && TAILN=40 step hattn6 timeout $(( $(left) < 190 ? $(left) - 10 : 180 )) bash benchmarks/hattn6_device.sh
want hrev21 && [ $(left) -gt 60 ] && TAILN=8 step hrev21 timeout 60 bash benchmarks/hrev21_device.sh
want huser19 && [ $(left) -gt 80 ] && TAILN=8 step huser19 timeout 90 bash benchmarks/huser19_device.sh
want hattn5 && [ $(left) -gt 100 ] && TAILN=30 step hattn5 ARMS="${HATTN5_ARMS:-A H Y Y H A}" timeout $(( $(left) - 10 )) bash benchmarks/hattn5_device.sh
want hcliff5 && [ $(left) -gt 60 ] && TAILN=20 step hcliff5 timeout $(( $(left) - 10 )) bash benchmarks/hcliff5_device.sh
pk; echo "total $((SECONDS-t0)) s"
