"""`std::attention::decode_split_tc`: the decode split on Hopper tensor cores
(the KV head's G query rows as a 64-row tile through the attention
pipeline), with the cache past `cache_len` full of NaN and Inf: its partial
outputs and log-sum-exps on the interpreter and on the sm_90a code in
`llsim` against NumPy (the pipeline zeroes V's rows past `cache_len` in
shared memory: `passes/attention_vmask.py`), and with std's merge against
SDPA on the GPU."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from ptxas_report import assemble
from test_decode_wg_pipeline import (  # decode_split_wg's
    _check,
    _lowered,
    _reference,
    _sdpa_case,
    _simulate,
    _split_params,
)

import tilelang
from tilelang.backend import emit_ptx, lower_gpu
from tilelang.backend.gpu.printer import print_gpu_kernel
from tilelang.dtypes import DType

G, M = 4, 64
STD = "use std::attention::{decode_split_tc, decode_combine};\n"


def _inputs(bhkv: int, smax: int, d: int, clen: int, seed: int):  # type: ignore[no-untyped-def]
    """q, k, v in f16 with K and V past `clen` NaN and Inf (whatever a cache holds there)."""
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((bhkv, G, d)).astype(np.float16)
    k, v = (rng.standard_normal((bhkv, smax, d)).astype(np.float16) for _ in range(2))
    for t in (k, v):
        t[:, clen:] = np.nan
        t[:, clen + 1::3] = np.inf
    return q, k, v


# (KV heads, cache positions, cache_len, splits, BN): a cache_len inside a key
# block (NaN/Inf in the rest of it), on a block's edge, short of a whole block,
# a share with no key (more shares than key blocks); key blocks of 128 (ring of 3)
CASES = [(2, 256, 150, 2, 64), (2, 256, 192, 3, 64), (1, 128, 37, 2, 64), (1, 512, 333, 3, 128)]


@pytest.mark.parametrize(("bhkv", "smax", "clen", "splits", "bn"), CASES)
def test_decode_split_tc_on_the_interpreter(bhkv: int, smax: int, clen: int, splits: int, bn: int) -> None:
    d = 64
    q, k, v = _inputs(bhkv, smax, d, clen, 3)
    o = np.full((bhkv * splits, G, d), np.nan, np.float32)
    lse = np.full((bhkv * splits, G), np.nan, np.float32)
    std = tilelang.compile(STD)
    std.decode_split_tc["f16", bn, d](tilelang.partition(o, [1, M, d]), tilelang.partition(lse, [1, M]), q, k, v,
                                      clen, 0.125, splits).sync()
    _check(o, lse, *_reference(q, k, v, clen, splits, bn, 0.125))


def _kernel_ir(bhkv: int, smax: int, splits: int, bn: int, d: int):  # type: ignore[no-untyped-def]
    return _lowered(tilelang.compile(STD)._program, "decode_split_tc", {"T": DType.parse("f16"), "BN": bn, "D": d},
                    _split_params(bhkv, smax, splits, d))


# D = 128: the rotated loop by default, the overlapped one with ROTATE=0 (and
# D = 64); key blocks of 128 at D = 64 (four stages of 128 x 128 at D = 128 do not fit)
@pytest.mark.parametrize(("bn", "d", "rotate"), [(64, 128, "auto"), (64, 128, "0"), (128, 64, "auto"), (64, 64, "1")])
def test_the_pipeline_takes_decode_split_tc_and_zeroes_v_rows(bn: int, d: int, rotate: str,
                                                              monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("TILEC_ATTN_ROTATE", rotate)
    kir, facts = _kernel_ir(8, 32768, 16, bn, d)
    gk = lower_gpu(kir, "sm_90a", facts)
    text = print_gpu_kernel(gk)
    assert gk.persistent == 1 and "role consumer warps 4" in text and "wgmma.rs" in text
    assert text.count("tma.load") >= 3
    # the V mask: zeroed in shared memory before its product (once a loop
    # iteration; the overlapped loop's peeled copy would be a second), not as
    # a where on a [BN, D] tile in registers
    assert 1 <= text.count("zero_rows") <= 2
    assert not [ln for ln in text.splitlines() if "= where" in ln and f"f16[{bn}, {d}]" in ln]


@pytest.mark.parametrize(("bhkv", "smax", "clen", "splits", "bn"), CASES)
def test_decode_split_tc_in_the_simulator(bhkv: int, smax: int, clen: int, splits: int, bn: int,
                                          monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import collections

    import llsim
    import llsim_exec

    monkeypatch.setattr(llsim, "UNDEF_FLOAT", "nan")
    loads: collections.Counter[tuple[str, tuple[int, ...]]] = collections.Counter()
    tma = llsim_exec._tma

    def counted(mem, bars, dst, bar, tm, *c):  # type: ignore[no-untyped-def]
        loads[(str(tm.key), tuple(int(x) for x in c))] += 1
        return tma(mem, bars, dst, bar, tm, *c)

    monkeypatch.setattr(llsim_exec, "_tma", counted)
    d = 64
    kir, facts = _kernel_ir(bhkv, smax, splits, bn, d)
    q, k, v = _inputs(bhkv, smax, d, clen, 4)
    _check(*_simulate(kir, facts, q, k, v, clen, splits), *_reference(q, k, v, clen, splits, bn, 0.125))
    # each share runs once (hattn7's note: a walk of pairs runs an odd middle share twice): every key block of
    # each head's cache is copied once, and each head's Q once a share, with 2 CTAs walking 3 shares a head too
    ks = [n for (key, _), n in loads.items() if key == "k"]
    assert len(ks) == bhkv * -(-clen // bn) and set(ks) == {1}, sorted(loads.items())
    assert sorted(n for (key, _), n in loads.items() if key == "q") == [splits] * bhkv, sorted(loads.items())


def _shared_arange_program():  # type: ignore[no-untyped-def]
    return _shared_arange_module()._program


def _shared_arange_module():  # type: ignore[no-untyped-def]
    """std's attention with the scores' column mask on every key block, as a
    user writes it: `cols` and the V mask's `keys` read one `arange(BN)` once
    common subexpressions are merged (the V mask matched only when every op
    of it was read once, so this form left the pipeline: huser10's find)."""
    import tilelang as tl

    src = (Path(tl.__file__).parent.parent / "stdlib" / "std" / "attention.tile").read_text()
    guarded = """        if k0 + BN > sk {
            let cols = arange::<i32>(BN).reshape([1, BN]) + k0;
            x = where(cols < sk, x, masked);
        }"""
    assert guarded in src, "std's attend_cache changed: update this test's variant"
    return tilelang.compile(src.replace(guarded, """        let cols = arange::<i32>(BN).reshape([1, BN]) + k0;
        x = where(cols < sk, x, masked);"""))


@pytest.mark.parametrize(("bn", "d"), [(64, 128), (128, 64)])
def test_a_v_mask_sharing_its_arange_with_the_scores_mask_takes_the_pipeline(bn: int, d: int) -> None:
    kir, facts = _lowered(_shared_arange_program(), "decode_split_tc", {"T": DType.parse("f16"), "BN": bn, "D": d},
                          _split_params(8, 32768, 16, d))
    text = print_gpu_kernel(lower_gpu(kir, "sm_90a", facts))
    assert "role consumer warps 4" in text and "wgmma.rs" in text and 1 <= text.count("zero_rows") <= 2
    assert text.count("arange") == 1  # the shared one, kept for the scores' mask
    assert not [ln for ln in text.splitlines() if "= where" in ln and f"f16[{bn}, {d}]" in ln]


def test_a_v_mask_sharing_its_arange_in_the_simulator(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import llsim

    monkeypatch.setattr(llsim, "UNDEF_FLOAT", "nan")
    bhkv, smax, clen, splits, bn, d = 1, 256, 150, 2, 64, 64
    kir, facts = _lowered(_shared_arange_program(), "decode_split_tc", {"T": DType.parse("f16"), "BN": bn, "D": d},
                          _split_params(bhkv, smax, splits, d))
    q, k, v = _inputs(bhkv, smax, d, clen, 5)
    _check(*_simulate(kir, facts, q, k, v, clen, splits), *_reference(q, k, v, clen, splits, bn, 0.125))


# the GPU test's (batch, cache positions, cache_len, splits, BN); 32 / 8 heads, D = 128, bf16
GPU_CASES = [(1, 8192, 8192, 16, 64), (1, 8192, 8000, 16, 64), (2, 1024, 1000, 3, 64), (8, 512, 300, 33, 64),
             (2, 320, 257, 5, 64)]


@pytest.mark.gpu
@pytest.mark.parametrize(("batch", "smax", "clen", "splits", "bn"), GPU_CASES)
def test_decode_split_tc_with_std_merge_matches_sdpa(batch: int, smax: int, clen: int, splits: int, bn: int) -> None:
    _split_against_sdpa(tilelang.compile(STD), batch, smax, clen, splits, bn)


@pytest.mark.gpu
@pytest.mark.parametrize(("batch", "smax", "clen", "splits", "bn"), [GPU_CASES[1], GPU_CASES[4]])
def test_a_v_mask_sharing_its_arange_matches_sdpa(batch: int, smax: int, clen: int, splits: int, bn: int) -> None:
    _split_against_sdpa(_shared_arange_module(), batch, smax, clen, splits, bn)


def _split_against_sdpa(std, batch: int, smax: int, clen: int, splits: int, bn: int) -> None:  # type: ignore[no-untyped-def]
    """`std`'s decode_split_tc and decode_combine against SDPA, with NaN and Inf in the unused cache."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    d, rows = 128, batch * 8
    q, k, v, want = _sdpa_case(torch, batch, smax, clen)
    for t in (k, v):  # what the unused cache holds must not matter
        t[:, :, clen:] = float("nan")
        t[:, :, clen + 1::3] = float("inf")
    ns = 1 << (splits - 1).bit_length()
    o = torch.full_like(q, float("nan"))
    opw = torch.full((rows * splits, G, d), float("nan"), device="cuda")
    lpw = torch.full((rows * splits, G), float("nan"), device="cuda")
    std.decode_split_tc["bf16", bn, d](tilelang.partition(opw, [1, M, d]), tilelang.partition(lpw, [1, M]),
                                       q.view(rows, G, d), k.view(rows, smax, d), v.view(rows, smax, d), clen,
                                       d**-0.5, splits).sync()
    std.decode_combine["bf16", G, ns, 32](tilelang.partition(o.view(rows, G, d), [1, G, 32]),
                                          opw.view(rows, splits * G, d), lpw.view(rows, splits * G)).sync()
    assert torch.isfinite(o).all()
    err = float((o.float() - want).abs().max() / want.abs().max())
    assert err < 1e-2, err


def _assemble_sm90a(tmp_path, kir, facts, name: str = "a") -> tuple[str, list[int]]:  # type: ignore[no-untyped-def]
    """The kernel's PTX for sm_90a assembled by ptxas -v into `tmp_path / name.cubin`: ptxas's
    report and the spill-store bytes of each function in it (the assembly must succeed)."""
    r = assemble(emit_ptx(kir, "sm_90a", facts), "sm_90a", cubin=tmp_path / f"{name}.cubin")
    return r.text, list(r.spill_stores)


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas is not installed")
# ("0" heavy, htier1: the overlapped loop at D = 128 is `TILEC_ATTN_ROTATE=0`'s, not the default; "auto" assembles the
# kernel a decode launch gets)
@pytest.mark.parametrize("rotate", ["auto", pytest.param("0", marks=pytest.mark.heavy)])
def test_decode_split_tc_assembles_for_sm_90a_without_spills(tmp_path, rotate: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("TILEC_ATTN_ROTATE", rotate)
    kir, facts = _kernel_ir(8, 32768, 16, 64, 128)
    err, stores = _assemble_sm90a(tmp_path, kir, facts)
    assert stores and max(stores) == 0, err
    assert "C7515" not in err and "serialized" not in err, err


# (the keys' offset, the bound) replacing `k0` and `sk` in std's V mask: an offset whose `bound - offset`
# wraps i32 (`k0 - 64` under `i32::MAX`: nothing is masked, every row of the first block was zeroed), and
# keys whose sum `r + offset` wraps (only key 47 masked: the rows past it are negative, so kept)
WRAPS = [("(k0 - 64)", "(sk | 2147483647)"), ("(k0 + 2147483600)", "(sk | 2147483647)")]


@pytest.mark.parametrize(("offset", "bound"), WRAPS)
def test_a_v_mask_whose_i32_sums_wrap_agrees_with_the_interpreter(offset: str, bound: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`ZeroRows` took `bound - offset` in i32 as the rows that stay (hrev21): where that difference or a key's
    sum wraps, llsim zeroed other V rows than the interpreter's `where`. Both engines on the variant."""
    import llsim

    monkeypatch.setattr(llsim, "UNDEF_FLOAT", "nan")
    src = (Path(tilelang.__file__).parent.parent / "stdlib" / "std" / "attention.tile").read_text()
    old = """        let keys = arange::<i32>(BN).reshape([BN, 1]) + k0;
        acc = mma(p as T, where(keys < sk, vt, 0.0), acc * alpha);"""
    assert old in src, "std's attend_cache changed: update this test's variant"
    mod = tilelang.compile(src.replace(old, old.replace("+ k0", f"+ {offset}").replace("< sk", f"< {bound}")))
    bhkv, smax, splits, bn, d = 1, 128, 1, 64, 64
    kir, facts = _lowered(mod._program, "decode_split_tc", {"T": DType.parse("f16"), "BN": bn, "D": d},
                          _split_params(bhkv, smax, splits, d))
    assert "zero_rows" in print_gpu_kernel(lower_gpu(kir, "sm_90a", facts))  # the pipeline's V mask
    q, k, v = _inputs(bhkv, smax, d, smax, 7)
    o = np.full((bhkv * splits, G, d), np.nan, np.float32)
    lse = np.full((bhkv * splits, G), np.nan, np.float32)
    mod.decode_split_tc["f16", bn, d](tilelang.partition(o, [1, M, d]), tilelang.partition(lse, [1, M]), q, k, v,
                                      smax, 0.125, splits).sync()
    if "2147483600" in offset:  # the interpreter's mask: key 47 alone (sums past it wrap negative)
        v47 = v.copy()
        v47[:, 47] = 0
        _check(o, lse, *_reference(q, k, v47, smax, splits, bn, 0.125))
    else:  # nothing masked
        _check(o, lse, *_reference(q, k, v, smax, splits, bn, 0.125))
    _check(*_simulate(kir, facts, q, k, v, smax, splits), o, lse)
