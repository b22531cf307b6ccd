"""Round 29 of the user's mistakes (huser30, 2026-12-07): an LLM-inference engineer porting a serving stack's
custom ops from CUDA, Triton and PyTorch, each help applied by the letter and the fixed program's result
checked against NumPy.

- j04 an MoE dispatch whose tokens claim their rows with `let slot = atomic_add(&cursor, [e], 1);` (CUDA's
  `atomicAdd` and Triton's `tl.atomic_add` give the old value; Tile's give none): main said "compute the number
  another way" at the index, then "`where` expects tiles or scalars / pass tiles or scalars" at the `where` that
  read it, and "cannot cast `()` as `f32`" or "cannot apply `+` to .. and `()`" at other reads. A read of such a
  name is now one E0203 wherever it is, naming the atomic, with the slot-numbering recipe.
- j05 PyTorch's `l.max(1, keepdim = true)`: the help said "drop `keepdim =`", which left `l.max(1, true)`, a
  second error (E0105); `keepdim` now gets the `keepdims` help (the call and its reshape), as does the `dim =`
  beside it, and `x.sum(axis = 0)` is typed with its axis (it was typed as `x.sum()`, a scalar, whose
  `.reshape` was a second, misleading error).
- j06 PyTorch's spread-out sizes, `abs(h).max(1).reshape(BT, 1)` (as `view(BT, 1)`): the help was "call it with 1
  argument"; for `reshape`, `broadcast`, `permute`, `zeros`, `ones` and `full` of integer arguments it is now the
  call with the sizes in one list.
- j07 a fused QKV row split as PyTorch slices it, `row[0..64]`, `row[64..128]`: the help offered "a tile of its own"
  (the row is computed) or a 0/1 matrix through `dot`; a window at a multiple of its length (`t[64..128]`,
  `t[p * 16..(p + 1) * 16]`, `t[p * L..p * L + L]`) is now given as the row of `t.reshape([N / L, L])` picked with a
  mask and a sum, written out, exact and without the N x L product.
- `()` read as a number (a block ending in `;`, in a cast or an operand) says what gives `()`.
- j08 Triton's mask fill `float("-inf")`: the help was "convert with `as`: `x as f32`" (applied to the string, an
  error again); it is now Tile's `-inf` (and `nan`, `inf`), and `float(e)` / `int(e)` name `e` in their cast.
- `dtype = f32` keywords get the call with its turbofish (one error, was E0101 on `f32` first); Triton's
  `tl.multiple_of` and the other offset hints get "use the value itself".
- Triton 3's `split` / `join` / `interleave`, `div_rn` / `sqrt_rn`, and a reduction's `dtype =`: their Tile spelling.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from userprog import first_error, wrong_suite

from tilelang import driver

Tensors = dict[str, np.ndarray]

FIXES: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "j04_moe_dispatch_slot_from_atomic_old_value": ("number a block's entries with a `cumsum` of one-hot rows", [
        ("    let mut slots = zeros::<i32>([BT]);\n",
         "    let onehot = (id.reshape([BT, 1]) == arange::<i32>(E).reshape([1, E])) as i32;\n"
         "    let slots = ((onehot.cumsum(0) - onehot + base.partition([1, E]).load([b, 0])) * onehot).sum(1);\n"),
        ("            let e = where(arange::<i32>(BT) == j, id, 0).sum(0);\n", ""),
        ("                let slot = atomic_add(&cursor, [e], 1);\n",
         "                let slot = where(arange::<i32>(BT) == j, slots, 0).sum(0);\n"),
        ("                slots = where(arange::<i32>(BT) == j, slot, slots);\n", ""),
        ("        cursor: &Tensor<i32, [E]>, x_sorted", "        x_sorted"),
        ("    let cursor = starts.clone();\n", ""),
        ("&x, &cursor, &x_sorted", "&x, &x_sorted")]),
    "j05_router_softmax_keepdim": ("`l.max(1).reshape([BT, 1])`",
                                   [("l.max(1, keepdim = true)", "l.max(1).reshape([BT, 1])")]),
    "j06_silu_and_mul_reshape_spread_sizes": ("`abs(h).max(1).reshape([BT, 1])`",
                                              [("reshape(BT, 1)", "reshape([BT, 1])")]),
    "j07_fused_qkv_split_by_slices": ("is row 0 of `row.reshape([(D * 3) / 64, 64])`", [
        (f"row[{a}]", f"where(arange::<i32>((D * 3) / 64).reshape([(D * 3) / 64, 1]) == {i}, "
                      "row.reshape([(D * 3) / 64, 64]), 0.0).sum(0)")
        for i, a in enumerate(("0..64", "64..128", "128..192"))]),
    "j08_causal_mask_float_neg_inf": ("`float(\"-inf\")` is `-inf` in Tile", [('float("-inf")', "-inf")]),
}


def _j04(t: Tensors, out: str) -> None:
    ids, x = t["ids"], t["x"]
    order = np.argsort(ids, kind="stable")   # by expert, then by token
    np.testing.assert_array_equal(t["x_sorted"], x[order])
    dest = np.empty_like(order)
    dest[order] = np.arange(order.size)
    np.testing.assert_array_equal(t["dest"], dest)
    assert out == "Tensor<i32, [4]> [5, 5, 5, 6]\n", out


def _j05(t: Tensors, out: str) -> None:
    lg = t["logits"].astype(np.float64)
    p = np.exp(lg - lg.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    np.testing.assert_allclose(t["probs"], p, rtol=1e-5, atol=1e-7)
    np.testing.assert_array_equal(t["top"], p.argmax(1))
    assert out.startswith("Tensor<i32, [12]>"), out


def _j06(t: Tensors, out: str) -> None:
    g, u = t["gate_up"][:, :48].astype(np.float64), t["gate_up"][:, 48:].astype(np.float64)
    h = g / (1 + np.exp(-g)) * u
    np.testing.assert_allclose(t["y"], h, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(t["amax"], np.abs(h).max(1, keepdims=True), rtol=1e-5)
    assert out == "true\n", out


def _j07(t: Tensors, out: str) -> None:
    q, k, v = (t["qkv"][:, i * 64:(i + 1) * 64].astype(np.float64) for i in range(3))
    np.testing.assert_allclose(t["qn"], np.sqrt((q * q).sum(1)), rtol=1e-5)
    np.testing.assert_allclose(t["kn"], np.sqrt((k * k).sum(1)), rtol=1e-5)
    np.testing.assert_allclose(t["vsum"], v.sum(1), rtol=1e-4, atol=1e-5)
    assert out == "[5]\n", out


def _j08(t: Tensors, out: str) -> None:
    s = t["s"].astype(np.float64)
    s = np.where(np.arange(32)[None, :] <= np.arange(32)[:, None], s, -np.inf)
    e = np.exp(s - s.max(1, keepdims=True))
    np.testing.assert_allclose(t["p"], e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)
    assert (np.triu(t["p"], 1) == 0).all() and t["p"][0, 0] == 1.0
    assert out == "32.0\n", out


CHECKS = {"j04_moe_dispatch_slot_from_atomic_old_value": _j04, "j05_router_softmax_keepdim": _j05,
          "j06_silu_and_mul_reshape_spread_sizes": _j06, "j07_fused_qkv_split_by_slices": _j07,
          "j08_causal_mask_float_neg_inf": _j08}

(test_every_mistake_has_a_fix, test_the_help_leads_to_a_working_program,
 test_the_editor_shows_the_same_first_error) = wrong_suite("j0[4-9]_*.tile", FIXES, CHECKS)


def _kernel(tmp_path: Path, body: str) -> Path:
    f = tmp_path / "k.tile"
    f.write_text("kernel fn k(z: &mut Tensor<f32, [16, 8]>, xs: &Tensor<f32, [?, 8]>, c: &Tensor<i32, [2]>) {\n"
                 f"    let x = xs.load_like(z);\n    {body}\n}}\n", encoding="utf-8")
    return f


@pytest.mark.parametrize("body", [
    "unsafe { let slot = atomic_add(&c, [0], 1); z.store(x + slot); }",
    "unsafe { let slot = atomic_add(&c, [0], 1); if slot < 4 { z.store(x); } }",
    "let slot = unsafe { atomic_add(&c, [0], 1) }; z.store(x * (slot as f32));",
    "let slot = unsafe { atomic_add(&c, [0], 1); }; z.store(x * (slot as f32));",   # the block's `()`
    "unsafe { let slot = atomic_add(&c, [0], 1); z.store(full::<f32>([16, 8], slot)); }",
    "unsafe { let slot = atomic_min(&c, [1], 1); z.store(where(x > 0.0, slot, x)); }",
])
def test_a_read_of_an_atomics_value_names_the_atomic_wherever_it_is(body: str, tmp_path: Path) -> None:
    """One E0203 at the read, the atomic's call as the secondary label, the old value named; the slot recipe for
    `atomic_add` only (main: "cannot cast `()` as `f32`", "cannot apply `+`", "`where` expects tiles")."""
    f = _kernel(tmp_path, body)
    errs = [d for d in driver.check(f).diagnostics if d.severity.value == "error"]
    assert len(errs) == 1, [(d.code, d.message) for d in errs]
    d = errs[0]
    src = f.read_text(encoding="utf-8")
    name = "atomic_min" if "atomic_min" in body else "atomic_add"
    assert d.code == "E0203" and d.message == f"`slot` holds no value: `{name}` gives none back", d.message
    read = src.index("slot", src.index(f"{name}(")) if "if slot" not in body else src.index("slot <")
    assert d.primary_span.start == read, (d.primary_span, read)
    assert any("not the old value" in lab.message and not lab.primary for lab in d.labels), d.labels
    assert ("`cumsum` of one-hot rows" in d.help[0]) == (name == "atomic_add"), d.help


def test_an_unread_binding_of_an_atomic_is_only_the_unused_warning(tmp_path: Path) -> None:
    f = _kernel(tmp_path, "unsafe { let old = atomic_add(&c, [0], 1); } z.store(x);")
    ds = driver.check(f).diagnostics
    assert [d.code for d in ds] == ["W0001"], [(d.code, d.message) for d in ds]


@pytest.mark.parametrize(("call", "want"), [
    ("x.max(1, keepdim = true)", "`x.max(1).reshape([16, 1])`"),
    ("x.max(dim = 1, keepdim = true)", "`x.max(1).reshape([16, 1])`"),
    ("x.sum(-1, keepdim = true)", "`x.sum(1).reshape([16, 1])`"),
    ("sum(x, 0, keepdim = true)", "`sum(x, 0).reshape([1, 8])`"),
])
def test_pytorch_keepdim_gets_the_reshape(call: str, want: str, tmp_path: Path) -> None:
    """The first error's help is the call and its reshape, which checks clean (main: "drop `keepdim =`")."""
    f = _kernel(tmp_path, f"let m = {call}; z.store(x - m);")
    d = first_error(f)
    assert d.code == "E0107" and any(want in h for h in d.help), d.help
    fixed = _kernel(tmp_path, f"let m = {want.strip('`')}; z.store(x - m);")
    assert not [e for e in driver.check(fixed).diagnostics if e.severity.value == "error"]


def test_an_axis_keyword_is_read_by_position(tmp_path: Path) -> None:
    """`x.sum(axis = 0)` is E0107 alone: typed as `x.sum(0)`, not as `x.sum()` (a scalar whose `.reshape` was a
    second error, "`m` is a scalar")."""
    f = _kernel(tmp_path, "let m = x.sum(axis = 0); z.store(x - m.reshape([1, 8]));")
    errs = [d for d in driver.check(f).diagnostics if d.severity.value == "error"]
    assert [d.code for d in errs] == ["E0107"] and "drop `axis =`" in errs[0].help[0], [d.message for d in errs]


@pytest.mark.parametrize(("call", "want"), [
    ("x.permute(1, 0).transpose()", "`x.permute([1, 0])`"),
    ("x + zeros::<f32>(16, 8)", "`zeros::<f32>([16, 8])`"),
    ("x + ones::<f32>(16, 8)", "`ones::<f32>([16, 8])`"),
    ("x + full::<f32>(16, 8, 0.5)", "`full::<f32>([16, 8], 0.5)`"),
    ("x.sum(1).reshape([16, 1]).broadcast(16, 8)", "`x.sum(1).reshape([16, 1]).broadcast([16, 8])`"),
])
def test_pytorch_spread_out_sizes_get_the_list(call: str, want: str, tmp_path: Path) -> None:
    """E0105's help is the call with the integers in one list (was "call it with 1 argument"), and it checks."""
    f = _kernel(tmp_path, f"z.store({call});")
    d = first_error(f)
    assert d.code == "E0105" and any(want in h for h in d.help), d.help
    fixed = call
    for old, new in (("(1, 0)", "([1, 0])"), ("(16, 8)", "([16, 8])"), ("(16, 8, 0.5)", "([16, 8], 0.5)")):
        fixed = fixed.replace(old, new)
    f2 = _kernel(tmp_path, f"z.store({fixed});")
    assert not [e for e in driver.check(f2).diagnostics if e.severity.value == "error"], fixed


def test_a_spread_out_shape_with_a_float_keeps_the_count_help(tmp_path: Path) -> None:
    """Not sizes (a float among them): the plain count help, no list made of it."""
    d = first_error(_kernel(tmp_path, "z.store(x.reshape(16, 8, 1.0));"))
    assert d.code == "E0105" and not any("in brackets" in h for h in d.help), d.help


@pytest.mark.parametrize(("body", "code"), [
    ("let s = { x.sum(1).sum(0); }; z.store(x * (s as f32));", "E0205"),
    ("let s = if true { x.sum(1).sum(0); } else { 1.0; }; z.store(x * s);", "E0204"),
])
def test_a_unit_value_read_as_a_number_says_where_units_come_from(body: str, code: str, tmp_path: Path) -> None:
    """A block ending in `;` read as a number: the help names what gives `()` and the `;` to drop (was "`as`
    converts a scalar, a tile or a tensor" / "`*` takes numbers, tiles and tensors")."""
    d = first_error(_kernel(tmp_path, body))
    assert d.code == code and "this value is `()`" in d.help[0] and "drop the `;`" in d.help[0], d.help
    fixed = _kernel(tmp_path, body.replace("sum(0); }", "sum(0) }").replace("{ 1.0; }", "{ 1.0 }"))
    assert not [e for e in driver.check(fixed).diagnostics if e.severity.value == "error"]


@pytest.mark.parametrize("window", ["x[p * 16..(p + 1) * 16]", "x[p * 16..p * 16 + 16]"])
def test_an_aligned_window_of_a_tile_gets_the_reshape_pick(window: str, tmp_path: Path) -> None:
    """`t[p * 16..(p + 1) * 16]` of a [64] tile: the help writes the pick out for `p` and 16, and applied it checks
    and copies each window in place (the flash-decoding merge's quarter of a head, v25)."""
    from userprog import run_program

    f = tmp_path / "w.tile"
    body = ("kernel fn k(z: &mut Tensor<f32, [1, 16]>, xs: &Tensor<f32, [?, 64]>) {\n"
            "    let x = xs.partition([1, 64]).load([block_id(0), 0]).reshape([64]);\n"
            "    let p = block_id(1);\n    z.store((WINDOW).reshape([1, 16]));\n}\n"
            "fn main() {\n    let xs = arange::<f32>(128).reshape([2, 64]) - 64.0;\n    let mut z = zeros::<f32>([2, 64]);\n"
            "    k(z.partition([1, 16]), &xs).sync();\n}\n")
    f.write_text(body.replace("WINDOW", window), encoding="utf-8")
    d = first_error(f)
    pick = "where(arange::<i32>(4).reshape([4, 1]) == p, x.reshape([4, 16]), 0.0).sum(0)"
    assert d.code == "E0204" and f"`{pick}`" in d.help[0], d.help
    f.write_text(body.replace("WINDOW", pick), encoding="utf-8")
    assert not [e for e in driver.check(f, deny_warnings=True).diagnostics if e.severity.value == "error"]
    t, _ = run_program(f)
    np.testing.assert_array_equal(t["z"], t["xs"])


@pytest.mark.parametrize(("call", "want"), [('float("nan")', "is `nan` in Tile"), ('float("inf")', "is `inf` in Tile"),
                                            ("float(3)", "`3 as f32`"), ("(int(2.5) as f32)", "`2.5 as i32`")])
def test_python_float_and_int_calls(call: str, want: str, tmp_path: Path) -> None:
    d = first_error(_kernel(tmp_path, f"z.store(x * {call});"))
    assert d.code == "E0102" and want in d.help[0], d.help


@pytest.mark.parametrize(("call", "want"), [
    ("full([16, 8], 0.0, dtype = f32)", "`full::<f32>([16, 8], 0.0)`"),
    ("zeros([16, 8], dtype = tl.float32)", "`zeros::<f32>([16, 8])`"),
    ("zeros([16, 8], dtype = float16) as f32", "`zeros::<f16>([16, 8])`"),
])
def test_a_dtype_keyword_gets_the_turbofish(call: str, want: str, tmp_path: Path) -> None:
    """NumPy's and Triton's `dtype =`: one E0107 with the call and its turbofish (was E0101 "cannot find value `f32`"
    first, its help about `zeros`), and the help applied checks."""
    errs = [d for d in driver.check(_kernel(tmp_path, f"z.store(x + {call});")).diagnostics
            if d.severity.value == "error"]
    assert [d.code for d in errs] == ["E0107"] and want in errs[0].help[0], [(d.code, d.help) for d in errs]
    fixed = _kernel(tmp_path, f"z.store(x + {want.strip('`')}{' as f32' if 'f16' in want else ''});")
    assert not [e for e in driver.check(fixed).diagnostics if e.severity.value == "error"]


@pytest.mark.parametrize("call", ["multiple_of(x, 16)", "tl.multiple_of(x, 16)", "tl.max_contiguous(x, 16)"])
def test_triton_offset_hints_say_to_use_the_value(call: str, tmp_path: Path) -> None:
    """`tl.multiple_of(x, 16)`: "define it" before; now the value itself (a method-call form of `tl` too, which the
    help must not take for a call: it crashed the checker while this was written)."""
    d = first_error(_kernel(tmp_path, f"z.store({call});"))
    assert "is a hint about pointer offsets" in d.help[0] and d.help[0].endswith("use the value itself, `x`"), d.help


@pytest.mark.parametrize(("body", "want"), [
    ("let (a, b) = split(x.reshape([16, 4, 2])); z.store(x);", "Triton's `tl.split(x)`"),
    ("let y = join(x, x); z.store(x);", "Triton's `tl.join(a, b)`"),
    ("let y = interleave(x, x); z.store(x);", "Triton's `tl.interleave(a, b)`"),
    ("let y = div_rn(x, x); z.store(y);", "`x / y`: Tile's float division is IEEE's"),
    ("let y = x.sum(0, dtype = f32); z.store(x);", "`(x as f32).sum(0)`"),
    ("let mut a = x; for i in static_range(4) { a = a + x; } z.store(a);", "`for i in 0..n`"),
    ("device_print(\"x\", x); z.store(x);", "`print(..)` prints from a kernel"),
    ("z.store(fdiv(x, 2.0));", "`x / y`: Tile's float division is IEEE's"),
])
def test_triton3_pairs_rounded_math_and_a_reduction_s_dtype(body: str, want: str, tmp_path: Path) -> None:
    """Triton 3's `split`/`join`/`interleave` ("a similar name: `print`", "define it"), `div_rn` (was offered
    `cdiv_wrapping`), PyTorch's `x.sum(0, dtype = ..)` (E0101 on the type first): one error with the Tile spelling."""
    errs = [d for d in driver.check(_kernel(tmp_path, body)).diagnostics if d.severity.value == "error"]
    assert len(errs) == 1 and want in errs[0].help[0], [(d.code, d.help) for d in errs]


def test_the_split_pick_runs(tmp_path: Path) -> None:
    """The `tl.split` help's pick, written for a [16, 4, 2] tile, checks and gives the pairs' halves."""
    from userprog import run_program

    f = tmp_path / "s.tile"
    f.write_text("kernel fn k(a: &mut Tensor<f32, [16, 4]>, b: &mut Tensor<f32, [16, 4]>, xs: &Tensor<f32, [?, 8]>) {\n"
                 "    let x = xs.partition([16, 8]).load([block_id(0), 0]).reshape([16, 4, 2]);\n"
                 "    let s = arange::<i32>(2).reshape([1, 1, 2]);\n"
                 "    a.store(where(s == 0, x, 0.0).sum(2));\n    b.store(where(s == 1, x, 0.0).sum(2));\n}\n"
                 "fn main() {\n    let xs = randn::<f32>([32, 8], 3);\n    let mut a = zeros::<f32>([32, 4]);\n"
                 "    let mut b = zeros::<f32>([32, 4]);\n    k(a.partition([16, 4]), b.partition([16, 4]), &xs).sync();\n}\n",
                 encoding="utf-8")
    assert not driver.check(f, deny_warnings=True).diagnostics
    t, _ = run_program(f)
    np.testing.assert_array_equal(t["a"], t["xs"][:, 0::2])
    np.testing.assert_array_equal(t["b"], t["xs"][:, 1::2])
