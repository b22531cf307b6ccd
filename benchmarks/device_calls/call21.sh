#!/usr/bin/env bash
# The 2026-12-06 15:20 session's first call, on main 3faa3213. On an H200 the issues' tables first (prefill,
# decode, engine 4B at 1,024: every target of issues 15 and 17 is an H200 number, unmeasured since 2026-12-04),
# then call20's checks: the -m gpu suite (L4's additions not yet GPU-checked), cliffs' GEMM cases (deep wide ring
# default: 128x128x32 ~0.96x expected), launch_host's GEMM row with and without the wide variant (51 us vs 12 us in
# calls 19 / 18) and its profile, fast_math_check (all OK expected).
. benchmarks/device_calls/preamble.sh
W=$OUT/c21; mkdir -p "$W"; pk() { tar -C "$OUT" -czf "$OUT/call21.tgz" c21; }
left() { echo $(( ${BUDGET:-570} - (SECONDS - t0) )); }
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
fi
echo "== suite ($((SECONDS-t0)) s)"
timeout $(( $(left) > 250 ? 130 : 60 )) python3 -m pytest -q -p no:cacheprovider -m gpu -n 14 --dist worksteal tests -k 'not constant_over_10000' > "$W/suite.log" 2>&1
echo "suite rc=$?"; grep -E "^FAILED|^ERROR|passed|failed" "$W/suite.log" | tail -12; pk
[ $(left) -gt 45 ] && { timeout 40 python3 -W ignore benchmarks/cliffs.py --only gemm --jobs 14 > "$W/cliffs.log" 2>&1; echo "cliffs rc=$?"; cut -c1-110 "$W/cliffs.log"; pk; }
[ $(left) -gt 70 ] && {
  timeout 30 python3 -W ignore benchmarks/launch_host.py --only gemm,attn-held,add > "$W/lh.log" 2>&1; tail -4 "$W/lh.log" | cut -c1-120
  TILEC_GEMM_WIDEN=0 timeout 30 python3 -W ignore benchmarks/launch_host.py --only gemm > "$W/lh0.log" 2>&1; tail -1 "$W/lh0.log" | cut -c1-120; }
[ $(left) -gt 40 ] && { timeout 30 python3 -W ignore benchmarks/launch_host.py --only gemm --profile gemm > "$W/lhp.log" 2>&1; head -40 "$W/lhp.log" | cut -c1-150; }
[ $(left) -gt 30 ] && timeout 30 python3 -W ignore benchmarks/fast_math_check.py 2>&1 | tail -3 | cut -c1-120
pk; echo "total $((SECONDS-t0)) s"
