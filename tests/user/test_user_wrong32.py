"""Round 29 of the user's mistakes (huser29, 2026-12-07): a user who checks numerics at the edges (NaN, the
infinities, -0.0, halves, subnormals), each help applied by the letter and its result checked against NumPy
bit for bit, on the interpreter and on the NVPTX simulator.

- k03 a tile divided by a literal zero (`t / 0`): `tilec check` passed it and `tilec run` refused it (E0226 at
  the launch's instance, "this is zero in this instance", of a literal); the checker now says E0226 of a tile
  as of a scalar.
- The helps for NumPy's functions that Tile has not (`tilelang/intrinsics/math_habits.py`) at the edges:
  `sign` gave 0.0 for NaN and -0.0 (NumPy: NaN, -0.0), `round`/`rint` gave 0.0 for -0.0; `signbit` was offered
  `sin` (a similar name) and `nanmax`/`nanmin` were offered `max`/`min`, which propagate the NaN they are
  asked to skip; Rust's `x.signum()` was spelled as NumPy's `sign` (0.0 for zeros and NaN; Rust: 1.0 of 0.0,
  -1.0 of -0.0, NaN of NaN).
- E0201's help for an f16 mix stored into f16 with a literal past f16 (`t * 70000.0f32`) cast the literal down to
  infinity; `assert_close` of NaN in the same places blamed a "wrong result" of difference 0.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from userprog import first_error, run_program, simulated_program, wrong_suite

from tilelang import driver

Tensors = dict[str, np.ndarray]

FIXES: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "k03_tile_divided_by_a_literal_zero": ("divide by a value that is not zero", [("t / 0", "t / 4")]),
}


def _k03(t: Tensors, out: str) -> None:
    x = np.arange(12, dtype=np.int32) * 7 - 40
    want = (np.abs(x) // 4 * np.sign(x)).astype(np.int32)   # toward zero, as the docs say
    np.testing.assert_array_equal(t["z"], want)
    assert out.split()[0] == "Tensor<i32," and out.count(",") == 12, out


CHECKS = {"k03_tile_divided_by_a_literal_zero": _k03}

(test_every_mistake_has_a_fix, test_the_help_leads_to_a_working_program,
 test_the_editor_shows_the_same_first_error) = wrong_suite("k03_*.tile", FIXES, CHECKS)


def test_a_tile_divided_by_a_literal_zero_is_refused_at_check_as_at_run(tmp_path: Path) -> None:
    """`tilec check` and `tilec run` agree: E0226 for `t / 0` and `t % 0` of integer tiles, generic or not,
    at the divisor; a float tile's `t / 0.0` is IEEE's (no error)."""
    for head, op in (("<const B: i32>", "/"), ("", "%")):
        f = tmp_path / "d.tile"
        shape = "B" if head else "4"
        src = (f"kernel fn k{head}(z: &mut Tensor<i32, [{shape}]>, x: &Tensor<i32, [?]>) {{\n"
               f"    z.store(x.load_like(z) {op} 0);\n}}\n")
        f.write_text(src, encoding="utf-8")
        d = first_error(f)
        assert d.code == "E0226" and d.primary_span.start == src.index(f"{op} 0") + 2, (d.code, d.primary_span)
    f.write_text("kernel fn k<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>) {\n"
                 "    z.store(x.load_like(z) / 0.0);\n}\nfn main() {\n    let x = arange::<f32>(4) - 1.0;\n"
                 "    let mut z = zeros::<f32>([4]);\n    k(z.partition([4]), &x).sync();\n}\n", encoding="utf-8")
    t, _ = run_program(f)
    np.testing.assert_array_equal(t["z"], np.array([-np.inf, np.nan, np.inf, np.inf], np.float32))


# ---- the helps' spellings at the edges, bit for bit against NumPy
_EDGES = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 0.3, -0.3, 0.5, -0.5, 1.5, -2.5, 2.5, 0.49999997,
                   1e-45, -1e-45, 8388609.0, -8388607.5, 3e38, -3e38, 7.0, -7.0, 1.0, -1.0, 100.25], np.float32)
_EDGE_NUMPY = {"round": np.round, "rint": np.rint, "trunc": np.trunc, "sign": np.sign,
               "signbit": lambda v: np.signbit(v).astype(np.float32),
               "signum": lambda v: np.where(np.isnan(v), v, np.copysign(np.float32(1), v)),   # Rust's f32::signum
               "nanmax": lambda v: np.full_like(v, np.nanmax(v)), "nanmin": lambda v: np.full_like(v, np.nanmin(v))}


def _edge_program(name: str, tmp_path: Path) -> Path:
    from tilelang.intrinsics.math_habits import MATH_HABITS, RUST_SCALAR_METHODS

    text = MATH_HABITS[name] if name in MATH_HABITS else RUST_SCALAR_METHODS[name][0]
    code = text.format(x="t").split("`")[1]
    code = re.sub(r"\bN\b", "24", code)
    red = name.startswith("nan")  # a reduction: the help's axis `k` is the tile's only one
    if red:
        code = re.sub(r"\bk\b", "0", code)
    np.save(tmp_path / "x.npy", _EDGES)
    f = tmp_path / f"{name}.tile"
    val = f"full::<f32>([B], {code})" if red else f"({code}) as f32"
    f.write_text(f"""kernel fn k<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>) {{
    let t = x.load_like(z);
    z.store({val});
}}
fn main() {{
    let x: Tensor<f32, [?]> = load_npy("{tmp_path / 'x.npy'}");
    let mut z = zeros::<f32>([24]);
    k(z.partition([24]), &x).sync();
}}
""", encoding="utf-8")
    return f


def _same_bits(got: np.ndarray, want: np.ndarray) -> bool:
    both_nan = np.isnan(got) & np.isnan(want)
    return bool(((got.view(np.uint32) == want.view(np.uint32)) | both_nan).all())


@pytest.mark.parametrize("name", sorted(_EDGE_NUMPY))
def test_a_math_help_s_spelling_gives_numpy_s_bits_at_the_edges(name: str, tmp_path: Path) -> None:
    """The spelling a help gives (`round(t)` -> `where(..)`) on NaN, the infinities, both zeros, halves,
    subnormals and values past 2^23: NumPy's result bit for bit (the sign of a zero too), on the
    interpreter and the simulated GPU (sm_90a) alike."""
    f = _edge_program(name, tmp_path)
    with np.errstate(all="ignore"):
        want = np.asarray(_EDGE_NUMPY[name](_EDGES.copy()), np.float32)
    got = run_program(f)[0]["z"]
    bad = [(float(v), float(g), float(w)) for v, g, w in zip(_EDGES, got, want, strict=True) if not _same_bits(g, w)]
    assert not bad, (name, "(value, interpreter, numpy)", bad)
    sim = simulated_program(f)["z"]
    assert _same_bits(sim, got), (name, sim, got)


def test_a_literal_past_f16_is_not_cast_down_to_infinity_by_the_helps(tmp_path: Path) -> None:
    """`t * 70000.0` of an f16 tile is E0222, whose help says a wider type (`70000.0f32`); applied, the mix is
    E0201, whose help cast the literal down, `70000.0f32 as f16`: infinity, in silence. The help now computes
    in f32 (`(t as f32) * 70000.0f32`) and says to store it wide; applied, it runs and gives NumPy's values."""
    src = """kernel fn k<const B: i32>(z: &mut Tensor<f16, [B]>, x: &Tensor<f16, [?]>) {
    let t = x.load_like(z);
    z.store(t * 70000.0);
}
fn main() {
    let x = (arange::<f32>(4) - 1.5) as f16;
    let mut z = zeros::<f16>([4]);
    k(z.partition([4]), &x).sync();
}
"""
    f = tmp_path / "big.tile"
    f.write_text(src, encoding="utf-8")
    d = first_error(f)
    assert d.code == "E0222" and "`70000.0f32`" in d.help[0], d.help
    f.write_text(src.replace("t * 70000.0", "t * 70000.0f32"), encoding="utf-8")
    d = first_error(f)
    assert d.code == "E0201" and "`70000.0f32 as f16`" not in d.help[0] and "`(t as f32) * 70000.0f32`" in d.help[0], d.help
    assert "store it into a tile of `f32`" in d.help[0], d.help
    fixed = (src.replace("t * 70000.0", "(t as f32) * 70000.0f32").replace("z: &mut Tensor<f16, [B]>",
                                                                          "z: &mut Tensor<f32, [B]>")
             .replace("zeros::<f16>([4])", "zeros::<f32>([4])"))
    f.write_text(fixed, encoding="utf-8")
    t, _ = run_program(f)
    np.testing.assert_array_equal(t["z"], (np.arange(4, dtype=np.float32) - 1.5) * np.float32(70000))


def test_assert_close_of_nans_says_nan_and_its_help_runs(tmp_path: Path) -> None:
    """`assert_close` of two tensors with NaN in the same places failed (a NaN is close to nothing, as
    documented) with the help "the largest difference is 0, as large as the values compared: more likely a
    wrong result than rounding"; it now says that NaN is close to nothing and gives the comparison of the NaN
    masks and of the other elements, which, applied, passes; NaN on one side only is said so."""
    from tilelang.diagnostics.model import TileError

    head = "fn main() {\n    let x = where(arange::<i32>(4) == 1, f32::NAN, arange::<f32>(4));\n"
    f = tmp_path / "n.tile"
    f.write_text(head + "    let y = x.clone();\n    assert_close(&x, &y);\n}\n", encoding="utf-8")
    with pytest.raises(TileError) as e:
        run_program(f)
    d = e.value.diagnostics[0]
    assert d.code == "E0711" and "as large as the values" not in d.help[0], d.help
    assert "NaN is close to nothing" in d.help[0], d.help
    fix = re.findall(r"`([^`]*assert[^`]*)`", d.help[0])
    assert len(fix) == 2, d.help
    f.write_text(head + "    let y = x.clone();\n    " + ";\n    ".join(fix) + ";\n    print(1);\n}\n",
                 encoding="utf-8")
    assert run_program(f)[1] == "1\n"
    f.write_text(head + "    let y = arange::<f32>(4);\n    assert_close(&x, &y);\n}\n", encoding="utf-8")
    with pytest.raises(TileError) as e:
        run_program(f)
    assert "NaN on one side only" in e.value.diagnostics[0].help[0], e.value.diagnostics[0].help


def test_assert_close_s_equal_nan_keyword_is_told_how_tile_compares_nans(tmp_path: Path) -> None:
    """NumPy's `equal_nan = true` was "no keyword argument .. use one of those names" (`rtol`, `atol`, neither
    of which compares NaN); the help now gives the two comparisons, which, applied, pass."""
    f = tmp_path / "q.tile"
    head = "fn main() {\n    let a = where(arange::<i32>(4) == 1, f32::NAN, arange::<f32>(4));\n    let b = a.clone();\n"
    f.write_text(head + "    assert_close(&a, &b, equal_nan = true);\n}\n", encoding="utf-8")
    d = first_error(f)
    assert d.code == "E0107" and "NaN is close to nothing" in d.help[0], d.help
    fix = re.findall(r"`([^`]*assert[^`]*)`", d.help[0])
    assert len(fix) == 2, d.help
    f.write_text(head + "    " + ";\n    ".join(fix) + ";\n    print(2);\n}\n", encoding="utf-8")
    assert run_program(f)[1] == "2\n"


@pytest.mark.parametrize(("dt", "values"), [
    ("f16", [-0.0, 0.5, 1.5, 2.5, -2.5, -0.3, 1000.5, 2047.5, 65504.0, float("nan"), float("-inf")]),
    ("f64", [-0.0, 0.5, 2.5, -2.5, 2.0 ** 40 + 0.5, 2.0 ** 40 + 1.5, -(2.0 ** 51) - 0.5, 2.0 ** 53, float("nan")])])
def test_the_round_help_runs_in_the_argument_s_type(dt: str, values: list[float], tmp_path: Path) -> None:
    """`round(t)` of an f16 tile: the help's 2^23 is past f16's range (E0222 when applied); of an f64 tile, 2^23
    left the fractions between 2^23 and 2^52 (2^40 + 0.5 stayed). The help is now written for the argument's
    type (through f32 for f16/bf16, with 2^52 for f64) and, applied by the letter, gives NumPy's bits."""
    np_dt = {"f16": np.float16, "f64": np.float64}[dt]
    np.save(tmp_path / "x.npy", np.array(values, np_dt))
    src = f"""kernel fn k<const B: i32>(z: &mut Tensor<{dt}, [B]>, x: &Tensor<{dt}, [?]>) {{
    let t = x.load_like(z);
    z.store(round(t));
}}
fn main() {{
    let x: Tensor<{dt}, [?]> = load_npy("{tmp_path / 'x.npy'}");
    let mut z = zeros::<{dt}>([{len(values)}]);
    k(z.partition([{len(values)}]), &x).sync();
}}
"""
    f = tmp_path / "r.tile"
    f.write_text(src, encoding="utf-8")
    d = first_error(f)
    assert d.code == "E0102", d.code
    code = d.help[0].split("`")[1]
    f.write_text(src.replace("round(t)", code), encoding="utf-8")
    got = run_program(f)[0]["z"]
    want = np.round(np.array(values, np_dt))
    u = np.dtype(f"u{got.dtype.itemsize}")
    assert ((got.view(u) == want.view(u)) | (np.isnan(got) & np.isnan(want))).all(), (code, got, want)


def test_a_comparison_with_nan_warns_and_its_help_is_the_nan_test(tmp_path: Path) -> None:
    """`x == f32::NAN` (NumPy's `x == np.nan`) was accepted in silence and false everywhere: W0014, whose help,
    `x != x`, applied, checks clean under -D warnings and finds the NaN; `!=` and `<` with NaN warn too."""
    f = tmp_path / "n.tile"
    body = ("fn main() {{\n    let x = where(arange::<i32>(4) == 2, f32::NAN, arange::<f32>(4));\n"
            "    let holes = {};\n    print((holes as i32).sum());\n}}\n")
    for cmp, always in (("x == f32::NAN", "false"), ("f32::NAN != x", "true"), ("x < -f32::NAN", "false")):
        f.write_text(body.format(cmp), encoding="utf-8")
        ws = [d for d in driver.check(f).diagnostics if d.code == "W0014"]
        assert len(ws) == 1 and ws[0].message == f"this comparison with NaN is always {always}", cmp
    f.write_text(body.format("x == f32::NAN"), encoding="utf-8")
    assert run_program(f)[1] == "0\n"   # what the warning is about: no element equals NaN
    fix = next(d for d in driver.check(f).diagnostics if d.code == "W0014").help[0].split("`")[1]
    f.write_text(body.format(fix), encoding="utf-8")
    assert not driver.check(f, deny_warnings=True).diagnostics
    assert run_program(f)[1] == "1\n"
