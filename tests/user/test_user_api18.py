"""Round 18 through the Python API and `tilec check` (huser18, 2026-12-06).

- t01's rotary backward declares its own tile `[1, BT, 2 * HD]` (the two halves of a head): a partition of
  [1, 16, 64] was E0215 "cannot infer `HD`" in Tile (the help: give it in a turbofish) and in the Python API,
  whose help proposed `rope_bwd[{"HD": 64}]`, a value that then failed the tile check (HD is 32). A
  dimension linear in the one generic it leaves open is now solved from the size (sema's `solve_linear`,
  the launch's `_linear_open`); a size no positive integer gives (63 for `2 * HD`) says so.
"""

from __future__ import annotations

import math
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


def test_rmsnorm_backward_matches_pytorch_autograd() -> None:
    torch = pytest.importorskip("torch")
    mod = tilelang.load(PROGRAMS / "t02_rmsnorm_backward.tile")
    g = torch.Generator().manual_seed(2)
    x, dy = torch.randn(70, 80, generator=g) * 3, torch.randn(70, 80, generator=g)
    w = torch.rand(80, generator=g) + 0.5
    dx, part, dw = torch.zeros(70, 80), torch.zeros(9, 80), torch.zeros(1, 80)
    mod.rms_bwd(P(dx, [8, 128]), P(part, [1, 128]), P(dw, [1, 128]), x, w, dy, 1e-6).sync()
    xr, wr = x.double().requires_grad_(), w.double().requires_grad_()
    (xr * torch.rsqrt((xr * xr).mean(1, keepdim=True) + 1e-6) * wr).backward(dy.double())
    np.testing.assert_allclose(dx.numpy(), xr.grad.numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(dw[0].numpy(), wr.grad.numpy(), rtol=1e-4, atol=1e-4)


def test_paged_decode_matches_sdpa_over_the_gathered_pages() -> None:
    torch = pytest.importorskip("torch")
    F = pytest.importorskip("torch.nn.functional")
    mod = tilelang.load(PROGRAMS / "t03_paged_decode_attention.tile")
    g = torch.Generator().manual_seed(3)
    q = torch.randn(3, 4, 64, generator=g).half()
    k_pool, v_pool = (torch.randn(2, 40 * 16, 64, generator=g).half() for _ in range(2))
    table = torch.randperm(40, generator=g)[:24].reshape(3, 8).int()
    lens = torch.tensor([37, 100, 5], dtype=torch.int32)
    o = torch.zeros(3, 4, 64)
    mod.paged_decode[2, 16, 64](P(o, [1, 2, 64]), q, k_pool, v_pool, table, lens, 0.125).sync()
    rows = (table.long()[:, :, None] * 16 + torch.arange(16)).reshape(3, -1)   # each sequence's pool rows
    k, v = (p.float()[:, rows].permute(1, 0, 2, 3) for p in (k_pool, v_pool))   # [3, 2, 128, 64]
    mask = (torch.arange(128)[None, :] < lens[:, None].long())[:, None, None, :]
    want = F.scaled_dot_product_attention(q.float()[:, :, None], k, v, attn_mask=mask, scale=0.125, enable_gqa=True)
    np.testing.assert_allclose(o.numpy(), want[:, :, 0].numpy(), rtol=3e-3, atol=3e-3)   # P rounded to f16


def test_a_held_row_view_of_a_torch_tensor_is_written_in_place() -> None:
    torch = pytest.importorskip("torch")
    mod = tilelang.load(PROGRAMS / "t02_rmsnorm_backward.tile")
    x, w, dy = torch.randn(70, 80), torch.rand(80) + 0.5, torch.randn(70, 80)
    big = torch.zeros(140, 80)
    mod.rms_bwd(P(big[10:80], [8, 128]), P(torch.zeros(9, 80), [1, 128]), P(torch.zeros(1, 80), [1, 128]), x, w,
                dy, 1e-6).sync()
    dx = torch.zeros(70, 80)
    mod.rms_bwd(P(dx, [8, 128]), P(torch.zeros(9, 80), [1, 128]), P(torch.zeros(1, 80), [1, 128]), x, w, dy,
                1e-6).sync()
    assert torch.equal(big[10:80], dx) and not big[:10].any() and not big[80:].any()


def test_a_column_slice_is_refused_and_the_help_runs() -> None:
    torch = pytest.importorskip("torch")
    mod = tilelang.load(PROGRAMS / "t02_rmsnorm_backward.tile")
    wide, w, dy = torch.randn(70, 160), torch.rand(80) + 0.5, torch.randn(70, 80)
    outs = (torch.zeros(70, 80), torch.zeros(9, 80), torch.zeros(1, 80))
    parts = (P(outs[0], [8, 128]), P(outs[1], [1, 128]), P(outs[2], [1, 128]))
    with pytest.raises(tilelang.TileError) as e:
        mod.rms_bwd(*parts, wide[:, :80], w, dy, 1e-6).sync()
    assert e.value.code == "E0802" and "`x.contiguous()`" in str(e.value), str(e.value)
    mod.rms_bwd(*parts, wide[:, :80].contiguous(), w, dy, 1e-6).sync()   # the help
    assert outs[0].abs().max() > 0


def test_the_repl_infers_the_half_width_generic() -> None:
    from userprog import tilec_at_root

    r = tilec_at_root("repl", stdin=":load tests/user/programs/t01_rope_backward.tile\n"
                      "let dy = randn::<bf16>([4, 50, 64], 1);\nlet mut dx = zeros::<bf16>([4, 50, 64]);\n"
                      "rope_bwd(dx.partition([1, 16, 64]), &dy, &ones::<f32>([50, 32]), &zeros::<f32>([50, 32]))"
                      ".sync();\n(dx as f32 - dy as f32).abs().max()\n:quit\n")
    assert "error" not in r.stdout + r.stderr and "f32 = 0.0" in r.stdout, r.stdout + r.stderr


@pytest.mark.parametrize(("shape", "fix"), [((1, 1), "`x.reshape(1)`"), ((2, 3, 4), "`x.reshape(6, 4)`"),
                                            ((64,), "`x.reshape(1, 64)`")])
def test_a_rank_mismatch_writes_the_reshape(shape: tuple[int, ...], fix: str) -> None:
    """E0503 said "reshape it to the parameter's rank" (a 0-d `torch.tensor(3.0)`, a loss or a scale, for a
    `[1]` tensor; a batch for a 2-D one); it now writes the reshape, which runs."""
    rank = 1 if shape == (1, 1) else 2
    decl = "[1]" if rank == 1 else "[?, ?]"
    mod = tilelang.compile(f"kernel fn k(z: &mut Tensor<f32, [1]>, x: &Tensor<f32, {decl}>) {{\n"
                           f"    z.store(x.partition({'[1]' if rank == 1 else '[1, 1]'}).load({'[0]' if rank == 1 else '[0, 0]'})"
                           f".reshape([1]) * 2.0);\n}}\n")
    x = np.arange(math.prod(shape), dtype=np.float32).reshape(shape) + 3
    z = np.zeros(1, np.float32)
    with pytest.raises(tilelang.TileError) as e:
        mod.k(P(z, [1]), x).sync()
    assert e.value.code == "E0503" and fix in str(e.value), str(e.value)
    new = tuple(int(d) for d in fix[fix.index("(") + 1:fix.index(")")].split(", "))
    mod.k(P(z, [1]), x.reshape(new)).sync()   # the help
    assert z[0] == 6.0


def test_a_zero_dimensional_torch_tensor_is_told_its_reshape() -> None:
    torch = pytest.importorskip("torch")
    mod = tilelang.compile("kernel fn k(z: &mut Tensor<f32, [1]>, x: &Tensor<f32, [1]>) {\n"
                           "    z.store(x.load() * 2.0);\n}\n")
    z, x = torch.zeros(1), torch.tensor(3.0)   # a loss, a scale: 0-d
    with pytest.raises(tilelang.TileError) as e:
        mod.k(P(z, [1]), x).sync()
    assert e.value.code == "E0503" and "`x.reshape(1)`" in str(e.value), str(e.value)
    mod.k(P(z, [1]), x.reshape(1)).sync()
    assert z.item() == 6.0


NONLINEAR = """kernel fn k<const HD: i32>(z: &mut Tensor<f32, [DIM]>, x: &Tensor<f32, [?]>) {
    z.store(x.load_like(z) + (HD as f32));
}
fn main() { let x = ones::<f32>([SIZE]); let mut z = zeros::<f32>([SIZE]); k(z.partition([SIZE]), &x).sync(); }
"""


@pytest.mark.parametrize(("dim", "size"), [("HD % 4 * 16", 48), ("HD + (HD - 1) * (HD - 2) * (HD - 3)", 10),
                                           ("HD * HD", 16)])
def test_a_dimension_not_linear_in_the_generic_infers_nothing_in_either(dim: str, size: int) -> None:
    """hrev20: the launch took a dimension whose values at HD = 1, 2, 3 lie on a line for linear: the API bound
    `HD` = 3 for `[HD % 4 * 16]` given 48 (7 gives 48 too) and for the cubic given 10 (its 4 gives 10 too), where
    `tilec check` of the same launch is E0215; `[HD * HD]` was an internal error. Both now say E0215."""
    src = NONLINEAR.replace("DIM", dim).replace("SIZE", str(size))
    (d,) = [x for x in driver.compile(src, "checked").diagnostics if x.severity.value == "error"]
    assert d.code == "E0215"
    mod = tilelang.compile(src.split("fn main")[0])
    z = np.zeros(size, np.float32)
    with pytest.raises(tilelang.TileError) as e:
        mod.k(P(z, [size]), np.ones(size, np.float32)).sync()
    assert e.value.code == "E0215" and "cannot infer `HD`" in str(e.value) and not z.any(), str(e.value)
    if dim.startswith("HD %"):  # given by name, it runs
        mod.k[{"HD": 7}](P(z, [size]), np.ones(size, np.float32)).sync()
        assert z.sum() == 8.0 * size
