"""Round 5 of the user's mistakes (huser, 2026-12-05): habits of Triton,
CUDA, NumPy, PyTorch and Python users (`tests/user/wrong/z*.tile`):
`tl.program_id`, `as torch.float16`, `ones::<np.float32>`, `t.shape[1]` and
`len(t)` of a tile, `max(a, b)` of two tiles, an f-string `print`, `z[i][i] =
1.0` in a kernel and on the host, `z[i, i] = 1.0`, `t[::2]`, `n // 2` (a
comment in Tile), `range(0, 64, B)`, `True`, `0.5f`, `a if c else b`, a
`for ..:` body without braces, `.to("cuda")`, a tuple shape, `tl.sum`;
std::llm's `gemv` given f32 weights (`&w` of the wrong type: the help
borrows the cast, `&(w as bf16)`, where it said `&w as bf16`, which casts the
borrow), a graph's captured input rebound between replays, and NumPy's
matrix product on the host (`dot(a, b)` of host tensors, `a @ b`), `t[0] +=
100.0` on a tile (the help's `where` adds where the mask is); a kernel
declared the Triton/CUDA/Python way (`@triton.jit`, `def`, `BLOCK:
tl.constexpr`, `x: *const f32`, `<B: i32>` without `const`); NumPy's
negative axis, `reshape([-1, 4])` and `t[-1]` (the help names the
axis, the size and the index Tile writes); a graph replayed while a
launch still reads what it writes (E0305 said "cannot launch `the graph`":
it names the graph and the replay now); std::nn's `softmax` called on a
host tensor (the help said to make its parameter a tensor, in the
standard library: it shows the kernel that loads the tile instead); and
a run-time error inside std (`cdiv(10, 0)`) names the user's call; `if`
on a comparison of tensors or tiles (NumPy's ambiguous truth value: the
help says "compare it, e.g. `x != 0`"), and `.all()`/`.any()`; CUDA's
`__syncthreads()` and `fmaxf` (which was offered `max`, a reduction); a
host function's `z += 1.0` on its `&mut` tensor (the help said `mut z`,
which would only rebind the name; a kernel writes it); `block_id()` and
`partition(B).load(i)` without their brackets.

`test_user_wrong.py` checks each file's code, place, underline and help
line. Here: the help names the Tile spelling, and the program with that
fix applied passes `tilec check -D warnings` and computes what NumPy does;
the editor reports the same first error.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

import tilelang.run as run
from tilelang import driver
from tilelang.diagnostics.model import TileError
from userprog import (
    assert_help_leads_to_a_working_program,
    assert_the_editor_shows_the_first_error,
    fixed_program,
    run_program,
)

DIR = Path(__file__).parent / "wrong"

# the loop of element writes a kernel author writes, and the one store of a `where` that Tile wants
_LOOP = ("    for i in 0..B {\n        z[i][i] = 1.0;\n    }\n",
         "    let r = arange::<i32>(B).reshape([B, 1]);\n    let c = arange::<i32>(B).reshape([1, B]);\n"
         "    z.store(where(r == c, 1.0, z.load()));\n")
# file: (a phrase of the first error's help, the fix: (old, new) replacements)
FIXES: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "z01_tl_program_id": ("is `block_id(axis)`", [("tl.program_id(0)", "block_id(0)")]),
    "z02_torch_dtype_cast": ("write `f16`", [("as torch.float16", "as f16")]),
    "z03_np_dtype_generic": ("write `f32`", [("np.float32", "f32")]),
    "z04_tile_shape_field": ("write its dimensions, `B` (axis 0), `N` (axis 1)", [("t.shape[1]", "N")]),
    "z05_len_of_tile": ("write its dimensions, `B`", [("len(t)", "B")]),
    "z06_max_of_two_tiles": ("`maximum(x.load_like(z), y.load_like(z))`", [("max(", "maximum(")]),
    "z07_fstring_print": ('`print("block {}: {}", block_id(0), t.sum(0))`',
                          [('f"block {block_id(0)}: {t.sum(0)}"', '"block {}: {}", block_id(0), t.sum(0)')]),
    "z08_element_store_in_kernel": ("`z.store(where(mask, v, z.load()))`", [_LOOP]),
    # (round 18: the help writes the mask of a host tensor of constant shape, as round 17's for tiles)
    "z09_element_assign_on_host": ("`z = where((arange::<i32>(3).reshape([3, 1]) == 1) && (arange::<i32>(4)"
                                   ".reshape([1, 4]) == 2), 5.0, z);`",
                                   [("z[1][2] = 5.0;", "z = where((arange::<i32>(3).reshape([3, 1]) == 1) && "
                                     "(arange::<i32>(4).reshape([1, 4]) == 2), 5.0, z);")]),
    "z10_numpy_index_assign": ("`where(mask, v, ..)`", [(_LOOP[0].replace("[i][i]", "[i, i]"), _LOOP[1])]),
    "z11_step_slice": ("`let t2 = t.reshape([n / k, k]);`",
                       [("z.store(t[::2]);", "let t2 = t.reshape([B, 2]);\n"
                         "    z.store(sum(where(arange::<i32>(2).reshape([1, 2]) == 0, t2, 0.0), 1));")]),
    "z12_floor_division": ("(`n / 2`", [("n // 2", "n / 2")]),
    "z13_range_with_step": ("`for i in 0..(64 + B - 1) / B { .. }`",
                            [("range(0, 64, B)", "0..(64 + B - 1) / B"), ("load([i / B])", "load([i])")]),
    "z14_python_true": ("`true`", [("True", "true")]),
    "z15_c_float_suffix": ("`0.5f32`", [("0.5f)", "0.5f32)")]),
    "z16_python_ternary": ("`if c { a } else { b }`", [("1.0 if n > 0 else -1.0", "if n > 0 { 1.0 } else { -1.0 }")]),
    "z17_python_colon_block": ("remove the `:`",
                               [("p.num_tiles(1):\n        acc = acc + p.load([block_id(0), k]).sum(1);\n",
                                 "p.num_tiles(1) {\n        acc = acc + p.load([block_id(0), k]).sum(1);\n    }\n")]),
    "z18_to_cuda": ("use `ones::<f32>([16])` itself", [('.to("cuda")', "")]),
    "z19_tuple_shape": ("`[4, 3]`", [("(4, 3)", "[4, 3]")]),
    "z20_tl_sum": ("no `tl.` prefix", [("tl.sum", "sum")]),
    "z21_std_gemv_f32_weights": ("`&(w as bf16)`", [("&w, &x", "&(w as bf16), &x")]),
    "z22_borrow_of_a_cast": ("`&(w as bf16)`", [("&w as bf16", "&(w as bf16)")]),
    "z23_graph_input_rebound": ("`x *= 0.0; x += new;`",
                                [("x = ramp * (step as f32);", "x *= 0.0;\n        x += ramp * (step as f32);")]),
    "z24_host_dot": ("`(a.reshape([4, 3, 1]) * b.reshape([1, 3, 2])).sum(1)`",
                     [("dot(a, b)", "(a.reshape([4, 3, 1]) * b.reshape([1, 3, 2])).sum(1)")]),
    "z25_matmul_operator": ("`(a.reshape([m, k, 1]) * b.reshape([1, k, n])).sum(1)`",
                            [("a @ b", "(a.reshape([4, 3, 1]) * b.reshape([1, 3, 2])).sum(1)")]),
    # (round 17: the help was `let t2 = where(mask, t + v, t);`, the mask left to write)
    "z26_tile_element_add_assign": ("`t = where(arange::<i32>(B) == 0, t + 100.0, t);`",
                                    [("t[0] += 100.0;", "t = where(arange::<i32>(B) == 0, t + 100.0, t);")]),
    "z27_triton_jit_decorator": ("Tile has no decorators", [("@triton.jit\n", "")]),
    "z28_python_def": ("`fn name(a: f32) -> f32 { .. }`", [("def twice", "fn twice")]),
    "z29_constexpr_parameter": ("`kernel fn k<const BLOCK: i32>(..)`",
                                [("kernel fn add(", "kernel fn add<const BLOCK: i32>("), (", BLOCK: tl.constexpr", ""),
                                 ("&x, 4)", "&x)")]),
    "z30_pointer_parameter": ("`&Tensor<f32, [?]>` to read", [("x: *const f32", "x: &Tensor<f32, [?]>")]),
    "z31_generic_without_const": ("`<const B: i32>`", [("copy<B: i32>", "copy<const B: i32>")]),
    "z32_negative_axis": ("here it is `1`", [("t.sum(-1)", "t.sum(1)")]),
    "z33_reshape_minus_one": ("`reshape([3, 4])`", [("[-1, 4]", "[3, 4]")]),
    "z34_replay_while_launched": ("call `h.wait()` before this replay",
                                  [("    g.replay();\n    h.wait();\n", "    h.wait();\n    g.replay();\n")]),
    "z35_std_softmax_on_the_host": ("`z.store(softmax(x.load_like(z)))`, `x` passed as `&x`",
                                    [("fn main() {", "kernel fn rows<const M: i32, const N: i32>(z: &mut Tensor<f32, [M, N]>,"
                                      " x: &Tensor<f32, [?, ?]>) {\n    z.store(softmax(x.load_like(z)));\n}\n\nfn main() {"),
                                     ("let p = softmax(x);", "let mut p = zeros::<f32>([4, 8]);\n"
                                      "    rows(p.partition([4, 8]), &x).sync();")]),
    "z36_if_on_a_tensor_comparison": ("all of them is `(x == y).min()`", [("if x == y {", "if (x == y).min() {")]),
    # (round 7: a `bool` tile reduces itself since round 6; the help said to cast it to i32 first)
    "z37_if_on_a_tile": ("`(t >= 0.0).min()` is true when all are",
                         [("if t >= 0.0 {", "if (t >= 0.0).min() {")]),
    "z38_cuda_syncthreads": ("no threads to synchronise", [("    __syncthreads();\n", ""), ("fmaxf(", "maximum(")]),
    "z39_host_fn_writes_its_mut_param": ("`k(z.partition([..]), ..).sync()`",
                                         [("fn bump", "kernel fn k<const B: i32>(z: &mut Tensor<f32, [B]>) {\n"
                                           "    z.store(z.load() + 1.0);\n}\nfn bump"),
                                          ("    z += 1.0;", "    k(z.partition([4])).sync();")]),
    "z40_index_without_brackets": ("`block_id(0)` for a 1-D grid",
                                   [("block_id()", "block_id(0)"), ("partition(B).load(i)", "partition([B]).load([i])")]),
}


def _fixed(name: str, tmp_path: Path) -> Path:
    return fixed_program(DIR / f"{name}.tile", FIXES[name][1], tmp_path)


def test_every_mistake_has_a_fix() -> None:
    assert sorted(p.stem for p in DIR.glob("z*.tile")) == sorted(FIXES)


@pytest.mark.parametrize("name", sorted(FIXES))
def test_the_help_leads_to_a_working_program(name: str, tmp_path: Path) -> None:
    assert_help_leads_to_a_working_program(DIR / f"{name}.tile", *FIXES[name], tmp_path)


def _run(name: str, tmp_path: Path) -> tuple[dict[str, np.ndarray], str]:
    return run_program(_fixed(name, tmp_path))


def test_the_fixed_programs_compute_what_numpy_does(tmp_path: Path) -> None:
    np.testing.assert_array_equal(_run("z01_tl_program_id", tmp_path)[0]["z"], np.arange(10) * 2.0)
    x = np.arange(30, dtype=np.float32).reshape(6, 5)
    np.testing.assert_allclose(_run("z04_tile_shape_field", tmp_path)[0]["z"], x.mean(1, keepdims=True))
    np.testing.assert_array_equal(_run("z05_len_of_tile", tmp_path)[0]["z"], np.full(24, 1 / 8))
    np.testing.assert_array_equal(_run("z06_max_of_two_tiles", tmp_path)[0]["z"],
                                  np.maximum(np.arange(12), 11 - np.arange(12)))
    assert _run("z07_fstring_print", tmp_path)[1] == "block 0: 4.0\nblock 1: 4.0\n"
    np.testing.assert_array_equal(_run("z08_element_store_in_kernel", tmp_path)[0]["z"], np.eye(8))
    np.testing.assert_array_equal(_run("z10_numpy_index_assign", tmp_path)[0]["z"], np.eye(8))
    want = np.zeros((3, 4))
    want[1, 2] = 5.0
    np.testing.assert_array_equal(_run("z09_element_assign_on_host", tmp_path)[0]["z"], want)
    np.testing.assert_array_equal(_run("z11_step_slice", tmp_path)[0]["z"], np.arange(32.0)[::2])
    assert _run("z12_floor_division", tmp_path)[1] == "3\n"
    np.testing.assert_array_equal(_run("z13_range_with_step", tmp_path)[0]["z"],
                                  np.arange(64.0).reshape(8, 8).sum(0))
    assert _run("z16_python_ternary", tmp_path)[1] == "1.0\n"
    np.testing.assert_array_equal(_run("z17_python_colon_block", tmp_path)[0]["z"], np.full(8, 16.0))
    t, _ = _run("z21_std_gemv_f32_weights", tmp_path)
    np.testing.assert_allclose(t["y"], _bf16(t["w"]).astype(np.float64) @ t["x"], rtol=1e-5, atol=1e-5)
    a, b = np.arange(12.0).reshape(4, 3), np.arange(6.0).reshape(3, 2)
    for name in ("z24_host_dot", "z25_matmul_operator"):
        np.testing.assert_array_equal(_run(name, tmp_path)[0]["c"], a @ b)
    want = np.arange(12.0)
    want[::4] += 100
    np.testing.assert_array_equal(_run("z26_tile_element_add_assign", tmp_path)[0]["z"], want)
    x = np.arange(10.0)
    for name, z in (("z27_triton_jit_decorator", 2 * x), ("z29_constexpr_parameter", x + 1),
                    ("z30_pointer_parameter", x), ("z31_generic_without_const", x)):
        np.testing.assert_array_equal(_run(name, tmp_path)[0]["z"], z, err_msg=name)
    assert _run("z28_python_def", tmp_path)[1] == "3.0\n"
    np.testing.assert_array_equal(_run("z32_negative_axis", tmp_path)[0]["z"], np.arange(24.0).reshape(6, 4).sum(1))
    np.testing.assert_array_equal(_run("z33_reshape_minus_one", tmp_path)[0]["m"], np.arange(12.0).reshape(3, 4))
    assert _run("z34_replay_while_launched", tmp_path)[1] == "0.0 8.0\n"  # the copy read z before the replay
    t, _ = _run("z35_std_softmax_on_the_host", tmp_path)
    e = np.exp(t["x"] - t["x"].max(1, keepdims=True))
    np.testing.assert_allclose(t["p"], e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-6)
    assert _run("z36_if_on_a_tensor_comparison", tmp_path)[1] == "same\n"
    x = np.arange(12, dtype=np.float32) - 3
    np.testing.assert_array_equal(_run("z37_if_on_a_tile", tmp_path)[0]["z"],
                                  np.concatenate([np.zeros(4, np.float32), np.sqrt(x[4:])]))  # tile 0 has negatives
    np.testing.assert_array_equal(_run("z38_cuda_syncthreads", tmp_path)[0]["z"], np.maximum(np.arange(10.0) - 5, 0))
    np.testing.assert_array_equal(_run("z39_host_fn_writes_its_mut_param", tmp_path)[0]["z"], np.arange(6.0) + 1)
    np.testing.assert_array_equal(_run("z40_index_without_brackets", tmp_path)[0]["z"], np.arange(10.0))
    m, ramp = np.zeros(100), np.arange(100.0)
    for step in range(4):
        m = m * 0.5 + ramp * step * 0.5
    np.testing.assert_allclose(_run("z23_graph_input_rebound", tmp_path)[0]["m"], m, rtol=1e-6)


def _bf16(x: np.ndarray) -> np.ndarray:
    """Round float32 values to bf16 (nearest, ties to even), as float32."""
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000).astype(np.uint32).view(np.float32)


@pytest.mark.parametrize("name", sorted(FIXES))
def test_the_editor_shows_the_same_first_error(name: str) -> None:
    assert_the_editor_shows_the_first_error(DIR / f"{name}.tile")


def test_a_negative_host_index_says_where_the_last_element_is(tmp_path: Path) -> None:
    # a run-time error (E0721): NumPy's `t[-1]` gets the index of the last element
    f = tmp_path / "last.tile"
    # the index from a tensor's value: known only when it runs, whatever the checker folds
    f.write_text("fn main() {\n    let t = arange::<f32>(6) * 2.0;\n    let i = (arange::<i32>(3) - 3)[2];\n"
                 "    print(t[i]);\n}\n", encoding="utf-8")
    with pytest.raises(TileError) as info:
        run.execute(str(f), "cpu", out=io.StringIO())
    d = info.value.diagnostics[0]
    assert d.code == "E0721" and any("the last is `t[5]`" in h for h in d.help), d.help
    f.write_text(f.read_text(encoding="utf-8").replace("t[i]", "t[5]").replace("    let i", "    let _i"),
                 encoding="utf-8")
    out = io.StringIO()
    run.execute(str(f), "cpu", out=out)
    assert out.getvalue() == "10.0\n"


def test_an_error_inside_the_standard_library_names_the_user_s_call(tmp_path: Path) -> None:
    # `cdiv(10, d)` with d = 0 stopped with E0715 shown only in stdlib/std/math.tile, a line the user never wrote
    f = tmp_path / "grid.tile"
    f.write_text("use std::math::cdiv;\nfn main() {\n    let d = arange::<i32>(2)[0];\n    print(cdiv(10, d));\n}\n",
                 encoding="utf-8")
    with pytest.raises(TileError) as info:
        run.execute(str(f), "cpu", out=io.StringIO())
    d = info.value.diagnostics[0]
    assert d.code == "E0715"
    ours = [lab for lab in d.labels if not lab.primary and "in this call of `cdiv`" in lab.message]
    assert len(ours) == 1 and ours[0].span.start == f.read_text(encoding="utf-8").index("cdiv(10, d)")


def test_the_rest_of_a_mistake_gets_its_own_help(tmp_path: Path) -> None:
    # z40's later errors: a shape, then (the shape fixed) an index written without brackets
    src = (DIR / "z40_index_without_brackets.tile").read_text(encoding="utf-8")
    helps = [h for d in driver.check(DIR / "z40_index_without_brackets.tile").diagnostics for h in d.help]
    assert any("`[B]`" in h for h in helps), helps
    f = tmp_path / "z40.tile"
    f.write_text(src.replace("partition(B)", "partition([B])").replace("block_id()", "block_id(0)"), encoding="utf-8")
    helps = [h for d in driver.check(f).diagnostics for h in d.help]
    assert any("`[i]`" in h for h in helps), helps


@pytest.mark.parametrize(("lit", "fixed"), [
    ('"block {block_id(0)}: {t.sum(0)}"', '`print("block {}: {}", block_id(0), t.sum(0))`'),
    ('"{x:.3f} {y!r}"', '`print("{} {}", x, y)`'), ('"{x=}"', '`print("x={}", x)`'),
    ('"{a <= b}"', '`print("{}", a <= b)`'), ('"done {{ok}}"', 'drop the `f`, `print("done {{ok}}")`'),
    # what has no Tile spelling gets the general example, never a format `print` would refuse
    ('"{"', '`print("n = {}", n)`'), ('"}"', '`print("n = {}", n)`'), ('"{a:{w}}"', '`print("n = {}", n)`'),
])
def test_the_f_string_help_at_its_edges(lit: str, fixed: str) -> None:
    from tilelang.syntax.errors import _fstring_help

    assert fixed in _fstring_help(lit)
