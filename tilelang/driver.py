"""The compiler pipeline as one ordered table of named stages.

`STAGES` maps a stage name to its function, in pipeline order (Triton's
`add_stages`):

    "ast"      SourceFile         -> ast.Module        tilelang.syntax.parser.parse_once
    "checked"  ast.Module         -> Checked           tilelang.sema.check_program
                                                       + tilelang.ownership.check_ownership
    "ir"       Checked            -> list[ir.Kernel]   tilelang.ir.lower.lower_kernel
    "gpu"      list[ir.Kernel]    -> list[GpuKernel]   tilelang.backend.lower_gpu_diagnostics
    "llvm"     list[GpuKernel]    -> list[Artifact]    tilelang.backend.emit_llvm_diagnostics
    "ptx"      list[GpuKernel]    -> list[Artifact]    tilelang.backend.emit_ptx_diagnostics

The `gpu` stage compiles for `Options.arch` and for the facts a typical launch
has (16-byte aligned tensors whose dims are multiples of 16); a launch compiles
its own variant for its actual arguments.

Each stage is a function `(input, ctx) -> output`; `ctx` (a `Context`) holds the
options, the `SourceMap`, the `DiagnosticSink` and every earlier stage's output.
`compile(source, until=stage)` walks the table and stops after the first stage
that reported an error. `tilec check`/`emit`, the test plugin, the REPL and the
language server all go through here, so they cannot disagree.

Invariants:
- Stage implementations are imported lazily, inside the stage function, so
  `tilec check` never imports NumPy, llvmlite or cuda-python unless a stage
  it runs needs them.
- Stages never print. A user error is a `Diagnostic` in the sink; any other
  exception escaping a stage is a bug and is re-raised as `ICE`.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tilelang.diagnostics.model import ICE, Diagnostic, DiagnosticSink
from tilelang.frozen import frozen
from tilelang.limits import ensure_recursion_budget
from tilelang.source import SourceFile, SourceMap


@dataclass(slots=True)
class Options:
    """What the user asked for; stages read what concerns them."""

    arch: str = "sm_80"
    kernel: str | None = None  # restrict `ast`/`ir`/`llvm`/`ptx` to one kernel
    device: str = "auto"
    deny_warnings: bool = False  # `--deny warnings`: every warning is an error
    explain: bool = False  # `tilec emit --explain`: the `gpu` stage notes each kernel's path and refusals


@dataclass(slots=True)
class Context:
    options: Options
    sources: SourceMap
    sink: DiagnosticSink
    source: SourceFile  # the root file being compiled
    outputs: dict[str, Any] = field(default_factory=dict)  # stage name -> output


@frozen(eq=True)
class Checked:
    """The output of the "checked" stage: the type checker's `Program` and the
    ownership checker's facts (None when the types did not check)."""

    program: Any
    ownership: Any = None


@frozen(eq=True)
class Artifact:
    """One emitted text (LLVM IR or PTX) for one kernel instance."""

    kernel: str
    text: str
    instance: str = ""  # its generics, `T = f32, P = 4`: several instances of one kernel differ by these


# ---------------------------------------------------------------- the stages
def _stage_ast(source: SourceFile, ctx: Context) -> Any:
    from tilelang.syntax.parser import parse_once

    return parse_once(source, ctx.sink)  # (a text that parsed cleanly before: its AST again)


def _stage_checked(module: Any, ctx: Context) -> Checked:
    from tilelang.ownership import check_ownership
    from tilelang.sema import check_program

    program = check_program(module, ctx.sources, ctx.sink)
    if ctx.sink.has_errors:
        # Ownership facts are meaningless over an ill-typed program.
        return Checked(program, None)
    facts = check_ownership(program, ctx.sink)
    if not ctx.sink.has_errors:
        check_instances(program, ctx.sink)
    if not ctx.sink.has_errors:
        check_declared_dims(program, ctx.sink)
    if not ctx.sink.has_errors and any(info.type_params or info.const_generics and not info.is_kernel
                                       for info in program.functions.values()):
        from tilelang.sema.host_instances import check_host_instances

        check_host_instances(program, ctx.sink)  # what a generic host function's instance refuses, as a kernel's
    if not ctx.sink.has_errors:
        _lint(program, ctx)
    return Checked(program, facts)


def _instances_can_fail(program: Any) -> bool:
    """Whether an instance of some kernel can fail where the generic body
    checked: a type parameter (`T` of a kernel, or of a device function a
    kernel calls: `*` on `bool`, `exp` on `i32`, `0.5` as an integer) or a
    hint given by a const generic (`#[hints(max_blocks = M)]`). Programs with
    neither (most) skip the lowering, so `tilec check` of them stays light."""
    if any(info.type_params or any(isinstance(v, str) for v in info.hints.values())
           for info in program.kernels.values()):
        return True
    if any(info.type_params and qual in program.device_fns
           for qual, info in program.functions.items()):
        return True
    fns = [*program.kernels.values(), *(i for q, i in program.functions.items() if q in program.device_fns)]
    return any(_generic_value_can_fail(program, info.decl) for info in fns if info.const_generics)


def _generic_value_can_fail(program: Any, decl: Any) -> bool:
    """Whether a const generic of `decl` is read where its value may not fit:
    as a number type other than `i32` (`t * B` of an `i8` tile), or in
    constant arithmetic (`B * B`) that may overflow its type (the instance's
    E0222 / E0227, `ir/lower/exprs.generic_read`)."""
    from tilelang.dtypes import DType
    from tilelang.sema.program import SymbolKind
    from tilelang.syntax import ast

    def generic(e: Any) -> bool:
        sym = program.symbol_of(e) if isinstance(e, ast.Name) else None
        return sym is not None and sym.kind is SymbolKind.GENERIC

    known: dict[int, tuple[bool, bool]] = {}  # id(e) -> constant(e), (by id: the body holds its nodes)

    def constant(e: Any) -> tuple[bool, bool]:
        """(`e` is of generics and literals only: the lowering folds it; and reads a generic). Once a node (a
        chain `B + B + .. + B` asks it of each of its `+`s)."""
        got = known.get(id(e))
        if got is None:
            if isinstance(e, ast.Binary):
                (a, ga), (b, gb) = constant(e.lhs), constant(e.rhs)
                got = (a and b, ga or gb)
            elif isinstance(e, ast.Unary):
                got = constant(e.operand)
            else:
                g = generic(e)
                got = (g or isinstance(e, ast.IntLit), g)
            known[id(e)] = got
        return got

    for n in ast.walk(decl.body):
        if generic(n) and getattr(program.type_of(n), "dtype", None) not in (None, DType.I32):
            return True
        if isinstance(n, ast.Binary) and n.op in ("+", "-", "*") and all(constant(n)):
            return True
    return False


def check_instances(program: Any, sink: DiagnosticSink) -> None:
    """Lower each kernel instance the program's launches fix at compile time
    (`kernel_instances`), as `tilec run` will when it launches them, and report
    the errors only an instance has (E0204 `*` on `bool`, E0201 a float literal
    as `i32`, E0203 a hint) here, with a label on the launch that makes the
    instance. So `tilec check` passes exactly when no launch with static
    generics can fail at type checking. Launches whose generics are known only
    at run time (a `load_npy` tensor's element type) are checked when they run."""
    if not _instances_can_fail(program):
        return
    from tilelang.diagnostics.model import TileError
    from tilelang.ir.lower import lower_kernel

    direct = _instances_with_launch(program)
    for name, inst, call, outer in [(*entry, ()) for entry in direct] + _launches_in_host_instances(program, direct):
        try:
            lower_kernel(program, name, inst, None)
        except TileError as e:
            for d in e.diagnostics:
                if call is not None and d.code.startswith("E02"):
                    d = d.secondary(call.span, "the launch that makes this instance")
                    for site, label in outer:
                        d = d.secondary(site.span, label)
                sink.emit(d)


def _declared_dims_possible(program: Any) -> bool:
    """Whether a written type may fix a size of a kernel's `?` tensor dimension: some kernel has a tensor
    parameter with a `?` dimension, and some device function's parameter or result type, or a `let`'s type in
    a kernel or device function, names a tensor with a dimension that is not `?`. Programs without both
    (most) skip `check_declared_dims`' lowering."""
    from tilelang.sema.types import RefT, TensorT, TupleT
    from tilelang.syntax import ast

    def sized(ty: Any, fixed: bool) -> bool:
        if isinstance(ty, TupleT):
            return any(sized(t, fixed) for t in ty.elems)
        inner = ty.inner if isinstance(ty, RefT) else ty
        shape = inner.shape if isinstance(inner, TensorT) else None
        return bool(shape) and any((d is not None) == fixed for d in shape)

    if not any(sized(t, False) for info in program.kernels.values() for t in info.param_types):
        return False
    device = [info for q, info in program.functions.items() if q in program.device_fns]
    if any(sized(t, True) for info in device for t in (*info.param_types, info.ret)):
        return True
    return any(isinstance(n, ast.Let) and n.ty is not None
               and any(isinstance(m, ast.NamedType) and m.name.name == "Tensor" for m in ast.walk(n.ty))
               for info in (*program.kernels.values(), *device) for n in ast.walk(info.decl.body))


def check_declared_dims(program: Any, sink: DiagnosticSink) -> None:
    """A launch giving a kernel's `?` tensor parameter a tensor whose size the checker knows, where a device
    function the kernel gives it to declares another (`fn first(t: &Tensor<f32, [16]>)`, `first(x)`, launched
    with an 8-element `x`): E0501 at the launch, as the launch itself would say (`ir/arg_dims.py`). The kernel
    instances the launches fix are lowered for their `DimClaim`s; instances known only at run time, and
    sizes known only at run time, are checked at the launch (hrev29)."""
    if not _declared_dims_possible(program):
        return
    from tilelang.dtypes import DType
    from tilelang.ir import arg_dims
    from tilelang.ir.lower import lower_kernel
    from tilelang.sema.types import PartitionT, RefT, TensorT

    lowered: dict[Any, Any] = {}
    reported: set[int] = set()  # the instances whose claims conflict, said once (`_conflicting_claims`)
    for call, inst in program.instantiations.items():
        info = program.callee_of(call)
        if info is None or not info.is_kernel or \
                not all(isinstance(inst.get(g), int) for g in info.const_generics) or \
                not all(isinstance(inst.get(t), DType) for t in info.type_params):
            continue
        key = (info.qualname, tuple(sorted((k, str(v)) for k, v in inst.items()
                                           if k in info.const_generics or k in info.type_params)))
        if key not in lowered:
            try:
                lowered[key] = lower_kernel(program, info.qualname, {k: inst[k] for k in
                                                                     (*info.const_generics, *info.type_params)})
            except Exception:  # (a TileError is the instance's, `check_instances`, or the launch's; an internal
                lowered[key] = None  # error the run reports, as it would without this check)
        kernel = lowered[key]
        if kernel is None or not kernel.claims:
            continue
        if _conflicting_claims(kernel, call, sink, reported):
            continue
        args = [a.value for a in call.args if a.name is None]
        shapes = []
        for a in args:
            ty = program.type_of(a)
            ty = ty.inner if isinstance(ty, RefT) else ty
            ty = ty.tensor if isinstance(ty, PartitionT) else ty  # a group view's claim is on the whole tensor
            shapes.append(tuple(d.const_value if d is not None else None for d in ty.shape)
                          if isinstance(ty, TensorT) and ty.shape is not None else None)
        for c in kernel.claims:
            shape = shapes[c.param] if c.param < len(shapes) else None
            if shape is None or c.dim >= len(shape) or shape[c.dim] is None or shape[c.dim] == c.size:
                continue
            shown = tuple(-1 if n is None else n for n in shape)
            sink.emit(arg_dims.claim_diagnostic(kernel, c, shown, args[c.param].span))
            break


def _conflicting_claims(kernel: Any, call: Any, sink: DiagnosticSink, reported: set[int]) -> bool:
    """E0501 where two written types declare different sizes for one dimension of a kernel's tensor (`first(x)`
    of `[16]` and `half(x)` of `[8]`): no launch can give it both, so the instance is refused here, not at
    each launch. True when reported (once an instance)."""
    from tilelang.diagnostics.codes.launch import DIM_MISMATCH
    from tilelang.diagnostics.model import Diagnostic

    seen: dict[tuple[int, int], Any] = {}
    for c in kernel.claims:
        other = seen.setdefault((c.param, c.dim), c)
        if other.size == c.size:
            continue
        name = kernel.params[c.param].name
        if id(kernel) in reported:
            return True
        reported.add(id(kernel))
        sink.emit(Diagnostic.error(
            DIM_MISMATCH, f"dimension {c.dim} of `{name}` is declared {other.size} by {other.owner} and {c.size} "
                          f"by {c.owner}: no launch of `{kernel.name}` can give it both")
            .primary(c.arg, f"`{name}` reaches {c.owner} here")
            .secondary(other.arg, f"and {other.owner} here")
            .secondary(c.decl, c.label).secondary(other.decl, other.label)
            .secondary(call.span, "the launch that makes this instance")
            .with_help(f"declare the dimension `?` in one of them ({c.where} or {other.where}), or give them one size"))
        return True
    return False


def _launches_in_host_instances(program: Any, direct: list[tuple[str, dict[str, Any], Any]]) -> list[Any]:
    """The kernel instances that launches inside generic host functions make
    for each of their instances (`sema.host_instances.instances`): `k(..)`
    in `fn go<U>` launching `k<T>` with `T = U`, where `go` is called with
    a `bool` tensor, was lowered only when it ran (hrev15). Each (kernel,
    instantiation, launch, the outer calls labelled), not among `direct`."""
    from tilelang.dtypes import DType
    from tilelang.sema.host_instances import const_arg, instance_label, instances
    from tilelang.syntax import ast

    keys = [(name, inst) for name, inst, _ in direct]
    out: list[Any] = []
    for callee, types, consts, site, outer in instances(program):
        for call in ast.walk(callee.decl.body):
            info = program.callee_of(call) if isinstance(call, ast.Call) else None
            if info is None or not info.is_kernel or not (info.type_params or info.const_generics):
                continue
            inst = program.instantiation_of(call)
            bound = {t: inst.get(t) for t in info.type_params} | _element_types(program, info, call, types)
            sources = program.shape_sources.get(call, {})
            values = {g: inst[g] if isinstance(inst.get(g), int) else const_arg(sources.get(g), consts)
                      for g in info.const_generics}  # (`k::<4, C>` of the function's `C`: its value here)
            if not all(isinstance(v, int) for v in values.values()) \
                    or not all(isinstance(v, DType) for v in bound.values()):
                continue
            entry = (info.qualname, {**bound, **{g: int(v) for g, v in values.items()}})  # type: ignore[arg-type]
            if entry not in keys:
                keys.append(entry)
                out.append((*entry, call, ((site, instance_label(callee, types, consts)), *outer)))
    return out


def _element_types(program: Any, info: Any, call: Any, types: dict[str, Any]) -> dict[str, Any]:
    """The kernel's type parameters that a launch inside a generic host
    function gives through its arguments' element types, read as that
    function's instance binds them (`Tensor<U, ..>` for `T` with `U = bool`;
    the checker records no `T` bound to the caller's `U`)."""
    from tilelang.sema.types import PartitionT, RefT, ScalarT, TensorT, TypeParam

    def elem(ty: Any) -> Any:
        if isinstance(ty, RefT):
            ty = ty.inner
        if isinstance(ty, PartitionT):
            ty = ty.tensor
        return ty.dtype if isinstance(ty, (TensorT, ScalarT)) else None

    out: dict[str, Any] = {}
    args = [a.value for a in call.args if a.name is None]
    for pty, arg in zip(info.param_types, args, strict=False):
        want, got = elem(pty), elem(program.type_of(arg))
        if isinstance(want, TypeParam) and want.name in info.type_params and isinstance(got, TypeParam) \
                and got.name in types:
            out[want.name] = types[got.name]
    return out


def _lint(program: Any, ctx: Context) -> None:
    """Warnings (W0xxx) over the user's own files, not the standard library's."""
    from tilelang.resources import stdlib_dir
    from tilelang.sema.lints import check_lints

    std = os.path.normpath(str(stdlib_dir()))
    skip = frozenset(m.path for m in program.modules.values()
                     if os.path.normpath(m.path).startswith(std))
    check_lints(program, ctx.sink, skip, ctx.sources)


def deny_warnings(sink: DiagnosticSink) -> None:
    """`--deny warnings`: turn every warning in `sink` into an error."""
    from tilelang.diagnostics.model import Severity

    sink.diagnostics[:] = [
        dataclasses.replace(d, severity=Severity.ERROR).note(
            "`--deny warnings` turns this warning into an error")
        if d.severity is Severity.WARNING else d
        for d in sink.diagnostics]


def kernel_instances(program: Any) -> list[tuple[str, dict[str, Any]]]:
    """The (kernel name, instantiation) pairs that the program's launches fix
    at compile time, in source order, without duplicates: const generics as
    `int`, type parameters (`kernel fn k<T>`) as `DType`. A kernel with no
    generics appears once even if it is never launched, so `emit` can show
    it; a launch whose generics are known only at run time (`deferred` by the
    type checker) is left out."""
    return [(name, inst) for name, inst, _ in _instances_with_launch(program)]


def _instances_with_launch(program: Any) -> list[tuple[str, dict[str, Any], Any]]:
    """`kernel_instances`, each with the first launch (`Call`) that makes it
    (None for a generic-free kernel that is never launched)."""
    from tilelang.dtypes import DType

    seen: list[tuple[str, dict[str, Any], Any]] = []
    keys: list[tuple[str, dict[str, Any]]] = []
    for call, inst in program.instantiations.items():
        info = program.callee_of(call)
        if info is None or not info.is_kernel:
            continue
        if not all(isinstance(inst.get(g), int) for g in info.const_generics):
            continue
        if not all(isinstance(inst.get(t), DType) for t in info.type_params):
            continue
        entry = (info.qualname, {**{t: inst[t] for t in info.type_params},
                                 **{g: int(inst[g]) for g in info.const_generics}})
        if entry not in keys:
            keys.append(entry)
            seen.append((*entry, call))
    for name, info in program.kernels.items():
        if info.type_params:
            continue  # no instance without a launch that fixes the element type
        if not info.const_generics and not any(e[0] == name for e in seen):
            seen.append((name, {}, None))
    return seen


def _stage_ir(checked: Checked, ctx: Context) -> list[Any]:
    from tilelang.diagnostics.model import TileError
    from tilelang.ir.lower import lower_kernel

    kernels = []
    for name, inst in kernel_instances(checked.program):
        if ctx.options.kernel is not None and name != ctx.options.kernel:
            continue
        try:
            kernels.append(lower_kernel(checked.program, name, inst, None))
        except TileError as e:  # a kernel this instance cannot be (the user's, with its code)
            for d in e.diagnostics:
                ctx.sink.emit(d)
    return kernels


def _stage_gpu(kernels: list[Any], ctx: Context) -> list[Any]:
    from tilelang.backend import lower_gpu_diagnostics as lower
    from tilelang.backend.facts import TensorFacts

    out = []
    for k in kernels:
        facts = {p.name: TensorFacts.assumed(p.rank) for p in k.tensor_params}
        gk = lower(k, ctx.sink, ctx.options.arch, facts)
        if gk is not None:
            out.append(gk)
            if ctx.options.explain:
                ctx.sink.extend(_path_notes(gk))
    return out


def _path_notes(gk: Any) -> list[Any]:
    """`--explain`: a note of the path kernel `gk` takes at its span, then the pipelines' refusals."""
    from tilelang.backend import explain
    from tilelang.diagnostics.model import Diagnostic, Severity

    types = getattr(getattr(gk, "source", gk), "type_args", ())
    inst = ", ".join(f"{k} = {v}" for k, v in (*types, *gk.instantiation))
    what = explain.describe(gk)
    head = Diagnostic("", f"kernel `{gk.name}`" + (f" [{inst}]" if inst else "") + f" runs on {what} ({gk.arch})",
                      severity=Severity.NOTE)
    return [head, *gk.notes]


def _stage_llvm(kernels: list[Any], ctx: Context) -> list[Artifact]:
    from tilelang.backend import emit_llvm_diagnostics

    return _emit_each(kernels, ctx, emit_llvm_diagnostics)


def _stage_ptx(kernels: list[Any], ctx: Context) -> list[Artifact]:
    from tilelang.backend import emit_ptx_diagnostics

    return _emit_each(kernels, ctx, emit_ptx_diagnostics)


def _emit_each(kernels: list[Any], ctx: Context, emit: Callable[..., Any]) -> list[Artifact]:
    """Run a backend emitter on each kernel; a GPU limit (E06xx) lands in the
    sink as a diagnostic and that kernel yields no artifact."""
    out = []
    for k in kernels:
        try:
            text = emit(k, ctx.sink, ctx.options.arch)
        except ICE:
            raise
        except Exception as e:  # a bug in tilec (LLVM refusing our IR): the report names the kernel that met it
            inst = ", ".join(f"{n} = {v}" for n, v in getattr(k, "instantiation", ()))
            raise ICE(f"emitting kernel `{k.name}`" + (f" [{inst}]" if inst else "")
                      + f" for {ctx.options.arch or 'the default arch'} failed: {type(e).__name__}: {e}") from e
        if text is not None:
            types = getattr(getattr(k, "source", k), "type_args", ())   # (a GpuKernel's source: its ir.Kernel)
            out.append(Artifact(k.name, str(text),
                                ", ".join(f"{n} = {v}" for n, v in (*types, *getattr(k, "instantiation", ())))))
    return out


@frozen(eq=True)
class Stage:
    name: str
    run: Callable[[Any, Context], Any]
    input: str | None  # the stage whose output this one consumes (None: the source)
    doc: str


STAGES: dict[str, Stage] = {
    s.name: s
    for s in (
        Stage("ast", _stage_ast, None, "parse into the surface AST"),
        Stage("checked", _stage_checked, "ast", "resolve names, check types and ownership"),
        Stage("ir", _stage_ir, "checked", "lower each launched kernel instance to Tile IR"),
        Stage("gpu", _stage_gpu, "ir", "lower to GPU IR: layouts, shared memory, async copies, warp roles"),
        Stage("llvm", _stage_llvm, "gpu", "emit LLVM IR for the NVPTX target"),
        # PTX is emitted from GPU IR, not by re-parsing the LLVM text.
        Stage("ptx", _stage_ptx, "gpu", "emit PTX assembly"),
    )
}


def _path_to(until: str) -> list[str]:
    """The stages that must run to produce `until`, in order."""
    if until not in STAGES:
        raise ValueError(f"unknown stage `{until}` (stages: {', '.join(STAGES)})")
    chain = []
    name: str | None = until
    while name is not None:
        chain.append(name)
        name = STAGES[name].input
    return chain[::-1]


# ---------------------------------------------------------------- entry points
@dataclass(slots=True)
class CompileResult:
    context: Context
    until: str
    failed_stage: str | None = None  # the stage that reported errors, if any

    @property
    def sources(self) -> SourceMap:
        return self.context.sources

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return self.context.sink.diagnostics

    @property
    def ok(self) -> bool:
        return not self.context.sink.has_errors

    @property
    def output(self) -> Any:
        """The output of the requested stage (None if it was not reached)."""
        return self.context.outputs.get(self.until)


def load_source(
    source: str | os.PathLike[str] | SourceFile,
    sources: SourceMap,
    name: str = "<input>",
) -> SourceFile:
    """Register `source` in `sources`: a path-like is read from disk (raising
    OSError: `SourceReadError` for a file that is not UTF-8 or too large), a
    str is program text called `name`, a SourceFile is used as is."""
    if isinstance(source, SourceFile):
        return source
    if isinstance(source, str):
        return sources.add(name, source)
    from tilelang.source import read_source

    path = Path(source)
    return sources.add(str(path), read_source(path))


def compile(
    source: str | os.PathLike[str] | SourceFile,
    until: str = "checked",
    *,
    name: str = "<input>",
    options: Options | None = None,
    sources: SourceMap | None = None,
) -> CompileResult:
    """Run the pipeline up to and including stage `until`.

    Stops after the first stage that reports an error. Any exception from a
    stage is a bug and is re-raised as `ICE`.
    """
    ensure_recursion_budget()  # every stage recurses over trees up to MAX_NESTING deep
    sources = sources if sources is not None else SourceMap()
    root = load_source(source, sources, name)
    ctx = Context(options or Options(), sources, DiagnosticSink(), root)
    result = CompileResult(ctx, until)
    value: Any = root
    for stage_name in _path_to(until):
        stage = STAGES[stage_name]
        value = root if stage.input is None else ctx.outputs[stage.input]
        try:
            value = stage.run(value, ctx)
        except ICE:
            raise
        except Exception as e:
            raise ICE(
                f"stage `{stage_name}` crashed on {root.name}: {type(e).__name__}: {e}"
            ) from e
        ctx.outputs[stage_name] = value
        if ctx.options.deny_warnings:
            deny_warnings(ctx.sink)
        if ctx.sink.has_errors:
            result.failed_stage = stage_name
            return result
    return result


def check(
    source: str | os.PathLike[str] | SourceFile,
    *,
    name: str = "<input>",
    sources: SourceMap | None = None,
    deny_warnings: bool = False,
) -> CompileResult:
    """Everything `tilec check` does: parse, resolve, type and ownership check,
    then the warnings (errors with `deny_warnings`)."""
    return compile(source, "checked", name=name, sources=sources,
                   options=Options(deny_warnings=deny_warnings))


def ir_as_run(kernel: Any) -> str:
    """`emit --stage ir`'s text of `kernel` with the warps it runs at: where the source names none, the IR's 4
    is the backend's to change (`lift.default_warps`: 1 or 2 for small tiles, more for big ones; a product's
    pipeline takes its own per target), so the text says the rule's count and, in a line before it, whose
    choice it is. (`print_kernel` itself stays the IR as lowered: the tuner's records key on it.)"""
    import dataclasses

    from tilelang.backend.gpu.passes.lift import default_warps
    from tilelang.ir import nodes as ir
    from tilelang.ir.printer import print_kernel

    given = "num_warps" in kernel.hints or kernel.min_blocks or kernel.max_blocks or kernel.cluster \
        or kernel.walk >= 0
    if given:
        return str(print_kernel(kernel))
    warps = default_warps(kernel)
    if warps != kernel.num_warps:
        note = (f"// warps {warps}: the backend's choice for this kernel's tiles ({kernel.num_warps} by default; "
                "`#[hints(num_warps = N)]` fixes them" + (", fewer where these do not fit the target)"
                                                          if warps > kernel.num_warps else ")"))
        return note + "\n" + str(print_kernel(dataclasses.replace(kernel, num_warps=warps)))
    if any(isinstance(op, ir.Mma) for op in ir.walk(kernel.body)):
        return (f"// warps {warps} unless the target's pipeline for the product takes others (`--stage gpu` "
                "shows them)\n" + str(print_kernel(kernel)))
    return str(print_kernel(kernel))


def format_output(stage: str, result: CompileResult) -> str:
    """The text `tilec emit --stage <stage>` prints for a finished result."""
    value = result.context.outputs[stage]
    match stage:
        case "ast":
            from tilelang.syntax import ast
            from tilelang.syntax.printer import format_ast

            kernel = result.context.options.kernel  # `--kernel k`: that kernel's item (it was the whole file)
            if kernel is not None:
                items = [i for i in value.items if isinstance(i, ast.FnDecl) and i.is_kernel and i.name.name == kernel]
                return "".join(str(format_ast(i, result.sources)) for i in items)
            return str(format_ast(value, result.sources))
        case "checked":
            return repr(value)
        case "ir":
            return "\n".join(ir_as_run(k) for k in value)
        case "gpu":
            from tilelang.backend.gpu.printer import print_gpu_kernel as print_gpu

            return "\n".join(str(print_gpu(k)) for k in value)
        case "llvm" | "ptx":
            if len(value) == 1:
                return str(value[0].text)
            # Several modules in one stream: say where each begins.
            comment = ";" if stage == "llvm" else "//"
            # (round 21: the instances of a generic kernel, `kron` three times, said which was which)
            return "\n".join(f"{comment} ---- kernel `{a.kernel}`" + (f" [{a.instance}]" if a.instance else "")
                             + f"\n{a.text}" for a in value)
        case _:
            raise ValueError(f"unknown stage `{stage}`")
