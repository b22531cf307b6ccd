"""`llsim_fast`'s shortcuts against the NumPy expressions they replace: the
same value, bits (NaN payloads, signed zeros) and NumPy type, on halves
(every third one widened) and on single and double patterns: the edges
(zeros, subnormals, the largest finite values, infinities, quiet and
signalling NaNs with payloads), f32 values at and beside the halfway points
of halves (ties to even), values past the half and single ranges, and random
bit patterns. Cheap by sampling; the same checks on every half, every half's
halfway points and 4,000 random patterns passed when the shortcuts were
written."""

from __future__ import annotations

from typing import Any

import llsim_fast as lf
import llsim_ops
import numpy as np
import pytest
from llsim_ops import _INTRINSICS, _add_round_odd_scalar, _cast_fptrunc, _fcmp, _fma, _minmax, _nanminmax, _warp_op
from llsim_values import Memory, Race, _bf16, _decode, _decode_any, _encode, _encode_any, _size, load_value, store_bytes


def _same(got: Any, want: Any) -> bool:
    if isinstance(want, tuple):
        return isinstance(got, tuple) and len(got) == len(want) and all(map(_same, got, want))
    if isinstance(want, np.generic):
        return type(got) is type(want) and got.tobytes() == want.tobytes()
    return type(got) is type(want) and got == want


def _f32s(n: int = 300) -> np.ndarray:
    rng = np.random.default_rng(5)
    edges = np.array([0, 0x80000000, 1, 0x807FFFFF, 0x00800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x7F800000, 0xFF800000,
                      0x7FC00000, 0xFFC00001, 0x7F800001, 0x7FA00123, 0x3F800000, 0x477FE000, 0x477FF000,
                      0x477FEFFF, 0x47800000, 0x33000000, 0x33000001, 0x32FFFFFF, 0x387FC000], np.uint32)
    some = rng.integers(0, 1 << 16, n, dtype=np.uint64).astype(np.uint16)
    halves = some.view(np.float16).astype(np.float32).view(np.uint32)
    near = np.concatenate([halves + d for d in (np.uint32(0x1000), np.uint32(0x0FFF), np.uint32(0x1001))])
    rand = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    return np.concatenate([edges, near, rand]).view(np.float32)


def test_conversions_are_numpys() -> None:
    f16 = np.arange(1 << 16, dtype=np.uint16).view(np.float16)
    f32 = _f32s()
    rng = np.random.default_rng(6)
    f64 = np.concatenate([np.array([0.0, -0.0, 5e-324, 1e300, -1e39, 3.4028235677973366e38, 65520.0, 65519.99,
                                    2.0**-25, 2.0**-25 * 1.0000001, np.inf, np.nan]),
                          rng.integers(0, 1 << 64, 300, dtype=np.uint64).view(np.float64)])
    with np.errstate(all="ignore"):
        for h in f16[::3]:  # a third of the halves, widened
            assert _same(lf.to32(h), np.float32(h)) and lf.to16(h) is h, h
        for xs in (f16[::97], f32, f64):
            for x in [*xs.tolist(), *xs]:  # Python floats and NumPy scalars
                for fast, slow in ((lf.to32, np.float32), (lf.to16, np.float16), (lf.to64, np.float64)):
                    assert _same(fast(x), slow(x)), (fast.__name__, type(x).__name__, repr(x))
        for x in (3, -7, 1 << 40, True):
            assert _same(lf.to32(x), np.float32(x)) and _same(lf.to16(x), np.float16(x))


def test_bitcasts_are_numpys() -> None:
    with np.errstate(all="ignore"):
        for x in _f32s():
            assert _same(lf.f32_bits(x), int(np.array(x, np.float32).view(np.uint32))), x
            w = int(x.view(np.uint32))
            for v in (w, w + (1 << 32)):
                assert _same(lf.bits_f32(v), np.array(v & 0xFFFFFFFF, np.uint32).view(np.float32)[()]), hex(v)
        f16 = np.arange(1 << 16, dtype=np.uint16).view(np.float16)[::7]
        for a, b in zip(f16, np.roll(f16, 1234), strict=True):
            assert _same(lf.halves_bits((a, b)), _decode(_encode_any((a, b), "<2 x half>"), "i32"))


def test_rounding_to_halves_is_numpys() -> None:
    f32 = _f32s()
    with np.errstate(all="ignore"):
        for a, b in zip(f32, np.roll(f32, 777), strict=True):
            assert _same(lf.trunc16((a, b)), _cast_fptrunc((a, b), "<2 x float>", "<2 x half>"))
            assert _same(lf.pair16(a, b), _INTRINSICS["llvm.nvvm.ff2f16x2.rn"](a, b, tys=["float"], name=""))
        mixed = (np.float32(1.5), 2.000244140625)
        assert _same(lf.trunc16(mixed), tuple(np.array(mixed, np.float16)))


def test_fma_approximations_and_minmax_are_the_intrinsics() -> None:
    f32 = _f32s()
    rng = np.random.default_rng(7)
    with np.errstate(all="ignore"):
        for a, b, c in zip(f32, np.roll(f32, 1), rng.permutation(f32), strict=True):
            assert _same(lf.fma32(a, b, c, _add_round_odd_scalar), _fma(a, b, c, tys=["float"], name="llvm.fma.f32"))
            for name in ("llvm.nvvm.ex2.approx", "llvm.nvvm.ex2.approx.ftz", "llvm.nvvm.lg2.approx.ftz",
                         "llvm.nvvm.rsqrt.approx", "llvm.nvvm.rcp.approx.ftz", "llvm.nvvm.sin.approx"):
                g = _INTRINSICS[name]
                want = np.float32(g(a, tys=["float"], name=name))
                assert _same(lf.approx32(g.unary, *g.approx)(a), want), (name, a)
            for g in (_minmax(True), _minmax(False), _nanminmax(True), _nanminmax(False)):
                assert _same(g.fast(a, b), g(a, b, ["float"], "")), (a, b)


def test_loads_and_stores_are_the_byte_encodings() -> None:
    rng = np.random.default_rng(8)
    raw = bytearray(rng.integers(0, 256, 4096, dtype=np.uint8).tobytes())
    f32 = _f32s(60).tobytes()
    raw[:len(f32)] = f32  # the edges (NaN payloads included) at the start
    types = ["float", "half", "double", "bfloat", "i1", "i8", "i16", "i32", "i64", "<2 x half>", "<4 x float>",
             "<2 x float>", "<4 x i32>", "<2 x i16>", "<8 x half>", "<2 x bfloat>", "i24"]
    with np.errstate(all="ignore"):
        for ty in types:
            n = _size(ty)
            for off in range(0, 4096 - 16, 4 if ty != "i1" else 97):
                got, want = load_value(raw, off, ty), _decode_any(bytes(raw[off:off + n]), ty)
                assert _same(got, want), (ty, off)
                assert store_bytes(got, ty) == _encode_any(got, ty), (ty, off)
        for v, ty in ((np.float16(1.5), "float"), (2.5, "float"), (np.float32(1e9), "half"), (-1, "i32"),
                      ((1 << 40) + 5, "i16"), ((np.float32(1.0),), "<2 x float>"), ((3.5, 2), "<2 x float>")):
            assert store_bytes(v, ty) == _encode_any(v, ty), (v, ty)


def test_typed_loads_and_stores_are_load_and_store() -> None:
    """`loader(ty)` / `storer(ty)` (what the compiled blocks call) against `load` / `store`: the same value
    (bits, type), bytes, racecheck and errors, in global and shared memory (every 2-byte step: a bfloat
    reads the f32 edges' high halves, NaN payloads included)."""
    from llsim_hopper import _GlobalHazards, _Hazards

    rng = np.random.default_rng(9)
    raw = bytearray(rng.integers(0, 256, 512, dtype=np.uint8).tobytes())
    f32 = _f32s(20).tobytes()[:256]
    raw[:len(f32)] = f32
    types = ["float", "half", "double", "bfloat", "i1", "i8", "i16", "i32", "i64", "<2 x half>", "<4 x float>",
             "<2 x float>", "<4 x i32>", "<2 x i16>", "<8 x half>", "<2 x bfloat>", "<8 x bfloat>", "i24", "ptr"]

    def mems() -> tuple[Memory, Memory]:
        out = []
        for _ in range(2):
            m = Memory(bufs={"x": bytearray(raw), "$smem": bytearray(raw)}, pointers={("x", 8): ("$smem", 0)})
            m.hazards, m.global_hazards = _Hazards(len(raw)), _GlobalHazards({"x"})
            m.unfenced = np.full(len(raw), -1, np.int64)
            out.append(m)
        return out[0], out[1]

    def outcome(f: Any) -> Any:
        try:
            return ("ok", f())
        except Exception as e:  # noqa: BLE001  (the error is the outcome compared)
            return (type(e).__name__, str(e))

    with np.errstate(all="ignore"):
        for ty in types:
            a, b = mems()
            plain = Memory(bufs={"x": bytearray(raw), "$smem": bytearray(raw)}, pointers={("x", 8): ("$smem", 0)})
            ld, st = lf.loader(ty), lf.storer(ty)
            odd = [2.5, np.float16(1.5), np.float32(np.nan), -1, (np.float32(1.0),), (3.5, 2), (1, 2, 3, 4),
                   (np.float32(1.0), np.float32(np.nan)), tuple(np.float16(x) for x in range(8))]
            for key in ("x", "$smem"):
                for off in [*range(0, 512 - 16, 2 if "16" in ty or "half" in ty or "bfloat" in ty else 4),
                            1, 3, 508, 511, 2000, -8]:
                    t = off % 3  # three threads: reads by several, then a write races
                    got, want = outcome(lambda: ld(a, t, (key, off))), outcome(lambda: lf.load(b, t, (key, off), ty))
                    assert got[0] == want[0] and (got[1] == want[1] if got[0] != "ok" else _same(got[1], want[1])), \
                        (ty, key, off, got, want)
                a.hazards.sync()
                b.hazards.sync()
                a.global_hazards.sync()
                b.global_hazards.sync()
                for off in [*range(0, 512 - 16, 6), 1, 508, 2000]:
                    v = outcome(lambda: lf.load(plain, 0, (key, off), ty))[1] if off < 500 else 7
                    # the value loaded, or one of another type (`store_bytes`'s other paths)
                    v = v if off % 4 else odd[off // 4 % len(odd)]
                    got = outcome(lambda: st(a, off % 2, (key, off), v))
                    want = outcome(lambda: lf.store(b, off % 2, (key, off), ty, v))
                    assert got == want, (ty, key, off)
            assert a.bufs == b.bufs and (a.unfenced == b.unfenced).all(), ty
            assert a.hazards.w_t == b.hazards.w_t and a.hazards.r_t == b.hazards.r_t, ty


def test_bitcast_to_halves_is_the_byte_encoding() -> None:
    # the table the bitcasts and half loads index: every half of its bits, an np.float16 (NaN payloads too)
    assert len(lf._HALF) == 1 << 16 and {type(x) for x in lf._HALF} == {np.float16}
    assert (np.array(lf._HALF, np.float16).view(np.uint16) == np.arange(1 << 16)).all()
    with np.errstate(all="ignore"):
        for w in [*_f32s(100).view(np.uint32).tolist(), 0x7C00, 0xFC00 << 16, 0x7E01FE01, (1 << 32) + 0x3C00]:
            assert _same(lf.bits_halves(w), _decode_any(_encode(w, "i32"), "<2 x half>")), hex(w)
        for h in np.arange(1 << 16, dtype=np.uint16)[::5]:  # i16 <-> half, both ways
            x = h.view(np.float16)
            assert _same(lf.f16_bits(x), _decode(_encode(x, "half"), "i16")), h
            assert _same(lf.bits_f16(int(h)), _decode(_encode(int(h), "i16"), "half")), h
        assert _same(lf.f16_bits(np.float32(1e-3)), _decode(_encode(np.float32(1e-3), "half"), "i16"))


def test_ldmatrix_and_mma_gathers_are_the_loops(monkeypatch: pytest.MonkeyPatch) -> None:
    """`_warp_op`'s gathers against its per-lane loops (the gathers off), on
    random shared memory (NaN halves too) and registers of both operand types."""
    rng = np.random.default_rng(9)
    mem = Memory()
    mem.bufs["$smem"] = bytearray(rng.integers(0, 256, 4096, dtype=np.uint8).tobytes())
    rows = [("$smem", int(o)) for o in rng.choice(np.arange(0, 4096 - 64, 16), 32)]
    words = rng.integers(0, 1 << 32, (32, 6), dtype=np.uint64).tolist()
    calls = [(f"llvm.nvvm.ldmatrix.sync.aligned.m8n8.x{n}{t}.b16", [[r] for r in rows])
             for n in (1, 2, 4) for t in ("", ".trans")]
    halves = rng.integers(0, 1 << 16, (32, 6, 2), dtype=np.uint64).astype(np.uint16).view(np.float16)
    for ty in ("f16", "bf16"):
        cs = [list(map(np.float32, rng.standard_normal(4))) for _ in range(32)]
        mixed = [[*ws[:4], (np.float16(1.5), np.float16(-2.0)), ws[5], *c] for ws, c in zip(words, cs)]
        pairs = [[*map(tuple, h), *c] for h, c in zip(halves, cs)]  # every operand a <2 x half> (NaNs too)
        ints = [[*ws, *c] for ws, c in zip(words, cs)]  # every operand an i32 word
        calls += [(f"llvm.nvvm.mma.m16n8k16.row.col.f32.{ty}", a) for a in (mixed, pairs, ints)]
    with np.errstate(all="ignore"):
        assert llsim_ops._ldmatrix(mem, rows, 4, True) is not None  # (the gathers apply here)
        assert llsim_ops._mma(calls[-1][1], "bfloat", lambda x: lf.halves_bits(x) if type(x) is tuple else int(x))
        assert llsim_ops._mma_halves([a[:6] for a in calls[-2][1]]) is not None  # (pairs and words at once)
        assert llsim_ops._mma_halves([a[:6] for a in calls[-1][1]]) is not None
        fast = [_warp_op(name, args, mem) for name, args in calls]
        monkeypatch.setattr(llsim_ops, "_ldmatrix", lambda *a: None)
        monkeypatch.setattr(llsim_ops, "_mma", lambda *a: None)
        slow = [_warp_op(name, args, mem) for name, args in calls]
    for (name, _), f, s in zip(calls, fast, slow, strict=True):
        assert _same(tuple(f), tuple(s)), name


def test_mma_operands_at_once_are_halves_bits() -> None:
    """`_mma_halves` of the lanes' operands against their bits: every half
    (NaN payloads, signed zeros) as `np.float16` pairs gives its own bits
    (`halves_bits`' too: test_bitcasts_are_numpys), floats of other types
    that round to halves (past the range too) `halves_bits` of each pair;
    lanes whose operands are neither all pairs nor all words are declined."""
    bits = np.resize(np.arange(1 << 16, dtype=np.uint16), 171 * 384).reshape(-1, 32, 12)
    rng = np.random.default_rng(3)
    # f32 edges and values beside the halves' halfway points (rounded once to a half), and Python floats
    near = np.resize(_f32s(300), 6 * 384).reshape(-1, 32, 6, 2)
    odd = [[[(a, float(b)) for a, b in lane] for lane in block] for block in near]
    with np.errstate(all="ignore"):
        for want in bits:  # (the halves as `_HALF`'s np.float16 of those bits: its own test checks them)
            h = list(map(lf._HALF.__getitem__, want.ravel().tolist()))
            ops = [[tuple(h[i:i + 2]) for i in range(12 * lane, 12 * lane + 12, 2)] for lane in range(32)]
            assert (llsim_ops._mma_halves(ops) == want).all()
        for ops in odd:
            want = np.array([[lf.halves_bits(x) for x in o] for o in ops], np.uint32).view(np.uint16)
            assert (llsim_ops._mma_halves(ops) == want.reshape(32, 12)).all()
    words = rng.integers(0, 1 << 32, (32, 6), dtype=np.uint64).tolist()
    assert llsim_ops._mma_halves([[*w[:5], (np.float16(1), np.float16(2))] for w in words]) is None
    assert llsim_ops._mma_halves([[*w[:5], 1 << 32] for w in words]) is None  # (`_mma`'s loop declines it)
    assert llsim_ops._mma_halves([[*w[:5], np.uint32(7)] for w in words]) is None


def test_ldmatrix_gathers_beside_copies_in_flight(monkeypatch: pytest.MonkeyPatch) -> None:
    """With cp.async chunks in flight elsewhere in shared memory the gather
    still applies and gives the loop's registers; where a chunk in flight is
    one a row reads (its first or last byte) both raise the loop's `Race`."""
    rng = np.random.default_rng(4)
    mem = Memory()
    mem.bufs["$smem"] = bytearray(rng.integers(0, 256, 8192, dtype=np.uint8).tobytes())
    rows = [("$smem", 16 * i) for i in range(32)]  # rows 0..511: chunks 0..31
    name = "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.trans.b16"
    mem.inflight = {40: 1, 100: 2}
    assert llsim_ops._ldmatrix(mem, rows, 4, True) is not None
    fast = _warp_op(name, [[r] for r in rows], mem)
    for hit in (0, 31):
        mem.inflight = {40: 1, hit: 1}
        assert llsim_ops._ldmatrix(mem, rows, 4, True) is None
        with pytest.raises(Race, match=f"smem\\+{16 * hit}"):
            _warp_op(name, [[r] for r in rows], mem)
    mem.inflight = {40: 1, 100: 2}
    monkeypatch.setattr(llsim_ops, "_ldmatrix", lambda *a: None)
    assert _same(tuple(fast), tuple(_warp_op(name, [[r] for r in rows], mem)))


def test_bfloat_rounding_and_float_compares_are_the_originals() -> None:
    f32 = _f32s(100)
    with np.errstate(all="ignore"):
        for x in [*f32, *f32.astype(np.float64), 1e39, -3.0000001, np.float16(0.1)]:
            assert _same(lf.bf16(x), _bf16(x)), x
        for pred, expr in lf.FCMP.items():  # the compiled blocks' comparisons
            f, fast = _fcmp(pred), eval(f"lambda _fa, _fb: {expr}")
            for a, b in [*zip(f32[:300], np.roll(f32, 5)[:300], strict=True), *zip(f32[:40], f32[:40], strict=True)]:
                assert _same(fast(a, b), f(a, b)), (pred, a, b)


def test_float_division_is_np_divide() -> None:
    f32 = _f32s(150)
    with np.errstate(all="ignore"):
        for t in (np.float32, np.float16, np.float64):
            xs = f32.astype(t)
            for a, b in zip(xs, np.roll(xs, 3), strict=True):
                assert _same(a / b, np.divide(a, b)), (t, a, b)
