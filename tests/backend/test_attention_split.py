"""`TILEC_ATTN_SPLIT` (`passes/attention_split.py`): the persistent attention
walk's last round cut along the keys, each piece's (m, l, acc) saved, the
last piece in merging them. Where it applies (the proof of
`attention_softmax`, single tiles, not the chained short-keys variant) and
where not (byte-identical when off); in the simulator against NumPy on the
loop forms the walk has (overlapped, rotated; one and two consumer
warpgroups), with grouped-query heads, keys not a multiple of the block,
pieces over several rounds, causal walks (pairs: no split); the records
each piece wrote counted; the PTX through ptxas."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from ptxas_report import assemble
from test_attention_pipeline import _facts, _run_lse_and_check, _std, _user

from tilelang import driver
from tilelang.backend import emit_llvm_text, emit_ptx, lower_gpu
from tilelang.backend.gpu.printer import print_gpu_kernel

FORMS = {"overlap": {"TILEC_ATTN_ROTATE": "0"}, "rotate": {"TILEC_ATTN_ROTATE": "1"}}
LSE = {**_facts("oqkv", 3), **_facts(["lse"], 2)}


def _env(monkeypatch, split: str = "1", form: str = "overlap", edge: str = "0") -> None:  # type: ignore[no-untyped-def]
    for var in ("TILEC_ATTN_CHAIN", "TILEC_ATTN_PINGPONG", "TILEC_ATTN_SCHEDULE", "TILEC_ATTN_OSTORE",
                "TILEC_ATTN_QDOUBLE", "TILEC_ATTN_KVFIRST"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("TILEC_ATTN_SPLIT", split)
    monkeypatch.setenv("TILEC_ATTN_SPLIT_EDGE", edge)
    for var, value in FORMS[form].items():
        monkeypatch.setenv(var, value)


def _text(k, facts) -> str:  # type: ignore[no-untyped-def]
    return print_gpu_kernel(lower_gpu(k, "sm_90a", facts))


def test_where_the_split_applies(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """On: std's prefill kernels get the pieces' save, arrival and merge; the chained short-keys variant, a
    loop whose epilogue stores m (no proof), a pingpong and a serial schedule keep whole tiles. Off:
    the LLVM of std's kernels is the same whatever the split's other settings; unset (the default) is on."""
    _env(monkeypatch)
    for bm, d in ((128, 64), (64, 64)):
        text = _text(_std("flash_attention_lse", "f16", bm, 128, d), LSE)
        assert "split.save" in text and "split.arrive" in text and "split.load" in text
    # 64 accumulator registers a thread (D = 128 at 128 x 128): whole tiles unless `TILEC_ATTN_SPLIT_WIDE=1`,
    # which splits them with the producer at 24 registers (the consumers at 240)
    assert "split.save" not in _text(_std("flash_attention_lse", "f16", 128, 128, 128), LSE)
    monkeypatch.setenv("TILEC_ATTN_SPLIT_WIDE", "1")  # in the overlapped loop (`TILEC_ATTN_ROTATE=0`) still whole
    assert "split.save" not in _text(_std("flash_attention_lse", "f16", 128, 128, 128), LSE)
    monkeypatch.delenv("TILEC_ATTN_ROTATE")  # D = 128's default: rotated
    wide = _text(_std("flash_attention_lse", "f16", 128, 128, 128), LSE)
    assert "split.save" in wide and "role consumer warps 8 regs 240" in wide and "role producer warps 4 regs 24" in wide
    monkeypatch.setenv("TILEC_ATTN_ROTATE", "0")
    monkeypatch.setenv("TILEC_ATTN_SPLIT_WIDE", "2")
    with pytest.raises(ValueError, match="TILEC_ATTN_SPLIT_WIDE"):
        _text(_std("flash_attention_lse", "f16", 128, 128, 128), LSE)
    monkeypatch.delenv("TILEC_ATTN_SPLIT_WIDE")
    from test_attention_chain import _short

    assert "split.save" not in _text(_std("flash_attention", "f16", 128, 128, 64), _short(_facts("oqkv", 3), 1024))
    assert "split.save" in _text(_user(128, 64, 64), _facts("oqkv", 2))  # a user's own loop too
    monkeypatch.setenv("TILEC_ATTN_PINGPONG", "1")
    assert "split.save" not in _text(_std("flash_attention", "f16", 128, 128, 64), _facts("oqkv", 3))
    monkeypatch.delenv("TILEC_ATTN_PINGPONG")
    monkeypatch.setenv("TILEC_ATTN_SCHEDULE", "serial")  # (its loop's results were not mapped: a KeyError)
    assert "split.save" not in _text(_std("flash_attention", "f16", 128, 128, 64), _facts("oqkv", 3))
    monkeypatch.delenv("TILEC_ATTN_SCHEDULE")
    lls = []
    for split, edge in (("0", "0"), ("0", "7"), (None, "0"), ("1", "0")):
        if split is None:
            monkeypatch.delenv("TILEC_ATTN_SPLIT")
        else:
            monkeypatch.setenv("TILEC_ATTN_SPLIT", split)
        monkeypatch.setenv("TILEC_ATTN_SPLIT_EDGE", edge)
        gk = lower_gpu(_std("flash_attention_lse", "f16", 128, 128, 64), "sm_90a", LSE)
        lls.append(emit_llvm_text(gk, gk.facts, "")[0])
    # off: the same LLVM whatever the split's other settings; unset: the split (the default since it measured
    # +2..+4 % on D = 64 full rows and even on the causal ones, RESULTS 2026-12-04 13:07)
    assert lls[0] == lls[1] and "splitws" not in lls[0]
    assert lls[2] == lls[3] and "splitws" in lls[2]


def test_a_walk_that_does_not_split_runs_no_split_code(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The consumers walk the pieces only where the launch's walk splits (`Split.on`); else a copy of the
    tile ops with the whole tile's epilogue and the user's loop bounds, in which none of the split's code
    is: its key loop is the default kernel's (the same ops, renamed)."""
    _env(monkeypatch)
    text = _text(_std("flash_attention_lse", "f16", 128, 128, 64), LSE)
    consumer = text[text.index("role consumer"):text.index("role producer")]
    at = consumer.index("\n    if %split")
    split_walk, whole_walk = consumer[at:].split("\n    } else {\n", 1)
    for op in ("split.save", "split.arrive", "split.load"):
        assert op in split_walk and op not in whole_walk
    assert split_walk.count("for %j") == whole_walk.count("for %j") == 1

    def loop_ops(t: str) -> list[str]:  # the key loop's ops, their values' names dropped
        import re

        lines, depth, out = t[t.index("for %j"):].splitlines(), 0, []
        for line in lines:
            depth += line.count("{") - line.count("}")
            out.append(re.sub(r"%[\w.]+", "%", line.strip()))
            if depth == 0:
                return out
        raise AssertionError("the key loop does not end")

    monkeypatch.setenv("TILEC_ATTN_SPLIT", "0")
    default = _text(_std("flash_attention_lse", "f16", 128, 128, 64), LSE)
    ops = loop_ops(whole_walk)
    assert len(ops) > 50 and ops == loop_ops(default[default.index("role consumer"):])


def test_no_split_where_the_epilogue_sees_the_shift(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A user's loop whose epilogue stores m plus the output (not blind to how the state was reached): the
    proof fails, the walk keeps whole tiles."""
    _env(monkeypatch)
    from test_attention_pipeline import USER

    src = USER.replace("o.store((acc / l) as f16);", "o.store((acc / l + m) as f16);")
    src = src.replace("attn::<64, 64, 64>(o.partition([64, 64])", "attn::<128, 64, 64>(o.partition([128, 64])")
    k = driver.compile(src, "ir").output[0]
    text = _text(k, _facts("oqkv", 2))
    assert "role consumer" in text and "split.save" not in text


def _run(k, facts, grid, bh: int, hkv: int, sq: int, sk: int, d: int, causal: bool, seed: int) -> int:  # type: ignore[no-untyped-def]
    """`flash_attention_lse` in the simulator against NumPy (test_attention_pipeline's check, q doubled); the
    number of 4-byte words the pieces wrote to the split's records."""
    dev = _run_lse_and_check(k, facts, grid, bh, hkv, sq, sk, d, causal, seed, q_scale=2.0)
    words = np.frombuffer(dev.split_records, np.uint32) if dev.split_records else np.zeros(0, np.uint32)
    return int((words != 0xFFFFFFFF).sum())


# form, BM, BH, BHkv, S_q, S_k, causal, CTAs, pieces the last round runs (0: no split); D = 64 (`WIDE`: 128)
CASES = [
    # 10 tiles on 4 CTAs: the last 2 in 2 pieces each (heavy: three_rounds_of_pieces runs the same kernel, more
    # pieces over more rounds)
    pytest.param("overlap", 64, 2, 2, 300, 200, False, 4, 2 * 2, marks=pytest.mark.heavy),
    # the rotated loop, keys not a multiple of 64: 6 tiles on 4 (heavy, htier1: the rotated loop at D = 64 is opt-in
    # outside the chained variant, which has no split; two_warpgroups_gqa runs the split in it, keys not a multiple)
    pytest.param("rotate", 64, 2, 2, 172, 130, False, 4, 2 * 2, marks=pytest.mark.heavy),
    ("overlap", 64, 1, 1, 448, 320, False, 4, 3 * 4),     # 7 tiles on 4: the last 3 in 4 pieces, 3 rounds
    ("rotate", 128, 2, 1, 130, 200, False, 3, 1 * 3),     # two warpgroups, GQA: 4 tiles on 3, the last in 3 pieces
    ("overlap", 64, 2, 2, 200, 150, True, 3, 0),          # causal: pairs, no split
    ("overlap", 64, 2, 1, 256, 70, False, 8, 0),          # one round on 8 CTAs: nothing left to split
    # D = 128 (`TILEC_ATTN_SPLIT_WIDE`), GQA: 6 tiles on 4 (heavy: wide_causal_even runs the same kernel, GQA
    # two_warpgroups_gqa)
    pytest.param("wide", 128, 2, 1, 300, 300, False, 4, 2 * 2, marks=pytest.mark.heavy),
    # causal, S_k > S_q: both query blocks see 3 key blocks (single tiles), 4 on 3 CTAs: the last one in 3 pieces,
    # the diagonal block's mask in the last piece (heavy, htier1: `TILEC_ATTN_SPLIT_WIDE` is opt-in and lost 2.4-5.9 %
    # past 1,024 keys, RESULTS.md h15p 2026-12-04; its one default test is test_where_the_split_applies, where it
    # applies and its refusal; the split's walk and merge run by default in two_warpgroups_gqa / three_rounds_of_pieces)
    pytest.param("wide", 128, 2, 2, 130, 190, True, 3, 1 * 3, marks=pytest.mark.heavy),
    # D = 128 causal, uneven tiles: pairs, the whole tiles' copy (heavy: `TILEC_ATTN_SPLIT_WIDE` is off by default;
    # wide_causal_even runs its kernel, whole tiles and then a split one; a causal pairs walk without a split:
    # causal_pairs, the default split kernel's)
    pytest.param("wide", 128, 1, 1, 300, 300, True, 2, 0, marks=pytest.mark.heavy),
]


@pytest.mark.parametrize(("form", "bm", "bh", "hkv", "sq", "sk", "causal", "ctas", "pieces"), CASES,
                         ids=["two_pieces", "rotated", "three_rounds_of_pieces", "two_warpgroups_gqa", "causal_pairs",
                              "one_round", "wide_gqa", "wide_causal_even", "wide_causal_pairs"])
def test_split_in_the_simulator(form: str, bm: int, bh: int, hkv: int, sq: int, sk: int, causal: bool, ctas: int,
                                pieces: int, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The split kernels against NumPy in llsim (records NaN until written, so a merge that read a record
    nobody wrote fails), and how many records the pieces wrote: a piece's record is 256 (BM 128) or 128
    (BM 64) threads' words (2 of m, 2 of l, the accumulator's 32 at D = 64)."""
    import llsim

    monkeypatch.setattr(llsim, "UNDEF_FLOAT", "nan")
    d = 128 if form == "wide" else 64
    _env(monkeypatch, form="rotate" if form == "wide" else form)  # (D = 128: rotated, as by default)
    if form == "wide":
        monkeypatch.setenv("TILEC_ATTN_SPLIT_WIDE", "1")
    k = _std("flash_attention_lse", "f16", bm, 64, d)
    assert "split.save" in _text(k, LSE)
    written = _run(k, LSE, (ctas, 1), bh, hkv, sq, sk, d, causal, 5)
    threads = 2 * bm  # the consumers: a warpgroup a 64 rows; each holds 2 + 2 words of m and l, D / 2 of acc
    assert written == pieces * threads * (4 + d // 2)


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs ptxas")
@pytest.mark.parametrize("dt", ["f16", "bf16"])
def test_split_kernels_assemble(dt: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The benchmark's D = 64 kernels (128 x 128) with the split through ptxas for sm_90a: no wgmma
    serialised; no spills (52 B before the split's values were recomputed after the key loop, 4 B before
    the whole tiles got their own walk)."""
    _env(monkeypatch, edge="3")
    ptx = emit_ptx(_std("flash_attention", dt, 128, 128, 64), "sm_90a", _facts("oqkv", 3))
    assert "atom.acq_rel.gpu" in ptx
    r = assemble(ptx, "sm_90a")
    assert "C7515" not in r and "serialized" not in r, r.text
    assert r.max_spill_stores == 0, r.text


def _key_loops(sass: str) -> list[list[str]]:
    """The SASS loops (a backward branch's range) with HGMMAs inside and no inner loop with them: the key loops."""
    import re

    ins: list[str] = []
    labels: dict[str, int] = {}
    for line in sass.splitlines():
        if m := re.match(r"\s*(\.L_x_\d+):", line):
            labels[m.group(1)] = len(ins)
        elif m := re.search(r"/\*[0-9a-f]{4,}\*/\s+(.*?);", line):
            ins.append(m.group(1))
    spans = [(labels[m.group(1)], j) for j, t in enumerate(ins)
             if (m := re.search(r"BRA.*`\((\.L_x_\d+)\)", t)) and labels.get(m.group(1), j + 1) <= j]
    hg = [(a, b) for a, b in spans if any("HGMMA" in x for x in ins[a:b + 1])]
    inner = [(a, b) for a, b in hg if not any((a, b) != (c, d) and a <= c and d <= b for c, d in hg)]
    return [ins[a:b + 1] for a, b in inner]


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs ptxas")
# bf16 heavy (hci6: 4.5 CPU-s under load; `TILEC_ATTN_SPLIT_WIDE` is opt-in): the f16 case assembles the same
# kernel but for the element type's conversions with the same bounds, as test_attention_csplit's
# `test_chained_split_kernels_assemble` keeps f16 by default
# htier1: f16 heavy too (`TILEC_ATTN_SPLIT_WIDE`'s one default test is test_where_the_split_applies; the split's
# default kernels assemble in test_split_kernels_assemble)
@pytest.mark.parametrize("dt", [pytest.param("f16", marks=pytest.mark.heavy), pytest.param("bf16", marks=pytest.mark.heavy)])
def test_wide_split_kernels_keep_their_key_loops_in_registers(dt: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`TILEC_ATTN_SPLIT_WIDE=1`: the benchmark's D = 128 kernel (128 x 128) with the split walk beside the
    whole tiles' copy through ptxas for sm_90a. With the producer at 40 registers ptxas 13.0 spilled 124 B and
    reloaded a value twice a key block in the copy's loop; with 24 (the consumers at 240) at most 72 B, and
    (nvdisasm) no STL / LDL in either walk's key loop: the spills are the walk's scalars, once a tile."""
    import re
    import subprocess
    import tempfile
    from pathlib import Path

    from gpu_probe import nvdisasm_path

    _env(monkeypatch, edge="3")
    monkeypatch.delenv("TILEC_ATTN_ROTATE")  # D = 128's default: rotated (overlapped: no wide split)
    monkeypatch.setenv("TILEC_ATTN_SPLIT_WIDE", "1")
    ptx = emit_ptx(_std("flash_attention", dt, 128, 128, 128), "sm_90a", _facts("oqkv", 3))
    assert "atom.acq_rel.gpu" in ptx and re.search(r"setmaxnreg.inc.sync.aligned.u32\s+240;", ptx)
    with tempfile.TemporaryDirectory() as t:
        cubin = Path(t) / "k.cubin"
        r = assemble(ptx, "sm_90a", cubin)
        assert "C7515" not in r and "serialized" not in r, r.text
        assert r.max_spill_stores <= 72, r.text
        tool = nvdisasm_path()
        if tool is None:  # (the byte bound above still holds the spills to the walk's scalars)
            return
        sass = subprocess.run([tool, "-c", str(cubin)], check=True, capture_output=True, text=True).stdout
    # the split walk's and the copy's key loops (~700 instructions each; not the wider ranges that the
    # mbarrier spins' out-of-line retries close)
    loops = [x for x in _key_loops(sass) if len(x) < 1500]
    assert len(loops) == 2, [len(x) for x in loops]
    for body in loops:
        assert sum("HGMMA" in x for x in body) >= 16
        assert not [x for x in body if x.startswith(("STL", "LDL"))], "a spill in a key loop"


# dtype, BH, BHkv, S_q, S_k, causal, CTAs: the benchmark's D = 128 kernel (128 x 128) with `TILEC_ATTN_SPLIT_WIDE=1`
WIDE_GPU = [
    ("f16", 3, 1, 640, 1100, False, 2),  # GQA, keys not a multiple of 128: 15 tiles on 2 CTAs, the last split
    ("bf16", 4, 2, 130, 1200, True, 3),  # causal S_q < S_k, both query blocks 10 key blocks: single tiles,
    # 8 on 3 CTAs, the last 2 split (the diagonal's mask in their last pieces)
    ("bf16", 2, 2, 1000, 1300, True, 3),  # causal, uneven: pairs (the whole tiles' copy)
    ("f16", 2, 2, 768, 1100, False, 3),  # 12 tiles on 3 CTAs: no tile left over (the copy)
]


@pytest.mark.gpu
@pytest.mark.parametrize("case", WIDE_GPU, ids=lambda c: "-".join(map(str, c)))
def test_wide_split_on_the_gpu(case, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """D = 128 with the wide split against SDPA in f32 and the log-sum-exp, launched three times with the same
    bits each time (`gpu_lse_check`)."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch has no CUDA device")
    dtype, bh, hkv, sq, sk, causal, ctas = case
    monkeypatch.setenv("TILEC_ATTN_SPLIT_WIDE", "1")
    monkeypatch.setenv("TILEC_PERSISTENT_SMS", str(ctas))
    gpu_lse_check(dtype, 128, bh, hkv, sq, sk, causal, sq + sk)


def gpu_lse_check(dtype: str, d: int, bh: int, hkv: int, sq: int, sk: int, causal: bool, seed: int,
                  bn: int = 128) -> None:
    """std's `flash_attention_lse` (128 x `bn`) on the GPU, as the environment compiles it, against SDPA in f32
    (< 1e-2; GQA by repetition, the causal mask bottom-right aligned) and the log-sum-exp, launched three times:
    the same bits each time (the merge's order is fixed, and the last piece in resets the tile's counter)."""
    import torch

    import tilelang

    attn = tilelang.compile("use std::attention::*;\n")
    dt = {"f16": torch.float16, "bf16": torch.bfloat16}[dtype]
    g = torch.Generator(device="cuda").manual_seed(seed)
    q, k, v = (torch.randn(n, s, d, device="cuda", dtype=dt, generator=g) for n, s in ((bh, sq), (hkv, sk), (hkv, sk)))
    qf, kf, vf = q.float(), k.float().repeat_interleave(bh // hkv, 0), v.float().repeat_interleave(bh // hkv, 0)
    s = torch.einsum("bqd,bkd->bqk", qf, kf) * d**-0.5
    if causal:
        keep = torch.arange(sk, device="cuda")[None, :] <= torch.arange(sq, device="cuda")[:, None] + (sk - sq)
        s = s.masked_fill(~keep, float("-inf"))
    want_lse = torch.logsumexp(s, dim=-1)
    want = torch.nan_to_num(torch.softmax(s, dim=-1) @ vf)
    outs = []
    for _ in range(3):
        o = torch.full_like(q, float("nan"))
        lse = torch.full((bh, sq), float("nan"), device="cuda")
        attn.flash_attention_lse[dtype, 128, bn, d](tilelang.partition(o, [1, 128, d]), tilelang.partition(lse, [1, 128]),
                                                     q, k, v, d**-0.5, causal).sync()
        outs.append((o, lse))
    o, lse = outs[0]
    assert float((o.float() - want).abs().max() / want.abs().max()) < 1e-2
    seen = torch.isfinite(want_lse)
    torch.testing.assert_close(lse[seen], want_lse[seen], rtol=1e-4, atol=1e-3)
    for o2, lse2 in outs[1:]:
        assert torch.equal(o, o2) and torch.equal(lse[seen], lse2[seen])
