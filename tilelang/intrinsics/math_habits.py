"""Math and array functions of NumPy, PyTorch and C that Tile has not, with how
to write them in Tile (round 11, huser11). Without this table the checker's
"a function with a similar name exists" offered another function of another
meaning: `tan` -> `tanh`, `log10` -> `log`, `round` -> `rand`, `sign` ->
`sin`, `mean` -> `main`, `matmul` -> `maximum`. Each help is a template whose
`{x}` is the value as written (the first argument of a call, the receiver of
a method), for the function form (`tan(x)`) and the method form (`x.tan()`)
alike; `tests/user/test_user_wrong11.py` runs every spelling given here on
f32 tiles and host tensors against NumPy."""

from __future__ import annotations

_NO_BITWISE_ATOMIC = (
    "Tile's atomics are `atomic_add`, `atomic_max` and `atomic_min`: to set bits from many blocks, keep one "
    "`i32` flag per bit and set it with `atomic_max(&flags, [i], 1)` (setting a flag twice is harmless; a "
    "tile of flags at once: `atomic_max(&flags, [0], tile)`), and pack the flags into words in a later launch "
    "if you need them packed")
_NO_CAS = ("Tile has no exchange or compare-and-swap (a lock would let blocks wait on each other): "
           "`atomic_max` / `atomic_min` keep one winner, `atomic_add` counts, and the last block of a group "
           "(`if last_block(axis) {{ .. }}`) sees the others' stores")

# round 23: reading a float's bits (CUDA's `__float_as_uint`, C++'s `bit_cast`, a `bitcast`): "a similar name:
# `broadcast`" or "define it"
_TO_BITS = ("`{x}.to_bits()` keeps a float's bits as the unsigned integer of its width (`f32` -> `u32`, `f64` -> "
            "`u64`, `f16`/`bf16` -> `u16`; `as` converts the value instead), and `from_bits::<f32>(u)` reads bits "
            "back as a float")
_FROM_BITS = ("`from_bits::<f32>({x})` reads a `u32`'s bits as an `f32` (`from_bits::<f64>` of a `u64`; `as` converts "
              "the value instead), and `x.to_bits()` is the way there")

# round 30 (huser31): scatters and segment reductions of PyTorch and torch_scatter
_SCATTER_ADD = ("a scatter-add from many blocks is one atomic an element, inside `unsafe {{ }}` on a `&` tensor "
                "parameter: `atomic_add(&y, [row], v)` (`atomic_max` / `atomic_min` for amax / amin, "
                "`store_unchecked` where no two blocks write one element); the deterministic form gives each "
                "output row one block that sums its inputs from indices sorted by row (a row pointer, `for k in "
                "start..end`); a short output takes a one-hot sum (examples/histogram.tile)")
_SEGMENT = ("over offsets `off` (a CSR row pointer), one block a segment reads its run through the aligned tiles "
            "that cover it, masked: `for j in start / B..(end + B - 1) / B {{ let k = arange::<i32>(B) + j * B; "
            "acc = acc + where((k >= start) & (k < end), x.partition([B]).load([j]), 0.0); }}` with `start = "
            "off.partition([1]).load([s]).item()` and `end` the next, then `acc.sum(0)` (`-inf`, `maximum` and "
            "`.max(0)` for a maximum; divide by `end - start` for a mean)")

#: a function's name -> how Tile writes it (`{x}`: the value)
MATH_HABITS: dict[str, str] = {
    "bitcast": _TO_BITS, "bit_cast": _TO_BITS, "transmute": _TO_BITS, "reinterpret_cast": _TO_BITS,
    "__float_as_uint": _TO_BITS, "__double_as_longlong": _TO_BITS,
    "__float_as_int": "`{x}.to_bits() as i32` (`to_bits` keeps a float's bits as the unsigned integer of its "
                      "width; `as` between integers keeps them too)",
    "__uint_as_float": _FROM_BITS, "__longlong_as_double": _FROM_BITS,
    "__int_as_float": "`from_bits::<f32>({x} as u32)` reads an integer's bits as an `f32` (`as` between integers "
                      "keeps the bits)",
    # round 21: Rust's `drop(g)` to end a graph's capture early (was "define it (`fn drop(..)`)")
    "drop": "Tile has no `drop`: a value lives until the end of the block that declares it; to end `{x}` early "
            "(a graph, so that the tensors it captured can be moved or rebound), declare it and its uses inside "
            "a `{{ .. }}` block",
    "tan": "`sin({x}) / cos({x})` (`tanh` is the hyperbolic tangent)",
    "sinh": "`(exp({x}) - exp(-{x})) * 0.5`",
    "cosh": "`(exp({x}) + exp(-{x})) * 0.5`",
    "arcsin": "`asin({x})`", "arccos": "`acos({x})`", "arctan": "`atan({x})`",
    "arctan2": "`atan2(y, x)` (the angle of the point (x, y), `y` first as in NumPy)",
    "exp10": "`exp({x} * 2.302585)` (e^(x ln 10))",
    "log10": "`log({x}) * 0.4342945` (ln x / ln 10; `log` is the natural logarithm)",
    "log1p": "`log(1.0 + {x})` (less exact than a `log1p` for tiny values)",
    "expm1": "`exp({x}) - 1.0` (less exact than an `expm1` near 0)",
    # (huser26: the help was `floor(x + 0.5)` alone, which a quantiser ported from `torch.round` took: it rounds
    # halves up, and 0.49999997 to 1 and odd values past 2^23 to the next even one, as f32's `x + 0.5` rounds)
    # (huser29: `x` itself where it is a zero, NaN, infinite or past 2^23: the sign factor made -0.0 +0.0)
    "round": "`where({x} != 0.0 && abs({x}) < 8388608.0, where({x} < 0.0, -1.0, 1.0) * ((abs({x}) + 8388608.0) "
             "- 8388608.0), {x})` rounds halves to even as NumPy's and PyTorch's `round` do (f32: adding 2^23 leaves no "
             "fraction; for f64 write 4503599627370496.0, 2^52); `floor({x} + 0.5)` rounds halves up, and is 1 "
             "too big for 0.49999997 and odd values past 2^23",
    "rint": "`where({x} != 0.0 && abs({x}) < 8388608.0, where({x} < 0.0, -1.0, 1.0) * ((abs({x}) + 8388608.0) "
            "- 8388608.0), {x})` rounds halves to even as `rint` does (f32: adding 2^23 leaves no fraction; for f64 write "
            "4503599627370496.0, 2^52); `floor` and `ceil` round down and up",
    "trunc": "`where({x} < 0.0, ceil({x}), floor({x}))` rounds toward zero (`{x} as i32` does, to an integer)",
    # (huser29: `+ 0.0` keeps NaN and makes -0.0 +0.0, as NumPy's `sign`; the `0.0` it had made NaN 0.0)
    "sign": "`where({x} > 0.0, 1.0, where({x} < 0.0, -1.0, {x} + 0.0))` (NaN stays NaN, both zeros give 0.0, as "
            "NumPy's `sign`)",
    # (huser29: `signbit` was offered `sin`, `nanmax`/`nanmin` the `max`/`min` that propagate the NaN they skip)
    "signbit": "`{x} < 0.0 || 1.0 / {x} < 0.0` is true for negative values and -0.0 (`1.0 / -0.0` is `-inf`; "
               "NaN's sign is not kept); in a kernel `({x}.to_bits() >> 31u32) == 1u32` reads an f32's sign bit",
    "nanmax": "`max(where({x} != {x}, f32::NEG_INFINITY, {x}), k)` along axis k skips NaN (`max` propagates it; "
              "a row of NaN only gives -inf where NumPy gives NaN; of the element type)",
    "nanmin": "`min(where({x} != {x}, f32::INFINITY, {x}), k)` along axis k skips NaN (`min` propagates it; "
              "a row of NaN only gives inf where NumPy gives NaN; of the element type)",
    "nansum": "`sum(where({x} != {x}, 0.0, {x}), k)` along axis k skips NaN (`sum` propagates it)",
    "isnan": "`{x} != {x}` is the NaN test (NaN is the one value not equal to itself)",
    "isinf": "`abs({x}) == f32::INFINITY` (of the element type: `f16::INFINITY`, ..)",
    "isfinite": "`abs({x}) < f32::INFINITY` (false for NaN and the infinities; of the element type)",
    "square": "`{x} * {x}`",
    "reciprocal": "`1.0 / {x}`",
    "hypot": "`sqrt({x} * {x} + y * y)`",
    "fmod": "`{x} % y` is C's `fmod` on floats (the sign of the dividend)",
    "remainder": "`{x} % y` takes the sign of the dividend (C's `fmod`; NumPy's `remainder` takes the divisor's)",
    "mean": "divide the sum: `sum({x}, k) / n` along axis k (`{x}.sum() / n` on the host)",
    "matmul": "`dot(a, b)` multiplies two tiles (`mma(a, b, acc)` adds to an accumulator)",
    "outer": "`a.reshape([M, 1]) * b.reshape([1, N])`",
    "norm": "`sqrt(({x} * {x}).sum(k))` along axis k",
    "count_nonzero": "`(({x} != 0) as i32).sum(k)` along axis k",
    "popcount": "Tile has no bit-count built-ins: count with shifts and masks (`x - ((x >> 1) & 0x55555555u32)`, "
                "..., the SWAR count)",
    "clz": "Tile has no bit-count built-ins: find the highest set bit with shifts and masks",
    "ctz": "Tile has no bit-count built-ins: `{x} & (0 - {x})` keeps the lowest set bit; find its position with "
           "shifts and masks",
    # round 19 (huser19): CUDA's other atomics (the similar name, `atomic_min`, was the help)
    "atomic_or": _NO_BITWISE_ATOMIC, "atomic_and": _NO_BITWISE_ATOMIC, "atomic_xor": _NO_BITWISE_ATOMIC,
    "atomic_sub": "`atomic_add(&t, [i, ..], -v)` subtracts (Tile's atomics are `atomic_add`, `atomic_max` and "
                  "`atomic_min`)",
    "atomic_inc": "`atomic_add(&t, [i, ..], 1)` counts (Tile's atomics are `atomic_add`, `atomic_max` and "
                  "`atomic_min`)",
    "atomic_exch": _NO_CAS, "atomic_cas": _NO_CAS,
    "gather": "load what you need through a partition (a row: `x.partition([1, D]).load([id, 0])`), or pick "
              "it with `where` over `arange` positions and a sum",
    "take": "load what you need through a partition (a row: `x.partition([1, D]).load([id, 0])`), or pick "
            "it with `where` over `arange` positions and a sum",
    "scatter": "a block writes only its own tiles; writes anywhere else are `store_unchecked` or the atomics, "
               "inside `unsafe {{ }}`",
    # (round 27: `0`, which compares with floats and integers alike; `0.0` was E0201 of an integer tensor)
    "nonzero": "a tile's shape is fixed: keep the mask, `{x} != 0`, and use it with `where` (or count it: "
               "`(({x} != 0) as i32).sum(k)`)",
    "argwhere": "a tile's shape is fixed: keep the mask, `{x} != 0`, and use it with `where` (or count it: "
                "`(({x} != 0) as i32).sum(k)`)",
    "any": "`max` of `bool` elements is `true` when any is: `{x}.max(k)` along axis k (`{x}.max()` on the host)",
    "all": "`min` of `bool` elements is `true` when all are: `{x}.min(k)` along axis k (`{x}.min()` on the host)",
    "var": "`let d = {x} - mean; (d * d).sum(k) / n`, with the mean reshaped to keep axis k",
    "std": "the `sqrt` of the variance: `sqrt((d * d).sum(k) / n)` with `d = {x} - mean`",
    "cbrt": "`where({x} < 0.0, -pow(-{x}, 1.0 / 3.0), pow({x}, 1.0 / 3.0))` (`pow` of a negative base is NaN)",
    "copysign": "`where(y < 0.0, -abs({x}), abs({x}))` (a -0.0 `y` counts as positive here)",
    "softplus": "`log(1.0 + exp({x}))` (for large values, `maximum({x}, 0.0) + log(1.0 + exp(-abs({x})))` does "
                "not overflow)",
    "einsum": "write the product as `dot(a, b)`, or as broadcast products and sums "
              "(`(a.reshape([M, K, 1]) * b.reshape([1, K, N])).sum(1)`)",
    "ones_like": "make a tensor or tile of the shape you need: `ones::<f32>([..])` (on the host, of `{x}`'s: "
                 "`ones::<f32>([{x}.shape()[0]])` for a 1-D one)",
    # (round 26: the call's own start, stop and count, so that the help runs as it is; `MATH_ARGS`)
    "linspace": "`arange::<f32>(n) * ((stop - {x}) / ((n - 1) as f32)) + {x}`: the `n` values from `{x}` to `stop`",
    "eye": "`(arange::<i32>(n).reshape([n, 1]) == arange::<i32>(n).reshape([1, n])) as f32`",
    # round 26 (huser27): a grid's coordinates (was "define it (`fn meshgrid(..) { .. }`)")
    "meshgrid": "`{x}.reshape([1, NX]).broadcast([NY, NX])` and `y.reshape([NY, 1]).broadcast([NY, NX])`, with NX "
                "and NY the lengths of `{x}` and `y` (NumPy's default indexing, \"xy\": rows follow `y`); or "
                "build them from `arange` of the grid's shape",
    "identity": "`(arange::<i32>(n).reshape([n, 1]) == arange::<i32>(n).reshape([1, n])) as f32`",
    "randint": "`(rand::<f32>(shape, seed) * (hi - lo) as f32) as i32 + lo` draws integers in lo..hi (`rand` is "
               "uniform in [0, 1))",
    "tile": "`{x}.reshape([1, n]).broadcast([k, n])` repeats all of `{x}` k times along a new axis "
            "(`.reshape([k * n])` joins the axes); `tiles(axis)` is a kernel's walk over its tiles",
    # round 27 (huser28): a data engineer's NumPy (they were "define it (`fn searchsorted(..) { .. }`)")
    "searchsorted": "each query's insertion point in a sorted row is a count: `(({x}.reshape([1, N]) < v.reshape([M, "
                    "1])) as i32).sum(1)` for `M` queries `v` into `N` sorted values (NumPy's side=\"left\"; `<=` "
                    "for side=\"right\"); in a kernel, walk a long row in tiles and add the counts",
    "digitize": "each value's bin is a count of the bin edges at or below it: `((bins.reshape([1, N]) <= {x}.reshape(["
                "M, 1])) as i32).sum(1)` for `M` values and `N` increasing edges (NumPy's right=False)",
    "bucketize": "each value's bucket is a count of the boundaries below it: `((boundaries.reshape([1, N]) < {x}"
                 ".reshape([M, 1])) as i32).sum(1)` for `M` values and `N` increasing boundaries (PyTorch's "
                 "right=False)",
    "diff": "on the host, `{x}[1..n] - {x}[0..n - 1]` of a 1-D `{x}` of length n (`t[a..b]` is rows a to b - 1); in a "
            "kernel, the element before each is a product with a 0/1 shift matrix (`dot`), the tile's first read "
            "past its edge with `load_padded`",
    "unique": "Tile has no `unique` (a tile's shape is fixed): of sorted values, flag each element that differs from "
              "the one before it, number the flags with `cumsum` (an exclusive scan across blocks: each block's count, "
              "then the host's `cumsum(0) - counts`), and move each flagged value to its number with "
              "`store_unchecked` inside `unsafe {{ }}`; the count of the flags is the length of the result",
    "bincount": "count with a one-hot sum, `((v.reshape([N, 1]) == arange::<i32>(NB).reshape([1, NB])) as "
                "i32).sum(0)` (examples/histogram.tile)",
    # round 13 (huser13): masks of attention windows and shifts
    "tril": "`where(arange::<i32>(N).reshape([1, N]) <= arange::<i32>(M).reshape([M, 1]), {x}, 0.0)` keeps the "
            "lower triangle of an [M, N] tile (`>=` for the upper one, `triu`; `- k` on the right for a diagonal k "
            "below)",
    "triu": "`where(arange::<i32>(N).reshape([1, N]) >= arange::<i32>(M).reshape([M, 1]), {x}, 0.0)` keeps the "
            "upper triangle of an [M, N] tile (`<=` for the lower one, `tril`)",
    "roll": "a cyclic shift by k of an [N] row is a product with a 0/1 matrix: "
            "`dot({x}.reshape([1, N]), ((arange::<i32>(N).reshape([1, N]) - arange::<i32>(N).reshape([N, 1]) - k) % N "
            "== 0) as f32).reshape([N])` (`== k` in place of `- k) % N == 0` shifts in zeros; the element type's "
            "name in place of `f32`)",
    "histogram": "count with a one-hot sum, `((v.reshape([N, 1]) == arange::<i32>(NB).reshape([1, NB])) as "
                 "i32).sum(0)` (examples/histogram.tile)",
    # round 24 (huser25): "a similar name: `dot`" (`dropout`), "`cummin`" (`clamp_min`), a list of methods
    "dropout": "Tile has no random numbers in kernels: hash each element's index with a seed (a counter-based "
               "generator written out: murmur3's mix, or Philox's u64 products, of `arange::<i32>(B) + "
               "block_id(0) * B` as `u32`), take `u = (h >> 8u32) as f32 * (1.0 / 16777216.0)`, then "
               "`where(u >= p, {x} / (1.0 - p), 0.0)` (on the host, `rand::<f32>(shape, seed) >= p` is a mask)",
    "nan_to_num": "`where({x} != {x}, 0.0, {x})` replaces NaN (`{x} != {x}` is the NaN test; `minimum`/`maximum` "
                  "with the type's `MAX`/`MIN` bound the infinities)",
    "index_select": "load what you need through a partition (a row: `x.partition([1, D]).load([id, 0])`, an "
                    "element: `x.partition([1]).load([i]).item()`), or pick it with `where` over `arange` "
                    "positions and a sum",
    "scatter_add": "sum what lands on each position with a one-hot comparison, then add the whole tile at once "
                   "inside `unsafe {{ }}`: `atomic_add(&t, [0], ((idx.reshape([N, 1]) == arange::<i32>(M)"
                   ".reshape([1, M])) as f32 * v.reshape([N, 1])).sum(0))` (examples/histogram.tile)",
    # round 30 (huser31): PyTorch's and torch_scatter's sparse habits were "define it (`fn index_add(..)`)"
    "index_add": _SCATTER_ADD, "index_add_": _SCATTER_ADD, "scatter_reduce": _SCATTER_ADD,
    "segment_coo": _SCATTER_ADD, "index_put": _SCATTER_ADD,
    "segment_sum": _SEGMENT, "segment_max": _SEGMENT, "segment_mean": _SEGMENT, "segment_csr": _SEGMENT,
    "segment_reduce": _SEGMENT,
    "masked_select": "a tile's shape is fixed, so selecting is a stream compaction: count each block's kept "
                     "elements, scan the counts on the host (`counts.cumsum(0) - counts`), and write each kept "
                     "element to its slot, `base + (keep as i32).cumsum(0) - 1`, with `store_unchecked` inside "
                     "`unsafe {{ }}` one element at a time",
    "embedding_bag": "one block a bag (`offsets[b]..offsets[b + 1]` of the indices): `let mut acc = zeros::<f32>"
                     "([1, D]); for k in start..end {{ acc = acc + table.partition([1, D]).load([indices.partition("
                     "[1]).load([k]).item(), 0]); }}`, then `acc / ((end - start) as f32)` for the mean (an empty "
                     "bag keeps its zeros)",
}


#: the second operand's name in the help of a two-operand function above (`hypot(a, b)`, `a.hypot(b)`): the call's
#: argument replaces it (round 22: the help of `a.hypot(b)` was `sqrt(x * x + y * y)`)
MATH_ARGS: dict[str, tuple[str, ...]] = {"hypot": ("y",), "fmod": ("y",), "remainder": ("y",), "copysign": ("y",),
                                         "meshgrid": ("y",), "linspace": ("stop", "n"), "searchsorted": ("v",),
                                         "digitize": ("bins",), "bucketize": ("boundaries",)}

#: Rust's methods of `f32`/`i32` values that Tile spells otherwise (round 15: `s.max(0.0)` was told to make a
#: tile of `s`, `s.min(1.0)` "a similar name: `sin`", `s.ln()` a list of methods); `{0}`, `{1}`: the call's
#: arguments, `{x}`: the receiver
RUST_SCALAR_METHODS: dict[str, tuple[str, tuple[str, ...]]] = {
    "max": ("`maximum({x}, {0})` is the larger of two values (`t.max(k)` reduces a tile along axis k)", ("b",)),
    "min": ("`minimum({x}, {0})` is the smaller of two values (`t.min(k)` reduces a tile along axis k)", ("b",)),
    "clamp": ("`minimum(maximum({x}, {0}), {1})` clamps the value into [{0}, {1}]", ("lo", "hi")),
    # round 24: PyTorch's one-sided clamps (`clamp_min` was "a similar name: `cummin`")
    "clamp_min": ("`maximum({x}, {0})` keeps each element at least {0}", ("lo",)),
    "clamp_max": ("`minimum({x}, {0})` keeps each element at most {0}", ("hi",)),
    "ln": ("`log({x})` is the natural logarithm", ()),
    "ln_1p": ("`log(1.0 + {x})` (less exact than a `ln_1p` for tiny values)", ()),
    "exp_m1": ("`exp({x}) - 1.0` (less exact than an `exp_m1` near 0)", ()),
    "powi": ("`{x}.pow({0})`", ("n",)), "powf": ("`{x}.pow({0})`", ("y",)),
    "mul_add": ("`fma({x}, {0}, {1})` is `{x} * {0} + {1}` rounded once", ("a", "b")),
    "recip": ("`1.0 / {x}`", ()),
    # (huser29: Rust's `signum` is 1.0 of +0.0, -1.0 of -0.0 and NaN of NaN; the help gave 0.0 for all three)
    "signum": ("`where({x} != {x}, {x}, where({x} < 0.0 || 1.0 / {x} < 0.0, -1.0, 1.0))` (Rust's: 1.0 of 0.0, "
               "-1.0 of -0.0, NaN of NaN; NumPy's `sign` gives 0.0 of a zero)", ()),
    "is_nan": ("`{x} != {x}` is the NaN test (NaN is the one value not equal to itself)", ()),
    "is_finite": ("`abs({x}) < f32::INFINITY` (false for NaN and the infinities; of the value's type)", ()),
    "is_infinite": ("`abs({x}) == f32::INFINITY` (of the value's type: `f16::INFINITY`, ..)", ()),
    # round 21: integer rounding up (was "a similar name: `ceil`", the float method)
    "div_ceil": ("`({x} + {0} - 1) / {0}` is `{x}` divided by a positive `{0}`, rounded up (of `i32` scalars, "
                 "`cdiv({x}, {0})` with `use std::math::cdiv;` never wraps)", ("b",)),
    "next_multiple_of": ("`({x} + {0} - 1) / {0} * {0}` rounds `{x}` up to a multiple of a positive `{0}` (of "
                         "`i32` scalars, `round_up({x}, {0})` with `use std::math::round_up;`)", ("b",)),
    # round 22: Rust's integer methods of hashing and bit work (they were a list of the tiles' methods)
    "wrapping_add": ("`{x} + {0}`: Tile's integer arithmetic wraps already (two's complement)", ("b",)),
    "wrapping_sub": ("`{x} - {0}`: Tile's integer arithmetic wraps already (two's complement)", ("b",)),
    "wrapping_mul": ("`{x} * {0}`: Tile's integer arithmetic wraps already (two's complement)", ("b",)),
    "wrapping_neg": ("`0 - {x}` wraps (unary `-` takes signed values only)", ()),
    "rotate_left": ("`({x} << {0}) | ({x} >> (32 - {0}))` rotates a `u32` left by 0 < {0} < 32 (a `u64`: 64 in "
                    "place of 32; `>>` of a signed value fills with its sign)", ("n",)),
    "rotate_right": ("`({x} >> {0}) | ({x} << (32 - {0}))` rotates a `u32` right by 0 < {0} < 32 (a `u64`: 64 in "
                     "place of 32; `>>` of a signed value fills with its sign)", ("n",)),
    "saturating_sub": ("`where({x} > {0}, {x} - {0}, 0)` of unsigned values (signed ones: widen with `as i64`, "
                       "subtract, clamp into the type's `MIN`..`MAX` with `maximum`/`minimum`, cast back)", ("b",)),
    "saturating_add": ("widen, add and clamp into the type's range: `minimum(maximum({x} as i64 + {0} as i64, "
                       "T::MIN as i64), T::MAX as i64) as T` for `T` of 32 bits or fewer (a tile's or value's own "
                       "type gets its own spelling)", ("b",)),
    "count_ones": ("Tile has no bit-count built-ins: count with shifts and masks, the SWAR count of a `u32` "
                   "(`let a = {x} - (({x} >> 1) & 0x55555555u32);` then pairs, nibbles and a multiply by "
                   "`0x01010101u32` whose top byte is the count)", ()),
    "leading_zeros": ("Tile has no bit-count built-ins: find the highest set bit with shifts and masks "
                      "(`where(x >> 16 == 0, ..)` halving the range five times)", ()),
    "trailing_zeros": ("Tile has no bit-count built-ins: `{x} & (0 - {x})` keeps the lowest set bit; find its "
                       "position with shifts and masks", ()),
    "reverse_bits": ("Tile has no bit-reversal built-in: swap halves, bytes, nibbles, pairs and bits with shifts and "
                     "masks (`((x >> 1) & 0x55555555u32) | ((x & 0x55555555u32) << 1)`, then 2, 4, 8 and 16)", ()),
    # round 22's leftovers: the angle conversions (they were the list of the scalars' methods)
    "to_degrees": ("`{x} * (180.0 / std::math::PI)` converts radians to degrees", ()),
    "to_radians": ("`{x} * (std::math::PI / 180.0)` converts degrees to radians", ()),
    # round 23 (huser23): they were "a similar name: `sin`" (`sin_cos`), "`sqrt`" (`isqrt`, a float root of an
    # integer tile) or the list of the tiles' methods
    "sin_cos": ("`(sin({x}), cos({x}))`: `let (s, c) = (sin({x}), cos({x}));`", ()),
    "fract": ("`{x} - where({x} < 0.0, ceil({x}), floor({x}))` is the fractional part with `{x}`'s sign (Rust's "
              "`fract`; `{x} - floor({x})` is the part in [0, 1))", ()),
    "isqrt": ("Tile has no integer square root: `sqrt({x} as f64) as u64` (the value's type) is the floor root "
              "below 2^52; above, correct it by Newton's step `r = (r + {x} / r) / 2` while `r` falls", ()),
    "abs_diff": ("`maximum({x}, {0}) - minimum({x}, {0})` (it does not wrap for unsigned values)", ("b",)),
    "is_power_of_two": ("`({x} != 0) & (({x} & ({x} - 1)) == 0)` of unsigned values (`&` binds tighter than "
                        "`==`: keep the parentheses)", ()),
    "swap_bytes": ("Tile has no byte-swap built-in: `(x >> 24) | ((x >> 8) & 0xFF00u32) | ((x << 8) & "
                   "0xFF0000u32) | (x << 24)` of a `u32`", ()),
}

#: Rust's associated functions of a scalar type, `f32::max(a, b)`: Tile's built-ins take no type prefix
RUST_TYPE_FUNCTIONS = {"max": "maximum", "min": "minimum"}


def scalar_method_habit(name: str, args: list[str]) -> str | None:
    """How Tile spells Rust's scalar method `name` (or a math function's, `x.log10()`), a template whose `{x}` is
    the receiver, with the call's `args` written in where there are as many as the method takes; None if
    neither table has it."""
    if name not in RUST_SCALAR_METHODS:
        return MATH_HABITS.get(name)
    habit, names = RUST_SCALAR_METHODS[name]
    shown = args if len(args) == len(names) and all(len(a) < 20 for a in args) else list(names)
    for i, a in enumerate(shown):  # braces doubled: the caller formats `{x}` in
        habit = habit.replace(f"{{{i}}}", a.replace("{", "{{").replace("}", "}}"))
    return habit


# round 23: CUDA's integer and float intrinsics (they were "define it (`fn __popc(..) { .. }`)")
_NO_LANES = ("a tile block has no threads or lanes to exchange values between: a reduction over a tile is one call, "
             "`t.sum(axis)` / `t.max(axis)`, and a shift inside a tile a `dot` with a 0/1 matrix")
MATH_HABITS.update({
    "__popc": MATH_HABITS["popcount"], "__popcll": MATH_HABITS["popcount"], "bitwise_count": MATH_HABITS["popcount"],
    "__clz": MATH_HABITS["clz"], "__clzll": MATH_HABITS["clz"],
    "__brev": RUST_SCALAR_METHODS["reverse_bits"][0], "__brevll": RUST_SCALAR_METHODS["reverse_bits"][0],
    "__ffs": "Tile has no bit-count built-ins: `{x} & (0 - {x})` keeps the lowest set bit; find its position with "
             "shifts and masks (CUDA's `__ffs` counts from 1, and is 0 where no bit is set)",
    "__fdividef": "`{x} / y` is the float division",
    "__saturatef": "`minimum(maximum({x}, 0.0), 1.0)` clamps into [0, 1]",
    "__umulhi": "`((({x} as u64) * (y as u64)) >> 32u64) as u32` is the high half of a `u32` product",
    "__mul24": "`{x} * y` multiplies whole integers",
    "__shfl_sync": _NO_LANES, "__shfl_xor_sync": _NO_LANES, "__shfl_down_sync": _NO_LANES,
    "__shfl_up_sync": _NO_LANES, "__ballot_sync": _NO_LANES, "__any_sync": _NO_LANES, "__all_sync": _NO_LANES,
})
MATH_ARGS.update({"__fdividef": ("y",), "__umulhi": ("y",), "__mul24": ("y",)})


def saturating_help(name: str, dt: object, b: str) -> str | None:
    """Rust's `x.saturating_add(b)` / `saturating_sub` / `saturating_mul` written for the receiver's element type
    `dt` (a `DType`; None: not known), a template whose `{x}` is the receiver and `b` the argument as written
    (round 24, huser25: the one help of every type widened to `i64` and came back as `i32`, so a `u8` tile's
    `a.saturating_add(b)` got `minimum(a as i64 + b as i64, i32::MAX as i64) as i32`, an `i32` tile where a `u8`
    one was meant, and `saturating_sub` of signed values `where(a > b, a - b, 0)`, which is not Rust's)."""
    from tilelang.dtypes import DType

    op = {"saturating_add": "+", "saturating_sub": "-", "saturating_mul": "*"}.get(name)
    if op is None or not isinstance(dt, DType) or dt is DType.BOOL:
        return None
    b = b.replace("{", "{{").replace("}", "}}")
    if dt.is_float:
        return (f"floats have no saturating arithmetic: `{{x}} {op} {b}` rounds to an infinity past the type's "
                f"range; `minimum(maximum({{x}} {op} {b}, {dt}::MIN), {dt}::MAX)` stays finite")
    if name == "saturating_sub" and not dt.is_signed:
        return f"`where({{x}} > {b}, {{x}} - {b}, 0)` (of unsigned values: 0 where `{b}` is the larger)"
    if dt.bits < 64:
        # every sum, difference and product of two values of a type below 32 bits fits `i32` twice over; of
        # 32-bit values `i64` holds it but a `u32` product, which `u64` does
        wide = "i32" if dt.bits <= 8 or (dt.bits == 16 and op != "*") else \
            ("u64" if op == "*" and not dt.is_signed else "i64")
        v = f"{{x}} as {wide} {op} {b} as {wide}"
        if (op == "+" and not dt.is_signed) or (op == "*" and not dt.is_signed):
            clamped = f"minimum({v}, {dt}::MAX as {wide})"
        else:
            clamped = f"minimum(maximum({v}, {dt}::MIN as {wide}), {dt}::MAX as {wide})"
        return f"widen, {'add' if op == '+' else 'subtract' if op == '-' else 'multiply'} and clamp: `{clamped} as {dt}`"
    # 64 bits: no wider integer; the wrapped result tells the overflow
    if not dt.is_signed:
        if op == "+":
            return f"`where({{x}} > {dt}::MAX - {b}, {dt}::MAX, {{x}} + {b})` (no wider integer: test before adding)"
        return (f"`where({{x}} > {dt}::MAX / maximum({b}, 1), {dt}::MAX, {{x}} * {b})` (no wider integer: test "
                "before multiplying)")
    if op == "+":
        return (f"`where((({{x}} ^ ({{x}} + {b})) & ({b} ^ ({{x}} + {b}))) < 0, where({{x}} < 0, {dt}::MIN, "
                f"{dt}::MAX), {{x}} + {b})` (no wider integer: the wrapped sum's sign tells the overflow)")
    if op == "-":
        return (f"`where((({{x}} ^ {b}) & ({{x}} ^ ({{x}} - {b}))) < 0, where({{x}} < 0, {dt}::MIN, {dt}::MAX), "
                f"{{x}} - {b})` (no wider integer: the wrapped difference's sign tells the overflow)")
    return (f"no integer is wider than `{dt}`: `{{x}} * {b}` wraps, and `({{x}} * {b}) / {b} != {{x}}` (`{b}` not 0) "
            f"tells an overflow, `where(({{x}} < 0) != ({b} < 0), {dt}::MIN, {dt}::MAX)` the value to clamp to")
