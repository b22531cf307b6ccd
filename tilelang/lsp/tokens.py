"""Semantic tokens and inlay hints: what the editor paints over the text.

`semantic_tokens` classifies every identifier (`TOKEN_TYPES`, with
`TOKEN_MODIFIERS` such as `mutable` and `defaultLibrary`) from the checker's
symbols; `inlay_hints` shows the inferred type after each `let` binding that
has no written type.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tilelang.lsp.document import (
    DTYPE_DOCS,
    Analysis,
    builtin_names,
    lookup_builtin,
    pattern_bindings,
    resolve_name,
    shown_type,
)
from tilelang.source import Span
from tilelang.syntax import ast


@dataclass(frozen=True, slots=True)
class InlayHint:
    offset: int  # where the hint is shown (between characters)
    label: str
    kind: str  # "type" (a binding's type) or "generics" (inferred const generics)


def inlay_hints(an: Analysis, start: int = 0, end: int | None = None) -> list[InlayHint]:
    """Types the checker inferred for `let` and `for` bindings without an
    annotation, and the const generics it inferred at kernel launches
    (`add<B = 1024>(z.partition([1024]), ...)`), between `start` and `end`."""
    if an.module is None or an.program is None:
        return []
    end = len(an.text) if end is None else end
    hints: list[InlayHint] = []
    for node in ast.walk(an.module):
        if node.span.file != an.file.id or node.span.end < start or node.span.start > end:
            continue
        match node:
            case ast.Let(ty=None) | ast.For():
                for b in pattern_bindings(node.pattern, "local"):
                    ty = shown_type(getattr(an.symbol_of(b.decl), "ty", None))
                    if ty is not None and start <= b.span.end <= end:
                        hints.append(InlayHint(b.span.end, f": {ty}", "type"))
            case ast.Call(generics=()):
                inst = an.program.instantiation_of(node)
                fn = an.program.callee_of(node)
                generics: tuple[str, ...] = fn.const_generics if fn is not None else ()
                if not inst and not generics:
                    continue
                names = list(generics or inst or ())
                deferred = an.program.deferred_of(node)
                parts = []
                for name in names:
                    if inst and name in inst:
                        parts.append(f"{name} = {inst[name]}")
                    elif name in deferred:
                        parts.append(f"{name} = ?")
                if parts and start <= node.callee.span.end <= end:
                    hints.append(InlayHint(node.callee.span.end, "<" + ", ".join(parts) + ">", "generics"))
            case _:
                pass
    return sorted(hints, key=lambda h: h.offset)


TOKEN_TYPES = ("namespace", "type", "typeParameter", "parameter", "variable", "function", "method")


# `mutable`: a `let mut` binding or a `&mut` tensor parameter (not an LSP
# standard modifier; rust-analyzer uses the same name, and themes know it).
TOKEN_MODIFIERS = ("declaration", "readonly", "mutable", "defaultLibrary")


@dataclass(frozen=True, slots=True)
class SemanticToken:
    span: Span
    type: str  # one of TOKEN_TYPES
    modifiers: tuple[str, ...] = ()


def _is_mut_param(decl: Any) -> bool:
    return isinstance(decl, ast.Param) and isinstance(decl.ty, ast.RefType) and decl.ty.mutable


def _token_for_decl(decl: Any, kind: str | None) -> tuple[str, tuple[str, ...]] | None:
    """Token type and modifiers of a name that refers to `decl` (symbol kind
    `kind`, from sema or from the syntactic scope walk)."""
    match kind:
        case "local":
            return "variable", ("mutable",) if getattr(decl, "mutable", False) else ()
        case "param":
            return "parameter", ("mutable",) if _is_mut_param(decl) else ()
        case "const":
            return "variable", ("readonly",)
        case "generic":
            return "typeParameter", ("readonly",)
        case "type-param":
            return "typeParameter", ()
        case "fn" | "kernel":
            return "function", ()
        case "builtin":
            return "function", ("defaultLibrary",)
        case "method-builtin":
            return "method", ("defaultLibrary",)
        case "module" | "import":
            return "namespace", ()
        case _:
            return None


def semantic_tokens(an: Analysis) -> list[SemanticToken]:
    """Names classified by what they refer to, in source order: what the
    lexical TextMate grammar cannot know (a parameter from a local, a `&mut`
    parameter, a const generic used in a shape, a builtin from a user fn)."""
    if an.module is None:
        return []
    out: list[SemanticToken] = []
    fid = an.file.id

    def add(span: Span, kind: str, mods: tuple[str, ...] = ()) -> None:
        if span.file == fid and span.end > span.start:
            out.append(SemanticToken(span, kind, mods))

    def use(node: Any, ident: ast.Ident) -> None:
        sym = an.symbol_of(node)
        if sym is not None:
            kind = getattr(getattr(sym, "kind", None), "value", None)
            token = _token_for_decl(getattr(sym, "decl", None), kind)
        else:
            b = resolve_name(an.module, fid, ident.name, ident.span.start)
            token = _token_for_decl(b.decl, b.kind) if b is not None else None
            if token is None and ident.name in builtin_names():
                token = ("function", ("defaultLibrary",))
        if token is not None:
            add(ident.span, *token)

    for node in ast.walk(an.module):
        match node:
            case ast.FnDecl():
                add(node.name.span, "function", ("declaration",))
            case ast.GenericParam():
                add(node.name.span, "typeParameter",
                    ("declaration", "readonly") if node.is_const else ("declaration",))
            case ast.Param():
                add(node.name.span, "parameter",
                    ("declaration", "mutable") if _is_mut_param(node) else ("declaration",))
            case ast.NamePat():
                add(node.name.span, "variable", ("declaration", "mutable") if node.mutable else ("declaration",))
            case ast.ConstDecl():
                add(node.name.span, "variable", ("declaration", "readonly"))
            case ast.UseDecl():
                items = node.names if node.names is not None else ()
                modules = node.path
                if node.names is None and not node.glob and node.path:
                    modules, items = node.path[:-1], node.path[-1:]
                for seg in modules:
                    add(seg.span, "namespace")
                prefix = "::".join(seg.name for seg in modules)
                for item in items:
                    sym = an.program.items.get(f"{prefix}::{item.name}") if an.program is not None else None
                    kind = sym.kind.value if sym is not None else None
                    add(item.span, *(_token_for_decl(sym.decl if sym is not None else None, kind)
                                     or ("function", ())))
            case ast.Name():
                use(node, node.ident)
            case ast.Path():
                for seg in node.segments[:-1]:
                    add(seg.span, "namespace")
                use(node, node.segments[-1])
            case ast.MethodCall():
                add(node.method.span, "method",
                    ("defaultLibrary",) if lookup_builtin(node.method.name, method=True) else ())
            case ast.NamedType():
                name = node.name.name
                if name in DTYPE_DOCS:
                    add(node.name.span, "type", ("defaultLibrary",))
                else:
                    b = resolve_name(an.module, fid, name, node.span.start)
                    if b is not None and b.kind in ("generic", "type-param"):
                        add(node.name.span, "typeParameter")
                    else:
                        add(node.name.span, "type")
            case _:
                pass
    out.sort(key=lambda t: t.span.start)
    return out
