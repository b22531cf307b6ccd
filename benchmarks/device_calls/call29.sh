#!/usr/bin/env bash
# The 21:07 session's second device call (lead), on comb2 = landing L1 (main + hattn5, hcliff5, hrev20, huser19
# first batches) + hattn5 34a995d6, huser19 18db0a57, hrev20 62283593, hcliff6 1d8a3ea0. On an H200 the issues'
# tables first (call27.sh's). Then the -m gpu suite, hcliff6 (int8 tensor cores by default, the column blur's
# registers), hrev21 (to_bits NaNs, decode_split_tc against SDPA), huser19 (x01-x15 on the GPU), hcliff7 (max-pool),
# hattn5 (the D = 64 S = 1,024 last round as halves: H / Y arms), hcliff5 (wgmma dQ / dK/dV arms).
# Expectations: each script's header.
. benchmarks/device_calls/preamble.sh
call_log 29
if nvidia-smi -L | grep -q H200; then
  . benchmarks/device_calls/tables.sh
fi
echo "== suite ($((SECONDS-t0)) s)"
timeout 150 python3 -m pytest -q -p no:cacheprovider -m gpu -n 14 --dist worksteal tests -k 'not constant_over_10000' > "$W/suite.log" 2>&1
echo "suite rc=$?"; grep -E "^FAILED|^ERROR|passed|failed" "$W/suite.log" | tail -12 | cut -c1-220; pk
[ $(left) -gt 100 ] && TAILN=30 step hcliff6 timeout 170 bash benchmarks/hcliff6_device.sh
[ $(left) -gt 60 ] && TAILN=8 step hrev21 timeout 60 bash benchmarks/hrev21_device.sh
[ $(left) -gt 80 ] && TAILN=8 step huser19 timeout 90 bash benchmarks/huser19_device.sh
[ $(left) -gt 100 ] && TAILN=20 step hcliff7 timeout 110 bash benchmarks/hcliff7_device.sh
[ $(left) -gt 100 ] && TAILN=30 step hattn5 ARMS="${HATTN5_ARMS:-A H Y Y H A}" timeout $(( $(left) - 10 )) bash benchmarks/hattn5_device.sh
[ $(left) -gt 60 ] && TAILN=20 step hcliff5 timeout $(( $(left) - 10 )) bash benchmarks/hcliff5_device.sh
pk; echo "total $((SECONDS-t0)) s"
