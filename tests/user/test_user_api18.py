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


def test_a_generic_only_the_body_uses_is_not_given_a_made_up_value() -> None:
    """t03's page size `P` appears only in the body (`k_pool.partition([1, P, D])`): called without it, the help
    proposed `paged_decode[{"P": 64}]`, a value that runs and reads the wrong pages (they are 16 long) without
    an error. It now leaves the value to the user and says why the call cannot check it."""
    mod = tilelang.load(PROGRAMS / "t03_paged_decode_attention.tile")
    q = np.zeros((3, 4, 64), np.float16)
    pool = np.zeros((2, 640, 64), np.float16)
    o = np.zeros((3, 4, 64), np.float32)
    with pytest.raises(tilelang.TileError) as e:
        mod.paged_decode(P(o, [1, 2, 64]), q, pool, pool, np.zeros((3, 8), np.int32), np.ones(3, np.int32), 0.1)
    assert e.value.code == "E0215"
    text = str(e.value)
    assert '`paged_decode[{"P": ...}](...)`' in text and "64" not in text.split("help:")[1], text
    assert "no parameter's shape names `P`" in text, text
