"""The help tables of calls (`calls.py`): other languages' functions, methods and keyword arguments with
their Tile spellings (`function_habit` / `method_habit` for `tilec doc`, the REPL), and the helps that read a
call's arguments or types to write the spelling out (`t.mean(k)`, `range(a, b, k)`, `len(t)`, std::nn's
row-wise functions given an axis). Pure: each help is a string or a function of the call; nothing here
reports a diagnostic (`calls.py` does, with these words).
"""

from __future__ import annotations

import math
import re

from tilelang.diagnostics.codes import types as T
from tilelang.dtypes import DType
from tilelang.intrinsics.habits import FOREIGN_MODULES, FOREIGN_TYPES, values_help
from tilelang.intrinsics.math_habits import MATH_HABITS, scalar_method_habit
from tilelang.sema.context import CheckCx
from tilelang.sema.program import FnInfo
from tilelang.sema.ruleargs import listed_axes
from tilelang.sema.split_habits import flip_1d_help as _flip_help
from tilelang.sema.types import ShapeT, TensorT, TileT, Type, shape_str
from tilelang.syntax import ast

# std::nn's row-wise functions, which take a `[M, N]` tile and normalise along axis 1
_ROW_WISE = frozenset(("std::nn::softmax", "std::nn::log_softmax", "std::nn::layernorm", "std::nn::rmsnorm"))


def last_axis_help(tcx: CheckCx, info: FnInfo, args: list[ast.Expr]) -> str | None:
    """`softmax(t, 0)` of std::nn (round 14: a column softmax): the help "call it with 1 argument" gave the
    row softmax silently. It says which axis the function normalises and, for axis 0, transposes around it."""
    if info.qualname not in _ROW_WISE or len(args) != len(info.param_types) + 1:
        return None
    axis = args[1] if info.qualname.endswith("softmax") else args[-1]
    rest = [tcx.snippet(a) for a in args if a is not axis]
    if not isinstance(axis, ast.IntLit) or axis.value not in (0, 1) or not all(rest):
        return None
    name = info.name
    if axis.value == 1:
        return f"`{name}` normalises along axis 1 (each row of its `[M, N]` tile) already: `{name}({', '.join(rest)})`"
    t = tcx.receiver_snippet(args[0])
    inner = ", ".join([f"{t}.transpose()", *rest[1:]])
    return (f"`{name}` normalises along axis 1 (each row of its `[M, N]` tile); along axis 0, transpose around it: "
            f"`{name}({inner}).transpose()`")


def _range_help(tcx: CheckCx, e: ast.Call) -> str:
    args = [tcx.snippet(a.value) for a in e.args]
    if len(args) == 1 and args[0]:
        return f"write a range: `0..{args[0]}`, as in `for i in 0..{args[0]} {{ .. }}`"
    if len(args) == 2 and all(args):
        return f"write a range: `{args[0]}..{args[1]}`, as in `for i in {args[0]}..{args[1]} {{ .. }}`"
    if len(args) == 3 and all(args):  # Triton's `range(0, K, BK)`
        a, b, k = args
        count = f"({b} + {k} - 1) / {k}" if a == "0" else f"({b} - {a} + {k} - 1) / {k}"
        start = f"i * {k}" if a == "0" else f"{a} + i * {k}"
        return (f"a range counts up by 1: count the steps, `for i in 0..{count} {{ .. }}`, and start each at "
                f"`{start}` (over a partition's tiles: `for i in 0..p.num_tiles(axis)`)")
    return "write a range `a..b` (`a..=b` includes `b`), as in `for i in 0..n { .. }`"


def tile_dims_help(ty: TileT | ShapeT) -> str:
    """`t.shape[0]`, `t.shape()`, `len(t)` of a tile: its type's dimensions; `s.len()` of a shape: its rank."""
    if isinstance(ty, ShapeT):  # round 20: `x.shape().len()` was told "values of this type have no methods"
        return f"a shape's length is its rank, part of its type `{ty}`: {ty.rank} here (its `[k]` is axis k's size)"
    dims = [str(d) for d in ty.shape]
    if not dims:
        return f"a tile's shape is part of its type, `{ty}`: this one has no axes"
    named = f"`{dims[0]}`" if len(dims) == 1 else ", ".join(f"`{d}` (axis {i})" for i, d in enumerate(dims))
    return f"a tile's shape is part of its type, `{ty}`: write its dimensions, {named}"


def mean_help(ty: TileT | TensorT, e: ast.MethodCall) -> str:
    """`t.mean(k)` of a tile: its sum along k divided by that axis's size, the
    type's dimension as a float (`t.sum(1) / (N as f32)`; `t.sum() / 32.0` of all)."""
    if not isinstance(ty.dtype, DType):
        return METHOD_HABITS["mean"]  # a type parameter's
    elem = ty.dtype.value if ty.dtype.is_float else "f32"
    several = listed_axes(e.args[0].value) if len(e.args) == 1 else None
    if several is not None:  # NumPy's `t.mean((1, 2))`, PyTorch's `t.mean(dim = [1, 2])`
        return _mean_of_axes(ty, several, elem) or METHOD_HABITS["mean"]
    axis = e.args[0].value.value if e.args and isinstance(e.args[0].value, ast.IntLit) else None
    keep = len(e.args) == 2 and isinstance(e.args[1].value, ast.BoolLit) and e.args[1].value.value  # keepdim
    if axis is None and e.args or len(e.args) == 2 and not isinstance(e.args[1].value, ast.BoolLit):
        return METHOD_HABITS["mean"]
    dims = [str(d) for d in ty.shape]
    if axis is not None and not 0 <= axis < len(dims):
        return METHOD_HABITS["mean"]
    if axis is None and all(d.isdigit() for d in dims):
        count = str(math.prod(int(d) for d in dims))
    else:
        count = dims[axis] if axis is not None else " * ".join(dims)
    if count.isdigit():
        n = f"{count}.0"
    else:
        n = f"({count} as {elem})" if axis is not None or len(dims) == 1 else f"(({count}) as {elem})"
    total = f"{{x}}.sum({axis})" if axis is not None else "{x}.sum()"
    total += f".reshape([{', '.join('1' if i == axis else d for i, d in enumerate(dims))}])" if keep else ""
    cast = "" if ty.dtype.is_float else f" as {elem}"
    what = "the axis's size" if axis is not None else "the number of elements"
    return f"divide the sum by {what}: `({total}{cast}) / {n}`" if cast else f"divide the sum by {what}: `{total} / {n}`"


def _mean_of_axes(ty: TileT | TensorT, several: list[int], elem: str) -> str | None:
    """`mean_help` over several axes: the sums chained, the highest axis first, over the product of the sizes."""
    if ty.shape is None or None in ty.shape:
        return None
    dims = [str(d) for d in ty.shape]
    axes = sorted({a + len(dims) if a < 0 else a for a in several}, reverse=True)
    if len(axes) != len(several) or not all(0 <= a < len(dims) for a in axes):
        return None
    sizes = [dims[a] for a in sorted(axes)]
    count = str(math.prod(int(d) for d in sizes)) if all(d.isdigit() for d in sizes) else " * ".join(sizes)
    n = f"{count}.0" if count.isdigit() else f"(({count}) as {elem})"
    total = "{x}" + "".join(f".sum({a})" for a in axes)
    total = f"({total} as {elem})" if isinstance(ty.dtype, DType) and not ty.dtype.is_float else total
    return f"Tile reduces one axis at a time: divide the sums by the number of elements they add, `{total} / {n}`"


def len_help(tcx: CheckCx, e: ast.Call) -> str:
    ty = tcx.program.types.get(e.args[0].value) if len(e.args) == 1 else None
    if isinstance(ty, TileT):
        return tile_dims_help(ty)
    x = tcx.receiver_snippet(e.args[0].value) if len(e.args) == 1 else None
    x = x if x and len(x) < 30 else "t"
    return f"the size of a tensor's first axis is `{x}.shape()[0]`"


_JOIN = ("Tile has no concatenation: in a kernel, store each part into its own nested tile of the output "
         "(`let q = z.partition([..]); q.store(a, [0, 0]); q.store(b, [0, 1]);`); on the host, pick each "
         "element's source with `where` over `arange` positions")
FLIPS = ("flip", "fliplr", "flipud", "reverse")
LIKES = ("zeros_like", "empty_like", "full_like")  # NumPy's: of the argument's shape and type


def _flip_call_help(tcx: CheckCx | None, e: ast.Call | None) -> str:
    """`_flip_help` for `flip(x, ..)`, of `x`'s type; without a call (`tilec doc flip`), of a tile `t`."""
    if tcx is None or e is None or not e.args:
        return _flip_help(None, "t")
    x = tcx.snippet(e.args[0].value) or "t"
    return _flip_help(tcx.program.types.get(e.args[0].value), x if len(x) < 30 else "t")


_SORT = ("Tile has no sort: the k largest of `{x}` come one at a time from `argmax`, each pick masked out before "
         "the next (`where(arange::<i32>(N) == i, f32::NEG_INFINITY, {x})`)")
# round 24 (huser25): a whole small row sorts by ranks (tests/user/programs/l04), which the help did not say
_SORT_ALL = (_SORT + "; a whole row of N sorts by ranks: with `a = {x}.reshape([1, N, 1])`, `b = {x}.reshape([1, 1, "
             "N])`, `i = arange::<i32>(N).reshape([1, N, 1])`, `j = arange::<i32>(N).reshape([1, 1, N])`, element i's "
             "slot is `let rank = (((b < a) | ((b == a) & (j < i))) as i32).sum(2);` (a stable sort), and slot r "
             "takes the element whose rank is r: `where(rank.reshape([1, N, 1]) == j, a, f32::NEG_INFINITY).max(1)`, "
             "a [1, N] tile (`where(.., i, -1).max(1)` is the argsort)")


def _like_help(tcx: CheckCx | None, e: ast.Call | None, make: str, rest: str) -> str:
    """NumPy's `zeros_like(x)`: a host tensor's shape is `x.shape()`, which `zeros` takes (round 23: "make a tile
    of the shape you need: `zeros::<f32>([..])`", on the host too, of any element type)."""
    ty = tcx.program.types.get(e.args[0].value) if tcx is not None and e is not None and e.args else None
    if isinstance(ty, TensorT) and isinstance(ty.dtype, DType) and tcx is not None and e is not None:
        return f"make one of its shape: `{make}::<{ty.dtype.value}>({tcx.receiver_snippet(e.args[0].value)}.shape()" \
               f"{rest})`"
    if isinstance(ty, TileT) and isinstance(ty.dtype, DType):
        return f"make one of its shape: `{make}::<{ty.dtype.value}>({shape_str(ty.shape)}{rest})`"
    return f"make a tile or tensor of the shape you need: `{make}::<f32>([..]{rest})`"


_PY_SPECIALS = {"inf": "inf", "+inf": "inf", "infinity": "inf", "+infinity": "inf", "-inf": "-inf",
                "-infinity": "-inf", "nan": "nan", "+nan": "nan", "-nan": "nan"}


def _py_cast_help(tcx: CheckCx, e: ast.Call, ty: str) -> str:
    """Python's `float(x)` / `int(x)`: `x as f32`; Triton's `float("-inf")` (a mask's fill) is Tile's `-inf` (huser30:
    the help was "`x as f32`", which applied to the string is an error again)."""
    arg = e.args[0].value if len(e.args) == 1 and e.args[0].name is None else None
    if ty == "f32" and isinstance(arg, ast.StrLit) and arg.value.strip().lower() in _PY_SPECIALS:
        v = _PY_SPECIALS[arg.value.strip().lower()]
        named = {"inf": "f32::INFINITY", "-inf": "f32::NEG_INFINITY", "nan": "f32::NAN"}[v]
        return (f"Python's `float(\"{arg.value}\")` is `{v}` in Tile, an untyped float constant that takes its "
                f"context's type (`{named}` names f32's)")
    x = tcx.snippet(arg) if arg is not None and not isinstance(arg, ast.StrLit) else None
    return f"convert with `as`: `{x if x and len(x) < 40 else 'x'} as {ty}`"


def _offset_hint_help(tcx: CheckCx | None, e: ast.Call | ast.MethodCall | None, name: str) -> str:
    """Triton's `tl.multiple_of(x, 16)` (a call, or a method call of `tl`): the value itself (huser30). `tilec doc
    NAME` asks with no call (`tcx` and `e` None)."""
    x = tcx.snippet(e.args[0].value) if tcx is not None and e is not None and e.args else None
    return (f"Triton's `tl.{name}` is a hint about pointer offsets: Tile's tiles are laid out and aligned by the "
            "compiler, with no offsets to describe; use the value itself" + (f", `{x}`" if x and len(x) < 40 else ""))


# Functions of other languages with a Tile spelling, and the help that says it.
HABITS = {
    "range": _range_help,
    # Triton's and CUDA's names for where a block is
    "program_id": lambda tcx, e: "Triton's `tl.program_id(axis)` is `block_id(axis)`: this tile block's index "
                                 "along a grid axis",
    "num_programs": lambda tcx, e: "Triton's `tl.num_programs(axis)` is `num_blocks(axis)`",
    "cdiv": lambda tcx, e: "import it: `use std::math::cdiv;`",
    "zeros_like": lambda tcx, e: _like_help(tcx, e, "zeros", ""),
    "empty": lambda tcx, e: "Tile has no uninitialised tensors: `zeros::<f32>([..])`",
    "empty_like": lambda tcx, e: "Tile has no uninitialised tensors: " + _like_help(tcx, e, "zeros", ""),
    "full_like": lambda tcx, e: _like_help(tcx, e, "full", ", value"),
    "trans": lambda tcx, e: "write `t.transpose()` (or `t.permute([..])`)",
    "associative_scan": lambda tcx, e: "an inclusive prefix sum is `cumsum(t, axis)`",
    "len": len_help,
    "float": lambda tcx, e: _py_cast_help(tcx, e, "f32"),
    "int": lambda tcx, e: _py_cast_help(tcx, e, "i32"),
    "powf": lambda tcx, e: "write `pow(x, y)` or `x.pow(y)`",
    # CUDA's: a tile block has no threads to synchronise, and `fmaxf` is element-wise
    "__syncthreads": lambda tcx, e: "a kernel's operations are on whole tiles, in order: there are no threads to "
                                    "synchronise; remove it",
    "debug_barrier": lambda tcx, e: "a kernel's operations are on whole tiles, in order: there are no threads to "
                                    "synchronise; remove it",
    "fmaxf": lambda tcx, e: "the element-wise maximum is `maximum(a, b)`",
    "fmax": lambda tcx, e: "the element-wise maximum is `maximum(a, b)`",
    "fminf": lambda tcx, e: "the element-wise minimum is `minimum(a, b)`",
    "fmin": lambda tcx, e: "the element-wise minimum is `minimum(a, b)`",
    "pow2": lambda tcx, e: "write `exp2(x)`",
    # Triton's compiler hints on offsets (huser30: "define it"): a tile's layout is the compiler's, aligned by
    # construction; the value itself is what the kernel meant
    **{n: (lambda tcx, e, n=n: _offset_hint_help(tcx, e, n))
       for n in ("multiple_of", "max_contiguous", "max_constancy", "assume")},
    # Triton 3's last-axis pairs (GPT-J-style rotary, complex numbers as pairs; huser30: `split` was "a similar
    # name: `print`", `join` and `interleave` "define it"), and its correctly rounded math (`div_rn` was offered
    # `cdiv_wrapping`)
    "split": lambda tcx, e: ("Triton's `tl.split(x)` (a last axis of size 2 as two tiles) is a pick along that axis: "
                             "with `k` the last axis, `where(arange::<i32>(2) == 0, x, 0.0).sum(k)` and `== 1` (the "
                             "`arange` reshaped to x's rank, 1 on every other axis)"),
    "join": lambda tcx, e: ("Triton's `tl.join(a, b)` (a new last axis of size 2) is a `where` over it: "
                            "`where(arange::<i32>(2).reshape([1, .., 2]) == 0, a.reshape([.., 1]), b.reshape([.., 1]))` "
                            "(the shapes written out; `.reshape([.., 2 * n])` of that interleaves them)"),
    "interleave": lambda tcx, e: ("Triton's `tl.interleave(a, b)` is their join along a new last axis of size 2, "
                                  "reshaped: `where(arange::<i32>(2).reshape([1, .., 2]) == 0, a.reshape([.., 1]), "
                                  "b.reshape([.., 1])).reshape([.., 2 * n])` (the shapes written out)"),
    "div_rn": lambda tcx, e: "`x / y`: Tile's float division is IEEE's, correctly rounded, on both engines",
    "sqrt_rn": lambda tcx, e: "`sqrt(x)`: Tile's `sqrt` is IEEE's, correctly rounded, on both engines",
    "fdiv": lambda tcx, e: "`x / y`: Tile's float division is IEEE's, correctly rounded, on both engines",
    # (huser30: `static_range` was "a similar name: `arange`", `device_print` offered `decode_split`)
    "static_range": lambda tcx, e: ("Triton's `tl.static_range(n)` is a plain loop in Tile, `for i in 0..n` "
                                    "(`range` and `static_range` alike: Tile has one loop form)"),
    "device_print": lambda tcx, e: "`print(..)` prints from a kernel, each block's values (`tilec doc print`)",
    # PyTorch's and NumPy's tensors of listed values (round 16: `tensor::<i32>([40, 17, 1, 0])`)
    **dict.fromkeys(("tensor", "array", "asarray", "as_tensor", "from_list"), values_help),
    # NumPy's and PyTorch's joins and sorts, which Tile has not (round 9)
    **dict.fromkeys(("concat", "cat", "concatenate", "stack", "hstack", "vstack"), lambda tcx, e: _JOIN),
    **dict.fromkeys(("sort", "argsort"), lambda tcx, e: _SORT_ALL.replace("{x}", "t")),
    "topk": lambda tcx, e: _SORT.replace("{x}", "t"),
    # and their reversals (round 11)
    **dict.fromkeys(FLIPS, lambda tcx, e: _flip_call_help(tcx, e)),
}


# Keyword arguments of Triton's `tl.load`/`tl.store`, `tl.zeros` and the
# reductions, with the Tile spelling of what they ask for.
_EDGES = ("Tile has no masks: loads past a tensor's edge read zeros (`p.load_padded([i, ..], value)` reads "
          "`value` there instead) and stores past it are dropped")
KW_HABITS = {
    "mask": _EDGES, "other": _EDGES, "boundary_check": _EDGES, "padding_option": _EDGES,
    "dtype": "give the element type with a turbofish (`zeros::<f32>([..])`) or convert with `as` (`t as f32`)",
    "keep_dims": "a reduction removes its axis: put a size-1 axis back with `.reshape([..])`",
    "keepdims": "a reduction removes its axis: put a size-1 axis back with `.reshape([..])`",
    # (huser30: PyTorch's `keepdim = true` was told to drop `keepdim =`, which left `t.max(1, true)`, E0105)
    "keepdim": "a reduction removes its axis: put a size-1 axis back with `.reshape([..])`",
    "eviction_policy": "how the GPU caches a kernel's loads is a hint of the kernel: "
                       "`#[hints(stages = 3, evict_first = 1)]` (`tilec doc hints`)",
    "cache_modifier": "how the GPU caches a kernel's loads is a hint of the kernel: "
                      "`#[hints(stages = 3, evict_first = 1)]` (`tilec doc hints`)",
    # (huser29: NumPy's `assert_allclose(.., equal_nan=True)` was "use one of those names": `rtol`, `atol`)
    "equal_nan": "NaN is close to nothing, not even a NaN: with `a` and `b` the two tensors, check the NaNs' "
                 "places, `assert(((a != a) == (b != b)).min())`, and the other elements, "
                 "`assert_close(&where(a != a, 0.0, a), &where(b != b, 0.0, b))`",
}


# What a tile's shape is asked with (`t.shape()`, `t.size(0)`, `len(t)`): on a tile, its type's dimensions
SHAPE_WORDS = frozenset({"shape", "size", "numel", "dim", "ndim", "len", "shapes"})


# Methods of NumPy and PyTorch arrays with a Tile spelling (on tiles and
# tensors), and the help that says it (`{x}`: the receiver as written).
AS = "convert with `as`: `{{x}} as {}`"
# PyTorch's `x.cuda()`, `x.to("cuda")`
DEVICES = ("a program does not move tensors between devices: `tilec run FILE --device gpu` runs its kernels on "
            "the GPU (`--device cpu` on the interpreter); use `{x}` itself")
METHOD_HABITS = {
    "len": "the size of the first axis is `{x}.shape()[0]`",
    "size": "`{x}.shape()` lists the sizes of the axes",
    "numel": "`{x}.shape()` lists the sizes of the axes (the number of elements is their product)",
    "dim": "`{x}.shape()` lists the sizes of the axes", "ndim": "`{x}.shape()` lists the sizes of the axes",
    "mean": "divide the sum: `{x}.sum() / n` (along axis k: `{x}.sum(k) / n`)",
    "var": "no variance method: `let d = {x} - mean; (d * d).sum(k) / n`, with the mean reshaped to keep axis k "
           "(`{x}.sum(k).reshape([..]) / n`)",
    "std": "no standard deviation method: the `sqrt` of the variance, `sqrt((d * d).sum(k) / n)` with "
           "`d = {x} - mean`",
    "clamp": "`minimum(maximum({x}, lo), hi)` clamps each element into [lo, hi]",
    "clip": "`minimum(maximum({x}, lo), hi)` clamps each element into [lo, hi]",
    "relu": "`maximum({x}, 0.0)` (or `use std::nn::relu;` for f32 tiles)",
    "to": AS.format("f16"), "astype": AS.format("f16"), "type": AS.format("f16"),
    "cast": AS.format("f16"), "float": AS.format("f32"), "half": AS.format("f16"),
    "double": AS.format("f64"), "int": AS.format("i32"), "bfloat16": AS.format("bf16"),
    "view": "`{x}.reshape([..])` gives the same elements in another shape",
    "flatten": "`{x}.reshape([n])` gives the same elements in one axis",
    "unsqueeze": "`{x}.reshape([..])` with the new axis of size 1 written out",
    "squeeze": "`{x}.reshape([..])` without the axes of size 1",
    "expand": "`{x}.broadcast([..])` repeats axes of size 1",
    "expand_as": "`{x}.broadcast([..])` repeats axes of size 1",
    "broadcast_to": "`{x}.broadcast([..])` repeats axes of size 1",
    "amax": "`{x}.max(k)` is the maximum along axis k (`{x}.max()` of all)",
    "amin": "`{x}.min(k)` is the minimum along axis k (`{x}.min()` of all)",
    "t": "`{x}.transpose()` swaps the two axes of a 2-D tile or tensor",
    "copy": "`{x}.clone()` copies a tensor", "detach": "`{x}.clone()` copies a tensor",
    # round 18: PyTorch's in-place setters; a host tensor is a value, replaced whole
    # (huser26: "tensors are not changed in place", where compound assignment changes one in place, the way E0307
    # itself tells of a tensor a graph captured; a rebinding there is E0307)
    "copy_": "assign a copy: `{x} = src.clone();` (`{x}` a `let mut`), or, to keep the same tensor (one a graph "
             "captured), change it in place: `{x} *= 0.0; {x} += &src;` (its values finite)",
    "fill_": "assign a new tensor: `{x} = full::<T>({x}.shape(), v);` (`{x}` a `let mut`), or, to keep the same "
             "tensor (one a graph captured), change it in place: `{x} *= 0.0; {x} += v;` (its values finite)",
    "zero_": "assign a new tensor: `{x} = zeros::<T>({x}.shape());` (`{x}` a `let mut`), or, to keep the same "
             "tensor (one a graph captured), change it in place: `{x} *= 0.0;` (its values finite)",
    "dtype": "the element type is part of `{x}`'s type, known when the program is checked (`:type {x}` in "
             "`tilec repl` shows it)",
    "all": "`{x}.min()` of `bool` elements is true when all are (`{x}.min(k)` along axis k)",
    "any": "`{x}.max()` of `bool` elements is true when any is (`{x}.max(k)` along axis k)",
    "cuda": DEVICES, "cpu": DEVICES, "contiguous": "tensors are always contiguous (row-major): use `{x}` itself",
    "numpy": "a host tensor is already an array: use `{x}` itself (`print({x})`, `{x}.save_npy(\"x.npy\")`)",
    "repeat": "`{x}.reshape([1, n]).broadcast([k, n])` repeats all of `{x}` k times along a new axis, and "
              "`{x}.reshape([n, 1]).broadcast([n, k])` each element (`.reshape([n * k])` joins the axes)",
    "tile": "`{x}.reshape([1, n]).broadcast([k, n])` repeats all of `{x}` k times along a new axis "
            "(`.reshape([k * n])` joins the axes)",
    "sort": _SORT_ALL, "argsort": _SORT_ALL, "topk": _SORT,
    # round 22: Rust's iterators (`x.iter().sum()` was "a similar name: `item`")
    **dict.fromkeys(("iter", "into_iter", "iter_mut"), "tensors and tiles have no iterators: they are reduced whole "
                    "(`{x}.sum()`, `{x}.max()`, `{x}.min()`, `{x}.prod()`) and mapped element-wise (`{x} * 2.0`, "
                    "`exp({x})`); `{x}[i]` is an element or row on the host"),
    "to_vec": "`{x}` is a value already: `{x}.clone()` copies it, `{x}[i]` reads an element or row on the host",
    **dict.fromkeys(("slice", "narrow"), "`{x}[a..b]` is rows a..b on the host (a kernel loads them by `partition`)"),
    # round 13: Rust's Euclidean division (Python's floor forms for a positive divisor), PyTorch's masked_fill
    "rem_euclid": "`where({x} % b < 0, {x} % b + abs(b), {x} % b)` is `rem_euclid(b)`, never negative (Tile's "
                  "`%` takes the dividend's sign, as Rust's `%` does)",
    "div_euclid": "`({x} - rem) / b` with `let rem = where({x} % b < 0, {x} % b + abs(b), {x} % b);` is "
                  "`div_euclid(b)` (Tile's `/` truncates toward zero, as Rust's `/` does)",
    "masked_fill": "`where(mask, v, {x})` puts `v` where `mask` is true and keeps `{x}` elsewhere",
    "masked_fill_": "`where(mask, v, {x})` puts `v` where `mask` is true and keeps `{x}` elsewhere (a new value: "
                    "tiles and host tensors are not changed in place)",
    # round 11: joins as methods (`t.concat([u])`); reversals (PyTorch's `t.flip(0)`) are `_flip_help`'s
    **dict.fromkeys(("concat", "cat", "concatenate", "stack", "append"), _JOIN),
    **dict.fromkeys(FLIPS, _flip_help(None, "{x}").replace("{", "{{").replace("}", "}}").replace("{{x}}", "{x}")),
}


CONVERSIONS, VALUE_KINDS = ("to", "astype", "type", "cast"), ("tile", "tensor", "param", "scalar")


def conversion_target(e: ast.MethodCall) -> str | None:
    """The Tile element type that `x.to(f32)`, `x.astype(np.float16)` or
    `x.to::<i8>()` names, if it names one."""
    if e.method.name not in CONVERSIONS:
        return None
    if e.generics and isinstance(e.generics[0], ast.NamedType) and DType.parse(e.generics[0].name.name):
        return e.generics[0].name.name
    if len(e.args) != 1:
        return None
    a = e.args[0].value
    name = a.ident.name if isinstance(a, ast.Name) else a.segments[-1].name if isinstance(a, ast.Path) \
        else a.field.name if isinstance(a, ast.Field) else None
    if name is None:
        return None
    return name if DType.parse(name) is not None else FOREIGN_TYPES.get(name)


def function_habit(name: str) -> str | None:
    """How Tile spells another language's function or module `name`
    (`program_id`, `range`, `tl`, `float16`), for `tilec doc NAME`; None if it is not one."""
    if name in FOREIGN_MODULES:
        return (f"Tile has no `{name}` module: its built-ins take no prefix (`{name}.sum(t, 1)` is `sum(t, 1)`), "
                "and `tilec doc` lists them")
    if name in FOREIGN_TYPES:
        return f"`{name}` is Tile's type `{FOREIGN_TYPES[name]}`"
    if name == "range":
        return "write a range `a..b` (`a..=b` includes `b`), as in `for i in 0..n { .. }`"
    if name == "len":
        return None  # the method's help says it
    habit = HABITS.get(name)
    if habit is None and name in MATH_HABITS and name not in METHOD_HABITS:  # (`mean`: the method's help)
        return MATH_HABITS[name].format(x="x")
    return None if habit is None else habit(None, None)  # type: ignore[arg-type]


def method_habit(name: str) -> str | None:
    """How Tile spells another library's tile or tensor method `name`
    (`mean`, `astype`, `clamp`), for `tilec doc NAME`; None if it is not one."""
    habit = METHOD_HABITS.get(name, MATH_HABITS.get(name)) or scalar_method_habit(name, [])
    return None if habit is None else habit.format(x="t")


#: the argument names a method habit's code uses, for the call's own arguments to replace (round 13)
HABIT_ARGS = {"rem_euclid": ("b",), "div_euclid": ("b",), "masked_fill": ("mask", "v"),
               "masked_fill_": ("mask", "v"), "fill_": ("v",), "copy_": ("src",)}


def with_args(habit: str, names: tuple[str, ...], args: list[str]) -> str:
    """`habit` with each of its code's whole-word `names` (inside backticks) replaced by the call's argument,
    parenthesised where an operator would bind it to its neighbours; braces kept for `format`."""
    parts = habit.split("`")
    for i in range(1, len(parts), 2):
        for name, arg in zip(names, args, strict=True):
            a = (arg if re.fullmatch(r"-?[\w.]+", arg) else operand(arg)).replace("{", "{{").replace("}", "}}")
            parts[i] = re.sub(rf"(?<![\w.]){name}(?!\w)", lambda _m, a=a: a, parts[i])
    return "`".join(parts)


def operand(x: str) -> str:
    """`x` as written, in parentheses where an operator outside brackets would bind it to a help's neighbours
    (`(v * 2.0).log10()` is `log((v * 2.0))`'s `v * 2.0`; `{x} * {x}` of it needs them)."""
    depth = 0
    for ch in re.sub(r"::<[^<>]*>", "", x):  # (a turbofish's `<..>` are brackets)
        depth += ch in "([{"
        depth -= ch in ")]}"
        if depth == 0 and ch in " +-*/%<>=!&|^":
            return f"({x})"
    return x


def int_pow_error(tcx: CheckCx, exprs: list[ast.Expr], ty: Type, dt: DType) -> Type:
    """E0204 for `pow` of an integer base `exprs[0]` (of type `ty`), with `int_pow_help`."""
    return tcx.emit(tcx.err(T.INVALID_OPERAND, "`pow` needs floating-point elements", exprs[0].span,
                            f"this is `{ty}`").with_help(int_pow_help(tcx, exprs[0], exprs[1], dt)))


def int_pow_help(tcx: CheckCx, base: ast.Expr, exp: ast.Expr, dt: DType) -> str:
    """`t.pow(2)` of an integer tile (Rust's `i32::pow`; round 22): E0201's help cast the literal, `2 as i32`, and
    that led to E0204, whose help cast both to `f32`, a float result stored into the integer tile. Tile's `pow` is
    a float power: a small literal power is repeated `*`, any other goes through f64 and back."""
    x = tcx.cast_snippet(base) or "x"
    if isinstance(exp, ast.IntLit) and 2 <= exp.value <= 4:
        return f"Tile's `pow` is a float power: the integer power `{x}` to the {exp.value} is `" + \
            " * ".join([x] * exp.value) + "` (wrapping, as integer arithmetic does)"
    n = tcx.cast_snippet(exp) or "n"
    return (f"Tile's `pow` is a float power: an integer power is repeated `*` (a loop of `p = p * {x}`), or "
            f"`pow({x} as f64, {n} as f64) as {dt}`, exact while the power stays below 2^53")


def permute_help(rank: int) -> str:
    """`transpose` of a value of `rank` axes other than 2 (round 24: "use `.permute([..])` for other ranks"): the
    two permutations meant, written out."""
    if rank < 2:
        return "a value of one axis has nothing to transpose: drop `.transpose()`"
    last = [*range(rank - 2), rank - 1, rank - 2]
    rev = list(reversed(range(rank)))
    return (f"`transpose` swaps the axes of a 2-D value; of {rank} axes, `.permute([{', '.join(map(str, last))}])` "
            f"swaps the last two (PyTorch's `transpose(-2, -1)`) and `.permute([{', '.join(map(str, rev))}])` "
            "reverses them all (NumPy's `.T`)")
