"""Round 27 of the user's mistakes (huser28, 2026-12-07): a systems / data-engineering user's slips in integer
and bit-level kernels, each with the help applied by the letter and the fixed program checked against NumPy
(round 27's checks, tests/user/test_user_programs27.py).

- r01 w13's byte swap of big-endian u16 frames written as Rust's `w.swap_bytes()` (E0103): the help was a
  `u32` formula, `(x >> 24) | ((x >> 8) & 0xFF00u32) | ..`, which mixes `u16` with `u32` and shifts a 16-bit
  value by 24 (E0201 once applied). It is now written for the receiver's type and name.

- r02 w05's records summed byte by byte into a `u32`, `let s: Tile<u32, [B]> = bytes.sum(1);` of the u8 tile
  (E0203): the help was `bytes.sum(1) as u32`, which checks and sums in `u8`, wrapping (a record of 24 bytes
  near 128 summed to ~3000 mod 256). It is now E0201's help for the same mistake in an operation, the cast on
  the elements, `(bytes as u32).sum(1)`, also for a function's argument and a host `let`.

- r03 w21's leading-zeros search written over Rust's array of halves, `for half in [32, 16, 8, 4, 2, 1]`
  (E0203): the help was "write `for i in a..b`". A list of integer literals now gets the range over its positions
  with each value computed from the position where the list halves, doubles or steps evenly
  (`for i in 0..6 { let half = 32 >> i; .. }`), else the range and the values left to the body.

- r04 w24's cluster exchange summed in its own `let`, `let all = cluster_gather(mine).sum(0);` (E0415): the
  label said "here not every block of the cluster is sure to reach it once" (it is a statement of the kernel's
  body, reached once) and the help spoke of loops and branches. A call inside a larger initializer of a
  top-level `let` is now told so, with the split: `let parts = cluster_gather(mine);`, then `all` from `parts`.

Also the interpreter's fix w04's scatter found (an `unsafe` store of a block still in its loop kept over a
masked-off block's old value); Rust's integer bit methods (`count_ones`, `swap_bytes`, `reverse_bits`, `leading_zeros`, ..: r01's kind)
told in the receiver's own width, every help applied on every integer type against NumPy; NumPy's `searchsorted`, `digitize`, `diff` and `unique` and PyTorch's `bucketize` (they were "define it"),
and `nonzero` of an integer tensor (told `x != 0.0`, E0201), each with a help that, applied, runs.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_user_programs27 import CHECKS
from userprog import DIR, first_error, run_program, wrong_suite

import tilelang
from tilelang import driver
from tilelang import partition as P

# file: (a phrase of the first error's help, the fix: (old, new) replacements)
FIXES: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "r01_swap_bytes_of_a_u16_frame": (
        "Tile has no byte-swap built-in: for a `u16`: `let v = w;` then `(v << 8u16) | (v >> 8u16)`",
        [("let v = w.swap_bytes();", "let v = w;\n    let v = (v << 8u16) | (v >> 8u16);")]),
}

FIXES["r02_record_byte_sums_typed_u32"] = (
    "cast the elements before the sum: a sum of `u8` values is taken in `u8`, wrapping past its range: "
    "`(bytes as u32).sum(1)`",
    [("let s: Tile<u32, [B]> = bytes.sum(1);", "let s: Tile<u32, [B]> = (bytes as u32).sum(1);")])


def _r02(t: dict[str, np.ndarray], out: str) -> None:
    k = np.arange(40 * 24, dtype=np.int32)
    with np.errstate(over="ignore"):
        recs = ((k * np.int32(2654435761 - 2**32) >> 13) & 255).astype(np.uint8).reshape(40, 24)
    np.testing.assert_array_equal(t["sums"], recs.astype(np.uint32).sum(1))
    assert out == "true\n"


FIXES["r03_for_over_a_list_of_halves"] = (
    "a `for` runs over a range, not a list: `for i in 0..6 { let half = 32 >> i; .. }`",
    [("    for half in [32, 16, 8, 4, 2, 1] {\n", "    for i in 0..6 {\n        let half = 32 >> i;\n")])

FIXES["r04_cluster_gather_summed_in_its_let"] = (
    "give it a `let` of its own, `let parts = cluster_gather(mine);`, and compute `all` from `parts` in the next "
    "statement",
    [("    let all = cluster_gather(mine).sum(0);", "    let parts = cluster_gather(mine);\n    let all = parts.sum(0);")])

FIXED = {"r04_cluster_gather_summed_in_its_let": CHECKS["w24_cluster_byte_histogram"],
         "r01_swap_bytes_of_a_u16_frame": CHECKS["w13_u16_raw_sensor_frames"], "r02_record_byte_sums_typed_u32": _r02,
         "r03_for_over_a_list_of_halves": CHECKS["w21_hyperloglog_registers"]}

(test_every_mistake_has_a_fix, test_the_help_leads_to_a_working_program,
 test_the_editor_shows_the_same_first_error) = wrong_suite("r*.tile", FIXES, FIXED)


@pytest.mark.parametrize(("call", "want"), [
    ("searchsorted(&x, &q)", lambda x, q: np.searchsorted(x, q)),
    ("digitize(&q, &x)", lambda x, q: np.digitize(q, x)),
    ("bucketize(&q, &x)", lambda x, q: np.searchsorted(x, q, side="left")),   # torch.bucketize, right=False
    ("diff(&x)", lambda x, q: np.diff(x)),
    ("x.nonzero()", lambda x, q: np.count_nonzero(x)),
])
def test_a_data_engineer_s_numpy_gets_a_spelling_that_runs(call: str, want: Any, tmp_path: Path) -> None:
    """w07/w08/w15's host code written first with NumPy's names: `searchsorted`, `digitize`, torch's
    `bucketize` and `diff` were "define it (`fn searchsorted(..) { .. }`)", and `x.nonzero()` of an `i32`
    tensor was told `x != 0.0`, E0201 for an integer tensor (`0` compares with both). Each help, applied with
    the lengths written in, checks clean and gives NumPy's answer (of `nonzero`, the count the help ends with)."""
    src = ("fn main() {\n    let x = arange::<i32>(9) * 3 - 5;\n    let q = (arange::<i32>(7) * 5 - 9) % 13;\n"
           "    let y = CALL;\n    print(y, q.shape());\n}\n")
    f = tmp_path / "s.tile"
    f.write_text(src.replace("CALL", call), encoding="utf-8")
    d = first_error(f)
    spelt = re.findall(r"`([^`]*)`", d.help[0])
    code = spelt[-1] if call == "x.nonzero()" else spelt[0]
    code = re.sub(r"\bN\b", "9", re.sub(r"\bM\b", "7", code.replace("n - 1", "8").replace("[1..n]", "[1..9]")))
    code = code.replace(".sum(k)", ".sum()")
    f.write_text(src.replace("CALL", code), encoding="utf-8")
    assert not driver.check(f, deny_warnings=True).diagnostics, (call, code)
    tensors, out = run_program(f)
    x, q = np.arange(9) * 3 - 5, np.fmod(np.arange(7) * 5 - 9, 13)   # (Tile's `%` has the dividend's sign)
    got = tensors.get("y")
    np.testing.assert_array_equal(got if got is not None else int(out.split()[0]), want(x, q))


def test_a_suffixed_hash_constant_past_i64_is_told_its_bit_pattern(tmp_path: Path) -> None:
    """A hash key mixed in signed arithmetic, `k * 0x9E3779B97F4A7C15i64` (w06's golden-ratio constant with the
    key's own type as its suffix): E0222 said "use a value in -9223372036854775808..=9223372036854775807, or a
    wider type", and no integer type is wider than `i64`. A suffixed hex, octal or binary literal now gets the
    bit pattern's cast, as the unsuffixed one did (round 22), and a 64-bit type's help no wider type."""
    src = ("fn main() {\n    let k = arange::<i64>(4) + 1;\n    let h = k * CONST;\n    print(h);\n}\n")
    f = tmp_path / "h.tile"
    f.write_text(src.replace("CONST", "0x9E3779B97F4A7C15i64"), encoding="utf-8")
    d = first_error(f)
    assert d.code == "E0222" and d.help == (
        "`0x9E3779B97F4A7C15` is a bit pattern: `0x9E3779B97F4A7C15u64 as i64` keeps its bits "
        "(-7046029254386353131), or compute in `u64`",)
    f.write_text(src.replace("CONST", "(0x9E3779B97F4A7C15u64 as i64)"), encoding="utf-8")
    tensors, _ = run_program(f)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(tensors["h"], (np.arange(4) + 1) * np.int64(-7046029254386353131))
    for lit, want in (("9223372036854775808i64", "(no integer type is wider than `i64`)"),
                      ("70000i16", "or a wider type (`i32`)")):
        f.write_text(f"fn main() {{\n    let a = {lit};\n    print(a);\n}}\n", encoding="utf-8")
        d = first_error(f)
        assert d.code == "E0222" and d.help[0].endswith(want), d.help


def test_a_narrow_sum_given_where_a_wider_integer_is_declared_is_cast_inside(tmp_path: Path) -> None:
    """r02's neighbours: a `u8` sum returned as a function's `u32`, bound by a host `let h: i64`, and passed to a
    `u32` parameter were told `x.sum() as i64`, a sum taken in `u8`; each now gets the cast on the elements."""
    f = tmp_path / "s.tile"
    f.write_text("fn count<const B: i32>(t: Tile<u8, [B]>) -> u32 {\n    t.sum(0)\n}\n"
                 "fn widen(s: u32) -> u32 {\n    s\n}\n"
                 "kernel fn total<const B: i32>(z: &mut Tensor<u32, [1]>, x: &Tensor<u8, [?]>) {\n"
                 "    z.store(full::<u32>([1], count::<B>(x.partition([B]).load([0]))));\n}\n"
                 "fn main() {\n    let x = full::<u8>([256], 200u8);\n    let mut z = zeros::<u32>([1]);\n"
                 "    total::<256>(z.partition([1]), &x).sync();\n    let h: i64 = x.sum();\n"
                 "    print(z, h, widen(x.sum()));\n}\n", encoding="utf-8")
    errs = [d for d in driver.check(f).diagnostics if d.severity.value == "error"]
    assert [d.help[0].rsplit(": ", 1)[1] for d in errs] == ["`(t as u32).sum(0)`", "`(x as i64).sum()`",
                                                            "`(x as u32).sum()`"], [d.help for d in errs]
    text = f.read_text(encoding="utf-8")
    for old, new in (("    t.sum(0)\n", "    (t as u32).sum(0)\n"), ("let h: i64 = x.sum();", "let h: i64 = (x as i64).sum();"),
                     ("widen(x.sum())", "widen((x as u32).sum())")):
        text = text.replace(old, new)
    f.write_text(text, encoding="utf-8")
    _, out = run_program(f)
    assert out == "Tensor<u32, [1]> [51200] 51200 51200\n"


def test_a_narrow_sum_cast_wider_by_hand_is_a_warning_whose_help_runs(tmp_path: Path) -> None:
    """r02 with the old help applied, `bytes.sum(1) as u32`: it checked clean and summed in `u8` (a record of 24
    bytes near 128 gave its sum mod 256). W0013 now says so, and its help, applied, checks clean under
    `-D warnings` and gives NumPy's sums."""
    src = (DIR.parent / "wrong" / "r02_record_byte_sums_typed_u32.tile").read_text(encoding="utf-8")
    f = tmp_path / "r02.tile"
    f.write_text(src.replace("let s: Tile<u32, [B]> = bytes.sum(1);", "let s = bytes.sum(1) as u32;"), encoding="utf-8")
    ds = driver.check(f).diagnostics
    assert [d.code for d in ds] == ["W0013"] and ds[0].help[0].endswith("`(bytes as u32).sum(1)`"), ds
    tensors, _ = run_program(f)
    assert tensors["sums"].max() <= 255                                  # what it computed: wrapped sums
    f.write_text(src.replace("let s: Tile<u32, [B]> = bytes.sum(1);", "let s = (bytes as u32).sum(1);"),
                 encoding="utf-8")
    assert not driver.check(f, deny_warnings=True).diagnostics
    _r02(*run_program(f))


@pytest.mark.parametrize("values", [[32, 16, 8, 4, 2, 1], [1, 2, 4, 8], [0, 3, 6, 9], [5, 4, 3], [-2, -1, 0],
                                    [3, 1, 4]])
def test_a_for_over_a_list_of_numbers_gets_a_range_that_gives_them(values: list[int], tmp_path: Path) -> None:
    """r03's help for each kind of list: applied, the range gives the list's values in order (a list of no
    pattern leaves them to the body)."""
    src = "fn main() {\n    let mut s = 0;\n    for v in LIST {\n        s = s * 7 + v;\n    }\n    print(s);\n}\n"
    f = tmp_path / "l.tile"
    f.write_text(src.replace("LIST", str(values)), encoding="utf-8")
    d = first_error(f)
    loop = re.search(r"`(for i in 0\.\.\d+) \{ (let v = [^;]*;)? ?\.\. \}`", d.help[0])
    assert d.code == "E0203" and loop is not None, d.help
    if loop.group(2) is None:
        assert values == [3, 1, 4] and "written once for each value" in d.help[0]
        return
    f.write_text(src.replace("for v in LIST {", f"{loop.group(1)} {{\n        {loop.group(2)}"), encoding="utf-8")
    want = 0
    for v in values:
        want = want * 7 + v
    assert run_program(f)[1] == f"{want}\n"


def test_a_record_array_is_told_to_pass_one_field() -> None:
    """A log read as a NumPy record array (`np.fromfile(f, dtype=[("ts", "<i8"), ("user", "<i4")])`) passed
    whole: E0502 "convert it to one Tile has (float32, ..)". The help now names a field to pass (a contiguous
    copy: the fields are interleaved), which, applied, runs; `datetime64` columns: test_user_programs27's w22."""
    mod = tilelang.compile("kernel fn twice<const B: i32>(z: &mut Tensor<i64, [B]>, x: &Tensor<i64, [?]>) {\n"
                           "    z.store(x.load_like(z) * 2i64);\n}\n")
    log = np.zeros(6, dtype=[("ts", "<i8"), ("user", "<i4")])
    log["ts"] = np.arange(6) * 1000
    z = np.zeros(6, np.int64)
    with pytest.raises(tilelang.CallError) as info:
        mod.twice(P(z, [4]), log)
    assert info.value.code == "E0502" and "`numpy.ascontiguousarray(x['ts'])`" in str(info.value), info.value
    mod.twice(P(z, [4]), np.ascontiguousarray(log["ts"])).sync()
    np.testing.assert_array_equal(z, np.arange(6) * 2000)


# ---- Rust's integer bit methods: the help in the receiver's own width ----

_INT_TYPES = ("u8", "u16", "u32", "u64", "i8", "i16", "i32", "i64")
_BIT_CALLS = ("count_ones()", "count_zeros()", "leading_zeros()", "trailing_zeros()", "swap_bytes()",
              "reverse_bits()", "rotate_left(3)", "rotate_right(5)")


def _bit_ref(call: str, x: np.ndarray) -> np.ndarray:
    """Rust's value of `x.call` (u32 for the counts, x's type for the others), by NumPy on the bits."""
    n = x.dtype.itemsize * 8
    u = x.view(f"u{n // 8}")
    bits = np.unpackbits(u.astype(f"<u{n // 8}").view(np.uint8).reshape(-1, n // 8), axis=1, bitorder="little")
    if call.startswith("count_"):
        c = bits.sum(1)
        return (c if call == "count_ones()" else n - c).astype(np.uint32)
    if call == "leading_zeros()":
        return np.array([n - (int(v).bit_length()) for v in u], np.uint32)
    if call == "trailing_zeros()":
        return np.array([n if v == 0 else (int(v) & -int(v)).bit_length() - 1 for v in u], np.uint32)
    if call == "swap_bytes()":
        return u.byteswap().view(x.dtype)
    if call == "reverse_bits()":
        out = np.packbits(bits[:, ::-1], axis=1, bitorder="little").view(f"<u{n // 8}").reshape(-1)
        return out.astype(u.dtype).view(x.dtype)
    k = 3 if call == "rotate_left(3)" else n - 5
    return np.array([((int(v) << k) | (int(v) >> (n - k))) & (2**n - 1) for v in u], u.dtype).view(x.dtype)


def _applied(help_text: str, call: str) -> tuple[str, str]:
    """The help's statements and its final expression, as a user pastes them in place of `t.call`."""
    import re

    lets = " ".join(p for p in re.findall(r"`([^`]*)`", help_text) if p.startswith("let "))
    then = re.search(r"then `([^`]*)`", help_text)
    if then:
        return lets, then.group(1)
    first = re.search(r"`([^`]*)`", help_text)
    assert first is not None, help_text
    return lets, "t" if "is its own byte swap" in help_text else first.group(1)


@pytest.mark.parametrize("ty", [pytest.param(t, marks=pytest.mark.heavy) if t not in ("u16", "i64") else t
                                for t in _INT_TYPES])
def test_rust_bit_methods_are_told_in_the_receiver_s_own_width(ty: str) -> None:
    """w13's byte swap written first as `v.swap_bytes()` of its u16 tile: the help was a `u32` formula,
    `(x >> 24) | ((x >> 8) & 0xFF00u32) | ..`, which mixes `u16` with `u32` (E0201) and shifts a 16-bit value by
    24; `count_ones` of a `u64` got the 32-bit SWAR count, and none used the receiver's own spelling but
    `count_ones`. Each bit method's help is now written for the receiver's type and name: applied as it is
    (its statements, then its expression), every one checks and gives Rust's value on every integer type."""
    from userprog import first_error

    rng = np.random.default_rng(27)
    dt = np.dtype(("uint" if ty[0] == "u" else "int") + ty[1:])
    info = np.iinfo(dt)
    x = np.concatenate([np.array([0, 1, 2, info.max, info.min, info.max // 3, -1 if info.min < 0 else 7], dt),
                        rng.integers(info.min, info.max, 9, dtype=dt, endpoint=True)])
    kernels = []
    for j, call in enumerate(_BIT_CALLS):
        out = "u32" if "count" in call or "zeros" in call else ty
        wrong = (f"kernel fn k{j}<const B: i32>(z: &mut Tensor<{out}, [B]>, x: &Tensor<{ty}, [?]>) {{\n"
                 f"    let t = x.load_like(z);\n    z.store(STORE);\n}}\n")
        path = Path(f"/tmp/bits_{ty}_{j}.tile")
        path.write_text(wrong.replace("STORE", f"t.{call}"), encoding="utf-8")
        d = first_error(path)
        path.unlink()
        assert d.code == "E0103" and len(d.help) == 1, (ty, call, d.help)
        lets, expr = _applied(d.help[0], call)
        assert ("u32" not in expr or ty in ("u32", "i32") or "count" in call or "zeros" in call), (ty, call, expr)
        kernels.append(wrong.replace("    z.store(STORE);", f"    {lets}\n    z.store({expr});"))
    with warnings.catch_warnings():
        warnings.simplefilter("error", tilelang.TileWarning)   # clean under `-D warnings`
        mod = tilelang.compile("".join(kernels))
    for j, call in enumerate(_BIT_CALLS):
        want = _bit_ref(call, x)
        z = np.zeros(x.size, want.dtype)
        getattr(mod, f"k{j}")[16](P(z, [16]), x).sync()
        np.testing.assert_array_equal(z, want, err_msg=f"{ty} {call}")


def test_an_unsafe_store_of_a_block_that_left_its_loop_keeps_the_others_store() -> None:
    """w04's scatter lost one key in 600: the blocks ran together (the vectorised interpreter) and, where one
    block had left its loop of `store_unchecked`s (its last tile is short), its masked-off store wrote back
    the element's old value over the one another block stored in the same step, when both aimed at one
    element (the finished block's index is whatever its padding reads). Only the blocks still in the loop
    store now, as the block-by-block mode and the GPU do."""
    mod = tilelang.compile("""
kernel fn place<const B: i32>(seen: &mut Tensor<i32, [1]>, dest: &Tensor<i32, [?]>, out: &Tensor<i32, [?]>) {
    let b = block_id(0);
    for i in 0..minimum(B, dest.shape()[0] - b * B) {
        let to = dest.partition([1]).load([b * B + i]).item();
        unsafe {
            store_unchecked(&out, [to], full::<i32>([1], b * B + i));
        }
    }
    seen.store(full::<i32>([1], b));
}
""")
    dest = np.array([4, 0, 1, 2, 3], np.int32)   # block 1 leaves after i = 0; at i = 1 its padding reads 0
    out = np.full(5, -1, np.int32)
    seen = np.zeros(2, np.int32)
    mod.place[4](P(seen, [1]), dest, out).sync()
    np.testing.assert_array_equal(out, [1, 2, 3, 4, 0])
    out[:] = -1
    with_branch = tilelang.compile("""
kernel fn place<const B: i32>(seen: &mut Tensor<i32, [1]>, dest: &Tensor<i32, [?]>, out: &Tensor<i32, [?]>) {
    let b = block_id(0);
    for i in 0..B {
        let to = dest.partition([1]).load([b * B + i]).item();
        if b * B + i < dest.shape()[0] {
            unsafe {
                store_unchecked(&out, [to], full::<i32>([1], b * B + i));
            }
        }
    }
    seen.store(full::<i32>([1], b));
}
""")
    with_branch.place[4](P(seen, [1]), dest, out).sync()
    np.testing.assert_array_equal(out, [1, 2, 3, 4, 0])
