"""Round 26 of the user's mistakes (huser27, 2026-12-07), each with the help applied by the letter and the fixed
program checked against NumPy (round 26's checks, tests/user/test_user_programs26.py).

- t01 q09's Dot2 written with its lanes a const generic `B` of the kernel and the lanes folded by `fold::<64>`,
  `fold::<32>`, ..: `fold::<64>` takes [128] tiles and `s` is `[B]` (E0203, right: shapes are compared for every
  instance at once), and the help said "`fold` is written for a size of 128 only .. make `fold` generic over it,
  `fn fold<const B: i32, const H: i32>(..)`", a header whose `B` nothing uses, the same error again (`fold`'s
  size is its own generic `H` as the call gives it, no word of its header). It now says to make `B` a module
  constant, which is what works: no generic expression of `B` is `[B]` for every `B` (`fold::<{ B / 2 }>` takes
  `[(B / 2) * 2]`).
- t02 q15's Gauss-Legendre nodes and weights ([16], one tile) stored by the launch of the integrals (tiles of 64,
  4 blocks): E0500, whose help was only "choose tile shapes that split every `&mut` tensor into the same grid"
  (one block for all, or nothing). A whole-tile output beside a grid of several blocks is now told to go to a
  launch of its own and be read by this one.
- t03 a max-pool of pair means with the device function called at half the kernel's generic, `pair_mean::<{ B /
  2 }>(t)` of a `[B]` tile: the call takes `[(B / 2) * 2]` (E0203, right: an odd `B`), and the help was to pass
  that shape (`.reshape([..])`), the same error. It now says to write the caller's tiles in the function's own
  form (`[2 * H]`, the kernel generic over `H`) or make `B` a constant.
- t04 an explicit diffusion step in place, the neighbours across the tile's edges read through the own tile's
  nested tiles at whole-tensor indices (`u.partition([1]).load([block_id(0) * B - 1])`): E0407, whose help was to
  clamp the index into the own tile's range, which ran and read the block's own element in silence. An index
  of `block_id` times a size is now told that nested tiles are the own tile's, from 0, and to read the
  neighbours from a `&` tensor of the values before the step (applied below: `prev`, a clone a step).
- t05 square tiles (`out: &mut Tensor<f32, [B, B]>`) partitioned with one size, `out.partition([16])`: E0217,
  whose help gave `[16, 30]` (the whole length of the axis left out), which `B` cannot be twice (E0214). A
  generic named twice in the kernel's tile now takes the size given once, `[16, 16]`.
"""

from __future__ import annotations

import numpy as np
from test_user_programs26 import CHECKS
from userprog import wrong_suite

QUAD_BEFORE = ("kernel fn quad<const B: i32>(ie: &mut Tensor<f64, [B]>, ir: &mut Tensor<f64, [B]>, "
               """nodes: &mut Tensor<f64, [N]>,
                             weights: &mut Tensor<f64, [N]>, a: &Tensor<f64, [?]>) {
    let i = arange::<f64>(N).reshape([1, N]);""")

QUAD_AFTER = """kernel fn gauss_nodes(nodes: &mut Tensor<f64, [N]>, weights: &mut Tensor<f64, [N]>) {
    let i = arange::<f64>(N).reshape([1, N]);"""

STORES_BEFORE = """    let w = 2.0 / ((1.0 - x * x) * dp * dp);
    let av = a.load_like(ie).reshape([B, 1]);
    ie.store((w * exp(av * x)).sum(1));
    ir.store((w / (1.0 + av * av * x * x)).sum(1));
    nodes.store(x.reshape([N]));
    weights.store(w.reshape([N]));
}"""

STORES_AFTER = """    nodes.store(x.reshape([N]));
    weights.store((2.0 / ((1.0 - x * x) * dp * dp)).reshape([N]));
}

kernel fn quad<const B: i32>(ie: &mut Tensor<f64, [B]>, ir: &mut Tensor<f64, [B]>, nodes: &Tensor<f64, [N]>,
                             weights: &Tensor<f64, [N]>, a: &Tensor<f64, [?]>) {
    let x = nodes.partition([N]).load([0]).reshape([1, N]);
    let w = weights.partition([N]).load([0]).reshape([1, N]);
    let av = a.load_like(ie).reshape([B, 1]);
    ie.store((w * exp(av * x)).sum(1));
    ir.store((w / (1.0 + av * av * x * x)).sum(1));
}"""

# file: (a phrase of the first error's help, the fix: (old, new) replacements)
FIXES: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "t01_fold_of_a_generic_lane_count": (
        "`fold` takes a size of 128 at this call, and this tile's is `B`, the caller's const generic, any size as "
        "far as the checker knows (shapes are compared as written, for every instance at once): make it a module "
        "constant, `const B: i32 = 128;`, in place of the caller's generic parameter",
        [("kernel fn dot2<const B: i32>(", "const B: i32 = 128;\n\nkernel fn dot2("), ("dot2::<128>(", "dot2(")]),
    "t02_one_tile_output_beside_a_grid": (
        "`nodes` is one tile, which each of the 4 blocks would store alike: write it in a launch of its own (a "
        "kernel whose `&mut` parameters are its tile, `nodes.partition([16])`), then pass it to this one to read, "
        "`&nodes`",
        [(QUAD_BEFORE, QUAD_AFTER), (STORES_BEFORE, STORES_AFTER),
         ("    quad::<64>(ie.partition([64]), ir.partition([64]), nodes.partition([N]), weights.partition([N]), &a)"
          ".sync();",
          "    gauss_nodes(nodes.partition([N]), weights.partition([N])).sync();\n"
          "    quad::<64>(ie.partition([64]), ir.partition([64]), &nodes, &weights, &a).sync();")]),
}

FIXES["t03_half_size_generic_by_division"] = (
    "`pair_mean`'s `s` is `Tile<f32, [(B / 2) * 2]>` at this call and this tile is `Tile<f32, [B]>`: shapes are "
    "compared as written, for every instance at once, and `(B / 2) * 2` is `B` only for some `B`: write the "
    "caller's tiles in `pair_mean`'s own form, `Tile<f32, [2 * H]>`, the caller generic over `H` in place of `B` "
    "(then `pair_mean::<H>`), or make `B` a module constant",
    [("kernel fn pool<const B: i32>", "kernel fn pool<const H: i32>"), ("x.partition([B])", "x.partition([2 * H])"),
     ("pair_mean::<{ B / 2 }>(t)", "pair_mean::<H>(t)"), ("pool::<64>(", "pool::<32>(")])


FIXES["t04_neighbour_through_own_tile"] = (
    "to read elements of the tiles around this block's (a neighbour), read them from a `&` tensor: the values "
    "before this step in a tensor of their own (`u` written from it, two tensors in turn), "
    "`prev.partition([..]).load_padded([block_id(0) * B - 1], 0.0)`",
    [("(u: &mut Tensor<f32, [B]>) {", "(u: &mut Tensor<f32, [B]>, prev: &Tensor<f32, [?]>) {"),
     ("let t = u.load().reshape([1, B]);", "let t = prev.load_like(u).reshape([1, B]);"),
     ("u.partition([1]).load([block_id(0) * B - 1])", "prev.partition([1]).load_padded([block_id(0) * B - 1], 0.0)"),
     ("u.partition([1]).load([block_id(0) * B + B])", "prev.partition([1]).load_padded([block_id(0) * B + B], 0.0)"),
     ("        diffuse(u.partition([16])).sync();",
      "        let prev = u.clone();\n        diffuse(u.partition([16]), &prev).sync();")])


def _t04(t: dict[str, np.ndarray], out: str) -> None:
    x = np.arange(64, dtype=np.float64)
    u = np.maximum(1 - np.abs(x - 32) / 8, 0)
    for _ in range(10):
        p = np.pad(u, 1)
        u = u + 0.25 * (p[:-2] - 2 * u + p[2:])
    np.testing.assert_allclose(t["u"], u, rtol=1e-6, atol=1e-7)
    assert out == "true\n"


FIXES["t05_square_tile_given_one_size"] = (
    "give one tile dimension per tensor dimension (2): the kernel's tile is `[B, B]`, so "
    "`out.partition([16, 16])`",
    [("out.partition([16])", "out.partition([16, 16])")])


def _t05(t: dict[str, np.ndarray], out: str) -> None:
    np.testing.assert_allclose(t["out"], np.minimum(t["img"] * np.float32(1.5), 1), rtol=1e-6)
    assert out == "[30, 30]\n"


def _t03(t: dict[str, np.ndarray], out: str) -> None:
    x = t["x"].astype(np.float64)
    want = ((x[0::2] + x[1::2]) / 2).reshape(4, 32).max(1)
    np.testing.assert_allclose(t["best"], want, rtol=1e-6)
    assert out == "[4]\n"


FIXED = {"t01_fold_of_a_generic_lane_count": CHECKS["q09_compensated_dot2"],
         "t03_half_size_generic_by_division": _t03, "t04_neighbour_through_own_tile": _t04,
         "t05_square_tile_given_one_size": _t05,
         "t02_one_tile_output_beside_a_grid": CHECKS["q15_gauss_legendre_f64"]}

(test_every_mistake_has_a_fix, test_the_help_leads_to_a_working_program,
 test_the_editor_shows_the_same_first_error) = wrong_suite("t*.tile", FIXES, FIXED)
