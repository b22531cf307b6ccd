"""Hover: what the name or call under the cursor is, as Markdown.

A builtin's signature and doc, a function's header with its doc comment, a
variable's type, a constant's value, a dtype's description, a kernel call's
instantiation (its const generics as the checker inferred them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tilelang.lsp.document import (
    DTYPE_DOCS,
    Analysis,
    Binding,
    fn_doc,
    fn_header,
    lookup_builtin,
    md_code,
    one_line,
    path_at,
    resolve_name,
    use_target,
)
from tilelang.source import Span
from tilelang.syntax import ast


@dataclass(frozen=True, slots=True)
class HoverInfo:
    markdown: str
    span: Span


def _builtin_markdown(sig: Any) -> str:
    where = getattr(getattr(sig, "context", None), "value", "both")
    lines = [md_code(sig.signature), "", sig.doc]
    if where == "kernel":
        lines += ["", "*inside a kernel or device function*"]
    elif where == "host":
        lines += ["", "*in host code*"]
    return "\n".join(lines)


def _value_text(value: Any, ty: Any) -> str:
    """A constant's value as `print` writes it: a float in its type's shortest digits (`const C: f32 =
    0.1` holds f32's 0.1, 0.10000000149011612 as a Python float)."""
    dt = getattr(ty, "dtype", None)
    if isinstance(value, float) and getattr(dt, "is_float", False):
        from tilelang.dtypes import DType
        from tilelang.interp.printing import format_scalar  # NumPy: imported on the first such hover

        return format_scalar(value if dt in (DType.BF16, DType.F64) else dt.np_dtype.type(value), dt)
    return str(value)


def _symbol_markdown(an: Analysis, sym: Any, ty: Any) -> str | None:
    kind = getattr(getattr(sym, "kind", None), "value", None)
    name = getattr(sym, "qualname", None) or getattr(sym, "name", "?")
    sym_ty = ty if ty is not None else getattr(sym, "ty", None)
    match kind:
        case "local":
            mut = "mut " if getattr(sym, "mutable", False) else ""
            return md_code(f"let {mut}{sym.name}: {sym_ty}" if sym_ty is not None else f"let {mut}{sym.name}")
        case "param":
            return md_code(f"{sym.name}: {sym_ty}") + "\n\nparameter"
        case "const":
            value = getattr(sym, "value", None)
            text = f"const {name}: {sym_ty}" if sym_ty is not None else f"const {name}"
            decl = getattr(sym, "decl", None)
            doc = fn_doc(an, decl) if isinstance(decl, ast.ConstDecl) else ""
            return md_code(text + (f" = {_value_text(value, sym_ty)}" if value is not None else "")) + (
                f"\n\n{doc}" if doc else "")
        case "generic":
            return md_code(f"const {sym.name}: {sym_ty or 'i32'}") + "\n\nconst generic parameter"
        case "type-param":
            return md_code(sym.name) + "\n\ntype parameter"
        case "fn" | "kernel":
            decl = getattr(sym, "decl", None)
            if isinstance(decl, ast.FnDecl):
                doc = fn_doc(an, decl)  # its `//` lines, as `help()` of it in Python shows them
                return md_code(fn_header(an, decl)) + (f"\n\n{doc}" if doc else "")
            return md_code(f"{'kernel ' if kind == 'kernel' else ''}fn {name}")
        case "builtin" | "method-builtin":
            sig = getattr(sym, "signature", None)
            if sig is not None:
                return _builtin_markdown(sig)
            return None
        case "module":
            return md_code(f"mod {getattr(sym, 'value', None) or name}")
        case _:
            return None


def _binding_markdown(an: Analysis, b: Binding) -> str:
    decl = b.decl
    match b.kind:
        case "kernel" | "fn":
            doc = fn_doc(an, decl)
            return md_code(fn_header(an, decl)) + (f"\n\n{doc}" if doc else "")
        case "const":
            doc = fn_doc(an, decl)
            return md_code(one_line(an.span_text(decl.span)).rstrip(";")) + (f"\n\n{doc}" if doc else "")
        case "param":
            return md_code(one_line(an.span_text(decl.span))) + "\n\nparameter"
        case "generic" | "type-param":
            return md_code(one_line(an.span_text(decl.span))) + "\n\ngeneric parameter"
        case "local":
            sym = an.symbol_of(decl)
            ty = getattr(sym, "ty", None)
            return md_code(f"let {b.name}: {ty}" if ty is not None else f"let {b.name}")
        case _:
            return md_code(f"use {b.name}")


def _instantiation_markdown(an: Analysis, call: ast.Call) -> str:
    """`B = 1024` for a call whose const generics the checker inferred."""
    if an.program is None:
        return ""
    inst = dict(an.program.instantiation_of(call))
    deferred = an.program.deferred_of(call)
    # (round 24: a device function called with the calling kernel's own generic read "`B = B`")
    parts = [f"`{k}` the caller's `{v}`" if str(v) == k else f"`{k} = {v}`" for k, v in inst.items()]
    parts += [f"`{k}` known at launch" for k in deferred if k not in inst]
    return "\n\ninstantiated with " + ", ".join(parts) if parts else ""


def hover(an: Analysis, offset: int) -> HoverInfo | None:
    """What to show for the cursor at `offset`: the type of the expression or
    the declaration of the name under it, or a builtin's signature and doc."""
    path = path_at(an.module, an.file.id, offset)
    if len(path) < 2:
        return None
    node, parent = path[-1], path[-2]
    if isinstance(node, ast.StrLit) and isinstance(parent, ast.UseDecl):  # `use "util.tile";`
        from tilelang.lsp.navigation import use_file_span

        span = use_file_span(an, node)
        if span is None:
            return None
        return HoverInfo(md_code(f'mod "{node.value}"') + f"\n\n`{an.sources.get(span.file).name}`", node.span)
    if isinstance(node, ast.Ident):
        md = _hover_ident(an, node, parent, path, offset)
        if md is not None:
            return HoverInfo(md, node.span)
    # Anything else: the type of the innermost typed expression.
    for n in reversed(path):
        ty = an.type_of(n)
        if ty is not None:
            return HoverInfo(md_code(str(ty)), n.span)
    return None


def _hover_ident(an: Analysis, ident: ast.Ident, parent: Any, path: list[Any], offset: int) -> str | None:
    grand = path[-3] if len(path) >= 3 else None
    match parent:
        case ast.Name():
            sym = an.symbol_of(parent)
            if sym is None and isinstance(grand, ast.Call):
                sym = an.symbol_of(grand)
            md = _symbol_markdown(an, sym, an.type_of(parent)) if sym is not None else None
            if md is not None:
                if isinstance(grand, ast.Call) and grand.callee is parent:
                    md += _instantiation_markdown(an, grand)
                return md
            b = resolve_name(an.module, an.file.id, ident.name, offset)
            if b is not None:
                return _binding_markdown(an, b)
            if isinstance(grand, ast.Call):
                sig = lookup_builtin(ident.name, method=False)
                if sig is not None:
                    return _builtin_markdown(sig)
            ty = an.type_of(parent)
            return md_code(f"{ident.name}: {ty}") if ty is not None else None
        case ast.Path():
            sym = an.symbol_of(parent)
            if sym is None and isinstance(grand, ast.Call):
                sym = an.symbol_of(grand)
            if ident is parent.segments[-1] and sym is not None:
                return _symbol_markdown(an, sym, None)
            prefix = "::".join(s.name for s in parent.segments[: parent.segments.index(ident) + 1])
            return md_code(f"mod {prefix}")
        case ast.MethodCall() if ident is parent.method:
            sym = an.symbol_of(parent)
            sig = getattr(sym, "signature", None) or lookup_builtin(ident.name, method=True)
            if sig is None:
                return None
            md = _builtin_markdown(sig)
            result = an.type_of(parent)
            if result is not None:
                # This call's own result, e.g. `x.max(1): Tensor<f32, [300]>`.
                call = one_line(an.span_text(parent.span))
                if len(call) > 60:
                    call = f".{ident.name}(..)"
                md += "\n\n" + md_code(f"{call}: {result}")
            return md
        case ast.FnDecl() if ident is parent.name:
            doc = fn_doc(an, parent)
            return md_code(fn_header(an, parent)) + (f"\n\n{doc}" if doc else "")
        case ast.Param():
            sym = an.symbol_of(parent)
            ty = getattr(sym, "ty", None)
            text = f"{ident.name}: {ty}" if ty is not None else one_line(an.span_text(parent.span))
            return md_code(text) + "\n\nparameter"
        case ast.NamePat():
            sym = an.symbol_of(parent)
            md = _symbol_markdown(an, sym, None) if sym is not None else None
            return md or md_code(f"let {ident.name}")
        case ast.GenericParam():
            return md_code(one_line(an.span_text(parent.span))) + "\n\ngeneric parameter"
        case ast.ConstDecl():
            sym = an.symbol_of(parent)
            md = _symbol_markdown(an, sym, None) if sym is not None else None
            return md or md_code(one_line(an.span_text(parent.span)).rstrip(";"))
        case ast.NamedType():
            doc = DTYPE_DOCS.get(ident.name)
            if doc is not None:
                return md_code(ident.name) + "\n\n" + doc
            b = resolve_name(an.module, an.file.id, ident.name, offset)
            return _binding_markdown(an, b) if b is not None else None
        case ast.Field():
            ty = an.type_of(parent)
            return md_code(f".{ident.name}: {ty}") if ty is not None else None
        case ast.UseDecl():
            what, target = use_target(an, parent, ident)
            if what == "item":
                return _symbol_markdown(an, target, None)
            name = getattr(target, "name", target)
            return md_code(f"mod {name}") if name else None
        case _:
            return None
