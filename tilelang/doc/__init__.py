"""The language reference: hand-written sections plus every built-in operation.

Sources (shipped inside the package, so `tilec doc` works from a wheel):

- `sections/NN-name.md`: the hand-written sections (overview, items and
  syntax, types, the host API, kernels and edges, numbers, hints, limits), in
  file-name order;
- `builtins.md`: one `## name` section per built-in of
  `tilelang/intrinsics/signatures.py`, with what the table cannot say and at
  least one example;
- the signature table itself: each built-in's forms (function, method),
  display signatures, where it may be used and its one-line summary.

`reference()` is the whole document; `docs/reference.md` in the repository is
its output (`python -m tilelang.doc --write docs/reference.md`), and
`tests/unit/test_docs.py` checks that the file is up to date, that every
built-in has an entry with an example, and that every ```tile example runs
(or fails with exactly its annotated errors). `entry(name)` is what
`tilec doc NAME` prints: a built-in (`exp`, `load_like`) or a section (`types`,
`numbers`).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent

_SECTION_FILE = re.compile(r"^\d\d[a-z]?-(?P<slug>[a-z0-9-]+)\.md$")
_BUILTIN = re.compile(r"^## (?P<name>\S+)\n(?P<body>.*?)(?=^## |\Z)", re.M | re.S)
_TILE_BLOCK = re.compile(r"^```tile[^\n]*\n(?P<body>.*?)^```[ \t]*$", re.M | re.S)


@dataclass(frozen=True)
class Section:
    slug: str  # `types`, `kernels-and-edges`
    title: str
    text: str  # Markdown, starting with its `# Title`


@functools.cache
def sections() -> tuple[Section, ...]:
    out = []
    for path in sorted((HERE / "sections").glob("*.md")):
        m = _SECTION_FILE.match(path.name)
        if m is None:
            continue
        text = path.read_text(encoding="utf-8").strip() + "\n"
        title = text.splitlines()[0].lstrip("# ").strip()
        out.append(Section(m.group("slug"), title, text))
    return tuple(out)


@functools.cache
def builtin_texts() -> dict[str, str]:
    """`## name` sections of `builtins.md`: name -> its hand-written body."""
    text = (HERE / "builtins.md").read_text(encoding="utf-8")
    return {m.group("name"): m.group("body").strip() + "\n" for m in _BUILTIN.finditer(text)}


def builtin_names() -> list[str]:
    """Every built-in name, functions and methods together, sorted."""
    from tilelang.intrinsics.signatures import FUNCTIONS, METHODS

    return sorted({*FUNCTIONS, *METHODS})


def _forms(name: str) -> list[str]:
    from tilelang.intrinsics.signatures import FUNCTIONS, METHODS, RECEIVERS

    lines = []
    for sig in (FUNCTIONS.get(name), METHODS.get(name)):
        if sig is None:
            continue
        where = {"kernel": "in kernels", "host": "in host code", "both": "in kernels and host code"}
        on = ""
        if sig.is_method:
            on = "; on " + ", ".join(RECEIVERS[r] for r in sig.receivers)
        keywords = (" Keyword arguments: " + ", ".join(f"`{k}`" for k in sig.keywords) + "."
                    if sig.keywords else "")
        lines.append(f"- `{sig.signature}` ({'method' if sig.is_method else 'function'}, "
                     f"{where[sig.context.value]}{on}): {sig.doc}.{keywords}")
    return lines


def _tol(rtol: float, atol: float) -> str:
    if rtol == 0.0 and atol == 0.0:
        return "exact"
    return f"rtol {rtol:.2g}, atol {atol:.2g}"


def gpu_accuracy(name: str) -> str | None:
    """How the GPU computes math function `name` and how close it comes to
    the interpreter, per dtype, from the backend's own table
    (`tilelang/backend/fastmath.py`, which `tests/backend/test_numerics_diff.py`
    checks op by op); None for a name the table does not hold."""
    from tilelang.backend import fastmath
    from tilelang.dtypes import DType

    f32, f64 = fastmath.MATH.get(name), fastmath.F64_MATH.get(name)
    if f32 is None or f64 is None:
        return None
    out = []
    for label, impl in (("f32", f32), ("f64", f64)):
        where = "" if impl.domain.startswith("all") else f" for {impl.domain}"
        out.append(f"{label}: {impl.how}; {_tol(impl.rtol, impl.atol)}{where}.")
    out.append(f"f16: the f32 code rounded once, {_tol(*fastmath.tolerance(name, DType.F16))}; "
               f"bf16: {_tol(*fastmath.tolerance(name, DType.BF16))}.")
    fast = fastmath.FAST_MATH.get(name)
    if fast is not None:
        where = "" if fast.domain.startswith("all") else f" for {fast.domain}"
        out.append(f"In a kernel hinted `fast_math = true`, f32: {fast.how}; {_tol(fast.rtol, fast.atol)}{where}.")
    return ("On the GPU, how it is computed and how close it is to the interpreter's result r "
            "(|gpu - r| <= atol + rtol |r|; NaN, infinities and the sign of a zero as r): " + " ".join(out))


def builtin_entry(name: str) -> str | None:
    """The reference entry of a built-in: its forms from the signature
    table, then its hand-written text and examples, then how the GPU
    computes it (math functions)."""
    forms = _forms(name)
    if not forms:
        return None
    body = builtin_texts().get(name, "")
    acc = gpu_accuracy(name)
    if acc is not None:
        body = body.rstrip() + "\n\n" + acc + "\n"
    return f"### `{name}`\n\n" + "\n".join(forms) + "\n\n" + body


def _slug_of(name: str) -> str:
    return name.strip().lower().replace(" ", "-").replace("_", "-")


#: a keyword or type name -> the built-in or section that documents it (round 21: `tilec doc graph` said "did
#: you mean `group`?", `tilec doc for` "`floor`?", `tilec doc Tile` "`tiles`?")
_WORDS = {
    "graph": "replay", "unsafe": "atomic_add", "const": "constants", "Tile": "types", "Tensor": "types",
    **dict.fromkeys(("kernel", "fn", "let", "mut", "for", "while", "if", "else", "break", "continue", "return",
                     "use", "as", "true", "false"), "items"),
    # round 22: Rust's module words (`tilec doc mod` was "did you mean `sigmoid`?"): modules are files, `use`d
    **dict.fromkeys(("mod", "pub", "crate", "super", "module", "import"), "items"),
    **dict.fromkeys(("bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "bf16", "f32", "f64"),
                    "types"),
}


def entry(name: str) -> str | None:
    """What `tilec doc NAME` prints: a built-in (`exp`, `.load_like`), or a
    section by its name or a word of its title (`types`, `numbers`, `edges`);
    a keyword or a type by the entry that documents it (`graph`: `replay`)."""
    key = name.strip().lstrip(".")
    key = _WORDS.get(key, key)
    found = builtin_entry(key)
    if found is not None:
        return found
    slug = _slug_of(key)
    for sec in sections():
        if slug in (sec.slug, _slug_of(sec.title)) or slug in sec.slug.split("-"):
            return sec.text
    if key != key.lower():  # `tilec doc LOAD_LIKE`, `Exp`: the built-ins are lower case (as `tilec explain e0303`)
        return entry(key.lower())
    return None


def topics() -> list[str]:
    """The names `entry` knows: sections first, then the built-ins."""
    return [s.slug for s in sections()] + builtin_names()


def reference() -> str:
    """The whole reference, as `docs/reference.md` holds it."""
    secs = sections()
    out = ["# The Tile language reference",
           "",
           "<!-- Generated by `python -m tilelang.doc --write docs/reference.md` from",
           "tilelang/doc/ (sections/*.md, builtins.md) and tilelang/intrinsics/signatures.py.",
           "Edit those, not this file; tests/unit/test_docs.py checks it is up to date",
           "and runs every example. `tilec doc NAME` prints one entry. -->",
           "",
           "## Contents",
           ""]
    for sec in secs:
        out.append(f"- [{sec.title}](#{_anchor(sec.title)})")
    out.append("- [Built-in operations](#built-in-operations)")
    out.append("")
    for sec in secs:
        # the sections are `# Title` files; in the reference they are `##`
        out.append(re.sub(r"^#", "##", sec.text, count=1, flags=re.M).rstrip() + "\n")
    out.append("## Built-in operations\n")
    out.append("Every built-in function and method, in alphabetical order. A name that is "
               "both (`sum(t, 1)` and `t.sum(1)`) has one entry with both forms.\n")
    out.append(", ".join(f"[`{n}`](#{_anchor(n)})" for n in builtin_names()) + "\n")
    for name in builtin_names():
        text = builtin_entry(name)
        assert text is not None
        out.append(text.rstrip() + "\n")
    return "\n".join(out).rstrip() + "\n"


def _anchor(title: str) -> str:
    """GitHub's anchor for a heading."""
    t = re.sub(r"[^\w\- ]", "", title.lower()).strip()
    return t.replace(" ", "-")


def examples(text: str) -> list[str]:
    """The ```tile blocks of a Markdown text."""
    return [m.group("body") for m in _TILE_BLOCK.finditer(text)]


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="python -m tilelang.doc",
                                 description="print or write the language reference")
    ap.add_argument("--write", metavar="PATH", help="write the reference to PATH")
    args = ap.parse_args(argv)
    text = reference()
    if args.write:
        Path(args.write).write_text(text, encoding="utf-8")
    else:
        print(text, end="")
    return 0
