#!/bin/bash
# hrev15 (hostile review, round 15): the GPU checks of what this round could
# only run on llsim. One step, <= 120 s on a warm H100/H200:
#  1. benchmarks/kernel_diff.py --cluster on the real GPU for ~50 s: random
#     element-wise bodies gathered over `#[cluster(2)]` (cluster_gather,
#     4 blocks) and combined, the stored results bit for bit against the
#     interpreter. Expected: "0 disagreements" (llsim sm_90a, which runs
#     clusters since this round by its own model of the exchange: st.async
#     into the peers' shared memory completing bytes on their mbarriers, gave
#     0 on 3,744 programs; a disagreement here is the hardware's exchange
#     differing from that model, or from the interpreter's rank order).
#  2. benchmarks/kernel_diff.py --exact on the real GPU for ~50 s: the float
#     operations the backend's table (`fastmath.MATH`) calls exact (`/`, `%`,
#     `sqrt`, `floor`, `ceil`, `fma`), bit for bit. Expected: "0
#     disagreements" (llsim gave 0 on 3,000 after this round's fixes; a
#     disagreement means an operation the table calls exact is not, on the
#     card: e.g. a `div.rn` ptxas turned approximate, an f16 double rounding).
# Prints one line a result.
cd "$(dirname "$0")/.." || exit 1
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}  # (keeps the wheels the preamble put on it)
timeout 57 python3 -W ignore benchmarks/kernel_diff.py 15 100000 --device --cluster --seconds 50 2>&1 | tail -4 | sed 's/^/kernel_diff gpu --cluster: /'
timeout 57 python3 -W ignore benchmarks/kernel_diff.py 16 100000 --device --exact --wide --seconds 50 2>&1 | tail -4 | sed 's/^/kernel_diff gpu --exact: /'
