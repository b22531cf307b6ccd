"""`benchmarks/step_model.py`'s arithmetic (no GPU): the decode step's model
from a `decode_trace.py` picture built by hand: each kind's floor at the
bandwidth, what it adds over it, the kinds ranked by that, and the cut a
target fraction of the roofline needs."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _mod():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("step_model", ROOT / "benchmarks" / "step_model.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _kind(kernel: str, n: int, mb: float, adds: float, tail: float = 0.0) -> dict:  # type: ignore[type-arg]
    return {"kernel": kernel, "generics": "", "blocks": 132, "bytes_each": int(mb * 1e6), "n": n,
            "adds_us": adds, "tail_us": tail, "gap_us": 0.1}  # fmt: skip


# at 1 TB/s (1 MB = 1 us): two layers of a GEMV (4 MB, 5.5 us a launch: 1.5 over its floor) and
# of an attention (1 MB, 4 us: 3 over), a head of 10 MB at its floor, a token choice of no bytes
PIC = {
    "kinds": [_kind("gemv", 2, 4.0, 2 * 5.5, 1.0), _kind("attn", 2, 1.0, 2 * 4.0), _kind("head", 1, 10.0, 10.0),
              _kind("argmax", 1, 0.0, 2.0)],  # fmt: skip
    "step_adds_us": 2 * 5.5 + 2 * 4.0 + 10.0 + 2.0,
}


def test_each_kind_is_put_against_its_floor_and_ranked_by_what_it_adds_over_it() -> None:
    m = _mod().model(PIC, 1e12, layers=2)  # 1 TB/s: 1 MB = 1 us
    assert [k["kind"] for k in m["kinds"]] == ["attn", "gemv", "argmax", "head"]
    by = {k["kind"]: k for k in m["kinds"]}
    assert by["gemv"]["floor_us"] == pytest.approx(8.0)
    assert by["gemv"]["over_us"] == pytest.approx(3.0)
    assert by["gemv"]["over_layer_us"] == pytest.approx(1.5)
    assert by["attn"]["over_layer_us"] == pytest.approx(3.0)
    assert by["head"]["over_us"] == pytest.approx(0.0)
    assert by["head"]["over_layer_us"] is None  # once a step, not a layer's
    assert m["floor_us"] == pytest.approx(20.0)
    assert m["over_us"] == pytest.approx(11.0)
    assert sum(k["share"] for k in m["kinds"]) == pytest.approx(1.0)


def test_the_budget_is_taken_against_the_untraced_step() -> None:
    mod = _mod()
    m = mod.model(PIC, 1e12, layers=2)
    b = mod.budget(m, 30.0, 0.8)  # the untraced step 30 us of the traced 31
    assert b["fraction"] == pytest.approx(20.0 / 30.0)
    assert b["target_us"] == pytest.approx(25.0)
    assert b["cut_us"] == pytest.approx(5.0)
    assert mod.budget(m, None, 0.8)["cut_us"] == pytest.approx(6.0)  # the traced step when none is known


def test_the_command_reads_a_picture_and_prints_the_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    row = {"variant": {}, "roofline": 1e12 / 20e6, "picture": PIC,
           "speeds": {"untraced": {"tok_s": 1e6 / 30.0}, "traced": {"tok_s": 1e6 / 31.0},
                      "untraced_again": {"tok_s": 1e6 / 30.0}}}  # fmt: skip
    bad = {"variant": {"pdl": False}, "picture": {"error": "3 launches recorded, 4 expected"}}
    f = tmp_path / "picture.json"
    f.write_text(json.dumps([row, bad]))
    assert _mod().main([str(f), "--target", "0.8"]) == 0
    out = capsys.readouterr().out
    assert "| attn | 2 | 132 | 2.0 | 2.0 | 8.0 | 6.0 | 3.00 |" in out  # bandwidth from the roofline: 1 TB/s
    assert "untraced step 30.0 us = 66.7% of the roofline" in out
    assert "80% of the roofline: a step of 25.0 us, 5.0 us less (2.50 us a layer over 2 layers)" in out
    assert '{"pdl": false}: 3 launches recorded, 4 expected' in out


def test_ab_rows_fold_by_variant_against_the_first() -> None:
    # `benchmarks/ab_summary.py`: a mirrored run (A B B A) folded per context
    spec = importlib.util.spec_from_file_location("ab_summary", ROOT / "benchmarks" / "ab_summary.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)

    def row(ctx: int, v: dict, tok: float, same: bool = True) -> dict:  # type: ignore[type-arg]
        return {"ctx": ctx, "variant": v, "tok_s": tok, "roofline": 500.0, "same_tokens": same}

    rows = [row(1024, {}, 400.0), row(1024, {"me": 1}, 404.0), row(1024, {"me": 1}, 406.0), row(1024, {}, 402.0),
            row(8192, {}, 350.0), row(8192, {"me": 1}, 349.0, same=False)]  # fmt: skip
    s = mod.summary(rows)
    assert [(e["ctx"], e["variant"], e["n"]) for e in s] == [(1024, "{}", 2), (1024, '{"me": 1}', 2),
                                                              (8192, "{}", 1), (8192, '{"me": 1}', 1)]
    me = s[1]
    assert me["tok_s"] == pytest.approx(405.0) and me["ratio"] == pytest.approx(405.0 / 401.0)
    assert s[0]["spread"] == pytest.approx(2.0 / 401.0) and s[0]["ratio"] == pytest.approx(1.0)
    assert s[3]["ratio"] == pytest.approx(349.0 / 350.0) and not s[3]["same_tokens"]
    out = mod.render(s)
    assert '| 1,024 | `{"me": 1}` | 2 | 405.0 | 0.49% | +1.00% | 81.0% | True |' in out


def test_ab_rows_are_read_back_from_the_printed_log(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # a decode_ab run cut by its timeout writes no JSON: its printed rows are enough
    spec = importlib.util.spec_from_file_location("ab_summary", ROOT / "benchmarks" / "ab_summary.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    v = {"gl": ["gate_up"], "st": {"down": -1}}
    log = "\n".join([
        "NVIDIA H200 copy bw 4.27 TB/s; 4b; cubins: nvJitLink; engine ready in 20.1 s",
        f"ctx   1024 {json.dumps({}):58s}   402.0 tok/s (2.488 ms; rounds 2.488 2.488 2.489)  77.2% of 521; "
        "attn+merge   6.8 us/layer; same tokens True; PDL launches 1760 (0 with early loads); 4.1 s",
        f"ctx   1024 {json.dumps(v):58s}   406.0 tok/s (2.463 ms; rounds 2.463 2.463 2.464)  77.9% of 521; "
        "attn+merge   6.8 us/layer; same tokens False; PDL launches 1760 (300 with early loads); 3.0 s",
        "ctx 8192 variant {'me': 1}: failed: RuntimeError('x')",
    ])  # fmt: skip
    rows = mod.log_rows(log)
    assert [(r["ctx"], r["variant"], r["tok_s"], r["roofline"], r["same_tokens"]) for r in rows] == [
        (1024, {}, 402.0, 521.0, True), (1024, v, 406.0, 521.0, False)]
    f = tmp_path / "ab.log"
    f.write_text(log)
    assert mod.main([str(f)]) == 0
    assert '| 1,024 | `{"gl": ["gate_up"], "st": {"down": -1}}` | 1 | 406.0 | 0.00% | +1.00% | 77.9% | False |' in (
        capsys.readouterr().out)
