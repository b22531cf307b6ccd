#!/usr/bin/env bash
# The 2026-12-06 07:04 session's last call, on landing L3 (hcliff's paths: the one-stage attention ring, the
# `acc + dot` fold, GEMM epilogue loads, attention loop loads, the edge mask unswitched, sm_80's ring as sm_90a's
# fallback, default warps for wide rows; hrev15's cluster llsim and check-time instances; huser14's round 14).
# Expected (before the run): suite all green; cliffs.py: gemm_dot, user attn_bias and linear+bias on their
# pipelines (0.5-1x), the user attn 0.69x -> ~0.9x (the edge mask only on edge blocks), rows of 32,768 above
# call 7's 0.38x / 0.72x, the tuned cases unchanged (their PTX is main's); hrev15_device.sh: 0 disagreements
# twice; the prefill table and the 4B engine row as call 6 (the std/engine PTX unchanged by sha256).
. benchmarks/device_calls/preamble.sh
W=$OUT/c8; mkdir -p "$W"; pk() { tar -C "$OUT" -czf "$OUT/call8.tgz" c8; }
timeout ${T_SUITE:-150} python3 -m pytest -q -p no:cacheprovider -m gpu -n 14 --dist worksteal tests -k 'not constant_over_10000' \
  > "$W/suite.log" 2>&1
echo "suite rc=$? ($((SECONDS-t0)) s)"; grep -E "^FAILED|^ERROR|passed|failed" "$W/suite.log" | tail -20; pk
timeout ${T_CLIFFS:-150} python3 -W ignore benchmarks/cliffs.py --jobs 14 > "$W/cliffs.log" 2>&1
echo "cliffs rc=$? ($((SECONDS-t0)) s)"; cut -c1-200 "$W/cliffs.log"; pk
bash benchmarks/hrev15_device.sh 2>&1 | tail -8; echo "hrev15 ($((SECONDS-t0)) s)"
[ "${TABLES:-1}" = 1 ] || exit 0
timeout ${T_4B:-80} python3 benchmarks/decode.py --models 4b --contexts 1024 --tokens 32 --eager-tokens 4 \
  --prefill 0 --out "$W/engine4b" > "$W/engine4b.log" 2>&1
echo "4b rc=$? ($((SECONDS-t0)) s)"; grep -E "ctx" "$W/engine4b.log" | tail -2; pk
timeout ${T_PREFILL:-120} python3 -W ignore benchmarks/attention.py --prefill-only --reps 5 > "$W/prefill.log" 2>&1
echo "prefill rc=$? ($((SECONDS-t0)) s)"; grep -E "^\| (f16|bf16)" "$W/prefill.log"; pk
echo "total $((SECONDS-t0)) s"
