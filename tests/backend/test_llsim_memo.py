"""`llsim.MEMO`: `SimDevice.run` keeps a launch's buffers by everything its
simulation reads, and a launch of the same LLVM on the same inputs takes
them instead of simulating again. The kept result is the simulated one
(outputs, prints and a failed assert's error alike); any change of the
text, an input byte, a scalar, the grid, the block order or a simulator
setting simulates again; with `MEMO = False` or recorded registers
(`Memory.regs_out`) every launch is simulated."""

from __future__ import annotations

import functools

import llsim
import numpy as np
import pytest
from llsim import SimDevice

from tilelang import driver
from tilelang.diagnostics.model import TileError

SRC = """
kernel fn axpy<const B: i32>(y: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>, a: f32) {
    let v = x.load_like(y) * a + y.load();
    assert(v.min() > -1000.0, "too small");
    y.store(v);
}
fn main() {
    let x = ones::<f32>([64]);
    let mut y = zeros::<f32>([64]);
    axpy::<32>(y.partition([32]), &x, 2.0).sync();
}
"""


@pytest.fixture
def blocks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many blocks llsim simulates (each `run_block` call appends one), with an empty memo."""
    ran: list[int] = []
    real = llsim.run_block

    def counted(*args, **kw):  # type: ignore[no-untyped-def]
        ran.append(1)
        return real(*args, **kw)

    monkeypatch.setattr(llsim, "run_block", counted)
    monkeypatch.setattr(llsim, "_LAUNCHES", type(llsim._LAUNCHES)())
    monkeypatch.setattr(llsim, "MEMO", True)
    return ran


@functools.cache
def _kernel() -> object:
    return driver.compile(SRC, "ir").output[0]


def _launch(sim: SimDevice, x: np.ndarray, a: float = 2.0, grid: tuple[int, ...] = (2,), order: str = "row-major") -> np.ndarray:
    k = _kernel()
    y = np.arange(64, dtype=np.float32)
    sim.run(k, grid, [y, x, np.float32(a)], order=order)
    return y


def test_the_same_launch_is_simulated_once(blocks: list[int]) -> None:
    x = np.linspace(-1, 1, 64, dtype=np.float32)
    want = np.arange(64, dtype=np.float32) + x * 2
    first = _launch(SimDevice("sm_80"), x)
    np.testing.assert_allclose(first, want, rtol=1e-6)
    assert len(blocks) == 2
    again = _launch(SimDevice("sm_90a"), x)  # (another arch, the same LLVM)
    assert len(blocks) == 2 and again.tobytes() == first.tobytes()
    # each of these changes what the simulation reads: simulated again, and right
    x2 = x.copy()
    x2[63] = 5
    changed = [
        lambda: _launch(SimDevice(), x2),
        lambda: _launch(SimDevice(), x, a=3.0),
        lambda: _launch(SimDevice(), x, order="reverse"),
    ]
    for n, run in enumerate(changed, 1):
        got = run()
        assert len(blocks) == 2 + 2 * n, n
        assert got[63] == want[63] - x[63] * 2 + (x2[63] * 2 if n == 1 else x[63] * (3 if n == 2 else 2))
    llsim.UNDEF_FLOAT = "nan"
    try:
        _launch(SimDevice(), x)
    finally:
        llsim.UNDEF_FLOAT = "0.0"
    assert len(blocks) == 2 + 2 * 4


def test_a_failed_assert_is_kept_too(blocks: list[int]) -> None:
    x = np.full(64, -1e6, np.float32)
    for expect_blocks in (2, 2):
        with pytest.raises(TileError, match="too small"):
            _launch(SimDevice(), x)
        assert len(blocks) == expect_blocks


def test_off_or_with_recorded_registers_every_launch_is_simulated(blocks: list[int],
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    x = np.ones(64, np.float32)
    monkeypatch.setattr(llsim, "MEMO", False)
    _launch(SimDevice(), x)
    _launch(SimDevice(), x)
    assert len(blocks) == 4 and not llsim._LAUNCHES
    monkeypatch.setattr(llsim, "MEMO", True)

    class Recorded(llsim.Memory):
        def __init__(self) -> None:
            super().__init__()
            self.regs_out = []

    monkeypatch.setattr(llsim, "Memory", Recorded)
    _launch(SimDevice(), x)
    _launch(SimDevice(), x)
    assert len(blocks) == 8 and not llsim._LAUNCHES
    monkeypatch.undo()


def test_a_kernel_is_parsed_once_while_the_settings_it_reads_hold(monkeypatch: pytest.MonkeyPatch) -> None:
    """`llsim._program`: the same LLVM text (compile, then run; or another test of the kernel) is one parsed
    `Program`; another setting the parse reads (`UNDEF_FLOAT`, `CONTRACT`) or `MEMO = False` parses again; a
    memoised program still computes each launch's own inputs."""
    monkeypatch.setattr(llsim, "_PROGRAMS", type(llsim._PROGRAMS)())
    monkeypatch.setattr(llsim, "MEMO", True)
    sim = SimDevice("sm_90a")
    first = sim.compile(_kernel())[0]
    assert sim.compile(_kernel())[0] is first
    monkeypatch.setattr(llsim, "UNDEF_FLOAT", "nan")
    assert sim.compile(_kernel())[0] is not first
    monkeypatch.setattr(llsim, "UNDEF_FLOAT", "0.0")
    monkeypatch.setattr(llsim, "CONTRACT", False)
    assert sim.compile(_kernel())[0] is not first
    monkeypatch.setattr(llsim, "CONTRACT", True)
    assert sim.compile(_kernel())[0] is first
    monkeypatch.setattr(llsim, "MEMO", False)
    assert sim.compile(_kernel())[0] is not first
    monkeypatch.setattr(llsim, "MEMO", True)
    x = np.ones(64, np.float32)
    parsed = []
    for a in (2.0, -3.0):  # (a new launch memo each: both launches run their blocks, on one program)
        monkeypatch.setattr(llsim, "_LAUNCHES", type(llsim._LAUNCHES)())
        np.testing.assert_array_equal(_launch(sim, x, a), np.arange(64, dtype=np.float32) + a)
        parsed.append(len(llsim._PROGRAMS))
    assert parsed[0] == parsed[1] <= 4, parsed
