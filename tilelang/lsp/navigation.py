"""Navigation: go to definition, references, rename, symbols, links.

`definition` and `references` follow the checker's symbols where the program
checked, else the syntactic scope walk; `rename_spans` is every reference
when the new name is a valid, free identifier; `document_symbols` outlines
the file's items, `workspace_items` matches item names by subsequence, and
`document_links` makes `use` paths clickable.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import assert_never

from tilelang.lsp.document import (
    Analysis,
    cursor_target,
    decl_name_span,
    fn_header,
    item_bindings,
    module_span,
    one_line,
    path_at,
    pattern_bindings,
    resolve_name,
    use_target,
)
from tilelang.source import Span
from tilelang.syntax import ast


def definition(an: Analysis, offset: int) -> Span | None:
    """Where the name under the cursor is declared (None for builtins)."""
    path = path_at(an.module, an.file.id, offset)
    if len(path) >= 2 and isinstance(path[-1], ast.StrLit) and isinstance(path[-2], ast.UseDecl):
        return use_file_span(an, path[-1])  # `use "util.tile";`: the start of that file, as `use std::nn`
    if len(path) < 2 or not isinstance(path[-1], ast.Ident):
        return None
    ident, parent = path[-1], path[-2]
    grand = path[-3] if len(path) >= 3 else None
    if isinstance(parent, (ast.FnDecl, ast.Param, ast.NamePat, ast.GenericParam, ast.ConstDecl)):
        return ident.span  # already at the declaration
    if isinstance(parent, ast.UseDecl):
        what, target = use_target(an, parent, ident)
        if what == "item":
            span = getattr(target, "span", None)
            return span if isinstance(span, Span) and span.file >= 0 else None
        return module_span(an, target)
    candidates = [parent]
    if isinstance(grand, ast.Call | ast.MethodCall):
        candidates.append(grand)
    for node in candidates:
        sym = an.symbol_of(node)
        span = getattr(sym, "span", None)
        if isinstance(span, Span) and span.file >= 0:
            return span
    if isinstance(parent, ast.Name | ast.NamedType):
        b = resolve_name(an.module, an.file.id, ident.name, offset)
        if b is not None:
            return b.span
    return None


def references(an: Analysis, offset: int, include_declaration: bool = True) -> list[Span]:
    """Every place the symbol under the cursor is named (in every loaded
    file), declaration first when asked for. Builtins have none."""
    target = cursor_target(an, offset)
    if target is None:
        return []
    sym, binding = target
    spans: list[Span] = []
    if sym is not None and an.program is not None:
        if getattr(getattr(sym, "kind", None), "value", None) in ("builtin", "method-builtin"):
            return []
        decl_span = getattr(sym, "span", None)
        for node, other in list(an.program.symbols.items()):
            if other is sym:
                span = decl_name_span(node)
                if span is not None and span not in spans:
                    spans.append(span)
        if isinstance(decl_span, Span) and decl_span.file >= 0 and decl_span not in spans:
            spans.append(decl_span)
    else:
        assert binding is not None
        decl_span = binding.span
        spans.append(decl_span)
        for n in ast.walk(an.module):
            if isinstance(n, ast.Name) and n.ident.name == binding.name:
                b = resolve_name(an.module, an.file.id, n.ident.name, n.span.start)
                if b is not None and b.span == decl_span:
                    spans.append(n.ident.span)
    decl = decl_span if isinstance(decl_span, Span) else None
    rest = sorted((s for s in spans if s != decl), key=lambda s: (s.file, s.start))
    if include_declaration and decl is not None and decl.file >= 0:
        return [decl, *rest]
    return rest


def rename_spans(an: Analysis, offset: int, new_name: str) -> list[Span] | str:
    """The spans to replace to rename the symbol under the cursor, or a
    message saying why it cannot be renamed."""
    from tilelang import highlight

    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", new_name) or new_name in highlight.KEYWORDS:
        return f"`{new_name}` is not a valid name"
    spans = references(an, offset)
    if not spans:
        return "there is no renamable name here"
    if any(s.file != an.file.id for s in spans):
        return "this name is declared or used in another file; rename it there"
    return spans


def _subsequence(query: str, name: str) -> bool:
    it = iter(name.lower())
    return all(ch in it for ch in query.lower())


def workspace_items(an: Analysis, query: str) -> list[tuple[str, str, Span]]:
    """(name, kind, name span) of the items of the document and of every
    module it loaded (the stdlib, `use`d files) whose name matches `query`
    (its letters in order, case-insensitively, as editors filter)."""
    modules: list[ast.Module] = [an.module] if an.module is not None else []
    for info in an.program.modules.values() if an.program is not None else ():
        if info.ast is not an.module:
            modules.append(info.ast)
    out = []
    for module in modules:
        for b in item_bindings(module):
            if b.kind != "import" and _subsequence(query, b.name):
                out.append((b.name, b.kind, b.span))
    return out


def document_links(an: Analysis) -> list[tuple[Span, Path]]:
    """`use "other.tile";` strings and the files they name (when they exist),
    resolved next to the document as the module loader does."""
    if an.module is None:
        return []
    base = Path(an.name).parent if not an.name.startswith(("untitled:", "<")) else None
    out = []
    for item in an.module.items:
        if isinstance(item, ast.UseDecl) and item.file is not None and base is not None:
            target = base / item.file.value
            if target.is_file() and item.file.span.file == an.file.id:
                out.append((item.file.span, target.resolve()))
    return out


def use_file_span(an: Analysis, lit: ast.StrLit) -> Span | None:
    """The start of the file a `use "other.tile";` string names, where the
    check loaded it (`document_links` resolves it as the loader does)."""
    for span, target in document_links(an):
        if span == lit.span:
            for sf in an.sources:
                if not sf.name.startswith("<") and Path(sf.name).resolve() == target:
                    return Span(sf.id, 0, 0)
    return None


@dataclass(frozen=True, slots=True)
class DocSymbol:
    name: str
    kind: str  # "kernel" "fn" "const" "param" "generic" "local" "import"
    detail: str
    span: Span  # the whole declaration
    selection: Span  # its name
    children: tuple[DocSymbol, ...] = ()


def document_symbols(an: Analysis) -> list[DocSymbol]:
    if an.module is None:
        return []
    out: list[DocSymbol] = []
    for item in an.module.items:
        if item.span.file != an.file.id:
            continue
        match item:
            case ast.FnDecl():
                kids: list[DocSymbol] = [
                    DocSymbol(g.name.name, "generic", one_line(an.span_text(g.span)), g.span, g.name.span)
                    for g in item.generics
                ]
                kids += [
                    DocSymbol(p.name.name, "param", one_line(an.span_text(p.span)), p.span, p.name.span)
                    for p in item.params
                ]
                for stmt in item.body.stmts:
                    if isinstance(stmt, ast.Let):
                        kids += [
                            DocSymbol(b.name, "local", "let", stmt.span, b.span)
                            for b in pattern_bindings(stmt.pattern, "local")
                        ]
                out.append(DocSymbol(item.name.name, "kernel" if item.is_kernel else "fn",
                                     fn_header(an, item), item.span, item.name.span, tuple(kids)))
            case ast.ConstDecl():
                out.append(DocSymbol(item.name.name, "const", one_line(an.span_text(item.span)),
                                     item.span, item.name.span))
            case ast.UseDecl():
                out.append(DocSymbol(one_line(an.span_text(item.span)).removeprefix("use ").rstrip(";"),
                                     "import", "use", item.span, item.span))
            case _:
                assert_never(item)
    return out
