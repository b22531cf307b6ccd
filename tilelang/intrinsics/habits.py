"""Names from other languages that users write in Tile code, with what they
are in Tile: the modules Triton, NumPy and PyTorch call their built-ins
through (`tl.program_id`, `np.maximum`, `torch.float16`) and the element
types those modules name. Read by the parser's error help (`torch.float16`
where a type goes) and the checker's (`tl.sum(t, 0)` in an expression)."""

from __future__ import annotations

from typing import Any

from tilelang.dtypes import DType
from tilelang.syntax import ast

#: a module prefix -> the language whose it is
FOREIGN_MODULES = {"tl": "Triton", "triton": "Triton", "np": "NumPy", "numpy": "NumPy", "torch": "PyTorch",
                   "F": "PyTorch", "jnp": "JAX", "cp": "CuPy", "cupy": "CuPy", "math": "Python", "cuda": "CUDA"}

#: an element type's name in those modules -> Tile's
FOREIGN_TYPES = {"float16": "f16", "half": "f16", "bfloat16": "bf16", "float32": "f32", "float": "f32",
                 "float64": "f64", "double": "f64", "int8": "i8", "int16": "i16", "short": "i16", "int32": "i32",
                 "int": "i32", "int64": "i64", "long": "i64", "uint8": "u8", "uint16": "u16", "uint32": "u32",
                 "uint64": "u64", "bool": "bool", "bool_": "bool", "int1": "bool"}


def foreign_type_help(prefix: str, member: str) -> str | None:
    """`torch.float16` -> the help naming `f16`; None if `prefix.member` is no such type."""
    lang, t = FOREIGN_MODULES.get(prefix), FOREIGN_TYPES.get(member)
    if lang is None or t is None:
        return None
    return (f"{lang}'s `{prefix}.{member}` is Tile's type `{t}`: give it with a turbofish "
            f"(`zeros::<{t}>([..])`) or convert with `as` (`x as {t}`)")


def values_help(tcx: Any, e: ast.Call | None) -> str:
    """`tensor([40, 17, 1, 0])` (PyTorch's `torch.tensor`, NumPy's `np.array`; round 16): Tile has no tensor
    of listed values; a short list of literals written out as a `where` over positions, which runs on the
    host and in kernels alike."""
    base = ("Tile has no tensor of listed values: pick each element by its position with `where` over an "
            "`arange`, or read the values with `load_npy(\"values.npy\")`")
    arr = e.args[0].value if e is not None and e.args else None  # (`tilec doc tensor`: no call)
    elems = arr.elems if isinstance(arr, ast.ArrayExpr) else ()
    texts = [tcx.snippet(x) or "" for x in elems]
    lits = (ast.IntLit, ast.FloatLit, ast.BoolLit)
    simple = all(isinstance(x, lits) or (isinstance(x, ast.Unary) and isinstance(x.operand, lits)) for x in elems)
    if not 2 <= len(texts) <= 6 or not simple or not all(t and len(t) < 16 and " " not in t for t in texts):
        return base
    n, expr = len(texts), texts[-1]
    for k in range(n - 2, -1, -1):
        expr = f"where(arange::<i32>({n}) == {k}, {texts[k]}, {expr})"
    # `tensor::<f16>([..])`: that type
    ty = tcx.snippet(e.generics[0]) if e is not None and len(e.generics) == 1 else None
    if ty in {d.value for d in DType} and ty != ("f32" if any(isinstance(x, ast.FloatLit) or (
            isinstance(x, ast.Unary) and isinstance(x.operand, ast.FloatLit)) for x in elems) else "i32"):
        expr = f"{expr} as {ty}"
    return f"{base}: `{expr}`"
