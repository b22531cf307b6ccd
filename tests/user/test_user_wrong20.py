"""Round 20 of the user's mistakes (huser20, 2026-12-06), each with the help applied by the letter and the
fixed program checked against NumPy (round 20's checks of the program it was meant to be).

- c01 a HOG kernel generic over the width `W` with its histogram and accumulator written `[1, 4, 9]` and the
  cell sums `[1, W / 8, 9]` (E0202; E0218 at the store once the accumulator is right): the help was "use
  `.reshape([..])` to add a dimension of size 1"; it now says that `W / 8` is not known to be 4 and to write
  `W / 8` where the other shape has 4.
- c02 a hash helper written for `[ROWS, 512]` tiles (`const ROWS: i32 = 8;`) called with the kernel's
  `[BR, 512]` tile (E0203): the help made the helper generic but kept `ROWS` in its header, the same error
  again; the new generic now replaces a module constant of the size as it did a literal.
- c03 a beam-search step sizing its tiles by the vocabulary read at run time, `partition([K, vocab])` with
  `vocab = logits.shape()[1]` (E0209): the help was "make it a const generic of the kernel"; it now writes the
  generic into the kernel's header, says to give it at the launch and to mask what lies past the run-time size.
  (The fix also splits the flattened index by the tile's width `N`, no longer `vocab`: with the tile 256 wide
  and the vocabulary 200, `best / vocab` picked the wrong beam, which NumPy's check caught.)
- c04 SiLU written with Rust's `.recip()` on a tile (E0103): the help listed the methods of tiles, and
  `t.signum()` was told "a similar name: `sum`"; Rust's float methods (`recip`, `signum`, `mul_add`, `ln`,
  `powi(n)`, ..) now get the same Tile spelling on tiles and host tensors as on scalars, with the call's
  arguments written in.
- c05 NumPy's `c[1:4, 0]` as `c[1..4, 0]` on the host (E0002): the help "index one axis at a time: `x[i][j]`"
  led to `c[1..4][0]`, the slice's row 0; a range before the comma now gets the column's spelling,
  `c.transpose()[0][1..4]` (and two ranges `x[a..b].transpose()[c..d].transpose()`).
- c06 (hdebt, from huser20's notes) a generic helper to wait for launch handles, `fn finish<T>(h: T)` (E0203):
  the help said "pass a `T` here (..), or change the parameter's type", which no type can (a handle has no
  written type); it now says so, and to wait where the launch was made, `ha.wait();` in place of the call.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from test_user_programs20 import CHECKS
from userprog import wrong_suite

# file: (a phrase of the first error's help, the fix: (old, new) replacements)
FIXES: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "c01_constant_cells_against_a_generic_width": (
        "write `W / 8` where the other shape has 4",
        [("Tensor<f32, [1, 4, 9]>", "Tensor<f32, [1, W / 8, 9]>"), ("zeros::<f32>([1, 4, 9])", "zeros::<f32>([1, W / 8, 9])")]),
    "c02_helper_sized_by_a_module_constant": (
        "`fn pcg<const BR: i32>(v: Tile<u32, [BR, 512]>) -> Tile<u32, [BR, 512]>`",
        [("fn pcg(v: Tile<u32, [ROWS, 512]>) -> Tile<u32, [ROWS, 512]>",
          "fn pcg<const BR: i32>(v: Tile<u32, [BR, 512]>) -> Tile<u32, [BR, 512]>")]),
    "c03_tile_sized_by_a_runtime_vocabulary": (
        "give `beam_step` a const generic for the largest size, `beam_step<const K: i32, const N: i32>`, write `N` "
        "here, give it at the launch",
        [("beam_step<const K: i32>(", "beam_step<const K: i32, const N: i32>("), ("[K, vocab]", "[K, N]"),
         ("[K * vocab]", "[K * N]"), ("arange::<i32>(K * vocab)", "arange::<i32>(K * N)"),
         ("beam_step(score", "beam_step::<4, 256>(score"), ("best / vocab", "best / N"), ("best % vocab", "best % N"),
         ("    let vocab = logits.shape()[1];\n", "")]),
    "c04_rust_recip_on_a_tile": (
        "`1.0 / (1.0 + exp(0.0 - tz))`", [("(1.0 + exp(0.0 - tz)).recip()", "1.0 / (1.0 + exp(0.0 - tz))")]),
    "c05_numpy_slice_and_index": (
        "`c.transpose()[0][1..4]` (column 0 of rows 1..4)", [("c[1..4, 0]", "c.transpose()[0][1..4]")]),
    "c06_handle_to_a_generic_helper": (
        "no function takes one (a type parameter such as `T` stands for an element type: `f32`, `i32`, ..): wait "
        "for it where it was made, `ha.wait();` in place of `finish(ha)`, and the rest of what `finish` does "
        "after that",
        [("finish(ha);", "ha.wait();"), ("finish(hb);", "hb.wait();"),
         ("fn finish<T>(h: T) {\n    h.wait();\n}\n", "")]),
}


def _c06(t: dict[str, np.ndarray], out: str) -> None:
    x = np.arange(1000, dtype=np.float64)
    np.testing.assert_array_equal(t["a"], 2 * x)
    np.testing.assert_array_equal(t["b"], 3 * x)
    assert [float(v) for v in out.split()] == [2 * x.sum(), 3 * x.sum()], out


FIXED = {"c01_constant_cells_against_a_generic_width": CHECKS["y05_hog_cells"],
         "c02_helper_sized_by_a_module_constant": CHECKS["y09_gumbel_max_sampling"],
         "c03_tile_sized_by_a_runtime_vocabulary": CHECKS["y04_beam_search_step"],
         "c04_rust_recip_on_a_tile": CHECKS["y03_gated_rmsnorm"],
         "c05_numpy_slice_and_index": CHECKS["y08_pearson_correlation"],
         "c06_handle_to_a_generic_helper": _c06}

(test_every_mistake_has_a_fix, test_the_help_leads_to_a_working_program,
 test_the_editor_shows_the_same_first_error) = wrong_suite("c*.tile", FIXES, FIXED)


def test_a_constant_against_a_generic_expression_gets_the_expression_help() -> None:
    """c01's gap, a constant against an expression of const generics, is told so at a broadcast and at a
    store; a constant against a constant, or a generic against a `?`, keeps the other helps."""
    from tilelang import driver
    from tilelang.sema.types import Dim, generic_constant_gap

    w = Dim.var("W")
    assert generic_constant_gap([Dim.const(1), Dim.const(4)], [Dim.const(1), w.floordiv(8)]) == (Dim.const(4),
                                                                                              w.floordiv(8))
    assert generic_constant_gap([Dim.const(4)], [Dim.const(5)]) is None
    assert generic_constant_gap([Dim.const(4), w], [w, Dim.const(4)]) == (Dim.const(4), w)
    assert generic_constant_gap([Dim.const(1)], [w]) is not None
    assert generic_constant_gap([Dim.const(1)], [w], broadcast=True) is None
    src = (Path(__file__).parent / "wrong" / "c01_constant_cells_against_a_generic_width.tile").read_text()
    fixed = src.replace("zeros::<f32>([1, 4, 9])", "zeros::<f32>([1, W / 8, 9])")
    errs = [d for d in driver.check(fixed, name="c01.tile").diagnostics if d.severity.value == "error"]
    assert [d.code for d in errs] == ["E0218"]
    assert any("write `W / 8` where the other shape has 4" in h for h in errs[0].help), errs[0].help


def test_rust_float_methods_on_tiles_and_tensors_get_their_tile_spelling(tmp_path: Path) -> None:
    """c04's mechanism for each of Rust's float methods on a tile and a host tensor (none is a similar name),
    and the spellings it gives run: the help applied by the letter gives NumPy's values."""
    from tilelang import driver
    from userprog import run_program

    calls = {"t.signum()": "where(t != t, t, where(t < 0.0 || 1.0 / t < 0.0, -1.0, 1.0))", "t.recip()": "1.0 / t",
             "t.mul_add(2.0, 1.0)": "fma(t, 2.0, 1.0)", "t.powi(2)": "t.pow(2)", "t.powf(0.5)": "t.pow(0.5)",
             "t.ln()": "log(t)", "t.is_nan()": "t != t"}
    for call, want in calls.items():
        for body in (f"kernel fn k(z: &mut Tensor<f32, [8]>, x: &Tensor<f32, [?]>) {{\n    let t = x.load_like(z);\n"
                     f"    z.store(t + 1.0);\n    let u = {call};\n}}\nfn main() {{}}\n",
                     f"fn main() {{\n    let t = rand::<f32>([8], 1);\n    print({call});\n}}\n"):
            errs = [d for d in driver.check(body, name="m.tile").diagnostics if d.severity.value == "error"]
            assert [d.code for d in errs] == ["E0103"], (call, [d.message for d in errs])
            assert errs[0].help and errs[0].help[0].startswith(f"`{want}`"), (call, errs[0].help)
    prog = tmp_path / "p.tile"
    prog.write_text("""kernel fn k(z: &mut Tensor<f32, [8]>, x: &Tensor<f32, [?]>) {
    let t = x.load_like(z);
    z.store(where(t != t, t, where(t < 0.0 || 1.0 / t < 0.0, -1.0, 1.0)) + 1.0 / t + fma(t, 2.0, 1.0) + t.pow(2) + log(abs(t)));
}
fn main() {
    let x = randn::<f32>([8], 3);
    let mut z = zeros::<f32>([8]);
    k(z.partition([8]), &x).sync();
}
""")
    import numpy as np
    got, _ = run_program(prog)
    x = got["x"].astype(np.float64)
    np.testing.assert_allclose(got["z"], np.sign(x) + 1 / x + x * 2 + 1 + x * x + np.log(np.abs(x)), rtol=1e-5)


def test_two_ranges_get_the_transposed_spelling(tmp_path: Path) -> None:
    """c05's second form, `m[1..3, 0..2]`: the help's spelling is NumPy's `m[1:3, 0:2]`."""
    import numpy as np
    from tilelang import driver
    from userprog import run_program

    src = "fn main() {\n    let m = arange::<f32>(12).reshape([3, 4]);\n    let s = m[1..3, 0..2];\n}\n"
    errs = [d for d in driver.check(src, name="m.tile").diagnostics if d.severity.value == "error"]
    assert [d.code for d in errs] == ["E0002"] and "`m[1..3].transpose()[0..2].transpose()`" in errs[0].help[0]
    prog = tmp_path / "p.tile"
    prog.write_text(src.replace("m[1..3, 0..2]", "m[1..3].transpose()[0..2].transpose()"))
    got, _ = run_program(prog)
    np.testing.assert_array_equal(got["s"], np.arange(12, dtype=np.float32).reshape(3, 4)[1:3, 0:2])


def test_the_length_of_a_shape_is_its_rank() -> None:
    """`z.shape().len()` on the host (the rank of a tensor) was told "values of this type have no methods": it
    is the shape's rank, which its type holds; a shape of unknown rank keeps the general help."""
    from tilelang import driver

    src = "fn main() {\n    let z = zeros::<f32>([4, 6]);\n    let s = z.shape();\n    print(s.len());\n}\n"
    errs = [d for d in driver.check(src, name="m.tile").diagnostics if d.severity.value == "error"]
    assert [d.code for d in errs] == ["E0103"]
    assert list(errs[0].help) == ["a shape's length is its rank, part of its type `Shape<2>`: 2 here (its `[k]` is "
                            "axis k's size)"], errs[0].help


def test_pytorch_slice_and_narrow_get_the_range_index(tmp_path: Path) -> None:
    """`x.slice(2, 5)` / `x.narrow(0, 2, 3)` on the host got the list of methods: the help is the range index,
    which gives PyTorch's rows."""
    import numpy as np
    from tilelang import driver
    from userprog import run_program

    src = "fn main() {\n    let x = arange::<f32>(10);\n    let y = x.slice(2, 5);\n    let z = x.narrow(0, 2, 3);\n}\n"
    errs = [d for d in driver.check(src, name="m.tile").diagnostics if d.severity.value == "error"]
    assert [d.code for d in errs] == ["E0103", "E0103"]
    assert all(list(d.help) == ["`x[a..b]` is rows a..b on the host (a kernel loads them by `partition`)"]
               for d in errs), [d.help for d in errs]
    prog = tmp_path / "p.tile"
    prog.write_text(src.replace("x.slice(2, 5)", "x[2..5]").replace("x.narrow(0, 2, 3)", "x[2..2 + 3]"))
    got, _ = run_program(prog)
    np.testing.assert_array_equal(got["y"], [2, 3, 4])
    np.testing.assert_array_equal(got["z"], [2, 3, 4])


def test_no_function_takes_a_handle_a_kernel_call_or_a_graph() -> None:
    """c06's help for each value with no written type, given to a parameter of a concrete type too, and the
    E0103 of `h.wait()` on a type parameter in the helper's body (it said "call it on one of those, not on a
    `T`"), each finished where it was made."""
    from tilelang import driver

    src = """kernel fn add<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>) {
    z.store(x.load_like(z) + 1.0);
}
fn go(o: f32) {}
fn finish<T>(h: T) {
    h.wait();
}
fn main() {
    let x = zeros::<f32>([1024]);
    let mut z = zeros::<f32>([1024]);
    let op = add(z.partition([256]), &x);
    go(op);
    let g = graph { add(z.partition([256]), &x); };
    go(g);
}
"""
    errs = [d for d in driver.check(src, name="m.tile").diagnostics if d.severity.value == "error"]
    assert [d.code for d in errs] == ["E0203", "E0203", "E0103"], [d.message for d in errs]
    assert errs[0].help[0].startswith("a kernel call has no written type, so no function takes one: run it where "
                                      "it was made, `op.sync();` in place of `go(op)`"), errs[0].help
    assert errs[1].help[0].startswith("a graph has no written type, so no function takes one: replay it where it "
                                      "was made, `g.replay();` in place of `go(g)`"), errs[1].help
    assert "`T` stands for an element type" in errs[2].help[0] and "call `wait` where it was made" in errs[2].help[0]
    # a handle where a kernel takes a tensor: the tensor its launch writes was meant
    src = src.replace("    go(op);\n", "    let h = op.launch();\n    add(z.partition([256]), h).sync();\n")
    errs = [d for d in driver.check(src, name="m.tile").diagnostics if d.severity.value == "error"]
    assert errs[0].code == "E0203" and errs[0].help[0] == (
        "a launch handle is not a tensor (no function or kernel takes one): wait for it where it was made, "
        "`h.wait();`, then pass the tensor it writes"), errs[0].help


def test_several_axes_at_once_get_the_chained_reductions(tmp_path: Path) -> None:
    """NumPy's and PyTorch's reduction over several axes (`t.sum((1, 2))`, `max(t, [1, 2])`, `axis = (1, 2)`,
    `t.mean(dim = [1, 2])`, `t.argmax((1, 2))`) in a kernel and on the host: the help was "an axis is an
    integer constant, e.g. `0` or `1`" (one axis: another result), for `max` "the element-wise maximum of two
    values is `maximum(t, [1, 2])`", for a keyword "drop `axis =`" (the tuple next); it is the kernel's own
    spelling now, one axis at a time (the highest first), applied here by the letter against NumPy."""
    from tilelang import driver
    from userprog import run_program

    kernel = """kernel fn k(z: &mut Tensor<ELEM, [2]>, x: &Tensor<f32, [?, 8, 16]>) {
    let t = x.partition([2, 8, 16]).load([block_id(0), 0, 0]);
    z.store(EXPR);
}
fn main() {
    let x = randn::<f32>([6, 8, 16], 5);
    let mut z = zeros::<ELEM>([6]);
    k(z.partition([2]), &x).sync();
    let h = HOST;
}
"""
    cases = [  # (written, the help's spelling, the kernel's element type, NumPy of x)
        ("t.sum((1, 2))", "t.sum(2).sum(1)", "E0203", "f32", lambda a: a.sum((1, 2))),
        ("max(t, [1, 2])", "max(max(t, 2), 1)", "E0203", "f32", lambda a: a.max((1, 2))),
        ("t.min(axis = (-1, -2))", "t.min(2).min(1)", "E0107", "f32", lambda a: a.min((1, 2))),
        ("t.mean(dim = [1, 2])", "t.sum(2).sum(1) / 128.0", "E0103", "f32", lambda a: a.mean((1, 2))),
        ("t.argmax((1, 2))", "t.reshape([2, 128]).argmax(1)", "E0203", "i32",
         lambda a: a.reshape(6, 128).argmax(1)),
    ]
    for written, want, code, elem, ref in cases:
        src = kernel.replace("ELEM", elem).replace("EXPR", written).replace("HOST", "x.sum(2)")
        errs = [d for d in driver.check(src, name="m.tile").diagnostics if d.severity.value == "error"]
        assert errs and errs[0].code == code and f"`{want}`" in errs[0].help[0], (written, errs[0].help)
        prog = tmp_path / "p.tile"
        prog.write_text(src.replace(written, want))
        got, _ = run_program(prog)
        x = got["x"].astype(np.float64)
        np.testing.assert_allclose(got["z"], ref(x), rtol=1e-5, atol=1e-5)
    # one axis in a list (NumPy's `axis=(2,)`): the axis alone
    src = kernel.replace("ELEM", "f32").replace("EXPR", "t.sum([2]).sum(1)").replace("HOST", "x.sum(2)")
    errs = [d for d in driver.check(src, name="m.tile").diagnostics if d.severity.value == "error"]
    assert [d.code for d in errs] == ["E0203"] and errs[0].help[0] == (
        "an axis is written alone, not as a list: `t.sum(2)`"), errs[0].help
    prog.write_text(src.replace("t.sum([2])", "t.sum(2)"))
    got, _ = run_program(prog)
    np.testing.assert_allclose(got["z"], got["x"].astype(np.float64).sum((1, 2)), rtol=1e-5, atol=1e-5)
    host = kernel.replace("ELEM", "f32").replace("EXPR", "t.sum(2).sum(1)").replace("HOST", "x.sum((1, 2))")
    errs = [d for d in driver.check(host, name="m.tile").diagnostics if d.severity.value == "error"]
    assert [d.code for d in errs] == ["E0203"] and "`x.sum(2).sum(1)`" in errs[0].help[0], errs[0].help
    prog.write_text(host.replace("x.sum((1, 2))", "x.sum(2).sum(1)"))
    got, _ = run_program(prog)
    np.testing.assert_allclose(got["h"], got["x"].astype(np.float64).sum((1, 2)), rtol=1e-5, atol=1e-5)


def test_an_argmax_of_every_axis_in_a_kernel_gets_the_flat_index(tmp_path: Path) -> None:
    """`t.argmax()` of a 2-D tile in a kernel (the host's `x.argmax()` of a 2-D tensor is the row-major index
    over every element) was told only to give an axis; the help adds the tile reshaped to one axis, which gives
    the host's index (applied here against NumPy)."""
    from tilelang import driver
    from userprog import run_program

    src = """kernel fn k<const R: i32>(z: &mut Tensor<i32, [1]>, x: &Tensor<f32, [?, 16]>) {
    let t = x.partition([R, 16]).load([block_id(0), 0]);
    let i = t.argmax();
    z.store(full::<i32>([1], i));
}
fn main() {
    let x = randn::<f32>([12, 16], 9);
    let mut z = zeros::<i32>([3]);
    k::<4>(z.partition([1]), &x).sync();
}
"""
    errs = [d for d in driver.check(src, name="m.tile").diagnostics if d.severity.value == "error"]
    assert [d.code for d in errs] == ["E0207"] and errs[0].help[0].endswith(
        "over all its elements (a row-major index), `t.reshape([R * 16]).argmax(0)`"), errs[0].help
    prog = tmp_path / "p.tile"
    prog.write_text(src.replace("t.argmax()", "t.reshape([R * 16]).argmax(0)"))
    got, _ = run_program(prog)
    np.testing.assert_array_equal(got["z"], got["x"].reshape(3, 64).argmax(1))
