#!/usr/bin/env bash
# The 2026-12-07 17:16 session's call on an H100 (lead), on main + dev43.patch (landing L2's tree: huser30, hrev31,
# hcliff15's stream_mma ring by default, the lead's fixes). First the -m gpu suite (hcliff15's ring on a card for the
# first time: expected no failure), then hcliff15's W4A16 / W8A16 rows (expected in its header: n06 0.035-0.08 ms,
# dense/Tile 0.3-0.6); hred's reduction A/B (l09 0.35 -> 0.5-0.7x; decode rows 0-10 % faster), huser30's programs on a card,
# On an H200 the issues' rows come first (call43.sh's tables/heng steps).
[ -f dev43.patch ] && git apply dev43.patch && rm dev43.patch && echo "applied dev43.patch"
. benchmarks/device_calls/preamble.sh
call_log 43
h200() { nvidia-smi -L | grep -q H200; }
if h200 && want tables; then
  pf() { local tag=$1; shift; echo "== prefill $tag ($((SECONDS-t0)) s)"
    ATTN_TRITON=0 timeout 150 python3 -W ignore benchmarks/attention.py --prefill-only --reps 5 "$@" --out "$W/prefill_$tag" > "$W/prefill_$tag.log" 2>&1
    echo "rc=$?"; grep -E "^\| (f16|bf16)" "$W/prefill_$tag.log" | tail -24 | cut -c1-130; pk; }
  pf s16k --seqs 16384; pf bf64 --only bf16-64 --seqs 1024,4096
  [ $(left) -gt 120 ] && want heng && TAILN=30 step heng timeout $(( $(left) < 190 ? $(left) - 10 : 180 )) bash benchmarks/heng_device.sh
fi
gpu_suite
for s in hred hcliff15 huser30 hrev31 huser27 huser28; do
  want $s && [ -f benchmarks/${s}_device.sh ] && [ $(left) -gt 70 ] && TAILN=30 step $s timeout $(( $(left) < 160 ? $(left) - 10 : 150 )) bash benchmarks/${s}_device.sh
done
pk; echo "total $((SECONDS-t0)) s"
