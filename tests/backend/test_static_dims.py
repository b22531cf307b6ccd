"""`TILEC_STATIC_DIMS` (`backend/llvm.static_dims`; hcliff10, the default since hstatic, `=0` off): a `&Tensor`
parameter's dimension that the kernel's type fixes is that constant in the kernel body (its bounds checks fold),
a `&mut` parameter's and a `?` dimension stay the launch's. Safe because every launch refuses another size
(`tests/runtime/test_static_dims_launch.py`): checked here too, and the folded kernel run in llsim against the
interpreter (examples/layernorm.tile's kernel, ragged rows); the default's LLVM text is the off switch's with
the constants put in, nothing else."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from llsim import SimDevice

import tilelang
from tilelang import driver
from tilelang.backend import emit_llvm

N = 256
SRC = ((Path(__file__).resolve().parents[2] / "examples" / "layernorm.tile").read_text(encoding="utf-8")
       .split("fn main")[0].replace("const COLS: i32 = 256;", ""))
MAIN = f"""fn main() {{
    let x = zeros::<f32>([20, {N}]); let w = zeros::<f32>([{N}]); let b = zeros::<f32>([{N}]);
    let mut y = zeros::<f32>([20, {N}]);
    layernorm(y.partition([8, {N}]), &x, &w, &b, 1e-5).sync();
}}
"""


def _kernel():  # type: ignore[no-untyped-def]
    return driver.compile(SRC + MAIN, "ir").output[0]


def _body_dims(ll: str) -> set[str]:
    body = ll.split("{", 1)[1]
    return set(re.findall(r"%p\.\w+\.d\d", body))


def test_the_switch_folds_only_static_dims_of_read_only_tensors(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    k = _kernel()
    monkeypatch.setenv("TILEC_STATIC_DIMS", "0")
    assert {"%p.w.d0", "%p.b.d0", "%p.x.d1"} <= _body_dims(emit_llvm(k, "sm_90a"))
    monkeypatch.setenv("TILEC_STATIC_DIMS", "1")
    used = _body_dims(emit_llvm(k, "sm_90a"))
    assert not used & {"%p.w.d0", "%p.b.d0", "%p.x.d1"}  # [N] and x's N fold
    assert "%p.x.d0" in used and "%p.y.d0" in used  # x's `?` rows and y's (a &mut: its tile's dims) stay


def test_the_folded_kernel_agrees_with_the_interpreter_in_the_simulator(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("TILEC_STATIC_DIMS", "1")
    rng = np.random.default_rng(10)
    x = (rng.standard_normal((20, N)) * 2 + 0.5).astype(np.float32)
    w = (rng.random(N) + 0.5).astype(np.float32)
    b = rng.standard_normal(N).astype(np.float32)
    want = np.zeros_like(x)
    tilelang.compile(SRC).layernorm(tilelang.partition(want, [8, N]), x, w, b, np.float32(1e-5)).sync()
    got = np.full_like(x, np.nan)
    SimDevice("sm_90a").run(_kernel(), (3,), [got, x, w, b, np.float32(1e-5)])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_the_default_folds_and_changes_nothing_else(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """On by default; the LLVM text is `TILEC_STATIC_DIMS=0`'s with each folded `%p.NAME.dK` replaced by its
    constant (`benchmarks/static_dims_fold.py` checks the same for every kernel `ptx_sha.py` lists)."""
    k = _kernel()
    monkeypatch.delenv("TILEC_STATIC_DIMS", raising=False)
    on = emit_llvm(k, "sm_90a")
    monkeypatch.setenv("TILEC_STATIC_DIMS", "0")
    off = emit_llvm(k, "sm_90a")
    assert on != off
    head, body = off.split("{", 1)
    consts = {"%p.w.d0": str(N), "%p.b.d0": str(N), "%p.x.d1": str(N)}
    assert head + "{" + re.sub(r"%p\.\w+\.d\d\b", lambda m: consts.get(m.group(0), m.group(0)), body) == on


def test_a_value_the_switch_does_not_take_is_e0604(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from tilelang.backend.env_switch import SwitchError

    monkeypatch.setenv("TILEC_STATIC_DIMS", "yes")
    with pytest.raises(SwitchError, match=r"TILEC_STATIC_DIMS='yes'.*expected 0 or 1"):
        emit_llvm(_kernel(), "sm_90a")


def test_a_launch_with_another_size_is_refused() -> None:
    y = np.zeros((20, N), np.float32)
    x = np.zeros((20, N), np.float32)
    short = np.zeros(N - 4, np.float32)
    with pytest.raises(tilelang.TileError) as e:
        tilelang.compile(SRC).layernorm(tilelang.partition(y, [8, N]), x, short, short, np.float32(1e-5))
    assert "E05" in str(e.value)
