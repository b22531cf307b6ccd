#!/usr/bin/env bash
# hred (2026-12-07 17:16 session; no device time of its own): reductions at the hardware's speed, on one card,
# each step twice: as built (new) and with TILEC_REDUCE_STAGED=0 TILEC_REDUCE_XPOSE=0 (old: the serial loop for
# every staged reduction and long Slice-layout one, R butterflies for R rows a thread).
#   1. benchmarks/hred_bench.py against PyTorch (each result compared first): l09 per_slice ([1024, 256, 256]
#      f32), n03 gn_fwd ([1024, 8, 4096]), a [C, 4096] Slice-layout sum ([2048, 8, 4096], `t.sum(0).sum(1)`),
#      controls row softmax and LayerNorm ([8192, 1024]);
#   2. benchmarks/attention.py --decode-only --split fma: std::attention's decode_split / _varlen / decode_fused,
#      whose P.V sum over the keys (32 columns a thread over 16 lanes) takes the transposing butterfly.
# Expected (written before any run; call 42b/42c measured l09 0.35x torch, n03 0.099 ms = 2.56x):
#   l09: old ~0.33-0.37x torch; new 0.13-0.2 ms, torch/Tile 0.5-0.7 (SASS 1,949 -> 949: SHFL 160 -> 32, spills
#        408 -> 84 B, barriers 7 -> 4: the `.sum(1)` of the Slice result in registers, no 256-long loop);
#   n03: new = old within ~8% (0.09-0.105 ms; SHFL 80 -> 18, SASS 1,980 -> 1,784, spills 12 -> 28 B);
#   Slice-layout sum: old 1-2 ms (128 KB staged, a 4,096-long serial loop a thread: one block an SM), new
#        0.08-0.12 ms (registers, one 32-byte exchange: bandwidth-bound), torch/Tile 0.7-1.1;
#   controls: PTX identical in both arms, times equal within ~3%;
#   decode (fma split): SHFL 168 -> 100, registers 255 -> 237, SASS 2,954 -> 2,770 a decode_split: new 0-10%
#   faster a row; slower by more than 3% anywhere: the steps back (`reduce_xpose.pays`, gathered) cost more
#   latency than the model says (set TILEC_REDUCE_XPOSE=0 and report).
# ~100-150 s, mostly compiles. usage (on the device, from the checkout's root): bash benchmarks/hred_device.sh
set -uo pipefail
. benchmarks/device_env.sh hred
nvidia-smi -L
for arm in new old; do
  sw=(); [ $arm = old ] && sw=(TILEC_REDUCE_STAGED=0 TILEC_REDUCE_XPOSE=0)
  echo "== $arm ${sw[*]}"
  env "${sw[@]}" timeout 50 python3 benchmarks/hred_bench.py 2>&1 | tail -10
done
for arm in new old; do
  sw=(); [ $arm = old ] && sw=(TILEC_REDUCE_XPOSE=0)
  echo "== decode, $arm ${sw[*]}"
  env "${sw[@]}" timeout 22 python3 benchmarks/attention.py --decode-only --split fma --reps 5 --out "$D" 2>&1 \
    | grep -E "^\| decode" | cut -c1-200
done
pack
