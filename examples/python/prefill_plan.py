"""How to launch `std::attention`'s `flash_attention` (prefill) for a shape:
the query block BM and the key block BN.

    from prefill_plan import prefill_blocks
    bm, bn = prefill_blocks(head_dim, sm)        # sm: 90 for sm_90, 80 for sm_80
    TILE.flash_attention[dt, bm, bn, d](tilelang.partition(o, [1, bm, d]), q, k, v, scale, causal)

No PyTorch here (the rule is arithmetic on the head dim and the card's
compute capability), so it is tested without a GPU
(`tests/std/test_prefill_plan.py`) and shared by `torch_attention.py` and
`benchmarks/attention.py`.

What the rule follows (benchmarks/RESULTS.md, issue 15):

- On sm_90 (the Hopper attention pipeline: a producer warpgroup and BM / 64
  consumer warpgroups) 128 x 128 at head dims 64 and 128: every row of the
  issue's table is measured there (128 x 64 ran 346 TFLOP/s against 417 at
  D = 64, S = 1,024 on the H100).
- At D = 64, `TILEC_PREFILL_WG3=1` (opt-in, hattn9: not yet measured on a
  GPU; `benchmarks/hattn9_device.sh` decides) takes FlashAttention-3's D = 64
  tiling, 192 x 128: three consumer warpgroups of 64 query rows, each with
  160 registers a thread (the producer keeps 24), so a third warpgroup's
  tensor-core work can run while the other two run their softmax, and each
  K/V tile in shared memory serves 1.5x the query rows. The price: S_q is
  cut into 192-row blocks (S = 1,024: 6 blocks of which the last has 64 rows,
  1,152 rows computed for 1,024), and a 192-row tile takes neither the key
  split of the persistent walk's last round nor the short keys' chained
  variant (their registers do not fit beside 160: `attention_split.roomy`).
- Elsewhere (sm_80's ring, other head dims) 128 x 64: a 128-wide key block
  beside D = 256's accumulator would not fit a thread's registers.
"""

from __future__ import annotations

from tilelang.env_switch import flag

# `TILEC_PREFILL_WG3` unset: "0" (three consumer warpgroups at D = 64 opt-in until a GPU has timed them)
WG3_DEFAULT = "0"
# the head dims whose 128 x 128 blocks are measured on sm_90
HOPPER_D = (64, 128)


def wg3() -> bool:
    """Whether the plan takes three consumer warpgroups (BM = 192) at D = 64 (`TILEC_PREFILL_WG3`, "0" or "1")."""
    return flag("TILEC_PREFILL_WG3", WG3_DEFAULT)


def prefill_blocks(d: int, sm: int) -> tuple[int, int]:
    """(BM, BN) for `flash_attention` at head dim `d` on a card of compute capability `sm` (90 = sm_90)."""
    if sm >= 90 and d in HOPPER_D:
        return (192, 128) if d == 64 and wg3() else (128, 128)
    return 128, 64
