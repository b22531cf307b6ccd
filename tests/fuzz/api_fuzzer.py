"""A fuzzer for the Python API's arguments (issue 12).

Each case is one call into `tilelang` with arguments drawn from a pool of
awkward Python values: NumPy arrays of every dtype (big-endian, object,
strings, complex, bool), arrays of made-up libraries (DLPack-only, copying
exports, `__array_interface__`s with masks or new buffers, masked arrays), scalars of a kernel's type parameter (`a: T`), shapes that are empty, strided, transposed or
read-only, NumPy and Python scalars (huge, negative, NaN, complex), None,
bytes, lists of anything, partitions of the wrong array with the wrong tile
shape, explicit generics of any value. Half of the cases start from a call
that works and replace one or two of its arguments, so the checks after the
first one are reached too.

A call may succeed, raise a `tilelang.TileError` subclass, or raise a
`TypeError` (an argument of the wrong Python type); reading an attribute that
does not exist may raise `AttributeError`. Anything else is a bug, and so is
a TileError whose text is an internal error or a Python traceback.

    python tests/fuzz/api_fuzzer.py --seed 7 --count 20000
    python tests/fuzz/api_fuzzer.py --seed 7 --replay 1234

The default suite runs a few hundred cases (tests/fuzz/test_fuzz.py).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
import traceback
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

import tilelang

SRC = """
kernel fn scale<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>, s: f32) {
    z.store(x.load_like(z) * s);
}

kernel fn ar<const N: i32>(z: &mut Tensor<i32, [4]>) {
    let t = arange::<i32>(N);
    z.store(zeros::<i32>([4]) + t.sum(0));
}

kernel fn rows<const R: i32, const C: i32>(z: &mut Tensor<f32, [R, C]>, x: &Tensor<f32, [?, ?]>) {
    z.store(x.load_like(z).exp());
}

kernel fn narrow<const B: i32>(z: &mut Tensor<u8, [B]>, x: &Tensor<i8, [?]>, k: u8) {
    z.store((x.load_like(z) as u8) + k);
}

kernel fn halfk<const B: i32>(z: &mut Tensor<f16, [B]>, x: &Tensor<bf16, [?]>, n: i64) {
    z.store((x.load_like(z) as f16) * (n as f16));
}

kernel fn tscale<T, const B: i32>(z: &mut Tensor<T, [B]>, x: &Tensor<T, [?]>, a: T) {
    z.store(x.load_like(z) * a);
}

kernel fn tonly<T, const B: i32>(z: &mut Tensor<f32, [B]>, a: T) {
    z.store(full::<f32>([B], a as f32));
}

fn host_add(a: f32, b: f32) -> f32 { a + b }

fn host_small(a: i8, b: u32) -> i32 { (a as i32) + (b as i32) }

fn host_flag(f: bool, n: i64) -> i64 { if f { n } else { 0 } }
"""

KERNELS = ("scale", "ar", "rows", "narrow", "halfk", "tscale", "tonly")
HOST = ("host_add", "host_small", "host_flag")

DTYPES = ("float32", "float64", "float16", "int32", "int64", "int8", "uint8", "uint32",
          "bool", "complex64", ">f4", ">i4", "<U3", "V4", "object", "datetime64[s]")
SHAPES: tuple[tuple[int, ...], ...] = ((8,), (16,), (4,), (0,), (), (4, 4), (8, 8), (2, 0),
                                       (3,), (1,), (2, 3, 4), (64,))
INTS = (0, 1, -1, 2, 4, 7, 8, 16, 2**31 - 1, 2**31, -(2**31) - 1, 2**63, 2**64, -(2**63),
        10**40, -(10**400), 1 << 20, 1 << 21)
FLOATS = (0.0, -0.0, 1.5, float("nan"), float("inf"), -float("inf"), 1e308, 5e-324, 3.4e38)


@dataclass(frozen=True)
class Outcome:
    kind: str  # ok | tile-error | type-error | attribute-error | bug
    detail: str = ""


class _Foreign:
    """An array of a made-up library (`Gen.foreign`)."""

    def __init__(self, a: np.ndarray, kind: str) -> None:
        self.a, self.kind = a, kind
        if kind.startswith("dlpack"):
            self.__dlpack_device__ = a.__dlpack_device__
            self.__dlpack__ = self._export

    def _export(self, stream: Any = None, max_version: Any = None, **kw: Any) -> Any:
        if self.kind == "dlpack-copy":
            if kw.get("copy") is False:
                raise BufferError("cannot export without a copy")
            return self.a.copy().__dlpack__(max_version=max_version, copy=True)
        return self.a.__dlpack__(max_version=max_version) if max_version else self.a.__dlpack__()

    def __getattr__(self, name: str) -> Any:
        if name != "__array_interface__" or not self.kind.startswith("iface"):
            raise AttributeError(name)
        d = dict(self.a.__array_interface__)
        if self.kind == "iface-mask":
            d["mask"] = np.zeros(self.a.shape, bool)
        elif self.kind == "iface-copy":
            d["data"] = bytearray(self.a.tobytes())
        return [d] if self.kind == "iface-list" else d


class Gen:
    def __init__(self, rng: random.Random) -> None:
        self.r = rng

    def shape(self) -> tuple[int, ...]:
        return self.r.choice(SHAPES)

    def array(self) -> Any:
        r = self.r
        dtype = r.choice(DTYPES)
        shape = self.shape()
        try:
            a = np.zeros(shape, dtype=np.dtype(dtype))
        except (TypeError, ValueError):
            a = np.zeros(shape, np.float32)
        if a.size and a.dtype.kind in "fiu":
            a[...] = np.arange(a.size).reshape(a.shape) % 5
        match r.randrange(7):
            case 0 if a.ndim >= 1 and a.shape[0] >= 2:
                a = a[::2]  # strided
            case 1 if a.ndim == 2:
                a = a.T
            case 2:
                a.setflags(write=False)
            case 3 if a.ndim >= 1 and a.size:
                a = a[..., :1]
            case 4:
                return self.foreign(a)
            case _:
                pass
        return a

    def foreign(self, a: np.ndarray) -> Any:
        """`a` as another library might give it: through DLPack only (in
        place, or a producer that can only copy), an `__array_interface__`
        (in place, with a mask, a new buffer each read, not a dict), or a
        NumPy masked array."""
        kind = self.r.choice(("dlpack", "dlpack-copy", "iface", "iface-mask", "iface-copy",
                              "iface-list", "masked"))
        if kind == "masked":
            return np.ma.masked_array(a, mask=np.arange(a.size).reshape(a.shape) % 2 == 0)
        return _Foreign(a, kind)

    def scalar(self) -> Any:
        r = self.r
        match r.randrange(9):
            case 0:
                return r.choice(INTS)
            case 1:
                return r.choice(FLOATS)
            case 2:
                return complex(r.choice(FLOATS), r.choice((0.0, 1.0)))
            case 3:
                return r.choice((True, False))
            case 4:
                t = r.choice((np.float32, np.float64, np.int8, np.uint8, np.int64, np.bool_,
                              np.complex64, np.float16))
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        return t(r.choice((0, 1, -1, 300, 2.5)))
                except (OverflowError, ValueError, TypeError):
                    return t(0)
            case 5:
                return r.choice(("1.0", "", "f32", b"1", bytearray(b"x")))
            case 6:
                return None
            case 7:
                return r.choice(([], [4], (4,), {"a": 1}, object(), slice(1), Ellipsis))
            case _:
                return np.array(r.choice((1.0, 2, True)))  # a 0-d array

    def tile_shape(self) -> Any:
        r = self.r
        match r.randrange(7):
            case 0:
                return [r.choice((1, 2, 4, 8, 3, 5))]
            case 1:
                return [r.choice((1, 2, 4)), r.choice((1, 2, 4, 8))]
            case 2:
                return r.choice(([], [0], [-1], [2.5], [None], [[4]], ["4"], [True], [2**40],
                                 (4,), 4, None, "4", [4, 4, 4, 4]))
            case 3:
                return [r.choice(INTS)]
            case _:
                return [4]

    def partition(self) -> Any:
        arr = self.array() if self.r.random() < 0.5 else np.zeros(self.shape() or (8,), np.float32)
        try:
            return tilelang.partition(arr, self.tile_shape())
        except (tilelang.TileError, TypeError):
            return arr

    def value(self) -> Any:
        match self.r.randrange(4):
            case 0:
                return self.array()
            case 1:
                return self.partition()
            case _:
                return self.scalar()

    def generic(self) -> Any:
        r = self.r
        if r.random() < 0.6:
            return r.choice(INTS)
        if r.random() < 0.5:
            return tuple(r.choice(INTS) for _ in range(r.randrange(0, 4)))
        return self.scalar()


def _good_args(name: str, r: random.Random) -> tuple[list[Any], dict[str, Any]]:
    P = tilelang.partition
    match name:
        case "scale":
            return [P(np.zeros(8, np.float32), [4]), np.ones(8, np.float32), 2.0], {}
        case "ar":
            return [P(np.zeros(4, np.int32), [4])], {}
        case "rows":
            return [P(np.zeros((4, 8), np.float32), [2, 8]), np.ones((4, 8), np.float32)], {}
        case "narrow":
            return [P(np.zeros(8, np.uint8), [4]), np.arange(8, dtype=np.int8), 3], {}
        case "halfk":
            return [P(np.zeros(8, np.float16), [4]), np.ones(8, np.float32), 2], {}
        case "tscale":
            dt = r.choice((np.float32, np.float16, np.int32, np.uint8, np.int64, np.float64))
            return [P(np.zeros(8, dt), [4]), np.ones(8, dt), dt(2)], {}
        case "tonly":
            return [P(np.zeros(8, np.float32), [4]), r.choice((np.int8(3), np.float16(1.5), np.uint64(7)))], {}
        case "host_add":
            return [1.0, 2.0], {}
        case "host_small":
            return [1, 2], {}
        case "host_flag":
            return [True, 5], {}
    raise AssertionError(name)


def make_case(seed: int, index: int, mod: tilelang.Module) -> Callable[[], Any]:
    """The call of case `index` (deterministic in seed and index)."""
    r = random.Random(f"{seed}:{index}")
    g = Gen(r)
    action = r.randrange(10)
    if action <= 5:  # a kernel or host function call
        name = r.choice(KERNELS + HOST)
        if r.random() < 0.5:
            args, kwargs = _good_args(name, r)
            for _ in range(r.randint(1, 2)):
                if args and r.random() < 0.85:
                    args[r.randrange(len(args))] = g.value()
                else:
                    args.append(g.value())
        else:
            args = [g.value() for _ in range(r.randrange(0, 5))]
            kwargs = {}
        if r.random() < 0.1:
            kwargs[r.choice(("z", "x", "s", "k", "a", "n", "bogus"))] = g.value()
        explicit = name in KERNELS and r.random() < 0.25
        gen = g.generic()
        finish = r.choice(("sync", "launch", "none"))

        def call() -> Any:
            f = getattr(mod, name)
            if explicit:
                f = f[gen]
            result = f(*args, **kwargs)
            if finish == "sync" and hasattr(result, "sync"):
                return result.sync()
            if finish == "launch" and hasattr(result, "launch"):
                return result.launch().wait()
            return result

        return call
    if action == 6:
        arr, shape = g.value(), g.tile_shape()
        return lambda: tilelang.partition(arr, shape)
    if action == 7:
        src = r.choice((SRC, b"fn main() {}", "fn main() { print(1); }", "", None, 3,
                        "kernel fn k(", "\x00", ["fn main() {}"]))
        device = r.choice(("cpu", "cpu", "gpu", "auto", "tpu", None, 0, "CPU", ""))
        return lambda: tilelang.compile(src, device=device)  # type: ignore[arg-type]
    if action == 8:
        path = r.choice(("examples/add.tile", "/nonexistent.tile", "/tmp", "/dev/null",
                         "", b"examples/add.tile", 0, None, "README.md", "pyproject.toml"))
        device = r.choice(("cpu", "tpu"))
        return lambda: tilelang.load(path, device=device)  # type: ignore[arg-type]
    attr = r.choice(("scale", "nope", "__len__", "_private", "rows", "host_add", "main"))
    return lambda: getattr(mod, attr)


def classify(call: Callable[[], Any]) -> Outcome:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # an operation never run warns; that is fine
            with np.errstate(all="raise"):
                call()
    except tilelang.TileError as e:
        text = str(e)
        if "internal" in text.lower() or "Traceback" in text or "ICE" in text:
            return Outcome("bug", f"{type(e).__name__}: {text}")
        return Outcome("tile-error", type(e).__name__)
    except TypeError as e:
        return Outcome("type-error", str(e)[:80])
    except AttributeError as e:
        return Outcome("attribute-error", str(e)[:80])
    except Exception as e:  # anything else is what we look for
        return Outcome("bug", "".join(traceback.format_exception(e))[-3000:])
    return Outcome("ok")


def compile_module() -> tilelang.Module:
    return tilelang.compile(SRC, device="cpu")


def campaign(seed: int, count: int, start: int = 0, every: int = 0) -> Counter[str]:
    mod = compile_module()
    tally: Counter[str] = Counter()
    t0 = time.time()
    for i in range(start, start + count):
        out = classify(make_case(seed, i, mod))
        tally[out.kind] += 1
        if out.kind == "bug":
            print(f"BUG case {i}:\n{out.detail}\n", flush=True)
        if every and (i - start + 1) % every == 0:
            print(f"[{i - start + 1}/{count}] {dict(tally)} {time.time() - t0:.0f}s", flush=True)
    return tally


def cases(seed: int, count: int) -> tuple[dict[str, int], list[str]]:
    """Cases 0..count-1 of `seed`: the count of each outcome's kind, and each
    bug (its case and the end of its detail)."""
    mod = compile_module()
    kinds: Counter[str] = Counter()
    bugs = []
    for i in range(count):
        out = classify(make_case(seed, i, mod))
        kinds[out.kind] += 1
        if out.kind == "bug":
            bugs.append(f"case {i}: {out.detail[-800:]}")
    return dict(kinds), bugs


def cases_in_child(seed: int, count: int) -> tuple[dict[str, int], list[str]]:
    """`cases` in a forked child with the parent's objects frozen (`gc.freeze`):
    how the suite runs them. E0313's check (`api/temporaries._a_container`)
    asks `gc.get_referrers` about an argument that looks made in the call,
    and that walks every object the collector tracks: a pytest worker deep
    into the suite tracks millions (what earlier tests left in caches), and
    500 cases took 10-30 s there against 0.6 s alone. Frozen objects are not
    walked; every value a case passes is made in the child, after the freeze,
    so what holds it is walked as before (the 500 cases' outcomes are the
    same, case by case, with and without the freeze)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork")) as pool:
        return pool.submit(_frozen_cases, seed, count).result()


def _frozen_cases(seed: int, count: int) -> tuple[dict[str, int], list[str]]:
    import gc

    gc.freeze()
    return cases(seed, count)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--replay", type=int, default=None, help="run one case and show it")
    args = ap.parse_args(argv)
    if args.replay is not None:
        out = classify(make_case(args.seed, args.replay, compile_module()))
        print(out.kind)
        print(out.detail)
        return 1 if out.kind == "bug" else 0
    tally = campaign(args.seed, args.count, every=max(1, args.count // 20))
    print(dict(tally))
    return 1 if tally["bug"] else 0


if __name__ == "__main__":
    sys.exit(main())
