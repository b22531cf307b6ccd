"""Round 27 of the hostile review (hrev27, 2026-12-07): the user's mistakes with the newest forms, each with the
help applied by the letter and the fixed program's output checked against NumPy.

- m01 a counter chosen by an `if` whose arm names it through a `let`, read on the host while the launch adds
  into it (E0305). Before the round the checker took the `if` for its other arm's tensor alone and accepted
  the read: a race with the launch's atomics.
- m02 an atomic maximum in slot `b` and an atomic add in slot `b + 1` of one tensor: the add of block `b` meets
  the maximum of block `b + 1` (E0418); a tensor for each kind.
- m03 `if last_block(1) { .. } else { .. }` (E0409): the region has no `else`.
- m04 the group's output partitioned like the blocks' scratch, four tiles a row (E0500): one tile a group.
- m05 a kernel reading, through an `if` over a tuple's fields, the counter its own atomics add to (E0417;
  accepted before the round, as m01's `if`).
"""

from __future__ import annotations

import numpy as np

from userprog import wrong_suite

Tensors = dict[str, np.ndarray]

FIXES: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "m01_counter_chosen_by_if_read_in_flight": (
        "call `h.wait()` before this use of `pos`",
        [("    print(pos.item());\n    h.wait();\n", "    h.wait();\n    print(pos.item());\n")]),
    "m02_two_kinds_on_neighbouring_slots": (
        "use a separate tensor for each kind (another `&` parameter)",
        [("s: &Tensor<f32, [?]>)", "s: &Tensor<f32, [?]>, m: &Tensor<f32, [?]>)"),
         ("atomic_max(s, [b], t.max(0));", "atomic_max(m, [b], t.max(0));"),
         ("atomic_add(s, [b + 1], t.sum(0));", "atomic_add(s, [b], t.sum(0));"),
         ("    let s = zeros::<f32>([3]);\n", "    let s = zeros::<f32>([2]);\n    let m = zeros::<f32>([2]);\n"),
         ("&x, &s)", "&x, &s, &m)"), ("print(s);", "print(s, m);")]),
    "m03_last_block_with_an_else": (
        "write one `if last_block(axis) { .. }` as the kernel's last statement",
        [("    } else {\n        out.store(zeros::<f32>([1, 1]));\n    }\n", "    }\n")]),
    "m04_group_output_tiled_like_the_scratch": (
        "partition `out` into one tile along axis 1 per group",
        [("let mut out = zeros::<f32>([3, 4]);", "let mut out = zeros::<f32>([3, 1]);")]),
    "m05_reads_its_counter_through_a_tuple": (
        "name the tensor it reads directly",
        [("const FIRST: i32 = 1;\n", ""), ("    let pair = (tickets, base);\n", ""),
         ("(if FIRST > 0 { pair.0 } else { base })", "base")]),
}


def _m01(t: Tensors, out: str) -> None:
    x = np.arange(16, dtype=np.float32) - 5.5
    pos = int((x > 0).sum())
    assert out.split() == [str(pos), str(16 - pos), "4"], out
    assert t["pos"].tolist() == [pos] and t["rest"].tolist() == [16 - pos]


def _m02(t: Tensors, out: str) -> None:
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    np.testing.assert_array_equal(t["s"], x.sum(1))
    np.testing.assert_array_equal(t["m"], x.max(1))


def _m03(t: Tensors, out: str) -> None:
    x = np.arange(48, dtype=np.float32).reshape(3, 16)
    np.testing.assert_array_equal(t["out"], x.sum(1, keepdims=True))


def _m04(t: Tensors, out: str) -> None:
    x = np.arange(48, dtype=np.float32).reshape(3, 16)
    np.testing.assert_array_equal(t["out"], x.max(1, keepdims=True))


def _m05(t: Tensors, out: str) -> None:
    np.testing.assert_array_equal(t["z"], np.zeros(4, np.float32))
    assert t["tickets"].tolist() == [4.0]


CHECKS = {"m01_counter_chosen_by_if_read_in_flight": _m01, "m02_two_kinds_on_neighbouring_slots": _m02,
          "m03_last_block_with_an_else": _m03, "m04_group_output_tiled_like_the_scratch": _m04,
          "m05_reads_its_counter_through_a_tuple": _m05}

(test_every_mistake_has_a_fix, test_the_help_leads_to_a_working_program,
 test_the_editor_shows_the_same_first_error) = wrong_suite("m*.tile", FIXES, CHECKS)


def test_two_launches_of_one_kernel_say_its_unsafe_write_once() -> None:
    """E0309 of two launches of one kernel whose atomics write a `&` parameter said the same note twice (one for
    each launch); the diagnostics of round 27's review."""
    from tilelang import driver

    src = """kernel fn k<const I: i32>(seen: &mut Tensor<f32, [1]>, t: &Tensor<f32, [?]>) {
    seen.store(ones::<f32>([1]));
    unsafe {
        atomic_add(t, [I], 5.0);
        atomic_max(t, [I + 1], 3.0);
    }
}
fn main() {
    let mut a = zeros::<f32>([4]);
    let mut b = zeros::<f32>([4]);
    let t = zeros::<f32>([8]);
    let h = k::<0>(a.partition([1]), &t).launch();
    let h2 = k::<1>(b.partition([1]), &t).launch();
    h.wait();
    h2.wait();
}
"""
    errs = [d for d in driver.check(src, name="m.tile").diagnostics if d.severity.value == "error"]
    assert [d.code for d in errs] == ["E0309"], [(d.code, d.message) for d in errs]
    notes = [n for n in errs[0].notes if "in `unsafe` code" in n]
    assert notes == ["`k` writes its `&` parameter `t` in `unsafe` code (an atomic or `store_unchecked`), so a launch "
                     "of it writes that tensor"], errs[0].notes
