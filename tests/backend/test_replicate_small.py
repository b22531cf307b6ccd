"""Small tiles held whole by every thread (`TILEC_REPLICATE_SMALL`, opt-in;
`gpu/passes/replicate.py`, `codegen/replicated.py`).

A small reduction result that later ops move between threads (it meets a
value of another layout, is reduced again across threads, or is carried by
a loop in another layout) is made replicated instead: its reduction ends in
an all-gather and every later use reads it in registers. Checked here:
kernels written to meet each case (two reductions of different layouts
meeting, one across the warps, a loop's running maximum, i32 sums in one
warp, 8 warps, f16 input, a reduction of a replicated value, stores of
replicated tiles) run in the simulator (`llsim`, whose racecheck raises on
unsynchronised shared memory) against the interpreter, with the option on;
their code with it on has replicated reductions and fewer barriers; with
it off ("0" or unset) the code is the same as before the option.
"""

from __future__ import annotations

import numpy as np
import pytest
from llsim import SimDevice
from row_cases import RowCase, compare, run_interp

from tilelang.backend import lower_gpu
from tilelang.backend.codegen.replicated import pick
from tilelang.backend.gpu import nodes as g
from tilelang.backend.gpu.layouts import (
    Blocked,
    Slice,
    is_replicated,
    replicate_bound,
    replicated_for,
)
from tilelang.backend.llvm import emit_llvm_text
from tilelang.dtypes import DType
from tilelang.ir import nodes as ir

BARRIER = "call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)"

# the row maxima of x ([G, D], rows over the warps) meet the column sums of
# s ([8, G]): an online-softmax merge of two score sources, its log-sum-exp,
# and the sum of the merged maxima (a reduction of a replicated value)
MEET = """
#[hints(num_warps = {W})]
kernel fn k<const G: i32, const D: i32>(o: &mut Tensor<f32, [G, D]>, lse: &mut Tensor<f32, [G]>,
                                        tot: &mut Tensor<f32, [1]>,
                                        x: &Tensor<f32, [?, D]>, s: &Tensor<f32, [?, G]>) {{
    let t = x.load_like(o);
    let m = t.max(1).reshape([G, 1]);
    let sc = s.partition([8, G]).load([block_id(0), 0]).sum(0).reshape([G, 1]);
    let mn = maximum(m, sc);
    let e = exp2(t - mn);
    let l = e.sum(1).reshape([G, 1]) + exp2(sc - mn);
    o.store(e / l);
    lse.store((mn + log2(l)).reshape([G]));
    tot.store(mn.sum(0));
}}
fn main() {{
    let x = zeros::<f32>([{B} * {G}, {D}]);
    let s = zeros::<f32>([{B} * 8, {G}]);
    let mut o = zeros::<f32>([{B} * {G}, {D}]);
    let mut lse = zeros::<f32>([{B} * {G}]);
    let mut tot = zeros::<f32>([{B}]);
    k(o.partition([{G}, {D}]), lse.partition([{G}]), tot.partition([1]), &x, &s).sync();
}}
"""

# a sum across the warps (128 rows of 4 columns, rows over the warps) meets a
# row maximum of a [4, 64] tile: the all-gather's partials a warp each
ACROSS = """
#[hints(num_warps = 4)]
kernel fn k(y: &mut Tensor<f32, [1, 4]>, a: &Tensor<f32, [?, 4]>, b: &Tensor<f32, [?, 64]>) {
    let i = block_id(0);
    let ta = a.partition([128, 4]).load([i, 0]).sum(0).reshape([1, 4]);
    let tb = b.partition([4, 64]).load([i, 0]).max(1).reshape([1, 4]);
    y.store(ta * tb + ta);
}
fn main() {
    let a = zeros::<f32>([256, 4]);
    let b = zeros::<f32>([8, 64]);
    let mut y = zeros::<f32>([2, 4]);
    k(y.partition([1, 4]), &a, &b).sync();
}
"""

# a running maximum over column tiles (a loop's carried [G, 1]) plus the
# column sums of another tile, in another layout
LOOP = """
#[hints(num_warps = 4)]
kernel fn k<const G: i32, const BN: i32>(y: &mut Tensor<f32, [G, 1]>, x: &Tensor<f32, [?, ?]>,
                                         z: &Tensor<f32, [?, G]>) {
    let p = x.partition([G, BN]);
    let i = block_id(0);
    let mut m = full::<f32>([G, 1], -1e30);
    for j in 0..p.num_tiles(1) {
        m = maximum(m, p.load([i, j]).max(1).reshape([G, 1]));
    }
    let w = z.partition([BN, G]).load([i, 0]).sum(0).reshape([G, 1]);
    y.store(m * w);
}
fn main() {
    let x = zeros::<f32>([8, 384]);
    let z = zeros::<f32>([256, 4]);
    let mut y = zeros::<f32>([8, 1]);
    k::<4, 128>(y.partition([4, 1]), &x, &z).sync();
}
"""

# i32 sums in one warp: [2, 8] row sums of a [2, 8, 32] tile against the
# sums over the first dim of a [32, 2, 8] one (16 elements), stored
INTS = """
#[hints(num_warps = 1)]
kernel fn k(y: &mut Tensor<i32, [2, 8]>, a: &Tensor<i32, [?, 8, 32]>, b: &Tensor<i32, [?, 2, 8]>) {
    let i = block_id(0);
    let ra = a.partition([2, 8, 32]).load([i, 0, 0]).sum(2);
    let rb = b.partition([32, 2, 8]).load([i, 0, 0]).sum(0);
    y.store(ra - rb * 3);
}
fn main() {
    let a = zeros::<i32>([4, 8, 32]);
    let b = zeros::<i32>([64, 2, 8]);
    let mut y = zeros::<i32>([4, 8]);
    k(y.partition([2, 8]), &a, &b).sync();
}
"""

# f16 rows (summed in f32) against an f32 column maximum, 8 warps
HALF = """
#[hints(num_warps = 8)]
kernel fn k(y: &mut Tensor<f32, [8, 1]>, a: &Tensor<f16, [?, 256]>, b: &Tensor<f32, [?, 8]>) {
    let i = block_id(0);
    let ra = (a.partition([8, 256]).load([i, 0]) as f32).sum(1).reshape([8, 1]);
    let rb = b.partition([64, 8]).load([i, 0]).max(0).reshape([8, 1]);
    y.store(ra / (abs(rb) + 1.0));
}
fn main() {
    let a = zeros::<f16>([16, 256]);
    let b = zeros::<f32>([128, 8]);
    let mut y = zeros::<f32>([16, 1]);
    k(y.partition([8, 1]), &a, &b).sync();
}
"""

# a split merge (`std::llm`'s `combine_splits`): NS shares' log-sum-exps, a
# loaded [NS, 1] tile, weigh the shares' rows; the load is replicated (every
# thread loads all NS), so the weights' broadcast over the rows moves nothing
MERGE = """
#[hints(num_warps = 4)]
kernel fn k<const NS: i32, const D: i32>(o: &mut Tensor<f32, [1, 1, D]>, parts: &Tensor<f32, [?, ?, ?]>,
                                         lse: &Tensor<f32, [?, ?, ?]>) {
    let h = block_id(0);
    let g = block_id(1);
    let p = parts.partition([1, NS, D]).load([h, 0, g]).reshape([NS, D]);
    let l = lse.partition([1, NS, 1]).load([h, 0, g]).reshape([NS, 1]);
    let w = exp2(l - l.max(0).reshape([1, 1]));
    o.store(((w * p).sum(0) * (1.0 / w.sum(0))).reshape([1, 1, D]));
}
fn main() {
    let parts = zeros::<f32>([2, 16, 4 * 128]);
    let lse = zeros::<f32>([2, 16, 4]);
    let mut o = zeros::<f32>([2, 4, 128]);
    k::<16, 128>(o.partition([1, 1, 128]), &parts, &lse).sync();
}
"""


def _cases() -> list[RowCase]:
    f16, i32 = DType.parse("f16"), DType.parse("i32")
    out = []
    for w, g_, d in ((4, 4, 128), (1, 4, 64), (8, 8, 64), (2, 2, 32)):
        b = 3
        out.append(RowCase(f"meet_w{w}_g{g_}_d{d}", MEET.format(W=w, G=g_, D=d, B=b),
                           {"x": (b * g_, d), "s": (b * 8, g_)}, {"o": (b * g_, d), "lse": (b * g_,), "tot": (b,)},
                           (b,), {}, rtol=1e-4, atol=1e-5))
    out.append(RowCase("across_warps", ACROSS, {"a": (256, 4), "b": (8, 64)}, {"y": (2, 4)}, (2,), {},
                       rtol=1e-4, atol=1e-4))
    out.append(RowCase("loop_max", LOOP, {"x": (8, 384), "z": (256, 4)}, {"y": (8, 1)}, (2,), {},
                       rtol=1e-4, atol=1e-4))
    out.append(RowCase("ints_one_warp", INTS, {"a": (4, 8, 32), "b": (64, 2, 8)}, {"y": (4, 8)}, (2,),
                       {"a": i32, "b": i32, "y": i32}, rtol=0, atol=0))
    out.append(RowCase("merge_loaded_weights", MERGE, {"parts": (2, 16, 512), "lse": (2, 16, 4)}, {"o": (2, 4, 128)},
                       (2, 4), {}, rtol=1e-4, atol=1e-5))
    out.append(RowCase("half_eight_warps", HALF, {"a": (16, 256), "b": (128, 8)}, {"y": (16, 1)}, (2,),
                       {"a": f16}, rtol=1e-3, atol=1e-3))
    return out


CASES = _cases()


def _replicated_reductions(gk) -> int:  # type: ignore[no-untyped-def]
    return sum(1 for op in g.walk(gk.body) if isinstance(op, ir.Reduce) and op.result.shape
               and is_replicated(gk.layouts[op.result.id], op.result.shape))


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_replicated_small_tiles_agree_with_the_interpreter(case: RowCase, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    k = case.kernel()
    off = lower_gpu(k, "sm_90a", None)
    bars_off = emit_llvm_text(off, off.facts)[0].count(BARRIER)
    monkeypatch.setenv("TILEC_REPLICATE_SMALL", "1")
    on = lower_gpu(k, "sm_90a", None)
    bars_on = emit_llvm_text(on, on.facts)[0].count(BARRIER)
    # the option acts on each case: fewer barriers
    assert bars_on < bars_off, (bars_on, bars_off)
    for seed in (0, 1):
        args = case.args(np.random.default_rng(seed), k)
        want = run_interp(k, case, args)
        got = [a.copy() for a in args]
        SimDevice("sm_90a").run(k, case.grid, got)  # racecheck on: a race raises
        compare(case, k, want, got)


def test_a_small_load_is_replicated(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # the merge's [1, NS, 1] log-sum-exps: loaded whole by every thread, its
    # weights read in registers by the rows' layout; one barrier is left (the
    # weighted rows' sum over the shares, across the warps: a real reduction)
    k = next(c for c in CASES if c.name == "merge_loaded_weights").kernel()
    monkeypatch.setenv("TILEC_REPLICATE_SMALL", "1")
    gk = lower_gpu(k, "sm_90a", None)
    loads = [op for op in g.walk(gk.body) if isinstance(op, ir.Load) and op.result.shape == (1, 16, 1)]
    assert len(loads) == 1 and is_replicated(gk.layouts[loads[0].result.id], (1, 16, 1))
    assert emit_llvm_text(gk, gk.facts)[0].count(BARRIER) == 1


@pytest.mark.parametrize(("name", "how"), [("across_warps", "smem"), ("half_eight_warps", "smem"),
                                         ("ints_one_warp", "shfl"), ("meet_w1_g4_d64", "none")])
def test_the_all_gather(name: str, how: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # a reduction whose result the option makes replicated ends in an
    # all-gather: through shared memory where the outputs lie in several
    # warps, by `shfl.sync.idx` where every warp holds them all (one warp);
    # none where the result is whole in every thread already (the column
    # sums of an [8, 4] tile: the other source's rows read it by selects)
    monkeypatch.setenv("TILEC_REPLICATE_SMALL", "1")
    gk = lower_gpu(next(c for c in CASES if c.name == name).kernel(), "sm_90a", None)
    gathered = [op for op in g.walk(gk.body) if isinstance(op, ir.Reduce) and isinstance(gk.layouts[op.result.id], Blocked)
                and is_replicated(gk.layouts[op.result.id], op.result.shape)]
    text = emit_llvm_text(gk, gk.facts)[0]
    assert len(gathered) == (0 if how == "none" else 1)
    assert ("shfl.sync.idx" in text) == (how == "shfl")
    assert (BARRIER in text) == (how == "smem"), text.count(BARRIER)


def test_off_is_the_code_before_the_option(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # "0" and unset give the same code (the default kernels); "1" changes it
    k = CASES[0].kernel()
    monkeypatch.delenv("TILEC_REPLICATE_SMALL", raising=False)
    unset = lower_gpu(k, "sm_80", None)
    text = emit_llvm_text(unset, unset.facts)[0]
    monkeypatch.setenv("TILEC_REPLICATE_SMALL", "0")
    zero = lower_gpu(k, "sm_80", None)
    assert emit_llvm_text(zero, zero.facts)[0] == text and zero.layouts == unset.layouts
    monkeypatch.setenv("TILEC_REPLICATE_SMALL", "1")
    one = lower_gpu(k, "sm_80", None)
    assert emit_llvm_text(one, one.facts)[0] != text


def test_the_bound(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # 1: 16 elements; N >= 2: N; unset, empty or 0 off; anything else E0604 (it was off, silently: hgpuerr).
    # A [2, 8] result (16 elements) is replicated under 16, not under 8
    for v, n in (("", 0), ("0", 0), ("1", 16), ("8", 8), ("32", 32)):
        monkeypatch.setenv("TILEC_REPLICATE_SMALL", v)
        assert replicate_bound() == n
    monkeypatch.setenv("TILEC_REPLICATE_SMALL", "yes")
    with pytest.raises(ValueError, match="TILEC_REPLICATE_SMALL='yes'"):
        replicate_bound()
    k = next(c for c in CASES if c.name == "ints_one_warp").kernel()
    monkeypatch.setenv("TILEC_REPLICATE_SMALL", "0")
    base = _replicated_reductions(lower_gpu(k, "sm_80", None))
    monkeypatch.setenv("TILEC_REPLICATE_SMALL", "8")
    assert _replicated_reductions(lower_gpu(k, "sm_80", None)) == base
    monkeypatch.setenv("TILEC_REPLICATE_SMALL", "16")
    assert _replicated_reductions(lower_gpu(k, "sm_80", None)) > base


def test_the_layout() -> None:
    lay = replicated_for((4, 1), 128)
    assert lay == Blocked((4, 1), (1, 32), (1, 4), (1, 0)) and is_replicated(lay, (4, 1))
    assert is_replicated(Slice(1, replicated_for((4, 1, 1), 128)), (4, 1))
    # rows over the warps, columns over the lanes: not whole in any thread
    assert not is_replicated(Blocked((1, 4), (1, 32), (4, 1), (1, 0)), (4, 128))
    # a size-1 dim on the warps (replicas) and 4 rows in registers: whole
    assert is_replicated(Blocked((4, 1), (1, 32), (1, 4), (1, 0)), (4, 1))


class _Recorder:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def emit(self, s: str) -> str:
        self.lines.append(s)
        return f"%v{len(self.lines)}"


def test_pick_selects_by_the_index_bits() -> None:
    em = _Recorder()
    vals = ["%a", "%b", "%c"]
    assert pick(em, vals, "2", "float") == "%c" and not em.lines  # a constant index: no select
    got = pick(em, vals, "%i", "float")
    # 3 values padded to 4: two bits, three selects (pairs by bit 0, then bit 1)
    sel = [s for s in em.lines if s.startswith("select")]
    assert len(sel) == 3 and got == "%v" + str(len(em.lines))
    assert sel[0].endswith("float %b, float %a") and sel[1].endswith("float %c, float %c")


@pytest.mark.gpu
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_replicated_small_tiles_on_the_gpu(case: RowCase, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # the same cases on a GPU with the option on (the runtime's variant key
    # holds it), against the interpreter
    from tilelang.runtime import cuda

    if not cuda.is_available():
        pytest.skip("no CUDA device")
    monkeypatch.setenv("TILEC_REPLICATE_SMALL", "1")
    dev = cuda.device()
    k = case.kernel()
    args = case.args(np.random.default_rng(3), k)
    want = run_interp(k, case, args)
    bufs = [dev.upload(a, p.dtype) for p, a in zip(k.params, args, strict=True)]
    dev.run(dev.prepare(k), case.grid, bufs)
    dev.sync()
    got = [dev.download(b, p.dtype, a.shape) if isinstance(p, ir.TensorParam) else a
           for p, a, b in zip(k.params, args, bufs, strict=True)]
    compare(case, k, want, got)
