#!/usr/bin/env bash
# The 2026-12-07 14:26 session's first call (lead), on main 594cf7e1 (or dev42.patch on top when present). Any card: the
# -m gpu suite on main (first run of hstream/hcliff13/hgemv/hnum/hrev29's defaults on a card after the last fixes),
# then hstream's rule arms, hcliff13's arms, hgemv's 8-token rows, hnum's atan2 bits and time, huser26/27 on a card.
# On an H200 first (then heng's engine A/B, H200 only): the prefill rows call 41 had no budget for (S = 16,384 all; bf16 D = 64 at 1,024 / 4,096).
# Expected (headers of the scripts): col_sum 0.51x -> 0.88-1.0x; GEMM+tanh-GELU 0.80x -> 1.4-2.0x; 8 tokens >= 0.8x;
# atan2 0 bits differ; prefill S=16384 >= 1.0x SDPA on D=128 (as 4,096), D=64 ~0.97-1.0x. STEPS picks steps.
[ -f dev42.patch ] && git apply dev42.patch && rm dev42.patch && echo "applied dev42.patch"
. benchmarks/device_calls/preamble.sh
call_log 42
h200() { nvidia-smi -L | grep -q H200; }
if want tables && h200; then
  pf() { local tag=$1; shift; echo "== prefill $tag ($((SECONDS-t0)) s)"
    ATTN_TRITON=0 timeout 150 python3 -W ignore benchmarks/attention.py --prefill-only --reps 5 "$@" --out "$W/prefill_$tag" > "$W/prefill_$tag.log" 2>&1
    echo "rc=$?"; grep -E "^\| (f16|bf16)" "$W/prefill_$tag.log" | tail -24 | cut -c1-130; pk; }
  pf s16k --seqs 16384; pf bf64 --only bf16-64 --seqs 1024,4096
fi
if want heng && h200 && [ -f benchmarks/heng_device.sh ] && [ $(left) -gt 120 ]; then
  TAILN=30 step heng timeout $(( $(left) < 190 ? $(left) - 10 : 180 )) bash benchmarks/heng_device.sh
fi
gpu_suite
for s in hcliff13 huser26 huser27 huser28 huser29 hstream hgemv hnum; do
  want $s && [ -f benchmarks/${s}_device.sh ] && [ $(left) -gt 70 ] && TAILN=30 step $s timeout $(( $(left) < 150 ? $(left) - 10 : 140 )) bash benchmarks/${s}_device.sh
done
pk; echo "total $((SECONDS-t0)) s"
