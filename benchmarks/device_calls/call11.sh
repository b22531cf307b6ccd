#!/usr/bin/env bash
# 2026-12-06 09:49 session, call 11 (lead, on main + the lead's benchmark scripts): (1) the user's GEMM under
# `#[hints(num_warps, stages)]` (`benchmarks/gemm_hints_sweep.py`: which warps/stages the default should pick per
# tile, and the CTAs an SM each gets); (2) issue 15's prefill rows at S = 4,096 with the new Triton column
# (`benchmarks/triton_attention.py`, first run: does it compile, its error and speed). Expected: the header of
# each script; Triton's flash attention from its tutorial's form runs ~450-600 TFLOP/s on an H100 non-causal.
. benchmarks/device_calls/preamble.sh
W=$OUT/c11; mkdir -p "$W"; pk() { tar -C "$OUT" -czf "$OUT/call11.tgz" c11; }
timeout ${T_SWEEP:-200} python3 -W ignore benchmarks/gemm_hints_sweep.py > "$W/sweep.log" 2>&1
echo "sweep rc=$? ($((SECONDS-t0)) s)"; cat "$W/sweep.log"; pk
timeout ${T_PREFILL:-200} python3 -W ignore benchmarks/attention.py --prefill-only --seqs ${SEQS:-4096} --reps 5 --out "$W" > "$W/prefill.log" 2>&1
echo "prefill rc=$? ($((SECONDS-t0)) s)"; grep -E "^\| (f16|bf16)|Error|error" "$W/prefill.log" | head -30; tail -5 "$W/prefill.log"; pk
echo "total $((SECONDS-t0)) s"
