"""A failed device `assert` in a tile walk, a tile queue or a `last_block` region names
the same place on the GPU as in the interpreter: the tile (or the group), never the block
that happened to take it (hrev, 2026-12-05).

The GPU side without a GPU: the programs of `tests/run/fail_*_assert.tile`, their kernels as
the code generator emits them, run in llsim with 1 to 5 walking blocks a row and the blocks in
either order; the first failure writes its place into the error word after the assert's
number, which the runtime's `assert_diagnostic` names. The rendered error must equal the
interpreter's but for the label of the assert (the interpreter's "this assertion failed", the
GPU's "this `assert` failed on the GPU") and the interpreter's count of false elements."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from tilelang.diagnostics.model import TileError

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def _notes(err: TileError) -> list[str]:
    return [n for n in err.diagnostics[0].notes if not re.match(r"\d+ of \d+ elements were false", n)]


def _fail(path: Path, device: object | None) -> TileError:
    import tilelang.run as run

    with pytest.raises(TileError) as info:
        if device is None:
            run.execute(str(path), "cpu")
        else:
            real = run.make_device
            run.make_device = lambda choice, out: device  # type: ignore[assignment]
            try:
                run.execute(str(path), "cpu")
            finally:
                run.make_device = real  # type: ignore[assignment]
    return info.value


@pytest.mark.parametrize("order", ["row-major", "reverse"])
@pytest.mark.parametrize("blocks", [1, 2, 5])
@pytest.mark.parametrize("name", ["fail_walk_assert", "fail_walk_assert_two_tiles", "fail_queue_assert",
                                  "fail_last_block_assert"])
def test_the_simulated_gpu_names_the_interpreters_place(name: str, blocks: int, order: str,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    sys.path.insert(0, str(HERE))
    import llsim

    path = ROOT / "tests" / "run" / f"{name}.tile"
    want = _fail(path, None)
    real = llsim.SimDevice.run
    monkeypatch.setattr(llsim.SimDevice, "run", lambda self, k, grid, args, facts=None, **kw: real(
        self, k, grid, args, facts, queue_blocks=blocks, order=order))
    got = _fail(path, llsim.sim_runtime_device("sm_80"))
    w, g = want.diagnostics[0], got.diagnostics[0]
    assert (g.code, g.message, g.primary_span) == (w.code, w.message, w.primary_span)
    assert [lb.span for lb in g.labels] == [lb.span for lb in w.labels]  # the assert, the launch
    assert _notes(got) == _notes(want) and len(_notes(want)) == 1
    assert "tile" in _notes(want)[0] or "group" in _notes(want)[0]


def test_a_plain_assert_keeps_one_error_word() -> None:
    # an assert outside a walk, queue or `last_block` writes only its number (first wins), as
    # before: the kernels of std::attention (which assert their shapes) keep their code; one
    # in a walk writes its number and place as one u64 max (the smallest failing tile wins)
    from tests.clirunner import invoke

    plain = invoke("emit", "--stage", "ptx", str(ROOT / "tests" / "run" / "fail_device_assert.tile"))
    walk = invoke("emit", "--stage", "ptx", str(ROOT / "tests" / "run" / "fail_walk_assert.tile"))
    assert plain.exit_code == 0 and walk.exit_code == 0
    assert re.search(r"atom\.[a-z.]*global\.cas\.b32", plain.stdout) and "max.u64" not in plain.stdout
    assert re.search(r"atom\.[a-z.]*global\.max\.u64", walk.stdout) and "cas.b32" not in walk.stdout


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["fail_walk_assert", "fail_walk_assert_two_tiles", "fail_queue_assert",
                                  "fail_last_block_assert",
                                  "fail_device_assert"])
def test_the_gpu_names_the_interpreters_place(name: str) -> None:
    # the same errors on a real GPU (a wave of walking blocks, the runtime's error words)
    from tilelang.runtime import cuda

    if not cuda.is_available():
        pytest.skip("no CUDA device")
    import tilelang.run as run

    path = ROOT / "tests" / "run" / f"{name}.tile"
    want = _fail(path, None)
    with pytest.raises(TileError) as info:
        run.execute(str(path), "gpu")
    w, g = want.diagnostics[0], info.value.diagnostics[0]
    assert (g.code, g.message, g.primary_span) == (w.code, w.message, w.primary_span)
    if name == "fail_device_assert":
        assert _notes(info.value) == []  # a plain assert names no block on the GPU
    else:
        assert _notes(info.value) == _notes(want)
