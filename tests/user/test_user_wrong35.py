"""Round 32 of the hostile review (hrev32, 2026-12-07): the standard library's GEMVs and a tensor-core decode
split given shapes and layers their documentation rules out, each a silent wrong answer before (the loads past a
tensor's edge read zeros, so memory stayed safe and the launch ran): now refused at the launch (E0513, a
`#[requires(..)]` naming the fact and the values), in Tile and from Python.

A requirement can now read the tensor a launch partitions for a `&mut` parameter, `o.tensor_shape()[i]` (in the
kernel `o.shape()` is the tile's): what the GEMVs' output lengths and `decode_split_tc`'s partials needed.

- s05 `std::llm::gemv::rms_gate_up` with an intermediate size I that is not a multiple of its row tile BN: the up
  rows were read from row `blocks * BN`, not I (an output off by 0.59, even at layer 0).
- s06 `std::llm::gemv::gemv_add` at a layer past its weight stack (counted from 1): every weight read as zero.
- every stacked GEMV (`gemv`, `gemv_add`, `gemv_splitk`, `rms_gemv`, `rms_gemv_kv`, `rms_gate_up`, the queue, rows,
  stream and hybrid forms): a layer past the stack or negative, an `x` of another length than `w`'s columns, a norm
  weight `g` without the layer's row; `add_rows` a `part` of other rows; `rms_gemv_argmax` a `y` of other than the
  vocabulary's length; `gemv_add_hybrid` a scratch `z` with fewer items than its bulk and pieces (`hybrid_items`:
  the last pieces were never added); `gemv_stream` a KT that is not w's K tiles.
- `std::attention::decode_split_tc` given partials of other rows than q's G (more: the tile's rows past G, the
  attention of zero queries, stored as splits of their own; fewer: query heads dropped).
"""

from __future__ import annotations

import numpy as np
import pytest
from userprog import wrong_suite

import tilelang
from tilelang import driver
from tilelang import partition as P

Tensors = dict[str, np.ndarray]

FIXES: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "s05_gate_up_rows_not_a_multiple_of_the_tile": (
        "pass arguments that meet the requirement",
        [("rms_gate_up::<16, 32, 1, 0, 0, 32, 0, 0>(h.partition([16])",
          "rms_gate_up::<8, 32, 1, 0, 0, 32, 0, 0>(h.partition([8])")]),
    "s06_gemv_layer_counted_from_one": (
        "pass arguments that meet the requirement", [("&x, 2, &w", "&x, 1, &w")]),
}


def _bf16(a: np.ndarray) -> np.ndarray:
    return a.astype(np.float64)


def _s05(t: Tensors, out: str) -> None:
    x, w, g = _bf16(t["x"]), _bf16(t["w"]), _bf16(t["g"])[0]
    xn = x / np.sqrt((x * x).mean() + 1e-6) * g
    gate, up = w[:24] @ xn, w[24:] @ xn
    np.testing.assert_allclose(t["h"], gate / (1 + np.exp(-gate)) * up, rtol=1e-4, atol=1e-4)


def _s06(t: Tensors, out: str) -> None:
    np.testing.assert_allclose(t["y"], 1.0 + _bf16(t["w"])[32:] @ _bf16(t["x"]), rtol=1e-4, atol=1e-4)


CHECKS = {"s05_gate_up_rows_not_a_multiple_of_the_tile": _s05, "s06_gemv_layer_counted_from_one": _s06}

(test_every_mistake_has_a_fix, test_the_help_leads_to_a_working_program,
 test_the_editor_shows_the_same_first_error) = wrong_suite("s0[5-9]_*.tile", FIXES, CHECKS)
