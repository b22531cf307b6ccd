"""Round 32 of the hostile review (hrev32, 2026-12-07): the standard library's GEMVs and a tensor-core decode
split given shapes and layers their documentation rules out, each a silent wrong answer before (the loads past a
tensor's edge read zeros, so memory stayed safe and the launch ran): now refused at the launch (E0513, a
`#[requires(..)]` naming the fact and the values), in Tile and from Python.

A requirement can now read the tensor a launch partitions for a `&mut` parameter, `o.tensor_shape()[i]` (in the
kernel `o.shape()` is the tile's): what the GEMVs' output lengths and `decode_split_tc`'s partials needed.

- s05 `std::llm::gemv::rms_gate_up` with an intermediate size I that is not a multiple of its row tile BN: the up
  rows were read from row `blocks * BN`, not I (an output off by 0.59, even at layer 0).
- s06 `std::llm::gemv::gemv_add` at a layer past its weight stack (counted from 1): every weight read as zero.
- every stacked GEMV (`gemv`, `gemv_add`, `gemv_splitk`, `rms_gemv`, `rms_gemv_kv`, `rms_gate_up`, the queue, rows,
  stream and hybrid forms): a layer past the stack or negative, an `x` of another length than `w`'s columns, a norm
  weight `g` without the layer's row; `add_rows` a `part` of other rows; `rms_gemv_argmax` a `y` of other than the
  vocabulary's length; `gemv_add_hybrid` a scratch `z` with fewer items than its bulk and pieces (`hybrid_items`:
  the last pieces were never added); `gemv_stream` a KT that is not w's K tiles.
- `std::attention::decode_split_tc` given partials of other rows than q's G (more: the tile's rows past G, the
  attention of zero queries, stored as splits of their own; fewer: query heads dropped).
"""

from __future__ import annotations

import numpy as np
import pytest
from userprog import wrong_suite

import tilelang
from tilelang import driver
from tilelang import partition as P

Tensors = dict[str, np.ndarray]

FIXES: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "s05_gate_up_rows_not_a_multiple_of_the_tile": (
        "pass arguments that meet the requirement",
        [("rms_gate_up::<16, 32, 1, 0, 0, 32, 0, 0>(h.partition([16])",
          "rms_gate_up::<8, 32, 1, 0, 0, 32, 0, 0>(h.partition([8])")]),
    "s06_gemv_layer_counted_from_one": (
        "pass arguments that meet the requirement", [("&x, 2, &w", "&x, 1, &w")]),
}


def _bf16(a: np.ndarray) -> np.ndarray:
    return a.astype(np.float64)


def _s05(t: Tensors, out: str) -> None:
    x, w, g = _bf16(t["x"]), _bf16(t["w"]), _bf16(t["g"])[0]
    xn = x / np.sqrt((x * x).mean() + 1e-6) * g
    gate, up = w[:24] @ xn, w[24:] @ xn
    np.testing.assert_allclose(t["h"], gate / (1 + np.exp(-gate)) * up, rtol=1e-4, atol=1e-4)


def _s06(t: Tensors, out: str) -> None:
    np.testing.assert_allclose(t["y"], 1.0 + _bf16(t["w"])[32:] @ _bf16(t["x"]), rtol=1e-4, atol=1e-4)


CHECKS = {"s05_gate_up_rows_not_a_multiple_of_the_tile": _s05, "s06_gemv_layer_counted_from_one": _s06}

(test_every_mistake_has_a_fix, test_the_help_leads_to_a_working_program,
 test_the_editor_shows_the_same_first_error) = wrong_suite("s0[5-9]_*.tile", FIXES, CHECKS)


_WHOLE = """
#[requires(z.tensor_shape()[0] == x.shape()[0], "z must have x's length")]
kernel fn cp<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>) {
    z.store(x.load_like(z));
}
"""


def test_a_requirement_reads_the_tensor_a_launch_partitions(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """`z.tensor_shape()[0]` is the partitioned tensor's length: E0513 at check where it is a constant, at the run
    where it is not, and at each Python call (the second with another array of the same tile: the fast path's key
    holds its shape)."""
    prog = tmp_path / "whole.tile"
    prog.write_text(_WHOLE + "fn main() {\n    let x = arange::<f32>(8);\n    let mut z = zeros::<f32>([6]);\n"
                    "    cp(z.partition([4]), &x).sync();\n}\n", encoding="utf-8")
    errs = [d for d in driver.check(prog).diagnostics if d.severity.value == "error"]
    assert [d.code for d in errs] == ["E0513"] and "`z.tensor_shape()[0]` = 6" in errs[0].message, errs
    from userprog import run_program

    prog.write_text(_WHOLE + "fn main() {\n    let x = arange::<f32>(8);\n    let mut z = zeros::<f32>([x.max() as i32]);\n"
                    "    cp(z.partition([4]), &x).sync();\n}\n", encoding="utf-8")
    assert not [d for d in driver.check(prog).diagnostics if d.severity.value == "error"]
    with pytest.raises(tilelang.TileError) as info:
        run_program(prog)
    d = info.value.diagnostics[0]
    assert d.code == "E0513" and "`z.tensor_shape()[0]` = 7" in d.message, d.message
    m = tilelang.compile(_WHOLE)
    x = np.arange(8, dtype=np.float32)
    z = np.zeros(8, np.float32)
    m.cp[4](P(z, [4]), x).sync()
    np.testing.assert_array_equal(z, x)
    for _ in range(2):   # twice: the refusal is not memoised away
        z6 = np.zeros(6, np.float32)
        with pytest.raises(tilelang.TileError) as info:
            m.cp[4](P(z6, [4]), x).sync()
        assert info.value.code == "E0513" and "z must have x's length" in str(info.value)
        assert not z6.any()


@pytest.mark.parametrize(("cond", "says", "helps"), [
    ("x.tensor_shape()[0] == 1", "`tensor_shape()` reads the tensor a launch partitions for a `&mut` parameter, "
     "and `x` is not one", "`x.shape()[0]`"),
    ("z.shape()[0] == 8", "`z` is a `&mut` parameter: in the kernel its shape is the tile's", "`z.tensor_shape()[0]`"),
    ("z.tensor_shape()[1] == 8", "an axis of `z` must be an integer literal below its rank 1", "`z.tensor_shape()[0]`"),
    ("z.tensor_shape()[0] + x.shape()[0]", "a requirement is a condition", "compare it"),
])
def test_a_requirement_of_a_partitioned_tensor_is_written_one_way(cond: str, says: str, helps: str,
                                                                   tmp_path) -> None:  # type: ignore[no-untyped-def]
    """`tensor_shape()` of a `&mut` parameter only (a `&` one's is `shape()`), a literal axis below the rank; the
    refusals (E0204/E0203) at the attribute, each with a help that names the form that works."""
    prog = tmp_path / "forms.tile"
    prog.write_text(_WHOLE.replace("z.tensor_shape()[0] == x.shape()[0]", cond), encoding="utf-8")
    errs = [d for d in driver.check(prog).diagnostics if d.severity.value == "error"]
    assert len(errs) == 1 and errs[0].code in ("E0204", "E0203"), [(d.code, d.message) for d in errs]
    assert says in errs[0].message and any(helps in h for h in errs[0].help), (errs[0].message, errs[0].help)
    at = _WHOLE.index("#[requires(") + len("#[requires(")
    assert errs[0].primary_span is not None and at <= errs[0].primary_span.start < at + len(cond)


@pytest.fixture(scope="module")
def llm() -> tilelang.Module:
    return tilelang.compile("use std::llm::gemv::*;\nuse std::llm::queue::*;\nuse std::llm::rows::*;\n"
                            "use std::llm::stream::gemv_stream;\nuse std::llm::hybrid::gemv_add_hybrid;\n")


L, N, K = 2, 32, 48


def _gemv_calls(m: tilelang.Module, layer: int, xk: int, gl: int, n: int = N) -> dict[str, object]:
    """Each stacked GEMV's launch (an operation, not run) at `layer` with an x of `xk` values and a norm weight of
    `gl` layers, its output `n` rows."""
    w = np.zeros((L * 2 * n, K), np.float32)     # room for gate/up's two matrices a layer
    x, g = np.zeros(xk, np.float32), np.ones((gl, K), np.float32)

    def y() -> object:
        return P(np.zeros(n, np.float32), [16])

    wl = w[: L * n].copy()   # the one-matrix stacks: L layers of n rows
    return {
        "gemv": lambda: m.gemv[16, 16, 1, 0](y(), wl, x, layer),
        "gemv_add": lambda: m.gemv_add[16, 16, 1, 0, 0, 16, 0, 0](y(), wl, x, layer, wl, 0, 0),
        "gemv_splitk": lambda: m.gemv_splitk[16, 16, 1, 0](P(np.zeros((2, n), np.float32), [1, 16]), wl, x, layer),
        "rms_gemv": lambda: m.rms_gemv[16, 16, 1, 0, 0, 16, 0, 0](y(), wl, x, g, layer, 1e-6, wl, 0, 0),
        "rms_gate_up": lambda: m.rms_gate_up[16, 16, 1, 0, 0, 16, 0, 0](y(), w, x, g, layer, 1e-6, w, 0, 0),
        "rms_gemv_queue": lambda: m.rms_gemv_queue[16, 16, 1, 0](y(), wl, x, g, layer, n, 1e-6),
        "gemv_add_queue": lambda: m.gemv_add_queue[16, 16, 1, 0](y(), wl, x, layer, n),
        "rms_gate_up_queue": lambda: m.rms_gate_up_queue[16, 16, 1, 0](y(), w, x, g, layer, n, 1e-6),
        "gemv_rows_add": lambda: m.gemv_rows_add[16, 64, 0](y(), wl, x, layer, n),
        "rms_gate_up_rows_walk": lambda: m.rms_gate_up_rows_walk[16, 64, 0, 1](y(), w, x, g, layer, n, 1e-6),
        "gemv_stream": lambda: m.gemv_stream[16, 16, 1, 0, 1, 1, 3](P(np.zeros(4, np.float32), [1]),
                                                                   np.zeros(n, np.float32), wl, x, g, layer, n, 1e-6),
        "gemv_add_hybrid": lambda: m.gemv_add_hybrid[16, 16, 1, 0, 1, 16, 1](P(np.zeros(8, np.float32), [1]),
                                                                            np.zeros(n, np.float32), wl, x, layer, n),
    }


_NAMES = sorted([
    "gemv", "gemv_add", "gemv_splitk", "rms_gemv", "rms_gate_up", "rms_gemv_queue", "gemv_add_queue",
    "rms_gate_up_queue", "gemv_rows_add", "rms_gate_up_rows_walk", "gemv_stream", "gemv_add_hybrid"])
_NORMED = ("rms_gemv", "rms_gate_up", "rms_gemv_queue", "rms_gate_up_queue", "rms_gate_up_rows_walk", "gemv_stream")


@pytest.mark.parametrize("name", _NAMES)
def test_a_stacked_gemv_refuses_a_layer_past_its_stack_and_vectors_of_other_lengths(llm: tilelang.Module,
                                                                                     name: str) -> None:
    """Each ran before, in bounds and wrong: a layer past the stack (or -1) read every weight as zero, an x shorter
    than w's rows read zeros past its end (and a longer one was cut), a norm weight without the layer's row scaled
    by zeros. Now E0513 at the launch, naming the fact and the values; the last layer of the stack is accepted."""
    cases = [(L, K, L, "layer must be within the weight stack"), (-1, K, L, "layer must be within the weight stack"),
             (1, K - 8, L, "x must have w's"), (1, K + 16, L, "x must have w's")]
    if name in _NORMED:
        cases.append((1, K, 1, "g must hold the norm's weights of layer"))
    for layer, xk, gl, says in cases:
        op = _gemv_calls(llm, layer, xk, gl)[name]
        with pytest.raises(tilelang.TileError) as info:
            op().discard()   # type: ignore[operator]
        assert info.value.code == "E0513" and says in str(info.value), (name, layer, xk, gl, str(info.value))
    _gemv_calls(llm, L - 1, K, L)[name]().discard()   # type: ignore[operator]


def test_gate_up_rows_not_a_multiple_of_the_tile_are_refused_at_every_layer(llm: tilelang.Module) -> None:
    """`rms_gate_up` of an I of 24 in BN = 16 tiles read its up rows from row 32, not 24 (s05; at layer 0 too); an
    I of 32 runs and gives NumPy's SwiGLU."""
    rng = np.random.default_rng(5)
    for layer in (0, 1):
        with pytest.raises(tilelang.TileError) as info:
            _gemv_calls(llm, layer, K, L, n=24)["rms_gate_up"]().discard()   # type: ignore[operator]
        assert info.value.code == "E0513" and "a multiple of BN" in str(info.value)
    w = (rng.standard_normal((2 * 2 * 32, K)) / 8).astype(np.float32)
    x, g = rng.standard_normal(K).astype(np.float32), np.ones((2, K), np.float32)
    h = np.zeros(32, np.float32)
    llm.rms_gate_up[16, 16, 1, 0, 0, 16, 0, 0](P(h, [16]), w, x, g, 1, 1e-6, w, 0, 0).sync()
    ws = w.astype(np.float64)   # (bf16 weights: rounded, hence the tolerance)
    xn = x / np.sqrt((x.astype(np.float64) ** 2).mean() + 1e-6)
    gate, up = ws[64:96] @ xn, ws[96:] @ xn
    np.testing.assert_allclose(h, gate / (1 + np.exp(-gate)) * up, rtol=2e-2, atol=2e-2)


def test_the_split_k_sum_and_the_lm_head_refuse_outputs_of_other_lengths(llm: tilelang.Module) -> None:
    """`add_rows` given a `part` of 3 split rows for S = 2 (the third was never added) or narrower than y (y's last
    rows kept without their sum), and `rms_gemv_argmax` a y shorter than the vocabulary (the last tokens never
    picked): E0513."""
    y = P(np.zeros(N, np.float32), [16])
    for part, says in ((np.zeros((3, N), np.float32), "part must be [S, N]"),
                       (np.zeros((2, 16), np.float32), "part must be [S, N]")):
        with pytest.raises(tilelang.TileError) as info:
            llm.add_rows[16, 2](y, part).sync()
        assert info.value.code == "E0513" and says in str(info.value)
    w, x, g = np.zeros((40, K), np.float32), np.zeros(K, np.float32), np.ones((1, K), np.float32)
    bm, ba = P(np.zeros(2, np.float32), [1]), P(np.zeros(2, np.int32), [1])
    with pytest.raises(tilelang.TileError) as info:
        llm.rms_gemv_argmax[16, 16, 1, 0](P(np.zeros(32, np.float32), [16]), bm, ba, w, x, g, 1e-6).discard()
    assert info.value.code == "E0513" and "a logit for each row of w" in str(info.value)


def test_the_stream_refuses_a_kt_that_is_not_ws_k_tiles(llm: tilelang.Module) -> None:
    """`gemv_stream` with KT = 2 for K = 48 in BK = 16 tiles walked 2 of a row's 3 K tiles (its last 16 columns
    never added): E0513."""
    w, x, g = np.zeros((N, K), np.float32), np.zeros(K, np.float32), np.ones((1, K), np.float32)
    with pytest.raises(tilelang.TileError) as info:
        llm.gemv_stream[16, 16, 1, 0, 0, 1, 2](P(np.zeros(4, np.float32), [1]), np.zeros(N, np.float32), w, x, g, 0,
                                               N, 1e-6).discard()
    assert info.value.code == "E0513" and "KT must be w's K tiles" in str(info.value)


def test_decode_split_tc_refuses_partials_of_other_rows_than_qs_heads() -> None:
    """`decode_split_tc` stores a 64-row tile a block, its rows past q's G the attention of zero queries: partials of
    8 rows for G = 4 kept 4 such rows a split, which `decode_combine` merged as splits of their own; partials of 2
    rows dropped 2 query heads. Each ran (the requirements read only `&` shapes); now E0513, and G rows run."""
    att = tilelang.compile("use std::attention::decode_split_tc;\n")
    h, g, d, s, splits = 2, 4, 64, 64, 2
    rng = np.random.default_rng(32)
    q, k, v = (rng.standard_normal(sh).astype(np.float16) for sh in ((h, g, d), (h, s, d), (h, s, d)))
    for rows in (8, 2):
        op, lp = np.zeros((h * splits, rows, d), np.float32), np.zeros((h * splits, rows), np.float32)
        with pytest.raises(tilelang.TileError) as info:
            att.decode_split_tc["f16", 64, d](P(op, [1, 64, d]), P(lp, [1, 64]), q, k, v, s, 0.125, splits).discard()
        assert info.value.code == "E0513" and "must have q's G rows a tile" in str(info.value), str(info.value)
    op, lp = np.zeros((h * splits, g, d), np.float32), np.zeros((h * splits, g), np.float32)
    att.decode_split_tc["f16", 64, d](P(op, [1, 64, d]), P(lp, [1, 64]), q, k, v, s, 0.125, splits).discard()


def test_tensor_shape_in_a_kernel_body_says_where_it_is_read(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """`z.tensor_shape()` is a requirement's spelling; in a kernel's body it is E0103, whose help says so and gives
    the kernel's ways to know the extent (was only the list of the parameter's methods)."""
    prog = tmp_path / "body.tile"
    prog.write_text("kernel fn cp<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>) {\n"
                    "    let n = z.tensor_shape()[0];\n    z.store(x.load_like(z) + (n as f32));\n}\n", encoding="utf-8")
    errs = [d for d in driver.check(prog).diagnostics if d.severity.value == "error"]
    assert [d.code for d in errs] == ["E0103"], [(d.code, d.message) for d in errs]
    assert any("read only in a `#[requires(..)]`" in h and "scalar parameter" in h for h in errs[0].help), errs[0].help


def test_the_prompts_kernels_refuse_shapes_that_read_the_wrong_columns() -> None:
    """`std::llm::prefill`: `gemm` with a's K 32 and w's 48 (a product over 32 columns), `swiglu_rows` of an I = 24
    in BH = 16 tiles (the up half read from column 32: off by 3.5), `add_rms_rows` with BH 16 below K 32 (each
    column tile added d's first and was normed alone: off by 3.2) each ran; E0513 now. The right shapes run and
    give NumPy's answers."""
    m = tilelang.compile("use std::llm::prefill::{gemm, swiglu_rows, add_rms_rows};\n")
    r = np.random.default_rng(0)
    a, w = r.standard_normal((16, 32)).astype(np.float32), r.standard_normal((16, 48)).astype(np.float32)
    bad = [(lambda: m.gemm[16, 16, 16](P(np.zeros((16, 16), np.float32), [16, 16]), a, w), "a and w must have one K"),
           (lambda: m.gemm[16, 16, 16](P(np.zeros((32, 16), np.float32), [16, 16]), a, w[:, :32].copy()),
            "y must be [M, N]"),
           (lambda: m.swiglu_rows[16](P(np.zeros((2, 24), np.float32), [1, 16]), np.zeros((2, 48), np.float32)),
            "h's width I must be a multiple of BH"),
           (lambda: m.swiglu_rows[8](P(np.zeros((2, 24), np.float32), [1, 8]), np.zeros((2, 40), np.float32)),
            "gu must be [M, 2 I]"),
           (lambda: m.add_rms_rows[16](P(np.zeros((2, 32), np.float32), [1, 16]),
                                       P(np.zeros((2, 32), np.float32), [1, 16]), np.zeros((2, 32), np.float32),
                                       np.ones(32, np.float32), True, 1e-6), "BH must cover a row"),
           (lambda: m.add_rms_rows[32](P(np.zeros((2, 32), np.float32), [1, 32]),
                                       P(np.zeros((2, 32), np.float32), [1, 32]), np.zeros((2, 32), np.float32),
                                       np.ones(24, np.float32), True, 1e-6), "xn must have x's shape [M, K] and g K")]
    for call, says in bad:
        with pytest.raises(tilelang.TileError) as info:
            call().discard()   # type: ignore[attr-defined]
        assert info.value.code == "E0513" and says in str(info.value), str(info.value)
    y = np.zeros((16, 16), np.float32)
    wk = w[:, :32].copy()
    m.gemm[16, 16, 16](P(y, [16, 16]), a, wk).sync()
    ab, wb = (t.astype(np.float64) for t in (a, wk))
    np.testing.assert_allclose(y, ab @ wb.T, rtol=3e-2, atol=0.3)   # (bf16 operands)
    gu, h = r.standard_normal((2, 48)).astype(np.float32), np.zeros((2, 24), np.float32)
    m.swiglu_rows[8](P(h, [1, 8]), gu).sync()
    g_, u_ = gu[:, :24].astype(np.float64), gu[:, 24:].astype(np.float64)
    np.testing.assert_allclose(h, g_ / (1 + np.exp(-g_)) * u_, rtol=2e-2, atol=2e-2)   # (h in bf16)


def test_the_split_merges_refuse_an_ns_that_is_not_the_partials_splits() -> None:
    """`combine_splits` / `combine_rows` with NS = 2 of 4 partials merged half the splits (wrong, no error), and an
    output whose tiles are not the partials' heads; E0513 now; NS = 4 gives the softmax-weighted merge."""
    m = tilelang.compile("use std::llm::attention::{combine_splits, combine_rows};\n")
    r = np.random.default_rng(1)
    hkv, ns, g, hd = 1, 4, 2, 8
    op, lp = r.standard_normal((hkv, ns, g * hd)).astype(np.float32), r.standard_normal((hkv, ns, g)).astype(np.float32)
    for call in (lambda o, n: m.combine_splits[n, hd, 0](P(o, [1, 1, hd]), op, lp),
                 lambda o, n: m.combine_rows[n, hd, 2, 0](P(o, [1, 1, hd]), op, lp)):
        with pytest.raises(tilelang.TileError) as info:
            call(np.zeros((hkv, g, hd), np.float32), 2).discard()
        assert info.value.code == "E0513" and "NS must be the splits of o_part" in str(info.value)
        with pytest.raises(tilelang.TileError) as info:
            call(np.zeros((hkv, g + 1, hd), np.float32), 4).discard()
        assert info.value.code == "E0513" and "o must be [HKV, G, head dim]" in str(info.value)
        o = np.zeros((hkv, g, hd), np.float32)
        call(o, 4).sync()
        wgt = np.exp2(lp - lp.max(1, keepdims=True))                       # [hkv, ns, g]
        parts = op.reshape(hkv, ns, g, hd)
        want = (wgt[..., None] * parts).sum(1) / wgt.sum(1)[..., None]
        np.testing.assert_allclose(o, want, rtol=1e-5, atol=1e-5)


def test_std_attention_refuses_outputs_whose_tiles_cover_more_or_less_than_the_inputs() -> None:
    """hrev31's grid requirements counted tiles, so an output of the same tile count but another shape ran:
    `flash_attention` with an `o` twice q's width (its second half a copy), a row more than q's (the attention of a
    zero query) or a row fewer (query 19 dropped); `decode_combine` an `o` of G - 1 rows (a query head dropped) or a
    narrower head (columns dropped); `decode_split` partials whose rows are not whole splits of G. E0513 now."""
    m = tilelang.compile("use std::attention::{flash_attention, decode_split, decode_combine};\n")
    r = np.random.default_rng(3)
    q, k, v = (r.standard_normal(s).astype(np.float16) for s in ((2, 20, 16), (2, 24, 16), (2, 24, 16)))
    for shape in ((2, 20, 32), (2, 21, 16), (2, 19, 16)):
        with pytest.raises(tilelang.TileError) as info:
            m.flash_attention["f16", 16, 16, 16](P(np.zeros(shape, np.float16), [1, 16, 16]), q, k, v, 0.25,
                                                 False).discard()
        assert info.value.code == "E0513" and "o must have q's shape" in str(info.value), shape
    g, d = 4, 16
    q, k, v = (r.standard_normal(s).astype(np.float16) for s in ((2, g, d), (2, 64, d), (2, 64, d)))
    op, lp = np.zeros((2, 2 * g, d), np.float32), np.zeros((2, 2 * g), np.float32)
    m.decode_split["f16", g, 16, d](P(op, [1, g, d]), P(lp, [1, g]), q, k, v, 64, 0.25).sync()
    for shape in ((2, g - 1, d), (2, g, d - 2)):
        with pytest.raises(tilelang.TileError) as info:
            m.decode_combine["f16", g, 2, d](P(np.zeros(shape, np.float16), [1, g, d]), op, lp).discard()
        assert info.value.code == "E0513" and "o must have o_part's shape" in str(info.value), shape
    with pytest.raises(tilelang.TileError) as info:
        m.decode_split["f16", g, 16, d](P(np.zeros((2, 2 * g + 1, d), np.float32), [1, g, d]),
                                        P(np.zeros((2, 2 * g + 1), np.float32), [1, g]), q, k, v, 64, 0.25).discard()
    assert info.value.code == "E0513" and "must have G rows a split" in str(info.value)
    o = np.zeros((2, g, d), np.float16)
    m.decode_combine["f16", g, 2, d](P(o, [1, g, d]), op, lp).sync()
    s = np.einsum("hgd,hsd->hgs", q.astype(np.float64), k.astype(np.float64)) * 0.25
    p = np.exp(s - s.max(-1, keepdims=True))
    np.testing.assert_allclose(o, np.einsum("hgs,hsd->hgd", p / p.sum(-1, keepdims=True), v.astype(np.float64)),
                               atol=4e-3)


def test_the_top_p_chain_refuses_an_ex_of_the_right_chunks_and_the_wrong_length() -> None:
    """hrev31 counted `ex`'s chunks: an `ex` of 290 for 300 logits (the same 3 chunks of 128) ran, its sum z over
    300 logits and its values over 290 (the nucleus cut against a mass it does not hold); a round given the previous
    round's mass with a row fewer than the chunks summed a chunk short. E0513 now."""
    m = tilelang.compile("use std::llm::sampling::{sample_prep, nucleus_round};\n")
    logits, bmax = np.zeros(300, np.float32), np.zeros(3, np.float32)
    with pytest.raises(tilelang.TileError) as info:
        m.sample_prep[128](P(np.zeros(290, np.float32), [128]), P(np.zeros(3, np.float32), [1]), logits, bmax,
                           1.0).discard()
    assert info.value.code == "E0513" and "ex must have logits' length" in str(info.value)
    mass, band = np.zeros((3, 8), np.float32), np.zeros((3, 2), np.float32)
    with pytest.raises(tilelang.TileError) as info:
        m.nucleus_round[128, 8, 8](P(mass, [1, 8]), P(band, [1, 2]), np.ones(300, np.float32), np.ones(3, np.float32),
                                   np.ones((2, 8), np.float32), np.zeros((1, 2), np.float32), 0.5, False).discard()
    assert info.value.code == "E0513" and "prev_mass must have a row of NT sums for each chunk" in str(info.value)


def test_the_rotated_qkv_gemv_refuses_a_layer_and_tables_it_would_read_as_zeros(llm: tilelang.Module) -> None:
    """`rms_gemv_rope` (Qwen3's fused QKV with head norms and rotary) at a layer past its stack, with head-norm
    weights without the layer's row, rotary tables of another width, or heads that are not n_q_heads query heads
    and as many key as value heads: each read zeros (or rotated the wrong heads) and ran; E0513 now."""
    f, z = np.float32, np.zeros
    heads, nq, d, bn, kk, layers, s = 4, 2, 16, 8, 16, 2, 8

    def call(layer: int = 1, qn_l: int = layers, cos_w: int = d // 2, n_q: int = nq) -> object:
        return llm.rms_gemv_rope[bn, 16, 1, 0, 0, 16, 0](
            P(z((heads, 2, d // 2), f), [1, 2, bn // 2]), P(z((heads, 1, d // bn), f), [1, 1, 1]),
            z((layers * heads * 2, d // 2, kk), f), z(kk, f), np.ones((layers, kk), f), z((qn_l, 2, d // 2), f),
            z((layers, 2, d // 2), f), z((s, cos_w), f), z((s, cos_w), f), np.array([3], np.int32), layer, n_q, 1e-6,
            z((8, kk), f), 0, 0)

    for kw, says in (({"layer": 2}, "layer must be within the weight stack"),
                     ({"qn_l": 1}, "qn and kn must hold the head norms' weights"),
                     ({"cos_w": d}, "cos and sin must be [S, D / 2]"),
                     ({"n_q": 1}, "n_q_heads query heads then as many key heads as value heads")):
        with pytest.raises(tilelang.TileError) as info:
            call(**kw).discard()   # type: ignore[attr-defined]
        assert info.value.code == "E0513" and says in str(info.value), (kw, str(info.value))
    call().discard()   # type: ignore[attr-defined]


def test_fused_decode_refuses_a_merged_output_of_other_heads_or_width() -> None:
    """`decode_fused`'s merged `o` is a `last_block` group's tile, checked by its grid only: an `o` of G - 1 rows
    (a query head dropped) or a narrower head (columns dropped) ran; E0513 now (and `std::llm`'s ring merge and fold
    forms the same of their `o`)."""
    m = tilelang.compile("use std::attention::decode_fused;\n")
    r = np.random.default_rng(3)
    h, g, d, s = 2, 4, 16, 64
    q, k, v = (r.standard_normal(sh).astype(np.float16) for sh in ((h, g, d), (h, s, d), (h, s, d)))
    for oshape in ((h, g - 1, d), (h, g, d - 4)):
        op, lp = np.zeros((h, 2 * g, d), np.float32), np.zeros((h, 2 * g), np.float32)
        with pytest.raises(tilelang.TileError) as info:
            m.decode_fused[{"BN": 16, "NS": 2, "NC": 2}](P(op, [1, g, d]), P(lp, [1, g]),
                                                         P(np.zeros(oshape, np.float16), [1, g, d]), q, k, v, s,
                                                         0.25).discard()
        assert info.value.code == "E0513" and "o must have q's shape" in str(info.value), oshape
