#!/usr/bin/env bash
# huser29 (2026-12-07, round 28; no device time of its own): round 28's user programs (tests/user/programs/h04-h16,
# numerics at the edges: NaN and infinities through atomics, reductions, scans, softmax; -0.0; integer division,
# remainder and shifts past the width in every integer type; saturating float -> int casts and int -> float
# rounded once; f16/bf16 overflow and subnormals; masked tails, one-element reductions, a float sort by bits, integer atomics past 2^31, host and kernel alike) on a real GPU, each run once: its tensors against
# the interpreter's (the runner's tolerances) and then its own NumPy check (test_user_programs28.CHECKS), which
# is bit for bit (signed zeros, NaN where NaN) wherever the docs promise exact results: atomics, max/min/argmax,
# integer ops, casts, comparisons, `where`, f16/bf16 arithmetic; sums, products, cumsum and std::nn's
# softmax/log_softmax within a tolerance.
# Expected (written before any run): 13 "ok" lines (llsim sm_90a gave the interpreter's bits on every tensor of
# h04-h16, log_softmax's exp/log within 2e-5). A FAILED h04 would mean the hardware's f32 atomic max/min (or
# its CAS loop) drops a NaN or orders -0.0 / 0.0 otherwise; a FAILED h09 that f16/bf16 subnormals are flushed.
# ~30-60 s, mostly compiles.
# usage (on the device, from the checkout's root): bash benchmarks/huser29_device.sh
set -uo pipefail
. benchmarks/device_env.sh huser29
nvidia-smi -L
echo "=== each program on the GPU: against the interpreter, then its NumPy check (bit for bit where promised)"
timeout 110 python3 benchmarks/user_programs_gpu.py test_user_programs28 h
