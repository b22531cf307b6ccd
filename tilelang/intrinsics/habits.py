"""Names from other languages that users write in Tile code, with what they
are in Tile: the modules Triton, NumPy and PyTorch call their built-ins
through (`tl.program_id`, `np.maximum`, `torch.float16`) and the element
types those modules name. Read by the parser's error help (`torch.float16`
where a type goes) and the checker's (`tl.sum(t, 0)` in an expression)."""

from __future__ import annotations

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
