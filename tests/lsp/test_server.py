"""End-to-end tests of `tilec lsp`: a real server process over stdio, driven
by pygls's client, as an editor would."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lsp_harness import LoopThread, Session, position_of, session
from lsprotocol import types as lsp


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[LoopThread, Session]]:
    """One `python -m tilelang lsp` process for this module's tests (starting
    one costs seconds); each test works on its own document."""
    runner = LoopThread()
    manager = session()
    s = runner.run(manager.__aenter__())
    try:
        yield runner, s
    finally:
        runner.run(manager.__aexit__(None, None, None))
        runner.close()


def run(server: tuple[LoopThread, Session], scenario: Any) -> None:
    runner, s = server
    runner.run(scenario(s))

ADD = """\
kernel fn add<const B: i32>(z: &mut Tensor<f32, [B]>,
                            x: &Tensor<f32, [?]>,
                            y: &Tensor<f32, [?]>) {
    let tx = x.load_like(z);
    let ty = y.load_like(z);
    z.store(tx + ty);
}

fn main() {
    let n = 1 << 20;
    let x = randn::<f32>([n], 0);
    let y = randn::<f32>([n], 1);
    let mut z = zeros::<f32>([n]);
    add(z.partition([1024]), &x, &y).sync();
    print(z.sum());
}
"""


def _errors(diags: list[lsp.Diagnostic]) -> list[lsp.Diagnostic]:
    return [d for d in diags if d.severity == lsp.DiagnosticSeverity.Error]


def test_syntax_error_is_published_and_cleared_by_an_edit(server: Any) -> None:
    URI = "untitled:syntax"
    broken = ADD.replace("let n = 1 << 20;", "let n = 1 << 20")

    async def scenario(s: Session) -> None:
        version = s.open(URI, broken)
        diags = _errors(await s.wait_diagnostics(URI, version))
        assert [d.code for d in diags] == ["E0001"]
        d = diags[0]
        assert d.source == "tilec"
        assert d.code_description is not None and d.code_description.href.endswith("/E0001.md")
        assert "expected" in d.message and "`;`" in d.message
        # The primary label points at the end of the line that lacks `;`.
        line, col = position_of(broken, "1 << 20", delta=len("1 << 20") - 1)
        assert (d.range.start.line, d.range.start.character) == (line, col)
        assert d.related_information, "the unexpected token is related information"
        assert any("unexpected" in r.message for r in d.related_information)

        # the quick fix inserts the `;`
        actions = await s.code_actions(URI, d.range.start.line, d.range.start.character)
        assert isinstance(actions, (list, tuple)) and len(actions) == 1
        action = actions[0]
        assert isinstance(action, lsp.CodeAction) and action.title == "insert `;`"
        assert action.edit is not None and action.edit.changes is not None
        (edit,) = action.edit.changes[URI]
        assert edit.new_text == ";" and edit.range.start == edit.range.end
        assert (edit.range.start.line, edit.range.start.character) == (line, col + 1)

        version = s.change(URI, ADD)
        assert _errors(await s.wait_diagnostics(URI, version)) == []

        # the same with an incremental edit: delete the `;`, then type it again
        line, col = position_of(ADD, "1 << 20;", delta=len("1 << 20"))
        version = s.edit(URI, (line, col), (line, col + 1), "")
        assert [d.code for d in _errors(await s.wait_diagnostics(URI, version))] == ["E0001"]
        version = s.edit(URI, (line, col), (line, col), ";")
        assert _errors(await s.wait_diagnostics(URI, version)) == []

    run(server, scenario)


def test_ownership_error_has_code_range_and_related_move(server: Any) -> None:
    URI = "untitled:ownership"
    text = ADD.replace("    let mut z = zeros::<f32>([n]);\n",
                       "    let mut z = zeros::<f32>([n]);\n    let w = x;\n")
    fixed = text.replace("&x, &y", "&w, &y")

    async def scenario(s: Session) -> None:
        version = s.open(URI, text)
        diags = _errors(await s.wait_diagnostics(URI, version))
        assert [d.code for d in diags] == ["E0306"], [(d.code, d.message) for d in diags]
        d = diags[0]
        use_line, use_col = position_of(text, "&x, &y", delta=1)
        assert (d.range.start.line, d.range.start.character) == (use_line, use_col)
        assert (d.range.end.line, d.range.end.character) == (use_line, use_col + 1)
        assert d.source == "tilec"
        moved_line, _ = position_of(text, "let w = x;")
        assert d.related_information is not None
        assert any(r.location.range.start.line == moved_line for r in d.related_information)

        version = s.change(URI, fixed)
        assert _errors(await s.wait_diagnostics(URI, version)) == []

    run(server, scenario)


def test_hover_definition_symbols_completion_signature_help(server: Any) -> None:
    URI = "untitled:features"

    async def scenario(s: Session) -> None:
        version = s.open(URI, ADD)
        await s.wait_diagnostics(URI, version)

        # hover: a local's declaration (with its type once sema runs)
        line, col = position_of(ADD, "tx + ty")
        h = await s.hover(URI, line, col)
        assert h is not None and isinstance(h.contents, lsp.MarkupContent)
        assert "tx" in h.contents.value
        assert "Tile<f32, [B]>" in h.contents.value
        assert h.range is not None and h.range.start == lsp.Position(line=line, character=col)

        # hover: a builtin's signature and doc
        line, col = position_of(ADD, "zeros::<f32>")
        h = await s.hover(URI, line, col + 1)
        assert h is not None and "zeros::<T>(shape" in h.contents.value  # type: ignore[union-attr]

        # hover: a built-in method
        line, col = position_of(ADD, "load_like")
        h = await s.hover(URI, line, col + 2)
        assert h is not None and "load_like" in h.contents.value  # type: ignore[union-attr]

        # definition: the kernel called from main
        line, col = position_of(ADD, "add(z.partition")
        loc = await s.definition(URI, line, col + 1)
        assert isinstance(loc, lsp.Location)
        assert loc.uri == URI
        assert (loc.range.start.line, loc.range.start.character) == position_of(ADD, "add<")
        assert loc.range.end.character - loc.range.start.character == len("add")

        # definition: a local
        line, col = position_of(ADD, "tx + ty", delta=len("tx + "))
        loc = await s.definition(URI, line, col)
        assert isinstance(loc, lsp.Location)
        assert (loc.range.start.line, loc.range.start.character) == position_of(ADD, "ty = y")

        # document symbols: both items, params as children
        syms = await s.symbols(URI)
        assert isinstance(syms, list)
        assert [x.name for x in syms] == ["add", "main"]
        assert [c.name for c in syms[0].children or []][:4] == ["B", "z", "x", "y"]
        assert "kernel fn add<const B: i32>" in (syms[0].detail or "")

        # completion inside main: names in scope, builtins, keywords
        line, col = position_of(ADD, "    print(z.sum())")
        result = await s.completion(URI, line, 4)
        assert isinstance(result, lsp.CompletionList)
        labels = {i.label for i in result.items}
        assert {"x", "y", "z", "n", "add", "zeros", "assert_close", "let", "f32"} <= labels
        assert "block_id" not in labels  # kernel-only, and this is `main`
        # at the end of a line, a completed call brings its parentheses
        line, col = position_of(ADD, "1 << 20;", delta=len("1 << 20;"))
        result = await s.completion(URI, line, col)
        assert isinstance(result, lsp.CompletionList)
        (zeros,) = [i for i in result.items if i.label == "zeros"]
        assert zeros.insert_text == "zeros::<$1>($0)"
        assert zeros.insert_text_format == lsp.InsertTextFormat.Snippet
        assert zeros.command is not None and zeros.command.command == "editor.action.triggerParameterHints"

        # completion after `.`: methods
        line, col = position_of(ADD, "z.sum()", delta=2)
        result = await s.completion(URI, line, col)
        assert isinstance(result, lsp.CompletionList)
        assert "sum" in {i.label for i in result.items}

        # signature help for a kernel call, second argument active
        line, col = position_of(ADD, "&x, &y", delta=1)
        sh = await s.signature_help(URI, line, col)
        assert sh is not None
        sig = sh.signatures[0]
        assert sig.label.startswith("kernel fn add<const B: i32>(z: &mut Tensor<f32, [B]>")
        assert sh.active_parameter == 1
        start, end = sig.parameters[1].label  # type: ignore[index, misc]
        assert sig.label[start:end] == "x: &Tensor<f32, [?]>"

        # references and rename of a local
        line, col = position_of(ADD, "tx + ty")
        refs = await s.references(URI, line, col)
        assert isinstance(refs, (list, tuple))
        assert [(r.range.start.line, r.range.start.character) for r in refs] == [
            position_of(ADD, "tx = x"), position_of(ADD, "tx + ty")]
        edit = await s.rename(URI, line, col, "left")
        assert isinstance(edit, lsp.WorkspaceEdit) and edit.changes is not None
        assert {e.new_text for e in edit.changes[URI]} == {"left"}
        assert len(edit.changes[URI]) == 2

        # inlay hints: the inferred tile type of `tx`, the inferred `B` of the launch
        hints = await s.inlay_hints(URI, ADD.count("\n"))
        assert isinstance(hints, (list, tuple))
        shown = {(h.position.line, h.position.character, h.label) for h in hints}
        line, col = position_of(ADD, "tx = x", delta=2)
        assert (line, col, ": Tile<f32, [B]>") in shown
        line, col = position_of(ADD, "add(z.partition", delta=3)
        assert (line, col, "<B = 1024>") in shown

        # semantic tokens: the first is the kernel's name, a function declaration
        tokens = await s.semantic_tokens(URI)
        assert isinstance(tokens, lsp.SemanticTokens)
        assert len(tokens.data) % 5 == 0 and len(tokens.data) > 50
        assert list(tokens.data[:3]) == [0, len("kernel fn "), len("add")]

    run(server, scenario)


def test_half_typed_and_garbage_documents_never_crash_the_server(server: Any) -> None:
    URI = "untitled:garbage"
    half = "fn main() {\n    let x = zeros::<f32>([4]);\n    exp(x.\n"
    garbage = "}}}{{ kernel fn fn <<< @@@ \"unterminated\n/* open comment"

    async def scenario(s: Session) -> None:
        version = s.open(URI, ADD)
        await s.wait_diagnostics(URI, version)
        for text in (half, garbage, "", "\n\n\n", "fn"):
            version = s.change(URI, text)
            diags = await s.wait_diagnostics(URI, version)
            assert all(d.source == "tilec" for d in diags)
            # Requests at every kind of position answer without error.
            last = text.count("\n")
            for line, col in ((0, 0), (last, 0), (last, 200), (1, 5), (50, 3)):
                await s.hover(URI, line, col)
                await s.definition(URI, line, col)
                await s.completion(URI, line, col)
                await s.signature_help(URI, line, col)
            await s.symbols(URI)

        # While half typed: signature help for `exp(` and methods after `x.`,
        # with names from the last version that parsed.
        version = s.change(URI, half)
        await s.wait_diagnostics(URI, version)
        sh = await s.signature_help(URI, 2, len("    exp("))
        assert sh is not None and sh.signatures[0].label.startswith("exp(")
        result = await s.completion(URI, 2, len("    exp(x."))
        assert isinstance(result, lsp.CompletionList)
        assert "load_like" in {i.label for i in result.items} or "reshape" in {
            i.label for i in result.items}

        # The server is still alive and right after all that.
        version = s.change(URI, ADD)
        assert _errors(await s.wait_diagnostics(URI, version)) == []

    run(server, scenario)


def test_edits_are_debounced_and_saving_an_imported_file_rechecks_its_importers(
        server: Any, tmp_path: Path) -> None:
    helper = tmp_path / "helper.tile"
    helper.write_text("fn twice(x: f32) -> f32 { x * 2.0 }\n", encoding="utf-8")
    main = tmp_path / "main.tile"
    text = 'use "helper.tile";\n\nfn main() {\n    print(twice(1.0));\n}\n'
    main.write_text(text, encoding="utf-8")
    main_uri, helper_uri = main.as_uri(), helper.as_uri()

    async def scenario(s: Session) -> None:
        version = s.open(main_uri, text)
        assert _errors(await s.wait_diagnostics(main_uri, version)) == []

        # go to definition crosses into the imported file
        loc = await s.definition(main_uri, 3, len("    print(tw"))
        assert isinstance(loc, lsp.Location) and loc.uri == helper_uri

        # the `use` string is a link to the file; workspace symbols find `twice`
        links = await s.links(main_uri)
        assert isinstance(links, (list, tuple)) and [link.target for link in links] == [helper_uri]
        found = await s.workspace_symbols("twi")
        assert isinstance(found, (list, tuple))
        assert any(x.name == "twice" and x.location.uri == helper_uri for x in found)

        # a burst of edits: the last text is what gets checked
        for i in range(5):
            last = s.change(main_uri, text.replace("twice(1.0)", f"twice({i}.0) +"))
        last = s.change(main_uri, text.replace("twice", "thrice"))
        diags = _errors(await s.wait_diagnostics(main_uri, last))
        assert [d.code for d in diags] == ["E0102"]
        # Published in order, ending with the last version. (Whether the burst
        # was coalesced depends on timing, so it is not asserted here.)
        published = [p.version for p in s.diagnostics[main_uri]]
        assert published[0] == 1 and published[-1] == last
        assert published == sorted(published)

        # the helper gains `thrice` on disk and is saved: main is checked again
        helper.write_text("fn thrice(x: f32) -> f32 { x * 3.0 }\n", encoding="utf-8")
        before = len(s.diagnostics[main_uri])
        s.open(helper_uri, helper.read_text(encoding="utf-8"))
        s.client.text_document_did_save(lsp.DidSaveTextDocumentParams(
            text_document=lsp.TextDocumentIdentifier(uri=helper_uri)))

        async def rechecked() -> list[lsp.Diagnostic]:
            while True:
                published = s.diagnostics[main_uri]
                if len(published) > before:
                    return list(published[-1].diagnostics)
                await asyncio.sleep(0.05)

        assert _errors(await asyncio.wait_for(rechecked(), 30)) == []

    run(server, scenario)


def test_positions_follow_the_negotiated_encoding() -> None:
    """A client that prefers UTF-32 gets code-point columns; the default
    client (the other tests) gets UTF-16 ones."""
    text = 'fn main() {\n    print("😀😀"); let a = 1; print(b);\n}\n'
    uri = "untitled:utf32"
    caps = lsp.ClientCapabilities(general=lsp.GeneralClientCapabilities(
        position_encodings=[lsp.PositionEncodingKind.Utf32, lsp.PositionEncodingKind.Utf16]))

    async def scenario() -> None:
        async with session(caps) as s:
            version = s.open(uri, text)
            (d,) = _errors(await s.wait_diagnostics(uri, version))
            line = text.split("\n")[1]
            assert (d.range.start.line, d.range.start.character) == (1, line.index("b);"))
            loc = await s.definition(uri, 1, line.index("a = 1"))
            assert isinstance(loc, lsp.Location)
            assert loc.range.start.character == line.index("a = 1")

    asyncio.run(scenario())


def test_a_used_module_s_error_doc_and_file_over_the_protocol(server: Any, tmp_path: Path) -> None:
    """huser24 (2026-12-07): a program whose `use`d module has an error that a function called from a kernel
    and from `main` holds: the module's error was published twice at the document's top; hover and signature
    help showed no doc comment; go to definition on the `use` string gave nothing."""
    (tmp_path / "util.tile").write_text(
        "// Doubles it.\nfn twice(x: f32) -> f32 {\n    let y: i32 = 2.5;\n    x * 2.0\n}\n"
        "kernel fn scale<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>) {\n"
        "    z.store(x.load_like(z) * twice(3.0));\n}\n", encoding="utf-8")
    text = ('use "util.tile";\n\nfn main() {\n    let x = zeros::<f32>([8]);\n    let mut z = zeros::<f32>([8]);\n'
            '    scale(z.partition([4]), &x).sync();\n    let b: i32 = true;\n    print(twice(1.0));\n}\n')
    uri = (tmp_path / "main.tile").as_uri()

    async def scenario(s: Session) -> None:
        version = s.open(uri, text)
        diags = _errors(await s.wait_diagnostics(uri, version))
        assert [(d.range.start.line, d.code) for d in diags] == [(0, "E0203"), (6, "E0203")]
        assert "(in " in diags[0].message and "util.tile:3:18)" in diags[0].message.splitlines()[0]
        h = await s.hover(uri, *position_of(text, "twice(1"))
        assert h is not None and isinstance(h.contents, lsp.MarkupContent) and h.contents.value.endswith("Doubles it.")
        sig = await s.signature_help(uri, *position_of(text, "twice(1", delta=6))
        assert sig is not None and sig.signatures[0].label == "fn twice(x: f32) -> f32"
        loc = await s.definition(uri, *position_of(text, "util.tile", delta=2))
        assert isinstance(loc, lsp.Location) and loc.uri.endswith("/util.tile") and loc.range.start.line == 0

    run(server, scenario)
