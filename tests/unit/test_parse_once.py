"""`syntax.parser.parse_once` (`sema.loader.parse_module`, the driver's `ast` stage): a process parses a file
(a `use`d one, or the program itself) once for the same name, SourceMap id and text, and compiles share the
(immutable) AST;
the compiled program is the one a fresh parse gives; a file with a syntax
error is parsed, and reported, each time; changed text is parsed again."""

from __future__ import annotations

from pathlib import Path

import pytest

import tilelang.syntax.parser as parser_mod
from tilelang import driver
from tilelang.ir.printer import print_kernel

SRC = """use std::nn::softmax;
kernel fn k<const B: i32>(y: &mut Tensor<f32, [1, B]>, x: &Tensor<f32, [?, ?]>) {
    y.store(softmax(x.load_like(y)));
}
fn main() {
    let x = ones::<f32>([4, 16]);
    let mut y = zeros::<f32>([4, 16]);
    k::<16>(y.partition([1, 16]), &x).sync();
}
"""


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the files parsed (by `parser.parse`), with an empty cache."""
    seen: list[str] = []
    real = parser_mod.parse

    def counted(sf, sink):  # type: ignore[no-untyped-def]
        seen.append(sf.name)
        return real(sf, sink)

    monkeypatch.setattr(parser_mod, "parse", counted)
    monkeypatch.setattr(parser_mod, "_PARSED", {})
    return seen


def _ir(src: str, name: str = "<prog>") -> str:
    r = driver.compile(src, "ir", name=name)
    assert r.ok, r.diagnostics
    return "\n".join(str(print_kernel(k)) for k in r.output)


def test_a_std_module_is_parsed_once_and_compiles_the_same(parses: list[str]) -> None:
    first = _ir(SRC)
    std = [n for n in parses if "std/" in n]
    assert std, parses
    assert _ir(SRC) == first
    assert [n for n in parses if "std/" in n] == std  # (no std file parsed again)
    parser_mod._PARSED.clear()
    assert _ir(SRC) == first and [n for n in parses if "std/" in n] == std * 2


def test_a_broken_or_changed_module_is_parsed_each_time(parses: list[str], tmp_path: Path) -> None:
    lib = tmp_path / "lib.tile"
    main = tmp_path / "main.tile"
    main.write_text('use "lib.tile";\nfn main() { let a = one(); print(a); }\n')
    lib.write_text("fn one() -> i32 { 1 +  }\n")
    for n in (1, 2):
        r = driver.compile(main.read_text(), "ir", name=str(main))
        assert not r.ok and sum("lib.tile" in p for p in parses) == n
    lib.write_text("fn one() -> i32 { 1 }\n")
    for _ in range(2):
        r = driver.compile(main.read_text(), "ir", name=str(main))
        assert r.ok, r.diagnostics
    assert sum("lib.tile" in p for p in parses) == 3  # the fixed text once more, then kept
