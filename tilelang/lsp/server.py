"""`tilec lsp`: the Tile language server (pygls 2, LSP over stdio).

Features: diagnostics (published on open, change and save, from the same
driver as `tilec check`), hover, go to definition, references, document
highlight, rename, document symbols, completion, signature help, inlay
hints (inferred types of `let` bindings, inferred const generics at calls)
semantic tokens (parameters, `&mut` parameters, const generics, builtins:
what a lexical grammar cannot tell apart), and quick fixes for the edits a
diagnostic spells out (a missing `;`, a misspelt name, a missing `mut`);
also document links for `use "file.tile";` and workspace symbols. The answers come from `analysis.py`; this
module converts between LSP and the compiler's model and nothing else.

Diagnostics map as follows: the primary label's span is the range (a
zero-width span is widened to one character so that editors can show it),
`code` is the registry code (`E0302`) with a link-free description, `source`
is `"tilec"`, the message is the diagnostic's message followed by its notes
and help, and every label with a message (primary and secondary) becomes a
`relatedInformation` entry, which is how an editor shows "first borrow here".
A diagnostic located in another file (a module the document `use`s) is shown
at the top of the document with that location as related information.

Invariants: this is the only module that imports pygls or lsprotocol. A
request handler never lets an exception escape: anything unexpected is logged
(window/logMessage and stderr) and the request answers "nothing". The protocol
owns stdout; `serve()` points `sys.stdout` at stderr so that a stray print
anywhere in the compiler cannot corrupt the stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path
from pygls.workspace.position_codec import PositionCodec, ServerTextPosition

from tilelang import __version__
from tilelang.diagnostics.model import Diagnostic, Severity
from tilelang.lsp import analysis
from tilelang.lsp.analysis import Analysis
from tilelang.source import SourceFile, Span

log = logging.getLogger("tilelang.lsp")

T = TypeVar("T")


class TileLanguageServer(LanguageServer):
    """A pygls server that remembers the latest analysis of each document and
    the latest one that parsed (for completion while the user types)."""

    def __init__(self) -> None:
        super().__init__("tilec", __version__)
        self.analyses: dict[str, Analysis] = {}
        self.last_parsed: dict[str, Analysis] = {}
        self.pending: dict[str, asyncio.TimerHandle] = {}  # debounced diagnostics

    # -- analysis cache ------------------------------------------------------
    def analysis_for(self, uri: str) -> Analysis:
        doc = self.workspace.get_text_document(uri)
        text = doc.source
        cached = self.analyses.get(uri)
        if cached is not None and cached.text == text:
            return cached
        an = analysis.analyze(text, _file_name(uri))
        self.analyses[uri] = an
        if an.parsed_cleanly:
            self.last_parsed[uri] = an
        if an.internal_error is not None:
            self.log(lsp.MessageType.Error, f"internal compiler error while checking {uri}: "
                                            f"{an.internal_error}")
        return an

    def forget(self, uri: str) -> None:
        self.analyses.pop(uri, None)
        self.last_parsed.pop(uri, None)

    def log(self, kind: lsp.MessageType, message: str) -> None:
        log.warning("%s", message)
        # Without a connected client (unit tests) stderr suffices.
        with contextlib.suppress(Exception):
            self.window_log_message(lsp.LogMessageParams(type=kind, message=message))


def _file_name(uri: str) -> str:
    """The file name the driver sees: the path of a `file:` URI, so that
    `use "other.tile";` resolves next to it, or the URI itself otherwise."""
    path = to_fs_path(uri) if uri.startswith("file:") else None
    return path if path else uri


def _uri_of(name: str, fallback: str) -> str:
    """The URI of a file in the SourceMap: the document itself, or a file on
    disk (a stdlib module, a `use`d file)."""
    if name.startswith(("untitled:", "file:")):
        return name
    path = Path(name)
    if path.is_absolute() or path.exists():
        return from_fs_path(str(path.resolve())) or fallback
    return fallback


# ---------------------------------------------------------------- positions

_UTF16 = PositionCodec()  # LSP's default and what VS Code speaks


def _codec() -> PositionCodec:
    """The position encoding negotiated with the client (UTF-16 before the
    handshake, or when nothing else was agreed)."""
    try:
        return server.workspace.position_codec
    except Exception:  # not initialized yet (unit tests call the converters directly)
        return _UTF16


@functools.lru_cache(maxsize=16)
def _split(text: str) -> tuple[str, ...]:
    # Lines as `SourceFile` counts them: split at "\n" only.
    return tuple(text.split("\n"))


def _position(sf: SourceFile, offset: int) -> lsp.Position:
    line, col = sf.line_col(offset)
    return _codec().position_to_client_units(_split(sf.text), ServerTextPosition(line - 1, col - 1))


def _range(sf: SourceFile, span: Span) -> lsp.Range:
    return lsp.Range(start=_position(sf, span.start), end=_position(sf, span.end))


def _offset(sf: SourceFile, pos: lsp.Position) -> int:
    """The character offset of an LSP position (clamped to the text)."""
    lines = _split(sf.text)
    codec = _codec()
    if pos.line >= len(lines):
        return len(sf.text)
    line = lines[pos.line]
    units = 0
    col = 0
    for ch in line:
        if units >= pos.character:
            break
        units += codec.client_num_units(ch)
        col += 1
    return min(sum(len(x) + 1 for x in lines[: pos.line]) + col, len(sf.text))


def _visible(sf: SourceFile, span: Span) -> Span:
    """Widen a zero-width span to one character (editors hide empty ranges)."""
    if span.start != span.end:
        return span
    text = sf.text
    if span.end < len(text) and text[span.end] != "\n":
        return Span(span.file, span.start, span.end + 1)
    if span.start > 0 and text[span.start - 1] != "\n":
        return Span(span.file, span.start - 1, span.end)
    return span


# ---------------------------------------------------------------- diagnostics

_SEVERITY = {
    Severity.ERROR: lsp.DiagnosticSeverity.Error,
    Severity.WARNING: lsp.DiagnosticSeverity.Warning,
    Severity.NOTE: lsp.DiagnosticSeverity.Information,
}


def to_lsp_diagnostic(an: Analysis, diag: Diagnostic, uri: str) -> lsp.Diagnostic:
    """One compiler diagnostic as an LSP diagnostic of the document `uri`."""
    root = an.file
    primary = diag.primary_span
    related: list[lsp.DiagnosticRelatedInformation] = []
    message = diag.message
    if primary is not None and primary.file == root.id:
        rng = _range(root, _visible(root, primary))
    else:
        rng = lsp.Range(start=lsp.Position(line=0, character=0), end=lsp.Position(line=0, character=0))
        if primary is not None and primary.file >= 0:
            other = an.sources.get(primary.file)
            line, col = other.line_col(primary.start)
            message = f"{message} (in {other.name}:{line}:{col})"
    for label in diag.labels:
        if not label.message or label.span.file < 0:
            continue
        sf = an.sources.get(label.span.file)
        related.append(lsp.DiagnosticRelatedInformation(
            location=lsp.Location(uri=uri if sf.id == root.id else _uri_of(sf.name, uri),
                                  range=_range(sf, _visible(sf, label.span))),
            message=label.message,
        ))
    extra = [f"note: {n}" for n in diag.notes] + [f"help: {h}" for h in diag.help]
    if extra:
        message = "\n".join([message, *extra])
    explanation = _explanation_uri(diag.code)
    return lsp.Diagnostic(
        range=rng,
        message=message,
        severity=_SEVERITY.get(diag.severity, lsp.DiagnosticSeverity.Error),
        code=diag.code,
        # The code links to its long explanation (what `tilec explain` prints).
        code_description=lsp.CodeDescription(href=explanation) if explanation else None,
        source="tilec",
        related_information=related or None,
    )


@functools.cache
def _explanation_uri(code: str) -> str | None:
    """A `file:` URI of `explain/<code>.md`, when it is a file on disk."""
    try:
        from tilelang.diagnostics.explain import explain_dir

        path = Path(str(explain_dir() / f"{code}.md"))
    except Exception:
        return None
    return path.resolve().as_uri() if path.is_file() else None


def _diagnostics(an: Analysis, uri: str) -> list[lsp.Diagnostic]:
    out = [to_lsp_diagnostic(an, d, uri) for d in an.diagnostics]
    if an.internal_error is not None:
        out.append(lsp.Diagnostic(
            range=lsp.Range(start=lsp.Position(line=0, character=0), end=lsp.Position(line=0, character=0)),
            message=("internal compiler error while checking this file (a bug in tilec, "
                     f"please report it): {an.internal_error}"),
            severity=lsp.DiagnosticSeverity.Warning,
            source="tilec",
        ))
    return out


def publish(ls: TileLanguageServer, uri: str) -> None:
    an = ls.analysis_for(uri)
    version = ls.workspace.get_text_document(uri).version
    ls.text_document_publish_diagnostics(
        lsp.PublishDiagnosticsParams(uri=uri, version=version, diagnostics=_diagnostics(an, uri))
    )


# ---------------------------------------------------------------- the server

server = TileLanguageServer()


def _guarded(default: Any) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """Catch and log everything a handler raises; answer `default` instead."""

    def wrap(fn: Callable[..., T]) -> Callable[..., T]:
        @functools.wraps(fn)
        def run(ls: TileLanguageServer, params: Any) -> Any:
            try:
                return fn(ls, params)
            except Exception:
                ls.log(lsp.MessageType.Error, f"{fn.__name__} failed:\n{traceback.format_exc()}")
                return default

        return run

    return wrap


@server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
@_guarded(None)
def did_open(ls: TileLanguageServer, params: lsp.DidOpenTextDocumentParams) -> None:
    publish(ls, params.text_document.uri)


# Diagnostics wait until typing pauses this long, so that a burst of edits is
# checked once; requests (hover, completion ...) always see the latest text.
DEBOUNCE_S = 0.1


@server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
@_guarded(None)
def did_change(ls: TileLanguageServer, params: lsp.DidChangeTextDocumentParams) -> None:
    uri = params.text_document.uri
    _cancel_pending(ls, uri)
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # no loop (called directly): check now
        publish(ls, uri)
        return
    ls.pending[uri] = loop.call_later(DEBOUNCE_S, _publish_pending, ls, uri)


def _cancel_pending(ls: TileLanguageServer, uri: str) -> None:
    """Drop the debounced check of `uri` that has not run yet, if any."""
    pending = ls.pending.pop(uri, None)
    if pending is not None:
        pending.cancel()


def _publish_pending(ls: TileLanguageServer, uri: str) -> None:
    ls.pending.pop(uri, None)
    try:
        if uri in ls.analyses or ls.workspace.text_documents.get(uri) is not None:
            publish(ls, uri)
    except Exception:
        ls.log(lsp.MessageType.Error, f"checking {uri} failed:\n{traceback.format_exc()}")


@server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
@_guarded(None)
def did_save(ls: TileLanguageServer, params: lsp.DidSaveTextDocumentParams) -> None:
    # A saved file may be `use`d by the other open documents: check them all
    # again (their own text is unchanged, but what they import may not be).
    ls.analyses.clear()
    for uri in list(ls.workspace.text_documents):
        publish(ls, uri)


@server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
@_guarded(None)
def did_close(ls: TileLanguageServer, params: lsp.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    _cancel_pending(ls, uri)
    ls.forget(uri)
    ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[]))


def _at(ls: TileLanguageServer, doc: lsp.TextDocumentIdentifier, pos: lsp.Position) -> tuple[Analysis, int]:
    an = ls.analysis_for(doc.uri)
    return an, _offset(an.file, pos)


@server.feature(lsp.TEXT_DOCUMENT_HOVER)
@_guarded(None)
def hover(ls: TileLanguageServer, params: lsp.HoverParams) -> lsp.Hover | None:
    an, offset = _at(ls, params.text_document, params.position)
    info = analysis.hover(an, offset)
    if info is None:
        return None
    return lsp.Hover(
        contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=info.markdown),
        range=_range(an.file, info.span) if info.span.file == an.file.id else None,
    )


@server.feature(lsp.TEXT_DOCUMENT_DEFINITION)
@_guarded(None)
def definition(ls: TileLanguageServer, params: lsp.DefinitionParams) -> lsp.Location | None:
    an, offset = _at(ls, params.text_document, params.position)
    span = analysis.definition(an, offset)
    return _location(an, span, params.text_document.uri) if span is not None else None


def _location(an: Analysis, span: Span, uri: str) -> lsp.Location:
    sf = an.sources.get(span.file)
    return lsp.Location(uri=uri if sf.id == an.file.id else _uri_of(sf.name, uri),
                        range=_range(sf, span))


@server.feature(lsp.TEXT_DOCUMENT_REFERENCES)
@_guarded(None)
def references(ls: TileLanguageServer, params: lsp.ReferenceParams) -> list[lsp.Location] | None:
    an, offset = _at(ls, params.text_document, params.position)
    spans = analysis.references(an, offset, params.context.include_declaration)
    return [_location(an, s, params.text_document.uri) for s in spans] or None


@server.feature(lsp.TEXT_DOCUMENT_DOCUMENT_HIGHLIGHT)
@_guarded(None)
def document_highlight(ls: TileLanguageServer,
                       params: lsp.DocumentHighlightParams) -> list[lsp.DocumentHighlight] | None:
    an, offset = _at(ls, params.text_document, params.position)
    spans = [s for s in analysis.references(an, offset) if s.file == an.file.id]
    return [lsp.DocumentHighlight(range=_range(an.file, s)) for s in spans] or None


@server.feature(lsp.TEXT_DOCUMENT_PREPARE_RENAME)
@_guarded(None)
def prepare_rename(ls: TileLanguageServer, params: lsp.PrepareRenameParams) -> lsp.Range | None:
    an, offset = _at(ls, params.text_document, params.position)
    spans = analysis.rename_spans(an, offset, "x")
    if isinstance(spans, str):
        return None
    for s in spans:
        if s.start <= offset <= s.end:
            return _range(an.file, s)
    return None


@server.feature(lsp.TEXT_DOCUMENT_RENAME)
@_guarded(None)
def rename(ls: TileLanguageServer, params: lsp.RenameParams) -> lsp.WorkspaceEdit | None:
    an, offset = _at(ls, params.text_document, params.position)
    spans = analysis.rename_spans(an, offset, params.new_name)
    if isinstance(spans, str):
        ls.window_show_message(lsp.ShowMessageParams(type=lsp.MessageType.Warning,
                                                     message=f"cannot rename: {spans}"))
        return None
    edits = [lsp.TextEdit(range=_range(an.file, s), new_text=params.new_name) for s in spans]
    return lsp.WorkspaceEdit(changes={params.text_document.uri: edits})


@server.feature(lsp.TEXT_DOCUMENT_INLAY_HINT)
@_guarded(None)
def inlay_hint(ls: TileLanguageServer, params: lsp.InlayHintParams) -> list[lsp.InlayHint] | None:
    an = ls.analysis_for(params.text_document.uri)
    start = _offset(an.file, params.range.start)
    end = _offset(an.file, params.range.end)
    return [
        lsp.InlayHint(
            position=_position(an.file, h.offset),
            label=h.label,
            kind=lsp.InlayHintKind.Type if h.kind == "type" else lsp.InlayHintKind.Parameter,
            padding_left=False,
        )
        for h in analysis.inlay_hints(an, start, end)
    ] or None


SEMANTIC_LEGEND = lsp.SemanticTokensLegend(
    token_types=list(analysis.TOKEN_TYPES), token_modifiers=list(analysis.TOKEN_MODIFIERS))


def encode_semantic_tokens(an: Analysis) -> list[int]:
    """LSP's relative encoding: per token, the line delta, the start delta (on
    the same line) or start, the length (UTF-16 units), the type index and the
    modifier bit set."""
    data: list[int] = []
    prev_line = prev_start = 0
    for tok in analysis.semantic_tokens(an):
        start = _position(an.file, tok.span.start)
        end = _position(an.file, tok.span.end)
        if end.line != start.line:
            continue  # names never span lines; be safe anyway
        delta_line = start.line - prev_line
        delta_start = start.character - prev_start if delta_line == 0 else start.character
        bits = sum(1 << analysis.TOKEN_MODIFIERS.index(m) for m in tok.modifiers)
        data += [delta_line, delta_start, end.character - start.character,
                 analysis.TOKEN_TYPES.index(tok.type), bits]
        prev_line, prev_start = start.line, start.character
    return data


@server.feature(lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL, SEMANTIC_LEGEND)
@_guarded(None)
def semantic_tokens_full(ls: TileLanguageServer, params: lsp.SemanticTokensParams) -> lsp.SemanticTokens | None:
    # While the text does not parse this covers what did (maybe nothing); the
    # editor then falls back to the TextMate colours.
    an = ls.analysis_for(params.text_document.uri)
    return lsp.SemanticTokens(data=encode_semantic_tokens(an))


@server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION,
                lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix]))
@_guarded(None)
def code_action(ls: TileLanguageServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction] | None:
    uri = params.text_document.uri
    an = ls.analysis_for(uri)
    start = _offset(an.file, params.range.start)
    end = _offset(an.file, params.range.end)
    actions = []
    for diag in an.diagnostics:
        primary = diag.primary_span
        if primary is None or primary.file != an.file.id:
            continue
        shown = _visible(an.file, primary)
        if shown.end < start or shown.start > end:
            continue
        for fix in analysis.quick_fixes(an, diag):
            actions.append(lsp.CodeAction(
                title=fix.title,
                kind=lsp.CodeActionKind.QuickFix,
                diagnostics=[to_lsp_diagnostic(an, diag, uri)],
                is_preferred=True,
                edit=lsp.WorkspaceEdit(changes={uri: [
                    lsp.TextEdit(range=_range(an.file, span), new_text=text) for span, text in fix.edits
                ]}),
            ))
    return actions or None


@server.feature(lsp.TEXT_DOCUMENT_DOCUMENT_LINK)
@_guarded(None)
def document_link(ls: TileLanguageServer, params: lsp.DocumentLinkParams) -> list[lsp.DocumentLink] | None:
    an = ls.analysis_for(params.text_document.uri)
    links = [lsp.DocumentLink(range=_range(an.file, span), target=path.as_uri())
             for span, path in analysis.document_links(an)]
    return links or None


@server.feature(lsp.WORKSPACE_SYMBOL)
@_guarded(None)
def workspace_symbol(ls: TileLanguageServer, params: lsp.WorkspaceSymbolParams) -> list[lsp.SymbolInformation] | None:
    seen: set[tuple[str, str, int]] = set()
    out = []
    for uri in list(ls.workspace.text_documents):
        an = ls.analysis_for(uri)
        for name, kind, span in analysis.workspace_items(an, params.query):
            loc = _location(an, span, uri)
            key = (loc.uri, name, loc.range.start.line)
            if key in seen:
                continue
            seen.add(key)
            out.append(lsp.SymbolInformation(
                name=name, kind=_SYMBOL_KINDS.get(kind, lsp.SymbolKind.Function), location=loc,
                container_name="kernel" if kind == "kernel" else None))
    return out or None


_SYMBOL_KINDS = {
    "kernel": lsp.SymbolKind.Function,
    "fn": lsp.SymbolKind.Function,
    "const": lsp.SymbolKind.Constant,
    "generic": lsp.SymbolKind.TypeParameter,
    "param": lsp.SymbolKind.Variable,
    "local": lsp.SymbolKind.Variable,
    "import": lsp.SymbolKind.Namespace,
}


def _doc_symbol(an: Analysis, s: analysis.DocSymbol) -> lsp.DocumentSymbol:
    return lsp.DocumentSymbol(
        name=s.name,
        detail=s.detail,
        kind=_SYMBOL_KINDS.get(s.kind, lsp.SymbolKind.Variable),
        range=_range(an.file, s.span),
        selection_range=_range(an.file, s.selection),
        children=[_doc_symbol(an, c) for c in s.children] or None,
    )


@server.feature(lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
@_guarded([])
def document_symbol(ls: TileLanguageServer, params: lsp.DocumentSymbolParams) -> list[lsp.DocumentSymbol]:
    an = ls.analysis_for(params.text_document.uri)
    if an.module is None:
        an = ls.last_parsed.get(params.text_document.uri, an)
    return [_doc_symbol(an, s) for s in analysis.document_symbols(an)]


_COMPLETION_KINDS = {
    "keyword": lsp.CompletionItemKind.Keyword,
    "type": lsp.CompletionItemKind.TypeParameter,
    "function": lsp.CompletionItemKind.Function,
    "fn": lsp.CompletionItemKind.Function,
    "kernel": lsp.CompletionItemKind.Function,
    "method": lsp.CompletionItemKind.Method,
    "variable": lsp.CompletionItemKind.Variable,
    "constant": lsp.CompletionItemKind.Constant,
    "module": lsp.CompletionItemKind.Module,
}


@server.feature(lsp.TEXT_DOCUMENT_COMPLETION,
                lsp.CompletionOptions(trigger_characters=[".", ":"]))
@_guarded(None)
def completion(ls: TileLanguageServer, params: lsp.CompletionParams) -> lsp.CompletionList | None:
    an, offset = _at(ls, params.text_document, params.position)
    previous = ls.last_parsed.get(params.text_document.uri)
    items = [
        lsp.CompletionItem(
            label=c.label,
            kind=_COMPLETION_KINDS.get(c.kind, lsp.CompletionItemKind.Text),
            detail=c.detail or None,
            documentation=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=c.doc) if c.doc else None,
            sort_text=f"{_SORT.get(c.kind, 9)}{c.label}",
            insert_text=c.snippet,
            insert_text_format=lsp.InsertTextFormat.Snippet if c.snippet else None,
            command=_SIGNATURE_HELP if c.snippet and "$0)" in c.snippet else None,
        )
        for c in analysis.completions(an, offset, previous)
    ]
    return lsp.CompletionList(is_incomplete=False, items=items)


_SIGNATURE_HELP = lsp.Command(title="Signature help", command="editor.action.triggerParameterHints")

# Names in scope first, then builtins, then keywords and types.
_SORT = {"variable": 0, "constant": 1, "method": 1, "kernel": 2, "fn": 2, "module": 3,
         "function": 4, "keyword": 5, "type": 6}


@server.feature(lsp.TEXT_DOCUMENT_SIGNATURE_HELP,
                lsp.SignatureHelpOptions(trigger_characters=["(", ","], retrigger_characters=[","]))
@_guarded(None)
def signature_help(ls: TileLanguageServer, params: lsp.SignatureHelpParams) -> lsp.SignatureHelp | None:
    an, offset = _at(ls, params.text_document, params.position)
    info = analysis.signature_help(an, offset, ls.last_parsed.get(params.text_document.uri))
    if info is None:
        return None
    sig = lsp.SignatureInformation(
        label=info.label,
        documentation=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=info.doc) if info.doc else None,
        parameters=[lsp.ParameterInformation(label=(a, b)) for a, b in info.params],
        active_parameter=info.active if info.params else None,
    )
    return lsp.SignatureHelp(signatures=[sig], active_signature=0,
                             active_parameter=info.active if info.params else None)


def serve() -> None:
    """Run the server on stdin/stdout until the client disconnects."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # the protocol owns the real stdout
    server.start_io(stdin, stdout)
