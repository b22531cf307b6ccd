"""Round 16 through the Python API (huser16, 2026-12-06): PyTorch CPU tensors as a PyTorch user has them
(channels-last images, transposed views, `int64` ids, `bool` masks; the torch tests skip where PyTorch is
not installed) and the NumPy arrays with the same layouts, which run everywhere.

- A channels-last tensor (NCHW shape, NHWC memory) given to a kernel was refused (E0802) with only "pass a
  contiguous copy: `x.contiguous()`" (for a `&mut` one: copy the results back yourself). Its memory is one
  row-major block in another axis order: the help now names the view that is that block
  (`x.permute(0, 2, 3, 1)`, NumPy's `x.transpose(..)`), which a kernel declared in that order reads, and
  writes, in place (`api/signature._dense_order`). Followed by the letter, o09's GroupNorm runs on the
  channels-last tensor's memory and matches PyTorch's `group_norm`.
- `int64` ids and `bool` masks from PyTorch in place; an `int32` tensor for an `i64` parameter and a `uint8`
  mask for a `bool` one get E0502 with the conversion, which runs.
- The REPL: a kernel, a launch, `tensor::<i32>([..])` (the `where` help of test_user_wrong16) and `:help erf`.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tilelang

P = tilelang.partition
ROOT = Path(__file__).resolve().parents[2]
GN = (Path(__file__).parent / "programs" / "o09_groupnorm_nhwc.tile").read_text(encoding="utf-8")

SCALE4 = """
kernel fn scale4<const C: i32>(y: &mut Tensor<f32, [1, 49, C]>, x: &Tensor<f32, [?, 7, 7, C]>) {
    y.store(x.partition([1, 7, 7, C]).load([block_id(0), 0, 0, 0]).reshape([1, 49, C]) * 2.0);
}
"""

GATHER = """
kernel fn gather_rows<const B: i32, const D: i32>(y: &mut Tensor<f32, [B, D]>, table: &Tensor<f32, [?, D]>,
        ids: &Tensor<i64, [?]>, keep: &Tensor<bool, [?]>) {
    let p = table.partition([1, D]);
    let rows = y.partition([1, D]);
    for r in 0..B {
        let i = block_id(0) * B + r;
        let id = ids.partition([1]).load([i]).item();
        let k = keep.partition([1]).load([i]).item();
        rows.store(where(k, p.load([id as i32, 0]), 0.0), [r, 0]);
    }
}
"""


def _group_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    """NCHW GroupNorm of 4 groups in f64."""
    n, c = x.shape[:2]
    g = x.astype(np.float64).reshape(n, 4, -1)
    y = (g - g.mean(2, keepdims=True)) / np.sqrt(g.var(2, keepdims=True) + 1e-5)
    return y.reshape(x.shape) * w[None, :, None, None] + b[None, :, None, None]


def test_a_channels_last_array_is_read_through_its_own_order() -> None:
    mod = tilelang.compile(SCALE4)
    x = np.ascontiguousarray(np.random.default_rng(1).standard_normal((3, 7, 7, 24), np.float32)).transpose(0, 3, 1, 2)
    out = np.zeros((3, 49, 24), np.float32)
    with pytest.raises(tilelang.TileError) as e:
        mod.scale4(P(out, [1, 49, 24]), x).sync()
    assert e.value.code == "E0802" and "`x.transpose(0, 2, 3, 1)` is that memory as a contiguous [3, 7, 7, 24] " \
        "array, no copy, for a parameter declared in that order" in str(e.value), str(e.value)
    mod.scale4(P(out, [1, 49, 24]), x.transpose(0, 2, 3, 1)).sync()   # the help, by the letter
    np.testing.assert_array_equal(out, 2 * x.transpose(0, 2, 3, 1).reshape(3, 49, 24))


def test_a_mut_view_in_another_order_is_written_in_place_through_the_helps_view() -> None:
    mod = tilelang.compile("kernel fn c<const B: i32>(y: &mut Tensor<f32, [B, 8]>, x: &Tensor<f32, [?, 8]>) {"
                           " y.store(x.load_like(y) + 1.0); }")
    mem = np.zeros((8, 4), np.float32)
    y = mem.T                                   # [4, 8], not contiguous
    x = np.arange(32, dtype=np.float32).reshape(4, 8)
    with pytest.raises(tilelang.TileError) as e:
        mod.c(P(y, [2, 8]), x).sync()
    assert "`y.transpose(1, 0)` is that memory as a contiguous [8, 4] array, no copy, written in place" in \
        str(e.value), str(e.value)
    yt = y.transpose(1, 0)                      # the help's view: mem itself, [8, 4]
    assert yt.flags.c_contiguous and np.shares_memory(yt, mem)
    m4 = tilelang.compile("kernel fn c<const B: i32>(y: &mut Tensor<f32, [B, 4]>, x: &Tensor<f32, [?, 4]>) {"
                          " y.store(x.load_like(y) + 1.0); }")   # the kernel declared in that order
    m4.c(P(yt, [2, 4]), np.ascontiguousarray(x.T)).sync()
    np.testing.assert_array_equal(mem, x.T + 1)


def test_a_transposed_matrix_says_its_transpose_is_contiguous() -> None:
    mod = tilelang.compile("kernel fn c<const B: i32>(y: &mut Tensor<f32, [B, 8]>, x: &Tensor<f32, [?, 8]>) {"
                           " y.store(x.load_like(y) + 1.0); }")
    base = np.arange(32, dtype=np.float32).reshape(8, 4)
    y = np.zeros((4, 8), np.float32)
    with pytest.raises(tilelang.TileError) as e:
        mod.c(P(y, [2, 8]), base.T).sync()
    assert "`x.transpose(1, 0)` is that memory as a contiguous [8, 4] array" in str(e.value)
    # strides that are no permutation of a dense block (every other row): the copy only
    with pytest.raises(tilelang.TileError) as e:
        mod.c(P(y, [2, 8]), np.ones((8, 8), np.float32)[::2]).sync()
    assert str(e.value).count("help:") == 1 and "pass a contiguous copy: `numpy.ascontiguousarray(x)`" in \
        str(e.value) and "axis order" not in str(e.value)


def test_torch_channels_last_group_norm_through_the_helps_view() -> None:
    torch = pytest.importorskip("torch")
    mod = tilelang.compile(GN)
    g = torch.Generator().manual_seed(16)
    x = (torch.randn(3, 24, 7, 7, generator=g) * 2 + 100).to(memory_format=torch.channels_last)
    w, b = torch.rand(24, generator=g) + 0.5, torch.randn(24, generator=g)
    y = torch.empty_like(x)
    assert y.is_contiguous(memory_format=torch.channels_last) and not x.is_contiguous()
    mod.group_norm(P(y.permute(0, 2, 3, 1).reshape(3, 49, 24), [1, 49, 6]),
                   x.permute(0, 2, 3, 1).reshape(3, 49, 24), w, b, 1e-5).sync()
    np.testing.assert_allclose(y.numpy(), _group_norm(x.numpy(), w.numpy(), b.numpy()), rtol=1e-4, atol=1e-4)
    assert y.is_contiguous(memory_format=torch.channels_last)
    # the 4-D kernel: the help's permute, by the letter
    m4 = tilelang.compile(SCALE4)
    out = torch.zeros(3, 49, 24)
    with pytest.raises(tilelang.TileError) as e:
        m4.scale4(P(out, [1, 49, 24]), x).sync()
    assert "`x.permute(0, 2, 3, 1)`" in str(e.value) and "(channels-last)" in str(e.value)
    m4.scale4(P(out, [1, 49, 24]), x.permute(0, 2, 3, 1)).sync()
    np.testing.assert_array_equal(out.numpy(), 2 * x.permute(0, 2, 3, 1).reshape(3, 49, 24).numpy())


def test_torch_int64_ids_and_bool_masks_in_place() -> None:
    torch = pytest.importorskip("torch")
    mod = tilelang.compile(GATHER)
    g = torch.Generator().manual_seed(3)
    table = torch.randn(50, 16, generator=g)
    ids = torch.randint(0, 50, (12,), generator=g)
    keep = torch.rand(12, generator=g) > 0.3
    assert ids.dtype == torch.int64 and keep.dtype == torch.bool
    y = torch.full((12, 16), float("nan"))
    mod.gather_rows(P(y, [4, 16]), table, ids, keep).sync()
    np.testing.assert_array_equal(y.numpy(), np.where(keep.numpy()[:, None], table.numpy()[ids.numpy()], 0))
    for arg, want in ((ids.int(), "`ids.to(torch.int64)`"), (keep.to(torch.uint8), "`keep.to(torch.bool)`")):
        args = [table, arg, keep] if arg.dtype == torch.int32 else [table, ids, arg]
        with pytest.raises(tilelang.TileError) as e:
            mod.gather_rows(P(y, [4, 16]), *args).sync()
        assert e.value.code == "E0502" and want in str(e.value)
    mod.gather_rows(P(y, [4, 16]), table, ids.int().to(torch.int64), keep.to(torch.uint8).to(torch.bool)).sync()


def test_numpy_int64_ids_and_bool_masks() -> None:
    mod = tilelang.compile(GATHER)
    r = np.random.default_rng(4)
    table = r.standard_normal((50, 16)).astype(np.float32)
    ids, keep = r.integers(0, 50, 12), r.random(12) > 0.3
    y = np.full((12, 16), np.nan, np.float32)
    mod.gather_rows(P(y, [4, 16]), table, ids, keep).sync()
    np.testing.assert_array_equal(y, np.where(keep[:, None], table[ids], 0))


def test_the_repl_session_of_a_pytorch_user() -> None:
    session = ("kernel fn sq<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>) {\n"
               "    z.store(x.load_like(z) * x.load_like(z));\n}\n\n"
               "let x = arange::<f32>(10);\nlet mut z = zeros::<f32>([10]);\nsq(z.partition([4]), &x).sync();\n"
               "print(z.sum());\nlet lens = tensor::<i32>([3, 1]);\n"
               "let lens = where(arange::<i32>(2) == 0, 3, 1);\nprint(lens);\n:help erf\n")
    r = subprocess.run([sys.executable, "-m", "tilelang", "repl"], cwd=ROOT, input=session, capture_output=True,
                       text=True, timeout=120)
    out = r.stdout + r.stderr
    assert "285.0" in out and "Tensor<i32, [2]> [3, 1]" in out, out
    assert "error[E0102]" in out and "`where(arange::<i32>(2) == 0, 3, 1)`" in out
    assert "the error function of each element" in out
