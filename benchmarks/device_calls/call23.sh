#!/usr/bin/env bash
# 2026-12-06 15:20 session's final call, on landing L3's tree. Steps by value if the call is cut: the -m gpu suite
# (hgemm3's 5 new GPU GEMM cases, the err-word queue in runtime/cuda.py, hf32's default warps); hattn3's STEP=more
# (A Q P P Q A at S = 4,096 and 16,384: do QEARLY+FASTDIV / the producer's 24 registers win past the default's
# spread? expected -0.5..+1.5 %); cliffs' attention cases (hattn3's user attn_fma: ~0.95-0.99x at D = 128, ~0.8x at
# D = 64; the user loop 0.89x / 0.74x as call 19); fma_gemm.py (hf32's later batches: expect >= call 22's 0.82x);
# huser17_paths.py (hcliff3's fixes: maxpool / blur rows above call 22's 0.04x / 0.29x if they landed).
. benchmarks/device_calls/preamble.sh
W=$OUT/c23; mkdir -p "$W"; pk() { tar -C "$OUT" -czf "$OUT/call23.tgz" c23; }
left() { echo $(( ${BUDGET:-${CALL_BUDGET:-560}} - (SECONDS - t0) )); }
step() { local name=$1 t=$2; shift 2; [ $(left) -gt $((t/2)) ] || { echo "== $name skipped"; return; }
  echo "== $name ($((SECONDS-t0)) s)"; timeout $t "$@" > "$W/$name.log" 2>&1; echo "rc=$?"; tail -${TAILN:-16} "$W/$name.log" | cut -c1-170; pk; }
echo "== suite ($((SECONDS-t0)) s)"
timeout 140 python3 -m pytest -q -p no:cacheprovider -m gpu -n 14 --dist worksteal tests -k 'not constant_over_10000' > "$W/suite.log" 2>&1
echo "suite rc=$?"; grep -E "^FAILED|^ERROR|passed|failed" "$W/suite.log" | tail -14 | cut -c1-200; pk
TAILN=12 step hattn3 110 env STEP=more bash benchmarks/hattn3_device.sh
step cliffs_attn 60 python3 -W ignore benchmarks/cliffs.py --only attn --jobs 14
step huser17 70 python3 -W ignore benchmarks/huser17_paths.py
step fma 80 python3 -W ignore benchmarks/fma_gemm.py --quick
TAILN=30 step cliffs_gemm 45 python3 -W ignore benchmarks/cliffs.py --only gemm --jobs 14
pk; echo "total $((SECONDS-t0)) s"
