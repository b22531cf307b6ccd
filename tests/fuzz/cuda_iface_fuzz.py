"""A fuzzer of foreign GPU arrays at the Python API's boundary (hrev round 30): objects with a
`__cuda_array_interface__` of random addresses (a few bases, offsets of any byte), shapes (empty, size-1, up to
3-D), strides (none, C order written out, transposed, padded, zero, negative, odd bytes, any stride on a size-1
dim), element types and read-only flags, given to kernels that write one or two of them, on the stub GPU
(`runtime/cuda_stub`: the real `CudaDevice` over a recording driver; no memory is touched). The oracle is BRIEF
section 6 at the boundary: a call that is accepted (its launch recorded) must have given every kernel a memory
block it can read as one row-major array (each element's address, from the interface's strides, is the base
plus its row-major index times the element size), no two arrays of which one is written share a byte, nothing
written read-only, and no array of elements at address 0 or at an address that is not a multiple of its element
size. A refusal must be a `TileError` (a `TypeError` for a wrong Python type); anything else is a bug.

    python tests/fuzz/cuda_iface_fuzz.py --seed 1 --count 2000
    python tests/fuzz/cuda_iface_fuzz.py --seed 1 --replay 17
"""

from __future__ import annotations

import argparse
import itertools
import math
import random
import sys
from collections import Counter
from typing import Any

import numpy as np

import tilelang
from tilelang import partition as P
from tilelang.runtime.cuda_stub import installed, stub_device

SRC = """
kernel fn cp<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>) { z.store(x.load_like(z)); }
kernel fn cp2<const B: i32>(z: &mut Tensor<f32, [B, B]>, x: &Tensor<f32, [?, ?]>) { z.store(x.load_like(z)); }
kernel fn two<const B: i32>(z: &mut Tensor<f32, [B]>, w: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>) {
    z.store(x.load_like(z));
    w.store(x.load_like(w));
}
kernel fn h16<const B: i32>(z: &mut Tensor<f16, [B]>, x: &Tensor<f16, [?]>) { z.store(x.load_like(z)); }
"""
BASES = (0x7F0000000000, 0x7F0000000000 + 4096, 0x7F0000100000, 0)


class Foreign:
    """An array of another library, as its `__cuda_array_interface__` says it is."""

    def __init__(self, ptr: int, shape: tuple[int, ...], typestr: str, strides: tuple[int, ...] | None,
                 readonly: bool) -> None:
        self.ptr, self.shape, self.typestr, self.strides, self.readonly = ptr, shape, typestr, strides, readonly

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        return {"shape": self.shape, "typestr": self.typestr, "version": 3, "strides": self.strides,
                "data": (self.ptr, self.readonly), "stream": None}

    def __repr__(self) -> str:
        return (f"Foreign(ptr={self.ptr:#x}, shape={self.shape}, typestr={self.typestr!r}, "
                f"strides={self.strides}, readonly={self.readonly})")

    def footprint(self) -> list[int]:
        """The byte address of each element, row-major (by the interface's strides)."""
        size = np.dtype(self.typestr).itemsize
        st = self.strides
        if st is None:
            st = tuple(size * math.prod(self.shape[i + 1:]) for i in range(len(self.shape)))
        return [self.ptr + sum(i * s for i, s in zip(idx, st, strict=True))
                for idx in itertools.product(*(range(d) for d in self.shape))]


def foreign(r: random.Random, rank: int, typestr: str, near: list[Foreign]) -> Foreign:
    size = np.dtype(typestr).itemsize
    shape = tuple(r.choice([0, 1, 1, 2, 3, 4, 8, 16, 17]) for _ in range(rank))
    if near and r.random() < 0.4:  # near another array: the same base, or inside / just past it
        o = r.choice(near)
        ptr = o.ptr + r.choice([0, size, -size, 1, 2, 64, size * max(1, math.prod(o.shape)),
                                size * max(1, math.prod(o.shape)) - size])
    else:
        ptr = r.choice(BASES) + r.choice([0, 0, 0, size, 1, 2, 6, 256])
    c = [size * math.prod(shape[i + 1:]) for i in range(rank)]
    kind = r.choice(["none", "none", "c", "transposed", "padded", "zero", "negative", "odd", "size1"])
    strides: tuple[int, ...] | None
    if kind == "none":
        strides = None
    elif kind == "c":
        strides = tuple(c)
    elif kind == "transposed" and rank > 1:
        strides = tuple(reversed([size * math.prod(shape[:i]) for i in range(rank)]))
    elif kind == "padded" and rank > 1:
        strides = tuple(s * 2 if i < rank - 1 else s for i, s in enumerate(c))
    elif kind == "zero":
        strides = tuple(0 if i == r.randrange(rank) else s for i, s in enumerate(c))
    elif kind == "negative":
        strides = tuple(-s if i == r.randrange(rank) else s for i, s in enumerate(c))
    elif kind == "odd":
        strides = tuple(s + (1 if i == r.randrange(rank) else 0) for i, s in enumerate(c))
    else:  # any stride along a dimension of one element (it is never stepped)
        strides = tuple(r.choice([0, -4, 12345, s]) if shape[i] == 1 else s for i, s in enumerate(c))
    return Foreign(ptr, shape, typestr, strides, r.random() < 0.1)


def make_case(seed: int, index: int) -> tuple[str, list[Any], list[bool]]:
    """(kernel, arguments, which are written) of case `index`."""
    r = random.Random(f"{seed}:{index}")
    kernel = r.choice(["cp", "cp", "cp2", "two", "h16"])
    rank = 2 if kernel == "cp2" else 1
    t = "<f2" if kernel == "h16" else "<f4" if r.random() < 0.9 else r.choice(["<i4", "<f2"])
    arrays: list[Foreign] = []
    for _ in range(3 if kernel == "two" else 2):
        arrays.append(foreign(r, rank, t, arrays))
    tile = [r.choice([1, 2, 4, 16])] * rank
    if kernel == "two":
        return kernel, [P(arrays[0], tile), P(arrays[1], tile), arrays[2]], [True, True, False]
    return kernel, [P(arrays[0], tile), arrays[1]], [True, False]


def violations(args: list[Any], written: list[bool]) -> list[str]:
    """What an accepted call must not have: the oracle."""
    out = []
    arrays = [a.value if hasattr(a, "value") else a for a in args]
    arrays = [getattr(a, "array", a) for a in arrays]
    spans = []
    for a, w in zip(arrays, written, strict=True):
        if not isinstance(a, Foreign):
            continue
        size = np.dtype(a.typestr).itemsize
        fp = a.footprint()
        n = len(fp)
        if n and fp != [a.ptr + i * size for i in range(n)]:
            out.append(f"{a!r} is not one row-major block")
        if n and a.ptr == 0:
            out.append(f"{a!r} has elements at address 0")
        if n and a.ptr % size:
            out.append(f"{a!r} is not element-aligned")
        if w and a.readonly and n:
            out.append(f"{a!r} is read-only and written")
        if n:
            spans.append((min(fp), max(fp) + size, w, a))
    for (lo1, hi1, w1, a1), (lo2, hi2, w2, a2) in itertools.combinations(spans, 2):
        if (w1 or w2) and lo1 < hi2 and lo2 < hi1:
            out.append(f"{a1!r} and {a2!r} overlap and one is written")
    return out


def run_case(mod: tilelang.Module, seed: int, index: int) -> tuple[str, str]:
    kernel, args, written = make_case(seed, index)
    try:
        getattr(mod, kernel)(*args).sync()
    except tilelang.TileError as e:
        text = str(e)
        if "internal compiler error" in text or "Traceback" in text:
            return "bug", f"internal error: {text.splitlines()[0]}"
        return "refused", text.splitlines()[0][:12]
    except TypeError as e:
        return "type-error", str(e)[:80]
    except Exception as e:
        return "bug", f"{type(e).__name__}: {e}"
    bad = violations(args, written)
    return ("bug", "; ".join(bad)) if bad else ("ok", "")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--replay", type=int, default=None)
    a = ap.parse_args(argv)
    mod = tilelang.compile(SRC)
    tally: Counter[str] = Counter()
    with installed(stub_device()):
        for i in [a.replay] if a.replay is not None else range(a.count):
            kind, msg = run_case(mod, a.seed, i)
            tally[kind if kind != "refused" else f"refused {msg.split('[')[-1].rstrip(']:')}"] += 1
            if kind == "bug" or a.replay is not None:
                kernel, args, _ = make_case(a.seed, i)
                print(f"case {a.seed}:{i} {kind}: {kernel}{args} {msg}", flush=True)
    print(dict(sorted(tally.items())))
    return 1 if tally["bug"] else 0


if __name__ == "__main__":
    sys.exit(main())
