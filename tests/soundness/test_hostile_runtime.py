"""The hostile corpus, continued: the paths a `.tile` file cannot show.

- The REPL: launches whose handles the session loses (an inner block, a
  shadowed name, a failed entry), and borrows held across entries.
- The Python API: a Tile host function called on an array a pending launch
  uses (refused like a kernel call: E0309/E0305, E0303 for aliases), and
  `TILE_SANITIZE=1`.

Each hostile input must be refused with a located error (a `<repl-N>` line,
or the API's `where` naming the Tile declaration), or, where the session
must recover, nothing may stay in flight unknown to the checker.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tilelang
from tilelang.repl import ReplSession

ROOT = Path(__file__).resolve().parents[2]

KERNEL = """kernel fn inc<const B: i32>(z: &mut Tensor<f32, [B]>) {
    z.store(z.load() + 1.0);
}"""
SETUP = "let mut a = zeros::<f32>([1024]);"


@pytest.fixture
def repl() -> ReplSession:
    s = ReplSession(device="cpu")
    assert s.feed(KERNEL).ok
    assert s.feed(SETUP).ok
    return s


def _in_flight(s: ReplSession) -> int:
    assert s._runtime is not None
    return len(s._runtime.inflight.handles)


# ---------------------------------------------------------------- the REPL
@pytest.mark.parametrize(
    "entry",
    [
        # the handle lives in an inner block
        '{ let h = inc(a.partition([256])).launch(); assert(1 == 2, "stop"); h.wait(); }',
        # the handle is in a branch
        'if true { let h = inc(a.partition([256])).launch(); assert(false, "stop"); h.wait(); }',
    ],
    ids=["inner_block", "branch"],
)
def test_repl_failed_entry_leaves_nothing_in_flight(repl: ReplSession, entry: str) -> None:
    r = repl.feed(entry)
    assert not r.ok and "error[E0710]" in r.stderr and "<repl-" in r.stderr
    assert _in_flight(repl) == 0  # waited for, wherever its handle was
    after = repl.feed("inc(a.partition([256])).sync();\na.sum()")
    assert after.ok, after.stderr
    assert after.stdout == "f32 = 2048.0\n"


def test_repl_entry_hiding_its_own_launch_is_refused(repl: ReplSession) -> None:
    # the handle shadowed before the entry ends: nothing could wait for it after the entry, so the entry is
    # refused at check (E0308 marking the `let`, as a file's block end), before anything runs
    r = repl.feed('let h = inc(a.partition([256])).launch();\nlet h = 3;\nassert(h == 4, "stop");')
    assert not r.ok and "error[E0308]" in r.stderr and "hides the handle" in r.stderr
    assert _in_flight(repl) == 0  # nothing ran
    after = repl.feed("inc(a.partition([256])).sync();\na.sum()")
    assert after.ok, after.stderr
    assert after.stdout == "f32 = 1024.0\n"  # one launch: the refused entry's never ran


def test_repl_launch_kept_across_entries_is_still_borrowed(repl: ReplSession) -> None:
    assert repl.feed("let h = inc(a.partition([256])).launch();").ok
    r = repl.feed("a.sum()")
    assert not r.ok and "error[E0305]" in r.stderr and "<repl-" in r.stderr
    assert repl.feed("h.wait();").ok
    assert repl.feed("a.sum()").ok
    # A later entry that would hide a handle in flight is refused (nothing could wait for it after it: a
    # file's E0308); the handle stays reachable, so waiting for it frees the tensor.
    assert repl.feed("let g = inc(a.partition([256])).launch();").ok
    r = repl.feed("let g = 1;")
    assert not r.ok and "error[E0308]" in r.stderr
    r = repl.feed("a.sum()")
    assert not r.ok and "error[E0305]" in r.stderr
    assert repl.feed("g.wait();").ok
    assert repl.feed("let g = 1;").ok
    assert repl.feed("a.sum()").ok


def test_repl_unbound_launch_refused(repl: ReplSession) -> None:
    r = repl.feed("inc(a.partition([256])).launch();")
    assert not r.ok and "error[E0308]" in r.stderr
    assert _in_flight(repl) == 0  # nothing ran


def test_repl_partition_through_a_tuple(repl: ReplSession) -> None:
    assert repl.feed("let ps = (a.partition([256]), a.partition([512]));").ok
    assert repl.feed("let h = inc(ps.0).launch();").ok
    r = repl.feed("let h2 = inc(ps.1).launch();")
    assert not r.ok and "error[E0309]" in r.stderr
    assert repl.feed("h.wait();").ok


def test_repl_graph_capture_held_across_entries(repl: ReplSession) -> None:
    # a graph recorded in one entry keeps `a` captured in the later ones (rule 7):
    # assigning or moving it is refused; a shadowing `let` leaves the captured tensor alone
    assert repl.feed("let g = graph { inc(a.partition([256])); };").ok
    r = repl.feed("a = zeros::<f32>([1024]);")
    assert not r.ok and "error[E0307]" in r.stderr and "<repl-" in r.stderr
    r = repl.feed("let b = a;")
    assert not r.ok and "error[E0307]" in r.stderr
    assert repl.feed("g.replay();\nlet mut a = ones::<f32>([4]);").ok
    assert repl.feed("g.replay();").ok
    after = repl.feed("a.sum()")
    assert after.ok and after.stdout == "f32 = 4.0\n", after.stderr


def test_repl_device_switch_waits_for_launches_in_flight(repl: ReplSession) -> None:
    """`:device` copies every tensor to the other device: not while a launch
    still writes one. `:reset` waits for it. (A handle can no longer be hidden
    by a later entry's `let`: that entry is refused, E0308.)"""
    assert repl.feed("let h = inc(a.partition([256])).launch();").ok
    assert not repl.feed("let h = 1;").ok
    r = repl.feed(":device cpu")
    assert not r.ok and "`h` still in flight" in r.stderr
    assert _in_flight(repl) == 1
    assert repl.feed(":reset").ok
    assert _in_flight(repl) == 0  # waited for, not forgotten
    assert repl.feed(":device cpu").ok


# ---------------------------------------------------------------- the Python API
SRC = """kernel fn inc<const B: i32>(z: &mut Tensor<f32, [B]>) {
    z.store(z.load() + 1.0);
}

fn total(t: &Tensor<f32, [?]>) -> f32 {
    t.sum()
}

fn bump(t: &mut Tensor<f32, [?]>) {
    inc(t.partition([256])).sync();
}

fn both(t: &mut Tensor<f32, [?]>, u: &Tensor<f32, [?]>) {
    inc(t.partition([256])).sync();
    print(u.sum());
}

fn pair(p: (&Tensor<f32, [?]>, &mut Tensor<f32, [?]>)) -> f32 {
    inc(p.1.partition([256])).sync();
    p.0.sum()
}

kernel fn tally(z: &mut Tensor<f32, [256]>, acc: &Tensor<f32, [4]>) {
    z.store(z.load());
    unsafe { atomic_add(&acc, [0], 1.0); }
}

fn add_into(t: (&Tensor<f32, [4]>, i32)) {
    unsafe { atomic_add(t.0, [t.1], 1.0); }
}

kernel fn tally_tuple(z: &mut Tensor<f32, [256]>, acc: &Tensor<f32, [4]>) {
    z.store(z.load());
    add_into((acc, 0));
}

kernel fn tally_read(z: &mut Tensor<f32, [256]>, acc: &Tensor<f32, [4]>, y: &Tensor<f32, [?]>) {
    z.store(y.load_like(z));
    add_into((acc, 0));
}
"""


@pytest.fixture
def mod():  # type: ignore[no-untyped-def]
    return tilelang.compile(SRC, device="cpu")


def test_api_host_fn_reading_an_array_a_launch_writes(mod) -> None:  # type: ignore[no-untyped-def]
    a = np.zeros(1024, np.float32)
    h = mod.inc(tilelang.partition(a, [256])).launch()
    with pytest.raises(tilelang.BorrowError) as e:
        mod.total(a)
    assert e.value.code == "E0305" and "total" in str(e.value)
    h.wait()
    assert mod.total(a) == 1024.0


def test_api_host_fn_writing_an_array_a_launch_writes(mod) -> None:  # type: ignore[no-untyped-def]
    a = np.zeros(1024, np.float32)
    h = mod.inc(tilelang.partition(a, [256])).launch()
    with pytest.raises(tilelang.BorrowError) as e:
        mod.bump(a)
    assert e.value.code == "E0309"
    assert "fn bump" in str(e.value)  # located at the Tile declaration
    h.wait()
    mod.bump(a)
    assert a.sum() == 2048.0


def test_api_host_fn_on_an_overlapping_view(mod) -> None:  # type: ignore[no-untyped-def]
    a = np.zeros(2048, np.float32)
    h = mod.inc(tilelang.partition(a[:1024], [256])).launch()
    with pytest.raises(tilelang.BorrowError) as e:
        mod.total(a[512:])
    assert e.value.code == "E0305"
    h.wait()


def test_api_host_fn_aliased_arguments(mod) -> None:  # type: ignore[no-untyped-def]
    a = np.zeros(1024, np.float32)
    with pytest.raises(tilelang.BorrowError) as e:
        mod.both(a, a)
    assert e.value.code == "E0303"
    b = np.ones(1024, np.float32)
    mod.both(a, b)  # disjoint arrays are fine


def test_api_host_fn_tuple_arguments(mod) -> None:  # type: ignore[no-untyped-def]
    """Arrays inside a tuple argument are checked like direct ones (and converted)."""
    a = np.zeros(1024, np.float32)
    b = np.ones(1024, np.float32)
    h = mod.inc(tilelang.partition(a, [256])).launch()
    with pytest.raises(tilelang.BorrowError) as e:
        mod.pair((a, b))  # reads `a` in flight
    assert e.value.code == "E0305" and "`p.0`" in str(e.value)
    h.wait()
    with pytest.raises(tilelang.BorrowError) as e:
        mod.pair((b, b))  # one array as `&` and as `&mut`
    assert e.value.code == "E0303"
    assert mod.pair((a, b)) == 1024.0 and b.sum() == 2048.0  # written back


@pytest.mark.parametrize("kernel", ["tally", "tally_tuple"])
def test_api_unsafe_written_shared_argument_is_written(mod, kernel: str) -> None:  # type: ignore[no-untyped-def]
    """`tally` writes its `&` parameter `acc` with an atomic (`tally_tuple` through a device function given
    `(acc, 0)`, round 25: not seen before): a pending launch of it writes `acc`, so a host function may not
    read it meanwhile."""
    k = getattr(mod, kernel)
    z = np.zeros(1024, np.float32)
    acc = np.zeros(4, np.float32)
    h = k(tilelang.partition(z, [256]), acc).launch()
    with pytest.raises(tilelang.BorrowError) as e:
        mod.total(acc)
    assert e.value.code == "E0305"
    with pytest.raises(tilelang.BorrowError) as e:
        z2 = np.zeros(1024, np.float32)
        k(tilelang.partition(z2, [256]), acc).launch()
    assert e.value.code == "E0309"
    h.wait()
    assert mod.total(acc) == 4.0
    ro = np.zeros(4, np.float32)
    ro.flags.writeable = False
    with pytest.raises(tilelang.CallError):  # the kernel writes it
        k(tilelang.partition(z, [256]), ro).sync()


def test_api_unsafe_written_argument_overlapping_a_read_one(mod) -> None:  # type: ignore[no-untyped-def]
    """`acc`, written through a device function given `(acc, 0)`, and `y`, read, share memory: one launch
    would read what its atomics update (round 25: accepted, the tuple hid the write)."""
    z = np.zeros(1024, np.float32)
    y = np.zeros(1024, np.float32)
    with pytest.raises(tilelang.BorrowError) as e:
        mod.tally_read(tilelang.partition(z, [256]), y[:4], y)
    assert e.value.code == "E0303"
    acc = np.zeros(4, np.float32)
    mod.tally_read(tilelang.partition(z, [256]), acc, y).sync()
    assert acc[0] == 4.0


SANITIZED = """import numpy as np, tilelang
mod = tilelang.compile('''
kernel fn spread<const B: i32>(z: &mut Tensor<f32, [B]>, out: &Tensor<f32, [B]>) {
    z.store(z.load());
    unsafe { store_unchecked(&out, [0], z.load()); }
}
''', device="cpu")
z = np.ones(1024, np.float32)
out = np.zeros(256, np.float32)
try:
    mod.spread(tilelang.partition(z, [256]), out).sync()
    print("ran")
except tilelang.TileError as e:
    print(type(e).__name__, e.code if hasattr(e, "code") else "", str(e).splitlines()[0])
"""


def test_api_tile_sanitize_environment() -> None:
    def run(env: dict[str, str]) -> str:
        return subprocess.run([sys.executable, "-c", SANITIZED], capture_output=True, text=True,
                              cwd=ROOT, timeout=120,
                              env={**os.environ, "PYTHONPATH": str(ROOT), **env}).stdout

    assert run({"TILE_SANITIZE": ""}).strip() == "ran"
    out = run({"TILE_SANITIZE": "1"})
    assert out.startswith("ExecutionError") and "E0730" in out, out
