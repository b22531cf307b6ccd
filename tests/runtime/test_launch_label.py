"""A failed device `assert` (E0700) names the launch that ran it: a secondary
label "in this launch" at the kernel call, besides the primary one at the
`assert`. The CPU interpreter fails inside the launch (runtime/launch.py adds
the label); the GPU reports at the next sync and labels the launch it recorded
with the pending assert (runtime/cuda.py), so a graph replay or a `.wait()`
points at the right call too. The gpu-marked cases skip without a device."""

from __future__ import annotations

import io

import pytest

from tilelang import run
from tilelang.diagnostics.model import Diagnostic, TileError

KERNEL = """
kernel fn check<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>) {
    let t = x.load_like(z);
    assert(t < 100.0, "too big");
    z.store(t);
}
"""

# Each main has exactly one launch of `check` on `&bad`: the one to label.
MAINS = {
    "sync": """
fn main() {
    let ok = zeros::<f32>([64]);
    let bad = arange::<f32>(64) * 10.0;
    let mut z = zeros::<f32>([64]);
    check(z.partition([16]), &ok).sync();
    check(z.partition([16]), &bad).sync();
}
""",
    "launch_wait": """
fn main() {
    let bad = arange::<f32>(64) * 10.0;
    let mut z = zeros::<f32>([64]);
    let h = check(z.partition([16]), &bad).launch();
    h.wait();
}
""",
    "graph": """
fn main() {
    let ok = zeros::<f32>([64]);
    let bad = arange::<f32>(64) * 10.0;
    let mut z = zeros::<f32>([64]);
    let mut w = zeros::<f32>([64]);
    let g = graph {
        check(z.partition([16]), &ok);
        check(w.partition([16]), &bad);
    };
    g.replay();
}
""",
}


def _failure(main: str, device: str) -> tuple[Diagnostic, str]:
    text = KERNEL + MAINS[main]
    with pytest.raises(TileError) as e:
        run.execute(text, device=device, out=io.StringIO(), name="t.tile")
    (d,) = e.value.diagnostics
    return d, text


def _check_labels(d: Diagnostic, text: str) -> None:
    assert d.code == "E0700" and "too big" in d.message
    primary = [lb for lb in d.labels if lb.primary]
    launch = [lb for lb in d.labels if not lb.primary and lb.message == "in this launch"]
    assert len(primary) == 1 and text[primary[0].span.start:primary[0].span.end].startswith("assert(")
    assert len(launch) == 1, d.labels
    called = text[launch[0].span.start:launch[0].span.end]
    assert called.startswith("check(") and "&bad" in called


@pytest.mark.parametrize("main", sorted(MAINS))
def test_device_assert_labels_the_launch_cpu(main: str) -> None:
    d, text = _failure(main, "cpu")
    _check_labels(d, text)


@pytest.mark.gpu
@pytest.mark.parametrize("main", sorted(MAINS))
def test_device_assert_labels_the_launch_gpu(main: str) -> None:
    d, text = _failure(main, "gpu")
    _check_labels(d, text)


def test_the_label_renders_under_the_call(tmp_path) -> None:  # type: ignore[no-untyped-def]
    p = tmp_path / "t.tile"
    p.write_text(KERNEL + MAINS["sync"])
    err = io.StringIO()
    assert run.run_file(p, device="cpu", out=io.StringIO(), err=err) == 3
    lines = err.getvalue().splitlines()
    at = next(i for i, line in enumerate(lines) if "check(z.partition([16]), &bad).sync();" in line)
    assert lines[at + 1].strip().endswith("in this launch") and "-" in lines[at + 1]


def test_at_launch_adds_one_label_and_leaves_other_codes() -> None:
    from tilelang.runtime.launch import at_launch
    from tilelang.source import Span

    here, there = Span(0, 1, 5), Span(0, 10, 20)
    err = TileError(Diagnostic.error("E0700", "device assertion failed").primary(here, "this assertion failed"),
                    Diagnostic.error("E0710", "assertion failed").primary(here))
    once = at_launch(err, there)
    assert [lb.span for lb in once.diagnostics[0].labels] == [here, there]
    assert once.diagnostics[1] == err.diagnostics[1]
    assert at_launch(once, there) is once  # already labelled: unchanged


def test_gpu_assert_check_labels_the_launch_whose_assert_failed() -> None:
    """`CudaDevice._check_asserts` without a GPU: a fake driver hands back the
    error words; of two launches waited for together, the label goes to the
    one whose word is set."""
    import ctypes
    from types import SimpleNamespace

    import numpy as np

    pytest.importorskip("cuda.bindings")
    from tilelang.runtime.cuda import CudaDevice
    from tilelang.source import Span

    words = np.zeros(8, np.int32)  # two words a launch: the number, a region's place (complemented)
    words[4] = 1  # the second launch's first assert failed

    def memcpy_dtoh(dst: int, src: int, nbytes: int) -> tuple[int]:
        ctypes.memmove(dst, words.ctypes.data + src, nbytes)
        return (0,)

    dev = object.__new__(CudaDevice)
    dev._err_words = 8
    dev._err = SimpleNamespace(ptr=0)
    dev.ctx = SimpleNamespace(d=SimpleNamespace(cuMemcpyDtoH=memcpy_dtoh, cuMemsetD32=lambda *a: (0,)))
    at_assert, first, second = Span(0, 5, 9), Span(0, 20, 30), Span(0, 40, 50)
    ok_abi = SimpleNamespace(asserts=[(Span(0, 1, 2), "never", "", -1)])
    bad_abi = SimpleNamespace(asserts=[(at_assert, "too big", "", -1)])
    with pytest.raises(TileError) as e:
        dev._check_asserts([(2, ok_abi, first, (4,)), (4, bad_abi, second, (4,))])
    (d,) = e.value.diagnostics
    assert d.code == "E0700" and d.message == "device assertion failed: too big"
    assert [(lb.span, lb.primary, lb.message) for lb in d.labels] == [
        (at_assert, True, "this `assert` failed on the GPU"), (second, False, "in this launch")]
    assert d.notes == ()  # a plain assert's word names no block (the GPU's blocks may be renumbered)
    # an assert in a tile walk: the word after the number holds the tile's place, complemented
    walk_abi = SimpleNamespace(asserts=[(at_assert, "too big", "walk", 1)])
    words[5] = ~np.int32(2 * 8 + 5)
    with pytest.raises(TileError) as e:
        dev._check_asserts([(4, walk_abi, second, (3, 8))])
    assert e.value.diagnostics[0].notes == ("in the tile walk's tile (2, 5) of (3, 8) (tiles along axis 1)",)
    # a launch made without a span (the device used directly) gets no label
    words[5] = 0
    with pytest.raises(TileError) as e:
        dev._check_asserts([(4, bad_abi, None, (4,))])
    assert [lb.primary for lb in e.value.diagnostics[0].labels] == [True]
