"""Do the helps' code snippets work? (huser11, round 11; see FUZZING.md.)

For every diagnostic `tilec check` gives on tests/ui, tests/user/wrong and, with
`--seed S --count N`, N mutants of the fuzzer's seed S:

- `parse`: each backticked piece of a help that is code (not a placeholder
  such as `[..]`, a type, a declaration's start, a method's tail or another
  language's syntax quoted) must parse as Tile: an expression, a statement
  or an item;
- `apply`: the first error's cast help (`X as T`), where `X` is the text of one
  of its spans, is applied (`(X as T)` in its place) and the file checked
  again: an error left on that line is a help that leads to another error.

Prints one line a finding and a count; exit status 0 (the findings need a
reading: an `apply` finding may be a second, unrelated mistake of a mutant).
`tests/user/test_user_wrong11.py::test_the_code_in_every_help_parses` runs
both checks over tests/ui and the wrong programs in the default suite.

    python tests/fuzz/help_check.py                    # tests/ui and the wrong programs
    python tests/fuzz/help_check.py --seed 193 --count 3000
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).parent))

from tilelang import driver  # noqa: E402
from tilelang.diagnostics.model import DiagnosticSink  # noqa: E402
from tilelang.source import SourceMap  # noqa: E402
from tilelang.syntax.parser import parse  # noqa: E402

#: backticked text that is not code to parse (placeholders, types, declarations' starts, tails, others' syntax)
NOT_CODE = re.compile(r"\[\.\.\]|\(\.\.\)|\{ \.\. \}|\.\.\.|, \.\.|\.\., |::<\.\.>|<\.\.>|Tensor<|Tile<|TileView|"
                      r"Partition<|^\.|^(let|const|for|fn|kernel) |: |= \.\.|-> |^#\[|\[::|^\w+\.$|^[(\[]$")


def parses(code: str) -> bool:
    """`code` parses as an expression, a statement or an item."""
    sm = SourceMap()
    for text in (f"fn main() {{\n    let _q = {code};\n}}\n", f"fn main() {{\n    {code}\n}}\n",
                 f"fn main() {{\n    {code};\n}}\n", f"{code}\n"):
        sink = DiagnosticSink()
        parse(sm.add("h.tile", text), sink)
        if not sink.has_errors:
            return True
    return False


def code_in(help_line: str) -> list[str]:
    """The backticked pieces of a help line that are code."""
    return [c for c in re.findall(r"`([^`]+)`", help_line) if re.search(r"[(\[.]", c) and not NOT_CODE.search(c)]


def _key(code: str) -> str:
    """`code` without its casts, parentheses and spaces: what a cast help rewrites, as the source has it."""
    # (an integral float literal reads as its integer: the helps write `& 1` for `& 1.0`)
    return re.sub(r"[()\s]", "", re.sub(r"\b(\d+)\.0\b", r"\1", re.sub(r"\s+as\s+[a-z0-9]+\b", "", code)))


def _rewritten(text: str, d: object, code: str) -> list[tuple[int, int]]:
    """Where a help's code is a rewrite of a larger expression than a label's (`((z.load() as i32) << 2) as f32`
    for `z.load() << 2`, `softmax(x as f32) as f16` for `softmax(x)`): the shortest span of the first label's
    line, balanced in parentheses and around a label, that reads as the code with its casts taken out."""
    spans = [(lab.span.start, lab.span.end) for lab in d.labels]  # type: ignore[attr-defined]
    if not spans or " as " not in code:
        return []
    lo = text.rfind("\n", 0, spans[0][0]) + 1
    hi = text.find("\n", spans[0][0])
    hi = len(text) if hi < 0 else hi
    want = _key(code)
    reach = len(code) + 8  # a rewrite is about as long as its code: spans around a label, no longer (a fuzz
    # mutant's line of 40,000 characters made every span of it a candidate, cubic: seed 307 case 595)
    found = [(s, e) for a, b in spans if lo <= a < hi
             for s in range(max(lo, b - reach), a + 1) for e in range(b, min(hi, s + reach) + 1)
             if e > s and text[s:e].count("(") == text[s:e].count(")") and _key(text[s:e]) == want
             and text[s] not in " (" and text[e - 1] != " "
             and not (e < len(text) and (text[e].isalnum() or text[e] in "._"))  # whole tokens: not `1` of `1.0`
             and not (s > 0 and (text[s - 1].isalnum() or text[s - 1] == "_"))]
    return [min(found, key=lambda se: se[1] - se[0])] if found else []


def check_text(name: str, text: str, tmp: Path, diags: list[Any] | None = None) -> list[str]:
    """The findings of `parse` and `apply` on `text`; `diags`: its diagnostics where the caller has them
    (`tilec check` of the same text), else `text` is checked in `tmp`."""
    f = tmp / "h.tile"
    f.write_text(text, encoding="utf-8")
    if diags is None:
        try:
            diags = driver.check(f).diagnostics
        except Exception as e:  # an internal error is the fuzzer's business; note it
            return [f"{name}: check raised {type(e).__name__}: {e}"]
    found = [f"{name}: {d.code}: help code does not parse: `{c}`"
             for d in diags for h in d.help for c in code_in(h) if not parses(c)]
    errs = [d for d in diags if d.severity.value == "error"]
    for d in errs[:1]:
        for h in d.help:
            for code in re.findall(r"`([^`]+ as [a-z0-9]+)`", h):
                x = code.rsplit(" as ", 1)[0]
                bare = x[1:-1] if x.startswith("(") and x.endswith(")") else x
                for s, e in [(lab.span.start, lab.span.end) for lab in d.labels] + _rewritten(text, d, code):
                    if (s, e) not in _rewritten(text, d, code) and text[s:e] not in (x, bare):
                        continue
                    new = text[:s] + f"({code})" + text[e:]
                    f.write_text(new, encoding="utf-8")
                    line = text.count("\n", 0, s)
                    left = [d2 for d2 in driver.check(f).diagnostics if d2.severity.value == "error"
                            and d2.primary_span is not None and new.count("\n", 0, d2.primary_span.start) == line]
                    if left:
                        found.append(f"{name}: {d.code}: applying `{code}` leaves {left[0].code}: {left[0].message}")
                    break
    return found


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=None, help="also check this many mutants of the fuzzer's seed")
    ap.add_argument("--count", type=int, default=1000)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp())
    cases = [(str(p.relative_to(ROOT)), p.read_text(encoding="utf-8"))
             for r in ("tests/ui", "tests/user/wrong") for p in sorted((ROOT / r).rglob("*.tile"))]
    if args.seed is not None:
        import fuzzer

        corpus = fuzzer.Corpus.load()
        cases += [(f"seed {args.seed} case {i}", fuzzer.make_case(args.seed, i, corpus)) for i in range(args.count)]
    found = [line for name, text in cases for line in check_text(name, text, tmp)]
    for line in found:
        print(line)
    print(f"{len(cases)} programs, {len(found)} findings")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
