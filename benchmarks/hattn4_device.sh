#!/usr/bin/env bash
# Issue 15 prefill, hattn4 (2026-12-06 18:11-21:11, written before any run): the tile boundary's three switches
# (the walk's fast divisions, Q released in the rotated loop's last iteration, the producer warp at 24 registers and
# the two consumer warpgroups at 240) made the default where the value rows are 128 wide
# (`attention_tiles.BOUNDARY_D`), from call 24's P arm (H100, 18:12: D = 128 non-causal +0.8..+2.1 %, causal
# +-0.5 %, D = 64 -1..-3 %). D = 64 kernels and D = 128's causal tail variant (the causal launches over long keys)
# are main's byte for byte (ptx_sha), so only these rows can move. Arms, each its own process
# (`benchmarks/attention.py --throwaway`), f16 and bf16 D = 128, full and causal:
#   N  this tree's default
#   O  TILEC_ATTN_QEARLY=0 TILEC_ATTN_FASTDIV=0 TILEC_ATTN_PRODUCER_REGS=40: main's kernels at S = 4,096 (the long
#      keys' kernel and the tail variant; at S = 1,024 it would also take the fast walk and Q's release out of the
#      short keys' variant, which main has: so O runs S = 4,096 only)
#   R  TILEC_ATTN_PRODUCER_REGS=40: main's kernels at S = 1,024 (the short keys' variant: main has its fast walk
#      and Q's release; only the producer's 24 registers are new there); R runs S = 1,024 only
# Order N O R R O N (N runs both S).
# EXPECTED (ratios of the arms' means, Tile TFLOP/s and Tile / SDPA of the same process):
#   N/O full S = 4,096: +1..+2.5 % (call 23: P/A f16 +2.1 %, bf16 +2.4 %; call 24: f16 675 -> 689, bf16 697 -> 711);
#       f16 N ~689 TFLOP/s, still under the issue's 700 on an H100 (by hattn3's model a tile's ~1.8 blocks of
#       overhead are left: the switches take ~0.4 of them).
#   N/O causal S = 4,096: 1.000 +- the runs' spread: the same kernel (the tail variant is main's), a control.
#   N/R full S = 1,024: +0.5..+2 % (call 24's P/D f16 579 -> 583-592, bf16 590-597 -> 598); causal S = 1,024
#       +0.5..+1.5 % (437/436 -> 439/440 f16, 442/439 -> 450/445 bf16).
#   Errors as the default's (< 1e-2; the same numerics, only the schedule and registers differ).
# A row counts only where the ratio is above both arms' spreads (attention_ab.py prints them); if the full rows do
# not gain, BOUNDARY_D = () restores main (one line, attention_tiles.py).
# One device step, ~100-115 s on a warm H100 (each process cut by its own timeout; `el` guards keep it <= ~120 s).
# usage on the device machine, from the checkout's root (after `pip install --no-deps -e .`):
#   bash benchmarks/hattn4_device.sh        (REPS, BENCH_TIMEOUT, PREWARM_TIMEOUT adjust)
# Prints one line a step and the table rows (| dtype D ... |), then attention_ab.py's fold; writes $OUT/hattn4.tgz.
set -uo pipefail
NAME=hattn4; . benchmarks/attention_arms.sh
unset TILEC_ATTN_PRODUCER_REGS TILEC_ATTN_QEARLY TILEC_ATTN_FASTDIV
export ATTN_TRITON=0  # (call 22: Triton's attention, tuned in the first process, cut a run at its timeout)
arm() {  # the environment of arm $1
  case $1 in
    N) echo "" ;;
    O) echo "TILEC_ATTN_QEARLY=0 TILEC_ATTN_FASTDIV=0 TILEC_ATTN_PRODUCER_REGS=40" ;;
    R) echo "TILEC_ATTN_PRODUCER_REGS=40" ;;
  esac
}
seqs() { case $1 in N) echo 1024,4096 ;; O) echo 4096 ;; R) echo 1024 ;; esac; }
pj=$(( $(nproc) / 3 > 0 ? $(nproc) / 3 : 1 ))
for x in N O R; do
  env $(arm $x) timeout ${PREWARM_TIMEOUT:-35} python3 benchmarks/attention_prewarm.py --bench-rows f16-128,bf16-128 \
    --jobs "$pj" "${cubin[@]}" > "$D/prewarm_$x.log" 2>&1 &
done
wait
for x in N O R; do echo "hattn4 prewarm $x ($(name $x)) ($(el) s): $(tail -1 "$D/prewarm_$x.log")"; done
i=0
for x in N O R R O N; do
  i=$((i + 1))
  if [ "$(el)" -le 104 ]; then bench $x "$i$x" ${BENCH_TIMEOUT:-14} --only f16-128,bf16-128 --seqs "$(seqs $x)" \
    --throwaway
  else echo "hattn4 bench $i$x skipped ($(el) s)"; fi
done
python3 benchmarks/attention_ab.py "$D" --base N || true
pack
