#!/usr/bin/env bash
# The next session's first call (written 2026-12-06 20:40 by the 18:11 session's lead; not run: every start after
# call 25 was refused). Main = landing L2 of that session. On an H200 the issues' tables come first (no H200 since
# 2026-12-04): the prefill table (hattn4 made the fast walk, Q early and a 24-register producer the default at
# D = 128: call 24 read +0.8..+2.1 % for them on D = 128 non-causal H100 rows), decode (decode_split_tc changed with
# them), the engine at 4B 1,024. Then the -m gpu suite (hrev19's fix of a bar.sync 0 inside warp roles: a hang;
# hgemm4's FMA split-K, now the default for few-tile f32 GEMMs; hcliff4's products pipeline / shift_dot), then each
# helper's script while time is left: hrev19 ("alibi 500 keys: OK"), hattn4 (the D = 128 defaults against main's
# old kernels: +1..+2.5 % at S = 4,096), hcliff4 (max-pool ~0.1-0.2x, blur rows >= 1x, cols ~4-6x, dq as call 25),
# hgemm4 (FMA transposed rings ~0.88-0.92x, split-K skinny f32), huser18_paths (paged decode, f32 GEMM, resize,
# w8a8 and the first GPU check of TILEC_INT8_MMA: err ~4e-3). Expectations: each script's header and RESULTS.md's
# CPU sections of hattn4, hcliff4, hgemm4.
. benchmarks/device_calls/preamble.sh
call_log 27
if nvidia-smi -L | grep -q H200; then
  . benchmarks/device_calls/tables.sh
fi
echo "== suite ($((SECONDS-t0)) s)"
timeout 150 python3 -m pytest -q -p no:cacheprovider -m gpu -n 14 --dist worksteal tests -k 'not constant_over_10000' > "$W/suite.log" 2>&1
echo "suite rc=$?"; grep -E "^FAILED|^ERROR|passed|failed" "$W/suite.log" | tail -12 | cut -c1-220; pk
[ $(left) -gt 90 ] && TAILN=6 step hrev19 bash benchmarks/hrev19_device.sh
[ $(left) -gt 100 ] && TAILN=40 step hattn4 bash benchmarks/hattn4_device.sh
[ $(left) -gt 90 ] && TAILN=30 step hcliff4 bash benchmarks/hcliff4_device.sh
[ $(left) -gt 90 ] && TAILN=25 step hgemm4 bash benchmarks/hgemm4_device.sh
[ $(left) -gt 85 ] && TAILN=20 step huser18 timeout 80 python3 benchmarks/huser18_paths.py
pk; echo "total $((SECONDS-t0)) s"
