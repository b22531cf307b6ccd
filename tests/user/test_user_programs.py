"""Programs a kernel author writes in the first week, written from README.md,
docs/reference.md and `tilec explain` alone (huser, 2026-12-04), each checked
against an answer computed here with NumPy from the program's own inputs.

`u*`: vector ops with ragged tails, a 2-D transpose with rectangular partial
tiles, layernorm and RMSNorm, reductions along each axis, a three-step prefix
sum, a histogram of atomics, GEMMs in f16/bf16/f32 with a K loop, a batched
GEMM, a 3x3 convolution from shifted inputs, a hand-written causal flash
attention, a top-2, gather and scatter-add by index, one kernel generic over
six element types, host functions that launch on `&mut` tensors, numeric
edges, tiles whose sizes are not powers of two.

`h*`: a block that stores its own tile and then loads it back, or stores it
again, in another layout. The interpreter runs a block's statements in order;
the GPU code split each access over the threads by its layout with no
barrier between them, so the NVPTX simulator (and a GPU) read elements other
threads had not stored yet (`h02`: a column sum of the tile read zeros).
`codegen/hazards.py` now puts a CTA barrier between such accesses.

Every program runs on the interpreter; the `h*` programs and a few others
also run whole through the NVPTX simulator (`tests/backend/llsim.py`) for
sm_80 and sm_90a and must leave the interpreter's tensors, and their PTX must
assemble with ptxas.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "backend"))

from userprog import both_archs, program_suite, run_program, tilec

_run = run_program


def _f16(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, np.float32).astype(np.float16).astype(np.float32)


def _close(got: np.ndarray, want: np.ndarray, tol: float = 1e-4) -> None:
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64), rtol=tol, atol=tol)


def _u01(t: dict[str, np.ndarray], out: str) -> None:
    x = t["x"].astype(np.float32)
    y = np.ones(1000, np.float32)
    for a in (2.5, -0.5):
        y = _f16(x * np.float32(a) + y)
    np.testing.assert_array_equal(t["y"].astype(np.float32), y)


def _u02(t: dict[str, np.ndarray], out: str) -> None:
    np.testing.assert_array_equal(t["out"], np.arange(37 * 53).reshape(37, 53).T)
    assert out.split() == ["1960", "1"]


def _u03(t: dict[str, np.ndarray], out: str) -> None:
    x = t["x"].astype(np.float64)
    m = x.mean(1, keepdims=True)
    v = ((x - m) ** 2).mean(1, keepdims=True)
    _close(t["y"], (x - m) / np.sqrt(v + 1e-5) * t["g"] + t["b"])
    xh = t["xh"].astype(np.float32)
    r = 1 / np.sqrt((xh * xh).mean(1, keepdims=True) + 1e-6)
    _close(t["yh"], xh * r * t["gh"].astype(np.float32), 2e-3)


def _u04(t: dict[str, np.ndarray], out: str) -> None:
    x = t["x"]
    _close(t["cs"], x.sum(0))
    np.testing.assert_array_equal(t["mx"], x.max(1))
    np.testing.assert_array_equal(t["am"], x.argmin(1))


def _u05(t: dict[str, np.ndarray], out: str) -> None:
    x = (np.arange(1000) % 7) - 2
    np.testing.assert_array_equal(t["s"], np.cumsum(x))
    assert out.split() == ["997", "997"]


def _u06(t: dict[str, np.ndarray], out: str) -> None:
    x = (np.arange(3001, dtype=np.int64) * 7919) % 16
    np.testing.assert_array_equal(t["h"], np.bincount(x, minlength=16))
    np.testing.assert_array_equal(t["done"], np.ones(24))


def _u07(t: dict[str, np.ndarray], out: str) -> None:
    a, b = t["a32"].astype(np.float64), t["b32"].astype(np.float64)
    _close(t["c32"], a @ b, 1e-4)
    _close(t["c16"], t["a16"].astype(np.float64) @ t["b16"].astype(np.float64), 1e-3)
    _close(t["cbf"], t["abf"].astype(np.float64) @ t["bbf"].astype(np.float64), 1e-3)


def _u08(t: dict[str, np.ndarray], out: str) -> None:
    want = np.matmul(t["a"].astype(np.float32), t["b"].astype(np.float32))
    _close(t["c"].astype(np.float32), _f16(want), 2e-3)


def _u09(t: dict[str, np.ndarray], out: str) -> None:
    x, w = t["x"].astype(np.float64), t["w"]
    want = sum(w[3 * i + j] * x[i:i + 18, j:j + 21] for i in range(3) for j in range(3))
    _close(t["y"], want)


def _u10(t: dict[str, np.ndarray], out: str) -> None:
    q, k, v = (t[n].astype(np.float64) for n in "qkv")
    s = q @ k.transpose(0, 2, 1) * 0.17677669
    s = np.where(np.tril(np.ones((75, 75), bool)), s, -np.inf)
    p = np.exp(s - s.max(2, keepdims=True))
    _close(t["o"], (p / p.sum(2, keepdims=True)) @ v, 1e-2)


def _u11(t: dict[str, np.ndarray], out: str) -> None:
    x = t["x"]
    order = np.argsort(-x, axis=1, kind="stable")[:, :2]
    np.testing.assert_array_equal(t["idx"], order)
    np.testing.assert_array_equal(t["vals"], np.take_along_axis(x, order, 1))


def _u12(t: dict[str, np.ndarray], out: str) -> None:
    ids = (np.arange(13) * 3) % 10
    np.testing.assert_array_equal(t["out"], t["table"][ids])
    acc = np.zeros((10, 24), np.float64)
    np.add.at(acc, ids, t["table"][ids])
    _close(t["acc"], acc)
    np.testing.assert_array_equal(t["done"], ids)


def _u13(t: dict[str, np.ndarray], out: str) -> None:
    base = np.arange(77, dtype=np.float64) - 30
    np.testing.assert_array_equal(t["zf"], 2 * np.clip(base, -10, 20))
    np.testing.assert_array_equal(t["zh"].astype(np.float64), 2 * np.clip(base, -10, 20))
    np.testing.assert_array_equal(t["zb"], 2 * np.clip(base, -10, 20))
    np.testing.assert_array_equal(t["zi"], 2 * np.clip(base, -10, 20).astype(np.int32))
    u = np.clip(np.arange(77) * 3, 5, 200)
    np.testing.assert_array_equal(t["zu"], (2 * u) % 256)
    xl = (np.arange(77, dtype=np.int64) - 30) * 100000000000
    np.testing.assert_array_equal(t["zl"], 2 * np.clip(xl, -10**12, 2 * 10**12))


def _u14(t: dict[str, np.ndarray], out: str) -> None:
    x = np.arange(200, dtype=np.float32) / np.float32(10)
    y = np.ones(200, np.float32)
    for it in range(8):  # fib(6)
        y = x * np.float32(it) + y * np.float32(0.5)
    hits = int(np.argmax(y > 30))
    y = x + y
    _close(t["y"], y)
    fib10, got_hits, handles, last = out.split()
    assert (fib10, int(got_hits), handles) == ("55", hits, "1")
    assert abs(float(last) - y[199]) < 1e-3


def _u15(t: dict[str, np.ndarray], out: str) -> None:
    x = (np.arange(40, dtype=np.float32) - 20) * np.float32(37.3)
    x[3], x[4], x[5], x[6] = np.nan, np.inf, -np.inf, 1e9
    sat = np.nan_to_num(x, nan=0.0, posinf=np.inf, neginf=-np.inf)
    np.testing.assert_array_equal(t["a"], np.clip(np.trunc(sat), 0, 255).astype(np.uint8))
    np.testing.assert_array_equal(t["b"], np.clip(np.trunc(sat), -32768, 32767).astype(np.int16))
    xi = (np.arange(40, dtype=np.int64) - 17) * 123457
    yi = np.arange(40, dtype=np.int64) % 9 - 4
    safe = np.where(yi == 0, 1, yi)
    quo = np.where(yi == 0, 0, np.trunc(xi / safe).astype(np.int64))
    rem = np.where(yi == 0, xi, xi - np.trunc(xi / safe).astype(np.int64) * safe)
    np.testing.assert_array_equal(t["q"], quo + rem)
    xu = (np.arange(40) * 37 % 251).astype(np.uint8)
    np.testing.assert_array_equal(t["u"], np.cumsum(xu.astype(np.int64)) % 256)


def _u16(t: dict[str, np.ndarray], out: str) -> None:
    x = t["x"].astype(np.float64)
    want_a = np.concatenate([np.cumsum(x[r:r + 6], 0) - np.cumsum(x[r:r + 6], 1) * 0.5 for r in (0, 6)])
    _close(t["a"], want_a)
    np.testing.assert_array_equal(t["d"], np.concatenate([np.argmax(np.floor(x[r:r + 6] * 2), 0) for r in (0, 6)]))
    _close(t["f"], np.concatenate([x[r:r + 3] @ x[:10, 2:3] for r in (0, 3)]))


def _h01(t: dict[str, np.ndarray], out: str) -> None:
    x = t["x"].astype(np.float64).reshape(2, 16, 2, 32).transpose(0, 2, 1, 3)  # [tile row, tile col, 16, 32]
    scaled = x * np.arange(16).reshape(1, 1, 16, 1)
    back = scaled * 2
    z = back.sum(2, keepdims=True) - back
    _close(t["z"], z.transpose(0, 2, 1, 3).reshape(32, 64))
    _close(t["y"], (scaled + x).transpose(0, 2, 1, 3).reshape(32, 64))
    w = np.arange(256).reshape(2, 128) % 128
    c = np.cumsum(w, 1)
    np.testing.assert_array_equal(t["w"], (c * 2 + c.max(1, keepdims=True)).reshape(256))


def _h02(t: dict[str, np.ndarray], out: str) -> None:
    _close(t["z"], np.broadcast_to(t["x"].astype(np.float64).sum(0), (16, 32)))


def _h03(t: dict[str, np.ndarray], out: str) -> None:
    x = t["x"].astype(np.float64)
    t3 = x[48:64]
    _close(t["z"], t3.sum(1, keepdims=True) + t3)  # i = 3, the last, is odd
    t2 = x[32:48]
    _close(t["z2"], t2 @ t2.T)  # i = 2, the last, is even


CHECKS: dict[str, Callable[[dict[str, np.ndarray], str], None]] = {
    "u01_saxpy_tail": _u01, "u02_transpose2d": _u02, "u03_layernorm": _u03, "u04_axes": _u04,
    "u05_scan": _u05, "u06_hist": _u06, "u07_gemm": _u07, "u08_bmm": _u08, "u09_conv": _u09,
    "u10_flash": _u10, "u11_topk": _u11, "u12_gather": _u12, "u13_generic": _u13, "u14_host": _u14,
    "u15_number_edges": _u15, "u16_odd_shapes": _u16,
    "h01_store_then_load": _h01, "h02_store_reduce_back": _h02, "h03_stores_in_a_loop": _h03,
}
SIMULATED = ("h01_store_then_load", "h02_store_reduce_back", "h03_stores_in_a_loop",
             "u01_saxpy_tail", "u04_axes", "u15_number_edges", "u16_odd_shapes")


(test_every_program_has_a_check, test_the_interpreter_gives_the_independent_answer,
 test_the_simulated_gpu_gives_the_same_tensors, test_the_ptx_assembles) = program_suite(
    ("u*.tile", "h0[1-3]_*.tile"), CHECKS, both_archs(SIMULATED),
    ptx=both_archs(["h01_store_then_load", "u07_gemm", "u10_flash", "u13_generic"]))


STORE_LOAD = '''
kernel fn back<const BM: i32, const BN: i32>(z: &mut Tensor<f32, [BM, BN]>, x: &Tensor<f32, [?, ?]>) {
    z.store(x.load_like(z));
    z.store(z.load().sum(0).reshape([1, BN]).broadcast([BM, BN]));
}
kernel fn saxpy<const B: i32>(y: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>) {
    y.store(x.load_like(y) * 2.0 + y.load());
}
fn main() {
    let x = ones::<f32>([16, 32]);
    let mut z = zeros::<f32>([16, 32]);
    back::<16, 32>(z.partition([16, 32]), &x).sync();
    let v = ones::<f32>([256]);
    let mut y = zeros::<f32>([256]);
    saxpy(y.partition([256]), &v).sync();
}
'''


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_a_barrier_only_where_threads_change(arch: str, tmp_path: Path) -> None:
    """`back` loads its stored tile in the reduction's layout: a CTA barrier
    between the store and the load; `saxpy` reads and writes its tile
    element-wise in one layout: none."""
    f = tmp_path / "k.tile"
    f.write_text(STORE_LOAD)
    for name, want in (("back", True), ("saxpy", False)):
        r = tilec("emit", str(f), "--stage", "llvm", "--arch", arch, "--kernel", name)  # (in this process)
        assert r.returncode == 0, r.stderr
        lines = r.stdout[r.stdout.index("define ptx_kernel"):].splitlines()
        first_store = next(i for i, ln in enumerate(lines) if " store " in ln and "addrspace(1)" in ln)
        load_after = next((i for i, ln in enumerate(lines) if i > first_store and " load " in ln
                           and "addrspace(1)" in ln), len(lines))
        between = "\n".join(lines[first_store:load_after])
        assert ("barrier.cta.sync" in between) is want, name
