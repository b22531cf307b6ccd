"""Completion and signature help at the cursor.

`completions` offers what may be written there: the methods of the
receiver's type after `.`, the modules and items after `std::`, the hints
inside `#[hints(..)]`, else the names in scope, builtins, keywords and types
(each with a snippet for calls). While the current text does not parse it
reads the last version of the document that did. `signature_help` shows the
signature of the call the cursor is in, with the current argument.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tilelang.lsp.document import (
    DTYPE_DOCS,
    Analysis,
    binding_type,
    enclosing_fn,
    fn_doc,
    fn_header,
    lookup_builtin,
    one_line,
    receiver_kind,
    resolve_name,
    visible_bindings,
)
from tilelang.syntax import ast


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
    from tilelang.sema.items import KNOWN_HINTS

    return tuple(KNOWN_HINTS)


_HINT_DOCS = {
    "num_warps": "warps per tile block (a power of two up to 32)",
    "stages": "software pipelining depth of loads in loops",
    "min_blocks": "tile blocks an SM must hold at once (the register budget): a literal or a const generic",
    "max_blocks": "at most this many tile blocks on an SM at once (fewer memory requests in flight): "
                  "a literal or a const generic",
    "pdl_early": "under programmatic dependent launch, let the next kernel start before this one waits "
                 "(a one-wave kernel; 2: at its main loop's last iteration; 3: at its exit): a literal or a const "
                 "generic",
    "prefetch_lines": "`p.prefetch` as one L2 prefetch a line from the threads, also on sm_90 (bulk "
                      "prefetches there otherwise): a literal or a const generic",
    "evict_first": "the loads a ring streams (`stages`) are evict-first in L2: bytes read once a launch "
                   "leave the rest of L2 in place: a literal or a const generic",
    "arrive_wait": "in `if last_block(axis)`, the group's block of the largest index waits for the others and "
                   "runs the region; the others signal and leave at once: a literal or a const generic",
    "fast_math": "`true`: exp, sigmoid, tanh and `/` by the GPU's approximate forms, within stated bounds "
                 "(docs/reference.md, Hints); the interpreter as always",
}


_HINTS = {name: _HINT_DOCS.get(name, "") for name in _known_hints()}


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
                    kind = receiver_kind(binding_type(source, b))
                    if kind is not None:
                        break
        return _method_completions(kind)

    path = re.search(r"((?:[A-Za-z_]\w*\s*::\s*)+)$", head)
    if path:
        # A module path (`std::attention::` in a use, a qualified name or a
        # comment) lists that module's items; a turbofish or a path we know
        # nothing about has none.
        return _module_completions([s.strip() for s in path.group(1).split("::") if s.strip()])
    if head.rstrip().endswith("::"):
        return []  # a turbofish after `>`

    if re.search(r"#\[\s*$", head):
        return [Completion("hints", "function", "#[hints(num_warps = .., stages = ..)]",
                           "compilation hints for the kernel that follows"),
                Completion("autotune", "function", "#[autotune(B = [.., ..], num_warps = [..], key = [..])]",
                           "candidates the tuner times for the kernel that follows"),
                Completion("cluster", "function", "#[cluster(x, y, z)]",
                           "the blocks of one thread-block cluster along grid axes 0, 1, 2"),
                Completion("requires", "function", '#[requires(cond, "message")]',
                           "a condition on the launch's shapes, numbers and grid, checked by the host before it"),
                Completion("allow", "function", "#[allow(lint, ..)]", "lints not to warn about in the function")]
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
            ty = binding_type(source, b)
            match b.kind:
                case "kernel" | "fn":
                    add(Completion(b.name, b.kind, fn_header(source, b.decl), "",
                                   _call_snippet(b.name, False, bool(b.decl.params))))
                case "const" | "generic":
                    add(Completion(b.name, "constant", one_line(source.span_text(b.decl.span)).rstrip(";")))
                case "import" if _imported(source, b.name) is not None:
                    add(_imported(source, b.name))  # type: ignore[arg-type]
                case _:
                    add(Completion(b.name, "variable", str(ty) if ty is not None else b.kind))
        # what a `use "util.tile";` or a glob brought in: no binding of the document names it
        root = source.program.modules.get("") if source.program is not None else None
        for name in root.scope if root is not None else ():
            c = _imported(source, name)
            if c is not None:
                add(c)

    from tilelang.intrinsics import signatures

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
        add(Completion(ty_name, "type", DTYPE_DOCS.get(ty_name, "")))
    add(Completion("std", "module", "the standard library"))
    return list(items.values())


def _imported(an: Analysis, name: str) -> Completion | None:
    """A function, kernel or constant of another module that the document's `use`s bring in as `name`."""
    root = an.program.modules.get("") if an.program is not None else None
    sym = root.scope.get(name) if root is not None else None
    decl = getattr(sym, "decl", None)
    if sym is None or name in root.own:  # type: ignore[union-attr]
        return None
    if isinstance(decl, ast.FnDecl):
        return Completion(name, "kernel" if decl.is_kernel else "fn", fn_header(an, decl), fn_doc(an, decl),
                          _call_snippet(name, False, bool(decl.params)))
    if isinstance(decl, ast.ConstDecl):
        return Completion(name, "constant", one_line(an.span_text(decl.span)).rstrip(";"))
    return None


def _method_completions(kind: str | None) -> list[Completion]:
    from tilelang.intrinsics import signatures

    return [Completion(sig.name, "method", sig.signature, sig.doc,
                       _call_snippet(sig.name, bool(sig.generics), bool(sig.params)))
            for sig in signatures.methods_for(kind)]


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
        items = [i for i in source.module.items if isinstance(i, ast.FnDecl)]
        if source.program is not None and "" in source.program.modules:  # and those `use` brought in
            sym = source.program.modules[""].scope.get(name)
            if isinstance(getattr(sym, "decl", None), ast.FnDecl):
                items.append(sym.decl)  # type: ignore[union-attr]
        for item in items:
            if item.name.name == name:
                params = [one_line(source.span_text(p.span)) for p in item.params]
                generics = ""
                if item.generics:
                    generics = "<" + ", ".join(one_line(source.span_text(g.span)) for g in item.generics) + ">"
                tail = f" -> {one_line(source.span_text(item.ret.span))}" if item.ret is not None else ""
                prefix = ("kernel fn " if item.is_kernel else "fn ") + name + generics
                label, spans = _label_with_params(prefix, params, tail)
                active = min(commas, max(len(params) - 1, 0))
                return SignatureInfo(label, spans, active, fn_doc(source, item))
    sig = lookup_builtin(name, method=is_method)
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
