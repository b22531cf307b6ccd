#!/usr/bin/env bash
# The next session's first call (written 2026-12-06 17:30 by the 15:20 session's lead; not run). On an H200 the
# issues' tables come first (every target of issues 15 and 17 is an H200 number; no H200 since 2026-12-04). Then the
# promotion question call 23 left: hattn3's P arm (TILEC_ATTN_QEARLY=1 TILEC_ATTN_FASTDIV=1
# TILEC_ATTN_PRODUCER_REGS=24) read +2.1 / +2.4 % at D = 128 S = 4,096 and +1.1 / +1.2 % at 16,384 (f16 / bf16) over
# the default on an H100; the whole prefill table under P against the default, alternated D P D P, decides whether
# it is the default on every row (expected: D = 128 rows +1..+2.5 %; D = 64 and causal rows unknown: the chained
# D = 64 variant's producer spills 48 B at 24 registers, so P may need to exclude it). Then the -m gpu suite.
. benchmarks/device_calls/preamble.sh
call_log 24; LIMIT=${BUDGET:-570}
table() { prefill_table "$@"; }
if nvidia-smi -L | grep -q H200; then
  table D; decode_table; engine_table
  [ $(left) -gt 130 ] && table P TILEC_ATTN_QEARLY=1 TILEC_ATTN_FASTDIV=1 TILEC_ATTN_PRODUCER_REGS=24
else
  table D; table P TILEC_ATTN_QEARLY=1 TILEC_ATTN_FASTDIV=1 TILEC_ATTN_PRODUCER_REGS=24
  table D2; table P2 TILEC_ATTN_QEARLY=1 TILEC_ATTN_FASTDIV=1 TILEC_ATTN_PRODUCER_REGS=24
fi
[ $(left) -gt 100 ] && { echo "== suite ($((SECONDS-t0)) s)"
  timeout $(( $(left) - 10 )) python3 -m pytest -q -p no:cacheprovider -m gpu -n 14 --dist worksteal tests -k 'not constant_over_10000' > "$W/suite.log" 2>&1
  echo "suite rc=$?"; grep -E "^FAILED|^ERROR|passed|failed" "$W/suite.log" | tail -12 | cut -c1-200; }
pk; echo "total $((SECONDS-t0)) s"
