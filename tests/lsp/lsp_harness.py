"""A tiny LSP client session for the server tests: starts `python -m tilelang
lsp` as a subprocess and talks to it with pygls's own client (no extra test
dependency), collecting published diagnostics per document."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from collections.abc import AsyncIterator, Coroutine
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

REPO = Path(__file__).resolve().parents[2]
T = TypeVar("T")


class LoopThread:
    """An event loop on a background thread, so that one server process can
    serve several synchronous tests (starting one costs seconds)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 120) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


class Session:
    def __init__(self, client: LanguageClient) -> None:
        self.client = client
        self.diagnostics: dict[str, list[lsp.PublishDiagnosticsParams]] = {}
        self.changed = asyncio.Condition()
        self.versions: dict[str, int] = {}

    async def on_diagnostics(self, params: lsp.PublishDiagnosticsParams) -> None:
        async with self.changed:
            self.diagnostics.setdefault(params.uri, []).append(params)
            self.changed.notify_all()

    async def wait_diagnostics(self, uri: str, version: int | None = None,
                               timeout: float = 60.0) -> list[lsp.Diagnostic]:
        """The diagnostics published for `uri` (for `version`, if given)."""

        def ready() -> list[lsp.Diagnostic] | None:
            for p in reversed(self.diagnostics.get(uri, [])):
                if version is None or p.version == version:
                    return list(p.diagnostics)
            return None

        async with self.changed:
            await asyncio.wait_for(self.changed.wait_for(lambda: ready() is not None), timeout)
            result = ready()
            assert result is not None
            return result

    def open(self, uri: str, text: str) -> int:
        self.versions[uri] = 1
        self.client.text_document_did_open(lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(uri=uri, language_id="tile", version=1, text=text)))
        return 1

    def change(self, uri: str, text: str) -> int:
        version = self.versions[uri] + 1
        self.versions[uri] = version
        self.client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=text)]))
        return version

    def edit(self, uri: str, start: tuple[int, int], end: tuple[int, int], text: str) -> int:
        """An incremental change, as VS Code sends them."""
        version = self.versions[uri] + 1
        self.versions[uri] = version
        rng = lsp.Range(start=lsp.Position(line=start[0], character=start[1]),
                        end=lsp.Position(line=end[0], character=end[1]))
        self.client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[lsp.TextDocumentContentChangePartial(range=rng, text=text)]))
        return version

    async def hover(self, uri: str, line: int, character: int) -> lsp.Hover | None:
        return await self.client.text_document_hover_async(lsp.HoverParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri),
            position=lsp.Position(line=line, character=character)))

    async def definition(self, uri: str, line: int, character: int) -> object:
        return await self.client.text_document_definition_async(lsp.DefinitionParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri),
            position=lsp.Position(line=line, character=character)))

    async def completion(self, uri: str, line: int, character: int) -> object:
        return await self.client.text_document_completion_async(lsp.CompletionParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri),
            position=lsp.Position(line=line, character=character)))

    async def signature_help(self, uri: str, line: int, character: int) -> lsp.SignatureHelp | None:
        return await self.client.text_document_signature_help_async(lsp.SignatureHelpParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri),
            position=lsp.Position(line=line, character=character)))

    async def references(self, uri: str, line: int, character: int) -> object:
        return await self.client.text_document_references_async(lsp.ReferenceParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri),
            position=lsp.Position(line=line, character=character),
            context=lsp.ReferenceContext(include_declaration=True)))

    async def rename(self, uri: str, line: int, character: int, new_name: str) -> object:
        return await self.client.text_document_rename_async(lsp.RenameParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri),
            position=lsp.Position(line=line, character=character), new_name=new_name))

    async def inlay_hints(self, uri: str, end_line: int) -> object:
        return await self.client.text_document_inlay_hint_async(lsp.InlayHintParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri),
            range=lsp.Range(start=lsp.Position(line=0, character=0),
                            end=lsp.Position(line=end_line, character=0))))

    async def semantic_tokens(self, uri: str) -> object:
        return await self.client.text_document_semantic_tokens_full_async(lsp.SemanticTokensParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri)))

    async def code_actions(self, uri: str, line: int, character: int) -> object:
        pos = lsp.Position(line=line, character=character)
        return await self.client.text_document_code_action_async(lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri),
            range=lsp.Range(start=pos, end=pos),
            context=lsp.CodeActionContext(diagnostics=[])))

    async def links(self, uri: str) -> object:
        return await self.client.text_document_document_link_async(lsp.DocumentLinkParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri)))

    async def workspace_symbols(self, query: str) -> object:
        return await self.client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query=query))

    async def symbols(self, uri: str) -> object:
        return await self.client.text_document_document_symbol_async(lsp.DocumentSymbolParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri)))


@asynccontextmanager
async def session(capabilities: lsp.ClientCapabilities | None = None) -> AsyncIterator[Session]:
    client = LanguageClient("tile-tests", "0")
    s = Session(client)

    @client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    async def _diags(params: lsp.PublishDiagnosticsParams) -> None:
        await s.on_diagnostics(params)

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    # `--stdio` as language clients pass it (vscode-languageclient does).
    await client.start_io(sys.executable, "-m", "tilelang", "lsp", "--stdio", cwd=str(REPO), env=env)
    try:
        await asyncio.wait_for(client.initialize_async(lsp.InitializeParams(
            capabilities=capabilities or lsp.ClientCapabilities(),
            root_uri=REPO.as_uri())), 60)
        client.initialized(lsp.InitializedParams())
        yield s
    finally:
        try:
            await asyncio.wait_for(client.shutdown_async(None), 10)
            client.exit(None)
        finally:
            await client.stop()


def position_of(text: str, needle: str, occurrence: int = 1, delta: int = 0) -> tuple[int, int]:
    """The (line, character) of the `occurrence`-th `needle` in `text`, plus
    `delta` characters (ASCII test sources: UTF-16 == code points)."""
    idx = -1
    for _ in range(occurrence):
        idx = text.index(needle, idx + 1)
    idx += delta
    line = text.count("\n", 0, idx)
    return line, idx - (text.rfind("\n", 0, idx) + 1)
