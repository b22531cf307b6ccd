"""One analysed document: the checker's view of it, and a syntactic fallback.

`analyze(text, name)` runs the same driver as `tilec check` (parse, names,
types, ownership) and keeps what an editor needs in an `Analysis`: the
diagnostics, the AST of the root file and the type checker's `Program`.
Where the program did not check, the scope walk here (`path_at`,
`visible_bindings`, `resolve_name`: the `Binding`s in scope at an offset)
answers from the AST alone, so names keep resolving while the user types.
Also the lookups the features share: builtins, `use` targets, type text.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, assert_never

from tilelang.diagnostics.model import Diagnostic
from tilelang.sema.program import Program, Symbol
from tilelang.sema.types import Type
from tilelang.source import SourceFile, SourceMap, Span
from tilelang.syntax import ast


@dataclass(slots=True)
class Analysis:
    """One run of the checker over one document's text."""

    text: str
    name: str  # the file name given to the driver (a path for real files)
    sources: SourceMap
    file: SourceFile  # the root document in `sources`
    module: ast.Module | None = None  # the root AST (possibly partial)
    program: Program | None = None  # when the type checker ran
    diagnostics: list[Diagnostic] = field(default_factory=list)
    internal_error: str | None = None  # the compiler crashed (a tilec bug)

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

    def symbol_of(self, node: Any) -> Symbol | None:
        return None if self.program is None or node is None else self.program.symbol_of(node)

    def type_of(self, node: Any) -> Type | None:
        return None if self.program is None or node is None else self.program.type_of(node)


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
        program=checked.program if checked is not None else None,
        diagnostics=list(result.diagnostics),
    )
    return an


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


def pattern_bindings(pat: Any, kind: str) -> list[Binding]:
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
                    out.extend(pattern_bindings(node.pattern, "local"))
            case ast.Block():
                inner = path[i + 1] if i + 1 < len(path) else None
                for stmt in node.stmts:
                    if stmt is inner or stmt.span.start >= offset:
                        # a `let` is visible after its own statement only
                        break
                    if isinstance(stmt, ast.Let):
                        out.extend(pattern_bindings(stmt.pattern, "local"))
            case _:
                pass
    return out


def resolve_name(module: ast.Module | None, file_id: int, name: str, offset: int) -> Binding | None:
    found = None
    for b in visible_bindings(module, file_id, offset):
        if b.name == name:
            found = b
    return found


def use_target(an: Analysis, decl: ast.UseDecl, ident: ast.Ident) -> tuple[str, Any]:
    """What a segment of a `use` path names: ("item", Symbol) for an imported
    item, ("module", ModuleInfo or None) for a module."""
    if decl.names is not None and ident in decl.names:
        qual = "::".join([*(s.name for s in decl.path), ident.name])
    elif ident in decl.path:
        qual = "::".join(s.name for s in decl.path[: decl.path.index(ident) + 1])
    else:
        return "module", None
    program = an.program
    if program is not None and qual in program.items:
        return "item", program.items[qual]
    module = program.modules.get(qual) if program is not None else None
    return "module", module or qual


def module_span(an: Analysis, module: Any) -> Span | None:
    """The start of a loaded module's file."""
    path = getattr(module, "path", None)
    if path is None:
        return None
    sf = an.sources.by_name(path)
    return Span(sf.id, 0, 0) if sf is not None else None


DTYPE_DOCS = {
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


def md_code(text: str) -> str:
    return f"```tile\n{text}\n```"


def one_line(text: str) -> str:
    from tilelang.source import without_comments

    text = re.sub(r"\s+", " ", without_comments(text)).strip()  # (`/* .. */` too)
    return text.replace("( ", "(").replace(" )", ")").replace("< ", "<").replace(",)", ")")


def fn_header(an: Analysis, decl: ast.FnDecl) -> str:
    """`kernel fn add<const B: i32>(z: &mut Tensor<f32, [B]>, ...)` as written."""
    sf = an.sources.get(decl.span.file)
    start = decl.attrs[-1].span.end if decl.attrs else decl.span.start
    return one_line(sf.text[start : decl.body.span.start])


def fn_doc(an: Analysis, decl: ast.FnDecl | ast.ConstDecl) -> str:
    """The `//` lines above a function's (or a `const`'s) declaration and its attributes, as `help()` of a
    function shows them."""
    from tilelang.source import doc_comment_above

    try:
        return doc_comment_above(an.sources.get(decl.span.file), decl.span.start)
    except IndexError:
        return ""


def lookup_builtin(name: str, method: bool) -> Any:
    from tilelang.intrinsics import signatures

    table = signatures.METHODS if method else signatures.FUNCTIONS
    return table.get(name)


_DECLS = (ast.FnDecl, ast.Param, ast.NamePat, ast.GenericParam, ast.ConstDecl)


def decl_name_span(node: Any) -> Span | None:
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


def cursor_target(an: Analysis, offset: int) -> tuple[Any, Binding | None] | None:
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


def shown_type(ty: Any) -> str | None:
    text = str(ty) if ty is not None else None
    # `{integer}`/`{float}`: a literal whose type the context will fix; noise.
    if text is None or text in ("()", "{integer}", "{float}") or "{error}" in text:
        return None
    return text


@functools.cache
def builtin_names() -> frozenset[str]:
    from tilelang.intrinsics import signatures

    return frozenset(signatures.FUNCTIONS)


def receiver_kind(ty: Any) -> str | None:
    """The receiver kind of `intrinsics.signatures` a value of type `ty` is
    (a `&Tensor` is a tensor parameter), for method completion."""
    from tilelang.sema import types as t

    if isinstance(ty, t.RefT):
        return "param" if isinstance(ty.inner, t.TensorT) else receiver_kind(ty.inner)
    kinds = {t.TileT: "tile", t.TileViewT: "view", t.TensorT: "tensor", t.PartitionT: "partition",
             t.OpT: "op", t.HandleT: "handle", t.GraphT: "graph", t.ScalarT: "scalar",
             t.UntypedFloat: "scalar", t.UntypedInt: "scalar"}
    return kinds.get(type(ty))


def binding_type(an: Analysis | None, b: Binding) -> Any:
    if an is None:
        return None
    sym = an.symbol_of(b.decl)
    return getattr(sym, "ty", None)
