"""Round 15 through the Python API (huser15, 2026-12-06): the programs of
this round (tests/user/programs/m*.tile) driven from NumPy the way a NumPy
user writes them.

- Bellman-Ford relaunched from a Python `while` until the kernel's
  `atomic_max` flag, a one-element array bound to a name, stays 0; the edges
  NumPy's `rng.integers` makes (int64) are refused (E0502) with a help that,
  followed, gives the interpreter's distances; the distances an `np.memmap`
  (an array backed by a file) receives in place.
- Tile shapes and generics as NumPy gives them: a tuple, `np.int64`
  elements, a NumPy array of the shape, `np.int64` generics, keyword
  arguments by parameter name (`err=`: the parameter that was an internal
  compiler error on the GPU, tests/backend/test_param_names.py).
- A masked array of int32 ids (E0801): the help filled it with `0.0`, a
  float for integers; it now fills with the array's own kind (`0`), and
  the help followed runs.
- A kernel named as one of the module's own attributes (`device`, `on`,
  `kernels`): `mod.device(..)` was "'str' object is not callable", with
  nothing to say where the kernel went; loading now warns with the
  spelling that reaches it, `mod.kernels["device"]`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tilelang

P = tilelang.partition
PROGRAMS = Path(__file__).parent / "programs"
INF = 1 << 29


@pytest.fixture(scope="module")
def bf() -> tilelang.Module:
    return tilelang.load(PROGRAMS / "m01_bellman_ford.tile")


def _edges() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(15)
    return rng.integers(0, 30, 90), rng.integers(0, 30, 90), rng.integers(1, 21, 90)


def _numpy_distances(src: np.ndarray, dst: np.ndarray, w: np.ndarray) -> np.ndarray:
    d = np.where(np.arange(30) == 0, 0, INF)
    for _ in range(30):
        for u, v, c in zip(src, dst, w, strict=True):
            if d[u] < INF:
                d[v] = min(d[v], d[u] + c)
    return d


def test_relaunched_until_the_device_flag_stays_zero(bf: tilelang.Module) -> None:
    src, dst, w = _edges()
    assert src.dtype == np.int64
    seen, dist, nxt, changed = np.zeros(90, np.int32), np.zeros(30, np.int32), np.zeros(30, np.int32), \
        np.zeros(1, np.int32)
    with pytest.raises(tilelang.CallError) as e:
        bf.relax(P(seen, [16]), src, dst, w, dist, nxt, changed).sync()
    assert e.value.code == "E0502" and "`src.astype(numpy.int32)`" in str(e.value)
    src, dst, w = (a.astype(np.int32) for a in (src, dst, w))  # the help, for each of the three
    dist = np.where(np.arange(30) == 0, 0, INF).astype(np.int32)
    rounds = 0
    while True:
        changed = np.zeros(1, np.int32)
        nxt = dist.copy()
        bf.relax(P(seen, [16]), src, dst, w, dist, nxt, changed).sync()
        dist, rounds = nxt, rounds + 1
        if changed[0] == 0:
            break
    np.testing.assert_array_equal(dist, _numpy_distances(src, dst, w))
    assert 2 < rounds < 30 and (dist > 0).sum() == 29  # every vertex reached, in more than two rounds
    np.testing.assert_array_equal(seen, np.minimum(16, 90 - 16 * (np.arange(90) // 16)))  # edges each block tried


def test_a_memmap_receives_the_pull_kernel_s_distances_in_place(bf: tilelang.Module, tmp_path: Path) -> None:
    src, dst, w = (a.astype(np.int32) for a in _edges())
    wm = np.full((30, 30), INF, np.int32)
    np.minimum.at(wm, (src, dst), w)
    d = np.where(np.arange(30) == 0, 0, INF).astype(np.int32)
    out = np.lib.format.open_memmap(tmp_path / "d.npy", mode="w+", dtype=np.int32, shape=(30,))
    for _ in range(30):
        bf.pull(P(out, [8]), wm, d).sync()   # N = 30 from d's shape
        d = np.array(out)
    out.flush()
    np.testing.assert_array_equal(np.load(tmp_path / "d.npy"), _numpy_distances(src, dst, w))


@pytest.mark.parametrize("tile", [(16,), [np.int64(16)], np.array([16]), 16])
def test_tile_shapes_as_numpy_gives_them(bf: tilelang.Module, tile: object) -> None:
    src, dst, w = (a.astype(np.int32) for a in _edges())
    seen, changed = np.zeros(90, np.int32), np.zeros(1, np.int32)
    dist = np.where(np.arange(30) == 0, 0, INF).astype(np.int32)
    nxt = dist.copy()
    bf.relax[np.int64(16)](P(seen, tile), src, dst, w, dist, nxt, changed).sync()
    assert changed[0] == 1 and nxt[0] == 0 and (nxt < INF).sum() > 1


def test_keyword_arguments_and_a_parameter_named_err() -> None:
    mod = tilelang.load(PROGRAMS / "m04_sinkhorn.tile")
    rng = np.random.default_rng(4)
    k = np.exp(-rng.random((40, 48), dtype=np.float32))
    u, v, a = rng.random(40, dtype=np.float32), rng.random(48, dtype=np.float32), np.full(40, 0.025, np.float32)
    seen, err = np.zeros(40, np.int32), np.zeros(1, np.float32)
    mod.row_error[16, 64](seen=P(seen, [16]), kmat=k, u=u, v=v, a=a, err=err).sync()
    want = np.abs(u.astype(np.float64) * (k.astype(np.float64) @ v) - a).max()
    np.testing.assert_allclose(err[0], want, rtol=1e-5)
    assert (seen == 1).all()


def test_a_masked_array_of_ids_is_told_to_fill_with_an_integer(bf: tilelang.Module) -> None:
    src, dst, w = (a.astype(np.int32) for a in _edges())
    masked = np.ma.masked_array(src, mask=src > 25)
    seen, changed = np.zeros(90, np.int32), np.zeros(1, np.int32)
    dist = np.where(np.arange(30) == 0, 0, INF).astype(np.int32)
    nxt = dist.copy()
    with pytest.raises(tilelang.CallError) as e:
        bf.relax(P(seen, [16]), masked, dst, w, dist, nxt, changed).sync()
    assert e.value.code == "E0801" and "`src.filled(0)`" in str(e.value), str(e.value)
    filled = masked.filled(0)
    assert filled.dtype == np.int32
    bf.relax(P(seen, [16]), filled, dst, w, dist, nxt, changed).sync()
    assert changed[0] == 1
    fm = np.ma.masked_array(np.ones(30, np.float32), mask=np.arange(30) == 3)
    with pytest.raises(tilelang.CallError, match=r"`t\.filled\(0\.0\)`|filled\(0\.0\)"):
        tilelang.load(PROGRAMS / "m04_sinkhorn.tile").rows[16, 64](P(np.zeros(40, np.float32), [16]),
                                                                   np.ones((40, 48), np.float32), np.ones(48, np.float32),
                                                                   fm).sync()


@pytest.mark.parametrize(("name", "table"), [("device", "kernels"), ("on", "kernels"), ("name", "functions")])
def test_an_item_named_as_the_module_s_own_attribute_is_reached_by_its_table(name: str, table: str) -> None:
    kernel = f"kernel fn {name}<const B: i32>(z: &mut Tensor<f32, [B]>) {{\n    z.store(z.load() + 1.0);\n}}\n"
    host = (f"kernel fn k<const B: i32>(z: &mut Tensor<f32, [B]>) {{\n    z.store(z.load() + 1.0);\n}}\n"
            f"fn {name}(z: &mut Tensor<f32, [?]>) {{\n    k(z.partition([4])).sync();\n}}\n")
    with pytest.warns(UserWarning, match=rf'the {"kernel" if table == "kernels" else "host function"} `{name}` has the '
                                         rf'name of the module\'s own `{name}`.*`mod\.{table}\["{name}"\]`'):
        mod = tilelang.compile(kernel if table == "kernels" else host)
    z = np.zeros(4, np.float32)
    if table == "kernels":
        mod.kernels[name](P(z, [4])).sync()
    else:
        mod.functions[name](z)
    np.testing.assert_array_equal(z, np.ones(4, np.float32))
