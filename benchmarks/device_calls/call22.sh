#!/usr/bin/env bash
# 2026-12-06 15:20 session, call on the second comb (main 75d19746 = L1 + hgemm3 23f7fd20, hrev18 cdc4e4ab, huser17
# a8bd2b48, hattn3 53dc4cb4, hf32 ab43bf13; written for the first comb (main 529cd5b4 + hgemm3 1b185294, hattn3 24e8eb99, hrev18 92599309,
# huser17 5cc52a74, hf32 dc71874e). On an H200 the issues' tables first (set SKIP_TABLES=1 to skip). Then: the -m gpu
# suite; each helper's GPU script (expectations in their headers: hgemm3_device.py launch rows plain vs wide and
# 128x128x128 ~0.95x; fma_gemm.py old 0.59x -> 0.75-0.95x torch f32; hrev18_device.sh 'inf -inf -inf inf OK';
# huser17_paths.py); cliffs' GEMM cases; launch_host's rows; fast_math_check (all OK expected).
. benchmarks/device_calls/preamble.sh
W=$OUT/c22; mkdir -p "$W"; pk() { tar -C "$OUT" -czf "$OUT/call22.tgz" c22; }
left() { echo $(( ${BUDGET:-580} - (SECONDS - t0) )); }
H200=; nvidia-smi -L | grep -q H200 && H200=1
if [ -n "$H200" ] && [ -z "${SKIP_TABLES:-}" ]; then
  echo "== prefill ($((SECONDS-t0)) s)"
  ATTN_TRITON=0 timeout 110 python3 -W ignore benchmarks/attention.py --prefill-only --reps 5 --out "$W/prefill" > "$W/prefill.log" 2>&1
  echo "rc=$?"; grep -E "^\| (f16|bf16)" "$W/prefill.log" | tail -24 | cut -c1-170; pk
  echo "== decode ($((SECONDS-t0)) s)"
  timeout 60 python3 -W ignore benchmarks/attention.py --decode-only --reps 5 --out "$W/decode" > "$W/decode.log" 2>&1
  echo "rc=$?"; grep -E "^\| decode" "$W/decode.log" | cut -c1-200; pk
  echo "== engine 4B ($((SECONDS-t0)) s)"
  timeout 90 python3 benchmarks/decode.py --models 4b --contexts 1024 --tokens 32 --eager-tokens 4 --prefill 0 \
    --out "$W/engine4b" > "$W/engine4b.log" 2>&1; echo "rc=$?"; grep -E "ctx|prefill" "$W/engine4b.log" | tail -4; pk
  exit 0
fi
echo "== suite ($((SECONDS-t0)) s)"
timeout 140 python3 -m pytest -q -p no:cacheprovider -m gpu -n 14 --dist worksteal tests -k 'not constant_over_10000' > "$W/suite.log" 2>&1
echo "suite rc=$?"; grep -E "^FAILED|^ERROR|passed|failed" "$W/suite.log" | tail -14 | cut -c1-200; pk
step() { local name=$1 t=$2; shift 2; [ $(left) -gt $((t/2)) ] || { echo "== $name skipped"; return; }
  echo "== $name ($((SECONDS-t0)) s)"; timeout $t "$@" > "$W/$name.log" 2>&1; echo "rc=$?"; tail -${TAILN:-16} "$W/$name.log" | cut -c1-170; pk; }
step hrev18 30 bash benchmarks/hrev18_device.sh
step hattn3 150 bash benchmarks/hattn3_device.sh
step hgemm3 100 python3 -W ignore benchmarks/hgemm3_device.py
step fma 90 python3 -W ignore benchmarks/fma_gemm.py
step huser17 70 python3 -W ignore benchmarks/huser17_paths.py
step cliffs 45 python3 -W ignore benchmarks/cliffs.py --only gemm --jobs 14
TAILN=4 step fastmath 30 python3 -W ignore benchmarks/fast_math_check.py
pk; echo "total $((SECONDS-t0)) s"
