"""Thread-block clusters (`#[cluster(..)]`, `let parts = cluster_gather(x);`):
the PTX (cluster shape, the exchange's barriers, DSMEM reads) assembled by
ptxas for sm_90a, sm_80 refused (E0605), llsim's run of the exchange against
the interpreter (hrev15; a broken exchange caught), and on a GPU the
interpreter's results (the definition: a cluster's blocks exchange in one
step) for every element type and cluster shape, eager and in a graph."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
from gpu_probe import nvdisasm_path
from ptxas_report import assemble

import tilelang
from tilelang import driver

RUN = Path(__file__).resolve().parents[1] / "run" / "cluster_gather.tile"

# A decode-style merge: each block of a cluster along axis 1 holds a partial
# (m, l, o) over its share of the keys; every block merges all of them and
# stores its own columns of the result (each block's disjoint part).
MERGE = """
#[cluster(1, 1, C)]
kernel fn merge<const G: i32, const D: i32, const DC: i32, const C: i32>(
        out: &mut Tensor<f32, [1, G, DC]>, m: &Tensor<f32, [?, ?, ?]>, l: &Tensor<f32, [?, ?, ?]>,
        o: &Tensor<f16, [?, ?, ?]>) {
    let h = block_id(0);
    let s = block_id(2);
    let mi = m.partition([1, 1, G]).load([h, s, 0]).reshape([G]);
    let li = l.partition([1, 1, G]).load([h, s, 0]).reshape([G]);
    let oi = o.partition([1, G, D]).load([h, s, 0]).reshape([G, D]);
    let ms = cluster_gather(mi);
    let ls = cluster_gather(li);
    let os = cluster_gather(oi);
    let g = ms.max(0);
    let w = exp(ms - g.reshape([1, G]));
    let den = (ls * w).sum(0);
    let num = (os as f32 * w.reshape([C, G, 1])).sum(0);
    let mine = (num / den.reshape([G, 1])).reshape([G, C, DC]).permute([1, 0, 2]);
    let col = where(arange::<i32>(C).reshape([C, 1, 1]) == s % C, mine, 0.0).sum(0);
    out.store(col.reshape([1, G, DC]));
}

#[cluster(2)]
kernel fn flags(z: &mut Tensor<i32, [4]>, x: &Tensor<f32, [?]>) {
    let t = x.load_like(z);
    let pos = cluster_gather(t > 0.0);
    z.store(where(pos, 1, 0).sum(0));
}
"""

_MERGE_MAIN = """
fn main() {
    let m = zeros::<f32>([2, 8, 4]);
    let l = ones::<f32>([2, 8, 4]);
    let o = zeros::<f16>([2, 8 * 4, 128]);
    let mut out = zeros::<f32>([2, 4, 128]);
    merge::<4, 128, 16, 8>(out.partition([1, 4, 16]), &m, &l, &o).sync();
    let x = ones::<f32>([16]);
    let mut z = zeros::<i32>([16]);
    flags(z.partition([4]), &x).sync();
}
"""


def _ptx(src: Path | str, kernel: str, arch: str = "sm_90a") -> driver.CompileResult:
    return driver.compile(src, "ptx", options=driver.Options(arch=arch, kernel=kernel))


@pytest.mark.parametrize("kernel", ["row_softmax", "ranks"])
def test_ptx_has_the_cluster_shape_barriers_and_dsmem_pushes(kernel: str, tmp_path: Path) -> None:
    r = _ptx(RUN, kernel)
    assert r.ok, r.diagnostics
    (art,) = r.output
    text = art.text
    shape = {"row_softmax": "1, 4, 1", "ranks": "2, 2, 1"}[kernel]
    assert ".explicitcluster" in text and f".reqnctapercluster {shape}" in text
    assert ".version 8.1" in text  # st.async needs PTX ISA 8.1
    exchanges = {"row_softmax": 2, "ranks": 1}[kernel]
    body = text[text.index(".entry"):]
    # the entry: one mbarrier an exchange, published to the cluster, then the
    # relaxed arrive; one cluster wait (the first exchange's), no release
    # barrier.cluster.arrive anywhere (ptxas makes its release a MEMBAR.ALL.GPU)
    assert body.count("mbarrier.init.shared::cta.b64") == exchanges
    assert body.count("barrier.cluster.arrive.relaxed") == 1
    assert body.count("barrier.cluster.arrive") == 1
    assert body.count("barrier.cluster.wait") == 1
    assert "st.shared::cluster" not in body and "ld.shared::cluster" not in body
    # each exchange: its expected bytes, 16-byte async pushes that complete
    # bytes on the peer's barrier, a cluster-scope acquiring wait
    assert body.count("mbarrier.arrive.expect_tx") == exchanges
    assert body.count("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32") >= exchanges
    assert "st.async.shared::cluster.mbarrier::complete_tx::bytes.b32" not in body
    assert body.count("mbarrier.try_wait.parity.acquire.cluster") == exchanges
    assert body.index("fence.mbarrier_init.release.cluster") < body.index("barrier.cluster.arrive.relaxed") \
        < body.index("barrier.cluster.wait") < body.index("st.async")
    assert body.rindex("st.async") < body.rindex("mbarrier.try_wait") < body.rindex("st.global")
    if shutil.which("ptxas"):
        assemble(text, "sm_90a", cubin=tmp_path / "k.cubin")


def test_the_exchange_waits_where_its_result_is_first_read() -> None:
    """Three exchanges of inputs loaded up front: every push before the first
    wait, so the three records travel together (one exchange's latency, not
    three in a row)."""
    r = driver.compile(MERGE + _MERGE_MAIN, "ptx", options=driver.Options(arch="sm_90a", kernel="merge"))
    assert r.ok, r.diagnostics
    body = r.output[0].text
    body = body[body.index(".entry"):]
    assert body.count("mbarrier.try_wait.parity.acquire.cluster") == 3
    assert body.rindex("st.async") < body.index("mbarrier.try_wait")
    assert body.rindex("ld.global") < body.index("barrier.cluster.wait")  # the loads issued first


@pytest.mark.skipif(shutil.which("ptxas") is None or nvdisasm_path() is None,
                    reason="ptxas or nvdisasm is not installed")
def test_sass_of_the_exchange_has_no_gpu_fence(tmp_path: Path) -> None:
    """What the PTX is for: no MEMBAR.ALL.GPU (a release at cluster scope), 16-byte
    remote stores (STAS.128) and transaction barriers."""
    import subprocess

    r = driver.compile(MERGE + _MERGE_MAIN, "ptx", options=driver.Options(arch="sm_90a", kernel="merge"))
    cubin = tmp_path / "m.cubin"
    assemble(r.output[0].text, "sm_90a", cubin=cubin)
    sass = subprocess.run([str(nvdisasm_path()), "-c", str(cubin)], capture_output=True, text=True, check=True).stdout
    assert "MEMBAR" not in sass
    assert "STAS.128" in sass and "SYNCS.PHASECHK.TRANS64" in sass


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas is not installed")
def test_merge_and_bool_exchanges_assemble(tmp_path: Path) -> None:
    src = tmp_path / "merge.tile"
    src.write_text(MERGE + _MERGE_MAIN, encoding="utf-8")
    for kernel in ("merge", "flags"):
        r = _ptx(src, kernel)
        assert r.ok, r.diagnostics
        for art in r.output:
            assert "st.async.shared::cluster" in art.text
            assemble(art.text, "sm_90a", cubin=tmp_path / f"{kernel}.cubin")


def test_sm80_refuses_clusters() -> None:
    r = _ptx(RUN, "ranks", arch="sm_80")
    assert not r.ok
    (d,) = [d for d in r.diagnostics if d.severity.value == "error"]
    assert d.code == "E0605" and "sm_90" in d.message


def _sim_run(src: Path | str, kernel: str, inst: dict, grid: tuple[int, ...], args: list,  # type: ignore[type-arg]
             edit: tuple[str, str] | None = None) -> None:
    """`kernel` of `src` run in llsim on sm_90a (hrev15: its clusters run, `llsim._run_cluster`); `edit`
    replaces a piece of its LLVM text first (a mutation the simulation must catch)."""
    sys.path.insert(0, str(Path(__file__).parent))
    from llsim import Program, SimDevice

    from tilelang.ir.lower import lower_kernel

    prog = driver.check(src).context.outputs["checked"].program
    kir = lower_kernel(prog, kernel, inst, {})
    dev = SimDevice("sm_90a")
    if edit is not None:
        plain = dev.compile

        def compile(k: object, facts: object = None) -> object:
            p, abi, gk = plain(k, facts)  # type: ignore[arg-type]
            assert edit[0] in p.source, edit[0]
            return Program(p.source.replace(edit[0], edit[1]), abi.smem_bytes), abi, gk

        dev.compile = compile  # type: ignore[method-assign]
    dev.run(kir, grid, args)


def test_llsim_runs_a_whole_program_of_clusters_as_the_interpreter(monkeypatch: pytest.MonkeyPatch) -> None:
    """llsim runs a cluster's blocks with each other's pushes landed (it refused clusters before
    hrev15): the program of tests/run/cluster_gather.tile prints what the interpreter prints."""
    import io

    sys.path.insert(0, str(Path(__file__).parent))
    import llsim

    import tilelang.run as run

    want = io.StringIO()
    run.execute(RUN.read_text(), "cpu", out=want, name="c.tile")
    got = io.StringIO()
    monkeypatch.setattr(run, "make_device", lambda choice, o: llsim.sim_runtime_device("sm_90a", lambda t: o.write(t)))
    run.execute(RUN.read_text(), "cpu", out=got, name="c.tile")
    assert got.getvalue() == want.getvalue() and "10344" in want.getvalue()


@pytest.mark.parametrize("c", [2, 4, 8])
def test_llsim_merge_and_flags_agree_with_the_interpreter(c: int) -> None:
    from tilelang import partition as P

    g, d = 4, 128
    heads = 3 if c < 8 else 1  # (c = 8: one row of 8-block clusters, the rows' code the same: 2.5 CPU-s less)
    m, ls, o = _merge_inputs(heads, c, g, d, seed=c)
    ob = o.astype(np.float16)
    mod = tilelang.compile(MERGE)
    want = np.zeros((heads, g, d), np.float32)
    mod.merge[g, d, d // c, c](P(want, [1, g, d // c]), m, ls, ob).sync()
    got = np.zeros((heads, g, d), np.float32)
    _sim_run(MERGE + _MERGE_MAIN, "merge", {"G": g, "D": d, "DC": d // c, "C": c}, (heads, 1, c), [got, m, ls, ob])
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5)  # (the GPU's exp: `fastmath.MATH`)
    x = np.where(np.arange(64) % 3 == 0, 1.0, -1.0).astype(np.float32)
    want_f = np.zeros(64, np.int32)
    mod.flags(P(want_f, [4]), x).sync()
    got_f = np.zeros(64, np.int32)
    _sim_run(MERGE + _MERGE_MAIN, "flags", {}, (16,), [got_f, x])
    np.testing.assert_array_equal(got_f, want_f)


RANKS = np.array([[0, 10, 1, 11] * 2, [0, 10, 1, 11] * 2, [20, 30, 21, 31] * 2, [20, 30, 21, 31] * 2])


@pytest.mark.parametrize(("edit", "fails"), [
    (None, None),
    # the mbarrier expects one record fewer: a block would read before the last one landed
    (("@p mbarrier.arrive.expect_tx.shared::cta.b64 _, [$1], 48;", "@p mbarrier.arrive.expect_tx.shared::cta.b64 _, [$1], 32;"),
     "wait for records"),
    # a block reads its first slot where its second is (the records in the wrong order)
    (("%t49 = mul i32 %t48, 3\n  %t50 = add i32 %t49, %t47", "%t49 = mul i32 %t48, 3\n  %t50 = add i32 %t49, 4"),
     "values"),
], ids=["as_compiled", "expects_fewer_bytes", "reads_the_wrong_slot"])
def test_llsim_catches_a_broken_exchange(edit: tuple[str, str] | None, fails: str | None) -> None:
    sys.path.insert(0, str(Path(__file__).parent))
    from llsim import Deadlock

    z = np.zeros((4, 8), np.int32)
    if fails == "wait for records":
        with pytest.raises(Deadlock, match=fails):
            _sim_run(RUN, "ranks", {}, (4, 2), [z], edit)
        return
    _sim_run(RUN, "ranks", {}, (4, 2), [z], edit)
    assert (z == RANKS).all() == (fails is None), z


def _merge_inputs(heads: int, c: int, g: int, d: int, seed: int = 0):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    m = rng.standard_normal((heads, c, g)).astype(np.float32)
    m[:, 0, 0] = -np.inf  # a share that saw no key (its weight is 0)
    ls = (rng.random((heads, c, g)) + 0.5).astype(np.float32)
    o = rng.standard_normal((heads, c * g, d)).astype(np.float32)
    return m, ls, o


def _merge_reference(m, ls, o, g: int, d: int):  # type: ignore[no-untyped-def]
    heads, c, _ = m.shape
    o = o.reshape(heads, c, g, d).astype(np.float64)
    gm = m.max(axis=1, keepdims=True)
    w = np.exp(m - gm)
    den = (ls * w).sum(axis=1)
    return (o * w[..., None]).sum(axis=1) / den[..., None]


@pytest.mark.gpu
@pytest.mark.parametrize("c", [2, 4, 8])
def test_gpu_agrees_with_the_interpreter(c: int) -> None:
    import tilelang.testing as tt
    from tilelang import partition as P

    mod = tilelang.compile(MERGE)
    g, d = 4, 128
    m, ls, o = _merge_inputs(3, c, g, d, seed=c)
    ob = o.astype(np.float16)
    out = np.zeros((3, g, d), np.float32)
    res = tt.compare(mod.merge[g, d, d // c, c], P(out, [1, g, d // c]), m, ls, ob, rtol=2e-5, atol=2e-5)
    want = _merge_reference(m, ls, ob.astype(np.float32), g, d)
    np.testing.assert_allclose(res["gpu"][0], want, rtol=1e-4, atol=1e-4)
    x = np.where(np.arange(64) % 3 == 0, 1.0, -1.0).astype(np.float32)
    tt.compare(mod.flags, P(np.zeros(64, np.int32), [4]), x)
    runm = tilelang.load(RUN)
    for dev in ("gpu",):
        xr = (np.arange(96, dtype=np.float32).reshape(3, 32) * 0.25)
        tt.compare(runm.row_softmax, P(np.zeros((3, 32), np.float32), [1, 8]), xr, rtol=1e-5, atol=1e-6)
        tt.compare(runm.ranks, P(np.zeros((4, 8), np.int32), [1, 4]))
        del dev


@pytest.mark.gpu
def test_gpu_cluster_launches_in_a_graph_and_repeatedly() -> None:
    from tilelang import partition as P

    torch = pytest.importorskip("torch")

    runm = tilelang.load(RUN)
    z = torch.zeros((64, 8), dtype=torch.int32, device="cuda")
    for _ in range(2000):  # the fast launcher, whole clusters every time
        runm.ranks(P(z, [1, 4])).sync()
    torch.cuda.synchronize()
    ids = z.cpu().numpy()
    # block (i, j) stores the ids of its cluster's blocks (i // 2 * 2 + a, b), rank a + 2 b
    exp_ids = np.zeros((64, 8), np.int64)
    for r in range(64):
        base = r // 2 * 2
        exp_ids[r, :] = [10 * (base + a) + b for b in (0, 1) for a in (0, 1)] * 2
    np.testing.assert_array_equal(ids, exp_ids)
    z.zero_()
    with tilelang.graph() as gr:
        runm.ranks(P(z, [1, 4])).sync()
    assert int(z.abs().sum()) == 0  # captured, not run
    gr.replay()
    torch.cuda.synchronize()
    np.testing.assert_array_equal(z.cpu().numpy(), exp_ids)


@pytest.mark.gpu
@pytest.mark.parametrize("trigger", ["late", "entry"])
def test_gpu_cluster_kernel_under_pdl(trigger: str) -> None:
    """Programmatic dependent launch (cuLaunchKernelEx with its attribute) of a
    kernel whose cluster shape is compiled in (`.reqnctapercluster`)."""
    import tilelang.testing as tt
    from tilelang import partition as P
    from tilelang.runtime import cuda_pdl

    runm = tilelang.load(RUN)
    old = cuda_pdl.set_pdl(True, trigger)
    try:
        xr = np.arange(96, dtype=np.float32).reshape(3, 32) * 0.25
        for _ in range(3):
            tt.compare(runm.row_softmax, P(np.zeros((3, 32), np.float32), [1, 8]), xr, rtol=1e-5, atol=1e-6)
    finally:
        cuda_pdl.set_pdl(old, "late", False)


@pytest.mark.parametrize("c", [2, 8])
def test_interpreter_merge_matches_numpy(c: int) -> None:
    """The interpreter's exchange (the definition) is the flash-decoding merge's."""
    import tilelang.testing as tt
    from tilelang import partition as P

    mod = tilelang.compile(MERGE)
    g, d = 4, 128
    m, ls, o = _merge_inputs(2, c, g, d, seed=c)
    ob = o.astype(np.float16)
    res = tt.compare(mod.merge[g, d, d // c, c], P(np.zeros((2, g, d), np.float32), [1, g, d // c]), m, ls, ob,
                     devices=("cpu",))
    want = _merge_reference(m, ls, ob.astype(np.float32), g, d)
    np.testing.assert_allclose(res["cpu"][0], want, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------- the decode merge inside the attention
# `benchmarks/decode_cluster.py`: flash decoding whose shares of a KV head are
# one cluster and merge through the exchange (one launch).
def _decode_cluster():  # type: ignore[no-untyped-def]
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import decode_cluster

    return decode_cluster


@pytest.mark.parametrize(("ctx", "dtype", "tol"), [(200, "f32", 1e-5), (40, "f32", 1e-5), (200, "f16", 2e-2)])
def test_decode_cluster_on_the_interpreter(ctx: int, dtype: str, tol: float) -> None:
    # 200 positions: the last key block ragged; 40: the fourth share sees no key (its weight is 0)
    assert _decode_cluster().check("cpu", ctx, dtype) < tol


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas is not installed")
def test_decode_cluster_assembles_with_one_wait_an_exchange(tmp_path: Path) -> None:
    src = tmp_path / "dc.tile"
    src.write_text(_decode_cluster().SRC + """
fn main() {
    let q = zeros::<bf16>([8, 4, 128]);
    let k = zeros::<bf16>([8, 1024, 128]);
    let v = zeros::<bf16>([8, 1024, 128]);
    let mut o = zeros::<bf16>([8, 4, 128]);
    decode_cluster::<bf16, 4, 64, 128, 8, 16>(o.partition([1, 4, 16]), &q, &k, &v, 1024, 0.08).sync();
}
""", encoding="utf-8")
    r = _ptx(src, "decode_cluster")
    assert r.ok, r.diagnostics
    text = r.output[0].text
    assert ".reqnctapercluster 1, 1, 8" in text
    assert text.count("mbarrier.try_wait.parity.acquire.cluster") == 2  # the log-sum-exps and the partials
    assert "cp.async" in text  # the key loop still streams through its ring (`stages`)
    assemble(text, "sm_90a", cubin=tmp_path / "dc.cubin")


@pytest.mark.gpu
@pytest.mark.parametrize(("ctx", "dtype", "tol"), [(200, "f32", 1e-4), (40, "f32", 1e-4), (200, "f16", 2e-2)])
def test_decode_cluster_on_the_gpu(ctx: int, dtype: str, tol: float) -> None:
    assert _decode_cluster().check("gpu", ctx, dtype) < tol


PRINTS = """
#[cluster(2, 2)]
kernel fn k(z: &mut Tensor<i32, [1, 2]>) {
    print(block_id(0), block_id(1));
    let a = cluster_gather(block_id(0));
    let b = cluster_gather(a.sum(0) * 10 + block_id(1));
    z.store(b.reshape([2, 2]).sum(0).reshape([1, 2]));
}
fn main() {
    let mut z = zeros::<i32>([4, 4]);
    k(z.partition([1, 2])).sync();
    print(z.sum());
}
"""


def test_a_cluster_kernels_prints_come_in_the_grids_order_on_both_engines(monkeypatch: pytest.MonkeyPatch) -> None:
    """hrev15: the interpreter printed a cluster kernel's lines cluster by cluster, in rank order
    ((0, 0), (1, 0), (0, 1), (1, 1), (2, 0), ..), where the GPU prints the blocks' lines in the grid's
    row-major order (`backend/prints.py`), as every other kernel's (the reference: "on both engines the
    same lines in the same order"); llsim, which runs clusters since this round, showed it."""
    import io

    sys.path.insert(0, str(Path(__file__).parent))
    import llsim

    import tilelang.run as run

    want = io.StringIO()
    run.execute(PRINTS, "cpu", out=want, name="p.tile")
    rows = [f"{i} {j}" for i in range(4) for j in range(2)]
    assert want.getvalue().splitlines() == [*rows, "1936"]  # (41 in the first cluster, 201 in the second)
    got = io.StringIO()
    monkeypatch.setattr(run, "make_device", lambda choice, o: llsim.sim_runtime_device("sm_90a", lambda t: o.write(t + "\n")))
    run.execute(PRINTS, "cpu", out=got, name="p.tile")
    assert got.getvalue() == want.getvalue()


# An FMA GEMM of few tiles (2 on a card of 8 multiprocessors) whose epilogue exchanges over its cluster
FEW_TILES_CLUSTER = """
#[cluster(2, 1)]
kernel fn g<const BM: i32, const BN: i32, const BK: i32>(c: &mut Tensor<f32, [BM, BN]>, a: &Tensor<f32, [?, ?]>,
        b: &Tensor<f32, [?, ?]>) {
    let pa = a.partition([BM, BK]);
    let pb = b.partition([BK, BN]);
    let mut acc = zeros::<f32>([BM, BN]);
    for k in 0..pa.num_tiles(1) {
        acc = mma(pa.load([block_id(0), k]), pb.load([k, block_id(1)]), acc);
    }
    let s = cluster_gather(acc.sum(1).sum(0) + (block_id(0) * 1000) as f32);
    c.store(acc + s.sum(0));
}

fn main() {
    let a = (randn::<f32>([32, 256], 1) * 4.0) as i32 as f32;
    let b = (randn::<f32>([256, 16], 2) * 4.0) as i32 as f32;
    let mut c = zeros::<f32>([32, 16]);
    g::<16, 16, 16>(c.partition([16, 16]), &a, &b).sync();
}
"""


@pytest.mark.parametrize("shape", ["2, 1", "1, 2"])
def test_a_cluster_kernel_keeps_one_tile_a_cta(shape: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """hrev22: the FMA GEMM's split-K (`fma_split`, the variant the runtime picks for a launch of few tiles) made
    a `#[cluster(..)]` kernel whose CTAs walk pieces of tiles: with an exchange (`cluster_gather`: the blocks of
    a cluster must be the cluster's CTAs, one tile each) the variant's compile was an internal error (KeyError)
    at its first launch; without one, the walk's CTAs (a grid of P x 1 x 1) are no whole number of `(1, 2)`
    clusters, which a GPU refuses at the launch (llsim does not check it). A cluster kernel walks nothing
    (`gemm_persistent.walkable`, as `CLUSTER_SKIPS` keeps the other passes that renumber blocks off it); llsim
    on 8 multiprocessors gives the interpreter's tensors."""
    import io

    import llsim
    import tilelang.run as run
    from tilelang.backend.gpu.passes import fma_split

    taken: list[str] = []
    real = fma_split.mode
    monkeypatch.setattr(fma_split, "mode", lambda *a: taken.append(real(*a)) or taken[-1])
    src = FEW_TILES_CLUSTER.replace("#[cluster(2, 1)]", f"#[cluster({shape})]")
    if shape == "1, 2":  # (no exchange; a grid of 2 x 2 tiles)
        src = (src.replace("    let s = cluster_gather(acc.sum(1).sum(0) + (block_id(0) * 1000) as f32);\n", "")
               .replace("c.store(acc + s.sum(0));", "c.store(acc);").replace("[256, 16]", "[256, 32]")
               .replace("zeros::<f32>([32, 16])", "zeros::<f32>([32, 32])"))
    f = tmp_path / "g.tile"
    f.write_text(src, encoding="utf-8")
    ex = run.execute(str(f), "cpu", out=io.StringIO())
    want = np.array(ex.main_locals["c"].numpy())
    monkeypatch.setattr(run, "make_device", lambda choice, o: llsim.sim_runtime_device("sm_90a", sms=8))
    ex = run.execute(str(f), "cpu", out=io.StringIO())
    np.testing.assert_array_equal(np.array(ex.main_locals["c"].numpy()), want)
    assert taken and "split" not in taken, taken
