"""An `if` result's conversion pushed into its branches and hoisted (`convert`, `TILEC_IF_PUSH`, hcliff4
2026-12-06): tests/user a05's max-pool picks the window's column as `if dc == 0 { prev } else if dc == 1
{ even } else { odd }` inside its 3-step window loop, `even` and `odd` made before that loop in another
layout than the pick's. The nested `if` took its then-branch's layout and the outer `if` converted the inner
one's result in its branch, at every step that took it; now the inner `if` takes the outer result's layout,
its branches yield `even` and `odd` converted once before the window loop."""

from __future__ import annotations

import io
import re
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
A05 = HERE.parents[1] / "tests" / "user" / "programs" / "a05_maxpool3x3_indices.tile"


def _pool(main: str) -> str:
    src = A05.read_text(encoding="utf-8")
    return src[:src.index("fn main()")] + "fn main() { " + main + " }\n"


POOL = _pool("let x = zeros::<f32>([2, 112, 112]); let mut y = zeros::<f32>([2, 56, 56]);"
             " let mut i = zeros::<i32>([2, 56, 56]);"
             " pool3::<64>(y.partition([1, 1, 64]), i.partition([1, 1, 64]), &x).sync();")


def _gpu(src: str) -> str:
    from tilelang import driver
    from tilelang.backend import lower_gpu
    from tilelang.backend.gpu.printer import print_gpu_kernel

    k = next(x for x in driver.compile(src, "ir").output if x.name == "pool3")
    return print_gpu_kernel(lower_gpu(k, "sm_90a", {}))


def _window_loop(text: str) -> str:
    """The text of the inner (window) loop."""
    start = re.search(r"= for %dc\.\d+ ", text)
    assert start is not None
    return text[start.start():text.index("\n    }\n", start.start())]


def test_the_pick_is_converted_before_the_window_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    text = _gpu(POOL)
    inner = _window_loop(text)
    assert "convert_layout" not in inner
    assert re.search(r"convert_layout %even\.\d+ ", text) and re.search(r"convert_layout %odd\.\d+ ", text)
    # both `if`s in the pick's layout: one layout for the three branches' values
    ifs = re.findall(r"= if %\d+ : \((.*?)\)", inner)
    assert len(ifs) == 2 and ifs[0] == ifs[1]
    monkeypatch.setenv("TILEC_IF_PUSH", "0")  # before: the inner `if`'s result converted in the outer's branch
    assert "convert_layout" in _window_loop(_gpu(POOL))


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_the_simulated_pool_computes_the_interpreters_values(arch: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """a05 at its own sizes (17 x 22 planes: windows past every edge), values and indices."""
    sys.path.insert(0, str(HERE))
    import llsim

    import tilelang.run as run

    src = _pool("let x = randn::<f32>([2, 17, 22], 3); let mut y = zeros::<f32>([2, 9, 11]);"
                " let mut idx = zeros::<i32>([2, 9, 11]);"
                " pool3::<16>(y.partition([1, 1, 16]), idx.partition([1, 1, 16]), &x).sync();"
                " print(y.sum(), (y * y).sum(), idx.sum(), (idx * idx).sum());")
    want = io.StringIO()
    run.execute(src, "cpu", out=want, name="p.tile")
    got = io.StringIO()
    monkeypatch.setattr(run, "make_device", lambda choice, out: llsim.sim_runtime_device(arch))
    run.execute(src, "cpu", out=got, name="p.tile")
    assert got.getvalue() == want.getvalue() and len(want.getvalue().split()) == 4
