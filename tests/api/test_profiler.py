"""The profiler on the CPU interpreter: `with tilelang.profile()` and
`tilec run --profile/--trace` record every launch with its grid, time, bytes
and FLOPs (counted from the arguments and the IR), print the table and write
a Chrome trace; the cost model's counts on known kernels."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tilelang
from tilelang.ir import samples
from tilelang.profiler import hook
from tilelang.profiler.costs import kernel_cost
from tilelang.profiler.peaks import peak_for
from tilelang.profiler.report import roofline

ROOT = Path(__file__).resolve().parents[2]
P = tilelang.partition

SOURCE = """
kernel fn add<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>, y: &Tensor<f32, [?]>) {
    z.store(x.load_like(z) + y.load_like(z));
}
kernel fn saxpy<const B: i32>(y: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>, a: f32) {
    y.store(fma(x.load_like(y), full::<f32>([B], a), y.load()));
}
kernel fn rowsum<const BR: i32, const BC: i32>(out: &mut Tensor<f32, [BR]>, x: &Tensor<f32, [?, ?]>) {
    let px = x.partition([BR, BC]);
    let mut acc = zeros::<f32>([BR]);
    for j in 0..px.num_tiles(1) {
        acc = acc + px.load([block_id(0), j]).sum(1);
    }
    out.store(acc);
}
kernel fn tri<const B: i32>(out: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>) {
    let px = x.partition([B]);
    let mut acc = zeros::<f32>([B]);
    for j in 0..block_id(0) + 1 {
        acc = acc + px.load([j]);
    }
    out.store(acc);
}
"""


@pytest.fixture(scope="module")
def mod():  # type: ignore[no-untyped-def]
    return tilelang.compile(SOURCE)


def test_profile_records_every_api_launch(mod, tmp_path) -> None:  # type: ignore[no-untyped-def]
    n = 4096
    x, y, z = np.ones(n, np.float32), np.ones(n, np.float32), np.zeros(n, np.float32)
    out = io.StringIO()
    trace = tmp_path / "trace.json"
    with tilelang.profile(out=out, trace=str(trace)) as prof:
        assert hook.ACTIVE is prof
        mod.add(P(z, [1024]), x, y).sync()
        h = mod.saxpy(P(z, [1024]), x, 2.0).launch()
        h.wait()
    assert hook.ACTIVE is None
    r0, r1 = prof.records
    assert (r0.kernel, r0.grid, r0.engine) == ("add", (4,), "cpu")
    assert r0.cost.bytes == 3 * n * 4  # x and y read, z written
    assert r0.cost.flops == n and r0.cost.exact
    assert r1.kernel == "saxpy" and r1.cost.bytes == 3 * n * 4  # x read, y read and written
    assert r1.cost.flops == 2 * n  # one fma per element
    assert r0.seconds > 0 and r1.seconds > 0
    text = out.getvalue()
    assert "tile profile: 2 launches" in text and "add" in text and "saxpy" in text
    events = json.loads(trace.read_text())["traceEvents"]
    launches = [e for e in events if e.get("cat") == "launch"]
    assert [e["name"] for e in launches] == ["add", "saxpy"]
    assert launches[0]["args"]["bytes"] == 3 * n * 4 and launches[1]["ts"] >= launches[0]["ts"]


def test_loops_multiply_and_unknown_trip_counts_are_lower_bounds(mod) -> None:  # type: ignore[no-untyped-def]
    x = np.ones((64, 300), np.float32)
    out = np.zeros(64, np.float32)
    with tilelang.profile(print_table=False) as prof:
        mod.rowsum[16, 64](P(out, [16]), x).sync()
        z = np.zeros(256, np.float32)
        mod.tri(P(z, [64]), np.ones(256, np.float32)).sync()
    rs, tri = prof.records
    # 4 blocks x ceil(300 / 64) = 5 trips x (a sum of 16x64 + an add of 16)
    assert rs.cost.exact and rs.cost.flops == 4 * 5 * (16 * 64 + 16)
    assert rs.cost.bytes == x.nbytes + out.nbytes
    assert not tri.cost.exact and tri.cost.flops == 4 * 64  # counted once per block
    np.testing.assert_array_equal(out, 300)


def test_the_cost_of_an_mma_kernel() -> None:
    k = samples.gemm(64, 64, 32)  # c[M, N] = a[M, K] @ b[K, N], a k-loop of mma
    m, n, kk = 128, 192, 100
    shapes = {"c": (m, n), "a": (m, kk), "b": (kk, n)}
    nbytes = {"c": m * n * 4, "a": m * kk * 2, "b": kk * n * 2}
    cost = kernel_cost(k, (2, 3), shapes, nbytes)
    # 6 blocks x ceil(100 / 32) = 4 k-steps x 2*64*64*32 (the padded tiles' work)
    assert cost.flops == 6 * 4 * 2 * 64 * 64 * 32 and cost.exact and cost.tensor_core
    assert cost.bytes == sum(nbytes.values())


def test_no_profile_no_records(mod) -> None:  # type: ignore[no-untyped-def]
    z = np.zeros(100, np.float32)
    with tilelang.profile(print_table=False) as prof:
        pass
    mod.add(P(z, [64]), z.copy(), z.copy()).sync()
    assert prof.records == []


def test_tilec_run_profile_and_trace(tmp_path) -> None:  # type: ignore[no-untyped-def]
    trace = tmp_path / "t.json"
    res = subprocess.run(
        [sys.executable, "-m", "tilelang", "run", str(ROOT / "examples/saxpy.tile"), "--device", "cpu",
         "--profile", "--trace", str(trace)],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert "tile profile: 1 launch" in res.stderr and "saxpy" in res.stderr
    assert "[100000]" in res.stdout  # the program's own output is untouched
    events = json.loads(trace.read_text())["traceEvents"]
    (launch,) = [e for e in events if e.get("cat") == "launch"]
    assert launch["name"] == "saxpy" and launch["args"]["grid"] == [98]
    assert launch["args"]["bytes"] == 3 * 100_000 * 4


def test_peaks_of_known_and_unknown_cards() -> None:
    h200 = peak_for("NVIDIA H200")
    assert h200 is not None and h200.bandwidth == 4.8e12 and h200.source == "data sheet"
    est = peak_for(
        "Some GPU",
        {
            "multiprocessors": 10,
            "clock_khz": 1_000_000,
            "memory_clock_khz": 1_000_000,
            "bus_width_bits": 256,
        },
    )
    assert est is not None and est.bandwidth == 64e9 and est.fp32 == 10 * 1e9 * 256
    assert peak_for("Some GPU") is None


def test_roofline_png(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "r.png"
    wrote = roofline([("add", 1 / 12, 1e11)], peak_for("NVIDIA H200"), str(path))
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert not wrote and not path.exists()
        return
    assert wrote and path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_stream_gate_waits_for_a_value_the_host_writes_later() -> None:
    """`runtime/cuda_gate.py` against a stand-in driver: each hold waits
    (GEQ) on one mapped word for a new value, opening writes it (values only
    grow: opening a later hold opens the earlier ones), twice is fine."""
    import ctypes
    from types import SimpleNamespace

    from tilelang.runtime.cuda_gate import StreamGate

    word = (ctypes.c_uint32 * 16)()
    waits: list[tuple[object, int, int, int]] = []
    d = SimpleNamespace(
        CU_MEMHOSTALLOC_DEVICEMAP=2,
        CU_MEMHOSTALLOC_PORTABLE=1,
        CUstreamWaitValue_flags=SimpleNamespace(CU_STREAM_WAIT_VALUE_GEQ=SimpleNamespace(value=0)),
        cuMemHostAlloc=lambda size, flags: (0, ctypes.addressof(word)) if flags == 3 else (1,),
        cuMemHostGetDevicePointer=lambda host, flags: (0, 0xD000 + host - ctypes.addressof(word)),
        cuStreamWaitValue32=lambda s, addr, v, flags: waits.append((s, addr, v, flags)) or (0,),
    )

    def check(result, what):  # type: ignore[no-untyped-def]
        assert result[0] == 0, what
        return result[1] if len(result) > 1 else None

    gate = StreamGate(d, check)
    a = gate.hold("s1")
    b = gate.hold("s2")
    assert waits == [("s1", 0xD000, 1, 0), ("s2", 0xD000, 2, 0)] and (a, b) == (1, 2)
    assert word[0] == 0  # held until opened
    gate.open(a)
    assert word[0] == 1
    gate.open(b)
    gate.open(a)  # an earlier one again: nothing goes back
    assert word[0] == 2
    c = gate.hold("s1")
    gate.open_all()
    assert word[0] == c == 3
