"""The language reference (`docs/reference.md`, `tilec doc`).

- `docs/reference.md` is exactly what `tilelang.doc.reference()` generates
  (rerun `python -m tilelang.doc --write docs/reference.md` after editing
  `tilelang/doc/`, or this test with `--bless`);
- every built-in operation of the signature table has an entry with
  hand-written text and at least one example, and `builtins.md` documents
  nothing that is not a built-in;
- every ```tile example runs: a program whose `// expect:` lines equal its
  output, or, with error annotations, one that fails with exactly those
  errors (the `.tile` test plugin's rules, tests/README.md);
- `tilec doc NAME` prints an entry.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from clirunner import invoke
from tileplugin import bless_enabled, compare, emitted_from_diagnostics, parse_spec, run_program

from tilelang import doc, driver
from tilelang.intrinsics.signatures import FUNCTIONS, METHODS

REPO = Path(__file__).resolve().parents[2]
REFERENCE = REPO / "docs" / "reference.md"


def test_docs_reference_md_is_up_to_date(request: pytest.FixtureRequest) -> None:
    text = doc.reference()
    if bless_enabled(request.config):
        REFERENCE.write_text(text, encoding="utf-8")
    assert REFERENCE.read_text(encoding="utf-8") == text, (
        "docs/reference.md is stale: run `python -m tilelang.doc --write docs/reference.md`")


def test_every_section_file_is_in_the_reference() -> None:
    # `06b-constants.md` was never shown (the file pattern wanted two digits and a dash):
    # its example printed a stale value nobody ran
    files = sorted(p.name for p in (REPO / "tilelang" / "doc" / "sections").glob("*.md"))
    assert len(doc.sections()) == len(files) >= 12, files
    reference = doc.reference()
    assert all(f"## {sec.title}" in reference for sec in doc.sections())


def test_every_builtin_is_documented_with_an_example() -> None:
    texts = doc.builtin_texts()
    names = set(FUNCTIONS) | set(METHODS)
    missing = sorted(n for n in names if n not in texts)
    assert not missing, f"built-ins without a `## name` section in tilelang/doc/builtins.md: {missing}"
    stray = sorted(set(texts) - names)
    assert not stray, f"builtins.md documents names that are not built-ins: {stray}"
    without = sorted(n for n in names if not doc.examples(texts[n]))
    assert not without, f"built-ins without an example: {without}"
    reference = doc.reference()
    for name in names:
        assert f"### `{name}`" in reference
        for sig in (FUNCTIONS.get(name), METHODS.get(name)):
            if sig is not None:
                assert sig.signature in reference and sig.doc in reference


def _all_examples() -> list[tuple[str, str]]:
    out = []
    for sec in doc.sections():
        out += [(f"{sec.slug}#{i}", ex) for i, ex in enumerate(doc.examples(sec.text))]
    for name, text in sorted(doc.builtin_texts().items()):
        out += [(f"{name}#{i}", ex) for i, ex in enumerate(doc.examples(text))]
    return out


EXAMPLES = _all_examples()


def test_every_section_has_an_example() -> None:
    assert all(doc.examples(s.text) for s in doc.sections() if s.slug != "limits")
    assert len(EXAMPLES) > 60


@pytest.mark.parametrize(("where", "program"), EXAMPLES, ids=[w for w, _ in EXAMPLES])
def test_example_runs(where: str, program: str, tmp_path: Path) -> None:
    path = tmp_path / f"{where.replace('#', '_')}.tile"
    path.write_text(program, encoding="utf-8")
    spec = parse_spec(program, path)
    result = driver.check(path)
    emitted = emitted_from_diagnostics(result.diagnostics, result.sources)
    errors = [x for x in spec.expectations if x.kind == "error"]
    if any(e.kind == "error" for e in emitted):  # an example of a checker error
        problems = compare(spec.expectations, emitted, str(path))
        assert not problems, "\n".join(problems)
        return
    status, stdout, runtime, crash, rendered = run_program(path)
    assert crash is None, crash
    if errors:
        problems = compare(errors, runtime, str(path))
        assert not problems and status not in (0, 101), "\n".join(problems) + rendered
        return
    assert status == 0, rendered
    assert [ln.rstrip() for ln in stdout.splitlines()] == spec.stdout


def test_tilec_doc_prints_an_entry_a_section_and_a_list() -> None:
    exp = invoke("doc", "exp")
    assert exp.exit_code == 0 and "exp(x: Tile<T, S> | T)" in exp.stdout and "```tile" in exp.stdout
    method = invoke("doc", ".load_like")
    assert method.exit_code == 0 and "x.load_like(z)" in method.stdout
    numbers = invoke("doc", "numbers")
    assert numbers.exit_code == 0 and "Integer division" in numbers.stdout
    listing = invoke("doc")
    assert listing.exit_code == 0 and "load_padded" in listing.stdout and "types" in listing.stdout
    unknown = invoke("doc", "exq")
    assert unknown.exit_code == 1 and "did you mean `exp`" in unknown.stderr
