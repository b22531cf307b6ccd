"""The compiled kernels' caches are keyed by every codegen switch (hnum; `tilelang/env_switch.py`'s registry).

Before: the runtime's variants (`CudaDevice._variant`) were keyed by five hand-picked switches, and the launch
memos (`PreparedKernel.fast`, the Python API's plans) by none: `TILEC_ERF_F32=0` set after a kernel's first
launch kept its f32 code. Now `SWITCHES` records for each switch whether it changes generated code;
`codegen_key` (the values of the "compile" ones) keys the variants, `codegen_setting` the PTX entries on disk and
the tuner's records, and a write of such a switch in `os.environ` drops the launch memos
(`env_switch.on_codegen_change`). Checked on the stub device (the real launch path over a stand-in driver)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tilelang
import tilelang.backend as backend
from tilelang import env_switch
from tilelang.diagnostics.model import TileError
from tilelang.runtime import cuda_stub
from tilelang.runtime.cuda_stub import DevArray

PACKAGE = Path(tilelang.__file__).parent
SRC = """
kernel fn k<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>) {
    let t = x.load_like(z);
    z.store(erf(t));
}
"""


def test_every_switch_read_is_in_the_registry() -> None:
    """Each `"TILEC_.."` name in the package's code (and examples/llm's and examples/python's), and each `TILE_..`
    it reads from the environment, has an entry; each entry is read somewhere (a switch removed from the code leaves
    the registry too)."""
    read: set[str] = set()
    # the package, and the examples' launch plans (`TILEC_DECODE_PLAN`: the LLM example's plan's profile;
    # `TILEC_PREFILL_WG3`: examples/python/prefill_plan.py's query block at D = 64)
    llm = Path(__file__).resolve().parents[2] / "examples" / "llm"
    assert (llm / "plan.py").is_file() and (llm.parent / "python" / "prefill_plan.py").is_file()
    for p in [*PACKAGE.rglob("*.py"), *llm.glob("*.py"), *(llm.parent / "python").glob("*.py")]:
        if p.name == "env_switch.py" and p.parent == PACKAGE:
            continue
        text = p.read_text(encoding="utf-8")
        read |= set(re.findall(r"[\"'](TILEC_[A-Z0-9_]+)[\"']", text))
        read |= set(re.findall(r"environ\.get\([\"'](TILE_[A-Z0-9_]+)[\"']", text))
    assert read - set(env_switch.SWITCHES) == set(), "switches read but not registered"
    assert set(env_switch.SWITCHES) - read == set(), "registered but never read"
    assert {s.code for s in env_switch.SWITCHES.values()} == {"compile", "start", "none"}
    assert "TILEC_ERF_F32" in env_switch.CODEGEN and "TILEC_CACHE_DIR" not in env_switch.CODEGEN


def test_the_key_moves_with_each_codegen_switch_and_no_other(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in env_switch.SWITCHES:
        monkeypatch.delenv(name, raising=False)
    base, words = env_switch.codegen_key(), env_switch.codegen_setting()
    assert words == ""
    for name, sw in env_switch.SWITCHES.items():
        monkeypatch.setenv(name, "7")
        moved = env_switch.codegen_key() != base
        assert moved == (sw.code == "compile"), name
        assert (env_switch.codegen_setting() == f"{name}=7") == moved, name
        monkeypatch.delenv(name)
    assert env_switch.codegen_key() == base


@pytest.fixture
def stub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The stub device installed, a fresh compile cache, no switch set; yields (device, module)."""
    for name in env_switch.SWITCHES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    dev = cuda_stub.stub_device("sm_90a", 132)
    with cuda_stub.installed(dev):
        yield dev, tilelang.compile(SRC)


def _launch(dev: Any, m: Any, arrays: tuple[Any, Any] | None = None) -> Any:
    """One launch of `k` (the same arrays as an earlier launch where given: the launch memos' case); the
    function it launched."""
    z, x = arrays or (DevArray.zeros((1024,), np.float32), DevArray.zeros((1024,), np.float32))
    before = len(dev.ctx.d.launches)
    m.k(tilelang.partition(z, [256]), x).sync()
    assert len(dev.ctx.d.launches) == before + 1
    return dev.ctx.d.launches[-1][0]


def test_erf_switch_set_after_a_launch_compiles_the_new_code(stub: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """`TILEC_ERF_F32=0` set after two launches (the second served by the memos): the next launch, of the same
    arrays, runs the f64 series (new PTX, a new module); a non-codegen switch set then changes nothing; unset
    again, the first variant (its function) comes back without a compile."""
    dev, m = stub
    arrays = (DevArray.zeros((1024,), np.float32), DevArray.zeros((1024,), np.float32))
    first = _launch(dev, m, arrays)
    assert _launch(dev, m, arrays) == first and dev.ctx.loads == 1
    f32_ptx = dev.ctx.ptx["k"]
    assert ".f64" not in f32_ptx
    monkeypatch.setenv("TILEC_ERF_F32", "0")
    second = _launch(dev, m, arrays)
    assert second != first and dev.ctx.loads == 2
    assert ".f64" in dev.ctx.ptx["k"] and dev.ctx.ptx["k"] != f32_ptx  # (main: the f32 code, no second module)
    monkeypatch.setenv("TILEC_EXPLAIN", "0")
    assert _launch(dev, m, arrays) == second and _launch(dev, m) == second and dev.ctx.loads == 2
    monkeypatch.delenv("TILEC_ERF_F32")
    assert _launch(dev, m, arrays) == first and dev.ctx.loads == 2


def test_each_codegen_switch_compiles_again_and_no_other_does(stub: Any, monkeypatch: pytest.MonkeyPatch,
                                                             tmp_path: Path) -> None:
    """Every switch of the registry set mid-process to a value it takes: a "compile" one makes the next launch
    compile the kernel again (a variant of its own), a "start" or "none" one does not. (The compile here is the
    first one's result: what each switch does to the code is its own pass's tests'.)"""
    dev, m = stub
    compiles: list[str] = []
    real = backend.compile_kernel
    done: dict[str, Any] = {}

    def counted(kir: Any, target: Any = None, facts: Any = None) -> Any:
        compiles.append(kir.name)
        if "ck" not in done:
            done["ck"] = real(kir, target, facts)
        return done["ck"]

    monkeypatch.setattr(backend, "compile_kernel", counted)
    arrays = (DevArray.zeros((1024,), np.float32), DevArray.zeros((1024,), np.float32))
    _launch(dev, m, arrays)
    assert len(compiles) == 1
    paths = {"TILEC_CACHE_DIR": str(tmp_path), "TILEC_ICE_DIR": str(tmp_path), "TILEC_HISTORY": str(tmp_path / "h")}
    for name, sw in env_switch.SWITCHES.items():
        before = len(compiles)
        for value in (paths.get(name, "1"), "0", "ring", "auto"):  # the first value the switch takes
            monkeypatch.setenv(name, value)
            try:
                _launch(dev, m, arrays)
                break
            except TileError as e:  # E0604: not a value it takes
                assert e.diagnostics[0].code == "E0604", (name, e)
        else:
            pytest.fail(f"{name} took none of the values tried")
        assert len(compiles) - before == (sw.code == "compile"), name
        monkeypatch.delenv(name)
        _launch(dev, m, arrays)  # (unset again: the first variant, no compile)
        assert len(compiles) - before == (sw.code == "compile"), name


def test_the_disk_key_holds_the_switches_set(stub: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The PTX entry's key has the codegen switches set (none set: the key the entries always had) and the tuner's
    record key too."""
    from tilelang.ir.samples import vector_add
    from tilelang.tuner.records import record_key

    k = vector_add(1024)
    plain = backend.compile_kernel(k, "sm_90a").key
    rec = record_key("k", "x")
    monkeypatch.setenv("TILEC_GEMM_PAD", "1")  # (a switch this kernel does not read: its LLVM text is the same)
    assert backend.compile_kernel(k, "sm_90a").key != plain and record_key("k", "x") != rec
    monkeypatch.setenv("TILEC_PREWARM", "0")  # a runtime switch: no part of either
    monkeypatch.delenv("TILEC_GEMM_PAD")
    assert backend.compile_kernel(k, "sm_90a").key == plain and record_key("k", "x") == rec
