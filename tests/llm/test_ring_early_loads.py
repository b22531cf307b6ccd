"""`attn_decode_ring_early` at EA 7 (`ring_split_first`, `Plan.ea = 7`) under
PDL "+loads": the position, the key range, the ring's first copies of K and
V and the tables' loads lead the kernel, so they come before its
`griddepcontrol.wait` when the runtime finds the launch before it (the QKV
GEMV) writes none of those tensors; the query's and the token's rows (the
QKV GEMV's output) after it. No GPU: the PTX at Qwen3's decode shapes,
assembled for sm_90a."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from gpu_probe import nvdisasm_path
from test_gemv_registers import _facts

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples" / "llm"))

from engine import load_kernels, plan_for  # noqa: E402
from model import Qwen3Config  # noqa: E402

import tilelang  # noqa: E402
from tilelang.backend import compile_kernel  # noqa: E402
from tilelang.backend.target import Target, ptxas_available  # noqa: E402

P = tilelang.partition
EARLY = {"pos_t", "kc", "vc", "qn", "kn", "cos", "sin"}  # all but `qkv` and the partials


def _ring(ea: int, early: set[str], model: str = "4b"):  # type: ignore[no-untyped-def]
    cfg = Qwen3Config.load(f"qwen3-{model}")
    plan = plan_for(cfg, 2048, 132, hopper=True)
    g, d, hkv, layers, s = cfg.group, cfg.head_dim, cfg.num_key_value_heads, 2, 64
    z, f = np.zeros, np.float32
    op = load_kernels().attn_decode_ring_early[g, d // 2, plan.bt, 0, ea](
        P(z((hkv, plan.ns * g, d), f), [1, g, d]), P(z((hkv, plan.ns * g), f), [1, g]),
        z(((g + 2) * hkv, 2, d // 2), f), z((layers, d), f), z((layers, d), f), z((s, d // 2), f),
        z((s, d // 2), f), z((layers * hkv, s, d), f), z((layers * hkv, s, d), f), np.array([s - 1], np.int32),
        1, 1e-6)
    op.discard()  # compiled, never run
    kir = op._plan.kir
    facts = _facts(op, early=early)
    return compile_kernel(kir, Target("sm_90a", pdl=True, pdl_trigger="late", pdl_prefetch="loads"), facts).ptx


@pytest.mark.parametrize("model", ["4b", "0.6b"])
def test_ring_copies_come_before_the_wait(model: str) -> None:
    ptx = _ring(7, EARLY, model)
    body = ptx[ptx.index(".entry"):]
    wait = body.index("griddepcontrol.wait;")
    assert body.count("griddepcontrol.wait;") == 1
    # the first 3 key blocks' K and V copies, each a commit group, before the wait
    assert body[:wait].count("cp.async.commit_group") == 3
    assert body[:wait].count("cp.async.cg.shared.global") >= 6
    # the position and the tables (plain loads: an `.nc` one ptxas would sink
    # below the wait), nothing of `qkv`: its loads are all after
    assert len([m for m in body[:wait].split("\n") if "ld.global" in m]) >= 5 and "ld.global.nc" not in body[:wait]
    assert body.index("griddepcontrol.launch_dependents;") > wait
    if ptxas_available():
        from ptxas_report import assemble

        r = assemble(ptx, "sm_90a")
        assert r.max_spill_stores == 0, r.text


@pytest.mark.parametrize(("ea", "early"), [(3, EARLY), (7, set())])
def test_without_the_order_or_the_facts_the_ring_waits_first(ea: int, early: set[str]) -> None:
    # EA 3 loads the query's rows before the key range (the wait comes before
    # them, so before every copy); EA 7 without the runtime's facts waits at entry
    ptx = _ring(ea, early)
    body = ptx[ptx.index(".entry"):]
    wait = body.index("griddepcontrol.wait;")
    assert "cp.async.cg.shared.global" not in body[:wait]



def test_ring_copies_stay_before_the_wait_in_the_sass() -> None:
    # ptxas sank `ld.global.nc` below `griddepcontrol.wait` (SASS `ACQBULK`,
    # RESULTS 2026-12-03); the ring's copies (LDGSTS) and the plain loads of
    # `pos` and the tables stay above it
    import re
    import subprocess
    import tempfile

    nvd = nvdisasm_path()
    if not ptxas_available() or nvd is None:
        pytest.skip("needs ptxas and nvdisasm")
    from ptxas_report import assemble

    with tempfile.TemporaryDirectory() as tmp:
        cubin = Path(tmp) / "k.cubin"
        assemble(_ring(7, EARLY), "sm_90a", cubin=cubin)
        sass = subprocess.run([nvd, "-c", str(cubin)], capture_output=True, text=True, check=True).stdout
    assert sass.count("ACQBULK") == 1
    before, after = sass.split("ACQBULK")
    assert len(re.findall(r"\bLDGSTS\b", before)) >= 6 and len(re.findall(r"\bLDGDEPBAR\b", before)) == 3
    assert len(re.findall(r"\bLDG\.E", before)) >= 5 and "BAR.SYNC" not in before
    assert re.search(r"\bLDG\.E", after)  # the query's and the token's rows
