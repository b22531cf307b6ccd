"""Round 21 of the user's mistakes (huser21, 2026-12-07), each with the help applied by the letter and the
fixed program checked against NumPy (round 21's checks of the program it was meant to be).

- d01 the GMM's E-step with `log(2.0 * PI)` and no `use std::math::PI;` (E0101): the help was "declare `PI`
  before this use (`let PI = ..;`), take it as a parameter, or define it as a `const` item"; a constant of the
  standard library now gets its `use`, as a function of it (`softmax`, `cdiv`) already did.
- d02 Lion's graph replayed with the Python API's `steps.replay(times = 25)` (E0107): the help "drop
  `times =`" led to `steps.replay(25)`, then "call it with 0 arguments"; both spellings now get the loop.
- d03 the M-step's row walk counted with Rust's `rows.div_ceil(BN)` (E0103): the help was "a similar name:
  `ceil`", a float method; Rust's `div_ceil` and `next_multiple_of` now get the integer spelling.
- d04 GAE's backward walk as `for t in (0..T).rev()` (E0103): the help (round 17's) counts up and indexes from
  the end; checked here to lead to the program.
- d05 Lion's `sign(c)` (E0102): the help's `where` spelling.
- d06 GELU's `const C0: f32 = sqrt(2.0 / std::math::PI);` (E0209): it was refused as "constant `C0` depends on
  itself" (a path to a std module loaded it and evaluated every pending constant, the one being evaluated
  too), `const C: f32 = std::math::PI;` alike; with that fixed, `sqrt` is refused as in Rust, and the help,
  "use literals, other constants and operators on them", now gives the value to write.
- d07 the drawdown's chunk walk counted by the run-time number of days while storing into nested tiles of the
  own row (E0407, rounds 18 and 19's mistake in a third program): the help's `out.num_tiles(1)` gives it.
- d08 Lion's graph ended with Rust's `drop(steps)` so that the weights it captured could be clipped after
  training (E0102): the help was "define it (`fn drop(..) { .. }`), or import it with `use`"; it now says a
  value lives to the end of its block, and the graph in a `{ .. }` block gives the program (the clip then
  rebinds `w`, E0307 while the graph lived).
- d09 GAE's output made as `Tensor::zeros([t, envs])` (E0109): the help was "bring a file's items into scope
  with `use \"path/to/file.tile\";`"; a constructor under `Tensor::`, `Tile::` or another library's module
  (`np::zeros`) now gets the built-in's spelling.
- d10 the pooling launch written `pool(..).await;` (E0223): the help was "a `Op<pool>` has no fields"; it now
  names `.sync()` and `.launch()`. (Rust's `?` after a call, and C's `c ? a : b`, were told "end the
  statement before this one with `;`": each now gets its own help, tested below.)
- d11 the drawdown's chunk maximum kept as the one-element tile `dd.max(1)` and compared in an `if` (E0203):
  the help was `where(..)` or `.min()`/`.max()` of the comparison; a one-element tile now gets `.item()` (the
  help x2's `start..end` of a tile already gave), a wider one keeps the reductions (tested below).
- d12 Lion's momentum partitioned in tiles of 128 beside the weights' 256 (E0214): the help "make the tile
  shapes agree, or pass the generics explicitly with `::<..>`" offered a turbofish, which cannot give `B` two
  values; two partitions that disagree now get the other's size.
- d13 (hfix) the GMM's responsibilities partitioned [32, 4] where a row holds 8 components (E0214 for `K`,
  4 from the tile and 8 from `mu: &Tensor<f32, [K, 4]>`): the first help, "declare this dimension of the tensor
  parameter `?`", compiled and read 4 of the 8 components; where the kernel reads the tensor whole, the help
  now gives the partition the tensor's size.
"""

from __future__ import annotations

from pathlib import Path

from test_user_programs21 import CHECKS
from userprog import wrong_suite

# file: (a phrase of the first error's help, the fix: (old, new) replacements)
FIXES: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "d01_pi_without_its_use": (
        "import it with `use std::math::PI;` at the top of the file",
        [("kernel fn estep", "use std::math::PI;\n\nkernel fn estep")]),
    "d02_replay_times_keyword": (
        "`steps.replay()` runs the recording once: for 25 runs, `for _ in 0..25 { steps.replay(); }`",
        [("steps.replay(times = 25);", "for _ in 0..25 { steps.replay(); }")]),
    "d03_div_ceil_of_the_rows": (
        "`(rows + BN - 1) / BN` is `rows` divided by a positive `BN`, rounded up",
        [("rows.div_ceil(BN)", "(rows + BN - 1) / BN")]),
    "d04_range_rev_in_a_kernel": (
        "`for r in 0..T { let i = (T - 1) - r; .. }`",
        [("    for t in (0..T).rev() {\n", "    for r in 0..T {\n        let t = (T - 1) - r;\n")]),
    "d05_sign_function": (
        "`where(c > 0.0, 1.0, where(c < 0.0, -1.0, c + 0.0))`",   # (huser29: `c + 0.0` keeps NaN, as NumPy's)
        [("sign(c)", "where(c > 0.0, 1.0, where(c < 0.0, -1.0, c + 0.0))")]),
    "d06_const_of_a_math_call": (
        "write its value, `0.7978845` (what `sqrt(2.0 / std::math::PI)` is in `f32`)",
        [("sqrt(2.0 / std::math::PI);", "0.7978845;")]),
    "d07_nested_store_counted_by_the_data": (
        "loop over `out`'s own nested tiles: `for j in 0..out.num_tiles(1)`",
        [("for j in 0..(days + C - 1) / C {", "for j in 0..out.num_tiles(1) {")]),
    "d08_drop_a_graph": (
        "to end `steps` early (a graph, so that the tensors it captured can be moved or rebound), declare it and "
        "its uses inside a `{ .. }` block",
        [("    let steps = graph {", "    {\n    let steps = graph {"), ("    drop(steps);\n", "    }\n")]),
    "d09_tensor_zeros_constructor": (
        "Tile's built-ins take no `Tensor::` prefix and their element type as a turbofish: `Tensor::zeros(..)` is "
        "`zeros::<f32>(..)`", [("Tensor::zeros(", "zeros::<f32>(")]),
    "d10_await_the_launch": (
        "`.sync()` runs an operation and waits for it", [(".await;", ".sync();")]),
    "d11_one_element_tile_as_a_condition": (
        "`m` is a tile of one element: its value is `m.item()`",
        [("let m = dd.max(1);", "let m = dd.max(1).item();")]),
    "d12_two_partitions_disagree": (
        "make the tile shapes agree: the other partition gives `B` = 256, so use 256 here too",
        [("m.partition([128])", "m.partition([256])")]),
    "d13_components_split_by_the_tile": (
        "give the partition a tile of 8 where it gives `K` = 4",
        [("resp.partition([32, 4])", "resp.partition([32, 8])")]),
}

FIXED = {"d01_pi_without_its_use": CHECKS["z05_gmm_estep_mstep"],
         "d02_replay_times_keyword": CHECKS["z02_lion_graph_steps"],
         "d03_div_ceil_of_the_rows": CHECKS["z05_gmm_estep_mstep"],
         "d04_range_rev_in_a_kernel": CHECKS["z03_gae_reverse_scan"],
         "d05_sign_function": CHECKS["z02_lion_graph_steps"],
         "d06_const_of_a_math_call": CHECKS["z10_gelu_backward_shapes"],
         "d07_nested_store_counted_by_the_data": CHECKS["z15_max_drawdown_chunks"],
         "d08_drop_a_graph": CHECKS["z02_lion_graph_steps"],
         "d09_tensor_zeros_constructor": CHECKS["z03_gae_reverse_scan"],
         "d10_await_the_launch": CHECKS["z16_ragged_mean_pool_early_exit"],
         "d11_one_element_tile_as_a_condition": CHECKS["z15_max_drawdown_chunks"],
         "d12_two_partitions_disagree": CHECKS["z02_lion_graph_steps"],
         "d13_components_split_by_the_tile": CHECKS["z05_gmm_estep_mstep"]}

(test_every_mistake_has_a_fix, test_the_help_leads_to_a_working_program,
 test_the_editor_shows_the_same_first_error) = wrong_suite("d*.tile", FIXES, FIXED)


def _errors(src: str) -> list:
    from tilelang import driver

    return [d for d in driver.check(src, name="m.tile").diagnostics if d.severity.value == "error"]


def test_a_constant_may_name_a_std_constant_by_its_path(tmp_path: Path) -> None:
    """d06's first refusal: `const C: f32 = std::math::PI;` was "depends on itself", and `std::math::PI` by its
    path was an `f32` where the imported `PI` is untyped (`let a: f64 = std::math::PI;` was E0203). Both now
    give f64's pi where an f64 is wanted, in kernels (checked in the simulator) as on the host."""
    import numpy as np

    from userprog import run_program, simulated_program

    prog = tmp_path / "p.tile"
    prog.write_text("""const HALF_PI = std::math::PI / 2.0;
const TAU: f32 = 2.0 * std::math::PI;
const A: f32 = B * 2.0;
const B: f32 = 1.0 + std::math::E;

kernel fn k<const N: i32>(a: &mut Tensor<f64, [N]>, b: &mut Tensor<f16, [N]>, c: &mut Tensor<f32, [N]>) {
    a.store(arange::<f64>(N) * std::math::PI + HALF_PI);
    b.store(arange::<f16>(N) * std::math::PI);
    c.store(arange::<f32>(N) * TAU + A);
}

fn main() {
    let mut a = zeros::<f64>([4]);
    let mut b = zeros::<f16>([4]);
    let mut c = zeros::<f32>([4]);
    k(a.partition([4]), b.partition([4]), c.partition([4])).sync();
    let h: f64 = std::math::PI;
    print(h, HALF_PI);
}
""")
    got, out = run_program(prog)
    assert out == f"{np.pi!r} 1.5707964\n"   # an untyped constant prints as an f32, as a float literal does
    np.testing.assert_array_equal(got["a"], np.arange(4) * np.pi + np.pi / 2)
    np.testing.assert_array_equal(got["b"], (np.arange(4, dtype=np.float16) * np.float16(np.pi)))
    tau, a = np.float32(2 * np.float32(np.pi)), np.float32(2 * np.float32(1 + np.float32(np.e)))
    np.testing.assert_array_equal(got["c"], np.arange(4, dtype=np.float32) * tau + a)
    sim = simulated_program(prog)
    for k in "abc":
        np.testing.assert_array_equal(sim[k], got[k], err_msg=k)


def test_a_real_cycle_through_a_std_path_is_still_one() -> None:
    """The fix skips only the constant being evaluated: a cycle that passes through a std path is still
    reported, once."""
    errs = _errors("const A: f32 = B * 2.0;\nconst B: f32 = A + std::math::PI;\nfn main() {\n    print(A);\n}\n")
    assert [d.code for d in errs] == ["E0209"] and "depends on itself" in errs[0].message


def test_the_math_help_covers_methods_and_untyped_constants() -> None:
    """d06's help for a method call (`(2.0 / PI).sqrt()`), an untyped constant (f64's value), two-argument
    built-ins; a call of a user function or an integer constant keeps the general help."""
    cases = {
        "use std::math::PI;\nconst C: f32 = (2.0 / PI).sqrt();": "`0.7978845`",
        "const C = sqrt(2.0);": "`1.4142135623730951` (what `sqrt(2.0)` is in `f64`)",
        "const C: f32 = pow(2.0, 0.5) + atan2(1.0, 1.0);": "`2.1996117`",
        "const C: i32 = abs(-3);": "use literals, other constants and operators on them",
        "fn f(x: f32) -> f32 {\n    x\n}\nconst C: f32 = sqrt(f(2.0));": "use literals, other constants",
    }
    for src, want in cases.items():
        errs = _errors(src + "\nfn main() {\n    print(C);\n}\n")
        assert [d.code for d in errs] == ["E0209"], (src, [d.message for d in errs])
        assert want in errs[0].help[0], (src, errs[0].help)


def test_the_math_help_gives_the_value_a_kernel_computes() -> None:
    """The help's value of `pow`, `atan2` and `erf` in f32 is the one a kernel (and a host `let`) computes: f32
    pow is f64 pow rounded once on both engines, where NumPy's own f32 `power` (which the help used) is a unit in
    the last place off (`9.902561`: the programs print `9.902562`), as is `arcsin` beside the kernels' atan2
    formula (`0.77539754` for `0.7753975`); f32 atan2 is `interp/atan32.py`'s algorithm on both engines since
    hnum (`-2.4269552`; f64's rounded once, which hrev28 matched, is `-2.426955`); erf, bit-exact on both engines
    since herf, got the general help. Each value, written as the literal, is the kernel's value of the expression
    (hrev28)."""
    import io
    import re

    from tilelang import run

    for expr, want in (("pow(2.623225212097168, 2.3774187564849854)", "9.902562"),
                       ("atan2(-2.135042428970337, -2.4607901573181152)", "-2.4269552"),
                       ("asin(0.7)", "0.7753975"), ("acos(0.25) + atan(3.0)", None), ("erf(0.3)", None)):
        src = (f"const R: f32 = {expr};\n\nkernel fn k(z: &mut Tensor<f32, [4]>) {{\n"
               f"    z.store(full::<f32>([4], R) - ({expr}));\n}}\n\nfn main() {{\n    let mut z = ones::<f32>([4]);\n"
               f"    k(z.partition([4])).sync();\n    print(z[0] == 0.0);\n}}\n")
        errs = _errors(src)
        assert [d.code for d in errs] == ["E0209"], errs
        got = re.search(r"write its value, `([^`]+)` \(what `[^`]+` is in `f32`\)", errs[0].help[0])
        assert got is not None, errs[0].help
        assert want is None or got.group(1) == want, (expr, errs[0].help)
        out = io.StringIO()
        run.execute(src.replace(f"const R: f32 = {expr};", f"const R: f32 = {got.group(1)};"), "cpu", out=out)
        assert out.getvalue() == "true\n", (expr, got.group(1), out.getvalue())


def test_the_replay_count_gets_the_loop_by_position_too() -> None:
    """d02's second step, `g.replay(25)`, gets the same loop; `replay()` of a graph runs."""
    src = ("kernel fn one<const B: i32>(z: &mut Tensor<f32, [B]>) {\n    z.store(z.load() + 1.0);\n}\n"
           "fn main() {\n    let mut z = zeros::<f32>([4]);\n    let g = graph {\n        one(z.partition([4]));\n"
           "    };\n    g.replay(3);\n}\n")
    errs = _errors(src)
    assert [d.code for d in errs] == ["E0105"]
    assert errs[0].help == ("`g.replay()` runs the recording once: for 3 runs, `for _ in 0..3 { g.replay(); }`",)


def test_rust_integer_rounding_methods_on_tiles_and_scalars() -> None:
    """d03's mechanism on a tile and an untyped host scalar, and `next_multiple_of`."""
    src = ("kernel fn k<const B: i32>(z: &mut Tensor<i32, [B]>) {\n    let t = arange::<i32>(B);\n"
           "    z.store(t.div_ceil(4));\n}\nfn main() {\n    let n = 10;\n    print(n.next_multiple_of(4));\n}\n")
    errs = _errors(src)
    assert [d.code for d in errs] == ["E0103", "E0103"]
    assert errs[0].help[0].startswith("`(t + 4 - 1) / 4` is `t` divided by a positive `4`, rounded up")
    assert errs[1].help[0].startswith("`(n + 4 - 1) / 4 * 4` rounds `n` up to a multiple of a positive `4`")


def test_a_graph_in_a_block_frees_its_tensors_after_it() -> None:
    """d08's fix is needed: without the block the clip's rebinding of `w` is E0307 (the graph lives to the end
    of `main`), and with it the same statement checks clean."""
    src = (Path(__file__).parent / "wrong" / "d08_drop_a_graph.tile").read_text(encoding="utf-8")
    errs = _errors(src.replace("    drop(steps);\n", ""))
    assert [d.code for d in errs] == ["E0307"] and "while graph `steps` captures it" in errs[0].message
    assert not _errors(src.replace("    let steps = graph {", "    {\n    let steps = graph {")
                       .replace("    drop(steps);\n", "    }\n"))


def test_rust_question_mark_and_c_ternary_get_their_own_help() -> None:
    """d10's neighbours: `x.sum()?` (Rust's error propagation) and `x ? 1 : 2` (C's conditional) were E0001
    with "end the statement before this one with `;`", which leads nowhere."""
    src = "fn main() {\n    let x = zeros::<f32>([4]);\n    let y = x.sum()?;\n}\n"
    errs = _errors(src)
    assert [d.code for d in errs] == ["E0001"] and errs[0].help[0].startswith("Tile has no `?` operator")
    assert not _errors(src.replace("?;", ";"))
    errs = _errors("fn main() {\n    let c = true;\n    let y = c ? 1 : 2;\n}\n")
    assert [d.code for d in errs] == ["E0001"]
    assert errs[0].help[0].startswith("C's `c ? a : b` is `if c { a } else { b }`")
    assert not _errors("fn main() {\n    let c = true;\n    let y = if c { 1 } else { 2 };\n    print(y);\n}\n")


def test_constructors_under_a_type_or_module_prefix() -> None:
    """d09's mechanism: a built-in under `Tile::` in a kernel, `np::` on the host, a function without a type
    generic, and a name that is no built-in (`Tensor::new`)."""
    cases = {
        "let t = Tile::ones([4]);": "`Tile::ones(..)` is `ones::<f32>(..)`",
        "let t = np::arange(4);": "`np::arange(..)` is `arange::<f32>(..)`",
        "let t = math::sqrt(2.0);": "Tile's built-ins take no `math::` prefix: `math::sqrt(..)` is `sqrt(..)`",
        "let t = Tensor::new([4]);": "`Tensor` is not a module: Tile makes tensors",
    }
    for stmt, want in cases.items():
        errs = _errors(f"fn main() {{\n    {stmt}\n}}\n")
        assert [d.code for d in errs] == ["E0109"] and want in errs[0].help[0], (stmt, errs[0].help)


def test_a_condition_of_a_wider_tile_keeps_the_reductions() -> None:
    """d11's rule only takes one-element tiles: z13's `while hi - lo > 1e-6 && ..` over [B] tiles keeps the
    `where` / `.min()` / `.max()` help, and a comparison of two one-element tiles names the whole condition."""
    src = (Path(__file__).parent / "programs" / "z13_safeguarded_newton_cubic.tile").read_text(encoding="utf-8")
    errs = _errors(src.replace("while gap > 1e-6 && n < 60 {", "while hi - lo > 1e-6 && n < 60 {"))
    assert [d.code for d in errs] == ["E0203"] and "`.max()` when any is" in errs[0].help[0]
    k = ("kernel fn k(z: &mut Tensor<f32, [1]>, x: &Tensor<f32, [?]>) {\n    let a = x.partition([1]).load([0]);\n"
         "    let b = x.partition([1]).load([1]);\n    if a > b {\n        z.store(a);\n    }\n}\nfn main() {}\n")
    errs = _errors(k)
    assert [d.code for d in errs] == ["E0203"]
    assert errs[0].help == ("a tile of one element: its value is `(a > b).item()`",)


def test_a_step_of_one_is_the_range_itself() -> None:
    """`(0..T).step_by(1)` was told "count the steps, `for k in 0..(T + 1 - 1) / 1 { let i = k * 1; .. }`": a step
    of 1 is the range as written; other steps keep the counted loop."""
    src = "fn main() {\n    for i in (1..=5).step_by(STEP) {\n        print(i);\n    }\n}\n"
    errs = _errors(src.replace("STEP", "1"))
    assert [d.code for d in errs] == ["E0103"]
    assert errs[0].help == ("a range counts up by 1 already: `1..=5` is `(1..=5).step_by(1)`",)
    assert not _errors(src.replace("(1..=5).step_by(STEP)", "1..=5"))
    errs = _errors(src.replace("STEP", "2"))
    assert errs[0].help[0].startswith("a range counts up by 1: count the steps")


def test_a_path_to_a_constant_is_not_a_local_of_its_name(tmp_path: Path) -> None:
    """On the host, `std::math::PI` after `let PI = 3.0;` was 3.0 (the path was looked up by its last segment in
    the local scope), where a kernel read pi: a path names a module's item, never a local."""
    from userprog import run_program

    prog = tmp_path / "p.tile"
    prog.write_text("fn main() {\n    let PI = 3.0;\n    let E = 2.0;\n    let cdiv = 1;\n"
                    "    print(PI, std::math::PI, E, std::math::E * 1.0, cdiv, std::math::cdiv(7, 2));\n}\n")
    _, out = run_program(prog)
    assert out == "3.0 3.1415927 2.0 2.7182817 1 4\n", out


def test_a_dimension_may_be_a_module_constant_by_its_path(tmp_path: Path) -> None:
    """`Tensor<f32, [lib::N]>` (a module constant of a `use`d file, by its path) was E0209 "array dimension is
    not a compile-time constant", help "use a literal, a `const`, .." (it is one); `[u8::MAX]` alike. Both are
    constants now, on the interpreter and in the simulator; a float constant's path is still refused."""
    import numpy as np

    from userprog import run_program, simulated_program

    (tmp_path / "lib.tile").write_text("const N: i32 = 8;\nconst HALF = 0.5;\n")
    prog = tmp_path / "p.tile"
    prog.write_text("""kernel fn k(z: &mut Tensor<f32, [lib::N]>, w: &mut Tensor<u8, [u8::MAX]>, x: &Tensor<f32, [?]>) {
    let t: Tile<f32, [lib::N]> = x.load_like(z);
    z.store(t * lib::HALF + zeros::<f32>([lib::N]));
    w.store(zeros::<u8>([u8::MAX]) + 1u8);
}

fn main() {
    let N = 3;
    let x = arange::<f32>(16);
    let mut z = zeros::<f32>([16]);
    let mut w = zeros::<u8>([510]);
    k(z.partition([lib::N]), w.partition([255]), &x).sync();
    print(N, lib::N * 2);
}
""")
    got, out = run_program(prog)
    assert out == "3 16\n"
    np.testing.assert_array_equal(got["z"], np.arange(16, dtype=np.float32) * 0.5)
    np.testing.assert_array_equal(got["w"], np.ones(510, np.uint8))
    sim = simulated_program(prog)
    for k in "zw":
        np.testing.assert_array_equal(sim[k], got[k], err_msg=k)
    errs = _errors("kernel fn k(z: &mut Tensor<f32, [std::math::PI]>) {\n    z.store(zeros::<f32>([4]));\n}\n"
                   "fn main() {}\n")
    assert [d.code for d in errs] == ["E0209"]


def test_a_path_as_a_generic_argument_gets_its_braces() -> None:
    """`k::<lib::N>(..)` is a parse error, as in Rust; its help was "write one of `,` or an operator here". It now
    gives Rust's braces, `k::<{ lib::N }>`, which parse and check."""
    src = ("kernel fn k<const B: i32>(z: &mut Tensor<i32, [B]>) {\n    z.store(arange::<i32>(B));\n}\n"
           "fn main() {\n    let mut z = zeros::<i32>([8]);\n    k::<u8::BITS>(z.partition([8])).sync();\n}\n")
    errs = _errors(src)
    assert [d.code for d in errs] == ["E0002"]
    assert errs[0].help == ("a generic argument that is a path goes in braces, as in Rust: `{ u8::BITS }`",)
    assert not _errors(src.replace("k::<u8::BITS>", "k::<{ u8::BITS }>"))
