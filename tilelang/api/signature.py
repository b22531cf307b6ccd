"""A Tile declaration as Python sees it: its one-line header, its doc comment,
its `inspect.Signature`, argument matching, and the help lines that name the
fix for a wrong array (dtype, contiguity) and the generics an argument fixes."""

from __future__ import annotations

import inspect
import math
from typing import TYPE_CHECKING, Any

import numpy as np

from tilelang.api.arrays import ArrayRef, tile_dtype_name
from tilelang.api.errors import CallError, _file, given, span_text
from tilelang.diagnostics.codes.names import DUPLICATE_DEFINITION, UNKNOWN_KEYWORD, WRONG_ARG_COUNT
from tilelang.dtypes import DType
from tilelang.runtime.launch import ParamSpec, linear_in
from tilelang.source import SourceMap, Span, doc_comment_above, without_comments
from tilelang.syntax import ast

if TYPE_CHECKING:
    from tilelang.api.protocols import ModuleLike


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
    """The declaration up to its body, on one line: `kernel fn add<..>(..)`,
    without its comments (a `// the input` after a parameter, joined onto one
    line, read as if it commented out the parameters after it)."""
    sf = _file(decl.span, sources)
    raw = "" if sf is None else sf.text[decl.span.start:decl.body.span.start]
    text = " ".join(without_comments(raw).split())
    return text.replace("( ", "(").replace(", )", ")").replace(",)", ")")


def _doc_comments(decl: ast.FnDecl, sources: SourceMap) -> str:
    """The `//` comment lines right above the declaration (its doc)."""
    sf = _file(decl.span, sources)
    return "" if sf is None else doc_comment_above(sf, decl.span.start)


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


def _match_args(
    fname: str,
    what: str,
    decl: ast.FnDecl,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    module: ModuleLike,
) -> list[Any]:
    names = [p.name.name for p in decl.params]
    where = module._where(decl.name.span, f"`{fname}({', '.join(names)})` is declared here")
    if len(args) > len(names):
        raise CallError(
            f"{what} `{fname}` takes {len(names)} argument{'s' if len(names) != 1 else ''} "
            f"({', '.join(names)}) but {given(len(args))}" if names
            else f"{what} `{fname}` takes no arguments but {given(len(args))}",
            where=where,
            code=WRONG_ARG_COUNT,
            help=f"pass {len(names)}: {', '.join(f'`{n}`' for n in names)}" if names else f"call it as `{fname}()`",
        )
    out: dict[str, Any] = dict(zip(names, args, strict=False))
    for k, v in kwargs.items():
        if k not in names:
            generic = k in {g.name.name for g in decl.generics}  # `mod.add(.., B=4)`: generics go in `[..]`
            raise CallError(
                f"{what} `{fname}` has no parameter `{k}`" + (f": `{k}` is a generic" if generic else ""),
                where=where,
                code=UNKNOWN_KEYWORD,
                help=f"give it in brackets, by name: `mod.{fname}[{{{k!r}: {v!r}}}](..)`" if generic
                else f"its parameters are {', '.join(f'`{n}`' for n in names)}" if names else "it takes none",
            )
        if k in out:
            raise CallError(f"argument `{k}` of {what} `{fname}` is given twice", where=where,
                            code=DUPLICATE_DEFINITION,
                            help=f"pass `{k}` once: by position or as `{k}=..`, not both")
        out[k] = v
    missing = [n for n in names if n not in out]
    if missing:
        raise CallError(
            f"{what} `{fname}` is missing argument{'s' if len(missing) > 1 else ''} "
            f"{', '.join(f'`{n}`' for n in missing)}",
            where=where,
            code=WRONG_ARG_COUNT,
            help=f"pass every parameter: {', '.join(f'`{n}`' for n in names)}",
        )
    return [out[n] for n in names]


def _fix_dtype(ref: ArrayRef, name: str, want: DType, mutable: bool = False) -> str:
    """`mutable`: the kernel writes the argument, so the converted copy is the
    array the results land in: the help rebinds the name to it (a copy made
    in the call, `partition(z.astype(..), ..)`, would take the results away)."""
    np_name = tile_dtype_name(want)
    if ref.library == "torch":
        conv = f"{name}.to(torch.{np_name})"
    elif ref.library == "cupy":
        conv = f"{name}.astype(cupy.{np_name})"
    else:
        conv = f"{name}.astype(numpy.{np_name})"
    wraps = _wrapping_values(ref, want)
    if wraps:  # (round 13: a uint8 image given to an `i8` parameter was told `astype(numpy.int8)`, 200 -> -56)
        return wraps
    if mutable:
        return f"convert it first and keep the copy, the results are written into it: `{name} = {conv}`"
    return f"convert it first: `{conv}`"


def _wrapping_values(ref: ArrayRef, want: DType) -> str:
    """A help for an integer array whose values an integer `want` cannot
    hold, where the conversion the usual help writes would wrap them
    silently (a uint8 image's 200 as `int8` is -56); "" where they fit, for
    arrays the host cannot read, and for other types."""
    from tilelang.diagnostics.instances import int_bounds

    if ref.host is None or ref.dtype is None or not ref.dtype.is_int or not want.is_int or ref.host.size == 0:
        return ""
    lo, hi = int_bounds(want)
    vmin, vmax = int(ref.host.min()), int(ref.host.max())
    if lo <= vmin and vmax <= hi:
        return ""
    return (f"its values ({vmin}..={vmax}) do not fit `{want}`, which holds {lo}..={hi}: a conversion would wrap "
            f"them; declare the parameter `{ref.dtype}` (its own type), or a wider type, in the .tile file")


def _fix_not_an_array(value: Any, name: str, np_name: str, written: bool) -> str:
    """The help of E0800 for a value that is no array: a buffer (`bytearray`,
    `memoryview`, `array.array`) is viewed in place by `numpy.frombuffer`; a
    list or number is copied into a new array, which must be kept where the
    call writes it (a copy made in the call would take the results away,
    E0313), and so is a copy of an immutable buffer there (`bytes`, a NumPy
    scalar: `frombuffer` of one is read-only, E0803)."""
    try:
        view = memoryview(value)
        buffer, readonly = True, view.readonly
        view.release()
    except TypeError:
        buffer = readonly = False
    if buffer and not written:
        return f"view its memory as an array, no copy: `numpy.frombuffer({name}, dtype=numpy.{np_name})`"
    if buffer and not readonly:
        return (f"view its memory as an array, no copy (the results land in `{name}`): "
                f"`numpy.frombuffer({name}, dtype=numpy.{np_name})`")
    if buffer:  # written, an immutable buffer: its view would be read-only, a writeable copy is kept
        return (f"copy its memory into an array and keep it, the results are written into it: "
                f"`{name} = numpy.frombuffer({name}, dtype=numpy.{np_name}).copy()` (a "
                f"`{type(value).__name__}` is read-only), then pass it and read the results from it")
    if written:
        return (f"make it an array and keep it, the results are written into it: "
                f"`{name} = numpy.asarray({name}, dtype=numpy.{np_name})` (a `{type(value).__name__}` "
                "cannot be written in place), then pass it and read the results from it")
    return f"pass a NumPy array (`numpy.asarray({name}, dtype=numpy.{np_name})`), a PyTorch tensor or a CuPy array"


def _dense_order(ref: ArrayRef) -> tuple[int, ...] | None:
    """The axis order in which `ref`'s memory is one row-major block with no gaps (a PyTorch channels-last
    tensor's (0, 2, 3, 1), a transposed matrix's (1, 0)), or None: not a permutation of a dense layout."""
    if ref.strides is None or len(ref.shape) < 2:
        return None
    order = sorted(range(len(ref.shape)), key=lambda i: (-ref.strides[i] if ref.shape[i] > 1 else 0, i))
    size = 1
    for i in reversed(order):
        if ref.shape[i] > 1 and ref.strides[i] != size:
            return None
        size *= ref.shape[i]
    perm = tuple(order)
    return perm if perm != tuple(range(len(ref.shape))) else None


def _fix_rank(shape: tuple[int, ...], name: str, dims: tuple[Any, ...], mutable: bool, host: Any = None) -> str:
    """E0503's help with the reshape written out (round 18: a 0-d `torch.tensor(3.0)` for a `[1]` parameter
    was told "reshape it to the parameter's rank"): the declared constant dimensions where the element counts
    agree, else leading 1s for a lower rank, the leading axes merged for a higher one."""
    rank = len(dims)
    total = math.prod(shape)
    lits = [d.value for d in dims if isinstance(d, ast.IntLit)]
    if len(lits) == rank and math.prod(lits) == total:
        new = lits
    elif len(shape) < rank:
        new = [1] * (rank - len(shape)) + list(shape)
    elif rank >= 1:
        keep = list(shape[len(shape) - rank + 1:]) if rank > 1 else []
        new = [total // max(math.prod(keep), 1)] + keep
    else:
        return "reshape it to the parameter's rank"
    view = (f" (a view of the same memory: the kernel's writes land in `{name}`)" if mutable else "")
    # a `numpy.matrix` stays 2-D through its own `reshape` (`m.reshape(8)` is (1, 8)): its array view first
    of = f"numpy.asarray({name})" if isinstance(host, np.matrix) else name
    return f"reshape it to the parameter's rank: `{of}.reshape({', '.join(map(str, new))})`{view}"


def _fix_contiguous(ref: ArrayRef, name: str, mutable: bool) -> str:
    fix = {"torch": f"`{name}.contiguous()`", "cupy": f"`cupy.ascontiguousarray({name})`"}.get(
        ref.library, f"`numpy.ascontiguousarray({name})`"
    )
    perm = _dense_order(ref)
    view = ""
    if perm is not None:  # round 16: a channels-last tensor's own memory, in place (no copy, no copy back)
        axes = ", ".join(map(str, perm))
        spelled = f"{name}.permute({axes})" if ref.library == "torch" else f"{name}.transpose({axes})"
        kind = " (channels-last)" if perm == (0, 2, 3, 1) else ""
        shape = ", ".join(str(ref.shape[i]) for i in perm)
        view = (f"its memory is row-major in the axis order ({axes}){kind}: `{spelled}` is that memory as a "
                f"contiguous [{shape}] array, no copy{', written in place' if mutable else ''}, for a parameter "
                "declared in that order; or ")
    if mutable:
        return f"{view}pass a contiguous copy ({fix}) and copy the results back into the view yourself"
    return f"{view}pass a contiguous copy: {fix}"


def _inferable(decl: ast.FnDecl, specs: tuple[ParamSpec, ...]) -> set[str]:
    """The generics an argument names directly: a tile or array dimension
    (`[B]`), an element type (`Tensor<T, ..>`, or a scalar `a: T`: from a
    typed scalar such as `np.float16(1.5)`; the launch says so when a plain
    Python number leaves `T` open). Only these can be inferred."""
    type_names = {g.name.name for g in decl.generics if not g.is_const}
    consts = {g.name.name for g in decl.generics if g.is_const}
    out: set[str] = set()
    dims: list[ast.Expr] = []
    for spec in specs:
        if spec.kind in ("mut", "ref"):
            out |= {d.ident.name for d in spec.dims or () if isinstance(d, ast.Name)}
            dims += [d for d in spec.dims or () if d is not None]
        if spec.kind in ("mut", "ref", "scalar") and spec.elem in type_names:
            out.add(spec.elem)
    # `[2 * HD]`, `[A + B]` once `A` is known: the launch solves a dimension linear in the one generic it leaves
    # open, to a fixpoint (hrev22: one generic a dimension only, so `[A + B]` with `x: [A]` was E0215 here and
    # inferred by a Tile launch)
    more = True
    while more:
        more = False
        for d in dims:
            left = ({n.ident.name for n in ast.walk(d) if isinstance(n, ast.Name)} & consts) - out
            if len(left) == 1 and linear_in(d, g := next(iter(left))):
                out.add(g)
                more = True
    return out
