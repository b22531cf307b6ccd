#!/usr/bin/env bash
# The 2026-12-06 09:49 session's final call (lead), on main after landing L4 (af8af1be). On an H200 first the issues'
# tables (call5.sh less its suite: prefill + decode attention, the 4B engine at 1,024/8,192/32,768 with the prefill
# of 2,048, 0.6B and 8B). Then: the -m gpu suite; cliffs.py (its reps now interleaved with torch's: the first case
# at its speed); bmm_paths.py (huser15: natural bmm old path ~0.1x / sm_80 ring 0.3-0.5x / stacked 2-D 0.7-0.9x);
# issue 15's prefill table with the Triton column at S = 1,024 / 4,096 / 16,384; the 4B engine at 1,024.
# Expected (before the run): suite green; cliffs as call 14 except the first case (0.83x, not 0.16-0.55x) and
# 16x64x128 back at ~0.53x; prefill rows as call 6 / call 11 (std kernels' PTX unchanged this session:
# ptx_sha.py), Tile / Triton 1.3-1.9x; engine 4B ~319 tok/s (86 %).
. benchmarks/device_calls/preamble.sh

W=$OUT/c15; mkdir -p "$W"; pk() { tar -C "$OUT" -czf "$OUT/call15.tgz" c15; }
if nvidia-smi -L | grep -q H200; then
  SKIP_TABLES=1; echo "H200: the issues' tables first"; T_SUITE=1 T_KDIFF=1 OUT=$W bash benchmarks/device_calls/call5.sh 2>&1 | tail -60; pk
fi
timeout ${T_SUITE:-170} python3 -m pytest -q -p no:cacheprovider -m gpu -n 14 --dist worksteal tests -k 'not constant_over_10000' \
  > "$W/suite.log" 2>&1
echo "suite rc=$? ($((SECONDS-t0)) s)"; grep -E "^FAILED|^ERROR|passed|failed" "$W/suite.log" | tail -20; pk
[ -n "${SKIP_TABLES:-}" ] && { echo "total $((SECONDS-t0)) s"; exit 0; }
bash benchmarks/hrev16_device.sh 2>&1 | tail -5; echo "hrev16 ($((SECONDS-t0)) s)"
timeout ${T_CLIFFS:-150} python3 -W ignore benchmarks/cliffs.py --jobs 14 > "$W/cliffs.log" 2>&1
echo "cliffs rc=$? ($((SECONDS-t0)) s)"; cut -c1-150 "$W/cliffs.log"; pk
timeout ${T_BMM:-90} python3 -W ignore benchmarks/bmm_paths.py > "$W/bmm.log" 2>&1
echo "bmm rc=$? ($((SECONDS-t0)) s)"; cut -c1-200 "$W/bmm.log"; pk
timeout ${T_PREFILL:-220} python3 -W ignore benchmarks/attention.py --prefill-only --reps 5 --seqs ${SEQS:-1024,4096} --out "$W" > "$W/prefill.log" 2>&1
echo "prefill rc=$? ($((SECONDS-t0)) s)"; grep -E "^\| (f16|bf16)" "$W/prefill.log" | tail -24; pk
timeout ${T_4B:-80} python3 benchmarks/decode.py --models 4b --contexts 1024 --tokens 32 --eager-tokens 4 \
  --prefill 0 --out "$W/engine4b" > "$W/engine4b.log" 2>&1
echo "4b rc=$? ($((SECONDS-t0)) s)"; grep -E "ctx" "$W/engine4b.log" | tail -2; pk
echo "total $((SECONDS-t0)) s"
