#!/usr/bin/env bash
# The 2026-12-07 08:53 session's call (lead), on comb (main + this session's first posts: herf, hstatic, hcliff11,
# hfix6, hrev27; applied on the device from dev38.patch when present). On an H200 the issues' tables first
# (tables.sh); on any card: the -m gpu suite under the new defaults (the f32 erf of correctly rounded ops on both
# engines, TILEC_STATIC_DIMS on, the causal walk's odd middle tile once), then herf's bit-equality sweep and
# exact-GELU MLP, hstatic's layernorm rows, hcliff11's prefill arms and natural kernels. STEPS picks steps.
# Expected (each script's header): suite no failure; erf_pow same, the sweep 0 differ, mlp erf ~2.1-2.4x torch;
# layernorm 32,768 ~1.13x new vs ~0.92x old; hcliff11 O/A 0.73-0.97 on odd query-block counts, 1.00 at S = 1,024.
[ -f dev38.patch ] && git apply dev38.patch && rm dev38.patch && echo "applied dev38.patch"
. benchmarks/device_calls/preamble.sh
call_log 38
if want tables && nvidia-smi -L | grep -q H200; then
  . benchmarks/device_calls/tables.sh
fi
gpu_suite
want herf && [ $(left) -gt 80 ] && TAILN=14 step herf timeout $(( $(left) < 160 ? $(left) - 10 : 150 )) bash benchmarks/herf_device.sh
want hstatic && [ $(left) -gt 40 ] && { echo "== hstatic layernorm ($((SECONDS-t0)) s)"
  for arm in new old; do env $([ $arm = old ] && echo TILEC_STATIC_DIMS=0) timeout 40 python3 benchmarks/cliffs.py --only layernorm --reps 20 2>&1 | grep -v '^#' | sed "s/^/$arm /"; done | tee "$W/hstatic.log"; pk; }
want hcliff11 && [ $(left) -gt 80 ] && TAILN=40 step hcliff11 timeout $(( $(left) - 10 )) bash benchmarks/hcliff11_device.sh
pk; echo "total $((SECONDS-t0)) s"
