"""The attention scripts under benchmarks/ on the CPU: `attention.py --smoke`
runs and checks its own results; the sanitizer workload is right on the
interpreter; every launch the prewarm script compiles for the device lowers."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _script(name: str):  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_sanitizer_workload_is_right_on_the_interpreter(capsys) -> None:  # type: ignore[no-untyped-def]
    assert _script("attention_sanitize").main(["cpu"]) == 0
    assert capsys.readouterr().out.count("err ") == 14  # 8 prefill cases (4 that split on 2 CTAs), 6 decode
    assert _script("attention_sanitize").main(["cpu", "decode"]) == 0
    assert capsys.readouterr().out.count("err ") == 6


def test_the_prewarm_finds_the_test_modules_outside_pytest() -> None:
    # The prewarm runs as a plain script on the device, where no conftest puts
    # tests/ on sys.path: its own paths must reach every module the test case
    # tables import (the 2026-12-03 final call lost its prewarm, and the
    # sanitizers their time, to `ptxas_report` missing there).
    import os
    import subprocess
    import sys

    code = (f"import importlib.util, sys; sys.path[:] = [p for p in sys.path if 'tests' not in p]; "
            f"spec = importlib.util.spec_from_file_location('pw', {str(ROOT / 'benchmarks' / 'attention_prewarm.py')!r}); "
            "pw = importlib.util.module_from_spec(spec); spec.loader.exec_module(pw); pw.test_paths(); "
            "import test_decode_tc_pipeline, ptxas_report; print('ok')")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd="/", check=False,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]


def test_the_prewarm_keys_every_launch_shape() -> None:
    # decode launches have 1-D tensors (the log-sum-exps): the key of the
    # short-keys variant (`facts.Short`) read `shape[-2]` of every tensor, and
    # the 2026-12-04 final call's decode prewarm died on it (IndexError)
    pw = _script("attention_prewarm")
    lse = ("lse", "f32", (64,), None)
    k_short = pw.job_key("decode_combine", {"NS": 4}, [lse, ("k", "bf16", (8, 1024, 128), None)])
    k_long = pw.job_key("decode_combine", {"NS": 4}, [lse, ("k", "bf16", (8, pw.SHORT_ROWS + 64, 128), None)])
    k_longer = pw.job_key("decode_combine", {"NS": 4}, [lse, ("k", "bf16", (8, 4 * pw.SHORT_ROWS, 128), None)])
    assert k_short != k_long and k_long == k_longer  # rows past SHORT_ROWS are one compile


def test_every_prewarmed_launch_lowers() -> None:
    pytest.importorskip("torch")  # the GPU tests' case tables import it
    import tilelang
    from tilelang.ir.lower import lower_kernel
    from tilelang.runtime.launch import ArgFact

    pw = _script("attention_prewarm")
    program = tilelang.compile("use std::attention::*;\n")._program
    variants = tilelang.load(str(ROOT / "benchmarks" / "attention_variants.tile"))._program
    launches = pw.launches()
    assert {k for k, _, _ in launches} == {"flash_attention", "flash_attention_lse", "decode_split",
                                           "decode_split_varlen", "decode_combine", "decode_split+pdl",
                                           "decode_combine+pdl", "decode_split+pdl@entry",
                                           "decode_combine+pdl@entry", "decode_combine_w1n", "decode_fused",
                                           "decode_split_tc", "decode_split_tc+pdl", "decode_split_tc+pdl@entry"}
    seen = set()
    for kernel, inst, params in launches:
        kernel = kernel.removesuffix(pw.PDL_ENTRY).removesuffix(pw.PDL)  # the same kernel, compiled for PDL
        key = (kernel, str(sorted(inst.items(), key=str)))
        if key in seen:
            continue
        seen.add(key)
        if kernel.startswith(("decode_split_", "decode_combine_")) and kernel not in ("decode_split_varlen",
                                                                                        "decode_split_tc"):
            kir = lower_kernel(variants, kernel, inst, {n: ArgFact(dt, shape, tile) for n, dt, shape, tile in params})
        else:
            kir = lower_kernel(program, f"std::attention::{kernel}", inst,
                               {n: ArgFact(dt, shape, tile) for n, dt, shape, tile in params})
        # the prewarm names exactly the kernel's tensor parameters
        assert {p.name for p in kir.tensor_params} == {n for n, _, _, _ in params}


def test_the_forms_probe_prewarms_what_it_launches() -> None:
    # benchmarks/decode_forms.py's launches (the prewarm's `--only forms`): each
    # lowers with exactly the kernel's tensor parameters; the merge of every
    # configuration also for PDL, the FMA split too (its "both" form), the tc splits not
    import tilelang
    from tilelang.ir.lower import lower_kernel
    from tilelang.runtime.launch import ArgFact

    pw = _script("attention_prewarm")
    forms = _script("decode_forms")
    program = tilelang.compile("use std::attention::*;\n")._program
    variants = tilelang.load(str(ROOT / "benchmarks" / "attention_variants.tile"))._program
    launches = forms.launches()
    names = [k for k, _, _ in launches]
    assert set(names) == {"decode_split", "decode_split+pdl", "decode_split_tc", "decode_split_tc6",
                          "decode_split_h2", "decode_split_queue", "decode_combine", "decode_combine+pdl"}
    configs = sum(len(c) for c in forms.CONFIGS.values())
    assert names.count("decode_combine") == names.count("decode_combine+pdl") == configs
    for kernel, inst, params in launches:
        facts = {n: ArgFact(dt, shape, tile) for n, dt, shape, tile in params}
        if kernel in ("decode_split_tc6", "decode_split_h2", "decode_split_queue"):  # attention_variants.tile's
            kir = lower_kernel(variants, kernel, inst, facts)
        else:
            kir = lower_kernel(program, f"std::attention::{kernel.removesuffix(pw.PDL)}", inst, facts)
        assert {p.name for p in kir.tensor_params} == {n for n, _, _, _ in params}
    # the share counts the configurations ask for are the ones planned
    assert forms.plan_for(32768, "fma", 66)[1:] == (66, 8) and forms.plan_for(32768, "tc", 16)[1:] == (16, 16)


def test_the_forms_probe_smoke(tmp_path: Path) -> None:
    # every form of every configuration on the interpreter: right, and the same numbers
    pytest.importorskip("torch")
    assert _script("decode_forms").main(["--smoke", "--reps", "1", "--rounds", "1", "--out", str(tmp_path)]) == 0
    rows = json.loads((tmp_path / "decode_forms.json").read_text())
    assert len(rows) == 7 and all(r["err"] < 1e-2 for r in rows)
    assert all(all(r["same"].values()) and all(r["same_after"].values()) for r in rows)
    assert {tuple(sorted(r["us"])) for r in rows} == {("both", "merge", "plain", "split"), ("merge", "plain", "split")}


def test_attention_benchmark_smoke(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    spec = importlib.util.spec_from_file_location("attention_bench", ROOT / "benchmarks" / "attention.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    assert bench.main(["--smoke", "--reps", "2", "--out", str(tmp_path), "--split", "ab"]) == 0
    rows = json.loads((tmp_path / "attention.json").read_text())["rows"]
    assert {r["kind"] for r in rows} == {"prefill", "decode"}
    assert all(r["err"] < 1e-2 and r["tile_ms"] > 0 for r in rows)
    assert "| shape | Tile | SDPA |" in (tmp_path / "attention.md").read_text()


@pytest.mark.parametrize("name", ["w1", "w2", "w1n"])
def test_merge_variants_agree_with_the_library(name: str) -> None:
    # the sweep's merges with fewer warps compute std's decode_combine
    import numpy as np

    import tilelang

    std = tilelang.compile("use std::attention::decode_combine;\n")
    variants = tilelang.load(str(ROOT / "benchmarks" / "attention_variants.tile"))
    rng = np.random.default_rng(5)
    g, ns, d, dc, splits = 4, 8, 64, 16, 6
    o_part = rng.standard_normal((3, splits * g, d)).astype(np.float32)
    lse_part = (4 * rng.standard_normal((3, splits * g))).astype(np.float32)
    lse_part[1, :g] = -1.0e30  # a split that saw no key: weight 0
    outs = []
    for kern in (std.decode_combine, getattr(variants, f"decode_combine_{name}")):
        o = np.zeros((3, g, d), np.float16)
        kern["f16", g, ns, dc](tilelang.partition(o, [1, g, dc]), o_part, lse_part).sync()
        outs.append(o)
    w = np.exp2(lse_part.reshape(3, splits, g, 1) - lse_part.reshape(3, splits, g, 1).max(1, keepdims=True))
    want = (w * o_part.reshape(3, splits, g, d)).sum(1) / w.sum(1)
    np.testing.assert_array_equal(outs[1], outs[0])
    np.testing.assert_allclose(outs[1].astype(np.float64), want, rtol=2e-3, atol=2e-3)


def test_the_ablations_baseline_is_attention_and_each_ablation_is_not() -> None:
    # benchmarks/attention_variants.tile's prefill ablations: ab0 (the key loop
    # without masks) computes std's attention on full rows of whole blocks, and
    # each of ab1..ab4 leaves out a part whose absence shows in the result
    import numpy as np

    import tilelang

    std = tilelang.compile("use std::attention::flash_attention;\n")
    variants = tilelang.load(str(ROOT / "benchmarks" / "attention_variants.tile"))
    rng = np.random.default_rng(3)
    q, k, v = ((2 * rng.standard_normal((2, 128, 64))).astype(np.float16) for _ in range(3))
    outs = {}
    for name, kern in [("std", std.flash_attention)] + [(f"ab{i}", getattr(variants, f"flash_attention_ab{i}"))
                                                       for i in range(5)]:
        o = np.zeros_like(q)
        kern["f16", 64, 64, 64](tilelang.partition(o, [1, 64, 64]), q, k, v, 0.125, False).sync()
        outs[name] = o.astype(np.float64)
    np.testing.assert_allclose(outs["ab0"], outs["std"], rtol=2e-3, atol=2e-3)
    for i in range(1, 5):
        assert not np.allclose(outs[f"ab{i}"], outs["std"], rtol=5e-2, atol=5e-2), i  # (ab3 overflows here: NaN)


def _variant_and_std(variant: str, q, k, v, scale: float, causal: bool):  # type: ignore[no-untyped-def]
    """The f16 outputs (as f64) of attention_variants.tile's `variant` and of
    std::attention::flash_attention on the interpreter, 64 x 64 blocks at
    D = 64, each into an output preset to NaN."""
    import numpy as np

    import tilelang

    std = tilelang.compile("use std::attention::flash_attention;\n")
    variants = tilelang.load(str(ROOT / "benchmarks" / "attention_variants.tile"))
    outs = []
    for kern in (getattr(variants, variant), std.flash_attention):
        o = np.full_like(q, np.nan)
        kern["f16", 64, 64, 64](tilelang.partition(o, [1, 64, 64]), q, k, v, scale, causal).sync()
        outs.append(o.astype(np.float64))
    return outs


@pytest.mark.parametrize(("sq", "sk", "scale", "causal"), [(100, 150, 0.125, True), (150, 90, -0.3, True),
                                                          (70, 70, 0.0, False), (128, 128, 0.125, False)])
def test_std_prefill_computes_what_its_previous_form_did(sq: int, sk: int, scale: float, causal: bool) -> None:
    # std::attention::flash_attention (`attend_prefill`: one softmax after the branches
    # that rewrite the raw scores) against its previous form, attention_variants.tile's
    # flash_attention_b (`attend`): masks at the edges, causal with S_q != S_k (rows
    # that see no key), scales <= 0
    import numpy as np

    rng = np.random.default_rng(sq + sk)
    q = rng.standard_normal((2, sq, 64)).astype(np.float16)
    k, v = (rng.standard_normal((2, sk, 64)).astype(np.float16) for _ in range(2))
    outs = _variant_and_std("flash_attention_b", q, k, v, scale, causal)
    assert np.isfinite(outs[1]).all()
    np.testing.assert_allclose(outs[1], outs[0], rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize(("sq", "sk", "scale", "causal"), [(100, 150, 0.125, True), (150, 90, -0.3, True),
                                                          (200, 300, 1.5, False)])
def test_std_prefills_stale_max_computes_the_exact_max_form(sq: int, sk: int, scale: float, causal: bool) -> None:
    # std's prefill (a row's max moves only when a block's passes it by 2^8)
    # against attention_variants.tile's flash_attention_p (the exact running max,
    # std's form before): the same softmax; rows that see no key, scales <= 0, and
    # a scale of 1.5 with later keys scaled by 3 (a max that grows past the
    # threshold: the rescale path)
    import numpy as np

    rng = np.random.default_rng(sq + 2 * sk)
    q = rng.standard_normal((2, sq, 64)).astype(np.float16)
    k, v = (rng.standard_normal((2, sk, 64)).astype(np.float16) for _ in range(2))
    k[:, 64:] *= 3
    outs = _variant_and_std("flash_attention_p", q, k, v, scale, causal)
    assert np.isfinite(outs[1]).all()
    np.testing.assert_allclose(outs[1], outs[0], rtol=3e-3, atol=3e-3)
