"""Tile kernels as PyTorch custom operators (`torch.library`), so that models
calling them compile with `torch.compile(fullgraph=True)`.

    add = tilelang.torch_op(mod.add, tiles={"z": [1024]})             # add(z, x, y) -> None
    add_new = tilelang.torch_op(mod.add, tiles={"z": [1024]}, outputs={"z": "x"})
    z = add_new(x, y)                                                 # z allocated like x

`torch_op(kernel, tiles=..., outputs=..., name=...)` registers one operator
(`torch.ops.tile.<module>_<kernel>` unless `name` says otherwise) whose
schema is read off the Tile signature: a `&` tensor is `Tensor`, a `&mut`
tensor is `Tensor(a!)` (mutated in place) unless `outputs` names it, then it
is allocated by the operator and returned; numbers are `float`/`int`/`bool`
(`Scalar` for a number of a type parameter, `a: T`).
`tiles` gives each `&mut` parameter's tile shape (the partition a Tile
caller writes); generics come from it and the arrays, or from
`mod.kernel[...]` given explicitly.

The fake (meta) implementation is derived from the same signature: it
checks each tensor's element type, rank and static dimensions against the
Tile parameter (a wrong call fails while tracing, with the fix), and makes
each output with the shape of the tensor it is `like` (or a callable's
shape) and the parameter's element type. The real implementation builds
the kernel call with every check of the Python API and runs it: on the CPU
at once; on the GPU on PyTorch's current stream, ordered with PyTorch's own
work like any PyTorch operator (it does not wait; its borrows end when it
is enqueued, since every later use of these tensors through PyTorch is
ordered after it on that stream, or synchronises with it).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from tilelang.api.errors import CallError, a_type, given
from tilelang.api.partition import partition
from tilelang.api.protocols import KernelLike
from tilelang.diagnostics.codes import api as acodes
from tilelang.diagnostics.codes import launch as lcodes
from tilelang.diagnostics.codes.names import WRONG_ARG_COUNT
from tilelang.diagnostics.codes.types import HOST_EFFECT_IN_GRAPH
from tilelang.dtypes import DType
from tilelang.syntax import ast

_TORCH_DTYPES = {
    DType.BOOL: "bool", DType.I8: "int8", DType.I16: "int16", DType.I32: "int32",
    DType.I64: "int64", DType.U8: "uint8", DType.U16: "uint16", DType.U32: "uint32",
    DType.U64: "uint64", DType.F16: "float16", DType.BF16: "bfloat16", DType.F32: "float32",
    DType.F64: "float64",
}  # fmt: skip
_REGISTERED: dict[str, Any] = {}  # operator name -> its CustomOpDef (one per process)


def torch_op(
    kernel: Any,
    *,
    tiles: Mapping[str, Sequence[int] | int] | None = None,
    outputs: Mapping[str, str | Callable[..., Sequence[int]]] | None = None,
    name: str | None = None,
    namespace: str = "tile",
) -> Any:
    """Register `kernel` (a `Kernel` of a loaded module, maybe `mod.k[...]`
    with explicit generics) as a PyTorch custom operator and return it.
    What it is given is checked before PyTorch is imported (E0811)."""
    k: KernelLike = kernel
    tiles = dict(tiles or {})
    outputs = dict(outputs or {})
    specs = k.specs
    by_name = {s.name: s for s in specs}
    where = k.module._where(k.decl.name.span, f"`{k.signature}`")
    muts = [s.name for s in specs if s.kind == "mut"]
    # `&` parameters the kernel's `unsafe` code writes (atomics,
    # `store_unchecked`): mutated arguments for PyTorch too
    writes_for = getattr(k.module._ownership, "writes_for", None)
    written = writes_for(k.key) if writes_for is not None else frozenset()
    for n in [*tiles, *outputs]:
        if n not in by_name:
            raise CallError(f"kernel `{k.__name__}` has no parameter `{n}`", where=where,
                            code=acodes.TORCH_OP_SPEC,
                            help=f"its parameters are {', '.join(f'`{s.name}`' for s in specs)}")
    for n in muts:
        if n not in tiles:
            raise CallError(
                f"`tiles` gives no tile shape for `&mut` parameter `{n}` of kernel `{k.__name__}`",
                where=where,
                help=f'pass `tiles={{"{n}": [..]}}`: the tile shape a partition of it would have',
                code=acodes.TORCH_OP_SPEC,
            )
    for n, like in outputs.items():
        if by_name[n].kind != "mut":
            raise CallError(
                f"only `&mut` parameters can be outputs, and `{n}` of kernel `{k.__name__}` is not one",
                where=where,
                code=acodes.TORCH_OP_SPEC,
                help=f"its `&mut` parameters are {', '.join(f'`{m}`' for m in muts) or 'none'}",
            )
        if isinstance(like, str) and (
            like not in by_name or by_name[like].kind not in ("mut", "ref")
        ):
            raise CallError(
                f"output `{n}` is to be allocated like `{like}`, which is not a tensor parameter "
                f"of kernel `{k.__name__}`",
                where=where,
                code=acodes.TORCH_OP_SPEC,
                help="name a `&` or `&mut` parameter, or give a function of the inputs that returns "
                "the shape",
            )
        if isinstance(like, str) and like in outputs:
            raise CallError(
                f"output `{n}` cannot be allocated like another output `{like}`", where=where,
                code=acodes.TORCH_OP_SPEC,
                help="name an input parameter, or give a function of the inputs that returns the shape",
            )
    for s in specs:
        if s.kind == "other":
            raise CallError(
                f"parameter `{s.name}` of kernel `{k.__name__}` has no PyTorch operator type",
                where=where,
                code=acodes.TORCH_OP_SPEC,
                help="an operator's parameters are tensors (`&`, `&mut`) and numbers; call this "
                "kernel through the module instead",
            )
    inputs = [s for s in specs if s.name not in outputs]
    type_params = {g.name.name for g in k.decl.generics if not g.is_const}
    args_schema = []
    alias = iter("abcdefghijklmnopqrstuvwxyz")
    for s in inputs:
        if s.kind == "mut" or (s.kind == "ref" and s.name in written):
            args_schema.append(f"Tensor({next(alias)}!) {s.name}")
        elif s.kind == "ref":
            args_schema.append(f"Tensor {s.name}")
        else:
            args_schema.append(f"{_scalar_schema(s.elem, type_params)} {s.name}")
    rets = ["Tensor"] * len(outputs)
    ret = "()" if not rets else rets[0] if len(rets) == 1 else "(" + ", ".join(rets) + ")"
    schema = "(" + ", ".join(args_schema) + ") -> " + ret
    opname = name or _identifier(f"{k.module.name}_{k.__name__}")
    qualified = f"{namespace}::{opname}"
    if qualified in _REGISTERED:
        raise CallError(
            f"a PyTorch operator `{qualified}` is registered already",
            help="give this one another `name=`",
            code=acodes.TORCH_OP_SPEC,
        )
    torch = _torch()
    tile_of = {n: _tile(t) for n, t in tiles.items()}
    order = [s.name for s in specs]
    input_names = [s.name for s in inputs]

    def bind(args: tuple[Any, ...]) -> dict[str, Any]:
        if len(args) != len(input_names):
            raise CallError(
                f"operator `{qualified}` takes {len(input_names)} arguments "
                f"({', '.join(input_names)}) but {given(len(args))}",
                where=where,
                code=WRONG_ARG_COUNT,
                help=f"pass {len(input_names)}: {', '.join(f'`{n}`' for n in input_names)}",
            )
        return dict(zip(input_names, args, strict=True))

    def alloc(values: dict[str, Any], empty: Callable[..., Any]) -> None:
        for n, like in outputs.items():
            shape = tuple(like(**values)) if callable(like) else tuple(values[like].shape)
            dt = _out_dtype(torch, by_name[n].elem, values, specs, type_params, like)
            device = next(v.device for v in values.values() if isinstance(v, torch.Tensor))
            values[n] = empty(shape, dtype=dt, device=device)

    def impl(*args: Any) -> Any:
        _check_not_recording(qualified)
        values = bind(args)
        alloc(values, torch.empty)
        call = [partition(values[n], tile_of[n]) if n in tile_of else values[n] for n in order]
        op = kernel(*call)
        handle = op.launch()
        if op._plan.engine == "cpu":
            handle.wait()
        else:
            handle._end_borrows()  # stream-ordered with PyTorch's work (see the module doc)
        return _result(values, outputs)

    def fake(*args: Any) -> Any:
        values = bind(args)
        for s in inputs:
            if s.kind in ("mut", "ref"):
                _check_fake(torch, k, s, values[s.name], where, s.kind == "mut" or s.name in written)
        alloc(values, torch.empty)
        return _result(values, outputs)

    op = torch.library.custom_op(
        qualified,
        impl,
        mutates_args=tuple(n for n in [*muts, *sorted(written)] if n not in outputs),
        schema=schema,
    )
    op.register_fake(fake)
    _REGISTERED[qualified] = op
    return op


def _check_not_recording(qualified: str) -> None:
    """An operator runs for PyTorch at once and hands it its results; inside
    `with tilelang.graph()` (this thread recording) its kernel call would be
    recorded instead, not run: PyTorch would read outputs nothing wrote yet
    (`torch.empty`'s memory for an `outputs=` one) and the replays would
    write a tensor PyTorch had already used. Refused, as a host function is
    (E0228)."""
    import threading

    from tilelang.api import engines

    rec = engines.RECORDING
    if rec is not None and getattr(rec, "_thread", None) == threading.get_ident():
        raise CallError(
            f"PyTorch operator `{qualified}` runs at once, while the `with tilelang.graph()` block "
            "records kernel calls to run later: PyTorch would read results its kernel has not written",
            help="call the kernel itself in the block (`mod.kernel(..)`), or record the PyTorch code "
            "with `torch.cuda.graph`, which records the operator's launch",
            code=HOST_EFFECT_IN_GRAPH,
        )


def _torch() -> Any:
    torch = sys.modules.get("torch")
    if torch is None:
        try:
            import torch  # an optional dependency, imported when asked for
        except ImportError:
            raise CallError(
                "`tilelang.torch_op` needs PyTorch, which is not installed",
                help="`pip install torch` (or tilec's `torch` extra)",
                code=acodes.NEEDS_TORCH,
            ) from None
    return torch


def _identifier(text: str) -> str:
    out = re.sub(r"\W", "_", text)
    return out if not out[:1].isdigit() else f"k_{out}"


def _tile(t: Sequence[int] | int) -> tuple[int, ...]:
    return (int(t),) if isinstance(t, int) else tuple(int(d) for d in t)


def _scalar_schema(elem: str | None, type_params: set[str]) -> str:
    if elem in type_params:
        return "Scalar"  # `a: T`: an int or a float, checked against the `T` the tensors give
    dt = DType.parse(elem or "")
    if dt is None or dt.is_float:
        return "float"
    return "bool" if dt is DType.BOOL else "int"


def _out_dtype(
    torch: Any,
    elem: str | None,
    values: dict[str, Any],
    specs: Sequence[Any],
    type_params: set[str],
    like: Any,
) -> Any:
    if elem in type_params:
        # the element type of an input with the same type parameter
        for s in specs:
            v = values.get(s.name)
            if s.elem == elem and isinstance(v, torch.Tensor):
                return v.dtype
        if isinstance(like, str):
            return values[like].dtype
    dt = DType.parse(elem or "")
    if dt is None:
        return values[like].dtype if isinstance(like, str) else torch.float32
    return getattr(torch, _TORCH_DTYPES[dt])


def _result(values: dict[str, Any], outputs: Mapping[str, Any]) -> Any:
    if not outputs:
        return None
    outs = tuple(values[n] for n in outputs)
    return outs[0] if len(outs) == 1 else outs


def _check_fake(torch: Any, k: KernelLike, spec: Any, t: Any, where: str, mutated: bool = False) -> None:
    """The checks that need no memory, on a fake tensor while tracing.
    `mutated`: the operator writes the argument, so a converted copy must be
    kept (`z.to(..)` in the call would take the results away)."""
    what = f"argument `{spec.name}` of kernel `{k.__name__}`"
    if not isinstance(t, torch.Tensor):
        raise CallError(f"{what} must be a tensor, not {a_type(t)}", where=where,
                        code=acodes.NOT_AN_ARRAY, help="pass a `torch.Tensor`")
    want = DType.parse(spec.elem or "")
    if want is not None:
        ok = {_TORCH_DTYPES[want]} | ({"float32"} if want is DType.BF16 else set())
        got = str(t.dtype).removeprefix("torch.")
        if got not in ok:
            raise CallError(
                f"{what} must hold `{want.value}`, but it is a {t.dtype} tensor",
                code=lcodes.DTYPE_MISMATCH,
                where=where,
                help=(
                    f"convert it first and keep the copy, which the operator writes: "
                    f"`{spec.name} = {spec.name}.to(torch.{_TORCH_DTYPES[want]})`"
                    if mutated
                    else f"convert it first: `{spec.name}.to(torch.{_TORCH_DTYPES[want]})`"
                ),
            )
    if spec.dims is not None and len(spec.dims) != t.dim():
        raise CallError(
            f"{what} must have {len(spec.dims)} dimensions, but it has {t.dim()}",
            code=lcodes.RANK_MISMATCH,
            where=where,
            help="reshape it to the parameter's rank",
        )
    if spec.kind == "ref":
        for d, (dim, size) in enumerate(zip(spec.dims or (), t.shape, strict=False)):
            lit = dim.value if isinstance(dim, ast.IntLit) else None
            if lit is not None and isinstance(size, int) and lit != size:
                raise CallError(
                    f"dimension {d} of {what} is {size}, but the kernel expects {lit}",
                    code=lcodes.DIM_MISMATCH,
                    where=where,
                    help=f"pass a tensor whose dimension {d} is {lit}",
                )
