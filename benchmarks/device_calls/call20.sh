#!/usr/bin/env bash
# The next session's first call (written 2026-12-06 14:45, not run: no device time was left): on main after L4
# (a8ca2825), the GPU checks of what landed after the final call: the -m gpu suite, cliffs' GEMM cases (the deep
# wide ring by default: 128x128x32 expected ~0.96x), launch_host's GEMM row with and without the wide variant
# (51 us vs 12 us in calls 19 / 18), fast_math_check's corrected comparisons (every line OK expected).
. benchmarks/device_calls/preamble.sh
W=$OUT/c20; mkdir -p "$W"; pk() { tar -C "$OUT" -czf "$OUT/call20.tgz" c20; }
timeout 130 python3 -m pytest -q -p no:cacheprovider -m gpu -n 14 --dist worksteal tests -k 'not constant_over_10000' > "$W/suite.log" 2>&1
echo "suite rc=$? ($((SECONDS-t0)) s)"; grep -E "^FAILED|^ERROR|passed|failed" "$W/suite.log" | tail -12; pk
timeout 40 python3 -W ignore benchmarks/cliffs.py --only gemm --jobs 14 > "$W/cliffs.log" 2>&1; echo "cliffs rc=$?"; cut -c1-110 "$W/cliffs.log"; pk
timeout 30 python3 -W ignore benchmarks/launch_host.py --only gemm,attn-held,add > "$W/lh.log" 2>&1; tail -4 "$W/lh.log" | cut -c1-120
TILEC_GEMM_WIDEN=0 timeout 30 python3 -W ignore benchmarks/launch_host.py --only gemm > "$W/lh0.log" 2>&1; tail -1 "$W/lh0.log" | cut -c1-120
timeout 30 python3 -W ignore benchmarks/fast_math_check.py 2>&1 | tail -3 | cut -c1-120
pk; echo "total $((SECONDS-t0)) s"
