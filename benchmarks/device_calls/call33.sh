#!/usr/bin/env bash
# The 2026-12-07 03:10 session's second full call (lead), on comb (main + this session's posts, applied on the
# device from comb.patch when main lacks them): on an H200 the issues' tables first (call32.sh's: prefill, decode,
# engine 4B at 1,024); then hwg's check of the wgmma dK/dV descriptor fix (11 GPU tests, memcheck, hcliff5's rows),
# hpromote's new defaults (the int8 ring: hcliff6's rows, `new` now the ring; hattn7's start switches: its A/S
# table, now "A" = the new default and S the same), and the -m gpu suite. STEPS picks steps.
# Expected: hwg_device.sh's header (11 passed; dq ~0.39-0.42 ms; dkdv =1 correct); hcliff6 `new` w8a8 ~0.28 ms
# err 0; decode B=1 8k tc pair ~12.9 us on the H100 (12.5-12.6 on the H200); suite: no failure.
. benchmarks/device_calls/preamble.sh
call_log 33
if want tables && nvidia-smi -L | grep -q H200; then
  . benchmarks/device_calls/tables.sh
fi
want hwg && [ $(left) -gt 100 ] && TAILN=30 step hwg timeout $(( $(left) < 200 ? $(left) - 10 : 190 )) bash benchmarks/hwg_device.sh
want hrev24 && [ $(left) -gt 60 ] && TAILN=6 step hrev24 timeout 60 bash benchmarks/hrev24_device.sh
want suite && [ $(left) -gt 90 ] && { echo "== suite ($((SECONDS-t0)) s)"
  timeout $(( $(left) < 130 ? $(left) - 10 : 120 )) python3 -m pytest -q -p no:cacheprovider -m gpu -n 14 --dist worksteal tests -k 'not constant_over_10000' > "$W/suite.log" 2>&1
  echo "suite rc=$?"; grep -E "^FAILED|^ERROR|passed|failed" "$W/suite.log" | tail -12 | cut -c1-220; pk; }
want hcliff6 && [ $(left) -gt 80 ] && TAILN=14 step hcliff6 timeout 100 bash benchmarks/hcliff6_device.sh
want hattn7 && [ $(left) -gt 100 ] && TAILN=16 step hattn7 timeout $(( $(left) - 10 )) bash benchmarks/hattn7_device.sh
pk; echo "total $((SECONDS-t0)) s"
