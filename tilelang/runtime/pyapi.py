"""The Python API: load a `.tile` file and call its kernels and host
functions on NumPy arrays (or anything NumPy can view: PyTorch CPU tensors,
DLPack producers), with Tile's ownership rules enforced at each call.

    from tilelang.runtime import pyapi as tile

    mod = tile.load("examples/add.tile")            # checks it; raises on errors
    z = np.zeros(n, np.float32)
    mod.add(tile.partition(z, [1024]), x, y)        # runs and waits; z is written
    h = mod.add.launch(tile.partition(z, [1024]), x, y)
    h.wait()                                        # until then z stays borrowed
    mod.main()                                      # host functions run too

Rules, the same as in Tile source (same codes):
- a `&mut` parameter takes `tile.partition(array, tile_shape)`, never a bare
  array (E0301); every other tensor parameter takes an array, read only;
- one call may not pass overlapping memory mutably twice, or mutably and
  shared (E0303);
- while a `.launch()` has not been waited for, no later call may use memory
  it writes, nor write memory it reads (E0305).
Everything checked at launch from Tile (E05xx) is checked here too.

Arrays: on the CPU a C-contiguous array of the parameter's exact element type
is used in place (zero copy); anything else is converted into a temporary and,
for a `&mut` partition, copied back after the kernel ran. On the GPU arrays
are copied to the device and results copied back. bf16 has no NumPy type:
pass float32 arrays for bf16 parameters.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import numpy as np

from tilelang.diagnostics.codes import ownership as ocodes
from tilelang.diagnostics.model import Diagnostic, TileError
from tilelang.dtypes import DType
from tilelang.runtime.launch import Handle, LaunchArg, Operation, Runtime, bind_launch, param_specs
from tilelang.runtime.tensor import Partition as _Partition
from tilelang.runtime.tensor import Tensor, dtype_of_array
from tilelang.source import SourceMap
from tilelang.syntax import ast


@dataclass(frozen=True, slots=True)
class PartitionArg:
    """`tile.partition(array, tile_shape)`: an array split into tiles for a
    `&mut` parameter."""

    array: Any
    tile: tuple[int, ...]


def partition(array: Any, tile_shape: Any) -> PartitionArg:
    return PartitionArg(array, tuple(int(d) for d in tile_shape))


def _as_numpy(value: Any) -> np.ndarray:
    if isinstance(value, np.ndarray):
        return value
    if hasattr(value, "__dlpack__"):
        try:
            return np.from_dlpack(value)
        except (TypeError, RuntimeError, BufferError):
            pass
    return np.asarray(value)


@dataclass(eq=False)
class _Borrow:
    array: np.ndarray
    mutable: bool
    name: str


@dataclass(eq=False)
class PyHandle:
    """A launched call; `.wait()` ends its borrows and copies results back."""

    handle: Handle
    module: Module
    borrows: list[_Borrow]
    writeback: list[tuple[np.ndarray, Tensor]]
    done: bool = False

    def wait(self) -> None:
        if self.done:
            return
        self.handle.wait()
        for dst, t in self.writeback:
            dst[...] = t.numpy().astype(dst.dtype, copy=False)
        self.done = True
        self.module._in_flight.remove(self)


class KernelFn:
    """A kernel of a loaded module: calling it runs it and waits."""

    def __init__(self, module: Module, decl: ast.FnDecl, key: str) -> None:
        self.module = module
        self.decl = decl
        self.key = key
        self.__name__ = decl.name.name

    def __call__(self, *args: Any, **generics: int) -> None:
        self.launch(*args, **generics).wait()

    def launch(self, *args: Any, **generics: int) -> PyHandle:
        return self.module._launch(self, args, generics)

    def __repr__(self) -> str:
        return f"<kernel {self.key} of {self.module.path}>"


class HostFn:
    """A host function of a loaded module; tensor results come back as arrays."""

    def __init__(self, module: Module, decl: ast.FnDecl, key: str) -> None:
        self.module = module
        self.decl = decl
        self.key = key
        self.__name__ = decl.name.name

    def __call__(self, *args: Any) -> Any:
        from tilelang.runtime.host import FnRef

        ev = self.module._evaluator
        values = [self.module._to_tensor(_as_numpy(a)) if _is_array(a) else a for a in args]
        result = ev.call_fn(FnRef(self.decl, self.key), values, self.decl.span)
        return _from_value(result)


def _is_array(a: Any) -> bool:
    return isinstance(a, np.ndarray) or hasattr(a, "__dlpack__") or hasattr(a, "__array__")


def _from_value(v: Any) -> Any:
    if isinstance(v, Tensor):
        return np.array(v.numpy(), copy=True)
    if isinstance(v, tuple):
        return tuple(_from_value(x) for x in v)
    return v


@dataclass(eq=False)
class Module:
    """A checked `.tile` program; its kernels and host functions are attributes."""

    path: str
    program: Any
    runtime: Runtime
    sources: SourceMap
    _evaluator: Any
    _in_flight: list[PyHandle] = field(default_factory=list)
    _fns: dict[str, Any] = field(default_factory=dict)

    def __getattr__(self, name: str) -> Any:
        fns = self.__dict__.get("_fns", {})
        if name in fns:
            return fns[name]
        raise AttributeError(f"`{self.path}` has no kernel or function `{name}`")

    def __dir__(self) -> list[str]:
        return sorted(self._fns)

    # -- conversions ------------------------------------------------------------
    def _to_tensor(self, arr: np.ndarray, want: DType | None = None) -> Tensor:
        dev = self.runtime.device
        dt = want or dtype_of_array(arr)
        if dt is None:
            raise TypeError(f"arrays of {arr.dtype} have no Tile element type")
        if dev.kind == "cpu" and arr.flags.c_contiguous and arr.dtype == dt.np_dtype and dt is not DType.BF16:
            return Tensor(dt, arr.shape, arr, dev)  # zero copy: the kernel writes the caller's array
        return Tensor.from_numpy(arr, dt, dev)

    # -- launching ----------------------------------------------------------------
    def _launch(self, fn: KernelFn, args: tuple[Any, ...], generics: dict[str, int]) -> PyHandle:
        specs = param_specs(fn.decl)
        kname = fn.decl.name.name
        if len(args) != len(specs):
            raise TypeError(f"kernel `{kname}` takes {len(specs)} arguments, got {len(args)}")
        span = fn.decl.name.span
        borrows: list[_Borrow] = []
        launch_args: list[LaunchArg] = []
        writeback: list[tuple[np.ndarray, Tensor]] = []
        for spec, a in zip(specs, args, strict=True):
            pspan = spec.span
            if spec.kind == "mut":
                if not isinstance(a, PartitionArg):
                    raise TileError(Diagnostic.error(
                        ocodes.MUT_TENSOR_WITHOUT_PARTITION,
                        f"argument `{spec.name}` of kernel `{kname}` is a `&mut` parameter: "
                        "pass `tile.partition(array, tile_shape)`")
                        .primary(pspan, "declared `&mut` here")
                        .with_help("every block writes only its own tile of a partition"))
                arr = _as_numpy(a.array)
                want = DType.parse(spec.elem or "")
                t = self._to_tensor(arr, want if want is not None and dtype_of_array(arr) is not want else None)
                if t.storage is not arr:
                    writeback.append((arr, t))
                borrows.append(_Borrow(arr, True, spec.name))
                launch_args.append(LaunchArg(_Partition(t, a.tile), pspan))
            elif spec.kind == "ref":
                arr = _as_numpy(a.array if isinstance(a, PartitionArg) else a)
                borrows.append(_Borrow(arr, False, spec.name))
                launch_args.append(LaunchArg(self._to_tensor(arr), pspan))
            else:
                launch_args.append(LaunchArg(a, pspan))
        self._check_borrows(kname, borrows, span)
        gen: dict[str, tuple[int | DType, Any]] = {k: (int(v), span) for k, v in generics.items()}
        ev = self._evaluator
        bound = bind_launch(fn.decl, launch_args, span, gen, ev._eval_dim)
        ev.check_deferred(span, ev.fn_ref(fn.decl, fn.key), bound)
        op = Operation(fn.decl, fn.key, bound, span, self.runtime)
        handle = PyHandle(op.launch(), self, borrows, writeback)
        self._in_flight.append(handle)
        return handle

    def _check_borrows(self, kname: str, borrows: list[_Borrow], span: Any) -> None:
        for i, a in enumerate(borrows):
            for b in borrows[i + 1:]:
                if (a.mutable or b.mutable) and np.may_share_memory(a.array, b.array):
                    raise TileError(Diagnostic.error(
                        ocodes.CONFLICTING_BORROWS_IN_LAUNCH,
                        f"kernel `{kname}` gets overlapping memory as `{a.name}` and `{b.name}`, "
                        "and at least one of them is `&mut`")
                        .primary(span, "in this call")
                        .with_help("pass separate arrays, or copy one first"))
        for h in self._in_flight:
            for old in h.borrows:
                for new in borrows:
                    if (old.mutable or new.mutable) and np.may_share_memory(old.array, new.array):
                        what = "writing" if old.mutable else "reading"
                        raise TileError(Diagnostic.error(
                            ocodes.USE_WHILE_IN_FLIGHT,
                            f"`{new.name}` of kernel `{kname}` uses memory that a launched "
                            f"`{h.handle.op.name}` may still be {what} (as `{old.name}`)")
                            .primary(span, "in this call")
                            .with_help("call `.wait()` on the earlier launch's handle first"))


def load(path: str | os.PathLike[str], device: str = "cpu", *, out: IO[str] | None = None) -> Module:
    """Check a `.tile` file and return its kernels and host functions.
    Raises `tilelang.run.CheckFailed` when the checker reports errors."""
    from tilelang import driver
    from tilelang.run import CheckFailed, make_device
    from tilelang.runtime.host import HostEvaluator

    out = out if out is not None else sys.stdout
    sources = SourceMap()
    sf = sources.add(str(path), Path(path).read_text(encoding="utf-8"))
    result = driver.compile(sf, until="checked", sources=sources, strict=True)
    if not result.ok:
        raise CheckFailed(list(result.diagnostics), result.sources)
    checked = result.output
    root = result.context.outputs["ast"]
    runtime = Runtime(make_device(device, out), checked.program)
    ev = HostEvaluator(checked.program, root, sources, runtime, out=out, ownership=checked.ownership)
    mod = Module(str(path), checked.program, runtime, sources, ev)
    for item in root.items:
        if isinstance(item, ast.FnDecl):
            cls = KernelFn if item.is_kernel else HostFn
            mod._fns[item.name.name] = cls(mod, item, item.name.name)
    return mod


__all__ = ["HostFn", "KernelFn", "Module", "PartitionArg", "PyHandle", "load", "partition"]
