#!/usr/bin/env bash
# The 2026-12-07 17:16 session's first call (lead), on main (or dev43.patch on top when present).
# On an H200 (none since call 41): the prefill rows never measured there (S = 16,384 all; bf16 D = 64 at 1,024 / 4,096),
# heng's engine A/B of TILEC_DECODE_PLAN=noearly (expectations and the promotion rule in heng_device.sh's header),
# then the -m gpu suite. A second call on a warm H200: STEPS="table" (heng_device.sh STEP=table: issue 17's table).
# On an H100: the user benches' rows that stopped at the _user_bench.host bug (huser27, huser28), then the suite.
# Expected: prefill S=16384 >= 1.0x SDPA on D=128 (as 4,096), D=64 ~0.97-1.0x; heng's rows as its header says.
[ -f dev43.patch ] && git apply dev43.patch && rm dev43.patch && echo "applied dev43.patch"
. benchmarks/device_calls/preamble.sh
call_log 43
h200() { nvidia-smi -L | grep -q H200; }
if want tables && h200; then
  pf() { local tag=$1; shift; echo "== prefill $tag ($((SECONDS-t0)) s)"
    ATTN_TRITON=0 timeout 150 python3 -W ignore benchmarks/attention.py --prefill-only --reps 5 "$@" --out "$W/prefill_$tag" > "$W/prefill_$tag.log" 2>&1
    echo "rc=$?"; grep -E "^\| (f16|bf16)" "$W/prefill_$tag.log" | tail -24 | cut -c1-130; pk; }
  pf s16k --seqs 16384; pf bf64 --only bf16-64 --seqs 1024,4096
fi
if want heng && h200 && [ $(left) -gt 120 ]; then
  TAILN=30 step heng timeout $(( $(left) < 190 ? $(left) - 10 : 180 )) bash benchmarks/heng_device.sh
fi
if want table && h200 && [ $(left) -gt 120 ]; then
  TAILN=40 step table STEP=table timeout $(( $(left) - 10 )) bash benchmarks/heng_device.sh
fi
if ! h200; then
  for s in huser27 huser28; do
    want $s && [ $(left) -gt 70 ] && TAILN=30 step $s timeout $(( $(left) < 150 ? $(left) - 10 : 140 )) bash benchmarks/${s}_device.sh
  done
fi
gpu_suite
pk; echo "total $((SECONDS-t0)) s"
