#!/usr/bin/env bash
# The 2026-12-07 08:53 session's second call (lead), on comb after landing L1b plus the later posts (hfix6, huser25,
# hrev27, hcliff12, hrev28; applied from dev39.patch when present). On an H200 the issues' tables first (tables.sh);
# on any card: the -m gpu suite, then hfix6's GPU halves and bad-switch rows, huser25's 23 programs on the card and
# 8 kernels vs torch, hcliff12's GEMV / col_sum arms (the FMA pipeline for 2-byte inputs, TILEC_STREAM_AUTO),
# herf's pow gpu case. STEPS picks steps. Expected: each script's header (suite no failure; hfix6 all passed, 3 ok,
# rc=3 E0604 rows; huser25 23 ok; hcliff12 gemv new ~0.5-0.9x torch vs old ~0.2x, col_sum auto 0.6-1.0x).
[ -f dev39.patch ] && git apply dev39.patch && rm dev39.patch && echo "applied dev39.patch"
. benchmarks/device_calls/preamble.sh
call_log 39
if want tables && nvidia-smi -L | grep -q H200; then
  . benchmarks/device_calls/tables.sh
fi
gpu_suite
want hfix6 && [ $(left) -gt 70 ] && TAILN=20 step hfix6 timeout $(( $(left) < 130 ? $(left) - 10 : 120 )) bash benchmarks/hfix6_device.sh
want hcliff12 && [ $(left) -gt 70 ] && TAILN=40 step hcliff12 timeout $(( $(left) < 130 ? $(left) - 10 : 120 )) bash benchmarks/hcliff12_device.sh
want huser25 && [ $(left) -gt 70 ] && TAILN=40 step huser25 timeout $(( $(left) < 160 ? $(left) - 10 : 150 )) bash benchmarks/huser25_device.sh
want herf && [ $(left) -gt 40 ] && TAILN=6 step herf timeout $(( $(left) - 10 )) python3 -m pytest -q -p no:cacheprovider -n 0 -m gpu tests/backend/test_erf32.py tests/backend/test_pow_f32_bits.py
pk; echo "total $((SECONDS-t0)) s"
