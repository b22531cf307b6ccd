"""Device `print` on the GPU (`backend/prints.py`, `device_print` in `llvm.py`).

CPU tests: printing kernels compile and assemble; the host decoder turns
records (written here the way the kernel writes them, in a scrambled block
order) into exactly the interpreter's lines, in the interpreter's order, and
copes with a full buffer. GPU tests (marked `gpu`): the same programs print
the same lines on both engines.
"""

from __future__ import annotations

import io
import struct
from pathlib import Path

import numpy as np
import pytest

from tilelang.backend import compile_kernel
from tilelang.backend.prints import HEADER, RECORD_HEADER, PrintValue, decode
from tilelang.backend.target import ptxas_available, run_ptxas
from tilelang.dtypes import DType

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PROGRAMS = [HERE / "programs" / "device_print_tiles.tile", ROOT / "tests" / "run" / "device_print.tile",
            ROOT / "tests" / "run" / "walk_print_order.tile"]


def printing_kernel():  # type: ignore[no-untyped-def]
    """z: [6, 3] in [2, 3] tiles; each block prints its id and its tile in several types."""
    from tilelang.ir import nodes as ir
    from tilelang.ir.builder import Builder

    b = Builder("p")
    b.tensor_param("z", DType.F32, 2, mutable=True, tile_shape=(2, 3))
    bid = b.block_id(0)
    row = b.mul(bid, b.const(2, DType.I32))
    zero = b.const(0, DType.I32)
    x = b.load("z", (row, zero), (2, 3))
    pos = b.elementwise(ir.ElemOp.GT, x, b.broadcast(b.const(0.0, DType.F32), (2, 3)))
    b.print_("b ", bid, " x ", x, " h ", b.cast(x, DType.F16), " bf ", b.cast(x, DType.BF16),
             " pos ", pos, " i ", b.cast(x, DType.I64), " d ", b.cast(bid, DType.F64))
    b.print_("second ", bid)
    b.store("z", (row, zero), x)
    return b.finish()


def z_values() -> np.ndarray:
    # multiples of 1/4: exact in f16 and bf16, so the record holds the same values
    return (np.arange(18, dtype=np.float32).reshape(6, 3) - 8.0) / 4.0


def _pack(part: PrintValue, value: np.ndarray) -> bytes:
    if part.dtype is DType.BOOL:
        return value.astype(np.uint8).tobytes()
    return value.astype(DType.F32.np_dtype if part.dtype is DType.BF16 else part.dtype.np_dtype).tobytes()


def emulate(formats, blocks_in_order, values_of, cap: int) -> bytes:  # type: ignore[no-untyped-def]
    """A buffer as the kernel leaves it: records reserved in the given order
    (block, print number), the ones that do not fit dropped."""
    area = bytearray(b"\xcd" * cap)  # unwritten bytes are garbage, not zeros
    cursor = end = dropped = 0
    for block, num in blocks_in_order:
        fmt = formats[num]
        c = cursor
        cursor += fmt.size
        if cursor > cap:
            dropped += 1
            continue
        end = max(end, cursor)
        struct.pack_into("<iI", area, c, num, block)
        vals = iter(values_of(block, num))
        for part in fmt.parts:
            if isinstance(part, PrintValue):
                data = _pack(part, next(vals))
                area[c + part.offset:c + part.offset + len(data)] = data
    head = struct.pack("<QIIQ", cursor, cap, dropped, end).ljust(HEADER, b"\0")
    return head + bytes(area)


def _values(block: int, num: int) -> list[np.ndarray]:
    x = z_values()[2 * block:2 * block + 2]
    if num == 1:
        return [np.asarray(block, np.int32)]
    return [np.asarray(block, np.int32), x, x, x, x > 0, x.astype(np.int64), np.asarray(float(block))]


def _cpu_lines(kernel, grid, args):  # type: ignore[no-untyped-def]
    from tilelang.interp import run_kernel

    lines: list[str] = []
    run_kernel(kernel, grid, args, out=lines.append)
    return lines


def test_print_records_have_a_static_layout() -> None:
    ck = compile_kernel(printing_kernel(), "sm_80")
    assert [s.what for s in ck.abi.slots][-2:] == ["err", "print"]
    first, second = ck.abi.prints
    vals = [p for p in first.parts if isinstance(p, PrintValue)]
    assert [v.dtype for v in vals] == [DType.I32, DType.F32, DType.F16, DType.BF16, DType.BOOL,
                                       DType.I64, DType.F64]
    assert vals[0].offset == RECORD_HEADER and all(v.offset % 8 == 0 for v in vals)
    assert first.size % 16 == 0 and second.size == 32


def test_a_kernel_without_print_takes_no_print_buffer() -> None:
    from tilelang.ir import samples

    ck = compile_kernel(samples.vector_add(256), "sm_80")
    assert ck.abi.prints == () and "print" not in [s.what for s in ck.abi.slots]


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_printing_kernels_assemble(arch: str) -> None:
    from tilelang import driver

    kernels = [printing_kernel()]
    for path in PROGRAMS:
        res = driver.compile(path, "ir", options=driver.Options(arch=arch))
        assert res.ok, res.diagnostics
        kernels += list(res.output)
    for k in kernels:
        ck = compile_kernel(k, arch)
        assert ck.abi.prints
        # CHECK: thread 0 reserves with a 64-bit atomic add, records what fit with a max
        assert "atom.global.add.u64" in ck.ptx and "atom.global.max.u64" in ck.ptx
        if ptxas_available():
            r = run_ptxas(ck.ptx, arch)
            assert r.returncode == 0, r.stderr


def test_decoded_records_equal_the_interpreters_lines_in_its_order() -> None:
    k = printing_kernel()
    want = _cpu_lines(k, (3,), [z_values()])
    assert want[0].startswith("b 0 x [[-2.0, -1.75, -1.5],") and len(want) == 6
    fmts = compile_kernel(k, "sm_80").abi.prints
    # the GPU reserves records in any block order; each block's prints stay in program order
    order = [(2, 0), (0, 0), (2, 1), (1, 0), (0, 1), (1, 1)]
    raw = emulate(fmts, order, _values, cap=1 << 16)
    got = decode(fmts, raw)
    assert got.dropped == 0
    assert got.lines == want


def test_a_full_buffer_keeps_the_records_that_fit_and_counts_the_rest() -> None:
    k = printing_kernel()
    want = _cpu_lines(k, (3,), [z_values()])
    fmts = compile_kernel(k, "sm_80").abi.prints
    order = [(1, 0), (1, 1), (0, 0), (0, 1), (2, 0), (2, 1)]
    cap = fmts[0].size * 2 + fmts[1].size  # (1, 0), (1, 1), (0, 0) fit; (0, 1) does not
    got = decode(fmts, emulate(fmts, order, _values, cap))
    assert got.dropped == 3
    assert got.lines == [want[0], want[2], want[3]]


def test_decoding_never_reads_past_a_short_buffer() -> None:
    k = printing_kernel()
    fmts = compile_kernel(k, "sm_80").abi.prints
    raw = emulate(fmts, [(0, 0), (0, 1)], _values, cap=1 << 12)
    got = decode(fmts, raw[:HEADER + fmts[0].size + 8])  # the second record cut short
    assert len(got.lines) == 1


# ---------------------------------------------------------------- on the GPU
def _gpu():  # type: ignore[no-untyped-def]
    from tilelang.runtime import cuda

    if not cuda.is_available():
        pytest.skip("no CUDA device")
    return cuda.device()


class _Lines:
    def __init__(self, dev) -> None:  # type: ignore[no-untyped-def]
        self.dev, self.lines = dev, []

    def __enter__(self) -> list[str]:
        self.old, self.dev.out = self.dev.out, self.lines.append
        return self.lines

    def __exit__(self, *exc: object) -> None:
        self.dev.out = self.old


@pytest.mark.gpu
@pytest.mark.parametrize("path", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_programs_print_the_same_on_the_gpu(path: Path) -> None:
    from tilelang import run

    _gpu()
    outs = []
    for device in ("cpu", "gpu"):
        out, err = io.StringIO(), io.StringIO()
        assert run.run_file(path, device=device, out=out, err=err) == 0, err.getvalue()
        outs.append(out.getvalue())
    assert outs[1] == outs[0]


@pytest.mark.gpu
def test_kernel_prints_the_interpreters_lines(capsys) -> None:  # type: ignore[no-untyped-def]
    dev = _gpu()
    k = printing_kernel()
    want = _cpu_lines(k, (3,), [z_values()])
    with _Lines(dev) as lines:
        z = dev.upload(z_values())
        dev.run(dev.prepare(k), (3,), [z])
        dev.sync()
    assert lines == want
    assert capsys.readouterr().err == ""


@pytest.mark.gpu
def test_a_full_print_buffer_warns_and_keeps_whole_lines(monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    dev = _gpu()
    monkeypatch.setenv("TILEC_PRINT_BUFFER_MB", "0")  # the minimum: 4 KiB
    k = printing_kernel()
    blocks = 300
    zs = np.resize(z_values(), (2 * blocks, 3))
    want = _cpu_lines(k, (blocks,), [zs.copy()])
    with _Lines(dev) as lines:
        dev.run(dev.prepare(k), (blocks,), [dev.upload(zs)])
        dev.sync()
    assert 0 < len(lines) < len(want)
    assert all(line in want for line in lines)
    assert [want.index(line) for line in lines] == sorted(want.index(line) for line in lines)
    assert "device `print` lines of `p` were lost" in capsys.readouterr().err


@pytest.mark.gpu
def test_graph_replay_prints_each_time() -> None:
    dev = _gpu()
    k = printing_kernel()
    want = _cpu_lines(k, (3,), [z_values()])
    z = dev.upload(z_values())
    p = dev.prepare(k)
    s = dev.new_stream()
    with _Lines(dev) as lines:
        dev.run(p, (3,), [z])  # compiled and loaded before the capture
        assert lines == want
        dev.capture(s)
        dev.run(p, (3,), [z], stream=s)
        g = dev.end_capture(s)
        assert lines == want  # nothing ran while capturing
        dev.replay(g)
        dev.replay(g)
        dev.sync()
    assert lines == want * 3


def test_a_walks_lines_follow_its_tiles_whatever_the_walking_blocks() -> None:
    # hrev 2026-12-04: the lines of a print in a tile walk's (or queue's) loop came out in
    # the order of the blocks that took the tiles, which depends on how many blocks walk
    # (2 a row in the interpreter, a wave on a GPU): `ir.Print.order` places them by tile
    from tilelang import driver
    from tilelang.interp import run_kernel

    res = driver.compile(ROOT / "tests" / "run" / "walk_print_order.tile", "ir")
    assert res.ok, res.diagnostics
    kernels = {k.name: k for k in res.output}
    walk, pull = kernels["walk"], kernels["pull"]
    assert all(op.order for op in _prints(walk)) and all(op.order for op in _prints(pull))
    seen = []
    for blocks in (1, 2, 3, 5, 100):
        lines: list[str] = []
        run_kernel(walk, (2, 3), [np.zeros((2, 12), np.float32)], out=lines.append, queue_blocks=blocks)
        run_kernel(pull, (10,), [np.zeros(40, np.float32)], out=lines.append, queue_blocks=blocks)
        seen.append(lines)
    assert all(s == seen[0] for s in seen)
    assert seen[0][:4] == ["row 0 tile 0", "  row 0 tile 0 (device fn)", "row 0 tile 1", "  row 0 tile 1 (device fn)"]
    assert seen[0][-5:] == [f"pulled {i}" for i in (0, 2, 4, 6, 8)]


def _prints(k):  # type: ignore[no-untyped-def]
    from tilelang.ir import nodes as ir

    return [op for op in ir.walk(k.body) if isinstance(op, ir.Print)]


@pytest.mark.parametrize("order", ["row-major", "reverse"])
@pytest.mark.parametrize("blocks", [1, 2, 5])
@pytest.mark.parametrize("name", ["walk_print_order", "last_block_print_order", "device_print"])
def test_the_simulated_gpu_prints_the_interpreters_lines(name: str, blocks: int, order: str,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # the GPU side without a GPU: the kernels as the code generator emits them, run in
    # llsim (its print buffer laid out as the runtime's, decoded by `prints.decode`) with
    # the blocks in another order and another number of walking blocks a row, as a GPU's
    # wave would take them: the same lines as the interpreter's (hrev 2026-12-04; a GPU
    # run of these programs is still to come)
    import sys as _sys

    _sys.path.insert(0, str(HERE))
    import llsim

    import tilelang.run as run

    path = ROOT / "tests" / "run" / f"{name}.tile"
    want = io.StringIO()
    run.execute(str(path), "cpu", out=want)
    real = llsim.SimDevice.run
    monkeypatch.setattr(llsim.SimDevice, "run", lambda self, k, grid, args, facts=None, **kw: real(
        self, k, grid, args, facts, queue_blocks=blocks, order=order))
    got = io.StringIO()
    monkeypatch.setattr(run, "make_device", lambda choice, out: llsim.sim_runtime_device(
        "sm_80", lambda line: got.write(line + "\n")))
    run.execute(str(path), "cpu", out=got)
    assert got.getvalue() == want.getvalue()
