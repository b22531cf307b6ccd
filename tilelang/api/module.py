"""Loaded `.tile` modules: kernels and host functions callable from Python.

A `Module` is one checked program. Its kernels are `Kernel` attributes:
calling one checks the arguments against the kernel's Tile signature and
returns an `Operation` (nothing runs yet), exactly as a kernel call does in
Tile; `.sync()` runs it and waits, `.launch()` starts it and returns a
`Handle` whose `.wait()` waits. Its host functions (`fn`, `main` included)
are `HostFunction` attributes that run at once on the module's engine.

Where a kernel runs is decided by its arrays: NumPy arrays (and PyTorch CPU
tensors, which NumPy views without a copy) run on the module's engine, the
CPU interpreter by default, in place; PyTorch and CuPy CUDA tensors run on
the GPU in place, on the stream their library has current when the
operation starts (`.sync()`/`.wait()` then wait for that stream). PyTorch
tensors a kernel writes get their autograd version bumped. A `bf16`
parameter takes float32 arrays, or torch.bfloat16 CUDA tensors in their own
2-byte memory (a CPU torch.bfloat16 tensor is refused: `arrays.py`). A module loaded
with `device="gpu"` runs NumPy arrays on the GPU through copies (uploaded
when the operation starts, results copied back into the caller's `&mut`
arrays when it finishes).

Ownership at run time (BRIEF §6, through `ownership.dynamic.BorrowTracker`,
one tracker per address space for the whole process):
- a `&mut` parameter takes `tilelang.partition(array, tile)`, never a bare
  array (E0301);
- one call may not pass overlapping memory twice when one of them is
  `&mut` (E0303), checked when the call is made;
- a started operation holds its borrows until it finishes (`.sync()`
  returns, or its handle's `.wait()`): until then another operation may not
  write memory it uses, nor use memory it writes (E0305, E0309).
Python code that reads or writes such an array directly is not seen; see
the README section "Python API" for what that means on each engine.

Invariant: every failure is a `tilelang.TileError` (`CallError`,
`BorrowError`, `ExecutionError`) raised before any kernel work starts,
except `ExecutionError`, which the kernel itself raised.
"""

from __future__ import annotations

import contextlib
import inspect
import sys
import threading
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from typing import IO, Any, NoReturn, cast

import numpy as np

from tilelang.api import arrays
from tilelang.api.arrays import ArrayRef, NotAnArray, Unsupported, tile_dtype_name
from tilelang.api.errors import (
    BorrowError,
    CallError,
    ExecutionError,
    locate,
    span_text,
)
from tilelang.diagnostics.codes import launch as lcodes
from tilelang.diagnostics.codes import ownership as ocodes
from tilelang.diagnostics.codes import types as tcodes
from tilelang.diagnostics.model import TileError
from tilelang.dtypes import DType
from tilelang.ownership.dynamic import BorrowTracker, Region
from tilelang.runtime.launch import (
    BoundLaunch,
    LaunchArg,
    ParamSpec,
    Runtime,
    bind_launch,
    param_specs,
)
from tilelang.runtime.launch import Operation as _RtOperation
from tilelang.runtime.tensor import Partition as _RtPartition
from tilelang.runtime.tensor import Tensor, dtype_of_array
from tilelang.source import SourceMap, Span
from tilelang.syntax import ast

# The type checker's limit (`sema/check.py` MAX_TILE_ELEMENTS), restated to
# keep `sema` out of the API's imports.
MAX_TILE_ELEMENTS = 1 << 20


# ---------------------------------------------------------------- partitions
@dataclass(frozen=True, slots=True, eq=False)
class Partition:
    """An array split into tiles of `tile` elements, for a `&mut` kernel
    parameter (Tile's `t.partition([..])`). Made by `tilelang.partition`."""

    array: Any
    tile: tuple[int, ...]

    def __repr__(self) -> str:
        return f"tilelang.partition(<{type(self.array).__name__}>, {list(self.tile)})"


def partition(array: Any, tile: Iterable[int] | int) -> Partition:
    """`array` split into tiles of shape `tile` (one int for a 1-D tile); pass
    it for a `&mut` parameter. Block `i` of the grid writes tile `i` only;
    the grid is `ceil(array.shape / tile)` per dimension, so the tiles at the
    far edges may be partial."""
    dims = (tile,) if isinstance(tile, (int, np.integer)) else tuple(tile)
    if not dims or not all(
        isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d > 0 for d in dims
    ):
        raise CallError(
            f"a tile shape is a list of positive integers, not {tile!r}",
            code=lcodes.BAD_PARTITION,
            help="write it like `tilelang.partition(z, [128, 64])`",
        )
    return Partition(array, tuple(int(d) for d in dims))


# ---------------------------------------------------------------- engines
class _Stdout:
    """Device and host `print` go to whatever `sys.stdout` is at the time
    (pytest's capture, a notebook cell)."""

    def write(self, text: str) -> int:
        return sys.stdout.write(text)

    def flush(self) -> None:
        sys.stdout.flush()


_LOCK = threading.RLock()
_DEVICES: dict[str, Any] = {}
_TRACKERS: dict[str, BorrowTracker] = {}
_PENDING: dict[tuple[str, int], Operation] = {}  # (space, tracker token) -> started, not waited


def _device(engine: str) -> Any:
    """The process's device for `engine` ("cpu" or "cuda:<index>")."""
    with _LOCK:
        dev = _DEVICES.get(engine)
        if dev is None:
            if engine == "cpu":
                from tilelang.runtime.cpu import CpuDevice

                dev = CpuDevice(out=_device_print)
            else:
                from tilelang.runtime import cuda

                if not cuda.is_available():
                    raise ExecutionError(
                        "cannot run on the GPU: no CUDA driver or device was found",
                        help='load the module with `device="cpu"` to use the interpreter',
                    )
                dev = cuda.CudaDevice(int(engine.split(":", 1)[1]), out=_device_print)
            _DEVICES[engine] = dev
        return dev


def _device_print(text: str) -> None:
    _Stdout().write(text + "\n")


def _tracker(space: str) -> BorrowTracker:
    with _LOCK:
        return _TRACKERS.setdefault(space, BorrowTracker())


def gpu_available() -> bool:
    """True when a CUDA device can run kernels (never raises)."""
    from tilelang.run import gpu_available as available

    return available()


def in_flight() -> int:
    """How many `.launch()`ed operations have not been waited for (all modules)."""
    with _LOCK:
        return sum(len(t.inflight) for t in _TRACKERS.values())


# ---------------------------------------------------------------- the module
class Module:
    """A checked `.tile` program. Kernels and host functions are attributes
    (`mod.add`, `mod.main`); `mod.kernels` and `mod.functions` list them."""

    def __init__(
        self,
        name: str,
        program: Any,
        ownership: Any,
        root: ast.Module,
        sources: SourceMap,
        device: str,
    ) -> None:
        self.name = name
        self.device = device  # "cpu" or "gpu": where NumPy arrays and host functions run
        self._program = program
        self._ownership = ownership
        self._root = root
        self._sources = sources
        self._runtimes: dict[str, Runtime] = {}
        self._evaluators: dict[str, Any] = {}
        self._checked: set[int] = set()  # ids of lowered kernels whose tiles passed the limits
        self.kernels: dict[str, Kernel] = {}
        self.functions: dict[str, HostFunction] = {}
        for item in root.items:
            if not isinstance(item, ast.FnDecl):
                continue
            if item.is_kernel:
                self.kernels[item.name.name] = Kernel(self, item, item.name.name)
            elif not _works_on_tiles(item):
                self.functions[item.name.name] = HostFunction(self, item, item.name.name)

    # -- attribute access ---------------------------------------------------------
    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        if name in d.get("kernels", {}):
            return d["kernels"][name]
        if name in d.get("functions", {}):
            return d["functions"][name]
        if name.startswith("__"):
            raise AttributeError(name)
        known = sorted([*d.get("kernels", {}), *d.get("functions", {})])
        raise AttributeError(
            f"`{d.get('name', 'the module')}` has no kernel or host function `{name}`"
            + (f" (it has: {', '.join(known)})" if known else "")
        )

    def __dir__(self) -> list[str]:
        return sorted({*super().__dir__(), *self.kernels, *self.functions})

    def __repr__(self) -> str:
        return (
            f"<tile module {self.name} ({self.device}): kernels {sorted(self.kernels)}, "
            f"functions {sorted(self.functions)}>"
        )

    def on(self, device: str) -> Module:
        """The same program with NumPy arrays and host functions on `device`
        ("cpu", "gpu" or "auto"); the program is not checked again."""
        dev = _resolve_device(device)
        if dev == self.device:
            return self
        siblings: dict[str, Module] = self.__dict__.setdefault("_siblings", {})
        if dev not in siblings:
            siblings[dev] = Module(
                self.name, self._program, self._ownership, self._root, self._sources, dev
            )
        return siblings[dev]

    # -- engines --------------------------------------------------------------------
    def _engine_for_host(self) -> str:
        return "cpu" if self.device == "cpu" else "cuda:0"

    def _runtime(self, engine: str) -> Runtime:
        rt = self._runtimes.get(engine)
        if rt is None:
            rt = Runtime(_device(engine), self._program)
            self._runtimes[engine] = rt
        return rt

    def _evaluator(self, engine: str | None = None) -> Any:
        from tilelang.runtime.host import HostEvaluator

        engine = engine or self._engine_for_host()
        ev = self._evaluators.get(engine)
        if ev is None:
            ev = HostEvaluator(
                self._program,
                self._root,
                self._sources,
                self._runtime(engine),
                out=cast(IO[str], _Stdout()),
                ownership=self._ownership,
            )
            self._evaluators[engine] = ev
        return ev

    def _where(self, span: Span, what: str = "") -> str:
        return locate(span, self._sources, what)


def _resolve_device(device: str) -> str:
    if device not in ("cpu", "gpu", "auto"):
        raise ValueError(f'device must be "cpu", "gpu" or "auto", not {device!r}')
    if device == "auto":
        return "gpu" if gpu_available() else "cpu"
    return device


def _works_on_tiles(decl: ast.FnDecl) -> bool:
    """A device function (tiles in its signature): kernels call it, Python cannot."""
    tys = [p.ty for p in decl.params] + ([decl.ret] if decl.ret is not None else [])
    for ty in tys:
        inner = ty.inner if isinstance(ty, ast.RefType) else ty
        if isinstance(inner, ast.NamedType) and inner.name.name == "Tile":
            return True
    return False


# ---------------------------------------------------------------- signatures
def _header(decl: ast.FnDecl, sources: SourceMap) -> str:
    """The declaration up to its body, on one line: `kernel fn add<..>(..)`."""
    text = span_text(Span(decl.span.file, decl.span.start, decl.body.span.start), sources)
    return text.replace("( ", "(").replace(", )", ")").replace(",)", ")")


def _doc_comments(decl: ast.FnDecl, sources: SourceMap) -> str:
    """The `//` comment lines right above the declaration (its doc)."""
    try:
        sf = sources.get(decl.span.file)
    except IndexError:
        return ""
    line, _ = sf.line_col(decl.span.start)
    out: list[str] = []
    n = line - 1
    while n >= 1:
        text = sf.line_text(n).strip()
        if text.startswith("#["):
            n -= 1
            continue
        if not text.startswith("//"):
            break
        out.append(text[2:].lstrip("/! ").rstrip() if text.startswith("///") else text[2:].strip())
        n -= 1
    return "\n".join(reversed(out))


def _type_text(ty: ast.TypeExpr, sources: SourceMap) -> str:
    return span_text(ty.span, sources)


def _py_signature(decl: ast.FnDecl, sources: SourceMap) -> inspect.Signature:
    """The Python signature of a kernel or host fn: its parameter names, each
    annotated with its Tile type as written (for `help()` and `inspect`)."""
    return inspect.Signature(
        [
            inspect.Parameter(
                p.name.name,
                inspect.Parameter.POSITIONAL_OR_KEYWORD,
                annotation=_type_text(p.ty, sources),
            )
            for p in decl.params
        ]
    )


# ---------------------------------------------------------------- kernels
class Kernel:
    """A kernel of a loaded module. `kernel(args...)` checks the arguments and
    returns an `Operation`; `kernel[g1, g2](args...)` gives const generics (and
    element types) explicitly, like Tile's `kernel::<g1, g2>(..)`."""

    def __init__(
        self, module: Module, decl: ast.FnDecl, key: str, explicit: tuple[Any, ...] = ()
    ) -> None:
        self.module = module
        self.decl = decl
        self.key = key
        self.explicit = explicit
        self.specs: tuple[ParamSpec, ...] = param_specs(decl)
        self.__name__ = decl.name.name
        self.__qualname__ = decl.name.name
        self.signature = _header(decl, module._sources)
        self.__doc__ = self._doc()
        self.__signature__ = _py_signature(decl, module._sources)

    def _doc(self) -> str:
        src = self.module._sources
        lines = [self.signature]
        doc = _doc_comments(self.decl, src)
        if doc:
            lines += ["", doc]
        lines += [
            "",
            f"Call from Python: `{self.__name__}({', '.join(s.name for s in self.specs)})` "
            "returns an operation; run it with `.sync()`, or `.launch()` and then "
            "`.wait()` on the handle.",
        ]
        for s in self.specs:
            lines.append(f"  {s.name}: {self._describe_param(s)}")
        generics = [g.name.name for g in self.decl.generics]
        if generics:
            inferable = _inferable(self.decl, self.specs)
            names = ", ".join(generics)
            must = [g for g in generics if g not in inferable]
            lines.append(
                f"Generics: give them explicitly as `{self.__name__}[{names}](...)`"
                + (
                    f"; `{'`, `'.join(must)}` must be given, the arguments do not fix "
                    f"{'them' if len(must) > 1 else 'it'}."
                    if must
                    else ", or let the partitions and array shapes fix them."
                )
            )
        return "\n".join(lines)

    def _describe_param(self, s: ParamSpec) -> str:
        ty = _type_text(
            self.decl.params[[p.name.name for p in self.decl.params].index(s.name)].ty,
            self.module._sources,
        )
        want = DType.parse(s.elem or "")
        elem = f"{tile_dtype_name(want)} " if want is not None else ""
        rank = len(s.dims or ())
        if s.kind == "mut":
            return (
                f"`tilelang.partition(array, tile)` of a {elem}array of rank {rank}, written ({ty})"
            )
        if s.kind == "ref":
            return f"a {elem}array of rank {rank}, read only ({ty})"
        return f"a number ({ty})"

    def __repr__(self) -> str:
        return f"<tile kernel {self.signature}>"

    def __get__(self, obj: Any, objtype: Any = None) -> Kernel:
        # A descriptor that returns itself: `inspect.isroutine` then holds, so
        # `help(mod.add)` documents it as a function with its signature.
        return self

    def __getitem__(self, generics: Any) -> Kernel:
        values = generics if isinstance(generics, tuple) else (generics,)
        if len(values) > len(self.decl.generics):
            raise CallError(
                f"kernel `{self.__name__}` takes {len(self.decl.generics)} generic "
                f"argument{'s' if len(self.decl.generics) != 1 else ''} but {len(values)} were given",
                where=self.module._where(self.decl.name.span, f"`{self.signature}`"),
                help="give them in the order of the declaration",
            )
        return Kernel(self.module, self.decl, self.key, tuple(values))

    # -- the call --------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Operation:
        values = _match_args(self.__name__, "kernel", self.decl, args, kwargs, self.module)
        return _Call(self, values).build()


def _match_args(
    fname: str,
    what: str,
    decl: ast.FnDecl,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    module: Module,
) -> list[Any]:
    names = [p.name.name for p in decl.params]
    where = module._where(decl.name.span, f"`{fname}({', '.join(names)})` is declared here")
    if len(args) > len(names):
        raise CallError(
            f"{what} `{fname}` takes {len(names)} argument{'s' if len(names) != 1 else ''} "
            f"({', '.join(names)}) but {len(args)} were given",
            where=where,
        )
    out: dict[str, Any] = dict(zip(names, args, strict=False))
    for k, v in kwargs.items():
        if k not in names:
            raise CallError(
                f"{what} `{fname}` has no parameter `{k}`",
                where=where,
                help=f"its parameters are {', '.join(f'`{n}`' for n in names)}",
            )
        if k in out:
            raise CallError(f"argument `{k}` of {what} `{fname}` is given twice", where=where)
        out[k] = v
    missing = [n for n in names if n not in out]
    if missing:
        raise CallError(
            f"{what} `{fname}` is missing argument{'s' if len(missing) > 1 else ''} "
            f"{', '.join(f'`{n}`' for n in missing)}",
            where=where,
        )
    return [out[n] for n in names]


def _fix_dtype(ref: ArrayRef, name: str, want: DType) -> str:
    np_name = tile_dtype_name(want)
    if ref.library == "torch":
        return f"convert it first: `{name}.to(torch.{np_name})`"
    if ref.library == "cupy":
        return f"convert it first: `{name}.astype(cupy.{np_name})`"
    return f"convert it first: `{name}.astype(numpy.{np_name})`"


def _fix_contiguous(ref: ArrayRef, name: str, mutable: bool) -> str:
    fix = {"torch": f"`{name}.contiguous()`", "cupy": f"`cupy.ascontiguousarray({name})`"}.get(
        ref.library, f"`numpy.ascontiguousarray({name})`"
    )
    if mutable:
        return f"pass a contiguous copy ({fix}) and copy the results back into the view yourself"
    return f"pass a contiguous copy: {fix}"


def _inferable(decl: ast.FnDecl, specs: tuple[ParamSpec, ...]) -> set[str]:
    """The generics an argument names directly: a tile or array dimension
    (`[B]`), an element type (`Tensor<T, ..>`). Only these can be inferred."""
    type_names = {g.name.name for g in decl.generics if not g.is_const}
    out: set[str] = set()
    for spec in specs:
        if spec.kind in ("mut", "ref"):
            out |= {d.ident.name for d in spec.dims or () if isinstance(d, ast.Name)}
            if spec.elem in type_names:
                out.add(spec.elem)
    return out


class _Call:
    """One kernel call being checked and bound (becomes an `Operation`)."""

    def __init__(self, kernel: Kernel, values: list[Any]) -> None:
        self.k = kernel
        self.m = kernel.module
        self.values = values
        self.kname = kernel.__name__
        self.refs: list[tuple[ParamSpec, ArrayRef, bool]] = []  # (param, array, mutable)

    def where(self, spec: ParamSpec) -> str:
        return self.m._where(
            spec.span, f"`{spec.name}: {span_text(spec.span, self.m._sources)}` is declared here"
        )

    def fail(
        self,
        spec: ParamSpec,
        message: str,
        help: str | None = None,
        code: str | None = None,
        cls: type[CallError] | type[BorrowError] = CallError,
    ) -> NoReturn:
        raise cls(message, code=code, help=help, where=self.where(spec))

    def array(self, spec: ParamSpec, value: Any, mutable: bool) -> ArrayRef:
        try:
            ref = arrays.describe(value)
        except NotAnArray:
            want = DType.parse(spec.elem or "")
            np_name = tile_dtype_name(want) if want else "..."
            self.fail(
                spec,
                f"argument `{spec.name}` of kernel `{self.kname}` must be an array, "
                f"not a `{type(value).__name__}`",
                help=f"pass a NumPy array (`numpy.asarray({spec.name}, dtype=numpy.{np_name})`), "
                "a PyTorch tensor or a CuPy array",
            )
        except Unsupported as e:
            self.fail(
                spec,
                f"argument `{spec.name}` of kernel `{self.kname}`: {e.why}",
                help=e.help.replace("`t.", f"`{spec.name}."),
            )
        what = f"argument `{spec.name}` of kernel `{self.kname}`"
        if ref.dtype is None:
            self.fail(
                spec,
                f"{what} is {ref.describe()}, an element type Tile does not have",
                code=lcodes.DTYPE_MISMATCH,
                help="convert it to one Tile has (float32, float16, int32, uint8, bool, ...)",
            )
        want = DType.parse(spec.elem or "")
        if want is not None:
            storage = DType.F32 if want is DType.BF16 else want
            # bf16 comes as float32 arrays (rounded by the kernel) or, on the
            # GPU, as 2-byte torch.bfloat16 tensors used in place
            bf16_memory = want is DType.BF16 and ref.dtype is DType.BF16 and ref.is_cuda
            if ref.dtype is not storage and not bf16_memory:
                extra = (
                    " (Tile takes bf16 values in float32 arrays, or torch.bfloat16 tensors on the GPU)"
                    if want is DType.BF16
                    else ""
                )
                self.fail(
                    spec,
                    f"{what} must hold `{want.value}`{extra}, but it is {ref.describe()}",
                    code=lcodes.DTYPE_MISMATCH,
                    help=_fix_dtype(ref, spec.name, storage),
                )
        rank = len(spec.dims or ())
        if spec.dims is not None and rank != len(ref.shape):
            self.fail(
                spec,
                f"{what} must have {rank} dimension{'s' if rank != 1 else ''}, "
                f"but it is {ref.describe()}",
                code=lcodes.RANK_MISMATCH,
                help="reshape it to the parameter's rank",
            )
        if not ref.contiguous:
            self.fail(
                spec,
                f"{what} is not contiguous (strides {list(ref.strides)} in elements, "
                f"shape {list(ref.shape)}): Tile reads a tensor as one row-major block",
                help=_fix_contiguous(ref, spec.name, mutable),
            )
        if mutable and ref.readonly:
            self.fail(
                spec,
                f"{what} is read-only, but the kernel writes it",
                help=f"pass a writeable array (`{spec.name}.copy()`)",
            )
        self.refs.append((spec, ref, mutable))
        return ref

    def check_tile(self, spec: ParamSpec, tile: tuple[int, ...]) -> None:
        """The backend's limits on tile shapes, which the type checker applies
        to Tile callers (E0212, E0213): they hold on every engine alike."""
        for d in tile:
            if d & (d - 1):
                up = 1 << (d - 1).bit_length()
                self.fail(
                    spec,
                    f"tile dimension {d} of `{spec.name}` is not a power of two "
                    "(the GPU backend requires every tile dimension to be one)",
                    code=tcodes.TILE_DIM_NOT_POW2,
                    help=f"use {up} (or {up // 2}) and let the edge tiles be partial",
                )
        n = 1
        for d in tile:
            n *= d
        if n > MAX_TILE_ELEMENTS:
            self.fail(
                spec,
                f"a tile of shape {list(tile)} has {n} elements, more than the "
                f"{MAX_TILE_ELEMENTS} a tile block may hold",
                code=tcodes.TILE_TOO_LARGE,
                help="use smaller tiles",
            )

    def scalar(self, spec: ParamSpec, value: Any, dt: DType | None) -> Any:
        what = f"argument `{spec.name}` of kernel `{self.kname}`"
        if isinstance(value, np.ndarray) and value.ndim == 0:
            value = value[()]
        if isinstance(value, Partition):
            self.fail(spec, f"{what} is a number (`{spec.elem}`), not a partition")
        if not isinstance(value, (bool, int, float, np.generic)):
            try:
                ref = arrays.describe(value)
                got = ref.describe()
            except (NotAnArray, Unsupported):
                got = f"a `{type(value).__name__}`"
            self.fail(
                spec,
                f"{what} is a number (`{spec.elem}`), but it is {got}",
                help="pass a Python number",
            )
        if dt is None:
            return value
        is_bool = isinstance(value, (bool, np.bool_))
        if dt is DType.BOOL:
            if not is_bool:
                self.fail(
                    spec, f"{what} is a `bool`, but it is {value!r}", help="pass `True` or `False`"
                )
            return bool(value)
        if is_bool:
            self.fail(
                spec,
                f"{what} is a `{dt.value}`, not a `bool`",
                help=f"pass {'1 or 0' if dt.is_int else '1.0 or 0.0'}",
            )
        if dt.is_int:
            if isinstance(value, (float, np.floating)):
                self.fail(
                    spec,
                    f"{what} is an integer (`{dt.value}`), but it is {value!r}",
                    help=f"pass an int (`int({spec.name})`)",
                )
            info = np.iinfo(dt.np_dtype)
            if not info.min <= int(value) <= info.max:
                self.fail(
                    spec,
                    f"{what} is a `{dt.value}`, and {int(value)} does not fit in it",
                    help=f"`{dt.value}` holds {info.min} to {info.max}",
                )
            return int(value)
        return float(value)

    def build(self) -> Operation:
        k = self.k
        decl = k.decl
        type_names = {g.name.name for g in decl.generics if not g.is_const}
        tensors: list[Any] = []
        for spec, value in zip(k.specs, self.values, strict=True):
            if spec.kind == "mut":
                if not isinstance(value, Partition):
                    try:
                        arrays.describe(value)
                        is_array = True
                    except (NotAnArray, Unsupported):
                        is_array = False
                    if is_array:
                        tile = ", ".join(
                            span_text(d.span, self.m._sources) if d is not None else "?"
                            for d in spec.dims or ()
                        )
                        self.fail(
                            spec,
                            f"mutable argument `{spec.name}` of kernel `{self.kname}` must "
                            "be a partition, so that each block writes only its own tile",
                            code=ocodes.MUT_TENSOR_WITHOUT_PARTITION,
                            cls=BorrowError,
                            help=f"pass `tilelang.partition({spec.name}, [{tile}])` "
                            "with the tile shape the kernel should use",
                        )
                    self.fail(
                        spec,
                        f"argument `{spec.name}` of kernel `{self.kname}` must be "
                        f"`tilelang.partition(array, tile)`, not a `{type(value).__name__}`",
                    )
                ref = self.array(spec, value.array, True)
                if len(value.tile) != len(ref.shape):
                    self.fail(
                        spec,
                        f"the tile shape {list(value.tile)} of `{spec.name}` has "
                        f"{len(value.tile)} dimension{'s' if len(value.tile) != 1 else ''}, "
                        f"but the array has {len(ref.shape)}",
                        code=lcodes.BAD_PARTITION,
                        help="give one tile size per dimension",
                    )
                self.check_tile(spec, value.tile)
                tensors.append((spec, ref, value.tile))
            elif spec.kind == "ref":
                if isinstance(value, Partition):
                    self.fail(
                        spec,
                        f"argument `{spec.name}` of kernel `{self.kname}` is read only "
                        "(`&`): pass the array itself, not a partition",
                        help=f"pass `{spec.name}`",
                    )
                tensors.append((spec, self.array(spec, value, False), None))
            elif spec.kind == "scalar":
                dt = DType.parse(spec.elem or "") if spec.elem not in type_names else None
                tensors.append((spec, self.scalar(spec, value, dt), None))
            else:
                tensors.append((spec, value, None))

        # One engine per call: the arrays' address space decides.
        spaces: dict[str, tuple[ParamSpec, ArrayRef]] = {}
        for spec, ref, _ in self.refs:
            spaces.setdefault(ref.space, (spec, ref))
        if len(spaces) > 1:
            (s1, r1), (s2, r2) = list(spaces.values())[:2]
            self.fail(
                s2,
                f"the arrays of one call must be on one device, but `{s1.name}` is "
                f"{r1.describe()} and `{s2.name}` is {r2.describe()}",
                help="move them to one device first (`.cuda()`/`cupy.asarray(..)`, or "
                "`.cpu().numpy()`)",
            )
        space = next(iter(spaces), "cpu")
        engine = space if space != "cpu" else self.m._engine_for_host()
        runtime = self.m._runtime(engine)
        device: Any = runtime.device  # a CudaDevice when `engine` is CUDA

        # Bind with the caller's memory (no copies): host arrays as CPU tensors,
        # CUDA arrays wrapped in place.
        launch_args: list[LaunchArg] = []
        for spec, v, tile in tensors:
            if isinstance(v, ArrayRef):
                dt = v.dtype
                want = DType.parse(spec.elem or "")
                if want is DType.BF16:
                    dt = DType.BF16
                assert dt is not None
                if v.is_cuda and v.dtype is DType.BF16:
                    # 2-byte bfloat16 memory in place (torch.bfloat16 on the GPU)
                    storage = device.wrap_external(v.ptr, v.shape, np.uint16, v.nbytes, bf16=True)
                    t = Tensor(dt, v.shape, storage, device)
                elif v.is_cuda:
                    storage = device.wrap_external(v.ptr, v.shape, dt.np_dtype, v.nbytes)
                    t = Tensor(dt, v.shape, storage, device)
                else:
                    t = Tensor(dt, v.shape, v.host, _device("cpu"))
                launch_args.append(
                    LaunchArg(_RtPartition(t, tile) if tile is not None else t, spec.span)
                )
            else:
                launch_args.append(LaunchArg(v, spec.span))

        generics = self.generics(type_names)
        ev = self.m._evaluator()
        call_span = decl.name.span
        try:
            bound = bind_launch(decl, launch_args, call_span, generics, ev._eval_dim)
            from tilelang.runtime.host import FnRef

            ev.check_deferred(call_span, FnRef(decl, k.key), bound)
        except TileError as e:
            err = CallError.from_tile_error(e, self.m._sources)
            # The runtime's label describes the argument, which has no source
            # here; point at the parameter's declaration instead.
            span = e.diagnostics[0].primary_span if e.diagnostics else None
            param = next((sp for sp in k.specs if sp.span == span), None)
            if param is not None:
                err.where = self.where(param)
            raise err from None

        self.check_instance(runtime, bound)

        # Overlapping memory within the call (E0303), checked now; conflicts
        # with launches in flight are checked when the operation starts.
        regions = [(Region(r.ptr, r.nbytes, s.name), mut) for s, r, mut in self.refs]
        try:
            BorrowTracker().launch(
                self.kname,
                [r for r, m in regions if m],
                [r for r, m in regions if not m],
                sync=True,
            )
        except TileError as e:
            raise BorrowError.from_tile_error(e, self.m._sources) from None
        return Operation(k, bound, runtime, engine, space, list(self.refs), regions)

    def check_instance(self, runtime: Runtime, bound: BoundLaunch) -> None:
        """Lower this instantiation now (cached per instantiation) and apply the
        tile limits to every tile it makes: the type checker does this for a
        Tile caller's generics (E0212/E0213), which Python callers bypass."""
        from tilelang.ir import nodes as ir

        op = _RtOperation(self.k.decl, self.k.key, bound, self.k.decl.name.span, runtime)
        try:
            kir, _ = runtime._prepared(op)
        except TileError as e:
            raise CallError.from_tile_error(e, self.m._sources) from None
        if id(kir) in self.m._checked:  # the runtime caches `kir`, so its id is stable
            return
        gen = ", ".join(f"{k} = {v}" for k, v in bound.instantiation.items())
        for node in ir.walk(kir.body):
            for v in ir.op_results(node):
                shape = v.type.shape
                bad = next((d for d in shape if d & (d - 1)), None)
                n = 1
                for d in shape:
                    n *= d
                if bad is None and n <= MAX_TILE_ELEMENTS:
                    continue
                where = (
                    self.m._where(node.span, "this tile") if getattr(node, "span", None) else None
                )
                if bad is not None:
                    raise CallError(
                        f"with {gen}, kernel `{self.kname}` makes a tile of shape {list(shape)}: "
                        f"dimension {bad} is not a power of two (the GPU backend requires "
                        "every tile dimension to be one)",
                        code=tcodes.TILE_DIM_NOT_POW2,
                        where=where,
                        help="choose generics that make every tile dimension a power of two",
                    )
                raise CallError(
                    f"with {gen}, kernel `{self.kname}` makes a tile of shape {list(shape)} "
                    f"with {n} elements, more than the {MAX_TILE_ELEMENTS} a tile block "
                    "may hold",
                    code=tcodes.TILE_TOO_LARGE,
                    where=where,
                    help="choose smaller generics",
                )
        self.m._checked.add(id(kir))

    def generics(self, type_names: set[str]) -> dict[str, tuple[Any, Span]]:
        decl = self.k.decl
        out: dict[str, tuple[Any, Span]] = {}
        for g, v in zip(decl.generics, self.k.explicit, strict=False):
            if g.is_const:
                if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                    raise CallError(
                        f"const generic `{g.name.name}` of kernel `{self.kname}` takes an "
                        f"integer, not {v!r}",
                        where=self.m._where(g.span, "declared here"),
                    )
                out[g.name.name] = (int(v), g.span)
            else:
                dt = (
                    v
                    if isinstance(v, DType)
                    else DType.parse(str(v))
                    if isinstance(v, str)
                    else None
                )
                if dt is None and isinstance(v, (type, np.dtype)):
                    try:
                        dt = dtype_of_array(np.empty(0, v))
                    except TypeError:
                        dt = None
                if dt is None:
                    raise CallError(
                        f"type parameter `{g.name.name}` of kernel `{self.kname}` takes an "
                        f'element type ("f32", numpy.float16, ...), not {v!r}',
                        where=self.m._where(g.span, "declared here"),
                    )
                out[g.name.name] = (dt, g.span)
        # Every generic needs a value: from the explicit list, or from an
        # argument that names it directly (a tile or array dimension, an
        # element type). The type checker asks the same of Tile callers (E0215).
        bindable = set(out) | _inferable(decl, self.k.specs)
        missing = [g for g in decl.generics if g.name.name not in bindable]
        if missing:
            names = ", ".join(g.name.name for g in decl.generics)
            raise CallError(
                f"kernel `{self.kname}` cannot infer {', '.join(f'`{g.name.name}`' for g in missing)} "
                "from its arguments",
                where=self.m._where(missing[0].span, "declared here"),
                help=f"give the generics explicitly, in order: `{self.kname}[{names}](...)`",
            )
        return out


# ---------------------------------------------------------------- operations
class Operation:
    """A checked kernel call that has not run. `.sync()` runs it and waits;
    `.launch()` starts it and returns a `Handle`. It may be run again."""

    def __init__(
        self,
        kernel: Kernel,
        bound: BoundLaunch,
        runtime: Runtime,
        engine: str,
        space: str,
        refs: list[tuple[ParamSpec, ArrayRef, bool]],
        regions: list[tuple[Region, bool]],
    ) -> None:
        self.kernel = kernel
        self.grid = bound.grid
        self.generics = dict(bound.instantiation)
        self._bound = bound
        self._runtime = runtime
        self._engine = engine
        self._space = space
        self._refs = refs
        self._regions = regions
        self._runs = 0

    def __del__(self) -> None:
        # A kernel call only builds the operation, as in Tile; one that is
        # dropped without running is almost always a forgotten `.sync()`.
        if getattr(self, "_runs", 1) == 0:
            with contextlib.suppress(Exception):  # nothing may be raised from a finaliser
                warnings.warn(
                    f"an operation of kernel `{self.kernel.__name__}` was never run: "
                    "call `.sync()` or `.launch()` on it",
                    RuntimeWarning,
                    stacklevel=2,
                )

    def __repr__(self) -> str:
        gen = ", ".join(f"{k}={v}" for k, v in self.generics.items())
        return f"<operation {self.kernel.__name__}[{gen}] grid={list(self.grid)} on {self._engine}>"

    def sync(self) -> None:
        """Run the kernel and wait for it (on the GPU: for the stream it ran on)."""
        self.launch().wait()

    def launch(self) -> Handle:
        """Start the kernel; its arrays stay borrowed until `Handle.wait()`."""
        self._runs += 1  # tried, at least: no "never run" warning
        tracker = _tracker(self._space)
        writes = [r for r, m in self._regions if m]
        reads = [r for r, m in self._regions if not m]
        with _LOCK:
            self._explain_conflict()
            try:
                token = tracker.launch(self.kernel.__name__, writes, reads)
            except TileError as e:
                raise BorrowError.from_tile_error(e, self.kernel.module._sources) from None
            _PENDING[(self._space, token)] = self
        try:
            run = self._start()
        except BaseException:
            with _LOCK:
                tracker.wait(token)
                _PENDING.pop((self._space, token), None)
            raise
        _bump_torch_versions(self._refs)
        return Handle(self, token, tracker, *run)

    def _explain_conflict(self) -> None:
        """The tracker's verdict, worded for Python: which argument, which
        pending launch, and as which of its parameters."""
        name = self.kernel.__name__
        for (space, _), other in _PENDING.items():
            if space != self._space:
                continue
            for new, new_mut in self._regions:
                for old, old_mut in other._regions:
                    if not ((new_mut or old_mut) and new.overlaps(old)):
                        continue
                    pending = f"a pending launch of `{other.kernel.__name__}`"
                    if new_mut and old_mut:
                        code = ocodes.CONCURRENT_WRITES
                        msg = (
                            f"argument `{new.name}` of kernel `{name}` writes memory that {pending} "
                            f"also writes (as `{old.name}`): two launches in flight would race"
                        )
                    else:
                        code = ocodes.USE_WHILE_IN_FLIGHT
                        msg = (
                            f"argument `{new.name}` of kernel `{name}` "
                            f"{'writes' if new_mut else 'reads'} memory that {pending} may still "
                            f"be {'writing' if old_mut else 'reading'} (as `{old.name}`)"
                        )
                    raise BorrowError(
                        msg,
                        code=code,
                        where=self.kernel.module._where(
                            self.kernel.decl.name.span, f"`{self.kernel.signature}`"
                        ),
                        help="call `.wait()` on the pending launch's handle first",
                    )

    def _start(self) -> tuple[Any, list[tuple[np.ndarray, Tensor]]]:
        """Enqueue the kernel; (the stream to wait for, host arrays to copy results into)."""
        rt = self._runtime
        dev: Any = rt.device
        bound = self._bound
        writeback: list[tuple[np.ndarray, Tensor]] = []
        args = list(bound.args)
        if self._engine != "cpu":
            # Another library (or a second GPU's device) may have switched the
            # thread's current context since this device last ran.
            dev.ctx.make_current()
        copies = self._space == "cpu" and self._engine != "cpu"  # NumPy arrays on the GPU
        for i, a in enumerate(args):
            t = a.tensor if isinstance(a, _RtPartition) else a
            if not isinstance(t, Tensor):
                continue
            # bf16 arrays on the CPU are copied too: the interpreter relies on
            # bf16-rounded storage, and the caller's float32 values may not be.
            if not (copies or (self._space == "cpu" and t.dtype is DType.BF16)):
                continue
            host = cast(np.ndarray, t.storage)  # on the CPU engine: the caller's array
            fresh = Tensor.from_numpy(host, t.dtype, dev)  # uploaded now: the values of this run
            if isinstance(a, _RtPartition):
                args[i] = _RtPartition(fresh, a.tile)
                writeback.append((host, fresh))
            else:
                args[i] = fresh
        op = _RtOperation(
            self.kernel.decl,
            self.kernel.key,
            BoundLaunch(bound.instantiation, bound.grid, args),
            self.kernel.decl.name.span,
            rt,
        )
        if self._space != "cpu":
            # The stream the caller's library has current when the operation
            # starts (not when it was built), as a Tile launch would.
            first = next(r for _, r, _ in self._refs if r.is_cuda)
            stream = dev.foreign_stream(arrays.current_stream(first))
        elif self._engine == "cpu":
            stream = None
        else:
            stream = dev.new_stream()
        try:
            rt.execute(op, stream=stream)
        except TileError as e:
            raise ExecutionError.from_tile_error(e, self.kernel.module._sources) from None
        return stream, writeback


def _bump_torch_versions(refs: list[tuple[ParamSpec, ArrayRef, bool]]) -> None:
    """A kernel writes `&mut` PyTorch tensors behind autograd's back; bumping
    their version counters lets autograd refuse a backward pass that would
    read values the kernel overwrote, as it does for PyTorch's own in-place ops."""
    torch = sys.modules.get("torch")
    bump = getattr(
        getattr(getattr(torch, "autograd", None), "graph", None), "increment_version", None
    )
    if bump is None:
        return
    for _, ref, mutable in refs:
        if mutable and ref.library == "torch":
            with contextlib.suppress(Exception):
                bump(ref.obj)


class Handle:
    """A started operation. `.wait()` waits for it, copies results back where
    the engine needed copies, and ends its borrows; waiting twice is fine."""

    def __init__(
        self,
        op: Operation,
        token: int,
        tracker: BorrowTracker,
        stream: Any,
        writeback: list[tuple[np.ndarray, Tensor]],
    ) -> None:
        self.operation = op
        self._token = token
        self._tracker = tracker
        self._stream = stream
        self._writeback = writeback
        self._keep = [
            r.obj for _, r, _ in op._refs
        ]  # the caller's arrays live while we may use them
        self.done = False

    def wait(self) -> None:
        if self.done:
            return
        op = self.operation
        dev: Any = op._runtime.device
        try:
            if op._engine != "cpu":
                dev.ctx.make_current()
            if op._space != "cpu":
                dev.sync_foreign(self._stream)
            elif op._engine != "cpu":
                dev.sync(self._stream)
            for host, t in self._writeback:
                host[...] = t.numpy()
        except TileError as e:
            raise ExecutionError.from_tile_error(e, op.kernel.module._sources) from None
        finally:
            self.done = True
            with _LOCK:
                self._tracker.wait(self._token)
                _PENDING.pop((self.operation._space, self._token), None)
            self._keep = []

    def __repr__(self) -> str:
        state = "done" if self.done else "running"
        return f"<handle of {self.operation.kernel.__name__} ({state})>"

    def __del__(self) -> None:
        if getattr(self, "done", True):
            return
        try:
            warnings.warn(
                f"a handle of kernel `{self.operation.kernel.__name__}` was dropped "
                "without `.wait()`; waiting for it now",
                ResourceWarning,
                stacklevel=2,
            )
            self.wait()
        except Exception:  # nothing may be raised from a finaliser
            pass


# ---------------------------------------------------------------- host functions
class HostFunction:
    """A host `fn` of a loaded module. Calling it runs it at once on the
    module's engine: array arguments are copied in (a `&mut` one copied back
    afterwards), tensor results come back as new NumPy arrays."""

    def __init__(self, module: Module, decl: ast.FnDecl, key: str) -> None:
        self.module = module
        self.decl = decl
        self.key = key
        self.__name__ = decl.name.name
        self.__qualname__ = decl.name.name
        self.signature = _header(decl, module._sources)
        doc = _doc_comments(decl, module._sources)
        self.__doc__ = self.signature + (f"\n\n{doc}" if doc else "")
        self.__signature__ = _py_signature(decl, module._sources)

    def __repr__(self) -> str:
        return f"<tile function {self.signature}>"

    def __get__(self, obj: Any, objtype: Any = None) -> HostFunction:
        return self  # see `Kernel.__get__`

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from tilelang.runtime.host import FnRef

        m = self.module
        values = _match_args(self.__name__, "function", self.decl, args, kwargs, m)
        ev = m._evaluator()
        dev = ev.runtime.device
        converted: list[Any] = []
        writeback: list[tuple[np.ndarray, Tensor]] = []
        for p, v in zip(self.decl.params, values, strict=True):
            ty = p.ty
            mutable = isinstance(ty, ast.RefType) and ty.mutable
            inner = ty.inner if isinstance(ty, ast.RefType) else ty
            where = m._where(p.span, f"`{span_text(p.span, m._sources)}` is declared here")
            if isinstance(inner, ast.NamedType) and inner.name.name == "Tensor":
                t = self._tensor(p.name.name, inner, v, where, dev)
                if mutable:
                    writeback.append((arrays.describe(v).host, t))  # type: ignore[arg-type]
                converted.append(t)
            else:
                converted.append(v.item() if isinstance(v, np.ndarray) and v.ndim == 0 else v)
        try:
            result = ev.call_fn(FnRef(self.decl, self.key), converted, self.decl.span)
        except TileError as e:
            raise ExecutionError.from_tile_error(e, m._sources) from None
        for host, t in writeback:
            host[...] = t.numpy()
        return _from_value(result)

    def _tensor(self, name: str, ty: ast.NamedType, value: Any, where: str, dev: Any) -> Tensor:
        what = f"argument `{name}` of function `{self.__name__}`"
        try:
            ref = arrays.describe(value)
        except Unsupported as e:  # an array, but one this API cannot use (CPU bf16, ...)
            raise CallError(f"{what}: {e.why}", where=where, help=e.help.replace("`t.", f"`{name}.")) from None
        except NotAnArray:
            raise CallError(
                f"{what} must be an array, not a `{type(value).__name__}`",
                where=where,
                help="pass a NumPy array",
            ) from None
        if ref.is_cuda or ref.host is None:
            raise CallError(
                f"{what} is {ref.describe()}, but host functions take host arrays",
                where=where,
                help=f"pass `{name}.cpu().numpy()` (host functions run on "
                "the module's engine and copy their arguments)",
            )
        want = None
        if ty.args and isinstance(ty.args[0], ast.NamedType):
            want = DType.parse(ty.args[0].name.name)
        if want is not None and ref.dtype is not (DType.F32 if want is DType.BF16 else want):
            raise CallError(
                f"{what} must hold `{want.value}`, but it is {ref.describe()}",
                code=lcodes.DTYPE_MISMATCH,
                where=where,
                help=_fix_dtype(ref, name, DType.F32 if want is DType.BF16 else want),
            )
        if (
            len(ty.args) > 1
            and isinstance(ty.args[1], ast.ShapeType)
            and len(ty.args[1].dims) != len(ref.shape)
        ):
            rank = len(ty.args[1].dims)
            raise CallError(
                f"{what} must have {rank} dimension{'s' if rank != 1 else ''}, but it is "
                f"{ref.describe()}",
                code=lcodes.RANK_MISMATCH,
                where=where,
                help="reshape it to the parameter's rank",
            )
        dt = want or ref.dtype
        if dt is None:
            raise CallError(
                f"{what} is {ref.describe()}, an element type Tile does not have", where=where
            )
        return Tensor.from_numpy(np.array(ref.host, copy=True), dt, dev)


def _from_value(v: Any) -> Any:
    if isinstance(v, Tensor):
        return np.array(v.numpy(), copy=True)
    if isinstance(v, tuple):
        return None if v == () else tuple(_from_value(x) for x in v)
    if isinstance(v, np.generic):
        return v
    return v
