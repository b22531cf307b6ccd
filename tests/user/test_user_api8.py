"""Round 8 through the Python API (huser8, 2026-12-05 14:46): what round 7
left of std::attention's silent answers and device asserts.

- `flash_attention` (and `_lse`) checked its shapes with a device assert in
  its body (E0700 after blocks had run) and not at all whether `o` matched
  `q` (an `o` with fewer query tiles left rows never computed, more wrote
  zeros): both are `#[requires(..)]` now, refused before the launch
  (E0513). `decode_combine`'s "more splits than NS" and "o_part and
  lse_part disagree", and `decode_split_tc`'s "at most 64 query heads", were
  device asserts too. The asserts stay in the kernels (unreachable), so
  their PTX is byte-identical: `benchmarks/huser_decode_ptx.py all`.
- `decode_split_varlen` reads its lengths on the device: a length past the
  cache or below 0 is clamped to `0 ..= S_max`, documented and checked here
  (the whole cache; no key: zeros, log-sum-exp MASKED, a zero row merged),
  and on the simulated GPU (llsim sm_90a; sm_80 and lengths of +-2^31 by
  hand, 2026-12-05 15:31: the interpreter's partials to 3e-8).
- The kernels count key blocks and compare positions in i32 (key blocks by
  `std::math::cdiv_wrapping`, the one-add form their timed code keeps): a
  cache within a key block of 2^31 positions gave a negative count and no
  key at all, and flash_attention's `row + S_k` (a row's last visible key)
  wrapped where S_q + S_k passes 2^31. Such shapes are refused now (E0513; `tilec check` decides it for constant
  shapes, which is how it is tested: such a tensor does not fit here).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import tilelang
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "backend"))  # llsim

from test_user_api7 import BN, D, G, HKV, SMAX, SPLITS, _qkv, _reference, _refused

P = tilelang.partition
MASKED = -1.0e30


@pytest.fixture(scope="module")
def att() -> tilelang.Module:
    return tilelang.compile("use std::attention::{flash_attention, flash_attention_lse, decode_split_varlen, "
                            "decode_split_tc, decode_combine};\n")


def test_flash_attention_refuses_an_o_not_shaped_like_q_before_it_runs(att: tilelang.Module) -> None:
    rng = np.random.default_rng(3)
    q, k, v = ((rng.standard_normal(s) * 0.5).astype(np.float16) for s in ((4, 20, 16), (2, 24, 16), (2, 24, 16)))
    fa = att.flash_attention["f16", 16, 16, 16]
    for shape in ((4, 10, 16), (4, 40, 16), (2, 20, 16), (8, 20, 16)):  # query tiles 1 / 3 of 2; heads 2 / 8 of 4
        o = np.zeros(shape, np.float16)
        text = _refused(lambda o=o: fa(P(o, [1, 16, 16]), q, k, v, 0.25, True).sync(), "o must have q's shape")
        assert "`q.shape()[0]` = 4" in text and "`q.shape()[1]` = 20" in text and "`BM` = 16" in text
        assert not o.any()  # refused before any block ran
    o, lse = np.zeros((4, 12, 16), np.float16), np.zeros((4, 12), np.float32)  # 1 tile of 16 for 2 of q's
    _refused(lambda: att.flash_attention_lse["f16", 16, 16, 16](P(o, [1, 16, 16]), P(lse, [1, 16]), q, k, v, 0.25,
                                                                 False).sync(), "o and lse must have q's shape")
    _refused(lambda: fa(P(np.zeros_like(q), [1, 16, 16]), q, k[:0].copy(), v[:0].copy(), 0.25, True).sync(),
             "query heads must be a multiple of KV heads")  # no KV head: refused, not a division by zero
    o = np.zeros_like(q)
    fa(P(o, [1, 16, 16]), q, k, v, 0.25, True).sync()  # the shapes the header gives: runs
    assert np.isfinite(o).all() and o.any()


def test_decode_combine_and_tc_refuse_what_their_asserts_caught(att: tilelang.Module) -> None:
    o_part = np.zeros((HKV, 3 * G, D), np.float32)  # 3 splits
    lse_part = np.zeros((HKV, 3 * G), np.float32)
    o = np.zeros((HKV, G, D), np.float16)
    text = _refused(lambda: att.decode_combine["f16", G, 2, D](P(o, [1, G, D]), o_part, lse_part).sync(),
                    "more splits than NS")  # NS = 2 would drop the third split
    assert "`lse_part.shape()[1]` = 12" in text and "`NS` = 2" in text
    _refused(lambda: att.decode_combine["f16", G, 4, D](P(o, [1, G, D]), o_part, lse_part[:, :8].copy()).sync(),
             "o_part and lse_part disagree on the splits")
    att.decode_combine["f16", G, 4, D](P(o, [1, G, D]), o_part, lse_part).sync()  # NS = 4 >= 3 splits: runs
    q, k, v = _qkv()
    q65 = np.zeros((HKV, 65, D), np.float16)
    tc_o, tc_l = np.zeros((HKV * SPLITS, 65, D), np.float32), np.zeros((HKV * SPLITS, 65), np.float32)
    _refused(lambda: att.decode_split_tc["f16", BN, D](P(tc_o, [1, 64, D]), P(tc_l, [1, 64]), q65, k, v, 8, 0.25,
                                                       SPLITS).sync(), "at most 64 query heads a KV head")


def test_varlen_lengths_past_the_cache_or_below_zero_are_clamped(att: tilelang.Module) -> None:
    q, k, v = _qkv()
    for lens, heads in (([SMAX + 100, -7], (SMAX, 0)), ([2**31 - 1, -(2**31)], (SMAX, 0)), ([0, SMAX], (0, SMAX))):
        o_part = np.full((HKV, SPLITS * G, D), 7, np.float32)  # two sequences of one KV head each
        lse_part = np.full((HKV, SPLITS * G), 7, np.float32)
        att.decode_split_varlen["f16", G, BN, D](P(o_part, [1, G, D]), P(lse_part, [1, G]), q, k, v,
                                                 np.array(lens, np.int32), 0.25).sync()
        o = np.full((HKV, G, D), 7, np.float16)
        att.decode_combine["f16", G, SPLITS, D](P(o, [1, G, D]), o_part, lse_part).sync()
        want = _reference(q, k, v, SMAX, 0.25)
        for h, n in enumerate(heads):
            if n:  # a length past the cache attends to the whole cache
                np.testing.assert_allclose(o[h], want[h], atol=3e-3, err_msg=str(lens))
            else:  # 0 or below: no key, zero partials, MASKED log-sum-exps, a zero row merged
                assert not o_part[h].any() and (lse_part[h] == np.float32(MASKED)).all() and not o[h].any(), lens


def test_the_simulated_gpu_clamps_varlen_lengths_as_the_interpreter_does(att: tilelang.Module) -> None:
    from llsim import SimDevice

    from tilelang.backend import TensorFacts
    from tilelang.ir import nodes as ir

    q, k, v = _qkv()
    o_part, lse_part = np.full((HKV, SPLITS * G, D), 7, np.float32), np.full((HKV, SPLITS * G), 7, np.float32)
    op = att.decode_split_varlen["f16", G, BN, D](P(o_part, [1, G, D]), P(lse_part, [1, G]), q, k, v,
                                                  np.array([SMAX + 100, -7], np.int32), 0.25)
    kir = op._plan.kir
    args = op._kernel_args([np.array(h) for h in op._hosts])
    facts = {p.name: TensorFacts(True, tuple(x % 16 == 0 for x in a.shape))
             for p, a in zip(kir.params, args, strict=True) if isinstance(p, ir.TensorParam)}
    SimDevice("sm_90a").run(kir, (HKV, SPLITS), args, facts)
    op.sync()  # the interpreter, into o_part and lse_part
    np.testing.assert_allclose(args[0], o_part, rtol=0, atol=1e-6)
    np.testing.assert_allclose(args[1], lse_part, rtol=1e-6, atol=1e-5)
    assert not args[0][1].any() and (args[1][1] == np.float32(MASKED)).all()  # the length below 0: no key


def test_a_cache_within_a_key_block_of_2_31_is_refused(tmp_path: Path) -> None:
    from tilelang import driver

    def errors(launch: str, **sizes: int) -> list[str]:
        f = tmp_path / "big.tile"
        lets = "".join(f"    let {'mut ' if n in ('o', 'o_part', 'lse') else ''}{n} = zeros::<{'f32' if n in ('o_part', 'lse') else 'f16'}>"
                       f"({shape});\n" for n, shape in (
                           ("q", "[2, 4, 16]"), ("k", f"[2, {sizes.get('k', 40)}, 16]"), ("o_part", "[2, 8, 16]"),
                           ("lse", "[2, 8]"), ("qq", f"[2, {sizes.get('qq', 8)}, 16]"), ("o", f"[2, {sizes.get('qq', 8)}, 16]")))
        f.write_text(f"use std::attention::{{flash_attention, decode_split}};\nfn main() {{\n{lets}    {launch}.sync();\n}}\n")
        return [d.message for d in driver.check(f).diagnostics if d.severity.value == "error"]

    dec = "decode_split::<f16, 4, 64, 16>(o_part.partition([1, 4, 16]), lse.partition([1, 4]), &q, &k, &k, 40, 0.25)"
    fla = "flash_attention::<f16, 64, 64, 16>(o.partition([1, 64, 16]), &qq, &k, &k, 0.25, false)"
    assert errors(dec, k=2**31 - 64) == []  # (S_max + 63) / 64 is the last count i32 holds
    got = errors(dec, k=2**31 - 63)  # it wrapped: no key block at all before
    assert len(got) == 1 and "the cache must have at most 2^31 - BN positions" in got[0], got
    assert "`k.shape()[1]` = 2147483585" in got[0]
    # flash: a query row's last visible key (row + S_k, not causal) and the key blocks' bound, within i32
    assert errors(fla, k=2**30, qq=2**30 - 129) == []
    got = errors(fla, k=2**30, qq=2**30 - 128)
    assert len(got) == 1 and "q's and k's positions together must be at most 2^31 - 1 - BM - BN" in got[0], got
