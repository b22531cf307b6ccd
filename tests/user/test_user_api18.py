"""Round 18 through the Python API and `tilec check` (huser18, 2026-12-06).

- t01's rotary backward declares its own tile `[1, BT, 2 * HD]` (the two halves of a head): a partition of
  [1, 16, 64] was E0215 "cannot infer `HD`" in Tile (the help: give it in a turbofish) and in the Python API,
  whose help proposed `rope_bwd[{"HD": 64}]`, a value that then failed the tile check (HD is 32). A
  dimension linear in the one generic it leaves open is now solved from the size (sema's `solve_linear`,
  the launch's `_linear_open`); a size no positive integer gives (63 for `2 * HD`) says so.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tilelang
from tilelang import driver

P = tilelang.partition
PROGRAMS = Path(__file__).parent / "programs"
ROPE = PROGRAMS / "t01_rope_backward.tile"


def _rope_inputs() -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(18)
    dy = rng.standard_normal((4, 50, 64)).astype(np.float32)
    ang = (np.arange(50)[:, None] + 7.0) * 10000.0 ** (-np.arange(32) / 32)
    return dy, np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)


def test_the_api_infers_a_generic_from_a_linear_tile_dimension() -> None:
    mod = tilelang.load(ROPE)
    dy, cos, sin = _rope_inputs()
    dx = np.zeros_like(dy)
    mod.rope_bwd(P(dx, [1, 16, 64]), dy, cos, sin).sync()   # BT = 16 and HD = 32 from the tile
    g1, g2 = dy[..., :32], dy[..., 32:]
    want = np.concatenate([g1 * cos + g2 * sin, g2 * cos - g1 * sin], -1)
    np.testing.assert_allclose(dx, want, rtol=8e-3, atol=8e-3)   # rounded to bf16


def test_a_size_the_linear_dimension_cannot_take_says_so() -> None:
    mod = tilelang.load(ROPE)
    dy, cos, sin = _rope_inputs()
    dx = np.zeros((4, 50, 63), np.float32)
    with pytest.raises(tilelang.TileError) as e:
        mod.rope_bwd(P(dx, [1, 16, 63]), dy, cos, sin).sync()
    assert e.value.code == "E0215"
    assert "`2 * HD` is 63 in this launch, which no positive integer `HD` gives" in str(e.value), str(e.value)


def _launch(tile: str) -> str:
    src = ROPE.read_text(encoding="utf-8").replace("rope_bwd::<16, 32>(dx.partition([1, 16, 64])",
                                                   f"rope_bwd(dx.partition({tile})")
    return src.replace("rope_fwd::<16, 32>(", "rope_fwd(")


def test_tile_infers_it_at_check_time(tmp_path: Path) -> None:
    f = tmp_path / "rope.tile"
    f.write_text(_launch("[1, 16, 64]"), encoding="utf-8")
    assert not driver.check(f, deny_warnings=True).diagnostics


def test_tile_names_the_dimension_no_integer_solves(tmp_path: Path) -> None:
    f = tmp_path / "rope.tile"
    f.write_text(_launch("[1, 16, 63]"), encoding="utf-8")
    (d,) = [x for x in driver.check(f).diagnostics if x.severity.value == "error"]
    assert d.code == "E0215" and "`HD`" in d.message
    assert any("is 63 here: no positive integer `HD` gives that" in lb.message for lb in d.labels), d.labels


def test_a_device_function_s_linear_shape_is_inferred_too(tmp_path: Path) -> None:
    f = tmp_path / "halves.tile"
    f.write_text("fn halves<const N: i32>(t: Tile<f32, [2 * N]>) -> Tile<f32, [N]> {\n"
                 "    t.reshape([2, N]).sum(0)\n}\n"
                 "kernel fn k(z: &mut Tensor<f32, [8]>, x: &Tensor<f32, [?]>) {\n"
                 "    z.store(halves(x.partition([16]).load([0])));\n}\n", encoding="utf-8")
    mod = tilelang.load(f)
    z = np.zeros(8, np.float32)
    mod.k(P(z, [8]), np.arange(16, dtype=np.float32)).sync()
    np.testing.assert_array_equal(z, np.arange(8) * 2 + 8.0)
