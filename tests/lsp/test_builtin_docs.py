"""What the language server says about built-ins is what the runtime does:
`assert_close`'s defaults (they were shown as rtol 1e-5, atol 1e-8, which no
element type uses), and method completion by the receiver's kind, shared with
the REPL (`signatures.methods_for`)."""

from __future__ import annotations

from tilelang.intrinsics.constants import ASSERT_CLOSE_DEFAULTS
from tilelang.intrinsics.signatures import FUNCTIONS, methods_for
from tilelang.lsp import analysis as A

PROGRAM = """\
fn main() {
    let a = ones::<f32>([4]);
    let b = ones::<f32>([4]);
    assert_close(&a, &b);
}
"""


def test_assert_close_hover_and_signature_show_the_defaults_used() -> None:
    an = A.analyze(PROGRAM, "t.tile")
    h = A.hover(an, PROGRAM.index("assert_close"))
    assert h is not None
    assert "1e-5, atol = 1e-8" not in h.markdown and "1e-8" not in h.markdown
    for dt, (rtol, atol) in ASSERT_CLOSE_DEFAULTS.items():
        assert f"{dt.value} rtol {rtol!r}".replace("e-0", "e-") in h.markdown
    text = "fn main() {\n    let a = ones::<f32>([4]);\n    assert_close(&a, "
    sh = A.signature_help(A.analyze(text, "t.tile"), len(text))
    assert sh is not None and "by element type" in sh.label
    start, end = sh.params[sh.active]
    assert sh.label[start:end] == "expected"


def test_the_runtime_uses_the_documented_defaults() -> None:
    from tilelang.runtime import builtins

    assert builtins._DEFAULT_TOL is ASSERT_CLOSE_DEFAULTS
    assert "f32 rtol 1.3e-6, atol 1e-5" in FUNCTIONS["assert_close"].doc


def test_method_completion_is_by_receiver_kind() -> None:
    # as an editor asks: while typing, with the last version that parsed
    whole = "fn main() {\n    let x = zeros::<f32>([4]);\n    print(x);\n}\n"
    text = "fn main() {\n    let x = zeros::<f32>([4]);\n    x."
    labels = {c.label for c in A.completions(A.analyze(text, "t.tile"), len(text),
                                             previous=A.analyze(whole, "t.tile"))}
    assert {"exp", "transpose", "item", "sum", "partition", "shape"} <= labels
    assert not {"load", "store", "load_like", "sync", "wait"} & labels
    assert labels == {s.name for s in methods_for("tensor")}
