"""The one-function `.launch()`/`.sync()` of a plan (`operation._make_fast`), the
path a GPU launch on PyTorch tensors takes once the native launcher is loaded:
here on a fake CUDA device whose native launcher is the real extension built
against a stand-in libcuda (it records each launch), PyTorch CPU tensors
described as `cuda:0` memory. Every check still runs: a launch in flight, a
tensor given other memory or shape, another current stream, a profiler, a
driver refusal and an address of another alignment all leave the fast path
for the general one (which words the errors) before anything ran.
Skipped where there is no C compiler, no `Python.h` or no PyTorch."""

from __future__ import annotations

import ctypes
import dataclasses
import subprocess
import sysconfig
import warnings
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import tilelang
from tilelang.api import arrays, engines, in_flight
from tilelang.runtime import cuda_native

torch = pytest.importorskip("torch")
P = tilelang.partition

STUB = r"""
#include <stdint.h>
uint64_t last[12];
int n_launch, n_sync, fail_with;
int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                   unsigned bz, unsigned smem, void *stream, void **params, void **extra) {
    last[0] = (uint64_t)f; last[1] = gx; last[8] = (uint64_t)stream; last[9] = (uint64_t)params;
    if (fail_with) return fail_with;
    n_launch++;
    return 0;
}
int cuStreamSynchronize(void *s) { n_sync++; last[11] = (uint64_t)s; return 0; }
int cuStreamIsCapturing(void *s, int *status) { *status = 0; return 0; }
"""

SOURCE = """
kernel fn add<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>, y: &Tensor<f32, [?]>) {
    z.store(x.load_like(z) + y.load_like(z));
}
"""


@pytest.fixture(scope="module")
def native(tmp_path_factory):  # type: ignore[no-untyped-def]
    cc = cuda_native._compiler()
    include = sysconfig.get_paths().get("include")
    if cc is None or not include or not Path(include, "Python.h").exists():
        pytest.skip("no C compiler or no Python.h")
    d = tmp_path_factory.mktemp("fastnative")
    (d / "stub.c").write_text(STUB)
    subprocess.run(
        [cc, "-O2", "-shared", "-fPIC", str(d / "stub.c"), "-o", str(d / "libstub.so")], check=True
    )
    lib = ctypes.CDLL(str(d / "libstub.so"))
    return cuda_native.load(cuda_native.build(d), lib), lib


def _count(lib: Any, name: str) -> int:
    return int(ctypes.c_int.in_dll(lib, name).value)


def _last(lib: Any) -> list[int]:
    return list((ctypes.c_uint64 * 12).in_dll(lib, "last"))


class FakeCuda:
    """`CudaDevice`'s interface for external memory, streams, the fast launcher
    and the native wait; the general path's `run` only counts."""

    name = "fake-cuda"
    kind = "gpu"

    def __init__(self, nat: Any) -> None:
        self.nat = nat
        self.launches = 0
        self.runs = 0
        self.made_current = 0
        self._err = SimpleNamespace(ptr=0)
        codes = SimpleNamespace(CUDA_SUCCESS=0, CUDA_ERROR_INVALID_CONTEXT=201,
                                CUDA_ERROR_INVALID_HANDLE=400)  # fmt: skip

        def result(e: int) -> Any:
            return e

        result.CUDA_SUCCESS = 0  # type: ignore[attr-defined]
        result.CUDA_ERROR_INVALID_CONTEXT = 201  # type: ignore[attr-defined]
        result.CUDA_ERROR_INVALID_HANDLE = 400  # type: ignore[attr-defined]
        del codes
        driver = SimpleNamespace(cuLaunchKernel=lambda *a: (0,), CUresult=result)
        self.ctx = SimpleNamespace(make_current=self._current, d=driver)
        self._streams: dict[int, object] = {}

    def _current(self) -> None:
        self.made_current += 1

    def prepare(self, kir: Any) -> Any:
        return kir

    def wrap_external(
        self, ptr: int, shape: Any, np_dtype: Any, nbytes: int, bf16: bool = False
    ) -> Any:
        return SimpleNamespace(ptr=ptr, shape=tuple(shape))

    def foreign_stream(self, handle: int) -> object:
        return self._streams.setdefault(int(handle), object())

    def run(
        self, prepared: Any, grid: Any, args: Any, stream: Any = None, span: Any = None
    ) -> None:
        self.runs += 1

    def fast_launcher(self, prepared: Any, grid: Any, args: Any, span: Any = None) -> Any:
        from tilelang.ir import nodes as ir
        from tilelang.runtime.cuda import FastLaunch

        slots = [
            SimpleNamespace(what="ptr", param=p.name, kind="ptr")
            if isinstance(p, ir.TensorParam)
            else SimpleNamespace(what="value", param=p.name, kind=p.value.type.dtype.value)
            for p in prepared.params
        ]
        abi = SimpleNamespace(slots=slots, num_threads=128, smem_bytes=0)
        fn = SimpleNamespace(handle=0x5151, name=prepared.name)
        index = {p.name: i for i, p in enumerate(prepared.params)}
        return FastLaunch.make(self, fn, abi, grid, args, index)

    def wait_foreign(self, stream: Any, raw: int | None = None) -> None:
        if raw is not None:
            assert self.nat.capturing(raw) == 0 and self.nat.sync(raw) == 0

    def is_capturing(self, stream: Any) -> bool:
        return False

    def sync_foreign(self, stream: Any) -> None:
        pass


@pytest.fixture
def fake(native, monkeypatch):  # type: ignore[no-untyped-def]
    nat, lib = native
    monkeypatch.delenv("TILEC_LAUNCH", raising=False)
    monkeypatch.setitem(cuda_native._STATE, "module", nat)
    dev = FakeCuda(nat)
    monkeypatch.setitem(engines._DEVICES, "cuda:0", dev)
    real = arrays._torch
    monkeypatch.setattr(
        arrays,
        "_torch",
        lambda t: dataclasses.replace(real(t), space="cuda:0", host=None, stream=0),
    )
    current = {"raw": 0}
    monkeypatch.setattr(
        torch._C, "_cuda_getCurrentRawStream", lambda index: current["raw"], raising=False
    )
    warnings.simplefilter("ignore", RuntimeWarning)
    yield SimpleNamespace(dev=dev, lib=lib, current=current)
    assert in_flight() == 0, "a test left a launch in flight"


def _aligned(n: int) -> Any:
    """A float32 tensor whose memory starts on a 16-byte boundary."""
    t = torch.zeros(n + 4)
    k = (-t.data_ptr() % 16) // 4
    return t[k : k + n]


def _ready(mod: Any) -> tuple[Any, Any, Any, Any]:
    x, y, z = _aligned(1000), _aligned(1000), _aligned(1000)
    x += 1.0
    op = mod.add(P(z, [256]), x, y)
    op.sync()  # the general path: makes the launcher (and the one-function launch)
    op.sync()
    assert op._plan.fast_launch is not None and op._plan.fast_sync is not None
    return op, x, y, z


def test_a_launch_is_one_native_call_with_its_borrows(fake) -> None:  # type: ignore[no-untyped-def]
    mod = tilelang.compile(SOURCE)
    op, x, y, z = _ready(mod)
    plan = op._plan
    n, runs = _count(fake.lib, "n_launch"), fake.dev.runs
    version = z._version
    h = op.launch()
    assert _count(fake.lib, "n_launch") == n + 1 and fake.dev.runs == runs  # native, not general
    last = _last(fake.lib)
    assert last[0] == 0x5151 and last[1] == 4 and last[8] == 0
    assert last[9] == ctypes.addressof(plan.launcher._own[1])  # its own parameter block
    assert list(plan.launcher._own[0]) == [z.data_ptr(), x.data_ptr(), y.data_ptr()]
    assert in_flight() == 1 and z._version > version  # borrowed; autograd told
    with pytest.raises(tilelang.BorrowError, match="E0309"):
        op.launch()  # the same memory written twice in flight: the general path refuses
    assert in_flight() == 1 and _count(fake.lib, "n_launch") == n + 1
    h.wait()
    assert in_flight() == 0
    syncs = _count(fake.lib, "n_sync")
    mod.add(P(z, [256]), x, y).sync()  # a fresh call: the memo, then the one function
    assert _count(fake.lib, "n_launch") == n + 2 and _count(fake.lib, "n_sync") == syncs + 1
    assert fake.dev.runs == runs


def test_changed_memory_and_streams_leave_the_fast_path(fake) -> None:  # type: ignore[no-untyped-def]
    mod = tilelang.compile(SOURCE)
    op, x, y, z = _ready(mod)
    n = _count(fake.lib, "n_launch")
    z.set_(_aligned(1000).detach().clone().untyped_storage())  # other memory
    with pytest.raises(tilelang.CallError, match="other memory"):
        op.sync()
    assert _count(fake.lib, "n_launch") == n and in_flight() == 0
    op = mod.add(P(z, [256]), x, y)
    fake.current["raw"] = 0x77  # another current stream: launched and waited there
    op.sync()
    assert _count(fake.lib, "n_launch") == n + 1 and _last(fake.lib)[8] == 0x77
    assert _last(fake.lib)[11] == 0x77
    fake.current["raw"] = 0
    with tilelang.profile(print_table=False) as prof:  # the profiler's path: not this one
        op.sync()
    assert len(prof.records) == 1 and _count(fake.lib, "n_launch") == n + 2


def test_a_refusal_of_the_driver_or_the_alignment_takes_the_general_path(fake) -> None:  # type: ignore[no-untyped-def]
    mod = tilelang.compile(SOURCE)
    op, x, y, z = _ready(mod)
    n, runs = _count(fake.lib, "n_launch"), fake.dev.runs
    ctypes.c_int.in_dll(fake.lib, "fail_with").value = 201  # no current context
    try:
        with pytest.raises(tilelang.ExecutionError, match="launching `add`"):
            op.sync()  # nothing launched; the general path made it current, retried, reported
    finally:
        ctypes.c_int.in_dll(fake.lib, "fail_with").value = 0
    assert fake.dev.made_current >= 1 and in_flight() == 0 and _count(fake.lib, "n_launch") == n
    buf = torch.zeros(1004)
    k = (-buf.data_ptr() % 16) // 4 + 1  # 4 bytes past a 16-byte boundary
    odd = buf[k : k + 1000]
    mod.add(P(odd, [256]), x, y).sync()  # compiled for aligned memory: the general path
    assert fake.dev.runs == runs + 1 and _count(fake.lib, "n_launch") == n
