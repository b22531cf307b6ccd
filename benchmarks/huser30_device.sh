#!/usr/bin/env bash
# huser30 (2026-12-07, round 29; no device time of its own): round 29's user programs (tests/user/programs/v07-v25,
# an LLM-serving engineer's custom ops: a paged int8 KV-cache write and gather, RoPE with position ids, fused add +
# RMSNorm, per-token int8 / fp8-e4m3 quantisation, MoE route / permute / un-permute, a grouped GEMM with run-time
# group sizes, a temperature / top-k / top-p sampler, cross-entropy with ignore_index, log-softmax over a 151,936
# vocab, a ragged speculative-decoding rejection sampler, a rolling KV cache, DeepSeek's grouped top-k router,
# multi-LoRA bgmv, merge_attn_states, a block-scaled fp8 GEMM on u8 codes, u64 prefix-cache block hashes, a chunked
# prefill over a paged KV cache, an MoE scatter-add combine, a cluster split-KV decode) on a real GPU, each run
# once: its tensors against the interpreter's (the runner's tolerances) and its own NumPy check
# (test_user_programs29.CHECKS); then benchmarks/huser30_bench.py: six of them on CUDA tensors through the Python
# API, each checked, then timed against PyTorch (a table: Tile ms, torch ms, torch / Tile). Expected (written before
# any run): 19 "ok" lines (llsim sm_90a agreed on every tensor of v07-v25, v23 within 1e-4; v13's and v16's draws
# sit on f32 cumsums, so a GPU summing in another order could flip a token: an "ok~" or FAILED there would name
# that, not a wrong kernel). Ratios torch / Tile, guesses: v09 fused add+RMSNorm 1.5-3x (one pass against torch's
# 4-5 kernels); v10 int8+fp8 quant 1.5-3x (one pass writes both; torch reads x twice per format); v13 sampler 0.3-2x
# (62 bisection reductions of a 32768-wide row a block against torch's sort); v14 xent fwd+bwd 0.7-2x (two launches
# against F.cross_entropy + autograd); v15 log_softmax 0.5-1.5x (two launches and a last_block merge against one
# fused kernel); v12 grouped GEMM 0.1-0.5x (64 x 64 tiles from 3-D weights on the cp.async ring, against cuBLAS per
# expert). ~90-150 s, mostly compiles.
# usage (on the device, from the checkout's root): bash benchmarks/huser30_device.sh
set -uo pipefail
. benchmarks/device_env.sh huser30
nvidia-smi -L
echo "=== each program on the GPU: against the interpreter, then its NumPy check"
timeout 100 python3 benchmarks/user_programs_gpu.py test_user_programs29 v --count-int-differ
echo "=== six kernels timed against PyTorch"
timeout 90 python3 benchmarks/huser30_bench.py 2>&1 | tail -16
