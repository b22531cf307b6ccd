#!/usr/bin/env bash
# The 2026-12-07 06:02 session's call (lead), on main after landing L1 plus the helpers' later posts (applied on the
# device from dev34.patch when present). On an H200 the issues' tables first (tables.sh: prefill, decode, engine 4B
# at 1,024) and hattn7's A/S start arms; on any card: the -m gpu suite (hrev25's checker fixes, hfix4's wgmma
# descriptor in the 32-bit address field for every flash_attention kernel, huser24's API changes, hgpuerr's runtime
# errors, hcliff9's fewer warps for small tiles), hattn8's S-ahead A/B, hcliff9's max-pool / resize rows, huser23's
# i programs on the card (each script's header has its expectations). STEPS picks steps.
# Expected: suite no failure; hattn8 per its header (S/A at D = 64 S = 4,096 -5..+10 %, T/B +5..+20 % if the S wait
# is the model's share); the D = 128 S = 4,096 control unchanged from call 33 (~700 TFLOP/s on an H100: hfix4's
# descriptor change moves SASS by +-8 instructions, expected within the spread).
[ -f dev34.patch ] && git apply dev34.patch && echo "applied dev34.patch"
. benchmarks/device_calls/preamble.sh
call_log 34
if want tables && nvidia-smi -L | grep -q H200; then
  . benchmarks/device_calls/tables.sh
fi
gpu_suite
want hattn8 && [ $(left) -gt 120 ] && TAILN=30 step hattn8 timeout $(( $(left) < 210 ? $(left) - 10 : 200 )) bash benchmarks/hattn8_device.sh
want hcliff9 && [ -f benchmarks/hcliff9_device.sh ] && [ $(left) -gt 80 ] && TAILN=20 step hcliff9 timeout $(( $(left) < 160 ? $(left) - 10 : 150 )) bash benchmarks/hcliff9_device.sh
want huser23 && [ -f benchmarks/huser23_device.sh ] && [ $(left) -gt 70 ] && TAILN=8 step huser23 timeout $(( $(left) < 130 ? $(left) - 10 : 120 )) bash benchmarks/huser23_device.sh
want hgpuerr && [ -f benchmarks/hgpuerr_device.sh ] && [ $(left) -gt 70 ] && TAILN=14 step hgpuerr timeout $(( $(left) < 110 ? $(left) - 10 : 100 )) bash benchmarks/hgpuerr_device.sh
want hcliff10 && [ -f benchmarks/hcliff10_device.sh ] && [ $(left) -gt 70 ] && TAILN=14 step hcliff10 timeout $(( $(left) < 130 ? $(left) - 10 : 120 )) bash benchmarks/hcliff10_device.sh
want hrev26 && [ -f benchmarks/hrev26_device.sh ] && [ $(left) -gt 60 ] && TAILN=10 step hrev26 timeout $(( $(left) < 100 ? $(left) - 10 : 90 )) bash benchmarks/hrev26_device.sh
want hattn7 && nvidia-smi -L | grep -q H200 && [ $(left) -gt 100 ] && TAILN=16 step hattn7 timeout $(( $(left) - 10 )) bash benchmarks/hattn7_device.sh
pk; echo "total $((SECONDS-t0)) s"
