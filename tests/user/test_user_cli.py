"""What a user reads from `tilec` itself (huser, round 2): every error code
the README and the reference tell them to `tilec explain` exists, the
README's session commands work, and a scripted `tilec repl` session (from
its `:help` alone) gives the values and errors a user expects.

The README's command table said `tilec explain E0302`, a code that is
deliberately unused: the first code a new user typed was "not a known error
code", with no way on.
"""

from __future__ import annotations

import re
from pathlib import Path

from userprog import tilec_at_root

REPO = Path(__file__).resolve().parents[2]
DOCS = [REPO / "README.md", REPO / "docs" / "reference.md", REPO / "examples" / "README.md"]


def test_every_code_the_docs_tell_you_to_explain_exists() -> None:
    from tilelang.diagnostics import explain as ex

    codes = {c for p in DOCS for c in re.findall(r"tilec explain ([EW]\d{4})", p.read_text(encoding="utf-8"))}
    assert codes, "the docs name codes to explain"
    for code in sorted(codes):
        assert ex.explain_text(code) is not None, f"the docs say `tilec explain {code}`, which has no explanation"


def test_an_unknown_code_says_where_to_look() -> None:
    r = tilec_at_root("explain", "E0302")
    assert r.returncode == 1
    assert "not a known error code" in r.stderr and "`tilec explain` with no code lists" in r.stderr
    listing = tilec_at_root("explain")
    assert listing.returncode == 0 and "E0303" in listing.stdout and "E0302" not in listing.stdout


def test_the_readme_session() -> None:
    assert tilec_at_root("check", "examples/gemm.tile").returncode == 0
    r = tilec_at_root("emit", "examples/add.tile", "--stage", "ptx", "--arch", "sm_90")
    assert r.returncode == 0 and ".entry" in r.stdout
    r = tilec_at_root("explain", "E0303")
    assert r.returncode == 0 and "borrows the same tensor twice" in r.stdout


REPL = """\
fn total<const N: i32>(x: &Tensor<f32, [N]>) -> f32 { x.sum() + (N as f32) }
let a = ones::<f32>([4]);
total(&a)
let b = arange::<f32>(a.sum() as i32 + 1);
total(&b)
kernel fn dbl<const B: i32>(z: &mut Tensor<f32, [B]>) {
    z.store(z.load() * 2.0);
}
let mut z = ones::<f32>([6]);
let h = dbl(z.partition([4])).launch();
z.sum()
h.wait();
z.sum()
let g = graph { dbl(z.partition([4])); };
g.replay();
z
let w = z;
let s = arange::<i64>(4) << (arange::<i32>(4) + 60);
s
:quit
"""


def test_a_scripted_repl_session() -> None:
    r = tilec_at_root("repl", stdin=REPL)
    out = r.stdout + r.stderr
    assert "f32 = 8.0" in out  # total(&a): N = 4 from the tensor
    assert "f32 = 15.0" in out  # total(&b): N = 5, known only at run time
    assert "error[E0305]" in out  # z read while the launch may write it
    assert "f32 = 12.0" in out  # after the wait: 2 * 6
    assert "Tensor<f32, [6]> = [4.0, 4.0, 4.0, 4.0, 4.0, 4.0]" in out  # the graph replayed once
    assert "error[E0307]" in out  # z captured by the live graph cannot move
    # 0 << 60, 1 << 61, 2 << 62 (wraps to i64::MIN), 3 << 63: an i32 amount on i64 tensors
    flat = re.sub(r"\s+", " ", out).replace("[ ", "[")
    assert "[0, 2305843009213693952, -9223372036854775808, -9223372036854775808]" in flat
    assert "Traceback" not in out
