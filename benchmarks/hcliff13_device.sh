#!/usr/bin/env bash
# hcliff13 (2026-12-07 11:51 session): huser25_bench's rows on an H100/H200 (every row: tests/user l14, l12, l13,
# l15 f32 and, new, bf16, l03, l04, l09, l02 and, new, a probe of l02 without atomics, against PyTorch), then
# old/new arms of the four codegen changes, each
# arm a process (the switches are read when a kernel compiles): l12 with TILEC_TANH_DIV=rn TILEC_ACC_PAIRS=0 (tanh
# by div.rn with its slow-path call and the residual an f16 a load, as call 39 ran it), l12 with the tanh fix alone
# (TILEC_ACC_PAIRS=0), l15 with TILEC_UNROLL=0 (the Philox rounds as a loop), l02 with TILEC_ATOMIC_SPREAD=0 (the
# first copy's thread adds all 16 bins), then all three new again (drift).
# ~110-150 s, mostly compiles. Columns: Tile ms, torch ms, torch / Tile (above 1: Tile faster).
#
# Expected (written before any run; CPU-only reading of sm_90a SASS, ptxas 13; H100 SXM figures):
#   l14 masked softmax          ~5.3x (call 39: 5.26x; unchanged code)
#   l12 GEMM+bias+GELU+residual new 1.4-2.0x (old arm ~0.8x, call 39: 0.80x); new/old time 0.40-0.60: the old
#                               epilogue spilled 4.7 KB a thread (wide 128 x 256 tiles, 128 div.rn calls a thread),
#                               ~1.2 GB of local-memory traffic through L2 for the 512 wide tiles; new: 4 B, 11,024
#                               -> 6,944 SASS a thread; the tanh fix alone (52 B, 7,224) within 3 % of new
#   l13 RoPE f32                ~5.0x (call 39: 5.03x; unchanged)
#   l15 dropout f32             new 0.75-0.85x, old ~0.77x (new/old 0.90-1.0): at the DRAM roofline for its 13
#                               bytes an element (it stores the random bits too) against torch's 9 (0.69x at equal
#                               bandwidth); unrolling takes 20 IMAD.MOV an element off the FMA pipe
#   l15 dropout bf16 (new row)  new 0.5-0.7x, old 0.35-0.5x (new/old 0.65-0.8): 4 bytes an element against
#                               torch's 5, but a Philox4x32-10 an element (torch: one per 4) and a div.rn each:
#                               compute-bound, 867 -> 656 SASS a thread (8 elements) unrolled
#   l03 top-5 of 64             ~4.4x (call 39: 4.39x; unchanged)
#   l04 stable sort of 32       0.2-0.6x: a [1, 32, 32] compare tile a block of 128 threads, 65,536 blocks, 304
#                               SASS and 20 barriers a thread: issue-bound ~85-110 us against torch's ~30-50 us
#   l09 slice sum/mean/var      0.6-0.85x: one 1,024-thread block an SM (64 registers, 408 B spilled), its 256 KB
#                               slice loaded, then two rounds of two reductions (160 SHFL a thread) with nothing
#                               in flight: ~16 us a block, 8 rounds ~0.13 ms against torch's one pass ~0.09 ms
#   l02 weighted histogram      new 1.5-3x (~0.08-0.1 ms, near the probe): 16 lanes issue the block's 16 adds as
#                               one RED; old arm (TILEC_ATOMIC_SPREAD=0) 0.8-2.5x: ~85 us of issue (608 SASS a thread,
#                               8 warps a block, 16,384 blocks) and 16 one-lane f32 REDs a block into one 64-byte
#                               line (262,144 in all); old/new 1.0-2.0. torch: u8 shift, int64 copy, bincount's
#                               min/max checks (two host syncs) and histogram, ~0.2-0.3 ms
#   l02 probe (new row: l02's kernel with each block's 16 sums stored, no atomics) ~80-90 us, issue-bound: old l02
#                               well over the probe (> 1.5x) means the one-lane REDs bounded it
# Full logs: $OUT/hcliff13.tgz (a traceback, if any, is printed at the end).
# usage (on the device, from the checkout's root): bash benchmarks/hcliff13_device.sh
set -uo pipefail
. benchmarks/device_env.sh hcliff13
nvidia-smi -L
python3 -c "import torch; print('torch', torch.__version__)"
echo "=== every row, this branch's defaults (TILEC_TANH_DIV=fast, TILEC_UNROLL=auto)"
timeout 80 python3 benchmarks/huser25_bench.py 2>&1 | tee "$D/new.log" | tail -14
echo "=== old: l12 with TILEC_TANH_DIV=rn TILEC_ACC_PAIRS=0 (call 39's code)"
TILEC_TANH_DIV=rn TILEC_ACC_PAIRS=0 timeout 25 python3 benchmarks/huser25_bench.py --only l12 2>&1 | tee "$D/old12.log" | tail -1
echo "=== l12 with TILEC_ACC_PAIRS=0 (the tanh fix alone)"
TILEC_ACC_PAIRS=0 timeout 25 python3 benchmarks/huser25_bench.py --only l12 2>&1 | tee "$D/tanh12.log" | tail -1
echo "=== old: l15 with TILEC_UNROLL=0"
TILEC_UNROLL=0 timeout 25 python3 benchmarks/huser25_bench.py --only l15 2>&1 | tee "$D/old15.log" | tail -2
echo "=== old: l02 with TILEC_ATOMIC_SPREAD=0 (16 one-lane REDs a block)"
TILEC_ATOMIC_SPREAD=0 timeout 25 python3 benchmarks/huser25_bench.py --only l02 2>&1 | tee "$D/old02.log" | tail -2
echo "=== new again: l12, l15, l02"
timeout 35 python3 benchmarks/huser25_bench.py --only l12,l15,l02 2>&1 | tee "$D/again.log" | tail -5
grep -h -B2 -A12 "Traceback" "$D"/*.log | tail -40
pack
