"""Editor questions answered from the compiler's data, with no LSP in sight.

`analyze(text, name)` runs the same driver as `tilec check` (parse, names,
types, ownership: whatever stages exist) and keeps what an editor needs: the
diagnostics, the AST of the root file and the type checker's `Program`. The
query functions (`hover`, `definition`, `document_symbols`, `completions`,
`signature_help`) take an `Analysis` and a character offset into its text and
return plain dataclasses that `server.py` converts to LSP.

Invariants:
- Nothing here raises on any input: a document that does not parse, a stage
  that is not written yet, or a crash inside the compiler still gives an
  `Analysis` (with `internal_error` set for the crash); the queries return
  `None` / `[]` where they have nothing to say.
- Offsets and spans are character offsets (the compiler's `Span` contract);
  conversion to LSP's UTF-16 positions happens only in `server.py`.
- Semantic answers come from `Program` (types, symbols) when the type checker
  ran; where it did not (a syntax error, sema not available), the answers
  fall back to a purely syntactic scope walk over the AST, so names,
  definitions and completion keep working while the user types.
- Walking the AST is generic (over dataclass fields) rather than a `match`
  over node kinds: finding "the node under the cursor" must keep working for
  node kinds added later; the meaning of a node is then read with `match`.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, assert_never

from tilelang.diagnostics.model import Diagnostic
from tilelang.source import SourceFile, SourceMap, Span
from tilelang.syntax import ast

# ---------------------------------------------------------------- analysis


@dataclass(slots=True)
class Analysis:
    """One run of the checker over one document's text."""

    text: str
    name: str  # the file name given to the driver (a path for real files)
    sources: SourceMap
    file: SourceFile  # the root document in `sources`
    module: ast.Module | None = None  # the root AST (possibly partial)
    program: Any = None  # tilelang.sema.Program, when the type checker ran
    diagnostics: list[Diagnostic] = field(default_factory=list)
    internal_error: str | None = None  # the compiler crashed (a tilec bug)
    unavailable: str | None = None  # a stage not written yet

    @property
    def parsed_cleanly(self) -> bool:
        return self.module is not None and not any(
            d.code.startswith("E00") for d in self.diagnostics
        )

    def span_text(self, span: Span) -> str:
        try:
            return self.sources.get(span.file).text[span.start : span.end]
        except IndexError:
            return ""

    def symbol_of(self, node: Any) -> Any:
        if self.program is None or node is None:
            return None
        try:
            return self.program.symbol_of(node)
        except Exception:  # a half-built Program must not break the editor
            return None

    def type_of(self, node: Any) -> Any:
        if self.program is None or node is None:
            return None
        try:
            return self.program.type_of(node)
        except Exception:
            return None


def analyze(text: str, name: str = "<input>") -> Analysis:
    """Check `text` as the file `name` with the driver; never raises."""
    from tilelang import driver

    sources = SourceMap()
    try:
        result = driver.compile(text, "checked", name=name, sources=sources)
    except Exception as crash:  # ICE or worse: keep at least the syntax view
        message = f"{type(crash).__name__}: {crash}"
        sources = SourceMap()
        try:
            result = driver.compile(text, "ast", name=name, sources=sources)
        except Exception:
            sf = sources.add(name, text)
            return Analysis(text, name, sources, sf, internal_error=message)
        an = _from_result(text, name, result)
        an.internal_error = message
        return an
    return _from_result(text, name, result)


def _from_result(text: str, name: str, result: Any) -> Analysis:
    ctx = result.context
    module = ctx.outputs.get("ast")
    checked = ctx.outputs.get("checked")
    an = Analysis(
        text,
        name,
        ctx.sources,
        ctx.source,
        module=module if isinstance(module, ast.Module) else None,
        program=getattr(checked, "program", None),
        diagnostics=list(result.diagnostics),
    )
    if result.unavailable is not None:
        an.unavailable = str(result.unavailable)
    return an


# ---------------------------------------------------------------- AST walking


def _is_node(x: object) -> bool:
    return (
        dataclasses.is_dataclass(x)
        and not isinstance(x, type)
        and not isinstance(x, Span)
        and isinstance(getattr(x, "span", None), Span)
    )


def children(node: Any) -> Iterator[Any]:
    """The child nodes of an AST node, in field order."""
    for f in dataclasses.fields(node):
        value = getattr(node, f.name)
        if isinstance(value, tuple):
            for elem in value:
                if _is_node(elem):
                    yield elem
        elif _is_node(value):
            yield value


def path_at(module: ast.Module | None, file_id: int, offset: int) -> list[Any]:
    """The nodes containing `offset`, outermost first. A cursor just after a
    node (`foo|`) counts as on it, unless another node starts there."""
    if module is None:
        return []
    path: list[Any] = [module]
    node: Any = module
    while True:
        inside = after = None
        for child in children(node):
            s = child.span
            if s.file != file_id:
                continue
            if s.start <= offset < s.end:
                inside = child
                break
            if s.end == offset and s.start < offset:
                after = child
        best = inside or after
        if best is None:
            return path
        path.append(best)
        node = best


# ---------------------------------------------------------------- scopes


@dataclass(frozen=True, slots=True)
class Binding:
    """A name visible at some point, found syntactically."""

    name: str
    kind: str  # "kernel" "fn" "const" "generic" "type-param" "param" "local" "import"
    span: Span  # the declaring identifier
    decl: Any  # the declaring node


def item_bindings(module: ast.Module | None) -> list[Binding]:
    if module is None:
        return []
    out: list[Binding] = []
    for item in module.items:
        match item:
            case ast.FnDecl():
                out.append(Binding(item.name.name, "kernel" if item.is_kernel else "fn",
                                   item.name.span, item))
            case ast.ConstDecl():
                out.append(Binding(item.name.name, "const", item.name.span, item))
            case ast.UseDecl():
                if item.names is not None:
                    out.extend(Binding(n.name, "import", n.span, item) for n in item.names)
                elif item.path and not item.glob:
                    last = item.path[-1]
                    out.append(Binding(last.name, "import", last.span, item))
            case _:
                assert_never(item)
    return out


def _pattern_bindings(pat: Any, kind: str) -> list[Binding]:
    out: list[Binding] = []
    for n in ast.walk(pat):
        if isinstance(n, ast.NamePat):
            out.append(Binding(n.name.name, kind, n.name.span, n))
    return out


def enclosing_fn(module: ast.Module | None, file_id: int, offset: int) -> ast.FnDecl | None:
    for n in path_at(module, file_id, offset):
        if isinstance(n, ast.FnDecl):
            return n
    return None


def visible_bindings(module: ast.Module | None, file_id: int, offset: int) -> list[Binding]:
    """Every name visible at `offset`, outer scopes first (so a later entry
    with the same name shadows an earlier one)."""
    if module is None:
        return []
    out = item_bindings(module)
    path = path_at(module, file_id, offset)
    for i, node in enumerate(path):
        match node:
            case ast.FnDecl():
                for g in node.generics:
                    out.append(Binding(g.name.name, "generic" if g.is_const else "type-param",
                                       g.name.span, g))
                for p in node.params:
                    out.append(Binding(p.name.name, "param", p.name.span, p))
            case ast.For():
                if node.body.span.start <= offset:
                    out.extend(_pattern_bindings(node.pattern, "local"))
            case ast.Block():
                inner = path[i + 1] if i + 1 < len(path) else None
                for stmt in node.stmts:
                    if stmt is inner or stmt.span.start >= offset:
                        # a `let` is visible after its own statement only
                        break
                    if isinstance(stmt, ast.Let):
                        out.extend(_pattern_bindings(stmt.pattern, "local"))
            case _:
                pass
    return out


def resolve_name(module: ast.Module | None, file_id: int, name: str, offset: int) -> Binding | None:
    found = None
    for b in visible_bindings(module, file_id, offset):
        if b.name == name:
            found = b
    return found


def _use_target(an: Analysis, decl: ast.UseDecl, ident: ast.Ident) -> tuple[str, Any]:
    """What a segment of a `use` path names: ("item", Symbol) for an imported
    item, ("module", ModuleInfo or None) for a module."""
    if decl.names is not None and ident in decl.names:
        qual = "::".join([*(s.name for s in decl.path), ident.name])
    elif ident in decl.path:
        qual = "::".join(s.name for s in decl.path[: decl.path.index(ident) + 1])
    else:
        return "module", None
    program = an.program
    items = getattr(program, "items", None) or {}
    if qual in items:
        return "item", items[qual]
    modules = getattr(program, "modules", None) or {}
    return "module", modules.get(qual) or qual


def _module_span(an: Analysis, module: Any) -> Span | None:
    """The start of a loaded module's file."""
    path = getattr(module, "path", None)
    if path is None:
        return None
    sf = an.sources.by_name(path)
    return Span(sf.id, 0, 0) if sf is not None else None


# ---------------------------------------------------------------- hover


@dataclass(frozen=True, slots=True)
class HoverInfo:
    markdown: str
    span: Span


_DTYPE_DOCS = {
    "bool": "boolean", "i8": "8-bit signed integer", "i16": "16-bit signed integer",
    "i32": "32-bit signed integer", "i64": "64-bit signed integer",
    "u8": "8-bit unsigned integer", "u16": "16-bit unsigned integer",
    "u32": "32-bit unsigned integer", "u64": "64-bit unsigned integer",
    "f16": "IEEE 754 half precision float", "bf16": "bfloat16 (8-bit exponent, 7-bit mantissa)",
    "f32": "IEEE 754 single precision float", "f64": "IEEE 754 double precision float",
    "Tensor": "`Tensor<T, [d0, ...]>`: data in memory; a dimension is a constant or `?` "
              "(known only at run time)",
    "Tile": "`Tile<T, [d0, ...]>`: an immutable value held by one tile block; every "
            "dimension is a compile-time constant",
}


def _code(text: str) -> str:
    return f"```tile\n{text}\n```"


def _one_line(text: str) -> str:
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r"\s+", " ", text).strip()
    return text.replace("( ", "(").replace(" )", ")").replace("< ", "<")


def fn_header(an: Analysis, decl: ast.FnDecl) -> str:
    """`kernel fn add<const B: i32>(z: &mut Tensor<f32, [B]>, ...)` as written."""
    sf = an.sources.get(decl.span.file)
    start = decl.attrs[-1].span.end if decl.attrs else decl.span.start
    return _one_line(sf.text[start : decl.body.span.start])


def _builtin_markdown(sig: Any) -> str:
    where = getattr(getattr(sig, "context", None), "value", "both")
    lines = [_code(sig.signature), "", sig.doc]
    if where == "kernel":
        lines += ["", "*inside a kernel or device function*"]
    elif where == "host":
        lines += ["", "*in host code*"]
    return "\n".join(lines)


def _lookup_builtin(name: str, method: bool) -> Any:
    try:
        from tilelang.intrinsics import signatures
    except ImportError:
        return None
    table = signatures.METHODS if method else signatures.FUNCTIONS
    return table.get(name)


def _symbol_markdown(an: Analysis, sym: Any, ty: Any) -> str | None:
    kind = getattr(getattr(sym, "kind", None), "value", None)
    name = getattr(sym, "qualname", None) or getattr(sym, "name", "?")
    sym_ty = ty if ty is not None else getattr(sym, "ty", None)
    match kind:
        case "local":
            mut = "mut " if getattr(sym, "mutable", False) else ""
            return _code(f"let {mut}{sym.name}: {sym_ty}" if sym_ty is not None else f"let {mut}{sym.name}")
        case "param":
            return _code(f"{sym.name}: {sym_ty}") + "\n\nparameter"
        case "const":
            value = getattr(sym, "value", None)
            text = f"const {name}: {sym_ty}" if sym_ty is not None else f"const {name}"
            return _code(text + (f" = {value}" if value is not None else ""))
        case "generic":
            return _code(f"const {sym.name}: {sym_ty or 'i32'}") + "\n\nconst generic parameter"
        case "type-param":
            return _code(sym.name) + "\n\ntype parameter"
        case "fn" | "kernel":
            decl = getattr(sym, "decl", None)
            if isinstance(decl, ast.FnDecl):
                return _code(fn_header(an, decl))
            return _code(f"{'kernel ' if kind == 'kernel' else ''}fn {name}")
        case "builtin" | "method-builtin":
            sig = getattr(sym, "signature", None)
            if sig is not None:
                return _builtin_markdown(sig)
            return None
        case "module":
            return _code(f"mod {getattr(sym, 'value', None) or name}")
        case _:
            return None


def _binding_markdown(an: Analysis, b: Binding) -> str:
    decl = b.decl
    match b.kind:
        case "kernel" | "fn":
            return _code(fn_header(an, decl))
        case "const":
            return _code(_one_line(an.span_text(decl.span)).rstrip(";"))
        case "param":
            return _code(_one_line(an.span_text(decl.span))) + "\n\nparameter"
        case "generic" | "type-param":
            return _code(_one_line(an.span_text(decl.span))) + "\n\ngeneric parameter"
        case "local":
            sym = an.symbol_of(decl)
            ty = getattr(sym, "ty", None)
            return _code(f"let {b.name}: {ty}" if ty is not None else f"let {b.name}")
        case _:
            return _code(f"use {b.name}")


def _instantiation_markdown(an: Analysis, call: ast.Call) -> str:
    """`B = 1024` for a call whose const generics the checker inferred."""
    try:
        inst = dict(an.program.instantiation_of(call) or {})
    except Exception:
        return ""
    deferred = (getattr(an.program, "deferred", None) or {}).get(call, {})
    parts = [f"`{k} = {v}`" for k, v in inst.items()]
    parts += [f"`{k}` known at launch" for k in deferred if k not in inst]
    return "\n\ninstantiated with " + ", ".join(parts) if parts else ""


def hover(an: Analysis, offset: int) -> HoverInfo | None:
    """What to show for the cursor at `offset`: the type of the expression or
    the declaration of the name under it, or a builtin's signature and doc."""
    path = path_at(an.module, an.file.id, offset)
    if len(path) < 2:
        return None
    node, parent = path[-1], path[-2]
    if isinstance(node, ast.Ident):
        md = _hover_ident(an, node, parent, path, offset)
        if md is not None:
            return HoverInfo(md, node.span)
    # Anything else: the type of the innermost typed expression.
    for n in reversed(path):
        ty = an.type_of(n)
        if ty is not None:
            return HoverInfo(_code(str(ty)), n.span)
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
                sig = _lookup_builtin(ident.name, method=False)
                if sig is not None:
                    return _builtin_markdown(sig)
            ty = an.type_of(parent)
            return _code(f"{ident.name}: {ty}") if ty is not None else None
        case ast.Path():
            sym = an.symbol_of(parent)
            if sym is None and isinstance(grand, ast.Call):
                sym = an.symbol_of(grand)
            if ident is parent.segments[-1] and sym is not None:
                return _symbol_markdown(an, sym, None)
            prefix = "::".join(s.name for s in parent.segments[: parent.segments.index(ident) + 1])
            return _code(f"mod {prefix}")
        case ast.MethodCall() if ident is parent.method:
            sym = an.symbol_of(parent)
            sig = getattr(sym, "signature", None) or _lookup_builtin(ident.name, method=True)
            if sig is None:
                return None
            md = _builtin_markdown(sig)
            result = an.type_of(parent)
            if result is not None:
                # This call's own result, e.g. `x.max(1): Tensor<f32, [300]>`.
                call = _one_line(an.span_text(parent.span))
                if len(call) > 60:
                    call = f".{ident.name}(..)"
                md += "\n\n" + _code(f"{call}: {result}")
            return md
        case ast.FnDecl() if ident is parent.name:
            return _code(fn_header(an, parent))
        case ast.Param():
            sym = an.symbol_of(parent)
            ty = getattr(sym, "ty", None)
            text = f"{ident.name}: {ty}" if ty is not None else _one_line(an.span_text(parent.span))
            return _code(text) + "\n\nparameter"
        case ast.NamePat():
            sym = an.symbol_of(parent)
            md = _symbol_markdown(an, sym, None) if sym is not None else None
            return md or _code(f"let {ident.name}")
        case ast.GenericParam():
            return _code(_one_line(an.span_text(parent.span))) + "\n\ngeneric parameter"
        case ast.ConstDecl():
            sym = an.symbol_of(parent)
            md = _symbol_markdown(an, sym, None) if sym is not None else None
            return md or _code(_one_line(an.span_text(parent.span)).rstrip(";"))
        case ast.NamedType():
            doc = _DTYPE_DOCS.get(ident.name)
            if doc is not None:
                return _code(ident.name) + "\n\n" + doc
            b = resolve_name(an.module, an.file.id, ident.name, offset)
            return _binding_markdown(an, b) if b is not None else None
        case ast.Field():
            ty = an.type_of(parent)
            return _code(f".{ident.name}: {ty}") if ty is not None else None
        case ast.UseDecl():
            what, target = _use_target(an, parent, ident)
            if what == "item":
                return _symbol_markdown(an, target, None)
            name = getattr(target, "name", target)
            return _code(f"mod {name}") if name else None
        case _:
            return None


# ---------------------------------------------------------------- definition


def definition(an: Analysis, offset: int) -> Span | None:
    """Where the name under the cursor is declared (None for builtins)."""
    path = path_at(an.module, an.file.id, offset)
    if len(path) < 2 or not isinstance(path[-1], ast.Ident):
        return None
    ident, parent = path[-1], path[-2]
    grand = path[-3] if len(path) >= 3 else None
    if isinstance(parent, (ast.FnDecl, ast.Param, ast.NamePat, ast.GenericParam, ast.ConstDecl)):
        return ident.span  # already at the declaration
    if isinstance(parent, ast.UseDecl):
        what, target = _use_target(an, parent, ident)
        if what == "item":
            span = getattr(target, "span", None)
            return span if isinstance(span, Span) and span.file >= 0 else None
        return _module_span(an, target)
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


# ---------------------------------------------------------------- references

_DECLS = (ast.FnDecl, ast.Param, ast.NamePat, ast.GenericParam, ast.ConstDecl)


def _name_span(node: Any) -> Span | None:
    """The span of the identifier by which `node` refers to or declares a symbol."""
    match node:
        case ast.Name():
            return node.ident.span
        case ast.Path():
            return node.segments[-1].span
        case ast.FnDecl() | ast.Param() | ast.GenericParam() | ast.ConstDecl() | ast.NamePat():
            return node.name.span
        case _:
            return None


def _target(an: Analysis, offset: int) -> tuple[Any, Binding | None] | None:
    """The symbol under the cursor (sema's `Symbol`, or None) and its syntactic
    binding (or None), for a name that is a use or a declaration."""
    path = path_at(an.module, an.file.id, offset)
    if len(path) < 2 or not isinstance(path[-1], ast.Ident):
        return None
    ident, parent = path[-1], path[-2]
    if isinstance(parent, _DECLS) and ident is not getattr(parent, "name", None):
        return None
    if not isinstance(parent, (*_DECLS, ast.Name, ast.Path)):
        return None
    sym = an.symbol_of(parent)
    binding = None
    if isinstance(parent, _DECLS):
        binding = Binding(ident.name, "decl", ident.span, parent)
    elif isinstance(parent, ast.Name):
        binding = resolve_name(an.module, an.file.id, ident.name, offset)
    if sym is None and binding is None:
        return None
    return sym, binding


def references(an: Analysis, offset: int, include_declaration: bool = True) -> list[Span]:
    """Every place the symbol under the cursor is named (in every loaded
    file), declaration first when asked for. Builtins have none."""
    target = _target(an, offset)
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
                span = _name_span(node)
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


# ---------------------------------------------------------------- inlay hints


@dataclass(frozen=True, slots=True)
class InlayHint:
    offset: int  # where the hint is shown (between characters)
    label: str
    kind: str  # "type" (a binding's type) or "generics" (inferred const generics)


def _shown_type(ty: Any) -> str | None:
    text = str(ty) if ty is not None else None
    # `{integer}`/`{float}`: a literal whose type the context will fix; noise.
    if text is None or text in ("()", "{integer}", "{float}") or "{error}" in text:
        return None
    return text


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
                for b in _pattern_bindings(node.pattern, "local"):
                    ty = _shown_type(getattr(an.symbol_of(b.decl), "ty", None))
                    if ty is not None and start <= b.span.end <= end:
                        hints.append(InlayHint(b.span.end, f": {ty}", "type"))
            case ast.Call(generics=()):
                inst = None
                try:
                    inst = an.program.instantiation_of(node)
                except Exception:
                    inst = None
                fn = an.program.callee_of(node) if hasattr(an.program, "callee_of") else None
                generics: tuple[str, ...] = tuple(getattr(fn, "const_generics", None) or ())
                if not inst and not generics:
                    continue
                names = list(generics or inst or ())
                deferred = getattr(an.program, "deferred", {}).get(node, {})
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


# ---------------------------------------------------------------- semantic tokens

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
            if token is None and ident.name in _builtin_names():
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
                    sym = None
                    if an.program is not None:
                        sym = getattr(an.program, "items", {}).get(f"{prefix}::{item.name}")
                    kind = getattr(getattr(sym, "kind", None), "value", None)
                    add(item.span, *(_token_for_decl(getattr(sym, "decl", None), kind) or ("function", ())))
            case ast.Name():
                use(node, node.ident)
            case ast.Path():
                for seg in node.segments[:-1]:
                    add(seg.span, "namespace")
                use(node, node.segments[-1])
            case ast.MethodCall():
                add(node.method.span, "method",
                    ("defaultLibrary",) if _lookup_builtin(node.method.name, method=True) else ())
            case ast.NamedType():
                name = node.name.name
                if name in _DTYPE_DOCS:
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


@functools.cache
def _builtin_names() -> frozenset[str]:
    try:
        from tilelang.intrinsics import signatures
    except ImportError:
        return frozenset()
    return frozenset(signatures.FUNCTIONS)


# ---------------------------------------------------------------- quick fixes


@dataclass(frozen=True, slots=True)
class QuickFix:
    title: str
    edits: tuple[tuple[Span, str], ...]  # replace each span's text with the string


_EXPECTED_HERE = re.compile(r"expected `([^`]+)` here")
_SIMILAR_NAME = re.compile(r"similar name exists: `([A-Za-z_][A-Za-z0-9_]*)`")
_MAKE_MUT = re.compile(r"mutable: `mut ([A-Za-z_][A-Za-z0-9_]*)`")


def quick_fixes(an: Analysis, diag: Diagnostic) -> list[QuickFix]:
    """Edits that a diagnostic spells out exactly, in the root document: the
    token a syntax error expects at a point, the similar name a resolution
    error suggests, the `mut` a binding needs. Anything less certain is left
    to the `help` text."""
    fixes: list[QuickFix] = []
    primary = diag.primary_span
    fid = an.file.id
    for label in diag.labels:
        m = _EXPECTED_HERE.fullmatch(label.message)
        if m and label.primary and label.span.file == fid and label.span.start == label.span.end:
            fixes.append(QuickFix(f"insert `{m.group(1)}`", ((label.span, m.group(1)),)))
    for text in diag.help:
        m = _SIMILAR_NAME.search(text)
        if m and primary is not None and primary.file == fid:
            fixes.append(QuickFix(f"replace with `{m.group(1)}`", ((primary, m.group(1)),)))
        m = _MAKE_MUT.search(text)
        if m:
            name = m.group(1)
            for label in diag.labels:
                if label.span.file == fid and an.span_text(label.span) == name and not label.primary:
                    fixes.append(QuickFix(f"make `{name}` mutable", ((label.span, f"mut {name}"),)))
                    break
    return fixes


# ---------------------------------------------------------------- workspace symbols


def _subsequence(query: str, name: str) -> bool:
    it = iter(name.lower())
    return all(ch in it for ch in query.lower())


def workspace_items(an: Analysis, query: str) -> list[tuple[str, str, Span]]:
    """(name, kind, name span) of the items of the document and of every
    module it loaded (the stdlib, `use`d files) whose name matches `query`
    (its letters in order, case-insensitively, as editors filter)."""
    modules: list[ast.Module] = [an.module] if an.module is not None else []
    for info in (getattr(an.program, "modules", None) or {}).values():
        module = getattr(info, "ast", None)
        if isinstance(module, ast.Module) and module is not an.module:
            modules.append(module)
    out = []
    for module in modules:
        for b in item_bindings(module):
            if b.kind != "import" and _subsequence(query, b.name):
                out.append((b.name, b.kind, b.span))
    return out


# ---------------------------------------------------------------- links


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


# ---------------------------------------------------------------- symbols


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
                    DocSymbol(g.name.name, "generic", _one_line(an.span_text(g.span)), g.span, g.name.span)
                    for g in item.generics
                ]
                kids += [
                    DocSymbol(p.name.name, "param", _one_line(an.span_text(p.span)), p.span, p.name.span)
                    for p in item.params
                ]
                for stmt in item.body.stmts:
                    if isinstance(stmt, ast.Let):
                        kids += [
                            DocSymbol(b.name, "local", "let", stmt.span, b.span)
                            for b in _pattern_bindings(stmt.pattern, "local")
                        ]
                out.append(DocSymbol(item.name.name, "kernel" if item.is_kernel else "fn",
                                     fn_header(an, item), item.span, item.name.span, tuple(kids)))
            case ast.ConstDecl():
                out.append(DocSymbol(item.name.name, "const", _one_line(an.span_text(item.span)),
                                     item.span, item.name.span))
            case ast.UseDecl():
                out.append(DocSymbol(_one_line(an.span_text(item.span)).removeprefix("use ").rstrip(";"),
                                     "import", "use", item.span, item.span))
            case _:
                assert_never(item)
    return out


# ---------------------------------------------------------------- completion


@dataclass(frozen=True, slots=True)
class Completion:
    label: str
    kind: str  # "keyword" "type" "function" "method" "variable" "constant" "module" "kernel"
    detail: str = ""
    doc: str = ""
    # A call's text as an LSP snippet (`exp($0)`, `zeros::<$1>($0)`): the
    # editor places the cursor in the parentheses and shows signature help.
    snippet: str | None = None


def _call_snippet(name: str, generic: bool, takes_args: bool = True) -> str:
    if generic:
        return f"{name}::<$1>($0)" if takes_args else f"{name}::<$0>()"
    return f"{name}($0)" if takes_args else f"{name}()$0"


_IDENT_TAIL = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")


def _known_hints() -> tuple[str, ...]:
    try:
        from tilelang.sema.items import KNOWN_HINTS
    except ImportError:
        return ("num_warps", "stages")
    return tuple(KNOWN_HINTS)


_HINT_DOCS = {
    "num_warps": "warps per tile block (a power of two up to 32)",
    "stages": "software pipelining depth of loads in loops",
}
_HINTS = {name: _HINT_DOCS.get(name, "") for name in _known_hints()}


def _receiver_kind(ty: Any) -> str | None:
    from tilelang.sema import types as t

    match ty:
        case t.RefT():
            return "param" if isinstance(ty.inner, t.TensorT) else _receiver_kind(ty.inner)
        case t.TileT():
            return "tile"
        case t.TileViewT():
            return "view"
        case t.TensorT():
            return "tensor"
        case t.PartitionT():
            return "partition"
        case t.OpT():
            return "op"
        case t.HandleT():
            return "handle"
        case t.GraphT():
            return "graph"
        case t.ScalarT() | t.UntypedFloat() | t.UntypedInt():
            return "scalar"
        case _:
            return None


def _binding_type(an: Analysis | None, b: Binding) -> Any:
    if an is None:
        return None
    sym = an.symbol_of(b.decl)
    return getattr(sym, "ty", None)


def completions(an: Analysis, offset: int, previous: Analysis | None = None) -> list[Completion]:
    """Candidates at `offset`: methods after `.`, stdlib modules and items
    after `use std::`, otherwise names in scope, builtins and keywords.

    `previous` is an earlier analysis of the same document that parsed, used
    for names and types while the current text is half typed. Calls come with
    a snippet that adds the parentheses, unless the text already has them."""
    found = _completions(an, offset, previous)
    rest = an.text[offset:].lstrip("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
    if rest.lstrip(" \t").startswith(("(", "::")):
        return [dataclasses.replace(c, snippet=None) if c.snippet else c for c in found]
    return found


def _completions(an: Analysis, offset: int, previous: Analysis | None) -> list[Completion]:
    line_start = an.text.rfind("\n", 0, offset) + 1
    before = an.text[line_start:offset]
    prefix_match = _IDENT_TAIL.search(before)
    head = before[: prefix_match.start()] if prefix_match else before

    use = re.match(r"^\s*use\s+((?:[A-Za-z_]\w*\s*::\s*)+)$", head)
    if use:
        return _module_completions([s.strip() for s in use.group(1).split("::") if s.strip()])

    if head.rstrip().endswith(".") and not head.rstrip().endswith(".."):
        recv = re.search(r"([A-Za-z_]\w*)\s*\.\s*$", head)
        kind = None
        if recv:
            for source in (an, previous):
                if source is None or source.module is None:
                    continue
                b = resolve_name(source.module, source.file.id, recv.group(1),
                                 min(offset, len(source.text)))
                if b is not None:
                    kind = _receiver_kind(_binding_type(source, b))
                    if kind is not None:
                        break
        return _method_completions(kind)

    if head.rstrip().endswith("::"):
        return []  # a turbofish or a path we know nothing about

    if re.search(r"#\[\s*$", head):
        return [Completion("hints", "function", "#[hints(num_warps = .., stages = ..)]",
                           "compilation hints for the kernel that follows")]
    hints = re.search(r"#\[\s*hints\s*\(([^)\]]*)$", head)
    if hints:
        return [Completion(name, "variable", doc) for name, doc in _HINTS.items()
                if not re.search(rf"\b{name}\s*=", hints.group(1))]

    items: dict[str, Completion] = {}

    def add(c: Completion) -> None:
        items.setdefault(c.label, c)

    in_kernel: bool | None = None
    for source in (an, previous):
        if source is None or source.module is None:
            continue
        off = min(offset, len(source.text))
        fn = enclosing_fn(source.module, source.file.id, off)
        if fn is not None and in_kernel is None:
            in_kernel = fn.is_kernel if (fn.is_kernel or fn.name.name == "main") else None
        for b in reversed(visible_bindings(source.module, source.file.id, off)):
            ty = _binding_type(source, b)
            match b.kind:
                case "kernel" | "fn":
                    add(Completion(b.name, b.kind, fn_header(source, b.decl), "",
                                   _call_snippet(b.name, False, bool(b.decl.params))))
                case "const" | "generic":
                    add(Completion(b.name, "constant", _one_line(source.span_text(b.decl.span)).rstrip(";")))
                case _:
                    add(Completion(b.name, "variable", str(ty) if ty is not None else b.kind))

    try:
        from tilelang.intrinsics import signatures
    except ImportError:
        signatures = None  # type: ignore[assignment]
    if signatures is not None:
        for name, sig in sorted(signatures.FUNCTIONS.items()):
            ctx = sig.context.value
            if (in_kernel is True and ctx == "host") or (in_kernel is False and ctx == "kernel"):
                continue
            add(Completion(name, "function", sig.signature, sig.doc,
                           _call_snippet(name, bool(sig.generics), bool(sig.params))))

    from tilelang import highlight

    for kw in highlight.KEYWORDS:
        add(Completion(kw, "keyword"))
    for ty_name in (*highlight.DTYPES, *highlight.BUILTIN_TYPES):
        add(Completion(ty_name, "type", _DTYPE_DOCS.get(ty_name, "")))
    add(Completion("std", "module", "the standard library"))
    return list(items.values())


def _method_completions(kind: str | None) -> list[Completion]:
    try:
        from tilelang.intrinsics import signatures
    except ImportError:
        return []
    out = []
    for name, sig in sorted(signatures.METHODS.items()):
        if kind is not None and sig.receivers and kind not in sig.receivers:
            continue
        out.append(Completion(name, "method", sig.signature, sig.doc,
                              _call_snippet(name, bool(sig.generics), bool(sig.params))))
    return out


def _module_completions(segments: list[str]) -> list[Completion]:
    """Modules and items under `std::a::b::` from the stdlib directory."""
    from tilelang.resources import stdlib_dir

    if not segments or segments[0] != "std":
        return []
    node: Any = stdlib_dir()
    for seg in segments:
        node = node / seg
    out: list[Completion] = []
    try:
        if node.is_dir():
            for entry in sorted(node.iterdir(), key=lambda e: e.name):
                stem = entry.name.removesuffix(".tile")
                if entry.is_dir() or entry.name.endswith(".tile"):
                    out.append(Completion(stem, "module", "::".join([*segments, stem])))
            return out
        module_file = Path(str(node) + ".tile")
        text = module_file.read_text(encoding="utf-8") if module_file.exists() else ""
    except OSError:
        return []
    for m in re.finditer(r"^\s*(?:#\[[^\]]*\]\s*)*(kernel\s+)?fn\s+([A-Za-z_]\w*)", text, re.M):
        out.append(Completion(m.group(2), "kernel" if m.group(1) else "fn", m.group(0).strip()))
    for m in re.finditer(r"^\s*const\s+([A-Za-z_]\w*)", text, re.M):
        out.append(Completion(m.group(1), "constant"))
    out.append(Completion("*", "keyword", "import every item"))
    return out


# ---------------------------------------------------------------- signature help


@dataclass(frozen=True, slots=True)
class SignatureInfo:
    label: str
    params: tuple[tuple[int, int], ...]  # [start, end) of each parameter in `label`
    active: int
    doc: str = ""


_CLOSE = {")": "(", "]": "[", "}": "{"}


def _open_call(text: str, offset: int) -> tuple[int, int] | None:
    """The offset of the unclosed `(` of the call around `offset` and the
    number of top-level commas between it and `offset`, found textually so
    that it works on half-typed code."""
    depth = 0
    commas = 0
    i = offset - 1
    in_string = False
    while i >= 0:
        ch = text[i]
        if ch == '"' and (i == 0 or text[i - 1] != "\\"):
            in_string = not in_string
        elif in_string:
            pass
        elif ch in _CLOSE:
            depth += 1
        elif ch in "([{":
            if depth > 0:
                depth -= 1
            elif ch == "(":
                return i, commas
            elif ch == "[":
                commas = 0  # the commas so far were inside an array argument
            else:
                return None  # reached the enclosing block: not in a call
        elif ch == ";" and depth == 0:
            return None
        elif ch == "," and depth == 0:
            commas += 1
        i -= 1
    return None


def _callee_before(text: str, paren: int) -> tuple[str, bool] | None:
    """The name called at `paren` and whether it is a method (`.name(`)."""
    j = paren
    while j > 0 and text[j - 1].isspace():
        j -= 1
    if j > 0 and text[j - 1] == ">":  # skip a turbofish `::<..>`
        depth = 0
        k = j - 1
        while k >= 0:
            if text[k] == ">":
                depth += 1
            elif text[k] == "<":
                depth -= 1
                if depth == 0:
                    break
            k -= 1
        if k < 2 or text[k - 2 : k] != "::":
            return None
        j = k - 2
    m = _IDENT_TAIL.search(text, 0, j)
    if m is None:
        return None
    k = m.start()
    while k > 0 and text[k - 1].isspace():
        k -= 1
    return m.group(0), k > 0 and text[k - 1] == "."


def _label_with_params(name: str, params: list[str], tail: str) -> tuple[str, tuple[tuple[int, int], ...]]:
    label = name + "("
    spans = []
    for i, p in enumerate(params):
        if i:
            label += ", "
        spans.append((len(label), len(label) + len(p)))
        label += p
    return label + ")" + tail, tuple(spans)


def signature_help(an: Analysis, offset: int, previous: Analysis | None = None) -> SignatureInfo | None:
    call = _open_call(an.text, offset)
    if call is None:
        return None
    paren, commas = call
    callee = _callee_before(an.text, paren)
    if callee is None:
        return None
    name, is_method = callee
    for source in (an, previous):
        if is_method or source is None or source.module is None:
            continue
        for item in source.module.items:
            if isinstance(item, ast.FnDecl) and item.name.name == name:
                params = [_one_line(source.span_text(p.span)) for p in item.params]
                generics = ""
                if item.generics:
                    generics = "<" + ", ".join(_one_line(source.span_text(g.span)) for g in item.generics) + ">"
                tail = f" -> {_one_line(source.span_text(item.ret.span))}" if item.ret is not None else ""
                prefix = ("kernel fn " if item.is_kernel else "fn ") + name + generics
                label, spans = _label_with_params(prefix, params, tail)
                active = min(commas, max(len(params) - 1, 0))
                return SignatureInfo(label, spans, active)
    sig = _lookup_builtin(name, method=is_method)
    if sig is None:
        return None
    label = sig.signature
    spans_list: list[tuple[int, int]] = []
    search_from = label.find("(") + 1
    for p in sig.params:
        pname = p.lstrip("*")
        at = label.find(pname, search_from)
        if at < 0:
            spans_list = []
            break
        spans_list.append((at, at + len(pname)))
        search_from = at + len(pname)
    spans = tuple(spans_list)
    active = commas
    if spans and sig.params[-1].startswith("*"):
        active = min(active, len(spans) - 1)
    return SignatureInfo(label, spans, active, sig.doc)
