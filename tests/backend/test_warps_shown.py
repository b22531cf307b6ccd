"""What a kernel's warps are where the source names none, said as they run (hfix6).

`tilec emit --stage ir` printed the IR's `warps 4` for kernels `lift.default_warps` runs at 1 or 2 (hcliff9's
fewer warps for small tiles) or raises for big ones: it now prints the warps the backend's rule takes, with a
line that says they are its choice, and for a kernel with a product, whose pipeline may take others per target,
says so. The autotuner's fallback (no candidate could run) recorded the IR's `num_warps` as a configuration,
which marks it given: the kernel then ran pinned at 4 instead of at the rule's warps; it now records only the
hints the kernel gives itself."""

from __future__ import annotations

import dataclasses

import pytest

from tilelang import driver
from tilelang.backend import lower_gpu
from tilelang.tuner.host import fallback_hints
from tilelang.tuner.space import hinted_fields

ROWS = """
HINT
kernel fn rows<const N: i32>(y: &mut Tensor<f32, [1, N]>, x: &Tensor<f32, [?, N]>) {
    let t = x.load_like(y);
    y.store(t * 2.0);
}

fn main() {
    let x = zeros::<f32>([3, SIZE]);
    let mut y = zeros::<f32>([3, SIZE]);
    rows(y.partition([1, SIZE]), &x).sync();
}
"""

GEMM = """
kernel fn mm<const BM: i32, const BN: i32, const BK: i32>(c: &mut Tensor<f32, [BM, BN]>,
        a: &Tensor<f16, [?, ?]>, b: &Tensor<f16, [?, ?]>) {
    let pa = a.partition([BM, BK]);
    let pb = b.partition([BK, BN]);
    let mut acc = zeros::<f32>([BM, BN]);
    for k in 0..pa.num_tiles(1) {
        acc = mma(pa.load([block_id(0), k]), pb.load([k, block_id(1)]), acc);
    }
    c.store(acc);
}

fn main() {
    let a = zeros::<f16>([256, 256]);
    let b = zeros::<f16>([256, 256]);
    let mut c = zeros::<f32>([256, 256]);
    mm::<128, 128, 64>(c.partition([128, 128]), &a, &b).sync();
}
"""


@pytest.fixture(autouse=True)
def _default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TILEC_DEFAULT_WARPS", raising=False)
    monkeypatch.delenv("TILEC_FEWER_WARPS", raising=False)


def _emit_ir(src: str) -> str:
    result = driver.compile(src, "ir")
    assert result.ok, result.diagnostics
    return driver.format_output("ir", result)


def _rows(size: int, hint: str = "") -> str:
    return ROWS.replace("HINT", hint).replace("SIZE", str(size))


@pytest.mark.parametrize(("size", "warps"), [(64, 1), (256, 2), (16384, 8)])
def test_emit_ir_prints_the_warps_that_run(size: int, warps: int) -> None:
    text = _emit_ir(_rows(size))
    assert f" warps {warps} stages " in text, text
    assert f"// warps {warps}: the backend's choice for this kernel's tiles" in text, text
    k = driver.compile(_rows(size), "ir").output[0]
    assert lower_gpu(k, "sm_90a").num_warps == warps  # what runs
    assert lower_gpu(k, "sm_80").num_warps == warps


def test_emit_ir_prints_given_warps_as_they_are() -> None:
    text = _emit_ir(_rows(64, "#[hints(num_warps = 4)]"))
    assert " warps 4 stages " in text and "// warps" not in text, text
    text = _emit_ir(_rows(512))  # 4 is the rule's choice too: nothing to say
    assert " warps 4 stages " in text and "// warps" not in text, text


def test_emit_ir_says_a_products_pipeline_may_take_other_warps() -> None:
    text = _emit_ir(GEMM)
    assert " warps 4 stages " in text, text
    assert "// warps 4 unless the target's pipeline for the product takes others (`--stage gpu` shows them)" in text
    k = driver.compile(GEMM, "ir").output[0]
    assert lower_gpu(k, "sm_90a").num_warps != 4  # (the Hopper GEMM's warpgroups: why the line is there)


def test_switched_off_the_ir_keeps_its_four(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TILEC_FEWER_WARPS", "0")
    text = _emit_ir(_rows(64))
    assert " warps 4 stages " in text and "// warps" not in text, text


@pytest.mark.parametrize(("hint", "warps"), [("", 1), ("#[hints(num_warps = 8)]", 8)])
def test_the_tuners_fallback_leaves_the_warps_to_the_rule(hint: str, warps: int) -> None:
    k = driver.compile(_rows(64, hint), "ir").output[0]
    fields = hinted_fields(k, fallback_hints(k))
    assert fields == {}  # the kernel as it is: no hint marked given that the source did not give
    assert lower_gpu(dataclasses.replace(k, **fields), "sm_90a").num_warps == warps
    old = {"num_warps": k.num_warps, "stages": k.num_stages, "max_blocks": k.max_blocks}  # (the old fallback)
    pinned = lower_gpu(dataclasses.replace(k, **hinted_fields(k, old)), "sm_90a").num_warps
    assert pinned == (4 if not hint else 8)


def test_the_repl_shows_the_ir_as_emit_does() -> None:
    from tilelang.repl import ReplSession

    s = ReplSession(device="cpu")
    src = _rows(64)
    items, main = src.split("fn main() {")
    assert s.feed(items.strip()).ok
    assert s.feed(main.strip().rstrip("}").strip()).ok
    out = s.feed(":ir rows").stdout
    assert out.startswith("// warps 1: the backend's choice") and " warps 1 stages " in out, out
