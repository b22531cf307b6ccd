"""The autotuner on the CPU interpreter: `#[autotune]` candidates timed on the
call's own arguments, the fastest kept in a record beside the compile cache
and reused by later calls and processes, `...` tiles picked by the tuner,
every candidate an ordinary checked call (the ownership verdict does not
depend on the candidate), failing candidates skipped with a note,
`tilec tune` and `tilec cache list|clear`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tilelang
from tilelang.api import call as call_mod
from tilelang.api import tuning as tuner
from tilelang.tuner import records
from tilelang.tuner.space import tune_spec

ROOT = Path(__file__).resolve().parents[2]
P = tilelang.partition

SOURCE = """
#[autotune(BR = [8, 16], BC = [32, 64], num_warps = [4, 8], key = [x])]
kernel fn rowsum<const BR: i32, const BC: i32>(out: &mut Tensor<f32, [BR]>, x: &Tensor<f32, [?, ?]>) {
    let px = x.partition([BR, BC]);
    let mut acc = zeros::<f32>([BR]);
    for j in 0..px.num_tiles(1) {
        acc = acc + px.load([block_id(0), j]).sum(1);
    }
    out.store(acc);
}

// accumulates into its output: tuning must not leave its runs behind
#[autotune(B = [64, 128, 1048576, 2097152])]
kernel fn accumulate<const B: i32>(y: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>) {
    y.store(y.load() + x.load_like(y));
}

kernel fn plain<const B: i32>(y: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>) {
    y.store(x.load_like(y));
}
"""


@pytest.fixture
def cache(tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture
def mod():  # type: ignore[no-untyped-def]
    return tilelang.compile(SOURCE, name="tuned")


def test_the_attribute_is_read() -> None:
    mod = tilelang.compile(SOURCE)
    spec = tune_spec(mod.rowsum.decl)
    assert spec is not None and spec.names == ("BR", "BC", "num_warps") and spec.key == ("x",)
    assert len(spec.configs()) == 8
    assert all(c["BC"] == 32 for c in spec.configs({"BC": 32}))


def test_first_call_tunes_and_records_later_calls_reuse(cache, mod, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    x = np.random.default_rng(0).random((64, 300), dtype=np.float32)
    out = np.zeros(64, np.float32)
    op = mod.rowsum(P(out, ...), x)  # the tile shape is the tuner's to pick
    (rec,) = records.default_store().all()
    assert {k: op.generics[k] for k in ("BR", "BC")} == {k: rec.best[k] for k in ("BR", "BC")}
    assert op._plan.kir.num_warps == rec.best["num_warps"]
    assert len(rec.timings) == 8 and rec.skipped == [] and rec.device == "cpu"
    assert rec.key_values == {"x": [[64, 300], "float32"]}
    assert list(cache.glob("tune/*.json"))
    op.sync()
    np.testing.assert_allclose(out, x.sum(1), rtol=1e-5)
    # a later call, and a later "process" (a fresh store reading the disk): no timing
    real_time = tuner._time
    monkeypatch.setattr(tuner, "_time", lambda *a: pytest.fail("timed again"))
    mod.rowsum(P(out, ...), x).sync()
    monkeypatch.setattr(records, "_STORE", None)
    again = mod.rowsum(P(out, ...), x)
    assert again.generics == op.generics
    again.sync()
    # another key (another shape) tunes again
    monkeypatch.setattr(tuner, "_time", real_time)
    out32 = np.zeros(32, np.float32)
    mod.rowsum(P(out32, ...), x[:32]).sync()
    assert len(records.default_store().all()) == 2


def test_tuning_leaves_the_arguments_as_it_found_them(cache, mod) -> None:  # type: ignore[no-untyped-def]
    x = np.arange(1000, dtype=np.float32)
    y = np.ones(1000, np.float32)
    op = mod.accumulate(P(y, ...), x)
    np.testing.assert_array_equal(y, 1)  # every timed candidate's writes were undone
    op.sync()
    np.testing.assert_array_equal(y, 1 + x)  # the returned operation runs once
    # the host memory of another library (`__array_interface__` only): its
    # writes were not undone, so the result held every timed run's sum
    y[...] = 1

    class Foreign:
        @property
        def __array_interface__(self) -> dict:  # type: ignore[type-arg]
            return y.__array_interface__

    op = mod.accumulate(P(Foreign(), ...), x[:999])  # another key: tuned again
    np.testing.assert_array_equal(y, 1)
    op.sync()
    np.testing.assert_array_equal(y[:999], 1 + x[:999])


def test_failing_candidates_are_skipped_with_a_note(cache, mod) -> None:  # type: ignore[no-untyped-def]
    x = np.arange(100, dtype=np.float32)
    y = np.zeros(100, np.float32)
    mod.accumulate(P(y, ...), x).sync()
    (rec,) = records.default_store().all()
    assert [c["B"] for c, _ in rec.timings] == [64, 128, 1048576]
    ((cfg, why),) = rec.skipped
    assert cfg == {"B": 2097152} and "E0213" in why and "elements" in why
    assert rec.best["B"] in (64, 128, 1048576)


def test_every_candidate_is_a_checked_call(cache, mod, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    seen = []
    real = call_mod.check_overlaps

    def spy(plan, ptrs):  # type: ignore[no-untyped-def]
        seen.append(plan.bound.instantiation.copy())
        return real(plan, ptrs)

    monkeypatch.setattr(call_mod, "check_overlaps", spy)
    x = np.random.default_rng(1).random((32, 64), dtype=np.float32)
    out = np.zeros(32, np.float32)
    mod.rowsum(P(out, ...), x).sync()
    tiles = {(i["BR"], i["BC"]) for i in seen}
    assert tiles == {(8, 32), (8, 64), (16, 32), (16, 64)}  # each candidate checked


def test_the_ownership_verdict_does_not_depend_on_the_candidate(cache, mod) -> None:  # type: ignore[no-untyped-def]
    buf = np.zeros(2000, np.float32)
    with pytest.raises(tilelang.BorrowError, match="E0303"):
        mod.accumulate(P(buf[:1000], ...), buf[500:1500])  # overlapping: refused, not skipped
    assert records.default_store().all() == []
    x = np.ones(1000, np.float32)
    y = np.zeros(1000, np.float32)
    h = mod.plain(P(x, [64]), np.ones(1000, np.float32)).launch()  # writes x
    with pytest.raises(tilelang.BorrowError, match="E0305"):
        mod.accumulate(P(y, ...), x)  # reads x while a launch writes it
    h.wait()


def test_what_the_call_fixes_is_not_tuned(cache, mod) -> None:  # type: ignore[no-untyped-def]
    x = np.random.default_rng(2).random((32, 64), dtype=np.float32)
    out = np.zeros(32, np.float32)
    op = mod.rowsum[{"BC": 32}](P(out, ...), x)
    assert op.generics["BC"] == 32
    (rec,) = records.default_store().all()
    assert {c["BC"] for c, _ in rec.timings} == {32}
    op.sync()
    op = mod.rowsum(P(out, [16]), x)  # BR from the tile; BC, hints tuned
    assert op.generics["BR"] == 16
    op.sync()


def test_a_tuner_tile_needs_an_autotuned_kernel(mod) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(
        tilelang.CallError, match=r"left to the tuner \(`...`\), but kernel `plain` has no"
    ):
        mod.plain(P(np.zeros(10, np.float32), ...), np.zeros(10, np.float32))


def test_tilec_tune_and_cache_list(tmp_path) -> None:  # type: ignore[no-untyped-def]
    script = tmp_path / "use.py"
    (tmp_path / "k.tile").write_text(SOURCE)
    script.write_text(
        "import numpy as np, tilelang\n"
        f"mod = tilelang.load({str(tmp_path / 'k.tile')!r})\n"
        "x = np.ones((16, 64), np.float32)\n"
        "out = np.zeros(16, np.float32)\n"
        "mod.rowsum(tilelang.partition(out, ...), x).sync()\n"
    )
    env = {"TILEC_CACHE_DIR": str(tmp_path / "c"), "PATH": "/usr/bin:/bin"}
    import os

    env = {**os.environ, **env}
    run = lambda *a: subprocess.run(  # noqa: E731
        [sys.executable, "-m", "tilelang", *a],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=600,
    )
    r = run("tune", str(script))
    assert r.returncode == 0, r.stderr
    assert "rowsum" in r.stdout and "1 tuning record" in r.stdout
    r = run("cache", "list")
    assert r.returncode == 0 and "1 tuning record" in r.stdout and "k::rowsum on cpu" in r.stdout
    r = run("cache", "clear")
    assert r.returncode == 0
    assert "0 tuning records" in run("cache", "list").stdout


TILE_PROGRAM = """
#[autotune(num_warps = [2, 4, 8], stages = [2, 3])]
kernel fn add<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>, y: &Tensor<f32, [?]>) {
    z.store(x.load_like(z) + y.load_like(z) + z.load());
}
fn main() {
    let n = 5000;
    let x = rand::<f32>([n], 1);
    let y = rand::<f32>([n], 2);
    let mut z = ones::<f32>([n]);
    add(z.partition([1024]), &x, &y).sync();
    assert_close(&z, &(x + y + 1.0));
    print("ok");
}
"""


def test_tile_programs_tune_their_hints(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import os

    prog = tmp_path / "p.tile"
    prog.write_text(TILE_PROGRAM)
    env = {**os.environ, "TILEC_CACHE_DIR": str(tmp_path / "c")}
    run = lambda *a: subprocess.run(  # noqa: E731
        [sys.executable, "-m", "tilelang", *a], capture_output=True, text=True, env=env, cwd=ROOT, timeout=600
    )
    r = run("tune", str(prog), "--device", "cpu")
    # the tuning runs restored `z`, so the program's own check still holds
    assert r.returncode == 0 and r.stdout.startswith("ok"), r.stdout + r.stderr
    # the record of an instance's hints names the instance (round 11: a tuned tile shape makes one a candidate)
    assert "1 tuning record made" in r.stdout and "add<B=1024> on cpu" in r.stdout and "6 timed" in r.stdout
    r = run("run", str(prog), "--device", "cpu")
    assert r.returncode == 0 and r.stdout.strip() == "ok"
    assert "1 tuning record" in run("cache", "list").stdout


def test_tilec_tune_names_the_instance_of_each_hint_record(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # huser11: a tuned tile shape (`B = [64, 128]`) with tuned hints made three records, two of them the same
    # line ("scale on cpu [..] -> num_warps=8"): one of each candidate instance's hints, and the tile's
    import os

    prog = tmp_path / "t.tile"
    prog.write_text("""#[autotune(B = [64, 128], num_warps = [4, 8])]
kernel fn scale<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>) {
    z.store(x.load_like(z) * 2.0);
}
fn main() {
    let x = arange::<f32>(1000);
    let mut z = zeros::<f32>([1000]);
    scale(z.partition([_]), &x).sync();
    print(z.sum());
}
""")
    env = {**os.environ, "TILEC_CACHE_DIR": str(tmp_path / "c")}
    r = subprocess.run([sys.executable, "-m", "tilelang", "tune", str(prog)], capture_output=True, text=True,
                       env=env, cwd=ROOT, timeout=600)
    assert r.returncode == 0, r.stderr
    lines = [ln.strip() for ln in r.stdout.splitlines() if " on cpu " in ln]
    assert "3 tuning records made" in r.stdout and len(lines) == 3 and len({ln.split(" -> ")[0] for ln in lines}) == 3
    assert any(ln.startswith("scale<B=64> on cpu") for ln in lines) and any(
        ln.startswith("scale<B=128> on cpu") for ln in lines) and any(ln.startswith("scale on cpu") for ln in lines)


def test_a_total_that_unsafe_atomics_write_is_restored_too(cache) -> None:  # type: ignore[no-untyped-def]
    # the hrev review (2026-12-04): a `&` array the kernel adds to atomically held every timed run's sum
    m = tilelang.compile("""
#[autotune(B = [2, 4], num_warps = [1, 2])]
kernel fn total_sum<const B: i32>(seen: &mut Tensor<i32, [B]>, x: &Tensor<i32, [?]>, total: &Tensor<i32, [1]>) {
    seen.store(seen.load() + 1);
    unsafe {
        atomic_add(&total, [0], x.load_like(seen).sum(0));
    }
}
""")
    x, seen, total = np.ones(16, np.int32), np.zeros(16, np.int32), np.zeros(1, np.int32)
    m.total_sum(tilelang.partition(seen, [...]), x, total).sync()
    assert int(total[0]) == 16 and int(seen.sum()) == 16


def test_tuning_inside_a_graph_block_is_not_recorded(cache, mod) -> None:  # type: ignore[no-untyped-def]
    # hrev10: the first call of a key made in `with tilelang.graph()` timed its candidates in the
    # block, and their runs were recorded (43 operations for two candidates): every replay ran them
    # all, and an accumulating kernel added 43 times where the block reads as once
    x = np.ones(256, np.float32)
    y = np.zeros(256, np.float32)
    with tilelang.graph() as g:
        mod.accumulate(P(y, ...), x).sync()
    assert len(g.operations) == 1 and not y.any()  # the tuning left `y` as it found it
    g.replay()
    np.testing.assert_array_equal(y, 1.0)
