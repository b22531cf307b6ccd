"""The products pipeline (`passes/pipeline_products.py`, hcliff4 2026-12-06): a loop of several mma.sync
products on cp.async rings, every value of its body in the products' C-fragment layout in registers.

tests/user a01's attention-backward dQ loop (S = Q K^T, dP = dO V^T, dQ += dS K) was taken by no pipeline: each
product staged its operands through shared memory between two barriers and its tiles were loaded into registers
an iteration at a time (H100, call 22: 0.07x of SDPA's backward, 255 registers and ~700 B of spills a thread).
Checked here: the path and its notes, the GPU IR (no conversion, one ring a tile the loop loads), ptxas (no
spills), and llsim (sm_80 and sm_90a) against the interpreter; a loop of two accumulators (a gate and an up
projection of one A) and a loop the pipeline refuses, with the note saying why.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
A01 = ROOT / "tests" / "user" / "programs" / "a01_gqa_attention_backward_dq.tile"
DKDV = HERE / "programs" / "attn_dkdv.tile"  # FlashAttention-2's dK/dV loop: 4 products, 2 accumulators


def _dq(bm: int, bn: int, d: int, s: int, g: int = 2) -> str:
    src = A01.read_text(encoding="utf-8")
    return src[:src.index("// the forward")] + f"""
fn main() {{
    let q = randn::<f16>([4, {s}, {d}], 1);
    let k = randn::<f16>([{4 // g}, {s}, {d}], 2);
    let v = randn::<f16>([{4 // g}, {s}, {d}], 3);
    let d_o = randn::<f16>([4, {s}, {d}], 4);
    let lse = randn::<f32>([4, {s}], 5) + 4.0;
    let delta = randn::<f32>([4, {s}], 6) * 0.1;
    let mut dq = zeros::<f32>([4, {s}, {d}]);
    attn_dq::<{bm}, {bn}, {d}, {g}>(dq.partition([1, {bm}, {d}]), &q, &k, &v, &d_o, &lse, &delta, 0.17677669).sync();
    print(dq.sum(), dq.abs().sum(), dq.max(), dq.min(), (dq * dq).sum());
}}
"""


GATE_UP = """
kernel fn gate_up<const BM: i32, const BN: i32, const BK: i32>(h: &mut Tensor<f32, [BM, BN]>,
        x: &Tensor<f16, [?, ?]>, wg: &Tensor<f16, [?, ?]>, wu: &Tensor<f16, [?, ?]>) {
    let i = block_id(0);
    let j = block_id(1);
    let px = x.partition([BM, BK]);
    let pg = wg.partition([BK, BN]);
    let pu = wu.partition([BN, BK]);
    let mut g = zeros::<f32>([BM, BN]);
    let mut u = zeros::<f32>([BM, BN]);
    for kk in 0..(x.shape()[1] + BK - 1) / BK {
        let a = px.load([i, kk]);
        g = mma(a, pg.load([kk, j]), g);
        u = mma(a, pu.load([j, kk]).transpose(), u);
    }
    h.store(g * sigmoid(g) * u);
}

fn main() {
    let x = randn::<f16>([96, 80], 1);
    let wg = randn::<f16>([80, 64], 2) * 0.1;
    let wu = randn::<f16>([64, 80], 3) * 0.1;
    let mut h = zeros::<f32>([96, 64]);
    gate_up::<32, 32, 32>(h.partition([32, 32]), &x, &wg, &wu).sync();
    print(h.sum(), h.abs().sum(), h.max(), h.min(), (h * h).sum());
}
"""


def _gate_up64() -> str:
    """`GATE_UP` at 64 x 64 x 64 (wgmma's tiles: whole 64-column slabs), x [128, 80] (K = 80 ends in a block)."""
    src = GATE_UP.replace("gate_up::<32, 32, 32>(h.partition([32, 32])", "gate_up::<64, 64, 64>(h.partition([64, 64])")
    src = src.replace("randn::<f16>([96, 80], 1)", "randn::<f16>([128, 80], 1)")
    return src.replace("zeros::<f32>([96, 64])", "zeros::<f32>([128, 64])")


def _kernel(src: str, name: str, arch: str):  # type: ignore[no-untyped-def]
    from tilelang import driver
    from tilelang.backend import lower_gpu

    k = next(x for x in driver.compile(src, "ir").output if x.name == name)
    return lower_gpu(k, arch, {})


def _ops(gk):  # type: ignore[no-untyped-def]
    from tilelang.backend.gpu import nodes as g

    return list(g.walk(gk.body))


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
@pytest.mark.parametrize("tile", [(32, 16, 32), (64, 64, 128)])
def test_the_dq_loop_takes_the_products_pipeline(arch: str, tile: tuple[int, int, int],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """mma.sync's form (`TILEC_PRODUCTS_WGMMA=0` on sm_90a, where wgmma is the default since hwg)."""
    from tilelang.backend import explain
    from tilelang.backend.gpu import nodes as g

    monkeypatch.setenv("TILEC_PRODUCTS_WGMMA", "0")
    bm, bn, d = tile
    gk = _kernel(_dq(bm, bn, d, 2 * bm), "attn_dq", arch)
    assert explain.path_of(gk) == "products-pipeline"
    assert explain.refusals(gk) == []
    ops = _ops(gk)
    mmas = [o for o in ops if isinstance(o, g.RingMma)]
    assert len(mmas) == 3
    # Q and dO in one buffer each (copied once), K and V in rings of 2; K read by two products
    bufs = {o.result.hint: o.result.shape for o in ops if isinstance(o, g.SmemAlloc)}
    assert bufs == {"s_q": (1, bm, d), "s_d_o": (1, bm, d), "s_k": (2, bn, d), "s_v": (2, bn, d)}
    s, dp, dq = mmas
    assert s.b_nk and dp.b_nk and not dq.b_nk and s.b.id == dq.b.id
    assert s.a_stage is not None and dp.a_stage is not None
    assert dq.a_stage is None and dq.dtype is not None  # dS rounded to f16 in registers as its fragments pack
    assert not any(isinstance(o, g.ConvertLayout | g.DotOp) for o in ops)
    assert gk.num_warps == bm // 16 and gk.num_stages == 2


@pytest.mark.heavy  # (htier1: `TILEC_PRODUCTS_WGMMA=0` on sm_90a is not the default; wgmma's kernel assembles in
# test_dq_on_wgmma_by_default, the same loop's mma.sync form runs in the simulator by default on sm_80)
def test_the_dq_kernel_assembles_without_spills(monkeypatch: pytest.MonkeyPatch) -> None:
    """mma.sync's (`TILEC_PRODUCTS_WGMMA=0`; wgmma's: `test_dq_on_wgmma_by_default`)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from ptxas_report import assemble

    from tilelang.backend import emit_ptx

    monkeypatch.setenv("TILEC_PRODUCTS_WGMMA", "0")
    gk = _kernel(_dq(64, 64, 128, 128, 4), "attn_dq", "sm_90a")
    r = assemble(emit_ptx(gk, "sm_90a"), "sm_90a")
    # 64 x 64, D = 128: 249 registers (before: 255 and ~700 B of spills a thread)
    assert r.max_spill_stores == 0, r.text
    assert r.registers[0] * 128 * 2 <= 65536  # two CTAs an SM (96 KB of shared memory each)


def test_the_switch_turns_it_off(monkeypatch: pytest.MonkeyPatch) -> None:
    from tilelang.backend import explain

    monkeypatch.setenv("TILEC_PRODUCTS_PIPELINE", "0")
    gk = _kernel(_dq(32, 16, 32, 64), "attn_dq", "sm_90a")
    assert explain.path_of(gk) == "mma.sync"
    # (with no facts, `k` and `v` are not known to be 16-byte rows: `stream_mma`'s load ring says so too)
    (note,) = [n for n in explain.refusals(gk) if "load ring" not in n.message]
    assert "the loop holds 3 products" in note.message


def _sim(src: str, arch: str, monkeypatch: pytest.MonkeyPatch) -> list[float]:
    sys.path.insert(0, str(HERE))
    import llsim

    import tilelang.run as run

    got = io.StringIO()
    with monkeypatch.context() as m:
        m.setattr(run, "make_device", lambda choice, out: llsim.sim_runtime_device(arch))
        run.execute(src, "cpu", out=got, name="p.tile")
    return [float(x) for x in got.getvalue().split()]


def _interp(src: str) -> list[float]:
    import tilelang.run as run

    want = io.StringIO()
    run.execute(src, "cpu", out=want, name="p.tile")
    return [float(x) for x in want.getvalue().split()]


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_the_simulated_dq_kernel_computes_the_interpreters_values(arch: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """S = 80 rows: the last query block and key block run past the end (zero-filled copies, masked rows). The
    interpreter's exp and the f16 rounding of dS are the GPU's to f32's last bits, not bit for bit."""
    src = _dq(32, 16, 32, 80)
    want = _interp(src)
    got = _sim(src, arch, monkeypatch)
    assert got == pytest.approx(want, rel=2e-5), (got, want)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_two_accumulators_of_one_a(arch: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A gate and an up projection of one A tile (the Hopper GEMM pipeline takes one product a loop): one ring
    for A read by both products, a ring each for the B tiles (one transposed); K = 80 ends inside a block."""
    from tilelang.backend import explain
    from tilelang.backend.gpu import nodes as g

    gk = _kernel(GATE_UP, "gate_up", arch)
    assert explain.path_of(gk) == "products-pipeline"
    mmas = [o for o in _ops(gk) if isinstance(o, g.RingMma)]
    assert len(mmas) == 2 and mmas[0].a.id == mmas[1].a.id and [m.b_nk for m in mmas] == [False, True]
    want = _interp(GATE_UP)
    assert _sim(GATE_UP, arch, monkeypatch) == pytest.approx(want, rel=1e-5)


def test_a_loop_it_refuses_says_why() -> None:
    """A loop of three products whose carried value is not a product's accumulator (a column sum of a third
    product added to it): the loop keeps its path and the note says why. (A loop of two products that carries
    more is an attention loop, whose own pipeline's notes speak: no note from this one.)"""
    from tilelang.backend import explain

    src = GATE_UP.replace("u = mma(a, pu.load([j, kk]).transpose(), u);",
                          "let z = mma(a, pg.load([kk, j]), zeros::<f32>([BM, BN]));\n"
                          "        u = mma(a, pu.load([j, kk]).transpose(), u) + z.sum(0).reshape([1, BN]);")
    assert src != GATE_UP
    gk = _kernel(src, "gate_up", "sm_90a")
    assert explain.path_of(gk) == "mma.sync"
    notes = [n.message for n in explain.refusals(gk) if "products pipeline" in n.message]
    assert notes and "accumulator" in notes[0], notes
    two = GATE_UP.replace("u = mma(a, pu.load([j, kk]).transpose(), u);",
                          "u = mma(a, pu.load([j, kk]).transpose(), u) + g.sum(0).reshape([1, BN]);")
    assert two != GATE_UP
    gk = _kernel(two, "gate_up", "sm_90a")
    assert explain.path_of(gk) == "mma.sync"
    assert not [n for n in explain.refusals(gk) if "products pipeline" in n.message]


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_the_dk_dv_loop_of_four_products(arch: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The other half of FlashAttention-2's backward as a user writes it: a KV block a tile, a loop over query
    blocks with S^T = K Q^T, dV += P^T dO, dP^T = V dO^T, dK += dS^T Q; Q and dO each read by two products (one
    transposed), lse and delta per query a column vector. S = 80 (the last query block past the end)."""
    from tilelang.backend import explain
    from tilelang.backend.gpu import nodes as g

    src = DKDV.read_text(encoding="utf-8")
    gk = _kernel(src, "attn_dkdv", arch)
    assert explain.path_of(gk) == "products-pipeline" and explain.refusals(gk) == []
    mmas = [o for o in _ops(gk) if isinstance(o, g.RingMma)]
    assert len(mmas) == 4 and sum(m.a_stage is None for m in mmas) == 2
    want = _interp(src)
    assert _sim(src, arch, monkeypatch) == pytest.approx(want, rel=2e-5)


def _dkdv(bm: int, bn: int, d: int, s: int) -> str:
    src = DKDV.read_text(encoding="utf-8")
    return src.replace("let s = 80;", f"let s = {s};").replace("let d = 32;", f"let d = {d};").replace(
        "attn_dkdv::<16, 32, 32>(dk.partition([1, 32, 32]), dv.partition([1, 32, 32])",
        f"attn_dkdv::<{bm}, {bn}, {d}>(dk.partition([1, {bn}, {d}]), dv.partition([1, {bn}, {d}])")


@pytest.mark.gpu
@pytest.mark.parametrize("case", ["dq 64x64 D128", "dq 128x64 D128", "dkdv 64x64 D64", "dkdv 64x64 D128", "gate_up",
                                  "dq 64x64 D128 mma.sync", "dq 128x64 D128 mma.sync", "dkdv 64x64 D64 mma.sync",
                                  "dkdv 64x64 D128 rows", "gate_up 64x64 wgmma", "dkdv 64x64 D128 wgmma",
                                  "dkdv 64x64 D128 mma.sync"])
def test_on_the_gpu_against_the_interpreter(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The benchmark's dQ blocks (hcliff4_device.sh; S = 200: edges), FA2's dK/dV at D = 64 and at D = 128 (the
    columns split: hcliff5_device.sh's blocks) and the gate/up loop on the GPU, as the defaults pick (on an sm_90
    card: wgmma where every shared B is K-major, since hwg; with the columns split too since call 33), with mma.sync
    (`TILEC_PRODUCTS_WGMMA=0`, the way back), dK/dV at D = 128 with the warps on rows (`TILEC_PRODUCTS_COLS=1`: on
    wgmma, one warpgroup) and forced to wgmma (`TILEC_PRODUCTS_WGMMA=1`: the gate/up pair's MN-major shared B; the
    columns split, wrong in call 32 until hwg's descriptor fix): the interpreter's statistics within f32's
    rounding of sums and the exp."""
    import tilelang.run as run

    big = case.startswith("gate_up 64x64")
    for suffix, var, value in ((" wgmma", "TILEC_PRODUCTS_WGMMA", "1"), (" mma.sync", "TILEC_PRODUCTS_WGMMA", "0"),
                               (" rows", "TILEC_PRODUCTS_COLS", "1"), (" 64x64", "", "")):
        if case.endswith(suffix):
            case = case[:-len(suffix)]
            if var:
                monkeypatch.setenv(var, value)

    src = {"dq 64x64 D128": _dq(64, 64, 128, 200), "dq 128x64 D128": _dq(128, 64, 128, 200),
           "dkdv 64x64 D64": _dkdv(64, 64, 64, 200), "dkdv 64x64 D128": _dkdv_weighted(64, 64, 128, 200),
           "gate_up": _gate_up64() if big else GATE_UP}[case]
    want = io.StringIO()
    run.execute(src, "cpu", out=want, name="p.tile")
    got = io.StringIO()
    ex = run.execute(src, "gpu", out=got, name="p.tile")
    assert ex.device.kind == "gpu"
    w, g_ = ([float(x) for x in s.getvalue().split()] for s in (want, got))
    # Sums weighted by randn cancel: the GPU's exp and f16 rounding leave ~2e-4 of such a sum (H100, call 28:
    # 3798.32 against 3798.71); a column in another's place moves it by its own size.
    assert g_ == pytest.approx(w, rel=1e-3 if "dkdv 64x64 D128" in case else 1e-4), (g_, w)


@pytest.mark.parametrize("case", ["dq bf16", "s05 batched, rows of 74 bytes"])
def test_bf16_and_element_copies(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """a01 in bf16 (the bf16 mma and the A fragments packed to bf16), and tests/user s05's batched bf16 GEMM
    pair (two accumulators of one A; K = 37: rows that are not whole 16-byte chunks, copied element by
    element into the ring, the last k tile partial): the interpreter's values (s05: bit for bit)."""
    from tilelang.backend import explain

    if case == "dq bf16":
        src = _dq(32, 16, 32, 80).replace("f16", "bf16").replace("bbf16", "bf16")
        name = "attn_dq"
    else:
        src = (ROOT / "tests" / "user" / "programs" / "s05_bmm_mixed_precision.tile").read_text(encoding="utf-8")
        src = src.replace("print(c.shape(), (c as f32).abs().max() > 1.0);",
                          "print((c as f32).sum(), ((c as f32) * (c as f32)).sum(), (ct as f32).sum());")
        name = "bmm"
    assert explain.path_of(_kernel(src, name, "sm_90a")) == "products-pipeline"
    want = _interp(src)
    got = _sim(src, "sm_90a", monkeypatch)
    assert got == (want if name == "bmm" else pytest.approx(want, rel=2e-5)), (got, want)


def test_a_value_that_would_move_keeps_the_kernel_as_it_was(monkeypatch: pytest.MonkeyPatch) -> None:
    """A column sum of dP in the loop (each warp holds its own rows: the sum would move values between warps):
    the pipeline refuses with a note naming the op, and the kernel is the one the path before it lowers (the
    shared `arange` it makes again in the loop for its own layouts left as it was)."""
    from tilelang.backend import explain
    from tilelang.backend.gpu.printer import print_gpu_kernel

    src = _dq(64, 64, 128, 128).replace("let ds = p * (dp - dl);",
                                         "let ds = p * (dp - dl) + dp.sum(0).reshape([1, BN]) * 0.5;")
    assert "dp.sum(0)" in src
    gk = _kernel(src, "attn_dq", "sm_90a")
    assert explain.path_of(gk) == "mma.sync"
    notes = [n.message for n in explain.refusals(gk) if "products pipeline" in n.message]
    assert notes and "would move values between threads" in notes[0], notes
    monkeypatch.setenv("TILEC_PRODUCTS_PIPELINE", "0")
    assert print_gpu_kernel(_kernel(src, "attn_dq", "sm_90a")) == print_gpu_kernel(gk)


def _dq_weighted(bm: int, bn: int, d: int, s: int, g: int = 2) -> str:
    """`_dq` printing sums weighted by a random tensor too (a column in another's place changes them)."""
    src = _dq(bm, bn, d, s, g)
    return src.replace("    print(dq.sum(),", f"    let w = randn::<f32>([4, {s}, {d}], 7);\n    print((dq * w).sum(), dq.sum(),")


def _dkdv_weighted(bm: int, bn: int, d: int, s: int) -> str:
    """`_dkdv` printing sums weighted by a random tensor too: a column put in another's place changes them."""
    src = _dkdv(bm, bn, d, s)
    return src.replace("    print(dk.sum(),", "    let w = randn::<f32>([h, s, d], 7);\n"
                       "    print((dk * w).sum(), (dv * w).sum(), dk.sum(),")


def test_dk_dv_at_d128_splits_the_columns_and_does_not_spill(monkeypatch: pytest.MonkeyPatch) -> None:
    """FlashAttention-2's dK/dV at 64 x 64, D = 128: two [64, 128] accumulators in 4 warps' rows took 128 registers
    a thread and spilled (255 registers, ~330 B). Now 8 warps, 4 row blocks of 2 column halves (`AccTile.cols`):
    P^T and dS^T, each in the two warps of its rows, are written to shared memory (`AccToSmem`, one barrier after
    the second) and read whole by dV's and dK's products, which come last in the body. On mma.sync: sm_80's
    path, and sm_90a's way back (`TILEC_PRODUCTS_WGMMA=0`; its default is wgmma since call 33:
    `test_dk_dv_on_wgmma_with_the_columns_split`)."""
    monkeypatch.setenv("TILEC_PRODUCTS_WGMMA", "0")
    sys.path.insert(0, str(ROOT / "tests"))
    from ptxas_report import assemble

    from tilelang.backend import emit_ptx, explain
    from tilelang.backend.gpu import nodes as g
    from tilelang.backend.gpu.layouts import AccTile
    from tilelang.ir import nodes as ir

    for arch in ("sm_80", "sm_90a"):
        gk = _kernel(_dkdv(64, 64, 128, 200), "attn_dkdv", arch)
        assert explain.path_of(gk) == "products-pipeline" and explain.refusals(gk) == []
        assert gk.num_warps == 8
        loop = next(o for o in gk.body.ops if isinstance(o, ir.For))
        body = list(loop.body.ops)
        mmas = [i for i, o in enumerate(body) if isinstance(o, g.RingMma)]
        writes = [i for i, o in enumerate(body) if isinstance(o, g.AccToSmem)]
        assert len(mmas) == 4 and len(writes) == 2
        assert [body[i].barrier for i in writes] == [False, True]  # type: ignore[attr-defined]
        assert mmas[2] == writes[1] + 1 and mmas[3] == writes[1] + 2  # dV's and dK's products after the barrier
        assert all(body[i].a_stage is not None for i in mmas)  # type: ignore[attr-defined]
        assert {gk.layouts[body[i].result.id] for i in mmas} == {AccTile(4, "", 2)}  # type: ignore[attr-defined]
        r = assemble(emit_ptx(gk, arch), arch)
        assert r.max_spill_stores == 0, r.text


@pytest.mark.parametrize("case", ["sm_80 cols=2", "sm_90a cols=2", pytest.param("sm_80 auto D=128", marks=pytest.mark.heavy),
                                  pytest.param("sm_90a cols=4", marks=pytest.mark.heavy)])
def test_the_simulated_split_columns_compute_the_interpreters_values(case: str,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The dK/dV loop with its columns split: forced at D = 32 (`TILEC_PRODUCTS_COLS=2`: 2 row blocks of 2 halves),
    by the rule at D = 128 (heavy: the rule's choice there is `test_dk_dv_at_d128_splits..`'s) and in quarters
    at D = 64 (4: 2 row blocks of 4 warps; heavy: no rule picks 4).
    One head, S = 80: the last query block past the end. Sums weighted by a random tensor, so a column in
    another's place would show."""
    from tilelang.backend import explain

    arch, rule = case.split(" ", 1)
    tile = {"auto D=128": (32, 32, 128), "cols=2": (32, 32, 32), "cols=4": (64, 32, 64)}[rule]
    if rule != "auto D=128":
        monkeypatch.setenv("TILEC_PRODUCTS_COLS", rule[-1])
    src = _dkdv_weighted(*tile, 80).replace("let h = 2;", "let h = 1;")
    gk = _kernel(src, "attn_dkdv", arch)
    assert explain.path_of(gk) == "products-pipeline"
    assert gk.num_warps == 2 * (4 if rule == "cols=4" else 2)
    want = _interp(src)
    assert _sim(src, arch, monkeypatch) == pytest.approx(want, rel=2e-5)


def test_a_row_sum_keeps_the_warps_on_rows() -> None:
    """A row's sum in the body (its columns in two warps would need shared memory): the warps split rows only,
    as before the split, and the pipeline still takes the loop (rows only: on wgmma by default on sm_90a)."""
    from tilelang.backend import explain

    src = _dkdv(64, 64, 128, 200).replace("let dst = pt * (dpt - dl);",
                                          "let dst = pt * (dpt - dl) + dpt.sum(1).reshape([BN, 1]) * 0.5;")
    assert "dpt.sum(1)" in src
    gk = _kernel(src, "attn_dkdv", "sm_90a")
    assert explain.path_of(gk) == "products-wgmma-pipeline" and gk.num_warps == 4


def test_dq_on_wgmma_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    """On sm_90a by default (hwg; hcliff5's `TILEC_PRODUCTS_WGMMA=1` before: H100 call 32, 516.8 TFLOP/s against
    mma.sync's 293.2, right): a01's three products as warpgroup MMAs. S and dP (both operands in
    shared memory) are issued together at the top of the body and waited for where they were (`wait_group` 1,
    then 0: dP runs under S's wait and the exp), dQ += dS K from dS's registers (`WgmmaRegA`); every tile in
    wgmma's 128-byte swizzle (64-column slabs: K is S's K-major B and dQ's MN-major B), the ring's copies fenced
    for the async proxy before the iteration's barrier. 64 x 64, D = 128: no spills, far fewer registers than
    mma.sync's 249 (ptxas 13: 168). sm_80 keeps mma.sync; `TILEC_PRODUCTS_WGMMA=0` is the way back. By default
    the columns split takes wgmma too (FA2's dK/dV at D = 128: H100 call 33, 0.807 ms against mma.sync's 1.19,
    right after hwg's descriptor fix); a product of two shared operands whose B is read MN-major (the gate/up
    pair's gate: right on the GPU, not timed) stays on mma.sync; "1" takes it."""
    sys.path.insert(0, str(ROOT / "tests"))
    from ptxas_report import assemble, hgmma_desc_faults, sass

    from tilelang.backend import emit_ptx, explain
    from tilelang.backend.gpu import nodes as g
    from tilelang.backend.gpu.layouts import Shared
    from tilelang.ir import nodes as ir

    monkeypatch.delenv("TILEC_PRODUCTS_WGMMA", raising=False)
    assert explain.path_of(_kernel(_dq(64, 64, 128, 128), "attn_dq", "sm_80")) == "products-pipeline"
    dkdv, gate_up = _kernel(_dkdv(64, 64, 128, 200), "attn_dkdv", "sm_90a"), _kernel(_gate_up64(), "gate_up", "sm_90a")
    assert explain.path_of(dkdv) == "products-wgmma-pipeline" and dkdv.num_warps == 8
    assert explain.path_of(gate_up) == "products-pipeline"
    with monkeypatch.context() as m:
        m.setenv("TILEC_PRODUCTS_WGMMA", "0")
        assert explain.path_of(_kernel(_dkdv(64, 64, 128, 200), "attn_dkdv", "sm_90a")) == "products-pipeline"
    with monkeypatch.context() as m:
        m.setenv("TILEC_PRODUCTS_WGMMA", "1")
        assert explain.path_of(_kernel(_gate_up64(), "gate_up", "sm_90a")) == "products-wgmma-pipeline"
        m.setenv("TILEC_PRODUCTS_WGMMA", "0")
        assert explain.path_of(_kernel(_dq(64, 64, 128, 128, 4), "attn_dq", "sm_90a")) == "products-pipeline"
    gk = _kernel(_dq(64, 64, 128, 128, 4), "attn_dq", "sm_90a")
    assert explain.path_of(gk) == "products-wgmma-pipeline" and explain.refusals(gk) == []
    loop = next(o for o in gk.body.ops if isinstance(o, ir.For))
    kinds = [type(o).__name__ for o in loop.body.ops if isinstance(o, g.Wgmma | g.WgmmaRegA | g.WgmmaWait)]
    assert kinds == ["Wgmma", "Wgmma", "WgmmaWait", "WgmmaWait", "WgmmaRegA", "WgmmaWait"]
    assert [o.pending for o in loop.body.ops if isinstance(o, g.WgmmaWait)] == [1, 0, 0]
    assert not any(isinstance(o, g.RingMma | g.DotOp | g.ConvertLayout) for o in _ops(gk))
    bufs = [o.result for o in gk.body.ops if isinstance(o, g.SmemAlloc)]
    assert len(bufs) == 4 and all(gk.layouts[b.id] == Shared(128, "row") for b in bufs)
    (wait,) = [o for o in loop.body.ops if isinstance(o, g.CpAsyncWait)]
    assert wait.fence and wait.barrier
    ptx = emit_ptx(gk, "sm_90a")
    r = assemble(ptx, "sm_90a")
    assert r.max_spill_stores == 0 and r.registers[0] < 200, r.text
    assert hgmma_desc_faults(sass(ptx, "sm_90a")) == []  # (every HGMMA's descriptors keep their layout fields)


@pytest.mark.parametrize("case", ["dq 64x64 D64", pytest.param("dq 128x64 D64", marks=pytest.mark.heavy), "gate_up",
                                  pytest.param("dkdv rows D64", marks=pytest.mark.heavy)])
def test_the_simulated_wgmma_products_compute_the_interpreters_values(case: str,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The products as warpgroup MMAs in llsim (sm_90a) against the interpreter: a01 at 64 x 64 (one warpgroup)
    and 128 x 64 (two, each its 64 rows of A), S = 80 / 200 (edges: zero-filled copies, masked rows); the gate/up
    pair at 64 x 64 x 64 (two accumulators carried, both products issued together, K = 80 ends in a block); FA2's
    dK/dV at D = 64 (rows only: P^T and dS^T from registers; on wgmma by default)."""
    from tilelang.backend import explain

    monkeypatch.setenv("TILEC_PRODUCTS_WGMMA", "1")  # (the gate/up pair's MN-major shared B: only with "1")
    if case == "gate_up":
        src, name = _gate_up64(), "gate_up"
    elif case == "dkdv rows D64":  # FA2's dK/dV with the warps on rows, as the default takes it (heavy: ~6 s)
        monkeypatch.delenv("TILEC_PRODUCTS_WGMMA")
        src, name = _dkdv_weighted(64, 64, 64, 80).replace("let h = 2;", "let h = 1;"), "attn_dkdv"
    else:
        src = _dq_weighted(64, 64, 64, 80) if case == "dq 64x64 D64" else _dq_weighted(128, 64, 64, 200)
        name = "attn_dq"
    assert explain.path_of(_kernel(src, name, "sm_90a")) == "products-wgmma-pipeline"
    want = _interp(src)
    assert _sim(src, "sm_90a", monkeypatch) == pytest.approx(want, rel=2e-5)


def test_dk_dv_on_wgmma_with_the_columns_split(monkeypatch: pytest.MonkeyPatch) -> None:
    """`TILEC_PRODUCTS_WGMMA=1` with the columns split (FA2's dK/dV at 64 x 64, D = 128): 2 warpgroups, each the
    64 rows and its half of every product's columns (B's descriptor moved to the half: `ring_mma.wgmma_descs`);
    S^T and dP^T issued together; P^T and dS^T written in wgmma's swizzle (`AccToSmem`, fenced for the async
    proxy) and read as A by dV's and dK's wgmmas after the barrier, both waited for at once. ptxas: no spills
    (13: 174 registers); llsim (one head, S = 80: a query block past the end) against the interpreter.
    The machine code: every HGMMA's descriptors carry their layout fields (`hgmma_desc_faults`). B's descriptor
    moved to the warpgroup's half in 64 bits (`add i64 desc, part offset`) came out of ptxas 13.0 with SBO and
    the swizzle dropped from S^T's and dP^T's (16 HGMMAs): wrong on the H100 (call 32), which llsim, running the
    LLVM IR, could not see; the offset now goes into the 32-bit address field (`hopper._desc`'s `extra`)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from ptxas_report import assemble, hgmma_desc_faults, sass

    from tilelang.backend import emit_ptx, explain
    from tilelang.backend.gpu import nodes as g
    from tilelang.backend.gpu.layouts import AccTile, Shared
    from tilelang.ir import nodes as ir

    monkeypatch.setenv("TILEC_PRODUCTS_WGMMA", "1")
    src = _dkdv_weighted(64, 64, 128, 80).replace("let h = 2;", "let h = 1;")
    gk = _kernel(src, "attn_dkdv", "sm_90a")
    assert explain.path_of(gk) == "products-wgmma-pipeline" and gk.num_warps == 8
    loop = next(o for o in gk.body.ops if isinstance(o, ir.For))
    body = list(loop.body.ops)
    kinds = [type(o).__name__ for o in body if isinstance(o, g.Wgmma | g.WgmmaRegA | g.WgmmaWait | g.AccToSmem)]
    assert kinds == ["Wgmma", "Wgmma", "WgmmaWait", "AccToSmem", "WgmmaWait", "AccToSmem", "Wgmma", "Wgmma",
                     "WgmmaWait"]
    mmas = [o for o in body if isinstance(o, g.Wgmma)]
    assert {gk.layouts[m.result.id] for m in mmas} == {AccTile(4, "", 2)}
    assert all(gk.layouts[m.a.id] == Shared(128, "row") for m in mmas)
    ptx = emit_ptx(gk, "sm_90a")
    r = assemble(ptx, "sm_90a")
    assert r.max_spill_stores == 0, r.text
    code = sass(ptx, "sm_90a")
    assert code.count("HGMMA") == 24 and hgmma_desc_faults(code) == [], hgmma_desc_faults(code)
    want = _interp(src)
    assert _sim(src, "sm_90a", monkeypatch) == pytest.approx(want, rel=2e-5)
