"""Round 30 of the independent user's programs (huser31, 2026-12-07): a sparse / irregular-data engineer porting
CUDA and Triton kernels (CSR and COO sparse products, segment reductions over run-time offsets, embedding bags,
histograms, compaction, a radix sort, per-segment top-k, block-sparse attention, gathers and scatters at run-time
indices), written from README.md, docs/reference.md and `tilec doc` alone. Each program's tensors are checked
against NumPy written here from the docs' rules (integers, indices and maxima exactly, sums within a tolerance).

- v26: CSR SpMV, scalar (a nonzero at a time, `item()`) and vector (masked 4-wide tiles of the row's run, x
  gathered by a one-hot against x held whole); empty rows.
- v27: CSR SpMM with a dense right side (a [1, 16] row of B gathered a nonzero), a partial column tile.
- v28: COO scatter-add three safe ways: `atomic_add` a nonzero, a counting sort by row (per-block counts, the
  host's scan, a stable placement by `store_unchecked`) then one block a row, and the row owner bisecting the
  sorted rows.
- v29: segment sum, max and softmax over run-time offsets (empty segments first and last, a segment of one).
- v30: EmbeddingBag mean (an empty bag gives zeros) and the weighted sum.
- v31: bincount / histogram three ways (atomic an element, a block's one-hot tile added at once, private rows
  summed by a second launch) and a weighted bincount; values outside the bins skipped.
- v32: stream compaction (count, host scan, rank by cumsum, scatter) with the kept indices.
- v33: two LSD radix passes of 4 bits over u32 keys with payload: digit counts, the digit-major scan, a stable
  scatter.
- v34: per-segment top-3 with ties (lower index first), short and empty segments.
- v35: block-sparse attention over a run-time list of key blocks per query block (an empty list: zeros).
- v36: torch.gather along dim 1 and index_add_ along dim 0 at run-time indices, each index checked by the
  kernel's `assert` (an out-of-range index stops the run: test below), -1 padding skipped.
- v37: SDDMM (a GAT's edge scores): B's rows gathered into [8, D] chunks, scores stored a nonzero at a time.
- v38: COO -> CSR's row pointer on the device (atomic counts, a one-block scan with a carry) and
  torch.unique_consecutive with counts (run starts counted, scanned on the host, written to their slots).
- v39: a GAT layer over a CSR graph in one kernel (scores, leaky ReLU, the row's softmax, the aggregation).
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "backend"))  # llsim, for `program_suite`

from userprog import DIR, program_suite

import tilelang.run as run
from tilelang.diagnostics.model import TileError

Tensors = dict[str, np.ndarray]
f32 = np.float32


def _csr(rowptr: np.ndarray, cols: np.ndarray, vals: np.ndarray, ncols: int) -> np.ndarray:
    """The dense matrix of a CSR (repeated columns add)."""
    a = np.zeros((len(rowptr) - 1, ncols), np.float64)
    for r in range(len(rowptr) - 1):
        for k in range(rowptr[r], rowptr[r + 1]):
            a[r, cols[k]] += vals[k]
    return a


def _v26(t: Tensors, out: str) -> None:
    m = 13
    lens = np.array([(i * 7) % 6 if i < m else 0 for i in range(m + 1)])
    rowptr = np.concatenate([[0], np.cumsum(lens[:m])])
    np.testing.assert_array_equal(t["rowptr"], rowptr)
    assert (lens[:m] == 0).sum() >= 2   # empty rows
    nnz = rowptr[-1]
    np.testing.assert_array_equal(t["cols"], (np.arange(nnz) * 11 + 3) % 40)
    want = _csr(rowptr, t["cols"], t["vals"], 40) @ t["x"].astype(np.float64)
    np.testing.assert_allclose(t["y"], want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(t["yv"], want, rtol=1e-5, atol=1e-5)
    assert (t["y"][lens[:m] == 0] == 0).all()
    assert out.split()[0] == str(nnz), out


def _v27(t: Tensors, out: str) -> None:
    m = 9
    lens = np.array([(i * 5) % 7 for i in range(m)])
    rowptr = np.concatenate([[0], np.cumsum(lens)])
    np.testing.assert_array_equal(t["rowptr"], rowptr)
    want = _csr(rowptr, t["cols"], t["vals"], 30) @ t["b"].astype(np.float64)
    np.testing.assert_allclose(t["c"], want, rtol=1e-5, atol=1e-5)
    assert (t["c"][0] == 0).all() and out.split() == [str(rowptr[-1]), "[9,", "24]"], out


def _v28(t: Tensors, out: str) -> None:
    nnz = 37
    rows = (np.arange(nnz) * 7 + 2) % 11
    rows = np.where((rows == 4) | (rows == 9), (rows + 1) % 11, rows)
    cols = (np.arange(nnz) * 5 + 1) % 16
    vals, x = t["vals"], t["x"]
    want = np.zeros(11)
    np.add.at(want, rows, vals.astype(np.float64) * x[cols])
    for y in ("y1", "y2", "y3"):
        np.testing.assert_allclose(t[y], want, rtol=1e-5, atol=1e-5, err_msg=y)
    assert t["y1"][4] == 0 and t["y1"][9] == 0
    order = np.argsort(rows, kind="stable")   # the counting sort is stable
    np.testing.assert_array_equal(t["srows"], rows[order])
    np.testing.assert_array_equal(t["scols"], cols[order])
    np.testing.assert_array_equal(t["svals"], vals[order])
    np.testing.assert_array_equal(t["dest"][order], np.arange(nnz))
    np.testing.assert_array_equal(t["rowptr"], np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=11))]))


def _v29(t: Tensors, out: str) -> None:
    i = np.arange(11)
    lens = np.where((i == 0) | (i >= 9), 0, np.where(i == 5, 1, (i * 13 + 5) % 38))
    off = np.cumsum(lens) - lens
    np.testing.assert_array_equal(t["offsets"], off)
    x = t["x"].astype(np.float64)
    y = np.zeros_like(x)
    for s in range(10):
        seg = x[off[s]:off[s + 1]]
        assert t["sums"][s] == pytest.approx(seg.sum(), abs=1e-4)
        if len(seg):
            assert t["maxs"][s] == f32(seg.max())
            e = np.exp(seg - seg.max())
            assert t["denom"][s] == pytest.approx(e.sum(), rel=1e-5)
            y[off[s]:off[s + 1]] = e / e.sum()
        else:
            assert t["maxs"][s] == -np.inf and t["denom"][s] == 0
    np.testing.assert_allclose(t["y"], y, rtol=1e-5, atol=1e-6)
    assert lens[5] == 1 and t["y"][off[5]] == 1.0
    assert out.split()[-2:] == ["-inf", "0.0"], out


def _v30(t: Tensors, out: str) -> None:
    off, idx, table = t["offsets"], t["indices"], t["table"].astype(np.float64)
    i = np.arange(7)
    lens = np.where((i == 2) | (i == 6), 0, (i * 5 + 3) % 9)
    np.testing.assert_array_equal(off, np.cumsum(lens) - lens)
    np.testing.assert_array_equal(idx, (np.arange(off[6]) * 17 + 4) % 50)
    for b in range(6):
        rows = table[idx[off[b]:off[b + 1]]]
        want = rows.mean(0) if len(rows) else np.zeros(48)
        np.testing.assert_allclose(t["mean"][b], want, rtol=1e-5, atol=1e-6, err_msg=str(b))
        w = t["weights"][off[b]:off[b + 1]].astype(np.float64)
        np.testing.assert_allclose(t["wsum"][b], (w[:, None] * rows).sum(0), rtol=1e-5, atol=1e-6)
    assert (t["mean"][2] == 0).all() and (t["mean"][3] == 0).all()


def _v31(t: Tensors, out: str) -> None:
    x = t["x"]
    assert x.min() < 0 and x.max() > 23
    keep = (x >= 0) & (x < 24)
    want = np.bincount(x[keep], minlength=24)
    for h in ("h1", "h2", "h3"):
        np.testing.assert_array_equal(t[h], want, err_msg=h)
    np.testing.assert_array_equal(t["part"].sum(0), want)
    np.testing.assert_allclose(t["hw"], np.bincount(x[keep], t["w"][keep], minlength=24), rtol=1e-5)
    assert out.split() == [str(keep.sum()), "true"], out


def _v32(t: Tensors, out: str) -> None:
    x = t["x"]
    keep = x > f32(0.25)
    k = int(keep.sum())
    np.testing.assert_array_equal(t["out"][:k], x[keep])
    np.testing.assert_array_equal(t["idx"][:k], np.flatnonzero(keep))
    assert (t["out"][k:] == 0).all() and (t["idx"][k:] == -1).all()
    np.testing.assert_array_equal(t["slot"], np.where(keep, np.cumsum(keep) - 1, -1))
    assert out.split() == [str(k), "true", "-1"], out


def _v33(t: Tensors, out: str) -> None:
    keys = ((np.arange(200) * 97 + 13) % 61 * 4).astype(np.uint32)
    np.testing.assert_array_equal(t["keys"], keys)
    o1 = np.argsort(keys & 15, kind="stable")
    np.testing.assert_array_equal(t["k1"], keys[o1])
    np.testing.assert_array_equal(t["v1"], o1)
    np.testing.assert_array_equal(t["first"][o1], np.arange(200))
    order = np.argsort(keys, kind="stable")
    np.testing.assert_array_equal(t["k2"], keys[order])
    np.testing.assert_array_equal(t["v2"], order)   # stable: equal keys keep their first positions' order


def _v34(t: Tensors, out: str) -> None:
    off, x = t["offsets"], t["x"]
    assert len(np.unique(x)) < len(x) // 4   # ties
    for s in range(8):
        seg = x[off[s]:off[s + 1]]
        order = np.lexsort((np.arange(len(seg)), -seg))[:3]   # value descending, then index ascending
        wv = np.full(3, -np.inf, f32)
        wi = np.full(3, -1)
        wv[:len(order)] = seg[order]
        wi[:len(order)] = order + off[s]
        np.testing.assert_array_equal(t["vals"][s], wv, err_msg=str(s))
        np.testing.assert_array_equal(t["idx"][s], wi, err_msg=str(s))
    assert off[2] - off[1] == 0 and off[3] - off[2] == 1 and off[4] - off[3] == 2


def _v35(t: Tensors, out: str) -> None:
    q, k, v = (t[n].astype(np.float64) for n in "qkv")
    lists = [[0], [1, 0], [], [0, 3, 2], [4, 2, 0, 3]]
    np.testing.assert_array_equal(t["counts"], [len(x) for x in lists])
    for qb, kbs in enumerate(lists):
        np.testing.assert_array_equal(t["layout"][qb, :len(kbs)], kbs)
        rows = np.arange(qb * 16, qb * 16 + 16)
        cols = np.concatenate([np.arange(b * 16, b * 16 + 16) for b in kbs]).astype(int) if kbs else np.zeros(0, int)
        s = q[rows] @ k[cols].T * 0.17677669
        s = np.where(cols[None, :] <= rows[:, None], s, -np.inf)
        want = np.zeros((16, 32))
        if kbs:
            p = np.exp(s - s.max(1, keepdims=True))
            want = p @ v[cols] / p.sum(1, keepdims=True)
        np.testing.assert_allclose(t["o"][rows], want, rtol=1e-4, atol=1e-5, err_msg=str(qb))


def _v36(t: Tensors, out: str) -> None:
    x, idx = t["x"], t["idx"]
    np.testing.assert_array_equal(t["g"], np.take_along_axis(x, idx, 1))
    index = (np.arange(9) * 4) % 5 - 1
    want = np.zeros((4, 8), np.float64)
    np.add.at(want, index[index >= 0], t["src"][index >= 0].astype(np.float64))
    np.testing.assert_allclose(t["y"], want, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(t["skipped"], index < 0)
    assert out.split()[0] == "2", out


def _v37(t: Tensors, out: str) -> None:
    m = 10
    lens = np.array([(i * 11 + 3) % 20 for i in range(m)])
    rowptr = np.concatenate([[0], np.cumsum(lens)])
    np.testing.assert_array_equal(t["rowptr"], rowptr)
    np.testing.assert_array_equal(t["seen"], lens)
    cols = (np.arange(rowptr[-1]) * 7 + 5) % 30
    a, b = t["a"].astype(np.float64), t["b"].astype(np.float64)
    rows = np.repeat(np.arange(m), lens)
    want = (a[rows] * b[cols]).sum(1) * t["vals"]
    np.testing.assert_allclose(t["out"], want, rtol=1e-5, atol=1e-5)
    assert 0 in lens and lens.max() > 8   # an empty row, rows of several chunks


def _v38(t: Tensors, out: str) -> None:
    rows = (np.arange(61) * 13 + 4) % 23
    rows = np.where(rows == 7, 8, rows)
    cnt = np.bincount(rows, minlength=23)
    assert cnt[7] == 0
    np.testing.assert_array_equal(t["counts"], cnt)
    np.testing.assert_array_equal(t["rowptr"], np.concatenate([[0], np.cumsum(cnt)]))
    keys = np.arange(150) * np.arange(150) // 97 - 20
    u, first, counts = np.unique(keys, return_index=True, return_counts=True)
    nu = len(u)
    np.testing.assert_array_equal(t["uniq"][:nu], u)
    np.testing.assert_array_equal(t["first"][:nu], first)
    np.testing.assert_array_equal(np.diff(np.append(t["first"][:nu], 150)), counts)
    assert (t["first"][nu:] == 150).all() and (t["uniq"][nu:] == 0).all()
    np.testing.assert_array_equal(t["slot"], np.where(np.r_[True, keys[1:] != keys[:-1]],
                                                      np.cumsum(np.r_[True, keys[1:] != keys[:-1]]) - 1, -1))
    assert out.split()[-4:] == ["[61]", str(nu), "-20", str(u[-1])], out


def _v39(t: Tensors, out: str) -> None:
    n = 12
    lens = np.array([0 if i == 3 else (i * 5 + 2) % 10 for i in range(n)])
    rowptr = np.concatenate([[0], np.cumsum(lens)])
    np.testing.assert_array_equal(t["rowptr"], rowptr)
    cols = (np.arange(rowptr[-1]) * 5 + 1) % n
    h, a_src, a_dst = (t[k].astype(np.float64) for k in ("h", "a_src", "a_dst"))
    want = np.zeros((n, 16))
    for r in range(n):
        c = cols[rowptr[r]:rowptr[r + 1]]
        if len(c):
            e = h[r] @ a_dst + h[c] @ a_src
            e = np.where(e > 0, e, 0.2 * e)
            p = np.exp(e - e.max())
            want[r] = (p / p.sum()) @ h[c]
    np.testing.assert_allclose(t["out"], want, rtol=1e-5, atol=1e-5)
    assert (t["out"][3] == 0).all() and out.split() == [str(rowptr[-1]), "0.0"], out


CHECKS = {"v26_csr_spmv_scalar_vector": _v26, "v27_csr_spmm_dense_rhs": _v27,
          "v28_coo_scatter_add_three_ways": _v28, "v29_segment_sum_max_softmax": _v29,
          "v30_embedding_bag_mean": _v30, "v31_histogram_bincount": _v31, "v32_stream_compaction": _v32,
          "v33_radix_sort_passes": _v33, "v34_segment_topk": _v34, "v35_block_sparse_attention": _v35,
          "v36_checked_gather_index_add": _v36, "v37_sddmm_edge_scores": _v37,
          "v38_coo_to_csr_unique_consecutive": _v38, "v39_gat_layer_csr": _v39}

# the simulations on sm_90a (all 14 agree with the interpreter): v36 by default (0.5 s: atomics at run-time rows,
# the kernel's `assert`, element gathers by `item()`), the rest `heavy` (TILE_SLOW=1: 0.4-8 s each, measured
# -n 0 on this session's shared CPU); PTX for sm_90a of all, v36's by default
DEFAULT_SIM = {"v36_checked_gather_index_add"}
DEFAULT_PTX = {"v36_checked_gather_index_add"}

(test_every_program_has_a_check, test_the_interpreter_gives_the_independent_answer,
 test_the_simulated_gpu_gives_the_same_tensors, test_the_ptx_assembles) = program_suite(
    ("v2[6-9]_*.tile", "v3[0-9]_*.tile"), CHECKS, [(n, "sm_90a") for n in CHECKS],
    ptx=[(n, "sm_90a") for n in CHECKS],
    heavy=[n for n in CHECKS if n not in DEFAULT_SIM], heavy_ptx=[n for n in CHECKS if n not in DEFAULT_PTX])


@pytest.mark.parametrize(("old", "new", "says"), [
    ("+ 3) % 10)", "+ 3) % 11)", "gather: index out of range"),
    ("% 5 - 1;", "% 7 - 1;", "index_add: index out of range"),
    ("% 5 - 1;", "% 5 - 2;", "index_add: index out of range")])
def test_an_out_of_range_index_stops_the_run(old: str, new: str, says: str, tmp_path: Path) -> None:
    """v36 with an index past the end (10 of 10 columns; row 4 of 4) or below -1: the kernel's own check stops
    the run (E0700 with its message), where a plain load would have read 0 and an atomic been dropped."""
    src = (DIR / "v36_checked_gather_index_add.tile").read_text(encoding="utf-8")
    assert old in src
    f = tmp_path / "bad.tile"
    f.write_text(src.replace(old, new), encoding="utf-8")
    with pytest.raises(TileError) as info:
        run.execute(str(f), "cpu", out=io.StringIO())
    d = info.value.diagnostics[0]
    assert d.code == "E0700" and says in d.message, (d.code, d.message)
