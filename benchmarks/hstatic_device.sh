#!/usr/bin/env bash
# hstatic (2026-12-07): `TILEC_STATIC_DIMS` on by default (`backend/llvm.static_dims`): a `&Tensor` dimension the
# kernel's type fixes (`[N]`, `[?, G, D]`'s G and D) is a constant in the kernel, so its bounds checks fold; every
# launch path refuses another size first (E0501/E0504; `ir/arg_dims.py` in the engines). ~150-190 s on an H100.
#
#     bash benchmarks/hstatic_device.sh
#
# Expected (RESULTS.md 'hstatic'; CPU only, not yet measured):
# - suite: the whole `-m gpu` suite under the new default (its launches: Tile `main`, graphs, the Python API on
#   PyTorch/CuPy, torch_op, the tuner, std::attention's decode kernels and the LLM engine, whose kernels' PTX
#   changed: decode_split/_varlen/_fused, embed, attn_decode_ring_early, kv_append, rope_kv_rows, nucleus_round,
#   nucleus_kept, sample_pick), with tests/runtime/test_static_dims_launch.py's card cases (another size refused,
#   the folded kernel's output the interpreter's): **no failure** (call 36: 909 passed).
# - layernorm rows of 32,768 (cliffs.py, examples/layernorm.tile's kernel at [1, 32768], 16 warps): new (default)
#   **~1.13x torch** as call 35 measured with the switch (0.134 ms), old (`TILEC_STATIC_DIMS=0`) ~0.92x (0.165 ms);
#   rows of 4,096 ~1.38x both.
set -u
. "$(dirname "$0")/arms.sh"
s0=$SECONDS
if [ "$ARM_DRY" = 1 ]; then
  echo "suite: timeout 120 python3 -m pytest -q -p no:cacheprovider -m gpu -n 14 --dist worksteal tests -k 'not constant_over_10000'"
else
  timeout 120 python3 -m pytest -q -p no:cacheprovider -m gpu -n 14 --dist worksteal tests \
    -k 'not constant_over_10000' > /tmp/hstatic_suite.log 2>&1
  echo "suite rc=$? ($((SECONDS - s0)) s)"
  grep -E "^FAILED|^ERROR|passed|failed" /tmp/hstatic_suite.log | tail -12 | cut -c1-220 | sed "s/^/suite /"
fi
for a in new old; do  # the switch read at compile time: each arm its own process
  ARM_TIMEOUT=40 arm $a $([ $a = old ] && echo TILEC_STATIC_DIMS=0) -- python3 benchmarks/cliffs.py --only layernorm \
    --reps 20
done
echo "done ($((SECONDS - s0)) s)"
