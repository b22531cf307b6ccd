"""`benchmarks/cliffs.py --dry` (no GPU): every case of `cliffs_cases.py` lowers for sm_90a, and the path each takes
is the one the tuned kernels take (std::attention 128x128: the attention pipeline; the GEMM loop: the wgmma
pipeline) or a slower one that the benchmark names."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import cliffs  # noqa: E402
import cliffs_cases  # noqa: E402


def _path(name: str) -> str:
    from tilelang.backend import lower_gpu

    case = next(c for c in cliffs_cases.all_cases() if c.name == name)
    kir = cliffs.kernel_ir(case)
    return cliffs.path_of(lower_gpu(kir, "sm_90a", cliffs.launch_facts(case, kir)))


def test_the_cases_have_distinct_names_and_every_kind() -> None:
    cases = cliffs_cases.all_cases()
    assert len({c.name for c in cases}) == len(cases)
    assert {c.kind for c in cases} == {"gemm", "attn", "rows"}


@pytest.mark.parametrize(("name", "path"), [
    ("std::attention f16 D=128 128x128", "attention-pipeline"),
    ("user attn f16 D=128 128x128", "attention-pipeline"),
    ("user attn_exp2 f16 D=128 128x128", "attention-pipeline"),
    ("user attn_fma f16 D=128 128x128", "attention-pipeline"),  # the scale in the exponent's fma (hattn3)
    ("user attn_fma f16 D=64 128x64", "attention-pipeline"),
    ("gemm f16 4096x4096x4096 128x128x64", "wgmma-pipeline"),
    ("gemm_nt bf16 64x4096x4096 64x128x64", "wgmma-pipeline"),
    ("gemm_dot f16 4096x4096x4096 128x128x64", "wgmma-pipeline"),  # `acc + dot`: mma_select.fold_dot_adds
    ("std::attention f16 D=128 128x256", "attention-pipeline"),  # one K/V stage
    ("user attn_qscale f16 D=128 128x128", "attention-pipeline"),  # Q transformed in smem: passes/attention_qx
    ("user attn_bias f16 D=128 128x128", "attention-pipeline"),  # the bias loaded by the consumers
    ("user attn_res f16 D=128 128x128", "attention-pipeline"),  # the residual loaded in the epilogue (hattn2)
    ("user attn_dot f16 D=128 128x128", "attention-pipeline"),  # `acc * alpha + dot`: folded (mma_select)
    ("user attn_causal f16 D=128 128x128", "attention-pipeline"),  # the mask on diagonal blocks (attention_edge)
    ("std::attention f16 D=128 128x128 causal", "attention-pipeline"),
    ("std::attention f16 D=128 192x128", "attention-pipeline"),  # three consumer warpgroups, producer at 24
    ("linear+bias+relu f16 4096x4096x4096 128x128x64", "wgmma-pipeline"),  # g.AccLoad
    ("softmax rows of 32768", "generic"),
    ("softmax rows of 4096", "generic"),
])
def test_a_case_takes_its_path(name: str, path: str) -> None:
    assert _path(name).split()[0] == path  # (path_of ends with the warps and a pipeline's stages)


def test_dry_prints_a_line_a_case(capsys: pytest.CaptureFixture[str]) -> None:
    assert cliffs.main(["--dry", "--only", "rows"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 4 and all(" path generic" in x for x in lines)


@pytest.mark.parametrize(("name", "label"), [
    ("gemm f16 4096x4096x4096 128x512x32", "wgmma-pipeline 12w 5s"),  # two column parts (was sm_80's ring)
    ("gemm f16 4096x4096x4096 128x128x32", "wgmma-pipeline 8w 8s"),  # small stages: a deeper ring
    ("gemm f16 4096x4096x4096 128x128x64", "wgmma-pipeline 8w 4s"),
    ("softmax rows of 32768", "generic 16w"),  # default warps
    ("softmax rows of 4096", "generic 4w"),
])
def test_a_case_takes_its_warps_and_stages(name: str, label: str) -> None:
    from tilelang.backend import lower_gpu

    case = next(c for c in cliffs_cases.all_cases() if c.name == name)
    kir = cliffs.kernel_ir(case)
    assert cliffs.path_of(lower_gpu(kir, "sm_90a", cliffs.launch_facts(case, kir))) == label
