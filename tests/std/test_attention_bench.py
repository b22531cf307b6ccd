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
    assert capsys.readouterr().out.count("err ") == 6
    assert _script("attention_sanitize").main(["cpu", "decode"]) == 0
    assert capsys.readouterr().out.count("err ") == 2


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
                                           "decode_combine+pdl"}
    seen = set()
    for kernel, inst, params in launches:
        kernel = kernel.removesuffix(pw.PDL)  # the same kernel, compiled for PDL
        key = (kernel, str(sorted(inst.items(), key=str)))
        if key in seen:
            continue
        seen.add(key)
        if kernel.startswith("decode_split_") and kernel != "decode_split_varlen":
            kir = lower_kernel(variants, kernel, inst, {n: ArgFact(dt, shape, tile) for n, dt, shape, tile in params})
        else:
            kir = lower_kernel(program, f"std::attention::{kernel}", inst,
                               {n: ArgFact(dt, shape, tile) for n, dt, shape, tile in params})
        # the prewarm names exactly the kernel's tensor parameters
        assert {p.name for p in kir.tensor_params} == {n for n, _, _, _ in params}


def test_attention_benchmark_smoke(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    spec = importlib.util.spec_from_file_location("attention_bench", ROOT / "benchmarks" / "attention.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    assert bench.main(["--smoke", "--reps", "2", "--out", str(tmp_path)]) == 0
    rows = json.loads((tmp_path / "attention.json").read_text())["rows"]
    assert {r["kind"] for r in rows} == {"prefill", "decode"}
    assert all(r["err"] < 1e-2 and r["tile_ms"] > 0 for r in rows)
    assert "| shape | Tile | SDPA |" in (tmp_path / "attention.md").read_text()
