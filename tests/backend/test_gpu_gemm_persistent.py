"""On the GPU against the interpreter: hgemm's GEMM forms (2026-12-06), at shapes with edges, outputs poisoned
with NaN first. Marked `gpu` (the same forms in llsim: test_gemm_persistent).

- split-K by default where a launch has at most half as many tiles as SMs (`gemm_split`, the runtime's
  `few_tiles` variant): a plain GEMM, and a linear layer whose accumulator starts at 0.5 with a bias and a
  residual in the epilogue (only a tile's first piece starts from the constant);
- the persistent walk (`TILEC_GEMM_PERSISTENT` 1 and 2) and wide tiles (`TILEC_GEMM_WIDEN=1`) on many tiles;
- hgemm3's: row tiles of 32 / 16 computed 2 / 4 at a time and a 128-row tile over 50 rows (split-K default), a
  wide tile's K step of 128 in two ring stages.

Each switch is read when a launch lowers the kernel: each case compiles its own program (a comment names it).
"""

from __future__ import annotations

import numpy as np
import pytest
from gemm_cases import LINEAR

pytestmark = pytest.mark.gpu

GEMM = """
kernel fn gemm<const BM: i32, const BN: i32, const BK: i32>(c: &mut Tensor<f32, [BM, BN]>, a: &Tensor<f16, [?, ?]>,
                                                           b: &Tensor<f16, [?, ?]>) {
    let pa = a.partition([BM, BK]);
    let pb = b.partition([BK, BN]);
    let mut acc = zeros::<f32>([BM, BN]);
    for k in 0..pa.num_tiles(1) {
        acc = mma(pa.load([block_id(0), k]), pb.load([k, block_id(1)]), acc);
    }
    c.store(acc);
}
""" + LINEAR


def _gpu(x: np.ndarray):  # type: ignore[no-untyped-def]
    torch = pytest.importorskip("torch")
    return torch.tensor(x, device="cuda")


def _check(name: str, tile: tuple[int, int, int], shapes: dict[str, tuple[int, ...]], tag: str) -> None:
    import tilelang

    rng = np.random.default_rng(5)
    ins = [rng.standard_normal(s).astype(np.float16 if n in ("a", "b", "w") else np.float32) for n, s in shapes.items()]
    M, N = shapes["a"][0], (shapes["b"][1] if "b" in shapes else shapes["w"][0])
    mod = tilelang.compile(f"// {tag}\n" + GEMM)
    kern = getattr(mod, name)[tile]
    want = np.full((M, N), np.nan, np.float32)
    kern(tilelang.partition(want, list(tile[:2])), *ins).sync()
    out = _gpu(np.full((M, N), np.nan, np.float32))
    kern(tilelang.partition(out, list(tile[:2])), *[_gpu(x) for x in ins]).sync()
    got = out.cpu().numpy()
    assert not np.isnan(got).any()
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-2 * np.sqrt(shapes["a"][1]))


@pytest.mark.parametrize(("name", "tile", "shapes"), [
    ("gemm", (64, 64, 64), {"a": (64, 1000), "b": (1000, 520)}),  # 9 tiles: 4 pieces of ~4 k-steps, edges
    ("gemm", (128, 128, 64), {"a": (100, 4096), "b": (4096, 1024)}),  # 8 tiles in 8 pieces
    ("linear", (64, 64, 32), {"a": (70, 2048), "w": (200, 2048), "bias": (200,), "res": (70, 200)}),
    # hgemm3 (`gemm_rows`): 32- and 16-row tiles computed 2 / 4 at a time (16 tiles as 8; 36 as 9, was sm_80's ring)
    ("gemm", (32, 128, 64), {"a": (64, 4096), "b": (4096, 1024)}),
    ("gemm", (16, 64, 128), {"a": (50, 2048), "b": (2048, 528)}),
    # a 128-row tile over 50 rows: the variant for at most 64 output rows computes 64 (bias, residual, 0.5 start)
    ("linear", (128, 128, 64), {"a": (50, 2048), "w": (264, 2048), "bias": (264,), "res": (50, 264)}),
], ids=["gemm_edges", "gemm_128", "linear_from_half", "rows32_coarse", "rows16_coarse", "linear_tall_tile"])
def test_split_k_by_default_on_the_gpu(name: str, tile, shapes, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("TILEC_GEMM_SPLITK", raising=False)
    _check(name, tile, shapes, "split-K auto")


@pytest.mark.parametrize(("env", "tile"), [
    ({"TILEC_GEMM_PERSISTENT": "1"}, (128, 128, 64)),
    ({"TILEC_GEMM_PERSISTENT": "2"}, (128, 128, 64)),
    ({"TILEC_GEMM_PERSISTENT": "2"}, (64, 64, 64)),
    ({"TILEC_GEMM_WIDEN": "1"}, (128, 64, 64)),  # 4 wide: 128 x 256 on two warpgroups (f32 out: 128x128 would not fit)
    ({"TILEC_GEMM_WIDEN": "1", "TILEC_GEMM_PERSISTENT": "2"}, (64, 64, 64)),
    # hgemm3: a K step of 128 in two ring stages of 64 (`gemm_widen.k_parts`), two warpgroups / pingpong roles
    ({"TILEC_GEMM_WIDEN": "1"}, (128, 64, 128)),
    ({"TILEC_GEMM_WIDEN": "1"}, (64, 64, 128)),
], ids=["coop", "pingpong", "pingpong_64", "wide_128x64", "wide_64_pingpong", "wide_128x64x128", "wide_64x64x128"])
def test_persistent_forms_on_the_gpu(env: dict[str, str], tile, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("TILEC_GEMM_SPLITK", "0")
    # (K and N multiples of 16 elements: TMA copies both operands, as wide tiles need; N = 1296: a partial tile)
    _check("gemm", tile, {"a": (1000, 512), "b": (512, 1296)}, " ".join(f"{k}={v}" for k, v in env.items()))
