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

Ownership at run time (BRIEF §6; the launches in flight are kept per
process in `engines._PENDING`, with the same codes as the static checker):
- a `&mut` parameter takes `tilelang.partition(array, tile)`, never a bare
  array (E0301);
- one call may not pass overlapping memory twice when one of them is
  `&mut` (E0303), checked when the call is made;
- a started operation holds its borrows until it finishes (`.sync()`
  returns, or its handle's `.wait()`): until then another operation may not
  write memory it uses, nor use memory it writes (E0305, E0309); a call of
  a host function holds its arrays' borrows in the same way while it runs
  (`hostfn._RunningCall`: another thread's launch or call is checked against it).
Python code that reads or writes such an array directly is not seen; see
the README section "Python API" for what that means on each engine.

Invariant: every failure is a `tilelang.TileError` (`CallError`,
`BorrowError`, `ExecutionError`) raised before any kernel work starts,
except `ExecutionError`, which the kernel itself raised.
"""

from __future__ import annotations

from typing import IO, Any, cast

from tilelang.api.engines import (  # noqa: F401  (re-exported: tests patch `_DEVICES`)
    _DEVICES,
    _LOCK,
    _PENDING,
    _device,
    _resolve_device,
    _Stdout,
    gpu_available,
    in_flight,
)
from tilelang.api.errors import locate
from tilelang.api.hostfn import HostFunction
from tilelang.api.kernel import Kernel
from tilelang.api.operation import Handle, Operation  # noqa: F401  (re-exported)
from tilelang.api.partition import Partition, partition  # noqa: F401  (re-exported)
from tilelang.api.signature import _works_on_tiles
from tilelang.runtime.launch import Runtime
from tilelang.source import SourceMap, Span
from tilelang.syntax import ast


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
        # kernels and host functions the root module imports (`use std::attention::flash_attention;`,
        # `use stats::zscore;`) are callable under their imported name, like its own (round 22: a host
        # function of the user's own module was not, where a kernel of it was)
        root_info = program.root
        for local, sym in root_info.scope.items():
            if not sym.qualname or local in root_info.own:
                continue
            info = program.kernels.get(sym.qualname)
            if info is not None and local not in self.kernels:
                self.kernels[local] = Kernel(self, info.decl, sym.qualname)
            fn = program.functions.get(sym.qualname)
            if fn is not None and local not in self.functions and not _works_on_tiles(fn.decl):
                self.functions[local] = HostFunction(self, fn.decl, sym.qualname)
        # Plain attributes too, so `mod.add` is an ordinary lookup (calls of a
        # kernel in a loop pay for it); names the class already uses are left
        # to `__getattr__`'s order (and `mod.kernels["on"]`).
        taken = set(dir(type(self))) | set(self.__dict__)
        for table in (self.kernels, self.functions):
            for name, value in table.items():
                if name not in taken:
                    self.__dict__[name] = value
                elif not name.startswith("__"):
                    # round 15: `mod.device(..)` of a kernel named `device` was "'str' object is not
                    # callable", with nothing to say where the kernel went
                    import warnings

                    what = "kernel" if table is self.kernels else "host function"
                    warnings.warn(
                        f"module `{self.name}`: the {what} `{name}` has the name of the module's own "
                        f"`{name}`, which `mod.{name}` gives; call it as "
                        f"`mod.{'kernels' if table is self.kernels else 'functions'}[\"{name}\"]`",
                        stacklevel=4,
                    )

        self.__doc__ = self._listing()  # `help(mod)`: what it holds, not only the class's words

    def _listing(self) -> str:
        """`help(mod)`: the module's kernels and host functions, each with its signature and the first line
        of its doc comment (was the `Module` class's doc alone: nothing of the program)."""
        lines = [f"The Tile module `{self.name}` (NumPy arrays and host functions on the {self.device.upper()})."]
        for title, table in (("Kernels (a call returns an operation: `.sync()` runs it)", self.kernels),
                             ("Host functions (a call runs it)", self.functions)):
            if table:
                lines += ["", f"{title}:"]
            for name in sorted(table):
                f = table[name]
                lines.append(f"  mod.{name}: {f.signature}" if name != f.__name__ else f"  {f.signature}")
                first = (f.__doc__ or "").split("\n\n", 2)
                if len(first) > 1 and first[1].strip() and not first[1].startswith("Call from Python"):
                    lines.append(f"      {first[1].splitlines()[0]}")
        if not self.kernels and not self.functions:
            lines.append("It defines no kernel and no host function.")
        lines += ["", "`help(mod.NAME)` shows how to call one; `mod.kernels` and `mod.functions` list them."]
        return "\n".join(lines)

    # -- attribute access ---------------------------------------------------------
    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        if name in d.get("kernels", {}):
            return d["kernels"][name]
        if name in d.get("functions", {}):
            return d["functions"][name]
        if name.startswith("__"):
            raise AttributeError(name)
        import difflib

        from tilelang.api.errors import NameLookupError
        from tilelang.diagnostics.codes import api as acodes

        known = sorted([*d.get("kernels", {}), *d.get("functions", {})])
        close = difflib.get_close_matches(name, known, n=1)
        raise NameLookupError(
            f"module `{d.get('name', '?')}` has no kernel or host function `{name}`",
            code=acodes.NO_SUCH_NAME,
            help=f"did you mean `{close[0]}`?" if close
            else f"it has: {', '.join(f'`{k}`' for k in known)}" if known
            else "it defines no kernel and no host function",
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
