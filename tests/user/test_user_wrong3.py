"""Round 3 of the user's mistakes (huser, 2026-12-05): the habits of a
kernel author porting from Triton (`tests/user/wrong/x*.tile`): pointer
offsets and `mask=`/`other=` on a load, `program_id`, an output declared
`&`, a whole output passed with no partition, a store at offsets, a block
of the wrong rank, a reduction along the wrong axis, an f16 accumulator of
an f32 `dot`, a neighbour's output tile, the block size as a run-time
argument, `dtype=`, `range(0, n, step)`, `dot` stored into f16, `None`
axes, `axis=`, an atomic outside `unsafe`, a reduction stored as a tile,
an index of the wrong rank, `.reshape` of a scalar, `tl.arange(0, B)`,
int64 tile offsets, two outputs written into one tensor, `x ** 2`,
`torch.empty`.

`test_user_wrong.py` checks each file's code, place, underline and help
line. Here: the help says what leads to a working program, and the program
with that fix applied passes `tilec check`; and the editor (the language
server's analysis) reports the same first error at the same place, never
an internal error, also on every prefix of the file (what it sees while the
user types).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest
from userprog import tilec

from tilelang.lsp import analysis as A

DIR = Path(__file__).parent / "wrong"

# file: (a phrase of the first error's help, the fix: (old, new) replacements)
FIXES: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "x01_pointer_offsets": ("x.partition([B]).load([i])",  # (round 17: the help now names `offs`'s tile)
                            [("x.load(offs)", "x.partition([B]).load([block_id(0)])"), ("let offs", "let _offs")]),
    "x02_load_mask": ("load_padded([i, ..], value)",
                      [("load([block_id(0)], mask = offs < n, other = 0.0)", "load_padded([block_id(0)], 0.0)"),
                       ("let offs", "let _offs"), ("n: i32", "_n: i32")]),
    "x03_program_id": ("is `block_id(axis)`", [("program_id(0)", "block_id(0)")]),
    "x04_output_not_mut": ("`z: &mut Tensor<f32, [B]>`", [("z: &Tensor<f32, [B]>", "z: &mut Tensor<f32, [B]>")]),
    "x05_whole_output": ("z.partition([1024])", [("add(&mut z, &x)", "add(z.partition([1024]), &x)")]),
    "x06_store_at_offsets": ("partition it", [("z.store(t, [block_id(0)])", "z.store(t)")]),
    "x07_block_rank": ("one tile dimension per tensor dimension", [("y.partition([8])", "y.partition([1, 8])")]),
    "x08_reduce_wrong_axis": ("`t.sum(1)`", [("t.sum(0)", "t.sum(1)")]),
    "x09_f16_accumulator": ("`zeros::<f32>([..])`, cast once when it is stored",
                            [("let mut acc = zeros::<f16>", "let mut acc = zeros::<f32>"),
                             ("c.store(acc)", "c.store(acc as f16)")]),
    "x10_read_neighbour_output": ("keep the index in `0..", [("load([block_id(0) - 1])", "load([0])")]),
    "x12_block_size_argument": ("const generic",
                                [("kernel fn k(", "kernel fn k<const BLOCK: i32>("), (", block: i32)", ")"),
                                 ("[1024]>", "[BLOCK]>"),
                                 ("[block]", "[BLOCK]"), ("k(z.partition([1024]), &x, 1024)",
                                                          "k::<1024>(z.partition([1024]), &x)")]),
    "x13_zeros_dtype": ("`zeros::<f32>([B])`", [("zeros([B], dtype = f32)", "zeros::<f32>([B])")]),  # (huser30: the call itself)
    "x14_range_step": ("counts up by 1", [("(0..64).step_by(B)", "0..64 / B"), ("load([i / B])", "load([i])")]),
    "x15_dot_into_f16": (" as f16`", [("load([0, 0])));", "load([0, 0])) as f16);")]),
    "x16_none_axis": ("`t.reshape([1, n])`", [("t[None, :] + t[:, None]", "t.reshape([1, B]) + t.reshape([B, 1])")]),
    "x17_axis_keyword": ("drop `axis =`", [("z.store(max(t, axis = 1))", "z.store(max(t, 1))")]),
    "x18_atomic_outside_unsafe": ("unsafe { ... }", [("    atomic_add(&total, [0], x.partition([B]).load([block_id(0)]).sum(0));",
                                                      "    unsafe { atomic_add(&total, [0], x.partition([B]).load([block_id(0)]).sum(0)); }")]),
    "x19_store_reduction": ("full::<f32>([1], ", [("z.store(x.partition([B]).load([block_id(0)]).sum(0))",
                                                   "z.store(full::<f32>([1], x.partition([B]).load([block_id(0)]).sum(0)))")]),
    "x20_index_rank": ("2 indices", [("load([block_id(0)])", "load([block_id(0), 0])")]),
    "x21_reshape_scalar": ("full::<f32>([1], value)",
                           [("p.load_padded([block_id(0)], f32::NEG_INFINITY).max(0).reshape([1])",
                             "full::<f32>([1], p.load_padded([block_id(0)], f32::NEG_INFINITY).max(0))")]),
    "x22_arange_start_end": ("is `arange::<i32>(B)`", [("arange::<i32>(0, B)", "arange::<i32>(B)")]),
    "x23_int64_offsets": ("`tile as i32`", [("load([tile])", "load([tile as i32])")]),
    "x24_two_outputs_one_tensor": ("a tensor of its own", [("let mut out = zeros::<f32>([8]);",
                                                            "let mut out = zeros::<f32>([8]); let mut out2 = zeros::<f32>([8]);"),
                                                           ("out.partition([4]), &x)", "out2.partition([4]), &x)")]),
    "x25_power_operator": ("`x.pow(y)`", [("x.load_like(z) ** 2.0", "x.load_like(z).pow(2.0)")]),
    "x26_torch_empty": ("`zeros::<f32>([..])`", [("empty::<f32>([8])", "zeros::<f32>([8])")]),
}


@functools.cache  # both tests of a file read its first error: one check a file
def _check_json(path: Path) -> str:
    """What `tilec check --error-format json` writes to stderr (in this process, `userprog.tilec`)."""
    return tilec("check", "--error-format", "json", str(path)).stderr


def _first_error(path: Path) -> dict:
    stderr = _check_json(path)
    assert "Traceback" not in stderr
    for line in stderr.splitlines():
        if line.startswith("{"):
            d = json.loads(line)
            if d["severity"] == "error" and any(lab["primary"] for lab in d["labels"]):
                return d
    raise AssertionError(f"{path.name}: no error")


def test_every_triton_habit_has_a_fix() -> None:
    assert sorted(p.stem for p in DIR.glob("x*.tile")) == sorted(FIXES)


@pytest.mark.parametrize("name", sorted(FIXES))
def test_the_help_leads_to_a_working_program(name: str, tmp_path: Path) -> None:
    phrase, edits = FIXES[name]
    src = (DIR / f"{name}.tile").read_text(encoding="utf-8")
    d = _first_error(DIR / f"{name}.tile")
    assert any(phrase in h for h in d["help"]), (name, d["help"])
    for old, new in edits:
        assert old in src, (name, old)
        src = src.replace(old, new)
    fixed = tmp_path / f"{name}.tile"
    fixed.write_text(src, encoding="utf-8")
    r = tilec("check", "-D", "warnings", str(fixed))
    assert r.returncode == 0, (name, r.stderr)


@pytest.mark.parametrize("name", sorted(FIXES))
def test_the_editor_shows_the_same_first_error(name: str) -> None:
    path = DIR / f"{name}.tile"
    text = path.read_text(encoding="utf-8")
    want = _first_error(path)
    an = A.analyze(text, str(path))
    assert an.internal_error is None
    errs = [d for d in an.diagnostics if d.severity.value == "error"]
    assert errs and errs[0].code == want["code"], (name, [d.code for d in errs])
    lab = next(lab for lab in want["labels"] if lab["primary"])
    line_start = sum(len(x) + 1 for x in text.split("\n")[:lab["line"] - 1])
    assert errs[0].primary_span.start == line_start + lab["col"] - 1, name
    assert errs[0].help, name
    # what the editor sees while the user types: every prefix, cut at a line's end or mid-line
    cuts = sorted({i for i, c in enumerate(text) if c in "\n(,."} | {len(text) // 3, len(text) // 2})
    for cut in cuts:
        part = A.analyze(text[:cut], str(path))
        assert part.internal_error is None, (name, cut)
        A.hover(part, max(0, cut - 2))
