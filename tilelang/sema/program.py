"""`Program`: the output of the semantic checker, which later stages read.

`check_program` (in `check.py`) returns one `Program` for the root module and
every module it `use`s. The ownership checker, the lowering, the host runtime,
the LSP and the REPL read it; nothing writes to it after `check_program`.

What it holds (all side tables are keyed by AST node; nodes hash by identity):

- `root`: the root `ModuleInfo`; `modules`: every loaded module by name
  (`""` is the root, `"std::nn"` a stdlib module, `"helpers"` for
  `use "helpers.tile";`).
- `items`: every item by qualified name (`"add"`, `"std::nn::softmax"`) ->
  its `Symbol`. Root items are unqualified.
- `kernels`, `functions`: qualified name -> `FnInfo` (declaration, resolved
  parameter types with const generics left symbolic, return type, generic
  parameter names, `hints`, and the contexts the body was checked in).
- `consts`: qualified name -> evaluated value (`int`, `float` or `bool`).
- `types`: expression node -> `Type` (`tilelang.sema.types`). Every expression
  checked has an entry. Untyped literals are settled to their contextual type
  (`t * 2.0` on an f16 tile records `2.0: f16`); ones no context fixed default
  to `i32` / `f32`. A `Name` records the type *at that use*: for an immutable
  `let` bound to a literal it may differ from the binding's type (convert it).
  Inside a generic device function, types are symbolic in its const generics
  and type params (`TypeParam`): use `subst_type` with the call's
  instantiation.
- `symbols`: `Name`, `Path`, `Call`, `MethodCall`, `NamePat`, `Param`,
  `GenericParam`, `FnDecl`, `ConstDecl` -> `Symbol`. A `Call`'s symbol is the
  function, kernel or builtin it calls (the callee `Name`/`Path` maps to the
  same symbol); a `MethodCall`'s symbol is a `METHOD` symbol whose
  `signature` is the table entry in `tilelang.intrinsics.signatures`. Each
  binding (`let`, parameter, `for` variable) is one `Symbol` object: uses of
  the same variable map to the same object (identity = the variable).
- `dims`: integer expression node -> `Dim` for every expression whose value
  is known at compile time (possibly symbolic in const generics).
- `instantiations`: `Call` node -> generic assignment. For a kernel call on the
  host: const generic name -> `int` (only those known statically; the rest are
  in `deferred`). For a call of a generic device (or host) function: name ->
  `Dim` (possibly symbolic in the caller's generics) or `DType` for a type
  parameter.
- `deferred`: kernel `Call` node -> const generic name -> the host expression
  whose run-time value gives it, when it is not a compile-time constant: a
  partition's tile-shape element, a turbofish argument, or a tensor argument
  (`&x`) whose run-time shape gives it (`x: &Tensor<f32, [N]>` with `x` from
  `load_npy`).
- `shape_sources`: kernel `Call` -> const generic name -> the argument node
  that fixed it (for launch-time messages).
- `device_fns` / `host_fns`: qualified names of functions checked as device
  code (called from a kernel) / host code. A function in both sets was
  checked twice; the side tables hold its host check (the later one), which
  differs from the device check only where an operation's type depends on
  the context (`zeros` is a tensor on the host, a tile in a kernel).

Type decisions worth knowing: `load_npy` gives `TensorT(None, None)` (dtype
and rank unknown; the runtime checks them at launch); a reduction removes
its axis and a reduction to rank 0 is a scalar; `t.shape()` is a `ShapeT`
whose elements (`s[0]`) are `i32`; const generics are `i32`, untyped in
kernels (they take the type of what they meet).

Query API: `type_of(expr)`, `symbol_of(node)`, `dim_of(expr)`,
`instantiation_of(call)`, `deferred_of(call)`, `kernel(name)`,
`function(name)`, `fn_info(symbol)`, `callee_of(call)`; by name across
modules (a qualified name, else the root's item, else any module's):
`find_fn(name, kernel=)`, `find_const(name)`; `all_modules()`.

`Program.unchecked(module)` is the program of a module the type checker has
not seen: every table empty, so every query answers "unknown". Stages that can
run without types (the host evaluator and the ownership checker, in their own
tests) take it instead of probing for the fields a `Program` has.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from tilelang.dtypes import DType
from tilelang.intrinsics.signatures import Signature
from tilelang.sema.types import Dim, Type
from tilelang.source import DUMMY_SPAN, Span
from tilelang.syntax import ast


class SymbolKind(Enum):
    LOCAL = "local"  # a `let` or `for` binding
    PARAM = "param"  # a function or kernel parameter
    CONST = "const"  # a module constant
    GENERIC = "generic"  # a const generic parameter (`const B: i32`)
    TYPE_PARAM = "type-param"  # a type parameter `T`
    FN = "fn"
    KERNEL = "kernel"
    BUILTIN = "builtin"  # a built-in function (signatures.FUNCTIONS)
    METHOD = "method-builtin"  # a built-in method (signatures.METHODS)
    MODULE = "module"  # a module imported by `use std::nn;`


@dataclass(eq=False, slots=True)
class Symbol:
    """What a name refers to. Hashes by identity: one object per binding."""

    kind: SymbolKind
    name: str
    span: Span = DUMMY_SPAN  # the declaring identifier (DUMMY for builtins)
    decl: Any = None  # the declaring node (NamePat, Param, FnDecl, ...), if any
    ty: Type | None = None  # the variable's / constant's / function's type
    mutable: bool = False  # `let mut`, `mut` parameter
    qualname: str | None = None  # items: `std::nn::softmax`
    signature: Signature | None = None  # BUILTIN / METHOD
    value: Any = None  # CONST: the value; MODULE: the module name
    dim: Dim | None = None  # compile-time value of an integer binding, if known

    def __repr__(self) -> str:
        return f"Symbol({self.kind.value} {self.qualname or self.name})"


@dataclass(eq=False, slots=True)
class FnInfo:
    decl: ast.FnDecl
    qualname: str
    module: str
    is_kernel: bool
    const_generics: tuple[str, ...]  # in declaration order
    type_params: tuple[str, ...]
    param_names: tuple[str, ...]
    param_types: tuple[Type, ...]  # symbolic in the generics
    ret: Type
    hints: dict[str, Any] = field(default_factory=dict)
    contexts: set[str] = field(default_factory=set)  # {"kernel", "host"}: checked as
    symbol: Symbol | None = None

    @property
    def name(self) -> str:
        return self.decl.name.name


@dataclass(eq=False, slots=True)
class ModuleInfo:
    name: str  # "" for the root
    path: str  # file name as registered in the SourceMap
    ast: ast.Module
    scope: dict[str, Symbol] = field(default_factory=dict)  # own items + imports
    own: dict[str, Symbol] = field(default_factory=dict)  # own items only
    failed: set[str] = field(default_factory=set)  # names a failed `use` meant to import ("*": any) go unreported

    def qual(self, item: str) -> str:
        return f"{self.name}::{item}" if self.name else item


Instantiation = dict[str, "int | Dim | DType"]


@dataclass(eq=False)
class Program:
    root: ModuleInfo
    modules: dict[str, ModuleInfo] = field(default_factory=dict)
    items: dict[str, Symbol] = field(default_factory=dict)
    kernels: dict[str, FnInfo] = field(default_factory=dict)
    functions: dict[str, FnInfo] = field(default_factory=dict)
    consts: dict[str, Any] = field(default_factory=dict)
    types: dict[Any, Type] = field(default_factory=dict)
    symbols: dict[Any, Symbol] = field(default_factory=dict)
    dims: dict[Any, Dim] = field(default_factory=dict)
    instantiations: dict[Any, Instantiation] = field(default_factory=dict)
    deferred: dict[Any, dict[str, ast.Expr]] = field(default_factory=dict)
    # launches whose partitions leave tile dimensions to the autotuner (`_`):
    # the const generics it picks (`tuner/launch.py` times the candidates)
    tuned: dict[Any, frozenset[str]] = field(default_factory=dict)
    shape_sources: dict[Any, dict[str, Any]] = field(default_factory=dict)
    device_fns: set[str] = field(default_factory=set)
    host_fns: set[str] = field(default_factory=set)

    @classmethod
    def unchecked(cls, module: ast.Module, path: str = "<input>") -> Program:
        """The program of `module` before (or without) the type checker."""
        root = ModuleInfo("", path, module)
        return cls(root, modules={"": root})

    # -- queries ------------------------------------------------------------
    def all_modules(self) -> list[ModuleInfo]:
        """The root module first, then every module it loaded."""
        return [self.root, *(m for m in self.modules.values() if m is not self.root)]

    def find_fn(self, name: str, *, kernel: bool) -> ast.FnDecl | None:
        """The `kernel fn` (or `fn`) called `name`: its qualified name, else the
        first module (root first) that declares it, else a qualified name whose
        last segment is `name`."""
        table = self.kernels if kernel else self.functions
        info = table.get(name)
        if info is not None:
            return info.decl
        short = name.rsplit("::", 1)[-1]
        for mod in self.all_modules():
            for item in mod.ast.items:
                if isinstance(item, ast.FnDecl) and item.name.name == short and item.is_kernel == kernel:
                    return item
        if not kernel:
            for qual, info in table.items():
                if qual.rsplit("::", 1)[-1] == short:
                    return info.decl
        return None

    def find_const(self, name: str) -> Any:
        """The value of the constant called `name` (qualified or not), or its
        `ConstDecl` when the checker did not evaluate it; None if none exists."""
        if name in self.consts:
            return self.consts[name]
        for qual, v in self.consts.items():
            if qual.rsplit("::", 1)[-1] == name:
                return v
        for mod in self.all_modules():
            for item in mod.ast.items:
                if isinstance(item, ast.ConstDecl) and item.name.name == name:
                    return item
        return None

    def type_of(self, expr: Any) -> Type | None:
        return self.types.get(expr)

    def symbol_of(self, node: Any) -> Symbol | None:
        return self.symbols.get(node)

    def untyped_float_const(self, node: Any) -> float | None:
        """The f64 value of the untyped float module constant `node` names (`PI`, `const C = 0.1;`), else None
        (what both engines hold for an untyped `let` of it: `dtypes.let_literal`)."""
        sym = self.symbols.get(node)
        if sym is None or sym.kind is not SymbolKind.CONST or not isinstance(sym.decl, ast.ConstDecl) \
                or sym.decl.ty is not None or not isinstance(sym.value, float):
            return None
        return sym.value

    def builtin_called(self, node: Any) -> str | None:
        """The name of the built-in function or method call `node` calls (`sqrt` of `sqrt(2.0)` and of
        `(2.0).sqrt()`), else None (a user's function, a call the checker did not resolve)."""
        sym = self.symbols.get(node)
        return sym.name if sym is not None and sym.kind in (SymbolKind.BUILTIN, SymbolKind.METHOD) else None

    def dim_of(self, expr: Any) -> Dim | None:
        return self.dims.get(expr)

    def instantiation_of(self, call: Any) -> Instantiation:
        return self.instantiations.get(call, {})

    def deferred_of(self, call: Any) -> dict[str, ast.Expr]:
        return self.deferred.get(call, {})

    def kernel(self, name: str) -> FnInfo | None:
        return self.kernels.get(name)

    def function(self, name: str) -> FnInfo | None:
        return self.functions.get(name)

    def fn_info(self, symbol: Symbol | None) -> FnInfo | None:
        """The `FnInfo` of a FN or KERNEL symbol."""
        if symbol is None or symbol.qualname is None:
            return None
        return self.kernels.get(symbol.qualname) or self.functions.get(symbol.qualname)

    def callee_of(self, call: Any) -> FnInfo | None:
        """The kernel or function a `Call` node calls, if it is a user item."""
        return self.fn_info(self.symbols.get(call))
