"""Round 6 of the user's mistakes (huser, 2026-12-05 09:03): an error-quality
sweep over 20 of the most common error codes (`tests/user/wrong/e*.tile`),
each the program a user writes when they hit it: an unclosed `{` (E0004),
`float` for `f32` (E0104), a kernel defined twice (E0106), one generic too
many (E0111), a bias reshaped onto the wrong axis (E0202), `x.shape() as
f32` (E0205), a row sum reshaped to [B, 1] for a [B] tile (E0218), a tile
size from a scalar parameter (E0209), `randn` in a kernel (E0210), a 2-D
tensor split into 1-D tiles (E0217), a kernel returning its result
(E0220), a launch never run (E0224), a constant zero divisor (E0226),
`.partition` of a binding without `mut` (E0304), `.launch()` dropped
(E0308), the result stored into the input (E0401), tensor arithmetic in a
device function (E0204, then E0406), `break` outside a loop (E0113), a
binding assigned on one path only (E0118), tile shapes that give a generic
two values (E0214); std::attention called with `T` = f32 in the turbofish for
f16 tensors (four E0203 "cast with `as`: `o.partition([1, 16, 32]) as
f32`", a cast of a partition; now one error at the turbofish), its output
split into [BM, D] tiles without the head axis (E0217: `[1, 16, 32]`, tiles
of 1 along the leading axis), a head dimension that disagrees with the
tensors (four E0214 saying to follow the turbofish; now one, which also
offers the tensors' size). Then e24-e33, more of the common ones: the output
passed as its own input (E0303), f16 times f32 (E0201), a reduction's axis
past the rank (E0207), `load()` of a `?` tensor (E0219), a tensor parameter
by value (E0221), `.partition` of a `reshape` (E0313), a read while the
launch is in flight (E0305), a tile size of 0 (E0212), an argument left
out (E0105: the help now shows the definition's parameters to match the
call against); and a block reading the next block's tile of its output
(E0403 at the launch: the help now says to pass the data as a `&` input
too, `&z.clone()`).

Round 7 (2026-12-05 11:48), e34-e50, 15 codes not in e01-e33 and host
shapes the other way round: a misspelt local (E0101), `softmax` without its
`use` (E0102: it proposed `max`; now `use std::nn::softmax;`), `t.mean(1)`
(E0103: now `t.sum(1) / (N as f32)` from the tile's type), an accumulator
without `mut` (E0108), `use std::nnn` (E0109), `use std::nn::softmx` (E0110:
the import and the call both renamed; the call's E0102 names the std item
too), `fn main() -> i32` (E0116), a reshape to the wrong count (E0208: it
said "choose const generics for which the reshape keeps the element
count"; now `.reshape([B, 2])`), a tile past 2^20 elements (E0213: a shape
that fits), a generic nothing infers (E0215), a tuple's `.2` (E0223), `1 <<
40` in `i32` (E0227), `&mut z` for a partition (E0301), a use after a move
(E0306), two launches in flight writing one tensor (E0309), a `&mut`
parameter passed as `&` to a device function (E0406), host `[2, 3] + [3,
2]` (E0202: it said "add a dimension of size 1"; now `b.transpose()`),
`op.sync` without its `()` (E0223: "`Op<fill>` has no fields"; now `.sync()`),
`let mut acc = 0.0; acc += tile` (E0203: now the tile accumulator,
`zeros::<f32>([B])`); and z37's `if` on a `bool` tile (test_user_wrong5)
reduces it with `.min()` (it said to cast to `i32` first, which round 6
made unnecessary).

`test_user_wrong.py` checks each file's code, place, underline and help
line. Here: the first error's help names the fix, and the program with that
fix applied (one edit where the help proposes one; E0209, E0210 and E0220
change a declaration and its call) passes `tilec check -D warnings` and
computes what NumPy does. Help lines made concrete for this sweep (they
named no spelling, or one that led to a second error): E0202 puts the
axes of a reshape where they broadcast (`bias.reshape([1, N])`); E0205 of a
shape casts one dimension (`x.shape()[0] as f32`); E0218 of a `reshape`
fixes that reshape (it proposed a second one after it); E0209 of a scalar
parameter spells the const generic, its use and the call's turbofish;
E0217 with too few tile sizes gives the whole length of the axes left out
(`z.partition([4, 8])`); E0401 in a kernel with a `&mut` output proposes
storing into it; E0204 on a tensor in kernel code loads it with the names
at hand (`x.load()` of a static shape; it said `x.load_like(z)` where no
`z` exists); E0118 on a binding assigned later proposes `let mut` (the
`let kind: .. = value;` it proposed failed E0108 at the assignment).
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

import tilelang.run as run
from tilelang import driver
from test_user_programs6 import _attention
from userprog import assert_help_leads_to_a_working_program, first_error, fixed_program, run_program

DIR = Path(__file__).parent / "wrong"

# file: (a phrase of the first error's help, the fix: (old, new) replacements)
FIXES: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "e01_unclosed_brace": ("add the matching `}`",
                           [("    z.store(z.load() * 2.0);\n", "    z.store(z.load() * 2.0);\n}\n")]),
    "e02_float_type": ("similar name exists: `f32`", [("Tensor<float,", "Tensor<f32,")]),
    "e03_duplicate_kernel": ("rename one of them", [("fn add<const B: i32>(z: &mut Tensor<i32",
                                                     "fn add_i32<const B: i32>(z: &mut Tensor<i32")]),
    "e04_turbofish_count": ("give 1 generic argument", [("fill::<f32, 4>", "fill::<4>")]),
    "e05_broadcast_shapes": ("`bias.reshape([1, N])`", [("bias.reshape([N, 1])", "bias.reshape([1, N])")]),
    "e06_cast_tensor_to_scalar": ("`x.shape()[0] as f32`", [("x.shape() as f32", "x.shape()[0] as f32")]),
    "e07_store_shape_of_reshape": ("`t.sum(1).reshape([B])`", [("t.sum(1).reshape([B, 1])", "t.sum(1).reshape([B])")]),
    "e08_runtime_tile_dim": ("`head<const B: i32, const N: i32>` without `n: i32`, `N` here, and a call gives the "
                             "values: `head::<B, N>(..)`",
                             [("fn head<const B: i32>", "fn head<const B: i32, const N: i32>"), (", n: i32)", ")"),
                              ("partition([n])", "partition([N])"),
                              ("head(z.partition([4]), &x, 4)", "head::<4, 4>(z.partition([4]), &x)")]),
    "e09_randn_in_kernel": ("call `randn` in `main`",
                            [("(z: &mut Tensor<f32, [B]>)", "(z: &mut Tensor<f32, [B]>, noise: &Tensor<f32, [?]>)"),
                             ("    let noise = randn::<f32>([B], 7);\n", ""),
                             ("noise * 0.01", "noise.load_like(z) * 0.01"),
                             ("jitter(z.partition([4]))", "let noise = randn::<f32>([8], 7);\n"
                              "    jitter(z.partition([4]), &noise)")]),
    "e10_partition_shape": ("`z.partition([4, 8])`", [("z.partition([4])", "z.partition([4, 8])")]),
    "e11_kernel_returns": ("remove the return type and `store` the result",
                           [("(x: &Tensor<f32, [B]>) -> f32 {\n    x.load().sum()\n",
                             "(z: &mut Tensor<f32, [1]>, x: &Tensor<f32, [B]>) {\n"
                             "    z.store(full::<f32>([1], x.load().sum()));\n"),
                            ("    print(total(&x));", "    let mut z = zeros::<f32>([1]);\n"
                             "    total(z.partition([1]), &x).sync();\n    print(z);")]),
    "e12_forgot_sync": ("run it with `.sync()`", [("inc(z.partition([4]));", "inc(z.partition([4])).sync();")]),
    "e13_const_div_zero": ("divide by a value that is not zero", [("let blocks = 0;", "let blocks = 4;")]),
    "e14_partition_immutable": ("`mut z`", [("let z = ones", "let mut z = ones")]),
    "e15_handle_dropped": ("or use `.sync()`", [(".launch();", ".sync();")]),
    "e16_store_to_input": ("store the block's result into `z`", [("x.store(where", "z.store(where")]),
    # the help of the first error, then the second one's (E0406: `x` as `&mut`)
    "e17_tensor_arithmetic_in_device_fn": ("`x.load()` reads all of it",
                                           [("(x * x)", "(x.load() * x.load())"), ("(x: &Tensor", "(x: &mut Tensor")]),
    "e18_break_outside": ("use `return` to leave a function", [("        break;", "        return;")]),
    "e19_uninit": ("`let mut kind: .. = value;`", [("let kind: i32;", "let mut kind: i32 = 1;")]),
    "e20_partition_vs_param": ("give them one value (4 or 8 for each)", [("z.partition([4, 8])", "z.partition([4, 4])")]),
    # std::attention's generics and layout: one error a call, the fix spelled out
    "e21_attention_turbofish_type": ("`flash_attention::<f16, 16, 16, 32>(..)`", [("<f32, 16", "<f16, 16")]),
    "e22_attention_tiles_without_heads": ("`o.partition([1, 16, 32])`", [("partition([16, 32])", "partition([1, 16, 32])")]),
    "e23_attention_head_dim": ("or give `D` = 32 in the turbofish", [("16, 16, 64>", "16, 16, 32>")]),
    # more of the common codes
    "e24_same_tensor_in_and_out": ("`&z.clone()`", [("&z)", "&z.clone())")]),
    "e25_mixed_precision": ("`x.load_like(z) as f32`", [("x.load_like(z) * a", "(x.load_like(z) as f32) * a")]),
    "e26_axis_out_of_range": ("use an axis below 2", [("t.sum(2)", "t.sum(1)")]),
    "e27_load_unknown_shape": ("`x.load_like(z)`", [("x.load()", "x.load_like(z)")]),
    "e28_tensor_by_value": ("`&Tensor<f32, [?]>`", [("x: Tensor<", "x: &Tensor<"), ("4]), x)", "4]), &x)")]),
    "e29_partition_of_reshape": ("bind it to a variable first",
                                 [("    inc(z.reshape([4, 4]).partition([2, 2])).sync();\n    print(z);",
                                   "    let mut t = z.reshape([4, 4]);\n    inc(t.partition([2, 2])).sync();\n"
                                   "    print(t);\n    print(z);")]),
    "e31_use_while_in_flight": ("call `h.wait()` before this use of `z`",
                                [("    print(z.sum());\n    h.wait();", "    h.wait();\n    print(z.sum());")]),
    "e32_tile_dim_zero": ("use a positive size", [("[n / 16]", "[n / 2]")]),
    "e33_wrong_arg_count": ("`axpy(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>, a: f32)`", [("&x).sync()", "&x, 0.5).sync()")]),
    # round 7 (2026-12-05 11:48): 15 more codes, and host shapes the other way round
    "e34_typo_name": ("a local variable with a similar name exists: `tile`", [("z.store(tlie", "z.store(tile")]),
    "e35_softmax_without_use": ("import it with `use std::nn::softmax;`",
                                [("kernel fn rows", "use std::nn::softmax;\nkernel fn rows")]),
    "e36_mean_method": ("`t.sum(1) / (N as f32)`", [("t.mean(1)", "t.sum(1) / (N as f32)")]),
    "e37_accumulate_immutable": ("`mut acc`", [("let acc =", "let mut acc =")]),
    "e38_use_wrong_module": ("`std::nn`", [("std::nnn::", "std::nn::")]),
    "e39_use_misspelt_item": ("`use std::nn::softmax;`, and call it `softmax`",
                              [("use std::nn::softmx;", "use std::nn::softmax;"), ("softmx(x", "softmax(x")]),
    "e40_main_returns": ("print the result", [("fn main() -> i32 {", "fn main() {"), ("    0\n}", "}")]),
    "e41_reshape_count": ("`.reshape([B, 2])` keeps the 8 elements", [("reshape([B, 4])", "reshape([B, 2])")]),
    "e42_tile_too_large": ("e.g. [600000]", [("z.partition([1200000])", "z.partition([600000])")]),
    "e43_generic_not_inferred": ("`scale::<4, K>(..)`", [("scale(z.partition", "scale::<4, 3>(z.partition")]),
    "e44_tuple_field": ("from `.0` to `.1`", [("s.2 - s.0", "s.1 - s.0")]),
    "e45_shift_overflow": ("a typed binding (`let n: i64 = ..`)", [("let big: i32", "let big: i64")]),
    "e46_mut_without_partition": ("`z.partition([1024])`", [("fill(&mut z)", "fill(z.partition([1024]))")]),
    "e47_use_after_move": ("`a.clone()`", [("let b = a;", "let b = a.clone();")]),
    "e48_two_launches_write": ("call `h1.wait()` before this launch",
                               [("    let h2 =", "    h1.wait();\n    let h2 ="),
                                ("    h1.wait();\n    h2.wait();", "    h2.wait();")]),
    "e49_mut_param_as_shared": ("make `x` a `&mut` parameter", [("(x: &Tensor<f32, [B]>)", "(x: &mut Tensor<f32, [B]>)")]),
    "e50_host_shapes": ("`b.transpose()` is [2, 3]", [("(a + b)", "(a + b.transpose())")]),
    "e51_sync_without_call": ("`sync` is a method: `fill(z.partition([4])).sync()`", [(".sync;", ".sync();")]),
    "e52_scalar_accumulator": ("`let mut acc = zeros::<f32>([B]);`",
                               [("let mut acc = 0.0;", "let mut acc = zeros::<f32>([B]);")]),
}


def _fixed(name: str, tmp_path: Path) -> Path:
    return fixed_program(DIR / f"{name}.tile", FIXES[name][1], tmp_path)


def test_every_mistake_has_a_fix() -> None:
    assert sorted(p.stem for p in DIR.glob("e*.tile") if p.stem < "e53") == sorted(FIXES)  # e53-: wrong8
    assert len({first_error(DIR / f"{n}.tile").code for n in sorted(FIXES)[:20]}) == 20  # e01-e20: 20 codes
    for name in ("e21_attention_turbofish_type", "e23_attention_head_dim"):  # one error for the call, not 4
        assert len([d for d in driver.check(DIR / f"{name}.tile").diagnostics if d.severity.value == "error"]) == 1


@pytest.mark.parametrize("name", sorted(FIXES))
def test_the_help_leads_to_a_working_program(name: str, tmp_path: Path) -> None:
    assert_help_leads_to_a_working_program(DIR / f"{name}.tile", *FIXES[name], tmp_path)


def _run(name: str, tmp_path: Path) -> tuple[dict[str, np.ndarray], str]:
    return run_program(_fixed(name, tmp_path))


def test_the_fixed_programs_compute_what_numpy_does(tmp_path: Path) -> None:
    r = np.arange(8, dtype=np.float32)
    np.testing.assert_array_equal(_run("e01_unclosed_brace", tmp_path)[0]["z"], r * 2)
    np.testing.assert_array_equal(_run("e02_float_type", tmp_path)[0]["z"], r * 3)
    np.testing.assert_array_equal(_run("e03_duplicate_kernel", tmp_path)[0]["z"], r)
    np.testing.assert_array_equal(_run("e04_turbofish_count", tmp_path)[0]["z"], np.full(8, 1.5))
    t, out = _run("e05_broadcast_shapes", tmp_path)
    np.testing.assert_array_equal(t["z"], 1 + np.tile(r, (4, 1)))  # the bias along each row
    assert out == f"{(1 + np.tile(r, (4, 1))).sum()}\n"
    assert _run("e06_cast_tensor_to_scalar", tmp_path)[1] == "2.0\n"
    x = np.arange(32, dtype=np.float32).reshape(8, 4)
    np.testing.assert_array_equal(_run("e07_store_shape_of_reshape", tmp_path)[0]["z"], x.sum(1))
    np.testing.assert_array_equal(_run("e08_runtime_tile_dim", tmp_path)[0]["z"], np.full(4, 6.0))
    t, _ = _run("e09_randn_in_kernel", tmp_path)
    np.testing.assert_allclose(t["z"], r + t["noise"] * np.float32(0.01), rtol=1e-6)
    assert _run("e10_partition_shape", tmp_path)[1] == "32.0\n"
    np.testing.assert_array_equal(_run("e11_kernel_returns", tmp_path)[0]["z"], [28.0])
    np.testing.assert_array_equal(_run("e12_forgot_sync", tmp_path)[0]["z"], np.ones(8))
    assert _run("e13_const_div_zero", tmp_path)[1] == "25\n"
    np.testing.assert_array_equal(_run("e14_partition_immutable", tmp_path)[0]["z"], np.zeros(8))
    np.testing.assert_array_equal(_run("e15_handle_dropped", tmp_path)[0]["z"], np.ones(8))
    np.testing.assert_array_equal(_run("e16_store_to_input", tmp_path)[0]["z"], np.maximum(r - 4, 0))
    z = np.arange(4, dtype=np.float32) + 1
    np.testing.assert_allclose(_run("e17_tensor_arithmetic_in_device_fn", tmp_path)[0]["z"],
                               z / np.sqrt((z * z).sum()), rtol=1e-6)
    assert _run("e18_break_outside", tmp_path)[1] == ""  # 45 > 40: main returns before its print
    assert _run("e19_uninit", tmp_path)[1] == "1\n"  # 7 is odd: the declared value
    x = np.arange(64, dtype=np.float32).reshape(8, 8)
    np.testing.assert_array_equal(_run("e20_partition_vs_param", tmp_path)[0]["z"], x.T)
    np.testing.assert_array_equal(_run("e24_same_tensor_in_and_out", tmp_path)[0]["z"], r * 2)
    np.testing.assert_array_equal(_run("e25_mixed_precision", tmp_path)[0]["z"], np.full(8, 0.5))
    np.testing.assert_array_equal(_run("e26_axis_out_of_range", tmp_path)[0]["z"], np.full(8, 4.0))
    np.testing.assert_array_equal(_run("e27_load_unknown_shape", tmp_path)[0]["z"], r)
    np.testing.assert_array_equal(_run("e28_tensor_by_value", tmp_path)[0]["z"], r)
    t, out = _run("e29_partition_of_reshape", tmp_path)
    np.testing.assert_array_equal(t["t"], np.ones((4, 4)))
    np.testing.assert_array_equal(t["z"], np.zeros(16))  # the reshape is a copy, as the help says
    assert _run("e31_use_while_in_flight", tmp_path)[1] == "8.0\n"
    np.testing.assert_array_equal(_run("e32_tile_dim_zero", tmp_path)[0]["z"], np.ones(8))
    np.testing.assert_array_equal(_run("e33_wrong_arg_count", tmp_path)[0]["z"], np.full(8, 0.5))
    t, out = _run("e22_attention_tiles_without_heads", tmp_path)
    want, _ = _attention(t["q"], t["k"], t["v"], 0.17, True)
    np.testing.assert_allclose(t["o"], want, rtol=0, atol=2e-3)
    assert out == "[4, 20, 32]\n"


def test_the_round7_fixed_programs_compute_what_numpy_does(tmp_path: Path) -> None:
    r = np.arange(8, dtype=np.float32)
    x = np.arange(32, dtype=np.float32).reshape(4, 8)

    def softmax(a: np.ndarray) -> np.ndarray:
        e = np.exp(a - a.max(1, keepdims=True))
        return e / e.sum(1, keepdims=True)

    np.testing.assert_array_equal(_run("e34_typo_name", tmp_path)[0]["z"], r * 2)
    np.testing.assert_allclose(_run("e35_softmax_without_use", tmp_path)[0]["z"], softmax(x * np.float32(0.1)),
                               rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(_run("e36_mean_method", tmp_path)[0]["z"], x.mean(1), rtol=1e-6)
    np.testing.assert_array_equal(_run("e37_accumulate_immutable", tmp_path)[0]["z"], np.full(4, 10.0))
    np.testing.assert_allclose(_run("e38_use_wrong_module", tmp_path)[0]["z"],
                               x / np.sqrt((x * x).mean(1, keepdims=True) + 1e-6), rtol=1e-5)
    t, out = _run("e39_use_misspelt_item", tmp_path)
    np.testing.assert_allclose(t["z"], softmax(x * np.float32(0.1)), rtol=1e-6, atol=1e-7)
    assert out.startswith("Tensor<f32, [4]> [")
    assert _run("e40_main_returns", tmp_path)[1] == "10\n"
    np.testing.assert_array_equal(_run("e41_reshape_count", tmp_path)[0]["z"],
                                  np.arange(16, dtype=np.float32).reshape(8, 2).sum(1))
    assert _run("e42_tile_too_large", tmp_path)[1] == "1200000.0\n"  # two tiles of 600,000
    np.testing.assert_array_equal(_run("e43_generic_not_inferred", tmp_path)[0]["z"], r * 3)
    assert _run("e44_tuple_field", tmp_path)[1] == "7.0\n"
    assert _run("e45_shift_overflow", tmp_path)[1] == f"{1 << 40}\n"
    np.testing.assert_array_equal(_run("e46_mut_without_partition", tmp_path)[0]["z"], np.full(8, 2.0))
    assert _run("e47_use_after_move", tmp_path)[1] == "12.0\n"
    np.testing.assert_array_equal(_run("e48_two_launches_write", tmp_path)[0]["z"], np.full(8, 2.0))
    np.testing.assert_allclose(_run("e49_mut_param_as_shared", tmp_path)[0]["z"], (r + 1) / 36, rtol=1e-6)
    a, b = np.arange(6.0).reshape(2, 3), np.arange(6.0).reshape(3, 2)
    assert _run("e50_host_shapes", tmp_path)[1] == f"{(a + b.T).sum()}\n"
    np.testing.assert_array_equal(_run("e51_sync_without_call", tmp_path)[0]["z"], np.ones(8))
    np.testing.assert_array_equal(_run("e52_scalar_accumulator", tmp_path)[0]["z"],
                                  np.arange(16, dtype=np.float32).reshape(4, 4).sum(0))


def test_reading_a_neighbour_s_tile_of_the_output(tmp_path: Path) -> None:
    """E0403 of a launch (a launch-time check, which `tilec check` decides
    where the launch's shapes are constants, as here): a block reading the
    next block's tile of its `&mut` output. The
    help said only "keep the index inside the own tile's nested tiles"; it
    now says how to read other blocks' tiles: the data as a `&` input too."""
    src = ("kernel fn smooth<const B: i32>(z: &mut Tensor<f32, [B]>) {\n"
           "    let next = z.partition([B]).load([block_id(0) + 1]);\n"
           "    z.store((z.load() + next) * 0.5);\n}\n"
           "fn main() {\n    let mut z = arange::<f32>(8);\n    smooth(z.partition([4])).sync();\n    print(z);\n}\n")
    f = tmp_path / "smooth.tile"
    f.write_text(src, encoding="utf-8")
    with pytest.raises(run.CheckFailed) as e:  # (a TileError at the launch before 2026-12-05 11:48)
        run.execute(str(f), "cpu", out=io.StringIO())
    d = e.value.diagnostics[0]
    assert d.code == "E0403" and any("pass the data as a `&` input as well (a copy, `&z.clone()`)" in h
                                     for h in d.help), d.help
    fixed = src.replace("(z: &mut Tensor<f32, [B]>) {", "(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>) {") \
        .replace("z.partition([B]).load([block_id(0) + 1])", "x.partition([B]).load([block_id(0) + 1])") \
        .replace("smooth(z.partition([4]))", "smooth(z.partition([4]), &z.clone())")
    f.write_text(fixed, encoding="utf-8")
    ex = run.execute(str(f), "cpu", out=io.StringIO())
    r = np.arange(8, dtype=np.float32)
    nxt = np.concatenate([r[4:8], np.zeros(4, np.float32)])  # block 1 reads past the end: zeros
    np.testing.assert_array_equal(ex.main_locals["z"].numpy(), (r + nxt) * 0.5)
